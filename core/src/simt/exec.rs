//! Executing one block: the machine state, expression evaluation, the
//! statements other than control flow (run for a group's active mask; the
//! groups and their control flow are `sched.rs`'s), and the shared-memory
//! hazard records.

use std::collections::HashMap;

use super::Stats;
use super::error::{ExecErrorKind, Location, SimtError};
use super::mma::AtomTables;
use super::value::{OpFault, Val, binary, bitcast, cast, unary};
use crate::interp::{Tensor, TensorData};
use crate::ir::{AtomicOp, BinaryOp, DType};
use crate::target::TargetDescription;
use crate::thread::{
    Expr, ExprKind, Guard, GuardElse, Kernel, MemRef, ParamId, RegRef, ShuffleKind, Special, Stmt,
    StmtKind, StmtPath, print_stmt_header,
};

type Fault = ExecErrorKind;

/// What error messages need about a statement.
pub(super) struct StmtInfo {
    pub path: StmtPath,
    pub header: String,
}

/// Facts fixed for the whole run.
pub(super) struct Ctx<'a> {
    pub k: &'a Kernel,
    pub target: &'a TargetDescription,
    pub simt: u32,
    /// Value of each scalar parameter by parameter index (0 for buffers).
    pub symbols: Vec<i64>,
    /// Argument index of each global parameter, by parameter index.
    pub arg_of: Vec<Option<usize>>,
    /// Statements by address.
    pub stmts: HashMap<usize, StmtInfo>,
    pub step_limit: u64,
    /// Most thread steps, and those taken so far over every block.
    pub work_limit: u64,
    pub work: std::cell::Cell<u64>,
}

/// The bytes one register element takes, and one shared element with its
/// race-detection record.
pub(super) const REGISTER_BYTES: u64 = size_of::<Val>() as u64;
pub(super) const SHARED_ELEMENT_BYTES: u64 = (size_of::<Val>() + size_of::<Shadow>()) as u64;

pub(super) fn stmt_key(s: &Stmt) -> usize {
    s as *const Stmt as usize
}

/// Collects every statement's path and printed header.
pub(super) fn index_statements(
    k: &Kernel,
    body: &[Stmt],
    path: &mut Vec<u32>,
    out: &mut HashMap<usize, StmtInfo>,
) {
    for (i, s) in body.iter().enumerate() {
        path.push(i as u32);
        out.insert(
            stmt_key(s),
            StmtInfo {
                path: StmtPath(path.clone()),
                header: print_stmt_header(k, s),
            },
        );
        match &s.kind {
            StmtKind::For { body, .. } => index_statements(k, body, path, out),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                path.push(0);
                index_statements(k, then_body, path, out);
                path.pop();
                if let Some(e) = else_body {
                    path.push(1);
                    index_statements(k, e, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
        path.pop();
    }
}

const NOBODY: u32 = u32::MAX;

/// Most distinct readers of one element an epoch tracks exactly.
const FEW: usize = 4;

/// Who read an element in the current epoch, with each reader's release
/// clock at its (last) read and the statement of the first read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Readers {
    None,
    Few {
        n: u8,
        who: [u32; FEW],
        clock: [u32; FEW],
        stmt: usize,
    },
    /// More readers than tracked: they lie among threads `lo ..= hi`
    /// (not every thread there need have read) and none read at a release
    /// clock above `clock`. A write is ordered after them by a `barrier`,
    /// or when its writer acquired a release above `clock` from every
    /// thread of the range: sound, and coarser than `Few` only where the
    /// range holds threads that did not read or the readers' clocks
    /// differ (threads of one role arrive alike, so their clocks agree).
    Many {
        first: u32,
        stmt: usize,
        lo: u32,
        hi: u32,
        clock: u32,
    },
}

impl Readers {
    /// `t`'s read, if tracked, as made at release clock `clock` (or
    /// later).
    fn restamp(self, t: u32, at: u32) -> Readers {
        match self {
            Readers::Few {
                n,
                who,
                mut clock,
                stmt,
            } => {
                if let Some(k) = who[..n as usize].iter().position(|&u| u == t) {
                    clock[k] = clock[k].max(at);
                }
                Readers::Few {
                    n,
                    who,
                    clock,
                    stmt,
                }
            }
            Readers::Many {
                first,
                stmt,
                lo,
                hi,
                clock,
            } if (lo..=hi).contains(&t) => Readers::Many {
                first,
                stmt,
                lo,
                hi,
                clock: clock.max(at),
            },
            other => other,
        }
    }

    /// `t` read at release clock `clock` in statement `stmt`.
    fn add(self, t: u32, clock: u32, stmt: usize) -> Readers {
        match self {
            Readers::None => Readers::Few {
                n: 1,
                who: [t, 0, 0, 0],
                clock: [clock, 0, 0, 0],
                stmt,
            },
            Readers::Few {
                n,
                mut who,
                clock: mut clocks,
                stmt: first,
            } => {
                let n = n as usize;
                if let Some(k) = who[..n].iter().position(|&u| u == t) {
                    clocks[k] = clocks[k].max(clock);
                } else if n < FEW {
                    who[n] = t;
                    clocks[n] = clock;
                } else {
                    let seen = who.iter().copied().chain([t]);
                    return Readers::Many {
                        first: who[0],
                        stmt: first,
                        lo: seen.clone().min().unwrap_or(t),
                        hi: seen.max().unwrap_or(t),
                        clock: clocks.iter().copied().fold(clock, u32::max),
                    };
                }
                Readers::Few {
                    n: (n + usize::from(!who[..n].contains(&t))) as u8,
                    who,
                    clock: clocks,
                    stmt: first,
                }
            }
            Readers::Many {
                first,
                stmt,
                lo,
                hi,
                clock: c,
            } => Readers::Many {
                first,
                stmt,
                lo: lo.min(t),
                hi: hi.max(t),
                clock: c.max(clock),
            },
        }
    }
}

/// The hazard record of one shared element.
#[derive(Clone, Copy, Debug)]
struct Shadow {
    writer: u32,
    write_epoch: u64,
    /// The writer's release clock when it wrote.
    write_clock: u32,
    write_stmt: usize,
    readers: Readers,
    read_epoch: u64,
    /// The thread whose cp.async to this element is in flight, if any.
    inflight: u32,
    inflight_stmt: usize,
    /// When the element's last write was a `tma_load`: the barrier (index
    /// in `Machine::bars`) and the phase the copy completes, which a
    /// reader must have seen complete; `NO_TMA` otherwise.
    tma_bar: u32,
    tma_phase: u64,
}

const NO_TMA: u64 = u64::MAX;

const FRESH: Shadow = Shadow {
    writer: NOBODY,
    write_epoch: 0,
    write_clock: 0,
    write_stmt: 0,
    readers: Readers::None,
    read_epoch: 0,
    inflight: NOBODY,
    inflight_stmt: 0,
    tma_bar: 0,
    tma_phase: NO_TMA,
};

/// A phased barrier (`mbarrier_*`).
#[derive(Clone, Debug, Default)]
struct PhasedBarrier {
    /// Arrivals each phase expects.
    count: u64,
    /// Arrivals the current phase still expects.
    pending: u64,
    /// Transaction bytes the current phase still expects (may dip below
    /// zero when a copy lands before its `expect_tx`).
    tx: i64,
    /// Phases completed so far: the current phase's number.
    completed: u64,
    /// The arrivals of the current phase: thread → its release clock
    /// after arriving.
    arrived: HashMap<u32, u32>,
    /// The arrivals of every completed phase, merged (latest clock per
    /// thread): what a wait that sees a completed phase acquires.
    released: HashMap<u32, u32>,
}

/// The current round of a numbered barrier (`bar_sync`/`bar_arrive`).
#[derive(Clone, Debug, Default)]
struct NamedRound {
    /// Rounds completed so far.
    round: u64,
    /// The thread count of the current round (0 before its first arrival).
    expected: u32,
    /// The arrivals of the current round: thread → its release clock
    /// after arriving.
    arrived: HashMap<u32, u32>,
    /// The arriving threads that wait (`bar_sync`), which acquire every
    /// arrival when the round completes.
    syncing: Vec<u32>,
}

struct SharedMem {
    data: Vec<Val>,
    shadow: Vec<Shadow>,
    /// Per element: `async_mma`s not yet retired that read it (and the
    /// statement of the last), so that no write may land meanwhile.
    mma_reads: Vec<(u32, usize)>,
}

/// An asynchronous copy in flight.
struct Pending {
    /// The commit group, once committed.
    group: Option<u64>,
    buffer: usize,
    start: usize,
    values: Vec<Val>,
    stmt: usize,
}

#[derive(Default)]
struct ThreadAsync {
    pending: Vec<Pending>,
    committed: u64,
    /// `async_mma`s not yet retired.
    mma: Vec<MmaPending>,
    mma_committed: u64,
}

/// One thread's `async_mma` not yet retired: its accumulator slots and,
/// for the issuing group's first thread, the shared elements it reads.
struct MmaPending {
    reg: usize,
    /// First and last slot in the thread's array.
    lo: usize,
    hi: usize,
    /// The commit group, once committed.
    group: Option<u64>,
    stmt: usize,
    /// (buffer, element) read from shared memory.
    reads: Vec<(usize, usize)>,
}

/// One block's state.
pub(super) struct Machine<'a, 't> {
    pub cx: &'a Ctx<'a>,
    pub args: &'t mut [Tensor],
    pub stats: &'t mut Stats,
    pub atoms: &'t mut HashMap<(String, u32), AtomTables>,
    pub block: [i64; 3],
    pub n: usize,
    /// Per register: `threads × len` values, thread-major.
    pub regs: Vec<Vec<Val>>,
    shared: Vec<SharedMem>,
    epoch: u64,
    asyncs: Vec<ThreadAsync>,
    /// The shared accesses of the statement being run, for the bank model.
    lanes: Vec<super::banks::LaneAccess>,
    /// Threads with `async_mma` accumulators not yet retired.
    mma_live: usize,
    /// Phased barriers by (shared buffer, element), once initialised, and
    /// their states.
    bar_ids: HashMap<(usize, usize), u32>,
    bars: Vec<PhasedBarrier>,
    /// Per thread: per barrier, the phases its waits saw completed.
    seen: Vec<HashMap<u32, u64>>,
    /// Per thread: its release clock, advanced by each of its arrivals.
    clock: Vec<u32>,
    /// Per thread: per other thread, the latest release clock of theirs
    /// its barrier waits acquired.
    known: Vec<HashMap<u32, u32>>,
    /// Numbered barriers by number.
    named: Vec<NamedRound>,
}

impl<'a, 't> Machine<'a, 't> {
    pub fn new(
        cx: &'a Ctx<'a>,
        args: &'t mut [Tensor],
        stats: &'t mut Stats,
        atoms: &'t mut HashMap<(String, u32), AtomTables>,
        block: [i64; 3],
    ) -> Self {
        let n = cx.k.threads as usize;
        let regs =
            cx.k.registers
                .iter()
                .map(|r| vec![Val::poison(r.dtype); n * r.len() as usize])
                .collect();
        let shared =
            cx.k.shared
                .iter()
                .map(|s| SharedMem {
                    data: vec![Val::poison(s.dtype); s.len as usize],
                    shadow: vec![FRESH; s.len as usize],
                    mma_reads: Vec::new(),
                })
                .collect();
        Machine {
            cx,
            args,
            stats,
            atoms,
            block,
            n,
            regs,
            shared,
            epoch: 1,
            asyncs: (0..n).map(|_| ThreadAsync::default()).collect(),
            lanes: Vec::new(),
            mma_live: 0,
            bar_ids: HashMap::new(),
            bars: Vec::new(),
            seen: vec![HashMap::new(); n],
            clock: vec![0; n],
            known: vec![HashMap::new(); n],
            named: Vec::new(),
        }
    }

    /// Notes thread `t`'s access of `elems` elements at `index` of shared
    /// buffer `b` for the bank model.
    fn record_lane(&mut self, b: usize, t: usize, index: usize, elems: u64) {
        let size = self.cx.k.shared.get(b).map_or(1, |s| s.dtype.bytes());
        self.lanes.push(super::banks::LaneAccess {
            thread: t,
            byte: index as u64 * size,
            bytes: u32::try_from(elems * size).unwrap_or(u32::MAX),
        });
    }

    /// Adds the bank passes of the statement just run (`banks.rs`), a
    /// load or a store.
    fn count_bank_passes(&mut self, load: bool) {
        if self.lanes.is_empty() {
            return;
        }
        let (passes, ideal) = super::banks::passes(self.cx.target, self.cx.simt, &self.lanes);
        if load {
            self.stats.shared_load_passes += passes;
            self.stats.shared_load_passes_ideal += ideal;
        } else {
            self.stats.shared_store_passes += passes;
            self.stats.shared_store_passes_ideal += ideal;
        }
        self.lanes.clear();
    }

    pub fn fail(&self, s: &Stmt, thread: Option<usize>, kind: Fault) -> SimtError {
        let info = self.cx.stmts.get(&stmt_key(s));
        SimtError::Exec {
            at: Box::new(Location {
                kernel: self.cx.k.name.clone(),
                block: self.block,
                thread: thread.map(|t| t as u32),
                path: info.map(|i| i.path.clone()).unwrap_or_default(),
                stmt: info.map(|i| i.header.clone()).unwrap_or_default(),
                span: s.span,
            }),
            kind: Box::new(kind),
        }
    }

    /// An error of the block as a whole (no statement to blame).
    pub(super) fn fail_block(&self, kind: Fault) -> SimtError {
        SimtError::Exec {
            at: Box::new(Location {
                kernel: self.cx.k.name.clone(),
                block: self.block,
                thread: None,
                path: StmtPath::default(),
                stmt: String::new(),
                span: crate::ir::Span::UNKNOWN,
            }),
            kind: Box::new(kind),
        }
    }

    fn header(&self, key: usize) -> String {
        self.cx
            .stmts
            .get(&key)
            .map(|i| i.header.clone())
            .unwrap_or_default()
    }

    // ---- expressions ----

    fn reg_len(&self, r: usize) -> usize {
        self.cx.k.registers.get(r).map_or(1, |r| r.len() as usize)
    }

    fn reg_slot(&self, r: usize, index: i64, t: usize) -> Result<usize, Fault> {
        let len = self.reg_len(r);
        if index < 0 || index as u64 >= len as u64 {
            let name = self
                .cx
                .k
                .registers
                .get(r)
                .map_or_else(String::new, |r| r.name.clone());
            return Err(Fault::OutOfBounds {
                space: "local",
                buffer: name,
                start: index,
                end: index.saturating_add(1),
                len: len as u64,
            });
        }
        Ok(t * len + index as usize)
    }

    /// Fails when element `index` of register `r` of thread `t` is the
    /// accumulator of an `async_mma` not yet retired.
    fn check_mma_pending(&self, r: usize, index: i64, t: usize) -> Result<(), Fault> {
        if self.mma_live == 0 {
            return Ok(());
        }
        let Some(a) = self.asyncs.get(t) else {
            return Ok(());
        };
        for p in &a.mma {
            let (reg, lo, hi, stmt) = (p.reg, p.lo, p.hi, p.stmt);
            if reg == r && (lo as i64..=hi as i64).contains(&index) {
                return Err(Fault::AsyncMmaPending {
                    register: self
                        .cx
                        .k
                        .registers
                        .get(r)
                        .map_or_else(String::new, |x| x.name.clone()),
                    index: index as u64,
                    thread: t as u32,
                    mma_stmt: self.header(stmt),
                });
            }
        }
        Ok(())
    }

    /// Records thread `t`'s `async_mma` into slots `lo..=hi` of register
    /// `r`, reading the shared elements `reads` (given for one thread of
    /// the issuing group).
    pub(super) fn mma_issue(
        &mut self,
        t: usize,
        (r, lo, hi): (usize, usize, usize),
        stmt: usize,
        reads: Vec<(usize, usize)>,
    ) {
        for &(b, i) in &reads {
            if let Some(mem) = self.shared.get_mut(b) {
                if mem.mma_reads.is_empty() {
                    mem.mma_reads = vec![(0, 0); mem.data.len()];
                }
                if let Some(c) = mem.mma_reads.get_mut(i) {
                    *c = (c.0 + 1, stmt);
                }
            }
        }
        if let Some(a) = self.asyncs.get_mut(t) {
            if a.mma.is_empty() {
                self.mma_live += 1;
            }
            a.mma.push(MmaPending {
                reg: r,
                lo,
                hi,
                group: None,
                stmt,
                reads,
            });
        }
    }

    fn mma_commit(&mut self, t: usize) {
        if let Some(a) = self.asyncs.get_mut(t) {
            let group = a.mma_committed;
            for p in a.mma.iter_mut().filter(|p| p.group.is_none()) {
                p.group = Some(group);
            }
            a.mma_committed += 1;
        }
    }

    fn mma_wait(&mut self, t: usize, allowed: u64) {
        let Some(a) = self.asyncs.get_mut(t) else {
            return;
        };
        let committed = a.mma_committed;
        let was = !a.mma.is_empty();
        let (done, keep): (Vec<MmaPending>, Vec<MmaPending>) =
            std::mem::take(&mut a.mma).into_iter().partition(|p| {
                p.group
                    .is_some_and(|g| g.saturating_add(allowed) < committed)
            });
        a.mma = keep;
        if was && a.mma.is_empty() {
            self.mma_live -= 1;
        }
        // An async_mma reads its operands until it retires: its reads count
        // as made now, so only a release after this wait orders them.
        let clock = self.clock.get(t).copied().unwrap_or(0);
        let epoch = self.epoch;
        for p in done {
            for (b, i) in p.reads {
                let Some(m) = self.shared.get_mut(b) else {
                    continue;
                };
                if let Some(c) = m.mma_reads.get_mut(i) {
                    c.0 = c.0.saturating_sub(1);
                }
                if let Some(sh) = m.shadow.get_mut(i)
                    && sh.read_epoch == epoch
                {
                    sh.readers = sh.readers.restamp(t as u32, clock);
                }
            }
        }
    }

    fn read_reg(&self, r: usize, index: i64, t: usize) -> Result<Val, Fault> {
        self.check_mma_pending(r, index, t)?;
        let slot = self.reg_slot(r, index, t)?;
        self.regs
            .get(r)
            .and_then(|v| v.get(slot))
            .copied()
            .ok_or_else(|| Fault::Malformed(format!("register {r} has no storage")))
    }

    pub fn write_reg(&mut self, r: usize, index: i64, t: usize, v: Val) -> Result<(), Fault> {
        self.check_mma_pending(r, index, t)?;
        let slot = self.reg_slot(r, index, t)?;
        match self.regs.get_mut(r).and_then(|v| v.get_mut(slot)) {
            Some(place) => {
                *place = v;
                Ok(())
            }
            None => Err(Fault::Malformed(format!("register {r} has no storage"))),
        }
    }

    pub fn eval(&self, e: &Expr, t: usize) -> Result<Val, Fault> {
        Ok(match &e.kind {
            ExprKind::Literal(l) => match l {
                crate::ir::Literal::Bool(b) => Val::bool(*b),
                crate::ir::Literal::Int(v, _) => Val::I(*v),
                crate::ir::Literal::Float(x, _) => Val::F(*x),
            },
            ExprKind::Reg(r) => self.read_reg(r.index(), 0, t)?,
            ExprKind::Elem(r, i) => {
                let index = self.eval(i, t)?.as_i64();
                self.read_reg(r.index(), index, t)?
            }
            ExprKind::Param(p) => Val::I(self.cx.symbols.get(p.index()).copied().unwrap_or(0)),
            ExprKind::Special(s) => Val::I(match s {
                Special::ThreadIdx => t as i64,
                Special::BlockIdxX => self.block[0],
                Special::BlockIdxY => self.block[1],
                Special::BlockIdxZ => self.block[2],
                Special::LaneId => (t as i64) % i64::from(self.cx.simt.max(1)),
                Special::WarpId => (t as i64) / i64::from(self.cx.simt.max(1)),
            }),
            ExprKind::Unary(op, a) => unary(*op, a.dtype, self.eval(a, t)?),
            ExprKind::Cast(a) => cast(self.eval(a, t)?, a.dtype, e.dtype),
            ExprKind::Bitcast(a) => bitcast(self.eval(a, t)?, a.dtype, e.dtype),
            ExprKind::Select(c, a, b) => {
                if self.eval(c, t)?.is_true() {
                    self.eval(a, t)?
                } else {
                    self.eval(b, t)?
                }
            }
            ExprKind::Binary(op, a, b) => {
                let x = self.eval(a, t)?;
                match op {
                    BinaryOp::And if !x.is_true() => Val::bool(false),
                    BinaryOp::Or if x.is_true() => Val::bool(true),
                    _ => {
                        let y = self.eval(b, t)?;
                        binary(*op, a.dtype, x, y)
                            .map_err(|OpFault::DivisionByZero| Fault::DivisionByZero)?
                    }
                }
            }
        })
    }

    fn guard(&self, g: &Option<Guard>, t: usize) -> Result<Option<GuardElse>, Fault> {
        match g {
            None => Ok(None),
            Some(g) => Ok(if self.eval(&g.cond, t)?.is_true() {
                None
            } else {
                Some(g.otherwise)
            }),
        }
    }

    pub(super) fn count_step(&mut self, s: &Stmt) -> Result<(), SimtError> {
        self.stats.steps += 1;
        if self.stats.steps > self.cx.step_limit {
            return Err(self.fail(s, None, Fault::StepLimit(self.cx.step_limit)));
        }
        let work = self.cx.work.get().saturating_add(self.n as u64);
        self.cx.work.set(work);
        if work > self.cx.work_limit {
            return Err(self.fail(s, None, Fault::WorkLimit(self.cx.work_limit)));
        }
        Ok(())
    }

    // ---- memory ----

    fn global_arg(&self, p: ParamId) -> Result<usize, Fault> {
        self.cx
            .arg_of
            .get(p.index())
            .copied()
            .flatten()
            .ok_or_else(|| Fault::Malformed(format!("parameter {} is not a global buffer", p.0)))
    }

    fn global_range(&self, p: ParamId, index: i64, width: u64) -> Result<(usize, usize), Fault> {
        let arg = self.global_arg(p)?;
        let len = self.args.get(arg).map_or(0, |a| a.len()) as u64;
        let end = index.saturating_add(width as i64);
        if index < 0 || end as u64 > len {
            return Err(Fault::OutOfBounds {
                space: "global",
                buffer: self.cx.k.param_name(p).to_string(),
                start: index,
                end,
                len,
            });
        }
        if !(index as u64).is_multiple_of(width) {
            return Err(Fault::Misaligned {
                space: "global",
                buffer: self.cx.k.param_name(p).to_string(),
                index,
                width,
            });
        }
        Ok((arg, index as usize))
    }

    fn global_read(&self, arg: usize, i: usize) -> Val {
        match self.args.get(arg).map(|a| &a.data) {
            Some(TensorData::Float(v)) => Val::F(v.get(i).copied().unwrap_or(f64::NAN)),
            Some(TensorData::Int(v)) => Val::I(v.get(i).copied().unwrap_or(0)),
            None => Val::I(0),
        }
    }

    fn global_write(&mut self, arg: usize, i: usize, v: Val) {
        match (self.args.get_mut(arg).map(|a| &mut a.data), v) {
            (Some(TensorData::Float(d)), Val::F(x)) => {
                if let Some(p) = d.get_mut(i) {
                    *p = x;
                }
            }
            (Some(TensorData::Int(d)), Val::I(x)) => {
                if let Some(p) = d.get_mut(i) {
                    *p = x;
                }
            }
            _ => {}
        }
    }

    fn shared_range(&self, b: usize, index: i64, width: u64) -> Result<usize, Fault> {
        let (name, len) = self
            .cx
            .k
            .shared
            .get(b)
            .map_or((String::new(), 0), |s| (s.name.clone(), s.len));
        let end = index.saturating_add(width as i64);
        if index < 0 || end as u64 > len {
            return Err(Fault::OutOfBounds {
                space: "shared",
                buffer: name,
                start: index,
                end,
                len,
            });
        }
        if !(index as u64).is_multiple_of(width) {
            return Err(Fault::Misaligned {
                space: "shared",
                buffer: name,
                index,
                width,
            });
        }
        Ok(index as usize)
    }

    fn shared_name(&self, b: usize) -> String {
        self.cx
            .k
            .shared
            .get(b)
            .map_or_else(String::new, |s| s.name.clone())
    }

    /// A read of shared element `i` of buffer `b` by thread `t`.
    pub(super) fn shared_read(
        &mut self,
        b: usize,
        i: usize,
        t: u32,
        stmt: usize,
    ) -> Result<Val, Fault> {
        let epoch = self.epoch;
        let name = self.shared_name(b);
        let Some((sh, value)) = self
            .shared
            .get(b)
            .and_then(|m| Some((*m.shadow.get(i)?, *m.data.get(i)?)))
        else {
            return Err(Fault::Malformed(format!("shared element {b}[{i}] missing")));
        };
        if sh.inflight != NOBODY {
            let (issuer, copy) = (sh.inflight, sh.inflight_stmt);
            return Err(Fault::ReadBeforeAsyncWait {
                buffer: name,
                element: i as u64,
                reader: t,
                issuer,
                copy_stmt: self.header(copy),
            });
        }
        if sh.tma_phase != NO_TMA {
            // Ordered by the barrier phase the copy completes, not by
            // `barrier`s.
            if !self.saw_tma_phase(t, &sh) {
                let (bar, copy) = (sh.tma_bar, sh.write_stmt);
                let (barrier, index) = self.bar_name(bar);
                return Err(Fault::ReadBeforeBarrierWait {
                    buffer: name,
                    element: i as u64,
                    reader: t,
                    copy_stmt: self.header(copy),
                    barrier,
                    index,
                });
            }
        } else if sh.writer != NOBODY
            && sh.writer != t
            && sh.write_epoch == epoch
            && !self.acquired(t, sh.writer, sh.write_clock)
        {
            let (writer, ws) = (sh.writer, sh.write_stmt);
            return Err(Fault::ReadAfterWrite {
                buffer: name,
                element: i as u64,
                writer,
                reader: t,
                writer_stmt: self.header(ws),
            });
        }
        let clock = self.clock.get(t as usize).copied().unwrap_or(0);
        if let Some(sh) = self.shared.get_mut(b).and_then(|m| m.shadow.get_mut(i)) {
            if sh.read_epoch != epoch {
                sh.read_epoch = epoch;
                sh.readers = Readers::None;
            }
            sh.readers = sh.readers.add(t, clock, stmt);
        }
        Ok(value)
    }

    /// The buffer name and element of barrier `id`.
    fn bar_name(&self, id: u32) -> (String, u64) {
        self.bar_ids
            .iter()
            .find(|&(_, &v)| v == id)
            .map_or((String::new(), 0), |(&(b, i), _)| {
                (self.shared_name(b), i as u64)
            })
    }

    /// The barrier at element `index` of shared buffer `b` (evaluated by
    /// thread `t`): its id, once initialised.
    fn barrier_at(&self, b: usize, index: &Expr, t: usize) -> Result<(usize, Option<u32>), Fault> {
        let i = self.eval(index, t)?.as_i64();
        let i = self.shared_range(b, i, 1)?;
        Ok((i, self.bar_ids.get(&(b, i)).copied()))
    }

    /// The initialised barrier at `b[index]` for thread `t`.
    fn live_barrier(&self, b: usize, index: &Expr, t: usize) -> Result<u32, Fault> {
        match self.barrier_at(b, index, t)? {
            (_, Some(id)) => Ok(id),
            (i, None) => Err(Fault::Mbarrier {
                barrier: self.shared_name(b),
                index: i as u64,
                reason: "used before mbarrier_init".to_string(),
            }),
        }
    }

    /// Completes barrier `id`'s phase when its arrivals and bytes are in.
    fn settle(&mut self, id: u32) {
        if let Some(bar) = self.bars.get_mut(id as usize)
            && bar.pending == 0
            && bar.tx == 0
        {
            bar.completed += 1;
            bar.pending = bar.count;
            for (t, c) in std::mem::take(&mut bar.arrived) {
                let e = bar.released.entry(t).or_insert(c);
                *e = (*e).max(c);
            }
        }
    }

    /// `mbarrier_arrive` (with `expect_tx` bytes) by thread `t`.
    fn arrive(&mut self, b: usize, index: &Expr, tx: Option<i64>, t: usize) -> Result<(), Fault> {
        let id = self.live_barrier(b, index, t)?;
        let Some(bar) = self.bars.get_mut(id as usize) else {
            return Err(Fault::Malformed("barrier state missing".to_string()));
        };
        bar.tx += tx.unwrap_or(0);
        if let Some(c) = self.clock.get_mut(t) {
            *c += 1;
            bar.arrived.insert(t as u32, *c);
        }
        if bar.pending == 0 {
            let (barrier, index) = self.bar_name(id);
            return Err(Fault::Mbarrier {
                barrier,
                index,
                reason: "more arrivals than the phase expects".to_string(),
            });
        }
        bar.pending -= 1;
        self.settle(id);
        Ok(())
    }

    /// The barrier thread `t`'s `mbarrier_wait` on `b[index]` names, the
    /// parity it waits for, and whether that phase has completed.
    fn wait_target(
        &self,
        b: usize,
        index: &Expr,
        parity: &Expr,
        t: usize,
    ) -> Result<(u32, u64, bool), Fault> {
        let id = self.live_barrier(b, index, t)?;
        let parity = (self.eval(parity, t)?.as_i64() & 1) as u64;
        let done = self
            .bars
            .get(id as usize)
            .is_none_or(|bar| bar.completed & 1 != parity);
        Ok((id, parity, done))
    }

    /// `mbarrier_wait` by thread `t`. The scheduler runs it once the phase
    /// completed (`mbarrier_ready`), or to report one that never will.
    fn barrier_wait(
        &mut self,
        b: usize,
        index: &Expr,
        parity: &Expr,
        t: usize,
    ) -> Result<(), Fault> {
        let (id, parity, done) = self.wait_target(b, index, parity, t)?;
        let Some(bar) = self.bars.get(id as usize).cloned() else {
            return Err(Fault::Malformed("barrier state missing".to_string()));
        };
        if !done {
            let (barrier, index) = self.bar_name(id);
            return Err(Fault::BarrierWaitStuck {
                barrier,
                index,
                thread: t as u32,
                parity,
                phase: bar.completed,
                arrivals: bar.pending,
                bytes: bar.tx,
            });
        }
        if let Some(seen) = self.seen.get_mut(t) {
            seen.insert(id, bar.completed);
        }
        if let Some(known) = self.known.get_mut(t) {
            for (&u, &c) in &bar.released {
                let e = known.entry(u).or_insert(c);
                *e = (*e).max(c);
            }
        }
        Ok(())
    }

    /// `tma_load` by thread `t` (module documentation of `simt`): the box
    /// lands at once, tagged with the barrier phase it completes.
    #[allow(clippy::too_many_arguments)]
    fn tma_load(
        &mut self,
        map: crate::thread::TensorMapId,
        dst: usize,
        dst_index: &Expr,
        coords: &[Expr],
        bar: usize,
        bar_index: &Expr,
        t: usize,
        key: usize,
    ) -> Result<(), Fault> {
        let k = self.cx.k;
        let Some(m) = k.tensor_maps.get(map.index()) else {
            return Err(Fault::Malformed("tensor map missing".to_string()));
        };
        let id = self.live_barrier(bar, bar_index, t)?;
        let arg = self.global_arg(m.global)?;
        let dims: Vec<i64> = self
            .args
            .get(arg)
            .map(|a| a.shape.iter().map(|&d| d as i64).collect())
            .unwrap_or_default();
        let origin: Vec<i64> = coords
            .iter()
            .map(|c| self.eval(c, t).map(|v| v.as_i64()))
            .collect::<Result<_, _>>()?;
        let dtype = k.shared.get(dst).map_or(DType::U8, |s| s.dtype);
        let e = dtype.bytes().max(1) as i64;
        let total = m.box_elements() as usize;
        let start = self.eval(dst_index, t)?.as_i64();
        let start = self.shared_range(dst, start, total as u64)?;
        let tma_fault = |reason: String| Fault::Tma {
            buffer: self.shared_name(dst),
            reason,
        };
        if dims.len() != m.box_dims.len() || origin.len() != dims.len() {
            return Err(tma_fault("the box's rank is not the buffer's".to_string()));
        }
        if (start as i64 * e) % 128 != 0 {
            return Err(tma_fault(format!(
                "element {start} does not start on a 128-byte boundary"
            )));
        }
        let sw = m.swizzle;
        let mut writes = Vec::with_capacity(total);
        for lin in 0..total {
            // Box coordinates of element `lin`, row-major.
            let mut rest = lin as i64;
            let mut flat: i64 = 0;
            let mut inside = true;
            for d in (0..dims.len()).rev() {
                let extent = i64::from(m.box_dims[d]);
                let c = origin[d] + rest % extent;
                rest /= extent;
                inside &= c >= 0 && c < dims[d];
                let stride: i64 = dims[d + 1..].iter().product();
                flat += c * stride;
            }
            let value = if inside {
                self.global_read(arg, flat as usize)
            } else {
                Val::zero(dtype)
            };
            let byte = (start as i64 + lin as i64) * e;
            let swizzled = crate::thread::SharedMatrix::swizzle_address(sw, byte as u64) as i64;
            writes.push(((swizzled / e) as usize, value));
        }
        for &(i, _) in &writes {
            self.check_shared_write(dst, i, t as u32, None)?;
        }
        let phase = self.bars.get(id as usize).map_or(0, |b| b.completed);
        for (i, v) in writes {
            self.record_write(dst, i, t as u32, v, key);
            if let Some(sh) = self.shared.get_mut(dst).and_then(|m| m.shadow.get_mut(i)) {
                sh.tma_bar = id;
                sh.tma_phase = phase;
            }
        }
        if let Some(b) = self.bars.get_mut(id as usize) {
            b.tx -= total as i64 * e;
        }
        self.settle(id);
        self.stats.async_copies += 1;
        Ok(())
    }

    /// Checks that thread `t` may write element `i` now: no copy in
    /// flight, and no other thread read it (or, with `value`, wrote a
    /// different value) in this epoch.
    fn check_shared_write(
        &self,
        b: usize,
        i: usize,
        t: u32,
        value: Option<Val>,
    ) -> Result<(), Fault> {
        let Some(mem) = self.shared.get(b) else {
            return Err(Fault::Malformed(format!("shared buffer {b} missing")));
        };
        let (Some(sh), Some(old)) = (mem.shadow.get(i), mem.data.get(i).copied()) else {
            return Err(Fault::Malformed("shared element missing".to_string()));
        };
        let name = || self.shared_name(b);
        if let Some(&(n, stmt)) = mem.mma_reads.get(i)
            && n > 0
        {
            return Err(Fault::WriteDuringAsyncMma {
                buffer: name(),
                element: i as u64,
                writer: t,
                mma_stmt: self.header(stmt),
            });
        }
        if sh.inflight != NOBODY {
            return Err(Fault::WriteDuringAsyncCopy {
                buffer: name(),
                element: i as u64,
                writer: t,
                issuer: sh.inflight,
                copy_stmt: self.header(sh.inflight_stmt),
            });
        }
        if value.is_some() && sh.tma_phase != NO_TMA {
            // A `tma_load`'s write is ordered before the threads that saw
            // the barrier phase it completes (as for reads), not by
            // `barrier`s. (A `tma_load` over it, `value` `None`, is
            // ordered as before: through the readers of the stage.)
            if !self.saw_tma_phase(t, sh) {
                let (barrier, index) = self.bar_name(sh.tma_bar);
                return Err(Fault::WriteBeforeBarrierWait {
                    buffer: name(),
                    element: i as u64,
                    writer: t,
                    copy_stmt: self.header(sh.write_stmt),
                    barrier,
                    index,
                });
            }
        } else if sh.writer != NOBODY
            && sh.writer != t
            && sh.write_epoch == self.epoch
            && !self.acquired(t, sh.writer, sh.write_clock)
        {
            let differs = value.is_none_or(|v| !v.same_bits(old));
            if differs {
                return Err(Fault::WriteWrite {
                    buffer: name(),
                    element: i as u64,
                    first: sh.writer,
                    second: t,
                    first_stmt: self.header(sh.write_stmt),
                });
            }
        }
        if sh.read_epoch == self.epoch {
            // A reader is ordered before this write by the barrier waits
            // of the writer that acquired an arrival the reader made after
            // its read.
            let released = |r: u32, c: u32| self.acquired(t, r, c);
            let other = match sh.readers {
                Readers::Few {
                    n,
                    who,
                    clock,
                    stmt,
                } => (0..n as usize)
                    .find(|&k| who[k] != t && !released(who[k], clock[k]))
                    .map(|k| (who[k], stmt)),
                Readers::Many {
                    first,
                    stmt,
                    lo,
                    hi,
                    clock,
                } => (lo..=hi).find(|&r| r != t && !released(r, clock)).map(|r| {
                    (
                        if first != t && !released(first, clock) {
                            first
                        } else {
                            r
                        },
                        stmt,
                    )
                }),
                Readers::None => None,
            };
            if let Some((reader, s)) = other {
                return Err(Fault::WriteAfterRead {
                    buffer: name(),
                    element: i as u64,
                    reader,
                    writer: t,
                    reader_stmt: self.header(s),
                });
            }
        }
        Ok(())
    }

    fn shared_write(
        &mut self,
        b: usize,
        i: usize,
        t: u32,
        v: Val,
        stmt: usize,
    ) -> Result<(), Fault> {
        self.check_shared_write(b, i, t, Some(v))?;
        self.record_write(b, i, t, v, stmt);
        Ok(())
    }

    /// Whether thread `t`'s own `mbarrier_wait`s saw the barrier phase
    /// that completes the `tma_load` which last wrote an element (`sh`).
    fn saw_tma_phase(&self, t: u32, sh: &Shadow) -> bool {
        let seen = self
            .seen
            .get(t as usize)
            .and_then(|m| m.get(&sh.tma_bar))
            .copied()
            .unwrap_or(0);
        seen > sh.tma_phase
    }

    /// Whether thread `t`'s barrier waits acquired an arrival `u` made
    /// after its release clock was `c`: what `u` did before is ordered
    /// before what `t` does now.
    fn acquired(&self, t: u32, u: u32, c: u32) -> bool {
        self.known
            .get(t as usize)
            .and_then(|k| k.get(&u))
            .is_some_and(|&k| k > c)
    }

    fn record_write(&mut self, b: usize, i: usize, t: u32, v: Val, stmt: usize) {
        let epoch = self.epoch;
        let clock = self.clock.get(t as usize).copied().unwrap_or(0);
        if let Some(mem) = self.shared.get_mut(b)
            && let (Some(sh), Some(d)) = (mem.shadow.get_mut(i), mem.data.get_mut(i))
        {
            *d = v;
            sh.writer = t;
            sh.write_epoch = epoch;
            sh.write_clock = clock;
            sh.write_stmt = stmt;
            sh.inflight = NOBODY;
            sh.tma_phase = NO_TMA;
        }
    }

    // ---- statements ----

    /// The active threads of `mask`.
    pub(super) fn active_threads(mask: &[bool]) -> impl Iterator<Item = usize> + '_ {
        Self::active(mask)
    }

    /// Element `i` of shared buffer `b` read by thread `t` for statement
    /// `stmt`: bounds and race checks as for a load.
    pub(super) fn shared_element(
        &mut self,
        b: usize,
        i: i64,
        t: u32,
        stmt: usize,
    ) -> Result<Val, Fault> {
        let i = self.shared_range(b, i, 1)?;
        self.shared_read(b, i, t, stmt)
    }

    /// Writes `v` to element `i` of shared buffer `b` as thread `t` for
    /// statement `stmt`: bounds and race checks as for a store.
    pub(super) fn shared_element_write(
        &mut self,
        b: usize,
        i: i64,
        t: u32,
        v: Val,
        stmt: usize,
    ) -> Result<(), Fault> {
        let i = self.shared_range(b, i, 1)?;
        self.shared_write(b, i, t, v, stmt)
    }

    /// Element `index` of register `r` of thread `t`.
    pub(super) fn reg_element(&self, r: usize, index: i64, t: usize) -> Result<Val, Fault> {
        self.read_reg(r, index, t)
    }

    /// Notes a warp-wide access of `bytes` bytes at element `index` of
    /// shared buffer `b` by thread `t` for the bank model.
    pub(super) fn record_shared_access(&mut self, b: usize, t: usize, index: i64, bytes: u32) {
        let size = self.cx.k.shared.get(b).map_or(1, |s| s.dtype.bytes());
        self.lanes.push(super::banks::LaneAccess {
            thread: t,
            byte: u64::try_from(index).unwrap_or(0) * size,
            bytes,
        });
    }

    fn active(mask: &[bool]) -> impl Iterator<Item = usize> + '_ {
        mask.iter()
            .enumerate()
            .filter_map(|(t, &on)| on.then_some(t))
    }

    fn reg_target(&self, r: &RegRef, t: usize) -> Result<(usize, i64), Fault> {
        Ok(match r {
            RegRef::Scalar(id) => (id.index(), 0),
            RegRef::Elem(id, i) => (id.index(), self.eval(i, t)?.as_i64()),
        })
    }

    /// Runs statement `s` (not control flow or a numbered barrier, which
    /// `sched.rs` runs) for the threads of `mask`.
    pub(super) fn stmt(&mut self, s: &Stmt, mask: &[bool]) -> Result<(), SimtError> {
        let key = stmt_key(s);
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                for t in Self::active(mask) {
                    let r = (|| {
                        let v = self.eval(value, t)?;
                        let (reg, index) = self.reg_target(dst, t)?;
                        self.write_reg(reg, index, t, v)
                    })();
                    r.map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::Load {
                width,
                dst,
                src,
                index,
                guard,
            } => {
                for t in Self::active(mask) {
                    self.load(*width, dst, *src, index, guard, t, key)
                        .map_err(|k| self.fail(s, Some(t), k))?;
                }
                self.count_bank_passes(true);
            }
            StmtKind::Store {
                width,
                dst,
                index,
                src,
                guard,
            } => {
                for t in Self::active(mask) {
                    self.store(*width, *dst, index, src, guard, t, key)
                        .map_err(|k| self.fail(s, Some(t), k))?;
                }
                self.count_bank_passes(false);
            }
            StmtKind::AsyncCopy {
                bytes,
                dst,
                dst_index,
                src,
                src_index,
                guard,
            } => {
                for t in Self::active(mask) {
                    self.async_copy(
                        *bytes,
                        dst.index(),
                        dst_index,
                        *src,
                        src_index,
                        guard,
                        t,
                        key,
                    )
                    .map_err(|k| self.fail(s, Some(t), k))?;
                }
                self.count_bank_passes(false);
            }
            StmtKind::CommitGroup => {
                for t in Self::active(mask) {
                    if let Some(a) = self.asyncs.get_mut(t) {
                        let group = a.committed;
                        for p in a.pending.iter_mut().filter(|p| p.group.is_none()) {
                            p.group = Some(group);
                        }
                        a.committed += 1;
                    }
                }
            }
            StmtKind::WaitGroup { pending } => {
                for t in Self::active(mask) {
                    self.wait_group(t, u64::from(*pending));
                }
            }
            StmtKind::Barrier => {
                // Groups arrive one by one (`sched.rs`), which completes it.
                return Err(self.fail(
                    s,
                    None,
                    Fault::Malformed("a block barrier run outside the scheduler".to_string()),
                ));
            }
            StmtKind::Shuffle {
                kind,
                dst,
                value,
                lane,
                width,
            } => self.shuffle(s, *kind, dst, value, lane, *width, mask)?,
            StmtKind::Atomic {
                op,
                dst,
                index,
                value,
                guard,
            } => {
                for t in Self::active(mask) {
                    let r = (|| {
                        if self.guard(guard, t)?.is_some() {
                            return Ok(());
                        }
                        let i = self.eval(index, t)?.as_i64();
                        let v = self.eval(value, t)?;
                        let (arg, i) = self.global_range(*dst, i, 1)?;
                        let dtype = value.dtype;
                        let old = self.global_read(arg, i);
                        let new = match op {
                            AtomicOp::Add => binary(BinaryOp::Add, dtype, old, v)
                                .map_err(|_| Fault::DivisionByZero)?,
                            // Replace only when the value compares greater
                            // (less), as a compare-and-swap loop does.
                            AtomicOp::Max | AtomicOp::Min => {
                                let cmp = if *op == AtomicOp::Max {
                                    BinaryOp::Gt
                                } else {
                                    BinaryOp::Lt
                                };
                                let wins = binary(cmp, dtype, v, old)
                                    .map_err(|_| Fault::DivisionByZero)?;
                                if wins.as_i64() != 0 { v } else { old }
                            }
                        };
                        self.global_write(arg, i, new);
                        self.stats.atomics += 1;
                        Ok(())
                    })();
                    r.map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::Mma {
                atom,
                n,
                d,
                a,
                b,
                c,
            } => super::mma::execute(self, s, atom, *n, [*a, *b, *c, *d], mask)?,
            StmtKind::AsyncMma {
                atom,
                n,
                d,
                a,
                b,
                accumulate,
            } => super::mma::execute_async(self, s, atom, *n, *d, (a, b), accumulate, mask)?,
            StmtKind::MbarrierInit { bar, index, count } => {
                for t in Self::active(mask) {
                    let r = (|| {
                        let (i, _) = self.barrier_at(bar.index(), index, t)?;
                        let count = self.eval(count, t)?.as_i64();
                        if count < 1 {
                            return Err(Fault::Mbarrier {
                                barrier: self.shared_name(bar.index()),
                                index: i as u64,
                                reason: format!("an arrival count of {count}"),
                            });
                        }
                        let state = PhasedBarrier {
                            count: count as u64,
                            pending: count as u64,
                            ..PhasedBarrier::default()
                        };
                        let next = self.bars.len() as u32;
                        let id = *self.bar_ids.entry((bar.index(), i)).or_insert(next);
                        if id == next {
                            self.bars.push(state);
                        } else if let Some(b) = self.bars.get_mut(id as usize) {
                            *b = state;
                        }
                        for seen in &mut self.seen {
                            seen.remove(&id);
                        }
                        Ok(())
                    })();
                    r.map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::MbarrierArrive { bar, index, tx } => {
                for t in Self::active(mask) {
                    let r = (|| {
                        let tx = match tx {
                            Some(e) => Some(self.eval(e, t)?.as_i64()),
                            None => None,
                        };
                        self.arrive(bar.index(), index, tx, t)
                    })();
                    r.map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::AsyncCopyArrive { bar, index } => {
                // One legal timing: the copies complete now, then the
                // arrival publishes them.
                for t in Self::active(mask) {
                    self.complete_async(t);
                    self.arrive(bar.index(), index, None, t)
                        .map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::MbarrierWait { bar, index, parity } => {
                for t in Self::active(mask) {
                    self.barrier_wait(bar.index(), index, parity, t)
                        .map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::TmaLoad {
                map,
                dst,
                dst_index,
                coords,
                bar,
                bar_index,
            } => {
                let key = stmt_key(s);
                for t in Self::active(mask) {
                    self.tma_load(
                        *map,
                        dst.index(),
                        dst_index,
                        coords,
                        bar.index(),
                        bar_index,
                        t,
                        key,
                    )
                    .map_err(|k| self.fail(s, Some(t), k))?;
                }
            }
            StmtKind::AsyncMmaFence => {}
            StmtKind::Trap => {
                if let Some(t) = Self::active(mask).next() {
                    return Err(self.fail(s, Some(t), Fault::Trap));
                }
            }
            StmtKind::AsyncMmaCommit => {
                for t in Self::active(mask) {
                    self.mma_commit(t);
                }
            }
            StmtKind::AsyncMmaWait { pending } => {
                for t in Self::active(mask) {
                    self.mma_wait(t, u64::from(*pending));
                }
            }
            StmtKind::MatrixLoad {
                load,
                count,
                trans,
                dst,
                src,
                index,
            } => {
                super::ldmatrix::execute(self, s, load, *count, *trans, *dst, *src, index, mask)?;
                self.count_bank_passes(true);
            }
            StmtKind::MatrixStore {
                store,
                count,
                trans,
                dst,
                index,
                src,
            } => {
                super::ldmatrix::execute_store(
                    self, s, store, *count, *trans, *dst, index, *src, mask,
                )?;
                self.count_bank_passes(false);
            }
            StmtKind::SetMaxRegisters { .. } => {
                // Values do not change; whole groups must run it.
                let group = self
                    .cx
                    .target
                    .registers
                    .reallocation
                    .as_ref()
                    .and_then(|r| r.group_threads)
                    .unwrap_or(1)
                    .max(1) as usize;
                for g in (0..self.n).step_by(group) {
                    let end = (g + group).min(self.n);
                    let on = mask[g..end].iter().filter(|&&m| m).count();
                    if on != 0 && on != group {
                        return Err(self.fail(
                            s,
                            Some(g),
                            Fault::SetMaxRegisters(format!(
                                "{on} of the {group} threads from thread {g} run it; whole groups of {group} must"
                            )),
                        ));
                    }
                }
            }
            StmtKind::For { .. } | StmtKind::If { .. } | StmtKind::NamedBarrier { .. } => {
                return Err(self.fail(
                    s,
                    None,
                    Fault::Malformed("control flow run outside the scheduler".to_string()),
                ));
            }
        }
        Ok(())
    }

    /// A `for`'s start, count and step for each thread of `mask`.
    pub(super) fn loop_bounds(
        &self,
        s: &Stmt,
        start: &Expr,
        count: &Expr,
        step: &Expr,
        mask: &[bool],
    ) -> Result<Vec<(i64, i64, i64)>, SimtError> {
        let mut bounds = vec![(0i64, 0i64, 0i64); self.n];
        for t in Self::active(mask) {
            let r = (|| {
                let st = self.eval(start, t)?.as_i64();
                let c = self.eval(count, t)?.as_i64();
                let sp = self.eval(step, t)?.as_i64();
                if sp == 0 && c > 0 {
                    return Err(Fault::ZeroStep);
                }
                Ok((st, c, sp))
            })();
            bounds[t] = r.map_err(|k| self.fail(s, Some(t), k))?;
        }
        Ok(bounds)
    }

    /// The threads of `mask` for which `cond` holds, and the others.
    pub(super) fn split(
        &self,
        s: &Stmt,
        cond: &Expr,
        mask: &[bool],
    ) -> Result<(Vec<bool>, Vec<bool>), SimtError> {
        let mut then_mask = vec![false; self.n];
        let mut else_mask = vec![false; self.n];
        for t in Self::active(mask) {
            let c = self
                .eval(cond, t)
                .map_err(|k| self.fail(s, Some(t), k))?
                .is_true();
            if c {
                then_mask[t] = true;
            } else {
                else_mask[t] = true;
            }
        }
        Ok((then_mask, else_mask))
    }

    /// Whether the `mbarrier_wait` `s` completes now for every thread of
    /// `mask` (errors for barriers used before their `mbarrier_init`).
    pub(super) fn mbarrier_ready(&self, s: &Stmt, mask: &[bool]) -> Result<bool, SimtError> {
        let StmtKind::MbarrierWait { bar, index, parity } = &s.kind else {
            return Ok(true);
        };
        for t in Self::active(mask) {
            let (_, _, ready) = self
                .wait_target(bar.index(), index, parity, t)
                .map_err(|k| self.fail(s, Some(t), k))?;
            if !ready {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Completes a block-wide barrier: a new epoch.
    pub(super) fn block_barrier(&mut self) {
        self.epoch += 1;
        self.stats.barriers += 1;
    }

    /// The threads that run independently of each other on hardware, and
    /// so may continue apart after an `if` separates them: the largest
    /// issuing group of the target's matrix atoms, at least a SIMT group.
    pub(super) fn independent_threads(&self) -> usize {
        let atoms = self
            .cx
            .target
            .matrix_atoms
            .iter()
            .map(|a| a.issue.threads)
            .max()
            .unwrap_or(1);
        atoms.max(self.cx.simt).max(1) as usize
    }

    /// The numbered barriers the threads of `mask` name with `id`, each
    /// with its threads (numbers checked against the target's count).
    pub(super) fn named_numbers(
        &self,
        s: &Stmt,
        id: &Expr,
        mask: &[bool],
    ) -> Result<Vec<(u32, Vec<bool>)>, SimtError> {
        let ids = self.cx.target.named_barriers().map_or(0, |n| n.ids);
        let mut out: Vec<(u32, Vec<bool>)> = Vec::new();
        for t in Self::active(mask) {
            let v = self
                .eval(id, t)
                .map_err(|k| self.fail(s, Some(t), k))?
                .as_i64();
            let Some(number) = u32::try_from(v).ok().filter(|&n| n >= 1 && n < ids) else {
                return Err(self.fail(
                    s,
                    Some(t),
                    Fault::NamedBarrier {
                        id: u32::try_from(v).unwrap_or(u32::MAX),
                        reason: format!(
                            "not a barrier number in 1..{ids} (0 is the block barrier)"
                        ),
                    },
                ));
            };
            match out.iter_mut().find(|(n, _)| *n == number) {
                Some((_, part)) => part[t] = true,
                None => {
                    let mut part = vec![false; self.n];
                    part[t] = true;
                    out.push((number, part));
                }
            }
        }
        Ok(out)
    }

    /// Rounds completed so far by numbered barrier `id`.
    pub(super) fn named_round(&self, id: u32) -> u64 {
        self.named.get(id as usize).map_or(0, |r| r.round)
    }

    /// The arrivals and the thread count of numbered barrier `id`'s
    /// current round.
    pub(super) fn named_state(&self, id: u32) -> (u32, u32) {
        self.named
            .get(id as usize)
            .map_or((0, 0), |r| (r.arrived.len() as u32, r.expected))
    }

    /// The arrival of the threads of `mask` at numbered barrier `id`
    /// (`bar_sync` when `wait`, else `bar_arrive`) in a round of
    /// `threads` threads. Completes the round when it is full; returns the
    /// round the threads must wait for, if any.
    pub(super) fn named_arrive(
        &mut self,
        s: &Stmt,
        id: u32,
        threads: u32,
        wait: bool,
        mask: &[bool],
    ) -> Result<Option<u64>, SimtError> {
        let simt = self.cx.simt.max(1) as usize;
        let fault = |reason: String| Fault::NamedBarrier { id, reason };
        // A warp arrives as a whole.
        for w in (0..self.n).step_by(simt) {
            let end = (w + simt).min(self.n);
            let on = mask[w..end].iter().filter(|&&m| m).count();
            if on != 0 && on != end - w {
                return Err(self.fail(
                    s,
                    Some(w),
                    fault(format!(
                        "{on} of the {} threads of warp {} arrive: a warp arrives as a whole",
                        end - w,
                        w / simt
                    )),
                ));
            }
        }
        if self.named.len() <= id as usize {
            self.named.resize(id as usize + 1, NamedRound::default());
        }
        let round = &self.named[id as usize];
        if round.expected != 0 && round.expected != threads {
            let expected = round.expected;
            return Err(self.fail(
                s,
                first_active(mask),
                fault(format!(
                    "this round counts {expected} threads, this arrival {threads}"
                )),
            ));
        }
        for t in Self::active(mask) {
            if self.named[id as usize].arrived.contains_key(&(t as u32)) {
                return Err(self.fail(
                    s,
                    Some(t),
                    fault("the thread arrives twice in one round".to_string()),
                ));
            }
            let c = &mut self.clock[t];
            *c += 1;
            let c = *c;
            let round = &mut self.named[id as usize];
            round.expected = threads;
            round.arrived.insert(t as u32, c);
            if wait {
                round.syncing.push(t as u32);
            }
        }
        let round = &self.named[id as usize];
        let arrived = round.arrived.len() as u32;
        if arrived > threads {
            return Err(self.fail(
                s,
                first_active(mask),
                fault(format!(
                    "{arrived} arrivals in a round of {threads} threads"
                )),
            ));
        }
        if arrived < threads {
            return Ok(wait.then_some(round.round));
        }
        // The round is complete: the waiting threads acquire every arrival.
        let done = std::mem::take(&mut self.named[id as usize]);
        for &t in &done.syncing {
            if let Some(known) = self.known.get_mut(t as usize) {
                for (&u, &c) in &done.arrived {
                    let e = known.entry(u).or_insert(c);
                    *e = (*e).max(c);
                }
            }
        }
        self.named[id as usize].round = done.round + 1;
        self.stats.barriers += 1;
        Ok(None)
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        width: u32,
        dst: &RegRef,
        src: MemRef,
        index: &Expr,
        guard: &Option<Guard>,
        t: usize,
        key: usize,
    ) -> Result<(), Fault> {
        let (reg, start) = self.reg_target(dst, t)?;
        let w = u64::from(width);
        let values: Vec<Val> = match self.guard(guard, t)? {
            Some(GuardElse::Skip) => return Ok(()),
            Some(GuardElse::Zero) => {
                let dtype = self.cx.k.registers.get(reg).map_or(DType::I32, |r| r.dtype);
                vec![Val::zero(dtype); width as usize]
            }
            None => {
                let i = self.eval(index, t)?.as_i64();
                match src {
                    MemRef::Global(p) => {
                        let (arg, i) = self.global_range(p, i, w)?;
                        self.stats.global_loads += 1;
                        (i..i + width as usize)
                            .map(|e| self.global_read(arg, e))
                            .collect()
                    }
                    MemRef::Shared(b) => {
                        let i = self.shared_range(b.index(), i, w)?;
                        self.stats.shared_loads += 1;
                        self.record_lane(b.index(), t, i, w);
                        let mut out = Vec::with_capacity(width as usize);
                        for e in i..i + width as usize {
                            out.push(self.shared_read(b.index(), e, t as u32, key)?);
                        }
                        out
                    }
                }
            }
        };
        for (j, v) in values.into_iter().enumerate() {
            self.write_reg(reg, start.saturating_add(j as i64), t, v)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        width: u32,
        dst: MemRef,
        index: &Expr,
        src: &RegRef,
        guard: &Option<Guard>,
        t: usize,
        key: usize,
    ) -> Result<(), Fault> {
        if self.guard(guard, t)?.is_some() {
            return Ok(());
        }
        let (reg, start) = self.reg_target(src, t)?;
        let mut values = Vec::with_capacity(width as usize);
        for j in 0..i64::from(width) {
            values.push(self.read_reg(reg, start.saturating_add(j), t)?);
        }
        let i = self.eval(index, t)?.as_i64();
        let w = u64::from(width);
        match dst {
            MemRef::Global(p) => {
                let (arg, i) = self.global_range(p, i, w)?;
                self.stats.global_stores += 1;
                for (j, v) in values.into_iter().enumerate() {
                    self.global_write(arg, i + j, v);
                }
            }
            MemRef::Shared(b) => {
                let i = self.shared_range(b.index(), i, w)?;
                self.stats.shared_stores += 1;
                self.record_lane(b.index(), t, i, w);
                for (j, v) in values.into_iter().enumerate() {
                    self.shared_write(b.index(), i + j, t as u32, v, key)?;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn async_copy(
        &mut self,
        bytes: u32,
        dst: usize,
        dst_index: &Expr,
        src: ParamId,
        src_index: &Expr,
        guard: &Option<Guard>,
        t: usize,
        key: usize,
    ) -> Result<(), Fault> {
        let zero = match self.guard(guard, t)? {
            Some(GuardElse::Skip) => return Ok(()),
            Some(GuardElse::Zero) => true,
            None => false,
        };
        let dtype = self.cx.k.shared.get(dst).map_or(DType::U8, |s| s.dtype);
        let count = (u64::from(bytes) / dtype.bytes().max(1)).max(1);
        let di = self.eval(dst_index, t)?.as_i64();
        let di = self.shared_range(dst, di, count)?;
        self.record_lane(dst, t, di, count);
        let values: Vec<Val> = if zero {
            vec![Val::zero(dtype); count as usize]
        } else {
            let si = self.eval(src_index, t)?.as_i64();
            let (arg, si) = self.global_range(src, si, count)?;
            (si..si + count as usize)
                .map(|e| self.global_read(arg, e))
                .collect()
        };
        for e in di..di + count as usize {
            // The copy may land at any time until the wait: it conflicts
            // with every access of this epoch by another thread.
            self.check_shared_write(dst, e, t as u32, None)?;
        }
        for e in di..di + count as usize {
            if let Some(sh) = self.shared.get_mut(dst).and_then(|m| m.shadow.get_mut(e)) {
                sh.inflight = t as u32;
                sh.inflight_stmt = key;
            }
        }
        if let Some(a) = self.asyncs.get_mut(t) {
            a.pending.push(Pending {
                group: None,
                buffer: dst,
                start: di,
                values,
                stmt: key,
            });
        }
        self.stats.async_copies += 1;
        Ok(())
    }

    /// Completes every async copy thread `t` has issued, committed or not.
    fn complete_async(&mut self, t: usize) {
        let Some(a) = self.asyncs.get_mut(t) else {
            return;
        };
        for p in std::mem::take(&mut a.pending) {
            for (j, v) in p.values.into_iter().enumerate() {
                self.record_write(p.buffer, p.start + j, t as u32, v, p.stmt);
            }
        }
    }

    fn wait_group(&mut self, t: usize, allowed: u64) {
        let Some(a) = self.asyncs.get_mut(t) else {
            return;
        };
        let committed = a.committed;
        let (done, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut a.pending)
            .into_iter()
            .partition(|p| p.group.is_some_and(|g| g + allowed < committed));
        a.pending = keep;
        for p in done {
            for (j, v) in p.values.into_iter().enumerate() {
                self.record_write(p.buffer, p.start + j, t as u32, v, p.stmt);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn shuffle(
        &mut self,
        s: &Stmt,
        kind: ShuffleKind,
        dst: &RegRef,
        value: &Expr,
        lane: &Expr,
        width: u32,
        mask: &[bool],
    ) -> Result<(), SimtError> {
        let mut values = vec![Val::I(0); self.n];
        let mut args = vec![0i64; self.n];
        for t in Self::active(mask) {
            values[t] = self.eval(value, t).map_err(|k| self.fail(s, Some(t), k))?;
            args[t] = self
                .eval(lane, t)
                .map_err(|k| self.fail(s, Some(t), k))?
                .as_i64();
        }
        let simt = i64::from(self.cx.simt.max(1));
        let w = i64::from(width.max(1));
        let mut results = Vec::new();
        for t in Self::active(mask) {
            let ti = t as i64;
            let lane_id = ti % simt;
            let warp_base = ti - lane_id;
            let group = lane_id - lane_id % w;
            let arg = args[t];
            let source = match kind {
                ShuffleKind::Idx => Some(group + arg.rem_euclid(w)),
                ShuffleKind::Xor => {
                    let l = lane_id ^ arg;
                    (l >= group && l < group + w).then_some(l)
                }
                ShuffleKind::Up => {
                    let l = lane_id - arg;
                    (l >= group && l < group + w).then_some(l)
                }
                ShuffleKind::Down => {
                    let l = lane_id + arg;
                    (l >= group && l < group + w).then_some(l)
                }
            };
            let v = match source {
                None => values[t],
                Some(l) => {
                    let src = warp_base + l;
                    let ok = src >= 0 && (src as usize) < self.n && mask[src as usize];
                    if !ok {
                        return Err(self.fail(
                            s,
                            Some(t),
                            Fault::ShuffleInactive {
                                lane: lane_id as u32,
                                source_lane: l,
                            },
                        ));
                    }
                    values[src as usize]
                }
            };
            results.push((t, v));
        }
        for (t, v) in results {
            let r = self
                .reg_target(dst, t)
                .and_then(|(reg, i)| self.write_reg(reg, i, t, v));
            r.map_err(|k| self.fail(s, Some(t), k))?;
        }
        self.stats.shuffles += 1;
        Ok(())
    }
}

/// Evaluates a grid extent (literals and scalar parameters only).
pub(super) fn eval_uniform(e: &Expr, symbols: &[i64]) -> Result<Val, Fault> {
    Ok(match &e.kind {
        ExprKind::Literal(l) => match l {
            crate::ir::Literal::Bool(b) => Val::bool(*b),
            crate::ir::Literal::Int(v, _) => Val::I(*v),
            crate::ir::Literal::Float(x, _) => Val::F(*x),
        },
        ExprKind::Param(p) => Val::I(symbols.get(p.index()).copied().unwrap_or(0)),
        ExprKind::Unary(op, a) => unary(*op, a.dtype, eval_uniform(a, symbols)?),
        ExprKind::Cast(a) => cast(eval_uniform(a, symbols)?, a.dtype, e.dtype),
        ExprKind::Bitcast(a) => bitcast(eval_uniform(a, symbols)?, a.dtype, e.dtype),
        ExprKind::Select(c, a, b) => {
            if eval_uniform(c, symbols)?.is_true() {
                eval_uniform(a, symbols)?
            } else {
                eval_uniform(b, symbols)?
            }
        }
        ExprKind::Binary(op, a, b) => binary(
            *op,
            a.dtype,
            eval_uniform(a, symbols)?,
            eval_uniform(b, symbols)?,
        )
        .map_err(|_| Fault::DivisionByZero)?,
        ExprKind::Reg(_) | ExprKind::Elem(..) | ExprKind::Special(_) => {
            return Err(Fault::Malformed(
                "grid extent reads a per-thread value".into(),
            ));
        }
    })
}

/// The first thread of `mask`, if any.
fn first_active(mask: &[bool]) -> Option<usize> {
    mask.iter().position(|&on| on)
}
