//! Self-test of the conformance suite (`tilec conformance`):
//!
//! - the reference backend passes every test at every level it can reach,
//!   and the three report files say so;
//! - `--repro ID` replays one test with the seed the full run recorded;
//! - a healthy test plugin (the fixture of `plugin-api/tests`, whose
//!   runtime runs kernels on the CPU) passes levels 0–3 through the plugin
//!   ABI;
//! - deliberately broken variants of it are caught: wrong numerics →
//!   `Fail`, a panic → `Crash`, a process abort → `Crash`, a hang →
//!   `Timeout`, refusing a claimed feature → `Fail` — and the run goes on
//!   after each.
//!
//! The fixture variants are built with the `cargo` that runs the tests
//! into the folder shared with the other plugin tests, each copied to a
//! file of its own.

use std::collections::BTreeMap;
use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, PoisonError};

mod common;
use common::{code, stderr, stdout, workspace_root};

/// Builds the fixture plugin with `feature` (once per feature) and returns
/// the path of a copy of its library.
fn fixture(feature: Option<&str>) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    let key = feature.unwrap_or("working").to_string();
    if let Some(path) = built.get(&key) {
        return path.clone();
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target_dir = tmp.join("plugin-builds");
    let manifest = workspace_root().join("plugin-api/tests/fixture-plugin/Cargo.toml");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target_dir);
    if let Some(f) = feature {
        cmd.args(["--features", f]);
    }
    let out = cmd.output().expect("cargo starts");
    assert!(
        out.status.success(),
        "building the fixture plugin ({key}) failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = target_dir
        .join("debug")
        .join(format!("{DLL_PREFIX}tilec_fixture_plugin{DLL_SUFFIX}"));
    let dir = tmp
        .join("conformance-fixtures")
        .join(std::process::id().to_string());
    std::fs::create_dir_all(&dir).expect("create the fixture folder");
    let dest = dir.join(format!("{DLL_PREFIX}fixture_{key}{DLL_SUFFIX}"));
    std::fs::copy(&lib, &dest).expect("copy the fixture library");
    built.insert(key, dest.clone());
    dest
}

/// A fresh folder for reports.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("conformance-reports")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn tilec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(args)
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH")
        .output()
        .expect("tilec starts")
}

/// `tilec conformance --backend fixture --plugin LIB ARGS...`.
fn on_fixture(feature: Option<&str>, args: &[&str]) -> Output {
    let lib = fixture(feature);
    let lib = lib.display().to_string();
    let mut all = vec!["conformance", "--backend", "fixture", "--plugin", &lib];
    all.extend_from_slice(args);
    tilec(&all)
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results.jsonl");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Outcome counts of a report folder.
fn outcomes(dir: &Path) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in records(dir) {
        *counts
            .entry(r["outcome"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    counts
}

fn levels(s: &serde_json::Value) -> Vec<String> {
    s["conformant_levels"]
        .as_array()
        .expect("conformant_levels")
        .iter()
        .map(|l| l.as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn reference_backend_passes_every_level_it_reaches() {
    let dir = scratch("ref");
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--report",
        dir.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let s = summary(&dir);
    assert_eq!(levels(&s), ["L0", "L1", "L2", "L3"]);
    assert_eq!(s["levels_not_run"][0][0], "L4");
    let total = s["total"]["total"].as_u64().expect("a count") as usize;
    assert!(total >= 450, "only {total} tests");
    assert_eq!(s["total"]["pass"].as_u64(), Some(total as u64));
    assert_eq!(s["environment"]["backend"], "ref");
    assert_eq!(s["environment"]["tilec_version"], env!("CARGO_PKG_VERSION"));
    let recs = records(&dir);
    assert_eq!(recs.len(), total);
    for level in ["L0", "L1", "L2", "L3"] {
        assert!(recs.iter().any(|r| r["level"] == level), "no {level} test");
    }
    let junit = std::fs::read_to_string(dir.join("junit.xml")).expect("junit.xml");
    assert!(junit.starts_with("<?xml"));
    assert_eq!(junit.matches("<testcase ").count(), total);
    assert!(!junit.contains("<failure"));
    let text = stdout(&out);
    assert!(text.contains("conformant levels: L0, L1, L2, L3"), "{text}");
}

#[test]
fn repro_replays_one_test_with_its_seed() {
    let dir = scratch("repro");
    let id = "tilec.l2.gemm.nt.f16_f32.m257n129k77";
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--filter",
        "tilec.l2.gemm.nt.f16_f32.*",
        "--report",
        dir.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let seed = records(&dir)
        .into_iter()
        .find(|r| r["id"] == id)
        .and_then(|r| r["seed"].as_u64())
        .expect("the test ran");
    let out = tilec(&["conformance", "--backend", "ref", "--repro", id]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("seed     {seed} ")), "{text}");
    assert!(text.contains("outcome  Pass"), "{text}");
    assert!(text.contains("kernel   matmul(257, 129, 77"), "{text}");

    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--repro",
        "tilec.l2.gemm.nt.f16",
    ]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("the closest id is `tilec.l2.gemm.nt.f16_f32."),
        "{}",
        stderr(&out)
    );
}

#[test]
fn certify_mode_refuses_filters() {
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--mode",
        "certify",
        "--filter",
        "*",
        "--report",
        "unused",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("`--mode certify` runs every test"));
}

#[test]
fn healthy_plugin_passes_levels_0_to_3() {
    let dir = scratch("fixture");
    let out = on_fixture(None, &["--report", dir.to_str().expect("UTF-8 path")]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let s = summary(&dir);
    assert_eq!(levels(&s), ["L0", "L1", "L2", "L3"]);
    let env = &s["environment"];
    assert_eq!(env["plugin"]["name"], "fixture");
    assert_eq!(env["plugin"]["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(env["target"], "t0");
    let recs = records(&dir);
    for id in [
        "tilec.l0.abi.load",
        "tilec.l0.abi.info",
        "tilec.l0.abi.describe_targets",
        "tilec.l0.abi.malformed_request",
        "tilec.l0.abi.compile_unknown_target",
        "tilec.l0.abi.concurrent_compile",
    ] {
        let r = recs.iter().find(|r| r["id"] == id).expect(id);
        assert_eq!(r["outcome"], "Pass", "{r}");
    }
    // fp8 gemm is not claimed: the negative case must be refused (Pass),
    // and nothing else is NotSupported.
    let fp8 = recs
        .iter()
        .find(|r| r["id"] == "tilec.l1.negative.target.fp8_gemm")
        .expect("the fp8 case");
    assert_eq!(fp8["outcome"], "Pass", "{fp8}");
}

#[test]
fn an_unclaimed_capability_is_not_supported() {
    // A corpus of one gemm case that needs a capability the fixture does
    // not claim: both of its tests are NotSupported, decided from the
    // target description without asking the backend; the reference
    // backend, which claims every need of its corpus, runs them.
    let corpus = scratch("corpus");
    std::fs::create_dir_all(&corpus).expect("create the corpus");
    std::fs::copy(
        workspace_root().join("conformance/corpus/gemm.py"),
        corpus.join("gemm.py"),
    )
    .expect("copy the kernel");
    std::fs::write(
        corpus.join("magic.grid.json"),
        r#"{"family": "magic", "file": "gemm.py", "level": 2,
            "kernel": "matmul(64, 64, 64)", "id": "nn.f16",
            "class": {"Accumulation": {"reduction_len": 64, "accumulator": "F32"}},
            "needs": ["vendor.magic"]}"#,
    )
    .expect("write the grid");
    let corpus = corpus.to_str().expect("UTF-8 path").to_string();

    let dir = scratch("unclaimed");
    let out = on_fixture(
        None,
        &[
            "--corpus",
            &corpus,
            "--report",
            dir.to_str().expect("UTF-8 path"),
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let recs = records(&dir);
    for id in ["tilec.l1.magic.nn.f16", "tilec.l2.magic.nn.f16"] {
        let r = recs.iter().find(|r| r["id"] == id).expect(id);
        assert_eq!(r["outcome"], "NotSupported", "{r}");
        assert!(
            r["message"]
                .as_str()
                .unwrap_or("")
                .contains("does not claim vendor.magic"),
            "{r}"
        );
    }
    // L1 has no applicable test, so the fixture conforms to L0 only.
    assert_eq!(levels(&summary(&dir)), ["L0"]);

    let dir = scratch("unclaimed-ref");
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--corpus",
        &corpus,
        "--report",
        dir.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(outcomes(&dir).get("Pass"), Some(&2));
}

/// Runs a broken fixture variant with `args` (a report folder is added),
/// expects a non-conformant run (exit 3) and returns the output and the
/// records.
fn broken_run(feature: &str, args: &[&str]) -> (Output, Vec<serde_json::Value>) {
    let dir = scratch(feature);
    let mut all = args.to_vec();
    all.extend_from_slice(&["--report", dir.to_str().expect("UTF-8 path")]);
    let out = on_fixture(Some(feature), &all);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    (out, records(&dir))
}

/// Every record has `outcome` and a message containing `needle`.
fn assert_all(recs: &[serde_json::Value], outcome: &str, needle: &str) {
    for r in recs {
        assert_eq!(r["outcome"], outcome, "{r}");
        let msg = r["message"].as_str().unwrap_or("");
        assert!(msg.contains(needle), "{r}");
    }
}

#[test]
fn wrong_numerics_fail() {
    let (out, recs) = broken_run("wrong-numerics", &["--filter", "tilec.l2.gemm.nn.*f32*"]);
    assert!(recs.len() >= 3);
    assert_all(&recs, "Fail", "outside tolerance");
    let text = stdout(&out);
    assert!(text.contains("non-conformant tests"), "{text}");

    // `--repro` replays one failing case alone, with the seed the run
    // recorded, and fails the same way.
    let failing = &recs[0];
    let id = failing["id"].as_str().expect("an id");
    let seed = failing["seed"].as_u64().expect("a seed");
    let out = on_fixture(Some("wrong-numerics"), &["--repro", id]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("seed     {seed} ")), "{text}");
    assert!(text.contains("outcome  Fail"), "{text}");
    assert!(text.contains("outside tolerance"), "{text}");
}

#[test]
fn a_panic_is_a_crash() {
    let (_, recs) = broken_run("panic-compile", &["--filter", "tilec.l1.gemm.nn.*f32*"]);
    assert!(recs.len() >= 3);
    assert_all(&recs, "Crash", "deliberate panic in compile");
}

#[test]
fn an_abort_is_a_crash_and_the_run_goes_on() {
    let (_, recs) = broken_run(
        "abort-launch",
        &["--filter", "tilec.l?.gemm.nn.*f32*", "-j", "1"],
    );
    let (l1, l2): (Vec<_>, Vec<_>) = recs.into_iter().partition(|r| r["level"] == "L1");
    assert!(l1.len() >= 3 && l2.len() >= 3, "{l1:?} {l2:?}");
    // Compiling works; every launch kills its worker, and a new worker
    // takes the next test.
    assert_all(&l1, "Pass", "");
    assert_all(&l2, "Crash", "signal");
}

#[test]
fn a_hang_is_a_timeout_and_the_run_goes_on() {
    let (_, recs) = broken_run(
        "hang",
        &[
            "--filter",
            "tilec.l1.gemm.nn.f16_f32.m*",
            "--timeout",
            "2",
            "-j",
            "1",
        ],
    );
    assert!(recs.len() >= 2, "{recs:?}");
    assert_all(&recs, "Timeout", "no result within 2s");
}

#[test]
fn refusing_a_claimed_feature_fails() {
    let (_, recs) = broken_run("refuse-claimed", &["--filter", "tilec.l1.gemm.*"]);
    // The int8 cases are NotSupported (the fixture does not claim
    // gemm.i8): decided from the claims, so the refusal never happens.
    let recs: Vec<_> = recs
        .into_iter()
        .filter(|r| r["outcome"] != "NotSupported")
        .collect();
    assert!(recs.len() >= 9);
    assert_all(&recs, "Fail", "refused a capability the target claims");
}

#[test]
fn a_plugin_reading_only_old_ir_fails_level_0() {
    let dir = scratch("unloadable");
    let lib = fixture(Some("old-ir"));
    let out = tilec(&[
        "conformance",
        "--backend",
        "fixture",
        "--plugin",
        lib.to_str().expect("UTF-8 path"),
        "--report",
        dir.to_str().expect("UTF-8 path"),
    ]);
    // An old-IR plugin loads, but every compile is refused by the host.
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let s = summary(&dir);
    assert_eq!(levels(&s), Vec::<String>::new());
}

#[test]
fn sim_backend_runs_the_corpus_through_the_lowering() {
    // The whole corpus runs in CI on a release build; here a slice of it,
    // on the wave64 target, is enough to keep the wiring honest.
    let dir = scratch("sim");
    let out = tilec(&[
        "conformance",
        "--backend",
        "sim",
        "--target",
        "gfx942",
        "--filter",
        "tilec.l?.gemm.nn.*k40",
        "--report",
        dir.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let counts = outcomes(&dir);
    assert!(counts.get("Pass").copied().unwrap_or(0) >= 8, "{counts:?}");
    assert_eq!(counts.get("Fail"), None, "{counts:?}");
    let s = summary(&dir);
    assert_eq!(s["environment"]["target"], "gfx942");
    // fp8 is not among gfx942's dtypes: refused, as the case requires.
    let out = tilec(&[
        "conformance",
        "--backend",
        "sim",
        "--target",
        "gfx942",
        "--repro",
        "tilec.l1.negative.target.fp8_gemm",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("refused with UnsupportedDtype"),
        "{}",
        stdout(&out)
    );
}

/// `tilec run` drives a plugin's runtime: the fixture runs the kernel on
/// its CPU device, and `--check` compares with the reference interpreter.
#[test]
fn run_drives_a_plugin_runtime_and_checks_it() {
    let lib = fixture(None);
    let lib = lib.to_str().expect("UTF-8 path");
    let args = [
        "run",
        "examples/softmax.py",
        "--backend",
        "fixture",
        "--plugin",
        lib,
        "--check",
    ];
    let out = tilec(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("backend fixture"), "{text}");
    assert!(
        text.contains("check against the reference interpreter (dtype tolerance)"),
        "{text}"
    );
    // A plugin whose device computes wrong values fails the check.
    let wrong = fixture(Some("wrong-numerics"));
    let wrong = wrong.to_str().expect("UTF-8 path");
    let mut args = args;
    args[5] = wrong;
    let out = tilec(&args);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("differ"), "{text}");
}

/// `tilec bench` reports what the runtime says when it cannot time.
#[test]
fn bench_needs_a_runtime_that_times() {
    let lib = fixture(None);
    let lib = lib.to_str().expect("UTF-8 path");
    let out = tilec(&[
        "bench",
        "examples/softmax.py",
        "--backend",
        "fixture",
        "--plugin",
        lib,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("bench --json prints one JSON object");
    assert_eq!(doc["ok"], false);
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(error.contains("does not time kernels"), "{error}");
    // `ref` has nothing to time with.
    let out = tilec(&["bench", "examples/softmax.py", "--backend", "ref"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("device backend"), "{text}");
}

/// `tilec ARGS...` with extra environment variables.
fn tilec_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tilec"));
    cmd.args(args)
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("tilec starts")
}

#[test]
fn a_plugin_cannot_forge_its_records() {
    // The ids of a few tests, from an honest run.
    let filter = "tilec.l1.gemm.nn.f16_f32.m*";
    let dir = scratch("forge-honest");
    let out = on_fixture(
        None,
        &["--filter", filter, "--report", dir.to_str().expect("UTF-8")],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let ids: Vec<String> = records(&dir)
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .filter(|id| id.starts_with("tilec.l1."))
        .collect();
    assert!(ids.len() >= 2, "{ids:?}");

    // The same plugin, now printing a `Pass` record for every id in the
    // protocol's form on standard output and then aborting in every
    // compile: every test is a crash.
    let dir = scratch("forge");
    let lib = fixture(None);
    let forged = ids.join(",");
    let out = tilec_env(
        &[
            "conformance",
            "--backend",
            "fixture",
            "--plugin",
            lib.to_str().expect("UTF-8"),
            "--filter",
            filter,
            "--report",
            dir.to_str().expect("UTF-8"),
        ],
        &[("TILEC_FIXTURE_FORGE", &forged)],
    );
    assert_eq!(code(&out), 3, "{}\n{}", stdout(&out), stderr(&out));
    let recs: Vec<_> = records(&dir)
        .into_iter()
        .filter(|r| r["level"] == "L1")
        .collect();
    assert_eq!(recs.len(), ids.len());
    assert_all(&recs, "Crash", "SIGABRT");
    // What the plugin printed is kept as the worker's log in the message.
    assert_all(&recs, "Crash", "tilec-worker");
}

#[test]
fn a_run_of_no_test_is_an_error() {
    let out = tilec(&["conformance", "--backend", "ref", "--filter", ""]);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("the run would execute no test: no test id matches `--filter `"),
        "{}",
        stderr(&out)
    );
    let out = tilec(&["conformance", "--backend", "ref", "--filter", "tilec.l9.*"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
}

#[test]
fn an_unwritable_report_folder_is_found_before_the_run() {
    let dir = scratch("unwritable");
    std::fs::create_dir_all(&dir).expect("create");
    let file = dir.join("a-file");
    std::fs::write(&file, b"").expect("write");
    let report = file.join("reports");
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--filter",
        "tilec.l1.gemm.nn.f16_f32.m*",
        "--report",
        report.to_str().expect("UTF-8"),
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("cannot write reports in {}", report.display())),
        "{}",
        stderr(&out)
    );
    // Nothing ran.
    assert!(!stdout(&out).contains("tests in"), "{}", stdout(&out));
}

#[test]
fn a_zero_timeout_is_refused_and_jobs_are_capped() {
    let out = tilec(&["conformance", "--backend", "ref", "--timeout", "0"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`--timeout 0` gives no test any time"),
        "{}",
        stderr(&out)
    );
    // A deadline that overflows the clock crashed tilec.
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--timeout",
        "18446744073709551615",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is longer than the longest limit, 86400 s (a day)"),
        "{}",
        stderr(&out)
    );
    let out = tilec(&[
        "conformance",
        "--backend",
        "ref",
        "--filter",
        "tilec.l1.gemm.nn.f16_f32.m*",
        "-j",
        "100000",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "note: `-j 100000` is more than the {cpus} CPUs here; running {cpus} workers at once"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{cpus} worker(s)")), "{err}");
}

#[test]
fn abort_or_exit_in_compile_is_a_crash() {
    let lib = fixture(None);
    for (how, needle) in [("abort", "SIGABRT"), ("exit", "exited with status 7")] {
        let dir = scratch(&format!("compile-{how}"));
        let out = tilec_env(
            &[
                "conformance",
                "--backend",
                "fixture",
                "--plugin",
                lib.to_str().expect("UTF-8"),
                "--filter",
                "tilec.l1.gemm.nn.f16_f32.m*",
                "--report",
                dir.to_str().expect("UTF-8"),
            ],
            &[("TILEC_FIXTURE_COMPILE", how)],
        );
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let recs = records(&dir);
        assert!(recs.len() >= 2, "{recs:?}");
        assert_all(&recs, "Crash", needle);
    }
}

#[test]
fn the_reference_backend_runs_no_plugin_code() {
    // `--plugin` files are checked, not loaded, when the backend is built
    // in: the plugin's `info` (which writes the mark) never runs.
    let lib = fixture(None);
    let dir = scratch("no-plugin-code");
    std::fs::create_dir_all(&dir).expect("create");
    let mark = dir.join("mark");
    let out = tilec_env(
        &[
            "conformance",
            "--backend",
            "ref",
            "--plugin",
            lib.to_str().expect("UTF-8"),
            "--filter",
            "tilec.l1.gemm.nn.f16_f32.m*",
        ],
        &[("TILEC_FIXTURE_MARK", mark.to_str().expect("UTF-8"))],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!mark.exists(), "the plugin's code ran");
    // The same plugin as the backend does run it.
    let out = tilec_env(
        &[
            "conformance",
            "--backend",
            "fixture",
            "--plugin",
            lib.to_str().expect("UTF-8"),
            "--filter",
            "tilec.l1.gemm.nn.f16_f32.m*",
        ],
        &[("TILEC_FIXTURE_MARK", mark.to_str().expect("UTF-8"))],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(mark.exists());
}

#[test]
fn a_plugin_declaring_another_name_is_not_loaded() {
    // The fixture declares its backend name in its file: a run for another
    // backend never loads it (its `info`, which writes the mark, never
    // runs), yet names it among those available.
    let lib = fixture(None);
    let dir = scratch("declared");
    std::fs::create_dir_all(&dir).expect("create");
    std::fs::copy(&lib, dir.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"))).expect("copy");
    let mark = dir.join("mark");
    let out = Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(["conformance", "--backend", "nope"])
        .current_dir(workspace_root())
        .env("TILEC_PLUGIN_PATH", &dir)
        .env("TILEC_FIXTURE_MARK", &mark)
        .output()
        .expect("tilec starts");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "backend `nope` is not available: no plugin provides it (available: fixture)"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!mark.exists(), "the plugin's code ran");
}

#[test]
fn compile_and_run_for_another_backend_do_not_load_a_declaring_plugin() {
    // As for conformance: `compile`, `run` and `bench` for a plugin backend
    // load only the libraries that may provide it, so the fixture, which
    // declares its own name, never runs its code for another backend.
    let lib = fixture(None);
    let dir = scratch("declared-compile");
    std::fs::create_dir_all(&dir).expect("create");
    std::fs::copy(&lib, dir.join(format!("{DLL_PREFIX}fixture{DLL_SUFFIX}"))).expect("copy");
    let mark = dir.join("mark");
    for command in [
        &["compile", "examples/gemm.py", "--backend", "nope"][..],
        &["run", "examples/gemm.py", "--backend", "nope"][..],
        &["bench", "examples/gemm.py", "--backend", "nope"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tilec"))
            .args(command)
            .current_dir(workspace_root())
            .env("TILEC_PLUGIN_PATH", &dir)
            .env("TILEC_FIXTURE_MARK", &mark)
            .output()
            .expect("tilec starts");
        assert_ne!(code(&out), 0, "{command:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("nope"),
            "{command:?}: {}",
            stderr(&out)
        );
        assert!(!mark.exists(), "{command:?}: the plugin's code ran");
    }
}
