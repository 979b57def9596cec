//! Scratch in a code object is a warning of the compile result, not an
//! error: a kernel written here in LLVM IR keeps a private array indexed
//! at run time (so it needs scratch), is built by the plugin's toolchain
//! for gfx90a and gfx942, and `check_code_object` must accept it with one
//! `Warning` naming the kernel and its bytes per work-item, and record its
//! VGPR count. The same object checked with a kernel it lacks is still an
//! `Internal` error.
//!
//! Needs LLVM 19 (`toolchain::find`); without it the test says so and
//! passes, unless `TILEC_REQUIRE_LLVM=1`.

#![allow(clippy::print_stderr)]

use tilec_backend_rocm::{check_code_object, targets, toolchain};
use tilec_plugin_api::{ErrorCode, KernelMetadata, Severity};

const SPILLS: &str = r#"
target triple = "amdgcn-amd-amdhsa"

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

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
"#;

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

#[test]
fn scratch_is_a_warning_with_the_kernel_and_its_bytes() {
    let tools = match toolchain::find() {
        Ok(t) => t,
        Err(e) => {
            assert!(
                std::env::var("TILEC_REQUIRE_LLVM").map_or(true, |v| v != "1"),
                "TILEC_REQUIRE_LLVM=1 but {e}"
            );
            eprintln!("LLVM 19 not found: scratch check skipped ({e})");
            return;
        }
    };
    for arch in ["gfx90a", "gfx942"] {
        let target = targets::describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message));
        let bytes = toolchain::build_code_object(&tools, SPILLS, arch)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));

        let mut kernels = vec![kernel("spills")];
        let warnings = check_code_object(&bytes, &target, &mut kernels)
            .unwrap_or_else(|e| panic!("{arch}: scratch refused: {}", e.message));
        let [warning] = warnings.as_slice() else {
            panic!("{arch}: expected one warning, got {warnings:?}");
        };
        assert_eq!(warning.severity, Severity::Warning);
        let prefix = "kernel `spills` uses ";
        let suffix = format!(" bytes of scratch per work-item on {arch}");
        let scratch: u64 = warning
            .message
            .strip_prefix(prefix)
            .and_then(|m| m.strip_suffix(suffix.as_str()))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{arch}: {}", warning.message));
        assert!(scratch >= 1024, "{arch}: {}", warning.message);
        assert!(kernels[0].registers.is_some(), "{arch}: no VGPR count");

        let mut absent = vec![kernel("absent")];
        let refused = check_code_object(&bytes, &target, &mut absent).err();
        assert_eq!(
            refused.map(|e| (e.code, e.message)),
            Some((
                ErrorCode::Internal,
                "the code object has no metadata for kernel `absent`".to_string()
            ))
        );
    }
}
