//! L1's checks of binary artifacts: the code objects a backend returns are
//! read with `tilec-inspect` (the reader behind `tilec inspect`) and their
//! resources checked against the target description.
//!
//! Every artifact of kind `Binary` that the reader recognises as a GPU code
//! object is inspected; anything else (an artifact it does not recognise,
//! and every text artifact: PTX, LLVM IR, source) is not, since the suite
//! cannot see resources in it. For an inspected code object:
//!
//! - **violations** (the test fails): a kernel of the compile result's
//!   metadata is missing from the code object; the code object is built
//!   for another processor than the target; an AMDGPU kernel runs in
//!   wavefronts of another width than the target's SIMT width; a kernel
//!   uses more LDS / shared memory than the target's shared capacity, more
//!   registers per thread than the target's budget, or a block needs more
//!   registers than the target's per-block budget (counted without
//!   allocation granules, so only a certain excess is reported). Limits the
//!   description does not give are not checked.
//! - **warnings** (`QualityWarning`: correct, but slower than it should
//!   be): an AMDGPU kernel with scratch (private segment) bytes or spilled
//!   VGPRs or SGPRs; a cubin kernel with local memory (a stack frame).
//!
//! A recognised code object that is malformed is a violation too: the
//! backend returned something no loader could read.

use tilec_core::target::{MemoryKind, TargetDescription};
use tilec_inspect::amdgpu::{AmdgpuKernel, AmdgpuObject};
use tilec_inspect::cubin::CubinKernel;
use tilec_inspect::{CodeObject, Cubin, InspectError};
use tilec_plugin_api::{Artifact, ArtifactKind, KernelMetadata};

/// What inspecting the artifacts of one compile result found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    /// How many artifacts were GPU code objects and were inspected.
    pub inspected: usize,
    /// Limits of the target that the code objects break.
    pub violations: Vec<String>,
    /// Resources that make kernels slow (scratch, spills, local memory).
    pub warnings: Vec<String>,
}

/// Inspects every binary artifact of a compile result against `target`.
pub fn inspect_artifacts(
    artifacts: &[Artifact],
    kernels: &[KernelMetadata],
    target: &TargetDescription,
) -> Inspection {
    let mut inspection = Inspection::default();
    for artifact in artifacts {
        if artifact.kind != ArtifactKind::Binary {
            continue;
        }
        match check_code_object(&artifact.bytes, kernels, target) {
            Ok(None) => {}
            Ok(Some(found)) => {
                inspection.inspected += 1;
                inspection.violations.extend(found.violations);
                inspection.warnings.extend(found.warnings);
            }
            Err(e) => {
                inspection.inspected += 1;
                inspection
                    .violations
                    .push(format!("artifact `{}`: {e}", artifact.name));
            }
        }
    }
    inspection
}

/// Checks one code object: `Ok(None)` when `bytes` is not a GPU code
/// object (nothing to check), an error when it is one but malformed.
/// `kernels` are the compile result's kernels, all of which the code
/// object must hold.
pub fn check_code_object(
    bytes: &[u8],
    kernels: &[KernelMetadata],
    target: &TargetDescription,
) -> Result<Option<Inspection>, InspectError> {
    let object = match tilec_inspect::inspect(bytes, None) {
        Ok(object) => object,
        Err(InspectError::NotGpu(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut found = Inspection {
        inspected: 1,
        ..Inspection::default()
    };
    match &object {
        CodeObject::Amdgpu(amdgpu) => check_amdgpu(amdgpu, kernels, target, &mut found),
        CodeObject::Cubin(cubin) => check_cubin(cubin, kernels, target, &mut found),
    }
    Ok(Some(found))
}

/// The target's limits that apply to every kind of code object.
struct Limits {
    shared_bytes: Option<u64>,
    registers_per_thread: Option<u32>,
    registers_per_block: Option<u32>,
}

impl Limits {
    fn of(target: &TargetDescription) -> Limits {
        Limits {
            shared_bytes: target
                .memory_of_kind(MemoryKind::Shared)
                .and_then(|m| m.capacity_bytes),
            registers_per_thread: target.registers.per_thread,
            registers_per_block: target.registers.per_block,
        }
    }

    /// Shared memory and register violations of one kernel launched with
    /// `threads` threads; `shared` names the memory in messages.
    fn check(
        &self,
        kernel: &str,
        shared: (&str, Option<u64>),
        registers: Option<u64>,
        threads: u32,
        out: &mut Vec<String>,
    ) {
        let (memory, bytes) = shared;
        if let (Some(bytes), Some(cap)) = (bytes, self.shared_bytes)
            && bytes > cap
        {
            out.push(format!(
                "kernel `{kernel}` uses {bytes} bytes of {memory}; the target has {cap}"
            ));
        }
        let Some(registers) = registers else { return };
        if let Some(limit) = self.registers_per_thread
            && registers > u64::from(limit)
        {
            out.push(format!(
                "kernel `{kernel}` uses {registers} registers per thread; the target allows {limit}"
            ));
        }
        let block = registers.saturating_mul(u64::from(threads));
        if let Some(limit) = self.registers_per_block
            && block > u64::from(limit)
        {
            out.push(format!(
                "kernel `{kernel}` needs at least {block} registers for a block of {threads} threads; the target has {limit}"
            ));
        }
    }
}

/// Whether a code object built for `built` can serve `arch`. Only names of
/// the same family are compared (`gfx*` with `gfx*`, SM numbers with
/// `sm_*`), so that a target with a name of its own is not failed for it.
fn processor_mismatch(built: Option<&str>, arch: &str) -> Option<String> {
    let built = built?;
    let same = if arch.starts_with("gfx") {
        built == arch
    } else if let Some(sm) = arch.strip_prefix("sm_") {
        // `sm_90a` code is an SM 90 cubin: the suffix is not in `e_flags`.
        let digits: String = sm.chars().take_while(char::is_ascii_digit).collect();
        built.strip_prefix("sm_") == Some(digits.as_str())
    } else {
        true
    };
    (!same).then(|| format!("the code object is built for {built}; the target is {arch}"))
}

fn check_amdgpu(
    object: &AmdgpuObject,
    kernels: &[KernelMetadata],
    target: &TargetDescription,
    found: &mut Inspection,
) {
    if let Some(problem) = processor_mismatch(object.target.processor.as_deref(), &target.arch) {
        found.violations.push(problem);
    }
    let limits = Limits::of(target);
    let width = target.simt_width().map(u64::from);
    for meta in kernels {
        let Some(kernel) = object.kernels.iter().find(|k| k.name == meta.entry) else {
            found.violations.push(missing(&meta.entry));
            continue;
        };
        if let (Some(wave), Some(width)) = (kernel.wavefront_size(), width)
            && wave != width
        {
            found.violations.push(format!(
                "kernel `{}` runs in wavefronts of {wave}; the target's SIMT width is {width}",
                kernel.name
            ));
        }
        let vgprs = kernel.metadata.as_ref().and_then(|m| m.vgpr_count);
        limits.check(
            &kernel.name,
            ("LDS", kernel.lds_bytes()),
            vgprs,
            meta.threads,
            &mut found.violations,
        );
        found.warnings.extend(amdgpu_warning(kernel));
    }
}

/// The warning for an AMDGPU kernel with scratch or spills.
fn amdgpu_warning(kernel: &AmdgpuKernel) -> Option<String> {
    let scratch = kernel.scratch_bytes().unwrap_or(0);
    let (vgpr_spills, sgpr_spills) = kernel.metadata.as_ref().map_or((0, 0), |m| {
        (
            m.vgpr_spill_count.unwrap_or(0),
            m.sgpr_spill_count.unwrap_or(0),
        )
    });
    let name = &kernel.name;
    match (scratch, vgpr_spills, sgpr_spills) {
        (0, 0, 0) => None,
        // SGPRs spill into VGPR lanes (and VGPRs into AGPRs on gfx90a-class
        // targets): slower, without memory traffic.
        (0, v, s) => Some(format!(
            "kernel `{name}` spills {v} VGPRs and {s} SGPRs into other registers (0 bytes of scratch)"
        )),
        (bytes, v, s) => Some(format!(
            "kernel `{name}` uses {bytes} bytes of scratch per work-item ({v} VGPRs and {s} SGPRs spilled)"
        )),
    }
}

fn check_cubin(
    cubin: &Cubin,
    kernels: &[KernelMetadata],
    target: &TargetDescription,
    found: &mut Inspection,
) {
    let built = cubin.sm.map(|sm| format!("sm_{sm}"));
    if let Some(problem) = processor_mismatch(built.as_deref(), &target.arch) {
        found.violations.push(problem);
    }
    let limits = Limits::of(target);
    for meta in kernels {
        let Some(kernel) = cubin.kernels.iter().find(|k| k.name == meta.entry) else {
            found.violations.push(missing(&meta.entry));
            continue;
        };
        limits.check(
            &kernel.name,
            ("shared memory", Some(kernel.shared_bytes)),
            kernel.registers.map(u64::from),
            meta.threads,
            &mut found.violations,
        );
        found.warnings.extend(cubin_warning(kernel));
    }
}

/// The warning for a cubin kernel with a stack frame (local memory).
fn cubin_warning(kernel: &CubinKernel) -> Option<String> {
    let bytes = kernel.local_bytes.filter(|&b| b > 0)?;
    Some(format!(
        "kernel `{}` uses {bytes} bytes of local memory (stack frame) per thread",
        kernel.name
    ))
}

fn missing(entry: &str) -> String {
    format!("kernel `{entry}` of the compile result is not in the code object")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_of_one_family_are_compared() {
        assert_eq!(processor_mismatch(Some("gfx942"), "gfx942"), None);
        assert!(processor_mismatch(Some("gfx90a"), "gfx942").is_some());
        assert_eq!(processor_mismatch(Some("sm_90"), "sm_90a"), None);
        assert!(processor_mismatch(Some("sm_80"), "sm_90a").is_some());
        assert_eq!(processor_mismatch(Some("gfx942"), "mi300x"), None);
        assert_eq!(processor_mismatch(None, "gfx942"), None);
    }

    #[test]
    fn what_is_not_a_code_object_is_not_inspected() {
        let Ok(target) = tilec_core::target::builtin("gfx942") else {
            panic!("gfx942 is a shipped description");
        };
        let artifacts = [
            Artifact {
                name: "module.ll".into(),
                kind: ArtifactKind::Text,
                bytes: b"\x7fELF but text".to_vec(),
            },
            Artifact {
                name: "module.bin".into(),
                kind: ArtifactKind::Binary,
                bytes: b"not an ELF file".to_vec(),
            },
        ];
        assert_eq!(
            inspect_artifacts(&artifacts, &[], &target),
            Inspection::default()
        );
        // A recognised kind that is broken is a violation, not a panic.
        let mut truncated = b"\x7fELF\x02\x01\x01\x40".to_vec();
        truncated.resize(64, 0);
        truncated[18] = 224; // EM_AMDGPU
        // Five section headers of 64 bytes at offset 4096, past the end.
        truncated[0x28..0x30].copy_from_slice(&4096u64.to_le_bytes());
        truncated[0x3a] = 64;
        truncated[0x3c] = 5;
        let broken = [Artifact {
            name: "module.hsaco".into(),
            kind: ArtifactKind::Binary,
            bytes: truncated,
        }];
        let found = inspect_artifacts(&broken, &[], &target);
        assert_eq!(found.inspected, 1);
        assert_eq!(found.violations.len(), 1, "{found:?}");
    }
}
