//! L1's checks of code objects (`tilec_conformance::binary`), on real
//! AMDGPU code objects.
//!
//! Two kernels written here in AMDGPU LLVM IR are built with `llc` and
//! `ld.lld` (LLVM 19) for gfx942: `plain` uses 1 KiB of LDS and no
//! scratch; `spills` keeps a 256-element array in private memory, indexed
//! by a kernel argument, so that it needs scratch. Checked against gfx942's
//! description: the first passes, the second gives a warning naming the
//! kernel and its scratch bytes; against descriptions that are wrong for
//! them (less LDS, another wavefront width, a tiny register budget) or
//! with a kernel the object lacks, there are violations.
//!
//! The kernels are built by the rocm backend's toolchain module, which
//! finds LLVM 19 (`TILEC_LLVM_DIR`, `PATH`, `/usr/lib/llvm-19/bin`).
//! Without it the tests say so and pass, unless `TILEC_REQUIRE_LLVM` is
//! set.

#![allow(clippy::print_stderr)]

use std::sync::OnceLock;

use tilec_backend_rocm::toolchain;
use tilec_conformance::binary::{Inspection, check_code_object, inspect_artifacts};
use tilec_core::target::{ExecutionModel, MemoryKind, TargetDescription};
use tilec_plugin_api::{Artifact, ArtifactKind, KernelMetadata};

const KERNELS: &str = r#"
target triple = "amdgcn-amd-amdhsa"

@tile = internal addrspace(3) global [256 x i32] poison, align 4

; Each work-item stores its id in LDS and reads its neighbour's.
define amdgpu_kernel void @plain(ptr addrspace(1) %out) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %other = xor i32 %tid, 1
  %src = getelementptr [256 x i32], ptr addrspace(3) @tile, i32 0, i32 %other
  %v = load i32, ptr addrspace(3) %src
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %dst
  ret void
}

; A private array indexed by a run-time value (volatile, so that it is
; neither promoted to registers nor to LDS): it lives in scratch.
define amdgpu_kernel void @spills(ptr addrspace(1) %out, i32 %n) #0 {
entry:
  %buf = alloca [256 x i32], align 4, addrspace(5)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %next, %fill ]
  %p = getelementptr [256 x i32], ptr addrspace(5) %buf, i32 0, i32 %i
  %x = mul i32 %i, %tid
  store volatile i32 %x, ptr addrspace(5) %p
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, 256
  br i1 %done, label %read, label %fill
read:
  %idx = and i32 %n, 255
  %q = getelementptr [256 x i32], ptr addrspace(5) %buf, i32 0, i32 %idx
  %v = load volatile i32, ptr addrspace(5) %q
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %dst
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"#;

/// The code object of [`KERNELS`] for gfx942, or `None` (after saying
/// why) when LLVM is missing and not required. Built once: the tests run
/// in threads of one process.
fn code_object() -> Option<Vec<u8>> {
    static BUILT: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

/// Builds [`KERNELS`] with the rocm backend's own LLVM toolchain.
fn build() -> Option<Vec<u8>> {
    let tools = match toolchain::find() {
        Ok(t) => t,
        Err(e) => {
            assert!(
                std::env::var_os("TILEC_REQUIRE_LLVM").is_none(),
                "TILEC_REQUIRE_LLVM is set but {e}"
            );
            eprintln!("LLVM 19 not found: code object checks skipped ({e})");
            return None;
        }
    };
    Some(
        toolchain::build_code_object(&tools, KERNELS, "gfx942")
            .unwrap_or_else(|e| panic!("building the test kernels: {e}")),
    )
}

fn gfx942() -> TargetDescription {
    tilec_core::target::builtin("gfx942").unwrap_or_else(|e| panic!("gfx942: {e}"))
}

fn kernel(entry: &str) -> KernelMetadata {
    KernelMetadata {
        entry: entry.to_string(),
        params: Vec::new(),
        grid: vec!["1".to_string()],
        threads: 256,
        shared_bytes: 0,
        registers: None,
    }
}

fn check(bytes: &[u8], entries: &[&str], target: &TargetDescription) -> Inspection {
    let kernels: Vec<KernelMetadata> = entries.iter().map(|e| kernel(e)).collect();
    match check_code_object(bytes, &kernels, target) {
        Ok(Some(found)) => found,
        other => panic!("the code object was not inspected: {other:?}"),
    }
}

#[test]
fn a_kernel_within_the_limits_passes() {
    let Some(bytes) = code_object() else { return };
    let found = check(&bytes, &["plain"], &gfx942());
    assert_eq!(found.inspected, 1);
    assert!(found.violations.is_empty(), "{found:?}");
    assert!(found.warnings.is_empty(), "{found:?}");
}

#[test]
fn scratch_is_a_quality_warning() {
    let Some(bytes) = code_object() else { return };
    let found = check(&bytes, &["plain", "spills"], &gfx942());
    assert!(found.violations.is_empty(), "{found:?}");
    let [warning] = found.warnings.as_slice() else {
        panic!("expected one warning: {found:?}");
    };
    assert!(
        warning.starts_with("kernel `spills` uses ") && warning.contains("bytes of scratch"),
        "{warning}"
    );
    // 256 words, and nothing about the kernel that has no scratch.
    let bytes_used: u64 = warning
        .trim_start_matches("kernel `spills` uses ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(bytes_used >= 1024, "{warning}");
}

#[test]
fn too_little_lds_is_a_violation() {
    let Some(bytes) = code_object() else { return };
    let mut target = gfx942();
    for space in &mut target.memory_spaces {
        if space.kind == MemoryKind::Shared {
            space.capacity_bytes = Some(512);
        }
    }
    let found = check(&bytes, &["plain"], &target);
    assert_eq!(
        found.violations,
        ["kernel `plain` uses 1024 bytes of LDS; the target has 512"]
    );
}

#[test]
fn another_wavefront_width_is_a_violation() {
    let Some(bytes) = code_object() else { return };
    let mut target = gfx942();
    if let ExecutionModel::Simt { width, .. } = &mut target.execution {
        *width = 32;
    }
    let found = check(&bytes, &["plain"], &target);
    assert_eq!(
        found.violations,
        ["kernel `plain` runs in wavefronts of 64; the target's SIMT width is 32"]
    );
}

#[test]
fn registers_beyond_the_budget_are_a_violation() {
    let Some(bytes) = code_object() else { return };
    let mut target = gfx942();
    target.registers.per_thread = Some(1);
    let found = check(&bytes, &["plain"], &target);
    assert!(
        found.violations.len() == 1
            && found.violations[0].starts_with("kernel `plain` uses ")
            && found.violations[0].ends_with("registers per thread; the target allows 1"),
        "{found:?}"
    );
}

#[test]
fn missing_kernels_and_other_processors_are_violations() {
    let Some(bytes) = code_object() else { return };
    let found = check(&bytes, &["plain", "absent"], &gfx942());
    assert_eq!(
        found.violations,
        ["kernel `absent` of the compile result is not in the code object"]
    );
    let Ok(mut gfx90a) = tilec_core::target::builtin("gfx942") else {
        panic!("gfx942 is a shipped description");
    };
    gfx90a.arch = "gfx90a".to_string();
    let found = check(&bytes, &["plain"], &gfx90a);
    assert_eq!(
        found.violations,
        ["the code object is built for gfx942; the target is gfx90a"]
    );
}

#[test]
fn only_binary_artifacts_are_inspected() {
    let Some(bytes) = code_object() else { return };
    let artifact = |kind| Artifact {
        name: "module.hsaco".to_string(),
        kind,
        bytes: bytes.clone(),
    };
    let kernels = [kernel("spills")];
    let as_text = inspect_artifacts(&[artifact(ArtifactKind::Text)], &kernels, &gfx942());
    assert_eq!(as_text, Inspection::default());
    let as_binary = inspect_artifacts(&[artifact(ArtifactKind::Binary)], &kernels, &gfx942());
    assert_eq!((as_binary.inspected, as_binary.warnings.len()), (1, 1));
}
