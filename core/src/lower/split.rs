//! Blocks split by hand on the thread index.
//!
//! TileLang's hand-written warp-specialized kernels split the block with
//! an `if` chain on the thread index (`tx = T.get_thread_binding()`, then
//! `if tx < 128: ... elif tx < 256: ... else: ...`) and synchronise the
//! branches through phased barriers. TileLang's meaning of such a branch
//! is a role's: its tile operations run on the branch's threads alone,
//! with layouts and gemm warp partitions for that many threads (its
//! layout inference takes each operation's thread bounds from the
//! enclosing condition). So a chain whose branches each keep a run of
//! whole warp groups is rewritten here into `T.ws` roles (`roles.rs`),
//! one per branch, in order: a thread of one branch skips the others
//! either way. The branches then get what roles get: fragments in the
//! registers of their threads, gemms split among their warps, their own
//! numbered barriers.
//!
//! The rewrite is only tried where it keeps to what roles ask (every
//! branch of every chain in the kernel the same number of threads, a
//! kernel without `T.ws` of its own, at least one branch holding a tile
//! operation); the caller lowers the original kernel, as thread-guarded
//! regions (`guard.rs`), when the rewritten one is refused.

use super::guard::Ranges;
use crate::ir::{self, Handle};
use std::collections::HashMap;

/// Threads of a warp group, the unit of `T.ws` roles.
const WARP_GROUP: i64 = 128;

/// A run of threads `lo .. hi` and the statements they run.
type Branch = ((i64, i64), ir::Block);

/// The kernel `stmt` with its `if` chains on whole warp groups of the
/// thread index rewritten into roles (module documentation), or `None`
/// when there is nothing to rewrite or the rewritten kernel could not
/// take roles.
pub(super) fn guards_as_roles(func: &ir::Function, stmt: &ir::Stmt) -> Option<ir::Stmt> {
    let ir::Stmt::Kernel {
        grid,
        threads,
        block_vars,
        thread_var,
        order,
        body,
    } = stmt
    else {
        return None;
    };
    if stmt.holds_role() {
        return None;
    }
    let mut lets = HashMap::new();
    body.walk(&mut |s, _| {
        if let ir::Stmt::Let { var, value } = s
            && reads(func, *value, *thread_var, &lets)
        {
            lets.insert(*var, *value);
        }
    });
    let ranges = Ranges {
        f: func,
        thread_var: *thread_var,
        lets: &lets,
        threads: i64::from(*threads),
    };
    let mut sizes = Vec::new();
    let body = rewrite(&ranges, body, &mut sizes);
    let size = *sizes.first()?;
    if sizes.iter().any(|&s| s != size) {
        return None;
    }
    Some(ir::Stmt::Kernel {
        grid: grid.clone(),
        threads: *threads,
        block_vars: block_vars.clone(),
        thread_var: *thread_var,
        order: *order,
        body,
    })
}

/// Whether `e` reads the thread variable or a `let` computed from it.
fn reads(
    f: &ir::Function,
    e: Handle<ir::Expr>,
    tx: Handle<ir::Var>,
    lets: &HashMap<Handle<ir::Var>, Handle<ir::Expr>>,
) -> bool {
    match &f.exprs[e] {
        ir::Expr::Literal(_) => false,
        ir::Expr::Var(v) => *v == tx || lets.contains_key(v),
        ir::Expr::Unary { arg, .. }
        | ir::Expr::Cast { arg, .. }
        | ir::Expr::Bitcast { arg, .. } => reads(f, *arg, tx, lets),
        ir::Expr::Binary { lhs, rhs, .. } => reads(f, *lhs, tx, lets) || reads(f, *rhs, tx, lets),
        ir::Expr::Select {
            cond,
            then,
            otherwise,
        } => {
            reads(f, *cond, tx, lets) || reads(f, *then, tx, lets) || reads(f, *otherwise, tx, lets)
        }
        ir::Expr::Load { indices, .. } => indices.iter().any(|&i| reads(f, i, tx, lets)),
    }
}

fn has_tile(block: &ir::Block) -> bool {
    let mut found = false;
    block.walk(&mut |s, _| {
        found |= matches!(
            s,
            ir::Stmt::Parallel { .. }
                | ir::Stmt::Copy { .. }
                | ir::Stmt::Fill { .. }
                | ir::Stmt::Gemm { .. }
                | ir::Stmt::Reduce { .. }
                | ir::Stmt::Cumsum { .. }
                | ir::Stmt::AtomicAdd { .. }
                | ir::Stmt::Atomic { .. }
        );
    });
    found
}

/// `block` with its chains rewritten; the threads of every role made are
/// pushed onto `sizes`.
fn rewrite(ranges: &Ranges<'_>, block: &ir::Block, sizes: &mut Vec<i64>) -> ir::Block {
    let mut out = ir::Block::default();
    for (stmt, &span) in block.stmts.iter().zip(&block.spans) {
        match stmt {
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } if ranges.of(*cond).is_some() => {
                let whole = (0, ranges.threads);
                match chain(ranges, *cond, then, otherwise, whole) {
                    Some(branches)
                        if branches.iter().any(|(_, b)| has_tile(b))
                            && branches.iter().all(|&((lo, hi), _)| {
                                lo < hi && lo % WARP_GROUP == 0 && hi % WARP_GROUP == 0
                            }) =>
                    {
                        for ((lo, hi), body) in branches {
                            sizes.push(hi - lo);
                            let groups = (lo / WARP_GROUP..hi / WARP_GROUP)
                                .map(|g| g as u32)
                                .collect();
                            out.stmts.push(ir::Stmt::Role { groups, body });
                            out.spans.push(span);
                        }
                    }
                    _ => {
                        out.stmts.push(stmt.clone());
                        out.spans.push(span);
                    }
                }
            }
            ir::Stmt::For {
                var,
                start,
                extent,
                kind,
                body,
            } => {
                out.stmts.push(ir::Stmt::For {
                    var: *var,
                    start: *start,
                    extent: *extent,
                    kind: kind.clone(),
                    body: rewrite(ranges, body, sizes),
                });
                out.spans.push(span);
            }
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } if !reads(ranges.f, *cond, ranges.thread_var, ranges.lets) => {
                out.stmts.push(ir::Stmt::If {
                    cond: *cond,
                    then: rewrite(ranges, then, sizes),
                    otherwise: rewrite(ranges, otherwise, sizes),
                });
                out.spans.push(span);
            }
            _ => {
                out.stmts.push(stmt.clone());
                out.spans.push(span);
            }
        }
    }
    out
}

/// The branches of the chain `if cond: then else: otherwise` run by the
/// threads `outer`, each with its threads; `None` when a branch's threads
/// are not a range.
fn chain(
    ranges: &Ranges<'_>,
    cond: Handle<ir::Expr>,
    then: &ir::Block,
    otherwise: &ir::Block,
    (t0, t1): (i64, i64),
) -> Option<Vec<Branch>> {
    let (a, b) = ranges.of(cond)?;
    let (lo, hi) = (a.max(t0), b.min(t1).max(a.max(t0)));
    let rest = if lo == hi {
        (t0, t1)
    } else if lo == t0 {
        (hi, t1)
    } else if hi == t1 {
        (t0, lo)
    } else {
        return None;
    };
    let mut branches = Vec::new();
    if !then.stmts.is_empty() && lo < hi {
        branches.push(((lo, hi), then.clone()));
    }
    match otherwise.stmts.as_slice() {
        [] => {}
        [
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            },
        ] if ranges.of(*cond).is_some() => {
            branches.extend(chain(ranges, *cond, then, otherwise, rest)?);
        }
        _ if rest.0 < rest.1 => branches.push((rest, otherwise.clone())),
        _ => {}
    }
    Some(branches)
}
