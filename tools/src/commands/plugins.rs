//! `tilec plugins`: the backends this tilec can use, the libraries that
//! failed to load, and every place searched, so that a person can see why a
//! backend is or is not available.

use std::fmt::Write as _;
use std::path::Path;

use tilec_plugin_api::host::{CallError, LoadedPlugin, PLUGIN_PATH_VAR, SearchPaths};
use tilec_plugin_api::{ErrorCode, RuntimeRequest, RuntimeResponse, TILE_IR_FORMAT};

use crate::backends::{BUILTIN, Plugins};
use crate::cli::{EMIT_TILE_IR, PluginsArgs};
use crate::commands::{Context, Exit, print_stdout};
use crate::json::{self, LoadFailure, PluginEntry, PluginsOutput, SearchEntry};

pub fn run(args: &PluginsArgs, _cx: &Context) -> Exit {
    let plugins = Plugins::load(&args.plugins.paths, true);
    let mut output = PluginsOutput {
        plugins: vec![builtin_entry()],
        failures: plugins
            .registry
            .failures
            .iter()
            .map(|(path, error)| LoadFailure {
                path: path.display().to_string(),
                error: error.to_string(),
            })
            .collect(),
        search: search_entries(&plugins.search),
    };
    output.plugins.extend(
        plugins
            .registry
            .plugins
            .iter()
            .map(|p| plugin_entry(&plugins, p)),
    );
    if args.json {
        print_stdout(&(json::to_line(&output) + "\n"));
    } else {
        print_stdout(&render(&output, plugins.search.env.is_some()));
    }
    let explicit_failed = plugins
        .registry
        .failures
        .iter()
        .any(|(path, _)| plugins.is_explicit(path));
    if explicit_failed {
        Exit::Error
    } else {
        Exit::Success
    }
}

fn builtin_entry() -> PluginEntry {
    PluginEntry {
        name: BUILTIN.to_string(),
        builtin: true,
        file: None,
        explicit: false,
        vendor: "tilec".to_string(),
        plugin_version: env!("CARGO_PKG_VERSION").to_string(),
        abi: None,
        ir_formats: Some([TILE_IR_FORMAT.to_string(), TILE_IR_FORMAT.to_string()]),
        targets: Vec::new(),
        default_target: None,
        ir_level: "tile".to_string(),
        runtime: true,
        devices: None,
        devices_error: None,
        shadowed: None,
        notes: vec![format!(
            "the reference interpreter: runs kernels on the CPU with exact dtype semantics; \
             `compile` writes `{EMIT_TILE_IR}`"
        )],
    }
}

fn plugin_entry(plugins: &Plugins, p: &LoadedPlugin) -> PluginEntry {
    let info = &p.info;
    let (devices, devices_error) = if p.has_runtime() {
        match p.runtime(&RuntimeRequest::Devices) {
            Ok(RuntimeResponse::Devices(devices)) => (Some(devices), None),
            Ok(_) => (
                None,
                Some("the runtime answered a device query with something else".to_string()),
            ),
            Err(CallError::Plugin { error, .. }) if error.code == ErrorCode::NoDevice => {
                (None, Some(format!("no device: {}", error.message)))
            }
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let shadowed = if info.name == BUILTIN {
        Some(format!("the built-in backend `{BUILTIN}` has this name"))
    } else {
        match plugins.registry.find(&info.name) {
            Ok(winner) if winner.path != p.path => Some(format!(
                "`{}` provides backend `{}` too, and is used",
                winner.path.display(),
                info.name
            )),
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        }
    };
    PluginEntry {
        name: info.name.clone(),
        builtin: false,
        file: Some(p.path.display().to_string()),
        explicit: p.explicit,
        vendor: info.vendor.clone(),
        plugin_version: info.plugin_version.clone(),
        abi: Some(p.abi.to_string()),
        ir_formats: Some([info.ir_formats.0.to_string(), info.ir_formats.1.to_string()]),
        targets: info.targets.clone(),
        default_target: info.default_target.clone(),
        ir_level: info.ir_level.clone(),
        runtime: p.has_runtime(),
        devices,
        devices_error,
        shadowed,
        notes: info.notes.clone(),
    }
}

/// Every place searched, in the order `SearchPaths::candidates` uses.
fn search_entries(search: &SearchPaths) -> Vec<SearchEntry> {
    let mut out: Vec<SearchEntry> = search
        .explicit
        .iter()
        .map(|p| search_entry("explicit", p))
        .collect();
    if let Some(env) = &search.env {
        out.extend(
            std::env::split_paths(env)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| search_entry("env", &p)),
        );
    }
    if let Some(dir) = &search.exe_dir {
        out.push(search_entry("exe-dir", &dir.join("plugins")));
        if let Some(prefix) = dir.parent() {
            out.push(search_entry(
                "prefix",
                &prefix.join("lib").join("tilec").join("plugins"),
            ));
        }
        // Only its `libtilec_backend_*` libraries are candidates.
        out.push(search_entry("beside", dir));
    }
    out
}

fn search_entry(source: &'static str, path: &Path) -> SearchEntry {
    let (kind, libraries) = if path.is_dir() {
        let count = std::fs::read_dir(path).map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .is_some_and(|e| e == std::env::consts::DLL_EXTENSION)
                })
                .count()
        });
        ("folder", Some(count))
    } else if path.exists() {
        ("file", None)
    } else {
        ("missing", None)
    };
    SearchEntry {
        source,
        path: path.display().to_string(),
        kind,
        libraries,
    }
}

/// The text form: one block per backend, the failures, the search path.
fn render(output: &PluginsOutput, env_set: bool) -> String {
    let mut out = String::new();
    for entry in &output.plugins {
        render_entry(&mut out, entry);
        out.push('\n');
    }
    if output.plugins.len() == 1 {
        out.push_str("No backend plugins found.\n\n");
    }
    if output.failures.is_empty() {
        out.push_str("Libraries that failed to load: none\n");
    } else {
        out.push_str("Libraries that failed to load:\n");
        for failure in &output.failures {
            let _ = writeln!(out, "  {}\n    {}", failure.path, failure.error);
        }
    }
    out.push_str("\nSearched, in order:\n");
    let label = |source: &str| match source {
        "explicit" => "--plugin",
        "env" => PLUGIN_PATH_VAR,
        "exe-dir" => "next to tilec",
        "beside" => "tilec_backend_*",
        _ => "prefix",
    };
    let line = |out: &mut String, entry: &SearchEntry| {
        let what = match (entry.kind, entry.libraries) {
            ("folder", Some(1)) => "folder, 1 library".to_string(),
            ("folder", Some(n)) => format!("folder, {n} libraries"),
            (kind, _) => kind.to_string(),
        };
        let _ = writeln!(out, "  {:<18} {} ({what})", label(entry.source), entry.path);
    };
    let of = |source: &'static str| output.search.iter().filter(move |e| e.source == source);
    for entry in of("explicit") {
        line(&mut out, entry);
    }
    if env_set {
        for entry in of("env") {
            line(&mut out, entry);
        }
    } else {
        let _ = writeln!(out, "  {PLUGIN_PATH_VAR:<18} (not set)");
    }
    for entry in of("exe-dir").chain(of("prefix")).chain(of("beside")) {
        line(&mut out, entry);
    }
    out
}

fn render_entry(out: &mut String, e: &PluginEntry) {
    let field = |out: &mut String, name: &str, value: &str| {
        let name = if name.is_empty() {
            String::new()
        } else {
            format!("{name}:")
        };
        let _ = writeln!(out, "  {name:<16}{value}");
    };
    if e.builtin {
        let _ = writeln!(out, "{} (built in)", e.name);
    } else {
        let _ = writeln!(out, "{}", e.name);
    }
    if let Some(file) = &e.file {
        let how = if e.explicit { " (--plugin)" } else { "" };
        field(out, "file", &format!("{file}{how}"));
    }
    field(out, "vendor", &e.vendor);
    let version = if e.builtin {
        "version"
    } else {
        "plugin version"
    };
    field(out, version, &e.plugin_version);
    if let Some(abi) = &e.abi {
        field(out, "plugin ABI", abi);
    }
    if let Some([min, max]) = &e.ir_formats {
        let range = if min == max {
            min.clone()
        } else {
            format!("{min} to {max}")
        };
        field(out, "Tile IR read", &range);
    }
    if !e.builtin {
        let targets: Vec<String> = e
            .targets
            .iter()
            .map(|t| {
                if e.default_target.as_ref() == Some(t) {
                    format!("{t} (default)")
                } else {
                    t.clone()
                }
            })
            .collect();
        field(
            out,
            "targets",
            &if targets.is_empty() {
                "none".to_string()
            } else {
                targets.join(", ")
            },
        );
    }
    field(out, "IR level", &e.ir_level);
    let runtime = match (e.builtin, e.runtime) {
        (true, _) => "present (the CPU)",
        (false, true) => "present",
        (false, false) => "none",
    };
    field(out, "runtime", runtime);
    if let Some(devices) = &e.devices {
        if devices.is_empty() {
            field(out, "devices", "none");
        }
        for (i, d) in devices.iter().enumerate() {
            let text = format!(
                "{}: {} ({}, {:.1} GiB, driver {})",
                d.index,
                d.name,
                d.arch,
                d.memory_bytes as f64 / f64::from(1u32 << 30),
                d.driver
            );
            field(out, if i == 0 { "devices" } else { "" }, &text);
        }
    }
    if let Some(error) = &e.devices_error {
        field(out, "devices", error);
    }
    if let Some(why) = &e.shadowed {
        field(out, "not used", why);
    }
    for note in &e.notes {
        field(out, "note", note);
    }
}
