//! How thread-IR values live in PTX registers.
//!
//! Every scalar type maps to one register class ([`Class`]):
//!
//! | thread IR | PTX register | invariant |
//! | --- | --- | --- |
//! | `bool` | `.pred` | |
//! | `i8`, `i16`, `i32` | `.b32` | sign-extended to 32 bits |
//! | `u8`, `u16`, `u32` | `.b32` | zero-extended to 32 bits |
//! | `i64`, `u64` | `.b64` | |
//! | `f16`, `bf16` | `.b16` | the IEEE / bfloat16 bit pattern |
//! | `f32` | `.f32` | |
//! | `f64` | `.f64` | |
//! | `f8e4m3`, `f8e5m2` | `.b16` | the byte in bits 7:0 (moves only) |
//!
//! Keeping narrow integers normalised in 32-bit registers means every
//! 32-bit instruction sees the value the thread IR means, and only the
//! operations that can leave the type's range (add, sub, mul, neg, shl,
//! ...) re-normalise their result.
//!
//! A [`Val`] is what expression lowering passes around: a register name or
//! an immediate, with its class. Immediates carry their value so that
//! integer arithmetic on constants folds at emission time.

use tilec_core::ir::{DType, DTypeKind};

/// A PTX register class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Class {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Pred,
        Class::B16,
        Class::B32,
        Class::B64,
        Class::F32,
        Class::F64,
    ];

    /// The register declaration type.
    pub fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B16 => ".b16",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }

    /// The prefix of temporary registers of this class (`%r12`).
    pub fn temp_prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B16 => "%h",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }

    /// The untyped move suffix (`mov.b32`).
    pub fn bits(self) -> &'static str {
        match self {
            Class::Pred => "pred",
            Class::B16 => "b16",
            Class::B32 | Class::F32 => "b32",
            Class::B64 | Class::F64 => "b64",
        }
    }

    /// The natural typed suffix for moves and selects (`mov.f32`).
    pub fn ty(self) -> &'static str {
        match self {
            Class::Pred => "pred",
            Class::B16 => "b16",
            Class::B32 => "b32",
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
        }
    }

    /// Bytes of a register of this class in local memory (predicates are
    /// stored as a 32-bit 0 or 1).
    pub fn bytes(self) -> u32 {
        match self {
            Class::B16 => 2,
            Class::Pred | Class::B32 | Class::F32 => 4,
            Class::B64 | Class::F64 => 8,
        }
    }
}

/// The register class of a thread-IR type.
pub(crate) fn class_of(dtype: DType) -> Class {
    match dtype {
        DType::Bool => Class::Pred,
        DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 | DType::U32 => Class::B32,
        DType::I64 | DType::U64 => Class::B64,
        DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2 => Class::B16,
        DType::F32 => Class::F32,
        DType::F64 => Class::F64,
    }
}

/// Whether `dtype` is one of the 8-bit float formats.
pub(crate) fn is_fp8(dtype: DType) -> bool {
    matches!(dtype, DType::F8E4M3 | DType::F8E5M2)
}

/// The PTX integer type suffix an integer `dtype` computes with in its
/// register (`s32` for `i8`, `u64` for `u64`).
pub(crate) fn int_ty(dtype: DType) -> &'static str {
    let signed = dtype.kind() == DTypeKind::Signed;
    match (class_of(dtype), signed) {
        (Class::B64, true) => "s64",
        (Class::B64, false) => "u64",
        (_, true) => "s32",
        (_, false) => "u32",
    }
}

/// A compile-time constant carried by an immediate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Imm {
    /// An integer, wrapped to its thread-IR type (`u64` keeps its bits).
    Int(i64),
    /// A float, already rounded to its type.
    Float(f64),
    Bool(bool),
}

/// An operand: a register or an immediate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Val {
    pub class: Class,
    /// The operand text (`%f_acc`, `0f3F800000`, `-3`).
    pub text: String,
    /// The value of an immediate.
    pub imm: Option<Imm>,
}

impl Val {
    pub fn reg(class: Class, name: impl Into<String>) -> Val {
        Val {
            class,
            text: name.into(),
            imm: None,
        }
    }

    /// An integer immediate of `dtype` (wrapped to the type first).
    pub fn int(dtype: DType, value: i64) -> Val {
        let value = dtype.wrap_i64(value);
        let class = class_of(dtype);
        Val {
            class,
            text: int_text(class, value),
            imm: Some(Imm::Int(value)),
        }
    }

    /// A float immediate of `dtype` (`value` is rounded to the type).
    pub fn float(dtype: DType, value: f64) -> Val {
        let value = dtype.round_f64(value);
        let class = class_of(dtype);
        let text = match dtype {
            DType::F32 => format!("0f{:08X}", (value as f32).to_bits()),
            DType::F64 => format!("0d{:016X}", value.to_bits()),
            DType::F16 => format!("0x{:04X}", f16_bits(value)),
            DType::BF16 => format!("0x{:04X}", bf16_bits(value)),
            DType::F8E4M3 => format!("0x{:04X}", e4m3_bits(value)),
            _ => format!("0x{:04X}", e5m2_bits(value)),
        };
        Val {
            class,
            text,
            imm: Some(Imm::Float(value)),
        }
    }

    pub fn bool(value: bool) -> Val {
        Val {
            class: Class::Pred,
            text: if value { "1" } else { "0" }.to_string(),
            imm: Some(Imm::Bool(value)),
        }
    }

    /// A raw 32-bit or 64-bit immediate (masks, offsets, bit patterns).
    pub fn bits(class: Class, value: u64) -> Val {
        let text = match class {
            Class::B16 => format!("0x{:04X}", value & 0xFFFF),
            Class::F32 => format!("0f{:08X}", value & 0xFFFF_FFFF),
            Class::F64 => format!("0d{value:016X}"),
            Class::B64 => format!("0x{value:016X}"),
            _ => format!("0x{:08X}", value & 0xFFFF_FFFF),
        };
        Val {
            class,
            text,
            imm: None,
        }
    }

    pub fn is_imm(&self) -> bool {
        self.imm.is_some()
    }

    pub fn as_int(&self) -> Option<i64> {
        match self.imm {
            Some(Imm::Int(v)) => Some(v),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.imm {
            Some(Imm::Bool(b)) => Some(b),
            _ => None,
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The text of an integer immediate in a register of `class`: decimal when
/// it fits the signed range of the register, hexadecimal bits otherwise.
fn int_text(class: Class, value: i64) -> String {
    match class {
        Class::B64 => {
            if value >= i64::from(i32::MIN) {
                value.to_string()
            } else {
                format!("0x{:016X}", value as u64)
            }
        }
        _ => {
            if i32::try_from(value).is_ok() {
                value.to_string()
            } else {
                format!("0x{:08X}", value as u64 & 0xFFFF_FFFF)
            }
        }
    }
}

/// The bits of the binary float with `exp_bits` exponent and `man_bits`
/// stored mantissa bits nearest to `x` (ties to even). `finite_only`
/// formats have no infinity: the all-ones pattern is NaN and overflow
/// gives NaN (the E4M3 "fn" convention); `max` is the largest finite value.
fn small_float_bits(x: f64, exp_bits: u32, man_bits: u32, finite_only: bool) -> u32 {
    let sign = u32::from(x.is_sign_negative()) << (exp_bits + man_bits);
    let exp_all = (1u32 << exp_bits) - 1;
    let nan = if finite_only {
        (exp_all << man_bits) | ((1 << man_bits) - 1)
    } else {
        (exp_all << man_bits) | (1 << (man_bits - 1))
    };
    if x.is_nan() {
        return nan;
    }
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let inf = if finite_only {
        nan
    } else {
        exp_all << man_bits
    };
    if x.is_infinite() {
        return sign | inf;
    }
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    let min_exp = 1 - bias;
    let exp = exponent_of(a).max(min_exp);
    // Dividing by a power of two is exact, so `scaled` is exact and its
    // rounding is the format's rounding.
    let quantum = pow2(exp - man_bits as i32);
    let r = (a / quantum).round_ties_even();
    let (mut field, mut mantissa) = if r >= f64::from(1u32 << man_bits) {
        (exp + bias, r as u64 - (1u64 << man_bits))
    } else {
        (0, r as u64)
    };
    if mantissa >= 1u64 << man_bits {
        // Rounding carried into the next binade.
        mantissa -= 1u64 << man_bits;
        field += 1;
    }
    let max_field = if finite_only {
        exp_all as i32
    } else {
        exp_all as i32 - 1
    };
    let overflow = field > max_field
        || (finite_only && field == max_field && mantissa == (1u64 << man_bits) - 1);
    if overflow {
        return sign | inf;
    }
    sign | ((field as u32) << man_bits) | mantissa as u32
}

/// `floor(log2(a))` for a finite positive `a`.
fn exponent_of(a: f64) -> i32 {
    let biased = ((a.to_bits() >> 52) & 0x7FF) as i32;
    if biased == 0 {
        // f64 subnormal: below every small format's range.
        -1074 + (63 - a.to_bits().leading_zeros() as i32)
    } else {
        biased - 1023
    }
}

/// `2^e` for `-1074 <= e <= 1023`.
pub(crate) fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// IEEE binary16 bits of `x`, rounded to nearest even.
pub(crate) fn f16_bits(x: f64) -> u16 {
    small_float_bits(x, 5, 10, false) as u16
}

/// bfloat16 bits of `x`, rounded to nearest even.
pub(crate) fn bf16_bits(x: f64) -> u16 {
    small_float_bits(x, 8, 7, false) as u16
}

/// OCP E4M3 ("fn": no infinity) bits of `x`.
pub(crate) fn e4m3_bits(x: f64) -> u16 {
    small_float_bits(x, 4, 3, true) as u16
}

/// OCP E5M2 bits of `x`.
pub(crate) fn e5m2_bits(x: f64) -> u16 {
    small_float_bits(x, 5, 2, false) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_bits() {
        assert_eq!(f16_bits(1.0), 0x3C00);
        assert_eq!(f16_bits(-2.0), 0xC000);
        assert_eq!(f16_bits(65504.0), 0x7BFF);
        assert_eq!(f16_bits(65520.0), 0x7C00);
        assert_eq!(f16_bits(pow2(-24)), 0x0001);
        assert_eq!(f16_bits(pow2(-25)), 0x0000);
        assert_eq!(f16_bits(-0.0), 0x8000);
        assert_eq!(f16_bits(f64::NAN), 0x7E00);
        // 1 + 2^-11 ties to even (1.0); 1 + 3·2^-11 to 1 + 2^-9.
        assert_eq!(f16_bits(1.0 + pow2(-11)), 0x3C00);
        assert_eq!(f16_bits(1.0 + 3.0 * pow2(-11)), 0x3C02);
    }

    #[test]
    fn bfloat16_and_fp8_bits() {
        assert_eq!(bf16_bits(1.0), 0x3F80);
        assert_eq!(bf16_bits(-3.0), 0xC040);
        assert_eq!(bf16_bits(f64::INFINITY), 0x7F80);
        assert_eq!(e4m3_bits(448.0), 0x7E);
        assert_eq!(e4m3_bits(1.0), 0x38);
        assert_eq!(e4m3_bits(500.0), 0x7F);
        assert_eq!(e5m2_bits(57344.0), 0x7B);
        assert_eq!(e5m2_bits(1e6), 0x7C);
    }

    #[test]
    fn integer_immediates() {
        assert_eq!(Val::int(DType::I32, -5).text, "-5");
        assert_eq!(Val::int(DType::U32, -1).text, "0xFFFFFFFF");
        assert_eq!(Val::int(DType::I8, 200).text, "-56");
        assert_eq!(Val::int(DType::U64, -1).text, "-1");
        assert_eq!(Val::int(DType::I64, i64::MIN).text, "0x8000000000000000");
        assert_eq!(Val::float(DType::F32, 1.0).text, "0f3F800000");
        assert_eq!(Val::float(DType::F16, 1.0).text, "0x3C00");
    }
}
