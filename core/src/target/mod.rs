//! Target descriptions: everything the core's passes may know about a
//! piece of hardware, as data.
//!
//! Passes never ask which vendor they compile for; they read a
//! [`TargetDescription`]: how threads execute ([`ExecutionModel`]), the
//! limits on threads and registers, the memory spaces with their capacity,
//! banks and alignment, the widest per-thread access, the matrix-unit atoms
//! with the fragment layouts of their operands (written in the
//! [`crate::layout`] algebra), the asynchronous copy mechanisms and the
//! barriers. Each group of facts carries a [`Provenance`]: the status tag
//! (`D` documented, `V` vendor code, `R` reverse-engineered, `M` measured),
//! whether it was checked mechanically, and the ids of its
//! [`Source`]s. A fact nobody has pinned down is `None` and listed in
//! [`TargetDescription::unknowns`] with the reason, never guessed.
//!
//! Descriptions are plain serde data. The JSON form is documented in
//! `docs/targets.md`; fragment layouts are strings in the layout algebra's
//! text form. The descriptions shipped with tilec live in `core/targets/`
//! and are embedded in the library ([`builtin`], [`builtin_names`]).
//! [`TargetDescription::validate`] checks a description, including that
//! every fragment layout gives each element of its tile to exactly one
//! (thread, slot) pair; loading a builtin always validates it.

mod matrix;
mod provenance;
mod resources;
mod sync;
mod validate;

pub use matrix::{
    AtomLowering, AtomShape, AtomTypes, ElementType, Issue, IssueGranularity, Major, MatrixAtom,
    MatrixLoad, MatrixStore, NFamily, Operand, OperandRole, OperandSource, SharedDescriptor,
};
pub use provenance::{Provenance, Source, Status, Unknown};
pub use resources::{
    BankPhase, Banks, DataPath, EngineEvents, EngineUnit, ExecutionModel, MatrixTile, MemoryKind,
    MemorySpace, Part, RegisterBudget, RegisterReallocation, ThreadLimits, UnitRole, VectorWidths,
};
pub use sync::{
    AsyncCopy, Barrier, BlockBarrier, BulkTensorCopy, NamedBarriers, PerThreadCopy, PhasedBarrier,
    TransactionCounter,
};
pub use validate::TargetError;

use serde::{Deserialize, Serialize};

/// The version of the description format this library reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A complete description of one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDescription {
    /// Must equal [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The name users select the target by (`sm_90a`).
    pub name: String,
    /// The architecture the facts describe, as its vendor names it.
    pub arch: String,
    /// The vendor, as data for people and plugins; passes never read it.
    pub vendor: String,
    /// One sentence on what the description covers.
    pub summary: String,
    pub execution: ExecutionModel,
    pub threads_per_block: ThreadLimits,
    pub registers: RegisterBudget,
    pub memory_spaces: Vec<MemorySpace>,
    pub vector_widths: VectorWidths,
    pub matrix_atoms: Vec<MatrixAtom>,
    #[serde(default)]
    pub matrix_loads: Vec<MatrixLoad>,
    /// Warp-wide matrix stores (`stmatrix`), if the target has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matrix_stores: Vec<MatrixStore>,
    #[serde(default)]
    pub async_copies: Vec<AsyncCopy>,
    pub barriers: Vec<Barrier>,
    /// Element types the target computes with (TileLang spellings:
    /// `float16`, `int8`, ...).
    #[serde(default)]
    pub dtypes: Vec<String>,
    /// Conformance capabilities the target claims (`gemm.f16`,
    /// `atomic_add.f32`, ...; `docs/conformance.md`). A conformance test
    /// that needs an unclaimed capability is `NotSupported`; refusing a
    /// claimed one is a failure.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Products built on the architecture, with their peak rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    pub sources: Vec<Source>,
    /// Facts deliberately left unset, with the reason.
    #[serde(default)]
    pub unknowns: Vec<Unknown>,
}

impl TargetDescription {
    /// Reads a description from JSON and validates it.
    pub fn from_json(text: &str) -> Result<TargetDescription, TargetError> {
        let description: TargetDescription =
            serde_json::from_str(text).map_err(|error| TargetError::Json {
                line: error.line(),
                column: error.column(),
                message: error.to_string(),
            })?;
        description.validate()?;
        Ok(description)
    }

    /// The description as pretty-printed JSON.
    pub fn to_json(&self) -> Result<String, TargetError> {
        serde_json::to_string_pretty(self).map_err(|error| TargetError::Json {
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })
    }

    /// The SIMT width, if the target is a SIMT machine.
    pub fn simt_width(&self) -> Option<u32> {
        match &self.execution {
            ExecutionModel::Simt { width, .. } => Some(*width),
            ExecutionModel::TileEngine { .. } => None,
        }
    }

    /// The memory space with this name.
    pub fn memory_space(&self, name: &str) -> Option<&MemorySpace> {
        self.memory_spaces.iter().find(|space| space.name == name)
    }

    /// The first memory space of this kind.
    pub fn memory_of_kind(&self, kind: MemoryKind) -> Option<&MemorySpace> {
        self.memory_spaces.iter().find(|space| space.kind == kind)
    }

    /// The matrix atom with this name.
    pub fn matrix_atom(&self, name: &str) -> Option<&MatrixAtom> {
        self.matrix_atoms.iter().find(|atom| atom.name == name)
    }

    /// The matrix load (`ldmatrix`) with this name.
    pub fn matrix_load(&self, name: &str) -> Option<&MatrixLoad> {
        self.matrix_loads.iter().find(|load| load.name == name)
    }

    /// The matrix store (`stmatrix`) with this name.
    pub fn matrix_store(&self, name: &str) -> Option<&MatrixStore> {
        self.matrix_stores.iter().find(|store| store.name == name)
    }

    /// The barrier with this name.
    pub fn barrier(&self, name: &str) -> Option<&Barrier> {
        self.barriers.iter().find(|barrier| barrier.name() == name)
    }

    /// The numbered barriers for parts of a block, if the target has them.
    pub fn named_barriers(&self) -> Option<&NamedBarriers> {
        self.barriers.iter().find_map(|b| match b {
            Barrier::Named(n) => Some(n),
            _ => None,
        })
    }

    /// The source with this id.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|source| source.id == id)
    }

    /// The multiprocessor count of the target's parts, when every part
    /// records one and they all agree (`None` for no parts, or parts that
    /// differ: then the architecture alone does not say).
    pub fn multiprocessor_count(&self) -> Option<u32> {
        let mut counts = self.parts.iter().map(|p| p.multiprocessors);
        let first = counts.next()??;
        counts.all(|c| c == Some(first)).then_some(first)
    }

    /// The part whose driver-reported device name is `device`.
    pub fn part(&self, device: &str) -> Option<&Part> {
        self.parts.iter().find(|p| p.device == device)
    }
}

/// The descriptions shipped with tilec, as (name, JSON text).
const BUILTINS: [(&str, &str); 4] = [
    ("sm_80", include_str!("../../targets/sm_80.json")),
    ("sm_90a", include_str!("../../targets/sm_90a.json")),
    ("gfx942", include_str!("../../targets/gfx942.json")),
    ("apple", include_str!("../../targets/apple.json")),
];

/// The names of the shipped descriptions.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, _)| *name).collect()
}

/// The raw JSON text of a shipped description.
pub fn builtin_json(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

/// A shipped description, loaded and validated.
pub fn builtin(name: &str) -> Result<TargetDescription, TargetError> {
    let text = builtin_json(name).ok_or_else(|| TargetError::UnknownBuiltin {
        name: name.to_string(),
        known: builtin_names().join(", "),
    })?;
    let description = TargetDescription::from_json(text)?;
    if description.name != name {
        return Err(TargetError::Inconsistent {
            target: description.name.clone(),
            at: "name".to_string(),
            reason: format!("the builtin file for `{name}` names another target"),
        });
    }
    Ok(description)
}
