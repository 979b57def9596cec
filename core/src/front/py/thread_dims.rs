//! Kernels with several thread dimensions (`T.Kernel(..., threads=(x, y))`).
//!
//! tilec's threads form one linear index `x + X·(y + Y·z)`, and
//! `T.get_thread_binding(d)` is that index's part for dimension `d`. Code
//! each thread runs for itself means the same either way. Tile operations
//! do not: TileLang spreads them over the `threadIdx.x` threads only (its
//! layout inference takes the thread range from `threadIdx.x`) and every
//! `threadIdx.y`/`z` slice repeats them, while tilec spreads them over all
//! threads. So a kernel with more than one thread dimension may hold
//! per-thread code only; a tile operation in it is refused at its line.

use super::eval::Evaluator;
use super::stage::Stager;
use super::value::{EResult, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::front::py::codes;
use crate::ir::{self, Block, Scope, Stmt};

/// The index of the executing thread along dimension `d` (0, 1, 2) of the
/// innermost kernel: `tx % X`, `tx // X % Y`, `tx // (X·Y)` of the linear
/// index `tx`, x fastest; 0 along a dimension of extent 1.
pub(crate) fn part<'a>(ev: &mut Evaluator<'a>, d: usize, span: ir::Span) -> EResult<Value<'a>> {
    let tx = Value::Expr(ev.thread_var(span)?);
    let dims = ev
        .stagers
        .last()
        .and_then(|s| s.kernel)
        .map_or([1; 3], |k| k.dims);
    let [nx, ny, nz] = dims.map(i64::from);
    let below = [1, nx, nx * ny][d];
    let own = [nx, ny, nz][d];
    let above = [ny * nz, nz, 1][d];
    if own == 1 {
        return Ok(Value::Int(0));
    }
    let shifted = if below == 1 {
        tx
    } else {
        ev.binop(PyBinOp::FloorDiv, &tx, &Value::Int(below), span)?
    };
    if above == 1 {
        Ok(shifted)
    } else {
        ev.binop(PyBinOp::Mod, &shifted, &Value::Int(own), span)
    }
}

/// Checks the body of a kernel whose thread extents are `dims`.
pub(crate) fn check(st: &Stager, dims: [u32; 3], body: &Block) -> Result<(), Box<Diagnostic>> {
    if dims[1] == 1 && dims[2] == 1 {
        return Ok(());
    }
    walk(st, dims, body)
}

fn walk(st: &Stager, dims: [u32; 3], block: &Block) -> Result<(), Box<Diagnostic>> {
    let per_thread =
        |b: ir::Handle<ir::Buffer>| matches!(st.func.buffers[b].scope, Scope::Local | Scope::Var);
    for (stmt, span) in block.iter() {
        let what = match stmt {
            Stmt::Parallel { vars, body, .. } => {
                if vars.iter().all(|v| st.per_thread_loops.contains(v)) {
                    walk(st, dims, body)?;
                    None
                } else {
                    Some("a `T.Parallel` loop")
                }
            }
            Stmt::Copy { src, dst } if !(per_thread(src.buffer) && per_thread(dst.buffer)) => {
                Some("`T.copy`")
            }
            Stmt::Fill { dst, .. } if !per_thread(dst.buffer) => Some("`T.fill`/`T.clear`"),
            Stmt::AtomicAdd {
                value: ir::AtomicValue::Region(_),
                ..
            } => Some("a region `T.atomic_add`"),
            Stmt::Atomic {
                op,
                value: ir::AtomicValue::Region(_),
                ..
            } => Some(match op {
                ir::AtomicOp::Max => "a region `T.atomic_max`",
                ir::AtomicOp::Min => "a region `T.atomic_min`",
                ir::AtomicOp::Add => "a region `T.atomic_add`",
            }),
            Stmt::Gemm { .. } => Some("`T.gemm`"),
            Stmt::Reduce { .. } => Some("a `T.reduce_*`"),
            Stmt::Cumsum { .. } => Some("`T.cumsum`"),
            Stmt::Role { .. } => Some("a `T.ws` role"),
            Stmt::For { body, .. } => {
                walk(st, dims, body)?;
                None
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                walk(st, dims, then)?;
                walk(st, dims, otherwise)?;
                None
            }
            _ => None,
        };
        if let Some(what) = what {
            let [x, y, z] = dims;
            let shape = if z == 1 {
                format!("({x}, {y})")
            } else {
                format!("({x}, {y}, {z})")
            };
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "{what} in a `T.Kernel` with several thread dimensions (`threads={shape}`) is not supported"
                    ),
                    span,
                )
                .with_label("tile operation")
                .with_note(format!(
                    "TileLang spreads a tile operation over the {x} `threadIdx.x` threads and repeats it for every \
                     `threadIdx.y`/`z`, which tilec does not model; with several thread dimensions write per-thread \
                     code (indices from `T.get_thread_binding(d)`), or give `threads` as one count ({})",
                    u64::from(x) * u64::from(y) * u64::from(z)
                )),
            ));
        }
    }
    Ok(())
}
