//! Helpers for backends that consume the core's SIMT lowering
//! (`tilec_core::lower`): what every such plugin does the same way between
//! the Tile IR it receives and the code it emits — refusing element types
//! its target does not claim, lowering each function with refusals that
//! name it, and describing each lowered kernel for the launcher
//! ([`KernelMetadata`]: parameters in the kernel's order, buffers then
//! integer sizes; grid extents in the language of [`crate::extent`]).

use tilec_core::ir::{self, BinaryOp, Literal, Span};
use tilec_core::lower;
use tilec_core::target::TargetDescription;
use tilec_core::thread::{self, Dim, ExprKind, Param};

use crate::{
    CompileOptions, ErrorCode, IrLocation, KernelMetadata, ParamMetadata, PluginDiagnostic,
    PluginError, Severity,
};

/// A refusal with an error diagnostic at `span` of `function`.
pub fn refusal(code: ErrorCode, function: &str, span: Span, message: String) -> PluginError {
    let mut error = PluginError::new(code, message.clone());
    error.diagnostics.push(PluginDiagnostic {
        severity: Severity::Error,
        message,
        location: Some(IrLocation {
            function: function.to_string(),
            span,
        }),
        notes: Vec::new(),
    });
    error
}

/// Refuses a buffer whose element type the target does not claim
/// (`UnsupportedDtype`, at the buffer's declaration).
pub fn check_dtypes(module: &ir::Module, target: &TargetDescription) -> Result<(), PluginError> {
    for f in &module.functions {
        for (i, (_, buffer)) in f.buffers.iter().enumerate() {
            let name = buffer.dtype.tilelang_name();
            if !target.dtypes.iter().any(|d| d == name) {
                let span = f.buffer_spans.get(i).copied().unwrap_or(Span::UNKNOWN);
                return Err(refusal(
                    ErrorCode::UnsupportedDtype,
                    &f.name,
                    span,
                    format!(
                        "{} has no {name} support (buffer `{}`)",
                        target.arch, buffer.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What the host passed for the lowering in `options.extra`: the accesses
/// `tilec verify` proved in bounds ([`lower::PROVED_SITES_OPTION`]), whose
/// guards the lowering then leaves out. Absent, nothing is assumed; a
/// value that does not decode is a `BadRequest`.
pub fn lower_options(options: &CompileOptions) -> Result<lower::LowerOptions, PluginError> {
    match options.extra.get(lower::PROVED_SITES_OPTION) {
        None => Ok(lower::LowerOptions::default()),
        Some(text) => lower::LowerOptions::decode_proved(text)
            .map_err(|e| PluginError::new(ErrorCode::BadRequest, e.to_string())),
    }
}

/// Lowers each function on its own, so that a refusal names its function.
pub fn lower_functions(
    module: &ir::Module,
    target: &TargetDescription,
) -> Result<thread::Module, PluginError> {
    lower_functions_with(module, target, &lower::LowerOptions::default())
}

/// [`lower_functions`] with facts from the host ([`lower_options`]).
pub fn lower_functions_with(
    module: &ir::Module,
    target: &TargetDescription,
    options: &lower::LowerOptions,
) -> Result<thread::Module, PluginError> {
    let mut out = thread::Module::default();
    for (index, f) in module.functions.iter().enumerate() {
        let single = ir::Module {
            functions: vec![f.clone()],
        };
        let single_options = lower::LowerOptions {
            proved: options.proved.get(index).cloned().into_iter().collect(),
        };
        let lowered = lower::to_thread_with(&single, target, &single_options).map_err(|e| {
            let code = match e {
                lower::LowerError::Unsupported { .. } | lower::LowerError::Pin { .. } => {
                    ErrorCode::UnsupportedFeature
                }
                lower::LowerError::Malformed { .. } => ErrorCode::InvalidIr,
                lower::LowerError::Internal { .. } => ErrorCode::Internal,
            };
            refusal(code, &f.name, e.span(), e.to_string())
        })?;
        out.kernels.extend(lowered.kernels);
    }
    Ok(out)
}

pub fn kernel_metadata(k: &thread::Kernel) -> Result<KernelMetadata, PluginError> {
    let params = k
        .params
        .iter()
        .map(|p| {
            Ok(match p {
            Param::Global(g) => ParamMetadata {
                name: g.name.clone(),
                dtype: g.dtype.tilelang_name().to_string(),
                shape: g
                    .shape
                    .iter()
                    .map(|d| match d {
                        Dim::Const(v) => Ok(v.to_string()),
                        Dim::Param(id) => Ok(k.param_name(*id).to_string()),
                        Dim::Expr(e) => extent_text(k, e).ok_or_else(|| {
                            PluginError::new(
                                ErrorCode::UnsupportedFeature,
                                format!(
                                    "kernel `{}`: an extent of `{}` is not an integer expression over its sizes",
                                    k.name, g.name
                                ),
                            )
                        }),
                    })
                    .collect::<Result<_, _>>()?,
            },
            Param::Scalar { name, dtype } => ParamMetadata {
                name: name.clone(),
                dtype: dtype.tilelang_name().to_string(),
                shape: Vec::new(),
            },
        })
        })
        .collect::<Result<Vec<_>, PluginError>>()?;
    let grid = k
        .grid
        .iter()
        .map(|e| {
            extent_text(k, e).ok_or_else(|| {
                PluginError::new(
                    ErrorCode::UnsupportedFeature,
                    format!(
                        "kernel `{}`: a grid extent is not an integer expression over its sizes",
                        k.name
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(KernelMetadata {
        entry: k.name.clone(),
        params,
        grid,
        threads: k.threads,
        shared_bytes: 0,
        registers: None,
    })
}

/// A grid or buffer extent in the language of [`tilec_plugin_api::extent`].
fn extent_text(k: &thread::Kernel, e: &thread::Expr) -> Option<String> {
    Some(match &e.kind {
        ExprKind::Literal(Literal::Int(v, _)) => v.to_string(),
        ExprKind::Param(id) => k.param_name(*id).to_string(),
        ExprKind::Cast(inner) => extent_text(k, inner)?,
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (extent_text(k, a)?, extent_text(k, b)?);
            match op {
                BinaryOp::Min => format!("min({a}, {b})"),
                BinaryOp::Max => format!("max({a}, {b})"),
                _ => {
                    let sym = match op {
                        BinaryOp::Add => "+",
                        BinaryOp::Sub => "-",
                        BinaryOp::Mul => "*",
                        BinaryOp::Div => "/",
                        BinaryOp::FloorDiv => "//",
                        BinaryOp::FloorMod => "%",
                        _ => return None,
                    };
                    format!("({a} {sym} {b})")
                }
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn metadata_lists_buffers_then_sizes_and_a_grid_hosts_can_evaluate() {
        let text = "thread_ir 0.1\n\nkernel @k(%x: global f32[%n], %n: i32) grid((%n + 127) // 128, min(%n, 3), 1) threads(128) {\n}\n";
        let module = thread::parse_module(text).expect("parses");
        let meta = kernel_metadata(&module.kernels[0]).expect("describable");
        assert_eq!(meta.entry, "k");
        assert_eq!(meta.params[0].name, "x");
        assert_eq!(meta.params[0].shape, vec!["n".to_string()]);
        assert_eq!(meta.params[1].name, "n");
        assert!(meta.params[1].shape.is_empty());
        let sizes = BTreeMap::from([("n".to_string(), 1000)]);
        let grid: Vec<i64> = meta
            .grid
            .iter()
            .map(|g| crate::extent::evaluate(g, &sizes).expect("evaluates"))
            .collect();
        assert_eq!(grid, vec![8, 3, 1]);
    }

    #[test]
    fn compound_extents_are_stated_as_texts_hosts_evaluate() {
        let text = "thread_ir 0.1\n\nkernel @k(%x: global f32[%m, ((%n + 31) // 32)], %y: global f32[(%m * %n)], %m: i32, %n: i32) grid(1, 1, 1) threads(32) {\n}\n";
        let module = thread::parse_module(text).expect("parses");
        let meta = kernel_metadata(&module.kernels[0]).expect("describable");
        let sizes = BTreeMap::from([("m".to_string(), 3), ("n".to_string(), 100)]);
        let shape = |i: usize| -> Vec<i64> {
            meta.params[i]
                .shape
                .iter()
                .map(|d| crate::extent::evaluate(d, &sizes).expect("evaluates"))
                .collect()
        };
        assert_eq!(shape(0), vec![3, 4]);
        assert_eq!(shape(1), vec![300]);
    }
}
