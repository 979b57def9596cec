//! Hand-written asynchronous copies: `T.access_ptr` and `T.ptx_cp_async`,
//! with the group fences `T.ptx_commit_group` / `T.ptx_wait_group`.
//!
//! In TileLang, `T.ptx_cp_async(dst_ptr, src_ptr, n)` is one thread's PTX
//! `cp.async` of `n` consecutive elements: from the address `src_ptr`
//! (`T.access_ptr(A[i, j], "r", n)`, the element `A[i, j]` and the ones
//! after it in memory) to `dst_ptr`. The copy completes at the next
//! `T.ptx_wait_group` of its group. tilec stages it as the `n` element
//! stores of the executing thread, complete when the next statement runs,
//! so the wait has nothing left to wait for. Reading the destination
//! before the wait is a race in TileLang; the staged copy gives the copied
//! values there, which is one of the outcomes the race allows.
//!
//! `T.cp_async_barrier_noinc(bar)` is PTX `cp.async.mbarrier.arrive.noinc`:
//! an arrive of the executing thread on `bar`, counted against the
//! barrier's expected arrivals (no increment of the pending count, which is
//! what `.noinc` means), triggered once the thread's earlier `cp.async`
//! copies are complete, releasing their writes. The staged copies are
//! complete when the next statement runs, so it is exactly the thread's
//! ordinary arrive, `T.mbarrier_arrive(bar)`, and is staged as one.
//!
//! `T.dp4a(a, b, c)` is CUDA's `__dp4a` on the four consecutive `int8`
//! elements from `a` and from `b` (a buffer or an element, addressed as
//! `T.access_ptr` addresses it) and the `int32` element at `c`:
//! `c += a[0]·b[0] + ... + a[3]·b[3]`, products of the signed bytes in
//! 32 bits. tilec stages that sum as the executing thread's store.
//!
//! A pointer exists only as an argument of `T.ptx_cp_async`; any other use
//! is refused where it happens.

use super::codes;
use super::eval::{Evaluator, err};
use super::value::{Access, EResult, IndexItem, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::ir::{self, Handle, Span};
use std::rc::Rc;

/// `T.<name>` values this module stages.
const FUNCTIONS: &[(&str, &str)] = &[
    ("access_ptr", "T.access_ptr"),
    ("ptx_cp_async", "T.ptx_cp_async"),
    ("ptx_commit_group", "T.ptx_commit_group"),
    ("ptx_wait_group", "T.ptx_wait_group"),
    ("cp_async_barrier_noinc", "T.cp_async_barrier_noinc"),
    ("dp4a", "T.dp4a"),
];

/// The widest `cp.async` is 16 bytes; a count of elements above this is
/// not a single `cp.async` of any dtype.
const MAX_ELEMS: i64 = 128;

/// `T.access_ptr(base, mode, ...)`: the address of one element of a
/// buffer, as the row-major offset of that element.
#[derive(Debug)]
pub(crate) struct Pointer {
    pub buffer: Handle<ir::Buffer>,
    /// Offset in elements from the buffer's first element.
    pub offset: Handle<ir::Expr>,
    pub read: bool,
    pub write: bool,
    pub span: Span,
}

/// Looks up `T.<name>`.
pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    super::value::table_builtin(FUNCTIONS, name)
}

/// Whether `call` stages `T.<name>`.
pub(crate) fn handles(name: &str) -> bool {
    super::value::table_has(FUNCTIONS, name)
}

fn no_keywords(name: &str, kwargs: &[(String, Value<'_>)], span: Span) -> EResult<()> {
    if let Some((k, _)) = kwargs.first() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` has no parameter `{k}`"),
            span,
        ));
    }
    Ok(())
}

/// Calls `T.<name>` for a name `handles` accepts.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match name {
        "access_ptr" => access_ptr(ev, args, kwargs, span),
        "ptx_cp_async" => cp_async(ev, args, kwargs, span),
        "cp_async_barrier_noinc" => {
            let a =
                super::tl::Args::new("cp_async_barrier_noinc", &["barrier"], args, kwargs, span)?;
            let bar = a.req(0, "a barrier")?.clone();
            let (barrier, index) = super::tl::barrier_element(ev, &bar, name, span)?;
            let st = ev.kernel_stager("`T.cp_async_barrier_noinc`", span)?;
            st.emit(ir::Stmt::BarrierArrive { barrier, index }, span);
            Ok(Value::None)
        }
        "dp4a" => dp4a(ev, args, kwargs, span),
        "ptx_commit_group" => {
            no_keywords(name, &kwargs, span)?;
            if !args.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ptx_commit_group` takes no arguments",
                    span,
                ));
            }
            ev.kernel_stager("`T.ptx_commit_group`", span)?;
            Ok(Value::None)
        }
        _ => {
            no_keywords(name, &kwargs, span)?;
            let [n] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ptx_wait_group` takes the number of groups left pending",
                    span,
                ));
            };
            if n.as_int().is_none_or(|n| n < 0) {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ptx_wait_group` takes a non-negative integer known at compile time",
                    span,
                ));
            }
            ev.kernel_stager("`T.ptx_wait_group`", span)?;
            Ok(Value::None)
        }
    }
}

fn access_ptr<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let mut offset_kw = None;
    for (k, v) in kwargs {
        match k.as_str() {
            "offset" => offset_kw = Some(v),
            // The extent bounds what the pointer may touch; the copy that
            // uses it says how much it copies.
            "extent" => {}
            "ignore_last_ndim" if v.as_int() == Some(0) => {}
            "ignore_last_ndim" => {
                return Err(err(
                    codes::UNSUPPORTED_TILELANG,
                    "`T.access_ptr(..., ignore_last_ndim=...)` is not supported by tilec",
                    span,
                ));
            }
            other => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.access_ptr` has no parameter `{other}`"),
                    span,
                ));
            }
        }
    }
    let mut args = args.into_iter();
    let Some(base) = args.next() else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.access_ptr` takes a buffer element, then an access mode",
            span,
        ));
    };
    let (read, write) = match args.next() {
        None => (true, false),
        Some(Value::Str(s)) => match &*s {
            "r" => (true, false),
            "w" => (false, true),
            "rw" => (true, true),
            _ => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.access_ptr` access mode `{s}` is not one of \"r\", \"w\", \"rw\""),
                    span,
                ));
            }
        },
        Some(v) => match v.as_int() {
            Some(1) => (true, false),
            Some(2) => (false, true),
            Some(3) => (true, true),
            _ => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.access_ptr` access mode is \"r\", \"w\", \"rw\" or 1, 2, 3",
                    span,
                ));
            }
        },
    };
    // The remaining positional arguments are extents (see `extent`).
    let (buffer, items) = match &base {
        Value::Buffer(b) => (*b, Vec::new()),
        Value::Access(a) => (a.buffer, a.items.clone()),
        Value::ViewAccess(va) => {
            let st = ev.kernel_stager("`T.access_ptr`", span)?;
            super::views::same_type(st, &va.view, "`T.access_ptr`", span)?;
            let a = super::views::element(st, va)?;
            (a.buffer, a.items)
        }
        other => {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`T.access_ptr` takes a buffer or a buffer element, not {}",
                    other.a_type_name()
                ),
                span,
            ));
        }
    };
    let st = ev.kernel_stager("`T.access_ptr`", span)?;
    let shape = st.func.buffers[buffer].shape.clone();
    if !items.is_empty() && items.len() != shape.len() {
        let name = &st.func.buffers[buffer].name;
        return Err(super::stage::rank_mismatch(
            name,
            shape.len(),
            items.len(),
            span,
            "`T.access_ptr` base",
        ));
    }
    // Row-major offset of the element (a region's first element).
    let mut offset = Value::Int(0);
    for (i, dim) in shape.iter().enumerate() {
        let index = match items.get(i) {
            None | Some(IndexItem::Slice { start: None, .. }) => Value::Int(0),
            Some(IndexItem::Point(e)) | Some(IndexItem::Slice { start: Some(e), .. }) => {
                Value::Expr(*e)
            }
        };
        let scaled = Value::Expr(st.binop(PyBinOp::Mul, &offset, &Value::Expr(*dim), span)?);
        offset = Value::Expr(st.binop(PyBinOp::Add, &scaled, &index, span)?);
    }
    if let Some(extra) = offset_kw {
        offset = Value::Expr(st.binop(PyBinOp::Add, &offset, &extra, span)?);
    }
    let offset = st.value_expr(&offset, None, span)?;
    Ok(Value::Pointer(Rc::new(Pointer {
        buffer,
        offset,
        read,
        write,
        span,
    })))
}

/// The indices of the element `offset` elements after a buffer's first,
/// in row-major order.
fn unflatten(
    ev: &mut Evaluator<'_>,
    buffer: Handle<ir::Buffer>,
    offset: &Value<'_>,
    span: Span,
) -> EResult<Vec<IndexItem>> {
    let st = ev.kernel_stager("`T.ptx_cp_async`", span)?;
    let shape = st.func.buffers[buffer].shape.clone();
    let mut items = vec![None; shape.len()];
    let mut rest = offset.clone();
    for (i, dim) in shape.iter().enumerate().rev() {
        if i == 0 {
            items[0] = Some(st.value_expr(&rest, None, span)?);
            break;
        }
        let d = Value::Expr(*dim);
        items[i] = Some(st.binop(PyBinOp::Mod, &rest, &d, span)?);
        rest = Value::Expr(st.binop(PyBinOp::FloorDiv, &rest, &d, span)?);
    }
    Ok(items
        .into_iter()
        .map(|e| IndexItem::Point(e.expect("every dimension is set")))
        .collect())
}

fn pointer_arg<'a>(v: &Value<'a>, what: &str, span: Span) -> EResult<Rc<Pointer>> {
    match v {
        Value::Pointer(p) => Ok(p.clone()),
        other => Err(Box::new(
            Diagnostic::error(
                codes::TYPE_ERROR,
                format!(
                    "the {what} of `T.ptx_cp_async` must be a `T.access_ptr(...)`, not {}",
                    other.a_type_name()
                ),
                span,
            )
            .with_note("write `T.access_ptr(buffer[index], \"w\", n)` for the destination and `T.access_ptr(buffer[index], \"r\", n)` for the source"),
        )),
    }
}

fn cp_async<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let mut args = args;
    for (k, v) in kwargs {
        match k.as_str() {
            "predicate" if matches!(v, Value::None) => {}
            "predicate" if v.truthy() == Some(true) => {}
            "predicate" => {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        "`T.ptx_cp_async(..., predicate=...)` is not supported by tilec",
                        span,
                    )
                    .with_label("predicated copy")
                    .with_note("a false predicate fills the destination with zeros; write `if cond:` around an unpredicated `T.ptx_cp_async` and store zeros in the `else` branch"),
                ));
            }
            other => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.ptx_cp_async` has no parameter `{other}`"),
                    span,
                ));
            }
        }
    }
    if args.len() == 4 {
        let pred = args.pop().expect("four arguments");
        if !matches!(pred, Value::None) && pred.truthy() != Some(true) {
            return Err(err(
                codes::UNSUPPORTED_TILELANG,
                "`T.ptx_cp_async` with a predicate is not supported by tilec; write `if cond:` around it and store zeros otherwise",
                span,
            ));
        }
    }
    let [dst, src, n] = args.as_slice() else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.ptx_cp_async` takes a destination pointer, a source pointer and an element count",
            span,
        ));
    };
    let dst = pointer_arg(dst, "destination", span)?;
    let src = pointer_arg(src, "source", span)?;
    let Some(n) = n.as_int().filter(|n| (1..=MAX_ELEMS).contains(n)) else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!(
                "the element count of `T.ptx_cp_async` must be an integer from 1 to {MAX_ELEMS} known at compile time (one cp.async moves 4, 8 or 16 bytes)"
            ),
            span,
        ));
    };
    if !dst.write {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_ARGUMENTS,
                "the destination of `T.ptx_cp_async` is a read-only pointer",
                dst.span,
            )
            .with_note("take it with access mode \"w\": `T.access_ptr(buffer[index], \"w\", n)`"),
        ));
    }
    if !src.read {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_ARGUMENTS,
                "the source of `T.ptx_cp_async` is a write-only pointer",
                src.span,
            )
            .with_note("take it with access mode \"r\": `T.access_ptr(buffer[index], \"r\", n)`"),
        ));
    }
    let st = ev.kernel_stager("`T.ptx_cp_async`", span)?;
    let (dt, stt) = (
        st.func.buffers[dst.buffer].dtype,
        st.func.buffers[src.buffer].dtype,
    );
    if dt != stt {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.ptx_cp_async` copies bytes from a {} buffer into a {} buffer, a reinterpretation tilec's IR does not have",
                    stt.tilelang_name(),
                    dt.tilelang_name()
                ),
                span,
            )
            .with_note("copy between buffers of one dtype, or convert the elements with `T.cast` in a loop"),
        ));
    }
    for k in 0..n {
        let (d, s) = {
            let st = ev.kernel_stager("`T.ptx_cp_async`", span)?;
            let d = st.binop(PyBinOp::Add, &Value::Expr(dst.offset), &Value::Int(k), span)?;
            let s = st.binop(PyBinOp::Add, &Value::Expr(src.offset), &Value::Int(k), span)?;
            (Value::Expr(d), Value::Expr(s))
        };
        let dst_items = unflatten(ev, dst.buffer, &d, span)?;
        let src_items = unflatten(ev, src.buffer, &s, span)?;
        let load = Value::Access(Rc::new(Access {
            buffer: src.buffer,
            items: src_items,
            span,
        }));
        ev.store(dst.buffer, dst_items, load, span, span)?;
    }
    Ok(Value::None)
}

/// `T.dp4a(a, b, c)`: `c += Σ a[k]·b[k]` over four signed bytes, in 32 bits.
fn dp4a<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    no_keywords("dp4a", &kwargs, span)?;
    let [a, b, c] = <[Value<'a>; 3]>::try_from(args).map_err(|_| {
        err(
            codes::BAD_ARGUMENTS,
            "`T.dp4a` takes two `int8` operands and an `int32` accumulator (buffers or elements)",
            span,
        )
    })?;
    let mut ptrs = Vec::new();
    for (v, mode) in [(a, "r"), (b, "r"), (c, "rw")] {
        if !matches!(
            v,
            Value::Buffer(_) | Value::Access(_) | Value::ViewAccess(_)
        ) {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`T.dp4a` takes buffers or buffer elements, not {}",
                    v.a_type_name()
                ),
                span,
            ));
        }
        match access_ptr(ev, vec![v, Value::Str(Rc::from(mode))], Vec::new(), span)? {
            Value::Pointer(p) => ptrs.push(p),
            other => {
                return Err(err(
                    codes::TYPE_ERROR,
                    format!("`T.dp4a` operand is {}", other.a_type_name()),
                    span,
                ));
            }
        }
    }
    let st = ev.kernel_stager("`T.dp4a`", span)?;
    let dtypes: Vec<ir::DType> = ptrs
        .iter()
        .map(|p| st.func.buffers[p.buffer].dtype)
        .collect();
    for (k, (want, what)) in [
        (ir::DType::I8, "first operand"),
        (ir::DType::I8, "second operand"),
        (ir::DType::I32, "accumulator"),
    ]
    .into_iter()
    .enumerate()
    {
        if dtypes[k] != want {
            return Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!(
                        "`T.dp4a` needs an {} {what}, got {}",
                        want.tilelang_name(),
                        dtypes[k].tilelang_name()
                    ),
                    span,
                )
                .with_note("`T.dp4a` multiplies four signed bytes of each operand and adds the products to an int32"),
            ));
        }
    }
    let element = |ev: &mut Evaluator<'a>, p: &Pointer, k: i64| -> EResult<Vec<IndexItem>> {
        let st = ev.kernel_stager("`T.dp4a`", span)?;
        let at = st.binop(PyBinOp::Add, &Value::Expr(p.offset), &Value::Int(k), span)?;
        unflatten(ev, p.buffer, &Value::Expr(at), span)
    };
    let c_items = element(ev, &ptrs[2], 0)?;
    let mut sum = Value::Access(Rc::new(Access {
        buffer: ptrs[2].buffer,
        items: c_items.clone(),
        span,
    }));
    for k in 0..4 {
        let mut factors = Vec::new();
        for p in &ptrs[..2] {
            let items = element(ev, p, k)?;
            let load = Value::Access(Rc::new(Access {
                buffer: p.buffer,
                items,
                span,
            }));
            factors.push(super::tl::dtype_call(ev, ir::DType::I32, vec![load], span)?);
        }
        let product = ev.binop(PyBinOp::Mul, &factors[0], &factors[1], span)?;
        sum = ev.binop(PyBinOp::Add, &sum, &product, span)?;
    }
    ev.store(ptrs[2].buffer, c_items, sum, span, span)?;
    Ok(Value::None)
}
