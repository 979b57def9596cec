//! The targets this backend serves, as [`TargetDescription`]s.
//!
//! A target description is what tilec's passes may assume about the
//! hardware: how threads execute, the block size limit, the memory spaces
//! and their capacities, the dtypes it computes with. Record in `sources`
//! where each fact comes from (a programming guide, a header of the vendor
//! toolkit) so that a reviewer can check it.
//!
//! To add a target: add its name to [`TARGETS`], a function building its
//! description, and a line in [`describe`].

use tilec_plugin_api::{ErrorCode, ExecutionModel, MemorySpace, PluginError, TargetDescription};

/// The one target of the template: a made-up SIMT machine whose "code" is
/// a listing of the Tile IR.
pub const LISTING: &str = "listing";

/// Every target name, in the order `tilec plugins` shows them.
pub const TARGETS: &[&str] = &[LISTING];

/// The description of `arch`, or `UnknownTarget`.
pub fn describe(arch: &str) -> Result<TargetDescription, PluginError> {
    match arch {
        LISTING => Ok(listing()),
        other => Err(PluginError::new(
            ErrorCode::UnknownTarget,
            format!(
                "target `{other}` is not served by this backend (targets: {})",
                TARGETS.join(", ")
            ),
        )),
    }
}

const KIB: u64 = 1024;
const GIB: u64 = 1024 * 1024 * 1024;

/// Made-up but plausible limits, close to a mid-range GPU.
fn listing() -> TargetDescription {
    TargetDescription {
        arch: LISTING.to_string(),
        execution: ExecutionModel::Simt { width: 32 },
        max_threads_per_block: 1024,
        memory: vec![
            MemorySpace {
                name: "global".to_string(),
                capacity_bytes: 16 * GIB,
                alignment_bytes: 256,
            },
            MemorySpace {
                name: "shared".to_string(),
                capacity_bytes: 96 * KIB,
                alignment_bytes: 16,
            },
            MemorySpace {
                name: "registers".to_string(),
                capacity_bytes: 256 * KIB,
                alignment_bytes: 4,
            },
        ],
        // No float8: the template shows how a kernel using a dtype the
        // target lacks is refused at the line that uses it.
        dtypes: [
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "bfloat16", "float32", "float64",
        ]
        .iter()
        .map(|d| d.to_string())
        .collect(),
        profiles: Vec::new(),
        sources: vec!["template".to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_is_simt_32_with_shared_memory() {
        let t = describe(LISTING).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(t.execution, ExecutionModel::Simt { width: 32 });
        assert!(t.memory.iter().any(|m| m.name == "shared"));
        assert_eq!(t.sources, ["template"]);
    }

    #[test]
    fn unknown_targets_are_refused() {
        let e = describe("sm_90a").err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::UnknownTarget));
    }
}
