//! The verifier of thread-level IR. It checks a kernel against a target
//! description ([`TargetDescription`]) and reports the first violation of
//! the invariants below as a [`VerifyError`] naming the kernel and the
//! statement ([`StmtPath`] and span).
//!
//! # Invariants
//! Module and names:
//! 1. Kernel names are unique in a module. Within a kernel, every
//!    parameter, shared buffer and register (including loop variables) has
//!    a distinct name.
//! 2. Every id refers to an existing entry of the right kind: a
//!    [`MemRef::Global`], an atomic or async-copy source names a global
//!    parameter; [`ExprKind::Param`] and [`Dim::Param`] name a scalar
//!    parameter; [`ExprKind::Reg`] names a scalar or loop register,
//!    [`ExprKind::Elem`] and [`FragRef`] a local array.
//!
//! Kernel header:
//! 3. The target is a SIMT machine. Scalar parameters have an integer type.
//!    Grid extents are integer expressions of literals and scalar
//!    parameters only (no registers, no special values).
//! 4. `threads` is at least 1 and at most the target's per-block limit
//!    when the description gives one.
//! 5. Shared buffers have at least one element and a power-of-two
//!    alignment no smaller than their element size; together (each placed
//!    at its alignment, in order) they fit the target's shared capacity when
//!    known. Local arrays have at least one element.
//!
//! Expressions:
//! 6. Every recorded type is the one the operands give ([`super::binary_type`],
//!    [`super::unary_type`]); array indices are integers; a loop variable is
//!    only read inside its loop's body.
//!
//! Statements:
//! 7. An assignment's destination is a scalar register or array element of
//!    the value's type, never a loop variable (nor is any other write's).
//! 8. Loads and stores move 1, 2, 4 or 8 elements; the register side has
//!    the buffer's element type; a scalar register only takes width 1; a
//!    constant array index leaves room for the whole vector; the vector's
//!    bytes do not exceed the target's vector width for the space (16 bytes
//!    when the description gives none) nor, for shared memory, the buffer's
//!    alignment. Guards are `bool`; a store's guard cannot zero-fill.
//! 9. `cp_async`, `commit_group` and `wait_group` need a per-thread
//!    asynchronous copy with commit groups in the target; a copy's size is
//!    one of the target's sizes, a multiple of the element size of both
//!    buffers (which share one element type), and at most the shared
//!    buffer's alignment.
//! 10. `barrier` needs a block barrier in the target, and may not sit in an
//!     `if` whose condition, or a `for` whose bounds, are thread-dependent
//!     (see below).
//! 11. Shuffles move a value (of any type: at most 64 bits) into a
//!     destination of its type; the width is a power of two no larger than the SIMT width; the
//!     lane operand is an integer.
//! 12. `atomic_add` adds a numeric value of the buffer's type; its guard
//!     cannot zero-fill.
//! 13. `mma` names an atom of the target, with `n` (when given) a supported
//!     N; A, B and the accumulator have register fragments; the four arrays
//!     are local arrays whose types match one of the atom's type
//!     combinations (D and C both of the accumulator type); each operand's
//!     slots fit in its array from its offset; `threads` is a multiple of
//!     the atom's issuing group.
//! 14. `for` binds a loop register of type `i32` exactly once; `start` and
//!     `step` are `i32`, `count` an integer; a constant step is not zero.
//!     `if` conditions are `bool`.
//! 15. `async_mma` names an atom with a shared-memory descriptor and a
//!     supported `n`; D is a local array of the accumulator type with room
//!     for the accumulator fragment; A and B are shared buffers whose types,
//!     with D's, are one of the atom's combinations; swizzles are modes of
//!     the descriptor, `lbo` and `sbo` multiples of its address alignment
//!     below 2^18, and a buffer with a `W`-byte swizzle is aligned to `8·W`
//!     bytes; the accumulate flag is `bool`; `threads` is a multiple of the
//!     issuing group. `async_mma_fence`, `_commit` and `_wait` need such an
//!     atom in the target.
//! 16. `mbarrier_*` need a phased barrier in shared memory in the target
//!     (with a transaction counter for `mbarrier_arrive_expect_tx`); the
//!     barrier operand is a shared buffer of 8-byte integers aligned to the
//!     barrier's alignment; counts, byte counts and parities are integers.
//!     A tensor map describes a global parameter with one box extent per
//!     dimension, each between 1 and the target's bulk copy's largest box
//!     extent, and a swizzle that is 0 or one of the copy's modes; the box's
//!     innermost row is a multiple of 16 bytes and, when swizzled, exactly
//!     the swizzle span. `tma_load` needs a bulk tensor copy in the target;
//!     it writes a shared buffer of the map's element type aligned to at
//!     least 128 bytes (and to `8·W` with a `W`-byte swizzle), with one
//!     integer coordinate per dimension.
//!
//! Thread dependence is a may-analysis run to a fixed point: an expression
//! is thread-dependent when it reads `thread_idx`, `lane_id`, `warp_id` or a
//! thread-dependent register; a register becomes thread-dependent when a
//! write to it (assignment, load, shuffle, `mma` destination) has a
//! thread-dependent value or address, sits under a thread-dependent
//! condition or loop, or is a shuffle or `mma` result (conservatively).

use std::collections::HashSet;
use std::fmt;

use super::{
    AsyncA, Dim, Expr, ExprKind, FragRef, Guard, GuardElse, Kernel, MemRef, Module, Param, ParamId,
    RegId, RegRef, RegisterKind, SharedId, SharedMatrix, Stmt, StmtKind, StmtPath, TypeError,
    binary_type, unary_type,
};
use crate::ir::{DType, Span};
use crate::layout::SwizzleMode;
use crate::target::{
    AsyncCopy, Barrier, MatrixAtom, OperandRole, OperandSource, TargetDescription,
};

/// A violated invariant, with where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub kernel: String,
    /// The statement, when the violation is inside the body.
    pub path: Option<StmtPath>,
    pub span: Span,
    pub kind: Box<VerifyErrorKind>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}`", self.kernel)?;
        if let Some(path) = &self.path {
            write!(f, ", statement {path}")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for VerifyError {}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyErrorKind {
    #[error("kernel name is used twice")]
    DuplicateKernel,
    #[error("name `%{0}` is declared twice")]
    DuplicateName(String),
    #[error("{what} {index} does not exist")]
    BadId { what: &'static str, index: u32 },
    #[error("`%{name}` is not {expected}")]
    WrongKind {
        name: String,
        expected: &'static str,
    },
    #[error("target `{0}` is not a SIMT machine")]
    NotSimt(String),
    #[error("scalar parameter `%{name}` has type {dtype}; it must be an integer")]
    ScalarParamType { name: String, dtype: DType },
    #[error("an extent of global buffer `%{name}` {reason}")]
    Extent { name: String, reason: &'static str },
    #[error("grid extent {index} {reason}")]
    Grid { index: usize, reason: String },
    #[error("{threads} threads per block is outside 1 ..= {limit}")]
    Threads { threads: u32, limit: u32 },
    #[error("shared buffer `%{name}`: {reason}")]
    Shared { name: String, reason: String },
    #[error("shared buffers need {bytes} bytes, more than the target's {capacity}")]
    SharedCapacity { bytes: u64, capacity: u64 },
    #[error("local array `%{0}` has no elements")]
    EmptyArray(String),
    #[error("type error: {0}")]
    Type(#[from] TypeError),
    #[error("expression records type {recorded} but its operands give {actual}")]
    RecordedType { recorded: DType, actual: DType },
    #[error("{what} must be {expected}, found {found}")]
    ExpectedType {
        what: &'static str,
        expected: &'static str,
        found: DType,
    },
    #[error("cannot write {value} into `%{name}` of type {dtype}")]
    WriteType {
        name: String,
        dtype: DType,
        value: DType,
    },
    #[error("loop variable `%{0}` is read-only")]
    LoopVarWritten(String),
    #[error("loop variable `%{0}` is used outside its loop")]
    LoopVarScope(String),
    #[error("loop variable `%{0}` is bound by more than one loop, or is not a loop register")]
    LoopVarBinding(String),
    #[error("vector width {0} is not 1, 2, 4 or 8")]
    VectorWidth(u32),
    #[error("a scalar register `%{0}` can only move one element")]
    ScalarVector(String),
    #[error("elements {start} .. {end} of `%{name}` are outside its {len} elements")]
    RegisterRange {
        name: String,
        start: u64,
        end: u64,
        len: u32,
    },
    #[error("a {bytes}-byte {space} access is wider than the target allows ({limit} bytes)")]
    VectorTooWide {
        space: &'static str,
        bytes: u64,
        limit: u64,
    },
    #[error("a {bytes}-byte access to `%{name}` needs more than its {align}-byte alignment")]
    Misaligned {
        name: String,
        bytes: u64,
        align: u32,
    },
    #[error("register `%{reg}` has type {reg_dtype} but buffer `%{buffer}` holds {buffer_dtype}")]
    MoveType {
        reg: String,
        reg_dtype: DType,
        buffer: String,
        buffer_dtype: DType,
    },
    #[error("a store's guard cannot zero-fill (`else zero`)")]
    ZeroFillStore,
    #[error("the target has no per-thread asynchronous copy with commit groups")]
    NoAsyncCopy,
    #[error("a {bytes}-byte cp_async is not one of the target's sizes {sizes:?}")]
    AsyncSize { bytes: u32, sizes: Vec<u32> },
    #[error("cp_async from {src} to {dst}: {reason}")]
    AsyncBuffers {
        src: String,
        dst: String,
        reason: String,
    },
    #[error("the target has no block barrier")]
    NoBlockBarrier,
    #[error("the target has no numbered barriers for parts of a block")]
    NoNamedBarriers,
    #[error("the target cannot move registers between warps (no setmaxnreg)")]
    NoRegisterReallocation,
    #[error("setmaxnreg {count}: the count must be a multiple of {step} in {min}..={max}")]
    RegisterCount {
        count: u32,
        step: u32,
        min: u32,
        max: u32,
    },
    #[error("barrier number {id} is not in 1..{ids} (0 is the block barrier)")]
    NamedBarrierId { id: i64, ids: u32 },
    #[error(
        "a numbered barrier of {threads} threads: the count must be a positive multiple of {multiple} and at most the block's {block} threads"
    )]
    NamedBarrierCount {
        threads: u32,
        multiple: u32,
        block: u32,
    },
    #[error("barrier under a thread-dependent {0}: threads may not all reach it")]
    DivergentBarrier(&'static str),
    #[error("shuffle width {width} must be a power of two at most the SIMT width {simt}")]
    ShuffleWidth { width: u32, simt: u32 },
    #[error("atomic_add of {0} values is not supported")]
    AtomicType(DType),
    #[error("the target has no matrix atom `{0}`")]
    UnknownAtom(String),
    #[error("matrix load `{load}`: {reason}")]
    MatrixLoad { load: String, reason: String },
    #[error("matrix store `{store}`: {reason}")]
    MatrixStore { store: String, reason: String },
    #[error("atom `{atom}` has no N = {n} (supported: {supported:?})")]
    AtomN {
        atom: String,
        n: u32,
        supported: Vec<u32>,
    },
    #[error(
        "atom `{atom}` operand {operand} has no register fragment (descriptor operands are not supported yet)"
    )]
    NoRegisterFragment { atom: String, operand: &'static str },
    #[error("async_mma through atom `{atom}`: {reason}")]
    AsyncMma { atom: String, reason: String },
    #[error("atom `{atom}`: fragment layout error: {reason}")]
    AtomLayout { atom: String, reason: String },
    #[error("atom `{atom}` does not take types a={a}, b={b}, c={c}, d={d}")]
    AtomTypes {
        atom: String,
        a: DType,
        b: DType,
        c: DType,
        d: DType,
    },
    #[error(
        "atom `{atom}` operand {operand} needs {slots} slots from offset {offset} of `%{array}`, which has {len}"
    )]
    FragmentRange {
        atom: String,
        operand: &'static str,
        array: String,
        offset: u32,
        slots: u64,
        len: u32,
    },
    #[error("atom `{atom}` is issued by groups of {group} threads, which do not divide {threads}")]
    IssueGroup {
        atom: String,
        group: u32,
        threads: u32,
    },
    #[error("loop step is zero")]
    ZeroStep,
    #[error("{0}")]
    Bulk(String),
}

/// Verifies every kernel of a module against `target`.
pub fn verify_module(module: &Module, target: &TargetDescription) -> Result<(), VerifyError> {
    let mut seen = HashSet::new();
    for kernel in &module.kernels {
        if !seen.insert(kernel.name.as_str()) {
            return Err(VerifyError {
                kernel: kernel.name.clone(),
                path: None,
                span: Span::UNKNOWN,
                kind: Box::new(VerifyErrorKind::DuplicateKernel),
            });
        }
        verify_kernel(kernel, target)?;
    }
    Ok(())
}

/// Verifies one kernel against `target`.
pub fn verify_kernel(kernel: &Kernel, target: &TargetDescription) -> Result<(), VerifyError> {
    let mut v = Verifier {
        k: kernel,
        target,
        path: Vec::new(),
        span: Span::UNKNOWN,
        in_body: false,
        open_loops: Vec::new(),
        bound_loops: HashSet::new(),
        varying: HashSet::new(),
        simt: 0,
    };
    v.header()?;
    v.compute_varying();
    v.in_body = true;
    v.block(&kernel.body, false)
}

struct Verifier<'a> {
    k: &'a Kernel,
    target: &'a TargetDescription,
    path: Vec<u32>,
    span: Span,
    in_body: bool,
    open_loops: Vec<RegId>,
    bound_loops: HashSet<RegId>,
    varying: HashSet<RegId>,
    simt: u32,
}

type VResult = Result<(), VerifyError>;

impl Verifier<'_> {
    fn err(&self, kind: VerifyErrorKind) -> VerifyError {
        VerifyError {
            kernel: self.k.name.clone(),
            path: self.in_body.then(|| StmtPath(self.path.clone())),
            span: self.span,
            kind: Box::new(kind),
        }
    }

    fn header(&mut self) -> VResult {
        let k = self.k;
        self.simt = self
            .target
            .simt_width()
            .ok_or_else(|| self.err(VerifyErrorKind::NotSimt(self.target.name.clone())))?;
        let mut names = HashSet::new();
        let all_names = k
            .params
            .iter()
            .map(Param::name)
            .chain(k.shared.iter().map(|s| s.name.as_str()))
            .chain(k.tensor_maps.iter().map(|m| m.name.as_str()))
            .chain(k.registers.iter().map(|r| r.name.as_str()));
        for name in all_names {
            if !names.insert(name) {
                return Err(self.err(VerifyErrorKind::DuplicateName(name.to_string())));
            }
        }
        for param in &k.params {
            match param {
                Param::Scalar { name, dtype } if !dtype.is_int() => {
                    return Err(self.err(VerifyErrorKind::ScalarParamType {
                        name: name.clone(),
                        dtype: *dtype,
                    }));
                }
                Param::Scalar { .. } => {}
                Param::Global(g) => {
                    for dim in &g.shape {
                        match dim {
                            Dim::Const(_) => {}
                            Dim::Param(p) => {
                                self.scalar_param(*p)?;
                            }
                            Dim::Expr(e) => self.extent_expr(e, &g.name)?,
                        }
                    }
                }
            }
        }
        for (index, e) in k.grid.iter().enumerate() {
            self.grid_expr(e, index)?;
            if !e.dtype.is_int() {
                return Err(self.err(VerifyErrorKind::Grid {
                    index,
                    reason: format!("has type {}, not an integer", e.dtype),
                }));
            }
        }
        let limit = self
            .target
            .threads_per_block
            .max_per_block
            .unwrap_or(u32::MAX);
        if k.threads == 0 || k.threads > limit {
            return Err(self.err(VerifyErrorKind::Threads {
                threads: k.threads,
                limit,
            }));
        }
        let mut bytes: u64 = 0;
        for s in &k.shared {
            let reason = if s.len == 0 {
                Some("has no elements".to_string())
            } else if !s.align.is_power_of_two() || u64::from(s.align) < s.dtype.bytes() {
                Some(format!(
                    "alignment {} is not a power of two of at least {} bytes",
                    s.align,
                    s.dtype.bytes()
                ))
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(self.err(VerifyErrorKind::Shared {
                    name: s.name.clone(),
                    reason,
                }));
            }
            let align = u64::from(s.align);
            bytes = bytes.div_ceil(align).saturating_mul(align);
            bytes = bytes.saturating_add(s.len.saturating_mul(s.dtype.bytes()));
        }
        let capacity = self
            .target
            .memory_of_kind(crate::target::MemoryKind::Shared)
            .and_then(|m| m.capacity_bytes);
        if let Some(capacity) = capacity
            && bytes > capacity
        {
            return Err(self.err(VerifyErrorKind::SharedCapacity { bytes, capacity }));
        }
        for r in &k.registers {
            if r.kind == (RegisterKind::Array { len: 0 }) {
                return Err(self.err(VerifyErrorKind::EmptyArray(r.name.clone())));
            }
        }
        for m in &k.tensor_maps {
            self.tensor_map(m)?;
        }
        Ok(())
    }

    /// The target's bulk tensor copy.
    fn bulk_copy(&self) -> Result<&crate::target::BulkTensorCopy, VerifyError> {
        self.target
            .async_copies
            .iter()
            .find_map(|c| match c {
                AsyncCopy::BulkTensor(b) => Some(b),
                AsyncCopy::PerThread(_) => None,
            })
            .ok_or_else(|| {
                self.err(VerifyErrorKind::Bulk(
                    "the target has no bulk tensor copy".to_string(),
                ))
            })
    }

    /// Invariant 16 for a tensor map.
    fn tensor_map(&self, m: &super::TensorMap) -> VResult {
        let copy = self.bulk_copy()?;
        let g = self.global(m.global)?;
        let bad = |reason: String| {
            self.err(VerifyErrorKind::Bulk(format!(
                "tensor map `%{}`: {reason}",
                m.name
            )))
        };
        let rank = g.shape.len() as u32;
        if m.box_dims.len() != g.shape.len() || rank < copy.min_rank || rank > copy.max_rank {
            return Err(bad(format!(
                "{} box extents for a rank-{rank} buffer (the copy takes ranks {} to {})",
                m.box_dims.len(),
                copy.min_rank,
                copy.max_rank
            )));
        }
        if let Some(&d) = m
            .box_dims
            .iter()
            .find(|&&d| d == 0 || d > copy.max_box_extent)
        {
            return Err(bad(format!(
                "box extent {d} is not between 1 and {}",
                copy.max_box_extent
            )));
        }
        let swizzles: Vec<u32> = copy
            .swizzle_modes
            .iter()
            .filter(|&&m| m != SwizzleMode::None)
            .map(|m| m.row_bytes() as u32)
            .collect();
        if m.swizzle != 0 && !swizzles.contains(&m.swizzle) {
            return Err(bad(format!(
                "swizzle {} is not one of the copy's modes {swizzles:?}",
                m.swizzle
            )));
        }
        let inner = u64::from(*m.box_dims.last().unwrap_or(&0)) * g.dtype.bytes();
        if inner % 16 != 0 || (m.swizzle != 0 && inner != u64::from(m.swizzle)) {
            return Err(bad(format!(
                "the box's inner row is {inner} bytes: it must be a multiple of 16{}",
                if m.swizzle != 0 {
                    format!(" and exactly the {}-byte swizzle span", m.swizzle)
                } else {
                    String::new()
                }
            )));
        }
        Ok(())
    }

    /// The target's phased barrier (with a transaction counter when
    /// `tx`), and checks of the barrier operand `bar[index]`.
    fn mbarrier(&self, bar: SharedId, index: &Expr, tx: bool) -> VResult {
        let barrier = self
            .target
            .barriers
            .iter()
            .find_map(|b| match b {
                Barrier::Phased(p) if p.space == "shared" && (!tx || p.transactions.is_some()) => {
                    Some(p)
                }
                _ => None,
            })
            .ok_or_else(|| {
                self.err(VerifyErrorKind::Bulk(format!(
                    "the target has no phased barrier in shared memory{}",
                    if tx {
                        " with a transaction counter"
                    } else {
                        ""
                    }
                )))
            })?;
        let sh = self.shared(bar)?;
        if !matches!(sh.dtype, DType::U64 | DType::I64) || sh.align < barrier.alignment_bytes.max(8)
        {
            return Err(self.err(VerifyErrorKind::Bulk(format!(
                "barrier `%{}` must be a shared buffer of 8-byte integers aligned to {} bytes",
                sh.name,
                barrier.alignment_bytes.max(8)
            ))));
        }
        self.int_expr(index, "a memory index")
    }

    fn scalar_param(&self, p: ParamId) -> Result<DType, VerifyError> {
        match self.k.params.get(p.index()) {
            Some(Param::Scalar { dtype, .. }) => Ok(*dtype),
            Some(Param::Global(g)) => Err(self.err(VerifyErrorKind::WrongKind {
                name: g.name.clone(),
                expected: "a scalar parameter",
            })),
            None => Err(self.err(VerifyErrorKind::BadId {
                what: "parameter",
                index: p.0,
            })),
        }
    }

    /// A compound extent of global buffer `buffer`: literals and scalar
    /// parameters under the operators hosts evaluate.
    fn extent_expr(&self, e: &Expr, buffer: &str) -> VResult {
        if !Dim::is_extent_expr(e) {
            return Err(self.err(VerifyErrorKind::Extent {
                name: buffer.to_string(),
                reason: "is not an integer expression of literals and scalar parameters",
            }));
        }
        self.expr(e)?;
        self.extent_params(e)
    }

    /// Every parameter `e` reads is a scalar.
    fn extent_params(&self, e: &Expr) -> VResult {
        if let ExprKind::Param(p) = &e.kind {
            self.scalar_param(*p)?;
        }
        let mut result = Ok(());
        visit_children(e, &mut |c| {
            if result.is_ok() {
                result = self.extent_params(c);
            }
        });
        result
    }

    fn grid_expr(&self, e: &Expr, index: usize) -> VResult {
        let bad = |what: &str| {
            self.err(VerifyErrorKind::Grid {
                index,
                reason: format!("reads {what}; only literals and scalar parameters are allowed"),
            })
        };
        match &e.kind {
            ExprKind::Reg(_) | ExprKind::Elem(..) => return Err(bad("a register")),
            ExprKind::Special(s) => return Err(bad(s.name())),
            _ => {}
        }
        self.expr(e)?;
        let mut result = Ok(());
        visit_children(e, &mut |c| {
            if result.is_ok() {
                result = self.grid_expr(c, index);
            }
        });
        result
    }

    // ---- thread dependence ----

    fn expr_varying(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Special(s) => s.is_thread_dependent(),
            ExprKind::Reg(r) => self.varying.contains(r),
            ExprKind::Elem(r, i) => self.varying.contains(r) || self.expr_varying(i),
            _ => {
                let mut any = false;
                visit_children(e, &mut |c| any = any || self.expr_varying(c));
                any
            }
        }
    }

    fn compute_varying(&mut self) {
        loop {
            let before = self.varying.len();
            let mut found = HashSet::new();
            self.varying_block(&self.k.body, false, &mut found);
            self.varying.extend(found);
            if self.varying.len() == before {
                break;
            }
        }
    }

    fn regref_varying(&self, r: &RegRef) -> bool {
        match r {
            RegRef::Scalar(_) => false,
            RegRef::Elem(_, i) => self.expr_varying(i),
        }
    }

    fn varying_block(&self, body: &[Stmt], ctx: bool, out: &mut HashSet<RegId>) {
        for s in body {
            match &s.kind {
                StmtKind::Assign { dst, value }
                    if ctx || self.expr_varying(value) || self.regref_varying(dst) =>
                {
                    out.insert(dst.reg());
                }
                StmtKind::Load {
                    dst, index, guard, ..
                } => {
                    let guard_varying = guard.as_ref().is_some_and(|g| self.expr_varying(&g.cond));
                    if ctx || self.expr_varying(index) || self.regref_varying(dst) || guard_varying
                    {
                        out.insert(dst.reg());
                    }
                }
                StmtKind::Shuffle { dst, .. } => {
                    out.insert(dst.reg());
                }
                StmtKind::Mma { d, .. }
                | StmtKind::MatrixLoad { dst: d, .. }
                | StmtKind::AsyncMma { d, .. } => {
                    out.insert(d.array);
                }
                StmtKind::For {
                    var,
                    start,
                    count,
                    step,
                    body,
                    ..
                } => {
                    let v = ctx
                        || self.expr_varying(start)
                        || self.expr_varying(count)
                        || self.expr_varying(step);
                    if v {
                        out.insert(*var);
                    }
                    self.varying_block(body, v, out);
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let v = ctx || self.expr_varying(cond);
                    self.varying_block(then_body, v, out);
                    if let Some(e) = else_body {
                        self.varying_block(e, v, out);
                    }
                }
                _ => {}
            }
        }
    }

    // ---- expressions ----

    fn reg_name(&self, r: RegId) -> String {
        self.k
            .registers
            .get(r.index())
            .map_or_else(|| "?".to_string(), |r| r.name.clone())
    }

    fn register(&self, r: RegId) -> Result<&super::Register, VerifyError> {
        self.k.registers.get(r.index()).ok_or_else(|| {
            self.err(VerifyErrorKind::BadId {
                what: "register",
                index: r.0,
            })
        })
    }

    fn read_reg(&self, r: RegId, array: bool) -> Result<DType, VerifyError> {
        let reg = self.register(r)?;
        match (reg.kind, array) {
            (RegisterKind::Array { .. }, true) | (RegisterKind::Scalar, false) => Ok(reg.dtype),
            (RegisterKind::Loop, false) => {
                if self.in_body && !self.open_loops.contains(&r) {
                    return Err(self.err(VerifyErrorKind::LoopVarScope(reg.name.clone())));
                }
                Ok(reg.dtype)
            }
            (_, true) => Err(self.err(VerifyErrorKind::WrongKind {
                name: reg.name.clone(),
                expected: "a local array",
            })),
            (_, false) => Err(self.err(VerifyErrorKind::WrongKind {
                name: reg.name.clone(),
                expected: "a scalar register",
            })),
        }
    }

    fn int_expr(&self, e: &Expr, what: &'static str) -> VResult {
        self.expr(e)?;
        if !e.dtype.is_int() {
            return Err(self.err(VerifyErrorKind::ExpectedType {
                what,
                expected: "an integer",
                found: e.dtype,
            }));
        }
        Ok(())
    }

    fn bool_expr(&self, e: &Expr, what: &'static str) -> VResult {
        self.expr(e)?;
        if e.dtype != DType::Bool {
            return Err(self.err(VerifyErrorKind::ExpectedType {
                what,
                expected: "bool",
                found: e.dtype,
            }));
        }
        Ok(())
    }

    fn expr(&self, e: &Expr) -> VResult {
        let actual = match &e.kind {
            ExprKind::Literal(l) => l.dtype(),
            ExprKind::Reg(r) => self.read_reg(*r, false)?,
            ExprKind::Elem(r, i) => {
                self.int_expr(i, "an array index")?;
                self.read_reg(*r, true)?
            }
            ExprKind::Param(p) => self.scalar_param(*p)?,
            ExprKind::Special(_) => DType::I32,
            ExprKind::Unary(op, a) => {
                self.expr(a)?;
                unary_type(*op, a.dtype).map_err(|e| self.err(e.into()))?
            }
            ExprKind::Binary(op, a, b) => {
                self.expr(a)?;
                self.expr(b)?;
                binary_type(*op, a.dtype, b.dtype).map_err(|e| self.err(e.into()))?
            }
            ExprKind::Cast(a) => {
                self.expr(a)?;
                e.dtype
            }
            ExprKind::Bitcast(a) => {
                self.expr(a)?;
                if !crate::ir::bitcast_ok(a.dtype, e.dtype) {
                    return Err(self.err(
                        TypeError::BitcastWidth {
                            from: a.dtype,
                            to: e.dtype,
                        }
                        .into(),
                    ));
                }
                e.dtype
            }
            ExprKind::Select(c, a, b) => {
                self.bool_expr(c, "a select condition")?;
                self.expr(a)?;
                self.expr(b)?;
                if a.dtype != b.dtype {
                    return Err(self.err(TypeError::SelectArms(a.dtype, b.dtype).into()));
                }
                a.dtype
            }
        };
        if actual != e.dtype {
            return Err(self.err(VerifyErrorKind::RecordedType {
                recorded: e.dtype,
                actual,
            }));
        }
        Ok(())
    }

    // ---- statements ----

    fn block(&mut self, body: &[Stmt], divergent: bool) -> VResult {
        for (i, s) in body.iter().enumerate() {
            self.path.push(i as u32);
            self.span = s.span;
            self.stmt(s, divergent)?;
            self.path.pop();
        }
        Ok(())
    }

    /// Checks a write to a register and returns its element type.
    fn write_reg(&self, r: &RegRef) -> Result<DType, VerifyError> {
        let reg = self.register(r.reg())?;
        if reg.kind == RegisterKind::Loop {
            return Err(self.err(VerifyErrorKind::LoopVarWritten(reg.name.clone())));
        }
        match r {
            RegRef::Scalar(id) => self.read_reg(*id, false),
            RegRef::Elem(id, index) => {
                self.int_expr(index, "an array index")?;
                self.read_reg(*id, true)
            }
        }
    }

    fn guard(&self, g: &Option<Guard>, allow_zero: bool) -> VResult {
        if let Some(g) = g {
            self.bool_expr(&g.cond, "a guard")?;
            if g.otherwise == GuardElse::Zero && !allow_zero {
                return Err(self.err(VerifyErrorKind::ZeroFillStore));
            }
        }
        Ok(())
    }

    fn global(&self, p: ParamId) -> Result<&super::GlobalBuffer, VerifyError> {
        match self.k.params.get(p.index()) {
            Some(Param::Global(g)) => Ok(g),
            Some(Param::Scalar { name, .. }) => Err(self.err(VerifyErrorKind::WrongKind {
                name: name.clone(),
                expected: "a global buffer",
            })),
            None => Err(self.err(VerifyErrorKind::BadId {
                what: "parameter",
                index: p.0,
            })),
        }
    }

    fn shared(&self, s: SharedId) -> Result<&super::SharedBuffer, VerifyError> {
        self.k.shared.get(s.index()).ok_or_else(|| {
            self.err(VerifyErrorKind::BadId {
                what: "shared buffer",
                index: s.0,
            })
        })
    }

    fn vector_move(&self, width: u32, reg: &RegRef, mem: MemRef, index: &Expr) -> VResult {
        if !matches!(width, 1 | 2 | 4 | 8) {
            return Err(self.err(VerifyErrorKind::VectorWidth(width)));
        }
        self.int_expr(index, "a memory index")?;
        let reg_dtype = self.write_reg_or_read(reg)?;
        let reg_info = self.register(reg.reg())?;
        match reg {
            RegRef::Scalar(_) if width != 1 => {
                return Err(self.err(VerifyErrorKind::ScalarVector(reg_info.name.clone())));
            }
            RegRef::Elem(_, i) => {
                if let Some(start) = i.as_const_int() {
                    let end = start.saturating_add(i64::from(width));
                    if start < 0 || end > i64::from(reg_info.len()) {
                        return Err(self.err(VerifyErrorKind::RegisterRange {
                            name: reg_info.name.clone(),
                            start: start.max(0) as u64,
                            end: end.max(0) as u64,
                            len: reg_info.len(),
                        }));
                    }
                }
            }
            RegRef::Scalar(_) => {}
        }
        let (name, dtype, space, limit, align) = match mem {
            MemRef::Global(p) => {
                let g = self.global(p)?;
                let limit = self.target.vector_widths.global_bytes.unwrap_or(16);
                (g.name.clone(), g.dtype, "global", limit, None)
            }
            MemRef::Shared(s) => {
                let b = self.shared(s)?;
                let limit = self.target.vector_widths.shared_bytes.unwrap_or(16);
                (b.name.clone(), b.dtype, "shared", limit, Some(b.align))
            }
        };
        if reg_dtype != dtype {
            return Err(self.err(VerifyErrorKind::MoveType {
                reg: reg_info.name.clone(),
                reg_dtype,
                buffer: name,
                buffer_dtype: dtype,
            }));
        }
        let bytes = u64::from(width) * dtype.bytes();
        if bytes > u64::from(limit) {
            return Err(self.err(VerifyErrorKind::VectorTooWide {
                space,
                bytes,
                limit: u64::from(limit),
            }));
        }
        if let Some(align) = align
            && bytes > u64::from(align)
        {
            return Err(self.err(VerifyErrorKind::Misaligned { name, bytes, align }));
        }
        Ok(())
    }

    /// The element type of a register operand of a move (loads write it,
    /// stores read it; both need the same kind checks).
    fn write_reg_or_read(&self, r: &RegRef) -> Result<DType, VerifyError> {
        match r {
            RegRef::Scalar(id) => self.read_reg(*id, false),
            RegRef::Elem(id, index) => {
                self.int_expr(index, "an array index")?;
                self.read_reg(*id, true)
            }
        }
    }

    fn per_thread_copy(&self) -> Result<&crate::target::PerThreadCopy, VerifyError> {
        self.target
            .async_copies
            .iter()
            .find_map(|c| match c {
                AsyncCopy::PerThread(p) if p.commit_groups => Some(p),
                _ => None,
            })
            .ok_or_else(|| self.err(VerifyErrorKind::NoAsyncCopy))
    }

    /// A `ldmatrix`: the load exists with this count (and a transposed
    /// form when asked) and reads a shared buffer of its element width
    /// into a local array of that width with room for every matrix. That
    /// whole warps run it is, as for `mma`, checked when it runs (a
    /// condition on the warp index is uniform per warp, which the
    /// verifier's notion of varying does not see).
    #[allow(clippy::too_many_arguments)]
    fn matrix_load(
        &self,
        load: &str,
        count: u32,
        trans: bool,
        dst: FragRef,
        src: SharedId,
        index: &Expr,
    ) -> VResult {
        let bad = |reason: String| {
            self.err(VerifyErrorKind::MatrixLoad {
                load: load.to_string(),
                reason,
            })
        };
        let desc = self
            .target
            .matrix_load(load)
            .ok_or_else(|| bad("the target has no such matrix load".into()))?;
        self.matrix_move(desc, count, trans, dst, src, index, &bad)
    }

    /// A matrix store: the checks of a matrix load, on the store seen as
    /// one ([`crate::target::MatrixStore::as_load`]).
    #[allow(clippy::too_many_arguments)]
    fn matrix_store(
        &self,
        store: &str,
        count: u32,
        trans: bool,
        dst: SharedId,
        index: &Expr,
        src: FragRef,
    ) -> VResult {
        let bad = |reason: String| {
            self.err(VerifyErrorKind::MatrixStore {
                store: store.to_string(),
                reason,
            })
        };
        let desc = self
            .target
            .matrix_store(store)
            .map(crate::target::MatrixStore::as_load)
            .ok_or_else(|| bad("the target has no such matrix store".into()))?;
        self.matrix_move(&desc, count, trans, src, dst, index, &bad)
    }

    /// What loads and stores of matrices share: the form exists, `index`
    /// is an integer, the shared buffer's and the register array's elements
    /// are as wide as the instruction's, and the array has room for every
    /// matrix from `frag`'s offset.
    #[allow(clippy::too_many_arguments)]
    fn matrix_move(
        &self,
        desc: &crate::target::MatrixLoad,
        count: u32,
        trans: bool,
        dst: FragRef,
        src: SharedId,
        index: &Expr,
        bad: &dyn Fn(String) -> VerifyError,
    ) -> VResult {
        if !desc.counts.contains(&count) {
            return Err(bad(format!("no x{count} form (it has {:?})", desc.counts)));
        }
        if trans && desc.transposed_fragment.is_none() {
            return Err(bad("no transposed form".into()));
        }
        self.int_expr(index, "a memory index")?;
        let buffer = self.shared(src)?;
        let reg = self.register(dst.array)?;
        let RegisterKind::Array { len } = reg.kind else {
            return Err(self.err(VerifyErrorKind::WrongKind {
                name: reg.name.clone(),
                expected: "a local array",
            }));
        };
        let bits = u64::from(desc.element_bits);
        if buffer.dtype.bytes() * 8 != bits || reg.dtype.bytes() * 8 != bits {
            return Err(bad(format!(
                "moves {bits}-bit elements; `%{}` holds {} and `%{}` {}",
                buffer.name, buffer.dtype, reg.name, reg.dtype
            )));
        }
        let per = desc
            .fragment(trans)
            .map_err(|e| bad(e.to_string()))?
            .map_or(0, |f| f.slots());
        let need = u64::from(dst.offset) + per * u64::from(count);
        if need > u64::from(len) {
            return Err(bad(format!(
                "x{count} needs {} elements from offset {} of `%{}`, which has {len}",
                per * u64::from(count),
                dst.offset,
                reg.name
            )));
        }
        Ok(())
    }

    /// Invariant 15 (`async_mma`).
    fn async_mma(
        &self,
        divergent: bool,
        atom: &str,
        n: u32,
        d: FragRef,
        (a, b): (&AsyncA, &SharedMatrix),
        accumulate: &Expr,
    ) -> VResult {
        let fail = |reason: String| {
            self.err(VerifyErrorKind::AsyncMma {
                atom: atom.to_string(),
                reason,
            })
        };
        let desc = self
            .target
            .matrix_atom(atom)
            .ok_or_else(|| self.err(VerifyErrorKind::UnknownAtom(atom.to_string())))?;
        let Some(descriptor) = &desc.descriptor else {
            return Err(fail("the atom takes no shared-memory operands".into()));
        };
        let supported = desc.supported_n();
        if !supported.contains(&n) {
            return Err(self.err(VerifyErrorKind::AtomN {
                atom: atom.to_string(),
                n,
                supported,
            }));
        }
        let dd = self.frag_check(desc, OperandRole::Accumulator, n, d, "d")?;
        if self.register(d.array)?.kind == RegisterKind::Loop {
            return Err(self.err(VerifyErrorKind::LoopVarWritten(self.reg_name(d.array))));
        }
        let mut types = [DType::Bool; 2];
        let operands: Vec<(usize, &SharedMatrix)> = match a {
            AsyncA::Shared(m) => vec![(0, m), (1, b)],
            AsyncA::Registers(f) => {
                if !desc.a.sources.contains(&OperandSource::Registers) {
                    return Err(fail("the atom takes no A from registers".into()));
                }
                types[0] = self.frag_check(desc, OperandRole::A, n, *f, "a")?;
                vec![(1, b)]
            }
        };
        for (i, m) in operands {
            let sh = self.shared(m.buffer)?;
            types[i] = sh.dtype;
            self.int_expr(&m.index, "an operand index")?;
            let mode = match m.swizzle {
                0 => SwizzleMode::None,
                32 => SwizzleMode::B32,
                64 => SwizzleMode::B64,
                128 => SwizzleMode::B128,
                w => return Err(fail(format!("swizzle of {w} bytes"))),
            };
            if !descriptor.swizzle_modes.contains(&mode) {
                return Err(fail(format!(
                    "the descriptor has no {}-byte swizzle",
                    m.swizzle
                )));
            }
            let unit = descriptor.address_alignment_bytes.max(1);
            if m.lbo % unit != 0 || m.sbo % unit != 0 || m.lbo >= 1 << 18 || m.sbo >= 1 << 18 {
                return Err(fail(format!(
                    "byte offsets lbo {} and sbo {} must be multiples of {unit} below 2^18",
                    m.lbo, m.sbo
                )));
            }
            let need = if m.swizzle == 0 { unit } else { 8 * m.swizzle };
            if sh.align < need {
                return Err(fail(format!(
                    "shared buffer `{}` is aligned to {} bytes, the layout needs {need}",
                    sh.name, sh.align
                )));
            }
        }
        self.bool_expr(accumulate, "the accumulate flag")?;
        let types_ok = desc.types.iter().any(|t| {
            element_dtype(t.a) == Some(types[0])
                && element_dtype(t.b) == Some(types[1])
                && element_dtype(t.accumulator) == Some(dd)
        });
        if !types_ok {
            return Err(self.err(VerifyErrorKind::AtomTypes {
                atom: atom.to_string(),
                a: types[0],
                b: types[1],
                c: dd,
                d: dd,
            }));
        }
        // Under a warp role's condition, whole issuing groups are checked
        // when it runs (as for `mma`).
        let group = desc.issue.threads;
        if group == 0 || (!divergent && !self.k.threads.is_multiple_of(group)) {
            return Err(self.err(VerifyErrorKind::IssueGroup {
                atom: atom.to_string(),
                group,
                threads: self.k.threads,
            }));
        }
        Ok(())
    }

    fn frag_check(
        &self,
        atom: &MatrixAtom,
        role: OperandRole,
        n: u32,
        f: FragRef,
        label: &'static str,
    ) -> Result<DType, VerifyError> {
        let reg = self.register(f.array)?;
        let RegisterKind::Array { len } = reg.kind else {
            return Err(self.err(VerifyErrorKind::WrongKind {
                name: reg.name.clone(),
                expected: "a local array",
            }));
        };
        let fragment = atom
            .fragment_for_n(role, n)
            .map_err(|e| {
                self.err(VerifyErrorKind::AtomLayout {
                    atom: atom.name.clone(),
                    reason: e.to_string(),
                })
            })?
            .ok_or_else(|| {
                self.err(VerifyErrorKind::NoRegisterFragment {
                    atom: atom.name.clone(),
                    operand: label,
                })
            })?;
        let slots = fragment.slots();
        if u64::from(f.offset) + slots > u64::from(len) {
            return Err(self.err(VerifyErrorKind::FragmentRange {
                atom: atom.name.clone(),
                operand: label,
                array: reg.name.clone(),
                offset: f.offset,
                slots,
                len,
            }));
        }
        Ok(reg.dtype)
    }

    fn stmt(&mut self, s: &Stmt, divergent: bool) -> VResult {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                self.expr(value)?;
                let dtype = self.write_reg(dst)?;
                if dtype != value.dtype {
                    return Err(self.err(VerifyErrorKind::WriteType {
                        name: self.reg_name(dst.reg()),
                        dtype,
                        value: value.dtype,
                    }));
                }
            }
            StmtKind::Load {
                width,
                dst,
                src,
                index,
                guard,
            } => {
                self.write_reg(dst)?;
                self.vector_move(*width, dst, *src, index)?;
                self.guard(guard, true)?;
            }
            StmtKind::Store {
                width,
                dst,
                index,
                src,
                guard,
            } => {
                self.vector_move(*width, src, *dst, index)?;
                self.guard(guard, false)?;
            }
            StmtKind::AsyncCopy {
                bytes,
                dst,
                dst_index,
                src,
                src_index,
                guard,
            } => {
                let copy = self.per_thread_copy()?;
                if !copy.sizes_bytes.contains(bytes) {
                    return Err(self.err(VerifyErrorKind::AsyncSize {
                        bytes: *bytes,
                        sizes: copy.sizes_bytes.clone(),
                    }));
                }
                let g = self.global(*src)?;
                let sh = self.shared(*dst)?;
                self.int_expr(dst_index, "a memory index")?;
                self.int_expr(src_index, "a memory index")?;
                self.guard(guard, true)?;
                let reason = if g.dtype != sh.dtype {
                    Some(format!(
                        "element types differ ({} and {})",
                        g.dtype, sh.dtype
                    ))
                } else if u64::from(*bytes) % g.dtype.bytes() != 0 {
                    Some(format!(
                        "{bytes} bytes is not a whole number of {}",
                        g.dtype
                    ))
                } else if *bytes > sh.align {
                    Some(format!(
                        "{bytes} bytes exceeds the shared buffer's {}-byte alignment",
                        sh.align
                    ))
                } else {
                    None
                };
                if let Some(reason) = reason {
                    return Err(self.err(VerifyErrorKind::AsyncBuffers {
                        src: g.name.clone(),
                        dst: sh.name.clone(),
                        reason,
                    }));
                }
            }
            StmtKind::CommitGroup | StmtKind::WaitGroup { .. } => {
                self.per_thread_copy()?;
            }
            StmtKind::Trap => {}
            StmtKind::Barrier => {
                if !self
                    .target
                    .barriers
                    .iter()
                    .any(|b| matches!(b, Barrier::Block(_)))
                {
                    return Err(self.err(VerifyErrorKind::NoBlockBarrier));
                }
                if divergent {
                    return Err(self.err(VerifyErrorKind::DivergentBarrier("condition or loop")));
                }
            }
            StmtKind::SetMaxRegisters { count, .. } => {
                let Some(r) = &self.target.registers.reallocation else {
                    return Err(self.err(VerifyErrorKind::NoRegisterReallocation));
                };
                let step = r.step.max(1);
                if *count < r.min_per_thread || *count > r.max_per_thread || *count % step != 0 {
                    return Err(self.err(VerifyErrorKind::RegisterCount {
                        count: *count,
                        step,
                        min: r.min_per_thread,
                        max: r.max_per_thread,
                    }));
                }
            }
            StmtKind::NamedBarrier { id, threads, .. } => {
                let Some(named) = self.target.named_barriers() else {
                    return Err(self.err(VerifyErrorKind::NoNamedBarriers));
                };
                // A number known here is checked here; others when run.
                self.int_expr(id, "a barrier number")?;
                if let Some(c) = id.as_const_int()
                    && (c < 1 || c >= i64::from(named.ids))
                {
                    return Err(self.err(VerifyErrorKind::NamedBarrierId {
                        id: c,
                        ids: named.ids,
                    }));
                }
                let multiple = named.count_multiple.max(1);
                if *threads == 0 || *threads % multiple != 0 || *threads > self.k.threads {
                    return Err(self.err(VerifyErrorKind::NamedBarrierCount {
                        threads: *threads,
                        multiple,
                        block: self.k.threads,
                    }));
                }
            }
            StmtKind::Shuffle {
                dst,
                value,
                lane,
                width,
                ..
            } => {
                self.expr(value)?;
                self.int_expr(lane, "a shuffle lane")?;
                let dtype = self.write_reg(dst)?;
                if dtype != value.dtype {
                    return Err(self.err(VerifyErrorKind::WriteType {
                        name: self.reg_name(dst.reg()),
                        dtype,
                        value: value.dtype,
                    }));
                }
                if !width.is_power_of_two() || *width > self.simt {
                    return Err(self.err(VerifyErrorKind::ShuffleWidth {
                        width: *width,
                        simt: self.simt,
                    }));
                }
            }
            StmtKind::Atomic {
                dst,
                index,
                value,
                guard,
                ..
            } => {
                let g = self.global(*dst)?;
                self.int_expr(index, "a memory index")?;
                self.expr(value)?;
                self.guard(guard, false)?;
                if g.dtype.is_bool() {
                    return Err(self.err(VerifyErrorKind::AtomicType(g.dtype)));
                }
                if value.dtype != g.dtype {
                    return Err(self.err(VerifyErrorKind::WriteType {
                        name: g.name.clone(),
                        dtype: g.dtype,
                        value: value.dtype,
                    }));
                }
            }
            StmtKind::Mma {
                atom,
                n,
                d,
                a,
                b,
                c,
            } => {
                let atom_desc = self
                    .target
                    .matrix_atom(atom)
                    .ok_or_else(|| self.err(VerifyErrorKind::UnknownAtom(atom.clone())))?;
                let n = n.unwrap_or(atom_desc.shape.n);
                let supported = atom_desc.supported_n();
                if !supported.contains(&n) {
                    return Err(self.err(VerifyErrorKind::AtomN {
                        atom: atom.clone(),
                        n,
                        supported,
                    }));
                }
                let da = self.frag_check(atom_desc, OperandRole::A, n, *a, "a")?;
                let db = self.frag_check(atom_desc, OperandRole::B, n, *b, "b")?;
                let dc = self.frag_check(atom_desc, OperandRole::Accumulator, n, *c, "c")?;
                let dd = self.frag_check(atom_desc, OperandRole::Accumulator, n, *d, "d")?;
                if self.register(d.array)?.kind == RegisterKind::Loop {
                    return Err(self.err(VerifyErrorKind::LoopVarWritten(self.reg_name(d.array))));
                }
                let types_ok = dc == dd
                    && atom_desc.types.iter().any(|t| {
                        element_dtype(t.a) == Some(da)
                            && element_dtype(t.b) == Some(db)
                            && element_dtype(t.accumulator) == Some(dc)
                    });
                if !types_ok {
                    return Err(self.err(VerifyErrorKind::AtomTypes {
                        atom: atom.clone(),
                        a: da,
                        b: db,
                        c: dc,
                        d: dd,
                    }));
                }
                // Under a thread-dependent condition (a warp role) the
                // issuing threads are a part of the block: that they form
                // whole groups is checked when the statement runs.
                let group = atom_desc.issue.threads;
                if group == 0 || (!divergent && !self.k.threads.is_multiple_of(group)) {
                    return Err(self.err(VerifyErrorKind::IssueGroup {
                        atom: atom.clone(),
                        group,
                        threads: self.k.threads,
                    }));
                }
            }
            StmtKind::MatrixLoad {
                load,
                count,
                trans,
                dst,
                src,
                index,
            } => self.matrix_load(load, *count, *trans, *dst, *src, index)?,
            StmtKind::MatrixStore {
                store,
                count,
                trans,
                dst,
                index,
                src,
            } => self.matrix_store(store, *count, *trans, *dst, index, *src)?,
            StmtKind::AsyncMma {
                atom,
                n,
                d,
                a,
                b,
                accumulate,
            } => self.async_mma(divergent, atom, *n, *d, (a, b), accumulate)?,
            StmtKind::MbarrierInit { bar, index, count } => {
                self.mbarrier(*bar, index, false)?;
                self.int_expr(count, "an arrival count")?;
            }
            StmtKind::MbarrierArrive { bar, index, tx } => {
                self.mbarrier(*bar, index, tx.is_some())?;
                if let Some(tx) = tx {
                    self.int_expr(tx, "a byte count")?;
                }
            }
            StmtKind::AsyncCopyArrive { bar, index } => self.mbarrier(*bar, index, false)?,
            StmtKind::MbarrierWait { bar, index, parity } => {
                self.mbarrier(*bar, index, false)?;
                self.int_expr(parity, "a phase parity")?;
            }
            StmtKind::TmaLoad {
                map,
                dst,
                dst_index,
                coords,
                bar,
                bar_index,
            } => {
                self.bulk_copy()?;
                self.mbarrier(*bar, bar_index, true)?;
                let m = self.k.tensor_maps.get(map.index()).ok_or_else(|| {
                    self.err(VerifyErrorKind::BadId {
                        what: "tensor map",
                        index: map.0,
                    })
                })?;
                let g = self.global(m.global)?;
                let sh = self.shared(*dst)?;
                let align = 128.max(8 * m.swizzle);
                if sh.dtype != g.dtype || sh.align < align {
                    return Err(self.err(VerifyErrorKind::Bulk(format!(
                        "tma_load into `%{}` needs a {} buffer aligned to {align} bytes",
                        sh.name, g.dtype
                    ))));
                }
                if coords.len() != m.box_dims.len() {
                    return Err(self.err(VerifyErrorKind::Bulk(format!(
                        "tma_load through `%{}` takes {} coordinates, not {}",
                        m.name,
                        m.box_dims.len(),
                        coords.len()
                    ))));
                }
                self.int_expr(dst_index, "a memory index")?;
                for c in coords {
                    self.int_expr(c, "a coordinate")?;
                }
            }
            StmtKind::AsyncMmaFence | StmtKind::AsyncMmaCommit | StmtKind::AsyncMmaWait { .. } => {
                if !self
                    .target
                    .matrix_atoms
                    .iter()
                    .any(|a| a.descriptor.is_some())
                {
                    return Err(self.err(VerifyErrorKind::AsyncMma {
                        atom: String::new(),
                        reason: "the target has no atom with shared-memory operands".into(),
                    }));
                }
            }
            StmtKind::For {
                var,
                start,
                count,
                step,
                body,
                ..
            } => {
                let reg = self.register(*var)?;
                let (ok, name) = (
                    reg.kind == RegisterKind::Loop && reg.dtype == DType::I32,
                    reg.name.clone(),
                );
                if !ok || !self.bound_loops.insert(*var) {
                    return Err(self.err(VerifyErrorKind::LoopVarBinding(name)));
                }
                for (e, what) in [(start, "a loop start"), (step, "a loop step")] {
                    self.expr(e)?;
                    if e.dtype != DType::I32 {
                        return Err(self.err(VerifyErrorKind::ExpectedType {
                            what,
                            expected: "i32",
                            found: e.dtype,
                        }));
                    }
                }
                self.int_expr(count, "a loop count")?;
                if step.as_const_int() == Some(0) {
                    return Err(self.err(VerifyErrorKind::ZeroStep));
                }
                let inner = divergent
                    || self.expr_varying(start)
                    || self.expr_varying(count)
                    || self.expr_varying(step);
                self.open_loops.push(*var);
                let result = self.block(body, inner);
                self.open_loops.pop();
                result?;
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.bool_expr(cond, "an if condition")?;
                let inner = divergent || self.expr_varying(cond);
                self.path.push(0);
                self.block(then_body, inner)?;
                self.path.pop();
                if let Some(e) = else_body {
                    self.path.push(1);
                    self.block(e, inner)?;
                    self.path.pop();
                }
            }
        }
        Ok(())
    }
}

/// The IR type a matrix-unit element type is stored as in registers, or
/// `None` for types with no IR counterpart (tf32).
pub fn element_dtype(t: crate::target::ElementType) -> Option<DType> {
    use crate::target::ElementType as E;
    Some(match t {
        E::F16 => DType::F16,
        E::Bf16 => DType::BF16,
        E::Tf32 => return None,
        E::F32 => DType::F32,
        E::F64 => DType::F64,
        E::I8 => DType::I8,
        E::U8 => DType::U8,
        E::I32 => DType::I32,
        E::F8e4m3 => DType::F8E4M3,
        E::F8e5m2 => DType::F8E5M2,
    })
}

/// Calls `f` on each direct subexpression of `e`.
pub(crate) fn visit_children(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Reg(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Elem(_, i) => f(i),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Bitcast(a) => f(a),
        ExprKind::Binary(_, a, b) => {
            f(a);
            f(b);
        }
        ExprKind::Select(c, a, b) => {
            f(c);
            f(a);
            f(b);
        }
    }
}
