//! Thread-guarded regions: an `if` whose condition reads the kernel's
//! thread variable (`tx = T.get_thread_binding()`, `if tx < 128:`).
//!
//! TileLang's meaning: the branch runs on the threads that pass the
//! condition. The interpreter evaluates the condition for every thread
//! `0 .. threads` of the block, then runs each branch for the threads that
//! take it:
//! - a branch with tile operations (`copy`, `fill`, `parallel`, `gemm`,
//!   `reduce`, `cumsum`, `atomic_add`, an initialised `alloc`) runs once,
//!   as whole-tile operations, since TileLang spreads them over the
//!   branch's threads; those threads must be a range of the thread index,
//!   and such a branch may not read the thread index itself;
//! - a branch of scalar statements only runs once per thread that takes
//!   it, in increasing thread order, with the thread variable bound (the
//!   result of code without races between those threads).
//!
//! A statement of the block's own code (outside such an `if`) that reads
//! the thread variable without holding tile operations — a store
//! `S[tx] = ...`, a serial loop over a per-thread slice, an `if` on a
//! block value around per-thread stores — is per-thread code: it runs once
//! per thread of the block, in increasing thread order, with the thread
//! variable bound, and the next statement runs after every thread has run
//! it (the order TileLang's automatic barriers give a kernel without
//! races between its threads).
//!
//! A loop or `if` of the block (bounds and condition not reading the
//! thread index) around a barrier, a warp reduction or a tile operation
//! runs statement by statement instead: the first two need every thread at
//! once, and TileLang puts barriers between a tile operation and the
//! per-thread code beside it. A barrier inside per-thread code is refused,
//! as running the threads one after another would reorder it.
//!
//! Per-thread stores into `fragment`, `local` and `var` buffers are
//! refused: TileLang keeps one copy of those per thread, this interpreter
//! one per block. Tile operations beside code that reads the thread
//! variable are refused too.

use super::TensorData;
use super::error::{Eval, InterpError, malformed, unsupported};
use super::exec::exec_block;
use super::expr::{Code, Compiler, Env, IntFn};
use super::program::{CBlock, Op};
use super::scalar::Scalar;
use crate::ir::per_thread::stmt_exprs;
use crate::ir::{Block, Expr, Function, Handle, Scope, Stmt, Var};
use std::collections::HashSet;

/// A compiled thread-guarded `if`.
pub(crate) struct ThreadIf {
    /// The thread variable's index and the block's thread count.
    tx: usize,
    threads: i64,
    /// The block-level `let`s computed from the thread index, evaluated
    /// for each thread before the condition.
    lets: Vec<(usize, Code)>,
    cond: IntFn,
    then: CBlock,
    otherwise: CBlock,
    /// Whether each branch holds tile operations (runs once).
    then_tile: bool,
    else_tile: bool,
}

fn is_tile(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Parallel { .. }
            | Stmt::Copy { .. }
            | Stmt::Fill { .. }
            | Stmt::Gemm { .. }
            | Stmt::Reduce { .. }
            | Stmt::Cumsum { .. }
            | Stmt::AtomicAdd { .. }
            | Stmt::Atomic { .. }
            | Stmt::Alloc { init: Some(_), .. }
    )
}

/// Whether `stmt` fills or stores into one of the per-thread buffers
/// `private`.
fn writes_private(stmt: &Stmt, private: &HashSet<usize>) -> bool {
    match stmt {
        Stmt::Store { buffer, .. } => private.contains(&buffer.index()),
        Stmt::Fill { dst, .. } => private.contains(&dst.buffer.index()),
        _ => false,
    }
}

/// Whether `block` holds tile operations (a fill of a per-thread buffer is
/// per-thread code).
fn has_tile(block: &Block, private: &HashSet<usize>) -> bool {
    let mut found = false;
    block.walk(&mut |s, _| found |= is_tile(s) && !writes_private(s, private));
    found
}

/// The refusal of a store into a `fragment`, `local` or `var` buffer from
/// per-thread code (`whence` says where it is), unless the buffer is kept
/// per thread (`private`).
fn per_thread_store(
    f: &Function,
    s: &Stmt,
    whence: &str,
    private: &HashSet<usize>,
) -> Option<String> {
    let Stmt::Store { buffer, .. } = s else {
        return None;
    };
    if private.contains(&buffer.index()) {
        return None;
    }
    let b = f.buffers.try_get(*buffer)?;
    matches!(b.scope, Scope::Fragment | Scope::Local | Scope::Var).then(|| {
        format!(
            "a store into the {} buffer `{}` {whence} (TileLang keeps one copy of it per \
             thread; the reference interpreter one per block)",
            b.scope.name(),
            b.name
        )
    })
}

/// [`Block::walk`] without the bodies of parallel nests when `skip_nests`.
fn walk_outside_nests<'b>(block: &'b Block, skip_nests: bool, visit: &mut impl FnMut(&'b Stmt)) {
    for stmt in &block.stmts {
        visit(stmt);
        match stmt {
            Stmt::Parallel { .. } if skip_nests => {}
            Stmt::Kernel { body, .. }
            | Stmt::For { body, .. }
            | Stmt::Parallel { body, .. }
            | Stmt::Role { body, .. } => walk_outside_nests(body, skip_nests, visit),
            Stmt::If {
                then, otherwise, ..
            } => {
                walk_outside_nests(then, skip_nests, visit);
                walk_outside_nests(otherwise, skip_nests, visit);
            }
            _ => {}
        }
    }
}

/// Whether `e` reads one of `vs` or loads one of the per-thread buffers
/// `private` (whose value differs between threads).
fn reads_var(f: &Function, e: Handle<Expr>, vs: &[Handle<Var>], private: &HashSet<usize>) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match f.exprs.try_get(e) {
            Some(Expr::Var(w)) if vs.contains(w) => return true,
            Some(Expr::Load { buffer, .. }) if private.contains(&buffer.index()) => return true,
            Some(node) => stack.extend(node.operands()),
            None => {}
        }
    }
    false
}

impl Compiler<'_> {
    /// The thread variable and the block-level `let`s computed from it.
    fn thread_vars(&self) -> Vec<Handle<Var>> {
        let mut vs: Vec<Handle<Var>> = self.thread.get().map(|(tv, _)| tv).into_iter().collect();
        vs.extend(self.thread_lets.borrow().iter().map(|(v, _)| *v));
        vs
    }

    /// Whether an `if` with this condition is a thread-guarded region.
    pub(crate) fn is_thread_guard(&self, cond: Handle<Expr>) -> bool {
        !self.per_thread.get()
            && reads_var(self.func, cond, &self.thread_vars(), &self.private.borrow())
    }

    /// Compiles `body` as per-thread code (the thread variable readable),
    /// with the block-level `let`s computed from the thread index, which
    /// each thread evaluates before it runs the code.
    pub(crate) fn per_thread_code<T>(
        &self,
        body: impl FnOnce() -> Eval<T>,
    ) -> Eval<(Vec<(usize, Code)>, T)> {
        let thread_lets = self.thread_lets.borrow().clone();
        self.per_thread.set(true);
        let compiled = (|| -> Eval<_> {
            let mut lets = Vec::new();
            for (v, value) in thread_lets {
                lets.push((v.index(), self.code(value)?));
            }
            Ok((lets, body()?))
        })();
        self.per_thread.set(false);
        compiled
    }

    /// Whether a statement of the block's own code is per-thread code: it
    /// reads the thread variable (itself or in a nested statement) and is
    /// neither a tile operation nor a thread-guarded `if` or `let`, which
    /// have their own forms.
    pub(crate) fn is_thread_run(&self, stmt: &Stmt) -> bool {
        let private = self.private.borrow();
        if self.per_thread.get()
            || self.thread.get().is_none()
            || (is_tile(stmt) && !writes_private(stmt, &private))
        {
            return false;
        }
        match stmt {
            Stmt::If { cond, .. } if self.is_thread_guard(*cond) => return false,
            Stmt::Let { value, .. } if self.is_thread_let(*value) => return false,
            Stmt::Kernel { .. }
            | Stmt::Role { .. }
            | Stmt::Alloc { .. }
            | Stmt::WarpReduce { .. } => return false,
            _ => {}
        }
        let vs = self.thread_vars();
        let f = self.func;
        let mut reads = writes_private(stmt, &private)
            || stmt_exprs(stmt)
                .iter()
                .any(|&e| reads_var(f, e, &vs, &private));
        let nested: &[&Block] = match stmt {
            Stmt::For { body, .. } => &[body],
            Stmt::If {
                then, otherwise, ..
            } => &[then, otherwise],
            _ => &[],
        };
        // A loop or `if` of the block around a warp reduction, a barrier or
        // a tile operation runs statement by statement, each thread's part
        // of each statement before the next: the first two need every
        // thread at once, and TileLang separates a tile operation from the
        // per-thread code beside it with barriers.
        if !reads {
            let mut warp = false;
            for block in nested {
                block.walk(&mut |s, _| {
                    warp |= matches!(s, Stmt::WarpReduce { .. } | Stmt::Barrier)
                        || (is_tile(s) && !writes_private(s, &private));
                });
            }
            if warp {
                return false;
            }
        }
        for block in nested {
            block.walk(&mut |s, _| {
                reads |= writes_private(s, &private)
                    || stmt_exprs(s)
                        .iter()
                        .any(|&e| reads_var(f, e, &vs, &private));
            });
        }
        reads
    }

    /// Compiles a statement of per-thread code (module documentation) as
    /// an `if` that every thread passes.
    pub(crate) fn thread_run(&self, stmt: &Stmt, span: crate::ir::Span) -> Eval<Op> {
        let (tv, threads) = self
            .thread
            .get()
            .ok_or_else(|| malformed("per-thread code outside a kernel"))?;
        let f = self.func;
        let private = self.private.borrow().clone();
        let mut problem = None;
        let mut check = |s: &Stmt| {
            if problem.is_some() {
                return;
            }
            if let Some(what) =
                per_thread_store(f, s, "from code that reads the thread index", &private)
            {
                problem = Some(what);
            } else if is_tile(s) && !writes_private(s, &private) {
                problem = Some(
                    "tile operations inside code that reads the thread index (TileLang runs \
                     that code once per thread)"
                        .to_string(),
                );
            } else if matches!(s, Stmt::Barrier) {
                problem = Some(
                    "a barrier inside a loop or `if` whose bounds or condition read the thread \
                     index (this interpreter runs that code one thread after another, which a \
                     barrier between the threads' steps would reorder)"
                        .to_string(),
                );
            }
        };
        check(stmt);
        match stmt {
            Stmt::For { body, .. } => body.walk(&mut |s, _| check(s)),
            Stmt::If {
                then, otherwise, ..
            } => {
                then.walk(&mut |s, _| check(s));
                otherwise.walk(&mut |s, _| check(s));
            }
            _ => {}
        }
        if let Some(what) = problem {
            return Err(unsupported(what));
        }
        let (lets, op) = self.per_thread_code(|| self.stmt(stmt))?;
        let always: IntFn = std::rc::Rc::new(|_| Ok(1));
        Ok(Op::ThreadIf(Box::new(ThreadIf {
            tx: tv.index(),
            lets,
            threads: i64::from(threads),
            cond: always,
            then: CBlock {
                ops: vec![(op, span)],
            },
            otherwise: CBlock { ops: Vec::new() },
            then_tile: false,
            else_tile: false,
        })))
    }

    /// Whether a block-level `let` with this value is computed from the
    /// thread index.
    pub(crate) fn is_thread_let(&self, value: Handle<Expr>) -> bool {
        self.is_thread_guard(value)
    }

    /// Compiles a thread-guarded `if` (module documentation).
    pub(crate) fn thread_if(
        &self,
        cond: Handle<Expr>,
        then: &Block,
        otherwise: &Block,
    ) -> Eval<Op> {
        let (tv, threads) = self
            .thread
            .get()
            .ok_or_else(|| malformed("a thread-guarded `if` outside a kernel"))?;
        let f = self.func;
        let vs = self.thread_vars();
        let private = self.private.borrow().clone();
        for block in [then, otherwise] {
            let tile = has_tile(block, &private);
            let mut problem = None;
            // In a branch of tile operations, a parallel nest's stores are
            // the nest's, carried out by the branch's threads together (a
            // fragment so written is the whole tile, as after any nest);
            // stores outside nests are per-thread code.
            walk_outside_nests(block, tile, &mut |s| {
                if problem.is_none() {
                    problem = per_thread_store(f, s, "under an `if` on the thread index", &private);
                }
            });
            block.walk(&mut |s, _| {
                if problem.is_some() {
                    return;
                }
                if tile
                    && (writes_private(s, &private)
                        || stmt_exprs(s)
                            .iter()
                            .any(|&e| reads_var(f, e, &vs, &private)))
                {
                    problem = Some(
                        "code that reads the thread index beside tile operations under an \
                         `if` on the thread index (the reference interpreter runs such a \
                         branch once, as whole-tile operations)"
                            .to_string(),
                    );
                }
            });
            if let Some(what) = problem {
                return Err(unsupported(what));
            }
        }
        let (lets, (cond, then_code, else_code)) = self.per_thread_code(|| {
            Ok((
                self.condition(cond)?,
                self.block(then)?,
                self.block(otherwise)?,
            ))
        })?;
        Ok(Op::ThreadIf(Box::new(ThreadIf {
            tx: tv.index(),
            lets,
            threads: i64::from(threads),
            cond,
            then: then_code,
            otherwise: else_code,
            then_tile: has_tile(then, &private),
            else_tile: has_tile(otherwise, &private),
        })))
    }
}

/// Binds the thread variable and the `let`s computed from it.
fn set_thread(env: &mut Env, t: &ThreadIf, i: i64) -> Eval<()> {
    bind_thread(env, t.tx, &t.lets, i)
}

/// Binds thread variable `tx` to `i` and evaluates the `let`s computed
/// from it.
pub(crate) fn bind_thread(env: &mut Env, tx: usize, lets: &[(usize, Code)], i: i64) -> Eval<()> {
    env.ints[tx] = i;
    for (var, code) in lets {
        match code.eval(env)? {
            Scalar::Int(v) => env.ints[*var] = v,
            Scalar::Float(x) => env.floats[*var] = x,
        }
    }
    Ok(())
}

/// Runs a thread-guarded `if` (module documentation).
pub(crate) fn exec_thread_if(env: &mut Env, t: &ThreadIf) -> Eval<()> {
    let saved = env.ints[t.tx];
    let arrivals = env.arrivals;
    let ran = exec_branches(env, t);
    env.arrivals = arrivals;
    env.ints[t.tx] = saved;
    ran
}

/// The branches of a thread-guarded `if`, each for the threads that take
/// it. A barrier arrival inside one counts those threads: all of them for
/// a branch of tile operations, one per run of per-thread code.
fn exec_branches(env: &mut Env, t: &ThreadIf) -> Eval<()> {
    let mut pass = Vec::with_capacity(t.threads.max(0) as usize);
    for i in 0..t.threads {
        set_thread(env, t, i)?;
        pass.push((t.cond)(env)? != 0);
    }
    for (body, taken, tile) in [
        (&t.then, true, t.then_tile),
        (&t.otherwise, false, t.else_tile),
    ] {
        if body.ops.is_empty() {
            continue;
        }
        let threads: Vec<i64> = (0..t.threads)
            .filter(|&i| pass[i as usize] == taken)
            .collect();
        let (Some(&first), Some(&last)) = (threads.first(), threads.last()) else {
            continue;
        };
        if tile {
            if (last - first + 1) as usize != threads.len() {
                return Err(unsupported(
                    "tile operations under an `if` whose threads are not a range of the thread \
                     index (TileLang spreads them over the threads that pass the condition)",
                ));
            }
            env.ints[t.tx] = first;
            env.arrivals = u32::try_from(threads.len()).unwrap_or(u32::MAX);
            exec_block(env, body).map_err(in_branch)?;
        } else {
            env.arrivals = 1;
            for i in threads {
                swap_copies(env, i);
                let ran = set_thread(env, t, i)
                    .and_then(|()| env.tick(1))
                    .and_then(|()| exec_block(env, body));
                swap_copies(env, i);
                ran.map_err(in_branch)?;
            }
        }
    }
    Ok(())
}

/// A wait that cannot pass inside a guarded branch: the branches run one
/// after another here, where the hardware runs them at once, so a branch
/// waiting for the other's arrivals is beyond this interpreter, not a
/// deadlock of the kernel.
fn in_branch(mut e: Box<InterpError>) -> Box<InterpError> {
    if let InterpError::Deadlock { detail, span, .. } = &*e {
        let what = format!(
            "{detail} inside a branch on the thread index: the reference interpreter runs each \
             branch to its end before the next, so branches that wait on each other's arrivals \
             (a producer and a consumer split by hand) are not checked; as `T.ws` roles they are"
        );
        *e = InterpError::Unsupported { what, span: *span };
    }
    e
}

/// Gives a per-thread buffer one copy per thread (`copies` threads; 0:
/// not per-thread), each starting as the freshly allocated slot.
pub(crate) fn alloc_copies(env: &mut Env, buffer: usize, copies: u32) -> Eval<()> {
    let made = match (copies, env.slots.get(buffer)) {
        (0, _) => None,
        (n, Some(Some(slot))) => {
            let cost = u64::from(n) * slot.shape.iter().product::<usize>() as u64;
            // The copies come beside the buffer's own storage.
            let what = format!("{n} per-thread copies of `{}`", env.buffer_name(buffer));
            let own = slot.shape.iter().product::<usize>() as u64;
            env.check_memory(buffer, own.saturating_add(cost), &what)?;
            let made = vec![slot.data.clone(); n as usize];
            env.tick(cost)?;
            Some(made)
        }
        _ => return Err(malformed("a per-thread buffer without storage")),
    };
    if let Some(c) = env.copies.get_mut(buffer) {
        *c = made;
    }
    Ok(())
}

/// Swaps thread `i`'s copies of the per-thread buffers with their slots
/// (swapping twice restores both).
pub(crate) fn swap_copies(env: &mut Env, i: i64) {
    let Ok(i) = usize::try_from(i) else {
        return;
    };
    for (slot, copies) in env.slots.iter_mut().zip(env.copies.iter_mut()) {
        if let (Some(slot), Some(copies)) = (slot, copies)
            && let Some(copy) = copies.get_mut(i)
        {
            std::mem::swap::<TensorData>(&mut slot.data, copy);
        }
    }
}
