//! Scalar data types of Tile IR and their rounding rules.
//!
//! Every value in the IR has one of these types. Floating-point values are
//! carried by the interpreter as `f64` that are already rounded to their type
//! ([`DType::round_f64`]); integers as `i64` wrapped to their width
//! ([`DType::wrap_i64`]; `uint64` keeps its bit pattern in the `i64`).

use std::fmt;

/// A scalar element type.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    /// OCP FP8 E4M3 "fn" variant: no infinities, one NaN pattern, max 448.
    F8E4M3,
    /// OCP FP8 E5M2: IEEE-like, with infinities, max 57344.
    F8E5M2,
}

/// How a type behaves arithmetically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DTypeKind {
    Bool,
    Signed,
    Unsigned,
    Float,
}

impl DType {
    /// Every type, in a fixed order (used by tests and the conformance grid).
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
    ];

    /// The short name used by the IR text format (`f16`, `i32`, ...).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
        }
    }

    /// The TileLang / TVM spelling (`float16`, `int32`, `float8_e4m3fn`, ...).
    pub fn tilelang_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::F8E4M3 => "float8_e4m3fn",
            DType::F8E5M2 => "float8_e5m2",
        }
    }

    /// Parses a short IR name.
    pub fn from_short_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.short_name() == name)
    }

    /// Parses a TileLang, TVM or torch spelling (`"float16"`, `"half"`,
    /// `"float8_e4m3"`, ...). The short IR names are accepted too.
    pub fn from_tilelang_name(name: &str) -> Option<DType> {
        let d = match name {
            "bool" => DType::Bool,
            "int8" => DType::I8,
            "int16" | "short" => DType::I16,
            "int32" | "int" => DType::I32,
            "int64" | "long" => DType::I64,
            "uint8" => DType::U8,
            "uint16" => DType::U16,
            "uint32" | "uint" => DType::U32,
            "uint64" | "ulong" => DType::U64,
            "float16" | "half" => DType::F16,
            "bfloat16" => DType::BF16,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            "float8_e4m3fn" | "float8_e4m3" | "e4m3_float8" => DType::F8E4M3,
            "float8_e5m2" | "e5m2_float8" => DType::F8E5M2,
            other => return DType::from_short_name(other),
        };
        Some(d)
    }

    /// Arithmetic class of the type.
    pub fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => DTypeKind::Signed,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => DTypeKind::Unsigned,
            _ => DTypeKind::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.kind() == DTypeKind::Float
    }

    pub fn is_int(self) -> bool {
        matches!(self.kind(), DTypeKind::Signed | DTypeKind::Unsigned)
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }

    /// Width in bits (bool counts as 8: it occupies a byte in memory).
    pub fn bits(self) -> u32 {
        match self {
            DType::Bool | DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 => 8,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 16,
            DType::I32 | DType::U32 | DType::F32 => 32,
            DType::I64 | DType::U64 | DType::F64 => 64,
        }
    }

    /// Size in bytes of one element in memory.
    pub fn bytes(self) -> u64 {
        u64::from(self.bits() / 8)
    }

    /// Largest finite value of a floating type.
    pub fn max_finite(self) -> Option<f64> {
        match self {
            DType::F16 => Some(65504.0),
            DType::BF16 => Some(f64::from(half::bf16::MAX)),
            DType::F32 => Some(f64::from(f32::MAX)),
            DType::F64 => Some(f64::MAX),
            DType::F8E4M3 => Some(448.0),
            DType::F8E5M2 => Some(57344.0),
            _ => None,
        }
    }

    /// Unit roundoff (half the distance from 1.0 to the next value) of a
    /// floating type.
    pub fn unit_roundoff(self) -> Option<f64> {
        let mantissa_bits = match self {
            DType::F16 => 10,
            DType::BF16 => 7,
            DType::F32 => 23,
            DType::F64 => 52,
            DType::F8E4M3 => 3,
            DType::F8E5M2 => 2,
            _ => return None,
        };
        Some(2f64.powi(-(mantissa_bits + 1)))
    }

    /// Rounds an `f64` to the nearest value of this floating type
    /// (round-to-nearest-even, saturating to NaN for E4M3 which has no
    /// infinity). For integer and bool types this converts as a cast does:
    /// truncation toward zero, wrapping, NaN → 0.
    pub fn round_f64(self, x: f64) -> f64 {
        match self {
            DType::F64 => x,
            DType::F32 => f64::from(x as f32),
            DType::F16 => round_binary(x, 10, -14, 65504.0),
            DType::BF16 => round_binary(x, 7, -126, f64::from(half::bf16::MAX)),
            DType::F8E4M3 => round_minifloat(x, 3, -6, 448.0, false),
            DType::F8E5M2 => round_minifloat(x, 2, -14, 57344.0, true),
            DType::Bool => {
                if x != 0.0 && !x.is_nan() {
                    1.0
                } else {
                    0.0
                }
            }
            _ => self.wrap_i64(float_to_i64(x)) as f64,
        }
    }

    /// Wraps an integer to this integer type's width (two's complement).
    /// `u64` values keep their bit pattern. Bool maps non-zero to 1.
    pub fn wrap_i64(self, x: i64) -> i64 {
        match self {
            DType::I8 => i64::from(x as i8),
            DType::I16 => i64::from(x as i16),
            DType::I32 => i64::from(x as i32),
            DType::U8 => i64::from(x as u8),
            DType::U16 => i64::from(x as u16),
            DType::U32 => i64::from(x as u32),
            DType::Bool => i64::from(x != 0),
            _ => x,
        }
    }

    /// Smallest and largest value of an integer type, as `i128`.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::I8 => (i128::from(i8::MIN), i128::from(i8::MAX)),
            DType::I16 => (i128::from(i16::MIN), i128::from(i16::MAX)),
            DType::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
            DType::I64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
            DType::U8 => (0, i128::from(u8::MAX)),
            DType::U16 => (0, i128::from(u16::MAX)),
            DType::U32 => (0, i128::from(u32::MAX)),
            DType::U64 => (0, i128::from(u64::MAX)),
            DType::Bool => (0, 1),
            _ => return None,
        })
    }
}

/// Field widths of a float format: exponent bits, stored mantissa bits,
/// exponent bias, and whether the all-ones exponent holds infinities and
/// NaNs (IEEE style) rather than ordinary values (E4M3, whose only NaN is
/// `S.1111.111`).
fn float_format(d: DType) -> Option<(u32, u32, i32, bool)> {
    Some(match d {
        DType::F64 => (11, 52, 1023, true),
        DType::F32 => (8, 23, 127, true),
        DType::F16 => (5, 10, 15, true),
        DType::BF16 => (8, 7, 127, true),
        DType::F8E5M2 => (5, 2, 15, true),
        DType::F8E4M3 => (4, 3, 7, false),
        _ => return None,
    })
}

impl DType {
    /// The bit pattern of a value of this type, as a bit cast reads it
    /// (zero-extended to 64 bits). Integers are held as `i64` (`u64` by
    /// bit pattern) and floats as the `f64` of their exact value; a NaN
    /// keeps its sign and the top bits of its payload (the bits this
    /// type stores), a NaN whose kept payload would be zero becomes the
    /// quiet NaN. Bool gives 0 or 1.
    pub fn bits_of(self, int: i64, float: f64) -> u64 {
        let width = self.bits();
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let Some((e, m, bias, ieee)) = float_format(self) else {
            return (int as u64) & mask;
        };
        if self == DType::F64 {
            return float.to_bits();
        }
        let sign = u64::from(float.is_sign_negative()) << (e + m);
        let exp_ones = ((1u64 << e) - 1) << m;
        if float.is_nan() {
            if !ieee {
                return sign | exp_ones | ((1u64 << m) - 1);
            }
            let payload = (float.to_bits() & ((1u64 << 52) - 1)) >> (52 - m);
            let payload = if payload == 0 {
                1u64 << (m - 1)
            } else {
                payload
            };
            return sign | exp_ones | payload;
        }
        if float.is_infinite() {
            // E4M3 holds no infinity; its values never are one.
            return if ieee {
                sign | exp_ones
            } else {
                sign | exp_ones | ((1u64 << m) - 1)
            };
        }
        let a = float.abs();
        if a == 0.0 {
            return sign;
        }
        let min_exp = 1 - bias;
        let exp = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        if exp >= min_exp {
            let frac = (a.to_bits() & ((1u64 << 52) - 1)) >> (52 - m);
            let field = ((exp + bias) as u64).min((1u64 << e) - 1);
            sign | (field << m) | frac
        } else {
            // Subnormal: the value in units of the smallest subnormal
            // (exact for values of this type; scaling by a power of two is
            // exact in `f64`).
            let units = a * 2f64.powi(m as i32 - min_exp);
            sign | (units as u64 & ((1u64 << m) - 1))
        }
    }

    /// The value of this type whose bit pattern is the low bits of `bits`,
    /// as the interpreters hold it: `Ok` an integer (sign-extended for
    /// signed types, `u64` by bit pattern) or `Err` a float's exact `f64`
    /// (a NaN keeps its sign and payload, shifted into the `f64`'s top
    /// payload bits).
    pub fn from_bits(self, bits: u64) -> Result<i64, f64> {
        let width = self.bits();
        let low = if width == 64 {
            bits
        } else {
            bits & ((1u64 << width) - 1)
        };
        let Some((e, m, bias, ieee)) = float_format(self) else {
            return Ok(match self {
                DType::I8 => i64::from(low as u8 as i8),
                DType::I16 => i64::from(low as u16 as i16),
                DType::I32 => i64::from(low as u32 as i32),
                DType::Bool => i64::from(low != 0),
                _ => low as i64,
            });
        };
        if self == DType::F64 {
            return Err(f64::from_bits(low));
        }
        let negative = (low >> (e + m)) & 1 == 1;
        let field = (low >> m) & ((1u64 << e) - 1);
        let frac = low & ((1u64 << m) - 1);
        let all_ones = (1u64 << e) - 1;
        let value = if field == all_ones && (ieee || frac == (1u64 << m) - 1) {
            if ieee && frac == 0 {
                f64::INFINITY
            } else {
                let payload = if ieee { frac << (52 - m) } else { 1u64 << 51 };
                f64::from_bits((0x7ffu64 << 52) | payload)
            }
        } else if field == 0 {
            frac as f64 * 2f64.powi(1 - bias - m as i32)
        } else {
            (((1u64 << m) | frac) as f64) * 2f64.powi(field as i32 - bias - m as i32)
        };
        Err(if negative { -value } else { value })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// Float → integer conversion as the IR's `cast` defines it: truncate toward
/// zero, saturate at the `i64` range, NaN → 0.
fn float_to_i64(x: f64) -> i64 {
    if x.is_nan() {
        0
    } else if x >= 9.223_372_036_854_776e18 {
        // Values in [2^63, 2^64) are meaningful for u64 targets.
        if x < 1.844_674_407_370_955_2e19 {
            (x as u64) as i64
        } else {
            i64::MAX
        }
    } else {
        x as i64
    }
}

/// Round-to-nearest-even of `x` into a binary float format with infinities
/// (IEEE half, bfloat16): `mantissa` stored bits, minimum normal exponent
/// `min_exp`, largest finite value `max`. Exact in one step, on the bits of
/// `x`: rounding through `f32` first would round twice, and ignoring the
/// low bits of `x` would misplace values just above a halfway point.
fn round_binary(x: f64, mantissa: i32, min_exp: i32, max: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    // `x = significand · 2^(exp - 52)`.
    let (significand, exp) = if biased == 0 {
        (fraction, -1022)
    } else {
        (fraction | (1u64 << 52), biased - 1023)
    };
    // Bits of the significand below the format's quantum at this exponent.
    let shift = 52 - mantissa + (min_exp - exp).max(0);
    let magnitude = if shift > 53 {
        // Below half the smallest subnormal.
        0.0
    } else {
        let kept = significand >> shift;
        let rest = significand & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        let rounded = if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        };
        // Exact: `rounded` has at most `mantissa + 2` bits.
        rounded as f64 * 2f64.powi(exp - 52 + shift)
    };
    let magnitude = if magnitude > max {
        f64::INFINITY
    } else {
        magnitude
    };
    if negative { -magnitude } else { magnitude }
}

/// Round-to-nearest-even into a small binary float with `mantissa` stored
/// bits and minimum normal exponent `min_exp`. Values beyond `max` become
/// infinity when the format has one (`has_inf`), NaN otherwise (the OCP
/// "fn" convention for E4M3, where conversion does not saturate).
fn round_minifloat(x: f64, mantissa: i32, min_exp: i32, max: f64, has_inf: bool) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() {
        return if has_inf { x } else { f64::NAN };
    }
    if x == 0.0 {
        return x;
    }
    let sign = x.signum();
    let a = x.abs();
    // Exponent of the value, clamped to the subnormal range; dividing by a
    // power of two is exact, so `scaled` is exact and its fraction tells ties.
    let exp = (a.log2().floor() as i32).max(min_exp);
    let quantum = 2f64.powi(exp - mantissa);
    let scaled = a / quantum;
    let mut r = scaled.floor();
    let frac = scaled - r;
    if frac > 0.5 || (frac == 0.5 && r % 2.0 != 0.0) {
        r += 1.0;
    }
    let rounded = r * quantum;
    if rounded > max {
        return if has_inf {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    sign * rounded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_patterns_round_trip() {
        assert_eq!(DType::F32.bits_of(0, 1.0), 0x3f80_0000);
        assert_eq!(DType::F32.bits_of(0, -0.0), 0x8000_0000);
        assert_eq!(DType::F16.bits_of(0, 1.0), 0x3c00);
        assert_eq!(DType::BF16.bits_of(0, -2.0), 0xc000);
        assert_eq!(DType::F8E4M3.bits_of(0, 448.0), 0x7e);
        assert_eq!(DType::F8E5M2.bits_of(0, f64::NEG_INFINITY), 0xfc);
        assert_eq!(DType::I16.bits_of(-1, 0.0), 0xffff);
        assert_eq!(DType::I32.from_bits(0x8000_0000), Ok(-2_147_483_648));
        assert_eq!(DType::U64.from_bits(u64::MAX), Ok(-1));
        assert_eq!(DType::F32.from_bits(0x3f80_0000), Err(1.0));
        assert_eq!(DType::F16.from_bits(0x0001), Err(2f64.powi(-24)));
        // Every pattern of the narrow floats survives a round trip, NaN
        // payloads included; f32 patterns by a stride over all exponents.
        for d in [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2] {
            for b in 0..(1u64 << d.bits()) {
                let x = d.from_bits(b).expect_err("a float");
                if d == DType::F8E4M3 && x.is_nan() {
                    assert_eq!(b & 0x7f, 0x7f);
                    continue;
                }
                assert_eq!(d.bits_of(0, x), b, "{d} {b:#x}");
                if !x.is_nan() {
                    assert_eq!(d.round_f64(x).to_bits(), x.to_bits(), "{d} {b:#x}");
                }
            }
        }
        let mut b: u32 = 0;
        while let Some(next) = b.checked_add(9_973) {
            let x = DType::F32.from_bits(u64::from(b)).expect_err("a float");
            assert_eq!(DType::F32.bits_of(0, x), u64::from(b));
            if !x.is_nan() {
                assert_eq!(x, f64::from(f32::from_bits(b)));
            }
            b = next;
        }
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_short_name(d.short_name()), Some(d));
            assert_eq!(DType::from_tilelang_name(d.tilelang_name()), Some(d));
        }
    }

    #[test]
    fn half_formats_round_once_from_f64() {
        // Just above halfway between 1 and 1 + 2^-7: up, not to even.
        let x = f64::from(f32::from_bits(0x3F80_8001));
        assert_eq!(DType::BF16.round_f64(x), 1.0078125);
        // Just above halfway between 1 and 1 + 2^-10 (through f32 it would
        // be a tie and round to 1).
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(DType::F16.round_f64(x), 1.0009765625);
        // Ties to even, overflow, subnormals, signed zero.
        assert_eq!(DType::BF16.round_f64(1.0 + 2f64.powi(-8)), 1.0);
        assert_eq!(DType::F16.round_f64(65519.0), 65504.0);
        assert_eq!(DType::F16.round_f64(65520.0), f64::INFINITY);
        assert_eq!(DType::F16.round_f64(-1e6), f64::NEG_INFINITY);
        assert_eq!(DType::F16.round_f64(2f64.powi(-25)), 0.0);
        assert_eq!(DType::F16.round_f64(2f64.powi(-25) * 1.5), 2f64.powi(-24));
        assert_eq!(
            DType::F16.round_f64(3.0 * 2f64.powi(-25)),
            2.0 * 2f64.powi(-24)
        );
        assert!(DType::F16.round_f64(-1e-30).is_sign_negative());
        assert_eq!(DType::BF16.round_f64(f64::MIN_POSITIVE / 4.0), 0.0);
        assert!(DType::BF16.round_f64(f64::NAN).is_nan());
    }

    #[test]
    fn half_formats_agree_with_half_on_f32_inputs() {
        // The `half` crate rounds f32 sources correctly; sweep f32 bit
        // patterns with a stride that covers every exponent.
        let mut bits: u32 = 0;
        while let Some(next) = bits.checked_add(65_537) {
            let x = f32::from_bits(bits);
            if x.is_finite() {
                let f16 = f64::from(half::f16::from_f32(x));
                assert_eq!(
                    DType::F16.round_f64(f64::from(x)).to_bits(),
                    f16.to_bits(),
                    "{x:e}"
                );
                let bf16 = f64::from(half::bf16::from_f32(x));
                assert_eq!(
                    DType::BF16.round_f64(f64::from(x)).to_bits(),
                    bf16.to_bits(),
                    "{x:e}"
                );
            }
            bits = next;
        }
    }

    #[test]
    fn f16_rounding_is_nearest_even() {
        // 1 + 2^-11 is exactly halfway between 1 and 1 + 2^-10: ties to even (1).
        assert_eq!(DType::F16.round_f64(1.0 + 2f64.powi(-11)), 1.0);
        // 1 + 3·2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even (1+2^-9).
        assert_eq!(
            DType::F16.round_f64(1.0 + 3.0 * 2f64.powi(-11)),
            1.0 + 2f64.powi(-9)
        );
        assert_eq!(DType::F16.round_f64(70000.0), f64::INFINITY);
    }

    #[test]
    fn e4m3_values() {
        assert_eq!(DType::F8E4M3.round_f64(448.0), 448.0);
        assert_eq!(DType::F8E4M3.round_f64(460.0), 448.0);
        assert!(DType::F8E4M3.round_f64(500.0).is_nan());
        assert!(DType::F8E4M3.round_f64(f64::INFINITY).is_nan());
        // Smallest subnormal is 2^-9; half of it ties to even (0).
        assert_eq!(DType::F8E4M3.round_f64(2f64.powi(-9)), 2f64.powi(-9));
        assert_eq!(DType::F8E4M3.round_f64(2f64.powi(-10)), 0.0);
        // 1.0625 = 1 + 1/16 is halfway between 1 and 1.125: ties to even (1).
        assert_eq!(DType::F8E4M3.round_f64(1.0625), 1.0);
        assert_eq!(DType::F8E4M3.round_f64(1.1875), 1.25);
    }

    #[test]
    fn e5m2_values() {
        assert_eq!(DType::F8E5M2.round_f64(57344.0), 57344.0);
        assert_eq!(DType::F8E5M2.round_f64(1e6), f64::INFINITY);
        assert_eq!(DType::F8E5M2.round_f64(-1e6), f64::NEG_INFINITY);
        assert_eq!(DType::F8E5M2.round_f64(1.3), 1.25);
        assert_eq!(DType::F8E5M2.round_f64(2f64.powi(-16)), 2f64.powi(-16));
    }

    #[test]
    fn integer_wrapping() {
        assert_eq!(DType::I8.wrap_i64(200), -56);
        assert_eq!(DType::U8.wrap_i64(-1), 255);
        assert_eq!(DType::I32.round_f64(-3.7), -3.0);
        assert_eq!(DType::U8.round_f64(f64::NAN), 0.0);
    }
}
