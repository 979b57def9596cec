//! `tilec-inspect`: reading GPU code objects. One reader serves three
//! users, so that they agree on what a code object holds: `tilec inspect`
//! shows it, the conformance suite's compile level (L1) checks it against
//! the target's limits, and the rocm backend takes the kernel arguments of
//! a launch and the resources of its compile result from it.
//!
//! [`inspect`] takes the bytes of a file and answers a [`CodeObject`]:
//! - an **AMDGPU code object** ([`amdgpu`]): an ELF for `EM_AMDGPU` (224)
//!   with the HSA OS ABI: the target (processor and the xnack/sramecc
//!   settings from `e_flags`), the code object version (from the ABI
//!   version byte), each kernel's descriptor (`<name>.kd`) and its entry
//!   of the `NT_AMDGPU_METADATA` note (registers, LDS, scratch, wavefront
//!   size, spills), and an occupancy estimate ([`amdgpu::occupancy`]);
//! - an **NVIDIA cubin** ([`cubin`]): an ELF for `EM_CUDA` (190): the
//!   SM version, and per kernel (`.text.<name>`) its registers, static
//!   shared memory and local memory (stack frame) from the `.nv.info`
//!   attributes;
//! - anything else is [`InspectError::NotGpu`].
//!
//! Everything is plain data (serialisable, for `tilec inspect --json`);
//! nothing here prints. Malformed input of a recognised kind is an error,
//! never a panic.

pub mod amdgpu;
pub mod cubin;

use object::Endianness;
use object::read::elf::{ElfFile64, FileHeader};
use serde::Serialize;

pub use amdgpu::{AmdgpuObject, OccupancyFacts};
pub use cubin::Cubin;

/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;
/// `EM_CUDA`.
pub const EM_CUDA: u16 = 190;

/// Why a file could not be inspected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    /// The file is not a GPU code object tilec knows.
    #[error("not a GPU code object: {0}")]
    NotGpu(String),
    /// It is one, but something in it is broken.
    #[error("malformed {kind}: {detail}")]
    Malformed { kind: &'static str, detail: String },
}

/// What a file holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CodeObject {
    Amdgpu(AmdgpuObject),
    Cubin(Cubin),
}

impl CodeObject {
    /// The target the code object is for (`gfx942`, `sm_80`), when known.
    pub fn target(&self) -> Option<String> {
        match self {
            CodeObject::Amdgpu(a) => a.target.processor.clone(),
            CodeObject::Cubin(c) => c.sm.map(|sm| format!("sm_{sm}")),
        }
    }
}

/// The machine an ELF file is for, or why it is not a GPU code object.
fn elf_machine(data: &[u8]) -> Result<u16, InspectError> {
    if !data.starts_with(b"\x7fELF") {
        return Err(InspectError::NotGpu("it is not an ELF file".into()));
    }
    if data.get(4) != Some(&2) {
        return Err(InspectError::NotGpu(
            "it is a 32-bit ELF file (GPU code objects are 64-bit)".into(),
        ));
    }
    let header = object::elf::FileHeader64::<Endianness>::parse(data)
        .map_err(|e| InspectError::NotGpu(format!("its ELF header is unreadable ({e})")))?;
    let endian = header
        .endian()
        .map_err(|e| InspectError::NotGpu(format!("its ELF header is unreadable ({e})")))?;
    Ok(header.e_machine.get(endian))
}

/// A name for an ELF machine number in messages.
fn machine_name(machine: u16) -> String {
    let known = match machine {
        3 => "x86",
        40 => "ARM",
        62 => "x86-64",
        183 => "AArch64",
        243 => "RISC-V",
        _ => "",
    };
    if known.is_empty() {
        format!("machine {machine}")
    } else {
        format!("{known} (machine {machine})")
    }
}

/// Reads a code object. `facts` gives the occupancy estimate of AMDGPU
/// kernels the target's register file and LDS size; without it no
/// estimate is made.
pub fn inspect(data: &[u8], facts: Option<&OccupancyFacts>) -> Result<CodeObject, InspectError> {
    match elf_machine(data)? {
        EM_AMDGPU => {
            let elf = parse_elf(data, "AMDGPU code object")?;
            amdgpu::read(&elf, data, facts).map(CodeObject::Amdgpu)
        }
        EM_CUDA => {
            let elf = parse_elf(data, "cubin")?;
            cubin::read(&elf, data).map(CodeObject::Cubin)
        }
        other => Err(InspectError::NotGpu(format!(
            "it is an ELF file for {}",
            machine_name(other)
        ))),
    }
}

/// The ELF processor (`gfx942`) of an AMDGPU code object without reading
/// the rest, so that a caller can look up the target's description first.
pub fn amdgpu_processor(data: &[u8]) -> Option<String> {
    if elf_machine(data).ok()? != EM_AMDGPU {
        return None;
    }
    let elf = parse_elf(data, "AMDGPU code object").ok()?;
    let flags = elf.elf_header().e_flags.get(elf.endian());
    amdgpu::processor_name(flags & amdgpu::EF_AMDGPU_MACH).map(str::to_string)
}

fn parse_elf<'d>(
    data: &'d [u8],
    kind: &'static str,
) -> Result<ElfFile64<'d, Endianness>, InspectError> {
    ElfFile64::<Endianness>::parse(data).map_err(|e| InspectError::Malformed {
        kind,
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_are_not_gpu_code_objects() {
        let e = inspect(b"hello", None).err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("not a GPU code object: it is not an ELF file".to_string())
        );
        let mut elf32 = b"\x7fELF\x01\x01\x01".to_vec();
        elf32.resize(64, 0);
        assert!(matches!(
            inspect(&elf32, None),
            Err(InspectError::NotGpu(_))
        ));
        let mut short = b"\x7fELF\x02\x01\x01".to_vec();
        short.resize(20, 0);
        assert!(matches!(
            inspect(&short, None),
            Err(InspectError::NotGpu(_))
        ));
    }

    #[test]
    fn the_host_executable_is_named_by_its_machine() {
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let Ok(bytes) = std::fs::read(exe) else {
            return;
        };
        let e = inspect(&bytes, None).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|m| m.starts_with("not a GPU code object: it is an ELF file for")),
            "{e:?}"
        );
    }
}
