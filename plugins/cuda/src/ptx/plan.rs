//! Decisions made before any instruction is written: which loops are
//! unrolled, which local arrays live in registers, where shared buffers
//! sit, and which special registers the kernel reads.
//!
//! **Unrolling.** A `for` with the `unroll` hint whose start, count and
//! step are constants (given the variables of enclosing unrolled loops) is
//! unrolled when it is small ([`unrolled`]); its variable is then a
//! constant in each copy of the body. Every other loop stays a loop.
//!
//! **Local arrays.** An array all of whose indices (array-element reads,
//! destinations, vector moves) are constants under those unrolling
//! decisions becomes one register per element. Any other array lives in
//! `.local` memory and is addressed at run time.
//!
//! **Fragment arrays in words.** A local array of 16-bit floats (even
//! length) that only matrix loads (`ldmatrix` destinations) and matrix
//! atoms (`mma` operands, register A of `wgmma`) touch, always from an even
//! position, is kept as one 32-bit register per pair of elements — the
//! form both instructions use — instead of one 16-bit register per
//! element. Packing and unpacking pairs around every `mma` otherwise leads
//! the assembler to copy fragments between registers (24 moves per
//! iteration of a 64-`mma` GEMM main loop on sm_90).
//!
//! **Shared memory.** One dynamic shared array, `tilec_smem`, holds every
//! buffer of the kernel, each at the next offset that honours its
//! alignment, in declaration order.

use std::collections::{HashMap, HashSet};

use tilec_core::ir::DType;
use tilec_core::thread::{
    Expr, ExprKind, FragRef, Guard, Kernel, MemRef, RegId, RegRef, RegisterKind, Special, Stmt,
    StmtKind, Unroll,
};

use super::fold::fold_int;

/// Largest trip count the emitter unrolls.
pub(crate) const MAX_UNROLL: i64 = 256;
/// Largest number of statements one unrolled loop may expand to.
pub(crate) const MAX_UNROLLED_STMTS: i64 = 4096;

/// The values a loop's variable takes when the emitter unrolls it, or
/// `None` when it stays a loop.
pub(crate) fn unrolled(
    start: &Expr,
    count: &Expr,
    step: &Expr,
    unroll: Unroll,
    body: &[Stmt],
    env: &HashMap<RegId, i64>,
) -> Option<Vec<i64>> {
    if unroll != Unroll::Full {
        return None;
    }
    let start = fold_int(start, env)?;
    let count = fold_int(count, env)?;
    let step = fold_int(step, env)?;
    if count <= 0 {
        return Some(Vec::new());
    }
    if count > MAX_UNROLL || count.saturating_mul(stmt_count(body)) > MAX_UNROLLED_STMTS {
        return None;
    }
    Some(
        (0..count)
            .map(|i| DType::I32.wrap_i64(start.wrapping_add(i.wrapping_mul(step))))
            .collect(),
    )
}

/// Statements in a body, nested ones included.
pub(crate) fn stmt_count(body: &[Stmt]) -> i64 {
    body.iter()
        .map(|s| {
            1 + match &s.kind {
                StmtKind::For { body, .. } => stmt_count(body),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => stmt_count(then_body) + else_body.as_deref().map_or(0, stmt_count),
                _ => 0,
            }
        })
        .sum()
}

/// What the pre-pass found.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Per register: the array lives in `.local` memory.
    pub local: Vec<bool>,
    /// Per register: the array is held as 32-bit words of element pairs
    /// (see the module docs).
    pub paired: Vec<bool>,
    /// Per entry of [`Special::ALL`]: the kernel reads it.
    pub specials: [bool; 6],
    /// Byte offset of each shared buffer in `tilec_smem`.
    pub shared_offsets: Vec<u64>,
    /// Total shared bytes.
    pub shared_bytes: u64,
    /// Largest shared alignment (at least 16).
    pub shared_align: u32,
    /// The kernel shuffles.
    pub shuffles: bool,
    /// The kernel issues `async_mma` (wgmma).
    pub async_mma: bool,
    /// The kernel moves registers between warps (`setmaxnreg`).
    pub reallocates: bool,
    /// The barriers (by statement address) that generic-proxy writes to
    /// shared memory may reach without an earlier fenced barrier: where
    /// the kernel uses `wgmma`, these get `fence.proxy.async` first.
    pub fenced: HashSet<usize>,
}

impl Plan {
    pub fn new(k: &Kernel) -> Plan {
        let mut offset = 0u64;
        let mut shared_align = 16u32;
        let mut shared_offsets = Vec::with_capacity(k.shared.len());
        for b in &k.shared {
            let align = u64::from(b.align.max(1));
            offset = offset.div_ceil(align).saturating_mul(align);
            shared_offsets.push(offset);
            offset = offset.saturating_add(b.len.saturating_mul(b.dtype.bytes()));
            shared_align = shared_align.max(b.align);
        }
        let paired = k
            .registers
            .iter()
            .map(|r| {
                matches!(r.kind, RegisterKind::Array { len } if len % 2 == 0)
                    && matches!(r.dtype, DType::F16 | DType::BF16)
            })
            .collect();
        let mut plan = Plan {
            local: vec![false; k.registers.len()],
            paired,
            specials: [false; 6],
            shared_offsets,
            shared_bytes: offset,
            shared_align,
            shuffles: false,
            async_mma: false,
            reallocates: false,
            fenced: HashSet::new(),
        };
        dirty_barriers(&k.body, false, &mut plan.fenced);
        let mut env = HashMap::new();
        plan.scan_body(&k.body, &mut env);
        for (paired, &local) in plan.paired.iter_mut().zip(&plan.local) {
            *paired &= !local;
        }
        plan
    }

    /// A fragment reference that keeps its array paired only from an even
    /// position, and only where `pairs` (a use that reads or writes whole
    /// words).
    fn frag(&mut self, f: FragRef, pairs: bool) {
        if (!pairs || !f.offset.is_multiple_of(2))
            && let Some(p) = self.paired.get_mut(f.array.index())
        {
            *p = false;
        }
    }

    pub fn reads_special(&self, s: Special) -> bool {
        Special::ALL
            .iter()
            .position(|&x| x == s)
            .is_some_and(|i| self.specials[i])
    }

    fn scan_body(&mut self, body: &[Stmt], env: &mut HashMap<RegId, i64>) {
        for s in body {
            self.scan_stmt(s, env);
        }
    }

    fn index(&mut self, r: RegId, index: &Expr, env: &HashMap<RegId, i64>) {
        self.expr(index, env);
        if let Some(p) = self.paired.get_mut(r.index()) {
            *p = false;
        }
        if fold_int(index, env).is_none()
            && let Some(slot) = self.local.get_mut(r.index())
        {
            *slot = true;
        }
    }

    fn reg_ref(&mut self, r: &RegRef, env: &HashMap<RegId, i64>) {
        if let RegRef::Elem(id, index) = r {
            self.index(*id, index, env);
        }
    }

    fn expr(&mut self, e: &Expr, env: &HashMap<RegId, i64>) {
        match &e.kind {
            ExprKind::Elem(r, index) => self.index(*r, index, env),
            ExprKind::Special(s) => {
                if let Some(i) = Special::ALL.iter().position(|x| x == s) {
                    self.specials[i] = true;
                }
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => self.expr(a, env),
            ExprKind::Binary(_, a, b) => {
                self.expr(a, env);
                self.expr(b, env);
            }
            ExprKind::Select(c, a, b) => {
                self.expr(c, env);
                self.expr(a, env);
                self.expr(b, env);
            }
            ExprKind::Literal(_) | ExprKind::Reg(_) | ExprKind::Param(_) => {}
        }
    }

    fn guard(&mut self, g: &Option<Guard>, env: &HashMap<RegId, i64>) {
        if let Some(g) = g {
            self.expr(&g.cond, env);
        }
    }

    fn scan_stmt(&mut self, s: &Stmt, env: &mut HashMap<RegId, i64>) {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                self.reg_ref(dst, env);
                self.expr(value, env);
            }
            StmtKind::Load {
                dst, index, guard, ..
            } => {
                self.reg_ref(dst, env);
                self.expr(index, env);
                self.guard(guard, env);
            }
            StmtKind::Store {
                index, src, guard, ..
            } => {
                self.reg_ref(src, env);
                self.expr(index, env);
                self.guard(guard, env);
            }
            StmtKind::AsyncCopy {
                dst_index,
                src_index,
                guard,
                ..
            } => {
                self.expr(dst_index, env);
                self.expr(src_index, env);
                self.guard(guard, env);
            }
            StmtKind::Shuffle {
                dst, value, lane, ..
            } => {
                self.shuffles = true;
                // The general shuffle path computes source lanes.
                if let Some(i) = Special::ALL.iter().position(|&x| x == Special::LaneId) {
                    self.specials[i] = true;
                }
                self.reg_ref(dst, env);
                self.expr(value, env);
                self.expr(lane, env);
            }
            StmtKind::Atomic {
                index,
                value,
                guard,
                ..
            } => {
                self.expr(index, env);
                self.expr(value, env);
                self.guard(guard, env);
            }
            StmtKind::For {
                var,
                start,
                count,
                step,
                unroll,
                body,
            } => {
                self.expr(start, env);
                self.expr(count, env);
                self.expr(step, env);
                match unrolled(start, count, step, *unroll, body, env) {
                    Some(values) => {
                        for v in values {
                            env.insert(*var, v);
                            self.scan_body(body, env);
                        }
                        env.remove(var);
                    }
                    None => self.scan_body(body, env),
                }
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond, env);
                self.scan_body(then_body, env);
                if let Some(e) = else_body {
                    self.scan_body(e, env);
                }
            }
            StmtKind::MatrixLoad { index, dst, .. } => {
                self.frag(*dst, true);
                self.expr(index, env);
            }
            StmtKind::MatrixStore { index, src, .. } => {
                self.frag(*src, true);
                self.expr(index, env);
            }
            StmtKind::Mma { a, b, c, d, .. } => {
                for f in [a, b, c, d] {
                    self.frag(*f, true);
                }
            }
            StmtKind::AsyncMma {
                a,
                b,
                accumulate,
                d,
                ..
            } => {
                self.async_mma = true;
                self.frag(*d, false);
                match a {
                    tilec_core::thread::AsyncA::Shared(a) => self.expr(&a.index, env),
                    tilec_core::thread::AsyncA::Registers(f) => self.frag(*f, true),
                }
                self.expr(&b.index, env);
                self.expr(accumulate, env);
            }
            StmtKind::MbarrierInit {
                index, count: e, ..
            }
            | StmtKind::MbarrierWait {
                index, parity: e, ..
            } => {
                self.expr(index, env);
                self.expr(e, env);
            }
            StmtKind::MbarrierArrive { index, tx, .. } => {
                self.expr(index, env);
                if let Some(tx) = tx {
                    self.expr(tx, env);
                }
            }
            StmtKind::AsyncCopyArrive { index, .. } => self.expr(index, env),
            StmtKind::TmaLoad {
                dst_index,
                coords,
                bar_index,
                ..
            } => {
                self.expr(dst_index, env);
                self.expr(bar_index, env);
                for c in coords {
                    self.expr(c, env);
                }
            }
            StmtKind::AsyncMmaFence | StmtKind::AsyncMmaCommit | StmtKind::AsyncMmaWait { .. } => {}
            StmtKind::Trap => {}
            StmtKind::CommitGroup | StmtKind::WaitGroup { .. } | StmtKind::Barrier => {}
            StmtKind::NamedBarrier { id, .. } => self.expr(id, env),
            StmtKind::SetMaxRegisters { .. } => self.reallocates = true,
        }
    }
}

/// The address of a statement, as `Plan::fenced` keys it.
pub fn stmt_key(s: &Stmt) -> usize {
    s as *const Stmt as usize
}

/// Adds to `out` the block and numbered barriers and the phased-barrier
/// arrivals of `body` that a generic-proxy write to shared memory (a
/// store, an `stmatrix`, a `cp.async`, an `mbarrier` initialisation) may
/// reach with no barrier in between that is itself in `out` (fenced); `dirty` says whether such a write may
/// precede `body`. Returns whether one may follow it. Loops iterate to a
/// fixed point; branches join.
fn dirty_barriers(body: &[Stmt], mut dirty: bool, out: &mut HashSet<usize>) -> bool {
    for s in body {
        match &s.kind {
            StmtKind::Store {
                dst: MemRef::Shared(_),
                ..
            }
            | StmtKind::MatrixStore { .. }
            | StmtKind::AsyncCopy { .. }
            | StmtKind::MbarrierInit { .. } => dirty = true,
            StmtKind::Barrier | StmtKind::NamedBarrier { .. } | StmtKind::MbarrierArrive { .. }
                if dirty =>
            {
                out.insert(stmt_key(s));
                dirty = false;
            }
            StmtKind::For { body, .. } => {
                let mut entry = dirty;
                loop {
                    let exit = dirty_barriers(body, entry, out);
                    if exit && !entry {
                        entry = true;
                        continue;
                    }
                    dirty = entry || exit;
                    break;
                }
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                let then_dirty = dirty_barriers(then_body, dirty, out);
                let else_dirty = match else_body {
                    Some(e) => dirty_barriers(e, dirty, out),
                    None => dirty,
                };
                dirty = then_dirty || else_dirty;
            }
            _ => {}
        }
    }
    dirty
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::thread::parse_module;

    /// The barriers `Plan::fenced` holds, by their position in the body.
    fn fenced_positions(src: &str) -> Vec<usize> {
        let module = parse_module(src).expect("test kernel parses");
        let k = &module.kernels[0];
        let plan = Plan::new(k);
        let mut out = Vec::new();
        let mut walk = vec![&k.body[..]];
        let mut i = 0;
        while let Some(body) = walk.pop() {
            for s in body {
                match &s.kind {
                    StmtKind::Barrier | StmtKind::NamedBarrier { .. } => {
                        if plan.fenced.contains(&stmt_key(s)) {
                            out.push(i);
                        }
                        i += 1;
                    }
                    StmtKind::For { body, .. } => walk.push(body),
                    _ => {}
                }
            }
        }
        out
    }

    #[test]
    fn only_barriers_a_shared_write_reaches_are_fenced() {
        // Barrier 0 follows a store; 1 follows nothing new; inside the
        // loop, 2 is reached by the store at the end of the previous
        // iteration, and 3 follows 2 directly.
        let src = "thread_ir 0.1\n\nkernel @k(%x: global f32[64]) grid(1, 1, 1) threads(64) {\n  shared %s: f32[64] align(4)\n  var %v: f32\n  %v = f32(1.0)\n  store shared x1 %s[thread_idx] <- %v\n  barrier\n  barrier\n  for %i from 0 count 4 step 1 {\n    barrier\n    bar_sync 1, 64\n    store shared x1 %s[thread_idx] <- %v\n  }\n}\n";
        assert_eq!(fenced_positions(src), vec![0, 2]);
    }
}
