//! NVIDIA cubins: kernels and their resources.
//!
//! A cubin is an ELF for `EM_CUDA` (190). What is read, and how sure it
//! is:
//! - **Kernels** are the sections `.text.<name>`; the kernel's symbol is
//!   the `STT_FUNC` symbol defined in that section.
//! - **Attributes** (`.nv.info`, per-kernel `.nv.info.<name>`) are records
//!   of a format byte (1 no value, 2 a byte, 3 a 16-bit value, 4 a 16-bit
//!   size and that many bytes), an attribute byte and the 16-bit value or
//!   size, little-endian, each record 4-byte aligned. In `.nv.info`,
//!   `EIATTR_REGCOUNT` (0x2f), `EIATTR_FRAME_SIZE` (0x11),
//!   `EIATTR_MIN_STACK_SIZE` (0x12) and `EIATTR_MAX_STACK_SIZE` (0x23)
//!   carry a symbol index and a 32-bit value. In `.nv.info.<name>`,
//!   `EIATTR_MAX_THREADS` (0x05, three 32-bit values) and
//!   `EIATTR_CBANK_PARAM_SIZE` (0x19, 16-bit). These codes come from
//!   public third-party cubin tools (no NVIDIA specification is published)
//!   and were checked here against `ptxas -v` on CUDA 13.
//! - **Registers** are `EIATTR_REGCOUNT`, else the top byte of the text
//!   section's `sh_info` (checked against `ptxas -v`; unofficial).
//! - **Shared memory** is the size of `.nv.shared.<name>` (static shared
//!   memory; dynamic shared memory is a launch parameter).
//! - **Local memory** is the stack frame, `EIATTR_FRAME_SIZE`.
//! - **SM version**: for ELF ABI version 8 and later (CUDA 13's `ptxas`
//!   writes 8) `e_flags` bits 8–15 hold it (0x6005004 for sm_80); older
//!   cubins hold it in bits 0–7 (`EF_CUDA_SM` in LLVM's `ELF.h`) and the
//!   virtual SM in bits 16–23. The newer layout is inferred from `ptxas`
//!   output, not from a specification.

use object::read::elf::{ElfFile64, SectionHeader as _};
use object::{Endianness, Object, ObjectSection, ObjectSymbol, SymbolKind};
use serde::Serialize;

use super::InspectError;

const KIND: &str = "cubin";

/// `EIATTR_*` codes used here.
pub const EIATTR_MAX_THREADS: u8 = 0x05;
pub const EIATTR_FRAME_SIZE: u8 = 0x11;
pub const EIATTR_MIN_STACK_SIZE: u8 = 0x12;
pub const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
pub const EIATTR_MAX_STACK_SIZE: u8 = 0x23;
pub const EIATTR_REGCOUNT: u8 = 0x2f;

/// One kernel of a cubin.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CubinKernel {
    pub name: String,
    pub registers: Option<u32>,
    /// Static shared memory in bytes.
    pub shared_bytes: u64,
    /// The per-thread stack frame (local memory) in bytes.
    pub local_bytes: Option<u32>,
    pub min_stack_bytes: Option<u32>,
    pub max_stack_bytes: Option<u32>,
    /// `.maxntid` / `__launch_bounds__`, when given.
    pub max_threads: Option<[u32; 3]>,
    /// Bytes of kernel parameters.
    pub param_bytes: Option<u32>,
}

/// A cubin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cubin {
    /// The SM version (80 for sm_80), from `e_flags`.
    pub sm: Option<u32>,
    pub e_flags: u32,
    pub abi_version: u8,
    pub kernels: Vec<CubinKernel>,
}

/// One `.nv.info` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<'d> {
    pub format: u8,
    pub attribute: u8,
    /// The 16-bit value (formats 1 to 3).
    pub value: u16,
    /// The payload (format 4).
    pub payload: &'d [u8],
}

/// The records of an attribute section.
pub fn records(mut data: &[u8]) -> Result<Vec<Record<'_>>, InspectError> {
    let mut out = Vec::new();
    while data.len() >= 4 {
        let (format, attribute) = (data[0], data[1]);
        let value = u16::from_le_bytes([data[2], data[3]]);
        data = &data[4..];
        let payload = if format == 4 {
            let n = usize::from(value);
            let p = data.get(..n).ok_or_else(|| InspectError::Malformed {
                kind: KIND,
                detail: format!("an attribute 0x{attribute:02x} runs past its section"),
            })?;
            data = &data[n..];
            p
        } else if (1..=3).contains(&format) {
            &[][..]
        } else {
            return Err(InspectError::Malformed {
                kind: KIND,
                detail: format!("an attribute record of unknown format {format}"),
            });
        };
        out.push(Record {
            format,
            attribute,
            value,
            payload,
        });
    }
    Ok(out)
}

fn word(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Reads a cubin.
pub fn read(elf: &ElfFile64<'_, Endianness>, _data: &[u8]) -> Result<Cubin, InspectError> {
    let endian = elf.endian();
    let header = elf.elf_header();
    let flags = header.e_flags.get(endian);
    let abi_version = header.e_ident.abi_version;
    let sm = if abi_version >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    };
    // Per-kernel attributes of `.nv.info`, by symbol index.
    let mut by_symbol: Vec<(u32, u8, u32)> = Vec::new();
    if let Some(section) = elf.section_by_name(".nv.info") {
        let data = section.data().map_err(|e| InspectError::Malformed {
            kind: KIND,
            detail: format!(".nv.info: {e}"),
        })?;
        for r in records(data)? {
            if r.format == 4
                && let (Some(sym), Some(v)) = (word(r.payload, 0), word(r.payload, 1))
            {
                by_symbol.push((sym, r.attribute, v));
            }
        }
    }
    let mut kernels = Vec::new();
    for section in elf.sections() {
        let Ok(name) = section.name() else { continue };
        let Some(kernel) = name.strip_prefix(".text.") else {
            continue;
        };
        let index = section.index();
        let symbol = elf
            .symbols()
            .find(|s| s.section_index() == Some(index) && s.kind() == SymbolKind::Text)
            .map(|s| s.index().0 as u32);
        let attr = |code: u8| {
            symbol.and_then(|s| {
                by_symbol
                    .iter()
                    .find(|(sym, a, _)| *sym == s && *a == code)
                    .map(|(_, _, v)| *v)
            })
        };
        let sh_info = section.elf_section_header().sh_info(endian);
        let registers = attr(EIATTR_REGCOUNT).or(Some(sh_info >> 24).filter(|r| *r != 0));
        let shared_bytes = elf
            .section_by_name(&format!(".nv.shared.{kernel}"))
            .map(|s| s.size())
            .unwrap_or(0);
        let mut k = CubinKernel {
            name: kernel.to_string(),
            registers,
            shared_bytes,
            local_bytes: attr(EIATTR_FRAME_SIZE),
            min_stack_bytes: attr(EIATTR_MIN_STACK_SIZE),
            max_stack_bytes: attr(EIATTR_MAX_STACK_SIZE),
            ..CubinKernel::default()
        };
        if let Some(info) = elf.section_by_name(&format!(".nv.info.{kernel}"))
            && let Ok(data) = info.data()
        {
            for r in records(data)? {
                match (r.format, r.attribute) {
                    (4, EIATTR_MAX_THREADS) => {
                        if let (Some(x), Some(y), Some(z)) =
                            (word(r.payload, 0), word(r.payload, 1), word(r.payload, 2))
                        {
                            k.max_threads = Some([x, y, z]);
                        }
                    }
                    (3, EIATTR_CBANK_PARAM_SIZE) => k.param_bytes = Some(u32::from(r.value)),
                    _ => {}
                }
            }
        }
        kernels.push(k);
    }
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Cubin {
        sm: (sm != 0).then_some(sm),
        e_flags: flags,
        abi_version,
        kernels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_by_format() {
        let data = [
            0x04, 0x2f, 0x08, 0x00, 9, 0, 0, 0, 10, 0, 0, 0, // REGCOUNT sym 9 = 10
            0x03, 0x19, 0x0c, 0x00, // CBANK_PARAM_SIZE = 12
            0x01, 0x35, 0x00, 0x00, // no value
        ];
        let r = records(&data).unwrap_or_default();
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].attribute, word(r[0].payload, 1)), (0x2f, Some(10)));
        assert_eq!((r[1].format, r[1].value), (3, 12));
        // A size past the end is malformed, not a panic.
        assert!(records(&[0x04, 0x2f, 0x40, 0x00, 1]).is_err());
        assert!(records(&[0x09, 0x2f, 0x00, 0x00]).is_err());
    }
}
