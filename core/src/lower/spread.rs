//! Element-wise fragments in registers: fragment buffers that are only
//! copied whole, filled, worked on element by element in `parallel` nests
//! and reduced, kept in each thread's registers in the layout the vector
//! copies already use.
//!
//! # Which buffers
//! Before a kernel body is lowered, the uses of each `fragment`- or
//! `local`-scope buffer `F` with a constant shape `S` (`P` elements), no
//! initial value, and not kept as a gemm accumulator (`resident.rs`) are
//! scanned. `F` is spread when every use is one of:
//! - a load or store of `F[v₁, …, vₙ]` in a `parallel` nest of the kernel
//!   body (not nested in another one) whose extents are exactly `S` and
//!   whose variables are `v₁ … vₙ`, in order (at any depth of the nest's
//!   body, but not in a nested `parallel`);
//! - a `copy` of the whole of `F` to, or from, a region of a global or
//!   shared buffer;
//! - a `fill` of the whole of `F`;
//! - the source of a `reduce` along the last dimension, into another
//!   buffer, when the layout allows it (below).
//!
//! # Layout
//! Thread `t` of `T` owns the flat (row-major) elements `(k·T + t)·v + j`
//! for sweeps `k < K = ⌈P / (T·v)⌉` and `j < v`, in a local array of `K·v`
//! elements, element `(k, j)` at `k·v + j`; elements at or past `P` are
//! owned by nobody (their slots are never read). This is the distribution
//! of vector copies (`copy.rs`) with vectors of `v`: `v` is the largest
//! power of two, at most 8, that divides the last extent of `S` and that
//! every copy's other side can move in one vector (the width rule of
//! `copy.rs`). Buffers of one shape share `v`, so a nest's iterations own
//! the same elements of all of them. A buffer whose array would exceed 64
//! elements stays in shared memory, as do the largest ones while the spread
//! buffers of a kernel would exceed 128 elements per thread together.
//!
//! # Code
//! - A nest over `S` becomes two unrolled loops over `k` and `j`; the
//!   iteration binds the nest variables to the digits of its element (under
//!   `if e < P` when `T·v` does not divide `P`), and `F[v₁, …]` reads or
//!   writes array element `k·v + j`.
//! - A copy moves sweep `k`'s `v` elements with one vector load or store of
//!   the other side (its guard, as for vector copies, is exact for the
//!   vector), converting per element in registers.
//! - A fill sets every slot.
//! - A reduce along the last dimension, of length `N`, folds each row from
//!   the `G` threads that hold it: when `T·v` divides `N` every thread holds
//!   `R = N / (T·v)` sweeps of each row (`G = T`); when `N` divides `T·v`
//!   (with `N / v` a power of two) a sweep holds `T·v / N` rows, each on
//!   `G = N / v` consecutive threads (`R = 1`). Other shapes keep `F` in
//!   shared memory. Each thread folds its slots of a row into an `f64`
//!   (`i64`) partial; partials combine by `shfl_xor` butterflies within
//!   `min(G, W)` lanes and, when `G` exceeds the SIMT width `W`, through the
//!   scratch array of `reduce.rs` (lane 0 of each warp writes its partial
//!   of each row, one barrier, then each row is folded by one thread in
//!   warp order). The old destination value is folded in last unless the
//!   reduction clears; the result is rounded once.
//!
//! # Spilled buffers
//! When a kernel does not fit the shared memory with every other choice
//! given up (`mod.rs`, the retry loop's last step), the buffers above the
//! register caps are spread as well, in arrays of up to 1024 elements per
//! thread and 2048 together: TileLang keeps every fragment in registers
//! whatever its size, and so does this attempt, leaving the backend to
//! spill what its registers cannot hold to thread-private memory (PTX
//! local memory, AMDGPU scratch). Slower than registers, but a kernel
//! TileLang runs is not refused for its shared memory.
//!
//! Spread buffers are private to each thread, so they never enter the
//! shared-memory read/write sets of the barrier analysis. When lowering
//! meets a use it cannot take after all, it gives the buffer up and the
//! kernel is lowered again with the buffer in shared memory (`mod.rs`).

use std::collections::{BTreeMap, HashSet};

use super::{
    BinaryOp, DType, Expr, ExprKind, Handle, Index, Lower, RegId, RegRef, RegisterKind, Result,
    Stmt, StmtKind, Unroll, gcd, ir, lit_i32, non_unit, reg_expr,
};
use crate::ir::{Region, Scope};

/// Largest array a spread buffer may take, in elements per thread.
const MAX_SLOTS: i64 = 64;
/// Largest total of the spread buffers' arrays of one kernel.
const MAX_TOTAL_SLOTS: i64 = 128;
/// Largest array a spilled buffer may take, in elements per thread.
const MAX_SPILL_SLOTS: i64 = 1024;
/// Largest total of the spread and spilled arrays of one kernel.
const MAX_SPILL_TOTAL_SLOTS: i64 = 2048;

/// A buffer kept spread over the threads' registers.
#[derive(Clone, Debug)]
pub(super) struct SpreadBuf {
    pub(super) arr: RegId,
    pub(super) shape: Vec<i64>,
    /// Elements per thread and sweep.
    pub(super) v: i64,
    /// Sweeps.
    pub(super) k: i64,
}

impl SpreadBuf {
    fn elements(&self) -> i64 {
        self.shape.iter().product()
    }
}

/// What the scan found.
#[derive(Default)]
struct Scan {
    bad: HashSet<Handle<ir::Buffer>>,
    /// Per buffer: the other side of each whole copy.
    copies: BTreeMap<usize, Vec<Region>>,
    /// Per buffer: the dimensions it is reduced along.
    reduces: BTreeMap<usize, Vec<usize>>,
    /// Buffers that some use touches at all.
    used: HashSet<Handle<ir::Buffer>>,
}

impl Scan {
    fn bad(&mut self, b: Handle<ir::Buffer>) {
        self.bad.insert(b);
        self.used.insert(b);
    }
}

/// The reduce plan of a spread buffer along its last dimension.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowPlan {
    /// Threads holding one row.
    pub(super) g: i64,
    /// Sweeps per row.
    pub(super) r: i64,
    /// Rows per sweep (`T / G`).
    pub(super) s: i64,
    /// Number of rows.
    pub(super) rows: i64,
}

impl Lower<'_> {
    /// The reduce plan for a buffer of `shape` spread with `v` elements per
    /// sweep, or `None` when its rows do not split evenly over threads.
    pub(super) fn row_plan(&self, shape: &[i64], v: i64) -> Option<RowPlan> {
        let t = self.threads;
        let n = *shape.last()?;
        let p: i64 = shape.iter().product();
        if n < 1 || v < 1 || p < 1 {
            return None;
        }
        let rows = p / n;
        let tv = t * v;
        if n % tv == 0 {
            return Some(RowPlan {
                g: t,
                r: n / tv,
                s: 1,
                rows,
            });
        }
        if tv % n == 0 && n % v == 0 {
            let g = n / v;
            if (g as u64).is_power_of_two() && t % g == 0 {
                return Some(RowPlan {
                    g,
                    r: 1,
                    s: t / g,
                    rows,
                });
            }
        }
        None
    }

    /// Picks the buffers of the kernel body to spread (module
    /// documentation) and gives each its array.
    pub(super) fn find_spread(&mut self, body: &ir::Block) {
        let Some(w) = self.target.simt_width() else {
            return;
        };
        if !(w as u64).is_power_of_two() || self.threads % i64::from(w) != 0 {
            return;
        }
        let mut scan = Scan::default();
        self.spread_scan_block(body, None, &mut scan);
        let f = self.f;
        // Candidates and their widths.
        let mut cands: Vec<(Handle<ir::Buffer>, Vec<i64>, i64)> = Vec::new();
        for &b in &scan.used {
            let buffer = &f.buffers[b];
            if scan.bad.contains(&b)
                || self.excluded.contains(&b)
                || self.resident.contains_key(&b)
                || !matches!(buffer.scope, Scope::Fragment | Scope::Local)
            {
                continue;
            }
            let Some(shape) = f.const_shape(b) else {
                continue;
            };
            let Some(&last) = shape.last() else {
                continue;
            };
            if shape.iter().product::<i64>() < 1 {
                continue;
            }
            let mut v = 8;
            while v > 1 && last % v != 0 {
                v /= 2;
            }
            for region in scan.copies.get(&b.index()).into_iter().flatten() {
                v = v.min(self.partner_width(region));
            }
            cands.push((b, shape, v));
        }
        // One width per shape.
        let mut by_shape: BTreeMap<Vec<i64>, i64> = BTreeMap::new();
        for (_, shape, v) in &cands {
            let e = by_shape.entry(shape.clone()).or_insert(*v);
            *e = (*e).min(*v);
        }
        let t = self.threads;
        let mut chosen: Vec<(Handle<ir::Buffer>, Vec<i64>, i64, i64)> = Vec::new();
        for (b, shape, _) in cands {
            let v = by_shape[&shape];
            let p: i64 = shape.iter().product();
            let k = (p + t * v - 1) / (t * v);
            if k * v
                > if self.spill {
                    MAX_SPILL_SLOTS
                } else {
                    MAX_SLOTS
                }
            {
                continue;
            }
            let dims = scan.reduces.get(&b.index()).cloned().unwrap_or_default();
            let ok = dims
                .iter()
                .all(|&d| d + 1 == shape.len() && self.row_plan(&shape, v).is_some());
            if ok {
                chosen.push((b, shape, v, k));
            }
        }
        // Within the kernel's budget, smallest first; when spilling, the
        // larger ones that do not fit the registers go to per-thread arrays
        // beyond it.
        chosen.sort_by_key(|(b, _, v, k)| (v * k, b.index()));
        let mut total = 0;
        let mut spilled = 0;
        for (b, shape, v, k) in chosen {
            if total + v * k > MAX_TOTAL_SLOTS {
                if !self.spill || total + spilled + v * k > MAX_SPILL_TOTAL_SLOTS {
                    continue;
                }
                spilled += v * k;
            } else {
                total += v * k;
            }
            let name = self.claim(&f.buffers[b].name);
            let arr = self.add_reg(
                name,
                f.buffers[b].dtype,
                RegisterKind::Array {
                    len: (v * k) as u32,
                },
            );
            self.spread.insert(b, SpreadBuf { arr, shape, v, k });
        }
    }

    /// The vector width the other side of a copy with a spread buffer can
    /// move (the width rule of `copy.rs`; shared buffers are not allocated
    /// yet, so their dimensions come from their shapes).
    fn partner_width(&self, r: &Region) -> i64 {
        let f = self.f;
        let Some(extents) = r
            .ranges
            .iter()
            .map(|range| f.as_const_int(range.extent))
            .collect::<Option<Vec<i64>>>()
        else {
            return 1;
        };
        let mults: Vec<i64> = r.ranges.iter().map(|x| self.multiple(x.start)).collect();
        match self.mems.get(&r.buffer) {
            Some(_) => self.region_width(r.buffer, &mults, &extents),
            None => {
                let Some(dim) = f.const_shape(r.buffer).and_then(|s| s.last().copied()) else {
                    return 1;
                };
                let (Some(&last), Some(&start)) = (extents.last(), mults.last()) else {
                    return 1;
                };
                let facts = gcd(gcd(last, start), dim);
                let mut w = self
                    .vector_limit(true, f.buffers[r.buffer].dtype)
                    .min(self.map_vector(r.buffer));
                while w > 1 && facts % w != 0 {
                    w /= 2;
                }
                w
            }
        }
    }

    fn spread_scan_block(&self, block: &ir::Block, nest: Option<&Nest>, scan: &mut Scan) {
        for stmt in &block.stmts {
            self.spread_scan_stmt(stmt, nest, scan);
        }
    }

    /// Loads in `e`: allowed only as `F[nest vars]` inside a nest over F's
    /// shape.
    fn spread_scan_expr(&self, e: Handle<ir::Expr>, nest: Option<&Nest>, scan: &mut Scan) {
        let f = self.f;
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let Some(node) = f.exprs.try_get(e) else {
                continue;
            };
            if let ir::Expr::Load { buffer, indices } = node {
                self.spread_access(*buffer, indices, nest, scan);
            }
            stack.extend(node.operands());
        }
    }

    fn spread_access(
        &self,
        b: Handle<ir::Buffer>,
        indices: &[Handle<ir::Expr>],
        nest: Option<&Nest>,
        scan: &mut Scan,
    ) {
        scan.used.insert(b);
        let f = self.f;
        let ok = nest.is_some_and(|n| {
            f.const_shape(b).is_some_and(|s| s == n.extents)
                && indices.len() == n.vars.len()
                && indices
                    .iter()
                    .zip(&n.vars)
                    .all(|(&i, &v)| matches!(f.exprs.try_get(i), Some(ir::Expr::Var(x)) if *x == v))
        });
        if !ok {
            scan.bad(b);
        }
    }

    fn spread_scan_region(&self, r: &Region, scan: &mut Scan) {
        for range in &r.ranges {
            self.spread_scan_expr(range.start, None, scan);
            self.spread_scan_expr(range.extent, None, scan);
        }
    }

    fn spread_scan_stmt(&self, stmt: &ir::Stmt, nest: Option<&Nest>, scan: &mut Scan) {
        let f = self.f;
        let mem_scope = |b: Handle<ir::Buffer>| {
            f.buffers
                .try_get(b)
                .map(|x| x.scope)
                .unwrap_or(Scope::Global)
        };
        match stmt {
            ir::Stmt::Kernel { body, .. } => self.spread_scan_block(body, None, scan),
            ir::Stmt::Alloc { buffer, init } => {
                if let Some(i) = init {
                    self.spread_scan_expr(*i, nest, scan);
                    scan.bad(*buffer);
                }
            }
            ir::Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                self.spread_scan_expr(*start, nest, scan);
                self.spread_scan_expr(*extent, nest, scan);
                self.spread_scan_block(body, nest, scan);
            }
            ir::Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                if nest.is_some() {
                    // A nested nest runs serially in a thread: its
                    // accesses are not the nest's identity.
                    self.spread_scan_block(body, Some(&Nest::poisoned()), scan);
                    return;
                }
                let ext: Option<Vec<i64>> = extents.iter().map(|&e| f.as_const_int(e)).collect();
                let inner = match ext {
                    Some(extents) => Nest {
                        vars: vars.clone(),
                        extents,
                    },
                    None => Nest::poisoned(),
                };
                self.spread_scan_block(body, Some(&inner), scan);
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.spread_scan_expr(*cond, nest, scan);
                self.spread_scan_block(then, nest, scan);
                self.spread_scan_block(otherwise, nest, scan);
            }
            ir::Stmt::Let { value, .. } | ir::Stmt::DeviceAssert { cond: value } => {
                self.spread_scan_expr(*value, nest, scan)
            }
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
                for &i in indices {
                    self.spread_scan_expr(i, nest, scan);
                }
                self.spread_scan_expr(*value, nest, scan);
                self.spread_access(*buffer, indices, nest, scan);
            }
            ir::Stmt::Copy { src, dst } => {
                self.spread_scan_region(src, scan);
                self.spread_scan_region(dst, scan);
                scan.used.insert(src.buffer);
                scan.used.insert(dst.buffer);
                let plain = |b| matches!(mem_scope(b), Scope::Global | Scope::Shared);
                let shapes_match = {
                    let e = |r: &Region| -> Option<Vec<i64>> {
                        r.ranges.iter().map(|x| f.as_const_int(x.extent)).collect()
                    };
                    matches!((e(src), e(dst)), (Some(a), Some(b)) if non_unit(&a) == non_unit(&b))
                };
                let fine = nest.is_none() && shapes_match && src.buffer != dst.buffer;
                if fine && self.whole(src) && plain(dst.buffer) {
                    scan.copies
                        .entry(src.buffer.index())
                        .or_default()
                        .push(dst.clone());
                } else {
                    scan.bad(src.buffer);
                }
                if fine && self.whole(dst) && plain(src.buffer) {
                    scan.copies
                        .entry(dst.buffer.index())
                        .or_default()
                        .push(src.clone());
                } else {
                    scan.bad(dst.buffer);
                }
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                for r in [a, b, c] {
                    self.spread_scan_region(r, scan);
                    scan.bad(r.buffer);
                }
                self.spread_scan_expr(*clear_accum, nest, scan);
            }
            ir::Stmt::Fill { dst, value } => {
                self.spread_scan_region(dst, scan);
                self.spread_scan_expr(*value, nest, scan);
                scan.used.insert(dst.buffer);
                if nest.is_some() || !self.whole(dst) {
                    scan.bad(dst.buffer);
                }
            }
            ir::Stmt::Reduce { src, dst, dim, .. } => {
                scan.used.insert(*src);
                scan.bad(*dst);
                if nest.is_some() || src == dst {
                    scan.bad(*src);
                } else {
                    scan.reduces
                        .entry(src.index())
                        .or_default()
                        .push(*dim as usize);
                }
            }
            ir::Stmt::Cumsum { src, dst, .. } => {
                scan.bad(*src);
                scan.bad(*dst);
            }
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                self.spread_scan_region(dst, scan);
                scan.bad(dst.buffer);
                match value {
                    ir::AtomicValue::Scalar(e) => self.spread_scan_expr(*e, nest, scan),
                    ir::AtomicValue::Region(r) => {
                        self.spread_scan_region(r, scan);
                        scan.bad(r.buffer);
                    }
                }
            }
            ir::Stmt::Role { body, .. } => self.spread_scan_block(body, nest, scan),
            ir::Stmt::AllocBarrier { .. }
            | ir::Stmt::BarrierArrive { .. }
            | ir::Stmt::BarrierWait { .. } => {}
            ir::Stmt::Barrier | ir::Stmt::Assume { .. } => {}
        }
    }

    // ----- code ----------------------------------------------------------

    /// Whether a `parallel` nest touches a spread buffer (then it takes
    /// the spread layout).
    pub(super) fn nest_spread(&self, body: &ir::Block) -> Option<SpreadBuf> {
        let mut found = None;
        let mut visit = |b: Handle<ir::Buffer>| {
            if found.is_none()
                && let Some(s) = self.spread.get(&b)
            {
                found = Some(s.clone());
            }
        };
        super::visit_nest_buffers(self.f, body, &mut visit);
        found
    }

    /// Two nested unrolled loops over the sweeps and slots of `layout`,
    /// calling `body` with the element's flat index `e`, the slot
    /// `k·v + j`, and the statements to append to (already under `if e < P`
    /// when some elements are owned by nobody).
    fn for_each_slot(
        &mut self,
        layout: &SpreadBuf,
        out: &mut Vec<Stmt>,
        body: impl FnOnce(&mut Self, Expr, Expr, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        let (t, v, k) = (self.threads, layout.v, layout.k);
        let p = layout.elements();
        let kname = self.fresh("k");
        let kr = self.add_reg(kname, DType::I32, RegisterKind::Loop);
        let jname = self.fresh("j");
        let jr = self.add_reg(jname, DType::I32, RegisterKind::Loop);
        let ke = reg_expr(kr, DType::I32);
        let je = reg_expr(jr, DType::I32);
        // e = (k·T + t)·v + j
        let vec = self.bin(
            BinaryOp::Add,
            self.bin(BinaryOp::Mul, ke.clone(), lit_i32(t))?,
            self.tid(),
        )?;
        let e = self.bin(
            BinaryOp::Add,
            self.bin(BinaryOp::Mul, vec, lit_i32(v))?,
            je.clone(),
        )?;
        let slot = self.bin(BinaryOp::Add, self.bin(BinaryOp::Mul, ke, lit_i32(v))?, je)?;
        let mut inner = Vec::new();
        body(self, e.clone(), slot, &mut inner)?;
        let inner = if p % (t * v) == 0 {
            inner
        } else {
            vec![self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, e, lit_i32(p))?,
                then_body: inner,
                else_body: None,
            })]
        };
        let jloop = self.stmt(StmtKind::For {
            var: jr,
            start: lit_i32(0),
            count: lit_i32(v),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: inner,
        });
        out.push(self.stmt(StmtKind::For {
            var: kr,
            start: lit_i32(0),
            count: lit_i32(k),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: vec![jloop],
        }));
        Ok(())
    }

    /// A `parallel` nest over the shape of the spread buffers it touches.
    pub(super) fn spread_nest(
        &mut self,
        layout: &SpreadBuf,
        vars: &[Handle<ir::Var>],
        extents: &[i64],
        body: &ir::Block,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        if extents != layout.shape.as_slice() {
            return Err(self.malformed("a spread nest over another shape"));
        }
        let ext = extents.to_vec();
        self.for_each_slot(layout, out, |s, e, slot, inner| {
            let d = s.digits(&e, &ext)?;
            for ((&var, ix), &n) in vars.iter().zip(d).zip(&ext) {
                s.bind_index_var(var, ix.expr, (0, n - 1), inner);
            }
            let saved = s.spread_slot.replace(slot);
            let r = s.thread_block(body, inner);
            s.spread_slot = saved;
            r
        })
    }

    /// `F[vars]` inside a spread nest: the array element of the current
    /// slot.
    pub(super) fn spread_elem(&mut self, b: Handle<ir::Buffer>) -> Result<RegRef> {
        let (Some(layout), Some(slot)) = (self.spread.get(&b), self.spread_slot.clone()) else {
            self.demoted = Some(b);
            return Err(self.unsupported(format!(
                "an access of the register fragment `{}` outside its nests",
                self.f.buffers[b].name
            )));
        };
        Ok(RegRef::Elem(layout.arr, slot))
    }

    /// `fill` of a whole spread buffer.
    pub(super) fn spread_fill(
        &mut self,
        b: Handle<ir::Buffer>,
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let layout = self.spread[&b].clone();
        let dtype = self.f.buffers[b].dtype;
        let value = if value.dtype == dtype {
            value
        } else {
            Expr::cast(dtype, value)
        };
        let value = match value.kind {
            ExprKind::Literal(_) => value,
            _ => reg_expr(self.in_register(value, out).reg(), dtype),
        };
        let name = self.fresh("s");
        let sr = self.add_reg(name, DType::I32, RegisterKind::Loop);
        out.push(self.stmt(StmtKind::For {
            var: sr,
            start: lit_i32(0),
            count: lit_i32(layout.k * layout.v),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body: vec![self.stmt(StmtKind::Assign {
                dst: RegRef::Elem(layout.arr, reg_expr(sr, DType::I32)),
                value,
            })],
        }));
        Ok(())
    }

    /// A `copy` between a whole spread buffer and a global or shared
    /// region, one vector of `v` per sweep.
    pub(super) fn spread_copy(
        &mut self,
        src: &Region,
        dst: &Region,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let outward = self.spread.contains_key(&src.buffer);
        let (fbuf, other) = if outward { (src, dst) } else { (dst, src) };
        let layout = self.spread[&fbuf.buffer].clone();
        let (ostarts, oext) = self.region(other, out)?;
        if non_unit(&oext) != non_unit(&layout.shape) {
            return Err(self.malformed("copy regions differ in shape"));
        }
        let (t, v, k) = (self.threads, layout.v, layout.k);
        if oext.last().is_none_or(|&l| l % v != 0) {
            self.demoted = Some(fbuf.buffer);
            return Err(self.unsupported("a copy with a spread fragment of another width"));
        }
        let p = layout.elements();
        let ftype = self.f.buffers[fbuf.buffer].dtype;
        let otype = self.f.buffers[other.buffer].dtype;
        let tmp = if ftype == otype {
            None
        } else {
            let name = self.fresh("c");
            Some(self.add_reg(name, otype, RegisterKind::Array { len: v as u32 }))
        };
        let kname = self.fresh("k");
        let kr = self.add_reg(kname, DType::I32, RegisterKind::Loop);
        let ke = reg_expr(kr, DType::I32);
        let vecn = self.bin(
            BinaryOp::Add,
            self.bin(BinaryOp::Mul, ke.clone(), lit_i32(t))?,
            self.tid(),
        )?;
        let base_slot = self.bin(BinaryOp::Mul, ke, lit_i32(v))?;
        let mut body = Vec::new();
        let d = self.vector_digits(&vecn, &oext, v)?;
        let idx: Vec<Index> = self.offset(&ostarts, &d)?;
        let convert = |s: &mut Self,
                       from: (RegId, Expr, DType),
                       to: (RegId, Expr, DType),
                       body: &mut Vec<Stmt>|
         -> Result<()> {
            for j in 0..v {
                let fi = s.bin(BinaryOp::Add, from.1.clone(), lit_i32(j))?;
                let ti = s.bin(BinaryOp::Add, to.1.clone(), lit_i32(j))?;
                let x = Expr {
                    kind: ExprKind::Elem(from.0, Box::new(fi)),
                    dtype: from.2,
                };
                body.push(s.stmt(StmtKind::Assign {
                    dst: RegRef::Elem(to.0, ti),
                    value: Expr::cast(to.2, x),
                }));
            }
            Ok(())
        };
        if outward {
            let (arr, at) = match tmp {
                Some(c) => {
                    convert(
                        self,
                        (layout.arr, base_slot.clone(), ftype),
                        (c, lit_i32(0), otype),
                        &mut body,
                    )?;
                    (c, lit_i32(0))
                }
                None => (layout.arr, base_slot.clone()),
            };
            self.vector_store_at(other.buffer, &idx, arr, at, v, &mut body)?;
        } else {
            match tmp {
                Some(c) => {
                    self.vector_load_at(other.buffer, &idx, c, lit_i32(0), v, &mut body)?;
                    convert(
                        self,
                        (c, lit_i32(0), otype),
                        (layout.arr, base_slot.clone(), ftype),
                        &mut body,
                    )?;
                }
                None => {
                    self.vector_load_at(other.buffer, &idx, layout.arr, base_slot, v, &mut body)?;
                }
            }
        }
        let body = if p % (t * v) == 0 {
            body
        } else {
            vec![self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, vecn, lit_i32(p / v))?,
                then_body: body,
                else_body: None,
            })]
        };
        out.push(self.stmt(StmtKind::For {
            var: kr,
            start: lit_i32(0),
            count: lit_i32(k),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body,
        }));
        Ok(())
    }

    /// Whether the `reduce` of spread `src` exchanges partials through the
    /// scratch array.
    pub(super) fn spread_reduce_uses_scratch(&self, src: Handle<ir::Buffer>) -> Option<bool> {
        let layout = self.spread.get(&src)?;
        let w = i64::from(self.target.simt_width()?);
        Some(
            self.row_plan(&layout.shape, layout.v)
                .is_some_and(|p| p.g > w),
        )
    }
}

/// The `parallel` nest a scanned statement sits in (its variables and
/// constant extents); a poisoned nest matches no buffer.
struct Nest {
    vars: Vec<Handle<ir::Var>>,
    extents: Vec<i64>,
}

impl Nest {
    fn poisoned() -> Nest {
        Nest {
            vars: Vec::new(),
            extents: vec![-1],
        }
    }
}
