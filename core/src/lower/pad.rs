//! Padded rows for the shared-memory operands of matrix atoms.
//!
//! # Why
//! Shared memory is split into banks (32 banks of 4 bytes on the shipped
//! SIMT targets, `memory_spaces[].banks`). A matrix atom's fragment loads
//! have each lane read a few bytes from one of eight consecutive rows of a
//! tile; with rows of 64 bytes (a 32-element `f16` row) rows `r` and
//! `r + 2` start in the same bank, and with rows of 256 bytes all eight
//! do, so the loads of one instruction are served in 4 or 8 passes
//! instead of one.
//!
//! # What
//! A shared buffer is *padded* when its row pitch (the distance between
//! consecutive indices of its second-to-last dimension) is made longer
//! than its last extent: in units of 16 bytes, a row of `u` units gets a
//! pitch of `u` units when `u` is odd and `u + 1` when it is even. With an
//! odd pitch `p`, rows `r = 0..7` start at units `p·r`, which are distinct
//! modulo 8: the eight rows begin in eight different groups of four
//! banks, and a fragment load whose lanes read at most 16 bytes of each of
//! eight consecutive rows touches every bank at most once. Padding keeps
//! every row 16-byte aligned, so vector moves and async copies of whole
//! 16-byte pieces stay legal. Only the elements past the last extent of
//! each row are unused; they are never read or written.
//!
//! # Which buffers
//! Gemm operands that matrix loads read are swizzled instead where they
//! can be (`swizzle.rs`, "Operands of register atoms"): padding keeps the
//! loads free of conflicts, but not the 16-byte copies that fill the
//! buffer. Padding is what such operands get when the swizzle does not
//! apply, and what staged results get.
//!
//! Every access must go through a path that knows the pitch: the generic
//! element address ([`super::Lower::address`]: scalar and vector loads and
//! stores, async copies) and the atom path's operand strides
//! ([`super::Lower::atom_operand`]). So a buffer is padded only when
//! - it is a shared buffer of rank at least 2 with a constant shape whose
//!   rows are a whole number of 16-byte units, and
//! - it is the A or B operand of some `gemm` (the case the padding is
//!   for), or a fragment is copied into it (staging a result on its way to
//!   global memory: a thread of a matrix-atom fragment writes a few
//!   elements of each of eight rows per instruction, the same pattern as
//!   the operand loads), and
//! - every other statement that touches it is a `copy` (as source or
//!   destination): reductions, scans, fills, atomics and element accesses
//!   address shared memory themselves or are not worth the space, and
//!   disqualify it, as does a read of it inside an index expression.
//!
//! Padding costs shared memory (a quarter more for 64-byte rows), so the
//! kernel is lowered again without it when the padded kernel does not fit
//! ([`super::lower_kernel`]).

use std::collections::{BTreeSet, HashMap};

use super::{Lower, Pending, Scope, for_each_load, ir};
use crate::ir::Handle;

/// The unit rows are padded in, bytes.
const UNIT_BYTES: i64 = 16;

/// How the statements of a kernel use its buffers, by buffer index.
#[derive(Default)]
pub(super) struct SharedUses {
    /// A or B operands of some `gemm`.
    pub(super) operands: BTreeSet<usize>,
    /// Sources or destinations of some `copy`.
    pub(super) copied: BTreeSet<usize>,
    /// Touched in any other way.
    pub(super) other: BTreeSet<usize>,
    /// Destinations of a copy from a fragment (a staged result).
    pub(super) staged: BTreeSet<usize>,
}

impl Lower<'_> {
    /// How `body` uses the kernel's buffers.
    pub(super) fn shared_uses(&self, body: &ir::Block) -> SharedUses {
        let mut uses = SharedUses::default();
        self.pad_uses(body, &mut uses.operands, &mut uses.copied, &mut uses.other);
        self.staging(body, &mut uses.staged);
        uses
    }

    /// Picks the buffers to pad (module documentation) and their pitches.
    pub(super) fn find_padding(&mut self, body: &ir::Block) {
        let SharedUses {
            operands,
            other,
            staged,
            ..
        } = self.shared_uses(body);
        let mut pitches = HashMap::new();
        for (b, buffer) in self.f.buffers.iter() {
            let i = b.index();
            if buffer.scope != Scope::Shared
                || !(operands.contains(&i) || staged.contains(&i))
                || other.contains(&i)
                || self.swizzled.contains_key(&b)
            {
                continue;
            }
            let Some(shape) = self.f.const_shape(b) else {
                continue;
            };
            if shape.len() < 2 {
                continue;
            }
            let Some(&last) = shape.last() else { continue };
            let row_bytes = last * buffer.dtype.bytes() as i64;
            if row_bytes <= 0 || row_bytes % UNIT_BYTES != 0 {
                continue;
            }
            let units = row_bytes / UNIT_BYTES;
            if units % 2 == 0 {
                let pitch = (units + 1) * UNIT_BYTES / buffer.dtype.bytes() as i64;
                pitches.insert(b, pitch);
            }
        }
        self.pitch = pitches;
    }

    /// Collects the shared buffers a fragment is copied into (staging for
    /// a store to global memory, say).
    fn staging(&self, block: &ir::Block, staged: &mut BTreeSet<usize>) {
        for stmt in &block.stmts {
            match stmt {
                ir::Stmt::Kernel { body, .. }
                | ir::Stmt::Parallel { body, .. }
                | ir::Stmt::For { body, .. }
                | ir::Stmt::Role { body, .. } => self.staging(body, staged),
                ir::Stmt::If {
                    then, otherwise, ..
                } => {
                    self.staging(then, staged);
                    self.staging(otherwise, staged);
                }
                ir::Stmt::Copy { src, dst }
                    if matches!(
                        self.f.buffers[src.buffer].scope,
                        Scope::Fragment | Scope::Local
                    ) && self.f.buffers[dst.buffer].scope == Scope::Shared =>
                {
                    staged.insert(dst.buffer.index());
                }
                _ => {}
            }
        }
    }

    /// Sorts the buffers `block` touches: A/B operands of a `gemm`, copied
    /// ones, and those with any other use.
    pub(super) fn pad_uses(
        &self,
        block: &ir::Block,
        operands: &mut BTreeSet<usize>,
        copied: &mut BTreeSet<usize>,
        other: &mut BTreeSet<usize>,
    ) {
        let loads_in = |e: Handle<ir::Expr>, other: &mut BTreeSet<usize>| {
            for_each_load(self.f, e, |b| {
                other.insert(b.index());
            });
        };
        let region_loads = |r: &ir::Region, other: &mut BTreeSet<usize>| {
            for range in &r.ranges {
                loads_in(range.start, other);
                loads_in(range.extent, other);
            }
        };
        for stmt in &block.stmts {
            match stmt {
                ir::Stmt::Kernel { body, .. }
                | ir::Stmt::Parallel { body, .. }
                | ir::Stmt::Role { body, .. } => {
                    self.pad_uses(body, operands, copied, other);
                }
                ir::Stmt::For {
                    start,
                    extent,
                    body,
                    ..
                } => {
                    loads_in(*start, other);
                    loads_in(*extent, other);
                    self.pad_uses(body, operands, copied, other);
                }
                ir::Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    loads_in(*cond, other);
                    self.pad_uses(then, operands, copied, other);
                    self.pad_uses(otherwise, operands, copied, other);
                }
                ir::Stmt::Copy { src, dst } => {
                    region_loads(src, other);
                    region_loads(dst, other);
                    copied.insert(src.buffer.index());
                    copied.insert(dst.buffer.index());
                }
                ir::Stmt::Gemm {
                    a,
                    b,
                    c,
                    clear_accum,
                    ..
                } => {
                    for r in [a, b, c] {
                        region_loads(r, other);
                    }
                    loads_in(*clear_accum, other);
                    operands.insert(a.buffer.index());
                    operands.insert(b.buffer.index());
                    other.insert(c.buffer.index());
                }
                _ => {
                    let mut acc = Pending::default();
                    self.stmt_accesses(stmt, &mut acc);
                    other.extend(acc.reads);
                    other.extend(acc.writes);
                }
            }
        }
    }

    /// The extents memory is laid out by: the shape, with the last extent
    /// replaced by the pitch of a padded buffer.
    pub(super) fn physical_shape(&self, b: Handle<ir::Buffer>, dims: &[i64]) -> Vec<i64> {
        let mut phys = dims.to_vec();
        if let (Some(&pitch), Some(last)) = (self.pitch.get(&b), phys.last_mut()) {
            *last = pitch;
        }
        phys
    }

    /// Elements of memory a buffer of shape `dims` takes (padding
    /// included; a mapped buffer's span, `mapped.rs`).
    pub(super) fn physical_len(&self, b: Handle<ir::Buffer>, dims: &[i64]) -> i64 {
        if let Some(m) = self.mapped.get(&b) {
            return m.span;
        }
        self.physical_shape(b, dims).iter().product()
    }
}
