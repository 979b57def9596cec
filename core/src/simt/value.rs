//! Scalar values and what each operator does to them.
//!
//! Values are stored as the reference interpreter stores them
//! (`crate::interp`): floats as `f64` already rounded to their type,
//! integers and bools as `i64` wrapped to their type (`u64` keeps its bit
//! pattern). The operator semantics are the reference interpreter's,
//! written out again here because that module keeps its helpers private:
//! integer arithmetic wraps; `/` truncates toward zero, `//` and `%` round
//! toward negative infinity (Python); division by zero is an error; shifts
//! by a count outside `0 .. bits` give 0 (or -1 for a negative value shifted
//! right); unsigned types compare and divide as `u64`; float arithmetic is
//! done in `f64` and rounded once into the result type; `min`/`max`
//! propagate NaN; casts round to nearest even, truncate toward zero (NaN →
//! 0) and wrap.

use crate::ir::{BinaryOp, DType, DTypeKind, UnaryOp};

/// One scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Val {
    F(f64),
    I(i64),
}

/// An operator failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpFault {
    DivisionByZero,
}

impl Val {
    /// The value as `f64` (integers by value; `u64` unsigned).
    pub fn as_f64(self, dtype: DType) -> f64 {
        match self {
            Val::F(x) => x,
            Val::I(v) if dtype == DType::U64 => v as u64 as f64,
            Val::I(v) => v as f64,
        }
    }

    /// The value as an integer (floats truncate).
    pub fn as_i64(self) -> i64 {
        match self {
            Val::I(v) => v,
            Val::F(x) => x as i64,
        }
    }

    pub fn is_true(self) -> bool {
        match self {
            Val::I(v) => v != 0,
            Val::F(x) => x != 0.0 && !x.is_nan(),
        }
    }

    /// Bitwise identity (so NaN equals the same NaN).
    pub fn same_bits(self, other: Val) -> bool {
        match (self, other) {
            (Val::F(a), Val::F(b)) => a.to_bits() == b.to_bits(),
            (Val::I(a), Val::I(b)) => a == b,
            _ => false,
        }
    }

    pub fn zero(dtype: DType) -> Val {
        if dtype.is_float() {
            Val::F(0.0)
        } else {
            Val::I(0)
        }
    }

    /// What uninitialized storage holds: NaN, or `0xDEADBEEFDEADBEEF`
    /// wrapped to the type.
    pub fn poison(dtype: DType) -> Val {
        if dtype.is_float() {
            Val::F(f64::NAN)
        } else {
            Val::I(dtype.wrap_i64(0xDEAD_BEEF_DEAD_BEEF_u64 as i64))
        }
    }

    pub fn bool(b: bool) -> Val {
        Val::I(i64::from(b))
    }
}

/// `cast<to>(v)` for a value of type `from`.
pub(crate) fn cast(v: Val, from: DType, to: DType) -> Val {
    if to.is_float() {
        Val::F(to.round_f64(v.as_f64(from)))
    } else {
        match v {
            Val::I(i) => Val::I(to.wrap_i64(i)),
            Val::F(x) => Val::I(to.round_f64(x) as i64),
        }
    }
}

/// `bitcast<to>(v)` for a value of type `from` (same width): the value of
/// `to` with `v`'s bit pattern.
pub(crate) fn bitcast(v: Val, from: DType, to: DType) -> Val {
    let bits = match v {
        Val::I(i) => from.bits_of(i, 0.0),
        Val::F(x) => from.bits_of(0, x),
    };
    match to.from_bits(bits) {
        Ok(i) => Val::I(i),
        Err(x) => Val::F(x),
    }
}

/// A unary operator on a value of type `dtype` (the operand's type).
pub(crate) fn unary(op: UnaryOp, dtype: DType, v: Val) -> Val {
    match v {
        Val::F(x) => {
            let r = match op {
                UnaryOp::IsNan => return Val::bool(x.is_nan()),
                UnaryOp::IsInf => return Val::bool(x.is_infinite()),
                UnaryOp::Neg => -x,
                UnaryOp::Abs => x.abs(),
                UnaryOp::Exp => x.exp(),
                UnaryOp::Exp2 => x.exp2(),
                UnaryOp::Log => x.ln(),
                UnaryOp::Log2 => x.log2(),
                UnaryOp::Sqrt => x.sqrt(),
                UnaryOp::Rsqrt => 1.0 / x.sqrt(),
                UnaryOp::Sigmoid => 1.0 / (1.0 + (-x).exp()),
                UnaryOp::Tanh => x.tanh(),
                UnaryOp::Sin => x.sin(),
                UnaryOp::Cos => x.cos(),
                UnaryOp::Floor => x.floor(),
                UnaryOp::Ceil => x.ceil(),
                UnaryOp::Round => x.round_ties_even(),
                UnaryOp::Not | UnaryOp::BitNot => x,
            };
            Val::F(dtype.round_f64(r))
        }
        Val::I(a) => Val::I(match op {
            UnaryOp::Not => i64::from(a == 0),
            UnaryOp::BitNot => dtype.wrap_i64(!a),
            UnaryOp::Neg => dtype.wrap_i64(a.wrapping_neg()),
            UnaryOp::Abs if dtype.kind() == DTypeKind::Signed => dtype.wrap_i64(a.wrapping_abs()),
            _ => a,
        }),
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

/// A non-logical binary operator on two values of type `dtype`.
pub(crate) fn binary(op: BinaryOp, dtype: DType, a: Val, b: Val) -> Result<Val, OpFault> {
    if dtype.is_float() {
        let (x, y) = (a.as_f64(dtype), b.as_f64(dtype));
        let r = match op {
            BinaryOp::Eq => return Ok(Val::bool(x == y)),
            BinaryOp::Ne => return Ok(Val::bool(x != y)),
            BinaryOp::Lt => return Ok(Val::bool(x < y)),
            BinaryOp::Le => return Ok(Val::bool(x <= y)),
            BinaryOp::Gt => return Ok(Val::bool(x > y)),
            BinaryOp::Ge => return Ok(Val::bool(x >= y)),
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div => x / y,
            BinaryOp::FloorDiv => (x / y).floor(),
            BinaryOp::FloorMod => x - (x / y).floor() * y,
            BinaryOp::Min => nan_min(x, y),
            BinaryOp::Max => nan_max(x, y),
            BinaryOp::Pow => x.powf(y),
            // Logical and bitwise operators do not take floats (verified).
            _ => x,
        };
        return Ok(Val::F(dtype.round_f64(r)));
    }
    let (x, y) = (a.as_i64(), b.as_i64());
    let signed = dtype.kind() == DTypeKind::Signed;
    let (ux, uy) = (x as u64, y as u64);
    let w = |v: i64| Ok(Val::I(dtype.wrap_i64(v)));
    match op {
        BinaryOp::Eq => Ok(Val::bool(x == y)),
        BinaryOp::Ne => Ok(Val::bool(x != y)),
        BinaryOp::Lt => Ok(Val::bool(if signed { x < y } else { ux < uy })),
        BinaryOp::Le => Ok(Val::bool(if signed { x <= y } else { ux <= uy })),
        BinaryOp::Gt => Ok(Val::bool(if signed { x > y } else { ux > uy })),
        BinaryOp::Ge => Ok(Val::bool(if signed { x >= y } else { ux >= uy })),
        BinaryOp::And => Ok(Val::bool(x != 0 && y != 0)),
        BinaryOp::Or => Ok(Val::bool(x != 0 || y != 0)),
        BinaryOp::Add => w(x.wrapping_add(y)),
        BinaryOp::Sub => w(x.wrapping_sub(y)),
        BinaryOp::Mul => w(x.wrapping_mul(y)),
        BinaryOp::BitAnd => w(x & y),
        BinaryOp::BitOr => w(x | y),
        BinaryOp::BitXor => w(x ^ y),
        BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod if y == 0 => {
            Err(OpFault::DivisionByZero)
        }
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
        BinaryOp::Min if signed => Ok(Val::I(x.min(y))),
        BinaryOp::Max if signed => Ok(Val::I(x.max(y))),
        BinaryOp::Min => Ok(Val::I(ux.min(uy) as i64)),
        BinaryOp::Max => Ok(Val::I(ux.max(uy) as i64)),
        BinaryOp::Pow => {
            if signed && y < 0 {
                return match x {
                    0 => Err(OpFault::DivisionByZero),
                    1 => Ok(Val::I(1)),
                    -1 => Ok(Val::I(if y % 2 == 0 { 1 } else { -1 })),
                    _ => Ok(Val::I(0)),
                };
            }
            let (mut base, mut exp, mut acc) = (x, uy, 1i64);
            while exp > 0 {
                if exp & 1 == 1 {
                    acc = acc.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                exp >>= 1;
            }
            w(acc)
        }
        BinaryOp::Shl => {
            let bits = i64::from(dtype.bits());
            if !(0..bits).contains(&y) || (!signed && uy >= bits as u64) {
                Ok(Val::I(0))
            } else {
                w(x.wrapping_shl(y as u32))
            }
        }
        BinaryOp::Shr if signed => {
            let bits = i64::from(dtype.bits());
            if !(0..bits).contains(&y) {
                Ok(Val::I(if x < 0 { -1 } else { 0 }))
            } else {
                w(x >> y)
            }
        }
        BinaryOp::Shr => {
            if uy >= u64::from(dtype.bits()) {
                Ok(Val::I(0))
            } else {
                w((ux >> uy) as i64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_modulo_follow_python() {
        let d = DType::I32;
        let fd = |a, b| binary(BinaryOp::FloorDiv, d, Val::I(a), Val::I(b));
        let fm = |a, b| binary(BinaryOp::FloorMod, d, Val::I(a), Val::I(b));
        assert_eq!(fd(-7, 2), Ok(Val::I(-4)));
        assert_eq!(fm(-7, 2), Ok(Val::I(1)));
        assert_eq!(fm(7, -2), Ok(Val::I(-1)));
        assert_eq!(
            binary(BinaryOp::Div, d, Val::I(-7), Val::I(2)),
            Ok(Val::I(-3))
        );
        assert_eq!(fd(1, 0), Err(OpFault::DivisionByZero));
    }

    #[test]
    fn casts_round_and_wrap() {
        assert_eq!(cast(Val::F(-3.7), DType::F32, DType::I32), Val::I(-3));
        assert_eq!(cast(Val::I(300), DType::I32, DType::U8), Val::I(44));
        assert_eq!(
            cast(Val::F(1.0 + 2f64.powi(-11)), DType::F32, DType::F16),
            Val::F(1.0)
        );
    }
}
