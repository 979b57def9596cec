//! Matrix-unit atoms (one matrix multiply-accumulate instruction and the
//! fragments its operands live in) and matrix load instructions.

use serde::{Deserialize, Serialize};

use super::Provenance;
use crate::layout::{FragmentLayout, Layout, LayoutError, RepeatAlong, SwizzleMode};

/// An element type as the matrix units see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementType {
    F16,
    Bf16,
    Tf32,
    F32,
    F64,
    I8,
    U8,
    I32,
    F8e4m3,
    F8e5m2,
}

impl ElementType {
    /// Size in bits.
    pub fn bits(&self) -> u32 {
        match self {
            ElementType::I8 | ElementType::U8 | ElementType::F8e4m3 | ElementType::F8e5m2 => 8,
            ElementType::F16 | ElementType::Bf16 => 16,
            ElementType::Tf32 | ElementType::F32 | ElementType::I32 => 32,
            ElementType::F64 => 64,
        }
    }
}

/// `m × n × k`: A is m×k, B is k×n, the accumulator m×n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// An instruction family whose N varies: it exists for every multiple of
/// `step` up to `max`. The described shape is the smallest member; for a
/// larger N the B and accumulator fragments (those that have one) are the
/// described fragment repeated `N / shape.n` times along N, in new slots
/// (slot `s + slots * j` holds copy `j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NFamily {
    pub step: u32,
    pub max: u32,
}

/// One supported combination of operand and accumulator types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomTypes {
    pub a: ElementType,
    pub b: ElementType,
    pub accumulator: ElementType,
}

/// The group of threads that issues one atom together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueGranularity {
    Warp,
    /// Several consecutive warps (four on sm_90a).
    Warpgroup,
    Wavefront,
    Simdgroup,
}

/// Who issues the atom: the granularity and the number of threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Issue {
    pub granularity: IssueGranularity,
    pub threads: u32,
}

/// Where an operand may come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperandSource {
    /// The issuing threads' registers, laid out by the operand's fragment.
    Registers,
    /// Shared memory, addressed through a matrix descriptor.
    SharedDescriptor,
}

/// Which dimension is contiguous in memory for a descriptor operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Major {
    K,
    Mn,
}

/// One operand of an atom (A, B or the accumulator).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operand {
    pub sources: Vec<OperandSource>,
    /// `(thread, slot) → element index` over the operand's tile (A: m×k,
    /// B: k×n, accumulator: m×n; index = row + rows·col), in the layout
    /// algebra's text form. Required when `sources` has `registers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<Layout>,
    /// How many (thread, slot) pairs hold each element; 1 when omitted.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub replication: u64,
    /// Consecutive slots packed into one 32-bit register (2 for 16-bit
    /// values, the lower slot in bits 15:0); `None` when not specified.
    #[serde(default)]
    pub elements_per_register: Option<u32>,
    /// For descriptor operands: the majors the instruction accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_majors: Vec<Major>,
}

fn one() -> u64 {
    1
}

fn is_one(value: &u64) -> bool {
    *value == 1
}

/// The shared-memory matrix descriptor an atom reads descriptor operands
/// through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedDescriptor {
    pub bits: u32,
    /// Swizzle modes the descriptor can express.
    pub swizzle_modes: Vec<SwizzleMode>,
    /// Alignment of the start address and the leading/stride byte offsets.
    pub address_alignment_bytes: u32,
    pub provenance: Provenance,
}

/// How passes should move operands in and out of the atom by default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AtomLowering {
    /// Threads build and read the fragments in registers directly, per the
    /// operand fragments.
    Fragments,
    /// The fragment lane map is not a documented contract: load and store
    /// operands through memory with the vendor's own instructions, and use
    /// the fragments only when a user opts in.
    ThroughMemory { load: String, store: String },
}

/// Which operand of an atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandRole {
    A,
    B,
    Accumulator,
}

impl OperandRole {
    pub fn name(&self) -> &'static str {
        match self {
            OperandRole::A => "a",
            OperandRole::B => "b",
            OperandRole::Accumulator => "accumulator",
        }
    }
}

/// One matrix multiply-accumulate instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixAtom {
    /// Unique name inside the description.
    pub name: String,
    /// The instruction as the vendor spells it (for people and plugins).
    pub instruction: String,
    pub shape: AtomShape,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_family: Option<NFamily>,
    pub types: Vec<AtomTypes>,
    pub issue: Issue,
    pub a: Operand,
    pub b: Operand,
    pub accumulator: Operand,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<SharedDescriptor>,
    pub lowering: AtomLowering,
    /// Provenance of the shape, types and operand sources.
    pub provenance: Provenance,
    /// Provenance of the fragment layouts.
    pub layout_provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl MatrixAtom {
    /// The operand's description.
    pub fn operand(&self, role: OperandRole) -> &Operand {
        match role {
            OperandRole::A => &self.a,
            OperandRole::B => &self.b,
            OperandRole::Accumulator => &self.accumulator,
        }
    }

    /// The operand's tile extents `[rows, cols]` for the described shape.
    pub fn tile(&self, role: OperandRole) -> [u64; 2] {
        self.tile_for_n(role, self.shape.n)
    }

    fn tile_for_n(&self, role: OperandRole, n: u32) -> [u64; 2] {
        let AtomShape { m, k, .. } = self.shape;
        match role {
            OperandRole::A => [u64::from(m), u64::from(k)],
            OperandRole::B => [u64::from(k), u64::from(n)],
            OperandRole::Accumulator => [u64::from(m), u64::from(n)],
        }
    }

    /// Every N the instruction supports, smallest first.
    pub fn supported_n(&self) -> Vec<u32> {
        match self.n_family {
            None => vec![self.shape.n],
            Some(NFamily { step, max }) if step > 0 => (1..=max / step)
                .map(|j| j * step)
                .filter(|&n| n >= self.shape.n && n % self.shape.n == 0)
                .collect(),
            Some(_) => Vec::new(),
        }
    }

    /// The operand's fragment for the described shape, or `None` when it
    /// has no register form.
    pub fn fragment(&self, role: OperandRole) -> Result<Option<FragmentLayout>, LayoutError> {
        let operand = self.operand(role);
        let Some(map) = &operand.fragment else {
            return Ok(None);
        };
        FragmentLayout::new(self.tile(role).to_vec(), map.clone(), operand.replication).map(Some)
    }

    /// The operand's fragment for a member of the N family (see
    /// [`NFamily`]); `n` must be a multiple of the described N.
    pub fn fragment_for_n(
        &self,
        role: OperandRole,
        n: u32,
    ) -> Result<Option<FragmentLayout>, LayoutError> {
        let Some(base) = self.fragment(role)? else {
            return Ok(None);
        };
        if role == OperandRole::A || n == self.shape.n {
            return Ok(Some(base));
        }
        if self.shape.n == 0 || !n.is_multiple_of(self.shape.n) {
            return Err(LayoutError::SizeMismatch {
                left: u64::from(n),
                right: u64::from(self.shape.n),
            });
        }
        base.repeat(1, u64::from(n / self.shape.n), RepeatAlong::Slots)
            .map(Some)
    }
}

/// A warp-wide store of small matrices from registers into shared memory
/// (`stmatrix`): the mirror of [`MatrixLoad`], with the same fields except
/// that `to` names the memory space written. Lane `rows·j + r` supplies
/// the address of row `r` of matrix `j`; each lane's `j`-th register holds
/// its elements of matrix `j` in the store's fragment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixStore {
    pub name: String,
    pub instruction: String,
    /// The memory space it writes.
    pub to: String,
    pub rows: u32,
    pub row_bytes: u32,
    pub element_bits: u32,
    pub counts: Vec<u32>,
    pub row_alignment_bytes: u32,
    pub fragment: Layout,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transposed_fragment: Option<Layout>,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl MatrixStore {
    /// The store seen as the load with the same matrices, lanes and
    /// fragments (reading `to`): what the fragment checks and the lowering
    /// share between the two.
    pub fn as_load(&self) -> MatrixLoad {
        MatrixLoad {
            name: self.name.clone(),
            instruction: self.instruction.clone(),
            from: self.to.clone(),
            rows: self.rows,
            row_bytes: self.row_bytes,
            element_bits: self.element_bits,
            counts: self.counts.clone(),
            row_alignment_bytes: self.row_alignment_bytes,
            fragment: self.fragment.clone(),
            transposed_fragment: self.transposed_fragment.clone(),
            provenance: self.provenance.clone(),
            notes: Vec::new(),
        }
    }
}

/// A warp-wide load of small matrices from shared memory into registers
/// (the matrices' fragments are fixed by the instruction).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixLoad {
    pub name: String,
    pub instruction: String,
    /// The memory space it reads.
    pub from: String,
    /// Rows of one matrix and the bytes of each row.
    pub rows: u32,
    pub row_bytes: u32,
    pub element_bits: u32,
    /// How many matrices one instruction may load (`.x1`, `.x2`, `.x4`).
    pub counts: Vec<u32>,
    /// Alignment of each row address.
    pub row_alignment_bytes: u32,
    /// `(lane, slot) → element index` of one matrix (`rows × row_bytes·8 /
    /// element_bits`, index = row + rows·col); matrix `j` goes to the
    /// lane's `j`-th register.
    pub fragment: Layout,
    /// The same for the transposing form, if the instruction has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transposed_fragment: Option<Layout>,
    pub provenance: Provenance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl MatrixLoad {
    /// The matrix's extents `[rows, columns]`.
    pub fn tile(&self) -> [u64; 2] {
        let columns = if self.element_bits == 0 {
            0
        } else {
            u64::from(self.row_bytes) * 8 / u64::from(self.element_bits)
        };
        [u64::from(self.rows), columns]
    }

    /// The fragment of one matrix, plain or transposed.
    pub fn fragment(&self, transposed: bool) -> Result<Option<FragmentLayout>, LayoutError> {
        let map = if transposed {
            match &self.transposed_fragment {
                Some(map) => map,
                None => return Ok(None),
            }
        } else {
            &self.fragment
        };
        FragmentLayout::new(self.tile().to_vec(), map.clone(), 1).map(Some)
    }
}
