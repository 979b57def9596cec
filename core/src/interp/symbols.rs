//! Binding symbolic sizes from argument shapes, and the reverse: the shapes
//! of the parameters once the sizes are known.
//!
//! Binding runs in two passes over the parameters. The first binds every
//! extent that is a bare symbolic variable to the matching tensor extent
//! (two arguments that disagree about one symbol are an error). The second
//! evaluates every extent — literals, bare symbols and compound expressions
//! such as `M * 2` alike — with the symbols bound so far and checks it
//! against the tensor. A symbol that appears only inside compound extents
//! cannot be solved for and must be given explicitly.

use super::SymbolValues;
use super::error::InterpError;
use super::expr::{Compiler, Env};
use super::tensor::element_count;
use crate::ir::{Expr, Function, Span, VarKind};

/// Symbol values by variable index, from explicit `values` by name.
fn preset(func: &Function, values: &SymbolValues) -> Result<Vec<Option<i64>>, InterpError> {
    let mut bound = vec![None; func.vars.len()];
    for (name, &value) in values {
        let var = func
            .vars
            .iter()
            .find(|(_, v)| v.kind == VarKind::Symbolic && &v.name == name)
            .map(|(h, _)| h)
            .ok_or_else(|| InterpError::UnknownSymbol { name: name.clone() })?;
        bound[var.index()] = Some(value);
    }
    Ok(bound)
}

/// Binds symbolic sizes from the argument `shapes` (one per parameter),
/// starting from the explicit `values`, and checks every parameter extent.
/// Returns the value of each symbolic variable by variable index.
pub(crate) fn bind(
    func: &Function,
    shapes: &[Vec<usize>],
    values: &SymbolValues,
) -> Result<Vec<Option<i64>>, InterpError> {
    if shapes.len() != func.params.len() {
        return Err(InterpError::ArgCount {
            function: func.name.clone(),
            expected: func.params.len(),
            found: shapes.len(),
        });
    }
    let mut bound = preset(func, values)?;
    // TileLang passes a scalar parameter at launch, even when a shape
    // would tell its value; it must be given.
    for s in &func.scalars {
        if bound.get(s.var.index()).copied().flatten().is_none() {
            let name = func.vars.try_get(s.var).map(|v| v.name.clone());
            return Err(InterpError::UnboundScalar {
                name: name.unwrap_or_default(),
            });
        }
    }
    let malformed = |detail: String| InterpError::Malformed {
        detail,
        span: Span::UNKNOWN,
    };
    // Pass 1: bare symbolic extents bind.
    for (param, shape) in func.params.iter().zip(shapes) {
        let buffer = func.buffers.try_get(param.buffer).ok_or_else(|| {
            malformed(format!(
                "parameter buffer {:?} does not exist",
                param.buffer
            ))
        })?;
        if buffer.shape.len() != shape.len() {
            return Err(InterpError::ArgRank {
                param: buffer.name.clone(),
                expected: buffer.shape.len(),
                found: shape.len(),
            });
        }
        for (&extent, &found) in buffer.shape.iter().zip(shape) {
            let Some(&Expr::Var(var)) = func.exprs.try_get(extent) else {
                continue;
            };
            let Some(v) = func.vars.try_get(var) else {
                continue;
            };
            if v.kind != VarKind::Symbolic {
                continue;
            }
            let found = i64::try_from(found).unwrap_or(i64::MAX);
            let slot = &mut bound[var.index()];
            match *slot {
                Some(first) if first != found => {
                    return Err(InterpError::SymbolConflict {
                        name: v.name.clone(),
                        param: buffer.name.clone(),
                        first,
                        second: found,
                    });
                }
                _ => *slot = Some(found),
            }
        }
    }
    // Pass 2: every extent must evaluate to the tensor's.
    let compiler = Compiler::new(func, &bound);
    let env = Env::new(func, u64::MAX, u64::MAX);
    for (param, shape) in func.params.iter().zip(shapes) {
        let buffer = &func.buffers[param.buffer];
        for (dim, (&extent, &found)) in buffer.shape.iter().zip(shape).enumerate() {
            let expected = compiler.int(extent).map_err(|e| *e)?(&env).map_err(|e| *e)?;
            if i64::try_from(found).ok() != Some(expected) {
                return Err(InterpError::ArgShape {
                    param: buffer.name.clone(),
                    dim,
                    expected,
                    found,
                });
            }
        }
    }
    Ok(bound)
}

/// The bound symbols by name.
pub(crate) fn by_name(func: &Function, bound: &[Option<i64>]) -> SymbolValues {
    func.vars
        .iter()
        .filter(|(_, v)| v.kind == VarKind::Symbolic)
        .filter_map(|(h, v)| Some((v.name.clone(), bound.get(h.index()).copied().flatten()?)))
        .collect()
}

/// The shape of every parameter, given the value of every symbol its
/// extents use.
pub(crate) fn param_shapes(
    func: &Function,
    values: &SymbolValues,
) -> Result<Vec<Vec<usize>>, InterpError> {
    let bound = preset(func, values)?;
    let compiler = Compiler::new(func, &bound);
    let env = Env::new(func, u64::MAX, u64::MAX);
    func.params
        .iter()
        .map(|param| {
            let buffer =
                func.buffers
                    .try_get(param.buffer)
                    .ok_or_else(|| InterpError::Malformed {
                        detail: format!("parameter buffer {:?} does not exist", param.buffer),
                        span: Span::UNKNOWN,
                    })?;
            let span = func
                .buffer_spans
                .get(param.buffer.index())
                .copied()
                .unwrap_or_default();
            let shape = buffer
                .shape
                .iter()
                .enumerate()
                .map(|(dim, &extent)| {
                    let value = compiler.int(extent).map_err(|e| *e)?(&env).map_err(|e| *e)?;
                    usize::try_from(value).map_err(|_| InterpError::NegativeExtent {
                        buffer: buffer.name.clone(),
                        dim,
                        extent: value,
                        span,
                    })
                })
                .collect::<Result<Vec<usize>, InterpError>>()?;
            if element_count(&shape).is_none() {
                return Err(InterpError::TooLarge {
                    buffer: buffer.name.clone(),
                    shape,
                    span,
                });
            }
            Ok(shape)
        })
        .collect()
}
