//! Why a run of the reference interpreter failed.
//!
//! Errors raised while executing (or compiling) a statement carry the
//! [`Span`] of the innermost statement involved, taken from
//! [`crate::ir::Block::spans`], so a tool can point at the source line.
//! Errors about the arguments name the parameter instead.

use crate::ir::{DType, Span};

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// Not returned by the interpreter; kept while callers still name it.
    #[error("interpreter not implemented yet")]
    Unimplemented,

    #[error("`{function}` takes {expected} arguments, got {found}")]
    ArgCount {
        function: String,
        expected: usize,
        found: usize,
    },
    #[error("argument `{param}` has dtype {found}, expected {expected}")]
    ArgDtype {
        param: String,
        expected: DType,
        found: DType,
    },
    #[error("argument `{param}` has {found} dimensions, expected {expected}")]
    ArgRank {
        param: String,
        expected: usize,
        found: usize,
    },
    #[error("argument `{param}` has extent {found} in dimension {dim}, expected {expected}")]
    ArgShape {
        param: String,
        dim: usize,
        expected: i64,
        found: usize,
    },
    #[error("argument `{param}`: {detail}")]
    ArgData { param: String, detail: String },
    /// A tensor whose data does not fit its dtype or shape.
    #[error("invalid tensor: {detail}")]
    BadTensor { detail: String },

    #[error(
        "symbolic size `{name}` is {first} (from an earlier argument or an explicit value) \
         but argument `{param}` needs {second}"
    )]
    SymbolConflict {
        name: String,
        param: String,
        first: i64,
        second: i64,
    },
    #[error(
        "symbolic size `{name}` has no value: bind it through the shape of an argument or pass it explicitly"
    )]
    UnboundSymbol { name: String },
    #[error(
        "scalar parameter `{name}` has no value: a scalar parameter is passed at launch, never bound from shapes"
    )]
    UnboundScalar { name: String },
    #[error("the function has no symbolic size named `{name}`")]
    UnknownSymbol { name: String },

    #[error("buffer `{buffer}` has negative extent {extent} in dimension {dim}")]
    NegativeExtent {
        buffer: String,
        dim: usize,
        extent: i64,
        span: Span,
    },
    #[error("buffer `{buffer}` of shape {shape:?} is too large for the interpreter")]
    TooLarge {
        buffer: String,
        shape: Vec<usize>,
        span: Span,
    },
    #[error("out-of-bounds access to {scope} buffer `{buffer}` at {indices:?} (shape {shape:?})")]
    OutOfBounds {
        buffer: String,
        scope: &'static str,
        indices: Vec<i64>,
        shape: Vec<usize>,
        span: Span,
    },
    #[error("integer division by zero")]
    DivisionByZero { span: Span },
    #[error("`assume` condition is false")]
    AssumeFailed { span: Span },
    #[error("`T.device_assert` condition is false (on the device the kernel traps)")]
    DeviceAssertFailed { span: Span },
    #[error("{what}")]
    Unsupported { what: String, span: Span },
    #[error("step limit of {limit} exceeded (a runaway loop?)")]
    StepLimit { limit: u64, span: Span },
    /// A grid with more blocks than the steps left (each block takes at
    /// least one), refused before any block runs.
    #[error(
        "a grid of {blocks} blocks takes more than the {left} steps left of the step limit {limit}"
    )]
    GridTooLarge {
        blocks: u64,
        left: u64,
        limit: u64,
        span: Span,
    },
    /// Storage past [`super::RunOptions::memory_limit`], refused before it
    /// is allocated.
    #[error(
        "{what} would bring the interpreter's storage to {bytes} bytes, past the memory limit of {limit} bytes"
    )]
    MemoryLimit {
        what: String,
        bytes: u64,
        limit: u64,
        span: Span,
    },
    #[error("`{op}`: {detail}")]
    TileShape {
        op: &'static str,
        detail: String,
        span: Span,
    },
    #[error("buffer `{buffer}` is used before its `alloc` ran")]
    Unallocated { buffer: String, span: Span },
    /// Every unfinished role waits on a barrier phase that nothing can
    /// complete; `waits` says who waits where (the first is `span`).
    #[error("deadlock: {detail}")]
    Deadlock {
        detail: String,
        waits: Vec<(String, Span)>,
        span: Span,
    },
    #[error("malformed IR (a compiler bug, or IR that skipped the verifier): {detail}")]
    Malformed { detail: String, span: Span },
}

impl InterpError {
    /// Whether the run stopped at one of the limits of [`super::RunOptions`]
    /// (steps, grid size, memory) rather than at an error of the kernel.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            InterpError::StepLimit { .. }
                | InterpError::GridTooLarge { .. }
                | InterpError::MemoryLimit { .. }
        )
    }

    /// The span of the statement that failed, when the error has one and it
    /// is known.
    pub fn span(&self) -> Option<Span> {
        let span = match self {
            InterpError::NegativeExtent { span, .. }
            | InterpError::TooLarge { span, .. }
            | InterpError::OutOfBounds { span, .. }
            | InterpError::DivisionByZero { span }
            | InterpError::AssumeFailed { span }
            | InterpError::DeviceAssertFailed { span }
            | InterpError::Unsupported { span, .. }
            | InterpError::StepLimit { span, .. }
            | InterpError::GridTooLarge { span, .. }
            | InterpError::MemoryLimit { span, .. }
            | InterpError::TileShape { span, .. }
            | InterpError::Unallocated { span, .. }
            | InterpError::Deadlock { span, .. }
            | InterpError::Malformed { span, .. } => *span,
            _ => return None,
        };
        (!span.is_unknown()).then_some(span)
    }

    fn span_mut(&mut self) -> Option<&mut Span> {
        match self {
            InterpError::NegativeExtent { span, .. }
            | InterpError::TooLarge { span, .. }
            | InterpError::OutOfBounds { span, .. }
            | InterpError::DivisionByZero { span }
            | InterpError::AssumeFailed { span }
            | InterpError::DeviceAssertFailed { span }
            | InterpError::Unsupported { span, .. }
            | InterpError::StepLimit { span, .. }
            | InterpError::GridTooLarge { span, .. }
            | InterpError::MemoryLimit { span, .. }
            | InterpError::TileShape { span, .. }
            | InterpError::Unallocated { span, .. }
            | InterpError::Deadlock { span, .. }
            | InterpError::Malformed { span, .. } => Some(span),
            _ => None,
        }
    }

    /// Gives the error `span` unless an inner statement already gave it one.
    pub(crate) fn at(mut self: Box<Self>, span: Span) -> Box<Self> {
        if let Some(s) = self.span_mut()
            && s.is_unknown()
        {
            *s = span;
        }
        self
    }
}

/// An error in flight inside the interpreter: boxed so that evaluation
/// results stay two words wide.
pub(crate) type Fault = Box<InterpError>;

/// The result of evaluating something.
pub(crate) type Eval<T> = Result<T, Fault>;

pub(crate) fn malformed(detail: impl Into<String>) -> Fault {
    Box::new(InterpError::Malformed {
        detail: detail.into(),
        span: Span::UNKNOWN,
    })
}

pub(crate) fn unsupported(what: impl Into<String>) -> Fault {
    Box::new(InterpError::Unsupported {
        what: what.into(),
        span: Span::UNKNOWN,
    })
}

pub(crate) fn tile_shape(op: &'static str, detail: impl Into<String>) -> Fault {
    Box::new(InterpError::TileShape {
        op,
        detail: detail.into(),
        span: Span::UNKNOWN,
    })
}

pub(crate) fn division_by_zero() -> Fault {
    Box::new(InterpError::DivisionByZero {
        span: Span::UNKNOWN,
    })
}
