//! Thread-guarded regions: `if` statements whose condition reads the
//! thread index (`tx = T.get_thread_binding()`, then `if tx < 128:`).
//!
//! TileLang's meaning, which the lowering follows: the body of such an
//! `if` runs on the threads that pass the condition. A tile operation or
//! `T.Parallel` nest inside it is spread over exactly those threads when
//! they are a range of the thread index (`tx < k`, `tx >= k`,
//! `k1 <= tx < k2`, `tx == k`, `tx // d == w`, through `let`s and combined
//! with `and`; the `else` branch takes the complement when it is a range):
//! work is numbered from the range's first thread, as a role's is
//! (`roles.rs`), so the guarded copy of a 128-of-256-thread guard writes
//! every element. A tile operation under a condition that is not a range
//! (`tx % 2 == 0`) is refused at its line: spreading it over the block and
//! masking threads off would leave elements unwritten. Scalar statements
//! inside run per thread: a store that reads the thread index is made by
//! every thread that reaches it, a store that does not by the range's
//! first thread (by every passing thread when the condition is not a
//! range). A store into a `fragment`, `local` or `var` buffer from
//! per-thread code is refused (TileLang keeps one copy per thread there,
//! the lowering one per block).
//!
//! Barriers: the accesses of the whole `if` are checked against the
//! pending ones before it, and the barrier they need is placed before the
//! `if`, where every thread reaches it (TileLang hoists it the same way).
//! Inside, the statements start with nothing pending; a conflict between
//! two of them needs the guarded threads alone to synchronise: nothing for
//! one thread, a numbered barrier over the range when it is whole warps
//! and the target has numbered barriers (counted down from the highest
//! number, so roles and the producer warp keep theirs), and otherwise,
//! for scalar per-thread code, nothing (as TileLang, which then hoists
//! the barrier out of the condition), while tile operations are refused.
//! After the `if`, everything it touched is pending, so the next
//! conflicting statement waits at a block barrier.
//!
//! Buffers that tile operations touch inside a guarded region stay in
//! shared memory (the register layouts are planned for the block's
//! threads), loops pipelined inside one run serially and the kernel gets
//! no producer warp. A gemm under a guard of whole warps is split among
//! them, numbered from the range's first warp, as for a block of that many
//! threads; under part of a warp it is refused. Chains of guards on whole
//! warp groups are lowered as roles instead where they can be
//! (`split.rs`).

use super::{Lower, LowerError, Pending, Result, StmtKind, lit_i32, roles::RoleCx, unsupported};
use crate::ir::{self, BinaryOp, Handle, LoopKind, Scope};
use crate::thread::Stmt;
use std::collections::HashMap;

/// The guarded region being lowered.
#[derive(Clone, Copy, Debug)]
pub(super) struct GuardCx {
    /// The threads that pass every enclosing guard, `lo .. hi` (absolute
    /// thread indices); `None` when they are not a range.
    pub(super) range: Option<(i64, i64)>,
    /// Whether the region holds tile operations.
    pub(super) tile: bool,
}

/// Whether a statement is a tile operation (or a nest spread over the
/// threads).
fn is_tile(stmt: &ir::Stmt) -> bool {
    matches!(
        stmt,
        ir::Stmt::Parallel { .. }
            | ir::Stmt::Copy { .. }
            | ir::Stmt::Fill { .. }
            | ir::Stmt::Gemm { .. }
            | ir::Stmt::Reduce { .. }
            | ir::Stmt::Cumsum { .. }
            | ir::Stmt::AtomicAdd { .. }
            | ir::Stmt::Atomic { .. }
            | ir::Stmt::Alloc { init: Some(_), .. }
    )
}

fn tile_word(stmt: &ir::Stmt) -> &'static str {
    match stmt {
        ir::Stmt::Parallel { .. } => "a `T.Parallel` nest",
        ir::Stmt::Copy { .. } => "`T.copy`",
        ir::Stmt::Fill { .. } => "`T.fill`",
        ir::Stmt::Gemm { .. } => "`T.gemm`",
        ir::Stmt::Reduce { .. } => "a reduction",
        ir::Stmt::Cumsum { .. } => "`T.cumsum`",
        ir::Stmt::AtomicAdd { .. } => "`T.atomic_add`",
        ir::Stmt::Atomic {
            op: ir::AtomicOp::Max,
            ..
        } => "`T.atomic_max`",
        ir::Stmt::Atomic {
            op: ir::AtomicOp::Min,
            ..
        } => "`T.atomic_min`",
        ir::Stmt::Atomic { .. } => "`T.atomic_add`",
        _ => "an initialised allocation",
    }
}

fn has_tile(block: &ir::Block) -> bool {
    let mut found = false;
    block.walk(&mut |s, _| found |= is_tile(s));
    found
}

fn meet(a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
    let ((a0, a1), (b0, b1)) = (a?, b?);
    let lo = a0.max(b0);
    Some((lo, a1.min(b1).max(lo)))
}

impl Lower<'_> {
    /// Finds the kernel's thread-dependent variables (the thread variable,
    /// `let`s computed from it) and keeps the buffers that guarded tile
    /// operations touch in shared memory (module documentation).
    pub(super) fn plan_guards(&mut self, thread_var: Handle<ir::Var>, body: &ir::Block) {
        self.thread_var = Some(thread_var);
        self.block_threads = self.threads;
        self.tdep.insert(thread_var);
        let mut touched = Pending::default();
        let (mut pipelined, mut tiles) = (false, false);
        self.scan_guards(body, false, &mut touched, &mut pipelined, &mut tiles);
        let f = self.f;
        for (h, b) in f.buffers.iter() {
            let i = h.index();
            if matches!(b.scope, Scope::Fragment | Scope::Local | Scope::Var)
                && (touched.reads.contains(&i) || touched.writes.contains(&i))
            {
                self.excluded.insert(h);
            }
        }
        if pipelined {
            self.pipelining = false;
        }
        if tiles {
            self.specialize = false;
        }
    }

    fn scan_guards(
        &mut self,
        block: &ir::Block,
        guarded: bool,
        touched: &mut Pending,
        pipelined: &mut bool,
        tiles: &mut bool,
    ) {
        for stmt in &block.stmts {
            match stmt {
                ir::Stmt::Let { var, value } if self.reads_tdep(*value) => {
                    self.tdep.insert(*var);
                    self.tdep_lets.insert(*var, *value);
                }
                ir::Stmt::For {
                    var,
                    start,
                    extent,
                    body,
                    kind,
                } => {
                    if self.reads_tdep(*start) || self.reads_tdep(*extent) {
                        self.tdep.insert(*var);
                    }
                    *pipelined |= guarded && matches!(kind, LoopKind::Pipelined { .. });
                    self.scan_guards(body, guarded, touched, pipelined, tiles);
                }
                ir::Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let g = guarded || self.reads_tdep(*cond);
                    self.scan_guards(then, g, touched, pipelined, tiles);
                    self.scan_guards(otherwise, g, touched, pipelined, tiles);
                }
                ir::Stmt::Role { body, .. } => {
                    self.scan_guards(body, guarded, touched, pipelined, tiles);
                }
                s if guarded && is_tile(s) => {
                    *tiles = true;
                    self.stmt_accesses(s, touched);
                }
                _ => {}
            }
        }
    }

    /// Refuses a tile operation whose region (or filled or added value)
    /// reads the thread index: TileLang runs such an operation once per
    /// thread (`T.copy(x[tx, 0], frag)` copies each thread's own row),
    /// while the lowering spreads a tile operation over the block's
    /// threads as one operation, which would compute something else.
    pub(super) fn refuse_thread_dependent_tile(&self, stmt: &ir::Stmt) -> Result<()> {
        let region = |r: &ir::Region| {
            r.ranges
                .iter()
                .any(|x| self.reads_tdep(x.start) || self.reads_tdep(x.extent))
        };
        let dependent = match stmt {
            ir::Stmt::Copy { src, dst } => region(src) || region(dst),
            ir::Stmt::Gemm { a, b, c, .. } => region(a) || region(b) || region(c),
            ir::Stmt::Fill { dst, value } => region(dst) || self.reads_tdep(*value),
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                region(dst)
                    || match value {
                        ir::AtomicValue::Region(r) => region(r),
                        ir::AtomicValue::Scalar(e) => self.reads_tdep(*e),
                    }
            }
            _ => false,
        };
        if dependent {
            return Err(unsupported(
                format!(
                    "{} whose region depends on the thread index (TileLang runs it once per \
                     thread; tilec spreads a tile operation over the block: write the \
                     per-thread part as element stores, or index by the block)",
                    tile_word(stmt)
                ),
                self.span,
            ));
        }
        Ok(())
    }

    /// Whether an expression reads the thread index (directly or through
    /// a thread-dependent variable).
    pub(super) fn reads_tdep(&self, e: Handle<ir::Expr>) -> bool {
        let f = self.f;
        match &f.exprs[e] {
            ir::Expr::Literal(_) => false,
            ir::Expr::Var(v) => self.tdep.contains(v),
            ir::Expr::Unary { arg, .. }
            | ir::Expr::Cast { arg, .. }
            | ir::Expr::Bitcast { arg, .. } => self.reads_tdep(*arg),
            ir::Expr::Binary { lhs, rhs, .. } => self.reads_tdep(*lhs) || self.reads_tdep(*rhs),
            ir::Expr::Select {
                cond,
                then,
                otherwise,
            } => self.reads_tdep(*cond) || self.reads_tdep(*then) || self.reads_tdep(*otherwise),
            ir::Expr::Load { buffer, indices } => {
                self.is_private(*buffer) || indices.iter().any(|&i| self.reads_tdep(i))
            }
        }
    }

    /// The threads of the block that pass `cond`, when they are a range.
    fn thread_range(&self, cond: Handle<ir::Expr>) -> Option<(i64, i64)> {
        let thread_var = self.thread_var?;
        Ranges {
            f: self.f,
            thread_var,
            lets: &self.tdep_lets,
            threads: self.block_threads,
        }
        .of(cond)
    }

    /// The threads running the code being lowered, when a range.
    fn current_range(&self) -> Option<(i64, i64)> {
        match (self.guard, self.role) {
            (Some(g), _) => g.range,
            (None, Some(r)) => Some((r.base, r.base + self.threads)),
            (None, None) => Some((0, self.block_threads)),
        }
    }

    /// Whether the code being lowered runs per thread (inside a guard).
    pub(super) fn in_guard(&self) -> bool {
        self.guard.is_some()
    }

    /// An `if` on the thread index (module documentation).
    pub(super) fn guarded_if(
        &mut self,
        stmt: &ir::Stmt,
        cond: Handle<ir::Expr>,
        then: &ir::Block,
        otherwise: &ir::Block,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let span = self.span;
        let mut acc = Pending::default();
        self.stmt_accesses(stmt, &mut acc);
        // The barrier the `if` needs, where every thread reaches it.
        self.sync(&acc, out);
        self.take_guard_error()?;
        let entry = self.pending.clone();
        let c = self.expr(cond, out)?;
        let outer = self.current_range();
        let own = self.thread_range(cond);
        // The `else` branch runs on the enclosing threads that fail the
        // condition: a range when the condition's threads sit at one end
        // of them (`if tx < 128: ... elif tx < 256: ... else: ...`).
        let (t0, t) = outer.unwrap_or((0, self.block_threads));
        let complement = own.and_then(|own| {
            let (lo, hi) = meet(Some((t0, t)), Some(own))?;
            if lo == hi {
                Some((t0, t))
            } else if lo == t0 {
                Some((hi, t))
            } else if hi == t {
                Some((t0, lo))
            } else {
                None
            }
        });
        let then_body = self.guarded_block(then, meet(outer, own))?;
        let else_body = self.guarded_block(otherwise, meet(outer, complement))?;
        self.pending = entry;
        self.pending.union(&acc);
        self.span = span;
        out.push(self.stmt(StmtKind::If {
            cond: c,
            then_body,
            else_body: (!else_body.is_empty()).then_some(else_body),
        }));
        Ok(())
    }

    fn guarded_block(&mut self, block: &ir::Block, range: Option<(i64, i64)>) -> Result<Vec<Stmt>> {
        if block.stmts.is_empty() || range.is_some_and(|(lo, hi)| hi <= lo) {
            // No thread runs it.
            return Ok(Vec::new());
        }
        let saved_guard = self.guard;
        let saved_pending = std::mem::take(&mut self.pending);
        let saved_threads = self.threads;
        let saved_role = self.role;
        self.guard = Some(GuardCx {
            range,
            tile: has_tile(block),
        });
        if let Some((lo, hi)) = range {
            self.threads = hi - lo;
            let barrier = self.guard_barrier_id((lo, hi));
            self.role = Some(RoleCx { base: lo, barrier });
        }
        let mut inner = Vec::new();
        let lowered = self
            .uniform_block(block, &mut inner)
            .and_then(|()| self.take_guard_error());
        self.guard = saved_guard;
        self.pending = saved_pending;
        self.threads = saved_threads;
        self.role = saved_role;
        lowered.map(|()| inner)
    }

    fn take_guard_error(&mut self) -> Result<()> {
        match self.guard_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The numbered barrier of a guard's threads: counted down from the
    /// target's highest number.
    fn guard_barrier_id(&mut self, range: (i64, i64)) -> i64 {
        let ids = self.target.named_barriers().map_or(0, |n| i64::from(n.ids));
        let index = match self.guard_ids.iter().position(|&r| r == range) {
            Some(i) => i,
            None => {
                self.guard_ids.push(range);
                self.guard_ids.len() - 1
            }
        };
        ids - 1 - index as i64
    }

    /// A barrier asked for inside a guarded region (module documentation).
    pub(super) fn guard_barrier(&mut self, out: &mut Vec<Stmt>) {
        let Some(g) = self.guard else {
            return;
        };
        self.pending = Pending::default();
        let Some((lo, hi)) = g.range else {
            return;
        };
        if hi - lo <= 1 {
            return;
        }
        let warp = self.target.simt_width().map_or(32, i64::from);
        let reserved = self.roles.as_ref().map_or(0, |r| r.sets.len() as i64) + 3;
        let id = self.role.map_or(0, |r| r.barrier);
        if let Some(named) = self.target.named_barriers()
            && lo % warp == 0
            && (hi - lo) % warp == 0
            && (hi - lo) % i64::from(named.count_multiple.max(1)) == 0
            && id > reserved
        {
            out.push(self.stmt(StmtKind::NamedBarrier {
                id: lit_i32(id),
                threads: (hi - lo) as u32,
                wait: true,
            }));
            return;
        }
        if g.tile && self.guard_error.is_none() {
            let why = match self.target.named_barriers() {
                Some(_) => {
                    format!("its numbered barriers synchronise whole warps of {warp} threads")
                }
                None => "it has no numbered barriers for part of the block".to_string(),
            };
            self.guard_error = Some(self.unsupported(format!(
                "a barrier among threads {lo} to {} alone, between tile operations under an `if` \
                 on the thread index, on target `{}` ({why}; move one of the operations out of \
                 the `if`)",
                hi - 1,
                self.target.name
            )));
        }
    }

    /// Refuses what a guarded region cannot hold (module documentation).
    pub(super) fn check_guarded(&self, stmt: &ir::Stmt) -> Result<()> {
        let Some(g) = self.guard else {
            return Ok(());
        };
        if !is_tile(stmt) {
            return Ok(());
        }
        let what = tile_word(stmt);
        let Some((lo, hi)) = g.range else {
            return Err(self.unsupported(format!(
                "{what} under an `if` whose threads are not a range of the thread index \
                 (TileLang spreads the operation over the threads that pass the condition: \
                 write it as `tx < k`, `tx >= k`, `k1 <= tx < k2` or `tx == k`, joined with \
                 `and`, or move the operation out of the `if`)"
            )));
        };
        let warp = self.target.simt_width().map_or(32, i64::from);
        let whole_warps = lo % warp == 0 && (hi - lo) % warp == 0;
        match stmt {
            ir::Stmt::Gemm { .. } if !whole_warps => Err(self.unsupported(format!(
                "`T.gemm` under an `if` that keeps threads {lo} to {} (TileLang splits a gemm \
                 among whole warps of {warp} threads: make the condition a range of whole warps, \
                 such as `tx < {}`, or move the gemm out of the `if`)",
                hi - 1,
                ((hi - lo + warp - 1) / warp * warp).max(warp)
            ))),
            ir::Stmt::Reduce { .. } | ir::Stmt::Cumsum { .. } if hi - lo > 1 && !whole_warps => {
                Err(self.unsupported(format!(
                    "{what} under an `if` that keeps threads {lo} to {} (a reduction over part \
                     of the block needs whole warps of {warp} threads)",
                    hi - 1
                )))
            }
            _ => Ok(()),
        }
    }

    /// A scalar store from uniform code or a guarded region: `None` when
    /// every thread that reaches it stores, else the condition that picks
    /// the one thread that does. Refuses per-thread stores into buffers
    /// TileLang keeps per thread.
    pub(super) fn store_owner(
        &self,
        buffer: Handle<ir::Buffer>,
        indices: &[Handle<ir::Expr>],
        value: Handle<ir::Expr>,
    ) -> Result<Option<crate::thread::Expr>> {
        let per_thread = indices.iter().any(|&i| self.reads_tdep(i)) || self.reads_tdep(value);
        if self.is_private(buffer) {
            // Every thread stores into its own copy (`private.rs`).
            return Ok(None);
        }
        let b = &self.f.buffers[buffer];
        if (per_thread || self.in_guard())
            && matches!(b.scope, Scope::Fragment | Scope::Local | Scope::Var)
        {
            return Err(per_thread_store(b, self.span));
        }
        if per_thread || self.guard.is_some_and(|g| g.range.is_none()) {
            return Ok(None);
        }
        Ok(Some(self.bin(BinaryOp::Eq, self.tid(), lit_i32(0))?))
    }
}

fn per_thread_store(b: &ir::Buffer, span: ir::Span) -> LowerError {
    unsupported(
        format!(
            "a store into the {} buffer `{}` from code that runs per thread (it reads the thread \
             index or sits under an `if` on it): TileLang gives every thread its own copy of \
             such a buffer, tilec keeps one per block (compute the value outside the `if`, or \
             use a shared buffer)",
            b.scope.name(),
            b.name
        ),
        span,
    )
}

/// The threads of a block that pass a condition on the thread index, when
/// they are a range `lo .. hi` (module documentation).
pub(super) struct Ranges<'f> {
    pub(super) f: &'f ir::Function,
    pub(super) thread_var: Handle<ir::Var>,
    /// The `let`s computed from the thread index, by variable.
    pub(super) lets: &'f HashMap<Handle<ir::Var>, Handle<ir::Expr>>,
    /// The block's threads.
    pub(super) threads: i64,
}

impl Ranges<'_> {
    /// The threads of the block that pass `cond`, when they are a range.
    pub(super) fn of(&self, cond: Handle<ir::Expr>) -> Option<(i64, i64)> {
        let f = self.f;
        match &f.exprs[cond] {
            ir::Expr::Binary {
                op: BinaryOp::And,
                lhs,
                rhs,
            } => meet(self.of(*lhs), self.of(*rhs)),
            ir::Expr::Binary { op, lhs, rhs } => {
                if let Some(c) = f.as_const_int(*rhs) {
                    self.solve(*lhs, *op, c)
                } else if let Some(c) = f.as_const_int(*lhs) {
                    let flipped = match op {
                        BinaryOp::Lt => BinaryOp::Gt,
                        BinaryOp::Le => BinaryOp::Ge,
                        BinaryOp::Gt => BinaryOp::Lt,
                        BinaryOp::Ge => BinaryOp::Le,
                        BinaryOp::Eq => BinaryOp::Eq,
                        _ => return None,
                    };
                    self.solve(*rhs, flipped, c)
                } else {
                    None
                }
            }
            ir::Expr::Var(v) => self.lets.get(v).and_then(|&e| self.of(e)),
            _ => None,
        }
    }

    /// The threads `t` of the block with `x(t) op c`, when a range.
    fn solve(&self, x: Handle<ir::Expr>, op: BinaryOp, c: i64) -> Option<(i64, i64)> {
        let f = self.f;
        let t = self.threads;
        let c1 = c.checked_add(1)?;
        match &f.exprs[x] {
            ir::Expr::Var(v) if *v == self.thread_var => {
                let (lo, hi) = match op {
                    BinaryOp::Lt => (0, c),
                    BinaryOp::Le => (0, c1),
                    BinaryOp::Gt => (c1, t),
                    BinaryOp::Ge => (c, t),
                    BinaryOp::Eq => (c, c1),
                    _ => return None,
                };
                let lo = lo.clamp(0, t);
                Some((lo, hi.clamp(lo, t)))
            }
            ir::Expr::Var(v) => self.lets.get(v).and_then(|&e| self.solve(e, op, c)),
            ir::Expr::Cast { dtype, arg } if dtype.is_int() => self.solve(*arg, op, c),
            ir::Expr::Binary {
                op: BinaryOp::Add,
                lhs,
                rhs,
            } => {
                if let Some(k) = f.as_const_int(*rhs) {
                    self.solve(*lhs, op, c.checked_sub(k)?)
                } else {
                    let k = f.as_const_int(*lhs)?;
                    self.solve(*rhs, op, c.checked_sub(k)?)
                }
            }
            ir::Expr::Binary {
                op: BinaryOp::Sub,
                lhs,
                rhs,
            } => {
                let k = f.as_const_int(*rhs)?;
                self.solve(*lhs, op, c.checked_add(k)?)
            }
            ir::Expr::Binary {
                op: BinaryOp::FloorDiv,
                lhs,
                rhs,
            } => {
                let d = f.as_const_int(*rhs).filter(|&d| d > 0)?;
                let cd = c.checked_mul(d)?;
                let c1d = c1.checked_mul(d)?;
                match op {
                    BinaryOp::Lt => self.solve(*lhs, BinaryOp::Lt, cd),
                    BinaryOp::Le => self.solve(*lhs, BinaryOp::Lt, c1d),
                    BinaryOp::Ge => self.solve(*lhs, BinaryOp::Ge, cd),
                    BinaryOp::Gt => self.solve(*lhs, BinaryOp::Ge, c1d),
                    BinaryOp::Eq => meet(
                        self.solve(*lhs, BinaryOp::Ge, cd),
                        self.solve(*lhs, BinaryOp::Lt, c1d),
                    ),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}
