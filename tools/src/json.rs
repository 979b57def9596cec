//! The JSON documents tilec writes: `check --json`, `compile --json`,
//! `run --json`, `plugins --json` and the `manifest.json` of `run --dump`. Every field name here is part of the
//! command line's contract with scripts; add fields, do not rename them.

use serde::Serialize;
use serde_json::{Map, Value};
use tilec_core::front::line_col;
use tilec_core::front::py::{CallArg, KernelCall};
use tilec_core::ir::Span;
use tilec_plugin_api::{DeviceInfo, KernelMetadata};

use crate::compare::Comparison;
use crate::diagnostics::{Report, SourceFile, severity_name, span_within};
use crate::tensors::Stats;

/// A diagnostic. Lines and columns are 1-based (columns count characters)
/// and `end_col` is exclusive; all are `null` when the problem has no source
/// location.
#[derive(Debug, Serialize)]
pub struct Diagnostic {
    pub severity: &'static str,
    pub code: Option<&'static str>,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub col: Option<usize>,
    pub end_line: Option<usize>,
    pub end_col: Option<usize>,
    /// The text shown under the primary location.
    pub label: Option<String>,
    pub notes: Vec<String>,
    /// Further labelled locations.
    pub secondary: Vec<SecondaryLabel>,
}

#[derive(Debug, Serialize)]
pub struct SecondaryLabel {
    pub line: usize,
    pub col: usize,
    pub end_line: usize,
    pub end_col: usize,
    pub label: String,
}

fn span_position(text: &str, span: Span) -> (usize, usize, usize, usize) {
    let (line, col) = line_col(text, span.start);
    let (end_line, end_col) = line_col(text, span.end.max(span.start));
    (line, col, end_line, end_col)
}

/// The JSON form of a report about `file` (whose text is `source`, when it
/// could be read).
pub fn diagnostic(report: &Report, file: &str, source: Option<&SourceFile>) -> Diagnostic {
    let position = match (source, &report.primary) {
        (Some(source), Some(primary)) if span_within(&source.text, primary.span) => {
            Some(span_position(&source.text, primary.span))
        }
        _ => None,
    };
    let secondary = match source {
        Some(source) => report
            .secondary
            .iter()
            .filter(|label| span_within(&source.text, label.span))
            .map(|label| {
                let (line, col, end_line, end_col) = span_position(&source.text, label.span);
                SecondaryLabel {
                    line,
                    col,
                    end_line,
                    end_col,
                    label: label.message.clone(),
                }
            })
            .collect(),
        None => Vec::new(),
    };
    Diagnostic {
        severity: severity_name(report.severity),
        code: report.code,
        message: report.message.clone(),
        file: Some(file.to_string()),
        line: position.map(|p| p.0),
        col: position.map(|p| p.1),
        end_line: position.map(|p| p.2),
        end_col: position.map(|p| p.3),
        label: report
            .primary
            .as_ref()
            .map(|l| l.message.clone())
            .filter(|m| !m.is_empty()),
        notes: report.notes.clone(),
        secondary,
    }
}

/// `tilec check --json`.
#[derive(Debug, Serialize)]
pub struct CheckOutput {
    pub ok: bool,
    pub diagnostics: Vec<Diagnostic>,
}

/// One artifact in `compile --json`.
#[derive(Debug, Serialize)]
pub struct ArtifactOutput {
    /// The file name the backend suggests.
    pub name: String,
    /// `text` or `binary`.
    pub kind: &'static str,
    pub bytes_len: usize,
    /// Where it was written; `null` when it was not (no `-o`).
    pub path: Option<String>,
}

/// `tilec compile --json`.
#[derive(Debug, Serialize)]
pub struct CompileOutput {
    pub ok: bool,
    pub file: String,
    pub backend: String,
    /// The target compiled for (`null` for `ref`, or when compilation did
    /// not get that far).
    pub target: Option<String>,
    pub artifacts: Vec<ArtifactOutput>,
    /// What the backend says about each compiled kernel (empty for `ref`).
    pub kernels: Vec<KernelMetadata>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One backend in `plugins --json`.
#[derive(Debug, Serialize)]
pub struct PluginEntry {
    pub name: String,
    /// Whether the backend is part of tilec (`ref`) rather than a plugin.
    pub builtin: bool,
    /// The library; `null` for the built-in backend.
    pub file: Option<String>,
    /// Given with `--plugin`.
    pub explicit: bool,
    pub vendor: String,
    pub plugin_version: String,
    /// Plugin ABI `major.minor`; `null` for the built-in backend.
    pub abi: Option<String>,
    /// Oldest and newest Tile IR format read, `major.minor`.
    pub ir_formats: Option<[String; 2]>,
    pub targets: Vec<String>,
    pub default_target: Option<String>,
    pub ir_level: String,
    /// Whether the backend can run kernels.
    pub runtime: bool,
    /// The devices the runtime reports; `null` without a runtime or when
    /// asking failed.
    pub devices: Option<Vec<DeviceInfo>>,
    /// Why there are no devices (`no device: ...`) or asking failed.
    pub devices_error: Option<String>,
    /// Why `--backend NAME` does not pick this plugin, when it does not.
    pub shadowed: Option<String>,
    pub notes: Vec<String>,
}

/// A library that failed to load, in `plugins --json`.
#[derive(Debug, Serialize)]
pub struct LoadFailure {
    pub path: String,
    pub error: String,
}

/// One place searched for plugins, in order.
#[derive(Debug, Serialize)]
pub struct SearchEntry {
    /// `explicit` (`--plugin`), `env` (TILEC_PLUGIN_PATH), `exe-dir`
    /// (`plugins/` next to tilec), `prefix` (`<prefix>/lib/tilec/plugins`)
    /// or `beside` (tilec's own folder, for `libtilec_backend_*` libraries).
    pub source: &'static str,
    pub path: String,
    /// `file`, `folder` or `missing`.
    pub kind: &'static str,
    /// For a folder: how many shared libraries it holds.
    pub libraries: Option<usize>,
}

/// `tilec plugins --json`.
#[derive(Debug, Serialize)]
pub struct PluginsOutput {
    pub plugins: Vec<PluginEntry>,
    pub failures: Vec<LoadFailure>,
    pub search: Vec<SearchEntry>,
}

/// A builder call as JSON: `{"builder": "matmul", "args": {"M": 1024, ...}}`
/// with arguments in declaration order.
pub fn call(call: &KernelCall) -> Value {
    let args: Map<String, Value> = call
        .args
        .iter()
        .map(|(name, value)| (name.clone(), call_arg(value)))
        .collect();
    let mut object = Map::new();
    object.insert("builder".into(), Value::String(call.builder.clone()));
    object.insert("args".into(), Value::Object(args));
    Value::Object(object)
}

fn call_arg(value: &CallArg) -> Value {
    match value {
        CallArg::Int(v) => Value::from(*v),
        CallArg::Float(v) => Value::from(*v),
        CallArg::Bool(v) => Value::from(*v),
        CallArg::Str(v) | CallArg::Other(v) => Value::from(v.clone()),
    }
}

/// One parameter in `run --json`.
#[derive(Debug, Serialize)]
pub struct RunParam {
    pub index: usize,
    pub name: String,
    pub shape: Vec<usize>,
    /// TileLang spelling (`float16`).
    pub dtype: &'static str,
    /// `input`, `output` or `in-out`.
    pub role: &'static str,
    /// Statistics after the run, for parameters the kernel wrote.
    pub stats: Option<Stats>,
}

/// The comparison of one parameter with the reference.
#[derive(Debug, Serialize)]
pub struct CheckedParam {
    pub index: usize,
    pub name: String,
    pub dtype: &'static str,
    pub passed: bool,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// The `--check` part of `run --json`.
#[derive(Debug, Serialize)]
pub struct CheckResult {
    /// The example stem the reference was looked up by.
    pub stem: String,
    /// Whether an independent reference exists for the stem.
    pub reference: bool,
    pub passed: bool,
    pub params: Vec<CheckedParam>,
}

/// `tilec run --json`. Fields after `diagnostics` are `null` (or empty)
/// when the run did not get that far.
#[derive(Debug, Serialize)]
pub struct RunOutput {
    pub ok: bool,
    pub file: String,
    pub diagnostics: Vec<Diagnostic>,
    /// Why the run stopped, when it failed after compiling.
    pub error: Option<String>,
    pub kernel: Option<String>,
    pub call: Option<Value>,
    pub backend: String,
    pub seed: u64,
    /// Values of the kernel's symbolic sizes.
    pub symbols: Map<String, Value>,
    /// Wall time of the kernel run, in milliseconds.
    pub time_ms: Option<f64>,
    /// What the SIMT interpreter counted (`--backend sim` only), summed
    /// over the lowered kernels: statements by kind (warp-wide ones once
    /// per issuing warp or group) and the passes of the shared-memory
    /// banks that warp-wide shared accesses needed, next to what they would
    /// need without bank conflicts.
    pub sim: Option<tilec_core::simt::Stats>,
    pub params: Vec<RunParam>,
    pub check: Option<CheckResult>,
}

/// One parameter in `manifest.json`.
#[derive(Debug, Serialize)]
pub struct ManifestParam {
    pub index: usize,
    pub name: String,
    pub shape: Vec<usize>,
    /// TileLang spelling of the kernel's dtype (`bfloat16`).
    pub dtype: &'static str,
    /// NumPy dtype of the stored arrays (`float32` for `bfloat16`).
    pub stored_dtype: &'static str,
    pub role: &'static str,
    /// Files written for this parameter, relative to the manifest:
    /// `before` (inputs only) and `after` (absent when the run failed).
    pub files: Map<String, Value>,
}

/// `manifest.json` of `run --dump`.
#[derive(Debug, Serialize)]
pub struct Manifest {
    pub kernel: String,
    pub file: String,
    /// The builder call that produced the kernel (`null` for a bare
    /// `prim_func`).
    pub call: Option<Value>,
    pub defines: Map<String, Value>,
    pub seed: u64,
    pub backend: String,
    /// Whether the kernel ran to completion (after-run files exist).
    pub completed: bool,
    pub params: Vec<ManifestParam>,
    /// The kernel's scalar parameters and the values passed at launch.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scalars: Vec<ManifestScalar>,
}

/// A scalar parameter of `run --dump`'s manifest.
#[derive(Debug, Serialize)]
pub struct ManifestScalar {
    /// Position in the kernel's signature, counting tensors and scalars.
    pub position: u32,
    pub name: String,
    pub dtype: &'static str,
    pub value: i64,
}

/// Serializes a document as one line of JSON.
pub fn to_line(document: &impl Serialize) -> String {
    // Serializing these plain structs cannot fail (no maps with non-string
    // keys, no failing Serialize impls); fall back to a valid document.
    serde_json::to_string(document)
        .unwrap_or_else(|e| format!("{{\"ok\":false,\"error\":\"cannot serialize output: {e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::front::py::CallArg;

    #[test]
    fn diagnostic_positions_are_one_based_with_exclusive_end() {
        let text = "a = 1\nb = oops\n";
        let start = text.find("oops").unwrap_or(0) as u32;
        let d = tilec_core::front::Diagnostic::error(
            "T0100",
            "unknown name",
            Span::new(start, start + 4),
        )
        .with_label("not defined");
        let source = SourceFile {
            name: "k.py".into(),
            text: text.into(),
        };
        let json = diagnostic(&Report::from(&d), "k.py", Some(&source));
        assert_eq!(
            (json.line, json.col, json.end_line, json.end_col),
            (Some(2), Some(5), Some(2), Some(9))
        );
        assert_eq!(json.severity, "error");
        assert_eq!(json.code, Some("T0100"));
        assert_eq!(json.label.as_deref(), Some("not defined"));

        let plain = diagnostic(&Report::error("no file"), "k.py", None);
        assert_eq!(plain.line, None);
        assert_eq!(plain.code, None);
    }

    #[test]
    fn call_keeps_argument_order_and_plain_values() {
        let c = KernelCall {
            builder: "matmul".into(),
            args: vec![
                ("N".into(), CallArg::Int(64)),
                ("M".into(), CallArg::Int(32)),
                ("dtype".into(), CallArg::Str("float16".into())),
                ("causal".into(), CallArg::Bool(true)),
            ],
        };
        assert_eq!(
            call(&c).to_string(),
            r#"{"builder":"matmul","args":{"N":64,"M":32,"dtype":"float16","causal":true}}"#
        );
    }
}
