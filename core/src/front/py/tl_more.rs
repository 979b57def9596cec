//! More of the `T.*` vocabulary: aliases, copies whose mechanism TileLang
//! lets the user pick (`T.tma_copy`, `T.async_copy`), launch variants
//! (`T.ClusterKernel`) and hints without effect on results. Each name here
//! is staged as the tile operation or expression it means in TileLang, or
//! refused with a diagnostic that says what to write instead.

use super::codes;
use super::eval::{Evaluator, err};
use super::value::{Access, EResult, IndexItem, Value};
use crate::front::Diagnostic;
use crate::ir::{BinaryOp, DType, Span, UnaryOp};

/// `T.<name>` values this module adds, with the static name each carries.
const FUNCTIONS: &[(&str, &str)] = &[
    ("tma_copy", "T.tma_copy"),
    ("async_copy", "T.async_copy"),
    ("tma_store_wait", "T.tma_store_wait"),
    ("ClusterKernel", "T.ClusterKernel"),
    ("Serial", "T.Serial"),
    ("Select", "T.Select"),
    ("__exp", "T.__exp"),
    ("isfinite", "T.isfinite"),
    ("pdl_trigger", "T.pdl_trigger"),
    ("pdl_sync", "T.pdl_sync"),
    ("annotate_restrict_buffers", "T.annotate_restrict_buffers"),
    ("annotate_min_blocks_per_sm", "T.annotate_min_blocks_per_sm"),
    ("dtype", "T.dtype"),
    ("grid", "T.grid"),
    ("annotate_l2_hit_ratio", "T.annotate_l2_hit_ratio"),
    (
        "annotate_producer_reg_dealloc",
        "T.annotate_producer_reg_dealloc",
    ),
    (
        "annotate_consumer_reg_alloc",
        "T.annotate_consumer_reg_alloc",
    ),
    ("annotate_safe_value", "T.annotate_safe_value"),
    ("atomic_addx2", "T.atomic_addx2"),
    ("atomic_addx4", "T.atomic_addx4"),
    ("Persistent", "T.Persistent"),
    ("tan", "T.tan"),
    ("let", "T.let"),
    ("sblock", "T.sblock"),
    ("match_buffer", "T.match_buffer"),
    ("reads", "T.reads"),
    ("writes", "T.writes"),
];

/// Looks up the names this module adds to `T.`.
pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    // TileLang's short dtype names (`tilelang/language/dtypes.py`).
    let alias = match name {
        "int" => Some(DType::I32),
        "uint" => Some(DType::U32),
        "long" => Some(DType::I64),
        "short" => Some(DType::I16),
        "float" => Some(DType::F32),
        "double" => Some(DType::F64),
        _ => None,
    };
    if let Some(d) = alias {
        return Some(Value::DType(d));
    }
    super::value::table_builtin(FUNCTIONS, name)
}

/// A note for `T.<name>` when tilec knows why it is refused.
pub(crate) fn unsupported_note(name: &str) -> Option<&'static str> {
    Some(match name {
        "int4" | "uint4" => {
            "4-bit integers are packed two to a byte; tilec has no such dtype: store the \
             values as `T.int8` (or pack them by hand into `T.uint8`)"
        }
        "cummin" => {
            "TileLang's scans are `T.cumsum` and `T.cummax`: compute a running minimum as \
             `-T.cummax` of the negated values, or with a `T.serial` loop over the scanned \
             dimension"
        }
        "attr" => {
            "`T.attr` attaches an attribute for TVM's lowering passes (a `reduce_scope` for \
             `T.tvm_thread_allreduce`, a thread extent, ...); tilec has no such statement: for \
             a reduction across threads use `T.reduce_sum` / `T.reduce_max` / ... on a fragment"
        }
        "block" => {
            "`T.block` is a TVM schedulable block (with `T.reads` / `T.writes`), the input of \
             TVM's scheduling passes; tilec stages TileLang kernels: write the body directly \
             inside `T.Kernel`"
        }
        "tvm_access_ptr" | "address_of" => {
            "a raw pointer into a buffer is an argument of TVM's extern calls and intrinsics, \
             which tilec does not have; `T.access_ptr` is accepted as the operand of \
             `T.ptx_cp_async` only"
        }
        _ => return None,
    })
}

/// Whether `call` stages `T.<name>`.
pub(crate) fn handles(name: &str) -> bool {
    super::value::table_has(FUNCTIONS, name)
}

/// Keyword arguments of `name` after its positional ones, checked against
/// `allowed`; returns them.
fn keywords<'a>(
    name: &str,
    kwargs: Vec<(String, Value<'a>)>,
    allowed: &[&str],
    span: Span,
) -> EResult<Vec<(String, Value<'a>)>> {
    for (k, _) in &kwargs {
        if !allowed.contains(&k.as_str()) {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` has no parameter `{k}`"),
                    span,
                )
                .with_label("unknown keyword")
                .with_note(format!("parameters: {}", allowed.join(", "))),
            ));
        }
    }
    Ok(kwargs)
}

fn take<'a>(kwargs: &mut Vec<(String, Value<'a>)>, key: &str) -> Option<Value<'a>> {
    let i = kwargs.iter().position(|(k, _)| k == key)?;
    Some(kwargs.remove(i).1).filter(|v| !matches!(v, Value::None))
}

/// The source and destination of a copy variant: positional or keywords.
fn copy_operands<'a>(
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: &mut Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Vec<Value<'a>>> {
    let mut ops = args;
    if ops.len() > 2 {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` takes a source and a destination, then keywords"),
            span,
        ));
    }
    for key in ["src", "dst"].iter().skip(ops.len()) {
        match take(kwargs, key) {
            Some(v) => ops.push(v),
            None => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!(
                        "`T.{name}` needs a {}",
                        if *key == "src" {
                            "source"
                        } else {
                            "destination"
                        }
                    ),
                    span,
                ));
            }
        }
    }
    Ok(ops)
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
        // TileLang's `T.tma_copy` is a copy whose loads the user completes
        // through a barrier (`barrier=`, then an arrive and a wait on it) and
        // whose stores through `T.tma_store_wait`. tilec stages it as the
        // copy it is: a `copy` is complete when the next statement runs, so
        // the user's arrive and wait still order what they order, and the
        // transaction count TileLang adds to the barrier is already met.
        "tma_copy" => {
            let mut kw = keywords(
                name,
                kwargs,
                &[
                    "src",
                    "dst",
                    "barrier",
                    "cluster_mask",
                    "leader_scope_threads",
                    "eviction_policy",
                    "annotations",
                ],
                span,
            )?;
            let ops = copy_operands(name, args, &mut kw, span)?;
            if take(&mut kw, "cluster_mask").is_some() {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        "`T.tma_copy(..., cluster_mask=...)` (a multicast to the blocks of a cluster) is not supported yet",
                        span,
                    )
                    .with_label("multicast copy")
                    .with_note("without `cluster_mask` each block copies its own tile: drop it, and every block loads the tile itself"),
                ));
            }
            if let Some(bar) = take(&mut kw, "barrier") {
                // Checked to be a barrier; nothing is staged for it.
                super::tl::barrier_element(ev, &bar, "tma_copy", span)?;
            }
            super::tl::call(ev, "copy", ops, Vec::new(), span)
        }
        // `T.async_copy` is a copy into shared memory issued with
        // `cp.async`, which the user waits for; staged as `copy`, complete
        // when the next statement runs.
        "async_copy" => {
            let mut kw = keywords(
                name,
                kwargs,
                &[
                    "src",
                    "dst",
                    "coalesced_width",
                    "annotations",
                    "loop_layout",
                ],
                span,
            )?;
            let ops = copy_operands(name, args, &mut kw, span)?;
            super::tl::call(ev, "copy", ops, Vec::new(), span)
        }
        // Waits for the stores of `T.tma_copy`: they are complete already.
        "tma_store_wait" => {
            keywords(name, kwargs, &["count", "read"], span)?;
            ev.kernel_stager("`T.tma_store_wait`", span)?;
            Ok(Value::None)
        }
        "ClusterKernel" => {
            // A launch in clusters of blocks: how blocks are scheduled, not
            // what they compute. tilec has none of the cluster-level
            // operations (`T.copy_cluster`, cluster barriers, multicast
            // copies), so a kernel that compiles does not depend on it.
            if !kwargs.iter().any(|(k, _)| k == "cluster_dims") {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ClusterKernel` needs `cluster_dims`",
                    span,
                ));
            }
            super::tl::call(ev, "Kernel", args, kwargs, span)
        }
        "Serial" => super::tl::call(ev, "serial", args, kwargs, span),
        "Select" => {
            keywords(name, kwargs, &[], span)?;
            let [c, a, b] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.Select` takes a condition and two values",
                    span,
                ));
            };
            ev.select(c, a, b, span)
        }
        // TileLang's fast-math exponential (`__expf`): staged as `exp`,
        // which tilec computes to full precision unless fast math is on.
        "__exp" => {
            keywords(name, kwargs, &[], span)?;
            let [x] = args.as_slice() else {
                return Err(err(codes::BAD_ARGUMENTS, "`T.__exp` takes one value", span));
            };
            let float = match x {
                Value::Float(_) => true,
                v if v.is_staged() => {
                    let st = ev.stager("`T.__exp`", span)?;
                    let e = st.value_expr(v, None, span)?;
                    st.ty(e).is_float()
                }
                _ => false,
            };
            if !float {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    "`T.__exp` takes a floating-point value",
                    span,
                ));
            }
            super::tl::call(ev, "exp", args, Vec::new(), span)
        }
        "let" => let_binding(ev, args, kwargs, span),
        "tan" => {
            keywords(name, kwargs, &[], span)?;
            let [x] = args.as_slice() else {
                return Err(err(codes::BAD_ARGUMENTS, "`T.tan` takes one value", span));
            };
            tan(ev, x, span)
        }
        "isfinite" => {
            keywords(name, kwargs, &[], span)?;
            let [x] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.isfinite` takes one value",
                    span,
                ));
            };
            if !x.is_staged() {
                return match x {
                    Value::Int(_) | Value::Bool(_) => Ok(Value::Bool(true)),
                    Value::Float(f) => Ok(Value::Bool(f.is_finite())),
                    other => Err(err(
                        codes::TYPE_ERROR,
                        format!("`T.isfinite` takes a number, got {}", other.a_type_name()),
                        span,
                    )),
                };
            }
            let st = ev.stager("`T.isfinite`", span)?;
            let e = st.value_expr(x, None, span)?;
            if !st.ty(e).is_float() {
                return Ok(Value::Expr(st.lit(crate::ir::Literal::Bool(true))));
            }
            let nan = st.unary(UnaryOp::IsNan, e, span)?;
            let inf = st.unary(UnaryOp::IsInf, e, span)?;
            let either = st.binary(BinaryOp::Or, nan, inf, span)?;
            Ok(Value::Expr(st.unary(UnaryOp::Not, either, span)?))
        }
        // Programmatic dependent launch: when the next kernel may start and
        // where this one waits for the previous one. Kernels tilec launches
        // run one after another, so neither changes a result.
        "pdl_trigger" | "pdl_sync" => {
            if !args.is_empty() || !kwargs.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes no arguments"),
                    span,
                ));
            }
            ev.kernel_stager(&format!("`T.{name}`"), span)?;
            Ok(Value::None)
        }
        // Parameters that may alias: tilec never assumes they do not.
        "annotate_restrict_buffers" => {
            keywords(name, kwargs, &[], span)?;
            for v in &args {
                if !matches!(v, Value::Buffer(_)) {
                    return Err(err(
                        codes::TYPE_ERROR,
                        format!(
                            "`T.annotate_restrict_buffers` takes buffers, got {}",
                            v.a_type_name()
                        ),
                        span,
                    ));
                }
            }
            Ok(Value::None)
        }
        // An occupancy hint for the register allocator.
        "annotate_min_blocks_per_sm" => {
            keywords(name, kwargs, &["n"], span)?;
            let n = args.first().and_then(Value::as_int);
            if n.is_none_or(|n| n <= 0) {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    "`T.annotate_min_blocks_per_sm` takes a positive compile-time integer",
                    span,
                ));
            }
            Ok(Value::None)
        }
        // The fraction of accesses to global buffers that should stay in
        // the L2 cache: a caching hint.
        "annotate_l2_hit_ratio" => {
            keywords(name, kwargs, &[], span)?;
            for (b, ratio) in buffer_map(ev, name, &args, span)? {
                let st = ev.stager("`T.annotate_l2_hit_ratio`", span)?;
                if st.func.buffers[b].scope != crate::ir::Scope::Global {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        "persistent L2 can only be applied to global buffers",
                        span,
                    ));
                }
                if ratio.as_number().is_none() {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        "`T.annotate_l2_hit_ratio` takes a compile-time number per buffer",
                        span,
                    ));
                }
            }
            Ok(Value::None)
        }
        // Register budgets of warp-specialized roles (`setmaxnreg`): how
        // registers are shared, not what is computed.
        "annotate_producer_reg_dealloc" | "annotate_consumer_reg_alloc" => {
            let mut kw = keywords(name, kwargs, &["reg_count"], span)?;
            let n = args.first().cloned().or_else(|| take(&mut kw, "reg_count"));
            if n.is_some_and(|n| n.as_int().is_none_or(|n| n <= 0)) || args.len() > 1 {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`T.{name}` takes a positive compile-time register count"),
                    span,
                ));
            }
            ev.kernel_stager(&format!("`T.{name}`"), span)?;
            Ok(Value::None)
        }
        "sblock" => super::sblock::open(ev, args, kwargs, span),
        "match_buffer" => super::match_buffer::call(ev, args, kwargs, span),
        "reads" | "writes" => super::sblock::access_hint(ev, name, &kwargs, span),
        // The value an out-of-bounds load of a global buffer reads instead
        // of zero (`safe_value.rs`).
        "annotate_safe_value" => {
            keywords(name, kwargs, &[], span)?;
            let entries = buffer_map(ev, name, &args, span)?;
            super::safe_value::annotate(ev, entries, span)?;
            Ok(Value::None)
        }
        // `T.atomic_addx2(dst, value)` adds the 2 (x4: 4) elements that
        // start at `value` to those that start at `dst`, along the last
        // dimension.
        "atomic_addx2" | "atomic_addx4" => {
            let width = if name == "atomic_addx2" { 2 } else { 4 };
            let mut kw = keywords(name, kwargs, &["dst", "value", "return_prev"], span)?;
            if take(&mut kw, "return_prev").is_some_and(|v| v.truthy() != Some(false)) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!("`T.{name}(..., return_prev=True)` is not supported yet"),
                        span,
                    )
                    .with_label("the previous values cannot be returned"),
                ));
            }
            let mut ops = args;
            for key in ["dst", "value"].iter().skip(ops.len()) {
                if let Some(v) = take(&mut kw, key) {
                    ops.push(v);
                }
            }
            let [dst, value] = ops.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes a destination and a value element"),
                    span,
                ));
            };
            // One element-wise atomic add per element of the group: each
            // element gets the same sum as under TileLang's paired add.
            for k in 0..width {
                let d = shifted(ev, name, dst, k, width, span)?;
                let v = shifted(ev, name, value, k, width, span)?;
                super::tl::call(ev, "atomic_add", vec![d, v], Vec::new(), span)?;
            }
            Ok(Value::None)
        }
        // Staged by the `for` statement that iterates it (`eval.rs`,
        // `stage_persistent`).
        "Persistent" => Err(Box::new(
            Diagnostic::error(
                codes::PLACEMENT,
                "`T.Persistent(...)` can only be iterated by a `for` statement in kernel code",
                span,
            )
            .with_label("not iterated by a `for`")
            .with_note(
                "write `for bx, by in T.Persistent([m_blocks, n_blocks], wave_size, block_id):`",
            ),
        )),
        // TVM's `T.grid(a, b, ...)`: serial loops over each extent, the
        // first outermost.
        "grid" => {
            keywords(name, kwargs, &[], span)?;
            if args.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.grid` needs at least one extent",
                    span,
                ));
            }
            let mut ranges = Vec::with_capacity(args.len());
            for a in &args {
                ranges.push(super::tl::loop_range(ev, a, None, span)?);
            }
            Ok(Value::Loop(std::rc::Rc::new(super::value::LoopSpec {
                kind: super::value::LoopSpecKind::Serial(crate::ir::LoopKind::Serial),
                group: None,
                ranges,
                step: None,
            })))
        }
        "dtype" => {
            keywords(name, kwargs, &[], span)?;
            let [d] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.dtype` takes one dtype name",
                    span,
                ));
            };
            Ok(Value::DType(super::tl::dtype_of(d, span)?))
        }
        other => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`T.{other}` is not supported by tilec"),
            span,
        )),
    }
}

/// The buffer → value entries of a hint's single dict argument.
fn buffer_map<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: &[Value<'a>],
    span: Span,
) -> EResult<Vec<(crate::ir::Handle<crate::ir::Buffer>, Value<'a>)>> {
    let [Value::Dict(d)] = args else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{name}` takes one dict from buffers to values"),
            span,
        ));
    };
    ev.kernel_stager(&format!("`T.{name}`"), span)?;
    d.borrow()
        .iter()
        .map(|(k, v)| match k {
            Value::Buffer(b) => Ok((*b, v.clone())),
            other => Err(err(
                codes::TYPE_ERROR,
                format!(
                    "the keys of `T.{name}` must be buffers, got {}",
                    other.a_type_name()
                ),
                span,
            )),
        })
        .collect()
}

/// The element `k` places after the element `v` along the last dimension.
fn shifted<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    v: &Value<'a>,
    k: i64,
    width: i64,
    span: Span,
) -> EResult<Value<'a>> {
    let Value::Access(acc) = v else {
        return Err(Box::new(
            Diagnostic::error(
                codes::TYPE_ERROR,
                format!("`T.{name}` takes buffer elements, got {}", v.a_type_name()),
                span,
            )
            .with_note(format!(
                "pass the first element of each group of {width}: `T.{name}(B[i, j], A[i, j])`"
            )),
        ));
    };
    let mut items = acc.items.clone();
    let rank = ev.stager(&format!("`T.{name}`"), span)?.func.buffers[acc.buffer]
        .shape
        .len();
    let last = match items.last() {
        Some(IndexItem::Point(e)) if items.len() == rank => *e,
        _ => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`T.{name}` takes single elements (one index per dimension)"),
                    span,
                )
                .with_note(format!(
                    "pass the first element of each group of {width}: `T.{name}(B[i, j], A[i, j])`"
                )),
            ));
        }
    };
    let st = ev.stager(&format!("`T.{name}`"), span)?;
    let k = st.int(k);
    let index = st.binary(BinaryOp::Add, last, k, span)?;
    if let Some(item) = items.last_mut() {
        *item = IndexItem::Point(index);
    }
    Ok(Value::Access(std::rc::Rc::new(Access {
        buffer: acc.buffer,
        items,
        span: acc.span,
    })))
}

/// The type a float computation on `d` is carried out in: 16-bit and 8-bit
/// floats in float32, as TileLang's CUDA code does (`htan`, `hround` widen
/// to float); float32 and float64 in themselves.
fn wide_float(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// `T.tan(x)`. The IR has no tangent; it is staged as `sin(x) / cos(x)`
/// computed in float32 (float64 for float64), then converted to `x`'s type.
/// With `sin` and `cos` each correctly rounded to float32 the quotient is
/// within 2 ulps of the tangent over the whole float32 range, next to
/// ±pi/2 included (where both the tangent and the quotient grow without
/// bound), and within 1 ulp for 16-bit floats after the final rounding.
fn tan<'a>(ev: &mut Evaluator<'a>, x: &Value<'a>, span: Span) -> EResult<Value<'a>> {
    if !x.is_staged() {
        return match x {
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                Ok(Value::Float(x.as_number().unwrap_or(0.0).tan()))
            }
            other => Err(err(
                codes::TYPE_ERROR,
                format!("`T.tan` takes a number, got {}", other.a_type_name()),
                span,
            )),
        };
    }
    let st = ev.stager("`T.tan`", span)?;
    let e = st.value_expr(x, None, span)?;
    let d = st.ty(e);
    let out = if d.is_float() { d } else { DType::F32 };
    let w = st.cast(e, wide_float(out), span)?;
    let s = st.unary(UnaryOp::Sin, w, span)?;
    let c = st.unary(UnaryOp::Cos, w, span)?;
    let q = st.binary(BinaryOp::Div, s, c, span)?;
    Ok(Value::Expr(st.cast(q, out, span)?))
}

/// `T.round(x, rounding_mode)`: `"ties-to-even"` (the default) is the IR's
/// `round`; `"ties-away-from-zero"` (C's `round`) is staged from it exactly:
/// the two differ only where the fraction of `|x|` is exactly one half,
/// and there the result is `floor(|x|) + 1` with `x`'s sign.
pub(crate) fn round_with_mode<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let mut kw = keywords("round", kwargs, &["x", "rounding_mode"], span)?;
    let mut args = args;
    if args.len() > 2 {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.round` takes a value and a rounding mode",
            span,
        ));
    }
    let mode = if args.len() == 2 {
        args.pop()
    } else {
        take(&mut kw, "rounding_mode")
    };
    let x = match args.pop().or_else(|| take(&mut kw, "x")) {
        Some(x) => x,
        None => return Err(err(codes::BAD_ARGUMENTS, "`T.round` needs a value", span)),
    };
    let away = match &mode {
        None => false,
        Some(Value::Str(m)) if &**m == "ties-to-even" => false,
        Some(Value::Str(m)) if &**m == "ties-away-from-zero" => true,
        Some(other) => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`T.round` has no rounding mode {}", other.repr()),
                    span,
                )
                .with_label("unknown rounding mode")
                .with_note(
                    "rounding modes: \"ties-to-even\" (the default), \"ties-away-from-zero\"",
                ),
            ));
        }
    };
    if !away {
        return super::tl::unary_math(ev, UnaryOp::Round, &x, span);
    }
    if !x.is_staged() {
        return match x {
            Value::Int(i) => Ok(Value::Int(i)),
            Value::Float(f) => Ok(Value::Float(f.round())),
            other => Err(err(
                codes::TYPE_ERROR,
                format!("`T.round` takes a number, got {}", other.a_type_name()),
                span,
            )),
        };
    }
    let st = ev.stager("`T.round`", span)?;
    let e = st.value_expr(&x, None, span)?;
    let d = st.ty(e);
    if !d.is_float() {
        // Integers are already whole.
        return Ok(Value::Expr(e));
    }
    let wd = wide_float(d);
    let w = st.cast(e, wd, span)?;
    let a = st.unary(UnaryOp::Abs, w, span)?;
    let f = st.unary(UnaryOp::Floor, a, span)?;
    // Exact: the fraction of a float is a float.
    let frac = st.binary(BinaryOp::Sub, a, f, span)?;
    let half = st.number(0.5, wd);
    let tie = st.binary(BinaryOp::Eq, frac, half, span)?;
    let one = st.number(1.0, wd);
    let up = st.binary(BinaryOp::Add, f, one, span)?;
    let zero = st.number(0.0, wd);
    let neg = st.binary(BinaryOp::Lt, w, zero, span)?;
    let down = st.unary(UnaryOp::Neg, up, span)?;
    let signed = st.expr(
        crate::ir::Expr::Select {
            cond: neg,
            then: down,
            otherwise: up,
        },
        span,
    )?;
    let even = st.unary(UnaryOp::Round, w, span)?;
    let r = st.expr(
        crate::ir::Expr::Select {
            cond: tie,
            then: signed,
            otherwise: even,
        },
        span,
    )?;
    Ok(Value::Expr(st.cast(r, d, span)?))
}

/// `T.serial(..., annotations=...)` and the other serial loops: TVM loop
/// annotations are hints to its passes (software pipelining, unrolling);
/// the loop runs its iterations in order whatever they say. Checked to be
/// a dict (or None) and dropped.
pub(crate) fn loop_annotations<'a>(
    name: &str,
    mut kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Vec<(String, Value<'a>)>> {
    if let Some(v) = take(&mut kwargs, "annotations") {
        annotation_dict(name, &v, span)?;
    }
    Ok(kwargs)
}

fn annotation_dict<'a>(name: &str, v: &Value<'a>, span: Span) -> EResult<Vec<(String, Value<'a>)>> {
    let Value::Dict(d) = v else {
        return Err(err(
            codes::TYPE_ERROR,
            format!(
                "`T.{name}(annotations=...)` takes a dict, got {}",
                v.a_type_name()
            ),
            span,
        ));
    };
    let mut out = Vec::new();
    for (k, val) in d.borrow().iter() {
        let Value::Str(k) = k else {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`T.{name}(annotations=...)` keys are strings, got {}",
                    k.a_type_name()
                ),
                span,
            ));
        };
        out.push((k.to_string(), val.clone()));
    }
    Ok(out)
}

/// Annotation keys of `T.Parallel` that only choose how the loop's stores
/// are issued.
const PARALLEL_HINTS: &[&str] = &[
    "parallel_prefer_async",
    "parallel_async_without_async_commit_wait",
];

/// `T.Parallel(..., prefer_async=..., annotations=...)`. `prefer_async`
/// asks TileLang to issue the loop's global-to-shared stores as `cp.async`
/// (and, with the annotation `parallel_async_without_async_commit_wait`, to
/// leave the commit and wait to the user's `T.ptx_commit_group` /
/// `T.ptx_wait_group`). tilec's stores are complete when the next
/// statement runs and those fences are no-ops, so a program that waits
/// before it reads gets the same values. Other annotation keys are refused.
pub(crate) fn parallel_hints<'a>(
    mut kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Vec<(String, Value<'a>)>> {
    let bool_hint = |what: &str, v: &Value<'a>| -> EResult<()> {
        match v {
            Value::Bool(_) | Value::None => Ok(()),
            other => Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`T.Parallel` {what} takes True or False, got {}",
                    other.a_type_name()
                ),
                span,
            )),
        }
    };
    if let Some(v) = take(&mut kwargs, "prefer_async") {
        bool_hint("`prefer_async`", &v)?;
    }
    if let Some(v) = take(&mut kwargs, "annotations") {
        for (k, val) in annotation_dict("Parallel", &v, span)? {
            if !PARALLEL_HINTS.contains(&k.as_str()) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!("`T.Parallel` annotation `{k}` is not supported"),
                        span,
                    )
                    .with_label("unknown loop annotation")
                    .with_note(format!(
                        "accepted annotations: {}; `coalesced_width` and `loop_layout` are keyword arguments",
                        PARALLEL_HINTS.join(", ")
                    )),
                ));
            }
            bool_hint(&format!("annotation `{k}`"), &val)?;
        }
    }
    Ok(kwargs)
}

/// `T.int32()` (any dtype called with no value): in TileLang a fresh
/// variable that a later `T.let(var, value)` binds for the rest of the
/// enclosing scope. Inside a kernel it is staged as a one-element `var`
/// (as `T.alloc_var(dtype)`), which `T.let` stores the value into: every
/// read after the binding sees that value, as with TVM's let binding.
/// Elsewhere (a variable of the function) it is refused.
pub(crate) fn declared_variable<'a>(
    ev: &mut Evaluator<'a>,
    d: DType,
    span: Span,
) -> EResult<Value<'a>> {
    if ev.kernel_stager("", span).is_err() {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.{}()` without a value outside `T.Kernel` (a variable of the function) is not supported",
                    d.tilelang_name()
                ),
                span,
            )
            .with_label("unbound variable")
            .with_note("declare it inside `T.Kernel` and bind it there with `T.let(var, value)`, or assign the value to the name"),
        ));
    }
    let what = format!("`T.{}()`", d.tilelang_name());
    super::tl::alloc(ev, crate::ir::Scope::Var, &Value::Int(1), d, &what, span)
}

/// `T.let(var, value)`: binds a variable made by `T.int32()` (any dtype
/// called with no value) for the rest of the scope; staged as the store of
/// `value` (converted to the variable's dtype) into it.
fn let_binding<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let mut kw = keywords("let", kwargs, &["v", "value", "body"], span)?;
    if args.len() > 2 || take(&mut kw, "body").is_some() {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                "`T.let(v, value, body)` (a let expression) is not supported",
                span,
            )
            .with_label("let expression")
            .with_note("compute `body` with the value in place of `v`"),
        ));
    }
    let mut args = args.into_iter();
    let v = args.next().or_else(|| take(&mut kw, "v"));
    let value = args.next().or_else(|| take(&mut kw, "value"));
    let (Some(v), Some(value)) = (v, value) else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.let` takes a variable and a value",
            span,
        ));
    };
    let st = ev.kernel_stager("`T.let`", span)?;
    let var = match &v {
        Value::Buffer(b) => {
            let buf = &st.func.buffers[*b];
            (buf.scope == crate::ir::Scope::Var && buf.shape.len() == 1).then_some(*b)
        }
        _ => None,
    };
    let Some(b) = var else {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!("`T.let` binds a variable, got {}", v.a_type_name()),
                span,
            )
            .with_label("not a variable")
            .with_note("make the variable with `T.int32()` (any dtype called with no value)"),
        ));
    };
    let zero = st.int(0);
    ev.store(b, vec![IndexItem::Point(zero)], value, span, span)?;
    Ok(Value::None)
}

/// `T.cummax(src, dst, dim, reverse)`: the inclusive running maximum along
/// `dim` (from the end with `reverse`), staged as existing IR: rows of the
/// other dimensions in a `T.Parallel` nest, each scanned by a serial loop
/// `dst[k] = max(dst[k - 1], src[k])`. As in TileLang, buffers other than
/// shared ones are scanned in a shared scratch buffer (a fragment element
/// is written only through the nest's own variables).
pub(super) fn cummax(
    st: &mut super::stage::Stager,
    src: crate::ir::Handle<crate::ir::Buffer>,
    dst: crate::ir::Handle<crate::ir::Buffer>,
    dim: u32,
    reverse: bool,
    span: Span,
) -> EResult<()> {
    use crate::ir::{Block, Expr, LoopKind, Range, Region, Scope, Stmt, VarKind};
    let dim = dim as usize;
    let Some(shape) = st.const_shape_of(src) else {
        return Err(err(
            codes::NOT_CONSTANT,
            "`T.cummax` needs a compile-time shape",
            span,
        ));
    };
    let shared = |st: &super::stage::Stager, b| st.func.buffers[b].scope == Scope::Shared;
    let whole = |st: &mut super::stage::Stager, b| {
        let zero = st.int(0);
        let ranges = st.func.buffers[b]
            .shape
            .clone()
            .into_iter()
            .map(|extent| Range {
                start: zero,
                extent,
            })
            .collect();
        Region { buffer: b, ranges }
    };
    let (from, to) = if shared(st, src) && shared(st, dst) {
        (src, dst)
    } else {
        let dtype = st.func.buffers[src].dtype;
        let dims = st.func.buffers[src].shape.clone();
        let scratch = st.add_buffer("scan", dtype, dims, Scope::Shared, span);
        st.emit(
            Stmt::Alloc {
                buffer: scratch,
                init: None,
            },
            span,
        );
        let (s, d) = (whole(st, src), whole(st, scratch));
        st.emit(Stmt::Copy { src: s, dst: d }, span);
        (scratch, scratch)
    };
    let n = shape[dim];
    // The rows: one parallel variable per other dimension (one of extent
    // 1 for a 1-D buffer).
    let mut vars = Vec::new();
    let mut extents = Vec::new();
    let mut index: Vec<Option<crate::ir::Handle<Expr>>> = Vec::new();
    for (d, &e) in shape.iter().enumerate() {
        if d == dim {
            index.push(None);
            continue;
        }
        let v = st.add_var("s", DType::I32, VarKind::Loop);
        vars.push(v);
        extents.push(st.int(e));
        index.push(Some(st.var(v)));
    }
    if vars.is_empty() {
        vars.push(st.add_var("s", DType::I32, VarKind::Loop));
        extents.push(st.int(1));
    }
    let at = |st: &mut super::stage::Stager, k: crate::ir::Handle<Expr>| -> Vec<_> {
        let _ = st;
        index.iter().map(|i| i.unwrap_or(k)).collect()
    };
    let load = |st: &mut super::stage::Stager, b, k| {
        let indices = at(st, k);
        st.expr(Expr::Load { buffer: b, indices }, span)
    };
    let mut body = Block::new();
    let first = st.int(if reverse { n - 1 } else { 0 });
    if from != to {
        let v = load(st, from, first)?;
        let indices = at(st, first);
        body.push(
            Stmt::Store {
                buffer: to,
                indices,
                value: v,
            },
            span,
        );
    }
    if n > 1 {
        // `s` in 1 .. n: `k = s` (or `n - 1 - s`), `prev = k ∓ 1`.
        let s = st.add_var("k", DType::I32, VarKind::Loop);
        let sv = st.var(s);
        let (k, prev) = if reverse {
            let last = st.int(n - 1);
            let k = st.binary(BinaryOp::Sub, last, sv, span)?;
            let nn = st.int(n);
            let prev = st.binary(BinaryOp::Sub, nn, sv, span)?;
            (k, prev)
        } else {
            let one = st.int(1);
            (sv, st.binary(BinaryOp::Sub, sv, one, span)?)
        };
        let old = load(st, to, prev)?;
        let x = load(st, from, k)?;
        let value = st.binary(BinaryOp::Max, old, x, span)?;
        let indices = at(st, k);
        let mut inner = Block::new();
        inner.push(
            Stmt::Store {
                buffer: to,
                indices,
                value,
            },
            span,
        );
        let (start, extent) = (st.int(1), st.int(n - 1));
        body.push(
            Stmt::For {
                var: s,
                start,
                extent,
                kind: LoopKind::Serial,
                body: inner,
            },
            span,
        );
    }
    st.emit(
        Stmt::Parallel {
            vars,
            extents,
            body,
        },
        span,
    );
    if to != dst {
        let (s, d) = (whole(st, to), whole(st, dst));
        st.emit(Stmt::Copy { src: s, dst: d }, span);
    }
    Ok(())
}
