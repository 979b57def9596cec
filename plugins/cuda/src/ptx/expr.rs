//! Expressions: each node becomes the instructions that compute it into a
//! fresh register (or an immediate, when its operands are constants).
//!
//! Expressions are pure, so both sides of `&&`, `||` and `select` are
//! evaluated (no instruction traps; a division by zero, which the
//! reference reports as an error, only gives an unspecified value here).
//! Integer and boolean operations on immediates fold at emission
//! ([`super::fold`]); operators by type are in [`super::int`],
//! [`super::float`] and [`super::convert`].

use tilec_core::ir::{BinaryOp, DType, Literal, UnaryOp};
use tilec_core::thread::{Expr, ExprKind};

use super::PtxError;
use super::fold;
use super::kernel::{Emitter, Storage};
use super::value::{Class, Imm, Val, class_of};

type Result<T> = std::result::Result<T, PtxError>;

impl Emitter<'_> {
    pub fn expr(&mut self, e: &Expr) -> Result<Val> {
        match &e.kind {
            ExprKind::Literal(l) => Ok(match *l {
                Literal::Bool(b) => Val::bool(b),
                Literal::Int(v, d) => Val::int(d, v),
                Literal::Float(x, d) => Val::float(d, x),
            }),
            ExprKind::Reg(r) => {
                if let Some(&v) = self.env.get(r) {
                    return Ok(Val::int(DType::I32, v));
                }
                match self.storage_of(*r)? {
                    Storage::Reg(v) => Ok(v),
                    _ => Err(self.malformed("an array read as a scalar")),
                }
            }
            ExprKind::Elem(r, index) => {
                let class = class_of(self.reg_dtype(*r)?);
                let places = self.places_at(*r, Some(index), 1)?;
                match places.first() {
                    Some(p) => Ok(self.read_place(p, class)),
                    None => Err(self.malformed("an empty element reference")),
                }
            }
            ExprKind::Param(p) => self
                .params
                .get(p.index())
                .cloned()
                .ok_or_else(|| self.malformed(format!("parameter {} does not exist", p.0))),
            ExprKind::Special(s) => Ok(self.special(*s)),
            ExprKind::Unary(op, a) => {
                let v = self.expr(a)?;
                self.unary(*op, a.dtype, v)
            }
            ExprKind::Binary(op, a, b) => {
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                self.binary(*op, a.dtype, x, y)
            }
            ExprKind::Cast(a) => {
                let v = self.expr(a)?;
                self.convert(v, a.dtype, e.dtype)
            }
            ExprKind::Bitcast(a) => {
                let v = self.expr(a)?;
                self.bitcast(v, a.dtype, e.dtype)
            }
            ExprKind::Select(c, a, b) => {
                let c = self.expr(c)?;
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                Ok(self.select(&c, &x, &y))
            }
        }
    }

    /// A unary operator on a value of type `dtype`.
    pub fn unary(&mut self, op: UnaryOp, dtype: DType, v: Val) -> Result<Val> {
        if let Some(imm) = v.imm
            && let Some(r) = fold::unary(op, dtype, imm)
        {
            return Ok(imm_val(r, dtype));
        }
        match dtype {
            DType::Bool => match op {
                UnaryOp::Not => {
                    let p = self.pred(&v);
                    Ok(self.op1(Class::Pred, "not.pred", &p))
                }
                _ => Err(self.malformed(format!("`{}` on bool", op.name()))),
            },
            d if d.is_int() => self.int_unary(op, d, v),
            d => self.float_unary(op, d, v),
        }
    }

    /// A binary operator on two values of type `dtype`.
    pub fn binary(&mut self, op: BinaryOp, dtype: DType, a: Val, b: Val) -> Result<Val> {
        if let (Some(x), Some(y)) = (a.imm, b.imm)
            && let Some(r) = fold::binary(op, dtype, x, y)
        {
            let result = if op.is_comparison() {
                DType::Bool
            } else {
                dtype
            };
            return Ok(imm_val(r, result));
        }
        match dtype {
            DType::Bool => self.bool_binary(op, a, b),
            d if d.is_int() => self.int_binary(op, d, a, b),
            d => self.float_binary(op, d, a, b),
        }
    }

    fn bool_binary(&mut self, op: BinaryOp, a: Val, b: Val) -> Result<Val> {
        let x = self.pred(&a);
        let y = self.pred(&b);
        let p = Class::Pred;
        Ok(match op {
            BinaryOp::And | BinaryOp::BitAnd => self.op2(p, "and.pred", &x, &y),
            BinaryOp::Or | BinaryOp::BitOr => self.op2(p, "or.pred", &x, &y),
            BinaryOp::BitXor | BinaryOp::Ne => self.op2(p, "xor.pred", &x, &y),
            BinaryOp::Eq => {
                let t = self.op2(p, "xor.pred", &x, &y);
                self.op1(p, "not.pred", &t)
            }
            // false < true.
            BinaryOp::Lt | BinaryOp::Ge => {
                let nx = self.op1(p, "not.pred", &x);
                let lt = self.op2(p, "and.pred", &nx, &y);
                if op == BinaryOp::Lt {
                    lt
                } else {
                    self.op1(p, "not.pred", &lt)
                }
            }
            BinaryOp::Gt | BinaryOp::Le => {
                let ny = self.op1(p, "not.pred", &y);
                let gt = self.op2(p, "and.pred", &x, &ny);
                if op == BinaryOp::Gt {
                    gt
                } else {
                    self.op1(p, "not.pred", &gt)
                }
            }
            _ => return Err(self.malformed(format!("`{}` on bool", op.symbol()))),
        })
    }

    /// `c ? a : b`.
    pub fn select(&mut self, c: &Val, a: &Val, b: &Val) -> Val {
        if let Some(k) = c.as_bool() {
            return if k { a.clone() } else { b.clone() };
        }
        if a.class == Class::Pred {
            // (c ∧ a) ∨ (¬c ∧ b)
            let (x, y) = (self.pred(a), self.pred(b));
            let t = self.op2(Class::Pred, "and.pred", c, &x);
            let nc = self.op1(Class::Pred, "not.pred", c);
            let f = self.op2(Class::Pred, "and.pred", &nc, &y);
            return self.op2(Class::Pred, "or.pred", &t, &f);
        }
        self.selp(a, b, c)
    }
}

/// An immediate of `dtype` from a folded constant.
pub(crate) fn imm_val(v: Imm, dtype: DType) -> Val {
    match v {
        Imm::Bool(b) => Val::bool(b),
        Imm::Int(i) => Val::int(dtype, i),
        Imm::Float(x) => Val::float(dtype, x),
    }
}
