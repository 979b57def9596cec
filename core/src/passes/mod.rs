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
//! so that the arena does not grow with every run.

pub mod infer_layouts;
pub mod inject_pipeline;
pub mod lower_tile_ops;
pub mod plan_shared_memory;
pub mod simplify;
pub mod warp_specialize;

use crate::ir::verify::{VerifyError, verify_module};
use crate::ir::{
    AtomicValue, Block, Expr, Function, Handle, LoopKind, Module, PipelineSchedule, Region, Span,
    Stmt,
};
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

// ---- Helpers for passes ----------------------------------------------------

/// Substitutes the replayable binds of `body` (scalar `let`s whose values
/// read no buffer the block writes, `ir::lists::replayable_binds`) into
/// the statements after them and drops them; returns, for each statement
/// the body had, whether it was one. The front end does this for a
/// pipelined loop's body, the lowering for a function's body (binds
/// between kernels).
pub fn replay_binds(f: &mut Function, body: &mut Block) -> Result<Vec<bool>, crate::ir::TypeError> {
    let binds = crate::ir::lists::replayable_binds(body, f);
    replay_binds_where(f, body, binds)
}

/// [`replay_binds`] of the `let`s that `binds` marks (one flag per
/// statement of `body`).
pub fn replay_binds_where(
    f: &mut Function,
    body: &mut Block,
    binds: Vec<bool>,
) -> Result<Vec<bool>, crate::ir::TypeError> {
    if !binds.contains(&true) {
        return Ok(binds);
    }
    let old = std::mem::take(body);
    let mut stmts: Vec<(Stmt, Span)> = old.stmts.into_iter().zip(old.spans).collect();
    for i in 0..stmts.len() {
        let Stmt::Let { var, value } = stmts[i].0 else {
            continue;
        };
        if !binds[i] {
            continue;
        }
        for later in stmts.iter_mut().skip(i + 1) {
            later.0 = substituted(f, &later.0, var, value)?;
        }
    }
    for ((stmt, span), bind) in stmts.into_iter().zip(&binds) {
        if !bind {
            body.push(stmt, span);
        }
    }
    Ok(binds)
}

/// `stmt` with `var` replaced by `with` in every expression it holds
/// (binders kept: the copy replaces the original).
pub fn substituted(
    f: &mut Function,
    stmt: &Stmt,
    var: Handle<crate::ir::Var>,
    with: Handle<Expr>,
) -> Result<Stmt, crate::ir::TypeError> {
    let mut block = Block::new();
    block.push(stmt.clone(), Default::default());
    let mut failed = None;
    for_each_expr_mut(&mut block, &mut |h| match substitute(f, *h, var, with) {
        Ok(e) => *h = e,
        Err(e) => failed = Some(e),
    });
    match (failed, block.stmts.pop()) {
        (Some(e), _) => Err(e),
        (None, Some(s)) => Ok(s),
        (None, None) => Ok(stmt.clone()),
    }
}

/// `e` with `var` replaced by `with` (shared subexpressions without it
/// are kept).
pub fn substitute(
    f: &mut Function,
    e: Handle<Expr>,
    var: Handle<crate::ir::Var>,
    with: Handle<Expr>,
) -> Result<Handle<Expr>, crate::ir::TypeError> {
    let sub = |f: &mut Function, x| substitute(f, x, var, with);
    let new = match f.exprs[e].clone() {
        Expr::Literal(_) => return Ok(e),
        Expr::Var(v) => return Ok(if v == var { with } else { e }),
        Expr::Unary { op, arg } => Expr::Unary {
            op,
            arg: sub(f, arg)?,
        },
        Expr::Binary { op, lhs, rhs } => Expr::Binary {
            op,
            lhs: sub(f, lhs)?,
            rhs: sub(f, rhs)?,
        },
        Expr::Select {
            cond,
            then,
            otherwise,
        } => Expr::Select {
            cond: sub(f, cond)?,
            then: sub(f, then)?,
            otherwise: sub(f, otherwise)?,
        },
        Expr::Cast { dtype, arg } => Expr::Cast {
            dtype,
            arg: sub(f, arg)?,
        },
        Expr::Bitcast { dtype, arg } => Expr::Bitcast {
            dtype,
            arg: sub(f, arg)?,
        },
        Expr::Load { buffer, indices } => Expr::Load {
            buffer,
            indices: indices
                .into_iter()
                .map(|i| sub(f, i))
                .collect::<Result<_, _>>()?,
        },
    };
    if new == f.exprs[e] {
        return Ok(e);
    }
    f.add_expr(new)
}

/// Calls `visit` on every expression handle held by the statements of
/// `block`, recursively: conditions, bounds, indices, values, region starts
/// and extents, grid extents and `alloc` initializers. Buffer shapes live in
/// the buffer arena and are not visited.
pub fn for_each_expr_mut(block: &mut Block, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    for stmt in &mut block.stmts {
        stmt_exprs_mut(stmt, visit);
    }
}

fn region_exprs_mut(region: &mut Region, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    for range in &mut region.ranges {
        visit(&mut range.start);
        visit(&mut range.extent);
    }
}

fn stmt_exprs_mut(stmt: &mut Stmt, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    match stmt {
        Stmt::Kernel { grid, body, .. } => {
            grid.iter_mut().for_each(&mut *visit);
            for_each_expr_mut(body, visit);
        }
        Stmt::Alloc { init, .. } => {
            if let Some(init) = init {
                visit(init);
            }
        }
        Stmt::For {
            start,
            extent,
            body,
            ..
        } => {
            visit(start);
            visit(extent);
            for_each_expr_mut(body, visit);
        }
        Stmt::Parallel { extents, body, .. } => {
            extents.iter_mut().for_each(&mut *visit);
            for_each_expr_mut(body, visit);
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            visit(cond);
            for_each_expr_mut(then, visit);
            for_each_expr_mut(otherwise, visit);
        }
        Stmt::Let { value, .. } => visit(value),
        Stmt::Store { indices, value, .. } => {
            indices.iter_mut().for_each(&mut *visit);
            visit(value);
        }
        Stmt::Copy { src, dst } => {
            region_exprs_mut(src, visit);
            region_exprs_mut(dst, visit);
        }
        Stmt::Gemm {
            a,
            b,
            c,
            clear_accum,
            ..
        } => {
            region_exprs_mut(a, visit);
            region_exprs_mut(b, visit);
            region_exprs_mut(c, visit);
            visit(clear_accum);
        }
        Stmt::Fill { dst, value } => {
            region_exprs_mut(dst, visit);
            visit(value);
        }
        Stmt::AtomicAdd { dst, value } => {
            region_exprs_mut(dst, visit);
            match value {
                AtomicValue::Scalar(e) => visit(e),
                AtomicValue::Region(r) => region_exprs_mut(r, visit),
            }
        }
        Stmt::Assume { cond } => visit(cond),
        Stmt::Reduce { .. } | Stmt::Cumsum { .. } | Stmt::Barrier | Stmt::AllocBarrier { .. } => {}
        Stmt::Role { body, .. } => for_each_expr_mut(body, visit),
        Stmt::BarrierArrive { index, .. } => visit(index),
        Stmt::BarrierWait { index, parity, .. } => {
            visit(index);
            visit(parity);
        }
    }
}

/// The operands of an expression, in order.
pub fn expr_operands(expr: &Expr) -> Vec<Handle<Expr>> {
    match expr {
        Expr::Literal(_) | Expr::Var(_) => Vec::new(),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => vec![*arg],
        Expr::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        Expr::Select {
            cond,
            then,
            otherwise,
        } => vec![*cond, *then, *otherwise],
        Expr::Load { indices, .. } => indices.clone(),
    }
}

fn map_operands(expr: &mut Expr, map: &dyn Fn(Handle<Expr>) -> Handle<Expr>) {
    match expr {
        Expr::Literal(_) | Expr::Var(_) => {}
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => {
            *arg = map(*arg)
        }
        Expr::Binary { lhs, rhs, .. } => {
            *lhs = map(*lhs);
            *rhs = map(*rhs);
        }
        Expr::Select {
            cond,
            then,
            otherwise,
        } => {
            *cond = map(*cond);
            *then = map(*then);
            *otherwise = map(*otherwise);
        }
        Expr::Load { indices, .. } => {
            for i in indices {
                *i = map(*i);
            }
        }
    }
}

/// Removes the expressions that no statement and no buffer shape reaches,
/// keeping the order of the others (so operands still precede their users)
/// and their recorded types. Handles that point outside the arena are left
/// as they are, for the verifier to report.
pub fn compact_exprs(f: &mut Function) {
    let count = f.exprs.len();
    if f.expr_types.len() != count {
        return;
    }
    let mut live = vec![false; count];
    let mut roots: Vec<Handle<Expr>> = Vec::new();
    for (_, buffer) in f.buffers.iter() {
        roots.extend(buffer.shape.iter().copied());
    }
    for_each_expr_mut(&mut f.body, &mut |h| roots.push(*h));
    while let Some(h) = roots.pop() {
        let Some(expr) = f.exprs.try_get(h) else {
            continue;
        };
        if std::mem::replace(&mut live[h.index()], true) {
            continue;
        }
        roots.extend(expr_operands(expr));
    }
    if live.iter().all(|&l| l) {
        return;
    }
    let mut new_index: Vec<Option<Handle<Expr>>> = vec![None; count];
    let mut next = 0;
    for (i, &l) in live.iter().enumerate() {
        if l {
            new_index[i] = Some(Handle::from_index(next));
            next += 1;
        }
    }
    let map = |h: Handle<Expr>| new_index.get(h.index()).copied().flatten().unwrap_or(h);
    let old_exprs = std::mem::take(&mut f.exprs);
    let old_types = std::mem::take(&mut f.expr_types);
    for ((h, expr), ty) in old_exprs.iter().zip(old_types) {
        if live[h.index()] {
            let mut expr = expr.clone();
            map_operands(&mut expr, &map);
            f.exprs.append(expr);
            f.expr_types.push(ty);
        }
    }
    let buffers: Vec<_> = f.buffers.iter().map(|(h, _)| h).collect();
    for b in buffers {
        for e in &mut f.buffers[b].shape {
            *e = map(*e);
        }
    }
    for_each_expr_mut(&mut f.body, &mut |h| *h = map(*h));
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
