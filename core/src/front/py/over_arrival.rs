//! A lint for barrier arrivals that overshoot the barrier's count.
//!
//! `T.barrier_arrive(bar)` written at block level (not under an `if`, not
//! in a `T.ws` role) is run by every thread of the block, and each thread
//! arrives once. A barrier allocated with a count below the block's
//! thread count completes a phase every `count` arrivals, so one such
//! statement completes several phases (32 threads on a count-1 barrier:
//! 32), and a later wait for a phase's parity can then wait forever, or
//! the hardware stops the kernel (on the H100, an unspecified launch
//! failure). TileLang accepts the kernel as written; tilec does too, and
//! says so at the arrive (W0004).

use crate::front::Diagnostic;
use crate::ir::{Block, Buffer, Function, Handle, Span, Stmt};

use super::codes;

/// Adds a W0004 warning for every block-level arrive on a barrier whose
/// count is below the kernel's thread count.
pub(super) fn over_arrivals(f: &Function, diags: &mut Vec<Diagnostic>) {
    if diags.iter().any(Diagnostic::is_error) {
        return;
    }
    for stmt in &f.body.stmts {
        if let Stmt::Kernel { threads, body, .. } = stmt {
            let mut counts: Vec<(Handle<Buffer>, Vec<u32>)> = Vec::new();
            body.walk(&mut |s, _| {
                if let Stmt::AllocBarrier { buffer, counts: c } = s {
                    counts.push((*buffer, c.clone()));
                }
            });
            block_level(f, body, *threads, &counts, diags);
        }
    }
}

/// The statements every thread of the block runs: the kernel body and
/// serial loops in it, not branches, roles or parallel nests.
fn block_level(
    f: &Function,
    block: &Block,
    threads: u32,
    counts: &[(Handle<Buffer>, Vec<u32>)],
    diags: &mut Vec<Diagnostic>,
) {
    for (stmt, &span) in block.stmts.iter().zip(&block.spans) {
        match stmt {
            Stmt::For { body, .. } => block_level(f, body, threads, counts, diags),
            Stmt::BarrierArrive { barrier, index } => {
                let Some((_, c)) = counts.iter().find(|(b, _)| b == barrier) else {
                    continue;
                };
                let count = match f.as_const_int(*index) {
                    Some(i) => usize::try_from(i).ok().and_then(|i| c.get(i).copied()),
                    // A run-time index: the count when every barrier of
                    // the buffer has the same one.
                    None => c.first().copied().filter(|&f| c.iter().all(|&x| x == f)),
                };
                if let Some(count) = count.filter(|&n| n > 0 && n < threads) {
                    diags.push(warning(f, *barrier, count, threads, span));
                }
            }
            _ => {}
        }
    }
}

fn warning(
    f: &Function,
    barrier: Handle<Buffer>,
    count: u32,
    threads: u32,
    span: Span,
) -> Diagnostic {
    let name = &f.buffers[barrier].name;
    let phases = threads / count;
    Diagnostic::warning(
        codes::OVER_ARRIVAL,
        format!(
            "all {threads} threads of the block arrive at `{name}`, a barrier of count {count}: \
             this statement completes {phases} phase(s), not one"
        ),
        span,
    )
    .with_label("every thread of the block runs this arrive")
    .with_note(format!(
        "a wait for a phase's parity after it may never pass (on the GPU the kernel can hang or \
         stop with a launch failure); arrive from {count} thread(s) (`if tx < {count}:`) or \
         allocate `{name}` with `T.alloc_barrier({threads})`"
    ))
}
