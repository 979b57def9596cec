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
];

/// Looks up `T.<name>` among the TIR-level names.
pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    FUNCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, q)| Value::Builtin(q))
}

/// Whether `T.<name>` is staged here.
pub(crate) fn handles(name: &str) -> bool {
    FUNCTIONS.iter().any(|(n, _)| *n == name)
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
        (Axis::Thread(0), Some(n)) if n == i64::from(k.threads) => {
            let v = Value::Expr(thread);
            if matches!(b.start, Value::Int(0)) {
                Ok(v)
            } else {
                ev.binop(PyBinOp::Add, &b.start, &v, span)
            }
        }
        (Axis::Thread(_), Some(1)) => Ok(b.start.clone()),
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
                    "inside a `T.Kernel`, only `threadIdx.x` over all {} threads names the thread index (tilec's threads form one dimension); use `T.get_thread_binding()` and derive other indices from it",
                    k.threads
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
        in_role: false,
        mbarriers: None,
    });
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
