//! The budgets of build-time evaluation: steps and bytes.
//!
//! Build-time Python can loop and grow values without bound (`x = x + x`
//! forty times asks for terabytes), so evaluation runs under two budgets
//! that turn such programs into a T0109 report at the line that crossed
//! them, instead of a hang or an out-of-memory abort:
//!
//! - **steps**: every statement, expression and loop iteration costs one
//!   step, and container work costs what it touches: copying an n-element
//!   list or tuple costs n steps (a string one per 16 bytes), a dict
//!   look-up or insert one per key it compares. [`BuildLimits::max_steps`].
//! - **bytes**: every list, tuple, dict and string that evaluation creates
//!   or grows adds the bytes its elements take (`size_of::<Value>()` per
//!   element, one per byte of a string) to a running total, garbage
//!   included, which may not pass [`BuildLimits::max_bytes`]. Since nothing
//!   is ever subtracted, the total bounds every value alive at once.
//!
//! The counters are thread-local: a compilation runs on one thread, and
//! [`reset`] starts each one afresh. Growth that knows its size before
//! allocating asks [`grow`] first; every other creation is charged by the
//! value constructors through [`charge`], and the evaluator checks the
//! total after each expression ([`check`]), so no growth path escapes: one
//! operation can overshoot the limit by at most the size of its operands.
//! The first report is kept, so that every later check repeats it at the
//! line that crossed the limit.

use super::codes;
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::Span;
use std::cell::{Cell, RefCell};

/// The limits of build-time evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildLimits {
    /// The most evaluation steps (statements, expressions, loop iterations
    /// and the elements container operations touch).
    pub max_steps: u64,
    /// The most bytes the lists, tuples, dicts and strings a build creates
    /// may take in total.
    pub max_bytes: u64,
}

/// The default [`BuildLimits::max_steps`]: 50 million.
pub const DEFAULT_MAX_STEPS: u64 = 50_000_000;
/// The default [`BuildLimits::max_bytes`]: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;

impl Default for BuildLimits {
    fn default() -> Self {
        BuildLimits {
            max_steps: DEFAULT_MAX_STEPS,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

#[derive(Clone, Copy)]
struct Counters {
    steps: u64,
    bytes: u64,
    limits: BuildLimits,
}

thread_local! {
    static COUNTERS: Cell<Counters> = const {
        Cell::new(Counters {
            steps: 0,
            bytes: 0,
            limits: BuildLimits {
                max_steps: DEFAULT_MAX_STEPS,
                max_bytes: DEFAULT_MAX_BYTES,
            },
        })
    };
    /// The first report of a crossed limit.
    static FIRST: RefCell<Option<Diagnostic>> = const { RefCell::new(None) };
}

/// Starts a build with `limits` and nothing spent.
pub(crate) fn reset(limits: BuildLimits) {
    COUNTERS.with(|c| {
        c.set(Counters {
            steps: 0,
            bytes: 0,
            limits,
        })
    });
    FIRST.with(|f| f.borrow_mut().take());
}

/// The bytes one element of a list, tuple or dict entry half takes.
pub(crate) const ELEMENT_BYTES: u64 = size_of::<Value<'static>>() as u64;

/// The cost of `n` elements: their bytes and the steps copying them takes.
fn elements(n: usize) -> (u64, u64) {
    let n = n as u64;
    (n.saturating_mul(ELEMENT_BYTES), n)
}

/// Charges the creation of `n` list or tuple elements (no check here: the
/// evaluator checks after the expression).
pub(crate) fn charge_elements(n: usize) {
    let (bytes, steps) = elements(n);
    add(bytes, steps);
}

/// Charges the creation of a string of `len` bytes.
pub(crate) fn charge_str(len: usize) {
    add(len as u64, (len as u64) / 16);
}

/// The bytes a string may still grow to before it passes the byte budget
/// (at least 1). Code that builds a string from many parts (`str.join`, a
/// repr, `%`) stops there: the string it returns is then charged past the
/// budget, and the check after the expression reports it.
pub(crate) fn room() -> usize {
    let c = COUNTERS.with(Cell::get);
    let left = c.limits.max_bytes.saturating_sub(c.bytes);
    usize::try_from(left)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
}

/// Charges `n` steps of container work (keys compared, elements scanned).
pub(crate) fn work(n: usize) {
    add(0, n as u64);
}

fn add(bytes: u64, steps: u64) {
    COUNTERS.with(|c| {
        let mut v = c.get();
        v.bytes = v.bytes.saturating_add(bytes);
        v.steps = v.steps.saturating_add(steps);
        c.set(v);
    });
}

/// Asks for a growth to `n` list, tuple or dict elements (`what` says
/// which operation) before allocating it: charges it, or reports the byte
/// limit at `span` without charging.
pub(crate) fn grow_elements(n: usize, what: &str, span: Span) -> EResult<()> {
    let (bytes, steps) = elements(n);
    grow(bytes, steps, what, span)
}

/// [`grow_elements`] for a string of `len` bytes.
pub(crate) fn grow_str(len: usize, what: &str, span: Span) -> EResult<()> {
    grow(len as u64, (len as u64) / 16, what, span)
}

fn grow(bytes: u64, steps: u64, what: &str, span: Span) -> EResult<()> {
    check(span)?;
    let c = COUNTERS.with(Cell::get);
    if c.bytes.saturating_add(bytes) > c.limits.max_bytes {
        return Err(first(memory_report(c, Some((what, bytes)), span)));
    }
    add(bytes, steps);
    Ok(())
}

/// Counts one step and checks both budgets.
pub(crate) fn tick(span: Span) -> EResult<()> {
    add(0, 1);
    check(span)
}

/// Checks both budgets: the first report of a crossed limit, at `span`
/// unless an earlier check already made it.
pub(crate) fn check(span: Span) -> EResult<()> {
    let c = COUNTERS.with(Cell::get);
    if c.steps > c.limits.max_steps {
        return Err(first(steps_report(c, span)));
    }
    if c.bytes > c.limits.max_bytes {
        return Err(first(memory_report(c, None, span)));
    }
    Ok(())
}

/// The first report made, or `d` which becomes it.
fn first(d: Diagnostic) -> Box<Diagnostic> {
    FIRST.with(|f| {
        let mut f = f.borrow_mut();
        Box::new(f.get_or_insert(d).clone())
    })
}

fn steps_report(c: Counters, span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::EVAL_LIMIT,
        format!(
            "compile-time evaluation takes too long (more than {} steps, the build-time step limit)",
            c.limits.max_steps
        ),
        span,
    )
    .with_label("still running here")
    .with_note("look for a loop whose condition never becomes false at compile time")
    .with_note(
        "every statement, expression and loop iteration is a step, and so is every element a list copy or a dict look-up touches",
    )
    .with_note("raise the limit with `--max-build-steps N` if the program is right")
}

fn memory_report(c: Counters, growth: Option<(&str, u64)>, span: Span) -> Diagnostic {
    let limit = c.limits.max_bytes;
    let msg = match growth {
        Some((what, bytes)) => format!(
            "{what} needs {bytes} more bytes of build-time values, past the limit of {limit} bytes"
        ),
        None => {
            format!("build-time values take more than {limit} bytes (the build-time memory limit)")
        }
    };
    Diagnostic::error(codes::EVAL_LIMIT, msg, span)
        .with_label("grows past the build-time memory limit")
        .with_note(format!(
            "the lists, tuples, dicts and strings a build creates may take {limit} bytes in total"
        ))
        .with_note("raise the limit with `--max-build-memory BYTES` if the program is right")
}
