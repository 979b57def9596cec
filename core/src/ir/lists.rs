//! What a `T.Pipelined` loop's `order` and `stage` lists ask for, in the
//! forms the lowering takes.
//!
//! Every statement of the body gets a stage `σ` (iteration `i` runs it for
//! the data of iteration `i + D − σ`, `D` the largest stage) and an issue
//! rank. The lowering (`lower/pipeline.rs`, "Order and stage lists") runs
//! three forms as asked:
//!
//! - [`ListForm::Staged`]: stages 0 (the producers: copies into shared
//!   memory) and one `D ≥ 1` (everything else), `D + 1 ≤ num_stages`; the
//!   producers run `D` iterations ahead in `D + 1` buffers, issued before
//!   or after the consumers as the ranks say (or where the lookahead rule
//!   puts them when every producer is ranked among the consumers: the
//!   copies are asynchronous and all of them complete at the same wait).
//! - [`ListForm::Producers`]: negative stages on the producers, as
//!   TileLang's warp-specialized pipelines mark the copies the producer
//!   warps issue, and one stage for everything else, ranked in program
//!   order: the loop is pipelined as without lists, `num_stages` deep.
//! - No lists at all.
//!
//! - [`ListForm::Rotated`]: producers at negative stages (or, with no
//!   negative stage, the copies into shared memory at the lowest stage),
//!   consumers at several stages or ranked out of program order (FA3's
//!   rotated loop: `Q·Kᵀ` of key block `k` issued before `P·V` of block
//!   `k − 1`). A
//!   function that sets the pass config [`FOLLOW_ROTATIONS`] to `False`
//!   gets the loop without lists instead ([`ListForm::Producers`], no
//!   warning): on the H200 the rotated attention loop measured within
//!   −14 % to +3.5 % of it (`bench/RESULTS.md`), so which is faster
//!   depends on the kernel.
//!
//! Anything else ([`ListForm::Default`]: statements other than copies
//! into shared memory at a negative stage, a depth the buffers cannot
//! hold, fewer than two stages, a rotation that would reorder dependent
//! statements) runs with the schedule the loop gets without lists; the
//! front end says so in a warning, and `tilec verify` still checks the
//! schedule the lists ask for. The results are the same either way: a
//! pipeline changes when work is issued, not what it computes.
//!
//! # Rotated loops
//! Statement `i` of iteration `k` runs in rotated iteration `k + σᵢ`
//! (`σ` the stage, producers taking their first reader's), statements of
//! one rotated iteration in rank order. The lowering (`lower/rotate.rs`)
//! writes that out as one loop of `D` more iterations whose consumers run
//! under a guard on their iteration. This is taken only when it
//! computes what the loop computes: for every two statements touching one
//! buffer (one of them writing), every two of their instances keep the
//! order they have in the loop without lists (checked at buffer
//! granularity; as functions of the iteration distance both orders are
//! steps, at 0 and at the stage difference, so the distances around those
//! two decide). A body holding `let` bindings, allocations,
//! barriers or pipelined loops at its top level is not rotated.

use std::collections::BTreeSet;

use super::{Buffer, Expr, Handle};

/// The pass config that, set to `False`
/// (`pass_configs={"tilec.follow_pipeline_lists": False}`), has rotated
/// lists take the schedule of the loop without lists instead of being
/// followed (module documentation, "Rotated loops").
pub const FOLLOW_ROTATIONS: &str = "tilec.follow_pipeline_lists";

/// The form of a loop's lists (module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListForm {
    /// Stages 0 and `depth`, followed as asked.
    Staged(Staged),
    /// Negative stages mark the producers; the rest share one stage.
    Producers { producer: Vec<bool> },
    /// Negative stages mark the producers and the consumers are at several
    /// stages or issued out of program order: the loop is rotated.
    Rotated(Rotated),
    /// Run as without lists, for `reason`.
    Default { reason: String },
}

/// Lists of the rotated form (module documentation, "Rotated loops").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rotated {
    /// The stage of every statement of the body: a consumer's own, less
    /// the lowest consumer stage; a producer's that of the first statement
    /// after it that reads what it copies.
    pub stage: Vec<i64>,
    /// The order statements are issued in within an iteration: indices
    /// of the body, by rank (program order among equal ranks).
    pub issue: Vec<usize>,
    /// Which statements are producers (a negative stage in the lists).
    pub producer: Vec<bool>,
    /// The largest stage.
    pub depth: i64,
}

/// Lists of the staged form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Staged {
    /// The stage of every statement of the body (0 or `depth`).
    pub stage: Vec<i64>,
    /// The largest stage: how many iterations ahead the producers run.
    pub depth: i64,
    /// Every producer ranked after every consumer (`Some(true)`), before
    /// (`Some(false)`), or neither or no `order` (`None`).
    pub late: Option<bool>,
}

/// The form of the lists of `stmt` when it is a `T.Pipelined` loop of `f`
/// (`None` for any other statement, and for a loop without lists).
pub fn loop_form(stmt: &super::Stmt, f: &super::Function) -> Option<ListForm> {
    match stmt {
        super::Stmt::For {
            kind:
                super::LoopKind::Pipelined {
                    num_stages,
                    order,
                    stage,
                    ..
                },
            body,
            ..
        } => list_form(order.as_deref(), stage.as_deref(), *num_stages, body, f),
        _ => None,
    }
}

/// The form of the lists of a `T.Pipelined` loop of `f` with `num_stages`
/// buffers over `body` (`None` when the loop has no lists).
pub fn list_form(
    order: Option<&[i64]>,
    stage: Option<&[i64]>,
    num_stages: u32,
    body: &super::Block,
    f: &super::Function,
) -> Option<ListForm> {
    if order.is_none() && stage.is_none() {
        return None;
    }
    let form = form_of_lists(order, stage, num_stages, &copies_into_shared(body, f));
    if let Some(ListForm::Default { .. }) = &form
        && let Some(rotated) = rotation(order, stage, body, f)
    {
        return Some(match rotated {
            Ok(r) if f.attrs.flag_off(FOLLOW_ROTATIONS) => ListForm::Producers {
                producer: r.producer,
            },
            Ok(r) => ListForm::Rotated(r),
            Err(reason) => ListForm::Default { reason },
        });
    }
    form
}

/// The most stages a rotation spans (far beyond any pipeline: each stage
/// is one more iteration of the rotated loop).
const MAX_ROTATION: i64 = 64;

/// The rotated form of lists with producers (copies at negative stages,
/// or without any, copies into shared memory at the lowest stage) whose
/// consumers are at several stages or ranked out of program order
/// (module documentation, "Rotated loops"): `None` for other lists, an
/// error saying why when the rotation would change what the loop
/// computes or the body holds what it cannot rotate.
fn rotation(
    order: Option<&[i64]>,
    stage: Option<&[i64]>,
    body: &super::Block,
    f: &super::Function,
) -> Option<Result<Rotated, String>> {
    let stage = stage?;
    let len = body.stmts.len();
    let copies = copies_into_shared(body, f);
    if stage.len() != len || order.is_some_and(|o| o.len() != len) {
        return None;
    }
    // The producers: the copies at negative stages or, without those, the
    // copies into shared memory at the lowest stage.
    let first = stage.iter().copied().min()?;
    let producer: Vec<bool> = if first < 0 {
        stage.iter().map(|&s| s < 0).collect()
    } else {
        stage
            .iter()
            .zip(&copies)
            .map(|(&s, &c)| c && s == first)
            .collect()
    };
    if producer.iter().zip(&copies).any(|(&p, &c)| p && !c) || !producer.contains(&true) {
        return None;
    }
    let lowest = stage
        .iter()
        .zip(&producer)
        .filter(|(_, p)| !**p)
        .map(|(&s, _)| s)
        .min()?;
    let mut access = Vec::with_capacity(len);
    for stmt in &body.stmts {
        match statement_accesses(stmt, f) {
            Ok(a) => access.push(a),
            Err(what) => return Some(Err(format!("{what} in the loop body"))),
        }
    }
    // Producers take the stage of their first reader after them.
    let mut stages: Vec<i64> = stage.iter().map(|&s| s - lowest).collect();
    for i in 0..len {
        if !producer[i] {
            continue;
        }
        let super::Stmt::Copy { dst, .. } = &body.stmts[i] else {
            return None;
        };
        let reader = (i + 1..len).find(|&j| !producer[j] && access[j].0.contains(&dst.buffer));
        match reader {
            Some(j) => stages[i] = stage[j] - lowest,
            None => {
                return Some(Err(format!(
                    "a copy into `{}` that no later statement reads",
                    f.buffers[dst.buffer].name
                )));
            }
        }
    }
    let depth = stages.iter().copied().max().unwrap_or(0);
    if depth > MAX_ROTATION {
        return Some(Err(format!("a rotation over {depth} stages")));
    }
    let rank: Vec<i64> = order.map_or_else(|| (0..len as i64).collect(), <[i64]>::to_vec);
    let mut issue: Vec<usize> = (0..len).collect();
    issue.sort_by_key(|&i| (rank[i], i));
    let pos: Vec<usize> = {
        let mut p = vec![0; len];
        for (at, &i) in issue.iter().enumerate() {
            p[i] = at;
        }
        p
    };
    // Instance (i, k) runs in rotated iteration k + stage[i], at issue
    // position pos[i]; every two instances that touch one buffer (one
    // writing) must keep the order of the loop without lists.
    for a in 0..len {
        for b in 0..len {
            let Some(buffer) = conflict(&access[a], &access[b]) else {
                continue;
            };
            // Both orders are steps in the distance: the loop's at 0, the
            // rotation's at the stage difference; they agree everywhere
            // when they agree around both steps.
            let d = stages[a] - stages[b];
            for delta in [-1, 0, 1, d - 1, d, d + 1] {
                if a == b && delta == 0 {
                    continue;
                }
                let before = delta > 0 || (delta == 0 && a < b);
                let (ja, jb) = (stages[a], delta + stages[b]);
                let rotated = ja < jb || (ja == jb && pos[a] < pos[b]);
                if before != rotated {
                    return Some(Err(format!(
                        "statements {a} and {b} of the body both use `{}`, and the lists would \
                         reorder them",
                        f.buffers[buffer].name
                    )));
                }
            }
        }
    }
    if depth == 0 && issue.iter().enumerate().all(|(at, &i)| at == i) {
        return None;
    }
    Some(Ok(Rotated {
        stage: stages,
        issue,
        producer,
        depth,
    }))
}

/// Which top-level statements of a pipelined loop's `body` are
/// *replayable binds*: `let`s whose value reads no buffer a statement of
/// the body writes. TileLang leaves them out of the `order`/`stage` lists
/// and evaluates them again wherever a statement uses them, which for a
/// value that depends only on the iteration is the same as substituting
/// it. Nothing is replayable in a body holding what the analysis cannot
/// see through (allocations, barriers, nested pipelines).
pub fn replayable_binds(body: &super::Block, f: &super::Function) -> Vec<bool> {
    let mut written = BTreeSet::new();
    for stmt in &body.stmts {
        match stmt {
            super::Stmt::Let { .. } => {}
            other => match statement_accesses(other, f) {
                Ok((_, writes)) => written.extend(writes),
                Err(_) => return vec![false; body.stmts.len()],
            },
        }
    }
    body.stmts
        .iter()
        .map(|stmt| match stmt {
            super::Stmt::Let { value, .. } => {
                let mut reads = BTreeSet::new();
                expr_loads(f, *value, &mut reads);
                reads.is_disjoint(&written)
            }
            _ => false,
        })
        .collect()
}

/// Adds to `reads` every buffer `e` loads from.
pub(crate) fn expr_loads(
    f: &super::Function,
    e: Handle<Expr>,
    reads: &mut BTreeSet<Handle<Buffer>>,
) {
    if let Expr::Load { buffer, .. } = &f.exprs[e] {
        reads.insert(*buffer);
    }
    for o in f.exprs[e].operands() {
        expr_loads(f, o, reads);
    }
}

/// The buffers a statement reads and writes.
type Accesses = (BTreeSet<Handle<Buffer>>, BTreeSet<Handle<Buffer>>);

/// A buffer one access set writes and the other touches, if any.
fn conflict(a: &Accesses, b: &Accesses) -> Option<Handle<Buffer>> {
    a.1.iter()
        .find(|x| b.0.contains(x) || b.1.contains(x))
        .or_else(|| a.0.iter().find(|x| b.1.contains(x)))
        .copied()
}

/// What `stmt` (a top-level statement of a loop body) reads and writes,
/// or what it holds that a rotation cannot move.
fn statement_accesses(stmt: &super::Stmt, f: &super::Function) -> Result<Accesses, &'static str> {
    use super::Stmt;
    let mut acc: Accesses = Default::default();
    fn region(f: &super::Function, r: &super::Region, reads: &mut BTreeSet<Handle<Buffer>>) {
        for range in &r.ranges {
            expr_loads(f, range.start, reads);
            expr_loads(f, range.extent, reads);
        }
    }
    fn walk(
        f: &super::Function,
        stmt: &Stmt,
        top: bool,
        acc: &mut Accesses,
    ) -> Result<(), &'static str> {
        let (reads, writes) = (&mut acc.0, &mut acc.1);
        match stmt {
            Stmt::Copy { src, dst } => {
                region(f, src, reads);
                region(f, dst, reads);
                reads.insert(src.buffer);
                writes.insert(dst.buffer);
            }
            Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                for r in [a, b, c] {
                    region(f, r, reads);
                }
                expr_loads(f, *clear_accum, reads);
                reads.extend([a.buffer, b.buffer, c.buffer]);
                writes.insert(c.buffer);
            }
            Stmt::Fill { dst, value } => {
                region(f, dst, reads);
                expr_loads(f, *value, reads);
                writes.insert(dst.buffer);
            }
            Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
                reads.extend([*src, *dst]);
                writes.insert(*dst);
            }
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                region(f, dst, reads);
                if let super::AtomicValue::Region(r) = value {
                    region(f, r, reads);
                    reads.insert(r.buffer);
                } else if let super::AtomicValue::Scalar(e) = value {
                    expr_loads(f, *e, reads);
                }
                reads.insert(dst.buffer);
                writes.insert(dst.buffer);
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            }
            | Stmt::WarpReduce {
                buffer,
                indices,
                value,
                ..
            } => {
                for &i in indices {
                    expr_loads(f, i, reads);
                }
                expr_loads(f, *value, reads);
                writes.insert(*buffer);
            }
            Stmt::Assume { cond } | Stmt::DeviceAssert { cond } => expr_loads(f, *cond, reads),
            Stmt::Let { value, .. } if !top => expr_loads(f, *value, reads),
            Stmt::Let { .. } => return Err("a `let` binding"),
            Stmt::For {
                start,
                extent,
                body,
                kind,
                ..
            } => {
                if matches!(kind, super::LoopKind::Pipelined { .. }) {
                    return Err("a pipelined loop");
                }
                expr_loads(f, *start, reads);
                expr_loads(f, *extent, reads);
                for s in &body.stmts {
                    walk(f, s, false, acc)?;
                }
            }
            Stmt::Parallel { extents, body, .. } => {
                for &e in extents {
                    expr_loads(f, e, reads);
                }
                for s in &body.stmts {
                    walk(f, s, false, acc)?;
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                expr_loads(f, *cond, reads);
                for s in then.stmts.iter().chain(&otherwise.stmts) {
                    walk(f, s, false, acc)?;
                }
            }
            Stmt::Alloc { .. } | Stmt::AllocBarrier { .. } => return Err("an allocation"),
            Stmt::Barrier
            | Stmt::BarrierArrive { .. }
            | Stmt::BarrierWait { .. }
            | Stmt::Role { .. }
            | Stmt::Kernel { .. } => return Err("a barrier or role"),
        }
        Ok(())
    }
    walk(f, stmt, true, &mut acc)?;
    Ok(acc)
}

/// [`list_form`] of a body whose top-level statements are, in order, a
/// copy from a global buffer into a shared one (`true`) or something else.
fn form_of_lists(
    order: Option<&[i64]>,
    stage: Option<&[i64]>,
    num_stages: u32,
    copies: &[bool],
) -> Option<ListForm> {
    let len = copies.len();
    if order.is_none() && stage.is_none() {
        return None;
    }
    let default = |reason: &str| {
        Some(ListForm::Default {
            reason: reason.to_string(),
        })
    };
    let Some(stage) = stage else {
        return default("an `order` list without a `stage` list");
    };
    if stage.len() != len || order.is_some_and(|o| o.len() != len) {
        return default("lists whose length is not the body's statement count");
    }
    if num_stages < 2 {
        return default("fewer than two stages");
    }
    let consumer_stages: Vec<i64> = stage.iter().copied().filter(|&s| s >= 0).collect();
    let Some(&top) = consumer_stages.iter().max() else {
        return default("no statement with a stage of 0 or more");
    };
    let producers_copy =
        |producer: &dyn Fn(i64) -> bool| stage.iter().zip(copies).all(|(&s, &c)| !producer(s) || c);
    if stage.iter().any(|&s| s < 0) {
        if !producers_copy(&|s| s < 0) {
            return default("a statement other than a copy into shared memory at a negative stage");
        }
        if consumer_stages.iter().any(|&s| s != top) {
            return default("consumers at several stages: a rotated loop");
        }
        if let Some(o) = order {
            let ranks: Vec<i64> = o
                .iter()
                .zip(stage)
                .filter(|(_, s)| **s >= 0)
                .map(|(r, _)| *r)
                .collect();
            if ranks.windows(2).any(|w| w[0] > w[1]) {
                return default("an `order` that reorders the consumers");
            }
        }
        return Some(ListForm::Producers {
            producer: stage.iter().map(|&s| s < 0).collect(),
        });
    }
    let depth = top;
    if depth < 1 {
        return default("no statement of a stage above 0");
    }
    if stage.iter().any(|&s| s != 0 && s != depth) {
        return default("consumers at several stages: a rotated loop");
    }
    if !producers_copy(&|s| s == 0) {
        return default("a statement other than a copy into shared memory at stage 0");
    }
    if depth.saturating_add(1) > i64::from(num_stages) {
        return default("a depth that `num_stages` cannot buffer");
    }
    let late = order.and_then(|o| {
        let ranks = |want: i64| {
            o.iter()
                .zip(stage)
                .filter(move |(_, s)| **s == want)
                .map(|(r, _)| *r)
        };
        let (first_c, last_c) = (ranks(depth).min()?, ranks(depth).max()?);
        let (first_p, last_p) = (ranks(0).min()?, ranks(0).max()?);
        if last_p < first_c {
            Some(false)
        } else if first_p > last_c {
            Some(true)
        } else {
            None
        }
    });
    Some(ListForm::Staged(Staged {
        stage: stage.to_vec(),
        depth,
        late,
    }))
}

/// Per-statement `order` and `stage` lists (each absent when not given).
pub type StatementLists = (Option<Vec<i64>>, Option<Vec<i64>>);

/// Per-statement lists from TileLang's `group` form: `order[g]` and
/// `stage[g]` for every statement of group `g`, the ranks made distinct
/// by program order within a rank. `groups` must partition `0 .. len`;
/// the error says how it does not.
pub fn expand_groups(
    groups: &[Vec<i64>],
    order: Option<&[i64]>,
    stage: Option<&[i64]>,
    len: usize,
) -> Result<StatementLists, String> {
    for (which, list) in [("order", order), ("stage", stage)] {
        if let Some(l) = list
            && l.len() != groups.len()
        {
            return Err(format!(
                "`{which}` has {} entries, but `group` has {} (one entry per group is expected)",
                l.len(),
                groups.len()
            ));
        }
    }
    let mut group_of = vec![None; len];
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            let slot = usize::try_from(m).ok().and_then(|i| group_of.get_mut(i));
            match slot {
                None => {
                    return Err(format!(
                        "group {g} names statement {m}, but the loop body has {len} statements (0 to {})",
                        len.saturating_sub(1)
                    ));
                }
                Some(Some(other)) => {
                    return Err(format!(
                        "statement {m} is in group {other} and in group {g}"
                    ));
                }
                Some(slot) => *slot = Some(g),
            }
        }
    }
    let group_of: Vec<usize> = match group_of.iter().position(Option::is_none) {
        Some(k) => return Err(format!("statement {k} of the loop body is in no group")),
        None => group_of.into_iter().flatten().collect(),
    };
    let stage = stage.map(|s| group_of.iter().map(|&g| s[g]).collect());
    let order = order.map(|o| {
        let mut by_rank: Vec<usize> = (0..len).collect();
        by_rank.sort_by_key(|&k| (o[group_of[k]], k));
        let mut rank = vec![0i64; len];
        for (r, &k) in by_rank.iter().enumerate() {
            rank[k] = r as i64;
        }
        rank
    });
    Ok((order, stage))
}

/// For each top-level statement of `body`: whether it is a copy from a
/// global buffer into a shared one (what [`list_form`] reads).
fn copies_into_shared(body: &super::Block, f: &super::Function) -> Vec<bool> {
    body.stmts
        .iter()
        .map(|s| match s {
            super::Stmt::Copy { src, dst } => {
                f.buffers[src.buffer].scope == super::Scope::Global
                    && f.buffers[dst.buffer].scope == super::Scope::Shared
            }
            _ => false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_reason(f: Option<ListForm>) -> String {
        match f {
            Some(ListForm::Default { reason }) => reason,
            other => panic!("expected the default schedule, got {other:?}"),
        }
    }

    #[test]
    fn staged_lists_keep_their_order() {
        assert_eq!(
            form_of_lists(Some(&[0, 1, 2]), Some(&[0, 0, 2]), 3, &[true, true, false]),
            Some(ListForm::Staged(Staged {
                stage: vec![0, 0, 2],
                depth: 2,
                late: Some(false)
            }))
        );
        assert_eq!(
            form_of_lists(Some(&[2, 1, 0]), Some(&[0, 0, 1]), 2, &[true, true, false]),
            Some(ListForm::Staged(Staged {
                stage: vec![0, 0, 1],
                depth: 1,
                late: Some(true)
            }))
        );
        assert_eq!(
            form_of_lists(Some(&[0, 2, 1]), Some(&[0, 0, 1]), 2, &[true, true, false]),
            Some(ListForm::Staged(Staged {
                stage: vec![0, 0, 1],
                depth: 1,
                late: None
            }))
        );
        assert_eq!(form_of_lists(None, None, 3, &[true, true, false]), None);
        assert!(
            default_reason(form_of_lists(
                None,
                Some(&[0, 0, 1]),
                2,
                &[true, false, false]
            ))
            .contains("other than a copy")
        );
    }

    #[test]
    fn negative_stages_mark_producers() {
        assert_eq!(
            form_of_lists(
                Some(&[-1, 0, 1, -1, 2]),
                Some(&[-1, 0, 0, -1, 0]),
                2,
                &[true, false, false, true, false]
            ),
            Some(ListForm::Producers {
                producer: vec![true, false, false, true, false]
            })
        );
        assert!(
            default_reason(form_of_lists(
                Some(&[-1, 0, 3, 1, -1, 2]),
                Some(&[-1, 0, 0, 1, -1, 1]),
                2,
                &[true, false, false, false, true, false]
            ))
            .contains("several stages")
        );
        assert!(
            default_reason(form_of_lists(
                Some(&[-1, 1, 0]),
                Some(&[-1, 0, 0]),
                2,
                &[true, false, false]
            ))
            .contains("reorders")
        );
        assert!(
            default_reason(form_of_lists(
                None,
                Some(&[-1, -1, 0]),
                2,
                &[true, false, false]
            ))
            .contains("negative stage")
        );
    }

    #[test]
    fn other_lists_take_the_default_schedule() {
        let c3 = &[true, true, false];
        assert!(
            default_reason(form_of_lists(None, Some(&[0, 0, 2]), 2, c3)).contains("cannot buffer")
        );
        assert!(default_reason(form_of_lists(None, Some(&[0, 1, 2]), 3, c3)).contains("several"));
        assert!(
            default_reason(form_of_lists(Some(&[0, 1]), None, 3, &[true, false]))
                .contains("without")
        );
        assert!(
            default_reason(form_of_lists(None, Some(&[0, 1]), 1, &[true, false]))
                .contains("two stages")
        );
        assert!(
            default_reason(form_of_lists(None, Some(&[0, 0]), 2, &[true, true]))
                .contains("above 0")
        );
    }

    #[test]
    fn groups_expand_to_statements() {
        let groups = vec![vec![0], vec![1, 2], vec![3], vec![4]];
        let (order, stage) = expand_groups(&groups, Some(&[-1, 0, 2, 1]), Some(&[-1, 0, 1, 1]), 5)
            .expect("a partition of the statements");
        assert_eq!(stage, Some(vec![-1, 0, 0, 1, 1]));
        // Ranks: group 0 (-1) first, then group 1 (0: statements 1, 2),
        // group 3 (1: statement 4), group 2 (2: statement 3).
        assert_eq!(order, Some(vec![0, 1, 2, 4, 3]));
    }

    #[test]
    fn bad_groups_are_refused() {
        let e = |g: Vec<Vec<i64>>, n| {
            expand_groups(&g, Some(&[0, 1]), Some(&[0, 1]), n).expect_err("not a partition")
        };
        assert!(e(vec![vec![0], vec![1, 2]], 2).contains("names statement 2"));
        assert!(e(vec![vec![0, 1], vec![1]], 2).contains("in group 0 and in group 1"));
        assert!(
            e(vec![vec![0], vec![2]], 3).contains("statement 1 of the loop body is in no group")
        );
        assert!(e(vec![vec![0, 1]], 2).contains("`order` has 2 entries, but `group` has 1"));
        assert!(e(vec![vec![-1], vec![0]], 1).contains("names statement -1"));
    }
}
