//! File-based tests of the thread-level IR and the SIMT interpreter.
//!
//! Every `*.thr` file under `tests/thread/` must round-trip exactly
//! (`print(parse(s)) == s`, after the leading `#` comment lines). Files in
//! `errors/` fail as their first line says (`# ERROR: L:C: message` for the
//! parser, `# VERIFY-ERROR: message` for the verifier); a `# TARGET: name`
//! line picks the target (default `sm_80`). `TILEC_BLESS=1` rewrites a file
//! that does not round-trip with the printed text.
//!
//! The SIMT tests run kernels from those files and compare with results
//! computed here in plain Rust, never from IR.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;
use tilec_core::simt::{self, ExecErrorKind, SimtError, SimtOptions, Stats};
use tilec_core::target::{self, TargetDescription};
use tilec_core::thread::{self, Module};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thread")
}

fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read test dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "thr") {
                out.push(path);
            }
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no .thr files under {}", root.display());
    out
}

/// The `# KEY: value` header lines of a file.
fn header(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&format!("# {key}: ")).map(str::to_string))
}

fn body_without_comments(text: &str) -> &str {
    let mut rest = text;
    while rest.starts_with('#') {
        rest = rest.split_once('\n').map_or("", |(_, r)| r);
    }
    rest
}

fn target_of(text: &str) -> TargetDescription {
    let name = header(text, "TARGET").unwrap_or_else(|| "sm_80".to_string());
    target::builtin(&name).expect("builtin target")
}

#[test]
fn every_file_round_trips_and_errors_match() {
    let bless = std::env::var("TILEC_BLESS").is_ok_and(|v| v == "1");
    let mut checked = 0;
    for path in files(&dir()) {
        let text = std::fs::read_to_string(&path).expect("read");
        let name = path.display();
        if let Some(expected) = header(&text, "ERROR") {
            let err = thread::parse_module(&text).expect_err(&format!("{name} should not parse"));
            assert!(
                err.to_string().contains(&expected),
                "{name}: expected parse error `{expected}`, got `{err}`"
            );
            checked += 1;
            continue;
        }
        let module =
            thread::parse_module(&text).unwrap_or_else(|e| panic!("{name}: parse error {e}"));
        let printed = thread::print_module(&module);
        let body = body_without_comments(&text);
        if printed != body {
            if bless {
                let prefix = &text[..text.len() - body.len()];
                std::fs::write(&path, format!("{prefix}{printed}")).expect("bless");
            } else {
                panic!("{name} does not round-trip; printed:\n{printed}");
            }
        }
        let again = thread::parse_module(&printed).expect("reparse");
        assert_eq!(
            thread::print_module(&again),
            printed,
            "{name}: reparsed module prints differently"
        );
        let target = target_of(&text);
        let verified = thread::verify_module(&module, &target);
        match header(&text, "VERIFY-ERROR") {
            Some(expected) => {
                let err = verified.expect_err(&format!("{name} should fail to verify"));
                assert!(
                    err.to_string().contains(&expected),
                    "{name}: expected verifier error `{expected}`, got `{err}`"
                );
            }
            None => {
                if let Err(e) = verified {
                    panic!("{name}: {e}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} files checked");
}

// ---- helpers for runs ----

fn module(file: &str) -> (Module, TargetDescription) {
    let text = std::fs::read_to_string(dir().join(file)).expect("read");
    let m = thread::parse_module(&text).expect("parse");
    (m, target_of(&text))
}

fn run(
    file: &str,
    kernel: &str,
    args: &mut [Tensor],
    symbols: &[(&str, i64)],
) -> Result<Stats, SimtError> {
    let (m, target) = module(file);
    let k = m.kernel(kernel).expect("kernel");
    let options = SimtOptions {
        symbols: symbols.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..SimtOptions::default()
    };
    simt::run(k, &target, args, &options)
}

fn f32s(shape: &[usize], values: Vec<f64>) -> Tensor {
    Tensor::from_f64(DType::F32, shape.to_vec(), values).expect("tensor")
}

fn f16s(shape: &[usize], values: Vec<f64>) -> Tensor {
    Tensor::from_f64(DType::F16, shape.to_vec(), values).expect("tensor")
}

fn floats(t: &Tensor) -> Vec<f64> {
    match &t.data {
        TensorData::Float(v) => v.clone(),
        TensorData::Int(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

fn exec_kind(e: &SimtError) -> &ExecErrorKind {
    e.exec_kind()
        .unwrap_or_else(|| panic!("expected an execution error, got {e}"))
}

// ---- SIMT runs ----

#[test]
fn vectorized_copy_with_guarded_edges() {
    for n in [1000usize, 1024, 1001, 3] {
        let src: Vec<f64> = (0..n).map(|i| (i as f64) * 0.5 - 7.0).collect();
        let mut args = [f32s(&[n], src.clone()), f32s(&[n], vec![-1.0; n])];
        let stats = run("vec_copy.thr", "vec_copy", &mut args, &[]).expect("run");
        assert_eq!(floats(&args[1]), src, "n = {n}");
        assert_eq!(stats.blocks, n.div_ceil(512) as u64);
        assert!(stats.global_loads > 0);
    }
}

#[test]
fn unguarded_vector_copy_out_of_bounds_is_an_error() {
    let n = 1002;
    let mut args = [f32s(&[n], vec![1.0; n]), f32s(&[n], vec![0.0; n])];
    let err = run("vec_copy.thr", "vec_copy_unguarded", &mut args, &[]).expect_err("oob");
    match exec_kind(&err) {
        ExecErrorKind::OutOfBounds {
            space: "global",
            buffer,
            start,
            ..
        } => {
            assert_eq!(buffer, "src");
            assert_eq!(*start, 1000);
        }
        other => panic!("unexpected {other}"),
    }
    let at = err.location().expect("location");
    assert_eq!(at.block, [1, 0, 0]);
    assert_eq!(at.thread, Some(122));
    assert!(at.stmt.starts_with("load global x4"), "{}", at.stmt);
}

#[test]
fn block_reduction_with_shuffles_and_shared_memory() {
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    let expected: f64 = x.iter().sum();
    let mut args = [f32s(&[n], x), f32s(&[1], vec![0.0])];
    let stats = run("block_sum.thr", "block_sum", &mut args, &[]).expect("run");
    assert_eq!(floats(&args[1]), vec![expected]);
    assert_eq!(stats.barriers, 1);
    assert_eq!(stats.shuffles, 8);
}

fn transpose_input() -> Vec<f64> {
    (0..64 * 64).map(|i| (i as f64) * 0.25).collect()
}

#[test]
fn shared_memory_transpose_through_a_barrier() {
    let input = transpose_input();
    let mut args = [
        f32s(&[64, 64], input.clone()),
        f32s(&[64, 64], vec![0.0; 4096]),
    ];
    run("transpose.thr", "transpose", &mut args, &[]).expect("run");
    let out = floats(&args[1]);
    for r in 0..64 {
        for c in 0..64 {
            assert_eq!(out[r * 64 + c], input[c * 64 + r], "({r}, {c})");
        }
    }
}

#[test]
fn transpose_without_barrier_is_a_race() {
    let mut args = [
        f32s(&[64, 64], transpose_input()),
        f32s(&[64, 64], vec![0.0; 4096]),
    ];
    let err = run("transpose.thr", "transpose_no_barrier", &mut args, &[]).expect_err("race");
    match exec_kind(&err) {
        ExecErrorKind::ReadAfterWrite {
            buffer,
            element,
            writer,
            reader,
            writer_stmt,
        } => {
            assert_eq!(buffer, "tile");
            // Thread 1 reads element 1·32 + 0 = 32, stored by thread 32.
            assert_eq!((*reader, *writer, *element), (1, 32, 32));
            assert!(writer_stmt.starts_with("store shared x1 %tile"));
        }
        other => panic!("unexpected {other}"),
    }
    assert!(err.to_string().contains("race"), "{err}");
    assert!(
        err.to_string().contains("block (0, 0, 0), thread 1"),
        "{err}"
    );
}

#[test]
fn cp_async_then_wait_then_barrier_is_correct() {
    let input: Vec<f64> = (0..512).map(|i| i as f64 + 1.0).collect();
    let mut args = [f32s(&[512], input.clone()), f32s(&[512], vec![-1.0; 512])];
    let stats = run("cp_async.thr", "async_reverse", &mut args, &[]).expect("run");
    let out = floats(&args[1]);
    for t in 0..128 {
        for j in 0..4 {
            let source_thread = 127 - t;
            // Threads 120.. zero-filled their chunk (the guard is false).
            let expected = if source_thread < 120 {
                input[source_thread * 4 + j]
            } else {
                0.0
            };
            assert_eq!(out[t * 4 + j], expected, "thread {t} element {j}");
        }
    }
    assert_eq!(stats.async_copies, 128);
}

#[test]
fn reading_before_cp_async_wait_is_an_error() {
    let mut args = [f32s(&[512], vec![1.0; 512]), f32s(&[512], vec![0.0; 512])];
    let err = run("cp_async.thr", "async_no_wait", &mut args, &[]).expect_err("no wait");
    assert!(
        err.to_string().contains("read before cp.async wait"),
        "{err}"
    );
    match exec_kind(&err) {
        ExecErrorKind::ReadBeforeAsyncWait { reader, issuer, .. } => {
            assert_eq!((*reader, *issuer), (0, 127));
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn cp_async_wait_without_barrier_is_a_race() {
    let mut args = [f32s(&[512], vec![1.0; 512]), f32s(&[512], vec![0.0; 512])];
    let err = run("cp_async.thr", "async_no_barrier", &mut args, &[]).expect_err("race");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::ReadAfterWrite { .. }),
        "{err}"
    );
}

#[test]
fn wait_group_leaves_the_newest_groups_in_flight() {
    let input: Vec<f64> = (0..1024).map(|i| i as f64).collect();
    // Group 0 (first half) is complete after `wait_group 1`.
    let mut args = [f32s(&[1024], input.clone()), f32s(&[512], vec![0.0; 512])];
    run(
        "cp_async.thr",
        "async_two_groups",
        &mut args,
        &[("pick", 0)],
    )
    .expect("run");
    let out = floats(&args[1]);
    assert_eq!(out[0..4], input[508..512]);
    // Group 1 is still in flight.
    let mut args = [f32s(&[1024], input), f32s(&[512], vec![0.0; 512])];
    let err = run(
        "cp_async.thr",
        "async_two_groups",
        &mut args,
        &[("pick", 1)],
    )
    .expect_err("in flight");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::ReadBeforeAsyncWait { .. }),
        "{err}"
    );
}

/// `c + a·b` for row-major matrices, in f64 (exact for the test data).
fn matmul(m: usize, n: usize, k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut out = c.to_vec();
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0;
            for kk in 0..k {
                s += a[i * k + kk] * b[kk * n + j];
            }
            out[i * n + j] += s;
        }
    }
    out
}

/// Small values whose products and sums are exact in f16 inputs / f32
/// accumulators, with no symmetry a wrong index could hide behind.
fn operand(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|i| (((i * 7 + seed * 13) % 17) as f64 - 8.0) * 0.25)
        .collect()
}

fn mma_case(file: &str, kernel: &str, m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let (a, b, c) = (operand(m * k, 1), operand(k * n, 2), operand(m * n, 3));
    let expected = matmul(m, n, k, &a, &b, &c);
    let mut args = [
        f16s(&[m, k], a),
        f16s(&[k, n], b),
        f32s(&[m, n], c),
        f32s(&[m, n], vec![f64::NAN; m * n]),
    ];
    run(file, kernel, &mut args, &[]).expect("run");
    (floats(&args[3]), expected)
}

#[test]
fn mma_m16n8k16_on_sm80_matches_a_plain_matmul() {
    let (d, expected) = mma_case("mma_sm80.thr", "mma_m16n8k16", 16, 8, 16);
    assert_eq!(d, expected);
}

#[test]
fn mma_with_a_wrong_a_formula_gives_a_wrong_result() {
    let (d, expected) = mma_case("mma_sm80.thr", "mma_wrong_a", 16, 8, 16);
    assert!(d.iter().all(|x| x.is_finite()));
    assert_ne!(d, expected);
}

#[test]
fn mfma_32x32x8_on_gfx942_matches_a_plain_matmul() {
    let (d, expected) = mma_case("mfma_gfx942.thr", "mfma_32x32x8", 32, 32, 8);
    assert_eq!(d, expected);
    let (d, expected) = mma_case("mfma_gfx942.thr", "mfma_32x32x8_wrong_a", 32, 32, 8);
    assert_ne!(d, expected);
}

#[test]
fn mfma_16x16x16_on_gfx942_matches_a_plain_matmul() {
    let (d, expected) = mma_case("mfma_gfx942.thr", "mfma_16x16x16", 16, 16, 16);
    assert_eq!(d, expected);
}

#[test]
fn mma_on_the_wrong_target_fails_to_verify() {
    let (m, _) = module("mma_sm80.thr");
    let gfx = target::builtin("gfx942").expect("gfx942");
    let err = thread::verify_module(&m, &gfx).expect_err("no mma.m16n8k16 on gfx942");
    assert!(err.to_string().contains("no matrix atom"), "{err}");
}

#[test]
fn divergent_barrier_is_rejected_before_running() {
    let text =
        std::fs::read_to_string(dir().join("errors/barrier_in_thread_if.thr")).expect("read");
    let m = thread::parse_module(&text).expect("parse");
    let k = &m.kernels[0];
    let mut args = [f32s(&[128], vec![0.0; 128])];
    let err = simt::run(
        k,
        &target::builtin("sm_80").expect("sm_80"),
        &mut args,
        &SimtOptions::default(),
    )
    .expect_err("divergent");
    assert!(matches!(err, SimtError::Verify(_)), "{err}");
}

#[test]
fn errors_name_the_statement_and_span() {
    let text = std::fs::read_to_string(dir().join("transpose.thr")).expect("read");
    let mut args = [
        f32s(&[64, 64], transpose_input()),
        f32s(&[64, 64], vec![0.0; 4096]),
    ];
    let err = run("transpose.thr", "transpose_no_barrier", &mut args, &[]).expect_err("race");
    let at = err.location().expect("location");
    // The second loop (statement #1 of the body), its first statement.
    assert_eq!(at.path.to_string(), "#1.0");
    let line = thread::line_of(&text, at.span.start);
    assert!(
        text.lines()
            .nth(line as usize - 1)
            .is_some_and(|l| l.contains("load shared"))
    );
}

// ---- the parser never panics ----

fn corpus() -> Vec<String> {
    files(&dir())
        .into_iter()
        .map(|p| std::fs::read_to_string(p).expect("read"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn parser_never_panics_on_mutated_input(
        file in 0usize..64,
        edits in proptest::collection::vec((any::<usize>(), 0usize..24, 0usize..4), 1..6),
    ) {
        const PIECES: [&str; 24] = [
            "", "%", "@", "(", ")", "[", "]", "{", "}", "<-", "-", "x4", "\"", "#", "9999999999999",
            "f16(", "barrier", "when", "else", "mma", "for", ".", "\u{e9}", "\n",
        ];
        let corpus = corpus();
        let mut text = corpus[file % corpus.len()].clone();
        for (at, piece, mode) in edits {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match mode {
                0 => text.insert_str(at, PIECES[piece]),
                1 => text.truncate(at),
                _ => {
                    let end = (at + piece).min(text.len());
                    let mut end = end;
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, PIECES[(piece + mode) % PIECES.len()]);
                }
            }
        }
        if let Ok(m) = thread::parse_module(&text) {
            let printed = thread::print_module(&m);
            let again = thread::parse_module(&printed);
            prop_assert!(again.is_ok(), "printed text does not parse: {:?}", again.err());
            prop_assert_eq!(thread::print_module(&again.expect("checked above")), printed);
            for target in ["sm_80", "gfx942"] {
                let _ = thread::verify_module(&m, &target::builtin(target).expect("builtin"));
            }
        }
    }
}

#[test]
fn shuffles_follow_the_width_rules() {
    let mut args = [Tensor::from_i64(DType::I32, vec![128], vec![0; 128]).expect("tensor")];
    run("shuffle.thr", "shfl_modes", &mut args, &[]).expect("run");
    let out = floats(&args[0]);
    for t in 0..32usize {
        let down = if t % 8 < 7 { t + 1 } else { t };
        let idx = t - t % 8 + 3;
        let up = if t >= 2 { t - 2 } else { t };
        let xor = t ^ 5;
        let expected = [down, idx, up, xor].map(|l| (l * 10) as f64);
        for (mode, e) in expected.into_iter().enumerate() {
            assert_eq!(out[mode * 32 + t], e, "mode {mode} lane {t}");
        }
    }
}

#[test]
fn shuffle_from_an_inactive_lane_is_an_error() {
    let mut args = [Tensor::from_i64(DType::I32, vec![32], vec![0; 32]).expect("tensor")];
    let err = run("shuffle.thr", "shfl_inactive", &mut args, &[]).expect_err("inactive");
    match exec_kind(&err) {
        ExecErrorKind::ShuffleInactive { lane, source_lane } => {
            assert_eq!((*lane, *source_lane), (0, 16));
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn huge_storage_is_refused_not_allocated() {
    let text = "thread_ir 0.1\n\nkernel @k(%x: global f32[4]) grid(1, 1, 1) threads(32) {\n  shared %s: f32[1099511627776] align(4)\n}\n";
    let m = thread::parse_module(text).expect("parse");
    let mut args = [f32s(&[4], vec![0.0; 4])];
    // A description that states no shared capacity: the interpreter itself
    // must refuse to allocate 4 TiB.
    let mut open_ended = target::builtin("sm_80").expect("sm_80");
    for space in &mut open_ended.memory_spaces {
        space.capacity_bytes = None;
    }
    let err = simt::run(
        &m.kernels[0],
        &open_ended,
        &mut args,
        &SimtOptions::default(),
    )
    .expect_err("too large");
    assert!(matches!(err, SimtError::TooLarge { .. }), "{err}");
}

#[test]
fn wgmma_through_swizzled_descriptors_matches_a_plain_matmul() {
    let (d, expected) = mma_case("wgmma_sm90a.thr", "wgmma_m64n16k16", 64, 16, 16);
    assert_eq!(d, expected);
    // The same bytes stored without the swizzle are read elsewhere.
    let (d, expected) = mma_case("wgmma_sm90a.thr", "wgmma_unswizzled_a", 64, 16, 16);
    assert!(d.iter().all(|x| x.is_finite()));
    assert_ne!(d, expected);
}

/// `stmatrix` puts lane `L`'s elements `2j + e` of matrix `j` at row `L/4`,
/// column `2(L%4) + e` of that matrix (transposed: row and column swapped),
/// the PTX ISA's fragment, computed here without the description.
#[test]
fn stmatrix_places_each_lane_s_elements_by_the_ptx_fragment() {
    let input: Vec<f64> = (0..256).map(|i| f64::from(i as u16)).collect();
    for (kernel, trans) in [("store", false), ("store_trans", true)] {
        let mut args = [f16s(&[256], input.clone()), f16s(&[256], vec![0.0; 256])];
        let stats = run("stmatrix_sm90a.thr", kernel, &mut args, &[]).expect(kernel);
        assert_eq!(stats.matrix_stores, 1, "{kernel}");
        let got = floats(&args[1]);
        let mut want = vec![f64::NAN; 256];
        for lane in 0..32 {
            for j in 0..4 {
                for e in 0..2 {
                    let (r, c) = (lane / 4, 2 * (lane % 4) + e);
                    let (r, c) = if trans { (c, r) } else { (r, c) };
                    let (row, col) = ((j % 2) * 8 + r, (j / 2) * 8 + c);
                    want[row * 16 + col] = input[lane * 8 + 2 * j + e];
                }
            }
        }
        assert_eq!(got, want, "{kernel}");
    }
}

#[test]
fn stmatrix_then_a_read_without_barrier_is_a_race() {
    let mut args = [f16s(&[256], vec![1.0; 256]), f16s(&[256], vec![0.0; 256])];
    let err = run("stmatrix_sm90a.thr", "store_race", &mut args, &[]).expect_err("race");
    match exec_kind(&err) {
        ExecErrorKind::ReadAfterWrite {
            buffer,
            writer_stmt,
            ..
        } => {
            assert_eq!(buffer, "S");
            assert!(writer_stmt.starts_with("stmatrix"), "{writer_stmt}");
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn wgmma_with_a_from_registers_matches_a_plain_matmul() {
    let (d, expected) = mma_case("wgmma_sm90a.thr", "wgmma_register_a", 64, 16, 16);
    assert_eq!(d, expected);
    // Slots loaded from the wrong columns give another product.
    let (d, expected) = mma_case("wgmma_sm90a.thr", "wgmma_register_a_wrong", 64, 16, 16);
    assert!(d.iter().all(|x| x.is_finite()));
    assert_ne!(d, expected);
}

#[test]
fn wgmma_accumulators_are_off_limits_until_waited_for() {
    let (m, k) = (64, 16);
    let mut args = [
        f16s(&[m, k], operand(m * k, 1)),
        f16s(&[k, 16], operand(k * 16, 2)),
        f32s(&[m, 16], operand(m * 16, 3)),
        f32s(&[m, 16], vec![0.0; m * 16]),
    ];
    let err = run("wgmma_sm90a.thr", "wgmma_read_before_wait", &mut args, &[])
        .expect_err("pending accumulator");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::AsyncMmaPending { .. }),
        "{err}"
    );
}

#[test]
fn wgmma_operands_may_not_change_until_waited_for() {
    let (m, k) = (64, 16);
    let mut args = [
        f16s(&[m, k], operand(m * k, 1)),
        f16s(&[k, 16], operand(k * 16, 2)),
        f32s(&[m, 16], operand(m * 16, 3)),
        f32s(&[m, 16], vec![0.0; m * 16]),
    ];
    let err = run(
        "wgmma_sm90a.thr",
        "wgmma_overwrite_before_wait",
        &mut args,
        &[],
    )
    .expect_err("operand written while read");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::WriteDuringAsyncMma { .. }),
        "{err}"
    );
}

// ---- bulk tensor copies and phased barriers ----

#[test]
fn tma_boxes_feed_wgmma_in_the_same_swizzle() {
    let (m, n, k) = (64, 64, 64);
    let (a, b) = (operand(m * k, 1), operand(k * n, 2));
    let expected = matmul(m, n, k, &a, &b, &vec![0.0; m * n]);
    let mut args = [
        f16s(&[m, k], a),
        f16s(&[k, n], b),
        f32s(&[m, n], vec![f64::NAN; m * n]),
    ];
    let stats = run("tma_sm90a.thr", "tma_gemm", &mut args, &[]).expect("run");
    assert_eq!(floats(&args[2]), expected);
    assert_eq!(stats.async_copies, 2);
}

/// What a 64 × 64 box of a 64 × 64 buffer `a` at (32, 0) holds: rows
/// 32.. of `a`, then zeros where the box hangs over the edge.
fn box_from_row_32(a: &[f64]) -> Vec<f64> {
    (0..64 * 64)
        .map(|i| {
            if i / 64 + 32 < 64 {
                a[i + 32 * 64]
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn tma_fills_the_part_of_a_box_outside_the_buffer_with_zeros() {
    let a = operand(64 * 64, 5);
    let mut args = [
        f16s(&[64, 64], a.clone()),
        f16s(&[64, 64], vec![-1.0; 64 * 64]),
    ];
    run("tma_sm90a.thr", "tma_edge", &mut args, &[]).expect("run");
    assert_eq!(floats(&args[1]), box_from_row_32(&a));
}

#[test]
fn tma_data_is_off_limits_until_the_barrier_wait() {
    let mut args = [
        f16s(&[64, 64], operand(4096, 1)),
        f16s(&[64, 64], vec![0.0; 4096]),
    ];
    let err = run("tma_sm90a.thr", "tma_read_before_wait", &mut args, &[]).expect_err("early read");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::ReadBeforeBarrierWait { .. }),
        "{err}"
    );
}

/// Overwriting a `tma_load`'s data (shared memory a later buffer
/// reuses) is ordered by the barrier phase too: after the wait it is a
/// plain write, before it a race with the copy.
#[test]
fn tma_data_is_overwritten_only_after_the_barrier_wait() {
    let mut args = [
        f16s(&[64, 64], operand(4096, 1)),
        f16s(&[64, 64], vec![0.0; 4096]),
    ];
    run("tma_sm90a.thr", "tma_overwrite_after_wait", &mut args, &[]).expect("run");
    assert!(floats(&args[1])[..128].iter().all(|&v| v == 2.0));
    let err = run("tma_sm90a.thr", "tma_overwrite_before_wait", &mut args, &[])
        .expect_err("early overwrite");
    match exec_kind(&err) {
        ExecErrorKind::WriteBeforeBarrierWait { writer, .. } => {
            assert!(*writer < 32, "{err}");
        }
        other => panic!("expected a write before the barrier wait, got {other}"),
    }
}

#[test]
fn a_wait_for_bytes_that_never_arrive_is_reported() {
    let mut args = [
        f16s(&[64, 64], operand(4096, 1)),
        f16s(&[64, 64], vec![0.0; 4096]),
    ];
    let err = run("tma_sm90a.thr", "tma_bytes_never_arrive", &mut args, &[]).expect_err("stuck");
    match exec_kind(&err) {
        ExecErrorKind::BarrierWaitStuck {
            bytes, arrivals, ..
        } => {
            assert_eq!((*bytes, *arrivals), (8192, 0), "{err}");
        }
        other => panic!("expected a stuck wait, got {other}"),
    }
}

#[test]
fn a_stage_is_refilled_only_after_its_readers_released_it() {
    let a = operand(64 * 64, 5);
    let mut args = [
        f16s(&[64, 64], a.clone()),
        f16s(&[64, 64], vec![-1.0; 64 * 64]),
    ];
    run("tma_sm90a.thr", "tma_refill_after_release", &mut args, &[]).expect("run");
    assert_eq!(floats(&args[1]), box_from_row_32(&a));
    // Arriving before the read releases nothing.
    let mut args = [f16s(&[64, 64], a), f16s(&[64, 64], vec![0.0; 64 * 64])];
    let err = run(
        "tma_sm90a.thr",
        "tma_refill_without_release",
        &mut args,
        &[],
    )
    .expect_err("refill over unreleased reads");
    match exec_kind(&err) {
        ExecErrorKind::WriteAfterRead { reader, writer, .. } => {
            assert_eq!((*reader, *writer), (1, 0), "{err}");
        }
        other => panic!("expected a write-after-read race, got {other}"),
    }
}

// ---- warp roles: groups that wait for each other ----

#[test]
fn a_producer_warp_and_consumer_warps_share_a_ring_of_stages() {
    let a = operand(8 * 64, 3);
    let expected: Vec<f64> = (0..64)
        .map(|c| (0..8).map(|k| a[k * 64 + c]).sum::<f64>())
        .collect();
    let mut args = [f16s(&[8, 64], a), f32s(&[64], vec![f64::NAN; 64])];
    let stats = run("warp_roles_sm90a.thr", "ws_column_sums", &mut args, &[]).expect("run");
    let got = floats(&args[1]);
    for (c, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-3 * e.abs().max(1.0),
            "column {c}: {g} vs {e}"
        );
    }
    assert_eq!(stats.async_copies, 8);
}

/// An element read by more threads than the interpreter tracks one by
/// one is overwritten safely once every reader released it through a
/// phased barrier; a write that only half of them released is a race
/// with one of the others.
#[test]
fn many_readers_are_released_by_a_phased_barrier() {
    let mut args = [f32s(&[2], vec![3.0, 4.0]), f32s(&[64], vec![0.0; 64])];
    run(
        "warp_roles_sm90a.thr",
        "ws_broadcast_released",
        &mut args,
        &[],
    )
    .expect("run");
    assert!(floats(&args[1]).iter().all(|&v| v == 3.0));
    let mut args = [f32s(&[2], vec![3.0, 4.0]), f32s(&[64], vec![0.0; 64])];
    let err = run(
        "warp_roles_sm90a.thr",
        "ws_broadcast_half_released",
        &mut args,
        &[],
    )
    .expect_err("overwrite over unreleased reads");
    match exec_kind(&err) {
        ExecErrorKind::WriteAfterRead { reader, writer, .. } => {
            assert!((32..64).contains(reader) && *writer == 64, "{err}");
        }
        other => panic!("expected a write-after-read race, got {other}"),
    }
}

#[test]
fn roles_that_wait_for_each_other_forever_are_reported() {
    let mut args = [f16s(&[8, 64], operand(512, 1)), f32s(&[64], vec![0.0; 64])];
    let err =
        run("warp_roles_sm90a.thr", "ws_never_released", &mut args, &[]).expect_err("deadlock");
    match exec_kind(&err) {
        // The producer stopped first: at its third stage, whose readers
        // never arrive.
        ExecErrorKind::BarrierWaitStuck {
            barrier, arrivals, ..
        } => {
            assert_eq!((barrier.as_str(), *arrivals), ("empty", 64), "{err}");
            assert_eq!(err.location().and_then(|l| l.thread), Some(64), "{err}");
        }
        other => panic!("expected a stuck wait, got {other}"),
    }
}

#[test]
fn a_numbered_barrier_hands_one_warps_writes_to_another() {
    let mut args = [f32s(&[32], vec![f64::NAN; 32])];
    let stats = run("warp_roles_sm90a.thr", "named_handoff", &mut args, &[]).expect("run");
    let expected: Vec<f64> = (0..32).map(|t| 2.0 * f64::from(t)).collect();
    assert_eq!(floats(&args[0]), expected);
    assert_eq!(stats.barriers, 1);
}

#[test]
fn a_numbered_barrier_missing_its_arrivals_is_reported() {
    let mut args = [f32s(&[32], vec![0.0; 32])];
    let err = run(
        "warp_roles_sm90a.thr",
        "named_never_arrives",
        &mut args,
        &[],
    )
    .expect_err("stuck");
    assert!(
        matches!(
            exec_kind(&err),
            ExecErrorKind::NamedBarrierStuck {
                id: 1,
                arrived: 32,
                expected: 64
            }
        ),
        "{err}"
    );
}

#[test]
fn a_read_before_the_numbered_barrier_is_a_race() {
    let mut args = [f32s(&[32], vec![0.0; 32])];
    let err = run("warp_roles_sm90a.thr", "named_unordered", &mut args, &[]).expect_err("race");
    assert!(
        matches!(
            exec_kind(&err),
            ExecErrorKind::ReadAfterWrite {
                writer: 0,
                reader: 32,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn part_of_a_warp_cannot_arrive_at_a_numbered_barrier() {
    let mut args = [f32s(&[32], vec![0.0; 32])];
    let err =
        run("warp_roles_sm90a.thr", "named_half_warp", &mut args, &[]).expect_err("half warp");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::NamedBarrier { id: 1, .. }),
        "{err}"
    );
}

#[test]
fn register_reallocation_leaves_values_alone_and_needs_whole_warpgroups() {
    let mut args = [f32s(&[256], vec![f64::NAN; 256])];
    run("warp_roles_sm90a.thr", "registers_by_role", &mut args, &[]).expect("run");
    let expected: Vec<f64> = (0..256)
        .map(|t| if t < 128 { f64::from(t) } else { -f64::from(t) })
        .collect();
    assert_eq!(floats(&args[0]), expected);
    let mut args = [f32s(&[256], vec![0.0; 256])];
    let err = run(
        "warp_roles_sm90a.thr",
        "registers_by_part_of_a_group",
        &mut args,
        &[],
    )
    .expect_err("part of a warpgroup");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::SetMaxRegisters(_)),
        "{err}"
    );
}

fn ints(t: &Tensor) -> Vec<i64> {
    match &t.data {
        TensorData::Int(v) => v.clone(),
        other => panic!("not integers: {other:?}"),
    }
}

#[test]
fn warpgroups_that_take_turns_run_apart_and_alternate() {
    let mut args = [Tensor::from_i64(DType::I32, vec![8], vec![-1; 8]).expect("tensor")];
    let stats = run("warp_roles_sm90a.thr", "turns", &mut args, &[]).expect("run");
    assert_eq!(ints(&args[0]), vec![0, 1, 0, 1, 0, 1, 0, 1]);
    // Two block barriers and eight completed turns.
    assert_eq!(stats.barriers, 10);
    // The same with the barrier numbers computed from the thread index
    // and no branch: the block stays one group until the second
    // warpgroup cannot take its first turn, and parts there; the second
    // group's last hand-over is left pending.
    let mut args = [Tensor::from_i64(DType::I32, vec![8], vec![-1; 8]).expect("tensor")];
    run("warp_roles_sm90a.thr", "turns_computed", &mut args, &[]).expect("run");
    assert_eq!(ints(&args[0]), vec![0, 1, 0, 1, 0, 1, 0, 1]);
    let mut args = [Tensor::from_i64(DType::I32, vec![8], vec![0; 8]).expect("tensor")];
    let err = run("warp_roles_sm90a.thr", "turns_not_taken", &mut args, &[]).expect_err("race");
    assert!(
        matches!(
            exec_kind(&err),
            ExecErrorKind::ReadAfterWrite { .. } | ExecErrorKind::WriteWrite { .. }
        ),
        "{err}"
    );
}

/// A kernel whose every thread loops `count` times (a literal, or
/// `thread_idx + %n`, known only while running, when `count` is `None`)
/// over a register update, with a `shared` buffer of `shared` elements.
fn looping_kernel(count: Option<u64>, shared: u64) -> Module {
    let count = count.map_or("thread_idx + %n".to_string(), |c| c.to_string());
    let text = format!(
        "thread_ir 0.1\n\nkernel @k(%x: global f32[4], %n: i32) grid(2, 1, 1) threads(32) {{\n  shared %s: f32[{shared}] align(4)\n  var %a: f32\n  for %i from 0 count {count} step 1 {{\n    %a = f32(1.0)\n  }}\n}}\n"
    );
    thread::parse_module(&text).expect("parse")
}

fn run_looping(m: &Module, n: i64, options: SimtOptions) -> Result<Stats, SimtError> {
    // A description that states no shared capacity: the interpreter's own
    // limits decide.
    let mut target = target::builtin("sm_80").expect("sm_80");
    for space in &mut target.memory_spaces {
        space.capacity_bytes = None;
    }
    let mut args = [f32s(&[4], vec![0.0; 4])];
    let options = SimtOptions {
        symbols: [("n".to_string(), n)].into(),
        ..options
    };
    simt::run(&m.kernels[0], &target, &mut args, &options)
}

#[test]
fn a_loop_with_a_fixed_count_past_the_limits_is_refused_before_it_runs() {
    // 10^9 iterations in each of 2 blocks: refused at once.
    let m = looping_kernel(Some(1_000_000_000), 1);
    let start = std::time::Instant::now();
    let err = run_looping(&m, 0, SimtOptions::default()).expect_err("10^9 iterations");
    assert!(
        matches!(err, SimtError::WorkLimit { needed, .. } if needed > 4_000_000_000),
        "{err}"
    );
    assert!(err.is_limit());
    assert!(start.elapsed().as_secs() < 5);
    // 1000 iterations: 2 blocks × (1 + 1 + 1000 × 2) steps, × 32 threads.
    let m = looping_kernel(Some(1000), 1);
    let stats = run_looping(&m, 0, SimtOptions::default()).expect("fits");
    assert_eq!(stats.steps, 2 * 2002);
    let tight = SimtOptions {
        work_limit: 2 * 2002 * 32 - 1,
        ..SimtOptions::default()
    };
    let err = run_looping(&m, 0, tight).expect_err("one thread step short");
    assert!(
        matches!(
            err,
            SimtError::WorkLimit {
                what: "thread steps",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_loop_with_a_run_time_count_stops_at_the_thread_step_limit() {
    let m = looping_kernel(None, 1);
    let options = SimtOptions {
        work_limit: 100_000,
        ..SimtOptions::default()
    };
    let err = run_looping(&m, 1_000_000_000, options).expect_err("runaway");
    assert!(
        matches!(exec_kind(&err), ExecErrorKind::WorkLimit(100_000)),
        "{err}"
    );
    assert!(err.is_limit());
}

#[test]
fn storage_past_the_memory_limit_is_refused_before_the_run() {
    // 2^27 shared elements with their race records: past 512 MiB.
    let m = looping_kernel(Some(1), 1 << 27);
    let err = run_looping(&m, 0, SimtOptions::default()).expect_err("too much storage");
    assert!(matches!(err, SimtError::MemoryLimit { .. }), "{err}");
    assert!(err.is_limit());
    let small = looping_kernel(Some(1), 1024);
    let tight = SimtOptions {
        memory_limit: 1024,
        ..SimtOptions::default()
    };
    let err = run_looping(&small, 0, tight).expect_err("1 KiB");
    assert!(matches!(err, SimtError::MemoryLimit { .. }), "{err}");
    run_looping(&small, 0, SimtOptions::default()).expect("fits the default");
}
