//! XOR-swizzled shared buffers for matrix atoms that read their operands
//! from shared memory (`wgmma` on sm_90a: the description's atoms with a
//! `descriptor`).
//!
//! # When
//! A kernel uses such an atom for its gemms (`async_mma` in thread IR)
//! when the target has one and *every* `gemm` of the kernel qualifies:
//! - A and B are whole shared buffers of constant 2-D shape, each touched
//!   otherwise only by `copy` statements (the rule of `pad.rs`), and C is a
//!   whole `fragment` or `local` buffer of constant 2-D shape;
//! - the element types are one of the atom's combinations (f16 or bf16
//!   into f32);
//! - with `m × n × k` the atom's shape (64 × N × 16): `64 | M`, `16 | K`,
//!   the thread count is a multiple of the issuing group (a warpgroup),
//!   and the groups split C as below with every group's N a member of the
//!   atom's N family and its accumulators at most 128 registers per
//!   thread;
//! - each operand buffer's layout below exists, and where the operand is
//!   MN-major each group's share of M or N starts on a panel.
//!
//! One kernel-wide decision keeps the plan `resident.rs` picks for an
//! accumulator the same at every gemm that uses it.
//!
//! # The split
//! With `G` warpgroups, the grid is `gm × gn` with `gm·gn = G`, `gm` the
//! largest divisor of `G` dividing `M/64` whose `N/gn` is a multiple of 8
//! no larger than the atom's largest N: groups take whole 64-row slabs
//! first, and a wide N goes to one instruction. Group `(gi, gj)` owns
//! rows `gi·M/gm ..` in `tm = M/(64·gm)` slabs and columns `gj·N/gn ..`.
//!
//! # The layout
//! A buffer of `R × C` elements of `e` bytes (the last dimension
//! contiguous) is stored in *panels* of `P = W/e` columns, `W = min(128,
//! C·e)` bytes (which must be 32, 64 or a multiple of 128, with `8 | R`),
//! or the narrower `W` of a `swizzled(W)` pin (`T.annotate_layout`):
//! panel `p` holds columns `p·P ..` as `R` rows of `W` bytes, panels one
//! after another. Inside a panel the 16-byte chunk `j` of row `r` is
//! stored at chunk `j XOR ((r / (128/W)) mod (W/16))`, which is the
//! hardware's swizzle `addr ^ ((addr >> 7) & (W/16 − 1)) << 4` on the
//! byte address when the buffer (and each pipeline stage) starts on a
//! multiple of `8·W` bytes. Rows of whole chunks keep every 16-byte vector
//! of a copy contiguous, so copies vectorize as before; the eight rows an
//! atom reads at once fall in eight different chunks, so the reads are
//! bank-conflict free.
//!
//! This is the canonical layout of the descriptor for both majors
//! (`thread::SharedMatrix`): a K-major operand (rows M or N, columns K)
//! has `sbo = 8·W` (the next 8 rows) and starts at `(row0, k0)`; an
//! MN-major one (rows K, columns M or N) has `lbo = R·W` (the next panel)
//! and `sbo = 8·W` (the next 8 rows of K).
//!
//! # Operands of register atoms
//! The same layout serves atoms that take their operands from registers
//! loaded by warp-wide matrix loads (`mma.sync` fed by `ldmatrix`): on a
//! target with matrix loads whose kernel does not take a shared-operand
//! atom, every A or B buffer of a gemm with a layout above, that only
//! whole-buffer gemms and copies touch and no fragment is staged into, is
//! swizzled ([`Lower::find_mma_swizzle`]). A matrix load's eight rows and
//! a 16-byte copy's two rows per quarter warp then fall in different bank
//! groups, which no padded pitch achieves for both (`pad.rs`). The loads
//! take an XOR form (`ldmatrix.rs`, "Swizzled operands"); a gemm whose
//! fragments cannot be loaded that way, or that gets no atoms, makes the
//! attempt fail, and the kernel is lowered again with padded rows.
//!
//! # Pinned layouts
//! A buffer pinned to `swizzled(W)` (`choices.rs`; the front end pins the
//! buffers of `T.annotate_layout` so) that neither decision above took
//! still gets the layout, with `W`-byte panels, where its shape has one
//! ([`Lower::pin_swizzles`]): a buffer of constant 2-D shape in shared
//! memory that no `reduce` or `cumsum` touches. Every access then goes
//! through [`Lower::swizzled_index`] (`mod.rs`, `address`); a vector of
//! at most 16 bytes starting at a multiple of its width stays inside one
//! chunk, so copies vectorize as before. Register atoms read such an
//! operand element by element rather than through row-major matrix
//! loads (`gemm.rs`, `atom_operand`), results are not staged into it
//! with matrix stores (`resident.rs`), and reductions and scans address
//! its elements through the layout (`reduce.rs`, `cumsum`); only the
//! destination of a reduction of a register buffer keeps row-major rows
//! (the pin is then refused).
//! Unpinned buffers are never given a layout this way: it costs an XOR in
//! every address.

use std::collections::{BTreeSet, HashMap};

use super::{DType, Expr, Lower, Result, ir, lit_i32};
use crate::ir::{BinaryOp, Handle, Scope};
use crate::target::{AtomTypes, MatrixAtom, OperandRole, OperandSource};

/// Most 32-bit accumulator registers per thread.
const ACCUMULATOR_REGISTERS: i64 = 128;

/// The layout of one swizzled buffer (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Swizzled {
    pub(super) rows: i64,
    pub(super) cols: i64,
    /// Bytes per element.
    pub(super) elem: i64,
    /// Row bytes inside a panel: 32, 64 or 128.
    pub(super) width: i64,
}

impl Swizzled {
    /// The layout of an `rows × cols` buffer of `elem`-byte elements with
    /// the widest panels its rows allow.
    fn new(rows: i64, cols: i64, elem: i64) -> Option<Swizzled> {
        Swizzled::with_width(rows, cols, elem, cols.checked_mul(elem)?.min(128))
    }

    /// The layout with panels `width` bytes wide, when the shape has it:
    /// whole panels, a whole number of swizzle patterns down the rows.
    pub(super) fn with_width(rows: i64, cols: i64, elem: i64, width: i64) -> Option<Swizzled> {
        let bytes = cols.checked_mul(elem)?;
        let ok = matches!(width, 32 | 64 | 128)
            && matches!(elem, 1 | 2 | 4 | 8)
            && bytes % width == 0
            && rows % 8 == 0
            && rows > 0;
        ok.then_some(Swizzled {
            rows,
            cols,
            elem,
            width,
        })
    }

    /// Elements per panel row.
    pub(super) fn panel_cols(&self) -> i64 {
        self.width / self.elem
    }

    /// Bytes of one panel.
    pub(super) fn panel_bytes(&self) -> i64 {
        self.rows * self.width
    }

    /// Alignment the buffer needs: one swizzle pattern.
    pub(super) fn align(&self) -> u32 {
        (8 * self.width) as u32
    }

    /// The unswizzled element index of (row, col): where a descriptor
    /// whose operand starts at that element points.
    pub(super) fn origin(&self, row: i64, col: i64) -> i64 {
        let pc = self.panel_cols();
        (col / pc) * self.rows * pc + row * pc + col % pc
    }

    /// The stored element index of (row, col) (module documentation).
    #[cfg(test)]
    pub(super) fn index(&self, row: i64, col: i64) -> i64 {
        let u = |x: i64| x as u64;
        let at =
            crate::layout::panel_offset(u(self.rows), u(self.elem), u(self.width), u(row), u(col));
        at.expect("a valid layout") as i64
    }
}

/// A gemm of the kernel, as the swizzle decision sees it.
struct GemmUse {
    a: Handle<ir::Buffer>,
    b: Handle<ir::Buffer>,
    c: Handle<ir::Buffer>,
    ta: bool,
    tb: bool,
    whole: bool,
}

impl<'a> Lower<'a> {
    /// Decides whether the kernel's gemms use the target's shared-operand
    /// atom and, if so, swizzles their operand buffers (module
    /// documentation).
    pub(super) fn find_async_mma(&mut self, body: &ir::Block) {
        if !self.async_allowed {
            return;
        }
        let target: &'a crate::target::TargetDescription = self.target;
        let Some(atom) = target.matrix_atoms.iter().find(|a| a.descriptor.is_some()) else {
            return;
        };
        let mut gemms = Vec::new();
        collect_gemms(self.f, body, &mut gemms);
        if gemms.is_empty() {
            return;
        }
        let mut operands = BTreeSet::new();
        let mut copied = BTreeSet::new();
        let mut other = BTreeSet::new();
        self.pad_uses(body, &mut operands, &mut copied, &mut other);
        let mut layouts: HashMap<Handle<ir::Buffer>, Swizzled> = HashMap::new();
        for g in &gemms {
            let f = self.f;
            let shape = |b: Handle<ir::Buffer>| f.const_shape(b).filter(|s| s.len() == 2);
            let (Some(sa), Some(sb), Some(sc)) = (shape(g.a), shape(g.b), shape(g.c)) else {
                return;
            };
            let (ba, bb, bc) = (&f.buffers[g.a], &f.buffers[g.b], &f.buffers[g.c]);
            // A may come from registers (a fragment that layout inference
            // keeps in the atom's A layout, `infer.rs`) when the atom
            // takes it so.
            let a_in_registers = matches!(ba.scope, Scope::Fragment | Scope::Local)
                && !g.ta
                && atom.a.sources.contains(&OperandSource::Registers)
                && matches!(atom.fragment(OperandRole::A), Ok(Some(_)));
            if !g.whole
                || (ba.scope != Scope::Shared && !a_in_registers)
                || bb.scope != Scope::Shared
                || !matches!(bc.scope, Scope::Fragment | Scope::Local)
                || other.contains(&g.a.index())
                || other.contains(&g.b.index())
                || g.a == g.b
            {
                return;
            }
            let (m, k) = if g.ta { (sa[1], sa[0]) } else { (sa[0], sa[1]) };
            let n = if g.tb { sb[0] } else { sb[1] };
            if sc != [m, n] {
                return;
            }
            let Some(split) = self.async_split(atom, [ba.dtype, bb.dtype, bc.dtype], (m, n, k))
            else {
                return;
            };
            let mut operands = vec![(g.b, &sb, !g.tb, n / split.gn)];
            if !a_in_registers {
                operands.push((g.a, &sa, g.ta, m / split.gm));
            }
            for (buf, s, mn_major, share) in operands {
                let elem = f.buffers[buf].dtype.bytes() as i64;
                // A pinned swizzle gives its own panel width (the
                // descriptor and the bulk copies take any of the three).
                let layout = match self.pins.layouts.get(&buf) {
                    Some(ir::BufferLayout::Swizzled { row_bytes }) => i64::try_from(*row_bytes)
                        .ok()
                        .and_then(|w| Swizzled::with_width(s[0], s[1], elem, w)),
                    _ => Swizzled::new(s[0], s[1], elem),
                };
                let Some(layout) = layout else {
                    return;
                };
                if mn_major && share % layout.panel_cols() != 0 {
                    return;
                }
                if layouts.insert(buf, layout).is_some_and(|l| l != layout) {
                    return;
                }
            }
        }
        // A buffer pinned to another layout keeps the kernel off the atom
        // (`choices.rs`).
        for (b, layout) in &layouts {
            match self.pins.layouts.get(b) {
                None => {}
                Some(ir::BufferLayout::Swizzled { row_bytes })
                    if i64::try_from(*row_bytes).is_ok_and(|w| w == layout.width) => {}
                Some(_) => return,
            }
        }
        self.swizzled = layouts;
        self.async_atom = Some(atom);
    }

    /// Swizzles the shared operands of register atoms (module
    /// documentation, "Operands of register atoms"): on a target with
    /// matrix loads whose kernel does not take a shared-operand atom,
    /// every A or B buffer of a gemm that only whole-buffer gemms and
    /// copies touch, that no fragment is staged into, and whose shape has
    /// a layout.
    pub(super) fn find_mma_swizzle(&mut self, body: &ir::Block) {
        if self.async_atom.is_some()
            || self.target.matrix_loads.is_empty()
            || !(self.mma_swizzle || self.mma_swizzle_pins)
        {
            return;
        }
        let mut gemms = Vec::new();
        collect_gemms(self.f, body, &mut gemms);
        let super::pad::SharedUses {
            mut other, staged, ..
        } = self.shared_uses(body);
        // Buffers some gemm reads only in part keep linear rows.
        for g in gemms.iter().filter(|g| !g.whole) {
            other.insert(g.a.index());
            other.insert(g.b.index());
        }
        for g in &gemms {
            for buf in [g.a, g.b] {
                let b = &self.f.buffers[buf];
                if b.scope != Scope::Shared
                    || other.contains(&buf.index())
                    || staged.contains(&buf.index())
                    || self.swizzled.contains_key(&buf)
                    || g.a == g.b
                {
                    continue;
                }
                let Some(shape) = self.f.const_shape(buf).filter(|s| s.len() == 2) else {
                    continue;
                };
                let Some(layout) = Swizzled::new(shape[0], shape[1], b.dtype.bytes() as i64) else {
                    continue;
                };
                // A buffer pinned to another layout keeps it; the knobs
                // say whether pinned and unpinned buffers may be taken.
                match self.pins.layouts.get(&buf) {
                    None if self.mma_swizzle => {}
                    Some(ir::BufferLayout::Swizzled { row_bytes })
                        if self.mma_swizzle_pins
                            && i64::try_from(*row_bytes).is_ok_and(|w| w == layout.width) => {}
                    _ => continue,
                }
                self.swizzled.insert(buf, layout);
                self.mma_swizzled.insert(buf);
            }
        }
    }

    /// Gives every buffer pinned to `swizzled(W)` that no atom took the
    /// layout with `W`-byte panels (module documentation, "Pinned
    /// layouts"), when its shape has one and it is not the destination of
    /// a reduction of a register buffer (whose paths store row-major).
    pub(super) fn pin_swizzles(&mut self, body: &ir::Block) {
        let mut scanned = BTreeSet::new();
        body.walk(&mut |stmt, _| {
            if let ir::Stmt::Reduce { src, dst, .. } = stmt
                && (self.resident.contains_key(src) || self.spread.contains_key(src))
            {
                scanned.insert(*dst);
            }
        });
        let mut pins: Vec<_> = self.pins.layouts.iter().collect();
        pins.sort_by_key(|(b, _)| **b);
        for (&b, pin) in pins {
            let ir::BufferLayout::Swizzled { row_bytes } = pin else {
                continue;
            };
            if self.swizzled.contains_key(&b)
                || self.resident.contains_key(&b)
                || self.spread.contains_key(&b)
                || scanned.contains(&b)
            {
                continue;
            }
            let Some([rows, cols]) = self
                .f
                .const_shape(b)
                .and_then(|s| <[i64; 2]>::try_from(s).ok())
            else {
                continue;
            };
            let elem = self.f.buffers[b].dtype.bytes() as i64;
            let Ok(width) = i64::try_from(*row_bytes) else {
                continue;
            };
            if let Some(layout) = Swizzled::with_width(rows, cols, elem, width) {
                self.swizzled.insert(b, layout);
            }
        }
    }

    /// The warpgroup split of an `m × n × k` gemm with these element
    /// types through `atom`, or `None` when the atom cannot take it.
    pub(super) fn async_split(
        &self,
        atom: &MatrixAtom,
        [a, b, c]: [DType; 3],
        (m, n, k): (i64, i64, i64),
    ) -> Option<AsyncSplit> {
        let types = AtomTypes {
            a: super::gemm::element_type(a)?,
            b: super::gemm::element_type(b)?,
            accumulator: super::gemm::element_type(c)?,
        };
        if !atom.types.contains(&types) {
            return None;
        }
        let (am, ak) = (i64::from(atom.shape.m), i64::from(atom.shape.k));
        let group = i64::from(atom.issue.threads);
        if am < 1 || ak < 1 || group < 1 || self.threads % group != 0 {
            return None;
        }
        if m < am || m % am != 0 || k < ak || k % ak != 0 || n < 1 {
            return None;
        }
        let groups = self.threads / group;
        let family: Vec<i64> = atom.supported_n().into_iter().map(i64::from).collect();
        let mut best = None;
        for gm in (1..=groups).rev() {
            if groups % gm != 0 || (m / am) % gm != 0 {
                continue;
            }
            let gn = groups / gm;
            if n % gn != 0 || !family.contains(&(n / gn)) {
                continue;
            }
            best = Some(AsyncSplit {
                groups,
                gm,
                gn,
                tm: m / am / gm,
                n: n / gn,
            });
            break;
        }
        let split = best?;
        let slots = am * split.n / group;
        let registers = split.tm * slots * c.bytes() as i64 / 4;
        (registers <= ACCUMULATOR_REGISTERS).then_some(split)
    }

    /// The stored element index of `(row, col)` in a swizzled buffer.
    pub(super) fn swizzled_index(&self, layout: &Swizzled, row: &Expr, col: &Expr) -> Result<Expr> {
        let pc = layout.panel_cols();
        let t = 16 / layout.elem;
        let rows_pc = lit_i32(pc);
        // panel · R·P + row · P
        let panel = self.bin(BinaryOp::FloorDiv, col.clone(), lit_i32(pc))?;
        let panel = self.bin(BinaryOp::Mul, panel, lit_i32(layout.rows * pc))?;
        let row_off = self.bin(BinaryOp::Mul, row.clone(), rows_pc)?;
        // ((col mod P) / T) XOR ((row / (128/W)) mod (W/16)), times T
        let in_panel = self.bin(BinaryOp::FloorMod, col.clone(), lit_i32(pc))?;
        let chunk = self.bin(BinaryOp::FloorDiv, in_panel, lit_i32(t))?;
        let key = self.bin(BinaryOp::FloorDiv, row.clone(), lit_i32(128 / layout.width))?;
        let key = self.bin(BinaryOp::FloorMod, key, lit_i32(layout.width / 16))?;
        let chunk = self.bin(BinaryOp::BitXor, chunk, key)?;
        let chunk = self.bin(BinaryOp::Mul, chunk, lit_i32(t))?;
        let within = self.bin(BinaryOp::FloorMod, col.clone(), lit_i32(t))?;
        let mut sum = self.bin(BinaryOp::Add, panel, row_off)?;
        sum = self.bin(BinaryOp::Add, sum, chunk)?;
        self.bin(BinaryOp::Add, sum, within)
    }
}

/// How the warpgroups share an async gemm (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct AsyncSplit {
    pub(super) groups: i64,
    pub(super) gm: i64,
    pub(super) gn: i64,
    /// 64-row slabs per group.
    pub(super) tm: i64,
    /// The N of each group's instructions.
    pub(super) n: i64,
}

fn collect_gemms(f: &ir::Function, block: &ir::Block, out: &mut Vec<GemmUse>) {
    for stmt in &block.stmts {
        match stmt {
            ir::Stmt::Kernel { body, .. }
            | ir::Stmt::Parallel { body, .. }
            | ir::Stmt::For { body, .. }
            | ir::Stmt::Role { body, .. } => collect_gemms(f, body, out),
            ir::Stmt::If {
                then, otherwise, ..
            } => {
                collect_gemms(f, then, out);
                collect_gemms(f, otherwise, out);
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                ..
            } => {
                let whole = [a, b, c].iter().all(|r| is_whole(f, r));
                out.push(GemmUse {
                    a: a.buffer,
                    b: b.buffer,
                    c: c.buffer,
                    ta: *transpose_a,
                    tb: *transpose_b,
                    whole,
                });
            }
            _ => {}
        }
    }
}

/// Whether a region is its whole buffer: every start the literal 0 and
/// every extent the buffer's constant extent.
fn is_whole(f: &ir::Function, r: &ir::Region) -> bool {
    let Some(shape) = f.const_shape(r.buffer) else {
        return false;
    };
    shape.len() == r.ranges.len()
        && r.ranges.iter().zip(&shape).all(|(range, &extent)| {
            f.as_literal(range.start).is_some_and(|l| l.as_f64() == 0.0)
                && f.as_literal(range.extent)
                    .is_some_and(|l| l.as_f64() == extent as f64)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::{Major, SharedMatrix};

    /// The stored index is the hardware swizzle of the unswizzled address
    /// (buffer at a pattern boundary), and the descriptor's canonical
    /// layouts find every operand element where the layout stored it.
    #[test]
    fn layout_matches_the_descriptor_layouts() {
        for (rows, cols) in [(128, 64), (64, 128), (64, 32), (32, 16), (64, 256)] {
            let l = Swizzled::new(rows, cols, 2).expect("layout");
            let w = l.width as u32;
            for r in 0..rows {
                for c in 0..cols {
                    let plain = l.origin(r, c) as u64 * 2;
                    let hw = SharedMatrix::swizzle_address(w, plain) / 2;
                    assert_eq!(hw as i64, l.index(r, c), "{rows}x{cols} ({r}, {c})");
                }
            }
            // K-major: rows are M (or N), columns K.
            let k_major = |r0: i64, k0: i64| SharedMatrix {
                buffer: crate::thread::SharedId(0),
                index: lit_i32(l.origin(r0, k0)),
                major: Major::K,
                swizzle: w,
                lbo: 16,
                sbo: 8 * w,
            };
            for r0 in (0..rows).step_by(8) {
                for k0 in (0..cols).step_by(16) {
                    let d = k_major(r0, k0);
                    for mn in 0..8.min(rows - r0) {
                        for k in 0..16.min(cols - k0) {
                            let start = l.origin(r0, k0) as u64 * 2;
                            let byte = SharedMatrix::swizzle_address(
                                w,
                                start + d.offset(mn as u64, k as u64, 2),
                            );
                            assert_eq!(byte / 2, l.index(r0 + mn, k0 + k) as u64);
                        }
                    }
                }
            }
            // MN-major: rows are K, columns M (or N), from panel starts.
            let pc = l.panel_cols();
            let mn_major = SharedMatrix {
                buffer: crate::thread::SharedId(0),
                index: lit_i32(0),
                major: Major::Mn,
                swizzle: w,
                lbo: (l.panel_bytes()) as u32,
                sbo: 8 * w,
            };
            for k0 in (0..rows).step_by(16) {
                if k0 + 16 > rows {
                    continue;
                }
                for mn in 0..cols {
                    for k in 0..16 {
                        let start = l.origin(k0, 0) as u64 * 2;
                        let byte = SharedMatrix::swizzle_address(
                            w,
                            start + mn_major.offset(mn as u64, k as u64, 2),
                        );
                        assert_eq!(byte / 2, l.index(k0 + k, mn) as u64, "pc {pc}");
                    }
                }
            }
        }
    }

    #[test]
    fn layouts_need_whole_chunks_and_eight_rows() {
        assert!(Swizzled::new(128, 8, 2).is_none());
        assert!(Swizzled::new(4, 64, 2).is_none());
        assert!(Swizzled::new(64, 96, 2).is_none());
        assert_eq!(Swizzled::new(64, 192, 2).map(|l| l.width), Some(128));
    }
}
