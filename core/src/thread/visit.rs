//! Walks over thread-level statements: every expression a statement holds,
//! the registers it reads and writes, and the substitution of a register
//! by an expression (what transformations that move statements between
//! loop iterations need).

use std::collections::HashSet;

use super::{AsyncA, ExprKind, RegId, RegRef, Stmt, StmtKind};
use super::{Expr, Guard};
use crate::ir::{BinaryOp, DType};

/// Calls `f` on every expression `s` holds, those of nested statements
/// included, outermost first within a statement.
pub fn for_each_expr_mut(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    let reg_ref = |r: &mut RegRef, f: &mut dyn FnMut(&mut Expr)| {
        if let RegRef::Elem(_, i) = r {
            f(i);
        }
    };
    let guard = |g: &mut Option<Guard>, f: &mut dyn FnMut(&mut Expr)| {
        if let Some(g) = g {
            f(&mut g.cond);
        }
    };
    match &mut s.kind {
        StmtKind::Assign { dst, value } => {
            reg_ref(dst, f);
            f(value);
        }
        StmtKind::Load {
            dst,
            index,
            guard: g,
            ..
        } => {
            reg_ref(dst, f);
            f(index);
            guard(g, f);
        }
        StmtKind::Store {
            index,
            src,
            guard: g,
            ..
        } => {
            f(index);
            reg_ref(src, f);
            guard(g, f);
        }
        StmtKind::AsyncCopy {
            dst_index,
            src_index,
            guard: g,
            ..
        } => {
            f(dst_index);
            f(src_index);
            guard(g, f);
        }
        StmtKind::NamedBarrier { id, .. } => f(id),
        StmtKind::Shuffle {
            dst, value, lane, ..
        } => {
            reg_ref(dst, f);
            f(value);
            f(lane);
        }
        StmtKind::AtomicAdd {
            index,
            value,
            guard: g,
            ..
        } => {
            f(index);
            f(value);
            guard(g, f);
        }
        StmtKind::AsyncMma {
            a, b, accumulate, ..
        } => {
            if let AsyncA::Shared(m) = a {
                f(&mut m.index);
            }
            f(&mut b.index);
            f(accumulate);
        }
        StmtKind::MbarrierInit { index, count, .. } => {
            f(index);
            f(count);
        }
        StmtKind::MbarrierArrive { index, tx, .. } => {
            f(index);
            if let Some(tx) = tx {
                f(tx);
            }
        }
        StmtKind::MbarrierWait { index, parity, .. } => {
            f(index);
            f(parity);
        }
        StmtKind::TmaLoad {
            dst_index,
            coords,
            bar_index,
            ..
        } => {
            f(dst_index);
            for c in coords {
                f(c);
            }
            f(bar_index);
        }
        StmtKind::MatrixLoad { index, .. } => f(index),
        StmtKind::For {
            start,
            count,
            step,
            body,
            ..
        } => {
            f(start);
            f(count);
            f(step);
            for s in body {
                for_each_expr_mut(s, f);
            }
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            f(cond);
            for s in then_body.iter_mut().chain(else_body.iter_mut().flatten()) {
                for_each_expr_mut(s, f);
            }
        }
        StmtKind::Mma { .. }
        | StmtKind::CommitGroup
        | StmtKind::WaitGroup { .. }
        | StmtKind::Barrier
        | StmtKind::SetMaxRegisters { .. }
        | StmtKind::AsyncMmaFence
        | StmtKind::AsyncMmaCommit
        | StmtKind::AsyncMmaWait { .. } => {}
    }
}

/// Adds every register `e` reads to `out`.
pub fn expr_regs(e: &Expr, out: &mut HashSet<RegId>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Reg(r) => {
                out.insert(*r);
            }
            ExprKind::Elem(r, i) => {
                out.insert(*r);
                stack.push(i);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => stack.push(a),
            ExprKind::Binary(_, a, b) => {
                stack.push(a);
                stack.push(b);
            }
            ExprKind::Select(c, a, b) => {
                stack.push(c);
                stack.push(a);
                stack.push(b);
            }
            ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        }
    }
}

/// Adds to `out` every register `body` reads: in expressions, as the
/// source of a store, as matrix-atom operands (an accumulating
/// `async_mma` reads its D), and loop variables' own registers.
pub fn reads(body: &[Stmt], out: &mut HashSet<RegId>) {
    for s in body {
        let mut exprs = s.clone();
        for_each_expr_mut(&mut exprs, &mut |e| expr_regs(e, out));
        match &s.kind {
            StmtKind::Store { src, .. } => {
                out.insert(src.reg());
            }
            StmtKind::Mma { a, b, c, .. } => {
                out.extend([a.array, b.array, c.array]);
            }
            StmtKind::AsyncMma { d, a, .. } => {
                // D is read unless `accumulate` is a false literal; count
                // it read either way.
                out.insert(d.array);
                if let AsyncA::Registers(a) = a {
                    out.insert(a.array);
                }
            }
            StmtKind::For { body, .. } => reads(body, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                reads(then_body, out);
                if let Some(e) = else_body {
                    reads(e, out);
                }
            }
            _ => {}
        }
    }
}

/// Adds to `out` every register `body` writes (or binds as a loop
/// variable).
pub fn writes(body: &[Stmt], out: &mut HashSet<RegId>) {
    for s in body {
        match &s.kind {
            StmtKind::Assign { dst, .. }
            | StmtKind::Load { dst, .. }
            | StmtKind::Shuffle { dst, .. } => {
                out.insert(dst.reg());
            }
            StmtKind::Mma { d, .. } | StmtKind::AsyncMma { d, .. } => {
                out.insert(d.array);
            }
            StmtKind::MatrixLoad { dst, .. } => {
                out.insert(dst.array);
            }
            StmtKind::For { var, body, .. } => {
                out.insert(*var);
                writes(body, out);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                writes(then_body, out);
                if let Some(e) = else_body {
                    writes(e, out);
                }
            }
            _ => {}
        }
    }
}

/// Replaces every read of register `reg` in `body`'s expressions by
/// `with`, folding `i32` arithmetic that becomes constant. The caller
/// makes sure `body` does not write `reg`.
pub fn substitute(body: &mut [Stmt], reg: RegId, with: &Expr) {
    fn go(e: &mut Expr, reg: RegId, with: &Expr) {
        match &mut e.kind {
            ExprKind::Reg(r) if *r == reg => *e = with.clone(),
            ExprKind::Reg(_) | ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) => {
            }
            ExprKind::Elem(_, i) => go(i, reg, with),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => go(a, reg, with),
            ExprKind::Binary(op, a, b) => {
                go(a, reg, with);
                go(b, reg, with);
                if let Some(v) = fold(*op, a, b) {
                    *e = Expr::int(v);
                }
            }
            ExprKind::Select(c, a, b) => {
                go(c, reg, with);
                go(a, reg, with);
                go(b, reg, with);
            }
        }
    }
    /// `a op b` for two `i32` literals, where exact.
    fn fold(op: BinaryOp, a: &Expr, b: &Expr) -> Option<i32> {
        if a.dtype != DType::I32 || b.dtype != DType::I32 {
            return None;
        }
        let (x, y) = (a.as_const_int()?, b.as_const_int()?);
        let v = match op {
            BinaryOp::Add => x.checked_add(y),
            BinaryOp::Sub => x.checked_sub(y),
            BinaryOp::Mul => x.checked_mul(y),
            BinaryOp::FloorDiv if y > 0 => Some(x.div_euclid(y)),
            BinaryOp::FloorMod if y > 0 => Some(x.rem_euclid(y)),
            _ => None,
        }?;
        i32::try_from(v).ok()
    }
    for s in body {
        for_each_expr_mut(s, &mut |e| go(e, reg, with));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::{parse_module, print_module};

    const SRC: &str = "thread_ir 0.1

kernel @k(%A: global f32[64]) grid(1, 1, 1) threads(32) {
  shared %S: f32[64] align(16)
  var %x: f32
  var %y: f32
  var %i: i32
  local %v: f32[2]
  for %k from 0 count 4 step 1 {
    %x = %y + cast<f32>(%k)
    load global x1 %v[%k % 2] <- %A[%k * 8 + thread_idx]
    if %k < 2 {
      store shared x1 %S[%k + thread_idx] <- %x
    }
  }
}
";

    #[test]
    fn reads_writes_and_substitution_see_nested_statements() {
        let mut module = parse_module(SRC).expect("test input parses");
        let kernel = &mut module.kernels[0];
        let reg = |name: &str| {
            RegId(
                kernel
                    .registers
                    .iter()
                    .position(|r| r.name == name)
                    .expect("register exists") as u32,
            )
        };
        let (k, x, y, v) = (reg("k"), reg("x"), reg("y"), reg("v"));
        let StmtKind::For { body, .. } = &mut kernel.body[0].kind else {
            panic!("the test kernel starts with its loop");
        };
        let (mut r, mut w) = (HashSet::new(), HashSet::new());
        reads(body, &mut r);
        writes(body, &mut w);
        assert_eq!(r, HashSet::from([k, x, y]));
        assert_eq!(w, HashSet::from([x, v]));
        let next = Expr::binary(
            BinaryOp::Add,
            Expr {
                kind: ExprKind::Reg(k),
                dtype: DType::I32,
            },
            Expr::int(1),
        )
        .expect("well typed");
        substitute(body, k, &next);
        let printed = print_module(&module);
        assert!(printed.contains("%x = %y + cast<f32>(%k + 1)"), "{printed}");
        assert!(
            printed.contains("%v[(%k + 1) % 2] <- %A[(%k + 1) * 8 + thread_idx]"),
            "{printed}"
        );
        assert!(printed.contains("if %k + 1 < 2 {"), "{printed}");
        assert!(
            printed.contains("%S[%k + 1 + thread_idx] <- %x"),
            "{printed}"
        );
        let StmtKind::For { body, .. } = &mut module.kernels[0].body[0].kind else {
            panic!("the test kernel starts with its loop");
        };
        substitute(body, k, &Expr::int(6));
        let printed = print_module(&module);
        assert!(
            printed.contains("%v[1] <- %A[56 + thread_idx]"),
            "{printed}"
        );
        assert!(printed.contains("if 7 < 2 {"), "{printed}");
    }
}
