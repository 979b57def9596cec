//! Building AMDGPU code objects with the system LLVM.
//!
//! The emitted IR keeps every register in an `alloca` ([`crate::emit`]),
//! so it is optimised first: `opt -O2` (SROA and mem2reg put the values in
//! SSA form), then `llc -O2 -filetype=obj` for the chosen `-mcpu`, then
//! `ld.lld -shared` links the relocatable object into the code object (an
//! ELF shared object, what HIP's `hipModuleLoadData` takes).
//!
//! The tools are looked for, in order, in the folder `TILEC_LLVM_DIR`
//! names (`opt-19` or `opt`, and so on), on `PATH` (the Debian names
//! `opt-19`, `llc-19`, `ld.lld-19`), and in `/usr/lib/llvm-19/bin`. A
//! missing tool is an error that names it and says how to get it.
//!
//! The tools read and write in a fresh folder with a random name, made
//! mode 0700 with `mkdir`'s exclusive create (`tempfile`), which is the
//! tools' `TMPDIR` too and is removed, with all in it, on every return. A
//! name made of the pid, a counter and the time, created with
//! `create_dir_all` (which takes a folder or link already there), let
//! another local user read the kernel or plant a folder of their own and
//! swap the files between two tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::emit::TRIPLE;

/// The environment variable naming a folder with the LLVM tools.
pub const LLVM_DIR_VAR: &str = "TILEC_LLVM_DIR";

/// Where Debian's `llvm-19` and `lld-19` put the unversioned tools.
const DEBIAN_LLVM_BIN: &str = "/usr/lib/llvm-19/bin";

/// Why a code object could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolchainError {
    #[error(
        "cannot build an AMDGPU code object: `{tool}` was not found (looked in ${LLVM_DIR_VAR}, on PATH and in {DEBIAN_LLVM_BIN}); install LLVM 19 (`apt-get install llvm-19 lld-19`), set {LLVM_DIR_VAR} to its bin folder, or ask for `--emit llvm-ir`"
    )]
    Missing { tool: &'static str },
    #[error("`{tool}` failed ({status}): {stderr}")]
    Failed {
        tool: String,
        status: String,
        stderr: String,
    },
    #[error("{0}")]
    Io(String),
}

/// The three tools a code object needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    pub opt: PathBuf,
    pub llc: PathBuf,
    pub lld: PathBuf,
}

/// Finds one tool: `names[0]` is the Debian name (`llc-19`), `names[1]`
/// the plain one.
pub fn find_tool(versioned: &str, plain: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(LLVM_DIR_VAR) {
        let dir = PathBuf::from(dir);
        for name in [versioned, plain] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(versioned);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let p = Path::new(DEBIAN_LLVM_BIN).join(plain);
    p.is_file().then_some(p)
}

/// Finds `opt`, `llc` and `ld.lld`, or names the first one missing.
pub fn find() -> Result<Toolchain, ToolchainError> {
    let opt = find_tool("opt-19", "opt").ok_or(ToolchainError::Missing { tool: "opt-19" })?;
    let llc = find_tool("llc-19", "llc").ok_or(ToolchainError::Missing { tool: "llc-19" })?;
    let lld =
        find_tool("ld.lld-19", "ld.lld").ok_or(ToolchainError::Missing { tool: "ld.lld-19" })?;
    Ok(Toolchain { opt, llc, lld })
}

/// A fresh folder with a random name, made by an exclusive `mkdir` with
/// mode 0700 (`tempfile` leaves a folder's mode to the umask unless told
/// one), removed with all in it when dropped.
fn scratch() -> Result<tempfile::TempDir, ToolchainError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("tilec-rocm-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
        .tempdir()
        .map_err(|e| ToolchainError::Io(format!("cannot create a temporary folder: {e}")))
}

/// Runs `tool` with `args`; any scratch file of its own goes in `dir`.
fn run(tool: &Path, args: &[&str], dir: &Path) -> Result<(), ToolchainError> {
    let out = Command::new(tool)
        .args(args)
        .env("TMPDIR", dir)
        .output()
        .map_err(|e| ToolchainError::Io(format!("cannot run {}: {e}", tool.display())))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The first lines say what is wrong; LLVM's stack dumps follow.
    let stderr: Vec<&str> = stderr.lines().take(20).collect();
    Err(ToolchainError::Failed {
        tool: tool.display().to_string(),
        status: out.status.to_string(),
        stderr: stderr.join("\n"),
    })
}

/// Builds the code object of `ir` for `arch` (`gfx942`).
pub fn build_code_object(tc: &Toolchain, ir: &str, arch: &str) -> Result<Vec<u8>, ToolchainError> {
    let scratch = scratch()?;
    let dir = scratch.path();
    let path = |name: &str| dir.join(name).display().to_string();
    let (ll, bc, obj, hsaco) = (
        path("kernel.ll"),
        path("kernel.bc"),
        path("kernel.o"),
        path("kernel.hsaco"),
    );
    std::fs::write(&ll, ir).map_err(|e| ToolchainError::Io(format!("cannot write {ll}: {e}")))?;
    let triple = format!("-mtriple={TRIPLE}");
    let cpu = format!("-mcpu={arch}");
    run(&tc.opt, &["-O2", &triple, &cpu, &ll, "-o", &bc], dir)?;
    run(
        &tc.llc,
        &["-O2", &triple, &cpu, "-filetype=obj", &bc, "-o", &obj],
        dir,
    )?;
    run(&tc.lld, &["-shared", &obj, "-o", &hsaco], dir)?;
    std::fs::read(&hsaco).map_err(|e| ToolchainError::Io(format!("cannot read {hsaco}: {e}")))
}

/// The assembly `llc` writes for `ir` (after `opt -O2`), for tests and
/// inspection.
pub fn assembly(tc: &Toolchain, ir: &str, arch: &str) -> Result<String, ToolchainError> {
    let scratch = scratch()?;
    let dir = scratch.path();
    let path = |name: &str| dir.join(name).display().to_string();
    let (ll, bc, s) = (path("kernel.ll"), path("kernel.bc"), path("kernel.s"));
    std::fs::write(&ll, ir).map_err(|e| ToolchainError::Io(format!("cannot write {ll}: {e}")))?;
    let triple = format!("-mtriple={TRIPLE}");
    let cpu = format!("-mcpu={arch}");
    run(&tc.opt, &["-O2", &triple, &cpu, &ll, "-o", &bc], dir)?;
    run(&tc.llc, &["-O2", &triple, &cpu, &bc, "-o", &s], dir)?;
    std::fs::read_to_string(&s).map_err(|e| ToolchainError::Io(format!("cannot read {s}: {e}")))
}
