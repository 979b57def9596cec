//! Region extents that are constants once the kernel's scalar binds are
//! looked through.
//!
//! # Why
//! TileLang code often names the two ends of a slice and takes the region
//! between them: `H0 = g * 64 + ...; H1 = H0 + 64; T.copy(Q[.., H0:H1, ..],
//! Q_shared)`. When `H0` is a run-time value the front end binds both ends
//! (`let %H0 = ...; let %H1 = %H0 + 64`) and the region's extent is
//! `%H1 - %H0`, which is 64 for every value of `%H0` but is not a literal.
//! The lowering sizes every tile operation by constant extents.
//!
//! # How
//! Before a kernel is lowered, every region extent of a copy, fill, gemm
//! or atomic add that is not a literal is read as a linear form
//! `c + Σ kᵢ · aᵢ` over atoms, looking through the variables of the
//! kernel's `let`s (each bound once, to a value that never changes); an
//! atom is a variable that no `let` binds or an expression that is not
//! `+`, `-`, unary `-` or a product with a constant. When every
//! coefficient cancels, the extent is replaced by the literal `c` (in the
//! extent's own type). Integer arithmetic of one type wraps, and these
//! operations are ring operations modulo `2^bits`, so `c` taken in the
//! extent's type is the extent's value for every input; casts and other
//! types stay atoms. Extents that do not fold are left alone (the
//! lowering refuses them as before or takes them at run time).

use std::collections::{BTreeMap, HashMap};

use crate::ir::{self, BinaryOp, Expr, Handle, Literal, UnaryOp};

/// A linear form over atoms: the constant and the coefficient of each atom
/// (a variable no `let` binds, or an opaque expression).
#[derive(Clone, Debug, Default)]
struct Lin {
    c: i128,
    terms: BTreeMap<Atom, i128>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Atom {
    Var(u32),
    Expr(u32),
}

impl Lin {
    fn constant(c: i128) -> Lin {
        Lin {
            c,
            terms: BTreeMap::new(),
        }
    }

    fn atom(a: Atom) -> Lin {
        Lin {
            c: 0,
            terms: BTreeMap::from([(a, 1)]),
        }
    }

    fn add(mut self, other: &Lin, sign: i128) -> Option<Lin> {
        self.c = self.c.checked_add(other.c.checked_mul(sign)?)?;
        for (&a, &k) in &other.terms {
            let e = self.terms.entry(a).or_insert(0);
            *e = e.checked_add(k.checked_mul(sign)?)?;
            if *e == 0 {
                self.terms.remove(&a);
            }
        }
        Some(self)
    }

    fn scale(mut self, k: i128) -> Option<Lin> {
        self.c = self.c.checked_mul(k)?;
        for v in self.terms.values_mut() {
            *v = v.checked_mul(k)?;
        }
        self.terms.retain(|_, v| *v != 0);
        Some(self)
    }
}

/// Reads integer expressions of one function as linear forms.
struct Folder<'f> {
    f: &'f ir::Function,
    /// The value of each variable bound by exactly one `let`.
    lets: HashMap<Handle<ir::Var>, Handle<Expr>>,
}

/// How deep a chain of binds and operations is followed.
const MAX_DEPTH: u32 = 64;

impl Folder<'_> {
    fn linear(&self, e: Handle<Expr>, depth: u32) -> Option<Lin> {
        if depth > MAX_DEPTH {
            return None;
        }
        let ty = self.f.ty(e);
        if !ty.is_int() {
            return None;
        }
        let opaque = Lin::atom(Atom::Expr(e.index() as u32));
        let same = |h: Handle<Expr>| self.f.ty(h) == ty;
        Some(match &self.f.exprs[e] {
            Expr::Literal(Literal::Int(v, _)) => Lin::constant(i128::from(*v)),
            Expr::Var(v) => match self.lets.get(v) {
                Some(&value) if same(value) => self.linear(value, depth + 1)?,
                _ => Lin::atom(Atom::Var(v.index() as u32)),
            },
            Expr::Unary {
                op: UnaryOp::Neg,
                arg,
            } if same(*arg) => self.linear(*arg, depth + 1)?.scale(-1)?,
            Expr::Binary { op, lhs, rhs } if same(*lhs) && same(*rhs) => match op {
                BinaryOp::Add | BinaryOp::Sub => {
                    let sign = if *op == BinaryOp::Add { 1 } else { -1 };
                    let a = self.linear(*lhs, depth + 1)?;
                    let b = self.linear(*rhs, depth + 1)?;
                    a.add(&b, sign)?
                }
                BinaryOp::Mul => {
                    let a = self.linear(*lhs, depth + 1)?;
                    let b = self.linear(*rhs, depth + 1)?;
                    if a.terms.is_empty() {
                        b.scale(a.c)?
                    } else if b.terms.is_empty() {
                        a.scale(b.c)?
                    } else {
                        opaque
                    }
                }
                _ => opaque,
            },
            _ => opaque,
        })
    }

    /// The value of `e` when it is the same for every input, wrapped into
    /// its type.
    fn constant(&self, e: Handle<Expr>) -> Option<i64> {
        let lin = self.linear(e, 0)?;
        if !lin.terms.is_empty() {
            return None;
        }
        // Truncating to 64 bits and then to the type is the value modulo
        // `2^bits`, as the type's arithmetic wraps.
        Some(self.f.ty(e).wrap_i64(lin.c as i64))
    }
}

/// `stmt` (a kernel of `func`) with every region extent that folds to a
/// constant (module documentation) replaced by that literal, and the
/// function holding the new literals; `None` when nothing folds.
pub(super) fn fold_extents(
    func: &ir::Function,
    stmt: &ir::Stmt,
) -> Option<(ir::Function, ir::Stmt)> {
    let ir::Stmt::Kernel { body, .. } = stmt else {
        return None;
    };
    let mut lets = HashMap::new();
    let mut twice = Vec::new();
    let mut record = |s: &ir::Stmt, _| {
        if let ir::Stmt::Let { var, value } = s
            && lets.insert(*var, *value).is_some()
        {
            twice.push(*var);
        }
    };
    // The function's own binds (before its kernels), then the kernel's.
    for (s, span) in func.body.iter() {
        if matches!(s, ir::Stmt::Let { .. }) {
            record(s, span);
        }
    }
    body.walk(&mut record);
    for v in twice {
        lets.remove(&v);
    }
    let folder = Folder { f: func, lets };
    // The extents that fold, with their values.
    let mut folded: HashMap<Handle<Expr>, i64> = HashMap::new();
    body.walk(&mut |s, _| {
        for r in regions(s) {
            for range in &r.ranges {
                if func.as_const_int(range.extent).is_none()
                    && let Some(c) = folder.constant(range.extent)
                {
                    folded.insert(range.extent, c);
                }
            }
        }
    });
    if folded.is_empty() && !has_mismatched_copy(func, body) {
        return None;
    }
    let mut f = func.clone();
    let literals: HashMap<Handle<Expr>, Handle<Expr>> = folded
        .into_iter()
        .map(|(e, c)| {
            let ty = func.ty(e);
            (e, f.lit(Literal::Int(c, ty)))
        })
        .collect();
    let mut stmt = stmt.clone();
    let mut rewrite = |s: &mut ir::Stmt| {
        for r in regions_mut(s) {
            for range in &mut r.ranges {
                if let Some(&l) = literals.get(&range.extent) {
                    range.extent = l;
                }
            }
        }
    };
    rewrite(&mut stmt);
    if let ir::Stmt::Kernel { body, .. } = &mut stmt {
        body.walk_mut(&mut rewrite);
        body.walk_mut(&mut |s| {
            if let ir::Stmt::Copy { src, dst } = s
                && let Some((which, extents)) = base_extents(&f, src, dst)
            {
                let other = if which { dst } else { src };
                let mut next = extents.into_iter();
                for range in &mut other.ranges {
                    if f.as_const_int(range.extent) != Some(1)
                        && let Some(e) = next.next()
                    {
                        let ty = f.ty(range.extent);
                        range.extent = f.lit(Literal::Int(e, ty));
                    }
                }
            }
        });
    }
    Some((f, stmt))
}

/// Whether some copy of the kernel takes the extents of one side for the
/// other ([`base_extents`]).
fn has_mismatched_copy(func: &ir::Function, body: &ir::Block) -> bool {
    let mut any = false;
    body.walk(&mut |s, _| {
        if let ir::Stmt::Copy { src, dst } = s {
            any |= base_extents(func, src, dst).is_some();
        }
    });
    any
}

/// TileLang's rule for a copy whose regions differ in shape: it loops over
/// the extents of the side in the scope furthest from global memory
/// (global, then shared, then fragment and local; the source on a tie),
/// and the other side's non-unit dimensions take those extents in order,
/// from their own starts, bounded by their buffer only. Where that side's
/// extents are all constants and the other's are not, returns which side
/// it is (`true`: the source) and its non-unit extents; the interpreter's
/// copy applies the same rule at run time. `copy(A[0:n], S)` into a
/// 64-element shared `S` then becomes `copy(A[0:64], S)`: `A[i]` where
/// `i` is inside `A`, zero elsewhere.
fn base_extents(
    func: &ir::Function,
    src: &ir::Region,
    dst: &ir::Region,
) -> Option<(bool, Vec<i64>)> {
    let level = |r: &ir::Region| match func.buffers[r.buffer].scope {
        ir::Scope::Global => 0,
        ir::Scope::Shared | ir::Scope::Barrier => 1,
        ir::Scope::Fragment | ir::Scope::Local | ir::Scope::Var => 2,
    };
    let from_src = level(src) >= level(dst);
    let (base, other) = if from_src { (src, dst) } else { (dst, src) };
    let consts: Vec<i64> = base
        .ranges
        .iter()
        .map(|r| func.as_const_int(r.extent))
        .collect::<Option<_>>()?;
    if other
        .ranges
        .iter()
        .all(|r| func.as_const_int(r.extent).is_some())
    {
        return None;
    }
    let wanted: Vec<i64> = consts.into_iter().filter(|&e| e != 1).collect();
    let others = other
        .ranges
        .iter()
        .filter(|r| func.as_const_int(r.extent) != Some(1))
        .count();
    (wanted.len() == others).then_some((from_src, wanted))
}

/// The regions a tile operation names.
fn regions(s: &ir::Stmt) -> Vec<&ir::Region> {
    match s {
        ir::Stmt::Copy { src, dst } => vec![src, dst],
        ir::Stmt::Gemm { a, b, c, .. } => vec![a, b, c],
        ir::Stmt::Fill { dst, .. } => vec![dst],
        ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => match value {
            ir::AtomicValue::Region(r) => vec![dst, r],
            ir::AtomicValue::Scalar(_) => vec![dst],
        },
        _ => Vec::new(),
    }
}

fn regions_mut(s: &mut ir::Stmt) -> Vec<&mut ir::Region> {
    match s {
        ir::Stmt::Copy { src, dst } => vec![src, dst],
        ir::Stmt::Gemm { a, b, c, .. } => vec![a, b, c],
        ir::Stmt::Fill { dst, .. } => vec![dst],
        ir::Stmt::AtomicAdd { dst, value } | ir::Stmt::Atomic { dst, value, .. } => match value {
            ir::AtomicValue::Region(r) => vec![dst, r],
            ir::AtomicValue::Scalar(_) => vec![dst],
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, VarKind};

    #[test]
    fn differences_of_binds_fold_and_others_do_not() {
        let mut f = ir::Function::new("k");
        let x = f.add_var("x", DType::I32, VarKind::Symbolic);
        let h0 = f.add_var("h0", DType::I32, VarKind::Let);
        let h1 = f.add_var("h1", DType::I32, VarKind::Let);
        let xe = f.var_expr(x);
        let c3 = f.int(3);
        let bin = |f: &mut ir::Function, op, lhs, rhs| {
            f.add_expr(Expr::Binary { op, lhs, rhs }).expect("typed")
        };
        let v0 = bin(&mut f, BinaryOp::Mul, xe, c3);
        let h0e = f.var_expr(h0);
        let c64 = f.int(64);
        let v1 = bin(&mut f, BinaryOp::Add, h0e, c64);
        let h1e = f.var_expr(h1);
        let h0e2 = f.var_expr(h0);
        let diff = bin(&mut f, BinaryOp::Sub, h1e, h0e2);
        let xe2 = f.var_expr(x);
        let other = bin(&mut f, BinaryOp::Sub, h1e, xe2);
        let lets = HashMap::from([(h0, v0), (h1, v1)]);
        let folder = Folder { f: &f, lets };
        assert_eq!(folder.constant(diff), Some(64));
        // h1 - x = 2x + 64: not constant.
        assert_eq!(folder.constant(other), None);
    }

    #[test]
    fn kernel_regions_between_binds_get_literal_extents() {
        let module = crate::text::parse_module(
            "tile_ir 0.1

func @k(%A: global f32[64, 24], %B: global f32[64, 24]) {
  kernel grid(2, 2) threads(32) block(%bx, %by) thread(%tx) {
    alloc %S: shared f32[16, 24]
    let %H0: i32 = %by * 32 + %bx * 16
    let %H1: i32 = %H0 + 16
    copy %A[%H0 +: %H0 * -1 + %H1, 0 +: 24] -> %S[0 +: 16, 0 +: 24]
    copy %S[0 +: 16, 0 +: 24] -> %B[%H0 +: %H1 - %bx, 0 +: 24]
  }
}
",
        )
        .expect("parses");
        let f = &module.functions[0];
        let (g, stmt) = fold_extents(f, &f.body.stmts[0]).expect("folds");
        let ir::Stmt::Kernel { body, .. } = &stmt else {
            panic!("a kernel");
        };
        let ir::Stmt::Copy { src, .. } = &body.stmts[3] else {
            panic!("a copy");
        };
        assert_eq!(g.as_const_int(src.ranges[0].extent), Some(16));
        // `H1 - bx` depends on the block: not folded, but the copy then
        // takes the shared side's extents (TileLang's rule, `base_extents`).
        let ir::Stmt::Copy { dst, .. } = &body.stmts[4] else {
            panic!("a copy");
        };
        assert_eq!(g.as_const_int(dst.ranges[0].extent), Some(16));
    }
}
