//! The Tile IR verifier: checks that a function is well formed.
//!
//! # Invariants
//! A function passes [`verify_function`] when all of the following hold.
//!
//! **Arenas and types**
//! - Every handle (in statements, expressions, buffer shapes, parameters and
//!   symbols) points inside its arena.
//! - `expr_types` has one entry per expression and `buffer_spans` one per
//!   buffer; every block has one span per statement.
//! - The operands of an expression precede it in the arena (so the
//!   expressions form a DAG).
//! - Every expression type-checks under the rules of
//!   [`Function::add_expr`], given the recorded types of its operands, and
//!   its recorded type is the one those rules infer.
//! - No expression used by a statement is nested deeper than
//!   [`crate::ir::MAX_EXPR_DEPTH`] levels. In written IR
//!   ([`verify_input_function`]: from the front end or a `.tir` file), none
//!   divides (`/`, `//`, `%`) by a literal zero.
//! - Literals are canonical: an `Int` has an integer type and a value
//!   already wrapped to it, a `Float` a floating type and a value already
//!   rounded to it.
//!
//! **Names, binding and scoping**
//! - Variable and buffer names are unique within the function (one shared
//!   namespace).
//! - Every variable is bound at most once, by a binder of its kind: symbols
//!   by the function's symbol list, loop variables by `for` and `parallel`,
//!   `let` variables by `let`, block and thread indices by `kernel`. Bound
//!   variables have integer types, except `let` variables.
//! - A variable is used only where it is visible: symbols everywhere; loop,
//!   parallel and kernel variables inside their statement's body; a `let`
//!   variable in the rest of its block.
//! - A buffer is declared at most once, as a parameter or by `alloc`, and
//!   used only where it is visible: parameters everywhere, an allocated
//!   buffer in the rest of its block. Parameter shapes use only symbols.
//! - Parameters are `global`; `out_idx` entries index parameters.
//! - Only `shared` buffers carry a placement (`at OFFSET align ALIGN`), with
//!   a power-of-two alignment dividing the offset.
//! - Only non-global buffers carry a layout; register layouts
//!   (`fragment`, `rows`, `spread`) only fragment and local ones; `padded`
//!   rows hold a constant row of a buffer of two or more dimensions;
//!   `swizzled` rows are 32, 64 or 128 bytes; `spread` vectors are powers
//!   of two.
//!
//! **Placement**
//! - `kernel` statements appear only at the function's top level.
//! - Outside kernels only `kernel`, `let`, `assume` and `alloc` of `global`
//!   buffers may appear; inside kernels `alloc` is only for non-global
//!   scopes. Only `var` buffers have an initializer, of the buffer's type.
//!
//! **Statements**
//! - A kernel grid has one to three extents, one block variable each, and
//!   at least one thread. Constant grid extents are at least 1, constant
//!   buffer extents at least 0 (a loop of extent 0 or less runs no
//!   iteration: `T.serial(4, 2)` is such a loop). Grid, loop and buffer extents, region starts and
//!   extents, and indices are integers; loop bounds and parallel extents
//!   have the type of their variable.
//! - Parallel loops have one variable per extent, and every extent is a
//!   positive integer constant.
//! - `pipelined` `order` and `stage` lists, when present, have one entry per
//!   top-level statement of the loop body; a `schedule` with stages has 2
//!   to 16.
//! - `if` and `assume` conditions and the `gemm` clear flag are `bool`.
//! - A store has one index per dimension and a value of the buffer's type;
//!   a `fill` value and a `let` value have the type of their target.
//! - A region has one range per dimension of its buffer and at least one.
//! - `copy` (and `atomic_add` of a region) have equal source and
//!   destination extents after dropping unit dimensions, when all extents
//!   are constants.
//! - `gemm` operands are two-dimensional after dropping unit dimensions;
//!   with `A` as `M×K` (`K×M` when transposed), `B` as `K×N` (`N×K` when
//!   transposed) and `C` as `M×N`, constant extents agree. `A` and `B` are
//!   `shared` or `fragment`, `C` is `fragment` or `local`.
//! - `reduce`: `dim` is below the source rank and the destination shape is
//!   the source shape without `dim` (a one-dimensional source reduces to
//!   shape `[1]`). `cumsum`: `dim` is below the rank and both shapes are
//!   equal. Extents are compared when both are constants.
//! - The fragment rule: inside a `parallel` nest, every index of a store to
//!   a `fragment` buffer depends on a variable of an enclosing `parallel`
//!   loop, except a literal `0` on a dimension of extent 1, so that no two
//!   iterations write one element. Loads may read any element (the
//!   lowering keeps a fragment read across its threads in shared memory).
//! - Register bounds: an index of an unguarded load from or store to a
//!   `fragment`, `local` or `var` buffer of constant extent, when
//!   its range follows from literals and enclosing `parallel` variables
//!   alone (sums, differences, products, floor divisions and remainders),
//!   lies inside the extent. Unguarded: not under an `if` inside the
//!   `parallel` nest, not in an arm of a `select`.
//!   (A serial loop variable alone, or another constant, is an error: the
//!   element would not be owned by the iterating thread.)
//!
//! Errors point at handles and names and carry the statement's span when
//! one is known ([`Span::UNKNOWN`] otherwise). The verifier reports every
//! problem it finds, not only the first.

use crate::ir::{
    AtomicValue, BinaryOp, Block, Buffer, BufferLayout, DType, Expr, Function, Handle, Literal,
    LoopKind, Module, PipelineSchedule, ReduceKind, Region, Scope, Span, Stmt, TypeError, Var,
    VarKind,
};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// A handle of any arena, for errors that may concern several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleRef {
    Expr(Handle<Expr>),
    Var(Handle<Var>),
    Buffer(Handle<Buffer>),
}

impl fmt::Display for HandleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandleRef::Expr(h) => write!(f, "expression {}", h.index()),
            HandleRef::Var(h) => write!(f, "variable {}", h.index()),
            HandleRef::Buffer(h) => write!(f, "buffer {}", h.index()),
        }
    }
}

/// Most stages a pipeline schedule may name (`T.Pipelined` takes up to 16).
pub const MAX_SCHEDULE_STAGES: u32 = 16;

/// One broken invariant (see the module documentation).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error("{handle} is outside its arena")]
    DanglingHandle { handle: HandleRef, span: Span },
    #[error("the function has {exprs} expressions but {types} recorded types")]
    ExprTypesLength { exprs: usize, types: usize },
    #[error("buffer `{name}` has a malformed placement: {reason}")]
    BadPlacement {
        name: String,
        reason: String,
        span: Span,
    },
    #[error("buffer `{name}` has a malformed layout: {reason}")]
    BadLayout {
        name: String,
        reason: String,
        span: Span,
    },
    #[error("malformed role: {reason}")]
    BadRole { reason: String, span: Span },
    #[error("malformed barrier use: {reason}")]
    BadBarrier { reason: String, span: Span },
    #[error("malformed warp reduction: {reason}")]
    BadWarpReduce { reason: String, span: Span },
    #[error("malformed pipeline schedule: {reason}")]
    BadSchedule { reason: String, span: Span },
    #[error("the function has {buffers} buffers but {spans} buffer spans")]
    BufferSpansLength { buffers: usize, spans: usize },
    #[error("a block has {stmts} statements but {spans} spans")]
    BlockSpansLength {
        stmts: usize,
        spans: usize,
        span: Span,
    },
    #[error("expression {} uses expression {}, which does not precede it", .expr.index(), .operand.index())]
    OperandOrder {
        expr: Handle<Expr>,
        operand: Handle<Expr>,
    },
    #[error("expression {} is ill-typed: {error}", .expr.index())]
    IllTyped {
        expr: Handle<Expr>,
        error: TypeError,
    },
    #[error("expression {} is recorded as {recorded} but has type {inferred}", .expr.index())]
    TypeMismatch {
        expr: Handle<Expr>,
        recorded: DType,
        inferred: DType,
    },
    #[error("literal {literal:?} (expression {}) is not a canonical value of its type", .expr.index())]
    BadLiteral {
        expr: Handle<Expr>,
        literal: Literal,
    },
    #[error("name `%{name}` is used by both {first} and {second}")]
    DuplicateName {
        name: String,
        first: HandleRef,
        second: HandleRef,
    },
    #[error("variable `%{name}` is used where it is not bound")]
    UnboundVar {
        var: Handle<Var>,
        name: String,
        span: Span,
    },
    #[error("variable `%{name}` is bound more than once")]
    ReboundVar {
        var: Handle<Var>,
        name: String,
        span: Span,
    },
    #[error("variable `%{name}` has kind {found:?} but is bound as {expected:?}")]
    VarKindMismatch {
        var: Handle<Var>,
        name: String,
        expected: VarKind,
        found: VarKind,
        span: Span,
    },
    #[error("{kind:?} variable `%{name}` has type {dtype}, expected an integer")]
    NonIntegerVar {
        var: Handle<Var>,
        name: String,
        kind: VarKind,
        dtype: DType,
        span: Span,
    },
    #[error("buffer `%{name}` is used where it is not declared")]
    UndeclaredBuffer {
        buffer: Handle<Buffer>,
        name: String,
        span: Span,
    },
    #[error("buffer `%{name}` is declared more than once")]
    RedeclaredBuffer {
        buffer: Handle<Buffer>,
        name: String,
        span: Span,
    },
    #[error("parameter `%{name}` has scope {}, expected global", .scope.name())]
    ParamScope {
        buffer: Handle<Buffer>,
        name: String,
        scope: Scope,
    },
    #[error("out_idx entry {index} is not the index of a parameter")]
    OutIdx { index: u32 },
    #[error("scalar parameter {index}: {detail}")]
    ScalarParam { index: usize, detail: String },
    #[error("kernel inside another statement; kernels appear only at function top level")]
    NestedKernel { span: Span },
    #[error("`{stmt}` outside a kernel")]
    OutsideKernel { stmt: &'static str, span: Span },
    #[error("global buffer `%{name}` is allocated inside a kernel")]
    GlobalAllocInKernel {
        buffer: Handle<Buffer>,
        name: String,
        span: Span,
    },
    #[error("{} buffer `%{name}` is allocated outside a kernel", .scope.name())]
    AllocOutsideKernel {
        buffer: Handle<Buffer>,
        name: String,
        scope: Scope,
        span: Span,
    },
    #[error("{} buffer `%{name}` has an initializer; only var buffers may", .scope.name())]
    AllocInit {
        buffer: Handle<Buffer>,
        name: String,
        scope: Scope,
        span: Span,
    },
    #[error(
        "kernel grid has {grid} extents and {block_vars} block variables; expected 1 to 3 of each, as many variables as extents"
    )]
    KernelGrid {
        grid: usize,
        block_vars: usize,
        span: Span,
    },
    #[error("kernel has no threads")]
    KernelThreads { span: Span },
    #[error("{what} (expression {}) has type {found}, expected an integer", .expr.index())]
    NotInteger {
        what: &'static str,
        expr: Handle<Expr>,
        found: DType,
        span: Span,
    },
    #[error("{what} (expression {}) has type {found}, expected bool", .expr.index())]
    NotBool {
        what: &'static str,
        expr: Handle<Expr>,
        found: DType,
        span: Span,
    },
    #[error("{what} (expression {}) has type {found}, expected {expected}", .expr.index())]
    WrongType {
        what: &'static str,
        expr: Handle<Expr>,
        expected: DType,
        found: DType,
        span: Span,
    },
    #[error("`%{name}` has rank {rank} but is accessed with {found} indices")]
    IndexCount {
        buffer: Handle<Buffer>,
        name: String,
        rank: usize,
        found: usize,
        span: Span,
    },
    #[error("region of `%{name}` has {found} ranges but the buffer has rank {rank}")]
    RegionRank {
        buffer: Handle<Buffer>,
        name: String,
        rank: usize,
        found: usize,
        span: Span,
    },
    #[error("region of `%{name}` has no dimensions")]
    EmptyRegion {
        buffer: Handle<Buffer>,
        name: String,
        span: Span,
    },
    #[error("`{op}` extents differ after dropping unit dimensions: {src:?} vs {dst:?}")]
    ShapeMismatch {
        op: &'static str,
        src: Vec<i64>,
        dst: Vec<i64>,
        span: Span,
    },
    #[error("gemm operand {operand} (`%{name}`) has {rank} non-unit dimensions, expected 2")]
    GemmRank {
        operand: &'static str,
        name: String,
        rank: usize,
        span: Span,
    },
    #[error(
        "gemm shapes disagree: A {a:?}, B {b:?}, C {c:?} (transpose_a {transpose_a}, transpose_b {transpose_b})"
    )]
    GemmShape {
        a: [Option<i64>; 2],
        b: [Option<i64>; 2],
        c: [Option<i64>; 2],
        transpose_a: bool,
        transpose_b: bool,
        span: Span,
    },
    #[error("gemm operand {operand} (`%{name}`) is {}; expected {expected}", .scope.name())]
    GemmScope {
        operand: &'static str,
        buffer: Handle<Buffer>,
        name: String,
        scope: Scope,
        expected: &'static str,
        span: Span,
    },
    #[error("`{op}` dimension {dim} is out of range for rank {rank}")]
    DimOutOfRange {
        op: &'static str,
        dim: u32,
        rank: usize,
        span: Span,
    },
    #[error(
        "`{op}` destination `%{dst_name}` does not have the shape the source `%{src_name}` implies"
    )]
    ReduceShape {
        op: &'static str,
        src: Handle<Buffer>,
        src_name: String,
        dst: Handle<Buffer>,
        dst_name: String,
        span: Span,
    },
    #[error("bitwise `reduce {kind}` of `%{name}`, whose type {dtype} is not an integer")]
    BitwiseReduceType {
        kind: &'static str,
        name: String,
        dtype: DType,
        span: Span,
    },
    #[error("parallel loop has {vars} variables and {extents} extents")]
    ParallelArity {
        vars: usize,
        extents: usize,
        span: Span,
    },
    #[error("parallel extent (expression {}) is not a positive integer constant", .expr.index())]
    ParallelExtent { expr: Handle<Expr>, span: Span },
    #[error(
        "index {dim} of fragment `%{name}` inside a parallel loop does not depend on a parallel loop variable"
    )]
    FragmentIndex {
        buffer: Handle<Buffer>,
        name: String,
        dim: usize,
        span: Span,
    },
    #[error("index {dim} of `%{name}` ranges over {lo}..={hi}, outside its extent {extent}")]
    IndexOutOfBounds {
        buffer: Handle<Buffer>,
        name: String,
        dim: usize,
        lo: i64,
        hi: i64,
        extent: i64,
        span: Span,
    },
    #[error(
        "pipelined loop `{which}` list has {found} entries but the body has {expected} statements"
    )]
    PipelineAnnotation {
        which: &'static str,
        found: usize,
        expected: usize,
        span: Span,
    },
    #[error("function name `@{name}` is used more than once in the module")]
    DuplicateFunction { name: String },
    #[error(
        "expression {} is nested {depth} levels deep, deeper than the limit of {limit}",
        .expr.index()
    )]
    ExprTooDeep {
        expr: Handle<Expr>,
        depth: u32,
        limit: u32,
        span: Span,
    },
    #[error("`{}` by a constant zero (expression {})", .op.symbol(), .expr.index())]
    DivisionByZero {
        op: BinaryOp,
        expr: Handle<Expr>,
        span: Span,
    },
    #[error("{what} is {value}; it must be at least {min}")]
    BadExtent {
        what: &'static str,
        value: i64,
        min: i64,
        span: Span,
    },
}

impl VerifyError {
    /// The span of the statement where the problem is, when known.
    pub fn span(&self) -> Span {
        use VerifyError as E;
        match self {
            E::DanglingHandle { span, .. }
            | E::BlockSpansLength { span, .. }
            | E::UnboundVar { span, .. }
            | E::ReboundVar { span, .. }
            | E::VarKindMismatch { span, .. }
            | E::NonIntegerVar { span, .. }
            | E::UndeclaredBuffer { span, .. }
            | E::BadPlacement { span, .. }
            | E::BadLayout { span, .. }
            | E::BadSchedule { span, .. }
            | E::BadRole { span, .. }
            | E::BadBarrier { span, .. }
            | E::BadWarpReduce { span, .. }
            | E::RedeclaredBuffer { span, .. }
            | E::NestedKernel { span }
            | E::OutsideKernel { span, .. }
            | E::GlobalAllocInKernel { span, .. }
            | E::AllocOutsideKernel { span, .. }
            | E::AllocInit { span, .. }
            | E::KernelGrid { span, .. }
            | E::KernelThreads { span }
            | E::NotInteger { span, .. }
            | E::NotBool { span, .. }
            | E::WrongType { span, .. }
            | E::IndexCount { span, .. }
            | E::RegionRank { span, .. }
            | E::EmptyRegion { span, .. }
            | E::ShapeMismatch { span, .. }
            | E::GemmRank { span, .. }
            | E::GemmShape { span, .. }
            | E::GemmScope { span, .. }
            | E::DimOutOfRange { span, .. }
            | E::ReduceShape { span, .. }
            | E::BitwiseReduceType { span, .. }
            | E::ParallelArity { span, .. }
            | E::ParallelExtent { span, .. }
            | E::FragmentIndex { span, .. }
            | E::IndexOutOfBounds { span, .. }
            | E::PipelineAnnotation { span, .. }
            | E::ExprTooDeep { span, .. }
            | E::DivisionByZero { span, .. }
            | E::BadExtent { span, .. } => *span,
            E::ExprTypesLength { .. }
            | E::BufferSpansLength { .. }
            | E::OperandOrder { .. }
            | E::IllTyped { .. }
            | E::TypeMismatch { .. }
            | E::BadLiteral { .. }
            | E::DuplicateName { .. }
            | E::ParamScope { .. }
            | E::OutIdx { .. }
            | E::ScalarParam { .. }
            | E::DuplicateFunction { .. } => Span::UNKNOWN,
        }
    }
}

/// Checks every invariant of the module documentation; returns every
/// violation found.
pub fn verify_function(f: &Function) -> Result<(), Vec<VerifyError>> {
    verify_function_with(f, false)
}

/// [`verify_function`], plus the checks of IR as it enters the compiler
/// (from the front end or a `.tir` file): no division or remainder by a
/// literal zero. A pass may fold a divisor to zero inside a branch that
/// never runs, so this is not an invariant of every IR, only of written IR.
pub fn verify_input_function(f: &Function) -> Result<(), Vec<VerifyError>> {
    verify_function_with(f, true)
}

fn verify_function_with(f: &Function, input: bool) -> Result<(), Vec<VerifyError>> {
    let mut cx = Checker::new(f);
    cx.input = input;
    cx.check_arenas();
    cx.check_names();
    cx.check_signature();
    cx.block(&f.body, true);
    if cx.errors.is_empty() {
        Ok(())
    } else {
        Err(cx.errors)
    }
}

/// Verifies every function and that function names are unique. Each error
/// comes with the name of its function.
pub fn verify_module(m: &Module) -> Result<(), Vec<(String, VerifyError)>> {
    verify_module_with(m, false)
}

/// [`verify_module`] with the checks of [`verify_input_function`].
pub fn verify_input_module(m: &Module) -> Result<(), Vec<(String, VerifyError)>> {
    verify_module_with(m, true)
}

fn verify_module_with(m: &Module, input: bool) -> Result<(), Vec<(String, VerifyError)>> {
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for f in &m.functions {
        if !seen.insert(f.name.as_str()) {
            errors.push((
                f.name.clone(),
                VerifyError::DuplicateFunction {
                    name: f.name.clone(),
                },
            ));
        }
        if let Err(errs) = verify_function_with(f, input) {
            errors.extend(errs.into_iter().map(|e| (f.name.clone(), e)));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn literal_is_canonical(lit: Literal) -> bool {
    match lit {
        Literal::Bool(_) => true,
        Literal::Int(v, d) => d.is_int() && d.wrap_i64(v) == v,
        Literal::Float(v, d) => {
            d.is_float() && {
                let r = d.round_f64(v);
                r.to_bits() == v.to_bits() || (r.is_nan() && v.is_nan())
            }
        }
    }
}

fn stmt_name(s: &Stmt) -> &'static str {
    match s {
        Stmt::Kernel { .. } => "kernel",
        Stmt::Alloc { .. } => "alloc",
        Stmt::For { .. } => "for",
        Stmt::Parallel { .. } => "parallel",
        Stmt::If { .. } => "if",
        Stmt::Let { .. } => "let",
        Stmt::Store { .. } => "store",
        Stmt::Copy { .. } => "copy",
        Stmt::Gemm { .. } => "gemm",
        Stmt::Fill { .. } => "fill",
        Stmt::Reduce { .. } => "reduce",
        Stmt::Cumsum { .. } => "cumsum",
        Stmt::AtomicAdd { .. } => "atomic_add",
        Stmt::Atomic { op, .. } => op.name(),
        Stmt::Barrier => "barrier",
        Stmt::Assume { .. } => "assume",
        Stmt::DeviceAssert { .. } => "device_assert",
        Stmt::AllocBarrier { .. } => "alloc_barrier",
        Stmt::Role { .. } => "role",
        Stmt::BarrierArrive { .. } => "arrive",
        Stmt::BarrierWait { .. } => "wait",
        Stmt::WarpReduce { .. } => "warp_reduce",
    }
}

/// Drops unit dimensions; `None` when some extent is not a constant.
fn squeeze(extents: &[Option<i64>]) -> Option<Vec<i64>> {
    extents
        .iter()
        .copied()
        .collect::<Option<Vec<i64>>>()
        .map(|v| v.into_iter().filter(|&e| e != 1).collect())
}

struct Checker<'a> {
    f: &'a Function,
    errors: Vec<VerifyError>,
    var_bound: Vec<bool>,
    var_visible: Vec<bool>,
    /// Variables of the enclosing `parallel` loops.
    var_parallel: Vec<bool>,
    /// The constant extent of each enclosing `parallel` variable.
    var_extent: Vec<Option<i64>>,
    /// `if` statements entered inside the innermost `parallel` nest: their
    /// bodies may be guarding an access, so its bounds are not judged.
    guard_depth: u32,
    buffer_declared: Vec<bool>,
    buffer_visible: Vec<bool>,
    /// Names made visible, in order, so that closing a scope hides them.
    undo: Vec<HandleRef>,
    in_kernel: bool,
    parallel_depth: u32,
    /// The enclosing kernel's thread count (0 outside kernels).
    kernel_threads: u32,
    /// The warp groups of the enclosing role, if any.
    role: Option<Vec<u32>>,
    /// The warp-group sets of the roles met so far in the kernel.
    kernel_roles: Vec<Vec<u32>>,
    reported_vars: HashSet<Handle<Var>>,
    reported_buffers: HashSet<Handle<Buffer>>,
    /// The nesting depth of every expression ([`Function::expr_depths`]).
    depths: Vec<u32>,
    /// Expressions already reported too deep or dividing by zero.
    reported_exprs: HashSet<Handle<Expr>>,
    /// Whether the checks of written IR run ([`verify_input_function`]).
    input: bool,
}

impl<'a> Checker<'a> {
    fn new(f: &'a Function) -> Self {
        Checker {
            f,
            errors: Vec::new(),
            var_bound: vec![false; f.vars.len()],
            var_visible: vec![false; f.vars.len()],
            var_parallel: vec![false; f.vars.len()],
            var_extent: vec![None; f.vars.len()],
            guard_depth: 0,
            buffer_declared: vec![false; f.buffers.len()],
            buffer_visible: vec![false; f.buffers.len()],
            undo: Vec::new(),
            in_kernel: false,
            parallel_depth: 0,
            kernel_threads: 0,
            role: None,
            kernel_roles: Vec::new(),
            reported_vars: HashSet::new(),
            reported_buffers: HashSet::new(),
            depths: f.expr_depths(),
            reported_exprs: HashSet::new(),
            input: false,
        }
    }

    fn error(&mut self, e: VerifyError) {
        self.errors.push(e);
    }

    fn var_name(&self, v: Handle<Var>) -> String {
        self.f
            .vars
            .try_get(v)
            .map_or_else(String::new, |var| var.name.clone())
    }

    /// The recorded type of an expression, when both exist.
    fn ty(&self, e: Handle<Expr>) -> Option<DType> {
        if self.f.exprs.contains(e) {
            self.f.expr_types.get(e.index()).copied()
        } else {
            None
        }
    }

    fn const_int(&self, e: Handle<Expr>) -> Option<i64> {
        match self.f.exprs.try_get(e) {
            Some(Expr::Literal(Literal::Int(v, _))) => Some(*v),
            _ => None,
        }
    }

    // ---- Arenas ----------------------------------------------------------

    fn check_arenas(&mut self) {
        let f = self.f;
        let types_ok = f.expr_types.len() == f.exprs.len();
        if !types_ok {
            self.error(VerifyError::ExprTypesLength {
                exprs: f.exprs.len(),
                types: f.expr_types.len(),
            });
        }
        if f.buffer_spans.len() != f.buffers.len() {
            self.error(VerifyError::BufferSpansLength {
                buffers: f.buffers.len(),
                spans: f.buffer_spans.len(),
            });
        }
        // Expressions whose handles are all sound, transitively: only those
        // can be re-typed without indexing out of bounds.
        let mut sound = vec![false; f.exprs.len()];
        for (h, e) in f.exprs.iter() {
            let mut ok = true;
            for o in e.operands() {
                if !f.exprs.contains(o) {
                    self.error(VerifyError::DanglingHandle {
                        handle: HandleRef::Expr(o),
                        span: Span::UNKNOWN,
                    });
                    ok = false;
                } else if o >= h {
                    self.error(VerifyError::OperandOrder {
                        expr: h,
                        operand: o,
                    });
                    ok = false;
                } else {
                    ok &= sound[o.index()];
                }
            }
            match e {
                Expr::Var(v) if !f.vars.contains(*v) => {
                    self.error(VerifyError::DanglingHandle {
                        handle: HandleRef::Var(*v),
                        span: Span::UNKNOWN,
                    });
                    ok = false;
                }
                Expr::Load { buffer, .. } if !f.buffers.contains(*buffer) => {
                    self.error(VerifyError::DanglingHandle {
                        handle: HandleRef::Buffer(*buffer),
                        span: Span::UNKNOWN,
                    });
                    ok = false;
                }
                Expr::Literal(lit) if !literal_is_canonical(*lit) => {
                    self.error(VerifyError::BadLiteral {
                        expr: h,
                        literal: *lit,
                    });
                }
                _ => {}
            }
            sound[h.index()] = ok;
        }
        if !types_ok {
            return;
        }
        // Re-infer each type with the rules of `Function::add_expr`, applied
        // to a scratch copy whose recorded operand types are the originals.
        let mut scratch = Function {
            vars: f.vars.clone(),
            buffers: f.buffers.clone(),
            exprs: f.exprs.clone(),
            expr_types: f.expr_types.clone(),
            ..Function::default()
        };
        for (h, e) in f.exprs.iter() {
            if !sound[h.index()] {
                continue;
            }
            match scratch.add_expr(e.clone()) {
                Err(error) => self.error(VerifyError::IllTyped { expr: h, error }),
                Ok(copy) => {
                    let inferred = scratch.ty(copy);
                    let recorded = f.expr_types[h.index()];
                    if inferred != recorded {
                        self.error(VerifyError::TypeMismatch {
                            expr: h,
                            recorded,
                            inferred,
                        });
                    }
                }
            }
        }
    }

    fn check_names(&mut self) {
        let mut seen: HashMap<&str, HandleRef> = HashMap::new();
        let vars = self
            .f
            .vars
            .iter()
            .map(|(h, v)| (v.name.as_str(), HandleRef::Var(h)));
        let buffers = self
            .f
            .buffers
            .iter()
            .map(|(h, b)| (b.name.as_str(), HandleRef::Buffer(h)));
        for (name, handle) in vars.chain(buffers) {
            if let Some(&first) = seen.get(name) {
                self.errors.push(VerifyError::DuplicateName {
                    name: name.to_string(),
                    first,
                    second: handle,
                });
            } else {
                seen.insert(name, handle);
            }
        }
    }

    /// Symbols, parameters and attributes.
    fn check_signature(&mut self) {
        let f = self.f;
        for &s in &f.symbols {
            self.bind_var(s, VarKind::Symbolic, Span::UNKNOWN);
        }
        for param in &f.params {
            let b = param.buffer;
            let span = f.buffer_spans.get(b.index()).copied().unwrap_or_default();
            if !self.declare_buffer(b, span) {
                continue;
            }
            let buffer = &f.buffers[b];
            if buffer.scope != Scope::Global {
                self.error(VerifyError::ParamScope {
                    buffer: b,
                    name: buffer.name.clone(),
                    scope: buffer.scope,
                });
            }
        }
        for &index in &f.attrs.out_idx {
            if index as usize >= f.params.len() {
                self.error(VerifyError::OutIdx { index });
            }
        }
        self.check_scalar_params();
    }

    /// Scalar parameters are the last symbols, in signature order, at
    /// distinct positions of the signature.
    fn check_scalar_params(&mut self) {
        let f = self.f;
        let total = f.params.len() + f.scalars.len();
        let tail = f.symbols.len().checked_sub(f.scalars.len());
        let mut last = None;
        for (index, s) in f.scalars.iter().enumerate() {
            let problem = if tail.is_none_or(|t| f.symbols.get(t + index) != Some(&s.var)) {
                Some("its variable is not among the last symbols, in signature order".to_string())
            } else if s.position as usize >= total {
                Some(format!(
                    "position {} is outside a signature of {total} parameters",
                    s.position
                ))
            } else if last.is_some_and(|l| l >= s.position) {
                Some(format!(
                    "position {} does not follow the previous scalar parameter's",
                    s.position
                ))
            } else {
                None
            };
            last = Some(s.position);
            if let Some(detail) = problem {
                self.error(VerifyError::ScalarParam { index, detail });
            }
        }
    }

    // ---- Scopes ------------------------------------------------------------

    fn bind_var(&mut self, v: Handle<Var>, expected: VarKind, span: Span) {
        let Some(var) = self.f.vars.try_get(v) else {
            self.error(VerifyError::DanglingHandle {
                handle: HandleRef::Var(v),
                span,
            });
            return;
        };
        if var.kind != expected {
            self.error(VerifyError::VarKindMismatch {
                var: v,
                name: var.name.clone(),
                expected,
                found: var.kind,
                span,
            });
        }
        if expected != VarKind::Let && !var.dtype.is_int() {
            self.error(VerifyError::NonIntegerVar {
                var: v,
                name: var.name.clone(),
                kind: expected,
                dtype: var.dtype,
                span,
            });
        }
        if self.var_bound[v.index()] {
            self.error(VerifyError::ReboundVar {
                var: v,
                name: var.name.clone(),
                span,
            });
        }
        self.var_bound[v.index()] = true;
        self.var_visible[v.index()] = true;
        self.undo.push(HandleRef::Var(v));
    }

    /// What is wrong with mapped layout `map` on global `buffer`: it must
    /// rearrange the caller's tensor, every element at a distinct offset
    /// below the element count.
    fn global_map_problem(&self, buffer: &Buffer, map: &crate::layout::IndexMap) -> Option<String> {
        let shape: Option<Vec<u64>> = buffer
            .shape
            .iter()
            .map(|&e| self.f.as_const_int(e).and_then(|v| u64::try_from(v).ok()))
            .collect();
        let Some(shape) = shape else {
            return Some("a mapped layout needs a constant shape".to_string());
        };
        match map.check_over(&shape) {
            Err(e) => Some(format!("`{map}` is not a layout of shape {shape:?}: {e}")),
            Ok(offsets) if offsets.iter().any(|&o| o >= offsets.len() as u64) => Some(format!(
                "`{map}` places elements of global shape {shape:?} beyond its {} elements",
                offsets.len()
            )),
            Ok(_) => None,
        }
    }

    /// What is wrong with `layout` on `buffer`, if anything.
    fn layout_problem(&self, buffer: &Buffer, layout: &BufferLayout) -> Option<String> {
        if buffer.scope == Scope::Global {
            return match layout {
                BufferLayout::Mapped { map } => self.global_map_problem(buffer, map),
                _ => Some("global buffers have no on-chip layout".to_string()),
            };
        }
        let last = buffer.shape.last().and_then(|&e| self.f.as_const_int(e));
        match layout {
            BufferLayout::Shared => None,
            BufferLayout::Padded { pitch } => match last {
                _ if buffer.shape.len() < 2 => {
                    Some("only buffers of two or more dimensions have padded rows".to_string())
                }
                Some(row) if i64::try_from(*pitch).is_ok_and(|p| p >= row) => None,
                Some(row) => Some(format!("pitch {pitch} is shorter than a row ({row})")),
                None => Some("padded rows need a constant row length".to_string()),
            },
            BufferLayout::Swizzled { row_bytes } => (![32, 64, 128].contains(row_bytes))
                .then(|| format!("swizzled rows of {row_bytes} bytes (32, 64 or 128)")),
            BufferLayout::Mapped { map } => {
                if buffer.scope != Scope::Shared {
                    return Some("only shared buffers have mapped layouts".to_string());
                }
                let shape: Option<Vec<u64>> = buffer
                    .shape
                    .iter()
                    .map(|&e| self.f.as_const_int(e).and_then(|v| u64::try_from(v).ok()))
                    .collect();
                let Some(shape) = shape else {
                    return Some("a mapped layout needs a constant shape".to_string());
                };
                map.check_over(&shape)
                    .err()
                    .map(|e| format!("`{map}` is not a layout of shape {shape:?}: {e}"))
            }
            BufferLayout::Fragment { .. }
            | BufferLayout::Rows { .. }
            | BufferLayout::Spread { .. }
                if !matches!(buffer.scope, Scope::Fragment | Scope::Local) =>
            {
                Some(format!(
                    "a {} buffer cannot live in registers (fragment and local ones can)",
                    buffer.scope.name()
                ))
            }
            BufferLayout::Private if !matches!(buffer.scope, Scope::Var | Scope::Local) => {
                Some(format!(
                    "a {} buffer cannot be kept per thread (var and local ones can)",
                    buffer.scope.name()
                ))
            }
            BufferLayout::Spread { vector } if !vector.is_power_of_two() => Some(format!(
                "{vector} elements per thread and sweep (a power of two)"
            )),
            BufferLayout::Fragment { atom } | BufferLayout::Rows { atom } if atom.is_empty() => {
                Some("no matrix atom named".to_string())
            }
            _ => None,
        }
    }

    /// Declares a buffer: checks its handle, that it is declared once, and
    /// its shape (in the current scope); then makes it visible. Returns
    /// whether the handle is valid.
    fn declare_buffer(&mut self, b: Handle<Buffer>, span: Span) -> bool {
        let Some(buffer) = self.f.buffers.try_get(b) else {
            self.error(VerifyError::DanglingHandle {
                handle: HandleRef::Buffer(b),
                span,
            });
            return false;
        };
        for &e in &buffer.shape {
            self.use_expr(e, span);
            self.int_expr(e, "buffer extent", span);
            self.min_extent(e, "buffer extent", 0, span);
        }
        if let Some(p) = buffer.placement {
            let reason = if buffer.scope != Scope::Shared {
                Some(format!(
                    "only shared buffers are placed, and this one is {}",
                    buffer.scope.name()
                ))
            } else if !p.align.is_power_of_two() {
                Some(format!("alignment {} is not a power of two", p.align))
            } else if !p.offset.is_multiple_of(p.align) {
                Some(format!(
                    "offset {} is not a multiple of its alignment {}",
                    p.offset, p.align
                ))
            } else {
                None
            };
            if let Some(reason) = reason {
                self.error(VerifyError::BadPlacement {
                    name: buffer.name.clone(),
                    reason,
                    span,
                });
            }
        }
        if let Some(layout) = &buffer.layout
            && let Some(reason) = self.layout_problem(buffer, layout)
        {
            self.error(VerifyError::BadLayout {
                name: buffer.name.clone(),
                reason,
                span,
            });
        }
        if self.buffer_declared[b.index()] {
            self.error(VerifyError::RedeclaredBuffer {
                buffer: b,
                name: buffer.name.clone(),
                span,
            });
        }
        self.buffer_declared[b.index()] = true;
        self.buffer_visible[b.index()] = true;
        self.undo.push(HandleRef::Buffer(b));
        true
    }

    /// Hides every name made visible since `mark`.
    fn close_scope(&mut self, mark: usize) {
        while self.undo.len() > mark {
            match self.undo.pop() {
                Some(HandleRef::Var(v)) => {
                    self.var_visible[v.index()] = false;
                    self.var_parallel[v.index()] = false;
                    self.var_extent[v.index()] = None;
                }
                Some(HandleRef::Buffer(b)) => self.buffer_visible[b.index()] = false,
                Some(HandleRef::Expr(_)) | None => {}
            }
        }
    }

    /// Checks that a buffer is visible; returns it when the handle is valid.
    fn use_buffer(&mut self, b: Handle<Buffer>, span: Span) -> Option<&'a Buffer> {
        let Some(buffer) = self.f.buffers.try_get(b) else {
            self.error(VerifyError::DanglingHandle {
                handle: HandleRef::Buffer(b),
                span,
            });
            return None;
        };
        if !self.buffer_visible[b.index()] && self.reported_buffers.insert(b) {
            self.error(VerifyError::UndeclaredBuffer {
                buffer: b,
                name: buffer.name.clone(),
                span,
            });
        }
        Some(buffer)
    }

    // ---- Expressions -------------------------------------------------------

    /// Checks the variables and buffers an expression uses, and the fragment
    /// rule for its loads.
    fn use_expr(&mut self, root: Handle<Expr>, span: Span) {
        if !self.f.exprs.contains(root) {
            self.error(VerifyError::DanglingHandle {
                handle: HandleRef::Expr(root),
                span,
            });
            return;
        }
        let depth = self.depths.get(root.index()).copied().unwrap_or(0);
        if depth > crate::ir::MAX_EXPR_DEPTH {
            // Reported once, at the first statement using it: its operands
            // are not walked either, so that the walk stays short.
            if self.reported_exprs.insert(root) {
                self.error(VerifyError::ExprTooDeep {
                    expr: root,
                    depth,
                    limit: crate::ir::MAX_EXPR_DEPTH,
                    span,
                });
            }
            return;
        }
        // Each operand with whether it sits in an arm of a `select`.
        let mut stack = vec![(root, false)];
        let mut seen = HashSet::new();
        while let Some((h, in_arm)) = stack.pop() {
            if !seen.insert((h, in_arm)) {
                continue;
            }
            // Dangling operands were reported with the arenas.
            let Some(e) = self.f.exprs.try_get(h) else {
                continue;
            };
            match e {
                Expr::Var(v) => {
                    let visible = self.var_visible.get(v.index()).copied().unwrap_or(true);
                    if !visible && self.reported_vars.insert(*v) {
                        self.error(VerifyError::UnboundVar {
                            var: *v,
                            name: self.var_name(*v),
                            span,
                        });
                    }
                }
                Expr::Load { buffer, indices } => {
                    if self.f.buffers.contains(*buffer) {
                        self.use_buffer(*buffer, span);
                        self.data_buffer(*buffer, span);
                        if !in_arm {
                            self.bounds_rule(*buffer, indices, span);
                        }
                    }
                    stack.extend(indices.iter().map(|&i| (i, in_arm)));
                }
                Expr::Select {
                    cond,
                    then,
                    otherwise,
                } => {
                    stack.push((*cond, in_arm));
                    stack.push((*then, true));
                    stack.push((*otherwise, true));
                }
                Expr::Binary {
                    op: op @ (BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod),
                    lhs,
                    rhs,
                } => {
                    let zero = match self.f.exprs.try_get(*rhs) {
                        Some(Expr::Literal(Literal::Int(0, _))) => true,
                        Some(Expr::Literal(Literal::Float(v, _))) => *v == 0.0,
                        _ => false,
                    };
                    if zero && self.input && self.reported_exprs.insert(h) {
                        self.error(VerifyError::DivisionByZero {
                            op: *op,
                            expr: h,
                            span,
                        });
                    }
                    stack.push((*lhs, in_arm));
                    stack.push((*rhs, in_arm));
                }
                other => stack.extend(other.operands().into_iter().map(|o| (o, in_arm))),
            }
        }
    }

    /// A constant extent below `min` (a negative buffer or loop extent, an
    /// empty grid dimension) is an error; a run-time one is not judged.
    fn min_extent(&mut self, e: Handle<Expr>, what: &'static str, min: i64, span: Span) {
        if let Some(value) = self.const_int(e)
            && value < min
        {
            self.error(VerifyError::BadExtent {
                what,
                value,
                min,
                span,
            });
        }
    }

    fn int_expr(&mut self, e: Handle<Expr>, what: &'static str, span: Span) {
        if let Some(t) = self.ty(e)
            && !t.is_int()
        {
            self.error(VerifyError::NotInteger {
                what,
                expr: e,
                found: t,
                span,
            });
        }
    }

    fn bool_expr(&mut self, e: Handle<Expr>, what: &'static str, span: Span) {
        if let Some(t) = self.ty(e)
            && t != DType::Bool
        {
            self.error(VerifyError::NotBool {
                what,
                expr: e,
                found: t,
                span,
            });
        }
    }

    fn typed_expr(&mut self, e: Handle<Expr>, expected: DType, what: &'static str, span: Span) {
        if let Some(t) = self.ty(e)
            && t != expected
        {
            self.error(VerifyError::WrongType {
                what,
                expr: e,
                expected,
                found: t,
                span,
            });
        }
    }

    /// Whether an expression uses a variable of an enclosing parallel loop.
    fn depends_on_parallel(&self, root: Handle<Expr>) -> bool {
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        while let Some(h) = stack.pop() {
            if !seen.insert(h) {
                continue;
            }
            match self.f.exprs.try_get(h) {
                Some(Expr::Var(v))
                    if self.var_parallel.get(v.index()).copied().unwrap_or(false) =>
                {
                    return true;
                }
                Some(Expr::Var(_)) | None => {}
                Some(e) => stack.extend(e.operands()),
            }
        }
        false
    }

    /// The values an index can take, when they follow from literals and the
    /// enclosing `parallel` variables alone.
    fn index_range(&self, e: Handle<Expr>, depth: u32) -> Option<(i64, i64)> {
        if depth > 64 {
            return None;
        }
        match self.f.exprs.try_get(e)? {
            Expr::Literal(Literal::Int(v, _)) => Some((*v, *v)),
            Expr::Var(v) => {
                let n = self.var_extent.get(v.index()).copied().flatten()?;
                Some((0, n - 1))
            }
            Expr::Cast { arg, dtype } if dtype.is_int() => self.index_range(*arg, depth + 1),
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = self.index_range(*lhs, depth + 1)?;
                let (c, d) = self.index_range(*rhs, depth + 1)?;
                match op {
                    BinaryOp::Add => Some((a.checked_add(c)?, b.checked_add(d)?)),
                    BinaryOp::Sub => Some((a.checked_sub(d)?, b.checked_sub(c)?)),
                    BinaryOp::Mul => {
                        let p = [
                            a.checked_mul(c)?,
                            a.checked_mul(d)?,
                            b.checked_mul(c)?,
                            b.checked_mul(d)?,
                        ];
                        Some((*p.iter().min()?, *p.iter().max()?))
                    }
                    BinaryOp::FloorDiv if c == d && c > 0 => {
                        Some((a.div_euclid(c), b.div_euclid(c)))
                    }
                    BinaryOp::FloorMod if c == d && c > 0 => {
                        if a.div_euclid(c) == b.div_euclid(c) {
                            Some((a.rem_euclid(c), b.rem_euclid(c)))
                        } else {
                            Some((0, c - 1))
                        }
                    }
                    BinaryOp::Min => Some((a.min(c), b.min(d))),
                    BinaryOp::Max => Some((a.max(c), b.max(d))),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The on-chip bounds rule: an unguarded index whose range is known lies
    /// inside the buffer's constant extent.
    fn bounds_rule(&mut self, b: Handle<Buffer>, indices: &[Handle<Expr>], span: Span) {
        if self.guard_depth > 0 {
            return;
        }
        let Some(buffer) = self.f.buffers.try_get(b) else {
            return;
        };
        // Register-resident buffers only: where an index past a fragment
        // lands depends on the layout inferred for it. A shared-memory index
        // past the end is left to the interpreter's run-time check and to
        // `tilec verify`, which shows a counterexample.
        if !matches!(buffer.scope, Scope::Fragment | Scope::Local | Scope::Var) {
            return;
        }
        for (dim, (&index, &extent)) in indices.iter().zip(&buffer.shape).enumerate() {
            let Some(extent) = self.const_int(extent) else {
                continue;
            };
            let Some((lo, hi)) = self.index_range(index, 0) else {
                continue;
            };
            if lo < 0 || hi >= extent {
                self.error(VerifyError::IndexOutOfBounds {
                    buffer: b,
                    name: buffer.name.clone(),
                    dim,
                    lo,
                    hi,
                    extent,
                    span,
                });
            }
        }
    }

    fn fragment_rule(&mut self, b: Handle<Buffer>, indices: &[Handle<Expr>], span: Span) {
        if self.parallel_depth == 0 {
            return;
        }
        let Some(buffer) = self.f.buffers.try_get(b) else {
            return;
        };
        if buffer.scope != Scope::Fragment {
            return;
        }
        for (dim, &index) in indices.iter().enumerate() {
            let unit_dim = buffer
                .shape
                .get(dim)
                .is_some_and(|&e| self.const_int(e) == Some(1));
            if unit_dim && self.const_int(index) == Some(0) {
                continue;
            }
            if !self.depends_on_parallel(index) {
                self.error(VerifyError::FragmentIndex {
                    buffer: b,
                    name: buffer.name.clone(),
                    dim,
                    span,
                });
            }
        }
    }

    // ---- Statements --------------------------------------------------------

    fn block(&mut self, block: &Block, top_level: bool) {
        let mark = self.undo.len();
        if block.spans.len() != block.stmts.len() {
            self.error(VerifyError::BlockSpansLength {
                stmts: block.stmts.len(),
                spans: block.spans.len(),
                span: block.spans.first().copied().unwrap_or_default(),
            });
        }
        for (stmt, span) in block.iter() {
            self.stmt(stmt, span, top_level);
        }
        self.close_scope(mark);
    }

    /// A nested block in a scope of its own.
    fn body(&mut self, block: &Block) {
        self.block(block, false);
    }

    fn stmt(&mut self, stmt: &Stmt, span: Span, top_level: bool) {
        let allowed_outside = matches!(
            stmt,
            Stmt::Kernel { .. } | Stmt::Let { .. } | Stmt::Assume { .. } | Stmt::Alloc { .. }
        );
        if !self.in_kernel && !allowed_outside {
            self.error(VerifyError::OutsideKernel {
                stmt: stmt_name(stmt),
                span,
            });
        }
        match stmt {
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                thread_var,
                body,
                ..
            } => {
                if !top_level {
                    self.error(VerifyError::NestedKernel { span });
                }
                if grid.is_empty() || grid.len() > 3 || grid.len() != block_vars.len() {
                    self.error(VerifyError::KernelGrid {
                        grid: grid.len(),
                        block_vars: block_vars.len(),
                        span,
                    });
                }
                if *threads == 0 {
                    self.error(VerifyError::KernelThreads { span });
                }
                for &e in grid {
                    self.use_expr(e, span);
                    self.int_expr(e, "grid extent", span);
                    self.min_extent(e, "grid extent", 1, span);
                }
                let mark = self.undo.len();
                for &v in block_vars {
                    self.bind_var(v, VarKind::BlockIdx, span);
                }
                self.bind_var(*thread_var, VarKind::ThreadIdx, span);
                let was_in_kernel = std::mem::replace(&mut self.in_kernel, true);
                self.kernel_threads = *threads;
                self.kernel_roles.clear();
                self.body(body);
                self.kernel_threads = 0;
                self.in_kernel = was_in_kernel;
                self.close_scope(mark);
            }
            Stmt::Alloc { buffer, init } => {
                if let Some(init) = *init {
                    self.use_expr(init, span);
                }
                if let Some(b) = self.f.buffers.try_get(*buffer) {
                    let name = b.name.clone();
                    if b.scope == Scope::Barrier {
                        self.error(VerifyError::BadBarrier {
                            reason: format!(
                                "barrier buffer `%{name}` declared by `alloc`, not `alloc_barrier`"
                            ),
                            span,
                        });
                    }
                    if b.scope == Scope::Global && self.in_kernel {
                        self.error(VerifyError::GlobalAllocInKernel {
                            buffer: *buffer,
                            name: name.clone(),
                            span,
                        });
                    }
                    if b.scope != Scope::Global && !self.in_kernel {
                        self.error(VerifyError::AllocOutsideKernel {
                            buffer: *buffer,
                            name: name.clone(),
                            scope: b.scope,
                            span,
                        });
                    }
                    if let Some(init) = *init {
                        if b.scope != Scope::Var {
                            self.error(VerifyError::AllocInit {
                                buffer: *buffer,
                                name,
                                scope: b.scope,
                                span,
                            });
                        }
                        self.typed_expr(init, b.dtype, "alloc initializer", span);
                    }
                }
                self.declare_buffer(*buffer, span);
            }
            Stmt::For {
                var,
                start,
                extent,
                kind,
                body,
            } => {
                let var_type = self.f.vars.try_get(*var).map(|v| v.dtype);
                for (e, what) in [(*start, "loop start"), (*extent, "loop extent")] {
                    self.use_expr(e, span);
                    self.int_expr(e, what, span);
                    if let Some(t) = var_type {
                        self.typed_expr(e, t, what, span);
                    }
                }
                if let LoopKind::Pipelined {
                    schedule: Some(schedule),
                    ..
                } = kind
                {
                    let stages = match schedule {
                        PipelineSchedule::Async { stages }
                        | PipelineSchedule::Bulk { stages, .. } => *stages,
                        _ => 2,
                    };
                    if !(2..=MAX_SCHEDULE_STAGES).contains(&stages) {
                        self.error(VerifyError::BadSchedule {
                            reason: format!(
                                "{stages} stages (a pipeline has 2 to {MAX_SCHEDULE_STAGES})"
                            ),
                            span,
                        });
                    }
                }
                if let LoopKind::Pipelined { order, stage, .. } = kind {
                    for (which, list) in [("order", order), ("stage", stage)] {
                        if let Some(list) = list
                            && list.len() != body.len()
                        {
                            self.error(VerifyError::PipelineAnnotation {
                                which,
                                found: list.len(),
                                expected: body.len(),
                                span,
                            });
                        }
                    }
                }
                let mark = self.undo.len();
                self.bind_var(*var, VarKind::Loop, span);
                self.body(body);
                self.close_scope(mark);
            }
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                if vars.len() != extents.len() {
                    self.error(VerifyError::ParallelArity {
                        vars: vars.len(),
                        extents: extents.len(),
                        span,
                    });
                }
                for (i, &e) in extents.iter().enumerate() {
                    self.use_expr(e, span);
                    self.int_expr(e, "parallel extent", span);
                    if self.const_int(e).is_none_or(|n| n <= 0) {
                        self.error(VerifyError::ParallelExtent { expr: e, span });
                    }
                    if let Some(var) = vars.get(i).and_then(|&v| self.f.vars.try_get(v)) {
                        self.typed_expr(e, var.dtype, "parallel extent", span);
                    }
                }
                let mark = self.undo.len();
                for (i, &v) in vars.iter().enumerate() {
                    self.bind_var(v, VarKind::Loop, span);
                    if let Some(flag) = self.var_parallel.get_mut(v.index()) {
                        *flag = true;
                    }
                    let extent = extents.get(i).and_then(|&e| self.const_int(e));
                    if let Some(slot) = self.var_extent.get_mut(v.index()) {
                        *slot = extent.filter(|&n| n > 0);
                    }
                }
                let outer_guards = self.guard_depth;
                if self.parallel_depth == 0 {
                    // Conditions outside the nest do not depend on its
                    // variables: they guard nothing the rule judges.
                    self.guard_depth = 0;
                }
                self.parallel_depth += 1;
                self.body(body);
                self.parallel_depth -= 1;
                self.guard_depth = outer_guards;
                self.close_scope(mark);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.use_expr(*cond, span);
                self.bool_expr(*cond, "if condition", span);
                self.guard_depth += 1;
                self.body(then);
                self.body(otherwise);
                self.guard_depth -= 1;
            }
            Stmt::Let { var, value } => {
                self.use_expr(*value, span);
                if let Some(v) = self.f.vars.try_get(*var) {
                    self.typed_expr(*value, v.dtype, "let value", span);
                }
                self.bind_var(*var, VarKind::Let, span);
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                self.data_buffer(*buffer, span);
                if let Some(b) = self.use_buffer(*buffer, span) {
                    if b.shape.len() != indices.len() {
                        self.error(VerifyError::IndexCount {
                            buffer: *buffer,
                            name: b.name.clone(),
                            rank: b.shape.len(),
                            found: indices.len(),
                            span,
                        });
                    }
                    self.typed_expr(*value, b.dtype, "stored value", span);
                    self.fragment_rule(*buffer, indices, span);
                    self.bounds_rule(*buffer, indices, span);
                }
                for &i in indices {
                    self.use_expr(i, span);
                    self.int_expr(i, "index", span);
                }
                self.use_expr(*value, span);
            }
            Stmt::WarpReduce {
                kind,
                buffer,
                indices,
                value,
            } => {
                self.data_buffer(*buffer, span);
                if let Some(b) = self.use_buffer(*buffer, span) {
                    if b.shape.len() != indices.len() {
                        self.error(VerifyError::IndexCount {
                            buffer: *buffer,
                            name: b.name.clone(),
                            rank: b.shape.len(),
                            found: indices.len(),
                            span,
                        });
                    }
                    let (name, dtype, scope) = (b.name.clone(), b.dtype, b.scope);
                    let reason = if !matches!(scope, Scope::Var | Scope::Local) {
                        Some(format!(
                            "the result buffer `%{name}` is {}, not a per-thread `var` or `local` buffer",
                            scope.name()
                        ))
                    } else if !matches!(
                        kind,
                        ReduceKind::Sum
                            | ReduceKind::Max
                            | ReduceKind::Min
                            | ReduceKind::BitAnd
                            | ReduceKind::BitOr
                    ) {
                        Some(format!("`{}` is not a warp reduction", kind.name()))
                    } else if kind.is_bitwise() && !dtype.is_int() {
                        Some(format!(
                            "bitwise `{}` of the {dtype} buffer `%{name}`",
                            kind.name()
                        ))
                    } else if !(dtype.is_int()
                        || matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64))
                    {
                        Some(format!("a warp reduction of {dtype} values"))
                    } else if self.var_parallel.iter().any(|&p| p) {
                        Some("inside a parallel nest".to_string())
                    } else {
                        None
                    };
                    if let Some(reason) = reason {
                        self.error(VerifyError::BadWarpReduce { reason, span });
                    }
                    self.typed_expr(*value, dtype, "reduced value", span);
                }
                for &i in indices {
                    self.use_expr(i, span);
                    self.int_expr(i, "index", span);
                }
                self.use_expr(*value, span);
            }
            Stmt::Copy { src, dst } => {
                let s = self.region(src, span);
                let d = self.region(dst, span);
                self.same_extents("copy", s, d, span);
            }
            Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                clear_accum,
                ..
            } => self.gemm([a, b, c], *transpose_a, *transpose_b, *clear_accum, span),
            Stmt::Fill { dst, value } => {
                self.region(dst, span);
                self.use_expr(*value, span);
                if let Some(b) = self.f.buffers.try_get(dst.buffer) {
                    self.typed_expr(*value, b.dtype, "fill value", span);
                }
            }
            Stmt::Reduce {
                kind,
                src,
                dst,
                dim,
                ..
            } => {
                if kind.is_bitwise() {
                    for b in [*src, *dst] {
                        if let Some(buf) = self.f.buffers.try_get(b)
                            && !buf.dtype.is_int()
                        {
                            self.error(VerifyError::BitwiseReduceType {
                                kind: kind.name(),
                                name: buf.name.clone(),
                                dtype: buf.dtype,
                                span,
                            });
                        }
                    }
                }
                self.reduce("reduce", *src, *dst, *dim, span)
            }
            Stmt::Cumsum { src, dst, dim, .. } => self.reduce("cumsum", *src, *dst, *dim, span),
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                let d = self.region(dst, span);
                match value {
                    AtomicValue::Scalar(e) => self.use_expr(*e, span),
                    AtomicValue::Region(r) => {
                        let s = self.region(r, span);
                        self.same_extents("atomic_add", s, d, span);
                    }
                }
            }
            // Inside a role, a barrier synchronises the role's threads.
            Stmt::Barrier => {}
            Stmt::Assume { cond } => {
                self.use_expr(*cond, span);
                self.bool_expr(*cond, "assume condition", span);
            }
            Stmt::DeviceAssert { cond } => {
                self.use_expr(*cond, span);
                self.bool_expr(*cond, "assertion", span);
            }
            Stmt::AllocBarrier { buffer, counts } => self.alloc_barrier(*buffer, counts, span),
            Stmt::Role { groups, body } => {
                self.role_groups(groups, span);
                if self.parallel_depth > 0 || self.role.is_some() {
                    self.error(VerifyError::BadRole {
                        reason: "a role inside a `parallel` nest or another role".into(),
                        span,
                    });
                }
                let outer = self.role.replace(groups.clone());
                self.body(body);
                self.role = outer;
            }
            Stmt::BarrierArrive { barrier, index } => self.barrier_use(*barrier, *index, span),
            Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => {
                self.barrier_use(*barrier, *index, span);
                self.use_expr(*parity, span);
                self.int_expr(*parity, "barrier parity", span);
            }
        }
    }

    /// `alloc_barrier`: a 1-D `u64` barrier buffer of one element per
    /// count, every count positive, in a kernel outside roles and
    /// `parallel` nests.
    fn alloc_barrier(&mut self, buffer: Handle<Buffer>, counts: &[u32], span: Span) {
        if let Some(b) = self.f.buffers.try_get(buffer) {
            let name = &b.name;
            let extent = match b.shape.as_slice() {
                [e] => self.const_int(*e),
                _ => None,
            };
            let problem = if b.scope != Scope::Barrier {
                Some(format!(
                    "`alloc_barrier` of `%{name}`, a {} buffer",
                    b.scope.name()
                ))
            } else if b.dtype != DType::U64 {
                Some(format!(
                    "barrier buffer `%{name}` of type {} (must be u64)",
                    b.dtype
                ))
            } else if extent != Some(counts.len() as i64) || counts.is_empty() {
                Some(format!(
                    "barrier buffer `%{name}` must have one dimension of {} barriers, one per count",
                    counts.len()
                ))
            } else if counts.contains(&0) {
                Some(format!(
                    "barrier buffer `%{name}` with an arrival count of 0"
                ))
            } else if !self.in_kernel || self.role.is_some() || self.parallel_depth > 0 {
                Some(format!(
                    "barrier buffer `%{name}` allocated outside a kernel body, or inside a role or `parallel` nest"
                ))
            } else {
                None
            };
            if let Some(reason) = problem {
                self.error(VerifyError::BadBarrier { reason, span });
            }
        }
        self.declare_buffer(buffer, span);
    }

    /// A role's warp groups: sorted, distinct, inside the kernel's threads,
    /// and equal to or disjoint from every other role's in the kernel.
    fn role_groups(&mut self, groups: &[u32], span: Span) {
        let reason = if !self.in_kernel {
            Some("a role outside a kernel".to_string())
        } else if groups.is_empty() || groups.windows(2).any(|w| w[0] >= w[1]) {
            Some("role warp groups must be sorted and distinct, at least one".to_string())
        } else if let Some(&g) = groups
            .iter()
            .find(|&&g| u64::from(g) * 128 >= u64::from(self.kernel_threads))
        {
            Some(format!(
                "warp group {g} (threads {} ..) is outside the kernel's {} threads",
                u64::from(g) * 128,
                self.kernel_threads
            ))
        } else {
            self.kernel_roles
                .iter()
                .find(|r| r.as_slice() != groups && r.iter().any(|g| groups.contains(g)))
                .map(|other| {
                    format!(
                        "roles of warp groups {groups:?} and {other:?} overlap without being equal"
                    )
                })
        };
        if let Some(reason) = reason {
            self.error(VerifyError::BadRole { reason, span });
        } else if !self.kernel_roles.iter().any(|r| r.as_slice() == groups) {
            self.kernel_roles.push(groups.to_vec());
        }
    }

    /// `arrive`/`wait`: a barrier buffer and an integer index, outside
    /// `parallel` nests.
    fn barrier_use(&mut self, barrier: Handle<Buffer>, index: Handle<Expr>, span: Span) {
        if let Some(b) = self.use_buffer(barrier, span)
            && b.scope != Scope::Barrier
        {
            self.error(VerifyError::BadBarrier {
                reason: format!(
                    "`%{}` is a {} buffer, not a barrier",
                    b.name,
                    b.scope.name()
                ),
                span,
            });
        }
        if self.parallel_depth > 0 {
            self.error(VerifyError::BadBarrier {
                reason: "a barrier arrival or wait inside a `parallel` nest".into(),
                span,
            });
        }
        self.use_expr(index, span);
        self.int_expr(index, "barrier index", span);
    }

    /// Barrier buffers hold no data: no loads, stores or tile-op regions.
    fn data_buffer(&mut self, b: Handle<Buffer>, span: Span) {
        if let Some(buf) = self.f.buffers.try_get(b)
            && buf.scope == Scope::Barrier
        {
            self.error(VerifyError::BadBarrier {
                reason: format!("barrier buffer `%{}` read or written as data", buf.name),
                span,
            });
        }
    }

    /// Checks a region; returns its extents (constant ones as `Some`) when
    /// the buffer handle is valid.
    fn region(&mut self, r: &Region, span: Span) -> Option<Vec<Option<i64>>> {
        self.data_buffer(r.buffer, span);
        let buffer = self.use_buffer(r.buffer, span);
        for range in &r.ranges {
            self.use_expr(range.start, span);
            self.use_expr(range.extent, span);
            self.int_expr(range.start, "region start", span);
            self.int_expr(range.extent, "region extent", span);
        }
        let buffer = buffer?;
        if r.ranges.is_empty() {
            self.error(VerifyError::EmptyRegion {
                buffer: r.buffer,
                name: buffer.name.clone(),
                span,
            });
        }
        if r.ranges.len() != buffer.shape.len() {
            self.error(VerifyError::RegionRank {
                buffer: r.buffer,
                name: buffer.name.clone(),
                rank: buffer.shape.len(),
                found: r.ranges.len(),
                span,
            });
        }
        Some(
            r.ranges
                .iter()
                .map(|range| self.const_int(range.extent))
                .collect(),
        )
    }

    fn same_extents(
        &mut self,
        op: &'static str,
        src: Option<Vec<Option<i64>>>,
        dst: Option<Vec<Option<i64>>>,
        span: Span,
    ) {
        let (Some(src), Some(dst)) = (src, dst) else {
            return;
        };
        if let (Some(s), Some(d)) = (squeeze(&src), squeeze(&dst))
            && s != d
        {
            self.error(VerifyError::ShapeMismatch {
                op,
                src: s,
                dst: d,
                span,
            });
        }
    }

    fn gemm(
        &mut self,
        regions: [&Region; 3],
        transpose_a: bool,
        transpose_b: bool,
        clear_accum: Handle<Expr>,
        span: Span,
    ) {
        self.use_expr(clear_accum, span);
        self.bool_expr(clear_accum, "gemm clear flag", span);
        let mut dims = [None; 3];
        for (i, (r, operand)) in regions.into_iter().zip(["A", "B", "C"]).enumerate() {
            let extents = self.region(r, span);
            let Some(buffer) = self.f.buffers.try_get(r.buffer) else {
                continue;
            };
            let (ok, expected) = if operand == "C" {
                (
                    matches!(buffer.scope, Scope::Fragment | Scope::Local),
                    "fragment or local",
                )
            } else {
                (
                    matches!(buffer.scope, Scope::Shared | Scope::Fragment),
                    "shared or fragment",
                )
            };
            if !ok {
                self.error(VerifyError::GemmScope {
                    operand,
                    buffer: r.buffer,
                    name: buffer.name.clone(),
                    scope: buffer.scope,
                    expected,
                    span,
                });
            }
            let Some(mut extents) = extents else {
                continue;
            };
            // Drop unit dimensions (leading ones first) down to two.
            while extents.len() > 2 {
                match extents.iter().position(|&e| e == Some(1)) {
                    Some(unit) => {
                        extents.remove(unit);
                    }
                    None => break,
                }
            }
            if extents.len() != 2 {
                self.error(VerifyError::GemmRank {
                    operand,
                    name: buffer.name.clone(),
                    rank: extents.iter().filter(|&&e| e != Some(1)).count(),
                    span,
                });
                continue;
            }
            dims[i] = Some([extents[0], extents[1]]);
        }
        let [Some(a), Some(b), Some(c)] = dims else {
            return;
        };
        let (m, k_a) = if transpose_a {
            (a[1], a[0])
        } else {
            (a[0], a[1])
        };
        let (k_b, n) = if transpose_b {
            (b[1], b[0])
        } else {
            (b[0], b[1])
        };
        let differ =
            |x: Option<i64>, y: Option<i64>| matches!((x, y), (Some(x), Some(y)) if x != y);
        if differ(m, c[0]) || differ(n, c[1]) || differ(k_a, k_b) {
            self.error(VerifyError::GemmShape {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                span,
            });
        }
    }

    /// `reduce` (destination = source without `dim`) and `cumsum`
    /// (destination = source).
    fn reduce(
        &mut self,
        op: &'static str,
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        dim: u32,
        span: Span,
    ) {
        let s = self.use_buffer(src, span);
        let d = self.use_buffer(dst, span);
        let (Some(s), Some(d)) = (s, d) else {
            return;
        };
        let rank = s.shape.len();
        if dim as usize >= rank {
            self.error(VerifyError::DimOutOfRange {
                op,
                dim,
                rank,
                span,
            });
            return;
        }
        let src_extents: Vec<Option<i64>> = s.shape.iter().map(|&e| self.const_int(e)).collect();
        let expected: Vec<Option<i64>> = if op == "cumsum" {
            src_extents
        } else if rank == 1 {
            vec![Some(1)]
        } else {
            let mut v = src_extents;
            v.remove(dim as usize);
            v
        };
        let found: Vec<Option<i64>> = d.shape.iter().map(|&e| self.const_int(e)).collect();
        let agree = expected.len() == found.len()
            && expected
                .iter()
                .zip(&found)
                .all(|(x, y)| !matches!((x, y), (Some(x), Some(y)) if x != y));
        if !agree {
            self.error(VerifyError::ReduceShape {
                op,
                src,
                src_name: s.name.clone(),
                dst,
                dst_name: d.name.clone(),
                span,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinaryOp, UnaryOp};
    use crate::text::parse_module;

    /// Parses a one-function module whose kernel body is `body`, with
    /// parameters `%A: global f32[16]`, `%I: global i32[16]` and symbol `%n`.
    fn kernel(body: &str) -> Function {
        function(&format!(
            "func @f(%A: global f32[16], %I: global i32[16], %N: global f32[%n]) symbols(%n) {{\n  kernel grid(1) threads(32) block(%bx) thread(%tx) {{\n{body}\n  }}\n}}\n"
        ))
    }

    fn function(text: &str) -> Function {
        let src = format!("tile_ir 0.1\n\n{text}");
        let mut m = parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        m.functions.remove(0)
    }

    fn errors(f: &Function) -> Vec<VerifyError> {
        verify_function(f).err().unwrap_or_default()
    }

    /// Asserts that verification fails and that some error matches.
    macro_rules! assert_error {
        ($f:expr, $pattern:pat $(if $guard:expr)?) => {{
            let errs = errors(&$f);
            assert!(
                errs.iter().any(|e| matches!(e, $pattern $(if $guard)?)),
                "expected {}, got {errs:#?}",
                stringify!($pattern)
            );
        }};
    }

    /// The statements of the (first) kernel's body.
    fn kernel_body(f: &mut Function) -> &mut Block {
        match f.body.stmts.first_mut() {
            Some(Stmt::Kernel { body, .. }) => body,
            _ => panic!("no kernel"),
        }
    }

    fn find_expr(f: &Function, pred: impl Fn(&Expr) -> bool) -> Handle<Expr> {
        f.exprs
            .iter()
            .find(|(_, e)| pred(e))
            .map(|(h, _)| h)
            .expect("expression present")
    }

    #[test]
    fn well_formed_function_passes() {
        let f = kernel(
            "    alloc %s: shared f32[16]\n    alloc %r: fragment f32[16, 1]\n    copy %A[0 +: 16] -> %s[0 +: 16]\n    parallel (%i < 16) {\n      %r[%i, 0] = %s[%i] * f32(2.0)\n    }\n    let %v: f32 = %r[0, 0]",
        );
        assert_eq!(verify_function(&f), Ok(()));
    }

    #[test]
    fn dangling_handle() {
        let mut f = kernel("    %A[0] = f32(1.0)");
        if let Some(Stmt::Store { buffer, .. }) = kernel_body(&mut f).stmts.first_mut() {
            *buffer = Handle::from_index(99);
        }
        assert_error!(
            f,
            VerifyError::DanglingHandle {
                handle: HandleRef::Buffer(_),
                ..
            }
        );
    }

    #[test]
    fn expr_types_length() {
        let mut f = kernel("    barrier");
        f.expr_types.pop();
        assert_error!(f, VerifyError::ExprTypesLength { .. });
    }

    #[test]
    fn buffer_spans_length() {
        let mut f = kernel("    barrier");
        f.buffer_spans.pop();
        assert_error!(f, VerifyError::BufferSpansLength { .. });
    }

    #[test]
    fn block_spans_length() {
        let mut f = kernel("    barrier");
        kernel_body(&mut f).spans.clear();
        assert_error!(
            f,
            VerifyError::BlockSpansLength {
                stmts: 1,
                spans: 0,
                ..
            }
        );
    }

    #[test]
    fn operand_order() {
        let mut f = kernel("    %I[0] = -%tx\n    %I[1] = 5");
        let neg = find_expr(&f, |e| matches!(e, Expr::Unary { .. }));
        let later = Handle::from_index(f.exprs.len() - 1);
        f.exprs[neg] = Expr::Unary {
            op: UnaryOp::Neg,
            arg: later,
        };
        assert_error!(f, VerifyError::OperandOrder { .. });
    }

    #[test]
    fn ill_typed_expression() {
        let mut f = kernel("    %A[0] = %A[1] + %A[2]\n    %I[0] = %tx");
        let add = find_expr(&f, |e| matches!(e, Expr::Binary { .. }));
        let tx = find_expr(&f, |e| matches!(e, Expr::Var(_)));
        if let Expr::Binary { rhs, .. } = &mut f.exprs[add] {
            *rhs = tx;
        }
        assert_error!(
            f,
            VerifyError::IllTyped {
                error: TypeError::Mismatch { .. },
                ..
            }
        );
    }

    #[test]
    fn recorded_type_mismatch() {
        let mut f = kernel("    %I[0] = %tx + 1");
        let add = find_expr(&f, |e| matches!(e, Expr::Binary { .. }));
        f.expr_types[add.index()] = DType::I64;
        assert_error!(
            f,
            VerifyError::TypeMismatch {
                recorded: DType::I64,
                inferred: DType::I32,
                ..
            }
        );
    }

    #[test]
    fn non_canonical_literal() {
        let mut f = kernel("    %I[0] = cast<i32>(u8(200))");
        let lit = find_expr(&f, |e| matches!(e, Expr::Literal(Literal::Int(200, _))));
        f.exprs[lit] = Expr::Literal(Literal::Int(300, DType::U8));
        assert_error!(f, VerifyError::BadLiteral { .. });
        let mut g = kernel("    %A[0] = f32(0.5)");
        let lit = find_expr(&g, |e| matches!(e, Expr::Literal(Literal::Float(..))));
        g.exprs[lit] = Expr::Literal(Literal::Float(0.1, DType::F32));
        assert_error!(g, VerifyError::BadLiteral { .. });
    }

    #[test]
    fn duplicate_name() {
        let mut f = kernel("    let %x: i32 = 1");
        let x = f
            .vars
            .iter()
            .find(|(_, v)| v.name == "x")
            .map(|(h, _)| h)
            .expect("x");
        f.vars[x].name = "A".into();
        assert_error!(f, VerifyError::DuplicateName { name, .. } if name == "A");
    }

    #[test]
    fn unbound_var() {
        let mut f = kernel("    let %x: i32 = 1\n    %I[0] = %x");
        kernel_body(&mut f).stmts.swap(0, 1);
        assert_error!(f, VerifyError::UnboundVar { name, .. } if name == "x");
    }

    #[test]
    fn rebound_var() {
        let mut f = kernel(
            "    for %i in serial(0, 2) {\n      barrier\n    }\n    for %j in serial(0, 2) {\n      barrier\n    }",
        );
        let body = kernel_body(&mut f);
        let first = match &body.stmts[0] {
            Stmt::For { var, .. } => *var,
            _ => panic!("for"),
        };
        if let Stmt::For { var, .. } = &mut body.stmts[1] {
            *var = first;
        }
        assert_error!(f, VerifyError::ReboundVar { name, .. } if name == "i");
    }

    #[test]
    fn var_kind_mismatch() {
        let mut f = kernel("    let %x: i32 = 1");
        let x = f.vars.iter().find(|(_, v)| v.name == "x").map(|(h, _)| h);
        f.vars[x.expect("x")].kind = VarKind::Loop;
        assert_error!(
            f,
            VerifyError::VarKindMismatch {
                expected: VarKind::Let,
                found: VarKind::Loop,
                ..
            }
        );
    }

    #[test]
    fn non_integer_loop_var() {
        let f = kernel("    for %k: f32 in serial(f32(0.0), f32(4.0)) {\n    }");
        assert_error!(
            f,
            VerifyError::NonIntegerVar {
                dtype: DType::F32,
                ..
            }
        );
    }

    #[test]
    fn undeclared_buffer() {
        let mut f = kernel("    alloc %s: shared f32[4]\n    %s[0] = f32(1.0)");
        kernel_body(&mut f).stmts.swap(0, 1);
        assert_error!(f, VerifyError::UndeclaredBuffer { name, .. } if name == "s");
    }

    #[test]
    fn redeclared_buffer() {
        let mut f = kernel("    alloc %s: shared f32[4]");
        let body = kernel_body(&mut f);
        let alloc = body.stmts[0].clone();
        body.push(alloc, Span::UNKNOWN);
        assert_error!(f, VerifyError::RedeclaredBuffer { name, .. } if name == "s");
    }

    #[test]
    fn param_must_be_global() {
        let f = function("func @f(%A: shared f32[4]) {\n}\n");
        assert_error!(
            f,
            VerifyError::ParamScope {
                scope: Scope::Shared,
                ..
            }
        );
    }

    #[test]
    fn out_idx_in_range() {
        let f = function("func @f(%A: global f32[4]) attrs(out_idx=[1]) {\n}\n");
        assert_error!(f, VerifyError::OutIdx { index: 1 });
    }

    #[test]
    fn kernels_only_at_top_level() {
        let f = kernel("    kernel grid(1) threads(1) block(%b) thread(%t) {\n    }");
        assert_error!(f, VerifyError::NestedKernel { .. });
    }

    #[test]
    fn tile_ops_only_inside_kernels() {
        let f = function(
            "func @f(%A: global f32[4], %B: global f32[4]) {\n  copy %A[0 +: 4] -> %B[0 +: 4]\n  barrier\n}\n",
        );
        assert_error!(f, VerifyError::OutsideKernel { stmt: "copy", .. });
        assert_error!(
            f,
            VerifyError::OutsideKernel {
                stmt: "barrier",
                ..
            }
        );
    }

    #[test]
    fn global_alloc_only_outside_kernels() {
        let f = kernel("    alloc %g: global f32[4]");
        assert_error!(f, VerifyError::GlobalAllocInKernel { name, .. } if name == "g");
        let ok = function("func @f() {\n  alloc %g: global f32[4]\n}\n");
        assert_eq!(verify_function(&ok), Ok(()));
    }

    #[test]
    fn non_global_alloc_only_inside_kernels() {
        let f = function("func @f() {\n  alloc %s: shared f32[4]\n}\n");
        assert_error!(
            f,
            VerifyError::AllocOutsideKernel {
                scope: Scope::Shared,
                ..
            }
        );
    }

    #[test]
    fn only_var_buffers_have_initializers() {
        let f = kernel("    alloc %s: shared f32[4] = f32(0.0)");
        assert_error!(
            f,
            VerifyError::AllocInit {
                scope: Scope::Shared,
                ..
            }
        );
        let g = kernel("    alloc %v: var f32[1] = 0");
        assert_error!(
            g,
            VerifyError::WrongType {
                what: "alloc initializer",
                ..
            }
        );
    }

    #[test]
    fn kernel_grid_matches_block_vars() {
        let f = function(
            "func @f() {\n  kernel grid(1, 2) threads(1) block(%b) thread(%t) {\n  }\n}\n",
        );
        assert_error!(
            f,
            VerifyError::KernelGrid {
                grid: 2,
                block_vars: 1,
                ..
            }
        );
        let g = function(
            "func @f() {\n  kernel grid(1, 1, 1, 1) threads(1) block(%a, %b, %c, %d) thread(%t) {\n  }\n}\n",
        );
        assert_error!(g, VerifyError::KernelGrid { grid: 4, .. });
    }

    #[test]
    fn kernel_has_threads() {
        let f =
            function("func @f() {\n  kernel grid(1) threads(0) block(%b) thread(%t) {\n  }\n}\n");
        assert_error!(f, VerifyError::KernelThreads { .. });
    }

    #[test]
    fn region_bounds_are_integers() {
        let f =
            kernel("    alloc %s: shared f32[16]\n    copy %A[0 +: 16] -> %s[cast<u8>(0) +: 16]");
        assert!(verify_function(&f).is_ok());
        let g = kernel("    alloc %s: shared f32[16]\n    copy %A[0 +: 16] -> %s[true +: 16]");
        assert_error!(
            g,
            VerifyError::NotInteger {
                what: "region start",
                found: DType::Bool,
                ..
            }
        );
    }

    #[test]
    fn conditions_are_bool() {
        let f = kernel("    if %tx {\n    }\n    assume 1");
        assert_error!(
            f,
            VerifyError::NotBool {
                what: "if condition",
                ..
            }
        );
        assert_error!(
            f,
            VerifyError::NotBool {
                what: "assume condition",
                ..
            }
        );
    }

    #[test]
    fn store_value_has_buffer_type() {
        let f = kernel("    %A[0] = 1");
        assert_error!(
            f,
            VerifyError::WrongType {
                what: "stored value",
                expected: DType::F32,
                found: DType::I32,
                ..
            }
        );
    }

    #[test]
    fn fill_value_has_buffer_type() {
        let f = kernel("    fill %A[0 +: 16], 0");
        assert_error!(
            f,
            VerifyError::WrongType {
                what: "fill value",
                ..
            }
        );
    }

    #[test]
    fn let_value_has_var_type() {
        let mut f = kernel("    let %x: i32 = 1");
        let x = f.vars.iter().find(|(_, v)| v.name == "x").map(|(h, _)| h);
        f.vars[x.expect("x")].dtype = DType::I64;
        assert_error!(
            f,
            VerifyError::WrongType {
                what: "let value",
                ..
            }
        );
    }

    #[test]
    fn loop_bounds_have_var_type() {
        let f = kernel("    for %k: i64 in serial(0, i64(4)) {\n    }");
        assert_error!(
            f,
            VerifyError::WrongType {
                what: "loop start",
                ..
            }
        );
    }

    #[test]
    fn store_index_count() {
        let f = kernel("    %A[0, 1] = f32(0.0)");
        assert_error!(
            f,
            VerifyError::IndexCount {
                rank: 1,
                found: 2,
                ..
            }
        );
    }

    #[test]
    fn region_rank() {
        let f = kernel("    fill %A[0 +: 4, 0 +: 4], f32(0.0)");
        assert_error!(
            f,
            VerifyError::RegionRank {
                rank: 1,
                found: 2,
                ..
            }
        );
    }

    #[test]
    fn empty_region() {
        let f = kernel("    fill %A[], f32(0.0)");
        assert_error!(f, VerifyError::EmptyRegion { .. });
    }

    #[test]
    fn copy_extents_agree() {
        let f = kernel("    alloc %s: shared f32[4, 4]\n    copy %A[0 +: 8] -> %s[0 +: 1, 0 +: 4]");
        assert_error!(f, VerifyError::ShapeMismatch { op: "copy", .. });
        // Unit dimensions are dropped; symbolic extents are not compared.
        let ok = kernel(
            "    alloc %s: shared f32[4, 4]\n    copy %A[0 +: 4] -> %s[1 +: 1, 0 +: 4]\n    copy %N[0 +: %n] -> %s[0 +: 1, 0 +: 4]",
        );
        assert_eq!(verify_function(&ok), Ok(()));
        let g = kernel("    alloc %f: fragment f32[4]\n    atomic_add %A[0 +: 8], %f[0 +: 4]");
        assert_error!(
            g,
            VerifyError::ShapeMismatch {
                op: "atomic_add",
                ..
            }
        );
    }

    #[test]
    fn gemm_operands_are_two_dimensional() {
        let f = kernel(
            "    alloc %a: shared f16[2, 16, 16]\n    alloc %b: shared f16[16, 16]\n    alloc %c: fragment f32[16, 16]\n    gemm %a[0 +: 2, 0 +: 16, 0 +: 16], %b[0 +: 16, 0 +: 16], %c[0 +: 16, 0 +: 16], policy=square, clear=true",
        );
        assert_error!(
            f,
            VerifyError::GemmRank {
                operand: "A",
                rank: 3,
                ..
            }
        );
    }

    #[test]
    fn gemm_shapes_agree() {
        let gemm = |flags: &str| {
            kernel(&format!(
                "    alloc %a: shared f16[32, 16]\n    alloc %b: shared f16[64, 16]\n    alloc %c: fragment f32[32, 64]\n    gemm %a[0 +: 32, 0 +: 16], %b[0 +: 64, 0 +: 16], %c[0 +: 32, 0 +: 64], {flags}policy=square, clear=true"
            ))
        };
        assert_error!(gemm(""), VerifyError::GemmShape { .. });
        assert_eq!(verify_function(&gemm("transpose_b, ")), Ok(()));
        assert_error!(
            gemm("transpose_a, transpose_b, "),
            VerifyError::GemmShape { .. }
        );
    }

    #[test]
    fn gemm_operand_scopes() {
        let f = kernel(
            "    alloc %b: shared f32[16, 16]\n    alloc %c: shared f32[16, 16]\n    gemm %A[0 +: 16, 0 +: 1], %b[0 +: 16, 0 +: 16], %c[0 +: 16, 0 +: 16], policy=square, clear=true",
        );
        assert_error!(
            f,
            VerifyError::GemmScope {
                operand: "A",
                scope: Scope::Global,
                ..
            }
        );
        assert_error!(
            f,
            VerifyError::GemmScope {
                operand: "C",
                scope: Scope::Shared,
                ..
            }
        );
    }

    #[test]
    fn gemm_clear_flag_is_bool() {
        let f = kernel(
            "    alloc %a: shared f16[16, 16]\n    alloc %c: fragment f32[16, 16]\n    gemm %a[0 +: 16, 0 +: 16], %a[0 +: 16, 0 +: 16], %c[0 +: 16, 0 +: 16], policy=square, clear=1",
        );
        assert_error!(
            f,
            VerifyError::NotBool {
                what: "gemm clear flag",
                ..
            }
        );
    }

    #[test]
    fn reduce_dim_in_range() {
        let f = kernel(
            "    alloc %s: fragment f32[4, 8]\n    alloc %d: fragment f32[4]\n    reduce sum %s -> %d, dim=2, clear=true\n    cumsum %s -> %s, dim=5, reverse=false",
        );
        assert_error!(
            f,
            VerifyError::DimOutOfRange {
                op: "reduce",
                dim: 2,
                rank: 2,
                ..
            }
        );
        assert_error!(f, VerifyError::DimOutOfRange { op: "cumsum", .. });
    }

    #[test]
    fn reduce_and_cumsum_shapes() {
        let ok = kernel(
            "    alloc %s: fragment f32[4, 8]\n    alloc %d: fragment f32[8]\n    alloc %one: fragment f32[1]\n    alloc %v: fragment f32[8]\n    reduce max %s -> %d, dim=0, clear=true\n    reduce sum %v -> %one, dim=0, clear=true",
        );
        assert_eq!(verify_function(&ok), Ok(()));
        let f = kernel(
            "    alloc %s: fragment f32[4, 8]\n    alloc %d: fragment f32[8]\n    reduce max %s -> %d, dim=1, clear=true\n    cumsum %s -> %d, dim=0, reverse=false",
        );
        assert_error!(f, VerifyError::ReduceShape { op: "reduce", .. });
        assert_error!(f, VerifyError::ReduceShape { op: "cumsum", .. });
    }

    #[test]
    fn bitwise_reduce_of_integers_only() {
        let ok = kernel(
            "    alloc %s: fragment i32[4, 8]\n    alloc %d: fragment i32[4]\n    reduce bitand %s -> %d, dim=1, clear=true\n    reduce bitxor %s -> %d, dim=1, clear=false",
        );
        assert_eq!(verify_function(&ok), Ok(()));
        let f = kernel(
            "    alloc %s: fragment f32[4, 8]\n    alloc %d: fragment f32[4]\n    reduce bitor %s -> %d, dim=1, clear=true",
        );
        assert_error!(
            f,
            VerifyError::BitwiseReduceType {
                kind: "bitor",
                dtype: DType::F32,
                ..
            }
        );
    }

    #[test]
    fn parallel_arity() {
        let mut f = kernel("    parallel (%i < 4, %j < 4) {\n    }");
        if let Some(Stmt::Parallel { vars, .. }) = kernel_body(&mut f).stmts.first_mut() {
            vars.pop();
        }
        assert_error!(
            f,
            VerifyError::ParallelArity {
                vars: 1,
                extents: 2,
                ..
            }
        );
    }

    #[test]
    fn parallel_extents_are_positive_constants() {
        let f = kernel("    parallel (%i < %n, %j < 0) {\n    }");
        let count = errors(&f)
            .iter()
            .filter(|e| matches!(e, VerifyError::ParallelExtent { .. }))
            .count();
        assert_eq!(count, 2);
    }

    #[test]
    fn fragment_rule() {
        let ok = kernel(
            "    alloc %f: fragment f32[16, 1]\n    alloc %g: fragment f32[16, 16]\n    parallel (%i < 16) {\n      for %k in serial(0, 16) {\n        %f[%i, 0] = %g[(%i + %k) % 16, %i // 2 * 0 + %k * 0 + %i]\n      }\n    }",
        );
        assert_eq!(verify_function(&ok), Ok(()));
        let serial_index = kernel(
            "    alloc %g: fragment f32[16, 16]\n    parallel (%i < 16) {\n      for %k in serial(0, 16) {\n        %g[%i, %k] = f32(0.0)\n      }\n    }",
        );
        assert_error!(serial_index, VerifyError::FragmentIndex { dim: 1, .. });
        // Loads may read any element.
        let serial_load = kernel(
            "    alloc %g: fragment f32[16, 16]\n    parallel (%i < 16) {\n      for %k in serial(0, 16) {\n        %A[%i] = %g[%i, %k] + %g[0, 3]\n      }\n    }",
        );
        assert_eq!(verify_function(&serial_load), Ok(()));
        let zero_on_wide_dim = kernel(
            "    alloc %g: fragment f32[16, 16]\n    parallel (%i < 16) {\n      %g[%i, 0] = f32(0.0)\n    }",
        );
        assert_error!(zero_on_wide_dim, VerifyError::FragmentIndex { dim: 1, .. });
        // Outside parallel loops the rule does not apply.
        let outside = kernel("    alloc %g: fragment f32[16, 16]\n    %A[0] = %g[0, 3]");
        assert_eq!(verify_function(&outside), Ok(()));
    }

    #[test]
    fn on_chip_bounds_rule() {
        let past_end = kernel(
            "    alloc %g: fragment f32[16]\n    parallel (%i < 32) {\n      %g[%i] = f32(0.0)\n    }",
        );
        assert_error!(
            past_end,
            VerifyError::IndexOutOfBounds {
                lo: 0,
                hi: 31,
                extent: 16,
                ..
            }
        );
        let below_zero = kernel(
            "    alloc %l: local f32[16]\n    parallel (%i < 16) {\n      %A[%i] = %l[%i - 1]\n    }",
        );
        assert_error!(below_zero, VerifyError::IndexOutOfBounds { lo: -1, .. });
        // Shared memory is left to the interpreter and `tilec verify`.
        let shared = kernel(
            "    alloc %s: shared f32[16]\n    parallel (%i < 16) {\n      %A[%i] = %s[%i + 1]\n    }",
        );
        assert_eq!(verify_function(&shared), Ok(()));
        // Inside: remainders, quotients, and the extent exactly.
        let inside = kernel(
            "    alloc %s: fragment f32[16]\n    parallel (%i < 64) {\n      %A[%i] = %s[%i % 16] + %s[%i // 4] + %s[15 - %i // 4]\n    }",
        );
        assert_eq!(verify_function(&inside), Ok(()));
        // Guarded by an `if` or a `select` arm: not judged.
        let guarded = kernel(
            "    alloc %g: fragment f32[16]\n    parallel (%i < 32) {\n      if %i < 16 {\n        %g[%i] = f32(0.0)\n      }\n      %A[%i] = select(%i < 16, %g[%i], f32(0.0))\n    }",
        );
        assert_eq!(verify_function(&guarded), Ok(()));
        // Global buffers are not judged (their shape may be a view).
        let global = kernel("    parallel (%i < 32) {\n      %A[%i + 100] = f32(0.0)\n    }");
        assert_eq!(verify_function(&global), Ok(()));
    }

    #[test]
    fn pipeline_annotations_match_body() {
        let f = kernel(
            "    for %k in pipelined(0, 4, stages=2, order=[0, 1], stage=[0]) {\n      barrier\n      barrier\n    }",
        );
        assert_error!(
            f,
            VerifyError::PipelineAnnotation {
                which: "stage",
                found: 1,
                expected: 2,
                ..
            }
        );
        assert!(
            !errors(&f)
                .iter()
                .any(|e| matches!(e, VerifyError::PipelineAnnotation { which: "order", .. }))
        );
    }

    #[test]
    fn duplicate_function_names() {
        let m = parse_module("tile_ir 0.1\n\nfunc @f() {\n}\n\nfunc @f() {\n}\n").expect("parses");
        let errs = verify_module(&m).expect_err("duplicate");
        assert!(
            matches!(&errs[..], [(name, VerifyError::DuplicateFunction { .. })] if name == "f")
        );
    }

    #[test]
    fn shared_subexpressions_are_checked_per_use() {
        // One expression used before and after the scope of its variable.
        let mut f =
            kernel("    for %i in serial(0, 4) {\n      %I[%i] = %i * 2\n    }\n    %I[0] = 1");
        let product = find_expr(&f, |e| {
            matches!(
                e,
                Expr::Binary {
                    op: BinaryOp::Mul,
                    ..
                }
            )
        });
        if let Some(Stmt::Store { value, .. }) = kernel_body(&mut f).stmts.last_mut() {
            *value = product;
        }
        assert_error!(f, VerifyError::UnboundVar { name, .. } if name == "i");
    }

    #[test]
    fn errors_carry_statement_spans() {
        let f = kernel("    %A[0] = 1");
        let errs = errors(&f);
        let span = errs.first().map(VerifyError::span).expect("an error");
        assert!(!span.is_unknown());
    }
}
