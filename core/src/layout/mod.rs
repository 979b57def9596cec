//! The layout algebra: index maps between logical coordinates and physical
//! positions, used for buffers in memory and for the way a group of threads
//! holds a tile in registers.
//!
//! # The model
//!
//! A [`Layout`] is a pair of congruent hierarchical integer tuples, a
//! *shape* and a *stride*, written `shape:stride`, for example
//! `(4,8):(1,4)` or `((4,8),(2,2,2)):((32,1),(16,8,128))`. Nesting groups
//! modes that together form one logical dimension; it changes how
//! coordinates are counted, never the map itself.
//!
//! - The **domain** is `0..size`, where `size` is the product of all leaves
//!   of the shape. A linear index is split into one digit per leaf,
//!   **first leaf fastest** (colexicographic order, the same order Fortran
//!   and column-major matrices use). So `(4,8):(1,4)` sends index `i` to
//!   digits `(i % 4, i / 4)`.
//! - The **value** at an index is `sum(digit_k * stride_k)` over the leaves.
//!   `(4,8):(1,4)` is the identity on `0..32`, and `(4,8):(8,1)` is the
//!   row-major layout of a 4×8 matrix (coordinate `(r, c)` at `8r + c`).
//! - A coordinate with one entry per top-level mode (see
//!   [`Layout::at_coords`]) gives each mode its own linear index, counted the
//!   same way inside the mode.
//!
//! Every layout is a plain function from integers to integers, so the usual
//! questions have exhaustive answers for the sizes a kernel uses (up to
//! about 2^22 points): is it injective, is it a bijection of `0..size`,
//! where do two indices collide. The algebra keeps affine results wherever
//! one exists, because an affine map is what a backend turns into cheap
//! address arithmetic:
//!
//! - [`Layout::compose`] builds `outer ∘ inner` as a new `shape:stride`
//!   layout with the inner layout's hierarchy. It needs the usual
//!   divisibility between the inner strides and the outer shape and reports
//!   [`LayoutError::NotComposable`] when it does not hold.
//! - [`Layout::inverse`] inverts a bijection of `0..size` (a permutation of
//!   a compact layout), again as a layout.
//! - [`Layout::reshape`] reads the same map through another shape;
//!   [`Layout::append`] and [`Layout::concat`] add modes.
//! - [`Swizzle`] is the XOR map that shared-memory layouts use to spread
//!   rows over banks (`Swizzle<B,M,S>`, with the 32/64/128-byte modes of
//!   [`SwizzleMode`]), and [`SwizzledLayout`] applies one after a layout.
//!   Padded layouts are ordinary layouts with wider strides
//!   ([`Layout::padded_row_major`]).
//! - [`IndexMap`] is any other arrangement a kernel's author asks for, as
//!   an integer expression of the element's coordinates (`map.rs`).
//!
//! # Fragments
//!
//! A [`FragmentLayout`] says which thread holds which element of a tile in
//! registers. Its map is a rank-2 layout whose first top-level mode counts
//! threads (lanes of a warp, threads of a warpgroup) and whose second counts
//! the thread's local slots (register elements, in the vendor's low-to-high
//! order). The value is the element's linear index in the tile, again first
//! dimension fastest: for an M×N tile, element `(row, col)` has index
//! `row + M * col`. An element may be held by several threads when the
//! fragment declares that replication; otherwise every element is held
//! exactly once ([`FragmentLayout::check`]).
//! [`FragmentLayout::repeat`] tiles a fragment across more threads (warps)
//! or more slots.
//!
//! # Text form
//!
//! Every object prints in a compact form and parses back to an equal value:
//!
//! ```text
//! layout    ((4,8),(2,2,2)):((32,1),(16,8,128))
//! swizzle   sw<3,4,3>
//! swizzled  sw<3,4,3> o (8,64):(64,1)
//! fragment  [16,16] ((4,8),(2,2,2)):((32,1),(16,8,128))
//!           [16,16] rep 2 (...)        (each element held by two threads)
//! ```
//!
//! Target descriptions store layouts in this text form inside their JSON
//! (the serde implementations of these types read and write the string).

mod affine;
mod fragment;
mod map;
mod swizzle;
mod text;
mod tuple;

pub use affine::{EXHAUSTIVE_LIMIT, Layout};
pub use fragment::{FragmentLayout, RepeatAlong};
pub use map::{IndexMap, MapOp};
pub use swizzle::{Swizzle, SwizzleMode, SwizzledLayout, panel_offset};
pub use tuple::IntTuple;

/// Why a layout operation could not be carried out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Shape and stride do not have the same nesting.
    #[error("shape {shape} and stride {stride} do not have the same nesting")]
    NotCongruent { shape: String, stride: String },
    /// A shape entry is zero or negative.
    #[error("shape entries must be at least 1, found {value}")]
    BadExtent { value: i64 },
    /// A tuple with no entries.
    #[error("empty tuples are not allowed in a layout")]
    EmptyTuple,
    /// Sizes or offsets exceed the 64-bit range.
    #[error("layout arithmetic overflows 64 bits")]
    Overflow,
    /// An index or coordinate lies outside the domain.
    #[error("index {index} is outside the domain 0..{size}")]
    OutOfDomain { index: u64, size: u64 },
    /// A coordinate has the wrong number of entries.
    #[error("coordinate has {found} entries, the layout has {expected} modes")]
    RankMismatch { expected: usize, found: usize },
    /// A mode index past the layout's rank.
    #[error("mode {mode} does not exist in a layout of rank {rank}")]
    NoSuchMode { mode: usize, rank: usize },
    /// Two layouts must have the same size.
    #[error("sizes differ: {left} vs {right}")]
    SizeMismatch { left: u64, right: u64 },
    /// `outer ∘ inner` has no affine form.
    #[error("cannot compose: {reason}")]
    NotComposable { reason: String },
    /// The layout is not a bijection of `0..size`.
    #[error("layout is not a bijection of 0..{size}: {reason}")]
    NotBijective { size: u64, reason: String },
    /// An exhaustive check would visit too many points.
    #[error("domain of {size} points is larger than the exhaustive-check limit {limit}")]
    TooLarge { size: u64, limit: u64 },
    /// A swizzle's parameters are out of range.
    #[error("invalid swizzle <{bits},{base},{shift}>: {reason}")]
    BadSwizzle {
        bits: u32,
        base: u32,
        shift: i32,
        reason: String,
    },
    /// Swizzles act on non-negative offsets.
    #[error("swizzles act on non-negative offsets, found {offset}")]
    NegativeOffset { offset: i64 },
    /// An element size a swizzle mode cannot be expressed in.
    #[error("a swizzle mode cannot be expressed for {bytes}-byte elements")]
    BadElementSize { bytes: u32 },
    /// A fragment's map must have two top-level modes (thread, slot).
    #[error("a fragment map needs two top-level modes (thread, slot), found {rank}")]
    FragmentRank { rank: usize },
    /// A fragment's tile has no dimensions or a zero extent.
    #[error("fragment tile {tile:?} must have at least one dimension, all nonzero")]
    BadTile { tile: Vec<u64> },
    /// Declared replication must be at least 1.
    #[error("fragment replication must be at least 1")]
    BadReplication,
    /// A fragment slot maps outside its tile.
    #[error("thread {thread} slot {slot} maps to index {index}, outside the {tile} tile")]
    FragmentOutOfTile {
        thread: u64,
        slot: u64,
        index: i64,
        tile: String,
    },
    /// An element held by more threads than declared.
    #[error(
        "element {element:?} is held by (thread {first_thread}, slot {first_slot}) and (thread {second_thread}, slot {second_slot}); {declared} holder(s) declared"
    )]
    FragmentOverlap {
        element: Vec<u64>,
        first_thread: u64,
        first_slot: u64,
        second_thread: u64,
        second_slot: u64,
        declared: u64,
    },
    /// An element held by fewer threads than declared (or by none).
    #[error("element {element:?} is held {found} time(s); {declared} declared")]
    FragmentUncovered {
        element: Vec<u64>,
        found: u64,
        declared: u64,
    },
    /// A repeat along a dimension the tile does not have.
    #[error("tile has {rank} dimensions, cannot repeat along dimension {dim}")]
    NoSuchDim { dim: usize, rank: usize },
    /// Text that is not a layout.
    #[error("at byte {position}: {message}")]
    Parse { position: usize, message: String },
}
