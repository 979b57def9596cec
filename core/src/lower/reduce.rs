//! `reduce`: folding one dimension of an on-chip buffer.
//!
//! # Algorithm
//! The source has shape `[outer…, len, inner…]` and the destination one
//! element per (outer, inner) pair: `P = outer · inner` outputs. Values
//! fold in an `f64` accumulator (floats) or an `i64` one (integers), start
//! from the identity, fold the old destination value in unless the
//! reduction clears, and round once into the destination's type — the
//! reference interpreter's arithmetic. Maxima and minima whose source and
//! destination are floats of at most 32 bits fold in `f32` instead: every
//! value involved is exactly an `f32` and a maximum only picks one, so
//! the result is the same, at half the cost of `f64` on most GPUs.
//!
//! **Cooperative groups.** With `T` threads, a SIMT width `W`, and fewer
//! outputs than threads, each output gets a group of `G` consecutive
//! threads: `G` is the largest power of two with `P · G ≤ T`, `G ≤ len`
//! and `G` dividing `T`. Thread `t` works for output `o = t / G` as member
//! `g = t % G`:
//! 1. it folds the elements `r = g, g + G, …` of its output's line into a
//!    private partial (threads past the last group, `o ≥ P`, fold the last
//!    output's line again, so that every thread runs the same code);
//! 2. partials combine by butterfly shuffles (`shfl_xor` by `min(G, W)/2,
//!    …, 1` within segments of `min(G, W)` lanes): afterwards every lane of
//!    a segment holds the segment's fold;
//! 3. when a group spans several warps (`G > W`), lane 0 of each warp
//!    writes its fold to a shared scratch array of `T / W` accumulators
//!    (one per kernel and accumulator type), a barrier follows, and every
//!    thread folds its group's `G / W` entries in warp order;
//! 4. member 0 of each group with `o < P` folds in the old value (unless
//!    the reduction clears), rounds and stores.
//!
//! Sums therefore associate differently from the reference's left-to-right
//! fold. In `f64` that changes the result by far less than one rounding of
//! an `f32` destination, but it can differ in the last bit; maxima and
//! minima (with NaN propagation and `+0 > −0`) and wrapping integer sums
//! are associative and commutative, so they agree exactly. The scratch
//! array is tracked by the barrier analysis as the pseudo-buffer
//! [`SCRATCH`], which a `reduce` whose groups span several warps reads and
//! writes.
//!
//! **One thread per output.** With at least as many outputs as threads
//! (`G = 1`), with a target without a SIMT width, or when shuffles cannot
//! be used, outputs are distributed cyclically and each thread folds a
//! whole line alone, in the reference's order (bit-identical results).

use super::{
    BinaryOp, DType, Expr, Handle, Literal, Lower, MemRef, ReduceKind, RegRef, RegisterKind,
    Result, SharedBuffer, SharedId, Stmt, StmtKind, UnaryOp, Unroll, ir, lit_i32, non_unit,
    reg_expr,
};
use crate::thread::ShuffleKind;

/// The barrier analysis's name for the cross-warp scratch arrays of
/// cooperative reductions (never a Tile IR buffer index).
pub(super) const SCRATCH: usize = usize::MAX;

/// What one reduction folds: the combination, its identity and types.
#[derive(Clone, Copy)]
struct Fold {
    kind: ReduceKind,
    /// The accumulator type: `f64`, `f32` (see [`Fold::accumulator`]) or
    /// `i64`.
    acc: DType,
    src: DType,
    dst: DType,
}

/// Shape of a reduction: `outer · inner` outputs, lines of `len`.
#[derive(Clone)]
struct Lines {
    outer: i64,
    len: i64,
    inner: i64,
    src: SharedId,
    dst: SharedId,
    /// The destination's Tile IR buffer index, for the barrier analysis.
    dst_buf: usize,
    /// The source's and the destination's swizzled layouts, when a pin
    /// gave them one (`swizzle.rs`, "Pinned layouts"): their elements are
    /// then addressed through the layout.
    src_swizzle: Option<super::mapped::Arranged>,
    dst_swizzle: Option<super::mapped::Arranged>,
}

impl Lines {
    fn outputs(&self) -> i64 {
        self.outer * self.inner
    }
}

impl Fold {
    /// The accumulator type of a reduction of `kind` from `src` into
    /// `dst`: `f32` for maxima and minima of floats up to 32 bits (exact:
    /// they select one of their operands), otherwise `f64` for floats and
    /// `i64` for integers.
    fn accumulator(kind: ReduceKind, src: DType, dst: DType) -> DType {
        let narrow_float = |d: DType| d.is_float() && d.bits() <= 32;
        if !(src.is_float() || dst.is_float()) {
            DType::I64
        } else if matches!(kind, ReduceKind::Max | ReduceKind::Min | ReduceKind::AbsMax)
            && narrow_float(src)
            && narrow_float(dst)
        {
            DType::F32
        } else {
            DType::F64
        }
    }

    fn identity(&self) -> Expr {
        if self.acc.is_float() {
            return Expr::literal(Literal::Float(
                match self.kind {
                    ReduceKind::Max => f64::NEG_INFINITY,
                    ReduceKind::Min => f64::INFINITY,
                    _ => 0.0,
                },
                self.acc,
            ));
        }
        let (lo, hi) = self.dst.int_range().unwrap_or((0, 1));
        let v = match self.kind {
            ReduceKind::Max => lo,
            ReduceKind::Min => hi,
            // All ones in the 64-bit accumulator.
            ReduceKind::BitAnd => -1,
            _ => 0,
        };
        Expr::literal(Literal::Int(
            i64::try_from(v).unwrap_or(i64::MAX),
            DType::I64,
        ))
    }
}

impl Lower<'_> {
    pub(super) fn reduce(
        &mut self,
        kind: ReduceKind,
        src: Handle<ir::Buffer>,
        dst: Handle<ir::Buffer>,
        dim: usize,
        clear: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let sshape = self.const_shape(src)?;
        let dshape = self.const_shape(dst)?;
        if dim >= sshape.len() {
            return Err(self.malformed("reduce dimension out of range"));
        }
        let mut expected = sshape.clone();
        expected.remove(dim);
        if non_unit(&expected) != non_unit(&dshape) {
            return Err(self.malformed("reduce shapes disagree"));
        }
        let (sd, dd) = (self.f.buffers[src].dtype, self.f.buffers[dst].dtype);
        let float = sd.is_float() || dd.is_float();
        if float && kind.is_bitwise() {
            return Err(self.malformed("a bitwise reduction of floating-point values"));
        }
        if !float
            && matches!(kind, ReduceKind::Max | ReduceKind::Min | ReduceKind::AbsMax)
            && (sd == DType::U64 || dd == DType::U64)
        {
            return Err(self.unsupported("an integer max/min reduction over u64"));
        }
        let fold = Fold {
            kind,
            acc: Fold::accumulator(kind, sd, dd),
            src: sd,
            dst: dd,
        };
        if self.resident.contains_key(&src) {
            if dim + 1 != sshape.len() {
                return Err(self.demote(src));
            }
            return self.reduce_resident(fold, src, dst, clear, out);
        }
        if let Some(layout) = self.spread.get(&src).cloned() {
            let plan = self.row_plan(&layout.shape, layout.v);
            let w = self.target.simt_width();
            let (Some(plan), Some(w), true) = (plan, w, dim + 1 == sshape.len()) else {
                self.demoted = Some(src);
                return Err(self.unsupported("this reduction of a register fragment"));
            };
            let dst_id = self.shared_of(dst)?;
            return self.reduce_spread(
                fold,
                &layout,
                plan,
                i64::from(w),
                (dst_id, self.canon(dst).index(), self.arranged(dst)),
                clear,
                out,
            );
        }
        let lines = Lines {
            outer: sshape[..dim].iter().product(),
            len: sshape[dim],
            inner: sshape[dim + 1..].iter().product(),
            src: self.shared_of(src)?,
            dst: self.shared_of(dst)?,
            dst_buf: self.canon(dst).index(),
            src_swizzle: self.arranged(src),
            dst_swizzle: self.arranged(dst),
        };
        match self.group_size(&lines) {
            Some((g, w)) => self.reduce_cooperative(fold, lines, clear, g, w, out),
            None => self.reduce_per_output(fold, lines, clear, out),
        }
    }

    /// Whether the `reduce` of `src` along `dim` exchanges partials
    /// through the scratch array (groups spanning several warps).
    pub(super) fn reduce_uses_scratch(&self, src: Handle<ir::Buffer>, dim: usize) -> bool {
        if self.resident.contains_key(&src) {
            return false;
        }
        if let Some(uses) = self.spread_reduce_uses_scratch(src) {
            return uses;
        }
        let Some(shape) = self.f.const_shape(src) else {
            return false;
        };
        if dim >= shape.len() {
            return false;
        }
        let lines = Lines {
            outer: shape[..dim].iter().product(),
            len: shape[dim],
            inner: shape[dim + 1..].iter().product(),
            src: SharedId(0),
            dst: SharedId(0),
            dst_buf: 0,
            src_swizzle: None,
            dst_swizzle: None,
        };
        self.group_size(&lines).is_some_and(|(g, w)| g > w)
    }

    /// `(G, W)` for a cooperative reduction, or `None` for one thread per
    /// output (see the module documentation).
    fn group_size(&self, lines: &Lines) -> Option<(i64, i64)> {
        let w = i64::from(self.target.simt_width()?);
        let (t, p) = (self.threads, lines.outputs());
        if p < 1 || lines.len < 2 || !(w as u64).is_power_of_two() || i32::try_from(t).is_err() {
            return None;
        }
        let limit = (t / p).min(lines.len);
        if limit < 2 {
            return None;
        }
        let mut g = 1i64 << (63 - limit.leading_zeros());
        while g >= 2 && t % g != 0 {
            g /= 2;
        }
        (g >= 2).then_some((g, w))
    }

    /// `acc ∘ x` for values already in the accumulator type.
    fn combine(&self, kind: ReduceKind, acc: Expr, x: Expr) -> Result<Expr> {
        let abs = |v: Expr| Expr::unary(UnaryOp::Abs, v).map_err(|e| self.malformed(e.to_string()));
        match kind {
            ReduceKind::Sum => self.bin(BinaryOp::Add, acc, x),
            ReduceKind::AbsSum => self.bin(BinaryOp::Add, acc, abs(x)?),
            ReduceKind::Max => self.bin(BinaryOp::Max, acc, x),
            ReduceKind::Min => self.bin(BinaryOp::Min, acc, x),
            ReduceKind::AbsMax => self.bin(BinaryOp::Max, acc, abs(x)?),
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => self.merge(kind, acc, x),
        }
    }

    /// `acc = acc ∘ x` for partials (already folded: no `abs` again).
    fn merge(&self, kind: ReduceKind, acc: Expr, x: Expr) -> Result<Expr> {
        match kind {
            ReduceKind::Sum | ReduceKind::AbsSum => self.bin(BinaryOp::Add, acc, x),
            ReduceKind::Max | ReduceKind::AbsMax => self.bin(BinaryOp::Max, acc, x),
            ReduceKind::Min => self.bin(BinaryOp::Min, acc, x),
            // On the sign- or zero-extended values in the 64-bit
            // accumulator: the low bits are those of the narrow operation.
            ReduceKind::BitAnd => self.bin(BinaryOp::BitAnd, acc, x),
            ReduceKind::BitOr => self.bin(BinaryOp::BitOr, acc, x),
            ReduceKind::BitXor => self.bin(BinaryOp::BitXor, acc, x),
        }
    }

    /// Folds the elements `r = first, first + step, …` (`count` of them,
    /// guarded by `r < len` when `guarded`) of the line starting at `base`
    /// into `acc`.
    #[allow(clippy::too_many_arguments)]
    fn fold_line(
        &mut self,
        fold: Fold,
        lines: &Lines,
        acc: super::RegId,
        base: Expr,
        (first, count, step): (Expr, i64, i64),
        guarded: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let rname = self.fresh("r");
        let r = self.add_reg(rname, DType::I32, RegisterKind::Loop);
        let re = reg_expr(r, DType::I32);
        let mut rb = Vec::new();
        let off = self.bin(BinaryOp::Mul, re.clone(), lit_i32(lines.inner))?;
        let index = self.bin(BinaryOp::Add, base, off)?;
        let index = self.element(lines.src_swizzle.as_ref(), index)?;
        let x = self.temp("v", fold.src);
        rb.push(self.stmt(StmtKind::Load {
            width: 1,
            dst: RegRef::Scalar(x),
            src: MemRef::Shared(lines.src),
            index,
            guard: None,
        }));
        let xv = Expr::cast(fold.acc, reg_expr(x, fold.src));
        let next = self.combine(fold.kind, reg_expr(acc, fold.acc), xv)?;
        self.assign(&mut rb, acc, next);
        let rb = if guarded {
            vec![self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, re, lit_i32(lines.len))?,
                then_body: rb,
                else_body: None,
            })]
        } else {
            rb
        };
        out.push(self.stmt(StmtKind::For {
            var: r,
            start: first,
            count: lit_i32(count),
            step: lit_i32(step),
            unroll: Unroll::None,
            body: rb,
        }));
        Ok(())
    }

    /// The flat index of element 0 of output `q`'s line in the source:
    /// `(q / inner) · len · inner + q % inner`.
    fn line_base(&self, lines: &Lines, q: Expr) -> Result<Expr> {
        if lines.inner == 1 {
            return self.bin(BinaryOp::Mul, q, lit_i32(lines.len));
        }
        let o = self.bin(BinaryOp::FloorDiv, q.clone(), lit_i32(lines.inner))?;
        let i = self.bin(BinaryOp::FloorMod, q, lit_i32(lines.inner))?;
        let base = self.bin(BinaryOp::Mul, o, lit_i32(lines.len * lines.inner))?;
        self.bin(BinaryOp::Add, base, i)
    }

    /// Folds the old destination value in (unless `clear`), rounds and
    /// stores output `q`.
    fn finish_output(
        &mut self,
        fold: Fold,
        dst: SharedId,
        acc: super::RegId,
        q: Expr,
        clear: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        if !clear {
            let old = self.temp("v", fold.dst);
            out.push(self.stmt(StmtKind::Load {
                width: 1,
                dst: RegRef::Scalar(old),
                src: MemRef::Shared(dst),
                index: q.clone(),
                guard: None,
            }));
            let merged = self.merge(
                fold.kind,
                Expr::cast(fold.acc, reg_expr(old, fold.dst)),
                reg_expr(acc, fold.acc),
            )?;
            self.assign(out, acc, merged);
        }
        let res = self.in_register(Expr::cast(fold.dst, reg_expr(acc, fold.acc)), out);
        out.push(self.stmt(StmtKind::Store {
            width: 1,
            dst: MemRef::Shared(dst),
            index: q,
            src: res,
            guard: None,
        }));
        Ok(())
    }

    /// One thread per output, folding in the reference's order.
    fn reduce_per_output(
        &mut self,
        fold: Fold,
        lines: Lines,
        clear: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        self.cyclic(lines.outputs(), out, |s, q, body| {
            let acc = s.temp("acc", fold.acc);
            let at = s.element(lines.dst_swizzle.as_ref(), q.clone())?;
            if clear {
                s.assign(body, acc, fold.identity());
            } else {
                let old = s.temp("v", fold.dst);
                body.push(s.stmt(StmtKind::Load {
                    width: 1,
                    dst: RegRef::Scalar(old),
                    src: MemRef::Shared(lines.dst),
                    index: at.clone(),
                    guard: None,
                }));
                s.assign(body, acc, Expr::cast(fold.acc, reg_expr(old, fold.dst)));
            }
            let base = s.line_base(&lines, q.clone())?;
            s.fold_line(
                fold,
                &lines,
                acc,
                base,
                (lit_i32(0), lines.len, 1),
                false,
                body,
            )?;
            let res = s.in_register(Expr::cast(fold.dst, reg_expr(acc, fold.acc)), body);
            body.push(s.stmt(StmtKind::Store {
                width: 1,
                dst: MemRef::Shared(lines.dst),
                index: at,
                src: res,
                guard: None,
            }));
            Ok(())
        })
    }

    /// `shfl_xor` butterflies by `seg / 2, …, 1` within segments of `seg`
    /// lanes: afterwards every lane of a segment holds the segment's fold.
    fn butterflies(
        &mut self,
        fold: Fold,
        acc: super::RegId,
        seg: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let mut off = seg / 2;
        while off >= 1 {
            let other = self.temp("x", fold.acc);
            out.push(self.stmt(StmtKind::Shuffle {
                kind: ShuffleKind::Xor,
                dst: RegRef::Scalar(other),
                value: reg_expr(acc, fold.acc),
                lane: lit_i32(off),
                width: seg as u32,
            }));
            let m = self.merge(
                fold.kind,
                reg_expr(acc, fold.acc),
                reg_expr(other, fold.acc),
            )?;
            self.assign(out, acc, m);
            off /= 2;
        }
        Ok(())
    }

    /// `acc` = the fold of the `per` warp partials at `first ..` of the
    /// scratch array, in warp order.
    fn fold_scratch(
        &mut self,
        fold: Fold,
        acc: super::RegId,
        (scratch, first, per): (SharedId, Expr, i64),
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        self.assign(out, acc, fold.identity());
        let kname = self.fresh("k");
        let k = self.add_reg(kname, DType::I32, RegisterKind::Loop);
        let x = self.temp("x", fold.acc);
        let mut kb = Vec::new();
        kb.push(self.stmt(StmtKind::Load {
            width: 1,
            dst: RegRef::Scalar(x),
            src: MemRef::Shared(scratch),
            index: self.bin(BinaryOp::Add, first, reg_expr(k, DType::I32))?,
            guard: None,
        }));
        let m = self.merge(fold.kind, reg_expr(acc, fold.acc), reg_expr(x, fold.acc))?;
        self.assign(&mut kb, acc, m);
        out.push(self.stmt(StmtKind::For {
            var: k,
            start: lit_i32(0),
            count: lit_i32(per),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: kb,
        }));
        Ok(())
    }

    /// The cross-warp scratch array for accumulators of type `acc` (one
    /// per role: roles reduce concurrently).
    fn reduce_scratch(&mut self, acc: DType, entries: i64) -> SharedId {
        let role = self.role.map_or(0, |r| r.barrier);
        if let Some(&(_, _, id)) = self
            .scratch
            .iter()
            .find(|(t, r, _)| *t == acc && *r == role)
        {
            if let Some(b) = self.shared.get_mut(id.0 as usize) {
                b.len = b.len.max(entries as u64);
            }
            return id;
        }
        let name = self.fresh("reduce_scratch");
        let id = SharedId(self.shared.len() as u32);
        self.shared.push(SharedBuffer {
            name,
            dtype: acc,
            len: entries as u64,
            align: super::SHARED_ALIGN,
        });
        self.scratch.push((acc, role, id));
        id
    }

    /// Groups of `g` threads per output (see the module documentation).
    fn reduce_cooperative(
        &mut self,
        fold: Fold,
        lines: Lines,
        clear: bool,
        g: i64,
        w: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let t = self.threads;
        let p = lines.outputs();
        let tid = self.tid();
        let name = self.fresh("o");
        let o = self.add_reg(name, DType::I32, RegisterKind::Scalar);
        let oe = self.bin(BinaryOp::FloorDiv, tid.clone(), lit_i32(g))?;
        self.assign(out, o, oe);
        let name = self.fresh("g");
        let member = self.add_reg(name, DType::I32, RegisterKind::Scalar);
        let ge = self.bin(BinaryOp::FloorMod, tid.clone(), lit_i32(g))?;
        self.assign(out, member, ge);
        let idle = p * g < t;
        // Threads past the last group read the last output's line.
        let line = if idle {
            self.bin(BinaryOp::Min, reg_expr(o, DType::I32), lit_i32(p - 1))?
        } else {
            reg_expr(o, DType::I32)
        };
        let base = self.line_base(&lines, line.clone())?;
        let base = self.in_register(base, out);
        let base = match base {
            RegRef::Scalar(r) | RegRef::Elem(r, _) => reg_expr(r, DType::I32),
        };
        let acc = self.temp("acc", fold.acc);
        self.assign(out, acc, fold.identity());
        let count = (lines.len + g - 1) / g;
        self.fold_line(
            fold,
            &lines,
            acc,
            base,
            (reg_expr(member, DType::I32), count, g),
            lines.len % g != 0,
            out,
        )?;
        // Butterflies within segments of min(G, W) lanes.
        let seg = g.min(w);
        self.butterflies(fold, acc, seg, out)?;
        if g > w {
            let warps = t / w;
            // The statement's barrier check counted the scratch write.
            let scratch = self.reduce_scratch(fold.acc, warps);
            let lane0 = self.bin(
                BinaryOp::Eq,
                self.bin(BinaryOp::FloorMod, tid.clone(), lit_i32(w))?,
                lit_i32(0),
            )?;
            let slot = self.bin(BinaryOp::FloorDiv, tid, lit_i32(w))?;
            let store = self.stmt(StmtKind::Store {
                width: 1,
                dst: MemRef::Shared(scratch),
                index: slot,
                src: RegRef::Scalar(acc),
                guard: None,
            });
            out.push(self.stmt(StmtKind::If {
                cond: lane0,
                then_body: vec![store],
                else_body: None,
            }));
            self.barrier(out);
            // Fold the group's warps in order: first = line · (G / W).
            let per = g / w;
            let first = self.bin(BinaryOp::Mul, line, lit_i32(per))?;
            let first = self.in_register(first, out);
            let first = match first {
                RegRef::Scalar(r) | RegRef::Elem(r, _) => reg_expr(r, DType::I32),
            };
            self.fold_scratch(fold, acc, (scratch, first, per), out)?;
            // The barrier cleared what this statement had pending.
            self.pending.reads.insert(SCRATCH);
            self.pending.reads.insert(lines.dst_buf);
            self.pending.writes.insert(lines.dst_buf);
        }
        // Member 0 of each real group stores.
        let mut cond = self.bin(BinaryOp::Eq, reg_expr(member, DType::I32), lit_i32(0))?;
        if idle {
            let real = self.bin(BinaryOp::Lt, reg_expr(o, DType::I32), lit_i32(p))?;
            cond = self.bin(BinaryOp::And, cond, real)?;
        }
        let mut body = Vec::new();
        let at = self.element(lines.dst_swizzle.as_ref(), reg_expr(o, DType::I32))?;
        self.finish_output(fold, lines.dst, acc, at, clear, &mut body)?;
        out.push(self.stmt(StmtKind::If {
            cond,
            then_body: body,
            else_body: None,
        }));
        Ok(())
    }
}

impl Lower<'_> {
    /// A reduction along the last dimension of a spread buffer (the
    /// algorithm is in `spread.rs`).
    #[allow(clippy::too_many_arguments)]
    fn reduce_spread(
        &mut self,
        fold: Fold,
        layout: &super::spread::SpreadBuf,
        plan: super::spread::RowPlan,
        w: i64,
        (dst, dst_buf, dst_layout): (SharedId, usize, Option<super::mapped::Arranged>),
        clear: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let t = self.threads;
        let v = layout.v;
        let rows_per_thread = layout.k / plan.r;
        let seg = plan.g.min(w);
        let warps = t / w;
        let tid = self.tid();
        let scratch = (plan.g > w).then(|| self.reduce_scratch(fold.acc, rows_per_thread * warps));
        let acc = self.temp("acc", fold.acc);
        let cname = self.fresh("c");
        let c = self.add_reg(cname, DType::I32, RegisterKind::Loop);
        let ce = reg_expr(c, DType::I32);
        let mut cb = Vec::new();
        self.assign(&mut cb, acc, fold.identity());
        // The row's slots of this thread: c·R·v .. (c + 1)·R·v.
        let qname = self.fresh("q");
        let q = self.add_reg(qname, DType::I32, RegisterKind::Loop);
        let slot = self.bin(
            BinaryOp::Add,
            self.bin(BinaryOp::Mul, ce.clone(), lit_i32(plan.r * v))?,
            reg_expr(q, DType::I32),
        )?;
        let x = Expr {
            kind: super::ExprKind::Elem(layout.arr, Box::new(slot)),
            dtype: fold.src,
        };
        let next = self.combine(fold.kind, reg_expr(acc, fold.acc), Expr::cast(fold.acc, x))?;
        let mut qb = Vec::new();
        self.assign(&mut qb, acc, next);
        cb.push(self.stmt(StmtKind::For {
            var: q,
            start: lit_i32(0),
            count: lit_i32(plan.r * v),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: qb,
        }));
        self.butterflies(fold, acc, seg, &mut cb)?;
        match scratch {
            None => {
                // Row c·S + t / G, stored by member 0 of its group.
                let row = self.bin(
                    BinaryOp::Add,
                    self.bin(BinaryOp::Mul, ce, lit_i32(plan.s))?,
                    self.bin(BinaryOp::FloorDiv, tid.clone(), lit_i32(plan.g))?,
                )?;
                let rname = self.fresh("row");
                let rr = self.add_reg(rname, DType::I32, RegisterKind::Scalar);
                self.assign(&mut cb, rr, row);
                let mut cond = self.bin(
                    BinaryOp::Eq,
                    self.bin(BinaryOp::FloorMod, tid, lit_i32(plan.g))?,
                    lit_i32(0),
                )?;
                if rows_per_thread * plan.s > plan.rows {
                    let real =
                        self.bin(BinaryOp::Lt, reg_expr(rr, DType::I32), lit_i32(plan.rows))?;
                    cond = self.bin(BinaryOp::And, cond, real)?;
                }
                let mut body = Vec::new();
                let at = self.element(dst_layout.as_ref(), reg_expr(rr, DType::I32))?;
                self.finish_output(fold, dst, acc, at, clear, &mut body)?;
                cb.push(self.stmt(StmtKind::If {
                    cond,
                    then_body: body,
                    else_body: None,
                }));
            }
            Some(scratch) => {
                let lane0 = self.bin(
                    BinaryOp::Eq,
                    self.bin(BinaryOp::FloorMod, tid.clone(), lit_i32(w))?,
                    lit_i32(0),
                )?;
                let at = self.bin(
                    BinaryOp::Add,
                    self.bin(BinaryOp::Mul, ce, lit_i32(warps))?,
                    self.bin(BinaryOp::FloorDiv, tid, lit_i32(w))?,
                )?;
                let store = self.stmt(StmtKind::Store {
                    width: 1,
                    dst: MemRef::Shared(scratch),
                    index: at,
                    src: RegRef::Scalar(acc),
                    guard: None,
                });
                cb.push(self.stmt(StmtKind::If {
                    cond: lane0,
                    then_body: vec![store],
                    else_body: None,
                }));
            }
        }
        out.push(self.stmt(StmtKind::For {
            var: c,
            start: lit_i32(0),
            count: lit_i32(rows_per_thread),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: cb,
        }));
        let Some(scratch) = scratch else {
            return Ok(());
        };
        self.barrier(out);
        // Row r: row-slot r / S, group r % S, whose warps are
        // (r % S)·(G / W) ..; entry (r / S)·warps + that warp.
        let per = plan.g / w;
        self.cyclic(plan.rows, out, |s, r, body| {
            let cidx = s.bin(BinaryOp::FloorDiv, r.clone(), lit_i32(plan.s))?;
            let group = s.bin(BinaryOp::FloorMod, r.clone(), lit_i32(plan.s))?;
            let first = s.bin(
                BinaryOp::Add,
                s.bin(BinaryOp::Mul, cidx, lit_i32(warps))?,
                s.bin(BinaryOp::Mul, group, lit_i32(per))?,
            )?;
            let first = reg_expr(s.in_register(first, body).reg(), DType::I32);
            s.fold_scratch(fold, acc, (scratch, first, per), body)?;
            let at = s.element(dst_layout.as_ref(), r)?;
            s.finish_output(fold, dst, acc, at, clear, body)
        })?;
        self.pending.reads.insert(SCRATCH);
        self.pending.reads.insert(dst_buf);
        self.pending.writes.insert(dst_buf);
        Ok(())
    }

    /// A reduction along the rows of a tile register buffer into a rows
    /// register buffer (the algorithm is in `resident.rs`, "Code").
    fn reduce_resident(
        &mut self,
        fold: Fold,
        src: Handle<ir::Buffer>,
        dst: Handle<ir::Buffer>,
        clear: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        use super::infer::{Form, row_offsets, row_shuffles};
        let w = self.target.simt_width().map_or(0, i64::from);
        let Some(s) = self.resident.get(&src) else {
            return Err(self.demote(src));
        };
        // The destination: a rows buffer, or a 1-D buffer in memory.
        let to = match self.resident.get(&dst) {
            Some(d) if d.form == Form::Rows => Ok(d.arr),
            Some(_) => return Err(self.demote(dst)),
            None => Err(self.shared_of(dst)?),
        };
        if s.form != Form::Tile {
            return Err(self.demote(src));
        }
        let (plan, sarr) = (s.plan.clone(), s.arr);
        // Sums of a tile of floats up to 32 bits fold in `f32` (`resident.rs`,
        // "Code": the tile already carries the atoms' roundings).
        let narrow = |d: DType| d.is_float() && d.bits() <= 32;
        let fold = if fold.acc == DType::F64 && narrow(fold.src) && narrow(fold.dst) {
            Fold {
                acc: DType::F32,
                ..fold
            }
        } else {
            fold
        };
        let map = &plan.maps[2];
        let offsets = row_offsets(map);
        let Some(shuffles) = row_shuffles(map, w) else {
            return Err(self.demote(src));
        };
        let nq = offsets.len() as i64;
        let mut body = Vec::new();
        let (row0, col0, _, grp) = self.lane_origin(&plan, &mut body)?;
        for i in 0..plan.tm {
            for (q, &o) in offsets.iter().enumerate() {
                // This thread's elements of the row, in column order.
                let mut cols: Vec<(i64, i64)> = Vec::new();
                for j in 0..plan.tn {
                    for (slot, &(r, c)) in map.slot.iter().enumerate() {
                        if r == o {
                            let at = (i * plan.tn + j) * map.slots + slot as i64;
                            cols.push((j * plan.n + c, at));
                        }
                    }
                }
                cols.sort_unstable();
                let acc = self.temp("acc", fold.acc);
                self.assign(&mut body, acc, fold.identity());
                for (_, at) in cols {
                    let x = Expr {
                        kind: super::ExprKind::Elem(sarr, Box::new(lit_i32(at))),
                        dtype: fold.src,
                    };
                    let next =
                        self.combine(fold.kind, reg_expr(acc, fold.acc), Expr::cast(fold.acc, x))?;
                    self.assign(&mut body, acc, next);
                }
                for &off in &shuffles {
                    let other = self.temp("x", fold.acc);
                    body.push(self.stmt(StmtKind::Shuffle {
                        kind: ShuffleKind::Xor,
                        dst: RegRef::Scalar(other),
                        value: reg_expr(acc, fold.acc),
                        lane: lit_i32(off),
                        width: w as u32,
                    }));
                    let m = self.merge(
                        fold.kind,
                        reg_expr(acc, fold.acc),
                        reg_expr(other, fold.acc),
                    )?;
                    self.assign(&mut body, acc, m);
                }
                let darr = match to {
                    Ok(darr) => darr,
                    Err(shared) => {
                        // One holder per row (column part zero) merges the
                        // old value and stores.
                        let row = self.bin(BinaryOp::Add, row0.clone(), lit_i32(i * plan.m + o))?;
                        let mut then = Vec::new();
                        self.finish_output(fold, shared, acc, row, clear, &mut then)?;
                        let cond = self.bin(BinaryOp::Eq, col0.clone(), lit_i32(0))?;
                        body.push(self.stmt(StmtKind::If {
                            cond,
                            then_body: then,
                            else_body: None,
                        }));
                        continue;
                    }
                };
                let entry = lit_i32(i * nq + q as i64);
                if !clear {
                    let old = Expr {
                        kind: super::ExprKind::Elem(darr, Box::new(entry.clone())),
                        dtype: fold.dst,
                    };
                    let merged = self.merge(
                        fold.kind,
                        Expr::cast(fold.acc, old),
                        reg_expr(acc, fold.acc),
                    )?;
                    self.assign(&mut body, acc, merged);
                }
                body.push(self.stmt(StmtKind::Assign {
                    dst: RegRef::Elem(darr, entry),
                    value: Expr::cast(fold.dst, reg_expr(acc, fold.acc)),
                }));
            }
        }
        self.working_groups(&plan, grp, body, out)
    }
}
