//! Obligations of `T.Pipelined` loops: stage buffers are not overwritten
//! while read (`pipeline-reuse`), and every read of a stage follows the
//! wait and the barrier that complete and publish its copy
//! (`pipeline-order`).
//!
//! # The schedule
//! The model is the lowering's (`lower/pipeline.rs`), over the loop's
//! iterations `a .. a + n`, generalised to pipeline stages: every
//! top-level statement of the body has a stage `σ`; with `D` the largest,
//! iteration `i` runs each statement for the data of iteration `i + D −
//! σ`. Without `order`/`stage` lists the lowering's choice applies: the
//! leading *producers* (copies from a global buffer into the whole of a
//! shared buffer) have stage 0 and the rest stage `s − 1` for
//! `T.Pipelined(num_stages = s)`, `s >= 2`, so `D = s − 1`. With the lists
//! (TileLang's `order` and `stage`, one entry per statement of the body),
//! the stages are the list's; statements of a negative stage take no part.
//! Lists of a form the lowering does not follow (`ir::lists`) leave the
//! loop with the schedule it has without them: both are proved, the
//! lists' (what TileLang would run) and that one (what tilec runs).
//!
//! With asynchronous copies, each staged buffer has `V = s` versions, data
//! iteration `x` in version `(x − a) mod V`. Iteration `i` waits until at
//! most `W = D − 1` commit groups are pending (`wait_group s − 2` without
//! lists), passes a barrier, issues the producers and commits one group,
//! then runs the consumers; the prologue commits the groups of the first
//! `D` iterations. So the producer (stage `σp`) of data `x` is issued in
//! iteration `x − (D − σp)` and is complete and visible after the wait and
//! barrier at the top of iteration `x − (D − σp) + 1 + W`; a consumer
//! (stage `σc`) reads data `y` in iteration `y − D + σc`. Through
//! registers (targets without async copies) the lowering keeps `V = 2`
//! versions and runs one iteration ahead (`D = 1`, `W = 0`: the tile
//! loaded in iteration `x − 1` is stored after its consumers and published
//! by the barrier at the top of iteration `x`).
//!
//! On targets with a matrix atom that reads shared memory through
//! descriptors (sm_90a's wgmma), a loop without lists, `s ≥ 3`, whose only
//! consumer is one `gemm` with a literal false `clear_accum` may instead be
//! lowered with that gemm's group left in flight for one more iteration:
//! `D = s − 2`, `W = D − 1`, and the consumer reads its stage during its
//! own iteration and the next (`hold = 1`). Whether the lowering does so
//! depends on every gemm of the kernel, so both schedules are proved.
//! Where the lowering feeds the loop with bulk tensor copies instead
//! (`lower/tma.rs`), it issues iteration `i + D + 1`'s copies at the end
//! of iteration `i`, after a barrier, and each consumer waits for its own
//! stage's barrier phase: the same issue and completion points as above,
//! so the same two schedules cover it. With `s ≥ 3` the per-thread copies
//! are also issued at the end of their iteration, after its consumers
//! (`lower/pipeline.rs`): no earlier than modelled, completed at the same
//! wait, so a version proved free over the modelled window is free over
//! the shorter one. The copies of the last `D` iterations, for data `x`
//! past the loop's end, zero-fill instead of being skipped; they write
//! version `(x − a) mod V` while only data `y` with `x − D ≤ y < x` is
//! still read, and `0 < x − y ≤ D < V` puts those in other versions.
//!
//! # The obligations
//! For every producer and every later statement of the body that reads
//! its buffer (a load, a copy source, a gemm operand, a reduction's
//! source), stated over the consumer's iteration `y` (the loop variable)
//! and a producer iteration `x` (primed):
//! - `pipeline-reuse`: a copy in flight (issued, not yet waited for) while
//!   the consumer reads another iteration's data never writes the version
//!   it reads: `issue(x) <= read(y) + hold`, `read(y) < done(x)` and `x !=
//!   y` imply `(x − a) mod V != (y − a) mod V`;
//! - `pipeline-order`: the consumer reads data `y` no earlier than the
//!   iteration whose wait and barrier complete its copy: `read(y) >=
//!   done(y)`.
//!
//! Not modelled: shared buffers the body writes synchronously (ordered by
//! the lowering's barrier analysis, which the SIMT interpreter checks),
//! the vector-width conditions under which the lowering pipelines at all
//! (a loop it does not pipeline runs serially and is safe), and the order
//! of statements inside one iteration beyond "producers, then consumers".

use super::Generator;
use crate::ir::{Block, Buffer, Expr, Handle, Region, Scope, Span, Stmt, Var};
use crate::verify::{Cmp, Formula, ObligationKind, PipelineSchedule, Term};

/// A statement of a pipelined body with its stage.
struct Staged {
    index: usize,
    stage: u32,
}

impl Generator<'_> {
    /// Whether `stmt` copies from a global buffer into a shared one (the
    /// whole of it when `whole`): a pipeline producer; its destination.
    fn producer(&self, stmt: &Stmt, whole: bool) -> Option<Handle<Buffer>> {
        let Stmt::Copy { src, dst } = stmt else {
            return None;
        };
        let f = self.f;
        if f.buffers[src.buffer].scope != Scope::Global
            || f.buffers[dst.buffer].scope != Scope::Shared
        {
            return None;
        }
        if whole {
            let shape = f.const_shape(dst.buffer)?;
            let covers = dst.ranges.len() == shape.len()
                && dst.ranges.iter().zip(&shape).all(|(r, &e)| {
                    f.as_const_int(r.start) == Some(0) && f.as_const_int(r.extent) == Some(e)
                });
            if !covers {
                return None;
            }
        }
        Some(dst.buffer)
    }

    /// Whether `stmt` (at any depth) reads `buffer`.
    fn reads(&self, stmt: &Stmt, buffer: Handle<Buffer>) -> bool {
        let f = self.f;
        let expr_reads = |e: Handle<Expr>| {
            let mut stack = vec![e];
            while let Some(e) = stack.pop() {
                if let Expr::Load { buffer: b, .. } = &f.exprs[e]
                    && *b == buffer
                {
                    return true;
                }
                stack.extend(f.exprs[e].operands());
            }
            false
        };
        let region_reads = |r: &Region| r.buffer == buffer;
        let block_reads = |b: &Block| b.stmts.iter().any(|s| self.reads(s, buffer));
        match stmt {
            Stmt::Kernel { body, .. } => block_reads(body),
            Stmt::Alloc { init, .. } => init.is_some_and(expr_reads),
            Stmt::For {
                start,
                extent,
                body,
                ..
            } => expr_reads(*start) || expr_reads(*extent) || block_reads(body),
            Stmt::Parallel { extents, body, .. } => {
                extents.iter().any(|&e| expr_reads(e)) || block_reads(body)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => expr_reads(*cond) || block_reads(then) || block_reads(otherwise),
            Stmt::Let { value, .. }
            | Stmt::Assume { cond: value }
            | Stmt::DeviceAssert { cond: value } => expr_reads(*value),
            Stmt::Store { indices, value, .. } | Stmt::WarpReduce { indices, value, .. } => {
                expr_reads(*value) || indices.iter().any(|&i| expr_reads(i))
            }
            Stmt::Copy { src, .. } => region_reads(src),
            Stmt::Gemm { a, b, c, .. } => region_reads(a) || region_reads(b) || region_reads(c),
            Stmt::Fill { value, .. } => expr_reads(*value),
            Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
                *src == buffer || *dst == buffer
            }
            Stmt::AtomicAdd { value, .. } | Stmt::Atomic { value, .. } => match value {
                crate::ir::AtomicValue::Scalar(v) => expr_reads(*v),
                crate::ir::AtomicValue::Region(r) => region_reads(r),
            },
            Stmt::Role { body, .. } => block_reads(body),
            Stmt::BarrierArrive { index, .. } => expr_reads(*index),
            Stmt::BarrierWait { index, parity, .. } => expr_reads(*index) || expr_reads(*parity),
            Stmt::Barrier | Stmt::AllocBarrier { .. } => false,
        }
    }

    /// What a consumer statement is, for subjects.
    fn describe(&self, stmt: &Stmt) -> &'static str {
        match stmt {
            Stmt::Gemm { .. } => "gemm",
            Stmt::Copy { .. } => "copy",
            Stmt::Reduce { .. } => "reduce",
            Stmt::Cumsum { .. } => "cumsum",
            Stmt::Parallel { .. } => "T.Parallel",
            Stmt::For { .. } => "loop",
            Stmt::If { .. } => "if",
            Stmt::Store { .. } => "store",
            Stmt::AtomicAdd { .. } => "atomic_add",
            Stmt::Atomic { op, .. } => op.name(),
            _ => "statement",
        }
    }

    /// The obligations of a `T.Pipelined` loop (module documentation);
    /// called with the loop variable declared and its range assumed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pipeline(
        &mut self,
        var: Handle<Var>,
        start: &Term,
        extent: &Term,
        num_stages: u32,
        lists: Option<(&[i64], &[i64])>,
        body: &Block,
        span: Span,
    ) {
        // Only the kernel's uniform code is pipelined.
        if !self.in_kernel || !self.frames.is_empty() {
            return;
        }
        let mut staged: Vec<Staged> = Vec::new();
        let mut producers: Vec<(usize, Handle<Buffer>)> = Vec::new();
        let (versions, lookahead, wait, asynchronous) = match lists {
            None => {
                if num_stages < 2 {
                    return;
                }
                for (index, stmt) in body.stmts.iter().enumerate() {
                    match self.producer(stmt, true) {
                        Some(b)
                            if producers.len() == index && !producers.iter().any(|p| p.1 == b) =>
                        {
                            producers.push((index, b));
                            staged.push(Staged { index, stage: 0 });
                        }
                        _ => staged.push(Staged {
                            index,
                            stage: if self.options.async_copies {
                                num_stages - 1
                            } else {
                                1
                            },
                        }),
                    }
                }
                if self.options.async_copies {
                    (num_stages, num_stages - 1, num_stages - 2, true)
                } else {
                    (2, 1, 0, false)
                }
            }
            Some((order, stages)) => {
                if order.len() != body.len() || stages.len() != body.len() {
                    return;
                }
                for (index, (&stage, stmt)) in stages.iter().zip(&body.stmts).enumerate() {
                    let Ok(stage) = u32::try_from(stage) else {
                        continue;
                    };
                    if let Some(b) = self.producer(stmt, false) {
                        producers.push((index, b));
                    }
                    staged.push(Staged { index, stage });
                }
                let lookahead = staged.iter().map(|s| s.stage).max().unwrap_or(0);
                if lookahead == 0 {
                    // Every statement in one stage: nothing runs ahead.
                    return;
                }
                let asynchronous = self.options.async_copies;
                let versions = if asynchronous { num_stages.max(1) } else { 2 };
                let wait = if asynchronous { lookahead - 1 } else { 0 };
                (versions, lookahead, wait, asynchronous)
            }
        };
        if producers.is_empty() {
            return;
        }
        // The schedules to prove: the lowering's, and with the consumer's
        // matrix group held one iteration where the lowering may do that.
        let consumers = &body.stmts[producers.len().min(body.stmts.len())..];
        let held = lists.is_none()
            && asynchronous
            && num_stages >= 3
            && self
                .options
                .matrix_atoms
                .iter()
                .any(|a| a.descriptor.is_some())
            && matches!(consumers, [Stmt::Gemm { clear_accum, .. }]
                if self.f.as_const_int(*clear_accum) == Some(0)
                    || self.f.as_literal(*clear_accum).is_some_and(|l| l.as_f64() == 0.0));
        let mut variants = vec![(lookahead, wait, 0u32)];
        if held {
            variants.push((lookahead - 1, wait - 1, 1));
        }
        for (lookahead, wait, hold) in variants {
            self.pipeline_schedule(
                var,
                start,
                extent,
                body,
                span,
                (&staged, &producers),
                (versions, lookahead, wait, asynchronous, hold),
            );
        }
    }

    /// The obligations of one schedule of a pipelined loop.
    #[allow(clippy::too_many_arguments)]
    fn pipeline_schedule(
        &mut self,
        var: Handle<Var>,
        start: &Term,
        extent: &Term,
        body: &Block,
        span: Span,
        (staged, producers): (&[Staged], &[(usize, Handle<Buffer>)]),
        (versions, lookahead, wait, asynchronous, hold): (u32, u32, u32, bool, u32),
    ) {
        // A held schedule moves the consumers one stage earlier with the
        // lookahead (`lookahead` is already one less).
        let stage_of = |index: usize| {
            staged.iter().find(|s| s.index == index).map(|s| {
                if hold > 0 && s.stage > 0 {
                    s.stage - hold
                } else {
                    s.stage
                }
            })
        };
        let y = Term::var(self.f.vars[var].name.clone());
        let Term::Var(y_name) = &y else {
            return;
        };
        let x_name = format!("{y_name}'");
        let Some(x_index) = self.copy_var(y_name, &x_name) else {
            return;
        };
        let x = Term::var(x_name);
        let version = |t: &Term| {
            Term::FloorMod(
                Box::new(t.clone().minus(start.clone())),
                Box::new(Term::Const(i128::from(versions))),
            )
        };
        for &(p, buffer) in producers {
            let Some(writer_stage) = stage_of(p) else {
                continue;
            };
            for (c, stmt) in body.stmts.iter().enumerate() {
                let Some(reader_stage) = stage_of(c) else {
                    continue;
                };
                if c == p || !self.reads(stmt, buffer) {
                    continue;
                }
                let schedule = PipelineSchedule {
                    versions,
                    writer_stage,
                    reader_stage,
                    lookahead,
                    wait,
                    asynchronous,
                    hold,
                };
                let ahead = Term::Const(schedule.ahead());
                let issue = |t: &Term| t.clone().minus(ahead.clone());
                let done = |t: &Term| issue(t).plus(Term::Const(1 + i128::from(wait)));
                let read = |t: &Term| {
                    t.clone()
                        .minus(Term::Const(i128::from(lookahead)))
                        .plus(Term::Const(i128::from(reader_stage)))
                };
                let consumer_span = body.spans.get(c).copied().unwrap_or(span);
                let what = self.describe(stmt);
                let name = self.f.buffers[buffer].name.clone();
                let (y_text, x_text) = (y.to_string(), x.to_string());
                // pipeline-reuse
                let extra = vec![
                    x.clone().ge(start.clone()),
                    x.clone().lt(start.clone().plus(extent.clone())),
                    Formula::cmp(Cmp::Ne, x.clone(), y.clone()),
                    issue(&x).le(read(&y).plus(Term::Const(i128::from(hold)))),
                    read(&y).lt(done(&x)),
                ];
                let goal = Formula::cmp(Cmp::Ne, version(&x), version(&y));
                let shown = vec![
                    ("version read".to_string(), version(&y)),
                    ("version written".to_string(), version(&x)),
                    (format!("copy of {x_text} issued in iteration"), issue(&x)),
                    (
                        format!("copy of {x_text} waited for in iteration"),
                        done(&x),
                    ),
                    (format!("data of {y_text} read in iteration"), read(&y)),
                ];
                self.push(
                    ObligationKind::PipelineReuse {
                        buffer: name.clone(),
                        schedule,
                    },
                    consumer_span,
                    format!(
                        "{name} ({versions} versions, copies {} ahead) is not overwritten while {what} reads it in iteration {y_text}",
                        iterations(schedule.ahead())
                    ),
                    &extra,
                    goal,
                    shown,
                );
                if let Some(item) = self.items.last_mut() {
                    item.scope.push(x_index);
                }
                // pipeline-order
                let goal = read(&y).ge(done(&y));
                let shown = vec![
                    (format!("data of {y_text} read in iteration"), read(&y)),
                    (
                        format!("copy of {y_text} waited for in iteration"),
                        done(&y),
                    ),
                ];
                let how = if asynchronous {
                    format!("wait_group {wait} and a barrier publish")
                } else {
                    "a barrier publishes".to_string()
                };
                self.push(
                    ObligationKind::PipelineOrder {
                        buffer: name.clone(),
                        schedule,
                    },
                    consumer_span,
                    format!("{what} reads {name} of iteration {y_text} after {how} its copy"),
                    &[],
                    goal,
                    shown,
                );
            }
        }
    }
}

/// `1 iteration`, `2 iterations`.
fn iterations(n: i128) -> String {
    if n == 1 {
        "1 iteration".to_string()
    } else {
        format!("{n} iterations")
    }
}
