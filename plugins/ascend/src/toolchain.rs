//! CANN's AscendC compiler, when the machine has it: every compile then
//! also builds the emitted source for the AI core, so a kernel the real
//! toolchain rejects fails at compile time rather than on the device.
//!
//! The compiler is `ccec` or `bisheng` on `PATH`, or the path in
//! [`CCEC_VAR`]; the AscendC headers come from `ASCEND_HOME_PATH` (set by
//! CANN's `set_env.sh`). Without a compiler nothing is checked.

use std::path::{Path, PathBuf};
use std::process::Command;

use tilec_core::target::TargetDescription;

/// Names the AscendC compiler to use instead of a `PATH` search.
pub const CCEC_VAR: &str = "TILEC_ASCEND_CCEC";

/// Why the AscendC compiler rejected a source.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    #[error("cannot run `{tool}`: {message}")]
    Spawn { tool: String, message: String },
    #[error("cannot write the source for `{tool}`: {message}")]
    Io { tool: String, message: String },
    #[error("`{tool}` rejected the emitted AscendC:\n{stderr}")]
    Rejected { tool: String, stderr: String },
}

/// The AscendC compiler, if the machine has one.
pub fn find() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CCEC_VAR) {
        return Some(PathBuf::from(path));
    }
    ["ccec", "bisheng"].iter().find_map(|name| on_path(name))
}

/// `name` resolved against `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The AI core architecture CANN's compiler builds `source` for: the cube
/// core of the 910B is `dav-c220-cube` (hardware-facts §5, "dav-c220");
/// a source with a mixed kernel (AIC and AIV code, `KERNEL_TYPE_MIX_*`)
/// builds for the whole AI core, `dav-c220`.
pub fn aicore_arch(target: &TargetDescription, source: &str) -> &'static str {
    let _ = target;
    if source.contains("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_") {
        "dav-c220"
    } else {
        "dav-c220-cube"
    }
}

/// Compiles `source` for the target's AI core with `tool` (object only).
pub fn check(tool: &Path, source: &str, target: &TargetDescription) -> Result<(), ToolchainError> {
    let name = tool.display().to_string();
    let io = |e: std::io::Error| ToolchainError::Io {
        tool: name.clone(),
        message: e.to_string(),
    };
    // A fresh folder with a random name, mode 0700, removed on return.
    let scratch = crate::runtime::cache::private_tempdir("tilec-ascend-ccec-").map_err(io)?;
    let dir = scratch.path();
    let file = dir.join("kernel.cpp");
    std::fs::write(&file, source).map_err(io)?;
    let mut cmd = Command::new(tool);
    cmd.arg("-c")
        .arg("-O2")
        .arg("-std=c++17")
        .arg("-xcce")
        .arg(format!("--cce-aicore-arch={}", aicore_arch(target, source)))
        .arg(&file)
        .arg("-o")
        .arg(dir.join("kernel.o"));
    if let Some(home) = std::env::var_os("ASCEND_HOME_PATH") {
        let home = PathBuf::from(home);
        for sub in [
            "compiler/tikcpp",
            "compiler/tikcpp/tikcfw",
            "compiler/tikcpp/tikcfw/impl",
            "compiler/tikcpp/tikcfw/interface",
            "include",
        ] {
            cmd.arg(format!("-I{}", home.join(sub).display()));
        }
    }
    let out = cmd.output().map_err(|e| ToolchainError::Spawn {
        tool: name.clone(),
        message: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(ToolchainError::Rejected {
            tool: name,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(())
}
