//! `T.Layout` over more elements than its function is called for one by
//! one (`tl::layout_map` calls it at every index of small shapes).
//!
//! TileLang calls a layout's function once, with a variable per index,
//! and keeps the expressions it returns. A large layout is read the same
//! way: the function is staged once with placeholder indices
//! ([`tl::symbolic_coords`]), each coordinate it returns must be integer
//! arithmetic of them, and those index maps are evaluated natively at
//! every index (`layout::EXHAUSTIVE_LIMIT` elements at most) to find each
//! coordinate's extent and the offsets, checked one-to-one. A function
//! with no such form (it branches on its indices, calls what has no
//! index-map form) is refused: enumerating it through the evaluator would
//! cost a Python call per element.

use std::rc::Rc;

use super::codes;
use super::eval::{Evaluator, err};
use super::tl;
use super::value::{EResult, LayoutKind, LayoutSpec, Value};
use crate::ir::Span;
use crate::layout::{EXHAUSTIVE_LIMIT, IndexMap};

/// The `T.Layout` of shape `dims` (more elements than the evaluator calls
/// the function for) whose function is `f`.
pub(super) fn layout<'a>(
    ev: &mut Evaluator<'a>,
    f: &Value<'a>,
    dims: Vec<i64>,
    span: Span,
) -> EResult<Value<'a>> {
    let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    let size = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if size.is_none_or(|s| s > EXHAUSTIVE_LIMIT) {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!(
                "a `T.Layout` of shape {dims:?} has more than {EXHAUSTIVE_LIMIT} elements, \
                 too many to check that it is one-to-one"
            ),
            span,
        ));
    }
    let Some(coords) = tl::symbolic_coords(ev, f, &dims, span).filter(|c| !c.is_empty()) else {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!(
                "the function of a `T.Layout` of shape {dims:?} (more than 65536 elements) must \
                 return integer arithmetic of its indices (`+ - * // % & | ^ << >>`, `min`, \
                 `max`), without branching on them"
            ),
            span,
        ));
    };
    // Each coordinate's extent: one more than its largest value.
    let mut extents = vec![0u64; coords.len()];
    let mut index = vec![0i64; dims.len()];
    let bad = |index: &[i64]| {
        err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "the function of `T.Layout` must map every index to non-negative integers; \
                 it does not for index {index:?}"
            ),
            span,
        )
    };
    for linear in 0..size.unwrap_or(0) {
        let mut rest = linear;
        for (c, &d) in index.iter_mut().zip(&shape).rev() {
            *c = (rest % d) as i64;
            rest /= d;
        }
        for (coord, extent) in coords.iter().zip(extents.iter_mut()) {
            let v = coord
                .eval(&index)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| bad(&index))?;
            *extent = (*extent).max(v + 1);
        }
    }
    let too_wide = || {
        err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "the places the function of `T.Layout` gives span more than 2^63 elements \
                 (extents {extents:?})"
            ),
            span,
        )
    };
    extents
        .iter()
        .try_fold(1i64, |a, &e| a.checked_mul(i64::try_from(e).ok()?))
        .ok_or_else(too_wide)?;
    let map: IndexMap = tl::row_major_map(coords, &extents).ok_or_else(too_wide)?;
    // The offsets (fit: every coordinate lies below its extent, and
    // the extents' product fits); one-to-one is checked where the layout
    // annotates a buffer, as for small layouts.
    let mut offsets = Vec::with_capacity(size.unwrap_or(0) as usize);
    for linear in 0..size.unwrap_or(0) {
        let mut rest = linear;
        for (c, &d) in index.iter_mut().zip(&shape).rev() {
            *c = (rest % d) as i64;
            rest /= d;
        }
        let o = map
            .eval(&index)
            .and_then(|o| u64::try_from(o).ok())
            .ok_or_else(too_wide)?;
        offsets.push(o);
    }
    let offsets: Rc<[u64]> = offsets.into();
    Ok(Value::Layout(Rc::new(LayoutSpec {
        buffer: None,
        kind: LayoutKind::Map {
            shape: dims,
            offsets,
            map: Some(map),
        },
        span,
    })))
}

/// The layout a `T.annotate_layout` gives global `buffer`: TileLang
/// addresses the buffer's memory through it, element `(i0, i1, ...)` at
/// offset `MAP(i0, i1, ...)` of the tensor the caller passes, so it must
/// be a rearrangement of that tensor's elements (one-to-one onto its
/// offsets) written as integer arithmetic of the indices. `None` when it
/// keeps every element in place (nothing to follow). Anything else is an
/// error: a global layout that is not followed changes the answer.
pub(super) fn global_layout(
    st: &crate::front::py::stage::Stager,
    buffer: crate::ir::Handle<crate::ir::Buffer>,
    spec: &LayoutSpec,
) -> EResult<Option<crate::ir::BufferLayout>> {
    let name = st.func.buffers[buffer].name.clone();
    let refuse = |what: String, label: &str| {
        Box::new(
            crate::front::Diagnostic::error(codes::BAD_TILELANG_ARGUMENT, what, spec.span)
                .with_label(label.to_string())
                .with_note(
                    "a layout on a global buffer rearranges the caller's tensor: tilec follows \
                     a `T.Layout` whose function is integer arithmetic of the indices and \
                     which places every element of the tensor exactly once",
                ),
        )
    };
    let (shape, offsets, map) = match &spec.kind {
        LayoutKind::Map {
            shape,
            offsets,
            map,
        } => (shape, offsets, map),
        LayoutKind::Linear => return Ok(None),
        _ => {
            return Err(refuse(
                format!("`{name}` is a global buffer; this layout is for shared memory"),
                "a shared-memory layout",
            ));
        }
    };
    if st.const_shape_of(buffer).as_ref() != Some(shape) {
        return Err(refuse(
            format!("a `T.Layout` of shape {shape:?} annotates `{name}`, whose shape differs"),
            "this layout",
        ));
    }
    let n = offsets.len();
    let mut hit = vec![false; n];
    for &o in offsets.iter() {
        match usize::try_from(o).ok().and_then(|o| hit.get_mut(o)) {
            Some(h) if !*h => *h = true,
            _ => {
                return Err(refuse(
                    format!(
                        "this `T.Layout` of global `{name}` does not place each of its {n} \
                         elements at a distinct offset below {n}"
                    ),
                    "not a rearrangement of the tensor",
                ));
            }
        }
    }
    if offsets.iter().enumerate().all(|(k, &o)| o == k as u64) {
        return Ok(None);
    }
    match map {
        Some(map) if n <= i32::MAX as usize => {
            Ok(Some(crate::ir::BufferLayout::Mapped { map: map.clone() }))
        }
        _ => Err(refuse(
            format!(
                "this `T.Layout` of global `{name}` is not integer arithmetic of the indices \
                 (`+ - * // % & | ^ << >>`, `min`, `max`)"
            ),
            "its function has no index-map form",
        )),
    }
}
