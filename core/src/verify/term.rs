//! The small logic obligations are written in: integer terms and formulas
//! over named variables, with exact (unbounded) integer arithmetic.
//!
//! Tile IR integers wrap to their type; terms do not. The two agree exactly
//! when no intermediate value leaves its type's range, which is what the
//! `no-overflow` obligations state, so a bounds proof holds under the
//! overflow proofs of the same access.
//!
//! Bitwise operators are terms only where both operands are known to lie
//! in `0 .. 2^width` for a small `width` (hand-written swizzles such as
//! `(j // 8) ^ (i % 8)`): the discharger then encodes them bit by bit,
//! exactly. Elsewhere they stay opaque values (`obligations.rs`).
//!
//! Terms print in a compact infix form (`bx * 128 + i < M`) that tests pin
//! and `tilec verify` shows.

use std::fmt;

/// An integer-valued term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    Const(i128),
    /// A variable of the obligation set ([`super::SymVar`]), by name.
    Var(String),
    Add(Box<Term>, Box<Term>),
    Sub(Box<Term>, Box<Term>),
    Mul(Box<Term>, Box<Term>),
    /// Division rounding toward negative infinity.
    FloorDiv(Box<Term>, Box<Term>),
    /// Remainder with the sign of the divisor.
    FloorMod(Box<Term>, Box<Term>),
    /// Division truncating toward zero.
    TruncDiv(Box<Term>, Box<Term>),
    Min(Box<Term>, Box<Term>),
    Max(Box<Term>, Box<Term>),
    Ite(Box<Formula>, Box<Term>, Box<Term>),
    /// A bitwise operator on operands that lie in `0 .. 2^width`.
    Bits(BitOp, Box<Term>, Box<Term>, u32),
}

/// A bitwise operator of [`Term::Bits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
}

impl BitOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BitOp::And => "&",
            BitOp::Or => "|",
            BitOp::Xor => "^",
        }
    }

    /// `a op b`.
    pub fn apply(self, a: i128, b: i128) -> i128 {
        match self {
            BitOp::And => a & b,
            BitOp::Or => a | b,
            BitOp::Xor => a ^ b,
        }
    }

    /// The result bit from two operand bits.
    pub fn bit(self, a: bool, b: bool) -> bool {
        match self {
            BitOp::And => a && b,
            BitOp::Or => a || b,
            BitOp::Xor => a != b,
        }
    }
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }

    /// Whether `a op b` holds.
    pub fn holds(self, a: i128, b: i128) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// A truth-valued formula.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Formula {
    Bool(bool),
    /// A boolean variable (an opaque condition, such as a float comparison).
    Var(String),
    Cmp(Cmp, Term, Term),
    Not(Box<Formula>),
    And(Vec<Formula>),
    Or(Vec<Formula>),
}

impl Term {
    pub fn var(name: impl Into<String>) -> Term {
        Term::Var(name.into())
    }

    /// The constant value, when the term is one.
    pub fn as_const(&self) -> Option<i128> {
        match self {
            Term::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// `self + other`, folding constants and `+ 0`.
    pub fn plus(self, other: Term) -> Term {
        match (self.as_const(), other.as_const()) {
            (Some(a), Some(b)) => a.checked_add(b).map_or_else(
                || Term::Add(Box::new(Term::Const(a)), Box::new(Term::Const(b))),
                Term::Const,
            ),
            (_, Some(0)) => self,
            (Some(0), _) => other,
            _ => Term::Add(Box::new(self), Box::new(other)),
        }
    }

    /// `self - other`, folding constants and `- 0`.
    pub fn minus(self, other: Term) -> Term {
        match (self.as_const(), other.as_const()) {
            (Some(a), Some(b)) => a.checked_sub(b).map_or_else(
                || Term::Sub(Box::new(Term::Const(a)), Box::new(Term::Const(b))),
                Term::Const,
            ),
            (_, Some(0)) => self,
            _ => Term::Sub(Box::new(self), Box::new(other)),
        }
    }

    /// `self * other`, folding constants and `* 1`.
    pub fn times(self, other: Term) -> Term {
        match (self.as_const(), other.as_const()) {
            (Some(a), Some(b)) => a.checked_mul(b).map_or_else(
                || Term::Mul(Box::new(Term::Const(a)), Box::new(Term::Const(b))),
                Term::Const,
            ),
            (_, Some(1)) => self,
            (Some(1), _) => other,
            _ => Term::Mul(Box::new(self), Box::new(other)),
        }
    }

    /// `self < other`.
    pub fn lt(self, other: Term) -> Formula {
        Formula::cmp(Cmp::Lt, self, other)
    }

    /// `self <= other`.
    pub fn le(self, other: Term) -> Formula {
        Formula::cmp(Cmp::Le, self, other)
    }

    /// `self >= other`.
    pub fn ge(self, other: Term) -> Formula {
        Formula::cmp(Cmp::Ge, self, other)
    }

    /// `self == other`.
    pub fn eq(self, other: Term) -> Formula {
        Formula::cmp(Cmp::Eq, self, other)
    }

    /// Calls `f` on every variable name in the term.
    pub fn visit_vars(&self, f: &mut dyn FnMut(&str)) {
        match self {
            Term::Const(_) => {}
            Term::Var(name) => f(name),
            Term::Add(a, b)
            | Term::Sub(a, b)
            | Term::Mul(a, b)
            | Term::FloorDiv(a, b)
            | Term::FloorMod(a, b)
            | Term::TruncDiv(a, b)
            | Term::Min(a, b)
            | Term::Max(a, b)
            | Term::Bits(_, a, b, _) => {
                a.visit_vars(f);
                b.visit_vars(f);
            }
            Term::Ite(c, a, b) => {
                c.visit_vars(f);
                a.visit_vars(f);
                b.visit_vars(f);
            }
        }
    }

    /// The term with every variable that `rename` maps renamed.
    pub fn rename(&self, rename: &dyn Fn(&str) -> Option<String>) -> Term {
        let two = |a: &Term, b: &Term| (Box::new(a.rename(rename)), Box::new(b.rename(rename)));
        match self {
            Term::Const(v) => Term::Const(*v),
            Term::Var(name) => Term::Var(rename(name).unwrap_or_else(|| name.clone())),
            Term::Add(a, b) => {
                let (a, b) = two(a, b);
                Term::Add(a, b)
            }
            Term::Sub(a, b) => {
                let (a, b) = two(a, b);
                Term::Sub(a, b)
            }
            Term::Mul(a, b) => {
                let (a, b) = two(a, b);
                Term::Mul(a, b)
            }
            Term::FloorDiv(a, b) => {
                let (a, b) = two(a, b);
                Term::FloorDiv(a, b)
            }
            Term::FloorMod(a, b) => {
                let (a, b) = two(a, b);
                Term::FloorMod(a, b)
            }
            Term::TruncDiv(a, b) => {
                let (a, b) = two(a, b);
                Term::TruncDiv(a, b)
            }
            Term::Min(a, b) => {
                let (a, b) = two(a, b);
                Term::Min(a, b)
            }
            Term::Max(a, b) => {
                let (a, b) = two(a, b);
                Term::Max(a, b)
            }
            Term::Ite(c, a, b) => {
                let (a, b) = two(a, b);
                Term::Ite(Box::new(c.rename(rename)), a, b)
            }
            Term::Bits(op, a, b, width) => {
                let (a, b) = two(a, b);
                Term::Bits(*op, a, b, *width)
            }
        }
    }

    /// The value of the term under `env`; `None` when a variable has no
    /// value or a division by zero or an i128 overflow happens.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i128>) -> Option<i128> {
        Some(match self {
            Term::Const(v) => *v,
            Term::Var(name) => env(name)?,
            Term::Add(a, b) => a.eval(env)?.checked_add(b.eval(env)?)?,
            Term::Sub(a, b) => a.eval(env)?.checked_sub(b.eval(env)?)?,
            Term::Mul(a, b) => a.eval(env)?.checked_mul(b.eval(env)?)?,
            Term::FloorDiv(a, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                let q = a.checked_div(b)?;
                if (a % b != 0) && ((a < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            Term::FloorMod(a, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                let r = a.checked_rem(b)?;
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
            Term::TruncDiv(a, b) => a.eval(env)?.checked_div(b.eval(env)?)?,
            Term::Min(a, b) => a.eval(env)?.min(b.eval(env)?),
            Term::Max(a, b) => a.eval(env)?.max(b.eval(env)?),
            Term::Ite(c, a, b) => {
                if c.eval(env)? {
                    a.eval(env)?
                } else {
                    b.eval(env)?
                }
            }
            Term::Bits(op, a, b, _) => op.apply(a.eval(env)?, b.eval(env)?),
        })
    }

    fn is_atom(&self) -> bool {
        matches!(
            self,
            Term::Const(_) | Term::Var(_) | Term::Min(..) | Term::Max(..) | Term::Ite(..)
        )
    }
}

impl Formula {
    /// The conjunction, flattening nested ones and dropping `true`.
    pub fn and(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for part in parts {
            match part {
                Formula::Bool(true) => {}
                Formula::Bool(false) => return Formula::Bool(false),
                Formula::And(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        match out.len() {
            0 => Formula::Bool(true),
            1 => out.pop().unwrap_or(Formula::Bool(true)),
            _ => Formula::And(out),
        }
    }

    /// `a op b`, decided when both sides are constants.
    pub fn cmp(op: Cmp, a: Term, b: Term) -> Formula {
        match (a.as_const(), b.as_const()) {
            (Some(x), Some(y)) => Formula::Bool(op.holds(x, y)),
            _ => Formula::Cmp(op, a, b),
        }
    }

    /// The disjunction, flattening nested ones and dropping `false`.
    pub fn or(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for part in parts {
            match part {
                Formula::Bool(false) => {}
                Formula::Bool(true) => return Formula::Bool(true),
                Formula::Or(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        match out.len() {
            0 => Formula::Bool(false),
            1 => out.pop().unwrap_or(Formula::Bool(false)),
            _ => Formula::Or(out),
        }
    }

    /// The negation.
    pub fn negate(self) -> Formula {
        match self {
            Formula::Bool(b) => Formula::Bool(!b),
            Formula::Not(inner) => *inner,
            other => Formula::Not(Box::new(other)),
        }
    }

    /// `self -> then`.
    pub fn implies(self, then: Formula) -> Formula {
        Formula::or(vec![self.negate(), then])
    }

    /// The formula with every variable that `rename` maps renamed.
    pub fn rename(&self, rename: &dyn Fn(&str) -> Option<String>) -> Formula {
        match self {
            Formula::Bool(b) => Formula::Bool(*b),
            Formula::Var(name) => Formula::Var(rename(name).unwrap_or_else(|| name.clone())),
            Formula::Cmp(op, a, b) => Formula::Cmp(*op, a.rename(rename), b.rename(rename)),
            Formula::Not(inner) => Formula::Not(Box::new(inner.rename(rename))),
            Formula::And(parts) => Formula::And(parts.iter().map(|p| p.rename(rename)).collect()),
            Formula::Or(parts) => Formula::Or(parts.iter().map(|p| p.rename(rename)).collect()),
        }
    }

    /// Calls `f` on every variable name in the formula.
    pub fn visit_vars(&self, f: &mut dyn FnMut(&str)) {
        match self {
            Formula::Bool(_) => {}
            Formula::Var(name) => f(name),
            Formula::Cmp(_, a, b) => {
                a.visit_vars(f);
                b.visit_vars(f);
            }
            Formula::Not(inner) => inner.visit_vars(f),
            Formula::And(parts) | Formula::Or(parts) => {
                for part in parts {
                    part.visit_vars(f);
                }
            }
        }
    }

    /// The truth value under `env` (integer variables; boolean variables
    /// are not known and make the result `None`).
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i128>) -> Option<bool> {
        Some(match self {
            Formula::Bool(b) => *b,
            Formula::Var(_) => return None,
            Formula::Cmp(op, a, b) => op.holds(a.eval(env)?, b.eval(env)?),
            Formula::Not(inner) => !inner.eval(env)?,
            Formula::And(parts) => {
                for part in parts {
                    if !part.eval(env)? {
                        return Some(false);
                    }
                }
                true
            }
            Formula::Or(parts) => {
                for part in parts {
                    if part.eval(env)? {
                        return Some(true);
                    }
                }
                false
            }
        })
    }
}

fn write_operand(f: &mut fmt::Formatter<'_>, term: &Term) -> fmt::Result {
    if term.is_atom() {
        write!(f, "{term}")
    } else {
        write!(f, "({term})")
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let infix = |f: &mut fmt::Formatter<'_>, a: &Term, op: &str, b: &Term| {
            // `+` and `-` chain on the left without parentheses.
            if matches!(op, "+" | "-") && matches!(a, Term::Add(..) | Term::Sub(..)) {
                write!(f, "{a}")?;
            } else {
                write_operand(f, a)?;
            }
            write!(f, " {op} ")?;
            write_operand(f, b)
        };
        match self {
            Term::Const(v) => write!(f, "{v}"),
            Term::Var(name) => write!(f, "{name}"),
            Term::Add(a, b) => infix(f, a, "+", b),
            Term::Sub(a, b) => infix(f, a, "-", b),
            Term::Mul(a, b) => infix(f, a, "*", b),
            Term::FloorDiv(a, b) => infix(f, a, "//", b),
            Term::FloorMod(a, b) => infix(f, a, "%", b),
            Term::TruncDiv(a, b) => infix(f, a, "/", b),
            Term::Min(a, b) => write!(f, "min({a}, {b})"),
            Term::Max(a, b) => write!(f, "max({a}, {b})"),
            Term::Ite(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            Term::Bits(op, a, b, _) => infix(f, a, op.symbol(), b),
        }
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined = |f: &mut fmt::Formatter<'_>, parts: &[Formula], op: &str| {
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    write!(f, " {op} ")?;
                }
                if matches!(part, Formula::And(_) | Formula::Or(_)) {
                    write!(f, "({part})")?;
                } else {
                    write!(f, "{part}")?;
                }
            }
            Ok(())
        };
        match self {
            Formula::Bool(b) => write!(f, "{b}"),
            Formula::Var(name) => write!(f, "{name}"),
            Formula::Cmp(op, a, b) => write!(f, "{a} {} {b}", op.symbol()),
            Formula::Not(inner) => match **inner {
                Formula::Var(_) | Formula::Bool(_) => write!(f, "not {inner}"),
                _ => write!(f, "not ({inner})"),
            },
            Formula::And(parts) => joined(f, parts, "and"),
            Formula::Or(parts) => joined(f, parts, "or"),
        }
    }
}
