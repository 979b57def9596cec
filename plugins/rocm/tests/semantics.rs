//! The emitted arithmetic against the SIMT interpreter, without a GPU.
//!
//! Each case is a one-expression kernel over literals (integer division
//! and modulo at the edges, shifts out of range, min/max with NaN and
//! signed zeros, float `//` and `%`, casts between every kind of type,
//! bf16 and f16 rounding near ties). The kernel is translated to AMDGPU
//! LLVM IR and optimised with `opt -O2`, whose constant folder evaluates
//! each LLVM instruction exactly as its semantics say; the constant the
//! optimised kernel stores must equal, bit for bit, what the SIMT
//! interpreter computes for the same kernel. This checks the translation
//! rules of `emit/expr.rs`, not the hardware. Needs `opt-19` (skipped with
//! a message otherwise, a failure under `TILEC_REQUIRE_LLVM=1`).

#![allow(clippy::print_stderr)]

use std::fmt::Write as _;

use tilec_backend_rocm::emit::{self, EmitOptions};
use tilec_backend_rocm::{targets, toolchain};
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;
use tilec_core::simt::{self, SimtOptions};
use tilec_core::thread;

/// (result type, expression) cases.
fn cases() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let ints = [
        "7",
        "-7",
        "3",
        "-3",
        "1",
        "-1",
        "2147483647",
        "-2147483648",
        "13",
    ];
    for a in ints {
        for b in ints {
            for op in ["//", "%", "/"] {
                out.push(("i32", format!("{a} {op} ({b})")));
            }
        }
        for s in ["0", "1", "31", "32", "-1", "40"] {
            out.push(("i32", format!("{a} >> {s}")));
            out.push(("i32", format!("{a} << {s}")));
        }
        out.push(("i32", format!("min({a}, -5)")));
        out.push(("i32", format!("max({a}, -5)")));
    }
    for (a, b) in [("-128", "-1"), ("-128", "3"), ("127", "-2"), ("-7", "2")] {
        for op in ["//", "%", "/"] {
            out.push(("i8", format!("i8({a}) {op} i8({b})")));
        }
    }
    for (a, b) in [("4294967295", "7"), ("10", "3"), ("3", "4294967295")] {
        for op in ["//", "%", "/"] {
            out.push(("u32", format!("u32({a}) {op} u32({b})")));
        }
        out.push(("u32", format!("min(u32({a}), u32({b}))")));
        out.push(("u32", format!("u32({a}) >> u32(31)")));
    }
    out.push(("u32", "u32(4294967295) >> u32(32)".into()));
    out.push(("i64", "i64(-9223372036854775807) // i64(-1)".into()));
    out.push(("i32", "-(-2147483648)".into()));
    out.push(("i32", "abs(-2147483648)".into()));
    out.push(("i32", "~5".into()));
    out.push(("i32", "pow(3, 4)".into()));
    out.push(("i32", "pow(-1, -3)".into()));
    out.push(("i32", "pow(2, -1)".into()));
    // Casts into integers.
    for x in [
        "-3.7", "2.5", "-0.5", "1e10", "-1e10", "3e9", "nan", "inf", "-inf", "65535.9",
    ] {
        out.push(("i32", format!("cast<i32>(f32({x}))")));
        out.push(("u8", format!("cast<u8>(f32({x}))")));
        out.push(("bool", format!("cast<bool>(f32({x}))")));
        out.push(("i64", format!("cast<i64>(f64({x}))")));
        out.push(("u32", format!("cast<u32>(f64({x}))")));
    }
    for x in ["9.3e18", "1.8e19", "2e19", "-9.3e18"] {
        out.push(("i64", format!("cast<i64>(f64({x}))")));
        out.push(("u64", format!("cast<u64>(f64({x}))")));
        out.push(("i32", format!("cast<i32>(f64({x}))")));
    }
    out.push(("bool", "cast<bool>(i32(256))".into()));
    out.push(("u8", "cast<u8>(i32(-1))".into()));
    out.push(("i16", "cast<i16>(u32(4294967295))".into()));
    out.push(("i64", "cast<i64>(u32(4294967295))".into()));
    out.push(("i32", "cast<i32>(true)".into()));
    // Casts into floats, rounding near ties.
    for x in [
        "1.00048828125",
        "1.000488281250001",
        "1.0004882812499998",
        "1.0009765625",
        "65519.99",
        "65520.0",
        "6.0e-8",
        "3.0e-8",
        "-2.9802322387695312e-8",
        "1e-300",
        "nan",
    ] {
        out.push(("f16", format!("cast<f16>(f64({x}))")));
        out.push(("f32", format!("cast<f32>(f64({x}))")));
    }
    for x in [
        "1.00390625",
        "1.0039062500001",
        "1.01171875",
        "3.3895313892515355e38",
        "3.4e38",
        "1e-40",
        "-0.0",
    ] {
        out.push(("bf16", format!("cast<bf16>(f64({x}))")));
        out.push(("bf16", format!("cast<bf16>(f32({x}))")));
    }
    for x in [
        "16777217",
        "16842752",
        "16842753",
        "-2147483647",
        "2147483647",
    ] {
        out.push(("bf16", format!("cast<bf16>(i32({x}))")));
        out.push(("f16", format!("cast<f16>(i32({x}))")));
        out.push(("f32", format!("cast<f32>(i64({x}))")));
    }
    out.push(("f32", "cast<f32>(i64(9007199791611905))".into()));
    out.push(("f32", "cast<f32>(u64(18446744073709551615))".into()));
    out.push(("bf16", "cast<bf16>(f16(1.0009765625))".into()));
    out.push(("f16", "cast<f16>(bf16(1.0078125))".into()));
    out.push(("f16", "cast<f16>(bf16(1e10))".into()));
    // Float arithmetic.
    for (a, b) in [
        ("7.5", "2.0"),
        ("-7.5", "2.0"),
        ("7.5", "-2.0"),
        ("1.0", "3.0"),
    ] {
        for t in ["f32", "f16", "bf16", "f64"] {
            for op in ["//", "%", "/", "+", "*"] {
                out.push((leak(t), format!("{t}({a}) {op} {t}({b})")));
            }
        }
    }
    for t in ["f32", "f16", "bf16"] {
        out.push((leak(t), format!("{t}(1.0) + {t}(0.0009765625)")));
        out.push((leak(t), format!("{t}(1.0) + {t}(0.00390625)")));
        out.push((leak(t), format!("{t}(3.0) * {t}(1.3)")));
        out.push((leak(t), format!("min({t}(-0.0), {t}(0.0))")));
        out.push((leak(t), format!("max({t}(-0.0), {t}(0.0))")));
        out.push((leak(t), format!("min({t}(nan), {t}(1.0))")));
        out.push((leak(t), format!("sqrt({t}(2.0))")));
        out.push((leak(t), format!("rsqrt({t}(3.0))")));
        out.push((leak(t), format!("floor({t}(-2.5))")));
        out.push((leak(t), format!("round({t}(2.5))")));
        out.push((leak(t), format!("abs({t}(-2.5))")));
        out.push((leak(t), format!("-{t}(2.5)")));
    }
    out.push(("bool", "isnan(f32(nan))".into()));
    out.push(("bool", "isinf(bf16(-inf))".into()));
    out.push(("bool", "f32(nan) != f32(nan)".into()));
    out.push(("bool", "f16(1.0) < f16(2.0)".into()));
    out.push(("bool", "u32(4294967295) > u32(1)".into()));
    out.push(("bool", "i32(-1) > i32(1)".into()));
    out
}

fn leak(t: &str) -> &'static str {
    match t {
        "f32" => "f32",
        "f16" => "f16",
        "bf16" => "bf16",
        _ => "f64",
    }
}

/// The module: one kernel per case, storing its value from thread 0.
fn module_text(cases: &[(&str, String)]) -> String {
    let mut text = String::from("thread_ir 0.1\n");
    for (i, (ty, expr)) in cases.iter().enumerate() {
        let _ = write!(
            text,
            "\nkernel @e{i}(%out: global {ty}[1]) grid(1, 1, 1) threads(64) {{\n  var %r: {ty}\n  %r = {expr}\n  if thread_idx == 0 {{\n    store global x1 %out[0] <- %r\n  }}\n}}\n"
        );
    }
    text
}

/// The constant the optimised kernel `@eN` stores, as the interpreter's
/// value (`f64` for floats, `i64` for integers).
fn stored(optimised: &str, index: usize, dtype: DType) -> Option<Value> {
    let header = format!("@e{index}(");
    let start = optimised.find(&format!("define amdgpu_kernel void {header}"))?;
    let body = &optimised[start..];
    let end = body.find("\n}\n")?;
    let line = body[..end]
        .lines()
        .find(|l| l.trim_start().starts_with("store ") && l.contains("addrspace(1)"))?;
    let mut words = line.trim_start().strip_prefix("store ")?.split_whitespace();
    let ty = words.next()?;
    let literal = words.next()?.trim_end_matches(',');
    Some(match dtype {
        DType::F32 | DType::F64 => Value::F(parse_float(literal)?),
        DType::F16 => {
            let bits = u16::from_str_radix(literal.strip_prefix("0xH")?, 16).ok()?;
            Value::F(f64::from(half::f16::from_bits(bits)))
        }
        DType::BF16 => {
            let bits = literal.parse::<i64>().ok()? as u16;
            Value::F(f64::from(half::bf16::from_bits(bits)))
        }
        _ => {
            let v: i64 = match literal {
                "true" => 1,
                "false" => 0,
                _ => literal.parse().ok()?,
            };
            let _ = ty;
            Value::I(dtype.wrap_i64(v))
        }
    })
}

fn parse_float(text: &str) -> Option<f64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(f64::from_bits);
    }
    text.parse().ok()
}

#[derive(Clone, Copy, Debug)]
enum Value {
    F(f64),
    I(i64),
}

impl Value {
    fn same(self, other: Value) -> bool {
        match (self, other) {
            (Value::F(a), Value::F(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
            (Value::I(a), Value::I(b)) => a == b,
            _ => false,
        }
    }
}

#[test]
fn folded_translation_matches_the_interpreter() {
    let Some(opt) = toolchain::find_tool("opt-19", "opt") else {
        assert!(
            std::env::var("TILEC_REQUIRE_LLVM").map_or(true, |v| v != "1"),
            "TILEC_REQUIRE_LLVM=1 but opt-19 is missing"
        );
        eprintln!("opt-19 not found: semantics test skipped");
        return;
    };
    let cases = cases();
    let text = module_text(&cases);
    let module = thread::parse_module(&text).unwrap_or_else(|e| panic!("{e}"));
    let target = targets::describe("gfx942").unwrap_or_else(|e| panic!("{}", e.message));
    let emitted = emit::emit_module(&module, &target, &EmitOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocm-semantics");
    let _ = std::fs::create_dir_all(&dir);
    let ll = dir.join("cases.ll");
    std::fs::write(&ll, &emitted.text).unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(&opt)
        .args(["-O2", "-S", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942"])
        .arg(&ll)
        .args(["-o", "-"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let optimised = String::from_utf8_lossy(&out.stdout);
    let mut failures = Vec::new();
    let mut folded = 0;
    for (i, k) in module.kernels.iter().enumerate() {
        let thread::Param::Global(g) = &k.params[0] else {
            continue;
        };
        let dtype = g.dtype;
        let mut args = vec![Tensor::zeros(dtype, vec![1])];
        if let Err(e) = simt::run(k, &target, &mut args, &SimtOptions::default()) {
            failures.push(format!("{}: interpreter: {e}", cases[i].1));
            continue;
        }
        let want = match &args[0].data {
            TensorData::Float(v) => Value::F(v[0]),
            TensorData::Int(v) => Value::I(v[0]),
        };
        match stored(&optimised, i, dtype) {
            Some(got) => {
                folded += 1;
                if !got.same(want) {
                    failures.push(format!(
                        "{} ({}): interpreter {want:?}, LLVM {got:?}",
                        cases[i].1, cases[i].0
                    ));
                }
            }
            None => eprintln!("{}: not folded to a constant", cases[i].1),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        folded * 10 >= cases.len() * 9,
        "only {folded} of {} cases folded",
        cases.len()
    );
}
