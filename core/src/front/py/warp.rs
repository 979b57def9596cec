//! Warp-level vocabulary: `T.warp_reduce_sum/max/min/bitand/bitor(value)`.
//!
//! TileLang's warp reductions combine one value per thread across each
//! group of 32 consecutive threads (a butterfly of `shfl_xor`s, 32 lanes
//! on every target) and give every lane the result. tilec stages the call
//! as a `warp_reduce` statement into a fresh one-element `var` buffer
//! (kept per thread), and the call's value is a load of that buffer.

use super::codes;
use super::eval::{Evaluator, err};
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::{DType, Expr, ReduceKind, Scope, Span, Stmt, WARP_REDUCE_LANES};

/// The reduction of `T.warp_reduce_<op>`.
fn warp_reduce_kind(name: &str) -> Option<ReduceKind> {
    Some(match name.strip_prefix("warp_reduce_")? {
        "sum" => ReduceKind::Sum,
        "max" => ReduceKind::Max,
        "min" => ReduceKind::Min,
        "bitand" => ReduceKind::BitAnd,
        "bitor" => ReduceKind::BitOr,
        _ => return None,
    })
}

/// `T.warp_reduce_<op>(value)`.
pub(crate) fn warp_reduce<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = format!("`T.{name}`");
    let Some(kind) = warp_reduce_kind(name) else {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("{what} is not supported by tilec"),
            span,
        ));
    };
    let value = match (args, kwargs) {
        ([v], []) => v,
        ([], [(k, v)]) if k == "value" => v,
        _ => {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("{what} takes one value"),
                span,
            ));
        }
    };
    let st = ev.kernel_stager(&what, span)?;
    let Some(k) = st.kernel else {
        return Err(super::stage::cascade());
    };
    let refuse = |msg: String, label: &str, note: String| -> EResult<Value<'a>> {
        Err(Box::new(
            Diagnostic::error(codes::UNSUPPORTED_TILELANG, msg, span)
                .with_label(label)
                .with_note(note),
        ))
    };
    if st.parallel_depth > 0 {
        return refuse(
            format!("{what} inside `T.Parallel`"),
            "warp reduction in a parallel nest",
            "a warp reduction combines one value per thread, and which thread runs which \
             iteration of a `T.Parallel` nest is the compiler's choice; call it in the \
             kernel's own code (`v = T.warp_reduce_sum(x[tx])`), or reduce a fragment with \
             `T.reduce_sum`"
                .to_string(),
        );
    }
    if st.thread_guard_depth > 0 {
        return refuse(
            format!("{what} under an `if` on the thread index"),
            "warp reduction under a thread-dependent condition",
            "TileLang's warp reductions shuffle with the full-warp mask, so every lane of the \
             warp must reach them together; compute the value for every thread (`T.if_then_else` \
             with the reduction's identity where a thread has none) and call it outside the `if`"
                .to_string(),
        );
    }
    if k.threads % WARP_REDUCE_LANES != 0 {
        return refuse(
            format!(
                "{what} in a kernel of {} threads, not a multiple of {WARP_REDUCE_LANES}",
                k.threads
            ),
            "warp reduction with a partial warp",
            format!(
                "TileLang's warp reduction shuffles over whole groups of {WARP_REDUCE_LANES} \
                 threads; launch a multiple of {WARP_REDUCE_LANES} threads"
            ),
        );
    }
    let e = st.value_expr(value, None, span)?;
    let dtype = st.ty(e);
    let float_ok = matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
    if kind.is_bitwise() && !dtype.is_int() {
        return refuse(
            format!("{what} of a {dtype} value"),
            "bitwise warp reduction of a non-integer",
            format!("{what} combines the bits of integers; cast the value to an integer type"),
        );
    }
    if !(dtype.is_int() || float_ok) {
        return refuse(
            format!("{what} of a {dtype} value"),
            "warp reduction of this type",
            "tilec reduces integers and float16, bfloat16, float32 and float64 values across \
             a warp; cast the value to one of those"
                .to_string(),
        );
    }
    let one = st.int(1);
    let zero = st.int(0);
    let buffer = st.add_buffer(name, dtype, vec![one], Scope::Var, span);
    st.emit(Stmt::Alloc { buffer, init: None }, span);
    st.emit(
        Stmt::WarpReduce {
            kind,
            buffer,
            indices: vec![zero],
            value: e,
        },
        span,
    );
    let load = st.expr(
        Expr::Load {
            buffer,
            indices: vec![zero],
        },
        span,
    )?;
    Ok(Value::Expr(load))
}
