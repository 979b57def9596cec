//! Software pipelining of `T.Pipelined` loops: with per-thread
//! asynchronous copies (cp.async and its kin) where the target has them,
//! through registers otherwise.
//!
//! # Which loops
//! A `for` of the kernel's uniform code with `T.Pipelined(num_stages =
//! s)`, `s ≥ 2`, is pipelined when (lists: "Order and stage lists"
//! below):
//! - its body starts with one or more *producers*: `copy` statements from a
//!   region of a global buffer to the whole of a shared buffer of the same
//!   element type, which a vector copy moves in chunks (the width rule of
//!   `copy.rs`) whose byte size the target's per-thread global → shared
//!   async copies with commit groups take, when it has them. With async
//!   copies, a later copy of that kind is a producer too when no statement
//!   before it in the body touches its destination and its source region's
//!   bounds read no memory and no variable bound in the body: issuing it at
//!   the top of the iteration then loads the same tile (attention's `V`
//!   tile, copied after the scores are computed, is one);
//! - the rest of the body (the *consumers*) reads those shared buffers
//!   (loads, `copy` sources, `gemm` operands) but never writes them, and
//!   does not `reduce` or `cumsum` them;
//! - the shared buffers are used nowhere else in the kernel.
//!
//! # Code with async copies
//! Each such buffer gets `s` stages in shared memory; stage `j` starts at
//! element `j · size`. With the loop running `i = a .. a + n`:
//! - prologue: for `j < s − 1`, the producers of iteration `a + j` are
//!   issued as async copies into stage `j` (under `if j < n`), then one
//!   `commit_group` (always, so that group counts stay uniform);
//! - iteration `i`: `wait_group s − 2` (the copies of iteration `i` have
//!   landed: `i − a + s − 1` groups were committed, at most `s − 2` may be
//!   pending), a `barrier` (every thread's copies are visible, and every
//!   thread has finished the consumers of iteration `i − 1`, whose stage
//!   the next copies overwrite), the producers of iteration `i + s − 1`
//!   into stage `(i − a + s − 1) mod s`, one `commit_group`, then the
//!   consumers reading stage `(i − a) mod s`;
//! - after the loop, `wait_group 0`.
//!
//! For a power of two `s` the two stage numbers are masks of the
//! iteration number; otherwise they live in registers (`%fill_stage`,
//! `%read_stage`) that step by one, wrapping at `s`, at the end of every
//! iteration, so the loop divides nothing. The copies of the last `s − 1` iterations,
//! which would load tiles past the end, are not skipped by a branch: each
//! copy's guard also requires `i − a + s − 1 < n`, and where it fails the
//! copy reads nothing and zero-fills its destination, a stage no later
//! consumer reads. Without the branch the copies and the consumers'
//! first shared loads form one block that the assembler can schedule.
//!
//! When tiles are loaded two or more iterations ahead (`s ≥ 3`; `s ≥ 4`
//! with a gemm left in flight, below) the copies and their `commit_group`
//! go after the consumers instead of before them: the stage they fill was
//! last read in iteration `i − 1` (or retired there), so the barrier at
//! the top of iteration `i` still orders them, and the consumers' first
//! shared loads no longer wait behind the copies' address arithmetic
//! after the barrier (the assembler keeps shared loads after async
//! copies into shared memory, whose addresses it cannot tell apart). The
//! copies then overlap the consumers' matrix operations still in flight
//! and the next iteration's wait; they are issued one iteration's
//! consumers later than before, which leaves `s − 2` iterations of
//! lookahead. Measured on the H200 with `mma.sync` (`bench/RESULTS.md`):
//! 4–8% faster on each of six 8192³ fp16 configurations with 3 to 6
//! stages.
//!
//! When the consumers are one gemm on `ldmatrix` fragments (and no gemm
//! group stays in flight), `prefetch.rs` moves the wait and barrier from
//! the top of the iteration to before its last k-step's `mma`s and loads
//! the next stage's first fragments there, into second fragment buffers.
//!
//! When the consumers are exactly one `gemm` through a shared-operand
//! atom (`swizzle.rs`) with a literal false `clear_accum`, and `s ≥ 3`,
//! the gemm's `async_mma` group is left in flight (`async_mma_wait 1`
//! instead of 0), so the tensor cores work through the next iteration's
//! wait, barrier and copy issue. Its stage is then still being read
//! during the next iteration, so tiles are loaded `s − 2` iterations
//! ahead instead of `s − 1` (prologue of `s − 2` tiles, `wait_group s −
//! 3`): the stage iteration `i` overwrites is the one of iteration `i −
//! 2`, whose group every thread retired before this iteration's barrier.
//! After the loop, `async_mma_wait 0` retires the last group. (The SIMT
//! interpreter keeps an `async_mma`'s operands marked until it is retired,
//! so loading `s − 1` ahead here fails there with "write during async
//! mma"; that was tried.)
//!
//! Elements of a producer's source region outside its buffer are filled
//! with zeros by the copy itself (`else zero`), as the reference does for
//! tile ops. The async writes are ordered by the barriers above, so the
//! barrier analysis does not track them; the barrier at the top of every
//! iteration also orders everything the consumers of one iteration leave
//! pending against the next.
//!
//! # Without async copies
//! On a target without them (gfx942, Apple GPUs) the same loops are
//! pipelined through registers, with two shared stages whatever
//! `num_stages` says: the prologue loads iteration `a`'s tiles into
//! registers and stores them into stage 0; iteration `i` passes a barrier,
//! loads the tiles of iteration `i + 1` from global memory into registers
//! (their latency overlaps the consumers), runs the consumers on stage
//! `(i − a) mod 2`, and stores the registers into the other stage (all
//! under `if i − a + 1 < n`). The barrier at the top of the next iteration
//! orders those stores before their readers, and every reader of the
//! overwritten stage finished before this iteration's barrier. A producer
//! whose registers would exceed 64 per thread stops the producer list.
//!
//! # Order and stage lists
//! `T.Pipelined(n, num_stages = s, order = [...], stage = [...])` gives
//! every statement of the body a stage `σ` (iteration `i` runs it for the
//! data of iteration `i + D − σ`, `D` the largest stage) and an issue
//! order. The lowering follows lists of this form (`ir::lists`,
//! `ListForm::Staged`): every stage is 0 or `D ≥ 1`; the statements of
//! stage 0 are producers as above (each must qualify, a later one under
//! the rule for later copies, else the loop is planned as without lists),
//! those of stage `D` the consumers; `D + 1 ≤ s` (and within a stage cap
//! of a retry, else the lists are dropped). The producers then run `D`
//! iterations ahead, which is the scheme above with `D + 1` stages (never
//! a gemm group left in flight). An `order` list that ranks every producer before every
//! consumer issues the per-thread async copies before the consumers, one
//! that ranks them all after, after them, whatever the lookahead rule
//! would pick; one that ranks them among the consumers leaves it to the
//! rule (every copy of an iteration completes at the same wait, so only
//! the issue point differs). Rotated lists (`ListForm::Rotated`) were
//! written out before (`rotate.rs`) as a loop without lists. Every other
//! form — producers at a negative stage with one consumer stage
//! (`ListForm::Producers`, the loop without lists), or lists the lowering
//! does not follow (`ListForm::Default`: consumers at several stages
//! without negative producers, a rotation that would reorder dependent
//! statements, a `D` the `s` stages cannot buffer, `order` without
//! `stage`) — is planned as if the loop had no lists; the front end warns
//! about the latter, and `tilec verify` checks the schedule such lists
//! ask for.
//!
//! # Rotated loops
//! A loop `rotate.rs` rotated has its consumers under guards that hold in
//! every iteration but the first and last `D` (the rotation's depth).
//! Where the copies are asynchronous (per-thread or bulk), the loop is
//! lowered once, as above, and its iteration emitted twice: as lowered,
//! and with the guards among the consumers replaced by what they guard
//! (their lowered conditions are recorded when the guards are lowered).
//! The loop over `r ∈ [0, n)` (rotated iterations) then becomes three
//! loops over the same pipeline, `[0, min(D, n))` and `[max(min(D, n),
//! n − D), n)` with the guards and `[D, n − D)` without: every iteration
//! once, in order, for any `n`, and registers (stage counters, parities)
//! carry from one loop to the next as from one iteration to the next.
//! Each copy binds fresh loop registers. The choices that depend on the
//! consumers' form are made on the middle's: group releases of the bulk
//! stages and the producer warp group (`ws.rs`; every iteration releases
//! its stage, since every gemm has retired by the end of it), and the
//! consumer warpgroups' ping-pong turns, taken in the middle only (both
//! groups skip them in the other loops alike, so the turns stay paired).
//! The fragment-prefetch split (`prefetch.rs`) is not applied: a guarded
//! body does not have its shape. Without async copies the rotated loop
//! runs as one loop with its guards.
//!
//! A loop that does not qualify is lowered as a serial loop, as before.

use std::collections::HashSet;

use super::prefetch::substitute_assign;
use super::{
    BinaryOp, DType, Expr, ExprKind, Guard, GuardElse, Handle, Index, Lower, MemRef, Pending,
    Result, Stmt, StmtKind, Unroll, ir, lit_i32, non_unit, reg_expr, to_i32,
};
use crate::ir::{LoopKind, Region, Scope};
use crate::target::AsyncCopy;
use crate::thread::visit;

/// Most registers per thread one producer's prefetch may take.
const MAX_PREFETCH_SLOTS: i64 = 64;

/// The common start of a pipelined loop's lowering ([`Lower::pipe_loop`]).
pub(super) struct PipeLoop {
    /// The first iteration and the trip count, as `i32`.
    pub(super) s0: Expr,
    pub(super) n: Expr,
    /// The body's shared accesses.
    pub(super) acc: Pending,
    /// The loop variable's type.
    pub(super) vdtype: DType,
}

/// An `i32` iteration value as the loop variable's type.
pub(super) fn as_loop_var(vdtype: DType, e: Expr) -> Expr {
    if vdtype == DType::I32 {
        e
    } else {
        Expr::cast(vdtype, e)
    }
}

/// The middle iterations of a rotated loop (`Lower::close_pipe_loop`).
pub(super) struct Middle {
    /// The rotation's depth: iterations run over the guarded body at
    /// each end.
    pub(super) depth: i64,
    /// The loop body without the guards.
    pub(super) body: Vec<Stmt>,
}

/// A `T.Pipelined` loop chosen for pipelining.
#[derive(Clone, Debug)]
pub(super) struct PipePlan {
    /// Shared-memory stages per staged buffer.
    pub(super) stages: i64,
    /// Async copies (`true`), or prefetching through registers.
    pub(super) asynchronous: bool,
    /// The leading producer copies of the body, with their vector widths.
    pub(super) producers: Vec<(usize, i64)>,
    /// Iterations the consumers' shared-operand gemm stays in flight
    /// after its iteration ends (0 or 1; module documentation).
    pub(super) lag: i64,
    /// Bulk copies instead of per-thread ones, one entry per producer
    /// (`tma.rs`).
    pub(super) tma: Option<Vec<super::tma::TmaProducer>>,
    /// Whether per-thread async copies go after the consumers, when an
    /// `order` list says; `None` leaves it to the lookahead rule.
    pub(super) late: Option<bool>,
}

impl Lower<'_> {
    /// The async copy chunk sizes (bytes) of the target's per-thread
    /// global → shared copies with commit groups.
    pub(super) fn async_sizes(&self) -> Vec<u32> {
        self.target
            .async_copies
            .iter()
            .filter_map(|c| match c {
                AsyncCopy::PerThread(p)
                    if p.commit_groups && p.from == "global" && p.to == "shared" =>
                {
                    Some(p.sizes_bytes.clone())
                }
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Picks the loops of the kernel body to pipeline (module
    /// documentation) and marks their staged buffers.
    pub(super) fn find_pipelines(&mut self, body: &ir::Block) {
        let sizes = self.async_sizes();
        let mut loops = Vec::new();
        collect_pipelined(body, &mut loops);
        for (var, stmt) in loops {
            // Loops whose schedule the IR pins are pipelined (or not) as
            // pinned, whatever this attempt's retries turned off.
            let pinned = self.pins.schedule(var);
            if pinned.is_none() && !self.pipelining {
                continue;
            }
            // Lists whose producers do not qualify leave the loop as
            // without lists (module documentation).
            let has_lists = matches!(
                stmt,
                ir::Stmt::For {
                    kind: LoopKind::Pipelined { order, stage, .. },
                    ..
                } if order.is_some() || stage.is_some()
            );
            let plan = self
                .pipeline_plan(body, stmt, &sizes, pinned, true)
                .or_else(|| {
                    has_lists
                        .then(|| self.pipeline_plan(body, stmt, &sizes, pinned, false))
                        .flatten()
                });
            if let Some((mut plan, staged)) = plan {
                if let Some(loads) = &mut plan.tma {
                    for load in loads.iter_mut() {
                        load.map = Some(self.tensor_map(load));
                    }
                }
                for b in staged {
                    let size = self
                        .f
                        .const_shape(b)
                        .map_or(0, |s| self.physical_len(b, &s));
                    self.staged.insert(b, (size, plan.stages));
                }
                self.pipelines.insert(var, plan);
            }
        }
    }

    /// The plan of one loop, following its lists when `lists` is set.
    fn pipeline_plan(
        &self,
        kernel_body: &ir::Block,
        stmt: &ir::Stmt,
        sizes: &[u32],
        pinned: Option<ir::PipelineSchedule>,
        lists: bool,
    ) -> Option<(PipePlan, Vec<Handle<ir::Buffer>>)> {
        let f = self.f;
        let ir::Stmt::For {
            kind: LoopKind::Pipelined { num_stages, .. },
            body,
            ..
        } = stmt
        else {
            return None;
        };
        // Explicit lists (module documentation, "Order and stage lists"):
        // the staged form is taken as asked; the others run as without
        // lists (`ir::lists`).
        let listed = match ir::lists::loop_form(stmt, f) {
            Some(ir::lists::ListForm::Staged(staged)) if lists => Some(staged),
            _ => None,
        };
        // A retry that caps the stages below the lists' depth runs the
        // loop as without lists.
        let listed = listed.filter(|l| self.stage_cap.is_none_or(|c| l.depth < c));
        let default_stages = match &listed {
            Some(l) => l.depth + 1,
            None => i64::from(*num_stages).min(self.stage_cap.unwrap_or(i64::MAX)),
        };
        let stages = match pinned {
            None => default_stages,
            Some(ir::PipelineSchedule::Serial) => return None,
            Some(
                ir::PipelineSchedule::Async { stages } | ir::PipelineSchedule::Bulk { stages, .. },
            ) => i64::from(stages),
            Some(ir::PipelineSchedule::Registers) => 2,
        };
        if stages < 2 {
            return None;
        }
        // Buffers used anywhere else in the kernel cannot be staged.
        let mut outside = HashSet::new();
        buffers_outside(kernel_body, stmt, &mut outside, f);
        let mut producers = Vec::new();
        let mut staged = Vec::new();
        let mut leading = true;
        let mut bound = HashSet::new();
        bound_vars(body, &mut bound);
        for (i, s) in body.stmts.iter().enumerate() {
            // With lists, the statements of stage 0 are the producers, and
            // each must qualify.
            let listed_producer = listed.as_ref().map(|l| l.stage[i] == 0);
            if listed_producer == Some(false) {
                leading = false;
                continue;
            }
            let ir::Stmt::Copy { src, dst } = s else {
                if listed_producer == Some(true) {
                    return None;
                }
                leading = false;
                continue;
            };
            let Some(w) = self.producer_width(src, dst, &staged, &outside, sizes) else {
                if listed_producer == Some(true) {
                    return None;
                }
                leading = false;
                continue;
            };
            if !leading {
                // A later copy is a producer too when moving it to the top
                // of the iteration changes nothing (module documentation).
                let before = ir::Block {
                    stmts: body.stmts[..i].to_vec(),
                    spans: Vec::new(),
                };
                let mut touched = HashSet::new();
                buffers_outside(&before, s, &mut touched, f);
                if sizes.is_empty()
                    || touched.contains(&dst.buffer)
                    || !region_invariant(src, &bound, f)
                {
                    if listed_producer == Some(true) {
                        return None;
                    }
                    continue;
                }
            }
            producers.push((i, w));
            staged.push(dst.buffer);
        }
        if producers.is_empty() {
            return None;
        }
        let staged_set: HashSet<Handle<ir::Buffer>> = staged.iter().copied().collect();
        // Consumers only read the staged buffers, in ways whose addresses
        // go through the stage base.
        let consumers = consumers_of(body, &producers);
        if !consumers_only_read(&consumers, &staged_set) {
            return None;
        }
        let asynchronous = !sizes.is_empty();
        let stages = if asynchronous { stages } else { 2 };
        // One shared-operand gemm as the only consumer may overlap the
        // next iteration's barrier and copies (module documentation).
        let lag = match &consumers.stmts[..] {
            [ir::Stmt::Gemm { clear_accum, .. }]
                if asynchronous
                    && listed.is_none()
                    && stages >= 3
                    && self.async_atom.is_some()
                    && f.as_literal(*clear_accum)
                        .is_some_and(|l| l.as_f64() == 0.0) =>
            {
                1
            }
            _ => 0,
        };
        // Bulk copies when every producer takes them (`tma.rs`).
        let tma = if asynchronous {
            plan_producers(body, &producers)
                .map(|(src, dst)| self.tma_producer(src, dst))
                .collect::<Option<Vec<_>>>()
        } else {
            None
        };
        Some((
            PipePlan {
                stages,
                asynchronous,
                producers,
                lag,
                tma,
                late: listed.and_then(|l| l.late),
            },
            staged,
        ))
    }

    /// The vector width of a copy that can be a producer (module
    /// documentation, "Which loops"), or `None`.
    fn producer_width(
        &self,
        src: &Region,
        dst: &Region,
        staged: &[Handle<ir::Buffer>],
        outside: &HashSet<Handle<ir::Buffer>>,
        sizes: &[u32],
    ) -> Option<i64> {
        let f = self.f;
        let (sb, db) = (&f.buffers[src.buffer], &f.buffers[dst.buffer]);
        if sb.scope != Scope::Global
            || db.scope != Scope::Shared
            || sb.dtype != db.dtype
            || !self.whole(dst)
            || staged.contains(&dst.buffer)
            || outside.contains(&dst.buffer)
        {
            return None;
        }
        let w = self.async_width(src, dst)?;
        let bytes = w * db.dtype.bytes() as i64;
        if !sizes.is_empty() && !sizes.iter().any(|&s| i64::from(s) == bytes) {
            return None;
        }
        if sizes.is_empty() && self.prefetch_slots(dst.buffer, w) > MAX_PREFETCH_SLOTS {
            return None;
        }
        Some(w)
    }

    /// The vector width of a producer copy, from the width rule of
    /// `copy.rs` (the shared buffer is not allocated yet: its dimensions
    /// come from its shape).
    fn async_width(&self, src: &Region, dst: &Region) -> Option<i64> {
        let f = self.f;
        let sext: Vec<i64> = src
            .ranges
            .iter()
            .map(|r| f.as_const_int(r.extent))
            .collect::<Option<_>>()?;
        let dshape = f.const_shape(dst.buffer)?;
        if non_unit(&sext) != non_unit(&dshape) || sext.last() != dshape.last() {
            return None;
        }
        let smults: Vec<i64> = src.ranges.iter().map(|r| self.multiple(r.start)).collect();
        let ws = self.region_width(src.buffer, &smults, &sext);
        let last = *dshape.last()?;
        let mut wd = self
            .vector_limit(true, f.buffers[dst.buffer].dtype)
            .min(self.map_vector(dst.buffer));
        while wd > 1 && last % wd != 0 {
            wd /= 2;
        }
        Some(ws.min(wd))
    }

    /// Registers per thread that prefetching a tile of `b` in vectors of
    /// `w` takes.
    fn prefetch_slots(&self, b: Handle<ir::Buffer>, w: i64) -> i64 {
        let count: i64 = self.f.const_shape(b).map_or(0, |s| s.iter().product());
        let vectors = count / w.max(1);
        (vectors + self.threads - 1) / self.threads * w
    }

    /// A pipelined loop (module documentation).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pipelined_for(
        &mut self,
        var: Handle<ir::Var>,
        start: Handle<ir::Expr>,
        extent: Handle<ir::Expr>,
        body: &ir::Block,
        plan: &PipePlan,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        if !plan.asynchronous {
            return self.prefetched_for(var, start, extent, body, plan, out);
        }
        if let Some(loads) = &plan.tma {
            return self.tma_for(var, start, extent, body, plan, loads, out);
        }
        let PipeLoop { s0, n, acc, vdtype } = self.pipe_loop(var, start, extent, body, out)?;
        let as_var = |e: Expr| as_loop_var(vdtype, e);
        let st = plan.stages;
        let (loop_reg, prologue) = self.loop_var(var, start, extent)?;
        let loop_binding = self.vars[&var].clone();
        // Tiles are loaded `ahead` iterations early: one fewer when the
        // consumers' gemm stays in flight for an iteration.
        let dist = st - 1 - plan.lag;
        // Prologue: iterations s0 .. s0 + dist into stages 0 .. dist.
        for j in 0..dist {
            let it = self.bin(BinaryOp::Add, s0.clone(), lit_i32(j))?;
            self.vars.insert(var, as_var(it));
            let mut issue = Vec::new();
            self.issue_producers(body, plan, lit_i32(j), None, &mut issue)?;
            out.push(self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, lit_i32(j), n.clone())?,
                then_body: issue,
                else_body: None,
            }));
            out.push(self.stmt(StmtKind::CommitGroup));
        }
        self.vars.insert(var, loop_binding.clone());
        // The stage the copies fill and the stage the consumers read: for
        // a power of two `st`, masks of the iteration number; otherwise
        // registers stepped at the end of every iteration (no division).
        let rel = self.bin(BinaryOp::Sub, reg_expr(loop_reg, DType::I32), s0.clone())?;
        let ahead = self.bin(BinaryOp::Add, rel.clone(), lit_i32(dist))?;
        let stepped = !(st as u64).is_power_of_two();
        let (fill_stage, read_stage, stepped_regs) = if stepped {
            let fill = self.temp("fill_stage", DType::I32);
            self.assign(out, fill, lit_i32(dist % st));
            let read = self.temp("read_stage", DType::I32);
            self.assign(out, read, lit_i32(0));
            let regs = vec![fill, read];
            (reg_expr(fill, DType::I32), reg_expr(read, DType::I32), regs)
        } else {
            let fill = self.bin(BinaryOp::FloorMod, ahead.clone(), lit_i32(st))?;
            let read = self.bin(BinaryOp::FloorMod, rel, lit_i32(st))?;
            (fill, read, Vec::new())
        };
        // The consumers, lowered first: with their k-step loop split for
        // fragment prefetch (`prefetch.rs`) the wait and barrier move from
        // the top of the iteration to before its last k-step's `mma`s.
        // (They run after a barrier either way.)
        self.pending = Pending::default();
        self.async_lag = plan.lag > 0;
        let mut consumers = Vec::new();
        let r = self.consumers_in_stage(body, plan, read_stage, &mut consumers);
        self.async_lag = false;
        r?;
        let split = (plan.lag == 0 && vdtype == DType::I32 && prologue.is_empty())
            .then(|| self.k_steps(&consumers))
            .flatten();
        let mut inner = prologue;
        // Where the consumers land in `inner` (a rotated loop's guards are
        // among them).
        let mut consumed = 0..0;
        let wait = self.stmt(StmtKind::WaitGroup {
            pending: (dist - 1) as u32,
        });
        if let Some(split) = &split {
            // The first iteration's wait, barrier and step-0 loads.
            let mut first = vec![wait.clone()];
            self.barrier(&mut first);
            let loop_r = loop_reg;
            first.extend(split.pre.iter().map(|s| substitute_assign(s, loop_r, &s0)));
            first.extend(split.steps[0].0.iter().cloned());
            match n.as_const_int() {
                Some(c) if c >= 1 => out.extend(first),
                _ => out.push(self.stmt(StmtKind::If {
                    cond: self.bin(BinaryOp::Lt, lit_i32(0), n.clone())?,
                    then_body: first,
                    else_body: None,
                })),
            }
        } else {
            inner.push(wait.clone());
            self.barrier(&mut inner);
        }
        // Prefetch iteration i + dist, as copies that zero-fill instead of
        // reading once i + dist is past the end: no branch around them.
        let more = self.bin(BinaryOp::Lt, ahead, n.clone())?;
        let more = self.kept(more, &mut inner);
        let it = self.bin(BinaryOp::Add, reg_expr(loop_reg, DType::I32), lit_i32(dist))?;
        self.vars.insert(var, as_var(it));
        // Loaded two or more iterations ahead, the copies go after the
        // consumers (module documentation).
        let late = plan.late.unwrap_or(dist >= 2);
        let mut issue = Vec::new();
        self.issue_producers(body, plan, fill_stage, Some(&more), &mut issue)?;
        if !late {
            inner.append(&mut issue);
            inner.push(self.stmt(StmtKind::CommitGroup));
        }
        self.vars.insert(var, loop_binding);
        match &split {
            Some(split) => {
                let k = split.steps.len();
                for j in 0..k - 1 {
                    inner.extend(split.steps[j + 1].0.iter().cloned());
                    inner.extend(split.steps[j].1.iter().cloned());
                }
            }
            None => {
                consumed = inner.len()..inner.len() + consumers.len();
                inner.append(&mut consumers);
            }
        }
        if late {
            inner.append(&mut issue);
            inner.push(self.stmt(StmtKind::CommitGroup));
        }
        for reg in stepped_regs {
            let next = self.rotated(reg, st)?;
            self.assign(&mut inner, reg, next);
        }
        if let Some(split) = &split {
            // The top of the next iteration, then this one's last step.
            inner.push(wait);
            self.barrier(&mut inner);
            let next = self.bin(BinaryOp::Add, reg_expr(loop_reg, DType::I32), lit_i32(1))?;
            inner.extend(
                split
                    .pre
                    .iter()
                    .map(|s| substitute_assign(s, loop_reg, &next)),
            );
            inner.extend(split.steps[0].0.iter().cloned());
            let k = split.steps.len();
            inner.extend(split.steps[k - 1].1.iter().cloned());
        }
        let middle = self.middle(var, &inner, consumed);
        self.close_pipe_loop((loop_reg, s0, n, inner), middle, plan, out)?;
        out.push(self.stmt(StmtKind::WaitGroup { pending: 0 }));
        self.pending.union(&acc);
        Ok(())
    }

    /// `(reg + 1) mod stages` for a register holding a stage number,
    /// without a division.
    pub(super) fn rotated(&self, reg: super::RegId, stages: i64) -> Result<Expr> {
        let r = reg_expr(reg, DType::I32);
        let last = self.bin(BinaryOp::Eq, r.clone(), lit_i32(stages - 1))?;
        let next = self.bin(BinaryOp::Add, r, lit_i32(1))?;
        Expr::select(last, lit_i32(0), next).map_err(|e| self.malformed(e.to_string()))
    }

    /// What every form of a pipelined loop starts with: the start and
    /// trip count read once (kept in registers unless literal) and the
    /// shared accesses of the body, which stay pending after the loop.
    pub(super) fn pipe_loop(
        &mut self,
        var: Handle<ir::Var>,
        start: Handle<ir::Expr>,
        extent: Handle<ir::Expr>,
        body: &ir::Block,
        out: &mut Vec<Stmt>,
    ) -> Result<PipeLoop> {
        self.uniform_reads(&[start, extent], out);
        let s0 = to_i32(self.expr(start, out)?);
        let n = to_i32(self.expr(extent, out)?);
        let s0 = self.kept(s0, out);
        let n = self.kept(n, out);
        let mut acc = Pending::default();
        self.block_accesses(body, &mut acc);
        Ok(PipeLoop {
            s0,
            n,
            acc,
            vdtype: self.f.vars[var].dtype,
        })
    }

    /// The loop `loop_reg` from `s0`, `n` times, over `inner`; for a
    /// rotated loop (`middle`), its first and last `depth` iterations over
    /// `inner` and those between over the middle's body (module
    /// documentation, "Rotated loops"). After it, the wait that retires a
    /// gemm group the loop left in flight.
    pub(super) fn close_pipe_loop(
        &mut self,
        (loop_reg, s0, n, inner): (super::RegId, Expr, Expr, Vec<Stmt>),
        middle: Option<Middle>,
        plan: &PipePlan,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let for_stmt = |me: &Self, var, start, count, body| {
            me.stmt(StmtKind::For {
                var,
                start,
                count,
                step: lit_i32(1),
                unroll: Unroll::None,
                body,
            })
        };
        match middle {
            None => out.push(for_stmt(self, loop_reg, s0, n, inner)),
            Some(Middle { depth, mut body }) => {
                // Iterations [0, min(D, n)), [D, n − D), [max(min(D, n),
                // n − D), n): every iteration once, in order, whatever n.
                let d = lit_i32(depth);
                let head = self.bin(BinaryOp::Min, d.clone(), n.clone())?;
                let mid_start = self.bin(BinaryOp::Add, s0.clone(), d.clone())?;
                let mid_count = self.bin(BinaryOp::Sub, n.clone(), lit_i32(2 * depth))?;
                let before_tail = self.bin(BinaryOp::Sub, n.clone(), d)?;
                let skipped = self.bin(BinaryOp::Max, head.clone(), before_tail)?;
                let tail_start = self.bin(BinaryOp::Add, s0.clone(), skipped.clone())?;
                let tail_count = self.bin(BinaryOp::Sub, n, skipped)?;
                let mut tail = inner.clone();
                // Every loop binds a register of its own.
                let mid_reg = self.rebound(loop_reg, "_mid", &mut body);
                let tail_reg = self.rebound(loop_reg, "_tail", &mut tail);
                out.push(for_stmt(self, loop_reg, s0, head, inner));
                out.push(for_stmt(self, mid_reg, mid_start, mid_count, body));
                out.push(for_stmt(self, tail_reg, tail_start, tail_count, tail));
            }
        }
        if plan.lag > 0 {
            out.push(self.stmt(StmtKind::AsyncMmaWait { pending: 0 }));
        }
        Ok(())
    }

    /// A fresh loop register for a copy of the loop `reg` binds, whose
    /// body is `body`: the register is renamed in `body`, and so is every
    /// loop register nested in it.
    fn rebound(&mut self, reg: super::RegId, suffix: &str, body: &mut [Stmt]) -> super::RegId {
        let old = &self.registers[reg.index()];
        let (name, dtype, kind) = (old.name.clone(), old.dtype, old.kind);
        let name = self.fresh(&format!("{name}{suffix}"));
        let new = self.add_reg(name, dtype, kind);
        visit::rename_reg(body, reg, new);
        for s in body.iter_mut() {
            self.rebind_nested(s);
        }
        new
    }

    /// Gives every loop inside `s` (and `s`, if a loop) a fresh register.
    fn rebind_nested(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::For { var, body, .. } => *var = self.rebound(*var, "", body),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                for t in then_body.iter_mut().chain(else_body.iter_mut().flatten()) {
                    self.rebind_nested(t);
                }
            }
            _ => {}
        }
    }

    /// The middle of a rotated loop over `var` (`rotate.rs`, "Peeling")
    /// whose iteration is lowered as `inner`: the same statements with the
    /// guards among the consumers (`consumed`, a range of `inner`)
    /// replaced by what they guard. `None` for a loop not rotated.
    pub(super) fn middle(
        &self,
        var: Handle<ir::Var>,
        inner: &[Stmt],
        consumed: std::ops::Range<usize>,
    ) -> Option<Middle> {
        let peel = self.peels.get(&var)?;
        let mut body = Vec::with_capacity(inner.len());
        for (i, s) in inner.iter().enumerate() {
            match &s.kind {
                StmtKind::If {
                    cond,
                    then_body,
                    else_body: None,
                } if consumed.contains(&i) && self.guard_conds.contains(cond) => {
                    body.extend(then_body.iter().cloned());
                }
                _ => body.push(s.clone()),
            }
        }
        Some(Middle {
            depth: peel.depth,
            body,
        })
    }

    /// The body a rotated loop's middle iterations run (`rotate.rs`,
    /// "Peeling"), at the Tile IR level: what the choices that depend on
    /// the consumers' form (group releases, a producer warp group) are
    /// made on. `body` itself for any other loop.
    pub(super) fn plain_body<'b>(
        &self,
        var: Handle<ir::Var>,
        body: &'b ir::Block,
    ) -> std::borrow::Cow<'b, ir::Block> {
        match self.peels.get(&var) {
            Some(peel) => std::borrow::Cow::Owned(peel.plain(body)),
            None => std::borrow::Cow::Borrowed(body),
        }
    }

    /// `e` itself when it is a literal, else a register holding it.
    pub(super) fn kept(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
        if matches!(e.kind, ExprKind::Literal(_)) {
            return e;
        }
        let dtype = e.dtype;
        reg_expr(self.in_register(e, out).reg(), dtype)
    }

    /// The producers of the iteration the loop variable is bound to, as
    /// async copies into `stage`; with `when`, copies that zero-fill their
    /// destination instead of reading where `when` is false.
    fn issue_producers(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        stage: Expr,
        when: Option<&Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        for &(i, w) in &plan.producers {
            let ir::Stmt::Copy { src, dst } = &body.stmts[i] else {
                return Err(self.malformed("a pipeline producer is not a copy"));
            };
            let span = body.spans.get(i).copied().unwrap_or(self.span);
            let saved = std::mem::replace(&mut self.span, span);
            let size = self.staged.get(&dst.buffer).map_or(0, |&(s, _)| s);
            let base = self.bin(BinaryOp::Mul, stage.clone(), lit_i32(size))?;
            self.stage_base.insert(dst.buffer, (base, size));
            let r = self.async_copy(src, dst.buffer, w, when, out);
            self.stage_base.remove(&dst.buffer);
            self.span = saved;
            r?;
        }
        Ok(())
    }

    /// `copy src -> dst` (whole) as async copies of `w` elements, reading
    /// only where `when` (when given) holds.
    fn async_copy(
        &mut self,
        src: &Region,
        dst: Handle<ir::Buffer>,
        w: i64,
        when: Option<&Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (sstarts, sext) = self.region(src, out)?;
        let dims = self.const_shape(dst)?;
        let count: i64 = sext.iter().product();
        let bytes = (w * self.f.buffers[dst].dtype.bytes() as i64) as u32;
        let zeros = vec![
            Index {
                expr: lit_i32(0),
                range: Some((0, 0)),
            };
            dims.len()
        ];
        let src_buffer = src.buffer;
        self.cyclic_unrolled(count / w, out, |s, p, body| {
            let sd = s.vector_digits(&p, &sext, w)?;
            let sidx = s.offset(&sstarts, &sd)?;
            let dd = s.vector_digits(&p, &dims, w)?;
            let didx = s.offset(&zeros, &dd)?;
            let (from, src_index, guard) = s.address(src_buffer, &sidx)?;
            let guard = match (when, guard) {
                (None, g) => g,
                (Some(w), None) => Some(w.clone()),
                (Some(w), Some(g)) => Some(s.bin(BinaryOp::And, w.clone(), g)?),
            };
            let (to, dst_index, _) = s.address(dst, &didx)?;
            body.push(s.async_copy_stmt(bytes, (from, src_index), (to, dst_index), guard)?);
            Ok(())
        })
    }

    /// `cp_async` of `bytes` from global `src` to shared `dst`, reading
    /// zeros where `guard` is false.
    pub(super) fn async_copy_stmt(
        &self,
        bytes: u32,
        (from, src_index): (MemRef, Expr),
        (to, dst_index): (MemRef, Expr),
        guard: Option<Expr>,
    ) -> Result<Stmt> {
        let (MemRef::Global(src), MemRef::Shared(dst)) = (from, to) else {
            return Err(self.malformed("an async copy that is not global to shared"));
        };
        Ok(self.stmt(StmtKind::AsyncCopy {
            bytes,
            dst,
            dst_index,
            src,
            src_index,
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Zero,
            }),
        }))
    }

    /// The offset of the current stage of a staged buffer, with a number it
    /// is a multiple of.
    pub(super) fn stage_offset(&self, b: Handle<ir::Buffer>) -> Option<(Expr, i64)> {
        self.stage_base.get(&b).cloned()
    }
}

impl Lower<'_> {
    /// A pipelined loop on a target without async copies: two shared
    /// stages, the next iteration's tiles loaded into registers before the
    /// consumers run and stored into the other stage after them.
    fn prefetched_for(
        &mut self,
        var: Handle<ir::Var>,
        start: Handle<ir::Expr>,
        extent: Handle<ir::Expr>,
        body: &ir::Block,
        plan: &PipePlan,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let PipeLoop { s0, n, acc, vdtype } = self.pipe_loop(var, start, extent, body, out)?;
        let as_var = |e: Expr| as_loop_var(vdtype, e);
        // One register array per producer.
        let mut arrays = Vec::new();
        for &(i, w) in &plan.producers {
            let ir::Stmt::Copy { dst, .. } = &body.stmts[i] else {
                return Err(self.malformed("a pipeline producer is not a copy"));
            };
            let dtype = self.f.buffers[dst.buffer].dtype;
            let len = self.prefetch_slots(dst.buffer, w);
            let name = self.fresh("pre");
            arrays.push(self.add_reg(name, dtype, super::RegisterKind::Array { len: len as u32 }));
        }
        let (loop_reg, prologue) = self.loop_var(var, start, extent)?;
        let loop_binding = self.vars[&var].clone();
        // Prologue: iteration s0 through registers into stage 0.
        self.vars.insert(var, as_var(s0.clone()));
        let mut first = Vec::new();
        self.prefetch_loads(body, plan, &arrays, &mut first)?;
        self.prefetch_stores(body, plan, &arrays, lit_i32(0), &mut first)?;
        out.push(self.stmt(StmtKind::If {
            cond: self.bin(BinaryOp::Lt, lit_i32(0), n.clone())?,
            then_body: first,
            else_body: None,
        }));
        let mut inner = prologue;
        self.barrier(&mut inner);
        let rel = self.bin(BinaryOp::Sub, reg_expr(loop_reg, DType::I32), s0.clone())?;
        let next = self.bin(BinaryOp::Add, rel.clone(), lit_i32(1))?;
        let more = self.bin(BinaryOp::Lt, next.clone(), n.clone())?;
        let more = self.in_register(more, &mut inner).reg();
        // Loads of iteration i + 1, before the consumers of i.
        let it = self.bin(BinaryOp::Add, reg_expr(loop_reg, DType::I32), lit_i32(1))?;
        self.vars.insert(var, as_var(it));
        let mut loads = Vec::new();
        self.prefetch_loads(body, plan, &arrays, &mut loads)?;
        inner.push(self.stmt(StmtKind::If {
            cond: reg_expr(more, DType::Bool),
            then_body: loads,
            else_body: None,
        }));
        self.vars.insert(var, loop_binding);
        self.consumers_on_stage(body, plan, rel, 2, &mut inner)?;
        // The registers into the other stage, read after the next barrier.
        let other = self.bin(BinaryOp::FloorMod, next, lit_i32(2))?;
        let mut stores = Vec::new();
        self.prefetch_stores(body, plan, &arrays, other, &mut stores)?;
        inner.push(self.stmt(StmtKind::If {
            cond: reg_expr(more, DType::Bool),
            then_body: stores,
            else_body: None,
        }));
        out.push(self.stmt(StmtKind::For {
            var: loop_reg,
            start: s0,
            count: n,
            step: lit_i32(1),
            unroll: Unroll::None,
            body: inner,
        }));
        self.pending.union(&acc);
        Ok(())
    }

    /// The body after the producers, reading stage `rel mod stages` of
    /// every staged buffer.
    pub(super) fn consumers_on_stage(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        rel: Expr,
        stages: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let stage = self.bin(BinaryOp::FloorMod, rel, lit_i32(stages))?;
        self.consumers_in_stage(body, plan, stage, out)
    }

    /// The body after the producers, reading the stage `stage` (an `i32`)
    /// of every staged buffer.
    pub(super) fn consumers_in_stage(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        stage: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let stage = self.in_register(stage, out).reg();
        let staged = self.staged_of(body, plan);
        for &(b, size) in &staged {
            let base = self.bin(BinaryOp::Mul, reg_expr(stage, DType::I32), lit_i32(size))?;
            self.stage_base.insert(b, (base, size));
        }
        let consumers = consumers_of(body, &plan.producers);
        let r = self.uniform_block(&consumers, out);
        for (b, _) in &staged {
            self.stage_base.remove(b);
        }
        r
    }

    /// The staged buffers of a plan with their stage sizes.
    fn staged_of(&self, body: &ir::Block, plan: &PipePlan) -> Vec<(Handle<ir::Buffer>, i64)> {
        plan.producers
            .iter()
            .filter_map(|&(i, _)| match &body.stmts[i] {
                ir::Stmt::Copy { dst, .. } => self
                    .staged
                    .get(&dst.buffer)
                    .map(|&(size, _)| (dst.buffer, size)),
                _ => None,
            })
            .collect()
    }

    /// Thread `t`'s vectors `r·T + t` of a tile: `each(r, p, body)` for the
    /// unrolled `r`, under `p < vectors` where needed.
    fn per_vector(
        &mut self,
        vectors: i64,
        out: &mut Vec<Stmt>,
        each: impl FnOnce(&mut Self, Expr, Expr, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        let t = self.threads;
        let rounds = (vectors + t - 1) / t;
        let name = self.fresh("r");
        let r = self.add_reg(name, DType::I32, super::RegisterKind::Loop);
        let re = reg_expr(r, DType::I32);
        let p = self.bin(
            BinaryOp::Add,
            self.bin(BinaryOp::Mul, re.clone(), lit_i32(t))?,
            self.tid(),
        )?;
        let mut body = Vec::new();
        each(self, re, p.clone(), &mut body)?;
        let body = if vectors % t == 0 {
            body
        } else {
            vec![self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, p, lit_i32(vectors))?,
                then_body: body,
                else_body: None,
            })]
        };
        out.push(self.stmt(StmtKind::For {
            var: r,
            start: lit_i32(0),
            count: lit_i32(rounds),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body,
        }));
        Ok(())
    }

    /// The producers' source tiles (for the iteration the loop variable is
    /// bound to) into their register arrays.
    fn prefetch_loads(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        arrays: &[super::RegId],
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        for (&(i, w), &arr) in plan.producers.iter().zip(arrays) {
            let ir::Stmt::Copy { src, .. } = &body.stmts[i] else {
                return Err(self.malformed("a pipeline producer is not a copy"));
            };
            let span = body.spans.get(i).copied().unwrap_or(self.span);
            let saved = std::mem::replace(&mut self.span, span);
            let (sstarts, sext) = self.region(src, out)?;
            let vectors = sext.iter().product::<i64>() / w;
            let buffer = src.buffer;
            let r = self.per_vector(vectors, out, |s, r, p, b| {
                let sd = s.vector_digits(&p, &sext, w)?;
                let sidx = s.offset(&sstarts, &sd)?;
                let at = s.bin(BinaryOp::Mul, r, lit_i32(w))?;
                s.vector_load_at(buffer, &sidx, arr, at, w, b)
            });
            self.span = saved;
            r?;
        }
        Ok(())
    }

    /// The register arrays into stage `stage` of the staged buffers.
    fn prefetch_stores(
        &mut self,
        body: &ir::Block,
        plan: &PipePlan,
        arrays: &[super::RegId],
        stage: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        for (&(i, w), &arr) in plan.producers.iter().zip(arrays) {
            let ir::Stmt::Copy { dst, .. } = &body.stmts[i] else {
                return Err(self.malformed("a pipeline producer is not a copy"));
            };
            let dims = self.const_shape(dst.buffer)?;
            let size = self.physical_len(dst.buffer, &dims);
            let count: i64 = dims.iter().product();
            let base = self.bin(BinaryOp::Mul, stage.clone(), lit_i32(size))?;
            self.stage_base.insert(dst.buffer, (base, size));
            let zeros = vec![
                Index {
                    expr: lit_i32(0),
                    range: Some((0, 0)),
                };
                dims.len()
            ];
            let buffer = dst.buffer;
            let r = self.per_vector(count / w, out, |s, r, p, b| {
                let dd = s.vector_digits(&p, &dims, w)?;
                let didx = s.offset(&zeros, &dd)?;
                let at = s.bin(BinaryOp::Mul, r, lit_i32(w))?;
                s.vector_store_at(buffer, &didx, arr, at, w, b)
            });
            self.stage_base.remove(&dst.buffer);
            r?;
        }
        Ok(())
    }
}

/// `T.Pipelined` loops of the kernel's uniform code (not inside `parallel`).
fn collect_pipelined<'b>(block: &'b ir::Block, out: &mut Vec<(Handle<ir::Var>, &'b ir::Stmt)>) {
    for stmt in &block.stmts {
        match stmt {
            ir::Stmt::For {
                var, kind, body, ..
            } => {
                if matches!(kind, LoopKind::Pipelined { .. }) {
                    out.push((*var, stmt));
                }
                collect_pipelined(body, out);
            }
            ir::Stmt::Role { body, .. } => collect_pipelined(body, out),
            ir::Stmt::If {
                then, otherwise, ..
            } => {
                collect_pipelined(then, out);
                collect_pipelined(otherwise, out);
            }
            _ => {}
        }
    }
}

/// Whether `block` only reads `staged` buffers, through loads, copy
/// sources and gemm operands.
fn consumers_only_read(block: &ir::Block, staged: &HashSet<Handle<ir::Buffer>>) -> bool {
    block.stmts.iter().all(|stmt| match stmt {
        ir::Stmt::Kernel { .. } => false,
        ir::Stmt::Alloc { buffer, .. } => !staged.contains(buffer),
        ir::Stmt::Store { buffer, .. } | ir::Stmt::WarpReduce { buffer, .. } => {
            !staged.contains(buffer)
        }
        ir::Stmt::Copy { dst, .. } | ir::Stmt::Fill { dst, .. } => !staged.contains(&dst.buffer),
        ir::Stmt::Gemm { c, .. } => !staged.contains(&c.buffer),
        ir::Stmt::Reduce { src, dst, .. } | ir::Stmt::Cumsum { src, dst, .. } => {
            !staged.contains(src) && !staged.contains(dst)
        }
        ir::Stmt::AtomicAdd { dst, .. } | ir::Stmt::Atomic { dst, .. } => {
            !staged.contains(&dst.buffer)
        }
        ir::Stmt::For { body, .. } | ir::Stmt::Parallel { body, .. } => {
            consumers_only_read(body, staged)
        }
        ir::Stmt::If {
            then, otherwise, ..
        } => consumers_only_read(then, staged) && consumers_only_read(otherwise, staged),
        ir::Stmt::Role { body, .. } => consumers_only_read(body, staged),
        ir::Stmt::Let { .. }
        | ir::Stmt::Barrier
        | ir::Stmt::Assume { .. }
        | ir::Stmt::DeviceAssert { .. }
        | ir::Stmt::AllocBarrier { .. }
        | ir::Stmt::BarrierArrive { .. }
        | ir::Stmt::BarrierWait { .. } => true,
    })
}

/// Every buffer `block` touches outside the statement `skip` (compared by
/// address).
fn buffers_outside(
    block: &ir::Block,
    skip: &ir::Stmt,
    out: &mut HashSet<Handle<ir::Buffer>>,
    f: &ir::Function,
) {
    for stmt in &block.stmts {
        if std::ptr::eq(stmt, skip) {
            continue;
        }
        let mut exprs: Vec<Handle<ir::Expr>> = Vec::new();
        let region = |r: &Region,
                      out: &mut HashSet<Handle<ir::Buffer>>,
                      exprs: &mut Vec<Handle<ir::Expr>>| {
            out.insert(r.buffer);
            for range in &r.ranges {
                exprs.push(range.start);
                exprs.push(range.extent);
            }
        };
        match stmt {
            ir::Stmt::Kernel { body, .. } => buffers_outside(body, skip, out, f),
            ir::Stmt::Alloc { buffer, init } => {
                if init.is_some() {
                    out.insert(*buffer);
                }
                exprs.extend(init.iter().copied());
            }
            ir::Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                exprs.push(*start);
                exprs.push(*extent);
                buffers_outside(body, skip, out, f);
            }
            ir::Stmt::Parallel { extents, body, .. } => {
                exprs.extend(extents.iter().copied());
                buffers_outside(body, skip, out, f);
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                exprs.push(*cond);
                buffers_outside(then, skip, out, f);
                buffers_outside(otherwise, skip, out, f);
            }
            ir::Stmt::Let { value, .. } => exprs.push(*value),
            ir::Stmt::Store {
                buffer,
                indices,
                value,
            }
            | ir::Stmt::WarpReduce {
                buffer,
                indices,
                value,
                ..
            } => {
                out.insert(*buffer);
                exprs.extend(indices.iter().copied());
                exprs.push(*value);
            }
            ir::Stmt::Copy { src, dst } => {
                region(src, out, &mut exprs);
                region(dst, out, &mut exprs);
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                region(a, out, &mut exprs);
                region(b, out, &mut exprs);
                region(c, out, &mut exprs);
                exprs.push(*clear_accum);
            }
            ir::Stmt::Fill { dst, value } => {
                region(dst, out, &mut exprs);
                exprs.push(*value);
            }
            ir::Stmt::Reduce { src, dst, .. } | ir::Stmt::Cumsum { src, dst, .. } => {
                out.insert(*src);
                out.insert(*dst);
            }
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                region(dst, out, &mut exprs);
                match value {
                    ir::AtomicValue::Scalar(e) => exprs.push(*e),
                    ir::AtomicValue::Region(r) => region(r, out, &mut exprs),
                }
            }
            ir::Stmt::Assume { cond } | ir::Stmt::DeviceAssert { cond } => exprs.push(*cond),
            ir::Stmt::Role { body, .. } => buffers_outside(body, skip, out, f),
            ir::Stmt::BarrierArrive { index, .. } => exprs.push(*index),
            ir::Stmt::BarrierWait { index, parity, .. } => exprs.extend([*index, *parity]),
            ir::Stmt::Barrier | ir::Stmt::AllocBarrier { .. } => {}
        }
        for e in exprs {
            super::for_each_load(f, e, |b| {
                out.insert(b);
            });
        }
    }
}

/// The (source region, destination buffer) of each producer copy.
/// Every buffer a block touches.
pub(super) fn buffers_touched(
    block: &ir::Block,
    out: &mut HashSet<Handle<ir::Buffer>>,
    f: &ir::Function,
) {
    let none = ir::Stmt::Barrier;
    buffers_outside(block, &none, out, f);
}

/// The body without its producers: what runs on the stage.
pub(super) fn consumers_of(body: &ir::Block, producers: &[(usize, i64)]) -> ir::Block {
    let mut out = ir::Block {
        stmts: Vec::new(),
        spans: Vec::new(),
    };
    for (i, stmt) in body.stmts.iter().enumerate() {
        if producers.iter().any(|&(p, _)| p == i) {
            continue;
        }
        out.stmts.push(stmt.clone());
        if let Some(&span) = body.spans.get(i) {
            out.spans.push(span);
        }
    }
    out
}

/// Every variable a block binds (`let`, loop and nest variables).
fn bound_vars(block: &ir::Block, out: &mut HashSet<Handle<ir::Var>>) {
    for stmt in &block.stmts {
        match stmt {
            ir::Stmt::Let { var, .. } => {
                out.insert(*var);
            }
            ir::Stmt::For { var, body, .. } => {
                out.insert(*var);
                bound_vars(body, out);
            }
            ir::Stmt::Parallel { vars, body, .. } => {
                out.extend(vars.iter().copied());
                bound_vars(body, out);
            }
            ir::Stmt::If {
                then, otherwise, ..
            } => {
                bound_vars(then, out);
                bound_vars(otherwise, out);
            }
            ir::Stmt::Kernel { body, .. } | ir::Stmt::Role { body, .. } => bound_vars(body, out),
            _ => {}
        }
    }
}

/// Whether a region's bounds read no memory and no variable in `bound`
/// (so they can be evaluated at the top of the iteration).
fn region_invariant(r: &Region, bound: &HashSet<Handle<ir::Var>>, f: &ir::Function) -> bool {
    let mut stack: Vec<Handle<ir::Expr>> =
        r.ranges.iter().flat_map(|x| [x.start, x.extent]).collect();
    while let Some(e) = stack.pop() {
        match f.exprs.try_get(e) {
            Some(ir::Expr::Load { .. }) | None => return false,
            Some(ir::Expr::Var(v)) if bound.contains(v) => return false,
            Some(node) => stack.extend(node.operands()),
        }
    }
    true
}

fn plan_producers<'b>(
    body: &'b ir::Block,
    producers: &'b [(usize, i64)],
) -> impl Iterator<Item = (&'b Region, Handle<ir::Buffer>)> + 'b {
    producers.iter().filter_map(|&(i, _)| match &body.stmts[i] {
        ir::Stmt::Copy { src, dst } => Some((src, dst.buffer)),
        _ => None,
    })
}
