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
//! and symbolic sizes that break it, each made as small as possible in a
//! fixed order so that the counterexample does not depend on the solver's
//! choice of model.
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
//! - `layout-injective`: a write through a layout reaches each element
//!   from one holder: two different blocks never write one element of a
//!   global buffer (the grid's layout), and the accumulator fragments of a
//!   gemm's matrix atom, tiled over the issuing groups by any split the
//!   lowering may pick, give different holders different elements.
//! - `fragment-coverage`: the atom's A and B fragments hold each element
//!   of their tile exactly `replication` times, and the tiled accumulator
//!   fragments cover the gemm's C region.
//! - `swizzle-permutation`: an index with a hand-written XOR swizzle maps
//!   the iterations of its `T.Parallel` nest one-to-one into (and, when
//!   the counts agree, onto) its shared tile.
//! - `pipeline-reuse` and `pipeline-order`: in the lowering's schedule of
//!   a `T.Pipelined` loop (generalised to `order`/`stage` lists), no copy
//!   in flight writes the stage version a consumer reads, and no consumer
//!   reads a stage before the wait and barrier that publish its copy.
//! - `registers`: an estimate of the registers a kernel keeps per thread
//!   (its fragments spread over the block, its local buffers whole) fits
//!   the target's budget, where the target describes one.
//!
//! The models, and what each leaves out, are in `docs/verify.md` and at
//! the top of `obligations/layout.rs`, `obligations/pipeline.rs` and
//! `obligations/resources.rs`.
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
pub use term::{BitOp, Cmp, Formula, Term};

use std::fmt::Write as _;

use crate::ir::{Scope, Span};
use crate::target::{AsyncCopy, MatrixAtom, MemoryKind, TargetDescription};

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
    /// 32-bit registers one thread may use; `None`: not checked.
    pub registers_per_thread: Option<u32>,
    /// 32-bit registers one block may use; `None`: not checked.
    pub registers_per_block: Option<u32>,
    /// Whether `T.Pipelined` loops run with asynchronous global → shared
    /// copies and commit groups (`false`: double-buffered through
    /// registers, the lowering's schedule for targets without them).
    pub async_copies: bool,
    /// The target's matrix atoms, whose fragments `gemm` writes through.
    pub matrix_atoms: Vec<MatrixAtom>,
    /// The solver's random seed. Verdicts and counterexamples do not
    /// depend on it (counterexamples are minimized, `solve`); tests vary
    /// it to check that.
    pub random_seed: u32,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            target: None,
            shared_bytes: None,
            max_threads: None,
            index_bits: 32,
            timeout_ms: 2000,
            registers_per_thread: None,
            registers_per_block: None,
            async_copies: true,
            matrix_atoms: Vec::new(),
            random_seed: 0,
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
            registers_per_thread: target.registers.per_thread,
            registers_per_block: target.registers.per_block,
            async_copies: target.async_copies.iter().any(|c| {
                matches!(c, AsyncCopy::PerThread(p)
                    if p.commit_groups && p.from == "global" && p.to == "shared")
            }),
            matrix_atoms: target.matrix_atoms.clone(),
            ..VerifyOptions::default()
        }
    }
}

/// Which layout a [`ObligationKind::LayoutInjective`] obligation is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutSource {
    /// The grid: which block writes which elements of a global buffer.
    Grid,
    /// A matrix atom's accumulator fragment, tiled over the issuing groups
    /// of a `gemm` by the lowering's split.
    Accumulator,
}

/// The software-pipeline schedule of one (producer, consumer) pair of a
/// `T.Pipelined` loop, as the obligations model it (`docs/verify.md`).
/// Iterations are the loop's; the producer's copy for iteration `x` is
/// issued in iteration `x - ahead` (the prologue when that is before the
/// loop), lands by the wait at the top of iteration `x - ahead + 1 +
/// wait`, and the consumer reads iteration `y`'s data in iteration `y -
/// lookahead + reader_stage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineSchedule {
    /// Copies of each stage buffer (`num_stages`, or 2 through registers).
    pub versions: u32,
    /// The pipeline stage of the producer and of the consumer.
    pub writer_stage: u32,
    pub reader_stage: u32,
    /// The largest stage of the loop: how many iterations ahead the
    /// producers of stage 0 run.
    pub lookahead: u32,
    /// Commit groups a `wait_group` leaves pending at the top of an
    /// iteration (0 through registers: the stores are synchronous).
    pub wait: u32,
    /// Asynchronous copies (`true`) or loads into registers.
    pub asynchronous: bool,
    /// Iterations the consumer keeps reading after the one it runs in (1
    /// for a gemm whose asynchronous matrix group stays in flight across
    /// the next iteration, `lower/pipeline.rs`; else 0).
    pub hold: u32,
}

impl PipelineSchedule {
    /// Iterations between the producer's issue and the consumer's read of
    /// the same data.
    pub fn ahead(&self) -> i128 {
        i128::from(self.lookahead) - i128::from(self.writer_stage)
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
    /// Two holders of a layout (two blocks, two lanes or slots of the
    /// issuing groups) never write one element.
    LayoutInjective {
        buffer: String,
        source: LayoutSource,
    },
    /// A fragment gives every element of its tile to its declared number
    /// of holders and nothing outside it.
    FragmentCoverage {
        buffer: String,
        /// The operand (`A`, `B`, `C`).
        operand: &'static str,
    },
    /// An index with a bitwise swizzle maps the iterations of its
    /// `T.Parallel` nest one-to-one into (or onto) the buffer's tile.
    SwizzlePermutation { buffer: String, onto: bool },
    /// A stage buffer of a pipelined loop is not overwritten by a later
    /// iteration's copy while a consumer may still read it.
    PipelineReuse {
        buffer: String,
        schedule: PipelineSchedule,
    },
    /// A consumer of a pipelined loop reads a stage only after the wait
    /// and barrier that complete and publish its copy.
    PipelineOrder {
        buffer: String,
        schedule: PipelineSchedule,
    },
    /// The registers a kernel keeps per thread (an estimate) fit the
    /// target's budget.
    Registers {
        per_thread: Option<u32>,
        per_block: Option<u32>,
    },
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
            ObligationKind::LayoutInjective { .. } => "layout-injective",
            ObligationKind::FragmentCoverage { .. } => "fragment-coverage",
            ObligationKind::SwizzlePermutation { .. } => "swizzle-permutation",
            ObligationKind::PipelineReuse { .. } => "pipeline-reuse",
            ObligationKind::PipelineOrder { .. } => "pipeline-order",
            ObligationKind::Registers { .. } => "registers",
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
    /// A coordinate the obligation quantifies over: an element of a
    /// region, a lane, slot or group of a fragment layout, an iteration
    /// of a pipelined loop.
    Coordinate,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
