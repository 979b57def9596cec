//! Inputs that used to crash or pass silently, tried as a hostile user
//! would: every one ends with a diagnostic and exit status 1
//! (`docs/tilelang-support.md`, "Limits").

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{code, stderr, workspace_root};

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

/// Writes `text` as `name` in a fresh scratch folder of this test.
fn scratch_file(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {e}", dir.display());
    }
    let path = dir.join(name);
    if let Err(e) = std::fs::write(&path, text) {
        panic!("cannot write {}: {e}", path.display());
    }
    path
}

/// A kernel whose `T.Parallel` body stores a sum of `terms` loads.
fn sum_kernel(terms: usize) -> String {
    let sum = vec!["A[i]"; terms].join(" + ");
    format!(
        "import tilelang\n\
         import tilelang.language as T\n\
         \n\
         \n\
         @T.prim_func\n\
         def main(A: T.Tensor((128,), \"float32\"), B: T.Tensor((128,), \"float32\")):\n\
         \x20   with T.Kernel(1, threads=128) as bx:\n\
         \x20       for i in T.Parallel(128):\n\
         \x20           B[i] = {sum}\n"
    )
}

/// The CUDA plugin built beside `tilec`, when it was built.
fn cuda_plugin() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_BIN_EXE_tilec")).parent()?;
    let file = format!(
        "{}tilec_backend_cuda{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = dir.join(file);
    path.is_file().then_some(path)
}

fn assert_refused(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(code(out), 1, "exit status, stderr:\n{err}");
    assert!(err.contains(needle), "no `{needle}` in:\n{err}");
    assert!(!err.contains("overflowed its stack"), "{err}");
}

#[test]
fn a_12000_term_sum_is_a_diagnostic_for_every_command() {
    let file = scratch_file("sum12000", "sum.py", &sum_kernel(12_000));
    let file = file.to_string_lossy();
    for args in [
        vec!["check", &*file],
        vec!["compile", &*file, "--backend", "sim"],
        vec!["compile", &*file, "--emit", "tile-ir"],
    ] {
        let out = tilec(&args);
        assert_refused(&out, "error[T0114]");
        assert!(stderr(&out).contains("sum.py:9:"), "{}", stderr(&out));
    }
    // The plugin case runs where the cuda plugin was built beside tilec
    // (`cargo build -p tilec-backend-cuda`); the refusal comes before the
    // plugin sees the kernel.
    if let Some(plugin) = cuda_plugin() {
        let plugin = plugin.to_string_lossy();
        let out = tilec(&[
            "compile",
            &file,
            "--backend",
            "cuda",
            "--plugin",
            &plugin,
            "-o",
            "-",
        ]);
        assert_refused(&out, "error[T0114]");
    }
}

#[test]
fn a_staged_sum_over_the_ir_limit_is_a_diagnostic_for_sim() {
    let file = scratch_file("sum300", "sum.py", &sum_kernel(300));
    let out = tilec(&["compile", &file.to_string_lossy(), "--backend", "sim"]);
    assert_refused(&out, "error[T0114]");
}

#[test]
fn a_12000_term_tile_ir_chain_is_refused_by_the_reader() {
    let sum = vec!["%A[%i]"; 12_000].join(" + ");
    let text = format!(
        "tile_ir 0.1\n\nfunc @main(%A: global f32[128], %B: global f32[128]) {{\n  kernel grid(1) threads(128) block(%bx) thread(%tx) {{\n    parallel (%i < 128) {{\n      %B[%i] = {sum}\n    }}\n  }}\n}}\n"
    );
    let file = scratch_file("chain12000", "chain.tir", &text);
    let out = tilec(&["compile", &file.to_string_lossy(), "--backend", "sim"]);
    assert_refused(&out, "nested deeper than");
}

#[test]
fn a_module_without_a_kernel_is_an_error() {
    let file = scratch_file("empty_module", "empty.tir", "tile_ir 0.1\n");
    let file = file.to_string_lossy();
    for args in [
        vec!["check", &*file],
        vec!["compile", &*file],
        vec!["compile", &*file, "--backend", "sim"],
    ] {
        let out = tilec(&args);
        assert_refused(&out, "defines no kernel");
    }
}

#[test]
fn tile_ir_dividing_by_a_constant_zero_is_an_error() {
    let text = "tile_ir 0.1\n\nfunc @f(%A: global f32[16], %B: global f32[16]) {\n  kernel grid(1) threads(16) block(%bx) thread(%tx) {\n    %B[%tx] = %A[%tx // 0]\n  }\n}\n";
    let file = scratch_file("div_zero", "div.tir", text);
    let out = tilec(&["check", &file.to_string_lossy()]);
    assert_refused(&out, "by a constant zero");
}
