//! Placement: which position of the AI core each buffer of a kernel lives
//! in, decided from how the kernel uses it, and sized against the target's
//! capacities.
//!
//! Operands of `T.gemm` live in L1 and accumulators in L0C as long as the
//! kernel only loads the operands from global memory, clears the
//! accumulators and copies them out. A buffer the vector or scalar unit
//! also touches (flash attention's scores, probabilities and output
//! accumulator) lives in UB instead and is **staged** for the cube: on A2
//! the cube and the vector unit are separate cores, and the only path
//! between their buffers is global memory. Such an operand gets an L1
//! copy, refreshed through a GM workspace before each `T.gemm`; such an
//! accumulator gets an L0C tile the `T.gemm` computes into, brought back
//! to UB through the workspace and added there.

use std::collections::BTreeMap;

use tilec_core::ir::{Block, Buffer, DType, Expr, Function, Handle, Scope, Span, Stmt};

use super::Refusal;
use crate::targets::Engine;

/// Where a buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A kernel parameter in global memory.
    Gm,
    /// The unified buffer of the vector unit (TPosition::VECCALC).
    Ub,
    /// L1, as the A operand of the cube (TPosition::A1, NZ fractals).
    L1A,
    /// L1, as the B operand of the cube (TPosition::B1, NZ fractals).
    L1B,
    /// L0C, the cube's accumulator (TPosition::CO1, NZ fractals).
    L0c,
    /// A scalar-unit variable (`var` scope).
    Scalar,
}

impl Place {
    pub fn name(self) -> &'static str {
        match self {
            Place::Gm => "GM",
            Place::Ub => "UB",
            Place::L1A | Place::L1B => "L1",
            Place::L0c => "L0C",
            Place::Scalar => "a scalar register",
        }
    }
}

/// How a UB buffer that is also a `T.gemm` operand or accumulator reaches
/// the cube.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// An operand: copied UB → GM workspace → L1 (ND → NZ) before each
    /// `T.gemm` that reads it; the L1 tile's position (A1 or B1).
    Operand(Place),
    /// An accumulator: each `T.gemm` computes into an L0C tile that goes
    /// L0C → GM workspace → UB and is added to the buffer.
    Accumulator,
}

/// One placed buffer.
#[derive(Clone, Debug)]
pub struct Placed {
    pub place: Place,
    /// For a UB buffer the cube also uses, how it is staged.
    pub stage: Option<Stage>,
    /// Constant extents (on-chip buffers only).
    pub shape: Vec<i64>,
    /// Elements between rows of the last dimension: padded so every row
    /// starts on a 32-byte boundary in UB; the NZ-padded row count in L1
    /// and L0C.
    pub pitch: i64,
    /// Bytes reserved for it.
    pub bytes: u64,
}

/// Rounds `v` up to a multiple of `to`.
pub fn round_up(v: i64, to: i64) -> i64 {
    (v + to - 1) / to * to
}

/// C0: elements of a 32-byte fractal row.
pub fn c0(d: DType) -> i64 {
    32 / d.bytes().max(1) as i64
}

/// The UB row pitch of a last dimension of `cols` elements of `d`.
pub fn ub_pitch(cols: i64, d: DType) -> i64 {
    let per_block = 32 / d.bytes().max(1) as i64;
    round_up(cols.max(1), per_block.max(16))
}

#[derive(Default)]
struct Uses {
    gemm_a: Option<Span>,
    gemm_b: Option<Span>,
    gemm_c: Option<Span>,
    /// Read or written element by element, by a vector instruction, or by
    /// a copy between on-chip buffers.
    element: bool,
    /// The destination of a copy from global memory.
    loaded: bool,
    /// The source of a copy to global memory.
    stored: bool,
}

fn collect(f: &Function, block: &Block, uses: &mut BTreeMap<usize, Uses>) {
    let global = |b: Handle<Buffer>| f.buffers[b].scope == Scope::Global;
    let element = |uses: &mut BTreeMap<usize, Uses>, b: Handle<Buffer>| {
        uses.entry(b.index()).or_default().element = true;
    };
    let loads = |uses: &mut BTreeMap<usize, Uses>, e: Handle<Expr>| {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let Expr::Load { buffer, .. } = &f.exprs[e] {
                uses.entry(buffer.index()).or_default().element = true;
            }
            stack.extend(f.exprs[e].operands());
        }
    };
    for (stmt, span) in block.iter() {
        match stmt {
            Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                uses.entry(a.buffer.index()).or_default().gemm_a = Some(span);
                uses.entry(b.buffer.index()).or_default().gemm_b = Some(span);
                uses.entry(c.buffer.index()).or_default().gemm_c = Some(span);
                loads(uses, *clear_accum);
            }
            Stmt::Copy { src, dst } => match (global(src.buffer), global(dst.buffer)) {
                (true, false) => uses.entry(dst.buffer.index()).or_default().loaded = true,
                (false, true) => uses.entry(src.buffer.index()).or_default().stored = true,
                (false, false) => {
                    element(uses, src.buffer);
                    element(uses, dst.buffer);
                }
                (true, true) => {}
            },
            Stmt::Fill { dst, value } => {
                let zero = f.as_literal(*value).is_some_and(|l| l.as_f64() == 0.0);
                let whole = f.const_shape(dst.buffer).is_some_and(|shape| {
                    dst.ranges.len() == shape.len()
                        && dst.ranges.iter().zip(&shape).all(|(r, &n)| {
                            f.as_const_int(r.start) == Some(0)
                                && f.as_const_int(r.extent) == Some(n)
                        })
                });
                if !(zero && whole) {
                    element(uses, dst.buffer);
                }
                loads(uses, *value);
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            }
            | Stmt::WarpReduce {
                buffer,
                indices,
                value,
                ..
            } => {
                element(uses, *buffer);
                for &i in indices {
                    loads(uses, i);
                }
                loads(uses, *value);
            }
            Stmt::Let { value, .. } => loads(uses, *value),
            Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
                element(uses, *src);
                element(uses, *dst);
            }
            Stmt::AtomicAdd { dst, .. } | Stmt::Atomic { dst, .. } => element(uses, dst.buffer),
            Stmt::Kernel { body, .. } => collect(f, body, uses),
            Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                loads(uses, *start);
                loads(uses, *extent);
                collect(f, body, uses);
            }
            Stmt::Parallel { extents, body, .. } => {
                for &e in extents {
                    loads(uses, e);
                }
                collect(f, body, uses);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                loads(uses, *cond);
                collect(f, then, uses);
                collect(f, otherwise, uses);
            }
            Stmt::Alloc { init, .. } => {
                if let Some(e) = init {
                    loads(uses, *e);
                }
            }
            Stmt::Role { body, .. } => collect(f, body, uses),
            Stmt::DeviceAssert { cond } => loads(uses, *cond),
            Stmt::Assume { .. }
            | Stmt::Barrier
            | Stmt::AllocBarrier { .. }
            | Stmt::BarrierArrive { .. }
            | Stmt::BarrierWait { .. } => {}
        }
    }
}

fn allocs(block: &Block, out: &mut Vec<(Handle<Buffer>, Span)>) {
    for (stmt, span) in block.iter() {
        match stmt {
            Stmt::Alloc { buffer, .. } => out.push((*buffer, span)),
            Stmt::Kernel { body, .. } | Stmt::For { body, .. } | Stmt::Parallel { body, .. } => {
                allocs(body, out)
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                allocs(then, out);
                allocs(otherwise, out);
            }
            _ => {}
        }
    }
}

/// Places every buffer allocated in `body` (a kernel's body).
pub fn place(
    f: &Function,
    body: &Block,
    engine: &Engine,
) -> Result<BTreeMap<usize, Placed>, Refusal> {
    let mut uses = BTreeMap::new();
    collect(f, body, &mut uses);
    let mut list = Vec::new();
    allocs(body, &mut list);
    let mut out = BTreeMap::new();
    let mut used = [0u64; 3]; // UB, L1, L0C
    for (h, span) in list {
        let b = &f.buffers[h];
        if b.scope == Scope::Global {
            return Err(Refusal::unsupported(
                span,
                format!(
                    "global scratch buffer `{}` inside a kernel: the Ascend backend takes global memory only as kernel parameters",
                    b.name
                ),
            ));
        }
        let shape = f.const_shape(h).ok_or_else(|| {
            Refusal::unsupported(
                span,
                format!(
                    "buffer `{}` has a size known only at launch; on-chip buffers of the Ascend backend need constant shapes",
                    b.name
                ),
            )
        })?;
        let u = uses.remove(&h.index()).unwrap_or_default();
        let roles = [u.gemm_a, u.gemm_b, u.gemm_c]
            .iter()
            .filter(|s| s.is_some())
            .count();
        if roles > 1 {
            return Err(Refusal::unsupported(
                span,
                format!(
                    "buffer `{}` is used in two roles of `T.gemm` (operand and accumulator, or A and B)",
                    b.name
                ),
            ));
        }
        let bytes_of = |n: i64| u64::try_from(n).unwrap_or(0) * b.dtype.bytes();
        let two_d = |what: &str| {
            if shape.len() == 2 {
                Ok(())
            } else {
                Err(Refusal::unsupported(
                    span,
                    format!("{what} `{}` must be two-dimensional", b.name),
                ))
            }
        };
        let operand = u.gemm_a.is_some() || u.gemm_b.is_some();
        let stage = if b.scope == Scope::Var {
            None
        } else if operand && (u.element || u.stored) {
            Some(Stage::Operand(if u.gemm_a.is_some() {
                Place::L1A
            } else {
                Place::L1B
            }))
        } else if u.gemm_c.is_some() && (u.element || u.loaded) {
            Some(Stage::Accumulator)
        } else {
            None
        };
        // Bytes a staged buffer needs on the cube's side: (slot, bytes).
        let mut cube_copy = None;
        let (place, pitch, bytes) = if b.scope == Scope::Var {
            (Place::Scalar, 1, 0)
        } else if operand && stage.is_none() {
            two_d("cube operand")?;
            let rows = round_up(shape[0], 16);
            let cols = round_up(shape[1], c0(b.dtype).max(16));
            let place = if u.gemm_a.is_some() {
                Place::L1A
            } else {
                Place::L1B
            };
            (place, rows, bytes_of(rows * cols))
        } else if u.gemm_c.is_some() && stage.is_none() {
            two_d("accumulator")?;
            let rows = round_up(shape[0], 16);
            let cols = round_up(shape[1], 16);
            (Place::L0c, rows, bytes_of(rows * cols))
        } else {
            match stage {
                Some(Stage::Operand(_)) => {
                    two_d("cube operand")?;
                    let rows = round_up(shape[0], 16);
                    let cols = round_up(shape[1], c0(b.dtype).max(16));
                    cube_copy = Some((1, bytes_of(rows * cols)));
                }
                Some(Stage::Accumulator) => {
                    two_d("accumulator")?;
                    let rows = round_up(shape[0], 16);
                    let cols = round_up(shape[1], 16);
                    cube_copy = Some((2, bytes_of(rows * cols)));
                }
                None => {}
            }
            let last = shape.last().copied().unwrap_or(1);
            let pitch = ub_pitch(last, b.dtype);
            let rows: i64 = shape[..shape.len().saturating_sub(1)].iter().product();
            (Place::Ub, pitch, bytes_of(rows.max(1) * pitch))
        };
        let slot = match place {
            Place::Ub => Some(0),
            Place::L1A | Place::L1B => Some(1),
            Place::L0c => Some(2),
            _ => None,
        };
        for (slot, bytes) in slot.map(|s| (s, bytes)).into_iter().chain(cube_copy) {
            let (space, what) = match slot {
                0 => (engine.ub, "UB"),
                1 => (engine.l1, "L1"),
                _ => (engine.l0c, "L0C"),
            };
            let align = space.alignment.max(32);
            used[slot] += bytes.div_ceil(align) * align;
            if used[slot] > space.capacity {
                return Err(Refusal::unsupported(
                    span,
                    format!(
                        "buffer `{}` ({bytes} bytes) does not fit: the kernel's {what} buffers need {} bytes, the target has {}",
                        b.name, used[slot], space.capacity
                    ),
                ));
            }
        }
        out.insert(
            h.index(),
            Placed {
                place,
                stage,
                shape,
                pitch,
                bytes,
            },
        );
    }
    Ok(out)
}
