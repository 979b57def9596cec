//! Lowering of `copy` and `fill` (and `alloc` initial values): vector moves
//! where they are provably correct, one element per thread and step
//! otherwise.
//!
//! # Algorithm
//! A region is moved in row-major order of its extents. With vectors of
//! `w` elements, element `k` of a `copy` still goes to element `k` of the
//! destination, but a thread moves the `w` contiguous elements
//! `v·w .. v·w + w` of vector `v` with one `load`/`store` of width `w`,
//! and vectors go to threads cyclically (thread `t` moves vectors `t, t +
//! T, …`), so consecutive threads move consecutive vectors and a warp's
//! accesses coalesce. A conversion between element types happens per
//! element in registers between the load and the store.
//!
//! The width is the largest power of two `w ≤ 8` for which every fact
//! below is proven; otherwise it is 1 and the baseline code is emitted
//! unchanged:
//! - **Shape.** The innermost (last) extent `L` of the region is a
//!   multiple of `w`; for a `copy`, both regions have the same last
//!   extent, so a vector is contiguous on both sides.
//! - **Size.** `w` elements fit the target's widest access for the space
//!   (`vector_widths`, 16 bytes when the description gives none, and the
//!   16-byte alignment of shared buffers): at most 8 × f16, 4 × f32.
//! - **Alignment.** Thread IR requires a vector's linear index to be a
//!   multiple of `w`. The linear index is `Σ_d (start_d + i_d)·stride_d`
//!   with `stride_d` a multiple of the buffer's last extent `D` for every
//!   `d` but the last. So it suffices that `D` and the region's last start
//!   are multiples of `w` (the last digit steps by `w`). Both are shown by
//!   [`Lower::multiple`]: constants, `let`s, block indices times
//!   constants, and symbolic extents through `assume(n % c == 0)`.
//! - **Bounds.** The same facts make every vector entirely inside or
//!   entirely outside its buffer along the last dimension (a vector starts
//!   at a multiple of `w` and `D` is one), and the other dimensions are
//!   constant across a vector. So the baseline guard, evaluated on the
//!   vector's first element, is exact for the whole vector: a guarded load
//!   reads zeros (`else zero`) and a guarded store is skipped, as the
//!   reference does element by element.

use super::{
    DType, Expr, ExprKind, Index, Lower, Mem, RegId, RegRef, RegisterKind, Result, SHARED_ALIGN,
    Stmt, StmtKind, gcd, lit_i32, non_unit, reg_expr,
};
use crate::ir::{self, BinaryOp, Handle, Region};
use crate::thread::{Guard, GuardElse};

impl Lower<'_> {
    /// The widest vector (in elements, at most 8) that one access of
    /// `dtype` in this memory may move: the target's width for the space,
    /// and for shared memory the buffer alignment.
    pub(super) fn vector_limit(&self, shared: bool, dtype: DType) -> i64 {
        let widths = &self.target.vector_widths;
        let bytes = if shared {
            let align = SHARED_ALIGN.max(dtype.bytes() as u32);
            widths.shared_bytes.unwrap_or(16).min(align)
        } else {
            widths.global_bytes.unwrap_or(16)
        };
        let elems = i64::from(bytes) / (dtype.bytes().max(1) as i64);
        let mut w = 1;
        while w * 2 <= elems.min(8) {
            w *= 2;
        }
        w
    }

    /// The widest vector width for moving a region of `buffer` whose
    /// starts are multiples of `start_mults` and whose extents are
    /// `extents`, from the rules in the module documentation.
    pub(super) fn region_width(
        &self,
        buffer: Handle<ir::Buffer>,
        start_mults: &[i64],
        extents: &[i64],
    ) -> i64 {
        let Ok(mem) = self.mem(buffer) else {
            return 1;
        };
        let (Some(&last), Some(&start)) = (extents.last(), start_mults.last()) else {
            return 1;
        };
        let dtype = self.f.buffers[buffer].dtype;
        // What a row's start is a multiple of: the last extent, or the
        // pitch of a padded buffer.
        let (shared, dim) = match &mem {
            Mem::Global { mults, .. } => (false, mults.last().copied()),
            Mem::Shared { dims, .. } => (true, self.physical_shape(buffer, dims).last().copied()),
        };
        let Some(dim) = dim.filter(|&d| d > 0) else {
            return 1;
        };
        // `gcd` with 0 leaves the other number: a zero start or extent
        // constrains nothing.
        let facts = gcd(gcd(last, start), dim);
        let mut w = self
            .vector_limit(shared, dtype)
            .min(self.map_vector(buffer));
        while w > 1 && facts % w != 0 {
            w /= 2;
        }
        w
    }

    /// Digits of vector `p` over `extents` (last extent in vectors of `w`),
    /// with the last digit scaled back to elements.
    pub(super) fn vector_digits(&self, p: &Expr, extents: &[i64], w: i64) -> Result<Vec<Index>> {
        let mut ext = extents.to_vec();
        let Some(last) = ext.last_mut() else {
            return Ok(Vec::new());
        };
        let len = *last;
        *last = len / w;
        let mut digits = self.digits(p, &ext)?;
        if let Some(d) = digits.last_mut() {
            d.expr = self.bin(BinaryOp::Mul, d.expr.clone(), lit_i32(w))?;
            d.range = Some((0, len - w));
        }
        Ok(digits)
    }

    /// A local array of `w` elements for vector moves.
    fn vector_reg(&mut self, base: &str, dtype: DType, w: i64) -> RegId {
        let name = self.fresh(base);
        self.add_reg(name, dtype, RegisterKind::Array { len: w as u32 })
    }

    /// `load xw arr[0] <- buffer[idx]`, guarded as the first element is.
    fn vector_load(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        arr: RegId,
        w: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        self.vector_load_at(buffer, idx, arr, lit_i32(0), w, out)
    }

    /// `load xw arr[at] <- buffer[idx]`, guarded as the first element is.
    pub(super) fn vector_load_at(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        arr: RegId,
        at: Expr,
        w: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (src, index, guard) = self.address(buffer, idx)?;
        out.push(self.stmt(StmtKind::Load {
            width: w as u32,
            dst: RegRef::Elem(arr, at),
            src,
            index,
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Zero,
            }),
        }));
        Ok(())
    }

    /// `store xw buffer[idx] <- arr[0]`, guarded as the first element is.
    fn vector_store(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        arr: RegId,
        w: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        self.vector_store_at(buffer, idx, arr, lit_i32(0), w, out)
    }

    /// `store xw buffer[idx] <- arr[at]`, guarded as the first element is.
    pub(super) fn vector_store_at(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        arr: RegId,
        at: Expr,
        w: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (dst, index, guard) = self.address(buffer, idx)?;
        out.push(self.stmt(StmtKind::Store {
            width: w as u32,
            dst,
            index,
            src: RegRef::Elem(arr, at),
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Skip,
            }),
        }));
        Ok(())
    }

    pub(super) fn copy(&mut self, src: &Region, dst: &Region, out: &mut Vec<Stmt>) -> Result<()> {
        let (sstarts, sext) = self.region(src, out)?;
        let (dstarts, dext) = self.region(dst, out)?;
        if non_unit(&sext) != non_unit(&dext) {
            return Err(self.malformed("copy regions differ in shape"));
        }
        if src.buffer == dst.buffer && src != dst {
            return Err(self.unsupported("a copy within one buffer"));
        }
        let count: i64 = sext.iter().product();
        let from = self.f.buffers[src.buffer].dtype;
        let to = self.f.buffers[dst.buffer].dtype;
        let smults: Vec<i64> = src.ranges.iter().map(|r| self.multiple(r.start)).collect();
        let dmults: Vec<i64> = dst.ranges.iter().map(|r| self.multiple(r.start)).collect();
        let w = if sext.last() == dext.last() && count > 0 {
            self.region_width(src.buffer, &smults, &sext)
                .min(self.region_width(dst.buffer, &dmults, &dext))
        } else {
            1
        };
        if w > 1 && self.copy_async && from == to {
            let bytes = (w * from.bytes() as i64) as u32;
            if self.async_sizes().contains(&bytes) {
                // Tried aside: a destination that may leave its shared
                // buffer keeps the guarded synchronous stores.
                let mut trial = Vec::new();
                let mut guarded = false;
                self.cyclic(count / w, &mut trial, |s, p, body| {
                    let sd = s.vector_digits(&p, &sext, w)?;
                    let sidx = s.offset(&sstarts, &sd)?;
                    let dd = s.vector_digits(&p, &dext, w)?;
                    let didx = s.offset(&dstarts, &dd)?;
                    let (from, src_index, guard) = s.address(src.buffer, &sidx)?;
                    let (to, dst_index, dguard) = s.address(dst.buffer, &didx)?;
                    guarded = dguard.is_some();
                    body.push(s.async_copy_stmt(
                        bytes,
                        (from, src_index),
                        (to, dst_index),
                        guard,
                    )?);
                    Ok(())
                })?;
                if !guarded {
                    out.append(&mut trial);
                    return Ok(());
                }
            }
        }
        if self.copy_async {
            self.async_fallback = true;
        }
        if w > 1 {
            let sv = self.vector_reg("v", from, w);
            let dv = if from == to {
                sv
            } else {
                self.vector_reg("s", to, w)
            };
            return self.cyclic(count / w, out, |s, p, body| {
                let sd = s.vector_digits(&p, &sext, w)?;
                let sidx = s.offset(&sstarts, &sd)?;
                let dd = s.vector_digits(&p, &dext, w)?;
                let didx = s.offset(&dstarts, &dd)?;
                s.vector_load(src.buffer, &sidx, sv, w, body)?;
                if dv != sv {
                    for j in 0..w {
                        let v = Expr {
                            kind: ExprKind::Elem(sv, Box::new(lit_i32(j))),
                            dtype: from,
                        };
                        body.push(s.stmt(StmtKind::Assign {
                            dst: RegRef::Elem(dv, lit_i32(j)),
                            value: Expr::cast(to, v),
                        }));
                    }
                }
                s.vector_store(dst.buffer, &didx, dv, w, body)
            });
        }
        self.cyclic(count, out, |s, p, body| {
            let sd = s.digits(&p, &sext)?;
            let sidx = s.offset(&sstarts, &sd)?;
            let dd = s.digits(&p, &dext)?;
            let didx = s.offset(&dstarts, &dd)?;
            let v = s.load(src.buffer, &sidx, body)?;
            let v = if v.dtype == to { v } else { Expr::cast(to, v) };
            s.store(dst.buffer, &didx, v, body)
        })
    }

    /// Stores `value` into every element of the box `starts + [0,
    /// extents)` of `buffer`; `start_mults` are the starts' divisibility.
    pub(super) fn fill_box(
        &mut self,
        buffer: Handle<ir::Buffer>,
        starts: &[Index],
        start_mults: &[i64],
        extents: &[i64],
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let dtype = self.f.buffers[buffer].dtype;
        let count: i64 = extents.iter().product();
        let extents = extents.to_vec();
        let w = if count > 0 {
            self.region_width(buffer, start_mults, &extents)
        } else {
            1
        };
        if w > 1 {
            let value = match value.kind {
                ExprKind::Literal(_) => value,
                _ => reg_expr(self.in_register(value, out).reg(), dtype),
            };
            let arr = self.vector_reg("f", dtype, w);
            for j in 0..w {
                out.push(self.stmt(StmtKind::Assign {
                    dst: RegRef::Elem(arr, lit_i32(j)),
                    value: value.clone(),
                }));
            }
            return self.cyclic(count / w, out, |s, p, body| {
                let d = s.vector_digits(&p, &extents, w)?;
                let idx = s.offset(starts, &d)?;
                s.vector_store(buffer, &idx, arr, w, body)
            });
        }
        let value = self.in_register(value, out);
        self.cyclic(count, out, |s, p, body| {
            let d = s.digits(&p, &extents)?;
            let idx = s.offset(starts, &d)?;
            s.store(buffer, &idx, reg_expr(value.reg(), dtype), body)
        })
    }
}
