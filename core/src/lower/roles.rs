//! Roles (`T.ws`) and phased barriers (`T.alloc_barrier`).
//!
//! A kernel with roles is lowered as TileLang defines `T.ws`: a role is
//! an `if` on the thread index around its body, and the tile operations
//! inside it are carried out by the role's threads alone — spread over
//! them, numbered from the role's first thread, its warps numbered from
//! the role's first warp. Every role of a kernel must have the same
//! number of threads (the analyses that place fragments in registers and
//! split gemms among warps run once, for that count), must be a run of
//! consecutive warp groups, and must keep to itself the fragments,
//! `local` and `var` buffers it touches: their registers belong to its
//! threads. Code outside roles may touch shared and global memory only.
//!
//! Synchronisation inside a role uses the role's own numbered barrier
//! (`bar.sync id, threads`), never the block barrier, which the other
//! roles would not reach; the shared accesses a role has pending are kept
//! across its executions, so a role that writes shared memory in one
//! loop iteration and reads it in the next waits on its barrier in
//! between. Between roles, ordering is the kernel's own business, through
//! its phased barriers: an `arrive` releases the arriving threads' earlier
//! accesses and a completed wait acquires them, which the SIMT
//! interpreter checks. The top-level statements between the first and
//! the last one holding a role (the *region*) run on every thread, so
//! outside roles they may only be control flow, `let`s and barrier
//! operations; a block barrier precedes and follows the region.
//!
//! Phased barriers live in shared memory, initialised by thread 0 and
//! published by the next block barrier (the one before the region, or one
//! placed before the first use outside roles). An `arrive` is one arrival
//! per thread that runs it (a role's threads, or the block's outside
//! roles), as the reference interpreter counts. In kernels with roles,
//! pipelined loops run serially (their schedules assume one set of
//! threads issuing and consuming the copies), so there are no bulk tensor
//! copies and no automatic producer warp. A role's copies from global to
//! shared memory that run straight into an `arrive` (a loader handing a
//! stage over, `find_handoffs`) become async copies and the arrival a
//! `cp_async_arrive`, so the loader does not wait for its own copies.
//! Gemms whose operands are whole 2-D shared buffers still take the
//! shared-operand atom (`wgmma`); there the copies stay synchronous, and
//! the CUDA plugin orders the atom's reads after the loader's writes with
//! a proxy fence before each arrival that may publish them.

use super::{Lower, Pending, Result, StmtKind, lit_i32};
use crate::ir::{self, BinaryOp, DType, Handle, Scope};
use crate::target::Barrier;
use crate::thread::{Expr, ExprKind, SharedBuffer, SharedId, Special};
use std::collections::{HashMap, HashSet};

/// The role being lowered.
#[derive(Clone, Copy, Debug)]
pub(super) struct RoleCx {
    /// Its first thread.
    pub(super) base: i64,
    /// Its numbered barrier.
    pub(super) barrier: i64,
}

/// What the lowering knows about a kernel's roles.
#[derive(Clone, Debug, Default)]
pub(super) struct Roles {
    /// The threads of every role.
    pub(super) size: i64,
    /// The block's threads.
    pub(super) block: i64,
    /// Each role's warp groups, in order of appearance (its numbered
    /// barrier is its index + 1).
    pub(super) sets: Vec<Vec<u32>>,
    /// The region: top-level statements `first ..= last` of the body.
    pub(super) first: usize,
    pub(super) last: usize,
    /// Shared accesses each role left pending, by role index.
    pub(super) pending: HashMap<usize, Pending>,
    /// Lowering is between `first` and `last`, outside roles.
    pub(super) in_region: bool,
    /// Code outside roles in the region needed a barrier.
    pub(super) region_sync: bool,
}

const WARP_GROUP: i64 = 128;

fn has_barrier_ops(block: &ir::Block) -> bool {
    let mut found = false;
    block.walk(&mut |s, _| found |= matches!(s, ir::Stmt::AllocBarrier { .. }));
    found
}

impl Lower<'_> {
    /// The index of the current thread among those running the tile
    /// operation being lowered: the block's, or the role's.
    pub(super) fn tid(&self) -> Expr {
        let t = Expr::special(Special::ThreadIdx);
        match self.role {
            Some(r) if r.base != 0 => Expr {
                kind: ExprKind::Binary(BinaryOp::Sub, Box::new(t), Box::new(lit_i32(r.base))),
                dtype: DType::I32,
            },
            _ => t,
        }
    }

    /// The current thread's warp among those running the tile operation.
    pub(super) fn warp_id(&self) -> Expr {
        let w = Expr::special(Special::WarpId);
        let warp = self.target.simt_width().map_or(32, i64::from);
        match self.role {
            Some(r) if r.base != 0 => Expr {
                kind: ExprKind::Binary(
                    BinaryOp::Sub,
                    Box::new(w),
                    Box::new(lit_i32(r.base / warp)),
                ),
                dtype: DType::I32,
            },
            _ => w,
        }
    }

    /// Checks a kernel's roles and barriers and prepares their lowering;
    /// `None` for a kernel without roles.
    pub(super) fn plan_roles(&mut self, threads: i64, body: &ir::Block) -> Result<Option<Roles>> {
        if has_barrier_ops(body) {
            let phased = self
                .target
                .barriers
                .iter()
                .any(|b| matches!(b, Barrier::Phased(p) if p.space == "shared"));
            if !phased {
                return Err(self.unsupported(format!(
                    "`T.alloc_barrier`: target `{}` has no phased barriers in shared memory",
                    self.target.name
                )));
            }
        }
        let holds: Vec<bool> = body.stmts.iter().map(ir::Stmt::holds_role).collect();
        let (Some(first), Some(last)) = (
            holds.iter().position(|&h| h),
            holds.iter().rposition(|&h| h),
        ) else {
            return Ok(None);
        };
        let mut sets: Vec<Vec<u32>> = Vec::new();
        body.walk(&mut |s, _| {
            if let ir::Stmt::Role { groups, .. } = s
                && !sets.contains(groups)
            {
                sets.push(groups.clone());
            }
        });
        let size_of = |groups: &[u32]| -> i64 {
            groups
                .iter()
                .map(|&g| (threads - i64::from(g) * WARP_GROUP).clamp(0, WARP_GROUP))
                .sum()
        };
        let size = size_of(&sets[0]);
        for set in &sets {
            if set.windows(2).any(|w| w[1] != w[0] + 1) {
                return Err(self.unsupported(format!(
                    "`T.ws` of warp groups {set:?}, which are not consecutive"
                )));
            }
            if size_of(set) != size {
                return Err(self.unsupported(format!(
                    "roles of different sizes in one kernel ({} threads for warp groups {set:?}, \
                     {size} for {:?})",
                    size_of(set),
                    sets[0]
                )));
            }
        }
        let ids = self.target.barriers.iter().find_map(|b| match b {
            Barrier::Named(n) => Some(i64::from(n.ids)),
            _ => None,
        });
        match ids {
            None => {
                return Err(self.unsupported(format!(
                    "`T.ws`: target `{}` has no numbered barriers for roles to synchronise with",
                    self.target.name
                )));
            }
            Some(ids) if sets.len() as i64 >= ids => {
                return Err(self.unsupported(format!(
                    "{} roles in one kernel (the target has {} numbered barriers besides the block's)",
                    sets.len(),
                    ids - 1
                )));
            }
            Some(_) => {}
        }
        self.check_role_buffers(body, &sets, (first, last))?;
        Ok(Some(Roles {
            size,
            block: threads,
            sets,
            first,
            last,
            ..Roles::default()
        }))
    }

    /// Register-resident buffers (fragments, `local`, `var`) are touched
    /// by one role only, and never outside roles.
    ///
    /// Except `var` buffers that only code before the roles writes
    /// (`block_count = BlockCount[bz, by, bx]`, then `T.serial(block_count)`
    /// in every role): every thread holds the same value of those, which
    /// any role may read.
    fn check_role_buffers(
        &self,
        body: &ir::Block,
        sets: &[Vec<u32>],
        (first, last): (usize, usize),
    ) -> Result<()> {
        let mut owner: HashMap<Handle<ir::Buffer>, Option<usize>> = HashMap::new();
        let mut written = Pending::default();
        for stmt in &body.stmts[first..=last] {
            self.stmt_accesses(stmt, &mut written);
        }
        let free: HashSet<usize> = self
            .f
            .buffers
            .iter()
            .filter(|(h, b)| b.scope == Scope::Var && !written.writes.contains(&h.index()))
            .map(|(h, _)| h.index())
            .collect();
        let mut problem: Option<(String, ir::Span)> = None;
        self.role_uses(body, None, sets, &free, &mut owner, &mut problem);
        match problem {
            Some((what, span)) => Err(super::unsupported(what, span)),
            None => Ok(()),
        }
    }

    fn role_uses(
        &self,
        block: &ir::Block,
        role: Option<usize>,
        sets: &[Vec<u32>],
        free: &HashSet<usize>,
        owner: &mut HashMap<Handle<ir::Buffer>, Option<usize>>,
        problem: &mut Option<(String, ir::Span)>,
    ) {
        for (stmt, span) in block.iter() {
            if problem.is_some() {
                return;
            }
            if let ir::Stmt::Role { groups, body } = stmt {
                let r = sets.iter().position(|s| s == groups);
                self.role_uses(body, r, sets, free, owner, problem);
                continue;
            }
            let mut acc = Pending::default();
            match stmt {
                ir::Stmt::Kernel { .. } | ir::Stmt::Alloc { .. } => {}
                ir::Stmt::For { body, .. } | ir::Stmt::Parallel { body, .. } => {
                    self.role_uses(body, role, sets, free, owner, problem);
                }
                ir::Stmt::If {
                    then, otherwise, ..
                } => {
                    self.role_uses(then, role, sets, free, owner, problem);
                    self.role_uses(otherwise, role, sets, free, owner, problem);
                }
                other => self.stmt_accesses(other, &mut acc),
            }
            let f = self.f;
            for b in acc.reads.iter().chain(&acc.writes) {
                let Some((h, buf)) = f.buffers.iter().nth(*b) else {
                    continue;
                };
                if !matches!(buf.scope, Scope::Fragment | Scope::Local | Scope::Var) {
                    continue;
                }
                let who = |r: Option<usize>| match r {
                    Some(r) => format!("the `T.ws{:?}` role", sets[r]),
                    None => "code outside `T.ws`".to_string(),
                };
                if free.contains(b) {
                    continue;
                }
                match owner.get(&h) {
                    None => {
                        owner.insert(h, role);
                    }
                    Some(&r) if r == role => {}
                    Some(&r) => {
                        *problem = Some((
                            format!(
                                "the {} buffer `{}` used by {} and by {} (its registers belong \
                                 to one role's threads: give each role its own)",
                                buf.scope.name(),
                                buf.name,
                                who(r),
                                who(role)
                            ),
                            span,
                        ));
                        return;
                    }
                }
                if role.is_none() {
                    *problem = Some((
                        format!(
                            "the {} buffer `{}` used outside `T.ws` in a kernel with roles \
                             (move the statement into the role that uses it)",
                            buf.scope.name(),
                            buf.name
                        ),
                        span,
                    ));
                    return;
                }
            }
        }
    }

    /// Lowers a kernel body with roles (module documentation).
    pub(super) fn role_kernel_body(
        &mut self,
        body: &ir::Block,
        out: &mut Vec<crate::thread::Stmt>,
    ) -> Result<()> {
        let (first, last) = match &self.roles {
            Some(r) => (r.first, r.last),
            None => return self.uniform_block(body, out),
        };
        for (i, (stmt, span)) in body.iter().enumerate() {
            self.span = span;
            if i == first {
                // Publishes the barriers' initialisation and the shared
                // writes before the roles.
                self.barrier(out);
                if let Some(r) = &mut self.roles {
                    r.in_region = true;
                }
            }
            self.uniform_stmt(stmt, out)?;
            if i == last {
                if let Some(r) = &mut self.roles {
                    r.in_region = false;
                }
                if last + 1 < body.len() {
                    self.barrier(out);
                }
            }
        }
        if self.roles.as_ref().is_some_and(|r| r.region_sync) {
            return Err(self.unsupported(
                "shared memory read or written outside `T.ws` between the kernel's roles \
                 (every thread runs that code; move it into a role)",
            ));
        }
        Ok(())
    }

    /// `T.ws(...)`: the body as the role's threads only.
    pub(super) fn role_stmt(
        &mut self,
        groups: &[u32],
        body: &ir::Block,
        out: &mut Vec<crate::thread::Stmt>,
    ) -> Result<()> {
        let Some(roles) = &self.roles else {
            return Err(self.malformed("a role in a kernel without a role plan"));
        };
        let Some(index) = roles.sets.iter().position(|s| s == groups) else {
            return Err(self.malformed("a role the plan does not know"));
        };
        if self.role.is_some() {
            return Err(self.unsupported("`T.ws` inside `T.ws`"));
        }
        let size = roles.size;
        let base = i64::from(groups[0]) * WARP_GROUP;
        let saved_pending = std::mem::replace(
            &mut self.pending,
            roles.pending.get(&index).cloned().unwrap_or_default(),
        );
        let outer_threads = std::mem::replace(&mut self.threads, size);
        self.role = Some(RoleCx {
            base,
            barrier: index as i64 + 1,
        });
        self.find_handoffs(body);
        let mut inner = Vec::new();
        let lowered = self.uniform_block(body, &mut inner);
        self.role = None;
        self.threads = outer_threads;
        let left = std::mem::replace(&mut self.pending, saved_pending);
        if let Some(r) = &mut self.roles {
            r.pending.insert(index, left);
        }
        lowered?;
        let t = Expr::special(Special::ThreadIdx);
        let lo = self.bin(BinaryOp::Ge, t.clone(), lit_i32(base))?;
        let hi = self.bin(BinaryOp::Lt, t, lit_i32(base + size))?;
        let cond = if base == 0 {
            hi
        } else {
            self.bin(BinaryOp::And, lo, hi)?
        };
        out.push(self.stmt(StmtKind::If {
            cond,
            then_body: inner,
            else_body: None,
        }));
        Ok(())
    }

    /// The barrier a statement inside a role (or the block) waits at.
    pub(super) fn role_barrier(&mut self) -> Option<StmtKind> {
        if let Some(r) = self.role {
            return Some(StmtKind::NamedBarrier {
                id: lit_i32(r.barrier),
                threads: self.threads as u32,
                wait: true,
            });
        }
        if let Some(roles) = &mut self.roles
            && roles.in_region
        {
            roles.region_sync = true;
        }
        None
    }

    /// `T.alloc_barrier`: a shared array of phased barriers, initialised
    /// by thread 0 and published by a block barrier.
    pub(super) fn alloc_barrier(
        &mut self,
        buffer: Handle<ir::Buffer>,
        counts: &[u32],
        out: &mut Vec<crate::thread::Stmt>,
    ) -> Result<()> {
        if self.role.is_some() || self.roles.as_ref().is_some_and(|r| r.in_region) {
            return Err(self.unsupported(
                "`T.alloc_barrier` between the kernel's roles (allocate barriers before them)",
            ));
        }
        let name = self.claim(&self.f.buffers[buffer].name);
        let id = SharedId(self.shared.len() as u32);
        self.shared.push(SharedBuffer {
            name,
            dtype: DType::U64,
            len: counts.len() as u64,
            align: 8,
        });
        self.barrier_bufs.insert(buffer, id);
        let mut init = Vec::new();
        for (i, &c) in counts.iter().enumerate() {
            init.push(self.stmt(StmtKind::MbarrierInit {
                bar: id,
                index: lit_i32(i as i64),
                count: lit_i32(i64::from(c)),
            }));
        }
        let first = self.bin(BinaryOp::Eq, Expr::special(Special::ThreadIdx), lit_i32(0))?;
        out.push(self.stmt(StmtKind::If {
            cond: first,
            then_body: init,
            else_body: None,
        }));
        self.unpublished = true;
        Ok(())
    }

    /// A block barrier publishing barrier initialisations, where one is
    /// due (before the region and before any use outside roles).
    fn publish_inits(&mut self, out: &mut Vec<crate::thread::Stmt>) {
        if self.unpublished && self.role.is_none() {
            self.barrier(out);
        }
    }

    fn barrier_of(&self, buffer: Handle<ir::Buffer>) -> Result<SharedId> {
        self.barrier_bufs
            .get(&buffer)
            .copied()
            .ok_or_else(|| self.malformed("a barrier used before its `alloc_barrier`"))
    }

    /// `T.barrier_arrive`: one arrival per running thread. After a
    /// handover (`handoff`), once the thread's async copies complete.
    pub(super) fn barrier_arrive(
        &mut self,
        buffer: Handle<ir::Buffer>,
        index: Handle<ir::Expr>,
        handoff: bool,
        out: &mut Vec<crate::thread::Stmt>,
    ) -> Result<()> {
        let bar = self.barrier_of(buffer)?;
        self.publish_inits(out);
        self.uniform_reads(&[index], out);
        let index = super::to_i32(self.expr(index, out)?);
        let fallback = std::mem::take(&mut self.async_fallback);
        if handoff && !fallback {
            out.push(self.stmt(StmtKind::AsyncCopyArrive { bar, index }));
            return Ok(());
        }
        if handoff {
            // Some of the copies went async, some not: wait for the async
            // ones, then arrive for all.
            out.push(self.stmt(StmtKind::CommitGroup));
            out.push(self.stmt(StmtKind::WaitGroup { pending: 0 }));
        }
        out.push(self.stmt(StmtKind::MbarrierArrive {
            bar,
            index,
            tx: None,
        }));
        Ok(())
    }

    /// Marks, in a role's `block` and the blocks nested in it, the copies
    /// from global to shared memory that run straight into a barrier
    /// arrival, and those arrivals: the copies become async copies and the
    /// arrival waits for them without stalling the thread (module
    /// documentation). Not where the kernel takes the shared-operand atom,
    /// whose async-proxy reads a generic-proxy write can only be ordered
    /// after by a fence of the writer once the write has completed.
    fn find_handoffs(&mut self, block: &ir::Block) {
        if self.async_atom.is_some() || self.async_sizes().is_empty() {
            return;
        }
        let f = self.f;
        let scope = |b: Handle<ir::Buffer>| f.buffers[b].scope;
        let mut run: Vec<usize> = Vec::new();
        for stmt in &block.stmts {
            let addr = stmt as *const ir::Stmt as usize;
            match stmt {
                ir::Stmt::Copy { src, dst }
                    if scope(src.buffer) == Scope::Global
                        && scope(dst.buffer) == Scope::Shared
                        && f.buffers[src.buffer].dtype == f.buffers[dst.buffer].dtype =>
                {
                    run.push(addr);
                }
                ir::Stmt::BarrierArrive { .. } if !run.is_empty() => {
                    self.handoff_copies.extend(run.drain(..));
                    self.handoff_arrives.insert(addr);
                }
                ir::Stmt::For { body, .. } => {
                    run.clear();
                    self.find_handoffs(body);
                }
                ir::Stmt::If {
                    then, otherwise, ..
                } => {
                    run.clear();
                    self.find_handoffs(then);
                    self.find_handoffs(otherwise);
                }
                _ => run.clear(),
            }
        }
    }

    /// `T.barrier_wait`: waits for the phase of the given parity.
    pub(super) fn barrier_wait(
        &mut self,
        buffer: Handle<ir::Buffer>,
        index: Handle<ir::Expr>,
        parity: Handle<ir::Expr>,
        out: &mut Vec<crate::thread::Stmt>,
    ) -> Result<()> {
        let bar = self.barrier_of(buffer)?;
        self.publish_inits(out);
        self.uniform_reads(&[index, parity], out);
        let index = super::to_i32(self.expr(index, out)?);
        // `p % 2` already is 0 or 1.
        let halved = matches!(
            self.f.exprs[parity],
            ir::Expr::Binary { op: BinaryOp::FloorMod, rhs, .. } if self.f.as_const_int(rhs) == Some(2)
        );
        let mut parity = super::to_i32(self.expr(parity, out)?);
        if !halved {
            parity = self.bin(BinaryOp::FloorMod, parity, lit_i32(2))?;
        }
        out.push(self.stmt(StmtKind::MbarrierWait { bar, index, parity }));
        Ok(())
    }
}
