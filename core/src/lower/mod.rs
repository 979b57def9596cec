//! The lowering from Tile IR to thread-level IR ("through memory"):
//! correct on every SIMT target, with `gemm` on the target's matrix atoms
//! and copies in vector moves where they provably fit, and the starting
//! point that later lowerings (layout inference, pipelining) replace piece
//! by piece. `docs/lowering.md` describes it for users. The submodules
//! hold the parts with their own algorithms, described at their tops:
//! `gemm.rs` (matrix atoms, and the scalar fallback), `infer.rs` and
//! `resident.rs` (layout inference: fragments in registers in a matrix
//! atom's layout), `spread.rs` (element-wise fragment
//! buffers in registers), `reduce.rs` (reductions by thread groups),
//! `pipeline.rs` (`T.Pipelined` loops with async copies), `prefetch.rs`
//! (fragment loads moved across a pipelined loop's barrier), `copy.rs`
//! (vector moves for `copy` and `fill`) and `hoist.rs` (loop-invariant
//! index arithmetic computed before the loop, run on every lowered
//! kernel).
//!
//! # Algorithm
//! [`to_thread`] turns every `kernel` statement of every function into one
//! thread-level kernel (named after the function, with `_<n>` appended when
//! the function launches several kernels). The kernel's parameters are the
//! function's global buffers, in order, followed by one `i32` scalar per
//! symbolic size; its grid and thread count are the Tile IR kernel's. Block
//! variables read `block_idx_x/y/z`, the thread variable reads `thread_idx`.
//!
//! **Storage.** Every non-global buffer (shared, fragment, local, var)
//! becomes a shared-memory buffer of the same element type and element
//! count (row-major, alignment 16), except the buffers that layout
//! inference (`infer.rs`) keeps in registers (in a gemm plan's layout) and
//! the element-wise fragments that `spread.rs` keeps in registers (in the
//! vector copies' layout). A Tile IR kernel body describes what the block
//! does as a whole (the reference interpreter runs it once per block), so
//! block-level values stay block-level. Non-global buffers must have
//! constant shapes.
//!
//! **Uniform code.** Statements outside `parallel` nests (`let`, `for`,
//! `if`, scalar stores) run on every thread with identical values: a `let`
//! becomes a register assigned by every thread, loads are done by every
//! thread. A scalar *store* from uniform code is done by thread 0 only
//! (`if thread_idx == 0`). Every `for` kind becomes a plain `for` (step
//! 1), except `T.Pipelined` loops that `pipeline.rs` pipelines; `assume` emits nothing, but `assume x % c == 0` (and conjunctions
//! of such) at the top level of the function or kernel body is a fact
//! that vector alignment proofs use. Code that reads the thread variable
//! outside a `parallel` nest runs per thread: a store whose index or value
//! reads it is made by every thread, and an `if` on it is a thread-guarded
//! region (`guard.rs`: its tile operations are spread over the threads that
//! pass the condition, its barriers placed before the `if`).
//!
//! **Cooperative statements** distribute their elements cyclically over
//! the block's `T` threads: for an iteration space of `P` elements, thread
//! `t` runs `p = t, t + T, …` (`for %p from thread_idx count ceil(P / T)
//! step T`, guarded by `if %p < P` unless `T` divides `P`), and recomputes
//! the multi-dimensional indices from `p` (row-major). Each element is
//! owned by exactly one thread:
//! - `parallel`: the flattened nest; the body runs per iteration
//!   (per-thread code: `let`s become registers, nested `for`/`if`/
//!   `parallel` run serially in the thread, `atomic_add` of a global
//!   region runs per element);
//! - `copy`: element `k` of the source region (row-major) moves to element
//!   `k` of the destination region, converted by a cast; where alignment
//!   and bounds are provable, `w` contiguous elements per thread and step
//!   (vectors of up to 16 bytes, consecutive threads on consecutive
//!   vectors; see `copy.rs`);
//! - `fill` (and an `alloc` with an initial value): one store per element,
//!   or per vector as for `copy`;
//! - `reduce`: each thread owns output elements and folds the reduced
//!   dimension in an `f64` register (floats; `i64` for integer reductions),
//!   starting from the identity or the old value, rounding once — the
//!   interpreter's arithmetic, bit for bit;
//! - `cumsum`: each thread owns a line along `dim` and keeps the running
//!   sum in `f64` (`i64`), rounding every output element;
//! - `gemm`: through a matrix atom of the target when one is usable (see
//!   `gemm.rs`): the issuing groups (warps, wavefronts) split the atom
//!   tiles of C by the gemm's warp policy, keep their C fragments in
//!   registers across the k loop and round once per atom. Otherwise the
//!   scalar baseline: each thread owns elements of C and accumulates
//!   `Σ_k a·b` in an `f64` register in increasing `k`, then adds the old C
//!   (unless `clear_accum`), then rounds once into C's type;
//! - `atomic_add`: one `atomic_add` per destination element.
//!
//! **Out of bounds.** A global access (scalar or region element) that is
//! not provably inside its buffer is guarded: loads read zero (`when c
//! else zero`), stores and atomics are skipped. Region elements outside an
//! on-chip buffer are treated the same way (the interpreter's rule for tile
//! ops). A scalar load or store of an on-chip buffer that the lowering
//! cannot prove in bounds is guarded as well, so where the interpreter
//! reports an out-of-bounds error the lowered code reads zero / skips.
//! Provability comes from a small interval analysis (literals, loop and
//! `parallel` variables with constant bounds, block indices of constant
//! grids, `let`s, `+ - *`, `//` and `%` by positive constants, min/max).
//!
//! **Barriers.** The lowering tracks, per buffer, the shared-memory reads
//! and writes made since the last barrier, and the global ones (atomic
//! adds apart: they commute with each other). Before a statement (or, inside
//! uniform code, before the store part of a statement) that reads a buffer
//! with pending writes, or writes a buffer with pending reads or writes, it
//! emits a `barrier`. A `for` body starts with its own accesses counted as
//! pending (the previous iteration's), an `if` joins its branches.
//! Buffers kept in registers are per-thread and never enter these sets. Explicit
//! `barrier`s stay and clear the state. Element ownership inside one
//! cooperative statement is by construction race-free for valid Tile IR
//! (`parallel` iterations must be independent).
//!
//! **Indices** are computed in `i32`; wider index expressions are cast.
//!
//! Not supported yet ([`LowerError::Unsupported`]): global allocations
//! (`T.empty` scratch) and nested kernels, non-global buffers of symbolic
//! shape, tile ops other than `atomic_add` inside `parallel`, `barrier` and
//! `alloc` inside `parallel`, reading the thread variable outside
//! `parallel`, `atomic_add` into non-global buffers, tile-op regions of
//! symbolic extent other than a `fill`'s (an extent that is a constant
//! through the kernel's binds, `H0:H1` with `H1 = H0 + 64`, is taken as
//! that constant, `extent.rs`; a `fill` of a region whose extents are
//! known only at run time runs a loop of run-time count over the block's
//! threads), `copy`/`gemm` whose source and destination are the same
//! buffer (other than an identical region), integer `max`/`min`/`absmax`
//! reductions involving `u64`.
//!
//! **Shared memory reuse.** When a kernel's buffers do not fit the
//! target's shared memory, it is lowered again letting a buffer live in
//! the memory of another that it is never live with (live intervals as
//! `plan-shared-memory` numbers them, uses in a loop spanning the loop,
//! an `alloc` without a value no use): the *host* is allocated earlier,
//! has the same element type and at least as many elements, and neither
//! it nor a buffer already in it meets the guest's interval. Stage
//! buffers and swizzled buffers (which the async proxy writes and reads)
//! only host buffers whose interval starts after theirs ends, and are
//! never guests. A guest's accesses go to the host's memory from its
//! start and count as the host's for the barrier analysis, so the
//! barrier before the guest's first write orders it after the host's
//! last reads. (Attention with 128 × 128 tiles and three stages fits
//! sm_90a this way: the epilogue's staging buffer takes the first K
//! stages' memory.)
//!
//! A kernel whose buffers do not fit the target's shared memory even so
//! is `Unsupported` too (fragments other than register-resident
//! accumulators live in shared memory here).
//!
//! After lowering, [`to_thread`] runs [`thread::verify_module`]; a failure
//! is an internal error ([`LowerError::Internal`]) naming the line of the
//! printed thread IR.

mod choices;
mod copy;
mod epilogue;
mod extent;
mod gemm;
mod guard;
mod hoist;
mod infer;
mod ldmatrix;
mod mapped;
mod pad;
mod pipeline;
mod prefetch;
mod private;
mod raster;
mod reduce;
mod resident;
mod roles;
mod rotate;
mod split;
mod spread;
mod swizzle;
mod tma;
mod warp;
mod ws;

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::ir::{
    self, AtomicValue, BinaryOp, DType, Handle, Literal, ReduceKind, Region, Scope, Span, UnaryOp,
    VarKind,
};
use crate::target::TargetDescription;
use crate::thread::{
    self, Dim, Expr, ExprKind, GlobalBuffer, Guard, GuardElse, MemRef, Param, ParamId, RegId,
    RegRef, Register, RegisterKind, SharedBuffer, SharedId, Special, Stmt, StmtKind, Unroll,
};
use crate::verify::AccessSite;

pub use choices::KernelChoices;
use choices::Pins;

/// Alignment in bytes of every shared buffer the lowering creates.
pub const SHARED_ALIGN: u32 = 16;

/// Most iterations per thread [`Lower::cyclic_unrolled`] writes out.
const MAX_UNROLLED_CYCLES: i64 = 16;

/// Why a module could not be lowered.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LowerError {
    /// A construct the baseline lowering does not handle yet.
    #[error("cannot lower {what}: not supported by the baseline lowering")]
    Unsupported { what: String, span: Span },
    /// A layout or schedule annotation of the IR (a pin, `choices.rs`)
    /// that the lowering cannot realize.
    #[error("{message}")]
    Pin { message: String, span: Span },
    /// The Tile IR breaks an invariant the lowering relies on.
    #[error("malformed Tile IR: {detail}")]
    Malformed { detail: String, span: Span },
    /// The lowering produced thread IR its verifier rejects: a bug here.
    #[error(
        "internal error: lowered kernel `{kernel}` fails thread-IR verification at line {line} of its text: {message}"
    )]
    Internal {
        kernel: String,
        /// 1-based line in [`thread::print_module`]'s text (0 if unknown).
        line: u32,
        message: String,
        span: Span,
    },
}

impl LowerError {
    /// The span of the Tile IR statement involved (unknown for internal
    /// errors found after lowering).
    pub fn span(&self) -> Span {
        match self {
            LowerError::Unsupported { span, .. }
            | LowerError::Pin { span, .. }
            | LowerError::Malformed { span, .. }
            | LowerError::Internal { span, .. } => *span,
        }
    }
}

type Result<T> = std::result::Result<T, LowerError>;

/// What the lowering may rely on beyond the Tile IR itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Per function of the module (by position): the accesses proved in
    /// bounds ([`crate::verify::proved_sites`]). Their bounds guards are
    /// left out.
    pub proved: Vec<HashSet<AccessSite>>,
}

/// The key of a compile request's extra options under which a host passes
/// [`LowerOptions::proved`] to a backend plugin, encoded by
/// [`LowerOptions::encode_proved`] (`docs/plugin-abi.md`).
pub const PROVED_SITES_OPTION: &str = "tilec.proved-sites";

/// A [`PROVED_SITES_OPTION`] value that does not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed `{PROVED_SITES_OPTION}` option: {0}")]
pub struct ProvedSitesError(String);

impl LowerOptions {
    /// [`LowerOptions::proved`] as JSON: per function, its sites in one
    /// canonical order (so equal sets encode equally).
    pub fn encode_proved(&self) -> String {
        let per_function: Vec<Vec<AccessSite>> = self
            .proved
            .iter()
            .map(|sites| {
                let mut keyed: Vec<(String, AccessSite)> = sites
                    .iter()
                    .map(|s| (serde_json::to_string(s).unwrap_or_default(), *s))
                    .collect();
                keyed.sort_by(|a, b| a.0.cmp(&b.0));
                keyed.into_iter().map(|(_, s)| s).collect()
            })
            .collect();
        serde_json::to_string(&per_function).unwrap_or_else(|_| "[]".to_string())
    }

    /// The inverse of [`LowerOptions::encode_proved`]. Sites naming
    /// statements or expressions the module does not have are harmless:
    /// the lowering never meets them.
    pub fn decode_proved(text: &str) -> std::result::Result<LowerOptions, ProvedSitesError> {
        let per_function: Vec<Vec<AccessSite>> =
            serde_json::from_str(text).map_err(|e| ProvedSitesError(e.to_string()))?;
        Ok(LowerOptions {
            proved: per_function
                .into_iter()
                .map(|sites| sites.into_iter().collect())
                .collect(),
        })
    }
}

/// Lowers every kernel of `module` to thread-level IR for `target`, and
/// verifies the result.
pub fn to_thread(module: &ir::Module, target: &TargetDescription) -> Result<thread::Module> {
    to_thread_with(module, target, &LowerOptions::default())
}

/// [`to_thread`], with facts from [`LowerOptions`].
pub fn to_thread_with(
    module: &ir::Module,
    target: &TargetDescription,
    options: &LowerOptions,
) -> Result<thread::Module> {
    lower_module(module, target, options)
}

/// Lowers the kernels of `func` as [`to_thread`] does and returns what
/// the lowering chose for each, in order (`choices.rs`). Annotations
/// already in the IR are kept (they pin those choices). The passes
/// `infer-layouts`, `inject-pipeline` and `warp-specialize` record these
/// in the IR.
pub fn kernel_choices(
    func: &ir::Function,
    target: &TargetDescription,
) -> Result<Vec<KernelChoices>> {
    lower_function(func, target, None, None)
}

fn lower_module(
    module: &ir::Module,
    target: &TargetDescription,
    options: &LowerOptions,
) -> Result<thread::Module> {
    let mut out = thread::Module::default();
    for (index, func) in module.functions.iter().enumerate() {
        lower_function(func, target, options.proved.get(index), Some(&mut out))?;
    }
    check(&out, target)?;
    Ok(out)
}

/// Lowers every kernel of `func` into `out`, returning the choices made;
/// without `out`, only the choices are wanted (the kernels are not
/// finished with `hoist.rs`).
fn lower_function(
    func: &ir::Function,
    target: &TargetDescription,
    proved: Option<&HashSet<AccessSite>>,
    mut out: Option<&mut thread::Module>,
) -> Result<Vec<KernelChoices>> {
    // Scalar binds between kernels (`splitK = K // split_k` before
    // `T.Kernel`) that read no buffer are replayed inside the kernels
    // that use them; a bind that reads memory stays and is refused below.
    let pure_binds: Vec<bool> = func
        .body
        .stmts
        .iter()
        .map(|s| match s {
            ir::Stmt::Let { value, .. } => {
                let mut reads = BTreeSet::new();
                ir::lists::expr_loads(func, *value, &mut reads);
                reads.is_empty()
            }
            _ => false,
        })
        .collect();
    let replayed;
    let func = if pure_binds.contains(&true) {
        let mut f = func.clone();
        let mut body = std::mem::take(&mut f.body);
        crate::passes::replay_binds_where(&mut f, &mut body, pure_binds)
            .map_err(|e| malformed(format!("replaying a scalar bind: {e}"), Span::UNKNOWN))?;
        f.body = body;
        replayed = f;
        &replayed
    } else {
        func
    };
    let mut per_kernel = Vec::new();
    let kernels = func
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s, ir::Stmt::Kernel { .. }))
        .count();
    let mut n = 0usize;
    for (stmt, span) in func.body.iter() {
        match stmt {
            ir::Stmt::Kernel { .. } => {
                let name = if kernels == 1 {
                    func.name.clone()
                } else {
                    format!("{}_{n}", func.name)
                };
                n += 1;
                let finish = out.is_some();
                // A block split by hand into whole warp groups is lowered
                // as roles (`split.rs`), else as thread-guarded regions.
                let split = target
                    .named_barriers()
                    .and_then(|_| split::guards_as_roles(func, stmt));
                let as_roles = split.as_ref().and_then(|split| {
                    match lower_kernel(func, target, proved, split, span, name.clone(), finish) {
                        Err(LowerError::Unsupported { .. }) => None,
                        lowered => Some(lowered),
                    }
                });
                let (kernel, choices) = match as_roles {
                    Some(lowered) => lowered?,
                    None => lower_kernel(func, target, proved, stmt, span, name, finish)?,
                };
                if let Some(out) = out.as_deref_mut() {
                    out.kernels.push(kernel);
                }
                per_kernel.push(choices);
            }
            // A global scratch buffer of the function: every kernel takes
            // it as a parameter after the function's own, and hosts
            // allocate it (zeroed) for the launch (docs/plugin-abi.md).
            ir::Stmt::Alloc { buffer, .. } if func.buffers[*buffer].scope == Scope::Global => {}
            ir::Stmt::Alloc { .. } => {
                return Err(unsupported(
                    "an on-chip allocation outside the kernel (move it into the `T.Kernel` body)",
                    span,
                ));
            }
            ir::Stmt::Assume { .. } => {}
            _ => {
                return Err(unsupported("a statement outside a kernel", span));
            }
        }
    }
    Ok(per_kernel)
}

/// The global scratch buffers `func` allocates at function level
/// (`T.alloc_global` beside its kernels), in order: each kernel takes them
/// as parameters after the function's own.
pub fn scratch_buffers(func: &ir::Function) -> impl Iterator<Item = Handle<ir::Buffer>> + '_ {
    func.body.stmts.iter().filter_map(|s| match s {
        ir::Stmt::Alloc { buffer, .. } if func.buffers[*buffer].scope == Scope::Global => {
            Some(*buffer)
        }
        _ => None,
    })
}

/// Lowers one kernel, keeping the fragment buffers `resident.rs` and
/// `spread.rs` pick in registers, padding the rows `pad.rs` picks and
/// pipelining the loops `pipeline.rs` picks. When an attempt's shared
/// buffers exceed the target's shared memory, the kernel is lowered again
/// with buffers sharing memory where their live ranges allow (module
/// documentation, "Shared memory reuse"); when that does not fit either
/// while a loop has more than two stages, with one stage fewer (nothing
/// else changes). When an attempt fails while
/// some buffer is padded, the kernel is lowered again without padding;
/// when it fails while some loop is pipelined (its stages may not fit the
/// shared memory), again without pipelining; when it fails while the
/// gemms go through a shared-operand atom (`swizzle.rs`), again without
/// it; when it fails while gemm operands of register atoms are swizzled
/// (`swizzle.rs`), again with padded rows. When an attempt meets a use of
/// a register buffer that the register path cannot take (or fails for
/// any other reason while some buffer is in registers), the kernel is
/// lowered again with that buffer (or every such buffer) in shared
/// memory, so that everything the through-memory lowering accepts still
/// lowers. A kernel whose gemm results are staged through shared memory
/// (`epilogue.rs`) gives the staging up when it does not fit after
/// reuse, and when nothing else is left to give up. Each retry removes a
/// knob or at least one buffer, so this ends.
fn lower_kernel(
    func: &ir::Function,
    target: &TargetDescription,
    proved: Option<&HashSet<AccessSite>>,
    stmt: &ir::Stmt,
    span: Span,
    name: String,
    finish: bool,
) -> Result<(thread::Kernel, KernelChoices)> {
    let body = match stmt {
        ir::Stmt::Kernel { body, .. } => body,
        _ => return Err(malformed("not a kernel", span)),
    };
    let pins = Pins::of(func, body);
    // Buffers pinned to shared memory never go to registers.
    let pinned_shared: HashSet<Handle<ir::Buffer>> = pins
        .layouts
        .iter()
        .filter(|(_, l)| !l.in_registers())
        .map(|(&b, _)| b)
        .collect();
    let mut excluded = pinned_shared.clone();
    // Buffers a lowering attempt could not keep in registers.
    let mut failed: HashSet<Handle<ir::Buffer>> = HashSet::new();
    let mut pipelining = true;
    let mut padding = true;
    let mut mma_swizzle = true;
    let mut mma_swizzle_pins = true;
    let mut async_mma = true;
    let mut stage_cap = None;
    let mut specialize = pins.specialized() != Some(false);
    let mut reuse = false;
    let mut spill = false;
    // Region extents that are constants through the kernel's binds
    // (`extent.rs`), as literals.
    let folded = extent::fold_extents(func, stmt);
    let (func, stmt) = match &folded {
        Some((f, s)) => (f, s),
        None => (func, stmt),
    };
    // Loops rotated as their lists ask (`rotate.rs`): the kernel as
    // rewritten, with the same buffers and loop variables.
    let rotated = rotate::rotate_loops(func, stmt);
    let (func, stmt) = match &rotated {
        Some((f, s, _)) => (f, s),
        None => (func, stmt),
    };
    // Gemm results staged through shared memory (`epilogue.rs`): the
    // kernel as rewritten, used while `staging` holds.
    let staged = epilogue::stage_epilogues(func, stmt, target);
    let mut staging = staged.is_some();
    loop {
        let (f, kernel_stmt) = match &staged {
            Some((f, s)) if staging => (f, s),
            _ => (func, stmt),
        };
        let mut attempt = Lower::new(f, target);
        attempt.pins = pins.clone();
        attempt.reuse = reuse;
        attempt.spill = spill;
        attempt.specialize = specialize;
        attempt.proved = proved;
        attempt.excluded = excluded.clone();
        attempt.pipelining = pipelining;
        attempt.padding = padding;
        attempt.mma_swizzle = mma_swizzle;
        attempt.mma_swizzle_pins = mma_swizzle_pins;
        attempt.async_allowed = async_mma;
        attempt.stage_cap = stage_cap;
        if let Some((_, _, peels)) = &rotated {
            attempt.peels = peels.clone();
        }
        let err = match attempt.kernel(kernel_stmt, span, name.clone()) {
            Ok(mut kernel) => {
                if finish {
                    hoist::run(&mut kernel);
                }
                return Ok((kernel, attempt.choices(body)));
            }
            Err(e) => e,
        };
        // A producer warp that could not be split off: without one (unless
        // pinned).
        if attempt.ws_failed && pins.specialized().is_none() {
            specialize = false;
            continue;
        }
        let free_loop = |v: &Handle<ir::Var>| pins.schedule(*v).is_none();
        let free_buffer = |b: &&Handle<ir::Buffer>| !pins.buffer(**b);
        // Shared memory that does not fit: first let buffers share the
        // memory of buffers they are never live with.
        if attempt.over_capacity && !reuse {
            reuse = true;
            continue;
        }
        // Then without the staged epilogue (its buffer only adds memory).
        if attempt.over_capacity && staging {
            staging = false;
            continue;
        }
        // Stages that do not fit the shared memory: fewer of them first,
        // keeping everything else.
        let most = attempt
            .pipelines
            .iter()
            .filter(|(v, _)| free_loop(v))
            .map(|(_, p)| p.stages)
            .max();
        if attempt.over_capacity
            && let Some(most) = most.filter(|&m| m > 2)
        {
            stage_cap = Some(most - 1);
            continue;
        }
        // Swizzled buffers and the shared-operand atom are a choice for
        // the whole kernel: without them, the register-fragment atoms
        // (buffers pinned to a swizzle keep it, `swizzle.rs`, "Pinned
        // layouts").
        if async_mma && attempt.async_atom.is_some() {
            async_mma = false;
            continue;
        }
        // Swizzled operands of register atoms need the matrix-load plans
        // `ldmatrix.rs` finds for them: without them, padded rows for the
        // unpinned buffers first, then per-lane loads through the layout
        // for the pinned ones.
        if mma_swizzle && attempt.mma_swizzled.iter().any(|b| free_buffer(&b)) {
            mma_swizzle = false;
            continue;
        }
        if mma_swizzle_pins && !attempt.mma_swizzled.is_empty() {
            mma_swizzle_pins = false;
            continue;
        }
        // Padding and stages take shared memory: without them the kernel
        // may fit.
        if padding && attempt.pitch.keys().any(|b| free_buffer(&b)) {
            padding = false;
            continue;
        }
        if pipelining && attempt.pipelines.keys().any(free_loop) {
            pipelining = false;
            continue;
        }
        match attempt.demoted {
            Some(b) if !pins.buffer(b) && excluded.insert(b) => {
                failed.insert(b);
            }
            _ => {
                let before = excluded.len();
                excluded.extend(attempt.resident.keys().filter(free_buffer));
                excluded.extend(attempt.spread.keys().filter(free_buffer));
                if excluded.len() == before {
                    // Nothing else to give up: the staged epilogue, then
                    // large element-wise fragments out of shared memory
                    // into per-thread arrays (spilled by the backend), as
                    // TileLang keeps every fragment in registers.
                    if staging {
                        staging = false;
                        continue;
                    }
                    if attempt.over_capacity && !spill {
                        spill = true;
                        excluded = pinned_shared.union(&failed).copied().collect();
                        continue;
                    }
                    return Err(err);
                }
            }
        }
    }
}

/// Verifies the lowered module; on failure, re-reads its text so that the
/// error can name a line.
fn check(module: &thread::Module, target: &TargetDescription) -> Result<()> {
    let Err(err) = thread::verify_module(module, target) else {
        return Ok(());
    };
    let text = thread::print_module(module);
    let line = match thread::parse_module(&text) {
        Ok(parsed) => match thread::verify_module(&parsed, target) {
            Err(e) if !e.span.is_unknown() => thread::line_of(&text, e.span.start),
            _ => 0,
        },
        Err(e) => e.line,
    };
    Err(LowerError::Internal {
        kernel: err.kernel.clone(),
        line,
        message: err.to_string(),
        span: Span::UNKNOWN,
    })
}

fn unsupported(what: impl Into<String>, span: Span) -> LowerError {
    LowerError::Unsupported {
        what: what.into(),
        span,
    }
}

fn malformed(detail: impl Into<String>, span: Span) -> LowerError {
    LowerError::Malformed {
        detail: detail.into(),
        span,
    }
}

/// Calls `visit` with the buffer of every load in expression `e` (the
/// expression tree walked with an explicit stack).
fn for_each_load(f: &ir::Function, e: Handle<ir::Expr>, mut visit: impl FnMut(Handle<ir::Buffer>)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let Some(node) = f.exprs.try_get(e) else {
            continue;
        };
        if let ir::Expr::Load { buffer, .. } = node {
            visit(*buffer);
        }
        stack.extend(node.operands());
    }
}

/// Visits every buffer a `parallel` nest's body stores to or loads from
/// in its statements' expressions (not in tile statements' regions).
fn visit_nest_buffers(
    f: &ir::Function,
    body: &ir::Block,
    mut visit: impl FnMut(Handle<ir::Buffer>),
) {
    let mut stack: Vec<&ir::Block> = vec![body];
    while let Some(block) = stack.pop() {
        for stmt in &block.stmts {
            match stmt {
                ir::Stmt::Store { buffer, value, .. } => {
                    visit(*buffer);
                    for_each_load(f, *value, &mut visit);
                }
                ir::Stmt::Let { value, .. } => for_each_load(f, *value, &mut visit),
                ir::Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    for_each_load(f, *cond, &mut visit);
                    stack.push(then);
                    stack.push(otherwise);
                }
                ir::Stmt::For { body, .. }
                | ir::Stmt::Parallel { body, .. }
                | ir::Stmt::Role { body, .. } => {
                    stack.push(body);
                }
                ir::Stmt::AtomicAdd {
                    value: AtomicValue::Scalar(e),
                    ..
                }
                | ir::Stmt::Atomic {
                    value: AtomicValue::Scalar(e),
                    ..
                } => for_each_load(f, *e, &mut visit),
                _ => {}
            }
        }
    }
}

/// Where a Tile IR buffer lives after lowering.
#[derive(Clone, Debug)]
enum Mem {
    Global {
        param: ParamId,
        /// Extents as `i32` expressions (literals or scalar parameters).
        dims: Vec<Expr>,
        /// A number each extent is known to be a multiple of (0: the
        /// extent is 0); see [`Lower::multiple`].
        mults: Vec<i64>,
    },
    Shared {
        id: SharedId,
        dims: Vec<i64>,
    },
}

/// Shared-memory accesses (by Tile IR buffer index) since the last barrier.
#[derive(Clone, Debug, Default, PartialEq)]
struct Pending {
    reads: BTreeSet<usize>,
    writes: BTreeSet<usize>,
    /// Global buffers, kept apart: a block's threads also need a barrier
    /// between a store to global memory and another thread's access to
    /// the same buffer (thread 0's `B[0] = x` before every thread's
    /// `atomic_add(B[0], ...)`). Atomic adds commute with each other and
    /// need no barrier between them.
    global_reads: BTreeSet<usize>,
    global_writes: BTreeSet<usize>,
    global_atomics: BTreeSet<usize>,
}

impl Pending {
    fn union(&mut self, other: &Pending) {
        self.reads.extend(other.reads.iter().copied());
        self.writes.extend(other.writes.iter().copied());
        self.global_reads.extend(other.global_reads.iter().copied());
        self.global_writes
            .extend(other.global_writes.iter().copied());
        self.global_atomics
            .extend(other.global_atomics.iter().copied());
    }

    /// Whether `later` must wait at a barrier for `self` (pending).
    fn conflicts(&self, later: &Pending) -> bool {
        let on_chip = later
            .reads
            .iter()
            .chain(&later.writes)
            .any(|b| self.writes.contains(b))
            || later.writes.iter().any(|b| self.reads.contains(b));
        let global = later
            .global_reads
            .iter()
            .chain(&later.global_writes)
            .chain(&later.global_atomics)
            .any(|b| self.global_writes.contains(b))
            || later
                .global_writes
                .iter()
                .any(|b| self.global_reads.contains(b) || self.global_atomics.contains(b))
            || later
                .global_reads
                .iter()
                .any(|b| self.global_atomics.contains(b));
        on_chip || global
    }
}

/// An index expression with the interval it is known to lie in.
#[derive(Clone, Debug)]
struct Index {
    expr: Expr,
    range: Option<(i64, i64)>,
}

struct Lower<'a> {
    f: &'a ir::Function,
    target: &'a TargetDescription,
    threads: i64,
    params: Vec<Param>,
    shared: Vec<SharedBuffer>,
    /// Tensor maps of the kernel being lowered (`tma_load`).
    tensor_maps: Vec<thread::TensorMap>,
    registers: Vec<Register>,
    names: HashSet<String>,
    /// Names of the function, reserved so temporaries never take them.
    reserved: HashSet<String>,
    counter: u32,
    vars: HashMap<Handle<ir::Var>, Expr>,
    ranges: HashMap<Handle<ir::Var>, (i64, i64)>,
    /// Divisibility facts: every value of the variable is a multiple of
    /// this (lets from their values, symbols from `assume`s).
    mults: HashMap<Handle<ir::Var>, i64>,
    mems: HashMap<Handle<ir::Buffer>, Mem>,
    symbols: HashMap<Handle<ir::Var>, ParamId>,
    pending: Pending,
    /// Depth of loops whose bounds read the thread index: their bodies are
    /// per-thread code, where no barrier may be placed, so global accesses
    /// there are left out of the barrier sets (each thread's own program
    /// order is what TileLang gives them too).
    tdep_loops: u32,
    span: Span,
    /// Fragment buffers kept in registers (`resident.rs`), with their
    /// accumulator plan and register array.
    resident: HashMap<Handle<ir::Buffer>, resident::ResidentBuf<'a>>,
    /// Buffers that must stay in shared memory (a previous attempt found
    /// a use the register path cannot take).
    excluded: HashSet<Handle<ir::Buffer>>,
    /// The buffer the current attempt gave up keeping in registers.
    demoted: Option<Handle<ir::Buffer>>,
    /// Cross-warp scratch arrays of cooperative reductions, one per
    /// accumulator type and role (`reduce.rs`; roles run concurrently).
    scratch: Vec<(DType, i64, SharedId)>,
    /// Element-wise fragment buffers spread over registers (`spread.rs`).
    /// `var` and `local` buffers kept once per thread (`private.rs`).
    private: private::Privates,
    spread: HashMap<Handle<ir::Buffer>, spread::SpreadBuf>,
    /// Inside a spread nest: the array slot of the current element.
    spread_slot: Option<Expr>,
    /// Inside a nest over register buffers (`resident.rs`): the array
    /// slots of the current element.
    resident_slot: Option<resident::NestSlot>,
    /// Accesses the verifier proved in bounds ([`LowerOptions`]).
    proved: Option<&'a HashSet<AccessSite>>,
    /// Buffers whose accesses are being lowered without guards.
    trusted: HashSet<Handle<ir::Buffer>>,
    /// `T.Pipelined` loops lowered with async copies (`pipeline.rs`), by
    /// loop variable.
    pipelines: HashMap<Handle<ir::Var>, pipeline::PipePlan>,
    /// The rotated loops (`rotate.rs`), by loop variable.
    peels: rotate::Peels,
    /// The lowered conditions of the rotated loops' guards
    /// (`pipeline.rs`, "Rotated loops").
    guard_conds: Vec<Expr>,
    /// Multi-buffered shared buffers: elements per stage, stages.
    staged: HashMap<Handle<ir::Buffer>, (i64, i64)>,
    /// The element offset of the stage being accessed, and a number it is
    /// a multiple of.
    stage_base: HashMap<Handle<ir::Buffer>, (Expr, i64)>,
    /// Padded shared buffers and their row pitch in elements (`pad.rs`).
    pitch: HashMap<Handle<ir::Buffer>, i64>,
    /// Whether to pad (off in a retry, when padding made it not fit).
    padding: bool,
    /// Swizzled shared buffers (`swizzle.rs`).
    swizzled: HashMap<Handle<ir::Buffer>, swizzle::Swizzled>,
    /// Shared buffers in their author's mapped layout (`mapped.rs`).
    mapped: HashMap<Handle<ir::Buffer>, std::rc::Rc<mapped::Mapped>>,
    /// Whether the operands of register atoms may be swizzled (off in a
    /// retry after an attempt with them failed).
    mma_swizzle: bool,
    /// The same for operands pinned to their swizzle (off in a later
    /// retry: they are then read per lane through the layout).
    mma_swizzle_pins: bool,
    /// Those of the swizzled buffers that are operands of register atoms
    /// fed by matrix loads (`swizzle.rs`, "Operands of register atoms").
    mma_swizzled: HashSet<Handle<ir::Buffer>>,
    /// The shared-operand atom every gemm of the kernel uses, if any
    /// (`swizzle.rs`).
    async_atom: Option<&'a crate::target::MatrixAtom>,
    /// Whether this attempt may use a shared-operand atom (off in a retry
    /// after an attempt with one failed).
    async_allowed: bool,
    /// Lowering the consumers of a pipelined loop whose shared-operand
    /// gemm may stay in flight for one iteration (`pipeline.rs`).
    async_lag: bool,
    /// Whether `T.Pipelined` loops may be pipelined in this attempt.
    pipelining: bool,
    /// Most stages a pipelined loop may take in this attempt (a retry
    /// after the stages did not fit the shared memory).
    stage_cap: Option<i64>,
    /// Whether this attempt failed because its shared buffers exceed the
    /// target's shared memory.
    over_capacity: bool,
    /// Whether this attempt may give the kernel a producer warp (`ws.rs`;
    /// off in a retry after the producer could not be split off).
    specialize: bool,
    /// The kernel being specialized (`ws.rs`).
    ws: Option<ws::Ws>,
    /// Whether this attempt failed because the roles could not be split.
    ws_failed: bool,
    /// Whether the kernel got a producer of its own (`ws.rs`).
    specialized: bool,
    /// Layouts and schedules the IR pins (`choices.rs`).
    pins: Pins,
    /// Whether buffers may share the shared memory of buffers whose live
    /// ranges they do not meet (a retry when the kernel does not fit).
    reuse: bool,
    /// Whether element-wise fragments too large for the register budget
    /// may still be spread over the threads, in per-thread arrays the
    /// backend places in registers and spills to thread-private memory
    /// (`spread.rs`, "Spilled buffers"; the last retry when the shared
    /// memory does not fit).
    spill: bool,
    /// Live intervals of the kernel's on-chip buffers, by index, when
    /// `reuse` is on.
    intervals: std::collections::BTreeMap<usize, (usize, usize)>,
    /// Buffers placed in another buffer's shared memory, with that host.
    hosted: HashMap<Handle<ir::Buffer>, Handle<ir::Buffer>>,
    /// The kernel's roles (`roles.rs`), if it has some.
    roles: Option<roles::Roles>,
    /// The role being lowered.
    role: Option<roles::RoleCx>,
    /// Phased-barrier buffers and their shared arrays (`roles.rs`).
    barrier_bufs: HashMap<Handle<ir::Buffer>, SharedId>,
    /// Barrier initialisations no block barrier has published yet.
    unpublished: bool,
    /// Copies (by statement address) a role hands over to a barrier
    /// arrival as async copies, and those arrivals (`roles.rs`).
    handoff_copies: HashSet<usize>,
    handoff_arrives: HashSet<usize>,
    /// Lowering a handed-over copy: async copies where possible.
    copy_async: bool,
    /// A handed-over copy could not go async: its arrival waits instead.
    async_fallback: bool,
    /// The kernel's thread variable, its thread count, the variables that
    /// depend on it and the values of those that are `let`s (`guard.rs`).
    thread_var: Option<Handle<ir::Var>>,
    block_threads: i64,
    tdep: HashSet<Handle<ir::Var>>,
    tdep_lets: HashMap<Handle<ir::Var>, Handle<ir::Expr>>,
    /// The thread-guarded region being lowered, the ranges given numbered
    /// barriers, and a refusal found while placing a barrier in it.
    guard: Option<guard::GuardCx>,
    guard_ids: Vec<(i64, i64)>,
    guard_error: Option<LowerError>,
}

fn lit_i32(v: i64) -> Expr {
    Expr::literal(Literal::Int(DType::I32.wrap_i64(v), DType::I32))
}

fn reg_expr(id: RegId, dtype: DType) -> Expr {
    Expr {
        kind: ExprKind::Reg(id),
        dtype,
    }
}

fn to_i32(e: Expr) -> Expr {
    if e.dtype == DType::I32 {
        e
    } else {
        Expr::cast(DType::I32, e)
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The greatest common divisor of `|a|` and `|b|` (`gcd(0, b) = |b|`).
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

impl<'a> Lower<'a> {
    fn new(f: &'a ir::Function, target: &'a TargetDescription) -> Self {
        let mut reserved: HashSet<String> = f.vars.iter().map(|(_, v)| v.name.clone()).collect();
        reserved.extend(f.buffers.iter().map(|(_, b)| b.name.clone()));
        Lower {
            f,
            target,
            threads: 1,
            params: Vec::new(),
            shared: Vec::new(),
            tensor_maps: Vec::new(),
            registers: Vec::new(),
            names: HashSet::new(),
            reserved,
            counter: 0,
            vars: HashMap::new(),
            ranges: HashMap::new(),
            mults: HashMap::new(),
            mems: HashMap::new(),
            symbols: HashMap::new(),
            pending: Pending::default(),
            tdep_loops: 0,
            span: Span::UNKNOWN,
            resident: HashMap::new(),
            excluded: HashSet::new(),
            demoted: None,
            scratch: Vec::new(),
            spread: HashMap::new(),
            private: HashMap::new(),
            spread_slot: None,
            resident_slot: None,
            proved: None,
            trusted: HashSet::new(),
            pipelines: HashMap::new(),
            peels: HashMap::new(),
            guard_conds: Vec::new(),
            staged: HashMap::new(),
            stage_base: HashMap::new(),
            pitch: HashMap::new(),
            padding: true,
            mma_swizzle: true,
            mma_swizzle_pins: true,
            mma_swizzled: HashSet::new(),
            pipelining: true,
            stage_cap: None,
            over_capacity: false,
            specialize: true,
            ws: None,
            ws_failed: false,
            specialized: false,
            pins: Pins::default(),
            reuse: false,
            spill: false,
            intervals: std::collections::BTreeMap::new(),
            roles: None,
            role: None,
            handoff_copies: HashSet::new(),
            handoff_arrives: HashSet::new(),
            copy_async: false,
            async_fallback: false,
            unpublished: false,
            barrier_bufs: HashMap::new(),
            hosted: HashMap::new(),
            swizzled: HashMap::new(),
            mapped: HashMap::new(),
            async_atom: None,
            async_allowed: true,
            async_lag: false,
            thread_var: None,
            block_threads: 1,
            tdep: HashSet::new(),
            tdep_lets: HashMap::new(),
            guard: None,
            guard_ids: Vec::new(),
            guard_error: None,
        }
    }

    // ----- names, registers, statements -------------------------------

    /// Claims `name` (a Tile IR name) or, if taken, a fresh variant.
    fn claim(&mut self, name: &str) -> String {
        if self.names.insert(name.to_string()) {
            return name.to_string();
        }
        self.fresh(name)
    }

    /// A new name starting with `base` that no Tile IR name uses.
    fn fresh(&mut self, base: &str) -> String {
        loop {
            let name = format!("{base}{}", self.counter);
            self.counter += 1;
            if !self.reserved.contains(&name) && self.names.insert(name.clone()) {
                return name;
            }
        }
    }

    fn add_reg(&mut self, name: String, dtype: DType, kind: RegisterKind) -> RegId {
        let id = RegId(self.registers.len() as u32);
        self.registers.push(Register { name, dtype, kind });
        id
    }

    fn temp(&mut self, base: &str, dtype: DType) -> RegId {
        let name = self.fresh(base);
        self.add_reg(name, dtype, RegisterKind::Scalar)
    }

    fn stmt(&self, kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            span: self.span,
        }
    }

    fn assign(&self, out: &mut Vec<Stmt>, reg: RegId, value: Expr) {
        out.push(self.stmt(StmtKind::Assign {
            dst: RegRef::Scalar(reg),
            value,
        }));
    }

    fn barrier(&mut self, out: &mut Vec<Stmt>) {
        if self.guard.is_some() {
            self.guard_barrier(out);
            return;
        }
        if self.role.is_none() {
            self.unpublished = false;
        }
        let kind = if let Some(kind) = self.role_barrier() {
            kind
        } else if self.ws.is_some() {
            self.consumer_barrier()
        } else {
            StmtKind::Barrier
        };
        out.push(self.stmt(kind));
        self.pending = Pending::default();
    }

    fn unsupported(&self, what: impl Into<String>) -> LowerError {
        unsupported(what, self.span)
    }

    fn malformed(&self, detail: impl Into<String>) -> LowerError {
        malformed(detail, self.span)
    }

    fn bin(&self, op: BinaryOp, a: Expr, b: Expr) -> Result<Expr> {
        if a.dtype == DType::I32
            && let (Some(x), Some(y)) = (a.as_const_int(), b.as_const_int())
        {
            let folded = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::FloorDiv if y > 0 => Some(x.div_euclid(y)),
                BinaryOp::FloorMod if y > 0 => Some(x.rem_euclid(y)),
                BinaryOp::BitXor => Some(x ^ y),
                BinaryOp::Min => Some(x.min(y)),
                BinaryOp::Max => Some(x.max(y)),
                _ => None,
            };
            if let Some(v) = folded.filter(|v| i32::try_from(*v).is_ok()) {
                return Ok(lit_i32(v));
            }
        }
        // `(x + c) // d = x // d + c/d` and `(x + c) % d = x % d` when `d`
        // divides `c` (floor division, any sign).
        if let (BinaryOp::FloorDiv | BinaryOp::FloorMod, Some(d)) = (op, b.as_const_int())
            && d > 0
            && let ExprKind::Binary(BinaryOp::Add, x, c) = &a.kind
            && let Some(c) = c.as_const_int()
            && c % d == 0
        {
            let inner = self.bin(op, (**x).clone(), b)?;
            return match op {
                BinaryOp::FloorDiv => self.bin(BinaryOp::Add, inner, lit_i32(c / d)),
                _ => Ok(inner),
            };
        }
        match (op, a.as_const_int(), b.as_const_int()) {
            (BinaryOp::Add, Some(0), _) if b.dtype == a.dtype => return Ok(b),
            (BinaryOp::Add | BinaryOp::Sub, _, Some(0)) => return Ok(a),
            (BinaryOp::Mul, Some(1), _) if b.dtype == a.dtype => return Ok(b),
            (BinaryOp::Mul | BinaryOp::FloorDiv, _, Some(1)) => return Ok(a),
            (BinaryOp::Mul, Some(0), _) | (BinaryOp::Mul, _, Some(0)) if a.dtype == b.dtype => {
                return Ok(Expr::literal(Literal::Int(0, a.dtype)));
            }
            _ => {}
        }
        Expr::binary(op, a, b).map_err(|e| self.malformed(e.to_string()))
    }

    fn and(&self, a: Option<Expr>, b: Expr) -> Result<Expr> {
        match a {
            None => Ok(b),
            Some(a) => self.bin(BinaryOp::And, a, b),
        }
    }

    // ----- kernel --------------------------------------------------------

    fn kernel(&mut self, stmt: &ir::Stmt, span: Span, name: String) -> Result<thread::Kernel> {
        let ir::Stmt::Kernel {
            grid,
            threads,
            block_vars,
            thread_var,
            order,
            body,
        } = stmt
        else {
            return Err(malformed("not a kernel", span));
        };
        self.span = span;
        self.threads = i64::from(*threads).max(1);
        let f = self.f;
        // Parameters: global buffers, then one scalar per symbol.
        let globals: Vec<Handle<ir::Buffer>> =
            f.param_buffers().chain(scratch_buffers(f)).collect();
        let n_globals = globals.len();
        for (i, &sym) in f.symbols.iter().enumerate() {
            self.symbols.insert(sym, ParamId((n_globals + i) as u32));
        }
        // `assume`s at the function's top level and the kernel body's top
        // level hold for the whole launch; their divisibility facts about
        // symbols prove vector alignment.
        for stmt in f.body.stmts.iter().chain(&body.stmts) {
            if let ir::Stmt::Assume { cond } = stmt {
                self.assume_facts(*cond);
            }
        }
        // The symbols' values, before the buffers: a compound extent
        // reads them.
        for &sym in &f.symbols {
            let var = &f.vars[sym];
            let dtype = if var.dtype.is_int() {
                var.dtype
            } else {
                DType::I32
            };
            self.vars.insert(
                sym,
                Expr {
                    kind: ExprKind::Param(self.symbols[&sym]),
                    dtype,
                },
            );
        }
        for &b in &globals {
            let buffer = &f.buffers[b];
            let mut shape = Vec::new();
            let mut dims = Vec::new();
            let mut mults = Vec::new();
            for &e in &buffer.shape {
                if let Some(v) = f.as_const_int(e) {
                    let v = u64::try_from(v).map_err(|_| {
                        malformed(
                            format!("parameter `{}` has a negative extent", buffer.name),
                            span,
                        )
                    })?;
                    shape.push(Dim::Const(v));
                    dims.push(lit_i32(v as i64));
                    mults.push(v as i64);
                } else if let ir::Expr::Var(v) = f.exprs[e]
                    && let Some(&p) = self.symbols.get(&v)
                {
                    shape.push(Dim::Param(p));
                    mults.push(self.mults.get(&v).copied().unwrap_or(1));
                    dims.push(to_i32(Expr {
                        kind: ExprKind::Param(p),
                        dtype: f.vars[v].dtype,
                    }));
                } else {
                    // A compound extent (`T.ceildiv(N, 128)`, `M * N`):
                    // addressed through its value, declared as the
                    // expression hosts evaluate from the sizes.
                    let mut scratch = Vec::new();
                    let ex = self.expr(e, &mut scratch)?;
                    if !scratch.is_empty() || !Dim::is_extent_expr(&ex) {
                        // At the parameter's declaration where known.
                        let at = f
                            .buffer_spans
                            .get(b.index())
                            .copied()
                            .filter(|s| s.end > s.start)
                            .unwrap_or(span);
                        return Err(unsupported(
                            format!(
                                "parameter `{}` whose extent is not an integer expression of \
                                 symbolic sizes (literals, sizes, `+ - * // %`, `T.ceildiv`, \
                                 `T.min`, `T.max`); give it a symbolic size of its own \
                                 (`T.symbolic`), bound by the argument's shape",
                                buffer.name
                            ),
                            at,
                        ));
                    }
                    mults.push(1);
                    dims.push(to_i32(ex.clone()));
                    shape.push(Dim::Expr(ex));
                }
            }
            let name = self.claim(&buffer.name);
            let param = ParamId(self.params.len() as u32);
            self.params.push(Param::Global(GlobalBuffer {
                name,
                dtype: buffer.dtype,
                shape,
            }));
            self.mems.insert(b, Mem::Global { param, dims, mults });
        }
        for &sym in &f.symbols {
            let name = self.claim(&f.vars[sym].name);
            let dtype = self.vars[&sym].dtype;
            self.params.push(Param::Scalar { name, dtype });
        }
        // Grid.
        if grid.is_empty() || grid.len() > 3 {
            return Err(malformed("a kernel grid needs 1 to 3 extents", span));
        }
        let mut grid_exprs = [lit_i32(1), lit_i32(1), lit_i32(1)];
        let specials = [Special::BlockIdxX, Special::BlockIdxY, Special::BlockIdxZ];
        for (i, &g) in grid.iter().enumerate() {
            let mut scratch = Vec::new();
            let e = self.expr(g, &mut scratch)?;
            if !scratch.is_empty() {
                return Err(unsupported("a grid extent that reads memory", span));
            }
            grid_exprs[i] = to_i32(e);
            if let Some(&bv) = block_vars.get(i) {
                let dtype = f.vars[bv].dtype;
                let e = Expr::special(specials[i]);
                self.vars.insert(
                    bv,
                    if dtype == DType::I32 {
                        e
                    } else {
                        Expr::cast(dtype, e)
                    },
                );
                if let Some(n) = self.range(g) {
                    self.ranges.insert(bv, (0, (n.1 - 1).max(0)));
                }
            }
        }
        // The block order (`raster.rs`): registers computed first thing.
        let mut head = Vec::new();
        if let ir::BlockOrder::Panels { size, column } =
            self.block_order(*order, grid.len(), &grid_exprs, body)
            && grid.len() >= 2
        {
            self.rasterize((size, column), &grid_exprs, block_vars, &mut head)?;
        }
        let tdtype = f.vars[*thread_var].dtype;
        let te = Expr::special(Special::ThreadIdx);
        self.vars.insert(
            *thread_var,
            if tdtype == DType::I32 {
                te
            } else {
                Expr::cast(tdtype, te)
            },
        );
        self.ranges.insert(*thread_var, (0, self.threads - 1));
        self.roles = self.plan_roles(self.threads, body)?;
        if let Some(roles) = &self.roles {
            // Analyses place fragments and split gemms for a role's threads.
            self.threads = roles.size;
            self.specialize = false;
            self.pipelining = false;
        }
        // Per-thread buffers first: their loads are thread-dependent.
        self.find_private(*thread_var, body);
        self.plan_guards(*thread_var, body);
        if self.reuse {
            self.intervals = crate::passes::plan_shared_memory::live_intervals(self.f, body);
        }
        // Mapped layouts first: they limit the vectors every later
        // decision sizes (`mapped.rs`).
        self.pin_maps()?;
        self.find_async_mma(body);
        self.find_resident(body);
        self.find_spread(body);
        self.find_mma_swizzle(body);
        self.pin_swizzles(body);
        if self.padding {
            self.find_padding(body);
        }
        self.pin_paddings()?;
        self.find_pipelines(body);
        if self.plan_ws(body) {
            self.ws = Some(ws::Ws::default());
        }
        self.check_pins()?;
        let mut out = head;
        if let Some(roles) = &self.roles {
            self.threads = roles.block;
        }
        self.role_kernel_body(body, &mut out)?;
        self.span = span;
        let mut block_threads = *threads;
        if let Some(ws) = self.ws.take() {
            match self.split_roles(ws, out)? {
                Some(split) => {
                    out = split;
                    block_threads = self.specialized_threads();
                    self.specialized = true;
                }
                None => {
                    self.ws_failed = true;
                    return Err(self.unsupported(
                        "a producer warp for this kernel's pipeline (lowered without one)",
                    ));
                }
            }
        }
        let mut bytes = 0u64;
        for s in &self.shared {
            let align = u64::from(s.align);
            bytes = bytes.div_ceil(align).saturating_mul(align);
            bytes = bytes.saturating_add(s.len.saturating_mul(s.dtype.bytes()));
        }
        let capacity = self
            .target
            .memory_of_kind(crate::target::MemoryKind::Shared)
            .and_then(|m| m.capacity_bytes);
        if let Some(capacity) = capacity
            && bytes > capacity
        {
            self.over_capacity = true;
            return Err(self.unsupported(format!(
                "this kernel: keeping every on-chip buffer in shared memory needs {bytes} bytes, \
                 more than target `{}`'s {capacity} (choose smaller tiles)",
                self.target.name
            )));
        }
        Ok(thread::Kernel {
            name,
            params: std::mem::take(&mut self.params),
            grid: grid_exprs,
            threads: block_threads,
            shared: std::mem::take(&mut self.shared),
            tensor_maps: std::mem::take(&mut self.tensor_maps),
            registers: std::mem::take(&mut self.registers),
            body: out,
        })
    }

    // ----- interval analysis -------------------------------------------

    /// An interval containing every value of an integer expression.
    fn range(&self, e: Handle<ir::Expr>) -> Option<(i64, i64)> {
        let f = self.f;
        match &f.exprs[e] {
            ir::Expr::Literal(l) => l.as_i64().map(|v| (v, v)),
            ir::Expr::Var(v) => self.ranges.get(v).copied(),
            ir::Expr::Cast { dtype, arg } if dtype.is_int() && f.ty(*arg).is_int() => {
                let (lo, hi) = self.range(*arg)?;
                (dtype.wrap_i64(lo) == lo && dtype.wrap_i64(hi) == hi).then_some((lo, hi))
            }
            // A floor modulo by a positive constant lies in `0 .. c - 1`
            // whatever the dividend (`k % 2` of a loop counting to a value
            // read from memory).
            ir::Expr::Binary {
                op: BinaryOp::FloorMod,
                lhs,
                rhs,
            } if self.range(*lhs).is_none() && f.as_const_int(*rhs).is_some_and(|c| c > 0) => {
                let c = f.as_const_int(*rhs)?;
                Some((0, c - 1))
            }
            ir::Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (self.range(*lhs)?, self.range(*rhs)?);
                let dtype = f.ty(e);
                let r = match op {
                    BinaryOp::Add => (a.0.checked_add(b.0)?, a.1.checked_add(b.1)?),
                    BinaryOp::Sub => (a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?),
                    BinaryOp::Mul => {
                        let c = [
                            a.0.checked_mul(b.0)?,
                            a.0.checked_mul(b.1)?,
                            a.1.checked_mul(b.0)?,
                            a.1.checked_mul(b.1)?,
                        ];
                        (*c.iter().min()?, *c.iter().max()?)
                    }
                    BinaryOp::FloorDiv if b.0 == b.1 && b.0 > 0 => {
                        (a.0.div_euclid(b.0), a.1.div_euclid(b.0))
                    }
                    BinaryOp::FloorMod if b.0 == b.1 && b.0 > 0 => {
                        if a.0 >= 0 && a.1 < b.0 {
                            a
                        } else {
                            (0, b.0 - 1)
                        }
                    }
                    BinaryOp::Min => (a.0.min(b.0), a.1.min(b.1)),
                    BinaryOp::Max => (a.0.max(b.0), a.1.max(b.1)),
                    _ => return None,
                };
                (dtype.wrap_i64(r.0) == r.0 && dtype.wrap_i64(r.1) == r.1).then_some(r)
            }
            _ => None,
        }
    }

    /// A number every value of an integer expression is a multiple of
    /// (0 when the value is always 0; 1 when nothing is known). Literals,
    /// lets and `assume`d symbols are the leaves; `+ - min max select`
    /// keep the gcd, `*` and `<<` multiply, `//` by a constant divides
    /// when it divides, `%` by a constant keeps the gcd with it. Where the
    /// expression may wrap (no proven range), only the power-of-two part
    /// survives, since wrapping subtracts multiples of 2^bits.
    fn multiple(&self, e: Handle<ir::Expr>) -> i64 {
        let f = self.f;
        let Some(node) = f.exprs.try_get(e) else {
            return 1;
        };
        let g = match node {
            ir::Expr::Literal(l) => {
                return l.as_i64().and_then(i64::checked_abs).unwrap_or(1);
            }
            ir::Expr::Var(v) => return self.mults.get(v).copied().unwrap_or(1),
            ir::Expr::Cast { dtype, arg } if dtype.is_int() && f.ty(*arg).is_int() => {
                self.multiple(*arg)
            }
            ir::Expr::Binary { op, lhs, rhs } if f.ty(e).is_int() => {
                let (a, b) = (self.multiple(*lhs), self.multiple(*rhs));
                let c = f.as_const_int(*rhs).filter(|&c| c > 0);
                match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Min | BinaryOp::Max => gcd(a, b),
                    BinaryOp::Mul => a.checked_mul(b).unwrap_or(1),
                    BinaryOp::Shl => match f.as_const_int(*rhs) {
                        Some(sh @ 0..=30) => a.checked_mul(1 << sh).unwrap_or(1),
                        _ => 1,
                    },
                    BinaryOp::FloorDiv => match c {
                        Some(_) if a == 0 => 0,
                        Some(c) if a % c == 0 => a / c,
                        _ => 1,
                    },
                    BinaryOp::FloorMod => c.map_or(1, |c| gcd(a, c)),
                    _ => 1,
                }
            }
            ir::Expr::Select {
                then, otherwise, ..
            } => gcd(self.multiple(*then), self.multiple(*otherwise)),
            _ => 1,
        };
        if g == 0 || self.range(e).is_some() {
            g
        } else {
            // The largest power of two dividing `g`, at most 2^30.
            (g & g.wrapping_neg()).clamp(1, 1 << 30)
        }
    }

    /// Records the divisibility facts of an `assume`d condition:
    /// `x % c == 0` (and conjunctions of such) about a variable.
    fn assume_facts(&mut self, cond: Handle<ir::Expr>) {
        let f = self.f;
        let Some(ir::Expr::Binary { op, lhs, rhs }) = f.exprs.try_get(cond) else {
            return;
        };
        match op {
            BinaryOp::And => {
                self.assume_facts(*lhs);
                self.assume_facts(*rhs);
            }
            BinaryOp::Eq => {
                let (m, zero) = if f.as_const_int(*rhs) == Some(0) {
                    (*lhs, true)
                } else {
                    (*rhs, f.as_const_int(*lhs) == Some(0))
                };
                if !zero {
                    return;
                }
                let Some(ir::Expr::Binary {
                    op: BinaryOp::FloorMod,
                    lhs: x,
                    rhs: c,
                }) = f.exprs.try_get(m)
                else {
                    return;
                };
                let Some(c) = f.as_const_int(*c).filter(|&c| c > 0) else {
                    return;
                };
                let mut x = *x;
                while let Some(ir::Expr::Cast { arg, .. }) = f.exprs.try_get(x) {
                    x = *arg;
                }
                if let Some(ir::Expr::Var(v)) = f.exprs.try_get(x) {
                    let old = self.mults.get(v).copied().unwrap_or(1);
                    if let Some(l) = (old / gcd(old, c)).checked_mul(c) {
                        self.mults.insert(*v, l);
                    }
                }
            }
            _ => {}
        }
    }

    // ----- expressions ----------------------------------------------------

    /// Translates an expression; loads become load statements into fresh
    /// registers, appended to `out`.
    fn expr(&mut self, e: Handle<ir::Expr>, out: &mut Vec<Stmt>) -> Result<Expr> {
        let f = self.f;
        let node = f
            .exprs
            .try_get(e)
            .ok_or_else(|| self.malformed("expression handle out of range"))?;
        match node {
            ir::Expr::Literal(l) => Ok(Expr::literal(*l)),
            ir::Expr::Var(v) => self.vars.get(v).cloned().ok_or_else(|| {
                let name = f.vars.try_get(*v).map_or("?", |v| v.name.as_str());
                match f.vars.try_get(*v).map(|v| v.kind) {
                    Some(VarKind::ThreadIdx) => {
                        self.unsupported("reading the thread variable outside `parallel`")
                    }
                    _ => self.malformed(format!("variable `{name}` used out of scope")),
                }
            }),
            ir::Expr::Unary { op, arg } => {
                let a = self.expr(*arg, out)?;
                Expr::unary(*op, a).map_err(|e| self.malformed(e.to_string()))
            }
            ir::Expr::Binary { op, lhs, rhs } => {
                let a = self.expr(*lhs, out)?;
                let b = self.expr(*rhs, out)?;
                Expr::binary(*op, a, b).map_err(|e| self.malformed(e.to_string()))
            }
            ir::Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(*cond, out)?;
                let a = self.expr(*then, out)?;
                let b = self.expr(*otherwise, out)?;
                Expr::select(c, a, b).map_err(|e| self.malformed(e.to_string()))
            }
            ir::Expr::Cast { dtype, arg } => {
                let a = self.expr(*arg, out)?;
                Ok(Expr::cast(*dtype, a))
            }
            ir::Expr::Bitcast { dtype, arg } => {
                let a = self.expr(*arg, out)?;
                Expr::bitcast(*dtype, a).map_err(|e| self.malformed(e.to_string()))
            }
            ir::Expr::Load { buffer, .. }
                if self.spread.contains_key(buffer) || self.resident.contains_key(buffer) =>
            {
                let dtype = f.buffers[*buffer].dtype;
                let at = if self.resident.contains_key(buffer) {
                    self.resident_elem(*buffer)?
                } else {
                    self.spread_elem(*buffer)?
                };
                match at {
                    RegRef::Elem(arr, slot) => Ok(Expr {
                        kind: ExprKind::Elem(arr, Box::new(slot)),
                        dtype,
                    }),
                    RegRef::Scalar(r) => Ok(reg_expr(r, dtype)),
                }
            }
            ir::Expr::Load { buffer, indices } => {
                let mut idx = Vec::with_capacity(indices.len());
                for &i in indices {
                    idx.push(self.index(i, out)?);
                }
                let site = AccessSite::Load {
                    span: self.span,
                    expr: e,
                };
                self.trusting(&[(site, *buffer)], |s| s.load(*buffer, &idx, out))
            }
        }
    }

    fn index(&mut self, e: Handle<ir::Expr>, out: &mut Vec<Stmt>) -> Result<Index> {
        let range = self.range(e);
        let expr = to_i32(self.expr(e, out)?);
        Ok(Index { expr, range })
    }

    fn mem(&self, buffer: Handle<ir::Buffer>) -> Result<Mem> {
        self.mems.get(&buffer).cloned().ok_or_else(|| {
            let name = self
                .f
                .buffers
                .try_get(buffer)
                .map_or("?", |b| b.name.as_str());
            self.malformed(format!("buffer `{name}` used before its allocation"))
        })
    }

    /// The memory, linear element index and in-bounds condition (`None`
    /// when provably in bounds) of an element.
    fn address(
        &self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
    ) -> Result<(MemRef, Expr, Option<Expr>)> {
        let mem = self.mem(buffer)?;
        // Per dimension: the extent (an expression and its value when
        // constant) and what the index before it is scaled by, which
        // differs from the extent in the last dimension of a padded buffer.
        type Extents = Vec<(Expr, Option<i64>)>;
        let (memref, dims, scales): (MemRef, Extents, Vec<Expr>) = match &mem {
            Mem::Global { param, dims, .. } => (
                MemRef::Global(*param),
                dims.iter().map(|d| (d.clone(), d.as_const_int())).collect(),
                dims.clone(),
            ),
            Mem::Shared { id, dims } => (
                MemRef::Shared(*id),
                dims.iter().map(|&d| (lit_i32(d), Some(d))).collect(),
                self.physical_shape(buffer, dims)
                    .into_iter()
                    .map(lit_i32)
                    .collect(),
            ),
        };
        if dims.len() != idx.len() {
            return Err(self.malformed("index count differs from the buffer's rank"));
        }
        // A swizzled operand buffer (`swizzle.rs`: every access is a copy
        // inside its region's bounds or guarded by them) or a mapped one
        // (`mapped.rs`): constant shape, guarded as row-major rows are,
        // the stored index through the layout.
        let arranged = match (self.swizzled.get(&buffer), idx) {
            (Some(layout), [_, _]) => Some((
                vec![layout.rows, layout.cols],
                mapped::Arranged::Swizzled(*layout),
            )),
            _ => self
                .mapped
                .get(&buffer)
                .map(|m| (m.dims.clone(), mapped::Arranged::Mapped(m.clone()))),
        };
        if let Some((extents, layout)) = arranged {
            let mut guard = None;
            for (ix, &n) in idx.iter().zip(&extents) {
                let (lo_ok, hi_ok) = match ix.range {
                    Some((lo, hi)) => (lo >= 0, hi < n),
                    None => (false, false),
                };
                if !lo_ok {
                    let c = self.bin(BinaryOp::Ge, ix.expr.clone(), lit_i32(0))?;
                    guard = Some(self.and(guard, c)?);
                }
                if !hi_ok {
                    let c = self.bin(BinaryOp::Lt, ix.expr.clone(), lit_i32(n))?;
                    guard = Some(self.and(guard, c)?);
                }
            }
            if self.trusted.contains(&buffer) {
                guard = None;
            }
            let exprs: Vec<Expr> = idx.iter().map(|ix| ix.expr.clone()).collect();
            let mut linear = match &layout {
                mapped::Arranged::Swizzled(l) => self.swizzled_index(l, &exprs[0], &exprs[1])?,
                mapped::Arranged::Mapped(m) => self.map_index(m, &exprs)?,
            };
            if let Some((base, _)) = self.stage_base.get(&buffer) {
                linear = self.bin(BinaryOp::Add, base.clone(), linear)?;
            }
            return Ok((memref, linear, guard));
        }
        let (mut linear, mut guard) = self.row_major(idx, &dims, &scales)?;
        if self.trusted.contains(&buffer) {
            // Proved in bounds by the verifier for this access.
            guard = None;
        }
        if let Some((base, _)) = self.stage_base.get(&buffer) {
            linear = self.bin(BinaryOp::Add, base.clone(), linear)?;
        }
        Ok((memref, linear, guard))
    }

    /// The row-major linear index of `idx` (dimension `d` scaled by
    /// `scales[d]`) and the condition that keeps every index inside its
    /// extent (`None` when each index's known range already is).
    fn row_major(
        &self,
        idx: &[Index],
        dims: &[(Expr, Option<i64>)],
        scales: &[Expr],
    ) -> Result<(Expr, Option<Expr>)> {
        let mut linear = lit_i32(0);
        let mut guard: Option<Expr> = None;
        for (d, ((ix, (dim, cdim)), scale)) in idx.iter().zip(dims).zip(scales).enumerate() {
            // linear = linear * scale + ix
            linear = if d == 0 {
                ix.expr.clone()
            } else {
                let scaled = self.bin(BinaryOp::Mul, linear, scale.clone())?;
                self.bin(BinaryOp::Add, scaled, ix.expr.clone())?
            };
            let (lo_ok, hi_ok) = match (ix.range, cdim) {
                (Some((lo, hi)), Some(n)) => (lo >= 0, hi < *n),
                (Some((lo, _)), None) => (lo >= 0, false),
                _ => (false, false),
            };
            if !lo_ok {
                let c = self.bin(BinaryOp::Ge, ix.expr.clone(), lit_i32(0))?;
                guard = Some(self.and(guard, c)?);
            }
            if !hi_ok {
                let c = self.bin(BinaryOp::Lt, ix.expr.clone(), dim.clone())?;
                guard = Some(self.and(guard, c)?);
            }
        }
        Ok((linear, guard))
    }

    /// Runs `f` with `buffers`' accesses trusted to be in bounds (no
    /// guards), for the sites among `sites` the verifier proved.
    fn trusting<T>(
        &mut self,
        sites: &[(AccessSite, Handle<ir::Buffer>)],
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let mut added = Vec::new();
        for &(site, buffer) in sites {
            if self.proved.is_some_and(|p| p.contains(&site)) && self.trusted.insert(buffer) {
                added.push(buffer);
            }
        }
        let r = f(self);
        for b in added {
            self.trusted.remove(&b);
        }
        r
    }

    fn load(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        if self.is_private(buffer) {
            return self.private_load(buffer, idx, out);
        }
        let dtype = self.f.buffers[buffer].dtype;
        let (src, index, guard) = self.address(buffer, idx)?;
        let reg = self.temp("v", dtype);
        out.push(self.stmt(StmtKind::Load {
            width: 1,
            dst: RegRef::Scalar(reg),
            src,
            index,
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Zero,
            }),
        }));
        Ok(reg_expr(reg, dtype))
    }

    /// Stores `value` (of the buffer's type) into a register first when it
    /// is not one already, then stores it to memory.
    fn store(
        &mut self,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let dtype = self.f.buffers[buffer].dtype;
        if value.dtype != dtype {
            return Err(self.malformed("stored value's type differs from the buffer's"));
        }
        if self.is_private(buffer) {
            return self.private_store(buffer, idx, value, out);
        }
        let src = self.in_register(value, out);
        let (dst, index, guard) = self.address(buffer, idx)?;
        out.push(self.stmt(StmtKind::Store {
            width: 1,
            dst,
            index,
            src,
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Skip,
            }),
        }));
        Ok(())
    }

    fn in_register(&mut self, value: Expr, out: &mut Vec<Stmt>) -> RegRef {
        if let ExprKind::Reg(r) = value.kind
            && self
                .registers
                .get(r.index())
                .is_some_and(|reg| reg.kind == RegisterKind::Scalar)
        {
            return RegRef::Scalar(r);
        }
        let reg = self.temp("s", value.dtype);
        self.assign(out, reg, value);
        RegRef::Scalar(reg)
    }

    // ----- shared-memory access summaries ----------------------------------

    /// Whether accesses to `b` are shared-memory accesses (on-chip and
    /// not kept in registers).
    fn on_chip(&self, b: Handle<ir::Buffer>) -> bool {
        self.f
            .buffers
            .try_get(b)
            .is_some_and(|x| x.scope != Scope::Global)
            && !self.resident.contains_key(&b)
            && !self.spread.contains_key(&b)
            && !self.private.contains_key(&b)
    }

    /// The buffer whose shared memory `b` lives in: its host when it
    /// shares another buffer's (`hosted`), else itself. Accesses are
    /// tracked for barriers by this buffer, so that a buffer and its host
    /// are ordered like one buffer.
    fn canon(&self, b: Handle<ir::Buffer>) -> Handle<ir::Buffer> {
        self.hosted.get(&b).copied().unwrap_or(b)
    }

    fn expr_reads(&self, e: Handle<ir::Expr>, acc: &mut Pending) {
        for_each_load(self.f, e, |b| self.read(b, acc));
    }

    fn is_global(&self, b: Handle<ir::Buffer>) -> bool {
        self.f
            .buffers
            .try_get(b)
            .is_some_and(|x| x.scope == Scope::Global)
    }

    fn region_reads(&self, r: &Region, acc: &mut Pending) {
        for range in &r.ranges {
            self.expr_reads(range.start, acc);
            self.expr_reads(range.extent, acc);
        }
    }

    fn write(&self, b: Handle<ir::Buffer>, acc: &mut Pending) {
        if self.on_chip(b) {
            acc.writes.insert(self.canon(b).index());
        } else if self.tdep_loops == 0 && self.is_global(b) {
            acc.global_writes.insert(b.index());
        }
    }

    fn read(&self, b: Handle<ir::Buffer>, acc: &mut Pending) {
        if self.on_chip(b) {
            acc.reads.insert(self.canon(b).index());
        } else if self.tdep_loops == 0 && self.is_global(b) {
            acc.global_reads.insert(b.index());
        }
    }

    fn block_accesses(&self, block: &ir::Block, acc: &mut Pending) {
        for stmt in &block.stmts {
            self.stmt_accesses(stmt, acc);
        }
    }

    fn stmt_accesses(&self, stmt: &ir::Stmt, acc: &mut Pending) {
        match stmt {
            ir::Stmt::Kernel { body, .. } => self.block_accesses(body, acc),
            ir::Stmt::Alloc { buffer, init } => {
                if let Some(i) = init {
                    self.expr_reads(*i, acc);
                    self.write(*buffer, acc);
                }
            }
            ir::Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                self.expr_reads(*start, acc);
                self.expr_reads(*extent, acc);
                self.block_accesses(body, acc);
            }
            ir::Stmt::Parallel { body, .. } => self.block_accesses(body, acc),
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr_reads(*cond, acc);
                self.block_accesses(then, acc);
                self.block_accesses(otherwise, acc);
            }
            ir::Stmt::Let { value, .. } | ir::Stmt::DeviceAssert { cond: value } => {
                self.expr_reads(*value, acc)
            }
            ir::Stmt::Store {
                buffer,
                indices,
                value,
            }
            | ir::Stmt::WarpReduce {
                buffer,
                indices,
                value,
                ..
            } => {
                for &i in indices {
                    self.expr_reads(i, acc);
                }
                self.expr_reads(*value, acc);
                self.write(*buffer, acc);
            }
            ir::Stmt::Copy { src, dst } => {
                self.region_reads(src, acc);
                self.region_reads(dst, acc);
                self.read(src.buffer, acc);
                self.write(dst.buffer, acc);
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                for r in [a, b, c] {
                    self.region_reads(r, acc);
                    self.read(r.buffer, acc);
                }
                self.expr_reads(*clear_accum, acc);
                self.write(c.buffer, acc);
            }
            ir::Stmt::Fill { dst, value } => {
                self.region_reads(dst, acc);
                self.expr_reads(*value, acc);
                self.write(dst.buffer, acc);
            }
            ir::Stmt::Reduce { src, dst, dim, .. } => {
                self.read(*src, acc);
                self.read(*dst, acc);
                self.write(*dst, acc);
                // Partials crossing warps go through a scratch array
                // (`reduce.rs`).
                if self.reduce_uses_scratch(*src, *dim as usize) {
                    acc.reads.insert(reduce::SCRATCH);
                    acc.writes.insert(reduce::SCRATCH);
                }
            }
            ir::Stmt::Cumsum { src, dst, .. } => {
                self.read(*src, acc);
                self.read(*dst, acc);
                self.write(*dst, acc);
            }
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                self.region_reads(dst, acc);
                match value {
                    AtomicValue::Scalar(e) => self.expr_reads(*e, acc),
                    AtomicValue::Region(r) => {
                        self.region_reads(r, acc);
                        self.read(r.buffer, acc);
                    }
                }
                if self.is_global(dst.buffer) {
                    if self.tdep_loops == 0 {
                        acc.global_atomics.insert(dst.buffer.index());
                    }
                } else {
                    self.read(dst.buffer, acc);
                    self.write(dst.buffer, acc);
                }
            }
            ir::Stmt::Role { body, .. } => self.block_accesses(body, acc),
            ir::Stmt::BarrierArrive { index, .. } => self.expr_reads(*index, acc),
            ir::Stmt::BarrierWait { index, parity, .. } => {
                self.expr_reads(*index, acc);
                self.expr_reads(*parity, acc);
            }
            ir::Stmt::Barrier | ir::Stmt::Assume { .. } | ir::Stmt::AllocBarrier { .. } => {}
        }
    }

    /// Emits a barrier if `acc`'s accesses conflict with pending ones.
    fn sync(&mut self, acc: &Pending, out: &mut Vec<Stmt>) {
        if self.pending.conflicts(acc) {
            self.barrier(out);
        }
    }

    /// Syncs for `acc`, then records it as pending.
    fn sync_touch(&mut self, acc: &Pending, out: &mut Vec<Stmt>) {
        self.sync(acc, out);
        self.pending.union(acc);
    }

    // ----- uniform code -------------------------------------------------

    fn uniform_block(&mut self, block: &ir::Block, out: &mut Vec<Stmt>) -> Result<()> {
        for (stmt, span) in block.iter() {
            self.span = span;
            self.uniform_stmt(stmt, out)?;
        }
        Ok(())
    }

    /// Reads done by uniform code before a statement: barrier if needed.
    fn uniform_reads(&mut self, exprs: &[Handle<ir::Expr>], out: &mut Vec<Stmt>) {
        let mut acc = Pending::default();
        for &e in exprs {
            self.expr_reads(e, &mut acc);
        }
        self.sync_touch(&acc, out);
    }

    fn uniform_stmt(&mut self, stmt: &ir::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        let f = self.f;
        self.check_guarded(stmt)?;
        match stmt {
            ir::Stmt::Kernel { .. } => Err(self.unsupported("a kernel inside a kernel")),
            ir::Stmt::Alloc { buffer, init } => {
                self.alloc(*buffer)?;
                if let Some(init) = init
                    && self.is_private(*buffer)
                {
                    let mut acc = Pending::default();
                    self.expr_reads(*init, &mut acc);
                    self.sync_touch(&acc, out);
                    let value = self.expr(*init, out)?;
                    self.private_fill(*buffer, value, out);
                } else if let Some(init) = init {
                    let dims = self.const_shape(*buffer)?;
                    let mut acc = Pending::default();
                    self.expr_reads(*init, &mut acc);
                    self.write(*buffer, &mut acc);
                    self.sync_touch(&acc, out);
                    let value = self.expr(*init, out)?;
                    let starts = vec![
                        Index {
                            expr: lit_i32(0),
                            range: Some((0, 0)),
                        };
                        dims.len()
                    ];
                    let mults = vec![0; dims.len()];
                    self.fill_box(*buffer, &starts, &mults, &dims, value, out)?;
                }
                Ok(())
            }
            ir::Stmt::Let { var, value } => {
                self.uniform_reads(&[*value], out);
                let v = self.expr(*value, out)?;
                self.bind_let(*var, *value, v, out);
                Ok(())
            }
            ir::Stmt::For {
                var,
                start,
                extent,
                body,
                ..
            } if self.pipelines.contains_key(var) => {
                let plan = self.pipelines[var].clone();
                self.pipelined_for(*var, *start, *extent, body, &plan, out)
            }
            ir::Stmt::For {
                var,
                start,
                extent,
                body,
                ..
            } => {
                self.uniform_reads(&[*start, *extent], out);
                let s = to_i32(self.expr(*start, out)?);
                let n = self.expr(*extent, out)?;
                let per_thread = u32::from(self.reads_tdep(*start) || self.reads_tdep(*extent));
                self.tdep_loops += per_thread;
                let mut acc = Pending::default();
                self.block_accesses(body, &mut acc);
                let mut entry = self.pending.clone();
                entry.union(&acc);
                self.pending = entry.clone();
                let lowered =
                    self.loop_var(*var, *start, *extent)
                        .and_then(|(loop_reg, prologue)| {
                            let mut inner = prologue;
                            self.uniform_block(body, &mut inner)
                                .map(|()| (loop_reg, inner))
                        });
                self.tdep_loops -= per_thread;
                let (loop_reg, inner) = lowered?;
                self.pending.union(&entry);
                out.push(self.stmt(StmtKind::For {
                    var: loop_reg,
                    start: s,
                    count: n,
                    step: lit_i32(1),
                    unroll: Unroll::None,
                    body: inner,
                }));
                Ok(())
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } if self.reads_tdep(*cond) => self.guarded_if(stmt, *cond, then, otherwise, out),
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.uniform_reads(&[*cond], out);
                let c = self.expr(*cond, out)?;
                if self.peels.values().any(|p| p.guards.contains(cond)) {
                    self.guard_conds.push(c.clone());
                }
                let entry = self.pending.clone();
                let span = self.span;
                let mut t = Vec::new();
                self.uniform_block(then, &mut t)?;
                let after_then = std::mem::replace(&mut self.pending, entry);
                let mut e = Vec::new();
                self.uniform_block(otherwise, &mut e)?;
                self.pending.union(&after_then);
                self.span = span;
                out.push(self.stmt(StmtKind::If {
                    cond: c,
                    then_body: t,
                    else_body: (!e.is_empty()).then_some(e),
                }));
                Ok(())
            }
            ir::Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                let owner = self.store_owner(*buffer, indices, *value)?;
                let mut exprs = indices.clone();
                exprs.push(*value);
                self.uniform_reads(&exprs, out);
                let mut idx = Vec::new();
                for &i in indices {
                    idx.push(self.index(i, out)?);
                }
                let v = self.expr(*value, out)?;
                let v = RegRef::Scalar(match self.in_register(v, out) {
                    RegRef::Scalar(r) => r,
                    RegRef::Elem(r, _) => r,
                });
                let mut acc = Pending::default();
                self.write(*buffer, &mut acc);
                self.sync_touch(&acc, out);
                let mut body = Vec::new();
                let dtype = f.buffers[*buffer].dtype;
                let site = AccessSite::Store {
                    span: self.span,
                    buffer: *buffer,
                };
                self.trusting(&[(site, *buffer)], |s| {
                    s.store(*buffer, &idx, reg_expr(v.reg(), dtype), &mut body)
                })?;
                match owner {
                    Some(cond) => out.push(self.stmt(StmtKind::If {
                        cond,
                        then_body: body,
                        else_body: None,
                    })),
                    None => out.extend(body),
                }
                Ok(())
            }
            ir::Stmt::Barrier => {
                self.barrier(out);
                Ok(())
            }
            ir::Stmt::WarpReduce {
                kind,
                buffer,
                indices,
                value,
            } => self.warp_reduce(*kind, *buffer, indices, *value, out),
            ir::Stmt::DeviceAssert { cond } => {
                self.uniform_reads(&[*cond], out);
                self.device_assert(*cond, out)
            }
            ir::Stmt::Assume { .. } => Ok(()),
            ir::Stmt::Role { groups, body } => self.role_stmt(groups, body, out),
            ir::Stmt::AllocBarrier { buffer, counts } => self.alloc_barrier(*buffer, counts, out),
            ir::Stmt::BarrierArrive { barrier, index } => {
                let handoff = self
                    .handoff_arrives
                    .contains(&(stmt as *const ir::Stmt as usize));
                self.barrier_arrive(*barrier, *index, handoff, out)
            }
            ir::Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => self.barrier_wait(*barrier, *index, *parity, out),
            _ => {
                let mut acc = Pending::default();
                self.stmt_accesses(stmt, &mut acc);
                self.sync_touch(&acc, out);
                self.copy_async = self
                    .handoff_copies
                    .contains(&(stmt as *const ir::Stmt as usize));
                let lowered = self.cooperative(stmt, out);
                self.copy_async = false;
                lowered
            }
        }
    }

    fn alloc(&mut self, buffer: Handle<ir::Buffer>) -> Result<()> {
        let b = self
            .f
            .buffers
            .try_get(buffer)
            .ok_or_else(|| self.malformed("buffer handle out of range"))?;
        if b.scope == Scope::Global {
            return Err(self.unsupported(format!(
                "the global allocation `{}` inside a kernel",
                b.name
            )));
        }
        if self.mems.contains_key(&buffer)
            || self.resident.contains_key(&buffer)
            || self.spread.contains_key(&buffer)
            || self.private.contains_key(&buffer)
        {
            return Ok(());
        }
        let dims = self.const_shape(buffer)?;
        let len = self.physical_len(buffer, &dims);
        if len < 1 || i32::try_from(len).is_err() {
            return Err(self.unsupported(format!("the buffer `{}` of {len} elements", b.name)));
        }
        if let Some(host) = self.host_for(buffer, len) {
            let Some(Mem::Shared { id, .. }) = self.mems.get(&host) else {
                return Err(self.malformed("a host buffer without shared memory"));
            };
            let id = *id;
            self.hosted.insert(buffer, host);
            self.mems.insert(buffer, Mem::Shared { id, dims });
            return Ok(());
        }
        let name = self.claim(&b.name);
        let id = SharedId(self.shared.len() as u32);
        let stages = self.staged.get(&buffer).map_or(1, |&(_, s)| s);
        self.shared.push(SharedBuffer {
            name,
            dtype: b.dtype,
            len: (len * stages) as u64,
            align: match self.swizzled.get(&buffer) {
                Some(layout) => layout.align(),
                None => SHARED_ALIGN.max(b.dtype.bytes() as u32),
            },
        });
        self.mems.insert(buffer, Mem::Shared { id, dims });
        Ok(())
    }

    /// A buffer whose shared memory `buffer` (of `len` physical
    /// elements) can live in, when `reuse` is on (module documentation,
    /// "Shared memory reuse"): allocated before it with its own memory,
    /// of the same element type, at least as long, and neither it nor any
    /// buffer already placed in it live at the same time as `buffer`.
    /// Buffers filled in stages, swizzled, or without a live interval are
    /// not placed in another's memory.
    fn host_for(&self, buffer: Handle<ir::Buffer>, len: i64) -> Option<Handle<ir::Buffer>> {
        if !self.reuse || self.staged.contains_key(&buffer) || self.swizzled.contains_key(&buffer) {
            return None;
        }
        let mine = *self.intervals.get(&buffer.index())?;
        let dtype = self.f.buffers[buffer].dtype;
        let meets = |other: Handle<ir::Buffer>| {
            self.intervals
                .get(&other.index())
                .is_none_or(|&(a, b)| a <= mine.1 && mine.0 <= b)
        };
        let mut hosts: Vec<(Handle<ir::Buffer>, SharedId)> = self
            .mems
            .iter()
            .filter_map(|(&h, m)| match m {
                Mem::Shared { id, .. } if !self.hosted.contains_key(&h) => Some((h, *id)),
                _ => None,
            })
            .collect();
        hosts.sort_by_key(|&(_, id)| id.0);
        // Memory the async proxy writes or reads (stages, swizzled gemm
        // operands) is only taken over after its last use: the waits and
        // the barrier before the guest's first write then order the
        // proxies, and no generic write precedes an async one.
        let after = |h: Handle<ir::Buffer>| {
            let asynchronous = self.staged.contains_key(&h) || self.swizzled.contains_key(&h);
            !asynchronous
                || self
                    .intervals
                    .get(&h.index())
                    .is_some_and(|&(_, end)| end < mine.0)
        };
        hosts.into_iter().find_map(|(h, id)| {
            let s = &self.shared[id.0 as usize];
            let fits = s.dtype == dtype
                && after(h)
                && i64::try_from(s.len).is_ok_and(|l| l >= len)
                && !meets(h)
                && !self
                    .hosted
                    .iter()
                    .any(|(&guest, &host)| host == h && meets(guest));
            fits.then_some(h)
        })
    }

    fn const_shape(&self, buffer: Handle<ir::Buffer>) -> Result<Vec<i64>> {
        match &self.mems.get(&buffer) {
            Some(Mem::Shared { dims, .. }) => return Ok(dims.clone()),
            Some(Mem::Global { .. }) => {
                return Err(self.unsupported("a whole-buffer tile op on a global buffer"));
            }
            None => {}
        }
        self.f.const_shape(buffer).ok_or_else(|| {
            self.unsupported(format!(
                "the on-chip buffer `{}` of symbolic shape",
                self.f.buffers[buffer].name
            ))
        })
    }

    fn bind_let(
        &mut self,
        var: Handle<ir::Var>,
        value: Handle<ir::Expr>,
        v: Expr,
        out: &mut Vec<Stmt>,
    ) {
        let reg = match self.vars.get(&var) {
            Some(Expr {
                kind: ExprKind::Reg(r),
                ..
            }) => *r,
            _ => {
                let name = self.claim(&self.f.vars[var].name);
                let r = self.add_reg(name, v.dtype, RegisterKind::Scalar);
                self.vars.insert(var, reg_expr(r, v.dtype));
                r
            }
        };
        match self.range(value) {
            Some(r) => {
                self.ranges.insert(var, r);
            }
            None => {
                self.ranges.remove(&var);
            }
        }
        let m = self.multiple(value);
        self.mults.insert(var, m);
        self.assign(out, reg, v);
    }

    /// A loop register for a Tile IR `for` variable; a non-`i32` variable
    /// gets a register assigned from the loop register in the prologue.
    fn loop_var(
        &mut self,
        var: Handle<ir::Var>,
        start: Handle<ir::Expr>,
        extent: Handle<ir::Expr>,
    ) -> Result<(RegId, Vec<Stmt>)> {
        let v = &self.f.vars[var];
        let dtype = v.dtype;
        if let (Some(s), Some(n)) = (self.f.as_const_int(start), self.f.as_const_int(extent))
            && n >= 1
        {
            self.ranges.insert(var, (s, s + n - 1));
        } else if let (Some(s), Some((_, hi))) = (self.range(start), self.range(extent)) {
            self.ranges.insert(var, (s.0, s.1.saturating_add(hi)));
        }
        if dtype == DType::I32 {
            let name = self.claim(&v.name);
            let r = self.add_reg(name, DType::I32, RegisterKind::Loop);
            self.vars.insert(var, reg_expr(r, DType::I32));
            Ok((r, Vec::new()))
        } else {
            let lname = self.fresh("k");
            let l = self.add_reg(lname, DType::I32, RegisterKind::Loop);
            let name = self.claim(&v.name);
            let r = self.add_reg(name, dtype, RegisterKind::Scalar);
            self.vars.insert(var, reg_expr(r, dtype));
            let prologue = vec![self.stmt(StmtKind::Assign {
                dst: RegRef::Scalar(r),
                value: Expr::cast(dtype, reg_expr(l, DType::I32)),
            })];
            Ok((l, prologue))
        }
    }

    // ----- cooperative statements ------------------------------------------

    /// Distributes `count` elements cyclically over the block's threads;
    /// `body` emits the code of element `p`.
    fn cyclic(
        &mut self,
        count: i64,
        out: &mut Vec<Stmt>,
        body: impl FnOnce(&mut Self, Expr, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        if count <= 0 {
            return Ok(());
        }
        if i32::try_from(count).is_err() {
            return Err(self.unsupported(format!("an iteration space of {count} elements")));
        }
        let t = self.threads;
        let name = self.fresh("p");
        let p = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let pe = reg_expr(p, DType::I32);
        let mut inner = Vec::new();
        body(self, pe.clone(), &mut inner)?;
        let inner = if count % t == 0 {
            inner
        } else {
            vec![self.stmt(StmtKind::If {
                cond: self.bin(BinaryOp::Lt, pe, lit_i32(count))?,
                then_body: inner,
                else_body: None,
            })]
        };
        out.push(self.stmt(StmtKind::For {
            var: p,
            start: self.tid(),
            count: lit_i32(ceil_div(count, t)),
            step: lit_i32(t),
            unroll: Unroll::None,
            body: inner,
        }));
        Ok(())
    }

    /// [`Self::cyclic`] with the thread loop written out when every thread
    /// runs the same small number of iterations (at most
    /// `MAX_UNROLLED_CYCLES`): iteration `j` gets `p = thread_idx + j·T`
    /// as an expression, so that digits of `p` whose divisor divides
    /// `j·T` become a thread-invariant part plus a constant ([`Self::bin`]
    /// folds `(x + c) // d` and `(x + c) % d` when `d | c`), which code
    /// generators keep in registers across the enclosing loops.
    fn cyclic_unrolled(
        &mut self,
        count: i64,
        out: &mut Vec<Stmt>,
        mut body: impl FnMut(&mut Self, Expr, &mut Vec<Stmt>) -> Result<()>,
    ) -> Result<()> {
        let t = self.threads;
        if count <= 0 || count % t != 0 || count / t > MAX_UNROLLED_CYCLES {
            return self.cyclic(count, out, body);
        }
        let tid = self.tid();
        for j in 0..count / t {
            let p = self.bin(BinaryOp::Add, tid.clone(), lit_i32(j * t))?;
            body(self, p, out)?;
        }
        Ok(())
    }

    /// Row-major digits of `p` over `extents`, each with its range.
    fn digits(&self, p: &Expr, extents: &[i64]) -> Result<Vec<Index>> {
        let mut out = Vec::with_capacity(extents.len());
        let mut stride: i64 = extents.iter().product();
        for &e in extents {
            stride /= e.max(1);
            let q = self.bin(BinaryOp::FloorDiv, p.clone(), lit_i32(stride))?;
            let total: i64 = extents.iter().product();
            let q = if stride * e < total {
                self.bin(BinaryOp::FloorMod, q, lit_i32(e))?
            } else {
                q
            };
            let expr = if e == 1 { lit_i32(0) } else { q };
            out.push(Index {
                expr,
                range: Some((0, e - 1)),
            });
        }
        Ok(out)
    }

    /// A fill of a region whose extents are known only at run time
    /// (`T.fill(x[a:b], v)` with `a`, `b` run-time values): the region's
    /// elements, as many as the product of its extents (each taken as 0
    /// when negative, as TileLang's loop over it runs no iteration), spread
    /// cyclically over the block's threads by a loop with a run-time
    /// count, each element guarded by its buffer's bounds.
    fn dynamic_fill(
        &mut self,
        dst: &Region,
        value: Handle<ir::Expr>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let buffer = dst.buffer;
        if self.resident.contains_key(&buffer) || self.spread.contains_key(&buffer) {
            return Err(self.unsupported(format!(
                "a fill of a region of the register buffer `{}` with a run-time extent",
                self.f.buffers[buffer].name
            )));
        }
        let mut starts = Vec::new();
        let mut extents = Vec::new();
        for range in &dst.ranges {
            starts.push(self.index(range.start, out)?);
            let e = to_i32(self.expr(range.extent, out)?);
            let e = self.bin(BinaryOp::Max, e, lit_i32(0))?;
            extents.push(reg_expr(self.in_register(e, out).reg(), DType::I32));
        }
        let dtype = self.f.buffers[buffer].dtype;
        let v = self.expr(value, out)?;
        let v = self.in_register(v, out);
        let mut total = lit_i32(1);
        for e in &extents {
            total = self.bin(BinaryOp::Mul, total, e.clone())?;
        }
        let total = reg_expr(self.in_register(total, out).reg(), DType::I32);
        let t = self.threads;
        let name = self.fresh("p");
        let p = self.add_reg(name, DType::I32, RegisterKind::Loop);
        let pe = reg_expr(p, DType::I32);
        // Row-major digits of `p` over the run-time extents.
        let mut digits = vec![lit_i32(0); extents.len()];
        let mut rest = pe.clone();
        for (d, e) in extents.iter().enumerate().rev() {
            if d == 0 {
                digits[d] = rest;
                break;
            }
            digits[d] = self.bin(BinaryOp::FloorMod, rest.clone(), e.clone())?;
            rest = self.bin(BinaryOp::FloorDiv, rest, e.clone())?;
        }
        let digits: Vec<Index> = digits
            .into_iter()
            .map(|expr| Index { expr, range: None })
            .collect();
        let idx = self.offset(&starts, &digits)?;
        let mut inner = Vec::new();
        self.store(buffer, &idx, reg_expr(v.reg(), dtype), &mut inner)?;
        let body = vec![self.stmt(StmtKind::If {
            cond: self.bin(BinaryOp::Lt, pe, total.clone())?,
            then_body: inner,
            else_body: None,
        })];
        let count = self.bin(BinaryOp::Add, total, lit_i32(t - 1))?;
        let count = self.bin(BinaryOp::FloorDiv, count, lit_i32(t))?;
        out.push(self.stmt(StmtKind::For {
            var: p,
            start: self.tid(),
            count,
            step: lit_i32(t),
            unroll: Unroll::None,
            body,
        }));
        Ok(())
    }

    /// Starts (translated, with ranges) and constant extents of a region.
    fn region(&mut self, r: &Region, out: &mut Vec<Stmt>) -> Result<(Vec<Index>, Vec<i64>)> {
        let mut starts = Vec::new();
        let mut extents = Vec::new();
        for range in &r.ranges {
            starts.push(self.index(range.start, out)?);
            let e = self.f.as_const_int(range.extent).ok_or_else(|| {
                self.unsupported(format!(
                    "a region of `{}` with a symbolic extent",
                    self.f.buffers[r.buffer].name
                ))
            })?;
            if e < 0 {
                return Err(self.malformed("a region with a negative extent"));
            }
            extents.push(e);
        }
        Ok((starts, extents))
    }

    /// `start + digit` per dimension.
    fn offset(&self, starts: &[Index], digits: &[Index]) -> Result<Vec<Index>> {
        starts
            .iter()
            .zip(digits)
            .map(|(s, d)| {
                let range = match (s.range, d.range) {
                    (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1)),
                    _ => None,
                };
                Ok(Index {
                    expr: self.bin(BinaryOp::Add, s.expr.clone(), d.expr.clone())?,
                    range,
                })
            })
            .collect()
    }

    fn cooperative(&mut self, stmt: &ir::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        self.refuse_thread_dependent_tile(stmt)?;
        // Tile-op regions the verifier proved inside their buffers.
        let span = self.span;
        let region = |r: &Region| {
            (
                AccessSite::Region {
                    span,
                    buffer: r.buffer,
                },
                r.buffer,
            )
        };
        let regions: Vec<(AccessSite, Handle<ir::Buffer>)> = match stmt {
            ir::Stmt::Copy { src, dst } => vec![region(src), region(dst)],
            ir::Stmt::Gemm { a, b, c, .. } => vec![region(a), region(b), region(c)],
            ir::Stmt::Fill { dst, .. } => vec![region(dst)],
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => match value
            {
                AtomicValue::Region(r) => vec![region(dst), region(r)],
                AtomicValue::Scalar(_) => vec![region(dst)],
            },
            _ => Vec::new(),
        };
        self.trusting(&regions, |s| s.cooperative_stmt(stmt, out))
    }

    fn cooperative_stmt(&mut self, stmt: &ir::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        let f = self.f;
        match stmt {
            ir::Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                let mut ext = Vec::new();
                for &e in extents {
                    let n = f
                        .as_const_int(e)
                        .ok_or_else(|| self.malformed("parallel extents must be constants"))?;
                    ext.push(n);
                }
                if let Some(plan) = self.nest_resident(body, &ext) {
                    return self.resident_nest(&plan, vars, &ext, body, out);
                }
                if let Some(layout) = self.nest_spread(body) {
                    return self.spread_nest(&layout, vars, &ext, body, out);
                }
                let count: i64 = ext.iter().product();
                let vars = vars.clone();
                self.cyclic(count, out, |s, p, inner| {
                    let d = s.digits(&p, &ext)?;
                    for ((&v, ix), &n) in vars.iter().zip(d).zip(&ext) {
                        s.bind_index_var(v, ix.expr, (0, n - 1), inner);
                    }
                    s.thread_block(body, inner)
                })
            }
            ir::Stmt::Copy { src, dst }
                if self.resident.contains_key(&src.buffer)
                    && self.resident.contains_key(&dst.buffer) =>
            {
                self.resident_copy(src.buffer, dst.buffer, out)
            }
            ir::Stmt::Copy { src, dst } if self.resident.contains_key(&src.buffer) => {
                self.resident_copy_out(src, dst, out)
            }
            ir::Stmt::Copy { dst, .. } if self.resident.contains_key(&dst.buffer) => {
                Err(self.demote(dst.buffer))
            }
            ir::Stmt::Copy { src, dst }
                if self.spread.contains_key(&src.buffer)
                    || self.spread.contains_key(&dst.buffer) =>
            {
                self.spread_copy(src, dst, out)
            }
            ir::Stmt::Copy { src, dst } => self.copy(src, dst, out),
            ir::Stmt::Fill { dst, value } if self.is_private(dst.buffer) => {
                self.uniform_reads(&[*value], out);
                let v = self.expr(*value, out)?;
                self.private_fill(dst.buffer, v, out);
                Ok(())
            }
            ir::Stmt::Fill { dst, value } if self.spread.contains_key(&dst.buffer) => {
                let v = self.expr(*value, out)?;
                self.spread_fill(dst.buffer, v, out)
            }
            ir::Stmt::Fill { dst, value } if self.resident.contains_key(&dst.buffer) => {
                let v = self.expr(*value, out)?;
                self.resident_fill(dst.buffer, v, out)
            }
            ir::Stmt::Fill { dst, value }
                if dst
                    .ranges
                    .iter()
                    .any(|r| f.as_const_int(r.extent).is_none()) =>
            {
                self.dynamic_fill(dst, *value, out)
            }
            ir::Stmt::Fill { dst, value } => {
                let (starts, extents) = self.region(dst, out)?;
                let v = self.expr(*value, out)?;
                let mults: Vec<i64> = dst.ranges.iter().map(|r| self.multiple(r.start)).collect();
                self.fill_box(dst.buffer, &starts, &mults, &extents, v, out)
            }
            ir::Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                policy,
                clear_accum,
            } => self.gemm(
                [a, b, c],
                (*transpose_a, *transpose_b),
                *policy,
                *clear_accum,
                out,
            ),
            ir::Stmt::Reduce {
                kind,
                src,
                dst,
                dim,
                clear,
            } => self.reduce(*kind, *src, *dst, *dim as usize, *clear, out),
            ir::Stmt::Cumsum {
                src,
                dst,
                dim,
                reverse,
            } => self.cumsum(*src, *dst, *dim as usize, *reverse, out),
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                let op = atomic_op(stmt);
                let (starts, extents) = self.region(dst, out)?;
                let count: i64 = extents.iter().product();
                match value {
                    AtomicValue::Scalar(e) => {
                        let v = self.expr(*e, out)?;
                        let v = self.in_register(v, out);
                        let vt = self.f.ty(*e);
                        self.cyclic(count, out, |s, p, body| {
                            let d = s.digits(&p, &extents)?;
                            let idx = s.offset(&starts, &d)?;
                            s.atomic(op, dst.buffer, &idx, reg_expr(v.reg(), vt), body)
                        })
                    }
                    AtomicValue::Region(r) => {
                        let (vstarts, vext) = self.region(r, out)?;
                        if non_unit(&vext) != non_unit(&extents) {
                            return Err(
                                self.malformed(format!("{} regions differ in shape", op.name()))
                            );
                        }
                        let vbuf = r.buffer;
                        self.cyclic(count, out, |s, p, body| {
                            let d = s.digits(&p, &extents)?;
                            let idx = s.offset(&starts, &d)?;
                            let vd = s.digits(&p, &vext)?;
                            let vidx = s.offset(&vstarts, &vd)?;
                            let v = s.load(vbuf, &vidx, body)?;
                            s.atomic(op, dst.buffer, &idx, v, body)
                        })
                    }
                }
            }
            _ => Err(self.malformed("not a cooperative statement")),
        }
    }

    /// Binds a `parallel` (or distributed) index variable to a register.
    fn bind_index_var(
        &mut self,
        var: Handle<ir::Var>,
        value: Expr,
        range: (i64, i64),
        out: &mut Vec<Stmt>,
    ) {
        let dtype = self.f.vars[var].dtype;
        let value = if dtype == DType::I32 {
            value
        } else {
            Expr::cast(dtype, value)
        };
        let name = self.claim(&self.f.vars[var].name);
        let r = self.add_reg(name, dtype, RegisterKind::Scalar);
        self.vars.insert(var, reg_expr(r, dtype));
        self.ranges.insert(var, range);
        self.assign(out, r, value);
    }

    fn atomic(
        &mut self,
        op: ir::AtomicOp,
        buffer: Handle<ir::Buffer>,
        idx: &[Index],
        value: Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let dtype = self.f.buffers[buffer].dtype;
        let (dst, index, guard) = self.address(buffer, idx)?;
        let MemRef::Global(param) = dst else {
            return Err(self.unsupported(format!("`{}` into an on-chip buffer", op.name())));
        };
        let value = if value.dtype == dtype {
            value
        } else {
            Expr::cast(dtype, value)
        };
        out.push(self.stmt(StmtKind::Atomic {
            op,
            dst: param,
            index,
            value,
            guard: guard.map(|cond| Guard {
                cond,
                otherwise: GuardElse::Skip,
            }),
        }));
        Ok(())
    }

    pub(super) fn shared_of(&self, buffer: Handle<ir::Buffer>) -> Result<SharedId> {
        match self.mem(buffer)? {
            Mem::Shared { id, .. } => Ok(id),
            Mem::Global { .. } => Err(self.unsupported("a reduce or cumsum of a global buffer")),
        }
    }

    fn cumsum(
        &mut self,
        src: Handle<ir::Buffer>,
        dst: Handle<ir::Buffer>,
        dim: usize,
        reverse: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let sshape = self.const_shape(src)?;
        let dshape = self.const_shape(dst)?;
        if dim >= sshape.len() || non_unit(&sshape) != non_unit(&dshape) {
            return Err(self.malformed("cumsum shapes disagree"));
        }
        let (sd, dd) = (self.f.buffers[src].dtype, self.f.buffers[dst].dtype);
        let acc_t = if sd.is_float() || dd.is_float() {
            DType::F64
        } else {
            DType::I64
        };
        let outer: i64 = sshape[..dim].iter().product();
        let len = sshape[dim];
        let inner: i64 = sshape[dim + 1..].iter().product();
        let (sid, did) = (self.shared_of(src)?, self.shared_of(dst)?);
        let layouts = (self.arranged(src), self.arranged(dst));
        self.cyclic(outer * inner, out, |s, q, body| {
            let acc = s.temp("acc", acc_t);
            s.assign(body, acc, Expr::literal(Literal::of(acc_t, 0.0)));
            let o = s.bin(BinaryOp::FloorDiv, q.clone(), lit_i32(inner))?;
            let i = s.bin(BinaryOp::FloorMod, q, lit_i32(inner))?;
            let base = s.bin(BinaryOp::Mul, o, lit_i32(len * inner))?;
            let base = s.bin(BinaryOp::Add, base, i)?;
            let rname = s.fresh("r");
            let r = s.add_reg(rname, DType::I32, RegisterKind::Loop);
            let rr = reg_expr(r, DType::I32);
            let pos = if reverse {
                s.bin(BinaryOp::Sub, lit_i32(len - 1), rr)?
            } else {
                rr
            };
            let off = s.bin(BinaryOp::Mul, pos, lit_i32(inner))?;
            let index = s.bin(BinaryOp::Add, base, off)?;
            let mut rb = Vec::new();
            let x = s.temp("v", sd);
            rb.push(s.stmt(StmtKind::Load {
                width: 1,
                dst: RegRef::Scalar(x),
                src: MemRef::Shared(sid),
                index: s.element(layouts.0.as_ref(), index.clone())?,
                guard: None,
            }));
            let next = s.bin(
                BinaryOp::Add,
                reg_expr(acc, acc_t),
                Expr::cast(acc_t, reg_expr(x, sd)),
            )?;
            s.assign(&mut rb, acc, next);
            let res = s.temp("s", dd);
            s.assign(&mut rb, res, Expr::cast(dd, reg_expr(acc, acc_t)));
            rb.push(s.stmt(StmtKind::Store {
                width: 1,
                dst: MemRef::Shared(did),
                index: s.element(layouts.1.as_ref(), index)?,
                src: RegRef::Scalar(res),
                guard: None,
            }));
            body.push(s.stmt(StmtKind::For {
                var: r,
                start: lit_i32(0),
                count: lit_i32(len),
                step: lit_i32(1),
                unroll: Unroll::None,
                body: rb,
            }));
            Ok(())
        })
    }

    // ----- per-thread code (inside `parallel`) -----------------------------

    fn thread_block(&mut self, block: &ir::Block, out: &mut Vec<Stmt>) -> Result<()> {
        let saved = self.span;
        for (stmt, span) in block.iter() {
            self.span = span;
            self.thread_stmt(stmt, out)?;
        }
        self.span = saved;
        Ok(())
    }

    fn thread_stmt(&mut self, stmt: &ir::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        match stmt {
            ir::Stmt::Store { buffer, value, .. }
                if self.spread.contains_key(buffer) || self.resident.contains_key(buffer) =>
            {
                let dst = if self.resident.contains_key(buffer) {
                    self.resident_elem(*buffer)?
                } else {
                    self.spread_elem(*buffer)?
                };
                let v = self.expr(*value, out)?;
                let dtype = self.f.buffers[*buffer].dtype;
                let v = if v.dtype == dtype {
                    v
                } else {
                    Expr::cast(dtype, v)
                };
                out.push(self.stmt(StmtKind::Assign { dst, value: v }));
                Ok(())
            }
            ir::Stmt::Let { var, value } => {
                let v = self.expr(*value, out)?;
                self.bind_let(*var, *value, v, out);
                Ok(())
            }
            ir::Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                let mut idx = Vec::new();
                for &i in indices {
                    idx.push(self.index(i, out)?);
                }
                let v = self.expr(*value, out)?;
                let site = AccessSite::Store {
                    span: self.span,
                    buffer: *buffer,
                };
                self.trusting(&[(site, *buffer)], |s| s.store(*buffer, &idx, v, out))
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(*cond, out)?;
                let mut t = Vec::new();
                self.thread_block(then, &mut t)?;
                let mut e = Vec::new();
                self.thread_block(otherwise, &mut e)?;
                out.push(self.stmt(StmtKind::If {
                    cond: c,
                    then_body: t,
                    else_body: (!e.is_empty()).then_some(e),
                }));
                Ok(())
            }
            ir::Stmt::For {
                var,
                start,
                extent,
                body,
                ..
            } => {
                let s = to_i32(self.expr(*start, out)?);
                let n = self.expr(*extent, out)?;
                let (r, prologue) = self.loop_var(*var, *start, *extent)?;
                let mut inner = prologue;
                self.thread_block(body, &mut inner)?;
                out.push(self.stmt(StmtKind::For {
                    var: r,
                    start: s,
                    count: n,
                    step: lit_i32(1),
                    unroll: Unroll::None,
                    body: inner,
                }));
                Ok(())
            }
            ir::Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                // A nested nest runs serially in the thread, row-major.
                let mut ext = Vec::new();
                for &e in extents {
                    ext.push(
                        self.f
                            .as_const_int(e)
                            .ok_or_else(|| self.malformed("parallel extents must be constants"))?,
                    );
                }
                let count: i64 = ext.iter().product();
                if count <= 0 {
                    return Ok(());
                }
                let name = self.fresh("p");
                let p = self.add_reg(name, DType::I32, RegisterKind::Loop);
                let d = self.digits(&reg_expr(p, DType::I32), &ext)?;
                let mut inner = Vec::new();
                for ((&v, ix), &n) in vars.iter().zip(d).zip(&ext) {
                    self.bind_index_var(v, ix.expr, (0, n - 1), &mut inner);
                }
                self.thread_block(body, &mut inner)?;
                out.push(self.stmt(StmtKind::For {
                    var: p,
                    start: lit_i32(0),
                    count: lit_i32(count),
                    step: lit_i32(1),
                    unroll: Unroll::None,
                    body: inner,
                }));
                Ok(())
            }
            ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => {
                let op = atomic_op(stmt);
                let (starts, extents) = self.region(dst, out)?;
                let count: i64 = extents.iter().product();
                let (v, vregion) = match value {
                    AtomicValue::Scalar(e) => (Some(self.expr(*e, out)?), None),
                    AtomicValue::Region(r) => (None, Some((r.buffer, self.region(r, out)?))),
                };
                let zero = vec![
                    Index {
                        expr: lit_i32(0),
                        range: Some((0, 0)),
                    };
                    extents.len()
                ];
                if count == 1 {
                    let idx = self.offset(&starts, &zero)?;
                    let val = match (v, vregion) {
                        (Some(v), _) => v,
                        (None, Some((b, (vs, vext)))) => {
                            let vz = vec![
                                Index {
                                    expr: lit_i32(0),
                                    range: Some((0, 0)),
                                };
                                vext.len()
                            ];
                            let vidx = self.offset(&vs, &vz)?;
                            self.load(b, &vidx, out)?
                        }
                        _ => return Err(self.malformed("atomic without a value")),
                    };
                    return self.atomic(op, dst.buffer, &idx, val, out);
                }
                Err(self.unsupported(format!("a multi-element `{}` inside `parallel`", op.name())))
            }
            ir::Stmt::Assume { .. } => Ok(()),
            ir::Stmt::DeviceAssert { cond } => self.device_assert(*cond, out),
            ir::Stmt::Barrier
            | ir::Stmt::BarrierArrive { .. }
            | ir::Stmt::BarrierWait { .. }
            | ir::Stmt::AllocBarrier { .. } => Err(self.unsupported("a barrier inside `parallel`")),
            ir::Stmt::Role { .. } => Err(self.unsupported("`T.ws` inside `parallel`")),
            ir::Stmt::WarpReduce { .. } => Err(self.unsupported(
                "a warp reduction inside `parallel` (each lane of TileLang's warp reduction is \
                 one thread)",
            )),
            ir::Stmt::Alloc { buffer, init } => self.iteration_alloc(*buffer, *init, out),
            ir::Stmt::Kernel { .. } => Err(self.unsupported("a kernel inside `parallel`")),
            ir::Stmt::Copy { .. }
            | ir::Stmt::Gemm { .. }
            | ir::Stmt::Fill { .. }
            | ir::Stmt::Reduce { .. }
            | ir::Stmt::Cumsum { .. } => {
                Err(self.unsupported("a tile operation inside `parallel`"))
            }
        }
    }
}

/// The combining operation of an atomic statement (`Add` for `AtomicAdd`).
fn atomic_op(stmt: &ir::Stmt) -> ir::AtomicOp {
    match stmt {
        ir::Stmt::Atomic { op, .. } => *op,
        _ => ir::AtomicOp::Add,
    }
}

fn non_unit(extents: &[i64]) -> Vec<i64> {
    extents.iter().copied().filter(|&e| e != 1).collect()
}
