//! Test inputs: one tensor per kernel parameter, drawn from a generator
//! seeded by the test id, so every run of a test — in any order, on any
//! machine, in any tilec version — sees the same values.
//!
//! - Floats are uniform in `[-2, 2)`, rounded to the parameter's dtype.
//!   Small values keep long accumulations far from overflow, and `[-2, 2)`
//!   crosses zero so sums cancel (which the accumulation bound must
//!   survive).
//! - Signed integers are uniform in `[-8, 8]`, unsigned in `[0, 16)`, bools
//!   0 or 1: integer kernels (sums, products) stay far from overflow.
//! - With [`Case::special_values`](crate::corpus::Case), about one float
//!   element in eight is replaced by a special value of the dtype: `±0`,
//!   `±inf`, NaN, the smallest and largest subnormal, the smallest normal,
//!   and `±` the largest finite value. Types without infinity (`e4m3`)
//!   get NaN where infinity was drawn, as rounding gives.
//!
//! Each parameter draws from its own stream, so changing one parameter's
//! shape leaves the others' values alone. The generator is SplitMix64
//! (Steele, Lea and Flood, 2014): tiny and fixed forever, unlike a library
//! generator whose sequence may change between versions.

use crate::tolerance::min_normal;
use std::collections::BTreeMap;
use tilec_core::interp::{self, InterpError, Tensor, TensorData};
use tilec_core::ir::{DType, DTypeKind, Function};

/// The SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

/// 2^64 divided by the golden ratio, rounded to odd.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The stream of parameter `index` for a test seeded with `seed`.
    pub fn for_param(seed: u64, index: usize) -> Self {
        let mixed = SplitMix64::new(seed).next_u64();
        SplitMix64::new(mixed ^ (index as u64).wrapping_add(1).wrapping_mul(GOLDEN_GAMMA))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi` (`hi - lo` small).
    pub fn int_in(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (self.next_u64() % span) as i64
    }
}

/// The special values of a float dtype, rounded to it.
pub fn special_values(dtype: DType) -> Vec<f64> {
    let Some(max) = dtype.max_finite() else {
        return Vec::new();
    };
    let normal = min_normal(dtype);
    let smallest_sub = crate::tolerance::ulp_spacing(0.0, dtype);
    let largest_sub = normal - smallest_sub;
    [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        smallest_sub,
        -largest_sub,
        normal,
        max,
        -max,
    ]
    .into_iter()
    .map(|x| dtype.round_f64(x))
    .collect()
}

/// One random tensor of `dtype` and `shape`.
pub fn random_tensor(dtype: DType, shape: &[usize], rng: &mut SplitMix64, special: bool) -> Tensor {
    let len: usize = shape.iter().product();
    let specials = if special {
        special_values(dtype)
    } else {
        Vec::new()
    };
    let data = match dtype.kind() {
        DTypeKind::Float => TensorData::Float(
            (0..len)
                .map(|_| {
                    if !specials.is_empty() && rng.next_u64().is_multiple_of(8) {
                        specials[(rng.next_u64() % specials.len() as u64) as usize]
                    } else {
                        dtype.round_f64(rng.unit() * 4.0 - 2.0)
                    }
                })
                .collect(),
        ),
        DTypeKind::Signed => TensorData::Int((0..len).map(|_| rng.int_in(-8, 8)).collect()),
        DTypeKind::Unsigned => TensorData::Int((0..len).map(|_| rng.int_in(0, 15)).collect()),
        DTypeKind::Bool => TensorData::Int((0..len).map(|_| rng.int_in(0, 1)).collect()),
    };
    Tensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// The inputs of one test: one tensor per parameter of `func`, in order.
/// Output parameters get random values too: a kernel must overwrite what
/// it writes, and what it does not write must come back unchanged.
pub fn for_function(func: &Function, seed: u64, special: bool) -> Result<Vec<Tensor>, InterpError> {
    let shapes = interp::param_shapes(func, &BTreeMap::new())?;
    Ok(func
        .params
        .iter()
        .zip(shapes)
        .enumerate()
        .map(|(i, (param, shape))| {
            let dtype = func.buffers[param.buffer].dtype;
            random_tensor(dtype, &shape, &mut SplitMix64::for_param(seed, i), special)
        })
        .collect())
}

/// `tensor` with every float element replaced by its absolute value: the
/// inputs of the magnitude run of an accumulation test (see
/// `docs/conformance.md`).
pub fn absolute(tensor: &Tensor) -> Tensor {
    let data = match &tensor.data {
        TensorData::Float(v) => TensorData::Float(v.iter().map(|x| x.abs()).collect()),
        TensorData::Int(v) => TensorData::Int(v.clone()),
    };
    Tensor {
        dtype: tensor.dtype,
        shape: tensor.shape.clone(),
        data,
    }
}

/// Bit patterns of every element: NaN equals NaN, `-0` differs from `+0`.
pub fn bits(tensor: &Tensor) -> Vec<u64> {
    match &tensor.data {
        TensorData::Float(v) => v.iter().map(|x| x.to_bits()).collect(),
        TensorData::Int(v) => v.iter().map(|&x| x as u64).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_fixed_and_independent() {
        // The published SplitMix64 sequence for seed 0 starts with this.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let a = SplitMix64::for_param(7, 0).next_u64();
        let b = SplitMix64::for_param(7, 1).next_u64();
        assert_ne!(a, b);
        assert_eq!(a, SplitMix64::for_param(7, 0).next_u64());
    }

    #[test]
    fn specials_are_in_the_dtype() {
        for dtype in [
            DType::F16,
            DType::BF16,
            DType::F32,
            DType::F8E4M3,
            DType::F8E5M2,
        ] {
            let s = special_values(dtype);
            assert_eq!(s.len(), 10);
            for x in &s {
                assert!(x.is_nan() || dtype.round_f64(*x) == *x, "{dtype:?}: {x}");
            }
            assert!(s[1].is_sign_negative() && s[1] == 0.0);
            assert!(s[5] > 0.0 && s[5] < min_normal(dtype));
        }
        // e4m3 has no infinity: it rounds to NaN.
        assert!(special_values(DType::F8E4M3)[2].is_nan());
        assert!(special_values(DType::I32).is_empty());
    }

    #[test]
    fn special_inputs_contain_specials() {
        let mut rng = SplitMix64::new(1);
        let t = random_tensor(DType::F32, &[4096], &mut rng, true);
        let v = t.to_f64_vec();
        assert!(v.iter().any(|x| x.is_nan()));
        assert!(v.iter().any(|x| x.is_infinite()));
        let plain = random_tensor(DType::F32, &[4096], &mut rng, false).to_f64_vec();
        assert!(plain.iter().all(|x| (-2.0..2.0).contains(x)));
    }
}
