//! The source the AscendC compiler checks lives in a private folder with
//! a random name, as a hostile local user would probe it: the folder is
//! closed to others while the compiler runs, two checks at once use two
//! folders, and nothing is left behind on success or on rejection.
//!
//! A stand-in compiler (a shell script that logs the folder of the source
//! and its mode) takes the place of CANN's. One test in its own binary: no
//! other thread spawns while the scripts are written (a fork then would
//! make running one fail with "text file busy").
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tilec_backend_ascend::targets;
use tilec_backend_ascend::toolchain::{self, ToolchainError};

/// A stand-in compiler: logs `DIR MODE` for the folder of the `.cpp`
/// argument, then succeeds, or fails when `fail` is set.
fn stand_in(dir: &Path, name: &str, log: &Path, fail: bool) -> PathBuf {
    let end = if fail {
        "echo \"stand-in rejects $src\" >&2\nexit 1"
    } else {
        "exit 0"
    };
    let script = format!(
        "#!/bin/sh\nfor a; do case \"$a\" in *.cpp) src=$a;; esac; done\n\
         d=$(dirname \"$src\")\necho \"$d $(stat -c %a \"$d\")\" >> '{}'\n{end}\n",
        log.display()
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn the_check_runs_in_a_private_random_folder_removed_afterwards() {
    let own = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let log = own.path().join("log");
    let accepts = stand_in(own.path(), "ccec", &log, false);
    let rejects = stand_in(own.path(), "ccec-rejecting", &log, true);
    let target = targets::describe(targets::DEFAULT_TARGET).unwrap_or_else(|e| panic!("{e:?}"));
    let source = "// the stand-in reads nothing\n";

    let (ok, rejected) = std::thread::scope(|s| {
        let ok = s.spawn(|| toolchain::check(&accepts, source, &target));
        let rejected = s.spawn(|| toolchain::check(&rejects, source, &target));
        (
            ok.join().unwrap_or_else(|_| panic!("thread")),
            rejected.join().unwrap_or_else(|_| panic!("thread")),
        )
    });
    assert!(ok.is_ok(), "{ok:?}");
    assert!(
        matches!(&rejected, Err(ToolchainError::Rejected { stderr, .. }) if stderr.contains("rejects")),
        "{rejected:?}"
    );

    let runs = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}"));
    let runs: Vec<(&str, &str)> = runs
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap_or_else(|| panic!("{l}")))
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_ne!(runs[0].0, runs[1].0, "two checks shared a folder");
    for (dir, mode) in &runs {
        let name = Path::new(dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(
            name.starts_with("tilec-ascend-ccec-"),
            "the check ran in {dir}"
        );
        assert_eq!(
            *mode, "700",
            "{dir} is open to others while the compiler runs"
        );
        assert!(!Path::new(dir).exists(), "{dir} was left behind");
    }
}
