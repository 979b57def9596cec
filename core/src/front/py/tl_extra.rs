//! Build-time names of TileLang kernel files that do not change what a
//! kernel computes: the event markers of TileLang's IKET profiling tool
//! (`tilelang.tools.cuda.iket`), which tilec accepts and does not record,
//! and `os.environ.get`, which returns its default (tilec reads no
//! environment, so a build does not depend on the shell it runs in).
//! Also `argparse.Namespace(k=v, ...)`, an object whose attributes are its
//! keywords, and `uuid.uuid4()`, a random id that may name host-side things
//! (a cache key, a symbol) but is an error if it reaches a kernel.

use super::builtins::bad_args;
use super::codes;
use super::eval::{Evaluator, err};
use super::value::{EResult, Value};
use crate::front::Diagnostic;
use crate::ir::Span;
use std::rc::Rc;

/// The IKET module's import name.
const IKET: &str = "tilelang.tools.cuda.iket";

/// What `iket.range(...)` and `iket.session(...)` return: a context
/// manager without effect on the kernel.
const NULL_CONTEXT: &str = "an IKET scope (accepted, not recorded)";

/// TileLang's limit on an IKET event name, in UTF-8 bytes
/// (`MAX_EVENT_NAME_BYTES`).
const MAX_EVENT_NAME_BYTES: usize = 32;

/// Modules this file models, by import name.
pub(crate) fn module<'a>(name: &str) -> Option<Value<'a>> {
    match name {
        "tilelang.tools.cuda.iket" => Some(Value::Module(IKET)),
        "os" => Some(Value::Module("os")),
        "argparse" => Some(Value::Module("argparse")),
        "uuid" => Some(Value::Module("uuid")),
        _ => None,
    }
}

/// Whether `v` is a context manager a `with` may open without effect.
pub(crate) fn is_null_context(v: &Value<'_>) -> bool {
    matches!(v, Value::Opaque(s) if &**s == NULL_CONTEXT)
}

/// Attributes of the modules this file models; `None` leaves the lookup to
/// the caller.
pub(crate) fn get_attr<'a>(base: &Value<'a>, name: &str) -> Option<Value<'a>> {
    Some(match base {
        // `from tilelang.tools.cuda import iket`.
        Value::OpaqueModule(m) | Value::Opaque(m)
            if &**m == "tilelang.tools.cuda" && name == "iket" =>
        {
            Value::Module(IKET)
        }
        Value::Module(IKET) => match name {
            "mark" => Value::Builtin("tilelang.tools.cuda.iket.mark"),
            "range_push" | "range_start" => Value::Builtin("tilelang.tools.cuda.iket.range_push"),
            "range_pop" | "range_end" => Value::Builtin("tilelang.tools.cuda.iket.range_pop"),
            "range" => Value::Builtin("tilelang.tools.cuda.iket.range"),
            "payload" => Value::Builtin("tilelang.tools.cuda.iket.payload"),
            "session" => Value::Builtin("tilelang.tools.cuda.iket.session"),
            other => Value::Opaque(Rc::from(format!("{IKET}.{other}"))),
        },
        Value::Module("os") => match name {
            "environ" => Value::Module("os.environ"),
            other => Value::Opaque(Rc::from(format!("os.{other}"))),
        },
        Value::Module("os.environ") => match name {
            "get" => Value::Builtin("os.environ.get"),
            other => Value::Opaque(Rc::from(format!("os.environ.{other}"))),
        },
        Value::Module("argparse") => match name {
            "Namespace" => Value::Builtin("argparse.Namespace"),
            other => Value::Opaque(Rc::from(format!("argparse.{other}"))),
        },
        Value::Module("uuid") => match name {
            "uuid4" => Value::Builtin("uuid.uuid4"),
            other => Value::Opaque(Rc::from(format!("uuid.{other}"))),
        },
        _ => return None,
    })
}

/// Whether [`call`] implements the built-in `name`.
pub(crate) fn handles(name: &str) -> bool {
    matches!(name, "os.environ.get" | "argparse.Namespace" | "uuid.uuid4")
        || name.starts_with("tilelang.tools.cuda.iket.")
}

/// What `uuid.uuid4()` evaluates to: random, so no build may depend on it.
const RANDOM_ID: &str = "uuid.uuid4() (a random id)";

/// Whether `v` is (a part of) a `uuid.uuid4()` value: its attributes and
/// slices (`uuid.uuid4().hex[:8]`) stay opaque.
pub(crate) fn is_random_id(v: &Value<'_>) -> bool {
    matches!(v, Value::Opaque(s) if s.starts_with(RANDOM_ID))
}

/// An IKET event name, checked as TileLang checks it.
fn event_name(v: Option<&Value<'_>>, what: &str, span: Span) -> EResult<()> {
    match v {
        Some(Value::Str(s)) if !s.is_empty() && s.len() <= MAX_EVENT_NAME_BYTES => Ok(()),
        Some(Value::Str(s)) if !s.is_empty() => Err(err(
            codes::BAD_TILELANG_ARGUMENT,
            format!("IKET event name must be at most {MAX_EVENT_NAME_BYTES} UTF-8 bytes: {s:?}"),
            span,
        )),
        _ => Err(bad_args(what, span, "a non-empty event name string")),
    }
}

/// The one warning IKET events get: they are accepted, not recorded.
fn not_recorded(ev: &mut Evaluator<'_>, what: &str, span: Span) {
    ev.diags.push(
        Diagnostic::warning(
            codes::IGNORED,
            format!("`iket.{what}` is accepted; tilec records no IKET events"),
            span,
        )
        .with_label("profiling event not recorded")
        .with_note("IKET events only trace a kernel's progress; what the kernel computes is the same without them"),
    );
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
    let known = |allowed: &[&str], most: usize| -> EResult<()> {
        if args.len() > most {
            return Err(err(
                codes::BAD_ARGUMENTS,
                format!("`{name}` takes at most {most} positional arguments"),
                span,
            ));
        }
        match kwargs.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            Some((k, _)) => Err(err(
                codes::BAD_ARGUMENTS,
                format!("`{name}` has no parameter `{k}`"),
                span,
            )),
            None => Ok(()),
        }
    };
    let short = name.rsplit('.').next().unwrap_or(name);
    match name {
        "argparse.Namespace" => {
            if !args.is_empty() {
                return Err(bad_args(name, span, "keyword arguments only"));
            }
            let class = Rc::new(super::pyclass::PyClass {
                name: "Namespace".into(),
                members: Default::default(),
                bases: Vec::new(),
                opaque_base: None,
                fields: None,
                doc: None,
            });
            Ok(Value::Object(Rc::new(super::pyclass::PyObject {
                class,
                attrs: std::cell::RefCell::new(kwargs.into_iter().collect()),
            })))
        }
        "uuid.uuid4" => {
            known(&[], 0)?;
            Ok(Value::Opaque(Rc::from(RANDOM_ID)))
        }
        "os.environ.get" => {
            known(&["key", "default"], 2)?;
            let Some(Value::Str(_)) = arg(0, "key") else {
                return Err(bad_args("os.environ.get", span, "a variable name string"));
            };
            // No environment is read: every variable is unset.
            Ok(arg(1, "default").unwrap_or(Value::None))
        }
        "tilelang.tools.cuda.iket.mark"
        | "tilelang.tools.cuda.iket.range_push"
        | "tilelang.tools.cuda.iket.range" => {
            known(&["name", "payload"], 2)?;
            event_name(arg(0, "name").as_ref(), short, span)?;
            not_recorded(ev, short, span);
            Ok(if short == "range" {
                Value::Opaque(Rc::from(NULL_CONTEXT))
            } else {
                Value::None
            })
        }
        "tilelang.tools.cuda.iket.range_pop" => {
            known(&["name"], 1)?;
            if let Some(n) = arg(0, "name").filter(|v| !matches!(v, Value::None)) {
                event_name(Some(&n), short, span)?;
            }
            not_recorded(ev, short, span);
            Ok(Value::None)
        }
        "tilelang.tools.cuda.iket.payload" => {
            known(&["expr", "dtype"], 2)?;
            if arg(0, "expr").is_none() {
                return Err(bad_args(short, span, "a value"));
            }
            Ok(Value::None)
        }
        "tilelang.tools.cuda.iket.session" => Ok(Value::Opaque(Rc::from(NULL_CONTEXT))),
        _ => Err(err(
            codes::UNSUPPORTED_TILELANG,
            format!("`{name}` is not supported by tilec"),
            span,
        )),
    }
}
