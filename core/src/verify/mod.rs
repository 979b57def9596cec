//! Safety verification of Tile IR: obligations as data, discharged by Z3.
//!
//! [`generate`] walks a [`Function`] and states, for every access and every
//! kernel, what must hold for the kernel to be safe ([`Obligation`]): a
//! goal [`Formula`] under hypotheses (loop ranges, block and thread index
//! ranges, dominating `if` conditions, `T.assume` facts, `let` bindings),
//! with the source span of the statement. Obligations are plain data: they
//! print ([`Obligation::render`]) and are tested without a solver.
//! `solve::discharge` (feature `smt`, on by default) proves or refutes
//! them with one Z3 solver per kernel, each obligation in its own
//! push/pop scope, and turns a satisfying assignment of the negated goal
//! into a [`Counterexample`]: the block and thread indices, loop variables
//! and symbolic sizes that break it.
//!
//! # Obligation kinds
//! - `in-bounds`: a scalar load or store indexes inside its buffer. For a
//!   shared, fragment, local or var buffer a violation is a fault (the
//!   reference interpreter stops with an out-of-bounds error); for a global
//!   buffer the out-of-bounds rule would silently read zero or drop the
//!   store, which is still reported as a refutation.
//! - `region-in-bounds`: a tile op's region (`copy`, `gemm`, `fill`,
//!   `atomic_add`) lies inside its buffer. Required for on-chip buffers;
//!   for global buffers it is *advisory*: TileLang's out-of-bounds rule
//!   makes a region hanging over the edge of a tensor legal (ragged sizes
//!   rely on it), so a refutation means "the lowering keeps its bounds
//!   guards here", not an error.
//! - `no-overflow`: every intermediate value of the index arithmetic of an
//!   access stays inside its integer type (Tile IR integers wrap) and no
//!   divisor in it is zero, and
//!   every global buffer's element count fits the index width of the
//!   generated code ([`VerifyOptions::index_bits`]). The bounds obligation
//!   of an access assumes these facts of its own indices, so it speaks of
//!   exact arithmetic, and this obligation discharges the assumption.
//! - `no-race`: two different iterations of a `T.Parallel` nest (which
//!   become different threads) never store to one element of a global,
//!   shared or fragment buffer, unless the stored value does not depend on
//!   the iteration (a replicated write). Stated over a second, primed copy
//!   of the iteration's variables (`i'`).
//! - `shared-memory`: the shared buffers a kernel allocates, each aligned
//!   to 16 bytes, fit the target's shared-memory capacity.
//! - `threads`: the block size is within the target's limit.
//!
//! # Soundness
//! Terms are exact integers; an IR construct with no exact encoding (a
//! value loaded from memory, a float converted to an integer, bitwise
//! operators other than shifts by constants) becomes a fresh variable
//! bounded by its type's range. That over-approximates the values it can
//! take, so a proof stays a proof, while a counterexample that involves
//! such a variable may not be reachable: the obligation is marked
//! [`Obligation::approximate`] and the counterexample says so.

mod obligations;
#[cfg(feature = "smt")]
pub mod solve;
pub mod term;

pub use obligations::generate;
pub use term::{Cmp, Formula, Term};

use std::fmt::Write as _;

use crate::ir::{Scope, Span};
use crate::target::{MemoryKind, TargetDescription};

/// What the target and code generation promise, as verification reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyOptions {
    /// The target's name, for messages (`sm_80`).
    pub target: Option<String>,
    /// Bytes of shared memory one block may use; `None`: not checked.
    pub shared_bytes: Option<u64>,
    /// The most threads one block may have; `None`: not checked.
    pub max_threads: Option<u32>,
    /// Width in bits of the signed integers the generated code indexes
    /// buffers with (linear element offsets).
    pub index_bits: u32,
    /// Time one obligation may take before it is `unknown`.
    pub timeout_ms: u32,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            target: None,
            shared_bytes: None,
            max_threads: None,
            index_bits: 32,
            timeout_ms: 2000,
        }
    }
}

impl VerifyOptions {
    /// The limits of a target description, with the default index width
    /// and timeout.
    pub fn for_target(target: &TargetDescription) -> VerifyOptions {
        VerifyOptions {
            target: Some(target.name.clone()),
            shared_bytes: target
                .memory_of_kind(MemoryKind::Shared)
                .and_then(|space| space.capacity_bytes),
            max_threads: target.threads_per_block.max_per_block,
            ..VerifyOptions::default()
        }
    }
}

/// What an obligation is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObligationKind {
    /// A scalar load or store.
    InBounds {
        buffer: String,
        scope: Scope,
        store: bool,
    },
    /// A region of a tile op.
    RegionInBounds {
        buffer: String,
        scope: Scope,
        /// The tile op (`copy`, `gemm`, ...).
        op: &'static str,
        /// The operand (`src`, `dst`, `a`, ...).
        operand: &'static str,
    },
    /// Index arithmetic (of an access, or a buffer's element count).
    NoOverflow { what: String, bits: u32 },
    /// Two iterations of a `T.Parallel` nest (two threads) store to
    /// different elements.
    NoRace { buffer: String, scope: Scope },
    /// The shared memory of one kernel.
    SharedMemory { limit: u64 },
    /// The block size of one kernel.
    Threads { limit: u32 },
}

impl ObligationKind {
    /// The stable short name (`in-bounds`, `region-in-bounds`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ObligationKind::InBounds { .. } => "in-bounds",
            ObligationKind::RegionInBounds { .. } => "region-in-bounds",
            ObligationKind::NoOverflow { .. } => "no-overflow",
            ObligationKind::NoRace { .. } => "no-race",
            ObligationKind::SharedMemory { .. } => "shared-memory",
            ObligationKind::Threads { .. } => "threads",
        }
    }
}

/// What binds a variable of the obligations, for showing counterexamples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A symbolic size.
    Size,
    /// The block index along grid axis `n` (0 = x).
    Block(usize),
    Thread,
    /// A `for` loop or `T.Parallel` index.
    Loop,
    Let,
    /// A value with no exact encoding (see the module's soundness note).
    Opaque,
}

/// A variable of the obligations: an IR variable or an opaque value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymVar {
    pub name: String,
    pub role: Role,
    /// Always-true range (the variable's type).
    pub lo: i128,
    pub hi: i128,
    /// Whether the variable is a boolean (an opaque condition).
    pub boolean: bool,
}

/// One thing to prove.
#[derive(Clone, Debug, PartialEq)]
pub struct Obligation {
    pub kind: ObligationKind,
    /// `false` for advisory obligations (see the module documentation),
    /// whose refutation is not an error.
    pub required: bool,
    /// The kernel (0-based, in program order) it belongs to.
    pub kernel: usize,
    /// The statement it comes from.
    pub span: Span,
    /// One line saying what is proved (`load A_shared[i, j + 1]`).
    pub subject: String,
    /// Facts that hold where the statement runs.
    pub hypotheses: Vec<Formula>,
    pub goal: Formula,
    /// Values worth showing in a counterexample (indices, extents, sizes).
    pub shown: Vec<(String, Term)>,
    /// Indices into [`Obligations::vars`] of the variables in scope.
    pub scope: Vec<usize>,
    /// Whether an opaque value occurs (a counterexample may be spurious).
    pub approximate: bool,
    /// The access whose guard this obligation (with the others of the
    /// same site) can remove: set for the bounds and index-arithmetic
    /// obligations of loads, stores and tile-op regions that are reached
    /// unconditionally within their statement.
    pub site: Option<AccessSite>,
}

/// An access of a statement, as the lowering meets it: a bounds guard the
/// lowering would emit for it is redundant when every obligation of the
/// site is proved ([`proved_sites`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessSite {
    /// The load expression `expr`, in the statement at `span`.
    Load {
        span: Span,
        expr: crate::ir::Handle<crate::ir::Expr>,
    },
    /// The scalar store to `buffer` by the statement at `span`.
    Store {
        span: Span,
        buffer: crate::ir::Handle<crate::ir::Buffer>,
    },
    /// The region of `buffer` in the tile op at `span`.
    Region {
        span: Span,
        buffer: crate::ir::Handle<crate::ir::Buffer>,
    },
}

/// The sites all of whose obligations are proved, given the outcome of
/// every obligation (in order).
pub fn proved_sites(
    obligations: &Obligations,
    outcomes: &[Outcome],
) -> std::collections::HashSet<AccessSite> {
    let mut proved = std::collections::HashSet::new();
    let mut failed = std::collections::HashSet::new();
    for (obligation, outcome) in obligations.items.iter().zip(outcomes) {
        let Some(site) = obligation.site else {
            continue;
        };
        if matches!(outcome, Outcome::Proved) {
            proved.insert(site);
        } else {
            failed.insert(site);
        }
    }
    proved.retain(|site| !failed.contains(site));
    proved
}

impl Obligation {
    /// The obligation in text: kind, subject, hypotheses, goal.
    pub fn render(&self) -> String {
        let mut out = format!("{} {}", self.kind.name(), self.subject);
        if !self.required {
            out.push_str(" (advisory)");
        }
        out.push('\n');
        for hypothesis in &self.hypotheses {
            let _ = writeln!(out, "  assume {hypothesis}");
        }
        let _ = writeln!(out, "  prove {}", self.goal);
        out
    }
}

/// Every obligation of one function, with the variables they use.
#[derive(Clone, Debug, PartialEq)]
pub struct Obligations {
    pub function: String,
    pub vars: Vec<SymVar>,
    pub items: Vec<Obligation>,
}

impl Obligations {
    /// Every obligation rendered, in order.
    pub fn render(&self) -> String {
        self.items.iter().map(Obligation::render).collect()
    }

    /// The variable with this name.
    pub fn var(&self, name: &str) -> Option<&SymVar> {
        self.vars.iter().find(|v| v.name == name)
    }
}

/// Concrete values that break an obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// Variables in scope, in the order: sizes, block indices, thread,
    /// loops and lets (innermost last).
    pub values: Vec<(String, Role, i128)>,
    /// The values of [`Obligation::shown`].
    pub shown: Vec<(String, i128)>,
    /// Whether the obligation involves opaque values.
    pub approximate: bool,
}

impl Counterexample {
    /// The value of a variable.
    pub fn value(&self, name: &str) -> Option<i128> {
        self.values
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|&(_, _, v)| v)
    }

    /// `bx = 1, tx = 0, M = 65, i = 64` in scope order.
    pub fn assignment(&self) -> String {
        self.values
            .iter()
            .filter(|(_, role, _)| *role != Role::Opaque)
            .map(|(name, _, value)| format!("{name} = {value}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The verdict on one obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Proved,
    Refuted(Counterexample),
    /// The solver gave up (timeout, nonlinear arithmetic); the reason.
    Unknown(String),
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Proved => "proved",
            Outcome::Refuted(_) => "refuted",
            Outcome::Unknown(_) => "unknown",
        }
    }
}

/// Why verification could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("malformed IR (run the IR verifier first): {detail}")]
    Malformed { detail: String, span: Span },
    /// A bug in the verifier.
    #[error("internal verifier error: {detail}")]
    Internal { detail: String },
}

impl VerifyError {
    /// The statement involved, when known.
    pub fn span(&self) -> Span {
        match self {
            VerifyError::Malformed { span, .. } => *span,
            VerifyError::Internal { .. } => Span::UNKNOWN,
        }
    }
}
