//! Integer operators.
//!
//! Values of 8, 16 and 32 bits compute in 32-bit registers (kept sign- or
//! zero-extended, [`super::value`]); 64-bit values in 64-bit registers.
//! Results that can leave a narrow type's range are normalised again with
//! `cvt.s32.s8`-style conversions, which is exactly the reference's
//! wrapping. The operators whose PTX form differs from the thread-IR
//! meaning are spelled out:
//!
//! - `/` truncates (`div.s32`); the one overflowing case, `MIN / −1`, whose
//!   PTX result is unspecified, is computed as `−a` (wrapping to `MIN`).
//! - `//` and `%` round toward negative infinity: with `q = a / b` and
//!   `r = a − q·b`, the result is `q − 1` (resp. `r + b`) when `r ≠ 0` and
//!   `r` and `b` have opposite signs (`(r ^ b) < 0`). A positive
//!   power-of-two divisor becomes `shr.s` (resp. `and`), which is that
//!   rounding exactly. Unsigned `//` is `/`, unsigned `%` is `rem.u`.
//! - Shifts by an amount outside `0 .. bits` give 0 (or the sign for a
//!   signed right shift): PTX clamps 32-bit amounts at the register width
//!   already; 64-bit amounts are clamped to 64 first (the instruction only
//!   reads 32 bits of its amount).
//! - `abs` wraps (`abs(MIN) = MIN`): `max(a, −a)`.
//! - `**` by square-and-multiply; a negative exponent gives 1 for a base
//!   of 1, ±1 for −1 and 0 otherwise.

use tilec_core::ir::{BinaryOp, DType, DTypeKind, UnaryOp};

use super::PtxError;
use super::kernel::Emitter;
use super::value::{Class, Val, class_of, int_ty};

type Result<T> = std::result::Result<T, PtxError>;

/// The comparison name of a binary operator, if it is one.
pub(crate) fn cmp_name(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
        _ => return None,
    })
}

/// `log2(v)` when `v` is a positive power of two.
fn power_of_two(v: i64) -> Option<u32> {
    (v > 0 && v & (v - 1) == 0).then(|| v.trailing_zeros())
}

impl Emitter<'_> {
    /// Re-normalises a narrow integer after an operation that may have left
    /// its range; wider types are returned as they are.
    pub fn normalize(&mut self, v: Val, dtype: DType) -> Val {
        let cvt = match dtype {
            DType::I8 => "cvt.s32.s8",
            DType::I16 => "cvt.s32.s16",
            DType::U8 => "cvt.u32.u8",
            DType::U16 => "cvt.u32.u16",
            _ => return v,
        };
        self.op1(Class::B32, cvt, &v)
    }

    pub fn int_unary(&mut self, op: UnaryOp, d: DType, v: Val) -> Result<Val> {
        let class = class_of(d);
        let ty = int_ty(d);
        let bits = class.bits();
        Ok(match op {
            UnaryOp::Neg => {
                let n = self.op1(class, &format!("neg.{}", signed_ty(class)), &v);
                self.normalize(n, d)
            }
            UnaryOp::BitNot => {
                let n = self.op1(class, &format!("not.{bits}"), &v);
                self.normalize(n, d)
            }
            UnaryOp::Abs if d.kind() == DTypeKind::Signed => {
                let n = self.op1(class, &format!("neg.{ty}"), &v);
                let m = self.op2(class, &format!("max.{ty}"), &v, &n);
                self.normalize(m, d)
            }
            UnaryOp::Abs => v,
            _ => return Err(self.malformed(format!("`{}` on {d}", op.name()))),
        })
    }

    pub fn int_binary(&mut self, op: BinaryOp, d: DType, a: Val, b: Val) -> Result<Val> {
        let class = class_of(d);
        let ty = int_ty(d);
        let bits = class.bits();
        if let Some(cmp) = cmp_name(op) {
            return Ok(self.setp(cmp, ty, &a, &b));
        }
        if let Some(v) = identity(op, d, &a, &b) {
            return Ok(v);
        }
        Ok(match op {
            BinaryOp::Add => {
                let r = self.op2(class, &format!("add.{}", signed_ty(class)), &a, &b);
                self.normalize(r, d)
            }
            BinaryOp::Sub => {
                let r = self.op2(class, &format!("sub.{}", signed_ty(class)), &a, &b);
                self.normalize(r, d)
            }
            BinaryOp::Mul => {
                let r = self.op2(class, &format!("mul.lo.{}", signed_ty(class)), &a, &b);
                self.normalize(r, d)
            }
            BinaryOp::BitAnd => self.op2(class, &format!("and.{bits}"), &a, &b),
            BinaryOp::BitOr => self.op2(class, &format!("or.{bits}"), &a, &b),
            BinaryOp::BitXor => self.op2(class, &format!("xor.{bits}"), &a, &b),
            BinaryOp::Min => self.op2(class, &format!("min.{ty}"), &a, &b),
            BinaryOp::Max => self.op2(class, &format!("max.{ty}"), &a, &b),
            BinaryOp::Div => {
                let q = self.trunc_div(d, &a, &b);
                self.normalize(q, d)
            }
            BinaryOp::FloorDiv => self.floor_div(d, &a, &b),
            BinaryOp::FloorMod => self.floor_mod(d, &a, &b),
            BinaryOp::Shl | BinaryOp::Shr => self.shift(op, d, &a, &b),
            BinaryOp::Pow => self.int_pow(d, &a, &b),
            _ => return Err(self.malformed(format!("`{}` on {d}", op.symbol()))),
        })
    }

    /// Truncating division; for signed 32/64-bit types `MIN / −1` is
    /// computed as `−a`.
    fn trunc_div(&mut self, d: DType, a: &Val, b: &Val) -> Val {
        let class = class_of(d);
        let ty = int_ty(d);
        let signed = d.kind() == DTypeKind::Signed;
        if !signed {
            if let Some(k) = b.as_int().and_then(power_of_two) {
                return self.op2(
                    class,
                    &format!("shr.{ty}"),
                    a,
                    &Val::int(DType::U32, i64::from(k)),
                );
            }
            return self.op2(class, &format!("div.{ty}"), a, b);
        }
        let narrow = matches!(d, DType::I8 | DType::I16);
        match b.as_int() {
            Some(-1) => self.op1(class, &format!("neg.{ty}"), a),
            Some(_) => self.op2(class, &format!("div.{ty}"), a, b),
            None if narrow => self.op2(class, &format!("div.{ty}"), a, b),
            None => {
                let q = self.op2(class, &format!("div.{ty}"), a, b);
                let n = self.op1(class, &format!("neg.{ty}"), a);
                let minus_one = self.setp("eq", ty, b, &Val::int(d, -1));
                self.selp(&n, &q, &minus_one)
            }
        }
    }

    /// `a // b`, rounding toward negative infinity.
    pub fn floor_div(&mut self, d: DType, a: &Val, b: &Val) -> Val {
        let class = class_of(d);
        let ty = int_ty(d);
        if let Some(k) = b.as_int().and_then(power_of_two) {
            return self.op2(
                class,
                &format!("shr.{ty}"),
                a,
                &Val::int(DType::U32, i64::from(k)),
            );
        }
        let q = self.trunc_div(d, a, b);
        if d.kind() != DTypeKind::Signed {
            return q;
        }
        let adjust = self.remainder_adjust(d, a, b, &q).1;
        let q1 = self.op2(class, &format!("sub.{ty}"), &q, &Val::int(d, 1));
        let r = self.selp(&q1, &q, &adjust);
        self.normalize(r, d)
    }

    /// `a % b` with the sign of `b`.
    pub fn floor_mod(&mut self, d: DType, a: &Val, b: &Val) -> Val {
        let class = class_of(d);
        let ty = int_ty(d);
        if let Some(k) = b.as_int().and_then(power_of_two) {
            let mask = Val::int(d, (1i64 << k) - 1);
            return self.op2(class, &format!("and.{}", class.bits()), a, &mask);
        }
        if d.kind() != DTypeKind::Signed {
            return self.op2(class, &format!("rem.{ty}"), a, b);
        }
        let q = self.trunc_div(d, a, b);
        let (r, adjust) = self.remainder_adjust(d, a, b, &q);
        let rb = self.op2(class, &format!("add.{ty}"), &r, b);
        let m = self.selp(&rb, &r, &adjust);
        self.normalize(m, d)
    }

    /// `r = a − q·b` and whether the truncated quotient must be adjusted:
    /// `r ≠ 0` and `r`, `b` of opposite signs.
    fn remainder_adjust(&mut self, d: DType, a: &Val, b: &Val, q: &Val) -> (Val, Val) {
        let class = class_of(d);
        let ty = int_ty(d);
        let qb = self.op2(class, &format!("mul.lo.{ty}"), q, b);
        let r = self.op2(class, &format!("sub.{ty}"), a, &qb);
        let x = self.op2(class, &format!("xor.{}", class.bits()), &r, b);
        let zero = Val::int(d, 0);
        let opposite = self.setp("lt", ty, &x, &zero);
        let nonzero = self.setp("ne", ty, &r, &zero);
        let adjust = self.op2(Class::Pred, "and.pred", &opposite, &nonzero);
        (r, adjust)
    }

    fn shift(&mut self, op: BinaryOp, d: DType, a: &Val, b: &Val) -> Val {
        let class = class_of(d);
        let signed = d.kind() == DTypeKind::Signed;
        let width = i64::from(d.bits());
        let opcode = match (op, signed) {
            (BinaryOp::Shl, _) => format!("shl.{}", class.bits()),
            (_, true) => format!("shr.{}", signed_ty(class)),
            (_, false) => format!("shr.{}", unsigned_ty(class)),
        };
        // The amount as a 32-bit register or immediate, saturated at the
        // register width (PTX clamps larger amounts to the width).
        let reg_bits = if class == Class::B64 { 64 } else { 32 };
        let amount = match b.as_int() {
            Some(k) if (0..width).contains(&k) => Val::int(DType::U32, k),
            Some(_) => Val::int(DType::U32, reg_bits),
            None if class == Class::B64 => {
                let c = self.op2(Class::B64, "min.u64", b, &Val::int(DType::U64, 64));
                self.op1(Class::B32, "cvt.u32.u64", &c)
            }
            None => b.clone(),
        };
        let r = self.op2(class, &opcode, a, &amount);
        if op == BinaryOp::Shl {
            self.normalize(r, d)
        } else {
            r
        }
    }

    /// `a ** b` by square-and-multiply over the bits of `b`.
    fn int_pow(&mut self, d: DType, a: &Val, b: &Val) -> Val {
        let class = class_of(d);
        let sty = signed_ty(class);
        let uty = unsigned_ty(class);
        let mul = format!("mul.lo.{sty}");
        let acc = self.tmp(class);
        let base = self.tmp(class);
        let e = self.tmp(class);
        self.emit(format!("mov.{} {acc}, 1", class.bits()));
        self.emit(format!("mov.{} {base}, {a}", class.bits()));
        self.emit(format!("mov.{} {e}, {b}", class.bits()));
        let (acc, base, e) = (
            Val::reg(class, acc),
            Val::reg(class, base),
            Val::reg(class, e),
        );
        let top = self.body.fresh_label("pow");
        let done = self.body.fresh_label("pow_done");
        let zero = Val::int(d, 0);
        self.body.label(&top);
        let finished = self.setp("eq", uty, &e, &zero);
        self.body
            .inst_if(Some(&finished.text), format!("bra {done}"));
        let bit = self.op2(class, &format!("and.{}", class.bits()), &e, &Val::int(d, 1));
        let odd = self.setp("ne", uty, &bit, &zero);
        self.body
            .inst_if(Some(&odd.text), format!("{mul} {acc}, {acc}, {base}"));
        self.emit(format!("{mul} {base}, {base}, {base}"));
        self.emit(format!("shr.{uty} {e}, {e}, 1"));
        self.emit(format!("bra {top}"));
        self.body.label(&done);
        let mut r = acc;
        if d.kind() == DTypeKind::Signed {
            // A negative exponent: 1 for a base of 1, ±1 for −1 (by the
            // exponent's parity), 0 otherwise.
            let ty = int_ty(d);
            let one = Val::int(d, 1);
            let mone = Val::int(d, -1);
            let b_odd = self.op2(class, &format!("and.{}", class.bits()), b, &one);
            let b_odd = self.setp("ne", ty, &b_odd, &zero);
            let sign = self.selp(&mone, &one, &b_odd);
            let is_mone = self.setp("eq", ty, a, &mone);
            let small = self.selp(&sign, &zero, &is_mone);
            let is_one = self.setp("eq", ty, a, &one);
            let small = self.selp(&one, &small, &is_one);
            let negative = self.setp("lt", ty, b, &zero);
            r = self.selp(&small, &r, &negative);
        }
        self.normalize(r, d)
    }
}

/// `a op b` when one operand makes the operation trivial (`x + 0`,
/// `x · 1`, `x · 0`, `x // 1`, `x % 1`, shifts by 0, ...).
fn identity(op: BinaryOp, d: DType, a: &Val, b: &Val) -> Option<Val> {
    let (x, y) = (a.as_int(), b.as_int());
    let zero = || Val::int(d, 0);
    match op {
        BinaryOp::Add | BinaryOp::BitOr | BinaryOp::BitXor if y == Some(0) => Some(a.clone()),
        BinaryOp::Add | BinaryOp::BitOr | BinaryOp::BitXor if x == Some(0) => Some(b.clone()),
        BinaryOp::Sub | BinaryOp::Shl | BinaryOp::Shr if y == Some(0) => Some(a.clone()),
        BinaryOp::Mul if y == Some(1) => Some(a.clone()),
        BinaryOp::Mul if x == Some(1) => Some(b.clone()),
        BinaryOp::Mul | BinaryOp::BitAnd if x == Some(0) || y == Some(0) => Some(zero()),
        BinaryOp::Div | BinaryOp::FloorDiv if y == Some(1) => Some(a.clone()),
        BinaryOp::FloorMod if y == Some(1) => Some(zero()),
        _ => None,
    }
}

fn signed_ty(class: Class) -> &'static str {
    if class == Class::B64 { "s64" } else { "s32" }
}

fn unsigned_ty(class: Class) -> &'static str {
    if class == Class::B64 { "u64" } else { "u32" }
}
