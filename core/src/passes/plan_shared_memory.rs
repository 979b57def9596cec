//! `plan-shared-memory`: places every shared buffer of a kernel in one
//! arena per block, letting buffers whose lifetimes do not overlap share
//! bytes, and checks the arena against the target's shared memory.
//!
//! # Algorithm
//!
//! 1. **Positions.** The statements of a kernel body are numbered in
//!    program order (a pre-order walk: a compound statement gets its number
//!    before the statements inside it).
//! 2. **Live intervals.** Each statement that names a shared buffer — in a
//!    region, a load, a store, a reduction — is a use of it; so is its
//!    `alloc` when it has an initial value (a fresh buffer's contents are
//!    undefined, so buffers allocated together at the top of a kernel and
//!    used in different phases do not interfere).
//!    A use inside a loop is lifted to the whole of the *outermost* loop of
//!    the kernel that encloses it: the loop runs its body again, so a
//!    buffer used anywhere in it is live from the loop's first statement to
//!    its last. (Parallel loops are not loops in this sense: their
//!    iterations are one step of the block.) In a kernel with roles
//!    (`T.ws`), which run concurrently, every buffer is live throughout
//!    the kernel. A buffer's live interval is
//!    the hull of its lifted uses; two buffers *interfere* when their
//!    intervals intersect. This is conservative — it never lets two
//!    buffers that can be live at once share bytes — and simple enough to
//!    be checked by eye in the printed IR.
//! 3. **Placement.** A buffer's size is its element count times its
//!    element size, or, for one pinned to padded rows or a mapped layout,
//!    the memory that layout spans (`ir::Function::layout_span`).
//!    Buffers are placed one by one, largest first (ties:
//!    the one used first, then by name), each at the lowest offset that is
//!    a multiple of its alignment and does not overlap any already placed
//!    buffer it interferes with (first fit over the gaps between those
//!    buffers). The alignment of a buffer is the larger of its element
//!    size, the shared memory space's `alignment_bytes` in the target
//!    description, and 16 bytes (the widest vector access of any shipped
//!    target); swizzled layouts that need more will raise it when layouts
//!    are inferred.
//! 4. **Limit.** The arena's size is the largest `offset + size`. Above
//!    the shared memory space's `capacity_bytes` the pass fails with an
//!    error at the `alloc` of the buffer that crosses the limit. Without a
//!    target (or without a known capacity) the plan is made and nothing is
//!    checked.
//!
//! Each buffer gets `placement = Some(Placement { offset, align })`,
//! printed as `alloc %s: shared f16[64, 32] at 8192 align 16`. Shared
//! buffers must have constant shapes; a symbolic extent is an error.
//! Running the pass again re-plans from scratch and gives the same result.

use super::{Pass, PassContext, PassError};
use crate::ir::{
    AtomicValue, Block, Buffer, Expr, Function, Handle, Literal, Module, Placement, Region, Scope,
    Span, Stmt,
};
use crate::target::MemoryKind;
use std::collections::BTreeMap;

/// The pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct PlanSharedMemory;

/// The alignment every shared buffer gets at least.
pub const MIN_ALIGN: u64 = 16;

/// Why shared memory could not be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "shared buffer `{name}` has a shape that is not constant; shared memory is sized when the kernel is compiled"
    )]
    SymbolicShape { name: String, span: Span },
    #[error("shared buffer `{name}` is too large to address ({elements} elements)")]
    TooLarge {
        name: String,
        elements: u128,
        span: Span,
    },
    #[error(
        "the kernel needs {needed} bytes of shared memory (placing `{name}` at {offset}), but target `{target}` has {capacity} per block"
    )]
    OverCapacity {
        name: String,
        offset: u64,
        needed: u64,
        capacity: u64,
        target: String,
        span: Span,
    },
}

impl PlanError {
    /// The source span of the `alloc` the error is about.
    pub fn span(&self) -> Span {
        match self {
            PlanError::SymbolicShape { span, .. }
            | PlanError::TooLarge { span, .. }
            | PlanError::OverCapacity { span, .. } => *span,
        }
    }
}

impl Pass for PlanSharedMemory {
    fn name(&self) -> &'static str {
        "plan-shared-memory"
    }

    fn description(&self) -> &'static str {
        "Places every shared buffer of a kernel in one per-block arena, reusing bytes between \
         buffers whose live ranges (lifted to whole loops) do not overlap, with the alignment \
         each needs; fails when the arena exceeds the target's shared memory."
    }

    fn run(&self, module: &mut Module, cx: &PassContext) -> Result<(), PassError> {
        let space = cx
            .target
            .as_ref()
            .and_then(|t| t.memory_of_kind(MemoryKind::Shared));
        let limits = Limits {
            align: space
                .and_then(|s| s.alignment_bytes)
                .unwrap_or(1)
                .max(MIN_ALIGN),
            capacity: space.and_then(|s| s.capacity_bytes),
            target: cx
                .target
                .as_ref()
                .map_or_else(String::new, |t| t.name.clone()),
        };
        for f in &mut module.functions {
            plan_function(f, &limits).map_err(|error| PassError::Rejected {
                pass: self.name(),
                function: f.name.clone(),
                message: error.to_string(),
                span: error.span(),
            })?;
        }
        Ok(())
    }
}

struct Limits {
    align: u64,
    capacity: Option<u64>,
    target: String,
}

/// The byte size and alignment of a shared buffer.
fn size_and_align(
    f: &Function,
    b: Handle<Buffer>,
    limits: &Limits,
    span: Span,
) -> Result<(u64, u64), PlanError> {
    let buffer = &f.buffers[b];
    let mut elements: u128 = 1;
    for &e in &buffer.shape {
        match &f.exprs[e] {
            Expr::Literal(Literal::Int(v, _)) if *v >= 0 => {
                elements = elements.saturating_mul(*v as u128);
            }
            _ => {
                return Err(PlanError::SymbolicShape {
                    name: buffer.name.clone(),
                    span,
                });
            }
        }
    }
    // A padded or mapped layout takes its span.
    if let Some(span) = f.layout_span(b) {
        elements = u128::from(span);
    }
    let bytes = elements
        .checked_mul(u128::from(buffer.dtype.bytes()))
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| PlanError::TooLarge {
            name: buffer.name.clone(),
            elements,
            span,
        })?;
    Ok((bytes, limits.align.max(buffer.dtype.bytes())))
}

/// Plans every kernel of `f`.
fn plan_function(f: &mut Function, limits: &Limits) -> Result<(), PlanError> {
    let mut plans = Vec::new();
    for stmt in &f.body.stmts {
        if let Stmt::Kernel { body, .. } = stmt {
            plans.push(plan_kernel(f, body, limits)?);
        }
    }
    for plan in plans {
        for (b, placement) in plan {
            f.buffers[b].placement = Some(placement);
        }
    }
    Ok(())
}

/// One shared buffer of a kernel on its way to a placement.
struct Item {
    buffer: Handle<Buffer>,
    size: u64,
    align: u64,
    first: usize,
    last: usize,
    span: Span,
}

fn plan_kernel(
    f: &Function,
    body: &Block,
    limits: &Limits,
) -> Result<Vec<(Handle<Buffer>, Placement)>, PlanError> {
    let mut walk = Walk {
        f,
        position: 0,
        outer_loop: None,
        intervals: BTreeMap::new(),
        allocs: BTreeMap::new(),
        lowering: false,
    };
    walk.block(body);
    walk.concurrent_roles(0, body);
    let mut items = Vec::new();
    for (&index, &(first, last)) in &walk.intervals {
        let buffer = Handle::from_index(index);
        let span = walk.allocs.get(&index).copied().unwrap_or_default();
        let (size, align) = size_and_align(f, buffer, limits, span)?;
        items.push(Item {
            buffer,
            size,
            align,
            first,
            last,
            span,
        });
    }
    items.sort_by(|a, b| {
        b.size
            .cmp(&a.size)
            .then(a.first.cmp(&b.first))
            .then_with(|| f.buffers[a.buffer].name.cmp(&f.buffers[b.buffer].name))
    });

    let mut placed: Vec<(usize, u64)> = Vec::new(); // (item index, offset)
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        // Busy byte ranges of interfering buffers, by start.
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&(j, _)| {
                let other = &items[j];
                other.first <= item.last && item.first <= other.last
            })
            .map(|&(j, offset)| (offset, offset + items[j].size))
            .collect();
        busy.sort_unstable();
        let mut offset = 0u64;
        for (start, end) in busy {
            if offset.saturating_add(item.size) <= start {
                break;
            }
            offset = offset.max(end.next_multiple_of(item.align));
        }
        let end = offset.saturating_add(item.size);
        if let Some(capacity) = limits.capacity
            && end > capacity
        {
            return Err(PlanError::OverCapacity {
                name: f.buffers[item.buffer].name.clone(),
                offset,
                needed: end,
                capacity,
                target: limits.target.clone(),
                span: item.span,
            });
        }
        placed.push((i, offset));
        out.push((
            item.buffer,
            Placement {
                offset,
                align: item.align,
            },
        ));
    }
    Ok(out)
}

/// The walk that numbers statements and records uses.
struct Walk<'f> {
    f: &'f Function,
    position: usize,
    /// The position range of the outermost enclosing serial loop, once
    /// its extent is known (it is filled in after the loop is walked).
    outer_loop: Option<usize>,
    /// Live interval of each shared buffer, by buffer index.
    intervals: BTreeMap<usize, (usize, usize)>,
    /// Where each shared buffer was allocated.
    allocs: BTreeMap<usize, Span>,
    /// For [`live_intervals`]: every on-chip buffer, not only shared
    /// ones.
    lowering: bool,
}

/// The live interval of every on-chip (non-global) buffer used in a
/// kernel `body`, by buffer index, as this pass computes them for shared
/// buffers (module documentation). The lowering to threads uses this to
/// let a buffer share another's shared memory (`lower/mod.rs`).
pub(crate) fn live_intervals(f: &Function, body: &Block) -> BTreeMap<usize, (usize, usize)> {
    let mut walk = Walk {
        f,
        position: 0,
        outer_loop: None,
        intervals: BTreeMap::new(),
        allocs: BTreeMap::new(),
        lowering: true,
    };
    walk.block(body);
    walk.concurrent_roles(0, body);
    walk.intervals
}

impl Walk<'_> {
    /// Roles run concurrently: program order says nothing about when
    /// their buffers are live, so every buffer of a kernel body with roles
    /// (walked from position `start`) is live throughout it (module
    /// documentation).
    fn concurrent_roles(&mut self, start: usize, body: &Block) {
        if body.stmts.iter().any(Stmt::holds_role) {
            let end = self.position;
            for interval in self.intervals.values_mut() {
                if interval.0 >= start {
                    *interval = (start, end);
                }
            }
        }
    }

    fn block(&mut self, block: &Block) {
        for (i, stmt) in block.stmts.iter().enumerate() {
            let span = block.spans.get(i).copied().unwrap_or_default();
            self.stmt(stmt, span);
        }
    }

    fn use_buffer(&mut self, b: Handle<Buffer>) {
        let Some(buffer) = self.f.buffers.try_get(b) else {
            return;
        };
        let tracked = if self.lowering {
            buffer.scope != Scope::Global
        } else {
            buffer.scope == Scope::Shared
        };
        if !tracked {
            return;
        }
        // Inside a loop the use is recorded at the loop's start; the loop's
        // end is added when the loop has been walked (see `stmt`).
        let at = self.outer_loop.unwrap_or(self.position);
        let entry = self.intervals.entry(b.index()).or_insert((at, at));
        entry.0 = entry.0.min(at);
        entry.1 = entry.1.max(self.position);
    }

    fn expr(&mut self, e: Handle<Expr>) {
        let mut stack = vec![e];
        let mut seen = std::collections::HashSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e.index()) {
                continue;
            }
            let Some(expr) = self.f.exprs.try_get(e) else {
                continue;
            };
            if let Expr::Load { buffer, .. } = expr {
                self.use_buffer(*buffer);
            }
            stack.extend(super::expr_operands(expr));
        }
    }

    fn region(&mut self, r: &Region) {
        self.use_buffer(r.buffer);
        for range in &r.ranges {
            self.expr(range.start);
            self.expr(range.extent);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, span: Span) {
        self.position += 1;
        match stmt {
            Stmt::Kernel { body, .. } => self.block(body),
            Stmt::Role { body, .. } => self.block(body),
            Stmt::AllocBarrier { .. } | Stmt::BarrierArrive { .. } | Stmt::BarrierWait { .. } => {}
            Stmt::Alloc { buffer, init } => {
                if self
                    .f
                    .buffers
                    .try_get(*buffer)
                    .is_some_and(|b| b.scope == Scope::Shared)
                {
                    self.allocs.insert(buffer.index(), span);
                }
                // The contents of a fresh buffer are undefined: only an
                // initial value makes its `alloc` a use.
                if init.is_some() {
                    self.use_buffer(*buffer);
                }
                if let Some(init) = init {
                    self.expr(*init);
                }
            }
            Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                self.expr(*start);
                self.expr(*extent);
                let outermost = self.outer_loop.is_none();
                if outermost {
                    self.outer_loop = Some(self.position);
                }
                let before: BTreeMap<usize, (usize, usize)> = self.intervals.clone();
                self.block(body);
                if outermost {
                    // Every buffer used in the loop is live to its end.
                    let end = self.position;
                    for (index, interval) in &mut self.intervals {
                        if before.get(index) != Some(interval) {
                            interval.1 = interval.1.max(end);
                        }
                    }
                    self.outer_loop = None;
                }
            }
            Stmt::Parallel { extents, body, .. } => {
                for &e in extents {
                    self.expr(e);
                }
                self.block(body);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(*cond);
                self.block(then);
                self.block(otherwise);
            }
            Stmt::Let { value, .. } => self.expr(*value),
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
                self.use_buffer(*buffer);
                for &i in indices {
                    self.expr(i);
                }
                self.expr(*value);
            }
            Stmt::Copy { src, dst } => {
                self.region(src);
                self.region(dst);
            }
            Stmt::Gemm {
                a,
                b,
                c,
                clear_accum,
                ..
            } => {
                self.region(a);
                self.region(b);
                self.region(c);
                self.expr(*clear_accum);
            }
            Stmt::Fill { dst, value } => {
                self.region(dst);
                self.expr(*value);
            }
            Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
                self.use_buffer(*src);
                self.use_buffer(*dst);
            }
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                self.region(dst);
                match value {
                    AtomicValue::Scalar(e) => self.expr(*e),
                    AtomicValue::Region(r) => self.region(r),
                }
            }
            Stmt::Assume { cond } | Stmt::DeviceAssert { cond } => self.expr(*cond),
            Stmt::Barrier => {}
        }
    }
}
