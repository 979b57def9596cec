//! Writing the files tilec produces (`compile -o` artifacts, `run --dump`
//! tensors and manifests): every one goes to a temporary file in the
//! destination's folder, is flushed to disk, and is renamed over the
//! destination. A reader (or a second `tilec` writing the same path) sees
//! the old file or the whole new one, never a part; when anything fails —
//! a full disk, a destination that is a folder — the temporary file is
//! removed and the destination is left as it was.

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically (see the module documentation).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |file| file.write_all(bytes))
}

/// Writes to `path` atomically what `fill` writes into the temporary file;
/// when `fill` fails, nothing is left behind and the destination is
/// untouched.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file (it ends in `..` or is a root)",
        )
    })?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The mode `open` gives a new file (0666 less the umask), as a plain
    // `std::fs::write` would have, not the temporary file's private 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(dir)?;
    {
        let mut buffered = io::BufWriter::new(file.as_file_mut());
        fill(&mut buffered)?;
        buffered.flush()?;
    }
    file.as_file().sync_all()?;
    // On failure the `PersistError` hands the temporary file back; dropping
    // it removes the file.
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn writes_the_whole_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.ptx");
        write(&path, b"old").expect("write");
        write(&path, b"new text").expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"new text");
        assert_eq!(leftovers(dir.path()), ["a.ptx"]);
    }

    #[test]
    fn a_failing_writer_leaves_the_destination_untouched() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.npy");
        std::fs::write(&path, b"complete old file").expect("write");
        let error = write_with(&path, |w| {
            w.write_all(b"half of the new")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        })
        .expect_err("the writer failed");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read(&path).expect("read"), b"complete old file");
        assert_eq!(leftovers(dir.path()), ["t.npy"]);
    }

    #[test]
    fn a_folder_in_the_way_is_an_error_and_nothing_is_left() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out");
        std::fs::create_dir(&path).expect("mkdir");
        std::fs::write(path.join("inside"), b"x").expect("write");
        assert!(write(&path, b"bytes").is_err());
        assert!(path.is_dir());
        assert_eq!(leftovers(dir.path()), ["out"]);
        assert_eq!(leftovers(&path), ["inside"]);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_not_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("m.json");
        let plain = dir.path().join("plain.json");
        write(&path, b"{}").expect("write");
        std::fs::write(&plain, b"{}").expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode();
        assert_eq!(mode(&path), mode(&plain));
    }
}
