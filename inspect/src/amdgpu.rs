//! AMDGPU code objects (HSA): the target from `e_flags`, the code object
//! version, kernel descriptors and the metadata note.
//!
//! Facts used, all from LLVM's AMDGPU documentation and headers
//! (`AMDGPUUsage`, `BinaryFormat/ELF.h`, `Support/AMDHSAKernelDescriptor.h`):
//! - `e_flags & 0xff` is the processor (`EF_AMDGPU_MACH_*`: 0x3f gfx90a,
//!   0x40 gfx940, 0x4b gfx941, 0x4c gfx942, ...); for code object v4 and
//!   later, bits 8–9 are xnack and 10–11 sramecc (0 unsupported, 1 any,
//!   2 off, 3 on); v3 has one on/off bit each (0x100 xnack, 0x200
//!   sramecc).
//! - The ABI version byte (`e_ident[8]`) of the HSA OS ABI (64) is the
//!   code object version minus 2 (0 → v2, 1 → v3, 2 → v4, 3 → v5, 4 → v6).
//! - A kernel `k` has a 64-byte descriptor `k.kd`: LDS bytes (offset 0),
//!   scratch bytes (4), kernarg bytes (8), the entry offset (16, i64),
//!   `compute_pgm_rsrc3` (44), `rsrc1` (48), `rsrc2` (52) and the kernel
//!   code properties (56, u16). rsrc1 bits 0–5 are the granulated VGPR
//!   count and 6–9 the granulated SGPR count; rsrc2 bit 0 enables the
//!   private segment; on gfx90a-class targets rsrc3 bits 0–5 are
//!   `ACCUM_OFFSET` (AGPRs start at `4·(value+1)`); property bit 10 is
//!   wave32 and bit 11 a dynamic stack.
//! - The `NT_AMDGPU_METADATA` note (owner `AMDGPU`, type 32) is a
//!   MessagePack map: `amdhsa.version`, `amdhsa.target` and
//!   `amdhsa.kernels`, each kernel a map of `.name`, `.symbol`,
//!   `.sgpr_count`, `.vgpr_count` (on gfx90a-class targets ArchVGPRs and
//!   AGPRs together), `.agpr_count`, `.group_segment_fixed_size`,
//!   `.private_segment_fixed_size`, `.wavefront_size`,
//!   `.max_flat_workgroup_size`, `.kernarg_segment_size`,
//!   `.sgpr_spill_count`, `.vgpr_spill_count`, `.uses_dynamic_stack`
//!   and `.args`, one map per kernel argument in order with its
//!   `.value_kind` (`global_buffer`, `by_value`, `hidden_*` for what the
//!   runtime adds), `.size` and `.offset` in the kernarg segment.
//!
//! The occupancy estimate ([`occupancy`]) counts waves per SIMD allowed
//! by the vector registers (the register file per lane from the target
//! description, allocation in granules) and by LDS (a workgroup's LDS out
//! of the CU's), capped by the hardware's waves per SIMD. SGPRs and
//! barriers are not counted: on these targets they rarely bind.

use object::read::elf::ElfFile64;
use object::{Endianness, Object, ObjectSection, ObjectSymbol, SymbolKind};
use rmpv::Value;
use serde::Serialize;
use tilec_core::target::{MemoryKind, TargetDescription};

use super::InspectError;

/// Processor mask of `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0xff;
/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `NT_AMDGPU_METADATA`.
pub const NT_AMDGPU_METADATA: u32 = 32;

const KIND: &str = "AMDGPU code object";

/// Processors by `EF_AMDGPU_MACH` value (the GFX9 and later ones).
const PROCESSORS: &[(u32, &str)] = &[
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x040, "gfx940"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x04a, "gfx1151"),
    (0x04b, "gfx941"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
];

/// The processor name of an `EF_AMDGPU_MACH` value.
pub fn processor_name(mach: u32) -> Option<&'static str> {
    PROCESSORS
        .iter()
        .find(|(m, _)| *m == mach)
        .map(|(_, name)| *name)
}

/// A target feature setting in `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    Unsupported,
    Any,
    Off,
    On,
}

impl Feature {
    fn from_bits(bits: u32) -> Feature {
        match bits & 3 {
            0 => Feature::Unsupported,
            1 => Feature::Any,
            2 => Feature::Off,
            _ => Feature::On,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Feature::Unsupported => "unsupported",
            Feature::Any => "any",
            Feature::Off => "off",
            Feature::On => "on",
        }
    }
}

/// What `e_flags` and the metadata say about the target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AmdgpuTarget {
    /// `e_flags & 0xff`.
    pub mach: u32,
    /// `gfx942`, when the value is known.
    pub processor: Option<String>,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// `amdhsa.target` of the metadata (`amdgcn-amd-amdhsa--gfx942`).
    pub target_id: Option<String>,
}

/// A kernel descriptor (`<kernel>.kd`), decoded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub compute_pgm_rsrc3: u32,
    pub kernel_code_properties: u16,
    /// `GRANULATED_WORKITEM_VGPR_COUNT` (blocks minus one).
    pub granulated_vgpr_count: u32,
    /// `GRANULATED_WAVEFRONT_SGPR_COUNT`.
    pub granulated_sgpr_count: u32,
    /// `ENABLE_PRIVATE_SEGMENT` of rsrc2.
    pub private_segment: bool,
    /// The first AGPR, `4·(ACCUM_OFFSET+1)`, on gfx90a-class targets.
    pub accum_offset: Option<u32>,
    pub wavefront_size32: bool,
    pub uses_dynamic_stack: bool,
}

/// One kernel argument of the metadata note (`.args`).
///
/// A launcher needs these to build the kernarg segment: which arguments are
/// buffer addresses and which are passed by value, and how wide each is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelArg {
    /// `.value_kind`: `global_buffer`, `by_value`, or a hidden argument's
    /// kind (`hidden_block_count_x`, ...); empty when the entry has none.
    pub value_kind: String,
    /// `.size` in bytes (0 when missing).
    pub size: u64,
    /// `.offset` in the kernarg segment (0 when missing).
    pub offset: u64,
}

impl KernelArg {
    /// Whether the runtime, not the caller, supplies this argument.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// A kernel's entry of the metadata note.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelMetadata {
    pub sgpr_count: Option<u64>,
    pub vgpr_count: Option<u64>,
    pub agpr_count: Option<u64>,
    pub group_segment_fixed_size: Option<u64>,
    pub private_segment_fixed_size: Option<u64>,
    pub wavefront_size: Option<u64>,
    pub max_flat_workgroup_size: Option<u64>,
    pub kernarg_segment_size: Option<u64>,
    pub sgpr_spill_count: Option<u64>,
    pub vgpr_spill_count: Option<u64>,
    pub uses_dynamic_stack: Option<bool>,
    /// `.args`, in order (hidden arguments included).
    pub args: Vec<KernelArg>,
}

impl KernelMetadata {
    /// The arguments a caller passes (hidden arguments excluded).
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| !a.is_hidden())
    }
}

/// One kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AmdgpuKernel {
    pub name: String,
    /// The descriptor's symbol (`k.kd`).
    pub symbol: String,
    pub descriptor: Option<KernelDescriptor>,
    pub metadata: Option<KernelMetadata>,
    pub occupancy: Option<Occupancy>,
}

/// The resources a kernel uses, from the metadata note where it says, else
/// from the descriptor: a relocatable object or a code object of another
/// compiler may lack one of the two, and a check against a target's limits
/// should use whichever is there.
impl AmdgpuKernel {
    /// Static LDS bytes of a workgroup.
    pub fn lds_bytes(&self) -> Option<u64> {
        self.metadata
            .as_ref()
            .and_then(|m| m.group_segment_fixed_size)
            .or_else(|| {
                self.descriptor
                    .as_ref()
                    .map(|d| u64::from(d.group_segment_fixed_size))
            })
    }

    /// Scratch (private segment) bytes per work-item.
    pub fn scratch_bytes(&self) -> Option<u64> {
        self.metadata
            .as_ref()
            .and_then(|m| m.private_segment_fixed_size)
            .or_else(|| {
                self.descriptor
                    .as_ref()
                    .map(|d| u64::from(d.private_segment_fixed_size))
            })
    }

    /// Lanes of a wavefront.
    pub fn wavefront_size(&self) -> Option<u64> {
        self.metadata
            .as_ref()
            .and_then(|m| m.wavefront_size)
            .or_else(|| {
                self.descriptor
                    .as_ref()
                    .map(|d| if d.wavefront_size32 { 32 } else { 64 })
            })
    }
}

/// A whole code object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AmdgpuObject {
    pub target: AmdgpuTarget,
    /// `e_ident[EI_ABIVERSION]`.
    pub abi_version: u8,
    /// The code object version (2 to 6), from the ABI version.
    pub code_object_version: Option<u32>,
    /// `amdhsa.version` of the metadata.
    pub metadata_version: Option<Vec<u64>>,
    pub kernels: Vec<AmdgpuKernel>,
}

/// What an occupancy estimate needs to know about the target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OccupancyFacts {
    /// 32-bit vector registers per lane (ArchVGPRs and AGPRs together).
    pub vgprs_per_lane: u32,
    /// VGPRs are allocated in multiples of this.
    pub vgpr_granule: u32,
    pub max_waves_per_simd: u32,
    pub simds_per_cu: u32,
    /// LDS bytes of one CU.
    pub lds_per_cu: u64,
}

/// Per-processor facts the target description does not carry: VGPR
/// allocation granule, waves per SIMD and SIMDs per CU (LLVM's
/// `AMDGPUBaseInfo`: `getVGPRAllocGranule`, `getMaxWavesPerEU`,
/// `getEUsPerCU`), for the gfx90a-class (CDNA2/CDNA3) processors.
fn processor_facts(processor: &str) -> Option<(u32, u32, u32)> {
    match processor {
        "gfx90a" | "gfx940" | "gfx941" | "gfx942" => Some((8, 8, 4)),
        _ => None,
    }
}

impl OccupancyFacts {
    /// The facts for `processor` with the register file and LDS size of
    /// `description`; `Err` says what is missing.
    pub fn new(processor: &str, description: &TargetDescription) -> Result<OccupancyFacts, String> {
        let (granule, waves, simds) = processor_facts(processor)
            .ok_or_else(|| format!("no occupancy facts for {processor}"))?;
        let vgprs = description.registers.per_thread.ok_or_else(|| {
            format!(
                "the description of {} gives no register file size",
                description.name
            )
        })?;
        let lds = description
            .memory_of_kind(MemoryKind::Shared)
            .and_then(|m| m.capacity_bytes)
            .ok_or_else(|| format!("the description of {} gives no LDS size", description.name))?;
        Ok(OccupancyFacts {
            vgprs_per_lane: vgprs,
            vgpr_granule: granule,
            max_waves_per_simd: waves,
            simds_per_cu: simds,
            lds_per_cu: lds,
        })
    }
}

/// What limits the waves per SIMD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Hardware,
    Vgprs,
    Lds,
}

/// An occupancy estimate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Occupancy {
    pub waves_per_simd: u32,
    pub limited_by: Limit,
    /// VGPRs allocated per lane (rounded up to the granule).
    pub vgprs_allocated: u32,
    pub by_vgprs: u32,
    pub by_lds: u32,
    pub max_waves_per_simd: u32,
}

/// The occupancy of a kernel with `vgprs` vector registers per lane, `lds`
/// bytes of LDS and `workgroup` work-items of `wave` lanes.
pub fn occupancy(
    facts: &OccupancyFacts,
    vgprs: u64,
    lds: u64,
    workgroup: u64,
    wave: u64,
) -> Occupancy {
    let max = facts.max_waves_per_simd;
    let granule = u64::from(facts.vgpr_granule.max(1));
    let allocated = vgprs.max(1).div_ceil(granule) * granule;
    let by_vgprs = (u64::from(facts.vgprs_per_lane) / allocated).min(u64::from(max)) as u32;
    let waves_per_group = workgroup.max(1).div_ceil(wave.max(1));
    // No LDS: no limit from it.
    let by_lds = match facts.lds_per_cu.checked_div(lds) {
        None => max,
        Some(0) => 0,
        Some(groups) => {
            let waves = groups * waves_per_group / u64::from(facts.simds_per_cu.max(1));
            waves.clamp(1, u64::from(max)) as u32
        }
    };
    let waves = by_vgprs.min(by_lds).min(max);
    let limited_by = if waves == max {
        Limit::Hardware
    } else if by_vgprs <= by_lds {
        Limit::Vgprs
    } else {
        Limit::Lds
    };
    Occupancy {
        waves_per_simd: waves,
        limited_by,
        vgprs_allocated: allocated as u32,
        by_vgprs,
        by_lds,
        max_waves_per_simd: max,
    }
}

fn malformed(detail: impl Into<String>) -> InspectError {
    InspectError::Malformed {
        kind: KIND,
        detail: detail.into(),
    }
}

/// Reads an AMDGPU code object.
pub fn read(
    elf: &ElfFile64<'_, Endianness>,
    data: &[u8],
    facts: Option<&OccupancyFacts>,
) -> Result<AmdgpuObject, InspectError> {
    let endian = elf.endian();
    let header = elf.elf_header();
    let flags = header.e_flags.get(endian);
    let os_abi = header.e_ident.os_abi;
    let abi_version = header.e_ident.abi_version;
    if os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(InspectError::NotGpu(format!(
            "an AMDGPU ELF file with OS ABI {os_abi} (tilec reads HSA code objects, OS ABI {ELFOSABI_AMDGPU_HSA})"
        )));
    }
    let code_object_version = (abi_version <= 4).then(|| u32::from(abi_version) + 2);
    let (xnack, sramecc) = match code_object_version {
        Some(3) => (
            if flags & 0x100 != 0 {
                Feature::On
            } else {
                Feature::Off
            },
            if flags & 0x200 != 0 {
                Feature::On
            } else {
                Feature::Off
            },
        ),
        Some(2) => (Feature::Unsupported, Feature::Unsupported),
        _ => (
            Feature::from_bits(flags >> 8),
            Feature::from_bits(flags >> 10),
        ),
    };
    let mach = flags & EF_AMDGPU_MACH;
    let processor = processor_name(mach).map(str::to_string);
    let note = metadata_note(elf, data)?;
    let root = match note {
        Some(mut desc) => Some(
            rmpv::decode::read_value(&mut desc)
                .map_err(|e| malformed(format!("the metadata note is not MessagePack: {e}")))?,
        ),
        None => None,
    };
    let target_id = root
        .as_ref()
        .and_then(|r| get(r, "amdhsa.target"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let metadata_version = root
        .as_ref()
        .and_then(|r| get(r, "amdhsa.version"))
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_u64).collect());
    let note_kernels: Vec<&Value> = root
        .as_ref()
        .and_then(|r| get(r, "amdhsa.kernels"))
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();

    // Kernels: every `.kd` symbol, then note entries without one.
    let mut kernels: Vec<AmdgpuKernel> = Vec::new();
    for symbol in elf.symbols() {
        let Ok(name) = symbol.name() else { continue };
        let Some(kernel) = name.strip_suffix(".kd") else {
            continue;
        };
        if symbol.kind() != SymbolKind::Data || kernels.iter().any(|k| k.symbol == name) {
            continue;
        }
        let descriptor =
            descriptor_bytes(elf, &symbol)?.map(|b| decode_descriptor(&b, processor.as_deref()));
        kernels.push(AmdgpuKernel {
            name: kernel.to_string(),
            symbol: name.to_string(),
            descriptor,
            metadata: None,
            occupancy: None,
        });
    }
    for entry in &note_kernels {
        let name = get(entry, ".name")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed("a metadata kernel without `.name`"))?;
        let symbol = get(entry, ".symbol")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{name}.kd"));
        let metadata = kernel_metadata(entry);
        match kernels.iter_mut().find(|k| k.symbol == symbol) {
            Some(k) => {
                k.name = name.to_string();
                k.metadata = Some(metadata);
            }
            None => kernels.push(AmdgpuKernel {
                name: name.to_string(),
                symbol,
                descriptor: None,
                metadata: Some(metadata),
                occupancy: None,
            }),
        }
    }
    if let Some(facts) = facts {
        for k in &mut kernels {
            let Some(m) = &k.metadata else { continue };
            let vgprs = m.vgpr_count.unwrap_or(0);
            let lds = k.lds_bytes().unwrap_or(0);
            let workgroup = m.max_flat_workgroup_size.unwrap_or(1024);
            let wave = m.wavefront_size.unwrap_or(64);
            k.occupancy = Some(occupancy(facts, vgprs, lds, workgroup, wave));
        }
    }
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(AmdgpuObject {
        target: AmdgpuTarget {
            mach,
            processor,
            xnack,
            sramecc,
            target_id,
        },
        abi_version,
        code_object_version,
        metadata_version,
        kernels,
    })
}

/// The description of the metadata note, if there is one.
fn metadata_note<'d>(
    elf: &ElfFile64<'d, Endianness>,
    data: &'d [u8],
) -> Result<Option<&'d [u8]>, InspectError> {
    use object::read::elf::SectionHeader as _;
    let endian = elf.endian();
    for section in elf.elf_section_table().iter() {
        let notes = section
            .notes(endian, data)
            .map_err(|e| malformed(format!("a note section is unreadable: {e}")))?;
        let Some(mut notes) = notes else { continue };
        while let Some(note) = notes
            .next()
            .map_err(|e| malformed(format!("a note is unreadable: {e}")))?
        {
            if note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA {
                return Ok(Some(note.desc()));
            }
        }
    }
    Ok(None)
}

/// The 64 bytes of a descriptor symbol.
fn descriptor_bytes(
    elf: &ElfFile64<'_, Endianness>,
    symbol: &object::read::elf::ElfSymbol64<'_, '_, Endianness>,
) -> Result<Option<Vec<u8>>, InspectError> {
    let Some(index) = symbol.section_index() else {
        return Ok(None);
    };
    let section = elf
        .section_by_index(index)
        .map_err(|e| malformed(format!("`{}`: {e}", symbol.name().unwrap_or("?"))))?;
    let Ok(bytes) = section.data() else {
        return Ok(None);
    };
    let start = symbol.address().checked_sub(section.address());
    let range = start.and_then(|s| {
        let s = usize::try_from(s).ok()?;
        Some(s..s.checked_add(64)?)
    });
    match range.and_then(|r| bytes.get(r)) {
        Some(b) => Ok(Some(b.to_vec())),
        None => Err(malformed(format!(
            "the kernel descriptor `{}` lies outside its section",
            symbol.name().unwrap_or("?")
        ))),
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

/// Decodes a 64-byte descriptor (little-endian, as every AMDGPU ELF).
pub fn decode_descriptor(b: &[u8], processor: Option<&str>) -> KernelDescriptor {
    let mut entry = [0u8; 8];
    if let Some(s) = b.get(16..24) {
        entry.copy_from_slice(s);
    }
    let rsrc1 = u32_at(b, 48);
    let rsrc2 = u32_at(b, 52);
    let rsrc3 = u32_at(b, 44);
    let props = u32_at(b, 56) as u16;
    let gfx90a_class = processor.is_some_and(|p| processor_facts(p).is_some());
    KernelDescriptor {
        group_segment_fixed_size: u32_at(b, 0),
        private_segment_fixed_size: u32_at(b, 4),
        kernarg_size: u32_at(b, 8),
        kernel_code_entry_byte_offset: i64::from_le_bytes(entry),
        compute_pgm_rsrc1: rsrc1,
        compute_pgm_rsrc2: rsrc2,
        compute_pgm_rsrc3: rsrc3,
        kernel_code_properties: props,
        granulated_vgpr_count: rsrc1 & 0x3f,
        granulated_sgpr_count: (rsrc1 >> 6) & 0xf,
        private_segment: rsrc2 & 1 != 0,
        accum_offset: gfx90a_class.then(|| ((rsrc3 & 0x3f) + 1) * 4),
        wavefront_size32: props & (1 << 10) != 0,
        uses_dynamic_stack: props & (1 << 11) != 0,
    }
}

fn get<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    map.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn kernel_metadata(k: &Value) -> KernelMetadata {
    let n = |key: &str| get(k, key).and_then(Value::as_u64);
    KernelMetadata {
        sgpr_count: n(".sgpr_count"),
        vgpr_count: n(".vgpr_count"),
        agpr_count: n(".agpr_count"),
        group_segment_fixed_size: n(".group_segment_fixed_size"),
        private_segment_fixed_size: n(".private_segment_fixed_size"),
        wavefront_size: n(".wavefront_size"),
        max_flat_workgroup_size: n(".max_flat_workgroup_size"),
        kernarg_segment_size: n(".kernarg_segment_size"),
        sgpr_spill_count: n(".sgpr_spill_count"),
        vgpr_spill_count: n(".vgpr_spill_count"),
        uses_dynamic_stack: get(k, ".uses_dynamic_stack").and_then(Value::as_bool),
        args: get(k, ".args")
            .and_then(Value::as_array)
            .map(|args| args.iter().map(kernel_arg).collect())
            .unwrap_or_default(),
    }
}

fn kernel_arg(a: &Value) -> KernelArg {
    let n = |key: &str| get(a, key).and_then(Value::as_u64).unwrap_or(0);
    KernelArg {
        value_kind: get(a, ".value_kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        size: n(".size"),
        offset: n(".offset"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> OccupancyFacts {
        OccupancyFacts {
            vgprs_per_lane: 512,
            vgpr_granule: 8,
            max_waves_per_simd: 8,
            simds_per_cu: 4,
            lds_per_cu: 65536,
        }
    }

    #[test]
    fn occupancy_follows_registers_and_lds() {
        // Few registers, no LDS: the hardware's 8 waves.
        let o = occupancy(&facts(), 24, 0, 256, 64);
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limit::Hardware));
        // 128 VGPRs: 512 / 128 = 4.
        let o = occupancy(&facts(), 121, 0, 256, 64);
        assert_eq!((o.vgprs_allocated, o.waves_per_simd), (128, 4));
        assert_eq!(o.limited_by, Limit::Vgprs);
        // 32 KiB of LDS per 256-thread workgroup: 2 groups of 4 waves per
        // CU, 2 waves per SIMD.
        let o = occupancy(&facts(), 24, 32768, 256, 64);
        assert_eq!(
            (o.by_lds, o.waves_per_simd, o.limited_by),
            (2, 2, Limit::Lds)
        );
        // More LDS than the CU has: nothing runs.
        assert_eq!(occupancy(&facts(), 24, 70000, 64, 64).waves_per_simd, 0);
    }

    #[test]
    fn descriptors_decode() {
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(&2048u32.to_le_bytes());
        b[44..48].copy_from_slice(&3u32.to_le_bytes());
        b[48..52].copy_from_slice(&(0x2u32 | (0x1 << 6)).to_le_bytes());
        b[52..56].copy_from_slice(&1u32.to_le_bytes());
        let d = decode_descriptor(&b, Some("gfx942"));
        assert_eq!(d.group_segment_fixed_size, 2048);
        assert_eq!((d.granulated_vgpr_count, d.granulated_sgpr_count), (2, 1));
        assert_eq!(d.accum_offset, Some(16));
        assert!(d.private_segment);
        assert_eq!(decode_descriptor(&b, Some("gfx1100")).accum_offset, None);
        // A short slice reads as zeros rather than panicking.
        assert_eq!(decode_descriptor(&b[..10], None).compute_pgm_rsrc1, 0);
    }

    #[test]
    fn processors_are_named() {
        assert_eq!(processor_name(0x4c), Some("gfx942"));
        assert_eq!(processor_name(0x3f), Some("gfx90a"));
        assert_eq!(processor_name(0x01), None);
    }
}
