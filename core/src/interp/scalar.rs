//! Scalar semantics: what one operator does to one or two values of a type.
//!
//! Values travel as the interpreter stores them: floats as `f64` already
//! rounded to their type, integers and bools as `i64` wrapped to their type
//! (`u64` keeps its bit pattern). Every function here is chosen once, when an
//! expression is compiled ([`super::expr`]), and then called per element
//! through a plain function pointer: no enum is matched per evaluation.
//!
//! Integer results wrap to the type. Unsigned types (and bool, for the
//! bitwise operators) compute on the `u64` bit pattern, which for `u8`..`u32`
//! is the same as computing on the non-negative `i64`. Floating-point
//! arithmetic is done in `f64` and rounded once to the result type by the
//! caller, which is exact (correctly rounded) for `+ - * /` and `sqrt` into
//! every type narrower than `f64`.

use crate::ir::{BinaryOp, DType, DTypeKind, UnaryOp};

/// An integer division or remainder by zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DivisionByZero;

/// An integer binary operator: `(result type, lhs, rhs) -> result`.
pub(crate) type IntArith = fn(DType, i64, i64) -> Result<i64, DivisionByZero>;
/// An integer comparison on stored values.
pub(crate) type IntCompare = fn(i64, i64) -> bool;
/// A float binary operator computed in `f64` (the caller rounds).
pub(crate) type FloatArith = fn(f64, f64) -> f64;
/// A float comparison.
pub(crate) type FloatCompare = fn(f64, f64) -> bool;
/// An integer unary operator: `(type, operand) -> result`.
pub(crate) type IntUnary = fn(DType, i64) -> i64;
/// A float unary operator computed in `f64` (the caller rounds).
pub(crate) type FloatUnary = fn(f64) -> f64;

/// A value of some type as the interpreter stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    Float(f64),
    Int(i64),
}

/// The mathematical value of a stored integer of type `dtype`.
pub(crate) fn int_to_f64(value: i64, dtype: DType) -> f64 {
    if dtype == DType::U64 {
        value as u64 as f64
    } else {
        value as f64
    }
}

/// The mathematical value of a stored integer of type `dtype`, exactly.
pub(crate) fn int_to_i128(value: i64, dtype: DType) -> i128 {
    if dtype == DType::U64 {
        i128::from(value as u64)
    } else {
        i128::from(value)
    }
}

/// Converts a value of type `from` to type `to` as `cast` does: floats round
/// to nearest even (E4M3 overflow gives NaN), integers wrap, float → integer
/// truncates toward zero (NaN → 0, saturating at the `i64` range before
/// wrapping), anything → bool is "non-zero" (NaN → false, as
/// [`DType::round_f64`] defines it).
pub(crate) fn cast(value: Scalar, from: DType, to: DType) -> Scalar {
    if to.is_float() {
        Scalar::Float(to.round_f64(as_f64(value, from)))
    } else {
        Scalar::Int(match value {
            Scalar::Int(v) => to.wrap_i64(v),
            // `round_f64` truncates and wraps for integer targets; the result
            // is an integer-valued f64 that converts back exactly.
            Scalar::Float(x) => to.round_f64(x) as i64,
        })
    }
}

/// The value as an `f64` (exact for floats and for integers below 2^53).
pub(crate) fn as_f64(value: Scalar, dtype: DType) -> f64 {
    match value {
        Scalar::Float(x) => x,
        Scalar::Int(v) => int_to_f64(v, dtype),
    }
}

/// The integer binary operator `op` for a type of class `kind`, or `None`
/// when `op` is not an integer arithmetic or bitwise operator.
pub(crate) fn int_arith(op: BinaryOp, kind: DTypeKind) -> Option<IntArith> {
    let signed = kind == DTypeKind::Signed;
    let f: IntArith = match (op, signed) {
        (BinaryOp::Add, _) => |dt, a, b| Ok(dt.wrap_i64(a.wrapping_add(b))),
        (BinaryOp::Sub, _) => |dt, a, b| Ok(dt.wrap_i64(a.wrapping_sub(b))),
        (BinaryOp::Mul, _) => |dt, a, b| Ok(dt.wrap_i64(a.wrapping_mul(b))),
        (BinaryOp::Div, true) => signed_div,
        (BinaryOp::FloorDiv, true) => signed_floor_div,
        (BinaryOp::FloorMod, true) => signed_floor_mod,
        (BinaryOp::Div | BinaryOp::FloorDiv, false) => unsigned_div,
        (BinaryOp::FloorMod, false) => unsigned_rem,
        (BinaryOp::Min, true) => |_, a, b| Ok(a.min(b)),
        (BinaryOp::Max, true) => |_, a, b| Ok(a.max(b)),
        (BinaryOp::Min, false) => |_, a, b| Ok((a as u64).min(b as u64) as i64),
        (BinaryOp::Max, false) => |_, a, b| Ok((a as u64).max(b as u64) as i64),
        (BinaryOp::Pow, true) => signed_pow,
        (BinaryOp::Pow, false) => |dt, a, b| Ok(dt.wrap_i64(wrapping_pow(a, b as u64))),
        (BinaryOp::BitAnd, _) => |dt, a, b| Ok(dt.wrap_i64(a & b)),
        (BinaryOp::BitOr, _) => |dt, a, b| Ok(dt.wrap_i64(a | b)),
        (BinaryOp::BitXor, _) => |dt, a, b| Ok(dt.wrap_i64(a ^ b)),
        (BinaryOp::Shl, _) => shift_left,
        (BinaryOp::Shr, true) => arithmetic_shift_right,
        (BinaryOp::Shr, false) => logical_shift_right,
        _ => return None,
    };
    Some(f)
}

fn signed_div(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b == 0 {
        return Err(DivisionByZero);
    }
    Ok(dt.wrap_i64(a.wrapping_div(b)))
}

fn signed_floor_div(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b == 0 {
        return Err(DivisionByZero);
    }
    let q = a.wrapping_div(b);
    let r = a.wrapping_rem(b);
    let q = if r != 0 && ((r < 0) != (b < 0)) {
        q.wrapping_sub(1)
    } else {
        q
    };
    Ok(dt.wrap_i64(q))
}

fn signed_floor_mod(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b == 0 {
        return Err(DivisionByZero);
    }
    let r = a.wrapping_rem(b);
    let r = if r != 0 && ((r < 0) != (b < 0)) {
        r.wrapping_add(b)
    } else {
        r
    };
    Ok(dt.wrap_i64(r))
}

fn unsigned_div(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b == 0 {
        return Err(DivisionByZero);
    }
    Ok(dt.wrap_i64(((a as u64) / (b as u64)) as i64))
}

fn unsigned_rem(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b == 0 {
        return Err(DivisionByZero);
    }
    Ok(dt.wrap_i64(((a as u64) % (b as u64)) as i64))
}

/// `a^b` for a signed type. A negative exponent gives the truncated
/// quotient `1 / a^|b|`: 1 for `a = 1`, ±1 for `a = -1`, a division by zero
/// for `a = 0` and 0 otherwise.
fn signed_pow(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    if b >= 0 {
        return Ok(dt.wrap_i64(wrapping_pow(a, b as u64)));
    }
    match a {
        0 => Err(DivisionByZero),
        1 => Ok(1),
        -1 => Ok(if b % 2 == 0 { 1 } else { -1 }),
        _ => Ok(0),
    }
}

/// Exponentiation by squaring modulo 2^64.
fn wrapping_pow(mut base: i64, mut exponent: u64) -> i64 {
    let mut result: i64 = 1;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exponent >>= 1;
    }
    result
}

/// `a << b`; a count outside `0 .. bits` shifts everything out (0). For
/// `u64` a count with the top bit set is huge, hence also out of range.
fn shift_left(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    let bits = i64::from(dt.bits());
    Ok(if b < 0 || b >= bits {
        0
    } else {
        dt.wrap_i64(a.wrapping_shl(b as u32))
    })
}

/// Sign-filling `a >> b`; a count outside `0 .. bits` gives 0 or -1.
fn arithmetic_shift_right(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    let bits = i64::from(dt.bits());
    Ok(if b < 0 || b >= bits {
        if a < 0 { -1 } else { 0 }
    } else {
        dt.wrap_i64(a >> b)
    })
}

/// Zero-filling `a >> b`; a count of `bits` or more gives 0.
fn logical_shift_right(dt: DType, a: i64, b: i64) -> Result<i64, DivisionByZero> {
    let count = b as u64;
    Ok(if count >= u64::from(dt.bits()) {
        0
    } else {
        dt.wrap_i64(((a as u64) >> count) as i64)
    })
}

/// An integer (or bool) comparison; unsigned types and bool compare bit
/// patterns as `u64`.
pub(crate) fn int_compare(op: BinaryOp, kind: DTypeKind) -> Option<IntCompare> {
    let f: IntCompare = match (op, kind == DTypeKind::Signed) {
        (BinaryOp::Eq, _) => |a, b| a == b,
        (BinaryOp::Ne, _) => |a, b| a != b,
        (BinaryOp::Lt, true) => |a, b| a < b,
        (BinaryOp::Le, true) => |a, b| a <= b,
        (BinaryOp::Gt, true) => |a, b| a > b,
        (BinaryOp::Ge, true) => |a, b| a >= b,
        (BinaryOp::Lt, false) => |a, b| (a as u64) < (b as u64),
        (BinaryOp::Le, false) => |a, b| (a as u64) <= (b as u64),
        (BinaryOp::Gt, false) => |a, b| (a as u64) > (b as u64),
        (BinaryOp::Ge, false) => |a, b| (a as u64) >= (b as u64),
        _ => return None,
    };
    Some(f)
}

/// A float arithmetic operator in `f64`.
pub(crate) fn float_arith(op: BinaryOp) -> Option<FloatArith> {
    let f: FloatArith = match op {
        BinaryOp::Add => |a, b| a + b,
        BinaryOp::Sub => |a, b| a - b,
        BinaryOp::Mul => |a, b| a * b,
        BinaryOp::Div => |a, b| a / b,
        BinaryOp::FloorDiv => |a, b| (a / b).floor(),
        BinaryOp::FloorMod => |a, b| a - (a / b).floor() * b,
        BinaryOp::Min => nan_min,
        BinaryOp::Max => nan_max,
        BinaryOp::Pow => f64::powf,
        _ => return None,
    };
    Some(f)
}

/// An IEEE float comparison (every comparison with NaN is false but `!=`).
pub(crate) fn float_compare(op: BinaryOp) -> Option<FloatCompare> {
    let f: FloatCompare = match op {
        BinaryOp::Eq => |a, b| a == b,
        BinaryOp::Ne => |a, b| a != b,
        BinaryOp::Lt => |a, b| a < b,
        BinaryOp::Le => |a, b| a <= b,
        BinaryOp::Gt => |a, b| a > b,
        BinaryOp::Ge => |a, b| a >= b,
        _ => return None,
    };
    Some(f)
}

/// Minimum that propagates NaN; `-0.0` is below `+0.0`.
pub(crate) fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// Maximum that propagates NaN; `+0.0` is above `-0.0`.
pub(crate) fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b || (a == b && a.is_sign_positive()) {
        a
    } else {
        b
    }
}

/// A float unary operator in `f64` (not `isnan` / `isinf`, which give bool).
pub(crate) fn float_unary(op: UnaryOp) -> Option<FloatUnary> {
    let f: FloatUnary = match op {
        UnaryOp::Neg => |x| -x,
        UnaryOp::Abs => f64::abs,
        UnaryOp::Exp => f64::exp,
        UnaryOp::Exp2 => f64::exp2,
        UnaryOp::Log => f64::ln,
        UnaryOp::Log2 => f64::log2,
        UnaryOp::Sqrt => f64::sqrt,
        UnaryOp::Rsqrt => |x| 1.0 / x.sqrt(),
        UnaryOp::Sigmoid => |x| 1.0 / (1.0 + (-x).exp()),
        UnaryOp::Tanh => f64::tanh,
        UnaryOp::Sin => f64::sin,
        UnaryOp::Cos => f64::cos,
        UnaryOp::Floor => f64::floor,
        UnaryOp::Ceil => f64::ceil,
        UnaryOp::Round => f64::round_ties_even,
        UnaryOp::Not | UnaryOp::BitNot | UnaryOp::IsNan | UnaryOp::IsInf => return None,
    };
    Some(f)
}

/// An integer or bool unary operator for a type of class `kind`.
pub(crate) fn int_unary(op: UnaryOp, kind: DTypeKind) -> Option<IntUnary> {
    let f: IntUnary = match (op, kind) {
        (UnaryOp::Not, DTypeKind::Bool) => |_, a| i64::from(a == 0),
        (UnaryOp::BitNot, DTypeKind::Signed | DTypeKind::Unsigned) => |dt, a| dt.wrap_i64(!a),
        (UnaryOp::Neg, DTypeKind::Signed | DTypeKind::Unsigned) => {
            |dt, a| dt.wrap_i64(a.wrapping_neg())
        }
        (UnaryOp::Abs, DTypeKind::Signed) => |dt, a| dt.wrap_i64(a.wrapping_abs()),
        (UnaryOp::Abs, DTypeKind::Unsigned) => |_, a| a,
        _ => return None,
    };
    Some(f)
}
