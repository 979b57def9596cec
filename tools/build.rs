//! Records the commit tilec is built from (`TILEC_COMMIT`), for the
//! environment section of conformance reports. Outside a git checkout, or
//! without git, the commit is simply unknown.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=TILEC_COMMIT={commit}");
    }
    // Rebuild when HEAD moves (the files exist in a checkout).
    for path in ["../.git/HEAD", "../.git/refs/heads"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
