//! TIR-level forms of TileLang code: launch axes bound the TIR way
//! (`T.launch_thread`, `T.thread_binding`), function attributes,
//! `T.evaluate`, scalar code at function level, and the per-thread index
//! helpers (`T.get_lane_idx`, `T.get_warp_idx`, ...).
//!
//! A `@T.prim_func` whose body binds `blockIdx.*` / `threadIdx.*` itself,
//! instead of opening a `T.Kernel`, launches the code after the bindings
//! with those extents; tilec stages it as the `T.Kernel` it stands for:
//!
//! ```python
//! bx = T.launch_thread("blockIdx.x", 8)        # with T.Kernel(8, threads=128) as bx:
//! tx = T.launch_thread("threadIdx.x", 128)     #     tx = T.get_thread_binding()
//! for bx in T.thread_binding(8, thread="blockIdx.x"):
//!     for tx in T.thread_binding(128, thread="threadIdx.x"):
//! ```
//!
//! Inside a `T.Kernel`, binding `threadIdx.x` to the kernel's thread count
//! names the kernel's thread index.

use super::codes;
use super::eval::{Evaluator, Flow, err, span_of};
use super::stage::{KernelCx, Stager};
use super::value::{EResult, PyBinOp, Scope, Value};
use crate::front::Diagnostic;
use crate::ir::{self, DType, Handle, Span, Stmt, VarKind};
use rustpython_ruff_python_ast as ast;
use std::rc::Rc;

/// The `T.*` names this module stages, with their qualified names.
const FUNCTIONS: &[(&str, &str)] = &[
    ("launch_thread", "T.launch_thread"),
    ("thread_binding", "T.thread_binding"),
    ("func_attr", "T.func_attr"),
    ("evaluate", "T.evaluate"),
    ("get_lane_idx", "T.get_lane_idx"),
    ("get_warp_idx", "T.get_warp_idx"),
    ("get_warp_idx_sync", "T.get_warp_idx_sync"),
    ("get_warp_group_idx", "T.get_warp_group_idx"),
    ("align_up", "T.align_up"),
    ("__ldg", "T.__ldg"),
    ("tvm_storage_sync", "T.tvm_storage_sync"),
    ("decl_buffer", "T.decl_buffer"),
    ("Broadcast", "T.Broadcast"),
    ("Ramp", "T.Ramp"),
    ("any_of", "T.any_of"),
    ("all_of", "T.all_of"),
    ("StridedTensor", "T.StridedTensor"),
    ("fast_rcp", "T.fast_rcp"),
    ("ieee_add", "T.ieee_add"),
    ("ieee_sub", "T.ieee_sub"),
    ("ieee_mul", "T.ieee_mul"),
    ("ieee_fdiv", "T.ieee_fdiv"),
    ("ieee_frcp", "T.ieee_frcp"),
    ("ieee_fsqrt", "T.ieee_fsqrt"),
    ("warp_reduce_sum", "T.warp_reduce_sum"),
    ("warp_reduce_max", "T.warp_reduce_max"),
    ("warp_reduce_min", "T.warp_reduce_min"),
    ("warp_reduce_bitand", "T.warp_reduce_bitand"),
    ("warp_reduce_bitor", "T.warp_reduce_bitor"),
    ("shuffle_elect", "T.shuffle_elect"),
    ("sync_warp", "T.sync_warp"),
    ("shfl_sync", "T.shfl_sync"),
    ("shfl_xor", "T.shfl_xor"),
    ("shfl_down", "T.shfl_down"),
    ("shfl_up", "T.shfl_up"),
    ("device_assert", "T.device_assert"),
];

/// TIR-level and per-thread names of TileLang that tilec refuses: what
/// each is, and what to write instead.
const REFUSED: &[(&str, &str)] = &[
    (
        "env_thread",
        "`T.env_thread` declares a launch axis bound later by `T.launch_thread`; write `tx = T.launch_thread(\"threadIdx.x\", n)` directly, or use `T.Kernel`",
    ),
    (
        "attr",
        "`T.attr` attaches a TIR attribute statement, whose meaning depends on the pass that reads it; write the TileLang construct it stands for (`T.Kernel`, `T.ws`, `T.annotate_layout`, ...)",
    ),
    (
        "handle",
        "a `T.handle` parameter is an untyped pointer: tilec accepts the bare `T.handle` annotation of a kernel parameter that `T.match_buffer` types; otherwise declare the parameter as a tensor, `A: T.Tensor((M, N), dtype)`",
    ),
    (
        "ptr",
        "`T.ptr` is a pointer parameter (an address, not a tensor); tilec's kernels take tensors: declare `A: T.Tensor((M, N), dtype)`",
    ),
    (
        "any_sync",
        "`T.any_sync` is a warp vote, which tilec's IR does not have; combine the per-thread predicates through a shared buffer (`T.reduce_max` over a fragment, or `T.atomic_add` into shared memory)",
    ),
    (
        "all_sync",
        "`T.all_sync` is a warp vote, which tilec's IR does not have; combine the per-thread predicates through a shared buffer (`T.reduce_min` over a fragment)",
    ),
    (
        "ballot_sync",
        "`T.ballot_sync` is a warp vote, which tilec's IR does not have; combine the per-thread predicates through a shared buffer",
    ),
    (
        "ldg32",
        "`T.ldg32` loads 32 raw bits as a `uint32`, a reinterpretation tilec's IR does not have; load the elements themselves (`x[i]`)",
    ),
    (
        "ldg64",
        "`T.ldg64` loads 64 raw bits, a reinterpretation tilec's IR does not have; load the elements themselves (`x[i]`)",
    ),
    (
        "ldg128",
        "`T.ldg128` loads 128 raw bits, a reinterpretation tilec's IR does not have; load the elements themselves (`x[i]`)",
    ),
    (
        "dp4a",
        "`T.dp4a` is a four-way int8 dot product into an int32, which tilec's IR does not have; write the four products and sums (`T.cast(a[i], \"int32\") * T.cast(b[i], \"int32\") + ...`)",
    ),
    (
        "address_of",
        "`T.address_of` takes the address of a buffer element; tilec's IR has no pointers",
    ),
    (
        "tvm_access_ptr",
        "`T.tvm_access_ptr` takes the address of a buffer region; tilec's IR has no pointers",
    ),
    (
        "sync_grid",
        "`T.sync_grid` is a barrier of the whole grid (a cooperative launch), which tilec does not make; split the kernel in two at this point",
    ),
    (
        "named_barrier_arrive",
        "`T.named_barrier_arrive` arrives at a hardware named barrier without waiting, which tilec's IR does not have; use `T.sync_threads()`, or `T.alloc_barrier` with `T.barrier_arrive` / `T.barrier_wait`",
    ),
    (
        "atomic_load",
        "`T.atomic_load` reads with a memory order, and tilec's IR has no ordered loads (its only atomic is `T.atomic_add`)",
    ),
    (
        "atomic_store",
        "`T.atomic_store` writes with a memory order, and tilec's IR has no ordered stores (its only atomic is `T.atomic_add`)",
    ),
];

/// Rounding-mode operations without a round-to-nearest equivalent in
/// tilec's IR (no fused multiply-add, no correctly rounded `rsqrt`).
const IEEE_OPS: &[&str] = &["ieee_fmaf", "ieee_frsqrt"];

/// The vector dtypes of TileLang (`float16x2`, `bfloat16x4`, ...).
fn vector_dtype(name: &str) -> bool {
    let Some((base, lanes)) = name.rsplit_once('x') else {
        return false;
    };
    !lanes.is_empty()
        && lanes.bytes().all(|b| b.is_ascii_digit())
        && DType::from_tilelang_name(base).is_some()
}

/// Why tilec refuses `T.<name>` and what to write instead, for the note
/// of its error.
pub(crate) fn refusal_note(name: &str) -> Option<String> {
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
        return Some((*why).to_string());
    }
    if IEEE_OPS.contains(&name) {
        return Some(format!(
            "`T.{name}` is a correctly rounded floating-point operation that tilec's IR does not have (no fused multiply-add, no correctly rounded reciprocal square root); write `x * y + z` or `1.0 / T.sqrt(x)` if two roundings are acceptable"
        ));
    }
    if vector_dtype(name) {
        return Some(format!(
            "`T.{name}` is a vector dtype, and tilec's IR has scalar dtypes only; use a buffer of the lanes (`T.alloc_local((lanes,), dtype)`)"
        ));
    }
    None
}

/// Looks up `T.<name>` among the TIR-level names.
pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    super::value::table_builtin(FUNCTIONS, name)
}

/// Whether `T.<name>` is staged here.
pub(crate) fn handles(name: &str) -> bool {
    super::value::table_has(FUNCTIONS, name)
}

/// A launch axis named by its TIR thread tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    Block(usize),
    Thread(usize),
}

const TAGS: [(&str, Axis); 6] = [
    ("blockIdx.x", Axis::Block(0)),
    ("blockIdx.y", Axis::Block(1)),
    ("blockIdx.z", Axis::Block(2)),
    ("threadIdx.x", Axis::Thread(0)),
    ("threadIdx.y", Axis::Thread(1)),
    ("threadIdx.z", Axis::Thread(2)),
];

fn tag_name(axis: Axis) -> &'static str {
    TAGS.iter()
        .find(|(_, a)| *a == axis)
        .map_or("?", |(t, _)| t)
}

/// One `T.launch_thread` / `T.thread_binding`: the axis, the first index
/// and the number of indices.
struct Bind<'a> {
    axis: Axis,
    start: Value<'a>,
    extent: Value<'a>,
    span: Span,
}

/// The arguments of a binding call, as TileLang reads them:
/// `T.launch_thread(thread, extent)` and
/// `T.thread_binding(start, stop=None, thread=None)` (a string `stop` is the
/// thread; without a stop the range is `0 .. start`).
fn parse_bind<'a>(
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Bind<'a>> {
    let params: &[&str] = if name == "launch_thread" {
        &["thread", "extent"]
    } else {
        &["start", "stop", "thread"]
    };
    let mut values: Vec<Option<Value<'a>>> = vec![None; params.len()];
    if args.len() > params.len() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!(
                "`T.{name}` takes at most {} arguments ({})",
                params.len(),
                params.join(", ")
            ),
            span,
        ));
    }
    for (slot, v) in values.iter_mut().zip(args) {
        *slot = Some(v);
    }
    for (k, v) in kwargs {
        match params.iter().position(|p| *p == k) {
            Some(i) => values[i] = Some(v),
            None if k == "annotations" => {}
            None => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` has no parameter `{k}`"),
                    span,
                ));
            }
        }
    }
    let (thread, start, extent) = if name == "launch_thread" {
        let [thread, extent] = [values[0].take(), values[1].take()];
        (thread, Value::Int(0), extent)
    } else {
        let [mut start, mut stop, mut thread] =
            [values[0].take(), values[1].take(), values[2].take()];
        if thread.is_none() && matches!(stop, Some(Value::Str(_))) {
            thread = stop.take();
        }
        if stop.is_none() {
            stop = start.take();
        }
        let start = start.unwrap_or(Value::Int(0));
        // The number of indices is `stop - start`.
        let extent = match (&start, &stop) {
            (Value::Int(0), _) => stop,
            (_, Some(stop)) => Some(Value::Tuple(Rc::from(vec![start.clone(), stop.clone()]))),
            _ => None,
        };
        (thread, start, extent)
    };
    let tag = match &thread {
        Some(Value::Str(s)) => s.to_string(),
        Some(other) => {
            return Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "`T.{name}` needs the thread tag as a string (\"blockIdx.x\", \"threadIdx.x\", ...), got {}",
                    other.a_type_name()
                ),
                span,
            ));
        }
        None => {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("`T.{name}` needs a thread tag (\"blockIdx.x\", \"threadIdx.x\", ...)"),
                span,
            ));
        }
    };
    let Some(axis) = TAGS.iter().find(|(t, _)| *t == tag).map(|(_, a)| *a) else {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("`T.{name}` of the thread tag {tag:?} is not supported"),
                span,
            )
            .with_label("thread tag")
            .with_note("tilec binds the launch axes blockIdx.x/y/z and threadIdx.x/y/z"),
        ));
    };
    let Some(extent) = extent else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` needs an extent"),
            span,
        ));
    };
    Ok(Bind {
        axis,
        start,
        extent,
        span,
    })
}

/// The extent of a binding whose range is `start .. stop` (a pair) or
/// `0 .. extent`.
fn extent_value<'a>(ev: &mut Evaluator<'a>, b: &Bind<'a>) -> EResult<Value<'a>> {
    match &b.extent {
        Value::Tuple(pair) if pair.len() == 2 => ev.binop(PyBinOp::Sub, &pair[1], &pair[0], b.span),
        other => Ok(other.clone()),
    }
}

/// Calls `T.<name>` for the names of [`FUNCTIONS`].
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match name {
        "launch_thread" | "thread_binding" => {
            let bind = parse_bind(name, args, kwargs, span)?;
            bound_in_kernel(ev, name, &bind)
        }
        "func_attr" => func_attr(ev, args, span),
        "shuffle_elect" => super::warp::shuffle_elect(ev, &args, &kwargs, span),
        "sync_warp" => super::warp::sync_warp(ev, &args, &kwargs, span),
        "shfl_sync" | "shfl_xor" | "shfl_down" | "shfl_up" => {
            super::warp::shuffle(ev, name, &args, &kwargs, span)
        }
        "device_assert" => super::warp::device_assert(ev, &args, &kwargs, span),
        n if n.starts_with("warp_reduce_") => super::warp::warp_reduce(ev, n, &args, &kwargs, span),
        "StridedTensor" => strided_tensor(ev, args, kwargs, span),
        "Broadcast" => super::vector::broadcast(ev, &args, &kwargs, span),
        "Ramp" => super::vector::ramp(ev, &args, &kwargs, span),
        "fast_rcp" => {
            let [x] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.fast_rcp` takes one value",
                    span,
                ));
            };
            let dtype = value_dtype(ev, x, span)?;
            if dtype != DType::F32 {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "`T.fast_rcp` takes a float32 value (TileLang has it for float32 only), got {dtype}"
                    ),
                    span,
                ));
            }
            ev.binop(PyBinOp::Div, &Value::Float(1.0), x, span)
        }
        n if n.starts_with("ieee_") => ieee(ev, n, args, kwargs, span),
        "evaluate" => {
            let [v] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.evaluate` takes one value",
                    span,
                ));
            };
            match v {
                Value::Opaque(what) => Err(err(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`{what}` is not supported by tilec"),
                    span,
                )),
                Value::Poison(_) => Err(super::stage::cascade()),
                // The value is computed for its effects, which its
                // evaluation has staged already.
                _ => {
                    ev.stager("`T.evaluate`", span)?;
                    Ok(Value::None)
                }
            }
        }
        "get_lane_idx" | "get_warp_idx" | "get_warp_idx_sync" | "get_warp_group_idx" => {
            thread_index(ev, name, &args, &kwargs, span)
        }
        "__ldg" => {
            // A read through the read-only cache: the value is the load.
            match args.as_slice() {
                [v @ Value::Access(_)] => Ok(v.clone()),
                [Value::Buffer(b), index] => {
                    let i = ev.index_expr_of(index, span)?;
                    ev.index_value(&Value::Buffer(*b), &Value::Expr(i), span)
                }
                _ => Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.__ldg` takes a buffer element (`x[i]`), or a buffer and an index",
                    span,
                )),
            }
        }
        "tvm_storage_sync" => {
            let scope = args.first().map(Value::to_py_str);
            if scope.as_deref() != Some("shared") || args.len() != 1 {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!(
                            "`T.tvm_storage_sync` of {} is not supported",
                            scope.map_or("no scope".to_string(), |s| format!("{s:?}"))
                        ),
                        span,
                    )
                    .with_label("storage sync")
                    .with_note("`T.tvm_storage_sync(\"shared\")` is the block barrier (`T.sync_threads()`); tilec has no other"),
                ));
            }
            let st = ev.kernel_stager("`T.tvm_storage_sync`", span)?;
            st.emit(Stmt::Barrier, span);
            Ok(Value::None)
        }
        "decl_buffer" => decl_buffer(ev, args, kwargs, span),
        "any_of" | "all_of" => any_all(ev, name, &args, span),
        "align_up" => {
            let [x, y] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.align_up` takes a value and an alignment",
                    span,
                ));
            };
            let q = super::tl::call(ev, "ceildiv", vec![x.clone(), y.clone()], Vec::new(), span)?;
            ev.binop(PyBinOp::Mul, &q, y, span)
        }
        other => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`T.{other}` is not supported by tilec"),
            span,
        )),
    }
}

/// `T.func_attr({...})`: attributes that say nothing about what the kernel
/// computes are accepted; any other is refused by name.
fn func_attr<'a>(ev: &mut Evaluator<'a>, args: Vec<Value<'a>>, span: Span) -> EResult<Value<'a>> {
    const NO_OPS: &[&str] = &[
        "global_symbol",
        "tir.noalias",
        "tirx.noalias",
        "tir.is_entry_func",
        "tirx.is_entry_func",
    ];
    ev.stager("`T.func_attr`", span)?;
    let [Value::Dict(d)] = args.as_slice() else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.func_attr` takes one dict of attributes",
            span,
        ));
    };
    for (k, _) in d.borrow().iter() {
        let Value::Str(k) = k else {
            return Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                "the keys of `T.func_attr` must be strings",
                span,
            ));
        };
        if !NO_OPS.contains(&&**k) {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("the function attribute {k:?} of `T.func_attr` is not supported"),
                    span,
                )
                .with_label("function attribute")
                .with_note(format!(
                    "tilec accepts the attributes that do not change the kernel: {}; remove the others (the target is given to `tilec compile --target`)",
                    NO_OPS.join(", ")
                )),
            ));
        }
    }
    Ok(Value::None)
}

/// `T.get_lane_idx(warp_size=32)`, `T.get_warp_idx(warp_size=32)`,
/// `T.get_warp_idx_sync(warp_size=32)`,
/// `T.get_warp_group_idx(warp_size=32, warps_per_group=4)`: the kernel's
/// linear thread index modulo / divided by the group size.
fn thread_index<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let params: &[&str] = if name == "get_warp_group_idx" {
        &["warp_size", "warps_per_group"]
    } else {
        &["warp_size"]
    };
    if args.len() > params.len() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` takes at most {} arguments", params.len()),
            span,
        ));
    }
    let mut vals: Vec<Option<Value<'a>>> = args.iter().cloned().map(Some).collect();
    vals.resize(params.len(), None);
    for (k, v) in kwargs {
        let Some(i) = params.iter().position(|p| p == k) else {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("`T.{name}` has no parameter `{k}`"),
                span,
            ));
        };
        vals[i] = Some(v.clone());
    }
    let mut size = |i: usize, default: i64| -> Value<'a> {
        match vals[i].take() {
            None | Some(Value::None) => Value::Int(default),
            Some(v) => v,
        }
    };
    let warp = size(0, 32);
    let group = if name == "get_warp_group_idx" {
        let per = size(1, 4);
        ev.binop(PyBinOp::Mul, &warp, &per, span)?
    } else {
        warp
    };
    let tx = Value::Expr(ev.thread_var(span)?);
    let op = if name == "get_lane_idx" {
        PyBinOp::Mod
    } else {
        PyBinOp::FloorDiv
    };
    ev.binop(op, &tx, &group, span)
}

/// A binding met inside an open `T.Kernel`: `threadIdx.x` over the
/// kernel's threads is its thread index.
fn bound_in_kernel<'a>(ev: &mut Evaluator<'a>, name: &str, b: &Bind<'a>) -> EResult<Value<'a>> {
    let span = b.span;
    let extent = extent_value(ev, b)?;
    let st = ev.stager(&format!("`T.{name}`"), span)?;
    let Some(k) = st.kernel else {
        return Err(Box::new(
            Diagnostic::error(
                codes::PLACEMENT,
                format!("`T.{name}` outside a `T.Kernel` must come first in the function body"),
                span,
            )
            .with_label("launch axis bound here")
            .with_note("bind the launch axes at the top level of the `@T.prim_func` body, before the code they launch, or write `with T.Kernel(grid..., threads=N) as (bx, ...):`"),
        ));
    };
    let thread = st.var(k.thread_var);
    match (b.axis, extent.as_int()) {
        (Axis::Thread(0), Some(n)) if n == i64::from(k.threads) && k.dims[1] * k.dims[2] == 1 => {
            let v = Value::Expr(thread);
            if matches!(b.start, Value::Int(0)) {
                Ok(v)
            } else {
                ev.binop(PyBinOp::Add, &b.start, &v, span)
            }
        }
        // With several thread dimensions, `threadIdx.d` over its extent is
        // that part of the linear index.
        (Axis::Thread(d), Some(n))
            if k.dims[1] * k.dims[2] > 1 && n == i64::from(k.dims[d]) && n > 1 =>
        {
            let v = super::thread_dims::part(ev, d, span)?;
            if matches!(b.start, Value::Int(0)) {
                Ok(v)
            } else {
                ev.binop(PyBinOp::Add, &b.start, &v, span)
            }
        }
        (Axis::Thread(d), Some(1)) if k.dims[1] * k.dims[2] == 1 || k.dims[d] == 1 => {
            Ok(b.start.clone())
        }
        (axis, _) => Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.{name}(\"{}\", ...)` inside a `T.Kernel` of {} threads",
                    tag_name(axis),
                    k.threads
                ),
                span,
            )
            .with_label("launch axis bound again")
            .with_note(match axis {
                Axis::Block(_) => "inside a `T.Kernel`, name its block indices with `as (bx, by, ...)` instead".to_string(),
                Axis::Thread(_) => format!(
                    "inside a `T.Kernel` of threads {:?} (x, y, z), `threadIdx.x/y/z` is bound over its own extent (`threadIdx.x` over all {} threads when there is one dimension); use `T.get_thread_binding(d)`",
                    k.dims, k.threads
                ),
            }),
        )),
    }
}

// --------------------------------------------------------------------
// Launch axes bound at the top of a prim_func body
// --------------------------------------------------------------------

/// A statement that binds a launch axis the TIR way, and how.
enum BindStmt<'a> {
    /// `name = T.launch_thread(...)` or a bare `T.launch_thread(...)`; the
    /// rest of the block is launched.
    Assign(Option<&'a ast::Expr>, &'a ast::ExprCall),
    /// `with T.launch_thread(...) [as name]:` / `for name in
    /// T.thread_binding(...):`; the body is launched.
    Scoped(Option<&'a ast::Expr>, &'a ast::ExprCall, &'a [ast::Stmt]),
}

/// The call of `T.launch_thread` / `T.thread_binding` that `e` is, if any.
fn binding_call<'a>(
    ev: &mut Evaluator<'a>,
    e: &'a ast::Expr,
    scope: &Rc<Scope<'a>>,
) -> Option<&'a ast::ExprCall> {
    let ast::Expr::Call(call) = e else {
        return None;
    };
    let ast::Expr::Attribute(a) = &*call.func else {
        return None;
    };
    if !matches!(a.attr.as_str(), "launch_thread" | "thread_binding") {
        return None;
    }
    match ev.eval(&call.func, scope) {
        Ok(Value::Builtin("T.launch_thread" | "T.thread_binding")) => Some(call),
        _ => None,
    }
}

fn bind_stmt<'a>(
    ev: &mut Evaluator<'a>,
    stmt: &'a ast::Stmt,
    scope: &Rc<Scope<'a>>,
) -> Option<BindStmt<'a>> {
    match stmt {
        ast::Stmt::Assign(s) if s.targets.len() == 1 => {
            binding_call(ev, &s.value, scope).map(|c| BindStmt::Assign(Some(&s.targets[0]), c))
        }
        ast::Stmt::Expr(s) => binding_call(ev, &s.value, scope).map(|c| BindStmt::Assign(None, c)),
        ast::Stmt::With(s) if s.items.len() == 1 => {
            let item = &s.items[0];
            binding_call(ev, &item.context_expr, scope)
                .map(|c| BindStmt::Scoped(item.optional_vars.as_deref(), c, &s.body))
        }
        ast::Stmt::For(s) if s.orelse.is_empty() && !s.is_async => {
            binding_call(ev, &s.iter, scope).map(|c| BindStmt::Scoped(Some(&s.target), c, &s.body))
        }
        _ => None,
    }
}

/// Runs `stmts` when they are the top level of a prim_func body with no
/// kernel open and one of them binds a launch axis: the code before it
/// as usual, then the bound code as a kernel. `None` otherwise.
pub(crate) fn exec_block<'a>(
    ev: &mut Evaluator<'a>,
    stmts: &'a [ast::Stmt],
    scope: &Rc<Scope<'a>>,
) -> Option<EResult<Flow<'a>>> {
    let top = ev
        .stagers
        .last()
        .is_some_and(|s| s.kernel.is_none() && s.block_depth() == 1);
    if !top || !ev.in_staged_frame() {
        return None;
    }
    let first = stmts
        .iter()
        .position(|s| bind_stmt(ev, s, scope).is_some())?;
    Some((|| {
        let flow = ev.exec_block(&stmts[..first], scope)?;
        if !matches!(flow, Flow::Normal) {
            return Ok(flow);
        }
        let mut binds = Vec::new();
        let mut parts = Vec::new();
        let after = collect(ev, &stmts[first..], scope, &mut binds, &mut parts)?;
        let flow = launch(ev, binds, &parts, scope, span_of(&stmts[first]))?;
        if !matches!(flow, Flow::Normal) {
            return Ok(flow);
        }
        ev.exec_block(after, scope)
    })())
}

/// Collects the bindings that start `stmts` (following scoped bodies), the
/// launched code in order (`parts`), and returns the statements after the
/// outermost scoped binding, which run after the kernel.
fn collect<'a>(
    ev: &mut Evaluator<'a>,
    mut stmts: &'a [ast::Stmt],
    scope: &Rc<Scope<'a>>,
    binds: &mut Vec<(Option<&'a ast::Expr>, Bind<'a>)>,
    parts: &mut Vec<&'a [ast::Stmt]>,
) -> EResult<&'a [ast::Stmt]> {
    loop {
        let Some((first, rest)) = stmts.split_first() else {
            parts.push(stmts);
            return Ok(&[]);
        };
        match bind_stmt(ev, first, scope) {
            Some(BindStmt::Assign(target, call)) => {
                binds.push((target, eval_bind(ev, call, scope)?));
                stmts = rest;
            }
            Some(BindStmt::Scoped(target, call, body)) => {
                binds.push((target, eval_bind(ev, call, scope)?));
                let inner_after = collect(ev, body, scope, binds, parts)?;
                parts.push(inner_after);
                return Ok(rest);
            }
            None => {
                parts.push(stmts);
                return Ok(&[]);
            }
        }
    }
}

fn eval_bind<'a>(
    ev: &mut Evaluator<'a>,
    call: &'a ast::ExprCall,
    scope: &Rc<Scope<'a>>,
) -> EResult<Bind<'a>> {
    let span = span_of(call);
    let name = match &*call.func {
        ast::Expr::Attribute(a) => a.attr.to_string(),
        _ => String::new(),
    };
    let (args, kwargs) = ev.eval_args(&call.arguments, scope)?;
    parse_bind(&name, args, kwargs, span)
}

/// Stages the launched code as a kernel with the bound extents.
fn launch<'a>(
    ev: &mut Evaluator<'a>,
    binds: Vec<(Option<&'a ast::Expr>, Bind<'a>)>,
    parts: &[&'a [ast::Stmt]],
    scope: &Rc<Scope<'a>>,
    span: Span,
) -> EResult<Flow<'a>> {
    let mut grid: [Option<Value<'a>>; 3] = [None, None, None];
    let mut threads: [Option<i64>; 3] = [None, None, None];
    let mut seen: Vec<Axis> = Vec::new();
    for (_, b) in &binds {
        if seen.contains(&b.axis) {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("the launch axis {} is bound twice", tag_name(b.axis)),
                    b.span,
                )
                .with_label("bound again here"),
            ));
        }
        seen.push(b.axis);
        let extent = extent_value(ev, b)?;
        match b.axis {
            Axis::Block(d) => {
                if let Some(i) = extent.as_int()
                    && i <= 0
                {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("grid extents must be positive, got {i}"),
                        b.span,
                    ));
                }
                grid[d] = Some(extent);
            }
            Axis::Thread(d) => {
                let n = extent.as_int().ok_or_else(|| {
                    Box::new(
                        Diagnostic::error(
                            codes::NOT_CONSTANT,
                            format!(
                                "the extent of {} must be a compile-time integer",
                                tag_name(b.axis)
                            ),
                            b.span,
                        )
                        .with_label(format!("got {}", extent.a_type_name()))
                        .with_note("the thread count of a kernel is fixed when it is compiled"),
                    )
                })?;
                if n <= 0 {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("thread extents must be positive, got {n}"),
                        b.span,
                    ));
                }
                threads[d] = Some(n);
            }
        }
    }
    let [nx, ny, nz] = threads.map(|t| t.unwrap_or(1));
    let total = nx.saturating_mul(ny).saturating_mul(nz);
    if total > 4096 {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!("`threads` must be between 1 and 4096, got {total}"),
            span,
        ));
    }
    let total = u32::try_from(total).unwrap_or(1);
    // Grid dimensions up to the last one bound; unbound ones have extent 1.
    let dims = grid.iter().rposition(Option::is_some).map_or(1, |d| d + 1);
    let mut grid_exprs = Vec::new();
    for g in grid.iter().take(dims) {
        let g = g.clone().unwrap_or(Value::Int(1));
        grid_exprs.push(ev.index_expr_of(&g, span)?);
    }
    let var_name = |axis: Axis, default: &str| -> String {
        binds
            .iter()
            .find(|(_, b)| b.axis == axis)
            .and_then(|(t, _)| match t {
                Some(ast::Expr::Name(n)) => Some(n.id.to_string()),
                _ => None,
            })
            .unwrap_or_else(|| default.to_string())
    };
    let st = ev.stager("a launch axis", span)?;
    let block_vars: Vec<Handle<ir::Var>> = (0..dims)
        .map(|d| {
            let name = var_name(Axis::Block(d), ["bx", "by", "bz"][d]);
            st.add_var(&name, DType::I32, VarKind::BlockIdx)
        })
        .collect();
    let single_thread_axis = ny == 1 && nz == 1;
    let tname = if single_thread_axis {
        var_name(Axis::Thread(0), "tx")
    } else {
        "tx".to_string()
    };
    let thread_var = st.add_var(&tname, DType::I32, VarKind::ThreadIdx);
    st.kernel = Some(KernelCx {
        thread_var,
        order: None,
        threads: total,
        dims: [nx, ny, nz].map(|n| u32::try_from(n).unwrap_or(1)),
        in_role: false,
        mbarriers: None,
    });
    super::safe_value::start_scope(st);
    st.push_block();
    for v in block_vars.iter().chain([&thread_var]) {
        st.note_scoped(*v);
    }
    let staged =
        bind_names(ev, &binds, &block_vars, thread_var, [nx, ny, nz], scope).and_then(|()| {
            for part in parts {
                match ev.exec_block(part, scope)? {
                    Flow::Normal => {}
                    flow => return Ok(flow),
                }
            }
            Ok(Flow::Normal)
        });
    let st = ev.stager("a launch axis", span)?;
    let body = st.pop_block();
    let order = st.kernel.take().and_then(|k| k.order);
    let staged = staged.and_then(|f| {
        super::thread_dims::check(
            st,
            [nx, ny, nz].map(|n| u32::try_from(n).unwrap_or(1)),
            &body,
        )?;
        super::safe_value::finish_kernel(st)?;
        Ok(f)
    });
    st.safe_values.clear();
    st.emit(
        Stmt::Kernel {
            grid: grid_exprs,
            threads: total,
            block_vars,
            thread_var,
            order,
            body,
        },
        span,
    );
    match staged? {
        Flow::Return(v) => Ok(Flow::Return(v)),
        _ => Ok(Flow::Normal),
    }
}

/// Binds each binding's name to its index: the block index, or the part of
/// the linear thread index that is `threadIdx.x/y/z`.
fn bind_names<'a>(
    ev: &mut Evaluator<'a>,
    binds: &[(Option<&'a ast::Expr>, Bind<'a>)],
    block_vars: &[Handle<ir::Var>],
    thread_var: Handle<ir::Var>,
    [nx, ny, nz]: [i64; 3],
    scope: &Rc<Scope<'a>>,
) -> EResult<()> {
    for (target, b) in binds {
        let Some(target) = target else { continue };
        let span = b.span;
        let st: &mut Stager = ev.stager("a launch axis", span)?;
        let index = match b.axis {
            Axis::Block(d) => Value::Expr(st.var(block_vars[d])),
            Axis::Thread(d) => {
                let t = Value::Expr(st.var(thread_var));
                let below = [1, nx, nx.saturating_mul(ny)][d];
                let own = [nx, ny, nz][d];
                let above = [ny.saturating_mul(nz), nz, 1][d];
                let shifted = if below == 1 {
                    t
                } else {
                    ev.binop(PyBinOp::FloorDiv, &t, &Value::Int(below), span)?
                };
                if above == 1 {
                    shifted
                } else {
                    ev.binop(PyBinOp::Mod, &shifted, &Value::Int(own), span)?
                }
            }
        };
        let index = if matches!(b.start, Value::Int(0)) {
            index
        } else {
            ev.binop(PyBinOp::Add, &b.start, &index, span)?
        };
        ev.assign(target, index, scope, span)?;
    }
    Ok(())
}

// --------------------------------------------------------------------
// Scalar code at function level
// --------------------------------------------------------------------

/// Whether a name assigned `e` outside any kernel stands for `e` itself
/// rather than a bound variable: `e` computes from sizes and constants
/// only (no loads), so it has the same value wherever it is used, as in
/// TileLang, where such a Python assignment names the expression.
pub(crate) fn substituted_let(st: &Stager, e: Handle<ir::Expr>) -> bool {
    st.kernel.is_none() && st.block_depth() == 1 && !loads(&st.func, e)
}

fn loads(f: &ir::Function, e: Handle<ir::Expr>) -> bool {
    let expr = &f.exprs[e];
    matches!(expr, ir::Expr::Load { .. }) || expr.operands().into_iter().any(|o| loads(f, o))
}

/// Whether a builder body binds launch axes itself (`for bx in
/// T.thread_binding(...)`, `tx = T.launch_thread(...)`), which makes it an
/// eager kernel body like one that opens a `T.Kernel`.
pub(crate) fn binds_launch_axes(stmts: &[ast::Stmt]) -> bool {
    let is_bind = |e: &ast::Expr| {
        matches!(e, ast::Expr::Call(c) if matches!(&*c.func,
            ast::Expr::Attribute(a) if matches!(a.attr.as_str(), "launch_thread" | "thread_binding")))
    };
    stmts.iter().any(|s| match s {
        ast::Stmt::For(f) => is_bind(&f.iter),
        ast::Stmt::Assign(a) => is_bind(&a.value),
        ast::Stmt::Expr(e) => is_bind(&e.value),
        _ => false,
    })
}

/// Why code outside a kernel is refused, and what to write instead.
pub(crate) const OUTSIDE_KERNEL_NOTE: &str = "a `@T.prim_func` body with no `T.Kernel` at all runs as one thread of a single block, but this body launches kernels (`T.Kernel`, `T.launch_thread` or `T.thread_binding`), and TileLang runs the code outside them on the host, which tilec does not compile; move this statement into a `T.Kernel` scope";

// --------------------------------------------------------------------
// Bodies without a kernel
// --------------------------------------------------------------------

/// Names whose use means a body launches its kernels itself.
const LAUNCHING: &[&str] = &[
    "Kernel",
    "ClusterKernel",
    "launch_thread",
    "thread_binding",
    "env_thread",
];

/// Whether a `@T.prim_func` body launches no kernel: it names none of
/// [`LAUNCHING`], directly or in a `@T.macro` it calls. Such a body is, in
/// TVM and TileLang's CPU target, one sequential execution of its
/// statements; tilec stages it as a kernel of one block of one thread.
pub(crate) fn launches_nothing<'a>(stmts: &'a [ast::Stmt], scope: &Rc<Scope<'a>>) -> bool {
    use ast::visitor::{Visitor, walk_body, walk_expr};
    struct Scan<'s, 'a> {
        scope: &'s Rc<Scope<'a>>,
        seen: Vec<*const ast::StmtFunctionDef>,
        found: bool,
    }
    impl<'a> Visitor<'a> for Scan<'_, 'a> {
        fn visit_expr(&mut self, e: &'a ast::Expr) {
            match e {
                ast::Expr::Attribute(a) if LAUNCHING.contains(&a.attr.as_str()) => {
                    self.found = true;
                }
                ast::Expr::Name(n) if LAUNCHING.contains(&n.id.as_str()) => self.found = true,
                ast::Expr::Name(n) => {
                    if let Some(Value::Macro(c)) = self.scope.lookup(n.id.as_str())
                        && let super::value::FunctionBody::Def(def) = c.body
                        && !self.seen.contains(&std::ptr::from_ref(def))
                    {
                        self.seen.push(std::ptr::from_ref(def));
                        let mut inner = Scan {
                            scope: &c.scope,
                            seen: std::mem::take(&mut self.seen),
                            found: false,
                        };
                        walk_body(&mut inner, &def.body);
                        self.seen = inner.seen;
                        self.found |= inner.found;
                    }
                }
                _ => {}
            }
            if !self.found {
                walk_expr(self, e);
            }
        }
    }
    let mut scan = Scan {
        scope,
        seen: Vec::new(),
        found: false,
    };
    walk_body(&mut scan, stmts);
    !scan.found
}

/// Stages a body that launches no kernel as a kernel of one block of one
/// thread running its statements in order, with a warning at `span` (the
/// function's name) saying so.
pub(crate) fn stage_single_thread<'a>(
    ev: &mut Evaluator<'a>,
    body: &'a [ast::Stmt],
    scope: &Rc<Scope<'a>>,
    span: Span,
) -> EResult<Flow<'a>> {
    ev.report(Box::new(
        Diagnostic::warning(
            codes::SINGLE_THREAD,
            "this `@T.prim_func` has no `T.Kernel`; its body runs as one thread of a single block",
            span,
        )
        .with_label("no `T.Kernel` in this function")
        .with_note("as in TVM and TileLang's CPU target, the statements run once, in order; `T.Parallel` and `T.serial` loops run their iterations one after another in that thread, and `T.alloc_*` buffers belong to its block")
        .with_note("to spread the work over threads, put the body in `with T.Kernel(grid..., threads=N) as bx:`"),
    ));
    launch(ev, Vec::new(), &[body], scope, span)
}

/// What a `T.gemm` operand in a memory the GPU gemm does not take stands
/// for in TileLang: its CPU or Metal gemm.
pub(crate) fn gemm_scope_note(which: &str, scope: ir::Scope) -> Option<&'static str> {
    match (which, scope) {
        ("A" | "B", ir::Scope::Local) => Some(
            "operands in local memory are TileLang's CPU gemm (a scalar loop nest, built for `target=\"c\"`); tilec compiles GPU kernels, whose gemm reads A and B from `T.alloc_shared` buffers or fragments and accumulates into a `T.alloc_fragment`",
        ),
        ("C", ir::Scope::Shared) => Some(
            "an accumulator in shared memory is TileLang's Metal gemm; for the GPU targets tilec compiles, accumulate into `T.alloc_fragment((M, N), accum_dtype)` and `T.copy` it out",
        ),
        _ => None,
    }
}

/// `T.decl_buffer(shape, dtype, scope=...)` without `data`: an allocation
/// in that scope, as `T.alloc_buffer`.
fn decl_buffer<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let params = super::tl::BUFFER_PARAMS;
    let a = super::tl::Args::new("decl_buffer", params, args, kwargs, span)?;
    for i in [2, 3, 4] {
        if a.get(i).is_some() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`T.decl_buffer` with `{}`", params[i]),
                    span,
                )
                .with_label("a view of other memory")
                .with_note("tilec's buffers are their own dense row-major storage; allocate one with `T.alloc_shared` / `T.alloc_local` / `T.alloc_fragment` and `T.copy` into it"),
            ));
        }
    }
    let scope = a.get(5).cloned();
    let scope_name = scope.as_ref().map(Value::to_py_str);
    if !matches!(
        scope_name.as_deref(),
        Some("shared" | "shared.dyn" | "local" | "local.fragment" | "local.var")
    ) {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.decl_buffer` in the scope {}",
                    scope_name.map_or("\"global\" (the default)".to_string(), |s| format!("{s:?}"))
                ),
                span,
            )
            .with_label("buffer scope")
            .with_note("tilec allocates buffers in shared memory, local memory or fragments: give `scope=\"shared.dyn\"` (or `\"local\"`, `\"local.fragment\"`), or use `T.alloc_shared` / `T.alloc_local` / `T.alloc_fragment`; barriers come from `T.alloc_barrier`"),
        ));
    }
    let mut rest = Vec::new();
    if let Some(d) = a.get(1).cloned() {
        rest.push(("dtype".to_string(), d));
    }
    if let Some(s) = scope {
        rest.push(("scope".to_string(), s));
    }
    let shape = a
        .get(0)
        .cloned()
        .ok_or_else(|| err(codes::BAD_ARGUMENTS, "`T.decl_buffer` needs a shape", span))?;
    super::tl::call(ev, "alloc_buffer", vec![shape], rest, span)
}

/// Most elements `T.any_of` / `T.all_of` expand to.
const ANY_ALL_LIMIT: i64 = 256;

/// `T.any_of(region)` / `T.all_of(region)`: whether any (every) element of
/// the buffer or region is nonzero, the `or` (`and`) of its elements.
fn any_all<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: &[Value<'a>],
    span: Span,
) -> EResult<Value<'a>> {
    let [v] = args else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` takes one buffer or buffer region"),
            span,
        ));
    };
    let what = format!("`T.{name}`");
    let op = super::tl::operand(ev, v, &what, span)?;
    let st = ev.kernel_stager(&what, span)?;
    let mut extents = Vec::new();
    for r in &op.region.ranges {
        match st.func.as_const_int(r.extent) {
            Some(e) if e >= 0 => extents.push(e),
            _ => {
                return Err(err(
                    codes::NOT_CONSTANT,
                    format!("the region of `T.{name}` must have compile-time extents"),
                    span,
                ));
            }
        }
    }
    let total = extents.iter().try_fold(1i64, |a, &e| a.checked_mul(e));
    let total = match total {
        Some(t) if t <= ANY_ALL_LIMIT => t,
        _ => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`T.{name}` of more than {ANY_ALL_LIMIT} elements"),
                    span,
                )
                .with_label("region")
                .with_note("tilec expands the test element by element; test a smaller region, or reduce the buffer with `T.reduce_max` first"),
            ));
        }
    };
    let any = name == "any_of";
    let mut acc: Option<Handle<ir::Expr>> = None;
    for linear in 0..total {
        let mut rem = linear;
        let mut offsets = vec![0i64; extents.len()];
        for (d, &e) in extents.iter().enumerate().rev() {
            offsets[d] = rem % e;
            rem /= e;
        }
        let mut indices = Vec::new();
        for (r, off) in op.region.ranges.iter().zip(offsets) {
            let o = st.int(off);
            indices.push(st.binary(ir::BinaryOp::Add, r.start, o, span)?);
        }
        let load = st.expr(
            ir::Expr::Load {
                buffer: op.region.buffer,
                indices,
            },
            span,
        )?;
        let b = st.bool_expr(&Value::Expr(load), span)?;
        acc = Some(match acc {
            None => b,
            Some(a) => st.binary(
                if any {
                    ir::BinaryOp::Or
                } else {
                    ir::BinaryOp::And
                },
                a,
                b,
                span,
            )?,
        });
    }
    Ok(match acc {
        Some(e) => Value::Expr(e),
        None => Value::Bool(!any),
    })
}

/// A size as a product: a constant times symbols (with their powers), or
/// `None` when it is not a plain product.
type Monomial = (i64, std::collections::BTreeMap<String, u32>);

fn monomial(ev: &Evaluator<'_>, v: &Value<'_>) -> Option<Monomial> {
    match v {
        Value::Int(i) => Some((*i, Default::default())),
        Value::Symbol(name, _) => Some((1, [(name.to_string(), 1)].into_iter().collect())),
        Value::Expr(e) => {
            let st = ev.stagers.last()?;
            expr_monomial(&st.func, *e)
        }
        _ => None,
    }
}

fn expr_monomial(f: &ir::Function, e: Handle<ir::Expr>) -> Option<Monomial> {
    match &f.exprs[e] {
        ir::Expr::Literal(ir::Literal::Int(i, _)) => Some((*i, Default::default())),
        ir::Expr::Var(v) if f.vars[*v].kind == VarKind::Symbolic => {
            Some((1, [(f.vars[*v].name.clone(), 1)].into_iter().collect()))
        }
        ir::Expr::Cast { dtype, arg } if dtype.is_int() => expr_monomial(f, *arg),
        ir::Expr::Binary {
            op: ir::BinaryOp::Mul,
            lhs,
            rhs,
        } => Some(mul(expr_monomial(f, *lhs)?, expr_monomial(f, *rhs)?)),
        _ => None,
    }
}

fn mul(a: Monomial, b: Monomial) -> Monomial {
    let (mut k, mut syms) = a;
    k = k.wrapping_mul(b.0);
    for (s, p) in b.1 {
        *syms.entry(s).or_insert(0) += p;
    }
    if k == 0 {
        syms.clear();
    }
    (k, syms)
}

/// `T.StridedTensor(shape, strides, dtype)`: a global tensor whose element
/// `[i0, i1, ...]` lies at `sum(i_k * strides[k])`. tilec's tensors are
/// row-major and dense, so the strides must be those of the shape (the
/// stride of an axis of extent 1 is never multiplied by anything but 0 and
/// may be anything); the tensor is then the `T.Tensor(shape, dtype)` it
/// stands for.
fn strided_tensor<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let mut slots: [Option<Value<'a>>; 4] = [None, None, None, None];
    const NAMES: [&str; 4] = ["shape", "strides", "dtype", "scope"];
    if args.len() > NAMES.len() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.StridedTensor` takes a shape, strides and a dtype",
            span,
        ));
    }
    for (k, v) in args.into_iter().enumerate() {
        slots[k] = Some(v);
    }
    for (k, v) in kwargs {
        let Some(i) = NAMES.iter().position(|n| *n == k) else {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("`T.StridedTensor` has no parameter `{k}`"),
                span,
            ));
        };
        slots[i] = Some(v);
    }
    let [shape, strides, dtype, scope] = slots;
    let (Some(shape), Some(strides)) = (shape, strides) else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.StridedTensor` takes a shape and the strides of its axes",
            span,
        ));
    };
    if let Some(scope) = &scope
        && !matches!(scope, Value::None)
        && !matches!(scope, Value::Str(s) if &**s == "global")
    {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            "`T.StridedTensor` with a scope other than \"global\" is not supported",
            span,
        ));
    }
    let shape_items = shape.as_sequence().unwrap_or_else(|| vec![shape.clone()]);
    let stride_items = strides
        .as_sequence()
        .unwrap_or_else(|| vec![strides.clone()]);
    if shape_items.len() != stride_items.len() {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "`T.StridedTensor` has {} axes and {} strides; give one stride per axis",
                shape_items.len(),
                stride_items.len()
            ),
            span,
        ));
    }
    // The row-major stride of each axis, innermost first.
    let mut expect: Option<Monomial> = Some((1, Default::default()));
    for k in (0..shape_items.len()).rev() {
        let extent = &shape_items[k];
        let stride = &stride_items[k];
        let unit_axis = extent.as_int() == Some(1);
        if !unit_axis {
            let got = monomial(ev, stride);
            let ok = matches!((&got, &expect), (Some(g), Some(e)) if g == e);
            if !ok {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!(
                            "`T.StridedTensor`: the stride of axis {k} is not the row-major stride of the shape; tilec's tensors are dense and row-major (its IR has no strides)"
                        ),
                        span,
                    )
                    .with_label("strides that are not the shape's row-major strides")
                    .with_note(
                        "pass a contiguous tensor, `T.Tensor(shape, dtype)`, or strides equal to the products of the later extents (`(N * K, K, 1)` for `(M, N, K)`)",
                    ),
                ));
            }
        }
        expect = match (expect, monomial(ev, extent)) {
            (Some(e), Some(x)) => Some(mul(e, x)),
            _ => None,
        };
    }
    let mut targs = vec![Value::tuple(shape_items)];
    targs.extend(dtype);
    super::tl::call(ev, "Tensor", targs, vec![], span)
}

/// The dtype of a run-time value (a Python float is `float32`).
fn value_dtype<'a>(ev: &mut Evaluator<'a>, x: &Value<'a>, span: Span) -> EResult<DType> {
    if !x.is_staged() {
        return Ok(DType::F32);
    }
    let st = ev.stager("a floating-point operation", span)?;
    let e = st.value_expr(x, None, span)?;
    Ok(st.ty(e))
}

/// `T.ieee_add/sub/mul/fdiv(x, y, rounding_mode="rn")`,
/// `T.ieee_frcp/fsqrt(x, rounding_mode="rn")`: the operation rounded as
/// the mode says. Round to nearest even is what the plain operators do, so
/// `"rn"` is staged as them; the directed modes are refused.
fn ieee<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    mut args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let arity = if matches!(name, "ieee_frcp" | "ieee_fsqrt") {
        1
    } else {
        2
    };
    let mut mode = (args.len() > arity).then(|| args.remove(arity));
    for (k, v) in kwargs {
        if k != "rounding_mode" {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("`T.{name}` has no parameter `{k}`"),
                span,
            ));
        }
        mode = Some(v);
    }
    if args.len() != arity {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!(
                "`T.{name}` takes {} and a rounding mode",
                if arity == 1 {
                    "one value"
                } else {
                    "two values"
                }
            ),
            span,
        ));
    }
    let mode = match &mode {
        None => "rn".to_string(),
        Some(Value::Str(s)) => s.to_string(),
        Some(other) => {
            return Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "the rounding mode of `T.{name}` is one of \"rn\", \"rz\", \"ru\", \"rd\", got {}",
                    other.a_type_name()
                ),
                span,
            ));
        }
    };
    match mode.as_str() {
        "rn" => {}
        "rz" | "ru" | "rd" => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`T.{name}` with rounding mode \"{mode}\" is not supported"),
                    span,
                )
                .with_label("a directed rounding mode")
                .with_note(
                    "tilec's IR rounds floating-point operations to nearest only; \"rn\" (the default) is supported",
                ),
            ));
        }
        other => {
            return Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "the rounding mode of `T.{name}` is one of \"rn\", \"rz\", \"ru\", \"rd\", got {other:?}"
                ),
                span,
            ));
        }
    }
    match name {
        "ieee_add" => ev.binop(PyBinOp::Add, &args[0], &args[1], span),
        "ieee_sub" => ev.binop(PyBinOp::Sub, &args[0], &args[1], span),
        "ieee_mul" => ev.binop(PyBinOp::Mul, &args[0], &args[1], span),
        "ieee_fdiv" => ev.binop(PyBinOp::Div, &args[0], &args[1], span),
        "ieee_frcp" => ev.binop(PyBinOp::Div, &Value::Float(1.0), &args[0], span),
        _ => super::tl::call(ev, "sqrt", args, vec![], span),
    }
}
