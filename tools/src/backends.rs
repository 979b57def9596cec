//! Backends: the built-in reference interpreter (`ref`) and the plugins
//! found on the search path (`--plugin`, `TILEC_PLUGIN_PATH`, folders next
//! to the executable; see `tilec_plugin_api::host`).
//!
//! Commands that only use `ref` load just the `--plugin` files, so that a
//! wrong path is still reported; commands that need a plugin backend
//! search everywhere.

use std::path::{Path, PathBuf};

use tilec_plugin_api::host::{LoadedPlugin, LookupError, PLUGIN_PATH_VAR, Registry, SearchPaths};

use crate::diagnostics::Report;

/// The name of the built-in backend.
pub const BUILTIN: &str = "ref";

/// `run --backend auto`: the first plugin with a device, else [`BUILTIN`].
pub const AUTO: &str = "auto";

/// The name of the built-in SIMT simulation backend: the baseline lowering
/// to thread-level IR (`tilec_core::lower`), run by the SIMT interpreter.
pub const SIM: &str = "sim";

/// The target `--backend sim` uses when none is given.
pub const SIM_DEFAULT_TARGET: &str = "sm_80";

/// The built-in target description `--backend sim` runs on: `--target`, or
/// [`SIM_DEFAULT_TARGET`]; an unknown name lists the built-in ones.
pub fn sim_target(name: Option<&str>) -> Result<tilec_core::target::TargetDescription, Report> {
    let name = name.unwrap_or(SIM_DEFAULT_TARGET);
    tilec_core::target::builtin(name).map_err(|e| {
        Report::error(format!("backend `{SIM}` knows no target `{name}`: {e}")).with_note(format!(
            "built-in targets: {}",
            tilec_core::target::builtin_names().join(", ")
        ))
    })
}

/// Warns about each relative entry of `TILEC_PLUGIN_PATH`, which the
/// search ignores.
fn warn_relative(paths: &SearchPaths) {
    for entry in paths.relative_env_entries() {
        eprintln!(
            "warning: the {PLUGIN_PATH_VAR} entry `{}` is relative and is ignored: \
             a relative entry would load whatever the working folder holds; give an absolute path",
            entry.display()
        );
    }
}

/// The plugins of one tilec invocation. Loaded libraries stay loaded for
/// the life of the process.
#[derive(Debug)]
pub struct Plugins {
    pub search: SearchPaths,
    pub registry: Registry,
}

/// The backend a command uses.
#[derive(Debug, Clone, Copy)]
pub enum Backend<'a> {
    /// The reference interpreter, built in.
    Ref,
    Plugin(&'a LoadedPlugin),
}

impl Plugins {
    /// With `search`, loads the `--plugin` files and every plugin on the
    /// standard search path. Without (a command that uses only a built-in
    /// backend), loads nothing: the `--plugin` files are only checked
    /// (`Registry::check_explicit`), so that a wrong path is reported but
    /// no plugin code runs.
    pub fn load(explicit: &[PathBuf], search: bool) -> Plugins {
        let mut paths = SearchPaths::standard(explicit.to_vec());
        if !search {
            paths.env = None;
            paths.exe_dir = None;
            let registry = Registry::check_explicit(&paths);
            return Plugins {
                search: paths,
                registry,
            };
        }
        warn_relative(&paths);
        let registry = Registry::discover(&paths);
        Plugins {
            search: paths,
            registry,
        }
    }

    /// Loads the plugins that may provide backend `name`: every library on
    /// the search path is checked, but one whose file declares another
    /// backend name is not loaded (`Registry::discover_for`).
    pub fn load_for(explicit: &[PathBuf], name: &str) -> Plugins {
        let paths = SearchPaths::standard(explicit.to_vec());
        warn_relative(&paths);
        let registry = Registry::discover_for(&paths, name);
        Plugins {
            search: paths,
            registry,
        }
    }

    /// The plugins a command running backend `backend` needs: none for
    /// the built-in `ref` and `sim` (the `--plugin` files only checked),
    /// every one for `auto`, and for a plugin backend only the libraries
    /// that may provide it ([`Plugins::load_for`]), so that other
    /// backends' code never runs.
    pub fn load_for_backend(explicit: &[PathBuf], backend: &str) -> Plugins {
        match backend {
            BUILTIN | SIM => Plugins::load(explicit, false),
            AUTO => Plugins::load(explicit, true),
            name => Plugins::load_for(explicit, name),
        }
    }

    /// Whether `path` was given with `--plugin`.
    pub fn is_explicit(&self, path: &Path) -> bool {
        self.search.explicit.iter().any(|p| p == path)
    }

    /// One error per `--plugin` file that could not be loaded: the user
    /// asked for it, so the command cannot go on as asked.
    pub fn explicit_failures(&self) -> Vec<Report> {
        self.registry
            .failures
            .iter()
            .filter(|(path, _)| self.is_explicit(path))
            .map(|(_, error)| {
                Report::error(error.to_string())
                    .with_note("the library was given with `--plugin`; `tilec plugins --plugin PATH` shows what tilec finds")
            })
            .collect()
    }

    /// The backend called `name`.
    pub fn backend(&self, name: &str) -> Result<Backend<'_>, Report> {
        if name == BUILTIN {
            return Ok(Backend::Ref);
        }
        self.registry.find(name).map(Backend::Plugin).map_err(|e| {
            let mut report = Report::error(e.to_string());
            if let LookupError::NotFound { .. } = e {
                report = report.with_note(format!(
                    "`{BUILTIN}` is built in; plugins are loaded from `--plugin PATH`, \
                     {PLUGIN_PATH_VAR} and the folder `plugins` next to tilec"
                ));
                for (_, failure) in &self.registry.failures {
                    report = report.with_note(format!("not loaded: {failure}"));
                }
                report = report
                    .with_note("`tilec plugins` lists the plugins found and every place searched");
            }
            report
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Plugins {
        Plugins {
            search: SearchPaths::default(),
            registry: Registry::default(),
        }
    }

    #[test]
    fn ref_is_built_in_and_others_need_a_plugin() {
        let plugins = empty();
        assert!(matches!(plugins.backend("ref"), Ok(Backend::Ref)));
        let report = plugins.backend("cuda").err();
        assert_eq!(
            report.as_ref().map(|r| r.message.as_str()),
            Some("backend `cuda` is not available: no plugin provides it")
        );
        let notes = report.map(|r| r.notes.join("\n")).unwrap_or_default();
        assert!(notes.contains("`ref` is built in"), "{notes}");
    }

    #[test]
    fn a_missing_explicit_plugin_is_an_error() {
        let plugins = Plugins::load(&[PathBuf::from("/nonexistent/libx.so")], false);
        let failures = plugins.explicit_failures();
        assert_eq!(failures.len(), 1);
        assert_eq!(
            failures[0].message,
            "plugin file `/nonexistent/libx.so` does not exist"
        );
    }
}
