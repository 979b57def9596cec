//! Front ends: source languages → Tile IR.
//!
//! Today there is one, [`py`], for TileLang-syntax Python files. Front ends
//! report problems as [`Diagnostic`]s — data with a stable code, a primary
//! source span and notes — which the command line renders. The list of codes
//! is documented in `docs/diagnostics.md`.

pub mod py;

use crate::ir::Span;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled source range inside a diagnostic.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in the user's source.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code such as `T0412`, listed in `docs/diagnostics.md`.
    pub code: &'static str,
    pub message: String,
    /// The primary location and what to say there.
    pub primary: Label,
    /// Further locations (for example where a conflicting value was defined).
    pub secondary: Vec<Label>,
    /// Hints on what to do.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: Label {
                span,
                message: String::new(),
            },
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message, span)
        }
    }

    /// Sets the text shown under the primary span.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.primary.message = label.into();
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Line and column of byte offsets (defined with the IR text, where
/// plugins reach them too).
pub use crate::text::{LineIndex, line_col};
