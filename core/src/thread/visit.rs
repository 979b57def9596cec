//! Walks over thread-level statements: the expressions a statement holds
//! and the registers it reads and writes (what transformations that move
//! statements, such as hoisting and the producer's copy of a loop, need).

use std::collections::HashSet;

use super::{AsyncA, Expr, ExprKind, Guard, RegId, RegRef, Stmt, StmtKind};

/// The expression walk of a statement, by shared or by mutable reference
/// (one body for [`for_each_own_expr`] and [`for_each_own_expr_mut`]).
macro_rules! own_exprs {
    ($(#[$doc:meta])* $name:ident $(, $m:tt)?) => {
        $(#[$doc])*
        pub fn $name(s: &$($m)? Stmt, f: &mut dyn FnMut(&$($m)? Expr)) {
            let reg_ref = |r: &$($m)? RegRef, f: &mut dyn FnMut(&$($m)? Expr)| {
                if let RegRef::Elem(_, i) = r {
                    f(i);
                }
            };
            let guard = |g: &$($m)? Option<Guard>, f: &mut dyn FnMut(&$($m)? Expr)| {
                if let Some(g) = g {
                    f(&$($m)? g.cond);
                }
            };
            match &$($m)? s.kind {
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
                StmtKind::Atomic {
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
                        f(&$($m)? m.index);
                    }
                    f(&$($m)? b.index);
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
                StmtKind::AsyncCopyArrive { index, .. } => f(index),
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
                StmtKind::MatrixLoad { index, .. } | StmtKind::MatrixStore { index, .. } => f(index),
                StmtKind::For {
                    start, count, step, ..
                } => {
                    f(start);
                    f(count);
                    f(step);
                }
                StmtKind::If { cond, .. } => f(cond),
                StmtKind::Mma { .. }
                | StmtKind::CommitGroup
                | StmtKind::WaitGroup { .. }
                | StmtKind::Barrier
                | StmtKind::SetMaxRegisters { .. }
                | StmtKind::AsyncMmaFence
                | StmtKind::Trap
                | StmtKind::AsyncMmaCommit
                | StmtKind::AsyncMmaWait { .. } => {}
            }
        }
    };
}

own_exprs!(
    /// Calls `f` on every expression statement `s` holds itself, not those
    /// of the statements nested in it.
    for_each_own_expr
);

own_exprs!(
    /// [`for_each_own_expr`] with mutable access to each expression.
    for_each_own_expr_mut, mut
);

/// Replaces every read of register `from` in `body` (nested statements
/// included) by a read of `to`, a register of the same type.
pub fn rename_reg(body: &mut [Stmt], from: RegId, to: RegId) {
    fn expr(e: &mut Expr, from: RegId, to: RegId) {
        match &mut e.kind {
            ExprKind::Reg(r) if *r == from => *r = to,
            ExprKind::Elem(r, a) => {
                if *r == from {
                    *r = to;
                }
                expr(a, from, to);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => expr(a, from, to),
            ExprKind::Binary(_, a, b) => {
                expr(a, from, to);
                expr(b, from, to);
            }
            ExprKind::Select(c, a, b) => {
                expr(c, from, to);
                expr(a, from, to);
                expr(b, from, to);
            }
            ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) | ExprKind::Reg(_) => {
            }
        }
    }
    for s in body {
        for_each_own_expr_mut(s, &mut |e| expr(e, from, to));
        match &mut s.kind {
            StmtKind::For { body, .. } => rename_reg(body, from, to),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                rename_reg(then_body, from, to);
                if let Some(e) = else_body {
                    rename_reg(e, from, to);
                }
            }
            _ => {}
        }
    }
}

/// Adds every register `e` reads to `out`.
pub fn expr_regs(e: &Expr, out: &mut HashSet<RegId>) {
    for_each_subexpr(e, &mut |e| {
        if let ExprKind::Reg(r) | ExprKind::Elem(r, _) = &e.kind {
            out.insert(*r);
        }
    });
}

/// Calls `f` on `e` and on every expression inside it (operands, array
/// indices).
pub fn for_each_subexpr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        f(e);
        match &e.kind {
            ExprKind::Elem(_, a)
            | ExprKind::Unary(_, a)
            | ExprKind::Cast(a)
            | ExprKind::Bitcast(a) => stack.push(a),
            ExprKind::Binary(_, a, b) => {
                stack.push(a);
                stack.push(b);
            }
            ExprKind::Select(c, a, b) => {
                stack.push(c);
                stack.push(a);
                stack.push(b);
            }
            ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::Special(_) | ExprKind::Reg(_) => {
            }
        }
    }
}

/// Adds to `out` every register `body` reads: in expressions, as the
/// source of a store, and as matrix-atom operands (an `async_mma` counts
/// as reading its D, which it does unless `accumulate` is false).
pub fn reads(body: &[Stmt], out: &mut HashSet<RegId>) {
    for s in body {
        for_each_own_expr(s, &mut |e| expr_regs(e, out));
        match &s.kind {
            StmtKind::Store { src, .. } => {
                out.insert(src.reg());
            }
            StmtKind::MatrixStore { src, .. } => {
                out.insert(src.array);
            }
            StmtKind::Mma { a, b, c, .. } => {
                out.extend([a.array, b.array, c.array]);
            }
            StmtKind::AsyncMma { d, a, .. } => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::parse_module;

    const SRC: &str = "thread_ir 0.1

kernel @k(%A: global f32[64]) grid(1, 1, 1) threads(32) {
  shared %S: f32[64] align(16)
  var %x: f32
  var %y: f32
  var %n: i32
  local %v: f32[2]
  for %k from 0 count %n step 1 {
    %x = %y + cast<f32>(%k)
    load global x1 %v[%k % 2] <- %A[%k * 8 + thread_idx]
    if %k < 2 {
      store shared x1 %S[%k + thread_idx] <- %x
    }
  }
}
";

    #[test]
    fn reads_and_writes_see_nested_statements() {
        let module = parse_module(SRC).expect("test input parses");
        let kernel = &module.kernels[0];
        let reg = |name: &str| {
            RegId(
                kernel
                    .registers
                    .iter()
                    .position(|r| r.name == name)
                    .expect("register exists") as u32,
            )
        };
        let (k, x, y, n, v) = (reg("k"), reg("x"), reg("y"), reg("n"), reg("v"));
        let (mut r, mut w) = (HashSet::new(), HashSet::new());
        reads(&kernel.body, &mut r);
        writes(&kernel.body, &mut w);
        // The loop reads its count; its body `%k`, `%y` and, in the store
        // under the `if`, `%x`.
        assert_eq!(r, HashSet::from([n, k, x, y]));
        assert_eq!(w, HashSet::from([k, x, v]));
        let StmtKind::For { body, .. } = &kernel.body[0].kind else {
            panic!("the test kernel starts with its loop");
        };
        // Only the `if`'s own condition, not the store inside it.
        let mut own = HashSet::new();
        for_each_own_expr(&body[2], &mut |e| expr_regs(e, &mut own));
        assert_eq!(own, HashSet::from([k]));
    }
}
