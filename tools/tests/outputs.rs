//! The files tilec writes, tried as a hostile user would: a disk that fills
//! up in the middle of a file, several compiles writing one `-o` at once,
//! two spellings of one source path, `-o DIR/`.
//!
//! The PTX comes from the cuda plugin, built once per test run with the
//! `cargo` that runs the tests into the folder shared with the other
//! plugin tests, moved to a folder of its own and passed with `--plugin`
//! (a plugin next to `tilec` or in the shared folder would change what
//! other tests see).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod common;
use common::{code, stderr, stdout, workspace_root};

fn cuda_plugin() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-builds");
        let output = Command::new(env!("CARGO"))
            .arg("build")
            .arg("--manifest-path")
            .arg(workspace_root().join("Cargo.toml"))
            .args(["-p", "tilec-backend-cuda"])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .output()
            .unwrap_or_else(|e| panic!("cannot start cargo: {e}"));
        assert!(
            output.status.success(),
            "building the cuda plugin failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let file = format!(
            "{}tilec_backend_cuda{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        let built = target_dir.join("debug").join(&file);
        assert!(built.is_file(), "{} was not built", built.display());
        // Moved to a folder of its own: other tests scan the build folder
        // for plugins and expect only theirs there.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cuda-plugin");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let library = dir.join(&file);
        std::fs::copy(&built, &library).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
        std::fs::remove_file(&built).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
        library
    })
}

fn tilec_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tilec"));
    command
        .args(args)
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH")
        .env_remove("TILEC_PTXAS")
        .env("NO_COLOR", "1");
    command
}

fn output(mut command: Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot start tilec: {e}"))
}

/// `tilec compile FILE --backend cuda --plugin LIB ARGS...`.
fn compile_cuda(file: &str, extra: &[&str]) -> Command {
    let plugin = cuda_plugin().display().to_string();
    let mut args = vec!["compile", file, "--backend", "cuda", "--plugin", &plugin];
    args.extend_from_slice(extra);
    tilec_command(&args)
}

/// Runs `command` with files limited to `kib` KiB and SIGXFSZ ignored, so
/// a write past the limit fails with EFBIG as a write to a full disk fails
/// with ENOSPC.
fn with_file_limit(command: &Command, kib: u32) -> Output {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(command.get_program())
        .args(command.get_args())
        .current_dir(workspace_root())
        .env_remove("TILEC_PLUGIN_PATH")
        .env_remove("TILEC_PTXAS")
        .env("NO_COLOR", "1");
    output(shell)
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The PTX of `examples/gemm.py`, on standard output.
fn gemm_ptx() -> Vec<u8> {
    let out = output(compile_cuda("examples/gemm.py", &[]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains(".entry main"), "{}", stdout(&out));
    out.stdout
}

#[test]
fn a_full_disk_leaves_the_previous_artifact_whole() {
    let dir = scratch("outputs-full-disk");
    let dest = dir.join("gemm.ptx");
    std::fs::write(&dest, "// the previous build\n").unwrap_or_else(|e| panic!("{e}"));
    let shown = dest.display().to_string();
    let out = with_file_limit(&compile_cuda("examples/gemm.py", &["-o", &shown]), 8);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&dest).unwrap_or_default(),
        "// the previous build\n"
    );
    assert_eq!(names(&dir), ["gemm.ptx"], "a temporary file was left");
}

#[test]
fn a_full_disk_leaves_no_truncated_npy() {
    let dir = scratch("outputs-full-dump");
    let dump = dir.join("dump");
    let shown = dump.display().to_string();
    let command = tilec_command(&["run", "examples/gemm.py", "--dump", &shown]);
    let out = with_file_limit(&command, 8);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
    // The 256 x 256 float16 inputs are 128 KiB each: none fits, and none is
    // left half written.
    assert_eq!(names(&dump), Vec::<String>::new());
}

#[test]
fn concurrent_compiles_to_one_output_each_leave_a_whole_ptx() {
    let expected = gemm_ptx();
    let dir = scratch("outputs-concurrent");
    let dest = dir.join("gemm.ptx");
    let shown = dest.display().to_string();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // A reader that looks at the file the whole time: it must only
        // ever see a whole PTX (or no file yet).
        let reader = scope.spawn(|| {
            let mut seen = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&dest) {
                    assert!(
                        bytes == expected,
                        "a reader saw {} bytes of a {}-byte PTX",
                        bytes.len(),
                        expected.len()
                    );
                    seen += 1;
                }
            }
            seen
        });
        for _round in 0..4 {
            let children: Vec<_> = (0..6)
                .map(|_| {
                    compile_cuda("examples/gemm.py", &["-o", &shown])
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .unwrap_or_else(|e| panic!("cannot start tilec: {e}"))
                })
                .collect();
            for child in children {
                let out = child
                    .wait_with_output()
                    .unwrap_or_else(|e| panic!("tilec: {e}"));
                assert_eq!(code(&out), 0, "{}", stderr(&out));
            }
            assert_eq!(std::fs::read(&dest).unwrap_or_default(), expected);
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let seen = reader
            .join()
            .unwrap_or_else(|_| panic!("the reader failed"));
        assert!(seen > 0);
    });
    assert_eq!(names(&dir), ["gemm.ptx"], "a temporary file was left");
}

#[test]
fn the_source_path_is_embedded_the_same_however_it_is_spelled() {
    let relative = gemm_ptx();
    let absolute = workspace_root().join("examples/gemm.py");
    let out = output(compile_cuda(&absolute.display().to_string(), &[]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        out.stdout == relative,
        "the PTX differs:\n{}",
        stdout(&out)
            .lines()
            .filter(|l| l.starts_with(".file"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(stdout(&out).contains(".file 1 \"examples/gemm.py\""));
    // `--remap-path-prefix` rewrites it, the last match winning.
    let root = workspace_root().display().to_string();
    let out = output(compile_cuda(
        "examples/gemm.py",
        &[
            "--remap-path-prefix",
            "examples=/nowhere",
            "--remap-path-prefix",
            &format!("{root}=/src/tilec"),
        ],
    ));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains(".file 1 \"/src/tilec/examples/gemm.py\""),
        "{}",
        stdout(&out)
    );
    let out = output(compile_cuda(
        "examples/gemm.py",
        &["--remap-path-prefix", "nothing"],
    ));
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("expected FROM=TO"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_folder_output_names_the_artifact_after_the_kernel() {
    let dir = scratch("outputs-folder");
    let shown = format!("{}/", dir.join("out").display());
    let out = output(compile_cuda("examples/gemm.py", &["-o", &shown]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(names(&dir.join("out")), ["main.ptx"]);
    // The same for a folder that exists, without the slash: a kernel of
    // another name goes beside it.
    let source = std::fs::read_to_string(workspace_root().join("examples/elementwise_add.py"))
        .unwrap_or_else(|e| panic!("{e}"))
        .replace("def main(", "def vadd(")
        .replace("return main", "return vadd");
    let file = dir.join("vadd.py");
    std::fs::write(&file, source).unwrap_or_else(|e| panic!("{e}"));
    let shown = dir.join("out").display().to_string();
    let out = output(compile_cuda(&file.display().to_string(), &["-o", &shown]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(names(&dir.join("out")), ["main.ptx", "vadd.ptx"]);
}
