//! `T.annotate_safe_value({A: v})`: out-of-bounds loads of the global
//! buffer `A` read `v` instead of zero, in the kernel that holds the
//! annotation (TileLang's `LegalizeSafeMemoryAccess`: a load whose indices
//! are not provably inside the buffer becomes
//! `if_then_else(in_bounds, A[...], v)`, and so does each element of a
//! copy from `A`).
//!
//! tilec writes the same thing in Tile IR: element loads of `A` become a
//! `select` on their bounds, and a `T.copy` from `A` becomes a `T.Parallel`
//! nest of such loads (a serial nest into a per-thread buffer). Other tile
//! operations reading `A` are refused: their out-of-bounds elements would
//! read zero.

use super::codes;
use super::eval::{Evaluator, err};
use super::stage::Stager;
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::{self, BinaryOp, Block, DType, Expr, Handle, Literal, Region, Scope, Span, Stmt};

/// Records the annotation's values for the kernel being staged.
pub(crate) fn annotate<'a>(
    ev: &mut Evaluator<'a>,
    entries: Vec<(Handle<ir::Buffer>, Value<'a>)>,
    span: Span,
) -> EResult<()> {
    let st = ev.kernel_stager("`T.annotate_safe_value`", span)?;
    for (b, v) in entries {
        let Some(value) = v.as_number() else {
            return Err(Box::new(
                Diagnostic::error(
                    codes::NOT_CONSTANT,
                    "the values of `T.annotate_safe_value` must be compile-time numbers",
                    span,
                )
                .with_label(format!("got {}", v.a_type_name())),
            ));
        };
        // TileLang legalizes global buffers only; an on-chip buffer's
        // out-of-bounds accesses are the author's (tilec: an error).
        if st.func.buffers[b].scope != Scope::Global {
            continue;
        }
        if value == 0.0 {
            st.safe_values.remove(&b);
            continue;
        }
        if st
            .func
            .exprs
            .iter()
            .any(|(_, e)| matches!(e, Expr::Load { buffer, .. } if *buffer == b))
        {
            let name = st.func.buffers[b].name.clone();
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`T.annotate_safe_value` for `{name}` after `{name}` was read"),
                    span,
                )
                .with_label("annotated here")
                .with_note(
                    "TileLang applies the safe value to every load of the enclosing kernel \
                     (or `T.sblock`), also to those written before the annotation; put the \
                     annotation at the top of the kernel, before the first read",
                ),
            ));
        }
        st.safe_values.insert(b, value);
    }
    Ok(())
}

/// Integer comparison of two index expressions of possibly different types.
fn compare(
    st: &mut Stager,
    op: BinaryOp,
    a: Handle<Expr>,
    b: Handle<Expr>,
    span: Span,
) -> EResult<Handle<Expr>> {
    let (ta, tb) = (st.ty(a), st.ty(b));
    let t = if ta.bits() >= tb.bits() { ta } else { tb };
    let a = st.cast(a, t, span)?;
    let b = st.cast(b, t, span)?;
    st.binary(op, a, b, span)
}

/// `0 <= indices[d] < shape[d]` for every dimension where that is not
/// evident from constants; `None` when every dimension is.
fn in_bounds(
    st: &mut Stager,
    buffer: Handle<ir::Buffer>,
    indices: &[Handle<Expr>],
    span: Span,
) -> EResult<Option<Handle<Expr>>> {
    let shape = st.func.buffers[buffer].shape.clone();
    let mut cond: Option<Handle<Expr>> = None;
    for (&i, &n) in indices.iter().zip(&shape) {
        let (ci, cn) = (st.func.as_const_int(i), st.func.as_const_int(n));
        if let (Some(ci), Some(cn)) = (ci, cn)
            && (0..cn).contains(&ci)
        {
            continue;
        }
        let t = st.ty(i);
        let zero = st.lit(Literal::Int(0, t));
        let lo = compare(st, BinaryOp::Ge, i, zero, span)?;
        let hi = compare(st, BinaryOp::Lt, i, n, span)?;
        for c in [lo, hi] {
            cond = Some(match cond {
                Some(x) => st.binary(BinaryOp::And, x, c, span)?,
                None => c,
            });
        }
    }
    Ok(cond)
}

/// The element `indices` of `buffer` as `dtype`: with a safe value, a
/// `select` of the load and the safe value on the indices' bounds.
pub(crate) fn load_as(
    st: &mut Stager,
    buffer: Handle<ir::Buffer>,
    indices: Vec<Handle<Expr>>,
    dtype: DType,
    span: Span,
) -> EResult<Handle<Expr>> {
    let pad = st.safe_values.get(&buffer).copied();
    let guard = match pad {
        Some(_) => in_bounds(st, buffer, &indices, span)?,
        None => None,
    };
    let load = st.expr(Expr::Load { buffer, indices }, span)?;
    let load = st.cast(load, dtype, span)?;
    match (pad, guard) {
        (Some(pad), Some(cond)) => {
            let pad = st.number(pad, dtype);
            st.expr(
                Expr::Select {
                    cond,
                    then: load,
                    otherwise: pad,
                },
                span,
            )
        }
        _ => Ok(load),
    }
}

/// Whether a copy from `src` needs the safe value of its buffer.
pub(crate) fn pads(st: &Stager, src: &Region) -> bool {
    st.safe_values.contains_key(&src.buffer)
}

/// `T.copy(src, dst)` from a buffer with a safe value, as an element nest:
/// the elements paired in order after dropping unit dimensions, as the
/// copy pairs them.
pub(crate) fn copy(st: &mut Stager, src: &Region, dst: &Region, span: Span) -> EResult<()> {
    let loops = |st: &Stager, r: &Region| -> Vec<Handle<Expr>> {
        r.ranges
            .iter()
            .map(|r| r.extent)
            .filter(|&e| st.func.as_const_int(e) != Some(1))
            .collect()
    };
    let (se, de) = (loops(st, src), loops(st, dst));
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
        let name = st.func.buffers[src.buffer].name.clone();
        return Err(Box::new(
            Diagnostic::error(
                codes::NOT_CONSTANT,
                format!(
                    "a copy from `{name}`, which has a safe value, over extents known only at run time"
                ),
                span,
            )
            .with_label("copied element by element")
            .with_note(
                "tilec copies from a buffer with a nonzero `T.annotate_safe_value` element by \
                 element, which needs compile-time extents; give the region a constant shape",
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
    let place = |st: &mut Stager, r: &Region| -> EResult<Vec<Handle<Expr>>> {
        let mut k = 0;
        let mut idx = Vec::new();
        for range in &r.ranges {
            if st.func.as_const_int(range.extent) == Some(1) {
                idx.push(range.start);
            } else {
                let v = var_exprs[k];
                k += 1;
                idx.push(compare(st, BinaryOp::Add, range.start, v, span)?);
            }
        }
        Ok(idx)
    };
    st.push_block();
    let si = place(st, src)?;
    let di = place(st, dst)?;
    let dtype = st.func.buffers[dst.buffer].dtype;
    let value = load_as(st, src.buffer, si, dtype, span)?;
    // Elements outside the destination are not written, as the copy
    // drops them.
    let inside = {
        let shape = &st.func.buffers[dst.buffer].shape;
        dst.ranges.iter().zip(shape).all(|(r, &n)| {
            let f = &st.func;
            matches!(
                (f.as_const_int(r.start), f.as_const_int(r.extent), f.as_const_int(n)),
                (Some(a), Some(e), Some(n)) if a >= 0 && a + e <= n
            )
        })
    };
    let dguard = if inside {
        None
    } else {
        in_bounds(st, dst.buffer, &di, span)?
    };
    let mut stmt = Stmt::Store {
        buffer: dst.buffer,
        indices: di,
        value,
    };
    if let Some(cond) = dguard {
        let mut then = Block::new();
        then.push(stmt, span);
        stmt = Stmt::If {
            cond,
            then,
            otherwise: Block::new(),
        };
    }
    st.emit(stmt, span);
    let body = st.pop_block();
    if vars.is_empty() {
        for s in body.stmts {
            st.emit(s, span);
        }
        return Ok(());
    }
    // Per-thread buffers are copied whole by every thread: serial loops.
    let per_thread = matches!(st.func.buffers[dst.buffer].scope, Scope::Local | Scope::Var);
    super::views::emit_element_nest(st, vars, se, body, per_thread, span);
    Ok(())
}

/// The buffer with a safe value that the tile operation `stmt` reads
/// other than through a rewritten load, if any: its out-of-bounds elements
/// would read zero. [`Stager::emit`] records the first in
/// `safe_refusal`; [`finish_kernel`] reports it.
pub(crate) fn unpadded_read(st: &Stager, stmt: &Stmt) -> Option<Handle<ir::Buffer>> {
    let read = match stmt {
        Stmt::Copy { src, .. } => vec![src.buffer],
        Stmt::Gemm { a, b, .. } => vec![a.buffer, b.buffer],
        Stmt::Reduce { src, .. } | Stmt::Cumsum { src, .. } => vec![*src],
        Stmt::AtomicAdd {
            value: ir::AtomicValue::Region(r),
            ..
        } => vec![r.buffer],
        _ => return None,
    };
    read.into_iter().find(|b| st.safe_values.contains_key(b))
}

/// A kernel (or `T.sblock`) opens: no safe values yet, and loads made
/// before this point are not its reads.
pub(crate) fn start_scope(st: &mut Stager) {
    st.safe_mark = st.func.exprs.len();
}

/// A kernel ends: a tile operation that read a buffer with a safe value is
/// an error; the safe values end with the kernel.
pub(crate) fn finish_kernel(st: &mut Stager) -> EResult<()> {
    st.safe_values.clear();
    let Some((b, span)) = st.safe_refusal.take() else {
        return Ok(());
    };
    let name = st.func.buffers[b].name.clone();
    Err(Box::new(
        Diagnostic::error(
            codes::UNSUPPORTED_TILELANG,
            format!(
                "this tile operation reads `{name}`, which has a nonzero `T.annotate_safe_value`"
            ),
            span,
        )
        .with_label("its out-of-bounds elements would read zero")
        .with_note(format!(
            "tilec applies a safe value to element loads of `{name}` and to `T.copy` \
             from it; copy the region into a shared or fragment buffer with `T.copy` \
             first, and use that buffer here"
        )),
    ))
}
