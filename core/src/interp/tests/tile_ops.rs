//! Tile operations: copy, gemm, fill, reduce, cumsum, atomic_add.

use super::{Fb, assert_same, block, tensor};
use crate::interp::{InterpError, Tensor, TensorData, run};
use crate::ir::{AtomicOp, AtomicValue, BinaryOp, DType, GemmPolicy, ReduceKind, Scope, Stmt};

fn f32s(values: &[f64]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v as f32)).collect()
}

#[test]
fn copy_converts_like_a_cast() {
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[2, 3]);
    let h = fb.param("H", DType::F16, &[2, 3]);
    let i = fb.param("I", DType::I32, &[2, 3]);
    let u = fb.param("U", DType::U8, &[2, 3]);
    let (src, dst_h) = (fb.whole(a), fb.whole(h));
    let (src2, dst_i) = (fb.whole(a), fb.whole(i));
    let (src3, dst_u) = (fb.whole(i), fb.whole(u));
    fb.body(vec![
        Stmt::Copy { src, dst: dst_h },
        Stmt::Copy {
            src: src2,
            dst: dst_i,
        },
        Stmt::Copy {
            src: src3,
            dst: dst_u,
        },
    ]);
    let values = f32s(&[0.1, 1.0 / 3.0, 70000.0, -2.5, -300.7, 65519.0]);
    let mut args = vec![
        tensor(DType::F32, &[2, 3], &values),
        Tensor::zeros(DType::F16, [2, 3]),
        Tensor::zeros(DType::I32, [2, 3]),
        Tensor::zeros(DType::U8, [2, 3]),
    ];
    run(&fb.f, &mut args).expect("run");
    let f16: Vec<f64> = values
        .iter()
        .map(|&v| f64::from(half::f16::from_f64(v)))
        .collect();
    assert_same(&args[1].to_f64_vec(), &f16);
    assert_eq!(
        args[2].data,
        TensorData::Int(vec![0, 0, 70000, -2, -300, 65519])
    );
    // 70000 mod 256 = 112, -2 → 254, -300 → 212, 65519 mod 256 = 239.
    assert_eq!(
        args[3].data,
        TensorData::Int(vec![0, 0, 112, 254, 212, 239])
    );
}

#[test]
fn copy_on_ragged_tiles_reads_zero_and_skips_stores() {
    // A 5×7 input tiled by 4×4 blocks over a 2×2 grid: A → S (shared) → B
    // must reproduce A exactly; S is also dumped per block into T to see the
    // zeros read outside A.
    let (rows, cols) = (5usize, 7usize);
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[5, 7]);
    let b = fb.param("B", DType::F32, &[5, 7]);
    let t = fb.param("T", DType::F32, &[2, 2, 4, 4]);
    let s = fb.buffer("S", DType::F32, Scope::Shared, &[4, 4]);
    let kernel = fb.kernel(&[2, 2], |fb, v| {
        let (bx, by) = (fb.v(v[0]), fb.v(v[1]));
        let four = fb.int(4);
        let one = fb.int(1);
        let zero = fb.int(0);
        let row0 = fb.bin(BinaryOp::Mul, by, four);
        let col0 = fb.bin(BinaryOp::Mul, bx, four);
        let tile_a = fb.region(a, &[(row0, four), (col0, four)]);
        let tile_b = fb.region(b, &[(row0, four), (col0, four)]);
        let tile_t = fb.region(t, &[(by, one), (bx, one), (zero, four), (zero, four)]);
        let (s1, s2, s3) = (fb.whole(s), fb.whole(s), fb.whole(s));
        let alloc = fb.alloc(s);
        block(vec![
            alloc,
            Stmt::Copy {
                src: tile_a,
                dst: s1,
            },
            Stmt::Copy {
                src: s2,
                dst: tile_b,
            },
            Stmt::Copy {
                src: s3,
                dst: tile_t,
            },
        ])
    });
    fb.body(vec![kernel]);
    let values: Vec<f64> = (0..rows * cols).map(|k| k as f64 + 1.0).collect();
    let mut args = vec![
        tensor(DType::F32, &[5, 7], &values),
        Tensor::from_f64(DType::F32, [5, 7], vec![-1.0; 35]).expect("tensor"),
        Tensor::from_f64(DType::F32, [2, 2, 4, 4], vec![-1.0; 64]).expect("tensor"),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].to_f64_vec(), values);
    let mut expected_t = vec![0.0; 64];
    for by in 0..2 {
        for bx in 0..2 {
            for i in 0..4 {
                for j in 0..4 {
                    let (r, c) = (by * 4 + i, bx * 4 + j);
                    if r < rows && c < cols {
                        expected_t[((by * 2 + bx) * 4 + i) * 4 + j] = values[r * cols + c];
                    }
                }
            }
        }
    }
    assert_eq!(args[2].to_f64_vec(), expected_t);
}

#[test]
fn tile_ops_on_shared_buffers_ignore_out_of_bounds_elements() {
    // S is 4×2 shared. Copy A (4×2) into S[2:6, :] (rows 4, 5 fall outside:
    // skipped), then S[3:6, 0:2] (rows 4, 5 read as 0) out to O (3×2).
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[4, 2]);
    let o = fb.param("O", DType::F32, &[3, 2]);
    let s = fb.buffer("S", DType::F32, Scope::Shared, &[4, 2]);
    let alloc = fb.alloc(s);
    let whole_s = fb.whole(s);
    let zero = fb.flit(DType::F32, 0.0);
    let src = fb.whole(a);
    let dst = fb.region_lit(s, &[(2, 4), (0, 2)]);
    let back = fb.region_lit(s, &[(3, 3), (0, 2)]);
    let out = fb.whole(o);
    fb.body(vec![
        alloc,
        Stmt::Fill {
            dst: whole_s,
            value: zero,
        },
        Stmt::Copy { src, dst },
        Stmt::Copy {
            src: back,
            dst: out,
        },
    ]);
    let mut args = vec![
        tensor(
            DType::F32,
            &[4, 2],
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        ),
        Tensor::zeros(DType::F32, [3, 2]),
    ];
    run(&fb.f, &mut args).expect("run");
    // S = [0,0; 0,0; 1,2; 3,4]; S[3:6] = [3,4; (0,0); (0,0)].
    assert_eq!(args[1].to_f64_vec(), vec![3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn copy_pairs_regions_after_dropping_unit_extents() {
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[2, 4, 3]);
    let o = fb.param("O", DType::F32, &[4, 3]);
    let p = fb.param("P", DType::F32, &[3]);
    let slab = fb.region_lit(a, &[(1, 1), (0, 4), (0, 3)]);
    let row = fb.region_lit(a, &[(0, 1), (1, 1), (0, 3)]);
    let (whole_o, whole_p) = (fb.whole(o), fb.whole(p));
    fb.body(vec![
        Stmt::Copy {
            src: slab,
            dst: whole_o,
        },
        Stmt::Copy {
            src: row,
            dst: whole_p,
        },
    ]);
    let values: Vec<f64> = (0..24).map(f64::from).collect();
    let mut args = vec![
        tensor(DType::F32, &[2, 4, 3], &values),
        Tensor::zeros(DType::F32, [4, 3]),
        Tensor::zeros(DType::F32, [3]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].to_f64_vec(), values[12..24].to_vec());
    assert_eq!(args[2].to_f64_vec(), vec![3.0, 4.0, 5.0]);

    // 4×3 into 3×4 is a shape error, reported with the statement's span.
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[4, 3]);
    let q = fb.param("Q", DType::F32, &[3, 4]);
    let (src, dst) = (fb.whole(a), fb.whole(q));
    fb.body(vec![Stmt::Copy { src, dst }]);
    let mut args = vec![
        Tensor::zeros(DType::F32, [4, 3]),
        Tensor::zeros(DType::F32, [3, 4]),
    ];
    let err = run(&fb.f, &mut args).expect_err("shape mismatch");
    assert!(
        matches!(err, InterpError::TileShape { op: "copy", .. }),
        "{err}"
    );
    assert_eq!(err.span(), Some(crate::ir::Span::new(0, 5)));
}

#[test]
fn overlapping_copy_reads_before_writing() {
    let mut fb = Fb::new();
    let a = fb.param("A", DType::I32, &[1, 4]);
    let src = fb.region_lit(a, &[(0, 1), (0, 3)]);
    let dst = fb.region_lit(a, &[(0, 1), (1, 3)]);
    fb.body(vec![Stmt::Copy { src, dst }]);
    let mut args =
        vec![Tensor::from_i64(DType::I32, [1, 4], vec![10, 20, 30, 40]).expect("tensor")];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![10, 10, 20, 30]));
}

const M: usize = 3;
const K: usize = 4;
const N: usize = 5;

fn logical_a(i: usize, k: usize) -> f64 {
    ((i * K + k) * 3 % 11) as f64 - 5.0
}

fn logical_b(k: usize, j: usize) -> f64 {
    ((k * N + j) * 7 % 13) as f64 - 6.0
}

fn c_old(i: usize, j: usize) -> f64 {
    (i * N + j) as f64 * 0.5
}

/// Runs one `gemm` over global operands stored transposed or not and
/// compares with a naive product.
fn gemm_case(transpose_a: bool, transpose_b: bool, clear: bool) {
    let mut fb = Fb::new();
    let a_shape = if transpose_a { [K, M] } else { [M, K] };
    let b_shape = if transpose_b { [N, K] } else { [K, N] };
    let a = fb.param("A", DType::F16, &a_shape.map(|e| e as i64));
    let b = fb.param("B", DType::F16, &b_shape.map(|e| e as i64));
    let c = fb.param("C", DType::F32, &[M as i64, N as i64]);
    let (ra, rb, rc) = (fb.whole(a), fb.whole(b), fb.whole(c));
    let clear_accum = fb.ilit(DType::Bool, i64::from(clear));
    fb.body(vec![Stmt::Gemm {
        a: ra,
        b: rb,
        c: rc,
        transpose_a,
        transpose_b,
        policy: GemmPolicy::Square,
        clear_accum,
    }]);
    let mut a_values = vec![0.0; M * K];
    for i in 0..M {
        for k in 0..K {
            let at = if transpose_a { k * M + i } else { i * K + k };
            a_values[at] = logical_a(i, k);
        }
    }
    let mut b_values = vec![0.0; K * N];
    for k in 0..K {
        for j in 0..N {
            let at = if transpose_b { j * K + k } else { k * N + j };
            b_values[at] = logical_b(k, j);
        }
    }
    let c_values: Vec<f64> = (0..M * N).map(|e| c_old(e / N, e % N)).collect();
    let mut args = vec![
        tensor(DType::F16, &a_shape, &a_values),
        tensor(DType::F16, &b_shape, &b_values),
        tensor(DType::F32, &[M, N], &c_values),
    ];
    run(&fb.f, &mut args).expect("run");
    let mut expected = vec![0.0; M * N];
    for i in 0..M {
        for j in 0..N {
            let mut sum = if clear { 0.0 } else { c_old(i, j) };
            for k in 0..K {
                sum += logical_a(i, k) * logical_b(k, j);
            }
            expected[i * N + j] = sum;
        }
    }
    assert_eq!(
        args[2].to_f64_vec(),
        expected,
        "transpose_a={transpose_a} transpose_b={transpose_b} clear={clear}"
    );
}

#[test]
fn gemm_all_transpose_combinations() {
    for transpose_a in [false, true] {
        for transpose_b in [false, true] {
            for clear in [false, true] {
                gemm_case(transpose_a, transpose_b, clear);
            }
        }
    }
}

#[test]
fn gemm_clear_accum_expression_and_ragged_regions() {
    // for kk in 0..2: C[0:4, :] (+)= A[0:4, 2kk:2kk+2] · B[2kk:2kk+2, :],
    // clear_accum = (kk == 0). A and C have 3 rows: row 3 reads 0 from A and
    // is not written to C; C's old contents are discarded.
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F16, &[M as i64, K as i64]);
    let b = fb.param("B", DType::F16, &[K as i64, N as i64]);
    let c = fb.param("C", DType::F32, &[M as i64, N as i64]);
    let (zero, two) = (fb.int(0), fb.int(2));
    let loop_ = fb.serial(zero, two, |fb, kk| {
        let (zero, two, rows, n) = (fb.int(0), fb.int(2), fb.int(4), fb.int(N as i64));
        let k0 = fb.bin(BinaryOp::Mul, kk, two);
        let ra = fb.region(a, &[(zero, rows), (k0, two)]);
        let rb = fb.region(b, &[(k0, two), (zero, n)]);
        let rc = fb.region(c, &[(zero, rows), (zero, n)]);
        let first = fb.bin(BinaryOp::Eq, kk, zero);
        block(vec![Stmt::Gemm {
            a: ra,
            b: rb,
            c: rc,
            transpose_a: false,
            transpose_b: false,
            policy: GemmPolicy::FullRow,
            clear_accum: first,
        }])
    });
    fb.body(vec![loop_]);
    let a_values: Vec<f64> = (0..M * K).map(|e| logical_a(e / K, e % K)).collect();
    let b_values: Vec<f64> = (0..K * N).map(|e| logical_b(e / N, e % N)).collect();
    let mut args = vec![
        tensor(DType::F16, &[M, K], &a_values),
        tensor(DType::F16, &[K, N], &b_values),
        Tensor::from_f64(DType::F32, [M, N], vec![99.0; M * N]).expect("tensor"),
    ];
    run(&fb.f, &mut args).expect("run");
    let expected: Vec<f64> = (0..M * N)
        .map(|e| {
            (0..K)
                .map(|k| logical_a(e / N, k) * logical_b(k, e % N))
                .sum()
        })
        .collect();
    assert_eq!(args[2].to_f64_vec(), expected);
}

#[test]
fn gemm_rounds_once_into_the_accumulator_type() {
    // [2048, 1, 1] · [1, 1, 1]ᵀ = 2050 exactly, which f16 holds; rounding
    // after each product would give 2048.
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F16, &[1, 3]);
    let b = fb.param("B", DType::F16, &[3, 1]);
    let c = fb.param("C", DType::F16, &[1, 1]);
    let (ra, rb, rc) = (fb.whole(a), fb.whole(b), fb.whole(c));
    let yes = fb.ilit(DType::Bool, 1);
    fb.body(vec![Stmt::Gemm {
        a: ra,
        b: rb,
        c: rc,
        transpose_a: false,
        transpose_b: false,
        policy: GemmPolicy::Square,
        clear_accum: yes,
    }]);
    let mut args = vec![
        tensor(DType::F16, &[1, 3], &[2048.0, 1.0, 1.0]),
        tensor(DType::F16, &[3, 1], &[1.0, 1.0, 1.0]),
        Tensor::zeros(DType::F16, [1, 1]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[2].to_f64_vec(), vec![2050.0]);

    // Mismatched inner dimensions are a shape error.
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F16, &[2, 3]);
    let b = fb.param("B", DType::F16, &[4, 2]);
    let c = fb.param("C", DType::F32, &[2, 2]);
    let (ra, rb, rc) = (fb.whole(a), fb.whole(b), fb.whole(c));
    let no = fb.ilit(DType::Bool, 0);
    fb.body(vec![Stmt::Gemm {
        a: ra,
        b: rb,
        c: rc,
        transpose_a: false,
        transpose_b: false,
        policy: GemmPolicy::Square,
        clear_accum: no,
    }]);
    let mut args = vec![
        Tensor::zeros(DType::F16, [2, 3]),
        Tensor::zeros(DType::F16, [4, 2]),
        Tensor::zeros(DType::F32, [2, 2]),
    ];
    let err = run(&fb.f, &mut args).expect_err("shape mismatch");
    assert!(
        matches!(err, InterpError::TileShape { op: "gemm", .. }),
        "{err}"
    );
}

#[test]
fn fill_converts_and_skips_out_of_bounds() {
    let mut fb = Fb::new();
    let h = fb.param("H", DType::F16, &[2, 3]);
    let i = fb.param("I", DType::I32, &[4]);
    let u = fb.param("U", DType::U8, &[2]);
    let r1 = fb.region_lit(h, &[(0, 2), (1, 2)]);
    let r2 = fb.region_lit(h, &[(1, 2), (0, 1)]);
    let (ri, ru) = (fb.whole(i), fb.whole(u));
    let tenth = fb.flit(DType::F32, 0.1);
    let five = fb.flit(DType::F32, 5.0);
    let v37 = fb.flit(DType::F32, -3.7);
    let minus_one = fb.int(-1);
    fb.body(vec![
        Stmt::Fill {
            dst: r1,
            value: tenth,
        },
        Stmt::Fill {
            dst: r2,
            value: five,
        },
        Stmt::Fill {
            dst: ri,
            value: v37,
        },
        Stmt::Fill {
            dst: ru,
            value: minus_one,
        },
    ]);
    let mut args = vec![
        Tensor::zeros(DType::F16, [2, 3]),
        Tensor::zeros(DType::I32, [4]),
        Tensor::zeros(DType::U8, [2]),
    ];
    run(&fb.f, &mut args).expect("run");
    let t = f64::from(half::f16::from_f32(0.1f32));
    assert_eq!(args[0].to_f64_vec(), vec![0.0, t, t, 5.0, t, t]);
    assert_eq!(args[1].data, TensorData::Int(vec![-3; 4]));
    assert_eq!(args[2].data, TensorData::Int(vec![255; 2]));
}

/// Naive reduction of a row-major `[rows, cols]` matrix along `dim`.
fn naive_reduce(
    kind: ReduceKind,
    x: &[f64],
    cols: usize,
    dim: usize,
    init: Option<&[f64]>,
) -> Vec<f64> {
    let rows = x.len() / cols;
    let (outputs, len) = if dim == 0 { (cols, rows) } else { (rows, cols) };
    (0..outputs)
        .map(|o| {
            let mut acc = match (init, kind) {
                (Some(init), _) => init[o],
                (None, ReduceKind::Max) => f64::NEG_INFINITY,
                (None, ReduceKind::Min) => f64::INFINITY,
                (None, ReduceKind::BitAnd) => -1.0,
                (None, _) => 0.0,
            };
            for r in 0..len {
                let v = if dim == 0 {
                    x[r * cols + o]
                } else {
                    x[o * cols + r]
                };
                acc = match kind {
                    ReduceKind::Sum => acc + v,
                    ReduceKind::AbsSum => acc + v.abs(),
                    ReduceKind::Max => acc.max(v),
                    ReduceKind::Min => acc.min(v),
                    ReduceKind::AbsMax => acc.max(v.abs()),
                    ReduceKind::BitAnd => ((acc as i64) & (v as i64)) as f64,
                    ReduceKind::BitOr => ((acc as i64) | (v as i64)) as f64,
                    ReduceKind::BitXor => ((acc as i64) ^ (v as i64)) as f64,
                };
            }
            acc
        })
        .collect()
}

fn reduce_fn(
    src_dtype: DType,
    src_shape: &[i64],
    dst_dtype: DType,
    dst_shape: &[i64],
    kind: ReduceKind,
    dim: u32,
    clear: bool,
) -> Fb {
    let mut fb = Fb::new();
    let x = fb.param("X", src_dtype, src_shape);
    let d = fb.param("D", dst_dtype, dst_shape);
    fb.body(vec![Stmt::Reduce {
        kind,
        src: x,
        dst: d,
        dim,
        clear,
    }]);
    fb
}

#[test]
fn reduce_every_kind_dim_and_clear() {
    let x = [
        1.0, -2.0, 3.0, -4.0, 0.5, 6.0, -7.0, 2.0, -1.0, -1.0, 8.0, 0.0,
    ];
    for kind in ReduceKind::ALL.into_iter().filter(|k| !k.is_bitwise()) {
        for dim in [0u32, 1] {
            for clear in [true, false] {
                let outputs = if dim == 0 { 4 } else { 3 };
                let init: Vec<f64> = (0..outputs).map(|o| [10.0, -10.0, 0.25, 3.0][o]).collect();
                let fb = reduce_fn(
                    DType::F32,
                    &[3, 4],
                    DType::F32,
                    &[outputs as i64],
                    kind,
                    dim,
                    clear,
                );
                let mut args = vec![
                    tensor(DType::F32, &[3, 4], &x),
                    tensor(DType::F32, &[outputs], &init),
                ];
                run(&fb.f, &mut args).expect("run");
                let expected =
                    naive_reduce(kind, &x, 4, dim as usize, (!clear).then_some(&init[..]));
                assert_eq!(
                    args[1].to_f64_vec(),
                    expected,
                    "{kind:?} dim={dim} clear={clear}"
                );
            }
        }
    }
}

#[test]
fn reduce_bitwise_kinds_on_integers() {
    let x = [
        6.0, -2.0, 3.0, -4.0, 5.0, 7.0, -7.0, 2.0, -1.0, 12.0, 8.0, 0.0,
    ];
    for kind in ReduceKind::ALL.into_iter().filter(|k| k.is_bitwise()) {
        for dim in [0u32, 1] {
            for clear in [true, false] {
                let outputs = if dim == 0 { 4 } else { 3 };
                let init: Vec<f64> = (0..outputs).map(|o| [10.0, -10.0, 1.0, 3.0][o]).collect();
                let fb = reduce_fn(
                    DType::I32,
                    &[3, 4],
                    DType::I32,
                    &[outputs as i64],
                    kind,
                    dim,
                    clear,
                );
                let mut args = vec![
                    tensor(DType::I32, &[3, 4], &x),
                    tensor(DType::I32, &[outputs], &init),
                ];
                run(&fb.f, &mut args).expect("run");
                let expected =
                    naive_reduce(kind, &x, 4, dim as usize, (!clear).then_some(&init[..]));
                assert_eq!(
                    args[1].to_f64_vec(),
                    expected,
                    "{kind:?} dim={dim} clear={clear}"
                );
            }
        }
    }
    // Floats have no bits to combine: refused, never a different answer.
    let fb = reduce_fn(
        DType::F32,
        &[3, 4],
        DType::F32,
        &[3],
        ReduceKind::BitOr,
        1,
        true,
    );
    let mut args = vec![
        tensor(DType::F32, &[3, 4], &x),
        Tensor::zeros(DType::F32, [3]),
    ];
    assert!(run(&fb.f, &mut args).is_err());
}

#[test]
fn reduce_shapes_nan_and_rounding() {
    // 1-D source into one element; NaN anywhere propagates through
    // max/min/absmax and sums.
    for (kind, values) in [
        (ReduceKind::Max, [f64::NAN, 1.0, 3.0]),
        (ReduceKind::Max, [1.0, f64::NAN, 3.0]),
        (ReduceKind::Min, [1.0, 3.0, f64::NAN]),
        (ReduceKind::AbsMax, [f64::NAN, -5.0, 3.0]),
        (ReduceKind::Sum, [1.0, f64::NAN, 3.0]),
    ] {
        let fb = reduce_fn(DType::F32, &[3], DType::F32, &[1], kind, 0, true);
        let mut args = vec![
            tensor(DType::F32, &[3], &values),
            Tensor::zeros(DType::F32, [1]),
        ];
        run(&fb.f, &mut args).expect("run");
        assert!(args[1].to_f64_vec()[0].is_nan(), "{kind:?} {values:?}");
    }
    // Summed in f64 and rounded once into f16: 2048 + 1 + 1 = 2050.
    let fb = reduce_fn(DType::F32, &[3], DType::F16, &[1], ReduceKind::Sum, 0, true);
    let mut args = vec![
        tensor(DType::F32, &[3], &[2048.0, 1.0, 1.0]),
        Tensor::zeros(DType::F16, [1]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].to_f64_vec(), vec![2050.0]);
    // 3-D source reduced along the middle dimension, destination with a
    // unit extent kept ([2, 1, 2]).
    let x: Vec<f64> = (0..12).map(|v| f64::from(v * 7 % 5) - 2.0).collect();
    let fb = reduce_fn(
        DType::F32,
        &[2, 3, 2],
        DType::F32,
        &[2, 1, 2],
        ReduceKind::Max,
        1,
        true,
    );
    let mut args = vec![
        tensor(DType::F32, &[2, 3, 2], &x),
        Tensor::zeros(DType::F32, [2, 1, 2]),
    ];
    run(&fb.f, &mut args).expect("run");
    let mut expected = vec![f64::NEG_INFINITY; 4];
    for a in 0..2 {
        for b in 0..3 {
            for c in 0..2 {
                expected[a * 2 + c] = expected[a * 2 + c].max(x[(a * 3 + b) * 2 + c]);
            }
        }
    }
    assert_eq!(args[1].to_f64_vec(), expected);
    // A destination of the wrong shape is an error.
    let fb = reduce_fn(
        DType::F32,
        &[2, 3],
        DType::F32,
        &[3],
        ReduceKind::Sum,
        1,
        true,
    );
    let mut args = vec![
        Tensor::zeros(DType::F32, [2, 3]),
        Tensor::zeros(DType::F32, [3]),
    ];
    let err = run(&fb.f, &mut args).expect_err("wrong shape");
    assert!(
        matches!(err, InterpError::TileShape { op: "reduce", .. }),
        "{err}"
    );
}

#[test]
fn integer_reductions() {
    let x = [5, -7, 3, -2, -9, 4];
    let cases = [
        (ReduceKind::Sum, true, [1, -7]),
        (ReduceKind::Max, true, [5, 4]),
        (ReduceKind::Min, true, [-7, -9]),
        (ReduceKind::AbsSum, true, [15, 15]),
        (ReduceKind::AbsMax, true, [7, 9]),
        (ReduceKind::Max, false, [100, 4]),
        (ReduceKind::Sum, false, [101, -107]),
        (ReduceKind::Min, false, [-7, -100]),
    ];
    for (kind, clear, expected) in cases {
        let fb = reduce_fn(DType::I32, &[2, 3], DType::I32, &[2], kind, 1, clear);
        let mut args = vec![
            Tensor::from_i64(DType::I32, [2, 3], x.to_vec()).expect("tensor"),
            Tensor::from_i64(DType::I32, [2], vec![100, -100]).expect("tensor"),
        ];
        run(&fb.f, &mut args).expect("run");
        assert_eq!(
            args[1].data,
            TensorData::Int(expected.to_vec()),
            "{kind:?} clear={clear}"
        );
    }
    // u8 sums wrap once in a u8 destination and do not in an i32 one.
    for (dst, expected) in [(DType::U8, 44), (DType::I32, 300)] {
        let fb = reduce_fn(DType::U8, &[2], dst, &[1], ReduceKind::Sum, 0, true);
        let mut args = vec![
            Tensor::from_i64(DType::U8, [2], vec![200, 100]).expect("tensor"),
            Tensor::zeros(dst, [1]),
        ];
        run(&fb.f, &mut args).expect("run");
        assert_eq!(args[1].data, TensorData::Int(vec![expected]));
    }
    // Max of u64 values compares unsigned.
    let fb = reduce_fn(DType::U64, &[2], DType::U64, &[1], ReduceKind::Max, 0, true);
    let mut args = vec![
        Tensor::from_i64(DType::U64, [2], vec![-1, 5]).expect("tensor"),
        Tensor::zeros(DType::U64, [1]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].data, TensorData::Int(vec![-1]));
}

fn cumsum_fn(src: DType, dst: DType, shape: &[i64], dim: u32, reverse: bool) -> Fb {
    let mut fb = Fb::new();
    let x = fb.param("X", src, shape);
    let d = fb.param("D", dst, shape);
    fb.body(vec![Stmt::Cumsum {
        src: x,
        dst: d,
        dim,
        reverse,
    }]);
    fb
}

#[test]
fn cumsum_forward_reverse_and_rounding() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let cases = [
        (1, false, [1.0, 3.0, 6.0, 4.0, 9.0, 15.0]),
        (1, true, [6.0, 5.0, 3.0, 15.0, 11.0, 6.0]),
        (0, false, [1.0, 2.0, 3.0, 5.0, 7.0, 9.0]),
        (0, true, [5.0, 7.0, 9.0, 4.0, 5.0, 6.0]),
    ];
    for (dim, reverse, expected) in cases {
        let fb = cumsum_fn(DType::F32, DType::F32, &[2, 3], dim, reverse);
        let mut args = vec![
            tensor(DType::F32, &[2, 3], &x),
            Tensor::zeros(DType::F32, [2, 3]),
        ];
        run(&fb.f, &mut args).expect("run");
        assert_eq!(
            args[1].to_f64_vec(),
            expected,
            "dim={dim} reverse={reverse}"
        );
    }
    // The running sum stays in f64; each output is rounded on its own:
    // 2048, 2049, 2050, 2051 → 2048, 2048, 2050, 2052 in f16.
    let fb = cumsum_fn(DType::F32, DType::F16, &[4], 0, false);
    let mut args = vec![
        tensor(DType::F32, &[4], &[2048.0, 1.0, 1.0, 1.0]),
        Tensor::zeros(DType::F16, [4]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[1].to_f64_vec(), vec![2048.0, 2048.0, 2050.0, 2052.0]);
    // Integers, and in place (source and destination the same buffer).
    let mut fb = Fb::new();
    let x = fb.param("X", DType::I32, &[4]);
    fb.body(vec![Stmt::Cumsum {
        src: x,
        dst: x,
        dim: 0,
        reverse: false,
    }]);
    let mut args = vec![Tensor::from_i64(DType::I32, [4], vec![3, -1, 4, -1]).expect("tensor")];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![3, 2, 6, 5]));
}

#[test]
fn atomic_add_scalar_region_and_rounding() {
    let mut fb = Fb::new();
    let d = fb.param("D", DType::F32, &[2, 3]);
    let v = fb.param("V", DType::F32, &[2, 2]);
    let h = fb.param("H", DType::F16, &[1]);
    let i = fb.param("I", DType::I32, &[1]);
    let r1 = fb.region_lit(d, &[(0, 2), (1, 2)]);
    let r2 = fb.region_lit(d, &[(0, 2), (0, 2)]);
    let r3 = fb.region_lit(d, &[(1, 2), (2, 2)]);
    let rv = fb.whole(v);
    let (rh1, rh2, ri) = (fb.whole(h), fb.whole(h), fb.whole(i));
    let half_ = fb.flit(DType::F32, 0.5);
    let ten = fb.flit(DType::F32, 10.0);
    let one = fb.flit(DType::F32, 1.0);
    let three = fb.flit(DType::F32, 3.0);
    let minus = fb.flit(DType::F32, -2.7);
    let atomic = |dst, value| Stmt::AtomicAdd { dst, value };
    fb.body(vec![
        atomic(r1, AtomicValue::Scalar(half_)),
        atomic(r2, AtomicValue::Region(rv)),
        atomic(r3, AtomicValue::Scalar(ten)),
        atomic(rh1, AtomicValue::Scalar(one)),
        atomic(rh2, AtomicValue::Scalar(three)),
        atomic(ri, AtomicValue::Scalar(minus)),
    ]);
    let mut args = vec![
        tensor(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        tensor(DType::F32, &[2, 2], &[100.0, 200.0, 300.0, 400.0]),
        tensor(DType::F16, &[1], &[2048.0]),
        Tensor::from_i64(DType::I32, [1], vec![5]).expect("tensor"),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(
        args[0].to_f64_vec(),
        vec![101.0, 202.5, 3.5, 304.0, 405.5, 16.5]
    );
    // f16: 2048 + 1 → 2048; 2048 + 3 = 2051 → 2052 (ties to even).
    assert_eq!(args[2].to_f64_vec(), vec![2052.0]);
    // The value converts to the destination type first: 5 + (-2) = 3.
    assert_eq!(args[3].data, TensorData::Int(vec![3]));
}

#[test]
fn atomic_max_min_compare_by_the_destination_type() {
    let mut fb = Fb::new();
    let u = fb.param("U", DType::U64, &[2]);
    let i = fb.param("I", DType::I8, &[2]);
    let h = fb.param("H", DType::F16, &[2]);
    let (ru0, ru1) = (fb.region_lit(u, &[(0, 1)]), fb.region_lit(u, &[(1, 1)]));
    let (ri0, ri1) = (fb.region_lit(i, &[(0, 1)]), fb.region_lit(i, &[(1, 1)]));
    let rh = fb.whole(h);
    // -16 as u64 is 2^64 - 16, larger than any small value.
    let big = fb.ilit(DType::I64, -16);
    let seven = fb.ilit(DType::I64, 7);
    // 200 wraps to -56 in i8: the minimum then, not the maximum.
    let wraps = fb.ilit(DType::I32, 200);
    let tenth = fb.flit(DType::F32, 0.1);
    let op = |op, dst, value| Stmt::Atomic { op, dst, value };
    fb.body(vec![
        op(AtomicOp::Max, ru0, AtomicValue::Scalar(big)),
        op(AtomicOp::Min, ru1, AtomicValue::Scalar(seven)),
        op(AtomicOp::Max, ri0, AtomicValue::Scalar(wraps)),
        op(AtomicOp::Min, ri1, AtomicValue::Scalar(wraps)),
        op(AtomicOp::Max, rh, AtomicValue::Scalar(tenth)),
    ]);
    let mut args = vec![
        Tensor::from_i64(DType::U64, [2], vec![5, -32]).expect("tensor"),
        Tensor::from_i64(DType::I8, [2], vec![3, 3]).expect("tensor"),
        tensor(DType::F16, &[2], &[0.0, 1.0]),
    ];
    run(&fb.f, &mut args).expect("run");
    assert_eq!(args[0].data, TensorData::Int(vec![-16, 7]));
    assert_eq!(args[1].data, TensorData::Int(vec![3, -56]));
    // The value converts to f16 first (0.1 → 0.0999755859375).
    assert_eq!(args[2].to_f64_vec(), vec![0.0999755859375, 1.0]);
}
