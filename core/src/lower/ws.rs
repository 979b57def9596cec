//! Warp specialization: a producer warp group feeds a bulk-copy pipeline
//! while the block's threads compute.
//!
//! # When
//! A kernel is specialized when the target has numbered barriers (for the
//! consumers' own synchronisation), the consumers keep enough registers
//! (below), and the function does not set
//! `tl.disable_warp_specialized`, and its one pipelined loop
//! (`pipeline.rs`) is a statement of the kernel body itself (not nested),
//! takes the bulk-copy form (`tma.rs`), and is released by issuing groups:
//! its consumers read the stages only as operands of shared-operand gemms
//! and write no shared memory (GEMM's main loop, attention's). Anything
//! else is lowered as before, with thread 0 refilling stages between its
//! own computations.
//!
//! # Roles
//! The kernel gets a producer: its `T` threads (the Tile IR kernel's
//! count) are the *consumers*, the `G` threads after them the producer,
//! where `G` is the target's register-reallocation group (a warpgroup of
//! 128 on sm_90a) or, without reallocation, one warp.
//! - Thread 0 initialises the stage barriers (`full`, `empty`) first
//!   thing, and a block-wide `barrier` publishes them to every thread of
//!   both roles. It is the only block-wide barrier left.
//! - The consumers (`if thread_idx < T`) run the whole kernel body as
//!   lowered for `T` threads, except that the pipelined loop only waits
//!   on `full`, computes and releases stages on `empty` (no refills), and
//!   every barrier between consumers is numbered barrier 1 over `T`
//!   threads (`bar_sync 1, T`), since a block-wide one would wait for the
//!   producer.
//! - The producer's first thread (`thread_idx == T`) runs its own copy of
//!   the loop: for each iteration `r` (stage `r mod s`, its use `⌊r/s⌋`),
//!   it waits on `empty` for the release of the stage's previous use
//!   (parity `(⌊r/s⌋ + 1) mod 2`, which a fresh barrier satisfies for the
//!   first `s` iterations), then arrives on `full` with the stage's bytes
//!   and issues the boxes. The other producer threads idle.
//!
//! # Registers
//! The producer shares the block's register file. A block holds, from
//! launch, the even share of its `T + G` threads (the file divided by the
//! threads rounded up to four warps, down to a multiple of 8: 168 a thread
//! for 384 threads, 128 for 512). Where the target moves registers between
//! warps (`setmaxnreg` on sm_90a), the producer group gives its registers
//! back down to 24 a thread and the consumers take what that leaves of the
//! block's pool, down to a multiple of 8: 240 for 256 consumers ((168·384
//! − 24·128) / 256), 160 for 384. (The pool is the launch allocation, not
//! the whole file: asking for more waits forever.) `ptxas` compiles the
//! consumers' code to the raised count (the 128 × 128 attention uses 180
//! registers there), but not from every launch share: the 192 × 256 GEMM
//! on three consumer warpgroups (154 registers) still fails to compile
//! with 128 (`C7602`) after `setmaxnreg.inc 160`. Without reallocation
//! the producer is one warp and the consumers keep the launch share of
//! `T + 32` threads. Either way a kernel is specialized only when that
//! launch share is at least 160 registers a thread (256 consumers, not
//! 384): the 128 × 128 attention needs 178 and ran 13 % slower squeezed
//! into 158 (`bench/RESULTS.md`), and the three-warpgroup GEMM does not
//! compile.
//!
//! # Ping-pong
//! With two consumer warpgroups whose loop body holds two gemms around
//! other work (attention: `Q·Kᵀ`, the softmax, `P·V`), the warpgroups
//! take turns issuing the first gemm: group `w` waits on numbered
//! barrier `2 + w` (256 threads: its own 128 waiting, the other's 128
//! arriving) before its first `async_mma` of the iteration and, once it
//! has committed them, arrives on the other group's barrier (numbers
//! computed from the thread index, no branch); the second group arrives
//! on the first's once before the loop, and its last hand-over is left
//! pending. The tensor pipe then runs one group's
//! `Q·Kᵀ` while the other computes its softmax, instead of both groups
//! reaching their softmax together.
//!
//! # What the producer reads
//! The producer reads what the consumers computed before the loop only
//! through registers that uniform code assigned at the top of the body
//! (the loop's start and count, block-index arithmetic, `let`s); those
//! assignments are copied into the producer's branch, in order. When a
//! value it needs comes from anywhere else, the kernel is not specialized.
//!
//! Correctness is the pipeline's: the same stages, barriers and parities,
//! with the waits on `empty` moved from thread 0's path into the
//! producer's; the SIMT interpreter runs both roles as separate groups
//! (`simt/sched.rs`) and checks every stage's reads and refills.

use std::collections::HashSet;

use super::{BinaryOp, DType, Expr, Lower, Result, Stmt, StmtKind, ir, lit_i32, reg_expr};
use crate::thread::visit::{self, expr_regs};
use crate::thread::{RegId, RegRef, Special};

/// The numbered barrier the consumers synchronise on.
pub(super) const CONSUMER_BARRIER: u32 = 1;

/// The numbered barriers of the two consumer warpgroups' turns
/// ("Ping-pong"): group `w` waits on `TURN_BARRIERS[w]`.
const TURN_BARRIERS: [u32; 2] = [2, 3];

/// The fewest registers per thread the block's launch share must give
/// each thread once the producer is added (module documentation,
/// "Registers").
const MIN_CONSUMER_REGISTERS: i64 = 160;

/// Registers a thread of the producer keeps where registers move between
/// roles: the fewest the instruction allows, since the producer only
/// counts iterations and computes box coordinates.
const PRODUCER_REGISTERS: u32 = 24;

/// Threads of the producer role: a group that may give registers away
/// together (a warpgroup) where the target can move them, else one warp.
fn producer_threads(target: &crate::target::TargetDescription) -> i64 {
    let realloc = target
        .registers
        .reallocation
        .as_ref()
        .and_then(|r| r.group_threads);
    i64::from(
        realloc
            .unwrap_or_else(|| target.simt_width().unwrap_or(32))
            .max(1),
    )
}

/// Registers per thread of a block of `threads` threads when the block's
/// file is split evenly: threads rounded up to four warps (how `ptxas`
/// sizes a block), registers down to a multiple of 8.
fn even_share(per_block: u32, threads: i64, warp: i64) -> i64 {
    let group = 4 * warp.max(1);
    let rounded = (threads + group - 1) / group * group;
    (i64::from(per_block) / rounded.max(1)) / 8 * 8
}

/// Emits one iteration's copies into a stage (`producer_loop`).
type IssueFn<'a, 'l> = dyn FnMut(&mut Lower<'l>, Expr, &mut Vec<Stmt>) -> Result<()> + 'a;

/// The state of a kernel being specialized.
#[derive(Default)]
pub(super) struct Ws {
    /// Barrier initialisation, run by thread 0 before everything.
    pub(super) init: Vec<Stmt>,
    /// The producer's loop, once the pipelined loop is lowered.
    pub(super) producer: Option<Vec<Stmt>>,
    /// The consumers' loop register, to find the loop in the body.
    pub(super) consumer_loop: Option<RegId>,
}

impl<'l> Lower<'l> {
    /// Whether this kernel is specialized (module documentation, "When");
    /// called once its pipelines are planned.
    pub(super) fn plan_ws(&self, kernel_body: &ir::Block) -> bool {
        if !self.specialize || self.pipelines.len() != 1 {
            return false;
        }
        let disabled = self.f.attrs.flag("tl.disable_warp_specialized");
        let Some(named) = self.target.named_barriers() else {
            return false;
        };
        if disabled || CONSUMER_BARRIER >= named.ids {
            return false;
        }
        let extra = producer_threads(self.target);
        let max_threads = i64::from(self.target.threads_per_block.max_per_block.unwrap_or(1024));
        let multiple = i64::from(named.count_multiple.max(1));
        if self.threads % multiple != 0 || self.threads + extra > max_threads {
            return false;
        }
        // The producer shares the block's registers: keep the consumers'
        // budget where the kernels that need it fit (module
        // documentation, "Registers").
        let warp = i64::from(self.target.simt_width().unwrap_or(32));
        if let Some(per_block) = self.target.registers.per_block
            && even_share(per_block, self.threads + extra, warp) < MIN_CONSUMER_REGISTERS
        {
            return false;
        }
        kernel_body.stmts.iter().any(|s| {
            let ir::Stmt::For { var, body, .. } = s else {
                return false;
            };
            let Some(plan) = self.pipelines.get(var) else {
                return false;
            };
            if plan.tma.is_none() {
                return false;
            }
            let body = self.plain_body(*var, body);
            let consumers = super::pipeline::consumers_of(&body, &plan.producers);
            self.release_group(&body, plan, &consumers).is_some()
        })
    }

    /// The most registers a consumer thread may use in a specialized
    /// kernel: its launch share plus what the producer gives back, where
    /// the target moves registers between warps, else the launch share.
    /// `None` when the target gives no register file size.
    fn consumer_registers(&self) -> Option<i64> {
        let per_block = self.target.registers.per_block?;
        let warp = i64::from(self.target.simt_width().unwrap_or(32));
        let extra = producer_threads(self.target);
        Some(match &self.target.registers.reallocation {
            Some(r) => {
                // The pool is what the block holds at launch: the even
                // share of every thread.
                let step = i64::from(r.step.max(1));
                let pool =
                    even_share(per_block, self.threads + extra, warp) * (self.threads + extra);
                let left = pool - i64::from(PRODUCER_REGISTERS) * extra;
                (left / self.threads.max(1) / step * step).min(i64::from(r.max_per_thread))
            }
            None => even_share(per_block, self.threads + extra, warp),
        })
    }

    /// The `setmaxnreg` statements of the two roles (module documentation,
    /// "Registers"): the producer's first, then the consumers'; none
    /// where the target cannot move registers.
    fn role_registers(&self) -> (Vec<Stmt>, Vec<Stmt>) {
        let (Some(r), Some(per_block), Some(consumer)) = (
            &self.target.registers.reallocation,
            self.target.registers.per_block,
            self.consumer_registers(),
        ) else {
            return (Vec::new(), Vec::new());
        };
        let warp = i64::from(self.target.simt_width().unwrap_or(32));
        let start = even_share(
            per_block,
            self.threads + producer_threads(self.target),
            warp,
        );
        let producer = PRODUCER_REGISTERS.max(r.min_per_thread);
        let mut give = Vec::new();
        if i64::from(producer) < start {
            give.push(self.stmt(StmtKind::SetMaxRegisters {
                count: producer,
                increase: false,
            }));
        }
        let mut take = Vec::new();
        if consumer > start {
            take.push(self.stmt(StmtKind::SetMaxRegisters {
                count: consumer as u32,
                increase: true,
            }));
        }
        (give, take)
    }

    /// Alternates two consumer groups' first gemm of each iteration
    /// (module documentation, "Ping-pong"): `inner` is the consumers'
    /// loop body; the first turn is given before the loop, into `out`.
    /// Does nothing unless the consumers are exactly two issuing groups
    /// and the body issues `async_mma`s at its top level.
    pub(super) fn ping_pong(&self, inner: &mut Vec<Stmt>, out: &mut Vec<Stmt>) -> Result<()> {
        let group = self.async_atom.map_or(0, |a| i64::from(a.issue.threads));
        let ids = self.target.named_barriers().map(|n| n.ids);
        if group == 0
            || self.threads != 2 * group
            || ids.is_none_or(|ids| TURN_BARRIERS.iter().any(|&t| t >= ids))
        {
            return Ok(());
        }
        let Some(fence) = inner
            .iter()
            .position(|s| matches!(s.kind, StmtKind::AsyncMmaFence))
        else {
            return Ok(());
        };
        let Some(commit) = inner[fence..]
            .iter()
            .position(|s| matches!(s.kind, StmtKind::AsyncMmaCommit))
            .map(|c| c + fence)
        else {
            return Ok(());
        };
        let threads = (2 * group) as u32;
        let thread = Expr::special(Special::ThreadIdx);
        let which = self.bin(BinaryOp::FloorDiv, thread.clone(), lit_i32(group))?;
        let second = self.bin(BinaryOp::Ge, thread, lit_i32(group))?;
        let bar = |id: Expr, wait: bool| self.stmt(StmtKind::NamedBarrier { id, threads, wait });
        // The second group hands the first its first turn.
        out.push(self.stmt(StmtKind::If {
            cond: second,
            then_body: vec![bar(lit_i32(i64::from(TURN_BARRIERS[0])), false)],
            else_body: None,
        }));
        // The numbers are computed, not branched on: `ptxas` serializes
        // `wgmma`s that follow barriers in branches (C7520). After
        // issuing, each group hands the other its turn (the second
        // group's last hand-over has no taker and is left pending).
        let own = self.bin(
            BinaryOp::Add,
            lit_i32(i64::from(TURN_BARRIERS[0])),
            which.clone(),
        )?;
        let other = self.bin(BinaryOp::Sub, lit_i32(i64::from(TURN_BARRIERS[1])), which)?;
        inner.insert(commit + 1, bar(other, false));
        inner.insert(fence, bar(own, true));
        Ok(())
    }

    /// A barrier between the consumers of a specialized kernel.
    pub(super) fn consumer_barrier(&self) -> StmtKind {
        StmtKind::NamedBarrier {
            id: lit_i32(i64::from(CONSUMER_BARRIER)),
            threads: self.threads as u32,
            wait: true,
        }
    }

    /// The specialized kernel body: barrier initialisation, then the
    /// consumers' `body` and the producer's loop as the two branches of
    /// one `if` (module documentation). `None` when the producer needs a
    /// value it cannot recompute, or the loop is not in `body` itself.
    pub(super) fn split_roles(&self, ws: Ws, body: Vec<Stmt>) -> Result<Option<Vec<Stmt>>> {
        let (Some(producer), Some(consumer_loop)) = (ws.producer, ws.consumer_loop) else {
            return Ok(None);
        };
        let Some(at) = body
            .iter()
            .position(|s| matches!(&s.kind, StmtKind::For { var, .. } if *var == consumer_loop))
        else {
            return Ok(None);
        };
        let Some(replayed) = replay(&body[..at], &producer) else {
            return Ok(None);
        };
        let thread = Expr::special(Special::ThreadIdx);
        let consumers = lit_i32(self.threads);
        let (mut branch, mut body_with) = self.role_registers();
        body_with.extend(body);
        let body = body_with;
        branch.extend(replayed);
        branch.push(self.stmt(StmtKind::If {
            cond: self.bin(BinaryOp::Eq, thread.clone(), consumers.clone())?,
            then_body: producer,
            else_body: None,
        }));
        let mut out = vec![
            self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Eq, thread.clone(), lit_i32(0))?,
                then_body: ws.init,
                else_body: None,
            }),
            self.stmt(StmtKind::Barrier),
        ];
        out.push(self.stmt(StmtKind::If {
            cond: self.bin(BinaryOp::Lt, thread, consumers)?,
            then_body: body,
            else_body: Some(branch),
        }));
        Ok(Some(out))
    }

    /// The kernel's thread count with the producer warp.
    pub(super) fn specialized_threads(&self) -> u32 {
        (self.threads + producer_threads(self.target)) as u32
    }

    /// The producer's loop over the iterations `s0 .. s0 + n` of a
    /// bulk-copy pipeline with `stages` stages (module documentation).
    /// `issue` emits one iteration's `expect_tx` and boxes into a stage,
    /// with the Tile IR loop variable bound to the producer's register.
    pub(super) fn producer_loop(
        &mut self,
        (var, start, extent): (
            ir::Handle<ir::Var>,
            ir::Handle<ir::Expr>,
            ir::Handle<ir::Expr>,
        ),
        (s0, n): (&Expr, &Expr),
        stages: i64,
        empty: crate::thread::SharedId,
        issue: &mut IssueFn<'_, 'l>,
    ) -> Result<Vec<Stmt>> {
        let saved = self.vars.get(&var).cloned();
        let (reg, mut inner) = self.loop_var(var, start, extent)?;
        let mut out = Vec::new();
        let rel = self.bin(BinaryOp::Sub, reg_expr(reg, DType::I32), s0.clone())?;
        let (stage, parity, stepped) = if (stages as u64).is_power_of_two() {
            let stage = self.bin(BinaryOp::FloorMod, rel.clone(), lit_i32(stages))?;
            let uses = self.bin(BinaryOp::FloorDiv, rel, lit_i32(stages))?;
            let next = self.bin(BinaryOp::Add, uses, lit_i32(1))?;
            let parity = self.bin(BinaryOp::FloorMod, next, lit_i32(2))?;
            (stage, parity, None)
        } else {
            let stage = self.temp("fill_stage", DType::I32);
            self.assign(&mut out, stage, lit_i32(0));
            let phase = self.temp("fill_phase", DType::I32);
            self.assign(&mut out, phase, lit_i32(0));
            let flipped = self.bin(BinaryOp::BitXor, reg_expr(phase, DType::I32), lit_i32(1))?;
            (reg_expr(stage, DType::I32), flipped, Some((stage, phase)))
        };
        inner.push(self.stmt(StmtKind::MbarrierWait {
            bar: empty,
            index: stage.clone(),
            parity,
        }));
        issue(self, stage, &mut inner)?;
        if let Some((stage, phase)) = stepped {
            self.step_stage(stage, phase, stages, &mut inner)?;
        }
        out.push(self.stmt(StmtKind::For {
            var: reg,
            start: s0.clone(),
            count: n.clone(),
            step: lit_i32(1),
            unroll: crate::thread::Unroll::None,
            body: inner,
        }));
        match saved {
            Some(e) => {
                self.vars.insert(var, e);
            }
            None => {
                self.vars.remove(&var);
            }
        }
        Ok(out)
    }
}

/// The top-level assignments of `before` that the producer's statements
/// need, in order; `None` when a register they read is written some other
/// way there, or the producer holds a statement this does not know.
fn replay(before: &[Stmt], producer: &[Stmt]) -> Option<Vec<Stmt>> {
    let mut needed = HashSet::new();
    let mut own = HashSet::new();
    for s in producer {
        reads_and_writes(s, &mut needed, &mut own)?;
    }
    needed.retain(|r| !own.contains(r));
    let mut keep = vec![false; before.len()];
    for (i, s) in before.iter().enumerate().rev() {
        let mut written = HashSet::new();
        visit::writes(std::slice::from_ref(s), &mut written);
        if written.is_disjoint(&needed) {
            continue;
        }
        let StmtKind::Assign {
            dst: RegRef::Scalar(r),
            value,
        } = &s.kind
        else {
            return None;
        };
        keep[i] = true;
        needed.remove(r);
        expr_regs(value, &mut needed);
    }
    // Registers never assigned before the loop are the consumers' own
    // (registers start undefined): the producer cannot have them.
    if !needed.is_empty() {
        return None;
    }
    Some(
        before
            .iter()
            .zip(keep)
            .filter(|&(_, k)| k)
            .map(|(s, _)| s.clone())
            .collect(),
    )
}

/// Adds the registers `s` reads to `reads` and those it writes to
/// `writes`; `None` for statement kinds the producer does not use.
fn reads_and_writes(
    s: &Stmt,
    reads: &mut HashSet<RegId>,
    writes: &mut HashSet<RegId>,
) -> Option<()> {
    fn producer_kind(s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Assign { .. }
            | StmtKind::MbarrierWait { .. }
            | StmtKind::MbarrierArrive { .. }
            | StmtKind::TmaLoad { .. } => true,
            StmtKind::For { body, .. } => body.iter().all(producer_kind),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => then_body
                .iter()
                .chain(else_body.iter().flatten())
                .all(producer_kind),
            _ => false,
        }
    }
    if !producer_kind(s) {
        return None;
    }
    visit::reads(std::slice::from_ref(s), reads);
    visit::writes(std::slice::from_ref(s), writes);
    Some(())
}
