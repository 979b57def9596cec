//! Placement: which position of the AI core each buffer of a kernel lives
//! in, decided from how the kernel uses it, and sized against the target's
//! capacities.

use std::collections::BTreeMap;

use tilec_core::ir::{Block, Buffer, DType, Function, Handle, Scope, Span, Stmt};

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

/// One placed buffer.
#[derive(Clone, Debug)]
pub struct Placed {
    pub place: Place,
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
}

fn collect(block: &Block, uses: &mut BTreeMap<usize, Uses>) {
    for (stmt, span) in block.iter() {
        match stmt {
            Stmt::Gemm { a, b, c, .. } => {
                uses.entry(a.buffer.index()).or_default().gemm_a = Some(span);
                uses.entry(b.buffer.index()).or_default().gemm_b = Some(span);
                uses.entry(c.buffer.index()).or_default().gemm_c = Some(span);
            }
            Stmt::Kernel { body, .. } | Stmt::For { body, .. } | Stmt::Parallel { body, .. } => {
                collect(body, uses)
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                collect(then, uses);
                collect(otherwise, uses);
            }
            _ => {}
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
    collect(body, &mut uses);
    let mut list = Vec::new();
    allocs(body, &mut list);
    let mut out = BTreeMap::new();
    let mut used = [0u64; 4]; // UB, L1, L0C, (unused)
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
        let (place, pitch, bytes) = if b.scope == Scope::Var {
            (Place::Scalar, 1, 0)
        } else if u.gemm_a.is_some() || u.gemm_b.is_some() {
            if shape.len() != 2 {
                return Err(Refusal::unsupported(
                    span,
                    format!("cube operand `{}` must be two-dimensional", b.name),
                ));
            }
            let rows = round_up(shape[0], 16);
            let cols = round_up(shape[1], c0(b.dtype).max(16));
            let place = if u.gemm_a.is_some() {
                Place::L1A
            } else {
                Place::L1B
            };
            (place, rows, bytes_of(rows * cols))
        } else if u.gemm_c.is_some() {
            if shape.len() != 2 {
                return Err(Refusal::unsupported(
                    span,
                    format!("accumulator `{}` must be two-dimensional", b.name),
                ));
            }
            let rows = round_up(shape[0], 16);
            let cols = round_up(shape[1], 16);
            (Place::L0c, rows, bytes_of(rows * cols))
        } else {
            let last = shape.last().copied().unwrap_or(1);
            let pitch = ub_pitch(last, b.dtype);
            let rows: i64 = shape[..shape.len().saturating_sub(1)].iter().product();
            (Place::Ub, pitch, bytes_of(rows.max(1) * pitch))
        };
        let (slot, space, what) = match place {
            Place::Ub => (0, engine.ub, "UB"),
            Place::L1A | Place::L1B => (1, engine.l1, "L1"),
            Place::L0c => (2, engine.l0c, "L0C"),
            _ => (3, engine.ub, ""),
        };
        if slot < 3 {
            let rounded = bytes.div_ceil(space.alignment.max(32)) * space.alignment.max(32);
            used[slot] += rounded;
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
                shape,
                pitch,
                bytes,
            },
        );
    }
    Ok(out)
}
