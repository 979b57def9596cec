//! Fragment buffers kept in registers in a matrix atom's layout: the code
//! that reads and writes them. Which buffers, and in which layout, is
//! decided by layout inference (`infer.rs`, which also defines the two
//! layouts, tile(P) and rows(P), of a gemm plan P).
//!
//! # Tile layout
//! Thread `t` of issuing group `g` (lane `l`) owns the C fragments of the
//! group's `tm × tn` atom tiles, in a local array of `tm·tn·slots`
//! elements, tile `(i, j)` at `(i·tn + j)·slots`. Element `(row, col)` of
//! slot `s` of tile `(i, j)` is `(gi·tm·m + i·m + R(l) + r_s, gj·tn·n + j·n
//! + C(l) + c_s)` with `(gi, gj)` the group's place in the grid and `R`,
//! `C`, `r_s`, `c_s` the fragment's lane and slot parts. Threads of idle
//! groups own nothing. The buffer gets no shared memory; the array is
//! named after it. A rows buffer's array has `tm·Q` entries (`infer.rs`).
//!
//! # Code
//! - `fill`: every thread sets every element of its array (idle groups
//!   included; their values are never read).
//! - `gemm` with the buffer as C: the atom code of `gemm.rs`, with the
//!   array as its C and D fragments and no C loads or stores;
//!   `clear_accum` zeroes the array (under an `if` for a runtime flag).
//!   With the buffer as A: the A fragments are the array's elements that
//!   `infer::a_from_tile` lists (one register range per tile row and
//!   k-step when they are consecutive, else copied into a fragment).
//! - `copy` out: each owning thread stores its elements to their places in
//!   the destination region, converted to its type per element, with the
//!   through-memory copy's guards (elements outside the destination buffer
//!   are skipped). Slots consecutive along the row move as one vector when
//!   the destination's columns are its last dimension and alignment is
//!   proven as for vector copies (`copy.rs`) and the column of the
//!   vector's first element is a multiple of the width: the lane's column
//!   steps, the group's column offset and the slot's tile offset are.
//!   A rows buffer is stored by one holder per row: the one whose column
//!   part (`gj·tn·n + C(l)`) is zero.
//! - `copy` between two register buffers of one layout: element by element
//!   in the arrays, converted.
//! - a `parallel` nest over `[M, N]` runs, on each thread of a working
//!   group, once per element it owns: unrolled loops over the tile rows
//!   `i` and columns `j`, and every slot `s` written out, bind the nest's
//!   variables to the element's row and column; `X[i, j]` of a tile member
//!   is array element `(i·tn + j)·slots + s` and `X[i]` of a rows member
//!   entry `i·Q + q(s)` (`q(s)`: the slot's row offset). A nest over `[M]`
//!   runs once per row entry `i·Q + q` the thread holds. Idle groups skip
//!   both (`if group < gm·gn`, uniform per group).
//! - `reduce` of a tile buffer along its rows into a rows buffer
//!   (`reduce.rs`): each thread folds, per row entry, the slots of that row
//!   in column order, then the lanes holding the row combine by `shfl_xor`
//!   butterflies over the column digits (`infer::row_shuffles`); the old
//!   value is folded in last unless the reduction clears, and the result
//!   rounded once, on every holder. Into a 1-D buffer in memory, only the
//!   holder whose column part is zero reads the old value and stores.
//!   Maxima and minima are exact. Sums of floats of at most 32 bits fold in
//!   `f32`, where other reductions (`reduce.rs`) fold in `f64`: a tile's
//!   values come from matrix atoms, which already round once per atom, so
//!   its consumers compare with the reference within an accumulation bound
//!   anyway; the `f32` fold adds at most `N·2⁻²⁴` of the sum of magnitudes
//!   for a row of `N`, and spares the conversions to and from `f64`
//!   (`bench/RESULTS.md` has what that changed for attention).
//!
//! # Barriers and fallback
//! A register buffer is private to each thread, so its reads and writes
//! never enter the shared-memory read/write sets that place barriers.
//! Every thread reads only elements it wrote itself: all uses of a buffer
//! share one layout, and a rows entry is written by each of its holders.
//! When lowering meets a use that cannot take the layout after all (a
//! gemm's A or B region is not provably inside its buffer, say), it records
//! the buffer and gives up; the kernel is then lowered again with the
//! buffer in shared memory (`mod.rs`, `lower_kernel`), so nothing the
//! through-memory lowering accepts is refused.

use super::gemm::{AtomOperand, AtomPlan, OperandRegion};
use super::infer::{Form, GemmShape, Layout, row_offsets};
use super::{
    DType, Expr, ExprKind, Index, LowerError, RegId, RegRef, Result, SharedId, Stmt, StmtKind,
    Unroll, gcd, lit_i32, non_unit, reg_expr,
};
use crate::ir::{self, BinaryOp, GemmPolicy, Handle, Region};
use crate::thread::{Guard, GuardElse, RegisterKind};

use super::Lower;

/// A buffer kept in registers: its layout and its per-thread array.
pub(super) struct ResidentBuf<'a> {
    pub(super) plan: AtomPlan<'a>,
    pub(super) form: Form,
    pub(super) arr: RegId,
    /// Elements of the array.
    pub(super) len: i64,
}

/// Inside a nest over register buffers: the array index of the current
/// element in a tile member (none in a nest over rows) and in a rows
/// member.
#[derive(Clone)]
pub(super) struct NestSlot {
    pub(super) tile: Option<Expr>,
    pub(super) rows: Expr,
}

impl AtomPlan<'_> {
    /// Whether two plans give every C element the same owner and slot.
    pub(super) fn same_split(&self, other: &AtomPlan<'_>) -> bool {
        std::ptr::eq(self.atom, other.atom)
            && (self.m, self.n, self.group, self.groups)
                == (other.m, other.n, other.group, other.groups)
            && (self.gm, self.gn, self.tm, self.tn) == (other.gm, other.gn, other.tm, other.tn)
            && self.resident
            && other.resident
            && self.shared_operands == other.shared_operands
    }
}

impl<'a> Lower<'a> {
    /// Whether a region is the whole of its buffer (constant zero starts,
    /// extents equal to the constant shape).
    pub(super) fn whole(&self, r: &Region) -> bool {
        let f = self.f;
        let Some(shape) = f.const_shape(r.buffer) else {
            return false;
        };
        shape.len() == r.ranges.len()
            && r.ranges.iter().zip(&shape).all(|(range, &n)| {
                f.as_const_int(range.start) == Some(0) && f.as_const_int(range.extent) == Some(n)
            })
    }

    /// (rows, cols) of a gemm operand region with constant extents.
    fn matrix_of(&self, r: &Region) -> Option<(i64, i64)> {
        let ext: Vec<i64> = r
            .ranges
            .iter()
            .map(|range| self.f.as_const_int(range.extent))
            .collect::<Option<_>>()?;
        let (dr, dc) = self.matrix_dims(&ext).ok()?;
        Some((ext[dr], ext[dc]))
    }

    /// The element types, sizes and policy that choose a gemm's plan.
    pub(super) fn gemm_shape(
        &self,
        [a, b, c]: [&Region; 3],
        (ta, tb): (bool, bool),
        policy: GemmPolicy,
    ) -> Option<GemmShape> {
        let f = self.f;
        let (ar, ac) = self.matrix_of(a)?;
        let (br, bc) = self.matrix_of(b)?;
        let (m, k) = if ta { (ac, ar) } else { (ar, ac) };
        let n = if tb { br } else { bc };
        let dtypes = [a.buffer, b.buffer, c.buffer].map(|x| f.buffers[x].dtype);
        Some((dtypes, (m, n, k), policy))
    }

    /// The C operand of a gemm into a resident buffer: the buffer's
    /// row-major `M × N` shape. Only its type and strides are used (for
    /// alignment facts); no code addresses it.
    pub(super) fn resident_operand(&self, rc: &OperandRegion<'_>, nn: i64) -> AtomOperand {
        AtomOperand {
            id: SharedId(u32::MAX),
            dtype: self.f.buffers[rc.region.buffer].dtype,
            base: lit_i32(0),
            base_mult: 0,
            sr: nn,
            sc: 1,
            swizzled: None,
            lane_swizzle: None,
        }
    }

    /// `fill` of a resident buffer: every element of the thread's array.
    pub(super) fn resident_fill(
        &mut self,
        b: Handle<ir::Buffer>,
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (arr, len) = self.resident_array(b)?;
        let dtype = self.f.buffers[b].dtype;
        let value = if value.dtype == dtype {
            value
        } else {
            Expr::cast(dtype, value)
        };
        let value = match value.kind {
            ExprKind::Literal(_) => value,
            _ => {
                let r = self.temp("f", dtype);
                self.assign(out, r, value);
                reg_expr(r, dtype)
            }
        };
        let name = self.fresh("z");
        let var = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let body = vec![self.stmt(StmtKind::Assign {
            dst: RegRef::Elem(arr, reg_expr(var, DType::I32)),
            value,
        })];
        out.push(self.stmt(StmtKind::For {
            var,
            start: lit_i32(0),
            count: lit_i32(len),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body,
        }));
        Ok(())
    }

    fn resident_array(&self, b: Handle<ir::Buffer>) -> Result<(RegId, i64)> {
        let r = self
            .resident
            .get(&b)
            .ok_or_else(|| self.malformed("a resident buffer without its plan"))?;
        Ok((r.arr, r.len))
    }

    /// Gives an inferred buffer its array.
    pub(super) fn make_resident(&mut self, b: Handle<ir::Buffer>, layout: Layout<'a>) {
        let plan = layout.plan;
        let len = match layout.form {
            Form::Tile => plan.tm * plan.tn * plan.maps[2].slots,
            Form::Rows => plan.tm * row_offsets(&plan.maps[2]).len() as i64,
        };
        let buffer = &self.f.buffers[b];
        let name = self.claim(&buffer.name);
        let arr = self.add_reg(name, buffer.dtype, RegisterKind::Array { len: len as u32 });
        self.resident.insert(
            b,
            ResidentBuf {
                plan,
                form: layout.form,
                arr,
                len,
            },
        );
    }

    /// The attempt gives up keeping `b` in registers (module documentation,
    /// "Barriers and fallback").
    pub(super) fn demote(&mut self, b: Handle<ir::Buffer>) -> LowerError {
        self.demoted = Some(b);
        self.unsupported(format!(
            "`{}` in registers: a use does not take its inferred layout",
            self.f.buffers[b].name
        ))
    }

    /// `X[...]` of a register buffer inside a nest over register buffers:
    /// the array element of the current iteration.
    pub(super) fn resident_elem(&mut self, b: Handle<ir::Buffer>) -> Result<RegRef> {
        let at = match (self.resident.get(&b), &self.resident_slot) {
            (Some(r), Some(slot)) => match r.form {
                Form::Tile => slot.tile.clone().map(|e| (r.arr, e)),
                Form::Rows => Some((r.arr, slot.rows.clone())),
            },
            _ => None,
        };
        match at {
            Some((arr, e)) => Ok(RegRef::Elem(arr, e)),
            None => Err(self.demote(b)),
        }
    }

    /// The plan whose layout a `parallel` nest over `ext` runs in: a tile
    /// member's, or for a nest without one a rows member's whose C has the
    /// nest's shape (`infer.rs` made the members agree).
    pub(super) fn nest_resident(&self, body: &ir::Block, ext: &[i64]) -> Option<AtomPlan<'a>> {
        let mut tile: Option<AtomPlan<'a>> = None;
        let mut rows: Option<AtomPlan<'a>> = None;
        super::visit_nest_buffers(self.f, body, |b| match self.resident.get(&b) {
            Some(r) if r.form == Form::Tile && tile.is_none() => tile = Some(r.plan.clone()),
            Some(r) if r.form == Form::Rows && rows.is_none() => {
                let p = &r.plan;
                let fits = match ext {
                    [mm, nn] => p.gm * p.tm * p.m == *mm && p.gn * p.tn * p.n == *nn,
                    _ => true,
                };
                if fits {
                    rows = Some(p.clone());
                }
            }
            _ => {}
        });
        if ext.len() == 2 { tile.or(rows) } else { rows }
    }

    /// The lane's first row and column in a plan's C, as registers:
    /// `gi·tm·m + R(l)` and `gj·tn·n + C(l)`, with the lane, the group and
    /// what the column part is a multiple of.
    pub(super) fn lane_origin(
        &mut self,
        plan: &AtomPlan<'_>,
        out: &mut Vec<Stmt>,
    ) -> Result<(Expr, Expr, i64, Expr)> {
        let map = plan.maps[2].clone();
        let (lane, grp, gi, gj) = self.group_coords(plan)?;
        let unit = |sr, sc| AtomOperand {
            id: SharedId(u32::MAX),
            dtype: DType::F32,
            base: lit_i32(0),
            base_mult: 0,
            sr,
            sc,
            swizzled: None,
            lane_swizzle: None,
        };
        let row_lane = self.lane_address(&map, &unit(1, 0), &lane, plan.group)?;
        let col_lane = self.lane_address(&map, &unit(0, 1), &lane, plan.group)?;
        let terms = vec![self.scaled(&gi, plan.tm * plan.m)?, row_lane];
        let row0 = self.sum(terms)?;
        let terms = vec![self.scaled(&gj, plan.tn * plan.n)?, col_lane];
        let col0 = self.sum(terms)?;
        let row0 = self.let_reg("row", row0, out);
        let col0 = self.let_reg("col", col0, out);
        let mut col_align = super::gemm::lane_align(&map, &unit(0, 1));
        if plan.gn > 1 {
            col_align = gcd(col_align, plan.tn * plan.n);
        }
        Ok((row0, col0, col_align, grp))
    }

    /// `body` under `if group < gm·gn` when some groups idle.
    pub(super) fn working_groups(
        &mut self,
        plan: &AtomPlan<'_>,
        grp: Expr,
        body: Vec<Stmt>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let used = plan.gm * plan.gn;
        if used < plan.groups {
            let cond = self.bin(BinaryOp::Lt, grp, lit_i32(used))?;
            out.push(self.stmt(StmtKind::If {
                cond,
                then_body: body,
                else_body: None,
            }));
        } else {
            out.extend(body);
        }
        Ok(())
    }

    /// A `parallel` nest over `[M, N]` (or `[M]`) in the layout of `plan`
    /// (module documentation, "Code").
    pub(super) fn resident_nest(
        &mut self,
        plan: &AtomPlan<'a>,
        vars: &[Handle<ir::Var>],
        ext: &[i64],
        body: &ir::Block,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (m, n, tm, tn) = (plan.m, plan.n, plan.tm, plan.tn);
        let map = plan.maps[2].clone();
        let offsets = row_offsets(&map);
        let q_of = |r: i64| offsets.iter().position(|&o| o == r).unwrap_or(0) as i64;
        let nq = offsets.len() as i64;
        let mut inner = Vec::new();
        let (row0, col0, _, grp) = self.lane_origin(plan, &mut inner)?;
        let two = match ext {
            [_, _] => true,
            [_] => false,
            _ => return Err(self.malformed("a register nest of rank other than 1 or 2")),
        };
        if vars.len() != ext.len() {
            return Err(self.malformed("a nest with as many variables as extents"));
        }
        let iname = self.fresh("ti");
        let ir_ = self.add_reg(iname, DType::I32, RegisterKind::Loop);
        let ie = reg_expr(ir_, DType::I32);
        let mut ibody = Vec::new();
        // One iteration: (row offset, column offset, tile slot, rows slot).
        let run = |s: &mut Self,
                   (r, c): (Expr, Option<Expr>),
                   (tile, rows): (Option<Expr>, Expr),
                   out: &mut Vec<Stmt>|
         -> Result<()> {
            let row = s.bin(BinaryOp::Add, row0.clone(), r)?;
            s.bind_index_var(vars[0], row, (0, ext[0] - 1), out);
            if let (Some(c), Some(&var)) = (c, vars.get(1)) {
                let col = s.bin(BinaryOp::Add, col0.clone(), c)?;
                s.bind_index_var(var, col, (0, ext[1] - 1), out);
            }
            let saved = s.resident_slot.replace(NestSlot { tile, rows });
            let result = s.thread_block(body, out);
            s.resident_slot = saved;
            result
        };
        let i_row = self.bin(BinaryOp::Mul, ie.clone(), lit_i32(m))?;
        let i_rows = self.bin(BinaryOp::Mul, ie.clone(), lit_i32(nq))?;
        if two {
            let jname = self.fresh("tj");
            let jr = self.add_reg(jname, DType::I32, RegisterKind::Loop);
            let je = reg_expr(jr, DType::I32);
            let j_col = self.bin(BinaryOp::Mul, je.clone(), lit_i32(n))?;
            let tile0 = self.bin(
                BinaryOp::Mul,
                self.bin(
                    BinaryOp::Add,
                    self.bin(BinaryOp::Mul, ie.clone(), lit_i32(tn))?,
                    je,
                )?,
                lit_i32(map.slots),
            )?;
            let mut jbody = Vec::new();
            for (s, &(r, c)) in map.slot.iter().enumerate() {
                let at = (
                    self.bin(BinaryOp::Add, i_row.clone(), lit_i32(r))?,
                    Some(self.bin(BinaryOp::Add, j_col.clone(), lit_i32(c))?),
                );
                let slots = (
                    Some(self.bin(BinaryOp::Add, tile0.clone(), lit_i32(s as i64))?),
                    self.bin(BinaryOp::Add, i_rows.clone(), lit_i32(q_of(r)))?,
                );
                run(self, at, slots, &mut jbody)?;
            }
            ibody.push(self.stmt(StmtKind::For {
                var: jr,
                start: lit_i32(0),
                count: lit_i32(tn),
                step: lit_i32(1),
                unroll: Unroll::Full,
                body: jbody,
            }));
        } else {
            for (q, &r) in offsets.iter().enumerate() {
                let at = (self.bin(BinaryOp::Add, i_row.clone(), lit_i32(r))?, None);
                let slots = (
                    None,
                    self.bin(BinaryOp::Add, i_rows.clone(), lit_i32(q as i64))?,
                );
                run(self, at, slots, &mut ibody)?;
            }
        }
        inner.push(self.stmt(StmtKind::For {
            var: ir_,
            start: lit_i32(0),
            count: lit_i32(tm),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: ibody,
        }));
        self.working_groups(plan, grp, inner, out)
    }

    /// `copy` between two register buffers of one layout.
    pub(super) fn resident_copy(
        &mut self,
        src: Handle<ir::Buffer>,
        dst: Handle<ir::Buffer>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (sa, len) = self.resident_array(src)?;
        let (da, dlen) = self.resident_array(dst)?;
        if len != dlen {
            return Err(self.demote(dst));
        }
        let (from, to) = (self.f.buffers[src].dtype, self.f.buffers[dst].dtype);
        let name = self.fresh("z");
        let var = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let z = reg_expr(var, DType::I32);
        let x = Expr {
            kind: ExprKind::Elem(sa, Box::new(z.clone())),
            dtype: from,
        };
        let body = vec![self.stmt(StmtKind::Assign {
            dst: RegRef::Elem(da, z),
            value: if from == to { x } else { Expr::cast(to, x) },
        })];
        out.push(self.stmt(StmtKind::For {
            var,
            start: lit_i32(0),
            count: lit_i32(len),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body,
        }));
        Ok(())
    }

    /// `copy` of a whole resident buffer to a global or shared region:
    /// each owner stores its elements (module documentation, "Code").
    pub(super) fn resident_copy_out(
        &mut self,
        src: &Region,
        dst: &Region,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (arr, _) = self.resident_array(src.buffer)?;
        let r = &self.resident[&src.buffer];
        if r.form == Form::Rows {
            return self.rows_copy_out(src, dst, out);
        }
        let plan = r.plan.clone();
        let (m, n, tm, tn) = (plan.m, plan.n, plan.tm, plan.tn);
        let map = plan.maps[2].clone();
        let shape = self.const_shape(src.buffer)?;
        let (mm, nn) = (shape[0], shape[1]);
        let (dstarts, dext) = self.region(dst, out)?;
        if non_unit(&dext) != non_unit(&shape) {
            return Err(self.malformed("copy regions differ in shape"));
        }
        if non_unit(&shape).len() != 2 {
            return Err(self.demote(src.buffer));
        }
        let dims = self.matrix_dims(&dext)?;
        let from = self.f.buffers[src.buffer].dtype;
        let to = self.f.buffers[dst.buffer].dtype;
        if self.stmatrix_copy_out(&plan, arr, dst.buffer, &dstarts, &dext, from, out)? {
            return Ok(());
        }
        // The widest vector the destination allows along its last
        // dimension, when the columns are that dimension.
        let dmults: Vec<i64> = dst.ranges.iter().map(|r| self.multiple(r.start)).collect();
        let limit = if dims.1 + 1 == dext.len() {
            self.region_width(dst.buffer, &dmults, &dext)
        } else {
            1
        };
        // The lane's row and column parts, and what the runtime part of
        // the column is a multiple of.
        let mut body = Vec::new();
        let (row0, col0, col_align, grp) = self.lane_origin(&plan, &mut body)?;
        let conv = (from != to).then(|| self.local("s", to, limit.max(1)));
        for i in 0..tm {
            for j in 0..tn {
                let base = (i * tn + j) * map.slots;
                let mut s = 0usize;
                while s < map.slot.len() {
                    let (r0, c0) = map.slot[s];
                    let (roff, coff) = (i * m + r0, j * n + c0);
                    let fits = |w: usize| {
                        s + w <= map.slot.len()
                            && (1..w).all(|t| map.slot[s + t] == (r0, c0 + t as i64))
                            && col_align % w as i64 == 0
                            && coff % w as i64 == 0
                    };
                    let mut w = limit.max(1) as usize;
                    while w > 1 && !fits(w) {
                        w /= 2;
                    }
                    let row = Index {
                        expr: self.bin(BinaryOp::Add, row0.clone(), lit_i32(roff))?,
                        range: Some((0, mm - 1)),
                    };
                    let col = Index {
                        expr: self.bin(BinaryOp::Add, col0.clone(), lit_i32(coff))?,
                        range: Some((0, nn - 1)),
                    };
                    let idx = self.matrix_elem(&dstarts, dims, &row, &col)?;
                    let (mem, index, guard) = self.address(dst.buffer, &idx)?;
                    let first = base + s as i64;
                    let src_reg = match conv {
                        None => RegRef::Elem(arr, lit_i32(first)),
                        Some(tmp) => {
                            for t in 0..w as i64 {
                                let v = Expr {
                                    kind: ExprKind::Elem(arr, Box::new(lit_i32(first + t))),
                                    dtype: from,
                                };
                                body.push(self.stmt(StmtKind::Assign {
                                    dst: RegRef::Elem(tmp, lit_i32(t)),
                                    value: Expr::cast(to, v),
                                }));
                            }
                            RegRef::Elem(tmp, lit_i32(0))
                        }
                    };
                    body.push(self.stmt(StmtKind::Store {
                        width: w as u32,
                        dst: mem,
                        index,
                        src: src_reg,
                        guard: guard.map(|cond| Guard {
                            cond,
                            otherwise: GuardElse::Skip,
                        }),
                    }));
                    s += w;
                }
            }
        }
        self.working_groups(&plan, grp, body, out)
    }

    /// `copy` of a tile buffer into a whole 2-D shared buffer through the
    /// target's matrix store (`stmatrix`) when one fits the accumulator
    /// fragment (`ldmatrix.rs`, [`Lower::plan_matrix_stores`]): per warp
    /// and chunk of `count` matrices, each lane converts its elements of
    /// the chunk into a small array and supplies the address of one row.
    /// The values and places are those of the element-wise path; only the
    /// instructions differ. Answers whether it did.
    #[allow(clippy::too_many_arguments)]
    fn stmatrix_copy_out(
        &mut self,
        plan: &AtomPlan<'_>,
        arr: RegId,
        dst: Handle<ir::Buffer>,
        starts: &[Index],
        ext: &[i64],
        from: DType,
        out: &mut Vec<Stmt>,
    ) -> Result<bool> {
        let buffer = &self.f.buffers[dst];
        let to = buffer.dtype;
        let Some(simt) = self.target.simt_width().map(i64::from) else {
            return Ok(false);
        };
        let Some(shape) = self.f.const_shape(dst) else {
            return Ok(false);
        };
        if self.target.matrix_stores.is_empty()
            || self.swizzled.contains_key(&dst)
            || self.mapped.contains_key(&dst)
            || buffer.scope != ir::Scope::Shared
            || shape.len() != 2
            || ext != shape.as_slice()
            || starts.iter().any(|i| i.expr.as_const_int() != Some(0))
            || plan.group % simt != 0
        {
            return Ok(false);
        }
        let map = plan.maps[2].clone();
        let Some(k) = super::ldmatrix::warp_digits(&map, simt) else {
            return Ok(false);
        };
        let sr = self.physical_shape(dst, &shape)[1];
        let op = AtomOperand {
            id: self.shared_of(dst)?,
            dtype: to,
            base: lit_i32(0),
            base_mult: 0,
            sr,
            sc: 1,
            swizzled: None,
            lane_swizzle: None,
        };
        // What the warp's and the group's place add to every address.
        let mut steps: Vec<i64> = map.lane[k..]
            .iter()
            .filter(|d| d.0 > 1)
            .map(|&(_, r, c)| op.addr(r, c))
            .collect();
        if plan.gm > 1 {
            steps.push(plan.tm * plan.m * sr);
        }
        if plan.gn > 1 {
            steps.push(plan.tn * plan.n);
        }
        let runtime_mult = steps.into_iter().fold(0, gcd);
        let tiles: Vec<(i64, i64)> = (0..plan.tm)
            .flat_map(|i| (0..plan.tn).map(move |j| (i * plan.m, j * plan.n)))
            .collect();
        let Some(lp) = self.plan_matrix_stores(&map, &op, &tiles, runtime_mult) else {
            return Ok(false);
        };
        let chunk = lp.chunk_len(tiles.len() as i64 * map.slots);
        let mut body = Vec::new();
        let (lane, grp, gi, gj) = self.group_coords(plan)?;
        let mut terms = vec![
            self.scaled(&gi, plan.tm * plan.m * sr)?,
            self.scaled(&gj, plan.tn * plan.n)?,
        ];
        let in_warp = if plan.group == simt {
            lane.clone()
        } else {
            let warp_map = super::gemm::FragMap {
                slots: map.slots,
                lane: map.lane[k..].to_vec(),
                slot: map.slot.clone(),
            };
            let warp = self.bin(BinaryOp::FloorDiv, lane.clone(), lit_i32(simt))?;
            terms.push(self.lane_address(&warp_map, &op, &warp, plan.group / simt)?);
            self.bin(BinaryOp::FloorMod, lane, lit_i32(simt))?
        };
        terms.push(self.matrix_load_lane(&lp, &in_warp)?);
        let row = self.sum(terms)?;
        let row = self.let_reg("st_at", row, &mut body);
        let staged = (from != to).then(|| self.local("st", to, chunk));
        for &(first, shift) in &lp.chunks {
            let src = match staged {
                Some(tmp) => {
                    for t in 0..chunk {
                        let v = Expr {
                            kind: ExprKind::Elem(arr, Box::new(lit_i32(first + t))),
                            dtype: from,
                        };
                        body.push(self.stmt(StmtKind::Assign {
                            dst: RegRef::Elem(tmp, lit_i32(t)),
                            value: Expr::cast(to, v),
                        }));
                    }
                    crate::thread::FragRef {
                        array: tmp,
                        offset: 0,
                    }
                }
                None => crate::thread::FragRef {
                    array: arr,
                    offset: first as u32,
                },
            };
            let index = self.bin(BinaryOp::Add, row.clone(), lit_i32(shift))?;
            body.push(self.stmt(StmtKind::MatrixStore {
                store: lp.name.clone(),
                count: lp.count,
                trans: lp.trans,
                dst: op.id,
                index,
                src,
            }));
        }
        self.working_groups(plan, grp, body, out)?;
        Ok(true)
    }

    /// `copy` of a whole rows buffer to a global or shared region: of the
    /// holders of each row, the one whose column part is zero (lane column
    /// digits zero, first grid column) stores it.
    fn rows_copy_out(&mut self, src: &Region, dst: &Region, out: &mut Vec<Stmt>) -> Result<()> {
        let (arr, _) = self.resident_array(src.buffer)?;
        let plan = self.resident[&src.buffer].plan.clone();
        let shape = self.const_shape(src.buffer)?;
        let (dstarts, dext) = self.region(dst, out)?;
        if non_unit(&dext) != non_unit(&shape) {
            return Err(self.malformed("copy regions differ in shape"));
        }
        let rows = shape[0];
        let Some(dim) = dext.iter().position(|&e| e == rows).filter(|_| rows > 1) else {
            return Err(self.demote(src.buffer));
        };
        let from = self.f.buffers[src.buffer].dtype;
        let to = self.f.buffers[dst.buffer].dtype;
        let mut body = Vec::new();
        let (row0, col0, _, grp) = self.lane_origin(&plan, &mut body)?;
        let offsets = row_offsets(&plan.maps[2]);
        let mut stores = Vec::new();
        for i in 0..plan.tm {
            for (q, &o) in offsets.iter().enumerate() {
                let row = Index {
                    expr: self.bin(BinaryOp::Add, row0.clone(), lit_i32(i * plan.m + o))?,
                    range: Some((0, rows - 1)),
                };
                let zero = Index {
                    expr: lit_i32(0),
                    range: Some((0, 0)),
                };
                let digits: Vec<Index> = (0..dext.len())
                    .map(|d| if d == dim { row.clone() } else { zero.clone() })
                    .collect();
                let idx = self.offset(&dstarts, &digits)?;
                let (mem, index, guard) = self.address(dst.buffer, &idx)?;
                let value = Expr {
                    kind: ExprKind::Elem(
                        arr,
                        Box::new(lit_i32(i * offsets.len() as i64 + q as i64)),
                    ),
                    dtype: from,
                };
                let src_reg = self.in_register(Expr::cast(to, value), &mut stores);
                stores.push(self.stmt(StmtKind::Store {
                    width: 1,
                    dst: mem,
                    index,
                    src: src_reg,
                    guard: guard.map(|cond| Guard {
                        cond,
                        otherwise: GuardElse::Skip,
                    }),
                }));
            }
        }
        let cond = self.bin(BinaryOp::Eq, col0, lit_i32(0))?;
        body.push(self.stmt(StmtKind::If {
            cond,
            then_body: stores,
            else_body: None,
        }));
        self.working_groups(&plan, grp, body, out)
    }
}
