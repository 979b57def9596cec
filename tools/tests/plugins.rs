//! The plugin template, built out of tree the way a vendor builds it, loaded
//! into the current `tilec`: discovery, `tilec plugins`, `compile` with a
//! plugin backend, plugin diagnostics at source lines, and the messages for
//! unavailable backends and for running on a plugin.
//!
//! The template is built once per test run with the `cargo` that runs the
//! tests, into a folder of its own under `CARGO_TARGET_TMPDIR`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{code, json, stderr, stdout, workspace_root};
use std::sync::OnceLock;

/// Builds `plugins/template` (once) and returns the path of its library.
fn template_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        // Shared with the plugin-api failure-matrix tests, so the plugins'
        // dependencies (tilec-core, abi_stable) build once per target dir.
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-builds");
        let manifest = workspace_root().join("plugins/template/Cargo.toml");
        let result = Command::new(env!("CARGO"))
            .arg("build")
            .arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target_dir)
            // No debug info: the template's dependencies build from cold
            // on a fresh checkout, and nobody debugs them here.
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .output();
        let output = match result {
            Ok(output) => output,
            Err(e) => panic!("cannot start cargo: {e}"),
        };
        assert!(
            output.status.success(),
            "building the plugin template failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let file = format!(
            "{}tilec_backend_template{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        let library = target_dir.join("debug").join(file);
        assert!(library.is_file(), "{} was not built", library.display());
        library
    })
}

fn library_arg() -> String {
    template_library().display().to_string()
}

/// Runs `tilec` in the workspace root with no plugin path from the
/// environment, plus the given variables.
fn tilec_with(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tilec"));
    command
        .args(args)
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH")
        .env("NO_COLOR", "1");
    for (name, value) in env {
        command.env(name, value);
    }
    match command.output() {
        Ok(output) => output,
        Err(e) => panic!("cannot start tilec: {e}"),
    }
}

fn tilec(args: &[&str]) -> Output {
    tilec_with(args, &[])
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {e}", dir.display());
    }
    dir
}

#[test]
fn plugins_lists_the_template() {
    let lib = library_arg();
    let out = tilec(&["plugins", "--plugin", &lib]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("ref (built in)\n"), "{text}");
    let block = text
        .split("\n\n")
        .find(|b| b.starts_with("template\n"))
        .unwrap_or_else(|| panic!("no block for `template`:\n{text}"));
    for line in [
        &format!("file:           {lib} (--plugin)"),
        "plugin ABI:     1.1",
        "Tile IR read:   0.11",
        "targets:        listing (default)",
        "IR level:       tile",
        "runtime:        none",
    ] {
        assert!(block.contains(line), "`{line}` missing from:\n{block}");
    }
    assert!(
        text.contains("Libraries that failed to load: none"),
        "{text}"
    );
    assert!(
        text.contains(&format!("--plugin           {lib} (file)")),
        "{text}"
    );

    let value = json(&tilec(&["plugins", "--plugin", &lib, "--json"]));
    let names: Vec<&str> = value["plugins"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["ref", "template"]);
    let template = &value["plugins"][1];
    assert_eq!(template["abi"], "1.1");
    assert_eq!(template["targets"], serde_json::json!(["listing"]));
    assert_eq!(template["default_target"], "listing");
    assert_eq!(template["explicit"], true);
    assert_eq!(template["runtime"], false);
    assert_eq!(value["search"][0]["source"], "explicit");
}

#[test]
fn plugin_path_variable_finds_the_template() {
    let lib = template_library();
    let folder = lib.parent().unwrap_or(Path::new("."));
    let out = tilec_with(&["plugins", "--json"], &[("TILEC_PLUGIN_PATH", folder)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let value = json(&out);
    assert_eq!(value["plugins"][1]["name"], "template");
    assert_eq!(value["plugins"][1]["explicit"], false);
    assert_eq!(
        value["plugins"][1]["file"].as_str(),
        Some(lib.display().to_string().as_str())
    );
    assert_eq!(value["search"][0]["source"], "env");
    assert_eq!(value["search"][0]["kind"], "folder");

    // Found that way, the backend compiles without `--plugin`.
    let out = tilec_with(
        &["compile", "examples/gemm.py", "--backend", "template"],
        &[("TILEC_PLUGIN_PATH", folder)],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("func @main"), "{}", stdout(&out));
}

#[test]
fn compile_prints_the_listing() {
    let lib = library_arg();
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "template",
        "--plugin",
        &lib,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("# listing for target `listing`"), "{text}");
    assert!(text.contains("func @main"), "{text}");
    assert!(text.contains("threads(128)"), "{text}");
    assert_eq!(stderr(&out), "");
}

#[test]
fn compile_writes_into_a_folder_and_a_file() {
    let lib = library_arg();
    let dir = scratch("plugin_output");
    let shown = dir.display().to_string();
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "template",
        "--plugin",
        &lib,
        "-o",
        &shown,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let written = std::fs::read_to_string(dir.join("main.listing")).unwrap_or_default();
    assert!(written.contains("func @main"), "{written}");

    let file = dir.join("gemm.lst");
    let shown = file.display().to_string();
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "template",
        "--plugin",
        &lib,
        "-o",
        &shown,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).ok(), Some(written));
}

#[test]
fn compile_json_gives_kernel_metadata() {
    let lib = library_arg();
    let dir = scratch("plugin_json");
    let shown = dir.display().to_string();
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "template",
        "--plugin",
        &lib,
        "--json",
        "-o",
        &shown,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let value = json(&out);
    assert_eq!(value["ok"], true);
    assert_eq!(value["backend"], "template");
    assert_eq!(value["target"], "listing");
    let artifact = &value["artifacts"][0];
    assert_eq!(artifact["name"], "main.listing");
    assert_eq!(artifact["kind"], "text");
    assert_eq!(
        artifact["path"].as_str(),
        Some(dir.join("main.listing").display().to_string().as_str())
    );
    let written = std::fs::metadata(dir.join("main.listing")).map_or(0, |m| m.len());
    assert_eq!(artifact["bytes_len"].as_u64(), Some(written));
    let kernel = &value["kernels"][0];
    assert_eq!(kernel["entry"], "main_k0");
    assert_eq!(kernel["threads"], 128);
    assert_eq!(kernel["grid"], serde_json::json!(["2", "2"]));
    assert_eq!(kernel["shared_bytes"], 2 * 128 * 32 * 2);
    assert_eq!(kernel["params"][0]["dtype"], "float16");
    assert_eq!(
        kernel["params"][0]["shape"],
        serde_json::json!(["256", "256"])
    );
    assert_eq!(value["diagnostics"], serde_json::json!([]));
}

#[test]
fn plugin_errors_point_at_the_source_line() {
    let lib = library_arg();
    let dir = scratch("plugin_fp8");
    let file = dir.join("fp8.py");
    let source = r#"import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def convert(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float8_e4m3fn")
            T.copy(A, S)
            T.copy(S, B)

    return main
"#;
    if let Err(e) = std::fs::write(&file, source) {
        panic!("cannot write {}: {e}", file.display());
    }
    let shown = file.display().to_string();
    let out = tilec(&["compile", &shown, "--backend", "template", "--plugin", &lib]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = stderr(&out);
    let expected = format!(
        "\
error[P0001]: `float8_e4m3fn` is not supported by target `listing`
  --> {shown}:10:17
   |
10 |             S = T.alloc_shared((N,), \"float8_e4m3fn\")
   |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   |
"
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.contains("= note: reported by backend `template` (UnsupportedDtype)"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "error: could not compile `{shown}` due to 1 previous error\n"
        )),
        "{text}"
    );

    let value = json(&tilec(&[
        "compile",
        &shown,
        "--backend",
        "template",
        "--plugin",
        &lib,
        "--json",
    ]));
    assert_eq!(value["ok"], false);
    let d = &value["diagnostics"][0];
    assert_eq!(d["code"], "P0001");
    assert_eq!(d["severity"], "error");
    assert_eq!(
        (d["line"].as_u64(), d["col"].as_u64()),
        (Some(10), Some(17))
    );
}

#[test]
fn unknown_backend_lists_the_plugins() {
    let lib = library_arg();
    let out = tilec(&[
        "compile",
        "examples/gemm.py",
        "--backend",
        "nope",
        "--plugin",
        &lib,
    ]);
    assert_eq!(code(&out), 1);
    let text = stderr(&out);
    assert!(
        text.starts_with(
            "error: backend `nope` is not available: no plugin provides it (available: template)\n"
        ),
        "{text}"
    );
    assert!(text.contains("`ref` is built in"), "{text}");
    assert_eq!(stdout(&out), "");
}

#[test]
fn running_on_a_compile_only_plugin_is_refused() {
    let lib = library_arg();
    let out = tilec(&[
        "run",
        "examples/gemm.py",
        "--backend",
        "template",
        "--plugin",
        &lib,
    ]);
    assert_eq!(code(&out), 1);
    let text = stderr(&out);
    assert!(
        text.starts_with("error: backend `template` is compile-only: it has no runtime"),
        "{text}"
    );
    assert!(
        text.contains("tilec compile FILE --backend template"),
        "{text}"
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn plugin_warnings_point_at_the_source_line() {
    let lib = library_arg();
    let dir = scratch("plugin_warning");
    let file = dir.join("dynamic_shared.tir");
    // The front end sizes shared buffers at compile time; Tile IR text can
    // leave a shared buffer's size to launch time, which the template
    // warns about.
    let source = "\
tile_ir 0.1

func @main(%A: global f32[%m], %B: global f32[%m]) symbols(%m) attrs(out_idx=[1]) {
  kernel grid(1) threads(128) block(%bx) thread(%tx) {
    alloc %S: shared f32[%m]
    copy %A[0 +: %m] -> %S[0 +: %m]
    copy %S[0 +: %m] -> %B[0 +: %m]
  }
}
";
    if let Err(e) = std::fs::write(&file, source) {
        panic!("cannot write {}: {e}", file.display());
    }
    let shown = file.display().to_string();
    let out = tilec(&["compile", &shown, "--backend", "template", "--plugin", &lib]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("func @main"), "{}", stdout(&out));
    let text = stderr(&out);
    let expected = format!(
        "\
warning[P0002]: shared buffer `S` has a size known only at launch; it is not counted in the kernel's shared memory
 --> {shown}:5:5
  |
5 |     alloc %S: shared f32[%m]
  |     ^^^^^^^^^^^^^^^^^^^^^^^^
  |
  = note: reported by backend `template`

warning: `{shown}` generated 1 warning
"
    );
    assert_eq!(text, expected);
}

#[test]
fn a_truncated_library_on_the_search_path_is_listed_and_skipped() {
    // The system loader maps a truncated file and the first touch killed
    // tilec with SIGBUS, for every command that searches for plugins.
    let folder = scratch("truncated-plugin");
    let bytes = std::fs::read(template_library()).expect("read the template");
    let cut = folder.join(format!(
        "{}cut{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write a truncated copy");
    let out = tilec_with(&["plugins"], &[("TILEC_PLUGIN_PATH", &folder)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "  {}\n    `{}` is not a complete shared object: ",
            cut.display(),
            cut.display()
        )),
        "{text}"
    );
    // Given explicitly, it is an error.
    let out = tilec(&[
        "check",
        "examples/gemm.py",
        "--plugin",
        cut.to_str().expect("UTF-8"),
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a complete shared object"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bare_plugin_name_is_the_file_in_the_working_folder() {
    // `--plugin NAME` without a slash: the file checked and listed is
    // ./NAME, and so must be the library loaded, whatever the system
    // loader's search path (LD_LIBRARY_PATH) holds.
    let work = scratch("bare-name/work");
    let decoy = scratch("bare-name/decoy");
    let name = format!(
        "{}tilec_backend_bare{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    std::fs::copy(template_library(), work.join(&name)).expect("copy the template");
    std::fs::write(decoy.join(&name), b"not the library in the working folder")
        .expect("write the decoy");
    let out = Command::new(env!("CARGO_BIN_EXE_tilec"))
        .args(["plugins", "--json", "--plugin", &name])
        .current_dir(&work)
        .env_remove("TILEC_PLUGIN_PATH")
        .env("LD_LIBRARY_PATH", &decoy)
        .output()
        .expect("tilec starts");
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let value = json(&out);
    let template = value["plugins"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["name"] == "template"))
        .unwrap_or_else(|| panic!("no template: {value}"));
    let expected = std::fs::canonicalize(work.join(&name)).expect("canonical");
    assert_eq!(template["file"], expected.display().to_string());
}

#[test]
fn a_relative_plugin_path_entry_is_ignored_with_a_warning() {
    let out = tilec_with(&["plugins"], &[("TILEC_PLUGIN_PATH", Path::new("plugins"))]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("warning: the TILEC_PLUGIN_PATH entry `plugins` is relative and is ignored"),
        "{}",
        stderr(&out)
    );
}
