//! Layout inference: which `fragment` and `local` buffers live in
//! registers in the layout of a matrix atom, and in which one.
//! `resident.rs` holds the code that reads and writes them.
//!
//! # Layouts
//! A gemm plan `P` (`gemm.rs`: the atom, a `gm × gn` grid of issuing
//! groups, `tm × tn` atom tiles of `m × n` per group) gives two register
//! layouts:
//! - **tile(P)**: an `M × N` buffer (the shape of P's C) held as P's
//!   accumulator fragments: every element has exactly one owner thread and
//!   slot, tile `(i, j)` at `(i·tn + j)·slots` of the owner's array;
//! - **rows(P)**: an `M`-element buffer with one value per row of P's C,
//!   kept by every thread that owns an element of that row. Lane `l` of
//!   the group at grid row `gi` holds, at entry `i·Q + q`, row `gi·tm·m +
//!   i·m + R(l) + o_q`, for each of its `tm` tile rows and the `Q` distinct
//!   row offsets `o_q` (ascending) of the fragment's slots. The holders of
//!   a row always agree: every statement that writes a rows buffer computes
//!   the same value on each of them (reductions combine partials with
//!   butterflies, which are symmetric).
//!
//! Two plans have the same tile layout when they split the work alike
//! ([`AtomPlan::same_split`]) and the same rows layout when they give every
//! thread the same rows ([`same_rows`]).
//!
//! # Algorithm
//! 1. **Scan** the kernel body once. A *candidate* is a `fragment` or
//!    `local` buffer with a constant 1-D or 2-D shape. Each use of a
//!    candidate is recorded; a use not in this list makes it *bad* (it
//!    stays in memory):
//!    - `fill` of the whole buffer;
//!    - the C of a gemm (whole, outside `parallel` nests): a *seed*;
//!    - the A of a gemm (whole, not transposed) into another buffer;
//!    - a `copy` of the whole buffer to global or shared memory, or
//!      between two candidates (whole, same shape);
//!    - a `reduce` along the last dimension of a 2-D candidate into a 1-D
//!      one;
//!    - in a `parallel` nest over `[M, N]` with variables `i, j` (not
//!      nested in another nest): `X[i, j]` for `X` of shape `[M, N]` (a
//!      *tile member*) and loads of `X[i]` for `X` of shape `[M]` (a *rows
//!      member*); in a nest over `[M]` with variable `i`: `X[i]` (a rows
//!      member). A nest also records whether it writes anything but rows
//!      members (stores to memory, atomics).
//! 2. **Seed** every gemm C with the plan its gemms choose (all of them the
//!    same split, with resident accumulators), as tile(P).
//! 3. **Propagate** to a fixpoint: a copy between candidates gives both the
//!    same layout; the reduce of a tile(P) buffer gives its destination
//!    rows(P); a 2-D nest takes the tile layout of a member (or tile(P) from
//!    a rows(P) member when P's C is `M × N`), gives it to its tile members
//!    and rows of it to its rows members; a 1-D nest shares one rows layout
//!    among its members.
//! 4. **Check**; a buffer that fails a check becomes bad and inference
//!    starts again from step 2 (a buffer leaves every round, so this ends):
//!    - no buffer meets two different layouts;
//!    - a nest with a member in registers has a layout, and a 1-D one
//!      writes nothing but its rows members, all in registers (the holders
//!      of a row would each store it);
//!    - a copy between candidates has both sides in registers, or neither,
//!      or its source in registers (a copy out, as to global memory);
//!    - a reduce reads a tile(P) buffer with `gn = 1` whose lanes
//!      decompose into row digits and column digits, the column digits
//!      within one SIMT group ([`row_shuffles`]), into a rows(P) buffer or
//!      one left in memory (or reads a buffer left in memory);
//!    - a gemm whose A is in registers has its C in registers with a plan
//!      whose A fragments are held, slot for slot, by the same lanes as the
//!      A buffer's tile layout holds them ([`a_from_tile`], checked for
//!      every lane, slot, tile row and k-step).
//!
//! Buffers left without a layout stay in memory, or are spread by
//! `spread.rs`. Excluded buffers (a previous lowering attempt gave them
//! up, `mod.rs`) start bad.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::gemm::{AtomPlan, FragMap};
use super::{DType, Lower};
use crate::ir::{self, GemmPolicy, Handle, Region, Scope};

type Buf = Handle<ir::Buffer>;

/// The element types, sizes and policy that choose a gemm's plan.
pub(super) type GemmShape = ([DType; 3], (i64, i64, i64), GemmPolicy);

/// Which of the two register layouts of a plan a buffer takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    Tile,
    Rows,
}

/// A buffer's inferred layout.
#[derive(Clone)]
pub(super) struct Layout<'a> {
    pub(super) form: Form,
    pub(super) plan: AtomPlan<'a>,
}

impl Layout<'_> {
    fn agrees(&self, other: &Layout<'_>) -> bool {
        self.form == other.form
            && match self.form {
                Form::Tile => self.plan.same_split(&other.plan),
                Form::Rows => same_rows(&self.plan, &other.plan),
            }
    }
}

/// One `parallel` nest's uses of candidates.
#[derive(Default)]
struct NestUse {
    /// `[M]` or `[M, N]`.
    extents: Vec<i64>,
    tiles: BTreeSet<Buf>,
    rows: BTreeSet<Buf>,
    /// Rows members the nest stores to.
    stores: BTreeSet<Buf>,
    /// Whether the nest writes anything but candidates (memory, atomics).
    writes_memory: bool,
}

impl NestUse {
    fn members(&self) -> impl Iterator<Item = Buf> + '_ {
        self.tiles.iter().chain(&self.rows).copied()
    }
}

/// What the scan found.
#[derive(Default)]
struct Scan {
    bad: HashSet<Buf>,
    gemm_c: HashMap<Buf, Vec<GemmShape>>,
    /// (A, C, shape) of gemms whose A is a candidate.
    gemm_a: Vec<(Buf, Buf, GemmShape)>,
    /// Copies between two candidates.
    edges: Vec<(Buf, Buf)>,
    /// (source, destination) of reduces between candidates.
    reduces: Vec<(Buf, Buf)>,
    nests: Vec<NestUse>,
}

/// Where a scanned statement sits.
#[derive(Clone, Copy)]
enum Ctx<'v> {
    Top,
    /// In nest `n` with these variables.
    Nest(usize, &'v [Handle<ir::Var>]),
    /// In a nest nested in another one: its accesses are not the nest's
    /// identity.
    Nested(usize),
}

impl Ctx<'_> {
    fn nest(self) -> Option<usize> {
        match self {
            Ctx::Top => None,
            Ctx::Nest(n, _) | Ctx::Nested(n) => Some(n),
        }
    }
}

/// `(row, col)` of slot `s` of lane `lane` in a fragment's tile.
pub(super) fn frag_elem(map: &FragMap, lane: i64, s: usize) -> (i64, i64) {
    let (mut row, mut col) = map.slot[s];
    let mut rest = lane;
    for &(extent, r, c) in &map.lane {
        let d = rest % extent.max(1);
        rest /= extent.max(1);
        row += d * r;
        col += d * c;
    }
    (row, col)
}

/// The distinct row offsets of a fragment's slots, ascending.
pub(super) fn row_offsets(map: &FragMap) -> Vec<i64> {
    let set: BTreeSet<i64> = map.slot.iter().map(|&(r, _)| r).collect();
    set.into_iter().collect()
}

/// Whether two plans give every thread the same rows (the rows layout).
pub(super) fn same_rows(p: &AtomPlan<'_>, q: &AtomPlan<'_>) -> bool {
    let lane_row = |plan: &AtomPlan<'_>, lane: i64| {
        let mut map = plan.maps[2].clone();
        map.slot = vec![(0, 0)];
        frag_elem(&map, lane, 0).0
    };
    (p.group, p.groups, p.gm, p.gn, p.tm, p.m) == (q.group, q.groups, q.gm, q.gn, q.tm, q.m)
        && row_offsets(&p.maps[2]) == row_offsets(&q.maps[2])
        && (0..p.group).all(|l| lane_row(p, l) == lane_row(q, l))
}

/// The `shfl_xor` lane offsets that combine a row's partials across the
/// lanes holding it, or `None` when the accumulator's lanes do not split
/// into row digits and column digits with the column digits powers of two
/// inside one SIMT group of `w` lanes.
pub(super) fn row_shuffles(map: &FragMap, w: i64) -> Option<Vec<i64>> {
    let mut offsets = Vec::new();
    let mut below = 1i64;
    for &(extent, r, c) in &map.lane {
        if extent > 1 {
            match (r != 0, c != 0) {
                (true, false) => {}
                (false, true) => {
                    if !(extent as u64).is_power_of_two() || below * extent > w {
                        return None;
                    }
                    let mut o = below * extent / 2;
                    while o >= below {
                        offsets.push(o);
                        o /= 2;
                    }
                }
                _ => return None,
            }
        }
        below = below.checked_mul(extent)?;
    }
    offsets.sort_unstable_by(|a, b| b.cmp(a));
    Some(offsets)
}

/// Where the A fragments of gemm plan `q` come from when A is a buffer in
/// tile(`p`): entry `(i·ksteps + kk)·slots + s` is the index, in the
/// buffer's array, of slot `s` of the A fragment of tile row `i` at k-step
/// `kk`, the same for every lane. `None` when some lane would need an
/// element another lane holds (or the plans split the rows differently).
pub(super) fn a_from_tile(p: &AtomPlan<'_>, q: &AtomPlan<'_>) -> Option<Vec<i64>> {
    let ma = &q.maps[0];
    let mc = &p.maps[2];
    if ma.slots == 0
        || p.gn != 1
        || q.gn != 1
        || (p.gm, p.group, p.groups) != (q.gm, q.group, q.groups)
        || p.tm * p.m != q.tm * q.m
        || p.tn * p.n != q.ksteps * q.k
    {
        return None;
    }
    // Who holds each element of a group's block of tile(p).
    let mut owner: HashMap<(i64, i64), (i64, usize)> = HashMap::new();
    for lane in 0..p.group {
        for s in 0..mc.slot.len() {
            owner.insert(frag_elem(mc, lane, s), (lane, s));
        }
    }
    let mut table = Vec::new();
    for i in 0..q.tm {
        for kk in 0..q.ksteps {
            for s in 0..ma.slot.len() {
                let mut at: Option<i64> = None;
                for lane in 0..q.group {
                    let (r, c) = frag_elem(ma, lane, s);
                    let (row, col) = (i * q.m + r, kk * q.k + c);
                    let (ti, tj) = (row / p.m, col / p.n);
                    let &(holder, slot) = owner.get(&(row % p.m, col % p.n))?;
                    let index = (ti * p.tn + tj) * mc.slots + slot as i64;
                    if holder != lane || at.is_some_and(|a| a != index) {
                        return None;
                    }
                    at = Some(index);
                }
                table.push(at?);
            }
        }
    }
    Some(table)
}

impl<'a> Lower<'a> {
    /// Infers the register layouts of the kernel body's fragment buffers
    /// (module documentation) and gives each chosen buffer its array.
    pub(super) fn find_resident(&mut self, body: &ir::Block) {
        let mut scan = Scan::default();
        self.infer_block(body, Ctx::Top, &mut scan);
        let mut bad = scan.bad.clone();
        bad.extend(self.excluded.iter().copied());
        let layouts = loop {
            match self.infer(&scan, &bad) {
                Ok(layouts) => break layouts,
                Err(leave) => bad.extend(leave),
            }
        };
        let mut chosen: Vec<(Buf, Layout<'a>)> = layouts.into_iter().collect();
        chosen.sort_by_key(|(b, _)| b.index());
        for (b, layout) in chosen {
            self.make_resident(b, layout);
        }
    }

    /// One round of steps 2–4: the layouts, or the buffers that must
    /// leave.
    fn infer(&self, scan: &Scan, bad: &HashSet<Buf>) -> Result<HashMap<Buf, Layout<'a>>, Vec<Buf>> {
        let f = self.f;
        let mut lay: HashMap<Buf, Layout<'a>> = HashMap::new();
        // Seeds.
        let mut seeds: Vec<(&Buf, &Vec<GemmShape>)> = scan.gemm_c.iter().collect();
        seeds.sort_by_key(|(b, _)| b.index());
        for (&c, shapes) in seeds {
            if bad.contains(&c) || f.const_shape(c).is_none_or(|s| s.len() != 2) {
                continue;
            }
            let mut plan: Option<AtomPlan<'a>> = None;
            for &(dtypes, mnk, policy) in shapes {
                match (self.choose_plan(dtypes, mnk, policy), &plan) {
                    (Some(p), None) if p.resident => plan = Some(p),
                    (Some(p), Some(q)) if p.same_split(q) => {}
                    _ => return Err(vec![c]),
                }
            }
            if let Some(plan) = plan {
                lay.insert(
                    c,
                    Layout {
                        form: Form::Tile,
                        plan,
                    },
                );
            }
        }
        // Gives `b` a layout, or reports the disagreement.
        let give = |lay: &mut HashMap<Buf, Layout<'a>>, b: Buf, l: &Layout<'a>| {
            if bad.contains(&b) {
                return Ok(false);
            }
            match lay.get(&b) {
                Some(old) if old.agrees(l) => Ok(false),
                Some(_) => Err(vec![b]),
                None => {
                    lay.insert(b, l.clone());
                    Ok(true)
                }
            }
        };
        // Propagation.
        let mut changed = true;
        while changed {
            changed = false;
            for &(s, d) in &scan.edges {
                if let Some(l) = lay.get(&s).cloned() {
                    changed |= give(&mut lay, d, &l)?;
                } else if let Some(l) = lay.get(&d).cloned() {
                    changed |= give(&mut lay, s, &l)?;
                }
            }
            for &(s, d) in &scan.reduces {
                if let Some(l) = lay.get(&s).filter(|l| l.form == Form::Tile).cloned() {
                    let rows = Layout {
                        form: Form::Rows,
                        plan: l.plan,
                    };
                    changed |= give(&mut lay, d, &rows)?;
                }
            }
            for nest in &scan.nests {
                let Some(plan) = self.nest_plan(nest, &lay, bad) else {
                    continue;
                };
                for &b in &nest.tiles {
                    let l = Layout {
                        form: Form::Tile,
                        plan: plan.clone(),
                    };
                    changed |= give(&mut lay, b, &l)?;
                }
                for &b in &nest.rows {
                    let l = Layout {
                        form: Form::Rows,
                        plan: plan.clone(),
                    };
                    changed |= give(&mut lay, b, &l)?;
                }
            }
        }
        // Checks.
        let placed = |b: &Buf| lay.contains_key(b);
        for nest in &scan.nests {
            let members: Vec<Buf> = nest.members().filter(|b| placed(b)).collect();
            if members.is_empty() {
                continue;
            }
            let plan = self.nest_plan(nest, &lay, bad);
            let rows_nest = nest.extents.len() == 1;
            let unplaced_store = nest.stores.iter().any(|b| !placed(b));
            if plan.is_none() || (rows_nest && (nest.writes_memory || unplaced_store)) {
                return Err(members);
            }
        }
        for &(s, d) in &scan.edges {
            // A tile buffer may be copied into one left in memory.
            let out = placed(&s) && !placed(&d);
            if placed(&s) != placed(&d) && !out {
                return Err([s, d].into_iter().filter(|b| placed(b)).collect());
            }
        }
        let w = self.target.simt_width().map_or(0, i64::from);
        for &(s, d) in &scan.reduces {
            let rows_of = |ls: &Layout<'_>| {
                ls.form == Form::Tile
                    && ls.plan.gn == 1
                    && row_shuffles(&ls.plan.maps[2], w).is_some()
            };
            let ok = match (lay.get(&s), lay.get(&d)) {
                (None, None) => true,
                (Some(ls), Some(ld)) => {
                    rows_of(ls) && ld.form == Form::Rows && same_rows(&ls.plan, &ld.plan)
                }
                (Some(ls), None) => rows_of(ls),
                (None, Some(_)) => false,
            };
            if !ok {
                return Err([s, d].into_iter().filter(|b| placed(b)).collect());
            }
        }
        for (a, c, (dtypes, mnk, policy)) in &scan.gemm_a {
            let Some(la) = lay.get(a) else {
                continue;
            };
            let ok = lay.get(c).is_some_and(|lc| {
                lc.form == Form::Tile
                    && la.form == Form::Tile
                    && self.choose_plan(*dtypes, *mnk, *policy).is_some_and(|q| {
                        q.same_split(&lc.plan) && a_from_tile(&la.plan, &q).is_some()
                    })
            });
            if !ok {
                return Err(vec![*a]);
            }
        }
        Ok(lay)
    }

    /// The plan whose layout a nest takes, from its members in registers.
    fn nest_plan(
        &self,
        nest: &NestUse,
        lay: &HashMap<Buf, Layout<'a>>,
        bad: &HashSet<Buf>,
    ) -> Option<AtomPlan<'a>> {
        let live = |b: &&Buf| !bad.contains(b);
        if let [mm, nn] = nest.extents[..] {
            if let Some(l) = nest.tiles.iter().filter(live).find_map(|b| lay.get(b)) {
                return Some(l.plan.clone());
            }
            // A rows(P) member whose plan's C is the nest's shape.
            return nest
                .rows
                .iter()
                .filter(live)
                .filter_map(|b| lay.get(b))
                .map(|l| &l.plan)
                .find(|p| p.gm * p.tm * p.m == mm && p.gn * p.tn * p.n == nn)
                .cloned();
        }
        nest.rows
            .iter()
            .filter(live)
            .find_map(|b| lay.get(b))
            .map(|l| l.plan.clone())
    }

    /// Whether `b` is a candidate (module documentation, step 1).
    fn candidate(&self, b: Buf) -> bool {
        self.f.buffers.try_get(b).is_some_and(|x| {
            matches!(x.scope, Scope::Fragment | Scope::Local)
                && self
                    .f
                    .const_shape(b)
                    .is_some_and(|s| matches!(s.len(), 1 | 2))
        })
    }

    fn infer_block(&self, block: &ir::Block, ctx: Ctx<'_>, scan: &mut Scan) {
        for stmt in &block.stmts {
            self.infer_stmt(stmt, ctx, scan);
        }
    }

    fn infer_expr(&self, e: Handle<ir::Expr>, ctx: Ctx<'_>, scan: &mut Scan) {
        let f = self.f;
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let Some(node) = f.exprs.try_get(e) else {
                continue;
            };
            if let ir::Expr::Load { buffer, indices } = node {
                self.infer_access(*buffer, indices, false, ctx, scan);
            }
            stack.extend(node.operands());
        }
    }

    fn infer_region(&self, r: &Region, scan: &mut Scan) {
        for range in &r.ranges {
            self.infer_expr(range.start, Ctx::Top, scan);
            self.infer_expr(range.extent, Ctx::Top, scan);
        }
    }

    /// One element access (a load, or a store when `store`).
    fn infer_access(
        &self,
        b: Buf,
        indices: &[Handle<ir::Expr>],
        store: bool,
        ctx: Ctx<'_>,
        scan: &mut Scan,
    ) {
        let f = self.f;
        if !self.candidate(b) {
            if store && let Some(n) = ctx.nest() {
                scan.nests[n].writes_memory = true;
            }
            return;
        }
        let Ctx::Nest(n, vars) = ctx else {
            scan.bad.insert(b);
            if store && let Some(n) = ctx.nest() {
                scan.nests[n].writes_memory = true;
            }
            return;
        };
        let is_var = |i: Handle<ir::Expr>, v: Option<&Handle<ir::Var>>| matches!((f.exprs.try_get(i), v), (Some(ir::Expr::Var(x)), Some(v)) if x == v);
        let shape = f.const_shape(b).unwrap_or_default();
        let nest = &mut scan.nests[n];
        let ext = &nest.extents;
        let by_row = indices.len() == 1
            && is_var(indices[0], vars.first())
            && ext.first().is_some_and(|&m| shape == [m]);
        match ext.len() {
            2 if indices.len() == 2
                && is_var(indices[0], vars.first())
                && is_var(indices[1], vars.get(1))
                && shape == *ext =>
            {
                nest.tiles.insert(b);
            }
            2 if by_row && !store => {
                nest.rows.insert(b);
            }
            1 if by_row => {
                nest.rows.insert(b);
                if store {
                    nest.stores.insert(b);
                }
            }
            _ => {
                nest.writes_memory |= store;
                scan.bad.insert(b);
            }
        }
    }

    fn infer_stmt(&self, stmt: &ir::Stmt, ctx: Ctx<'_>, scan: &mut Scan) {
        let f = self.f;
        let frag = |b: Buf| self.candidate(b);
        // A tile statement inside a nest: its buffers stay in memory.
        if let Some(n) = ctx.nest()
            && matches!(
                stmt,
                ir::Stmt::Copy { .. }
                    | ir::Stmt::Gemm { .. }
                    | ir::Stmt::Fill { .. }
                    | ir::Stmt::Reduce { .. }
                    | ir::Stmt::Cumsum { .. }
                    | ir::Stmt::AtomicAdd { .. }
                    | ir::Stmt::Atomic { .. }
            )
        {
            scan.nests[n].writes_memory = true;
            let mut touched = Vec::new();
            match stmt {
                ir::Stmt::Copy { src, dst } => touched.extend([src.buffer, dst.buffer]),
                ir::Stmt::Gemm { a, b, c, .. } => touched.extend([a.buffer, b.buffer, c.buffer]),
                ir::Stmt::Fill { dst, .. } => touched.push(dst.buffer),
                ir::Stmt::Reduce { src, dst, .. } | ir::Stmt::Cumsum { src, dst, .. } => {
                    touched.extend([*src, *dst]);
                }
                ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                    touched.push(dst.buffer);
                    if let ir::AtomicValue::Region(r) = value {
                        touched.push(r.buffer);
                    }
                    if let ir::AtomicValue::Scalar(e) = value {
                        self.infer_expr(*e, ctx, scan);
                    }
                }
                _ => {}
            }
            scan.bad.extend(touched.into_iter().filter(|&b| frag(b)));
            return;
        }
        match stmt {
            ir::Stmt::Kernel { body, .. } => self.infer_block(body, Ctx::Top, scan),
            ir::Stmt::Alloc { buffer, init } => {
                if let Some(i) = init {
                    self.infer_expr(*i, ctx, scan);
                    scan.bad.insert(*buffer);
                }
            }
            ir::Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                self.infer_expr(*start, ctx, scan);
                self.infer_expr(*extent, ctx, scan);
                self.infer_block(body, ctx, scan);
            }
            ir::Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                for &e in extents {
                    self.infer_expr(e, ctx, scan);
                }
                if let Some(n) = ctx.nest() {
                    self.infer_block(body, Ctx::Nested(n), scan);
                    return;
                }
                let ext: Option<Vec<i64>> = extents.iter().map(|&e| f.as_const_int(e)).collect();
                let n = scan.nests.len();
                scan.nests.push(NestUse {
                    extents: ext.unwrap_or_default(),
                    ..NestUse::default()
                });
                let rank = scan.nests[n].extents.len();
                let inner = if matches!(rank, 1 | 2) && vars.len() == rank {
                    Ctx::Nest(n, vars)
                } else {
                    Ctx::Nested(n)
                };
                self.infer_block(body, inner, scan);
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.infer_expr(*cond, ctx, scan);
                self.infer_block(then, ctx, scan);
                self.infer_block(otherwise, ctx, scan);
            }
            ir::Stmt::Let { value, .. } | ir::Stmt::DeviceAssert { cond: value } => {
                self.infer_expr(*value, ctx, scan)
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
                    self.infer_expr(i, ctx, scan);
                }
                self.infer_expr(*value, ctx, scan);
                self.infer_access(*buffer, indices, true, ctx, scan);
            }
            ir::Stmt::Copy { src, dst } => {
                self.infer_region(src, scan);
                self.infer_region(dst, scan);
                let (s, d) = (src.buffer, dst.buffer);
                let memory = |b: Buf| {
                    matches!(
                        f.buffers.try_get(b).map(|x| x.scope),
                        Some(Scope::Global | Scope::Shared)
                    )
                };
                let whole = self.whole(src) && self.whole(dst);
                match (frag(s), frag(d)) {
                    (true, true) if whole && s != d && f.const_shape(s) == f.const_shape(d) => {
                        scan.edges.push((s, d));
                    }
                    (true, false) if self.whole(src) && memory(d) => {}
                    _ => {
                        scan.bad.extend([s, d].into_iter().filter(|&b| frag(b)));
                    }
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
                    self.infer_region(r, scan);
                }
                self.infer_expr(*clear_accum, ctx, scan);
                let shape = self.gemm_shape([a, b, c], (*transpose_a, *transpose_b), *policy);
                let distinct = a.buffer != c.buffer && b.buffer != c.buffer;
                if frag(b.buffer) {
                    scan.bad.insert(b.buffer);
                }
                match shape {
                    Some(s) if frag(c.buffer) && self.whole(c) && distinct => {
                        scan.gemm_c.entry(c.buffer).or_default().push(s);
                        if frag(a.buffer) {
                            if self.whole(a) && !*transpose_a {
                                scan.gemm_a.push((a.buffer, c.buffer, s));
                            } else {
                                scan.bad.insert(a.buffer);
                            }
                        }
                    }
                    _ => {
                        scan.bad
                            .extend([a.buffer, c.buffer].into_iter().filter(|&x| frag(x)));
                    }
                }
            }
            ir::Stmt::Fill { dst, value } => {
                self.infer_region(dst, scan);
                self.infer_expr(*value, ctx, scan);
                if frag(dst.buffer) && !self.whole(dst) {
                    scan.bad.insert(dst.buffer);
                }
            }
            ir::Stmt::Reduce { src, dst, dim, .. } => {
                let two_to_one = f.const_shape(*src).is_some_and(|s| s.len() == 2)
                    && f.const_shape(*dst).is_some_and(|s| s.len() == 1);
                if frag(*src) && frag(*dst) && two_to_one && *dim == 1 && src != dst {
                    scan.reduces.push((*src, *dst));
                } else {
                    scan.bad
                        .extend([*src, *dst].into_iter().filter(|&b| frag(b)));
                }
            }
            ir::Stmt::Cumsum { src, dst, .. } => {
                scan.bad
                    .extend([*src, *dst].into_iter().filter(|&b| frag(b)));
            }
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                self.infer_region(dst, scan);
                let mut touched = vec![dst.buffer];
                match value {
                    ir::AtomicValue::Scalar(e) => self.infer_expr(*e, ctx, scan),
                    ir::AtomicValue::Region(r) => {
                        self.infer_region(r, scan);
                        touched.push(r.buffer);
                    }
                }
                scan.bad.extend(touched.into_iter().filter(|&b| frag(b)));
            }
            ir::Stmt::Role { body, .. } => self.infer_block(body, ctx, scan),
            ir::Stmt::BarrierArrive { .. } | ir::Stmt::BarrierWait { .. } => {}
            ir::Stmt::AllocBarrier { .. } | ir::Stmt::Barrier | ir::Stmt::Assume { .. } => {}
        }
    }
}
