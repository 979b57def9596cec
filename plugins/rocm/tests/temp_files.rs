//! The files `opt`, `llc` and `ld.lld` read and write live in a private
//! folder with a random name, as a hostile local user would probe it: the
//! folder is closed to others while the tools run, two compiles at once
//! use two folders, and nothing is left behind on success or on error.
//!
//! Stand-in tools (shell scripts that log the folder of their input and
//! its mode, then copy the input to the output) take the place of LLVM, so
//! the test needs no LLVM. One test in its own binary: no other thread
//! spawns while the scripts are written (a fork then would make running
//! one fail with "text file busy").
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tilec_backend_rocm::toolchain::{self, Toolchain, ToolchainError};

/// A stand-in tool: logs `NAME DIR MODE` for the folder of its input (the
/// argument that is neither a flag nor `-o`'s), then copies the input to
/// `-o`'s argument, or fails when `fail` is set.
fn stand_in(dir: &Path, name: &str, log: &Path, fail: bool) -> PathBuf {
    let end = if fail {
        "echo \"stand-in $0 fails\" >&2\nexit 1"
    } else {
        "cp \"$in\" \"$out\""
    };
    let script = format!(
        "#!/bin/sh\nin=\nout=\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    \
         -o) out=$2; shift 2;;\n    -*) shift;;\n    *) in=$1; shift;;\n  esac\ndone\n\
         d=$(dirname \"$in\")\necho \"{name} $d $(stat -c %a \"$d\")\" >> '{}'\n{end}\n",
        log.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn llvm_runs_in_a_private_random_folder_removed_afterwards() {
    let own = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let log = own.path().join("log");
    let good = Toolchain {
        opt: stand_in(own.path(), "opt", &log, false),
        llc: stand_in(own.path(), "llc", &log, false),
        lld: stand_in(own.path(), "lld", &log, false),
    };
    let failing = Toolchain {
        lld: stand_in(own.path(), "lld-failing", &log, true),
        ..good.clone()
    };
    let ir = "; the stand-ins copy this through\n";

    // Two compiles at once, one that fails at the link, then an assembly.
    let (built, refused) = std::thread::scope(|s| {
        let built = s.spawn(|| toolchain::build_code_object(&good, ir, "gfx942"));
        let refused = s.spawn(|| toolchain::build_code_object(&failing, ir, "gfx942"));
        (
            built.join().unwrap_or_else(|_| panic!("thread")),
            refused.join().unwrap_or_else(|_| panic!("thread")),
        )
    });
    assert_eq!(built, Ok(ir.as_bytes().to_vec()));
    assert!(
        matches!(&refused, Err(ToolchainError::Failed { stderr, .. }) if stderr.contains("fails")),
        "{refused:?}"
    );
    let assembly = toolchain::assembly(&good, ir, "gfx942");
    assert_eq!(assembly, Ok(ir.to_string()));

    // The folder of each compile, with the tools that ran there.
    let runs = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}"));
    let mut folders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in runs.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [tool, dir, mode] = fields[..] else {
            panic!("{line}");
        };
        let name = Path::new(dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(name.starts_with("tilec-rocm-"), "{tool} ran in {dir}");
        // The random part is alphanumeric: no `<pid>-<n>-<nanos>`.
        assert!(
            !name.starts_with(&format!("tilec-rocm-{}-", std::process::id())),
            "{dir} is named after the pid"
        );
        assert_eq!(mode, "700", "{dir} is open to others while {tool} runs");
        folders.entry(dir).or_default().push(tool);
    }
    let mut tools: Vec<String> = folders.values().map(|t| t.join(",")).collect();
    tools.sort();
    assert_eq!(
        tools,
        ["opt,llc", "opt,llc,lld", "opt,llc,lld-failing"],
        "each compile has a folder of its own: {folders:?}"
    );
    for dir in folders.keys() {
        assert!(!Path::new(dir).exists(), "{dir} was left behind");
    }
}
