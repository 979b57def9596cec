//! Which `var`, `local` and `fragment` buffers of a kernel keep one copy
//! per thread.
//!
//! TileLang gives every thread its own copy of a `T.alloc_var` or
//! `T.alloc_local` buffer, and of a `T.alloc_fragment` that only scalar
//! code uses (its layout inference replicates a fragment no nest or tile
//! operation lays out). tilec keeps one copy per block unless code that
//! runs per thread stores into the buffer; then, when every use of the
//! buffer can be served by a per-thread copy, the buffer is kept per thread
//! by the reference interpreter and by the lowering alike (this one
//! analysis decides for both):
//!
//! - some store into it runs per thread: its indices or value read the
//!   thread index (directly, through a `let` or loop bound computed from
//!   it, or by loading another per-thread buffer), or it sits under an `if`
//!   whose condition does;
//! - every use is a load or store in scalar code (stores, `let`s, `if`
//!   conditions, serial loop bounds, outside `T.Parallel` nests and tile
//!   operations), a fill of the whole buffer with a value that does not
//!   depend on the thread (`T.clear`), or its allocation (with its initial
//!   value);
//! - its shape is constant, of at most [`MAX_ELEMS`] elements.
//!
//! A use inside a nest or a tile operation depends on which thread runs
//! which iteration, which TileLang's layout inference decides: such a
//! buffer keeps its per-block copy, and a per-thread store into it is
//! refused where it is lowered or interpreted.

use std::collections::HashSet;

use super::{AtomicValue, Block, Buffer, Expr, Function, Handle, Region, Scope, Stmt, Var};

/// Largest per-thread buffer, in elements.
pub const MAX_ELEMS: i64 = 64;

/// The buffers of kernel body `body` (thread variable `thread`) kept per
/// thread (module documentation).
pub fn per_thread_buffers(
    f: &Function,
    body: &Block,
    thread: Handle<Var>,
) -> HashSet<Handle<Buffer>> {
    let mut scan = Scan {
        f,
        tdep: HashSet::from([thread]),
        private: HashSet::new(),
        stores: HashSet::new(),
        other: HashSet::new(),
    };
    // Per-thread buffers make their loads thread-dependent, which may make
    // more stores per-thread: to a fixed point.
    loop {
        scan.stores.clear();
        scan.other.clear();
        scan.block(body, false);
        let next: HashSet<Handle<Buffer>> = scan
            .stores
            .iter()
            .copied()
            .filter(|b| {
                !scan.other.contains(b)
                    && f.buffers.try_get(*b).is_some_and(|x| {
                        matches!(x.scope, Scope::Var | Scope::Local | Scope::Fragment)
                    })
                    && f.const_shape(*b)
                        .is_some_and(|s| (1..=MAX_ELEMS).contains(&s.iter().product::<i64>()))
            })
            .collect();
        if next == scan.private {
            return next;
        }
        scan.private = next;
    }
}

struct Scan<'f> {
    f: &'f Function,
    /// Variables whose value may differ between threads.
    tdep: HashSet<Handle<Var>>,
    /// The per-thread buffers found so far.
    private: HashSet<Handle<Buffer>>,
    /// `var`/`local`/`fragment`-candidate buffers some per-thread store
    /// writes.
    stores: HashSet<Handle<Buffer>>,
    /// Buffers used where a per-thread copy cannot serve.
    other: HashSet<Handle<Buffer>>,
}

impl Scan<'_> {
    /// Whether `e` may differ between threads.
    fn reads(&self, e: Handle<Expr>) -> bool {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match self.f.exprs.try_get(e) {
                Some(Expr::Var(v)) if self.tdep.contains(v) => return true,
                Some(Expr::Load { buffer, .. }) if self.private.contains(buffer) => return true,
                Some(node) => stack.extend(node.operands()),
                None => {}
            }
        }
        false
    }

    fn block(&mut self, block: &Block, guarded: bool) {
        for stmt in &block.stmts {
            match stmt {
                Stmt::Store {
                    buffer,
                    indices,
                    value,
                } => {
                    if guarded || self.reads(*value) || indices.iter().any(|&i| self.reads(i)) {
                        self.stores.insert(*buffer);
                    }
                }
                // Each warp stores its own result.
                Stmt::WarpReduce { buffer, .. } => {
                    self.stores.insert(*buffer);
                }
                Stmt::Let { var, value } => {
                    if self.reads(*value) {
                        self.tdep.insert(*var);
                    }
                }
                Stmt::For {
                    var,
                    start,
                    extent,
                    body,
                    ..
                } => {
                    if self.reads(*start) || self.reads(*extent) {
                        self.tdep.insert(*var);
                    }
                    self.block(body, guarded);
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let g = guarded || self.reads(*cond);
                    self.block(then, g);
                    self.block(otherwise, g);
                }
                Stmt::Role { body, .. } => self.block(body, guarded),
                Stmt::Fill { dst, value } if whole(self.f, dst) && !self.reads(*value) => {}
                Stmt::Alloc { .. }
                | Stmt::Barrier
                | Stmt::Assume { .. }
                | Stmt::DeviceAssert { .. }
                | Stmt::AllocBarrier { .. }
                | Stmt::BarrierArrive { .. }
                | Stmt::BarrierWait { .. } => {}
                other => mentioned(self.f, other, &mut self.other),
            }
        }
    }
}

/// Whether `r` is the whole of its (constant-shape) buffer.
pub fn whole(f: &Function, r: &Region) -> bool {
    let Some(shape) = f.const_shape(r.buffer) else {
        return false;
    };
    shape.len() == r.ranges.len()
        && r.ranges.iter().zip(&shape).all(|(x, &n)| {
            f.as_const_int(x.start) == Some(0) && f.as_const_int(x.extent) == Some(n)
        })
}

/// Adds every buffer `stmt` (with the statements nested in it) names or
/// loads from to `out`.
fn mentioned(f: &Function, stmt: &Stmt, out: &mut HashSet<Handle<Buffer>>) {
    let mut visit = |s: &Stmt| {
        let mut exprs = stmt_exprs(s);
        match s {
            Stmt::Store { buffer, .. }
            | Stmt::Alloc { buffer, .. }
            | Stmt::WarpReduce { buffer, .. } => {
                out.insert(*buffer);
            }
            Stmt::Copy { src, dst } => {
                out.extend([src.buffer, dst.buffer]);
            }
            Stmt::Gemm { a, b, c, .. } => out.extend([a.buffer, b.buffer, c.buffer]),
            Stmt::Fill { dst, .. } => {
                out.insert(dst.buffer);
            }
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                out.insert(dst.buffer);
                if let AtomicValue::Region(r) = value {
                    out.insert(r.buffer);
                }
            }
            Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
                out.extend([*src, *dst]);
            }
            _ => {}
        }
        while let Some(e) = exprs.pop() {
            if let Some(node) = f.exprs.try_get(e) {
                if let Expr::Load { buffer, .. } = node {
                    out.insert(*buffer);
                }
                exprs.extend(node.operands());
            }
        }
    };
    visit(stmt);
    let nested: Vec<&Block> = match stmt {
        Stmt::Kernel { body, .. }
        | Stmt::For { body, .. }
        | Stmt::Parallel { body, .. }
        | Stmt::Role { body, .. } => vec![body],
        Stmt::If {
            then, otherwise, ..
        } => vec![then, otherwise],
        _ => Vec::new(),
    };
    for b in nested {
        b.walk(&mut |s, _| visit(s));
    }
}

/// The expressions a statement reads directly (not those of the blocks
/// nested in it).
pub fn stmt_exprs(stmt: &Stmt) -> Vec<Handle<Expr>> {
    let region = |r: &Region, out: &mut Vec<Handle<Expr>>| {
        for range in &r.ranges {
            out.push(range.start);
            out.push(range.extent);
        }
    };
    let mut out = Vec::new();
    match stmt {
        Stmt::Kernel { grid, .. } => out.extend(grid),
        Stmt::Alloc { init, .. } => out.extend(init),
        Stmt::For { start, extent, .. } => out.extend([*start, *extent]),
        Stmt::Parallel { extents, .. } => out.extend(extents),
        Stmt::If { cond, .. } | Stmt::Assume { cond } | Stmt::DeviceAssert { cond } => {
            out.push(*cond)
        }
        Stmt::Let { value, .. } => out.push(*value),
        Stmt::Store { indices, value, .. } | Stmt::WarpReduce { indices, value, .. } => {
            out.extend(indices);
            out.push(*value);
        }
        Stmt::Copy { src, dst } => {
            region(src, &mut out);
            region(dst, &mut out);
        }
        Stmt::Gemm {
            a,
            b,
            c,
            clear_accum,
            ..
        } => {
            for r in [a, b, c] {
                region(r, &mut out);
            }
            out.push(*clear_accum);
        }
        Stmt::Fill { dst, value } => {
            region(dst, &mut out);
            out.push(*value);
        }
        Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
            region(dst, &mut out);
            match value {
                AtomicValue::Scalar(e) => out.push(*e),
                AtomicValue::Region(r) => region(r, &mut out),
            }
        }
        Stmt::BarrierArrive { index, .. } => out.push(*index),
        Stmt::BarrierWait { index, parity, .. } => out.extend([*index, *parity]),
        Stmt::Reduce { .. }
        | Stmt::Cumsum { .. }
        | Stmt::Barrier
        | Stmt::AllocBarrier { .. }
        | Stmt::Role { .. } => {}
    }
    out
}
