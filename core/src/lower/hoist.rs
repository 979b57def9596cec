//! Loop-invariant parts of integer index arithmetic, computed once before
//! the loop instead of in every iteration.
//!
//! # Why
//! The lowering writes every address as one expression of the thread's
//! coordinates and the loop variables: a pipelined copy reads `%A[(by ·
//! 128 + thread_idx // 4 + 64) · K + (%k + 3) · 32 + thread_idx % 4 · 8]`,
//! a fragment address is a chain of `select`s over the lane. Inside a
//! loop only the `%k` terms change, but an assembler cannot hoist the rest
//! on its own: the index is a 32-bit value widened to 64 bits for the
//! address, and `(x + c) · s` widened is not `x · s` widened plus `c · s`
//! when the 32-bit sum wraps, so the whole chain is recomputed per
//! iteration (about eight integer instructions per 16-byte copy on sm_90,
//! each waiting on the one before). This pass makes the split explicit in
//! the thread IR, where it is exact.
//!
//! # The rewrite
//! For each `for` loop that is not fully unrolled (innermost first), the
//! *variant* registers are the loop's variable and every register the body
//! writes (assignments, loads, shuffles, fragment arrays, nested loop
//! variables). Each integer index in the body (memory statements'
//! indices, matrix-load and shared-matrix indices, integer scalar
//! assignments) is read as a linear form `c₀ + Σ cᵢ · aᵢ` over atoms `aᵢ`
//! (the operands that are not `+`, `-`, unary `-` or a product with a
//! literal). An atom is *invariant* when it reads no variant register and
//! no array element, and divides only by non-zero literals (so evaluating
//! it early cannot fault). When the invariant atoms cost at least two
//! operations, their sum `Σ cᵢ · aᵢ` (without `c₀`) goes into a new
//! register `%invN` assigned just before the loop, and the index becomes
//! `%invN + (variant terms) + c₀`; indices with the same invariant sum
//! share one register, and the constant stays in place so that a backend
//! can fold it into an address offset.
//!
//! # Why it is exact
//! Integer arithmetic in thread IR wraps (two's complement in the value's
//! type), and `+`, `-` and multiplication by a constant are ring
//! operations modulo `2^bits`: regrouping them gives the same value for
//! every input, overflow included. An invariant atom reads only registers
//! the loop does not write, so its value before the loop is its value in
//! every iteration. The lowering file tests run the result under the SIMT
//! interpreter against the reference.

use std::collections::{HashMap, HashSet};

use super::{Expr, ExprKind, RegId, RegRef, Stmt, StmtKind, Unroll};
use crate::ir::{BinaryOp, DType, Literal, UnaryOp};
use crate::thread::{AsyncA, Kernel, Register, RegisterKind};

/// Hoists the loop-invariant parts of `kernel`'s integer indices out of
/// its loops.
pub(super) fn run(kernel: &mut Kernel) {
    let mut body = std::mem::take(&mut kernel.body);
    let mut names: HashSet<String> = kernel.registers.iter().map(|r| r.name.clone()).collect();
    let mut cx = Hoist {
        registers: &mut kernel.registers,
        names: &mut names,
    };
    cx.block(&mut body);
    kernel.body = body;
}

struct Hoist<'a> {
    registers: &'a mut Vec<Register>,
    names: &'a mut HashSet<String>,
}

impl Hoist<'_> {
    /// Processes the loops of `body` (and of everything nested in it).
    fn block(&mut self, body: &mut Vec<Stmt>) {
        let mut i = 0;
        while i < body.len() {
            let hoisted = match &mut body[i].kind {
                StmtKind::For {
                    var,
                    unroll,
                    body: inner,
                    ..
                } => {
                    self.block(inner);
                    if *unroll == Unroll::Full {
                        Vec::new()
                    } else {
                        let mut variant = HashSet::from([*var]);
                        crate::thread::visit::writes(inner, &mut variant);
                        self.loop_body(inner, &variant)
                    }
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.block(then_body);
                    if let Some(e) = else_body {
                        self.block(e);
                    }
                    Vec::new()
                }
                _ => Vec::new(),
            };
            let n = hoisted.len();
            let span = body[i].span;
            for (k, s) in hoisted.into_iter().enumerate() {
                body.insert(i + k, Stmt { kind: s.kind, span });
            }
            i += n + 1;
        }
    }

    /// Rewrites the indices of one loop body; returns the assignments to
    /// put before the loop.
    fn loop_body(&mut self, body: &mut [Stmt], variant: &HashSet<RegId>) -> Vec<Stmt> {
        let mut loop_cx = LoopCx {
            variant,
            shared: HashMap::new(),
            before: Vec::new(),
        };
        for s in body.iter_mut() {
            self.stmt(s, &mut loop_cx);
        }
        loop_cx.before
    }

    fn stmt(&mut self, s: &mut Stmt, cx: &mut LoopCx<'_>) {
        match &mut s.kind {
            StmtKind::Assign {
                dst: RegRef::Scalar(_),
                value,
            } => self.index(value, cx),
            StmtKind::Load { index, .. }
            | StmtKind::Store { index, .. }
            | StmtKind::Atomic { index, .. }
            | StmtKind::MatrixLoad { index, .. }
            | StmtKind::MatrixStore { index, .. } => self.index(index, cx),
            StmtKind::AsyncCopy {
                dst_index,
                src_index,
                ..
            } => {
                self.index(dst_index, cx);
                self.index(src_index, cx);
            }
            StmtKind::AsyncMma { a, b, .. } => {
                if let AsyncA::Shared(m) = a {
                    self.index(&mut m.index, cx);
                }
                self.index(&mut b.index, cx);
            }
            StmtKind::For { body, .. } => {
                for s in body {
                    self.stmt(s, cx);
                }
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                for s in then_body {
                    self.stmt(s, cx);
                }
                for s in else_body.iter_mut().flatten() {
                    self.stmt(s, cx);
                }
            }
            _ => {}
        }
    }

    /// Splits one integer index, when its invariant part is worth a
    /// register.
    fn index(&mut self, e: &mut Expr, cx: &mut LoopCx<'_>) {
        let dtype = e.dtype;
        if !dtype.is_int() {
            return;
        }
        let mut form = Linear::default();
        form.add(e, 1, dtype);
        let (inv, var): (Vec<_>, Vec<_>) = form
            .terms
            .into_iter()
            .partition(|(a, _)| invariant(a, cx.variant));
        let cost: usize = inv
            .iter()
            .map(|(a, c)| ops(a) + usize::from(*c != 1 && *c != dtype.wrap_i64(-1)))
            .sum::<usize>()
            + inv.len().saturating_sub(1);
        if cost < 2 {
            return;
        }
        let mut keyed: Vec<(String, &(Expr, i64))> =
            inv.iter().map(|t| (format!("{t:?}"), t)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let key = keyed
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join("|");
        let reg = match cx.shared.get(&key) {
            Some(&r) => r,
            None => {
                let r = self.fresh(dtype);
                let value = sum(keyed.iter().map(|(_, t)| (*t).clone()), 0, dtype);
                cx.before.push(Stmt::new(StmtKind::Assign {
                    dst: RegRef::Scalar(r),
                    value,
                }));
                cx.shared.insert(key, r);
                r
            }
        };
        let head = Expr {
            kind: ExprKind::Reg(reg),
            dtype,
        };
        *e = sum(std::iter::once((head, 1)).chain(var), form.constant, dtype);
    }

    fn fresh(&mut self, dtype: DType) -> RegId {
        let mut n = self.registers.len();
        let name = loop {
            let name = format!("inv{n}");
            if !self.names.contains(&name) {
                break name;
            }
            n += 1;
        };
        self.names.insert(name.clone());
        self.registers.push(Register {
            name,
            dtype,
            kind: RegisterKind::Scalar,
        });
        RegId(self.registers.len() as u32 - 1)
    }
}

/// What one loop's rewrite has built so far.
struct LoopCx<'a> {
    variant: &'a HashSet<RegId>,
    /// Invariant sums already in a register, by their canonical key.
    shared: HashMap<String, RegId>,
    /// The assignments to put before the loop.
    before: Vec<Stmt>,
}

/// `c₀ + Σ cᵢ · aᵢ`, coefficients wrapped to the expression's type.
#[derive(Default)]
struct Linear {
    constant: i64,
    terms: Vec<(Expr, i64)>,
}

impl Linear {
    fn add(&mut self, e: &Expr, scale: i64, dtype: DType) {
        match &e.kind {
            ExprKind::Literal(Literal::Int(v, _)) => {
                self.constant = dtype.wrap_i64(self.constant.wrapping_add(scale.wrapping_mul(*v)));
            }
            ExprKind::Binary(BinaryOp::Add, a, b) => {
                self.add(a, scale, dtype);
                self.add(b, scale, dtype);
            }
            ExprKind::Binary(BinaryOp::Sub, a, b) => {
                self.add(a, scale, dtype);
                self.add(b, scale.wrapping_neg(), dtype);
            }
            ExprKind::Unary(UnaryOp::Neg, a) => self.add(a, scale.wrapping_neg(), dtype),
            ExprKind::Binary(BinaryOp::Mul, a, b) if b.as_const_int().is_some() => {
                let c = b.as_const_int().unwrap_or(1);
                self.add(a, scale.wrapping_mul(c), dtype);
            }
            ExprKind::Binary(BinaryOp::Mul, a, b) if a.as_const_int().is_some() => {
                let c = a.as_const_int().unwrap_or(1);
                self.add(b, scale.wrapping_mul(c), dtype);
            }
            _ => {
                let scale = dtype.wrap_i64(scale);
                match self.terms.iter_mut().find(|(a, _)| a == e) {
                    Some((_, c)) => *c = dtype.wrap_i64(c.wrapping_add(scale)),
                    None => self.terms.push((e.clone(), scale)),
                }
            }
        }
    }
}

/// `Σ cᵢ · aᵢ + constant` as an expression of `dtype` (terms with a zero
/// coefficient dropped; a negative coefficient subtracts).
fn sum(terms: impl IntoIterator<Item = (Expr, i64)>, constant: i64, dtype: DType) -> Expr {
    let lit = |v: i64| Expr::literal(Literal::Int(dtype.wrap_i64(v), dtype));
    let bin = |op, a: Expr, b: Expr| Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        dtype,
    };
    let signed = dtype.kind() == crate::ir::DTypeKind::Signed;
    let mut out: Option<Expr> = None;
    for (atom, c) in terms {
        if c == 0 {
            continue;
        }
        let (op, mag) = if signed && c < 0 && c != dtype.wrap_i64(i64::MIN) {
            (BinaryOp::Sub, c.wrapping_neg())
        } else {
            (BinaryOp::Add, c)
        };
        let term = if mag == 1 {
            atom
        } else {
            bin(BinaryOp::Mul, atom, lit(mag))
        };
        out = Some(match out {
            None if op == BinaryOp::Sub => bin(BinaryOp::Sub, lit(0), term),
            None => term,
            Some(acc) => bin(op, acc, term),
        });
    }
    match out {
        None => lit(constant),
        Some(acc) if constant == 0 => acc,
        Some(acc) if signed && constant < 0 && constant != dtype.wrap_i64(i64::MIN) => {
            bin(BinaryOp::Sub, acc, lit(constant.wrapping_neg()))
        }
        Some(acc) => bin(BinaryOp::Add, acc, lit(constant)),
    }
}

/// Whether `e` has the same value before the loop as in every iteration,
/// and evaluating it cannot fault.
fn invariant(e: &Expr, variant: &HashSet<RegId>) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) => true,
        ExprKind::Reg(r) => !variant.contains(r),
        ExprKind::Elem(..) => false,
        ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => invariant(a, variant),
        ExprKind::Binary(op, a, b) => {
            let safe_divisor = match op {
                BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod => {
                    b.as_const_int().is_some_and(|d| d != 0)
                }
                BinaryOp::Pow => false,
                _ => true,
            };
            safe_divisor && invariant(a, variant) && invariant(b, variant)
        }
        ExprKind::Select(c, a, b) => {
            invariant(c, variant) && invariant(a, variant) && invariant(b, variant)
        }
    }
}

/// The operations evaluating `e` takes (0 for a leaf).
fn ops(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) | ExprKind::Reg(_) => 0,
        ExprKind::Elem(_, i) => 1 + ops(i),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => 1 + ops(a),
        ExprKind::Binary(_, a, b) => 1 + ops(a) + ops(b),
        ExprKind::Select(c, a, b) => 1 + ops(c) + ops(a) + ops(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::{parse_module, print_module};

    fn hoisted(src: &str) -> String {
        let mut module = parse_module(src).expect("test input parses");
        for k in &mut module.kernels {
            run(k);
        }
        print_module(&module)
    }

    const HEADER: &str =
        "thread_ir 0.1\n\nkernel @k(%A: global f32[4096], %n: i32) grid(1, 1, 1) threads(32) {\n";

    #[test]
    fn invariant_terms_leave_the_loop_and_constants_stay() {
        let src = format!(
            "{HEADER}  var %x: f32\n  for %i from 0 count %n step 1 {{\n    load global x1 %x <- %A[(thread_idx // 4 + 3) * 64 + (%i + 1) * 8 + thread_idx % 4]\n    load global x1 %x <- %A[(thread_idx // 4 + 5) * 64 + (%i + 2) * 8 + thread_idx % 4]\n  }}\n}}\n"
        );
        let out = hoisted(&src);
        assert!(
            out.contains("  %inv2 = thread_idx // 4 * 64 + thread_idx % 4\n  for %i"),
            "{out}"
        );
        assert!(
            out.contains("load global x1 %x <- %A[%inv2 + %i * 8 + 200]"),
            "{out}"
        );
        assert!(
            out.contains("load global x1 %x <- %A[%inv2 + %i * 8 + 336]"),
            "{out}"
        );
        assert_eq!(out.matches("%inv2 =").count(), 1, "{out}");
    }

    #[test]
    fn registers_the_loop_writes_and_cheap_parts_stay() {
        let src = format!(
            "{HEADER}  var %x: f32\n  var %s: i32\n  for %i from 0 count %n step 1 {{\n    %s = %i * 2\n    load global x1 %x <- %A[(%s + thread_idx // 8) * 3 + thread_idx]\n    load global x1 %x <- %A[thread_idx + %i]\n  }}\n}}\n"
        );
        let out = hoisted(&src);
        // `thread_idx // 8 * 3 + thread_idx` is invariant; `%s` is not.
        assert!(
            out.contains("load global x1 %x <- %A[%inv3 + %s * 3]"),
            "{out}"
        );
        // A lone thread_idx is not worth a register.
        assert!(
            out.contains("load global x1 %x <- %A[thread_idx + %i]"),
            "{out}"
        );
    }

    #[test]
    fn divisions_by_registers_are_not_hoisted() {
        let src = format!(
            "{HEADER}  var %x: f32\n  for %i from 0 count %n step 1 {{\n    load global x1 %x <- %A[thread_idx // %n * 7 + thread_idx % %n * 3 + %i]\n  }}\n}}\n"
        );
        assert_eq!(hoisted(&src), src);
    }

    #[test]
    fn wrapping_regrouping_is_exact() {
        // (x + c) * s regrouped as x * s + c * s modulo 2^32, for values
        // that overflow.
        let mut form = Linear::default();
        let x = Expr {
            kind: ExprKind::Special(crate::thread::Special::ThreadIdx),
            dtype: DType::I32,
        };
        let c = Expr::int(i32::MAX);
        let s = Expr::int(3);
        let e = Expr {
            kind: ExprKind::Binary(
                BinaryOp::Mul,
                Box::new(Expr {
                    kind: ExprKind::Binary(BinaryOp::Add, Box::new(x), Box::new(c)),
                    dtype: DType::I32,
                }),
                Box::new(s),
            ),
            dtype: DType::I32,
        };
        form.add(&e, 1, DType::I32);
        assert_eq!(form.terms.len(), 1);
        assert_eq!(form.terms[0].1, 3);
        for t in [0i64, 1, 5, 31] {
            let direct = DType::I32.wrap_i64((t + i64::from(i32::MAX)) * 3);
            let regrouped = DType::I32.wrap_i64(t * form.terms[0].1 + form.constant);
            assert_eq!(direct, regrouped, "thread {t}");
        }
    }
}
