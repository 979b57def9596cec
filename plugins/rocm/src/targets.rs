//! The plugin's targets: AMD gfx90a (CDNA2, MI200) and gfx942 (CDNA3,
//! MI300), both wave64.
//!
//! gfx942 is the core's shipped description (`core/targets/gfx942.json`,
//! with its sources), completed with two facts it leaves unknown, each
//! with its source:
//! - **threads per block**: at most 1024 work-items per workgroup (LLVM's
//!   AMDGPU backend, `getMaxFlatWorkGroupSize`);
//! - **registers**: 512 32-bit vector registers per lane, ArchVGPRs and
//!   AccVGPRs together, at most 256 of each (LLVM's AMDGPU backend,
//!   `getTotalNumVGPRs` for targets with gfx90a instructions, citing the
//!   gfx90a ISA §3.6.4).
//!
//! gfx90a is derived from it; it changes only facts it names a source for:
//! - the **MFMA mnemonics** of the same two atoms are
//!   `v_mfma_f32_32x32x8f16`, `v_mfma_f32_16x16x16f16` and the `bf16_1k`
//!   forms (hardware-facts §2.1, the AMD matrix instruction calculator run
//!   with `-a CDNA2`); the fragment layouts are the same (same source);
//! - the summary: CDNA2 has no fp8 MFMA and no `v_mfma_*_f8` variants that
//!   CDNA3 adds; the shared description claims neither, so nothing else
//!   changes. LDS is 64 KiB per workgroup on both (hardware-facts §2.3).

use serde_json::{Value, json};
use tilec_core::target::{self, TargetDescription};
use tilec_plugin_api::{ErrorCode, PluginError};

/// Every target, in the order `tilec plugins` lists them.
pub const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

/// The target a kernel compiles for when none is named.
pub const DEFAULT_TARGET: &str = "gfx942";

/// Work-items per workgroup.
pub const MAX_THREADS: u32 = 1024;

/// Vector registers per lane (ArchVGPRs and AccVGPRs together).
pub const VGPRS_PER_LANE: u32 = 512;

/// The description of `arch`.
pub fn describe(arch: &str) -> Result<TargetDescription, PluginError> {
    match arch {
        "gfx942" => derive("gfx942", arch, complete),
        "gfx90a" => derive("gfx942", arch, |v| {
            complete(v);
            v["summary"] = json!(
                "AMD CDNA2 (gfx90a, MI200): wave64, MFMA 32x32x8 and 16x16x16 f16/bf16 -> f32 (no fp8 MFMA), 64 KiB LDS per workgroup."
            );
            v["execution"]["provenance"] = json!({
                "status": "V",
                "checked": true,
                "sources": ["llvm19-amdgpu"],
                "note": "GFX9 targets, gfx90a included, run wave64 only"
            });
            if let Some(atoms) = v["matrix_atoms"].as_array_mut() {
                for atom in atoms.iter_mut() {
                    let (instruction, note) = match atom["name"].as_str() {
                        Some("mfma.32x32x8") => (
                            "v_mfma_f32_32x32x8{f16,bf16_1k}",
                            "gfx90a mnemonics v_mfma_f32_32x32x8f16 and v_mfma_f32_32x32x8bf16_1k; layouts as CDNA3",
                        ),
                        Some("mfma.16x16x16") => (
                            "v_mfma_f32_16x16x16{f16,bf16_1k}",
                            "gfx90a mnemonics v_mfma_f32_16x16x16f16 and v_mfma_f32_16x16x16bf16_1k; layouts as CDNA3",
                        ),
                        _ => continue,
                    };
                    atom["instruction"] = json!(instruction);
                    atom["provenance"] = json!({
                        "status": "V",
                        "checked": true,
                        "sources": ["amd-matrix-calculator-cdna2", "llvm19-amdgpu"],
                        "note": note
                    });
                    atom["layout_provenance"] = json!({
                        "status": "V",
                        "checked": true,
                        "sources": ["amd-matrix-calculator-cdna2", "ck-xdlops-gemm"],
                        "note": "the calculator gives CDNA2 the same A, B and D layouts as CDNA3"
                    });
                }
            }
            push_source(
                v,
                json!({
                    "id": "amd-matrix-calculator-cdna2",
                    "title": "ROCm amd_matrix_instruction_calculator @2ef9189, run with -a CDNA2 -i <op> -d",
                    "url": "https://github.com/ROCm/amd_matrix_instruction_calculator",
                    "note": "tilec shared/design/hardware-facts.md §2.1"
                }),
            );
        }),
        _ => Err(PluginError::new(
            ErrorCode::UnknownTarget,
            format!(
                "the rocm backend has no target `{arch}` (it serves: {})",
                TARGETS.join(", ")
            ),
        )),
    }
}

/// Fills the facts the shipped description leaves unknown.
fn complete(v: &mut Value) {
    v["threads_per_block"] = json!({
        "max_per_block": MAX_THREADS,
        "provenance": {
            "status": "V",
            "checked": false,
            "sources": ["llvm-amdgpu-baseinfo"],
            "note": "getMaxFlatWorkGroupSize: 1024 work-items"
        }
    });
    v["registers"] = json!({
        "per_thread": VGPRS_PER_LANE,
        "per_block": null,
        "reallocation": null,
        "provenance": {
            "status": "V",
            "checked": false,
            "sources": ["llvm-amdgpu-baseinfo"],
            "note": "a unified file of 512 vector registers per lane, ArchVGPRs and AccVGPRs together (at most 256 of each), allocated in granules of 8; 8 waves per SIMD at most"
        }
    });
    if let Some(unknowns) = v["unknowns"].as_array_mut() {
        unknowns.retain(|u| {
            !matches!(
                u["field"].as_str(),
                Some("threads_per_block.max_per_block" | "registers")
            )
        });
    }
    push_source(
        v,
        json!({
            "id": "llvm-amdgpu-baseinfo",
            "title": "LLVM AMDGPU backend, Utils/AMDGPUBaseInfo.cpp (getMaxFlatWorkGroupSize, getMaxWavesPerEU, getTotalNumVGPRs)",
            "url": "https://github.com/llvm/llvm-project/blob/main/llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp",
            "note": "512 VGPRs in total on gfx90a-class targets per LLVM commit b761137 (citing the gfx90a ISA §3.6.4)"
        }),
    );
}

fn internal(e: impl std::fmt::Display) -> PluginError {
    PluginError::new(ErrorCode::Internal, format!("target description: {e}"))
}

/// `base` with `name` and `arch` set to `arch` and `edit` applied, read back
/// through the validating reader.
fn derive(
    base: &str,
    arch: &str,
    edit: impl FnOnce(&mut Value),
) -> Result<TargetDescription, PluginError> {
    let text = target::builtin(base)
        .map_err(internal)?
        .to_json()
        .map_err(internal)?;
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
            assert_eq!(t.simt_width(), Some(64));
            assert_eq!(t.threads_per_block.max_per_block, Some(1024));
            assert_eq!(t.registers.per_thread, Some(512));
            let lds = t
                .memory_of_kind(MemoryKind::Shared)
                .and_then(|m| m.capacity_bytes);
            assert_eq!(lds, Some(65536));
        }
        assert_eq!(
            describe("gfx1100").err().map(|e| e.code),
            Some(ErrorCode::UnknownTarget)
        );
    }

    #[test]
    fn gfx90a_names_its_own_mnemonics() {
        let t = describe("gfx90a").unwrap_or_else(|e| panic!("{}", e.message));
        let names: Vec<&str> = t
            .matrix_atoms
            .iter()
            .map(|a| a.instruction.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "v_mfma_f32_32x32x8{f16,bf16_1k}",
                "v_mfma_f32_16x16x16{f16,bf16_1k}"
            ]
        );
    }
}
