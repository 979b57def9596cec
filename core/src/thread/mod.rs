//! Thread-level IR: what one thread of a SIMT block does, written out
//! explicitly. This is the level SIMT backend plugins consume (a CUDA plugin
//! emits PTX from it, an AMDGPU plugin LLVM IR) and the level the SIMT
//! interpreter ([`crate::simt`]) runs thread by thread.
//!
//! # Shape
//! A [`Module`] holds [`Kernel`]s. A kernel has a name; parameters
//! ([`Param`]): global buffers (element type and a shape of constants or
//! scalar-parameter names) and integer scalars (symbolic sizes); a grid of
//! three extents (integer expressions over constants and scalar parameters);
//! a constant number of threads per block; shared buffers ([`SharedBuffer`]:
//! element type, element count, alignment in bytes); per-thread registers
//! ([`Register`]: scalar variables, local arrays, and the loop variables
//! `for` binds); and a structured body of [`Stmt`]s.
//!
//! Nodes refer to parameters, shared buffers and registers by index
//! ([`ParamId`], [`SharedId`], [`RegId`]) into the kernel's tables; the text
//! form uses names, and the parser resolves them.
//!
//! # Execution model
//! Every thread of every block runs the body. Registers are private to a
//! thread and start undefined (the interpreter fills floats with NaN and
//! integers with a poison pattern). Shared buffers are private to a block
//! and start undefined. Global buffers are the kernel's arguments.
//!
//! Expressions ([`Expr`]) are pure: they read registers, scalar
//! parameters and the special values ([`Special`]) and never memory. Every
//! memory access is a statement. Expression types follow Tile IR
//! (`docs/ir.md`): both operands of a binary operator have one type;
//! `/` truncates for integers, `//` and `%` round toward negative infinity
//! (Python's rules, as the reference interpreter implements them); casts
//! round to nearest even into floats and truncate and wrap into integers.
//!
//! Memory statements move 1, 2, 4 or 8 contiguous elements (a vector move)
//! between registers and an element index of a buffer; the index is linear
//! (row-major over a global buffer's shape) and must be a multiple of the
//! width. A move may be guarded ([`Guard`]): a false predicate skips it
//! (a load leaves its destination unchanged) or, with `else zero`, fills
//! the destination with zeros (loads and async copies only). An access
//! that happens (no guard, or a true predicate) must be in bounds.
//!
//! Asynchronous copies (`cp_async`) follow cp.async: a thread's copies
//! join the open group, `commit_group` closes it, `wait_group N` waits
//! until at most the N most recent committed groups of *that thread* are
//! pending. A copy's bytes are visible to its own thread after a wait that
//! covers it, and to other threads only after that wait and then a
//! `barrier`.
//!
//! Bulk tensor copies (`tma_load`) are issued by one thread, move a box
//! of a global buffer described by a tensor map ([`TensorMap`]) into
//! shared memory, and complete on a phased barrier (`mbarrier_*`,
//! PTX's mbarrier): the copy's bytes count against the barrier's current
//! phase, and a thread may read them once an `mbarrier_wait` of its own
//! saw that phase complete.
//!
//! `barrier` synchronises the whole block and must be reached by every
//! thread together (it may not sit under a condition that depends on the
//! thread). Shuffles exchange a scalar among the lanes of a SIMT group of
//! `width` lanes (CUDA `__shfl_*_sync` semantics, [`ShuffleKind`]). `mma`
//! runs a matrix atom of the target description: the issuing group's
//! threads hold the A, B and C fragments in local arrays laid out by the
//! atom's fragment layouts, and receive D the same way.
//!
//! The verifier ([`verify`]) states every structural invariant; the text
//! form ([`print_module`], [`parse_module`]) is documented in
//! `docs/thread-ir.md`.

mod lexer;
mod parse;
mod print;
pub mod verify;
pub mod visit;

pub use parse::parse_module;
pub use print::{print_kernel, print_module, print_stmt_header};
pub use verify::{VerifyError, verify_kernel, verify_module};

pub use crate::ir::AtomicOp;
use crate::ir::{BinaryOp, DType, Literal, Span, UnaryOp};

/// The format version in the header line (`thread_ir 0.1`).
pub const VERSION: &str = "0.1";

/// Why a text could not be read as thread-level IR.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Byte offset in the input.
    pub offset: usize,
    pub message: String,
}

/// A set of kernels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub kernels: Vec<Kernel>,
}

impl Module {
    /// The kernel with this name.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Index of a parameter in [`Kernel::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);
/// Index of a shared buffer in [`Kernel::shared`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedId(pub u32);
/// Index of a register in [`Kernel::registers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);
/// Index of a tensor map in [`Kernel::tensor_maps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorMapId(pub u32);

impl ParamId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl SharedId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl RegId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl TensorMapId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    /// Blocks in x, y, z: integer expressions over constants and scalar
    /// parameters.
    pub grid: [Expr; 3],
    /// Threads per block.
    pub threads: u32,
    pub shared: Vec<SharedBuffer>,
    /// Descriptors of boxes of global buffers for `tma_load`.
    pub tensor_maps: Vec<TensorMap>,
    pub registers: Vec<Register>,
    pub body: Vec<Stmt>,
}

impl Kernel {
    /// The global buffer parameters, in order, with their ids.
    pub fn global_params(&self) -> impl Iterator<Item = (ParamId, &GlobalBuffer)> + '_ {
        self.params.iter().enumerate().filter_map(|(i, p)| match p {
            Param::Global(g) => Some((ParamId(i as u32), g)),
            Param::Scalar { .. } => None,
        })
    }

    /// The global buffer parameter `id`, if it is one.
    pub fn global(&self, id: ParamId) -> Option<&GlobalBuffer> {
        match self.params.get(id.index()) {
            Some(Param::Global(g)) => Some(g),
            _ => None,
        }
    }

    /// The name of a parameter (`?` for a bad id).
    pub fn param_name(&self, id: ParamId) -> &str {
        self.params.get(id.index()).map_or("?", Param::name)
    }

    pub fn shared_buffer(&self, id: SharedId) -> Option<&SharedBuffer> {
        self.shared.get(id.index())
    }

    pub fn register(&self, id: RegId) -> Option<&Register> {
        self.registers.get(id.index())
    }
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// A global buffer the caller passes.
    Global(GlobalBuffer),
    /// An integer scalar (a symbolic size).
    Scalar { name: String, dtype: DType },
}

impl Param {
    pub fn name(&self) -> &str {
        match self {
            Param::Global(g) => &g.name,
            Param::Scalar { name, .. } => name,
        }
    }
}

/// A global buffer parameter: row-major, indexed linearly.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalBuffer {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<Dim>,
}

/// A descriptor of a global buffer for bulk tensor copies (a CUDA tensor
/// map): the buffer, as its row-major shape describes it, cut in boxes of
/// `box_dims` elements (outermost first, one per dimension of the
/// buffer), stored in shared memory row-major with the innermost row
/// `box_dims.last() · e` bytes long and swizzled by `swizzle` bytes (0,
/// 32, 64 or 128: the XOR of [`SharedMatrix::swizzle_address`]). The
/// host builds the descriptor from the buffer argument when it launches
/// the kernel; the kernel passes it to `tma_load`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMap {
    pub name: String,
    /// The global buffer parameter it describes.
    pub global: ParamId,
    pub box_dims: Vec<u32>,
    pub swizzle: u32,
}

impl TensorMap {
    /// Elements in one box.
    pub fn box_elements(&self) -> u64 {
        self.box_dims.iter().map(|&d| u64::from(d)).product()
    }
}

/// One extent of a global buffer's shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Const(u64),
    /// The value of a scalar parameter.
    Param(ParamId),
    /// An integer expression of scalar parameters and literals (`+ - * /
    /// // %`, `min`, `max`, casts): a compound extent such as
    /// `T.ceildiv(N, 128)`. Hosts evaluate it from the sizes; it binds no
    /// size itself (the verifier requires every parameter it reads to be
    /// a scalar).
    Expr(Expr),
}

impl Dim {
    /// Whether `e` can be a [`Dim::Expr`]: literals and scalar parameters
    /// combined by the operators hosts evaluate (the language of
    /// `tilec_plugin_api::extent`).
    pub fn is_extent_expr(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Literal(Literal::Int(..)) | ExprKind::Param(_) => true,
            ExprKind::Cast(inner) => e.dtype.is_int() && Dim::is_extent_expr(inner),
            ExprKind::Binary(op, a, b) => {
                matches!(
                    op,
                    BinaryOp::Add
                        | BinaryOp::Sub
                        | BinaryOp::Mul
                        | BinaryOp::Div
                        | BinaryOp::FloorDiv
                        | BinaryOp::FloorMod
                        | BinaryOp::Min
                        | BinaryOp::Max
                ) && e.dtype.is_int()
                    && Dim::is_extent_expr(a)
                    && Dim::is_extent_expr(b)
            }
            _ => false,
        }
    }
}

/// A shared-memory buffer of one block.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedBuffer {
    pub name: String,
    pub dtype: DType,
    /// Number of elements.
    pub len: u64,
    /// Alignment of the first element in bytes (a power of two).
    pub align: u32,
}

/// A per-thread register: a scalar variable, a local array or a loop
/// variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Register {
    pub name: String,
    pub dtype: DType,
    pub kind: RegisterKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterKind {
    /// A mutable scalar (`var`).
    Scalar,
    /// A local array of `len` elements (`local`).
    Array { len: u32 },
    /// The variable of a `for` loop: read-only, visible in the loop body.
    Loop,
}

impl Register {
    /// Number of elements (1 for scalars and loop variables).
    pub fn len(&self) -> u32 {
        match self.kind {
            RegisterKind::Array { len } => len,
            _ => 1,
        }
    }

    /// Never true: every register holds at least one element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_array(&self) -> bool {
        matches!(self.kind, RegisterKind::Array { .. })
    }
}

/// Values that differ per thread or block, all `i32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// Thread index in the block, `0 .. threads`.
    ThreadIdx,
    BlockIdxX,
    BlockIdxY,
    BlockIdxZ,
    /// `thread_idx % width` for the target's SIMT width.
    LaneId,
    /// `thread_idx / width` for the target's SIMT width.
    WarpId,
}

impl Special {
    pub const ALL: [Special; 6] = [
        Special::ThreadIdx,
        Special::BlockIdxX,
        Special::BlockIdxY,
        Special::BlockIdxZ,
        Special::LaneId,
        Special::WarpId,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Special::ThreadIdx => "thread_idx",
            Special::BlockIdxX => "block_idx_x",
            Special::BlockIdxY => "block_idx_y",
            Special::BlockIdxZ => "block_idx_z",
            Special::LaneId => "lane_id",
            Special::WarpId => "warp_id",
        }
    }

    pub fn from_name(name: &str) -> Option<Special> {
        Special::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the value differs between threads of one block.
    pub fn is_thread_dependent(self) -> bool {
        matches!(self, Special::ThreadIdx | Special::LaneId | Special::WarpId)
    }
}

/// A typed scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    /// The type of the value, recorded when the expression is built.
    pub dtype: DType,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A scalar or loop register.
    Reg(RegId),
    /// An element of a local array.
    Elem(RegId, Box<Expr>),
    /// A scalar parameter.
    Param(ParamId),
    Special(Special),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// Conversion to [`Expr::dtype`].
    Cast(Box<Expr>),
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// The operand's bits read as [`Expr::dtype`] (same width, neither
    /// bool): no conversion.
    Bitcast(Box<Expr>),
}

/// Why an expression could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("operands of `{op}` have different types {lhs} and {rhs}")]
    Mismatch {
        op: &'static str,
        lhs: DType,
        rhs: DType,
    },
    #[error("`{op}` expects a {expected} operand, found {found}")]
    Operand {
        op: &'static str,
        expected: &'static str,
        found: DType,
    },
    #[error("select condition must be bool, found {0}")]
    Condition(DType),
    #[error("select arms have different types {0} and {1}")]
    SelectArms(DType, DType),
    #[error(
        "a bit cast keeps the width and needs non-bool types: {from} ({} bits) cannot be read as {to} ({} bits)",
        .from.bits(),
        .to.bits()
    )]
    BitcastWidth { from: DType, to: DType },
}

impl Expr {
    pub fn literal(lit: Literal) -> Expr {
        Expr {
            kind: ExprKind::Literal(lit),
            dtype: lit.dtype(),
        }
    }

    /// An `i32` constant.
    pub fn int(value: i32) -> Expr {
        Expr::literal(Literal::Int(i64::from(value), DType::I32))
    }

    pub fn special(s: Special) -> Expr {
        Expr {
            kind: ExprKind::Special(s),
            dtype: DType::I32,
        }
    }

    pub fn cast(dtype: DType, arg: Expr) -> Expr {
        Expr {
            kind: ExprKind::Cast(Box::new(arg)),
            dtype,
        }
    }

    /// A bit cast of `arg` to `dtype`, type-checked (same width, neither
    /// bool).
    pub fn bitcast(dtype: DType, arg: Expr) -> Result<Expr, TypeError> {
        if !crate::ir::bitcast_ok(arg.dtype, dtype) {
            return Err(TypeError::BitcastWidth {
                from: arg.dtype,
                to: dtype,
            });
        }
        Ok(Expr {
            kind: ExprKind::Bitcast(Box::new(arg)),
            dtype,
        })
    }

    /// A unary operation, type-checked.
    pub fn unary(op: UnaryOp, arg: Expr) -> Result<Expr, TypeError> {
        let dtype = unary_type(op, arg.dtype)?;
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(arg)),
            dtype,
        })
    }

    /// A binary operation, type-checked.
    pub fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Result<Expr, TypeError> {
        let dtype = binary_type(op, lhs.dtype, rhs.dtype)?;
        Ok(Expr {
            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            dtype,
        })
    }

    /// `select(cond, then, otherwise)`, type-checked.
    pub fn select(cond: Expr, then: Expr, otherwise: Expr) -> Result<Expr, TypeError> {
        if cond.dtype != DType::Bool {
            return Err(TypeError::Condition(cond.dtype));
        }
        if then.dtype != otherwise.dtype {
            return Err(TypeError::SelectArms(then.dtype, otherwise.dtype));
        }
        let dtype = then.dtype;
        Ok(Expr {
            kind: ExprKind::Select(Box::new(cond), Box::new(then), Box::new(otherwise)),
            dtype,
        })
    }

    /// The integer value, if the expression is an integer literal.
    pub fn as_const_int(&self) -> Option<i64> {
        match self.kind {
            ExprKind::Literal(Literal::Int(v, _)) => Some(v),
            _ => None,
        }
    }
}

/// The result type of a unary operator on `arg` (Tile IR's rules).
pub fn unary_type(op: UnaryOp, arg: DType) -> Result<DType, TypeError> {
    let ok = match op {
        UnaryOp::Not => arg.is_bool(),
        UnaryOp::BitNot => arg.is_int(),
        UnaryOp::Neg | UnaryOp::Abs => arg.is_int() || arg.is_float(),
        _ => arg.is_float(),
    };
    if !ok {
        let expected = match op {
            UnaryOp::Not => "bool",
            UnaryOp::BitNot => "integer",
            UnaryOp::Neg | UnaryOp::Abs => "numeric",
            _ => "floating-point",
        };
        return Err(TypeError::Operand {
            op: op.name(),
            expected,
            found: arg,
        });
    }
    Ok(if matches!(op, UnaryOp::IsNan | UnaryOp::IsInf) {
        DType::Bool
    } else {
        arg
    })
}

/// The result type of a binary operator (Tile IR's rules).
pub fn binary_type(op: BinaryOp, lhs: DType, rhs: DType) -> Result<DType, TypeError> {
    if lhs != rhs {
        return Err(TypeError::Mismatch {
            op: op.symbol(),
            lhs,
            rhs,
        });
    }
    let ok = if op.is_logical() {
        lhs.is_bool()
    } else if op.is_bitwise() {
        lhs.is_int() || (lhs.is_bool() && !matches!(op, BinaryOp::Shl | BinaryOp::Shr))
    } else if op.is_comparison() {
        true
    } else {
        !lhs.is_bool()
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
            op: op.symbol(),
            expected,
            found: lhs,
        });
    }
    Ok(if op.is_comparison() { DType::Bool } else { lhs })
}

/// A register location: a scalar register, or an element of a local array
/// (for vector moves, the first of `width` consecutive elements).
#[derive(Clone, Debug, PartialEq)]
pub enum RegRef {
    Scalar(RegId),
    Elem(RegId, Expr),
}

impl RegRef {
    pub fn reg(&self) -> RegId {
        match self {
            RegRef::Scalar(r) | RegRef::Elem(r, _) => *r,
        }
    }
}

/// A fragment operand of `mma`: `slots` consecutive elements of a local
/// array starting at a constant offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragRef {
    pub array: RegId,
    pub offset: u32,
}

/// Which dimension of a shared-memory matrix operand is contiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Major {
    /// K (the reduction dimension) is contiguous.
    K,
    /// M (for A) or N (for B) is contiguous.
    Mn,
}

/// The A operand of an `async_mma`: a matrix in shared memory read
/// through a descriptor, or the issuing group's registers in the atom's A
/// fragment (`wgmma` with A from registers). The registers must not be
/// written until the group that reads them has been retired
/// (`async_mma_wait`); the lowering never does.
#[derive(Clone, Debug, PartialEq)]
pub enum AsyncA {
    Shared(SharedMatrix),
    Registers(FragRef),
}

/// A matrix operand of `async_mma` in shared memory: the descriptor of
/// the target's canonical layouts. With `T = 16 / element bytes`, `e` the
/// element size and `W = swizzle` bytes, element (mn, k) of the operand
/// (mn the row of A or the column of B) lies at byte
/// `start + off(mn, k)` of the shared window, `start` being the byte
/// address of element `index` of `buffer`, where `off` is
/// - K-major, no swizzle: `(mn%8)·16 + (mn/8)·sbo + (k%T)·e + (k/T)·lbo`;
/// - K-major, `W`: `(mn%8)·W + (mn/8)·sbo + k·e`;
/// - MN-major, no swizzle: `(mn%T)·e + (mn/T)·sbo + (k%8)·16 + (k/8)·lbo`;
/// - MN-major, `W`: `(mn%(W/e))·e + (mn/(W/e))·lbo + (k%8)·W + (k/8)·sbo`;
///
/// and a swizzle of `W` bytes then XORs address bits 4.. with bits 7..
/// (`addr ^ ((addr >> 7) & (W/16 − 1)) << 4`), on the absolute address:
/// a swizzled operand's buffer must be aligned to `8·W` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedMatrix {
    pub buffer: SharedId,
    /// Element index of the operand's origin.
    pub index: Expr,
    pub major: Major,
    /// Swizzle span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
    /// Leading- and stride-dimension byte offsets.
    pub lbo: u32,
    pub sbo: u32,
}

impl SharedMatrix {
    /// Byte offset from the operand's start of element (mn, k), before
    /// the swizzle; `e` is the element size in bytes.
    pub fn offset(&self, mn: u64, k: u64, e: u64) -> u64 {
        let (lbo, sbo) = (u64::from(self.lbo), u64::from(self.sbo));
        let t = 16 / e.max(1);
        let w = u64::from(self.swizzle);
        match (self.major, w) {
            (Major::K, 0) => (mn % 8) * 16 + (mn / 8) * sbo + (k % t) * e + (k / t) * lbo,
            (Major::K, w) => (mn % 8) * w + (mn / 8) * sbo + k * e,
            (Major::Mn, 0) => (mn % t) * e + (mn / t) * sbo + (k % 8) * 16 + (k / 8) * lbo,
            (Major::Mn, w) => {
                let row = w / e;
                (mn % row) * e + (mn / row) * lbo + (k % 8) * w + (k / 8) * sbo
            }
        }
    }

    /// The swizzle applied to an absolute shared-memory byte address.
    pub fn swizzle_address(swizzle: u32, addr: u64) -> u64 {
        if swizzle < 32 {
            return addr;
        }
        let mask = u64::from(swizzle / 16 - 1);
        addr ^ (((addr >> 7) & mask) << 4)
    }
}

/// Which memory a load or store addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemRef {
    Global(ParamId),
    Shared(SharedId),
}

/// What a false guard does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardElse {
    /// The move does not happen; a load leaves its destination unchanged.
    Skip,
    /// The destination is filled with zeros (loads and async copies).
    Zero,
}

/// A predicate on a move.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub cond: Expr,
    pub otherwise: GuardElse,
}

/// A warp shuffle (CUDA `__shfl_*_sync` with `width`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleKind {
    /// From lane `base + arg % width` of the caller's `width`-lane group.
    Idx,
    /// From lane `lane ^ arg`; own value when that lies outside the group.
    Xor,
    /// From lane `lane - arg`; own value below the group's first lane.
    Up,
    /// From lane `lane + arg`; own value past the group's last lane.
    Down,
}

impl ShuffleKind {
    pub const ALL: [ShuffleKind; 4] = [
        ShuffleKind::Idx,
        ShuffleKind::Xor,
        ShuffleKind::Up,
        ShuffleKind::Down,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ShuffleKind::Idx => "shfl_idx",
            ShuffleKind::Xor => "shfl_xor",
            ShuffleKind::Up => "shfl_up",
            ShuffleKind::Down => "shfl_down",
        }
    }

    pub fn from_name(name: &str) -> Option<ShuffleKind> {
        ShuffleKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The unroll hint of a `for` loop (code generation only; no semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unroll {
    None,
    Full,
    By(u32),
}

/// A statement with its source span (`Span::UNKNOWN` when built in code).
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

impl Stmt {
    pub fn new(kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            span: Span::UNKNOWN,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `dst = value`.
    Assign { dst: RegRef, value: Expr },
    /// `width` elements from `src[index ..]` into registers `dst ..`.
    Load {
        width: u32,
        dst: RegRef,
        src: MemRef,
        index: Expr,
        guard: Option<Guard>,
    },
    /// `width` elements from registers `src ..` into `dst[index ..]`.
    Store {
        width: u32,
        dst: MemRef,
        index: Expr,
        src: RegRef,
        guard: Option<Guard>,
    },
    /// An asynchronous copy of `bytes` bytes from global to shared memory.
    AsyncCopy {
        bytes: u32,
        dst: SharedId,
        dst_index: Expr,
        src: ParamId,
        src_index: Expr,
        guard: Option<Guard>,
    },
    /// Closes the thread's open group of async copies.
    CommitGroup,
    /// Waits until at most `pending` committed groups are outstanding.
    WaitGroup { pending: u32 },
    /// Block-wide barrier.
    Barrier,
    /// An arrival of the running threads at numbered barrier `id` (an
    /// `i32` that may differ between warps; not 0, the block barrier's),
    /// whose rounds complete when `threads` threads
    /// have arrived; with `wait` (`bar_sync`) the threads then wait for
    /// the round to complete, without (`bar_arrive`) they go on. A round
    /// orders the participants' earlier shared-memory accesses before the
    /// waiting threads' later ones. Unlike `barrier`, allowed under
    /// thread-dependent conditions: it synchronises warp roles.
    NamedBarrier { id: Expr, threads: u32, wait: bool },
    /// Sets the running warps' per-thread register maximum to `count`,
    /// taking registers from the block's pool (`increase`, waiting until
    /// they are free) or giving them back: how warp roles share the
    /// register file. Run by whole groups of the target's reallocation
    /// granularity (a warpgroup); no effect on values.
    SetMaxRegisters { count: u32, increase: bool },
    Shuffle {
        kind: ShuffleKind,
        dst: RegRef,
        value: Expr,
        lane: Expr,
        width: u32,
    },
    /// `dst[index] = op(dst[index], value)`, atomically (`op` as in the
    /// Tile IR: for max and min, `value` replaces the element only when it
    /// compares greater, resp. less).
    Atomic {
        op: AtomicOp,
        dst: ParamId,
        index: Expr,
        value: Expr,
        guard: Option<Guard>,
    },
    /// `d = a · b + c` through the named matrix atom.
    Mma {
        atom: String,
        /// N for atoms with an N family; `None` for the described N.
        n: Option<u32>,
        d: FragRef,
        a: FragRef,
        b: FragRef,
        c: FragRef,
    },
    /// `d = a · b (+ d when accumulate)` through the named matrix atom with
    /// shared-memory operands (wgmma): issued by a whole issuing group
    /// (every thread of it active, the operands uniform over it), with A
    /// and B read from shared memory in one of the target's canonical
    /// layouts ([`SharedMatrix`]) and D in the group's local arrays laid
    /// out by the accumulator fragment. The operation is asynchronous: D
    /// may not be read or written until an `async_mma_wait` retires the
    /// group the statement was committed in, except by further
    /// `async_mma`s into the same D.
    AsyncMma {
        atom: String,
        n: u32,
        d: FragRef,
        a: AsyncA,
        b: SharedMatrix,
        /// A boolean: `false` makes D = A·B, ignoring D's old value.
        accumulate: Expr,
    },
    /// Orders earlier register writes before the following `async_mma`s
    /// (`wgmma.fence`).
    AsyncMmaFence,
    /// Stops the kernel with an error: the launch fails (PTX `trap`,
    /// `llvm.trap`). A `T.device_assert` whose condition is false.
    Trap,
    /// Closes the thread's open group of `async_mma`s.
    AsyncMmaCommit,
    /// Waits until at most `pending` committed `async_mma` groups of the
    /// thread are outstanding.
    AsyncMmaWait { pending: u32 },
    /// Initialises the phased barrier `bar[index]` (an 8-byte shared
    /// object) to expect `count` arrivals per phase, in phase 0 with no
    /// pending transactions.
    MbarrierInit {
        bar: SharedId,
        index: Expr,
        count: Expr,
    },
    /// One arrival on `bar[index]`; with `tx`, first adds `tx` bytes to
    /// the transactions the current phase waits for (`expect_tx`). A phase
    /// completes when all its arrivals are in and its transaction count is
    /// back to zero.
    MbarrierArrive {
        bar: SharedId,
        index: Expr,
        tx: Option<Expr>,
    },
    /// One arrival on `bar[index]` once every async copy the thread issued
    /// before has completed (`cp.async.mbarrier.arrive.noinc`): the
    /// copies' data is published with the arrival, and the thread does not
    /// wait for it.
    AsyncCopyArrive { bar: SharedId, index: Expr },
    /// Waits until the phase of `bar[index]` whose parity is `parity`
    /// (0 or 1) has completed, i.e. while the barrier's current phase has
    /// that parity. Completing the wait makes the writes its phase
    /// tracked (`tma_load`s) visible to the waiting thread.
    MbarrierWait {
        bar: SharedId,
        index: Expr,
        parity: Expr,
    },
    /// A bulk tensor copy: the box of `map` at `coords` (element
    /// coordinates of the global buffer, outermost first) into shared
    /// memory from element `dst_index` of `dst` on, laid out and swizzled
    /// as the map says; elements outside the buffer read as zero. The
    /// copy is asynchronous: it counts its bytes (the whole box) against
    /// the transactions of `bar[bar_index]`'s current phase, and its
    /// elements may be read only after a wait that saw that phase
    /// complete. One thread issues it.
    TmaLoad {
        map: TensorMapId,
        dst: SharedId,
        dst_index: Expr,
        coords: Vec<Expr>,
        bar: SharedId,
        bar_index: Expr,
    },
    /// A warp-wide load of `count` small matrices from shared memory
    /// through the target's matrix load named `load` (`ldmatrix`). Lane
    /// `rows·j + r` supplies, as `index`, the element index in `src` where
    /// row `r` of matrix `j` starts; every lane then receives, for each
    /// matrix `j`, the elements the load's fragment (its transposed
    /// fragment with `trans`) maps it to, into `dst.array[dst.offset +
    /// per·j ..]` with `per` elements per lane and matrix. Every lane of
    /// each warp that runs it must be active.
    MatrixLoad {
        load: String,
        count: u32,
        trans: bool,
        dst: FragRef,
        src: SharedId,
        index: Expr,
    },
    /// A warp-wide store of `count` small matrices into shared memory
    /// through the target's matrix store named `store` (`stmatrix`), the
    /// mirror of [`StmtKind::MatrixLoad`]: lane `rows·j + r` supplies, as
    /// `index`, the element index in `dst` where row `r` of matrix `j`
    /// starts; every lane provides, for each matrix `j`, the elements the
    /// store's fragment (its transposed fragment with `trans`) maps it to,
    /// from `src.array[src.offset + per·j ..]`. Every lane of each warp that
    /// runs it must be active.
    MatrixStore {
        store: String,
        count: u32,
        trans: bool,
        dst: SharedId,
        index: Expr,
        src: FragRef,
    },
    /// `var` runs over `start + i·step` for `i` in `0 .. count`.
    For {
        var: RegId,
        start: Expr,
        count: Expr,
        step: Expr,
        unroll: Unroll,
        body: Vec<Stmt>,
    },
    If {
        cond: Expr,
        then_body: Vec<Stmt>,
        else_body: Option<Vec<Stmt>>,
    },
}

/// The position of a statement: its index in each enclosing body,
/// outermost first, with `0` (then) or `1` (else) inserted after the index
/// of an `if`; a `for` body's indices follow the loop's directly. Printed
/// as `#3.0.1`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StmtPath(pub Vec<u32>);

impl std::fmt::Display for StmtPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        write!(f, "#{}", parts.join("."))
    }
}

/// The line (1-based) of a byte offset in `src`, for reporting spans.
pub fn line_of(src: &str, offset: u32) -> u32 {
    let end = (offset as usize).min(src.len());
    let mut line = 1u32;
    for (i, b) in src.bytes().enumerate() {
        if i >= end {
            break;
        }
        if b == b'\n' {
            line = line.saturating_add(1);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(expr_text: &str) -> String {
        let src = format!(
            "thread_ir 0.1\n\nkernel @k(%n: i32) grid(1, 1, 1) threads(32) {{\n  var %x: i32\n  %x = {expr_text}\n}}\n"
        );
        let module = match parse_module(&src) {
            Ok(m) => m,
            Err(e) => return format!("error {e}"),
        };
        let printed = print_module(&module);
        let line = printed.lines().nth(4).unwrap_or("").trim().to_string();
        line.strip_prefix("%x = ").unwrap_or(&line).to_string()
    }

    #[test]
    fn expressions_print_with_minimal_parentheses() {
        for text in [
            "(%n + 1) * 2",
            "%n + 1 * 2",
            "%n - (1 - 2)",
            "%n - 1 - 2",
            "-5",
            "-(5)",
            "--%n",
            "%n // 4 % 2",
            "%n % (4 // 2)",
            "select(%n < 0, -1, 1)",
            "min(%n, 3) << 2",
            "cast<i32>(f32(-1.5)) + 7 + thread_idx",
            "%n * -5",
            "bitcast<i32>(f32(1.0)) + bitcast<i32>(cast<u32>(%n))",
        ] {
            assert_eq!(round_trip(text), text, "{text}");
        }
        assert_eq!(round_trip("((%n))"), "%n");
        // A non-canonical spelling reads back canonically.
        assert_eq!(round_trip("i32(7)"), "7");
        assert_eq!(
            round_trip("2147483648"),
            "error 5:8: `2147483648` does not fit in i32"
        );
        assert_eq!(round_trip("-2147483648"), "-2147483648");
        assert_eq!(
            round_trip("bitcast<i32>(cast<f16>(%n))"),
            "error 5:8: a bit cast keeps the width and needs non-bool types: f16 (16 bits) cannot be read as i32 (32 bits)"
        );
    }

    #[test]
    fn literal_forms_round_trip() {
        let src = "thread_ir 0.1\n\nkernel @k() grid(1, 1, 1) threads(32) {\n  var %f: f32\n  var %d: f64\n  var %u: u64\n  var %h: f16\n  %f = f32(-inf)\n  %f = f32(nan)\n  %d = f64(1e-20)\n  %u = u64(18446744073709551615)\n  %h = f16(65504.0)\n}\n";
        let module = parse_module(src).map_err(|e| e.to_string());
        assert_eq!(module.map(|m| print_module(&m)), Ok(src.to_string()));
    }
}
