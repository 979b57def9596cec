//! Scalar operators, math functions and casts, per dtype class.

use super::{Fb, assert_same, eval, eval_f, eval_i, tensor};
use crate::interp::{InterpError, Tensor, TensorData, run};
use crate::ir::{BinaryOp as B, DType, Scope, UnaryOp as U};

/// `a op b` on integer literals of `dtype`.
fn int_op(dtype: DType, op: B, a: i64, b: i64) -> Result<i64, InterpError> {
    let t = eval(|f| {
        let (x, y) = (f.ilit(dtype, a), f.ilit(dtype, b));
        f.bin(op, x, y)
    })?;
    match t.data {
        TensorData::Int(v) => Ok(v[0]),
        TensorData::Float(_) => panic!("integer op gave floats"),
    }
}

fn int(dtype: DType, op: B, a: i64, b: i64) -> i64 {
    int_op(dtype, op, a, b).expect("integer op succeeds")
}

/// `a op b` on float literals of `dtype`.
fn float(dtype: DType, op: B, a: f64, b: f64) -> f64 {
    eval_f(|f| {
        let (x, y) = (f.flit(dtype, a), f.flit(dtype, b));
        f.bin(op, x, y)
    })
}

/// Comparison of float literals of `dtype`.
fn fcmp(dtype: DType, op: B, a: f64, b: f64) -> bool {
    eval_i(|f| {
        let (x, y) = (f.flit(dtype, a), f.flit(dtype, b));
        f.bin(op, x, y)
    }) != 0
}

fn unary_f(dtype: DType, op: U, a: f64) -> f64 {
    eval_f(|f| {
        let x = f.flit(dtype, a);
        f.un(op, x)
    })
}

fn unary_i(dtype: DType, op: U, a: i64) -> i64 {
    eval_i(|f| {
        let x = f.ilit(dtype, a);
        f.un(op, x)
    })
}

fn cast_ff(from: DType, to: DType, a: f64) -> f64 {
    eval_f(|f| {
        let x = f.flit(from, a);
        f.cast(to, x)
    })
}

fn cast_fi(from: DType, to: DType, a: f64) -> i64 {
    eval_i(|f| {
        let x = f.flit(from, a);
        f.cast(to, x)
    })
}

fn cast_if(from: DType, to: DType, a: i64) -> f64 {
    eval_f(|f| {
        let x = f.ilit(from, a);
        f.cast(to, x)
    })
}

fn cast_ii(from: DType, to: DType, a: i64) -> i64 {
    eval_i(|f| {
        let x = f.ilit(from, a);
        f.cast(to, x)
    })
}

const U64_MAX: i64 = -1; // u64::MAX's bit pattern

#[test]
fn integer_add_sub_mul_wrap() {
    assert_eq!(int(DType::I8, B::Add, 100, 100), -56);
    assert_eq!(int(DType::I16, B::Add, 32767, 1), -32768);
    assert_eq!(
        int(DType::I32, B::Add, i64::from(i32::MAX), 1),
        i64::from(i32::MIN)
    );
    assert_eq!(int(DType::I64, B::Add, i64::MAX, 1), i64::MIN);
    assert_eq!(int(DType::U8, B::Sub, 0, 1), 255);
    assert_eq!(int(DType::U16, B::Add, 65535, 1), 0);
    assert_eq!(int(DType::U32, B::Sub, 0, 1), 4_294_967_295);
    assert_eq!(int(DType::U64, B::Sub, 0, 1), U64_MAX);
    assert_eq!(int(DType::I8, B::Mul, 16, 16), 0);
    assert_eq!(int(DType::U8, B::Mul, 200, 2), 144);
    assert_eq!(int(DType::I32, B::Mul, 65536, 65536), 0);
    assert_eq!(int(DType::I32, B::Mul, 46341, 46341), -2_147_479_015);
    assert_eq!(int(DType::I32, B::Mul, -46341, 46341), 2_147_479_015);
    assert_eq!(int(DType::I32, B::Sub, -5, 7), -12);
}

#[test]
fn integer_division_truncates_and_floors() {
    let d = DType::I32;
    assert_eq!(int(d, B::Div, 7, 2), 3);
    assert_eq!(int(d, B::Div, -7, 2), -3);
    assert_eq!(int(d, B::Div, 7, -2), -3);
    assert_eq!(int(d, B::Div, -7, -2), 3);
    assert_eq!(int(d, B::FloorDiv, -7, 2), -4);
    assert_eq!(int(d, B::FloorDiv, 7, -2), -4);
    assert_eq!(int(d, B::FloorDiv, -7, -2), 3);
    assert_eq!(int(d, B::FloorDiv, 7, 2), 3);
    assert_eq!(int(d, B::FloorDiv, -8, 2), -4);
    assert_eq!(int(d, B::FloorMod, -7, 2), 1);
    assert_eq!(int(d, B::FloorMod, 7, -2), -1);
    assert_eq!(int(d, B::FloorMod, -7, -2), -1);
    assert_eq!(int(d, B::FloorMod, 7, 3), 1);
    assert_eq!(int(d, B::FloorMod, -6, 3), 0);
    // Overflowing quotients wrap.
    assert_eq!(int(d, B::Div, i64::from(i32::MIN), -1), i64::from(i32::MIN));
    assert_eq!(int(DType::I8, B::FloorDiv, -128, -1), -128);
    assert_eq!(int(DType::I64, B::Div, i64::MIN, -1), i64::MIN);
    assert_eq!(int(DType::I64, B::FloorMod, i64::MIN, -1), 0);
    // Unsigned.
    assert_eq!(int(DType::U32, B::Div, 4_294_967_295, 2), 2_147_483_647);
    assert_eq!(int(DType::U64, B::Div, U64_MAX, 2), i64::MAX);
    assert_eq!(int(DType::U64, B::FloorDiv, U64_MAX, 2), i64::MAX);
    assert_eq!(int(DType::U64, B::FloorMod, U64_MAX, 10), 5);
    assert_eq!(int(DType::U8, B::FloorMod, 250, 7), 5);
}

#[test]
fn integer_division_by_zero_is_an_error() {
    for dtype in [DType::I8, DType::I32, DType::I64, DType::U8, DType::U64] {
        for op in [B::Div, B::FloorDiv, B::FloorMod] {
            let err = int_op(dtype, op, 5, 0).expect_err("division by zero");
            assert!(
                matches!(err, InterpError::DivisionByZero { .. }),
                "{dtype} {op:?}: {err}"
            );
        }
    }
    assert!(matches!(
        int_op(DType::I32, B::Pow, 0, -1),
        Err(InterpError::DivisionByZero { .. })
    ));
}

#[test]
fn integer_min_max_pow() {
    assert_eq!(int(DType::I32, B::Min, -3, 2), -3);
    assert_eq!(int(DType::I32, B::Max, -3, 2), 2);
    assert_eq!(int(DType::U8, B::Min, 200, 100), 100);
    // Unsigned comparison of the u64 bit pattern.
    assert_eq!(int(DType::U64, B::Max, U64_MAX, 1), U64_MAX);
    assert_eq!(int(DType::U64, B::Min, U64_MAX, 1), 1);
    assert_eq!(int(DType::I32, B::Pow, 3, 4), 81);
    assert_eq!(int(DType::I32, B::Pow, 2, 31), i64::from(i32::MIN));
    assert_eq!(int(DType::I32, B::Pow, 2, -1), 0);
    assert_eq!(int(DType::I32, B::Pow, 1, -5), 1);
    assert_eq!(int(DType::I32, B::Pow, -1, -3), -1);
    assert_eq!(int(DType::I32, B::Pow, -1, -4), 1);
    assert_eq!(int(DType::I32, B::Pow, 7, 0), 1);
    assert_eq!(int(DType::U8, B::Pow, 3, 5), 243);
    assert_eq!(int(DType::U8, B::Pow, 2, 8), 0);
}

#[test]
fn bitwise_and_shifts() {
    let d = DType::I32;
    assert_eq!(int(d, B::BitAnd, 0b1100, 0b1010), 0b1000);
    assert_eq!(int(d, B::BitOr, 0b1100, 0b1010), 0b1110);
    assert_eq!(int(d, B::BitXor, 0b1100, 0b1010), 0b0110);
    assert_eq!(int(DType::Bool, B::BitXor, 1, 1), 0);
    assert_eq!(int(DType::Bool, B::BitOr, 0, 1), 1);
    assert_eq!(int(d, B::Shl, 1, 31), i64::from(i32::MIN));
    assert_eq!(int(d, B::Shl, 1, 32), 0);
    assert_eq!(int(d, B::Shl, 1, -1), 0);
    assert_eq!(int(d, B::Shr, -8, 1), -4);
    assert_eq!(int(d, B::Shr, -8, 40), -1);
    assert_eq!(int(d, B::Shr, 8, 40), 0);
    assert_eq!(int(d, B::Shr, -8, -1), -1);
    assert_eq!(int(DType::I8, B::Shl, 64, 1), -128);
    assert_eq!(int(DType::U8, B::Shl, 255, 1), 254);
    assert_eq!(int(DType::U8, B::Shr, 255, 1), 127);
    assert_eq!(int(DType::U8, B::Shr, 255, 8), 0);
    assert_eq!(int(DType::U64, B::Shr, U64_MAX, 63), 1);
    assert_eq!(int(DType::U64, B::Shl, 1, 63), i64::MIN);
    assert_eq!(int(DType::U64, B::Shl, 1, 64), 0);
    assert_eq!(int(DType::I64, B::Shr, i64::MIN, 63), -1);
    assert_eq!(int(DType::I64, B::Shr, i64::MIN, 64), -1);
}

#[test]
fn comparisons_and_logic() {
    let cmp = |dtype, op, a, b| int(dtype, op, a, b) == 1;
    assert!(cmp(DType::I32, B::Lt, -1, 1));
    assert!(!cmp(DType::I32, B::Ge, -1, 1));
    assert!(cmp(DType::I32, B::Le, 1, 1));
    assert!(cmp(DType::I32, B::Ne, 1, 2));
    assert!(cmp(DType::U32, B::Gt, 4_294_967_295, 1));
    assert!(cmp(DType::U64, B::Gt, U64_MAX, 1));
    assert!(!cmp(DType::U64, B::Lt, U64_MAX, 1));
    assert!(cmp(DType::I8, B::Lt, -128, 127));
    assert!(cmp(DType::Bool, B::Gt, 1, 0));
    assert!(cmp(DType::Bool, B::Eq, 1, 1));
    assert!(cmp(DType::Bool, B::And, 1, 1));
    assert!(!cmp(DType::Bool, B::And, 1, 0));
    assert!(cmp(DType::Bool, B::Or, 0, 1));
    assert!(!cmp(DType::Bool, B::Or, 0, 0));
    assert_eq!(unary_i(DType::Bool, U::Not, 1), 0);
    assert_eq!(unary_i(DType::Bool, U::Not, 0), 1);

    let nan = f64::NAN;
    for dtype in [DType::F16, DType::F32, DType::F64] {
        assert!(!fcmp(dtype, B::Eq, nan, nan));
        assert!(fcmp(dtype, B::Ne, nan, nan));
        assert!(!fcmp(dtype, B::Lt, nan, 1.0));
        assert!(!fcmp(dtype, B::Ge, nan, 1.0));
        assert!(fcmp(dtype, B::Lt, -1.5, 1.0));
        assert!(fcmp(dtype, B::Le, 1.0, 1.0));
        assert!(!fcmp(dtype, B::Le, nan, nan));
        assert!(!fcmp(dtype, B::Gt, nan, 0.0));
        assert!(fcmp(dtype, B::Eq, 0.0, -0.0));
        assert!(fcmp(dtype, B::Gt, f64::INFINITY, 6e4));
    }
}

/// Values exercising rounding in every float type.
const SAMPLES: [f64; 12] = [
    0.1,
    0.2,
    1.0 / 3.0,
    -2.75,
    3.0e-5,
    1234.5678,
    -0.0,
    7.0,
    1e-8,
    65000.0,
    2.5,
    -1.0e4,
];

#[test]
fn f32_arithmetic_matches_native_f32() {
    for &a in &SAMPLES {
        for &b in &SAMPLES {
            let (x, y) = (a as f32, b as f32);
            let cases = [
                (B::Add, x + y),
                (B::Sub, x - y),
                (B::Mul, x * y),
                (B::Div, x / y),
            ];
            for (op, want) in cases {
                let got = float(DType::F32, op, a, b);
                assert_same(&[got], &[f64::from(want)]);
            }
        }
    }
    for &a in &SAMPLES {
        let got = unary_f(DType::F32, U::Sqrt, a.abs());
        assert_same(&[got], &[f64::from((a.abs() as f32).sqrt())]);
    }
}

#[test]
fn f16_and_bf16_arithmetic_match_the_half_crate() {
    use half::{bf16, f16};
    for &a in &SAMPLES {
        for &b in &SAMPLES {
            let (x, y) = (f16::from_f64(a), f16::from_f64(b));
            for (op, want) in [
                (B::Add, x + y),
                (B::Sub, x - y),
                (B::Mul, x * y),
                (B::Div, x / y),
            ] {
                assert_same(&[float(DType::F16, op, a, b)], &[f64::from(want)]);
            }
            let (x, y) = (bf16::from_f64(a), bf16::from_f64(b));
            for (op, want) in [(B::Add, x + y), (B::Mul, x * y)] {
                assert_same(&[float(DType::BF16, op, a, b)], &[f64::from(want)]);
            }
        }
    }
}

#[test]
fn float_rounding_by_hand() {
    // f16: spacing 2 at 2048; 2049 ties to 2048, 2051 ties to 2052.
    assert_eq!(float(DType::F16, B::Add, 2048.0, 1.0), 2048.0);
    assert_eq!(float(DType::F16, B::Add, 2048.0, 3.0), 2052.0);
    assert_eq!(float(DType::F16, B::Mul, 300.0, 300.0), f64::INFINITY);
    // bf16: 1 + 2^-8 ties to 1.
    assert_eq!(float(DType::BF16, B::Add, 1.0, 2f64.powi(-8)), 1.0);
    assert_eq!(
        float(DType::BF16, B::Add, 1.0, 3.0 * 2f64.powi(-8)),
        1.0 + 2f64.powi(-6)
    );
    // f32: 1 + 2^-24 ties to 1.
    assert_eq!(float(DType::F32, B::Add, 1.0, 2f64.powi(-24)), 1.0);
    // f64 is computed exactly as f64.
    assert_eq!(float(DType::F64, B::Add, 0.1, 0.2), 0.1 + 0.2);
    // E4M3: 456 rounds to 448; 448 + 32 is past the largest value: NaN.
    assert_eq!(float(DType::F8E4M3, B::Add, 448.0, 8.0), 448.0);
    assert!(float(DType::F8E4M3, B::Add, 448.0, 32.0).is_nan());
    assert_eq!(float(DType::F8E4M3, B::Add, 1.0, 0.125), 1.125);
    assert_eq!(float(DType::F8E4M3, B::Add, 1.0, 0.0625), 1.0);
    // E5M2 overflows to infinity.
    assert_eq!(float(DType::F8E5M2, B::Mul, 57344.0, 2.0), f64::INFINITY);
    assert_eq!(float(DType::F8E5M2, B::Add, 1.0, 0.25), 1.25);
}

#[test]
fn float_division_floor_ops_and_nan() {
    let d = DType::F32;
    assert_eq!(float(d, B::Div, 1.0, 0.0), f64::INFINITY);
    assert_eq!(float(d, B::Div, -1.0, 0.0), f64::NEG_INFINITY);
    assert!(float(d, B::Div, 0.0, 0.0).is_nan());
    assert_eq!(float(d, B::FloorDiv, -7.0, 2.0), -4.0);
    assert_eq!(float(d, B::FloorDiv, 7.0, 2.0), 3.0);
    assert_eq!(float(d, B::FloorMod, -7.0, 2.0), 1.0);
    assert_eq!(float(d, B::FloorMod, 7.0, -2.0), -1.0);
    assert_eq!(float(d, B::FloorMod, 5.5, 2.0), 1.5);
    assert!(float(d, B::Min, f64::NAN, 1.0).is_nan());
    assert!(float(d, B::Min, 1.0, f64::NAN).is_nan());
    assert!(float(d, B::Max, 1.0, f64::NAN).is_nan());
    assert!(float(d, B::Max, f64::NAN, 1.0).is_nan());
    assert_eq!(float(d, B::Min, -2.0, 3.0), -2.0);
    assert_eq!(float(d, B::Max, -2.0, 3.0), 3.0);
    assert_same(&[float(d, B::Min, 0.0, -0.0)], &[-0.0]);
    assert_same(&[float(d, B::Max, -0.0, 0.0)], &[0.0]);
    assert_eq!(float(d, B::Pow, 2.0, 10.0), 1024.0);
    assert_eq!(float(d, B::Pow, 2.0, 0.5), f64::from(2f32.sqrt()));
    assert_eq!(float(d, B::Pow, 4.0, -0.5), 0.5);
    assert!(float(d, B::Add, f64::INFINITY, f64::NEG_INFINITY).is_nan());
}

#[test]
fn float_math_functions() {
    let d = DType::F32;
    assert_eq!(unary_f(d, U::Exp, 0.0), 1.0);
    assert_eq!(unary_f(d, U::Exp2, 3.0), 8.0);
    assert_eq!(unary_f(d, U::Exp2, -2.0), 0.25);
    assert_eq!(unary_f(d, U::Log, 1.0), 0.0);
    assert_eq!(unary_f(d, U::Log, 0.0), f64::NEG_INFINITY);
    assert!(unary_f(d, U::Log, -1.0).is_nan());
    assert_eq!(unary_f(d, U::Log2, 8.0), 3.0);
    assert_eq!(unary_f(d, U::Sqrt, 16.0), 4.0);
    assert!(unary_f(d, U::Sqrt, -1.0).is_nan());
    assert_eq!(unary_f(d, U::Rsqrt, 4.0), 0.5);
    assert_eq!(unary_f(d, U::Rsqrt, 0.0), f64::INFINITY);
    assert_eq!(unary_f(d, U::Sigmoid, 0.0), 0.5);
    assert_eq!(unary_f(d, U::Sigmoid, f64::NEG_INFINITY), 0.0);
    assert_eq!(unary_f(d, U::Sigmoid, f64::INFINITY), 1.0);
    assert_eq!(unary_f(d, U::Tanh, 0.0), 0.0);
    assert_eq!(unary_f(d, U::Tanh, 100.0), 1.0);
    assert_eq!(unary_f(d, U::Sin, 0.0), 0.0);
    assert_eq!(unary_f(d, U::Cos, 0.0), 1.0);
    assert_eq!(unary_f(d, U::Floor, -1.5), -2.0);
    assert_eq!(unary_f(d, U::Ceil, -1.5), -1.0);
    assert_eq!(unary_f(d, U::Round, 2.5), 2.0);
    assert_eq!(unary_f(d, U::Round, 3.5), 4.0);
    assert_same(&[unary_f(d, U::Round, -2.5)], &[-2.0]);
    assert_same(&[unary_f(d, U::Round, 0.5)], &[0.0]);
    assert_eq!(unary_f(d, U::Round, 2.6), 3.0);
    assert_eq!(unary_f(d, U::Abs, -3.5), 3.5);
    assert_eq!(unary_f(d, U::Neg, 3.5), -3.5);
    assert_same(&[unary_f(d, U::Neg, 0.0)], &[-0.0]);
    // Results are rounded to the type: e in f16 is 2.71875, in bf16 2.71875.
    assert_eq!(unary_f(DType::F16, U::Exp, 1.0), 2.71875);
    assert_eq!(unary_f(DType::BF16, U::Exp, 1.0), 2.71875);
    assert_eq!(
        unary_f(DType::F32, U::Exp, 1.0),
        f64::from(std::f32::consts::E)
    );
    assert_eq!(unary_f(DType::F16, U::Exp, 12.0), f64::INFINITY);
    assert_eq!(unary_f(DType::F64, U::Sin, 1.0), 1f64.sin());
    let isnan = |x: f64| {
        eval_i(|f| {
            let v = f.flit(DType::F32, x);
            f.un(U::IsNan, v)
        })
    };
    let isinf = |x: f64| {
        eval_i(|f| {
            let v = f.flit(DType::F16, x);
            f.un(U::IsInf, v)
        })
    };
    assert_eq!(
        (isnan(f64::NAN), isnan(1.0), isnan(f64::INFINITY)),
        (1, 0, 0)
    );
    assert_eq!(
        (
            isinf(f64::INFINITY),
            isinf(-1e9),
            isinf(1.0),
            isinf(f64::NAN)
        ),
        (1, 1, 0, 0)
    );
}

#[test]
fn integer_unary() {
    assert_eq!(unary_i(DType::I8, U::Neg, -128), -128);
    assert_eq!(unary_i(DType::I32, U::Neg, 5), -5);
    assert_eq!(unary_i(DType::U8, U::Neg, 1), 255);
    assert_eq!(unary_i(DType::I32, U::Abs, -5), 5);
    assert_eq!(unary_i(DType::I8, U::Abs, -128), -128);
    assert_eq!(unary_i(DType::U8, U::Abs, 200), 200);
    assert_eq!(unary_i(DType::U8, U::BitNot, 0), 255);
    assert_eq!(unary_i(DType::I32, U::BitNot, 0), -1);
    assert_eq!(unary_i(DType::U64, U::BitNot, 0), U64_MAX);
}

#[test]
fn casts() {
    assert_eq!(cast_fi(DType::F32, DType::I32, -3.7), -3);
    assert_eq!(cast_fi(DType::F32, DType::I32, 3.99), 3);
    assert_eq!(cast_fi(DType::F32, DType::I32, f64::NAN), 0);
    assert_eq!(cast_fi(DType::F32, DType::U8, 300.5), 44);
    assert_eq!(cast_fi(DType::F32, DType::U8, -1.5), 255);
    assert_eq!(cast_fi(DType::F64, DType::I32, 1e10), 1_410_065_408);
    assert_eq!(
        cast_fi(DType::F64, DType::U64, 1.8e19),
        18_000_000_000_000_000_000u64 as i64
    );
    assert_eq!(cast_fi(DType::F32, DType::Bool, 0.5), 1);
    assert_eq!(cast_fi(DType::F32, DType::Bool, 0.0), 0);
    assert_eq!(cast_fi(DType::F32, DType::Bool, f64::NAN), 0);
    assert_eq!(cast_if(DType::I32, DType::F16, 2049), 2048.0);
    assert_eq!(cast_if(DType::I32, DType::F16, 2051), 2052.0);
    assert_eq!(cast_if(DType::I32, DType::F16, 100_000), f64::INFINITY);
    assert_eq!(
        cast_if(DType::U64, DType::F64, U64_MAX),
        18_446_744_073_709_551_615.0
    );
    assert_eq!(
        cast_if(DType::U64, DType::F32, U64_MAX),
        f64::from(u64::MAX as f32)
    );
    assert_eq!(cast_if(DType::I64, DType::F64, -1), -1.0);
    assert_eq!(cast_if(DType::Bool, DType::F32, 1), 1.0);
    assert_eq!(cast_ff(DType::F32, DType::F16, 0.1), 0.0999755859375);
    assert_eq!(cast_ff(DType::F64, DType::F32, 0.1), f64::from(0.1f32));
    assert_eq!(cast_ff(DType::F32, DType::F8E4M3, 0.3), 0.3125);
    assert_eq!(cast_ff(DType::F32, DType::F8E5M2, 0.3), 0.3125);
    assert!(cast_ff(DType::F32, DType::F8E4M3, 1000.0).is_nan());
    assert_eq!(cast_ff(DType::F16, DType::F32, 65504.0), 65504.0);
    assert_eq!(cast_ii(DType::I32, DType::U8, -1), 255);
    assert_eq!(cast_ii(DType::I32, DType::U8, 300), 44);
    assert_eq!(cast_ii(DType::I64, DType::U64, -1), U64_MAX);
    assert_eq!(cast_ii(DType::U64, DType::I32, U64_MAX), -1);
    assert_eq!(cast_ii(DType::U32, DType::I16, 40_000), -25_536);
    assert_eq!(cast_ii(DType::I32, DType::Bool, 2), 1);
    assert_eq!(cast_ii(DType::U64, DType::Bool, i64::MIN), 1);
}

#[test]
fn select_and_logic_are_lazy() {
    // `select(false, S[100], 1.0)` and `false and S[100] > 0` must not touch
    // the out-of-bounds element of a shared buffer.
    let mut fb = Fb::new();
    let s = fb.buffer("S", DType::F32, Scope::Shared, &[4]);
    let out = fb.param("out", DType::F32, &[2]);
    let flag = fb.param("flag", DType::Bool, &[1]);
    let (i0, i1, i100) = (fb.int(0), fb.int(1), fb.int(100));
    let oob = fb.load(s, &[i100]);
    let no = fb.ilit(DType::Bool, 0);
    let one = fb.flit(DType::F32, 1.0);
    let picked = fb.select(no, oob, one);
    let zero = fb.flit(DType::F32, 0.0);
    let positive = fb.bin(B::Gt, oob, zero);
    let both = fb.bin(B::And, no, positive);
    let yes = fb.ilit(DType::Bool, 1);
    let either = fb.bin(B::Or, yes, positive);
    let flag_value = fb.bin(B::BitOr, both, either);
    let alloc = fb.alloc(s);
    let st0 = fb.store(out, &[i0], picked);
    let st1 = fb.store(out, &[i1], picked);
    let st2 = fb.store(flag, &[i0], flag_value);
    fb.body(vec![alloc, st0, st1, st2]);
    let mut args = vec![
        Tensor::zeros(DType::F32, [2]),
        Tensor::zeros(DType::Bool, [1]),
    ];
    run(&fb.f, &mut args).expect("lazy evaluation avoids the bad load");
    assert_eq!(args[0].to_f64_vec(), vec![1.0, 1.0]);
    assert_eq!(args[1].data, TensorData::Int(vec![1]));
}

#[test]
fn stores_round_to_the_buffer_type() {
    // out_T[i] = cast<T>(x[i]) through a parallel loop; compare with
    // conversions done by the `half` crate and by hand for FP8.
    let values = [0.1, 1.0 / 3.0, 70000.0, -2.0e-6, 3.3, 1e-10, 300.0, -0.0];
    let n = values.len();
    let mut fb = Fb::new();
    let x = fb.param("x", DType::F64, &[n as i64]);
    let targets = [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2];
    let outs: Vec<_> = targets
        .iter()
        .map(|&d| fb.param(&format!("out_{d}"), d, &[n as i64]))
        .collect();
    let nest = fb.parallel(&[n as i64], |fb, i| {
        let v = fb.load(x, &[i[0]]);
        let stores = targets
            .iter()
            .zip(&outs)
            .map(|(&d, &o)| {
                let c = fb.cast(d, v);
                fb.store(o, &[i[0]], c)
            })
            .collect();
        super::block(stores)
    });
    fb.body(vec![nest]);
    let mut args = vec![tensor(DType::F64, &[n], &values)];
    args.extend(targets.iter().map(|&d| Tensor::zeros(d, [n])));
    run(&fb.f, &mut args).expect("run");
    let f16: Vec<f64> = values
        .iter()
        .map(|&v| f64::from(half::f16::from_f64(v)))
        .collect();
    let bf16: Vec<f64> = values
        .iter()
        .map(|&v| f64::from(half::bf16::from_f64(v)))
        .collect();
    assert_same(&args[1].to_f64_vec(), &f16);
    assert_same(&args[2].to_f64_vec(), &bf16);
    // E4M3 by hand: 0.1 → 0.1015625 (13·2^-7), 1/3 → 0.34375 (11·2^-5),
    // 70000 → NaN, -2e-6 → -0 (below half the smallest subnormal 2^-9),
    // 3.3 → 3.25 (spacing 0.25 in [2,4)), 1e-10 → 0, 300 → 288
    // (spacing 32 in [256, 512)), -0 → -0.
    let e4m3 = [0.1015625, 0.34375, f64::NAN, -0.0, 3.25, 0.0, 288.0, -0.0];
    assert_same(&args[3].to_f64_vec(), &e4m3);
    // E5M2: 0.1 → 0.09375 (6·2^-6), 1/3 → 0.3125 (5·2^-4), 70000 → inf,
    // -2e-6 → -0 (smallest subnormal 2^-16), 3.3 → 3.5 (spacing 0.5),
    // 300 → 320.
    let e5m2 = [0.09375, 0.3125, f64::INFINITY, -0.0, 3.5, 0.0, 320.0, -0.0];
    assert_same(&args[4].to_f64_vec(), &e5m2);
}
