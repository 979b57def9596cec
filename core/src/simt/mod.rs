//! The SIMT interpreter: runs thread-level IR ([`crate::thread`]) thread by
//! thread on the CPU and reports the hazards a wrong lowering would hit on
//! silicon. It is the safety net under the lowering passes: a kernel that
//! passes here computes what its text says on every thread, with every
//! shared-memory access ordered by a barrier.
//!
//! # Running a kernel
//! [`run`] verifies the kernel against the target ([`crate::thread::verify`]),
//! binds the scalar parameters — from [`SimtOptions::symbols`] and from the
//! argument shapes (a dimension written as a scalar parameter takes the
//! tensor's extent; both sources must agree) — and evaluates the grid.
//! Arguments are [`Tensor`]s, one per global parameter in order, with the
//! declared dtype and shape; they are updated in place. Blocks run one after
//! another, x fastest, then y, then z.
//!
//! # Execution model
//! A block runs in lockstep: the statements execute in order for a group
//! of the block's threads under an *active mask*. An assignment, load or
//! store runs for each active thread in thread order. `for` evaluates
//! start, count and step per thread once, then runs iteration `i` for the
//! threads whose count exceeds `i`, while any does. An `if` whose
//! condition splits the active threads forks them into a group running
//! `then` and one running `else`, the `then` group first; they reconverge
//! after it when the split cuts through an issue group (a warp, or a
//! warpgroup where matrix atoms issue by warpgroup), and otherwise each
//! continues on its own, as separate warps do on hardware. A `barrier`
//! completes once every thread still in the kernel has reached one. A group that reaches a wait that cannot complete yet
//! (`mbarrier_wait`, `bar_sync`) stops and the other groups run until it
//! can continue, so warp roles that wait for each other run as they would
//! on hardware (`sched.rs` has the rules). Without such waits this is the
//! plain lockstep order. Because control flow is structured, this is exact
//! for code without data races, and the checks below catch those.
//!
//! Registers start as NaN (floats) or the pattern `0xDEADBEEFDEADBEEF`
//! wrapped to the type, as do shared buffers, so that reading data nobody
//! wrote shows up in results. Expression semantics are the reference
//! interpreter's (`value.rs`).
//!
//! - **Barrier**: every thread of the block must be active, or the run fails
//!   with "barrier in divergent code"; it starts a new *epoch*.
//! - **Shuffle**: values are computed for every active lane first, then each
//!   active lane reads its source lane within its `width`-lane group of its
//!   SIMT group (`lane_id = thread % width of the target`). `idx` reads lane
//!   `group + arg mod width`; `xor`, `up` and `down` read `lane ^ arg`,
//!   `lane - arg`, `lane + arg`, and return the lane's own value when that
//!   lies outside its group. Reading an inactive (or nonexistent) lane is
//!   an error.
//! - **Matrix atoms** (`mma.rs`): each issuing group must be wholly active
//!   or wholly inactive; operands are gathered through the atom's fragment
//!   layouts, computed in `f64` and rounded once into the accumulator type.
//! - **Atomic add**: runs per active thread in thread order;
//!   `dst = round(dst + value)`.
//! - **Async copies**: a copy reads global memory when issued and is *in
//!   flight* until a `wait_group` of the issuing thread covers its group
//!   (groups are per thread: `wait_group N` completes every committed group
//!   but the `N` most recent). It then lands as a write by the issuing
//!   thread in the current epoch. Uncommitted copies are never completed by
//!   a wait; copies still in flight at the end of the kernel are dropped.
//! - **Phased barriers** (`mbarrier_*`): a barrier object counts the
//!   arrivals and transaction bytes its current phase still expects; the
//!   phase completes when both reach zero. `mbarrier_wait` for a parity
//!   succeeds while the barrier's current phase has the other parity (the
//!   phase with that parity completed). A wait that does not succeed stops
//!   its group; when no group can run any more, the first stopped wait is
//!   reported ("mbarrier wait never completes").
//! - **Numbered barriers** (`bar_sync`, `bar_arrive`): a round collects
//!   the arrivals of whole warps until it has the statement's thread count;
//!   then every `bar_sync` thread of the round goes on, having acquired
//!   every arrival (below), and the next round starts. A round that cannot
//!   fill is reported when nothing else can run ("numbered barrier never
//!   completes").
//! - **Bulk tensor copies** (`tma_load`): the box lands at once, through
//!   the map's swizzle, with zeros outside the buffer; its bytes count
//!   against the barrier's current phase, and its elements are tagged with
//!   that phase. A thread may read a tagged element only after one of its
//!   own `mbarrier_wait`s saw the phase complete ("read before mbarrier
//!   wait"); such reads need no `barrier`.
//! - **Release through barriers**: each thread has a release clock that its
//!   arrivals advance; a completed phase keeps the clocks of the arrivals
//!   it collected, and a wait that sees it acquires them (a completed
//!   `bar_sync` round the same). A write by `w` after reads by other
//!   threads in the same epoch is ordered when, for each reader, `w`
//!   acquired an arrival of that reader made after the read; a read or
//!   write after another thread's write likewise. An `async_mma` keeps reading its operands until it retires, so
//!   its reads count as made at the `async_mma_wait` that retires it. Up to
//!   four readers of an element are tracked this way; with more, only a
//!   `barrier` orders a write after them.
//!
//! # Hazards and faults
//! Every shared element has a shadow record: the last writer thread, its
//! epoch and statement; the threads that read it in the current epoch; and
//! the issuer of an in-flight copy. Shared buffers have one element type
//! and never alias, so element granularity is byte granularity here.
//! - a read by thread `t` of an element another thread wrote in the same
//!   epoch, unless `t` acquired an arrival the writer made after the
//!   write: **race** (read after write), naming the buffer, the element,
//!   both threads and both statements;
//! - a write by `t` of an element another thread wrote in the same epoch
//!   with a *different* value, unless ordered the same way: **race**
//!   (write-write);
//! - a write by `t` of an element another thread read in the same epoch,
//!   unless barrier waits of `t` ordered it after the read (above):
//!   **race** (write after read);
//! - a read or a write of an element a `tma_load` wrote, by a thread
//!   whose own `mbarrier_wait` has not seen the copy's phase complete:
//!   **read (write) before mbarrier wait** (a later `tma_load` over it is
//!   ordered through the stage's readers instead);
//! - a read of an element with a copy in flight: **read before cp.async
//!   wait**; a write to it, or a new copy to it, is an error too; issuing a
//!   copy over an element another thread accessed in the current epoch is a
//!   race, since the copy may land at any time before the wait;
//! - out-of-bounds shared and local (register array) accesses; a global
//!   access that happens (no guard, or a true predicate) and is out of
//!   bounds; a vector access whose element index is not a multiple of its
//!   width (alignment);
//! - integer division by zero, a zero loop step, and the step limits.
//!
//! # Limits
//! [`SimtOptions`] bounds a run: statement steps and thread steps (each
//! statement execution counts the block's threads) over every block, and
//! the bytes of the arguments and one block's storage. Storage past the
//! memory limit, and a grid whose blocks and loops of fixed trip count
//! (up to the first statement that may stop the block) surely pass the
//! step limits, are refused before the first block
//! ([`SimtError::MemoryLimit`], [`SimtError::WorkLimit`]); other runaway
//! loops stop where they pass a limit.
//!
//! Global memory is not race-checked (blocks run sequentially, and within
//! a block global accesses happen in lockstep order). Every execution error
//! carries a [`Location`]: kernel, block, thread, statement path and text.

mod banks;
mod error;
mod exec;
mod ldmatrix;
mod mma;
mod sched;
mod value;

pub use error::{ExecErrorKind, Location, SimtError};

use std::collections::{BTreeMap, HashMap};

use crate::interp::Tensor;
use crate::target::TargetDescription;
use crate::thread::{Dim, Kernel, Param, verify_kernel};
use exec::{Ctx, Machine, eval_uniform, index_statements};

/// Settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimtOptions {
    /// Values of scalar parameters by name (without `%`).
    pub symbols: BTreeMap<String, i64>,
    /// Most statement executions (counted once per statement per block,
    /// plus once per loop iteration, plus once per block) before the run
    /// fails.
    pub step_limit: u64,
    /// Most thread steps: each statement execution counts the block's
    /// threads, as it costs the interpreter work for each. Past it the run
    /// fails ([`ExecErrorKind::WorkLimit`]).
    pub work_limit: u64,
    /// Most bytes of storage: the arguments (8 bytes an element) and one
    /// block's registers and shared memory with its race-detection records
    /// (blocks run one at a time). Checked before the run
    /// ([`SimtError::MemoryLimit`]).
    pub memory_limit: u64,
}

/// The default [`SimtOptions::step_limit`].
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 32;
/// The default [`SimtOptions::work_limit`]: 2^29 thread steps, about 45 s
/// on a busy two-core machine (some 12 million thread steps a second).
pub const DEFAULT_WORK_LIMIT: u64 = 1 << 29;
/// The default [`SimtOptions::memory_limit`]: 512 MiB, as the reference
/// interpreter's.
pub const DEFAULT_MEMORY_LIMIT: u64 = crate::interp::DEFAULT_MEMORY_LIMIT;

impl Default for SimtOptions {
    fn default() -> Self {
        SimtOptions {
            symbols: BTreeMap::new(),
            step_limit: DEFAULT_STEP_LIMIT,
            work_limit: DEFAULT_WORK_LIMIT,
            memory_limit: DEFAULT_MEMORY_LIMIT,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub blocks: u64,
    /// Statement executions (per block, not per thread) and loop iterations.
    pub steps: u64,
    pub barriers: u64,
    /// Shuffle statements executed.
    pub shuffles: u64,
    /// Matrix atoms issued (one per issuing group).
    pub mma: u64,
    /// Warp-wide matrix loads (`ldmatrix`) executed (one per warp).
    pub matrix_loads: u64,
    /// Warp-wide matrix stores (`stmatrix`) executed (one per warp).
    pub matrix_stores: u64,
    /// Per-thread vector moves and copies.
    pub global_loads: u64,
    pub global_stores: u64,
    pub shared_loads: u64,
    pub shared_stores: u64,
    pub async_copies: u64,
    pub atomics: u64,
    /// Passes of the shared-memory banks that the warp-wide shared loads
    /// need, by the target's bank facts (`banks.rs`; 0 when the target
    /// describes no banks) ...
    pub shared_load_passes: u64,
    /// ... and what they would need without bank conflicts.
    pub shared_load_passes_ideal: u64,
    /// The same for shared stores and async copies into shared memory.
    pub shared_store_passes: u64,
    pub shared_store_passes_ideal: u64,
}

impl Stats {
    /// Adds another run's counts (kernels of one module, say).
    pub fn add(&mut self, other: &Stats) {
        let Stats {
            blocks,
            steps,
            barriers,
            shuffles,
            mma,
            matrix_loads,
            matrix_stores,
            global_loads,
            global_stores,
            shared_loads,
            shared_stores,
            async_copies,
            atomics,
            shared_load_passes,
            shared_load_passes_ideal,
            shared_store_passes,
            shared_store_passes_ideal,
        } = other;
        self.blocks += blocks;
        self.steps += steps;
        self.barriers += barriers;
        self.shuffles += shuffles;
        self.mma += mma;
        self.matrix_loads += matrix_loads;
        self.matrix_stores += matrix_stores;
        self.global_loads += global_loads;
        self.global_stores += global_stores;
        self.shared_loads += shared_loads;
        self.shared_stores += shared_stores;
        self.async_copies += async_copies;
        self.atomics += atomics;
        self.shared_load_passes += shared_load_passes;
        self.shared_load_passes_ideal += shared_load_passes_ideal;
        self.shared_store_passes += shared_store_passes;
        self.shared_store_passes_ideal += shared_store_passes_ideal;
    }
}

/// Zeroed tensors for the global parameters of `kernel` past the first
/// `given.len()`: the function's scratch buffers (`T.alloc_global` beside
/// its kernels), which every kernel of the function takes after the
/// function's own parameters and a host allocates for the launch. Their
/// extents are computed from the sizes `given` and `options` bind. A host
/// passes the same tensors to every kernel of the function.
pub fn scratch(
    kernel: &Kernel,
    given: &[Tensor],
    options: &SimtOptions,
) -> Result<Vec<Tensor>, SimtError> {
    let bound = bind(kernel, given, options)?;
    let mut out = Vec::new();
    for (_, g) in kernel.global_params().skip(given.len()) {
        let mut shape = Vec::with_capacity(g.shape.len());
        for dim in &g.shape {
            let extent = match dim {
                Dim::Const(c) => i64::try_from(*c).unwrap_or(i64::MAX),
                Dim::Param(p) => bound.get(p.index()).copied().unwrap_or(-1),
                Dim::Expr(e) => eval_uniform(e, &bound).map_or(-1, |v| v.as_i64()),
            };
            let extent = usize::try_from(extent).map_err(|_| SimtError::Arg {
                param: g.name.clone(),
                detail: format!("scratch buffer extent {extent} is not a size"),
            })?;
            shape.push(extent);
        }
        let elements = shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e));
        if elements.is_none_or(|n| n > MAX_SCRATCH_ELEMENTS) {
            return Err(SimtError::TooLarge {
                what: format!("scratch buffer `{}`", g.name),
                size: elements.map_or(u64::MAX, |n| n as u64),
                limit: MAX_SCRATCH_ELEMENTS as u64,
            });
        }
        out.push(Tensor::zeros(g.dtype, shape));
    }
    Ok(out)
}

/// The most elements one scratch buffer may hold in the interpreter.
const MAX_SCRATCH_ELEMENTS: usize = 1 << 26;

/// Runs `kernel` on `args` (one tensor per global parameter, in order).
pub fn run(
    kernel: &Kernel,
    target: &TargetDescription,
    args: &mut [Tensor],
    options: &SimtOptions,
) -> Result<Stats, SimtError> {
    verify_kernel(kernel, target).map_err(|e| SimtError::Verify(Box::new(e)))?;
    let simt = target.simt_width().unwrap_or(1);
    check_sizes(kernel)?;
    let symbols = bind(kernel, args, options)?;
    let globals: Vec<usize> = kernel.global_params().map(|(p, _)| p.index()).collect();
    if globals.len() != args.len() {
        return Err(SimtError::ArgCount {
            kernel: kernel.name.clone(),
            expected: globals.len(),
            found: args.len(),
        });
    }
    let mut arg_of = vec![None; kernel.params.len()];
    for (a, &p) in globals.iter().enumerate() {
        arg_of[p] = Some(a);
    }
    let mut grid = [0i64; 3];
    for (index, e) in kernel.grid.iter().enumerate() {
        let v = eval_uniform(e, &symbols)
            .map_err(|_| SimtError::Grid { index, value: -1 })?
            .as_i64();
        if !(0..=1 << 31).contains(&v) {
            return Err(SimtError::Grid { index, value: v });
        }
        grid[index] = v;
    }
    check_memory(kernel, args, options)?;
    check_work(kernel, &grid, &symbols, options)?;
    let mut stmts = HashMap::new();
    index_statements(kernel, &kernel.body, &mut Vec::new(), &mut stmts);
    let cx = Ctx {
        k: kernel,
        target,
        simt,
        symbols,
        arg_of,
        stmts,
        step_limit: options.step_limit,
        work_limit: options.work_limit,
        work: std::cell::Cell::new(0),
    };
    let mut stats = Stats::default();
    let mut atoms = HashMap::new();
    // Blocks run one at a time: the loop below counts a step for each.
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                stats.steps += 1;
                if stats.steps > options.step_limit {
                    return Err(SimtError::TooLarge {
                        what: "the grid".to_string(),
                        size: stats.blocks,
                        limit: options.step_limit,
                    });
                }
                let mut machine = Machine::new(&cx, args, &mut stats, &mut atoms, [x, y, z]);
                sched::run_body(&mut machine, &kernel.body)?;
                stats.blocks += 1;
            }
        }
    }
    Ok(stats)
}

/// The most threads per block, elements of one shared buffer, and register
/// elements (threads × length) of one register the interpreter allocates.
const MAX_THREADS: u64 = 1 << 16;
const MAX_ELEMENTS: u64 = 1 << 28;

/// Refuses a run whose storage passes [`SimtOptions::memory_limit`]: the
/// arguments and one block's registers and shared memory, in the bytes the
/// interpreter really uses for them.
fn check_memory(kernel: &Kernel, args: &[Tensor], options: &SimtOptions) -> Result<(), SimtError> {
    let arguments = args
        .iter()
        .fold(0u64, |n, a| n.saturating_add(a.len() as u64));
    let arguments = arguments.saturating_mul(crate::interp::ELEMENT_BYTES);
    let threads = u64::from(kernel.threads);
    let registers = kernel.registers.iter().fold(0u64, |n, r| {
        n.saturating_add(threads.saturating_mul(u64::from(r.len())))
    });
    let registers = registers.saturating_mul(exec::REGISTER_BYTES);
    let shared = kernel
        .shared
        .iter()
        .fold(0u64, |n, s| n.saturating_add(s.len));
    let shared = shared.saturating_mul(exec::SHARED_ELEMENT_BYTES);
    let bytes = arguments.saturating_add(registers).saturating_add(shared);
    if bytes > options.memory_limit {
        return Err(SimtError::MemoryLimit {
            bytes,
            limit: options.memory_limit,
            detail: format!(
                "arguments {arguments}, registers {registers}, shared memory {shared} with its race records"
            ),
        });
    }
    Ok(())
}

/// Refuses a run that surely passes the step or thread-step limits: each
/// block takes a step, and the statements of the kernel's body that run
/// whatever the data — up to the first that may stop the block early, with
/// the bodies of loops whose trip count is fixed — a step each.
fn check_work(
    kernel: &Kernel,
    grid: &[i64; 3],
    symbols: &[i64],
    options: &SimtOptions,
) -> Result<(), SimtError> {
    let blocks = grid
        .iter()
        .fold(1u64, |n, &g| n.saturating_mul(g.max(0) as u64));
    if blocks == 0 {
        return Ok(());
    }
    let per_block = fixed_steps(&kernel.body, symbols).0.saturating_add(1);
    let steps = blocks.saturating_mul(per_block);
    if steps > options.step_limit {
        return Err(SimtError::WorkLimit {
            what: "steps",
            needed: steps,
            limit: options.step_limit,
        });
    }
    let work = steps.saturating_mul(u64::from(kernel.threads));
    if work > options.work_limit {
        return Err(SimtError::WorkLimit {
            what: "thread steps",
            needed: work,
            limit: options.work_limit,
        });
    }
    Ok(())
}

/// The steps `body` surely takes, and whether it surely runs to its end.
fn fixed_steps(body: &[crate::thread::Stmt], symbols: &[i64]) -> (u64, bool) {
    use crate::thread::StmtKind;
    let mut steps = 0u64;
    for s in body {
        match &s.kind {
            StmtKind::For { count, body, .. } => {
                steps = steps.saturating_add(1);
                let Ok(count) = eval_uniform(count, symbols) else {
                    return (steps, false);
                };
                let count = count.as_i64().max(0) as u64;
                if count == 0 {
                    continue;
                }
                let (inner, whole) = fixed_steps(body, symbols);
                steps = steps.saturating_add(count.saturating_mul(inner.saturating_add(1)));
                if !whole {
                    return (steps, false);
                }
            }
            // Which branch runs depends on the data; the block goes on
            // after it unless a branch may stop it.
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                steps = steps.saturating_add(1);
                let branches = then_body.iter().chain(else_body.iter().flatten());
                if branches.clone().any(may_stop) {
                    return (steps, false);
                }
            }
            _ if may_stop(s) => return (steps.saturating_add(1), false),
            _ => steps = steps.saturating_add(1),
        }
    }
    (steps, true)
}

/// Whether `s` may end the run or hold its threads back: a trap or a wait
/// on other threads, in it or in its bodies.
fn may_stop(s: &crate::thread::Stmt) -> bool {
    use crate::thread::StmtKind;
    match &s.kind {
        StmtKind::Trap | StmtKind::MbarrierWait { .. } | StmtKind::NamedBarrier { .. } => true,
        StmtKind::For { body, .. } => body.iter().any(may_stop),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => then_body
            .iter()
            .chain(else_body.iter().flatten())
            .any(may_stop),
        _ => false,
    }
}

/// Refuses kernels whose storage the interpreter could not allocate.
fn check_sizes(kernel: &Kernel) -> Result<(), SimtError> {
    let too_large = |what: String, size: u64, limit: u64| {
        if size > limit {
            Err(SimtError::TooLarge { what, size, limit })
        } else {
            Ok(())
        }
    };
    let threads = u64::from(kernel.threads);
    too_large("the block".to_string(), threads, MAX_THREADS)?;
    for s in &kernel.shared {
        too_large(format!("shared buffer `%{}`", s.name), s.len, MAX_ELEMENTS)?;
    }
    for r in &kernel.registers {
        let size = threads.saturating_mul(u64::from(r.len()));
        too_large(format!("register `%{}`", r.name), size, MAX_ELEMENTS)?;
    }
    Ok(())
}

/// The value of every scalar parameter, by parameter index.
fn bind(kernel: &Kernel, args: &[Tensor], options: &SimtOptions) -> Result<Vec<i64>, SimtError> {
    let mut values: Vec<Option<i64>> = vec![None; kernel.params.len()];
    for (name, &v) in &options.symbols {
        let index = kernel
            .params
            .iter()
            .position(|p| matches!(p, Param::Scalar { name: n, .. } if n == name))
            .ok_or_else(|| SimtError::UnknownSymbol(name.clone()))?;
        values[index] = Some(v);
    }
    for ((_, g), arg) in kernel.global_params().zip(args) {
        let detail = if arg.dtype != g.dtype {
            Some(format!("has dtype {}, expected {}", arg.dtype, g.dtype))
        } else if arg.shape.len() != g.shape.len() {
            Some(format!(
                "has {} dimensions, expected {}",
                arg.shape.len(),
                g.shape.len()
            ))
        } else {
            arg.check().err()
        };
        if let Some(detail) = detail {
            return Err(SimtError::Arg {
                param: g.name.clone(),
                detail,
            });
        }
        for (dim, &extent) in g.shape.iter().zip(&arg.shape) {
            match dim {
                Dim::Const(c) if *c != extent as u64 => {
                    return Err(SimtError::Arg {
                        param: g.name.clone(),
                        detail: format!("has extent {extent} where {c} is declared"),
                    });
                }
                // Checked below, once every size is bound.
                Dim::Const(_) | Dim::Expr(_) => {}
                &Dim::Param(p) => {
                    let slot = values
                        .get_mut(p.index())
                        .ok_or_else(|| SimtError::UnknownSymbol(format!("parameter {}", p.0)))?;
                    match *slot {
                        Some(v) if v != extent as i64 => {
                            return Err(SimtError::SymbolConflict {
                                name: kernel.param_name(p).to_string(),
                                first: v,
                                second: extent as i64,
                            });
                        }
                        _ => *slot = Some(extent as i64),
                    }
                }
            }
        }
    }
    let bound: Vec<i64> = kernel
        .params
        .iter()
        .zip(values)
        .map(|(p, v)| match (p, v) {
            (Param::Scalar { name, dtype }, Some(v)) => {
                if dtype.wrap_i64(v) != v {
                    return Err(SimtError::SymbolConflict {
                        name: name.clone(),
                        first: v,
                        second: dtype.wrap_i64(v),
                    });
                }
                Ok(v)
            }
            (Param::Scalar { name, .. }, None) => Err(SimtError::UnboundSymbol(name.clone())),
            (Param::Global(_), _) => Ok(0),
        })
        .collect::<Result<_, _>>()?;
    // Compound extents: computed from the sizes, then compared.
    for ((_, g), arg) in kernel.global_params().zip(args) {
        for (dim, &extent) in g.shape.iter().zip(&arg.shape) {
            let Dim::Expr(e) = dim else { continue };
            let declared = eval_uniform(e, &bound).map(|v| v.as_i64());
            if declared.as_ref().ok() != Some(&(extent as i64)) {
                let detail = match declared {
                    Ok(v) => format!("has extent {extent} where the sizes give {v}"),
                    Err(_) => format!(
                        "has extent {extent}; its declared extent cannot be computed from the sizes"
                    ),
                };
                return Err(SimtError::Arg {
                    param: g.name.clone(),
                    detail,
                });
            }
        }
    }
    Ok(bound)
}
