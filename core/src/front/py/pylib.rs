//! Build-time library calls of TileLang kernel files, with TileLang's
//! meaning: the pure helpers of `tilelang.math` (`next_power_of_2`,
//! `cdiv`), `tilelang.language.fp8.determine_fp8_type`, the device queries
//! of `torch.cuda`, `torch.version` and `tilelang.carver.arch.driver`,
//! `tvm.DataType`, `int.bit_length`, and the names `from
//! tilelang.autotuner import *` binds.
//!
//! Device queries are answered from the target being compiled for
//! ([`TargetFacts`], `Options::target`), never from the machine tilec runs
//! on; a fact the target does not record is a diagnostic, not a guess.

use super::builtins::bad_args;
use super::codes;
use super::eval::{Evaluator, err};
use super::value::{EResult, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::ir::{DType, Span};
use std::rc::Rc;

/// What the front end knows of the target a file is compiled for: enough
/// to answer the device queries kernel files make at build time
/// (`torch.cuda.get_device_capability()`, `driver.get_num_sms()`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetFacts {
    /// The target's name (`sm_90a`, `gfx942`).
    pub name: String,
    /// The vendor as target descriptions spell it (`nvidia`, `amd`,
    /// `apple`).
    pub vendor: String,
    /// The (major, minor) version `torch.cuda.get_device_capability`
    /// reports on the target: the CUDA compute capability (`sm_90a`:
    /// (9, 0)), or on AMD the version ROCm reports for the `gfx` name
    /// (`gfx942`: (9, 4)).
    pub capability: Option<(u32, u32)>,
    /// Streaming multiprocessors (AMD: compute units) of the target's
    /// parts, when every part the description lists agrees on one count.
    pub multiprocessors: Option<u32>,
    /// The name the driver reports for the target's device
    /// (`torch.cuda.get_device_name()`), when the description lists one
    /// part.
    pub device_name: Option<String>,
}

impl TargetFacts {
    /// The facts of a target by name: from its built-in description when
    /// there is one (`core/targets/`), else what the name itself says.
    pub fn for_target(name: &str) -> TargetFacts {
        match crate::target::builtin(name) {
            Ok(d) => TargetFacts::from_description(&d),
            Err(_) => TargetFacts::from_name(name),
        }
    }

    /// The facts a target description records.
    pub fn from_description(d: &crate::target::TargetDescription) -> TargetFacts {
        let mut facts = TargetFacts::from_name(&d.name);
        facts.vendor.clone_from(&d.vendor);
        facts.multiprocessors = d.multiprocessor_count();
        facts.device_name = match d.parts.as_slice() {
            [one] => Some(one.device.clone()),
            _ => None,
        };
        facts
    }

    /// The facts a target name says by itself: `sm_XY` is an NVIDIA
    /// target of compute capability X.Y, `gfxNNN` an AMD one.
    pub fn from_name(name: &str) -> TargetFacts {
        let digits = |s: &str| -> String { s.chars().take_while(char::is_ascii_digit).collect() };
        let (vendor, capability) = if let Some(rest) = name.strip_prefix("sm_") {
            let d = digits(rest);
            let cap = (d.len() >= 2)
                .then(|| {
                    let (major, minor) = d.split_at(d.len() - 1);
                    Some((major.parse().ok()?, minor.parse().ok()?))
                })
                .flatten();
            ("nvidia", cap)
        } else if let Some(rest) = name.strip_prefix("gfx") {
            // `gfx942`: major 9, minor 4, stepping 2 (`gfx90a`: 9, 0, a).
            let cap = (rest.len() >= 3 && rest.is_ascii())
                .then(|| {
                    let (major, tail) = rest.split_at(rest.len() - 2);
                    let minor = tail.chars().next()?.to_digit(16)?;
                    Some((major.parse().ok()?, minor))
                })
                .flatten();
            ("amd", cap)
        } else {
            ("unknown", None)
        };
        TargetFacts {
            name: name.to_string(),
            vendor: vendor.to_string(),
            capability,
            multiprocessors: None,
            device_name: None,
        }
    }

    fn is_cuda(&self) -> bool {
        self.vendor == "nvidia"
    }

    fn is_hip(&self) -> bool {
        self.vendor == "amd"
    }
}

/// Modules this file models, by import name.
const MODULES: &[&str] = &[
    "tilelang.math",
    "tilelang.carver",
    "tilelang.carver.arch",
    "tilelang.carver.arch.driver",
    "tilelang.language.fp8",
    "torch.cuda",
    "torch.version",
    "tvm",
    "tvm.tirx",
    "tvm.tir",
    "dataclasses",
];

/// Python built-in names this file adds.
pub(crate) fn builtin_name<'a>(name: &str) -> Option<Value<'a>> {
    match name {
        "super" => Some(Value::Builtin("super")),
        _ => None,
    }
}

/// The module value of an import this file models.
pub(crate) fn module<'a>(name: &str) -> Option<Value<'a>> {
    if let Some(m) = super::tl_extra::module(name) {
        return Some(m);
    }
    MODULES
        .iter()
        .find(|m| **m == name)
        .map(|m| Value::Module(m))
}

/// The names `from MODULE import *` binds, for modules whose public names
/// tilec models.
pub(crate) fn star_names(module: &Value<'_>) -> Option<&'static [&'static str]> {
    match module {
        Value::Module("tilelang.autotuner") => Some(&[
            "autotune",
            "AutoTuner",
            "set_autotune_inputs",
            "get_autotune_inputs",
        ]),
        Value::Module("tilelang.math") => Some(&["next_power_of_2", "cdiv"]),
        _ => None,
    }
}

/// Attributes of the modules and values this file models; `None` leaves
/// the lookup to `builtins::get_attr`.
pub(crate) fn get_attr<'a>(
    ev: &mut Evaluator<'a>,
    base: &Value<'a>,
    name: &str,
    span: Span,
) -> Option<EResult<Value<'a>>> {
    if let Some(r) = super::pyclass::get_attr(ev, base, name, span) {
        return Some(r);
    }
    if let Some(v) = super::tl_extra::get_attr(base, name) {
        return Some(Ok(v));
    }
    let opaque = |m: &str| Value::Opaque(Rc::from(format!("{m}.{name}")));
    Some(Ok(match base {
        Value::Module("tilelang") => match name {
            "math" => Value::Module("tilelang.math"),
            "carver" => Value::Module("tilelang.carver"),
            "next_power_of_2" => Value::Builtin("tilelang.math.next_power_of_2"),
            "cdiv" => Value::Builtin("tilelang.math.cdiv"),
            "tvm" => Value::Module("tvm"),
            // `tilelang.DataType` is TVM's `DataType`, re-exported.
            "DataType" => Value::Builtin("tvm.DataType"),
            _ => return None,
        },
        Value::Module("T") => match name {
            "fp8" => Value::Module("tilelang.language.fp8"),
            _ => return None,
        },
        Value::Module(m @ "tilelang.math") => match name {
            "next_power_of_2" => Value::Builtin("tilelang.math.next_power_of_2"),
            "cdiv" => Value::Builtin("tilelang.math.cdiv"),
            _ => opaque(m),
        },
        Value::Module(m @ "tilelang.carver") => match name {
            "arch" => Value::Module("tilelang.carver.arch"),
            _ => opaque(m),
        },
        Value::Module(m @ "tilelang.carver.arch") => match name {
            "driver" => Value::Module("tilelang.carver.arch.driver"),
            _ => opaque(m),
        },
        Value::Module(m @ "tilelang.carver.arch.driver") => match name {
            "get_num_sms" => Value::Builtin("tilelang.carver.arch.driver.get_num_sms"),
            _ => opaque(m),
        },
        Value::Module(m @ "tilelang.language.fp8") => match name {
            "determine_fp8_type" => Value::Builtin("tilelang.language.fp8.determine_fp8_type"),
            _ => opaque(m),
        },
        Value::Module("torch") => match name {
            "cuda" => Value::Module("torch.cuda"),
            "version" => Value::Module("torch.version"),
            "device" => Value::Builtin("torch.device"),
            _ => return super::torch_tensor::torch_attr(name).map(Ok),
        },
        Value::Module(m @ "torch.cuda") => match name {
            "is_available" => Value::Builtin("torch.cuda.is_available"),
            "get_device_capability" => Value::Builtin("torch.cuda.get_device_capability"),
            "current_device" => Value::Builtin("torch.cuda.current_device"),
            "get_device_properties" => Value::Builtin("torch.cuda.get_device_properties"),
            "mem_get_info" => Value::Builtin("torch.cuda.mem_get_info"),
            "get_device_name" => Value::Builtin("torch.cuda.get_device_name"),
            _ => opaque(m),
        },
        // `torch.version.hip` is None except in a ROCm build of torch,
        // which is what a file compiled for an AMD target runs under;
        // `torch.version.cuda` is None there. The version strings
        // themselves belong to the torch build, not to the target: only
        // whether they are None is known.
        Value::Module("torch.version") => match name {
            "hip" | "cuda" => {
                let t = match target(ev, &format!("torch.version.{name}"), span) {
                    Ok(t) => t,
                    Err(d) => return Some(Err(d)),
                };
                if (name == "hip" && t.is_hip()) || (name == "cuda" && t.is_cuda()) {
                    Value::Opaque(Rc::from(format!("torch.version.{name} (a version string)")))
                } else {
                    Value::None
                }
            }
            _ => opaque("torch.version"),
        },
        Value::Module(m @ "dataclasses") => match name {
            "dataclass" => Value::Builtin("dataclasses.dataclass"),
            "field" => Value::Builtin("dataclasses.field"),
            _ => opaque(m),
        },
        Value::Module(m @ "tvm") => match name {
            "DataType" => Value::Builtin("tvm.DataType"),
            "tirx" | "tir" => Value::Module("tvm.tirx"),
            _ => opaque(m),
        },
        // TVM's expression constructors, as TileLang's own helpers write
        // them (`tirx.const(1, T.uint16)`, `tirx.Cast(T.int32, x)`): the
        // same as their `T.*` spellings.
        Value::Module(m @ ("tvm.tirx" | "tvm.tir")) => match name {
            "const" => Value::Builtin("tvm.tirx.const"),
            "Cast" => Value::Builtin("T.Cast"),
            "Select" => Value::Builtin("T.Select"),
            "reinterpret" => Value::Builtin("T.reinterpret"),
            "call_extern" => Value::Builtin("tvm.tirx.call_extern"),
            _ => opaque(m),
        },
        Value::Torch(t) => return Some(super::torch_tensor::get_attr(t, name, span)),
        Value::Int(_) | Value::Bool(_) if name == "bit_length" => {
            Value::Method(Rc::new(base.clone()), "int.bit_length")
        }
        _ => return None,
    }))
}

/// A set literal tested for membership (`x in {80, 90}`): its elements as
/// a tuple, which answers `in` as the set would. Elements must be plain
/// hashable values; sets used any other way stay T0100.
pub(crate) fn membership_set<'a>(
    ev: &mut Evaluator<'a>,
    set: &'a rustpython_ruff_python_ast::ExprSet,
    scope: &Rc<super::value::Scope<'a>>,
) -> EResult<Value<'a>> {
    let mut items = Vec::with_capacity(set.elts.len());
    for e in &set.elts {
        let v = ev.eval(e, scope)?;
        let hashable = matches!(
            v,
            Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::DType(_)
                | Value::Tuple(_)
        );
        if !hashable {
            return Err(err(
                codes::TYPE_ERROR,
                format!(
                    "a set element must be a compile-time hashable value, not {}",
                    v.a_type_name()
                ),
                super::eval::span_of(e),
            ));
        }
        items.push(v);
    }
    Ok(Value::tuple(items))
}

/// Whether [`call`] implements the built-in `name`.
pub(crate) fn handles(name: &str) -> bool {
    matches!(
        name,
        "tilelang.math.next_power_of_2"
            | "tilelang.math.cdiv"
            | "tilelang.carver.arch.driver.get_num_sms"
            | "tilelang.language.fp8.determine_fp8_type"
            | "torch.cuda.is_available"
            | "torch.cuda.get_device_capability"
            | "torch.cuda.current_device"
            | "torch.cuda.get_device_properties"
            | "torch.cuda.mem_get_info"
            | "torch.cuda.get_device_name"
            | "torch.device"
            | "tvm.DataType"
            | "tvm.tirx.const"
            | "tvm.tirx.call_extern"
            | "int.bit_length"
    ) || super::tl_extra::handles(name)
        || super::torch_tensor::handles(name)
}

fn target<'e>(ev: &'e Evaluator<'_>, what: &str, span: Span) -> EResult<&'e TargetFacts> {
    ev.target.as_ref().ok_or_else(|| {
        Box::new(
            Diagnostic::error(
                codes::DEVICE_QUERY,
                format!("`{what}` asks about the device, and no target was given"),
                span,
            )
            .with_label("a build-time device query")
            .with_note("tilec answers device queries from the compile target: pass `--target`"),
        )
    })
}

fn unknown_fact(what: &str, fact: &str, t: &TargetFacts, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::DEVICE_QUERY,
            format!("`{what}` needs {fact}, which the target `{}` does not record", t.name),
            span,
        )
        .with_label("a build-time device query")
        .with_note("tilec answers device queries from the compile target's description (docs/targets.md), never from the machine it runs on; write the value instead"),
    )
}

fn int_arg(v: &Value<'_>, name: &str, span: Span) -> EResult<i64> {
    v.as_int().ok_or_else(|| {
        if v.is_staged() {
            err(
                codes::NOT_CONSTANT,
                format!("`{name}` needs a compile-time integer, not a run-time value"),
                span,
            )
        } else {
            err(
                codes::TYPE_ERROR,
                format!("`{name}` needs an integer, not {}", v.a_type_name()),
                span,
            )
        }
    })
}

/// Python's `int.bit_length`: the bits of `|n|` without leading zeros.
fn bit_length(n: i64) -> u32 {
    64 - n.unsigned_abs().leading_zeros()
}

/// Calls one of the built-ins [`handles`] names.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    name: &'static str,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    let arg = |i: usize, k: &str| -> Option<Value<'a>> {
        args.get(i)
            .cloned()
            .or_else(|| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    };
    if super::tl_extra::handles(name) {
        return super::tl_extra::call(ev, name, args, kwargs, span);
    }
    if super::torch_tensor::handles(name) {
        return super::torch_tensor::call(ev, name, args, kwargs, span);
    }
    let short = name.rsplit('.').next().unwrap_or(name);
    match name {
        "tilelang.math.next_power_of_2" => {
            let (1, Some(x)) = (args.len() + kwargs.len(), arg(0, "x")) else {
                return Err(bad_args(short, span, "one integer"));
            };
            // `1 << (x - 1).bit_length()`.
            let x = int_arg(&x, short, span)?;
            let bits = bit_length(x.wrapping_sub(1));
            if x == i64::MIN || bits >= 63 {
                return Err(err(
                    codes::COMPILE_TIME_ARITHMETIC,
                    format!("`next_power_of_2({x})` does not fit in 64 bits"),
                    span,
                ));
            }
            Ok(Value::Int(1 << bits))
        }
        "tilelang.math.cdiv" => {
            let (2, Some(a), Some(b)) = (args.len() + kwargs.len(), arg(0, "a"), arg(1, "b"))
            else {
                return Err(bad_args(short, span, "two values"));
            };
            // `(a + b - 1) // b`, on compile-time ints or staged values alike.
            let s = ev.binop(PyBinOp::Add, &a, &b, span)?;
            let s = ev.binop(PyBinOp::Sub, &s, &Value::Int(1), span)?;
            ev.binop(PyBinOp::FloorDiv, &s, &b, span)
        }
        "int.bit_length" => {
            let [Value::Int(_) | Value::Bool(_)] = args.as_slice() else {
                return Err(bad_args("bit_length", span, "no arguments"));
            };
            let n = args[0].as_int().unwrap_or(0);
            Ok(Value::Int(i64::from(bit_length(n))))
        }
        "tilelang.carver.arch.driver.get_num_sms" => {
            if args.len() + kwargs.len() > 1 {
                return Err(bad_args(short, span, "at most a device id"));
            }
            let t = target(ev, short, span)?;
            let n = t
                .multiprocessors
                .ok_or_else(|| unknown_fact(short, "the number of multiprocessors", t, span))?;
            Ok(Value::Int(i64::from(n)))
        }
        "tilelang.language.fp8.determine_fp8_type" => {
            let format = match arg(0, "fp8_format") {
                None => "e4m3".to_string(),
                Some(Value::Str(s)) => s.to_string(),
                Some(other) => {
                    return Err(err(
                        codes::TYPE_ERROR,
                        format!(
                            "`{short}` takes \"e4m3\" or \"e5m2\", not {}",
                            other.a_type_name()
                        ),
                        span,
                    ));
                }
            };
            if format != "e4m3" && format != "e5m2" {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "unsupported FP8 format {format:?}: `{short}` takes \"e4m3\" or \"e5m2\""
                    ),
                    span,
                ));
            }
            let t = target(ev, short, span)?;
            if t.is_cuda() {
                return Ok(Value::DType(if format == "e4m3" {
                    DType::F8E4M3
                } else {
                    DType::F8E5M2
                }));
            }
            // On ROCm TileLang picks the OCP types on gfx950 and the FNUZ
            // ones elsewhere, which tilec has no dtypes for.
            if t.is_hip() && t.name.starts_with("gfx950") {
                return Ok(Value::DType(if format == "e4m3" {
                    DType::F8E4M3
                } else {
                    DType::F8E5M2
                }));
            }
            Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!(
                        "`{short}` picks `float8_{format}fnuz` on the target `{}`, a dtype tilec does not support",
                        t.name
                    ),
                    span,
                )
                .with_label("not supported")
                .with_note("tilec has the OCP FP8 types `float8_e4m3fn` and `float8_e5m2`"),
            ))
        }
        "torch.cuda.is_available" => {
            let t = target(ev, "torch.cuda.is_available", span)?;
            // torch's `cuda` device is the GPU on CUDA and on ROCm.
            Ok(Value::Bool(t.is_cuda() || t.is_hip()))
        }
        // The free and total device memory at the moment the program runs:
        // no property of the target, and a size chosen from it would make
        // the kernel depend on the machine.
        "torch.cuda.mem_get_info" => Err(Box::new(
            Diagnostic::error(
                codes::DEVICE_QUERY,
                "`torch.cuda.mem_get_info` (the device memory free when the program runs) has no compile-time value",
                span,
            )
            .with_label("a run-time state of the device")
            .with_note("tilec never answers from the machine it runs on: pass the size this chooses explicitly (`--kernel 'f(...)'` or `-D NAME=VALUE`)"),
        )),
        // The device is the compile target's one part; a description of
        // several parts (or none) does not say which.
        "torch.cuda.get_device_name" => {
            if args.len() + kwargs.len() > 1 {
                return Err(bad_args(short, span, "at most a device"));
            }
            let t = target(ev, "torch.cuda.get_device_name", span)?;
            let name = t.device_name.clone().ok_or_else(|| {
                unknown_fact("torch.cuda.get_device_name", "the name of one device", t, span)
            })?;
            Ok(Value::str(&name))
        }
        "torch.cuda.current_device" => {
            target(ev, "torch.cuda.current_device", span)?;
            Ok(Value::Int(0))
        }
        "torch.device" => {
            let [Value::Str(s)] = args.as_slice() else {
                return Err(bad_args(
                    "torch.device",
                    span,
                    "a device name such as \"cuda:0\"",
                ));
            };
            Ok(Value::Opaque(Rc::from(format!("torch.device({s:?})"))))
        }
        "torch.cuda.get_device_properties" => {
            // Every device is the compile target; what the target does not
            // record is an error when it is used, not a guess.
            let what = "torch.cuda.get_device_properties";
            let t = target(ev, what, span)?.clone();
            let poison =
                |fact: &str| Value::Poison(Some(Rc::new(*unknown_fact(what, fact, &t, span))));
            let (major, minor) = match t.capability {
                Some((a, b)) => (Value::Int(i64::from(a)), Value::Int(i64::from(b))),
                None => (
                    poison("a compute capability"),
                    poison("a compute capability"),
                ),
            };
            let sms = t.multiprocessors.map_or_else(
                || poison("the number of multiprocessors"),
                |n| Value::Int(i64::from(n)),
            );
            let mut attrs = vec![
                ("major", major),
                ("minor", minor),
                ("multi_processor_count", sms),
            ];
            if t.is_hip() {
                attrs.push(("gcnArchName", Value::str(&t.name)));
            }
            if let Some(name) = &t.device_name {
                attrs.push(("name", Value::str(name)));
            }
            Ok(super::pyclass::record(
                "torch.cuda._CudaDeviceProperties",
                attrs,
            ))
        }
        "torch.cuda.get_device_capability" => {
            let t = target(ev, "torch.cuda.get_device_capability", span)?;
            let (major, minor) = t.capability.ok_or_else(|| {
                unknown_fact(
                    "torch.cuda.get_device_capability",
                    "a compute capability",
                    t,
                    span,
                )
            })?;
            Ok(Value::tuple(vec![
                Value::Int(i64::from(major)),
                Value::Int(i64::from(minor)),
            ]))
        }
        // `tvm.tirx.const(value, dtype)`: `value` as a constant of
        // `dtype` (TVM's default: int32 for ints, float32 for floats).
        "tvm.tirx.const" => {
            let value = arg(0, "value")
                .ok_or_else(|| bad_args("tvm.tirx.const", span, "a value and a dtype"))?;
            let dtype = match arg(1, "dtype") {
                Some(Value::None) | None => match value {
                    Value::Bool(_) => Value::DType(DType::Bool),
                    Value::Float(_) => Value::DType(DType::F32),
                    _ => Value::DType(DType::I32),
                },
                Some(d) => d,
            };
            ev.call_builtin("T.Cast", vec![dtype, value], Vec::new(), span)
        }
        // `call_extern(dtype, name, *args)` calls a device function of
        // TileLang's generated C++ by name. tilec emits no C++; the one it
        // knows is `__nanosleep`, a delay with no effect on any value,
        // which it leaves out.
        "tvm.tirx.call_extern" => {
            let extern_name = match arg(1, "func_name") {
                Some(Value::Str(n)) => n.to_string(),
                _ => {
                    return Err(bad_args(
                        "call_extern",
                        span,
                        "a return dtype, the function's name and its arguments",
                    ));
                }
            };
            if extern_name == "__nanosleep" {
                Ok(Value::None)
            } else {
                Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        format!(
                            "`call_extern` of `{extern_name}` is not supported: tilec emits no C++ \
                             to call it from"
                        ),
                        span,
                    )
                    .with_label("an external device function")
                    .with_note(
                        "the only external function tilec accepts is `__nanosleep` (a delay, left \
                         out); write the computation with `T.*` operations",
                    ),
                ))
            }
        }
        "tvm.DataType" => {
            let [v] = args.as_slice() else {
                return Err(bad_args("tvm.DataType", span, "one dtype name"));
            };
            match v {
                Value::DType(d) => Ok(Value::DType(*d)),
                Value::Str(s) => DType::from_tilelang_name(s)
                    .map(Value::DType)
                    .ok_or_else(|| {
                        err(
                            codes::BAD_DTYPE,
                            format!("`tvm.DataType({s:?})`: not a dtype tilec knows"),
                            span,
                        )
                    }),
                other => Err(bad_args(
                    "tvm.DataType",
                    span,
                    &format!("a dtype name, not {}", other.a_type_name()),
                )),
            }
        }
        _ => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`{name}` is not supported by tilec"),
            span,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_vendor_and_capability() {
        let f = TargetFacts::from_name("sm_90a");
        assert_eq!((f.vendor.as_str(), f.capability), ("nvidia", Some((9, 0))));
        assert_eq!(TargetFacts::from_name("sm_86").capability, Some((8, 6)));
        assert_eq!(TargetFacts::from_name("sm_100a").capability, Some((10, 0)));
        let g = TargetFacts::from_name("gfx942");
        assert_eq!((g.vendor.as_str(), g.capability), ("amd", Some((9, 4))));
        assert_eq!(TargetFacts::from_name("gfx90a").capability, Some((9, 0)));
        assert_eq!(TargetFacts::from_name("apple").capability, None);
    }

    #[test]
    fn bit_length_is_pythons() {
        assert_eq!(bit_length(0), 0);
        assert_eq!(bit_length(1), 1);
        assert_eq!(bit_length(-1), 1);
        assert_eq!(bit_length(255), 8);
        assert_eq!(bit_length(256), 9);
        assert_eq!(bit_length(i64::MIN), 64);
    }
}
