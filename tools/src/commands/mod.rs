//! The subcommands, and what they share: loading a file through the front
//! end and the verifier ([`Frontend`]), exit codes. Backends are found by
//! [`crate::backends`].

pub mod bench;
pub mod check;
pub mod compile;
pub mod conformance;
pub mod inspect;
pub mod plugins;
pub mod run;
pub mod verify;

use std::path::Path;

use tilec_core::front::py::{self, KernelCall, Options};
use tilec_core::front::{Label, Severity};
use tilec_core::ir::verify::verify_input_module;
use tilec_core::ir::{Function, Module, Span};
use tilec_core::text::parse_module;

use crate::cli::SourceArgs;
use crate::diagnostics::{Renderer, Report, SourceFile};
use crate::json;

/// The process exit status, as documented in `tilec --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything went well.
    Success = 0,
    /// The input could not be read, compiled or verified, or the command
    /// could not be carried out.
    Error = 1,
    /// A usage error found after parsing (flags that contradict each
    /// other in a way clap cannot express).
    Usage = 2,
    /// The kernel failed at run time, or `--check` failed. (Usage errors,
    /// exit 2, are reported by clap before any command runs.)
    Failure = 3,
}

/// What every command needs besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// Renders diagnostics for standard error.
    pub renderer: Renderer,
}

/// A source file after the front end and the verifier.
/// The target whose facts answer a file's build-time device queries
/// (`torch.cuda.get_device_capability()`, `driver.get_num_sms()`) when the
/// command names none: the default target of the `sim` backend and of the
/// CUDA plugin, so that `check` and `compile` without `--target` agree.
pub const FRONT_END_DEFAULT_TARGET: &str = crate::backends::SIM_DEFAULT_TARGET;

#[derive(Debug)]
pub struct Frontend {
    /// The path as the user wrote it.
    pub file: String,
    /// The file's text; `None` when it could not be read.
    pub source: Option<SourceFile>,
    /// The compiled module; `None` after an error.
    pub module: Option<Module>,
    pub call: Option<KernelCall>,
    /// Every diagnostic, errors and warnings, in the order found.
    pub reports: Vec<Report>,
}

impl Frontend {
    /// Reads, compiles and verifies the file `args` names for `target`
    /// (the command's `--target`), whose facts answer the file's
    /// build-time device queries; without one, for
    /// [`FRONT_END_DEFAULT_TARGET`].
    pub fn load(args: &SourceArgs, target: Option<&str>) -> Frontend {
        let file = args.file.display().to_string();
        let mut frontend = Frontend {
            file: file.clone(),
            source: None,
            module: None,
            call: None,
            reports: Vec::new(),
        };
        let text = match read_source(&args.file) {
            Ok(text) => text,
            Err(report) => {
                frontend.reports.push(report);
                return frontend;
            }
        };
        let tile_ir = is_tile_ir(&args.file);
        let module = if tile_ir {
            let parsed = parse_tile_ir(&text, args);
            frontend.reports.extend(parsed.1);
            parsed.0
        } else {
            let options = Options {
                kernel: args.kernel.clone(),
                defines: args.defines(),
                target: Some(py::TargetFacts::for_target(
                    target.unwrap_or(FRONT_END_DEFAULT_TARGET),
                )),
            };
            let output = py::compile_file_with_limits(
                &text,
                Some(&args.file),
                &options,
                args.build_limits(),
            );
            frontend
                .reports
                .extend(output.diagnostics.iter().map(Report::from));
            frontend.call = output.call;
            output.module
        };
        frontend.source = Some(SourceFile { name: file, text });
        if frontend.has_errors() {
            return frontend;
        }
        let Some(module) = module else {
            frontend.reports.push(
                Report::error(
                    "internal compiler error: the front end produced no kernel and no error",
                )
                .with_note("this is a bug in tilec; please report it with the source file"),
            );
            return frontend;
        };
        if module.functions.is_empty() {
            // A header alone reads as a module of no kernel: compiling it
            // would write an empty artifact and report success.
            frontend.reports.push(
                Report::error(format!("`{}` defines no kernel: there is nothing to compile", frontend.file))
                    .with_note("a Tile IR file holds one or more `func` definitions after its `tile_ir` header"),
            );
            return frontend;
        }
        if let Err(failures) = verify_input_module(&module) {
            for (function, error) in failures {
                let span = error.span();
                // Malformed IR from the front end is a tilec bug; in a
                // `.tir` file the user wrote it.
                let mut report = if tile_ir {
                    Report::error(format!("the Tile IR of `{function}` is malformed: {error}"))
                } else {
                    Report::error(format!(
                        "internal compiler error: the Tile IR of `{function}` is malformed: {error}"
                    ))
                    .with_note(
                        "the front end accepted the source but built invalid IR; this is a bug in tilec",
                    )
                };
                if !span.is_unknown() {
                    report.primary = Some(Box::new(Label {
                        span,
                        message: if tile_ir {
                            "here".to_string()
                        } else {
                            "in the IR built for this statement".to_string()
                        },
                    }));
                }
                frontend.reports.push(report);
            }
            return frontend;
        }
        frontend.module = Some(module);
        frontend
    }

    pub fn has_errors(&self) -> bool {
        self.reports.iter().any(Report::is_error)
    }

    /// Whether a usable module came out.
    pub fn succeeded(&self) -> bool {
        self.module.is_some() && !self.has_errors()
    }

    /// Every report rendered, then rustc's closing line.
    pub fn render(&self, renderer: &Renderer) -> String {
        let mut out: String = self
            .reports
            .iter()
            .map(|report| renderer.render(report, self.source.as_ref()))
            .collect();
        if let Some(summary) = renderer.summary(&self.file, &self.reports) {
            out.push_str(&summary);
        }
        out
    }

    /// Every report in JSON form.
    pub fn json_diagnostics(&self) -> Vec<json::Diagnostic> {
        self.reports
            .iter()
            .map(|report| json::diagnostic(report, &self.file, self.source.as_ref()))
            .collect()
    }

    /// The stem of the file name (`gemm` for `examples/gemm.py`).
    pub fn stem(&self) -> String {
        Path::new(&self.file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Whether `path` names a Tile IR text file (`.tir`) rather than a TileLang
/// source: such files skip the front end, which lets `check` and `run` work
/// on the output of `compile` and on the IR test corpus.
fn is_tile_ir(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "tir")
}

/// Parses Tile IR text; the reports are the parse error and a warning for
/// `--kernel`, which has no meaning for IR input.
fn parse_tile_ir(text: &str, args: &SourceArgs) -> (Option<Module>, Vec<Report>) {
    let mut reports = Vec::new();
    if args.kernel.is_some() {
        reports.push(Report {
            severity: Severity::Warning,
            ..Report::error("`--kernel` is ignored for Tile IR input")
        });
    }
    match parse_module(text) {
        Ok(module) => (Some(module), reports),
        Err(e) => {
            let offset = u32::try_from(e.offset).unwrap_or(u32::MAX);
            let mut report = Report::error(format!("cannot parse Tile IR: {}", e.message));
            report.primary = Some(Box::new(Label {
                span: Span::new(offset, offset),
                message: String::new(),
            }));
            reports.push(report);
            (None, reports)
        }
    }
}

/// Reads a source file, or explains why it cannot be read.
fn read_source(path: &Path) -> Result<String, Report> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| {
        let report = Report::error(format!("cannot read `{shown}`: {}", io_reason(&e)));
        if e.kind() == std::io::ErrorKind::NotFound {
            report.with_note("the path is relative to the current directory")
        } else {
            report
        }
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Report::error(format!(
            "cannot read `{shown}`: it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Writes a command's result to standard output. A reader that went away
/// (`tilec run ... | head -1`) is not an error worth a panic: `print!` would
/// panic on the broken pipe, so write directly and ignore failures, as
/// there is nowhere left to report them.
pub fn print_stdout(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// An I/O error's reason without Rust's "(os error N)" suffix.
pub fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// The one kernel function of a compiled module.
pub fn single_function(module: &Module) -> Result<&Function, Report> {
    match module.functions.as_slice() {
        [function] => Ok(function),
        [] => Err(Report::error("the file defines no kernel")
            .with_note("a kernel is a `@T.prim_func`, usually returned by a builder function")),
        functions => Err(Report::error(format!(
            "the compiled module has {} kernels ({}); `run` runs one",
            functions.len(),
            functions
                .iter()
                .map(|f| format!("`{}`", f.name))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_note("choose one with `--kernel CALL`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_reasons_drop_os_error_numbers() {
        let e = std::io::Error::from_raw_os_error(2);
        assert!(!io_reason(&e).contains("os error"));
    }
}
