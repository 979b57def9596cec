//! Lowering of `gemm`: through a matrix atom of the target when one fits,
//! else the scalar baseline.
//!
//! # Choosing an atom
//! An atom of the target description is *usable* for `C (M×N) += op(A)
//! (M×K) · op(B) (K×N)` when all of the following hold:
//! - its `lowering` is `fragments` (threads may build and read the
//!   register fragments directly; `through_memory` atoms are not relied
//!   on), and A, B and the accumulator all come from registers with a
//!   fragment (so no shared-memory descriptor operand, as wgmma's B);
//! - one of its type combinations is (A's, B's, C's element type), all
//!   floating point (integer gemms stay on the bit-exact scalar path);
//! - `m | M`, `n | N`, `k | K` for its described shape (an N family is
//!   used at its described N), and the kernel's thread count is a
//!   multiple of the issuing group (warp, wavefront, SIMD group,
//!   warpgroup);
//! - the accumulator fragment holds every element once (no replication:
//!   each C element must have exactly one owner);
//! - each fragment *decomposes*: the tile element `(row, col)` of (lane
//!   `t`, slot `s`) is `(R(t) + r_s, C(t) + c_s)` where `R` and `C` are
//!   sums of the lane's digits (the thread mode's leaves) times constants.
//!   This is checked exhaustively over every (lane, slot); all shipped
//!   fragments decompose. It makes a fragment element's address in a
//!   row-major buffer `lane part + slot constant`.
//!
//! A and B must also live in shared memory with regions provably inside
//! their buffers, and so must C unless it is a buffer kept in registers
//! (`resident.rs`): then C's fragments are that buffer's array, the plan
//! must be the buffer's, and the C loads and stores below disappear (a
//! `clear_accum` zeroes the array). Among usable atoms
//! the one with the largest `k` wins, then the one listed first. When none
//! is usable the scalar baseline runs (nothing the baseline accepts is
//! refused).
//!
//! # Splitting the work among issuing groups
//! With `G = threads / group` groups and `TM × TN = (M/m) × (N/n)` atom
//! tiles, the groups form a `gm × gn` grid (`gm | TM`, `gn | TN`, `gm·gn ≤
//! G`), group `g` sitting at `(g % gm, g / gm)` and owning a contiguous
//! block of `tm × tn = (TM/gm) × (TN/gn)` tiles. The grid maximizes the
//! groups used, then follows the gemm's warp policy: `full_row` prefers
//! splitting M (each group holds whole rows), `full_col` splitting N, and
//! `square` the smallest group tile perimeter `tm·m + tn·n` (it is
//! proportional to the fragment loads per k-step), ties to the larger
//! `gm`. Groups past `gm·gn` idle (`if group < gm·gn`, uniform per group,
//! so atoms are always issued by whole groups).
//!
//! # The code of one group
//! Each thread computes, once, the address of its lane's part of every
//! operand (region base + group offset + `Σ digit·stride` of the lane's
//! fragment leaves); every fragment access is then that register plus a
//! constant. With the accumulators *resident* (when the group's `tm·tn`
//! C fragments take at most 128 32-bit registers per thread, or half the
//! target's per-thread registers when known):
//!
//! ```text
//! load the C fragments of all tm·tn tiles     (or zeros when clear_accum)
//! for each k-step (K/k of them):
//!   load the A fragments of the tm tile rows, the B fragments of the tn
//!   tile columns; issue the tm·tn atoms
//! store the C fragments
//! ```
//!
//! so A and B fragments are loaded once per k-step and group, and C once
//! per gemm. Otherwise the group loops over its tiles, each with its own C
//! fragment and k loop. A runtime `clear_accum` loads C and then zeroes the
//! fragments under an `if`. Fragment slots that are consecutive in memory
//! (and aligned: the lane part, group and tile offsets and the slot's
//! constant are multiples of the width) move as one vector, up to 16
//! bytes.
//!
//! # Numerics and hazards
//! The atom adds its `k` products in `f64` to C and rounds once per atom,
//! so a gemm with `K > k` rounds `K/k` times where the reference rounds
//! once: outputs agree within an accumulation bound, not bit for bit
//! (`core/tests/lower.rs` checks the bound). Every C element is read and
//! written by its one owner thread, and A and B are only read, so the
//! statement needs no barrier inside; the barrier placement around it is
//! the baseline's (A, B, C read; C written; a C kept in registers is not
//! shared and takes no part).
//!
//! # The scalar baseline
//! Each thread owns elements of C (cyclically) and accumulates `Σ_k a·b`
//! in an `f64` register in increasing `k`, adds the old C (unless
//! `clear_accum`) and rounds once into C's type: the reference's
//! arithmetic, bit for bit.

use super::{
    DType, Expr, ExprKind, Index, Lower, Mem, MemRef, RegId, RegRef, RegisterKind, Result,
    SharedId, Special, Stmt, StmtKind, Unroll, gcd, lit_i32, reg_expr,
};
use crate::ir::{self, BinaryOp, GemmPolicy, Handle, Literal, Region};
use crate::layout::FragmentLayout;
use crate::target::{AtomLowering, AtomTypes, ElementType, MatrixAtom, OperandRole, OperandSource};
use crate::thread::{AsyncA, FragRef, Major, SharedMatrix};

/// Most 32-bit registers per thread the resident C fragments may take.
const RESIDENT_ACCUMULATOR_REGISTERS: i64 = 128;

/// A gemm operand's region, translated.
pub(super) struct OperandRegion<'r> {
    pub(super) region: &'r Region,
    starts: Vec<Index>,
    ext: Vec<i64>,
    /// Positions of the matrix's row and column dimensions in the region.
    dims: (usize, usize),
}

/// How (lane, slot) of a fragment maps to its tile: `(row, col) = (Σ
/// digit·row_j + slot_row, Σ digit·col_j + slot_col)`.
#[derive(Clone)]
pub(super) struct FragMap {
    pub(super) slots: i64,
    /// `(extent, row step, col step)` of each thread leaf, fastest first.
    pub(super) lane: Vec<(i64, i64, i64)>,
    /// `(row, col)` of each slot for lane 0.
    pub(super) slot: Vec<(i64, i64)>,
}

/// A gemm operand in shared memory, addressed by atom-tile row and column
/// (for a C kept in registers, `resident.rs`, the buffer's row-major shape:
/// its `id` names no buffer and no code addresses it).
pub(super) struct AtomOperand {
    pub(super) id: SharedId,
    pub(super) dtype: DType,
    /// Linear index of the region's first element.
    pub(super) base: Expr,
    pub(super) base_mult: i64,
    /// Memory strides of the atom tile's rows and columns (for a
    /// swizzled buffer, those of its logical row-major shape).
    pub(super) sr: i64,
    pub(super) sc: i64,
    /// The XOR-swizzled layout of the buffer, when it has one: addresses
    /// are then `swizzle.rs`'s, not `base + row·sr + col·sc`, and the
    /// operand is only read through matrix loads (`ldmatrix.rs`).
    pub(super) swizzled: Option<super::swizzle::Swizzled>,
    /// A buffer given its swizzled layout by a pin alone (`swizzle.rs`,
    /// "Pinned layouts") or a mapped one (`mapped.rs`), with the offset of
    /// the stage being read: the operand's addresses are those of its
    /// logical row-major shape, and each fragment move maps its own
    /// through the layout.
    pub(super) lane_swizzle: Option<(super::mapped::Arranged, Expr)>,
}

impl AtomOperand {
    pub(super) fn addr(&self, row: i64, col: i64) -> i64 {
        row * self.sr + col * self.sc
    }
}

/// One operand's fragment in registers: where it lives in memory, its
/// map, its local array, and what the runtime part of its addresses is a
/// multiple of.
struct Frag<'x> {
    op: &'x AtomOperand,
    map: &'x FragMap,
    arr: RegId,
    align: i64,
}

/// The atom, its fragments and the split of the work.
#[derive(Clone)]
pub(super) struct AtomPlan<'t> {
    pub(super) atom: &'t MatrixAtom,
    pub(super) m: i64,
    pub(super) n: i64,
    pub(super) k: i64,
    /// Threads per issuing group and the number of groups.
    pub(super) group: i64,
    pub(super) groups: i64,
    pub(super) gm: i64,
    pub(super) gn: i64,
    /// Atom tiles per group along M and N.
    pub(super) tm: i64,
    pub(super) tn: i64,
    pub(super) ksteps: i64,
    pub(super) resident: bool,
    /// A, B and accumulator fragments (B's is empty for a shared-operand
    /// atom, whose operands come through descriptors: `swizzle.rs`).
    pub(super) maps: [FragMap; 3],
    /// Whether the atom reads A and B from shared memory (`async_mma`).
    pub(super) shared_operands: bool,
}

impl<'a> Lower<'a> {
    /// The matrix dimensions (positions in the region) of a gemm operand:
    /// the last two when every other extent is 1, else the two non-unit.
    pub(super) fn matrix_dims(&self, extents: &[i64]) -> Result<(usize, usize)> {
        let n = extents.len();
        if n >= 2 && extents[..n - 2].iter().all(|&e| e == 1) {
            return Ok((n - 2, n - 1));
        }
        let nu: Vec<usize> = (0..n).filter(|&d| extents[d] != 1).collect();
        match nu[..] {
            [r, c] => Ok((r, c)),
            _ => Err(self.malformed("a gemm operand is not a matrix")),
        }
    }

    /// Indices of matrix element (row, col) of an operand region.
    pub(super) fn matrix_elem(
        &self,
        starts: &[Index],
        dims: (usize, usize),
        row: &Index,
        col: &Index,
    ) -> Result<Vec<Index>> {
        let digits: Vec<Index> = (0..starts.len())
            .map(|d| {
                if d == dims.0 {
                    row.clone()
                } else if d == dims.1 {
                    col.clone()
                } else {
                    Index {
                        expr: lit_i32(0),
                        range: Some((0, 0)),
                    }
                }
            })
            .collect();
        self.offset(starts, &digits)
    }

    fn operand_region<'r>(
        &mut self,
        r: &'r Region,
        out: &mut Vec<Stmt>,
    ) -> Result<OperandRegion<'r>> {
        let (starts, ext) = self.region(r, out)?;
        let dims = self.matrix_dims(&ext)?;
        Ok(OperandRegion {
            region: r,
            starts,
            ext,
            dims,
        })
    }

    pub(super) fn gemm(
        &mut self,
        [a, b, c]: [&Region; 3],
        (ta, tb): (bool, bool),
        policy: GemmPolicy,
        clear: Handle<ir::Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        for (x, y) in [(a, c), (b, c)] {
            if x.buffer == y.buffer {
                return Err(self.unsupported("a gemm whose output is also an input"));
            }
        }
        let ra = self.operand_region(a, out)?;
        let rb = self.operand_region(b, out)?;
        let rc = self.operand_region(c, out)?;
        let (ar, ac) = (ra.ext[ra.dims.0], ra.ext[ra.dims.1]);
        let (br, bc) = (rb.ext[rb.dims.0], rb.ext[rb.dims.1]);
        let (m, k) = if ta { (ac, ar) } else { (ar, ac) };
        let (kb, n) = if tb { (bc, br) } else { (br, bc) };
        if k != kb || m != rc.ext[rc.dims.0] || n != rc.ext[rc.dims.1] {
            return Err(self.malformed("gemm operand shapes disagree"));
        }
        let clear_lit = self.f.as_literal(clear).map(|l| l.as_f64() != 0.0);
        let clear_e = match clear_lit {
            Some(_) => None,
            None => {
                let e = self.expr(clear, out)?;
                Some(if e.dtype == DType::Bool {
                    e
                } else {
                    let zero = Expr::literal(Literal::of(e.dtype, 0.0));
                    self.bin(BinaryOp::Ne, e, zero)?
                })
            }
        };
        if self.async_atom.is_some() {
            let dtypes = [a, b, c].map(|r| self.f.buffers[r.buffer].dtype);
            return self.gemm_async(
                [a, b, c],
                (ta, tb),
                (m, n, k),
                dtypes,
                clear_lit,
                clear_e,
                out,
            );
        }
        if let Some((plan, ops)) = self.plan_atoms([&ra, &rb, &rc], (ta, tb), (m, n, k), policy)? {
            // A register-resident C takes its buffer's plan, or the buffer
            // goes back to shared memory (the kernel is lowered again).
            let resident_c = match self.resident.get(&c.buffer) {
                None => None,
                Some(r) if r.plan.same_split(&plan) => Some(r.arr),
                Some(_) => return Err(self.demote(c.buffer)),
            };
            // An A kept in registers: its fragments are elements of its
            // array (`infer::a_from_tile`).
            let resident_a = match self.resident.get(&a.buffer) {
                None => None,
                Some(r) => match super::infer::a_from_tile(&r.plan, &plan) {
                    Some(table) if resident_c.is_some() => Some((r.arr, table)),
                    _ => return Err(self.demote(a.buffer)),
                },
            };
            let residents = (resident_a, resident_c);
            return self.emit_atoms(&plan, &ops, clear_lit, clear_e, residents, out);
        }
        // Swizzled rows are for matrix loads; a gemm without atoms would
        // only pay for the XOR in every address (lowered again with
        // linear rows).
        if [a.buffer, b.buffer]
            .iter()
            .any(|x| self.mma_swizzled.contains(x))
        {
            return Err(self.unsupported("a swizzled operand of a gemm without matrix atoms"));
        }
        for x in [a, c] {
            if self.resident.contains_key(&x.buffer) {
                return Err(self.demote(x.buffer));
            }
        }
        self.gemm_scalar(
            [&ra, &rb, &rc],
            (ta, tb),
            (m, n, k),
            clear_lit,
            clear_e,
            out,
        )
    }

    // ----- the atom path ---------------------------------------------------

    /// The operand as the atom path sees it, or `None` when it is not in
    /// shared memory or its region is not provably inside the buffer.
    /// `swap`: the atom tile's rows are the region's columns.
    fn atom_operand(&self, r: &OperandRegion<'_>, swap: bool) -> Result<Option<AtomOperand>> {
        let Ok(Mem::Shared { id, dims }) = self.mem(r.region.buffer) else {
            return Ok(None);
        };
        if dims.len() != r.starts.len() {
            return Ok(None);
        }
        // A swizzled operand (`swizzle.rs`, "Operands of register atoms")
        // is a whole 2-D buffer without padding: the computation below
        // gives its start (or its stage's) and logical row-major strides,
        // and the loads address it through the layout.
        let lane_swizzle = match self.arranged(r.region.buffer) {
            Some(layout) if !self.mma_swizzled.contains(&r.region.buffer) => {
                if self.async_atom.is_some() {
                    return Ok(None);
                }
                let stage = self
                    .stage_offset(r.region.buffer)
                    .map_or(lit_i32(0), |(o, _)| o);
                Some((layout, stage))
            }
            _ => None,
        };
        let swizzled = match self.mma_swizzled.contains(&r.region.buffer) {
            false => None,
            true => {
                let whole = dims.len() == 2
                    && r.starts
                        .iter()
                        .zip(&dims)
                        .enumerate()
                        .all(|(d, (s, &n))| s.range == Some((0, 0)) && r.ext[d] == n);
                let layout = self.swizzled.get(&r.region.buffer).copied();
                let (true, Some(layout)) = (whole, layout) else {
                    return Err(self.unsupported("a gemm on part of a swizzled operand buffer"));
                };
                Some(layout)
            }
        };
        // Strides of the memory layout: a padded buffer's rows are its
        // pitch apart (`pad.rs`).
        let phys = self.physical_shape(r.region.buffer, &dims);
        let mut strides = vec![1i64; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * phys[d + 1];
        }
        let mut base = lit_i32(0);
        let mut base_mult = 0;
        for (d, s) in r.starts.iter().enumerate() {
            match s.range {
                Some((lo, hi)) if lo >= 0 && hi + r.ext[d] <= dims[d] => {}
                _ => return Ok(None),
            }
            let term = self.scaled(&s.expr, strides[d])?;
            base = self.bin(BinaryOp::Add, base, term)?;
            let mult = self.multiple(r.region.ranges[d].start);
            base_mult = gcd(base_mult, mult.saturating_mul(strides[d]));
        }
        if let Some((offset, size)) = self.stage_offset(r.region.buffer) {
            base = self.bin(BinaryOp::Add, offset, base)?;
            base_mult = gcd(base_mult, size);
        }
        let (sr, sc) = (strides[r.dims.0], strides[r.dims.1]);
        let (sr, sc) = if swap { (sc, sr) } else { (sr, sc) };
        Ok(Some(AtomOperand {
            id,
            dtype: self.f.buffers[r.region.buffer].dtype,
            base,
            base_mult,
            sr,
            sc,
            swizzled,
            lane_swizzle,
        }))
    }

    /// The atom plan for a gemm, or `None` when no atom is usable. When C
    /// is a register-resident buffer (`resident.rs`), its operand is the
    /// row-major `M × N` shape of the buffer; the plan must then be the
    /// buffer's (checked by the caller).
    fn plan_atoms(
        &self,
        [ra, rb, rc]: [&OperandRegion<'_>; 3],
        (ta, tb): (bool, bool),
        (mm, nn, kk): (i64, i64, i64),
        policy: GemmPolicy,
    ) -> Result<Option<(AtomPlan<'a>, [AtomOperand; 3])>> {
        let pc = if self.resident.contains_key(&rc.region.buffer) {
            Some(self.resident_operand(rc, nn))
        } else {
            self.atom_operand(rc, false)?
        };
        let pa = if self.resident.contains_key(&ra.region.buffer) && !ta {
            Some(self.resident_operand(ra, kk))
        } else {
            self.atom_operand(ra, ta)?
        };
        let (Some(pa), Some(pb), Some(pc)) = (pa, self.atom_operand(rb, tb)?, pc) else {
            return Ok(None);
        };
        let dtypes = [pa.dtype, pb.dtype, pc.dtype];
        Ok(self
            .choose_plan(dtypes, (mm, nn, kk), policy)
            .map(|plan| (plan, [pa, pb, pc])))
    }

    /// The atom, split and accumulator plan for a gemm of these element
    /// types (A, B, C), sizes and policy, or `None` when no atom is usable
    /// (module documentation, "Choosing an atom" and "Splitting the work").
    pub(super) fn choose_plan(
        &self,
        dtypes: [DType; 3],
        (mm, nn, kk): (i64, i64, i64),
        policy: GemmPolicy,
    ) -> Option<AtomPlan<'a>> {
        if let Some(atom) = self.async_atom {
            return self.async_plan(atom, dtypes, (mm, nn, kk));
        }
        let target: &'a crate::target::TargetDescription = self.target;
        let mut best: Option<(&'a MatrixAtom, [FragMap; 3])> = None;
        for atom in &target.matrix_atoms {
            let Some(maps) = usable(atom, dtypes, (mm, nn, kk), self.threads) else {
                continue;
            };
            if best.as_ref().is_none_or(|(b, _)| atom.shape.k > b.shape.k) {
                best = Some((atom, maps));
            }
        }
        let (atom, maps) = best?;
        let (m, n, k) = (
            i64::from(atom.shape.m),
            i64::from(atom.shape.n),
            i64::from(atom.shape.k),
        );
        let group = i64::from(atom.issue.threads);
        let groups = self.threads / group;
        let (tiles_m, tiles_n) = (mm / m, nn / n);
        let (gm, gn) = partition(policy, groups, tiles_m, tiles_n, m, n);
        let (tm, tn) = (tiles_m / gm, tiles_n / gn);
        let cbytes = dtypes[2].bytes() as i64;
        let acc_registers = (tm * tn * maps[2].slots * cbytes + 3) / 4;
        let budget = match self.target.registers.per_thread {
            Some(r) => RESIDENT_ACCUMULATOR_REGISTERS.min(i64::from(r) / 2),
            None => RESIDENT_ACCUMULATOR_REGISTERS,
        };
        Some(AtomPlan {
            atom,
            m,
            n,
            k,
            group,
            groups,
            gm,
            gn,
            tm,
            tn,
            ksteps: kk / k,
            resident: acc_registers <= budget,
            maps,
            shared_operands: false,
        })
    }

    /// The plan of a gemm through a shared-operand atom (`swizzle.rs`):
    /// its split, the register-A and accumulator fragments at the groups'
    /// N, accumulators resident.
    fn async_plan(
        &self,
        atom: &'a MatrixAtom,
        dtypes: [DType; 3],
        (mm, nn, kk): (i64, i64, i64),
    ) -> Option<AtomPlan<'a>> {
        let split = self.async_split(atom, dtypes, (mm, nn, kk))?;
        let n = u32::try_from(split.n).ok()?;
        let a = decompose(&atom.fragment(OperandRole::A).ok()??)?;
        let c = decompose(&atom.fragment_for_n(OperandRole::Accumulator, n).ok()??)?;
        let empty = FragMap {
            slots: 0,
            lane: Vec::new(),
            slot: Vec::new(),
        };
        let k = i64::from(atom.shape.k);
        Some(AtomPlan {
            atom,
            m: i64::from(atom.shape.m),
            n: split.n,
            k,
            group: i64::from(atom.issue.threads),
            groups: split.groups,
            gm: split.gm,
            gn: split.gn,
            tm: split.tm,
            tn: 1,
            ksteps: kk / k,
            resident: true,
            maps: [a, empty, c],
            shared_operands: true,
        })
    }

    /// `Σ digit_j(lane) · (row_j·sr + col_j·sc)`: the lane's part of a
    /// fragment element's address.
    pub(super) fn lane_address(
        &self,
        map: &FragMap,
        op: &AtomOperand,
        lane: &Expr,
        group: i64,
    ) -> Result<Expr> {
        let mut sum = lit_i32(0);
        let mut below = 1i64;
        for &(extent, r, c) in &map.lane {
            let step = op.addr(r, c);
            if extent > 1 && step != 0 {
                let mut digit = lane.clone();
                if below > 1 {
                    digit = self.bin(BinaryOp::FloorDiv, digit, lit_i32(below))?;
                }
                if below * extent < group {
                    digit = self.bin(BinaryOp::FloorMod, digit, lit_i32(extent))?;
                }
                let term = self.bin(BinaryOp::Mul, digit, lit_i32(step))?;
                sum = self.bin(BinaryOp::Add, sum, term)?;
            }
            below = below.saturating_mul(extent);
        }
        Ok(sum)
    }

    /// Loads (or stores) one fragment: slot `s` at `arr_off + s` of the
    /// fragment's array, from (to) element `addr + tile_off + const(s)`.
    /// Consecutive slots that are consecutive in memory move as one
    /// vector when its first element's index is provably a multiple of the
    /// width (`frag.align` covers the runtime part of `addr`).
    fn frag_moves(
        &mut self,
        frag: &Frag<'_>,
        store: bool,
        arr_off: i64,
        addr: &Expr,
        tile_off: i64,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let op = frag.op;
        let consts: Vec<i64> = frag.map.slot.iter().map(|&(r, c)| op.addr(r, c)).collect();
        let mut limit = self.vector_limit(true, op.dtype) as usize;
        if let Some((super::mapped::Arranged::Mapped(m), _)) = &op.lane_swizzle {
            limit = limit.min(m.vector as usize);
        }
        let mut s = 0usize;
        while s < consts.len() {
            let fits = |w: usize| {
                s + w <= consts.len()
                    && (1..w).all(|j| consts[s + j] == consts[s] + j as i64)
                    && frag.align % w as i64 == 0
                    && (tile_off + consts[s]).rem_euclid(w as i64) == 0
            };
            let mut w = limit.max(1);
            while w > 1 && !fits(w) {
                w /= 2;
            }
            let mut index = self.bin(BinaryOp::Add, addr.clone(), lit_i32(tile_off + consts[s]))?;
            if let Some((layout, stage)) = &op.lane_swizzle {
                // The logical row-major index, through the layout (a
                // vector of at most 16 bytes at a multiple of its width
                // stays in one chunk of a swizzle, and in one run of a
                // map by the limit above).
                let logical = self.bin(BinaryOp::Sub, index, stage.clone())?;
                let stored = self.element(Some(layout), logical)?;
                index = self.bin(BinaryOp::Add, stage.clone(), stored)?;
            }
            let reg = RegRef::Elem(frag.arr, lit_i32(arr_off + s as i64));
            let mem = MemRef::Shared(op.id);
            out.push(self.stmt(if store {
                StmtKind::Store {
                    width: w as u32,
                    dst: mem,
                    index,
                    src: reg,
                    guard: None,
                }
            } else {
                StmtKind::Load {
                    width: w as u32,
                    dst: reg,
                    src: mem,
                    index,
                    guard: None,
                }
            }));
            s += w;
        }
        Ok(())
    }

    /// `Σ terms` (folded).
    pub(super) fn sum(&self, terms: Vec<Expr>) -> Result<Expr> {
        let mut acc = lit_i32(0);
        for t in terms {
            acc = self.bin(BinaryOp::Add, acc, t)?;
        }
        Ok(acc)
    }

    /// `e · c` (folded, also `(x · c1) · c` into `x · (c1·c)`).
    pub(super) fn scaled(&self, e: &Expr, c: i64) -> Result<Expr> {
        if let ExprKind::Binary(BinaryOp::Mul, x, c1) = &e.kind
            && let Some(c1) = c1.as_const_int()
            && let Some(product) = c1.checked_mul(c).filter(|p| i32::try_from(*p).is_ok())
        {
            return self.bin(BinaryOp::Mul, (**x).clone(), lit_i32(product));
        }
        self.bin(BinaryOp::Mul, e.clone(), lit_i32(c))
    }

    /// A fresh local array.
    pub(super) fn local(&mut self, base: &str, dtype: DType, len: i64) -> RegId {
        let name = self.fresh(base);
        self.add_reg(name, dtype, RegisterKind::Array { len: len as u32 })
    }

    /// A fresh scalar register assigned `value`, as an expression.
    pub(super) fn let_reg(&mut self, base: &str, value: Expr, out: &mut Vec<Stmt>) -> Expr {
        if value.as_const_int().is_some() {
            return value;
        }
        let dtype = value.dtype;
        let r = self.temp(base, dtype);
        self.assign(out, r, value);
        reg_expr(r, dtype)
    }

    /// `for %var from 0 count n step step { body }`, or the body alone
    /// (with the variable 0) when `n == 1`.
    fn counted(
        &mut self,
        base: &str,
        n: i64,
        step: i64,
        unroll: Unroll,
        out: &mut Vec<Stmt>,
        body: impl FnOnce(&mut Self, Expr, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        if n == 1 {
            return body(self, lit_i32(0), out);
        }
        let name = self.fresh(base);
        let var = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let mut inner = Vec::new();
        body(self, reg_expr(var, DType::I32), &mut inner)?;
        out.push(self.stmt(StmtKind::For {
            var,
            start: lit_i32(0),
            count: lit_i32(n),
            step: lit_i32(step),
            unroll,
            body: inner,
        }));
        Ok(())
    }

    /// Sets every element of `arr` to zero.
    pub(super) fn zero(&mut self, arr: RegId, dtype: DType, len: i64, out: &mut Vec<Stmt>) {
        let name = self.fresh("z");
        let var = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let body = vec![self.stmt(StmtKind::Assign {
            dst: RegRef::Elem(arr, reg_expr(var, DType::I32)),
            value: Expr::literal(Literal::of(dtype, 0.0)),
        })];
        out.push(self.stmt(StmtKind::For {
            var,
            start: lit_i32(0),
            count: lit_i32(len),
            step: lit_i32(1),
            unroll: Unroll::Full,
            body,
        }));
    }

    /// Removes the last statement of `out` when it is a fill of every
    /// element of the local array `arr` (`len` elements) with zero, as
    /// [`Self::zero`] writes it; whether it did.
    fn take_trailing_zero(&self, arr: RegId, len: i64, out: &mut Vec<Stmt>) -> bool {
        let whole = self.registers.get(arr.index()).is_some_and(
            |r| matches!(r.kind, RegisterKind::Array { len: n } if i64::from(n) == len),
        );
        let Some(Stmt {
            kind:
                StmtKind::For {
                    var,
                    start,
                    count,
                    step,
                    body,
                    ..
                },
            ..
        }) = out.last()
        else {
            return false;
        };
        let fills = match body.as_slice() {
            [
                Stmt {
                    kind:
                        StmtKind::Assign {
                            dst: RegRef::Elem(a, i),
                            value,
                        },
                    ..
                },
            ] => {
                *a == arr
                    && matches!(i.kind, ExprKind::Reg(r) if r == *var)
                    && matches!(value.kind, ExprKind::Literal(l) if l.as_f64() == 0.0)
            }
            _ => false,
        };
        let covers = start.as_const_int() == Some(0)
            && step.as_const_int() == Some(1)
            && count.as_const_int() == Some(len);
        if whole && fills && covers {
            out.pop();
            return true;
        }
        false
    }

    /// The C fragments start as loaded, zero, or (runtime flag) loaded
    /// then zeroed when the flag is true.
    #[allow(clippy::too_many_arguments)]
    fn init_accumulators(
        &mut self,
        clear_lit: Option<bool>,
        clear_e: &Option<Expr>,
        cf: RegId,
        pc: &AtomOperand,
        len: i64,
        out: &mut Vec<Stmt>,
        load: impl FnOnce(&mut Self, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        if clear_lit == Some(true) {
            self.zero(cf, pc.dtype, len, out);
            return Ok(());
        }
        load(self, out)?;
        if let Some(cond) = clear_e {
            let mut then = Vec::new();
            self.zero(cf, pc.dtype, len, &mut then);
            out.push(self.stmt(StmtKind::If {
                cond: cond.clone(),
                then_body: then,
                else_body: None,
            }));
        }
        Ok(())
    }

    fn mma(&self, plan: &AtomPlan<'_>, a: (RegId, i64), b: (RegId, i64), c: (RegId, i64)) -> Stmt {
        let frag = |(array, offset): (RegId, i64)| FragRef {
            array,
            offset: offset as u32,
        };
        self.stmt(StmtKind::Mma {
            atom: plan.atom.name.clone(),
            n: None,
            d: frag(c),
            a: frag(a),
            b: frag(b),
            c: frag(c),
        })
    }

    /// The lane in the issuing group, the group, and the group's row and
    /// column in the `gm × gn` grid, as expressions of the thread index.
    pub(super) fn group_coords(&self, plan: &AtomPlan<'_>) -> Result<(Expr, Expr, Expr, Expr)> {
        let (gm, gn) = (plan.gm, plan.gn);
        let simt = self.target.simt_width().map(i64::from);
        let tid = self.tid();
        let lane = if simt == Some(plan.group) {
            Expr::special(Special::LaneId)
        } else if self.threads == plan.group {
            tid.clone()
        } else {
            self.bin(BinaryOp::FloorMod, tid.clone(), lit_i32(plan.group))?
        };
        let grp = if plan.groups == 1 {
            lit_i32(0)
        } else if simt == Some(plan.group) {
            self.warp_id()
        } else {
            self.bin(BinaryOp::FloorDiv, tid, lit_i32(plan.group))?
        };
        let gi = if gm == 1 {
            lit_i32(0)
        } else if gn == 1 {
            grp.clone()
        } else {
            self.bin(BinaryOp::FloorMod, grp.clone(), lit_i32(gm))?
        };
        let gj = if gn == 1 {
            lit_i32(0)
        } else {
            self.bin(BinaryOp::FloorDiv, grp.clone(), lit_i32(gm))?
        };
        Ok((lane, grp, gi, gj))
    }

    fn emit_atoms(
        &mut self,
        plan: &AtomPlan<'_>,
        [pa, pb, pc]: &[AtomOperand; 3],
        clear_lit: Option<bool>,
        clear_e: Option<Expr>,
        (resident_a, resident_c): (Option<(RegId, Vec<i64>)>, Option<RegId>),
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (m, n, k) = (plan.m, plan.n, plan.k);
        let (tm, tn, gm, gn) = (plan.tm, plan.tn, plan.gm, plan.gn);
        let [ma, mb, mc] = &plan.maps;
        let (lane, grp, gi, gj) = self.group_coords(plan)?;
        // Address registers: region base + group offset + lane part.
        let (rows, cols) = (tm * m, tn * n);
        let mut body = Vec::new();
        let terms = vec![
            pa.base.clone(),
            self.scaled(&gi, pa.addr(rows, 0))?,
            self.lane_address(ma, pa, &lane, plan.group)?,
        ];
        let a0 = self.sum(terms)?;
        let terms = vec![
            pb.base.clone(),
            self.scaled(&gj, pb.addr(0, cols))?,
            self.lane_address(mb, pb, &lane, plan.group)?,
        ];
        let b0 = self.sum(terms)?;
        let terms = vec![
            pc.base.clone(),
            self.scaled(&gi, pc.addr(rows, 0))?,
            self.scaled(&gj, pc.addr(0, cols))?,
            self.lane_address(mc, pc, &lane, plan.group)?,
        ];
        let c0 = self.sum(terms)?;
        let c_addr = if resident_c.is_some() {
            c0
        } else {
            self.let_reg("c_addr", c0, &mut body)
        };
        // What the runtime parts of the addresses are multiples of: the
        // lane parts, bases, and every offset a register or loop adds.
        let per_tile = !plan.resident;
        let mut aligns = [
            gcd(pa.base_mult, lane_align(ma, pa)),
            gcd(pb.base_mult, lane_align(mb, pb)),
            gcd(pc.base_mult, lane_align(mc, pc)),
        ];
        for (on, which, step) in [
            (gm > 1, 0, pa.addr(rows, 0)),
            (per_tile && tm > 1, 0, pa.addr(m, 0)),
            (plan.ksteps > 1, 0, pa.addr(0, k)),
            (gn > 1, 1, pb.addr(0, cols)),
            (per_tile && tn > 1, 1, pb.addr(0, n)),
            (plan.ksteps > 1, 1, pb.addr(k, 0)),
            (gm > 1, 2, pc.addr(rows, 0)),
            (gn > 1, 2, pc.addr(0, cols)),
            (per_tile && tm > 1, 2, pc.addr(m, 0)),
            (per_tile && tn > 1, 2, pc.addr(0, n)),
        ] {
            if on {
                aligns[which] = gcd(aligns[which], step);
            }
        }
        // The fragments in registers: all tm·tn tiles of the group when
        // resident, one tile otherwise.
        let (fm, fn_) = if plan.resident { (tm, tn) } else { (1, 1) };
        let fa = Frag {
            op: pa,
            map: ma,
            arr: self.local("a_frag", pa.dtype, fm * ma.slots),
            align: aligns[0],
        };
        let fb = Frag {
            op: pb,
            map: mb,
            arr: self.local("b_frag", pb.dtype, fn_ * mb.slots),
            align: aligns[1],
        };
        let fc = Frag {
            op: pc,
            map: mc,
            arr: match resident_c {
                Some(arr) => arr,
                None => self.local("c_frag", pc.dtype, fm * fn_ * mc.slots),
            },
            align: aligns[2],
        };
        let c_len = fm * fn_ * mc.slots;
        // Matrix loads for the A and B fragments of a k-step, when the
        // target has one that fits (`ldmatrix.rs`); only where every tile's
        // fragments are loaded per k-step.
        let whole = resident_c.is_some() || plan.resident;
        let mut run_a = pa.base_mult;
        let mut run_b = pb.base_mult;
        if gm > 1 {
            run_a = gcd(run_a, pa.addr(rows, 0));
        }
        if gn > 1 {
            run_b = gcd(run_b, pb.addr(0, cols));
        }
        if plan.ksteps > 1 {
            run_a = gcd(run_a, pa.addr(0, k));
            run_b = gcd(run_b, pb.addr(k, 0));
        }
        let tiles_a: Vec<(i64, i64)> = (0..fm).map(|i| (i * m, 0)).collect();
        let tiles_b: Vec<(i64, i64)> = (0..fn_).map(|j| (0, j * n)).collect();
        // Matrix loads read linear rows, swizzled chunks or a map's runs:
        // not an operand swizzled by a pin.
        let loadable = |op: &AtomOperand| {
            matches!(
                op.lane_swizzle,
                None | Some((super::mapped::Arranged::Mapped(_), _))
            )
        };
        let lda = (whole && resident_a.is_none() && loadable(pa))
            .then(|| self.plan_matrix_loads(ma, pa, &tiles_a, plan.group, run_a))
            .flatten();
        let ldb = (whole && loadable(pb))
            .then(|| self.plan_matrix_loads(mb, pb, &tiles_b, plan.group, run_b))
            .flatten();
        // A swizzled operand is read only through matrix loads whose XOR
        // form holds for every lane, group and k-step (`ldmatrix.rs`);
        // otherwise the kernel is lowered again with padded rows.
        let simt = i64::from(self.target.simt_width().unwrap_or(32));
        let ks: Vec<i64> = (0..plan.ksteps).map(|kk| kk * k).collect();
        let mem = |op: &AtomOperand, (r, c): (i64, i64)| if op.sc == 1 { (r, c) } else { (c, r) };
        let a_groups: Vec<(i64, i64)> = (0..gm).map(|g| mem(pa, (g * rows, 0))).collect();
        let b_groups: Vec<(i64, i64)> = (0..gn).map(|g| mem(pb, (0, g * cols))).collect();
        // Along which memory direction each operand's k runs.
        let (a_k_col, b_k_col) = (pa.sc == 1, pb.sc != 1);
        for (op, p, groups, k_col) in [
            (pa, &lda, &a_groups, a_k_col),
            (pb, &ldb, &b_groups, b_k_col),
        ] {
            if op.swizzled.is_none() {
                continue;
            }
            let fits = p.as_ref().is_some_and(|p| {
                p.swizzled.as_ref().is_some_and(|sw| {
                    super::ldmatrix::swizzle_commutes(p, sw, simt, groups, &ks, k_col)
                })
            });
            if !fits {
                return Err(self.unsupported(
                    "a swizzled gemm operand whose fragments matrix loads cannot take",
                ));
            }
        }
        // A mapped operand's loads must name rows that start runs of its
        // map for every lane, group and k-step (`ldmatrix.rs`); otherwise
        // its fragments are loaded per lane.
        let runs_fit = |op: &AtomOperand, p: &super::ldmatrix::LoadPlan, groups, k_col| {
            let unit = 16 / (op.dtype.bytes() as i64).max(1);
            p.swizzled.as_ref().is_none_or(|sw| {
                !matches!(sw.layout, super::mapped::Arranged::Mapped(_))
                    || super::ldmatrix::mapped_rows_aligned(sw, unit, groups, &ks, k_col)
            })
        };
        let lda = lda.filter(|p| runs_fit(pa, p, &a_groups, a_k_col));
        let ldb = ldb.filter(|p| runs_fit(pb, p, &b_groups, b_k_col));
        // The per-lane fragment addresses, where fragments are loaded per
        // lane (an operand whose fragments come from matrix loads needs
        // none).
        let a_addr = match (&lda, &resident_a) {
            (None, None) => self.let_reg("a_addr", a0, &mut body),
            _ => lit_i32(0),
        };
        let b_addr = match &ldb {
            Some(_) => lit_i32(0),
            None => self.let_reg("b_addr", b0, &mut body),
        };
        // The row a lane supplies to a swizzled operand's matrix loads,
        // relative to the operand's base (the same every iteration).
        let swizzled_lane = |s: &mut Self,
                             op: &AtomOperand,
                             p: &super::ldmatrix::LoadPlan,
                             g: &Expr,
                             offset: (i64, i64),
                             name: &str,
                             body: &mut Vec<Stmt>|
         -> Result<Option<Expr>> {
            let Some(sw) = &p.swizzled else {
                return Ok(None);
            };
            let (r, c) = mem(op, offset);
            let group = (s.scaled(g, r)?, s.scaled(g, c)?);
            let mut e = s.swizzled_lane(p, sw, &lane, group)?;
            if let Some((super::mapped::Arranged::Mapped(_), stage)) = &op.lane_swizzle {
                // The row-major index in the buffer: the operand's start
                // (its base less the stage's offset) added.
                let start = s.bin(BinaryOp::Sub, op.base.clone(), stage.clone())?;
                e = s.bin(BinaryOp::Add, start, e)?;
            }
            Ok(Some(s.let_reg(name, e, body)))
        };
        let a_sw = match &lda {
            Some(p) => swizzled_lane(self, pa, p, &gi, (rows, 0), "a_sw", &mut body)?,
            None => None,
        };
        let b_sw = match &ldb {
            Some(p) => swizzled_lane(self, pb, p, &gj, (0, cols), "b_sw", &mut body)?,
            None => None,
        };
        let a_ld = match &lda {
            Some(_) if a_sw.is_some() => a_sw.clone(),
            Some(p) => {
                let terms = vec![
                    pa.base.clone(),
                    self.scaled(&gi, pa.addr(rows, 0))?,
                    self.matrix_load_lane(p, &lane)?,
                ];
                let e = self.sum(terms)?;
                Some(self.let_reg("a_ld", e, &mut body))
            }
            None => None,
        };
        let b_ld = match &ldb {
            Some(_) if b_sw.is_some() => b_sw.clone(),
            Some(p) => {
                let terms = vec![
                    pb.base.clone(),
                    self.scaled(&gj, pb.addr(0, cols))?,
                    self.matrix_load_lane(p, &lane)?,
                ];
                let e = self.sum(terms)?;
                Some(self.let_reg("b_ld", e, &mut body))
            }
            None => None,
        };
        // One operand's matrix loads for the k-step at `kx`: `addr` is the
        // lane's address register, `k_step` the operand's memory distance
        // per unit of k (linear rows), `k_col` whether k runs along its
        // memory columns (swizzled rows).
        let matrix_loads = |s: &mut Self,
                            (p, op): (&super::ldmatrix::LoadPlan, &AtomOperand),
                            addr: &Expr,
                            kx: &Expr,
                            (k_step, k_col): (i64, bool),
                            arr: RegId,
                            out: &mut Vec<Stmt>|
         -> Result<()> {
            if let Some(sw) = &p.swizzled {
                // A mapped operand's loads add the stage's offset to the
                // mapped index; a swizzled one's the base (its stage's).
                let base = match &op.lane_swizzle {
                    Some((super::mapped::Arranged::Mapped(_), stage)) => stage,
                    _ => &op.base,
                };
                return s.swizzled_loads(p, sw, addr, base, (kx, k_col), (arr, op.id), out);
            }
            let k_off = s.scaled(kx, k_step)?;
            let base = s.sum(vec![addr.clone(), k_off])?;
            for &(at, shift) in &p.chunks {
                let index = s.bin(BinaryOp::Add, base.clone(), lit_i32(shift))?;
                out.push(s.matrix_load(p, at, (arr, op.id), index));
            }
            Ok(())
        };
        // C fragments of the fm × fn tiles from (to) `addr`.
        let c_moves = |s: &mut Self, store: bool, addr: &Expr, out: &mut Vec<Stmt>| {
            for i in 0..fm {
                for j in 0..fn_ {
                    let off = (i * fn_ + j) * mc.slots;
                    s.frag_moves(&fc, store, off, addr, pc.addr(i * m, j * n), out)?;
                }
            }
            Ok(())
        };
        // One k-step (`kk`: its number when the k loop is unrolled here)
        // over the fm × fn tiles whose A and B fragments start at `a_base`
        // and `b_base`.
        let k_step = |s: &mut Self,
                      (a_base, b_base): (&Expr, &Expr),
                      kx: Expr,
                      kk: Option<i64>,
                      kb: &mut Vec<Stmt>|
         -> Result<()> {
            let start = kb.len();
            let terms = vec![a_base.clone(), s.scaled(&kx, pa.addr(0, 1))?];
            let ka = s.sum(terms)?;
            let terms = vec![b_base.clone(), s.scaled(&kx, pb.addr(1, 0))?];
            let kbx = s.sum(terms)?;
            // Where each tile row's A fragment is: (array, offset).
            let mut a_at: Vec<(RegId, i64)> = (0..fm).map(|i| (fa.arr, i * ma.slots)).collect();
            match (&resident_a, kk, &lda, &a_ld) {
                (Some((arr, table)), Some(kk), _, _) => {
                    for (i, at) in a_at.iter_mut().enumerate() {
                        let first = (i as i64 * plan.ksteps + kk) as usize * ma.slot.len();
                        let idx = &table[first..first + ma.slot.len()];
                        if idx.iter().enumerate().all(|(j, &x)| x == idx[0] + j as i64) {
                            *at = (*arr, idx[0]);
                            continue;
                        }
                        for (j, &x) in idx.iter().enumerate() {
                            let value = Expr {
                                kind: ExprKind::Elem(*arr, Box::new(lit_i32(x))),
                                dtype: pa.dtype,
                            };
                            kb.push(s.stmt(StmtKind::Assign {
                                dst: RegRef::Elem(fa.arr, lit_i32(at.1 + j as i64)),
                                value,
                            }));
                        }
                    }
                }
                (Some(_), None, _, _) => {
                    return Err(s.malformed("register A fragments in a k loop not unrolled"));
                }
                (None, _, Some(p), Some(addr)) => {
                    let k = (pa.addr(0, 1), a_k_col);
                    matrix_loads(s, (p, pa), addr, &kx, k, fa.arr, kb)?;
                }
                _ => {
                    for i in 0..fm {
                        s.frag_moves(&fa, false, i * ma.slots, &ka, pa.addr(i * m, 0), kb)?;
                    }
                }
            }
            match (&ldb, &b_ld) {
                (Some(p), Some(addr)) => {
                    let k = (pb.addr(1, 0), b_k_col);
                    matrix_loads(s, (p, pb), addr, &kx, k, fb.arr, kb)?;
                }
                _ => {
                    for j in 0..fn_ {
                        s.frag_moves(&fb, false, j * mb.slots, &kbx, pb.addr(0, j * n), kb)?;
                    }
                }
            }
            for (i, &a) in a_at.iter().enumerate() {
                for j in 0..fn_ {
                    let c = (fc.arr, (i as i64 * fn_ + j) * mc.slots);
                    let stmt = s.mma(plan, a, (fb.arr, j * mb.slots), c);
                    kb.push(stmt);
                }
            }
            super::ldmatrix::order_by_first_use(&mut kb[start..]);
            Ok(())
        };
        // The k loop: unrolled here when A's fragments are register
        // elements chosen per k-step.
        let k_loop = |s: &mut Self, a_base: &Expr, b_base: &Expr, out: &mut Vec<Stmt>| {
            if resident_a.is_some() {
                for kk in 0..plan.ksteps {
                    k_step(s, (a_base, b_base), lit_i32(kk * k), Some(kk), out)?;
                }
                return Ok(());
            }
            s.counted("kk", plan.ksteps, k, Unroll::Full, out, |s, kx, kb| {
                k_step(s, (a_base, b_base), kx, None, kb)
            })
        };
        if resident_c.is_some() {
            // The accumulators live in the buffer's registers for the
            // whole kernel (`resident.rs`): only a clear touches them.
            if clear_lit == Some(true) {
                self.zero(fc.arr, pc.dtype, c_len, &mut body);
            } else if let Some(cond) = &clear_e {
                let mut then = Vec::new();
                self.zero(fc.arr, pc.dtype, c_len, &mut then);
                body.push(self.stmt(StmtKind::If {
                    cond: cond.clone(),
                    then_body: then,
                    else_body: None,
                }));
            }
            k_loop(self, &a_addr, &b_addr, &mut body)?;
        } else if plan.resident {
            self.init_accumulators(
                clear_lit,
                &clear_e,
                fc.arr,
                pc,
                c_len,
                &mut body,
                |s, out| c_moves(s, false, &c_addr, out),
            )?;
            k_loop(self, &a_addr, &b_addr, &mut body)?;
            c_moves(self, true, &c_addr, &mut body)?;
        } else {
            self.counted("ti", tm, 1, Unroll::None, &mut body, |s, ti, body| {
                s.counted("tj", tn, 1, Unroll::None, body, |s, tj, body| {
                    let terms = vec![a_addr.clone(), s.scaled(&ti, pa.addr(m, 0))?];
                    let ta = s.sum(terms)?;
                    let terms = vec![b_addr.clone(), s.scaled(&tj, pb.addr(0, n))?];
                    let tb = s.sum(terms)?;
                    let terms = vec![
                        c_addr.clone(),
                        s.scaled(&ti, pc.addr(m, 0))?,
                        s.scaled(&tj, pc.addr(0, n))?,
                    ];
                    let tc = s.sum(terms)?;
                    s.init_accumulators(clear_lit, &clear_e, fc.arr, pc, c_len, body, |s, out| {
                        c_moves(s, false, &tc, out)
                    })?;
                    k_loop(s, &ta, &tb, body)?;
                    c_moves(s, true, &tc, body)
                })
            })?;
        }
        // Groups past the grid idle (the condition is uniform per group).
        let used = gm * gn;
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

    // ----- the shared-operand atom path ------------------------------------

    /// A gemm through the kernel's shared-operand atom (`swizzle.rs`):
    ///
    /// ```text
    /// zero the accumulators (clear_accum)
    /// async_mma_fence
    /// for each k-step, for each of the group's 64-row slabs:
    ///   async_mma slab accumulators <- A descriptor, B descriptor
    /// async_mma_commit; async_mma_wait 0
    /// ```
    ///
    /// Waiting at the end keeps the statement synchronous for everything
    /// around it: its shared reads are done before the thread goes on, so
    /// the barriers placed for the gemm's reads (pipeline stages) hold. A
    /// pipelined loop may instead keep one group in flight (`wait 1`,
    /// `pipeline.rs`), and then waits for it after the loop.
    #[allow(clippy::too_many_arguments)]
    fn gemm_async(
        &mut self,
        [a, b, c]: [&Region; 3],
        (ta, tb): (bool, bool),
        (mm, nn, kk): (i64, i64, i64),
        dtypes: [DType; 3],
        clear_lit: Option<bool>,
        clear_e: Option<Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let plan = self
            .async_atom
            .and_then(|atom| self.async_plan(atom, dtypes, (mm, nn, kk)));
        let Some(plan) = plan else {
            return Err(self.unsupported("this gemm through the shared-operand atom"));
        };
        let arr = match self.resident.get(&c.buffer) {
            Some(r) if r.plan.same_split(&plan) => r.arr,
            Some(_) => return Err(self.demote(c.buffer)),
            None => {
                return Err(self.unsupported(
                    "a shared-operand gemm whose accumulator is not kept in registers",
                ));
            }
        };
        // A from registers: the elements of its array `infer::a_from_tile`
        // lists, one consecutive range per tile row and k-step.
        let a_regs = match self.resident.get(&a.buffer) {
            Some(r) => match super::infer::a_from_tile(&r.plan, &plan) {
                Some(table) if !ta => Some((r.arr, table)),
                _ => return Err(self.demote(a.buffer)),
            },
            None => None,
        };
        let a_slots = plan.maps[0].slot.len();
        if let Some((_, table)) = &a_regs {
            let consecutive = table
                .chunks(a_slots.max(1))
                .all(|c| c.iter().enumerate().all(|(j, &x)| x == c[0] + j as i64));
            if !consecutive {
                return Err(self.demote(a.buffer));
            }
        }
        let lb = self.swizzled.get(&b.buffer).copied();
        let la = match &a_regs {
            Some(_) => lb,
            None => self.swizzled.get(&a.buffer).copied(),
        };
        let (Some(la), Some(lb)) = (la, lb) else {
            return Err(self.malformed("a shared-operand gemm operand is not swizzled"));
        };
        let ida = match (&a_regs, self.mem(a.buffer)) {
            (Some(_), _) => SharedId(u32::MAX),
            (None, Ok(Mem::Shared { id, .. })) => id,
            (None, _) => {
                return Err(self.malformed("a shared-operand gemm operand is not in shared memory"));
            }
        };
        let Ok(Mem::Shared { id: idb, .. }) = self.mem(b.buffer) else {
            return Err(self.malformed("a shared-operand gemm operand is not in shared memory"));
        };
        let (_, grp, gi, gj) = self.group_coords(&plan)?;
        let slots = plan.maps[2].slots;
        let c_len = plan.tm * slots;
        let mut body = Vec::new();
        // A cleared accumulator is the first k-step's `accumulate false`
        // rather than a zero fill: `clear_accum`, or a fill of the whole
        // array right before the gemm (`T.clear(C)` then `T.gemm(.., C)`),
        // when every thread that ran the fill issues the gemm.
        let every_group = plan.gm * plan.gn >= plan.groups;
        let cleared =
            clear_lit == Some(true) || (every_group && self.take_trailing_zero(arr, c_len, out));
        if !cleared && let Some(cond) = &clear_e {
            let mut then = Vec::new();
            self.zero(arr, dtypes[2], c_len, &mut then);
            body.push(self.stmt(StmtKind::If {
                cond: cond.clone(),
                then_body: then,
                else_body: None,
            }));
        }
        // Operand origins: a constant, plus the group's row (column)
        // offset times a constant, plus the pipeline stage.
        let rows = plan.tm * plan.m;
        let a_origin = |row: i64, k: i64| {
            if ta {
                la.origin(k, row)
            } else {
                la.origin(row, k)
            }
        };
        let b_origin = |k: i64, col: i64| {
            if tb {
                lb.origin(col, k)
            } else {
                lb.origin(k, col)
            }
        };
        let a_step = a_origin(rows, 0) - a_origin(0, 0);
        let b_step = b_origin(0, plan.n) - b_origin(0, 0);
        let a_group = self.scaled(&gi, a_step)?;
        let b_group = self.scaled(&gj, b_step)?;
        let with_stage = |s: &Self, buf, e: Expr| -> Result<Expr> {
            match s.stage_offset(buf) {
                Some((offset, _)) => s.bin(BinaryOp::Add, offset, e),
                None => Ok(e),
            }
        };
        let a_base = with_stage(self, a.buffer, a_group)?;
        let b_base = with_stage(self, b.buffer, b_group)?;
        let a_base = match a_regs {
            Some(_) => lit_i32(0),
            None => self.let_reg("a_desc", a_base, &mut body),
        };
        let b_base = self.let_reg("b_desc", b_base, &mut body);
        let matrix = |layout: &super::swizzle::Swizzled, id, index, k_major: bool| SharedMatrix {
            buffer: id,
            index,
            major: if k_major { Major::K } else { Major::Mn },
            swizzle: layout.width as u32,
            lbo: if k_major {
                16
            } else {
                layout.panel_bytes() as u32
            },
            sbo: (8 * layout.width) as u32,
        };
        body.push(self.stmt(StmtKind::AsyncMmaFence));
        for ks in 0..plan.ksteps {
            let k0 = ks * plan.k;
            let bi = self.bin(BinaryOp::Add, b_base.clone(), lit_i32(b_origin(k0, 0)))?;
            for i in 0..plan.tm {
                let a_operand = match &a_regs {
                    Some((arr, table)) => AsyncA::Registers(FragRef {
                        array: *arr,
                        offset: table[(i * plan.ksteps + ks) as usize * a_slots] as u32,
                    }),
                    None => {
                        let ai = self.bin(
                            BinaryOp::Add,
                            a_base.clone(),
                            lit_i32(a_origin(i * plan.m, k0)),
                        )?;
                        AsyncA::Shared(matrix(&la, ida, ai, !ta))
                    }
                };
                body.push(self.stmt(StmtKind::AsyncMma {
                    atom: plan.atom.name.clone(),
                    n: plan.n as u32,
                    d: FragRef {
                        array: arr,
                        offset: (i * slots) as u32,
                    },
                    a: a_operand,
                    b: matrix(&lb, idb, bi.clone(), tb),
                    accumulate: Expr::literal(Literal::Bool(!(cleared && ks == 0))),
                }));
            }
        }
        body.push(self.stmt(StmtKind::AsyncMmaCommit));
        // Inside a pipelined loop that allows it, the group stays in
        // flight for one iteration (`pipeline.rs`).
        let pending = u32::from(self.async_lag);
        body.push(self.stmt(StmtKind::AsyncMmaWait { pending }));
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

    // ----- the scalar baseline ----------------------------------------------

    fn gemm_scalar(
        &mut self,
        [ra, rb, rc]: [&OperandRegion<'_>; 3],
        (ta, tb): (bool, bool),
        (m, n, k): (i64, i64, i64),
        clear_lit: Option<bool>,
        clear_e: Option<Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let cdtype = self.f.buffers[rc.region.buffer].dtype;
        let (abuf, bbuf, cbuf) = (ra.region.buffer, rb.region.buffer, rc.region.buffer);
        let (astarts, bstarts, cstarts) = (&ra.starts, &rb.starts, &rc.starts);
        let (ad, bd, cd) = (ra.dims, rb.dims, rc.dims);
        self.cyclic(m * n, out, |s, p, body| {
            let rcd = s.digits(&p, &[m, n])?;
            let (i, j) = (rcd[0].clone(), rcd[1].clone());
            let acc = s.temp("acc", DType::F64);
            s.assign(body, acc, Expr::literal(Literal::Float(0.0, DType::F64)));
            let kname = s.fresh("kk");
            let kr = s.add_reg(kname, DType::I32, RegisterKind::Loop);
            let kx = Index {
                expr: reg_expr(kr, DType::I32),
                range: Some((0, k - 1)),
            };
            let mut kb = Vec::new();
            let aidx = if ta {
                s.matrix_elem(astarts, ad, &kx, &i)?
            } else {
                s.matrix_elem(astarts, ad, &i, &kx)?
            };
            let bidx = if tb {
                s.matrix_elem(bstarts, bd, &j, &kx)?
            } else {
                s.matrix_elem(bstarts, bd, &kx, &j)?
            };
            let av = s.load(abuf, &aidx, &mut kb)?;
            let bv = s.load(bbuf, &bidx, &mut kb)?;
            let prod = s.bin(
                BinaryOp::Mul,
                Expr::cast(DType::F64, av),
                Expr::cast(DType::F64, bv),
            )?;
            let sum = s.bin(BinaryOp::Add, reg_expr(acc, DType::F64), prod)?;
            s.assign(&mut kb, acc, sum);
            if k > 0 {
                body.push(s.stmt(StmtKind::For {
                    var: kr,
                    start: lit_i32(0),
                    count: lit_i32(k),
                    step: lit_i32(1),
                    unroll: Unroll::None,
                    body: kb,
                }));
            }
            let cidx = s.matrix_elem(cstarts, cd, &i, &j)?;
            if clear_lit != Some(true) {
                let old = s.load(cbuf, &cidx, body)?;
                let with_old = s.bin(
                    BinaryOp::Add,
                    reg_expr(acc, DType::F64),
                    Expr::cast(DType::F64, old),
                )?;
                let v = match &clear_e {
                    None => with_old,
                    Some(cond) => Expr::select(cond.clone(), reg_expr(acc, DType::F64), with_old)
                        .map_err(|e| s.malformed(e.to_string()))?,
                };
                s.assign(body, acc, v);
            }
            s.store(
                cbuf,
                &cidx,
                Expr::cast(cdtype, reg_expr(acc, DType::F64)),
                body,
            )
        })
    }
}

/// The gcd of the lane steps of a fragment's addresses (what every lane
/// part is a multiple of; 0 when all are 0).
pub(super) fn lane_align(map: &FragMap, op: &AtomOperand) -> i64 {
    map.lane
        .iter()
        .filter(|&&(extent, _, _)| extent > 1)
        .fold(0, |g, &(_, r, c)| gcd(g, op.addr(r, c)))
}

/// The matrix units' name for an element type.
pub(super) fn element_type(dtype: DType) -> Option<ElementType> {
    Some(match dtype {
        DType::F16 => ElementType::F16,
        DType::BF16 => ElementType::Bf16,
        DType::F32 => ElementType::F32,
        DType::F64 => ElementType::F64,
        DType::I8 => ElementType::I8,
        DType::U8 => ElementType::U8,
        DType::I32 => ElementType::I32,
        DType::F8E4M3 => ElementType::F8e4m3,
        DType::F8E5M2 => ElementType::F8e5m2,
        _ => return None,
    })
}

/// The fragment maps of an atom when it is usable for a gemm of these
/// element types (A, B, C) and sizes on `threads` threads (module
/// documentation, "Choosing an atom").
fn usable(
    atom: &MatrixAtom,
    [a, b, c]: [DType; 3],
    (mm, nn, kk): (i64, i64, i64),
    threads: i64,
) -> Option<[FragMap; 3]> {
    if atom.lowering != AtomLowering::Fragments || !(a.is_float() && b.is_float() && c.is_float()) {
        return None;
    }
    let types = AtomTypes {
        a: element_type(a)?,
        b: element_type(b)?,
        accumulator: element_type(c)?,
    };
    if !atom.types.contains(&types) {
        return None;
    }
    let (m, n, k) = (
        i64::from(atom.shape.m),
        i64::from(atom.shape.n),
        i64::from(atom.shape.k),
    );
    let group = i64::from(atom.issue.threads);
    if m < 1 || n < 1 || k < 1 || group < 1 || threads % group != 0 {
        return None;
    }
    if mm < 1 || nn < 1 || kk < 1 || mm % m != 0 || nn % n != 0 || kk % k != 0 {
        return None;
    }
    if atom.accumulator.replication != 1 {
        return None;
    }
    let map = |role: OperandRole| -> Option<FragMap> {
        if !atom
            .operand(role)
            .sources
            .contains(&OperandSource::Registers)
        {
            return None;
        }
        let frag = atom.fragment(role).ok()??;
        if frag.threads() != group as u64 {
            return None;
        }
        decompose(&frag)
    };
    Some([
        map(OperandRole::A)?,
        map(OperandRole::B)?,
        map(OperandRole::Accumulator)?,
    ])
}

/// Splits a fragment into lane and slot parts, or `None` when it does
/// not decompose (checked over every lane and slot).
fn decompose(frag: &FragmentLayout) -> Option<FragMap> {
    let &[rows, cols] = frag.tile() else {
        return None;
    };
    let (rows, cols) = (i64::try_from(rows).ok()?, i64::try_from(cols).ok()?);
    let (threads, slots) = (frag.threads(), frag.slots());
    if threads.checked_mul(slots)? > 1 << 16 {
        return None;
    }
    let lane: Vec<(i64, i64, i64)> = frag
        .map()
        .mode(0)
        .ok()?
        .leaves()
        .into_iter()
        .map(|(extent, stride)| {
            Some((
                i64::try_from(extent).ok()?,
                stride.rem_euclid(rows),
                stride.div_euclid(rows),
            ))
        })
        .collect::<Option<_>>()?;
    let slot: Vec<(i64, i64)> = (0..slots)
        .map(|s| {
            let e = frag.element_index(0, s).ok()?;
            Some((e.rem_euclid(rows), e.div_euclid(rows)))
        })
        .collect::<Option<_>>()?;
    for t in 0..threads {
        let (mut row, mut col, mut rest) = (0i64, 0i64, t as i64);
        for &(extent, r, c) in &lane {
            let digit = rest % extent;
            rest /= extent;
            row += digit * r;
            col += digit * c;
        }
        for (s, &(sr, sc)) in slot.iter().enumerate() {
            let e = frag.element_index(t, s as u64).ok()?;
            if e < 0 || e >= rows * cols || (row + sr, col + sc) != (e % rows, e / rows) {
                return None;
            }
        }
    }
    Some(FragMap {
        slots: slots as i64,
        lane,
        slot,
    })
}

/// The `gm × gn` grid of issuing groups over `tiles_m × tiles_n` atom
/// tiles (module documentation, "Splitting the work").
fn partition(
    policy: GemmPolicy,
    groups: i64,
    tiles_m: i64,
    tiles_n: i64,
    m: i64,
    n: i64,
) -> (i64, i64) {
    // (preference key, (gm, gn)); larger keys win.
    type Candidate = ((i64, i64, i64), (i64, i64));
    let mut best: Option<Candidate> = None;
    for gm in 1..=groups.min(tiles_m) {
        if tiles_m % gm != 0 {
            continue;
        }
        for gn in 1..=(groups / gm).min(tiles_n) {
            if tiles_n % gn != 0 {
                continue;
            }
            let used = gm * gn;
            let perimeter = (tiles_m / gm) * m + (tiles_n / gn) * n;
            let key = match policy {
                GemmPolicy::Square => (used, -perimeter, gm),
                GemmPolicy::FullRow => (used, gm, gn),
                GemmPolicy::FullCol => (used, gn, gm),
            };
            if best.is_none_or(|(b, _)| key > b) {
                best = Some((key, (gm, gn)));
            }
        }
    }
    best.map_or((1, 1), |(_, g)| g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target;

    #[test]
    fn partition_follows_the_policy_after_using_every_group() {
        // 8 × 16 tiles of 16×8 (a 128×128 C) over 4 warps.
        assert_eq!(partition(GemmPolicy::Square, 4, 8, 16, 16, 8), (2, 2));
        assert_eq!(partition(GemmPolicy::FullRow, 4, 8, 16, 16, 8), (4, 1));
        assert_eq!(partition(GemmPolicy::FullCol, 4, 8, 16, 16, 8), (1, 4));
        // Fewer tiles than groups: the rest idle.
        assert_eq!(partition(GemmPolicy::Square, 4, 1, 2, 16, 8), (1, 2));
        assert_eq!(partition(GemmPolicy::FullRow, 4, 1, 1, 16, 8), (1, 1));
        // Using every group wins over the policy.
        assert_eq!(partition(GemmPolicy::FullRow, 4, 2, 4, 16, 8), (2, 2));
        // Only equal blocks: 3 tile rows do not split over 2 groups.
        assert_eq!(partition(GemmPolicy::FullRow, 2, 3, 1, 16, 8), (1, 1));
    }

    #[test]
    fn every_shipped_register_fragment_decomposes() {
        for name in target::builtin_names() {
            let t = target::builtin(name).unwrap_or_else(|e| panic!("{e}"));
            for atom in &t.matrix_atoms {
                for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
                    let Ok(Some(frag)) = atom.fragment(role) else {
                        continue;
                    };
                    let map = decompose(&frag);
                    assert!(map.is_some(), "{name} {} {}", atom.name, role.name());
                }
            }
        }
    }

    #[test]
    fn a_fragment_whose_rows_carry_does_not_decompose() {
        // Thread t holds element 2t: rows 0, 2, 0, 2 — the row part of the
        // thread leaf carries into the column.
        let frag: FragmentLayout = "[4,2] (4,2):(2,1)"
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}"));
        frag.check().unwrap_or_else(|e| panic!("{e}"));
        assert!(decompose(&frag).is_none());
    }

    #[test]
    fn usable_atoms_per_target() {
        let f16 = [DType::F16, DType::F16, DType::F32];
        let shape = (32, 32, 32);
        let names = |target: &str, dtypes, threads| {
            let t = target::builtin(target).unwrap_or_else(|e| panic!("{e}"));
            t.matrix_atoms
                .iter()
                .filter(|a| usable(a, dtypes, shape, threads).is_some())
                .map(|a| a.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("sm_80", f16, 128), ["mma.m16n8k16"]);
        // wgmma's B is read through a shared-memory descriptor.
        assert_eq!(names("sm_90a", f16, 128), ["mma.m16n8k16"]);
        assert_eq!(names("gfx942", f16, 128), ["mfma.32x32x8", "mfma.16x16x16"]);
        // A wavefront is 64 threads.
        assert!(names("gfx942", f16, 32).is_empty());
        // Apple's lane map is not a contract (`through_memory`).
        assert!(names("apple", [DType::F32; 3], 32).is_empty());
        // No atom takes f16 accumulators here, nor integers.
        assert!(names("sm_80", [DType::F16; 3], 128).is_empty());
        assert!(names("sm_80", [DType::I8, DType::I8, DType::I32], 128).is_empty());
    }
}
