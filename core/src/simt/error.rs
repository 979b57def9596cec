//! Why a SIMT run failed.
//!
//! Errors found while executing carry a [`Location`]: the kernel, the block,
//! the thread (when one thread is to blame), the statement's path and its
//! first printed line, and its span in the parsed text.

use std::fmt;

use crate::ir::{DType, Span};
use crate::thread::{StmtPath, VerifyError};

/// Where an execution error happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    pub kernel: String,
    pub block: [i64; 3],
    pub thread: Option<u32>,
    pub path: StmtPath,
    /// The statement's first printed line.
    pub stmt: String,
    pub span: Span,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.block;
        write!(f, "kernel `{}`, block ({x}, {y}, {z})", self.kernel)?;
        if let Some(t) = self.thread {
            write!(f, ", thread {t}")?;
        }
        write!(f, ", statement {} `{}`", self.path, self.stmt)
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimtError {
    #[error("{0}")]
    Verify(Box<VerifyError>),
    #[error("kernel `{kernel}` takes {expected} global buffers, got {found}")]
    ArgCount {
        kernel: String,
        expected: usize,
        found: usize,
    },
    #[error("argument `%{param}`: {detail}")]
    Arg { param: String, detail: String },
    #[error("scalar parameter `%{0}` has no value: pass it in the options or through a shape")]
    UnboundSymbol(String),
    #[error("scalar parameter `%{name}` is {first} but argument shapes need {second}")]
    SymbolConflict {
        name: String,
        first: i64,
        second: i64,
    },
    #[error("the kernel has no scalar parameter `%{0}`")]
    UnknownSymbol(String),
    #[error("{what} is too large for the interpreter ({size} elements, limit {limit})")]
    TooLarge { what: String, size: u64, limit: u64 },
    #[error("grid extent {index} is {value}, which cannot be launched")]
    Grid { index: usize, value: i64 },
    /// The storage a block needs beside the arguments passes
    /// [`super::SimtOptions::memory_limit`]; refused before the run.
    #[error(
        "the run needs {bytes} bytes of interpreter storage ({detail}), past the memory limit of {limit} bytes"
    )]
    MemoryLimit {
        bytes: u64,
        limit: u64,
        detail: String,
    },
    /// The grid and the loops with a fixed trip count alone take more
    /// steps or thread steps than the limits allow; refused before the
    /// first block.
    #[error("the run takes at least {needed} {what}, past the limit of {limit}")]
    WorkLimit {
        what: &'static str,
        needed: u64,
        limit: u64,
    },
    #[error("{kind} ({at})")]
    Exec {
        at: Box<Location>,
        kind: Box<ExecErrorKind>,
    },
}

impl SimtError {
    /// Whether the run stopped at one of the limits of
    /// [`super::SimtOptions`] (steps, thread steps, memory, the grid's
    /// size) rather than at an error of the kernel.
    pub fn is_limit(&self) -> bool {
        match self {
            SimtError::MemoryLimit { .. } | SimtError::WorkLimit { .. } => true,
            SimtError::TooLarge { what, .. } => what == "the grid",
            SimtError::Exec { kind, .. } => matches!(
                **kind,
                ExecErrorKind::StepLimit(_) | ExecErrorKind::WorkLimit(_)
            ),
            _ => false,
        }
    }

    /// The kind of an execution error.
    pub fn exec_kind(&self) -> Option<&ExecErrorKind> {
        match self {
            SimtError::Exec { kind, .. } => Some(kind),
            _ => None,
        }
    }

    pub fn location(&self) -> Option<&Location> {
        match self {
            SimtError::Exec { at, .. } => Some(at),
            _ => None,
        }
    }
}

/// What went wrong while executing.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExecErrorKind {
    #[error(
        "race: thread {reader} reads `%{buffer}`[{element}] written by thread {writer} \
         (at `{writer_stmt}`) with no barrier in between"
    )]
    ReadAfterWrite {
        buffer: String,
        element: u64,
        writer: u32,
        reader: u32,
        writer_stmt: String,
    },
    #[error(
        "race: threads {first} (at `{first_stmt}`) and {second} write different values to \
         `%{buffer}`[{element}] with no barrier in between"
    )]
    WriteWrite {
        buffer: String,
        element: u64,
        first: u32,
        second: u32,
        first_stmt: String,
    },
    #[error(
        "race: thread {writer} overwrites `%{buffer}`[{element}] that thread {reader} read \
         (at `{reader_stmt}`) with no barrier in between"
    )]
    WriteAfterRead {
        buffer: String,
        element: u64,
        reader: u32,
        writer: u32,
        reader_stmt: String,
    },
    #[error(
        "read before cp.async wait: thread {reader} reads `%{buffer}`[{element}] while the copy \
         issued by thread {issuer} (at `{copy_stmt}`) is still in flight"
    )]
    ReadBeforeAsyncWait {
        buffer: String,
        element: u64,
        reader: u32,
        issuer: u32,
        copy_stmt: String,
    },
    #[error(
        "thread {writer} writes `%{buffer}`[{element}] while the cp.async issued by thread \
         {issuer} (at `{copy_stmt}`) is still in flight"
    )]
    WriteDuringAsyncCopy {
        buffer: String,
        element: u64,
        writer: u32,
        issuer: u32,
        copy_stmt: String,
    },
    #[error("barrier in divergent code: {active} of {threads} threads reached it")]
    DivergentBarrier { active: u32, threads: u32 },
    #[error("out-of-bounds {space} access to `%{buffer}`: elements {start} .. {end} of {len}")]
    OutOfBounds {
        space: &'static str,
        buffer: String,
        start: i64,
        end: i64,
        len: u64,
    },
    #[error(
        "misaligned {space} access to `%{buffer}`: element {index} is not a multiple of {width}"
    )]
    Misaligned {
        space: &'static str,
        buffer: String,
        index: i64,
        width: u64,
    },
    #[error("shuffle: lane {lane} reads lane {source_lane}, which is inactive or missing")]
    ShuffleInactive { lane: u32, source_lane: i64 },
    #[error("mma `{atom}`: {active} of the {group} threads of issue group {index} are active")]
    PartialIssueGroup {
        atom: String,
        index: u32,
        active: u32,
        group: u32,
    },
    #[error(
        "mma `{atom}`: operand {operand} element ({row}, {col}) is held with different values \
         by its replicas"
    )]
    ReplicaMismatch {
        atom: String,
        operand: &'static str,
        row: u64,
        col: u64,
    },
    #[error("mma `{atom}`: {reason}")]
    Atom { atom: String, reason: String },
    #[error(
        "async mma not waited for: thread {thread} touches `%{register}`[{index}], the \
         accumulator of an async_mma (at `{mma_stmt}`) no async_mma_wait has retired"
    )]
    AsyncMmaPending {
        register: String,
        index: u64,
        thread: u32,
        mma_stmt: String,
    },
    #[error(
        "write during async mma: thread {writer} writes `%{buffer}`[{element}], which an \
         async_mma (at `{mma_stmt}`) still reads: no async_mma_wait has retired it"
    )]
    WriteDuringAsyncMma {
        buffer: String,
        element: u64,
        writer: u32,
        mma_stmt: String,
    },
    #[error(
        "read before mbarrier wait: thread {reader} reads `%{buffer}`[{element}], which the \
         tma_load at `{copy_stmt}` writes, before an mbarrier_wait of its own saw the copy's \
         phase of `%{barrier}`[{index}] complete"
    )]
    ReadBeforeBarrierWait {
        buffer: String,
        element: u64,
        reader: u32,
        copy_stmt: String,
        barrier: String,
        index: u64,
    },
    #[error(
        "write before mbarrier wait: thread {writer} writes `%{buffer}`[{element}], which the \
         tma_load at `{copy_stmt}` writes, before an mbarrier_wait of its own saw the copy's \
         phase of `%{barrier}`[{index}] complete"
    )]
    WriteBeforeBarrierWait {
        buffer: String,
        element: u64,
        writer: u32,
        copy_stmt: String,
        barrier: String,
        index: u64,
    },
    #[error(
        "mbarrier wait never completes: thread {thread} waits for parity {parity} of \
         `%{barrier}`[{index}], whose phase {phase} still expects {arrivals} arrival(s) and \
         {bytes} byte(s), and no other thread of the block can still run"
    )]
    BarrierWaitStuck {
        barrier: String,
        index: u64,
        thread: u32,
        parity: u64,
        phase: u64,
        arrivals: u64,
        bytes: i64,
    },
    #[error("mbarrier `%{barrier}`[{index}]: {reason}")]
    Mbarrier {
        barrier: String,
        index: u64,
        reason: String,
    },
    #[error(
        "numbered barrier {id} never completes: {arrived} of its {expected} threads have \
         arrived, and no other thread of the block can still run"
    )]
    NamedBarrierStuck {
        id: u32,
        arrived: u32,
        expected: u32,
    },
    #[error("setmaxnreg: {0}")]
    SetMaxRegisters(String),
    #[error("numbered barrier {id}: {reason}")]
    NamedBarrier { id: u32, reason: String },
    #[error("tma_load into `%{buffer}`: {reason}")]
    Tma { buffer: String, reason: String },
    #[error("ldmatrix `{load}`: {reason}")]
    MatrixLoad { load: String, reason: String },
    #[error("stmatrix `{store}`: {reason}")]
    MatrixStore { store: String, reason: String },
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("trap: a `T.device_assert` condition is false")]
    Trap,
    #[error("loop step is zero")]
    ZeroStep,
    #[error("step limit of {0} exceeded (a runaway loop?)")]
    StepLimit(u64),
    #[error("thread-step limit of {0} exceeded (a runaway loop?)")]
    WorkLimit(u64),
    #[error("argument of type {found} where {expected} was expected")]
    Dtype { expected: DType, found: DType },
    #[error("malformed kernel (a verifier gap): {0}")]
    Malformed(String),
}
