//! Pipelined loops fed by bulk tensor copies (TMA) and phased barriers,
//! where the target has both and the staged buffers are the swizzled
//! operands of a shared-operand atom (`swizzle.rs`).
//!
//! # When
//! A loop `pipeline.rs` pipelines with async copies takes this form when
//! the kernel's gemms use the shared-operand atom, the function does not
//! set `tl.disable_tma_lower`, the target has a bulk tensor copy from
//! global to shared memory and a phased barrier with a transaction counter
//! in shared memory, and *every* producer qualifies:
//! - its destination is a swizzled buffer whose row width `W` is one of
//!   the copy's swizzle modes;
//! - its source region has constant extents whose non-unit ones are the
//!   tile's `R × C`, the last being `C`, and a rank the copy takes;
//! - the copy's box, the region's extents with the last replaced by the
//!   panel's `P = W/e` columns, has no extent above the copy's limit;
//! - the global buffer's innermost extent is known to be a multiple of
//!   `16/e` (its row stride, and every outer stride, is then a multiple
//!   of 16 bytes, as tensor maps require).
//!
//! Each producer gets a tensor map of its global buffer with that box and
//! a `W`-byte swizzle, and is copied as `C/P` boxes, one per panel: the box
//! at the region's start, `p·P` further along the last dimension, lands at
//! the panel's first element. The map's row-major box with the hardware
//! swizzle is exactly the panel layout of `swizzle.rs`, and the copy's
//! zero fill outside the buffer is the out-of-bounds rule of tile ops.
//!
//! # Code
//! One barrier per stage, `full[j]`, counts one arrival and the stage's
//! bytes. With `s` stages, `L` the iterations the consumers' gemm stays in
//! flight (`pipeline.rs`) and `d = s − L`:
//! - before the loop, thread 0 initialises the barriers, a `barrier`
//!   publishes them, and thread 0 issues the copies of iterations
//!   `0 .. d − 1` into stages `0 .. d − 1` (each under `if j < n`): an
//!   `mbarrier_arrive_expect_tx` of the stage's bytes, then its boxes;
//! - iteration `i` (relative index `r`) waits on `full[r mod s]` for the
//!   parity of its use `⌊r/s⌋ mod 2` and runs the consumers on that stage;
//!   the stage `(r − L) mod s` that the gemm group of iteration `r − L`
//!   read (retired by the consumers' `async_mma_wait L`) is then released,
//!   and thread 0 issues iteration `r + d` into it (`(r + d) mod s = (r −
//!   L) mod s`);
//! - after the loop, with `L = 1`, `async_mma_wait 0`.
//!
//! For a power of two `s` these stage numbers and parities are masks and
//! shifts of `r`; otherwise they are registers (`%use_stage`,
//! `%use_phase`, and `%freed_stage`, `%freed_phase` for iteration `r − L`)
//! stepped at the end of every iteration, the parity flipping when the
//! stage wraps. (Floor division by 3 of a signed number is a dozen
//! instructions, several times per iteration on thread 0's path to the
//! refill: 3- and 6-stage GEMMs ran 1.6–2.2× slower than 4-stage ones
//! before. The registers made 2-stage attention slower, so powers of two
//! keep the masks; `bench/RESULTS.md`.)
//!
//! The release: when the consumers read the staged buffers only as
//! operands of shared-operand gemms and write no shared memory (one gemm,
//! or attention's two gemms around its register softmax), a second
//! barrier per stage, `empty[j]`, expects one arrival per issuing group (a
//! warpgroup): the group's first thread arrives on `empty[(r − L) mod s]`
//! at the end of the iteration, after the wait that retired the group's
//! last `async_mma` on that stage (for `r ≥ L`; the interpreter counts an
//! `async_mma`'s reads as the first thread's), and thread 0 waits on it,
//! for the parity `⌊(r − L)/s⌋ mod 2` of that stage's use, before refilling
//! it. No block barrier is left in the loop, so warpgroups are only held
//! together by the stages: one may run its softmax while another's gemm
//! is on the tensor cores. With other consumers a `barrier` releases the
//! stage instead.
//!
//! Issuing iteration `r + d` at the end of iteration `r` is issuing it at
//! the start of iteration `r + 1`, `d − 1` ahead, which is where
//! per-thread copies issue it: the tiles in flight, and so the schedule
//! `verify` proves (`verify/obligations/pipeline.rs`), are the same. What
//! changes is who works: thread 0 issues a few bulk copies where every
//! thread computed addresses and issued its vectors, and each thread waits
//! on the barrier of the stage it reads rather than on its own copies and
//! a block barrier. The SIMT interpreter checks both orders: a consumer
//! that reads a stage before its wait sees "read before mbarrier wait", a
//! copy that overwrites a stage a pending gemm reads "write during async
//! mma", and one issued without waiting for the `empty` arrivals, or after
//! an arrival made before the reading group retired, "overwrites ... that
//! thread 128 read" (an async_mma's reads count as made when it retires;
//! `simt/mod.rs`). All three were tried.

use super::pipeline::{PipeLoop, PipePlan, as_loop_var};
use super::{BinaryOp, DType, Expr, Index, Lower, Result, Stmt, StmtKind, ir, lit_i32, reg_expr};
use crate::ir::{Handle, Region, Scope};
use crate::target::{AsyncCopy, Barrier};
use crate::thread::{self, SharedBuffer, SharedId, Special, TensorMapId};

/// How one producer copy is issued as bulk copies.
#[derive(Clone, Debug)]
pub(super) struct TmaProducer {
    pub(super) global: thread::ParamId,
    /// The box, outermost first.
    pub(super) box_dims: Vec<u32>,
    pub(super) swizzle: u32,
    /// Boxes per tile (one per panel) and the columns of one.
    pub(super) panels: i64,
    pub(super) panel_cols: i64,
    /// The tensor map, once the kernel has it.
    pub(super) map: Option<TensorMapId>,
}

impl Lower<'_> {
    /// The target's bulk tensor copy from global to shared memory, when
    /// bulk-copy pipelines are possible at all: the target also has a
    /// phased barrier with a transaction counter in shared memory, and the
    /// function does not set `tl.disable_tma_lower`.
    fn bulk_copy(&self) -> Option<&crate::target::BulkTensorCopy> {
        let disabled = self.f.attrs.flag("tl.disable_tma_lower");
        let barrier = self.target.barriers.iter().any(
            |b| matches!(b, Barrier::Phased(p) if p.space == "shared" && p.transactions.is_some()),
        );
        if disabled || !barrier {
            return None;
        }
        self.target.async_copies.iter().find_map(|c| match c {
            AsyncCopy::BulkTensor(b) if b.from == "global" && b.to == "shared" => Some(b),
            _ => None,
        })
    }

    /// How producer `copy src -> dst` is issued as bulk copies, if it
    /// qualifies (module documentation).
    pub(super) fn tma_producer(
        &self,
        src: &Region,
        dst: Handle<ir::Buffer>,
    ) -> Option<TmaProducer> {
        self.async_atom?;
        let copy = self.bulk_copy()?;
        let layout = *self.swizzled.get(&dst)?;
        let w = u32::try_from(layout.width).ok()?;
        if !copy
            .swizzle_modes
            .iter()
            .any(|m| m.row_bytes() == u64::from(w))
        {
            return None;
        }
        let f = self.f;
        // A global buffer in a mapped layout is read element by element
        // through its map (`mapped.rs`), never as a box.
        if f.buffers[src.buffer].scope != Scope::Global || self.mapped.contains_key(&src.buffer) {
            return None;
        }
        let Some(super::Mem::Global { param, mults, .. }) = self.mems.get(&src.buffer) else {
            return None;
        };
        // A tensor map states the global extents as constants or size
        // arguments; a compound extent is copied without one.
        if let Some(thread::Param::Global(g)) = self.params.get(param.index())
            && g.shape.iter().any(|d| matches!(d, thread::Dim::Expr(_)))
        {
            return None;
        }
        let rank = src.ranges.len() as u32;
        if rank < copy.min_rank.max(1) || rank > copy.max_rank {
            return None;
        }
        let sext: Vec<i64> = src
            .ranges
            .iter()
            .map(|r| f.as_const_int(r.extent))
            .collect::<Option<_>>()?;
        if super::non_unit(&sext) != [layout.rows, layout.cols] || sext.last() != Some(&layout.cols)
        {
            return None;
        }
        let p = layout.panel_cols();
        let mut box_dims: Vec<u32> = Vec::with_capacity(sext.len());
        for (d, &e) in sext.iter().enumerate() {
            let e = if d + 1 == sext.len() { p } else { e };
            box_dims.push(
                u32::try_from(e)
                    .ok()
                    .filter(|&e| e <= copy.max_box_extent)?,
            );
        }
        let inner = *mults.last()?;
        if inner == 0 || (inner * layout.elem) % 16 != 0 {
            return None;
        }
        Some(TmaProducer {
            global: *param,
            box_dims,
            swizzle: w,
            panels: layout.cols / p,
            panel_cols: p,
            map: None,
        })
    }

    /// The kernel's tensor map of `global` with this box and swizzle,
    /// added when new.
    pub(super) fn tensor_map(&mut self, t: &TmaProducer) -> TensorMapId {
        if let Some(i) = self.tensor_maps.iter().position(|m| {
            m.global == t.global && m.box_dims == t.box_dims && m.swizzle == t.swizzle
        }) {
            return TensorMapId(i as u32);
        }
        let base = self.params[t.global.index()].name().to_string();
        let name = self.claim(&format!("tmap_{base}"));
        self.tensor_maps.push(thread::TensorMap {
            name,
            global: t.global,
            box_dims: t.box_dims.clone(),
            swizzle: t.swizzle,
        });
        TensorMapId((self.tensor_maps.len() - 1) as u32)
    }

    /// The issuing group (threads) that releases the stages of a
    /// bulk-copy loop, when they can be released by groups (module
    /// documentation, "The release"): the block is whole groups of the
    /// shared-operand atom, and the consumers read the staged buffers only
    /// as operands of gemms, which go through that atom, and write no
    /// shared memory.
    pub(super) fn release_group(
        &self,
        body: &ir::Block,
        plan: &PipePlan,
        consumers: &ir::Block,
    ) -> Option<i64> {
        let group = self.async_atom.map_or(0, |a| i64::from(a.issue.threads));
        (group > 0 && self.threads % group == 0 && self.released_by_groups(body, plan, consumers))
            .then_some(group)
    }

    /// Whether the consumers read the staged buffers only as gemm
    /// operands and write no shared memory.
    fn released_by_groups(&self, body: &ir::Block, plan: &PipePlan, consumers: &ir::Block) -> bool {
        let staged: Vec<Handle<ir::Buffer>> = plan
            .producers
            .iter()
            .filter_map(|&(i, _)| match body.stmts.get(i) {
                Some(ir::Stmt::Copy { dst, .. }) => Some(dst.buffer),
                _ => None,
            })
            .collect();
        let mut acc = super::Pending::default();
        self.block_accesses(consumers, &mut acc);
        if !acc.writes.is_empty() {
            return false;
        }
        consumers.stmts.iter().all(|stmt| match stmt {
            ir::Stmt::Gemm { c, .. } => !staged.contains(&c.buffer),
            other => {
                let one = ir::Block {
                    stmts: vec![other.clone()],
                    spans: Vec::new(),
                };
                let mut touched = std::collections::HashSet::new();
                super::pipeline::buffers_touched(&one, &mut touched, self.f);
                staged.iter().all(|b| !touched.contains(b))
            }
        })
    }

    /// A pipelined loop whose producers are bulk copies (module
    /// documentation).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tma_for(
        &mut self,
        var: Handle<ir::Var>,
        start: Handle<ir::Expr>,
        extent: Handle<ir::Expr>,
        body: &ir::Block,
        plan: &PipePlan,
        loads: &[TmaProducer],
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let PipeLoop { s0, n, acc, vdtype } = self.pipe_loop(var, start, extent, body, out)?;
        let as_var = |e: Expr| as_loop_var(vdtype, e);
        let st = plan.stages;
        let (loop_reg, prologue) = self.loop_var(var, start, extent)?;
        let loop_binding = self.vars[&var].clone();
        let dist = st - plan.lag;
        // The stage barriers, initialised by thread 0 and published.
        let bar = self.barrier_buffer("full", st);
        // With one gemm as the only consumer, each issuing group releases
        // the stage its retired group read on a second barrier per stage
        // (`empty`), and no block barrier is needed (module documentation).
        // A rotated loop's choices follow its middle iterations (the
        // guarded ones release their stages the same way).
        let plain = self.plain_body(var, body);
        let consumers = super::pipeline::consumers_of(&plain, &plan.producers);
        let empty = self
            .release_group(&plain, plan, &consumers)
            .map(|group| (self.barrier_buffer("empty", st), group));
        // A specialized kernel (`ws.rs`) needs the group release.
        let specialized = self.ws.is_some();
        if specialized && empty.is_none() {
            self.ws_failed = true;
            return Err(self.unsupported("a producer warp for a pipeline without group releases"));
        }
        let mut inits = vec![(bar, 1)];
        if let Some((empty, group)) = empty {
            inits.push((empty, self.threads / group));
        }
        let mut init = Vec::new();
        for (b, count) in inits {
            for j in 0..st {
                init.push(self.stmt(StmtKind::MbarrierInit {
                    bar: b,
                    index: lit_i32(j),
                    count: lit_i32(count),
                }));
            }
        }
        let first = self.first_thread()?;
        if let Some(ws) = &mut self.ws {
            // Initialised before the roles split, with everything else; a
            // consumers' barrier only where the loop reads what the code
            // before it wrote (attention's Q tile), before the loop rather
            // than in every iteration.
            ws.init.append(&mut init);
            self.sync(&acc, out);
        } else {
            out.push(self.stmt(StmtKind::If {
                cond: first.clone(),
                then_body: init,
                else_body: None,
            }));
            self.barrier(out);
        }
        // Prologue: iterations s0 .. s0 + dist into stages 0 .. dist (the
        // producer warp's loop issues them in a specialized kernel).
        for j in 0..if specialized { 0 } else { dist } {
            let it = self.bin(BinaryOp::Add, s0.clone(), lit_i32(j))?;
            self.vars.insert(var, as_var(it));
            let mut issue = Vec::new();
            self.tma_issue(body, plan, loads, lit_i32(j), bar, &mut issue)?;
            let cond = match n.as_const_int() {
                Some(n) if j < n => first.clone(),
                _ => {
                    let more = self.bin(BinaryOp::Lt, lit_i32(j), n.clone())?;
                    self.bin(BinaryOp::And, first.clone(), more)?
                }
            };
            out.push(self.stmt(StmtKind::If {
                cond,
                then_body: issue,
                else_body: None,
            }));
        }
        self.vars.insert(var, loop_binding.clone());
        // The stage of iteration r and the parity of its use (`r mod s`,
        // `⌊r/s⌋ mod 2`), and the same for iteration r − lag. For a power
        // of two `s` they are masks and shifts of r; otherwise they live
        // in registers stepped at the end of every iteration, so that the
        // loop divides nothing (`bench/RESULTS.md` has both measured).
        let rel = self.bin(BinaryOp::Sub, reg_expr(loop_reg, DType::I32), s0.clone())?;
        let freed = self.bin(BinaryOp::Sub, rel.clone(), lit_i32(plan.lag))?;
        let stepped = !(st as u64).is_power_of_two();
        let mut pairs = Vec::new();
        let mut counters = |s: &mut Self, name: &str, r: i64, from: &Expr| -> Result<_> {
            if !stepped {
                let stage = s.bin(BinaryOp::FloorMod, from.clone(), lit_i32(st))?;
                let uses = s.bin(BinaryOp::FloorDiv, from.clone(), lit_i32(st))?;
                let phase = s.bin(BinaryOp::FloorMod, uses, lit_i32(2))?;
                return Ok((stage, phase));
            }
            let stage = s.temp(&format!("{name}_stage"), DType::I32);
            s.assign(out, stage, lit_i32(r.rem_euclid(st)));
            let phase = s.temp(&format!("{name}_phase"), DType::I32);
            s.assign(out, phase, lit_i32(r.div_euclid(st).rem_euclid(2)));
            pairs.push((stage, phase));
            Ok((reg_expr(stage, DType::I32), reg_expr(phase, DType::I32)))
        };
        let (use_stage, use_phase) = counters(self, "use", 0, &rel)?;
        let (freed_stage, freed_phase) = if plan.lag > 0 {
            counters(self, "freed", -plan.lag, &freed)?
        } else {
            (use_stage.clone(), use_phase.clone())
        };
        let mut inner = prologue;
        inner.push(self.stmt(StmtKind::MbarrierWait {
            bar,
            index: use_stage.clone(),
            parity: use_phase,
        }));
        self.async_lag = plan.lag > 0;
        let first_consumer = inner.len();
        let r = self.consumers_in_stage(body, plan, use_stage, &mut inner);
        self.async_lag = false;
        r?;
        let consumed = first_consumer..inner.len();
        // The stage iteration i − lag read is free again: released by its
        // readers' arrivals (`empty`), or by a barrier.
        let mut refill_wait = Vec::new();
        match empty {
            Some((empty, group)) => {
                let lane0 = self.bin(
                    BinaryOp::FloorMod,
                    Expr::special(Special::ThreadIdx),
                    lit_i32(group),
                )?;
                let mut leader = self.bin(BinaryOp::Eq, lane0, lit_i32(0))?;
                let mut wait = vec![self.stmt(StmtKind::MbarrierWait {
                    bar: empty,
                    index: freed_stage.clone(),
                    parity: freed_phase,
                })];
                if plan.lag > 0 {
                    // Iteration 0 holds no earlier group; its refill goes
                    // to a stage never used.
                    let held = self.bin(BinaryOp::Ge, freed, lit_i32(0))?;
                    leader = self.bin(BinaryOp::And, leader, held.clone())?;
                    wait = vec![self.stmt(StmtKind::If {
                        cond: held,
                        then_body: wait,
                        else_body: None,
                    })];
                }
                inner.push(self.stmt(StmtKind::If {
                    cond: leader,
                    then_body: vec![self.stmt(StmtKind::MbarrierArrive {
                        bar: empty,
                        index: freed_stage.clone(),
                        tx: None,
                    })],
                    else_body: None,
                }));
                refill_wait = wait;
            }
            None => self.barrier(&mut inner),
        }
        if specialized {
            // The producer refills; the consumers' loop ends here.
            let empty_bar = empty.map(|(e, _)| e).unwrap_or(bar);
            let (sv, nv) = (s0.clone(), n.clone());
            let mut issue = |me: &mut Self, stage: Expr, into: &mut Vec<Stmt>| {
                me.tma_issue(body, plan, loads, stage, bar, into)
            };
            let producer =
                self.producer_loop((var, start, extent), (&sv, &nv), st, empty_bar, &mut issue)?;
            self.vars.insert(var, loop_binding);
            for (stage, phase) in pairs {
                self.step_stage(stage, phase, st, &mut inner)?;
            }
            if let Some(ws) = &mut self.ws {
                ws.producer = Some(producer);
                ws.consumer_loop = Some(loop_reg);
            }
            let gemms = consumers
                .stmts
                .iter()
                .filter(|s| matches!(s, ir::Stmt::Gemm { .. }))
                .count();
            let mut middle = self.middle(var, &inner, consumed);
            if gemms >= 2 {
                // Turns only where every iteration issues its gemms: the
                // loop, or a rotated loop's middle.
                match &mut middle {
                    Some(m) => self.ping_pong(&mut m.body, out)?,
                    None => self.ping_pong(&mut inner, out)?,
                }
            }
            self.close_pipe_loop((loop_reg, s0, n, inner), middle, plan, out)?;
            self.pending.union(&acc);
            return Ok(());
        }
        // Iteration i + dist into the stage iteration i − lag read.
        let ahead = self.bin(BinaryOp::Add, rel, lit_i32(dist))?;
        let it = self.bin(BinaryOp::Add, reg_expr(loop_reg, DType::I32), lit_i32(dist))?;
        self.vars.insert(var, as_var(it));
        // `(r + dist) mod s = (r − lag) mod s`: the freed stage.
        let mut issue = refill_wait;
        self.tma_issue(body, plan, loads, freed_stage, bar, &mut issue)?;
        let more = self.bin(BinaryOp::Lt, ahead, n.clone())?;
        inner.push(self.stmt(StmtKind::If {
            cond: self.bin(BinaryOp::And, first, more)?,
            then_body: issue,
            else_body: None,
        }));
        self.vars.insert(var, loop_binding);
        for (stage, phase) in pairs {
            self.step_stage(stage, phase, st, &mut inner)?;
        }
        let middle = self.middle(var, &inner, consumed);
        self.close_pipe_loop((loop_reg, s0, n, inner), middle, plan, out)?;
        self.pending.union(&acc);
        Ok(())
    }

    /// Moves a (stage, parity) pair of registers to the next iteration:
    /// the parity flips when the stage wraps from `stages − 1` to 0.
    pub(super) fn step_stage(
        &self,
        stage: super::RegId,
        phase: super::RegId,
        stages: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let s = reg_expr(stage, DType::I32);
        let p = reg_expr(phase, DType::I32);
        let wraps = self.bin(BinaryOp::Eq, s, lit_i32(stages - 1))?;
        let flipped = self.bin(BinaryOp::BitXor, p.clone(), lit_i32(1))?;
        let next_phase =
            Expr::select(wraps, flipped, p).map_err(|e| self.malformed(e.to_string()))?;
        self.assign(out, phase, next_phase);
        let next_stage = self.rotated(stage, stages)?;
        self.assign(out, stage, next_stage);
        Ok(())
    }

    /// A new shared buffer of `len` phased barriers.
    fn barrier_buffer(&mut self, name: &str, len: i64) -> SharedId {
        let name = self.claim(name);
        let id = SharedId(self.shared.len() as u32);
        self.shared.push(SharedBuffer {
            name,
            dtype: DType::U64,
            len: len as u64,
            align: 8,
        });
        id
    }

    /// `thread_idx == 0`.
    fn first_thread(&self) -> Result<Expr> {
        self.bin(BinaryOp::Eq, Expr::special(Special::ThreadIdx), lit_i32(0))
    }

    /// The bulk copies of the iteration the loop variable is bound to into
    /// `stage`: the stage's `expect_tx`, then every producer's boxes.
    fn tma_issue(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        loads: &[TmaProducer],
        stage: Expr,
        bar: SharedId,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let mut bytes = 0i64;
        let mut copies = Vec::new();
        for (&(i, _), load) in plan.producers.iter().zip(loads) {
            let ir::Stmt::Copy { src, dst } = &body.stmts[i] else {
                return Err(self.malformed("a pipeline producer is not a copy"));
            };
            let map = load
                .map
                .ok_or_else(|| self.malformed("a bulk-copy producer without a tensor map"))?;
            let span = body.spans.get(i).copied().unwrap_or(self.span);
            let saved = std::mem::replace(&mut self.span, span);
            let size = self.staged.get(&dst.buffer).map_or(0, |&(s, _)| s);
            let base = self.bin(BinaryOp::Mul, stage.clone(), lit_i32(size))?;
            self.stage_base.insert(dst.buffer, (base, size));
            let r = self.tma_boxes(src, dst.buffer, load, map, &stage, bar, &mut copies);
            self.stage_base.remove(&dst.buffer);
            self.span = saved;
            r?;
            let elem = self.f.buffers[dst.buffer].dtype.bytes() as i64;
            bytes +=
                load.panels * load.box_dims.iter().map(|&d| i64::from(d)).product::<i64>() * elem;
        }
        out.push(self.stmt(StmtKind::MbarrierArrive {
            bar,
            index: stage,
            tx: Some(lit_i32(bytes)),
        }));
        out.append(&mut copies);
        Ok(())
    }

    /// One producer's boxes, one per panel.
    #[allow(clippy::too_many_arguments)]
    fn tma_boxes(
        &mut self,
        src: &Region,
        dst: Handle<ir::Buffer>,
        load: &TmaProducer,
        map: TensorMapId,
        stage: &Expr,
        bar: SharedId,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (starts, _) = self.region(src, out)?;
        for p in 0..load.panels {
            let col = p * load.panel_cols;
            let origin = [
                Index {
                    expr: lit_i32(0),
                    range: Some((0, 0)),
                },
                Index {
                    expr: lit_i32(col),
                    range: Some((col, col)),
                },
            ];
            let (to, dst_index, _) = self.address(dst, &origin)?;
            let thread::MemRef::Shared(dst_id) = to else {
                return Err(self.malformed("a bulk copy into a buffer outside shared memory"));
            };
            let mut coords: Vec<Expr> = starts.iter().map(|s| s.expr.clone()).collect();
            if let Some(last) = coords.last_mut() {
                *last = self.bin(BinaryOp::Add, last.clone(), lit_i32(col))?;
            }
            out.push(self.stmt(StmtKind::TmaLoad {
                map,
                dst: dst_id,
                dst_index,
                coords,
                bar,
                bar_index: stage.clone(),
            }));
        }
        Ok(())
    }
}
