//! Gemm fragments loaded through the target's warp-wide matrix loads
//! (`matrix_loads`, PTX's `ldmatrix`) instead of one shared load per lane
//! and slot run.
//!
//! # When
//! A matrix load moves `count` small matrices (`rows` rows of `row_bytes`)
//! at once: lane `rows·j + r` names where row `r` of matrix `j` starts,
//! and each lane receives `per` elements of every matrix, in the load's
//! fragment (or its transposed fragment). The fragments of one k-step of
//! an operand — its `tiles` atom tiles, slot `s` of tile `t` at
//! `t·slots + s` of the operand's array — can come from such loads when:
//! - the atom is issued by one warp (the load's lanes are the atom's);
//! - the operand's elements are as wide as the load's, and its memory
//!   rows (the direction of stride 1) are the load's rows;
//! - cutting the slots into chunks of `per·count`, every lane's slot of
//!   every matrix in every chunk is the atom fragment's element for that
//!   array position: checked for every lane and slot (the plan is derived
//!   from lane 0 and verified on all), with matrix `j`'s first row at the
//!   same offset from its chunk's origin in every chunk;
//! - every row start is a multiple of the load's row alignment, whatever
//!   the run-time parts of the address are (their known multiples are
//!   checked).
//!
//! `count` is the largest the description allows that divides the slots.
//! Otherwise the fragments are loaded slot by slot as before.
//!
//! # Swizzled operands
//! For an operand in an XOR-swizzled buffer (`swizzle.rs`) the plan is
//! kept in memory coordinates: matrix `j`'s first row `(r_j, c_j)` and each
//! chunk's shift `(dr, dc)`. Lane `l` supplies row `l % rows + r_j + g_r`,
//! column `c_j + g_c` (`g` the issuing group's offset), whose swizzled index
//! `L` it computes once. A load at shift `(dr, dc)` (the k-step's offset
//! added along its direction) reads `(L ^ (dc mod P)) + (dc / P)·R·P +
//! dr·P`, with `P` the panel's columns and `R` its rows. That is the
//! swizzled index of the shifted row when `dr` is a multiple of 8 (a row's
//! XOR key repeats every 8 rows) and the bits of `dc mod P` are disjoint
//! from those of every lane's `c_j + g_c mod P` (the XOR then adds the
//! columns); [`swizzle_commutes`] checks both for every lane, group and
//! k-step. The base (a pipeline stage's offset, a multiple of the whole
//! buffer) is added outside the XOR.
//!
//! # Mapped operands
//! An operand in a buffer with a mapped layout (`mapped.rs`) whose map
//! keeps runs of at least 16 bytes is planned in memory coordinates as a
//! swizzled one. Lane `l` computes once the row-major index of the row it
//! supplies (the operand's start in the buffer added); each load adds its
//! chunk's shift and the k-step's offset to that index and computes the
//! map on the sum, plus the stage's offset. That reads 16 consecutive,
//! aligned bytes when every row start is a multiple of 16 bytes' columns
//! for every lane, group, chunk and k-step ([`mapped_rows_aligned`]);
//! otherwise the operand is loaded per lane.
//!
//! # Code
//! Each thread computes once the address of the row it supplies: the
//! operand's base and group offset as for fragment loads, plus `(lane %
//! rows)·row stride` plus matrix `(lane / rows) % count`'s row offset (a
//! `select` chain). Each k-step then issues one matrix load per chunk at
//! that address plus the k offset and the chunk's offset.

use super::gemm::{AtomOperand, FragMap};
use super::mapped::Arranged;
use super::{BinaryOp, Expr, Lower, RegId, Result, Stmt, StmtKind, gcd, lit_i32};
use crate::target::MatrixLoad;
use crate::thread::{FragRef, SharedId};

/// How the fragments of one operand's k-step come from matrix loads.
pub(super) struct LoadPlan {
    pub(super) name: String,
    pub(super) count: u32,
    pub(super) trans: bool,
    rows: i64,
    /// Memory distance between consecutive rows of a loaded matrix.
    row_stride: i64,
    /// Memory offset of matrix `j`'s first row from its chunk's origin.
    origins: Vec<i64>,
    /// Per chunk: its first array position and its memory offset.
    pub(super) chunks: Vec<(i64, i64)>,
    /// For an operand in an XOR-swizzled buffer: the same plan in memory
    /// coordinates (the linear offsets above are then unused).
    pub(super) swizzled: Option<SwizzledLoads>,
}

/// A matrix-load plan over an XOR-swizzled buffer (`swizzle.rs`) or a
/// mapped one (`mapped.rs`), in memory coordinates (row, column of the
/// buffer; the loaded matrices' rows are the buffer's rows).
#[derive(Clone, Debug)]
pub(super) struct SwizzledLoads {
    pub(super) layout: Arranged,
    /// Matrix `j`'s first row in the first chunk, relative to the
    /// operand's origin.
    pub(super) origins: Vec<(i64, i64)>,
    /// Per chunk: its shift from the first chunk.
    pub(super) shifts: Vec<(i64, i64)>,
}

impl LoadPlan {
    /// The fragment array positions one instruction moves.
    pub(super) fn chunk_len(&self, total: i64) -> i64 {
        total / (self.chunks.len() as i64).max(1)
    }
}

/// What a matrix move plan is sought for: the fragment map, the operand's
/// addressing, the atom tiles' origins, the lanes of one move, whether the
/// operand's rows are the memory rows, and what the run-time part of its
/// address is a multiple of.
struct Shape<'x> {
    map: &'x FragMap,
    op: &'x AtomOperand,
    tiles: &'x [(i64, i64)],
    lanes: i64,
    along_cols: bool,
    runtime_mult: i64,
}

/// `(row, col)` of slot `s` of lane `lane` in a decomposed fragment.
fn coord(map: &FragMap, lane: i64, s: usize) -> (i64, i64) {
    let (mut r, mut c) = map.slot.get(s).copied().unwrap_or((0, 0));
    let mut rest = lane;
    for &(extent, dr, dc) in &map.lane {
        let digit = rest % extent.max(1);
        rest /= extent.max(1);
        r += digit * dr;
        c += digit * dc;
    }
    (r, c)
}

/// The plan for `load` with `count` and `trans`, or `None` when some lane
/// or slot disagrees.
#[allow(clippy::too_many_arguments)]
fn try_plan(
    load: &MatrixLoad,
    count: u32,
    trans: bool,
    map: &FragMap,
    op: &AtomOperand,
    tiles: &[(i64, i64)],
    lanes: i64,
    along_cols: bool,
) -> Option<LoadPlan> {
    let fragment = load.fragment(trans).ok()??;
    if fragment.threads() as i64 != lanes {
        return None;
    }
    let per = fragment.slots() as i64;
    let total = tiles.len() as i64 * map.slots;
    let chunk = per * i64::from(count);
    if chunk == 0 || total % chunk != 0 {
        return None;
    }
    // The loaded matrix's (row, col) of every (lane, slot), in tile
    // coordinates relative to the matrix's origin.
    let mut rel = Vec::with_capacity((lanes * per) as usize);
    for l in 0..lanes {
        for e in 0..per {
            let el = fragment.element(l as u64, e as u64).ok()?;
            let (r, c) = (*el.first()? as i64, *el.get(1)? as i64);
            rel.push(if along_cols { (r, c) } else { (c, r) });
        }
    }
    let virtual_coord = |lane: i64, v: i64| -> Option<(i64, i64)> {
        let (t, s) = (v / map.slots, v % map.slots);
        let (tr, tc) = *tiles.get(t as usize)?;
        let (r, c) = coord(map, lane, s as usize);
        Some((r + tr, c + tc))
    };
    // Per chunk, per matrix: the tile coordinates of the matrix's first
    // row, checked against every lane and slot.
    let mut tile_origins: Vec<Vec<(i64, i64)>> = Vec::new();
    for ch in 0..total / chunk {
        let mut at = Vec::with_capacity(count as usize);
        for j in 0..i64::from(count) {
            let first = ch * chunk + j * per;
            let (vr, vc) = virtual_coord(0, first)?;
            let (rr, rc) = rel[0];
            let origin = (vr - rr, vc - rc);
            for l in 0..lanes {
                for e in 0..per {
                    let (rr, rc) = rel[(l * per + e) as usize];
                    if virtual_coord(l, first + e)? != (origin.0 + rr, origin.1 + rc) {
                        return None;
                    }
                }
            }
            at.push(origin);
        }
        tile_origins.push(at);
    }
    let row_stride = if along_cols { op.sr } else { op.sc };
    // A swizzled operand, or a mapped one whose runs hold a loaded row
    // (`mapped.rs`), is planned in memory coordinates; a buffer given any
    // other arrangement by a pin has no matrix loads.
    let arranged = match (op.swizzled, &op.lane_swizzle) {
        (Some(layout), _) => Some((Arranged::Swizzled(layout), 16 / layout.elem)),
        (None, Some((Arranged::Mapped(m), _))) => {
            let elem = (op.dtype.bytes() as i64).max(1);
            if m.vector * elem < 16 {
                return None;
            }
            Some((Arranged::Mapped(m.clone()), 16 / elem))
        }
        (None, Some(_)) => return None,
        (None, None) => None,
    };
    if let Some((layout, unit)) = arranged {
        // Memory coordinates: the loaded matrices' rows are the buffer's.
        let mem = |(r, c): (i64, i64)| if along_cols { (r, c) } else { (c, r) };
        let first: Vec<(i64, i64)> = tile_origins.first()?.iter().map(|&o| mem(o)).collect();
        // Every row a lane names starts a 16-byte chunk of the layout (of
        // a run the map keeps together).
        let mut shifts = Vec::with_capacity(tile_origins.len());
        let mut chunks = Vec::with_capacity(tile_origins.len());
        for (ch, at) in tile_origins.iter().enumerate() {
            let (r0, c0) = first.first().copied()?;
            let (r, c) = mem(*at.first()?);
            let shift = (r - r0, c - c0);
            if at
                .iter()
                .zip(&first)
                .any(|(&o, &(fr, fc))| mem(o) != (fr + shift.0, fc + shift.1))
            {
                return None;
            }
            if shift.1 % unit != 0 || first.iter().any(|&(_, c)| c % unit != 0) {
                return None;
            }
            shifts.push(shift);
            chunks.push((ch as i64 * chunk, 0));
        }
        return Some(LoadPlan {
            name: load.name.clone(),
            count,
            trans,
            rows: i64::from(load.rows),
            row_stride,
            origins: Vec::new(),
            chunks,
            swizzled: Some(SwizzledLoads {
                layout,
                origins: first,
                shifts,
            }),
        });
    }
    let mut chunks = Vec::new();
    let mut origins: Vec<i64> = Vec::new();
    for (ch, at) in tile_origins.iter().enumerate() {
        let ch = ch as i64;
        let offsets: Vec<i64> = at.iter().map(|&(r, c)| op.addr(r, c)).collect();
        // Every chunk repeats the first one's pattern at some offset.
        let shift = offsets.first().copied().unwrap_or(0) - origins.first().copied().unwrap_or(0);
        if ch == 0 {
            origins = offsets;
            chunks.push((0, 0));
        } else {
            if offsets.iter().zip(&origins).any(|(o, b)| o - b != shift) {
                return None;
            }
            chunks.push((ch * chunk, shift));
        }
    }
    Some(LoadPlan {
        name: load.name.clone(),
        count,
        trans,
        rows: i64::from(load.rows),
        row_stride,
        origins,
        chunks,
        swizzled: None,
    })
}

/// How many of a fragment's leading lane digits make up one warp (their
/// extents multiply to the SIMT width `simt`), or `None` when no prefix of
/// the digits does.
pub(super) fn warp_digits(map: &FragMap, simt: i64) -> Option<usize> {
    let mut below = 1i64;
    for (k, &(extent, _, _)) in map.lane.iter().enumerate() {
        if below == simt {
            return Some(k);
        }
        below = below.saturating_mul(extent.max(1));
    }
    (below == simt).then_some(map.lane.len())
}

impl Lower<'_> {
    /// A plan for loading the fragments of `tiles` atom tiles (their
    /// origins in tile coordinates) of an operand through a matrix load,
    /// when one applies (module documentation). `runtime_mult` is what the
    /// run-time part of the operand's address (base, group and k offsets)
    /// is known to be a multiple of.
    pub(super) fn plan_matrix_loads(
        &self,
        map: &FragMap,
        op: &AtomOperand,
        tiles: &[(i64, i64)],
        group: i64,
        runtime_mult: i64,
    ) -> Option<LoadPlan> {
        let simt = i64::from(self.target.simt_width()?);
        if group != simt {
            return None;
        }
        let along_cols = match (op.sr, op.sc) {
            (_, 1) => true,
            (1, _) => false,
            _ => return None,
        };
        let shape = Shape {
            map,
            op,
            tiles,
            lanes: simt,
            along_cols,
            runtime_mult,
        };
        self.first_plan(self.target.matrix_loads.iter(), &[false, true], &shape)
    }

    /// The first of `moves` (matrix loads, or stores seen as loads) whose
    /// elements are as wide as the operand's, in shared memory, that some
    /// count (largest first) and form in `forms` (plain, transposed) plans
    /// with every row start aligned.
    fn first_plan<'m>(
        &self,
        moves: impl Iterator<Item = &'m MatrixLoad>,
        forms: &[bool],
        shape: &Shape<'_>,
    ) -> Option<LoadPlan> {
        for m in moves {
            if u64::from(m.element_bits) != shape.op.dtype.bits() as u64
                || self
                    .target
                    .memory_space(&m.from)
                    .is_none_or(|s| s.kind != crate::target::MemoryKind::Shared)
            {
                continue;
            }
            let elem = i64::from(m.element_bits / 8).max(1);
            let align = (i64::from(m.row_alignment_bytes) / elem).max(1);
            let mut counts = m.counts.clone();
            counts.sort_unstable_by(|a, b| b.cmp(a));
            for &count in &counts {
                for &trans in forms {
                    let Some(plan) = try_plan(
                        m,
                        count,
                        trans,
                        shape.map,
                        shape.op,
                        shape.tiles,
                        shape.lanes,
                        shape.along_cols,
                    ) else {
                        continue;
                    };
                    let mult = plan
                        .origins
                        .iter()
                        .chain(plan.chunks.iter().map(|(_, s)| s))
                        .fold(gcd(shape.runtime_mult, plan.row_stride), |g, &o| gcd(g, o));
                    // Swizzled plans start every row on a 16-byte chunk.
                    if plan.swizzled.is_some() || mult % align == 0 {
                        return Some(plan);
                    }
                }
            }
        }
        None
    }

    /// A plan for storing the C fragments of `tiles` atom tiles (their
    /// origins in tile coordinates) through a matrix store (`stmatrix`)
    /// into a shared buffer addressed by `op`, the mirror of
    /// [`Self::plan_matrix_loads`] for one warp of the issuing group: the
    /// lanes of a warp are the fragment's first digits (their extents
    /// multiply to the SIMT width), and the warp's place in the group only
    /// moves the whole pattern (the caller adds it to the address).
    /// `runtime_mult` is what that run-time part of the address is known
    /// to be a multiple of.
    pub(super) fn plan_matrix_stores(
        &self,
        map: &FragMap,
        op: &AtomOperand,
        tiles: &[(i64, i64)],
        runtime_mult: i64,
    ) -> Option<LoadPlan> {
        let simt = i64::from(self.target.simt_width()?);
        warp_digits(map, simt)?;
        if op.sc != 1 {
            return None;
        }
        let stores: Vec<MatrixLoad> = self
            .target
            .matrix_stores
            .iter()
            .map(crate::target::MatrixStore::as_load)
            .collect();
        let shape = Shape {
            map,
            op,
            tiles,
            lanes: simt,
            along_cols: true,
            runtime_mult,
        };
        self.first_plan(stores.iter(), &[false], &shape)
    }

    /// The part of the address of the row lane `lane` supplies:
    /// `(lane % rows)·row stride + origin[(lane / rows) % count]`.
    pub(super) fn matrix_load_lane(&self, plan: &LoadPlan, lane: &Expr) -> Result<Expr> {
        let r = self.bin(BinaryOp::FloorMod, lane.clone(), lit_i32(plan.rows))?;
        let row = self.bin(BinaryOp::Mul, r, lit_i32(plan.row_stride))?;
        let Some((&last, rest)) = plan.origins.split_last() else {
            return Ok(row);
        };
        let mut origin = lit_i32(last);
        if !rest.is_empty() {
            let j = self.bin(BinaryOp::FloorDiv, lane.clone(), lit_i32(plan.rows))?;
            let j = self.bin(BinaryOp::FloorMod, j, lit_i32(i64::from(plan.count)))?;
            for (i, &o) in rest.iter().enumerate().rev() {
                let is = self.bin(BinaryOp::Eq, j.clone(), lit_i32(i as i64))?;
                origin = Expr::select(is, lit_i32(o), origin)
                    .map_err(|e| self.malformed(e.to_string()))?;
            }
        }
        self.bin(BinaryOp::Add, row, origin)
    }
}

/// Whether the loads of a swizzled plan `p` may take the XOR form of the
/// module documentation ("Swizzled operands"): every shift a load adds
/// moves whole groups of 8 rows (so a row's XOR key stays its lane's) and
/// its column bits within a panel are disjoint from those of every
/// column a lane starts at. `groups`: the (row, column) offsets of the
/// issuing groups; `ks`: the k-steps' offsets, along the columns when
/// `k_along_col`, else along the rows.
pub(super) fn swizzle_commutes(
    p: &LoadPlan,
    sw: &SwizzledLoads,
    lanes: i64,
    groups: &[(i64, i64)],
    ks: &[i64],
    k_along_col: bool,
) -> bool {
    let Arranged::Swizzled(layout) = &sw.layout else {
        return false;
    };
    let pc = layout.panel_cols();
    let count = i64::from(p.count).max(1);
    let mut starts = std::collections::BTreeSet::new();
    for lane in 0..lanes {
        let j = ((lane / p.rows.max(1)) % count) as usize;
        let Some(&(_, c)) = sw.origins.get(j) else {
            return false;
        };
        for &(_, gc) in groups {
            starts.insert((c + gc).rem_euclid(pc));
        }
    }
    sw.shifts.iter().all(|&(dr, dc)| {
        ks.iter().all(|&k| {
            let (dr, dc) = if k_along_col {
                (dr, dc + k)
            } else {
                (dr + k, dc)
            };
            let bits = dc.rem_euclid(pc);
            dr % 8 == 0 && starts.iter().all(|&s| s & bits == 0)
        })
    })
}

/// Whether every row the loads of a mapped plan `p` name starts a run of
/// the map (`mapped.rs`): a multiple of `unit` columns for every lane,
/// issuing group (`groups`, their (row, column) offsets), chunk and k-step
/// (`ks`, along the columns when `k_along_col`). Runs are `unit` or more
/// columns long and start on multiples of their length, so such a row is
/// `unit` consecutive, aligned elements of memory.
pub(super) fn mapped_rows_aligned(
    sw: &SwizzledLoads,
    unit: i64,
    groups: &[(i64, i64)],
    ks: &[i64],
    k_along_col: bool,
) -> bool {
    let aligned = |c: i64| c.rem_euclid(unit.max(1)) == 0;
    sw.origins.iter().all(|&(_, c)| aligned(c))
        && groups.iter().all(|&(_, c)| aligned(c))
        && sw.shifts.iter().all(|&(_, c)| aligned(c))
        && (!k_along_col || ks.iter().all(|&k| aligned(k)))
}

impl Lower<'_> {
    /// The stored index, relative to the operand's base, of the row lane
    /// `lane` supplies to the first chunk of a swizzled plan, for the
    /// issuing group at memory offset `(group_row, group_col)`.
    pub(super) fn swizzled_lane(
        &self,
        p: &LoadPlan,
        sw: &SwizzledLoads,
        lane: &Expr,
        (group_row, group_col): (Expr, Expr),
    ) -> Result<Expr> {
        let j = self.bin(BinaryOp::FloorDiv, lane.clone(), lit_i32(p.rows))?;
        let j = self.bin(BinaryOp::FloorMod, j, lit_i32(i64::from(p.count)))?;
        let pick = |s: &Self, of: &dyn Fn(&(i64, i64)) -> i64| -> Result<Expr> {
            let Some((last, rest)) = sw.origins.split_last() else {
                return Ok(lit_i32(0));
            };
            let mut e = lit_i32(of(last));
            for (i, o) in rest.iter().enumerate().rev() {
                let is = s.bin(BinaryOp::Eq, j.clone(), lit_i32(i as i64))?;
                e = Expr::select(is, lit_i32(of(o)), e).map_err(|e| s.malformed(e.to_string()))?;
            }
            Ok(e)
        };
        let in_matrix = self.bin(BinaryOp::FloorMod, lane.clone(), lit_i32(p.rows))?;
        let row = self.sum(vec![in_matrix, pick(self, &|o| o.0)?, group_row])?;
        let col = self.sum(vec![pick(self, &|o| o.1)?, group_col])?;
        match &sw.layout {
            Arranged::Swizzled(layout) => self.swizzled_index(layout, &row, &col),
            // A mapped plan keeps the row-major index of the lane's row;
            // each load maps its own (`swizzled_loads`).
            Arranged::Mapped(m) => {
                let cols = m.dims.last().copied().unwrap_or(1);
                let rows = self.bin(BinaryOp::Mul, row, lit_i32(cols))?;
                self.bin(BinaryOp::Add, rows, col)
            }
        }
    }

    /// The matrix loads of one k-step of a swizzled plan: chunk `i` at
    /// `base + ((lane_index ^ (col mod P)) + (col / P)·R·P + row·P)` for
    /// its shift `(row, col)` plus the k-step's `kx` (module documentation,
    /// "Swizzled operands"). For a mapped plan `lane_index` is the
    /// row-major index of the lane's row in the buffer and `base` the
    /// stage's offset: chunk `i` reads `base + MAP(lane_index + row·C +
    /// col)`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn swizzled_loads(
        &self,
        p: &LoadPlan,
        sw: &SwizzledLoads,
        lane_index: &Expr,
        base: &Expr,
        (kx, k_along_col): (&Expr, bool),
        (arr, id): (RegId, SharedId),
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let layout = match &sw.layout {
            Arranged::Swizzled(layout) => layout,
            Arranged::Mapped(m) => {
                let cols = m.dims.last().copied().unwrap_or(1);
                for (&(at, _), &(dr, dc)) in p.chunks.iter().zip(&sw.shifts) {
                    let shift =
                        self.bin(BinaryOp::Add, lane_index.clone(), lit_i32(dr * cols + dc))?;
                    let k = if k_along_col {
                        kx.clone()
                    } else {
                        self.scaled(kx, cols)?
                    };
                    let logical = self.bin(BinaryOp::Add, shift, k)?;
                    let stored = self.element(Some(&sw.layout), logical)?;
                    let index = self.bin(BinaryOp::Add, base.clone(), stored)?;
                    out.push(self.matrix_load(p, at, (arr, id), index));
                }
                return Ok(());
            }
        };
        let pc = layout.panel_cols();
        let panel = layout.rows * pc;
        for (&(at, _), &(dr, dc)) in p.chunks.iter().zip(&sw.shifts) {
            let (row, col) = if k_along_col {
                (
                    lit_i32(dr),
                    self.bin(BinaryOp::Add, lit_i32(dc), kx.clone())?,
                )
            } else {
                (
                    self.bin(BinaryOp::Add, lit_i32(dr), kx.clone())?,
                    lit_i32(dc),
                )
            };
            let bits = self.bin(BinaryOp::FloorMod, col.clone(), lit_i32(pc))?;
            let swizzled = self.bin(BinaryOp::BitXor, lane_index.clone(), bits)?;
            let panels = self.bin(BinaryOp::FloorDiv, col, lit_i32(pc))?;
            let panels = self.bin(BinaryOp::Mul, panels, lit_i32(panel))?;
            let rows = self.bin(BinaryOp::Mul, row, lit_i32(pc))?;
            let index = self.sum(vec![base.clone(), swizzled, panels, rows])?;
            out.push(self.matrix_load(p, at, (arr, id), index));
        }
        Ok(())
    }

    /// The matrix load of `p` that fills `arr` from position `at`, reading
    /// shared buffer `id` at `index`.
    pub(super) fn matrix_load(
        &self,
        p: &LoadPlan,
        at: i64,
        (arr, id): (RegId, SharedId),
        index: Expr,
    ) -> Stmt {
        self.stmt(StmtKind::MatrixLoad {
            load: p.name.clone(),
            count: p.count,
            trans: p.trans,
            dst: FragRef {
                array: arr,
                offset: at as u32,
            },
            src: id,
            index,
        })
    }
}

/// Puts the matrix loads at the head of `stmts` (a k-step: its loads, then
/// its `mma`s) in the order the `mma`s first read them, so that the first
/// `mma` waits for two loads rather than for every load of the step. A
/// load into array `x` at position `o` covers `x` from `o` up to the next
/// load's position in `x`; loads into different positions never overlap,
/// so the order among them does not change what any `mma` reads. Anything
/// of another shape is left as it is.
pub(super) fn order_by_first_use(stmts: &mut [Stmt]) {
    let loads = stmts
        .iter()
        .take_while(|s| matches!(s.kind, StmtKind::MatrixLoad { .. }))
        .count();
    let (head, rest) = stmts.split_at_mut(loads);
    if loads < 2 || rest.iter().any(|s| !matches!(s.kind, StmtKind::Mma { .. })) {
        return;
    }
    let at: Vec<(RegId, u32)> = head
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::MatrixLoad { dst, .. } => Some((dst.array, dst.offset)),
            _ => None,
        })
        .collect();
    let first_use = |i: usize| -> usize {
        let (array, start) = at[i];
        let end = at
            .iter()
            .filter(|&&(a, o)| a == array && o > start)
            .map(|&(_, o)| o)
            .min()
            .unwrap_or(u32::MAX);
        rest.iter()
            .position(|s| match &s.kind {
                StmtKind::Mma { a, b, .. } => [a, b]
                    .iter()
                    .any(|f| f.array == array && (start..end).contains(&f.offset)),
                _ => false,
            })
            .unwrap_or(usize::MAX)
    };
    let mut order: Vec<(usize, usize)> = (0..loads).map(|i| (first_use(i), i)).collect();
    order.sort();
    let sorted: Vec<Stmt> = order.iter().map(|&(_, i)| head[i].clone()).collect();
    head.clone_from_slice(&sorted);
}
