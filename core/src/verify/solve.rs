//! The Z3 discharger: proves or refutes obligations.
//!
//! One solver per kernel. Every variable is declared once, with its type's
//! range asserted at the base level; each obligation then gets its own
//! `push`, its hypotheses and the negation of its goal, a `check` and a
//! `pop`. Unsatisfiable means proved; a model is a counterexample, read
//! back for the variables in scope and the obligation's shown values; an
//! `unknown` answer (the per-obligation timeout, or nonlinear arithmetic
//! beyond the solver) is reported as such, never as proved.
//!
//! # Canonical counterexamples
//! Which model a solver returns is its own business and differs between
//! Z3 versions. So a refutation is not read from the first model: the
//! variables of the obligation are fixed one at a time, in a set order
//! (the variables in scope: sizes, block indices, the thread, loops and
//! lets, coordinates; then the others, primed copies and opaque values,
//! in declaration order), each to the value of smallest magnitude that
//! keeps the assertions satisfiable (the non-negative one of two),
//! found by exponential and binary search with `push`/`pop` checks;
//! booleans prefer `false`. The result is the lexicographically least
//! counterexample under that order: a property of the obligation, not of
//! the solver, as long as every check is decided (a check the solver
//! cannot decide in time stops the search, and the values found so far
//! are kept with the solver's choice for the rest).
//!
//! Integers are Z3's mathematical integers. Z3's `div` and `mod` are
//! Euclidean; floor and truncating division are built from them with the
//! signs of the operands. Bitwise operators ([`Term::Bits`]) are spelt
//! out bit by bit from `div` and `mod` by powers of two.

use std::collections::HashMap;

use z3::ast::{Bool, Int};
use z3::{Model, Params, SatResult, Solver};

use super::{
    BitOp, Counterexample, Formula, Obligation, Obligations, Outcome, Role, Term, VerifyError,
    VerifyOptions, generate,
};
use crate::ir::Function;

/// Stack of the verifier's thread: expressions may nest deeply, and every
/// walk over them recurses.
const STACK_SIZE: usize = 256 << 20;

/// Generates the obligations of `func` and discharges them, on a thread of
/// its own with a large stack (the solver's context belongs to it).
pub fn verify_function(
    func: &Function,
    options: &VerifyOptions,
) -> Result<(Obligations, Vec<Outcome>), VerifyError> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("tilec-verify".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || {
                let obligations = generate(func, options)?;
                let outcomes = discharge(&obligations, options);
                Ok((obligations, outcomes))
            });
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(VerifyError::Internal {
                    detail: "the verifier panicked".to_string(),
                })
            }),
            Err(e) => Err(VerifyError::Internal {
                detail: format!("cannot start the verifier's thread: {e}"),
            }),
        }
    })
}

/// The outcome of every obligation of `obligations`, in order.
pub fn discharge(obligations: &Obligations, options: &VerifyOptions) -> Vec<Outcome> {
    let mut outcomes: Vec<Option<Outcome>> = vec![None; obligations.items.len()];
    let mut kernels: Vec<usize> = obligations.items.iter().map(|o| o.kernel).collect();
    kernels.sort_unstable();
    kernels.dedup();
    for kernel in kernels {
        let mut cx = Encoder::new(obligations, options);
        for (index, obligation) in obligations.items.iter().enumerate() {
            if obligation.kernel != kernel {
                continue;
            }
            cx.solver.push();
            for hypothesis in &obligation.hypotheses {
                let h = cx.formula(hypothesis);
                cx.solver.assert(&h);
            }
            let goal = cx.formula(&obligation.goal);
            cx.solver.assert(goal.not());
            let outcome = match cx.solver.check() {
                SatResult::Unsat => Outcome::Proved,
                SatResult::Unknown => Outcome::Unknown(
                    cx.solver
                        .get_reason_unknown()
                        .unwrap_or_else(|| "the solver gave no reason".to_string()),
                ),
                SatResult::Sat => match cx.minimal_model(obligation) {
                    Some(model) => {
                        let eval = |term: &Int| model.eval(term, true).and_then(|v| v.as_i128());
                        let mut values = Vec::new();
                        for &i in &obligation.scope {
                            let var = &obligations.vars[i];
                            if var.boolean {
                                continue;
                            }
                            let z = cx.int_var(&var.name);
                            if let Some(value) = eval(&z) {
                                values.push((var.name.clone(), var.role, value));
                            }
                        }
                        let mut shown = Vec::new();
                        for (label, term) in &obligation.shown {
                            let z = cx.term(term);
                            if let Some(value) = eval(&z) {
                                shown.push((label.clone(), value));
                            }
                        }
                        order(&mut values);
                        Outcome::Refuted(Counterexample {
                            values,
                            shown,
                            approximate: obligation.approximate,
                        })
                    }
                    None => Outcome::Unknown("the solver found no model".to_string()),
                },
            };
            cx.solver.pop(1);
            outcomes[index] = Some(outcome);
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Outcome::Unknown("not checked".to_string())))
        .collect()
}

/// Sizes, then block indices (x first), the thread, then loops and lets in
/// scope order.
fn order(values: &mut [(String, Role, i128)]) {
    let rank = |role: Role| match role {
        Role::Size => (0, 0),
        Role::Block(axis) => (1, axis),
        Role::Thread => (2, 0),
        Role::Loop | Role::Let => (3, 0),
        Role::Coordinate => (4, 0),
        Role::Opaque => (5, 0),
    };
    values.sort_by_key(|(_, role, _)| rank(*role));
}

struct Encoder<'o> {
    solver: Solver,
    obligations: &'o Obligations,
    ints: HashMap<String, Int>,
    bools: HashMap<String, Bool>,
}

impl<'o> Encoder<'o> {
    fn new(obligations: &'o Obligations, options: &VerifyOptions) -> Self {
        let solver = Solver::new();
        let mut params = Params::new();
        params.set_u32("timeout", options.timeout_ms.max(1));
        params.set_u32("random_seed", options.random_seed);
        solver.set_params(&params);
        let mut encoder = Encoder {
            solver,
            obligations,
            ints: HashMap::new(),
            bools: HashMap::new(),
        };
        // Every variable and its range at the base level, so that no
        // obligation's `pop` takes a range away.
        for var in &obligations.vars {
            if !var.boolean {
                encoder.int_var(&var.name);
            }
        }
        encoder
    }

    /// The canonical model of the current assertions (module
    /// documentation), or `None` when they are not satisfiable.
    fn minimal_model(&mut self, obligation: &Obligation) -> Option<Model> {
        let order = minimization_order(self.obligations, obligation);
        self.solver.push();
        for index in order {
            let var = &self.obligations.vars[index];
            let decided = if var.boolean {
                let b = self.bool_var(&var.name);
                let value = self.probe(&b.not());
                match value {
                    SatResult::Sat => self.solver.assert(b.not()),
                    SatResult::Unsat => self.solver.assert(&b),
                    SatResult::Unknown => {}
                }
                value != SatResult::Unknown
            } else {
                let x = self.int_var(&var.name);
                self.minimize(&x)
            };
            if !decided {
                break;
            }
        }
        let model = match self.solver.check() {
            SatResult::Sat => self.solver.get_model(),
            _ => None,
        };
        self.solver.pop(1);
        if model.is_some() {
            return model;
        }
        // The search lost the model (a check it could not decide): the
        // solver's own choice.
        match self.solver.check() {
            SatResult::Sat => self.solver.get_model(),
            _ => None,
        }
    }

    /// Whether the assertions with `extra` are satisfiable.
    fn probe(&mut self, extra: &Bool) -> SatResult {
        self.solver.push();
        self.solver.assert(extra);
        let result = self.solver.check();
        self.solver.pop(1);
        result
    }

    /// Fixes `x` to its value of smallest magnitude (the non-negative one
    /// of two); `false` when a check was not decided.
    fn minimize(&mut self, x: &Int) -> bool {
        let within = |bound: i128| {
            let b = Int::from_i128(bound);
            Bool::and(&[x.le(&b), x.ge(b.unary_minus())])
        };
        // The least bound B with |x| <= B satisfiable: 0, then 1, 3, 7, ...
        // until satisfiable, then by halving between the last two.
        let mut unsat: i128 = -1;
        let mut sat: i128 = 0;
        loop {
            match self.probe(&within(sat)) {
                SatResult::Sat => break,
                SatResult::Unsat => {
                    unsat = sat;
                    sat = match sat.checked_mul(2).and_then(|v| v.checked_add(1)) {
                        Some(next) => next,
                        None => return false,
                    };
                }
                SatResult::Unknown => return false,
            }
        }
        while sat - unsat > 1 {
            let mid = unsat + (sat - unsat) / 2;
            match self.probe(&within(mid)) {
                SatResult::Sat => sat = mid,
                SatResult::Unsat => unsat = mid,
                SatResult::Unknown => return false,
            }
        }
        let positive = x.eq(Int::from_i128(sat));
        match self.probe(&positive) {
            SatResult::Sat => self.solver.assert(&positive),
            SatResult::Unsat => self.solver.assert(x.eq(Int::from_i128(-sat))),
            SatResult::Unknown => return false,
        }
        true
    }

    /// The integer constant of a variable, declared with its range on
    /// first use.
    fn int_var(&mut self, name: &str) -> Int {
        if let Some(v) = self.ints.get(name) {
            return v.clone();
        }
        let v = Int::new_const(name);
        if let Some(var) = self.obligations.var(name) {
            if var.lo > i128::MIN {
                self.solver.assert(v.ge(Int::from_i128(var.lo)));
            }
            if var.hi < i128::MAX {
                self.solver.assert(v.le(Int::from_i128(var.hi)));
            }
        }
        self.ints.insert(name.to_string(), v.clone());
        v
    }

    fn bool_var(&mut self, name: &str) -> Bool {
        if let Some(v) = self.bools.get(name) {
            return v.clone();
        }
        let v = Bool::new_const(name);
        self.bools.insert(name.to_string(), v.clone());
        v
    }

    fn term(&mut self, term: &Term) -> Int {
        match term {
            Term::Const(c) => Int::from_i128(*c),
            Term::Var(name) => self.int_var(name),
            Term::Add(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                Int::add(&[a, b])
            }
            Term::Sub(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                Int::sub(&[a, b])
            }
            Term::Mul(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                Int::mul(&[a, b])
            }
            Term::FloorDiv(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                floor_div(&a, &b)
            }
            Term::FloorMod(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                let q = floor_div(&a, &b);
                Int::sub(&[a, Int::mul(&[b, q])])
            }
            Term::TruncDiv(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                let zero = Int::from_i64(0);
                let abs = |x: &Int| x.ge(&zero).ite(x, &x.unary_minus());
                let q = abs(&a).div(abs(&b));
                let same_sign = a.ge(&zero).iff(b.gt(&zero));
                same_sign.ite(&q, &q.unary_minus())
            }
            Term::Min(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.le(&b).ite(&a, &b)
            }
            Term::Max(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.ge(&b).ite(&a, &b)
            }
            Term::Ite(c, a, b) => {
                let c = self.formula(c);
                let (a, b) = (self.term(a), self.term(b));
                c.ite(&a, &b)
            }
            Term::Bits(op, a, b, width) => {
                let (a, b) = (self.term(a), self.term(b));
                bitwise(*op, &a, &b, *width)
            }
        }
    }

    fn formula(&mut self, formula: &Formula) -> Bool {
        match formula {
            Formula::Bool(b) => Bool::from_bool(*b),
            Formula::Var(name) => self.bool_var(name),
            Formula::Cmp(op, a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                match op {
                    super::Cmp::Eq => a.eq(&b),
                    super::Cmp::Ne => a.eq(&b).not(),
                    super::Cmp::Lt => a.lt(&b),
                    super::Cmp::Le => a.le(&b),
                    super::Cmp::Gt => a.gt(&b),
                    super::Cmp::Ge => a.ge(&b),
                }
            }
            Formula::Not(inner) => self.formula(inner).not(),
            Formula::And(parts) => {
                let parts: Vec<Bool> = parts.iter().map(|p| self.formula(p)).collect();
                Bool::and(&parts)
            }
            Formula::Or(parts) => {
                let parts: Vec<Bool> = parts.iter().map(|p| self.formula(p)).collect();
                Bool::or(&parts)
            }
        }
    }
}

/// `a op b` for operands in `0 .. 2^width`, bit by bit: bit `k` of `x`
/// is `(x div 2^k) mod 2`.
fn bitwise(op: BitOp, a: &Int, b: &Int, width: u32) -> Int {
    let one = Int::from_i64(1);
    let zero = Int::from_i64(0);
    let mut bits = Vec::new();
    for k in 0..width.min(62) {
        let power = Int::from_i64(1i64 << k);
        let bit = |x: &Int| x.div(&power).modulo(Int::from_i64(2)).eq(&one);
        let (x, y) = (bit(a), bit(b));
        let set = match op {
            BitOp::And => Bool::and(&[x, y]),
            BitOp::Or => Bool::or(&[x, y]),
            BitOp::Xor => x.xor(&y),
        };
        bits.push(set.ite(&power, &zero));
    }
    if bits.is_empty() {
        return zero;
    }
    Int::add(&bits)
}

/// The order in which [`Encoder::minimal_model`] fixes the variables of an
/// obligation: those in scope (sizes, block indices, thread, loops and
/// lets, coordinates, each group in scope order), then every other
/// variable the obligation mentions, in declaration order.
fn minimization_order(obligations: &Obligations, obligation: &Obligation) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::new();
    let mut scoped: Vec<usize> = obligation.scope.clone();
    let rank = |role: Role| match role {
        Role::Size => (0, 0),
        Role::Block(axis) => (1, axis),
        Role::Thread => (2, 0),
        Role::Loop | Role::Let => (3, 0),
        Role::Coordinate => (4, 0),
        Role::Opaque => (5, 0),
    };
    scoped.sort_by_key(|&i| rank(obligations.vars[i].role));
    for i in scoped {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    let mut rest: Vec<usize> = Vec::new();
    let mut visit = |name: &str| {
        if let Some(i) = obligations.vars.iter().position(|v| v.name == name)
            && !order.contains(&i)
            && !rest.contains(&i)
        {
            rest.push(i);
        }
    };
    obligation.goal.visit_vars(&mut visit);
    for h in &obligation.hypotheses {
        h.visit_vars(&mut visit);
    }
    rest.sort_unstable();
    order.extend(rest);
    order
}

/// `floor(a / b)` from Z3's Euclidean division.
fn floor_div(a: &Int, b: &Int) -> Int {
    if let Some(c) = b.as_i64()
        && c > 0
    {
        return a.div(b);
    }
    let zero = Int::from_i64(0);
    b.gt(&zero)
        .ite(&a.div(b), &a.unary_minus().div(b.unary_minus()))
}
