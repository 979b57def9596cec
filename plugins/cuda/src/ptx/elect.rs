//! One thread chosen by `elect.sync` where the kernel names one.
//!
//! The lowering gives single-thread work (initialising barriers, a
//! producer issuing TMA copies) to one thread by number: `if thread_idx ==
//! c { .. }`. From sm_90, a warp can instead pick one of its lanes with
//! `elect.sync`, which branches on a warp-uniform test first and leaves the
//! choice of lane to the hardware (the same one every time for the same
//! lanes).
//!
//! # When
//! The emitter writes `if thread_idx == c` (either operand order, `c` an
//! integer literal, no `else`) as: every thread of warp `c / 32` enters
//! (a warp-uniform branch), takes `activemask` and `elect.sync`s one of
//! those lanes, which runs the body. That is the same program only when
//! the body cannot tell which thread runs it and leaves nothing behind in
//! registers for the thread numbered `c` to read later:
//! - it reads neither `thread_idx` nor `lane_id` (`warp_id` is the same
//!   for every candidate);
//! - it writes no register except the variables of its own loops (which
//!   the verifier keeps inside their loops);
//! - it holds no statement whose effect belongs to the issuing thread or
//!   its warp: shuffles, barriers, matrix operations and fences, `cp.async`
//!   and its groups, register reallocation.
//!
//! Everything else (mbarrier operations, TMA loads, loops and conditions
//! over them, stores) is the same whichever thread issues it. The SIMT
//! interpreter runs the thread-level IR as written (thread `c`).

use std::collections::HashSet;

use tilec_core::ir::BinaryOp;
use tilec_core::thread::{Expr, ExprKind, Special, Stmt, StmtKind, visit};

use super::PtxError;
use super::kernel::Emitter;
use super::value::{Class, Val};

type Result<T> = std::result::Result<T, PtxError>;

/// `c` when `cond` is `thread_idx == c`.
fn thread_number(cond: &Expr) -> Option<i64> {
    let ExprKind::Binary(BinaryOp::Eq, a, b) = &cond.kind else {
        return None;
    };
    let is_tid = |e: &Expr| matches!(e.kind, ExprKind::Special(Special::ThreadIdx));
    match (is_tid(a), is_tid(b)) {
        (true, false) => b.as_const_int(),
        (false, true) => a.as_const_int(),
        _ => None,
    }
}

/// Whether `e` reads the thread's number or lane.
fn reads_thread(e: &Expr) -> bool {
    let mut found = false;
    visit::for_each_subexpr(e, &mut |e| {
        found |= matches!(
            e.kind,
            ExprKind::Special(Special::ThreadIdx | Special::LaneId)
        );
    });
    found
}

/// Whether any thread may run `body` in place of any other (module docs),
/// collecting its loop variables into `loops`.
fn anonymous(body: &[Stmt], loops: &mut HashSet<tilec_core::thread::RegId>) -> bool {
    body.iter().all(|s| {
        let mut thread = false;
        visit::for_each_own_expr(s, &mut |e| thread |= reads_thread(e));
        if thread {
            return false;
        }
        match &s.kind {
            StmtKind::MbarrierInit { .. }
            | StmtKind::MbarrierArrive { .. }
            | StmtKind::MbarrierWait { .. }
            | StmtKind::TmaLoad { .. }
            | StmtKind::Store { .. } => true,
            StmtKind::For { var, body, .. } => {
                loops.insert(*var);
                anonymous(body, loops)
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                anonymous(then_body, loops)
                    && else_body.as_deref().is_none_or(|e| anonymous(e, loops))
            }
            _ => false,
        }
    })
}

impl Emitter<'_> {
    /// Emits `if cond { then_body }` through `elect.sync` when the module
    /// docs allow it; answers whether it did.
    pub(super) fn elect_if(&mut self, cond: &Expr, then_body: &[Stmt]) -> Result<bool> {
        if self.target.version < (8, 0) || self.target.warp != 32 {
            return Ok(false);
        }
        let Some(c) = thread_number(cond).filter(|&c| (0..i64::from(self.k.threads)).contains(&c))
        else {
            return Ok(false);
        };
        let mut loops = HashSet::new();
        if !anonymous(then_body, &mut loops) {
            return Ok(false);
        }
        let mut written = HashSet::new();
        visit::writes(then_body, &mut written);
        if !written.is_subset(&loops) {
            return Ok(false);
        }
        self.body.comment(format!(
            "one lane of warp {} (elect.sync) stands for thread {c}",
            c / 32
        ));
        let tid = self.special(Special::ThreadIdx);
        let warp = self.op2(Class::B32, "shr.u32", &tid, &Val::bits(Class::B32, 5));
        let other = self.setp("ne", "u32", &warp, &Val::bits(Class::B32, (c / 32) as u64));
        let end = self.body.fresh_label("elect_end");
        self.body
            .inst_if(Some(&other.text), format!("bra.uni {end}"));
        let lanes = self.tmp(Class::B32);
        self.emit(format!("activemask.b32 {lanes}"));
        let elected = self.tmp(Class::Pred);
        self.emit(format!("elect.sync _|{elected}, {lanes}"));
        self.body
            .inst_if(Some(&format!("!{elected}")), format!("bra {end}"));
        let r = self.block(then_body);
        self.body.label(&end);
        r.map(|()| true)
    }
}
