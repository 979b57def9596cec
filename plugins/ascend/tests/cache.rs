//! The CPU model's kernel cache, tried as a hostile local user would: a
//! cache folder others can write into (or owned by someone else, or a link)
//! is refused before anything is loaded from it, and a library changed
//! after it was built is rebuilt instead of loaded.
//!
//! The rebuild test needs a C++ compiler; it is skipped without one unless
//! `TILEC_REQUIRE_CXX=1`.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use tilec_backend_ascend::runtime::{self, cache};
use tilec_backend_ascend::targets::{self, Engine};

fn engine() -> Engine {
    let target = targets::describe(targets::DEFAULT_TARGET).unwrap_or_else(|e| panic!("{e:?}"));
    Engine::of(&target).unwrap_or_else(|e| panic!("{e:?}"))
}

fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    chmod(dir.path(), 0o700);
    dir
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[test]
fn a_cache_others_can_write_is_refused_before_anything_is_built_or_loaded() {
    let dir = private_dir();
    assert_eq!(cache::check_private(dir.path()), Ok(()));
    for mode in [0o777, 0o1777, 0o720, 0o702] {
        chmod(dir.path(), mode);
        let error = cache::check_private(dir.path()).expect_err("refused");
        assert!(error.contains("writable by other users"), "{error}");
        assert!(error.contains("chmod go-w"), "{error}");
        // `build` checks before it looks for an entry or runs a compiler
        // (this one does not exist, so a build would fail differently).
        let error = runtime::build(
            Path::new("/nonexistent/c++"),
            &engine(),
            "int x;",
            dir.path(),
        )
        .expect_err("refused");
        assert!(error.contains("writable by other users"), "{error}");
    }
    chmod(dir.path(), 0o700);
}

#[test]
fn a_cache_of_another_owner_or_a_link_is_refused() {
    // A private-looking folder (0700) of another user: for root, one given
    // to `nobody`; for anyone else, `/`, which belongs to root.
    let other = private_dir();
    let (path, owner) = if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(other.path(), Some(65534), None).unwrap_or_else(|e| panic!("{e}"));
        (other.path().to_path_buf(), 65534)
    } else {
        (PathBuf::from("/"), 0)
    };
    let error = cache::check_private(&path).expect_err("refused");
    assert!(
        error.contains(&format!("belongs to user id {owner}")),
        "{error}"
    );
    let dir = private_dir();
    let target = dir.path().join("real");
    cache::create_private(&target).unwrap_or_else(|e| panic!("{e}"));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| panic!("{e}"));
    let error = cache::check_private(&link).expect_err("refused");
    assert!(error.contains("not a folder"), "{error}");
}

#[test]
fn the_user_cache_is_created_private_under_xdg_cache_home() {
    let home = private_dir();
    let dir = cache::cache_dir_under(home.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dir, home.path().join("tilec/ascend-cpu"));
    for d in [home.path().join("tilec"), dir.clone()] {
        let mode = std::fs::metadata(&d).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o700), "{}", d.display());
    }
    // Loosened afterwards (by a careless `chmod -R`, or on purpose): refused.
    chmod(&home.path().join("tilec"), 0o777);
    let error = cache::cache_dir_under(home.path()).expect_err("refused");
    assert!(error.contains("writable by other users"), "{error}");
}

#[test]
fn a_changed_library_is_rebuilt_not_loaded() {
    let Some(cxx) = runtime::find_cxx() else {
        assert!(
            std::env::var_os("TILEC_REQUIRE_CXX").is_none(),
            "TILEC_REQUIRE_CXX is set but no C++ compiler was found"
        );
        return;
    };
    let dir = private_dir();
    let source = "extern \"C\" int tilec_cache_probe() { return 7; }\n";
    let so: PathBuf =
        runtime::build(&cxx, &engine(), source, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let built = std::fs::read(&so).unwrap_or_else(|e| panic!("{e}"));
    assert!(cache::verified(&so));
    // Another build of the same source reuses the entry.
    let again =
        runtime::build(&cxx, &engine(), source, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, so);
    // A library replaced behind the cache's back is not what was built:
    // the next build makes it again rather than hand it to dlopen.
    std::fs::write(&so, b"\x7fELF planted").unwrap_or_else(|e| panic!("{e}"));
    assert!(!cache::verified(&so));
    let rebuilt =
        runtime::build(&cxx, &engine(), source, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rebuilt, so);
    assert_eq!(std::fs::read(&so).unwrap_or_default(), built);
    assert!(cache::verified(&so));
    // No build folders are left behind.
    let entry = so.parent().unwrap_or(dir.path());
    let mut names: Vec<String> = std::fs::read_dir(entry)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    assert_eq!(names, ["kernel.so", "kernel.so.sha256"]);
}
