//! `tilec verify`: prove a kernel's safety obligations with Z3, or show the
//! values that break one (`docs/verify.md`).
//!
//! Standard output lists every obligation of every kernel with its
//! verdict; each refuted or unknown obligation is also rendered on
//! standard error as a diagnostic at its statement, with the
//! counterexample in its label and notes. `--json` prints one document
//! instead.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use tilec_core::front::line_col;
use tilec_core::front::{Label, Severity};
use tilec_core::ir::Span;
use tilec_core::target::{self, TargetDescription};
use tilec_core::verify::{
    self, AccessSite, Counterexample, LayoutSource, Obligation, ObligationKind, Obligations,
    Outcome, VerifyOptions,
};

use crate::cli::VerifyArgs;
use crate::commands::{Context, Exit, Frontend, print_stdout};
use crate::diagnostics::{Report, SourceFile, span_within};
use crate::json;

/// The target verification reads limits from when none is given.
pub const DEFAULT_TARGET: &str = "sm_80";

/// The verdicts of one function.
#[derive(Debug)]
pub struct Verified {
    pub obligations: Obligations,
    pub outcomes: Vec<Outcome>,
}

impl Verified {
    /// Whether every required obligation is proved.
    pub fn ok(&self) -> bool {
        self.obligations
            .items
            .iter()
            .zip(&self.outcomes)
            .all(|(o, r)| !o.required || *r == Outcome::Proved)
    }

    fn count(&self, name: &str) -> usize {
        self.outcomes.iter().filter(|r| r.name() == name).count()
    }
}

/// Generates and discharges the obligations of every function of the
/// module; a function whose IR cannot be verified gives a report.
pub fn verify_module(
    module: &tilec_core::ir::Module,
    options: &VerifyOptions,
) -> Result<Vec<Verified>, Report> {
    module
        .functions
        .iter()
        .map(|function| {
            let (obligations, outcomes) = verify::solve::verify_function(function, options)
                .map_err(|e| {
                    let mut report =
                        Report::error(format!("cannot verify `{}`: {e}", function.name));
                    let span = e.span();
                    if !span.is_unknown() {
                        report.primary = Some(Box::new(Label {
                            span,
                            message: "here".to_string(),
                        }));
                    }
                    report
                })?;
            Ok(Verified {
                obligations,
                outcomes,
            })
        })
        .collect()
}

/// The target description `--target` names (default sm_80).
pub fn target_of(name: Option<&str>) -> Result<TargetDescription, Report> {
    let name = name.unwrap_or(DEFAULT_TARGET);
    target::builtin(name).map_err(|e| {
        Report::error(format!("unknown target `{name}`: {e}")).with_note(format!(
            "built-in targets: {}",
            target::builtin_names().join(", ")
        ))
    })
}

/// The diagnostics of `compile --verify`: every obligation not proved, with
/// refuted required ones and undecided ones as errors.
///
/// Also returns, per function, the accesses proved in bounds, which the
/// lowering then leaves unguarded.
pub fn compile_reports(
    module: &tilec_core::ir::Module,
    target: &TargetDescription,
    source: Option<&SourceFile>,
) -> (Vec<Report>, Vec<HashSet<AccessSite>>) {
    let options = VerifyOptions::for_target(target);
    match verify_module(module, &options) {
        Ok(verified) => {
            let proved = verified
                .iter()
                .map(|v| verify::proved_sites(&v.obligations, &v.outcomes))
                .collect();
            let reports = verified
                .iter()
                .flat_map(|v| reports(v, source))
                .map(|mut report| {
                    if report.message.starts_with("cannot decide") {
                        report.severity = Severity::Error;
                        report
                            .notes
                            .push("`compile --verify` needs every obligation proved".to_string());
                    }
                    report
                })
                .collect();
            (reports, proved)
        }
        Err(report) => (vec![report], Vec::new()),
    }
}

pub fn run(args: &VerifyArgs, cx: &Context) -> Exit {
    let frontend = Frontend::load(&args.source, args.target.as_deref());
    let target = match target_of(args.target.as_deref()) {
        Ok(t) => t,
        Err(report) => return fail(args, cx, &frontend, vec![report]),
    };
    if !frontend.succeeded() {
        return fail(args, cx, &frontend, Vec::new());
    }
    let Some(module) = frontend.module.as_ref() else {
        return fail(args, cx, &frontend, Vec::new());
    };
    let mut options = VerifyOptions::for_target(&target);
    options.index_bits = args.index_bits;
    options.timeout_ms = args.timeout_ms;
    let started = std::time::Instant::now();
    let verified = match verify_module(module, &options) {
        Ok(v) => v,
        Err(report) => return fail(args, cx, &frontend, vec![report]),
    };
    let elapsed = started.elapsed();
    let ok = verified.iter().all(Verified::ok);
    let source = frontend.source.as_ref();
    let reports: Vec<Report> = verified.iter().flat_map(|v| reports(v, source)).collect();
    if args.json {
        let document = json!({
            "ok": ok,
            "file": frontend.file,
            "target": target.name,
            "seconds": elapsed.as_secs_f64(),
            "functions": verified.iter().map(|v| function_json(v, source)).collect::<Vec<_>>(),
            "diagnostics": frontend
                .json_diagnostics()
                .into_iter()
                .chain(reports.iter().map(|r| json::diagnostic(r, &frontend.file, source)))
                .collect::<Vec<_>>(),
        });
        print_stdout(&(json::to_line(&document) + "\n"));
    } else {
        eprint!("{}", frontend.render(&cx.renderer));
        for report in &reports {
            eprint!("{}", cx.renderer.render(report, source));
        }
        let mut out = String::new();
        for v in &verified {
            out.push_str(&listing(v, &frontend.file, source, &target.name));
        }
        out.push_str(&format!(
            "{}: {} ({:.3} s)\n",
            frontend.file,
            if ok { "verified" } else { "NOT verified" },
            elapsed.as_secs_f64()
        ));
        print_stdout(&out);
    }
    if ok { Exit::Success } else { Exit::Error }
}

/// Reports the front end's failure (and `extra`), in text or JSON.
fn fail(args: &VerifyArgs, cx: &Context, frontend: &Frontend, extra: Vec<Report>) -> Exit {
    if args.json {
        let document = json!({
            "ok": false,
            "file": frontend.file,
            "functions": [],
            "diagnostics": extra
                .iter()
                .map(|r| json::diagnostic(r, &frontend.file, None))
                .chain(frontend.json_diagnostics())
                .collect::<Vec<_>>(),
        });
        print_stdout(&(json::to_line(&document) + "\n"));
    } else {
        for report in &extra {
            eprint!("{}", cx.renderer.render(report, None));
        }
        eprint!("{}", frontend.render(&cx.renderer));
    }
    Exit::Error
}

/// `file:line` of a span, or the file alone.
fn location(file: &str, source: Option<&SourceFile>, span: Span) -> String {
    match source {
        Some(s) if !span.is_unknown() && span_within(&s.text, span) => {
            let (line, _) = line_col(&s.text, span.start);
            format!("{file}:{line}")
        }
        _ => file.to_string(),
    }
}

/// The text listing of one function's obligations.
fn listing(v: &Verified, file: &str, source: Option<&SourceFile>, target: &str) -> String {
    let mut out = format!(
        "verify `{}` (target {target}): {} obligations: {} proved, {} refuted, {} unknown\n",
        v.obligations.function,
        v.obligations.items.len(),
        v.count("proved"),
        v.count("refuted"),
        v.count("unknown"),
    );
    for (o, r) in v.obligations.items.iter().zip(&v.outcomes) {
        let verdict = match r {
            Outcome::Refuted(_) if !o.required => "guarded",
            other => other.name(),
        };
        out.push_str(&format!(
            "  {verdict:<8} {:<16} {}  [{}]\n",
            o.kind.name(),
            o.subject,
            location(file, source, o.span)
        ));
        if let Outcome::Refuted(cx) = r {
            out.push_str(&format!("           counterexample: {}\n", cx_text(cx)));
        }
    }
    out
}

/// `bx = 1, k = 3; index 0 (by * 64 + i) = 64` in one line.
fn cx_text(cx: &Counterexample) -> String {
    let mut text = cx.assignment();
    let shown: Vec<String> = cx
        .shown
        .iter()
        .map(|(label, value)| format!("{label} = {value}"))
        .collect();
    if !shown.is_empty() {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&shown.join(", "));
    }
    if text.is_empty() {
        text.push_str("for every value");
    }
    text
}

/// What a refutation means, by kind.
fn meaning(o: &Obligation) -> String {
    match &o.kind {
        ObligationKind::InBounds {
            buffer,
            scope,
            store,
        } => format!(
            "{} outside {} buffer `{buffer}`",
            if *store { "store" } else { "load" },
            scope.name()
        ),
        ObligationKind::RegionInBounds {
            buffer, scope, op, ..
        } => format!("`{op}` region outside {} buffer `{buffer}`", scope.name()),
        ObligationKind::NoOverflow { what, bits } => {
            format!("{what} overflows {bits} bits")
        }
        ObligationKind::NoRace { buffer, scope } => format!(
            "two iterations of `T.Parallel` store to one element of {} buffer `{buffer}`",
            scope.name()
        ),
        ObligationKind::SharedMemory { limit } => {
            format!("shared memory exceeds the target's {limit} bytes")
        }
        ObligationKind::Threads { limit } => {
            format!("the block has more threads than the target's {limit}")
        }
        ObligationKind::LayoutInjective { buffer, source } => match source {
            LayoutSource::Grid => format!("two blocks write one element of `{buffer}`"),
            LayoutSource::Accumulator => {
                format!("two holders of the accumulator fragments write one element of `{buffer}`")
            }
        },
        ObligationKind::FragmentCoverage { buffer, operand } => {
            format!("the fragment of operand {operand} (`{buffer}`) does not cover its tile once")
        }
        ObligationKind::SwizzlePermutation { buffer, onto } => format!(
            "the swizzled index of `{buffer}` is not {}",
            if *onto {
                "a permutation of its tile"
            } else {
                "one-to-one"
            }
        ),
        ObligationKind::PipelineReuse { buffer, schedule } => format!(
            "a pipelined copy overwrites a stage of `{buffer}` while it is read ({} versions for copies {} iterations ahead)",
            schedule.versions,
            schedule.ahead()
        ),
        ObligationKind::PipelineOrder { buffer, .. } => format!(
            "a read of `{buffer}` in a pipelined loop is not ordered after its copy by a wait and a barrier"
        ),
        ObligationKind::Registers { .. } => {
            "the registers the kernel keeps per thread exceed the target's budget".to_string()
        }
    }
}

/// A diagnostic for every obligation not proved.
fn reports(v: &Verified, source: Option<&SourceFile>) -> Vec<Report> {
    let mut out = Vec::new();
    for (o, r) in v.obligations.items.iter().zip(&v.outcomes) {
        let (severity, message, label, notes) = match r {
            Outcome::Proved => continue,
            Outcome::Refuted(cx) => {
                let mut notes = vec![format!("obligation: {} {}", o.kind.name(), o.subject)];
                if !cx.shown.is_empty() {
                    notes.push(format!(
                        "values: {}",
                        cx.shown
                            .iter()
                            .map(|(l, v)| format!("{l} = {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                if cx.approximate {
                    notes.push(
                        "the obligation involves values verification does not model exactly \
                         (loaded data, casts, bitwise operators): this counterexample may not \
                         be reachable"
                            .to_string(),
                    );
                }
                if !o.required {
                    notes.push(
                        "allowed by the out-of-bounds rule: elements outside a global tensor read \
                         as zero and are not written, so the generated code keeps its bounds \
                         guards here"
                            .to_string(),
                    );
                }
                let assignment = cx.assignment();
                let label = if assignment.is_empty() {
                    "fails for every value".to_string()
                } else {
                    format!("fails for {assignment}")
                };
                (
                    if o.required {
                        Severity::Error
                    } else {
                        Severity::Warning
                    },
                    format!("refuted: {}", meaning(o)),
                    label,
                    notes,
                )
            }
            Outcome::Unknown(reason) => (
                Severity::Warning,
                format!("cannot decide: {} {}", o.kind.name(), o.subject),
                format!("the solver answered unknown ({reason})"),
                vec!["a longer `--timeout-ms` may decide it".to_string()],
            ),
        };
        let mut report = Report::error(message);
        report.severity = severity;
        report.notes = notes;
        if !o.span.is_unknown() && source.is_some_and(|s| span_within(&s.text, o.span)) {
            report.primary = Some(Box::new(Label {
                span: o.span,
                message: label,
            }));
        } else {
            report.notes.insert(0, label);
        }
        out.push(report);
    }
    out
}

fn function_json(v: &Verified, source: Option<&SourceFile>) -> Value {
    let obligations: Vec<Value> = v
        .obligations
        .items
        .iter()
        .zip(&v.outcomes)
        .map(|(o, r)| {
            let (line, col) = match source {
                Some(s) if !o.span.is_unknown() && span_within(&s.text, o.span) => {
                    let (l, c) = line_col(&s.text, o.span.start);
                    (Some(l), Some(c))
                }
                _ => (None, None),
            };
            let mut entry = json!({
                "kind": o.kind.name(),
                "subject": o.subject,
                "required": o.required,
                "kernel": o.kernel,
                "status": r.name(),
                "line": line,
                "col": col,
                "goal": o.goal.to_string(),
            });
            match r {
                Outcome::Refuted(cx) => {
                    let values: Map<String, Value> = cx
                        .values
                        .iter()
                        .map(|(n, _, v)| (n.clone(), json_int(*v)))
                        .collect();
                    let shown: Map<String, Value> = cx
                        .shown
                        .iter()
                        .map(|(n, v)| (n.clone(), json_int(*v)))
                        .collect();
                    entry["counterexample"] = json!({
                        "values": values,
                        "shown": shown,
                        "approximate": cx.approximate,
                    });
                }
                Outcome::Unknown(reason) => entry["reason"] = json!(reason),
                Outcome::Proved => {}
            }
            entry
        })
        .collect();
    json!({
        "name": v.obligations.function,
        "ok": v.ok(),
        "proved": v.count("proved"),
        "refuted": v.count("refuted"),
        "unknown": v.count("unknown"),
        "obligations": obligations,
    })
}

/// An integer as a JSON number when it fits `i64`, else as a string.
fn json_int(value: i128) -> Value {
    i64::try_from(value).map_or_else(|_| json!(value.to_string()), |v| json!(v))
}
