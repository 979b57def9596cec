//! Where the CPU model's kernel libraries are kept between runs, and the
//! checks before one is loaded.
//!
//! The cache is a folder of the user's own: `$XDG_CACHE_HOME/tilec/ascend-cpu`
//! or `~/.cache/tilec/ascend-cpu`, created mode 0700. Before anything is
//! read from it, the folder (and `tilec` above it) must belong to the
//! effective user and be writable by nobody else; otherwise it is refused,
//! since a library planted there would run inside the user's process. Each
//! entry is named by the hash of everything that goes into the build, and
//! holds the library and the SHA-256 of its bytes, checked before the
//! library is loaded: an entry whose library does not match is rebuilt.
//! Without a home folder the cache is a private temporary folder that lives
//! as long as the process.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// The variable that moves the user's caches (XDG base directories).
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";

/// The cache folder under the user's cache home, created (mode 0700) and
/// checked; `None` when there is no cache home (no `XDG_CACHE_HOME`, no
/// `HOME`).
pub fn user_cache_dir() -> Option<Result<PathBuf, String>> {
    let home = std::env::var_os(XDG_CACHE_HOME)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(cache_dir_under(&home))
}

/// `tilec/ascend-cpu` under the cache home `home`, created (mode 0700)
/// and checked.
pub fn cache_dir_under(home: &Path) -> Result<PathBuf, String> {
    let tilec = home.join("tilec");
    let dir = tilec.join("ascend-cpu");
    create_private(&dir)?;
    check_private(&tilec)?;
    check_private(&dir)?;
    Ok(dir)
}

/// Creates `dir` and the folders above it that are missing, mode 0700.
pub fn create_private(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| format!("cannot create the kernel cache `{}`: {e}", dir.display()))
}

/// A fresh folder with a random name under the temporary folder, made by
/// an exclusive `mkdir` with mode 0700 (`tempfile` leaves a folder's mode
/// to the umask unless told one), removed with all in it when dropped.
pub fn private_tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

/// Refuses a cache folder another user could write into: it must be a
/// folder (not a link to one), owned by the effective user, without group
/// or other write permission.
pub fn check_private(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read the kernel cache `{}`: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "the kernel cache `{}` is not a folder (a link or a file is in its place); refusing to load kernels from it: remove it, or set {XDG_CACHE_HOME} elsewhere",
            dir.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let uid = rustix::process::geteuid().as_raw();
        if meta.uid() != uid {
            return Err(format!(
                "the kernel cache `{}` belongs to user id {}, not to you ({uid}); refusing to load kernels from it: remove it, or set {XDG_CACHE_HOME} elsewhere",
                dir.display(),
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "the kernel cache `{}` is writable by other users (mode {mode:04o}); refusing to load kernels from it: `chmod go-w {}`, or set {XDG_CACHE_HOME} elsewhere",
                dir.display(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// The SHA-256 of a file's bytes, in hex.
pub fn file_hash(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// The SHA-256 of `parts`, each preceded by its length, in hex: the name
/// of a cache entry.
pub fn key(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file beside a library that holds its hash.
pub fn hash_file(library: &Path) -> PathBuf {
    let mut name = library.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

/// Whether `library` is present and its bytes match the hash stored
/// beside it.
pub fn verified(library: &Path) -> bool {
    let Ok(stored) = std::fs::read_to_string(hash_file(library)) else {
        return false;
    };
    file_hash(library).is_ok_and(|actual| actual == stored.trim())
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// renamed into place whole.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
