//! Warp reductions (`Stmt::WarpReduce`, TileLang's `T.warp_reduce_sum`,
//! ...).
//!
//! Every thread of the block evaluates the value, with its own copies of
//! the per-thread buffers and the `let`s computed from the thread index;
//! then each group of 32 consecutive threads runs TileLang's butterfly
//! lane by lane: at each step (lane distance 16, 8, 4, 2, 1) lane `l`
//! replaces its value by `op(own, lane l ^ d's)`, so every lane ends with
//! the same association TileLang's shuffles give it, rounding floats to
//! their type after every step. Finally each thread stores its result.

use super::TensorData;
use super::error::{Eval, malformed, unsupported};
use super::expr::{Code, Compiler, Env, IntFn};
use super::program::Op;
use super::scalar::{Scalar, nan_max, nan_min};
use crate::ir::{DType, DTypeKind, Expr, Handle, ReduceKind, WARP_REDUCE_LANES};

/// A compiled warp reduction.
pub(crate) struct WarpReduceOp {
    tx: usize,
    threads: i64,
    lets: Vec<(usize, Code)>,
    kind: ReduceKind,
    dtype: DType,
    buffer: usize,
    indices: Vec<IntFn>,
    value: Code,
}

impl Compiler<'_> {
    /// Compiles a warp reduction met in the block's own code.
    pub(crate) fn warp_reduce(
        &self,
        kind: ReduceKind,
        buffer: Handle<crate::ir::Buffer>,
        indices: &[Handle<Expr>],
        value: Handle<Expr>,
    ) -> Eval<Op> {
        let Some((tv, threads)) = self.thread.get() else {
            return Err(malformed("a warp reduction outside a kernel"));
        };
        if self.per_thread.get() {
            return Err(unsupported(
                "a warp reduction in code that runs per thread (under an `if` or a loop whose \
                 condition or bounds read the thread index): TileLang's warp reductions need \
                 every lane of the warp to reach them together",
            ));
        }
        if threads % WARP_REDUCE_LANES != 0 {
            return Err(unsupported(format!(
                "a warp reduction in a block of {threads} threads, not a multiple of \
                 {WARP_REDUCE_LANES} (the last warp would be partial)"
            )));
        }
        if !self.private.borrow().contains(&buffer.index()) {
            return Err(unsupported(
                "a warp reduction into a buffer the reference interpreter does not keep per thread",
            ));
        }
        let dtype = self.buffer(buffer)?.dtype;
        let (lets, (indices, value)) = self.per_thread_code(|| {
            Ok((
                self.indices(buffer, indices)?,
                self.converted(value, dtype)?,
            ))
        })?;
        Ok(Op::WarpReduce(Box::new(WarpReduceOp {
            tx: tv.index(),
            threads: i64::from(threads),
            lets,
            kind,
            dtype,
            buffer: buffer.index(),
            indices,
            value,
        })))
    }
}

/// One butterfly step of `kind` on `dtype`: the caller's value `a` with
/// its partner's `b`, as TileLang's reduction operators compute it.
fn combine(kind: ReduceKind, dtype: DType, a: Scalar, b: Scalar) -> Eval<Scalar> {
    Ok(match (a, b) {
        (Scalar::Float(a), Scalar::Float(b)) => Scalar::Float(match kind {
            ReduceKind::Sum => dtype.round_f64(a + b),
            // f64 has TileLang's generic `a < b ? b : a`.
            ReduceKind::Max if dtype == DType::F64 => {
                if a < b {
                    b
                } else {
                    a
                }
            }
            ReduceKind::Min if dtype == DType::F64 => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            // `fmaxf` / `__hmax`: a NaN operand gives the other.
            ReduceKind::Max if a.is_nan() => b,
            ReduceKind::Max if b.is_nan() => a,
            ReduceKind::Max => nan_max(a, b),
            ReduceKind::Min if a.is_nan() => b,
            ReduceKind::Min if b.is_nan() => a,
            ReduceKind::Min => nan_min(a, b),
            _ => {
                return Err(malformed(format!(
                    "warp reduction `{}` of floats",
                    kind.name()
                )));
            }
        }),
        (Scalar::Int(a), Scalar::Int(b)) => {
            let unsigned = dtype.kind() != DTypeKind::Signed;
            let less = |x: i64, y: i64| {
                if unsigned {
                    (x as u64) < (y as u64)
                } else {
                    x < y
                }
            };
            Scalar::Int(match kind {
                ReduceKind::Sum => dtype.wrap_i64(a.wrapping_add(b)),
                ReduceKind::Max => {
                    if less(a, b) {
                        b
                    } else {
                        a
                    }
                }
                ReduceKind::Min => {
                    if less(b, a) {
                        b
                    } else {
                        a
                    }
                }
                ReduceKind::BitAnd => a & b,
                ReduceKind::BitOr => a | b,
                _ => {
                    return Err(malformed(format!(
                        "warp reduction `{}` of integers",
                        kind.name()
                    )));
                }
            })
        }
        _ => return Err(malformed("warp reduction of mixed value classes")),
    })
}

/// Runs a warp reduction (module documentation).
pub(crate) fn exec_warp_reduce(env: &mut Env, w: &WarpReduceOp) -> Eval<()> {
    let saved = env.ints[w.tx];
    let mut vals = Vec::with_capacity(w.threads.max(0) as usize);
    for i in 0..w.threads {
        super::guard::swap_copies(env, i);
        let v = super::guard::bind_thread(env, w.tx, &w.lets, i)
            .and_then(|()| env.tick(1))
            .and_then(|()| w.value.eval(env));
        super::guard::swap_copies(env, i);
        vals.push(v?);
    }
    let mut dist = WARP_REDUCE_LANES as usize / 2;
    while dist > 0 {
        let prev = vals.clone();
        for (l, v) in vals.iter_mut().enumerate() {
            let partner = prev
                .get(l ^ dist)
                .copied()
                .ok_or_else(|| malformed("a warp reduction in a block with a partial warp"))?;
            *v = combine(w.kind, w.dtype, prev[l], partner)?;
        }
        dist /= 2;
    }
    for (i, v) in (0..w.threads).zip(vals) {
        super::guard::swap_copies(env, i);
        let stored = super::guard::bind_thread(env, w.tx, &w.lets, i).and_then(|()| {
            let Some(offset) = env.element(w.buffer, &w.indices)? else {
                return Ok(());
            };
            let slot = env.slot_mut(w.buffer)?;
            let written = match (&mut slot.data, v) {
                (TensorData::Float(data), Scalar::Float(x)) => data.get_mut(offset).map(|e| *e = x),
                (TensorData::Int(data), Scalar::Int(x)) => data.get_mut(offset).map(|e| *e = x),
                _ => return Err(malformed("stored value does not match the buffer's class")),
            };
            written.ok_or_else(|| malformed("element offset outside the buffer's storage"))
        });
        super::guard::swap_copies(env, i);
        stored?;
    }
    env.ints[w.tx] = saved;
    Ok(())
}
