//! Roles (`T.ws`) and phased barriers.
//!
//! A kernel whose body holds roles runs each block in three parts. The
//! top-level statements before the first one that contains a role (the
//! *prologue*) and after the last one (the *epilogue*) run as usual, by
//! the block as a whole. The statements in between (the *region*) run
//! once per *process*: one process per distinct set of warp groups that a
//! role names, plus one for the block's threads in no role, if any. Every
//! process runs the region's control flow (loops, branches, `let`s)
//! itself, with scalar variables and `local`/`var` buffers of its own, and
//! runs the bodies of the roles that name its warp groups, skipping the
//! others; shared, fragment and global buffers are the block's.
//!
//! Processes run one at a time, each until it finishes or waits on a
//! barrier phase that has not completed, then the next one in turn: one
//! legal interleaving of what the hardware runs concurrently, so a
//! kernel whose roles order their accesses through barriers computes what
//! it would on the device. When every unfinished process waits and none
//! can go on, the run fails with [`InterpError::Deadlock`], naming the
//! waits.
//!
//! A barrier counts arrivals in threads: an `arrive` adds the number of
//! threads that run it (a role's threads inside a role, the process's
//! outside roles, the block's in the prologue and epilogue), and every
//! `count` arrivals complete a phase. A wait in the prologue or epilogue
//! that cannot pass is a deadlock too (nothing else runs).

use super::TensorData;
use super::error::{Eval, InterpError, malformed};
use super::exec;
use super::expr::{Env, IntFn, Slot};
use super::program::{Binding, CBlock, Op};
use crate::ir::{DType, Scope, Span};

/// Threads per warp group (`T.ws`'s unit, as in TileLang).
pub(crate) const WARP_GROUP: u32 = 128;

/// How a kernel with roles runs (built by the compiler).
pub(crate) struct RolePlan {
    /// The region: top-level operations `first ..= last` of the body.
    pub(crate) first: usize,
    pub(crate) last: usize,
    /// The block's threads.
    pub(crate) threads: u32,
    /// Per process: the warp groups of its role (empty for the threads in
    /// no role) and its thread count.
    pub(crate) processes: Vec<(Vec<u32>, u32)>,
}

impl RolePlan {
    /// The plan for a kernel of `threads` threads whose roles name the
    /// warp-group sets `roles` (distinct, pairwise disjoint).
    pub(crate) fn new(first: usize, last: usize, threads: u32, roles: Vec<Vec<u32>>) -> RolePlan {
        let size = |g: u32| threads.saturating_sub(g * WARP_GROUP).min(WARP_GROUP);
        let mut covered = 0u32;
        let mut processes: Vec<(Vec<u32>, u32)> = roles
            .into_iter()
            .map(|groups| {
                let n = groups.iter().map(|&g| size(g)).sum::<u32>();
                covered += n;
                (groups, n)
            })
            .collect();
        if covered < threads {
            processes.push((Vec::new(), threads - covered));
        }
        RolePlan {
            first,
            last,
            threads,
            processes,
        }
    }
}

/// Runs one block of a kernel with roles.
pub(crate) fn exec_block(env: &mut Env, body: &CBlock, plan: &RolePlan) -> Eval<()> {
    env.arrivals = plan.threads;
    for (op, span) in &body.ops[..plan.first] {
        exec::exec(env, op).map_err(|e| e.at(*span))?;
    }
    run_region(env, &body.ops[plan.first..=plan.last], plan)?;
    env.arrivals = plan.threads;
    for (op, span) in &body.ops[plan.last + 1..] {
        exec::exec(env, op).map_err(|e| e.at(*span))?;
    }
    Ok(())
}

/// Allocates barrier state: per barrier its count, completed phases and
/// arrivals in the current phase.
pub(crate) fn alloc_barrier(env: &mut Env, buffer: usize, counts: &[u32]) -> Eval<()> {
    let mut data = Vec::with_capacity(3 * counts.len());
    for &c in counts {
        data.extend([i64::from(c), 0, 0]);
    }
    let slot = env
        .slots
        .get_mut(buffer)
        .ok_or_else(|| malformed("buffer index out of range"))?;
    *slot = Some(Slot::new(
        DType::I64,
        Scope::Barrier,
        vec![counts.len(), 3],
        TensorData::Int(data),
    ));
    Ok(())
}

/// The state of barrier `index` of `buffer`: `[count, phase, arrived]`.
fn barrier<'e>(env: &'e mut Env, buffer: usize, index: &IntFn) -> Eval<&'e mut [i64]> {
    let i = index(env)?;
    let name = env.buffer_name(buffer);
    let slot = env.slot_mut(buffer)?;
    let n = slot.shape.first().copied().unwrap_or(0);
    let TensorData::Int(data) = &mut slot.data else {
        return Err(malformed("barrier state is not integer"));
    };
    match usize::try_from(i) {
        Ok(i) if i < n => Ok(&mut data[3 * i..3 * i + 3]),
        _ => Err(Box::new(InterpError::OutOfBounds {
            buffer: name,
            scope: "barrier",
            indices: vec![i],
            shape: vec![n],
            span: Span::UNKNOWN,
        })),
    }
}

/// `env.arrivals` threads arrive at a barrier.
pub(crate) fn arrive(env: &mut Env, buffer: usize, index: &IntFn) -> Eval<()> {
    let n = i64::from(env.arrivals);
    let state = barrier(env, buffer, index)?;
    state[2] += n;
    while state[0] > 0 && state[2] >= state[0] {
        state[2] -= state[0];
        state[1] += 1;
    }
    Ok(())
}

/// Whether a wait for the phase of parity `parity` passes now.
pub(crate) fn wait_passes(
    env: &mut Env,
    buffer: usize,
    index: &IntFn,
    parity: &IntFn,
) -> Eval<bool> {
    let p = parity(env)?.rem_euclid(2);
    let state = barrier(env, buffer, index)?;
    Ok(state[1].rem_euclid(2) != p)
}

/// A wait that can never pass.
pub(crate) fn deadlock(detail: String) -> Box<InterpError> {
    Box::new(InterpError::Deadlock {
        detail,
        waits: Vec::new(),
        span: Span::UNKNOWN,
    })
}

enum Frame<'a> {
    Block {
        ops: &'a [(Op, Span)],
        next: usize,
    },
    Loop {
        var: Binding,
        start: i64,
        extent: i64,
        i: i64,
        body: &'a CBlock,
    },
}

struct Process<'a> {
    groups: &'a [u32],
    threads: u32,
    stack: Vec<Frame<'a>>,
    ints: Vec<i64>,
    floats: Vec<f64>,
    /// This process's copies of the per-thread buffers allocated before
    /// the region.
    locals: Vec<(usize, Option<Slot>)>,
}

impl Process<'_> {
    /// Exchanges the process's private state with the running state.
    fn swap(&mut self, env: &mut Env) {
        std::mem::swap(&mut self.ints, &mut env.ints);
        std::mem::swap(&mut self.floats, &mut env.floats);
        for (b, slot) in &mut self.locals {
            std::mem::swap(slot, &mut env.slots[*b]);
        }
    }
}

/// What a process stopped at.
enum Stop {
    Finished,
    /// Waiting at the statement with this span.
    Waiting(Span),
}

fn run_region(env: &mut Env, ops: &[(Op, Span)], plan: &RolePlan) -> Eval<()> {
    let private: Vec<usize> = env
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.as_ref()
                .is_some_and(|s| matches!(s.scope, Scope::Local | Scope::Var))
        })
        .map(|(b, _)| b)
        .collect();
    let mut procs: Vec<Process> = plan
        .processes
        .iter()
        .map(|(groups, threads)| Process {
            groups,
            threads: *threads,
            stack: vec![Frame::Block { ops, next: 0 }],
            ints: env.ints.clone(),
            floats: env.floats.clone(),
            locals: private.iter().map(|&b| (b, env.slots[b].clone())).collect(),
        })
        .collect();
    let mut done = vec![false; procs.len()];
    let mut waits: Vec<Option<Span>> = vec![None; procs.len()];
    loop {
        let mut progress = false;
        for (p, proc) in procs.iter_mut().enumerate() {
            if done[p] {
                continue;
            }
            proc.swap(env);
            env.arrivals = proc.threads;
            let before = env.steps;
            let stop = step(env, proc);
            proc.swap(env);
            progress |= env.steps != before;
            match stop? {
                Stop::Finished => {
                    done[p] = true;
                    progress = true;
                }
                Stop::Waiting(span) => waits[p] = Some(span),
            }
        }
        if done.iter().all(|&d| d) {
            break;
        }
        if !progress {
            let stuck: Vec<(String, Span)> = procs
                .iter()
                .enumerate()
                .filter_map(|(p, proc)| {
                    let span = waits[p].filter(|_| !done[p])?;
                    let who = if proc.groups.is_empty() {
                        "the threads in no role".to_string()
                    } else {
                        format!("warp groups {:?}", proc.groups)
                    };
                    Some((who, span))
                })
                .collect();
            let names: Vec<&str> = stuck.iter().map(|(w, _)| w.as_str()).collect();
            return Err(Box::new(InterpError::Deadlock {
                detail: format!(
                    "{} wait on barrier phases that never complete",
                    names.join(" and ")
                ),
                span: stuck.first().map_or(Span::UNKNOWN, |w| w.1),
                waits: stuck,
            }));
        }
    }
    // The region's `let`s and per-thread buffers continue from the first
    // process's values.
    if let Some(first) = procs.first_mut() {
        first.swap(env);
    }
    Ok(())
}

/// Runs a process until it finishes or waits.
fn step<'a>(env: &mut Env, proc: &mut Process<'a>) -> Eval<Stop> {
    loop {
        let Some(frame) = proc.stack.last_mut() else {
            return Ok(Stop::Finished);
        };
        match frame {
            Frame::Loop {
                var,
                start,
                extent,
                i,
                body,
            } => {
                if *i >= *extent {
                    proc.stack.pop();
                    continue;
                }
                env.ints[var.index] = var.dtype.wrap_i64(start.wrapping_add(*i));
                *i += 1;
                env.tick(1)?;
                let ops = &body.ops[..];
                proc.stack.push(Frame::Block { ops, next: 0 });
            }
            Frame::Block { ops, next } => {
                let Some((op, span)) = ops.get(*next) else {
                    proc.stack.pop();
                    continue;
                };
                let span = *span;
                match op {
                    Op::BarrierWait {
                        buffer,
                        index,
                        parity,
                    } => {
                        if !wait_passes(env, *buffer, index, parity).map_err(|e| e.at(span))? {
                            return Ok(Stop::Waiting(span));
                        }
                        env.tick(1)?;
                        *next += 1;
                    }
                    Op::For {
                        var,
                        start,
                        extent,
                        body,
                    } => {
                        *next += 1;
                        env.tick(1)?;
                        let s = start(env).map_err(|e| e.at(span))?;
                        let n = extent(env).map_err(|e| e.at(span))?;
                        proc.stack.push(Frame::Loop {
                            var: *var,
                            start: s,
                            extent: n.max(0),
                            i: 0,
                            body,
                        });
                    }
                    Op::If {
                        cond,
                        then,
                        otherwise,
                    } => {
                        *next += 1;
                        env.tick(1)?;
                        let taken = if cond(env).map_err(|e| e.at(span))? != 0 {
                            then
                        } else {
                            otherwise
                        };
                        proc.stack.push(Frame::Block {
                            ops: &taken.ops[..],
                            next: 0,
                        });
                    }
                    Op::Role { groups, body } => {
                        *next += 1;
                        env.tick(1)?;
                        if groups.as_slice() == proc.groups {
                            proc.stack.push(Frame::Block {
                                ops: &body.ops[..],
                                next: 0,
                            });
                        }
                    }
                    other => {
                        *next += 1;
                        exec::exec(env, other).map_err(|e| e.at(span))?;
                    }
                }
            }
        }
    }
}
