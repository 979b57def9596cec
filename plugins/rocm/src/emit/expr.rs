//! Expressions: thread-level IR scalar semantics in LLVM instructions.
//!
//! The SIMT interpreter is the specification (`core/src/simt/value.rs`,
//! rounding by `DType::round_f64`); every rule below reproduces it:
//!
//! - **Integers** wrap. `/` truncates, `//` and `%` round toward negative
//!   infinity (a remainder whose sign differs from the divisor's moves the
//!   quotient down by one and the remainder up by the divisor). A division
//!   by a value that is not a known constant first replaces a zero or `-1`
//!   divisor by 1 (LLVM's `sdiv` is undefined there) and produces `-x` for
//!   `-1`, the wrapped result. Shifts by a count outside `0 .. bits` give 0,
//!   or the sign for an arithmetic right shift. `min`/`max` are the signed
//!   or unsigned intrinsics; integer `**` calls a helper that squares and
//!   multiplies as the interpreter does.
//! - **f32 and f64** `+ - * /` and `sqrt` are the native IEEE operations:
//!   rounding the exact result once is what the interpreter's "compute in
//!   f64, round into the type" gives for these operators. **f16 and
//!   bf16** are computed in f32 and rounded once into their type (f32 has
//!   at least twice their precision plus two bits, so this equals one
//!   rounding of the exact result, as the interpreter's does). bf16 values
//!   are kept as their 16 bits (`i16`). `rsqrt` is `1 / sqrt(x)` in f64
//!   for every type. `//` and `%` on floats are computed in f64 exactly as
//!   the interpreter writes them (`floor(x / y)`, `x - floor(x / y) · y`)
//!   and then rounded. `min` and `max` propagate NaN and order −0 below +0
//!   (`llvm.minimum`/`maximum`).
//! - **Rounding** is to nearest even, once: from f64 into f16 and bf16
//!   through an f32 rounded to odd, then round-to-nearest-even (exact for
//!   any f64 value); NaN stays NaN.
//! - **Casts** into integers truncate toward zero through a 64-bit value
//!   (NaN → 0, saturating, values in [2^63, 2^64) keeping their unsigned
//!   bits) and wrap; into `bool` they test `!= 0`. Integers become floats
//!   through f64 (`i64 → f32` thus rounds twice, as in the interpreter).
//! - **Bit casts** are LLVM `bitcast`s between types of one width (none
//!   where both are held in the same LLVM type, as `i16` and `bf16`).
//! - **Transcendental functions** (`exp`, `log`, `sin`, `tanh`, ...) are
//!   LLVM's f32 intrinsics (f16/bf16 computed in f32): accurate to a few
//!   ulp, not bit-identical to the interpreter's f64 `libm`. On f64 only
//!   `sqrt`, `floor`, `ceil` and `round` exist without a device math
//!   library; the others are refused as unimplemented.

use std::fmt::Write as _;

use tilec_core::ir::{BinaryOp, DType, DTypeKind, Literal, UnaryOp};
use tilec_core::thread::{Expr, ExprKind, Special};

use super::{EmitError, KernelEmitter, value_type};

/// 2^63 and 2^64 as f64 bit patterns (exact).
const TWO_63: &str = "0x43E0000000000000";
const TWO_64: &str = "0x43F0000000000000";

impl KernelEmitter<'_> {
    fn ty(&self, d: DType) -> Result<&'static str, EmitError> {
        value_type(d).ok_or_else(|| self.unsupported(format!("values of type {d}")))
    }

    /// Emits `e` and returns its value.
    pub fn expr(&mut self, e: &Expr) -> Result<String, EmitError> {
        match &e.kind {
            ExprKind::Literal(l) => self.literal(l),
            ExprKind::Reg(r) => {
                let ty = self.ty(self.reg_dtype(*r)?)?;
                Ok(self.inst(format!(
                    "load {ty}, ptr addrspace(5) {}",
                    Self::reg_slot(*r)
                )))
            }
            ExprKind::Elem(r, index) => {
                let ty = self.ty(self.reg_dtype(*r)?)?;
                let i = self.index_i32(index)?;
                let ptr = self.inst(format!(
                    "getelementptr inbounds {ty}, ptr addrspace(5) {}, i32 {i}",
                    Self::reg_slot(*r)
                ));
                Ok(self.inst(format!("load {ty}, ptr addrspace(5) {ptr}")))
            }
            ExprKind::Param(p) => Ok(format!("%p{}", p.0)),
            ExprKind::Special(s) => Ok(match s {
                Special::ThreadIdx => "%tid",
                Special::BlockIdxX => "%bid.x",
                Special::BlockIdxY => "%bid.y",
                Special::BlockIdxZ => "%bid.z",
                Special::LaneId => "%lane",
                Special::WarpId => "%wave",
            }
            .to_string()),
            ExprKind::Unary(op, a) => {
                let x = self.expr(a)?;
                self.unary(*op, &x, a.dtype)
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Cast(a) => {
                let x = self.expr(a)?;
                self.cast(&x, a.dtype, e.dtype)
            }
            ExprKind::Bitcast(a) => {
                let x = self.expr(a)?;
                if a.dtype.bits() != e.dtype.bits() || a.dtype.is_bool() || e.dtype.is_bool() {
                    return Err(
                        self.internal(format!("a bit cast from {} to {}", a.dtype, e.dtype))
                    );
                }
                let (from, to) = (self.ty(a.dtype)?, self.ty(e.dtype)?);
                // Values are held at their width (bf16 as its `i16` bits),
                // so the bits move unchanged.
                Ok(if from == to {
                    x
                } else {
                    self.inst(format!("bitcast {from} {x} to {to}"))
                })
            }
            ExprKind::Select(c, a, b) => {
                let c = self.expr(c)?;
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                let ty = self.ty(e.dtype)?;
                Ok(self.inst(format!("select i1 {c}, {ty} {x}, {ty} {y}")))
            }
        }
    }

    fn literal(&self, l: &Literal) -> Result<String, EmitError> {
        Ok(match *l {
            Literal::Bool(b) => b.to_string(),
            Literal::Int(v, d) => match d {
                DType::Bool => (v != 0).to_string(),
                DType::I8 | DType::U8 => (v as i8).to_string(),
                DType::I16 | DType::U16 => (v as i16).to_string(),
                DType::I32 | DType::U32 => (v as i32).to_string(),
                _ => v.to_string(),
            },
            Literal::Float(x, d) => match d {
                DType::F32 | DType::F64 => format!("0x{:016X}", x.to_bits()),
                DType::F16 => format!("0xH{:04X}", half::f16::from_f64(x).to_bits()),
                DType::BF16 => (half::bf16::from_f64(x).to_bits() as i16).to_string(),
                _ => return Err(self.unsupported(format!("a literal of type {d}"))),
            },
        })
    }

    // ---- integer helpers ----

    /// An integer (or bool) value as `i32`: truncated, or extended by its
    /// signedness.
    pub fn int_to_i32(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        self.int_resize(v, d, 32)
    }

    pub fn int_to_i64(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        self.int_resize(v, d, 64)
    }

    fn int_resize(&mut self, v: &str, d: DType, bits: u32) -> Result<String, EmitError> {
        if !(d.is_int() || d == DType::Bool) {
            return Err(self.internal(format!("an index or count of type {d}")));
        }
        let from = self.ty(d)?;
        let have = if d == DType::Bool { 1 } else { d.bits() };
        Ok(if have == bits {
            v.to_string()
        } else if have > bits {
            self.inst(format!("trunc {from} {v} to i{bits}"))
        } else if d.kind() == DTypeKind::Signed {
            self.inst(format!("sext {from} {v} to i{bits}"))
        } else {
            self.inst(format!("zext {from} {v} to i{bits}"))
        })
    }

    /// An index expression as `i32`.
    pub fn index_i32(&mut self, e: &Expr) -> Result<String, EmitError> {
        if let Some(c) = e.as_const_int() {
            return Ok((c as i32).to_string());
        }
        let v = self.expr(e)?;
        self.int_to_i32(&v, e.dtype)
    }

    /// An index expression as `i64`.
    pub fn index_i64(&mut self, e: &Expr) -> Result<String, EmitError> {
        if let Some(c) = e.as_const_int() {
            let wrapped = e.dtype.wrap_i64(c);
            return Ok(wrapped.to_string());
        }
        let v = self.expr(e)?;
        self.int_to_i64(&v, e.dtype)
    }

    /// A value of at most 32 bits as the `i32` its bits extend to.
    pub fn as_i32_bits(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::I32 | DType::U32 => v.to_string(),
            DType::F32 => self.inst(format!("bitcast float {v} to i32")),
            DType::F16 => {
                let b = self.inst(format!("bitcast half {v} to i16"));
                self.inst(format!("zext i16 {b} to i32"))
            }
            DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::BF16 => {
                let ty = self.ty(d)?;
                self.inst(format!("zext {ty} {v} to i32"))
            }
            _ => return Err(self.internal(format!("a shuffle of a {d} value"))),
        })
    }

    /// A value of at most 64 bits as the `i32` words a lane exchange
    /// moves: one word, or the low and high halves of a 64-bit value.
    pub fn as_i32_words(&mut self, v: &str, d: DType) -> Result<Vec<String>, EmitError> {
        let wide = match d {
            DType::I64 | DType::U64 => v.to_string(),
            DType::F64 => self.inst(format!("bitcast double {v} to i64")),
            _ => return Ok(vec![self.as_i32_bits(v, d)?]),
        };
        let lo = self.inst(format!("trunc i64 {wide} to i32"));
        let shifted = self.inst(format!("lshr i64 {wide}, 32"));
        let hi = self.inst(format!("trunc i64 {shifted} to i32"));
        Ok(vec![lo, hi])
    }

    /// The inverse of [`Self::as_i32_words`].
    pub fn value_of_i32_words(&mut self, words: &[String], d: DType) -> Result<String, EmitError> {
        match (words, d) {
            ([lo, hi], DType::I64 | DType::U64 | DType::F64) => {
                let lo = self.inst(format!("zext i32 {lo} to i64"));
                let hi = self.inst(format!("zext i32 {hi} to i64"));
                let hi = self.inst(format!("shl i64 {hi}, 32"));
                let wide = self.inst(format!("or i64 {hi}, {lo}"));
                Ok(if d == DType::F64 {
                    self.inst(format!("bitcast i64 {wide} to double"))
                } else {
                    wide
                })
            }
            ([w], _) => self.value_of_i32_bits(w, d),
            _ => Err(self.internal(format!("a shuffle of a {d} value"))),
        }
    }

    /// The inverse of [`Self::as_i32_bits`].
    pub fn value_of_i32_bits(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::I32 | DType::U32 => v.to_string(),
            DType::F32 => self.inst(format!("bitcast i32 {v} to float")),
            DType::F16 => {
                let b = self.inst(format!("trunc i32 {v} to i16"));
                self.inst(format!("bitcast i16 {b} to half"))
            }
            DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 | DType::BF16 => {
                let ty = self.ty(d)?;
                self.inst(format!("trunc i32 {v} to {ty}"))
            }
            _ => return Err(self.internal(format!("a shuffle of a {d} value"))),
        })
    }

    // ---- float helpers ----

    /// Calls a float intrinsic of one or two arguments of type `ty`.
    fn float_call(&mut self, name: &str, ty: &str, args: &[&str], approx: bool) -> String {
        let suffix = match ty {
            "half" => "f16",
            "float" => "f32",
            _ => "f64",
        };
        let full = format!("llvm.{name}.{suffix}");
        let params = vec![ty; args.len()].join(", ");
        self.declare(&full, format!("declare {ty} @{full}({params})"));
        let list = args
            .iter()
            .map(|a| format!("{ty} {a}"))
            .collect::<Vec<_>>()
            .join(", ");
        let flags = if approx && self.options.fast_math {
            "afn "
        } else {
            ""
        };
        self.inst(format!("call {flags}{ty} @{full}({list})"))
    }

    /// A float value as f32 (exact for f16, bf16 and f32).
    fn ext_f32(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::F32 => v.to_string(),
            DType::F16 => self.inst(format!("fpext half {v} to float")),
            DType::BF16 => {
                let w = self.inst(format!("zext i16 {v} to i32"));
                let s = self.inst(format!("shl i32 {w}, 16"));
                self.inst(format!("bitcast i32 {s} to float"))
            }
            _ => return Err(self.internal(format!("{d} is not a 32-bit-or-less float"))),
        })
    }

    /// A float value as f64 (exact).
    fn ext_f64(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::F64 => v.to_string(),
            DType::F32 => self.inst(format!("fpext float {v} to double")),
            DType::F16 => self.inst(format!("fpext half {v} to double")),
            DType::BF16 => {
                let f = self.ext_f32(v, d)?;
                self.inst(format!("fpext float {f} to double"))
            }
            _ => return Err(self.internal(format!("{d} is not a float"))),
        })
    }

    /// Rounds an f32 value into `d` (f16, bf16 or f32).
    fn round_f32_into(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::F32 => v.to_string(),
            DType::F16 => self.inst(format!("fptrunc float {v} to half")),
            DType::BF16 => self.bf16_round(v),
            DType::F64 => self.inst(format!("fpext float {v} to double")),
            _ => return Err(self.internal(format!("{d} is not a float"))),
        })
    }

    /// Rounds an f64 value into the float type `d`, once: f16 and bf16
    /// go through an f32 rounded to odd (truncated, its last bit set when
    /// inexact), which keeps enough bits for the final round-to-nearest-
    /// even to equal one rounding of the f64 value.
    fn round_f64_into(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        Ok(match d {
            DType::F64 => v.to_string(),
            DType::F32 => self.inst(format!("fptrunc double {v} to float")),
            DType::F16 => {
                let f = self.round_to_odd_f32(v);
                self.inst(format!("fptrunc float {f} to half"))
            }
            DType::BF16 => {
                let f = self.round_to_odd_f32(v);
                self.bf16_round(&f)
            }
            _ => return Err(self.internal(format!("{d} is not a float"))),
        })
    }

    /// An f64 value as the f32 rounded to odd: round to nearest, step
    /// back toward zero if that went away from zero, and set the last bit
    /// when inexact. NaN stays NaN.
    fn round_to_odd_f32(&mut self, v: &str) -> String {
        let f = self.inst(format!("fptrunc double {v} to float"));
        let back = self.inst(format!("fpext float {f} to double"));
        let inexact = self.inst(format!("fcmp one double {back}, {v}"));
        let abs_back = self.float_call("fabs", "double", &[&back], false);
        let abs_v = self.float_call("fabs", "double", &[v], false);
        let away = self.inst(format!("fcmp ogt double {abs_back}, {abs_v}"));
        let bits = self.inst(format!("bitcast float {f} to i32"));
        let down = self.inst(format!("sub i32 {bits}, 1"));
        let toward = self.inst(format!("select i1 {away}, i32 {down}, i32 {bits}"));
        let odd = self.inst(format!("or i32 {toward}, 1"));
        let chosen = self.inst(format!("select i1 {inexact}, i32 {odd}, i32 {bits}"));
        self.inst(format!("bitcast i32 {chosen} to float"))
    }

    /// Round-to-nearest-even of an f32 into bf16 bits; NaN stays NaN.
    fn bf16_round(&mut self, f: &str) -> String {
        let u = self.inst(format!("bitcast float {f} to i32"));
        let hi = self.inst(format!("lshr i32 {u}, 16"));
        let lsb = self.inst(format!("and i32 {hi}, 1"));
        let bias = self.inst(format!("add i32 {lsb}, 32767"));
        let sum = self.inst(format!("add i32 {u}, {bias}"));
        let rounded = self.inst(format!("lshr i32 {sum}, 16"));
        let mag = self.inst(format!("and i32 {u}, 2147483647"));
        let nan = self.inst(format!("icmp ugt i32 {mag}, 2139095040"));
        let quiet = self.inst(format!("or i32 {hi}, 64"));
        let r = self.inst(format!("select i1 {nan}, i32 {quiet}, i32 {rounded}"));
        self.inst(format!("trunc i32 {r} to i16"))
    }

    /// The type arithmetic on `d` is computed in, and the value in it:
    /// f32 for f16, bf16 and f32, f64 for f64.
    fn widen(&mut self, v: &str, d: DType) -> Result<(String, &'static str), EmitError> {
        Ok(if d == DType::F64 {
            (v.to_string(), "double")
        } else {
            (self.ext_f32(v, d)?, "float")
        })
    }

    /// Rounds a result of [`Self::widen`]'s type into `d`.
    fn narrow(&mut self, v: &str, d: DType) -> Result<String, EmitError> {
        if d == DType::F64 {
            Ok(v.to_string())
        } else {
            self.round_f32_into(v, d)
        }
    }

    // ---- operators ----

    fn unary(&mut self, op: UnaryOp, x: &str, d: DType) -> Result<String, EmitError> {
        if d.is_float() {
            return self.float_unary(op, x, d);
        }
        let ty = self.ty(d)?;
        Ok(match op {
            UnaryOp::Not => self.inst(format!("xor i1 {x}, true")),
            UnaryOp::BitNot => self.inst(format!("xor {ty} {x}, -1")),
            UnaryOp::Neg => self.inst(format!("sub {ty} 0, {x}")),
            UnaryOp::Abs if d.kind() == DTypeKind::Signed => {
                let name = format!("llvm.abs.{ty}");
                self.declare(&name, format!("declare {ty} @{name}({ty}, i1)"));
                self.inst(format!("call {ty} @{name}({ty} {x}, i1 false)"))
            }
            UnaryOp::Abs => x.to_string(),
            _ => return Err(self.internal(format!("`{}` on {d}", op.name()))),
        })
    }

    fn float_unary(&mut self, op: UnaryOp, x: &str, d: DType) -> Result<String, EmitError> {
        // Sign operations are exact on the type itself.
        match (op, d) {
            (UnaryOp::Neg, DType::BF16) => return Ok(self.inst(format!("xor i16 {x}, -32768"))),
            (UnaryOp::Abs, DType::BF16) => return Ok(self.inst(format!("and i16 {x}, 32767"))),
            (UnaryOp::Neg, _) => {
                let ty = self.ty(d)?;
                return Ok(self.inst(format!("fneg {ty} {x}")));
            }
            _ => {}
        }
        let (w, ty) = self.widen(x, d)?;
        let simple = |name: &'static str| Some(name);
        let intrinsic = match op {
            UnaryOp::Abs => simple("fabs"),
            UnaryOp::Floor => simple("floor"),
            UnaryOp::Ceil => simple("ceil"),
            UnaryOp::Round => simple("roundeven"),
            UnaryOp::Sqrt => simple("sqrt"),
            _ => None,
        };
        if let Some(name) = intrinsic {
            let r = self.float_call(name, ty, &[&w], false);
            return self.narrow(&r, d);
        }
        match op {
            UnaryOp::IsNan => return Ok(self.inst(format!("fcmp uno {ty} {w}, 0.0"))),
            UnaryOp::IsInf => {
                let a = self.float_call("fabs", ty, &[&w], false);
                return Ok(self.inst(format!("fcmp oeq {ty} {a}, 0x7FF0000000000000")));
            }
            UnaryOp::Rsqrt => {
                // `1 / sqrt(x)` in f64, rounded once, as the interpreter.
                let x64 = self.ext_f64(x, d)?;
                let s = self.float_call("sqrt", "double", &[&x64], false);
                let r = self.inst(format!("fdiv double 1.0, {s}"));
                return self.round_f64_into(&r, d);
            }
            _ => {}
        }
        if d == DType::F64 {
            return Err(self.unimplemented(format!(
                "`{}` on float64 (AMDGPU has no f64 instruction for it and the backend links no device math library)",
                op.name()
            )));
        }
        // Transcendental functions are computed in f32.
        let w = self.ext_f32(x, d)?;
        let ty = "float";
        let r = match op {
            UnaryOp::Exp => self.float_call("exp", ty, &[&w], true),
            UnaryOp::Exp2 => self.float_call("exp2", ty, &[&w], true),
            UnaryOp::Log => self.float_call("log", ty, &[&w], true),
            UnaryOp::Log2 => self.float_call("log2", ty, &[&w], true),
            UnaryOp::Sin => self.float_call("sin", ty, &[&w], true),
            UnaryOp::Cos => self.float_call("cos", ty, &[&w], true),
            UnaryOp::Sigmoid => {
                let n = self.inst(format!("fneg float {w}"));
                let e = self.float_call("exp", ty, &[&n], true);
                let s = self.inst(format!("fadd float 1.0, {e}"));
                self.inst(format!("fdiv float 1.0, {s}"))
            }
            UnaryOp::Tanh => self.tanh_f32(&w),
            _ => return Err(self.internal(format!("`{}` on {d}", op.name()))),
        };
        self.round_f32_into(&r, d)
    }

    /// tanh in f32: an odd Taylor polynomial below |x| = 0.25 (its first
    /// omitted term is below 2^-38 there), `(1 - e) / (1 + e)` with
    /// `e = exp(-2|x|)` above, the sign restored.
    fn tanh_f32(&mut self, x: &str) -> String {
        let a = self.float_call("fabs", "float", &[x], false);
        let x2 = self.inst(format!("fmul float {x}, {x}"));
        // Coefficients of x^13, x^11, ..., x^3 (Horner in x^2).
        let coefficients = [
            21844.0 / 6081075.0,
            -1382.0 / 155925.0,
            62.0 / 2835.0,
            -17.0 / 315.0,
            2.0 / 15.0,
            -1.0 / 3.0,
        ];
        let mut p = format!("0x{:016X}", f64::from(coefficients[0] as f32).to_bits());
        for c in &coefficients[1..] {
            let m = self.inst(format!("fmul float {p}, {x2}"));
            p = self.inst(format!(
                "fadd float {m}, 0x{:016X}",
                f64::from(*c as f32).to_bits()
            ));
        }
        let px2 = self.inst(format!("fmul float {p}, {x2}"));
        let tail = self.inst(format!("fmul float {px2}, {x}"));
        let small = self.inst(format!("fadd float {x}, {tail}"));
        let m2 = self.inst(format!("fmul float {a}, -2.0"));
        let e = self.float_call("exp", "float", &[&m2], true);
        let num = self.inst(format!("fsub float 1.0, {e}"));
        let den = self.inst(format!("fadd float 1.0, {e}"));
        let q = self.inst(format!("fdiv float {num}, {den}"));
        let large = self.declare_copysign(&q, x);
        let is_small = self.inst(format!("fcmp olt float {a}, 0x3FD0000000000000"));
        self.inst(format!(
            "select i1 {is_small}, float {small}, float {large}"
        ))
    }

    fn declare_copysign(&mut self, mag: &str, sign: &str) -> String {
        self.declare(
            "llvm.copysign.f32",
            "declare float @llvm.copysign.f32(float, float)".into(),
        );
        self.inst(format!(
            "call float @llvm.copysign.f32(float {mag}, float {sign})"
        ))
    }

    fn binary(&mut self, op: BinaryOp, a: &Expr, b: &Expr) -> Result<String, EmitError> {
        let d = a.dtype;
        let x = self.expr(a)?;
        let y = self.expr(b)?;
        if op.is_logical() {
            let inst = if op == BinaryOp::And { "and" } else { "or" };
            return Ok(self.inst(format!("{inst} i1 {x}, {y}")));
        }
        if d.is_float() {
            return self.float_binary(op, &x, &y, d);
        }
        self.int_binary(op, &x, &y, d, b.as_const_int())
    }

    fn float_binary(
        &mut self,
        op: BinaryOp,
        x: &str,
        y: &str,
        d: DType,
    ) -> Result<String, EmitError> {
        if matches!(op, BinaryOp::FloorDiv | BinaryOp::FloorMod) {
            let x64 = self.ext_f64(x, d)?;
            let y64 = self.ext_f64(y, d)?;
            let q = self.inst(format!("fdiv double {x64}, {y64}"));
            let f = self.float_call("floor", "double", &[&q], false);
            let r = if op == BinaryOp::FloorDiv {
                f
            } else {
                let m = self.inst(format!("fmul double {f}, {y64}"));
                self.inst(format!("fsub double {x64}, {m}"))
            };
            return self.round_f64_into(&r, d);
        }
        let (wx, ty) = self.widen(x, d)?;
        let (wy, _) = self.widen(y, d)?;
        if op.is_comparison() {
            let pred = match op {
                BinaryOp::Eq => "oeq",
                BinaryOp::Ne => "une",
                BinaryOp::Lt => "olt",
                BinaryOp::Le => "ole",
                BinaryOp::Gt => "ogt",
                _ => "oge",
            };
            return Ok(self.inst(format!("fcmp {pred} {ty} {wx}, {wy}")));
        }
        // Contraction: `contract` lets LLVM fuse a product into the add
        // that consumes it (both instructions need the flag). `f64` keeps
        // its own roundings, as in the CUDA backend.
        let fuse = if self.options.contract && ty != "double" {
            "contract "
        } else {
            ""
        };
        let r = match op {
            BinaryOp::Add => self.inst(format!("fadd {fuse}{ty} {wx}, {wy}")),
            BinaryOp::Sub => self.inst(format!("fsub {fuse}{ty} {wx}, {wy}")),
            BinaryOp::Mul => self.inst(format!("fmul {fuse}{ty} {wx}, {wy}")),
            BinaryOp::Div => self.inst(format!("fdiv {ty} {wx}, {wy}")),
            BinaryOp::Min => self.float_call("minimum", ty, &[&wx, &wy], false),
            BinaryOp::Max => self.float_call("maximum", ty, &[&wx, &wy], false),
            BinaryOp::Pow if d == DType::F64 => {
                return Err(self.unimplemented(
                    "`**` on float64 (AMDGPU has no f64 instruction for it and the backend links no device math library)",
                ));
            }
            BinaryOp::Pow => {
                // Computed in f32, like the transcendental functions.
                let fx = self.ext_f32(x, d)?;
                let fy = self.ext_f32(y, d)?;
                let r = self.float_call("pow", "float", &[&fx, &fy], true);
                return self.round_f32_into(&r, d);
            }
            _ => return Err(self.internal(format!("`{}` on {d}", op.symbol()))),
        };
        self.narrow(&r, d)
    }

    fn int_binary(
        &mut self,
        op: BinaryOp,
        x: &str,
        y: &str,
        d: DType,
        y_const: Option<i64>,
    ) -> Result<String, EmitError> {
        let ty = self.ty(d)?;
        let signed = d.kind() == DTypeKind::Signed;
        let bits = if d == DType::Bool { 1 } else { d.bits() };
        let cmp = |s: &'static str, u: &'static str| if signed { s } else { u };
        let simple = match op {
            BinaryOp::Eq => Some(format!("icmp eq {ty} {x}, {y}")),
            BinaryOp::Ne => Some(format!("icmp ne {ty} {x}, {y}")),
            BinaryOp::Lt => Some(format!("icmp {} {ty} {x}, {y}", cmp("slt", "ult"))),
            BinaryOp::Le => Some(format!("icmp {} {ty} {x}, {y}", cmp("sle", "ule"))),
            BinaryOp::Gt => Some(format!("icmp {} {ty} {x}, {y}", cmp("sgt", "ugt"))),
            BinaryOp::Ge => Some(format!("icmp {} {ty} {x}, {y}", cmp("sge", "uge"))),
            BinaryOp::Add => Some(format!("add {ty} {x}, {y}")),
            BinaryOp::Sub => Some(format!("sub {ty} {x}, {y}")),
            BinaryOp::Mul => Some(format!("mul {ty} {x}, {y}")),
            BinaryOp::BitAnd => Some(format!("and {ty} {x}, {y}")),
            BinaryOp::BitOr => Some(format!("or {ty} {x}, {y}")),
            BinaryOp::BitXor => Some(format!("xor {ty} {x}, {y}")),
            _ => None,
        };
        if let Some(text) = simple {
            return Ok(self.inst(text));
        }
        match op {
            BinaryOp::Min | BinaryOp::Max => {
                let name = format!(
                    "llvm.{}{}.{ty}",
                    if signed { "s" } else { "u" },
                    if op == BinaryOp::Min { "min" } else { "max" }
                );
                self.declare(&name, format!("declare {ty} @{name}({ty}, {ty})"));
                Ok(self.inst(format!("call {ty} @{name}({ty} {x}, {ty} {y})")))
            }
            BinaryOp::Shl | BinaryOp::Shr => {
                let in_range = self.inst(format!("icmp ult {ty} {y}, {bits}"));
                if op == BinaryOp::Shr && signed {
                    let amount =
                        self.inst(format!("select i1 {in_range}, {ty} {y}, {ty} {}", bits - 1));
                    return Ok(self.inst(format!("ashr {ty} {x}, {amount}")));
                }
                let inst = if op == BinaryOp::Shl { "shl" } else { "lshr" };
                let s = self.inst(format!("{inst} {ty} {x}, {y}"));
                Ok(self.inst(format!("select i1 {in_range}, {ty} {s}, {ty} 0")))
            }
            BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod => {
                self.int_division(op, x, y, ty, signed, y_const)
            }
            BinaryOp::Pow => {
                let helper = self.ipow_helper(ty, signed);
                Ok(self.inst(format!("call {ty} @{helper}({ty} {x}, {ty} {y})")))
            }
            _ => Err(self.internal(format!("`{}` on {d}", op.symbol()))),
        }
    }

    fn int_division(
        &mut self,
        op: BinaryOp,
        x: &str,
        y: &str,
        ty: &str,
        signed: bool,
        y_const: Option<i64>,
    ) -> Result<String, EmitError> {
        if !signed {
            let divisor = match y_const {
                Some(c) if c != 0 => y.to_string(),
                _ => {
                    let zero = self.inst(format!("icmp eq {ty} {y}, 0"));
                    self.inst(format!("select i1 {zero}, {ty} 1, {ty} {y}"))
                }
            };
            let inst = if op == BinaryOp::FloorMod {
                "urem"
            } else {
                "udiv"
            };
            return Ok(self.inst(format!("{inst} {ty} {x}, {divisor}")));
        }
        let (q, r) = match y_const {
            Some(c) if !(-1..=0).contains(&c) => (
                self.inst(format!("sdiv {ty} {x}, {y}")),
                self.inst(format!("srem {ty} {x}, {y}")),
            ),
            Some(-1) => (self.inst(format!("sub {ty} 0, {x}")), "0".to_string()),
            _ => {
                let zero = self.inst(format!("icmp eq {ty} {y}, 0"));
                let minus_one = self.inst(format!("icmp eq {ty} {y}, -1"));
                let bad = self.inst(format!("or i1 {zero}, {minus_one}"));
                let divisor = self.inst(format!("select i1 {bad}, {ty} 1, {ty} {y}"));
                let q0 = self.inst(format!("sdiv {ty} {x}, {divisor}"));
                let neg = self.inst(format!("sub {ty} 0, {x}"));
                let q = self.inst(format!("select i1 {minus_one}, {ty} {neg}, {ty} {q0}"));
                let r = self.inst(format!("srem {ty} {x}, {divisor}"));
                (q, r)
            }
        };
        if op == BinaryOp::Div {
            return Ok(q);
        }
        // The remainder is nonzero and its sign differs from the divisor's.
        let nonzero = self.inst(format!("icmp ne {ty} {r}, 0"));
        let signs = self.inst(format!("xor {ty} {r}, {y}"));
        let differ = self.inst(format!("icmp slt {ty} {signs}, 0"));
        let adjust = self.inst(format!("and i1 {nonzero}, {differ}"));
        if op == BinaryOp::FloorDiv {
            let one = self.inst(format!("zext i1 {adjust} to {ty}"));
            Ok(self.inst(format!("sub {ty} {q}, {one}")))
        } else {
            let add = self.inst(format!("select i1 {adjust}, {ty} {y}, {ty} 0"));
            Ok(self.inst(format!("add {ty} {r}, {add}")))
        }
    }

    /// The name of the integer power helper for `ty`, defined once.
    fn ipow_helper(&mut self, ty: &str, signed: bool) -> String {
        let name = format!("tilec.ipow.{}.{ty}", if signed { "s" } else { "u" });
        if self.m.helpers.contains_key(&name) {
            return name;
        }
        let mut f = String::new();
        let _ = writeln!(
            f,
            "define internal {ty} @{name}({ty} %x, {ty} %y) #HELPER {{"
        );
        let _ = writeln!(f, "entry:");
        if signed {
            let _ = writeln!(f, "  %neg = icmp slt {ty} %y, 0");
            let _ = writeln!(f, "  br i1 %neg, label %negative, label %loop");
            let _ = writeln!(f, "negative:");
            let _ = writeln!(f, "  %is1 = icmp eq {ty} %x, 1");
            let _ = writeln!(f, "  %ism1 = icmp eq {ty} %x, -1");
            let _ = writeln!(f, "  %odd = and {ty} %y, 1");
            let _ = writeln!(f, "  %isodd = icmp ne {ty} %odd, 0");
            let _ = writeln!(f, "  %m1 = select i1 %isodd, {ty} -1, {ty} 1");
            let _ = writeln!(f, "  %r0 = select i1 %ism1, {ty} %m1, {ty} 0");
            let _ = writeln!(f, "  %r1 = select i1 %is1, {ty} 1, {ty} %r0");
            let _ = writeln!(f, "  ret {ty} %r1");
        } else {
            let _ = writeln!(f, "  br label %loop");
        }
        let _ = writeln!(f, "loop:");
        let _ = writeln!(f, "  %base = phi {ty} [ %x, %entry ], [ %base2, %step ]");
        let _ = writeln!(f, "  %exp = phi {ty} [ %y, %entry ], [ %exp2, %step ]");
        let _ = writeln!(f, "  %acc = phi {ty} [ 1, %entry ], [ %acc2, %step ]");
        let _ = writeln!(f, "  %done = icmp eq {ty} %exp, 0");
        let _ = writeln!(f, "  br i1 %done, label %exit, label %step");
        let _ = writeln!(f, "step:");
        let _ = writeln!(f, "  %bit = and {ty} %exp, 1");
        let _ = writeln!(f, "  %set = icmp ne {ty} %bit, 0");
        let _ = writeln!(f, "  %mul = mul {ty} %acc, %base");
        let _ = writeln!(f, "  %acc2 = select i1 %set, {ty} %mul, {ty} %acc");
        let _ = writeln!(f, "  %base2 = mul {ty} %base, %base");
        let _ = writeln!(f, "  %exp2 = lshr {ty} %exp, 1");
        let _ = writeln!(f, "  br label %loop");
        let _ = writeln!(f, "exit:");
        let _ = writeln!(f, "  ret {ty} %acc");
        let _ = writeln!(f, "}}");
        self.m.helpers.insert(name.clone(), f);
        name
    }

    // ---- casts ----

    fn cast(&mut self, x: &str, from: DType, to: DType) -> Result<String, EmitError> {
        if from == to {
            return Ok(x.to_string());
        }
        let from_ty = self.ty(from)?;
        let to_ty = self.ty(to)?;
        let from_int = from.is_int() || from == DType::Bool;
        let to_int = to.is_int() || to == DType::Bool;
        match (from_int, to_int) {
            (true, true) => {
                if to == DType::Bool {
                    return Ok(self.inst(format!("icmp ne {from_ty} {x}, 0")));
                }
                self.int_resize(x, from, to.bits())
            }
            (true, false) => {
                let signed = from.kind() == DTypeKind::Signed;
                let conv = if signed { "sitofp" } else { "uitofp" };
                let small = from == DType::Bool || from.bits() <= 32;
                if small && matches!(to, DType::F32 | DType::F64) {
                    // Exact in f64, so one rounding either way.
                    return Ok(self.inst(format!("{conv} {from_ty} {x} to {to_ty}")));
                }
                let d = self.inst(format!("{conv} {from_ty} {x} to double"));
                self.round_f64_into(&d, to)
            }
            (false, true) => {
                if to == DType::Bool {
                    let (w, ty) = self.widen_any(x, from)?;
                    return Ok(self.inst(format!("fcmp one {ty} {w}, 0.0")));
                }
                let d = self.ext_f64(x, from)?;
                self.declare(
                    "llvm.fptosi.sat.i64.f64",
                    "declare i64 @llvm.fptosi.sat.i64.f64(double)".into(),
                );
                self.declare(
                    "llvm.fptoui.sat.i64.f64",
                    "declare i64 @llvm.fptoui.sat.i64.f64(double)".into(),
                );
                let s = self.inst(format!("call i64 @llvm.fptosi.sat.i64.f64(double {d})"));
                let u = self.inst(format!("call i64 @llvm.fptoui.sat.i64.f64(double {d})"));
                let big = self.inst(format!("fcmp oge double {d}, {TWO_63}"));
                let huge = self.inst(format!("fcmp oge double {d}, {TWO_64}"));
                let top = self.inst(format!(
                    "select i1 {huge}, i64 9223372036854775807, i64 {u}"
                ));
                let v = self.inst(format!("select i1 {big}, i64 {top}, i64 {s}"));
                self.int_resize(&v, DType::I64, to.bits())
            }
            (false, false) => {
                if from.bits() < to.bits()
                    || (from == DType::F16 && to == DType::BF16)
                    || (from == DType::BF16 && to == DType::F16)
                {
                    // Widening is exact; f16 ↔ bf16 goes through f32 exactly
                    // and rounds once.
                    if to == DType::F64 {
                        return self.ext_f64(x, from);
                    }
                    let f = self.ext_f32(x, from)?;
                    return self.round_f32_into(&f, to);
                }
                match from {
                    DType::F64 => self.round_f64_into(x, to),
                    DType::F32 => self.round_f32_into(x, to),
                    _ => Err(self.internal(format!("a cast from {from} to {to}"))),
                }
            }
        }
    }

    /// A float value in a type LLVM compares natively (bf16 → f32).
    fn widen_any(&mut self, x: &str, d: DType) -> Result<(String, &'static str), EmitError> {
        Ok(match d {
            DType::BF16 => (self.ext_f32(x, d)?, "float"),
            DType::F16 => (x.to_string(), "half"),
            DType::F32 => (x.to_string(), "float"),
            _ => (x.to_string(), "double"),
        })
    }
}
