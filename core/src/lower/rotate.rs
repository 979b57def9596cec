//! `T.Pipelined` loops rotated as their `order`/`stage` lists ask.
//!
//! # When
//! A loop whose lists have the rotated form (`ir::lists`, "Rotated
//! loops"): producers (copies into shared memory) at negative stages and
//! consumers at several stages or ranked out of program order, FA3's
//! attention loop for one, where `Q·Kᵀ` of key block `k` is issued before
//! the rescale and `P·V` of block `k − 1` and the softmax of block `k`
//! after them. `ir::lists` has checked that the rotation keeps every two
//! dependent statement instances in order.
//!
//! # The rewrite
//! With `D` the largest stage and `σᵢ` statement `i`'s, the loop over `k`
//! in `start .. start + n` becomes one pipelined loop without lists over
//! `j` in `start .. start + n + D` whose body is every statement for
//! iteration `k = j − σᵢ`, in rank order. A consumer runs under `if start
//! ≤ j − σᵢ < start + n` (the first and last `D` iterations run only part
//! of the body: the rotated loop's prologue and epilogue); a producer
//! runs unguarded: a copy of an iteration outside the loop reads nothing
//! (its tile lies outside the tensor, or the out-of-bounds rule fills it
//! with zeros) and, as the rotation keeps the order of every two
//! instances touching one buffer, comes before (or after) everything that
//! reads its destination. Keeping the producers unguarded and in the loop
//! lets the lowering pipeline them as in any loop (`pipeline.rs`: copies
//! of iteration `j − σᵢ` issued ahead into stages), and the shared
//! buffers stay used only inside the loop. The loop keeps its variable
//! (now `j`), stage count and schedule, so a pin on it applies; every
//! statement appears once, so no variable is bound twice.
//!
//! # Peeling
//! Every guard holds in the iterations `start + D ≤ j < start + n`: only
//! the first and last `D` iterations need them. With each loop the
//! rewrite returns a [`Peel`]: its depth and its guards, so that the
//! pipeline lowering (`pipeline.rs`, "Rotated loops") can run those
//! iterations as the loop's *middle*, without the guards: a body of the
//! form the pipeline's specializations take (a producer warp group,
//! ping-pong turns), as in the loop without lists. [`Peel::plain`] is
//! that body at the Tile IR level, for the choices made on it.

use std::collections::{HashMap, HashSet};

use super::ir;
use crate::ir::lists::ListForm;
use crate::ir::{BinaryOp, Block, Expr, Function, Handle, Literal, LoopKind, Stmt, Var};

/// A rotated loop's guards (module documentation, "Peeling").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Peel {
    /// The rotation's depth `D`: how many iterations at each end of the
    /// loop run part of the body.
    pub(super) depth: i64,
    /// The conditions of the `if`s that guard the consumers.
    pub(super) guards: HashSet<Handle<Expr>>,
}

impl Peel {
    /// `body` (the rotated loop's, statements in place) with every guard
    /// replaced by the statement it guards: what the iterations `start +
    /// D ≤ j < start + n` run.
    pub(super) fn plain(&self, body: &Block) -> Block {
        let mut out = Block::new();
        for (s, &span) in body.stmts.iter().zip(&body.spans) {
            match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } if self.guards.contains(cond)
                    && then.stmts.len() == 1
                    && otherwise.stmts.is_empty() =>
                {
                    out.push(then.stmts[0].clone(), span);
                }
                other => out.push(other.clone(), span),
            }
        }
        out
    }
}

/// The rotated loops of a kernel, by loop variable.
pub(super) type Peels = HashMap<Handle<Var>, Peel>;

/// `kernel` of `func` with its rotated loops written out (module
/// documentation), as a new function and kernel statement, with each
/// rotated loop's [`Peel`]; `None` when no loop of the kernel has rotated
/// lists.
pub(super) fn rotate_loops(func: &Function, kernel: &Stmt) -> Option<(Function, Stmt, Peels)> {
    let Stmt::Kernel { body: kbody, .. } = kernel else {
        return None;
    };
    let mut any = false;
    kbody.walk(&mut |s, _| {
        any |= matches!(ir::lists::loop_form(s, func), Some(ListForm::Rotated(_)));
    });
    if !any {
        return None;
    }
    let mut f = func.clone();
    let mut stmt = kernel.clone();
    let Stmt::Kernel { body, .. } = &mut stmt else {
        return None;
    };
    let mut peels = Peels::new();
    rotate_block(&mut f, body, &mut peels).ok()?;
    Some((f, stmt, peels))
}

/// Rewrites the rotated loops of `block` and of the blocks inside it.
fn rotate_block(
    f: &mut Function,
    block: &mut Block,
    peels: &mut Peels,
) -> Result<(), ir::TypeError> {
    let old = std::mem::take(block);
    for (mut stmt, span) in old.stmts.into_iter().zip(old.spans) {
        if matches!(
            stmt,
            Stmt::For {
                kind: LoopKind::Pipelined { .. },
                ..
            }
        ) {
            let rotated = rotate_loop(f, stmt, peels)?;
            block.push(rotated, span);
            continue;
        }
        match &mut stmt {
            Stmt::For { body, .. } | Stmt::Parallel { body, .. } | Stmt::Role { body, .. } => {
                rotate_block(f, body, peels)?;
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                rotate_block(f, then, peels)?;
                rotate_block(f, otherwise, peels)?;
            }
            _ => {}
        }
        block.push(stmt, span);
    }
    Ok(())
}

/// What a pipelined loop becomes: itself when its lists are not rotated,
/// else the rotated loop (module documentation).
fn rotate_loop(f: &mut Function, stmt: Stmt, peels: &mut Peels) -> Result<Stmt, ir::TypeError> {
    let Some(ListForm::Rotated(r)) = ir::lists::loop_form(&stmt, f) else {
        return Ok(stmt);
    };
    let Stmt::For {
        var,
        start,
        extent,
        kind:
            LoopKind::Pipelined {
                num_stages,
                schedule,
                ..
            },
        body,
    } = stmt
    else {
        return Ok(stmt);
    };
    let dtype = f.vars[var].dtype;
    let lit = |f: &mut Function, v: i64| f.lit(Literal::Int(v, dtype));
    let bin = |f: &mut Function, op, lhs, rhs| f.add_expr(Expr::Binary { op, lhs, rhs });
    let j = f.add_expr(Expr::Var(var))?;
    let end = bin(f, BinaryOp::Add, start, extent)?;
    let mut rotated = Block::new();
    let mut guards = HashSet::new();
    for &i in &r.issue {
        let sigma = r.stage[i];
        let (s, at) = (&body.stmts[i], body.spans[i]);
        let (k, s) = match sigma {
            0 => (j, s.clone()),
            _ => {
                let d = lit(f, sigma);
                let k = bin(f, BinaryOp::Sub, j, d)?;
                (k, crate::passes::substituted(f, s, var, k)?)
            }
        };
        if r.producer[i] {
            rotated.push(s, at);
            continue;
        }
        // start ≤ k < start + n; the first half always holds at stage 0.
        let below = bin(f, BinaryOp::Lt, k, end)?;
        let cond = match sigma {
            0 => below,
            _ => {
                let above = bin(f, BinaryOp::Ge, k, start)?;
                bin(f, BinaryOp::And, above, below)?
            }
        };
        guards.insert(cond);
        let mut then = Block::new();
        then.push(s, at);
        rotated.push(
            Stmt::If {
                cond,
                then,
                otherwise: Block::new(),
            },
            at,
        );
    }
    let extent = match f.as_const_int(extent) {
        Some(n) => lit(f, n + r.depth),
        None => {
            let d = lit(f, r.depth);
            bin(f, BinaryOp::Add, extent, d)?
        }
    };
    peels.insert(
        var,
        Peel {
            depth: r.depth,
            guards,
        },
    );
    Ok(Stmt::For {
        var,
        start,
        extent,
        kind: LoopKind::Pipelined {
            num_stages,
            order: None,
            stage: None,
            schedule,
        },
        body: rotated,
    })
}
