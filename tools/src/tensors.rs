//! Host tensors for `tilec run`: random inputs, poisoned outputs, and the
//! statistics printed in the run summary.

use serde::Serialize;
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::{DType, DTypeKind};

use crate::rng::{Normal, SplitMix64};

/// Signed integer inputs are drawn uniformly from `-INT_RANGE ..= INT_RANGE`;
/// small values keep integer kernels (sums, products) far from overflow.
const INT_RANGE: i64 = 8;
/// Unsigned integer inputs are drawn from `0 .. UINT_LIMIT`.
const UINT_LIMIT: i64 = 16;
/// Integer outputs start as this pattern wrapped to their width, so that an
/// element the kernel forgot to write stands out (`0x5A` bytes).
const INT_POISON: i64 = 0x5A5A_5A5A_5A5A_5A5A;

/// Tensors at least this large are generated on several threads.
const PARALLEL_ELEMENTS: usize = 1 << 20;

/// A tensor of `dtype` and `shape` filled with values drawn from `rng`:
/// floats N(0, 1) rounded to the dtype, integers uniform in a small range,
/// bools 0 or 1.
///
/// Element `e` depends only on `rng` and `e`: every element takes one draw
/// (normals in Box–Muller pairs, two draws per pair), so a part of the
/// tensor that starts at an even element starts from `rng` skipped by that
/// many draws. Large tensors are filled in such parts in parallel, with the
/// same values as one thread gives.
pub fn random(dtype: DType, shape: &[usize], rng: SplitMix64) -> Tensor {
    let count: usize = shape.iter().product();
    let threads = if count >= PARALLEL_ELEMENTS {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    } else {
        1
    };
    random_in_parts(dtype, shape, rng, threads)
}

/// [`random`] in `threads` parts.
fn random_in_parts(dtype: DType, shape: &[usize], rng: SplitMix64, threads: usize) -> Tensor {
    let count = shape.iter().product();
    let data = match dtype.kind() {
        DTypeKind::Float => TensorData::Float(fill(count, rng, threads, |rng, part| {
            let mut normal = Normal::new(rng);
            for x in part {
                *x = dtype.round_f64(normal.sample());
            }
        })),
        DTypeKind::Signed => TensorData::Int(fill(count, rng, threads, |mut rng, part| {
            for x in part {
                *x = dtype.wrap_i64(rng.int_in(-INT_RANGE, INT_RANGE));
            }
        })),
        DTypeKind::Unsigned => TensorData::Int(fill(count, rng, threads, |mut rng, part| {
            for x in part {
                *x = rng.int_in(0, UINT_LIMIT - 1);
            }
        })),
        DTypeKind::Bool => TensorData::Int(fill(count, rng, threads, |mut rng, part| {
            for x in part {
                *x = rng.int_in(0, 1);
            }
        })),
    };
    Tensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// `count` values in up to `threads` parts filled on their own threads by
/// `part(rng_at_start, values)`; parts start at even elements.
fn fill<V: Clone + Default + Send>(
    count: usize,
    rng: SplitMix64,
    threads: usize,
    part: impl Fn(SplitMix64, &mut [V]) + Sync,
) -> Vec<V> {
    let mut out = vec![V::default(); count];
    if threads <= 1 || count < 2 {
        part(rng, &mut out);
        return out;
    }
    let per = count.div_ceil(threads).next_multiple_of(2);
    let part = &part;
    std::thread::scope(|scope| {
        for (i, values) in out.chunks_mut(per).enumerate() {
            let start = rng.skipped((i * per) as u64);
            scope.spawn(move || part(start, values));
        }
    });
    out
}

/// A tensor whose every element is a poison value: NaN for floats, a fixed
/// bit pattern for integers (1 for bools).
pub fn poisoned(dtype: DType, shape: &[usize]) -> Tensor {
    let count = shape.iter().product();
    let data = if dtype.is_float() {
        TensorData::Float(vec![f64::NAN; count])
    } else {
        TensorData::Int(vec![dtype.wrap_i64(INT_POISON); count])
    };
    Tensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

/// Whether two tensors differ in any element, comparing bit patterns (so a
/// NaN that stayed NaN is unchanged).
pub fn changed(before: &Tensor, after: &Tensor) -> bool {
    if before.shape != after.shape || before.dtype != after.dtype {
        return true;
    }
    match (&before.data, &after.data) {
        (TensorData::Float(a), TensorData::Float(b)) => {
            a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.to_bits() != y.to_bits())
        }
        (TensorData::Int(a), TensorData::Int(b)) => a != b,
        _ => true,
    }
}

/// Summary statistics of a tensor. `min`, `max`, `mean` and `abs_sum` are
/// over the finite elements only (`None` when there is none); NaN and
/// infinite elements are counted apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub abs_sum: Option<f64>,
    pub nan: usize,
    pub inf: usize,
}

pub fn stats(tensor: &Tensor) -> Stats {
    let mut result = Stats {
        min: None,
        max: None,
        mean: None,
        abs_sum: None,
        nan: 0,
        inf: 0,
    };
    let (mut sum, mut abs_sum, mut finite) = (0.0f64, 0.0f64, 0usize);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in tensor.to_f64_vec() {
        if v.is_nan() {
            result.nan += 1;
        } else if v.is_infinite() {
            result.inf += 1;
        } else {
            finite += 1;
            sum += v;
            abs_sum += v.abs();
            min = min.min(v);
            max = max.max(v);
        }
    }
    if finite > 0 {
        result.min = Some(min);
        result.max = Some(max);
        result.mean = Some(sum / finite as f64);
        result.abs_sum = Some(abs_sum);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_on_threads_give_the_values_of_one_thread() {
        for dtype in [DType::F16, DType::F32, DType::I8, DType::U8, DType::Bool] {
            for count in [1usize, 2, 7, 1001] {
                let rng = SplitMix64::for_param(3, 1);
                let one = random_in_parts(dtype, &[count], rng.clone(), 1);
                for threads in [2, 3, 8] {
                    let parts = random_in_parts(dtype, &[count], rng.clone(), threads);
                    assert_eq!(
                        one.to_le_bytes(),
                        parts.to_le_bytes(),
                        "{dtype} x {count} on {threads} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn random_inputs_respect_dtype_and_seed() {
        let a = random(DType::F16, &[4, 8], SplitMix64::for_param(1, 0));
        let b = random(DType::F16, &[4, 8], SplitMix64::for_param(1, 0));
        assert_eq!(a, b);
        let values = a.to_f64_vec();
        assert_eq!(values.len(), 32);
        assert!(values.iter().all(|&v| DType::F16.round_f64(v) == v));

        let ints = random(DType::I8, &[1000], SplitMix64::new(5)).to_f64_vec();
        assert!(ints.iter().all(|v| (-8.0..=8.0).contains(v)));
        let uints = random(DType::U32, &[1000], SplitMix64::new(5)).to_f64_vec();
        assert!(uints.iter().all(|v| (0.0..16.0).contains(v)));
        let bools = random(DType::Bool, &[1000], SplitMix64::new(5)).to_f64_vec();
        assert!(bools.iter().all(|&v| v == 0.0 || v == 1.0));
        assert!(bools.contains(&0.0) && bools.contains(&1.0));
    }

    #[test]
    fn poison_and_change_detection() {
        let p = poisoned(DType::F32, &[3]);
        assert!(p.to_f64_vec().iter().all(|v| v.is_nan()));
        assert!(!changed(&p, &p.clone()));
        let mut q = p.clone();
        if let TensorData::Float(v) = &mut q.data {
            v[1] = 0.0;
        }
        assert!(changed(&p, &q));
        assert_eq!(poisoned(DType::U8, &[1]).to_f64_vec(), vec![90.0]);
    }

    #[test]
    fn stats_skip_non_finite_values() {
        let t = Tensor {
            dtype: DType::F32,
            shape: vec![5],
            data: TensorData::Float(vec![1.0, -3.0, f64::NAN, f64::INFINITY, 2.0]),
        };
        let s = stats(&t);
        assert_eq!(s.min, Some(-3.0));
        assert_eq!(s.max, Some(2.0));
        assert_eq!(s.mean, Some(0.0));
        assert_eq!(s.abs_sum, Some(6.0));
        assert_eq!((s.nan, s.inf), (1, 1));
        assert_eq!(stats(&poisoned(DType::F16, &[2])).mean, None);
    }
}
