//! XOR swizzles for shared memory and layouts followed by a swizzle.
//!
//! `Swizzle<B,M,S>` (bits, base, shift) takes the `B` bits of an offset
//! that start at bit `M + S` and XORs them into the `B` bits that start at
//! bit `M`:
//!
//! ```text
//! offset' = offset ^ ((offset >> S) & (((1 << B) - 1) << M))      (S > 0)
//! ```
//!
//! With `|S| >= B` the bits read and the bits written do not overlap, so
//! the read bits pass through unchanged and applying the swizzle twice
//! gives the offset back: the swizzle is its own inverse and permutes every
//! aligned block of `2^(M + B + S)` offsets (its *span*). A negative `S`
//! reads below and writes above (`offset ^ ((offset << -S) & mask)` with the
//! mask at bit `M - S`).
//!
//! Applied to byte addresses, the 32/64/128-byte modes of bulk tensor copies
//! and matrix descriptors are `Swizzle<1,4,3>`, `Swizzle<2,4,3>` and
//! `Swizzle<3,4,3>`: the 16-byte chunk index (bits 4 and up) is XORed with
//! the row inside the pattern (bits 7 and up), and the pattern repeats every
//! 256, 512 or 1024 bytes.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Layout, LayoutError};

/// `Swizzle<bits, base, shift>`; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: i32,
}

impl Swizzle {
    /// A swizzle; `|shift| >= bits` and the touched bits must lie below bit
    /// 62.
    pub fn new(bits: u32, base: u32, shift: i32) -> Result<Swizzle, LayoutError> {
        let bad = |reason: &str| LayoutError::BadSwizzle {
            bits,
            base,
            shift,
            reason: reason.to_string(),
        };
        if shift.unsigned_abs() < bits {
            return Err(bad("the shift must be at least the number of bits"));
        }
        let top = u64::from(base) + u64::from(bits) + u64::from(shift.unsigned_abs());
        if top > 62 {
            return Err(bad("the swizzle touches bits above 62"));
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// The identity swizzle `<0,0,0>`.
    pub fn identity() -> Swizzle {
        Swizzle {
            bits: 0,
            base: 0,
            shift: 0,
        }
    }

    pub fn bits(&self) -> u32 {
        self.bits
    }

    pub fn base(&self) -> u32 {
        self.base
    }

    pub fn shift(&self) -> i32 {
        self.shift
    }

    /// The size of the aligned blocks the swizzle permutes.
    pub fn span(&self) -> u64 {
        1u64 << (self.base + self.bits + self.shift.unsigned_abs())
    }

    /// The swizzled offset; offsets must be non-negative.
    pub fn apply(&self, offset: i64) -> Result<i64, LayoutError> {
        if offset < 0 {
            return Err(LayoutError::NegativeOffset { offset });
        }
        Ok(self.apply_unsigned(offset as u64) as i64)
    }

    pub(crate) fn apply_unsigned(&self, offset: u64) -> u64 {
        let ones = (1u64 << self.bits) - 1;
        let magnitude = self.shift.unsigned_abs();
        if self.shift >= 0 {
            let read_mask = ones << (self.base + magnitude);
            offset ^ ((offset & read_mask) >> magnitude)
        } else {
            let read_mask = ones << self.base;
            offset ^ ((offset & read_mask) << magnitude)
        }
    }

    /// The inverse map, which is the swizzle itself.
    pub fn inverse(&self) -> Swizzle {
        *self
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// The swizzle modes of bulk tensor copies and matrix descriptors, named by
/// the width of the swizzled row in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SwizzleMode {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "32B")]
    B32,
    #[serde(rename = "64B")]
    B64,
    #[serde(rename = "128B")]
    B128,
}

impl SwizzleMode {
    /// The row width in bytes inside which 16-byte chunks are permuted (16
    /// for no swizzle).
    pub fn row_bytes(&self) -> u64 {
        match self {
            SwizzleMode::None => 16,
            SwizzleMode::B32 => 32,
            SwizzleMode::B64 => 64,
            SwizzleMode::B128 => 128,
        }
    }

    /// `B` of the mode's `Swizzle<B,4,3>` on byte addresses.
    fn bits(&self) -> u32 {
        match self {
            SwizzleMode::None => 0,
            SwizzleMode::B32 => 1,
            SwizzleMode::B64 => 2,
            SwizzleMode::B128 => 3,
        }
    }

    /// The bytes after which the pattern repeats: 256, 512 or 1024 (16 for
    /// no swizzle).
    pub fn pattern_bytes(&self) -> u64 {
        match self {
            SwizzleMode::None => 16,
            _ => 1u64 << (7 + self.bits()),
        }
    }

    /// The swizzle on byte addresses: `Swizzle<B,4,3>`, or the identity.
    pub fn byte_swizzle(&self) -> Swizzle {
        match self {
            SwizzleMode::None => Swizzle::identity(),
            _ => Swizzle {
                bits: self.bits(),
                base: 4,
                shift: 3,
            },
        }
    }

    /// The same swizzle on element offsets for elements of `element_bytes`
    /// bytes (a power of two up to 16): `Swizzle<B, 4 - log2(bytes), 3>`.
    pub fn element_swizzle(&self, element_bytes: u32) -> Result<Swizzle, LayoutError> {
        if !element_bytes.is_power_of_two() || element_bytes > 16 {
            return Err(LayoutError::BadElementSize {
                bytes: element_bytes,
            });
        }
        match self {
            SwizzleMode::None => Ok(Swizzle::identity()),
            _ => Swizzle::new(self.bits(), 4 - element_bytes.trailing_zeros(), 3),
        }
    }
}

/// A layout followed by a swizzle: `offset(i) = swizzle(layout(i))`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SwizzledLayout {
    pub swizzle: Swizzle,
    pub layout: Layout,
}

impl SwizzledLayout {
    pub fn new(swizzle: Swizzle, layout: Layout) -> SwizzledLayout {
        SwizzledLayout { swizzle, layout }
    }

    /// The swizzled offset at linear index `index`.
    pub fn at(&self, index: u64) -> Result<i64, LayoutError> {
        self.swizzle.apply(self.layout.at(index)?)
    }

    /// `self ∘ inner`: the swizzle stays outermost.
    pub fn compose(&self, inner: &Layout) -> Result<SwizzledLayout, LayoutError> {
        Ok(SwizzledLayout {
            swizzle: self.swizzle,
            layout: self.layout.compose(inner)?,
        })
    }

    /// Whether no two indices share an offset (checked exhaustively).
    pub fn is_injective(&self) -> Result<bool, LayoutError> {
        let mut values = Vec::new();
        for v in self.layout.values()? {
            values.push(self.swizzle.apply(v)?);
        }
        values.sort_unstable();
        Ok(values.windows(2).all(|w| w[0] != w[1]))
    }
}

impl fmt::Display for SwizzledLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {}", self.swizzle, self.layout)
    }
}

/// The element offset of `(row, col)` in the *panel layout* of a `rows ×
/// cols` buffer of `elem`-byte elements with `width`-byte panels (32, 64
/// or 128): panel `p` holds columns `p·P ..` (`P = width / elem`) as `rows`
/// rows of `width` bytes, panels one after another, and inside a panel the
/// 16-byte chunk `j` of row `r` is stored at chunk `j XOR ((r / (128 /
/// width)) mod (width / 16))`. On byte addresses starting at a multiple of
/// `8 · width` this is the 32/64/128-byte [`SwizzleMode`] of each panel;
/// the lowering stores swizzled shared buffers so. `None` when `elem` is
/// not 1, 2, 4 or 8 bytes or `width` not 32, 64 or 128.
pub fn panel_offset(rows: u64, elem: u64, width: u64, row: u64, col: u64) -> Option<u64> {
    if !matches!(elem, 1 | 2 | 4 | 8) || !matches!(width, 32 | 64 | 128) {
        return None;
    }
    let pc = width / elem;
    let t = 16 / elem;
    let chunk = (col % pc) / t;
    let key = (row / (128 / width)) % (width / 16);
    Some((col / pc) * rows * pc + row * pc + (chunk ^ key) * t + col % t)
}
