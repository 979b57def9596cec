//! The plugin's targets: NVIDIA sm_80, sm_86, sm_89, sm_90 and sm_90a.
//!
//! sm_80 and sm_90a are the core's shipped descriptions
//! (`core/targets/*.json`, with their sources). The others are derived
//! from them, and each derivation changes only facts it names a source
//! for:
//! - **sm_86, sm_89** — sm_80's instruction set (mma.sync, cp.async,
//!   ldmatrix) with at most 99 KiB of shared memory per block (the CUDA
//!   programming guide's table of compute capabilities).
//! - **sm_90** — sm_90a without the architecture-specific `wgmma` atoms
//!   and register reallocation (`setmaxnreg`), which PTX accepts only for
//!   `sm_90a`.

use serde_json::{Value, json};
use tilec_core::target::{self, TargetDescription};
use tilec_plugin_api::{ErrorCode, PluginError};

/// Every target, in the order `tilec plugins` lists them.
pub const TARGETS: [&str; 5] = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"];

/// The target a kernel compiles for when none is named: sm_80 PTX runs on
/// every supported GPU through the driver's JIT.
pub const DEFAULT_TARGET: &str = "sm_80";

/// Shared memory per block of compute capabilities 8.6 and 8.9.
const SM86_SHARED_BYTES: u64 = 99 << 10;

/// The description of `arch`.
pub fn describe(arch: &str) -> Result<TargetDescription, PluginError> {
    match arch {
        "sm_80" | "sm_90a" => builtin(arch),
        "sm_86" | "sm_89" => derive("sm_80", arch, |v| {
            // sm_80's parts (A100s) are not built on these architectures.
            v["parts"] = json!([]);
            v["summary"] = json!(format!(
                "NVIDIA {} ({}): sm_80's mma.sync, ldmatrix and cp.async with 99 KiB of shared memory per block.",
                if arch == "sm_86" {
                    "Ampere GA10x"
                } else {
                    "Ada"
                },
                arch
            ));
            if let Some(spaces) = v["memory_spaces"].as_array_mut() {
                for space in spaces.iter_mut().filter(|s| s["kind"] == "shared") {
                    space["capacity_bytes"] = json!(SM86_SHARED_BYTES);
                    space["provenance"] = json!({
                        "status": "D",
                        "checked": false,
                        "sources": ["cuda-guide-compute-capabilities"],
                        "note": "maximum shared memory per block of compute capabilities 8.6 and 8.9 (opt-in above 48 KiB)"
                    });
                }
            }
            push_source(
                v,
                json!({
                    "id": "cuda-guide-compute-capabilities",
                    "title": "CUDA C++ Programming Guide, Technical Specifications per Compute Capability",
                    "url": "https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications"
                }),
            );
        }),
        "sm_90" => derive("sm_90a", arch, |v| {
            v["summary"] = json!(
                "NVIDIA Hopper without architecture-specific features (sm_90): sm_80's mma.sync, ldmatrix and cp.async plus TMA and mbarrier transaction counts; no wgmma."
            );
            if let Some(atoms) = v["matrix_atoms"].as_array_mut() {
                atoms.retain(|a| a["issue"]["granularity"] != "warpgroup");
            }
            // `setmaxnreg` is architecture-specific as well (PTX: sm_90a).
            v["registers"]["reallocation"] = Value::Null;
        }),
        _ => Err(PluginError::new(
            ErrorCode::UnknownTarget,
            format!(
                "the cuda backend has no target `{arch}` (it serves: {})",
                TARGETS.join(", ")
            ),
        )),
    }
}

/// The target name of a GPU of compute capability `major.minor`: the
/// newest target of this plugin the GPU runs natively.
pub fn arch_of_capability(major: i32, minor: i32) -> String {
    match (major, minor) {
        (9, 0) => "sm_90a".to_string(),
        _ => format!("sm_{major}{minor}"),
    }
}

fn internal(e: impl std::fmt::Display) -> PluginError {
    PluginError::new(ErrorCode::Internal, format!("target description: {e}"))
}

fn builtin(arch: &str) -> Result<TargetDescription, PluginError> {
    target::builtin(arch).map_err(internal)
}

/// `base` with `name` and `arch` set to `arch` and `edit` applied, read back
/// through the validating reader.
fn derive(
    base: &str,
    arch: &str,
    edit: impl FnOnce(&mut Value),
) -> Result<TargetDescription, PluginError> {
    let text = builtin(base)?.to_json().map_err(internal)?;
    let mut value: Value = serde_json::from_str(&text).map_err(internal)?;
    value["name"] = json!(arch);
    value["arch"] = json!(arch);
    edit(&mut value);
    TargetDescription::from_json(&value.to_string()).map_err(internal)
}

fn push_source(v: &mut Value, source: Value) {
    if let Some(sources) = v["sources"].as_array_mut() {
        sources.push(source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::target::MemoryKind;

    #[test]
    fn every_target_is_described_and_valid() {
        for arch in TARGETS {
            let t = describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message));
            assert_eq!(t.name, arch);
            assert_eq!(t.arch, arch);
        }
    }

    #[test]
    fn derived_targets_change_what_they_say() {
        let shared = |arch| {
            describe(arch).ok().and_then(|t| {
                t.memory_of_kind(MemoryKind::Shared)
                    .and_then(|m| m.capacity_bytes)
            })
        };
        assert_eq!(shared("sm_86"), Some(99 << 10));
        let parts = |arch| describe(arch).map(|t| t.parts.len()).unwrap_or(0);
        assert_eq!(parts("sm_86"), 0, "A100 figures on sm_86");
        assert!(parts("sm_90") > 0, "sm_90 keeps the Hopper parts");
        assert_eq!(shared("sm_89"), Some(99 << 10));
        assert!(shared("sm_80") > Some(99 << 10));
        let warpgroup =
            |arch| describe(arch).map(|t| t.matrix_atoms.iter().any(|a| a.issue.threads == 128));
        assert_eq!(warpgroup("sm_90").ok(), Some(false));
        assert_eq!(warpgroup("sm_90a").ok(), Some(true));
        assert!(describe("sm_70").is_err());
    }

    #[test]
    fn device_capabilities_name_targets() {
        assert_eq!(arch_of_capability(9, 0), "sm_90a");
        assert_eq!(arch_of_capability(8, 6), "sm_86");
    }
}
