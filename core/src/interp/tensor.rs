//! Host tensors: the arguments and results of an interpreter run.

use super::error::InterpError;
use super::scalar::int_to_f64;
use super::{Tensor, TensorData};
use crate::ir::DType;

/// Number of elements of a row-major array of `shape`, or `None` on
/// overflow.
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e))
}

impl Tensor {
    /// A tensor of zeros (`false` for bool).
    ///
    /// # Panics
    /// When the number of elements overflows `usize` ([`super::param_shapes`]
    /// never returns such a shape).
    pub fn zeros(dtype: DType, shape: impl Into<Vec<usize>>) -> Tensor {
        let shape = shape.into();
        let count = element_count(&shape).unwrap_or(usize::MAX);
        let data = if dtype.is_float() {
            TensorData::Float(vec![0.0; count])
        } else {
            TensorData::Int(vec![0; count])
        };
        Tensor { dtype, shape, data }
    }

    /// A tensor holding `values` (row-major) converted to `dtype` as a cast
    /// does: rounded to nearest even for floats, truncated and wrapped for
    /// integers, non-zero for bool.
    pub fn from_f64(
        dtype: DType,
        shape: impl Into<Vec<usize>>,
        values: Vec<f64>,
    ) -> Result<Tensor, InterpError> {
        let shape = shape.into();
        check_length(&shape, values.len())?;
        let data = if dtype.is_float() {
            TensorData::Float(values.into_iter().map(|x| dtype.round_f64(x)).collect())
        } else {
            TensorData::Int(
                values
                    .into_iter()
                    .map(|x| dtype.round_f64(x) as i64)
                    .collect(),
            )
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// A tensor of an integer or bool type holding `values` (row-major)
    /// wrapped to `dtype`. For a float `dtype` the values are converted and
    /// rounded.
    pub fn from_i64(
        dtype: DType,
        shape: impl Into<Vec<usize>>,
        values: Vec<i64>,
    ) -> Result<Tensor, InterpError> {
        let shape = shape.into();
        check_length(&shape, values.len())?;
        let data = if dtype.is_float() {
            TensorData::Float(
                values
                    .into_iter()
                    .map(|v| dtype.round_f64(v as f64))
                    .collect(),
            )
        } else {
            TensorData::Int(values.into_iter().map(|v| dtype.wrap_i64(v)).collect())
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// The elements as `f64` (integers by value; `u64` as unsigned).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match &self.data {
            TensorData::Float(v) => v.clone(),
            TensorData::Int(v) => v.iter().map(|&x| int_to_f64(x, self.dtype)).collect(),
        }
    }

    /// Number of elements stored.
    pub fn len(&self) -> usize {
        match &self.data {
            TensorData::Float(v) => v.len(),
            TensorData::Int(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the storage class fits the dtype and that the number of
    /// elements fits the shape; on failure says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let float_storage = matches!(self.data, TensorData::Float(_));
        if float_storage != self.dtype.is_float() {
            return Err(format!(
                "{} data stored as {}",
                self.dtype,
                if float_storage { "floats" } else { "integers" }
            ));
        }
        match element_count(&self.shape) {
            Some(n) if n == self.len() => Ok(()),
            _ => Err(format!(
                "shape {:?} does not hold {} elements",
                self.shape,
                self.len()
            )),
        }
    }
}

fn check_length(shape: &[usize], found: usize) -> Result<(), InterpError> {
    match element_count(shape) {
        Some(n) if n == found => Ok(()),
        _ => Err(InterpError::BadTensor {
            detail: format!("shape {shape:?} does not hold {found} values"),
        }),
    }
}

/// Why bytes could not be decoded into a [`Tensor`]
/// ([`Tensor::from_le_bytes`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TensorBytesError {
    /// The byte count is not `numel * dtype.bytes()`.
    #[error("expected {expected} bytes, got {actual}")]
    WrongLength { expected: usize, actual: usize },
    /// The shape's element count (or its byte size) overflows `usize`.
    #[error("a tensor of shape {shape:?} is too large to encode")]
    TooLarge { shape: Vec<usize> },
}

/// Canonical quiet NaN of each floating type.
const F16_NAN: u16 = 0x7E00;
const BF16_NAN: u16 = 0x7FC0;
const F32_NAN: u32 = 0x7FC0_0000;
const F64_NAN: u64 = 0x7FF8_0000_0000_0000;
const E4M3_NAN: u8 = 0x7F;
const E5M2_NAN: u8 = 0x7E;

/// A small binary float format stored in one byte: sign, exponent,
/// `mantissa` stored bits.
#[derive(Clone, Copy)]
struct Minifloat {
    mantissa: u32,
    bias: i32,
    /// E5M2 (IEEE-like: infinities, several NaNs) rather than E4M3 "fn"
    /// (no infinities, only the all-ones pattern is NaN).
    ieee: bool,
    nan: u8,
}

const E4M3: Minifloat = Minifloat {
    mantissa: 3,
    bias: 7,
    ieee: false,
    nan: E4M3_NAN,
};
const E5M2: Minifloat = Minifloat {
    mantissa: 2,
    bias: 15,
    ieee: true,
    nan: E5M2_NAN,
};

impl Minifloat {
    fn max_exp_field(self) -> u8 {
        (1u8 << (7 - self.mantissa)) - 1
    }

    /// The byte of `x`, which must already be rounded to the format
    /// ([`DType::round_f64`]).
    fn encode(self, x: f64) -> u8 {
        if x.is_nan() {
            return self.nan;
        }
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = x.abs();
        if a.is_infinite() {
            // Only reached for the IEEE-like format: rounding into E4M3
            // turns infinities into NaN.
            return if self.ieee {
                sign | (self.max_exp_field() << self.mantissa)
            } else {
                self.nan
            };
        }
        if a == 0.0 {
            return sign;
        }
        let min_exp = 1 - self.bias;
        let mantissa = self.mantissa as i32;
        // `a` is at least the format's smallest subnormal, so a normal f64.
        let bits = a.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
        if exp < min_exp {
            // Subnormal: `a = m · 2^(min_exp - mantissa)` with `m` below
            // `2^mantissa`; the division by a power of two is exact.
            let m = a / 2f64.powi(min_exp - mantissa);
            sign | (m as u8 & ((1 << self.mantissa) - 1))
        } else {
            let frac = ((bits >> (52 - self.mantissa)) & ((1 << self.mantissa) - 1)) as u8;
            let field = (exp + self.bias).clamp(0, i32::from(self.max_exp_field())) as u8;
            sign | (field << self.mantissa) | frac
        }
    }

    fn decode(self, byte: u8) -> f64 {
        let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
        let field = (byte & 0x7f) >> self.mantissa;
        let m = byte & ((1 << self.mantissa) - 1);
        let mantissa = self.mantissa as i32;
        if field == self.max_exp_field() {
            if self.ieee {
                return if m == 0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            if m == (1 << self.mantissa) - 1 {
                return f64::NAN;
            }
        }
        if field == 0 {
            sign * f64::from(m) * 2f64.powi(1 - self.bias - mantissa)
        } else {
            let significand = 1.0 + f64::from(m) / f64::from(1u32 << self.mantissa);
            sign * significand * 2f64.powi(i32::from(field) - self.bias)
        }
    }
}

/// Appends the encoding of `x` (a value of the float type `dtype`, rounded
/// again here so that any `f64` encodes).
fn push_float(out: &mut Vec<u8>, dtype: DType, x: f64) {
    let x = dtype.round_f64(x);
    match dtype {
        DType::F16 => {
            let bits = if x.is_nan() {
                F16_NAN
            } else {
                half::f16::from_f64(x).to_bits()
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        DType::BF16 => {
            let bits = if x.is_nan() {
                BF16_NAN
            } else {
                half::bf16::from_f64(x).to_bits()
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        DType::F32 => {
            let bits = if x.is_nan() {
                F32_NAN
            } else {
                (x as f32).to_bits()
            };
            out.extend_from_slice(&bits.to_le_bytes());
        }
        DType::F8E4M3 => out.push(E4M3.encode(x)),
        DType::F8E5M2 => out.push(E5M2.encode(x)),
        // F64 (the only other float type).
        _ => {
            let bits = if x.is_nan() { F64_NAN } else { x.to_bits() };
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
}

/// Appends the encoding of `x` (a value of the integer or bool type
/// `dtype`): its low `dtype.bytes()` bytes, two's complement.
fn push_int(out: &mut Vec<u8>, dtype: DType, x: i64) {
    let bytes = dtype.wrap_i64(x).to_le_bytes();
    out.extend_from_slice(&bytes[..dtype.bytes() as usize]);
}

/// Decodes one float element of `dtype` from `chunk` (exactly
/// `dtype.bytes()` long). NaN of any pattern becomes `f64::NAN`.
fn float_from_bytes(dtype: DType, chunk: &[u8]) -> f64 {
    let mut raw = [0u8; 8];
    raw[..chunk.len()].copy_from_slice(chunk);
    let bits = u64::from_le_bytes(raw);
    let x = match dtype {
        DType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        DType::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        DType::F32 => f64::from(f32::from_bits(bits as u32)),
        DType::F8E4M3 => E4M3.decode(bits as u8),
        DType::F8E5M2 => E5M2.decode(bits as u8),
        _ => f64::from_bits(bits),
    };
    if x.is_nan() { f64::NAN } else { x }
}

/// Decodes one integer or bool element of `dtype` from `chunk` (exactly
/// `dtype.bytes()` long): sign-extended for signed types, zero-extended for
/// unsigned ones (`u64` keeps its bit pattern), any non-zero byte is `true`.
fn int_from_bytes(dtype: DType, chunk: &[u8]) -> i64 {
    let mut raw = [0u8; 8];
    raw[..chunk.len()].copy_from_slice(chunk);
    dtype.wrap_i64(i64::from_le_bytes(raw))
}

impl Tensor {
    /// Little-endian device encoding: each element in its dtype's storage
    /// format (f16/bf16/f32/f64 IEEE bits, float8 e4m3fn/e5m2 bytes, ints
    /// two's complement at their width, bool one byte 0/1). NaN becomes the
    /// dtype's canonical quiet NaN (positive, quiet bit set: f16 `0x7E00`,
    /// bf16 `0x7FC0`, f32 `0x7FC00000`, f64 `0x7FF8000000000000`, e4m3fn
    /// `0x7F`, e5m2 `0x7E`); the sign of zero is kept.
    ///
    /// The result holds `self.len() * dtype.bytes()` bytes: the stored
    /// elements in row-major order. Values are rounded (wrapped) to the
    /// dtype on the way, so a tensor whose values are not already rounded
    /// still encodes as a cast would.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let dtype = self.dtype;
        let mut out = Vec::with_capacity(self.len().saturating_mul(dtype.bytes() as usize));
        match (&self.data, dtype.is_float()) {
            (TensorData::Float(v), true) => v.iter().for_each(|&x| push_float(&mut out, dtype, x)),
            (TensorData::Int(v), false) => v.iter().for_each(|&x| push_int(&mut out, dtype, x)),
            // Storage that does not fit the dtype (see `check`): converted
            // as a cast does.
            (TensorData::Float(v), false) => v
                .iter()
                .for_each(|&x| push_int(&mut out, dtype, dtype.round_f64(x) as i64)),
            (TensorData::Int(v), true) => v
                .iter()
                .for_each(|&x| push_float(&mut out, dtype, int_to_f64(x, dtype))),
        }
        out
    }

    /// The inverse of [`Tensor::to_le_bytes`]: decodes `bytes` (length must
    /// be `numel * dtype.bytes()`) into a tensor of `dtype` and `shape`.
    /// Every NaN pattern decodes to NaN, and any non-zero bool byte to
    /// `true`.
    pub fn from_le_bytes(
        dtype: DType,
        shape: Vec<usize>,
        bytes: &[u8],
    ) -> Result<Tensor, TensorBytesError> {
        let width = dtype.bytes() as usize;
        let expected = element_count(&shape)
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| TensorBytesError::TooLarge {
                shape: shape.clone(),
            })?;
        if bytes.len() != expected {
            return Err(TensorBytesError::WrongLength {
                expected,
                actual: bytes.len(),
            });
        }
        let chunks = bytes.chunks_exact(width.max(1));
        let data = if dtype.is_float() {
            TensorData::Float(chunks.map(|c| float_from_bytes(dtype, c)).collect())
        } else {
            TensorData::Int(chunks.map(|c| int_from_bytes(dtype, c)).collect())
        };
        Ok(Tensor { dtype, shape, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(dtype: DType, values: &[f64]) -> Tensor {
        Tensor {
            dtype,
            shape: vec![values.len()],
            data: TensorData::Float(values.to_vec()),
        }
    }

    fn int(dtype: DType, values: &[i64]) -> Tensor {
        Tensor {
            dtype,
            shape: vec![values.len()],
            data: TensorData::Int(values.to_vec()),
        }
    }

    /// Encodes and decodes, checking the byte count, and compares bit for
    /// bit (NaN with NaN).
    fn round_trip(t: &Tensor) {
        let bytes = t.to_le_bytes();
        assert_eq!(bytes.len(), t.len() * t.dtype.bytes() as usize, "{t:?}");
        let back = Tensor::from_le_bytes(t.dtype, t.shape.clone(), &bytes)
            .unwrap_or_else(|e| panic!("{t:?}: {e}"));
        assert_eq!(back.dtype, t.dtype);
        assert_eq!(back.shape, t.shape);
        match (&t.data, &back.data) {
            (TensorData::Float(a), TensorData::Float(b)) => {
                assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(b) {
                    if x.is_nan() {
                        assert!(y.is_nan(), "{} {x} became {y}", t.dtype);
                    } else {
                        assert_eq!(x.to_bits(), y.to_bits(), "{} {x} became {y}", t.dtype);
                    }
                }
            }
            (a, b) => assert_eq!(a, b, "{}", t.dtype),
        }
        assert_eq!(back.to_le_bytes(), bytes, "{}", t.dtype);
    }

    #[test]
    fn every_dtype_round_trips() {
        for dtype in DType::ALL {
            if dtype.is_float() {
                let max = dtype.max_finite().unwrap_or(f64::MAX);
                // Smallest subnormal: 2^(min_exp - mantissa bits).
                let tiny = match dtype {
                    DType::F16 => 2f64.powi(-24),
                    DType::BF16 => 2f64.powi(-133),
                    DType::F32 => f64::from(f32::from_bits(1)),
                    DType::F64 => f64::from_bits(1),
                    DType::F8E4M3 => 2f64.powi(-9),
                    DType::F8E5M2 => 2f64.powi(-16),
                    _ => unreachable!(),
                };
                let mut values = vec![
                    0.0,
                    -0.0,
                    1.0,
                    -2.5,
                    0.1,
                    max,
                    -max,
                    tiny,
                    -tiny,
                    3.0 * tiny,
                    f64::NAN,
                ];
                if dtype != DType::F8E4M3 {
                    values.extend([f64::INFINITY, f64::NEG_INFINITY]);
                }
                let values: Vec<f64> = values.iter().map(|&x| dtype.round_f64(x)).collect();
                assert_eq!(dtype.round_f64(tiny), tiny, "{dtype}");
                assert_ne!(dtype.round_f64(tiny / 2.0), tiny, "{dtype}");
                round_trip(&float(dtype, &values));
            } else {
                let (lo, hi) = dtype.int_range().unwrap_or((0, 1));
                let values: Vec<i64> = [lo, hi, 0, 1, -1, 2, -2, 100, -100]
                    .iter()
                    .map(|&v| dtype.wrap_i64(v as i64))
                    .collect();
                round_trip(&int(dtype, &values));
            }
        }
    }

    #[test]
    fn sign_of_zero_is_kept() {
        for dtype in DType::ALL.into_iter().filter(|d| d.is_float()) {
            let bytes = float(dtype, &[0.0, -0.0]).to_le_bytes();
            let n = dtype.bytes() as usize;
            assert!(bytes[..n].iter().all(|&b| b == 0), "{dtype}");
            assert_eq!(bytes[2 * n - 1], 0x80, "{dtype}");
            assert!(bytes[n..2 * n - 1].iter().all(|&b| b == 0), "{dtype}");
        }
    }

    #[test]
    fn known_encodings() {
        let cases: [(Tensor, &[u8]); 16] = [
            (float(DType::F16, &[1.0]), &[0x00, 0x3C]),
            (float(DType::F16, &[-2.0]), &[0x00, 0xC0]),
            (float(DType::F16, &[65504.0]), &[0xFF, 0x7B]),
            (float(DType::F16, &[2f64.powi(-24)]), &[0x01, 0x00]),
            (float(DType::BF16, &[1.0]), &[0x80, 0x3F]),
            (float(DType::F32, &[1.0]), &[0x00, 0x00, 0x80, 0x3F]),
            (float(DType::F64, &[1.0]), &[0, 0, 0, 0, 0, 0, 0xF0, 0x3F]),
            (float(DType::F8E4M3, &[1.0]), &[0x38]),
            (float(DType::F8E4M3, &[448.0, -448.0]), &[0x7E, 0xFE]),
            (float(DType::F8E4M3, &[2f64.powi(-9)]), &[0x01]),
            (float(DType::F8E5M2, &[1.0]), &[0x3C]),
            (
                float(DType::F8E5M2, &[57344.0, f64::NEG_INFINITY]),
                &[0x7B, 0xFC],
            ),
            (int(DType::I16, &[-2]), &[0xFE, 0xFF]),
            (int(DType::U32, &[0xDEAD_BEEF]), &[0xEF, 0xBE, 0xAD, 0xDE]),
            (int(DType::U64, &[-1]), &[0xFF; 8]),
            (int(DType::Bool, &[1, 0]), &[1, 0]),
        ];
        for (t, bytes) in cases {
            assert_eq!(t.to_le_bytes(), bytes, "{t:?}");
            let back = Tensor::from_le_bytes(t.dtype, t.shape.clone(), bytes).expect("decodes");
            assert_eq!(back, t);
        }
        assert_eq!(
            Tensor::from_le_bytes(DType::I16, vec![1], &[0xFE, 0xFF]).map(|t| t.data),
            Ok(TensorData::Int(vec![-2]))
        );
        assert_eq!(
            Tensor::from_le_bytes(DType::I8, vec![2], &[0x80, 0x7F]).map(|t| t.data),
            Ok(TensorData::Int(vec![-128, 127]))
        );
        assert_eq!(
            Tensor::from_le_bytes(DType::U8, vec![1], &[0xFF]).map(|t| t.data),
            Ok(TensorData::Int(vec![255]))
        );
    }

    #[test]
    fn nan_is_canonical() {
        let cases: [(DType, &[u8]); 6] = [
            (DType::F16, &[0x00, 0x7E]),
            (DType::BF16, &[0xC0, 0x7F]),
            (DType::F32, &[0x00, 0x00, 0xC0, 0x7F]),
            (DType::F64, &[0, 0, 0, 0, 0, 0, 0xF8, 0x7F]),
            (DType::F8E4M3, &[0x7F]),
            (DType::F8E5M2, &[0x7E]),
        ];
        for (dtype, canonical) in cases {
            for nan in [f64::NAN, -f64::NAN, f64::from_bits(0x7FF0_0000_0000_0001)] {
                assert_eq!(float(dtype, &[nan]).to_le_bytes(), canonical, "{dtype}");
            }
        }
        // E4M3 has no infinity: it rounds to NaN, as a cast does.
        assert_eq!(float(DType::F8E4M3, &[f64::INFINITY]).to_le_bytes(), [0x7F]);
        // Every NaN pattern decodes to NaN.
        for bytes in [[0xFFu8], [0x7F], [0x7D], [0xFE]] {
            let e5m2 = Tensor::from_le_bytes(DType::F8E5M2, vec![1], &bytes).expect("decodes");
            assert!(e5m2.to_f64_vec()[0].is_nan(), "{bytes:?}");
        }
        let e4m3 = Tensor::from_le_bytes(DType::F8E4M3, vec![2], &[0xFF, 0x7F]).expect("decodes");
        assert!(e4m3.to_f64_vec().iter().all(|x| x.is_nan()));
    }

    /// Every bit pattern of the 8- and 16-bit float types decodes to a
    /// value that is its own rounding and encodes back to the same bits
    /// (NaN to the canonical NaN).
    #[test]
    fn small_floats_exhaustively() {
        for (dtype, width) in [
            (DType::F16, 2usize),
            (DType::BF16, 2),
            (DType::F8E4M3, 1),
            (DType::F8E5M2, 1),
        ] {
            let count = 1usize << (8 * width);
            let bytes: Vec<u8> = (0..count)
                .flat_map(|i| (i as u16).to_le_bytes().into_iter().take(width))
                .collect();
            let t = Tensor::from_le_bytes(dtype, vec![count], &bytes).expect("decodes");
            let values = t.to_f64_vec();
            let again = t.to_le_bytes();
            let canonical = float(dtype, &[f64::NAN]).to_le_bytes();
            for (i, x) in values.iter().enumerate() {
                let original = &bytes[i * width..(i + 1) * width];
                let encoded = &again[i * width..(i + 1) * width];
                if x.is_nan() {
                    assert_eq!(encoded, canonical, "{dtype} pattern {i:#x}");
                } else {
                    assert_eq!(dtype.round_f64(*x).to_bits(), x.to_bits(), "{dtype} {i:#x}");
                    assert_eq!(encoded, original, "{dtype} pattern {i:#x} = {x}");
                }
            }
            // NaN patterns: f16/bf16 have 2·(2^m − 1) each, e4m3fn 2, e5m2 6.
            let nans = values.iter().filter(|x| x.is_nan()).count();
            let expected = match dtype {
                DType::F16 => 2 * 1023,
                DType::BF16 => 2 * 127,
                DType::F8E4M3 => 2,
                _ => 6,
            };
            assert_eq!(nans, expected, "{dtype}");
        }
    }

    /// E5M2 is the upper byte of an f16: an independent check of the
    /// minifloat decoder.
    #[test]
    fn e5m2_matches_the_upper_byte_of_f16() {
        for b in 0..=255u8 {
            let e5m2 = Tensor::from_le_bytes(DType::F8E5M2, vec![1], &[b]).expect("decodes");
            let f16 = half::f16::from_bits(u16::from(b) << 8).to_f64();
            let x = e5m2.to_f64_vec()[0];
            if f16.is_nan() {
                assert!(x.is_nan(), "{b:#x}");
            } else {
                assert_eq!(x.to_bits(), f16.to_bits(), "{b:#x}");
            }
        }
    }

    /// E4M3 values against their definition: `(-1)^s · 2^(e-7) · (1 + m/8)`,
    /// subnormals `(-1)^s · 2^-6 · m/8`.
    #[test]
    fn e4m3_matches_its_definition() {
        for b in 0..=255u8 {
            let t = Tensor::from_le_bytes(DType::F8E4M3, vec![1], &[b]).expect("decodes");
            let x = t.to_f64_vec()[0];
            let s = if b & 0x80 != 0 { -1.0 } else { 1.0 };
            let e = i32::from((b >> 3) & 0xF);
            let m = f64::from(b & 7);
            if b & 0x7F == 0x7F {
                assert!(x.is_nan(), "{b:#x}");
            } else if e == 0 {
                assert_eq!(x, s * 2f64.powi(-6) * m / 8.0, "{b:#x}");
            } else {
                assert_eq!(x, s * 2f64.powi(e - 7) * (1.0 + m / 8.0), "{b:#x}");
            }
        }
    }

    #[test]
    fn wrong_length_is_an_error() {
        assert_eq!(
            Tensor::from_le_bytes(DType::F32, vec![2, 3], &[0; 23]),
            Err(TensorBytesError::WrongLength {
                expected: 24,
                actual: 23
            })
        );
        assert_eq!(
            Tensor::from_le_bytes(DType::F16, vec![1], &[0; 3]),
            Err(TensorBytesError::WrongLength {
                expected: 2,
                actual: 3
            })
        );
        assert_eq!(
            Tensor::from_le_bytes(DType::F8E4M3, vec![usize::MAX, 2], &[]),
            Err(TensorBytesError::TooLarge {
                shape: vec![usize::MAX, 2]
            })
        );
        assert_eq!(
            Tensor::from_le_bytes(DType::F64, vec![usize::MAX / 4], &[]),
            Err(TensorBytesError::TooLarge {
                shape: vec![usize::MAX / 4]
            })
        );
        assert_eq!(
            TensorBytesError::WrongLength {
                expected: 24,
                actual: 23
            }
            .to_string(),
            "expected 24 bytes, got 23"
        );
        // A scalar (empty shape) is one element; an empty dimension none.
        let scalar = Tensor::from_le_bytes(DType::I32, Vec::new(), &[7, 0, 0, 0]).expect("scalar");
        assert_eq!(scalar.data, TensorData::Int(vec![7]));
        let empty = Tensor::from_le_bytes(DType::F16, vec![0, 4], &[]).expect("empty");
        assert!(empty.is_empty());
    }

    #[test]
    fn unrounded_values_encode_as_a_cast() {
        // 1 + 2^-11 rounds to 1.0 in f16 (ties to even).
        assert_eq!(
            float(DType::F16, &[1.0 + 2f64.powi(-11)]).to_le_bytes(),
            [0x00, 0x3C]
        );
        assert_eq!(int(DType::I8, &[200]).to_le_bytes(), [200]);
        assert_eq!(int(DType::Bool, &[5]).to_le_bytes(), [1]);
        let mismatched = Tensor {
            dtype: DType::I16,
            shape: vec![1],
            data: TensorData::Float(vec![-2.7]),
        };
        assert_eq!(mismatched.to_le_bytes(), [0xFE, 0xFF]);
    }
}
