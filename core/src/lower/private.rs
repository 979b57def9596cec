//! Per-thread buffers: `var` and `local` buffers that only scalar code
//! touches, kept as one copy per thread.
//!
//! TileLang gives every thread its own copy of a `T.alloc_var` or
//! `T.alloc_local` buffer: a thread's store changes its copy alone, a load
//! reads its own copy. The lowering otherwise keeps one copy per block in
//! shared memory, which gives the same answer while every thread stores the
//! same value (block-level code), but not when code that runs per thread
//! stores into it (`acc[0] += A[tx, k]`, or a store under `if tx < 64:`).
//!
//! # Which buffers
//! Those `crate::ir::per_thread` picks (the reference interpreter uses the
//! same analysis): some store into the buffer runs per thread, and every
//! use of it is scalar code, a whole fill or its allocation. Others keep
//! the per-block copy, and a per-thread store into them is refused
//! (`guard.rs`).
//!
//! # Code
//! The buffer becomes a per-thread local array (row-major); constant
//! indices name its elements, others index it at run time (the backend
//! keeps such an array in thread-private memory). An index that may leave
//! the buffer is guarded as a shared-memory access is: the load gives
//! zero, the store is skipped. Per-thread copies are never shared, so they
//! take no part in barriers. A load of a per-thread buffer counts as
//! thread-dependent (`guard.rs`): different threads may see different
//! values.

use std::collections::HashMap;

use super::{
    Expr, ExprKind, Handle, Index, Lower, RegId, RegRef, RegisterKind, Result, Stmt, StmtKind, ir,
    lit_i32, reg_expr,
};
use crate::ir::{DType, Literal};

/// A buffer kept per thread.
#[derive(Clone, Debug)]
pub(super) struct PrivateBuf {
    pub(super) arr: RegId,
    pub(super) dims: Vec<i64>,
}

impl Lower<'_> {
    /// Gives the kernel's per-thread buffers (`ir::per_thread`, the
    /// analysis the reference interpreter shares) their arrays, unless a
    /// pin keeps one elsewhere.
    pub(super) fn find_private(&mut self, thread_var: Handle<ir::Var>, body: &ir::Block) {
        let f = self.f;
        let mut chosen: Vec<Handle<ir::Buffer>> =
            ir::per_thread::per_thread_buffers(f, body, thread_var)
                .into_iter()
                .filter(|b| {
                    self.pins
                        .layouts
                        .get(b)
                        .is_none_or(|l| *l == ir::BufferLayout::Private)
                })
                .collect();
        chosen.sort();
        for b in chosen {
            let dims = f.const_shape(b).unwrap_or_default();
            let len: i64 = dims.iter().product();
            let name = self.claim(&f.buffers[b].name);
            let arr = self.add_reg(
                name,
                f.buffers[b].dtype,
                RegisterKind::Array { len: len as u32 },
            );
            self.private.insert(b, PrivateBuf { arr, dims });
        }
    }

    /// An allocation inside a `T.Parallel` nest: a `var` or `local` buffer
    /// of each iteration (`x = T.alloc_var(T.float32, init=A[i])` in the
    /// nest's body). The thread running an iteration keeps it in its own
    /// array, allocated once for the kernel and set anew (to its initial
    /// value, if any) by every iteration, which runs wholly on that thread.
    pub(super) fn iteration_alloc(
        &mut self,
        b: Handle<ir::Buffer>,
        init: Option<Handle<ir::Expr>>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let f = self.f;
        let buffer = &f.buffers[b];
        let dims = f
            .const_shape(b)
            .filter(|d| (1..=ir::per_thread::MAX_ELEMS).contains(&d.iter().product::<i64>()));
        let (true, Some(dims)) = (
            matches!(buffer.scope, ir::Scope::Var | ir::Scope::Local),
            dims,
        ) else {
            return Err(self.unsupported(format!(
                "the allocation of the {} buffer `{}` inside `parallel` (only `var` and small \
                 `local` buffers of constant shape can be allocated per iteration)",
                buffer.scope.name(),
                buffer.name
            )));
        };
        if !self.private.contains_key(&b) {
            let len: i64 = dims.iter().product();
            let name = self.claim(&buffer.name);
            let arr = self.add_reg(name, buffer.dtype, RegisterKind::Array { len: len as u32 });
            self.private.insert(b, PrivateBuf { arr, dims });
        }
        if let Some(init) = init {
            let value = self.expr(init, out)?;
            self.private_fill(b, value, out);
        }
        Ok(())
    }

    /// Whether `b` is kept per thread.
    pub(super) fn is_private(&self, b: Handle<ir::Buffer>) -> bool {
        self.private.contains_key(&b)
    }

    /// The array element of `idx` and the in-bounds condition (`None` when
    /// the index is provably inside).
    fn private_elem(
        &self,
        b: Handle<ir::Buffer>,
        idx: &[Index],
    ) -> Result<(RegId, Expr, Option<Expr>)> {
        let p = &self.private[&b];
        if p.dims.len() != idx.len() {
            return Err(self.malformed("index count differs from the buffer's rank"));
        }
        let dims: Vec<(Expr, Option<i64>)> =
            p.dims.iter().map(|&n| (lit_i32(n), Some(n))).collect();
        let scales: Vec<Expr> = p.dims.iter().map(|&n| lit_i32(n)).collect();
        let (linear, guard) = self.row_major(idx, &dims, &scales)?;
        Ok((p.arr, linear, guard))
    }

    /// A load of this thread's copy.
    pub(super) fn private_load(
        &mut self,
        b: Handle<ir::Buffer>,
        idx: &[Index],
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let dtype = self.f.buffers[b].dtype;
        let (arr, index, guard) = self.private_elem(b, idx)?;
        let elem = Expr {
            kind: ExprKind::Elem(arr, Box::new(index)),
            dtype,
        };
        let reg = self.temp("v", dtype);
        match guard {
            None => self.assign(out, reg, elem),
            Some(cond) => {
                self.assign(out, reg, zero(dtype));
                let mut then_body = Vec::new();
                self.assign(&mut then_body, reg, elem);
                out.push(self.stmt(StmtKind::If {
                    cond,
                    then_body,
                    else_body: None,
                }));
            }
        }
        Ok(reg_expr(reg, dtype))
    }

    /// A store into this thread's copy.
    pub(super) fn private_store(
        &mut self,
        b: Handle<ir::Buffer>,
        idx: &[Index],
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (arr, index, guard) = self.private_elem(b, idx)?;
        let assign = self.stmt(StmtKind::Assign {
            dst: RegRef::Elem(arr, index),
            value,
        });
        match guard {
            None => out.push(assign),
            Some(cond) => out.push(self.stmt(StmtKind::If {
                cond,
                then_body: vec![assign],
                else_body: None,
            })),
        }
        Ok(())
    }

    /// Sets every element of this thread's copy to `value`.
    pub(super) fn private_fill(&mut self, b: Handle<ir::Buffer>, value: Expr, out: &mut Vec<Stmt>) {
        let p = &self.private[&b];
        let (arr, len) = (p.arr, p.dims.iter().product::<i64>());
        let v = match value.kind {
            ExprKind::Literal(_) | ExprKind::Reg(_) => value,
            _ => {
                let r = self.temp("s", value.dtype);
                let dtype = value.dtype;
                self.assign(out, r, value);
                reg_expr(r, dtype)
            }
        };
        for i in 0..len {
            out.push(self.stmt(StmtKind::Assign {
                dst: RegRef::Elem(arr, lit_i32(i)),
                value: v.clone(),
            }));
        }
    }
}

/// Zero of `dtype` (the value of a load outside the buffer).
fn zero(dtype: DType) -> Expr {
    Expr::literal(Literal::of(dtype, 0.0))
}

/// Buffers kept per thread, by handle.
pub(super) type Privates = HashMap<Handle<ir::Buffer>, PrivateBuf>;
