//! Tests of `tilec inspect` on real code objects.
//!
//! - **AMDGPU**: a small kernel written here in LLVM IR (an LDS buffer, an
//!   MFMA so that AGPRs are used, a barrier) is built with `llc-19` and
//!   `ld.lld-19` for gfx942 and gfx90a, and inspected as a linked code
//!   object and as the relocatable object `llc` writes: target, code
//!   object version, kernel, LDS, wavefront size, AGPRs, the descriptor,
//!   and the occupancy estimate when a target description with a register
//!   file is found. LLVM is looked for in `TILEC_LLVM_DIR`, on `PATH` and
//!   in `/usr/lib/llvm-19/bin`; without it these tests say so and pass,
//!   unless `TILEC_REQUIRE_LLVM=1`.
//! - **cubin**: with `TILEC_PTXAS` set to a `ptxas`, a PTX kernel written
//!   here (512 bytes of shared memory, a 64-byte local array, `.maxntid`)
//!   is assembled, and `inspect` must report what `ptxas -v` reports.
//! - **Negative**: random bytes, a host executable, a truncated code
//!   object and a missing file are refused with exit 1 and a message,
//!   never a crash.

#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{code, json, stderr, stdout, workspace_root};

fn tilec(args: &[&str]) -> Output {
    let result = Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(args)
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH")
        .output();
    match result {
        Ok(output) => output,
        Err(e) => panic!("cannot start tilec: {e}"),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// An LLVM tool, as the rocm backend finds it.
fn llvm_tool(versioned: &str, plain: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TILEC_LLVM_DIR") {
        for name in [versioned, plain] {
            let p = PathBuf::from(&dir).join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(versioned);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let p = Path::new("/usr/lib/llvm-19/bin").join(plain);
    p.is_file().then_some(p)
}

/// `llc` and `ld.lld`, or `None` after saying why (a failure under
/// `TILEC_REQUIRE_LLVM=1`).
fn llvm() -> Option<(PathBuf, PathBuf)> {
    let found = llvm_tool("llc-19", "llc").zip(llvm_tool("ld.lld-19", "ld.lld"));
    if found.is_none() {
        assert!(
            std::env::var("TILEC_REQUIRE_LLVM").map_or(true, |v| v != "1"),
            "TILEC_REQUIRE_LLVM=1 but llc-19 or ld.lld-19 is missing"
        );
        eprintln!("llc-19 / ld.lld-19 not found: AMDGPU inspect tests skipped");
    }
    found
}

const KERNEL_IR: &str = r#"target triple = "amdgcn-amd-amdhsa"

@probe.lds = internal addrspace(3) global [3000 x i8] undef, align 16

define amdgpu_kernel void @probe(ptr addrspace(1) %a, ptr addrspace(1) %d, i32 %n) #0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %tid to i64
  %pa = getelementptr inbounds <4 x half>, ptr addrspace(1) %a, i64 %i
  %va = load <4 x half>, ptr addrspace(1) %pa, align 8
  %acc = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %va, <4 x half> %va, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <16 x float> %acc, i32 5
  %l = getelementptr inbounds float, ptr addrspace(3) @probe.lds, i32 %tid
  store float %e, ptr addrspace(3) %l, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r = load float, ptr addrspace(3) %l, align 4
  %pd = getelementptr inbounds float, ptr addrspace(1) %d, i64 %i
  store float %r, ptr addrspace(1) %pd, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32 immarg, i32 immarg, i32 immarg)

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" }
"#;

/// Builds the probe kernel for `arch`: (relocatable object, code object).
fn build(dir: &Path, arch: &str, llc: &Path, lld: &Path) -> (PathBuf, PathBuf) {
    let ll = dir.join("probe.ll");
    let obj = dir.join(format!("probe.{arch}.o"));
    let hsaco = dir.join(format!("probe.{arch}.hsaco"));
    std::fs::write(&ll, KERNEL_IR).unwrap_or_else(|e| panic!("{e}"));
    let run = |tool: &Path, args: &[String]| {
        let out = Command::new(tool)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", tool.display()));
        assert!(out.status.success(), "{}: {}", tool.display(), stderr(&out));
    };
    run(
        llc,
        &[
            "-O2".into(),
            "-mtriple=amdgcn-amd-amdhsa".into(),
            format!("-mcpu={arch}"),
            "-filetype=obj".into(),
            path_str(&ll),
            "-o".into(),
            path_str(&obj),
        ],
    );
    run(
        lld,
        &[
            "-shared".into(),
            path_str(&obj),
            "-o".into(),
            path_str(&hsaco),
        ],
    );
    (obj, hsaco)
}

#[test]
fn amdgpu_code_objects_show_target_kernels_and_resources() {
    let Some((llc, lld)) = llvm() else { return };
    let dir = scratch("inspect-amdgpu");
    for arch in ["gfx942", "gfx90a"] {
        let (obj, hsaco) = build(&dir, arch, &llc, &lld);
        for file in [&hsaco, &obj] {
            let out = tilec(&["inspect", &path_str(file), "--json"]);
            assert_eq!(code(&out), 0, "{}", stderr(&out));
            let v = json(&out);
            assert_eq!(v["kind"], "amdgpu", "{v}");
            assert_eq!(v["arch"], arch, "{v}");
            assert_eq!(v["target"]["processor"], arch, "{v}");
            assert_eq!(v["target"]["xnack"], "any", "{v}");
            assert_eq!(v["code_object_version"], 5, "{v}");
            let kernels = v["kernels"].as_array().cloned().unwrap_or_default();
            assert_eq!(kernels.len(), 1, "{v}");
            let k = &kernels[0];
            assert_eq!(k["name"], "probe");
            assert_eq!(k["symbol"], "probe.kd");
            let m = &k["metadata"];
            assert_eq!(m["group_segment_fixed_size"], 3000, "{m}");
            assert_eq!(m["wavefront_size"], 64, "{m}");
            assert_eq!(m["max_flat_workgroup_size"], 256, "{m}");
            assert_eq!(m["private_segment_fixed_size"], 0, "{m}");
            assert!(m["agpr_count"].as_u64().is_some_and(|a| a >= 16), "{m}");
            let vgprs = m["vgpr_count"].as_u64().unwrap_or(0);
            assert!(vgprs >= 16, "{m}");
            let d = &k["descriptor"];
            assert_eq!(d["group_segment_fixed_size"], 3000, "{d}");
            assert_eq!(d["wavefront_size32"], false, "{d}");
            // The descriptor's granulated VGPR count covers the metadata's
            // count in granules of 8.
            let blocks = d["granulated_vgpr_count"].as_u64().unwrap_or(0);
            assert!((blocks + 1) * 8 >= vgprs, "{d} {m}");
            // Occupancy needs a description with a register file: the rocm
            // plugin's, when it was built next to tilec.
            let source = v["occupancy_source"].as_str().unwrap_or("").to_string();
            if source.starts_with("target description") {
                let o = &k["occupancy"];
                assert_eq!(o["max_waves_per_simd"], 8, "{o}");
                // 3000 bytes of LDS for 4 waves: 21 groups per CU.
                assert_eq!(o["by_lds"], 8, "{o}");
                let allocated = o["vgprs_allocated"].as_u64().unwrap_or(0);
                assert_eq!(allocated, vgprs.div_ceil(8) * 8, "{o}");
                assert_eq!(
                    o["by_vgprs"].as_u64(),
                    Some((512 / allocated).min(8)),
                    "{o}"
                );
            } else {
                assert!(source.starts_with("no estimate"), "{source}");
                assert!(k["occupancy"].is_null());
            }
        }
        let out = tilec(&["inspect", &path_str(&hsaco)]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        for want in [
            "AMDGPU code object",
            &format!("target       {arch} (xnack any, sramecc any)"),
            "code object  v5",
            "kernel probe (probe.kd)",
            "LDS          3000 bytes",
            "wavefront    64 lanes, at most 256 work-items per workgroup",
        ] {
            assert!(text.contains(want), "`{want}` missing from\n{text}");
        }
    }
}

const PTX: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry scale(
  .param .u64 p,
  .param .u32 n
)
.maxntid 128, 1, 1
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<3>;
  .reg .pred %p<2>;
  .shared .align 4 .b8 buf[512];
  .local .align 4 .b8 stack[64];
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.u64 %rd2, %rd2, %rd3;
  ld.global.f32 %f1, [%rd2];
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, buf;
  add.u32 %r4, %r4, %r3;
  st.shared.f32 [%r4], %f1;
  bar.sync 0;
  ld.shared.f32 %f2, [%r4];
  add.f32 %f2, %f2, %f1;
  st.global.f32 [%rd2], %f2;
DONE:
  ret;
}
"#;

#[test]
fn cubins_show_registers_shared_and_local_memory() {
    let Some(ptxas) = std::env::var_os("TILEC_PTXAS") else {
        eprintln!("TILEC_PTXAS not set: cubin inspect test skipped");
        return;
    };
    let dir = scratch("inspect-cubin");
    let ptx = dir.join("scale.ptx");
    let cubin = dir.join("scale.cubin");
    std::fs::write(&ptx, PTX).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(&ptxas)
        .args([
            "-arch=sm_80",
            "-v",
            &path_str(&ptx),
            "-o",
            &path_str(&cubin),
        ])
        .output()
        .unwrap_or_else(|e| panic!("ptxas: {e}"));
    assert!(out.status.success(), "ptxas: {}", stderr(&out));
    // `ptxas -v` says "Used N registers".
    let log = format!("{}{}", stdout(&out), stderr(&out));
    let registers: u64 = log
        .split("Used ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no register count in {log}"));
    let out = tilec(&["inspect", &path_str(&cubin), "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["kind"], "cubin", "{v}");
    assert_eq!(v["arch"], "sm_80", "{v}");
    assert_eq!(v["sm"], 80, "{v}");
    let k = &v["kernels"][0];
    assert_eq!(k["name"], "scale", "{v}");
    assert_eq!(k["registers"].as_u64(), Some(registers), "{v}");
    assert_eq!(k["shared_bytes"], 512, "{v}");
    assert_eq!(k["local_bytes"], 64, "{v}");
    assert_eq!(k["max_threads"], serde_json::json!([128, 1, 1]), "{v}");
    assert_eq!(k["param_bytes"], 12, "{v}");
    let out = tilec(&["inspect", &path_str(&cubin)]);
    let text = stdout(&out);
    for want in [
        "NVIDIA cubin",
        "target       sm_80",
        "kernel scale",
        &format!("registers    {registers}"),
        "shared       512 bytes (static)",
        "local        64 bytes of stack frame",
    ] {
        assert!(text.contains(want), "`{want}` missing from\n{text}");
    }
}

#[test]
fn other_files_are_refused_with_a_reason() {
    let dir = scratch("inspect-negative");
    let random = dir.join("random.bin");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(&random, &bytes).unwrap_or_else(|e| panic!("{e}"));
    let host = PathBuf::from(env!("CARGO_BIN_EXE_tilec"));
    let truncated = dir.join("truncated.hsaco");
    // An ELF header claiming AMDGPU whose section table lies past the end.
    let mut header = vec![0u8; 64];
    header[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x40");
    header[8] = 3;
    header[16] = 3; // ET_DYN
    header[18..20].copy_from_slice(&224u16.to_le_bytes());
    header[20] = 1;
    header[40..48].copy_from_slice(&4096u64.to_le_bytes()); // e_shoff
    header[52] = 64; // e_ehsize
    header[58] = 64; // e_shentsize
    header[60] = 5; // e_shnum
    std::fs::write(&truncated, &header).unwrap_or_else(|e| panic!("{e}"));
    let cases: [(PathBuf, &str); 4] = [
        (random, "not a GPU code object: it is not an ELF file"),
        (host, "not a GPU code object: it is an ELF file for"),
        (truncated, "malformed AMDGPU code object"),
        (dir.join("missing.hsaco"), "cannot read"),
    ];
    for (file, message) in cases {
        let out = tilec(&["inspect", &path_str(&file)]);
        assert_eq!(code(&out), 1, "{}: {}", file.display(), stderr(&out));
        assert!(
            stderr(&out).contains(message),
            "{}: {}",
            file.display(),
            stderr(&out)
        );
        let out = tilec(&["inspect", &path_str(&file), "--json"]);
        assert_eq!(code(&out), 1);
        let v = json(&out);
        assert!(
            v["error"].as_str().is_some_and(|e| e.contains(message)),
            "{v}"
        );
    }
}

#[test]
fn damaged_code_objects_never_crash() {
    let Some((llc, lld)) = llvm() else { return };
    let dir = scratch("inspect-damaged");
    let (_, hsaco) = build(&dir, "gfx942", &llc, &lld);
    let good = std::fs::read(&hsaco).unwrap_or_else(|e| panic!("{e}"));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..40 {
        let mut bytes = good.clone();
        if case % 4 == 0 {
            // Truncated.
            bytes.truncate((next() as usize) % good.len());
        } else {
            // A few bytes changed.
            for _ in 0..4 {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }
        }
        let file = dir.join(format!("damaged{case}.hsaco"));
        std::fs::write(&file, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let out = tilec(&["inspect", &path_str(&file), "--json"]);
        assert!(
            code(&out) == 0 || code(&out) == 1,
            "case {case}: exit {}: {}",
            code(&out),
            stderr(&out)
        );
        let _ = json(&out);
    }
}
