//! Tile IR: the program representation every part of tilec shares.
//!
//! # Shape
//! A [`Module`] holds [`Function`]s. A function owns four arenas — scalar
//! variables ([`Var`]), buffers ([`Buffer`]), expressions ([`Expr`]) — and a
//! body, a [`Block`] of [`Stmt`]s. Nodes refer to each other through
//! [`Handle`]s into those arenas.
//!
//! # Evaluation order
//! Statements carry every side effect and run in order. Expressions are pure
//! except for reading memory ([`Expr::Load`]); they form a DAG and may be
//! shared. A load observes every store made by earlier statements. Reordering
//! passes therefore only need to reason about statement order.
//!
//! # Memory scopes
//! - `global`: function parameters (and `T.empty` outputs), device memory.
//! - `shared`: one copy per thread block, visible to all its threads.
//! - `fragment`: a block-wide logical tile whose elements are distributed over
//!   the block's threads by a layout inferred later; at tile level it is read
//!   and written whole by tile ops, or element-wise inside `parallel` loops.
//! - `local`: a small per-thread array.
//! - `var`: a per-thread scalar (a `local` buffer of shape `[1]`).
//!
//! # Levels
//! The front end produces *tile level* IR: tile ops (`copy`, `gemm`, `fill`,
//! `reduce`, `atomic_add`) on buffer regions, inside `kernel` scopes. At tile
//! level the code of a kernel scope outside `parallel` loops describes what
//! the block does as a whole; `parallel` loops are element-wise nests whose
//! iterations are later mapped onto threads.
//!
//! # Out-of-bounds rule
//! Tilec follows TileLang: an element of a *global* buffer read outside the
//! buffer reads as zero and an element written outside is skipped, whether
//! the access is a scalar load/store or part of a tile op's region. Tile ops
//! treat region elements outside on-chip buffers the same way. A scalar load
//! or store outside a shared, fragment, local or var buffer is an error (the
//! interpreter reports it with the statement's span).
//!
//! # Invariants
//! Checked by [`verify::verify_function`]: see that module.

mod arena;
mod dtype;
pub mod lists;
pub mod per_thread;
pub mod verify;
pub mod visit;

pub use arena::{Arena, Handle};
pub use dtype::{DType, DTypeKind};

use std::collections::BTreeMap;

/// A byte range in the source file a node came from. `0..0` is "unknown".
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const UNKNOWN: Span = Span { start: 0, end: 0 };

    pub fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }

    pub fn is_unknown(self) -> bool {
        self == Span::UNKNOWN
    }
}

/// A compile-time scalar constant of a given type.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Literal {
    Bool(bool),
    /// An integer of an integer type; the value is already wrapped to the type.
    Int(i64, DType),
    /// A float of a floating type; the value is already rounded to the type.
    Float(f64, DType),
}

impl Literal {
    pub fn dtype(self) -> DType {
        match self {
            Literal::Bool(_) => DType::Bool,
            Literal::Int(_, d) | Literal::Float(_, d) => d,
        }
    }

    /// The literal `value` of type `dtype`, converted as a cast would.
    pub fn of(dtype: DType, value: f64) -> Literal {
        match dtype.kind() {
            DTypeKind::Bool => Literal::Bool(value != 0.0),
            DTypeKind::Float => Literal::Float(dtype.round_f64(value), dtype),
            _ => Literal::Int(dtype.round_f64(value) as i64, dtype),
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Literal::Bool(b) => f64::from(u8::from(b)),
            Literal::Int(v, DType::U64) => v as u64 as f64,
            Literal::Int(v, _) => v as f64,
            Literal::Float(v, _) => v,
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            Literal::Int(v, _) => Some(v),
            Literal::Bool(b) => Some(i64::from(b)),
            Literal::Float(..) => None,
        }
    }
}

/// A scalar variable: loop index, `let` binding, block index, thread index or
/// symbolic size. Variables are immutable once bound; mutable scalars are
/// `var`-scope buffers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Var {
    /// Unique within the function (the front end and the parser enforce it).
    pub name: String,
    pub dtype: DType,
    pub kind: VarKind,
}

/// What binds a [`Var`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VarKind {
    /// A size known only at launch time (`T.dynamic`, `T.symbolic`, or an
    /// unbound `T.const`); bound from the shapes of the arguments.
    Symbolic,
    /// Index of a `for` loop.
    Loop,
    /// Bound by [`Stmt::Let`].
    Let,
    /// Block index along an axis, bound by [`Stmt::Kernel`].
    BlockIdx,
    /// Thread index within the block, bound by [`Stmt::Kernel`].
    ThreadIdx,
}

/// Memory scope of a [`Buffer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Scope {
    Global,
    Shared,
    Fragment,
    Local,
    Var,
    /// Phased barriers (`T.alloc_barrier`): a 1-D array of barrier
    /// objects, one copy per thread block, touched only by
    /// [`Stmt::AllocBarrier`], [`Stmt::BarrierArrive`] and
    /// [`Stmt::BarrierWait`].
    Barrier,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Shared => "shared",
            Scope::Fragment => "fragment",
            Scope::Local => "local",
            Scope::Var => "var",
            Scope::Barrier => "barrier",
        }
    }

    pub fn from_name(name: &str) -> Option<Scope> {
        Some(match name {
            "global" => Scope::Global,
            "shared" => Scope::Shared,
            "fragment" => Scope::Fragment,
            "local" => Scope::Local,
            "var" => Scope::Var,
            "barrier" => Scope::Barrier,
            _ => return None,
        })
    }
}

/// A multi-dimensional array in one memory scope, row-major (the last
/// dimension is contiguous) unless a later pass gives it a layout.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Buffer {
    /// Unique within the function.
    pub name: String,
    pub dtype: DType,
    /// One extent per dimension; integer expressions over constants and
    /// symbolic variables.
    pub shape: Vec<Handle<Expr>>,
    pub scope: Scope,
    /// Where a shared buffer lives in its block's shared-memory arena, once
    /// `plan-shared-memory` has placed it; `None` before.
    pub placement: Option<Placement>,
    /// How the lowering to threads keeps an on-chip buffer, once
    /// `infer-layouts` chose (or a kernel's author pinned it); `None`
    /// leaves the choice to the lowering. No effect on what the kernel
    /// computes, except `mapped` on a global buffer (an author's
    /// `T.Layout` rearranging the caller's tensor, docs/ir.md "Layouts").
    pub layout: Option<BufferLayout>,
}

/// How the lowering to threads stores an on-chip buffer (`docs/ir.md`,
/// "Layouts"): in shared memory with some row arrangement, or in the
/// registers of the block's threads in some distribution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BufferLayout {
    /// Shared memory, row-major with dense rows.
    Shared,
    /// Shared memory, row-major with rows `pitch` elements apart (padding
    /// against bank conflicts).
    Padded { pitch: u64 },
    /// Shared memory in the XOR-swizzled panels, `row_bytes` bytes wide,
    /// that a shared-operand matrix atom's descriptors read.
    Swizzled { row_bytes: u64 },
    /// Registers: the accumulator fragment layout of the target's matrix
    /// atom named `atom`, as the gemms that write the buffer split it.
    Fragment { atom: String },
    /// Registers: one value per row of such an accumulator fragment, kept
    /// by every thread holding part of the row (per-row statistics).
    Rows { atom: String },
    /// Registers: spread over the block's threads, `vector` consecutive
    /// elements per thread and sweep.
    Spread { vector: u64 },
    /// Shared memory with element `(i0, i1, ...)` at offset `map` (an
    /// author's `T.Layout`): one-to-one over the buffer's shape, the
    /// memory as long as the largest offset plus one.
    /// (Appended last: Tile IR format 0.6.)
    Mapped { map: crate::layout::IndexMap },
    /// Registers: one copy of the whole buffer per thread (a `var` or
    /// `local` buffer that per-thread code stores into; TileLang's meaning
    /// of those scopes). (Appended last: Tile IR format 0.8.)
    Private,
}

/// Writes `s` as a double-quoted string the IR text's lexer
/// (`text::lexer`) reads back unchanged.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The IR text's form: `shared`, `padded(40)`, `swizzled(128)`,
/// `mapped("i0 * 72 + i1")`, `fragment("ATOM")`, `rows("ATOM")`,
/// `spread(4)`, `private`.
impl std::fmt::Display for BufferLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferLayout::Shared => write!(f, "shared"),
            BufferLayout::Padded { pitch } => write!(f, "padded({pitch})"),
            BufferLayout::Swizzled { row_bytes } => write!(f, "swizzled({row_bytes})"),
            BufferLayout::Mapped { map } => write!(f, "mapped({})", quote(&map.to_string())),
            BufferLayout::Fragment { atom } => write!(f, "fragment({})", quote(atom)),
            BufferLayout::Rows { atom } => write!(f, "rows({})", quote(atom)),
            BufferLayout::Spread { vector } => write!(f, "spread({vector})"),
            BufferLayout::Private => write!(f, "private"),
        }
    }
}

/// The IR text's form: `serial`, `async(3)`, `bulk(3)`,
/// `bulk(3, specialized)`, `bulk(3, unspecialized)`, `registers`.
impl std::fmt::Display for PipelineSchedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineSchedule::Serial => write!(f, "serial"),
            PipelineSchedule::Async { stages } => write!(f, "async({stages})"),
            PipelineSchedule::Bulk {
                stages,
                specialized,
            } => {
                let role = match specialized {
                    None => "",
                    Some(true) => ", specialized",
                    Some(false) => ", unspecialized",
                };
                write!(f, "bulk({stages}{role})")
            }
            PipelineSchedule::Registers => write!(f, "registers"),
        }
    }
}

impl BufferLayout {
    /// Whether the buffer lives in registers (not shared memory).
    pub fn in_registers(&self) -> bool {
        matches!(
            self,
            BufferLayout::Fragment { .. }
                | BufferLayout::Rows { .. }
                | BufferLayout::Spread { .. }
                | BufferLayout::Private
        )
    }
}

/// A byte range of a block's shared-memory arena: the buffer occupies
/// `offset .. offset + size` (its element count times its element size).
/// Buffers whose live ranges overlap never share bytes; others may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Placement {
    /// Byte offset from the start of the arena; a multiple of `align`.
    pub offset: u64,
    /// The alignment the buffer needs, in bytes; a power of two.
    pub align: u64,
}

/// Arithmetic, comparison and logic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Float division, or integer division truncating toward zero.
    Div,
    /// Division rounding toward negative infinity (`//`, `T.floordiv`).
    FloorDiv,
    /// Remainder with the sign of the divisor (`%`, `T.floormod`).
    FloorMod,
    Min,
    Max,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Logical and (operands bool).
    And,
    /// Logical or (operands bool).
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinaryOp {
    /// How the operator reads in source and in messages (`+`, `//`, `max`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::FloorMod => "%",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Pow => "pow",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr
        )
    }
}

/// One-operand operators and math functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UnaryOp {
    Neg,
    /// Logical not (bool).
    Not,
    /// Bitwise not (integers).
    BitNot,
    Abs,
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    Sigmoid,
    Tanh,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    /// Whether a float is NaN (result bool).
    IsNan,
    /// Whether a float is infinite (result bool).
    IsInf,
}

impl UnaryOp {
    /// Name used by the text format for function-style operators.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Not => "not",
            UnaryOp::BitNot => "bitnot",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Log => "log",
            UnaryOp::Log2 => "log2",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
            UnaryOp::IsNan => "isnan",
            UnaryOp::IsInf => "isinf",
        }
    }

    pub const ALL: [UnaryOp; 19] = [
        UnaryOp::Neg,
        UnaryOp::Not,
        UnaryOp::BitNot,
        UnaryOp::Abs,
        UnaryOp::Exp,
        UnaryOp::Exp2,
        UnaryOp::Log,
        UnaryOp::Log2,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Sigmoid,
        UnaryOp::Tanh,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::IsNan,
        UnaryOp::IsInf,
    ];

    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether the operator is a floating-point math function (operand must
    /// be a float).
    pub fn is_float_math(self) -> bool {
        !matches!(
            self,
            UnaryOp::Neg | UnaryOp::Not | UnaryOp::BitNot | UnaryOp::Abs
        )
    }
}

/// Whether a bit cast from `from` to `to` is well formed: the same width,
/// neither side bool.
pub fn bitcast_ok(from: DType, to: DType) -> bool {
    from.bits() == to.bits() && !from.is_bool() && !to.is_bool()
}

/// A pure scalar expression. Every expression has a type, recorded beside it
/// in [`Function::expr_types`] when it is added.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    Literal(Literal),
    Var(Handle<Var>),
    Unary {
        op: UnaryOp,
        arg: Handle<Expr>,
    },
    /// Operands have the same type (the front end inserts casts); the result
    /// has that type, or bool for comparisons.
    Binary {
        op: BinaryOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
    },
    /// `cond ? then : otherwise`; both arms have the same type.
    Select {
        cond: Handle<Expr>,
        then: Handle<Expr>,
        otherwise: Handle<Expr>,
    },
    Cast {
        dtype: DType,
        arg: Handle<Expr>,
    },
    /// Reads one element. Indices are integers, one per dimension.
    Load {
        buffer: Handle<Buffer>,
        indices: Vec<Handle<Expr>>,
    },
    /// The bits of `arg` read as a value of `dtype` (`T.reinterpret`): no
    /// conversion. Both types have the same width and neither is bool.
    Bitcast {
        dtype: DType,
        arg: Handle<Expr>,
    },
}

impl Expr {
    /// The operands of the expression, in order (a load's are its indices).
    pub fn operands(&self) -> Vec<Handle<Expr>> {
        match self {
            Expr::Literal(_) | Expr::Var(_) => Vec::new(),
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => {
                vec![*arg]
            }
            Expr::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
            Expr::Select {
                cond,
                then,
                otherwise,
            } => vec![*cond, *then, *otherwise],
            Expr::Load { indices, .. } => indices.clone(),
        }
    }
}

/// A half-open box of a buffer: per dimension, a start and an extent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Region {
    pub buffer: Handle<Buffer>,
    pub ranges: Vec<Range>,
}

/// `start .. start + extent` along one dimension.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Range {
    pub start: Handle<Expr>,
    pub extent: Handle<Expr>,
}

/// How a `for` loop's iterations are executed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum LoopKind {
    Serial,
    /// Fully unrolled by code generation.
    Unroll,
    /// Vectorized by code generation (innermost, constant extent).
    Vectorized,
    /// A software-pipelined serial loop (`T.Pipelined`). Semantically a serial
    /// loop; `num_stages` is the depth of the pipeline (0 = none). `order` and
    /// `stage`, when given, assign each top-level statement of the body an
    /// issue order and a pipeline stage.
    Pipelined {
        num_stages: u32,
        order: Option<Vec<i64>>,
        stage: Option<Vec<i64>>,
        /// How the lowering pipelines the loop, once `inject-pipeline`
        /// chose (or the author pinned it); `None` leaves it to the
        /// lowering.
        schedule: Option<PipelineSchedule>,
    },
}

/// How the lowering to threads runs a `T.Pipelined` loop (`docs/ir.md`,
/// "Pipeline schedules").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PipelineSchedule {
    /// Not pipelined: a serial loop.
    Serial,
    /// `stages` shared-memory stages filled by per-thread asynchronous
    /// copies in commit groups.
    Async { stages: u32 },
    /// `stages` shared-memory stages filled by bulk tensor copies that
    /// complete on transaction barriers. `specialized`: whether producer
    /// threads of their own issue the copies while the kernel's threads
    /// compute (warp specialization), once `warp-specialize` chose; `None`
    /// leaves it to the lowering.
    Bulk {
        stages: u32,
        specialized: Option<bool>,
    },
    /// Two shared-memory stages filled through registers (targets without
    /// asynchronous copies).
    Registers,
}

/// Reduction operators of [`Stmt::Reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ReduceKind {
    Sum,
    Max,
    Min,
    AbsSum,
    AbsMax,
    /// Bitwise and, or, exclusive or of integers (identity all ones, 0,
    /// 0). (Appended last: Tile IR format 0.9.)
    BitAnd,
    BitOr,
    BitXor,
}

impl ReduceKind {
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Max => "max",
            ReduceKind::Min => "min",
            ReduceKind::AbsSum => "abssum",
            ReduceKind::AbsMax => "absmax",
            ReduceKind::BitAnd => "bitand",
            ReduceKind::BitOr => "bitor",
            ReduceKind::BitXor => "bitxor",
        }
    }

    pub const ALL: [ReduceKind; 8] = [
        ReduceKind::Sum,
        ReduceKind::Max,
        ReduceKind::Min,
        ReduceKind::AbsSum,
        ReduceKind::AbsMax,
        ReduceKind::BitAnd,
        ReduceKind::BitOr,
        ReduceKind::BitXor,
    ];

    /// Whether the kind combines bits, and so reduces integers only.
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor
        )
    }

    pub fn from_name(name: &str) -> Option<ReduceKind> {
        ReduceKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How `gemm` spreads warps over the output tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GemmPolicy {
    Square,
    FullRow,
    FullCol,
}

impl GemmPolicy {
    pub fn name(self) -> &'static str {
        match self {
            GemmPolicy::Square => "square",
            GemmPolicy::FullRow => "full_row",
            GemmPolicy::FullCol => "full_col",
        }
    }

    pub fn from_name(name: &str) -> Option<GemmPolicy> {
        Some(match name {
            "square" => GemmPolicy::Square,
            "full_row" => GemmPolicy::FullRow,
            "full_col" => GemmPolicy::FullCol,
            _ => return None,
        })
    }
}

/// The value `atomic_add` adds: one scalar for every element, or a region of
/// the same shape.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum AtomicValue {
    Scalar(Handle<Expr>),
    Region(Region),
}

/// The combining operation of an atomic read-modify-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AtomicOp {
    /// `old + value`.
    Add,
    /// `value` when `value > old`, else `old` (`T.atomic_max`): the
    /// larger of the two; with floats a NaN `value` never replaces `old`
    /// and a NaN `old` stays, and `-0.0` does not replace `+0.0` (nor the
    /// reverse), as a compare-and-swap loop on `value > old` leaves them.
    Max,
    /// `value` when `value < old`, else `old` (`T.atomic_min`), with the
    /// same rules for NaN and signed zeros as `Max`.
    Min,
}

impl AtomicOp {
    /// The TileLang name of the operation (`atomic_add`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
        }
    }
}

/// A statement. Statements run in order and carry every side effect.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Stmt {
    /// A kernel launch: `grid` blocks (1 to 3 dimensions, x first), each of
    /// `threads` threads, runs `body`. `block_vars[i]` is the block index
    /// along `grid[i]`; `thread_var` the thread index. Kernels of one function
    /// run one after another.
    Kernel {
        grid: Vec<Handle<Expr>>,
        threads: u32,
        block_vars: Vec<Handle<Var>>,
        thread_var: Handle<Var>,
        /// The order blocks are handed to the hardware in (`T.use_swizzle`);
        /// `None` leaves it to the compiler. It never changes what the
        /// kernel computes: every block still runs once.
        order: Option<BlockOrder>,
        body: Block,
    },
    /// Declares a buffer of a non-global scope (or a `T.empty` / global
    /// scratch buffer at function level). Its contents start undefined,
    /// except for `var` buffers with an `init` value; a global scratch
    /// buffer starts zeroed.
    Alloc {
        buffer: Handle<Buffer>,
        init: Option<Handle<Expr>>,
    },
    /// `for var in start .. start + extent`.
    For {
        var: Handle<Var>,
        start: Handle<Expr>,
        extent: Handle<Expr>,
        kind: LoopKind,
        body: Block,
    },
    /// An element-wise parallel nest (`T.Parallel`). `vars[i]` ranges over
    /// `0 .. extents[i]`. Iterations must not depend on each other.
    Parallel {
        vars: Vec<Handle<Var>>,
        extents: Vec<Handle<Expr>>,
        body: Block,
    },
    If {
        cond: Handle<Expr>,
        then: Block,
        otherwise: Block,
    },
    /// Binds `var` to `value` for the rest of the enclosing block.
    Let {
        var: Handle<Var>,
        value: Handle<Expr>,
    },
    /// Writes one element; `value` has the buffer's type.
    Store {
        buffer: Handle<Buffer>,
        indices: Vec<Handle<Expr>>,
        value: Handle<Expr>,
    },
    /// Copies `src` to `dst` (equal extents after dropping unit dimensions),
    /// converting element types as a cast does.
    Copy { src: Region, dst: Region },
    /// `c += op(a) · op(b)`, or `c = ...` when `clear_accum` is true.
    Gemm {
        a: Region,
        b: Region,
        c: Region,
        transpose_a: bool,
        transpose_b: bool,
        policy: GemmPolicy,
        clear_accum: Handle<Expr>,
    },
    /// Sets every element of `dst` to `value`, which has `dst`'s type.
    Fill { dst: Region, value: Handle<Expr> },
    /// Reduces `src` along `dim` into `dst`, whose shape is `src`'s with
    /// `dim` removed. With `clear`, `dst` starts at the identity; otherwise
    /// the reduction combines with what `dst` holds.
    Reduce {
        kind: ReduceKind,
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        dim: u32,
        clear: bool,
    },
    /// Inclusive prefix sum along `dim`; with `reverse`, the inclusive
    /// suffix sum.
    Cumsum {
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        dim: u32,
        reverse: bool,
    },
    /// Atomically adds `value` to every element of `dst`; the value is
    /// converted to `dst`'s type first, as the hardware operand would be.
    AtomicAdd { dst: Region, value: AtomicValue },
    /// A block-wide barrier (`T.sync_threads`).
    Barrier,
    /// A fact the compiler may assume (`T.assume`).
    Assume { cond: Handle<Expr> },
    /// Declares a `barrier`-scope buffer of `counts.len()` phased barriers
    /// (`T.alloc_barrier`), barrier `i` completing a phase each time
    /// `counts[i]` threads have arrived. Every barrier starts in phase 0
    /// with no arrivals. Only in a kernel body, outside roles.
    AllocBarrier {
        buffer: Handle<Buffer>,
        counts: Vec<u32>,
    },
    /// A role (`T.ws(g, ...)`): `body` runs on the threads of the warp
    /// groups `groups` only (warp group `g` is threads `128·g .. 128·g +
    /// 127`; sorted, distinct), and tile operations in it are carried out
    /// by those threads together. The other threads skip it without
    /// waiting. Different roles run concurrently and order their shared
    /// accesses only through barriers (`docs/ir.md`, "Roles").
    Role { groups: Vec<u32>, body: Block },
    /// Every thread that runs it arrives once at barrier `index` of
    /// `barrier` (a release of its earlier memory accesses).
    BarrierArrive {
        barrier: Handle<Buffer>,
        index: Handle<Expr>,
    },
    /// Waits until the phase of barrier `index` whose parity is `parity`
    /// (an integer, taken modulo 2) has completed: returns at once while
    /// the barrier's current phase has the other parity. An acquire of
    /// the accesses the phase's arrivals released.
    BarrierWait {
        barrier: Handle<Buffer>,
        index: Handle<Expr>,
        parity: Handle<Expr>,
    },
    /// Atomically combines `value` into every element of `dst` with `op`
    /// (`T.atomic_max`, `T.atomic_min`); the value is converted to
    /// `dst`'s type first, as for `AtomicAdd`. Appended in Tile IR 0.10;
    /// the front end writes additions as `AtomicAdd`, and `Atomic` with
    /// `AtomicOp::Add` means the same.
    Atomic {
        op: AtomicOp,
        dst: Region,
        value: AtomicValue,
    },
    /// A warp reduction (`T.warp_reduce_sum`, ...): every thread of the
    /// block evaluates `value`; the threads of each group of
    /// [`WARP_REDUCE_LANES`] consecutive thread indices combine their
    /// values with `kind` (sum, max, min, bitand or bitor) in a butterfly
    /// (each lane `l` combines its value with lane `l ^ 16`'s, then `l ^
    /// 8`'s, ... `l ^ 1`'s, its own value on the left), and each thread
    /// stores its result into `buffer[indices]`, a per-thread buffer.
    /// Reached by every thread of the block together: not under a
    /// condition or loop bound that reads the thread index. Floats round
    /// to their type after every step; `max`/`min` of floats ignore a
    /// NaN operand (`fmaxf`), except in f64 (`a < b ? b : a`). Appended
    /// in Tile IR 0.11.
    WarpReduce {
        kind: ReduceKind,
        buffer: Handle<Buffer>,
        indices: Vec<Handle<Expr>>,
        value: Handle<Expr>,
    },
    /// A run-time assertion (`T.device_assert`): every thread that runs
    /// it evaluates `cond`; where it is false the kernel stops with an
    /// error (the launch fails). Appended in Tile IR 0.11.
    DeviceAssert { cond: Handle<Expr> },
}

/// The threads that one [`Stmt::WarpReduce`] combines: TileLang's warp
/// reductions are 32-lane butterflies on every target (on 64-lane AMD
/// wavefronts too).
pub const WARP_REDUCE_LANES: u32 = 32;

impl Stmt {
    /// Whether the statement is a role or holds one at any depth.
    pub fn holds_role(&self) -> bool {
        match self {
            Stmt::Role { .. } => true,
            Stmt::Kernel { body, .. } | Stmt::For { body, .. } | Stmt::Parallel { body, .. } => {
                body.stmts.iter().any(Stmt::holds_role)
            }
            Stmt::If {
                then, otherwise, ..
            } => then
                .stmts
                .iter()
                .chain(&otherwise.stmts)
                .any(Stmt::holds_role),
            _ => false,
        }
    }
}

/// A sequence of statements with the source span of each.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub spans: Vec<Span>,
}

impl Block {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, stmt: Stmt, span: Span) {
        self.stmts.push(stmt);
        self.spans.push(span);
    }

    pub fn len(&self) -> usize {
        self.stmts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stmts.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Stmt, Span)> {
        self.stmts.iter().zip(
            self.spans
                .iter()
                .copied()
                .chain(std::iter::repeat(Span::UNKNOWN)),
        )
    }

    /// Calls `visit` on every statement of the block and of the blocks
    /// nested in it (kernel, loop, parallel and branch bodies), each
    /// statement before the ones inside it, with its span.
    pub fn walk<'b>(&'b self, visit: &mut impl FnMut(&'b Stmt, Span)) {
        for (stmt, span) in self.iter() {
            visit(stmt, span);
            match stmt {
                Stmt::Kernel { body, .. }
                | Stmt::For { body, .. }
                | Stmt::Parallel { body, .. }
                | Stmt::Role { body, .. } => body.walk(visit),
                Stmt::If {
                    then, otherwise, ..
                } => {
                    then.walk(visit);
                    otherwise.walk(visit);
                }
                _ => {}
            }
        }
    }

    /// [`Block::walk`] with every statement mutable; `visit` runs before
    /// the statement's own bodies are walked.
    pub fn walk_mut(&mut self, visit: &mut impl FnMut(&mut Stmt)) {
        for stmt in &mut self.stmts {
            visit(stmt);
            match stmt {
                Stmt::Kernel { body, .. }
                | Stmt::For { body, .. }
                | Stmt::Parallel { body, .. }
                | Stmt::Role { body, .. } => body.walk_mut(visit),
                Stmt::If {
                    then, otherwise, ..
                } => {
                    then.walk_mut(visit);
                    otherwise.walk_mut(visit);
                }
                _ => {}
            }
        }
    }
}

/// A launch order of a kernel's blocks over a 2-D (or larger) grid: which
/// block indices the `k`-th block the hardware starts gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BlockOrder {
    /// The hardware's: x fastest, then y.
    Linear,
    /// Panels of `size` consecutive rows (y), or columns (x) with `column`,
    /// each walked across (one column of the panel after another), the
    /// direction alternating from panel to panel, so that blocks running
    /// together share their neighbours' tiles in L2 (TileLang's
    /// `T.use_swizzle(size, order)`).
    Panels { size: u32, column: bool },
}

/// A parameter of a function: a global buffer the caller passes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub buffer: Handle<Buffer>,
}

/// A scalar parameter of a function (TileLang's `n: T.int32` in a
/// `prim_func` signature): a run-time value the caller passes at launch.
/// Its variable is a symbolic size (`VarKind::Symbolic`, an integer type,
/// listed in [`Function::symbols`] after the other symbols, in signature
/// order) whose value is given explicitly rather than bound from the
/// shapes of the arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScalarParam {
    pub var: Handle<Var>,
    /// Position in the source signature, counting buffer and scalar
    /// parameters alike (`out_idx` is normalized to indices into
    /// [`Function::params`]).
    pub position: u32,
}

/// Function-level attributes carried from the source (`out_idx`,
/// `pass_configs`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attrs {
    /// Parameters the runtime allocates and returns (non-negative indices
    /// into `params`, normalized by the front end).
    pub out_idx: Vec<u32>,
    /// `pass_configs` entries, values printed as text (`true`, `4`, `"x"`).
    pub pass_configs: BTreeMap<String, String>,
}

impl Attrs {
    /// Whether the `pass_configs` entry `key` is set to true (`True`,
    /// `true` or `1`).
    pub fn flag(&self, key: &str) -> bool {
        self.pass_configs
            .get(key)
            .is_some_and(|v| matches!(v.as_str(), "True" | "true" | "1"))
    }

    /// Whether the `pass_configs` entry `key` is set to false (`False`,
    /// `false` or `0`): a default of true turned off.
    pub fn flag_off(&self, key: &str) -> bool {
        self.pass_configs
            .get(key)
            .is_some_and(|v| matches!(v.as_str(), "False" | "false" | "0"))
    }
}

/// One kernel function (a TileLang `prim_func`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub attrs: Attrs,
    pub vars: Arena<Var>,
    pub buffers: Arena<Buffer>,
    pub exprs: Arena<Expr>,
    /// Type of each expression, indexed like `exprs`.
    pub expr_types: Vec<DType>,
    /// Symbolic size variables, in order of first appearance.
    pub symbols: Vec<Handle<Var>>,
    pub body: Block,
    /// Span of each buffer's declaration, indexed like `buffers`.
    pub buffer_spans: Vec<Span>,
    /// Scalar parameters, in signature order (Tile IR format 0.7).
    pub scalars: Vec<ScalarParam>,
}

/// Deepest nesting of an expression the IR admits: a literal or a variable
/// is 1 deep, an operation one more than its deepest operand. Every pass,
/// the lowering and the plugins walk expressions recursively; this bound
/// keeps them far from the end of an 8 MiB stack (a debug build of the
/// lowering overflows it near 1,200 levels). Real kernels nest about 30
/// deep. The front end refuses deeper source expressions, the text reader
/// deeper `.tir` expressions, and the verifier deeper IR
/// (`docs/tilelang-support.md`, "Limits").
pub const MAX_EXPR_DEPTH: u32 = 128;

/// A translation unit: the functions compiled together.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Module {
    pub functions: Vec<Function>,
}

/// Why an expression could not be built: a type rule was broken.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TypeError {
    #[error("operands of `{}` have different types {lhs} and {rhs}", .op.symbol())]
    Mismatch {
        op: BinaryOp,
        lhs: DType,
        rhs: DType,
    },
    #[error("`{op:?}` needs {expected} operands, got {found}")]
    Operand {
        op: String,
        expected: &'static str,
        found: DType,
    },
    #[error("select arms have different types {then} and {otherwise}")]
    SelectArms { then: DType, otherwise: DType },
    #[error("condition has type {0}, expected bool")]
    Condition(DType),
    #[error("buffer `{buffer}` has {rank} dimensions but {found} indices were given")]
    Rank {
        buffer: String,
        rank: usize,
        found: usize,
    },
    #[error("index has type {0}, expected an integer")]
    Index(DType),
    #[error(
        "a bit cast keeps the width and needs non-bool types: {from} ({} bits) cannot be read as {to} ({} bits)",
        .from.bits(),
        .to.bits()
    )]
    BitcastWidth { from: DType, to: DType },
}

impl Function {
    /// The nesting depth of every expression, indexed like `exprs` (see
    /// [`MAX_EXPR_DEPTH`]), in one pass over the arena: operands precede
    /// the expressions that use them. An operand that does not (malformed
    /// IR, which the verifier reports) counts as 1 deep.
    pub fn expr_depths(&self) -> Vec<u32> {
        let mut depths: Vec<u32> = Vec::with_capacity(self.exprs.len());
        for (h, e) in self.exprs.iter() {
            let deepest = e
                .operands()
                .into_iter()
                .map(|o| {
                    if o < h {
                        depths.get(o.index()).copied().unwrap_or(1)
                    } else {
                        1
                    }
                })
                .max()
                .unwrap_or(0);
            depths.push(deepest.saturating_add(1));
        }
        depths
    }

    pub fn new(name: impl Into<String>) -> Self {
        Function {
            name: name.into(),
            ..Function::default()
        }
    }

    /// Type of an expression.
    pub fn ty(&self, expr: Handle<Expr>) -> DType {
        self.expr_types[expr.index()]
    }

    /// Adds an expression after checking its operand types, and records its
    /// type.
    pub fn add_expr(&mut self, expr: Expr) -> Result<Handle<Expr>, TypeError> {
        let dtype = self.infer_type(&expr)?;
        self.expr_types.push(dtype);
        Ok(self.exprs.append(expr))
    }

    /// Adds a literal.
    pub fn lit(&mut self, literal: Literal) -> Handle<Expr> {
        self.expr_types.push(literal.dtype());
        self.exprs.append(Expr::Literal(literal))
    }

    /// Adds an `int32` literal.
    pub fn int(&mut self, value: i64) -> Handle<Expr> {
        self.lit(Literal::Int(DType::I32.wrap_i64(value), DType::I32))
    }

    /// Adds a reference to a variable.
    pub fn var_expr(&mut self, var: Handle<Var>) -> Handle<Expr> {
        self.expr_types.push(self.vars[var].dtype);
        self.exprs.append(Expr::Var(var))
    }

    /// Adds a variable.
    pub fn add_var(&mut self, name: impl Into<String>, dtype: DType, kind: VarKind) -> Handle<Var> {
        self.vars.append(Var {
            name: name.into(),
            dtype,
            kind,
        })
    }

    /// Adds a buffer declared at `span`.
    pub fn add_buffer(&mut self, buffer: Buffer, span: Span) -> Handle<Buffer> {
        self.buffer_spans.push(span);
        self.buffers.append(buffer)
    }

    /// The literal value of an expression, when it is one.
    pub fn as_literal(&self, expr: Handle<Expr>) -> Option<Literal> {
        match self.exprs[expr] {
            Expr::Literal(l) => Some(l),
            _ => None,
        }
    }

    /// The integer value of an expression, when it is an integer literal.
    pub fn as_const_int(&self, expr: Handle<Expr>) -> Option<i64> {
        self.as_literal(expr).and_then(Literal::as_i64)
    }

    /// The buffer's extents when all are integer literals.
    pub fn const_shape(&self, buffer: Handle<Buffer>) -> Option<Vec<i64>> {
        self.buffers[buffer]
            .shape
            .iter()
            .map(|&e| self.as_const_int(e))
            .collect()
    }

    /// Elements of memory a shared buffer's pinned layout takes when it
    /// differs from the element count: rows `pitch` apart (`padded`), or
    /// the largest offset plus one (`mapped`). `None` for other layouts,
    /// and for a shape that is not constant or a layout that does not fit
    /// it (which the verifier reports).
    pub fn layout_span(&self, buffer: Handle<Buffer>) -> Option<u64> {
        let shape: Vec<u64> = self
            .const_shape(buffer)?
            .into_iter()
            .map(|d| u64::try_from(d).ok())
            .collect::<Option<_>>()?;
        match self.buffers[buffer].layout.as_ref()? {
            BufferLayout::Padded { pitch } => {
                let (_, rows) = shape.split_last()?;
                rows.iter().try_fold(*pitch, |n, &d| n.checked_mul(d))
            }
            BufferLayout::Mapped { map } => {
                let offsets = map.check_over(&shape).ok()?;
                Some(offsets.iter().max().map_or(0, |&m| m + 1))
            }
            _ => None,
        }
    }

    /// Whether the symbolic variable `var` is a scalar parameter.
    pub fn is_scalar_param(&self, var: Handle<Var>) -> bool {
        self.scalars.iter().any(|s| s.var == var)
    }

    /// Buffers passed as parameters.
    pub fn param_buffers(&self) -> impl Iterator<Item = Handle<Buffer>> + '_ {
        self.params.iter().map(|p| p.buffer)
    }

    fn infer_type(&self, expr: &Expr) -> Result<DType, TypeError> {
        Ok(match *expr {
            Expr::Literal(l) => l.dtype(),
            Expr::Var(v) => self.vars[v].dtype,
            Expr::Cast { dtype, .. } => dtype,
            Expr::Bitcast { dtype, arg } => {
                let from = self.ty(arg);
                if !bitcast_ok(from, dtype) {
                    return Err(TypeError::BitcastWidth { from, to: dtype });
                }
                dtype
            }
            Expr::Load {
                buffer,
                ref indices,
            } => {
                let b = &self.buffers[buffer];
                if b.shape.len() != indices.len() {
                    return Err(TypeError::Rank {
                        buffer: b.name.clone(),
                        rank: b.shape.len(),
                        found: indices.len(),
                    });
                }
                for &i in indices {
                    if !self.ty(i).is_int() {
                        return Err(TypeError::Index(self.ty(i)));
                    }
                }
                b.dtype
            }
            Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                if self.ty(cond) != DType::Bool {
                    return Err(TypeError::Condition(self.ty(cond)));
                }
                if self.ty(then) != self.ty(otherwise) {
                    return Err(TypeError::SelectArms {
                        then: self.ty(then),
                        otherwise: self.ty(otherwise),
                    });
                }
                self.ty(then)
            }
            Expr::Unary { op, arg } => {
                let t = self.ty(arg);
                let ok = match op {
                    UnaryOp::Not => t.is_bool(),
                    UnaryOp::BitNot => t.is_int(),
                    UnaryOp::Neg | UnaryOp::Abs => t.is_int() || t.is_float(),
                    _ => t.is_float(),
                };
                if !ok {
                    let expected = match op {
                        UnaryOp::Not => "bool",
                        UnaryOp::BitNot => "integer",
                        UnaryOp::Neg | UnaryOp::Abs => "numeric",
                        _ => "floating-point",
                    };
                    return Err(TypeError::Operand {
                        op: op.name().to_string(),
                        expected,
                        found: t,
                    });
                }
                if matches!(op, UnaryOp::IsNan | UnaryOp::IsInf) {
                    DType::Bool
                } else {
                    t
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let (l, r) = (self.ty(lhs), self.ty(rhs));
                if l != r {
                    return Err(TypeError::Mismatch { op, lhs: l, rhs: r });
                }
                let ok = if op.is_logical() {
                    l.is_bool()
                } else if op.is_bitwise() {
                    l.is_int() || (l.is_bool() && !matches!(op, BinaryOp::Shl | BinaryOp::Shr))
                } else if op.is_comparison() {
                    true
                } else {
                    !l.is_bool()
                };
                if !ok {
                    let expected = if op.is_logical() {
                        "bool"
                    } else if op.is_bitwise() {
                        "integer"
                    } else {
                        "numeric"
                    };
                    return Err(TypeError::Operand {
                        op: op.symbol().to_string(),
                        expected,
                        found: l,
                    });
                }
                if op.is_comparison() { DType::Bool } else { l }
            }
        })
    }
}
