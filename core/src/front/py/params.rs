//! Scalar kernel parameters: `n: T.int32` in a `@T.prim_func` signature (or
//! in the signature of an eager `@tilelang.jit` kernel) is a run-time value
//! the caller passes at launch, as in TileLang.
//!
//! The parameter becomes a symbolic variable of the function recorded as an
//! [`ir::ScalarParam`]; uses in the body read it like any scalar expression
//! (grid extents, loop bounds, conditions, index arithmetic). Only integer
//! dtypes are staged; other scalar types are refused (T0300) rather than
//! passed with a different meaning.

use super::codes;
use super::eval::{Evaluator, span_of};
use super::stage::Stager;
use super::value::{EResult, Scope, Value};
use crate::front::Diagnostic;
use crate::ir::{self, DType, Span, VarKind};
use rustpython_ruff_python_ast as ast;
use std::rc::Rc;

impl<'a> Evaluator<'a> {
    /// Stages the scalar parameter `name: dtype` at signature `position`
    /// and returns the value its name takes in the body.
    pub(crate) fn stage_scalar_param(
        &mut self,
        name: &str,
        dtype: DType,
        position: usize,
        span: Span,
    ) -> EResult<Value<'a>> {
        if !dtype.is_int() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "scalar kernel parameter `{name}` of type `T.{}` is not supported yet",
                        dtype.tilelang_name()
                    ),
                    span,
                )
                .with_label("annotation")
                .with_note(
                    "tilec passes integer scalars (`T.int32`, `T.int64`, ...) at launch; pass other scalars as compile-time builder arguments",
                ),
            ));
        }
        let st = self.stager("a kernel parameter", span)?;
        let var = st.add_var(name, dtype, VarKind::Symbolic);
        st.func.symbols.push(var);
        st.func.scalars.push(ir::ScalarParam {
            var,
            position: u32::try_from(position).unwrap_or(u32::MAX),
        });
        Ok(Value::Expr(st.var(var)))
    }
}

impl Stager {
    /// Puts the scalar parameters after the other symbols, in signature
    /// order (the invariant of [`ir::Function::scalars`]); symbols met in
    /// the body are appended as they appear, after the signature's.
    pub(crate) fn order_scalar_symbols(&mut self) {
        let f = &mut self.func;
        if f.scalars.is_empty() {
            return;
        }
        f.scalars.sort_by_key(|s| s.position);
        let scalars: Vec<_> = f.scalars.iter().map(|s| s.var).collect();
        f.symbols.retain(|s| !scalars.contains(s));
        f.symbols.extend(scalars);
    }
}

/// The index into the buffer parameters of signature position `k`, or
/// `Err` with the name of the scalar parameter at that position.
pub(crate) fn buffer_index(f: &ir::Function, k: usize) -> Result<usize, String> {
    if let Some(s) = f.scalars.iter().find(|s| s.position as usize == k) {
        return Err(f.vars[s.var].name.clone());
    }
    Ok(k - f
        .scalars
        .iter()
        .filter(|s| (s.position as usize) < k)
        .count())
}

impl<'a> Evaluator<'a> {
    /// The parameter `name` of an eager kernel that the call leaves open,
    /// declared by its signature annotation: `A: T.Tensor(shape, dtype)`
    /// is a tensor parameter (as the statement `A: T.Tensor(...)` in the
    /// body would declare it), `n: T.int32` a scalar one at `position`.
    /// `None` when the parameter has no such annotation; it then waits for
    /// an annotation statement in the body.
    pub(crate) fn eager_signature_param(
        &mut self,
        def: &'a ast::StmtFunctionDef,
        name: &str,
        position: usize,
        outer: &Rc<Scope<'a>>,
    ) -> EResult<Option<Value<'a>>> {
        let Some(p) = def
            .parameters
            .iter_non_variadic_params()
            .find(|p| p.parameter.name.id.as_str() == name)
        else {
            return Ok(None);
        };
        let Some(ann) = &p.parameter.annotation else {
            return Ok(None);
        };
        let span = span_of(&**ann);
        // An annotation that is not a TileLang type (`x: torch.Tensor`) says
        // nothing here.
        let Ok(t) = self.eval(ann, outer) else {
            return Ok(None);
        };
        match t {
            Value::TensorType(tt) => {
                let shape = self.param_shape_exprs(&tt.shape, span)?;
                let st = self.stager("a kernel parameter", span)?;
                let b = st.add_buffer(name, tt.dtype, shape, ir::Scope::Global, span_of(p));
                if let Some(e) = st.eager.as_mut() {
                    e.declared.insert(name.to_string(), b);
                }
                Ok(Some(Value::Buffer(b)))
            }
            Value::DType(dtype) => {
                let v = self.stage_scalar_param(name, dtype, position, span)?;
                if let Some(e) = self.stagers.last_mut().and_then(|st| st.eager.as_mut()) {
                    e.scalars.push(name.to_string());
                }
                Ok(Some(v))
            }
            _ => Ok(None),
        }
    }
}
