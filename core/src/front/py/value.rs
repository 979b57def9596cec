//! Values of the partial evaluator.
//!
//! A [`Value`] is either an ordinary compile-time Python value (ints, floats,
//! strings, tuples, lists, dicts, functions, ...) or a *staged* value that
//! stands for IR being built: a scalar IR expression, a buffer, a subscript of
//! a buffer, a finished kernel. Python-level operations on plain values run
//! here; anything touching a staged value is handed to the stager.

use super::codes;
use crate::front::Diagnostic;
use crate::ir::{self, DType, GemmPolicy, Handle, Span};
use rustpython_ruff_python_ast as ast;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

pub(crate) type EResult<T> = Result<T, Box<Diagnostic>>;

/// A scope of Python names. Scopes form a chain to the module scope.
#[derive(Debug, Default)]
pub(crate) struct Scope<'a> {
    pub vars: RefCell<BTreeMap<String, Value<'a>>>,
    pub parent: Option<Rc<Scope<'a>>>,
}

impl<'a> Scope<'a> {
    pub fn child(parent: &Rc<Scope<'a>>) -> Rc<Scope<'a>> {
        Rc::new(Scope {
            vars: RefCell::default(),
            parent: Some(parent.clone()),
        })
    }

    pub fn lookup(&self, name: &str) -> Option<Value<'a>> {
        if let Some(v) = self.vars.borrow().get(name) {
            return Some(v.clone());
        }
        self.parent.as_ref().and_then(|p| p.lookup(name))
    }

    pub fn set(&self, name: &str, value: Value<'a>) {
        self.vars.borrow_mut().insert(name.to_string(), value);
    }
}

/// A user-defined Python function (a `def` or a `lambda`) with the scope it
/// closes over and its evaluated default values.
#[derive(Debug)]
pub(crate) struct Closure<'a> {
    pub name: String,
    /// Where the function's name is written (its whole span for lambdas).
    pub name_span: Span,
    pub params: &'a ast::Parameters,
    pub body: FunctionBody<'a>,
    pub defaults: Vec<(String, Value<'a>)>,
    pub scope: Rc<Scope<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum FunctionBody<'a> {
    Def(&'a ast::StmtFunctionDef),
    Lambda(&'a ast::Expr),
}

impl<'a> Closure<'a> {
    /// Names of the ordinary parameters, in order.
    pub fn param_names(&self) -> Vec<String> {
        self.params
            .posonlyargs
            .iter()
            .chain(self.params.args.iter())
            .chain(self.params.kwonlyargs.iter())
            .map(|p| p.parameter.name.id.to_string())
            .collect()
    }
}

/// A compiled kernel: the result of staging a `@T.prim_func`.
#[derive(Debug)]
pub(crate) struct KernelValue {
    pub function: ir::Function,
    /// Warnings about its loops' lists, decided on the finished function
    /// (`Stager::list_warnings`).
    pub list_warnings: Vec<(Handle<ir::Var>, Diagnostic)>,
}

/// `@tilelang.jit(...)` around a builder, an eager kernel or a prim_func.
#[derive(Debug)]
pub(crate) struct JitValue<'a> {
    pub inner: Value<'a>,
    pub out_idx: Option<Vec<i64>>,
    pub pass_configs: BTreeMap<String, String>,
    pub span: Span,
}

/// `@autotune(configs=...)` around a builder.
#[derive(Debug)]
pub(crate) struct AutotuneValue<'a> {
    pub inner: Value<'a>,
    pub configs: Value<'a>,
}

/// One item of a buffer subscript.
#[derive(Debug, Clone)]
pub(crate) enum IndexItem {
    /// A single index.
    Point(Handle<ir::Expr>),
    /// `start:stop` (`None` = the dimension's bound).
    Slice {
        start: Option<Handle<ir::Expr>>,
        stop: Option<Handle<ir::Expr>>,
    },
}

/// `buffer[items]`: a scalar element when every item is a point and the
/// count equals the rank, otherwise a region (or a head address for tile
/// operations).
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub buffer: Handle<ir::Buffer>,
    pub items: Vec<IndexItem>,
    pub span: Span,
}

/// `T.Kernel(...)`: what a `with` statement opens.
#[derive(Debug, Clone)]
pub(crate) struct LaunchSpec {
    pub grid: Vec<Handle<ir::Expr>>,
    pub threads: u32,
    /// The extents of `threadIdx.x/y/z` (`threads=(x, y, z)`); their
    /// product is `threads`.
    pub dims: [u32; 3],
}

/// A shared-memory layout made by a `tilelang.layout` constructor, for
/// `T.annotate_layout`.
#[derive(Debug, Clone)]
pub(crate) struct LayoutSpec {
    /// The buffer the constructor was given (`T.Layout` and `T.Fragment`
    /// take a shape instead).
    pub buffer: Option<Handle<ir::Buffer>>,
    pub kind: LayoutKind,
    /// The constructor call.
    pub span: Span,
}

/// What a layout constructor asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LayoutKind {
    /// XOR-swizzled rows `width` bytes wide, or as wide as the rows allow
    /// (at most 128 bytes) when `None`.
    Swizzled { width: Option<u64> },
    /// Dense row-major rows.
    Linear,
    /// `T.Layout(shape, f)`: the offset `f` gives every element of `shape`
    /// (row-major over the extents of its results), in row-major order,
    /// and the function as an index map when it has that form
    /// (`tl::symbolic_map`).
    Map {
        shape: Vec<i64>,
        offsets: Rc<[u64]>,
        map: Option<crate::layout::IndexMap>,
    },
    /// `T.Fragment(...)`: a distribution over threads, which the lowering
    /// chooses itself.
    Fragment,
}

/// The iterable of a staged loop (`T.Pipelined`, `T.Parallel`, `range`...).
#[derive(Debug, Clone)]
pub(crate) struct LoopSpec {
    pub kind: LoopSpecKind,
    /// `T.Pipelined(group=...)`: the statements each entry of `order` and
    /// `stage` stands for, expanded once the body is staged.
    pub group: Option<Vec<Vec<i64>>>,
    /// One (start, extent) per loop variable; only `Parallel` has several.
    /// With a `step`, the extent counts iterations.
    pub ranges: Vec<(Handle<ir::Expr>, Handle<ir::Expr>)>,
    /// `T.serial(start, stop, step)` with a constant step above 1: the
    /// IR loop counts `0 .. ceil((stop - start) / step)` and the Python
    /// name stands for `start + step * counter`.
    pub step: Option<i64>,
}

#[derive(Debug, Clone)]
pub(crate) enum LoopSpecKind {
    Serial(ir::LoopKind),
    Parallel,
    /// `T.Parallel` over run-time extents with compile-time bounds: per
    /// variable, the run-time extent where `ranges` holds its bound; the
    /// body runs where every variable is below its extent.
    ParallelGuarded(Vec<Option<Handle<ir::Expr>>>),
}

/// `T.Tensor(shape, dtype)` / `T.Buffer(...)` used as a type annotation.
#[derive(Debug, Clone)]
pub(crate) struct TensorType<'a> {
    pub shape: Vec<Value<'a>>,
    pub dtype: DType,
}

/// A compile-time value.
#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<[Value<'a>]>),
    List(Rc<RefCell<Vec<Value<'a>>>>),
    Dict(Rc<RefCell<Vec<(Value<'a>, Value<'a>)>>>),
    /// A Python slice object, as it appears inside a subscript.
    Slice(Rc<[Option<Value<'a>>; 3]>),
    Function(Rc<Closure<'a>>),
    /// A function implemented by the evaluator, by qualified name
    /// (`range`, `T.copy`, `math.sqrt`, ...).
    Builtin(&'static str),
    /// A built-in method bound to its receiver (`lst.append`, `x.astype`).
    Method(Rc<Value<'a>>, &'static str),
    /// A module or namespace (`T`, `tilelang`, `torch`, `T.GemmWarpPolicy`).
    Module(&'static str),
    /// A module we do not model; attributes are opaque.
    OpaqueModule(Rc<str>),
    /// A helper module of the kernel file, run by the evaluator
    /// (`user_modules.rs`).
    UserModule(Rc<super::user_modules::UserModule<'a>>),
    DType(DType),
    Policy(GemmPolicy),
    /// A staged scalar expression.
    Expr(Handle<ir::Expr>),
    /// A staged buffer.
    Buffer(Handle<ir::Buffer>),
    /// A buffer's storage under another shape (`views.rs`).
    View(Rc<super::views::View>),
    /// A subscript of a view, resolved where it is used.
    ViewAccess(Rc<super::views::ViewAccess>),
    Access(Rc<Access>),
    /// A vector of `T.Broadcast` / `T.Ramp`, as its lanes (`vector.rs`).
    Vector(Rc<super::vector::Lanes>),
    /// `T.access_ptr(...)`, an argument of `T.ptx_cp_async` (`cp_async.rs`).
    Pointer(Rc<super::cp_async::Pointer>),
    Kernel(Rc<KernelValue>),
    Jit(Rc<JitValue<'a>>),
    Autotune(Rc<AutotuneValue<'a>>),
    Macro(Rc<Closure<'a>>),
    Launch(Rc<LaunchSpec>),
    /// `T.ws(...)`: the warp groups (sorted, distinct) a `with` body runs on.
    Role(Rc<[u32]>),
    /// A layout from `tilelang.layout` for `T.annotate_layout`.
    Layout(Rc<LayoutSpec>),
    Loop(Rc<LoopSpec>),
    TensorType(Rc<TensorType<'a>>),
    /// A symbolic size made by `T.dynamic` / `T.symbolic` / an unbound
    /// `T.const`, possibly before any kernel is being staged; it becomes a
    /// symbolic variable of the function that uses it.
    Symbol(Rc<str>, DType),
    /// A class the file defines (`pyclass.rs`).
    Class(Rc<super::pyclass::PyClass<'a>>),
    /// An instance of a class.
    Object(Rc<super::pyclass::PyObject<'a>>),
    /// A method bound to its instance (or a classmethod to its class).
    BoundMethod(Rc<Value<'a>>, Rc<Closure<'a>>),
    /// `super(Class, obj)`.
    Super(
        Rc<super::pyclass::PyClass<'a>>,
        Rc<super::pyclass::PyObject<'a>>,
    ),
    /// A torch tensor made at build time (`torch_tensor.rs`).
    Torch(Rc<super::torch_tensor::TorchTensor>),
    /// Something we cannot model (a torch call result, an unknown attribute);
    /// using it is an error naming what it was.
    Opaque(Rc<str>),
    /// A name whose definition failed. Using it reports the stored error (or
    /// nothing, when the error was already reported).
    Poison(Option<Rc<Diagnostic>>),
}

/// The builtin a module's table of `T.*` names gives `name` (pairs of the
/// short name and the builtin's qualified name).
pub(crate) fn table_builtin<'a>(table: &[(&str, &'static str)], name: &str) -> Option<Value<'a>> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, full)| Value::Builtin(full))
}

/// Whether a module's table of `T.*` names holds `name`.
pub(crate) fn table_has(table: &[(&str, &'static str)], name: &str) -> bool {
    table.iter().any(|(n, _)| *n == name)
}

impl<'a> Value<'a> {
    // The constructors charge what they hold to the build-time budgets
    // (`budget.rs`), which the evaluator checks after each expression.
    pub fn str(s: &str) -> Self {
        super::budget::charge_str(s.len());
        Value::Str(Rc::from(s))
    }

    pub fn tuple(items: Vec<Value<'a>>) -> Self {
        super::budget::charge_elements(items.len());
        Value::Tuple(Rc::from(items))
    }

    pub fn list(items: Vec<Value<'a>>) -> Self {
        super::budget::charge_elements(items.len());
        Value::List(Rc::new(RefCell::new(items)))
    }

    /// A dict of `items` (distinct keys).
    pub fn dict(items: Vec<(Value<'a>, Value<'a>)>) -> Self {
        super::budget::charge_elements(items.len().saturating_mul(2));
        Value::Dict(Rc::new(RefCell::new(items)))
    }

    /// Python's type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Slice(_) => "slice",
            Value::Function(_) => "function",
            Value::Builtin(_) | Value::Method(..) => "builtin function",
            Value::Module(_) | Value::OpaqueModule(_) | Value::UserModule(_) => "module",
            Value::DType(_) => "dtype",
            Value::Policy(_) => "GemmWarpPolicy",
            Value::Expr(_) => "IR expression",
            Value::Buffer(_) | Value::View(_) => "buffer",
            Value::ViewAccess(_) => "buffer subscript",
            Value::Access(_) => "buffer subscript",
            Value::Vector(_) => "vector (`T.Broadcast` / `T.Ramp`)",
            Value::Pointer(_) => "T.access_ptr pointer",
            Value::Kernel(_) => "prim_func",
            Value::Jit(_) => "jit kernel",
            Value::Autotune(_) => "autotuned kernel",
            Value::Macro(_) => "macro",
            Value::Launch(_) => "T.Kernel",
            Value::Role(_) => "T.ws",
            Value::Layout(_) => "layout",
            Value::Loop(_) => "loop range",
            Value::TensorType(_) => "T.Tensor type",
            Value::Symbol(..) => "symbolic size",
            Value::Class(_) => "class",
            Value::Object(_) => "object",
            Value::BoundMethod(..) => "method",
            Value::Super(..) => "super object",
            Value::Torch(_) => "torch tensor",
            Value::Opaque(_) => "opaque value",
            Value::Poison(_) => "undefined value",
        }
    }

    /// The type name with its indefinite article, for messages ("an int").
    pub fn a_type_name(&self) -> String {
        let name = self.type_name();
        let vowel = name.starts_with(['a', 'e', 'i', 'o', 'u', 'I']);
        format!("{} {name}", if vowel { "an" } else { "a" })
    }

    /// Whether the value exists only while staging (an IR-level value).
    pub fn is_staged(&self) -> bool {
        matches!(
            self,
            Value::Expr(_)
                | Value::Buffer(_)
                | Value::Access(_)
                | Value::Symbol(..)
                | Value::View(_)
                | Value::ViewAccess(_)
        )
    }

    /// Python truthiness for plain values; `None` for staged values.
    pub fn truthy(&self) -> Option<bool> {
        Some(match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Expr(_)
            | Value::Access(_)
            | Value::Buffer(_)
            | Value::View(_)
            | Value::ViewAccess(_)
            | Value::Symbol(..)
            | Value::Poison(_) => {
                return None;
            }
            _ => true,
        })
    }

    /// A number as f64, for int, float and bool.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// An int (bools count, as in Python).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Bool(b) => Some(i64::from(*b)),
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The elements of a tuple or list.
    pub fn as_sequence(&self) -> Option<Vec<Value<'a>>> {
        match self {
            Value::Tuple(t) => Some(t.to_vec()),
            Value::List(l) => Some(l.borrow().clone()),
            _ => None,
        }
    }

    /// An approximation of Python's `repr`.
    pub fn repr(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => float_repr(*f),
            Value::Str(s) => format!("{:?}", &**s).replace('"', "'"),
            Value::Tuple(t) => {
                let mut out = String::from("(");
                repr_items(&mut out, t.iter().map(Value::repr));
                if t.len() == 1 {
                    out.push(',');
                }
                out.push(')');
                out
            }
            Value::List(l) => {
                let mut out = String::from("[");
                repr_items(&mut out, l.borrow().iter().map(Value::repr));
                out.push(']');
                out
            }
            Value::Dict(d) => {
                let mut out = String::from("{");
                let d = d.borrow();
                repr_items(
                    &mut out,
                    d.iter().map(|(k, v)| format!("{}: {}", k.repr(), v.repr())),
                );
                out.push('}');
                out
            }
            Value::DType(d) => format!("'{}'", d.tilelang_name()),
            Value::Policy(p) => format!("GemmWarpPolicy.{}", policy_python_name(*p)),
            Value::Function(f) => format!("<function {}>", f.name),
            Value::Builtin(n) => format!("<built-in {n}>"),
            Value::Opaque(what) => format!("<{what}>"),
            Value::UserModule(m) => format!("<module '{}'>", m.name),
            other => format!("<{}>", other.type_name()),
        }
    }

    /// Python `str()`.
    pub fn to_py_str(&self) -> String {
        match self {
            Value::Str(s) => s.to_string(),
            Value::DType(d) => d.tilelang_name().to_string(),
            other => other.repr(),
        }
    }
}

/// Appends `items` separated by `, `, stopping with `...` once the text
/// passes the room left in the byte budget (`budget::room`), so that the
/// repr of many references to one large value is never built whole.
fn repr_items(out: &mut String, items: impl Iterator<Item = String>) {
    let room = super::budget::room();
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&item);
        if out.len() > room {
            out.push_str("...");
            return;
        }
    }
}

pub(crate) fn policy_python_name(p: GemmPolicy) -> &'static str {
    match p {
        GemmPolicy::Square => "Square",
        GemmPolicy::FullRow => "FullRow",
        GemmPolicy::FullCol => "FullCol",
    }
}

/// Python's float repr (shortest round-trip, always with a `.` or exponent).
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let mut s = format!("{f:?}");
    if !s.contains(['.', 'e', 'E']) {
        let _ = write!(s, ".0");
    }
    s
}

/// Python equality on plain values (`==`). Staged values never get here.
pub(crate) fn py_eq<'a>(a: &Value<'a>, b: &Value<'a>) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Str(x), Value::DType(d)) | (Value::DType(d), Value::Str(x)) => {
            DType::from_tilelang_name(x) == Some(*d)
        }
        (Value::DType(x), Value::DType(y)) => x == y,
        (Value::Policy(x), Value::Policy(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (Value::List(x), Value::List(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (Value::Builtin(x), Value::Builtin(y)) => x == y,
        (Value::Module(x), Value::Module(y)) => x == y,
        (Value::Function(x), Value::Function(y)) => Rc::ptr_eq(x, y),
        _ => match (a.as_number(), b.as_number()) {
            (Some(x), Some(y)) => {
                // Compare ints exactly, not through f64.
                match (a.as_int(), b.as_int()) {
                    (Some(i), Some(j)) => i == j,
                    _ => x == y,
                }
            }
            _ => false,
        },
    }
}

/// Python ordering comparison on plain values; `None` when the types do not
/// order.
pub(crate) fn py_cmp<'a>(a: &Value<'a>, b: &Value<'a>) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Tuple(x), Value::Tuple(y)) => seq_cmp(x, y),
        (Value::List(x), Value::List(y)) => seq_cmp(&x.borrow(), &y.borrow()),
        _ => match (a.as_int(), b.as_int()) {
            (Some(i), Some(j)) => Some(i.cmp(&j)),
            _ => a.as_number()?.partial_cmp(&b.as_number()?),
        },
    }
}

fn seq_cmp<'a>(x: &[Value<'a>], y: &[Value<'a>]) -> Option<std::cmp::Ordering> {
    for (p, q) in x.iter().zip(y.iter()) {
        if !py_eq(p, q) {
            return py_cmp(p, q);
        }
    }
    Some(x.len().cmp(&y.len()))
}

/// Binary operators of Python, as the evaluator names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PyBinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitAnd,
    BitOr,
    BitXor,
    MatMul,
}

impl PyBinOp {
    pub fn from_ast(op: ast::Operator) -> Self {
        match op {
            ast::Operator::Add => PyBinOp::Add,
            ast::Operator::Sub => PyBinOp::Sub,
            ast::Operator::Mult => PyBinOp::Mul,
            ast::Operator::MatMult => PyBinOp::MatMul,
            ast::Operator::Div => PyBinOp::Div,
            ast::Operator::Mod => PyBinOp::Mod,
            ast::Operator::Pow => PyBinOp::Pow,
            ast::Operator::LShift => PyBinOp::LShift,
            ast::Operator::RShift => PyBinOp::RShift,
            ast::Operator::BitOr => PyBinOp::BitOr,
            ast::Operator::BitXor => PyBinOp::BitXor,
            ast::Operator::BitAnd => PyBinOp::BitAnd,
            ast::Operator::FloorDiv => PyBinOp::FloorDiv,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            PyBinOp::Add => "+",
            PyBinOp::Sub => "-",
            PyBinOp::Mul => "*",
            PyBinOp::Div => "/",
            PyBinOp::FloorDiv => "//",
            PyBinOp::Mod => "%",
            PyBinOp::Pow => "**",
            PyBinOp::LShift => "<<",
            PyBinOp::RShift => ">>",
            PyBinOp::BitAnd => "&",
            PyBinOp::BitOr => "|",
            PyBinOp::BitXor => "^",
            PyBinOp::MatMul => "@",
        }
    }
}

fn overflow(span: Span, op: PyBinOp) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::COMPILE_TIME_ARITHMETIC,
            format!("integer overflow in compile-time `{}`", op.symbol()),
            span,
        )
        .with_label("the result does not fit in 64 bits")
        .with_note("compile-time integers are 64-bit in tilec"),
    )
}

fn zero_division(span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::COMPILE_TIME_ARITHMETIC,
            "division by zero in compile-time arithmetic",
            span,
        )
        .with_label("the divisor is zero"),
    )
}

pub(crate) fn floor_div_i64(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        Some(q - 1)
    } else {
        Some(q)
    }
}

pub(crate) fn floor_mod_i64(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        Some(r + b)
    } else {
        Some(r)
    }
}

/// Applies a binary operator to two plain Python values. Returns `Ok(None)`
/// when the operand types are not supported by Python for this operator.
pub(crate) fn py_binop<'a>(
    op: PyBinOp,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
) -> EResult<Option<Value<'a>>> {
    // Sequences and strings.
    match (op, a, b) {
        (PyBinOp::Add, Value::Str(x), Value::Str(y)) => {
            super::budget::grow_str(x.len() + y.len(), "`+` of two strings", span)?;
            return Ok(Some(Value::Str(Rc::from(format!("{x}{y}")))));
        }
        (PyBinOp::Add, Value::Tuple(x), Value::Tuple(y)) => {
            super::budget::grow_elements(x.len() + y.len(), "`+` of two tuples", span)?;
            let mut v = x.to_vec();
            v.extend(y.iter().cloned());
            return Ok(Some(Value::Tuple(Rc::from(v))));
        }
        (PyBinOp::Add, Value::List(x), Value::List(y)) => {
            let n = x.borrow().len() + y.borrow().len();
            super::budget::grow_elements(n, "`+` of two lists", span)?;
            let mut v = x.borrow().clone();
            v.extend(y.borrow().iter().cloned());
            return Ok(Some(Value::List(Rc::new(RefCell::new(v)))));
        }
        (PyBinOp::Mul, Value::List(_) | Value::Tuple(_) | Value::Str(_), Value::Int(_))
        | (PyBinOp::Mul, Value::Int(_), Value::List(_) | Value::Tuple(_) | Value::Str(_)) => {
            let (seq, n) = if let Value::Int(n) = b {
                (a, *n)
            } else {
                (b, a.as_int().unwrap_or(0))
            };
            let n = usize::try_from(n.max(0)).unwrap_or(0);
            let len = match seq {
                Value::Str(s) => s.len(),
                Value::Tuple(t) => t.len(),
                Value::List(l) => l.borrow().len(),
                _ => 0,
            };
            // Compile-time sequences stay small: refuse results over 2^20
            // elements instead of exhausting memory.
            if len.saturating_mul(n) > 1 << 20 {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::EVAL_LIMIT,
                        format!(
                            "`{}` would build a sequence of {len} × {n} elements",
                            op.symbol()
                        ),
                        span,
                    )
                    .with_label("too large for compile-time evaluation"),
                ));
            }
            let what = format!("`{}` of {}", op.symbol(), seq.a_type_name());
            match seq {
                Value::Str(_) => super::budget::grow_str(len * n, &what, span)?,
                _ => super::budget::grow_elements(len * n, &what, span)?,
            }
            return Ok(Some(match seq {
                Value::Str(s) => Value::Str(Rc::from(s.repeat(n))),
                Value::Tuple(t) => {
                    Value::Tuple(t.iter().cloned().cycle().take(t.len() * n).collect())
                }
                Value::List(l) => {
                    let l = l.borrow();
                    Value::List(Rc::new(RefCell::new(
                        l.iter().cloned().cycle().take(l.len() * n).collect(),
                    )))
                }
                _ => return Ok(None),
            }));
        }
        (PyBinOp::Mod, Value::Str(fmt), _) => {
            return Ok(Some(Value::str(&percent_format(fmt, b))));
        }
        _ => {}
    }
    // Numbers. Bools behave as ints.
    let (Some(x), Some(y)) = (a.as_number(), b.as_number()) else {
        return Ok(None);
    };
    if let (Some(i), Some(j)) = (a.as_int(), b.as_int()) {
        let r = match op {
            PyBinOp::Add => i.checked_add(j).ok_or_else(|| overflow(span, op))?,
            PyBinOp::Sub => i.checked_sub(j).ok_or_else(|| overflow(span, op))?,
            PyBinOp::Mul => i.checked_mul(j).ok_or_else(|| overflow(span, op))?,
            PyBinOp::Div => {
                if j == 0 {
                    return Err(zero_division(span));
                }
                return Ok(Some(Value::Float(i as f64 / j as f64)));
            }
            PyBinOp::FloorDiv => {
                if j == 0 {
                    return Err(zero_division(span));
                }
                floor_div_i64(i, j).ok_or_else(|| overflow(span, op))?
            }
            PyBinOp::Mod => {
                if j == 0 {
                    return Err(zero_division(span));
                }
                floor_mod_i64(i, j).ok_or_else(|| overflow(span, op))?
            }
            PyBinOp::Pow => {
                if j < 0 {
                    return Ok(Some(Value::Float((i as f64).powf(j as f64))));
                }
                let e = u32::try_from(j).map_err(|_| overflow(span, op))?;
                i.checked_pow(e).ok_or_else(|| overflow(span, op))?
            }
            PyBinOp::LShift => {
                let s = u32::try_from(j).map_err(|_| overflow(span, op))?;
                let r = i.checked_shl(s).ok_or_else(|| overflow(span, op))?;
                if r >> s != i {
                    return Err(overflow(span, op));
                }
                r
            }
            PyBinOp::RShift => {
                let s = u32::try_from(j).map_err(|_| overflow(span, op))?;
                i >> s.min(63)
            }
            PyBinOp::BitAnd => i & j,
            PyBinOp::BitOr => i | j,
            PyBinOp::BitXor => i ^ j,
            PyBinOp::MatMul => return Ok(None),
        };
        // `True & False` stays a bool in Python.
        if matches!(a, Value::Bool(_))
            && matches!(b, Value::Bool(_))
            && matches!(op, PyBinOp::BitAnd | PyBinOp::BitOr | PyBinOp::BitXor)
        {
            return Ok(Some(Value::Bool(r != 0)));
        }
        return Ok(Some(Value::Int(r)));
    }
    let r = match op {
        PyBinOp::Add => x + y,
        PyBinOp::Sub => x - y,
        PyBinOp::Mul => x * y,
        PyBinOp::Div => {
            if y == 0.0 {
                return Err(zero_division(span));
            }
            x / y
        }
        PyBinOp::FloorDiv => {
            if y == 0.0 {
                return Err(zero_division(span));
            }
            (x / y).floor()
        }
        PyBinOp::Mod => {
            if y == 0.0 {
                return Err(zero_division(span));
            }
            let r = x % y;
            if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                r + y
            } else {
                r
            }
        }
        PyBinOp::Pow => x.powf(y),
        _ => return Ok(None),
    };
    Ok(Some(Value::Float(r)))
}

/// `"%d" % x`-style formatting, enough for messages in asserts.
fn percent_format(fmt: &str, args: &Value<'_>) -> String {
    let args: Vec<Value<'_>> = match args {
        Value::Tuple(t) => t.to_vec(),
        other => vec![other.clone()],
    };
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars().peekable();
    // Past the room left in the byte budget the result is charged and
    // reported; building it further would only take memory.
    let room = super::budget::room();
    while let Some(c) = chars.next() {
        if out.len() > room {
            break;
        }
        if c == '%' {
            match chars.next() {
                Some('%') => out.push('%'),
                Some(_) => out.push_str(&it.next().map(Value::to_py_str).unwrap_or_default()),
                None => out.push('%'),
            }
        } else {
            out.push(c);
        }
    }
    out
}
