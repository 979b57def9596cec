//! Floating-point operators.
//!
//! The reference computes every float operation in `f64` and rounds the
//! result once into the operands' type. The emitter reproduces that:
//!
//! - `f32` and `f64` `+ − × ÷` and `sqrt` are the IEEE operations with an
//!   explicit `.rn` (which also forbids `ptxas` from fusing a multiply and
//!   an add): rounding the exact result once is what `f64` evaluation
//!   followed by rounding gives, since `f64` carries more than `2·24 + 2`
//!   bits. With `contract` (`tilec.fp-contract=fast`, nvcc's default) or
//!   `fast_math`, `f32` (and narrower) `+ − ×` carry no rounding
//!   modifier, which lets `ptxas` fuse multiplies into adds (`fma.rn`,
//!   one rounding where the reference has two); with `fast_math` `÷` is
//!   also `div.full.f32` (2 ulps), as CUDA's `--use_fast_math` does.
//! - `f16`, `bf16` and the float8 types compute in `f32` and round once
//!   into their type; `f32` has at least `2p + 2` bits for each of them,
//!   so the double rounding is harmless for `+ − × ÷ sqrt`.
//! - `//` and `%` follow the reference's formula in `f64`
//!   (`floor(a / b)`, `a − floor(a / b)·b`, each step rounded) and round the
//!   result into the type.
//! - `min`/`max` propagate NaN and order `−0 < +0`, as the reference's do:
//!   `min.NaN`/`max.NaN` in `f32` (and so for `f16`/`bf16`); in `f64` the
//!   predicate picks the smaller (larger) operand, equal operands are
//!   combined bitwise (OR gives `−0` for `min(+0, −0)`, AND gives `+0` for
//!   `max`), and any NaN operand gives NaN.
//! - Comparisons are the ordered IEEE ones (`!=` is unordered).
//! - Transcendentals call the `f64` library ([`super::math`]) and round
//!   once into the type, except for `f32` and narrower types: `exp2` is
//!   `ex2.approx.f32` (no flush to zero; within the conformance bound of
//!   3 `f32` ulps, measured on the device: 2.38 at most) and `exp` an
//!   `f32` routine within 2 ulps, expanded inline. With `fast_math`, types up to
//!   `f32` use the `.approx` instructions with subnormals flushed (`ex2`,
//!   `lg2`, `sin`, `cos`, `tanh`, `rsqrt`, `sqrt`, `rcp`).

use tilec_core::ir::{BinaryOp, DType, UnaryOp};

use super::PtxError;
use super::int::cmp_name;
use super::kernel::Emitter;
use super::math::Routine;
use super::value::{Class, Val, class_of};

type Result<T> = std::result::Result<T, PtxError>;

/// The type a float type computes in: itself for `f32`/`f64`, `f32` for
/// the narrower ones.
pub(crate) fn compute_type(d: DType) -> DType {
    match d {
        DType::F64 => DType::F64,
        _ => DType::F32,
    }
}

fn suffix(d: DType) -> &'static str {
    if d == DType::F64 { "f64" } else { "f32" }
}

impl Emitter<'_> {
    /// `v` of float type `d` widened to its compute type.
    fn widen(&mut self, v: Val, d: DType) -> Result<Val> {
        self.convert(v, d, compute_type(d))
    }

    /// A compute-type value rounded into `d`.
    fn narrow(&mut self, v: Val, d: DType) -> Result<Val> {
        self.convert(v, compute_type(d), d)
    }

    pub fn float_binary(&mut self, op: BinaryOp, d: DType, a: Val, b: Val) -> Result<Val> {
        let c = compute_type(d);
        let f = suffix(c);
        if let Some(cmp) = cmp_name(op) {
            let x = self.widen(a, d)?;
            let y = self.widen(b, d)?;
            let cmp = if cmp == "ne" { "neu" } else { cmp };
            return Ok(self.setp(cmp, f, &x, &y));
        }
        match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
                let name = match op {
                    BinaryOp::Add => "add",
                    BinaryOp::Sub => "sub",
                    BinaryOp::Mul => "mul",
                    _ => "div",
                };
                let x = self.widen(a, d)?;
                let y = self.widen(b, d)?;
                // Contraction in f32: no rounding modifier on `+ − ×`, so
                // that `ptxas` may fuse a multiply into an add; fast math
                // also takes the full-range approximate division.
                let mode = match op {
                    _ if c != DType::F32 => ".rn",
                    BinaryOp::Div if self.opts.fast_math => ".full",
                    BinaryOp::Div => ".rn",
                    _ if self.opts.contract || self.opts.fast_math => "",
                    _ => ".rn",
                };
                let r = self.op2(class_of(c), &format!("{name}{mode}.{f}"), &x, &y);
                self.narrow(r, d)
            }
            BinaryOp::Min | BinaryOp::Max => {
                let x = self.widen(a, d)?;
                let y = self.widen(b, d)?;
                let r = self.min_max(op == BinaryOp::Min, c, &x, &y);
                self.narrow(r, d)
            }
            BinaryOp::FloorDiv | BinaryOp::FloorMod => {
                let x = self.convert(a, d, DType::F64)?;
                let y = self.convert(b, d, DType::F64)?;
                let q = self.op2(Class::F64, "div.rn.f64", &x, &y);
                let fq = self.op1(Class::F64, "cvt.rmi.f64.f64", &q);
                let r = if op == BinaryOp::FloorDiv {
                    fq
                } else {
                    let p = self.op2(Class::F64, "mul.rn.f64", &fq, &y);
                    self.op2(Class::F64, "sub.rn.f64", &x, &p)
                };
                self.convert(r, DType::F64, d)
            }
            BinaryOp::Pow => {
                if d == DType::F64 {
                    return Err(self.unsupported(
                        "`**` on f64: the PTX emitter has no pow accurate to f64 precision",
                    ));
                }
                let x = self.convert(a, d, DType::F64)?;
                let y = self.convert(b, d, DType::F64)?;
                let r = self.call(Routine::Pow, &[x, y]);
                self.convert(r, DType::F64, d)
            }
            _ => Err(self.malformed(format!("`{}` on {d}", op.symbol()))),
        }
    }

    /// NaN-propagating `min`/`max` with `−0 < +0`, in `f32` or `f64`.
    ///
    /// `f32` has the instruction: `min.NaN`/`max.NaN` (sm_80, PTX ISA 7.0)
    /// give NaN for any NaN operand and order `−0 < +0`, which
    /// `tests/float_semantics.rs` checks on the device for every pair of
    /// special values. `f64` has no `.NaN` form and is built from a
    /// comparison, a select and the bitwise combination of equal operands.
    fn min_max(&mut self, min: bool, c: DType, x: &Val, y: &Val) -> Val {
        let f = suffix(c);
        if c == DType::F32 {
            let name = if min { "min.NaN.f32" } else { "max.NaN.f32" };
            return self.op2(Class::F32, name, x, y);
        }
        let class = class_of(c);
        let (x, y) = (self.in_reg(x), self.in_reg(y));
        let pick = self.setp(if min { "lt" } else { "gt" }, f, &x, &y);
        let r = self.selp(&x, &y, &pick);
        let equal = self.setp("eq", f, &x, &y);
        let bits = if c == DType::F64 { "b64" } else { "b32" };
        let both = self.op2(
            class,
            &format!("{}.{bits}", if min { "or" } else { "and" }),
            &x,
            &y,
        );
        let r = self.selp(&both, &r, &equal);
        let nan = self.setp("nan", f, &x, &y);
        self.selp(&Val::float(c, f64::NAN), &r, &nan)
    }

    pub fn float_unary(&mut self, op: UnaryOp, d: DType, v: Val) -> Result<Val> {
        let c = compute_type(d);
        let f = suffix(c);
        match op {
            UnaryOp::Neg | UnaryOp::Abs => Ok(self.sign_op(op == UnaryOp::Neg, d, v)),
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => {
                let mode = match op {
                    UnaryOp::Floor => "rmi",
                    UnaryOp::Ceil => "rpi",
                    _ => "rni",
                };
                let x = self.widen(v, d)?;
                let r = self.op1(class_of(c), &format!("cvt.{mode}.{f}.{f}"), &x);
                self.narrow(r, d)
            }
            UnaryOp::IsNan | UnaryOp::IsInf => {
                let x = self.widen(v, d)?;
                let test = if op == UnaryOp::IsNan {
                    "notanumber"
                } else {
                    "infinite"
                };
                Ok(self.op1(Class::Pred, &format!("testp.{test}.{f}"), &x))
            }
            UnaryOp::Sqrt => {
                let x = self.widen(v, d)?;
                let mode = if self.opts.fast_math && c == DType::F32 {
                    "approx"
                } else {
                    "rn"
                };
                let r = self.op1(class_of(c), &format!("sqrt.{mode}.{f}"), &x);
                self.narrow(r, d)
            }
            UnaryOp::Rsqrt => {
                if self.opts.fast_math && c == DType::F32 {
                    let x = self.widen(v, d)?;
                    let r = self.op1(Class::F32, "rsqrt.approx.f32", &x);
                    return self.narrow(r, d);
                }
                // 1 / sqrt(x) in f64, as the reference computes it.
                let x = self.convert(v, d, DType::F64)?;
                let s = self.op1(Class::F64, "sqrt.rn.f64", &x);
                let r = self.op1(Class::F64, "rcp.rn.f64", &s);
                self.convert(r, DType::F64, d)
            }
            UnaryOp::Exp
            | UnaryOp::Exp2
            | UnaryOp::Log
            | UnaryOp::Log2
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Sigmoid => self.transcendental(op, d, v),
            UnaryOp::Not | UnaryOp::BitNot => {
                Err(self.malformed(format!("`{}` on {d}", op.name())))
            }
        }
    }

    /// `−v` or `|v|` by the sign bit (exact for every value, NaN included).
    fn sign_op(&mut self, neg: bool, d: DType, v: Val) -> Val {
        match class_of(d) {
            Class::F32 | Class::F64 => {
                let op = if neg { "neg" } else { "abs" };
                self.op1(class_of(d), &format!("{op}.{}", suffix(d)), &v)
            }
            _ => {
                let sign: u64 = if super::value::is_fp8(d) {
                    0x80
                } else {
                    0x8000
                };
                if neg {
                    self.op2(Class::B16, "xor.b16", &v, &Val::bits(Class::B16, sign))
                } else {
                    self.op2(Class::B16, "and.b16", &v, &Val::bits(Class::B16, sign - 1))
                }
            }
        }
    }

    fn transcendental(&mut self, op: UnaryOp, d: DType, v: Val) -> Result<Val> {
        if self.opts.fast_math && d != DType::F64 {
            let x = self.widen(v, d)?;
            let r = self.fast_transcendental(op, &x);
            return self.narrow(r, d);
        }
        if compute_type(d) == DType::F32 && op == UnaryOp::Exp2 {
            // The hardware's base-2 exponential without flush to zero,
            // which is what CUDA's own `exp2f` compiles to: within the
            // conformance bound of 3 ulps over the whole range, subnormal
            // results included (measured on the device by
            // `tests/float_semantics.rs`: at most 2.38 ulps).
            let x = self.widen(v, d)?;
            let r = self.op1(Class::F32, "ex2.approx.f32", &x);
            return self.narrow(r, d);
        }
        if compute_type(d) == DType::F32 && op == UnaryOp::Exp {
            let x = self.widen(v, d)?;
            let r = self.call(Routine::ExpF32, &[x]);
            return self.narrow(r, d);
        }
        let routine = match op {
            UnaryOp::Exp => Routine::Exp,
            UnaryOp::Exp2 => Routine::Exp2,
            UnaryOp::Log => Routine::Log,
            UnaryOp::Log2 => Routine::Log2,
            UnaryOp::Sin => Routine::Sin,
            UnaryOp::Cos => Routine::Cos,
            UnaryOp::Tanh => Routine::Tanh,
            _ => Routine::Sigmoid,
        };
        let x = self.convert(v, d, DType::F64)?;
        let r = self.call(routine, &[x]);
        self.convert(r, DType::F64, d)
    }

    /// The `.approx` forms (f32).
    fn fast_transcendental(&mut self, op: UnaryOp, x: &Val) -> Val {
        let f = Class::F32;
        let log2e = Val::float(DType::F32, std::f64::consts::LOG2_E);
        let ln2 = Val::float(DType::F32, std::f64::consts::LN_2);
        match op {
            UnaryOp::Exp => {
                let t = self.op2(f, "mul.f32", x, &log2e);
                self.op1(f, "ex2.approx.ftz.f32", &t)
            }
            UnaryOp::Exp2 => self.op1(f, "ex2.approx.ftz.f32", x),
            UnaryOp::Log => {
                let t = self.op1(f, "lg2.approx.f32", x);
                self.op2(f, "mul.f32", &t, &ln2)
            }
            UnaryOp::Log2 => self.op1(f, "lg2.approx.f32", x),
            UnaryOp::Sin => self.op1(f, "sin.approx.f32", x),
            UnaryOp::Cos => self.op1(f, "cos.approx.f32", x),
            UnaryOp::Tanh => self.op1(f, "tanh.approx.f32", x),
            _ => {
                // sigmoid: 1 / (1 + 2^(−x·log2 e))
                let mlog2e = Val::float(DType::F32, -std::f64::consts::LOG2_E);
                let t = self.op2(f, "mul.f32", x, &mlog2e);
                let e = self.op1(f, "ex2.approx.ftz.f32", &t);
                let d = self.op2(f, "add.f32", &e, &Val::float(DType::F32, 1.0));
                self.op1(f, "rcp.approx.f32", &d)
            }
        }
    }

    /// Calls a library routine on `f64`, `f32` or bit-pattern arguments:
    /// the routine is emitted with the module, or expanded here when it
    /// is an inline one.
    pub fn call(&mut self, r: Routine, args: &[Val]) -> Val {
        self.routines.insert(r);
        let program = r.program();
        let result_class = match program.result_types().first() {
            Some(super::math::prog::Ty::W) => Class::B32,
            Some(super::math::prog::Ty::I) => Class::B64,
            Some(super::math::prog::Ty::P) => Class::Pred,
            Some(super::math::prog::Ty::S) => Class::F32,
            _ => Class::F64,
        };
        let args: Vec<Val> = args.iter().map(|a| self.in_reg(a)).collect();
        if r.inline() {
            let params: Vec<String> = args.iter().map(|a| a.text.clone()).collect();
            self.body.comment(format!("{} (inline)", r.symbol()));
            let results = self.expand(&program, &params);
            let d = results.into_iter().next().unwrap_or_default();
            return Val::reg(result_class, d);
        }
        let d = self.tmp(result_class);
        let list: Vec<String> = args.iter().map(|a| a.text.clone()).collect();
        self.emit(format!("call ({d}), {}, ({})", r.symbol(), list.join(", ")));
        Val::reg(result_class, d)
    }
}
