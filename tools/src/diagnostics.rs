//! Rendering of diagnostics in the style of rustc:
//!
//! ```text
//! error[T0412]: `T.copy` extents differ
//!   --> gemm.py:12:9
//!    |
//! 12 |         T.copy(A[by * 128, k * 32], A_shared)
//!    |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ source is 128x32, destination 64x32
//!    |
//!    = note: ...
//! ```
//!
//! [`Report`] is the one shape every problem the CLI shows takes: front-end
//! [`Diagnostic`]s convert into it, and so do problems found by the CLI
//! itself (an unreadable file, a verifier failure) which have no code or no
//! source location.

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use tilec_core::front::{Diagnostic, Label, Severity, line_col};
use tilec_core::ir::Span;

use crate::cli::ColorChoice;

/// A source file as diagnostics refer to it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as the user wrote it.
    pub name: String,
    pub text: String,
}

/// One problem to show the user.
#[derive(Debug, Clone)]
pub struct Report {
    pub severity: Severity,
    /// Stable code (`T0412`); `None` for problems the CLI finds itself.
    pub code: Option<&'static str>,
    pub message: String,
    /// Where the problem is; `None` when no source location is known.
    /// (Boxed to keep `Result<_, Report>` small.)
    pub primary: Option<Box<Label>>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
}

impl Report {
    /// An error without code or location.
    pub fn error(message: impl Into<String>) -> Self {
        Report {
            severity: Severity::Error,
            code: None,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl From<&Diagnostic> for Report {
    fn from(diagnostic: &Diagnostic) -> Self {
        Report {
            severity: diagnostic.severity,
            code: Some(diagnostic.code),
            message: diagnostic.message.clone(),
            primary: (!diagnostic.primary.span.is_unknown())
                .then(|| Box::new(diagnostic.primary.clone())),
            secondary: diagnostic
                .secondary
                .iter()
                .filter(|label| !label.span.is_unknown())
                .cloned()
                .collect(),
            notes: diagnostic.notes.clone(),
        }
    }
}

/// The lowercase name of a severity, as printed and as written in JSON.
pub fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Whether diagnostics written to standard error should be coloured.
pub fn stderr_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            !no_color && !dumb && std::io::stderr().is_terminal()
        }
    }
}

/// ANSI styles, or nothing when colour is off.
#[derive(Debug, Clone, Copy)]
struct Palette {
    on: bool,
}

impl Palette {
    const RESET: &'static str = "\x1b[0m";

    fn paint(self, style: &str, text: &str) -> String {
        if self.on && !text.is_empty() {
            format!("{style}{text}{}", Self::RESET)
        } else {
            text.to_string()
        }
    }

    fn severity(self, severity: Severity, text: &str) -> String {
        let style = match severity {
            Severity::Error => "\x1b[1;31m",
            Severity::Warning => "\x1b[1;33m",
        };
        self.paint(style, text)
    }

    fn bold(self, text: &str) -> String {
        self.paint("\x1b[1m", text)
    }

    fn gutter(self, text: &str) -> String {
        self.paint("\x1b[1;34m", text)
    }
}

/// Renders [`Report`]s as text.
#[derive(Debug, Clone, Copy)]
pub struct Renderer {
    palette: Palette,
}

/// Tabs are shown as this many spaces so that carets line up.
const TAB_WIDTH: usize = 4;
/// A multi-line label spanning more lines than this shows only its first
/// and last lines.
const MAX_LABEL_LINES: usize = 4;

/// One label resolved to lines and character columns (0-based, end
/// exclusive) of the source.
#[derive(Debug)]
struct Placed<'a> {
    first_line: usize,
    first_col: usize,
    last_line: usize,
    last_col: usize,
    message: &'a str,
    primary: bool,
}

impl Renderer {
    pub fn new(color: bool) -> Self {
        Renderer {
            palette: Palette { on: color },
        }
    }

    /// Renders one report, with a source snippet when `source` is given and
    /// the report has a location. The result ends with a blank line.
    pub fn render(&self, report: &Report, source: Option<&SourceFile>) -> String {
        let p = self.palette;
        let mut out = String::new();
        let sev = severity_name(report.severity);
        let head = match &report.code {
            Some(code) => format!("{sev}[{code}]"),
            None => sev.to_string(),
        };
        let _ = writeln!(
            out,
            "{}{}",
            p.severity(report.severity, &head),
            p.bold(&format!(": {}", report.message))
        );

        let located = match (source, &report.primary) {
            (Some(file), Some(primary)) if span_within(&file.text, primary.span) => {
                Some((file, &**primary))
            }
            _ => None,
        };
        let placed: Vec<Placed<'_>> = match located {
            Some((file, primary)) => std::iter::once((primary, true))
                .chain(
                    report
                        .secondary
                        .iter()
                        .filter(|l| span_within(&file.text, l.span))
                        .map(|l| (l, false)),
                )
                .map(|(label, is_primary)| place(&file.text, label, is_primary))
                .collect(),
            None => Vec::new(),
        };
        let shown = lines_to_show(&placed);
        let width = shown.last().map_or(1, |&line| (line + 1).to_string().len());
        let pad = " ".repeat(width);

        match (source, located) {
            (Some(file), Some((_, primary))) => {
                let (line, col) = line_col(&file.text, primary.span.start);
                let _ = writeln!(out, "{pad}{} {}:{line}:{col}", p.gutter("-->"), file.name);
            }
            (Some(file), None) => {
                let _ = writeln!(out, "{pad}{} {}", p.gutter("-->"), file.name);
            }
            (None, _) => {}
        }

        if let Some((file, _)) = located {
            let lines: Vec<&str> = file.text.split('\n').collect();
            let _ = writeln!(out, "{pad} {}", p.gutter("|"));
            let mut previous: Option<usize> = None;
            for &line in &shown {
                if previous.is_some_and(|prev| line > prev + 1) {
                    let _ = writeln!(out, "{}", p.gutter("..."));
                }
                previous = Some(line);
                let text = lines
                    .get(line)
                    .copied()
                    .unwrap_or("")
                    .trim_end_matches('\r');
                let number = format!("{:>width$}", line + 1);
                let _ = writeln!(
                    out,
                    "{} {}{}",
                    p.gutter(&number),
                    p.gutter("|"),
                    if text.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", expand_tabs(text))
                    }
                );
                for label in placed
                    .iter()
                    .filter(|l| l.first_line <= line && line <= l.last_line)
                {
                    let chars = text.chars().count();
                    let start = if line == label.first_line {
                        label.first_col
                    } else {
                        text.chars().take_while(|c| c.is_whitespace()).count()
                    };
                    let end = if line == label.last_line {
                        label.last_col
                    } else {
                        chars
                    };
                    let start_width = display_width(text, start);
                    let marks = display_width(text, end.max(start))
                        .saturating_sub(start_width)
                        .max(1);
                    let mark = if label.primary { "^" } else { "-" };
                    let underline = mark.repeat(marks);
                    let message = if line == label.last_line && !label.message.is_empty() {
                        format!(" {}", label.message)
                    } else {
                        String::new()
                    };
                    let styled = if label.primary {
                        p.severity(report.severity, &format!("{underline}{message}"))
                    } else {
                        p.gutter(&format!("{underline}{message}"))
                    };
                    let _ = writeln!(
                        out,
                        "{pad} {} {}{styled}",
                        p.gutter("|"),
                        " ".repeat(start_width)
                    );
                }
            }
            if !report.notes.is_empty() {
                let _ = writeln!(out, "{pad} {}", p.gutter("|"));
            }
        }

        for note in &report.notes {
            let mut note_lines = note.lines();
            let first = note_lines.next().unwrap_or("");
            let _ = writeln!(out, "{pad} {} {}: {first}", p.gutter("="), p.bold("note"));
            for rest in note_lines {
                let _ = writeln!(out, "{pad}         {rest}");
            }
        }
        out.push('\n');
        out
    }

    /// The closing line after a file's diagnostics, rustc style; `None`
    /// when there were neither errors nor warnings.
    pub fn summary(&self, file: &str, reports: &[Report]) -> Option<String> {
        let p = self.palette;
        let errors = reports.iter().filter(|r| r.is_error()).count();
        let warnings = reports.len() - errors;
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("1 {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        if errors > 0 {
            let mut line = format!(
                ": could not compile `{file}` due to {}",
                plural(errors, "previous error")
            );
            if warnings > 0 {
                let _ = write!(line, "; {} emitted", plural(warnings, "warning"));
            }
            Some(format!(
                "{}{}\n",
                p.severity(Severity::Error, "error"),
                p.bold(&line)
            ))
        } else if warnings > 0 {
            Some(format!(
                "{}{}\n",
                p.severity(Severity::Warning, "warning"),
                p.bold(&format!(
                    ": `{file}` generated {}",
                    plural(warnings, "warning")
                ))
            ))
        } else {
            None
        }
    }
}

/// Whether `span` lies inside `text`. A span outside it (a front end
/// pointing into text it synthesized, or a stale span) is shown without a
/// snippet rather than at a wrong place.
pub fn span_within(text: &str, span: Span) -> bool {
    span.start.max(span.end) as usize <= text.len()
}

/// Resolves a label's span to lines and columns.
fn place<'a>(text: &str, label: &'a Label, primary: bool) -> Placed<'a> {
    let Span { start, end } = label.span;
    let end = end.max(start);
    let (first_line, first_col) = line_col(text, start);
    let (mut last_line, mut last_col) = line_col(text, end);
    // A span that ends just after a newline ends on the previous line.
    if last_col == 1 && last_line > first_line {
        last_line -= 1;
        last_col = text
            .split('\n')
            .nth(last_line - 1)
            .map_or(0, |l| l.trim_end_matches('\r').chars().count())
            + 1;
    }
    Placed {
        first_line: first_line - 1,
        first_col: first_col - 1,
        last_line: last_line - 1,
        last_col: last_col - 1,
        message: &label.message,
        primary,
    }
}

/// The (0-based) source lines to print, sorted: every line a label covers,
/// except the middle of long multi-line labels.
fn lines_to_show(placed: &[Placed<'_>]) -> Vec<usize> {
    let mut lines = Vec::new();
    for label in placed {
        let count = label.last_line - label.first_line + 1;
        if count <= MAX_LABEL_LINES {
            lines.extend(label.first_line..=label.last_line);
        } else {
            lines.extend([label.first_line, label.first_line + 1]);
            lines.extend([label.last_line - 1, label.last_line]);
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// Width on screen of the first `chars` characters of `text`.
fn display_width(text: &str, chars: usize) -> usize {
    text.chars()
        .take(chars)
        .map(|c| if c == '\t' { TAB_WIDTH } else { 1 })
        .sum::<usize>()
        + chars.saturating_sub(text.chars().count())
}

fn expand_tabs(text: &str) -> String {
    text.replace('\t', &" ".repeat(TAB_WIDTH))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile {
            name: "k.py".to_string(),
            text: text.to_string(),
        }
    }

    #[test]
    fn renders_code_location_snippet_and_notes() {
        let text = "import tilelang.language as T\nx = T.copy(a, b)\n";
        let start = text.find("T.copy").unwrap_or(0) as u32;
        let diagnostic = Diagnostic::error("T0412", "bad copy", Span::new(start, start + 6))
            .with_label("here")
            .with_note("copies need equal extents");
        let out = Renderer::new(false).render(&Report::from(&diagnostic), Some(&file(text)));
        let expected = "\
error[T0412]: bad copy
 --> k.py:2:5
  |
2 | x = T.copy(a, b)
  |     ^^^^^^ here
  |
  = note: copies need equal extents

";
        assert_eq!(out, expected);
    }

    #[test]
    fn renders_secondary_labels_and_multiline_spans() {
        let text = "a = 1\nb = (2,\n     3)\nc = a\n";
        let b_start = text.find("(2").unwrap_or(0) as u32;
        let b_end = text.find("3)").unwrap_or(0) as u32 + 2;
        let c = text.rfind('a').unwrap_or(0) as u32;
        let diagnostic = Diagnostic::warning("T0001", "odd", Span::new(b_start, b_end))
            .with_label("this tuple")
            .with_secondary(Span::new(c, c + 1), "used here");
        let out = Renderer::new(false).render(&Report::from(&diagnostic), Some(&file(text)));
        let expected = "\
warning[T0001]: odd
 --> k.py:2:5
  |
2 | b = (2,
  |     ^^^
3 |      3)
  |      ^^ this tuple
4 | c = a
  |     - used here

";
        assert_eq!(out, expected);
    }

    #[test]
    fn report_without_location_has_no_snippet() {
        let report = Report::error("cannot read `x.py`").with_note("check the path");
        let out = Renderer::new(false).render(&report, None);
        assert_eq!(
            out,
            "error: cannot read `x.py`\n  = note: check the path\n\n"
        );
    }

    #[test]
    fn zero_width_span_at_end_of_line_gets_one_caret() {
        let text = "def f(:\n";
        let diagnostic = Diagnostic::error("T0001", "expected a name", Span::new(6, 6));
        let out = Renderer::new(false).render(&Report::from(&diagnostic), Some(&file(text)));
        assert!(out.contains("1 | def f(:\n  |       ^\n"), "{out}");
    }

    #[test]
    fn colour_only_when_asked() {
        let report = Report::error("boom");
        assert!(!Renderer::new(false).render(&report, None).contains('\x1b'));
        assert!(
            Renderer::new(true)
                .render(&report, None)
                .contains("\x1b[1;31m")
        );
    }

    #[test]
    fn summary_counts() {
        let r = Renderer::new(false);
        let warning = Report {
            severity: Severity::Warning,
            ..Report::error("w")
        };
        assert_eq!(r.summary("k.py", &[]), None);
        assert_eq!(
            r.summary("k.py", &[Report::error("e"), warning.clone()]),
            Some(
                "error: could not compile `k.py` due to 1 previous error; 1 warning emitted\n"
                    .into()
            )
        );
        assert_eq!(
            r.summary("k.py", &[warning.clone(), warning]),
            Some("warning: `k.py` generated 2 warnings\n".into())
        );
    }
}
