//! Generation of obligations from a Tile IR function.
//!
//! One walk over the statements, in order, keeps the facts that hold at the
//! current point: the ranges of the enclosing loops, parallel nests, block
//! and thread indices, the conditions of enclosing `if`s, `let` bindings
//! and the `T.assume` facts met earlier in an enclosing block. Every
//! access met on the way becomes obligations under those facts. Loads are
//! found inside expressions with the conditions of lazy operators
//! (`select`, `and`, `or`), so a load in an arm that does not run is not
//! required to be in bounds, as the interpreter defines.
//!
//! IR expressions translate into exact terms ([`super::Term`]); whatever
//! has no exact encoding becomes an opaque variable bounded by its type.
//!
//! The obligations about accesses live here; those about layouts
//! (`layout.rs`: writes of two blocks, matrix-atom fragments), pipelines
//! (`pipeline.rs`) and registers (`resources.rs`) in the submodules, which
//! extend the same walk.

mod layout;
mod pipeline;
mod resources;

use std::collections::{HashMap, HashSet};

use super::{
    AccessSite, BitOp, Formula, Obligation, ObligationKind, Obligations, Role, SymVar, Term,
    VerifyError, VerifyOptions,
};
use crate::ir::{
    AtomicValue, BinaryOp, Block, Buffer, DType, Expr, Function, Handle, Literal, Region, Scope,
    Span, Stmt, UnaryOp, Var,
};

/// Alignment of each shared buffer in the block's arena, in bytes.
const SHARED_ALIGN: i128 = 16;

/// The widest operands a bitwise operator is encoded exactly for: the
/// discharger spells the operator out bit by bit.
const MAX_EXACT_BITS: u32 = 16;

/// The obligations of `func` under `options`.
pub fn generate(func: &Function, options: &VerifyOptions) -> Result<Obligations, VerifyError> {
    let mut generator = Generator {
        f: func,
        options,
        vars: Vec::new(),
        names: HashMap::new(),
        ir_vars: HashMap::new(),
        hypotheses: Vec::new(),
        scope: Vec::new(),
        items: Vec::new(),
        kernel: 0,
        kernels: 0,
        cache: HashMap::new(),
        opaque: 0,
        counted: HashSet::new(),
        shared: Vec::new(),
        frames: Vec::new(),
        site: None,
        bounds: HashMap::new(),
        in_kernel: false,
        kernel_names: HashSet::new(),
        writes: Vec::new(),
        threads: 0,
        ir_names: func.vars.iter().map(|(_, v)| v.name.clone()).collect(),
        local_buffers: Vec::new(),
    };
    generator.symbols();
    generator.block(&func.body)?;
    Ok(Obligations {
        function: func.name.clone(),
        vars: generator.vars,
        items: generator.items,
    })
}

struct Generator<'f> {
    f: &'f Function,
    options: &'f VerifyOptions,
    vars: Vec<SymVar>,
    names: HashMap<String, usize>,
    /// IR variable → its term.
    ir_vars: HashMap<Handle<Var>, Term>,
    hypotheses: Vec<Formula>,
    scope: Vec<usize>,
    items: Vec<Obligation>,
    kernel: usize,
    kernels: usize,
    /// Translations of the current statement's expressions, so that a
    /// shared subexpression (one load read twice) is one value.
    cache: HashMap<Handle<Expr>, Term>,
    opaque: usize,
    /// Global buffers whose element count has an obligation already.
    counted: HashSet<Handle<Buffer>>,
    /// Shared buffers allocated by the current kernel.
    shared: Vec<Handle<Buffer>>,
    /// The `T.Parallel` nests around the current statement, innermost last.
    frames: Vec<ParallelFrame>,
    /// The access the obligations being stated belong to.
    site: Option<AccessSite>,
    /// Constant ranges of variables (loop, parallel, block and thread
    /// indices with constant bounds, and `let`s of them), by name: what
    /// makes a bitwise operator exact ([`Generator::exact_bits`]).
    bounds: HashMap<String, (i128, i128)>,
    /// Whether the walk is inside a kernel.
    in_kernel: bool,
    /// Names of the variables bound inside the current kernel (indices,
    /// loops, lets, opaque values, coordinates): what differs between two
    /// blocks.
    kernel_names: HashSet<String>,
    /// The writes to global buffers of the current kernel (`layout.rs`).
    writes: Vec<layout::GlobalWrite>,
    /// The current kernel's thread count.
    threads: u32,
    /// Names of the function's IR variables, which coordinates avoid.
    ir_names: HashSet<String>,
    /// Fragment, local and var buffers allocated by the current kernel.
    local_buffers: Vec<Handle<Buffer>>,
}

/// A `T.Parallel` nest being walked: what was declared inside it, so that
/// two of its iterations can be compared.
struct ParallelFrame {
    /// Where the nest's facts start in `hypotheses`.
    hyp_start: usize,
    /// Opaque variables numbered above this were made inside the nest.
    opaque_start: usize,
    /// The nest's own variables.
    vars: Vec<Handle<Var>>,
    /// Every IR variable declared inside the nest, its own included.
    inner: HashSet<Handle<Var>>,
    /// The nest's iteration count, when its extents are constants.
    count: Option<i128>,
}

/// Two iterations of the innermost `T.Parallel` nest: the facts of the
/// second (a primed copy of every variable that varies with the
/// iteration), the fact that they differ, and the renaming.
struct TwoIterations {
    /// The second iteration's facts and `nest vars differ`.
    extra: Vec<Formula>,
    /// Original name → primed name.
    primed: HashMap<String, String>,
    /// Indices of the primed nest variables, to show in counterexamples.
    shown_vars: Vec<usize>,
}

fn int_range(dtype: DType) -> (i128, i128) {
    dtype.int_range().unwrap_or((i128::MIN, i128::MAX))
}

impl<'f> Generator<'f> {
    fn malformed(detail: impl Into<String>, span: Span) -> VerifyError {
        VerifyError::Malformed {
            detail: detail.into(),
            span,
        }
    }

    /// Adds a variable (or returns the one of that name) and puts it in
    /// scope.
    fn add_var(&mut self, name: String, role: Role, dtype: DType, boolean: bool) -> Term {
        let index = match self.names.get(&name) {
            Some(&index) => index,
            None => {
                let (lo, hi) = if boolean { (0, 1) } else { int_range(dtype) };
                self.vars.push(SymVar {
                    name: name.clone(),
                    role,
                    lo,
                    hi,
                    boolean,
                });
                self.names.insert(name.clone(), self.vars.len() - 1);
                self.vars.len() - 1
            }
        };
        if role != Role::Opaque {
            self.scope.push(index);
        }
        if self.in_kernel {
            self.kernel_names.insert(name.clone());
        }
        Term::Var(name)
    }

    fn declare(&mut self, var: Handle<Var>, role: Role) -> Term {
        let v = &self.f.vars[var];
        let term = self.add_var(v.name.clone(), role, v.dtype, v.dtype == DType::Bool);
        self.ir_vars.insert(var, term.clone());
        for frame in &mut self.frames {
            frame.inner.insert(var);
        }
        term
    }

    /// A fresh opaque integer in `lo ..= hi`.
    fn opaque_int(&mut self, lo: i128, hi: i128) -> Term {
        self.opaque += 1;
        let name = format!("%{}", self.opaque);
        if self.in_kernel {
            self.kernel_names.insert(name.clone());
        }
        self.vars.push(SymVar {
            name: name.clone(),
            role: Role::Opaque,
            lo,
            hi,
            boolean: false,
        });
        self.names.insert(name.clone(), self.vars.len() - 1);
        Term::Var(name)
    }

    fn opaque_bool(&mut self) -> Formula {
        self.opaque += 1;
        let name = format!("%{}", self.opaque);
        if self.in_kernel {
            self.kernel_names.insert(name.clone());
        }
        self.vars.push(SymVar {
            name: name.clone(),
            role: Role::Opaque,
            lo: 0,
            hi: 1,
            boolean: true,
        });
        self.names.insert(name.clone(), self.vars.len() - 1);
        Formula::Var(name)
    }

    /// Symbolic sizes; one that is an extent of a parameter is a tensor
    /// dimension, so not negative.
    fn symbols(&mut self) {
        let f = self.f;
        for &symbol in &f.symbols {
            let term = self.declare(symbol, Role::Size);
            let is_extent = f.param_buffers().any(|b| {
                f.buffers[b]
                    .shape
                    .iter()
                    .any(|&e| matches!(f.exprs[e], Expr::Var(v) if v == symbol))
            });
            if is_extent {
                self.hypotheses.push(term.ge(Term::Const(0)));
            }
        }
    }

    // ----- expressions -------------------------------------------------

    fn term(&mut self, e: Handle<Expr>) -> Term {
        if let Some(t) = self.cache.get(&e) {
            return t.clone();
        }
        let f = self.f;
        let dtype = f.ty(e);
        let (lo, hi) = int_range(dtype);
        let term = match &f.exprs[e] {
            Expr::Literal(Literal::Int(v, DType::U64)) => Term::Const(i128::from(*v as u64)),
            Expr::Literal(l) => match l.as_i64() {
                Some(v) => Term::Const(i128::from(v)),
                None => self.opaque_int(lo, hi),
            },
            Expr::Var(v) => match self.ir_vars.get(v) {
                Some(t) => t.clone(),
                None => self.opaque_int(lo, hi),
            },
            Expr::Unary { op, arg } if dtype.is_int() => {
                let a = self.term(*arg);
                match op {
                    UnaryOp::Neg => Term::Const(0).minus(a),
                    UnaryOp::BitNot => Term::Const(-1).minus(a),
                    UnaryOp::Abs => Term::Ite(
                        Box::new(a.clone().lt(Term::Const(0))),
                        Box::new(Term::Const(0).minus(a.clone())),
                        Box::new(a),
                    ),
                    _ => self.opaque_int(lo, hi),
                }
            }
            Expr::Binary { op, lhs, rhs } if dtype.is_int() => self.binary(*op, *lhs, *rhs, dtype),
            Expr::Select {
                cond,
                then,
                otherwise,
            } if dtype.is_int() => {
                let c = self.formula(*cond);
                let a = self.term(*then);
                let b = self.term(*otherwise);
                Term::Ite(Box::new(c), Box::new(a), Box::new(b))
            }
            Expr::Cast { dtype: to, arg } if to.is_int() => {
                let from = f.ty(*arg);
                if from.is_bool() {
                    let c = self.formula(*arg);
                    Term::Ite(
                        Box::new(c),
                        Box::new(Term::Const(1)),
                        Box::new(Term::Const(0)),
                    )
                } else if from.is_int() {
                    let (flo, fhi) = int_range(from);
                    if flo >= lo && fhi <= hi {
                        self.term(*arg)
                    } else {
                        // A narrowing cast wraps; exact only when the value
                        // fits, which is not known here.
                        self.opaque_int(lo, hi)
                    }
                } else {
                    self.opaque_int(lo, hi)
                }
            }
            _ => self.opaque_int(lo, hi),
        };
        self.cache.insert(e, term.clone());
        term
    }

    fn binary(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>, dtype: DType) -> Term {
        let (lo, hi) = int_range(dtype);
        let a = self.term(lhs);
        let b = self.term(rhs);
        let boxed = |a: Term, b: Term| (Box::new(a), Box::new(b));
        match op {
            BinaryOp::Add => a.plus(b),
            BinaryOp::Sub => a.minus(b),
            BinaryOp::Mul => a.times(b),
            BinaryOp::Div => {
                let (a, b) = boxed(a, b);
                Term::TruncDiv(a, b)
            }
            BinaryOp::FloorDiv => {
                let (a, b) = boxed(a, b);
                Term::FloorDiv(a, b)
            }
            BinaryOp::FloorMod => {
                let (a, b) = boxed(a, b);
                Term::FloorMod(a, b)
            }
            BinaryOp::Min => {
                let (a, b) = boxed(a, b);
                Term::Min(a, b)
            }
            BinaryOp::Max => {
                let (a, b) = boxed(a, b);
                Term::Max(a, b)
            }
            BinaryOp::Shl => match b.as_const() {
                Some(c) if (0..i128::from(dtype.bits())).contains(&c) => {
                    a.times(Term::Const(1 << c))
                }
                _ => self.opaque_int(lo, hi),
            },
            BinaryOp::Shr => match b.as_const() {
                Some(c) if (0..i128::from(dtype.bits())).contains(&c) => {
                    Term::FloorDiv(Box::new(a), Box::new(Term::Const(1 << c)))
                }
                _ => self.opaque_int(lo, hi),
            },
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                let bit_op = match op {
                    BinaryOp::BitAnd => BitOp::And,
                    BinaryOp::BitOr => BitOp::Or,
                    _ => BitOp::Xor,
                };
                if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
                    return Term::Const(bit_op.apply(x, y));
                }
                if let Some(exact) = self.exact_bits(bit_op, &a, &b) {
                    return exact;
                }
                match (bit_op, a.as_const(), b.as_const()) {
                    // `x & m` with a constant `m >= 0` lies in `0 ..= m`.
                    (BitOp::And, _, Some(m)) | (BitOp::And, Some(m), _) if m >= 0 => {
                        self.opaque_int(0, m.min(hi))
                    }
                    _ => self.opaque_int(lo, hi),
                }
            }
            _ => self.opaque_int(lo, hi),
        }
    }

    /// `a op b` as an exact term when both operands are known to lie in
    /// `0 .. 2^w` for some `w <= MAX_EXACT_BITS` (see [`Term::Bits`]).
    fn exact_bits(&self, op: BitOp, a: &Term, b: &Term) -> Option<Term> {
        let (alo, ahi) = self.bounds_of(a)?;
        let (blo, bhi) = self.bounds_of(b)?;
        if alo < 0 || blo < 0 {
            return None;
        }
        let top = ahi.max(bhi);
        let width = (128 - top.leading_zeros()).max(1);
        (width <= MAX_EXACT_BITS)
            .then(|| Term::Bits(op, Box::new(a.clone()), Box::new(b.clone()), width))
    }

    /// Constant bounds of a term, from the constant ranges of its
    /// variables ([`Generator::bounds`]) and their types; `None` when not
    /// known or not representable.
    fn bounds_of(&self, term: &Term) -> Option<(i128, i128)> {
        Some(match term {
            Term::Const(c) => (*c, *c),
            Term::Var(name) => match self.bounds.get(name) {
                Some(&range) => range,
                None => {
                    let var = &self.vars[*self.names.get(name)?];
                    (var.lo, var.hi)
                }
            },
            Term::Add(a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                (al.checked_add(bl)?, ah.checked_add(bh)?)
            }
            Term::Sub(a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                (al.checked_sub(bh)?, ah.checked_sub(bl)?)
            }
            Term::Mul(a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                let products = [
                    al.checked_mul(bl)?,
                    al.checked_mul(bh)?,
                    ah.checked_mul(bl)?,
                    ah.checked_mul(bh)?,
                ];
                (*products.iter().min()?, *products.iter().max()?)
            }
            Term::FloorDiv(a, b) => {
                let c = b.as_const().filter(|&c| c > 0)?;
                let (al, ah) = self.bounds_of(a)?;
                (al.div_euclid(c), ah.div_euclid(c))
            }
            Term::TruncDiv(a, b) => {
                let c = b.as_const().filter(|&c| c > 0)?;
                let (al, ah) = self.bounds_of(a)?;
                if al < 0 {
                    return None;
                }
                (al / c, ah / c)
            }
            Term::FloorMod(a, b) => {
                let c = b.as_const().filter(|&c| c > 0)?;
                match self.bounds_of(a) {
                    Some((al, ah)) if al >= 0 && ah < c => (al, ah),
                    _ => (0, c - 1),
                }
            }
            Term::Min(a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                (al.min(bl), ah.min(bh))
            }
            Term::Max(a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                (al.max(bl), ah.max(bh))
            }
            Term::Ite(_, a, b) => {
                let ((al, ah), (bl, bh)) = (self.bounds_of(a)?, self.bounds_of(b)?);
                (al.min(bl), ah.max(bh))
            }
            Term::Bits(_, _, _, width) => (0, (1i128 << width) - 1),
        })
    }

    /// Records constant bounds of a variable's term when `lo ..= hi` are
    /// known.
    fn bound(&mut self, var: &Term, lo: Option<i128>, hi: Option<i128>) {
        if let (Term::Var(name), Some(lo), Some(hi)) = (var, lo, hi)
            && lo <= hi
        {
            self.bounds.insert(name.clone(), (lo, hi));
        }
    }

    fn formula(&mut self, e: Handle<Expr>) -> Formula {
        let f = self.f;
        match &f.exprs[e] {
            Expr::Literal(Literal::Bool(b)) => Formula::Bool(*b),
            Expr::Var(v) if f.vars[*v].dtype == DType::Bool => match self.ir_vars.get(v) {
                Some(Term::Var(name)) => Formula::Var(name.clone()),
                _ => self.opaque_bool(),
            },
            Expr::Unary {
                op: UnaryOp::Not,
                arg,
            } => self.formula(*arg).negate(),
            Expr::Binary { op, lhs, rhs } => {
                let operand = f.ty(*lhs);
                match op {
                    BinaryOp::And | BinaryOp::BitAnd if operand.is_bool() => {
                        Formula::and(vec![self.formula(*lhs), self.formula(*rhs)])
                    }
                    BinaryOp::Or | BinaryOp::BitOr if operand.is_bool() => {
                        Formula::or(vec![self.formula(*lhs), self.formula(*rhs)])
                    }
                    _ if op.is_comparison() && operand.is_int() => {
                        let a = self.term(*lhs);
                        let b = self.term(*rhs);
                        let cmp = match op {
                            BinaryOp::Eq => super::Cmp::Eq,
                            BinaryOp::Ne => super::Cmp::Ne,
                            BinaryOp::Lt => super::Cmp::Lt,
                            BinaryOp::Le => super::Cmp::Le,
                            BinaryOp::Gt => super::Cmp::Gt,
                            _ => super::Cmp::Ge,
                        };
                        Formula::cmp(cmp, a, b)
                    }
                    BinaryOp::Eq | BinaryOp::Ne | BinaryOp::BitXor if operand.is_bool() => {
                        let a = self.formula(*lhs);
                        let b = self.formula(*rhs);
                        let same = Formula::or(vec![
                            Formula::and(vec![a.clone(), b.clone()]),
                            Formula::and(vec![a.negate(), b.negate()]),
                        ]);
                        if *op == BinaryOp::Eq {
                            same
                        } else {
                            same.negate()
                        }
                    }
                    _ => self.opaque_bool(),
                }
            }
            Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                let c = self.formula(*cond);
                let a = self.formula(*then);
                let b = self.formula(*otherwise);
                Formula::or(vec![
                    Formula::and(vec![c.clone(), a]),
                    Formula::and(vec![c.negate(), b]),
                ])
            }
            Expr::Cast { arg, .. } if f.ty(*arg).is_int() => {
                let a = self.term(*arg);
                Formula::cmp(super::Cmp::Ne, a, Term::Const(0))
            }
            Expr::Cast { arg, .. } if f.ty(*arg).is_bool() => self.formula(*arg),
            _ => self.opaque_bool(),
        }
    }

    // ----- obligations -------------------------------------------------

    /// States an obligation under the current facts and `extra`, with the
    /// variables in scope here.
    fn push(
        &mut self,
        kind: ObligationKind,
        span: Span,
        subject: String,
        extra: &[Formula],
        goal: Formula,
        shown: Vec<(String, Term)>,
    ) {
        let mut hypotheses = self.hypotheses.clone();
        hypotheses.extend(extra.iter().cloned());
        let scope = self.scope.clone();
        self.push_raw(kind, span, subject, hypotheses, goal, shown, scope);
    }

    /// States an obligation with exactly these hypotheses and variables in
    /// scope.
    #[allow(clippy::too_many_arguments)]
    fn push_raw(
        &mut self,
        kind: ObligationKind,
        span: Span,
        subject: String,
        hypotheses: Vec<Formula>,
        goal: Formula,
        shown: Vec<(String, Term)>,
        mut scope: Vec<usize>,
    ) {
        // Regions of global buffers are advisory (the out-of-bounds rule).
        let required = !matches!(
            kind,
            ObligationKind::RegionInBounds {
                scope: Scope::Global,
                ..
            }
        );
        let mut approximate = false;
        {
            let vars = &self.vars;
            let names = &self.names;
            let mut visit = |name: &str| {
                if names
                    .get(name)
                    .is_some_and(|&i| vars[i].role == Role::Opaque)
                {
                    approximate = true;
                }
            };
            goal.visit_vars(&mut visit);
            for h in &hypotheses {
                h.visit_vars(&mut visit);
            }
        }
        let mut seen = HashSet::new();
        scope.retain(|i| seen.insert(*i));
        self.items.push(Obligation {
            kind,
            required,
            kernel: self.kernel,
            span,
            subject,
            hypotheses,
            goal,
            shown,
            scope,
            approximate,
            site: self.site,
        });
    }

    fn shape(&mut self, buffer: Handle<Buffer>) -> Vec<Term> {
        let shape = self.f.buffers[buffer].shape.clone();
        shape.into_iter().map(|e| self.term(e)).collect()
    }

    /// Range facts of every integer arithmetic node of `e` that can
    /// overflow its type, and non-zero facts of its variable divisors.
    fn overflow_facts(
        &mut self,
        e: Handle<Expr>,
        out: &mut Vec<Formula>,
        seen: &mut HashSet<Handle<Expr>>,
    ) {
        if !seen.insert(e) {
            return;
        }
        let f = self.f;
        let expr = &f.exprs[e];
        if matches!(expr, Expr::Load { .. }) {
            // The indices of a nested load have their own obligation.
            return;
        }
        for operand in expr.operands() {
            self.overflow_facts(operand, out, seen);
        }
        let dtype = f.ty(e);
        let can_overflow = match expr {
            Expr::Binary { op, .. } => matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl
            ),
            Expr::Unary { op, .. } => matches!(op, UnaryOp::Neg | UnaryOp::Abs),
            _ => false,
        };
        if let Expr::Binary {
            op: BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod,
            rhs,
            ..
        } = expr
            && dtype.is_int()
        {
            // Integer division by zero stops the interpreter.
            let divisor = self.term(*rhs);
            if divisor.as_const().is_none() {
                out.push(Formula::cmp(super::Cmp::Ne, divisor, Term::Const(0)));
            }
        }
        if can_overflow && dtype.is_int() {
            let term = self.term(e);
            if term.as_const().is_none() {
                let (lo, hi) = int_range(dtype);
                out.push(Formula::and(vec![
                    term.clone().ge(Term::Const(lo)),
                    term.le(Term::Const(hi)),
                ]));
            }
        }
    }

    /// The facts that make the index arithmetic of `exprs` exact (see
    /// [`Self::overflow_facts`]).
    fn arithmetic_facts(&mut self, exprs: &[Handle<Expr>]) -> Vec<Formula> {
        let mut facts = Vec::new();
        let mut seen = HashSet::new();
        for &e in exprs {
            self.overflow_facts(e, &mut facts, &mut seen);
        }
        facts
    }

    /// The obligation that the index arithmetic of `exprs` is exact: the
    /// `facts` of [`Self::arithmetic_facts`].
    fn overflow(
        &mut self,
        exprs: &[Handle<Expr>],
        facts: Vec<Formula>,
        what: String,
        span: Span,
        extra: &[Formula],
    ) {
        if facts.is_empty() {
            return;
        }
        let bits = exprs.first().map_or(32, |&e| self.f.ty(e).bits());
        let what = format!("index arithmetic of {what}");
        self.push(
            ObligationKind::NoOverflow {
                what: what.clone(),
                bits,
            },
            span,
            what,
            extra,
            Formula::and(facts),
            Vec::new(),
        );
    }

    /// The element count of a global buffer fits the index width.
    fn element_count(&mut self, buffer: Handle<Buffer>, span: Span, extra: &[Formula]) {
        if self.f.buffers[buffer].scope != Scope::Global || !self.counted.insert(buffer) {
            return;
        }
        let shape = self.shape(buffer);
        let count = shape
            .into_iter()
            .fold(Term::Const(1), |acc, extent| acc.times(extent));
        let bits = self.options.index_bits.clamp(2, 127);
        let limit = (1i128 << (bits - 1)) - 1;
        let name = self.f.buffers[buffer].name.clone();
        let what = format!("the element count of `{name}`");
        self.push(
            ObligationKind::NoOverflow {
                what: what.clone(),
                bits,
            },
            span,
            format!("{what} fits {bits}-bit offsets"),
            extra,
            count.clone().le(Term::Const(limit)),
            vec![(format!("elements of `{name}`"), count)],
        );
    }

    fn access(
        &mut self,
        buffer: Handle<Buffer>,
        indices: &[Handle<Expr>],
        store: bool,
        span: Span,
        extra: &[Formula],
    ) {
        let b = &self.f.buffers[buffer];
        let (name, scope) = (b.name.clone(), b.scope);
        let terms: Vec<Term> = indices.iter().map(|&i| self.term(i)).collect();
        let shape = self.shape(buffer);
        let mut goal = Vec::new();
        let mut shown = Vec::new();
        for (d, (index, extent)) in terms.iter().zip(&shape).enumerate() {
            goal.push(index.clone().ge(Term::Const(0)));
            goal.push(index.clone().lt(extent.clone()));
            if index.as_const().is_none() {
                shown.push((format!("index {d} ({index})"), index.clone()));
            }
            if extent.as_const().is_none() {
                shown.push((format!("extent {d} ({extent})"), extent.clone()));
            }
        }
        let text = format!(
            "{}[{}]",
            name,
            terms
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let verb = if store { "store" } else { "load" };
        // The bounds are proved where the arithmetic is exact; that it is
        // is the next obligation.
        let facts = self.arithmetic_facts(indices);
        let mut under = extra.to_vec();
        under.extend(facts.iter().cloned());
        self.push(
            ObligationKind::InBounds {
                buffer: name,
                scope,
                store,
            },
            span,
            format!("{verb} {text}"),
            &under,
            Formula::and(goal),
            shown,
        );
        self.overflow(indices, facts, format!("{verb} {text}"), span, extra);
        self.element_count(buffer, span, extra);
    }

    /// Whether `e` reads a variable of `inner` (directly, or in the indices
    /// of a load).
    fn depends_on(&self, e: Handle<Expr>, inner: &HashSet<Handle<Var>>) -> bool {
        let mut stack = vec![e];
        let mut seen = HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match &self.f.exprs[e] {
                Expr::Var(v) if inner.contains(v) => return true,
                other => stack.extend(other.operands()),
            }
        }
        false
    }

    /// The `no-race` obligation of a store inside a `T.Parallel` nest: two
    /// different iterations of the nest store to different elements. The
    /// iterations become threads, so a shared element would be written by
    /// two threads at once. A store whose value does not depend on the
    /// iteration writes one value from all of them (a replicated write)
    /// and has no obligation. Local and var buffers are per thread.
    fn race(
        &mut self,
        buffer: Handle<Buffer>,
        indices: &[Handle<Expr>],
        value: Handle<Expr>,
        span: Span,
    ) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        let b = &self.f.buffers[buffer];
        let (name, scope) = (b.name.clone(), b.scope);
        if !matches!(scope, Scope::Global | Scope::Shared | Scope::Fragment) {
            return;
        }
        let inner = frame.inner.clone();
        if !self.depends_on(value, &inner) {
            return;
        }
        let terms: Vec<Term> = indices.iter().map(|&i| self.term(i)).collect();
        let Some(two) = self.two_iterations() else {
            return;
        };
        let rename = |n: &str| two.primed.get(n).cloned();
        let goal = Formula::or(
            terms
                .iter()
                .map(|t| Formula::cmp(super::Cmp::Ne, t.clone(), t.rename(&rename)))
                .collect(),
        );
        let text = terms
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        self.push(
            ObligationKind::NoRace {
                buffer: name.clone(),
                scope,
            },
            span,
            format!("iterations of T.Parallel store distinct elements {name}[{text}]"),
            &two.extra,
            goal,
            Vec::new(),
        );
        if let Some(item) = self.items.last_mut() {
            item.scope.extend(two.shown_vars);
        }
    }

    /// A second iteration of the innermost `T.Parallel` nest: a primed
    /// copy of everything that varies with the iteration, with its facts,
    /// and the fact that the two iterations differ.
    fn two_iterations(&mut self) -> Option<TwoIterations> {
        let frame = self.frames.last()?;
        let inner = frame.inner.clone();
        let nest_vars = frame.vars.clone();
        let (hyp_start, opaque_start) = (frame.hyp_start, frame.opaque_start);
        // In declaration order, so that the solver sees the same input on
        // every run (and gives the same counterexample).
        let mut inner_vars: Vec<Handle<Var>> = inner.iter().copied().collect();
        inner_vars.sort_by_key(|v| v.index());
        let mut primed: Vec<(String, String)> = inner_vars
            .iter()
            .map(|&v| {
                let n = &self.f.vars[v].name;
                (n.clone(), format!("{n}'"))
            })
            .collect();
        for n in opaque_start + 1..=self.opaque {
            primed.push((format!("%{n}"), format!("%{n}'")));
        }
        for (original, copy) in &primed {
            self.copy_var(original, copy);
        }
        let lookup: HashMap<String, String> = primed.into_iter().collect();
        let rename = |n: &str| lookup.get(n).cloned();
        let mut extra: Vec<Formula> = self.hypotheses[hyp_start..]
            .iter()
            .map(|h| h.rename(&rename))
            .collect();
        let mut shown_vars = Vec::new();
        let mut differ = Vec::new();
        for &v in &nest_vars {
            let n = self.f.vars[v].name.clone();
            let copy = format!("{n}'");
            if let Some(&i) = self.names.get(&copy) {
                shown_vars.push(i);
            }
            differ.push(Formula::cmp(super::Cmp::Ne, Term::var(n), Term::var(copy)));
        }
        extra.push(Formula::or(differ));
        Some(TwoIterations {
            extra,
            primed: lookup,
            shown_vars,
        })
    }

    /// Declares `copy` as a variable like `original` (same role and range)
    /// unless it exists; returns its index.
    fn copy_var(&mut self, original: &str, copy: &str) -> Option<usize> {
        if let Some(&i) = self.names.get(copy) {
            return Some(i);
        }
        let &i = self.names.get(original)?;
        let mut var = self.vars[i].clone();
        var.name = copy.to_string();
        self.vars.push(var);
        self.names.insert(copy.to_string(), self.vars.len() - 1);
        if let Some(&range) = self.bounds.get(original) {
            self.bounds.insert(copy.to_string(), range);
        }
        Some(self.vars.len() - 1)
    }

    /// Whether `e` contains an integer `^`: a hand-written swizzle.
    fn has_xor(&self, e: Handle<Expr>) -> bool {
        let mut stack = vec![e];
        let mut seen = HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match &self.f.exprs[e] {
                Expr::Binary {
                    op: BinaryOp::BitXor,
                    ..
                } if self.f.ty(e).is_int() => return true,
                // A load's own indices are another access.
                Expr::Load { .. } => {}
                other => stack.extend(other.operands()),
            }
        }
        false
    }

    /// The `swizzle-permutation` obligation of an access of a shared
    /// buffer inside a `T.Parallel` nest whose indices contain a `^` (a
    /// hand-written XOR swizzle): two different iterations of the nest
    /// index different elements, and when the nest has exactly as many
    /// iterations as the buffer has elements, every index lies in the
    /// buffer, so that the access is a permutation of the tile.
    fn swizzle(&mut self, buffer: Handle<Buffer>, indices: &[Handle<Expr>], span: Span) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        let count = frame.count;
        let b = &self.f.buffers[buffer];
        let (name, scope) = (b.name.clone(), b.scope);
        if scope != Scope::Shared || !indices.iter().any(|&i| self.has_xor(i)) {
            return;
        }
        let terms: Vec<Term> = indices.iter().map(|&i| self.term(i)).collect();
        let text = format!(
            "{name}[{}]",
            terms
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let subject_key = format!("swizzle {text}");
        if self.items.iter().any(|o| {
            o.span == span && o.kernel == self.kernel && o.subject.starts_with(&subject_key)
        }) {
            return;
        }
        let shape = self.shape(buffer);
        let elements = self
            .f
            .const_shape(buffer)
            .map(|s| s.iter().map(|&e| i128::from(e)).product::<i128>());
        let onto = count.is_some() && count == elements;
        let Some(two) = self.two_iterations() else {
            return;
        };
        let rename = |n: &str| two.primed.get(n).cloned();
        let mut goal = vec![Formula::or(
            terms
                .iter()
                .map(|t| Formula::cmp(super::Cmp::Ne, t.clone(), t.rename(&rename)))
                .collect(),
        )];
        let mut shown = Vec::new();
        for (d, (t, extent)) in terms.iter().zip(&shape).enumerate() {
            if onto {
                goal.push(t.clone().ge(Term::Const(0)));
                goal.push(t.clone().lt(extent.clone()));
            }
            if t.as_const().is_none() {
                shown.push((format!("index {d} ({t})"), t.clone()));
                let primed = t.rename(&rename);
                shown.push((format!("index {d} ({primed})"), primed));
            }
        }
        let dims = shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("x");
        let claim = if onto {
            format!("is a permutation of the {dims} tile")
        } else {
            "is one-to-one over the nest".to_string()
        };
        let mut facts = self.arithmetic_facts(indices);
        let primed_facts: Vec<Formula> = facts.iter().map(|f| f.rename(&rename)).collect();
        facts.extend(primed_facts);
        facts.extend(two.extra);
        self.push(
            ObligationKind::SwizzlePermutation { buffer: name, onto },
            span,
            format!("{subject_key} {claim}"),
            &facts,
            Formula::and(goal),
            shown,
        );
        if let Some(item) = self.items.last_mut() {
            item.scope.extend(two.shown_vars);
        }
    }

    /// In-bounds obligations of every load in `e`, under `conds`.
    fn loads(
        &mut self,
        e: Handle<Expr>,
        span: Span,
        conds: &mut Vec<Formula>,
        seen: &mut HashSet<Handle<Expr>>,
    ) {
        if !seen.insert(e) {
            return;
        }
        let f = self.f;
        match &f.exprs[e] {
            Expr::Load { buffer, indices } => {
                for &i in indices {
                    self.loads(i, span, conds, seen);
                }
                let extra = conds.clone();
                // A load under a condition of its expression runs
                // unconditionally once lowered: only its guard makes it safe.
                self.site = extra
                    .is_empty()
                    .then_some(AccessSite::Load { span, expr: e });
                self.access(*buffer, indices, false, span, &extra);
                self.site = None;
                if extra.is_empty() {
                    self.swizzle(*buffer, indices, span);
                }
            }
            Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                self.loads(*cond, span, conds, seen);
                let c = self.formula(*cond);
                conds.push(c.clone());
                self.loads(*then, span, conds, seen);
                conds.pop();
                conds.push(c.negate());
                self.loads(*otherwise, span, conds, seen);
                conds.pop();
            }
            Expr::Binary {
                op: op @ (BinaryOp::And | BinaryOp::Or),
                lhs,
                rhs,
            } => {
                self.loads(*lhs, span, conds, seen);
                let c = self.formula(*lhs);
                conds.push(if *op == BinaryOp::And { c } else { c.negate() });
                self.loads(*rhs, span, conds, seen);
                conds.pop();
            }
            other => {
                for operand in other.operands() {
                    self.loads(operand, span, conds, seen);
                }
            }
        }
    }

    fn stmt_loads(&mut self, exprs: &[Handle<Expr>], span: Span) {
        let mut seen = HashSet::new();
        for &e in exprs {
            self.loads(e, span, &mut Vec::new(), &mut seen);
        }
    }

    fn region(&mut self, region: &Region, op: &'static str, operand: &'static str, span: Span) {
        let exprs: Vec<Handle<Expr>> = region
            .ranges
            .iter()
            .flat_map(|r| [r.start, r.extent])
            .collect();
        self.stmt_loads(&exprs, span);
        let b = &self.f.buffers[region.buffer];
        let (name, scope) = (b.name.clone(), b.scope);
        let shape = self.shape(region.buffer);
        if shape.len() != region.ranges.len() {
            // The IR verifier reports rank mismatches; nothing to prove.
            return;
        }
        let mut goal = Vec::new();
        let mut shown = Vec::new();
        let mut text = Vec::new();
        for (d, (range, extent)) in region.ranges.iter().zip(&shape).enumerate() {
            let start = self.term(range.start);
            let len = self.term(range.extent);
            let end = start.clone().plus(len.clone());
            goal.push(Formula::or(vec![
                len.clone().le(Term::Const(0)),
                Formula::and(vec![
                    start.clone().ge(Term::Const(0)),
                    end.clone().le(extent.clone()),
                ]),
            ]));
            if start.as_const().is_none() {
                shown.push((format!("start {d} ({start})"), start.clone()));
            }
            if end.as_const().is_none() {
                shown.push((format!("end {d} ({end})"), end.clone()));
            }
            if extent.as_const().is_none() {
                shown.push((format!("extent {d} ({extent})"), extent.clone()));
            }
            text.push(format!("{start}:{end}"));
        }
        let subject = format!("{op} {operand} {name}[{}]", text.join(", "));
        let facts = self.arithmetic_facts(&exprs);
        self.site = Some(AccessSite::Region {
            span,
            buffer: region.buffer,
        });
        self.push(
            ObligationKind::RegionInBounds {
                buffer: name,
                scope,
                op,
                operand,
            },
            span,
            subject.clone(),
            &facts,
            Formula::and(goal),
            shown,
        );
        self.overflow(&exprs, facts, subject, span, &[]);
        self.element_count(region.buffer, span, &[]);
        self.site = None;
    }

    // ----- statements --------------------------------------------------

    fn block(&mut self, block: &Block) -> Result<(), VerifyError> {
        let (h, s) = (self.hypotheses.len(), self.scope.len());
        for (stmt, span) in block.iter() {
            self.cache.clear();
            self.stmt(stmt, span)?;
        }
        self.hypotheses.truncate(h);
        self.scope.truncate(s);
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt, span: Span) -> Result<(), VerifyError> {
        match stmt {
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                thread_var,
                body,
                ..
            } => self.kernel(grid, *threads, block_vars, *thread_var, body, span)?,
            Stmt::Alloc { buffer, init } => {
                let mut exprs = self.f.buffers[*buffer].shape.clone();
                exprs.extend(init.iter().copied());
                self.stmt_loads(&exprs, span);
                match self.f.buffers[*buffer].scope {
                    Scope::Shared if !self.shared.contains(buffer) => self.shared.push(*buffer),
                    Scope::Fragment | Scope::Local | Scope::Var
                        if self.in_kernel && !self.local_buffers.contains(buffer) =>
                    {
                        self.local_buffers.push(*buffer);
                    }
                    _ => {}
                }
            }
            Stmt::For {
                var,
                start,
                extent,
                body,
                kind,
            } => {
                self.stmt_loads(&[*start, *extent], span);
                let s = self.term(*start);
                let n = self.term(*extent);
                let (h, sc) = (self.hypotheses.len(), self.scope.len());
                let v = self.declare(*var, Role::Loop);
                let (lo, count) = (s.as_const(), n.as_const());
                self.bound(&v, lo, lo.zip(count).map(|(a, c)| a + c - 1));
                self.hypotheses.push(v.clone().ge(s.clone()));
                self.hypotheses
                    .push(v.clone().lt(s.clone().plus(n.clone())));
                self.block(body)?;
                // After the body's own obligations, under the loop's facts.
                if let crate::ir::LoopKind::Pipelined {
                    num_stages,
                    order,
                    stage,
                    ..
                } = kind
                {
                    self.cache.clear();
                    let lists = order.as_deref().zip(stage.as_deref());
                    self.pipeline(*var, &s, &n, *num_stages, lists, body, span);
                    // Lists the lowering does not follow: what tilec runs
                    // is the schedule without them, proved as well.
                    let followed = matches!(
                        crate::ir::lists::list_form(
                            order.as_deref(),
                            stage.as_deref(),
                            *num_stages,
                            body,
                            self.f,
                        ),
                        None | Some(crate::ir::lists::ListForm::Staged(_))
                    );
                    if lists.is_some() && !followed {
                        self.cache.clear();
                        self.pipeline(*var, &s, &n, *num_stages, None, body, span);
                    }
                }
                self.hypotheses.truncate(h);
                self.scope.truncate(sc);
            }
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                if vars.len() != extents.len() {
                    return Err(Self::malformed(
                        "parallel nest with unequal vars and extents",
                        span,
                    ));
                }
                self.stmt_loads(extents, span);
                let ns: Vec<Term> = extents.iter().map(|&e| self.term(e)).collect();
                let (h, sc) = (self.hypotheses.len(), self.scope.len());
                let count = ns
                    .iter()
                    .try_fold(1i128, |acc, n| acc.checked_mul(n.as_const()?));
                self.frames.push(ParallelFrame {
                    hyp_start: h,
                    opaque_start: self.opaque,
                    vars: vars.clone(),
                    inner: HashSet::new(),
                    count,
                });
                for (&var, n) in vars.iter().zip(ns) {
                    let v = self.declare(var, Role::Loop);
                    self.bound(&v, Some(0), n.as_const().map(|n| n - 1));
                    self.hypotheses.push(v.clone().ge(Term::Const(0)));
                    self.hypotheses.push(v.lt(n));
                }
                let walked = self.block(body);
                self.frames.pop();
                walked?;
                self.hypotheses.truncate(h);
                self.scope.truncate(sc);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.stmt_loads(&[*cond], span);
                let c = self.formula(*cond);
                self.hypotheses.push(c.clone());
                self.block(then)?;
                self.hypotheses.pop();
                self.hypotheses.push(c.negate());
                self.block(otherwise)?;
                self.hypotheses.pop();
            }
            Stmt::Let { var, value } => {
                self.stmt_loads(&[*value], span);
                let dtype = self.f.vars[*var].dtype;
                if dtype.is_int() {
                    let value = self.term(*value);
                    let v = self.declare(*var, Role::Let);
                    match self.bounds_of(&value) {
                        Some((lo, hi)) => self.bound(&v, Some(lo), Some(hi)),
                        None => {
                            if let Term::Var(name) = &v {
                                self.bounds.remove(name);
                            }
                        }
                    }
                    self.hypotheses.push(v.eq(value));
                } else if dtype.is_bool() {
                    let value = self.formula(*value);
                    self.declare(*var, Role::Let);
                    let name = self.f.vars[*var].name.clone();
                    let v = Formula::Var(name);
                    self.hypotheses.push(Formula::or(vec![
                        Formula::and(vec![v.clone(), value.clone()]),
                        Formula::and(vec![v.negate(), value.negate()]),
                    ]));
                }
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            }
            | Stmt::WarpReduce {
                buffer,
                indices,
                value,
                ..
            } => {
                let mut exprs = indices.clone();
                exprs.push(*value);
                self.stmt_loads(&exprs, span);
                self.site = Some(AccessSite::Store {
                    span,
                    buffer: *buffer,
                });
                self.access(*buffer, indices, true, span, &[]);
                self.site = None;
                self.race(*buffer, indices, *value, span);
                self.swizzle(*buffer, indices, span);
                self.global_store(*buffer, indices, *value, span);
            }
            Stmt::Copy { src, dst } => {
                self.region(src, "copy", "src", span);
                self.region(dst, "copy", "dst", span);
                self.global_region_write(dst, None, span);
            }
            Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                transpose_a,
                transpose_b,
                ..
            } => {
                self.stmt_loads(&[*clear_accum], span);
                self.region(a, "gemm", "A", span);
                self.region(b, "gemm", "B", span);
                self.region(c, "gemm", "C", span);
                self.gemm_layouts([a, b, c], (*transpose_a, *transpose_b), span);
            }
            Stmt::Fill { dst, value } => {
                self.stmt_loads(&[*value], span);
                self.region(dst, "fill", "dst", span);
                self.global_region_write(dst, Some(*value), span);
            }
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                match value {
                    AtomicValue::Scalar(v) => self.stmt_loads(&[*v], span),
                    AtomicValue::Region(r) => self.region(r, "atomic_add", "value", span),
                }
                self.region(dst, "atomic_add", "dst", span);
            }
            Stmt::DeviceAssert { cond } => self.stmt_loads(&[*cond], span),
            Stmt::Assume { cond } => {
                self.stmt_loads(&[*cond], span);
                let c = self.formula(*cond);
                self.hypotheses.push(c);
            }
            // Tile operations in a role are carried out by its threads
            // (warp group `g` is threads `128·g ..`, clipped to the block).
            Stmt::Role { groups, body } => {
                let block = i64::from(self.threads);
                let role: i64 = groups
                    .iter()
                    .map(|&g| (block - i64::from(g) * 128).clamp(0, 128))
                    .sum();
                let outer = self.threads;
                self.threads = u32::try_from(role).unwrap_or(outer);
                let r = self.block(body);
                self.threads = outer;
                r?;
            }
            // The barrier named is one of its array's (an arrival writes
            // the barrier object, a wait reads it).
            Stmt::BarrierArrive { barrier, index } => {
                self.stmt_loads(&[*index], span);
                self.access(*barrier, &[*index], true, span, &[]);
            }
            Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => {
                self.stmt_loads(&[*index, *parity], span);
                self.access(*barrier, &[*index], false, span, &[]);
            }
            Stmt::Reduce { .. }
            | Stmt::Cumsum { .. }
            | Stmt::Barrier
            | Stmt::AllocBarrier { .. } => {}
        }
        Ok(())
    }

    fn kernel(
        &mut self,
        grid: &[Handle<Expr>],
        threads: u32,
        block_vars: &[Handle<Var>],
        thread_var: Handle<Var>,
        body: &Block,
        span: Span,
    ) -> Result<(), VerifyError> {
        if grid.len() != block_vars.len() {
            return Err(Self::malformed(
                "kernel grid and block variables differ in count",
                span,
            ));
        }
        self.kernel = self.kernels;
        self.kernels += 1;
        self.shared.clear();
        self.local_buffers.clear();
        self.writes.clear();
        self.kernel_names.clear();
        self.threads = threads;
        self.stmt_loads(grid, span);
        let (h, s) = (self.hypotheses.len(), self.scope.len());
        let extents: Vec<Term> = grid.iter().map(|&g| self.term(g)).collect();
        self.in_kernel = true;
        for (axis, (&var, extent)) in block_vars.iter().zip(extents).enumerate() {
            let v = self.declare(var, Role::Block(axis));
            self.bound(&v, Some(0), extent.as_const().map(|e| e - 1));
            self.hypotheses.push(v.clone().ge(Term::Const(0)));
            self.hypotheses.push(v.lt(extent));
        }
        let t = self.declare(thread_var, Role::Thread);
        self.bound(&t, Some(0), Some(i128::from(threads) - 1));
        self.hypotheses.push(t.clone().ge(Term::Const(0)));
        self.hypotheses.push(t.lt(Term::Const(i128::from(threads))));
        if let Some(limit) = self.options.max_threads {
            self.push(
                ObligationKind::Threads { limit },
                span,
                format!("block of {threads} threads within the target's {limit}"),
                &[],
                Term::Const(i128::from(threads)).le(Term::Const(i128::from(limit))),
                Vec::new(),
            );
        }
        // The body's statements, with its `assume` facts kept for the
        // shared-memory obligation at the end.
        let walked = body.iter().try_for_each(|(stmt, stmt_span)| {
            self.cache.clear();
            self.stmt(stmt, stmt_span)
        });
        if let Err(e) = walked {
            self.in_kernel = false;
            return Err(e);
        }
        self.cache.clear();
        self.grid_writes(block_vars);
        if let Some(limit) = self.options.shared_bytes {
            self.cache.clear();
            let mut total = Term::Const(0);
            let mut names = Vec::new();
            for buffer in std::mem::take(&mut self.shared) {
                let bytes = i128::from(self.f.buffers[buffer].dtype.bytes());
                // A padded or mapped layout takes its span.
                let count = match self.f.layout_span(buffer) {
                    Some(span) => Term::Const(i128::from(span) * bytes),
                    None => self
                        .shape(buffer)
                        .into_iter()
                        .fold(Term::Const(bytes), |acc, extent| acc.times(extent)),
                };
                let padded = match count.as_const() {
                    Some(c) => {
                        Term::Const((c + SHARED_ALIGN - 1).div_euclid(SHARED_ALIGN) * SHARED_ALIGN)
                    }
                    None => Term::FloorDiv(
                        Box::new(count.plus(Term::Const(SHARED_ALIGN - 1))),
                        Box::new(Term::Const(SHARED_ALIGN)),
                    )
                    .times(Term::Const(SHARED_ALIGN)),
                };
                total = total.plus(padded);
                names.push(self.f.buffers[buffer].name.clone());
            }
            let subject = if names.is_empty() {
                "no shared buffers".to_string()
            } else {
                format!("shared buffers {} fit {limit} bytes", names.join(", "))
            };
            self.push(
                ObligationKind::SharedMemory { limit },
                span,
                subject,
                &[],
                total.clone().le(Term::Const(i128::from(limit))),
                vec![("shared bytes".to_string(), total)],
            );
        }
        self.registers(span);
        self.in_kernel = false;
        self.hypotheses.truncate(h);
        self.scope.truncate(s);
        Ok(())
    }
}
