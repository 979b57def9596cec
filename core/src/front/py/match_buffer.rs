//! `T.handle` parameters matched by `T.match_buffer` (TVM's way of typing
//! a pointer parameter):
//!
//! ```python
//! def main(A_ptr: T.handle):
//!     A = T.match_buffer(A_ptr, (16, 16), dtype=T.float32)
//! ```
//!
//! is the kernel `main(A: T.Tensor((16, 16), T.float32))`: the buffer
//! takes the handle's place among the parameters. A handle that no
//! `T.match_buffer` matches is refused (tilec's kernels take tensors).

use super::codes;
use super::eval::{Evaluator, err};
use super::tl::Args;
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::{self, Span};
use std::rc::Rc;

/// A `T.handle` parameter not yet matched.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    name: String,
    /// Its place in the signature.
    position: usize,
    /// Where its buffer goes in `func.params`.
    index: usize,
    span: Span,
}

const PREFIX: &str = "T.handle parameter ";

/// Whether the annotation is the bare `T.handle`.
pub(crate) fn is_handle(ann: &rustpython_ruff_python_ast::Expr) -> bool {
    matches!(ann, rustpython_ruff_python_ast::Expr::Attribute(a)
        if a.attr.as_str() == "handle"
            && matches!(&*a.value, rustpython_ruff_python_ast::Expr::Name(_)))
}

/// Declares the `T.handle` parameter `name`; returns the value it names
/// until matched.
pub(crate) fn declare<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    position: usize,
    span: Span,
) -> EResult<Value<'a>> {
    let st = ev.stager("a kernel parameter", span)?;
    let index = st.func.params.len();
    st.handles.push(Pending {
        name: name.to_string(),
        position,
        index,
        span,
    });
    Ok(Value::Opaque(Rc::from(format!("{PREFIX}{name}"))))
}

/// `T.match_buffer(param, shape, dtype="float32", ...)`.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new(
        "match_buffer",
        &[
            "param",
            "shape",
            "dtype",
            "data",
            "strides",
            "elem_offset",
            "scope",
            "align",
            "offset_factor",
            "buffer_type",
            "axis_separators",
        ],
        args,
        kwargs,
        span,
    )?;
    let name = match a.req(0, "a `T.handle` parameter")? {
        Value::Opaque(s) if s.starts_with(PREFIX) => s[PREFIX.len()..].to_string(),
        other => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "`T.match_buffer` of {} is not supported",
                        other.a_type_name()
                    ),
                    span,
                )
                .with_label("not a `T.handle` parameter")
                .with_note("tilec matches `T.handle` parameters of the kernel function"),
            ));
        }
    };
    // Matched from here on, also when the match is refused below (one
    // error, not a second one for the handle).
    let st = ev.stager("`T.match_buffer`", span)?;
    let Some(k) = st.handles.iter().position(|p| p.name == name) else {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!("the `T.handle` parameter `{name}` is matched twice"),
            span,
        ));
    };
    let p = st.handles.remove(k);
    for q in &mut st.handles {
        if q.index > p.index || (q.index == p.index && q.position > p.position) {
            q.index += 1;
        }
    }
    for (i, what) in [
        (3, "data"),
        (4, "strides"),
        (5, "elem_offset"),
        (10, "axis_separators"),
    ] {
        if a.get(i).is_some() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`T.match_buffer(..., {what}=...)` is not supported"),
                    span,
                )
                .with_label(format!("{what} given here"))
                .with_note("tilec's tensors are dense and row-major from their first element: leave it out"),
            ));
        }
    }
    if let Some(s) = a.get(6)
        && !matches!(s, Value::Str(s) if &**s == "global")
    {
        return Err(err(
            codes::UNSUPPORTED_TILELANG,
            "a `T.match_buffer` parameter must be in global memory",
            span,
        ));
    }
    let shape = a.req(1, "a shape")?.clone();
    let shape = match shape.as_sequence() {
        Some(s) => s,
        None => vec![shape],
    };
    let dtype = match a.get(2) {
        Some(d) => super::tl::dtype_of(d, span)?,
        None => ir::DType::F32,
    };
    let dims = ev.param_shape_exprs(&shape, span)?;
    let st = ev.stager("`T.match_buffer`", span)?;
    if dims.iter().any(|&e| st.reads_memory(e)) {
        return Err(Box::new(
            Diagnostic::error(
                codes::NOT_CONSTANT,
                "the shape of a `T.match_buffer` parameter reads a value of the kernel",
                span,
            )
            .with_label("this shape")
            .with_note(
                "a parameter's extents are integers or symbolic sizes bound from the arguments: \
                 write `n = T.dynamic(\"n\", \"int64\")` (TVM's `n = T.int64()` is a kernel \
                 variable in tilec)",
            ),
        ));
    }
    let b = st.add_buffer(&name, dtype, dims, ir::Scope::Global, span);
    st.unnamed.insert(b);
    st.func.params.insert(p.index, ir::Param { buffer: b });
    Ok(Value::Buffer(b))
}

/// After the body: a `T.handle` that nothing matched is an error.
pub(crate) fn check_matched(st: &super::stage::Stager) -> EResult<()> {
    match st.handles.first() {
        None => Ok(()),
        Some(p) => Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("the `T.handle` parameter `{}` is not matched by `T.match_buffer`", p.name),
                p.span,
            )
            .with_label("an untyped pointer")
            .with_note(format!(
                "tilec's kernels take tensors: match it, `X = T.match_buffer({}, (M, N), dtype)`, or declare the parameter as `T.Tensor((M, N), dtype)`",
                p.name
            )),
        )),
    }
}
