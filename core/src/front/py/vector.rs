//! TIR vector expressions: `T.Broadcast(value, lanes)` and
//! `T.Ramp(base, stride, lanes)`.
//!
//! tilec's IR has scalar values only, so a vector is kept as its lanes,
//! one staged scalar expression each, and every use is staged lane by
//! lane, as TileLang computes it:
//!
//! - `vec op vec` and `vec op scalar` (`+ - * / // % min max`, ...)
//!   combine lane by lane;
//! - `A[..., T.Ramp(b, s, n), ...]` loads `n` elements (a vector), and as
//!   a store target stores the lanes of a vector value one by one;
//! - `A[i:i + n] = vec` stores lane `k` at `A[i + k]`.
//!
//! A Ramp lane used as an index that is not known to be non-negative
//! wraps as TileLang's negative-index legalization does: a lane `l < 0`
//! reads `A[extent + l]` (`T.Ramp(t - 2, 1, 4)` at `t = 0` reads
//! `A[extent - 2], A[extent - 1], A[0], A[1]`). A whole vector value is
//! computed before the first lane is stored. Any other use of a vector
//! value is refused at the call.

use super::codes;
use super::eval::{Evaluator, err};
use super::stage::Stager;
use super::value::{Access, EResult, IndexItem, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::ir::{self, BinaryOp, Expr, Handle, Literal, Span};
use std::rc::Rc;

/// The lanes of a vector value.
#[derive(Debug, Clone)]
pub(crate) struct Lanes {
    pub lanes: Vec<Handle<Expr>>,
    /// Made by `T.Ramp` (possibly plus or minus a scalar): usable as a
    /// buffer index.
    pub ramp: bool,
}

/// One part of a buffer subscript that may hold a vector index.
pub(crate) enum Part {
    Item(IndexItem),
    Lanes(Rc<Lanes>, Span),
}

fn lane_count<'a>(v: &Value<'a>, what: &str, span: Span) -> EResult<usize> {
    match v.as_int() {
        Some(n) if (2..=1024).contains(&n) => Ok(n as usize),
        _ => Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!("the lane count of `{what}` must be a constant integer from 2 to 1024"),
                span,
            )
            .with_label("lanes here"),
        )),
    }
}

fn scalar<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    what: &str,
    span: Span,
) -> EResult<Handle<Expr>> {
    if let Value::Vector(_) = v {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!("`{what}` takes scalar values, and this is a vector"),
            span,
        ));
    }
    let st = ev.stager(&format!("`{what}`"), span)?;
    st.value_expr(v, None, span)
}

/// `T.Broadcast(value, lanes)`.
pub(crate) fn broadcast<'a>(
    ev: &mut Evaluator<'a>,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let [value, lanes] = args else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.Broadcast` takes a value and a lane count",
            span,
        ));
    };
    if !kwargs.is_empty() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.Broadcast` takes no keyword arguments",
            span,
        ));
    }
    let n = lane_count(lanes, "T.Broadcast", span)?;
    let e = scalar(ev, value, "T.Broadcast", span)?;
    Ok(Value::Vector(Rc::new(Lanes {
        lanes: vec![e; n],
        ramp: false,
    })))
}

/// `T.Ramp(base, stride, lanes)`: lane `k` is `base + k * stride`.
pub(crate) fn ramp<'a>(
    ev: &mut Evaluator<'a>,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let [base, stride, lanes] = args else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.Ramp` takes a base, a stride and a lane count",
            span,
        ));
    };
    if !kwargs.is_empty() {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.Ramp` takes no keyword arguments",
            span,
        ));
    }
    let n = lane_count(lanes, "T.Ramp", span)?;
    let b = scalar(ev, base, "T.Ramp", span)?;
    let s = scalar(ev, stride, "T.Ramp", span)?;
    let st = ev.stager("`T.Ramp`", span)?;
    for (e, what) in [(b, "base"), (s, "stride")] {
        if !st.ty(e).is_int() {
            return Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "the {what} of `T.Ramp` must be an integer, this has type {}",
                    st.ty(e)
                ),
                span,
            ));
        }
    }
    let mut out = vec![b];
    for k in 1..n {
        let kk = st.int(k as i64);
        let step = st.op_values(BinaryOp::Mul, &Value::Expr(s), &Value::Expr(kk), span)?;
        out.push(st.op_values(BinaryOp::Add, &Value::Expr(b), &Value::Expr(step), span)?);
    }
    Ok(Value::Vector(Rc::new(Lanes {
        lanes: out,
        ramp: true,
    })))
}

fn mismatch(a: usize, b: usize, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::TYPE_ERROR,
            format!("vector operands have different lane counts, {a} and {b}"),
            span,
        )
        .with_label("combined here"),
    )
}

/// `a op b` where one side is a vector: lane by lane.
pub(crate) fn binop<'a>(
    ev: &mut Evaluator<'a>,
    op: PyBinOp,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
) -> EResult<Value<'a>> {
    let (la, lb) = (as_lanes(a), as_lanes(b));
    let n = match (&la, &lb) {
        (Some(x), Some(y)) if x.lanes.len() != y.lanes.len() => {
            return Err(mismatch(x.lanes.len(), y.lanes.len(), span));
        }
        (Some(x), _) | (None, Some(x)) => x.lanes.len(),
        (None, None) => unreachable!("vector::binop without a vector"),
    };
    let st = ev.stager("a vector expression", span)?;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        // Lanes equal to the previous ones (a broadcast) share its result.
        let same = |l: &Option<Rc<Lanes>>| l.as_ref().is_none_or(|l| l.lanes[k] == l.lanes[k - 1]);
        if k > 0 && same(&la) && same(&lb) {
            out.push(out[k - 1]);
            continue;
        }
        let x = la
            .as_ref()
            .map_or_else(|| a.clone(), |l| Value::Expr(l.lanes[k]));
        let y = lb
            .as_ref()
            .map_or_else(|| b.clone(), |l| Value::Expr(l.lanes[k]));
        out.push(st.binop(op, &x, &y, span)?);
    }
    // A Ramp shifted by a scalar is still a Ramp (TVM simplifies it so).
    let ramp = matches!(op, PyBinOp::Add | PyBinOp::Sub)
        && match (&la, &lb) {
            (Some(x), None) => x.ramp,
            (None, Some(y)) => y.ramp && op == PyBinOp::Add,
            _ => false,
        }
        && out.iter().all(|e| st.ty(*e).is_int());
    Ok(Value::Vector(Rc::new(Lanes { lanes: out, ramp })))
}

fn as_lanes(v: &Value<'_>) -> Option<Rc<Lanes>> {
    match v {
        Value::Vector(l) => Some(l.clone()),
        _ => None,
    }
}

/// The lane count of the vector parts of a subscript (`None` when none is
/// a vector).
fn subscript_lanes(buffer: &str, parts: &[Part]) -> EResult<Option<usize>> {
    let mut n: Option<usize> = None;
    for p in parts {
        let Part::Lanes(l, span) = p else { continue };
        if !l.ramp {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_SUBSCRIPT,
                    format!("this vector index of `{buffer}` is not a `T.Ramp`"),
                    *span,
                )
                .with_label("vector index")
                .with_note("tilec takes `T.Ramp(base, stride, lanes)` (plus or minus a scalar) as a vector index; index lane by lane in a `T.vectorized` loop otherwise"),
            ));
        }
        match n {
            Some(m) if m != l.lanes.len() => return Err(mismatch(m, l.lanes.len(), *span)),
            _ => n = Some(l.lanes.len()),
        }
    }
    Ok(n)
}

/// Lane `lane` of a Ramp index into dimension `d` of `buffer`, wrapped as
/// TileLang's negative-index legalization does: a lane not known to be
/// non-negative becomes `select(l < 0, extent + l, l)`.
fn ramp_index(
    st: &mut Stager,
    buffer: Handle<ir::Buffer>,
    d: usize,
    lane: Handle<Expr>,
    span: Span,
) -> EResult<Handle<Expr>> {
    if let Some(Literal::Int(v, _)) = st.func.as_literal(lane)
        && v >= 0
    {
        return Ok(lane);
    }
    let extent = st.func.buffers[buffer].shape[d];
    let wrapped = st.op_values(
        BinaryOp::Add,
        &Value::Expr(extent),
        &Value::Expr(lane),
        span,
    )?;
    let zero = st.int(0);
    let neg = st.op_values(BinaryOp::Lt, &Value::Expr(lane), &Value::Expr(zero), span)?;
    let t = st.ty(lane);
    let wrapped = st.cast(wrapped, t, span)?;
    st.expr(
        Expr::Select {
            cond: neg,
            then: wrapped,
            otherwise: lane,
        },
        span,
    )
}

/// The points of lane `k` of a subscript with vector parts.
fn lane_items(
    st: &mut Stager,
    buffer: Handle<ir::Buffer>,
    parts: &[Part],
    k: usize,
    span: Span,
) -> EResult<Vec<IndexItem>> {
    let mut items = Vec::with_capacity(parts.len());
    for (d, p) in parts.iter().enumerate() {
        items.push(match p {
            Part::Item(IndexItem::Point(e)) => IndexItem::Point(*e),
            Part::Item(IndexItem::Slice { .. }) => {
                return Err(err(
                    codes::BAD_SUBSCRIPT,
                    "a subscript with a vector index cannot also have a slice",
                    span,
                ));
            }
            Part::Lanes(l, lspan) => {
                IndexItem::Point(ramp_index(st, buffer, d, l.lanes[k], *lspan)?)
            }
        });
    }
    Ok(items)
}

fn check_rank(st: &Stager, buffer: Handle<ir::Buffer>, count: usize, span: Span) -> EResult<()> {
    let b = &st.func.buffers[buffer];
    if count != b.shape.len() {
        return Err(super::stage::rank_mismatch(
            &b.name,
            b.shape.len(),
            count,
            span,
            "vector subscript",
        ));
    }
    Ok(())
}

/// `buffer[parts]` for a load: a plain access when no part is a vector,
/// else the vector of the lanes' elements.
pub(crate) fn subscript<'a>(
    ev: &mut Evaluator<'a>,
    buffer: Handle<ir::Buffer>,
    parts: Vec<Part>,
    span: Span,
) -> EResult<Value<'a>> {
    let st = ev.stager("a buffer subscript", span)?;
    let name = st.func.buffers[buffer].name.clone();
    let Some(n) = subscript_lanes(&name, &parts)? else {
        let items = parts
            .into_iter()
            .map(|p| match p {
                Part::Item(i) => i,
                Part::Lanes(..) => unreachable!("no vector parts"),
            })
            .collect();
        return Ok(Value::Access(Rc::new(Access {
            buffer,
            items,
            span,
        })));
    };
    check_rank(st, buffer, parts.len(), span)?;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let items = lane_items(st, buffer, &parts, k, span)?;
        let acc = Value::Access(Rc::new(Access {
            buffer,
            items,
            span,
        }));
        out.push(st.value_expr(&acc, None, span)?);
    }
    Ok(Value::Vector(Rc::new(Lanes {
        lanes: out,
        ramp: false,
    })))
}

/// Whether a store needs the vector path.
pub(crate) fn is_vector_store(parts: &[Part], value: &Value<'_>) -> bool {
    matches!(value, Value::Vector(_)) || parts.iter().any(|p| matches!(p, Part::Lanes(..)))
}

/// `buffer[parts] = value` where the value or an index is a vector.
pub(crate) fn store<'a>(
    ev: &mut Evaluator<'a>,
    buffer: Handle<ir::Buffer>,
    parts: Vec<Part>,
    value: Value<'a>,
    target_span: Span,
    span: Span,
) -> EResult<()> {
    let st = ev.stager("a buffer store", span)?;
    let name = st.func.buffers[buffer].name.clone();
    check_rank(st, buffer, parts.len(), target_span)?;
    let lanes = subscript_lanes(&name, &parts)?;
    // A region store `A[i:i + n] = vec`: one slice, of `n` elements.
    let slices: Vec<usize> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Part::Item(IndexItem::Slice { .. })))
        .map(|(d, _)| d)
        .collect();
    let vlanes = as_lanes(&value);
    let n = match (lanes, &vlanes) {
        (Some(m), Some(v)) if m != v.lanes.len() => return Err(mismatch(m, v.lanes.len(), span)),
        (Some(m), _) => m,
        (None, Some(v)) => v.lanes.len(),
        (None, None) => unreachable!("vector::store without a vector"),
    };
    let mut parts = parts;
    if lanes.is_none() {
        let [d] = slices.as_slice() else {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_SUBSCRIPT,
                    format!("a vector value is stored into `{name}` at one element per lane"),
                    target_span,
                )
                .with_label("needs exactly one slice (`A[i:i + lanes]`) or a `T.Ramp` index")
                .with_note("write the lanes one by one in a `T.vectorized` loop otherwise"),
            ));
        };
        let Part::Item(IndexItem::Slice { start, stop }) = &parts[*d] else {
            unreachable!("a slice part")
        };
        let start = start.unwrap_or_else(|| st.int(0));
        let stop = stop.unwrap_or(st.func.buffers[buffer].shape[*d]);
        let len = st.op_values(BinaryOp::Sub, &Value::Expr(stop), &Value::Expr(start), span)?;
        let len = st.func.as_literal(len).and_then(Literal::as_i64);
        if len != Some(n as i64) {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_SUBSCRIPT,
                    format!("this region of `{name}` must have as many elements as the vector's {n} lanes"),
                    target_span,
                )
                .with_label(match len {
                    Some(l) => format!("{l} elements"),
                    None => "a region whose length is not a constant".to_string(),
                }),
            ));
        }
        parts[*d] = Part::Lanes(
            Rc::new(Lanes {
                lanes: (0..n)
                    .map(|k| {
                        let kk = st.int(k as i64);
                        st.op_values(BinaryOp::Add, &Value::Expr(start), &Value::Expr(kk), span)
                    })
                    .collect::<EResult<Vec<_>>>()?,
                ramp: true,
            }),
            target_span,
        );
    } else if !slices.is_empty() {
        return Err(err(
            codes::BAD_SUBSCRIPT,
            "a subscript with a vector index cannot also have a slice",
            target_span,
        ));
    }
    // The whole value first (TileLang stores the vector at once).
    let dtype = st.func.buffers[buffer].dtype;
    let mut values = Vec::with_capacity(n);
    let mut bound: Vec<(Handle<Expr>, Handle<Expr>)> = Vec::new();
    for k in 0..n {
        let v = match &vlanes {
            Some(l) => Value::Expr(l.lanes[k]),
            None => value.clone(),
        };
        let e = st.value_expr(&v, Some(dtype), span)?;
        let e = st.cast(e, dtype, span)?;
        let e = if matches!(st.func.exprs[e], Expr::Literal(_) | Expr::Var(_)) {
            e
        } else if let Some(&(_, v)) = bound.iter().find(|(x, _)| *x == e) {
            // A broadcast lane: the value is computed once.
            v
        } else {
            let var = st.bind_let("lane", e, span);
            let v = st.var(var);
            bound.push((e, v));
            v
        };
        values.push(e);
    }
    let mut stores = Vec::with_capacity(n);
    for (k, v) in values.into_iter().enumerate() {
        stores.push((lane_items(st, buffer, &parts, k, span)?, v));
    }
    for (items, v) in stores {
        ev.store(buffer, items, Value::Expr(v), target_span, span)?;
    }
    Ok(())
}
