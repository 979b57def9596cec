//! Python classes at build time: kernel files use classes as configs and
//! namespaces (plain classes with class attributes, `__init__` setting
//! instance attributes, methods, `@staticmethod`/`@classmethod`/
//! `@property`, `@dataclass` configs with fields and defaults).
//!
//! A class body runs once, as Python runs it; its names become the class's
//! members. Methods close over the scope around the class, not over the
//! class body (as in Python). Lookup on an instance: its own attributes,
//! then the members of its class and bases in order (single inheritance
//! chains and several bases, searched depth-first left to right). A base
//! tilec does not model (`torch.nn.Module`) is allowed: its `__init__`
//! does nothing at build time, and other names it would provide are
//! opaque values.

use super::codes;
use super::eval::{Evaluator, err, span_of};
use super::value::{Closure, EResult, FunctionBody, Scope, Value};
use crate::front::Diagnostic;
use crate::ir::Span;
use rustpython_ruff_python_ast as ast;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A member of a class body.
#[derive(Debug, Clone)]
pub(crate) enum Member<'a> {
    /// A value (functions are methods when looked up on an instance).
    Plain(Value<'a>),
    /// `@staticmethod`.
    Static(Value<'a>),
    /// `@classmethod`: bound to the class.
    ClassMethod(Rc<Closure<'a>>),
    /// `@property`: its getter runs on lookup.
    Property(Rc<Closure<'a>>),
}

/// A class defined by the file (or a synthetic one for values tilec
/// builds, such as `torch.cuda.get_device_properties()`).
#[derive(Debug)]
pub(crate) struct PyClass<'a> {
    pub name: String,
    pub members: RefCell<BTreeMap<String, Member<'a>>>,
    pub bases: Vec<Rc<PyClass<'a>>>,
    /// A base tilec does not model, by name (`torch.nn.Module`).
    pub opaque_base: Option<String>,
    /// `@dataclass`: the fields in order, with their defaults.
    pub fields: Option<Vec<(String, Option<Value<'a>>)>>,
    pub doc: Option<String>,
}

/// An instance.
#[derive(Debug)]
pub(crate) struct PyObject<'a> {
    pub class: Rc<PyClass<'a>>,
    pub attrs: RefCell<BTreeMap<String, Value<'a>>>,
}

impl<'a> PyClass<'a> {
    /// Looks `name` up in this class and its bases (depth-first, left to
    /// right).
    fn find(&self, name: &str) -> Option<Member<'a>> {
        if let Some(m) = self.members.borrow().get(name) {
            return Some(m.clone());
        }
        self.bases.iter().find_map(|b| b.find(name))
    }

    /// A base tilec does not model, here or in a base.
    fn opaque_base(&self) -> Option<String> {
        self.opaque_base
            .clone()
            .or_else(|| self.bases.iter().find_map(|b| b.opaque_base()))
    }

    fn all_fields(&self) -> Vec<(String, Option<Value<'a>>)> {
        let mut out: Vec<(String, Option<Value<'a>>)> = Vec::new();
        for b in self.bases.iter().rev() {
            for f in b.all_fields() {
                out.retain(|(n, _)| *n != f.0);
                out.push(f);
            }
        }
        for f in self.fields.iter().flatten() {
            if let Some(slot) = out.iter_mut().find(|(n, _)| *n == f.0) {
                slot.1.clone_from(&f.1);
            } else {
                out.push(f.clone());
            }
        }
        out
    }

    fn is_dataclass(&self) -> bool {
        self.fields.is_some() || self.bases.iter().any(|b| b.is_dataclass())
    }
}

/// An object of a synthetic class with these attributes (no methods).
pub(crate) fn record<'a>(class_name: &str, attrs: Vec<(&str, Value<'a>)>) -> Value<'a> {
    let class = Rc::new(PyClass {
        name: class_name.to_string(),
        members: RefCell::default(),
        bases: Vec::new(),
        opaque_base: None,
        fields: None,
        doc: None,
    });
    Value::Object(Rc::new(PyObject {
        class,
        attrs: RefCell::new(attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
    }))
}

/// The docstring of a body: its first statement when that is a string.
pub(crate) fn docstring(body: &[ast::Stmt]) -> Option<String> {
    match body.first() {
        Some(ast::Stmt::Expr(e)) => match &*e.value {
            ast::Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
            _ => None,
        },
        _ => None,
    }
}

fn unsupported(what: &str, span: Span, note: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::UNSUPPORTED_PYTHON,
            format!("{what} is not supported by the tilec front end"),
            span,
        )
        .with_label("not supported")
        .with_note(note.to_string()),
    )
}

/// Which of the decorators tilec reads a function in a class body has.
enum MethodKind {
    Plain,
    Static,
    Class,
    Property,
}

fn method_kind(def: &ast::StmtFunctionDef) -> Option<MethodKind> {
    match def.decorator_list.as_slice() {
        [] => Some(MethodKind::Plain),
        [d] => match &d.expression {
            ast::Expr::Name(n) => match n.id.as_str() {
                "staticmethod" => Some(MethodKind::Static),
                "classmethod" => Some(MethodKind::Class),
                "property" => Some(MethodKind::Property),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// `class Name(bases): body`.
pub(crate) fn define_class<'a>(
    ev: &mut Evaluator<'a>,
    def: &'a ast::StmtClassDef,
    scope: &Rc<Scope<'a>>,
) -> EResult<Value<'a>> {
    let span = span_of(def);
    let name = def.name.id.to_string();
    if def.type_params.is_some() {
        return Err(unsupported(
            "a generic class",
            span,
            "drop the type parameters",
        ));
    }
    // Decorators: only `@dataclass` / `@dataclass(...)` (its options do
    // not change the values a build reads).
    let mut dataclass = false;
    for dec in &def.decorator_list {
        match ev.eval(&dec.expression, scope)? {
            Value::Builtin("dataclasses.dataclass") => dataclass = true,
            _ => {
                return Err(unsupported(
                    "this class decorator",
                    span_of(dec),
                    "tilec reads `@dataclass` on classes",
                ));
            }
        }
    }
    let mut bases = Vec::new();
    let mut opaque_base = None;
    if let Some(args) = &def.arguments {
        if let Some(k) = args.keywords.first() {
            return Err(unsupported(
                "a class keyword (`metaclass=`, ...)",
                span_of(k),
                "write the class without keywords",
            ));
        }
        for b in args.args.iter() {
            if matches!(b, ast::Expr::Name(n) if n.id.as_str() == "object") {
                continue;
            }
            match ev.eval(b, scope)? {
                Value::Class(c) => bases.push(c),
                Value::Opaque(what) => opaque_base = Some(what.to_string()),
                Value::Poison(_) => return Err(super::stage::cascade()),
                other => {
                    return Err(err(
                        codes::TYPE_ERROR,
                        format!("a class cannot derive from {}", other.a_type_name()),
                        span_of(b),
                    ));
                }
            }
        }
    }
    let body_scope = Scope::child(scope);
    let mut members: BTreeMap<String, Member<'a>> = BTreeMap::new();
    let mut fields: Vec<(String, Option<Value<'a>>)> = Vec::new();
    for stmt in &def.body {
        match stmt {
            ast::Stmt::FunctionDef(f) if !f.decorator_list.is_empty() => {
                let Some(kind) = method_kind(f) else {
                    // Other decorators apply as anywhere else.
                    ev.exec_block(std::slice::from_ref(stmt), &body_scope)?;
                    continue;
                };
                if f.is_async {
                    return Err(unsupported(
                        "`async def`",
                        span_of(f),
                        "write a plain `def`",
                    ));
                }
                let defaults = ev.eval_defaults(&f.parameters, &body_scope)?;
                let closure = Rc::new(Closure {
                    name: f.name.id.to_string(),
                    name_span: span_of(&f.name),
                    params: &f.parameters,
                    body: FunctionBody::Def(f),
                    defaults,
                    scope: scope.clone(),
                    span: span_of(f),
                });
                let member = match kind {
                    MethodKind::Static => Member::Static(Value::Function(closure)),
                    MethodKind::Class => Member::ClassMethod(closure),
                    MethodKind::Property => Member::Property(closure),
                    MethodKind::Plain => Member::Plain(Value::Function(closure)),
                };
                body_scope.vars.borrow_mut().remove(f.name.id.as_str());
                members.insert(f.name.id.to_string(), member);
            }
            ast::Stmt::AnnAssign(a) if dataclass => {
                let ast::Expr::Name(n) = &*a.target else {
                    return Err(err(
                        codes::BAD_ASSIGNMENT,
                        "a dataclass field must be a plain name",
                        span_of(&*a.target),
                    ));
                };
                let default = match &a.value {
                    Some(v) => {
                        let v = ev.eval(v, &body_scope)?;
                        if matches!(v, Value::Builtin("dataclasses.field")) {
                            return Err(unsupported(
                                "`dataclasses.field(...)`",
                                span_of(stmt),
                                "write the default value itself",
                            ));
                        }
                        body_scope.set(n.id.as_str(), v.clone());
                        Some(v)
                    }
                    None => None,
                };
                fields.retain(|(f, _)| f != n.id.as_str());
                fields.push((n.id.to_string(), default));
            }
            _ => {
                if let super::eval::Flow::Return(_) =
                    ev.exec_block(std::slice::from_ref(stmt), &body_scope)?
                {
                    return Err(err(
                        codes::UNSUPPORTED_PYTHON,
                        "`return` in a class body",
                        span_of(stmt),
                    ));
                }
            }
        }
    }
    // A dataclass field without a default after one with a default is a
    // TypeError in Python.
    if dataclass
        && let Some(i) = fields.iter().position(|(_, d)| d.is_some())
        && let Some((f, _)) = fields[i..].iter().find(|(_, d)| d.is_none())
    {
        return Err(err(
            codes::BAD_ARGUMENTS,
            format!("dataclass field `{f}` without a default follows a field with one"),
            span,
        ));
    }
    for (k, v) in body_scope.vars.borrow().iter() {
        if members.contains_key(k) {
            continue;
        }
        // Methods close over the scope around the class, not its body.
        let v = match v {
            Value::Function(c) => Value::Function(Rc::new(Closure {
                name: c.name.clone(),
                name_span: c.name_span,
                params: c.params,
                body: c.body,
                defaults: c.defaults.clone(),
                scope: scope.clone(),
                span: c.span,
            })),
            other => other.clone(),
        };
        members.insert(k.clone(), Member::Plain(v));
    }
    Ok(Value::Class(Rc::new(PyClass {
        name,
        members: RefCell::new(members),
        bases,
        opaque_base,
        fields: dataclass.then_some(fields),
        doc: docstring(&def.body),
    })))
}

fn no_attribute(what: &str, name: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::NO_ATTRIBUTE,
            format!("{what} has no attribute `{name}`"),
            span,
        )
        .with_label("unknown attribute"),
    )
}

/// Attribute lookup on classes, instances and `super(...)`; `None` for
/// other values.
pub(crate) fn get_attr<'a>(
    ev: &mut Evaluator<'a>,
    base: &Value<'a>,
    name: &str,
    span: Span,
) -> Option<EResult<Value<'a>>> {
    Some(match base {
        Value::Object(o) => {
            if let Some(v) = o.attrs.borrow().get(name) {
                return Some(Ok(v.clone()));
            }
            match name {
                "__class__" => return Some(Ok(Value::Class(o.class.clone()))),
                "__dict__" => {
                    return Some(Ok(Value::Dict(Rc::new(RefCell::new(
                        o.attrs
                            .borrow()
                            .iter()
                            .map(|(k, v)| (Value::str(k), v.clone()))
                            .collect(),
                    )))));
                }
                _ => {}
            }
            match o.class.find(name) {
                Some(Member::Plain(Value::Function(c))) => {
                    Ok(Value::BoundMethod(Rc::new(base.clone()), c))
                }
                Some(Member::Plain(v) | Member::Static(v)) => Ok(v),
                Some(Member::ClassMethod(c)) => Ok(Value::BoundMethod(
                    Rc::new(Value::Class(o.class.clone())),
                    c,
                )),
                Some(Member::Property(c)) => {
                    ev.call(Value::Function(c), vec![base.clone()], vec![], span)
                }
                None => class_fallback(&o.class, name, span, true),
            }
        }
        Value::Class(c) => match name {
            "__name__" => Ok(Value::str(&c.name)),
            "__doc__" => Ok(c.doc.as_deref().map_or(Value::None, Value::str)),
            _ => match c.find(name) {
                Some(Member::Plain(v) | Member::Static(v)) => Ok(v),
                Some(Member::ClassMethod(m)) => Ok(Value::BoundMethod(Rc::new(base.clone()), m)),
                Some(Member::Property(_)) => Ok(Value::Opaque(Rc::from(format!(
                    "the property `{}.{name}`",
                    c.name
                )))),
                None => class_fallback(c, name, span, false),
            },
        },
        Value::Super(class, obj) => {
            // The members of the bases, bound to the instance.
            let found = class.bases.iter().find_map(|b| b.find(name));
            match found {
                Some(Member::Plain(Value::Function(c))) => {
                    Ok(Value::BoundMethod(Rc::new(Value::Object(obj.clone())), c))
                }
                Some(Member::Plain(v) | Member::Static(v)) => Ok(v),
                Some(Member::ClassMethod(c)) => Ok(Value::BoundMethod(
                    Rc::new(Value::Class(obj.class.clone())),
                    c,
                )),
                Some(Member::Property(c)) => ev.call(
                    Value::Function(c),
                    vec![Value::Object(obj.clone())],
                    vec![],
                    span,
                ),
                // `object.__init__` and an unmodelled base's `__init__`
                // set up nothing the build reads.
                None if name == "__init__" => Ok(Value::Builtin("pyclass.noop")),
                None => match class
                    .bases
                    .iter()
                    .find_map(|b| b.opaque_base())
                    .or_else(|| class.opaque_base.clone())
                {
                    Some(b) => Ok(Value::Opaque(Rc::from(format!("{b}.{name}")))),
                    None => Err(no_attribute(
                        &format!("`super({})`", class.name),
                        name,
                        span,
                    )),
                },
            }
        }
        _ => return None,
    })
}

fn class_fallback<'a>(
    class: &PyClass<'a>,
    name: &str,
    span: Span,
    instance: bool,
) -> EResult<Value<'a>> {
    match class.opaque_base() {
        Some(b) => Ok(Value::Opaque(Rc::from(format!("{b}.{name}")))),
        None => Err(no_attribute(
            &if instance {
                format!("a `{}` object", class.name)
            } else {
                format!("class `{}`", class.name)
            },
            name,
            span,
        )),
    }
}

/// `obj.name = value`; `None` when `base` is not a class or instance.
pub(crate) fn set_attr<'a>(base: &Value<'a>, name: &str, value: Value<'a>) -> Option<()> {
    match base {
        Value::Object(o) => {
            o.attrs.borrow_mut().insert(name.to_string(), value);
            Some(())
        }
        Value::Class(c) => {
            c.members
                .borrow_mut()
                .insert(name.to_string(), Member::Plain(value));
            Some(())
        }
        _ => None,
    }
}

/// Calls a class (instantiation), a bound method or `super`.
pub(crate) fn call<'a>(
    ev: &mut Evaluator<'a>,
    callee: Value<'a>,
    mut args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> EResult<Value<'a>> {
    match callee {
        Value::BoundMethod(recv, c) => {
            args.insert(0, (*recv).clone());
            ev.call(Value::Function(c), args, kwargs, span)
        }
        Value::Class(class) => {
            let obj = Rc::new(PyObject {
                class: class.clone(),
                attrs: RefCell::default(),
            });
            let this = Value::Object(obj.clone());
            let init = class.find("__init__");
            if class.is_dataclass() && init.is_none() {
                let fields = class.all_fields();
                if args.len() > fields.len() {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        format!(
                            "`{}` takes {} field values but {} were given",
                            class.name,
                            fields.len(),
                            args.len()
                        ),
                        span,
                    ));
                }
                let mut values: Vec<Option<Value<'a>>> = fields.iter().map(|_| None).collect();
                for (slot, v) in values.iter_mut().zip(args) {
                    *slot = Some(v);
                }
                for (k, v) in kwargs {
                    let Some(i) = fields.iter().position(|(n, _)| *n == k) else {
                        return Err(err(
                            codes::BAD_ARGUMENTS,
                            format!("`{}` has no field `{k}`", class.name),
                            span,
                        ));
                    };
                    if values[i].is_some() {
                        return Err(err(
                            codes::BAD_ARGUMENTS,
                            format!("`{}` got two values for field `{k}`", class.name),
                            span,
                        ));
                    }
                    values[i] = Some(v);
                }
                for ((n, default), v) in fields.iter().zip(values) {
                    let v = v.or_else(|| default.clone()).ok_or_else(|| {
                        err(
                            codes::BAD_ARGUMENTS,
                            format!("`{}` is missing a value for field `{n}`", class.name),
                            span,
                        )
                    })?;
                    obj.attrs.borrow_mut().insert(n.clone(), v);
                }
                if let Some(post) = get_attr(ev, &this, "__post_init__", span)
                    .and_then(Result::ok)
                    .filter(|v| matches!(v, Value::BoundMethod(..)))
                {
                    ev.call(post, vec![], vec![], span)?;
                }
                return Ok(this);
            }
            match init {
                Some(Member::Plain(Value::Function(c))) => {
                    args.insert(0, this.clone());
                    let r = ev.call(Value::Function(c), args, kwargs, span)?;
                    if !matches!(r, Value::None) {
                        return Err(err(
                            codes::TYPE_ERROR,
                            format!(
                                "`{}.__init__` returned {}, not None",
                                class.name,
                                r.a_type_name()
                            ),
                            span,
                        ));
                    }
                }
                Some(_) => {
                    return Err(unsupported(
                        "an `__init__` that is not a plain method",
                        span,
                        "define `__init__` with `def`",
                    ));
                }
                None if class.opaque_base().is_some() => {
                    return Err(unsupported(
                        &format!(
                            "constructing `{}` through the `__init__` of `{}`",
                            class.name,
                            class.opaque_base().unwrap_or_default()
                        ),
                        span,
                        "define `__init__` in the class",
                    ));
                }
                None if !args.is_empty() || !kwargs.is_empty() => {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        format!("`{}()` takes no arguments", class.name),
                        span,
                    ));
                }
                None => {}
            }
            Ok(this)
        }
        Value::Builtin("pyclass.noop") => Ok(Value::None),
        Value::Builtin("super") => match args.as_slice() {
            [Value::Class(c), Value::Object(o)] => Ok(Value::Super(c.clone(), o.clone())),
            [] => Err(unsupported(
                "`super()` without arguments",
                span,
                "write `super(ClassName, self)`",
            )),
            _ => Err(err(
                codes::BAD_ARGUMENTS,
                "`super` takes a class and an instance of it",
                span,
            )),
        },
        Value::Builtin("dataclasses.dataclass") => match args.as_slice() {
            // `@dataclass(frozen=True)`: the decorator itself.
            [] => Ok(Value::Builtin("dataclasses.dataclass")),
            _ => Err(unsupported(
                "calling `dataclass` on a value",
                span,
                "write `@dataclass` on the class",
            )),
        },
        Value::Builtin("dataclasses.field") => Ok(Value::Builtin("dataclasses.field")),
        other => Err(err(
            codes::NOT_CALLABLE,
            format!("{} is not callable", other.a_type_name()),
            span,
        )),
    }
}

/// Whether [`call`] handles this callee.
pub(crate) fn handles(callee: &Value<'_>) -> bool {
    matches!(
        callee,
        Value::Class(_)
            | Value::BoundMethod(..)
            | Value::Builtin(
                "pyclass.noop" | "super" | "dataclasses.dataclass" | "dataclasses.field"
            )
    )
}
