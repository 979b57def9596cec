//! Register-resident accumulator buffers: the simplest case of layout
//! inference, for fragment buffers that only ever serve as a `gemm`
//! accumulator.
//!
//! # Which buffers
//! Before a kernel body is lowered, every statement of it is scanned for
//! the uses of each `fragment`- or `local`-scope buffer `F`. `F` is kept in
//! registers when it has a constant 2-D shape, no initial value, and every
//! use is one of:
//! - `fill` of the whole of `F` (`T.clear`, `T.fill`);
//! - the C operand of a `gemm` whose C region is the whole of `F` (and
//!   whose A and B are other buffers), with constant A and B extents;
//! - the source of a `copy` whose source region is the whole of `F` and
//!   whose destination is a global or shared buffer;
//!
//! with at least one `gemm`, and every `gemm` choosing the same matrix
//! atom, the same `gm × gn` split over issuing groups and the same tiles
//! per group, with the accumulators resident (`gemm.rs`: the plan depends
//! on the element types, M, N, K, the warp policy and the thread count).
//! Any other use (a load or store of an element, a sub-tile region, a
//! `reduce`, a `parallel` nest, a copy into `F`, a second plan, a gemm that
//! falls back to the scalar path) keeps `F` in shared memory as before.
//!
//! # Layout
//! `F` takes the accumulator layout of that plan: thread `t` of issuing
//! group `g` (lane `l`) owns the C fragments of the group's `tm × tn` atom
//! tiles, in a local array of `tm·tn·slots` elements, tile `(i, j)` at
//! `(i·tn + j)·slots`. Element `(row, col)` of slot `s` of tile `(i, j)` is
//! `(gi·tm·m + i·m + R(l) + r_s, gj·tn·n + j·n + C(l) + c_s)` with `(gi, gj)`
//! the group's place in the grid and `R`, `C`, `r_s`, `c_s` the fragment's
//! lane and slot parts. Threads of idle groups own nothing. `F` gets no
//! shared buffer; the array is named after it.
//!
//! # Code
//! - `fill`: every thread sets every element of its array (idle groups
//!   included; their values are never read).
//! - `gemm`: the atom code of `gemm.rs`, with the array as its C and D
//!   fragments and no C loads or stores; `clear_accum` zeroes the array
//!   (under an `if` for a runtime flag).
//! - `copy` out: each owning thread stores its elements to their places in
//!   the destination region, converted to its type per element, with the
//!   through-memory copy's guards (elements outside the destination buffer
//!   are skipped). Slots consecutive along the row move as one vector when
//!   the destination's columns are its last dimension and alignment is
//!   proven as for vector copies (`copy.rs`) and the column of the
//!   vector's first element is a multiple of the width: the lane's column
//!   steps, the group's column offset and the slot's tile offset are.
//!
//! # Barriers and fallback
//! `F` is private to each thread, so its reads and writes never enter the
//! shared-memory read/write sets that place barriers. Every thread reads
//! only the elements it wrote itself, because all uses share one plan.
//! When lowering meets a use that cannot take the plan after all (the A or
//! B region is not provably inside its buffer, say), it records the
//! buffer and gives up; the kernel is then lowered again with the buffer
//! in shared memory (`mod.rs`, `lower_kernel`), so nothing the
//! through-memory lowering accepts is refused.

use std::collections::{HashMap, HashSet};

use super::gemm::{AtomOperand, AtomPlan, OperandRegion};
use super::{
    DType, Expr, ExprKind, Index, LowerError, RegId, RegRef, Result, SharedId, Stmt, StmtKind,
    Unroll, gcd, lit_i32, non_unit,
};
use crate::ir::{self, BinaryOp, GemmPolicy, Handle, Region, Scope};
use crate::thread::{Guard, GuardElse, RegisterKind};

use super::Lower;

/// A buffer kept in registers: its plan and its per-thread array.
pub(super) struct ResidentBuf<'a> {
    pub(super) plan: AtomPlan<'a>,
    pub(super) arr: RegId,
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

/// What the scan found about one buffer.
#[derive(Default)]
struct Uses {
    /// Some use is not one of the allowed ones.
    bad: HashSet<Handle<ir::Buffer>>,
    /// The gemms each buffer is the C of: (A, B, C types; M, N, K; policy).
    gemms: HashMap<Handle<ir::Buffer>, Vec<GemmShape>>,
}

type GemmShape = ([DType; 3], (i64, i64, i64), GemmPolicy);

impl<'a> Lower<'a> {
    /// Picks the buffers of the kernel body to keep in registers (module
    /// documentation) and gives each its array.
    pub(super) fn find_resident(&mut self, body: &ir::Block) {
        let mut uses = Uses::default();
        self.scan_block(body, false, &mut uses);
        let f = self.f;
        let mut chosen: Vec<(Handle<ir::Buffer>, AtomPlan<'a>)> = Vec::new();
        for (&b, shapes) in &uses.gemms {
            let buffer = &f.buffers[b];
            if uses.bad.contains(&b)
                || self.excluded.contains(&b)
                || !matches!(buffer.scope, Scope::Fragment | Scope::Local)
                || f.const_shape(b).is_none_or(|s| s.len() != 2)
            {
                continue;
            }
            let mut plan: Option<AtomPlan<'a>> = None;
            let mut ok = true;
            for &(dtypes, mnk, policy) in shapes {
                match (self.choose_plan(dtypes, mnk, policy), &plan) {
                    (Some(p), None) if p.resident => plan = Some(p),
                    (Some(p), Some(q)) if p.same_split(q) => {}
                    _ => ok = false,
                }
            }
            if let (true, Some(plan)) = (ok, plan) {
                chosen.push((b, plan));
            }
        }
        chosen.sort_by_key(|(b, _)| b.index());
        for (b, plan) in chosen {
            let len = plan.tm * plan.tn * plan.maps[2].slots;
            let name = self.claim(&f.buffers[b].name);
            let arr = self.add_reg(
                name,
                f.buffers[b].dtype,
                RegisterKind::Array { len: len as u32 },
            );
            self.resident.insert(b, ResidentBuf { plan, arr });
        }
    }

    /// The attempt gives up keeping `b` in registers (module documentation,
    /// "Barriers and fallback").
    pub(super) fn demote(&mut self, b: Handle<ir::Buffer>) -> LowerError {
        self.demoted = Some(b);
        self.unsupported(format!(
            "`{}` in registers: a gemm on it does not take its accumulator plan",
            self.f.buffers[b].name
        ))
    }

    fn scan_block(&self, block: &ir::Block, parallel: bool, uses: &mut Uses) {
        for stmt in &block.stmts {
            self.scan_stmt(stmt, parallel, uses);
        }
    }

    /// Marks every buffer an expression loads from.
    fn scan_expr(&self, e: Handle<ir::Expr>, uses: &mut Uses) {
        super::for_each_load(self.f, e, |b| {
            uses.bad.insert(b);
        });
    }

    fn scan_region(&self, r: &Region, uses: &mut Uses) {
        for range in &r.ranges {
            self.scan_expr(range.start, uses);
            self.scan_expr(range.extent, uses);
        }
    }

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
    fn gemm_shape(
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

    fn scan_stmt(&self, stmt: &ir::Stmt, parallel: bool, uses: &mut Uses) {
        let f = self.f;
        let bad = |uses: &mut Uses, b: Handle<ir::Buffer>| {
            uses.bad.insert(b);
        };
        match stmt {
            ir::Stmt::Kernel { body, .. } => self.scan_block(body, parallel, uses),
            ir::Stmt::Alloc { buffer, init } => {
                if let Some(i) = init {
                    self.scan_expr(*i, uses);
                    bad(uses, *buffer);
                }
            }
            ir::Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                self.scan_expr(*start, uses);
                self.scan_expr(*extent, uses);
                self.scan_block(body, parallel, uses);
            }
            ir::Stmt::Parallel { extents, body, .. } => {
                for &e in extents {
                    self.scan_expr(e, uses);
                }
                self.scan_block(body, true, uses);
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.scan_expr(*cond, uses);
                self.scan_block(then, parallel, uses);
                self.scan_block(otherwise, parallel, uses);
            }
            ir::Stmt::Let { value, .. } => self.scan_expr(*value, uses),
            ir::Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                for &i in indices {
                    self.scan_expr(i, uses);
                }
                self.scan_expr(*value, uses);
                bad(uses, *buffer);
            }
            ir::Stmt::Copy { src, dst } => {
                self.scan_region(src, uses);
                self.scan_region(dst, uses);
                bad(uses, dst.buffer);
                let to = f.buffers.try_get(dst.buffer).map(|b| b.scope);
                let out = matches!(to, Some(Scope::Global | Scope::Shared));
                if parallel || !out || !self.whole(src) || src.buffer == dst.buffer {
                    bad(uses, src.buffer);
                }
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                policy,
                clear_accum,
            } => {
                for r in [a, b, c] {
                    self.scan_region(r, uses);
                }
                self.scan_expr(*clear_accum, uses);
                bad(uses, a.buffer);
                bad(uses, b.buffer);
                let shape = self.gemm_shape([a, b, c], (*transpose_a, *transpose_b), *policy);
                match shape {
                    Some(s) if !parallel && self.whole(c) && c.buffer != a.buffer => {
                        uses.gemms.entry(c.buffer).or_default().push(s);
                    }
                    _ => bad(uses, c.buffer),
                }
            }
            ir::Stmt::Fill { dst, value } => {
                self.scan_region(dst, uses);
                self.scan_expr(*value, uses);
                if parallel || !self.whole(dst) {
                    bad(uses, dst.buffer);
                }
            }
            ir::Stmt::Reduce { src, dst, .. } | ir::Stmt::Cumsum { src, dst, .. } => {
                bad(uses, *src);
                bad(uses, *dst);
            }
            ir::Stmt::AtomicAdd { dst, value } => {
                self.scan_region(dst, uses);
                bad(uses, dst.buffer);
                match value {
                    ir::AtomicValue::Scalar(e) => self.scan_expr(*e, uses),
                    ir::AtomicValue::Region(r) => {
                        self.scan_region(r, uses);
                        bad(uses, r.buffer);
                    }
                }
            }
            ir::Stmt::Barrier | ir::Stmt::Assume { .. } => {}
        }
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
                super::reg_expr(r, dtype)
            }
        };
        let name = self.fresh("z");
        let var = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let body = vec![self.stmt(StmtKind::Assign {
            dst: RegRef::Elem(arr, super::reg_expr(var, DType::I32)),
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
        Ok((r.arr, r.plan.tm * r.plan.tn * r.plan.maps[2].slots))
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
        let plan = &self.resident[&src.buffer].plan;
        let (m, n, tm, tn, gm, gn) = (plan.m, plan.n, plan.tm, plan.tn, plan.gm, plan.gn);
        let (group, groups) = (plan.group, plan.groups);
        let map = plan.maps[2].clone();
        let (lane, grp, gi, gj) = self.group_coords(plan)?;
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
        let unit = |sr, sc| AtomOperand {
            id: SharedId(u32::MAX),
            dtype: from,
            base: lit_i32(0),
            base_mult: 0,
            sr,
            sc,
        };
        let mut body = Vec::new();
        let row_lane = self.lane_address(&map, &unit(1, 0), &lane, group)?;
        let col_lane = self.lane_address(&map, &unit(0, 1), &lane, group)?;
        let terms = vec![self.scaled(&gi, tm * m)?, row_lane];
        let row0 = self.sum(terms)?;
        let terms = vec![self.scaled(&gj, tn * n)?, col_lane];
        let col0 = self.sum(terms)?;
        let row0 = self.let_reg("row", row0, &mut body);
        let col0 = self.let_reg("col", col0, &mut body);
        let mut col_align = super::gemm::lane_align(&map, &unit(0, 1));
        if gn > 1 {
            col_align = gcd(col_align, tn * n);
        }
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
        let used = gm * gn;
        if used < groups {
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
}
