//! Stable diagnostic codes of the Python front end.
//!
//! Codes never change meaning once released; `docs/diagnostics.md` explains
//! each one with an example and what to do. `T00xx`: syntax, `T01xx`:
//! compile-time Python, `T02xx`: kernel selection, `T03xx`: TileLang
//! semantics, `T04xx`: IR verification, `W0xxx`: warnings.

/// The file is not valid Python.
pub const SYNTAX: &str = "T0001";

/// A Python construct the evaluator does not support (classes, `try`,
/// generators, ...).
pub const UNSUPPORTED_PYTHON: &str = "T0100";
/// A name is not defined.
pub const UNDEFINED_NAME: &str = "T0101";
/// Wrong number, names or kinds of call arguments.
pub const BAD_ARGUMENTS: &str = "T0102";
/// An operation is applied to values of the wrong type.
pub const TYPE_ERROR: &str = "T0103";
/// An attribute does not exist.
pub const NO_ATTRIBUTE: &str = "T0104";
/// A value that is not callable is called.
pub const NOT_CALLABLE: &str = "T0105";
/// A compile-time `assert` failed.
pub const ASSERTION_FAILED: &str = "T0106";
/// Division by zero or overflow in compile-time arithmetic.
pub const COMPILE_TIME_ARITHMETIC: &str = "T0107";
/// A name whose module-level definition failed is used.
pub const POISONED_NAME: &str = "T0108";
/// Evaluation did not finish within the limits (recursion, loop count).
pub const EVAL_LIMIT: &str = "T0109";
/// An expression (or the source around it) nests deeper than the limit.
pub const EXPR_TOO_DEEP: &str = "T0114";
/// Index or key out of range in a compile-time list, tuple, dict or string.
pub const INDEX_ERROR: &str = "T0110";
/// A build-time device query (`torch.cuda.get_device_capability()`,
/// `driver.get_num_sms()`) the compile target cannot answer.
pub const DEVICE_QUERY: &str = "T0111";
/// A value of a build-time torch tensor that is not known at compile time.
pub const UNKNOWN_TENSOR_VALUES: &str = "T0112";

/// No kernel could be selected from the file.
pub const NO_KERNEL: &str = "T0200";
/// Several builders could be the kernel: `--kernel` must choose.
pub const AMBIGUOUS_KERNEL: &str = "T0201";
/// The `--kernel` expression or a `-D` value is not valid.
pub const BAD_SELECTION: &str = "T0202";
/// A builder parameter has no value (no default, no argument, no `-D`).
pub const MISSING_PARAMETER: &str = "T0203";

/// A TileLang API that tilec does not support.
pub const UNSUPPORTED_TILELANG: &str = "T0300";
/// A dtype that is not known or cannot be used here.
pub const BAD_DTYPE: &str = "T0301";
/// The extents of a copy (or atomic) source and destination disagree.
pub const COPY_SHAPE: &str = "T0302";
/// `T.gemm` operand shapes or scopes are not valid.
pub const GEMM_SHAPE: &str = "T0303";
/// A reduction or scan has an invalid dim or output shape.
pub const REDUCE_SHAPE: &str = "T0304";
/// A fragment is indexed in a way that does not map onto threads.
pub const FRAGMENT_INDEX: &str = "T0305";
/// A compile-time value was required but a run-time IR value was given.
pub const NOT_CONSTANT: &str = "T0306";
/// Operand types of a staged expression do not fit together.
pub const IR_TYPE: &str = "T0307";
/// A construct appears where it is not allowed (a tile op outside
/// `T.Kernel`, a kernel inside a kernel, ...).
pub const PLACEMENT: &str = "T0308";
/// An invalid argument to a TileLang construct (non-constant thread count,
/// a bad loop range, ...).
pub const BAD_TILELANG_ARGUMENT: &str = "T0309";
/// An assignment target that cannot be written.
pub const BAD_ASSIGNMENT: &str = "T0310";
/// A buffer subscript is not valid (too many indices, a step, ...).
pub const BAD_SUBSCRIPT: &str = "T0311";

/// A run-time value is used after the `if`, loop or kernel that computed it.
pub const OUT_OF_SCOPE: &str = "T0312";

/// An index of a register-resident buffer provably leaves its extent.
pub const INDEX_OUT_OF_BOUNDS: &str = "T0313";

/// The produced IR breaks an invariant the verifier checks.
pub const VERIFY: &str = "T0400";

/// A construct is accepted but has no effect in tilec.
pub const IGNORED: &str = "W0001";

/// A `@T.prim_func` without a `T.Kernel` is staged as one thread of a
/// single block.
pub const SINGLE_THREAD: &str = "W0002";

/// A value type tilec carries with more precision than TileLang
/// (`T.tfloat32` as `T.float32`).
pub const MORE_PRECISE: &str = "W0003";
/// Every thread of the block arrives at a barrier of a smaller count.
pub const OVER_ARRIVAL: &str = "W0004";
