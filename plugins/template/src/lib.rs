//! `tilec-backend-template`: the smallest complete tilec backend plugin,
//! meant to be copied by a vendor starting a real backend.
//!
//! Every backend has the same shape:
//!
//! - this file: [`PluginInfo`] (the name users pass to `--backend`, the
//!   targets, the Tile IR formats read) and the [`BackendPlugin`]
//!   implementation, exported with [`export_backend!`];
//! - [`target`]: one [`TargetDescription`] per target, the facts tilec's
//!   passes may assume about the hardware;
//! - [`emit`]: Tile IR in, artifacts and kernel metadata out. Here the
//!   "code" is a readable listing of the Tile IR; a real backend writes
//!   PTX, a code object or kernel source instead.
//!
//! The plugin is compile-only: it has no runtime part (devices, memory,
//! launches), which [`BackendPlugin::runtime`]'s default answers for it.

pub mod emit;
pub mod target;

use tilec_plugin_api::{
    BackendPlugin, CompileRequest, CompileResult, PluginError, PluginInfo, TILE_IR_FORMAT,
    TargetDescription, export_backend,
};

/// The name users pass to `tilec --backend`. Rename it in your copy.
pub const BACKEND_NAME: &str = "template";

/// The backend. It has no state: every call receives what it needs.
#[derive(Debug)]
pub struct TemplateBackend;

impl BackendPlugin for TemplateBackend {
    const NAME: &'static str = BACKEND_NAME;

    fn info() -> PluginInfo {
        PluginInfo {
            name: BACKEND_NAME.to_string(),
            vendor: "the tilec project (template)".to_string(),
            plugin_version: env!("CARGO_PKG_VERSION").to_string(),
            // The oldest and newest Tile IR format this code reads. Widen the
            // range only after checking what changed between formats.
            ir_formats: (TILE_IR_FORMAT, TILE_IR_FORMAT),
            targets: target::TARGETS.iter().map(|t| t.to_string()).collect(),
            default_target: Some(target::LISTING.to_string()),
            ir_level: "tile".to_string(),
            has_runtime: false,
            notes: vec!["a starting point for vendor backends: copy plugins/template".to_string()],
        }
    }

    fn describe_target(arch: &str) -> Result<TargetDescription, PluginError> {
        target::describe(arch)
    }

    fn compile(request: CompileRequest) -> Result<CompileResult, PluginError> {
        let target = target::describe(&request.target)?;
        emit::compile(&request.ir.module, &target, &request.options)
    }
}

// Writes the exported root module tilec looks for. Exactly once per plugin.
export_backend!(TemplateBackend);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_names_the_default_target_among_the_targets() {
        let info = TemplateBackend::info();
        assert_eq!(info.name, "template");
        let default = info.default_target.clone().unwrap_or_default();
        assert!(info.targets.contains(&default), "{info:?}");
        for t in &info.targets {
            assert!(TemplateBackend::describe_target(t).is_ok(), "{t}");
        }
    }
}
