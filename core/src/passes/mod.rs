//! Passes over Tile IR: the [`Pass`] trait, the registry of every pass by
//! its kebab-case name, and the [`Pipeline`] that runs a list of them.
//!
//! # Registry
//! Every pass is registered once, in [`all`], under the kebab-case name its
//! [`Pass::name`] returns (`simplify`, later `infer-layouts`, ...); its file
//! is the snake_case form of that name (`passes/simplify.rs`). The command
//! line (`--passes`, `--print-after=...`), the timing table and the
//! file-based tests all look passes up there ([`lookup`]), so a name means
//! the same pass everywhere.
//!
//! # Pipeline
//! A [`Pipeline`] is a list of registered passes and the points where the
//! caller wants to see the IR. [`Pipeline::run`] verifies the input module,
//! then for each pass in order: prints the module if asked to before the
//! pass, runs it, verifies the result with [`verify_module`], and prints it
//! if asked to after the pass. A module that does not verify after pass `P`
//! is a compiler bug in `P`: it is returned as [`PassError::Verify`] naming
//! `P` (never a panic). The printed texts and the wall-clock time of every
//! pass come back as data in a [`PipelineReport`]; this crate never prints.
//!
//! # The lowering step
//! A pipeline may end with a [`Lowering`] (`lower-tile-ops`): a step from
//! Tile IR to thread-level IR, registered by name like the passes
//! ([`lowerings`]) and selected, printed and timed the same way, but only
//! last. [`Pipeline::run`] runs the Tile passes; [`Pipeline::run_lowering`]
//! then runs the lowering on their result (so that a caller can prove
//! things about the Tile IR in between and hand the proofs over in
//! [`PassContext::lower`]). Its printed output is thread IR.
//!
//! # Helpers for passes
//! [`for_each_expr_mut`] visits every expression handle a statement holds,
//! and [`compact_exprs`] drops the expressions no statement or buffer
//! reaches any more, which passes that rebuild expressions call at the end
//! so that the arena does not grow with every run. They and the
//! substitution helpers live in [`crate::ir::visit`] (the front end and the
//! lowering use them too) and are re-exported here.

pub mod infer_layouts;
pub mod inject_pipeline;
pub mod lower_tile_ops;
pub mod plan_shared_memory;
pub mod simplify;
pub mod warp_specialize;

pub use crate::ir::visit::{
    compact_exprs, expr_operands, for_each_expr_mut, replay_binds, replay_binds_where, substitute,
    substituted,
};

use crate::ir::verify::{VerifyError, verify_module};
use crate::ir::{LoopKind, Module, PipelineSchedule, Span, Stmt};
use crate::lower::{KernelChoices, LowerError, LowerOptions};
use crate::target::TargetDescription;
use crate::text::print_module;
use crate::thread;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A transformation of a whole module.
///
/// A pass assumes a module that verifies and must leave one that verifies;
/// it reports what it cannot do as a [`PassError`], never by panicking or
/// printing.
pub trait Pass: Send + Sync {
    /// The kebab-case name the pass is registered and selected by.
    fn name(&self) -> &'static str;

    /// One paragraph: what the pass does, for `docs/passes.md` and help
    /// texts.
    fn description(&self) -> &'static str;

    /// Transforms `module` in place.
    fn run(&self, module: &mut Module, cx: &PassContext) -> Result<(), PassError>;
}

/// A step from Tile IR to thread-level IR that ends a pipeline (module
/// documentation).
pub trait Lowering: Send + Sync {
    /// The kebab-case name the step is registered and selected by.
    fn name(&self) -> &'static str;

    /// One paragraph: what the step does.
    fn description(&self) -> &'static str;

    /// Lowers `module`; the result passes the thread-IR verifier.
    fn run(&self, module: &Module, cx: &PassContext) -> Result<thread::Module, PassError>;
}

/// What every pass may read besides the module: options now, the target
/// description later. Build it with [`PassContext::default`] and set the
/// fields you need, so that new fields do not break callers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PassContext {
    /// Free-form settings, `<pass>.<setting>` → value (for example
    /// `simplify.rounds` → `2`). Passes ignore keys they do not know.
    pub options: BTreeMap<String, String>,
    /// The target compiled for: the only source of hardware facts a pass
    /// may use. `None` when compiling for no particular target (passes
    /// then skip target checks).
    pub target: Option<TargetDescription>,
    /// What the lowering step may rely on beyond the IR (accesses proved
    /// in bounds).
    pub lower: LowerOptions,
}

impl PassContext {
    /// A context with no options.
    pub fn new() -> Self {
        Self::default()
    }

    /// The option `key`, when set.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }
}

/// Why a pipeline or a pass failed.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// A name that no registered pass has.
    #[error("unknown pass `{name}`; the registered passes are: {}", .known.join(", "))]
    UnknownPass {
        name: String,
        known: Vec<&'static str>,
    },
    /// The module given to the pipeline does not verify (so no pass is to
    /// blame).
    #[error("the input module does not verify: {}", summarize(.errors))]
    InvalidInput { errors: Vec<(String, VerifyError)> },
    /// A pass or lowering named after the lowering step, whose output is
    /// thread IR.
    #[error("`{name}` cannot follow `{lowering}`: a pipeline ends with its lowering to thread IR")]
    AfterLowering {
        name: String,
        lowering: &'static str,
    },
    /// The module does not verify after `pass` ran: a bug in that pass.
    #[error(
        "internal compiler error: the IR does not verify after pass `{pass}`: {}",
        summarize(.errors)
    )]
    Verify {
        pass: &'static str,
        errors: Vec<(String, VerifyError)>,
    },
    /// The kernel cannot be compiled for the target as written (it needs
    /// more shared memory than the target has, ...): the user's problem,
    /// not a compiler bug, reported at the statement `span` names.
    #[error("{message}")]
    Rejected {
        pass: &'static str,
        function: String,
        message: String,
        span: Span,
    },
    /// A pass could not transform a function.
    #[error("pass `{pass}` failed on function `@{function}`: {source}")]
    Failed {
        pass: &'static str,
        function: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The first verifier error with its function, and how many more there are.
fn summarize(errors: &[(String, VerifyError)]) -> String {
    match errors {
        [] => "no error reported".to_string(),
        [(function, error)] => format!("@{function}: {error}"),
        [(function, error), rest @ ..] => {
            format!("@{function}: {error} (and {} more)", rest.len())
        }
    }
}

/// Every registered pass, in a fixed order.
pub fn all() -> &'static [&'static dyn Pass] {
    const PASSES: &[&dyn Pass] = &[
        &simplify::Simplify,
        &infer_layouts::InferLayouts,
        &inject_pipeline::InjectPipeline,
        &warp_specialize::WarpSpecialize,
        &plan_shared_memory::PlanSharedMemory,
    ];
    PASSES
}

/// Every registered lowering step (a pipeline may end with one).
pub fn lowerings() -> &'static [&'static dyn Lowering] {
    const LOWERINGS: &[&dyn Lowering] = &[&lower_tile_ops::LowerTileOps];
    LOWERINGS
}

/// The registered pass called `name`.
pub fn lookup(name: &str) -> Option<&'static dyn Pass> {
    all().iter().copied().find(|p| p.name() == name)
}

/// The registered lowering step called `name`.
pub fn lookup_lowering(name: &str) -> Option<&'static dyn Lowering> {
    lowerings().iter().copied().find(|l| l.name() == name)
}

/// The names of every registered pass, in registry order, then of every
/// lowering step.
pub fn names() -> Vec<&'static str> {
    all()
        .iter()
        .map(|p| p.name())
        .chain(lowerings().iter().map(|l| l.name()))
        .collect()
}

/// Whether `name` is a registered pass or lowering step.
pub fn is_registered(name: &str) -> bool {
    lookup(name).is_some() || lookup_lowering(name).is_some()
}

fn unknown(name: &str) -> PassError {
    PassError::UnknownPass {
        name: name.to_string(),
        known: names(),
    }
}

/// The registered pass called `name`, or [`PassError::UnknownPass`].
pub fn require(name: &str) -> Result<&'static dyn Pass, PassError> {
    lookup(name).ok_or_else(|| unknown(name))
}

/// The registered name `name` (of a pass or a lowering step) with the
/// registry's lifetime, or [`PassError::UnknownPass`].
pub fn registered_name(name: &str) -> Result<&'static str, PassError> {
    lookup(name)
        .map(|p| p.name())
        .or_else(|| lookup_lowering(name).map(|l| l.name()))
        .ok_or_else(|| unknown(name))
}

/// A list of passes to run in order, with the points where the IR is
/// printed.
#[derive(Clone, Default)]
pub struct Pipeline {
    passes: Vec<&'static dyn Pass>,
    lowering: Option<&'static dyn Lowering>,
    print_before: BTreeSet<&'static str>,
    print_after: BTreeSet<&'static str>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("passes", &self.pass_names())
            .field("print_before", &self.print_before)
            .field("print_after", &self.print_after)
            .finish()
    }
}

/// Time spent on one pass of a pipeline run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassTiming {
    pub pass: &'static str,
    /// Running the pass itself.
    pub run: Duration,
    /// Verifying the module after it.
    pub verify: Duration,
}

/// What a pipeline run leaves besides the transformed module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineReport {
    /// The printed module at each requested point, in order: a label such
    /// as `after simplify` (`after simplify #2` for the second run of the
    /// same pass) and the IR text.
    pub printed: Vec<(String, String)>,
    /// One entry per pass run, in order.
    pub timings: Vec<PassTiming>,
}

/// A failed pipeline run: the error and what was collected until then
/// (useful to print the IR before the failing pass).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct PipelineFailure {
    pub error: PassError,
    pub report: PipelineReport,
}

impl Pipeline {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pipeline of the registered passes `names`, in order; the last
    /// may be a lowering step.
    pub fn from_names<'n>(names: impl IntoIterator<Item = &'n str>) -> Result<Self, PassError> {
        let mut pipeline = Pipeline::new();
        for name in names {
            if let Some(lowering) = pipeline.lowering {
                registered_name(name)?;
                return Err(PassError::AfterLowering {
                    name: name.to_string(),
                    lowering: lowering.name(),
                });
            }
            match lookup_lowering(name) {
                Some(lowering) => pipeline.lowering = Some(lowering),
                None => pipeline.passes.push(require(name)?),
            }
        }
        Ok(pipeline)
    }

    /// A pipeline from a comma-separated list of pass names (`simplify`,
    /// `simplify,simplify`); spaces around names and empty entries are
    /// ignored.
    pub fn parse(list: &str) -> Result<Self, PassError> {
        Self::from_names(list.split(',').map(str::trim).filter(|s| !s.is_empty()))
    }

    /// Appends a pass.
    pub fn push(&mut self, pass: &'static dyn Pass) {
        self.passes.push(pass);
    }

    /// The Tile passes, in order (without the lowering step).
    pub fn passes(&self) -> &[&'static dyn Pass] {
        &self.passes
    }

    /// The lowering step that ends the pipeline, if any.
    pub fn lowering(&self) -> Option<&'static dyn Lowering> {
        self.lowering
    }

    /// Whether the pipeline runs nothing.
    pub fn is_empty(&self) -> bool {
        self.passes.is_empty() && self.lowering.is_none()
    }

    /// The names of the passes, in order, then the lowering step's.
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes
            .iter()
            .map(|p| p.name())
            .chain(self.lowering.map(|l| l.name()))
            .collect()
    }

    /// Whether the pipeline runs the pass or lowering step `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.pass_names().contains(&name)
    }

    /// Prints the module before every run of the registered pass (or
    /// lowering step) `name`.
    pub fn print_before(&mut self, name: &str) -> Result<(), PassError> {
        self.print_before.insert(registered_name(name)?);
        Ok(())
    }

    /// Prints the module after every run of the registered pass `name`
    /// (after the lowering step: the thread IR).
    pub fn print_after(&mut self, name: &str) -> Result<(), PassError> {
        self.print_after.insert(registered_name(name)?);
        Ok(())
    }

    /// Runs the lowering step, if the pipeline has one, on `module` (the
    /// result of [`Pipeline::run`]): its thread IR, and a report with what
    /// was printed around it and its timing (the lowering verifies its
    /// output itself; that time is part of `run`). `None` without a
    /// lowering step.
    pub fn run_lowering(
        &self,
        module: &Module,
        cx: &PassContext,
    ) -> Result<Option<(thread::Module, PipelineReport)>, PipelineFailure> {
        let Some(lowering) = self.lowering else {
            return Ok(None);
        };
        let name = lowering.name();
        let mut report = PipelineReport::default();
        if self.print_before.contains(name) {
            report
                .printed
                .push((format!("before {name}"), print_module(module)));
        }
        let started = Instant::now();
        let result = lowering.run(module, cx);
        report.timings.push(PassTiming {
            pass: name,
            run: started.elapsed(),
            verify: Duration::ZERO,
        });
        match result {
            Ok(lowered) => {
                if self.print_after.contains(name) {
                    report
                        .printed
                        .push((format!("after {name}"), thread::print_module(&lowered)));
                }
                Ok(Some((lowered, report)))
            }
            Err(error) => Err(PipelineFailure { error, report }),
        }
    }

    /// Runs every Tile pass on `module` in order (see the module
    /// documentation); the lowering step, if any, is
    /// [`Pipeline::run_lowering`]'s. On failure `module` holds the IR the
    /// failing step left.
    pub fn run(
        &self,
        module: &mut Module,
        cx: &PassContext,
    ) -> Result<PipelineReport, PipelineFailure> {
        let mut report = PipelineReport::default();
        if let Err(errors) = verify_module(module) {
            return Err(PipelineFailure {
                error: PassError::InvalidInput { errors },
                report,
            });
        }
        let mut runs: BTreeMap<&'static str, usize> = BTreeMap::new();
        for &pass in &self.passes {
            let name = pass.name();
            let count = runs.entry(name).or_insert(0);
            *count += 1;
            let label = |when: &str| {
                if *count == 1 {
                    format!("{when} {name}")
                } else {
                    format!("{when} {name} #{count}")
                }
            };
            if self.print_before.contains(name) {
                report.printed.push((label("before"), print_module(module)));
            }
            let started = Instant::now();
            let result = pass.run(module, cx);
            let run = started.elapsed();
            if let Err(error) = result {
                report.timings.push(PassTiming {
                    pass: name,
                    run,
                    verify: Duration::ZERO,
                });
                return Err(PipelineFailure { error, report });
            }
            let started = Instant::now();
            let verified = verify_module(module);
            let verify = started.elapsed();
            report.timings.push(PassTiming {
                pass: name,
                run,
                verify,
            });
            if let Err(errors) = verified {
                return Err(PipelineFailure {
                    error: PassError::Verify { pass: name, errors },
                    report,
                });
            }
            if self.print_after.contains(name) {
                report.printed.push((label("after"), print_module(module)));
            }
        }
        Ok(report)
    }
}

/// What the lowering to threads chooses for every kernel of every
/// function (`lower::kernel_choices`), for the passes that record those
/// choices. A kernel the lowering refuses is refused by `pass`, at the
/// statement the lowering names.
pub(crate) fn lowering_choices(
    pass: &'static str,
    module: &Module,
    cx: &PassContext,
) -> Result<Vec<Vec<KernelChoices>>, PassError> {
    let target = required_target(pass, "chooses", module, cx)?;
    module
        .functions
        .iter()
        .map(|f| crate::lower::kernel_choices(f, target).map_err(|e| lower_error(pass, &f.name, e)))
        .collect()
}

/// The target of `cx`, or the refusal of `pass` (which `does` something
/// for a target) when there is none.
pub(crate) fn required_target<'c>(
    pass: &'static str,
    does: &str,
    module: &Module,
    cx: &'c PassContext,
) -> Result<&'c TargetDescription, PassError> {
    cx.target.as_ref().ok_or_else(|| PassError::Rejected {
        pass,
        function: module
            .functions
            .first()
            .map(|f| f.name.clone())
            .unwrap_or_default(),
        message: format!("`{pass}` {does} for a target, and none was given (pass `--target`)"),
        span: Span::UNKNOWN,
    })
}

/// A lowering error met by `pass` in `function`: a compiler bug when the
/// lowering says so, else the kernel's refusal at its statement.
pub(crate) fn lower_error(pass: &'static str, function: &str, e: LowerError) -> PassError {
    match e {
        LowerError::Internal { .. } => PassError::Failed {
            pass,
            function: function.to_string(),
            source: Box::new(e),
        },
        _ => PassError::Rejected {
            pass,
            function: function.to_string(),
            span: e.span(),
            message: e.to_string(),
        },
    }
}

/// Writes `merge(old, chosen)` as the schedule of every pipelined loop
/// the choices name.
pub(crate) fn set_schedules(
    module: &mut Module,
    choices: Vec<Vec<KernelChoices>>,
    merge: impl Fn(Option<PipelineSchedule>, PipelineSchedule) -> Option<PipelineSchedule>,
) {
    for (f, kernels) in module.functions.iter_mut().zip(choices) {
        let chosen = kernels
            .into_iter()
            .flat_map(|k| k.schedules)
            .collect::<std::collections::HashMap<_, _>>();
        f.body.walk_mut(&mut |stmt| {
            if let Stmt::For {
                var,
                kind: LoopKind::Pipelined { schedule, .. },
                ..
            } = stmt
                && let Some(&c) = chosen.get(var)
            {
                *schedule = merge(*schedule, c);
            }
        });
    }
}
