//! What the plugin reads back from the code objects it builds: each
//! kernel's arguments (so that a launch knows which arguments are buffer
//! handles and how wide each scalar is) and its register counts (for the
//! compile result's metadata).
//!
//! The source is the `NT_AMDGPU_METADATA` note (owner `AMDGPU`, type 32):
//! a MessagePack map whose `amdhsa.kernels` array holds one map per kernel
//! with `.name`, `.vgpr_count`, `.agpr_count`, `.sgpr_count` and `.args`
//! (each argument's `.value_kind`, `.size`, `.offset`). `tilec inspect`
//! reads the same note with more detail.

use object::Endianness;
use object::elf::FileHeader64;
use object::read::elf::{FileHeader, SectionHeader};
use rmpv::Value;

/// Note type of the code object metadata (`NT_AMDGPU_METADATA`).
pub const NT_AMDGPU_METADATA: u32 = 32;

/// One kernel argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// `global_buffer`, `by_value`, or a hidden argument's kind.
    pub value_kind: String,
    pub size: u64,
    pub offset: u64,
}

/// One kernel's metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<Arg>,
    pub vgprs: Option<u64>,
    pub agprs: Option<u64>,
    pub sgprs: Option<u64>,
    /// `.group_segment_fixed_size`: static LDS bytes.
    pub lds_bytes: Option<u64>,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub scratch_bytes: Option<u64>,
    pub wavefront_size: Option<u64>,
}

impl KernelInfo {
    /// The arguments a caller passes (hidden arguments excluded).
    pub fn explicit_args(&self) -> impl Iterator<Item = &Arg> {
        self.args
            .iter()
            .filter(|a| !a.value_kind.starts_with("hidden_"))
    }
}

/// Why a code object could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodeObjectError {
    #[error("not an ELF code object: {0}")]
    Elf(String),
    #[error("the code object has no AMDGPU metadata note")]
    NoMetadata,
    #[error("malformed AMDGPU metadata: {0}")]
    Metadata(String),
}

/// The kernels of a code object.
pub fn kernels(data: &[u8]) -> Result<Vec<KernelInfo>, CodeObjectError> {
    let elf = |e: object::Error| CodeObjectError::Elf(e.to_string());
    let header = FileHeader64::<Endianness>::parse(data).map_err(elf)?;
    let endian = header.endian().map_err(elf)?;
    let sections = header.sections(endian, data).map_err(elf)?;
    for section in sections.iter() {
        let Some(mut notes) = section.notes(endian, data).map_err(elf)? else {
            continue;
        };
        while let Some(note) = notes.next().map_err(elf)? {
            if note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA {
                return parse(note.desc());
            }
        }
    }
    Err(CodeObjectError::NoMetadata)
}

fn get<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    map.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn parse(mut desc: &[u8]) -> Result<Vec<KernelInfo>, CodeObjectError> {
    let root = rmpv::decode::read_value(&mut desc)
        .map_err(|e| CodeObjectError::Metadata(e.to_string()))?;
    let kernels = get(&root, "amdhsa.kernels")
        .and_then(Value::as_array)
        .ok_or_else(|| CodeObjectError::Metadata("no `amdhsa.kernels` array".into()))?;
    kernels
        .iter()
        .map(|k| {
            let name = get(k, ".name")
                .and_then(Value::as_str)
                .ok_or_else(|| CodeObjectError::Metadata("a kernel without `.name`".into()))?
                .to_string();
            let args = get(k, ".args")
                .and_then(Value::as_array)
                .map(|args| {
                    args.iter()
                        .map(|a| Arg {
                            value_kind: get(a, ".value_kind")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            size: get(a, ".size").and_then(Value::as_u64).unwrap_or(0),
                            offset: get(a, ".offset").and_then(Value::as_u64).unwrap_or(0),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(KernelInfo {
                name,
                args,
                vgprs: get(k, ".vgpr_count").and_then(Value::as_u64),
                agprs: get(k, ".agpr_count").and_then(Value::as_u64),
                sgprs: get(k, ".sgpr_count").and_then(Value::as_u64),
                lds_bytes: get(k, ".group_segment_fixed_size").and_then(Value::as_u64),
                scratch_bytes: get(k, ".private_segment_fixed_size").and_then(Value::as_u64),
                wavefront_size: get(k, ".wavefront_size").and_then(Value::as_u64),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_refused() {
        assert!(matches!(kernels(b"nope"), Err(CodeObjectError::Elf(_))));
        assert!(matches!(parse(&[0xc1]), Err(CodeObjectError::Metadata(_))));
    }
}
