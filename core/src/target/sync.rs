//! Asynchronous copies and barriers.

use serde::{Deserialize, Serialize};

use super::Provenance;
use crate::layout::SwizzleMode;

/// An asynchronous copy mechanism. A target without any has an empty list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AsyncCopy {
    /// Each thread starts small copies of its own; copies are grouped by
    /// commit and waited for group by group.
    PerThread(PerThreadCopy),
    /// One thread starts a copy of a whole tensor box described by a
    /// descriptor; completion is counted in bytes on a transaction barrier.
    BulkTensor(BulkTensorCopy),
}

impl AsyncCopy {
    pub fn name(&self) -> &str {
        match self {
            AsyncCopy::PerThread(copy) => &copy.name,
            AsyncCopy::BulkTensor(copy) => &copy.name,
        }
    }
}

/// Per-thread asynchronous copies with commit groups.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerThreadCopy {
    pub name: String,
    pub instruction: String,
    /// Source and destination memory spaces.
    pub from: String,
    pub to: String,
    /// The sizes one thread may copy at once.
    pub sizes_bytes: Vec<u32>,
    /// Whether copies are grouped by a commit and waited for by group
    /// count ("wait until at most N groups are pending").
    pub commit_groups: bool,
    pub commit_instruction: Option<String>,
    pub wait_instruction: Option<String>,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Bulk tensor copies (a tensor-map descriptor, a box per copy).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkTensorCopy {
    pub name: String,
    pub instruction: String,
    pub from: String,
    pub to: String,
    /// Tensor ranks the descriptor accepts.
    pub min_rank: u32,
    pub max_rank: u32,
    /// Largest box extent in each dimension.
    pub max_box_extent: u32,
    /// Largest element stride in each dimension.
    pub max_element_stride: Option<u32>,
    pub swizzle_modes: Vec<SwizzleMode>,
    /// With a swizzle, the box's inner row (in bytes) may not exceed the
    /// mode's row width.
    pub inner_row_within_swizzle: bool,
    /// The box's inner row must be a multiple of this many bytes.
    pub inner_box_multiple_bytes: Option<u32>,
    pub global_address_alignment_bytes: Option<u32>,
    pub global_stride_multiple_bytes: Option<u32>,
    /// Global strides must be below this many bytes.
    pub global_stride_limit_bytes: Option<u64>,
    pub descriptor_alignment_bytes: Option<u32>,
    /// Alignment of the shared-memory destination without / with a
    /// swizzle; `None` when not documented.
    pub shared_alignment_bytes: Option<u32>,
    pub swizzled_shared_alignment_bytes: Option<u32>,
    /// How out-of-bounds elements of a box are filled.
    pub out_of_bounds_fill: Vec<String>,
    /// The barrier (by name) whose transaction count the copy completes.
    pub completion_barrier: String,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A synchronisation primitive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Barrier {
    /// Every thread of the block waits for every other.
    Block(BlockBarrier),
    /// An object in memory with an arrival count and phases, waited on by
    /// phase parity; optionally with a byte (transaction) counter.
    Phased(PhasedBarrier),
    /// A fixed set of numbered hardware barriers, each completing when a
    /// given number of threads (a subset of the block) has arrived:
    /// synchronisation between warp roles.
    Named(NamedBarriers),
}

impl Barrier {
    pub fn name(&self) -> &str {
        match self {
            Barrier::Block(barrier) => &barrier.name,
            Barrier::Phased(barrier) => &barrier.name,
            Barrier::Named(barrier) => &barrier.name,
        }
    }
}

/// Numbered barriers for subsets of a block's threads (`bar.sync id,
/// count` / `bar.arrive id, count` on NVIDIA). A thread that *arrives*
/// counts towards the barrier's current round and goes on; a thread that
/// *syncs* arrives and waits for the round to complete. A completed round
/// orders every participant's earlier memory accesses before the
/// accesses the syncing threads make after it, and the barrier is at once
/// ready for the next round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedBarriers {
    pub name: String,
    /// The wait and the arrive-only forms.
    pub sync_instruction: String,
    pub arrive_instruction: String,
    /// Barriers numbered `0 .. ids`; the block barrier is number 0.
    pub ids: u32,
    /// Thread counts must be multiples of this (the warp size: a warp
    /// arrives as a whole).
    pub count_multiple: u32,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A block-wide barrier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockBarrier {
    pub name: String,
    pub instruction: String,
    pub provenance: Provenance,
}

/// A phased barrier object in memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhasedBarrier {
    pub name: String,
    pub instruction: String,
    /// The memory space the object lives in.
    pub space: String,
    pub object_bytes: u32,
    pub alignment_bytes: u32,
    /// The largest expected arrival count.
    pub max_arrival_count: u64,
    /// The byte counter, if the barrier has one.
    pub transactions: Option<TransactionCounter>,
    /// Whether a wait may suspend the thread (rather than only test).
    pub suspending_wait: bool,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The transaction (byte) counter of a phased barrier: a phase completes
/// when the arrivals are done and the counter is back to zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionCounter {
    /// The counter ranges over ±this value.
    pub max_pending_bytes: u64,
    pub provenance: Provenance,
}
