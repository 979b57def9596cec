//! Integration tests of the `tilec` binary: flags, exit codes and outputs,
//! observed the way a user or a script sees them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{code, json, stderr, stdout, workspace_root};

fn tilec(args: &[&str]) -> Output {
    let result = Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(args)
        .current_dir(workspace_root())
        .env_remove("NO_COLOR")
        .env_remove("TILEC_PLUGIN_PATH")
        .output();
    match result {
        Ok(output) => output,
        Err(e) => panic!("cannot start tilec: {e}"),
    }
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn help_documents_every_subcommand_and_exit_codes() {
    let out = tilec(&["--help"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for word in [
        "check",
        "compile",
        "run",
        "plugins",
        "--color",
        "Exit codes",
        "usage error",
    ] {
        assert!(text.contains(word), "`{word}` missing from:\n{text}");
    }
}

#[test]
fn each_subcommand_has_help() {
    let cases: &[(&str, &[&str])] = &[
        ("check", &["--kernel", "-D", "--json", "--plugin"]),
        (
            "compile",
            &[
                "--kernel",
                "-D",
                "--emit",
                "tile-ir",
                "--backend",
                "--target",
                "--plugin",
                "--output",
                "--json",
                "P0001",
                "P0002",
            ],
        ),
        (
            "run",
            &[
                "--kernel",
                "-D",
                "--backend",
                "--seed",
                "--check",
                "--dump",
                "--json",
                "--plugin",
            ],
        ),
        ("plugins", &["--plugin", "--json", "TILEC_PLUGIN_PATH"]),
    ];
    for (command, flags) in cases {
        let out = tilec(&[command, "--help"]);
        assert_eq!(code(&out), 0, "{command}: {}", stderr(&out));
        let text = stdout(&out);
        for flag in *flags {
            assert!(
                text.contains(flag),
                "`{command} --help` lacks `{flag}`:\n{text}"
            );
        }
        assert!(text.contains("Exit codes"), "{command}");
    }
}

#[test]
fn version_is_printed() {
    let out = tilec(&["--version"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).starts_with("tilec "));
}

#[test]
fn missing_file_is_a_clear_error() {
    for command in ["check", "compile", "run"] {
        let out = tilec(&[command, "no/such/kernel.py", "--color", "never"]);
        assert_eq!(code(&out), 1, "{command}: {}", stderr(&out));
        let text = stderr(&out);
        assert!(
            text.starts_with("error: cannot read `no/such/kernel.py`: "),
            "{command}: {text}"
        );
        assert!(!text.contains("os error"), "{text}");
        assert!(!text.contains("panicked"), "{text}");
    }
}

#[test]
fn missing_file_in_json_mode() {
    let out = tilec(&["check", "--json", "nope.py"]);
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    let diagnostic = &doc["diagnostics"][0];
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(diagnostic["file"], "nope.py");
    assert!(diagnostic["line"].is_null());
    assert!(
        diagnostic["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot read `nope.py`"))
    );

    let out = tilec(&["run", "--json", "nope.py"]);
    assert_eq!(code(&out), 1);
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["diagnostics"][0]["severity"], "error");
}

#[test]
fn define_without_equals_is_a_usage_error() {
    let out = tilec(&["check", "kernel.py", "-D", "M"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("NAME=VALUE"), "{}", stderr(&out));
}

#[test]
fn define_with_bad_name_is_a_usage_error() {
    let out = tilec(&["run", "kernel.py", "-D", "1M=3"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn unknown_things_are_usage_errors() {
    assert_eq!(code(&tilec(&["frobnicate"])), 2);
    assert_eq!(code(&tilec(&["check"])), 2);
    assert_eq!(code(&tilec(&["run", "k.py", "--seed", "-1"])), 2);
    assert_eq!(code(&tilec(&["check", "k.py", "--color", "sometimes"])), 2);
}

#[test]
fn unavailable_backend_is_refused() {
    for command in ["compile", "run"] {
        let out = tilec(&[command, "k.py", "--backend", "cuda", "--color", "never"]);
        assert_eq!(code(&out), 1, "{command}");
        assert!(
            stderr(&out).contains("backend `cuda` is not available: no plugin provides it"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn ref_backend_refuses_other_outputs_and_targets() {
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--emit",
        "ptx",
        "--color",
        "never",
    ]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("error: backend `ref` emits `tile-ir` only, not `ptx`"),
        "{}",
        stderr(&out)
    );
    let out = tilec(&["compile", "examples/gemm.py", "--target", "sm_99"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("backend `ref` knows no target `sm_99`"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("sm_80, sm_90a, gfx942, apple"),
        "{}",
        stderr(&out)
    );
    // A built-in description is accepted: it is what the passes read.
    let out = tilec(&["compile", "examples/gemm.py", "--target", "sm_90a"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn plan_shared_memory_places_buffers_and_checks_the_target() {
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--target",
        "sm_90a",
        "--passes",
        "plan-shared-memory",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("shared f16[") && text.contains(" at 0 align 16"),
        "{text}"
    );

    // 4 MiB of shared memory: refused at the allocation, as the user's
    // error (not an internal one).
    let out = tilec(&[
        "compile",
        "conformance/corpus/negative/shared_too_large.py",
        "--target",
        "apple",
        "--passes",
        "plan-shared-memory",
        "--color",
        "never",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("needs 4194304 bytes of shared memory")
            && err.contains("target `apple` has 32768"),
        "{err}"
    );
    assert!(err.contains("alloc_shared"), "{err}");
    assert!(!err.contains("bug in tilec"), "{err}");
}

#[test]
fn recorded_layouts_print_and_pins_are_refused_at_the_source() {
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--target",
        "sm_80",
        "--passes",
        "infer-layouts,inject-pipeline",
        "--print-after=inject-pipeline",
        "--time-passes",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    for want in [
        "// ----- IR after inject-pipeline -----",
        "layout swizzled(64)",
        "layout fragment(\"mma.m16n8k16\")",
        "schedule=async(2)",
        "infer-layouts",
    ] {
        assert!(err.contains(want), "`{want}` missing from:\n{err}");
    }

    // A pin written by hand that the lowering cannot realize: the user's
    // error, at the allocation, in the input file.
    let dir = scratch("pinned_layout");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let printed = stdout(&tilec(&["compile", "examples/gemm.py"]));
    let pinned = printed.replacen(
        "alloc %C_local: fragment f32[128, 128]",
        "alloc %C_local: fragment f32[128, 128] layout spread(4)",
        1,
    );
    assert_ne!(pinned, printed, "the accumulator's alloc was not found");
    let file = dir.join("pinned.tir");
    std::fs::write(&file, pinned).expect("write the pinned module");
    let file = file.to_string_lossy().into_owned();
    let out = tilec(&[
        "compile",
        &file,
        "--backend",
        "sim",
        "--target",
        "sm_80",
        "--color",
        "never",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("buffer `C_local` is pinned to layout `spread(4)`")
            && err.contains("pinned.tir:"),
        "{err}"
    );
    assert!(!err.contains("bug in tilec"), "{err}");
}

#[test]
fn lower_tile_ops_ends_the_passes_prints_thread_ir_and_is_the_sim_artifact() {
    let args = [
        "compile",
        "examples/gemm.py",
        "--backend",
        "sim",
        "--target",
        "sm_80",
        "--passes",
        "simplify,infer-layouts,lower-tile-ops",
        "--print-after=lower-tile-ops",
        "--time-passes",
    ];
    let out = tilec(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    for want in [
        "// ----- IR after lower-tile-ops -----\nthread_ir 0.1",
        "ldmatrix",
        "lower-tile-ops ",
        "printing thread IR (lowered by --passes)",
    ] {
        assert!(err.contains(want), "`{want}` missing from:\n{err}");
    }
    // The artifact is the printed thread IR, and what `sim` lowers by itself.
    let printed = err
        .split("// ----- IR after lower-tile-ops -----\n")
        .nth(1)
        .and_then(|rest| rest.split("// ----- pass timing").next())
        .unwrap_or_default();
    assert_eq!(stdout(&out), printed);
    let alone = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "sim",
        "--target",
        "sm_80",
        "--passes",
        "simplify,infer-layouts",
    ]);
    assert_eq!(stdout(&alone), stdout(&out));

    // Only last (a usage error), and only with a target.
    for (passes, exit, message) in [
        (
            "lower-tile-ops,simplify",
            2,
            "`simplify` cannot follow `lower-tile-ops`",
        ),
        ("lower-tile-ops", 1, "none was given (pass `--target`)"),
    ] {
        let out = tilec(&[
            "compile",
            "examples/gemm.py",
            "--passes",
            passes,
            "--color",
            "never",
        ]);
        assert_eq!(code(&out), exit, "{}", stderr(&out));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
}

#[test]
fn missing_explicit_plugin_is_an_error_everywhere() {
    for command in ["check", "compile", "run"] {
        let out = tilec(&[
            command,
            "examples/gemm.py",
            "--plugin",
            "no/such/libplugin.so",
            "--color",
            "never",
        ]);
        assert_eq!(code(&out), 1, "{command}");
        assert!(
            stderr(&out).contains("error: plugin file `no/such/libplugin.so` does not exist"),
            "{command}: {}",
            stderr(&out)
        );
    }
    let out = tilec(&["plugins", "--plugin", "no/such/libplugin.so"]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains("plugin file `no/such/libplugin.so` does not exist"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn plugins_lists_the_built_in_backend_and_the_search_path() {
    let out = tilec(&["plugins"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("ref (built in)\n"), "{text}");
    assert!(text.contains("TILEC_PLUGIN_PATH  (not set)"), "{text}");
    assert!(text.contains("next to tilec"), "{text}");
    let value = json(&tilec(&["plugins", "--json"]));
    assert_eq!(value["plugins"][0]["name"], "ref");
    assert_eq!(value["plugins"][0]["builtin"], true);
    assert_eq!(value["failures"], serde_json::json!([]));
    assert_eq!(value["search"][0]["source"], "exe-dir");
}

#[test]
fn compile_json_lists_the_written_artifact() {
    let dir = scratch("compile_json");
    let _ = std::fs::create_dir_all(&dir);
    let shown = dir.display().to_string();
    let out = tilec(&["compile", "examples/gemm.py", "-o", &shown, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let value = json(&out);
    assert_eq!(value["ok"], true);
    assert_eq!(value["artifacts"][0]["name"], "gemm.tir");
    assert_eq!(value["artifacts"][0]["kind"], "text");
    assert_eq!(value["kernels"], serde_json::json!([]));
    let written = std::fs::read_to_string(dir.join("gemm.tir")).unwrap_or_default();
    assert!(written.starts_with("tile_ir "), "{written}");
}

#[test]
fn color_is_off_when_asked_and_on_when_forced() {
    let plain = tilec(&["check", "nope.py", "--color", "never"]);
    assert!(!stderr(&plain).contains('\x1b'));
    let coloured = tilec(&["check", "nope.py", "--color", "always"]);
    assert!(stderr(&coloured).contains("\x1b["));
}

#[test]
fn front_end_errors_point_at_the_source() {
    let dir = scratch("front_end_errors");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("broken.py");
    let _ = std::fs::write(
        &file,
        "import tilelang.language as T\n\ndef f(:\n    pass\n",
    );
    let path = file.display().to_string();
    let out = tilec(&["check", &path, "--color", "never"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    // Whatever the front end's exact wording, no crash and a located error.
    let text = stderr(&out);
    assert!(!text.contains("panicked"), "{text}");
    assert!(text.starts_with("error"), "{text}");
}

// End-to-end tests on the examples: they need the front end and the
// interpreter.

#[test]
fn check_accepts_every_example() {
    let examples = workspace_root().join("examples");
    let mut count = 0;
    for entry in std::fs::read_dir(&examples).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "py") {
            let shown = path.display().to_string();
            let out = tilec(&["check", &shown, "--color", "never"]);
            assert_eq!(code(&out), 0, "{shown}: {}", stderr(&out));
            count += 1;
        }
    }
    assert!(count > 0, "no examples found in {}", examples.display());
}

#[test]
fn check_json_reports_ok() {
    let out = tilec(&["check", "examples/gemm.py", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["ok"], true);
    assert!(doc["diagnostics"].is_array());
}

#[test]
fn compile_writes_tile_ir_that_parses_back() {
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--kernel",
        "matmul(64, 64, 64)",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let module = tilec_core::text::parse_module(&text);
    assert!(module.is_ok(), "{module:?}\n{text}");

    let dir = scratch("compile_output");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("gemm.tir");
    let shown = file.display().to_string();
    let out = tilec(&["compile", "examples/gemm.py", "-o", &shown]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file).is_ok_and(|t| !t.is_empty()));
}

#[test]
fn run_check_passes_on_examples() {
    for (file, extra) in [
        (
            "examples/elementwise_add.py",
            vec!["-D", "M=64", "-D", "N=128"],
        ),
        (
            "examples/gemm.py",
            vec!["--kernel", "matmul(64, 64, 64, 32, 32, 32)"],
        ),
        (
            "examples/gemm_splitk.py",
            vec!["--kernel", "matmul_splitk(64, 64, 128, 32, 32, 32, 2)"],
        ),
        ("examples/row_reduce.py", vec!["-D", "M=20"]),
        // Half the block loads the tile: B == A only if the guarded loop
        // is spread over the 128 loading threads.
        (
            "examples/guarded_copy.py",
            vec!["-D", "M=128", "-D", "N=192"],
        ),
    ] {
        let mut args = vec!["run", file, "--check", "--color", "never"];
        args.extend(extra);
        let out = tilec(&args);
        assert_eq!(code(&out), 0, "{file}: {}{}", stdout(&out), stderr(&out));
        assert!(stdout(&out).contains("ok"), "{}", stdout(&out));
    }
}

#[test]
fn run_json_summarizes_roles_and_check() {
    let out = tilec(&[
        "run",
        "examples/gemm_splitk.py",
        "--kernel",
        "matmul_splitk(64, 64, 128, 32, 32, 32, 2)",
        "--check",
        "--json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["ok"], true);
    let roles: Vec<&str> = doc["params"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["role"].as_str())
        .collect();
    // C is not in out_idx but the kernel accumulates into it.
    assert_eq!(roles, ["input", "input", "in-out"]);
    assert_eq!(doc["params"][2]["stats"]["nan"], 0);
    assert_eq!(doc["check"]["passed"], true);
    assert!(doc["time_ms"].as_f64().is_some());
    // The reference interpreter has no SIMT counters.
    assert!(doc["sim"].is_null(), "{doc}");
}

/// `--backend sim` reports what the SIMT interpreter counted, bank passes
/// included: the default GEMM on sm_80 takes its fragments through
/// `ldmatrix` from padded rows, one pass of the banks per phase.
#[test]
fn sim_run_reports_the_interpreter_s_counters() {
    let args = [
        "run",
        "examples/gemm.py",
        "--backend",
        "sim",
        "--target",
        "sm_80",
        "--kernel",
        "matmul(128, 128, 64)",
    ];
    let out = tilec(&[&args[..], &["--json"]].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    let sim = &doc["sim"];
    assert_eq!(sim["blocks"], 1, "{doc}");
    assert!(sim["mma"].as_u64().is_some_and(|n| n > 0), "{doc}");
    assert!(sim["matrix_loads"].as_u64().is_some_and(|n| n > 0), "{doc}");
    let passes = sim["shared_load_passes"].as_u64();
    assert!(passes.is_some_and(|n| n > 0), "{doc}");
    assert_eq!(passes, sim["shared_load_passes_ideal"].as_u64(), "{doc}");
    let text = stdout(&tilec(&args));
    assert!(
        text.contains("SIMT interpreter counted: blocks 1,"),
        "{text}"
    );
    assert!(text.contains("shared-memory bank passes: loads"), "{text}");
}

#[test]
fn run_without_reference_fails_check() {
    let dir = scratch("no_reference");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("my_copy.py");
    let source = std::fs::read_to_string(workspace_root().join("examples/elementwise_add.py"));
    let _ = std::fs::write(&file, source.unwrap_or_default());
    let shown = file.display().to_string();
    let out = tilec(&[
        "run", &shown, "-D", "M=32", "-D", "N=128", "--check", "--color", "never",
    ]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("no independent reference for `my_copy`"));
}

#[test]
fn run_dump_writes_npy_files_and_manifest() {
    let dir = scratch("dump");
    let shown = dir.display().to_string();
    let out = tilec(&[
        "run",
        "examples/elementwise_add.py",
        "-D",
        "M=32",
        "-D",
        "N=128",
        "--seed",
        "7",
        "--dump",
        &shown,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let manifest: serde_json::Value = std::fs::read(dir.join("manifest.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    assert_eq!(manifest["seed"], 7);
    let params = manifest["params"].as_array().cloned().unwrap_or_default();
    assert_eq!(params.len(), 3);
    for param in &params {
        let after = param["files"]["after"].as_str().unwrap_or("missing");
        let bytes = std::fs::read(dir.join(after)).unwrap_or_default();
        assert!(bytes.starts_with(b"\x93NUMPY\x01\x00"), "{after}");
        assert_eq!(param["stored_dtype"], "float16");
    }
    assert!(params[0]["files"]["before"].is_string());
    assert!(params[2]["files"]["before"].is_null());
    assert_eq!(params[2]["role"], "output");

    // The same seed gives the same inputs.
    let again = scratch("dump_again");
    let again_shown = again.display().to_string();
    let out = tilec(&[
        "run",
        "examples/elementwise_add.py",
        "-D",
        "M=32",
        "-D",
        "N=128",
        "--seed",
        "7",
        "--dump",
        &again_shown,
    ]);
    assert_eq!(code(&out), 0);
    for name in ["A.in.npy", "B.in.npy", "C.npy"] {
        let first = std::fs::read(dir.join(name)).ok();
        assert!(first.is_some(), "{name}");
        assert_eq!(first, std::fs::read(again.join(name)).ok(), "{name}");
    }
}

#[test]
fn front_end_diagnostics_are_rendered_rustc_style() {
    let dir = scratch("rustc_style");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("typo.py");
    let source = std::fs::read_to_string(workspace_root().join("examples/elementwise_add.py"))
        .unwrap_or_default()
        .replace(
            "A_shared[i, j] + B_shared[i, j]",
            "A_shared[i, j] + B_sharde[i, j]",
        );
    let _ = std::fs::write(&file, source);
    let shown = file.display().to_string();
    let out = tilec(&["check", &shown, "--color", "never"]);
    assert_eq!(code(&out), 1);
    let text = stderr(&out);
    assert!(text.starts_with("error[T"), "{text}");
    assert!(text.contains(&format!("--> {shown}:")), "{text}");
    assert!(text.contains("B_sharde[i, j]"), "{text}");
    assert!(text.contains("^^^^^^^^"), "{text}");
    assert!(text.contains("could not compile"), "{text}");

    let out = tilec(&["check", &shown, "--json"]);
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    let diagnostic = &doc["diagnostics"][0];
    assert!(
        diagnostic["code"]
            .as_str()
            .is_some_and(|c| c.starts_with('T'))
    );
    assert!(diagnostic["line"].as_u64().is_some_and(|l| l > 1));
    assert!(diagnostic["col"].as_u64().is_some());
}

/// Writes Tile IR text to a scratch file and returns its path.
fn tile_ir_file(test: &str, text: &str) -> String {
    let dir = scratch(test);
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("kernel.tir");
    let _ = std::fs::write(&file, text);
    file.display().to_string()
}

const SYMBOLIC_ADD: &str = "\
tile_ir 0.1

func @add(%A: global f32[%M, 8], %B: global f32[%M, 8], %C: global f32[%M, 8]) symbols(%M) attrs(out_idx=[2]) {
  kernel grid(1) threads(128) block(%bx) thread(%tx) {
    for %i in serial(0, %M) {
      parallel (%j < 8) {
        %C[%i, %j] = %A[%i, %j] + %B[%i, %j]
      }
    }
  }
}
";

#[test]
fn run_names_a_missing_symbolic_size() {
    let file = tile_ir_file("missing_symbol", SYMBOLIC_ADD);
    let out = tilec(&["run", &file, "--color", "never"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("symbolic size `M`"), "{text}");
    assert!(text.contains("-D M=<integer>"), "{text}");
}

#[test]
fn run_tile_ir_with_symbols() {
    let file = tile_ir_file("tile_ir_run", SYMBOLIC_ADD);
    let out = tilec(&["run", &file, "-D", "M=3", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["symbols"]["M"], 3);
    assert_eq!(doc["params"][2]["shape"], serde_json::json!([3, 8]));
    assert_eq!(doc["params"][2]["role"], "output");
    assert_eq!(doc["params"][2]["stats"]["nan"], 0);
}

#[test]
fn run_time_errors_point_at_the_statement() {
    let file = tile_ir_file(
        "division_by_zero",
        "\
tile_ir 0.1

func @divide(%A: global i32[4, 8], %C: global i32[4, 8]) attrs(out_idx=[1]) {
  kernel grid(1) threads(128) block(%bx) thread(%tx) {
    parallel (%i < 4, %j < 8) {
      %C[%i, %j] = %A[%i, %j] // (%A[%i, %j] - %A[%i, %j])
    }
  }
}
",
    );
    let out = tilec(&["run", &file, "--color", "never"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("failed at run time"), "{text}");
    assert!(text.contains(&format!("--> {file}:6:")), "{text}");
}

#[test]
fn malformed_tile_ir_is_a_user_error() {
    let file = tile_ir_file(
        "malformed_tile_ir",
        &SYMBOLIC_ADD.replace("serial(0, %M)", "serial(0, %N)"),
    );
    let out = tilec(&["check", &file, "--color", "never"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.starts_with("error"), "{text}");
    assert!(text.contains(&format!("--> {file}:")), "{text}");
    assert!(!text.contains("internal compiler error"), "{text}");
}

// `compile --passes` and the pass instrumentation flags.

#[test]
fn compile_help_documents_the_pass_flags() {
    let out = tilec(&["compile", "--help"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for flag in [
        "--passes",
        "--print-before",
        "--print-after",
        "--time-passes",
    ] {
        assert!(
            text.contains(flag),
            "`compile --help` lacks `{flag}`:\n{text}"
        );
    }
}

#[test]
fn compile_runs_the_passes_and_prints_where_asked() {
    let args = [
        "compile",
        "examples/flash_attention_gqa.py",
        "--passes",
        "simplify",
        "--print-before=simplify",
        "--print-after",
        "simplify",
        "--time-passes",
    ];
    let out = tilec(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The backend (`ref`: Tile IR on standard output) gets the simplified
    // module.
    let ir = stdout(&out);
    assert!(ir.contains("let %loop_range: i32 = %bx + 1\n"), "{ir}");
    let errors = stderr(&out);
    let before = errors.find("// ----- IR before simplify -----\ntile_ir 0.1\n");
    let after = errors.find("// ----- IR after simplify -----\ntile_ir 0.1\n");
    let timing = errors.find("// ----- pass timing (wall clock) -----\n");
    assert!(
        before.is_some() && before < after && after < timing,
        "{errors}"
    );
    assert!(
        errors.contains("min(4, ((%bx + 1) * 64 + 64 - 1) // 64)"),
        "{errors}"
    );
    let table = &errors[timing.unwrap_or_default()..];
    assert!(
        table.contains("run ms") && table.contains("verify ms"),
        "{table}"
    );
    assert!(table.lines().any(|l| l.starts_with("simplify ")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("total ")), "{table}");
    // What follows the IR after simplify is exactly the module printed on
    // standard output.
    let printed_after = &errors[after.unwrap_or_default()..timing.unwrap_or_default()];
    assert_eq!(
        printed_after.trim_start_matches("// ----- IR after simplify -----\n"),
        ir
    );
}

#[test]
fn compile_runs_no_pass_by_default() {
    let out = tilec(&["compile", "examples/flash_attention_gqa.py"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("min(4, ((%bx + 1) * 64 + 64 - 1) // 64)"));
    assert!(!stderr(&out).contains("// -----"), "{}", stderr(&out));
}

#[test]
fn compile_simplifies_tile_ir_input() {
    let file = tile_ir_file(
        "simplify_tile_ir",
        "\
tile_ir 0.1

func @f(%A: global i32[64]) {
  kernel grid(1) threads(32) block(%bx) thread(%tx) {
    for %i in serial(0, 8) {
      for %j in serial(0, 8) {
        %A[(%i * 8 + %j) // 8 + (%i * 8 + %j) % 8 * 8] = %i
      }
    }
  }
}
",
    );
    let out = tilec(&["compile", &file, "--passes", "simplify,simplify"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("%A[%i + %j * 8] = %i\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn unknown_pass_names_are_usage_errors() {
    for args in [
        &["compile", "examples/gemm.py", "--passes", "simplify,bogus"][..],
        &[
            "compile",
            "examples/gemm.py",
            "--passes",
            "simplify",
            "--print-after=bogus",
        ][..],
        &[
            "compile",
            "examples/gemm.py",
            "--passes",
            "simplify",
            "--print-before",
            "bogus",
        ][..],
    ] {
        let out = tilec(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let text = stderr(&out);
        assert!(text.contains("unknown pass `bogus`"), "{text}");
        assert!(
            text.contains("the registered passes are: simplify"),
            "{text}"
        );
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn printing_around_a_pass_that_does_not_run_is_a_usage_error() {
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--print-after=simplify",
        "--color",
        "never",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.starts_with("error: `--print-after=simplify` names a pass that does not run"),
        "{text}"
    );
    assert!(text.contains("--passes simplify"), "{text}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn sim_backend_runs_and_checks_bit_for_bit() {
    let out = tilec(&[
        "run",
        "examples/elementwise_add.py",
        "--backend",
        "sim",
        "--target",
        "gfx942",
        "--check",
        "--kernel",
        "elementwise_add(M=40, N=200)",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("backend sim"), "{text}");
    assert!(
        text.contains("check against the reference interpreter (dtype tolerance)"),
        "{text}"
    );
}

#[test]
fn sim_backend_prints_thread_ir_that_parses() {
    // The default gemm tiles (128×128 f32 accumulator) do not fit Apple's
    // 32 KiB of threadgroup memory through memory; 64×64 tiles do.
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "sim",
        "--target",
        "apple",
        "-D",
        "block_M=64",
        "-D",
        "block_N=64",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("thread_ir 0.1\n"), "{text}");
    let module = tilec_core::thread::parse_module(&text);
    assert!(module.is_ok(), "{module:?}");
}

#[test]
fn sim_backend_refuses_unknown_targets() {
    for command in ["compile", "run"] {
        let out = tilec(&[
            command,
            "examples/elementwise_add.py",
            "--backend",
            "sim",
            "--target",
            "bogus",
            "--color",
            "never",
        ]);
        assert_eq!(code(&out), 1, "{command}: {}", stderr(&out));
        let text = stderr(&out);
        assert!(text.contains("knows no target `bogus`"), "{text}");
        assert!(text.contains("sm_80, sm_90a, gfx942, apple"), "{text}");
    }
}

/// A kernel with a scalar parameter: the first `n` elements of a row grow
/// by `n`; the grid follows `n` too.
const SCALAR_KERNEL: &str = r#"
import tilelang.language as T


@T.prim_func
def bump(A: T.Tensor((64,), T.int32), n: T.int32):
    with T.Kernel(T.ceildiv(n, 16), threads=16) as bx:
        for i in T.serial(16):
            if bx * 16 + i < n:
                A[bx * 16 + i] = A[bx * 16 + i] + n
"#;

#[test]
fn run_takes_scalar_parameters_from_defines() {
    let dir = scratch("scalar_param");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("bump.py");
    let _ = std::fs::write(&file, SCALAR_KERNEL);
    let shown = file.display().to_string();

    // No value: an error naming the parameter and what to write.
    let out = tilec(&["run", &shown, "--color", "never"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the scalar parameter `n: T.int32` of kernel `bump` has no value"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("-D n=<integer>"), "{}", stderr(&out));
    let out = tilec(&["run", &shown, "-D", "n=x", "--color", "never"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("needs a `T.int32` integer value"));

    // With a value: the interpreter and the SIMT interpreter agree, and
    // the dump's manifest records it.
    let dump = dir.join("dump");
    let dump_shown = dump.display().to_string();
    let out = tilec(&[
        "run",
        &shown,
        "-D",
        "n=37",
        "--backend",
        "sim",
        "--check",
        "--dump",
        &dump_shown,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("A (int32): ok"), "{}", stdout(&out));
    let manifest: serde_json::Value = std::fs::read(dump.join("manifest.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    assert_eq!(manifest["scalars"][0]["name"], "n");
    assert_eq!(manifest["scalars"][0]["value"], 37);
    assert_eq!(manifest["scalars"][0]["position"], 1);
    let out = tilec(&["run", &shown, "-D", "n=37", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["symbols"]["n"], 37);
}
