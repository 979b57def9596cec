//! Execution model, thread and register limits, memory spaces and vector
//! widths.

use serde::{Deserialize, Serialize};

use super::Provenance;

/// How the target runs a block of work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ExecutionModel {
    /// Threads run in lockstep groups of `width` lanes (a warp, wavefront or
    /// SIMD group): 32, 64 or 128.
    Simt { width: u32, provenance: Provenance },
    /// A core of named units that each take whole tiles (a matrix unit, a
    /// vector unit, copy engines), synchronised by flags between them.
    /// Every field after `units` is optional, so descriptions written
    /// before they existed still load.
    TileEngine {
        units: Vec<EngineUnit>,
        /// How many cores one launch spreads its blocks over.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cores: Option<u32>,
        /// The routes data takes between memory spaces, each owned by a unit.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<DataPath>,
        /// The tile shapes the matrix unit multiplies, per element types.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        matrix_tiles: Vec<MatrixTile>,
        /// Flags that order two units: how many ids each (source,
        /// destination) pair of units has, and which pairs exist.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        events: Option<EngineEvents>,
        provenance: Provenance,
    },
}

/// A data path of a tile engine: `unit` moves data from memory space `from`
/// to memory space `to` (for a matrix unit, `from` lists its operands),
/// optionally changing its layout (`nd`, `nz`, `zz`, `zn`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataPath {
    pub from: Vec<String>,
    pub to: String,
    /// The unit (pipe) that carries the path; an entry of `units`.
    pub unit: String,
    /// Layout conversions the path can make, `source->destination`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversions: Vec<String>,
}

/// One shape of a tile engine's matrix unit: `m`×`k` times `k`×`n` into an
/// `m`×`n` accumulator, for the listed element types (TileLang spellings).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixTile {
    pub a: String,
    pub b: String,
    pub accumulator: String,
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// The flags that order the units of one core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineEvents {
    /// Event ids per (source, destination) pair: `0 .. ids`.
    pub ids: u32,
    /// The ordered pairs a flag exists for, as `SOURCE_DESTINATION` with
    /// unit names (`MTE2_V`).
    pub pairs: Vec<String>,
}

/// One unit of a tile engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineUnit {
    pub name: String,
    pub role: UnitRole,
}

/// What a tile-engine unit does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitRole {
    Matrix,
    Vector,
    Scalar,
    Copy,
}

/// Limits on the threads of one block (workgroup, threadgroup).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadLimits {
    /// The most threads one block may have; `None` when not known.
    pub max_per_block: Option<u32>,
    pub provenance: Option<Provenance>,
}

/// Register budget, counted in 32-bit registers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterBudget {
    pub per_thread: Option<u32>,
    pub per_block: Option<u32>,
    /// Whether and how a kernel may move registers between warps at run
    /// time; `None` when not described.
    pub reallocation: Option<RegisterReallocation>,
    pub provenance: Option<Provenance>,
}

/// Run-time register reallocation between warps of a block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterReallocation {
    pub instruction: String,
    pub min_per_thread: u32,
    pub max_per_thread: u32,
    pub step: u32,
    /// Threads that must change their maximum together (NVIDIA: a
    /// warpgroup of four warps); `None` when any thread may.
    #[serde(default)]
    pub group_threads: Option<u32>,
    pub provenance: Provenance,
}

/// The role of a memory space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// Device memory visible to every block.
    Global,
    /// Memory shared by the threads of one block (shared memory, LDS,
    /// threadgroup memory).
    Shared,
    /// Per-thread memory.
    Local,
    /// A named on-core buffer of a tile engine.
    TileBuffer,
}

/// One memory space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpace {
    /// The name other parts of the description refer to (`shared`).
    pub name: String,
    pub kind: MemoryKind,
    /// Data layouts a tile buffer holds for the matrix unit (`nd`, `nz`,
    /// `zz`, `zn`); empty for plain row-major memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<String>,
    /// The most bytes one block may use; `None` when unknown or unbounded.
    pub capacity_bytes: Option<u64>,
    /// The bytes available without an explicit opt-in, when smaller than
    /// `capacity_bytes`.
    pub default_capacity_bytes: Option<u64>,
    /// Allocations are rounded up to a multiple of this.
    pub allocation_granularity_bytes: Option<u64>,
    /// Required alignment of a buffer's base address.
    pub alignment_bytes: Option<u64>,
    pub banks: Option<Banks>,
    pub provenance: Provenance,
}

/// The bank structure of a shared memory space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Banks {
    pub count: u32,
    pub width_bytes: u32,
    /// Wide accesses served in phases of consecutive lanes; conflicts exist
    /// only inside a phase.
    #[serde(default)]
    pub phases: Vec<BankPhase>,
    pub provenance: Provenance,
}

/// How accesses of one width are split into lane phases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BankPhase {
    pub access_bytes: u32,
    pub lanes_per_phase: u32,
}

/// The widest access one thread makes in one instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorWidths {
    pub global_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
    pub provenance: Option<Provenance>,
}

/// One product built on the architecture and its published peak rates,
/// so that a measurement can be reported as a fraction of the part's peak
/// (`tilec bench`). Rates differ between products of one architecture
/// (an H100 and an H200 share `sm_90a` but not their memory), so each part
/// is named by the device name its vendor's driver reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// The device name as the driver reports it (`NVIDIA H200`).
    pub device: String,
    /// Dense matrix-unit throughput by operand type (TileLang spelling,
    /// `float16`), in GFLOP/s.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub matrix_gflops: std::collections::BTreeMap<String, u64>,
    /// Off-chip memory bandwidth, GB/s (10^9 bytes per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gbps: Option<u64>,
    /// Streaming multiprocessors (AMD: compute units) of the part, what
    /// `multi_processor_count` reports; TileLang files read it at build
    /// time (`driver.get_num_sms()`) to size persistent grids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiprocessors: Option<u32>,
    pub provenance: Provenance,
}
