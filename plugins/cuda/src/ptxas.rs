//! Offline validation with NVIDIA's PTX assembler, `ptxas`, when one is
//! at hand: PTX is assembled for the target's architecture and the cubin
//! is checked structurally.
//!
//! The plugin needs no `ptxas` to compile (the driver's JIT assembles PTX
//! at load time); `ptxas` is used when the user asks for a cubin
//! (`--emit cubin`) or sets `TILEC_PTXAS` to validate every compile — which
//! is how continuous integration checks, on a machine without a GPU, that
//! the emitted PTX assembles for every target. `ptxas` is the file
//! `TILEC_PTXAS` names, else the first `ptxas` on `PATH`.
//!
//! The cubin check reads the ELF with `object`: it must be a CUDA ELF
//! (machine `EM_CUDA`) that defines every kernel entry as a function symbol.
//!
//! The PTX and the cubin live in a fresh folder with a random name, made
//! mode 0700 with `mkdir`'s exclusive create (`tempfile`), for as long as
//! `ptxas` runs, and the folder is removed on every return. A predictable
//! name in the shared temporary folder would let another local user plant
//! a symlink there and have the compile overwrite a file of the victim's,
//! or read and swap the PTX between writing and assembling.

use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSymbol, SymbolKind};

/// The variable naming the `ptxas` to validate with.
pub const PTXAS_VAR: &str = "TILEC_PTXAS";

/// `EM_CUDA`, the ELF machine of NVIDIA cubins.
const EM_CUDA: u16 = 190;

/// Why assembling or checking failed.
#[derive(Debug, thiserror::Error)]
pub enum PtxasError {
    #[error(
        "no `ptxas` found: set {PTXAS_VAR} to its path or put it on PATH (it ships in the `nvidia-cuda-nvcc` wheel and the CUDA toolkit)"
    )]
    NotFound,
    #[error("cannot run `{path}`: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot use the temporary folder: {0}")]
    Io(#[from] std::io::Error),
    #[error("ptxas rejected the PTX for {arch}:\n{log}")]
    Rejected { arch: String, log: String },
    #[error("the cubin ptxas wrote for {arch} is malformed: {reason}")]
    Cubin { arch: String, reason: String },
}

/// The `ptxas` named by [`PTXAS_VAR`], if the variable is set.
pub fn from_env() -> Option<PathBuf> {
    std::env::var_os(PTXAS_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `TILEC_PTXAS`, else `ptxas` on `PATH`.
pub fn find() -> Option<PathBuf> {
    from_env().or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("ptxas"))
            .find(|p| p.is_file())
    })
}

/// A fresh folder with a random name, made by an exclusive `mkdir` with
/// mode 0700 (`tempfile` leaves a folder's mode to the umask unless told
/// one), removed when dropped.
fn private_dir() -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("tilec-cuda-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

/// Assembles `ptx` for `arch` (`sm_90a`) with `ptxas` and checks that the
/// cubin defines `entries`. Answers the cubin.
pub fn assemble(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    entries: &[&str],
) -> Result<Vec<u8>, PtxasError> {
    // Removed, with whatever ptxas left in it, when `scratch` drops: on
    // success and on every error below.
    let scratch = private_dir()?;
    let input = scratch.path().join("kernel.ptx");
    let output = scratch.path().join("kernel.cubin");
    std::fs::write(&input, ptx)?;
    let result = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-o")
        .arg(&output)
        .arg(&input)
        // Any scratch file of ptxas's own goes in the private folder too.
        .env("TMPDIR", scratch.path())
        .output()
        .map_err(|source| PtxasError::Spawn {
            path: ptxas.to_path_buf(),
            source,
        })?;
    if !result.status.success() {
        let mut log = String::from_utf8_lossy(&result.stderr).into_owned();
        log.push_str(&String::from_utf8_lossy(&result.stdout));
        // ptxas names the temporary file; the user knows it as the PTX.
        let log = log.replace(&input.display().to_string(), "<ptx>");
        return Err(PtxasError::Rejected {
            arch: arch.to_string(),
            log: log.trim().to_string(),
        });
    }
    let cubin = std::fs::read(&output)?;
    check_cubin(&cubin, entries).map_err(|reason| PtxasError::Cubin {
        arch: arch.to_string(),
        reason,
    })?;
    Ok(cubin)
}

/// Checks that `cubin` is a CUDA ELF defining every entry as a function.
pub fn check_cubin(cubin: &[u8], entries: &[&str]) -> Result<(), String> {
    let file = object::File::parse(cubin).map_err(|e| format!("not an ELF file: {e}"))?;
    let machine = match &file {
        object::File::Elf64(elf) => elf.elf_header().e_machine.get(elf.endian()),
        object::File::Elf32(elf) => elf.elf_header().e_machine.get(elf.endian()),
        _ => return Err("not an ELF file".to_string()),
    };
    if machine != EM_CUDA {
        return Err(format!("ELF machine {machine}, not EM_CUDA ({EM_CUDA})"));
    }
    for entry in entries {
        let defined = file
            .symbols()
            .any(|s| s.name() == Ok(*entry) && s.kind() == SymbolKind::Text && !s.is_undefined());
        if !defined {
            return Err(format!("no function symbol for the kernel `{entry}`"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_elf_bytes_are_refused() {
        assert!(check_cubin(b"not an elf", &["k"]).is_err());
    }

    #[test]
    fn a_host_elf_is_not_a_cubin() {
        // The test binary itself: an ELF of this machine, not EM_CUDA.
        let Ok(exe) = std::env::current_exe().and_then(std::fs::read) else {
            return;
        };
        let e = check_cubin(&exe, &[]).err().unwrap_or_default();
        assert!(e.contains("not EM_CUDA") || e.contains("not an ELF"), "{e}");
    }

    /// With a ptxas available, a minimal kernel assembles and its cubin
    /// passes the check; a broken one is rejected with ptxas's log.
    #[test]
    fn ptxas_assembles_and_rejects() {
        let Some(ptxas) = find() else {
            assert!(
                std::env::var_os("TILEC_REQUIRE_PTXAS").is_none(),
                "TILEC_REQUIRE_PTXAS is set but no ptxas was found"
            );
            return;
        };
        let ptx =
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
        let cubin = assemble(&ptxas, ptx, "sm_80", &["k"]);
        assert!(cubin.is_ok(), "{cubin:?}");
        let missing = assemble(&ptxas, ptx, "sm_80", &["other"]);
        assert!(
            matches!(missing, Err(PtxasError::Cubin { .. })),
            "{missing:?}"
        );
        let broken = assemble(&ptxas, &ptx.replace("ret;", "bogus.op;"), "sm_80", &["k"]);
        assert!(
            matches!(broken, Err(PtxasError::Rejected { .. })),
            "{broken:?}"
        );
    }
}
