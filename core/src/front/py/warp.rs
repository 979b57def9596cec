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
    if k.in_role {
        return refuse(
            format!("{what} inside `T.ws`"),
            "warp reduction in a role",
            "tilec runs a warp reduction over every thread of the block; compute the value in \
             the kernel's own code, outside the roles"
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

/// Whether the kernel's code at this point runs on every thread of the
/// block together: outside `T.Parallel` and any `if` on the thread index.
/// `what` names the construct for the refusal, `why` says why it needs
/// that.
fn converged<'a>(ev: &mut Evaluator<'a>, what: &str, why: &str, span: Span) -> EResult<()> {
    let st = ev.kernel_stager(what, span)?;
    let place = if st.parallel_depth > 0 {
        "inside `T.Parallel`"
    } else if st.thread_guard_depth > 0 {
        "under an `if` on the thread index"
    } else {
        return Ok(());
    };
    Err(Box::new(
        Diagnostic::error(codes::UNSUPPORTED_TILELANG, format!("{what} {place}"), span)
            .with_label("not reached by every thread together")
            .with_note(why.to_string()),
    ))
}

/// `T.shuffle_elect(thread_extent)`: TileLang's `tl_shuffle_elect<n>()`,
/// `elect_one_sync() && warp_idx % ceil(n / 32) == 0` (`n == 0`: lane 0
/// of warp 0). Where every thread of the block reaches it, the elected
/// lane is lane 0, so the value is `tx % (32 · ceil(n / 32)) == 0`
/// (`tx == 0` for `n == 0`).
pub(crate) fn shuffle_elect<'a>(
    ev: &mut Evaluator<'a>,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = "`T.shuffle_elect`";
    let n = match (args, kwargs) {
        ([v], []) => v,
        ([], [(k, v)]) if k == "thread_extent" => v,
        _ => {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("{what} takes one thread extent"),
                span,
            ));
        }
    };
    let Some(n) = n.as_int().filter(|&n| n >= 0) else {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "{what} needs a non-negative compile-time thread extent (a template argument in TileLang)"
            ),
            span,
        ));
    };
    converged(
        ev,
        what,
        "the lane `T.shuffle_elect` elects is the first active lane of the warp, which depends on \
         the threads that reach it; call it where every thread of the block does, or write the \
         condition on the thread index itself (`tx % 64 == 0`)",
        span,
    )?;
    let st = ev.kernel_stager(what, span)?;
    let Some(k) = st.kernel else {
        return Err(super::stage::cascade());
    };
    if k.dims[1] * k.dims[2] > 1 {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("{what} in a kernel of threads {:?} (x, y, z)", k.dims),
                span,
            )
            .with_label("several thread dimensions")
            .with_note("TileLang's warp index here counts `threadIdx.x` alone; write the condition on `T.get_thread_binding(d)` yourself"),
        ));
    }
    let lanes = i64::from(WARP_REDUCE_LANES);
    let group = if n == 0 {
        0
    } else {
        lanes * ((n + lanes - 1) / lanes)
    };
    let tx = st.var(k.thread_var);
    let lhs = if group == 0 {
        tx
    } else {
        let g = st.int(group);
        st.binary(crate::ir::BinaryOp::FloorMod, tx, g, span)?
    };
    let zero = st.int(0);
    let e = st.binary(crate::ir::BinaryOp::Eq, lhs, zero, span)?;
    Ok(Value::Expr(e))
}

/// `T.sync_warp(mask=None)`: `__syncwarp`, a barrier of the warp's lanes.
/// Where every thread of the block reaches it with the full mask, a block
/// barrier orders at least what it orders, so it is staged as
/// `T.sync_threads()`.
pub(crate) fn sync_warp<'a>(
    ev: &mut Evaluator<'a>,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = "`T.sync_warp`";
    let mask = match (args, kwargs) {
        ([], []) => None,
        ([v], []) => Some(v),
        ([], [(k, v)]) if k == "mask" => Some(v),
        _ => {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("{what} takes at most a lane mask"),
                span,
            ));
        }
    };
    match mask {
        None | Some(Value::None) => {}
        Some(m) if m.as_int().is_some_and(|m| m & 0xFFFF_FFFF == 0xFFFF_FFFF) => {}
        Some(_) => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("{what} with a partial lane mask"),
                    span,
                )
                .with_label("lane mask")
                .with_note("tilec stages `T.sync_warp()` with the full mask (0xFFFFFFFF) as a block barrier; a barrier of some lanes only has no equivalent"),
            ));
        }
    }
    converged(
        ev,
        what,
        "tilec stages `T.sync_warp()` as a block barrier, which every thread must reach; move \
         it out of the `if` (the shared-memory accesses around it are ordered the same)",
        span,
    )?;
    let st = ev.kernel_stager(what, span)?;
    st.emit(Stmt::Barrier, span);
    Ok(Value::None)
}

/// `T.device_assert(condition, msg="", no_stack_info=False)`: every
/// thread that runs it checks the condition, and the kernel stops where it
/// is false (TileLang prints the message and traps; tilec's backends trap,
/// and the reference interpreter reports the failed assertion at the
/// call's line).
pub(crate) fn device_assert<'a>(
    ev: &mut Evaluator<'a>,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = "`T.device_assert`";
    const PARAMS: [&str; 3] = ["condition", "msg", "no_stack_info"];
    if args.len() > PARAMS.len() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("{what} takes a condition, a message and `no_stack_info`"),
            span,
        ));
    }
    let mut cond = args.first().cloned();
    for (k, v) in kwargs {
        match k.as_str() {
            "condition" => cond = Some(v.clone()),
            "msg" | "no_stack_info" => {}
            other => {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("{what} has no parameter `{other}`"),
                    span,
                ));
            }
        }
    }
    let Some(cond) = cond else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("{what} needs a condition"),
            span,
        ));
    };
    let st = ev.kernel_stager(what, span)?;
    let c = st.bool_expr(&cond, span)?;
    if st.func.as_literal(c) == Some(crate::ir::Literal::Bool(true)) {
        return Ok(Value::None);
    }
    st.emit(Stmt::DeviceAssert { cond: c }, span);
    Ok(Value::None)
}

/// Which of TileLang's four warp shuffles a call is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shuffle {
    /// `T.shfl_sync(value, srcLane)`: lane `srcLane % width` of the group.
    Index,
    /// `T.shfl_xor(value, laneMask)`: lane `lane ^ laneMask`.
    Xor,
    /// `T.shfl_down(value, delta)`: lane `lane + delta`.
    Down,
    /// `T.shfl_up(value, delta)`: lane `lane - delta`.
    Up,
}

/// `T.shfl_sync/shfl_xor/shfl_down/shfl_up(value, lane_or_delta, width=32,
/// mask=0xFFFFFFFF)`: each thread reads `value` of another lane of its
/// group of `width` consecutive lanes (CUDA's `__shfl*_sync`, HIP's
/// `__shfl*` with the same width, so 32-lane groups on every target).
/// A source lane past the group (or, for `shfl_xor`, in a later group)
/// gives the thread its own value, as CUDA does.
///
/// Where every thread of the block reaches the call with the full mask,
/// the exchange is staged through a block-shared buffer: each thread
/// stores its value at its thread index, a barrier, each thread reads its
/// source lane's slot (its own where the source is out of range) into a
/// fresh per-thread var, and a barrier before the buffer can be written
/// again. That is the shuffle's result on every target.
pub(crate) fn shuffle<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = format!("`T.{name}`");
    let (op, second) = match name {
        "shfl_sync" => (Shuffle::Index, "srcLane"),
        "shfl_xor" => (Shuffle::Xor, "delta"),
        "shfl_down" => (Shuffle::Down, "delta"),
        "shfl_up" => (Shuffle::Up, "delta"),
        _ => {
            return Err(err(
                codes::UNSUPPORTED_TILELANG,
                format!("{what} is not supported by tilec"),
                span,
            ));
        }
    };
    let params = ["value", second, "width", "mask"];
    let mut slots: [Option<Value<'a>>; 4] = [None, None, None, None];
    if args.len() > params.len() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("{what} takes a value, a {second}, a width and a mask"),
            span,
        ));
    }
    for (slot, a) in slots.iter_mut().zip(args) {
        *slot = Some(a.clone());
    }
    for (k, v) in kwargs {
        let Some(i) = params.iter().position(|p| p == k) else {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("{what} has no parameter `{k}`"),
                span,
            ));
        };
        if slots[i].is_some() {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("{what} got `{k}` twice"),
                span,
            ));
        }
        slots[i] = Some(v.clone());
    }
    let [Some(value), Some(lane), width, mask] = slots else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("{what} needs a value and a {second}"),
            span,
        ));
    };
    let refuse = |msg: String, label: &str, note: String| -> EResult<Value<'a>> {
        Err(Box::new(
            Diagnostic::error(codes::UNSUPPORTED_TILELANG, msg, span)
                .with_label(label)
                .with_note(note),
        ))
    };
    let lanes = i64::from(WARP_REDUCE_LANES);
    let width = match width {
        None => lanes,
        Some(w) => match w.as_int() {
            Some(w) if w > 0 && w <= lanes && w & (w - 1) == 0 => w,
            _ => {
                return refuse(
                    format!(
                        "{what} with a width that is not a compile-time power of two up to {lanes}"
                    ),
                    "shuffle width",
                    format!(
                        "CUDA's shuffles take a power-of-two width of at most {lanes}; give one \
                         (the default is {lanes})"
                    ),
                );
            }
        },
    };
    match mask {
        None | Some(Value::None) => {}
        Some(m) if m.as_int().is_some_and(|m| m & 0xFFFF_FFFF == 0xFFFF_FFFF) => {}
        Some(_) => {
            return refuse(
                format!("{what} with a partial lane mask"),
                "lane mask",
                "tilec gives shuffles the full-warp mask (0xFFFFFFFF), where every lane takes part; \
                 compute the value on every lane and shuffle with the default mask"
                    .to_string(),
            );
        }
    }
    let what_s = what.as_str();
    converged(
        ev,
        what_s,
        "a shuffle reads the value of another lane, which that lane gives only if it reaches \
         the shuffle too; compute the value for every thread and call it outside the `if` or \
         `T.Parallel` nest",
        span,
    )?;
    let st = ev.kernel_stager(what_s, span)?;
    let Some(k) = st.kernel else {
        return Err(super::stage::cascade());
    };
    if k.in_role {
        return refuse(
            format!("{what} inside `T.ws`"),
            "shuffle in a role",
            "tilec exchanges shuffled values through a barrier of the whole block; shuffle in \
             the kernel's own code, outside the roles"
                .to_string(),
        );
    }
    if i64::from(k.threads) % lanes != 0 {
        return refuse(
            format!(
                "{what} in a kernel of {} threads, not a multiple of {lanes}",
                k.threads
            ),
            "shuffle with a partial warp",
            format!(
                "a full-mask shuffle needs every lane of the warp; launch a multiple of {lanes} threads"
            ),
        );
    }
    let v = st.value_expr(&value, None, span)?;
    let dtype = st.ty(v);
    if !(dtype.is_int() || dtype.is_float()) {
        return refuse(
            format!("{what} of a {dtype} value"),
            "shuffle of this type",
            "tilec shuffles integers and floats; cast the value to one of those".to_string(),
        );
    }
    use crate::ir::BinaryOp as B;
    let tx = st.var(k.thread_var);
    let tx_ty = st.ty(tx);
    let int = |st: &mut super::stage::Stager, n: i64| st.lit(crate::ir::Literal::Int(n, tx_ty));
    let w = int(st, width);
    // `l`: the lane's place in its group; `base`: the group's first thread.
    let l = st.binary(B::FloorMod, tx, w, span)?;
    let base = st.binary(B::Sub, tx, l, span)?;
    let src = if op == Shuffle::Index {
        let s = st.value_expr(&lane, Some(tx_ty), span)?;
        if !st.ty(s).is_int() {
            return refuse(
                format!("{what} with a non-integer source lane"),
                "source lane",
                "give the source lane as an integer".to_string(),
            );
        }
        // CUDA's and HIP's `srcLane & (width - 1)`.
        let s = st.cast(s, tx_ty, span)?;
        let m = st.binary(B::FloorMod, s, w, span)?;
        st.binary(B::Add, base, m, span)?
    } else {
        let d = st.value_expr(&lane, Some(tx_ty), span)?;
        if !st.ty(d).is_int() {
            return refuse(
                format!("{what} with a non-integer {second}"),
                "lane distance",
                format!("give the {second} as an integer"),
            );
        }
        let d = st.cast(d, tx_ty, span)?;
        // CUDA takes the distance as unsigned and HIP as a signed lane
        // index, so they agree on non-negative distances (for `shfl_xor`,
        // below 32: HIP's 64-lane wavefront reaches the other half of the
        // wavefront with a mask of 32 or more, where CUDA gives the
        // thread's own value).
        let limit = if op == Shuffle::Xor {
            Some(lanes)
        } else {
            None
        };
        let zero_t = int(st, 0);
        let low = st.binary(B::Ge, d, zero_t, span)?;
        let in_range = match limit {
            Some(n) => {
                let n = int(st, n);
                let high = st.binary(B::Lt, d, n, span)?;
                st.binary(B::And, low, high, span)?
            }
            None => low,
        };
        let outside = match limit {
            Some(n) => format!("outside 0 to {}", n - 1),
            None => "that is negative".to_string(),
        };
        match st.func.as_literal(in_range) {
            Some(crate::ir::Literal::Bool(true)) => {}
            Some(_) => {
                return refuse(
                    format!("{what} with a {second} {outside}"),
                    "lane distance",
                    if op == Shuffle::Xor {
                        "CUDA gives each thread its own value for a lane mask of 32 or more, and \
                         HIP's 64-lane wavefronts read the other half of the wavefront; give a \
                         mask below 32"
                            .to_string()
                    } else {
                        "CUDA reads a negative distance as a large unsigned one (the thread's own \
                         value) and HIP as a lane index; give a non-negative distance"
                            .to_string()
                    },
                );
            }
            None => st.emit(Stmt::DeviceAssert { cond: in_range }, span),
        }
        let (ok, from) = match op {
            Shuffle::Up => (
                st.binary(B::Ge, l, d, span)?,
                st.binary(B::Sub, tx, d, span)?,
            ),
            Shuffle::Down => {
                let rest = st.binary(B::Sub, w, l, span)?;
                (
                    st.binary(B::Lt, d, rest, span)?,
                    st.binary(B::Add, tx, d, span)?,
                )
            }
            _ => {
                // j = lane ^ d stays in the warp; it is read where it is not
                // in a later group than the lane's own.
                let full = int(st, lanes);
                let lane_id = st.binary(B::FloorMod, tx, full, span)?;
                let j = st.binary(B::BitXor, lane_id, d, span)?;
                let warp = st.binary(B::Sub, tx, lane_id, span)?;
                let from = st.binary(B::Add, warp, j, span)?;
                let end = st.binary(B::Add, base, w, span)?;
                (st.binary(B::Lt, from, end, span)?, from)
            }
        };
        st.expr(
            Expr::Select {
                cond: ok,
                then: from,
                otherwise: tx,
            },
            span,
        )?
    };
    let n = int(st, i64::from(k.threads));
    let slots = st.add_buffer(name, dtype, vec![n], Scope::Shared, span);
    st.emit(
        Stmt::Alloc {
            buffer: slots,
            init: None,
        },
        span,
    );
    let one = st.int(1);
    let zero = st.int(0);
    let out = st.add_buffer(name, dtype, vec![one], Scope::Var, span);
    st.emit(
        Stmt::Alloc {
            buffer: out,
            init: None,
        },
        span,
    );
    st.emit(
        Stmt::Store {
            buffer: slots,
            indices: vec![tx],
            value: v,
        },
        span,
    );
    st.emit(Stmt::Barrier, span);
    let read = st.expr(
        Expr::Load {
            buffer: slots,
            indices: vec![src],
        },
        span,
    )?;
    st.emit(
        Stmt::Store {
            buffer: out,
            indices: vec![zero],
            value: read,
        },
        span,
    );
    st.emit(Stmt::Barrier, span);
    let load = st.expr(
        Expr::Load {
            buffer: out,
            indices: vec![zero],
        },
        span,
    )?;
    Ok(Value::Expr(load))
}
