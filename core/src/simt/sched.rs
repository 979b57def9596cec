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
//! - an `if` that splits the active threads *forks* them into two groups.
//!   When the split cuts through an issue group (a warp on most targets,
//!   a warpgroup where matrix atoms issue by warpgroup) the two are
//!   children: the parent resumes after the `if` once both have finished
//!   their branches (they reconverge there, as the lanes of a warp do).
//!   When it separates whole issue groups, which run independently on
//!   hardware, each side continues on its own past the `if` with a copy
//!   of the rest of the program (warp roles: a producer and consumers, or
//!   two consumer warpgroups taking turns).
//!
//! A block-wide `barrier` completes when every thread that has not
//! finished the kernel has arrived, whichever groups they are in; a group
//! that reaches it with some of its own threads inactive (inside a loop
//! they have left) is in divergent code, an error.
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
#[derive(Clone)]
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
    /// Round `round` of the block-wide barrier (its arrivals are in).
    Block { round: u64 },
    /// The `mbarrier_wait` its next statement is (retried when taken up).
    Mbarrier(&'k Stmt),
    /// The completion of round `round` of numbered barrier `id`; its
    /// arrivals are in and its position is past the `bar_sync`.
    Named { id: u32, round: u64 },
}

#[derive(Clone)]
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
    /// At the block-wide barrier, with this many threads arriving.
    AtBarrier(usize),
    /// Past a `bar_sync` whose rounds these threads wait for: numbered
    /// barrier, round, threads.
    NamedWaits(Vec<(u32, u64, Vec<bool>)>),
    Parked(Park<'k>),
    Forked {
        then_mask: Vec<bool>,
        then_body: &'k [Stmt],
        else_mask: Vec<bool>,
        else_body: &'k [Stmt],
        /// Whether the sides continue on their own (whole issue groups).
        apart: bool,
    },
}

/// The block-wide barrier's current round.
#[derive(Default)]
struct BlockRound {
    round: u64,
    arrived: usize,
    /// Threads of groups that finished the kernel.
    exited: usize,
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
    let mut block = BlockRound::default();
    let apart_at = m.independent_threads();
    loop {
        let Some(g) = ready.pop() else {
            if parked.is_empty() {
                return Ok(());
            }
            let mut still = Vec::with_capacity(parked.len());
            for &p in &parked {
                let park = groups[p].park;
                if let Some(park) = park
                    && can_resume(m, &groups[p], park, &block)?
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
        match run_group(m, &mut groups[g], apart_at)? {
            Stop::Finished => {
                if let Some(p) = groups[g].parent {
                    groups[p].children -= 1;
                    if groups[p].children == 0 {
                        ready.push(p);
                    }
                } else {
                    // Its threads leave the kernel: the block barrier no
                    // longer waits for them.
                    block.exited += own_threads(&groups[g]);
                    block.settle(m);
                }
            }
            Stop::AtBarrier(arriving) => {
                block.arrived += arriving;
                let round = block.round;
                block.settle(m);
                if block.round == round {
                    groups[g].park = Some(Park::Block { round });
                    parked.push(g);
                } else {
                    ready.push(g);
                }
            }
            Stop::Parked(park) => {
                groups[g].park = Some(park);
                parked.push(g);
            }
            Stop::NamedWaits(waits) => {
                // Threads waiting on different barriers, or some waiting
                // and some not, part (whole issue groups only).
                let mask = top_mask(&groups[g]).to_vec();
                let mut runners = mask.clone();
                for (_, _, part) in &waits {
                    for (r, &w) in runners.iter_mut().zip(part) {
                        *r &= !w;
                    }
                }
                let parts: Vec<&Vec<bool>> = waits.iter().map(|(_, _, p)| p).collect();
                for part in &parts {
                    let rest: Vec<bool> = mask
                        .iter()
                        .zip(part.iter())
                        .map(|(&a, &b)| a && !b)
                        .collect();
                    if !separates(part, &rest, apart_at) {
                        let s = current_stmt(&groups[g]);
                        let kind = ExecErrorKind::NamedBarrier {
                            id: waits[0].0,
                            reason: "part of an issue group waits while the rest goes on"
                                .to_string(),
                        };
                        return Err(match s {
                            Some(s) => m.fail(s, first_thread(part), kind),
                            None => m.fail_block(kind),
                        });
                    }
                }
                let parent = groups[g].parent;
                let runs = runners.iter().any(|&on| on);
                let split = |me: &Group<'k>, keep: &[bool], park| Group {
                    frames: me.frames.iter().map(|f| f.restricted(keep)).collect(),
                    parent,
                    children: 0,
                    park,
                };
                let mut new_groups = Vec::new();
                for (k, (number, round, part)) in waits.iter().enumerate() {
                    let park = Some(Park::Named {
                        id: *number,
                        round: *round,
                    });
                    if k == 0 && !runs && waits.len() == 1 {
                        groups[g].park = park;
                        parked.push(g);
                    } else {
                        new_groups.push(split(&groups[g], part, park));
                    }
                }
                if runs {
                    groups[g] = split(&groups[g], &runners, None);
                    ready.push(g);
                } else if !new_groups.is_empty() && groups[g].park.is_none() {
                    // Every thread waits: the first part takes the slot.
                    groups[g] = new_groups.remove(0);
                    parked.push(g);
                }
                if let Some(p) = parent {
                    groups[p].children += new_groups.len() as u32;
                }
                for group in new_groups {
                    groups.push(group);
                    parked.push(groups.len() - 1);
                }
            }
            Stop::Forked {
                then_mask,
                then_body,
                else_mask,
                else_body,
                apart: true,
            } => {
                // Each side takes the rest of the program with it; they
                // take the parent's place under its own parent.
                let parent = groups[g].parent;
                if let Some(p) = parent {
                    groups[p].children += 1;
                }
                let side = |me: &Group<'k>, body, mask: Vec<bool>| {
                    let mut frames: Vec<Frame<'k>> =
                        me.frames.iter().map(|f| f.restricted(&mask)).collect();
                    frames.push(Frame::Seq {
                        body,
                        next: 0,
                        mask,
                    });
                    Group {
                        frames,
                        parent,
                        children: 0,
                        park: None,
                    }
                };
                let else_side = side(&groups[g], else_body, else_mask);
                let then_side = side(&groups[g], then_body, then_mask);
                // The parent's slot becomes the `then` side.
                groups[g] = then_side;
                groups.push(else_side);
                ready.push(groups.len() - 1);
                ready.push(g);
            }
            Stop::Forked {
                then_mask,
                then_body,
                else_mask,
                else_body,
                apart: false,
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

impl BlockRound {
    /// Completes the round when every thread still in the kernel arrived.
    fn settle(&mut self, m: &mut Machine<'_, '_>) {
        if self.arrived > 0 && self.arrived + self.exited >= m.n {
            m.block_barrier();
            self.round += 1;
            self.arrived = 0;
        }
    }
}

impl<'k> Frame<'k> {
    /// The frame for the threads of `keep` only.
    fn restricted(&self, keep: &[bool]) -> Frame<'k> {
        let and = |mask: &[bool]| mask.iter().zip(keep).map(|(&a, &b)| a && b).collect();
        match self {
            Frame::Seq { body, next, mask } => Frame::Seq {
                body,
                next: *next,
                mask: and(mask),
            },
            Frame::Loop {
                stmt,
                var,
                body,
                bounds,
                mask,
                i,
            } => Frame::Loop {
                stmt,
                var: *var,
                body,
                bounds: bounds.clone(),
                mask: and(mask),
                i: *i,
            },
        }
    }
}

/// The threads a group owns (its outermost frame's).
fn own_threads(g: &Group<'_>) -> usize {
    match g.frames.first() {
        Some(Frame::Seq { mask, .. } | Frame::Loop { mask, .. }) => {
            mask.iter().filter(|&&on| on).count()
        }
        None => 0,
    }
}

/// Whether a parked group's wait can complete now.
fn can_resume(
    m: &Machine<'_, '_>,
    g: &Group<'_>,
    park: Park<'_>,
    block: &BlockRound,
) -> Result<bool, SimtError> {
    match park {
        Park::Mbarrier(s) => m.mbarrier_ready(s, top_mask(g)),
        Park::Named { id, round } => Ok(m.named_round(id) > round),
        Park::Block { round } => Ok(block.round > round),
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
        Some(Park::Block { .. }) => {
            let active = top_mask(g).iter().filter(|&&on| on).count() as u32;
            let kind = ExecErrorKind::DivergentBarrier {
                active,
                threads: m.n as u32,
            };
            match current_stmt(g) {
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
fn run_group<'k>(
    m: &mut Machine<'k, '_>,
    g: &mut Group<'k>,
    apart_at: usize,
) -> Result<Stop<'k>, SimtError> {
    let own: Vec<bool> = match g.frames.first() {
        Some(Frame::Seq { mask, .. } | Frame::Loop { mask, .. }) => mask.clone(),
        None => Vec::new(),
    };
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
                        // Threads that skip a branch run on past the `if`
                        // meanwhile when they are whole issue groups apart
                        // from those that take it (a role's `if` without
                        // `else`: the other roles do not wait for it).
                        let skips_apart = !takes_else
                            && else_mask.iter().any(|&on| on)
                            && separates(&then_mask, &else_mask, apart_at);
                        match (takes_then, takes_else) {
                            (true, true) => {
                                let apart = separates(&then_mask, &else_mask, apart_at);
                                return Ok(Stop::Forked {
                                    then_mask,
                                    then_body,
                                    else_mask,
                                    else_body,
                                    apart,
                                });
                            }
                            (true, false) if skips_apart => {
                                return Ok(Stop::Forked {
                                    then_mask,
                                    then_body,
                                    else_mask,
                                    else_body: &[],
                                    apart: true,
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
                    StmtKind::Barrier => {
                        m.count_step(s)?;
                        if *mask != own {
                            let active = mask.iter().filter(|&&on| on).count() as u32;
                            return Err(m.fail(
                                s,
                                None,
                                ExecErrorKind::DivergentBarrier {
                                    active,
                                    threads: m.n as u32,
                                },
                            ));
                        }
                        let arriving = mask.iter().filter(|&&on| on).count();
                        *next += 1;
                        return Ok(Stop::AtBarrier(arriving));
                    }
                    StmtKind::NamedBarrier { id, threads, wait } => {
                        m.count_step(s)?;
                        let mut waits = Vec::new();
                        for (number, part) in m.named_numbers(s, id, mask)? {
                            if let Some(round) =
                                m.named_arrive(s, number, *threads, *wait, &part)?
                            {
                                waits.push((number, round, part));
                            }
                        }
                        *next += 1;
                        if !waits.is_empty() {
                            return Ok(Stop::NamedWaits(waits));
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

/// Whether two sides of a split hold whole, aligned runs of `unit`
/// threads each: none of those runs has threads on both sides.
fn separates(a: &[bool], b: &[bool], unit: usize) -> bool {
    let unit = unit.max(1);
    (0..a.len()).step_by(unit).all(|start| {
        let end = (start + unit).min(a.len());
        let on_a = a[start..end].iter().any(|&on| on);
        let on_b = b[start..end].iter().any(|&on| on);
        !(on_a && on_b)
    })
}
