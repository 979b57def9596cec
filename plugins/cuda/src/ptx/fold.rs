//! Compile-time evaluation of integer and boolean expressions.
//!
//! Used for three things: indices of local arrays (an array whose every
//! index is a constant once unrolled loops have fixed their variables
//! lives in registers), trip counts of loops the emitter unrolls, and
//! operations on immediates during emission. The semantics are thread
//! IR's: integers wrap to their type, `/` truncates, `//` and `%` round
//! toward negative infinity, unsigned types compare and divide as
//! unsigned, shifts by a count outside the type's width give 0 (or −1 for
//! a negative value shifted right). Division by zero does not fold.

use std::collections::HashMap;

use tilec_core::ir::{BinaryOp, DType, DTypeKind, Literal, UnaryOp};
use tilec_core::thread::{Expr, ExprKind, RegId};

use super::value::Imm;

/// The value of `e` if it is a compile-time integer or boolean, with the
/// loop variables in `env` fixed.
pub(crate) fn fold(e: &Expr, env: &HashMap<RegId, i64>) -> Option<Imm> {
    match &e.kind {
        ExprKind::Literal(Literal::Int(v, d)) => Some(Imm::Int(d.wrap_i64(*v))),
        ExprKind::Literal(Literal::Bool(b)) => Some(Imm::Bool(*b)),
        ExprKind::Literal(Literal::Float(..)) => None,
        ExprKind::Reg(r) => env.get(r).map(|&v| Imm::Int(v)),
        ExprKind::Unary(op, a) => unary(*op, a.dtype, fold(a, env)?),
        ExprKind::Binary(op, a, b) => {
            let x = fold(a, env)?;
            let y = fold(b, env)?;
            binary(*op, a.dtype, x, y)
        }
        ExprKind::Cast(a) => cast(fold(a, env)?, e.dtype),
        // An integer read of an integer's bits (floats do not fold).
        ExprKind::Bitcast(a) if a.dtype.is_int() && e.dtype.is_int() => match fold(a, env)? {
            Imm::Int(x) => e
                .dtype
                .from_bits(a.dtype.bits_of(x, 0.0))
                .ok()
                .map(Imm::Int),
            _ => None,
        },
        ExprKind::Bitcast(_) => None,
        ExprKind::Select(c, a, b) => match fold(c, env)? {
            Imm::Bool(true) => fold(a, env),
            Imm::Bool(false) => fold(b, env),
            _ => None,
        },
        ExprKind::Elem(..) | ExprKind::Param(_) | ExprKind::Special(_) => None,
    }
}

/// The integer value of `e`, if it folds to one.
pub(crate) fn fold_int(e: &Expr, env: &HashMap<RegId, i64>) -> Option<i64> {
    match fold(e, env)? {
        Imm::Int(v) => Some(v),
        _ => None,
    }
}

/// A conversion between integer and boolean constants (floats do not
/// fold).
pub(crate) fn cast(v: Imm, to: DType) -> Option<Imm> {
    match (v, to) {
        (Imm::Int(x), DType::Bool) => Some(Imm::Bool(x != 0)),
        (Imm::Bool(b), t) if t.is_int() => Some(Imm::Int(i64::from(b))),
        (Imm::Bool(b), DType::Bool) => Some(Imm::Bool(b)),
        (Imm::Int(x), t) if t.is_int() => Some(Imm::Int(t.wrap_i64(x))),
        _ => None,
    }
}

pub(crate) fn unary(op: UnaryOp, dtype: DType, v: Imm) -> Option<Imm> {
    match v {
        Imm::Bool(b) => match op {
            UnaryOp::Not => Some(Imm::Bool(!b)),
            _ => None,
        },
        Imm::Int(a) => {
            let r = match op {
                UnaryOp::BitNot => !a,
                UnaryOp::Neg => a.wrapping_neg(),
                UnaryOp::Abs if dtype.kind() == DTypeKind::Signed => a.wrapping_abs(),
                UnaryOp::Abs => a,
                _ => return None,
            };
            Some(Imm::Int(dtype.wrap_i64(r)))
        }
        Imm::Float(_) => None,
    }
}

pub(crate) fn binary(op: BinaryOp, dtype: DType, a: Imm, b: Imm) -> Option<Imm> {
    match (a, b) {
        (Imm::Bool(x), Imm::Bool(y)) => bool_binary(op, x, y),
        (Imm::Int(x), Imm::Int(y)) if dtype.is_int() => int_binary(op, dtype, x, y),
        _ => None,
    }
}

fn bool_binary(op: BinaryOp, x: bool, y: bool) -> Option<Imm> {
    Some(Imm::Bool(match op {
        BinaryOp::And | BinaryOp::BitAnd => x && y,
        BinaryOp::Or | BinaryOp::BitOr => x || y,
        BinaryOp::BitXor | BinaryOp::Ne => x != y,
        BinaryOp::Eq => x == y,
        BinaryOp::Lt => !x && y,
        BinaryOp::Le => !x || y,
        BinaryOp::Gt => x && !y,
        BinaryOp::Ge => x || !y,
        _ => return None,
    }))
}

fn int_binary(op: BinaryOp, dtype: DType, x: i64, y: i64) -> Option<Imm> {
    let signed = dtype.kind() == DTypeKind::Signed;
    let (ux, uy) = (x as u64, y as u64);
    let b = |v: bool| Some(Imm::Bool(v));
    let w = |v: i64| Some(Imm::Int(dtype.wrap_i64(v)));
    match op {
        BinaryOp::Eq => b(x == y),
        BinaryOp::Ne => b(x != y),
        BinaryOp::Lt => b(if signed { x < y } else { ux < uy }),
        BinaryOp::Le => b(if signed { x <= y } else { ux <= uy }),
        BinaryOp::Gt => b(if signed { x > y } else { ux > uy }),
        BinaryOp::Ge => b(if signed { x >= y } else { ux >= uy }),
        BinaryOp::Add => w(x.wrapping_add(y)),
        BinaryOp::Sub => w(x.wrapping_sub(y)),
        BinaryOp::Mul => w(x.wrapping_mul(y)),
        BinaryOp::BitAnd => w(x & y),
        BinaryOp::BitOr => w(x | y),
        BinaryOp::BitXor => w(x ^ y),
        BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod if y == 0 => None,
        BinaryOp::Div if signed => w(x.wrapping_div(y)),
        BinaryOp::FloorDiv if signed => {
            let (q, r) = (x.wrapping_div(y), x.wrapping_rem(y));
            w(if r != 0 && ((r < 0) != (y < 0)) {
                q.wrapping_sub(1)
            } else {
                q
            })
        }
        BinaryOp::FloorMod if signed => {
            let r = x.wrapping_rem(y);
            w(if r != 0 && ((r < 0) != (y < 0)) {
                r.wrapping_add(y)
            } else {
                r
            })
        }
        BinaryOp::Div | BinaryOp::FloorDiv => w((ux / uy) as i64),
        BinaryOp::FloorMod => w((ux % uy) as i64),
        BinaryOp::Min if signed => w(x.min(y)),
        BinaryOp::Max if signed => w(x.max(y)),
        BinaryOp::Min => w(ux.min(uy) as i64),
        BinaryOp::Max => w(ux.max(uy) as i64),
        BinaryOp::Shl => {
            let bits = i64::from(dtype.bits());
            if !(0..bits).contains(&y) || (!signed && uy >= bits as u64) {
                w(0)
            } else {
                w(x.wrapping_shl(y as u32))
            }
        }
        BinaryOp::Shr if signed => {
            let bits = i64::from(dtype.bits());
            if !(0..bits).contains(&y) {
                w(if x < 0 { -1 } else { 0 })
            } else {
                w(x >> y)
            }
        }
        BinaryOp::Shr => {
            if uy >= u64::from(dtype.bits()) {
                w(0)
            } else {
                w((ux >> uy) as i64)
            }
        }
        // Powers and logical operators on integers are left to the device.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_operators_follow_thread_ir() {
        let i = |v| Imm::Int(v);
        let d = DType::I32;
        assert_eq!(binary(BinaryOp::FloorDiv, d, i(-7), i(2)), Some(i(-4)));
        assert_eq!(binary(BinaryOp::FloorMod, d, i(-7), i(2)), Some(i(1)));
        assert_eq!(binary(BinaryOp::FloorMod, d, i(7), i(-2)), Some(i(-1)));
        assert_eq!(binary(BinaryOp::Div, d, i(-7), i(2)), Some(i(-3)));
        assert_eq!(binary(BinaryOp::Div, d, i(1), i(0)), None);
        assert_eq!(
            binary(BinaryOp::Add, DType::I8, i(100), i(100)),
            Some(i(-56))
        );
        assert_eq!(binary(BinaryOp::Shl, DType::U8, i(1), i(8)), Some(i(0)));
        assert_eq!(binary(BinaryOp::Shr, d, i(-8), i(40)), Some(i(-1)));
        assert_eq!(
            binary(BinaryOp::Lt, DType::U32, i(4294967295), i(1)),
            Some(Imm::Bool(false))
        );
        assert_eq!(unary(UnaryOp::Neg, DType::U8, i(1)), Some(i(255)));
    }
}
