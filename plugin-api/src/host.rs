//! The host side: finding plugin libraries, loading them with version and
//! layout checks, and calling them.
//!
//! # Discovery
//! In this order: files given explicitly (`--plugin PATH`), the entries of
//! `TILEC_PLUGIN_PATH` (files or folders, separated like `PATH`), the folder
//! `plugins/` next to the `tilec` executable, then `<prefix>/lib/tilec/plugins`
//! where `<prefix>` is the folder above the executable's. Folders are scanned
//! for shared libraries in sorted order, so loading is deterministic. A file
//! reached twice (also through a symbolic link) is loaded once. Relative
//! entries of `TILEC_PLUGIN_PATH` are ignored, so that what loads never
//! depends on the working folder.
//!
//! Every path is made absolute and canonical before it is checked and
//! loaded, so the file checked, hashed and reported is the file the system
//! loader opens (`--plugin NAME` means `./NAME`).
//!
//! # Loading
//! Before the system loader sees a file, it is checked to be a complete ELF
//! shared object of this machine ([`check_shared_object`]): the loader
//! maps a truncated file and the process dies of SIGBUS on first touch.
//! A library is loaded once and never unloaded (thread-local destructors of
//! unloaded Rust code crash). Before any call the host checks that it
//! exports the root module, that its ABI major version equals the host's,
//! and that the root module's layout is compatible; a plugin of an older
//! minor version loads, and the functions it lacks are reported unavailable
//! when used. A plugin whose backend name is reserved (`ref`, `sim`,
//! `auto`) or malformed (see [`name_problem`]) is refused.
//!
//! # Calls
//! Every call exchanges documents. A plugin's error, panic (caught inside
//! the plugin by the export macro) or malformed answer becomes a
//! [`CallError`] naming the plugin; nothing a plugin returns can take the
//! host down.

use crate::abi::{ABI_VERSION, CheckedRoot};
use crate::document::{self, Document, DocumentError, Encoding, Version};
use crate::types::{
    CompileOptions, CompileRequest, CompileResult, ErrorCode, IrDocument, PluginError, PluginInfo,
    RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT, TargetDescription,
};
use abi_stable::library::{LibraryError, lib_header_from_path};
use abi_stable::std_types::{RResult, RStr};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use tilec_core::ir;

/// The environment variable listing extra plugin files and folders.
pub const PLUGIN_PATH_VAR: &str = "TILEC_PLUGIN_PATH";

/// Why a library could not be loaded as a plugin.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LoadError {
    #[error("plugin file `{path}` does not exist")]
    Missing { path: PathBuf },
    #[error("cannot load `{path}` as a shared library: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("`{path}` is not a tilec plugin: it does not export the `tilec_backend` root module")]
    NotAPlugin { path: PathBuf },
    #[error("`{path}` was built for tilec plugin ABI {plugin}, but this tilec speaks ABI {host}; rebuild the plugin against tilec-plugin-api {}.x", host.major)]
    AbiMajor {
        path: PathBuf,
        plugin: String,
        host: Version,
    },
    #[error("`{path}` was built with an abi_stable version that this tilec cannot load")]
    AbiStable { path: PathBuf },
    #[error("`{path}` has a plugin interface layout this tilec does not understand: {detail}")]
    Layout { path: PathBuf, detail: String },
    #[error("plugin `{path}` returned malformed information about itself: {reason}")]
    BadInfo { path: PathBuf, reason: String },
    #[error("`{path}` is not a complete shared object: {reason}")]
    Incomplete { path: PathBuf, reason: String },
    #[error("`{path}` is a shared object for {found}, not for this machine ({host})")]
    Foreign {
        path: PathBuf,
        found: String,
        host: &'static str,
    },
    #[error("plugin `{path}` calls its backend `{name}`, which {reason}")]
    BadName {
        path: PathBuf,
        name: String,
        reason: String,
    },
}

/// The longest backend name a plugin may claim.
pub const MAX_NAME_LEN: usize = 32;

/// Backend names a plugin may not claim: the built-in backends and `auto`.
pub const RESERVED_NAMES: [&str; 3] = ["ref", "sim", "auto"];

/// Why `name` cannot be a plugin's backend name, if it cannot: a reserved
/// name, an empty one, one over [`MAX_NAME_LEN`] bytes, or one with a
/// character outside `[a-z0-9_-]`.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".to_string());
    }
    if RESERVED_NAMES.contains(&name) {
        return Some("is reserved for tilec's own backends".to_string());
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!("is longer than {MAX_NAME_LEN} bytes"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
    {
        return Some(format!(
            "has the character {c:?}; a backend name uses only `a-z`, `0-9`, `_` and `-`"
        ));
    }
    None
}

/// The ELF machine of this build's target, and its name.
fn host_machine() -> (u16, &'static str) {
    use object::elf;
    match std::env::consts::ARCH {
        "x86_64" => (elf::EM_X86_64, "x86_64"),
        "aarch64" => (elf::EM_AARCH64, "aarch64"),
        "riscv64" => (elf::EM_RISCV, "riscv64"),
        "powerpc64" => (elf::EM_PPC64, "powerpc64"),
        "s390x" => (elf::EM_S390, "s390x"),
        "loongarch64" => (elf::EM_LOONGARCH, "loongarch64"),
        other => (elf::EM_NONE, other),
    }
}

fn machine_name(machine: u16) -> String {
    use object::elf;
    match machine {
        elf::EM_X86_64 => "x86_64".to_string(),
        elf::EM_386 => "x86".to_string(),
        elf::EM_AARCH64 => "aarch64".to_string(),
        elf::EM_ARM => "arm".to_string(),
        elf::EM_RISCV => "riscv".to_string(),
        elf::EM_PPC64 => "powerpc64".to_string(),
        elf::EM_S390 => "s390x".to_string(),
        elf::EM_LOONGARCH => "loongarch".to_string(),
        elf::EM_AMDGPU => "AMDGPU".to_string(),
        elf::EM_CUDA => "CUDA".to_string(),
        other => format!("ELF machine {other}"),
    }
}

/// Checks that `path` holds a complete ELF shared object of this machine
/// before the system loader maps it: the loader trusts the headers and maps
/// segments past the end of a truncated file, which crashes the process
/// (SIGBUS) on first touch instead of failing to load. Reads the header,
/// the class (64-bit), the byte order, the machine, the type (`ET_DYN`) and
/// that every program and section header lies within the file and points
/// within it.
///
/// Returns the backend name the file declares in its `.tilec_backend`
/// section ([`crate::BackendPlugin::NAME`]), if it declares one.
pub fn check_shared_object(path: &Path) -> Result<Option<String>, LoadError> {
    use object::elf;
    use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
    let incomplete = |reason: String| LoadError::Incomplete {
        path: path.to_path_buf(),
        reason,
    };
    let data = std::fs::read(path).map_err(|e| LoadError::Open {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let data = data.as_slice();
    if data.len() < 4 || data[..4] != elf::ELFMAG {
        return Err(incomplete(format!(
            "it is not an ELF file ({} bytes without the ELF magic number)",
            data.len()
        )));
    }
    if data.len() < 5 || data[4] != elf::ELFCLASS64 || !cfg!(target_pointer_width = "64") {
        return Err(incomplete(
            "it is not a 64-bit ELF file, or too short for an ELF header".to_string(),
        ));
    }
    let header = elf::FileHeader64::<object::Endianness>::parse(data)
        .map_err(|e| incomplete(format!("its ELF header is unreadable: {e}")))?;
    let endian = header
        .endian()
        .map_err(|e| incomplete(format!("its ELF header is unreadable: {e}")))?;
    if endian != object::Endianness::default() {
        return Err(incomplete(
            "its byte order is not this machine's".to_string(),
        ));
    }
    let (host, host_name) = host_machine();
    let machine = header.e_machine(endian);
    if machine != host {
        return Err(LoadError::Foreign {
            path: path.to_path_buf(),
            found: machine_name(machine),
            host: host_name,
        });
    }
    if header.e_type(endian) != elf::ET_DYN {
        return Err(incomplete(
            "its ELF type is not a shared object (ET_DYN)".to_string(),
        ));
    }
    let len = data.len() as u64;
    let segments = header
        .program_headers(endian, data)
        .map_err(|e| incomplete(format!("its program headers are cut off: {e}")))?;
    if segments.is_empty() {
        return Err(incomplete("it has no program headers".to_string()));
    }
    for (i, ph) in segments.iter().enumerate() {
        let end = ph.p_offset(endian).checked_add(ph.p_filesz(endian));
        if end.is_none_or(|end| end > len) {
            return Err(incomplete(format!(
                "segment {i} ends past the end of the file ({len} bytes)"
            )));
        }
    }
    let sections = header
        .section_headers(endian, data)
        .map_err(|e| incomplete(format!("its section headers are cut off: {e}")))?;
    for (i, sh) in sections.iter().enumerate() {
        if sh.sh_type(endian) == elf::SHT_NOBITS {
            continue;
        }
        let end = sh.sh_offset(endian).checked_add(sh.sh_size(endian));
        if end.is_none_or(|end| end > len) {
            return Err(incomplete(format!(
                "section {i} ends past the end of the file ({len} bytes)"
            )));
        }
    }
    let table = header
        .sections(endian, data)
        .map_err(|e| incomplete(format!("its section table is unreadable: {e}")))?;
    let name = table
        .section_by_name(endian, crate::abi::NAME_SECTION.as_bytes())
        .and_then(|(_, sh)| sh.data(endian, data).ok())
        .map(|bytes| {
            String::from_utf8_lossy(bytes)
                .trim_end_matches('\0')
                .to_string()
        })
        .filter(|name| !name.is_empty());
    Ok(name)
}

/// Why a call into a loaded plugin failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("backend `{plugin}` refused: {}: {}", .error.code.name(), .error.message)]
    Plugin { plugin: String, error: PluginError },
    #[error("backend `{plugin}` panicked in `{call}`: {message}")]
    Panic {
        plugin: String,
        call: &'static str,
        message: String,
    },
    #[error("backend `{plugin}` returned malformed bytes from `{call}`: {reason}")]
    Malformed {
        plugin: String,
        call: &'static str,
        reason: String,
    },
    #[error(
        "backend `{plugin}` was built for plugin ABI {plugin_abi} and has no `{call}` call (added in ABI {since})"
    )]
    Unavailable {
        plugin: String,
        call: &'static str,
        since: Version,
        plugin_abi: Version,
    },
    #[error(
        "backend `{plugin}` reads Tile IR {min} to {max}, but this kernel needs Tile IR ≥ {needs}; update the plugin"
    )]
    IrTooNew {
        plugin: String,
        min: Version,
        max: Version,
        needs: Version,
    },
    #[error(
        "backend `{plugin}` reads Tile IR {min} to {max}, but this tilec writes Tile IR {writes}; update tilec"
    )]
    IrTooOld {
        plugin: String,
        min: Version,
        max: Version,
        writes: Version,
    },
}

/// A plugin library loaded into this process.
pub struct LoadedPlugin {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// Given with `--plugin` (wins over discovered plugins of the same name).
    pub explicit: bool,
    pub info: PluginInfo,
    /// The ABI version the plugin was built for.
    pub abi: Version,
    module: CheckedRoot,
}

impl std::fmt::Debug for LoadedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPlugin")
            .field("path", &self.path)
            .field("explicit", &self.explicit)
            .field("info", &self.info)
            .field("abi", &self.abi)
            .finish_non_exhaustive()
    }
}

fn open_error(path: &Path, e: &LibraryError) -> LoadError {
    match e {
        LibraryError::OpenError { err, .. } => LoadError::Open {
            path: path.to_path_buf(),
            reason: err.to_string(),
        },
        LibraryError::GetSymbolError { .. } => LoadError::NotAPlugin {
            path: path.to_path_buf(),
        },
        LibraryError::InvalidAbiHeader(_) | LibraryError::InvalidCAbi { .. } => {
            LoadError::AbiStable {
                path: path.to_path_buf(),
            }
        }
        LibraryError::IncompatibleVersionNumber { actual_version, .. } => LoadError::AbiMajor {
            path: path.to_path_buf(),
            plugin: format!("{}.{}", actual_version.major, actual_version.minor),
            host: ABI_VERSION,
        },
        other => LoadError::Layout {
            path: path.to_path_buf(),
            detail: layout_detail(&other.to_string()),
        },
    }
}

/// The gist of an abi_stable load error. A layout error's text starts with
/// both layouts in full (its first line is `Compared <this>:`) and names
/// each problem in an `Error:` line followed by `Expected:` and `Found:`
/// values; this keeps those, as `too many fields (expected 5, found 4)`.
/// Any other text gives its first non-empty line.
fn layout_detail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let value_after = |from: usize, label: &str| {
        lines[from..]
            .iter()
            .take_while(|l| !l.starts_with("Error:"))
            .position(|l| *l == label)
            .and_then(|k| lines.get(from + k + 1))
            .copied()
    };
    let problems: Vec<String> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let what = l.strip_prefix("Error:")?.trim();
            Some(
                match (
                    value_after(i + 1, "Expected:"),
                    value_after(i + 1, "Found:"),
                ) {
                    (Some(e), Some(f)) => format!("{what} (expected {e}, found {f})"),
                    _ => what.to_string(),
                },
            )
        })
        .collect();
    if problems.is_empty() {
        lines
            .iter()
            .find(|l| !l.is_empty())
            .unwrap_or(&"")
            .to_string()
    } else {
        problems.join("; ")
    }
}

impl LoadedPlugin {
    /// Loads and checks the plugin at `path`.
    ///
    /// The path is first made absolute and canonical, so that the file
    /// checked (and hashed by callers, from [`LoadedPlugin::path`]) is the
    /// file the system loader opens: a bare `NAME` means `./NAME`, never a
    /// search of the loader's library path. The file must then be a
    /// complete shared object of this machine ([`check_shared_object`])
    /// before it is opened, and the backend name it claims must be a valid
    /// one ([`name_problem`]).
    pub fn load(path: &Path, explicit: bool) -> Result<LoadedPlugin, LoadError> {
        if !path.exists() {
            return Err(LoadError::Missing {
                path: path.to_path_buf(),
            });
        }
        let path = &std::fs::canonicalize(path).map_err(|e| LoadError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let declared = check_shared_object(path)?;
        let header = lib_header_from_path(path).map_err(|e| open_error(path, &e))?;
        // Compare ABI versions ourselves first, for a message that names both.
        let plugin_version = header.version_strings();
        let plugin_major = plugin_version.version.split('.').next().unwrap_or("");
        if plugin_major != ABI_VERSION.major.to_string() {
            let plugin = plugin_version
                .version
                .rsplit_once('.')
                .map_or(plugin_version.version.to_string(), |(mm, _)| mm.to_string());
            return Err(LoadError::AbiMajor {
                path: path.to_path_buf(),
                plugin,
                host: ABI_VERSION,
            });
        }
        let plugin_minor = plugin_version
            .version
            .split('.')
            .nth(1)
            .and_then(|m| m.parse::<u16>().ok())
            .unwrap_or(0);
        let module = CheckedRoot::init(header, plugin_minor).map_err(|e| open_error(path, &e))?;
        let v = (module.abi_version())();
        let abi = Version::new(v.major, v.minor);
        if abi.major != ABI_VERSION.major {
            return Err(LoadError::AbiMajor {
                path: path.to_path_buf(),
                plugin: abi.to_string(),
                host: ABI_VERSION,
            });
        }
        let bytes = match (module.info())(Encoding::Postcard.to_byte()) {
            RResult::ROk(b) => b,
            RResult::RErr(b) => {
                let reason = match document::decode::<PluginError>(&b) {
                    Ok(e) => format!("{}: {}", e.code.name(), e.message),
                    Err(e) => e.to_string(),
                };
                return Err(LoadError::BadInfo {
                    path: path.to_path_buf(),
                    reason,
                });
            }
        };
        let info = document::decode::<PluginInfo>(&bytes).map_err(|e| LoadError::BadInfo {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let problem = name_problem(&info.name).or_else(|| {
            declared
                .as_ref()
                .filter(|d| **d != info.name)
                .map(|d| format!("is not the name `{d}` its file declares"))
        });
        if let Some(reason) = problem {
            return Err(LoadError::BadName {
                path: path.to_path_buf(),
                name: info.name,
                reason,
            });
        }
        Ok(LoadedPlugin {
            path: path.to_path_buf(),
            explicit,
            info,
            abi,
            module,
        })
    }

    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Whether the plugin has the runtime call (ABI 1.1) and says it
    /// implements it.
    pub fn has_runtime(&self) -> bool {
        self.module.runtime().is_some() && self.info.has_runtime
    }

    fn answer<T: Document>(
        &self,
        call: &'static str,
        result: RResult<abi_stable::std_types::RVec<u8>, abi_stable::std_types::RVec<u8>>,
    ) -> Result<T, CallError> {
        let malformed = |e: DocumentError| CallError::Malformed {
            plugin: self.info.name.clone(),
            call,
            reason: e.to_string(),
        };
        match result {
            RResult::ROk(bytes) => document::decode::<T>(&bytes).map_err(malformed),
            RResult::RErr(bytes) => {
                let error = document::decode::<PluginError>(&bytes).map_err(malformed)?;
                if error.code == ErrorCode::Panic {
                    return Err(CallError::Panic {
                        plugin: self.info.name.clone(),
                        call,
                        message: error.message,
                    });
                }
                Err(CallError::Plugin {
                    plugin: self.info.name.clone(),
                    error,
                })
            }
        }
    }

    /// The description of one target.
    pub fn describe_target(&self, arch: &str) -> Result<TargetDescription, CallError> {
        // JSON: see `TargetDescription` for why.
        let r = (self.module.describe_target())(RStr::from_str(arch), Encoding::Json.to_byte());
        self.answer("describe_target", r)
    }

    /// The Tile IR format to send, or why none fits.
    pub fn ir_format(&self) -> Result<Version, CallError> {
        let (min, max) = self.info.ir_formats;
        if min.major == TILE_IR_FORMAT.major
            && min.minor <= TILE_IR_FORMAT.minor
            && TILE_IR_FORMAT.minor <= max.minor
            && max.major == TILE_IR_FORMAT.major
        {
            return Ok(TILE_IR_FORMAT);
        }
        if (max.major, max.minor) < (TILE_IR_FORMAT.major, TILE_IR_FORMAT.minor) {
            // Only one IR format exists so far, so there is nothing older
            // to fall back to.
            return Err(CallError::IrTooNew {
                plugin: self.info.name.clone(),
                min,
                max,
                needs: TILE_IR_FORMAT,
            });
        }
        Err(CallError::IrTooOld {
            plugin: self.info.name.clone(),
            min,
            max,
            writes: TILE_IR_FORMAT,
        })
    }

    /// Compiles `module` for `target`.
    pub fn compile(
        &self,
        module: &ir::Module,
        target: &str,
        options: &CompileOptions,
    ) -> Result<CompileResult, CallError> {
        let format = self.ir_format()?;
        let request = CompileRequest {
            ir: IrDocument {
                format,
                module: module.clone(),
            },
            target: target.to_string(),
            options: options.clone(),
        };
        let bytes = document::encode(&request, Encoding::Postcard);
        let r = (self.module.compile())(bytes.as_slice().into());
        self.answer("compile", r)
    }

    /// Sends `bytes` to the plugin's compile call as they are: for
    /// conformance checks that a plugin refuses a malformed request with a
    /// structured error instead of crashing.
    pub fn compile_bytes(&self, bytes: &[u8]) -> Result<CompileResult, CallError> {
        let r = (self.module.compile())(bytes.into());
        self.answer("compile", r)
    }

    /// Sends one runtime request.
    pub fn runtime(&self, request: &RuntimeRequest) -> Result<RuntimeResponse, CallError> {
        let Some(call) = self.module.runtime() else {
            return Err(CallError::Unavailable {
                plugin: self.info.name.clone(),
                call: "runtime",
                since: Version::new(1, 1),
                plugin_abi: self.abi,
            });
        };
        let bytes = document::encode(request, Encoding::Postcard);
        let r = call(bytes.as_slice().into());
        self.answer("runtime", r)
    }
}

/// The file-name prefix (after the platform's library prefix) of plugins
/// found beside the executable: the crates of tilec's own workspace are
/// named `tilec-backend-*`.
pub const WORKSPACE_PLUGIN_PREFIX: &str = "tilec_backend_";

/// Where to look for plugins.
#[derive(Clone, Debug, Default)]
pub struct SearchPaths {
    /// `--plugin PATH` files, in order.
    pub explicit: Vec<PathBuf>,
    /// The value of `TILEC_PLUGIN_PATH`.
    pub env: Option<OsString>,
    /// The folder of the running executable.
    pub exe_dir: Option<PathBuf>,
}

impl SearchPaths {
    /// The standard search for the running `tilec`: `explicit`, then
    /// `TILEC_PLUGIN_PATH`, then the folders next to the executable
    /// (`plugins/`, `../lib/tilec/plugins/`), then the executable's own
    /// folder for `libtilec_backend_*` libraries.
    pub fn standard(explicit: Vec<PathBuf>) -> SearchPaths {
        SearchPaths {
            explicit,
            env: std::env::var_os(PLUGIN_PATH_VAR),
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
        }
    }

    /// The relative entries of `TILEC_PLUGIN_PATH`, which the search
    /// ignores: a command warns about each.
    pub fn relative_env_entries(&self) -> Vec<PathBuf> {
        self.env.as_ref().map_or_else(Vec::new, |env| {
            std::env::split_paths(env)
                .filter(|p| !p.as_os_str().is_empty() && p.is_relative())
                .collect()
        })
    }

    /// Candidate files in search order, with whether each was explicit.
    /// `TILEC_PLUGIN_PATH` entries are taken in the order listed, like
    /// `PATH`: a file as itself, a folder as its libraries, sorted; relative
    /// entries are ignored ([`SearchPaths::relative_env_entries`]). The
    /// list may name one file more than once; [`Registry::discover`] loads
    /// it once.
    pub fn candidates(&self) -> Vec<(PathBuf, bool)> {
        let mut out: Vec<(PathBuf, bool)> =
            self.explicit.iter().map(|p| (p.clone(), true)).collect();
        if let Some(env) = &self.env {
            for entry in std::env::split_paths(env) {
                // A relative entry would depend on the working folder, so
                // that running tilec in a folder someone else controls
                // would load their code: it is ignored (the caller warns,
                // see `relative_env_entries`).
                if entry.as_os_str().is_empty() || entry.is_relative() {
                    continue;
                }
                if entry.is_dir() {
                    out.extend(libraries_in(&entry).into_iter().map(|p| (p, false)));
                } else {
                    out.push((entry, false));
                }
            }
        }
        if let Some(dir) = &self.exe_dir {
            let mut folders = vec![dir.join("plugins")];
            if let Some(prefix) = dir.parent() {
                folders.push(prefix.join("lib").join("tilec").join("plugins"));
            }
            for folder in folders {
                out.extend(libraries_in(&folder).into_iter().map(|p| (p, false)));
            }
            // Plugins built in the same cargo workspace land beside the
            // executable (`target/release/libtilec_backend_cuda.so`).
            let prefix = format!("{}{WORKSPACE_PLUGIN_PREFIX}", std::env::consts::DLL_PREFIX);
            out.extend(
                libraries_in(dir)
                    .into_iter()
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&prefix))
                    })
                    .map(|p| (p, false)),
            );
        }
        out
    }
}

/// Shared libraries in a folder, sorted.
fn libraries_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut libs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|e| e == std::env::consts::DLL_EXTENSION)
        })
        .collect();
    libs.sort();
    libs
}

/// Why no single plugin serves a backend name.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LookupError {
    #[error("backend `{name}` is not available: no plugin provides it{}", available_list(.available))]
    NotFound {
        name: String,
        available: Vec<String>,
    },
    #[error(
        "two plugins claim backend `{name}`: `{first}` and `{second}`; choose one with `--plugin PATH` or remove the other"
    )]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
}

fn available_list(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" (available: {})", names.join(", "))
    }
}

/// Every plugin found, and every library that failed to load.
#[derive(Debug, Default)]
pub struct Registry {
    pub plugins: Vec<LoadedPlugin>,
    pub failures: Vec<(PathBuf, LoadError)>,
    /// Libraries not loaded because their file declares another backend
    /// name than the one asked for ([`Registry::discover_for`]), with that
    /// name.
    pub skipped: Vec<(PathBuf, String)>,
}

impl Registry {
    /// Loads every candidate of `paths`.
    pub fn discover(paths: &SearchPaths) -> Registry {
        Registry::discover_matching(paths, None)
    }

    /// Loads the candidates of `paths` that may provide backend `name`:
    /// a library whose file declares another name
    /// ([`crate::BackendPlugin::NAME`]) is only checked, not loaded, so
    /// none of its code runs; one that declares none is loaded to learn
    /// its name.
    pub fn discover_for(paths: &SearchPaths, name: &str) -> Registry {
        Registry::discover_matching(paths, Some(name))
    }

    fn discover_matching(paths: &SearchPaths, wanted: Option<&str>) -> Registry {
        let mut registry = Registry::default();
        let mut seen: Vec<PathBuf> = Vec::new();
        for (path, explicit) in paths.candidates() {
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            if let Some(wanted) = wanted
                && path.exists()
            {
                match check_shared_object(&key) {
                    Ok(Some(declared)) if declared != wanted => {
                        registry.skipped.push((path, declared));
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        registry.failures.push((path, e));
                        continue;
                    }
                }
            }
            match LoadedPlugin::load(&path, explicit) {
                Ok(p) => registry.plugins.push(p),
                Err(e) => registry.failures.push((path, e)),
            }
        }
        registry
    }

    /// Checks the explicit files of `paths` without loading them: that
    /// each exists and is a complete shared object of this machine
    /// ([`check_shared_object`]). For commands that use only a built-in
    /// backend: a wrong `--plugin` is still reported, and no plugin code
    /// (its library constructors, its `info`) runs.
    pub fn check_explicit(paths: &SearchPaths) -> Registry {
        let mut registry = Registry::default();
        for path in &paths.explicit {
            let checked = if path.exists() {
                std::fs::canonicalize(path)
                    .map_err(|e| LoadError::Open {
                        path: path.clone(),
                        reason: e.to_string(),
                    })
                    .and_then(|p| check_shared_object(&p).map(drop))
            } else {
                Err(LoadError::Missing { path: path.clone() })
            };
            if let Err(e) = checked {
                registry.failures.push((path.clone(), e));
            }
        }
        registry
    }

    /// The plugin serving backend `name`: an explicit one first; otherwise
    /// exactly one must claim the name.
    pub fn find(&self, name: &str) -> Result<&LoadedPlugin, LookupError> {
        let claims: Vec<&LoadedPlugin> = self
            .plugins
            .iter()
            .filter(|p| p.info.name == name)
            .collect();
        if let Some(p) = claims.iter().find(|p| p.explicit) {
            return Ok(p);
        }
        match claims.as_slice() {
            [] => {
                // Each name once, in loading order, then those not loaded.
                let mut available: Vec<String> = Vec::new();
                let names = self.plugins.iter().map(|p| &p.info.name);
                for n in names.chain(self.skipped.iter().map(|(_, n)| n)) {
                    if !available.contains(n) {
                        available.push(n.clone());
                    }
                }
                Err(LookupError::NotFound {
                    name: name.to_string(),
                    available,
                })
            }
            [one] => Ok(one),
            [a, b, ..] => Err(LookupError::Duplicate {
                name: name.to_string(),
                first: a.path.clone(),
                second: b.path.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::layout_detail;

    /// The text abi_stable gives when a plugin's root module has fewer
    /// fields than the layout it is checked against.
    #[cfg(not(any(
        feature = "test-abi-1-0",
        feature = "test-abi-2-0",
        feature = "test-abi-1-2"
    )))]
    #[test]
    fn layout_errors_are_summarized() {
        use abi_stable::StableAbi;
        use abi_stable::abi_stability::abi_checking::check_layout_compatibility;
        let errors = check_layout_compatibility(
            <crate::abi::BackendRef as StableAbi>::LAYOUT,
            <crate::abi::v1_0::BackendRef as StableAbi>::LAYOUT,
        )
        .expect_err("five fields expected, four found");
        assert_eq!(
            layout_detail(&errors.to_string()),
            "too many fields (expected 5, found 4)"
        );
    }

    #[test]
    fn other_errors_give_their_first_line() {
        assert_eq!(layout_detail("\n  first\nsecond"), "first");
        assert_eq!(layout_detail(""), "");
    }
}
