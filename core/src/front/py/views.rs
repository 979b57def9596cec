//! Views of one buffer's storage under another shape: `buf.data` given to
//! `T.Tensor(shape, dtype, data)`, `T.reshape` and `T.view` (the same
//! element type, or another of the same width whose elements are read and
//! written through bit casts, `retyped`), and `T.im2col`, which reads an
//! image through such index arithmetic; `T.reinterpret` of one value.
//!
//! The IR has no aliasing buffers, so a view never becomes an IR buffer.
//! The front end keeps it as a value (`Value::View`) and translates every
//! use into accesses of the underlying buffer, whose row-major storage both
//! shapes share:
//!
//! - an element `view[i, j]` is the element of the base buffer at the same
//!   row-major offset;
//! - a region of a view in a tile operation is a region of the base buffer
//!   where it is one (a box of the view that is a box of the base, as
//!   `flat[k * 32 : k * 32 + 32, :]` over `(KH, KW, C, F)` with `32 | C`);
//!   otherwise the operation is refused with a note.
//!
//! Shapes are matched in groups from the innermost dimension: dimensions
//! that are the same expression map one to one, runs whose constant
//! products agree map as one flattened group, and the outermost group takes
//! whatever remains. A region maps group by group: first to one range of
//! the group's row-major offsets, then to a box of the base dimensions.

use std::rc::Rc;

use super::codes;
use super::eval::{Evaluator, err};
use super::tl::{Args, Operand};
use super::value::{Access, EResult, IndexItem, Value};
use crate::front::Diagnostic;
use crate::ir::{self, BinaryOp, DType, Expr, Handle, Literal, Region, Scope, Span, Stmt};

/// A buffer's storage seen under another shape.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub base: Handle<ir::Buffer>,
    pub shape: Vec<Handle<Expr>>,
    pub dtype: DType,
}

/// `view[items]`, resolved when it is used as an element or a region.
#[derive(Debug, Clone)]
pub(crate) struct ViewAccess {
    pub view: Rc<View>,
    pub items: Vec<IndexItem>,
    pub span: Span,
}

/// `T.<name>` values this module stages.
const FUNCTIONS: &[(&str, &str)] = &[
    ("reshape", "T.reshape"),
    ("view", "T.view"),
    ("im2col", "T.im2col"),
    ("c2d_im2col", "T.c2d_im2col"),
    ("alloc_global", "T.alloc_global"),
    ("reinterpret", "T.reinterpret"),
];

pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    super::value::table_builtin(FUNCTIONS, name)
}

pub(crate) fn handles(name: &str) -> bool {
    super::value::table_has(FUNCTIONS, name)
}

pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match name {
        "reshape" => {
            let a = Args::new("reshape", &["src", "shape"], args, kwargs, span)?;
            let src = source(ev, a.req(0, "a source buffer")?, "reshape", span)?;
            let shape = a.req(1, "a shape")?.clone();
            reshaped(ev, &src, &shape, None, "reshape", span)
        }
        "view" => {
            let a = Args::new("view", &["src", "shape", "dtype"], args, kwargs, span)?;
            let src = source(ev, a.req(0, "a source buffer")?, "view", span)?;
            let dtype = a.get(2).map(|d| super::tl::dtype_of(d, span)).transpose()?;
            let shape = match a.get(1) {
                Some(s) => s.clone(),
                None => {
                    let shape = src.shape.iter().map(|&e| Value::Expr(e)).collect();
                    Value::tuple(shape)
                }
            };
            reshaped(ev, &src, &shape, dtype, "view", span)
        }
        "im2col" | "c2d_im2col" => im2col(ev, args, kwargs, span),
        "alloc_global" => alloc_global(ev, args, kwargs, span),
        "reinterpret" => reinterpret(ev, args, kwargs, span),
        other => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`T.{other}` is not supported by tilec"),
            span,
        )),
    }
}

/// `T.reinterpret(value, dtype)` (TileLang's order; TVM's
/// `tirx.reinterpret(dtype, value)` and TileLang's deprecated
/// `T.reinterpret(dtype, value)` are recognised by which argument is a
/// dtype): the value's bits read as `dtype`, of the same width.
fn reinterpret<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new(
        "reinterpret",
        &["value", "dtype", "span"],
        args,
        kwargs,
        span,
    )?;
    let first = a.req(0, "a value")?;
    let second = a.req(1, "a dtype")?;
    let is_dtype = |v: &Value<'_>| match v {
        Value::DType(_) => true,
        Value::Str(s) => DType::from_tilelang_name(s).is_some(),
        _ => false,
    };
    let (value, dtype) = if is_dtype(first) && !is_dtype(second) {
        (second, first)
    } else {
        (first, second)
    };
    let to = super::tl::dtype_of(dtype, span)?;
    if matches!(value, Value::Buffer(_) | Value::View(_)) {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                "`T.reinterpret` of a whole buffer is not supported by tilec",
                span,
            )
            .with_label("a buffer, not a value")
            .with_note(
                "`T.reinterpret` reads one value's bits as another type; apply it to \
                 elements (`T.reinterpret(S[i], dtype)`)",
            ),
        ));
    }
    let st = ev.stager("`T.reinterpret`", span)?;
    let e = st.value_expr(value, None, span)?;
    let e = st.narrowed(e, span)?;
    let from = st.ty(e);
    if !ir::bitcast_ok(from, to) {
        let (label, note) = if from.is_bool() || to.is_bool() {
            (
                "bool has no bit pattern to reinterpret",
                "convert with `T.Cast` (a bool becomes 0 or 1, a number is true when non-zero)"
                    .to_string(),
            )
        } else {
            let same: Vec<&str> = DType::ALL
                .iter()
                .filter(|d| d.bits() == from.bits() && !d.is_bool() && **d != from)
                .map(|d| d.tilelang_name())
                .collect();
            (
                "the widths differ",
                format!(
                    "a bit cast keeps the width: reinterpret as a {}-bit type ({}) and then \
                     convert with `T.Cast`, or assemble the bits with shifts and masks",
                    from.bits(),
                    same.join(", ")
                ),
            )
        };
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.reinterpret` of a {} value ({} bits) as {} ({} bits) is not supported by tilec",
                    from.tilelang_name(),
                    from.bits(),
                    to.tilelang_name(),
                    to.bits()
                ),
                span,
            )
            .with_label(label)
            .with_note(note),
        ));
    }
    if from == to {
        return Ok(Value::Expr(e));
    }
    // A literal folds unless the result is a NaN (whose payload a literal
    // does not keep).
    if let Some(l) = st.func.as_literal(e) {
        let bits = match l {
            Literal::Int(v, d) => d.bits_of(v, 0.0),
            Literal::Float(x, d) => d.bits_of(0, x),
            Literal::Bool(_) => 0,
        };
        match to.from_bits(bits) {
            Ok(v) => return Ok(Value::Expr(st.lit(Literal::Int(v, to)))),
            Err(x) if !x.is_nan() => return Ok(Value::Expr(st.lit(Literal::Float(x, to)))),
            Err(_) => {}
        }
    }
    Ok(Value::Expr(
        st.expr(Expr::Bitcast { dtype: to, arg: e }, span)?,
    ))
}

/// `buf.data`: the storage of `buf`, as a view of its own shape.
pub(crate) fn data_of<'a>(
    ev: &mut Evaluator<'a>,
    b: Handle<ir::Buffer>,
    span: Span,
) -> EResult<Value<'a>> {
    let st = ev.stager("a buffer attribute", span)?;
    let buf = &st.func.buffers[b];
    Ok(Value::View(Rc::new(View {
        base: b,
        shape: buf.shape.clone(),
        dtype: buf.dtype,
    })))
}

/// Attributes of a view.
pub(crate) fn view_attr<'a>(
    ev: &mut Evaluator<'a>,
    v: &Rc<View>,
    name: &str,
    span: Span,
) -> EResult<Value<'a>> {
    let st = ev.stager("a buffer attribute", span)?;
    match name {
        "shape" => Ok(Value::tuple(
            v.shape
                .iter()
                .map(|&e| st.func.as_const_int(e).map_or(Value::Expr(e), Value::Int))
                .collect(),
        )),
        "dtype" => Ok(Value::DType(v.dtype)),
        "ndim" => Ok(Value::Int(i64::try_from(v.shape.len()).unwrap_or(0))),
        "name" => Ok(Value::str(&st.func.buffers[v.base].name)),
        "data" => Ok(Value::View(v.clone())),
        _ => Err(err(
            codes::NO_ATTRIBUTE,
            format!("a buffer view has no attribute `{name}`"),
            span,
        )),
    }
}

/// `T.Tensor(shape, dtype, data)`: `data` must be a buffer's `.data`.
pub(crate) fn tensor_over<'a>(
    ev: &mut Evaluator<'a>,
    shape: &Value<'a>,
    dtype: DType,
    data: &Value<'a>,
    span: Span,
) -> EResult<Value<'a>> {
    let src = match data {
        Value::View(v) => v.clone(),
        Value::Poison(_) => return Err(super::stage::cascade()),
        other => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "`T.Tensor` over {} as its data is not supported",
                        other.a_type_name()
                    ),
                    span,
                )
                .with_label("data argument")
                .with_note("give the storage of a buffer: `T.Tensor(shape, dtype, buf.data)`"),
            ));
        }
    };
    // TileLang does not check the sizes here: the new shape is a window on
    // the same pointer.
    make_view(ev, &src, shape, Some(dtype), None, "Tensor", span)
}

fn source<'a>(ev: &mut Evaluator<'a>, v: &Value<'a>, name: &str, span: Span) -> EResult<Rc<View>> {
    match v {
        Value::Buffer(b) => match data_of(ev, *b, span)? {
            Value::View(v) => Ok(v),
            _ => Err(super::stage::cascade()),
        },
        Value::View(v) => Ok(v.clone()),
        Value::Poison(_) => Err(super::stage::cascade()),
        other => Err(Box::new(
            Diagnostic::error(
                codes::TYPE_ERROR,
                format!("`T.{name}` takes a buffer, got {}", other.a_type_name()),
                span,
            )
            .with_label("not a buffer"),
        )),
    }
}

/// `T.reshape` / `T.view`: a view whose element count equals the source's.
fn reshaped<'a>(
    ev: &mut Evaluator<'a>,
    src: &Rc<View>,
    shape: &Value<'a>,
    dtype: Option<DType>,
    name: &'static str,
    span: Span,
) -> EResult<Value<'a>> {
    make_view(ev, src, shape, dtype, Some(src.shape.clone()), name, span)
}

fn make_view<'a>(
    ev: &mut Evaluator<'a>,
    src: &Rc<View>,
    shape: &Value<'a>,
    dtype: Option<DType>,
    same_size_as: Option<Vec<Handle<Expr>>>,
    name: &str,
    span: Span,
) -> EResult<Value<'a>> {
    let shape_v = shape.as_sequence().unwrap_or_else(|| vec![shape.clone()]);
    let dims = ev.shape_exprs(&shape_v, span)?;
    let st = ev.stager("a buffer view", span)?;
    let dtype = dtype.unwrap_or(src.dtype);
    // Another element type of the same width: elements are read and
    // written through bit casts (`retyped`).
    if dtype != src.dtype && !ir::bitcast_ok(src.dtype, dtype) {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.{name}` of {} storage as {} is not supported by tilec",
                    src.dtype.tilelang_name(),
                    dtype.tilelang_name()
                ),
                span,
            )
            .with_label("element type changes")
            .with_note(
                if src.dtype.bits() == dtype.bits() && !src.dtype.is_bool() && !dtype.is_bool() {
                    format!(
                        "tilec views a buffer under another shape, not another element type; \
                     read and write its elements' bits with `T.reinterpret(x[i], {})` and \
                     `T.reinterpret(v, {})`",
                        dtype.tilelang_name(),
                        src.dtype.tilelang_name()
                    )
                } else {
                    "tilec views a buffer under another shape, not another element type; \
                 convert the values with `T.Cast` (or keep the data in the type it is read as)"
                        .to_string()
                },
            ),
        ));
    }
    if let Some(old) = same_size_as {
        let total = |dims: &[Handle<Expr>]| -> Option<i64> {
            dims.iter()
                .try_fold(1i64, |acc, &d| acc.checked_mul(st.func.as_const_int(d)?))
        };
        if let (Some(a), Some(b)) = (total(&dims), total(&old))
            && a != b
        {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`T.{name}` to a shape of {a} elements from a buffer of {b} elements"),
                    span,
                )
                .with_label("sizes differ")
                .with_note("a view keeps the storage: the new shape must hold as many elements"),
            ));
        }
    }
    Ok(Value::View(Rc::new(View {
        base: src.base,
        shape: dims,
        dtype,
    })))
}

/// Whether two extents are the same expression.
fn same(f: &ir::Function, a: Handle<Expr>, b: Handle<Expr>, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if let (Some(x), Some(y)) = (f.as_const_int(a), f.as_const_int(b)) {
        return x == y;
    }
    if depth > 16 {
        return false;
    }
    match (&f.exprs[a], &f.exprs[b]) {
        (Expr::Var(x), Expr::Var(y)) => x == y,
        (
            Expr::Binary { op, lhs, rhs },
            Expr::Binary {
                op: op2,
                lhs: l2,
                rhs: r2,
            },
        ) => op == op2 && same(f, *lhs, *l2, depth + 1) && same(f, *rhs, *r2, depth + 1),
        (Expr::Cast { dtype, arg }, Expr::Cast { dtype: d2, arg: a2 }) => {
            dtype == d2 && same(f, *arg, *a2, depth + 1)
        }
        (Expr::Cast { arg, .. }, _) => same(f, *arg, b, depth + 1),
        (_, Expr::Cast { arg, .. }) => same(f, a, *arg, depth + 1),
        _ => false,
    }
}

/// A range as `(start, extent)`.
type StartExtent = (Handle<Expr>, Handle<Expr>);

/// Dimension groups `(view dims, base dims)`, outermost first.
type Groups = Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>;

fn groups(f: &ir::Function, view: &[Handle<Expr>], base: &[Handle<Expr>]) -> Groups {
    let mut out: Groups = Vec::new();
    let (mut i, mut j) = (view.len(), base.len());
    while i > 0 && j > 0 {
        if same(f, view[i - 1], base[j - 1], 0) {
            out.push((i - 1..i, j - 1..j));
            i -= 1;
            j -= 1;
            continue;
        }
        // Constant runs whose products agree.
        let (mut a, mut b) = (i, j);
        let (mut pa, mut pb) = (1i64, 1i64);
        let mut found = false;
        loop {
            if pa <= pb {
                let Some(x) = (a > 0).then(|| f.as_const_int(view[a - 1])).flatten() else {
                    break;
                };
                pa = match pa.checked_mul(x) {
                    Some(p) => p,
                    None => break,
                };
                a -= 1;
            } else {
                let Some(x) = (b > 0).then(|| f.as_const_int(base[b - 1])).flatten() else {
                    break;
                };
                pb = match pb.checked_mul(x) {
                    Some(p) => p,
                    None => break,
                };
                b -= 1;
            }
            if pa == pb && a < i && b < j {
                found = true;
                break;
            }
        }
        if !found {
            break;
        }
        out.push((a..i, b..j));
        i = a;
        j = b;
    }
    // The outermost group takes what remains.
    if i > 0 || j > 0 || out.is_empty() {
        match out.last_mut() {
            Some(last) if i == 0 || j == 0 => {
                last.0.start = 0;
                last.1.start = 0;
            }
            _ => out.push((0..i, 0..j)),
        }
    }
    out.reverse();
    out
}

/// `e` is a multiple of `k` (as a sum of constant multiples of `k`).
fn multiple_of(f: &ir::Function, e: Handle<Expr>, k: i64) -> bool {
    if k == 1 {
        return true;
    }
    if let Some(c) = f.as_const_int(e) {
        return c % k == 0;
    }
    match &f.exprs[e] {
        Expr::Binary {
            op: BinaryOp::Add | BinaryOp::Sub,
            lhs,
            rhs,
        } => multiple_of(f, *lhs, k) && multiple_of(f, *rhs, k),
        Expr::Binary {
            op: BinaryOp::Mul,
            lhs,
            rhs,
        } => {
            let c = |x: Handle<Expr>| f.as_const_int(x);
            match (c(*lhs), c(*rhs)) {
                (Some(a), _) if a % k == 0 => true,
                (_, Some(b)) if b % k == 0 => true,
                (Some(a), _) if a != 0 && k % a == 0 => multiple_of(f, *rhs, k / a),
                (_, Some(b)) if b != 0 && k % b == 0 => multiple_of(f, *lhs, k / b),
                _ => false,
            }
        }
        Expr::Cast { arg, .. } => multiple_of(f, *arg, k),
        _ => false,
    }
}

/// `e // k` for an `e` that `multiple_of` proved a multiple of `k`: the
/// coefficients divided where the form allows, else a floor division.
fn div_exact(
    st: &mut super::stage::Stager,
    e: Handle<Expr>,
    k: i64,
    span: Span,
) -> EResult<Handle<Expr>> {
    if k == 1 {
        return Ok(e);
    }
    if let Some(c) = st.func.as_const_int(e) {
        return Ok(int_of(st, c / k, e));
    }
    if let Expr::Binary { op: o, lhs, rhs } = st.func.exprs[e].clone() {
        match o {
            BinaryOp::Add | BinaryOp::Sub
                if multiple_of(&st.func, lhs, k) && multiple_of(&st.func, rhs, k) =>
            {
                let l = div_exact(st, lhs, k, span)?;
                let r = div_exact(st, rhs, k, span)?;
                return op(st, o, l, r, span);
            }
            BinaryOp::Mul => {
                if let Some(c) = st.func.as_const_int(rhs)
                    && c % k == 0
                {
                    let c = int_of(st, c / k, rhs);
                    return op(st, BinaryOp::Mul, lhs, c, span);
                }
                if let Some(c) = st.func.as_const_int(lhs)
                    && c % k == 0
                {
                    let c = int_of(st, c / k, lhs);
                    return op(st, BinaryOp::Mul, c, rhs, span);
                }
            }
            _ => {}
        }
    }
    let kk = int_of(st, k, e);
    op(st, BinaryOp::FloorDiv, e, kk, span)
}

/// Integer operation on two index expressions of possibly different types.
fn op(
    st: &mut super::stage::Stager,
    o: BinaryOp,
    a: Handle<Expr>,
    b: Handle<Expr>,
    span: Span,
) -> EResult<Handle<Expr>> {
    let (ta, tb) = (st.ty(a), st.ty(b));
    let t = if ta.bits() >= tb.bits() { ta } else { tb };
    let a = st.cast(a, t, span)?;
    let b = st.cast(b, t, span)?;
    st.binary(o, a, b, span)
}

fn int_of(st: &mut super::stage::Stager, v: i64, like: Handle<Expr>) -> Handle<Expr> {
    let t = st.ty(like);
    st.lit(Literal::Int(t.wrap_i64(v), t))
}

/// One range `(start, extent)` per view dimension mapped to ranges of the
/// base buffer, or `None` when the region is not a box of the base.
fn map_ranges(
    st: &mut super::stage::Stager,
    view: &View,
    ranges: &[(Handle<Expr>, Handle<Expr>)],
    span: Span,
) -> EResult<Option<Vec<ir::Range>>> {
    let base_shape = st.func.buffers[view.base].shape.clone();
    let gs = groups(&st.func, &view.shape, &base_shape);
    let mut out = Vec::new();
    for (gi, (vd, bd)) in gs.iter().enumerate() {
        let outermost = gi == 0;
        // Identity groups keep the range as it is.
        if vd.len() == 1 && bd.len() == 1 {
            let (s, e) = ranges[vd.start];
            out.push(ir::Range {
                start: s,
                extent: e,
            });
            continue;
        }
        // View ranges of the group to one range of row-major offsets:
        // points, then one range, then full dimensions.
        let mut lead: Option<usize> = None;
        let points = vd
            .clone()
            .all(|k| st.func.as_const_int(ranges[k].1) == Some(1));
        for k in vd.clone() {
            let (s, e) = ranges[k];
            let full = st.func.as_const_int(s) == Some(0) && same(&st.func, e, view.shape[k], 0);
            match lead {
                None if st.func.as_const_int(e) == Some(1) => {}
                None => lead = Some(k),
                Some(_) if full => {}
                Some(_) => return Ok(None),
            }
            // Inner groups must stay inside the group, or offsets would wrap
            // into a neighbouring element of the base (single elements
            // are the same storage either way).
            if !outermost && !points {
                let end = st
                    .func
                    .as_const_int(s)
                    .zip(st.func.as_const_int(e))
                    .map(|(a, b)| a + b);
                let dim = st.func.as_const_int(view.shape[k]);
                let inside = full || matches!((end, dim), (Some(x), Some(d)) if x <= d);
                if !inside {
                    return Ok(None);
                }
            }
        }
        let mut flat_start = int_of(st, 0, view.shape[vd.start]);
        let mut stride_after = int_of(st, 1, view.shape[vd.start]);
        let mut flat_extent = stride_after;
        for k in vd.clone().rev() {
            let (s, e) = ranges[k];
            let term = op(st, BinaryOp::Mul, s, stride_after, span)?;
            flat_start = op(st, BinaryOp::Add, flat_start, term, span)?;
            if Some(k) == lead {
                flat_extent = op(st, BinaryOp::Mul, e, stride_after, span)?;
            }
            stride_after = op(st, BinaryOp::Mul, stride_after, view.shape[k], span)?;
        }
        if lead.is_none() {
            flat_extent = int_of(st, 1, flat_start);
        }
        // Offsets to a box of the group's base dimensions: strip full
        // inner dimensions, then the rest must fit in one row.
        let dims: Vec<Handle<Expr>> = base_shape[bd.clone()].to_vec();
        let mut q = dims.len();
        let mut start = flat_start;
        let mut extent = flat_extent;
        let mut inner: Vec<ir::Range> = Vec::new();
        while q > 1 {
            let (Some(d), Some(e)) = (
                st.func.as_const_int(dims[q - 1]),
                st.func.as_const_int(extent),
            ) else {
                break;
            };
            if e % d != 0 || e == 0 || !multiple_of(&st.func, start, d) {
                break;
            }
            let zero = int_of(st, 0, dims[q - 1]);
            inner.push(ir::Range {
                start: zero,
                extent: dims[q - 1],
            });
            start = div_exact(st, start, d, span)?;
            extent = int_of(st, e / d, extent);
            q -= 1;
        }
        let mut boxed = Vec::new();
        if q > 1 {
            let e = st.func.as_const_int(extent);
            let d = st.func.as_const_int(dims[q - 1]);
            let fits = match (e, d) {
                (Some(1), _) => true,
                (Some(e), Some(d)) => e > 0 && d % e == 0 && multiple_of(&st.func, start, e),
                _ => false,
            };
            if !fits {
                return Ok(None);
            }
        }
        // Points for the outer dimensions, the range on dimension q - 1.
        let mut inner_size = int_of(st, 1, start);
        for k in (0..q).rev() {
            if k == q - 1 {
                let s = if q == 1 {
                    start
                } else {
                    op(st, BinaryOp::FloorMod, start, dims[k], span)?
                };
                boxed.push(ir::Range { start: s, extent });
            } else {
                let idx = op(st, BinaryOp::FloorDiv, start, inner_size, span)?;
                let idx = if k == 0 && outermost {
                    idx
                } else {
                    op(st, BinaryOp::FloorMod, idx, dims[k], span)?
                };
                let one = int_of(st, 1, idx);
                boxed.push(ir::Range {
                    start: idx,
                    extent: one,
                });
            }
            inner_size = op(st, BinaryOp::Mul, inner_size, dims[k], span)?;
        }
        boxed.reverse();
        inner.reverse();
        out.extend(boxed);
        out.extend(inner);
    }
    Ok(Some(out))
}

/// `view[items]`.
pub(crate) fn subscript<'a>(
    ev: &mut Evaluator<'a>,
    view: &Rc<View>,
    items: Vec<IndexItem>,
    span: Span,
) -> EResult<Value<'a>> {
    if items.len() > view.shape.len() {
        let st = ev.stager("a buffer subscript", span)?;
        let name = st.func.buffers[view.base].name.clone();
        return Err(super::stage::rank_mismatch(
            &format!("{name} (viewed)"),
            view.shape.len(),
            items.len(),
            span,
            "too many indices",
        ));
    }
    Ok(Value::ViewAccess(Rc::new(ViewAccess {
        view: view.clone(),
        items,
        span,
    })))
}

/// The ranges a view subscript names, in the view's dimensions; `true` when
/// every item was a point (a head address).
fn view_ranges(
    st: &mut super::stage::Stager,
    view: &View,
    items: &[IndexItem],
    span: Span,
) -> EResult<(Vec<StartExtent>, bool)> {
    let mut out = Vec::new();
    let mut head = items.len() == view.shape.len();
    for (k, &dim) in view.shape.iter().enumerate() {
        match items.get(k) {
            Some(IndexItem::Point(e)) => {
                let one = int_of(st, 1, *e);
                out.push((*e, one));
            }
            Some(IndexItem::Slice { start, stop }) => {
                head = false;
                let s = match start {
                    Some(s) => *s,
                    None => st.int(0),
                };
                let stop = stop.unwrap_or(dim);
                let e = st.extent(s, stop, span)?;
                out.push((s, e));
            }
            None => {
                let zero = st.int(0);
                out.push((zero, dim));
            }
        }
    }
    Ok((out, head))
}

/// The view's element type where it differs from its buffer's (a view of
/// the same width under another type: `T.view(buf, dtype=...)`).
pub(crate) fn retyped(st: &super::stage::Stager, view: &View) -> Option<DType> {
    let base = st.func.buffers.try_get(view.base)?.dtype;
    (base != view.dtype).then_some(view.dtype)
}

/// Refuses a view of another element type where its elements would move
/// as a region or through a pointer: only element reads and writes go
/// through bit casts.
pub(crate) fn same_type(
    st: &super::stage::Stager,
    view: &View,
    what: &str,
    span: Span,
) -> EResult<()> {
    let Some(d) = retyped(st, view) else {
        return Ok(());
    };
    let base = &st.func.buffers[view.base];
    Err(Box::new(
        Diagnostic::error(
            codes::UNSUPPORTED_TILELANG,
            format!(
                "{what} of a view of `{}` ({}) as {} is not supported by tilec",
                base.name,
                base.dtype.tilelang_name(),
                d.tilelang_name()
            ),
            span,
        )
        .with_label("a view of another element type")
        .with_note(
            "tilec reads and writes such a view's elements (`v[i]`) through bit casts; \
             a tile operation or pointer over it would move the buffer's own type, so \
             copy element by element in a `T.Parallel` loop instead",
        ),
    ))
}

/// The value stored into an element of `view`: converted to the view's
/// type, then its bits as the buffer's type where the two differ.
pub(crate) fn store_value<'a>(
    st: &mut super::stage::Stager,
    view: &View,
    value: Value<'a>,
    span: Span,
) -> EResult<Value<'a>> {
    let Some(d) = retyped(st, view) else {
        return Ok(value);
    };
    let base = st.func.buffers[view.base].dtype;
    let e = st.value_expr(&value, Some(d), span)?;
    let e = st.cast(e, d, span)?;
    Ok(Value::Expr(st.expr(
        Expr::Bitcast {
            dtype: base,
            arg: e,
        },
        span,
    )?))
}

/// The element `view[points]` as an access of the base buffer.
pub(crate) fn element(st: &mut super::stage::Stager, va: &ViewAccess) -> EResult<Access> {
    let (ranges, _) = view_ranges(st, &va.view, &va.items, va.span)?;
    if va.items.len() != va.view.shape.len()
        || va
            .items
            .iter()
            .any(|i| matches!(i, IndexItem::Slice { .. }))
    {
        let name = st.func.buffers[va.view.base].name.clone();
        return Err(super::stage::rank_mismatch(
            &format!("{name} (viewed)"),
            va.view.shape.len(),
            va.items.len(),
            va.span,
            "used as a scalar here",
        ));
    }
    let Some(mapped) = map_ranges(st, &va.view, &ranges, va.span)? else {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            "this element of a buffer view could not be mapped to its buffer",
            va.span,
        ));
    };
    Ok(Access {
        buffer: va.view.base,
        items: mapped
            .into_iter()
            .map(|r| IndexItem::Point(r.start))
            .collect(),
        span: va.span,
    })
}

/// A view (or a subscript of one) as a tile-operation operand. With
/// `keep_head` (`T.copy`) it keeps the view's dimensions until
/// `settle_copy` (after a head address got the other operand's extents).
pub(crate) fn operand(
    st: &mut super::stage::Stager,
    v: &Value<'_>,
    span: Span,
    keep_head: bool,
) -> EResult<Operand> {
    let (view, items, vspan) = match v {
        Value::View(view) => (view.clone(), Vec::new(), span),
        Value::ViewAccess(va) => (va.view.clone(), va.items.clone(), va.span),
        _ => return Err(super::stage::cascade()),
    };
    same_type(st, &view, "a tile operation", vspan)?;
    let (ranges, head) = view_ranges(st, &view, &items, vspan)?;
    let mut op = Operand {
        region: Region {
            buffer: view.base,
            ranges: ranges
                .into_iter()
                .map(|(start, extent)| ir::Range { start, extent })
                .collect(),
        },
        head,
        span: vspan,
        view: Some(view),
    };
    if head && !keep_head {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                "a single element of a buffer view as a region is supported only in `T.copy`",
                vspan,
            )
            .with_label("element of a view")
            .with_note("give the region with slices, e.g. `view[i, j0:j0 + n]`"),
        ));
    }
    if !keep_head {
        settle(st, &mut op)?;
    }
    Ok(op)
}

/// The region of the buffer an operand in a view's dimensions names, when
/// it is a box of the buffer with the region's shape (unit dimensions
/// aside).
fn mapped(
    st: &mut super::stage::Stager,
    view: &View,
    op: &Operand,
) -> EResult<Option<Vec<ir::Range>>> {
    let ranges: Vec<(Handle<Expr>, Handle<Expr>)> = op
        .region
        .ranges
        .iter()
        .map(|r| (r.start, r.extent))
        .collect();
    Ok(map_ranges(st, view, &ranges, op.span)?.filter(|mapped| {
        // The box must have the view region's shape (after dropping unit
        // dimensions), as tile operations pair elements by shape.
        let f = &st.func;
        let non_unit = |v: Vec<Handle<Expr>>| -> Vec<Handle<Expr>> {
            v.into_iter()
                .filter(|&e| f.as_const_int(e) != Some(1))
                .collect()
        };
        let a = non_unit(ranges.iter().map(|r| r.1).collect());
        let b = non_unit(mapped.iter().map(|r| r.extent).collect());
        a.len() == b.len() && a.iter().zip(&b).all(|(&x, &y)| same(f, x, y, 0))
    }))
}

/// Maps an operand still in a view's dimensions to a region of its buffer.
pub(crate) fn settle(st: &mut super::stage::Stager, op: &mut Operand) -> EResult<()> {
    let Some(view) = op.view.take() else {
        return Ok(());
    };
    match mapped(st, &view, op)? {
        Some(mapped) => {
            op.region.ranges = mapped;
            Ok(())
        }
        None => {
            let name = st.func.buffers[view.base].name.clone();
            Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "this region of a view of `{name}` is not a rectangular region of `{name}`"
                    ),
                    op.span,
                )
                .with_label("region of a view")
                .with_note(
                    "tilec maps a region of a view to the same elements of the buffer it views; \
                     that works when the region's rows do not cross a row of the buffer. \
                     Copy element by element in a `T.Parallel` loop over the view instead, \
                     or use block sizes that divide the buffer's inner extents",
                ),
            ))
        }
    }
}

/// One side of an element loop: a region of a buffer, or of a view of it
/// (then in the view's dimensions).
#[derive(Debug, Clone)]
struct Side {
    buffer: Handle<ir::Buffer>,
    view: Option<Rc<View>>,
    ranges: Vec<StartExtent>,
}

impl Side {
    fn of(op: &Operand) -> Side {
        Side {
            buffer: op.region.buffer,
            view: op.view.clone(),
            ranges: op
                .region
                .ranges
                .iter()
                .map(|r| (r.start, r.extent))
                .collect(),
        }
    }

    /// Extents other than constant 1, which the loop runs over.
    fn loop_extents(&self, f: &ir::Function) -> Vec<Handle<Expr>> {
        self.ranges
            .iter()
            .map(|r| r.1)
            .filter(|&e| f.as_const_int(e) != Some(1))
            .collect()
    }

    /// The element at loop position `vars`, in the side's own dimensions
    /// (the view's for a view).
    fn logical(
        &self,
        st: &mut super::stage::Stager,
        vars: &[Handle<Expr>],
        span: Span,
    ) -> EResult<Vec<Handle<Expr>>> {
        let mut k = 0;
        let mut idx = Vec::new();
        for &(s, e) in &self.ranges {
            if st.func.as_const_int(e) == Some(1) {
                idx.push(s);
            } else {
                let v = vars.get(k).copied().unwrap_or(s);
                k += 1;
                idx.push(op(st, BinaryOp::Add, s, v, span)?);
            }
        }
        Ok(idx)
    }

    /// Whether the element `idx` lies inside the side's shape, where the
    /// range does not show it: a tile operation reads elements outside
    /// as zero and drops writes to them (bounded by the view's shape for
    /// a view, as TileLang bounds it).
    fn guard(
        &self,
        st: &mut super::stage::Stager,
        idx: &[Handle<Expr>],
        span: Span,
    ) -> EResult<Option<Handle<Expr>>> {
        let shape = match &self.view {
            Some(v) => v.shape.clone(),
            None => st.func.buffers[self.buffer].shape.clone(),
        };
        let mut cond: Option<Handle<Expr>> = None;
        for (k, &(s, e)) in self.ranges.iter().enumerate() {
            let f = &st.func;
            if f.as_const_int(e) == Some(1) {
                continue;
            }
            let inside = match (
                f.as_const_int(s),
                f.as_const_int(e),
                f.as_const_int(shape[k]),
            ) {
                (Some(a), Some(b), Some(d)) => a >= 0 && a + b <= d,
                _ => f.as_const_int(s) == Some(0) && same(f, e, shape[k], 0),
            };
            if inside {
                continue;
            }
            let c = op(st, BinaryOp::Lt, idx[k], shape[k], span)?;
            cond = Some(match cond {
                Some(x) => st.binary(BinaryOp::And, x, c, span)?,
                None => c,
            });
        }
        Ok(cond)
    }

    /// The buffer indices of the element `idx` of the side's dimensions.
    fn indices(
        &self,
        st: &mut super::stage::Stager,
        idx: Vec<Handle<Expr>>,
        span: Span,
    ) -> EResult<Vec<Handle<Expr>>> {
        let Some(view) = &self.view else {
            return Ok(idx);
        };
        let points: Vec<StartExtent> = idx.iter().map(|&i| (i, int_of(st, 1, i))).collect();
        match map_ranges(st, view, &points, span)? {
            Some(m) => Ok(m.into_iter().map(|r| r.start).collect()),
            None => Err(err(
                codes::UNSUPPORTED_TILELANG,
                "this element of a buffer view could not be mapped to its buffer",
                span,
            )),
        }
    }
}

/// Copies `src` to `dst` element by element in a parallel loop, the
/// elements paired in order after dropping unit dimensions (as `T.copy`
/// pairs them) and converted to `dst`'s type; source elements outside
/// their shape read as zero, destination ones outside are not written.
fn element_loop(st: &mut super::stage::Stager, src: &Side, dst: &Side, span: Span) -> EResult<()> {
    let se = src.loop_extents(&st.func);
    let de = dst.loop_extents(&st.func);
    if se.len() != de.len() {
        return Err(err(
            codes::COPY_SHAPE,
            format!(
                "the source region has {} dimensions of extent other than 1, the destination {}",
                se.len(),
                de.len()
            ),
            span,
        ));
    }
    if se.iter().any(|&e| st.func.as_const_int(e).is_none()) {
        return Err(Box::new(
            Diagnostic::error(
                codes::NOT_CONSTANT,
                "this region of a buffer view has an extent known only at run time",
                span,
            )
            .with_label("copied element by element")
            .with_note(
                "the region is not a box of the viewed buffer, so tilec copies it \
                 element by element, which needs compile-time extents; \
                 give the region (or the view) a constant shape",
            ),
        ));
    }
    let mut vars = Vec::new();
    let mut var_exprs = Vec::new();
    for k in 0..se.len() {
        let v = st.add_var(&format!("i{k}"), DType::I32, ir::VarKind::Loop);
        vars.push(v);
        var_exprs.push(st.var(v));
    }
    let dtype = st.func.buffers[dst.buffer].dtype;
    if !vars.is_empty() {
        st.push_block();
    }
    let sl = src.logical(st, &var_exprs, span)?;
    let dl = dst.logical(st, &var_exprs, span)?;
    let sg = src.guard(st, &sl, span)?;
    let dg = dst.guard(st, &dl, span)?;
    let si = src.indices(st, sl, span)?;
    let di = dst.indices(st, dl, span)?;
    let value = super::safe_value::load_as(st, src.buffer, si, dtype, span)?;
    let store = |value| Stmt::Store {
        buffer: dst.buffer,
        indices: di.clone(),
        value,
    };
    let mut stmt = match sg {
        None => store(value),
        Some(cond) => {
            let zero = st.number(0.0, dtype);
            let mut then = ir::Block::new();
            then.push(store(value), span);
            let mut otherwise = ir::Block::new();
            otherwise.push(store(zero), span);
            Stmt::If {
                cond,
                then,
                otherwise,
            }
        }
    };
    if let Some(cond) = dg {
        let mut then = ir::Block::new();
        then.push(stmt, span);
        stmt = Stmt::If {
            cond,
            then,
            otherwise: ir::Block::new(),
        };
    }
    st.emit(stmt, span);
    if vars.is_empty() {
        return Ok(());
    }
    let body = st.pop_block();
    // Per-thread buffers are copied whole by every thread: serial loops.
    let per_thread = [src.buffer, dst.buffer]
        .iter()
        .any(|&b| matches!(st.func.buffers[b].scope, Scope::Local | Scope::Var));
    emit_element_nest(st, vars, se, body, per_thread, span);
    Ok(())
}

/// Emits the element loops `vars` (extents `extents`) around `body`: a
/// `T.Parallel` nest, or, when a per-thread buffer takes part (every thread
/// copies it whole), serial loops.
pub(crate) fn emit_element_nest(
    st: &mut super::stage::Stager,
    vars: Vec<Handle<ir::Var>>,
    extents: Vec<Handle<Expr>>,
    body: ir::Block,
    per_thread: bool,
    span: Span,
) {
    if !per_thread {
        st.emit(
            Stmt::Parallel {
                vars,
                extents,
                body,
            },
            span,
        );
        return;
    }
    let mut body = body;
    for (k, &v) in vars.iter().enumerate().rev() {
        let zero = int_of(st, 0, extents[k]);
        let mut outer = ir::Block::new();
        outer.push(
            Stmt::For {
                var: v,
                start: zero,
                extent: extents[k],
                kind: ir::LoopKind::Serial,
                body,
            },
            span,
        );
        body = outer;
    }
    for stmt in body.stmts {
        st.emit(stmt, span);
    }
}

/// `T.copy` operands: maps each view operand to a region of its buffer.
/// Where a view's region is not a box of its buffer of the same shape (a
/// run of rows that crosses the buffer's rows, or a box of another
/// shape), the copy is staged here as an element loop over the view's
/// indices, each element at its own place in the buffer, and `true`
/// returned: the caller emits nothing more.
pub(crate) fn settle_copy(
    st: &mut super::stage::Stager,
    src: &mut Operand,
    dst: &mut Operand,
    span: Span,
) -> EResult<bool> {
    if src.view.is_none() && dst.view.is_none() {
        return Ok(false);
    }
    let (s0, d0) = (Side::of(src), Side::of(dst));
    let ms = match &s0.view {
        Some(v) => mapped(st, v, src)?,
        None => Some(src.region.ranges.clone()),
    };
    let md = match &d0.view {
        Some(v) => mapped(st, v, dst)?,
        None => Some(dst.region.ranges.clone()),
    };
    if let (Some(ms), Some(md)) = (ms, md) {
        src.region.ranges = ms;
        dst.region.ranges = md;
        src.view = None;
        dst.view = None;
        return Ok(false);
    }
    element_loop(st, &s0, &d0, span)?;
    Ok(true)
}

/// A reduction's or scan's operand as a buffer of its own shape: a buffer
/// as it is; a view of a buffer (or, where `regions`, a region of a buffer
/// or of a view) through a scratch buffer of the view's (region's) shape
/// in the buffer's scope, loaded by an element loop when `load` and
/// written back by `unstage`.
pub(crate) struct Staged {
    pub buffer: Handle<ir::Buffer>,
    side: Option<Side>,
}

pub(crate) fn staged<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    name: &str,
    regions: bool,
    load: bool,
    span: Span,
) -> EResult<Option<Staged>> {
    let side = match v {
        Value::Buffer(b) => {
            return Ok(Some(Staged {
                buffer: *b,
                side: None,
            }));
        }
        Value::View(view) => {
            let st = ev.stager("a buffer view", span)?;
            same_type(st, view, "a tile operation", span)?;
            let (ranges, _) = view_ranges(st, view, &[], span)?;
            Side {
                buffer: view.base,
                view: Some(view.clone()),
                ranges,
            }
        }
        Value::ViewAccess(va) if regions => {
            let st = ev.stager("a buffer view", span)?;
            same_type(st, &va.view, "a tile operation", va.span)?;
            let (ranges, _) = view_ranges(st, &va.view, &va.items, va.span)?;
            Side {
                buffer: va.view.base,
                view: Some(va.view.clone()),
                ranges,
            }
        }
        Value::Access(a)
            if regions && a.items.iter().any(|i| matches!(i, IndexItem::Slice { .. })) =>
        {
            let o = super::tl::operand(ev, v, &format!("`T.{name}`"), span)?;
            Side::of(&o)
        }
        _ => return Ok(None),
    };
    let st = ev.kernel_stager(&format!("`T.{name}`"), span)?;
    let base = st.func.buffers[side.buffer].clone();
    if base.scope == Scope::Global {
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!(
                    "`T.{name}` of a view or region of the global buffer `{}` is not supported by tilec",
                    base.name
                ),
                span,
            )
            .with_label("global memory")
            .with_note("copy the data into a shared or fragment buffer first and reduce that"),
        ));
    }
    let mut shape = Vec::new();
    for &(_, e) in &side.ranges {
        if st.func.as_const_int(e).is_none() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::NOT_CONSTANT,
                    format!("`T.{name}` of a view or region needs compile-time extents"),
                    span,
                )
                .with_label("this extent depends on run-time values")
                .with_note("give the region with constant extents (e.g. `x[i * 64:i * 64 + 64]`)"),
            ));
        }
        shape.push(e);
    }
    let buffer = st.add_buffer(
        &format!("{}_staged", base.name),
        base.dtype,
        shape,
        base.scope,
        span,
    );
    st.emit(Stmt::Alloc { buffer, init: None }, span);
    let own = Side {
        buffer,
        view: None,
        ranges: side
            .ranges
            .iter()
            .map(|&(_, e)| (int_of(st, 0, e), e))
            .collect(),
    };
    if load {
        element_loop(st, &side, &own, span)?;
    }
    Ok(Some(Staged {
        buffer,
        side: Some(side),
    }))
}

/// Writes a staged operand's scratch buffer back to the view or region it
/// stands for.
pub(crate) fn unstage(st: &mut super::stage::Stager, s: &Staged, span: Span) -> EResult<()> {
    let Some(side) = &s.side else {
        return Ok(());
    };
    let own = Side {
        buffer: s.buffer,
        view: None,
        ranges: side
            .ranges
            .iter()
            .map(|&(_, e)| (int_of(st, 0, e), e))
            .collect(),
    };
    element_loop(st, &own, side, span)
}

/// `T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad)`:
/// the im2col tile of a 4-D NHWC image as a parallel nest, the
/// out-of-image elements zero (TileLang's `tl.tileop.im2col`).
fn im2col<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new(
        "im2col",
        &[
            "img",
            "col",
            "nhw_step",
            "c_step",
            "kernel",
            "stride",
            "dilation",
            "pad",
            "eviction_policy",
            "annotations",
        ],
        args,
        kwargs,
        span,
    )?;
    let img = match a.req(0, "an image buffer")? {
        Value::Buffer(b) => *b,
        Value::Poison(_) => return Err(super::stage::cascade()),
        other => {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`T.im2col` takes the image buffer itself, got {}",
                    other.a_type_name()
                ),
                span,
            ));
        }
    };
    let col_v = a.req(1, "a destination")?.clone();
    let nhw = a.req(2, "`nhw_step`")?.clone();
    let cstep = a.req(3, "`c_step`")?.clone();
    let mut consts = [0i64; 4];
    for (i, what) in ["kernel", "stride", "dilation", "pad"].iter().enumerate() {
        consts[i] = a
            .req(4 + i, &format!("`{what}`"))?
            .as_int()
            .ok_or_else(|| {
                err(
                    codes::NOT_CONSTANT,
                    format!("`T.im2col` needs `{what}` as a compile-time integer"),
                    span,
                )
            })?;
    }
    let [kernel, stride, dilation, pad] = consts;
    if kernel < 1 || stride < 1 || dilation < 1 || pad < 0 {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            "`T.im2col` needs kernel, stride and dilation of at least 1 and a padding of at least 0",
            span,
        ));
    }
    let dst = super::tl::operand(ev, &col_v, "`T.im2col`", span)?;
    let st = ev.kernel_stager("`T.im2col`", span)?;
    let ib = st.func.buffers[img].clone();
    if ib.shape.len() != 4 {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "`T.im2col` reads a 4-D (N, H, W, C) image; `{}` has {} dimensions",
                ib.name,
                ib.shape.len()
            ),
            span,
        ));
    }
    let db = st.func.buffers[dst.region.buffer].clone();
    if db.dtype != ib.dtype {
        return Err(err(
            codes::BAD_DTYPE,
            format!(
                "`T.im2col` copies {} elements into {} ones; both must have one type",
                ib.dtype.tilelang_name(),
                db.dtype.tilelang_name()
            ),
            span,
        ));
    }
    let nd = dst.region.ranges.len();
    if nd < 2 {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            "`T.im2col` writes a region of at least 2 dimensions",
            span,
        ));
    }
    let bm = dst.region.ranges[nd - 2].extent;
    let bk = dst.region.ranges[nd - 1].extent;
    let nhw = st.value_expr(&nhw, Some(DType::I32), span)?;
    let cstep = st.value_expr(&cstep, Some(DType::I32), span)?;
    let i = st.add_var("i", DType::I32, ir::VarKind::Loop);
    let j = st.add_var("j", DType::I32, ir::VarKind::Loop);
    let ie = st.var(i);
    let je = st.var(j);
    let c = |st: &mut super::stage::Stager, v: i64| st.int(v);
    let (h, w, cd) = (ib.shape[1], ib.shape[2], ib.shape[3]);
    // out = (dim + 2 * pad - (kernel - 1) * dilation - 1) // stride + 1
    let outdim = |st: &mut super::stage::Stager, d: Handle<Expr>| -> EResult<Handle<Expr>> {
        let k = c(st, 2 * pad - (kernel - 1) * dilation - 1);
        let x = op(st, BinaryOp::Add, d, k, span)?;
        let s = c(st, stride);
        let x = op(st, BinaryOp::FloorDiv, x, s, span)?;
        let one = c(st, 1);
        op(st, BinaryOp::Add, x, one, span)
    };
    let out_h = outdim(st, h)?;
    let out_w = outdim(st, w)?;
    let out_hw = op(st, BinaryOp::Mul, out_h, out_w, span)?;
    let kx = op(st, BinaryOp::Mul, cstep, bk, span)?;
    let k = op(st, BinaryOp::Add, kx, je, span)?;
    let mx = op(st, BinaryOp::Mul, nhw, bm, span)?;
    let m = op(st, BinaryOp::Add, mx, ie, span)?;
    let kc = c(st, kernel);
    let kcd = op(st, BinaryOp::Mul, kc, cd, span)?;
    let sc = c(st, stride);
    let dc = c(st, dilation);
    let pc = c(st, pad);
    // access_h = (m % out_hw) // out_w * stride + k // (kernel * C) * dilation - pad
    let t = op(st, BinaryOp::FloorMod, m, out_hw, span)?;
    let t = op(st, BinaryOp::FloorDiv, t, out_w, span)?;
    let t = op(st, BinaryOp::Mul, t, sc, span)?;
    let u = op(st, BinaryOp::FloorDiv, k, kcd, span)?;
    let u = op(st, BinaryOp::Mul, u, dc, span)?;
    let ah = op(st, BinaryOp::Add, t, u, span)?;
    let ah = op(st, BinaryOp::Sub, ah, pc, span)?;
    // access_w = m % out_w * stride + (k // C) % kernel * dilation - pad
    let t = op(st, BinaryOp::FloorMod, m, out_w, span)?;
    let t = op(st, BinaryOp::Mul, t, sc, span)?;
    let u = op(st, BinaryOp::FloorDiv, k, cd, span)?;
    let u = op(st, BinaryOp::FloorMod, u, kc, span)?;
    let u = op(st, BinaryOp::Mul, u, dc, span)?;
    let aw = op(st, BinaryOp::Add, t, u, span)?;
    let aw = op(st, BinaryOp::Sub, aw, pc, span)?;
    let zero = c(st, 0);
    let c1 = op(st, BinaryOp::Ge, ah, zero, span)?;
    let c2 = op(st, BinaryOp::Ge, aw, zero, span)?;
    let c3 = op(st, BinaryOp::Lt, ah, h, span)?;
    let c4 = op(st, BinaryOp::Lt, aw, w, span)?;
    let a1 = st.binary(BinaryOp::And, c1, c2, span)?;
    let a2 = st.binary(BinaryOp::And, c3, c4, span)?;
    let inb = st.binary(BinaryOp::And, a1, a2, span)?;
    let n = op(st, BinaryOp::FloorDiv, m, out_hw, span)?;
    let ci = op(st, BinaryOp::FloorMod, k, cd, span)?;
    let load = st.expr(
        Expr::Load {
            buffer: img,
            indices: vec![n, ah, aw, ci],
        },
        span,
    )?;
    let z = st.number(0.0, ib.dtype);
    let value = st.expr(
        Expr::Select {
            cond: inb,
            then: load,
            otherwise: z,
        },
        span,
    )?;
    let mut indices = Vec::new();
    for (d, r) in dst.region.ranges.iter().enumerate() {
        indices.push(if d == nd - 2 {
            op(st, BinaryOp::Add, r.start, ie, span)?
        } else if d == nd - 1 {
            op(st, BinaryOp::Add, r.start, je, span)?
        } else {
            r.start
        });
    }
    st.push_block();
    st.emit(
        Stmt::Store {
            buffer: dst.region.buffer,
            indices,
            value,
        },
        span,
    );
    let body = st.pop_block();
    st.emit(
        Stmt::Parallel {
            vars: vec![i, j],
            extents: vec![bm, bk],
            body,
        },
        span,
    );
    Ok(Value::None)
}

/// `T.alloc_global(shape, dtype)`: a global scratch buffer of the function,
/// allocated before its kernels.
fn alloc_global<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new(
        "alloc_global",
        &["shape", "dtype", "scope"],
        args,
        kwargs,
        span,
    )?;
    let shape = a.req(0, "a shape")?.clone();
    let dtype = super::tl::dtype_of(a.req(1, "a dtype")?, span)?;
    if let Some(s) = a.get(2)
        && !matches!(s, Value::Str(x) if &**x == "global")
    {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            "`T.alloc_global` allocates in the \"global\" scope only",
            span,
        ));
    }
    let shape_v = shape.as_sequence().unwrap_or_else(|| vec![shape.clone()]);
    let dims = ev.shape_exprs(&shape_v, span)?;
    let st = ev.stager("`T.alloc_global`", span)?;
    if st.kernel.is_some() || st.block_depth() > 1 {
        return Err(Box::new(
            Diagnostic::error(
                codes::PLACEMENT,
                "`T.alloc_global` inside a kernel or a nested block is not supported by tilec",
                span,
            )
            .with_label("allocated here")
            .with_note("allocate the global buffer at the top of the function, before `with T.Kernel(...)`"),
        ));
    }
    let b = st.add_buffer("buf", dtype, dims, Scope::Global, span);
    st.unnamed.insert(b);
    st.emit(
        Stmt::Alloc {
            buffer: b,
            init: None,
        },
        span,
    );
    Ok(Value::Buffer(b))
}

/// `out` of a reduction with the reduced dimension kept as extent 1
/// (`[X, 1, Y]` for `[X, d, Y]`, which TileLang accepts besides `[X, Y]`):
/// the buffer seen as `[X, Y]`, the same storage. Anything else as given.
pub(crate) fn keepdim<'a>(
    ev: &mut Evaluator<'a>,
    out: &Value<'a>,
    src: Handle<ir::Buffer>,
    dim: i64,
    span: Span,
) -> EResult<Value<'a>> {
    let Value::Buffer(b) = out else {
        return Ok(out.clone());
    };
    let st = ev.stager("a reduction", span)?;
    let (Some(s), Some(t)) = (st.func.const_shape(src), st.func.const_shape(*b)) else {
        return Ok(out.clone());
    };
    let rank = s.len() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    let Ok(du) = usize::try_from(d) else {
        return Ok(out.clone());
    };
    if s.len() < 2 || du >= s.len() || t.len() != s.len() || t[du] != 1 {
        return Ok(out.clone());
    }
    let kept = t.iter().enumerate().all(|(i, &x)| i == du || x == s[i]);
    if !kept {
        return Ok(out.clone());
    }
    let buf = &st.func.buffers[*b];
    let (dtype, shape): (DType, Vec<Handle<Expr>>) = (
        buf.dtype,
        buf.shape
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != du)
            .map(|(_, &e)| e)
            .collect(),
    );
    Ok(Value::View(Rc::new(View {
        base: *b,
        shape,
        dtype,
    })))
}
