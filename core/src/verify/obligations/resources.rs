//! The `registers` obligation: what a kernel keeps per thread fits the
//! target's register budget.
//!
//! The count is an *estimate* of what the kernel asks to keep in
//! registers, as TileLang places it: a `fragment` buffer is spread over
//! the block's threads (`ceil(elements / threads)` elements per thread),
//! a `local` or `var` buffer is per thread; each thread's elements take
//! `ceil(elements · bytes / 4)` 32-bit registers, buffer by buffer. It
//! leaves out what code generation adds (addresses, loop counters,
//! temporaries, matrix-atom operands in flight) and what the lowering
//! keeps elsewhere (the baseline places some fragments in shared memory),
//! so a proof is not a promise that the compiled kernel does not spill,
//! and a refutation says the kernel asks for more than the target has
//! whatever code generation does. Stated only when the target describes a
//! budget: per thread, per block (threads × per thread), or both.

use super::Generator;
use crate::ir::{Scope, Span};
use crate::verify::{ObligationKind, Term};

impl Generator<'_> {
    pub(super) fn registers(&mut self, span: Span) {
        let (per_thread, per_block) = (
            self.options.registers_per_thread,
            self.options.registers_per_block,
        );
        if per_thread.is_none() && per_block.is_none() {
            return;
        }
        let threads = Term::Const(i128::from(self.threads.max(1)));
        let mut total = Term::Const(0);
        let mut names = Vec::new();
        for buffer in self.local_buffers.clone() {
            let b = &self.f.buffers[buffer];
            let (name, scope, bytes) = (b.name.clone(), b.scope, i128::from(b.dtype.bytes()));
            let count = self
                .shape(buffer)
                .into_iter()
                .fold(Term::Const(1), |acc, extent| acc.times(extent));
            let elements = if scope == Scope::Fragment {
                ceil_div(count, threads.clone())
            } else {
                count
            };
            total = total.plus(ceil_div(elements.times(Term::Const(bytes)), Term::Const(4)));
            names.push(name);
        }
        let mut goal = Vec::new();
        let mut limits = Vec::new();
        if let Some(limit) = per_thread {
            goal.push(total.clone().le(Term::Const(i128::from(limit))));
            limits.push(format!("{limit} per thread"));
        }
        if let Some(limit) = per_block {
            goal.push(
                total
                    .clone()
                    .times(threads.clone())
                    .le(Term::Const(i128::from(limit))),
            );
            limits.push(format!("{limit} per block"));
        }
        let kept = if names.is_empty() {
            "no fragment, local or var buffers".to_string()
        } else {
            format!("registers of {} (estimate)", names.join(", "))
        };
        self.push(
            ObligationKind::Registers {
                per_thread,
                per_block,
            },
            span,
            format!("{kept} fit {} of the target", limits.join(" and ")),
            &[],
            crate::verify::Formula::and(goal),
            vec![
                ("registers per thread".to_string(), total.clone()),
                ("registers per block".to_string(), total.times(threads)),
            ],
        );
    }
}

/// `ceil(a / b)` for `b > 0`, folded when both are constants.
fn ceil_div(a: Term, b: Term) -> Term {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) if y > 0 => Term::Const((x + y - 1).div_euclid(y)),
        _ => Term::FloorDiv(
            Box::new(a.plus(b.clone()).minus(Term::Const(1))),
            Box::new(b),
        ),
    }
}
