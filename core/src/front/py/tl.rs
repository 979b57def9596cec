//! The TileLang language namespace `T.*`: what each name means and the IR it
//! stages.
//!
//! Tile operations resolve their operands to IR regions here: a whole
//! buffer, a slice region (`A[i*64:(i+1)*64, :]`), or a *head address*
//! (`A[i*64, 0]`) whose extents come from the other operand, aligned from
//! the right. Shapes are checked when they are compile-time constants, so
//! a mismatch is reported at the call with both shapes.

use super::codes;
use super::eval::{Evaluator, err};
use super::value::{
    Access, EResult, IndexItem, LaunchSpec, LayoutKind, LayoutSpec, LoopSpec, LoopSpecKind,
    TensorType, Value,
};
use crate::front::Diagnostic;
use crate::ir::{
    self, AtomicValue, BinaryOp, DType, GemmPolicy, Handle, Literal, LoopKind, Range, ReduceKind,
    Region, Scope, Span, Stmt, UnaryOp,
};
use std::rc::Rc;

/// The `T.*` functions that take their operands by position only (TVM's
/// operators: TVMScript drops a `dtype` keyword and takes a `span`, both
/// accepted and ignored); the arms below read `args` alone, so any other
/// keyword is refused before them.
const POSITIONAL_ONLY: &[&str] = &[
    "ceildiv",
    "floordiv",
    "floormod",
    "truncdiv",
    "truncmod",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "abs",
    "sigmoid",
    "tanh",
    "sin",
    "cos",
    "floor",
    "ceil",
    "isnan",
    "isinf",
    "max",
    "min",
    "pow",
    "if_then_else",
];

/// Every function name under `T.` that tilec knows.
const FUNCTIONS: &[&str] = &[
    "prim_func",
    "Layout",
    "Fragment",
    "macro",
    "Tensor",
    "Buffer",
    "Kernel",
    "alloc_shared",
    "alloc_fragment",
    "alloc_local",
    "alloc_var",
    "alloc_buffer",
    "empty",
    "const",
    "dynamic",
    "symbolic",
    "ceildiv",
    "floordiv",
    "floormod",
    "truncdiv",
    "truncmod",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "abs",
    "sigmoid",
    "tanh",
    "sin",
    "cos",
    "floor",
    "ceil",
    "round",
    "isnan",
    "isinf",
    "max",
    "min",
    "pow",
    "clamp",
    "if_then_else",
    "infinity",
    "max_value",
    "min_value",
    "cast",
    "Cast",
    "copy",
    "gemm",
    "fill",
    "clear",
    "reduce_sum",
    "reduce_max",
    "reduce_min",
    "reduce_abssum",
    "reduce_absmax",
    "reduce_bitand",
    "reduce_bitor",
    "reduce_bitxor",
    "cumsum",
    "cummax",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "Pipelined",
    "Parallel",
    "parallel",
    "serial",
    "unroll",
    "vectorized",
    "use_swizzle",
    "annotate_layout",
    "sync_threads",
    "get_thread_binding",
    "assume",
    "no_set_max_nreg",
    "set_max_nreg",
    "fence_proxy_async",
    "disable_warp_group_reg_alloc",
    "print",
    "ws",
    "alloc_barrier",
    "barrier_arrive",
    "mbarrier_arrive",
    "barrier_wait",
    "mbarrier_wait_parity",
    "create_list_of_mbarrier",
    "get_mbarrier",
    "wgmma_gemm",
    "wait_wgmma",
];

/// Names under `T.` that exist in TileLang but that tilec does not support
/// yet; they resolve so that the error can name them at the call.
const KNOWN_UNSUPPORTED: &[&str] = &[
    "mbarrier_expect_tx",
    "import_source",
    "gemm_sp",
    "alloc_tmem",
    "tcgen05_gemm",
];

/// Looks up `T.<name>`.
pub(crate) fn attr<'a>(name: &str) -> Option<Value<'a>> {
    if let Some(v) = super::tl_more::attr(name) {
        return Some(v);
    }
    if let Some(v) = super::views::attr(name) {
        return Some(v);
    }
    if let Some(v) = super::cp_async::attr(name) {
        return Some(v);
    }
    if let Some(v) = super::reducer::attr(name) {
        return Some(v);
    }
    if let Some(d) = DType::from_tilelang_name(name) {
        return Some(Value::DType(d));
    }
    if let Some(v) = super::tir::attr(name) {
        return Some(v);
    }
    if name == "GemmWarpPolicy" {
        return Some(Value::Module("T.GemmWarpPolicy"));
    }
    if name == "call_extern" {
        return Some(Value::Builtin("tvm.tirx.call_extern"));
    }
    if let Some(n) = FUNCTIONS.iter().find(|n| **n == name) {
        return Some(Value::Builtin(match *n {
            "prim_func" => "T.prim_func",
            "macro" => "T.macro",
            other => leak_t(other),
        }));
    }
    KNOWN_UNSUPPORTED
        .iter()
        .find(|n| **n == name)
        .map(|n| Value::Opaque(Rc::from(format!("T.{n}"))))
}

/// `"T." + name` as a static string (the table is fixed, so each is made once).
fn leak_t(name: &'static str) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let map = NAMES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut guard = match map.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    guard
        .entry(name)
        .or_insert_with(|| Box::leak(format!("T.{name}").into_boxed_str()))
}

/// The parameters of TVM's buffer declarations (`T.Tensor`, `T.Buffer`,
/// `T.decl_buffer`), in order.
pub(super) const BUFFER_PARAMS: &[&str] = &[
    "shape",
    "dtype",
    "data",
    "strides",
    "elem_offset",
    "scope",
    "align",
    "offset_factor",
    "buffer_type",
    "axis_separators",
];

/// Call arguments matched against a parameter list.
pub(super) struct Args<'a> {
    name: &'static str,
    values: Vec<Option<Value<'a>>>,
    span: Span,
}

/// A parameter of a `T.*` builtin as [`Args::new`] reads it: `name`, or
/// `*name` when it and every parameter after it are keyword-only (Python's
/// `*` in TileLang's signature), with `:kind` after the name when the
/// builtin only stores or ignores the value, so that its kind is checked
/// here: `scalar` (a number, bool or staged scalar, not a buffer or a
/// region), `str`, `dict`.
struct Param<'p> {
    name: &'p str,
    keyword_only: bool,
    kind: Option<&'p str>,
}

impl<'p> Param<'p> {
    fn parse(spec: &'p str) -> Self {
        let (keyword_only, rest) = match spec.strip_prefix('*') {
            Some(rest) => (true, rest),
            None => (false, spec),
        };
        let (name, kind) = match rest.split_once(':') {
            Some((name, kind)) => (name, Some(kind)),
            None => (rest, None),
        };
        Param {
            name,
            keyword_only,
            kind,
        }
    }

    /// Whether `v` is of the kind the parameter names (`None` always is).
    fn admits(&self, v: &Value<'_>) -> bool {
        match (self.kind, v) {
            (None, _) | (_, Value::None) => true,
            (Some("scalar"), v) => {
                matches!(
                    v,
                    Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Expr(_)
                ) || matches!(v, Value::Symbol(..))
            }
            (Some("str"), v) => matches!(v, Value::Str(_)),
            (Some("dict"), v) => matches!(v, Value::Dict(_)),
            _ => true,
        }
    }
}

impl<'a> Args<'a> {
    /// Binds the arguments of a call of `T.{name}` to `params` (see
    /// [`Param`]) as Python would: too many positional arguments, a
    /// positional argument for a keyword-only parameter, an unknown
    /// keyword, a parameter given twice and a value of the wrong kind are
    /// errors.
    pub(super) fn new(
        name: &'static str,
        params: &[&str],
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Self> {
        let specs: Vec<Param<'_>> = params.iter().map(|p| Param::parse(p)).collect();
        let names: Vec<&str> = specs.iter().map(|p| p.name).collect();
        let positional = specs
            .iter()
            .position(|p| p.keyword_only)
            .unwrap_or(specs.len());
        let bad = |message: String, label: &str| {
            Box::new(
                Diagnostic::error(codes::BAD_ARGUMENTS, message, span)
                    .with_label(label.to_string())
                    .with_note(format!("parameters: {}", names.join(", "))),
            )
        };
        let mut values: Vec<Option<Value<'a>>> = vec![None; params.len()];
        if args.len() > positional {
            let message = if positional < specs.len() {
                format!(
                    "`T.{name}` takes {positional} positional arguments, {} given (the others are keyword-only)",
                    args.len()
                )
            } else {
                format!(
                    "`T.{name}` takes at most {positional} arguments, {} given",
                    args.len()
                )
            };
            return Err(bad(message, "too many arguments"));
        }
        for (slot, v) in values.iter_mut().zip(args) {
            *slot = Some(v);
        }
        for (k, v) in kwargs {
            match names.iter().position(|p| *p == k) {
                Some(i) if values[i].is_some() => {
                    return Err(bad(
                        format!("`T.{name}` got two values for parameter `{k}`"),
                        "given twice",
                    ));
                }
                Some(i) => values[i] = Some(v),
                None => {
                    return Err(bad(
                        format!("`T.{name}` has no parameter `{k}`"),
                        "unknown keyword",
                    ));
                }
            }
        }
        for (spec, v) in specs.iter().zip(&values) {
            if let (Some(kind), Some(v)) = (spec.kind, v)
                && !spec.admits(v)
            {
                return Err(bad(
                    format!(
                        "`{}` of `T.{name}` must be {}, got {}",
                        spec.name,
                        match kind {
                            "scalar" => "a number or a bool",
                            "str" => "a string",
                            _ => "a dict",
                        },
                        v.a_type_name()
                    ),
                    "wrong kind of argument",
                ));
            }
        }
        Ok(Args { name, values, span })
    }

    pub(super) fn get(&self, i: usize) -> Option<&Value<'a>> {
        match self.values.get(i) {
            Some(Some(Value::None)) | Some(None) | None => None,
            Some(Some(v)) => Some(v),
        }
    }

    pub(super) fn req(&self, i: usize, what: &str) -> EResult<&Value<'a>> {
        self.get(i).ok_or_else(|| {
            Box::new(
                Diagnostic::error(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{}` needs {what}", self.name),
                    self.span,
                )
                .with_label("missing argument"),
            )
        })
    }

    fn flag(&self, i: usize, default: bool) -> EResult<bool> {
        match self.get(i) {
            None => Ok(default),
            Some(v) => v.truthy().ok_or_else(|| {
                err(
                    codes::NOT_CONSTANT,
                    format!(
                        "this argument of `T.{}` must be a compile-time bool",
                        self.name
                    ),
                    self.span,
                )
            }),
        }
    }

    fn int(&self, i: usize, default: i64, what: &str) -> EResult<i64> {
        match self.get(i) {
            None => Ok(default),
            Some(v) => v.as_int().ok_or_else(|| {
                Box::new(
                    Diagnostic::error(
                        codes::NOT_CONSTANT,
                        format!("{what} of `T.{}` must be a compile-time integer", self.name),
                        self.span,
                    )
                    .with_label(format!("got {}", v.a_type_name())),
                )
            }),
        }
    }
}

/// Parses a dtype argument.
pub(crate) fn dtype_of(v: &Value<'_>, span: Span) -> EResult<DType> {
    match v {
        Value::DType(d) => Ok(*d),
        Value::Str(s) => DType::from_tilelang_name(s).ok_or_else(|| {
            let d = Diagnostic::error(codes::BAD_DTYPE, format!("unknown dtype {s:?}"), span)
                .with_label("not a dtype");
            Box::new(if s.as_ref() == "tfloat32" {
                d.with_note("tilec has no TensorFloat-32 dtype: write `T.float32` (or `T.tfloat32`, which tilec stages as `T.float32` with a warning)")
            } else {
                d.with_note("dtypes: bool, int8..int64, uint8..uint64, float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2")
            })
        }),
        other => Err(Box::new(
            Diagnostic::error(codes::BAD_DTYPE, format!("expected a dtype, got {}", other.a_type_name()), span).with_label("not a dtype"),
        )),
    }
}

fn shape_values<'a>(v: &Value<'a>) -> Vec<Value<'a>> {
    v.as_sequence().unwrap_or_else(|| vec![v.clone()])
}

/// `T.float32(x)`: a cast (or a typed constant).
pub(crate) fn dtype_call<'a>(
    ev: &mut Evaluator<'a>,
    d: DType,
    args: Vec<Value<'a>>,
    span: Span,
) -> EResult<Value<'a>> {
    let [x] = args.as_slice() else {
        if args.is_empty() {
            return super::tl_more::declared_variable(ev, d, span);
        }
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`T.{}(...)` takes one value", d.tilelang_name()),
            span,
        ));
    };
    cast(ev, x, d, span)
}

fn cast<'a>(ev: &mut Evaluator<'a>, x: &Value<'a>, d: DType, span: Span) -> EResult<Value<'a>> {
    let st = ev.stager("a typed value", span)?;
    let e = st.value_expr(x, Some(d), span)?;
    Ok(Value::Expr(st.cast(e, d, span)?))
}

pub(crate) fn unary_math<'a>(
    ev: &mut Evaluator<'a>,
    op: UnaryOp,
    x: &Value<'a>,
    span: Span,
) -> EResult<Value<'a>> {
    if let Some(f) = x.as_number()
        && !x.is_staged()
        && matches!(x, Value::Float(_) | Value::Int(_))
    {
        let r = match op {
            UnaryOp::Exp => f.exp(),
            UnaryOp::Exp2 => f.exp2(),
            UnaryOp::Log => f.ln(),
            UnaryOp::Log2 => f.log2(),
            UnaryOp::Sqrt => f.sqrt(),
            UnaryOp::Rsqrt => 1.0 / f.sqrt(),
            UnaryOp::Abs => {
                if let Value::Int(i) = x {
                    return Ok(Value::Int(i.saturating_abs()));
                }
                f.abs()
            }
            UnaryOp::Sigmoid => 1.0 / (1.0 + (-f).exp()),
            UnaryOp::Tanh => f.tanh(),
            UnaryOp::Sin => f.sin(),
            UnaryOp::Cos => f.cos(),
            UnaryOp::Floor => f.floor(),
            UnaryOp::Ceil => f.ceil(),
            UnaryOp::Round => f.round_ties_even(),
            UnaryOp::IsNan => return Ok(Value::Bool(f.is_nan())),
            UnaryOp::IsInf => return Ok(Value::Bool(f.is_infinite())),
            _ => f,
        };
        return Ok(Value::Float(r));
    }
    let st = ev.stager("a math function on run-time values", span)?;
    let mut e = st.value_expr(x, None, span)?;
    if op.is_float_math() && !st.ty(e).is_float() {
        e = st.cast(e, DType::F32, span)?;
    }
    Ok(Value::Expr(st.unary(op, e, span)?))
}

fn binary_values<'a>(
    ev: &mut Evaluator<'a>,
    op: BinaryOp,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
) -> EResult<Value<'a>> {
    let st = ev.stager("a run-time expression", span)?;
    Ok(Value::Expr(st.op_values(op, a, b, span)?))
}

/// A resolved tile-op operand.
pub(crate) struct Operand {
    pub(crate) region: Region,
    /// Every index was a point: a head address whose extents may be taken
    /// from the other operand.
    pub(crate) head: bool,
    pub(crate) span: Span,
    /// A head address into a view (`views.rs`): `region` is still in the
    /// view's dimensions until `views::settle` maps it.
    pub(crate) view: Option<Rc<super::views::View>>,
}

pub(crate) fn operand<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    what: &str,
    span: Span,
) -> EResult<Operand> {
    let st = ev.stager(what, span)?;
    match v {
        Value::Buffer(b) => {
            let shape = st.func.buffers[*b].shape.clone();
            let ranges = shape
                .into_iter()
                .map(|extent| Range {
                    start: st.int(0),
                    extent,
                })
                .collect();
            Ok(Operand {
                region: Region { buffer: *b, ranges },
                head: false,
                span,
                view: None,
            })
        }
        Value::Access(a) => {
            let shape = st.func.buffers[a.buffer].shape.clone();
            let mut ranges = Vec::new();
            let mut head = true;
            for (i, &dim) in shape.iter().enumerate() {
                match a.items.get(i) {
                    Some(IndexItem::Point(e)) => {
                        let one = st.lit(Literal::Int(1, st.ty(*e)));
                        ranges.push(Range {
                            start: *e,
                            extent: one,
                        });
                    }
                    Some(IndexItem::Slice { start, stop }) => {
                        head = false;
                        let s = match start {
                            Some(s) => *s,
                            None => st.int(0),
                        };
                        let stop = stop.unwrap_or(dim);
                        let extent = st.extent(s, stop, a.span)?;
                        ranges.push(Range { start: s, extent });
                    }
                    None => {
                        head = false;
                        let zero = st.int(0);
                        ranges.push(Range {
                            start: zero,
                            extent: dim,
                        });
                    }
                }
            }
            Ok(Operand {
                region: Region {
                    buffer: a.buffer,
                    ranges,
                },
                head,
                span: a.span,
                view: None,
            })
        }
        Value::View(_) | Value::ViewAccess(_) => super::views::operand(st, v, span, false),
        Value::Poison(_) => Err(super::stage::cascade()),
        other => Err(Box::new(
            Diagnostic::error(
                codes::TYPE_ERROR,
                format!(
                    "{what} needs a buffer or a buffer region, got {}",
                    other.a_type_name()
                ),
                span,
            )
            .with_label("not a buffer"),
        )),
    }
}

/// `operand`, except that a head address into a view stays in the view's
/// dimensions for `fill_head` (then `views::settle`).
fn operand_keep_head<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    what: &str,
    span: Span,
) -> EResult<Operand> {
    match v {
        Value::View(_) | Value::ViewAccess(_) => {
            let st = ev.stager(what, span)?;
            super::views::operand(st, v, span, true)
        }
        _ => operand(ev, v, what, span),
    }
}

/// Extents of a region as constants, where known.
fn const_extents(f: &ir::Function, r: &Region) -> Vec<Option<i64>> {
    r.ranges
        .iter()
        .map(|rg| f.as_const_int(rg.extent))
        .collect()
}

fn shape_text(ext: &[Option<i64>]) -> String {
    let parts: Vec<String> = ext
        .iter()
        .map(|e| e.map_or("?".into(), |v| v.to_string()))
        .collect();
    format!("[{}]", parts.join(", "))
}

fn non_unit(ext: &[Option<i64>]) -> Vec<Option<i64>> {
    ext.iter().copied().filter(|e| *e != Some(1)).collect()
}

/// Gives a head-address operand the extents of `other`, aligned from the right.
fn fill_head(
    ev: &mut Evaluator<'_>,
    head: &mut Operand,
    other: &Operand,
    span: Span,
) -> EResult<()> {
    let st = ev.stager("a tile operation", span)?;
    // Drop leading unit dimensions of the other side that do not fit.
    let mut extents: Vec<Handle<ir::Expr>> = other.region.ranges.iter().map(|r| r.extent).collect();
    while extents.len() > head.region.ranges.len()
        && extents.first().and_then(|e| st.func.as_const_int(*e)) == Some(1)
    {
        extents.remove(0);
    }
    let rank = head.region.ranges.len();
    if extents.len() > rank {
        let name = st.func.buffers[head.region.buffer].name.clone();
        return Err(Box::new(
            Diagnostic::error(
                codes::COPY_SHAPE,
                format!(
                    "the other operand has {} dimensions but `{name}` has only {rank}",
                    extents.len()
                ),
                head.span,
            )
            .with_label("head address here"),
        ));
    }
    let offset = rank - extents.len();
    for (i, e) in extents.into_iter().enumerate() {
        head.region.ranges[offset + i].extent = e;
    }
    Ok(())
}

fn check_same_extents(
    ev: &mut Evaluator<'_>,
    src: &Operand,
    dst: &Operand,
    what: &str,
    span: Span,
) -> EResult<()> {
    let st = ev.stager(what, span)?;
    let a = const_extents(&st.func, &src.region);
    let b = const_extents(&st.func, &dst.region);
    let (na, nb) = (non_unit(&a), non_unit(&b));
    let known = na.iter().chain(nb.iter()).all(Option::is_some);
    if known && na != nb {
        let sname = st.func.buffers[src.region.buffer].name.clone();
        let dname = st.func.buffers[dst.region.buffer].name.clone();
        return Err(Box::new(
            Diagnostic::error(
                codes::COPY_SHAPE,
                format!(
                    "{what}: source extents {} do not match destination extents {}",
                    shape_text(&a),
                    shape_text(&b)
                ),
                span,
            )
            .with_secondary(src.span, format!("`{sname}` region is {}", shape_text(&a)))
            .with_secondary(dst.span, format!("`{dname}` region is {}", shape_text(&b)))
            .with_note("extents must agree after dropping dimensions of extent 1"),
        ));
    }
    Ok(())
}

/// The barrier an `arrive` or `wait` names: a barrier buffer (its first
/// barrier) or one element of one.
pub(super) fn barrier_element<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    name: &str,
    span: Span,
) -> EResult<(Handle<ir::Buffer>, Handle<ir::Expr>)> {
    let is_barrier = |ev: &mut Evaluator<'a>, b: Handle<ir::Buffer>| {
        ev.stager(name, span)
            .is_ok_and(|st| st.func.buffers[b].scope == Scope::Barrier)
    };
    match v {
        Value::Buffer(b) if is_barrier(ev, *b) => {
            let st = ev.stager(name, span)?;
            Ok((*b, st.int(0)))
        }
        Value::Access(acc) if is_barrier(ev, acc.buffer) => match acc.items.as_slice() {
            [IndexItem::Point(i)] => Ok((acc.buffer, *i)),
            _ => Err(err(
                codes::BAD_TILELANG_ARGUMENT,
                format!("`T.{name}` takes one barrier: index the barrier array with one integer"),
                span,
            )),
        },
        Value::Int(_) | Value::Expr(_) => numbered_barrier(ev, v, name, span),
        other => Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "`T.{name}` needs a barrier (from `T.alloc_barrier`) or a barrier number, got {}",
                    other.a_type_name()
                ),
                span,
            )
            .with_label("not a barrier"),
        )),
    }
}

/// Barrier number `v` of the kernel's `T.create_list_of_mbarrier`.
fn numbered_barrier<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    name: &str,
    span: Span,
) -> EResult<(Handle<ir::Buffer>, Handle<ir::Expr>)> {
    let st = ev.kernel_stager(&format!("`T.{name}`"), span)?;
    let Some(list) = st.kernel.as_ref().and_then(|k| k.mbarriers) else {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!("`T.{name}` names a barrier by number, but the kernel has no `T.create_list_of_mbarrier`"),
                span,
            )
            .with_label("barrier number without a barrier list"),
        ));
    };
    let index = ev.index_expr_of(v, span)?;
    Ok((list, index))
}

/// Most elements a `T.Layout` may have: its function is evaluated for
/// every one.
const LAYOUT_MAP_LIMIT: i64 = 1 << 16;

/// `T.Layout(shape, forward_fn)`: the function evaluated at every index of
/// the constant `shape`, each result (an integer or a list of them) made
/// an offset row-major over the extents of the results.
fn layout_map<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (Some(shape), Some(f)) = (
        args.first().cloned().or_else(|| kw("shape")),
        args.get(1).cloned().or_else(|| kw("forward_fn")),
    ) else {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`T.Layout` takes a shape and a function of the indices",
            span,
        ));
    };
    let items = shape.as_sequence().unwrap_or_else(|| vec![shape.clone()]);
    let dims: Vec<i64> = items
        .iter()
        .map(|v| v.as_int().filter(|&n| n >= 1))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            err(
                codes::NOT_CONSTANT,
                "the shape of `T.Layout` must be positive compile-time integers",
                span,
            )
        })?;
    let total = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
    let total = match total {
        Some(t) if t <= LAYOUT_MAP_LIMIT => t,
        // Too many elements to call the function at each: its staged form
        // is enumerated instead (`big_layout.rs`).
        _ => return super::big_layout::layout(ev, &f, dims, span),
    };
    let mut results: Vec<Vec<i64>> = Vec::with_capacity(total as usize);
    for linear in 0..total {
        let out = ev.call(f.clone(), index_values(linear, &dims), Vec::new(), span)?;
        let items = out.as_sequence().unwrap_or_else(|| vec![out.clone()]);
        let coords: Option<Vec<i64>> = items
            .iter()
            .map(|v| v.as_int().filter(|&x| x >= 0))
            .collect();
        match coords {
            Some(c) if results.first().is_none_or(|r| r.len() == c.len()) && !c.is_empty() => {
                results.push(c);
            }
            _ => {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "the function of `T.Layout` must map every index to non-negative \
                         integers, as many each time; it gave {} for index {}",
                        out.repr(),
                        Value::tuple(index_values(linear, &dims)).repr()
                    ),
                    span,
                ));
            }
        }
    }
    let rank = results.first().map_or(0, Vec::len);
    let extents: Vec<u64> = (0..rank)
        .map(|d| results.iter().map(|r| r[d] as u64).max().unwrap_or(0) + 1)
        .collect();
    // Offsets row-major over the extents; a layout whose places do not fit
    // 64 bits is no layout of a buffer.
    let offsets: Option<Rc<[u64]>> = results
        .iter()
        .map(|r| {
            r.iter().zip(&extents).try_fold(0u64, |acc, (&x, &e)| {
                acc.checked_mul(e)?.checked_add(x as u64)
            })
        })
        .collect();
    let Some(offsets) = offsets else {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!(
                "the places the function of `T.Layout` gives span more than 2^64 elements (extents {extents:?})"
            ),
            span,
        ));
    };
    let map = symbolic_map(ev, &f, &dims, &extents, &offsets, span);
    Ok(Value::Layout(Rc::new(LayoutSpec {
        buffer: None,
        kind: LayoutKind::Map {
            shape: dims,
            offsets,
            map,
        },
        span,
    })))
}

/// The function of a `T.Layout` as an index map (`layout::IndexMap`),
/// when it is one: what it stages for placeholder indices
/// ([`symbolic_coords`]) must agree with the values it gave `offsets` at
/// every index. `None` otherwise.
fn symbolic_map<'a>(
    ev: &mut Evaluator<'a>,
    f: &Value<'a>,
    dims: &[i64],
    extents: &[u64],
    offsets: &[u64],
    span: Span,
) -> Option<crate::layout::IndexMap> {
    let coords = symbolic_coords(ev, f, dims, span)?;
    if coords.len() != extents.len() {
        return None;
    }
    let map = row_major_map(coords, extents)?;
    let shape: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
    (map.check_over(&shape).ok()? == offsets).then_some(map)
}

/// What the function of a `T.Layout` stages when called once with a
/// placeholder variable per index (TileLang calls it so too): one index
/// map per coordinate it returns, when each is integer arithmetic of the
/// placeholders. `None` otherwise (outside a kernel, or a function that
/// branches on its arguments, calls what has no index-map form, stages
/// statements or reports anything); nothing it staged is kept.
pub(super) fn symbolic_coords<'a>(
    ev: &mut Evaluator<'a>,
    f: &Value<'a>,
    dims: &[i64],
    span: Span,
) -> Option<Vec<crate::layout::IndexMap>> {
    use crate::layout::{IndexMap, MapOp};
    let st = ev.stager("`T.Layout`", span).ok()?;
    let buffers = st.func.buffers.len();
    let vars: Vec<Handle<ir::Var>> = (0..dims.len())
        .map(|d| st.add_var(&format!("layout_i{d}"), DType::I32, ir::VarKind::Let))
        .collect();
    let args: Vec<Value<'a>> = vars.iter().map(|&v| Value::Expr(st.var(v))).collect();
    st.push_block();
    let diags = ev.diags.len();
    let out = ev.call(f.clone(), args, Vec::new(), span);
    let st = ev.stager("`T.Layout`", span).ok()?;
    let staged = st.pop_block();
    let quiet = ev.diags.len() == diags;
    ev.diags.truncate(diags);
    let st = ev.stager("`T.Layout`", span).ok()?;
    if !staged.is_empty() || !quiet || st.func.buffers.len() != buffers {
        return None;
    }
    let func = &st.func;
    // The staged expression as an index map.
    fn convert(
        func: &ir::Function,
        vars: &[Handle<ir::Var>],
        e: Handle<ir::Expr>,
        depth: usize,
    ) -> Option<IndexMap> {
        if depth > 64 {
            return None;
        }
        Some(match &func.exprs[e] {
            ir::Expr::Literal(Literal::Int(v, _)) => IndexMap::Const(*v),
            ir::Expr::Var(v) => IndexMap::Dim(vars.iter().position(|x| x == v)? as u32),
            ir::Expr::Cast { dtype, arg } if dtype.is_int() => {
                convert(func, vars, *arg, depth + 1)?
            }
            ir::Expr::Binary { op, lhs, rhs } => {
                let op = match op {
                    BinaryOp::Add => MapOp::Add,
                    BinaryOp::Sub => MapOp::Sub,
                    BinaryOp::Mul => MapOp::Mul,
                    BinaryOp::FloorDiv => MapOp::FloorDiv,
                    BinaryOp::FloorMod => MapOp::FloorMod,
                    BinaryOp::BitAnd => MapOp::BitAnd,
                    BinaryOp::BitOr => MapOp::BitOr,
                    BinaryOp::BitXor => MapOp::BitXor,
                    BinaryOp::Shl => MapOp::Shl,
                    BinaryOp::Shr => MapOp::Shr,
                    BinaryOp::Min => MapOp::Min,
                    BinaryOp::Max => MapOp::Max,
                    _ => return None,
                };
                IndexMap::binary(
                    op,
                    convert(func, vars, *lhs, depth + 1)?,
                    convert(func, vars, *rhs, depth + 1)?,
                )
            }
            _ => return None,
        })
    }
    let out = out.ok()?;
    let items = out.as_sequence().unwrap_or_else(|| vec![out.clone()]);
    items
        .iter()
        .map(|item| match item {
            Value::Int(v) => Some(IndexMap::Const(*v)),
            Value::Expr(e) => convert(func, &vars, *e, 0),
            _ => None,
        })
        .collect()
}

/// The offset of coordinates `coords` row-major over `extents`, as one
/// index map.
pub(super) fn row_major_map(
    coords: Vec<crate::layout::IndexMap>,
    extents: &[u64],
) -> Option<crate::layout::IndexMap> {
    use crate::layout::{IndexMap, MapOp};
    let mut map: Option<IndexMap> = None;
    for (coord, &extent) in coords.into_iter().zip(extents) {
        let extent = i64::try_from(extent).ok()?;
        map = Some(match map {
            None => coord,
            Some(m) => {
                let scaled = match extent {
                    1 => m,
                    e => IndexMap::binary(MapOp::Mul, m, IndexMap::Const(e)),
                };
                match coord {
                    IndexMap::Const(0) => scaled,
                    c => IndexMap::binary(MapOp::Add, scaled, c),
                }
            }
        });
    }
    map
}

/// The index of element `linear` (row-major) of `dims`, as Python ints.
fn index_values<'a>(linear: i64, dims: &[i64]) -> Vec<Value<'a>> {
    let mut rest = linear;
    let mut index = vec![Value::Int(0); dims.len()];
    for (d, &n) in dims.iter().enumerate().rev() {
        index[d] = Value::Int(rest % n);
        rest /= n;
    }
    index
}

/// The layout tilec realizes that `offsets` (of a `T.Layout` over a
/// `rows × cols` buffer of `elem`-byte elements) is, if any: dense rows,
/// padded rows (a pitch of whole 16-byte units) or swizzled panels.
fn recognize(rows: u64, cols: u64, elem: u64, offsets: &[u64]) -> Option<ir::BufferLayout> {
    let all = |f: &dyn Fn(u64, u64) -> Option<u64>| {
        (0..rows * cols).all(|k| f(k / cols, k % cols) == Some(offsets[k as usize]))
    };
    if all(&|r, c| Some(r * cols + c)) {
        return Some(ir::BufferLayout::Shared);
    }
    if rows > 1 {
        let pitch = offsets[cols as usize];
        let whole_units = pitch
            .checked_mul(elem)
            .is_some_and(|b| b.is_multiple_of(16));
        // A pitch the lowering can address (32-bit element offsets).
        let addressable = pitch <= i32::MAX as u64;
        if pitch > cols
            && addressable
            && whole_units
            && all(&|r, c| r.checked_mul(pitch)?.checked_add(c))
        {
            return Some(ir::BufferLayout::Padded { pitch });
        }
    }
    [128, 64, 32].into_iter().find_map(|w| {
        let fits = rows.is_multiple_of(8) && (cols * elem).is_multiple_of(w);
        (fits && all(&|r, c| crate::layout::panel_offset(rows, elem, w, r, c)))
            .then_some(ir::BufferLayout::Swizzled { row_bytes: w })
    })
}

/// Pins `buffer` to the shared-memory layout `spec` asks for
/// (`T.annotate_layout`, docs/tilelang-support.md): the lowering then
/// realizes it or refuses the kernel. A swizzle without a width where the
/// buffer's shape has none is left to the lowering, as TileLang falls
/// back to another layout there.
fn pin_layout(
    ev: &mut Evaluator<'_>,
    buffer: Handle<ir::Buffer>,
    spec: &LayoutSpec,
    span: Span,
) -> EResult<()> {
    if spec.kind == LayoutKind::Fragment {
        ev.report(Box::new(
            Diagnostic::warning(
                codes::IGNORED,
                "this `T.Fragment` layout is not followed: the lowering distributes fragments over the threads itself",
                spec.span,
            )
            .with_note("the results are the same either way (docs/tilelang-support.md)"),
        ));
        return Ok(());
    }
    let st = ev.stager("`T.annotate_layout`", span)?;
    let b = &st.func.buffers[buffer];
    let name = b.name.clone();
    if b.scope == Scope::Global {
        let layout = super::big_layout::global_layout(st, buffer, spec)?;
        st.func.buffers[buffer].layout = layout;
        return Ok(());
    }
    if b.scope != Scope::Shared {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!(
                    "`{name}` is a {} buffer; this layout is for shared memory",
                    b.scope.name()
                ),
                spec.span,
            )
            .with_label("a shared-memory layout"),
        ));
    }
    if let Some(made) = spec.buffer
        && made != buffer
        && st.const_shape_of(made) != st.const_shape_of(buffer)
    {
        let made_for = st.func.buffers[made].name.clone();
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!("a layout made for `{made_for}` annotates `{name}`, whose shape differs"),
                spec.span,
            )
            .with_label(format!("made for `{made_for}`")),
        ));
    }
    let b = &st.func.buffers[buffer];
    let elem = b.dtype.bytes();
    let layout = match &spec.kind {
        LayoutKind::Fragment => return Ok(()),
        LayoutKind::Map {
            shape,
            offsets,
            map,
        } => {
            if st.const_shape_of(buffer).as_ref() != Some(shape) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("a `T.Layout` of shape {shape:?} annotates `{name}`, whose shape differs"),
                        spec.span,
                    )
                    .with_label("this layout"),
                ));
            }
            let mut seen = std::collections::HashMap::new();
            for (k, &o) in offsets.iter().enumerate() {
                if let Some(first) = seen.insert(o, k) {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!(
                                "this `T.Layout` puts elements {first} and {k} of `{name}` (row-major) in one place"
                            ),
                            spec.span,
                        )
                        .with_label("not one-to-one"),
                    ));
                }
            }
            let (rows, cols) = match shape.as_slice() {
                [r, c] => (*r as u64, *c as u64),
                [n] => (1, *n as u64),
                _ => (0, 0),
            };
            let family = (rows > 0)
                .then(|| recognize(rows, cols, elem, offsets))
                .flatten();
            match (family, map) {
                (Some(layout), _) => layout,
                // Offsets the lowering can address (32-bit element
                // offsets).
                (None, Some(map)) if offsets.iter().all(|&o| o <= i32::MAX as u64) => {
                    ir::BufferLayout::Mapped { map: map.clone() }
                }
                _ => {
                    ev.report(Box::new(
                        Diagnostic::warning(
                            codes::IGNORED,
                            format!(
                                "this `T.Layout` of `{name}` is not followed: it is none of dense, padded or XOR-swizzled rows, and its function is not integer arithmetic of the indices (`+ - * // % & | ^ << >>`, `min`, `max`) with offsets below 2^31; the lowering chooses one"
                            ),
                            spec.span,
                        )
                        .with_note("the results are the same either way (docs/tilelang-support.md)"),
                    ));
                    return Ok(());
                }
            }
        }
        LayoutKind::Linear => ir::BufferLayout::Shared,
        LayoutKind::Swizzled { width } => {
            let shape = st.const_shape_of(buffer).filter(|s| s.len() == 2);
            let fits = |w: u64| {
                shape.as_ref().is_some_and(|s| {
                    let (rows, cols) = (s[0] as u64, s[1] as u64);
                    [1, 2, 4, 8].contains(&elem)
                        && rows > 0
                        && rows % 8 == 0
                        && (cols * elem) % w == 0
                })
            };
            match *width {
                Some(w) if fits(w) => ir::BufferLayout::Swizzled { row_bytes: w },
                Some(w) => {
                    let shape = match &shape {
                        Some(s) => format!("{} × {} {}", s[0], s[1], b.dtype),
                        None => "not a constant 2-D shape".to_string(),
                    };
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!(
                                "`{name}` ({shape}) has no {w}-byte swizzle: it needs a \
                                 constant 2-D shape with a multiple of 8 rows and rows of a \
                                 multiple of {w} bytes"
                            ),
                            spec.span,
                        )
                        .with_label("this layout"),
                    ));
                }
                None => {
                    let natural = shape.as_ref().map_or(0, |s| (s[1] as u64 * elem).min(128));
                    if !matches!(natural, 32 | 64 | 128) || !fits(natural) {
                        return Ok(());
                    }
                    ir::BufferLayout::Swizzled { row_bytes: natural }
                }
            }
        }
    };
    st.func.buffers[buffer].layout = Some(layout);
    Ok(())
}

fn need_kernel<'a>(ev: &mut Evaluator<'a>, what: &str, span: Span) -> EResult<()> {
    ev.kernel_stager(what, span).map(|_| ())
}

pub(crate) fn alloc<'a>(
    ev: &mut Evaluator<'a>,
    scope: Scope,
    shape: &Value<'a>,
    dtype: DType,
    what: &str,
    span: Span,
) -> EResult<Value<'a>> {
    need_kernel(ev, what, span)?;
    let shape = shape_values(shape);
    let dims = ev.shape_exprs(&shape, span)?;
    let st = ev.stager(what, span)?;
    if scope != Scope::Global {
        for (d, v) in dims.iter().zip(&shape) {
            if st.func.as_const_int(*d).is_none() {
                let _ = v;
                let mut diag = Diagnostic::error(codes::NOT_CONSTANT, format!("{what} needs a compile-time shape"), span)
                    .with_label("this shape depends on run-time values")
                    .with_note("on-chip buffers are sized when the kernel is compiled; use builder parameters for their sizes");
                let mut names = Vec::new();
                symbols_in(&st.func, *d, &mut names);
                for name in names {
                    let at_launch = if matches!(scope, Scope::Shared) {
                        "known only at launch, when TileLang sizes this buffer as dynamic shared memory"
                    } else {
                        "known only at launch"
                    };
                    diag = diag.with_note(format!("`{name}` is a symbolic size, {at_launch}; make the size a builder parameter, or, where `{name}` comes from `T.const`, give it with `-D {name}=...`"));
                }
                return Err(Box::new(diag));
            }
        }
    }
    let b = st.add_buffer("buf", dtype, dims, scope, span);
    st.unnamed.insert(b);
    st.emit(
        Stmt::Alloc {
            buffer: b,
            init: None,
        },
        span,
    );
    Ok(Value::Buffer(b))
}

pub(super) fn loop_range<'a>(
    ev: &mut Evaluator<'a>,
    a: &Value<'a>,
    b: Option<&Value<'a>>,
    span: Span,
) -> EResult<(Handle<ir::Expr>, Handle<ir::Expr>)> {
    let (start, stop) = match b {
        Some(stop) => (a.clone(), stop.clone()),
        None => (Value::Int(0), a.clone()),
    };
    let s = ev.index_expr_of(&start, span)?;
    let e = ev.index_expr_of(&stop, span)?;
    let st = ev.stager("a loop", span)?;
    let extent = st.extent(s, e, span)?;
    Ok((
        loop_bound(st, s, "start", span)?,
        loop_bound(st, extent, "extent", span)?,
    ))
}

/// A loop's start or extent as the `int32` loop counters count in:
/// narrower integers are widened and constants that fit are narrowed;
/// anything else (a 64-bit or unsigned 32-bit run-time value, a constant
/// beyond `int32`) is the user's error, not an invalid IR.
fn loop_bound(
    st: &mut super::stage::Stager,
    e: Handle<ir::Expr>,
    what: &str,
    span: Span,
) -> EResult<Handle<ir::Expr>> {
    let t = st.ty(e);
    if t == DType::I32 {
        return Ok(e);
    }
    if let Some(Literal::Int(v, _)) = st.func.as_literal(e) {
        return match i32::try_from(v) {
            Ok(v) => Ok(st.int(i64::from(v))),
            Err(_) => Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("this loop's {what} is {v}, which does not fit in 32 bits"),
                    span,
                )
                .with_label("loop")
                .with_note(
                    "tilec's loop counters are 32-bit integers; split the loop or the tensor",
                ),
            )),
        };
    }
    if t.is_int() && t.bits() < 32 {
        return st.cast(e, DType::I32, span);
    }
    Err(Box::new(
        Diagnostic::error(
            codes::BAD_TILELANG_ARGUMENT,
            format!("this loop's {what} has type {t}; loop bounds must be int32 values"),
            span,
        )
        .with_label("loop")
        .with_note(
            "tilec's loop counters are 32-bit integers; `T.cast(bound, \"int32\")` if its values fit",
        ),
    ))
}

fn int_list(v: Option<&Value<'_>>, what: &str, span: Span) -> EResult<Option<Vec<i64>>> {
    match v {
        None => Ok(None),
        Some(v) => {
            let seq = v.as_sequence().ok_or_else(|| {
                err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("{what} must be a list of integers"),
                    span,
                )
            })?;
            seq.iter()
                .map(|x| {
                    x.as_int().ok_or_else(|| {
                        err(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!("{what} must be a list of integers"),
                            span,
                        )
                    })
                })
                .collect::<EResult<Vec<_>>>()
                .map(Some)
        }
    }
}

/// Calls `T.<name>`.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    if POSITIONAL_ONLY.contains(&name)
        && let Some((k, _)) = kwargs.iter().find(|(k, _)| k != "span" && k != "dtype")
    {
        return Err(Box::new(
            Diagnostic::error(
                codes::BAD_ARGUMENTS,
                format!("`T.{name}` has no parameter `{k}`"),
                span,
            )
            .with_label("unknown keyword")
            .with_note(format!("`T.{name}` takes its operands by position")),
        ));
    }
    match name {
        "prim_func" | "macro" => Ok(Value::Builtin(if name == "prim_func" {
            "T.prim_func"
        } else {
            "T.macro"
        })),
        "Tensor" | "Buffer" => {
            let a = Args::new("Tensor", BUFFER_PARAMS, args, kwargs, span)?;
            let shape = shape_values(a.req(0, "a shape")?);
            let dtype = match a.get(1) {
                Some(d) => dtype_of(d, span)?,
                None => DType::F32,
            };
            if let Some(data) = a.get(2) {
                let data = data.clone();
                return super::views::tensor_over(ev, &Value::tuple(shape), dtype, &data, span);
            }
            for v in &shape {
                if !(v.as_int().is_some() || v.is_staged()) {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::TYPE_ERROR,
                            format!("tensor extents must be integers, got {}", v.a_type_name()),
                            span,
                        )
                        .with_label("in this shape"),
                    ));
                }
            }
            Ok(Value::TensorType(Rc::new(TensorType { shape, dtype })))
        }
        "Kernel" => {
            let threads_v = kwargs
                .iter()
                .find(|(k, _)| k == "threads")
                .map(|(_, v)| v.clone());
            for (k, _) in &kwargs {
                if !matches!(
                    k.as_str(),
                    "threads" | "prelude" | "is_cpu" | "cluster_dims"
                ) {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_ARGUMENTS,
                            format!("`T.Kernel` has no parameter `{k}`"),
                            span,
                        )
                        .with_label("unknown keyword"),
                    ));
                }
            }
            // No grid extents: TileLang binds no block index and launches
            // one block.
            let args = if args.is_empty() {
                vec![Value::Int(1)]
            } else {
                args
            };
            if args.len() > 3 {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!(
                            "`T.Kernel` takes at most 3 grid extents, got {}",
                            args.len()
                        ),
                        span,
                    )
                    .with_label("grid extents"),
                ));
            }
            let mut dims = [1u32; 3];
            let threads = match threads_v {
                None => {
                    dims[0] = 128;
                    128
                }
                Some(v) => {
                    let parts = shape_values(&v);
                    if parts.len() > 3 {
                        return Err(Box::new(
                            Diagnostic::error(
                                codes::BAD_TILELANG_ARGUMENT,
                                format!(
                                    "`threads` has at most 3 dimensions (x, y, z), got {}",
                                    parts.len()
                                ),
                                span,
                            )
                            .with_label("thread extents"),
                        ));
                    }
                    let mut total: i64 = 1;
                    for (d, p) in parts.iter().enumerate() {
                        let n = p.as_int().ok_or_else(|| {
                            Box::new(
                                Diagnostic::error(
                                    codes::NOT_CONSTANT,
                                    "`threads` must be a compile-time integer",
                                    span,
                                )
                                .with_label(format!("got {}", p.a_type_name())),
                            )
                        })?;
                        if n < 1 {
                            return Err(Box::new(
                                Diagnostic::error(
                                    codes::BAD_TILELANG_ARGUMENT,
                                    format!("thread extents must be positive, got {n}"),
                                    span,
                                )
                                .with_label("thread count"),
                            ));
                        }
                        total = total.saturating_mul(n);
                        dims[d] = u32::try_from(n).unwrap_or(u32::MAX);
                    }
                    if !(1..=4096).contains(&total) {
                        return Err(Box::new(
                            Diagnostic::error(
                                codes::BAD_TILELANG_ARGUMENT,
                                format!("`threads` must be between 1 and 4096, got {total}"),
                                span,
                            )
                            .with_label("thread count"),
                        ));
                    }
                    u32::try_from(total).unwrap_or(128)
                }
            };
            let mut grid = Vec::new();
            for g in &args {
                if let Some(i) = g.as_int()
                    && i <= 0
                {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_TILELANG_ARGUMENT,
                            format!("grid extents must be positive, got {i}"),
                            span,
                        )
                        .with_label("grid extent"),
                    ));
                }
                grid.push(ev.index_expr_of(g, span)?);
            }
            Ok(Value::Launch(Rc::new(LaunchSpec {
                grid,
                threads,
                dims,
            })))
        }
        "alloc_shared" | "alloc_fragment" | "alloc_local" => {
            let a = Args::new(
                leak_name(name),
                &["shape", "dtype", "scope"],
                args,
                kwargs,
                span,
            )?;
            let dtype = dtype_of(a.req(1, "a dtype")?, span)?;
            let scope = match name {
                "alloc_shared" => Scope::Shared,
                "alloc_fragment" => Scope::Fragment,
                _ => Scope::Local,
            };
            alloc(
                ev,
                scope,
                a.req(0, "a shape")?,
                dtype,
                &format!("`T.{name}`"),
                span,
            )
        }
        "alloc_buffer" => {
            let a = Args::new(
                "alloc_buffer",
                &["shape", "dtype", "scope"],
                args,
                kwargs,
                span,
            )?;
            let dtype = match a.get(1) {
                Some(d) => dtype_of(d, span)?,
                None => DType::F32,
            };
            let scope = match a.get(2).map(Value::to_py_str).as_deref() {
                None | Some("shared" | "shared.dyn") => Scope::Shared,
                Some("local.fragment") => Scope::Fragment,
                Some("local") => Scope::Local,
                Some("local.var") => Scope::Var,
                Some(other) => {
                    return Err(err(
                        codes::UNSUPPORTED_TILELANG,
                        format!("buffer scope {other:?} is not supported"),
                        span,
                    ));
                }
            };
            alloc(
                ev,
                scope,
                a.req(0, "a shape")?,
                dtype,
                "`T.alloc_buffer`",
                span,
            )
        }
        "alloc_var" => {
            let a = Args::new("alloc_var", &["dtype", "init", "scope"], args, kwargs, span)?;
            let dtype = dtype_of(a.req(0, "a dtype")?, span)?;
            let init = a.get(1).cloned();
            let v = alloc(ev, Scope::Var, &Value::Int(1), dtype, "`T.alloc_var`", span)?;
            if let (Value::Buffer(b), Some(init)) = (&v, init) {
                let st = ev.stager("`T.alloc_var`", span)?;
                let e = st.value_expr(&init, Some(dtype), span)?;
                let e = st.cast(e, dtype, span)?;
                // The allocation was just emitted; attach the initial value.
                if let Some(Stmt::Alloc { init, buffer }) = last_stmt_mut(st)
                    && *buffer == *b
                {
                    *init = Some(e);
                }
            }
            Ok(v)
        }
        "empty" => {
            let a = Args::new("empty", &["shape", "dtype"], args, kwargs, span)?;
            let dtype = match a.get(1) {
                Some(d) => dtype_of(d, span)?,
                None => DType::F32,
            };
            let shape = shape_values(a.req(0, "a shape")?);
            let dims = ev.shape_exprs(&shape, span)?;
            let st = ev.stager("`T.empty`", span)?;
            if st.eager.is_none() {
                return Err(Box::new(
                    Diagnostic::error(codes::PLACEMENT, "`T.empty` creates the output of an eager `@tilelang.jit` kernel", span)
                        .with_label("not in an eager kernel")
                        .with_note("in a `@T.prim_func`, declare outputs as parameters and list them in `out_idx`"),
                ));
            }
            let b = st.add_buffer("out", dtype, dims, Scope::Global, span);
            st.unnamed.insert(b);
            if let Some(e) = st.eager.as_mut() {
                e.outputs.push(b);
            }
            Ok(Value::Buffer(b))
        }
        "const" => {
            let mut names = Vec::new();
            for a in &args {
                let Value::Str(s) = a else {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`T.const` takes names as strings",
                        span,
                    ));
                };
                names.extend(
                    s.split([',', ' '])
                        .filter(|n| !n.is_empty())
                        .map(str::to_string),
                );
            }
            let dtype = match kwargs.iter().find(|(k, _)| k == "dtype") {
                Some((_, d)) => dtype_of(d, span)?,
                None => DType::I32,
            };
            for n in &names {
                if ev.defines.contains_key(n) {
                    ev.used_defines.insert(n.clone());
                }
            }
            let values: Vec<Value<'a>> = names
                .iter()
                .map(|n| {
                    ev.defines
                        .get(n)
                        .cloned()
                        .unwrap_or_else(|| Value::Symbol(Rc::from(n.as_str()), dtype))
                })
                .collect();
            Ok(if values.len() == 1 {
                values.into_iter().next().unwrap_or(Value::None)
            } else {
                Value::tuple(values)
            })
        }
        "dynamic" | "symbolic" => {
            let a = Args::new("dynamic", &["name", "dtype"], args, kwargs, span)?;
            let Value::Str(n) = a.req(0, "a name")? else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.dynamic` takes a name string",
                    span,
                ));
            };
            let dtype = match a.get(1) {
                Some(d) => dtype_of(d, span)?,
                None => DType::I32,
            };
            if !dtype.is_int() {
                return Err(err(
                    codes::BAD_DTYPE,
                    "symbolic sizes must have an integer dtype",
                    span,
                ));
            }
            // A name with commas or spaces declares several sizes at once
            // and returns them as a tuple, as TileLang's `T.dynamic` does.
            let names: Vec<&str> = if n.contains(',') {
                n.split(',').map(str::trim).collect()
            } else {
                n.split_whitespace().collect()
            };
            if names.len() > 1 {
                return Ok(Value::tuple(
                    names
                        .into_iter()
                        .map(|m| Value::Symbol(Rc::from(m), dtype))
                        .collect(),
                ));
            }
            Ok(Value::Symbol(n.clone(), dtype))
        }
        "ceildiv" => {
            let [a, b] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ceildiv` takes two values",
                    span,
                ));
            };
            if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                if y == 0 {
                    return Err(err(
                        codes::COMPILE_TIME_ARITHMETIC,
                        "`T.ceildiv` by zero",
                        span,
                    ));
                }
                // ceil(x / y) = -floor(-x / y), exact for every i64 pair
                // whose quotient fits.
                let q = x
                    .checked_neg()
                    .and_then(|nx| super::value::floor_div_i64(nx, y))
                    .and_then(i64::checked_neg)
                    .ok_or_else(|| {
                        err(
                            codes::COMPILE_TIME_ARITHMETIC,
                            "`T.ceildiv` overflows 64 bits",
                            span,
                        )
                    })?;
                return Ok(Value::Int(q));
            }
            let sum = ev.binop(super::value::PyBinOp::Add, a, b, span)?;
            let sum = ev.binop(super::value::PyBinOp::Sub, &sum, &Value::Int(1), span)?;
            ev.binop(super::value::PyBinOp::FloorDiv, &sum, b, span)
        }
        "floordiv" | "floormod" | "truncdiv" | "truncmod" => {
            let [a, b] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes two values"),
                    span,
                ));
            };
            match name {
                "floordiv" => ev.binop(super::value::PyBinOp::FloorDiv, a, b, span),
                "floormod" => ev.binop(super::value::PyBinOp::Mod, a, b, span),
                "truncdiv" => {
                    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                        return x.checked_div(y).map(Value::Int).ok_or_else(|| {
                            err(codes::COMPILE_TIME_ARITHMETIC, "division by zero", span)
                        });
                    }
                    binary_values(ev, BinaryOp::Div, a, b, span)
                }
                _ => {
                    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                        return x.checked_rem(y).map(Value::Int).ok_or_else(|| {
                            err(codes::COMPILE_TIME_ARITHMETIC, "division by zero", span)
                        });
                    }
                    // The expanded form multiplies the quotient by 0, which
                    // folds away with the division: refuse it here.
                    if b.as_int() == Some(0) {
                        return Err(err(
                            codes::COMPILE_TIME_ARITHMETIC,
                            "`T.truncmod` by a constant zero",
                            span,
                        ));
                    }
                    // a - (a / b) * b with truncating division.
                    let q = binary_values(ev, BinaryOp::Div, a, b, span)?;
                    let qb = ev.binop(super::value::PyBinOp::Mul, &q, b, span)?;
                    ev.binop(super::value::PyBinOp::Sub, a, &qb, span)
                }
            }
        }
        "exp" | "exp2" | "log" | "log2" | "sqrt" | "rsqrt" | "abs" | "sigmoid" | "tanh" | "sin"
        | "cos" | "floor" | "ceil" | "round" | "isnan" | "isinf" => {
            if name == "round" && (args.len() == 2 || !kwargs.is_empty()) {
                return super::tl_more::round_with_mode(ev, args, kwargs, span);
            }
            let [x] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes one value"),
                    span,
                ));
            };
            let op = UnaryOp::from_name(name).unwrap_or(UnaryOp::Abs);
            unary_math(ev, op, x, span)
        }
        "max" | "min" => {
            let [a, b] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes two values"),
                    span,
                ));
            };
            if !a.is_staged() && !b.is_staged() {
                return super::builtins::call(
                    ev,
                    if name == "max" { "max" } else { "min" },
                    vec![a.clone(), b.clone()],
                    vec![],
                    span,
                );
            }
            binary_values(
                ev,
                if name == "max" {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                },
                a,
                b,
                span,
            )
        }
        "pow" => {
            let [a, b] = args.as_slice() else {
                return Err(err(codes::BAD_ARGUMENTS, "`T.pow` takes two values", span));
            };
            ev.binop(super::value::PyBinOp::Pow, a, b, span)
        }
        "clamp" => {
            let a = Args::new("clamp", &["dst", "min_val", "max_val"], args, kwargs, span)?;
            let (x, lo, hi) = match (a.get(0), a.get(1), a.get(2)) {
                (Some(x), Some(lo), Some(hi)) => (x.clone(), lo.clone(), hi.clone()),
                _ => {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`T.clamp` takes a value, a lower and an upper bound",
                        span,
                    ));
                }
            };
            let m = call(ev, "max", vec![x, lo], vec![], span)?;
            call(ev, "min", vec![m, hi], vec![], span)
        }
        "if_then_else" => {
            let [c, a, b] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.if_then_else` takes a condition and two values",
                    span,
                ));
            };
            ev.select(c, a, b, span)
        }
        "infinity" | "max_value" | "min_value" => {
            let [d] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`T.{name}` takes a dtype"),
                    span,
                ));
            };
            let d = dtype_of(d, span)?;
            let st = ev.stager(&format!("`T.{name}`"), span)?;
            let lit = match (name, d.kind()) {
                ("infinity", ir::DTypeKind::Float) => {
                    if d == DType::F8E4M3 {
                        return Err(err(codes::BAD_DTYPE, "float8_e4m3fn has no infinity", span));
                    }
                    Literal::Float(f64::INFINITY, d)
                }
                ("infinity", _) => {
                    return Err(err(
                        codes::BAD_DTYPE,
                        format!(
                            "`T.infinity` needs a floating dtype, got {}",
                            d.tilelang_name()
                        ),
                        span,
                    ));
                }
                (_, ir::DTypeKind::Float) => {
                    let m = d.max_finite().unwrap_or(f64::MAX);
                    Literal::Float(if name == "max_value" { m } else { -m }, d)
                }
                _ => {
                    let (lo, hi) = d.int_range().unwrap_or((0, 0));
                    let v = if name == "max_value" { hi } else { lo };
                    match d {
                        DType::Bool => Literal::Bool(v != 0),
                        _ => Literal::Int(i64::try_from(v).unwrap_or(-1), d),
                    }
                }
            };
            Ok(Value::Expr(st.lit(lit)))
        }
        "cast" => {
            let [x, d] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.cast` takes a value and a dtype",
                    span,
                ));
            };
            let d = dtype_of(d, span)?;
            cast(ev, x, d, span)
        }
        "Cast" => {
            let [d, x] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.Cast` takes a dtype and a value",
                    span,
                ));
            };
            let d = dtype_of(d, span)?;
            cast(ev, x, d, span)
        }
        "copy" => {
            let a = Args::new(
                "copy",
                // TileLang: `copy(src, dst, *, coalesced_width, ...)`.
                &[
                    "src",
                    "dst",
                    "*coalesced_width:scalar",
                    "disable_tma:scalar",
                    "eviction_policy:str",
                    "loop_layout",
                    "annotations:dict",
                    "prefer_instruction:str",
                ],
                args,
                kwargs,
                span,
            )?;
            need_kernel(ev, "`T.copy`", span)?;
            let mut src = operand_keep_head(ev, a.req(0, "a source")?, "`T.copy`", span)?;
            let mut dst = operand_keep_head(ev, a.req(1, "a destination")?, "`T.copy`", span)?;
            match (src.head, dst.head) {
                (true, true) => {
                    let st = ev.stager("`T.copy`", span)?;
                    let rank_s = src.region.ranges.len();
                    let rank_d = dst.region.ranges.len();
                    let _ = st;
                    if rank_s != rank_d {
                        return Err(Box::new(
                            Diagnostic::error(
                                codes::COPY_SHAPE,
                                "both operands of `T.copy` are single elements of different ranks",
                                span,
                            )
                            .with_label("give one side as a region"),
                        ));
                    }
                }
                (true, false) => fill_head(ev, &mut src, &dst, span)?,
                (false, true) => fill_head(ev, &mut dst, &src, span)?,
                _ => {}
            }
            // Extents in the views' own dimensions, before the mapping.
            check_same_extents(ev, &src, &dst, "`T.copy`", span)?;
            let st = ev.stager("`T.copy`", span)?;
            if super::views::settle_copy(st, &mut src, &mut dst, span)? {
                return Ok(Value::None);
            }
            if super::safe_value::pads(st, &src.region) {
                super::safe_value::copy(st, &src.region, &dst.region, span)?;
                return Ok(Value::None);
            }
            st.emit(
                Stmt::Copy {
                    src: src.region,
                    dst: dst.region,
                },
                span,
            );
            Ok(Value::None)
        }
        "gemm" => gemm(ev, args, kwargs, span),
        "wgmma_gemm" => {
            // TileLang's explicit Hopper gemm without its implicit wait:
            // the same product; the lowering picks the atom (`wgmma` on
            // sm_90a where the operands qualify) and retires it before
            // the result is read, which `T.wait_wgmma` would have asked.
            if args.len() > 7 {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!(
                        "`T.wgmma_gemm` takes at most 7 positional arguments, {} given",
                        args.len()
                    ),
                    span,
                ));
            }
            let kwargs = kwargs
                .into_iter()
                .filter(|(k, _)| k != "annotations")
                .collect();
            gemm(ev, args, kwargs, span)
        }
        "wait_wgmma" => {
            let _ = Args::new("wait_wgmma", &["id"], args, kwargs, span)?;
            need_kernel(ev, "`T.wait_wgmma`", span)?;
            Ok(Value::None)
        }
        "fill" | "clear" => {
            let (target, value) = if name == "clear" {
                let a = Args::new("clear", &["buffer", "annotations:dict"], args, kwargs, span)?;
                (a.req(0, "a buffer")?.clone(), Value::Int(0))
            } else {
                let a = Args::new(
                    "fill",
                    &["buffer", "value", "annotations:dict"],
                    args,
                    kwargs,
                    span,
                )?;
                (a.req(0, "a buffer")?.clone(), a.req(1, "a value")?.clone())
            };
            need_kernel(ev, &format!("`T.{name}`"), span)?;
            let dst = operand(ev, &target, &format!("`T.{name}`"), span)?;
            let st = ev.stager("`T.fill`", span)?;
            let dtype = st.func.buffers[dst.region.buffer].dtype;
            let v = st.value_expr(&value, Some(dtype), span)?;
            let v = st.cast(v, dtype, span)?;
            st.emit(
                Stmt::Fill {
                    dst: dst.region,
                    value: v,
                },
                span,
            );
            Ok(Value::None)
        }
        "reduce_sum" | "reduce_max" | "reduce_min" | "reduce_abssum" | "reduce_absmax"
        | "reduce_bitand" | "reduce_bitor" | "reduce_bitxor" => {
            let kind = ReduceKind::from_name(&name["reduce_".len()..]).unwrap_or(ReduceKind::Sum);
            let a = Args::new(
                leak_name(name),
                &[
                    "buffer",
                    "out",
                    "dim",
                    "clear",
                    "batch",
                    "nan_propagate",
                    "annotations:dict",
                ],
                args,
                kwargs,
                span,
            )?;
            need_kernel(ev, &format!("`T.{name}`"), span)?;
            // How many outputs share one cross-thread reduction, and
            // lowering controls: neither changes the result.
            if a.int(4, 1, "`batch`")? < 1 {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`batch` of `T.{name}` must be at least 1"),
                    span,
                ));
            }
            a.flag(5, false)?;
            let dim = a.int(2, -1, "`dim`")?;
            let clear = a.flag(3, true)?;
            // Views (and a kept unit dimension in `out`) go through
            // buffers of their own shapes (`views.rs`).
            let src_v = a.req(0, "a source buffer")?;
            let src = match super::views::staged(ev, src_v, name, false, true, span)? {
                Some(s) => s.buffer,
                None => whole_buffer(src_v, name, span)?,
            };
            let dst_v = super::views::keepdim(ev, a.req(1, "an output buffer")?, src, dim, span)?;
            let dst_s = super::views::staged(ev, &dst_v, name, false, !clear, span)?;
            let dst = match &dst_s {
                Some(s) => s.buffer,
                None => whole_buffer(&dst_v, name, span)?,
            };
            let st = ev.stager("a reduction", span)?;
            let dim = check_reduce(&st.func, src, dst, dim, name, span)?;
            if kind.is_bitwise()
                && let Some(b) = [src, dst]
                    .into_iter()
                    .find(|b| !st.func.buffers[*b].dtype.is_int())
            {
                let buf = &st.func.buffers[b];
                return Err(Box::new(
                    Diagnostic::error(
                        codes::TYPE_ERROR,
                        format!(
                            "`T.{name}` combines the bits of integers, but `{}` is {}",
                            buf.name,
                            buf.dtype.tilelang_name()
                        ),
                        span,
                    )
                    .with_label("not an integer buffer")
                    .with_note("reduce a buffer of an integer dtype (`T.int32`, `T.uint8`, ...)"),
                ));
            }
            st.emit(
                Stmt::Reduce {
                    kind,
                    src,
                    dst,
                    dim,
                    clear,
                },
                span,
            );
            if let Some(d) = &dst_s {
                super::views::unstage(st, d, span)?;
            }
            Ok(Value::None)
        }
        "cumsum" | "cummax" => {
            let a = Args::new(
                leak_name(name),
                &["src", "dst", "dim", "reverse", "annotations:dict"],
                args,
                kwargs,
                span,
            )?;
            need_kernel(ev, &format!("`T.{name}`"), span)?;
            // Regions and views go through buffers of their own shapes
            // (`views.rs`).
            let src_v = a.req(0, "a source buffer")?;
            let src_s = super::views::staged(ev, src_v, name, true, true, span)?;
            let src = match &src_s {
                Some(s) => s.buffer,
                None => whole_buffer(src_v, name, span)?,
            };
            let (dst, dst_s) = match a.get(1) {
                Some(v) => match super::views::staged(ev, v, name, true, false, span)? {
                    Some(s) => (s.buffer, Some(s)),
                    None => (whole_buffer(v, name, span)?, None),
                },
                None => (src, src_s),
            };
            let dim = a.int(2, 0, "`dim`")?;
            let reverse = a.flag(3, false)?;
            let st = ev.stager("a scan", span)?;
            let rank = st.func.buffers[src].shape.len() as i64;
            let d = if dim < 0 { dim + rank } else { dim };
            if d < 0 || d >= rank {
                return Err(err(
                    codes::REDUCE_SHAPE,
                    format!("`dim` {dim} is out of range for a {rank}-dimensional buffer"),
                    span,
                ));
            }
            if st.const_shape_of(src) != st.const_shape_of(dst) {
                return Err(err(
                    codes::REDUCE_SHAPE,
                    format!("`T.{name}` source and destination must have the same shape"),
                    span,
                ));
            }
            if name == "cummax" {
                super::tl_more::cummax(st, src, dst, u32::try_from(d).unwrap_or(0), reverse, span)?;
            } else {
                st.emit(
                    Stmt::Cumsum {
                        src,
                        dst,
                        dim: u32::try_from(d).unwrap_or(0),
                        reverse,
                    },
                    span,
                );
            }
            if let Some(d) = &dst_s {
                super::views::unstage(st, d, span)?;
            }
            Ok(Value::None)
        }
        "atomic_add" | "atomic_max" | "atomic_min" => {
            let (op, fname, fifth, sixth) = match name {
                "atomic_max" => (ir::AtomicOp::Max, "atomic_max", "annotations:dict", ""),
                "atomic_min" => (ir::AtomicOp::Min, "atomic_min", "annotations:dict", ""),
                _ => (
                    ir::AtomicOp::Add,
                    "atomic_add",
                    "use_tma:scalar",
                    "annotations:dict",
                ),
            };
            let what = &format!("`T.{fname}`");
            let a = Args::new(
                fname,
                &[
                    "dst",
                    "value",
                    "memory_order:str",
                    "return_prev:scalar",
                    fifth,
                    sixth,
                ][..if sixth.is_empty() { 5 } else { 6 }],
                args,
                kwargs,
                span,
            )?;
            need_kernel(ev, what, span)?;
            if a.flag(3, false)? {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!("`T.{name}(..., return_prev=True)` is not supported yet"),
                        span,
                    )
                    .with_label("the previous value cannot be returned"),
                ));
            }
            let dst_v = a.req(0, "a destination")?.clone();
            let val_v = a.req(1, "a value")?.clone();
            let mut dst = operand(ev, &dst_v, what, span)?;
            let value_is_region = matches!(val_v, Value::Buffer(b) if !is_var_scope(ev, &b))
                || matches!(&val_v, Value::Access(acc) if acc.items.iter().any(|i| matches!(i, IndexItem::Slice { .. })));
            let value = if value_is_region {
                let mut src = operand(ev, &val_v, what, span)?;
                match (dst.head, src.head) {
                    (true, false) => fill_head(ev, &mut dst, &src, span)?,
                    (false, true) => fill_head(ev, &mut src, &dst, span)?,
                    _ => {}
                }
                check_same_extents(ev, &src, &dst, what, span)?;
                AtomicValue::Region(src.region)
            } else {
                let st = ev.stager(what, span)?;
                let dtype = st.func.buffers[dst.region.buffer].dtype;
                let e = st.value_expr(&val_v, Some(dtype), span)?;
                AtomicValue::Scalar(st.cast(e, dtype, span)?)
            };
            let st = ev.stager(what, span)?;
            let stmt = match op {
                ir::AtomicOp::Add => Stmt::AtomicAdd {
                    dst: dst.region,
                    value,
                },
                op => Stmt::Atomic {
                    op,
                    dst: dst.region,
                    value,
                },
            };
            // An element combined with an element (`T.atomic_add(B[0], x)`,
            // also max and min) is TileLang's thread-level atomic: every
            // thread that reaches it combines once. At block level that is each of the kernel's
            // threads, which a parallel loop over the thread count says in
            // the IR. Inside `T.Parallel` the loop already gives one add per
            // element; under a condition on the thread index, in a `T.ws`
            // role or outside a kernel it stays one operation.
            let thread_level = matches!(&dst_v, Value::Access(acc) if !acc.items.iter().any(|i| matches!(i, IndexItem::Slice { .. })))
                && !value_is_region;
            if thread_level && st.many_thread_guard_depth > 0 && st.parallel_depth == 0 {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!(
                            "a thread-level {what} under a condition on the thread index \
                             that may pass several threads is not supported"
                        ),
                        span,
                    )
                    .with_label(format!(
                        "TileLang runs {what} once per thread that passes the condition"
                    ))
                    .with_note(format!(
                        "tilec runs a thread-level atomic once per thread only at block level \
                         or under `tx == k`; write the {what} inside a `T.Parallel` loop over \
                         as many iterations as threads pass"
                    )),
                ));
            }
            match st.kernel {
                Some(k)
                    if thread_level
                        && st.parallel_depth == 0
                        && st.thread_guard_depth == 0
                        && !k.in_role
                        && k.threads > 1 =>
                {
                    let t = st.add_var("t", DType::I32, ir::VarKind::Loop);
                    st.per_thread_loops.insert(t);
                    let extent = st.int(i64::from(k.threads));
                    let mut body = ir::Block::new();
                    body.push(stmt, span);
                    st.emit(
                        Stmt::Parallel {
                            vars: vec![t],
                            extents: vec![extent],
                            body,
                        },
                        span,
                    );
                }
                _ => st.emit(stmt, span),
            }
            Ok(Value::None)
        }
        "Pipelined" => {
            let a = Args::new(
                "Pipelined",
                &[
                    "start",
                    "stop",
                    "num_stages",
                    "order",
                    "stage",
                    "sync",
                    "group",
                ],
                args,
                kwargs,
                span,
            )?;
            let (s, e) = loop_range(ev, a.req(0, "an extent")?, a.get(1), span)?;
            let order = int_list(a.get(3), "`order`", span)?;
            let stage = int_list(a.get(4), "`stage`", span)?;
            // Without `num_stages`, a `stage` list implies its depth.
            let given = !matches!(a.get(2), None | Some(Value::None));
            let num_stages = match &stage {
                Some(st) if !given => st.iter().max().map_or(0, |&m| m.saturating_add(1).max(0)),
                _ => a.int(2, 0, "`num_stages`")?,
            };
            if !(0..=16).contains(&num_stages) {
                let what = if given {
                    ""
                } else {
                    " (one more than the largest `stage`)"
                };
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!("`num_stages`{what} must be between 0 and 16, got {num_stages}"),
                    span,
                ));
            }
            let group = match a.get(6) {
                None | Some(Value::None) => None,
                Some(g) => {
                    let bad = || {
                        err(
                            codes::BAD_TILELANG_ARGUMENT,
                            "`group` must be a list of lists of statement indices",
                            span,
                        )
                    };
                    let seq = g.as_sequence().ok_or_else(bad)?;
                    let groups = seq
                        .iter()
                        .map(|members| int_list(Some(members), "each entry of `group`", span))
                        .collect::<EResult<Vec<_>>>()?;
                    Some(groups.into_iter().map(Option::unwrap_or_default).collect())
                }
            };
            if let (Some(o), Some(st)) = (&order, &stage)
                && o.len() != st.len()
            {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    "`order` and `stage` must have the same length",
                    span,
                ));
            }
            Ok(Value::Loop(Rc::new(LoopSpec {
                kind: LoopSpecKind::Serial(LoopKind::Pipelined {
                    num_stages: u32::try_from(num_stages).unwrap_or(0),
                    order,
                    stage,
                    schedule: None,
                }),
                group,
                ranges: vec![(s, e)],
                step: None,
            })))
        }
        "serial" | "unroll" | "vectorized" => {
            let kwargs = super::tl_more::loop_annotations(name, kwargs, span)?;
            let a = Args::new(
                leak_name(name),
                &["start", "stop", "step", "explicit", "unroll_factor"],
                args,
                kwargs,
                span,
            )?;
            let step = match a.get(2).map(|v| v.as_int()) {
                None | Some(Some(1)) => None,
                Some(Some(k)) if k > 1 && name != "vectorized" => Some(k),
                Some(_) => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::UNSUPPORTED_TILELANG,
                            "kernel loops with a step that is not a compile-time integer of at least 1 are not supported",
                            span,
                        )
                        .with_label("this step")
                        .with_note("write the loop over the iteration count and compute the index: `for j in T.serial(n):` with `i = start + step * j`"),
                    ));
                }
            };
            let (s, mut e) = loop_range(ev, a.req(0, "an extent")?, a.get(1), span)?;
            if let Some(k) = step {
                // ceil(extent / k) iterations (none when the range is empty).
                let st = ev.stager("a loop", span)?;
                let t = st.ty(e);
                let km1 = st.lit(Literal::Int(k - 1, t));
                let kk = st.lit(Literal::Int(k, t));
                let up = st.binary(BinaryOp::Add, e, km1, span)?;
                e = st.binary(BinaryOp::FloorDiv, up, kk, span)?;
            }
            let kind = match name {
                "serial" => LoopKind::Serial,
                "unroll" => LoopKind::Unroll,
                _ => LoopKind::Vectorized,
            };
            Ok(Value::Loop(Rc::new(LoopSpec {
                kind: LoopSpecKind::Serial(kind),
                group: None,
                ranges: vec![(s, e)],
                step,
            })))
        }
        "parallel" => {
            // TVM's parallel loop kind, which TileLang's `T.Parallel` builds
            // and its layout inference takes as one: `T.parallel(n)` and
            // `T.parallel(0, n)` are `T.Parallel(n)`.
            let a = Args::new(
                "parallel",
                &["start", "stop", "annotations"],
                args,
                kwargs,
                span,
            )?;
            let start = a.req(0, "an extent")?.clone();
            let extent = match a.get(1) {
                None => start,
                Some(stop) if start.as_int() == Some(0) => stop.clone(),
                Some(_) => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::UNSUPPORTED_TILELANG,
                            "`T.parallel(start, stop)` with a start other than 0 is not supported",
                            span,
                        )
                        .with_label("start given here")
                        .with_note(
                            "write `for i in T.Parallel(stop - start):` and use `start + i`",
                        ),
                    ));
                }
            };
            call(ev, "Parallel", vec![extent], Vec::new(), span)
        }
        "Parallel" => {
            let kwargs = super::tl_more::parallel_hints(kwargs, span)?;
            for (k, _) in &kwargs {
                if k != "coalesced_width" && k != "loop_layout" {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        format!("`T.Parallel` has no parameter `{k}`"),
                        span,
                    ));
                }
            }
            if args.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.Parallel` needs at least one extent",
                    span,
                ));
            }
            let mut ranges = Vec::new();
            let mut guards = Vec::new();
            for v in &args {
                let (n, guard) = match v.as_int() {
                    Some(n) => (Some(n), None),
                    None => parallel_bound(ev, v, span)?,
                };
                guards.push(guard);
                let n = n.ok_or_else(|| {
                    let mut d = Diagnostic::error(codes::NOT_CONSTANT, "`T.Parallel` extents must be compile-time integers", span)
                        .with_label(format!("got {}", v.a_type_name()))
                        .with_note("parallel loops cover tiles whose size is fixed when the kernel is compiled; a run-time extent is accepted when its largest value is a compile-time integer (`T.min(n, 512)`)");
                    if let Value::Symbol(name, _) = v {
                        d = d.with_note(format!("`{name}` is a symbolic size; make the extent a builder parameter, or, where `{name}` comes from `T.const`, give it with `-D {name}=...`"));
                    } else {
                        d = d.with_note("otherwise loop over the largest extent and guard the body: `for i in T.Parallel(MAX):` then `if i < n:`");
                    }
                    Box::new(d)
                })?;
                if n <= 0 || i32::try_from(n).is_err() {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("`T.Parallel` extents must be positive 32-bit integers, got {n}"),
                        span,
                    ));
                }
                let st = ev.stager("`T.Parallel`", span)?;
                let zero = st.int(0);
                let ext = st.int(n);
                ranges.push((zero, ext));
            }
            let kind = if guards.iter().any(Option::is_some) {
                LoopSpecKind::ParallelGuarded(guards)
            } else {
                LoopSpecKind::Parallel
            };
            Ok(Value::Loop(Rc::new(LoopSpec {
                kind,
                group: None,
                ranges,
                step: None,
            })))
        }
        "use_swizzle" => {
            // The block order: what runs together, never what is computed.
            let a = Args::new(
                "use_swizzle",
                &["panel_size", "order", "enable"],
                args,
                kwargs,
                span,
            )?;
            let size = a.int(0, 0, "`panel_size`")?;
            a.req(0, "a `panel_size`")?;
            let column = match a.get(1) {
                None => false,
                Some(Value::Str(s)) if &**s == "row" => false,
                Some(Value::Str(s)) if &**s == "col" || &**s == "column" => true,
                Some(other) => {
                    let got = match other {
                        Value::Str(s) => format!("{s:?}"),
                        v => v.a_type_name().to_string(),
                    };
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("`order` of `T.use_swizzle` is \"row\" or \"col\", got {got}"),
                        span,
                    ));
                }
            };
            let enable = a.flag(2, true)?;
            let size = u32::try_from(size)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("`panel_size` of `T.use_swizzle` must be at least 1, got {size}"),
                        span,
                    )
                })?;
            let st = ev.kernel_stager("`T.use_swizzle`", span)?;
            if let Some(k) = st.kernel.as_mut() {
                k.order = Some(if enable {
                    ir::BlockOrder::Panels { size, column }
                } else {
                    ir::BlockOrder::Linear
                });
            }
            Ok(Value::None)
        }
        "Layout" => layout_map(ev, args, &kwargs, span),
        // Its arguments are not evaluated: the lowering distributes
        // fragments itself (`T.annotate_layout` says so in a warning).
        "Fragment" => Ok(Value::Layout(Rc::new(LayoutSpec {
            buffer: None,
            kind: LayoutKind::Fragment,
            span,
        }))),
        "annotate_layout" => {
            need_kernel(ev, "`T.annotate_layout`", span)?;
            let map = match (args.as_slice(), kwargs.as_slice()) {
                ([Value::Dict(map)], []) => map.borrow().clone(),
                ([], [(_, Value::Dict(map))]) => map.borrow().clone(),
                _ => {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`T.annotate_layout` takes a dict from buffers to layouts",
                        span,
                    ));
                }
            };
            for (key, layout) in &map {
                let Value::Buffer(buffer) = key else {
                    return Err(err(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!(
                            "the keys of `T.annotate_layout` are buffers, not {}",
                            key.a_type_name()
                        ),
                        span,
                    ));
                };
                // Layouts tilec does not realize (fragment layouts, other
                // constructors) stay hints.
                if let Value::Layout(spec) = layout {
                    pin_layout(ev, *buffer, spec, span)?;
                }
            }
            Ok(Value::None)
        }
        "no_set_max_nreg"
        | "disable_warp_group_reg_alloc"
        | "set_max_nreg"
        | "fence_proxy_async" => {
            // `set_max_nreg` and `fence_proxy_async` too: the compiler
            // budgets registers per role and places proxy fences itself.
            // Scheduling hints: no effect on what the kernel computes.
            need_kernel(ev, &format!("`T.{name}`"), span)?;
            Ok(Value::None)
        }
        "print" => Ok(Value::None),
        "ws" => {
            if !kwargs.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ws` takes warp-group indices only",
                    span,
                ));
            }
            let mut groups = Vec::with_capacity(args.len());
            for v in &args {
                match v.as_int() {
                    Some(g) if (0..1 << 20).contains(&g) => groups.push(g as u32),
                    _ => {
                        return Err(Box::new(
                            Diagnostic::error(
                                codes::NOT_CONSTANT,
                                "the warp groups of `T.ws` must be compile-time integers from 0",
                                span,
                            )
                            .with_label(format!("got {}", v.a_type_name())),
                        ));
                    }
                }
            }
            if groups.is_empty() {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.ws` needs at least one warp group",
                    span,
                ));
            }
            groups.sort_unstable();
            groups.dedup();
            Ok(Value::Role(groups.into()))
        }
        "alloc_barrier" | "create_list_of_mbarrier" => {
            let counts: Vec<i64> = if name == "alloc_barrier" {
                let a = Args::new("alloc_barrier", &["arrive_count"], args, kwargs, span)?;
                let v = a.req(0, "the arrival count of each barrier")?;
                match v.as_int() {
                    Some(n) => vec![n],
                    None => int_list(Some(v), "`arrive_count`", span)?.unwrap_or_default(),
                }
            } else {
                // One list, or the counts as separate arguments.
                if !kwargs.is_empty() {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`T.create_list_of_mbarrier` takes arrival counts only",
                        span,
                    ));
                }
                match args.as_slice() {
                    [v] if v.as_int().is_none() => {
                        int_list(Some(v), "the arrival counts", span)?.unwrap_or_default()
                    }
                    _ => int_list(
                        Some(&Value::tuple(args.clone())),
                        "the arrival counts",
                        span,
                    )?
                    .unwrap_or_default(),
                }
            };
            if counts.is_empty() || counts.iter().any(|&c| !(1..=1 << 20).contains(&c)) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        "`T.alloc_barrier` needs arrival counts from 1 to 2^20 (threads per phase)",
                        span,
                    )
                    .with_label(format!("got {counts:?}")),
                ));
            }
            let what = format!("`T.{name}`");
            let st = ev.kernel_stager(&what, span)?;
            if st.kernel.as_ref().is_some_and(|k| k.in_role) {
                return Err(Box::new(
                    Diagnostic::error(codes::PLACEMENT, format!("{what} inside `T.ws`"), span)
                        .with_label("allocated inside a role")
                        .with_note("barriers are shared by the roles: allocate them in the kernel body, outside `T.ws`"),
                ));
            }
            let listed = name == "create_list_of_mbarrier";
            if listed && st.kernel.as_ref().is_some_and(|k| k.mbarriers.is_some()) {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::PLACEMENT,
                        "a second `T.create_list_of_mbarrier` in one kernel",
                        span,
                    )
                    .with_label("the kernel already has its numbered barriers")
                    .with_note(
                        "list every barrier in one call, or use `T.alloc_barrier` for named arrays",
                    ),
                ));
            }
            let n = st.int(counts.len() as i64);
            let b = st.add_buffer("mbar", DType::U64, vec![n], Scope::Barrier, span);
            st.unnamed.insert(b);
            st.emit(
                Stmt::AllocBarrier {
                    buffer: b,
                    counts: counts.iter().map(|&c| c as u32).collect(),
                },
                span,
            );
            if listed {
                if let Some(k) = st.kernel.as_mut() {
                    k.mbarriers = Some(b);
                }
                return Ok(Value::None);
            }
            Ok(Value::Buffer(b))
        }
        "get_mbarrier" => {
            let a = Args::new("get_mbarrier", &["id"], args, kwargs, span)?;
            let id = a.req(0, "a barrier number")?.clone();
            let (buffer, index) = numbered_barrier(ev, &id, "get_mbarrier", span)?;
            Ok(Value::Access(Rc::new(Access {
                buffer,
                items: vec![IndexItem::Point(index)],
                span,
            })))
        }
        "barrier_arrive" | "mbarrier_arrive" => {
            let (fname, params): (&'static str, &[&str]) = if name == "barrier_arrive" {
                ("barrier_arrive", &["barrier_id"])
            } else {
                ("mbarrier_arrive", &["mbarrier"])
            };
            let a = Args::new(fname, params, args, kwargs, span)?;
            let (barrier, index) = barrier_element(ev, a.req(0, "a barrier")?, name, span)?;
            let st = ev.kernel_stager(&format!("`T.{name}`"), span)?;
            st.emit(Stmt::BarrierArrive { barrier, index }, span);
            Ok(Value::None)
        }
        "barrier_wait" | "mbarrier_wait_parity" => {
            let (fname, params): (&'static str, &[&str]) = if name == "barrier_wait" {
                ("barrier_wait", &["barrier_id", "parity"])
            } else {
                ("mbarrier_wait_parity", &["mbarrier", "parity"])
            };
            let a = Args::new(fname, params, args, kwargs, span)?;
            let (barrier, index) = barrier_element(ev, a.req(0, "a barrier")?, name, span)?;
            let parity = a.req(1, "the parity of the phase to wait for")?.clone();
            let parity = ev.index_expr_of(&parity, span)?;
            let st = ev.kernel_stager(&format!("`T.{name}`"), span)?;
            st.emit(
                Stmt::BarrierWait {
                    barrier,
                    index,
                    parity,
                },
                span,
            );
            Ok(Value::None)
        }
        "sync_threads" => {
            let st = ev.kernel_stager("`T.sync_threads`", span)?;
            st.emit(Stmt::Barrier, span);
            Ok(Value::None)
        }
        "get_thread_binding" => {
            let a = Args::new("get_thread_binding", &["dim"], args, kwargs, span)?;
            let dim = a.int(0, 0, "`dim`")?;
            let Ok(dim @ 0..=2) = usize::try_from(dim) else {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "`T.get_thread_binding({dim})`: the dimension is 0, 1 or 2 (threadIdx.x, y, z)"
                    ),
                    span,
                ));
            };
            super::thread_dims::part(ev, dim, span)
        }
        "assume" => {
            let [c] = args.as_slice() else {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`T.assume` takes a condition",
                    span,
                ));
            };
            match c.truthy() {
                Some(true) => Ok(Value::None),
                Some(false) => Err(err(
                    codes::ASSERTION_FAILED,
                    "`T.assume` of a condition that is false at compile time",
                    span,
                )),
                None => {
                    let st = ev.stager("`T.assume`", span)?;
                    let cond = st.bool_expr(c, span)?;
                    st.emit(Stmt::Assume { cond }, span);
                    Ok(Value::None)
                }
            }
        }
        more if super::tl_more::handles(more) => super::tl_more::call(ev, more, args, kwargs, span),
        v if super::views::handles(v) => super::views::call(ev, v, args, kwargs, span),
        p if super::cp_async::handles(p) => super::cp_async::call(ev, p, args, kwargs, span),
        r if super::reducer::handles(r) => super::reducer::call(ev, r, args, kwargs, span),
        n if super::tir::handles(n) => super::tir::call(ev, n, args, kwargs, span),
        other => {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("`T.{other}` is not supported by tilec"),
                span,
            )
            .with_label("not supported");
            Err(Box::new(match super::tl_more::unsupported_note(other) {
                Some(note) => d.with_note(note),
                None => d,
            }))
        }
    }
}

fn leak_name(name: &str) -> &'static str {
    FUNCTIONS
        .iter()
        .find(|n| **n == name)
        .copied()
        .unwrap_or("function")
}

fn is_var_scope(ev: &Evaluator<'_>, b: &Handle<ir::Buffer>) -> bool {
    ev.stagers
        .last()
        .is_some_and(|s| s.func.buffers[*b].scope == Scope::Var)
}

fn last_stmt_mut(st: &mut super::stage::Stager) -> Option<&mut Stmt> {
    st.last_stmt_mut()
}

fn whole_buffer(v: &Value<'_>, name: &str, span: Span) -> EResult<Handle<ir::Buffer>> {
    match v {
        Value::Buffer(b) => Ok(*b),
        Value::Poison(_) => Err(super::stage::cascade()),
        other => Err(Box::new(
            Diagnostic::error(
                codes::TYPE_ERROR,
                format!(
                    "`T.{name}` takes whole buffers, got {}",
                    other.a_type_name()
                ),
                span,
            )
            .with_label("not a buffer")
            .with_note("copy the region into a buffer of its own first"),
        )),
    }
}

fn check_reduce(
    f: &ir::Function,
    src: Handle<ir::Buffer>,
    dst: Handle<ir::Buffer>,
    dim: i64,
    name: &str,
    span: Span,
) -> EResult<u32> {
    let sb = &f.buffers[src];
    let db = &f.buffers[dst];
    let rank = sb.shape.len() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    if d < 0 || d >= rank {
        return Err(Box::new(
            Diagnostic::error(
                codes::REDUCE_SHAPE,
                format!(
                    "`dim` {dim} is out of range for the {rank}-dimensional `{}`",
                    sb.name
                ),
                span,
            )
            .with_label("reduction here"),
        ));
    }
    let du = usize::try_from(d).unwrap_or(0);
    let src_shape = f.const_shape(src);
    let dst_shape = f.const_shape(dst);
    if let (Some(s), Some(t)) = (src_shape, dst_shape) {
        let mut expected: Vec<i64> = s
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != du)
            .map(|(_, v)| *v)
            .collect();
        if expected.is_empty() {
            expected.push(1);
        }
        if expected != t {
            return Err(Box::new(
                Diagnostic::error(
                    codes::REDUCE_SHAPE,
                    format!("`T.{name}` along dim {d} of `{}` {:?} gives shape {:?}, but `{}` has shape {:?}", sb.name, s, expected, db.name, t),
                    span,
                )
                .with_label("shape mismatch")
                .with_note("the output has the input's shape with the reduced dimension removed, or kept as extent 1"),
            ));
        }
    }
    u32::try_from(d).map_err(|_| err(codes::REDUCE_SHAPE, "dim out of range", span))
}

fn gemm<'a>(
    ev: &mut Evaluator<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let a = Args::new(
        "gemm",
        &[
            "A",
            "B",
            "C",
            "transpose_A",
            "transpose_B",
            "policy",
            "clear_accum",
            "k_pack",
            "wg_wait",
            "mbar",
            "annotations:dict",
        ],
        args,
        kwargs,
        span,
    )?;
    need_kernel(ev, "`T.gemm`", span)?;
    let ta = a.flag(3, false)?;
    let tb = a.flag(4, false)?;
    let policy = match a.get(5) {
        None => GemmPolicy::Square,
        Some(Value::Policy(p)) => *p,
        Some(other) => {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "`policy` must be a `T.GemmWarpPolicy`, got {}",
                        other.a_type_name()
                    ),
                    span,
                )
                .with_label("policy argument"),
            ));
        }
    };
    let clear_v = a.get(6).cloned().unwrap_or(Value::Bool(false));
    let k_pack = a.int(7, 1, "`k_pack`")?;
    if k_pack != 1 && k_pack != 2 {
        return Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            "`k_pack` must be 1 or 2",
            span,
        ));
    }
    let oa = operand(ev, a.req(0, "operand A")?, "`T.gemm`", span)?;
    let ob = operand(ev, a.req(1, "operand B")?, "`T.gemm`", span)?;
    let oc = operand(ev, a.req(2, "accumulator C")?, "`T.gemm`", span)?;
    let st = ev.stager("`T.gemm`", span)?;
    let f = &st.func;
    for (o, which, allowed) in [
        (&oa, "A", &[Scope::Shared, Scope::Fragment][..]),
        (&ob, "B", &[Scope::Shared, Scope::Fragment][..]),
        (&oc, "C", &[Scope::Fragment, Scope::Local][..]),
    ] {
        let b = &f.buffers[o.region.buffer];
        if !allowed.contains(&b.scope) {
            let mut d = Diagnostic::error(codes::GEMM_SHAPE, format!("`T.gemm` operand {which} (`{}`) is in {} memory", b.name, b.scope.name()), o.span)
                    .with_label(format!("{} buffer", b.scope.name()))
                    .with_note(if which == "C" {
                        "the accumulator must be a fragment (`T.alloc_fragment`) or a local buffer"
                    } else {
                        "copy the operand into shared memory (`T.alloc_shared` + `T.copy`) or a fragment first"
                    });
            if let Some(n) = super::tir::gemm_scope_note(which, b.scope) {
                d = d.with_note(n);
            }
            return Err(Box::new(d));
        }
    }
    let dims = |o: &Operand| -> Result<Vec<Option<i64>>, Box<Diagnostic>> {
        let e = non_unit(&const_extents(f, &o.region));
        if e.len() > 2 {
            return Err(Box::new(
                Diagnostic::error(
                    codes::GEMM_SHAPE,
                    format!(
                        "`T.gemm` operands must be 2-D tiles, this one is {}",
                        shape_text(&e)
                    ),
                    o.span,
                )
                .with_label("not a matrix"),
            ));
        }
        let mut e = e;
        while e.len() < 2 {
            e.insert(0, Some(1));
        }
        Ok(e)
    };
    let (da, db, dc) = (dims(&oa)?, dims(&ob)?, dims(&oc)?);
    let (m, ka) = if ta { (da[1], da[0]) } else { (da[0], da[1]) };
    let (kb, n) = if tb { (db[1], db[0]) } else { (db[0], db[1]) };
    let mismatch = |x: Option<i64>, y: Option<i64>| matches!((x, y), (Some(p), Some(q)) if p != q);
    if mismatch(ka, kb) || mismatch(m, dc[0]) || mismatch(n, dc[1]) {
        let show = |v: Option<i64>| v.map_or("?".to_string(), |x| x.to_string());
        return Err(Box::new(
            Diagnostic::error(
                codes::GEMM_SHAPE,
                format!(
                    "`T.gemm` shapes do not agree: A is {}×{}{}, B is {}×{}{}, C is {}×{}",
                    show(da[0]), show(da[1]), if ta { " (transposed)" } else { "" },
                    show(db[0]), show(db[1]), if tb { " (transposed)" } else { "" },
                    show(dc[0]), show(dc[1])
                ),
                span,
            )
            .with_secondary(oa.span, "A")
            .with_secondary(ob.span, "B")
            .with_secondary(oc.span, "C")
            .with_note("C (M×N) += op(A) (M×K) · op(B) (K×N); `transpose_A`/`transpose_B` say whether A is stored K×M and B N×K"),
        ));
    }
    let clear = st.bool_expr(&clear_v, span)?;
    st.emit(
        Stmt::Gemm {
            a: oa.region,
            b: ob.region,
            c: oc.region,
            transpose_a: ta,
            transpose_b: tb,
            policy,
            clear_accum: clear,
        },
        span,
    );
    Ok(Value::None)
}

/// A run-time `T.Parallel` extent whose largest value is a compile-time
/// integer (`T.min(n, 512)`): that bound, and the extent itself, which
/// guards the body. TileLang runs the loop over the run-time extent; over
/// the bound with the body under `i < extent`, the same iterations run.
/// `(None, None)` when the value is not an integer expression with such a
/// bound.
fn parallel_bound<'a>(
    ev: &mut Evaluator<'a>,
    v: &Value<'a>,
    span: Span,
) -> EResult<(Option<i64>, Option<Handle<ir::Expr>>)> {
    let Value::Expr(e) = v else {
        return Ok((None, None));
    };
    let st = ev.kernel_stager("`T.Parallel`", span)?;
    if !st.ty(*e).is_int() {
        return Ok((None, None));
    }
    fn upper(st: &super::stage::Stager, e: Handle<ir::Expr>) -> Option<i64> {
        match &st.func.exprs[e] {
            ir::Expr::Literal(l) => l.as_i64(),
            ir::Expr::Var(v) => upper(st, st.let_value(*v)?),
            ir::Expr::Binary {
                op: BinaryOp::Min,
                lhs,
                rhs,
            } => match (upper(st, *lhs), upper(st, *rhs)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            _ => None,
        }
    }
    match upper(st, *e) {
        Some(n) => Ok((Some(n), Some(*e))),
        None => Ok((None, None)),
    }
}

/// The body of a `T.Parallel` over bounded run-time extents, under the
/// condition that every variable with such an extent is below it.
pub(crate) fn guard_parallel_body(
    st: &mut super::stage::Stager,
    vars: &[Handle<ir::Var>],
    extents: &[Option<Handle<ir::Expr>>],
    body: ir::Block,
    span: Span,
) -> EResult<ir::Block> {
    let mut cond: Option<Handle<ir::Expr>> = None;
    for (v, extent) in vars.iter().zip(extents) {
        let Some(extent) = extent else { continue };
        // Compared in the extent's type: the extent is at most the bound,
        // but may be below the range of the variable's type.
        let var = st.var(*v);
        let var = st.cast(var, st.ty(*extent), span)?;
        let below = st.binary(BinaryOp::Lt, var, *extent, span)?;
        cond = Some(match cond {
            None => below,
            Some(c) => st.binary(BinaryOp::And, c, below, span)?,
        });
    }
    let Some(cond) = cond else { return Ok(body) };
    let mut guarded = ir::Block::new();
    guarded.push(
        Stmt::If {
            cond,
            then: body,
            otherwise: ir::Block::new(),
        },
        span,
    );
    Ok(guarded)
}

/// The names of the symbolic sizes `e` uses, in order of first use.
fn symbols_in(f: &ir::Function, e: Handle<ir::Expr>, out: &mut Vec<String>) {
    if let ir::Expr::Var(v) = &f.exprs[e] {
        let var = &f.vars[*v];
        if var.kind == ir::VarKind::Symbolic && !out.contains(&var.name) {
            out.push(var.name.clone());
        }
    }
    for o in f.exprs[e].operands() {
        symbols_in(f, o, out);
    }
}
