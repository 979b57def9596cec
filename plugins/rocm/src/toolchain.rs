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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, ToolchainError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("tilec-rocm-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ToolchainError::Io(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(tool: &Path, args: &[&str]) -> Result<(), ToolchainError> {
    let out = Command::new(tool)
        .args(args)
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
    let scratch = Scratch::new()?;
    let path = |name: &str| scratch.0.join(name).display().to_string();
    let (ll, bc, obj, hsaco) = (
        path("kernel.ll"),
        path("kernel.bc"),
        path("kernel.o"),
        path("kernel.hsaco"),
    );
    std::fs::write(&ll, ir).map_err(|e| ToolchainError::Io(format!("cannot write {ll}: {e}")))?;
    let triple = format!("-mtriple={TRIPLE}");
    let cpu = format!("-mcpu={arch}");
    run(&tc.opt, &["-O2", &triple, &cpu, &ll, "-o", &bc])?;
    run(
        &tc.llc,
        &["-O2", &triple, &cpu, "-filetype=obj", &bc, "-o", &obj],
    )?;
    run(&tc.lld, &["-shared", &obj, "-o", &hsaco])?;
    std::fs::read(&hsaco).map_err(|e| ToolchainError::Io(format!("cannot read {hsaco}: {e}")))
}

/// The assembly `llc` writes for `ir` (after `opt -O2`), for tests and
/// inspection.
pub fn assembly(tc: &Toolchain, ir: &str, arch: &str) -> Result<String, ToolchainError> {
    let scratch = Scratch::new()?;
    let path = |name: &str| scratch.0.join(name).display().to_string();
    let (ll, bc, s) = (path("kernel.ll"), path("kernel.bc"), path("kernel.s"));
    std::fs::write(&ll, ir).map_err(|e| ToolchainError::Io(format!("cannot write {ll}: {e}")))?;
    let triple = format!("-mtriple={TRIPLE}");
    let cpu = format!("-mcpu={arch}");
    run(&tc.opt, &["-O2", &triple, &cpu, &ll, "-o", &bc])?;
    run(&tc.llc, &["-O2", &triple, &cpu, &bc, "-o", &s])?;
    std::fs::read_to_string(&s).map_err(|e| ToolchainError::Io(format!("cannot read {s}: {e}")))
}
