//! Fragment prefetch across the barrier of a pipelined loop whose
//! consumers are one gemm on `ldmatrix` fragments (`mma.sync` targets).
//!
//! # Why
//! In the plain form of a `cp.async` pipeline (`pipeline.rs`) every
//! iteration starts with `wait_group` and a block barrier, and only then
//! loads the first k-step's fragments of its stage: every warp meets the
//! barrier with its matrix units idle and waits for the shared-memory
//! latency of those loads before its first `mma`. Within an iteration the
//! assembler already overlaps step `kk + 1`'s loads with step `kk`'s
//! `mma`s (the k-step loop is unrolled); across the barrier it cannot.
//!
//! # The rewrite
//! When the consumers lower to scalar address assignments followed by one
//! fully unrolled k-step loop of `K ≥ 2` (even) steps whose body is only
//! matrix loads into fragment arrays and `mma`s reading them, the loop
//! body becomes, with every A and B fragment array doubled (buffer `kk mod
//! 2`):
//!
//! ```text
//! (copies of iteration i + d, when issued first)
//! for kk in 0 .. K − 1: loads of step kk + 1 → buffer (kk + 1) mod 2;
//!                        mmas of step kk from buffer kk mod 2
//! (copies, when issued after the consumers; stage registers step)
//! wait_group; barrier                 -- the top of iteration i + 1
//! address assignments of iteration i + 1; loads of its step 0 → buffer 0
//! mmas of step K − 1 from buffer 1
//! ```
//!
//! and the wait, barrier, address assignments and step-0 loads of the first
//! iteration move before the loop (under `if 0 < n` unless `n` is a known
//! positive constant). So the last step's `mma`s cover the latency of the
//! next stage's first loads.
//!
//! # Why it is still race-free
//! The barrier has only moved from the top of iteration `i + 1` to just
//! before the last `mma`s of iteration `i`, which read registers: every
//! shared read of stage `i` (its loads, steps `0 .. K − 1`) is still
//! before it, and every read of stage `i + 1` after it. The copies keep
//! their place relative to the barriers, so the stage they fill is the one
//! the plain form fills. The last iteration loads step 0 of iteration `n`:
//! a stage whose copies were issued as zero fills and are complete after
//! the wait; those registers are never used. The SIMT interpreter checks
//! all of it on the lowering file tests.

use std::collections::HashMap;

use super::{Expr, ExprKind, Lower, RegId, RegRef, Stmt, StmtKind, lit_i32};
use crate::thread::{FragRef, RegisterKind};

/// The consumers split for prefetching.
pub(super) struct KSteps {
    /// The scalar assignments before the k-step loop (fragment addresses).
    pub(super) pre: Vec<Stmt>,
    /// Per k-step: its loads and its `mma`s, the step's variable replaced
    /// by its value and the fragment arrays of odd steps swapped for their
    /// second buffers.
    pub(super) steps: Vec<(Vec<Stmt>, Vec<Stmt>)>,
}

impl Lower<'_> {
    /// The consumers' statements as [`KSteps`], when they have the shape
    /// the module documentation describes; `None` leaves the loop as it is.
    pub(super) fn k_steps(&mut self, consumers: &[Stmt]) -> Option<KSteps> {
        let (last, pre) = consumers.split_last()?;
        if !pre.iter().all(|s| {
            matches!(
                &s.kind,
                StmtKind::Assign {
                    dst: RegRef::Scalar(_),
                    ..
                }
            )
        }) {
            return None;
        }
        let StmtKind::For {
            var,
            start,
            count,
            step,
            body,
            ..
        } = &last.kind
        else {
            return None;
        };
        let (start, count, step) = (
            start.as_const_int()?,
            count.as_const_int()?,
            step.as_const_int()?,
        );
        if count < 2 || count % 2 != 0 {
            return None;
        }
        let loads = body
            .iter()
            .take_while(|s| matches!(s.kind, StmtKind::MatrixLoad { .. }))
            .count();
        if loads == 0 {
            return None;
        }
        // The fragment arrays the loads fill; the mmas must read only
        // those as A and B and accumulate into others.
        let mut filled: Vec<RegId> = Vec::new();
        for s in &body[..loads] {
            if let StmtKind::MatrixLoad { dst, .. } = &s.kind
                && !filled.contains(&dst.array)
            {
                filled.push(dst.array);
            }
        }
        let fits = body[loads..].iter().all(|s| match &s.kind {
            StmtKind::Mma { d, c, .. } => !filled.contains(&d.array) && !filled.contains(&c.array),
            _ => false,
        });
        if !fits {
            return None;
        }
        // Each filled array gets a second buffer, for the odd steps.
        let mut second: HashMap<RegId, RegId> = HashMap::new();
        for array in filled {
            let reg = self.registers.get(array.index())?;
            let RegisterKind::Array { len } = reg.kind else {
                return None;
            };
            let base = format!("{}_next", reg.name.trim_end_matches(char::is_numeric));
            let dtype = reg.dtype;
            let twin = self.local(&base, dtype, i64::from(len));
            second.insert(array, twin);
        }
        let steps = (0..count)
            .map(|kk| {
                let value = lit_i32(start + kk * step);
                let swap = |f: &mut FragRef| {
                    if kk % 2 == 1
                        && let Some(&twin) = second.get(&f.array)
                    {
                        f.array = twin;
                    }
                };
                let mut step_stmts: Vec<Stmt> = body.to_vec();
                for stmt in &mut step_stmts {
                    match &mut stmt.kind {
                        StmtKind::MatrixLoad { dst, index, .. } => {
                            swap(dst);
                            *index = substitute(index, *var, &value);
                        }
                        StmtKind::Mma { a, b, .. } => {
                            swap(a);
                            swap(b);
                        }
                        _ => {}
                    }
                }
                let mmas = step_stmts.split_off(loads);
                (step_stmts, mmas)
            })
            .collect();
        Some(KSteps {
            pre: pre.to_vec(),
            steps,
        })
    }
}

/// `e` with every read of register `reg` replaced by `with`.
pub(super) fn substitute(e: &Expr, reg: RegId, with: &Expr) -> Expr {
    let sub = |x: &Expr| Box::new(substitute(x, reg, with));
    let kind = match &e.kind {
        ExprKind::Reg(r) if *r == reg => return with.clone(),
        ExprKind::Literal(_) | ExprKind::Reg(_) | ExprKind::Param(_) | ExprKind::Special(_) => {
            return e.clone();
        }
        ExprKind::Elem(a, i) => ExprKind::Elem(*a, sub(i)),
        ExprKind::Unary(op, a) => ExprKind::Unary(*op, sub(a)),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, sub(a), sub(b)),
        ExprKind::Cast(a) => ExprKind::Cast(sub(a)),
        ExprKind::Bitcast(a) => ExprKind::Bitcast(sub(a)),
        ExprKind::Select(c, a, b) => ExprKind::Select(sub(c), sub(a), sub(b)),
    };
    Expr {
        kind,
        dtype: e.dtype,
    }
}

/// `s` (an assignment) with every read of `reg` replaced by `with`.
pub(super) fn substitute_assign(s: &Stmt, reg: RegId, with: &Expr) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Assign { dst, value } => StmtKind::Assign {
            dst: dst.clone(),
            value: substitute(value, reg, with),
        },
        other => other.clone(),
    };
    Stmt { kind, span: s.span }
}
