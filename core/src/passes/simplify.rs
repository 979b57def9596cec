//! `simplify`: canonical integer index arithmetic and boolean guards.
//!
//! # What it assumes
//! A module that verifies. Integer arithmetic wraps to its type; `//` and
//! `%` round toward negative infinity (`%` takes the divisor's sign) and
//! are plain unsigned division and remainder on unsigned types; integer
//! division by zero is an error (all as the interpreter defines them, see
//! `interp/mod.rs`).
//!
//! # What it guarantees
//! Every expression reachable from a statement (and the shapes of
//! allocated buffers) is rewritten to an expression of the same type whose
//! value is the same whenever the original evaluates without error. (An
//! expression that would fail — a division by zero, an out-of-bounds load —
//! may disappear, as in `x // 0 * 0 → 0`; nothing that succeeds changes.)
//! Floating-point operations are never reassociated or folded; only their
//! integer and boolean operands are rewritten. Statement spans are kept.
//!
//! # Phases
//! The pass walks the statements in order, keeping a *range* (an interval
//! of mathematical integers) for every integer variable in scope:
//! - loop variables: `start.lo ..= start.hi + extent.hi - 1`; parallel
//!   variables `0 ..= extent - 1`;
//! - block indices `0 ..= grid - 1`, thread indices `0 ..= threads - 1`;
//! - symbols that are a bare extent of a parameter: `0 ..= max` of their
//!   type (the interpreter binds them from tensor shapes);
//! - `let` variables: the range of their value;
//! - facts: after `assume c`, for the rest of its block, and inside the
//!   branches of `if c`, comparisons of a variable against an expression
//!   (`v < e`, `e >= v`, conjunctions, negations) narrow the variable's
//!   range;
//! - anything else: the whole range of its type.
//!
//! Each integer expression is brought to *affine normal form*: a constant
//! plus a sum of `coefficient × atom`, where atoms are the non-affine
//! parts (variables, loads, `//`, `%`, products of non-constants, casts,
//! `min`, ...), themselves simplified first. Since `+`, `-`, `*` by a
//! constant and negation are ring operations modulo 2^bits, this form is
//! exact under wrapping whatever the ranges. Like terms combine,
//! constants fold, and `(x // c) * c + x % c` becomes `x` (`c > 0`). The
//! form is printed back with atoms in a canonical order (by the first
//! variable they mention, in binding order, then structurally), positive
//! terms first, then subtracted ones, then the constant.
//!
//! Division rules need more than a ring: they hold only when no
//! intermediate value wrapped. The range of an affine form is computed
//! exactly from its atoms' ranges; when it fits the type, the stored value
//! *is* the mathematical value, and for a constant `c > 0`:
//! - `(q·c + r) // c → q + r // c` and `(q·c + r) % c → r % c`, where `q·c`
//!   collects the terms whose coefficient `c` divides and `r` the rest
//!   (also the constant's remainder), provided `r`'s range fits the type;
//!   then `r // c` is a constant when `r`'s range lies within one multiple of
//!   `c` (`→ q` when `0 ≤ r < c`), and `r % c` is `r - k·c` likewise (`→ r`
//!   when `0 ≤ r < c`). A range that allows a negative `r`, or `r ≥ c`,
//!   keeps the division.
//! - `x // 1 → x`, `x % 1 → 0` always; `(x // a) // b → x // (a·b)` and
//!   `(x % a) % b → x % b` when `b` divides `a` (positive constants, `a·b`
//!   representable); truncating `/` behaves as `//` when the numerator's
//!   range is non-negative.
//!
//! Comparisons of integers are decided when the operands' ranges, or the
//! range of their exact difference, prove them; `min`/`max` pick an operand
//! the same way. Boolean rules: `true && x → x`, `false && x → false`,
//! `x || true → true`, `!!x → x`, `!(a < b) → a >= b` (integers only: NaN
//! breaks it for floats), `x == true → x`, `select(true, a, b) → a`,
//! `select(c, a, a) → a`. Statements: `if true`/`if false` is replaced by
//! the branch taken, an `if` whose branches are both empty disappears, a
//! `for` loop whose extent is at most 0 disappears, `assume true` disappears.
//!
//! Deliberately not done: reassociating or folding floating-point math;
//! distributing products over sums; moving terms across comparisons
//! (`i + 1 < n` stays); rules for negative divisors; substituting `let`
//! values. An index of a fragment buffer inside a `parallel` nest keeps its
//! original form when simplifying would remove every parallel variable
//! from it (the verifier's fragment rule). Expressions nested deeper than
//! [`MAX_DEPTH`] are left as they are.
//!
//! Nodes are rebuilt through a hash-consing table, so equal canonical
//! subexpressions are one node and like terms are found by handle. At the
//! end, expressions no statement reaches any more are dropped
//! ([`super::compact_exprs`]).

use super::{Pass, PassContext, PassError, compact_exprs, expr_operands};
use crate::ir::{
    BinaryOp, Block, DType, DTypeKind, Expr, Function, Handle, Literal, Module, Region, Scope,
    Span, Stmt, TypeError, UnaryOp, Var, VarKind,
};
use std::cmp::Ordering;
use std::collections::HashMap;

/// Expressions nested deeper than this are left unsimplified, so that the
/// recursion stays bounded.
pub const MAX_DEPTH: u32 = 1500;

/// Stack of the thread the pass runs on (the rewriting recurses once per
/// level of expression nesting).
const STACK_SIZE: usize = 256 << 20;

/// The `simplify` pass (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Simplify;

impl Pass for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn description(&self) -> &'static str {
        "Brings integer index arithmetic to a canonical affine form (constants folded, \
         like terms combined, atoms in a fixed order), simplifies `//` and `%` by \
         constants using the value ranges of loop, parallel, block and thread indices, \
         `let` values and `assume`/`if` facts (exactly, with floor semantics and \
         wrapping respected), decides comparisons and guards that the ranges prove, and \
         removes `if true`/`if false`, empty loops and `assume true`. Floating-point \
         expressions are never reassociated."
    }

    fn run(&self, module: &mut Module, _cx: &PassContext) -> Result<(), PassError> {
        for f in &mut module.functions {
            simplify_function(f).map_err(|source| PassError::Failed {
                pass: "simplify",
                function: f.name.clone(),
                source: Box::new(source),
            })?;
        }
        Ok(())
    }
}

/// Why `simplify` could not rewrite a function (a malformed input or a bug:
/// a module that verifies never gives one).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimplifyError {
    #[error("expression {} is outside the arena", .0.index())]
    Dangling(Handle<Expr>),
    #[error("variable {} is outside the arena", .0.index())]
    DanglingVar(Handle<Var>),
    #[error("a rebuilt expression does not type-check: {0}")]
    Type(#[from] TypeError),
}

/// Simplifies one function in place (see the module documentation).
pub fn simplify_function(f: &mut Function) -> Result<(), SimplifyError> {
    let job = std::sync::Mutex::new(Some(move || -> Result<(), SimplifyError> {
        let original = f.body.clone();
        let body = std::mem::take(&mut f.body);
        match Simplifier::new(f).block(body) {
            Ok(body) => {
                f.body = body;
                compact_exprs(f);
                Ok(())
            }
            Err(e) => {
                // The function keeps its statements (and a few unused
                // expressions); the caller reports the error.
                f.body = original;
                Err(e)
            }
        }
    }));
    let take = || job.lock().ok().and_then(|mut job| job.take());
    let spawned = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("tilec-simplify".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || take().map(|mut job| job()));
        match worker.map(|handle| handle.join()) {
            Ok(Ok(result)) => result,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => None,
        }
    });
    match spawned {
        Some(result) => result,
        // No thread could be started, so the job is still here.
        None => take().map_or(Ok(()), |mut job| job()),
    }
}

// ---- Integers as mathematical values ---------------------------------------

/// The mathematical value of a stored integer of type `ty`.
fn math(value: i64, ty: DType) -> i128 {
    if ty == DType::U64 {
        i128::from(value as u64)
    } else {
        i128::from(value)
    }
}

/// The range of values of an integer (or bool) type.
fn type_range(ty: DType) -> Interval {
    let (lo, hi) = ty.int_range().unwrap_or((i128::MIN / 4, i128::MAX / 4));
    Interval { lo, hi }
}

/// `v` reduced modulo 2^bits to the representative in
/// `-2^(bits-1) .. 2^(bits-1)`.
fn ring(v: i128, bits: u32) -> i128 {
    let modulus = 1i128 << bits;
    let r = v.rem_euclid(modulus);
    if r >= modulus / 2 { r - modulus } else { r }
}

/// The literal of type `ty` whose value is `v` modulo 2^bits.
fn int_literal(ty: DType, v: i128) -> Literal {
    Literal::Int(ty.wrap_i64(v as i64), ty)
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// A closed interval of mathematical integers, never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Interval {
    lo: i128,
    hi: i128,
}

impl Interval {
    fn point(v: i128) -> Self {
        Interval { lo: v, hi: v }
    }

    fn within(self, other: Interval) -> bool {
        other.lo <= self.lo && self.hi <= other.hi
    }

    fn union(self, other: Interval) -> Interval {
        Interval {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    fn intersect(self, other: Interval) -> Option<Interval> {
        let lo = self.lo.max(other.lo);
        let hi = self.hi.min(other.hi);
        (lo <= hi).then_some(Interval { lo, hi })
    }

    /// `self * k`, or `None` on overflow.
    fn scale(self, k: i128) -> Option<Interval> {
        let a = self.lo.checked_mul(k)?;
        let b = self.hi.checked_mul(k)?;
        Some(Interval {
            lo: a.min(b),
            hi: a.max(b),
        })
    }

    fn add(self, other: Interval) -> Option<Interval> {
        Some(Interval {
            lo: self.lo.checked_add(other.lo)?,
            hi: self.hi.checked_add(other.hi)?,
        })
    }

    fn mul(self, other: Interval) -> Option<Interval> {
        let corners = [
            self.lo.checked_mul(other.lo)?,
            self.lo.checked_mul(other.hi)?,
            self.hi.checked_mul(other.lo)?,
            self.hi.checked_mul(other.hi)?,
        ];
        Some(Interval {
            lo: corners.iter().copied().min()?,
            hi: corners.iter().copied().max()?,
        })
    }
}

// ---- Affine forms -----------------------------------------------------------

/// `konst + Σ coefficient × atom`, every number reduced modulo 2^bits to
/// its signed representative. Terms are sorted by handle, with non-zero
/// coefficients.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lin {
    bits: u32,
    terms: Vec<(Handle<Expr>, i128)>,
    konst: i128,
}

impl Lin {
    fn constant(bits: u32, v: i128) -> Lin {
        Lin {
            bits,
            terms: Vec::new(),
            konst: ring(v, bits),
        }
    }

    fn atom(bits: u32, h: Handle<Expr>) -> Lin {
        Lin {
            bits,
            terms: vec![(h, 1)],
            konst: 0,
        }
    }

    fn as_constant(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.konst)
    }

    fn add(&self, other: &Lin) -> Lin {
        let bits = self.bits;
        let mut terms: Vec<(Handle<Expr>, i128)> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            let next = match (self.terms.get(i), other.terms.get(j)) {
                (Some(&a), Some(&b)) if a.0 == b.0 => {
                    i += 1;
                    j += 1;
                    (a.0, ring(a.1 + b.1, bits))
                }
                (Some(&a), Some(&b)) if a.0 < b.0 => {
                    i += 1;
                    a
                }
                (Some(_), Some(&b)) => {
                    j += 1;
                    b
                }
                (Some(&a), None) => {
                    i += 1;
                    a
                }
                (None, Some(&b)) => {
                    j += 1;
                    b
                }
                (None, None) => break,
            };
            if next.1 != 0 {
                terms.push(next);
            }
        }
        Lin {
            bits,
            terms,
            konst: ring(self.konst + other.konst, bits),
        }
    }

    fn scale(&self, k: i128) -> Lin {
        let bits = self.bits;
        let k = ring(k, bits);
        Lin {
            bits,
            terms: self
                .terms
                .iter()
                .map(|&(h, c)| (h, ring(c * k, bits)))
                .filter(|&(_, c)| c != 0)
                .collect(),
            konst: ring(self.konst * k, bits),
        }
    }

    fn sub(&self, other: &Lin) -> Lin {
        self.add(&other.scale(-1))
    }

    fn coefficient(&self, h: Handle<Expr>) -> i128 {
        self.terms
            .iter()
            .find(|(t, _)| *t == h)
            .map_or(0, |&(_, c)| c)
    }
}

// ---- Hash-consing -----------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum LitKey {
    Bool(bool),
    Int(i64, DType),
    Float(u64, DType),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Lit(LitKey),
    Var(Handle<Var>),
    Unary(UnaryOp, Handle<Expr>),
    Binary(BinaryOp, Handle<Expr>, Handle<Expr>),
    Select(Handle<Expr>, Handle<Expr>, Handle<Expr>),
    Cast(DType, Handle<Expr>),
    Load(Handle<crate::ir::Buffer>, Vec<Handle<Expr>>),
    Bitcast(DType, Handle<Expr>),
}

fn key(e: &Expr) -> Key {
    match e {
        Expr::Literal(Literal::Bool(b)) => Key::Lit(LitKey::Bool(*b)),
        Expr::Literal(Literal::Int(v, d)) => Key::Lit(LitKey::Int(*v, *d)),
        Expr::Literal(Literal::Float(v, d)) => Key::Lit(LitKey::Float(v.to_bits(), *d)),
        Expr::Var(v) => Key::Var(*v),
        Expr::Unary { op, arg } => Key::Unary(*op, *arg),
        Expr::Binary { op, lhs, rhs } => Key::Binary(*op, *lhs, *rhs),
        Expr::Select {
            cond,
            then,
            otherwise,
        } => Key::Select(*cond, *then, *otherwise),
        Expr::Cast { dtype, arg } => Key::Cast(*dtype, *arg),
        Expr::Load { buffer, indices } => Key::Load(*buffer, indices.clone()),
        Expr::Bitcast { dtype, arg } => Key::Bitcast(*dtype, *arg),
    }
}

/// The comparison that holds exactly when `op` does not (for integers).
fn negate_comparison(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Ne,
        BinaryOp::Ne => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Ge,
        BinaryOp::Le => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Le,
        BinaryOp::Ge => BinaryOp::Lt,
        _ => return None,
    })
}

/// `b op a` for `a op b`.
fn swap_comparison(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Le => BinaryOp::Ge,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::Ge => BinaryOp::Le,
        other => other,
    }
}

/// Decides `a op b` for all `a` in `ra` and `b` in `rb`, when the ranges
/// allow.
fn decide(op: BinaryOp, ra: Interval, rb: Interval) -> Option<bool> {
    match op {
        BinaryOp::Lt => {
            if ra.hi < rb.lo {
                Some(true)
            } else if ra.lo >= rb.hi {
                Some(false)
            } else {
                None
            }
        }
        BinaryOp::Le => {
            if ra.hi <= rb.lo {
                Some(true)
            } else if ra.lo > rb.hi {
                Some(false)
            } else {
                None
            }
        }
        BinaryOp::Gt => decide(BinaryOp::Lt, rb, ra),
        BinaryOp::Ge => decide(BinaryOp::Le, rb, ra),
        BinaryOp::Eq => {
            if ra.lo == ra.hi && rb.lo == rb.hi && ra.lo == rb.lo {
                Some(true)
            } else if ra.hi < rb.lo || rb.hi < ra.lo {
                Some(false)
            } else {
                None
            }
        }
        BinaryOp::Ne => decide(BinaryOp::Eq, ra, rb).map(|b| !b),
        _ => None,
    }
}

/// Folds an integer operator on stored values exactly as the interpreter
/// computes it; `None` for what is not folded here (division by zero,
/// `pow`).
fn fold_int(op: BinaryOp, ty: DType, a: i64, b: i64) -> Option<Literal> {
    let bits = ty.bits();
    let (ma, mb) = (math(a, ty), math(b, ty));
    let wrap = |m: i128| Some(int_literal(ty, m));
    match op {
        BinaryOp::Add => wrap(ma + mb),
        BinaryOp::Sub => wrap(ma - mb),
        BinaryOp::Mul => wrap(ring(ma, bits) * ring(mb, bits)),
        BinaryOp::FloorDiv if mb != 0 => wrap(floor_div(ma, mb)),
        BinaryOp::FloorMod if mb != 0 => wrap(ma - mb * floor_div(ma, mb)),
        BinaryOp::Div if mb != 0 => wrap(ma / mb),
        BinaryOp::Min => wrap(ma.min(mb)),
        BinaryOp::Max => wrap(ma.max(mb)),
        BinaryOp::BitAnd => wrap(i128::from(a & b)),
        BinaryOp::BitOr => wrap(i128::from(a | b)),
        BinaryOp::BitXor => wrap(i128::from(a ^ b)),
        BinaryOp::Shl => {
            if b < 0 || b >= i64::from(bits) {
                wrap(0)
            } else {
                wrap(i128::from(a.wrapping_shl(b as u32)))
            }
        }
        BinaryOp::Shr if ty.kind() == DTypeKind::Signed => {
            if b < 0 || b >= i64::from(bits) {
                wrap(if a < 0 { -1 } else { 0 })
            } else {
                wrap(i128::from(a >> b))
            }
        }
        BinaryOp::Shr => {
            let count = b as u64;
            if count >= u64::from(bits) {
                wrap(0)
            } else {
                wrap(i128::from(((a as u64) >> count) as i64))
            }
        }
        op if op.is_comparison() => {
            decide(op, Interval::point(ma), Interval::point(mb)).map(Literal::Bool)
        }
        _ => None,
    }
}

// ---- The rewriter -----------------------------------------------------------

struct Simplifier<'f> {
    f: &'f mut Function,
    /// Nesting depth of every expression (1 for leaves).
    depth: Vec<u32>,
    /// Canonical nodes by structure.
    intern: HashMap<Key, Handle<Expr>>,
    /// Rewritten form of an expression in the current context.
    memo: HashMap<Handle<Expr>, Handle<Expr>>,
    /// Affine form of an original expression in the current context.
    lin_memo: HashMap<Handle<Expr>, Lin>,
    /// Affine form of a canonical expression, read off its structure.
    canon_memo: HashMap<Handle<Expr>, Lin>,
    /// Range of a canonical expression in the current context.
    range_memo: HashMap<Handle<Expr>, Interval>,
    /// Smallest variable index a canonical expression mentions.
    min_var: HashMap<Handle<Expr>, usize>,
    /// Known ranges of variables.
    ranges: HashMap<Handle<Var>, Interval>,
    /// Previous ranges, to restore when a fact goes out of scope.
    undo: Vec<(Handle<Var>, Option<Interval>)>,
    /// Variables of the enclosing `parallel` loops.
    parallel_vars: Vec<Handle<Var>>,
}

impl<'f> Simplifier<'f> {
    fn new(f: &'f mut Function) -> Self {
        let mut depth = Vec::with_capacity(f.exprs.len());
        let mut intern = HashMap::new();
        for (h, e) in f.exprs.iter() {
            let d: u32 = expr_operands(e)
                .iter()
                .map(|o| depth.get(o.index()).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            depth.push(d.saturating_add(1));
            intern.entry(key(e)).or_insert(h);
        }
        let mut ranges = HashMap::new();
        // Symbols bound from a tensor extent are non-negative.
        for param in &f.params {
            let Some(buffer) = f.buffers.try_get(param.buffer) else {
                continue;
            };
            for &extent in &buffer.shape {
                if let Some(&Expr::Var(v)) = f.exprs.try_get(extent)
                    && let Some(var) = f.vars.try_get(v)
                    && var.kind == VarKind::Symbolic
                    && var.dtype.is_int()
                {
                    let full = type_range(var.dtype);
                    ranges.insert(v, Interval { lo: 0, hi: full.hi });
                }
            }
        }
        Simplifier {
            f,
            depth,
            intern,
            memo: HashMap::new(),
            lin_memo: HashMap::new(),
            canon_memo: HashMap::new(),
            range_memo: HashMap::new(),
            min_var: HashMap::new(),
            ranges,
            undo: Vec::new(),
            parallel_vars: Vec::new(),
        }
    }

    // ---- Access -----------------------------------------------------------

    fn node(&self, h: Handle<Expr>) -> Result<Expr, SimplifyError> {
        self.f
            .exprs
            .try_get(h)
            .cloned()
            .ok_or(SimplifyError::Dangling(h))
    }

    fn ty(&self, h: Handle<Expr>) -> Result<DType, SimplifyError> {
        self.f
            .expr_types
            .get(h.index())
            .copied()
            .ok_or(SimplifyError::Dangling(h))
    }

    fn var_dtype(&self, v: Handle<Var>) -> Result<DType, SimplifyError> {
        self.f
            .vars
            .try_get(v)
            .map(|var| var.dtype)
            .ok_or(SimplifyError::DanglingVar(v))
    }

    fn too_deep(&self, h: Handle<Expr>) -> bool {
        self.depth.get(h.index()).copied().unwrap_or(0) > MAX_DEPTH
    }

    fn literal(&self, h: Handle<Expr>) -> Option<Literal> {
        match self.f.exprs.try_get(h) {
            Some(Expr::Literal(l)) => Some(*l),
            _ => None,
        }
    }

    /// The mathematical value of an integer literal.
    fn int_value(&self, h: Handle<Expr>) -> Option<i128> {
        match self.f.exprs.try_get(h) {
            Some(Expr::Literal(Literal::Int(v, ty))) => Some(math(*v, *ty)),
            _ => None,
        }
    }

    /// The canonical node for `e`.
    fn mk(&mut self, e: Expr) -> Result<Handle<Expr>, SimplifyError> {
        let k = key(&e);
        if let Some(&h) = self.intern.get(&k) {
            return Ok(h);
        }
        let d = expr_operands(&e)
            .iter()
            .map(|o| self.depth.get(o.index()).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        let h = self.f.add_expr(e)?;
        self.depth.push(d.saturating_add(1));
        self.intern.insert(k, h);
        Ok(h)
    }

    fn mk_lit(&mut self, l: Literal) -> Result<Handle<Expr>, SimplifyError> {
        self.mk(Expr::Literal(l))
    }

    fn mk_bool(&mut self, b: bool) -> Result<Handle<Expr>, SimplifyError> {
        self.mk_lit(Literal::Bool(b))
    }

    fn mk_binary(
        &mut self,
        op: BinaryOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
    ) -> Result<Handle<Expr>, SimplifyError> {
        self.mk(Expr::Binary { op, lhs, rhs })
    }

    // ---- Context ----------------------------------------------------------

    fn forget(&mut self) {
        self.memo.clear();
        self.lin_memo.clear();
        self.range_memo.clear();
    }

    /// Sets the range of a newly bound variable: `values` if it fits the
    /// variable's type (the interpreter wraps loop counters to it),
    /// otherwise the type's range.
    fn bind(&mut self, v: Handle<Var>, values: Option<Interval>) -> Result<(), SimplifyError> {
        let full = type_range(self.var_dtype(v)?);
        let range = values.filter(|r| r.within(full)).unwrap_or(full);
        self.ranges.insert(v, range);
        Ok(())
    }

    /// Narrows the range of `v` until [`Self::restore`] to `mark`.
    fn narrow(&mut self, v: Handle<Var>, to: Interval) -> Result<(), SimplifyError> {
        let full = type_range(self.var_dtype(v)?);
        let current = self.ranges.get(&v).copied().unwrap_or(full);
        // An empty intersection means unreachable code: keep what we had.
        if let Some(narrowed) = current.intersect(to)
            && narrowed != current
        {
            self.undo.push((v, self.ranges.get(&v).copied()));
            self.ranges.insert(v, narrowed);
            self.forget();
        }
        Ok(())
    }

    fn restore(&mut self, mark: usize) {
        if self.undo.len() <= mark {
            return;
        }
        while self.undo.len() > mark {
            if let Some((v, old)) = self.undo.pop() {
                match old {
                    Some(r) => self.ranges.insert(v, r),
                    None => self.ranges.remove(&v),
                };
            }
        }
        self.forget();
    }

    /// Narrows variable ranges with what `cond` (canonical) being
    /// `holds` implies.
    fn assume(&mut self, cond: Handle<Expr>, holds: bool) -> Result<(), SimplifyError> {
        if self.too_deep(cond) {
            return Ok(());
        }
        match self.node(cond)? {
            Expr::Binary {
                op: BinaryOp::And,
                lhs,
                rhs,
            } if holds => {
                self.assume(lhs, true)?;
                self.assume(rhs, true)?;
            }
            Expr::Binary {
                op: BinaryOp::Or,
                lhs,
                rhs,
            } if !holds => {
                self.assume(lhs, false)?;
                self.assume(rhs, false)?;
            }
            Expr::Unary {
                op: UnaryOp::Not,
                arg,
            } => self.assume(arg, !holds)?,
            Expr::Binary { op, lhs, rhs } if op.is_comparison() && self.ty(lhs)?.is_int() => {
                let Some(op) = (if holds {
                    Some(op)
                } else {
                    negate_comparison(op)
                }) else {
                    return Ok(());
                };
                if let Expr::Var(v) = self.node(lhs)? {
                    let other = self.range(rhs)?;
                    self.narrow_by(v, op, other)?;
                }
                if let Expr::Var(v) = self.node(rhs)? {
                    let other = self.range(lhs)?;
                    self.narrow_by(v, swap_comparison(op), other)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Narrows `v` knowing `v op x` for some `x` in `other`.
    fn narrow_by(
        &mut self,
        v: Handle<Var>,
        op: BinaryOp,
        other: Interval,
    ) -> Result<(), SimplifyError> {
        let (lo, hi) = (i128::MIN / 4, i128::MAX / 4);
        let to = match op {
            BinaryOp::Lt => Interval {
                lo,
                hi: other.hi - 1,
            },
            BinaryOp::Le => Interval { lo, hi: other.hi },
            BinaryOp::Gt => Interval {
                lo: other.lo + 1,
                hi,
            },
            BinaryOp::Ge => Interval { lo: other.lo, hi },
            BinaryOp::Eq => other,
            _ => return Ok(()),
        };
        self.narrow(v, to)
    }

    // ---- Statements -------------------------------------------------------

    fn block(&mut self, block: Block) -> Result<Block, SimplifyError> {
        let mark = self.undo.len();
        let mut out = Block::new();
        let spans = block
            .spans
            .into_iter()
            .chain(std::iter::repeat(Span::UNKNOWN));
        for (stmt, span) in block.stmts.into_iter().zip(spans) {
            self.stmt(stmt, span, &mut out)?;
        }
        self.restore(mark);
        Ok(out)
    }

    fn region(&mut self, region: Region) -> Result<Region, SimplifyError> {
        let mut ranges = region.ranges;
        for range in &mut ranges {
            range.start = self.simp(range.start)?;
            range.extent = self.simp(range.extent)?;
        }
        Ok(Region {
            buffer: region.buffer,
            ranges,
        })
    }

    fn stmt(&mut self, stmt: Stmt, span: Span, out: &mut Block) -> Result<(), SimplifyError> {
        let stmt = match stmt {
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                thread_var,
                order,
                body,
            } => {
                let grid = grid
                    .into_iter()
                    .map(|g| self.simp(g))
                    .collect::<Result<Vec<_>, _>>()?;
                for (&v, &g) in block_vars.iter().zip(&grid) {
                    let r = self.range(g)?;
                    let values = (r.hi >= 1).then_some(Interval {
                        lo: 0,
                        hi: r.hi - 1,
                    });
                    self.bind(v, values)?;
                }
                let values = (threads >= 1).then(|| Interval {
                    lo: 0,
                    hi: i128::from(threads) - 1,
                });
                self.bind(thread_var, values)?;
                let body = self.block(body)?;
                Stmt::Kernel {
                    grid,
                    threads,
                    block_vars,
                    thread_var,
                    order,
                    body,
                }
            }
            Stmt::Alloc { buffer, init } => {
                let init = init.map(|e| self.simp(e)).transpose()?;
                let shape = self
                    .f
                    .buffers
                    .try_get(buffer)
                    .map(|b| b.shape.clone())
                    .unwrap_or_default();
                let shape = shape
                    .into_iter()
                    .map(|e| self.simp(e))
                    .collect::<Result<Vec<_>, _>>()?;
                if self.f.buffers.contains(buffer) {
                    self.f.buffers[buffer].shape = shape;
                }
                Stmt::Alloc { buffer, init }
            }
            Stmt::For {
                var,
                start,
                extent,
                kind,
                body,
            } => {
                let start = self.simp(start)?;
                let extent = self.simp(extent)?;
                let rs = self.range(start)?;
                let re = self.range(extent)?;
                if re.hi <= 0 {
                    // The loop runs no iteration.
                    return Ok(());
                }
                self.bind(
                    var,
                    Some(Interval {
                        lo: rs.lo,
                        hi: rs.hi + re.hi - 1,
                    }),
                )?;
                let body = self.block(body)?;
                Stmt::For {
                    var,
                    start,
                    extent,
                    kind,
                    body,
                }
            }
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                let extents = extents
                    .into_iter()
                    .map(|e| self.simp(e))
                    .collect::<Result<Vec<_>, _>>()?;
                for (&v, &e) in vars.iter().zip(&extents) {
                    let r = self.range(e)?;
                    let values = (r.hi >= 1).then_some(Interval {
                        lo: 0,
                        hi: r.hi - 1,
                    });
                    self.bind(v, values)?;
                }
                let outer = self.parallel_vars.len();
                self.parallel_vars.extend(vars.iter().copied());
                self.forget();
                let body = self.block(body);
                self.parallel_vars.truncate(outer);
                self.forget();
                Stmt::Parallel {
                    vars,
                    extents,
                    body: body?,
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.simp(cond)?;
                if let Some(Literal::Bool(taken)) = self.literal(cond) {
                    let branch = self.block(if taken { then } else { otherwise })?;
                    out.stmts.extend(branch.stmts);
                    out.spans.extend(branch.spans);
                    return Ok(());
                }
                let mark = self.undo.len();
                self.assume(cond, true)?;
                let then = self.block(then)?;
                self.restore(mark);
                self.assume(cond, false)?;
                let otherwise = self.block(otherwise)?;
                self.restore(mark);
                if then.is_empty() && otherwise.is_empty() {
                    return Ok(());
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                }
            }
            Stmt::Let { var, value } => {
                let value = self.simp(value)?;
                if self.ty(value)?.is_int() {
                    let r = self.range(value)?;
                    self.bind(var, Some(r))?;
                }
                Stmt::Let { var, value }
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                let indices = self.indices(buffer, indices)?;
                let value = self.simp(value)?;
                Stmt::Store {
                    buffer,
                    indices,
                    value,
                }
            }
            Stmt::WarpReduce {
                kind,
                buffer,
                indices,
                value,
            } => {
                let indices = self.indices(buffer, indices)?;
                let value = self.simp(value)?;
                Stmt::WarpReduce {
                    kind,
                    buffer,
                    indices,
                    value,
                }
            }
            Stmt::Copy { src, dst } => Stmt::Copy {
                src: self.region(src)?,
                dst: self.region(dst)?,
            },
            Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                policy,
                clear_accum,
            } => Stmt::Gemm {
                a: self.region(a)?,
                b: self.region(b)?,
                c: self.region(c)?,
                transpose_a,
                transpose_b,
                policy,
                clear_accum: self.simp(clear_accum)?,
            },
            Stmt::Fill { dst, value } => Stmt::Fill {
                dst: self.region(dst)?,
                value: self.simp(value)?,
            },
            Stmt::AtomicAdd { dst, value } => Stmt::AtomicAdd {
                dst: self.region(dst)?,
                value: match value {
                    crate::ir::AtomicValue::Scalar(e) => {
                        crate::ir::AtomicValue::Scalar(self.simp(e)?)
                    }
                    crate::ir::AtomicValue::Region(r) => {
                        crate::ir::AtomicValue::Region(self.region(r)?)
                    }
                },
            },
            Stmt::Atomic { op, dst, value } => Stmt::Atomic {
                op,
                dst: self.region(dst)?,
                value: match value {
                    crate::ir::AtomicValue::Scalar(e) => {
                        crate::ir::AtomicValue::Scalar(self.simp(e)?)
                    }
                    crate::ir::AtomicValue::Region(r) => {
                        crate::ir::AtomicValue::Region(self.region(r)?)
                    }
                },
            },
            Stmt::DeviceAssert { cond } => Stmt::DeviceAssert {
                cond: self.simp(cond)?,
            },
            Stmt::Assume { cond } => {
                let cond = self.simp(cond)?;
                if self.literal(cond) == Some(Literal::Bool(true)) {
                    return Ok(());
                }
                out.push(Stmt::Assume { cond }, span);
                // The fact holds for the rest of the enclosing block.
                return self.assume(cond, true);
            }
            stmt @ (Stmt::Reduce { .. }
            | Stmt::Cumsum { .. }
            | Stmt::Barrier
            | Stmt::AllocBarrier { .. }) => stmt,
            Stmt::Role { groups, body } => Stmt::Role {
                groups,
                body: self.block(body)?,
            },
            Stmt::BarrierArrive { barrier, index } => Stmt::BarrierArrive {
                barrier,
                index: self.simp(index)?,
            },
            Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => Stmt::BarrierWait {
                barrier,
                index: self.simp(index)?,
                parity: self.simp(parity)?,
            },
        };
        out.push(stmt, span);
        Ok(())
    }

    /// Simplified indices of an access to `buffer`. Inside a `parallel`
    /// nest, an index of a fragment keeps its original form when
    /// simplifying would leave it without a parallel variable (the
    /// verifier's fragment rule).
    fn indices(
        &mut self,
        buffer: Handle<crate::ir::Buffer>,
        indices: Vec<Handle<Expr>>,
    ) -> Result<Vec<Handle<Expr>>, SimplifyError> {
        let guarded = !self.parallel_vars.is_empty()
            && self
                .f
                .buffers
                .try_get(buffer)
                .is_some_and(|b| b.scope == Scope::Fragment);
        let mut out = Vec::with_capacity(indices.len());
        for (dim, index) in indices.into_iter().enumerate() {
            let simplified = self.simp(index)?;
            if guarded && !self.mentions_parallel(simplified) {
                let unit_dim = self
                    .f
                    .buffers
                    .try_get(buffer)
                    .and_then(|b| b.shape.get(dim).copied())
                    .and_then(|e| self.int_value(e))
                    == Some(1);
                let literal_zero = self.int_value(simplified) == Some(0);
                if !(unit_dim && literal_zero) {
                    out.push(index);
                    continue;
                }
            }
            out.push(simplified);
        }
        Ok(out)
    }

    fn mentions_parallel(&self, h: Handle<Expr>) -> bool {
        let mut stack = vec![h];
        let mut seen = std::collections::HashSet::new();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            match self.f.exprs.try_get(h) {
                Some(Expr::Var(v)) if self.parallel_vars.contains(v) => return true,
                Some(e) => stack.extend(expr_operands(e)),
                None => {}
            }
        }
        false
    }

    // ---- Expressions ------------------------------------------------------

    /// The canonical form of `e` in the current context.
    fn simp(&mut self, e: Handle<Expr>) -> Result<Handle<Expr>, SimplifyError> {
        if let Some(&h) = self.memo.get(&e) {
            return Ok(h);
        }
        if self.too_deep(e) {
            self.node(e)?;
            return Ok(e);
        }
        let ty = self.ty(e)?;
        let result = if ty.is_int() {
            let lin = self.lin(e)?;
            self.build(&lin, ty)?
        } else if ty.is_bool() {
            self.simp_bool(e)?
        } else {
            self.simp_other(e)?
        };
        self.memo.insert(e, result);
        Ok(result)
    }

    /// The affine form of the integer expression `e` (original or
    /// canonical).
    fn lin(&mut self, e: Handle<Expr>) -> Result<Lin, SimplifyError> {
        if let Some(l) = self.lin_memo.get(&e) {
            return Ok(l.clone());
        }
        let ty = self.ty(e)?;
        let bits = ty.bits();
        let lin = if self.too_deep(e) {
            Lin::atom(bits, e)
        } else {
            match self.node(e)? {
                Expr::Literal(Literal::Int(v, t)) => Lin::constant(bits, math(v, t)),
                Expr::Binary {
                    op: BinaryOp::Add,
                    lhs,
                    rhs,
                } => self.lin(lhs)?.add(&self.lin(rhs)?),
                Expr::Binary {
                    op: BinaryOp::Sub,
                    lhs,
                    rhs,
                } => self.lin(lhs)?.sub(&self.lin(rhs)?),
                Expr::Unary {
                    op: UnaryOp::Neg,
                    arg,
                } => self.lin(arg)?.scale(-1),
                Expr::Binary {
                    op: BinaryOp::Mul,
                    lhs,
                    rhs,
                } => {
                    let l = self.lin(lhs)?;
                    let r = self.lin(rhs)?;
                    if let Some(k) = l.as_constant() {
                        r.scale(k)
                    } else if let Some(k) = r.as_constant() {
                        l.scale(k)
                    } else {
                        let a = self.build(&l, ty)?;
                        let b = self.build(&r, ty)?;
                        let (a, b) = self.ordered(a, b);
                        Lin::atom(bits, self.mk_binary(BinaryOp::Mul, a, b)?)
                    }
                }
                _ => {
                    let h = self.simp_atom(e, ty)?;
                    self.decompose(h)?
                }
            }
        };
        self.lin_memo.insert(e, lin.clone());
        Ok(lin)
    }

    /// The affine form of a canonical integer expression, read off its
    /// structure without simplifying its atoms again.
    fn decompose(&mut self, h: Handle<Expr>) -> Result<Lin, SimplifyError> {
        if let Some(l) = self.canon_memo.get(&h) {
            return Ok(l.clone());
        }
        let bits = self.ty(h)?.bits();
        let lin = if self.too_deep(h) {
            Lin::atom(bits, h)
        } else {
            match self.node(h)? {
                Expr::Literal(Literal::Int(v, t)) => Lin::constant(bits, math(v, t)),
                Expr::Binary {
                    op: BinaryOp::Add,
                    lhs,
                    rhs,
                } => self.decompose(lhs)?.add(&self.decompose(rhs)?),
                Expr::Binary {
                    op: BinaryOp::Sub,
                    lhs,
                    rhs,
                } => self.decompose(lhs)?.sub(&self.decompose(rhs)?),
                Expr::Unary {
                    op: UnaryOp::Neg,
                    arg,
                } => self.decompose(arg)?.scale(-1),
                Expr::Binary {
                    op: BinaryOp::Mul,
                    lhs,
                    rhs,
                } if self.int_value(lhs).is_some() || self.int_value(rhs).is_some() => {
                    let l = self.decompose(lhs)?;
                    let r = self.decompose(rhs)?;
                    match (l.as_constant(), r.as_constant()) {
                        (Some(k), _) => r.scale(k),
                        (_, Some(k)) => l.scale(k),
                        _ => Lin::atom(bits, h),
                    }
                }
                _ => Lin::atom(bits, h),
            }
        };
        self.canon_memo.insert(h, lin.clone());
        Ok(lin)
    }

    /// Operands of a commutative operator in canonical order.
    fn ordered(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> (Handle<Expr>, Handle<Expr>) {
        if self.cmp_atoms(a, b) == Ordering::Greater {
            (b, a)
        } else {
            (a, b)
        }
    }

    /// The canonical expression of an affine form of type `ty`.
    fn build(&mut self, lin: &Lin, ty: DType) -> Result<Handle<Expr>, SimplifyError> {
        let lin = self.recombine(lin)?;
        if lin.terms.is_empty() {
            return self.mk_lit(int_literal(ty, lin.konst));
        }
        let max = type_range(ty).hi;
        let mut terms = lin.terms.clone();
        terms.sort_by(|a, b| self.cmp_atoms(a.0, b.0));
        let mut positive = Vec::new();
        let mut negative = Vec::new();
        for (atom, c) in terms {
            if c < 0 && -c <= max {
                negative.push((atom, -c));
            } else {
                positive.push((atom, c));
            }
        }
        let mut acc: Option<Handle<Expr>> = None;
        for (atom, c) in positive {
            let term = self.term(atom, c, ty)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.mk_binary(BinaryOp::Add, a, term)?,
            });
        }
        let mut konst = lin.konst;
        for (atom, c) in negative {
            acc = Some(match acc {
                Some(a) => {
                    let term = self.term(atom, c, ty)?;
                    self.mk_binary(BinaryOp::Sub, a, term)?
                }
                None if konst != 0 => {
                    let k = self.mk_lit(int_literal(ty, konst))?;
                    konst = 0;
                    let term = self.term(atom, c, ty)?;
                    self.mk_binary(BinaryOp::Sub, k, term)?
                }
                None if c == 1 => self.mk(Expr::Unary {
                    op: UnaryOp::Neg,
                    arg: atom,
                })?,
                None if ty.kind() == DTypeKind::Signed => self.term(atom, -c, ty)?,
                None => {
                    let term = self.term(atom, c, ty)?;
                    self.mk(Expr::Unary {
                        op: UnaryOp::Neg,
                        arg: term,
                    })?
                }
            });
        }
        let Some(mut acc) = acc else {
            return self.mk_lit(int_literal(ty, konst));
        };
        if konst > 0 || (konst < 0 && -konst > max) {
            let k = self.mk_lit(int_literal(ty, konst))?;
            acc = self.mk_binary(BinaryOp::Add, acc, k)?;
        } else if konst < 0 {
            let k = self.mk_lit(int_literal(ty, -konst))?;
            acc = self.mk_binary(BinaryOp::Sub, acc, k)?;
        }
        Ok(acc)
    }

    /// `atom * c` (just `atom` for 1).
    fn term(
        &mut self,
        atom: Handle<Expr>,
        c: i128,
        ty: DType,
    ) -> Result<Handle<Expr>, SimplifyError> {
        if c == 1 {
            return Ok(atom);
        }
        let k = self.mk_lit(int_literal(ty, c))?;
        self.mk_binary(BinaryOp::Mul, atom, k)
    }

    /// Replaces `k·c·(x // c) + k·(x % c)` by `k·x` for constants `c > 0`,
    /// which holds for every stored `x` since `x = (x // c)·c + x % c`
    /// exactly.
    fn recombine(&mut self, lin: &Lin) -> Result<Lin, SimplifyError> {
        let mut lin = lin.clone();
        'again: loop {
            for &(atom, k) in &lin.terms {
                let Expr::Binary {
                    op: BinaryOp::FloorMod,
                    lhs: x,
                    rhs: c,
                } = self.node(atom)?
                else {
                    continue;
                };
                let Some(cv) = self.int_value(c).filter(|&v| v > 0) else {
                    continue;
                };
                let div = Key::Binary(BinaryOp::FloorDiv, x, c);
                let Some(&div) = self.intern.get(&div) else {
                    continue;
                };
                let bits = lin.bits;
                let kc = ring(k * ring(cv, bits), bits);
                if lin.coefficient(div) != kc {
                    continue;
                }
                let parts = Lin::atom(bits, div)
                    .scale(kc)
                    .add(&Lin::atom(bits, atom).scale(k));
                let x_lin = self.decompose(x)?.scale(k);
                lin = lin.sub(&parts).add(&x_lin);
                continue 'again;
            }
            return Ok(lin);
        }
    }

    /// `lin` and the range of its mathematical value, when that value is
    /// the stored value of the expression: when every value lies within
    /// `ty`. With `shift`, the constant may also move by ±2^bits (the same
    /// element of the ring), which helps unsigned types, whose constants
    /// are kept as signed representatives.
    fn fit(
        &mut self,
        lin: &Lin,
        ty: DType,
        shift: bool,
    ) -> Result<Option<(Lin, Interval)>, SimplifyError> {
        let mut terms = Interval::point(0);
        for &(atom, c) in &lin.terms {
            let r = self.range(atom)?;
            let Some(next) = r.scale(c).and_then(|t| terms.add(t)) else {
                return Ok(None);
            };
            terms = next;
        }
        let full = type_range(ty);
        let modulus = 1i128 << lin.bits;
        let shifts: &[i128] = if shift { &[0, modulus, -modulus] } else { &[0] };
        for &by in shifts {
            let konst = lin.konst + by;
            if let Some(r) = terms.add(Interval::point(konst))
                && r.within(full)
            {
                let mut fitted = lin.clone();
                fitted.konst = konst;
                return Ok(Some((fitted, r)));
            }
        }
        Ok(None)
    }

    /// The range of the stored value of a canonical expression.
    fn range(&mut self, h: Handle<Expr>) -> Result<Interval, SimplifyError> {
        if let Some(&r) = self.range_memo.get(&h) {
            return Ok(r);
        }
        let ty = self.ty(h)?;
        let full = type_range(ty);
        let r = if self.too_deep(h) {
            full
        } else {
            // A range beyond the type means the value wrapped.
            self.compute_range(h, ty)?
                .filter(|r| r.within(full))
                .unwrap_or(full)
        };
        self.range_memo.insert(h, r);
        Ok(r)
    }

    fn compute_range(
        &mut self,
        h: Handle<Expr>,
        ty: DType,
    ) -> Result<Option<Interval>, SimplifyError> {
        if !ty.is_int() && !ty.is_bool() {
            return Ok(None);
        }
        Ok(match self.node(h)? {
            Expr::Literal(Literal::Int(v, t)) => Some(Interval::point(math(v, t))),
            Expr::Literal(Literal::Bool(b)) => Some(Interval::point(i128::from(b))),
            Expr::Literal(Literal::Float(..)) => None,
            Expr::Var(v) => self.ranges.get(&v).copied(),
            Expr::Binary {
                op: BinaryOp::Add | BinaryOp::Sub,
                ..
            }
            | Expr::Unary {
                op: UnaryOp::Neg, ..
            } => {
                let lin = self.decompose(h)?;
                self.fit(&lin, ty, true)?.map(|(_, r)| r)
            }
            Expr::Binary { op, lhs, rhs } => {
                if op.is_comparison() || op.is_logical() || ty.is_bool() {
                    return Ok(Some(Interval { lo: 0, hi: 1 }));
                }
                let ra = self.range(lhs)?;
                let rb = self.range(rhs)?;
                let d = self.int_value(rhs);
                match op {
                    BinaryOp::Mul => ra.mul(rb),
                    BinaryOp::FloorDiv if rb.lo > 0 => {
                        let c = [
                            floor_div(ra.lo, rb.lo),
                            floor_div(ra.lo, rb.hi),
                            floor_div(ra.hi, rb.lo),
                            floor_div(ra.hi, rb.hi),
                        ];
                        Some(Interval {
                            lo: c.iter().copied().min().unwrap_or(0),
                            hi: c.iter().copied().max().unwrap_or(0),
                        })
                    }
                    BinaryOp::Div if rb.lo > 0 => {
                        let c = [ra.lo / rb.lo, ra.lo / rb.hi, ra.hi / rb.lo, ra.hi / rb.hi];
                        Some(Interval {
                            lo: c.iter().copied().min().unwrap_or(0),
                            hi: c.iter().copied().max().unwrap_or(0),
                        })
                    }
                    BinaryOp::FloorMod => match d {
                        Some(d) if d > 0 => {
                            let q = floor_div(ra.lo, d);
                            if q == floor_div(ra.hi, d) {
                                Some(Interval {
                                    lo: ra.lo - q * d,
                                    hi: ra.hi - q * d,
                                })
                            } else {
                                Some(Interval { lo: 0, hi: d - 1 })
                            }
                        }
                        _ if rb.lo > 0 => {
                            if ra.lo >= 0 && ra.hi < rb.lo {
                                Some(ra)
                            } else {
                                Some(Interval {
                                    lo: 0,
                                    hi: rb.hi - 1,
                                })
                            }
                        }
                        _ if rb.hi < 0 => Some(Interval {
                            lo: rb.lo + 1,
                            hi: 0,
                        }),
                        _ => None,
                    },
                    BinaryOp::Min => Some(Interval {
                        lo: ra.lo.min(rb.lo),
                        hi: ra.hi.min(rb.hi),
                    }),
                    BinaryOp::Max => Some(Interval {
                        lo: ra.lo.max(rb.lo),
                        hi: ra.hi.max(rb.hi),
                    }),
                    BinaryOp::BitAnd if ra.lo >= 0 || rb.lo >= 0 => {
                        let mut hi = i128::MAX;
                        if ra.lo >= 0 {
                            hi = hi.min(ra.hi);
                        }
                        if rb.lo >= 0 {
                            hi = hi.min(rb.hi);
                        }
                        Some(Interval { lo: 0, hi })
                    }
                    BinaryOp::Shr if ra.lo >= 0 && rb.lo >= 0 && rb.hi < i128::from(ty.bits()) => {
                        Some(Interval {
                            lo: ra.lo >> rb.hi,
                            hi: ra.hi >> rb.lo,
                        })
                    }
                    _ => None,
                }
            }
            Expr::Select {
                then, otherwise, ..
            } => {
                let a = self.range(then)?;
                let b = self.range(otherwise)?;
                Some(a.union(b))
            }
            Expr::Cast { arg, .. } => {
                let from = self.ty(arg)?;
                if from.is_int() || from.is_bool() {
                    let r = self.range(arg)?;
                    r.within(type_range(ty)).then_some(r)
                } else {
                    None
                }
            }
            Expr::Unary {
                op: UnaryOp::Abs,
                arg,
            } if ty.kind() == DTypeKind::Signed => {
                let r = self.range(arg)?;
                let lo = if r.lo <= 0 && r.hi >= 0 {
                    0
                } else {
                    r.lo.abs().min(r.hi.abs())
                };
                Some(Interval {
                    lo,
                    hi: r.lo.abs().max(r.hi.abs()),
                })
            }
            Expr::Unary { .. } | Expr::Load { .. } => {
                ty.is_bool().then_some(Interval { lo: 0, hi: 1 })
            }
            Expr::Bitcast { .. } => None,
        })
    }

    /// Order of atoms in a sum: by the first variable they mention (in
    /// binding order), then structurally.
    fn cmp_atoms(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Ordering {
        if a == b {
            return Ordering::Equal;
        }
        let (va, vb) = (self.first_var(a), self.first_var(b));
        va.cmp(&vb)
            .then_with(|| self.cmp_struct(a, b))
            .then_with(|| a.cmp(&b))
    }

    fn first_var(&mut self, h: Handle<Expr>) -> usize {
        if let Some(&v) = self.min_var.get(&h) {
            return v;
        }
        let v = if self.too_deep(h) {
            usize::MAX
        } else {
            match self.f.exprs.try_get(h).cloned() {
                Some(Expr::Var(v)) => v.index(),
                Some(e) => expr_operands(&e)
                    .into_iter()
                    .map(|o| self.first_var(o))
                    .min()
                    .unwrap_or(usize::MAX),
                None => usize::MAX,
            }
        };
        self.min_var.insert(h, v);
        v
    }

    /// A total structural order on expressions.
    fn cmp_struct(&self, a: Handle<Expr>, b: Handle<Expr>) -> Ordering {
        if a == b {
            return Ordering::Equal;
        }
        if self.too_deep(a) || self.too_deep(b) {
            return a.cmp(&b);
        }
        let (Some(ea), Some(eb)) = (self.f.exprs.try_get(a), self.f.exprs.try_get(b)) else {
            return a.cmp(&b);
        };
        fn rank(e: &Expr) -> u8 {
            match e {
                Expr::Literal(_) => 0,
                Expr::Var(_) => 1,
                Expr::Load { .. } => 2,
                Expr::Unary { .. } => 3,
                Expr::Binary { .. } => 4,
                Expr::Select { .. } => 5,
                Expr::Cast { .. } => 6,
                Expr::Bitcast { .. } => 7,
            }
        }
        let by_operands = |x: &[Handle<Expr>], y: &[Handle<Expr>]| {
            for (p, q) in x.iter().zip(y) {
                let o = self.cmp_struct(*p, *q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        };
        rank(ea).cmp(&rank(eb)).then_with(|| match (ea, eb) {
            (Expr::Literal(x), Expr::Literal(y)) => x
                .dtype()
                .cmp(&y.dtype())
                .then_with(|| x.as_f64().total_cmp(&y.as_f64())),
            (Expr::Var(x), Expr::Var(y)) => x.cmp(y),
            (
                Expr::Load {
                    buffer: x,
                    indices: xi,
                },
                Expr::Load {
                    buffer: y,
                    indices: yi,
                },
            ) => x.cmp(y).then_with(|| by_operands(xi, yi)),
            (Expr::Unary { op: x, arg: xa }, Expr::Unary { op: y, arg: ya }) => (*x as u8)
                .cmp(&(*y as u8))
                .then_with(|| self.cmp_struct(*xa, *ya)),
            (
                Expr::Binary {
                    op: x,
                    lhs: xl,
                    rhs: xr,
                },
                Expr::Binary {
                    op: y,
                    lhs: yl,
                    rhs: yr,
                },
            ) => (*x as u8)
                .cmp(&(*y as u8))
                .then_with(|| by_operands(&[*xl, *xr], &[*yl, *yr])),
            (
                Expr::Select {
                    cond: xc,
                    then: xt,
                    otherwise: xo,
                },
                Expr::Select {
                    cond: yc,
                    then: yt,
                    otherwise: yo,
                },
            ) => by_operands(&[*xc, *xt, *xo], &[*yc, *yt, *yo]),
            (Expr::Cast { dtype: x, arg: xa }, Expr::Cast { dtype: y, arg: ya })
            | (Expr::Bitcast { dtype: x, arg: xa }, Expr::Bitcast { dtype: y, arg: ya }) => {
                x.cmp(y).then_with(|| self.cmp_struct(*xa, *ya))
            }
            _ => a.cmp(&b),
        })
    }

    /// A non-affine integer expression, simplified (the result may be
    /// affine again, as `(x * 4 + y) // 4 → x + y // 4`).
    fn simp_atom(&mut self, e: Handle<Expr>, ty: DType) -> Result<Handle<Expr>, SimplifyError> {
        match self.node(e)? {
            Expr::Var(v) => self.mk(Expr::Var(v)),
            Expr::Load { buffer, indices } => {
                let indices = self.indices(buffer, indices)?;
                self.mk(Expr::Load { buffer, indices })
            }
            Expr::Cast { dtype, arg } => self.simp_cast(dtype, arg),
            Expr::Bitcast { dtype, arg } => self.simp_bitcast(dtype, arg),
            Expr::Select {
                cond,
                then,
                otherwise,
            } => self.simp_select(cond, then, otherwise),
            Expr::Binary { op, lhs, rhs } => match op {
                BinaryOp::FloorDiv | BinaryOp::FloorMod | BinaryOp::Div => {
                    self.simp_division(op, lhs, rhs, ty)
                }
                BinaryOp::Min | BinaryOp::Max => {
                    let a = self.simp(lhs)?;
                    let b = self.simp(rhs)?;
                    if a == b {
                        return Ok(a);
                    }
                    if let (Some(Literal::Int(x, _)), Some(Literal::Int(y, _))) =
                        (self.literal(a), self.literal(b))
                        && let Some(l) = fold_int(op, ty, x, y)
                    {
                        return self.mk_lit(l);
                    }
                    let (ra, rb) = (self.range(a)?, self.range(b)?);
                    let a_smaller = if ra.hi <= rb.lo {
                        Some(true)
                    } else if rb.hi <= ra.lo {
                        Some(false)
                    } else {
                        None
                    };
                    match (op, a_smaller) {
                        (BinaryOp::Min, Some(true)) | (BinaryOp::Max, Some(false)) => Ok(a),
                        (BinaryOp::Min, Some(false)) | (BinaryOp::Max, Some(true)) => Ok(b),
                        _ => {
                            let (a, b) = self.ordered(a, b);
                            self.mk_binary(op, a, b)
                        }
                    }
                }
                _ => {
                    let a = self.simp(lhs)?;
                    let b = self.simp(rhs)?;
                    if let (Some(Literal::Int(x, _)), Some(Literal::Int(y, _))) =
                        (self.literal(a), self.literal(b))
                        && let Some(l) = fold_int(op, ty, x, y)
                    {
                        return self.mk_lit(l);
                    }
                    self.mk_binary(op, a, b)
                }
            },
            Expr::Unary { op, arg } => {
                let a = self.simp(arg)?;
                if let Some(Literal::Int(x, _)) = self.literal(a) {
                    let folded = match op {
                        UnaryOp::BitNot => Some(ty.wrap_i64(!x)),
                        UnaryOp::Abs if ty.kind() == DTypeKind::Signed => {
                            Some(ty.wrap_i64(x.wrapping_abs()))
                        }
                        UnaryOp::Abs => Some(x),
                        _ => None,
                    };
                    if let Some(v) = folded {
                        return self.mk_lit(Literal::Int(v, ty));
                    }
                }
                if op == UnaryOp::Abs && self.range(a)?.lo >= 0 {
                    return Ok(a);
                }
                self.mk(Expr::Unary { op, arg: a })
            }
            // Literals and affine operators are handled by `lin`.
            Expr::Literal(l) => self.mk_lit(l),
        }
    }

    fn simp_cast(
        &mut self,
        dtype: DType,
        arg: Handle<Expr>,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let a = self.simp(arg)?;
        let from = self.ty(a)?;
        if from == dtype {
            return Ok(a);
        }
        match self.literal(a) {
            Some(Literal::Int(v, _)) if dtype.is_int() => {
                return self.mk_lit(Literal::Int(dtype.wrap_i64(v), dtype));
            }
            Some(Literal::Int(v, t)) if dtype.is_bool() => {
                return self.mk_bool(math(v, t) != 0);
            }
            Some(Literal::Bool(b)) if dtype.is_int() => {
                return self.mk_lit(Literal::Int(i64::from(b), dtype));
            }
            _ => {}
        }
        // cast<T>(cast<S>(x)) with x: T and S holding every T value.
        if let Expr::Cast { arg: inner, .. } = self.node(a)?
            && self.ty(inner)? == dtype
            && dtype.is_int()
            && from.is_int()
            && type_range(dtype).within(type_range(from))
        {
            return Ok(inner);
        }
        self.mk(Expr::Cast { dtype, arg: a })
    }

    fn simp_select(
        &mut self,
        cond: Handle<Expr>,
        then: Handle<Expr>,
        otherwise: Handle<Expr>,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let c = self.simp(cond)?;
        match self.literal(c) {
            Some(Literal::Bool(true)) => return self.simp(then),
            Some(Literal::Bool(false)) => return self.simp(otherwise),
            _ => {}
        }
        let t = self.simp(then)?;
        let o = self.simp(otherwise)?;
        if t == o {
            return Ok(t);
        }
        self.mk(Expr::Select {
            cond: c,
            then: t,
            otherwise: o,
        })
    }

    /// `//`, `%` and `/` on integers (see the module documentation).
    fn simp_division(
        &mut self,
        op: BinaryOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
        ty: DType,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let b = self.simp(rhs)?;
        let la = self.lin(lhs)?;
        let keep = |s: &mut Self, la: &Lin| -> Result<Handle<Expr>, SimplifyError> {
            let a = s.build(la, ty)?;
            if let (Some(Literal::Int(x, _)), Some(Literal::Int(y, _))) =
                (s.literal(a), s.literal(b))
                && let Some(l) = fold_int(op, ty, x, y)
            {
                return s.mk_lit(l);
            }
            s.mk_binary(op, a, b)
        };
        let Some(d) = self.int_value(b) else {
            return keep(self, &la);
        };
        if d == 1 || (d == -1 && ty.kind() == DTypeKind::Signed) {
            // x // 1 == x / 1 == x, x % ±1 == 0 for every stored x.
            return match op {
                BinaryOp::FloorMod => self.mk_lit(int_literal(ty, 0)),
                _ if d == 1 => self.build(&la, ty),
                _ => keep(self, &la),
            };
        }
        if d <= 0 {
            return keep(self, &la);
        }
        // Nested division and modulo by constants.
        if la.konst == 0
            && let [(atom, 1)] = la.terms[..]
            && let Expr::Binary {
                op: inner_op,
                lhs: x,
                rhs: a,
            } = self.node(atom)?
            && let Some(av) = self.int_value(a).filter(|&v| v > 0)
        {
            if op == BinaryOp::FloorDiv
                && inner_op == BinaryOp::FloorDiv
                && let Some(product) = av.checked_mul(d).filter(|&p| p <= type_range(ty).hi)
            {
                let x_lin = self.decompose(x)?;
                return self.divide(BinaryOp::FloorDiv, &x_lin, product, ty);
            }
            if op == BinaryOp::FloorMod && inner_op == BinaryOp::FloorMod && av % d == 0 {
                let x_lin = self.decompose(x)?;
                return self.divide(BinaryOp::FloorMod, &x_lin, d, ty);
            }
        }
        if op == BinaryOp::Div {
            // Truncation is floor division for a non-negative numerator.
            return match self.fit(&la, ty, true)? {
                Some((_, r)) if r.lo >= 0 => self.divide(BinaryOp::FloorDiv, &la, d, ty),
                _ => keep(self, &la),
            };
        }
        self.divide(op, &la, d, ty)
    }

    /// `la // d` or `la % d` for a constant `d > 0`, split as described in
    /// the module documentation.
    fn divide(
        &mut self,
        op: BinaryOp,
        la: &Lin,
        d: i128,
        ty: DType,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let bits = la.bits;
        let divisor = self.mk_lit(int_literal(ty, d))?;
        let keep = |s: &mut Self| -> Result<Handle<Expr>, SimplifyError> {
            let a = s.build(la, ty)?;
            if let (Some(Literal::Int(x, _)), Some(Literal::Int(y, _))) =
                (s.literal(a), s.literal(divisor))
                && let Some(l) = fold_int(op, ty, x, y)
            {
                return s.mk_lit(l);
            }
            s.mk_binary(op, a, divisor)
        };
        // The numerator's stored value must be the mathematical value of
        // `la` (after choosing its constant).
        let Some((la, _)) = self.fit(la, ty, true)? else {
            return keep(self);
        };
        let mut quotient = Lin::constant(bits, floor_div(la.konst, d));
        let mut rest = Lin::constant(bits, la.konst.rem_euclid(d));
        for &(atom, c) in &la.terms {
            let t = Lin::atom(bits, atom);
            if c % d == 0 {
                quotient = quotient.add(&t.scale(c / d));
            } else {
                rest = rest.add(&t.scale(c));
            }
        }
        // No shift here: `rest` must be exactly what remains of `la`. Its
        // constant is taken unreduced (`Lin` keeps constants modulo 2^bits,
        // where `254` in `u8` reads as `-2`).
        let exact = Lin {
            konst: la.konst.rem_euclid(d),
            ..rest.clone()
        };
        let Some((_, r)) = self.fit(&exact, ty, false)? else {
            return keep(self);
        };
        let (q_lo, q_hi) = (floor_div(r.lo, d), floor_div(r.hi, d));
        let result = match op {
            BinaryOp::FloorDiv => {
                if q_lo == q_hi {
                    quotient.add(&Lin::constant(bits, q_lo))
                } else {
                    let r = self.build(&rest, ty)?;
                    let div = self.mk_binary(BinaryOp::FloorDiv, r, divisor)?;
                    quotient.add(&Lin::atom(bits, div))
                }
            }
            _ => {
                if q_lo == q_hi {
                    rest.add(&Lin::constant(bits, -q_lo * d))
                } else {
                    let r = self.build(&rest, ty)?;
                    let m = self.mk_binary(BinaryOp::FloorMod, r, divisor)?;
                    Lin::atom(bits, m)
                }
            }
        };
        self.build(&result, ty)
    }

    /// A bool expression.
    fn simp_bool(&mut self, e: Handle<Expr>) -> Result<Handle<Expr>, SimplifyError> {
        match self.node(e)? {
            Expr::Literal(l) => self.mk_lit(l),
            Expr::Var(v) => self.mk(Expr::Var(v)),
            Expr::Load { buffer, indices } => {
                let indices = self.indices(buffer, indices)?;
                self.mk(Expr::Load { buffer, indices })
            }
            Expr::Cast { dtype, arg } => self.simp_cast(dtype, arg),
            Expr::Bitcast { dtype, arg } => self.simp_bitcast(dtype, arg),
            Expr::Select {
                cond,
                then,
                otherwise,
            } => self.simp_select(cond, then, otherwise),
            Expr::Unary {
                op: UnaryOp::Not,
                arg,
            } => {
                let a = self.simp(arg)?;
                self.not(a)
            }
            Expr::Unary { op, arg } => {
                let a = self.simp(arg)?;
                self.mk(Expr::Unary { op, arg: a })
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.simp(lhs)?;
                let b = self.simp(rhs)?;
                let operand = self.ty(a)?;
                if operand.is_bool() {
                    self.bool_binary(op, a, b)
                } else if operand.is_int() && op.is_comparison() {
                    self.compare(op, a, b, operand)
                } else {
                    self.mk_binary(op, a, b)
                }
            }
        }
    }

    /// `!a` for a canonical bool `a`.
    fn not(&mut self, a: Handle<Expr>) -> Result<Handle<Expr>, SimplifyError> {
        if let Some(Literal::Bool(b)) = self.literal(a) {
            return self.mk_bool(!b);
        }
        match self.node(a)? {
            Expr::Unary {
                op: UnaryOp::Not,
                arg,
            } => Ok(arg),
            Expr::Binary { op, lhs, rhs }
                if op.is_comparison() && {
                    let t = self.ty(lhs)?;
                    t.is_int() || t.is_bool()
                } =>
            {
                match negate_comparison(op) {
                    Some(neg) => self.mk_binary(neg, lhs, rhs),
                    None => self.mk(Expr::Unary {
                        op: UnaryOp::Not,
                        arg: a,
                    }),
                }
            }
            _ => self.mk(Expr::Unary {
                op: UnaryOp::Not,
                arg: a,
            }),
        }
    }

    /// A binary operator on two canonical bools.
    fn bool_binary(
        &mut self,
        op: BinaryOp,
        a: Handle<Expr>,
        b: Handle<Expr>,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let la = match self.literal(a) {
            Some(Literal::Bool(x)) => Some(x),
            _ => None,
        };
        let lb = match self.literal(b) {
            Some(Literal::Bool(x)) => Some(x),
            _ => None,
        };
        match op {
            BinaryOp::And | BinaryOp::BitAnd => match (la, lb) {
                (Some(true), _) => Ok(b),
                (_, Some(true)) => Ok(a),
                (Some(false), _) | (_, Some(false)) => self.mk_bool(false),
                _ if a == b => Ok(a),
                _ => self.mk_binary(op, a, b),
            },
            BinaryOp::Or | BinaryOp::BitOr => match (la, lb) {
                (Some(false), _) => Ok(b),
                (_, Some(false)) => Ok(a),
                (Some(true), _) | (_, Some(true)) => self.mk_bool(true),
                _ if a == b => Ok(a),
                _ => self.mk_binary(op, a, b),
            },
            BinaryOp::BitXor | BinaryOp::Ne => match (la, lb) {
                (Some(x), Some(y)) => self.mk_bool(x != y),
                (Some(false), _) => Ok(b),
                (_, Some(false)) => Ok(a),
                (Some(true), _) => self.not(b),
                (_, Some(true)) => self.not(a),
                _ if a == b => self.mk_bool(false),
                _ => self.mk_binary(op, a, b),
            },
            BinaryOp::Eq => match (la, lb) {
                (Some(x), Some(y)) => self.mk_bool(x == y),
                (Some(true), _) => Ok(b),
                (_, Some(true)) => Ok(a),
                (Some(false), _) => self.not(b),
                (_, Some(false)) => self.not(a),
                _ if a == b => self.mk_bool(true),
                _ => self.mk_binary(op, a, b),
            },
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => match (la, lb) {
                (Some(x), Some(y)) => {
                    let v = decide(
                        op,
                        Interval::point(i128::from(x)),
                        Interval::point(i128::from(y)),
                    );
                    match v {
                        Some(v) => self.mk_bool(v),
                        None => self.mk_binary(op, a, b),
                    }
                }
                _ => self.mk_binary(op, a, b),
            },
            _ => self.mk_binary(op, a, b),
        }
    }

    /// A comparison of two canonical integers of type `ty`.
    fn compare(
        &mut self,
        op: BinaryOp,
        a: Handle<Expr>,
        b: Handle<Expr>,
        ty: DType,
    ) -> Result<Handle<Expr>, SimplifyError> {
        if a == b {
            return self.mk_bool(matches!(op, BinaryOp::Eq | BinaryOp::Le | BinaryOp::Ge));
        }
        if let (Some(Literal::Int(x, _)), Some(Literal::Int(y, _))) =
            (self.literal(a), self.literal(b))
            && let Some(l) = fold_int(op, ty, x, y)
        {
            return self.mk_lit(l);
        }
        let (ra, rb) = (self.range(a)?, self.range(b)?);
        if let Some(v) = decide(op, ra, rb) {
            return self.mk_bool(v);
        }
        // The exact difference, when neither side wraps.
        let (la, lb) = (self.decompose(a)?, self.decompose(b)?);
        if let (Some((la, _)), Some((lb, _))) = (self.fit(&la, ty, true)?, self.fit(&lb, ty, true)?)
        {
            let mut diff = Interval::point(la.konst - lb.konst);
            let mut ok = true;
            let mut coefficients: std::collections::BTreeMap<Handle<Expr>, i128> =
                std::collections::BTreeMap::new();
            for &(atom, c) in &la.terms {
                *coefficients.entry(atom).or_insert(0) += c;
            }
            for &(atom, c) in &lb.terms {
                *coefficients.entry(atom).or_insert(0) -= c;
            }
            for (atom, c) in coefficients {
                if c == 0 {
                    continue;
                }
                let r = self.range(atom)?;
                match r.scale(c).and_then(|t| diff.add(t)) {
                    Some(next) => diff = next,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && let Some(v) = decide(op, diff, Interval::point(0)) {
                return self.mk_bool(v);
            }
        }
        self.mk_binary(op, a, b)
    }

    /// A bit cast: its operand simplified; none when the types agree.
    fn simp_bitcast(
        &mut self,
        dtype: DType,
        arg: Handle<Expr>,
    ) -> Result<Handle<Expr>, SimplifyError> {
        let a = self.simp(arg)?;
        if self.ty(a)? == dtype {
            return Ok(a);
        }
        self.mk(Expr::Bitcast { dtype, arg: a })
    }

    /// A float (or other non-integer, non-bool) expression: only its
    /// operands are simplified.
    fn simp_other(&mut self, e: Handle<Expr>) -> Result<Handle<Expr>, SimplifyError> {
        match self.node(e)? {
            Expr::Literal(l) => self.mk_lit(l),
            Expr::Var(v) => self.mk(Expr::Var(v)),
            Expr::Load { buffer, indices } => {
                let indices = self.indices(buffer, indices)?;
                self.mk(Expr::Load { buffer, indices })
            }
            Expr::Cast { dtype, arg } => {
                let a = self.simp(arg)?;
                if self.ty(a)? == dtype {
                    return Ok(a);
                }
                self.mk(Expr::Cast { dtype, arg: a })
            }
            Expr::Bitcast { dtype, arg } => self.simp_bitcast(dtype, arg),
            Expr::Select {
                cond,
                then,
                otherwise,
            } => self.simp_select(cond, then, otherwise),
            Expr::Unary { op, arg } => {
                let a = self.simp(arg)?;
                self.mk(Expr::Unary { op, arg: a })
            }
            Expr::Binary { op, lhs, rhs } => {
                let a = self.simp(lhs)?;
                let b = self.simp(rhs)?;
                self.mk_binary(op, a, b)
            }
        }
    }
}
