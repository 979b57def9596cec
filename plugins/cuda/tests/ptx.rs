//! Tests of the PTX emitter (`tilec_backend_cuda::ptx`).
//!
//! 1. Every example kernel (built as `core/tests/lower.rs` builds them) and
//!    every `core/tests/thread/*.thr` kernel that verifies, on sm_80 and
//!    sm_90a: lowered, emitted twice (the texts must be identical) and,
//!    when `ptxas` is available, assembled (exit status 0 required, its
//!    messages printed otherwise). `ptxas` is `$TILEC_PTXAS` or the first
//!    `ptxas` on `PATH`; with `TILEC_REQUIRE_PTXAS=1` a missing `ptxas`
//!    fails the test instead of skipping the assembly.
//! 2. File tests: each `tests/ptx/NAME.thr` is emitted for the target its
//!    `# TARGET:` line names (default sm_80) and must equal
//!    `NAME.<target>.ptx` beside it; `TILEC_BLESS=1` rewrites the
//!    expectation. A `# FAST-MATH` line turns fast math on, a
//!    `# FP-CONTRACT` line multiply-add contraction alone.
//!    (`TILEC_PTX_DUMP=dir` writes every emitted module there, for reading.)
//! 3. Exact instruction sequences for the arithmetic whose PTX differs
//!    from its thread-IR meaning, and the refusals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tilec_backend_cuda::ptx::{self, PtxError, PtxOptions, PtxParamKind};
use tilec_core::front::py;
use tilec_core::lower;
use tilec_core::target::{self, TargetDescription};
use tilec_core::thread;

const TARGETS: [&str; 2] = ["sm_80", "sm_90a"];

/// The builder calls of `core/tests/lower.rs` (sizes small enough for the
/// interpreter; the emitter does not care).
const EXAMPLES: &[(&str, &str)] = &[
    ("elementwise_add.py", "elementwise_add(M=40, N=200)"),
    (
        "guarded_copy.py",
        "guarded_copy(M=40, N=72, block_M=16, block_N=32, threads=128, loaders=64)",
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
    ),
    (
        "gemm.py",
        "matmul(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16, trans_A=True, trans_B=True)",
    ),
    (
        "gemm_bias_relu.py",
        "matmul_bias_relu(M=40, N=36, K=24, block_M=32, block_N=32, block_K=16)",
    ),
    (
        "gemm_splitk.py",
        "matmul_splitk(M=40, N=36, K=64, block_M=32, block_N=32, block_K=16, split_k=2)",
    ),
    ("gemv.py", "gemv(N=100, K=200, block_N=32, block_K=64)"),
    ("layernorm.py", "layernorm(M=20, N=64, block_M=8)"),
    ("rmsnorm.py", "rmsnorm(M=20, N=64, block_M=8)"),
    ("softmax.py", "softmax(M=20, N=64, block_M=8)"),
    ("row_reduce.py", "row_reduce(M=40, N=48, block_M=16)"),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=40, dim=16, block_M=16, block_N=16)",
    ),
    (
        "flash_attention.py",
        "flash_attention(batch=1, heads=1, seq_len=32, dim=16, block_M=16, block_N=16, is_causal=True)",
    ),
    (
        "flash_attention_gqa.py",
        "flash_attention_gqa(batch=1, heads=2, kv_heads=1, seq_len=32, dim=16, block_M=16, block_N=16)",
    ),
    (
        "gemm_ws.py",
        "matmul_ws(M=72, N=40, K=80, block_M=64, block_N=32, block_K=16)",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn builtin(name: &str) -> TargetDescription {
    target::builtin(name).unwrap_or_else(|e| panic!("target {name}: {e}"))
}

// ---- ptxas ----

/// `ptxas`, from `TILEC_PTXAS` or `PATH`.
fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TILEC_PTXAS") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

fn require_ptxas() -> bool {
    std::env::var("TILEC_REQUIRE_PTXAS").is_ok_and(|v| v == "1")
}

/// Assembles `text` for `arch`; `Err` with ptxas's messages on failure.
/// `Ok(false)` when there is no ptxas to run (said once on stderr).
#[allow(clippy::print_stderr)]
fn assemble(text: &str, arch: &str, what: &str) -> Result<bool, String> {
    let Some(tool) = ptxas() else {
        assert!(
            !require_ptxas(),
            "TILEC_REQUIRE_PTXAS=1 but no ptxas in TILEC_PTXAS or PATH"
        );
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            eprintln!("ptxas not found (TILEC_PTXAS, PATH): PTX is emitted but not assembled");
        });
        return Ok(false);
    };
    // A fresh folder with a random name (not one a pid and a counter
    // give, which another user could plant a link at), removed on return
    // unless the PTX is kept for reading after a failure.
    let dir = tempfile::Builder::new()
        .prefix("tilec-ptx-")
        .tempdir()
        .map_err(|e| format!("{what}: creating a temporary folder: {e}"))?;
    let input = dir.path().join("kernel.ptx");
    let output = dir.path().join("kernel.cubin");
    std::fs::write(&input, text)
        .map_err(|e| format!("{what}: writing {}: {e}", input.display()))?;
    let run = Command::new(&tool)
        .arg(format!("-arch={arch}"))
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .output()
        .map_err(|e| format!("{what}: running {}: {e}", tool.display()))?;
    if run.status.success() {
        Ok(true)
    } else {
        let _ = std::fs::remove_file(&output);
        let _kept = dir.keep();
        Err(format!(
            "{what}: ptxas -arch={arch} failed ({}); input kept at {}\n{}{}",
            run.status,
            input.display(),
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        ))
    }
}

/// Emits twice (must be identical) and assembles.
fn emit_and_assemble(
    module: &thread::Module,
    t: &TargetDescription,
    options: &PtxOptions,
    what: &str,
) -> Result<(ptx::PtxModule, bool), String> {
    let first = ptx::emit_module(module, t, options).map_err(|e| format!("{what}: {e}"))?;
    let again = ptx::emit_module(module, t, options).map_err(|e| format!("{what}: {e}"))?;
    if first.text != again.text {
        return Err(format!("{what}: two emissions differ"));
    }
    if let Some(dir) = std::env::var_os("TILEC_PTX_DUMP") {
        // For reading the output: TILEC_PTX_DUMP=dir keeps every module.
        let name: String = what
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(Path::new(&dir).join(format!("{name}.ptx")), &first.text);
    }
    let assembled = assemble(&first.text, &t.arch, what)?;
    Ok((first, assembled))
}

// ---- 1. examples and thread-IR files ----

fn compile_example(file: &str, call: &str) -> tilec_core::ir::Module {
    let source = std::fs::read_to_string(repo().join("examples").join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let out = py::compile(
        &source,
        &py::Options {
            kernel: Some(call.to_string()),
            defines: BTreeMap::new(),
            target: None,
        },
    );
    out.module
        .unwrap_or_else(|| panic!("{call}: {:?}", out.diagnostics))
}

#[test]
#[allow(clippy::print_stderr)] // reports how many kernels ptxas checked
fn every_example_emits_and_assembles() {
    let mut failures = Vec::new();
    let (mut kernels, mut assembled) = (0, 0);
    for (file, call) in EXAMPLES {
        let module = compile_example(file, call);
        for name in TARGETS {
            let t = builtin(name);
            let lowered = lower::to_thread(&module, &t)
                .unwrap_or_else(|e| panic!("{call} on {name}: lowering: {e}"));
            for fast_math in [false, true] {
                let what = format!("{call} on {name} (fast math {fast_math})");
                match emit_and_assemble(
                    &lowered,
                    &t,
                    &PtxOptions {
                        fast_math,
                        ..PtxOptions::default()
                    },
                    &what,
                ) {
                    Ok((m, ok)) => {
                        assert_eq!(m.kernels.len(), lowered.kernels.len(), "{what}");
                        kernels += m.kernels.len();
                        assembled += usize::from(ok) * m.kernels.len();
                    }
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(kernels > 0);
    eprintln!("examples: {kernels} kernel emissions, {assembled} assembled by ptxas");
}

/// The benchmark's GEMM configurations keep their accumulators in
/// registers: a 128×128 tile over four warps is 128 `f32` per thread, and
/// an array the emitter cannot index with constants everywhere (a loop it
/// does not unroll, such as the accumulator's clear) goes to `.local`
/// memory, which once made the kernel several times slower.
#[test]
fn gemm_accumulators_stay_in_registers() {
    let t = builtin("sm_90a");
    for call in [
        "matmul(512, 512, 512, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128)",
        "matmul(512, 512, 512, block_M=128, block_N=256, block_K=32, threads=256)",
    ] {
        let module = compile_example("gemm.py", call);
        let lowered = lower::to_thread(&module, &t).unwrap_or_else(|e| panic!("{call}: {e}"));
        let (m, _) = emit_and_assemble(&lowered, &t, &PtxOptions::default(), call)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !m.text.contains(".local"),
            "{call}: an array lives in local memory"
        );
    }
}

fn thread_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "thr"))
        .collect();
    out.sort();
    out
}

/// The `# KEY: value` (or `# KEY`) header lines of a file.
fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| {
            let rest = l.strip_prefix("# ")?.strip_prefix(key)?;
            Some(rest.strip_prefix(": ").unwrap_or(rest).trim().to_string())
        })
}

/// On sm_90a the GEMM goes through wgmma with shared-memory descriptors;
/// every block-wide barrier is preceded by the proxy fence that makes
/// generic-proxy writes (cp.async, stores) visible to wgmma's reads; a
/// 4-stage pipeline keeps one wgmma group in flight; the result leaves
/// through stmatrix and shared memory. sm_80 keeps mma.sync.
#[test]
fn sm90a_gemm_issues_wgmma_through_descriptors() {
    let call =
        "matmul(512, 512, 512, block_M=128, block_N=256, block_K=64, num_stages=4, threads=256)";
    let module = compile_example("gemm.py", call);
    let t = builtin("sm_90a");
    let lowered = lower::to_thread(&module, &t).unwrap_or_else(|e| panic!("{call}: {e}"));
    let (m, _) = emit_and_assemble(&lowered, &t, &PtxOptions::default(), call)
        .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = m.text.lines().map(str::trim).collect();
    let wgmma = lines
        .iter()
        .filter(|l| l.starts_with("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"))
        .count();
    // Two warpgroups, one m64n256k16 each per k-step, 4 k-steps.
    assert_eq!(wgmma, 4, "{call}");
    assert!(
        lines.contains(&"wgmma.wait_group.sync.aligned 1;"),
        "{call}"
    );
    assert!(
        lines.contains(&"wgmma.wait_group.sync.aligned 0;"),
        "{call}"
    );
    // (The consumers' named barrier before the staged result is copied out
    // orders generic writes and reads only: no fence.)
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("bar.sync 0") {
            assert_eq!(lines[i - 1], "fence.proxy.async.shared::cta;", "{call}");
        }
    }
    assert!(
        m.text.contains("stmatrix.sync.aligned"),
        "{call}: staged result"
    );
    // The tiles arrive by bulk copies: A in one 128 × 64 box, B in four
    // 64 × 64 panels, issued in the loop of the producer warp that the
    // kernel gains (256 consumers + 128); the maps are parameters after the
    // buffers.
    let bulk = lines
        .iter()
        .filter(|l| l.starts_with("cp.async.bulk.tensor.2d"))
        .count();
    assert_eq!(bulk, 5, "{call}");
    // The producer is a warpgroup that gives its registers to the consumers.
    assert!(lines.contains(&".maxntid 384, 1, 1"), "{call}");
    assert!(lines.contains(&".minnctapersm 1"), "{call}");
    assert!(
        lines.contains(&"setmaxnreg.dec.sync.aligned.u32 24;"),
        "{call}"
    );
    assert!(
        lines.contains(&"setmaxnreg.inc.sync.aligned.u32 240;"),
        "{call}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("bar.sync 0")).count(),
        1,
        "{call}: one block-wide barrier, publishing the stage barriers"
    );
    assert!(!m.text.contains("cp.async.cg"), "{call}");
    assert!(m.text.contains(".param .align 64 .b8 main_tmap_A[128]"));
    // A: K-major, 128-byte swizzle, sbo 1024; B: N-major, lbo one panel of
    // 64 rows × 128 bytes, sbo 1024.
    let a_high = (1u64 << 16) | (64 << 32) | (1 << 62);
    let b_high = (512u64 << 16) | (64 << 32) | (1 << 62);
    assert!(m.text.contains(&a_high.to_string()), "A descriptor");
    assert!(m.text.contains(&b_high.to_string()), "B descriptor");
    assert!(
        !m.text.contains(".local"),
        "{call}: accumulators in local memory"
    );
    let sm80 = builtin("sm_80");
    let lowered = lower::to_thread(&module, &sm80).unwrap_or_else(|e| panic!("{call}: {e}"));
    let (m, _) = emit_and_assemble(&lowered, &sm80, &PtxOptions::default(), call)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!m.text.contains("wgmma") && m.text.contains("mma.sync"));
}

/// A tensor map becomes a 128-byte parameter after the thread-IR ones,
/// described for the host on a comment line; bulk copies take their
/// coordinates innermost first and complete on the mbarrier.
/// `atomic_max`/`atomic_min` on 32- and 64-bit integers are one `red.max`/
/// `red.min` of the signedness; on floats and 16-bit integers a
/// compare-and-swap loop that leaves when the value does not compare
/// greater (less), so a NaN value never stores.
#[test]
fn atomic_max_and_min_use_red_or_a_compare_loop() {
    let src = "thread_ir 0.1\n\nkernel @mm(%i: global i32[4], %u: global u64[4], %f: global f32[4], %h: global f16[4], %n: i32) grid(1, 1, 1) threads(64) {\n  atomic_max %i[thread_idx % 4], cast<i32>(thread_idx) - 9 when thread_idx < %n\n  atomic_min %u[0], cast<u64>(thread_idx)\n  atomic_max %f[1], cast<f32>(thread_idx) * f32(0.5)\n  atomic_min %h[2], cast<f16>(thread_idx) when thread_idx < %n\n}\n";
    let module = thread::parse_module(src).unwrap_or_else(|e| panic!("{e}"));
    for name in ["sm_80", "sm_90a"] {
        let t = builtin(name);
        thread::verify_kernel(&module.kernels[0], &t).unwrap_or_else(|e| panic!("{e}"));
        let (m, _) = emit_and_assemble(&module, &t, &PtxOptions::default(), "atomic max/min")
            .unwrap_or_else(|e| panic!("{e}"));
        for want in [
            "red.global.max.s32",
            "red.global.min.u64",
            "atom.global.cas.b32",
            "atom.global.cas.b16",
            "setp.gt.f32",
        ] {
            assert!(m.text.contains(want), "{name}: no `{want}` in\n{}", m.text);
        }
        assert!(!m.text.contains("red.global.add"), "{}", m.text);
    }
}

#[test]
fn tma_loads_pass_tensor_maps_and_complete_on_mbarriers() {
    let path = repo().join("core/tests/thread/tma_sm90a.thr");
    let text = std::fs::read_to_string(&path).expect("read");
    let module = thread::parse_module(&text).unwrap_or_else(|e| panic!("{e}"));
    let single = thread::Module {
        kernels: vec![module.kernel("tma_edge").expect("kernel").clone()],
    };
    let t = builtin("sm_90a");
    let (m, _) = emit_and_assemble(&single, &t, &PtxOptions::default(), "tma_edge")
        .unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = m.text.lines().map(str::trim).collect();
    assert!(
        lines.contains(
            &"// tilec.tensor_map tma_edge tma_edge_tA global=0 dtype=f16 dims=c64,c64 box=64,64 swizzle=128"
        ),
        "{}",
        m.text
    );
    let entry = lines
        .iter()
        .position(|l| l.starts_with(".visible .entry tma_edge("))
        .expect("entry");
    assert_eq!(
        &lines[entry + 1..entry + 4],
        [
            ".param .u64 tma_edge_A,",
            ".param .u64 tma_edge_O,",
            ".param .align 64 .b8 tma_edge_tA[128]"
        ]
    );
    let copy = lines
        .iter()
        .find(|l| l.starts_with("cp.async.bulk.tensor.2d"))
        .expect("bulk copy");
    // Box origin (32, 0), outermost first: PTX takes it innermost first.
    let coords = copy
        .strip_suffix("}], [tilec_smem+8192];")
        .and_then(|c| c.split_once("[tilec_smem], [%rd_tA, {"))
        .map(|(_, c)| c.split(", ").collect::<Vec<_>>())
        .unwrap_or_else(|| panic!("{copy}"));
    let [inner, outer] = coords[..] else {
        panic!("{copy}")
    };
    assert!(
        lines.contains(&format!("mov.b32 {inner}, 0;").as_str())
            && lines.contains(&format!("mov.b32 {outer}, 32;").as_str()),
        "{}",
        m.text
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("mbarrier.arrive.expect_tx.shared::cta.b64")
                && l.ends_with(", 8192;")
        ),
        "{}",
        m.text
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("mbarrier.try_wait.parity.shared::cta.b64"))
    );
    // sm_80 has no TMA: the kernel does not verify there.
    let sm80 = builtin("sm_80");
    assert!(thread::verify_kernel(&single.kernels[0], &sm80).is_err());
}

#[test]
#[allow(clippy::print_stderr)] // reports how many kernels ptxas checked
fn every_verifying_thread_ir_kernel_emits_and_assembles() {
    let mut failures = Vec::new();
    let (mut kernels, mut assembled) = (0, 0);
    for path in thread_files(&repo().join("core/tests/thread")) {
        let text = std::fs::read_to_string(&path).expect("read");
        let module =
            thread::parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let targets: Vec<String> = match header(&text, "TARGET") {
            Some(t) => vec![t],
            None => TARGETS.iter().map(|s| s.to_string()).collect(),
        };
        for name in targets.iter().filter(|t| TARGETS.contains(&t.as_str())) {
            let t = builtin(name);
            for k in &module.kernels {
                if thread::verify_kernel(k, &t).is_err() {
                    continue;
                }
                let single = thread::Module {
                    kernels: vec![k.clone()],
                };
                let what = format!("{} @{} on {name}", path.display(), k.name);
                match emit_and_assemble(&single, &t, &PtxOptions::default(), &what) {
                    Ok((_, ok)) => {
                        kernels += 1;
                        assembled += usize::from(ok);
                    }
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(kernels > 0);
    eprintln!("thread IR files: {kernels} kernels emitted, {assembled} assembled by ptxas");
}

// ---- 2. file tests ----

#[test]
fn file_tests_match_their_expected_ptx() {
    let bless = std::env::var("TILEC_BLESS").is_ok_and(|v| v == "1");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ptx");
    let files = thread_files(&dir);
    assert!(!files.is_empty(), "no .thr files in {}", dir.display());
    let mut failures = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read");
        let name = header(&text, "TARGET").unwrap_or_else(|| "sm_80".to_string());
        let options = PtxOptions {
            fast_math: header(&text, "FAST-MATH").is_some(),
            contract: header(&text, "FP-CONTRACT").is_some(),
            ..PtxOptions::default()
        };
        let t = builtin(&name);
        let module =
            thread::parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let what = path.display().to_string();
        let emitted = match emit_and_assemble(&module, &t, &options, &what) {
            Ok((m, _)) => m.text,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let expected_path = path.with_extension(format!("{name}.ptx"));
        if bless {
            std::fs::write(&expected_path, &emitted).expect("write expectation");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != emitted {
            let line = expected
                .lines()
                .zip(emitted.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| expected.lines().count().min(emitted.lines().count()));
            failures.push(format!(
                "{what}: PTX differs from {} at line {} (TILEC_BLESS=1 rewrites it)\n  expected: {}\n  emitted:  {}",
                expected_path.display(),
                line + 1,
                expected.lines().nth(line).unwrap_or("<end>"),
                emitted.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- 3. exact sequences and refusals ----

/// A one-kernel module with `decls` and `body` between the braces.
fn kernel(params: &str, decls: &str, body: &str) -> thread::Module {
    let text = format!(
        "thread_ir 0.1\n\nkernel @k({params}) grid(1, 1, 1) threads(32) {{\n{decls}\n{body}\n}}\n"
    );
    thread::parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn emit(module: &thread::Module) -> String {
    let t = builtin("sm_80");
    match emit_and_assemble(module, &t, &PtxOptions::default(), "test kernel") {
        Ok((m, _)) => m.text,
        Err(e) => panic!("{e}"),
    }
}

/// The instruction lines after the comment that names `stmt` and before
/// the next comment, trimmed.
fn instructions_of(text: &str, stmt: &str) -> Vec<String> {
    let mut lines = text.lines().map(str::trim);
    let header = format!("// {stmt}");
    let found = lines
        .by_ref()
        .any(|l| l == header || l.starts_with(&format!("{header}  (span")));
    assert!(found, "no statement `{stmt}` in\n{text}");
    lines
        .take_while(|l| !l.starts_with("//") && !l.is_empty() && !l.starts_with('}'))
        .map(str::to_string)
        .collect()
}

#[test]
fn signed_floor_division_and_modulo_round_toward_negative_infinity() {
    let m = kernel(
        "%out: global i32[4], %a: i32, %b: i32",
        "  var %q: i32\n  var %r: i32",
        "  %q = %a // %b\n  %r = %a % %b\n  store global x1 %out[0] <- %q\n  store global x1 %out[1] <- %r",
    );
    let text = emit(&m);
    // q = trunc(a / b) with MIN / −1 as −a; r = a − q·b; adjust when r ≠ 0
    // and r, b have opposite signs.
    assert_eq!(
        instructions_of(&text, "%q = %a // %b"),
        [
            "div.s32 %r0, %r_a, %r_b;",
            "neg.s32 %r1, %r_a;",
            "setp.eq.s32 %p0, %r_b, -1;",
            "selp.b32 %r2, %r1, %r0, %p0;",
            "mul.lo.s32 %r3, %r2, %r_b;",
            "sub.s32 %r4, %r_a, %r3;",
            "xor.b32 %r5, %r4, %r_b;",
            "setp.lt.s32 %p1, %r5, 0;",
            "setp.ne.s32 %p2, %r4, 0;",
            "and.pred %p3, %p1, %p2;",
            "sub.s32 %r6, %r2, 1;",
            "selp.b32 %r_q, %r6, %r2, %p3;",
        ]
    );
    assert_eq!(
        instructions_of(&text, "%r = %a % %b"),
        [
            "div.s32 %r8, %r_a, %r_b;",
            "neg.s32 %r9, %r_a;",
            "setp.eq.s32 %p4, %r_b, -1;",
            "selp.b32 %r10, %r9, %r8, %p4;",
            "mul.lo.s32 %r11, %r10, %r_b;",
            "sub.s32 %r12, %r_a, %r11;",
            "xor.b32 %r13, %r12, %r_b;",
            "setp.lt.s32 %p5, %r13, 0;",
            "setp.ne.s32 %p6, %r12, 0;",
            "and.pred %p7, %p5, %p6;",
            "add.s32 %r14, %r12, %r_b;",
            "selp.b32 %r_r, %r14, %r12, %p7;",
        ]
    );
}

#[test]
fn power_of_two_divisors_are_shifts_and_masks() {
    let m = kernel(
        "%out: global i32[4], %a: i32, %u: u32",
        "  var %q: i32\n  var %r: i32\n  var %v: u32",
        "  %q = %a // 8\n  %r = %a % 8\n  %v = %u // u32(4)\n  store global x1 %out[0] <- %q\n  store global x1 %out[1] <- %r",
    );
    let text = emit(&m);
    assert_eq!(
        instructions_of(&text, "%q = %a // 8"),
        ["shr.s32 %r_q, %r_a, 3;"]
    );
    assert_eq!(
        instructions_of(&text, "%r = %a % 8"),
        ["and.b32 %r_r, %r_a, 7;"]
    );
    assert_eq!(
        instructions_of(&text, "%v = %u // u32(4)"),
        ["shr.u32 %r_v, %r_u, 2;"]
    );
}

#[test]
fn narrow_integers_wrap_after_arithmetic() {
    let m = kernel(
        "%out: global i8[4], %a: i8",
        "  var %x: i8",
        "  %x = %a * i8(3)\n  store global x1 %out[0] <- %x",
    );
    let text = emit(&m);
    assert_eq!(
        instructions_of(&text, "%x = %a * i8(3)"),
        ["mul.lo.s32 %r0, %r_a, 3;", "cvt.s32.s8 %r_x, %r0;"]
    );
    // The parameter travels as .s32 and is normalised on entry.
    assert!(text.contains(".param .s32 k_a"), "{text}");
    assert!(text.contains("cvt.s32.s8 %r_a, %r_a;"), "{text}");
}

#[test]
fn float_arithmetic_rounds_once_and_is_never_contracted() {
    let m = kernel(
        "%out: global f16[4], %o2: global f64[1]",
        "  var %a: f16\n  var %b: f16\n  var %d: f64",
        "  load global x1 %a <- %out[0]\n  load global x1 %b <- %out[1]\n  %a = %a * %b + %a\n  store global x1 %out[2] <- %a\n  load global x1 %d <- %o2[0]\n  %d = %d * %d + %d\n  store global x1 %o2[0] <- %d",
    );
    let text = emit(&m);
    assert_eq!(
        instructions_of(&text, "%a = %a * %b + %a"),
        [
            "cvt.f32.f16 %f0, %h_a;",
            "cvt.f32.f16 %f1, %h_b;",
            "mul.rn.f32 %f2, %f0, %f1;",
            "cvt.rn.f16.f32 %h0, %f2;",
            "cvt.f32.f16 %f3, %h0;",
            "cvt.f32.f16 %f4, %h_a;",
            "add.rn.f32 %f5, %f3, %f4;",
            "cvt.rn.f16.f32 %h_a, %f5;",
        ]
    );
    assert_eq!(
        instructions_of(&text, "%d = %d * %d + %d"),
        [
            "mul.rn.f64 %fd0, %fd_d, %fd_d;",
            "add.rn.f64 %fd_d, %fd0, %fd_d;",
        ]
    );
}

#[test]
fn mma_fragments_are_packed_in_slot_order() {
    let m = kernel(
        "%A: global f16[256], %C: global f32[128]",
        "  local %a: f16[8]\n  local %b: f16[4]\n  local %c: f32[4]\n  local %d: f32[4]",
        "  load global x8 %a[0] <- %A[lane_id * 8]\n  load global x4 %b[0] <- %A[lane_id * 4]\n  load global x4 %c[0] <- %C[lane_id * 4]\n  mma \"mma.m16n8k16\" %d[0] <- %a[0], %b[0], %c[0]\n  store global x4 %C[lane_id * 4] <- %d[0]",
    );
    let text = emit(&m);
    let lines = instructions_of(&text, "mma \"mma.m16n8k16\" %d[0] <- %a[0], %b[0], %c[0]");
    // Each 32-bit operand register packs two consecutive slots, the lower
    // one in bits 15:0 (`mov.b32 %r, {lo, hi}`).
    let mut packed = BTreeMap::new();
    for l in &lines[..lines.len() - 1] {
        let (reg, pair) = l
            .strip_prefix("mov.b32 ")
            .and_then(|r| r.strip_suffix(';'))
            .and_then(|r| r.split_once(", "))
            .unwrap_or_else(|| panic!("unexpected packing instruction `{l}`"));
        packed.insert(reg.to_string(), pair.to_string());
    }
    let mma = lines.last().expect("the mma");
    let operands: Vec<Vec<String>> = mma
        .split('{')
        .skip(1)
        .map(|g| {
            g.split('}')
                .next()
                .unwrap_or("")
                .split(", ")
                .map(|r| packed.get(r).cloned().unwrap_or_else(|| r.to_string()))
                .collect()
        })
        .collect();
    assert!(
        mma.starts_with("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {"),
        "{mma}"
    );
    assert_eq!(
        operands,
        [
            vec!["%f_d_0", "%f_d_1", "%f_d_2", "%f_d_3"],
            vec![
                "{%h_a_0, %h_a_1}",
                "{%h_a_2, %h_a_3}",
                "{%h_a_4, %h_a_5}",
                "{%h_a_6, %h_a_7}"
            ],
            vec!["{%h_b_0, %h_b_1}", "{%h_b_2, %h_b_3}"],
            vec!["%f_c_0", "%f_c_1", "%f_c_2", "%f_c_3"],
        ]
    );
}

#[test]
fn parameters_follow_the_kernel_in_order() {
    let m = kernel(
        "%x: global f32[%n], %n: i32, %big: u64, %y: global bf16[4]",
        "",
        "",
    );
    let t = builtin("sm_90a");
    let emitted = ptx::emit_module(&m, &t, &PtxOptions::default()).expect("emit");
    let k = &emitted.kernels[0];
    let kinds: Vec<_> = k.params.iter().map(|p| (p.name.as_str(), p.kind)).collect();
    assert_eq!(
        kinds,
        [
            (
                "x",
                PtxParamKind::Buffer {
                    dtype: tilec_core::ir::DType::F32
                }
            ),
            (
                "n",
                PtxParamKind::Scalar {
                    dtype: tilec_core::ir::DType::I32,
                    ptx_type: "s32"
                }
            ),
            (
                "big",
                PtxParamKind::Scalar {
                    dtype: tilec_core::ir::DType::U64,
                    ptx_type: "s64"
                }
            ),
            (
                "y",
                PtxParamKind::Buffer {
                    dtype: tilec_core::ir::DType::BF16
                }
            ),
        ]
    );
    assert!(
        emitted
            .text
            .contains(".version 8.0\n.target sm_90a\n.address_size 64")
    );
    assert!(emitted.text.contains(".maxntid 32, 1, 1"));
}

#[test]
fn every_target_gets_its_version() {
    let base = builtin("sm_80");
    let m = kernel("", "", "");
    for (arch, version) in [
        ("sm_80", "7.0"),
        ("sm_86", "7.1"),
        ("sm_89", "7.8"),
        ("sm_90", "7.8"),
        ("sm_90a", "8.0"),
    ] {
        let mut t = base.clone();
        t.arch = arch.to_string();
        let out = ptx::emit_module(&m, &t, &PtxOptions::default()).expect("emit");
        assert!(
            out.text
                .contains(&format!(".version {version}\n.target {arch}\n")),
            "{arch}"
        );
        assemble(&out.text, arch, arch).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut t = base;
    t.arch = "sm_75".to_string();
    assert!(matches!(
        ptx::emit_module(&m, &t, &PtxOptions::default()),
        Err(PtxError::Target { .. })
    ));
}

#[test]
fn unsupported_constructs_are_errors_naming_the_statement() {
    let m = kernel(
        "%o: global f64[1]",
        "  var %d: f64",
        "  %d = pow(f64(2.0), f64(0.5))\n  store global x1 %o[0] <- %d",
    );
    match ptx::emit_module(&m, &builtin("sm_80"), &PtxOptions::default()) {
        Err(PtxError::Unsupported { kernel, stmt, .. }) => {
            assert_eq!(kernel, "k");
            assert_eq!(stmt.as_deref(), Some("%d = pow(f64(2.0), f64(0.5))"));
        }
        other => panic!("{other:?}"),
    }
    let m = kernel("%o: global u8[4]", "", "  atomic_add %o[0], u8(1)");
    let err = ptx::emit_module(&m, &builtin("sm_80"), &PtxOptions::default())
        .expect_err("8-bit atomics are refused");
    assert!(err.to_string().contains("atomic_add of u8"), "{err}");
}

#[test]
fn kernels_that_do_not_verify_are_refused() {
    let m = kernel("", "", "  if thread_idx < 4 {\n    barrier\n  }");
    match ptx::emit_module(&m, &builtin("sm_80"), &PtxOptions::default()) {
        Err(PtxError::Invalid { kernel, message }) => {
            assert_eq!(kernel, "k");
            assert!(message.contains("barrier"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_description_whose_fragments_disagree_with_ptx_is_refused() {
    let mut t = builtin("sm_80");
    let atom = t
        .matrix_atoms
        .iter_mut()
        .find(|a| a.name == "mma.m16n8k16")
        .expect("atom");
    // B slots 1 and 2 exchanged.
    atom.b.fragment = Some("((4,8),(2,2)):((2,16),(8,1))".parse().expect("layout"));
    let m = kernel(
        "%C: global f32[128]",
        "  local %a: f16[8]\n  local %b: f16[4]\n  local %c: f32[4]\n  local %d: f32[4]",
        "  mma \"mma.m16n8k16\" %d[0] <- %a[0], %b[0], %c[0]\n  store global x4 %C[lane_id * 4] <- %d[0]",
    );
    let err = ptx::emit_module(&m, &t, &PtxOptions::default()).expect_err("mismatch");
    let text = err.to_string();
    assert!(
        text.contains("does not match PTX") && text.contains("operand b"),
        "{text}"
    );
}

// ---- 4. every operation on every type assembles ----

mod all_ops {
    use super::*;
    use tilec_core::ir::{BinaryOp, DType, Literal, UnaryOp};
    use tilec_core::thread::{
        Dim, Expr, ExprKind, GlobalBuffer, Guard, GuardElse, Kernel, MemRef, Param, ParamId, RegId,
        RegRef, Register, RegisterKind, SharedBuffer, SharedId, ShuffleKind, Special, Stmt,
        StmtKind,
    };

    const BINARY: [BinaryOp; 22] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::FloorDiv,
        BinaryOp::FloorMod,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Pow,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
        BinaryOp::Shl,
        BinaryOp::Shr,
    ];

    struct Builder {
        registers: Vec<Register>,
        body: Vec<Stmt>,
    }

    impl Builder {
        fn reg(&mut self, name: &str, dtype: DType, kind: RegisterKind) -> RegId {
            self.registers.push(Register {
                name: name.to_string(),
                dtype,
                kind,
            });
            RegId(self.registers.len() as u32 - 1)
        }
        fn read(&self, r: RegId) -> Expr {
            Expr {
                kind: ExprKind::Reg(r),
                dtype: self.registers[r.index()].dtype,
            }
        }
        fn push(&mut self, kind: StmtKind) {
            self.body.push(Stmt::new(kind));
        }
        fn assign(&mut self, dst: RegId, value: Expr) {
            self.push(StmtKind::Assign {
                dst: RegRef::Scalar(dst),
                value,
            });
        }
    }

    fn tid_plus(k: i32) -> Expr {
        Expr::binary(
            BinaryOp::Add,
            Expr::special(Special::ThreadIdx),
            Expr::int(k),
        )
        .expect("i32 + i32")
    }

    fn tid_times(k: i32) -> Expr {
        Expr::binary(
            BinaryOp::Mul,
            Expr::special(Special::ThreadIdx),
            Expr::int(k),
        )
        .expect("i32 * i32")
    }

    fn below(k: i32) -> Expr {
        Expr::binary(
            BinaryOp::Lt,
            Expr::special(Special::ThreadIdx),
            Expr::int(k),
        )
        .expect("i32 < i32")
    }

    /// A kernel doing everything thread IR allows on values of `d`.
    fn kernel_for(d: DType, fast_math: bool) -> Kernel {
        let mut b = Builder {
            registers: Vec::new(),
            body: Vec::new(),
        };
        let a = b.reg("a", d, RegisterKind::Scalar);
        let x = b.reg("b", d, RegisterKind::Scalar);
        let r = b.reg("r", d, RegisterKind::Scalar);
        let c = b.reg("c", DType::Bool, RegisterKind::Scalar);
        let v = b.reg("v", d, RegisterKind::Array { len: 8 });
        let w = b.reg("w", d, RegisterKind::Array { len: 8 });
        let (buf, out) = (ParamId(0), ParamId(1));
        let load = |dst: RegRef, index: Expr, guard: Option<Guard>| StmtKind::Load {
            width: 1,
            dst,
            src: MemRef::Global(buf),
            index,
            guard,
        };
        b.push(load(
            RegRef::Scalar(a),
            Expr::special(Special::ThreadIdx),
            None,
        ));
        b.push(load(
            RegRef::Scalar(x),
            tid_plus(32),
            Some(Guard {
                cond: below(16),
                otherwise: GuardElse::Zero,
            }),
        ));
        for op in BINARY {
            let Ok(e) = Expr::binary(op, b.read(a), b.read(x)) else {
                continue;
            };
            if op == BinaryOp::Pow && d == DType::F64 {
                continue;
            }
            let dst = if e.dtype == DType::Bool { c } else { r };
            b.assign(dst, e);
        }
        for op in UnaryOp::ALL {
            let Ok(e) = Expr::unary(op, b.read(a)) else {
                continue;
            };
            let dst = if e.dtype == DType::Bool { c } else { r };
            b.assign(dst, e);
        }
        b.assign(
            r,
            Expr::select(b.read(c), b.read(a), b.read(x)).expect("select"),
        );
        for t in DType::ALL {
            let dst = b.reg(&format!("to_{t}"), t, RegisterKind::Scalar);
            b.assign(dst, Expr::cast(t, b.read(r)));
            let back = Expr::cast(d, b.read(dst));
            b.assign(r, back);
        }
        // Literals of the type.
        let lit = if d == DType::Bool {
            Literal::Bool(true)
        } else if d.is_int() {
            Literal::Int(d.wrap_i64(-3), d)
        } else {
            Literal::Float(d.round_f64(-1.5), d)
        };
        b.assign(r, Expr::literal(lit));
        // Vector moves of every width up to 16 bytes, global and shared,
        // into register and dynamically indexed (local) arrays.
        for width in [1u32, 2, 4, 8] {
            if u64::from(width) * d.bytes() > 16 {
                continue;
            }
            for (array, start) in [(v, Expr::int(0)), (w, Expr::special(Special::LaneId))] {
                let start = if start.as_const_int().is_some() {
                    start
                } else {
                    Expr::binary(BinaryOp::FloorMod, start, Expr::int(1)).expect("%")
                };
                let reg = RegRef::Elem(array, start);
                for (guard, src) in [
                    (None, MemRef::Global(buf)),
                    (
                        Some(Guard {
                            cond: below(8),
                            otherwise: GuardElse::Zero,
                        }),
                        MemRef::Global(buf),
                    ),
                    (
                        Some(Guard {
                            cond: below(9),
                            otherwise: GuardElse::Skip,
                        }),
                        MemRef::Shared(SharedId(0)),
                    ),
                ] {
                    b.push(StmtKind::Load {
                        width,
                        dst: reg.clone(),
                        src,
                        index: tid_times(8),
                        guard,
                    });
                }
                for dst in [MemRef::Global(out), MemRef::Shared(SharedId(0))] {
                    b.push(StmtKind::Store {
                        width,
                        dst,
                        index: tid_times(8),
                        src: reg.clone(),
                        guard: Some(Guard {
                            cond: below(7),
                            otherwise: GuardElse::Skip,
                        }),
                    });
                }
            }
        }
        // Shuffles of values up to 32 bits, fast and general paths.
        if d.bits() <= 32 {
            for (kind, lane) in [
                (ShuffleKind::Xor, Expr::int(1)),
                (ShuffleKind::Xor, Expr::int(9)),
                (ShuffleKind::Up, Expr::int(2)),
                (ShuffleKind::Down, Expr::special(Special::LaneId)),
                (ShuffleKind::Idx, Expr::int(-3)),
            ] {
                b.push(StmtKind::Shuffle {
                    kind,
                    dst: RegRef::Scalar(r),
                    value: b.read(a),
                    lane,
                    width: 8,
                });
            }
        }
        let atomic_ok = matches!(
            d,
            DType::I32
                | DType::U32
                | DType::I64
                | DType::U64
                | DType::F32
                | DType::F64
                | DType::F16
                | DType::BF16
                | DType::I16
                | DType::U16
        );
        if atomic_ok {
            // Add, and max and min (`red.max`/`red.min` on 32- and 64-bit
            // integers, a compare-and-swap loop otherwise).
            for op in [
                thread::AtomicOp::Add,
                thread::AtomicOp::Max,
                thread::AtomicOp::Min,
            ] {
                b.push(StmtKind::Atomic {
                    op,
                    dst: out,
                    index: Expr::special(Special::LaneId),
                    value: b.read(r),
                    guard: Some(Guard {
                        cond: below(5),
                        otherwise: GuardElse::Skip,
                    }),
                });
            }
        }
        b.push(StmtKind::Store {
            width: 1,
            dst: MemRef::Global(out),
            index: Expr::special(Special::ThreadIdx),
            src: RegRef::Scalar(r),
            guard: None,
        });
        let global = |name: &str| {
            Param::Global(GlobalBuffer {
                name: name.to_string(),
                dtype: d,
                shape: vec![Dim::Const(1024)],
            })
        };
        Kernel {
            name: format!(
                "ops_{}{}",
                d.short_name(),
                if fast_math { "_fast" } else { "" }
            ),
            params: vec![global("buf"), global("out")],
            grid: [Expr::int(1), Expr::int(1), Expr::int(1)],
            threads: 80,
            shared: vec![SharedBuffer {
                name: "s".to_string(),
                dtype: d,
                len: 1024,
                align: 16,
            }],
            tensor_maps: Vec::new(),
            registers: b.registers,
            body: b.body,
        }
    }

    #[test]
    fn every_operation_on_every_type_assembles() {
        let mut failures = Vec::new();
        for name in TARGETS {
            let t = builtin(name);
            for fast_math in [false, true] {
                let module = thread::Module {
                    kernels: DType::ALL
                        .iter()
                        .map(|&d| kernel_for(d, fast_math))
                        .collect(),
                };
                for k in &module.kernels {
                    if let Err(e) = thread::verify_kernel(k, &t) {
                        panic!("{} does not verify: {e}", k.name);
                    }
                }
                let what = format!("all operations on {name} (fast math {fast_math})");
                if let Err(e) = emit_and_assemble(
                    &module,
                    &t,
                    &PtxOptions {
                        fast_math,
                        ..PtxOptions::default()
                    },
                    &what,
                ) {
                    failures.push(e);
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
}

/// The accesses the host proved in bounds (`tilec compile --verify`) reach
/// the plugin in the compile request's extra options
/// (`lower::PROVED_SITES_OPTION`), and the lowering leaves their guards
/// out. Here every site with an obligation is passed as proved (deciding
/// them is `tilec verify`'s job, tested in `core/tests/verify.rs`): the
/// thread-level IR the plugin returns then has fewer guarded moves.
#[test]
fn proved_sites_from_the_host_drop_guards() {
    use tilec_backend_cuda::Cuda;
    use tilec_core::verify::{self, Outcome, VerifyOptions};
    use tilec_plugin_api::{
        BackendPlugin, CompileOptions, CompileRequest, IrDocument, TILE_IR_FORMAT,
    };

    let path = repo().join("core/tests/verify/good/dynamic_store_assumed.py");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = py::compile(&source, &py::Options::default());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let t = builtin("sm_90a");
    let obligations = verify::generate(&module.functions[0], &VerifyOptions::for_target(&t))
        .unwrap_or_else(|e| panic!("{e}"));
    let all_proved = vec![Outcome::Proved; obligations.items.len()];
    let proved = verify::proved_sites(&obligations, &all_proved);
    assert!(!proved.is_empty());
    let lower_options = lower::LowerOptions {
        proved: vec![proved],
    };
    let guards = |extra: BTreeMap<String, String>| {
        let request = CompileRequest {
            ir: IrDocument {
                format: TILE_IR_FORMAT,
                module: module.clone(),
            },
            target: "sm_90a".to_string(),
            options: CompileOptions {
                emit: "thread-ir".to_string(),
                fast_math: false,
                extra,
            },
        };
        let result = Cuda::compile(request).unwrap_or_else(|e| panic!("{}", e.message));
        let text = String::from_utf8(result.artifacts[0].bytes.clone()).unwrap_or_default();
        text.matches(" when ").count()
    };
    let without = guards(BTreeMap::new());
    let with = guards(BTreeMap::from([(
        lower::PROVED_SITES_OPTION.to_string(),
        lower_options.encode_proved(),
    )]));
    assert!(
        with < without,
        "guards: {with} with proved sites, {without} without"
    );
    assert_eq!(
        lower::LowerOptions::decode_proved(&lower_options.encode_proved()),
        Ok(lower_options)
    );
    // A value that does not decode is refused, not ignored.
    let request = CompileRequest {
        ir: IrDocument {
            format: TILE_IR_FORMAT,
            module: module.clone(),
        },
        target: "sm_90a".to_string(),
        options: CompileOptions {
            emit: String::new(),
            fast_math: false,
            extra: BTreeMap::from([(lower::PROVED_SITES_OPTION.to_string(), "{".to_string())]),
        },
    };
    assert!(Cuda::compile(request).is_err());
}

/// With the source file in the request (`SOURCE_NAME_OPTION`,
/// `SOURCE_TEXT_OPTION`, as `tilec compile` passes it), each statement's
/// comment names its `file:line:col`, the source line is quoted once where
/// the line changes, and `.file`/`.loc` directives carry the same lines
/// for tools; ptxas accepts them (checked by `assemble` when `ptxas` is
/// found). Without it the comments keep byte spans.
#[test]
fn source_lines_annotate_the_ptx() {
    use tilec_backend_cuda::Cuda;
    use tilec_plugin_api::{
        BackendPlugin, CompileOptions, CompileRequest, IrDocument, SOURCE_NAME_OPTION,
        SOURCE_TEXT_OPTION, TILE_IR_FORMAT,
    };

    let path = repo().join("examples/gemm.py");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let out = py::compile(&source, &py::Options::default());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let ptx = |extra: BTreeMap<String, String>| {
        let request = CompileRequest {
            ir: IrDocument {
                format: TILE_IR_FORMAT,
                module: module.clone(),
            },
            target: "sm_80".to_string(),
            options: CompileOptions {
                emit: "ptx".to_string(),
                fast_math: false,
                extra,
            },
        };
        let result = Cuda::compile(request).unwrap_or_else(|e| panic!("{}", e.message));
        String::from_utf8(result.artifacts[0].bytes.clone()).unwrap_or_default()
    };
    let plain = ptx(BTreeMap::new());
    assert!(!plain.contains(".loc") && !plain.contains(".file"));
    assert!(plain.contains("(span "));
    let annotated = ptx(BTreeMap::from([
        (
            SOURCE_NAME_OPTION.to_string(),
            "examples/gemm.py".to_string(),
        ),
        (SOURCE_TEXT_OPTION.to_string(), source.clone()),
    ]));
    assert!(annotated.contains(".file 1 \"examples/gemm.py\""));
    assert!(!annotated.contains("(span "));
    // The gemm statement: its line, quoted, then a `.loc` with that line.
    let (line_no, line) = source
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("T.gemm("))
        .unwrap_or_else(|| panic!("no T.gemm line in examples/gemm.py"));
    let quoted = format!("// examples/gemm.py:{}: {}", line_no + 1, line.trim());
    let at = annotated
        .find(&quoted)
        .unwrap_or_else(|| panic!("`{quoted}` not in the PTX"));
    // `at` is inside the quote's line (after its indentation): the line
    // before that one.
    let loc = annotated[..at].rsplit('\n').nth(1).unwrap_or("").trim();
    assert!(
        loc.starts_with(&format!(".loc 1 {} ", line_no + 1)),
        "the line before the quote is `{loc}`"
    );
    assert!(annotated.contains(&format!("(examples/gemm.py:{}:", line_no + 1)));
    // Every `.loc` names a line of the file.
    let lines = source.lines().count();
    for l in annotated
        .lines()
        .filter(|l| l.trim_start().starts_with(".loc "))
    {
        let n: usize = l
            .split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!((1..=lines).contains(&n), "`{l}`");
    }
    if let Some(ptxas) = tilec_backend_cuda::ptxas::find() {
        let entries = ["main"];
        tilec_backend_cuda::ptxas::assemble(&ptxas, &annotated, "sm_80", &entries)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// PTX is ASCII only (`ptxas` and the driver's JIT stop at the first other
/// byte, comments included): a kernel whose source lines carry comments in
/// another script, in a file whose name is not ASCII, still assembles; the
/// quoted lines keep those characters as `\u{...}` escapes.
#[test]
fn source_lines_outside_ascii_are_escaped() {
    use tilec_backend_cuda::Cuda;
    use tilec_plugin_api::{
        BackendPlugin, CompileOptions, CompileRequest, IrDocument, SOURCE_NAME_OPTION,
        SOURCE_TEXT_OPTION, TILE_IR_FORMAT,
    };

    let source = "import tilelang.language as T\n\n\n@T.prim_func\ndef main(A: T.Tensor((64,), \"float32\"), B: T.Tensor((64,), \"float32\")):\n    with T.Kernel(1, threads=64) as bx:  # 一个块\n        for i in T.Parallel(64):\n            B[i] = A[i] * 2.0  # 乘以二 ×2\n";
    let out = py::compile(source, &py::Options::default());
    let module = out
        .module
        .unwrap_or_else(|| panic!("{:?}", out.diagnostics));
    let request = CompileRequest {
        ir: IrDocument {
            format: TILE_IR_FORMAT,
            module,
        },
        target: "sm_80".to_string(),
        options: CompileOptions {
            emit: "ptx".to_string(),
            fast_math: false,
            extra: BTreeMap::from([
                (SOURCE_NAME_OPTION.to_string(), "内核.py".to_string()),
                (SOURCE_TEXT_OPTION.to_string(), source.to_string()),
            ]),
        },
    };
    let result = Cuda::compile(request).unwrap_or_else(|e| panic!("{}", e.message));
    let ptx = String::from_utf8(result.artifacts[0].bytes.clone()).unwrap_or_default();
    assert!(ptx.is_ascii(), "non-ASCII PTX");
    assert!(
        ptx.contains("# \\u{4e58}\\u{4ee5}\\u{4e8c} \\u{d7}2"),
        "{ptx}"
    );
    assert!(ptx.contains(".file 1 \"\\u{5185}\\u{6838}.py\""), "{ptx}");
    assemble(&ptx, "sm_80", "non-ASCII source lines").unwrap_or_else(|e| panic!("{e}"));
}
