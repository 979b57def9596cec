//! Running one block as groups of threads that may wait for each other.
//!
//! # Groups
//! A block starts as one group of all its threads, which runs statement by
//! statement in lockstep under an active mask (`exec.rs` runs each
//! statement for the mask). Control flow is kept as explicit frames rather
//! than host recursion, so that a group can stop in the middle of a loop
//! and be taken up again:
//! - a `for` evaluates start, count and step per thread once, then runs
//!   iteration `i` for the threads whose count exceeds `i`, while any does;
//! - an `if` whose condition holds for all of the active threads or none
//!   of them runs that branch in the same group;
//! - an `if` that splits the active threads *forks*: the threads taking
//!   `then` and those taking `else` become two child groups, and the
//!   parent resumes after the `if` once both have finished their branches
//!   (they reconverge there).
//!
//! # Scheduling
//! Runnable groups are kept on a stack, so a fork runs its `then` child
//! first, then its `else` child, then the parent: without waits this is
//! exactly the lockstep order. A group stops early when it reaches a wait
//! that cannot complete yet: an `mbarrier_wait` whose phase has not
//! completed for one of its threads, or a `bar_sync` whose round still
//! lacks arrivals (the group's own arrivals are counted first). It is set
//! aside, and the other groups run. Whenever no group can run, the waiting
//! groups whose waits can now complete (in the order they stopped) become
//! runnable again. This is what warp-specialized code needs: a producer
//! role filling stages and consumer roles emptying them, each running as
//! far as the barriers let it.
//!
//! When groups are waiting and none can be taken up again, the program
//! deadlocks on hardware too; the first waiting group's wait is reported
//! ("mbarrier wait never completes", "numbered barrier never completes").
//! The order in which ready groups run does not change a race-free
//! program's results: every cross-thread access is ordered by a barrier,
//! and the hazard checks see the same orderings whatever the interleaving.

use super::error::{ExecErrorKind, SimtError};
use super::exec::Machine;
use crate::ir::DType;
use crate::thread::{RegId, Stmt, StmtKind};

/// Where a group is in its program.
enum Frame<'k> {
    /// Statements `body[next..]`, run for `mask`.
    Seq {
        body: &'k [Stmt],
        next: usize,
        mask: Vec<bool>,
    },
    /// A `for` loop between iterations.
    Loop {
        stmt: &'k Stmt,
        var: RegId,
        body: &'k [Stmt],
        /// Per thread: start, count and step.
        bounds: Vec<(i64, i64, i64)>,
        mask: Vec<bool>,
        /// The next iteration.
        i: i64,
    },
}

/// What a group that stopped early waits for.
#[derive(Clone, Copy)]
enum Park<'k> {
    /// The `mbarrier_wait` its next statement is (retried when taken up).
    Mbarrier(&'k Stmt),
    /// The completion of round `round` of numbered barrier `id`; its
    /// arrivals are in and its position is past the `bar_sync`.
    Named { id: u32, round: u64 },
}

struct Group<'k> {
    frames: Vec<Frame<'k>>,
    /// The group that resumes when this one and its sibling finish.
    parent: Option<usize>,
    /// Children not finished yet (the group runs again at zero).
    children: u32,
    park: Option<Park<'k>>,
}

/// How a group's run ended.
enum Stop<'k> {
    Finished,
    Parked(Park<'k>),
    Forked {
        then_mask: Vec<bool>,
        then_body: &'k [Stmt],
        else_mask: Vec<bool>,
        else_body: &'k [Stmt],
    },
}

/// Runs `body` for every thread of the machine's block.
pub(super) fn run_body<'k>(m: &mut Machine<'k, '_>, body: &'k [Stmt]) -> Result<(), SimtError> {
    let mut groups = vec![Group {
        frames: vec![Frame::Seq {
            body,
            next: 0,
            mask: vec![true; m.n],
        }],
        parent: None,
        children: 0,
        park: None,
    }];
    let mut ready = vec![0usize];
    let mut parked: Vec<usize> = Vec::new();
    loop {
        let Some(g) = ready.pop() else {
            if parked.is_empty() {
                return Ok(());
            }
            let mut still = Vec::with_capacity(parked.len());
            for &p in &parked {
                let park = groups[p].park;
                if let Some(park) = park
                    && can_resume(m, &groups[p], park)?
                {
                    groups[p].park = None;
                    ready.push(p);
                } else {
                    still.push(p);
                }
            }
            if ready.is_empty() {
                return Err(deadlock(m, &groups, &still));
            }
            // The earliest stopped group runs first.
            ready.reverse();
            parked = still;
            continue;
        };
        match run_group(m, &mut groups[g])? {
            Stop::Finished => {
                if let Some(p) = groups[g].parent {
                    groups[p].children -= 1;
                    if groups[p].children == 0 {
                        ready.push(p);
                    }
                }
            }
            Stop::Parked(park) => {
                groups[g].park = Some(park);
                parked.push(g);
            }
            Stop::Forked {
                then_mask,
                then_body,
                else_mask,
                else_body,
            } => {
                groups[g].children = 2;
                let child = |body, mask| Group {
                    frames: vec![Frame::Seq {
                        body,
                        next: 0,
                        mask,
                    }],
                    parent: Some(g),
                    children: 0,
                    park: None,
                };
                groups.push(child(else_body, else_mask));
                ready.push(groups.len() - 1);
                groups.push(child(then_body, then_mask));
                ready.push(groups.len() - 1);
            }
        }
    }
}

/// Whether a parked group's wait can complete now.
fn can_resume(m: &Machine<'_, '_>, g: &Group<'_>, park: Park<'_>) -> Result<bool, SimtError> {
    match park {
        Park::Mbarrier(s) => m.mbarrier_ready(s, top_mask(g)),
        Park::Named { id, round } => Ok(m.named_round(id) > round),
    }
}

/// The error for groups that all wait and cannot resume: the first one's
/// wait.
fn deadlock(m: &mut Machine<'_, '_>, groups: &[Group<'_>], parked: &[usize]) -> SimtError {
    let Some(&first) = parked.first() else {
        return m.fail_block(ExecErrorKind::Malformed(
            "deadlock without a waiting group".to_string(),
        ));
    };
    let g = &groups[first];
    match g.park {
        Some(Park::Mbarrier(s)) => {
            let mask = top_mask(g).to_vec();
            match m.stmt(s, &mask) {
                Err(e) => e,
                Ok(()) => m.fail_block(ExecErrorKind::Malformed(
                    "a stuck mbarrier wait completed".to_string(),
                )),
            }
        }
        Some(Park::Named { id, .. }) => {
            let (arrived, expected) = m.named_state(id);
            let s = current_stmt(g);
            let kind = ExecErrorKind::NamedBarrierStuck {
                id,
                arrived,
                expected,
            };
            match s {
                Some(s) => m.fail(s, first_thread(top_mask(g)), kind),
                None => m.fail_block(kind),
            }
        }
        None => m.fail_block(ExecErrorKind::Malformed(
            "a waiting group without a wait".to_string(),
        )),
    }
}

fn first_thread(mask: &[bool]) -> Option<usize> {
    mask.iter().position(|&on| on)
}

/// The mask of a group's innermost frame.
fn top_mask<'g>(g: &'g Group<'_>) -> &'g [bool] {
    match g.frames.last() {
        Some(Frame::Seq { mask, .. } | Frame::Loop { mask, .. }) => mask,
        None => &[],
    }
}

/// The statement a parked group stopped at (for `bar_sync`, the one just
/// before its position).
fn current_stmt<'k>(g: &Group<'k>) -> Option<&'k Stmt> {
    match g.frames.last() {
        Some(Frame::Seq { body, next, .. }) => next.checked_sub(1).and_then(|i| body.get(i)),
        _ => None,
    }
}

/// Runs group `g` until it finishes, stops at a wait, or forks.
fn run_group<'k>(m: &mut Machine<'k, '_>, g: &mut Group<'k>) -> Result<Stop<'k>, SimtError> {
    loop {
        let Some(frame) = g.frames.last_mut() else {
            return Ok(Stop::Finished);
        };
        match frame {
            Frame::Loop {
                stmt,
                var,
                body,
                bounds,
                mask,
                i,
            } => {
                let inner: Vec<bool> = mask
                    .iter()
                    .zip(bounds.iter())
                    .map(|(&on, &(_, c, _))| on && *i < c)
                    .collect();
                if !inner.iter().any(|&on| on) {
                    g.frames.pop();
                    continue;
                }
                let (stmt, var, body, iteration) = (*stmt, *var, *body, *i);
                m.count_step(stmt)?;
                for (t, &(st, _, sp)) in bounds.iter().enumerate() {
                    if inner[t] {
                        let v = DType::I32.wrap_i64(st.wrapping_add(iteration.wrapping_mul(sp)));
                        m.write_reg(var.index(), 0, t, super::value::Val::I(v))
                            .map_err(|k| m.fail(stmt, Some(t), k))?;
                    }
                }
                *i += 1;
                g.frames.push(Frame::Seq {
                    body,
                    next: 0,
                    mask: inner,
                });
            }
            Frame::Seq { body, next, mask } => {
                let Some(s) = body.get(*next) else {
                    g.frames.pop();
                    continue;
                };
                match &s.kind {
                    StmtKind::For {
                        var,
                        start,
                        count,
                        step,
                        body: loop_body,
                        ..
                    } => {
                        m.count_step(s)?;
                        let bounds = m.loop_bounds(s, start, count, step, mask)?;
                        let mask = mask.clone();
                        *next += 1;
                        g.frames.push(Frame::Loop {
                            stmt: s,
                            var: *var,
                            body: loop_body,
                            bounds,
                            mask,
                            i: 0,
                        });
                    }
                    StmtKind::If {
                        cond,
                        then_body,
                        else_body,
                    } => {
                        m.count_step(s)?;
                        let (then_mask, else_mask) = m.split(s, cond, mask)?;
                        *next += 1;
                        let takes_then = then_mask.iter().any(|&on| on);
                        let else_body: &[Stmt] = else_body.as_deref().unwrap_or(&[]);
                        let takes_else = !else_body.is_empty() && else_mask.iter().any(|&on| on);
                        match (takes_then, takes_else) {
                            (true, true) => {
                                return Ok(Stop::Forked {
                                    then_mask,
                                    then_body,
                                    else_mask,
                                    else_body,
                                });
                            }
                            (true, false) => g.frames.push(Frame::Seq {
                                body: then_body,
                                next: 0,
                                mask: then_mask,
                            }),
                            (false, true) => g.frames.push(Frame::Seq {
                                body: else_body,
                                next: 0,
                                mask: else_mask,
                            }),
                            (false, false) => {}
                        }
                    }
                    StmtKind::MbarrierWait { .. } => {
                        if !m.mbarrier_ready(s, mask)? {
                            return Ok(Stop::Parked(Park::Mbarrier(s)));
                        }
                        m.count_step(s)?;
                        m.stmt(s, mask)?;
                        *next += 1;
                    }
                    StmtKind::NamedBarrier { id, threads, wait } => {
                        m.count_step(s)?;
                        let round = m.named_arrive(s, *id, *threads, *wait, mask)?;
                        *next += 1;
                        if let Some(round) = round {
                            return Ok(Stop::Parked(Park::Named { id: *id, round }));
                        }
                    }
                    _ => {
                        m.count_step(s)?;
                        m.stmt(s, mask)?;
                        *next += 1;
                    }
                }
            }
        }
    }
}
