//! Execution of compiled statements: control flow, allocation and scalar
//! stores. Tile operations live in [`super::tile_ops`].

use super::TensorData;
use super::error::{Eval, InterpError, malformed};
use super::expr::{Env, Slot};
use super::program::{Binding, CBlock, Op};
use super::scalar::Scalar;
use super::tensor::element_count;
use super::tile_ops;
use crate::ir::{DType, Scope, Span};

/// The bit pattern that fills the integer elements of a fresh non-global
/// buffer (wrapped to its type), so reads of unwritten data stand out.
pub(crate) const GARBAGE: i64 = 0xDEAD_BEEF_DEAD_BEEF_u64 as i64;

/// The most elements one buffer may have (2^30).
const MAX_ELEMENTS: usize = 1 << 30;

/// Runs the operations of a block in order. An error gets the span of the
/// operation it came from unless a nested one already gave it one.
pub(crate) fn exec_block(env: &mut Env, block: &CBlock) -> Eval<()> {
    for (op, span) in &block.ops {
        exec(env, op).map_err(|e| e.at(*span))?;
    }
    Ok(())
}

pub(crate) fn exec(env: &mut Env, op: &Op) -> Eval<()> {
    env.tick(1)?;
    match op {
        Op::Kernel {
            grid,
            block_vars,
            body,
            roles,
            threads,
        } => {
            let mut dims = Vec::with_capacity(grid.len());
            for g in grid {
                dims.push(g(env)?);
            }
            // An empty (or negative) grid launches no block.
            if dims.iter().any(|&d| d <= 0) {
                return Ok(());
            }
            let total = dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d));
            // Every block takes at least a step: a grid with more blocks
            // than the steps left is refused before its first block.
            let left = env.step_limit.saturating_sub(env.steps);
            if total.is_none_or(|n| n as u64 > left) {
                return Err(Box::new(InterpError::GridTooLarge {
                    blocks: total.map_or(u64::MAX, |n| n as u64),
                    left,
                    limit: env.step_limit,
                    span: Span::UNKNOWN,
                }));
            }
            let total = total.unwrap_or(0);
            // Row-major over the grid with x (the first extent) fastest.
            for linear in 0..total {
                env.tick(1)?;
                let mut rest = linear;
                for (var, &d) in block_vars.iter().zip(&dims) {
                    env.ints[var.index] = var.dtype.wrap_i64(rest % d);
                    rest /= d;
                }
                match roles {
                    Some(plan) => super::roles::exec_block(env, body, plan)?,
                    None => {
                        // Every thread of the block runs what it runs,
                        // and arrives at a barrier with it.
                        env.arrivals = *threads;
                        exec_block(env, body)?;
                    }
                }
            }
            Ok(())
        }
        Op::Alloc {
            buffer,
            dtype,
            scope,
            shape,
            init,
            copies,
        } => {
            alloc(env, *buffer, *dtype, *scope, shape, init.as_ref())?;
            super::guard::alloc_copies(env, *buffer, *copies)
        }
        Op::For {
            var,
            start,
            extent,
            body,
        } => {
            let start = start(env)?;
            let extent = extent(env)?;
            for i in 0..extent.max(0) {
                env.ints[var.index] = var.dtype.wrap_i64(start.wrapping_add(i));
                env.tick(1)?;
                exec_block(env, body)?;
            }
            Ok(())
        }
        Op::Parallel {
            vars,
            extents,
            body,
        } => parallel(env, vars, extents, body),
        Op::If {
            cond,
            then,
            otherwise,
        } => {
            if cond(env)? != 0 {
                exec_block(env, then)
            } else {
                exec_block(env, otherwise)
            }
        }
        Op::ThreadIf(t) => super::guard::exec_thread_if(env, t),
        Op::WarpReduce(w) => super::warp::exec_warp_reduce(env, w),
        Op::ThreadLet => Ok(()),
        Op::Let { var, value } => {
            match value.eval(env)? {
                Scalar::Int(v) => env.ints[*var] = v,
                Scalar::Float(x) => env.floats[*var] = x,
            }
            Ok(())
        }
        Op::Store {
            buffer,
            indices,
            value,
        } => {
            let value = value.eval(env)?;
            let Some(offset) = env.element(*buffer, indices)? else {
                // Outside a global buffer: the store is skipped.
                return Ok(());
            };
            let slot = env.slot_mut(*buffer)?;
            let written = match (&mut slot.data, value) {
                (TensorData::Float(data), Scalar::Float(x)) => data.get_mut(offset).map(|e| *e = x),
                (TensorData::Int(data), Scalar::Int(v)) => data.get_mut(offset).map(|e| *e = v),
                _ => return Err(malformed("stored value does not match the buffer's class")),
            };
            written.ok_or_else(|| malformed("element offset outside the buffer's storage"))
        }
        Op::Copy { src, dst } => tile_ops::copy(env, src, dst),
        Op::Gemm(gemm) => tile_ops::gemm(env, gemm),
        Op::Fill { dst, value } => tile_ops::fill(env, dst, value),
        Op::Reduce {
            kind,
            src,
            dst,
            dim,
            clear,
        } => tile_ops::reduce(env, *kind, *src, *dst, *dim, *clear),
        Op::Cumsum {
            src,
            dst,
            dim,
            reverse,
        } => tile_ops::cumsum(env, *src, *dst, *dim, *reverse),
        Op::AtomicAdd { op, dst, value } => tile_ops::atomic(env, *op, dst, value),
        Op::Barrier => Ok(()),
        Op::AllocBarrier { buffer, counts } => super::roles::alloc_barrier(env, *buffer, counts),
        Op::BarrierArrive { buffer, index } => super::roles::arrive(env, *buffer, index),
        Op::BarrierWait {
            buffer,
            index,
            parity,
        } => {
            if super::roles::wait_passes(env, *buffer, index, parity)? {
                Ok(())
            } else {
                Err(super::roles::deadlock(format!(
                    "a wait on barrier `{}` that nothing else can complete",
                    env.buffer_name(*buffer)
                )))
            }
        }
        // Reached only in a kernel without a role plan, which has no roles.
        Op::Role { .. } => Err(malformed("a role outside a kernel's role region")),
        Op::DeviceAssert { cond } => {
            if cond(env)? == 0 {
                return Err(Box::new(InterpError::DeviceAssertFailed {
                    span: Span::UNKNOWN,
                }));
            }
            Ok(())
        }
        Op::Assume { cond } => {
            if cond(env)? == 0 {
                return Err(Box::new(InterpError::AssumeFailed {
                    span: Span::UNKNOWN,
                }));
            }
            Ok(())
        }
    }
}

/// Runs a parallel nest sequentially, row-major (the last variable fastest).
fn parallel(
    env: &mut Env,
    vars: &[Binding],
    extents: &[super::expr::IntFn],
    body: &CBlock,
) -> Eval<()> {
    let mut ext = Vec::with_capacity(extents.len());
    for e in extents {
        ext.push(e(env)?);
    }
    if ext.iter().any(|&e| e <= 0) {
        return Ok(());
    }
    let mut idx = vec![0i64; ext.len()];
    loop {
        for (var, &i) in vars.iter().zip(&idx) {
            env.ints[var.index] = var.dtype.wrap_i64(i);
        }
        env.tick(1)?;
        exec_block(env, body)?;
        let mut d = idx.len();
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < ext[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Allocates storage for a buffer. Global buffers start zeroed and keep
/// their storage if allocated again with the same shape; other scopes get
/// fresh storage filled with NaN / [`GARBAGE`] (or the `init` value).
fn alloc(
    env: &mut Env,
    buffer: usize,
    dtype: DType,
    scope: Scope,
    shape: &[super::expr::IntFn],
    init: Option<&super::expr::Code>,
) -> Eval<()> {
    let mut extents = Vec::with_capacity(shape.len());
    for (dim, e) in shape.iter().enumerate() {
        let extent = e(env)?;
        let extent = usize::try_from(extent).map_err(|_| {
            Box::new(InterpError::NegativeExtent {
                buffer: env.buffer_name(buffer),
                dim,
                extent,
                span: Span::UNKNOWN,
            })
        })?;
        extents.push(extent);
    }
    let count = element_count(&extents)
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| {
            Box::new(InterpError::TooLarge {
                buffer: env.buffer_name(buffer),
                shape: extents.clone(),
                span: Span::UNKNOWN,
            })
        })?;
    let init = init.map(|code| code.eval(env)).transpose()?;
    let reused = scope == Scope::Global
        && matches!(env.slots.get(buffer), Some(Some(existing)) if existing.shape == extents);
    if !reused {
        let what = format!(
            "allocating `{}` ({count} elements)",
            env.buffer_name(buffer)
        );
        env.check_memory(buffer, count as u64, &what)?;
    }
    if scope == Scope::Global
        && let Some(Some(existing)) = env.slots.get(buffer)
    {
        if existing.shape == extents {
            return Ok(());
        }
        return Err(malformed(format!(
            "global buffer `{}` allocated again with shape {extents:?} (was {:?})",
            env.buffer_name(buffer),
            existing.shape
        )));
    }
    let data = match (init, scope) {
        (Some(Scalar::Float(x)), _) => TensorData::Float(vec![x; count]),
        (Some(Scalar::Int(v)), _) => TensorData::Int(vec![v; count]),
        (None, Scope::Global) if dtype.is_float() => TensorData::Float(vec![0.0; count]),
        (None, Scope::Global) => TensorData::Int(vec![0; count]),
        (None, _) if dtype.is_float() => TensorData::Float(vec![f64::NAN; count]),
        (None, _) => TensorData::Int(vec![dtype.wrap_i64(GARBAGE); count]),
    };
    env.tick(count as u64)?;
    let slot = env
        .slots
        .get_mut(buffer)
        .ok_or_else(|| malformed("buffer index out of range"))?;
    *slot = Some(Slot::new(dtype, scope, extents, data));
    Ok(())
}
