//! The PTX and the cubin of a `ptxas` run live in a private folder with a
//! random name, as a hostile local user would probe it: links planted at
//! the names a pid and a counter would give are not followed, the folder
//! is closed to others while `ptxas` runs, two compiles at once use two
//! folders, and nothing is left behind on success or on error.
//!
//! One test in its own binary: it runs before any other `assemble` of the
//! process (so a counter-based name would start at 0), and no other thread
//! spawns while the stand-in `ptxas` script is written (a fork then would
//! make running it fail with "text file busy").
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tilec_backend_cuda::ptxas::{self, PtxasError};

const PTX: &str =
    ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";

/// Links planted in the shared temporary folder, removed when dropped.
struct Planted(Vec<PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A stand-in `ptxas` that logs the folder of its input (the last
/// argument) and that folder's mode, then runs the real `ptxas` if there
/// is one, else rejects the PTX.
fn stand_in(dir: &Path, log: &Path, real: Option<&Path>) -> PathBuf {
    let run = match real {
        Some(real) => format!("exec '{}' \"$@\"", real.display()),
        None => "echo \"stand-in ptxas rejects $last\" >&2\nexit 1".to_string(),
    };
    let script = format!(
        "#!/bin/sh\nfor last; do :; done\nd=$(dirname \"$last\")\n\
         echo \"$d $(stat -c %a \"$d\")\" >> '{}'\n{run}\n",
        log.display()
    );
    let path = dir.join("ptxas");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn ptxas_runs_in_a_private_random_folder_removed_afterwards() {
    let own = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let victim = own.path().join("victim");
    std::fs::write(&victim, "precious").unwrap_or_else(|e| panic!("{e}"));

    // Plant links to the victim at every name `tilec-cuda-<pid>-<n>.ptx`
    // or `.cubin` the first compiles of this process could have used.
    let tmp = std::env::temp_dir();
    let mut planted = Planted(Vec::new());
    for n in 0..8 {
        for suffix in [".ptx", ".cubin"] {
            let link = tmp.join(format!("tilec-cuda-{}-{n}{suffix}", std::process::id()));
            if std::os::unix::fs::symlink(&victim, &link).is_ok() {
                planted.0.push(link);
            }
        }
    }
    assert!(!planted.0.is_empty(), "no link could be planted in {tmp:?}");

    let log = own.path().join("log");
    let real = ptxas::find();
    let fake = stand_in(own.path(), &log, real.as_deref());

    // Two compiles at once: one that succeeds with a real ptxas, one that
    // fails (no such entry in the cubin, or the stand-in's rejection).
    let (good, bad) = std::thread::scope(|s| {
        let good = s.spawn(|| ptxas::assemble(&fake, PTX, "sm_80", &["k"]));
        let bad = s.spawn(|| ptxas::assemble(&fake, PTX, "sm_80", &["other"]));
        (
            good.join().unwrap_or_else(|_| panic!("thread")),
            bad.join().unwrap_or_else(|_| panic!("thread")),
        )
    });

    let kept = std::fs::read(&victim).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        kept == b"precious",
        "a compile wrote through a planted link: the victim now holds {} bytes starting {:?}",
        kept.len(),
        String::from_utf8_lossy(&kept[..kept.len().min(16)])
    );
    drop(planted);

    if real.is_some() {
        assert!(good.is_ok(), "{good:?}");
        assert!(matches!(bad, Err(PtxasError::Cubin { .. })), "{bad:?}");
    } else {
        for r in [&good, &bad] {
            match r {
                Err(PtxasError::Rejected { log, .. }) => {
                    assert!(log.contains("rejects <ptx>"), "{log}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    let runs = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{e}"));
    let runs: Vec<(&str, &str)> = runs
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap_or_else(|| panic!("{l}")))
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_ne!(runs[0].0, runs[1].0, "two compiles shared a folder");
    for (dir, mode) in &runs {
        let name = Path::new(dir)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(name.starts_with("tilec-cuda-"), "ptxas ran in {dir}");
        assert_eq!(*mode, "700", "{dir} is open to others while ptxas runs");
        assert!(!Path::new(dir).exists(), "{dir} was left behind");
    }
}
