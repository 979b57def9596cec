//! The compile-time Python library: built-in functions, `math`,
//! `itertools`, methods of lists, dicts and strings, and attribute lookup on
//! modules (`tilelang`, `torch`) and staged values (`buffer.shape`,
//! `x.astype`).

use super::codes;
use super::eval::{Evaluator, err, seq_index};
use super::value::{
    AutotuneValue, EResult, IndexItem, JitValue, LayoutKind, LayoutSpec, Value, py_cmp, py_eq,
};
use crate::front::Diagnostic;
use crate::ir::{DType, GemmPolicy, Span};
use std::collections::BTreeMap;
use std::rc::Rc;

/// `pass_configs` keys that tilec honours; others draw a warning (for
/// one, `tl.disable_thread_storage_sync`: the lowering places the barriers
/// its analysis of each buffer's accesses asks for either way).
const KNOWN_PASS_CONFIGS: &[&str] = &[
    "tl.enable_fast_math",
    "tl.disable_warp_specialized",
    "tl.disable_tma_lower",
    crate::ir::lists::FOLLOW_ROTATIONS,
];

/// The entries of a `pass_configs` dict (keys and values as strings);
/// keys tilec does not read draw a warning. Anything but a dict is empty.
pub(crate) fn pass_config_map(
    ev: &mut Evaluator<'_>,
    d: &Value<'_>,
    span: Span,
) -> BTreeMap<String, String> {
    let mut pass_configs = BTreeMap::new();
    if let Value::Dict(d) = d {
        for (k, v) in d.borrow().iter() {
            let key = k.to_py_str();
            if !KNOWN_PASS_CONFIGS.contains(&key.as_str()) {
                ev.diags.push(
                    Diagnostic::warning(
                        codes::IGNORED,
                        format!("pass config `{key}` has no effect in tilec"),
                        span,
                    )
                    .with_note(format!("tilec reads: {}", KNOWN_PASS_CONFIGS.join(", "))),
                );
            }
            pass_configs.insert(key, v.to_py_str());
        }
    }
    pass_configs
}

/// `T.tfloat32`, as `T.float32` with a warning at its mention. TileLang
/// stores TF32 elements in 32 bits and keeps 10 bits of mantissa of each
/// one it reads or writes (CUTLASS's `tfloat32_t`), and its gemm multiplies
/// them in TF32; tilec keeps all 23 bits, so its results are the same
/// computation done more exactly.
fn tfloat32<'a>(ev: &mut Evaluator<'a>, span: Span) -> Value<'a> {
    // Once per mention, however often the code around it runs.
    if ev
        .diags
        .iter()
        .any(|d| d.code == codes::MORE_PRECISE && d.primary.span == span)
    {
        return Value::DType(DType::F32);
    }
    ev.diags.push(
        Diagnostic::warning(
            codes::MORE_PRECISE,
            "`T.tfloat32` is staged as `T.float32`: its values keep full float32 precision",
            span,
        )
        .with_label("TensorFloat-32")
        .with_note(
            "TileLang keeps 10 mantissa bits of each `T.tfloat32` element it reads or writes and \
             multiplies such operands in TF32; tilec keeps all 23 and multiplies in float32, so its \
             results are more exact and may differ from TileLang's in the low-order bits",
        ),
    );
    Value::DType(DType::F32)
}

/// Python built-in names.
pub(crate) fn builtin_name<'a>(name: &str) -> Option<Value<'a>> {
    const NAMES: &[&str] = &[
        "range",
        "len",
        "min",
        "max",
        "abs",
        "int",
        "float",
        "bool",
        "str",
        "tuple",
        "list",
        "dict",
        "print",
        "enumerate",
        "zip",
        "sum",
        "any",
        "all",
        "round",
        "pow",
        "divmod",
        "sorted",
        "reversed",
        "isinstance",
        "slice",
        "repr",
        "hasattr",
        "getattr",
        "map",
        "filter",
    ];
    match name {
        "True" => Some(Value::Bool(true)),
        "False" => Some(Value::Bool(false)),
        "None" => Some(Value::None),
        _ => NAMES
            .iter()
            .find(|n| **n == name)
            .map(|n| Value::Builtin(n))
            .or_else(|| super::pylib::builtin_name(name)),
    }
}

/// The constructors of `tilelang.layout` (and `tilelang.intrinsics`) whose
/// shared-memory layouts `T.annotate_layout` pins, by attribute name.
const LAYOUT_CONSTRUCTORS: &[(&str, &str)] = &[
    (
        "make_swizzled_layout",
        "tilelang.layout.make_swizzled_layout",
    ),
    (
        "make_wgmma_swizzled_layout",
        "tilelang.layout.make_wgmma_swizzled_layout",
    ),
    (
        "make_mma_swizzle_layout",
        "tilelang.layout.make_mma_swizzle_layout",
    ),
    (
        "make_full_bank_swizzled_layout",
        "tilelang.layout.make_full_bank_swizzled_layout",
    ),
    (
        "make_half_bank_swizzled_layout",
        "tilelang.layout.make_half_bank_swizzled_layout",
    ),
    (
        "make_quarter_bank_swizzled_layout",
        "tilelang.layout.make_quarter_bank_swizzled_layout",
    ),
    ("make_linear_layout", "tilelang.layout.make_linear_layout"),
];

/// A call of one of [`LAYOUT_CONSTRUCTORS`]: the layout it asks for of
/// the buffer it is given.
fn layout_constructor<'a>(
    name: &str,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let short = name.rsplit('.').next().unwrap_or(name);
    let Some(Value::Buffer(buffer)) = args.first().or_else(|| kw("buffer")) else {
        return Err(bad_args(short, span, "a buffer"));
    };
    // `make_mma_swizzle_layout(buf, is_smooth=True)` is the linear layout.
    let smooth = args
        .get(1)
        .or_else(|| kw("is_smooth"))
        .is_some_and(|v| v.truthy() == Some(true));
    let kind = match short {
        "make_full_bank_swizzled_layout" => LayoutKind::Swizzled { width: Some(128) },
        "make_half_bank_swizzled_layout" => LayoutKind::Swizzled { width: Some(64) },
        "make_quarter_bank_swizzled_layout" => LayoutKind::Swizzled { width: Some(32) },
        "make_linear_layout" => LayoutKind::Linear,
        "make_mma_swizzle_layout" if smooth => LayoutKind::Linear,
        _ => LayoutKind::Swizzled { width: None },
    };
    Ok(Value::Layout(Rc::new(LayoutSpec {
        buffer: Some(*buffer),
        kind,
        span,
    })))
}

pub(super) fn bad_args(name: &str, span: Span, expected: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::BAD_ARGUMENTS,
            format!("`{name}` expects {expected}"),
            span,
        )
        .with_label("in this call"),
    )
}

fn need_int(v: &Value<'_>, what: &str, span: Span) -> EResult<i64> {
    v.as_int().ok_or_else(|| {
        if v.is_staged() {
            Box::new(
                Diagnostic::error(
                    codes::NOT_CONSTANT,
                    format!("{what} must be a compile-time integer"),
                    span,
                )
                .with_label("this value is only known at run time"),
            )
        } else {
            err(
                codes::TYPE_ERROR,
                format!("{what} must be an integer, not {}", v.a_type_name()),
                span,
            )
        }
    })
}

fn need_number(v: &Value<'_>, what: &str, span: Span) -> EResult<f64> {
    v.as_number().ok_or_else(|| {
        err(
            codes::TYPE_ERROR,
            format!("{what} must be a number, not {}", v.a_type_name()),
            span,
        )
    })
}

/// Calls a Python built-in or a `math`/`itertools`/`tilelang` function.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &'static str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    // `int(t)`, `float(t)`, `bool(t)` of a one-element tensor: its element.
    let args = match (name, args.as_slice()) {
        ("int" | "float" | "bool", [Value::Torch(t)]) => vec![super::torch_tensor::scalar_value(
            t,
            &format!("`{name}()`"),
            span,
        )?],
        ("len", [Value::Torch(t)]) => return super::torch_tensor::len(t, span),
        _ => args,
    };
    match name {
        "range" => {
            if args.iter().any(Value::is_staged) {
                return super::tl::call(ev, "serial", args, kwargs, span);
            }
            let ints: Vec<i64> = args
                .iter()
                .map(|a| need_int(a, "`range` bounds", span))
                .collect::<EResult<_>>()?;
            let (start, stop, step) = match ints.as_slice() {
                [n] => (0, *n, 1),
                [a, b] => (*a, *b, 1),
                [a, b, s] => (*a, *b, *s),
                _ => return Err(bad_args("range", span, "1 to 3 integers")),
            };
            if step == 0 {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`range` step must not be zero",
                    span,
                ));
            }
            let (start_w, stop_w, step_w) = (i128::from(start), i128::from(stop), i128::from(step));
            let count = if step_w > 0 {
                (stop_w - start_w + step_w - 1).max(0) / step_w
            } else {
                (start_w - stop_w - step_w - 1).max(0) / -step_w
            };
            if count > 10_000_000 {
                return Err(err(
                    codes::EVAL_LIMIT,
                    "compile-time `range` is too long",
                    span,
                ));
            }
            let count = i64::try_from(count).unwrap_or(0);
            // Every element lies between start and stop, so it fits in i64.
            Ok(Value::tuple(
                (0..count)
                    .map(|i| Value::Int(start.wrapping_add(i.wrapping_mul(step))))
                    .collect(),
            ))
        }
        "len" => {
            let [v] = args.as_slice() else {
                return Err(bad_args("len", span, "one argument"));
            };
            let n = match v {
                Value::Str(s) => s.chars().count(),
                Value::Dict(d) => d.borrow().len(),
                other => ev.iterate(other, span)?.len(),
            };
            Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
        }
        "min" | "max" => {
            let items = if args.len() == 1 {
                ev.iterate(&args[0], span)?
            } else {
                args
            };
            if items.is_empty() {
                return Err(bad_args(name, span, "at least one value"));
            }
            if items.iter().any(|v| v.is_staged()) {
                // Python's min/max on IR values stages T.min/T.max.
                let tname = if name == "min" { "min" } else { "max" };
                let mut acc = items[0].clone();
                for v in &items[1..] {
                    acc = super::tl::call(ev, tname, vec![acc, v.clone()], vec![], span)?;
                }
                return Ok(acc);
            }
            let mut best = items[0].clone();
            for v in &items[1..] {
                let ord = py_cmp(v, &best).ok_or_else(|| {
                    err(
                        codes::TYPE_ERROR,
                        format!(
                            "cannot compare {} and {}",
                            v.a_type_name(),
                            best.a_type_name()
                        ),
                        span,
                    )
                })?;
                if (name == "min" && ord.is_lt()) || (name == "max" && ord.is_gt()) {
                    best = v.clone();
                }
            }
            Ok(best)
        }
        "abs" => {
            let [v] = args.as_slice() else {
                return Err(bad_args("abs", span, "one argument"));
            };
            match v {
                Value::Int(i) => Ok(Value::Int(i.checked_abs().ok_or_else(|| {
                    err(codes::COMPILE_TIME_ARITHMETIC, "integer overflow", span)
                })?)),
                Value::Bool(b) => Ok(Value::Int(i64::from(*b))),
                Value::Float(f) => Ok(Value::Float(f.abs())),
                other => super::tl::call(ev, "abs", vec![other.clone()], vec![], span),
            }
        }
        "int" => match args.as_slice() {
            [] => Ok(Value::Int(0)),
            [Value::Int(i)] => Ok(Value::Int(*i)),
            [Value::Bool(b)] => Ok(Value::Int(i64::from(*b))),
            [Value::Float(f)] => {
                if f.is_finite() && f.abs() < 9.2e18 {
                    Ok(Value::Int(f.trunc() as i64))
                } else {
                    Err(err(
                        codes::COMPILE_TIME_ARITHMETIC,
                        format!("cannot convert {f} to an integer"),
                        span,
                    ))
                }
            }
            [Value::Str(s)] => s.trim().parse::<i64>().map(Value::Int).map_err(|_| {
                err(
                    codes::TYPE_ERROR,
                    format!("invalid integer literal {s:?}"),
                    span,
                )
            }),
            [v] if v.is_staged() => super::tl::call(
                ev,
                "cast",
                vec![v.clone(), Value::DType(DType::I32)],
                vec![],
                span,
            ),
            _ => Err(bad_args("int", span, "one number or string")),
        },
        "float" => match args.as_slice() {
            [] => Ok(Value::Float(0.0)),
            [Value::Str(s)] => {
                let t = s.trim();
                let f = match t {
                    "inf" | "+inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    "nan" => f64::NAN,
                    _ => t.parse::<f64>().map_err(|_| {
                        err(
                            codes::TYPE_ERROR,
                            format!("invalid float literal {s:?}"),
                            span,
                        )
                    })?,
                };
                Ok(Value::Float(f))
            }
            [v] if v.is_staged() => super::tl::call(
                ev,
                "cast",
                vec![v.clone(), Value::DType(DType::F32)],
                vec![],
                span,
            ),
            [v] => Ok(Value::Float(need_number(v, "`float` argument", span)?)),
            _ => Err(bad_args("float", span, "one number or string")),
        },
        "bool" => match args.as_slice() {
            [] => Ok(Value::Bool(false)),
            [v] => v
                .truthy()
                .map(Value::Bool)
                .ok_or_else(|| err(codes::NOT_CONSTANT, "`bool()` of a run-time value", span)),
            _ => Err(bad_args("bool", span, "one argument")),
        },
        "str" | "repr" => match args.as_slice() {
            [] => Ok(Value::str("")),
            [v] => Ok(Value::str(&if name == "str" {
                v.to_py_str()
            } else {
                v.repr()
            })),
            _ => Err(bad_args(name, span, "one argument")),
        },
        "tuple" | "list" => {
            let items = match args.as_slice() {
                [] => vec![],
                [v] => ev.iterate(v, span)?,
                _ => return Err(bad_args(name, span, "at most one iterable")),
            };
            Ok(if name == "tuple" {
                Value::tuple(items)
            } else {
                Value::list(items)
            })
        }
        "dict" => {
            let mut items: Vec<(Value<'a>, Value<'a>)> = Vec::new();
            if let Some(v) = args.first() {
                match v {
                    Value::Dict(d) => items.extend(d.borrow().iter().cloned()),
                    other => {
                        for pair in ev.iterate(other, span)? {
                            match pair.as_sequence().as_deref() {
                                Some([k, v]) => items.push((k.clone(), v.clone())),
                                _ => return Err(bad_args("dict", span, "pairs")),
                            }
                        }
                    }
                }
            }
            for (k, v) in kwargs {
                items.push((Value::str(&k), v));
            }
            Ok(Value::dict(items))
        }
        "print" => Ok(Value::None),
        "enumerate" => {
            let start = match args.get(1).cloned().or_else(|| kw("start")) {
                Some(v) => need_int(&v, "`enumerate` start", span)?,
                None => 0,
            };
            let Some(it) = args.first() else {
                return Err(bad_args("enumerate", span, "an iterable"));
            };
            let items = ev.iterate(it, span)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                let index = i64::try_from(i)
                    .ok()
                    .and_then(|i| start.checked_add(i))
                    .ok_or_else(|| {
                        err(
                            codes::COMPILE_TIME_ARITHMETIC,
                            "`enumerate` index overflows 64 bits",
                            span,
                        )
                    })?;
                out.push(Value::tuple(vec![Value::Int(index), v]));
            }
            Ok(Value::list(out))
        }
        "zip" => {
            let seqs: Vec<Vec<Value<'a>>> = args
                .iter()
                .map(|a| ev.iterate(a, span))
                .collect::<EResult<_>>()?;
            let n = seqs.iter().map(Vec::len).min().unwrap_or(0);
            Ok(Value::list(
                (0..n)
                    .map(|i| Value::tuple(seqs.iter().map(|s| s[i].clone()).collect()))
                    .collect(),
            ))
        }
        "sum" => {
            let Some(it) = args.first() else {
                return Err(bad_args("sum", span, "an iterable"));
            };
            let mut acc = args.get(1).cloned().unwrap_or(Value::Int(0));
            for v in ev.iterate(it, span)? {
                acc = ev.binop(super::value::PyBinOp::Add, &acc, &v, span)?;
            }
            Ok(acc)
        }
        "any" | "all" => {
            let Some(it) = args.first() else {
                return Err(bad_args(name, span, "an iterable"));
            };
            let mut result = name == "all";
            for v in ev.iterate(it, span)? {
                let t = v.truthy().ok_or_else(|| {
                    err(
                        codes::NOT_CONSTANT,
                        format!("`{name}` over run-time values"),
                        span,
                    )
                })?;
                if name == "any" && t {
                    result = true;
                }
                if name == "all" && !t {
                    result = false;
                }
            }
            Ok(Value::Bool(result))
        }
        "round" => match args.as_slice() {
            [v] => {
                let f = need_number(v, "`round` argument", span)?;
                let r = f.round_ties_even();
                if r.abs() < 9.2e18 {
                    Ok(Value::Int(r as i64))
                } else {
                    Err(err(
                        codes::COMPILE_TIME_ARITHMETIC,
                        "cannot round to an integer",
                        span,
                    ))
                }
            }
            [v, n] => {
                let f = need_number(v, "`round` argument", span)?;
                let n = need_int(n, "`round` digits", span)?;
                let scale = 10f64.powi(i32::try_from(n).unwrap_or(0));
                Ok(Value::Float((f * scale).round_ties_even() / scale))
            }
            _ => Err(bad_args("round", span, "one or two arguments")),
        },
        "pow" => match args.as_slice() {
            [a, b] => ev.binop(super::value::PyBinOp::Pow, a, b, span),
            _ => Err(bad_args("pow", span, "two arguments")),
        },
        "divmod" => match args.as_slice() {
            [a, b] => {
                let q = ev.binop(super::value::PyBinOp::FloorDiv, a, b, span)?;
                let r = ev.binop(super::value::PyBinOp::Mod, a, b, span)?;
                Ok(Value::tuple(vec![q, r]))
            }
            _ => Err(bad_args("divmod", span, "two arguments")),
        },
        "sorted" | "reversed" => {
            let Some(it) = args.first() else {
                return Err(bad_args(name, span, "an iterable"));
            };
            let mut items = ev.iterate(it, span)?;
            if name == "sorted" {
                let mut failed = false;
                items.sort_by(|a, b| {
                    py_cmp(a, b).unwrap_or_else(|| {
                        failed = true;
                        std::cmp::Ordering::Equal
                    })
                });
                if failed {
                    return Err(err(
                        codes::TYPE_ERROR,
                        "`sorted` over values that do not compare",
                        span,
                    ));
                }
                if kw("reverse").and_then(|v| v.truthy()).unwrap_or(false) {
                    items.reverse();
                }
            } else {
                items.reverse();
            }
            Ok(Value::list(items))
        }
        "map" => {
            let [f, it] = args.as_slice() else {
                return Err(bad_args("map", span, "a function and an iterable"));
            };
            let items = ev.iterate(it, span)?;
            let mut out = Vec::new();
            for v in items {
                out.push(ev.call(f.clone(), vec![v], vec![], span)?);
            }
            Ok(Value::list(out))
        }
        "filter" => {
            let [f, it] = args.as_slice() else {
                return Err(bad_args("filter", span, "a function and an iterable"));
            };
            let items = ev.iterate(it, span)?;
            let mut out = Vec::new();
            for v in items {
                let keep = if matches!(f, Value::None) {
                    v.clone()
                } else {
                    ev.call(f.clone(), vec![v.clone()], vec![], span)?
                };
                if keep.truthy().unwrap_or(false) {
                    out.push(v);
                }
            }
            Ok(Value::list(out))
        }
        "isinstance" => {
            let [v, t] = args.as_slice() else {
                return Err(bad_args("isinstance", span, "two arguments"));
            };
            let types = t.as_sequence().unwrap_or_else(|| vec![t.clone()]);
            let r = types.iter().any(|t| match t {
                Value::Builtin("int") => matches!(v, Value::Int(_) | Value::Bool(_)),
                Value::Builtin("float") => matches!(v, Value::Float(_)),
                Value::Builtin("bool") => matches!(v, Value::Bool(_)),
                Value::Builtin("str") => matches!(v, Value::Str(_)),
                Value::Builtin("tuple") => matches!(v, Value::Tuple(_)),
                Value::Builtin("list") => matches!(v, Value::List(_)),
                Value::Builtin("dict") => matches!(v, Value::Dict(_)),
                _ => false,
            });
            Ok(Value::Bool(r))
        }
        "hasattr" | "getattr" => {
            let (Some(obj), Some(Value::Str(attr))) = (args.first(), args.get(1)) else {
                return Err(bad_args(name, span, "an object and an attribute name"));
            };
            let r = ev.get_attr(obj, attr, span);
            if name == "hasattr" {
                return Ok(Value::Bool(r.is_ok()));
            }
            match (r, args.get(2)) {
                (Ok(v), _) => Ok(v),
                (Err(_), Some(default)) => Ok(default.clone()),
                (Err(e), None) => Err(e),
            }
        }
        "slice" => {
            let parts: Vec<Option<Value<'a>>> = match args.as_slice() {
                [stop] => vec![None, Some(stop.clone()), None],
                [a, b] => vec![Some(a.clone()), Some(b.clone()), None],
                [a, b, c] => vec![Some(a.clone()), Some(b.clone()), Some(c.clone())],
                _ => return Err(bad_args("slice", span, "1 to 3 arguments")),
            };
            let arr: [Option<Value<'a>>; 3] =
                [parts[0].clone(), parts[1].clone(), parts[2].clone()];
            Ok(Value::Slice(Rc::new(arr)))
        }
        // math
        "math.sqrt" | "math.exp" | "math.log" | "math.log2" | "math.log10" | "math.floor"
        | "math.ceil" | "math.sin" | "math.cos" | "math.tanh" | "math.tan" | "math.fabs"
        | "math.exp2" => {
            let Some(v) = args.first() else {
                return Err(bad_args(name, span, "a number"));
            };
            if v.is_staged() {
                return match name {
                    "math.fabs" => super::tl::call(ev, "abs", args, kwargs, span),
                    "math.log10" => {
                        let ln = super::tl::call(ev, "log", args, kwargs, span)?;
                        ev.binop(
                            super::value::PyBinOp::Mul,
                            &ln,
                            &Value::Float(std::f64::consts::LOG10_E),
                            span,
                        )
                    }
                    _ => super::tl::call(ev, name.trim_start_matches("math."), args, kwargs, span),
                };
            }
            let x = need_number(v, "the argument", span)?;
            let domain = |ok: bool| -> EResult<()> {
                if ok {
                    Ok(())
                } else {
                    Err(err(
                        codes::COMPILE_TIME_ARITHMETIC,
                        format!("`{name}({x})`: math domain error"),
                        span,
                    ))
                }
            };
            match name {
                "math.sqrt" => domain(x >= 0.0 || x.is_nan())?,
                "math.log" | "math.log2" | "math.log10" => domain(x > 0.0 || x.is_nan())?,
                "math.floor" | "math.ceil" => domain(x.is_finite() && x.abs() < 9.2e18)?,
                _ => {}
            }
            let r = match name {
                "math.sqrt" => x.sqrt(),
                "math.exp" => x.exp(),
                "math.exp2" => x.exp2(),
                "math.log" => match args.get(1) {
                    Some(b) => x.ln() / need_number(b, "the base", span)?.ln(),
                    None => x.ln(),
                },
                "math.log2" => x.log2(),
                "math.log10" => x.log10(),
                "math.sin" => x.sin(),
                "math.cos" => x.cos(),
                "math.tanh" => x.tanh(),
                "math.tan" => x.tan(),
                "math.fabs" => x.abs(),
                "math.floor" => return Ok(Value::Int(x.floor() as i64)),
                _ => return Ok(Value::Int(x.ceil() as i64)),
            };
            Ok(Value::Float(r))
        }
        "math.pow" => match args.as_slice() {
            [a, b] => Ok(Value::Float(
                need_number(a, "the base", span)?.powf(need_number(b, "the exponent", span)?),
            )),
            _ => Err(bad_args(name, span, "two numbers")),
        },
        "math.gcd" | "math.lcm" => {
            let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
                return Err(bad_args(name, span, "two integers"));
            };
            let (a, b) = (
                need_int(a, "the argument", span)?,
                need_int(b, "the argument", span)?,
            );
            let g = gcd(i128::from(a).abs(), i128::from(b).abs());
            let r = if name == "math.gcd" {
                g
            } else if g == 0 {
                0
            } else {
                (i128::from(a) / g * i128::from(b)).abs()
            };
            i64::try_from(r).map(Value::Int).map_err(|_| {
                err(
                    codes::COMPILE_TIME_ARITHMETIC,
                    format!("`{name}` result does not fit in 64 bits"),
                    span,
                )
            })
        }
        "math.isclose" => {
            let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
                return Err(bad_args(name, span, "two numbers"));
            };
            let (a, b) = (
                need_number(a, "the argument", span)?,
                need_number(b, "the argument", span)?,
            );
            Ok(Value::Bool((a - b).abs() <= 1e-9 * a.abs().max(b.abs())))
        }
        "itertools.product" => {
            let repeat = match kw("repeat") {
                Some(v) => need_int(&v, "`repeat`", span)?,
                None => 1,
            };
            let mut pools: Vec<Vec<Value<'a>>> = Vec::new();
            for _ in 0..repeat.max(0) {
                for a in &args {
                    pools.push(ev.iterate(a, span)?);
                }
            }
            let mut result: Vec<Vec<Value<'a>>> = vec![vec![]];
            for pool in pools {
                let mut next = Vec::new();
                for prefix in &result {
                    for item in &pool {
                        let mut p = prefix.clone();
                        p.push(item.clone());
                        next.push(p);
                    }
                }
                if next.len() > 1_000_000 {
                    return Err(err(
                        codes::EVAL_LIMIT,
                        "`itertools.product` is too large",
                        span,
                    ));
                }
                result = next;
            }
            Ok(Value::list(result.into_iter().map(Value::tuple).collect()))
        }
        "functools.partial" => Err(err(
            codes::UNSUPPORTED_PYTHON,
            "`functools.partial` is not supported",
            span,
        )),
        "tilelang.jit" => {
            // `tilelang.jit(out_idx=..., pass_configs=...)`: a configured decorator,
            // or `tilelang.jit(func)`.
            if let [f] = args.as_slice() {
                return ev.call(
                    Value::Builtin("tilelang.jit.apply"),
                    vec![f.clone()],
                    kwargs,
                    span,
                );
            }
            let out_idx = match kw("out_idx") {
                None | Some(Value::None) => None,
                Some(Value::Int(i)) => Some(vec![i]),
                Some(v) => Some(
                    v.as_sequence()
                        .ok_or_else(|| {
                            err(
                                codes::BAD_TILELANG_ARGUMENT,
                                "`out_idx` must be an int or a list of ints",
                                span,
                            )
                        })?
                        .iter()
                        .map(|x| need_int(x, "an `out_idx` entry", span))
                        .collect::<EResult<Vec<_>>>()?,
                ),
            };
            let pass_configs = match kw("pass_configs") {
                Some(d) => pass_config_map(ev, &d, span),
                None => BTreeMap::new(),
            };
            for (k, _) in &kwargs {
                if !matches!(
                    k.as_str(),
                    "out_idx"
                        | "pass_configs"
                        | "target"
                        | "execution_backend"
                        | "verbose"
                        | "debug_root_path"
                        | "compile_flags"
                ) {
                    ev.diags.push(
                        Diagnostic::warning(
                            codes::IGNORED,
                            format!("`tilelang.jit` option `{k}` is ignored by tilec"),
                            span,
                        )
                        .with_label("ignored"),
                    );
                }
            }
            Ok(Value::Jit(Rc::new(JitValue {
                inner: Value::None,
                out_idx,
                pass_configs,
                span,
            })))
        }
        // `tilelang.compile(prim_func, out_idx=..., target=..., ...)` is
        // `tilelang.jit(out_idx=..., ...)` applied to the prim_func.
        "tilelang.compile" => {
            let mut args = args;
            let mut kwargs = kwargs;
            if let Some(i) = kwargs.iter().position(|(k, _)| k == "func") {
                args.insert(0, kwargs.remove(i).1);
            }
            let [f] = args.as_slice() else {
                return Err(bad_args(
                    "tilelang.compile",
                    span,
                    "a prim_func, then keywords",
                ));
            };
            if !matches!(f, Value::Kernel(_)) {
                return Err(err(
                    codes::TYPE_ERROR,
                    format!(
                        "`tilelang.compile` takes a `@T.prim_func`, not {}",
                        f.a_type_name()
                    ),
                    span,
                ));
            }
            let f = f.clone();
            let jit = ev.call(Value::Builtin("tilelang.jit"), Vec::new(), kwargs, span)?;
            ev.apply_decorator(jit, f, span)
        }
        "tilelang.jit.apply" => {
            let [f] = args.as_slice() else {
                return Err(bad_args("tilelang.jit", span, "a function"));
            };
            Ok(Value::Jit(Rc::new(JitValue {
                inner: f.clone(),
                out_idx: None,
                pass_configs: BTreeMap::new(),
                span,
            })))
        }
        "tilelang.autotune" => {
            if let [f @ Value::Function(_)] = args.as_slice() {
                return Ok(Value::Autotune(Rc::new(AutotuneValue {
                    inner: f.clone(),
                    configs: Value::None,
                })));
            }
            Ok(Value::Autotune(Rc::new(AutotuneValue {
                inner: Value::None,
                configs: kw("configs").unwrap_or(Value::None),
            })))
        }
        "tilelang.disable_cache" | "tilelang.set_log_level" => Ok(Value::None),
        "tilelang.layout.hint" => Ok(Value::Opaque(Rc::from("a layout for `T.annotate_layout`"))),
        n if n.starts_with("tilelang.layout.make_") => layout_constructor(n, &args, &kwargs, span),
        _ => Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("`{name}` is not supported by tilec"),
                span,
            )
            .with_label("not supported"),
        )),
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Attribute lookup.
pub(crate) fn get_attr<'a>(
    ev: &mut Evaluator<'a>,
    base: &Value<'a>,
    name: &str,
    span: Span,
) -> EResult<Value<'a>> {
    let missing = |what: &str| -> Box<Diagnostic> {
        Box::new(
            Diagnostic::error(
                codes::NO_ATTRIBUTE,
                format!("{what} has no attribute `{name}`"),
                span,
            )
            .with_label("unknown attribute"),
        )
    };
    if let Some(v) = super::pylib::get_attr(ev, base, name, span) {
        return v;
    }
    if matches!(base, Value::Module("T")) && name == "tfloat32" {
        return Ok(tfloat32(ev, span));
    }
    match base {
        Value::Module("T") => super::tl::attr(name).ok_or_else(|| {
            let d = Diagnostic::error(
                codes::UNSUPPORTED_TILELANG,
                format!("`T.{name}` is not supported by tilec"),
                span,
            )
            .with_label("not supported");
            let note = super::tl_more::unsupported_note(name)
                .map(String::from)
                .or_else(|| super::tir::refusal_note(name))
                .or_else(|| super::blackwell::unsupported_note(name).map(String::from))
                .unwrap_or_else(|| {
                    "docs/tilelang-support.md lists the supported TileLang vocabulary".into()
                });
            Box::new(d.with_note(note))
        }),
        Value::Module("T.GemmWarpPolicy") => match name {
            "Square" => Ok(Value::Policy(GemmPolicy::Square)),
            "FullRow" => Ok(Value::Policy(GemmPolicy::FullRow)),
            "FullCol" => Ok(Value::Policy(GemmPolicy::FullCol)),
            _ => Err(missing("`T.GemmWarpPolicy`")),
        },
        Value::Module("tilelang") => Ok(match name {
            "jit" => Value::Builtin("tilelang.jit"),
            "compile" => Value::Builtin("tilelang.compile"),
            "autotune" => Value::Builtin("tilelang.autotune"),
            "language" => Value::Module("T"),
            "layout" => Value::Module("tilelang.layout"),
            "autotuner" => Value::Module("tilelang.autotuner"),
            "disable_cache" => Value::Builtin("tilelang.disable_cache"),
            "set_log_level" => Value::Builtin("tilelang.set_log_level"),
            other => Value::Opaque(Rc::from(format!("tilelang.{other}"))),
        }),
        // Layout constructors feed `T.annotate_layout`: those of shared
        // layouts tilec realizes make layouts it pins, the rest inert
        // values (hints without effect).
        Value::Module("tilelang.layout") => {
            Ok(match LAYOUT_CONSTRUCTORS.iter().find(|(n, _)| *n == name) {
                Some((_, builtin)) => Value::Builtin(builtin),
                None if name.starts_with("make_") && name.contains("layout") => {
                    Value::Builtin("tilelang.layout.hint")
                }
                None => Value::Opaque(Rc::from(format!("tilelang.layout.{name}"))),
            })
        }
        Value::Module("tilelang.autotuner") => Ok(match name {
            "autotune" => Value::Builtin("tilelang.autotune"),
            other => Value::Opaque(Rc::from(format!("tilelang.autotuner.{other}"))),
        }),
        Value::Module("torch") => Ok(match DType::from_tilelang_name(name) {
            Some(d) if name != "int" && name != "float" => Value::DType(d),
            _ => match name {
                "bfloat16" => Value::DType(DType::BF16),
                "float8_e4m3fn" => Value::DType(DType::F8E4M3),
                other => Value::Opaque(Rc::from(format!("torch.{other}"))),
            },
        }),
        Value::Module("math") => Ok(match name {
            "pi" => Value::Float(std::f64::consts::PI),
            "e" => Value::Float(std::f64::consts::E),
            "inf" => Value::Float(f64::INFINITY),
            "nan" => Value::Float(f64::NAN),
            "sqrt" => Value::Builtin("math.sqrt"),
            "exp" => Value::Builtin("math.exp"),
            "exp2" => Value::Builtin("math.exp2"),
            "log" => Value::Builtin("math.log"),
            "log2" => Value::Builtin("math.log2"),
            "log10" => Value::Builtin("math.log10"),
            "floor" => Value::Builtin("math.floor"),
            "ceil" => Value::Builtin("math.ceil"),
            "sin" => Value::Builtin("math.sin"),
            "cos" => Value::Builtin("math.cos"),
            "tanh" => Value::Builtin("math.tanh"),
            "tan" => Value::Builtin("math.tan"),
            "fabs" => Value::Builtin("math.fabs"),
            "pow" => Value::Builtin("math.pow"),
            "gcd" => Value::Builtin("math.gcd"),
            "lcm" => Value::Builtin("math.lcm"),
            "isclose" => Value::Builtin("math.isclose"),
            _ => return Err(missing("module `math`")),
        }),
        Value::Module("itertools") => match name {
            "product" => Ok(Value::Builtin("itertools.product")),
            _ => Ok(Value::Opaque(Rc::from(format!("itertools.{name}")))),
        },
        Value::Module("functools") => match name {
            "partial" => Ok(Value::Builtin("functools.partial")),
            _ => Ok(Value::Opaque(Rc::from(format!("functools.{name}")))),
        },
        Value::OpaqueModule(m) => Ok(Value::Opaque(Rc::from(format!("{m}.{name}")))),
        Value::UserModule(m) => super::user_modules::get_attr(m, name, span)
            .ok_or_else(|| missing(&format!("module `{}`", m.name))),
        // `tilelang.PassConfigKey` is a `str` enum: the members tilec reads
        // are their strings (`TL_ENABLE_FAST_MATH` is "tl.enable_fast_math").
        Value::Opaque(what)
            if matches!(
                &**what,
                "tilelang.PassConfigKey" | "tilelang.transform.PassConfigKey"
            ) =>
        {
            let key = name
                .strip_prefix("TL_")
                .map(|rest| format!("tl.{}", rest.to_ascii_lowercase()));
            Ok(match key {
                Some(key) if KNOWN_PASS_CONFIGS.contains(&key.as_str()) => Value::str(&key),
                _ => Value::Opaque(Rc::from(format!("{what}.{name}"))),
            })
        }
        Value::Opaque(what) => Ok(Value::Opaque(Rc::from(format!("{what}.{name}")))),
        Value::Poison(_) => Err(super::stage::cascade()),
        Value::Buffer(b) => {
            let b = *b;
            let st = ev.stager("a buffer attribute", span)?;
            let buf = st.func.buffers[b].clone();
            match name {
                "shape" => {
                    let dims = buf
                        .shape
                        .iter()
                        .map(|&e| st.func.as_const_int(e).map_or(Value::Expr(e), Value::Int))
                        .collect();
                    Ok(Value::tuple(dims))
                }
                "dtype" => Ok(Value::DType(buf.dtype)),
                "ndim" => Ok(Value::Int(i64::try_from(buf.shape.len()).unwrap_or(0))),
                "name" => Ok(Value::str(&buf.name)),
                "astype" => Ok(Value::Method(Rc::new(base.clone()), "astype")),
                "data" => super::views::data_of(ev, b, span),
                _ => Err(missing("a buffer")),
            }
        }
        Value::View(v) => super::views::view_attr(ev, v, name, span),
        Value::Expr(e) => match name {
            "astype" => Ok(Value::Method(Rc::new(base.clone()), "astype")),
            "dtype" => {
                let e = *e;
                let st = ev.stager("an expression attribute", span)?;
                Ok(Value::DType(st.ty(e)))
            }
            _ => Err(missing("a run-time expression")),
        },
        Value::Access(a) => match name {
            "astype" => Ok(Value::Method(Rc::new(base.clone()), "astype")),
            // The dtype of a loaded element is its buffer's.
            "dtype" if a.items.iter().all(|i| matches!(i, IndexItem::Point(_))) => {
                let b = a.buffer;
                let st = ev.stager("an element's dtype", span)?;
                Ok(Value::DType(st.func.buffers[b].dtype))
            }
            _ => Err(missing("a buffer element")),
        },
        Value::DType(d) => match name {
            "bits" => Ok(Value::Int(i64::from(d.bits()))),
            "itemsize" => Ok(Value::Int(i64::try_from(d.bytes()).unwrap_or(0))),
            // The torch dtype (`torch.randn(..., dtype=...)` in host code).
            "as_torch" => Ok(Value::Method(Rc::new(base.clone()), "dtype.as_torch")),
            // A dtype is a string in TileLang: its string methods apply
            // to its name.
            _ => {
                let name_str = Value::str(d.tilelang_name());
                get_attr(ev, &name_str, name, span).map_err(|_| missing("a dtype"))
            }
        },
        Value::List(_) => match name {
            "append" => Ok(Value::Method(Rc::new(base.clone()), "list.append")),
            "extend" => Ok(Value::Method(Rc::new(base.clone()), "list.extend")),
            "pop" => Ok(Value::Method(Rc::new(base.clone()), "list.pop")),
            "index" => Ok(Value::Method(Rc::new(base.clone()), "seq.index")),
            "insert" => Ok(Value::Method(Rc::new(base.clone()), "list.insert")),
            "copy" => Ok(Value::Method(Rc::new(base.clone()), "list.copy")),
            "count" => Ok(Value::Method(Rc::new(base.clone()), "seq.count")),
            _ => Err(missing("a list")),
        },
        Value::Tuple(_) => match name {
            "index" => Ok(Value::Method(Rc::new(base.clone()), "seq.index")),
            "count" => Ok(Value::Method(Rc::new(base.clone()), "seq.count")),
            _ => Err(missing("a tuple")),
        },
        Value::Dict(_) => match name {
            "get" | "items" | "keys" | "values" | "update" | "setdefault" | "pop" => {
                Ok(Value::Method(
                    Rc::new(base.clone()),
                    match name {
                        "get" => "dict.get",
                        "items" => "dict.items",
                        "keys" => "dict.keys",
                        "values" => "dict.values",
                        "update" => "dict.update",
                        "setdefault" => "dict.setdefault",
                        _ => "dict.pop",
                    },
                ))
            }
            _ => Err(missing("a dict")),
        },
        Value::Str(_) => match name {
            "split" | "strip" | "join" | "replace" | "format" | "lower" | "upper"
            | "startswith" | "endswith" | "isdigit" | "isalpha" | "isalnum" => Ok(Value::Method(
                Rc::new(base.clone()),
                match name {
                    "split" => "str.split",
                    "strip" => "str.strip",
                    "join" => "str.join",
                    "replace" => "str.replace",
                    "format" => "str.format",
                    "lower" => "str.lower",
                    "upper" => "str.upper",
                    "startswith" => "str.startswith",
                    "isdigit" => "str.isdigit",
                    "isalpha" => "str.isalpha",
                    "isalnum" => "str.isalnum",
                    _ => "str.endswith",
                },
            )),
            _ => Err(missing("a str")),
        },
        Value::Float(_) => match name {
            "is_integer" => Ok(Value::Method(Rc::new(base.clone()), "float.is_integer")),
            _ => Err(missing("a float")),
        },
        other => Err(missing(&other.a_type_name())),
    }
}

/// Calls a built-in method.
pub(crate) fn call_method<'a>(
    ev: &mut Evaluator<'a>,
    recv: &Value<'a>,
    name: &'static str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match (name, recv) {
        ("astype", _) => {
            let Some(d) = args.first() else {
                return Err(bad_args("astype", span, "a dtype"));
            };
            super::tl::call(ev, "cast", vec![recv.clone(), d.clone()], kwargs, span)
        }
        ("float.is_integer", Value::Float(f)) => Ok(Value::Bool(f.fract() == 0.0)),
        ("dtype.as_torch", Value::DType(d)) => {
            if !args.is_empty() || !kwargs.is_empty() {
                return Err(bad_args("as_torch", span, "no arguments"));
            }
            // tilec models torch's dtypes as the dtypes themselves
            // (`torch.float16` is `T.float16`).
            Ok(Value::DType(*d))
        }
        ("list.append", Value::List(l)) => {
            let [v] = args.as_slice() else {
                return Err(bad_args("append", span, "one value"));
            };
            super::budget::grow_elements(1, "`append`", span)?;
            l.borrow_mut().push(v.clone());
            Ok(Value::None)
        }
        ("list.extend", Value::List(l)) => {
            let [v] = args.as_slice() else {
                return Err(bad_args("extend", span, "one iterable"));
            };
            let items = ev.iterate(v, span)?;
            super::budget::grow_elements(items.len(), "`extend`", span)?;
            l.borrow_mut().extend(items);
            Ok(Value::None)
        }
        ("list.insert", Value::List(l)) => {
            let [i, v] = args.as_slice() else {
                return Err(bad_args("insert", span, "an index and a value"));
            };
            let len = l.borrow().len();
            let i = usize::try_from(
                need_int(i, "the index", span)?.clamp(0, i64::try_from(len).unwrap_or(0)),
            )
            .unwrap_or(0);
            super::budget::grow_elements(1, "`insert`", span)?;
            super::budget::work(len);
            l.borrow_mut().insert(i, v.clone());
            Ok(Value::None)
        }
        ("list.pop", Value::List(l)) => {
            let len = l.borrow().len();
            let i = match args.first() {
                Some(v) => seq_index(v, len, span)?,
                None if len > 0 => len - 1,
                None => return Err(err(codes::INDEX_ERROR, "pop from an empty list", span)),
            };
            Ok(l.borrow_mut().remove(i))
        }
        ("list.copy", Value::List(l)) => Ok(Value::list(l.borrow().clone())),
        ("seq.index", _) => {
            let Some(x) = args.first() else {
                return Err(bad_args("index", span, "a value"));
            };
            let items = recv.as_sequence().unwrap_or_default();
            items
                .iter()
                .position(|v| py_eq(v, x))
                .map(|i| Value::Int(i64::try_from(i).unwrap_or(0)))
                .ok_or_else(|| {
                    err(
                        codes::INDEX_ERROR,
                        format!("{} is not in the sequence", x.repr()),
                        span,
                    )
                })
        }
        ("seq.count", _) => {
            let Some(x) = args.first() else {
                return Err(bad_args("count", span, "a value"));
            };
            let n = recv
                .as_sequence()
                .unwrap_or_default()
                .iter()
                .filter(|v| py_eq(v, x))
                .count();
            Ok(Value::Int(i64::try_from(n).unwrap_or(0)))
        }
        ("dict.get", Value::Dict(d)) => {
            let Some(k) = args.first() else {
                return Err(bad_args("get", span, "a key"));
            };
            super::budget::work(d.borrow().len());
            Ok(d.borrow()
                .iter()
                .find(|(key, _)| py_eq(key, k))
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| args.get(1).cloned().unwrap_or(Value::None)))
        }
        ("dict.setdefault", Value::Dict(d)) => {
            let Some(k) = args.first() else {
                return Err(bad_args("setdefault", span, "a key"));
            };
            super::budget::work(d.borrow().len());
            if let Some((_, v)) = d.borrow().iter().find(|(key, _)| py_eq(key, k)) {
                return Ok(v.clone());
            }
            super::budget::grow_elements(2, "a dict insert", span)?;
            let v = args.get(1).cloned().unwrap_or(Value::None);
            d.borrow_mut().push((k.clone(), v.clone()));
            Ok(v)
        }
        ("dict.pop", Value::Dict(d)) => {
            let Some(k) = args.first() else {
                return Err(bad_args("pop", span, "a key"));
            };
            super::budget::work(d.borrow().len());
            let pos = d.borrow().iter().position(|(key, _)| py_eq(key, k));
            match (pos, args.get(1)) {
                (Some(i), _) => Ok(d.borrow_mut().remove(i).1),
                (None, Some(default)) => Ok(default.clone()),
                (None, None) => Err(err(
                    codes::INDEX_ERROR,
                    format!("key {} is not in the dict", k.repr()),
                    span,
                )),
            }
        }
        ("dict.items", Value::Dict(d)) => Ok(Value::list(
            d.borrow()
                .iter()
                .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                .collect(),
        )),
        ("dict.keys", Value::Dict(d)) => Ok(Value::list(
            d.borrow().iter().map(|(k, _)| k.clone()).collect(),
        )),
        ("dict.values", Value::Dict(d)) => Ok(Value::list(
            d.borrow().iter().map(|(_, v)| v.clone()).collect(),
        )),
        ("dict.update", Value::Dict(d)) => {
            let mut pairs = Vec::new();
            if let Some(Value::Dict(other)) = args.first() {
                pairs.extend(other.borrow().iter().cloned());
            }
            for (k, v) in kwargs {
                pairs.push((Value::str(&k), v));
            }
            super::budget::grow_elements(pairs.len().saturating_mul(2), "`update`", span)?;
            let mut d = d.borrow_mut();
            for (k, v) in pairs {
                super::budget::work(d.len());
                if let Some(e) = d.iter_mut().find(|(key, _)| py_eq(key, &k)) {
                    e.1 = v;
                } else {
                    d.push((k, v));
                }
            }
            Ok(Value::None)
        }
        ("str.split", Value::Str(s)) => {
            let parts: Vec<Value<'a>> = match args.first() {
                Some(Value::Str(sep)) => s.split(&**sep).map(Value::str).collect(),
                _ => s.split_whitespace().map(Value::str).collect(),
            };
            Ok(Value::list(parts))
        }
        ("str.strip", Value::Str(s)) => Ok(Value::str(s.trim())),
        // Python's predicates are false on the empty string.
        ("str.isdigit", Value::Str(s)) => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()),
        )),
        ("str.isalpha", Value::Str(s)) => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(char::is_alphabetic),
        )),
        ("str.isalnum", Value::Str(s)) => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(char::is_alphanumeric),
        )),
        ("str.lower", Value::Str(s)) => Ok(Value::str(&s.to_lowercase())),
        ("str.upper", Value::Str(s)) => Ok(Value::str(&s.to_uppercase())),
        ("str.startswith" | "str.endswith", Value::Str(s)) => {
            let Some(Value::Str(p)) = args.first() else {
                return Err(bad_args(name, span, "a string"));
            };
            Ok(Value::Bool(if name == "str.startswith" {
                s.starts_with(&**p)
            } else {
                s.ends_with(&**p)
            }))
        }
        ("str.join", Value::Str(s)) => {
            let Some(it) = args.first() else {
                return Err(bad_args("join", span, "an iterable"));
            };
            let items = ev.iterate(it, span)?;
            let room = super::budget::room();
            let mut out = String::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(s);
                }
                out.push_str(&item.to_py_str());
                if out.len() > room {
                    super::budget::grow_str(out.len(), "`str.join`", span)?;
                }
            }
            Ok(Value::str(&out))
        }
        ("str.replace", Value::Str(s)) => {
            let (Some(Value::Str(a)), Some(Value::Str(b))) = (args.first(), args.get(1)) else {
                return Err(bad_args("replace", span, "two strings"));
            };
            // Known before replacing: the length of the result.
            let hits = if a.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(&**a).count()
            };
            let len = (s.len() - hits.min(s.len()) * a.len().min(s.len()))
                .saturating_add(hits.saturating_mul(b.len()));
            if len > super::budget::room() {
                super::budget::grow_str(len, "`str.replace`", span)?;
            }
            Ok(Value::str(&s.replace(&**a, b)))
        }
        ("str.format", Value::Str(s)) => {
            // `{}` and `{name}` placeholders; format specs are dropped.
            let mut out = String::new();
            let mut next = 0;
            let mut rest = &**s;
            while let Some(open) = rest.find('{') {
                out.push_str(&rest[..open]);
                let Some(close) = rest[open..].find('}') else {
                    break;
                };
                let field = &rest[open + 1..open + close];
                let key = field.split(':').next().unwrap_or("");
                let v = if key.is_empty() {
                    next += 1;
                    args.get(next - 1).cloned()
                } else if let Ok(i) = key.parse::<usize>() {
                    args.get(i).cloned()
                } else {
                    kwargs
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| v.clone())
                };
                out.push_str(&v.map(|v| v.to_py_str()).unwrap_or_default());
                if out.len() > super::budget::room() {
                    super::budget::grow_str(out.len(), "`str.format`", span)?;
                }
                rest = &rest[open + close + 1..];
            }
            out.push_str(rest);
            Ok(Value::str(&out))
        }
        _ if super::pylib::handles(name) => {
            let mut all = vec![recv.clone()];
            all.extend(args);
            super::pylib::call(ev, name, all, kwargs, span)
        }
        _ => Err(err(
            codes::TYPE_ERROR,
            format!("method `{name}` does not apply to {}", recv.a_type_name()),
            span,
        )),
    }
}
