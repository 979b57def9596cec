//! Torch tensors made at build time (`A = torch.randn(M, K, ...)` in a
//! kernel file's module code or test function), with torch's meaning for
//! what a kernel build reads of them: shape, dtype, device, views
//! (`A.T`, `A[0]`, `A.view(...)`), elementwise arithmetic, reductions
//! (`.max()`) and `.item()`.
//!
//! A tensor's *values* are known only where torch fixes them without
//! running anything (`torch.zeros`, `torch.tensor([...])`, `torch.arange`,
//! and what arithmetic and views make of those). Random or uninitialised
//! tensors (`torch.randn`, `torch.empty`, ...) have unknown values: their
//! shapes can size a kernel, but reading a value (`.item()`, `int(t)`,
//! `if t:`) is T0112, never a guess. An in-place operation
//! (`A.uniform_()`, `A[0] = 1`) forgets the values of the storage it
//! writes, so a later read is T0112 too.

use super::builtins::bad_args;
use super::codes;
use super::eval::{Evaluator, err};
use super::value::{EResult, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::ir::{DType, Span};
use std::cell::RefCell;
use std::rc::Rc;

/// Tensors with more elements than this keep their shape but not their
/// values (the build never needs a large tensor's contents).
const MAX_KNOWN_ELEMENTS: i64 = 1 << 16;

/// Largest integer an f64 holds exactly; integer tensors beyond it keep
/// no values.
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// The elements of a tensor's storage, when known (row-major, as f64:
/// integer values are exact below 2^53).
#[derive(Debug)]
pub(crate) struct Storage {
    values: RefCell<Option<Vec<f64>>>,
}

/// A torch tensor: a strided view of a storage.
#[derive(Debug, Clone)]
pub(crate) struct TorchTensor {
    storage: Rc<Storage>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
    dtype: DType,
    device: Rc<str>,
    /// What made the storage (`torch.randn`), for messages.
    origin: Rc<str>,
}

impl TorchTensor {
    fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
        let mut strides = vec![1; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1].max(1);
        }
        strides
    }

    fn new(
        shape: Vec<i64>,
        dtype: DType,
        device: Rc<str>,
        origin: &str,
        values: Option<Vec<f64>>,
    ) -> TorchTensor {
        let values = values.map(|v| v.into_iter().map(|x| dtype.round_f64(x)).collect());
        TorchTensor {
            storage: Rc::new(Storage {
                values: RefCell::new(values),
            }),
            strides: Self::contiguous_strides(&shape),
            shape,
            offset: 0,
            dtype,
            device,
            origin: Rc::from(origin),
        }
    }

    fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    fn is_contiguous(&self) -> bool {
        self.strides == Self::contiguous_strides(&self.shape)
    }

    /// The tensor's elements in row-major order, when known.
    fn values(&self) -> Option<Vec<f64>> {
        let storage = self.storage.values.borrow();
        let data = storage.as_ref()?;
        let n = self.numel();
        let mut out = Vec::with_capacity(usize::try_from(n).ok()?);
        let mut idx = vec![0i64; self.shape.len()];
        for _ in 0..n {
            let pos = self.offset
                + idx
                    .iter()
                    .zip(&self.strides)
                    .map(|(i, s)| i * s)
                    .sum::<i64>();
            out.push(*data.get(usize::try_from(pos).ok()?)?);
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < self.shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Some(out)
    }

    /// A fresh tensor with the same shape, dtype and device.
    fn with_values(&self, dtype: DType, values: Option<Vec<f64>>, origin: &str) -> TorchTensor {
        TorchTensor::new(
            self.shape.clone(),
            dtype,
            self.device.clone(),
            origin,
            values,
        )
    }

    /// A view of the same storage.
    fn view(&self, shape: Vec<i64>, strides: Vec<i64>, offset: i64) -> TorchTensor {
        TorchTensor {
            storage: self.storage.clone(),
            shape,
            strides,
            offset,
            dtype: self.dtype,
            device: self.device.clone(),
            origin: self.origin.clone(),
        }
    }

    fn forget_values(&self) {
        *self.storage.values.borrow_mut() = None;
    }

    fn scalar<'a>(&self, x: f64) -> Value<'a> {
        if self.dtype.is_bool() {
            Value::Bool(x != 0.0)
        } else if self.dtype.is_float() {
            Value::Float(x)
        } else {
            Value::Int(x as i64)
        }
    }
}

fn unknown_values(t: &TorchTensor, what: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::UNKNOWN_TENSOR_VALUES,
            format!(
                "{what} reads the values of a tensor made by `{}`, which are not known at compile time",
                t.origin
            ),
            span,
        )
        .with_label("a value of a build-time tensor")
        .with_note("tilec knows a build-time tensor's shape and dtype, and its values only when torch fixes them (`torch.zeros`, `torch.tensor([...])`, `torch.arange`) and nothing wrote to it since; pass the value itself (`--kernel 'f(...)'` or `-D NAME=VALUE`)"),
    )
}

/// The constructors and functions of `torch` this file models.
const FUNCTIONS: &[(&str, &str)] = &[
    ("randn", "torch.randn"),
    ("rand", "torch.rand"),
    ("empty", "torch.empty"),
    ("zeros", "torch.zeros"),
    ("ones", "torch.ones"),
    ("full", "torch.full"),
    ("tensor", "torch.tensor"),
    ("arange", "torch.arange"),
    ("randint", "torch.randint"),
    ("randn_like", "torch.randn_like"),
    ("rand_like", "torch.rand_like"),
    ("empty_like", "torch.empty_like"),
    ("zeros_like", "torch.zeros_like"),
    ("ones_like", "torch.ones_like"),
];

/// Tensor methods, by Python name.
const METHODS: &[(&str, &str)] = &[
    ("size", "torch.Tensor.size"),
    ("dim", "torch.Tensor.dim"),
    ("numel", "torch.Tensor.numel"),
    ("element_size", "torch.Tensor.element_size"),
    ("stride", "torch.Tensor.stride"),
    ("is_contiguous", "torch.Tensor.is_contiguous"),
    ("to", "torch.Tensor.to"),
    ("cuda", "torch.Tensor.cuda"),
    ("cpu", "torch.Tensor.cpu"),
    ("contiguous", "torch.Tensor.contiguous"),
    ("clone", "torch.Tensor.clone"),
    ("half", "torch.Tensor.half"),
    ("float", "torch.Tensor.float"),
    ("bfloat16", "torch.Tensor.bfloat16"),
    ("int", "torch.Tensor.int"),
    ("long", "torch.Tensor.long"),
    ("view", "torch.Tensor.view"),
    ("reshape", "torch.Tensor.reshape"),
    ("t", "torch.Tensor.t"),
    ("transpose", "torch.Tensor.transpose"),
    ("permute", "torch.Tensor.permute"),
    ("unsqueeze", "torch.Tensor.unsqueeze"),
    ("item", "torch.Tensor.item"),
    ("tolist", "torch.Tensor.tolist"),
    ("max", "torch.Tensor.max"),
    ("min", "torch.Tensor.min"),
    ("sum", "torch.Tensor.sum"),
    ("uniform_", "torch.Tensor.inplace"),
    ("normal_", "torch.Tensor.inplace"),
    ("fill_", "torch.Tensor.inplace"),
    ("zero_", "torch.Tensor.inplace"),
    ("random_", "torch.Tensor.inplace"),
    ("copy_", "torch.Tensor.inplace"),
];

/// `torch.NAME`, when this file models it.
pub(crate) fn torch_attr<'a>(name: &str) -> Option<Value<'a>> {
    FUNCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, full)| Value::Builtin(full))
}

/// Whether [`call`] implements the built-in `name`.
pub(crate) fn handles(name: &str) -> bool {
    FUNCTIONS.iter().any(|(_, f)| *f == name) || METHODS.iter().any(|(_, f)| *f == name)
}

/// Attributes of a tensor.
pub(crate) fn get_attr<'a>(t: &Rc<TorchTensor>, name: &str, span: Span) -> EResult<Value<'a>> {
    let tensor = Value::Torch(t.clone());
    Ok(match name {
        "shape" => shape_tuple(&t.shape),
        "dtype" => Value::DType(t.dtype),
        "ndim" => Value::Int(t.shape.len() as i64),
        "device" => Value::Opaque(Rc::from(format!("torch.device({:?})", &*t.device))),
        "is_cuda" => Value::Bool(t.device.starts_with("cuda")),
        "T" => transpose_all(t),
        _ => match METHODS.iter().find(|(n, _)| *n == name) {
            Some((_, full)) => Value::Method(Rc::new(tensor), full),
            None => {
                return Err(err(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`torch.Tensor.{name}` is not supported by tilec at build time"),
                    span,
                ));
            }
        },
    })
}

fn shape_tuple<'a>(shape: &[i64]) -> Value<'a> {
    Value::tuple(shape.iter().map(|&d| Value::Int(d)).collect())
}

fn transpose_all<'a>(t: &TorchTensor) -> Value<'a> {
    let shape = t.shape.iter().rev().copied().collect();
    let strides = t.strides.iter().rev().copied().collect();
    Value::Torch(Rc::new(t.view(shape, strides, t.offset)))
}

fn int_of(v: &Value<'_>, what: &str, span: Span) -> EResult<i64> {
    v.as_int().ok_or_else(|| {
        err(
            codes::TYPE_ERROR,
            format!("{what} must be an integer, not {}", v.a_type_name()),
            span,
        )
    })
}

/// A shape from `f(2, 3)`, `f((2, 3))` or `f([2, 3])`.
fn shape_of(args: &[Value<'_>], what: &str, span: Span) -> EResult<Vec<i64>> {
    let dims: Vec<Value<'_>> = match args {
        [one] if one.as_sequence().is_some() => one.as_sequence().unwrap_or_default(),
        many => many.to_vec(),
    };
    let shape = dims
        .iter()
        .map(|d| int_of(d, &format!("a size of `{what}`"), span))
        .collect::<EResult<Vec<i64>>>()?;
    if let Some(d) = shape.iter().find(|d| **d < 0) {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("`{what}`: negative dimension {d}"),
            span,
        ));
    }
    Ok(shape)
}

/// The size arguments of a constructor: its positional arguments, or its
/// `size=` keyword.
fn size_args<'a>(args: &[Value<'a>], kwargs: &[(String, Value<'a>)]) -> Vec<Value<'a>> {
    match (args, kwarg(kwargs, "size")) {
        ([], Some(size)) => vec![size.clone()],
        _ => args.to_vec(),
    }
}

fn kwarg<'k, 'a>(kwargs: &'k [(String, Value<'a>)], name: &str) -> Option<&'k Value<'a>> {
    kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn dtype_kwarg(
    kwargs: &[(String, Value<'_>)],
    default: DType,
    what: &str,
    span: Span,
) -> EResult<DType> {
    match kwarg(kwargs, "dtype") {
        None | Some(Value::None) => Ok(default),
        Some(Value::DType(d)) => Ok(*d),
        Some(other) => Err(err(
            codes::BAD_DTYPE,
            format!(
                "`{what}`: `dtype` must be a torch dtype tilec knows, not {}",
                other.a_type_name()
            ),
            span,
        )),
    }
}

fn device_kwarg(kwargs: &[(String, Value<'_>)], default: &str) -> Rc<str> {
    match kwarg(kwargs, "device") {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Opaque(s)) if s.starts_with("torch.device(") => Rc::from(
            s.trim_start_matches("torch.device(\"")
                .trim_end_matches("\")"),
        ),
        Some(Value::Int(i)) => Rc::from(format!("cuda:{i}")),
        _ => Rc::from(default),
    }
}

fn bounded(shape: &[i64]) -> bool {
    shape
        .iter()
        .try_fold(1i64, |n, d| n.checked_mul(*d))
        .is_some_and(|n| n <= MAX_KNOWN_ELEMENTS)
}

fn checked_numel(shape: &[i64], what: &str, span: Span) -> EResult<i64> {
    shape
        .iter()
        .try_fold(1i64, |n, d| n.checked_mul(*d))
        .ok_or_else(|| {
            err(
                codes::COMPILE_TIME_ARITHMETIC,
                format!("`{what}`: the tensor's size does not fit in 64 bits"),
                span,
            )
        })
}

/// Flattens a nested list of numbers (`torch.tensor([[1, 2], [3, 4]])`).
fn flatten(
    v: &Value<'_>,
    shape: &mut Vec<i64>,
    depth: usize,
    out: &mut Vec<f64>,
    kind: &mut u8,
    span: Span,
) -> EResult<()> {
    if let Some(items) = v.as_sequence() {
        let n = items.len() as i64;
        if shape.len() == depth {
            shape.push(n);
        } else if shape[depth] != n {
            return Err(err(
                codes::BAD_ARGUMENTS,
                "`torch.tensor`: the nested lists have different lengths",
                span,
            ));
        }
        for item in &items {
            flatten(item, shape, depth + 1, out, kind, span)?;
        }
        return Ok(());
    }
    if shape.len() != depth {
        return Err(err(
            codes::BAD_ARGUMENTS,
            "`torch.tensor`: the nested lists have different depths",
            span,
        ));
    }
    match v {
        Value::Bool(b) => out.push(f64::from(u8::from(*b))),
        Value::Int(i) => {
            *kind = (*kind).max(1);
            out.push(*i as f64);
        }
        Value::Float(f) => {
            *kind = 2;
            out.push(*f);
        }
        other => {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "`torch.tensor` takes numbers at build time, not {}",
                    other.a_type_name()
                ),
                span,
            ));
        }
    }
    Ok(())
}

fn tensor_arg<'v>(v: &'v Value<'_>, what: &str, span: Span) -> EResult<&'v Rc<TorchTensor>> {
    match v {
        Value::Torch(t) => Ok(t),
        other => Err(bad_args(
            what,
            span,
            &format!("a tensor, not {}", other.a_type_name()),
        )),
    }
}

/// Calls one of the functions or methods [`handles`] names (a method gets
/// its tensor as the first argument).
pub(crate) fn call<'a>(
    _ev: &mut Evaluator<'a>,
    name: &'static str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let short = name.trim_start_matches("torch.");
    if let Some(method) = name.strip_prefix("torch.Tensor.") {
        let (recv, rest) = args
            .split_first()
            .ok_or_else(|| bad_args(short, span, "a tensor"))?;
        let t = tensor_arg(recv, short, span)?.clone();
        return method_call(&t, method, rest, &kwargs, span);
    }
    let device = device_kwarg(&kwargs, "cpu");
    let made = |shape: Vec<i64>, dtype: DType, values: Option<Vec<f64>>| {
        Value::Torch(Rc::new(TorchTensor::new(
            shape,
            dtype,
            device.clone(),
            name,
            values,
        )))
    };
    match short {
        "randn" | "rand" | "empty" => {
            let shape = shape_of(&size_args(&args, &kwargs), name, span)?;
            checked_numel(&shape, name, span)?;
            let dtype = dtype_kwarg(&kwargs, DType::F32, name, span)?;
            Ok(made(shape, dtype, None))
        }
        "zeros" | "ones" => {
            let shape = shape_of(&size_args(&args, &kwargs), name, span)?;
            let n = checked_numel(&shape, name, span)?;
            let dtype = dtype_kwarg(&kwargs, DType::F32, name, span)?;
            let fill = if short == "ones" { 1.0 } else { 0.0 };
            let values = bounded(&shape).then(|| vec![fill; n as usize]);
            Ok(made(shape, dtype, values))
        }
        "full" => {
            let (Some(size), Some(fill)) =
                (args.first(), args.get(1).or(kwarg(&kwargs, "fill_value")))
            else {
                return Err(bad_args(name, span, "a size and a fill value"));
            };
            let shape = shape_of(std::slice::from_ref(size), name, span)?;
            let n = checked_numel(&shape, name, span)?;
            let (x, default) = match fill {
                Value::Bool(b) => (f64::from(u8::from(*b)), DType::Bool),
                Value::Int(i) => (*i as f64, DType::I64),
                Value::Float(f) => (*f, DType::F32),
                other => {
                    return Err(bad_args(
                        name,
                        span,
                        &format!("a number to fill with, not {}", other.a_type_name()),
                    ));
                }
            };
            let dtype = dtype_kwarg(&kwargs, default, name, span)?;
            let values = (bounded(&shape) && x.abs() < EXACT_INT).then(|| vec![x; n as usize]);
            Ok(made(shape, dtype, values))
        }
        "tensor" => {
            let [data] = args.as_slice() else {
                return Err(bad_args(name, span, "one list of numbers"));
            };
            let mut shape = Vec::new();
            let mut out = Vec::new();
            let mut kind = 0u8;
            flatten(data, &mut shape, 0, &mut out, &mut kind, span)?;
            let default = [DType::Bool, DType::I64, DType::F32][usize::from(kind)];
            let dtype = dtype_kwarg(&kwargs, default, name, span)?;
            let values =
                (bounded(&shape) && out.iter().all(|x| x.abs() < EXACT_INT)).then_some(out);
            Ok(made(shape, dtype, values))
        }
        "arange" => {
            let nums: Vec<&Value<'a>> = args.iter().collect();
            let (start, end, step) = match nums.as_slice() {
                [e] => (Value::Int(0), (*e).clone(), Value::Int(1)),
                [s, e] => ((*s).clone(), (*e).clone(), Value::Int(1)),
                [s, e, st] => ((*s).clone(), (*e).clone(), (*st).clone()),
                _ => {
                    return Err(bad_args(
                        name,
                        span,
                        "an end, or a start, an end and a step",
                    ));
                }
            };
            let all_int = [&start, &end, &step].iter().all(|v| v.as_int().is_some());
            let (Some(s), Some(e), Some(st)) =
                (start.as_number(), end.as_number(), step.as_number())
            else {
                return Err(bad_args(name, span, "numbers"));
            };
            if st == 0.0 {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`torch.arange`: the step cannot be zero",
                    span,
                ));
            }
            let n = ((e - s) / st).ceil().max(0.0);
            if n > i64::MAX as f64 / 2.0 {
                return Err(err(
                    codes::COMPILE_TIME_ARITHMETIC,
                    "`torch.arange`: too many elements",
                    span,
                ));
            }
            let n = n as i64;
            let dtype = dtype_kwarg(
                &kwargs,
                if all_int { DType::I64 } else { DType::F32 },
                name,
                span,
            )?;
            let values =
                (n <= MAX_KNOWN_ELEMENTS).then(|| (0..n).map(|i| s + i as f64 * st).collect());
            Ok(made(vec![n], dtype, values))
        }
        "randint" => {
            // randint(high, size) or randint(low, high, size).
            let size = match args.as_slice() {
                [_, size] | [_, _, size] => size.clone(),
                _ => match kwarg(&kwargs, "size") {
                    Some(s) => s.clone(),
                    None => return Err(bad_args(name, span, "bounds and a size")),
                },
            };
            let shape = shape_of(std::slice::from_ref(&size), name, span)?;
            checked_numel(&shape, name, span)?;
            let dtype = dtype_kwarg(&kwargs, DType::I64, name, span)?;
            Ok(made(shape, dtype, None))
        }
        _ => {
            // The `*_like` family.
            let base = short.trim_end_matches("_like");
            let [like] = args.as_slice() else {
                return Err(bad_args(name, span, "one tensor"));
            };
            let t = tensor_arg(like, name, span)?;
            let dtype = dtype_kwarg(&kwargs, t.dtype, name, span)?;
            let n = t.numel();
            let values = match base {
                "zeros" if bounded(&t.shape) => Some(vec![0.0; n as usize]),
                "ones" if bounded(&t.shape) => Some(vec![1.0; n as usize]),
                _ => None,
            };
            let mut r = t.with_values(dtype, values, name);
            if kwarg(&kwargs, "device").is_some() {
                r.device = device_kwarg(&kwargs, &t.device);
            }
            Ok(Value::Torch(Rc::new(r)))
        }
    }
}

fn norm_dim(d: i64, ndim: usize, span: Span) -> EResult<usize> {
    let n = ndim as i64;
    let d2 = if d < 0 { d + n } else { d };
    if d2 < 0 || d2 >= n.max(1) {
        return Err(err(
            codes::INDEX_ERROR,
            format!("dimension {d} is out of range for a tensor of {ndim} dimensions"),
            span,
        ));
    }
    Ok(d2 as usize)
}

fn cast_to<'a>(t: &TorchTensor, dtype: DType, device: Option<Rc<str>>) -> Value<'a> {
    let device = device.unwrap_or_else(|| t.device.clone());
    if dtype == t.dtype && device == t.device {
        return Value::Torch(Rc::new(t.clone()));
    }
    let mut r = t.with_values(dtype, t.values(), &t.origin);
    r.device = device;
    Value::Torch(Rc::new(r))
}

fn method_call<'a>(
    t: &Rc<TorchTensor>,
    method: &str,
    args: &[Value<'a>],
    kwargs: &[(String, Value<'a>)],
    span: Span,
) -> EResult<Value<'a>> {
    let what = format!("Tensor.{method}");
    let no_args = |r: Value<'a>| -> EResult<Value<'a>> {
        if args.is_empty() {
            Ok(r)
        } else {
            Err(bad_args(&what, span, "no arguments"))
        }
    };
    match method {
        "size" => match args {
            [] => Ok(shape_tuple(&t.shape)),
            [d] => {
                let d = norm_dim(int_of(d, "a dimension", span)?, t.shape.len(), span)?;
                Ok(Value::Int(t.shape[d]))
            }
            _ => Err(bad_args(&what, span, "at most a dimension")),
        },
        "stride" => match args {
            [] => Ok(shape_tuple(&t.strides)),
            [d] => {
                let d = norm_dim(int_of(d, "a dimension", span)?, t.shape.len(), span)?;
                Ok(Value::Int(t.strides[d]))
            }
            _ => Err(bad_args(&what, span, "at most a dimension")),
        },
        "dim" => no_args(Value::Int(t.shape.len() as i64)),
        "numel" => no_args(Value::Int(t.numel())),
        "element_size" => no_args(Value::Int(t.dtype.bytes() as i64)),
        "is_contiguous" => no_args(Value::Bool(t.is_contiguous())),
        "cuda" => Ok(cast_to(t, t.dtype, Some(Rc::from("cuda")))),
        "cpu" => no_args(cast_to(t, t.dtype, Some(Rc::from("cpu")))),
        "contiguous" => no_args(if t.is_contiguous() {
            Value::Torch(t.clone())
        } else {
            Value::Torch(Rc::new(t.with_values(t.dtype, t.values(), &t.origin)))
        }),
        "clone" => no_args(Value::Torch(Rc::new(t.with_values(
            t.dtype,
            t.values(),
            &t.origin,
        )))),
        "half" => no_args(cast_to(t, DType::F16, None)),
        "float" => no_args(cast_to(t, DType::F32, None)),
        "bfloat16" => no_args(cast_to(t, DType::BF16, None)),
        "int" => no_args(cast_to(t, DType::I32, None)),
        "long" => no_args(cast_to(t, DType::I64, None)),
        "to" => {
            let mut dtype = t.dtype;
            let mut device = None;
            for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                match v {
                    Value::DType(d) => dtype = *d,
                    Value::Str(s) => device = Some(s.clone()),
                    Value::Opaque(s) if s.starts_with("torch.device(") => {
                        device = Some(Rc::from(
                            s.trim_start_matches("torch.device(\"")
                                .trim_end_matches("\")"),
                        ));
                    }
                    Value::Torch(other) => {
                        dtype = other.dtype;
                        device = Some(other.device.clone());
                    }
                    Value::Bool(_) => {}
                    other => {
                        return Err(bad_args(
                            &what,
                            span,
                            &format!("a dtype or a device, not {}", other.a_type_name()),
                        ));
                    }
                }
            }
            Ok(cast_to(t, dtype, device))
        }
        "view" | "reshape" => {
            let mut shape: Vec<i64> = match args {
                [one] if one.as_sequence().is_some() => one.as_sequence().unwrap_or_default(),
                many => many.to_vec(),
            }
            .iter()
            .map(|d| int_of(d, "a size", span))
            .collect::<EResult<_>>()?;
            let n = t.numel();
            let known: i64 = shape.iter().filter(|d| **d != -1).product();
            let holes = shape.iter().filter(|d| **d == -1).count();
            if holes > 1
                || shape.iter().any(|d| *d < -1)
                || (holes == 1 && (known == 0 || n % known != 0))
            {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`{what}`: shape {shape:?} is invalid for {n} elements"),
                    span,
                ));
            }
            for d in shape.iter_mut() {
                if *d == -1 {
                    *d = n / known;
                }
            }
            if shape.iter().product::<i64>() != n {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`{what}`: shape {shape:?} is invalid for {n} elements"),
                    span,
                ));
            }
            if t.is_contiguous() {
                let strides = TorchTensor::contiguous_strides(&shape);
                Ok(Value::Torch(Rc::new(t.view(shape, strides, t.offset))))
            } else if method == "reshape" {
                let mut r = t.with_values(t.dtype, t.values(), &t.origin);
                r.strides = TorchTensor::contiguous_strides(&shape);
                r.shape = shape;
                Ok(Value::Torch(Rc::new(r)))
            } else {
                Err(err(
                    codes::BAD_ARGUMENTS,
                    "`Tensor.view` of a non-contiguous tensor: use `.reshape(...)`",
                    span,
                ))
            }
        }
        "t" => {
            if t.shape.len() > 2 {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    "`Tensor.t` takes a tensor of at most 2 dimensions",
                    span,
                ));
            }
            no_args(transpose_all(t))
        }
        "transpose" => {
            let [a, b] = args else {
                return Err(bad_args(&what, span, "two dimensions"));
            };
            let a = norm_dim(int_of(a, "a dimension", span)?, t.shape.len(), span)?;
            let b = norm_dim(int_of(b, "a dimension", span)?, t.shape.len(), span)?;
            let (mut shape, mut strides) = (t.shape.clone(), t.strides.clone());
            shape.swap(a, b);
            strides.swap(a, b);
            Ok(Value::Torch(Rc::new(t.view(shape, strides, t.offset))))
        }
        "permute" => {
            let dims: Vec<Value<'a>> = match args {
                [one] if one.as_sequence().is_some() => one.as_sequence().unwrap_or_default(),
                many => many.to_vec(),
            };
            if dims.len() != t.shape.len() {
                return Err(bad_args(
                    &what,
                    span,
                    "one dimension per dimension of the tensor",
                ));
            }
            let mut seen = vec![false; dims.len()];
            let (mut shape, mut strides) = (Vec::new(), Vec::new());
            for d in &dims {
                let d = norm_dim(int_of(d, "a dimension", span)?, t.shape.len(), span)?;
                if std::mem::replace(&mut seen[d], true) {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`Tensor.permute`: a dimension repeats",
                        span,
                    ));
                }
                shape.push(t.shape[d]);
                strides.push(t.strides[d]);
            }
            Ok(Value::Torch(Rc::new(t.view(shape, strides, t.offset))))
        }
        "unsqueeze" => {
            let [d] = args else {
                return Err(bad_args(&what, span, "a dimension"));
            };
            let d = norm_dim(int_of(d, "a dimension", span)?, t.shape.len() + 1, span)?;
            let (mut shape, mut strides) = (t.shape.clone(), t.strides.clone());
            let stride = if d < t.shape.len() {
                t.strides[d] * t.shape[d]
            } else {
                1
            };
            shape.insert(d, 1);
            strides.insert(d, stride);
            Ok(Value::Torch(Rc::new(t.view(shape, strides, t.offset))))
        }
        "item" => {
            if !args.is_empty() {
                return Err(bad_args(&what, span, "no arguments"));
            }
            if t.numel() != 1 {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!(
                        "`Tensor.item` needs a tensor of one element, not {}",
                        t.numel()
                    ),
                    span,
                ));
            }
            let v = t
                .values()
                .ok_or_else(|| unknown_values(t, "`Tensor.item()`", span))?;
            Ok(t.scalar(v[0]))
        }
        "tolist" => {
            let v = t
                .values()
                .ok_or_else(|| unknown_values(t, "`Tensor.tolist()`", span))?;
            Ok(nested(t, &v, 0, &mut 0))
        }
        "max" | "min" | "sum" => {
            if !args.is_empty() || !kwargs.is_empty() {
                return Err(err(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "`Tensor.{method}` along a dimension is not modelled at build time; tilec takes `.{method}()` of the whole tensor"
                    ),
                    span,
                ));
            }
            if t.numel() == 0 && method != "sum" {
                return Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("`Tensor.{method}` of an empty tensor"),
                    span,
                ));
            }
            let values = t.values();
            let r = values.map(|v| match method {
                "max" => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                "min" => v.iter().copied().fold(f64::INFINITY, f64::min),
                _ => v.iter().sum(),
            });
            // `sum` of an integer or bool tensor is int64.
            let dtype = if method == "sum" && !t.dtype.is_float() {
                DType::I64
            } else {
                t.dtype
            };
            Ok(Value::Torch(Rc::new(TorchTensor::new(
                Vec::new(),
                dtype,
                t.device.clone(),
                &t.origin,
                r.map(|x| vec![x]),
            ))))
        }
        // In-place writes: the values of the storage are no longer known.
        _ => {
            t.forget_values();
            Ok(Value::Torch(t.clone()))
        }
    }
}

fn nested<'a>(t: &TorchTensor, v: &[f64], depth: usize, pos: &mut usize) -> Value<'a> {
    if depth == t.shape.len() {
        let x = v[*pos];
        *pos += 1;
        return t.scalar(x);
    }
    Value::list(
        (0..t.shape[depth])
            .map(|_| nested(t, v, depth + 1, pos))
            .collect(),
    )
}

/// `t[key]`: integers and slices per dimension, as views.
pub(crate) fn index<'a>(t: &Rc<TorchTensor>, key: &Value<'a>, span: Span) -> EResult<Value<'a>> {
    let keys = match key {
        Value::Tuple(items) => items.to_vec(),
        other => vec![other.clone()],
    };
    if keys.len() > t.shape.len() {
        return Err(err(
            codes::INDEX_ERROR,
            format!(
                "too many indices for a tensor of {} dimensions",
                t.shape.len()
            ),
            span,
        ));
    }
    let (mut shape, mut strides, mut offset) = (Vec::new(), Vec::new(), t.offset);
    for (d, k) in keys.iter().enumerate() {
        let (n, s) = (t.shape[d], t.strides[d]);
        match k {
            Value::Int(_) | Value::Bool(_) => {
                let i = k.as_int().unwrap_or(0);
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(err(
                        codes::INDEX_ERROR,
                        format!("index {i} is out of bounds for dimension {d} of size {n}"),
                        span,
                    ));
                }
                offset += j * s;
            }
            Value::Slice(parts) => {
                let get = |v: &Option<Value<'a>>| -> EResult<Option<i64>> {
                    match v {
                        None | Some(Value::None) => Ok(None),
                        Some(x) => x.as_int().map(Some).ok_or_else(|| {
                            err(codes::TYPE_ERROR, "slice bounds must be integers", span)
                        }),
                    }
                };
                let step = get(&parts[2])?.unwrap_or(1);
                if step <= 0 {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "a tensor slice needs a positive step",
                        span,
                    ));
                }
                let norm = |i: i64| (if i < 0 { i + n } else { i }).clamp(0, n);
                let lo = get(&parts[0])?.map_or(0, norm);
                let hi = get(&parts[1])?.map_or(n, norm);
                let len = if hi > lo {
                    (hi - lo + step - 1) / step
                } else {
                    0
                };
                offset += lo * s;
                shape.push(len);
                strides.push(s * step);
            }
            other => {
                return Err(err(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "indexing a build-time tensor with {} is not modelled; tilec takes integers and slices",
                        other.a_type_name()
                    ),
                    span,
                ));
            }
        }
    }
    shape.extend_from_slice(&t.shape[keys.len()..]);
    strides.extend_from_slice(&t.strides[keys.len()..]);
    Ok(Value::Torch(Rc::new(t.view(shape, strides, offset))))
}

/// `t[key] = value`: the storage's values are no longer known.
pub(crate) fn store(t: &TorchTensor) {
    t.forget_values();
}

/// The value of a one-element tensor (`int(t)`, `float(t)`, `if t:`).
pub(crate) fn scalar_value<'a>(t: &TorchTensor, what: &str, span: Span) -> EResult<Value<'a>> {
    if t.numel() != 1 {
        return Err(err(
            codes::TYPE_ERROR,
            format!(
                "{what} needs a tensor of one element, not one of shape {:?}",
                t.shape
            ),
            span,
        ));
    }
    let v = t.values().ok_or_else(|| unknown_values(t, what, span))?;
    Ok(t.scalar(v[0]))
}

/// The elements of `t` along its first dimension (`for row in t`).
pub(crate) fn iterate<'a>(t: &Rc<TorchTensor>, span: Span) -> EResult<Vec<Value<'a>>> {
    let Some(&n) = t.shape.first() else {
        return Err(err(codes::TYPE_ERROR, "iteration over a 0-d tensor", span));
    };
    if n > MAX_KNOWN_ELEMENTS {
        return Err(err(
            codes::EVAL_LIMIT,
            format!(
                "iterating over {n} rows of a build-time tensor is beyond tilec's evaluation limit"
            ),
            span,
        ));
    }
    (0..n).map(|i| index(t, &Value::Int(i), span)).collect()
}

fn promote(a: DType, b: DType, span: Span) -> EResult<DType> {
    if a == b {
        return Ok(a);
    }
    let ok = match (a.is_float(), b.is_float()) {
        (true, false) => Some(a),
        (false, true) => Some(b),
        (true, true) => match a.bits().cmp(&b.bits()) {
            std::cmp::Ordering::Greater => Some(a),
            std::cmp::Ordering::Less => Some(b),
            // float16 with bfloat16.
            std::cmp::Ordering::Equal if a.bits() == 16 => Some(DType::F32),
            std::cmp::Ordering::Equal => None,
        },
        (false, false) if a.is_bool() => Some(b),
        (false, false) if b.is_bool() => Some(a),
        (false, false) => {
            let signed = |d: DType| d.int_range().is_some_and(|(lo, _)| lo < 0);
            if signed(a) == signed(b) {
                Some(if a.bits() >= b.bits() { a } else { b })
            } else {
                let (s, u) = if signed(a) { (a, b) } else { (b, a) };
                if s.bits() > u.bits() {
                    Some(s)
                } else {
                    match u.bits() {
                        8 => Some(DType::I16),
                        16 => Some(DType::I32),
                        32 => Some(DType::I64),
                        _ => None,
                    }
                }
            }
        }
    };
    ok.ok_or_else(|| {
        err(
            codes::UNSUPPORTED_TILELANG,
            format!(
                "tilec does not model torch's promotion of {} with {} at build time",
                a.tilelang_name(),
                b.tilelang_name()
            ),
            span,
        )
    })
}

/// An operand of tensor arithmetic: a tensor, or a Python number.
enum Operand<'t> {
    Tensor(&'t TorchTensor),
    Number(f64, DTypeOfScalar),
}

#[derive(Clone, Copy, PartialEq)]
enum DTypeOfScalar {
    Bool,
    Int,
    Float,
}

fn operand<'t>(v: &'t Value<'_>) -> Option<Operand<'t>> {
    match v {
        Value::Torch(t) => Some(Operand::Tensor(t)),
        Value::Bool(b) => Some(Operand::Number(
            f64::from(u8::from(*b)),
            DTypeOfScalar::Bool,
        )),
        Value::Int(i) if (*i as f64).abs() < EXACT_INT => {
            Some(Operand::Number(*i as f64, DTypeOfScalar::Int))
        }
        Value::Float(f) => Some(Operand::Number(*f, DTypeOfScalar::Float)),
        _ => None,
    }
}

fn broadcast(a: &[i64], b: &[i64], span: Span) -> EResult<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| -> i64 {
        if i + s.len() >= n {
            s[i + s.len() - n]
        } else {
            1
        }
    };
    (0..n)
        .map(|i| {
            let (x, y) = (at(a, i), at(b, i));
            if x == y || y == 1 {
                Ok(x)
            } else if x == 1 {
                Ok(y)
            } else {
                Err(err(
                    codes::BAD_ARGUMENTS,
                    format!("tensor shapes {a:?} and {b:?} do not broadcast"),
                    span,
                ))
            }
        })
        .collect()
}

/// The values of `t` broadcast to `shape`.
fn expand(t: &TorchTensor, shape: &[i64]) -> Option<Vec<f64>> {
    let v = t.values()?;
    let n: i64 = shape.iter().product();
    let pad = shape.len() - t.shape.len();
    let own: Vec<i64> = std::iter::repeat_n(1, pad)
        .chain(t.shape.iter().copied())
        .collect();
    let own_strides = TorchTensor::contiguous_strides(&own);
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; shape.len()];
    for _ in 0..n {
        let pos: i64 = idx
            .iter()
            .zip(&own)
            .zip(&own_strides)
            .map(|((i, d), s)| if *d == 1 { 0 } else { i * s })
            .sum();
        out.push(v[pos as usize]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(out)
}

fn apply(op: PyBinOp, x: f64, y: f64, int: bool) -> Option<f64> {
    Some(match op {
        PyBinOp::Add => x + y,
        PyBinOp::Sub => x - y,
        PyBinOp::Mul => x * y,
        PyBinOp::Div => x / y,
        PyBinOp::FloorDiv if int && y == 0.0 => return None,
        PyBinOp::FloorDiv => (x / y).floor(),
        PyBinOp::Mod if int && y == 0.0 => return None,
        PyBinOp::Mod => x - y * (x / y).floor(),
        PyBinOp::Pow => x.powf(y),
        _ => return None,
    })
}

/// Arithmetic with a tensor operand; `None` when neither side is a tensor.
pub(crate) fn binop<'a>(
    op: PyBinOp,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
) -> Option<EResult<Value<'a>>> {
    if !matches!(a, Value::Torch(_)) && !matches!(b, Value::Torch(_)) {
        return None;
    }
    Some(elementwise(
        op.symbol(),
        a,
        b,
        span,
        |x, y, int| apply(op, x, y, int),
        |d| match op {
            PyBinOp::Div if !d.is_float() => DType::F32,
            _ => d,
        },
    ))
}

/// A comparison with a tensor operand (a bool tensor); `None` when neither
/// side is a tensor.
pub(crate) fn compare<'a>(
    symbol: &str,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
) -> Option<EResult<Value<'a>>> {
    if !matches!(a, Value::Torch(_)) && !matches!(b, Value::Torch(_)) {
        return None;
    }
    let test: fn(f64, f64) -> bool = match symbol {
        "==" => |x, y| x == y,
        "!=" => |x, y| x != y,
        "<" => |x, y| x < y,
        "<=" => |x, y| x <= y,
        ">" => |x, y| x > y,
        ">=" => |x, y| x >= y,
        other => {
            return Some(Err(err(
                codes::UNSUPPORTED_TILELANG,
                format!("`{other}` with a build-time tensor is not modelled"),
                span,
            )));
        }
    };
    Some(elementwise(
        symbol,
        a,
        b,
        span,
        move |x, y, _| Some(f64::from(u8::from(test(x, y)))),
        |_| DType::Bool,
    ))
}

fn elementwise<'a>(
    symbol: &str,
    a: &Value<'a>,
    b: &Value<'a>,
    span: Span,
    f: impl Fn(f64, f64, bool) -> Option<f64>,
    result: impl Fn(DType) -> DType,
) -> EResult<Value<'a>> {
    let (Some(x), Some(y)) = (operand(a), operand(b)) else {
        return Err(err(
            codes::TYPE_ERROR,
            format!(
                "`{symbol}` is not supported between {} and {}",
                a.a_type_name(),
                b.a_type_name()
            ),
            span,
        ));
    };
    // A Python number takes the tensor's dtype unless it is a float and
    // the tensor is not (then the default float32).
    let scalar_dtype = |t: &TorchTensor, k: DTypeOfScalar| -> DType {
        match k {
            DTypeOfScalar::Float if !t.dtype.is_float() => DType::F32,
            DTypeOfScalar::Int if t.dtype.is_bool() => DType::I64,
            _ => t.dtype,
        }
    };
    let (shape, dtype, base) = match (&x, &y) {
        (Operand::Tensor(p), Operand::Tensor(q)) => (
            broadcast(&p.shape, &q.shape, span)?,
            promote(p.dtype, q.dtype, span)?,
            *p,
        ),
        (Operand::Tensor(t), Operand::Number(_, k))
        | (Operand::Number(_, k), Operand::Tensor(t)) => (t.shape.clone(), scalar_dtype(t, *k), *t),
        _ => unreachable_numbers(span)?,
    };
    let values = |o: &Operand<'_>| -> Option<Vec<f64>> {
        if !bounded(&shape) {
            return None;
        }
        match o {
            Operand::Tensor(t) => expand(t, &shape),
            Operand::Number(v, _) => Some(vec![*v; shape.iter().product::<i64>() as usize]),
        }
    };
    let int = !dtype.is_float();
    let out = match (values(&x), values(&y)) {
        (Some(p), Some(q)) if bounded(&shape) => p
            .iter()
            .zip(&q)
            .map(|(p, q)| f(*p, *q, int).filter(|r| !int || r.abs() < EXACT_INT))
            .collect::<Option<Vec<f64>>>(),
        _ => None,
    };
    let mut r = base.with_values(result(dtype), out, &base.origin);
    r.shape.clone_from(&shape);
    r.strides = TorchTensor::contiguous_strides(&shape);
    Ok(Value::Torch(Rc::new(r)))
}

fn unreachable_numbers<T>(span: Span) -> EResult<T> {
    Err(err(
        codes::TYPE_ERROR,
        "tensor arithmetic needs a tensor operand",
        span,
    ))
}

/// `len(t)`: the size of the first dimension.
pub(crate) fn len<'a>(t: &TorchTensor, span: Span) -> EResult<Value<'a>> {
    t.shape
        .first()
        .map(|n| Value::Int(*n))
        .ok_or_else(|| err(codes::TYPE_ERROR, "`len()` of a 0-d tensor", span))
}
