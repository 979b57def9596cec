//! The budgets of `tilec`, tried as a hostile user would: build-time Python
//! that grows without bound or does endless container work, and kernels
//! whose buffers, grid or loops would keep the interpreters busy for hours
//! or exhaust memory. Each runs the real binary under a 4 GB address-space
//! limit (where the shell can set one) and a 60 s deadline, and must end
//! with exit status 1 and the limit's diagnostic code.

mod common;

use common::{code, stderr, workspace_root};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `tilec args...` from the repository root under `ulimit -v 4000000`
/// and a 60 s deadline; a run past the deadline is killed and fails the
/// test.
fn tilec_bounded(args: &[&str]) -> Output {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 2>/dev/null; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tilec"))
        .args(args)
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start sh");
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > Duration::from_secs(60) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`tilec {}` ran for more than 60 s", args.join(" "));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("cannot wait for tilec: {e}"),
        }
    }
    child
        .wait_with_output()
        .expect("cannot read tilec's output")
}

/// Asserts exit status 1 with an error of `code_` that names `flag`.
fn assert_limit(out: &Output, code_: &str, flag: &str) {
    let err = stderr(out);
    assert_eq!(code(out), 1, "exit status, stderr:\n{err}");
    assert!(
        err.contains(&format!("error[{code_}]")),
        "no {code_}:\n{err}"
    );
    assert!(
        err.contains(flag),
        "the report does not name {flag}:\n{err}"
    );
}

#[test]
fn build_time_list_doubling_hits_the_memory_budget() {
    let out = tilec_bounded(&[
        "check",
        "core/tests/front/errors/build_growth_list_concat.py",
    ]);
    assert_limit(&out, "T0109", "--max-build-memory");
    assert!(stderr(&out).contains("build_growth_list_concat.py:9:"));
}

#[test]
fn build_time_string_doubling_hits_the_memory_budget_in_run_and_compile() {
    for command in ["run", "compile"] {
        let out = tilec_bounded(&[command, "core/tests/front/errors/build_growth_fstring.py"]);
        assert_limit(&out, "T0109", "--max-build-memory");
    }
}

#[test]
fn build_time_dict_inserts_hit_the_step_budget() {
    let out = tilec_bounded(&[
        "check",
        "core/tests/front/errors/build_growth_dict_inserts.py",
    ]);
    assert_limit(&out, "T0109", "--max-build-steps");
}

#[test]
fn raised_build_budgets_are_honoured() {
    // A lower memory budget refuses what the default allows ...
    let out = tilec_bounded(&[
        "check",
        "tools/tests/limits/build_table.py",
        "--max-build-memory",
        "100000",
    ]);
    assert_limit(&out, "T0109", "--max-build-memory");
    // ... and a lower step budget too.
    let out = tilec_bounded(&[
        "check",
        "tools/tests/limits/build_table.py",
        "--max-build-steps",
        "10000",
    ]);
    assert_limit(&out, "T0109", "--max-build-steps");
    let out = tilec_bounded(&["check", "tools/tests/limits/build_table.py"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn three_huge_shared_buffers_hit_the_interpreter_memory_limit() {
    let out = tilec_bounded(&["run", "tools/tests/limits/huge_shared.py"]);
    assert_limit(&out, "T0500", "--max-interp-memory");
    assert!(
        stderr(&out).contains("huge_shared.py:12:"),
        "{}",
        stderr(&out)
    );
    // (`--backend sim` refuses it earlier: the lowering finds no target
    // with that much shared memory.)
}

#[test]
fn arguments_past_the_interpreter_memory_limit_are_refused_before_allocation() {
    let out = tilec_bounded(&[
        "run",
        "tools/tests/limits/long_loop.py",
        "-D",
        "N=1073741824",
    ]);
    assert_limit(&out, "T0500", "--max-interp-memory");
    assert!(stderr(&out).contains("the arguments"), "{}", stderr(&out));
}

#[test]
fn a_huge_grid_is_refused_by_the_reference_interpreter_at_once() {
    let out = tilec_bounded(&["run", "tools/tests/limits/huge_grid.py"]);
    assert_limit(&out, "T0500", "--max-interp-steps");
    assert!(
        stderr(&out).contains("1099511627776 blocks"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_long_loop_is_refused_by_the_simt_interpreter_at_once() {
    let out = tilec_bounded(&["run", "tools/tests/limits/long_loop.py", "--backend", "sim"]);
    assert_limit(&out, "T0500", "--max-interp-steps");
}

#[test]
fn a_long_loop_stops_at_the_reference_interpreter_step_limit() {
    let out = tilec_bounded(&[
        "run",
        "tools/tests/limits/long_loop.py",
        "--max-interp-steps",
        "1000000",
    ]);
    assert_limit(&out, "T0500", "--max-interp-steps");
    assert!(
        stderr(&out).contains("step limit of 1000000"),
        "{}",
        stderr(&out)
    );
}
