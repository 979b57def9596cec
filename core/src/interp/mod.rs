//! The reference interpreter: runs tile-level IR on the CPU. It is the
//! oracle every backend is checked against, so it favours exact, documented
//! semantics over speed, while staying fast enough for corpus-sized kernels.
//!
//! # Running a function
//! [`run`] takes one [`Tensor`] per parameter, in order. It first binds the
//! symbolic sizes ([`crate::ir::VarKind::Symbolic`]): an extent of a
//! parameter that is a bare symbol takes the matching tensor extent, a
//! literal extent must match, and a compound extent (`M * 2`) is evaluated
//! once the symbols are bound and must match. Dtypes must match exactly.
//! [`bind_symbols`] does the binding alone; [`param_shapes`] goes the other
//! way for a tool that knows the symbol values and must allocate the
//! arguments. [`run_with`] also accepts explicit symbol values and a step
//! limit ([`RunOptions`]).
//!
//! The whole body is then compiled (every expression into closures, once)
//! and executed; the argument tensors are updated in place. Compiling first
//! reports unsupported constructs and unbound symbols before anything runs.
//!
//! # Statements
//! The function body runs its statements in order. A `kernel` runs its body
//! once per block, blocks in row-major order of the grid with the first grid
//! extent (x) fastest and the last slowest, binding the block variables. At
//! tile level the body describes what the block does as a whole, so it runs
//! once per block, not once per thread; a body that reads the kernel's
//! thread variable is per-thread code, which this interpreter does not run
//! (an [`InterpError::Unsupported`] error before anything executes), except
//! in an `if` on the thread variable (a thread-guarded region, run as
//! `guard.rs` describes: a branch with tile operations once, a branch of
//! scalar statements once per thread that takes it). A grid
//! with an extent below 1 launches no block. Kernels run one after another,
//! so a later kernel sees everything an earlier one wrote.
//!
//! `alloc` of a shared, fragment, local or var buffer creates fresh storage
//! every time it runs — so once per block — filled with NaN (floats) or the
//! bit pattern `0xDEADBEEFDEADBEEF` wrapped to the type (integers; bool
//! reads as true), so that reading data nobody wrote shows up; a `var`
//! buffer with an `init` value starts at that value instead. `alloc` of a
//! global buffer (a `T.empty` output that is not a parameter, or scratch)
//! creates zeroed storage the first time it runs and keeps it afterwards.
//!
//! `let` binds its variable for the rest of the block. Every `for` loop —
//! serial, unrolled, vectorized or pipelined — is a serial loop over
//! `start + 0 .. start + extent` (start and extent evaluated once; an extent
//! below 1 runs nothing). A `parallel` nest runs its iterations sequentially
//! in row-major order (last variable fastest). `if` runs one branch. A
//! `barrier` does nothing (blocks run whole and one at a time). `assume`
//! evaluates its condition and fails the run if it is false.
//!
//! # Out-of-bounds accesses
//! Following TileLang: for a *global* buffer, an element read outside the
//! buffer reads 0 and an element written outside is skipped, both in scalar
//! loads and stores and inside tile-op regions. For shared, fragment, local
//! and var buffers, an out-of-bounds scalar load or store is an error
//! ([`InterpError::OutOfBounds`], naming the buffer, the indices and the
//! shape), while elements of a tile-op region outside the buffer read as 0
//! and are skipped as for global buffers.
//!
//! # Tile operations
//! - `copy src -> dst`: the regions' extents must agree after dropping unit
//!   extents; elements pair up in row-major order and convert to the
//!   destination type as a cast does. All reads happen before any write.
//! - `gemm`: `a` is M×K (K×M with `transpose_A`), `b` is K×N (N×K with
//!   `transpose_B`), `c` is M×N. An operand's matrix is its region's last two
//!   extents when every other extent is 1, else its two non-unit extents.
//!   `c = round_c(c_old + Σ_k a·b)`, or `round_c(Σ_k a·b)` when
//!   `clear_accum` is true, with the sum accumulated in `f64` in increasing
//!   `k` (products of f16/bf16/f32 operands are exact in `f64`) and rounded
//!   once per `gemm` into `c`'s type.
//! - `fill`: the value converted to the destination type.
//! - `reduce` sum/max/min/abssum/absmax along `dim` of a whole buffer into a
//!   whole buffer of the source's shape without `dim` (unit extents aside; a
//!   1-D source gives one element). With `clear` the accumulator starts at
//!   the identity (0, -inf, +inf, 0, 0 for floats; for integer destinations
//!   the type's minimum and maximum for max and min), otherwise at the
//!   destination's current value. Floats accumulate in `f64` and are
//!   rounded once; NaN propagates through max and min. Integer reductions
//!   (integer source and destination) accumulate exactly and wrap once.
//! - `cumsum`: inclusive prefix sum along `dim`; with `reverse` the inclusive
//!   suffix sum. Accumulated in `f64` (exactly for integers), each output
//!   element rounded (wrapped) on its own.
//! - `atomic_add`: per element, the value is converted to the destination
//!   type (as a cast, like the hardware atomic's operand) and added:
//!   `dst[e] = round(dst[e] + cast(value[e]))`, the sum computed in `f64`
//!   and rounded for floats, wrapping for integers. A scalar value is
//!   broadcast to every element. Atomics run sequentially here.
//!
//! # Expressions and arithmetic
//! Values are stored as [`TensorData`] describes: floats as `f64` already
//! rounded to their type, integers as `i64` wrapped to their type. Float
//! arithmetic and math functions compute in `f64` and round once to the
//! result type with [`DType::round_f64`] (exact for `+ - * /` and `sqrt`;
//! within the host libm's accuracy for transcendental functions). `rsqrt` is
//! `1/sqrt(x)`, `sigmoid` is `1/(1+exp(-x))`, `round` rounds half to even,
//! `min`/`max` propagate NaN, floor division of floats is `floor(a/b)` and
//! floor modulo `a - floor(a/b)·b`. Float division by zero follows IEEE.
//!
//! Integer arithmetic wraps to the type; unsigned types compute on their bit
//! patterns (so `u64` is unsigned throughout). `/` truncates toward zero,
//! `//` and `%` (`floordiv`, `floormod`) round toward negative infinity;
//! integer division or modulo by zero is an error. A shift count outside
//! `0 .. bits` shifts everything out: `<<` gives 0, `>>` gives 0 or, for a
//! negative signed value, -1. Integer `pow` with a negative exponent
//! truncates `1 / a^|b|`. Comparisons give bool; `and`, `or` and `select`
//! evaluate lazily, so an out-of-bounds load in the branch not taken is not
//! an error.
//!
//! Casts: to a float type, round to nearest even (integers first convert to
//! `f64`, exactly below 2^53); float to integer truncates toward zero, NaN becomes 0, values
//! beyond the `i64` range saturate, then the result wraps to the type;
//! integer to integer wraps (keeping the bit pattern); anything to bool is
//! "non-zero" (NaN is false, as [`DType::round_f64`] defines it).
//!
//! # Limits
//! Every statement, loop iteration, block and tile-op element counts as a
//! step, over the whole run (every block of every kernel); past
//! [`RunOptions::step_limit`] (default 2^30, well under a minute) the run
//! fails with [`InterpError::StepLimit`] instead of hanging. A grid with
//! more blocks than the steps left is refused before its first block
//! ([`InterpError::GridTooLarge`]). The storage alive at once — the
//! arguments, every buffer allocated (a block's buffers stay until the
//! next block allocates them again), per-thread copies — at 8 bytes an
//! element may not pass [`RunOptions::memory_limit`] (default 512 MiB): the
//! allocation that would pass it fails with [`InterpError::MemoryLimit`]
//! before it is made. One buffer (or tile-op region) may hold at most 2^30
//! elements. Expressions may nest at most
//! 10,000 levels; a shared subexpression is compiled once but evaluated at
//! each use. A run executes on its own thread with a large stack, so the
//! caller's stack size does not matter. Errors raised while compiling or
//! executing carry the span of the innermost statement involved
//! ([`InterpError::span`]).
//!
//! # Layout of this module
//! `tensor` (host tensors), `symbols` (binding symbolic sizes), `expr`
//! (expression compiler and machine state), `scalar` (per-operator
//! semantics), `program` (statements compiled into a tree of operations),
//! `exec` (control flow, allocation, stores), `tile_ops` (copy, gemm, fill,
//! reduce, cumsum, atomic_add), `error`.

mod error;
mod exec;
mod expr;
mod guard;
mod program;
mod roles;
mod scalar;
mod symbols;
mod tensor;
mod tile_ops;
mod warp;

#[cfg(test)]
mod tests;

pub use error::InterpError;
pub use tensor::TensorBytesError;

use crate::ir::{DType, Function, Scope};
use expr::{Compiler, Env, Slot};
use std::collections::BTreeMap;

/// Element storage of a [`Tensor`]. Floating-point elements are `f64`
/// already rounded to the tensor's dtype; integer and bool elements are `i64`
/// wrapped to the dtype (`u64` keeps its bit pattern).
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

/// A dense row-major host array passed to or returned from a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: TensorData,
}

/// Values of symbolic sizes, by variable name.
pub type SymbolValues = BTreeMap<String, i64>;

/// The default [`RunOptions::step_limit`]: 2^30 steps, about 35 s of
/// work on a busy two-core machine (some 30 million steps a second).
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 30;

/// The default [`RunOptions::memory_limit`]: 512 MiB, so that `tilec run`
/// with its copies of the arguments (the inputs kept for `--check`, the
/// reference run of `--backend sim --check`) stays near 2 GB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 512 << 20;

/// The bytes the interpreter stores per element of any dtype (an `f64` or
/// an `i64`, see [`TensorData`]).
pub const ELEMENT_BYTES: u64 = 8;

/// Settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// Most steps (statements, loop iterations, tile-op elements) a run may
    /// take before it fails with [`InterpError::StepLimit`].
    pub step_limit: u64,
    /// Most bytes the run's storage may take at once: the arguments and
    /// every buffer allocated and alive ([`ELEMENT_BYTES`] per element,
    /// per-thread copies included). An allocation past it fails with
    /// [`InterpError::MemoryLimit`] before it is made.
    pub memory_limit: u64,
    /// Values of symbolic sizes given explicitly; they must agree with the
    /// argument shapes, and they are the only way to bind a symbol that no
    /// parameter extent names on its own.
    pub symbols: SymbolValues,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            step_limit: DEFAULT_STEP_LIMIT,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            symbols: SymbolValues::new(),
        }
    }
}

/// Runs every kernel of `func` on `args` (one tensor per parameter, in
/// order), in place, with the default [`RunOptions`].
pub fn run(func: &Function, args: &mut [Tensor]) -> Result<(), InterpError> {
    run_with(func, args, &RunOptions::default())
}

/// Runs every kernel of `func` on `args` (one tensor per parameter, in
/// order), in place. On error the arguments hold whatever was written
/// before the failure.
pub fn run_with(
    func: &Function,
    args: &mut [Tensor],
    options: &RunOptions,
) -> Result<(), InterpError> {
    with_large_stack(|| run_here(func, args, options))
}

/// Stack size of the thread a run executes on: compiling and evaluating
/// recurse once per level of expression nesting (at most
/// [`expr::MAX_EXPR_DEPTH`]), which must not depend on the caller's stack.
const STACK_SIZE: usize = 256 << 20;

/// Runs `f` on a scoped thread with a [`STACK_SIZE`] stack, or on the
/// current thread if no thread can be started. A panic in `f` is resumed in
/// the caller.
fn with_large_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let job = std::sync::Mutex::new(Some(f));
    let take = || job.lock().ok().and_then(|mut f| f.take());
    let spawned = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("tilec-interp".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || take().map(|f| f()));
        match handle.map(|h| h.join()) {
            Ok(Ok(result)) => result,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => None,
        }
    });
    match spawned {
        Some(result) => result,
        // The thread could not start, so `f` is still here.
        None => match take() {
            Some(f) => f(),
            None => unreachable_job(),
        },
    }
}

#[cold]
fn unreachable_job() -> ! {
    panic!("interpreter job vanished without running")
}

fn run_here(func: &Function, args: &mut [Tensor], options: &RunOptions) -> Result<(), InterpError> {
    if args.len() != func.params.len() {
        return Err(InterpError::ArgCount {
            function: func.name.clone(),
            expected: func.params.len(),
            found: args.len(),
        });
    }
    let mut seen = vec![false; func.buffers.len()];
    for (param, arg) in func.params.iter().zip(args.iter()) {
        let buffer = func
            .buffers
            .try_get(param.buffer)
            .ok_or_else(|| InterpError::Malformed {
                detail: format!("parameter buffer {:?} does not exist", param.buffer),
                span: crate::ir::Span::UNKNOWN,
            })?;
        if std::mem::replace(&mut seen[param.buffer.index()], true) {
            return Err(InterpError::Malformed {
                detail: format!("buffer `{}` is passed as two parameters", buffer.name),
                span: crate::ir::Span::UNKNOWN,
            });
        }
        if arg.dtype != buffer.dtype {
            return Err(InterpError::ArgDtype {
                param: buffer.name.clone(),
                expected: buffer.dtype,
                found: arg.dtype,
            });
        }
        arg.check().map_err(|detail| InterpError::ArgData {
            param: buffer.name.clone(),
            detail,
        })?;
    }
    let shapes: Vec<Vec<usize>> = args.iter().map(|t| t.shape.clone()).collect();
    check_arguments_fit(&shapes, options)?;
    let bound = symbols::bind(func, &shapes, &options.symbols)?;
    let program = Compiler::new(func, &bound)
        .block(&func.body)
        .map_err(|e| *e)?;

    let mut env = Env::new(func, options.step_limit, options.memory_limit);
    for (param, arg) in func.params.iter().zip(args.iter_mut()) {
        let data = std::mem::replace(&mut arg.data, TensorData::Int(Vec::new()));
        let mut slot = Slot::new(arg.dtype, Scope::Global, arg.shape.clone(), data);
        slot.places = global_places(func, param.buffer, &arg.shape);
        env.slots[param.buffer.index()] = Some(slot);
    }
    let result = exec::exec_block(&mut env, &program);
    // Hand the storage back whether or not the run succeeded.
    for (param, arg) in func.params.iter().zip(args.iter_mut()) {
        if let Some(slot) = env.slots[param.buffer.index()].take() {
            arg.data = slot.data;
        }
    }
    result.map_err(|e| *e)
}

/// Checks that arguments of `shapes` fit [`RunOptions::memory_limit`], so
/// that a caller can refuse a run before allocating them: an
/// [`InterpError::MemoryLimit`] when they do not.
pub fn check_arguments_fit(shapes: &[Vec<usize>], options: &RunOptions) -> Result<(), InterpError> {
    let elements = shapes.iter().fold(0u64, |n, shape| {
        let count = shape
            .iter()
            .try_fold(1u64, |c, &d| c.checked_mul(d as u64))
            .unwrap_or(u64::MAX);
        n.saturating_add(count)
    });
    let bytes = elements.saturating_mul(ELEMENT_BYTES);
    if bytes > options.memory_limit {
        return Err(InterpError::MemoryLimit {
            what: "the arguments".to_string(),
            bytes,
            limit: options.memory_limit,
            span: crate::ir::Span::UNKNOWN,
        });
    }
    Ok(())
}

/// Where the elements of global `buffer` (of `shape`) lie in the caller's
/// tensor when a `mapped` layout rearranges it (the verifier checked the
/// map places every element once, below the element count).
fn global_places(
    func: &Function,
    buffer: crate::ir::Handle<crate::ir::Buffer>,
    shape: &[usize],
) -> Option<std::rc::Rc<[usize]>> {
    let crate::ir::BufferLayout::Mapped { map } = func.buffers[buffer].layout.as_ref()? else {
        return None;
    };
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let offsets = map.check_over(&shape).ok()?;
    Some(offsets.into_iter().map(|o| o as usize).collect())
}

/// Binds the symbolic sizes of `func` from the shapes of its arguments (one
/// per parameter, in order) and checks every parameter extent against them.
/// Returns the bound symbols by name.
pub fn bind_symbols(func: &Function, shapes: &[Vec<usize>]) -> Result<SymbolValues, InterpError> {
    with_large_stack(|| {
        let bound = symbols::bind(func, shapes, &SymbolValues::new())?;
        Ok(symbols::by_name(func, &bound))
    })
}

/// [`bind_symbols`] starting from explicit `values` (which scalar
/// parameters need: they are never bound from shapes).
pub fn bind_symbols_with(
    func: &Function,
    shapes: &[Vec<usize>],
    values: &SymbolValues,
) -> Result<SymbolValues, InterpError> {
    with_large_stack(|| {
        let bound = symbols::bind(func, shapes, values)?;
        Ok(symbols::by_name(func, &bound))
    })
}

/// The shape of every parameter of `func`, in order, given the values of
/// the symbolic sizes its extents use. A missing symbol is an
/// [`InterpError::UnboundSymbol`] naming it.
pub fn param_shapes(
    func: &Function,
    symbols: &SymbolValues,
) -> Result<Vec<Vec<usize>>, InterpError> {
    with_large_stack(|| symbols::param_shapes(func, symbols))
}
