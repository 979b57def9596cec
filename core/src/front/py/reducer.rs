//! Reducers: `T.alloc_reducer`, `T.reducer_init`, `T.reducer_update` and
//! `T.finalize_reducer`.
//!
//! In TileLang a reducer is a fragment that the iterations of a
//! `T.Parallel` nest accumulate into (`r[i] += x[i, j]`, or
//! `T.reducer_update(r[i], x[i, j])`) although several iterations update
//! the same element; each thread keeps a partial result and
//! `T.finalize_reducer` combines the partials across threads. tilec's
//! `T.Parallel` requires independent iterations, so each nest that
//! accumulates into a reducer is staged as what it means:
//!
//! * a fragment of the nest's shape, filled with the combine's identity,
//!   that the iteration `(i, j, ...)` accumulates its contributions into
//!   (`t[i, j] = t[i, j] op x`), so iterations stay independent;
//! * after the nest, `reduce` statements along the nest dimensions that do
//!   not index the reducer;
//! * a nest that combines the reduced fragment into the reducer
//!   (`r[i] = r[i] op part[i]`).
//!
//! The result is TileLang's up to the order in which a sum adds its terms.
//! Every reducer value is then the complete result at all times, so
//! `T.finalize_reducer` has nothing left to combine: without a destination
//! it stages nothing; with one it copies the reducer there.

use super::codes;
use super::eval::{Evaluator, err};
use super::stage::Stager;
use super::tl::Args;
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::{
    self, BinaryOp, Block, DType, Expr, Handle, Literal, Range, ReduceKind, Region, Scope, Span,
    Stmt, Var, VarKind,
};
use std::collections::{HashMap, HashSet};

/// `T.<name>` values this module adds.
const FUNCTIONS: &[(&str, &str)] = &[
    ("alloc_reducer", "T.alloc_reducer"),
    ("finalize_reducer", "T.finalize_reducer"),
    ("reducer_init", "T.reducer_init"),
    ("reducer_update", "T.reducer_update"),
];

/// The reducers of a function being staged.
#[derive(Debug, Default)]
pub(crate) struct Reducers {
    /// Every reducer with its combine.
    kinds: HashMap<Handle<ir::Buffer>, ReduceKind>,
    /// Reducers not yet finalized: accumulations into these are rewritten.
    open: HashSet<Handle<ir::Buffer>>,
}

impl Reducers {
    /// Whether some reducer is still open.
    pub fn any_open(&self) -> bool {
        !self.open.is_empty()
    }
}

pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    super::value::table_builtin(FUNCTIONS, name)
}

/// Whether `call` stages `T.<name>`.
pub(crate) fn handles(name: &str) -> bool {
    super::value::table_has(FUNCTIONS, name)
}

fn combine_op(kind: ReduceKind) -> BinaryOp {
    match kind {
        ReduceKind::Max => BinaryOp::Max,
        ReduceKind::Min => BinaryOp::Min,
        ReduceKind::BitAnd => BinaryOp::BitAnd,
        ReduceKind::BitOr => BinaryOp::BitOr,
        ReduceKind::BitXor => BinaryOp::BitXor,
        _ => BinaryOp::Add,
    }
}

/// `name[idx] = ...` as an accumulation of `kind` is written.
fn accumulation_form(kind: ReduceKind, name: &str) -> String {
    match kind {
        ReduceKind::Max => format!("T.max({name}[idx], value)"),
        ReduceKind::Min => format!("T.min({name}[idx], value)"),
        ReduceKind::BitAnd => format!("{name}[idx] & value"),
        ReduceKind::BitOr => format!("{name}[idx] | value"),
        ReduceKind::BitXor => format!("{name}[idx] ^ value"),
        _ => format!("{name}[idx] + value"),
    }
}

/// The value `kind` starts from: 0, the lowest or the highest value of
/// `dtype`, or all ones for a bitwise and.
fn identity(st: &mut Stager, kind: ReduceKind, dtype: DType) -> Handle<Expr> {
    let (lo, hi) = match dtype.int_range() {
        Some((lo, hi)) => (
            Literal::Int(lo as i64, dtype),
            Literal::Int(hi as u64 as i64, dtype),
        ),
        None => (
            Literal::of(dtype, f64::NEG_INFINITY),
            Literal::of(dtype, f64::INFINITY),
        ),
    };
    match kind {
        ReduceKind::Max => st.lit(lo),
        ReduceKind::Min => st.lit(hi),
        ReduceKind::BitAnd if dtype.kind() == ir::DTypeKind::Signed => {
            st.lit(Literal::Int(-1, dtype))
        }
        ReduceKind::BitAnd => st.lit(hi),
        _ => st.number(0.0, dtype),
    }
}

fn whole_region(st: &mut Stager, b: Handle<ir::Buffer>) -> Region {
    let shape = st.func.buffers[b].shape.clone();
    let zero = st.int(0);
    Region {
        buffer: b,
        ranges: shape
            .into_iter()
            .map(|extent| Range {
                start: zero,
                extent,
            })
            .collect(),
    }
}

/// The reducer a `T.finalize_reducer` / `T.reducer_init` argument names.
fn reducer_arg(
    ev: &mut Evaluator<'_>,
    v: &Value<'_>,
    what: &str,
    span: Span,
) -> EResult<(Handle<ir::Buffer>, ReduceKind)> {
    let st = ev.kernel_stager(what, span)?;
    if let Value::Buffer(b) = v
        && let Some(kind) = st.reducers.kinds.get(b)
    {
        return Ok((*b, *kind));
    }
    Err(Box::new(
        Diagnostic::error(
            codes::TYPE_ERROR,
            format!("{what} takes a reducer, got {}", v.a_type_name()),
            span,
        )
        .with_label("not a buffer from `T.alloc_reducer`")
        .with_note("allocate the buffer with `T.alloc_reducer(shape, dtype, op=...)`"),
    ))
}

pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match name {
        "alloc_reducer" => {
            let a = Args::new(
                "alloc_reducer",
                &["shape", "dtype", "op", "replication"],
                args,
                kwargs,
                span,
            )?;
            let dtype = super::tl::dtype_of(a.req(1, "a dtype")?, span)?;
            let op = match a.get(2) {
                None | Some(Value::None) => "sum".to_string(),
                Some(Value::Str(s)) => s.to_string(),
                Some(other) => {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!(
                            "`op` of `T.alloc_reducer` is a string, got {}",
                            other.a_type_name()
                        ),
                        span,
                    ));
                }
            };
            let kind = match op.as_str() {
                "sum" => ReduceKind::Sum,
                "max" => ReduceKind::Max,
                "min" => ReduceKind::Min,
                "bitand" | "bitor" | "bitxor" if !dtype.is_int() => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!(
                                "a reducer with `op=\"{op}\"` combines the bits of integers, but its dtype is {}",
                                dtype.tilelang_name()
                            ),
                            span,
                        )
                        .with_label("bitwise reducer of a non-integer dtype")
                        .with_note("give an integer dtype (`T.int32`, `T.uint8`, ...)"),
                    ));
                }
                "bitand" => ReduceKind::BitAnd,
                "bitor" => ReduceKind::BitOr,
                "bitxor" => ReduceKind::BitXor,
                other => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!("`T.alloc_reducer` has no op {other:?}"),
                            span,
                        )
                        .with_label("unknown op")
                        .with_note(
                            "the ops are \"sum\", \"max\", \"min\", \"bitand\", \"bitor\" and \"bitxor\"",
                        ),
                    ));
                }
            };
            // Where the partial results live (TileLang's deprecated
            // replication knob) does not change the result.
            match a.get(3) {
                None | Some(Value::None) => {}
                Some(Value::Str(s)) if matches!(&**s, "all" | "none") => {}
                Some(other) => {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!(
                            "`replication` of `T.alloc_reducer` is \"all\" or \"none\", got {}",
                            other.to_py_str()
                        ),
                        span,
                    ));
                }
            }
            let shape = a.req(0, "a shape")?.clone();
            let v = super::tl::alloc(
                ev,
                Scope::Fragment,
                &shape,
                dtype,
                "`T.alloc_reducer`",
                span,
            )?;
            if let Value::Buffer(b) = &v {
                let st = ev.kernel_stager("`T.alloc_reducer`", span)?;
                st.reducers.kinds.insert(*b, kind);
                st.reducers.open.insert(*b);
            }
            Ok(v)
        }
        "reducer_init" => {
            let a = Args::new("reducer_init", &["reducer", "init"], args, kwargs, span)?;
            let (b, kind) = reducer_arg(ev, a.req(0, "a reducer")?, "`T.reducer_init`", span)?;
            let st = ev.kernel_stager("`T.reducer_init`", span)?;
            let dtype = st.func.buffers[b].dtype;
            // A starting value is one more contribution to every element:
            // the reducer starts from it.
            let value = match a.get(1) {
                None | Some(Value::None) => identity(st, kind, dtype),
                Some(v) => {
                    let e = st.value_expr(v, Some(dtype), span)?;
                    st.cast(e, dtype, span)?
                }
            };
            let dst = whole_region(st, b);
            st.emit(Stmt::Fill { dst, value }, span);
            st.reducers.open.insert(b);
            Ok(Value::None)
        }
        "reducer_update" => {
            let a = Args::new("reducer_update", &["target", "value"], args, kwargs, span)?;
            let target = a.req(0, "a reducer element")?.clone();
            let value = a.req(1, "a value")?.clone();
            let st = ev.kernel_stager("`T.reducer_update`", span)?;
            let load = st.value_expr(&target, None, span)?;
            let (b, indices) = match &st.func.exprs[load] {
                Expr::Load { buffer, indices } if st.reducers.kinds.contains_key(buffer) => {
                    (*buffer, indices.clone())
                }
                _ => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::TYPE_ERROR,
                            "`T.reducer_update` takes an element of a reducer, `acc[indices]`",
                            span,
                        )
                        .with_label("not an element of a `T.alloc_reducer` buffer"),
                    ));
                }
            };
            if !st.reducers.open.contains(&b) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!(
                            "`T.reducer_update` of `{}` after its `T.finalize_reducer`",
                            st.func.buffers[b].name
                        ),
                        span,
                    )
                    .with_label("reducer already finalized")
                    .with_note("open a new accumulation with `T.reducer_init` first"),
                ));
            }
            let kind = st.reducers.kinds[&b];
            let dtype = st.func.buffers[b].dtype;
            let v = st.value_expr(&value, Some(dtype), span)?;
            let v = st.cast(v, dtype, span)?;
            let sum = st.binary(combine_op(kind), load, v, span)?;
            st.emit(
                Stmt::Store {
                    buffer: b,
                    indices,
                    value: sum,
                },
                span,
            );
            Ok(Value::None)
        }
        "finalize_reducer" => {
            let a = Args::new(
                "finalize_reducer",
                &["reducer", "dst", "batch", "annotations"],
                args,
                kwargs,
                span,
            )?;
            let (b, _) = reducer_arg(ev, a.req(0, "a reducer")?, "`T.finalize_reducer`", span)?;
            if let Some(Value::Int(n)) = a.get(2)
                && *n < 1
            {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`batch` of `T.finalize_reducer` must be at least 1, got {n}"),
                    span,
                ));
            }
            let dst = match a.get(1) {
                None | Some(Value::None) => None,
                Some(Value::Buffer(d)) => Some(*d),
                Some(other) => {
                    return Err(err(
                        codes::TYPE_ERROR,
                        format!(
                            "the destination of `T.finalize_reducer` is a fragment, got {}",
                            other.a_type_name()
                        ),
                        span,
                    ));
                }
            };
            let st = ev.kernel_stager("`T.finalize_reducer`", span)?;
            st.reducers.open.remove(&b);
            if let Some(d) = dst {
                let (rs, ds) = (st.const_shape_of(b), st.const_shape_of(d));
                if rs != ds || st.func.buffers[b].dtype != st.func.buffers[d].dtype {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!(
                                "the destination `{}` of `T.finalize_reducer` must have the reducer `{}`'s shape and dtype",
                                st.func.buffers[d].name, st.func.buffers[b].name
                            ),
                            span,
                        )
                        .with_label("shape or dtype differs"),
                    ));
                }
                let src = whole_region(st, b);
                let dst = whole_region(st, d);
                st.emit(Stmt::Copy { src, dst }, span);
            }
            Ok(Value::None)
        }
        _ => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`T.{name}` is not supported by tilec"),
            span,
        )),
    }
}

/// One accumulation into a reducer inside a nest.
struct Site {
    reducer: Handle<ir::Buffer>,
    kind: ReduceKind,
    /// The reducer's indices: nest variables or expressions that do not
    /// change inside the nest.
    indices: Vec<Handle<Expr>>,
    /// The nest-shaped fragment the iterations accumulate into.
    tmp: Handle<ir::Buffer>,
}

fn refused(msg: String, label: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(codes::UNSUPPORTED_TILELANG, msg, span)
            .with_label(label.to_string())
            .with_note(
                "tilec accumulates into a reducer in the forms `r[idx] += value`, \
                 `r[idx] = T.max(r[idx], value)` / `T.min` (by the reducer's op) or \
                 `T.reducer_update(r[idx], value)`, directly in a `T.Parallel` nest, each index \
                 a loop variable of the nest or a value that does not change in it; read the \
                 reducer after the nest",
            ),
    )
}

/// Emits the outermost `T.Parallel` nest `stmt`, rewriting its
/// accumulations into open reducers (see the module documentation).
pub(crate) fn emit_parallel(st: &mut Stager, stmt: Stmt, span: Span) -> EResult<()> {
    let Stmt::Parallel {
        vars,
        extents,
        mut body,
    } = stmt
    else {
        st.emit(stmt, span);
        return Ok(());
    };
    let mut bound = HashSet::new();
    collect_bound(&body, &mut bound);
    let mut sites = Vec::new();
    rewrite_block(st, &mut body, &vars, &extents, &bound, false, &mut sites)?;
    if sites.is_empty() && !reads_open(st, &body) {
        st.emit(
            Stmt::Parallel {
                vars,
                extents,
                body,
            },
            span,
        );
        return Ok(());
    }
    if let Some(at) = first_read(st, &body) {
        return Err(refused(
            format!(
                "the reducer `{}` is read inside a `T.Parallel` nest before `T.finalize_reducer`",
                st.func.buffers[at.0].name
            ),
            "reducer read here",
            at.1,
        ));
    }
    for site in &sites {
        st.emit(
            Stmt::Alloc {
                buffer: site.tmp,
                init: None,
            },
            span,
        );
        let dtype = st.func.buffers[site.tmp].dtype;
        let value = identity(st, site.kind, dtype);
        let dst = whole_region(st, site.tmp);
        st.emit(Stmt::Fill { dst, value }, span);
    }
    st.emit(
        Stmt::Parallel {
            vars: vars.clone(),
            extents: extents.clone(),
            body,
        },
        span,
    );
    for site in sites {
        combine(st, &site, &vars, &extents, span)?;
    }
    Ok(())
}

/// Reduces a site's fragment along the dimensions that do not index the
/// reducer and combines the result into the reducer.
fn combine(
    st: &mut Stager,
    site: &Site,
    vars: &[Handle<Var>],
    extents: &[Handle<Expr>],
    span: Span,
) -> EResult<()> {
    let dtype = st.func.buffers[site.tmp].dtype;
    let indexed: Vec<Option<usize>> = site
        .indices
        .iter()
        .map(|e| match st.func.exprs[*e] {
            Expr::Var(v) => vars.iter().position(|x| *x == v),
            _ => None,
        })
        .collect();
    // (nest dimension, extent) of the current partial result.
    let mut dims: Vec<(usize, Handle<Expr>)> = extents.iter().copied().enumerate().collect();
    let mut cur = site.tmp;
    for d in (0..vars.len()).rev() {
        if indexed.contains(&Some(d)) {
            continue;
        }
        let pos = dims.iter().position(|(x, _)| *x == d).unwrap_or(0);
        dims.remove(pos);
        let mut shape: Vec<Handle<Expr>> = dims.iter().map(|(_, e)| *e).collect();
        if shape.is_empty() {
            shape.push(st.int(1));
        }
        let part = st.add_buffer("red_part", dtype, shape, Scope::Fragment, span);
        st.emit(
            Stmt::Alloc {
                buffer: part,
                init: None,
            },
            span,
        );
        st.emit(
            Stmt::Reduce {
                kind: site.kind,
                src: cur,
                dst: part,
                dim: pos as u32,
                clear: true,
            },
            span,
        );
        cur = part;
    }
    // A nest over what is left: one variable per remaining dimension.
    let mut new_vars = Vec::new();
    let mut new_extents = Vec::new();
    let mut by_dim = HashMap::new();
    for (d, e) in &dims {
        let v = st.add_var("r", DType::I32, VarKind::Loop);
        by_dim.insert(*d, v);
        new_vars.push(v);
        new_extents.push(*e);
    }
    if new_vars.is_empty() {
        new_vars.push(st.add_var("r", DType::I32, VarKind::Loop));
        new_extents.push(st.int(1));
    }
    let part_idx: Vec<Handle<Expr>> = new_vars.iter().map(|v| st.var(*v)).collect();
    let mut red_idx = Vec::new();
    for (e, d) in site.indices.iter().zip(&indexed) {
        red_idx.push(match d.and_then(|d| by_dim.get(&d)) {
            Some(v) => st.var(*v),
            None => *e,
        });
    }
    let old = st.expr(
        Expr::Load {
            buffer: site.reducer,
            indices: red_idx.clone(),
        },
        span,
    )?;
    let part = st.expr(
        Expr::Load {
            buffer: cur,
            indices: part_idx,
        },
        span,
    )?;
    let value = st.binary(combine_op(site.kind), old, part, span)?;
    let mut body = Block::new();
    body.push(
        Stmt::Store {
            buffer: site.reducer,
            indices: red_idx,
            value,
        },
        span,
    );
    // A fragment store in `T.Parallel` indexes each dimension by a loop
    // variable of the nest (or 0 on an extent-1 dimension); with indices
    // fixed outside the nest (`acc[i, j]` in serial loops over `i`, `j`)
    // the combination runs as serial loops instead.
    let shape = st.const_shape_of(site.reducer);
    let parallel_ok = site
        .indices
        .iter()
        .zip(&indexed)
        .enumerate()
        .all(|(d, (e, v))| {
            v.is_some()
                || (st.func.as_const_int(*e) == Some(0)
                    && shape.as_ref().and_then(|s| s.get(d)) == Some(&1))
        });
    if parallel_ok {
        st.emit(
            Stmt::Parallel {
                vars: new_vars,
                extents: new_extents,
                body,
            },
            span,
        );
    } else {
        for (var, extent) in new_vars.into_iter().zip(new_extents).rev() {
            let mut outer = Block::new();
            let start = st.int(0);
            outer.push(
                Stmt::For {
                    var,
                    start,
                    extent,
                    kind: ir::LoopKind::Serial,
                    body,
                },
                span,
            );
            body = outer;
        }
        for (stmt, at) in body.stmts.into_iter().zip(body.spans) {
            st.emit(stmt, at);
        }
    }
    Ok(())
}

/// Variables bound inside `block`: loop variables and lets.
fn collect_bound(block: &Block, out: &mut HashSet<Handle<Var>>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::For { var, body, .. } => {
                out.insert(*var);
                collect_bound(body, out);
            }
            Stmt::Parallel { vars, body, .. } => {
                out.extend(vars.iter().copied());
                collect_bound(body, out);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                collect_bound(then, out);
                collect_bound(otherwise, out);
            }
            Stmt::Let { var, .. } => {
                out.insert(*var);
            }
            Stmt::Role { body, .. } | Stmt::Kernel { body, .. } => collect_bound(body, out),
            _ => {}
        }
    }
}

/// Whether the expression tree `e` mentions one of `vars`.
fn mentions(st: &Stager, e: Handle<Expr>, vars: &HashSet<Handle<Var>>) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let Some(node) = st.func.exprs.try_get(e) else {
            continue;
        };
        if let Expr::Var(v) = node
            && vars.contains(v)
        {
            return true;
        }
        stack.extend(node.operands());
    }
    false
}

/// Whether `a` and `b` are the same expression tree.
fn same(st: &Stager, a: Handle<Expr>, b: Handle<Expr>) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (st.func.exprs.try_get(a), st.func.exprs.try_get(b)) else {
        return false;
    };
    let shallow = match (x, y) {
        (Expr::Literal(l), Expr::Literal(m)) => return l == m,
        (Expr::Var(v), Expr::Var(w)) => return v == w,
        (Expr::Unary { op, .. }, Expr::Unary { op: p, .. }) => op == p,
        (Expr::Binary { op, .. }, Expr::Binary { op: p, .. }) => op == p,
        (Expr::Select { .. }, Expr::Select { .. }) => true,
        (Expr::Cast { dtype, .. }, Expr::Cast { dtype: d, .. })
        | (Expr::Bitcast { dtype, .. }, Expr::Bitcast { dtype: d, .. }) => dtype == d,
        (Expr::Load { buffer, .. }, Expr::Load { buffer: c, .. }) => buffer == c,
        _ => false,
    };
    let (xo, yo) = (x.operands(), y.operands());
    shallow && xo.len() == yo.len() && xo.iter().zip(&yo).all(|(p, q)| same(st, *p, *q))
}

/// The buffers a tile statement names.
fn tile_buffers(stmt: &Stmt) -> Vec<Handle<ir::Buffer>> {
    match stmt {
        Stmt::Copy { src, dst } => vec![src.buffer, dst.buffer],
        Stmt::Gemm { a, b, c, .. } => vec![a.buffer, b.buffer, c.buffer],
        Stmt::Fill { dst, .. } => vec![dst.buffer],
        Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => vec![*src, *dst],
        Stmt::AtomicAdd { dst, value } => {
            let mut v = vec![dst.buffer];
            if let ir::AtomicValue::Region(r) = value {
                v.push(r.buffer);
            }
            v
        }
        _ => Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn rewrite_block(
    st: &mut Stager,
    block: &mut Block,
    vars: &[Handle<Var>],
    extents: &[Handle<Expr>],
    bound: &HashSet<Handle<Var>>,
    inner: bool,
    sites: &mut Vec<Site>,
) -> EResult<()> {
    for (stmt, span) in block.stmts.iter_mut().zip(block.spans.iter().copied()) {
        match stmt {
            Stmt::Store {
                buffer,
                indices,
                value,
            } if st.reducers.open.contains(buffer) => {
                let r = *buffer;
                let name = st.func.buffers[r].name.clone();
                if inner {
                    return Err(refused(
                        format!(
                            "accumulation into the reducer `{name}` inside a nested `T.Parallel`"
                        ),
                        "in an inner parallel nest",
                        span,
                    ));
                }
                let kind = st.reducers.kinds[&r];
                let op = combine_op(kind);
                // `r[idx] = r[idx] op v` (or `v op r[idx]`).
                let contribution = match st.func.exprs[*value].clone() {
                    Expr::Binary { op: o, lhs, rhs } if o == op => {
                        let is_old = |e: Handle<Expr>| match &st.func.exprs[e] {
                            Expr::Load {
                                buffer,
                                indices: li,
                            } => {
                                *buffer == r
                                    && li.len() == indices.len()
                                    && li.iter().zip(indices.iter()).all(|(a, b)| same(st, *a, *b))
                            }
                            _ => false,
                        };
                        if is_old(lhs) {
                            Some(rhs)
                        } else if is_old(rhs) {
                            Some(lhs)
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                let Some(v) = contribution else {
                    return Err(refused(
                        format!(
                            "a store to the reducer `{name}` (op \"{}\") that is not an accumulation `{name}[idx] = {}`",
                            kind.name(),
                            accumulation_form(kind, &name)
                        ),
                        "not an accumulation of the reducer's op",
                        span,
                    ));
                };
                let loop_vars: HashSet<Handle<Var>> =
                    vars.iter().copied().chain(bound.iter().copied()).collect();
                let mut used = HashSet::new();
                for e in indices.iter() {
                    if let Expr::Var(x) = st.func.exprs[*e]
                        && vars.contains(&x)
                    {
                        if !used.insert(x) {
                            return Err(refused(
                                format!(
                                    "the loop variable `{}` indexes the reducer `{name}` twice",
                                    st.func.vars[x].name
                                ),
                                "repeated index",
                                span,
                            ));
                        }
                        continue;
                    }
                    if mentions(st, *e, &loop_vars) {
                        return Err(refused(
                            format!(
                                "an index of the reducer `{name}` that is computed from the loop variables"
                            ),
                            "each index must be a loop variable of the nest, or not depend on the nest",
                            span,
                        ));
                    }
                }
                let dtype = st.func.buffers[r].dtype;
                let tmp = st.add_buffer("red_acc", dtype, extents.to_vec(), Scope::Fragment, span);
                let tmp_idx: Vec<Handle<Expr>> = vars.iter().map(|x| st.var(*x)).collect();
                let old = st.expr(
                    Expr::Load {
                        buffer: tmp,
                        indices: tmp_idx.clone(),
                    },
                    span,
                )?;
                let new = st.binary(op, old, v, span)?;
                sites.push(Site {
                    reducer: r,
                    kind,
                    indices: indices.clone(),
                    tmp,
                });
                *stmt = Stmt::Store {
                    buffer: tmp,
                    indices: tmp_idx,
                    value: new,
                };
            }
            Stmt::For { body, .. } | Stmt::Role { body, .. } => {
                rewrite_block(st, body, vars, extents, bound, inner, sites)?;
            }
            Stmt::Parallel { body, .. } => {
                rewrite_block(st, body, vars, extents, bound, true, sites)?;
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                rewrite_block(st, then, vars, extents, bound, inner, sites)?;
                rewrite_block(st, otherwise, vars, extents, bound, inner, sites)?;
            }
            other => {
                if let Some(b) = tile_buffers(other)
                    .into_iter()
                    .find(|b| st.reducers.open.contains(b))
                {
                    return Err(refused(
                        format!(
                            "a tile operation on the reducer `{}` inside a `T.Parallel` nest",
                            st.func.buffers[b].name
                        ),
                        "reducer used here",
                        span,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether `body` loads from an open reducer.
fn reads_open(st: &Stager, body: &Block) -> bool {
    first_read(st, body).is_some()
}

/// The first open reducer `block` loads from, with the statement's span.
fn first_read(st: &Stager, block: &Block) -> Option<(Handle<ir::Buffer>, Span)> {
    for (stmt, span) in block.stmts.iter().zip(&block.spans) {
        let mut one = Block::new();
        one.push(stmt.clone(), *span);
        let mut found = None;
        ir::visit::for_each_expr_mut(&mut one, &mut |e| {
            if found.is_none() {
                found = load_of_open(st, *e);
            }
        });
        if let Some(b) = found {
            // Point at the innermost statement that reads it.
            let inner = match stmt {
                Stmt::For { body, .. } | Stmt::Parallel { body, .. } | Stmt::Role { body, .. } => {
                    first_read(st, body)
                }
                Stmt::If {
                    then, otherwise, ..
                } => first_read(st, then).or_else(|| first_read(st, otherwise)),
                _ => None,
            };
            return Some(inner.unwrap_or((b, *span)));
        }
    }
    None
}

fn load_of_open(st: &Stager, e: Handle<Expr>) -> Option<Handle<ir::Buffer>> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let Some(node) = st.func.exprs.try_get(e) else {
            continue;
        };
        if let Expr::Load { buffer, .. } = node
            && st.reducers.open.contains(buffer)
        {
            return Some(*buffer);
        }
        stack.extend(node.operands());
    }
    None
}
