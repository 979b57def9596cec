//! `tilec verify` as a user and a script see it: the listing, the
//! diagnostics at the source line, `--json`, and the exit codes.

use std::process::{Command, Output};

mod common;
use common::{code, json, stderr, stdout, workspace_root};

fn tilec(args: &[&str]) -> Output {
    let result = Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(args)
        .current_dir(workspace_root())
        .env("NO_COLOR", "1")
        .env_remove("TILEC_PLUGIN_PATH")
        .output();
    match result {
        Ok(output) => output,
        Err(e) => panic!("cannot start tilec: {e}"),
    }
}

#[test]
fn an_example_verifies_and_exits_zero() {
    let out = tilec(&["verify", "examples/gemm.py"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("verify `main` (target sm_80):"), "{text}");
    assert!(text.contains(" 0 refuted, 0 unknown"), "{text}");
    assert!(
        text.contains("proved   region-in-bounds copy src A[by * 128:(by * 128) + 128, k * 32:(k * 32) + 32]  [examples/gemm.py:"),
        "{text}"
    );
    assert!(text.contains("proved   shared-memory"), "{text}");
    assert!(text.contains("examples/gemm.py: verified ("), "{text}");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_refutation_shows_the_counterexample_at_the_source_line() {
    let out = tilec(&["verify", "core/tests/verify/parallel_off_by_one.py"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: refuted: load outside shared buffer `S`"),
        "{err}"
    );
    assert!(
        err.contains("--> core/tests/verify/parallel_off_by_one.py:15:17"),
        "{err}"
    );
    assert!(
        err.contains("B[bx * block_M + i, j] = S[i + 1, j]"),
        "{err}"
    );
    assert!(
        err.contains("fails for bx = 0, tx = 0, i = 15, j = 0"),
        "{err}"
    );
    assert!(err.contains("index 0 (i + 1) = 16"), "{err}");
    let text = stdout(&out);
    assert!(
        text.contains("refuted  in-bounds        load S[i + 1, j]  [core/tests/verify/parallel_off_by_one.py:15]"),
        "{text}"
    );
    assert!(text.contains("NOT verified"), "{text}");
}

#[test]
fn symbolic_sizes_and_defines_reach_the_verdict() {
    // N unbounded: refuted with N = 257.
    let out = tilec(&["verify", "core/tests/verify/dynamic_store_no_assume.py"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("fails for N = 257"),
        "{}",
        stderr(&out)
    );
    // With the assumption, proved.
    let out = tilec(&["verify", "core/tests/verify/good/dynamic_store_assumed.py"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A -D that makes a shared tile too large for the target.
    let out = tilec(&[
        "verify",
        "examples/gemm.py",
        "-D",
        "block_M=512",
        "-D",
        "block_K=256",
    ]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("refuted: shared memory exceeds the target's 166912 bytes"),
        "{}",
        stderr(&out)
    );
    // The same kernel on a target with less shared memory, by --target.
    let out = tilec(&["verify", "examples/gemm.py", "--target", "gfx942"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn ragged_global_tiles_are_guarded_not_errors() {
    let out = tilec(&["verify", "examples/gemm.py", "-D", "M=200"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("guarded  region-in-bounds copy src A["),
        "{text}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("warning: refuted: `copy` region outside global buffer `A`"),
        "{err}"
    );
    assert!(err.contains("allowed by the out-of-bounds rule"), "{err}");
}

#[test]
fn json_lists_every_obligation() {
    let out = tilec(&["verify", "core/tests/verify/index_overflow.py", "--json"]);
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["target"], "sm_80");
    let function = &doc["functions"][0];
    assert_eq!(function["refuted"], 1);
    let refuted: Vec<&serde_json::Value> = function["obligations"]
        .as_array()
        .expect("obligations")
        .iter()
        .filter(|o| o["status"] == "refuted")
        .collect();
    assert_eq!(refuted.len(), 1);
    assert_eq!(refuted[0]["kind"], "no-overflow");
    assert_eq!(refuted[0]["line"], 20);
    assert_eq!(refuted[0]["counterexample"]["values"]["N"], 32768);
    assert_eq!(doc["diagnostics"][0]["severity"], "error");
}

#[test]
fn bad_input_and_flags_use_the_documented_exit_codes() {
    let out = tilec(&["verify", "no/such/file.py"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let out = tilec(&["verify", "examples/gemm.py", "--target", "nonesuch"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("unknown target `nonesuch`"),
        "{}",
        stderr(&out)
    );
    let out = tilec(&["verify", "examples/gemm.py", "--index-bits", "7"]);
    assert_eq!(code(&out), 2);
    let out = tilec(&["verify", "--help"]);
    assert_eq!(code(&out), 0);
    for word in [
        "--kernel",
        "-D",
        "--target",
        "--json",
        "--timeout-ms",
        "Exit codes",
    ] {
        assert!(stdout(&out).contains(word), "`{word}` missing");
    }
}

#[test]
fn tile_ir_input_is_verified_too() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("verify-tir");
    let _ = std::fs::create_dir_all(&dir);
    let tir = dir.join("off_by_one.tir");
    let out = tilec(&[
        "compile",
        "core/tests/verify/parallel_off_by_one.py",
        "-o",
        tir.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = tilec(&["verify", tir.to_str().expect("utf-8 path")]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stdout(&out).contains("refuted  in-bounds        load S[i + 1, j]"));
}

#[test]
fn compile_verify_makes_a_refutation_an_error() {
    let out = tilec(&["compile", "examples/gemm.py", "--verify"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("kernel"), "no Tile IR written");
    let out = tilec(&[
        "compile",
        "core/tests/verify/parallel_off_by_one.py",
        "--verify",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: refuted: load outside shared buffer `S`"),
        "{err}"
    );
    assert!(err.contains("parallel_off_by_one.py:15:17"), "{err}");
    // Without the flag the same kernel compiles.
    let out = tilec(&["compile", "core/tests/verify/parallel_off_by_one.py"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn compile_verify_drops_the_guards_of_proved_accesses() {
    let file = "core/tests/verify/good/dynamic_store_assumed.py";
    let guards = |args: &[&str]| {
        let out = tilec(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .matches(" when ")
            .count()
    };
    assert_eq!(guards(&["compile", file, "--backend", "sim"]), 4);
    assert_eq!(
        guards(&["compile", file, "--backend", "sim", "--verify"]),
        0
    );
}

#[test]
fn layout_pipeline_and_register_obligations_are_listed() {
    let file = "core/tests/verify/pipeline_too_few_stages.py";
    let out = tilec(&["verify", file, "--json"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let doc = json(&out);
    let obligations = doc["functions"][0]["obligations"]
        .as_array()
        .expect("obligations");
    for kind in [
        "layout-injective",
        "fragment-coverage",
        "pipeline-reuse",
        "pipeline-order",
    ] {
        assert!(
            obligations.iter().any(|o| o["kind"] == kind),
            "{kind} missing"
        );
    }
    let refuted: Vec<&serde_json::Value> = obligations
        .iter()
        .filter(|o| o["status"] == "refuted")
        .collect();
    assert_eq!(refuted.len(), 2, "{refuted:?}");
    // The lists are not followed (too deep for two stages): the schedule
    // tilec runs instead, one iteration ahead in two buffers, is proved
    // as well, and is free of the race.
    let reuse: Vec<&serde_json::Value> = obligations
        .iter()
        .filter(|o| o["kind"] == "pipeline-reuse")
        .collect();
    assert_eq!(reuse.len(), 4, "{reuse:?}");
    assert_eq!(
        reuse.iter().filter(|o| o["status"] == "proved").count(),
        2,
        "{reuse:?}"
    );
    for o in &refuted {
        assert_eq!(o["kind"], "pipeline-reuse");
        assert_eq!(o["line"], 31);
        assert_eq!(o["counterexample"]["values"]["k"], 0);
        assert_eq!(o["counterexample"]["values"]["k'"], 2);
        assert_eq!(o["counterexample"]["shown"]["version written"], 0);
    }
    // Besides the refutation, the front end warns that the lowering does
    // not follow these lists (it pipelines the loop as without them).
    let messages: Vec<&str> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("a pipelined copy overwrites a stage of `A_shared`")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("lists of this loop are not followed")),
        "{messages:?}"
    );

    // The same kernel as Tile IR text: the stage lists survive.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("verify-pipeline-tir");
    let _ = std::fs::create_dir_all(&dir);
    let tir = dir.join("pipeline.tir");
    let tir = tir.to_str().expect("utf-8 path");
    let out = tilec(&["compile", file, "-o", tir]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = tilec(&["verify", tir]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("refuted  pipeline-reuse   A_shared (2 versions, copies 2 iterations ahead) is not overwritten while gemm reads it in iteration k"),
        "{}",
        stdout(&out)
    );

    // Registers: sm_90a has a budget per block, sm_80 none.
    let file = "core/tests/verify/registers_over_budget.py";
    let out = tilec(&["verify", file, "--target", "sm_90a"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "refuted  registers        registers of C_local, C_cast (estimate) fit 65536 per block of the target"
        ),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert!(
        err.contains(
            "error: refuted: the registers the kernel keeps per thread exceed the target's budget"
        ),
        "{err}"
    );
    assert!(err.contains("registers per thread = 768"), "{err}");
    let out = tilec(&["verify", file]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stdout(&out).contains(" registers "), "{}", stdout(&out));
}
