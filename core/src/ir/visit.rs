//! Shared walks and rewrites of Tile IR expressions: visiting every
//! expression handle a statement holds ([`for_each_expr_mut`],
//! [`expr_operands`]), substituting a variable ([`substitute`],
//! [`substituted`]), replaying scalar binds into the statements after them
//! ([`replay_binds`]) and dropping unreachable expressions
//! ([`compact_exprs`]). They live here, beside the IR, so that the front
//! end, the passes and the lowering use one copy each.

use super::{AtomicValue, Block, Expr, Function, Handle, Region, Span, Stmt};

/// Substitutes the replayable binds of `body` (scalar `let`s whose values
/// read no buffer the block writes, `ir::lists::replayable_binds`) into
/// the statements after them and drops them; returns, for each statement
/// the body had, whether it was one. The front end does this for a
/// pipelined loop's body, the lowering for a function's body (binds
/// between kernels).
pub fn replay_binds(f: &mut Function, body: &mut Block) -> Result<Vec<bool>, super::TypeError> {
    let binds = super::lists::replayable_binds(body, f);
    replay_binds_where(f, body, binds)
}

/// [`replay_binds`] of the `let`s that `binds` marks (one flag per
/// statement of `body`).
pub fn replay_binds_where(
    f: &mut Function,
    body: &mut Block,
    binds: Vec<bool>,
) -> Result<Vec<bool>, super::TypeError> {
    if !binds.contains(&true) {
        return Ok(binds);
    }
    let old = std::mem::take(body);
    let mut stmts: Vec<(Stmt, Span)> = old.stmts.into_iter().zip(old.spans).collect();
    for i in 0..stmts.len() {
        let Stmt::Let { var, value } = stmts[i].0 else {
            continue;
        };
        if !binds[i] {
            continue;
        }
        for later in stmts.iter_mut().skip(i + 1) {
            later.0 = substituted(f, &later.0, var, value)?;
        }
    }
    for ((stmt, span), bind) in stmts.into_iter().zip(&binds) {
        if !bind {
            body.push(stmt, span);
        }
    }
    Ok(binds)
}

/// `stmt` with `var` replaced by `with` in every expression it holds
/// (binders kept: the copy replaces the original).
pub fn substituted(
    f: &mut Function,
    stmt: &Stmt,
    var: Handle<super::Var>,
    with: Handle<Expr>,
) -> Result<Stmt, super::TypeError> {
    let mut block = Block::new();
    block.push(stmt.clone(), Default::default());
    let mut failed = None;
    for_each_expr_mut(&mut block, &mut |h| match substitute(f, *h, var, with) {
        Ok(e) => *h = e,
        Err(e) => failed = Some(e),
    });
    match (failed, block.stmts.pop()) {
        (Some(e), _) => Err(e),
        (None, Some(s)) => Ok(s),
        (None, None) => Ok(stmt.clone()),
    }
}

/// `e` with `var` replaced by `with` (shared subexpressions without it
/// are kept).
pub fn substitute(
    f: &mut Function,
    e: Handle<Expr>,
    var: Handle<super::Var>,
    with: Handle<Expr>,
) -> Result<Handle<Expr>, super::TypeError> {
    let sub = |f: &mut Function, x| substitute(f, x, var, with);
    let new = match f.exprs[e].clone() {
        Expr::Literal(_) => return Ok(e),
        Expr::Var(v) => return Ok(if v == var { with } else { e }),
        Expr::Unary { op, arg } => Expr::Unary {
            op,
            arg: sub(f, arg)?,
        },
        Expr::Binary { op, lhs, rhs } => Expr::Binary {
            op,
            lhs: sub(f, lhs)?,
            rhs: sub(f, rhs)?,
        },
        Expr::Select {
            cond,
            then,
            otherwise,
        } => Expr::Select {
            cond: sub(f, cond)?,
            then: sub(f, then)?,
            otherwise: sub(f, otherwise)?,
        },
        Expr::Cast { dtype, arg } => Expr::Cast {
            dtype,
            arg: sub(f, arg)?,
        },
        Expr::Bitcast { dtype, arg } => Expr::Bitcast {
            dtype,
            arg: sub(f, arg)?,
        },
        Expr::Load { buffer, indices } => Expr::Load {
            buffer,
            indices: indices
                .into_iter()
                .map(|i| sub(f, i))
                .collect::<Result<_, _>>()?,
        },
    };
    if new == f.exprs[e] {
        return Ok(e);
    }
    f.add_expr(new)
}

/// Calls `visit` on every expression handle held by the statements of
/// `block`, recursively: conditions, bounds, indices, values, region starts
/// and extents, grid extents and `alloc` initializers. Buffer shapes live in
/// the buffer arena and are not visited.
pub fn for_each_expr_mut(block: &mut Block, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    for stmt in &mut block.stmts {
        stmt_exprs_mut(stmt, visit);
    }
}

fn region_exprs_mut(region: &mut Region, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    for range in &mut region.ranges {
        visit(&mut range.start);
        visit(&mut range.extent);
    }
}

fn stmt_exprs_mut(stmt: &mut Stmt, visit: &mut dyn FnMut(&mut Handle<Expr>)) {
    match stmt {
        Stmt::Kernel { grid, body, .. } => {
            grid.iter_mut().for_each(&mut *visit);
            for_each_expr_mut(body, visit);
        }
        Stmt::Alloc { init, .. } => {
            if let Some(init) = init {
                visit(init);
            }
        }
        Stmt::For {
            start,
            extent,
            body,
            ..
        } => {
            visit(start);
            visit(extent);
            for_each_expr_mut(body, visit);
        }
        Stmt::Parallel { extents, body, .. } => {
            extents.iter_mut().for_each(&mut *visit);
            for_each_expr_mut(body, visit);
        }
        Stmt::If {
            cond,
            then,
            otherwise,
        } => {
            visit(cond);
            for_each_expr_mut(then, visit);
            for_each_expr_mut(otherwise, visit);
        }
        Stmt::Let { value, .. } => visit(value),
        Stmt::Store { indices, value, .. } | Stmt::WarpReduce { indices, value, .. } => {
            indices.iter_mut().for_each(&mut *visit);
            visit(value);
        }
        Stmt::Copy { src, dst } => {
            region_exprs_mut(src, visit);
            region_exprs_mut(dst, visit);
        }
        Stmt::Gemm {
            a,
            b,
            c,
            clear_accum,
            ..
        } => {
            region_exprs_mut(a, visit);
            region_exprs_mut(b, visit);
            region_exprs_mut(c, visit);
            visit(clear_accum);
        }
        Stmt::Fill { dst, value } => {
            region_exprs_mut(dst, visit);
            visit(value);
        }
        Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
            region_exprs_mut(dst, visit);
            match value {
                AtomicValue::Scalar(e) => visit(e),
                AtomicValue::Region(r) => region_exprs_mut(r, visit),
            }
        }
        Stmt::Assume { cond } | Stmt::DeviceAssert { cond } => visit(cond),
        Stmt::Reduce { .. } | Stmt::Cumsum { .. } | Stmt::Barrier | Stmt::AllocBarrier { .. } => {}
        Stmt::Role { body, .. } => for_each_expr_mut(body, visit),
        Stmt::BarrierArrive { index, .. } => visit(index),
        Stmt::BarrierWait { index, parity, .. } => {
            visit(index);
            visit(parity);
        }
    }
}

/// The operands of an expression, in order.
pub fn expr_operands(expr: &Expr) -> Vec<Handle<Expr>> {
    match expr {
        Expr::Literal(_) | Expr::Var(_) => Vec::new(),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => vec![*arg],
        Expr::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        Expr::Select {
            cond,
            then,
            otherwise,
        } => vec![*cond, *then, *otherwise],
        Expr::Load { indices, .. } => indices.clone(),
    }
}

fn map_operands(expr: &mut Expr, map: &dyn Fn(Handle<Expr>) -> Handle<Expr>) {
    match expr {
        Expr::Literal(_) | Expr::Var(_) => {}
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => {
            *arg = map(*arg)
        }
        Expr::Binary { lhs, rhs, .. } => {
            *lhs = map(*lhs);
            *rhs = map(*rhs);
        }
        Expr::Select {
            cond,
            then,
            otherwise,
        } => {
            *cond = map(*cond);
            *then = map(*then);
            *otherwise = map(*otherwise);
        }
        Expr::Load { indices, .. } => {
            for i in indices {
                *i = map(*i);
            }
        }
    }
}

/// Removes the expressions that no statement and no buffer shape reaches,
/// keeping the order of the others (so operands still precede their users)
/// and their recorded types. Handles that point outside the arena are left
/// as they are, for the verifier to report.
pub fn compact_exprs(f: &mut Function) {
    let count = f.exprs.len();
    if f.expr_types.len() != count {
        return;
    }
    let mut live = vec![false; count];
    let mut roots: Vec<Handle<Expr>> = Vec::new();
    for (_, buffer) in f.buffers.iter() {
        roots.extend(buffer.shape.iter().copied());
    }
    for_each_expr_mut(&mut f.body, &mut |h| roots.push(*h));
    while let Some(h) = roots.pop() {
        let Some(expr) = f.exprs.try_get(h) else {
            continue;
        };
        if std::mem::replace(&mut live[h.index()], true) {
            continue;
        }
        roots.extend(expr_operands(expr));
    }
    if live.iter().all(|&l| l) {
        return;
    }
    let mut new_index: Vec<Option<Handle<Expr>>> = vec![None; count];
    let mut next = 0;
    for (i, &l) in live.iter().enumerate() {
        if l {
            new_index[i] = Some(Handle::from_index(next));
            next += 1;
        }
    }
    let map = |h: Handle<Expr>| new_index.get(h.index()).copied().flatten().unwrap_or(h);
    let old_exprs = std::mem::take(&mut f.exprs);
    let old_types = std::mem::take(&mut f.expr_types);
    for ((h, expr), ty) in old_exprs.iter().zip(old_types) {
        if live[h.index()] {
            let mut expr = expr.clone();
            map_operands(&mut expr, &map);
            f.exprs.append(expr);
            f.expr_types.push(ty);
        }
    }
    let buffers: Vec<_> = f.buffers.iter().map(|(h, _)| h).collect();
    for b in buffers {
        for e in &mut f.buffers[b].shape {
            *e = map(*e);
        }
    }
    for_each_expr_mut(&mut f.body, &mut |h| *h = map(*h));
}
