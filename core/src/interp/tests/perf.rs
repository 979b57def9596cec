//! Corpus-sized kernels: numerics, and the run time printed for the record
//! (`cargo test --release -p tilec-core interp::tests::perf -- --nocapture`).

use super::{Fb, block, tensor};
use crate::interp::{Tensor, run};
use crate::ir::{BinaryOp, DType, GemmPolicy, LoopKind, Scope, Stmt};
use std::time::Instant;

/// Deterministic values in [-1, 1), exact in f16.
fn values(count: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            f64::from(half::f16::from_f64(unit * 2.0 - 1.0))
        })
        .collect()
}

#[test]
#[allow(clippy::print_stderr)]
fn gemm_256_fp16_tiled_pipeline() {
    const S: usize = 256;
    const BM: i64 = 128;
    const BN: i64 = 128;
    const BK: i64 = 32;
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F16, &[S as i64, S as i64]);
    let b = fb.param("B", DType::F16, &[S as i64, S as i64]);
    let c = fb.param("C", DType::F16, &[S as i64, S as i64]);
    let a_s = fb.buffer("A_shared", DType::F16, Scope::Shared, &[BM, BK]);
    let b_s = fb.buffer("B_shared", DType::F16, Scope::Shared, &[BK, BN]);
    let c_l = fb.buffer("C_local", DType::F32, Scope::Fragment, &[BM, BN]);
    let kernel = fb.kernel(&[2, 2], |fb, v| {
        let (bx, by) = (fb.v(v[0]), fb.v(v[1]));
        let (bm, bn, bk) = (fb.int(BM), fb.int(BN), fb.int(BK));
        let row0 = fb.bin(BinaryOp::Mul, by, bm);
        let col0 = fb.bin(BinaryOp::Mul, bx, bn);
        let k_var = fb.var("k", DType::I32, crate::ir::VarKind::Loop);
        let k = fb.v(k_var);
        let k0 = fb.bin(BinaryOp::Mul, k, bk);
        let a_tile = fb.region(a, &[(row0, bm), (k0, bk)]);
        let b_tile = fb.region(b, &[(k0, bk), (col0, bn)]);
        let c_tile = fb.region(c, &[(row0, bm), (col0, bn)]);
        let (as1, as2, bs1, bs2) = (fb.whole(a_s), fb.whole(a_s), fb.whole(b_s), fb.whole(b_s));
        let (cl1, cl2, cl3) = (fb.whole(c_l), fb.whole(c_l), fb.whole(c_l));
        let zero_f = fb.flit(DType::F32, 0.0);
        let no = fb.ilit(DType::Bool, 0);
        let (zero, iterations) = (fb.int(0), fb.int(S as i64 / BK));
        let body = block(vec![
            Stmt::Copy {
                src: a_tile,
                dst: as1,
            },
            Stmt::Copy {
                src: b_tile,
                dst: bs1,
            },
            Stmt::Gemm {
                a: as2,
                b: bs2,
                c: cl1,
                transpose_a: false,
                transpose_b: false,
                policy: GemmPolicy::Square,
                clear_accum: no,
            },
        ]);
        block(vec![
            fb.alloc(a_s),
            fb.alloc(b_s),
            fb.alloc(c_l),
            Stmt::Fill {
                dst: cl2,
                value: zero_f,
            },
            Stmt::For {
                var: k_var,
                start: zero,
                extent: iterations,
                kind: LoopKind::Pipelined {
                    num_stages: 3,
                    order: None,
                    stage: None,
                    schedule: None,
                },
                body,
            },
            Stmt::Copy {
                src: cl3,
                dst: c_tile,
            },
        ])
    });
    fb.body(vec![kernel]);

    let a_values = values(S * S, 1);
    let b_values = values(S * S, 2);
    let mut args = vec![
        tensor(DType::F16, &[S, S], &a_values),
        tensor(DType::F16, &[S, S], &b_values),
        Tensor::zeros(DType::F16, [S, S]),
    ];
    let start = Instant::now();
    run(&fb.f, &mut args).expect("run");
    let elapsed = start.elapsed();
    eprintln!("interp: 256×256×256 fp16 tiled gemm took {elapsed:?}");

    let got = args[2].to_f64_vec();
    for i in 0..S {
        for j in 0..S {
            // The documented rounding: per K tile, an f64 sum added to the
            // f32 accumulator and rounded to f32; finally rounded to f16.
            let mut acc = 0f32;
            let mut exact = 0f64;
            for kb in 0..S / BK as usize {
                let mut partial = 0f64;
                for k in kb * BK as usize..(kb + 1) * BK as usize {
                    partial += a_values[i * S + k] * b_values[k * S + j];
                    exact += a_values[i * S + k] * b_values[k * S + j];
                }
                acc = (f64::from(acc) + partial) as f32;
            }
            let g = got[i * S + j];
            assert_eq!(g, f64::from(half::f16::from_f32(acc)), "C[{i}, {j}]");
            // And within one f16 rounding of the exact product.
            assert!(
                (g - exact).abs() <= exact.abs() * 2f64.powi(-10) + 1e-6,
                "C[{i}, {j}] = {g}, exact {exact}"
            );
        }
    }
}

#[test]
#[allow(clippy::print_stderr)]
fn elementwise_parallel_1024_squared() {
    const N: usize = 1024;
    let mut fb = Fb::new();
    let a = fb.param("A", DType::F32, &[N as i64, N as i64]);
    let b = fb.param("B", DType::F32, &[N as i64, N as i64]);
    let c = fb.param("C", DType::F32, &[N as i64, N as i64]);
    let kernel = fb.kernel(&[1], |fb, _| {
        block(vec![fb.parallel(&[N as i64, N as i64], |fb, ij| {
            let x = fb.load(a, ij);
            let y = fb.load(b, ij);
            let two = fb.flit(DType::F32, 2.0);
            let zero = fb.flit(DType::F32, 0.0);
            let x2 = fb.bin(BinaryOp::Mul, x, two);
            let sum = fb.bin(BinaryOp::Add, x2, y);
            let relu = fb.bin(BinaryOp::Max, sum, zero);
            block(vec![fb.store(c, ij, relu)])
        })])
    });
    fb.body(vec![kernel]);
    let a_values: Vec<f64> = values(N * N, 3)
        .iter()
        .map(|v| v * 0.1)
        .map(|v| f64::from(v as f32))
        .collect();
    let b_values = values(N * N, 4);
    let mut args = vec![
        tensor(DType::F32, &[N, N], &a_values),
        tensor(DType::F32, &[N, N], &b_values),
        Tensor::zeros(DType::F32, [N, N]),
    ];
    let start = Instant::now();
    run(&fb.f, &mut args).expect("run");
    let elapsed = start.elapsed();
    eprintln!("interp: 1024×1024 elementwise parallel nest took {elapsed:?}");
    let got = args[2].to_f64_vec();
    for (e, (&x, &y)) in a_values.iter().zip(&b_values).enumerate() {
        let want = (x as f32 * 2.0 + y as f32).max(0.0);
        assert_eq!(got[e], f64::from(want), "element {e}");
    }
}
