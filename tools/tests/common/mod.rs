//! Helpers shared by the integration tests of the `tilec` binary.

// Each test binary uses a different subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository root (tests run `tilec` there, so paths like
/// `examples/gemm.py` work).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The exit code (-1 when killed by a signal).
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Standard output parsed as one JSON document.
pub fn json(output: &Output) -> serde_json::Value {
    match serde_json::from_slice(&output.stdout) {
        Ok(value) => value,
        Err(e) => panic!("stdout is not one JSON document ({e}): {}", stdout(output)),
    }
}
