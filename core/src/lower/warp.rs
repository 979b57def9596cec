//! Warp reductions (`ir::Stmt::WarpReduce`, TileLang's
//! `T.warp_reduce_sum`, ...).
//!
//! Every thread computes the value into a register, then runs TileLang's
//! five-step butterfly: `shfl_xor` by 16, 8, 4, 2 and 1 within groups of
//! 32 lanes (also on 64-lane wavefronts, as TileLang's AMD template
//! does), each step combining the own value (left) with the partner's
//! (right) exactly as the reference interpreter's butterfly does; the
//! result is stored into the thread's copy of the per-thread buffer.
//! Only code that every thread of the block reaches together may hold
//! one: not under an `if` on the thread index, in a role, or in a loop
//! whose bounds read the thread index.

use super::{Expr, Handle, Lower, RegRef, Result, Stmt, StmtKind, ir, lit_i32, reg_expr};
use crate::ir::{BinaryOp, DType, ReduceKind, UnaryOp, WARP_REDUCE_LANES};
use crate::thread::ShuffleKind;
use crate::verify::AccessSite;

impl Lower<'_> {
    pub(super) fn warp_reduce(
        &mut self,
        kind: ReduceKind,
        buffer: Handle<ir::Buffer>,
        indices: &[Handle<ir::Expr>],
        value: Handle<ir::Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        if self.guard.is_some() || self.role.is_some() || self.tdep_loops > 0 {
            return Err(self.unsupported(
                "a warp reduction under an `if` on the thread index, in a `T.ws` role, or in a \
                 loop whose bounds read the thread index (TileLang's warp reductions need every \
                 lane of the warp to reach them together; compute the value for every thread \
                 and reduce it outside)",
            ));
        }
        if self.block_threads % i64::from(WARP_REDUCE_LANES) != 0 {
            return Err(self.unsupported(format!(
                "a warp reduction in a block of {} threads, not a multiple of {WARP_REDUCE_LANES}",
                self.block_threads
            )));
        }
        if !self.is_private(buffer) {
            return Err(
                self.unsupported("a warp reduction into a buffer that is not kept per thread")
            );
        }
        let dtype = self.f.buffers[buffer].dtype;
        let mut exprs = indices.to_vec();
        exprs.push(value);
        self.uniform_reads(&exprs, out);
        let mut idx = Vec::new();
        for &i in indices {
            idx.push(self.index(i, out)?);
        }
        let v = self.expr(value, out)?;
        let v = if v.dtype == dtype {
            v
        } else {
            Expr::cast(dtype, v)
        };
        let acc = self.temp("wred", dtype);
        self.assign(out, acc, v);
        let mut dist = WARP_REDUCE_LANES / 2;
        while dist > 0 {
            let other = self.temp("wlane", dtype);
            out.push(self.stmt(StmtKind::Shuffle {
                kind: ShuffleKind::Xor,
                dst: RegRef::Scalar(other),
                value: reg_expr(acc, dtype),
                lane: lit_i32(i64::from(dist)),
                width: WARP_REDUCE_LANES,
            }));
            let m = self.warp_combine(kind, dtype, reg_expr(acc, dtype), reg_expr(other, dtype))?;
            self.assign(out, acc, m);
            dist /= 2;
        }
        let site = AccessSite::Store {
            span: self.span,
            buffer,
        };
        self.trusting(&[(site, buffer)], |s| {
            s.store(buffer, &idx, reg_expr(acc, dtype), out)
        })
    }

    /// One butterfly step: TileLang's operator on the own value `a` and
    /// the partner's `b`.
    fn warp_combine(&self, kind: ReduceKind, dtype: DType, a: Expr, b: Expr) -> Result<Expr> {
        let ty = |e: std::result::Result<Expr, crate::thread::TypeError>| {
            e.map_err(|e| self.malformed(format!("warp reduction: {e}")))
        };
        let float = dtype.is_float();
        match kind {
            ReduceKind::Sum => ty(Expr::binary(BinaryOp::Add, a, b)),
            ReduceKind::BitAnd => ty(Expr::binary(BinaryOp::BitAnd, a, b)),
            ReduceKind::BitOr => ty(Expr::binary(BinaryOp::BitOr, a, b)),
            ReduceKind::Max | ReduceKind::Min if !float => {
                let op = if kind == ReduceKind::Max {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                };
                ty(Expr::binary(op, a, b))
            }
            // f64: TileLang's generic `a < b ? b : a` (max), `b < a ? b : a`
            // (min).
            ReduceKind::Max if dtype == DType::F64 => {
                let c = ty(Expr::binary(BinaryOp::Lt, a.clone(), b.clone()))?;
                ty(Expr::select(c, b, a))
            }
            ReduceKind::Min if dtype == DType::F64 => {
                let c = ty(Expr::binary(BinaryOp::Lt, b.clone(), a.clone()))?;
                ty(Expr::select(c, b, a))
            }
            // `fmaxf` / `__hmax`: a NaN operand gives the other.
            ReduceKind::Max | ReduceKind::Min => {
                let op = if kind == ReduceKind::Max {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                };
                let m = ty(Expr::binary(op, a.clone(), b.clone()))?;
                let a_nan = ty(Expr::unary(UnaryOp::IsNan, a.clone()))?;
                let b_nan = ty(Expr::unary(UnaryOp::IsNan, b.clone()))?;
                let inner = ty(Expr::select(a_nan, b, m))?;
                ty(Expr::select(b_nan, a, inner))
            }
            other => Err(self.malformed(format!("warp reduction `{}`", other.name()))),
        }
    }

    /// `T.device_assert(cond)`: every thread that runs it traps where
    /// `cond` is false.
    pub(super) fn device_assert(
        &mut self,
        cond: Handle<ir::Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let c = self.expr(cond, out)?;
        let failed = Expr::unary(UnaryOp::Not, c)
            .map_err(|e| self.malformed(format!("device assertion: {e}")))?;
        out.push(self.stmt(StmtKind::If {
            cond: failed,
            then_body: vec![self.stmt(StmtKind::Trap)],
            else_body: None,
        }));
        Ok(())
    }
}
