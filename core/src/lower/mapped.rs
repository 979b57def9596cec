//! Shared and global buffers in a layout their author wrote out
//! (`T.Layout`).
//!
//! # What
//! A buffer pinned to `mapped(MAP)` (`choices.rs`; the front end pins the
//! buffers of a `T.annotate_layout` whose `T.Layout` function is integer
//! arithmetic of the indices, `front/py/tl.rs`) keeps element
//! `(i0, i1, ...)` at offset `MAP(i0, i1, ...)` of its memory, which is
//! as long as the largest offset plus one ([`Lower::physical_len`]; each
//! pipeline stage as long again).
//!
//! # How every access follows it
//! - Element and vector accesses go through [`Lower::address`], which
//!   computes the map on the access's indices ([`Lower::map_index`]).
//! - Reductions and scans address elements by their row-major index; they
//!   take it through [`Lower::element`] as they do for swizzled buffers.
//! - Register atoms read such an operand through matrix loads when the map
//!   keeps runs of 16 bytes and every row a load names starts one
//!   (`ldmatrix.rs`, "Mapped operands"); otherwise they read or write it
//!   per lane, each fragment move mapping its element (`gemm.rs`,
//!   `frag_moves`). Results are not staged into it with matrix stores; a
//!   shared-operand atom (`swizzle.rs`) does not take the kernel, and no
//!   bulk copy fills the buffer (`tma.rs` fills swizzled buffers only).
//! - A vector of `w` elements moves `w` consecutive elements of a row as
//!   one access, so its width is at most [`Mapped::vector`]: the widest
//!   `v` (a power of two) for which every run of `v` elements starting at
//!   a multiple of `v` in the last dimension lies at `v` consecutive
//!   offsets starting at a multiple of `v`. A map that reverses or
//!   scatters columns moves element by element.
//!
//! - A global buffer (a kernel parameter) in a mapped layout is the
//!   caller's tensor stored in the map's order: its accesses (element
//!   loads and stores, copies, atomics) all go through
//!   [`Lower::address`] as above, guarded on its logical shape; a bulk
//!   copy never reads it (`tma.rs`). Its shape must be constant.
//!
//! # When a pin is refused
//! The lowering addresses shared memory with 32-bit arithmetic: a map one
//! of whose values on the way (for some element) leaves the `i32` range
//! is an error naming the buffer, as is one that is not one-to-one over
//! the buffer's shape (which the IR verifier already refuses).

use std::rc::Rc;

use super::swizzle::Swizzled;
use super::{BinaryOp, Expr, Lower, Result, ir, lit_i32};
use crate::ir::{BufferLayout, Handle};
use crate::layout::{IndexMap, MapOp};

/// A buffer's mapped layout, as the lowering uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mapped {
    pub(super) map: IndexMap,
    /// The buffer's shape.
    pub(super) dims: Vec<i64>,
    /// Elements of memory: the largest offset plus one.
    pub(super) span: i64,
    /// The widest vector (in elements, at most 16) whose runs stay
    /// consecutive and aligned (module documentation).
    pub(super) vector: i64,
}

impl Mapped {
    /// The layout of a buffer of shape `dims` under `map`, when every
    /// offset and every value computed on the way fits `i32` and the map
    /// is one-to-one.
    pub(super) fn new(map: &IndexMap, dims: &[i64]) -> Option<Mapped> {
        let shape: Vec<u64> = dims
            .iter()
            .map(|&d| u64::try_from(d).ok())
            .collect::<Option<_>>()?;
        let offsets = map.check_over(&shape).ok()?;
        let bound = i64::from(i32::MAX);
        let mut coords = vec![0i64; dims.len()];
        for linear in 0..offsets.len() as i64 {
            let mut rest = linear;
            for (c, &d) in coords.iter_mut().zip(dims).rev() {
                *c = rest % d;
                rest /= d;
            }
            map.eval_within(&coords, bound)?;
        }
        let span = offsets.iter().max().map_or(0, |&m| m as i64 + 1);
        if span > bound {
            return None;
        }
        let last = dims.last().copied().unwrap_or(1);
        let runs_hold = |v: i64| {
            last % v == 0
                && offsets.chunks(v as usize).all(|run| {
                    run[0] % v as u64 == 0
                        && run.iter().enumerate().all(|(j, &o)| o == run[0] + j as u64)
                })
        };
        let vector = [16, 8, 4, 2]
            .into_iter()
            .find(|&v| runs_hold(v))
            .unwrap_or(1);
        Some(Mapped {
            map: map.clone(),
            dims: dims.to_vec(),
            span,
            vector,
        })
    }
}

/// How a shared buffer's elements are arranged when it is not in
/// (possibly padded) row-major rows.
#[derive(Clone, Debug)]
pub(super) enum Arranged {
    Swizzled(Swizzled),
    Mapped(Rc<Mapped>),
}

impl Lower<'_> {
    /// Realizes every `mapped` pin (module documentation).
    pub(super) fn pin_maps(&mut self) -> Result<()> {
        // A global buffer in a mapped layout (a `T.Layout` rearranging the
        // caller's tensor): every element access, copy and atomic goes
        // through `address`, which follows the map as for shared buffers;
        // no bulk copy reads it (`tma.rs`).
        let mut globals: Vec<(Handle<ir::Buffer>, IndexMap)> = self
            .f
            .buffers
            .iter()
            .filter(|(_, b)| b.scope == ir::Scope::Global)
            .filter_map(|(h, b)| match &b.layout {
                Some(BufferLayout::Mapped { map }) => Some((h, map.clone())),
                _ => None,
            })
            .collect();
        globals.sort_by_key(|(b, _)| *b);
        for (b, map) in globals {
            let name = &self.f.buffers[b].name;
            let Some(dims) = self.f.const_shape(b) else {
                return Err(super::unsupported(
                    format!(
                        "global buffer `{name}` of symbolic shape in a `T.Layout` (`mapped` \
                         layout): the interpreter follows it, the lowering needs a constant shape"
                    ),
                    ir::Span::UNKNOWN,
                ));
            };
            let Some(mapped) = Mapped::new(&map, &dims) else {
                return Err(super::unsupported(
                    format!(
                        "global buffer `{name}` in a `T.Layout` (`mapped(\"{map}\")`) whose \
                         offsets leave 32-bit arithmetic"
                    ),
                    ir::Span::UNKNOWN,
                ));
            };
            self.mapped.insert(b, Rc::new(mapped));
        }
        let mut pins: Vec<(Handle<ir::Buffer>, IndexMap)> = self
            .pins
            .layouts
            .iter()
            .filter_map(|(&b, l)| match l {
                BufferLayout::Mapped { map } => Some((b, map.clone())),
                _ => None,
            })
            .collect();
        pins.sort_by_key(|(b, _)| *b);
        for (b, map) in pins {
            let dims = self.f.const_shape(b).unwrap_or_default();
            let Some(mapped) = Mapped::new(&map, &dims) else {
                return Err(self.pin_error(
                    b,
                    format!(
                        "is pinned to layout `mapped(\"{map}\")`, which is not one-to-one over its \
                         shape or leaves 32-bit offsets for some element"
                    ),
                ));
            };
            self.mapped.insert(b, Rc::new(mapped));
        }
        Ok(())
    }

    /// `b`'s arrangement, when it is swizzled or mapped.
    pub(super) fn arranged(&self, b: Handle<ir::Buffer>) -> Option<Arranged> {
        if let Some(s) = self.swizzled.get(&b) {
            return Some(Arranged::Swizzled(*s));
        }
        self.mapped.get(&b).map(|m| Arranged::Mapped(m.clone()))
    }

    /// The widest vector a mapped buffer allows (no limit for others).
    pub(super) fn map_vector(&self, b: Handle<ir::Buffer>) -> i64 {
        self.mapped.get(&b).map_or(i64::MAX, |m| m.vector)
    }

    /// The stored index of the element at `idx` (one index per
    /// dimension) of a mapped buffer.
    pub(super) fn map_index(&self, m: &Mapped, idx: &[Expr]) -> Result<Expr> {
        self.map_expr(&m.map, idx)
    }

    fn map_expr(&self, map: &IndexMap, idx: &[Expr]) -> Result<Expr> {
        match map {
            IndexMap::Const(c) => i32::try_from(*c)
                .map(|c| lit_i32(i64::from(c)))
                .map_err(|_| self.malformed("a mapped layout's constant leaves i32")),
            IndexMap::Dim(k) => idx
                .get(*k as usize)
                .cloned()
                .ok_or_else(|| self.malformed("a mapped layout uses a missing index")),
            IndexMap::Binary(op, a, b) => {
                let op = match op {
                    MapOp::Add => BinaryOp::Add,
                    MapOp::Sub => BinaryOp::Sub,
                    MapOp::Mul => BinaryOp::Mul,
                    MapOp::FloorDiv => BinaryOp::FloorDiv,
                    MapOp::FloorMod => BinaryOp::FloorMod,
                    MapOp::BitAnd => BinaryOp::BitAnd,
                    MapOp::BitOr => BinaryOp::BitOr,
                    MapOp::BitXor => BinaryOp::BitXor,
                    MapOp::Shl => BinaryOp::Shl,
                    MapOp::Shr => BinaryOp::Shr,
                    MapOp::Min => BinaryOp::Min,
                    MapOp::Max => BinaryOp::Max,
                };
                let a = self.map_expr(a, idx)?;
                let b = self.map_expr(b, idx)?;
                self.bin(op, a, b)
            }
        }
    }

    /// Where element `linear` (row-major) of a shared buffer is stored:
    /// there, or through its swizzled or mapped layout.
    pub(super) fn element(&self, layout: Option<&Arranged>, linear: Expr) -> Result<Expr> {
        match layout {
            None => Ok(linear),
            Some(Arranged::Swizzled(layout)) => {
                let row = self.bin(BinaryOp::FloorDiv, linear.clone(), lit_i32(layout.cols))?;
                let col = self.bin(BinaryOp::FloorMod, linear, lit_i32(layout.cols))?;
                self.swizzled_index(layout, &row, &col)
            }
            Some(Arranged::Mapped(m)) => {
                // The row-major digits, last dimension fastest.
                let mut idx = vec![lit_i32(0); m.dims.len()];
                let mut rest = linear;
                for (d, &n) in m.dims.iter().enumerate().rev() {
                    if d == 0 {
                        idx[d] = rest;
                        break;
                    }
                    idx[d] = self.bin(BinaryOp::FloorMod, rest.clone(), lit_i32(n))?;
                    rest = self.bin(BinaryOp::FloorDiv, rest, lit_i32(n))?;
                }
                self.map_index(m, &idx)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(map: &str, dims: &[i64]) -> Option<Mapped> {
        Mapped::new(&map.parse().expect("map"), dims)
    }

    #[test]
    fn vectors_follow_the_runs_the_map_keeps() {
        // Padded rows by hand: 8-element runs stay together.
        assert_eq!(mapped("i0 * 40 + i1", &[4, 32]).map(|m| m.vector), Some(8));
        // Chunks of 8 permuted by XOR: runs of 8 (and 16 is broken).
        let xor = mapped("i0 * 64 + (i1 // 8 ^ i0 % 8) * 8 + i1 % 8", &[8, 64]).expect("a layout");
        assert_eq!((xor.vector, xor.span), (8, 512));
        // Transposed and reversed columns move element by element.
        assert_eq!(mapped("i1 * 8 + i0", &[8, 8]).map(|m| m.vector), Some(1));
        assert_eq!(
            mapped("i0 * 8 + 7 - i1", &[8, 8]).map(|m| m.vector),
            Some(1)
        );
        // Pairs swapped: runs of 2 are not consecutive.
        assert_eq!(
            mapped("i0 * 8 + (i1 ^ 1)", &[8, 8]).map(|m| m.vector),
            Some(1)
        );
        // Odd row length: nothing but single elements start on a multiple.
        assert_eq!(mapped("i0 * 6 + i1", &[2, 3]).map(|m| m.vector), Some(1));
    }

    #[test]
    fn refuses_maps_the_lowering_cannot_address() {
        assert!(mapped("i0 + i1", &[4, 4]).is_none());
        assert!(mapped("i0 * 2147483647 + i1", &[4, 4]).is_none());
        assert!(mapped("i0 * 65536 * 65536 // 4294967296 * 4 + i1", &[4, 4]).is_none());
        assert_eq!(mapped("i0 * 4 + i1", &[4, 4]).map(|m| m.span), Some(16));
    }
}
