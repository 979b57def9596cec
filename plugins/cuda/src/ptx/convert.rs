//! `cast<T>(x)`: conversions between every pair of thread-IR types, with
//! the reference's semantics.
//!
//! - Integer → integer wraps: re-normalise narrow results, sign- or
//!   zero-extend (by the source's signedness) into 64 bits, truncate out
//!   of them.
//! - Integer → float goes through `f64` as the reference does
//!   (`cvt.rn.f64.s64`, then one rounding into the target), which matters
//!   for 64-bit integers that `f64` cannot hold exactly.
//! - Float → float rounds once to nearest even. `f16`/`bf16` widen exactly
//!   (`bf16` by moving its bits into the top half of an `f32`). `f64 → bf16`
//!   has no instruction on sm_80, so it rounds to `f32` *to odd*
//!   (`cvt.rz` plus a sticky bit when inexact), after which
//!   `cvt.rn.bf16.f32` rounds correctly: `f32` has more than `8 + 2` bits.
//! - Float → integer truncates toward zero, saturates at the `i64` range,
//!   maps `[2^63, 2^64)` to the `u64` bit pattern (values of `u64` targets),
//!   NaN to 0, and then wraps into the target: computed in 64 bits
//!   (`cvt.rzi.s64`/`u64` and selects; PTX gives NaN → `MIN` there, hence
//!   the explicit NaN test) and truncated.
//! - `bool` ← x is `x != 0` (false for NaN); `bool` → x is 0 or 1.
//! - float8 values decode exactly into `f64` and encode from `f64` through
//!   the library routines ([`super::math::fp8`]).
//!
//! Constants convert at emission with the reference's own rounding.

use tilec_core::ir::{DType, DTypeKind};

use super::PtxError;
use super::kernel::Emitter;
use super::math::Routine;
use super::value::{Class, Imm, Val, class_of, is_fp8};

type Result<T> = std::result::Result<T, PtxError>;

const TWO_63_F32: u64 = 0x5F00_0000;
const TWO_64_F32: u64 = 0x5F80_0000;
const TWO_63_F64: u64 = 0x43E0_0000_0000_0000;
const TWO_64_F64: u64 = 0x43F0_0000_0000_0000;

impl Emitter<'_> {
    pub fn convert(&mut self, v: Val, from: DType, to: DType) -> Result<Val> {
        if from == to {
            return Ok(v);
        }
        if let Some(r) = convert_imm(&v, from, to) {
            return Ok(r);
        }
        Ok(match (from, to) {
            (_, DType::Bool) => self.nonzero(v, from),
            (DType::Bool, _) => {
                let (one, zero) = if to.is_int() {
                    (Val::int(to, 1), Val::int(to, 0))
                } else {
                    (Val::float(to, 1.0), Val::float(to, 0.0))
                };
                self.selp(&one, &zero, &v)
            }
            (f, t) if f.is_int() && t.is_int() => self.int_to_int(v, f, t),
            (f, t) if f.is_int() => {
                let x = self.int_to_f64(v, f);
                self.narrow_f64(x, t)
            }
            (f, t) if t.is_int() => self.float_to_int(v, f, t),
            (f, t) => self.float_to_float(v, f, t),
        })
    }

    fn nonzero(&mut self, v: Val, from: DType) -> Val {
        if from.is_int() {
            let ty = super::value::int_ty(from);
            return self.setp("ne", ty, &v, &Val::int(from, 0));
        }
        let (x, f) = match from {
            DType::F64 => (v, "f64"),
            DType::F32 => (v, "f32"),
            _ => (self.widen_f32(v, from), "f32"),
        };
        let zero = Val::float(if f == "f64" { DType::F64 } else { DType::F32 }, 0.0);
        self.setp("ne", f, &x, &zero)
    }

    fn int_to_int(&mut self, v: Val, from: DType, to: DType) -> Val {
        match (class_of(from), class_of(to)) {
            (Class::B64, Class::B64) => v,
            (Class::B64, _) => {
                let t = self.op1(Class::B32, "cvt.u32.u64", &v);
                self.normalize(t, to)
            }
            (_, Class::B64) => {
                let op = if from.kind() == DTypeKind::Signed {
                    "cvt.s64.s32"
                } else {
                    "cvt.u64.u32"
                };
                self.op1(Class::B64, op, &v)
            }
            _ => self.normalize(v, to),
        }
    }

    /// The bits of `v` (of type `from`) as a value of `to`, of the same
    /// width: `mov.b32`/`mov.b64` between float and integer registers; a
    /// 16-bit or 8-bit pattern moves between its `.b16` register and the
    /// normalised `.b32` one with `cvt` (sign- or zero-extending as the
    /// integer type asks).
    pub fn bitcast(&mut self, v: Val, from: DType, to: DType) -> Result<Val> {
        if from.bits() != to.bits() || from.is_bool() || to.is_bool() {
            return Err(self.malformed(format!("a bit cast from {from} to {to}")));
        }
        if let Some(imm) = v.imm {
            let bits = match imm {
                Imm::Int(i) => from.bits_of(i, 0.0),
                Imm::Float(x) => from.bits_of(0, x),
                Imm::Bool(_) => return Err(self.malformed("a bit cast of a bool")),
            };
            return Ok(match to.from_bits(bits) {
                Ok(i) => Val::int(to, i),
                // The exact pattern, NaN payloads included.
                Err(_) => Val::bits(class_of(to), bits),
            });
        }
        let (cf, ct) = (class_of(from), class_of(to));
        Ok(match (cf, ct) {
            (Class::B32, Class::B32) => {
                // Narrow integers of the other signedness re-extend.
                if from.kind() == to.kind() {
                    v
                } else {
                    self.normalize(v, to)
                }
            }
            (a, b) if a == b => Val::reg(b, v.text),
            (Class::F32, Class::B32) | (Class::B32, Class::F32) => self.op1(ct, "mov.b32", &v),
            (Class::F64, Class::B64) | (Class::B64, Class::F64) => self.op1(ct, "mov.b64", &v),
            (Class::B16, Class::B32) => {
                // The pattern in bits 15:0 (float8: 7:0), extended.
                let ty = match (from.bits(), to.kind() == DTypeKind::Signed) {
                    (16, true) => "s32.s16",
                    (16, false) => "u32.u16",
                    (_, true) => "s32.s8",
                    (_, false) => "u32.u8",
                };
                self.op1(Class::B32, &format!("cvt.{ty}"), &v)
            }
            (Class::B32, Class::B16) => {
                let v = if from.bits() == 8 {
                    self.op2(Class::B32, "and.b32", &v, &Val::int(DType::U32, 0xFF))
                } else {
                    v
                };
                self.op1(Class::B16, "cvt.u16.u32", &v)
            }
            _ => return Err(self.malformed(format!("a bit cast from {from} to {to}"))),
        })
    }

    /// An integer, rounded to `f64` as the reference converts it.
    fn int_to_f64(&mut self, v: Val, from: DType) -> Val {
        let ty = super::value::int_ty(from);
        self.op1(Class::F64, &format!("cvt.rn.f64.{ty}"), &v)
    }

    /// `f16`, `bf16` or float8 as an exact `f32`.
    pub fn widen_f32(&mut self, v: Val, from: DType) -> Val {
        match from {
            DType::F16 => self.op1(Class::F32, "cvt.f32.f16", &v),
            DType::BF16 => {
                let t = self.op1(Class::B32, "cvt.u32.u16", &v);
                let t = self.op2(Class::B32, "shl.b32", &t, &Val::int(DType::U32, 16));
                self.op1(Class::F32, "mov.b32", &t)
            }
            d if is_fp8(d) => {
                let x = self.fp8_to_f64(v, d);
                self.op1(Class::F32, "cvt.rn.f32.f64", &x)
            }
            _ => v,
        }
    }

    /// Any float as an exact `f64`.
    fn widen_f64(&mut self, v: Val, from: DType) -> Val {
        match from {
            DType::F64 => v,
            DType::F32 => self.op1(Class::F64, "cvt.f64.f32", &v),
            DType::F16 => self.op1(Class::F64, "cvt.f64.f16", &v),
            d if is_fp8(d) => self.fp8_to_f64(v, d),
            _ => {
                let x = self.widen_f32(v, from);
                self.op1(Class::F64, "cvt.f64.f32", &x)
            }
        }
    }

    fn fp8_to_f64(&mut self, v: Val, from: DType) -> Val {
        let bits = self.op1(Class::B32, "cvt.u32.u16", &v);
        let r = if from == DType::F8E4M3 {
            Routine::E4m3ToF64
        } else {
            Routine::E5m2ToF64
        };
        self.call(r, &[bits])
    }

    /// An `f64` rounded once into float type `to`.
    pub fn narrow_f64(&mut self, x: Val, to: DType) -> Val {
        match to {
            DType::F64 => x,
            DType::F32 => self.op1(Class::F32, "cvt.rn.f32.f64", &x),
            DType::F16 => self.op1(Class::B16, "cvt.rn.f16.f64", &x),
            DType::BF16 => {
                let odd = self.round_to_odd_f32(&x);
                self.op1(Class::B16, "cvt.rn.bf16.f32", &odd)
            }
            _ => {
                let r = if to == DType::F8E4M3 {
                    Routine::F64ToE4m3
                } else {
                    Routine::F64ToE5m2
                };
                let bits = self.call(r, &[x]);
                self.op1(Class::B16, "cvt.u16.u32", &bits)
            }
        }
    }

    /// An `f32` rounded once into float type `to`.
    fn narrow_f32(&mut self, x: Val, to: DType) -> Val {
        match to {
            DType::F32 => x,
            DType::F64 => self.op1(Class::F64, "cvt.f64.f32", &x),
            DType::F16 => self.op1(Class::B16, "cvt.rn.f16.f32", &x),
            DType::BF16 => self.op1(Class::B16, "cvt.rn.bf16.f32", &x),
            _ => {
                let w = self.op1(Class::F64, "cvt.f64.f32", &x);
                self.narrow_f64(w, to)
            }
        }
    }

    /// `x` (f64) rounded to f32 toward zero, with the last bit set when the
    /// rounding was inexact ("round to odd"): a later rounding to a format
    /// at least two bits narrower is then the correct rounding of `x`.
    fn round_to_odd_f32(&mut self, x: &Val) -> Val {
        let r = self.op1(Class::F32, "cvt.rz.f32.f64", x);
        let back = self.op1(Class::F64, "cvt.f64.f32", &r);
        let inexact = self.setp("neu", "f64", &back, x);
        let bits = self.op1(Class::B32, "mov.b32", &r);
        let sticky = self.selp(
            &Val::bits(Class::B32, 1),
            &Val::bits(Class::B32, 0),
            &inexact,
        );
        let bits = self.op2(Class::B32, "or.b32", &bits, &sticky);
        self.op1(Class::F32, "mov.b32", &bits)
    }

    fn float_to_float(&mut self, v: Val, from: DType, to: DType) -> Val {
        if from == DType::F64 {
            return self.narrow_f64(v, to);
        }
        if to == DType::F64 {
            return self.widen_f64(v, from);
        }
        let x = self.widen_f32(v, from);
        self.narrow_f32(x, to)
    }

    fn float_to_int(&mut self, v: Val, from: DType, to: DType) -> Val {
        let (x, f) = match from {
            DType::F64 => (v, "f64"),
            DType::F32 => (v, "f32"),
            _ => (self.widen_f32(v, from), "f32"),
        };
        let s = self.op1(Class::B64, &format!("cvt.rzi.s64.{f}"), &x);
        let u = self.op1(Class::B64, &format!("cvt.rzi.u64.{f}"), &x);
        let (two63, two64) = if f == "f64" {
            (
                Val::bits(Class::F64, TWO_63_F64),
                Val::bits(Class::F64, TWO_64_F64),
            )
        } else {
            (
                Val::bits(Class::F32, TWO_63_F32),
                Val::bits(Class::F32, TWO_64_F32),
            )
        };
        let ge = self.setp("ge", f, &x, &two63);
        let lt = self.setp("lt", f, &x, &two64);
        let unsigned_range = self.op2(Class::Pred, "and.pred", &ge, &lt);
        let r = self.selp(&u, &s, &unsigned_range);
        let nan = self.setp("nan", f, &x, &x);
        let r = self.selp(&Val::int(DType::I64, 0), &r, &nan);
        if class_of(to) == Class::B64 {
            return r;
        }
        let t = self.op1(Class::B32, "cvt.u32.u64", &r);
        self.normalize(t, to)
    }
}

/// A conversion of an immediate, with the reference's rounding.
fn convert_imm(v: &Val, from: DType, to: DType) -> Option<Val> {
    Some(match v.imm? {
        Imm::Bool(b) => {
            if to == DType::Bool {
                Val::bool(b)
            } else if to.is_int() {
                Val::int(to, i64::from(b))
            } else {
                Val::float(to, if b { 1.0 } else { 0.0 })
            }
        }
        Imm::Int(i) => {
            if to == DType::Bool {
                Val::bool(i != 0)
            } else if to.is_int() {
                Val::int(to, i)
            } else {
                let x = if from == DType::U64 {
                    i as u64 as f64
                } else {
                    i as f64
                };
                Val::float(to, x)
            }
        }
        Imm::Float(x) => {
            if to == DType::Bool {
                Val::bool(x != 0.0 && !x.is_nan())
            } else if to.is_int() {
                Val::int(to, to.round_f64(x) as i64)
            } else {
                Val::float(to, x)
            }
        }
    })
}
