//! The partial evaluator: runs compile-time Python and stages kernel code.
//!
//! # How it works
//! Module code runs as Python would, with a small standard library (`range`,
//! `len`, `min`, `math`, `itertools.product`, ...). Applying `@T.prim_func`
//! to a function *stages* it: its parameters become IR buffers and its body
//! is evaluated in a staged frame, where TileLang constructs (`T.Kernel`,
//! `T.copy`, loops over `T.Pipelined`, ...) append IR statements to the
//! [`Stager`]. Inside a staged frame, plain Python values are still computed
//! at compile time: `if is_causal:` on a Python bool picks a branch, while an
//! `if` on an IR condition becomes an IR `if`. Helper functions called from
//! kernel code run as ordinary Python and may return IR expressions;
//! `@T.macro` functions are inlined as staged code.
//!
//! # Errors
//! Errors are [`Diagnostic`]s. In staged code each failing statement is
//! reported and evaluation continues with the next statement (names it would
//! have bound are poisoned so that follow-on errors stay quiet), so one run
//! reports every independent error. At module level a failing statement
//! poisons the names it binds; the error surfaces only if such a name is
//! used, which is how test harness code that needs `torch` is skipped.

use super::codes;
use super::stage::{self, EagerState, KernelCx, Stager};
use super::value::{
    AutotuneValue, Closure, EResult, FunctionBody, IndexItem, JitValue, KernelValue, LoopSpecKind,
    PyBinOp, Scope, Value, py_binop, py_cmp, py_eq,
};
use crate::front::Diagnostic;
use crate::ir::{self, BinaryOp, DType, Handle, Span, Stmt, UnaryOp, VarKind};
use rustpython_ruff_python_ast as ast;
use rustpython_ruff_text_size::Ranged;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Evaluated positional and keyword arguments of a call.
pub(crate) type CallArgs<'a> = (Vec<Value<'a>>, Vec<(String, Value<'a>)>);

/// Control flow out of a statement.
pub(crate) enum Flow<'a> {
    Normal,
    Return(Value<'a>),
    Break,
    Continue,
}

/// The limit that turns runaway compile-time recursion into a diagnostic
/// (steps and bytes are `budget.rs`'s).
const MAX_DEPTH: u32 = 200;

pub(crate) fn span_of(node: &impl Ranged) -> Span {
    let r = node.range();
    Span::new(r.start().to_u32(), r.end().to_u32())
}

pub(crate) fn err(code: &'static str, msg: impl Into<String>, span: Span) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(code, msg, span))
}

pub(crate) struct Evaluator<'a> {
    pub diags: Vec<Diagnostic>,
    pub stagers: Vec<Stager>,
    pub globals: Rc<Scope<'a>>,
    /// `-D NAME=VALUE` bindings.
    pub defines: BTreeMap<String, Value<'a>>,
    /// The `-D` names something consumed.
    pub used_defines: std::collections::BTreeSet<String>,
    /// The target build-time device queries are answered from.
    pub target: Option<super::pylib::TargetFacts>,
    /// Whether each active frame is staged (prim_func body or macro) or
    /// plain Python (helper functions).
    frames: Vec<bool>,
    depth: u32,
    /// The kernel file's helper modules (`user_modules.rs`).
    pub user_modules: Option<Rc<super::user_modules::UserModules<'a>>>,
}

impl<'a> Evaluator<'a> {
    pub fn new(defines: BTreeMap<String, Value<'a>>) -> Self {
        let globals = Rc::new(Scope::default());
        globals.set("__name__", Value::str("__tilec__"));
        Evaluator {
            diags: Vec::new(),
            stagers: Vec::new(),
            globals,
            defines,
            used_defines: std::collections::BTreeSet::new(),
            target: None,
            frames: vec![false],
            depth: 0,
            user_modules: None,
        }
    }

    pub fn report(&mut self, d: Box<Diagnostic>) {
        if d.code != stage::CASCADE && !self.diags.contains(&d) {
            self.diags.push(*d);
        }
    }

    fn staged_frame(&self) -> bool {
        self.frames.last().copied().unwrap_or(false) && !self.stagers.is_empty()
    }

    /// Whether the running frame is staged code (a prim_func body or macro).
    pub(crate) fn in_staged_frame(&self) -> bool {
        self.staged_frame()
    }

    /// The stager of the kernel being built; an error outside one.
    pub fn stager(&mut self, what: &str, span: Span) -> EResult<&mut Stager> {
        match self.stagers.last_mut() {
            Some(s) => Ok(s),
            None => Err(Box::new(
                Diagnostic::error(
                    codes::PLACEMENT,
                    format!("{what} can only be used inside a kernel function"),
                    span,
                )
                .with_label("used outside a `@T.prim_func`")
                .with_note("put this inside the body of a function decorated with `@T.prim_func` (or an eager `@tilelang.jit` kernel)"),
            )),
        }
    }

    /// The stager, additionally requiring an open `T.Kernel`.
    pub fn kernel_stager(&mut self, what: &str, span: Span) -> EResult<&mut Stager> {
        let s = self.stager(what, span)?;
        if s.kernel.is_none() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::PLACEMENT,
                    format!("{what} must be inside a `T.Kernel` scope"),
                    span,
                )
                .with_label("outside any kernel launch")
                .with_note("wrap the code in `with T.Kernel(grid..., threads=N) as (bx, ...):`")
                .with_note(super::tir::OUTSIDE_KERNEL_NOTE),
            ));
        }
        Ok(s)
    }

    fn tick(&mut self, span: Span) -> EResult<()> {
        super::budget::tick(span)
    }

    // ----------------------------------------------------------------
    // Module level
    // ----------------------------------------------------------------

    /// Runs module-level statements. Failures poison what they bind.
    pub fn exec_module(&mut self, body: &'a [ast::Stmt]) {
        let globals = self.globals.clone();
        let doc = super::pyclass::docstring(body);
        globals.set("__doc__", doc.as_deref().map_or(Value::None, Value::str));
        self.exec_module_stmts(body, &globals);
    }

    /// Runs module-level statements one by one; a failure poisons what the
    /// statement binds. Whether every statement ran.
    fn exec_module_stmts(&mut self, body: &'a [ast::Stmt], globals: &Rc<Scope<'a>>) -> bool {
        let mut all_ran = true;
        for stmt in body {
            // A module-level `try` (typically guarding imports) runs its
            // body under the same rule, so that what tilec cannot run in
            // it does not take the rest with it.
            if let ast::Stmt::Try(t) = stmt
                && !t.is_star
            {
                let ok = self.exec_module_stmts(&t.body, globals);
                if ok {
                    all_ran &= self.exec_module_stmts(&t.orelse, globals);
                } else {
                    // Whether Python would have run a handler is not known:
                    // what the handlers and `else` bind is unknown too.
                    all_ran = false;
                    let d = Diagnostic::error(
                        codes::POISONED_NAME,
                        "this name is bound in an `except` or `else` clause of a `try` whose body tilec could not run",
                        span_of(stmt),
                    )
                    .with_label("this `try`");
                    let poison = Value::Poison(Some(Rc::new(d)));
                    let handlers = t.handlers.iter().flat_map(|h| {
                        let ast::ExceptHandler::ExceptHandler(h) = h;
                        h.name
                            .iter()
                            .map(|n| n.id.to_string())
                            .chain(h.body.iter().flat_map(bound_names))
                            .collect::<Vec<_>>()
                    });
                    for name in handlers.chain(t.orelse.iter().flat_map(bound_names)) {
                        globals.set(&name, poison.clone());
                    }
                }
                all_ran &= self.exec_module_stmts(&t.finalbody, globals);
                continue;
            }
            if let Err(d) = self.exec_stmt(stmt, globals) {
                all_ran = false;
                if d.code == stage::CASCADE {
                    continue;
                }
                let poison = Value::Poison(Some(Rc::new(*d)));
                for name in bound_names(stmt) {
                    globals.set(&name, poison.clone());
                }
            }
        }
        all_ran
    }

    /// A `try` statement in a function. The body runs; where it finishes,
    /// the `else` clause runs, and the `finally` clause always runs, as in
    /// Python. tilec runs no `except` handler: a failure in the body is
    /// reported as it is (Python's exception types are not modelled, and a
    /// construct tilec cannot evaluate is no exception in Python).
    fn exec_try(&mut self, t: &'a ast::StmtTry, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        let span = span_of(t);
        if t.is_star {
            return Err(unsupported_python("`try` statements with `except*`", span));
        }
        // TileLang's kernel parser has no `try` either.
        if self.staged_frame() {
            return Err(unsupported_python("`try` statements in kernel code", span));
        }
        let mut result = self.exec_block(&t.body, scope);
        if let Ok(Flow::Normal) = result {
            result = self.exec_block(&t.orelse, scope);
        } else if let Err(d) = result {
            result = Err(if t.handlers.is_empty() || d.code == stage::CASCADE {
                d
            } else {
                Box::new((*d).with_note(
                    "this failure is inside a `try`: tilec runs no `except` handler, so it is reported as it is",
                ))
            });
        }
        match self.exec_block(&t.finalbody, scope)? {
            Flow::Normal => result,
            // A `return`, `break` or `continue` in `finally` wins.
            flow => Ok(flow),
        }
    }

    /// Runs a helper module's statements in its own namespace, as plain
    /// Python (not staged), wherever the import happens.
    pub(crate) fn exec_module_in(&mut self, body: &'a [ast::Stmt], globals: Rc<Scope<'a>>) {
        let saved = std::mem::replace(&mut self.globals, globals);
        self.frames.push(false);
        self.exec_module(body);
        self.frames.pop();
        self.globals = saved;
    }

    // ----------------------------------------------------------------
    // Statements
    // ----------------------------------------------------------------

    /// Runs a block. In a staged frame every statement error is reported
    /// and the block goes on; otherwise the first error propagates.
    pub fn exec_block(
        &mut self,
        stmts: &'a [ast::Stmt],
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        if let Some(flow) = super::tir::exec_block(self, stmts, scope) {
            return flow;
        }
        for stmt in stmts {
            match self.exec_stmt(stmt, scope) {
                Ok(Flow::Normal) => {}
                Ok(flow) => return Ok(flow),
                Err(d) => {
                    if self.staged_frame() {
                        self.report(d);
                        for name in bound_names(stmt) {
                            scope.set(&name, Value::Poison(None));
                        }
                    } else {
                        return Err(d);
                    }
                }
            }
        }
        Ok(Flow::Normal)
    }

    fn exec_stmt(&mut self, stmt: &'a ast::Stmt, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        let span = span_of(stmt);
        self.tick(span)?;
        match stmt {
            ast::Stmt::Expr(s) => {
                self.eval(&s.value, scope)?;
            }
            ast::Stmt::Pass(_) => {}
            ast::Stmt::Import(s) => {
                for alias in &s.names {
                    let full = alias.name.id.as_str();
                    let user = self.import_user_module(span, 0, full);
                    match (&alias.asname, user) {
                        (Some(asname), Some(m)) => scope.set(asname.id.as_str(), m),
                        (Some(asname), None) => scope.set(asname.id.as_str(), module_value(full)),
                        (None, Some(m)) => {
                            let top = full.split('.').next().unwrap_or(full);
                            let value = self.user_package_chain(span, full, m);
                            scope.set(top, value);
                        }
                        (None, None) => {
                            let top = full.split('.').next().unwrap_or(full);
                            scope.set(top, module_value(top));
                        }
                    }
                }
            }
            ast::Stmt::ImportFrom(s) => {
                let module = s.module.as_ref().map_or("", |m| m.id.as_str());
                let base = self
                    .import_user_module(span, s.level, module)
                    .unwrap_or_else(|| module_value(module));
                for alias in &s.names {
                    let name = alias.name.id.as_str();
                    let sub = if module.is_empty() {
                        name.to_string()
                    } else {
                        format!("{module}.{name}")
                    };
                    if let Value::UserModule(m) = &base
                        && name == "*"
                    {
                        for n in super::user_modules::star_names(m) {
                            let value = m.globals.lookup(&n).unwrap_or(Value::None);
                            scope.set(&n, value);
                        }
                        continue;
                    }
                    let has = match &base {
                        Value::UserModule(b) => b.globals.vars.borrow().contains_key(name),
                        _ => false,
                    };
                    if name != "*"
                        && !has
                        && let Some(m) = self.import_user_module(span, s.level, &sub)
                    {
                        let bind = alias.asname.as_ref().map_or(name, |a| a.id.as_str());
                        scope.set(bind, m);
                        continue;
                    }
                    if name == "*" {
                        for n in super::pylib::star_names(&base).unwrap_or_default() {
                            let value = self.get_attr(&base, n, span_of(alias))?;
                            scope.set(n, value);
                        }
                        continue;
                    }
                    let value = self
                        .get_attr(&base, name, span_of(alias))
                        .unwrap_or_else(|_| Value::Opaque(Rc::from(format!("{module}.{name}"))));
                    let bind = alias.asname.as_ref().map_or(name, |a| a.id.as_str());
                    scope.set(bind, value);
                }
            }
            ast::Stmt::FunctionDef(def) => {
                let value = self.define_function(def, scope)?;
                scope.set(def.name.id.as_str(), value);
            }
            ast::Stmt::Return(r) => {
                let value = match &r.value {
                    Some(v) => self.eval(v, scope)?,
                    None => Value::None,
                };
                return Ok(Flow::Return(value));
            }
            ast::Stmt::Assign(s) => {
                let value = self.eval(&s.value, scope)?;
                for target in &s.targets {
                    self.assign(target, value.clone(), scope, span)?;
                }
            }
            ast::Stmt::AugAssign(s) => self.aug_assign(s, scope)?,
            ast::Stmt::AnnAssign(s) => self.ann_assign(s, scope)?,
            ast::Stmt::If(s) => return self.exec_if(s, scope),
            ast::Stmt::For(s) => return self.exec_for(s, scope),
            ast::Stmt::While(s) => return self.exec_while(s, scope),
            ast::Stmt::With(s) => return self.exec_with(s, scope),
            ast::Stmt::Break(_) => return Ok(Flow::Break),
            ast::Stmt::Continue(_) => return Ok(Flow::Continue),
            ast::Stmt::Assert(s) => {
                let cond = self.eval(&s.test, scope)?;
                let cond = self.plain_condition(cond, span_of(&*s.test))?;
                match cond.truthy() {
                    Some(true) => {}
                    Some(false) => {
                        let mut d = Diagnostic::error(
                            codes::ASSERTION_FAILED,
                            "assertion failed at compile time",
                            span,
                        )
                        .with_label("this condition is false for the values given");
                        if let Some(msg) = &s.msg
                            && let Ok(m) = self.eval(msg, scope)
                        {
                            d = d.with_note(m.to_py_str());
                        }
                        return Err(Box::new(d));
                    }
                    None => {
                        let c = self
                            .stager("a run-time `assert`", span)?
                            .bool_expr(&cond, span)?;
                        self.stager("assert", span)?
                            .emit(Stmt::Assume { cond: c }, span);
                    }
                }
            }
            ast::Stmt::Raise(s) => {
                let msg = match &s.exc {
                    Some(e) => self.eval(e, scope).map(|v| v.repr()).unwrap_or_default(),
                    None => String::new(),
                };
                return Err(Box::new(
                    Diagnostic::error(
                        codes::ASSERTION_FAILED,
                        format!("`raise` reached at compile time: {msg}"),
                        span,
                    )
                    .with_label("raised here"),
                ));
            }
            ast::Stmt::Delete(s) => {
                for t in &s.targets {
                    self.delete(t, scope)?;
                }
            }
            ast::Stmt::Global(_) | ast::Stmt::Nonlocal(_) => {
                return Err(unsupported_python("`global` and `nonlocal`", span));
            }
            ast::Stmt::ClassDef(c) => {
                let class = super::pyclass::define_class(self, c, scope)?;
                scope.set(c.name.id.as_str(), class);
            }
            ast::Stmt::Try(t) => return self.exec_try(t, scope),
            ast::Stmt::Match(_) => return Err(unsupported_python("`match` statements", span)),
            ast::Stmt::TypeAlias(_) => return Err(unsupported_python("`type` aliases", span)),
            ast::Stmt::IpyEscapeCommand(_) => {
                return Err(unsupported_python("IPython escapes", span));
            }
        }
        Ok(Flow::Normal)
    }

    /// `del target`.
    fn delete(&mut self, target: &'a ast::Expr, scope: &Rc<Scope<'a>>) -> EResult<()> {
        let span = span_of(target);
        match target {
            ast::Expr::Name(n) => {
                if scope.vars.borrow_mut().remove(n.id.as_str()).is_none() {
                    return Err(err(
                        codes::UNDEFINED_NAME,
                        format!("name `{}` is not defined", n.id),
                        span,
                    ));
                }
                Ok(())
            }
            ast::Expr::Subscript(sub) => match self.eval(&sub.value, scope)? {
                Value::List(l) => {
                    let key = self.eval(&sub.slice, scope)?;
                    let len = l.borrow().len();
                    let i = seq_index(&key, len, span)?;
                    l.borrow_mut().remove(i);
                    Ok(())
                }
                Value::Dict(d) => {
                    let key = self.eval(&sub.slice, scope)?;
                    super::budget::work(d.borrow().len());
                    let pos = d.borrow().iter().position(|(k, _)| py_eq(k, &key));
                    match pos {
                        Some(i) => {
                            d.borrow_mut().remove(i);
                            Ok(())
                        }
                        None => Err(err(
                            codes::INDEX_ERROR,
                            format!("key {} is not in the dict", key.repr()),
                            span,
                        )),
                    }
                }
                other => Err(err(
                    codes::BAD_ASSIGNMENT,
                    format!("cannot delete an element of {}", other.a_type_name()),
                    span,
                )),
            },
            ast::Expr::Tuple(t) => t.elts.iter().try_for_each(|e| self.delete(e, scope)),
            _ => Err(err(
                codes::BAD_ASSIGNMENT,
                "this `del` target is not supported",
                span,
            )),
        }
    }

    fn define_function(
        &mut self,
        def: &'a ast::StmtFunctionDef,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Value<'a>> {
        let span = span_of(def);
        if def.is_async {
            return Err(unsupported_python("`async def`", span));
        }
        let defaults = self.eval_defaults(&def.parameters, scope)?;
        let closure = Rc::new(Closure {
            name: def.name.id.to_string(),
            name_span: span_of(&def.name),
            params: &def.parameters,
            body: FunctionBody::Def(def),
            defaults,
            scope: scope.clone(),
            span,
        });
        let mut value = Value::Function(closure);
        for dec in def.decorator_list.iter().rev() {
            let d = self.eval(&dec.expression, scope)?;
            value = self.apply_decorator(d, value, span_of(dec))?;
        }
        Ok(value)
    }

    pub(crate) fn eval_defaults(
        &mut self,
        params: &'a ast::Parameters,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Vec<(String, Value<'a>)>> {
        let mut out = Vec::new();
        for p in params
            .posonlyargs
            .iter()
            .chain(params.args.iter())
            .chain(params.kwonlyargs.iter())
        {
            if let Some(d) = &p.default {
                out.push((p.parameter.name.id.to_string(), self.eval(d, scope)?));
            }
        }
        Ok(out)
    }

    pub(crate) fn apply_decorator(
        &mut self,
        decorator: Value<'a>,
        func: Value<'a>,
        span: Span,
    ) -> EResult<Value<'a>> {
        match decorator {
            Value::Builtin("T.prim_func") => match func {
                Value::Function(c) => self.stage_prim_func(&c),
                other => Err(err(
                    codes::TYPE_ERROR,
                    format!("`T.prim_func` applied to {}", other.a_type_name()),
                    span,
                )),
            },
            Value::Builtin("T.macro") => match func {
                Value::Function(c) => Ok(Value::Macro(c)),
                other => Err(err(
                    codes::TYPE_ERROR,
                    format!("`T.macro` applied to {}", other.a_type_name()),
                    span,
                )),
            },
            Value::Builtin("tilelang.jit") => self.apply_jit(
                JitValue {
                    inner: Value::None,
                    out_idx: None,
                    pass_configs: BTreeMap::new(),
                    span,
                },
                func,
            ),
            Value::Jit(j) if matches!(j.inner, Value::None) => self.apply_jit(
                JitValue {
                    inner: Value::None,
                    out_idx: j.out_idx.clone(),
                    pass_configs: j.pass_configs.clone(),
                    span: j.span,
                },
                func,
            ),
            Value::Builtin("tilelang.autotune") => Ok(Value::Autotune(Rc::new(AutotuneValue {
                inner: func,
                configs: Value::None,
            }))),
            Value::Autotune(a) if matches!(a.inner, Value::None) => {
                Ok(Value::Autotune(Rc::new(AutotuneValue {
                    inner: func,
                    configs: a.configs.clone(),
                })))
            }
            Value::Function(_) => self.call(decorator, vec![func], vec![], span),
            // Decorators we do not model (`functools.lru_cache`,
            // `torch.no_grad()`, ...) leave the function as it is.
            _ => Ok(func),
        }
    }

    fn apply_jit(&mut self, mut jit: JitValue<'a>, func: Value<'a>) -> EResult<Value<'a>> {
        if let Value::Kernel(k) = &func {
            // `@tilelang.jit` directly on a prim_func.
            let mut f = k.function.clone();
            apply_jit_attrs(&mut f, &jit, jit.span)?;
            return Ok(Value::Kernel(Rc::new(KernelValue {
                function: f,
                list_warnings: k.list_warnings.clone(),
            })));
        }
        jit.inner = func;
        Ok(Value::Jit(Rc::new(jit)))
    }

    fn exec_if(&mut self, s: &'a ast::StmtIf, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        // Build the chain of (condition, body) pairs.
        let mut clauses: Vec<(Option<&'a ast::Expr>, &'a [ast::Stmt])> =
            vec![(Some(&s.test), &s.body)];
        for c in &s.elif_else_clauses {
            clauses.push((c.test.as_ref(), &c.body));
        }
        self.exec_if_chain(&clauses, scope, span_of(s))
    }

    fn exec_if_chain(
        &mut self,
        clauses: &[(Option<&'a ast::Expr>, &'a [ast::Stmt])],
        scope: &Rc<Scope<'a>>,
        span: Span,
    ) -> EResult<Flow<'a>> {
        let Some(&(test, body)) = clauses.first() else {
            return Ok(Flow::Normal);
        };
        let Some(test) = test else {
            return self.exec_block(body, scope);
        };
        let cond = self.eval(test, scope)?;
        let cond = self.plain_condition(cond, span_of(test))?;
        match cond.truthy() {
            Some(true) => self.exec_block(body, scope),
            Some(false) => self.exec_if_chain(&clauses[1..], scope, span),
            None => {
                let tspan = span_of(test);
                let st = self.stager("a run-time `if`", tspan)?;
                let c = st.bool_expr(&cond, tspan)?;
                // Both branches run on some threads only when the
                // condition can differ between threads; the `then` branch
                // of `tx == k` runs on one thread.
                let guard = st.may_read_thread(c);
                let g = usize::from(guard);
                let many_then = usize::from(guard && !st.one_thread(c));
                st.thread_guard_depth += g;
                st.many_thread_guard_depth += many_then;
                self.stager("if", span)?.push_block();
                let then_flow = self.exec_block(body, scope);
                let st = self.stager("if", span)?;
                let then = st.pop_block();
                st.many_thread_guard_depth -= many_then;
                st.many_thread_guard_depth += g;
                if let Err(e) = then_flow.and_then(|f| self.check_no_escape(f, span)) {
                    let st = self.stager("if", span)?;
                    st.thread_guard_depth -= g;
                    st.many_thread_guard_depth -= g;
                    return Err(e);
                }
                self.stager("if", span)?.push_block();
                let else_flow = self.exec_if_chain(&clauses[1..], scope, span);
                let st = self.stager("if", span)?;
                let otherwise = st.pop_block();
                st.thread_guard_depth -= g;
                st.many_thread_guard_depth -= g;
                self.check_no_escape(else_flow?, span)?;
                self.stager("if", span)?.emit(
                    Stmt::If {
                        cond: c,
                        then,
                        otherwise,
                    },
                    span,
                );
                Ok(Flow::Normal)
            }
        }
    }

    /// `return`/`break`/`continue` cannot leave a staged (run-time) construct.
    fn check_no_escape(&self, flow: Flow<'a>, span: Span) -> EResult<()> {
        match flow {
            Flow::Normal => Ok(()),
            _ => Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    "`return`, `break` and `continue` cannot leave a run-time `if` or loop",
                    span,
                )
                .with_label("this construct depends on run-time values")
                .with_note(
                    "restructure the code so that control flow does not escape run-time branches",
                ),
            )),
        }
    }

    fn exec_for(&mut self, s: &'a ast::StmtFor, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        let span = span_of(s);
        if s.is_async {
            return Err(unsupported_python("`async for`", span));
        }
        let iter_span = span_of(&*s.iter);
        if self.staged_frame()
            && let ast::Expr::Call(call) = &*s.iter
            && let ast::Expr::Attribute(a) = &*call.func
            && a.attr.as_str() == "Persistent"
            && matches!(
                self.eval(&call.func, scope)?,
                Value::Builtin("T.Persistent")
            )
        {
            if !s.orelse.is_empty() {
                return Err(unsupported_python("`for ... else` on a kernel loop", span));
            }
            let (args, kwargs) = self.eval_args(&call.arguments, scope)?;
            return self.stage_persistent(s, args, kwargs, scope);
        }
        let iterable = self.eval_iterable(&s.iter, scope)?;
        if let Value::Loop(spec) = &iterable {
            if !s.orelse.is_empty() {
                return Err(unsupported_python("`for ... else` on a kernel loop", span));
            }
            return self.stage_loop(s, spec, scope);
        }
        let items = self.iterate(&iterable, iter_span)?;
        for item in items {
            self.tick(span)?;
            self.assign(&s.target, item, scope, span)?;
            match self.exec_block(&s.body, scope)? {
                Flow::Break => return Ok(Flow::Normal),
                Flow::Return(v) => return Ok(Flow::Return(v)),
                Flow::Normal | Flow::Continue => {}
            }
        }
        self.exec_block(&s.orelse, scope)
    }

    /// Evaluates a `for` iterable; `range(...)` in staged code makes a
    /// serial kernel loop, as in TileLang.
    fn eval_iterable(&mut self, iter: &'a ast::Expr, scope: &Rc<Scope<'a>>) -> EResult<Value<'a>> {
        if self.staged_frame()
            && let ast::Expr::Call(call) = iter
        {
            let callee = self.eval(&call.func, scope)?;
            if matches!(callee, Value::Builtin("range")) {
                let (args, kwargs) = self.eval_args(&call.arguments, scope)?;
                return self.call_builtin("T.serial", args, kwargs, span_of(iter));
            }
            let (args, kwargs) = self.eval_args(&call.arguments, scope)?;
            return self.call(callee, args, kwargs, span_of(iter));
        }
        self.eval(iter, scope)
    }

    fn stage_loop(
        &mut self,
        s: &'a ast::StmtFor,
        spec: &super::value::LoopSpec,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        let span = span_of(s);
        let names: Vec<(String, Span)> = match &*s.target {
            ast::Expr::Name(n) => vec![(n.id.to_string(), span_of(n))],
            ast::Expr::Tuple(t) => t
                .elts
                .iter()
                .map(|e| match e {
                    ast::Expr::Name(n) => Ok((n.id.to_string(), span_of(n))),
                    other => Err(err(
                        codes::BAD_ASSIGNMENT,
                        "loop variables must be plain names",
                        span_of(other),
                    )),
                })
                .collect::<EResult<_>>()?,
            other => {
                return Err(err(
                    codes::BAD_ASSIGNMENT,
                    "loop variables must be plain names",
                    span_of(other),
                ));
            }
        };
        if names.len() != spec.ranges.len() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "the loop has {} extents but {} loop variables",
                        spec.ranges.len(),
                        names.len()
                    ),
                    span_of(&*s.target),
                )
                .with_label("loop variables here"),
            ));
        }
        let loop_scope = scope;
        let stager = self.kernel_stager("a kernel loop", span)?;
        let mut vars = Vec::new();
        for (name, _) in &names {
            let v = stager.add_var(name, DType::I32, VarKind::Loop);
            vars.push(v);
        }
        for ((name, _), v) in names.iter().zip(&vars) {
            let mut e = stager.var(*v);
            if let (Some(k), Some(&(start, _))) = (spec.step, spec.ranges.first()) {
                // A stepped loop counts from 0; its name is the index.
                let kk = stager.lit(ir::Literal::Int(k, DType::I32));
                let scaled = stager.binary(BinaryOp::Mul, e, kk, span)?;
                e = stager.binary(BinaryOp::Add, start, scaled, span)?;
            }
            loop_scope.set(name, Value::Expr(e));
        }
        let is_parallel = matches!(
            spec.kind,
            LoopSpecKind::Parallel | LoopSpecKind::ParallelGuarded(_)
        );
        stager.push_block();
        for v in &vars {
            stager.note_scoped(*v);
        }
        if is_parallel {
            stager.parallel_depth += 1;
        }
        let flow = self.exec_block(&s.body, loop_scope);
        let stager = self.stager("loop", span)?;
        if is_parallel {
            stager.parallel_depth -= 1;
        }
        let mut body = stager.pop_block();
        if let LoopSpecKind::ParallelGuarded(extents) = &spec.kind {
            body = super::tl::guard_parallel_body(stager, &vars, extents, body, span)?;
        }
        let mut warning = None;
        // Diagnostics about the lists point at `T.Pipelined(...)`.
        let lists_span = span_of(&*s.iter);
        let mut kind = match &spec.kind {
            LoopSpecKind::Serial(k) => Some(k.clone()),
            LoopSpecKind::Parallel | LoopSpecKind::ParallelGuarded(_) => None,
        };
        if let Some(ir::LoopKind::Pipelined {
            num_stages,
            order,
            stage,
            ..
        }) = &mut kind
        {
            // Replayable binds are substituted where they are used: the
            // lists leave them out (or, in older code, list them and are
            // read without their entries).
            let binds = ir::visit::replay_binds(&mut stager.func, &mut body).map_err(|e| {
                Box::new(Diagnostic::error(
                    codes::IR_TYPE,
                    format!("a bind of the pipelined loop could not be replayed: {e}"),
                    span,
                ))
            })?;
            let len = body.len();
            if let Some(groups) = &spec.group
                && (order.is_some() || stage.is_some())
            {
                let expanded =
                    ir::lists::expand_groups(groups, order.as_deref(), stage.as_deref(), len)
                        .or_else(|m| {
                            // Groups counting the binds too.
                            ir::lists::expand_groups(
                                groups,
                                order.as_deref(),
                                stage.as_deref(),
                                binds.len(),
                            )
                            .map(|(o, st)| (without(o, &binds), without(st, &binds)))
                            .map_err(|_| m)
                        });
                let (o, st) = expanded
                        .map_err(|m| {
                            Box::new(
                                Diagnostic::error(codes::BAD_TILELANG_ARGUMENT, m, lists_span)
                                    .with_label(format!("a loop body of {} statements", body.len()))
                                    .with_note(
                                        "`group` lists, for each entry of `order` and `stage`, the statements of the loop body it stands for (counted from 0; tile operations, loops and stores each count once); every statement must be in exactly one group",
                                    ),
                            )
                        })?;
                *order = o;
                *stage = st;
            } else if binds.len() != len {
                // Lists with an entry for every statement, binds included.
                for list in [&mut *order, &mut *stage] {
                    if let Some(l) = list
                        && l.len() == binds.len()
                    {
                        *l = without(Some(std::mem::take(l)), &binds).unwrap_or_default();
                    }
                }
            }
            let len_ok = [order.as_ref(), stage.as_ref()]
                .iter()
                .all(|l| l.is_none_or(|l| l.len() == body.len()));
            if len_ok
                && let Some(ir::lists::ListForm::Default { reason }) = ir::lists::list_form(
                    order.as_deref(),
                    stage.as_deref(),
                    *num_stages,
                    &body,
                    &stager.func,
                )
            {
                warning = Some(
                    Diagnostic::warning(
                        codes::IGNORED,
                        format!(
                            "the `order`/`stage` lists of this loop are not followed ({reason}); it is scheduled as without them"
                        ),
                        lists_span,
                    )
                    .with_note(
                        "lists are followed when the copies into shared memory have stage 0 and everything else one stage, or the copies a negative (or the lowest) stage and the rest a rotation that keeps every dependence; the results are the same either way (docs/tilelang-support.md)",
                    ),
                );
            }
        }
        if let Some(ir::LoopKind::Pipelined { order, stage, .. }) = &kind
            && let Some(list) = order.as_ref().or(stage.as_ref())
            && list.len() != body.len()
        {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "`order`/`stage` lists have {} entries, but the pipelined loop body has {} statements",
                        list.len(),
                        body.len()
                    ),
                    span,
                )
                .with_label("pipelined loop")
                .with_note("give one entry per statement of the loop body (tile operations, loops and stores each count once)"),
            ));
        }
        let stmt = match &spec.kind {
            LoopSpecKind::Parallel | LoopSpecKind::ParallelGuarded(_) => Stmt::Parallel {
                vars,
                extents: spec.ranges.iter().map(|r| r.1).collect(),
                body,
            },
            LoopSpecKind::Serial(k) => {
                // Several ranges (`T.grid`): serial loops nested in order.
                let mut body = body;
                for d in (1..vars.len()).rev() {
                    let mut outer = ir::Block::new();
                    outer.push(
                        Stmt::For {
                            var: vars[d],
                            start: spec.ranges[d].0,
                            extent: spec.ranges[d].1,
                            kind: ir::LoopKind::Serial,
                            body,
                        },
                        span,
                    );
                    body = outer;
                }
                Stmt::For {
                    var: vars[0],
                    start: match spec.step {
                        Some(_) => stager.int(0),
                        None => spec.ranges[0].0,
                    },
                    extent: spec.ranges[0].1,
                    kind: kind.unwrap_or_else(|| k.clone()),
                    body,
                }
            }
        };
        if let (Some(w), Stmt::For { var, .. }) = (warning, &stmt) {
            stager.list_warnings.push((*var, w));
        }
        if is_parallel && stager.parallel_depth == 0 && stager.reducers.any_open() {
            // Accumulations into reducers (`reducer.rs`).
            super::reducer::emit_parallel(stager, stmt, span)?;
        } else {
            stager.emit(stmt, span);
        }
        self.check_no_escape(flow?, span)?;
        Ok(Flow::Normal)
    }

    /// `for v0, ..., vn in T.Persistent(domain, wave_size, index,
    /// group_size=8):` — TileLang's persistent loop: a serial loop over
    /// waves in which the block `index` of `wave_size` takes the tile
    /// `w * wave_size + index` of the domain, tiles grouped by
    /// `group_size` along the last dimension, as TileLang's
    /// `PersistentFor` (src/ir.cc) orders them; tiles past the domain are
    /// skipped.
    fn stage_persistent(
        &mut self,
        s: &'a ast::StmtFor,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        let span = span_of(s);
        let iter_span = span_of(&*s.iter);
        let params = ["domain", "wave_size", "index", "group_size"];
        let mut vals: [Option<Value<'a>>; 4] = Default::default();
        if args.len() > 4 {
            return Err(err(
                codes::BAD_ARGUMENTS,
                "`T.Persistent` takes a domain, a wave size, an index and a group size",
                iter_span,
            ));
        }
        for (i, a) in args.into_iter().enumerate() {
            vals[i] = Some(a);
        }
        for (k, v) in kwargs {
            match params.iter().position(|p| *p == k) {
                Some(i) if vals[i].is_none() => vals[i] = Some(v),
                _ => {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        format!("`T.Persistent` has no parameter `{k}` (or it is given twice)"),
                        iter_span,
                    ));
                }
            }
        }
        let [domain, wave, index, group] = vals;
        let (Some(domain), Some(wave), Some(index)) = (domain, wave, index) else {
            return Err(err(
                codes::BAD_ARGUMENTS,
                "`T.Persistent` needs a domain, a wave size and the block's index",
                iter_span,
            ));
        };
        let group = group.unwrap_or(Value::Int(8));
        let domain = match domain.as_sequence() {
            Some(d) if !d.is_empty() => d,
            _ => {
                return Err(err(
                    codes::BAD_TILELANG_ARGUMENT,
                    "`T.Persistent` takes a non-empty list of extents as its domain",
                    iter_span,
                ));
            }
        };
        let names: Vec<&'a ast::Expr> = match &*s.target {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        if names.len() != domain.len() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "the domain has {} extents but {} loop variables",
                        domain.len(),
                        names.len()
                    ),
                    span_of(&*s.target),
                )
                .with_label("loop variables here"),
            ));
        }
        let n = domain.len();
        let last = domain[n - 1].clone();
        // group = max(1, min(group_size, last extent)).
        let g = super::tl::call(
            self,
            "min",
            vec![group, last.clone()],
            Vec::new(),
            iter_span,
        )?;
        let g = super::tl::call(self, "max", vec![Value::Int(1), g], Vec::new(), iter_span)?;
        let mut grouped = vec![super::tl::call(
            self,
            "ceildiv",
            vec![last.clone(), g.clone()],
            Vec::new(),
            iter_span,
        )?];
        grouped.extend(domain[..n - 1].iter().cloned());
        grouped.push(g.clone());
        let mut padded = grouped[0].clone();
        for e in &grouped[1..] {
            padded = self.binop(PyBinOp::Mul, &padded, e, iter_span)?;
        }
        let waves = super::tl::call(
            self,
            "ceildiv",
            vec![padded, wave.clone()],
            Vec::new(),
            iter_span,
        )?;
        let (start, extent) = super::tl::loop_range(self, &waves, None, iter_span)?;
        let stager = self.kernel_stager("`T.Persistent`", span)?;
        let w = stager.add_var("w", DType::I32, VarKind::Loop);
        let w_expr = Value::Expr(stager.var(w));
        stager.push_block();
        stager.note_scoped(w);
        // The tile of this iteration: `w * wave_size + index`, split over
        // the grouped domain from its last extent inward.
        let body_flow = (|| -> EResult<Flow<'a>> {
            let mut rem = self.binop(PyBinOp::Mul, &w_expr, &wave, iter_span)?;
            rem = self.binop(PyBinOp::Add, &rem, &index, iter_span)?;
            let mut idxs = vec![Value::Int(0); grouped.len()];
            for i in (1..grouped.len()).rev() {
                idxs[i] = self.binop(PyBinOp::Mod, &rem, &grouped[i], iter_span)?;
                rem = self.binop(PyBinOp::FloorDiv, &rem, &grouped[i], iter_span)?;
            }
            idxs[0] = rem;
            let mut last_coord = self.binop(PyBinOp::Mul, &idxs[0], &g, iter_span)?;
            last_coord = self.binop(
                PyBinOp::Add,
                &last_coord,
                &idxs[grouped.len() - 1],
                iter_span,
            )?;
            for (i, target) in names.iter().enumerate() {
                let v = if i + 1 == n {
                    last_coord.clone()
                } else {
                    idxs[i + 1].clone()
                };
                self.assign(target, v, scope, span_of(*target))?;
            }
            let in_range = self.compare(ast::CmpOp::Lt, &last_coord, &last, iter_span)?;
            let c = self
                .stager("`T.Persistent`", iter_span)?
                .bool_expr(&in_range, iter_span)?;
            self.stager("`T.Persistent`", span)?.push_block();
            let flow = self.exec_block(&s.body, scope);
            let then = self.stager("`T.Persistent`", span)?.pop_block();
            self.stager("`T.Persistent`", span)?.emit(
                Stmt::If {
                    cond: c,
                    then,
                    otherwise: ir::Block::new(),
                },
                span,
            );
            flow
        })();
        let stager = self.stager("`T.Persistent`", span)?;
        let body = stager.pop_block();
        stager.emit(
            Stmt::For {
                var: w,
                start,
                extent,
                kind: ir::LoopKind::Serial,
                body,
            },
            span,
        );
        self.check_no_escape(body_flow?, span)?;
        Ok(Flow::Normal)
    }

    fn exec_while(&mut self, s: &'a ast::StmtWhile, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        let span = span_of(s);
        loop {
            self.tick(span)?;
            let cond = self.eval(&s.test, scope)?;
            let cond = self.plain_condition(cond, span_of(&*s.test))?;
            match cond.truthy() {
                Some(true) => match self.exec_block(&s.body, scope)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                },
                Some(false) => return self.exec_block(&s.orelse, scope),
                None => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::UNSUPPORTED_TILELANG,
                            "`while` with a run-time condition is not supported",
                            span_of(&*s.test),
                        )
                        .with_label("this condition depends on run-time values")
                        .with_note("use a `for` loop over `T.serial(n)` with an `if` inside"),
                    ));
                }
            }
        }
    }

    /// `with T.ws(g, ...):` — a role of the kernel being staged.
    fn exec_role(
        &mut self,
        groups: &[u32],
        s: &'a ast::StmtWith,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        let span = span_of(s);
        let st = self.kernel_stager("`T.ws`", span)?;
        let Some(k) = st.kernel.as_mut() else {
            return Err(err(codes::PLACEMENT, "`T.ws` outside `T.Kernel`", span));
        };
        if k.in_role {
            return Err(Box::new(
                Diagnostic::error(codes::PLACEMENT, "`T.ws` inside another `T.ws`", span)
                    .with_label("nested role")
                    .with_note(
                        "roles do not nest: name every warp group of a role in one `T.ws(...)`",
                    ),
            ));
        }
        let threads = k.threads;
        if let Some(&g) = groups
            .iter()
            .find(|&&g| u64::from(g) * 128 >= u64::from(threads))
        {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "warp group {g} (threads {} to {}) is outside the kernel's {threads} threads",
                        u64::from(g) * 128,
                        u64::from(g) * 128 + 127
                    ),
                    span,
                )
                .with_label("this `T.ws`")
                .with_note("`T.ws(g)` runs its body on threads 128·g to 128·g + 127"),
            ));
        }
        k.in_role = true;
        st.push_block();
        let flow = self.exec_block(&s.body, scope);
        let st = self.kernel_stager("`T.ws`", span)?;
        let body = st.pop_block();
        if let Some(k) = st.kernel.as_mut() {
            k.in_role = false;
        }
        let flow = flow?;
        st.emit(
            Stmt::Role {
                groups: groups.to_vec(),
                body,
            },
            span,
        );
        Ok(flow)
    }

    fn exec_with(&mut self, s: &'a ast::StmtWith, scope: &Rc<Scope<'a>>) -> EResult<Flow<'a>> {
        self.exec_with_items(s, 0, scope)
    }

    /// The body of `s` inside its context managers from the `k`-th on:
    /// `with a, b: body` means `with a: with b: body`.
    fn exec_with_rest(
        &mut self,
        s: &'a ast::StmtWith,
        k: usize,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        if k < s.items.len() {
            self.exec_with_items(s, k, scope)
        } else {
            self.exec_block(&s.body, scope)
        }
    }

    fn exec_with_items(
        &mut self,
        s: &'a ast::StmtWith,
        k: usize,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Flow<'a>> {
        let span = span_of(s);
        let item = &s.items[k];
        let ctx = self.eval(&item.context_expr, scope)?;
        if let Value::Role(groups) = &ctx {
            if s.items.len() > 1 {
                return Err(unsupported_python(
                    "`T.ws` beside other context managers in one `with`",
                    span,
                ));
            }
            return self.exec_role(groups, s, scope);
        }
        if super::sblock::is_sblock(&ctx) {
            if let Some(v) = item.optional_vars.as_deref() {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        "`with T.sblock(...) as name` is not supported",
                        span_of(v),
                    )
                    .with_label("a block bound to a name")
                    .with_note("write `with T.sblock(\"name\"):`"),
                ));
            }
            let saved = super::sblock::enter(self, span)?;
            let flow = self.exec_with_rest(s, k + 1, scope);
            super::sblock::leave(self, saved, span)?;
            return flow;
        }
        if super::tl_extra::is_null_context(&ctx) {
            // A context manager without effect on what the kernel
            // computes (an IKET profiling range): its body runs as is.
            if let Some(v) = item.optional_vars.as_deref() {
                self.assign(v, ctx.clone(), scope, span_of(v))?;
            }
            return self.exec_with_rest(s, k + 1, scope);
        }
        let Value::Launch(launch) = ctx else {
            return Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("`with` over {} is not supported", ctx.a_type_name()),
                    span_of(&item.context_expr),
                )
                .with_label("expected `T.Kernel(...)`"),
            ));
        };
        let stager = self.stager("`T.Kernel`", span)?;
        if stager.kernel.is_some() || stager.block_depth() > 1 {
            return Err(Box::new(
                Diagnostic::error(
                    codes::PLACEMENT,
                    "`T.Kernel` must be at the top level of the kernel function",
                    span,
                )
                .with_label("nested inside another construct")
                .with_note(
                    "several `T.Kernel` scopes may follow one another, but they cannot nest",
                ),
            ));
        }
        let axis_names = ["bx", "by", "bz"];
        let target_names: Vec<String> = match item.optional_vars.as_deref() {
            None => vec![],
            Some(ast::Expr::Name(n)) => vec![n.id.to_string()],
            Some(ast::Expr::Tuple(t)) => t
                .elts
                .iter()
                .map(|e| match e {
                    ast::Expr::Name(n) => Ok(n.id.to_string()),
                    other => Err(err(
                        codes::BAD_ASSIGNMENT,
                        "kernel indices must be bound to plain names",
                        span_of(other),
                    )),
                })
                .collect::<EResult<_>>()?,
            Some(other) => {
                return Err(err(
                    codes::BAD_ASSIGNMENT,
                    "kernel indices must be bound to plain names",
                    span_of(other),
                ));
            }
        };
        let dims = launch.grid.len();
        if target_names.len() > 1 && target_names.len() != dims {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_TILELANG_ARGUMENT,
                    format!(
                        "the grid has {dims} dimensions but {} names are bound",
                        target_names.len()
                    ),
                    item.optional_vars.as_deref().map_or(span, span_of),
                )
                .with_label("bound here"),
            ));
        }
        let mut block_vars = Vec::new();
        for (i, _) in launch.grid.iter().enumerate() {
            let name = if target_names.len() == dims {
                target_names[i].clone()
            } else {
                axis_names[i].to_string()
            };
            block_vars.push(stager.add_var(&name, DType::I32, VarKind::BlockIdx));
        }
        let thread_var = stager.add_var("tx", DType::I32, VarKind::ThreadIdx);
        let exprs: Vec<Value<'a>> = block_vars
            .iter()
            .map(|v| Value::Expr(stager.var(*v)))
            .collect();
        match target_names.len() {
            0 => {}
            1 if dims == 1 => scope.set(&target_names[0], exprs[0].clone()),
            1 => scope.set(&target_names[0], Value::tuple(exprs)),
            _ => {
                for (n, e) in target_names.iter().zip(exprs) {
                    scope.set(n, e);
                }
            }
        }
        stager.kernel = Some(KernelCx {
            thread_var,
            order: None,
            threads: launch.threads,
            dims: launch.dims,
            in_role: false,
            mbarriers: None,
        });
        super::safe_value::start_scope(stager);
        stager.push_block();
        for v in block_vars.iter().chain([&thread_var]) {
            stager.note_scoped(*v);
        }
        let flow = self.exec_with_rest(s, k + 1, scope);
        let stager = self.stager("`T.Kernel`", span)?;
        let body = stager.pop_block();
        let order = stager.kernel.take().and_then(|k| k.order);
        let flow = flow.and_then(|f| {
            super::thread_dims::check(stager, launch.dims, &body)?;
            super::safe_value::finish_kernel(stager)?;
            Ok(f)
        });
        stager.safe_values.clear();
        stager.emit(
            Stmt::Kernel {
                grid: launch.grid.clone(),
                threads: launch.threads,
                block_vars,
                thread_var,
                order,
                body,
            },
            span,
        );
        match flow? {
            Flow::Return(v) => Ok(Flow::Return(v)),
            _ => Ok(Flow::Normal),
        }
    }

    // ----------------------------------------------------------------
    // Assignment
    // ----------------------------------------------------------------

    /// `value`, with a staged expression that reads memory bound to a
    /// fresh `let` (its value at this point of the program).
    fn snapshot(&mut self, value: Value<'a>, span: Span) -> EResult<Value<'a>> {
        let s = self.stager("assignment", span)?;
        let e = match &value {
            Value::Expr(e) if s.reads_memory(*e) => *e,
            // A `T.alloc_var` named by itself stands for its element; a
            // subscript with no slice is an element load.
            Value::Buffer(b) if s.func.buffers[*b].scope == ir::Scope::Var => {
                s.value_expr(&value, None, span)?
            }
            Value::Access(acc) if acc.items.iter().all(|i| matches!(i, IndexItem::Point(_))) => {
                s.value_expr(&value, None, span)?
            }
            _ => return Ok(value),
        };
        let var = s.bind_let("tmp", e, span);
        Ok(Value::Expr(s.var(var)))
    }

    pub fn assign(
        &mut self,
        target: &'a ast::Expr,
        value: Value<'a>,
        scope: &Rc<Scope<'a>>,
        span: Span,
    ) -> EResult<()> {
        match target {
            ast::Expr::Name(n) => self.assign_name(n.id.as_str(), value, scope, span_of(n)),
            ast::Expr::Tuple(ast::ExprTuple { elts, .. })
            | ast::Expr::List(ast::ExprList { elts, .. }) => {
                let items = match &value {
                    Value::Tuple(_) | Value::List(_) => value.as_sequence().unwrap_or_default(),
                    Value::Poison(_) => {
                        for e in elts {
                            self.assign(e, value.clone(), scope, span)?;
                        }
                        return Ok(());
                    }
                    other => self.iterate(other, span)?,
                };
                if let Some(star) = elts.iter().position(|e| matches!(e, ast::Expr::Starred(_))) {
                    let after = elts.len() - star - 1;
                    if items.len() < elts.len() - 1 {
                        return Err(err(
                            codes::BAD_ASSIGNMENT,
                            "not enough values to unpack",
                            span,
                        ));
                    }
                    for (e, v) in elts[..star].iter().zip(&items) {
                        self.assign(e, v.clone(), scope, span)?;
                    }
                    let middle = items[star..items.len() - after].to_vec();
                    if let ast::Expr::Starred(st) = &elts[star] {
                        self.assign(&st.value, Value::list(middle), scope, span)?;
                    }
                    for (e, v) in elts[star + 1..].iter().zip(&items[items.len() - after..]) {
                        self.assign(e, v.clone(), scope, span)?;
                    }
                    return Ok(());
                }
                if items.len() != elts.len() {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_ASSIGNMENT,
                            format!(
                                "cannot unpack {} values into {} names",
                                items.len(),
                                elts.len()
                            ),
                            span_of(target),
                        )
                        .with_label("assignment target"),
                    ));
                }
                // Python evaluates the whole right-hand side before the
                // first store: `a, b = b, a` swaps. A staged value that
                // reads memory is bound to a `let` first, so that an
                // earlier target's store cannot change what it reads.
                let items = if elts.len() > 1 && self.staged_frame() {
                    let mut fixed = Vec::with_capacity(items.len());
                    for v in items {
                        fixed.push(self.snapshot(v, span)?);
                    }
                    fixed
                } else {
                    items
                };
                for (e, v) in elts.iter().zip(items) {
                    self.assign(e, v, scope, span)?;
                }
                Ok(())
            }
            ast::Expr::Subscript(sub) => {
                let base = self.eval(&sub.value, scope)?;
                match base {
                    Value::Torch(t) => {
                        super::torch_tensor::store(&t);
                        Ok(())
                    }
                    Value::Buffer(b) => {
                        let parts = self.eval_subscript_lanes(&sub.slice, scope)?;
                        self.check_subscript_rank(b, parts.len(), &sub.slice)?;
                        if super::vector::is_vector_store(&parts, &value) {
                            return super::vector::store(
                                self,
                                b,
                                parts,
                                value,
                                span_of(target),
                                span,
                            );
                        }
                        let items = parts
                            .into_iter()
                            .filter_map(|p| match p {
                                super::vector::Part::Item(i) => Some(i),
                                super::vector::Part::Lanes(..) => None,
                            })
                            .collect();
                        self.store(b, items, value, span_of(target), span)
                    }
                    Value::View(v) => {
                        let items = self.eval_subscript_parts(&sub.slice, scope)?;
                        let Value::ViewAccess(va) =
                            super::views::subscript(self, &v, items, span_of(target))?
                        else {
                            return Err(stage::cascade());
                        };
                        let st = self.kernel_stager("a buffer store", span)?;
                        let a = super::views::element(st, &va)?;
                        let value = super::views::store_value(st, &va.view, value, span)?;
                        self.store(a.buffer, a.items, value, span_of(target), span)
                    }
                    Value::List(l) => {
                        let idx = self.eval(&sub.slice, scope)?;
                        let len = l.borrow().len();
                        let i = seq_index(&idx, len, span_of(&*sub.slice))?;
                        l.borrow_mut()[i] = value;
                        Ok(())
                    }
                    Value::Dict(d) => {
                        let key = self.eval(&sub.slice, scope)?;
                        super::budget::work(d.borrow().len());
                        let mut d = d.borrow_mut();
                        if let Some(entry) = d.iter_mut().find(|(k, _)| py_eq(k, &key)) {
                            entry.1 = value;
                        } else {
                            super::budget::grow_elements(2, "a dict insert", span)?;
                            d.push((key, value));
                        }
                        Ok(())
                    }
                    Value::Poison(_) => Err(stage::cascade()),
                    other => Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_ASSIGNMENT,
                            format!("cannot assign to an element of {}", other.a_type_name()),
                            span_of(target),
                        )
                        .with_label("not a buffer, list or dict"),
                    )),
                }
            }
            ast::Expr::Attribute(a) => {
                let base = self.eval(&a.value, scope)?;
                if let Value::Poison(_) = base {
                    return Err(stage::cascade());
                }
                super::pyclass::set_attr(&base, a.attr.id.as_str(), value).ok_or_else(|| {
                    Box::new(
                        Diagnostic::error(
                            codes::BAD_ASSIGNMENT,
                            format!("cannot set an attribute of {}", base.a_type_name()),
                            span_of(target),
                        )
                        .with_label("only instances and classes the file defines take attributes"),
                    )
                })
            }
            ast::Expr::Starred(_) => Err(err(
                codes::BAD_ASSIGNMENT,
                "starred assignment target outside a tuple",
                span,
            )),
            other => Err(Box::new(
                Diagnostic::error(
                    codes::BAD_ASSIGNMENT,
                    "this assignment target is not supported",
                    span_of(other),
                )
                .with_label("cannot assign here"),
            )),
        }
    }

    fn assign_name(
        &mut self,
        name: &str,
        value: Value<'a>,
        scope: &Rc<Scope<'a>>,
        span: Span,
    ) -> EResult<()> {
        // Writing to a `T.alloc_var` scalar stores into it — also from a
        // helper function that received it as an argument. A fresh
        // allocation assigned to the same name rebinds the name instead.
        if let Some(Value::Buffer(b)) = scope.vars.borrow().get(name).cloned() {
            let store = self.stagers.last().is_some_and(|s| {
                let fresh_alloc = matches!(value, Value::Buffer(v) if s.unnamed.contains(&v));
                s.func.buffers[b].scope == ir::Scope::Var && !s.unnamed.contains(&b) && !fresh_alloc
            });
            if store {
                let stager = self.kernel_stager("assignment to a `T.alloc_var`", span)?;
                let zero = stager.int(0);
                return self.store(b, vec![IndexItem::Point(zero)], value, span, span);
            }
        }
        if self.staged_frame() {
            match &value {
                Value::Buffer(b) => {
                    if let Some(s) = self.stagers.last_mut() {
                        s.name_buffer(*b, name);
                    }
                }
                Value::Expr(e) => {
                    let s = self.stager("assignment", span)?;
                    let trivially_pure =
                        matches!(s.func.exprs[*e], ir::Expr::Literal(_) | ir::Expr::Var(_));
                    if !trivially_pure && !super::tir::substituted_let(s, *e) {
                        let var = s.bind_let(name, *e, span);
                        let ve = s.var(var);
                        scope.set(name, Value::Expr(ve));
                        return Ok(());
                    }
                }
                // A vector is computed where it is bound, as TileLang's
                // vector `let` is: lanes that read memory become `let`s.
                Value::Vector(l) => {
                    let s = self.stager("assignment", span)?;
                    let mut bound: Vec<(Handle<ir::Expr>, Handle<ir::Expr>)> = Vec::new();
                    let mut lanes = Vec::with_capacity(l.lanes.len());
                    for &e in &l.lanes {
                        let v = if !s.reads_memory(e) {
                            e
                        } else if let Some(&(_, v)) = bound.iter().find(|(x, _)| *x == e) {
                            v
                        } else {
                            let var = s.bind_let(name, e, span);
                            let v = s.var(var);
                            bound.push((e, v));
                            v
                        };
                        lanes.push(v);
                    }
                    let ramp = l.ramp;
                    scope.set(
                        name,
                        Value::Vector(Rc::new(super::vector::Lanes { lanes, ramp })),
                    );
                    return Ok(());
                }
                Value::Access(a) if a.items.iter().all(|i| matches!(i, IndexItem::Point(_))) => {
                    let s = self.stager("assignment", span)?;
                    let rank = s.func.buffers[a.buffer].shape.len();
                    if a.items.len() == rank {
                        let e = s.value_expr(&value, None, span)?;
                        return self.assign_name(name, Value::Expr(e), scope, span);
                    }
                }
                _ => {}
            }
        }
        scope.set(name, value);
        Ok(())
    }

    /// Stores `value` into `buffer[items]` (every item a point).
    pub fn store(
        &mut self,
        buffer: Handle<ir::Buffer>,
        items: Vec<IndexItem>,
        value: Value<'a>,
        target_span: Span,
        span: Span,
    ) -> EResult<()> {
        let stager = self.kernel_stager("a buffer store", span)?;
        let mut indices = Vec::new();
        for item in items {
            match item {
                IndexItem::Point(e) => indices.push(e),
                IndexItem::Slice { .. } => {
                    return Err(Box::new(
                        Diagnostic::error(codes::BAD_SUBSCRIPT, "cannot assign to a buffer region", target_span)
                            .with_label("this subscript has a slice")
                            .with_note("use `T.fill(region, value)` or `T.copy(src, region)` for whole regions"),
                    ));
                }
            }
        }
        let b = &stager.func.buffers[buffer];
        if indices.len() != b.shape.len() {
            return Err(stage::rank_mismatch(
                &b.name,
                b.shape.len(),
                indices.len(),
                target_span,
                "store target",
            ));
        }
        let dtype = b.dtype;
        stager.wrap_negative(buffer, &mut indices);
        let v = stager.value_expr(&value, Some(dtype), span)?;
        let v = stager.cast(v, dtype, span)?;
        stager.emit(
            Stmt::Store {
                buffer,
                indices,
                value: v,
            },
            span,
        );
        Ok(())
    }

    fn aug_assign(&mut self, s: &'a ast::StmtAugAssign, scope: &Rc<Scope<'a>>) -> EResult<()> {
        let span = span_of(s);
        let op = PyBinOp::from_ast(s.op);
        let rhs = self.eval(&s.value, scope)?;
        match &*s.target {
            ast::Expr::Name(n) => {
                let current = self.lookup(n.id.as_str(), scope, span_of(n))?;
                // In-place list extension.
                if let (Value::List(l), PyBinOp::Add) = (&current, op) {
                    let extra = self.iterate(&rhs, span)?;
                    super::budget::grow_elements(extra.len(), "`+=` on a list", span)?;
                    l.borrow_mut().extend(extra);
                    return Ok(());
                }
                let new = self.binop(op, &current, &rhs, span)?;
                self.assign_name(n.id.as_str(), new, scope, span_of(n))
            }
            ast::Expr::Subscript(sub) => {
                let base = self.eval(&sub.value, scope)?;
                let current = self.subscript(&base, &sub.slice, scope, span_of(&*s.target))?;
                let new = self.binop(op, &current, &rhs, span)?;
                self.assign(&s.target, new, scope, span)
            }
            other => Err(err(
                codes::BAD_ASSIGNMENT,
                "this augmented assignment target is not supported",
                span_of(other),
            )),
        }
    }

    fn ann_assign(&mut self, s: &'a ast::StmtAnnAssign, scope: &Rc<Scope<'a>>) -> EResult<()> {
        let span = span_of(s);
        if let Some(v) = &s.value {
            let value = self.eval(v, scope)?;
            return self.assign(&s.target, value, scope, span);
        }
        // `A: T.Tensor((M, K), dtype)` in an eager kernel declares parameter A.
        let ast::Expr::Name(n) = &*s.target else {
            return Ok(());
        };
        let ann = self.eval(&s.annotation, scope)?;
        let Value::TensorType(tt) = ann else {
            return Ok(());
        };
        let name = n.id.to_string();
        let in_eager = self.stagers.last().is_some_and(|st| st.eager.is_some());
        if !in_eager {
            return Err(Box::new(
                Diagnostic::error(codes::PLACEMENT, "a tensor annotation without a value declares a parameter only in an eager `@tilelang.jit` kernel", span)
                    .with_label("annotation without a value"),
            ));
        }
        let shape = self.param_shape_exprs(&tt.shape, span)?;
        let stager = self.stager("a parameter annotation", span)?;
        let b = stager.add_buffer(&name, tt.dtype, shape, ir::Scope::Global, span);
        if let Some(e) = stager.eager.as_mut() {
            e.declared.insert(name.clone(), b);
        }
        scope.set(&name, Value::Buffer(b));
        Ok(())
    }

    // ----------------------------------------------------------------
    // Expressions
    // ----------------------------------------------------------------

    pub fn lookup(&mut self, name: &str, scope: &Rc<Scope<'a>>, span: Span) -> EResult<Value<'a>> {
        let v = scope
            .lookup(name)
            .or_else(|| super::builtins::builtin_name(name))
            .ok_or_else(|| {
                Box::new(
                    Diagnostic::error(
                        codes::UNDEFINED_NAME,
                        format!("name `{name}` is not defined"),
                        span,
                    )
                    .with_label("not defined"),
                )
            })?;
        if let Value::Expr(e) = &v
            && let Some(st) = self.stagers.last()
            && let ir::Expr::Var(var) = st.func.exprs[*e]
            && st.is_out_of_scope(var)
        {
            let var_name = st.func.vars[var].name.clone();
            return Err(Box::new(
                Diagnostic::error(
                    codes::OUT_OF_SCOPE,
                    format!("`{name}` holds a run-time value that only exists inside the block that computed it"),
                    span,
                )
                .with_label("used here, after that block ended")
                .with_note(format!(
                    "`{name}` was bound (as IR value `%{var_name}`) inside a run-time `if`, loop or kernel; values computed there are not visible after it"
                ))
                .with_note("to carry a value out, declare `x = T.alloc_var(dtype)` before the block and assign to it inside"),
            ));
        }
        if let Value::Poison(cause) = &v {
            return Err(match cause {
                None => stage::cascade(),
                Some(d) => {
                    let mut out = Diagnostic::error(
                        codes::POISONED_NAME,
                        format!("`{name}` could not be evaluated"),
                        span,
                    )
                    .with_label("used here")
                    .with_secondary(
                        d.primary.span,
                        format!("its definition failed: {}", d.message),
                    );
                    out.notes.push(format!(
                        "the definition failed with {}: {}",
                        d.code, d.message
                    ));
                    Box::new(out)
                }
            });
        }
        Ok(v)
    }

    pub fn eval(&mut self, expr: &'a ast::Expr, scope: &Rc<Scope<'a>>) -> EResult<Value<'a>> {
        let span = span_of(expr);
        self.tick(span)?;
        let value = self.eval_expr(expr, scope, span)?;
        // What the expression created counts against the byte budget: the
        // innermost expression that crossed it is reported.
        super::budget::check(span)?;
        Ok(value)
    }

    fn eval_expr(
        &mut self,
        expr: &'a ast::Expr,
        scope: &Rc<Scope<'a>>,
        span: Span,
    ) -> EResult<Value<'a>> {
        match expr {
            ast::Expr::Name(n) => self.lookup(n.id.as_str(), scope, span),
            ast::Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(i) => i.as_i64().map(Value::Int).ok_or_else(|| {
                    err(
                        codes::COMPILE_TIME_ARITHMETIC,
                        "integer literal does not fit in 64 bits",
                        span,
                    )
                }),
                ast::Number::Float(f) => Ok(Value::Float(*f)),
                ast::Number::Complex { .. } => Err(unsupported_python("complex numbers", span)),
            },
            ast::Expr::StringLiteral(s) => Ok(Value::str(s.value.to_str())),
            ast::Expr::BooleanLiteral(b) => Ok(Value::Bool(b.value)),
            ast::Expr::NoneLiteral(_) => Ok(Value::None),
            ast::Expr::EllipsisLiteral(_) => Ok(Value::Opaque(Rc::from("Ellipsis"))),
            ast::Expr::BytesLiteral(_) => Err(unsupported_python("bytes literals", span)),
            ast::Expr::FString(f) => self.eval_fstring(f, scope),
            ast::Expr::TString(_) => Err(unsupported_python("template strings", span)),
            ast::Expr::Tuple(t) => Ok(Value::tuple(self.eval_elements(&t.elts, scope)?)),
            ast::Expr::List(l) => Ok(Value::list(self.eval_elements(&l.elts, scope)?)),
            ast::Expr::Set(_) | ast::Expr::SetComp(_) => Err(unsupported_python("sets", span)),
            ast::Expr::Dict(d) => {
                let mut items = Vec::new();
                for item in &d.items {
                    let v = self.eval(&item.value, scope)?;
                    match &item.key {
                        Some(k) => {
                            let k = self.eval(k, scope)?;
                            super::budget::work(items.len());
                            items.retain(|(old, _): &(Value<'a>, Value<'a>)| !py_eq(old, &k));
                            items.push((k, v));
                        }
                        None => match v {
                            Value::Dict(other) => items.extend(other.borrow().iter().cloned()),
                            other => {
                                return Err(err(
                                    codes::TYPE_ERROR,
                                    format!("cannot unpack {} into a dict", other.a_type_name()),
                                    span,
                                ));
                            }
                        },
                    }
                }
                Ok(Value::dict(items))
            }
            ast::Expr::Attribute(a) => {
                let base = self.eval(&a.value, scope)?;
                self.get_attr(&base, a.attr.id.as_str(), span)
            }
            ast::Expr::Subscript(s) => {
                let base = self.eval(&s.value, scope)?;
                self.subscript(&base, &s.slice, scope, span)
            }
            ast::Expr::Call(c) => {
                let callee = self.eval(&c.func, scope)?;
                let (args, kwargs) = self.eval_args(&c.arguments, scope)?;
                self.call(callee, args, kwargs, span)
            }
            ast::Expr::BinOp(b) => {
                let l = self.eval(&b.left, scope)?;
                let r = self.eval(&b.right, scope)?;
                self.binop(PyBinOp::from_ast(b.op), &l, &r, span)
            }
            ast::Expr::UnaryOp(u) => {
                let v = self.eval(&u.operand, scope)?;
                self.unaryop(u.op, v, span)
            }
            ast::Expr::BoolOp(b) => self.eval_boolop(b, scope),
            ast::Expr::Compare(c) => self.eval_compare(c, scope),
            ast::Expr::If(i) => {
                let cond = self.eval(&i.test, scope)?;
                let cond = self.plain_condition(cond, span_of(&*i.test))?;
                match cond.truthy() {
                    Some(true) => self.eval(&i.body, scope),
                    Some(false) => self.eval(&i.orelse, scope),
                    None => {
                        let a = self.eval(&i.body, scope)?;
                        let b = self.eval(&i.orelse, scope)?;
                        self.select(&cond, &a, &b, span)
                    }
                }
            }
            ast::Expr::Lambda(l) => {
                let params: &'a ast::Parameters = match &l.parameters {
                    Some(p) => p,
                    None => empty_parameters(),
                };
                let defaults = self.eval_defaults(params, scope)?;
                Ok(Value::Function(Rc::new(Closure {
                    name: "<lambda>".into(),
                    name_span: span,
                    params,
                    body: FunctionBody::Lambda(&l.body),
                    defaults,
                    scope: scope.clone(),
                    span,
                })))
            }
            ast::Expr::ListComp(c) => Ok(Value::list(self.eval_comprehension(
                &c.elt,
                None,
                &c.generators,
                scope,
            )?)),
            ast::Expr::Generator(c) => Ok(Value::list(self.eval_comprehension(
                &c.elt,
                None,
                &c.generators,
                scope,
            )?)),
            ast::Expr::DictComp(c) => {
                let pairs =
                    self.eval_comprehension(&c.key, Some(&c.value), &c.generators, scope)?;
                let items = pairs
                    .into_iter()
                    .filter_map(|p| match p {
                        Value::Tuple(t) if t.len() == 2 => Some((t[0].clone(), t[1].clone())),
                        _ => None,
                    })
                    .collect();
                Ok(Value::dict(items))
            }
            ast::Expr::Named(n) => {
                let v = self.eval(&n.value, scope)?;
                self.assign(&n.target, v.clone(), scope, span)?;
                Ok(v)
            }
            ast::Expr::Starred(_) => Err(err(
                codes::TYPE_ERROR,
                "`*` unpacking is only allowed in calls and sequence literals",
                span,
            )),
            ast::Expr::Slice(_) => Err(err(
                codes::TYPE_ERROR,
                "a slice is only allowed inside a subscript",
                span,
            )),
            ast::Expr::Await(_) | ast::Expr::Yield(_) | ast::Expr::YieldFrom(_) => {
                Err(unsupported_python("generators and `await`", span))
            }
            ast::Expr::IpyEscapeCommand(_) => Err(unsupported_python("IPython escapes", span)),
        }
    }

    fn eval_fstring(
        &mut self,
        f: &'a ast::ExprFString,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Value<'a>> {
        let mut out = String::new();
        for part in f.value.iter() {
            match part {
                ast::FStringPart::Literal(l) => out.push_str(l.as_str()),
                ast::FStringPart::FString(fs) => {
                    for el in fs.elements.iter() {
                        match el {
                            ast::InterpolatedStringElement::Literal(l) => out.push_str(&l.value),
                            ast::InterpolatedStringElement::Interpolation(i) => {
                                let v = self.eval(&i.expression, scope)?;
                                out.push_str(&v.to_py_str());
                                if out.len() > super::budget::room() {
                                    super::budget::grow_str(out.len(), "an f-string", span_of(f))?;
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Value::str(&out))
    }

    fn eval_elements(
        &mut self,
        elts: &'a [ast::Expr],
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Vec<Value<'a>>> {
        let mut out = Vec::with_capacity(elts.len());
        for e in elts {
            if let ast::Expr::Starred(s) = e {
                let v = self.eval(&s.value, scope)?;
                out.extend(self.iterate(&v, span_of(e))?);
            } else {
                out.push(self.eval(e, scope)?);
            }
        }
        Ok(out)
    }

    pub fn eval_args(
        &mut self,
        arguments: &'a ast::Arguments,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<CallArgs<'a>> {
        let args = self.eval_elements(&arguments.args, scope)?;
        let mut kwargs = Vec::new();
        for kw in arguments.keywords.iter() {
            let v = self.eval(&kw.value, scope)?;
            match &kw.arg {
                Some(name) => kwargs.push((name.id.to_string(), v)),
                None => match v {
                    Value::Dict(d) => {
                        for (k, v) in d.borrow().iter() {
                            match k {
                                Value::Str(s) => kwargs.push((s.to_string(), v.clone())),
                                _ => {
                                    return Err(err(
                                        codes::BAD_ARGUMENTS,
                                        "keywords must be strings",
                                        span_of(kw),
                                    ));
                                }
                            }
                        }
                    }
                    other => {
                        return Err(err(
                            codes::BAD_ARGUMENTS,
                            format!("`**` needs a dict, got {}", other.a_type_name()),
                            span_of(kw),
                        ));
                    }
                },
            }
        }
        Ok((args, kwargs))
    }

    fn eval_comprehension(
        &mut self,
        elt: &'a ast::Expr,
        value: Option<&'a ast::Expr>,
        generators: &'a [ast::Comprehension],
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Vec<Value<'a>>> {
        let inner = Scope::child(scope);
        let mut out = Vec::new();
        self.comprehension_level(elt, value, generators, &inner, &mut out)?;
        Ok(out)
    }

    fn comprehension_level(
        &mut self,
        elt: &'a ast::Expr,
        value: Option<&'a ast::Expr>,
        generators: &'a [ast::Comprehension],
        scope: &Rc<Scope<'a>>,
        out: &mut Vec<Value<'a>>,
    ) -> EResult<()> {
        let Some((first, rest)) = generators.split_first() else {
            let k = self.eval(elt, scope)?;
            match value {
                Some(v) => {
                    let v = self.eval(v, scope)?;
                    super::budget::charge_elements(1);
                    out.push(Value::tuple(vec![k, v]));
                }
                None => {
                    super::budget::charge_elements(1);
                    out.push(k);
                }
            }
            return Ok(());
        };
        let iterable = self.eval(&first.iter, scope)?;
        for item in self.iterate(&iterable, span_of(&first.iter))? {
            self.tick(span_of(first))?;
            self.assign(&first.target, item, scope, span_of(first))?;
            let mut keep = true;
            for cond in &first.ifs {
                let c = self.eval(cond, scope)?;
                match c.truthy() {
                    Some(b) => keep &= b,
                    None => {
                        return Err(err(
                            codes::NOT_CONSTANT,
                            "comprehension conditions must be compile-time values",
                            span_of(cond),
                        ));
                    }
                }
            }
            if keep {
                self.comprehension_level(elt, value, rest, scope, out)?;
            }
        }
        Ok(())
    }

    fn eval_boolop(&mut self, b: &'a ast::ExprBoolOp, scope: &Rc<Scope<'a>>) -> EResult<Value<'a>> {
        let span = span_of(b);
        let is_and = matches!(b.op, ast::BoolOp::And);
        let mut acc: Option<Value<'a>> = None;
        for e in &b.values {
            // Python short-circuit while everything is a compile-time value.
            if let Some(prev) = &acc {
                match prev.truthy() {
                    Some(t) if t != is_and => return Ok(prev.clone()),
                    Some(_) => {
                        acc = Some(self.eval(e, scope)?);
                        continue;
                    }
                    None => {}
                }
            }
            let v = self.eval(e, scope)?;
            acc = Some(match acc {
                None => v,
                Some(prev) => {
                    // At least one side is staged: build a logical IR op.
                    if let Some(t) = v.truthy() {
                        // `x and True` is x; `x and False` is False.
                        if t == is_and { prev } else { v }
                    } else {
                        let st = self.stager("a run-time `and`/`or`", span)?;
                        let l = st.bool_expr(&prev, span)?;
                        let r = st.bool_expr(&v, span)?;
                        let op = if is_and { BinaryOp::And } else { BinaryOp::Or };
                        Value::Expr(st.binary(op, l, r, span)?)
                    }
                }
            });
        }
        Ok(acc.unwrap_or(Value::None))
    }

    fn eval_compare(
        &mut self,
        c: &'a ast::ExprCompare,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Value<'a>> {
        let span = span_of(c);
        let mut left = self.eval(&c.left, scope)?;
        let mut result: Option<Value<'a>> = None;
        for (op, right_expr) in c.ops.iter().zip(c.comparators.iter()) {
            // Python stops at the first false link of a chain.
            if result.as_ref().and_then(Value::truthy) == Some(false) {
                break;
            }
            let right = match (op, right_expr) {
                (ast::CmpOp::In | ast::CmpOp::NotIn, ast::Expr::Set(s)) => {
                    super::pylib::membership_set(self, s, scope)?
                }
                _ => self.eval(right_expr, scope)?,
            };
            let r = self.compare(*op, &left, &right, span)?;
            result = Some(match result {
                None => r,
                Some(prev) => match (prev.truthy(), r.truthy()) {
                    (Some(false), _) => return Ok(prev),
                    (Some(true), _) => r,
                    _ => {
                        let st = self.stager("a chained comparison", span)?;
                        let a = st.bool_expr(&prev, span)?;
                        let b = st.bool_expr(&r, span)?;
                        Value::Expr(st.binary(BinaryOp::And, a, b, span)?)
                    }
                },
            });
            left = right;
        }
        Ok(result.unwrap_or(Value::Bool(true)))
    }

    pub fn compare(
        &mut self,
        op: ast::CmpOp,
        a: &Value<'a>,
        b: &Value<'a>,
        span: Span,
    ) -> EResult<Value<'a>> {
        if a.is_staged() || b.is_staged() {
            let ir_op = match op {
                ast::CmpOp::Eq => BinaryOp::Eq,
                ast::CmpOp::NotEq => BinaryOp::Ne,
                ast::CmpOp::Lt => BinaryOp::Lt,
                ast::CmpOp::LtE => BinaryOp::Le,
                ast::CmpOp::Gt => BinaryOp::Gt,
                ast::CmpOp::GtE => BinaryOp::Ge,
                _ => {
                    return Err(err(
                        codes::TYPE_ERROR,
                        format!("`{}` cannot compare run-time values", op.as_str()),
                        span,
                    ));
                }
            };
            let st = self.stager("a run-time comparison", span)?;
            return Ok(Value::Expr(st.op_values(ir_op, a, b, span)?));
        }
        if let Some(r) = super::torch_tensor::compare(op.as_str(), a, b, span) {
            return r;
        }
        let res = match op {
            ast::CmpOp::Eq => py_eq(a, b),
            ast::CmpOp::NotEq => !py_eq(a, b),
            ast::CmpOp::Is => py_is(a, b),
            ast::CmpOp::IsNot => !py_is(a, b),
            ast::CmpOp::In | ast::CmpOp::NotIn => {
                let found = match b {
                    Value::Str(s) => match a {
                        Value::Str(needle) => s.contains(&**needle),
                        _ => false,
                    },
                    Value::Dict(d) => {
                        super::budget::work(d.borrow().len());
                        d.borrow().iter().any(|(k, _)| py_eq(k, a))
                    }
                    other => self.iterate(other, span)?.iter().any(|x| py_eq(x, a)),
                };
                found == matches!(op, ast::CmpOp::In)
            }
            _ => {
                let ord = py_cmp(a, b).ok_or_else(|| {
                    err(
                        codes::TYPE_ERROR,
                        format!(
                            "`{}` is not supported between {} and {}",
                            op.as_str(),
                            a.a_type_name(),
                            b.a_type_name()
                        ),
                        span,
                    )
                })?;
                match op {
                    ast::CmpOp::Lt => ord.is_lt(),
                    ast::CmpOp::LtE => ord.is_le(),
                    ast::CmpOp::Gt => ord.is_gt(),
                    _ => ord.is_ge(),
                }
            }
        };
        Ok(Value::Bool(res))
    }

    pub fn binop(
        &mut self,
        op: PyBinOp,
        a: &Value<'a>,
        b: &Value<'a>,
        span: Span,
    ) -> EResult<Value<'a>> {
        if matches!(a, Value::Poison(_)) || matches!(b, Value::Poison(_)) {
            return Err(stage::cascade());
        }
        if matches!(a, Value::Vector(_)) || matches!(b, Value::Vector(_)) {
            return super::vector::binop(self, op, a, b, span);
        }
        if a.is_staged() || b.is_staged() {
            let st = self.stager("a run-time arithmetic expression", span)?;
            return Ok(Value::Expr(st.binop(op, a, b, span)?));
        }
        if let Some(r) = super::torch_tensor::binop(op, a, b, span) {
            return r;
        }
        match py_binop(op, a, b, span)? {
            Some(v) => Ok(v),
            None => Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!(
                        "`{}` is not supported between {} and {}",
                        op.symbol(),
                        a.a_type_name(),
                        b.a_type_name()
                    ),
                    span,
                )
                .with_label(format!(
                    "{} {} {}",
                    a.a_type_name(),
                    op.symbol(),
                    b.a_type_name()
                )),
            )),
        }
    }

    fn unaryop(&mut self, op: ast::UnaryOp, v: Value<'a>, span: Span) -> EResult<Value<'a>> {
        if v.is_staged() {
            let st = self.stager("a run-time expression", span)?;
            let e = st.value_expr(&v, None, span)?;
            let t = st.ty(e);
            let r = match op {
                ast::UnaryOp::UAdd => e,
                ast::UnaryOp::USub => {
                    if t.is_bool() {
                        let e = st.cast(e, DType::I32, span)?;
                        st.unary(UnaryOp::Neg, e, span)?
                    } else {
                        st.unary(UnaryOp::Neg, e, span)?
                    }
                }
                ast::UnaryOp::Not => {
                    let b = st.bool_expr(&Value::Expr(e), span)?;
                    st.unary(UnaryOp::Not, b, span)?
                }
                ast::UnaryOp::Invert => st.unary(UnaryOp::BitNot, e, span)?,
            };
            return Ok(Value::Expr(r));
        }
        Ok(match (op, &v) {
            (ast::UnaryOp::Not, _) => Value::Bool(!v.truthy().ok_or_else(stage::cascade)?),
            (ast::UnaryOp::USub, Value::Int(i)) => Value::Int(
                i.checked_neg()
                    .ok_or_else(|| err(codes::COMPILE_TIME_ARITHMETIC, "integer overflow", span))?,
            ),
            (ast::UnaryOp::USub, Value::Bool(b)) => Value::Int(-i64::from(*b)),
            (ast::UnaryOp::USub, Value::Float(f)) => Value::Float(-f),
            (ast::UnaryOp::UAdd, Value::Int(_) | Value::Float(_)) => v,
            (ast::UnaryOp::UAdd, Value::Bool(b)) => Value::Int(i64::from(*b)),
            (ast::UnaryOp::Invert, Value::Int(i)) => Value::Int(!i),
            (ast::UnaryOp::Invert, Value::Bool(b)) => Value::Int(!i64::from(*b)),
            _ => {
                return Err(err(
                    codes::TYPE_ERROR,
                    format!(
                        "unary `{}` is not supported on {}",
                        op.as_str(),
                        v.a_type_name()
                    ),
                    span,
                ));
            }
        })
    }

    /// `cond ? a : b` with a run-time condition.
    pub fn select(
        &mut self,
        cond: &Value<'a>,
        a: &Value<'a>,
        b: &Value<'a>,
        span: Span,
    ) -> EResult<Value<'a>> {
        if let Some(t) = cond.truthy() {
            return Ok(if t { a.clone() } else { b.clone() });
        }
        let st = self.stager("a run-time conditional expression", span)?;
        let c = st.bool_expr(cond, span)?;
        // Reuse binop's operand reconciliation by building `a + 0`-free pairs.
        let (ea, eb) = {
            let ea = st.value_expr(a, None, span);
            let eb = st.value_expr(b, None, span);
            match (ea, eb) {
                (Ok(x), Ok(y)) => {
                    let (tx, ty) = (st.ty(x), st.ty(y));
                    let t = if a.is_staged() && !b.is_staged() {
                        tx
                    } else if b.is_staged() && !a.is_staged() {
                        ty
                    } else if tx.is_float() || ty.is_float() {
                        if tx.is_float() && (!ty.is_float() || tx.bits() >= ty.bits()) {
                            tx
                        } else {
                            ty
                        }
                    } else if tx.bits() >= ty.bits() {
                        tx
                    } else {
                        ty
                    };
                    let x = st.value_expr(a, Some(t), span)?;
                    let y = st.value_expr(b, Some(t), span)?;
                    (st.cast(x, t, span)?, st.cast(y, t, span)?)
                }
                (Err(e), _) | (_, Err(e)) => return Err(e),
            }
        };
        Ok(Value::Expr(st.expr(
            ir::Expr::Select {
                cond: c,
                then: ea,
                otherwise: eb,
            },
            span,
        )?))
    }

    // ----------------------------------------------------------------
    // Subscripts
    // ----------------------------------------------------------------

    fn subscript(
        &mut self,
        base: &Value<'a>,
        slice: &'a ast::Expr,
        scope: &Rc<Scope<'a>>,
        span: Span,
    ) -> EResult<Value<'a>> {
        match base {
            Value::Buffer(b) => {
                let parts = self.eval_subscript_lanes(slice, scope)?;
                self.check_subscript_rank(*b, parts.len(), slice)?;
                super::vector::subscript(self, *b, parts, span)
            }
            Value::View(v) => {
                let items = self.eval_subscript_parts(slice, scope)?;
                super::views::subscript(self, v, items, span)
            }
            Value::Poison(_) => Err(stage::cascade()),
            Value::Opaque(what) if super::tl_extra::is_random_id(base) => {
                Ok(Value::Opaque(Rc::from(format!("{what}[...]"))))
            }
            _ => {
                let key = match slice {
                    ast::Expr::Slice(s) => {
                        let mut part =
                            |e: &'a Option<Box<ast::Expr>>| -> EResult<Option<Value<'a>>> {
                                e.as_deref().map(|e| self.eval(e, scope)).transpose()
                            };
                        let parts = [part(&s.lower)?, part(&s.upper)?, part(&s.step)?];
                        Value::Slice(Rc::new(parts))
                    }
                    other => self.eval(other, scope)?,
                };
                self.index_value(base, &key, span)
            }
        }
    }

    /// Python indexing of a plain value.
    /// A condition's value: a one-element build-time tensor as its
    /// element (`if t:`), anything else as it is.
    fn plain_condition(&self, v: Value<'a>, span: Span) -> EResult<Value<'a>> {
        match &v {
            Value::Torch(t) => super::torch_tensor::scalar_value(t, "a condition", span),
            _ => Ok(v),
        }
    }

    pub fn index_value(
        &mut self,
        base: &Value<'a>,
        key: &Value<'a>,
        span: Span,
    ) -> EResult<Value<'a>> {
        match (base, key) {
            (Value::Torch(t), key) => super::torch_tensor::index(t, key, span),
            (Value::Tuple(_) | Value::List(_) | Value::Str(_), Value::Slice(parts)) => {
                let items: Vec<Value<'a>> = match base {
                    Value::Str(s) => s.chars().map(|c| Value::str(&c.to_string())).collect(),
                    other => other.as_sequence().unwrap_or_default(),
                };
                let len = items.len() as i64;
                let get = |v: &Option<Value<'a>>| -> EResult<Option<i64>> {
                    match v {
                        None | Some(Value::None) => Ok(None),
                        Some(x) => x.as_int().map(Some).ok_or_else(|| {
                            err(codes::TYPE_ERROR, "slice bounds must be integers", span)
                        }),
                    }
                };
                let step = get(&parts[2])?.unwrap_or(1);
                if step == 0 {
                    return Err(err(codes::INDEX_ERROR, "slice step cannot be zero", span));
                }
                let norm = |i: i64, default: i64| -> i64 {
                    let i = if i < 0 { i + len } else { i };
                    if step > 0 {
                        i.clamp(0, len)
                    } else {
                        i.clamp(-1, len - 1)
                    }
                    .min(if default > len { len } else { i64::MAX })
                };
                let start = match get(&parts[0])? {
                    Some(i) => norm(i, 0),
                    None => {
                        if step > 0 {
                            0
                        } else {
                            len - 1
                        }
                    }
                };
                let stop = match get(&parts[1])? {
                    Some(i) => norm(i, 0),
                    None => {
                        if step > 0 {
                            len
                        } else {
                            -1
                        }
                    }
                };
                let mut out = Vec::new();
                let mut i = start;
                while (step > 0 && i < stop) || (step < 0 && i > stop) {
                    if let Some(v) = usize::try_from(i).ok().and_then(|i| items.get(i)) {
                        out.push(v.clone());
                    }
                    i += step;
                }
                Ok(match base {
                    Value::Tuple(_) => Value::tuple(out),
                    Value::Str(_) => {
                        Value::str(&out.iter().map(Value::to_py_str).collect::<String>())
                    }
                    _ => Value::list(out),
                })
            }
            (Value::Tuple(_) | Value::List(_), _) => {
                let items = base.as_sequence().unwrap_or_default();
                let i = seq_index(key, items.len(), span)?;
                Ok(items[i].clone())
            }
            (Value::Str(s), _) => {
                let chars: Vec<char> = s.chars().collect();
                let i = seq_index(key, chars.len(), span)?;
                Ok(Value::str(&chars[i].to_string()))
            }
            (Value::Dict(d), _) => d
                .borrow()
                .iter()
                .inspect(|_| super::budget::work(1))
                .find(|(k, _)| py_eq(k, key))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| {
                    err(
                        codes::INDEX_ERROR,
                        format!("key {} is not in the dict", key.repr()),
                        span,
                    )
                }),
            (Value::Module("T"), _) | (Value::Builtin(_), _) => {
                // `T.Tensor[(M, K), dtype]` style annotations.
                let args = key.as_sequence().unwrap_or_else(|| vec![key.clone()]);
                self.call(base.clone(), args, vec![], span)
            }
            _ => Err(err(
                codes::TYPE_ERROR,
                format!("{} cannot be indexed", base.a_type_name()),
                span,
            )),
        }
    }

    /// Evaluates the items of `buffer[...]`.
    /// Refuses a subscript of more items than the buffer has dimensions.
    fn check_subscript_rank(
        &mut self,
        buffer: Handle<ir::Buffer>,
        count: usize,
        slice: &'a ast::Expr,
    ) -> EResult<()> {
        let st = self.stager("a buffer subscript", span_of(slice))?;
        let b = &st.func.buffers[buffer];
        if count > b.shape.len() {
            return Err(stage::rank_mismatch(
                &b.name,
                b.shape.len(),
                count,
                span_of(slice),
                "too many indices",
            ));
        }
        Ok(())
    }

    /// Evaluates the items of a subscript, without checking them against a
    /// buffer's rank.
    pub fn eval_subscript_parts(
        &mut self,
        slice: &'a ast::Expr,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Vec<IndexItem>> {
        self.eval_subscript_lanes(slice, scope)?
            .into_iter()
            .map(|p| match p {
                super::vector::Part::Item(i) => Ok(i),
                super::vector::Part::Lanes(_, span) => Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_SUBSCRIPT,
                        "a vector index (`T.Ramp`) is taken only in a subscript of a buffer that is loaded or stored",
                        span,
                    )
                    .with_label("vector index"),
                )),
            })
            .collect()
    }

    /// Evaluates the items of a subscript, keeping vector indices
    /// (`T.Ramp`) as they are (`vector.rs`).
    pub fn eval_subscript_lanes(
        &mut self,
        slice: &'a ast::Expr,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<Vec<super::vector::Part>> {
        use super::vector::Part;
        let parts: Vec<&'a ast::Expr> = match slice {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        let mut items = Vec::new();
        for p in parts {
            let pspan = span_of(p);
            match p {
                ast::Expr::Slice(s) => {
                    if let Some(step) = &s.step {
                        let v = self.eval(step, scope)?;
                        if v.as_int() != Some(1) {
                            return Err(Box::new(
                                Diagnostic::error(
                                    codes::BAD_SUBSCRIPT,
                                    "buffer slices with a step are not supported",
                                    span_of(&**step),
                                )
                                .with_label("step here"),
                            ));
                        }
                    }
                    let start = match &s.lower {
                        Some(e) => Some(self.index_expr(e, scope)?),
                        None => None,
                    };
                    let stop = match &s.upper {
                        Some(e) => Some(self.index_expr(e, scope)?),
                        None => None,
                    };
                    items.push(Part::Item(IndexItem::Slice { start, stop }));
                }
                ast::Expr::Starred(_) => {
                    let v = self.eval(p, scope)?;
                    let _ = v;
                }
                _ => {
                    let v = self.eval(p, scope)?;
                    match v {
                        Value::Tuple(_) | Value::List(_) => {
                            // `A[idx]` with a tuple built elsewhere.
                            for x in v.as_sequence().unwrap_or_default() {
                                let e = self.index_expr_of(&x, pspan)?;
                                items.push(Part::Item(IndexItem::Point(e)));
                            }
                        }
                        Value::Vector(l) => items.push(Part::Lanes(l, pspan)),
                        other => {
                            let e = self.index_expr_of(&other, pspan)?;
                            items.push(Part::Item(IndexItem::Point(e)));
                        }
                    }
                }
            }
        }
        Ok(items)
    }

    fn index_expr(&mut self, e: &'a ast::Expr, scope: &Rc<Scope<'a>>) -> EResult<Handle<ir::Expr>> {
        let v = self.eval(e, scope)?;
        self.index_expr_of(&v, span_of(e))
    }

    /// Converts a value to an integer index expression.
    pub fn index_expr_of(&mut self, v: &Value<'a>, span: Span) -> EResult<Handle<ir::Expr>> {
        if matches!(v, Value::Float(_)) {
            return Err(Box::new(
                Diagnostic::error(codes::TYPE_ERROR, "buffer indices must be integers", span)
                    .with_label("this is a float"),
            ));
        }
        let st = self.stager("a buffer index", span)?;
        let e = st.value_expr(v, None, span)?;
        let t = st.ty(e);
        if !t.is_int() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!("buffer indices must be integers, this has type {t}"),
                    span,
                )
                .with_label("not an integer"),
            ));
        }
        Ok(e)
    }

    /// Buffer shape values → IR extents.
    pub fn shape_exprs(
        &mut self,
        shape: &[Value<'a>],
        span: Span,
    ) -> EResult<Vec<Handle<ir::Expr>>> {
        self.extents_from(shape, 1, span)
    }

    /// A tensor parameter's shape values → IR extents. An extent may be 0,
    /// as in TileLang (a tensor with no elements: every access to it is
    /// out of bounds).
    pub fn param_shape_exprs(
        &mut self,
        shape: &[Value<'a>],
        span: Span,
    ) -> EResult<Vec<Handle<ir::Expr>>> {
        self.extents_from(shape, 0, span)
    }

    fn extents_from(
        &mut self,
        shape: &[Value<'a>],
        least: i64,
        span: Span,
    ) -> EResult<Vec<Handle<ir::Expr>>> {
        let mut out = Vec::new();
        for v in shape {
            if let Some(i) = v.as_int()
                && i < least
            {
                let what = if least == 0 {
                    "tensor parameter extents must not be negative"
                } else {
                    "buffer extents must be positive"
                };
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("{what}, got {i}"),
                        span,
                    )
                    .with_label("in this shape"),
                ));
            }
            out.push(self.index_expr_of(v, span)?);
        }
        Ok(out)
    }

    /// Iterates a plain value.
    pub fn iterate(&mut self, v: &Value<'a>, span: Span) -> EResult<Vec<Value<'a>>> {
        match v {
            Value::Tuple(_) | Value::List(_) => {
                let items = v.as_sequence().unwrap_or_default();
                super::budget::grow_elements(items.len(), "iterating a sequence", span)?;
                Ok(items)
            }
            Value::Str(s) => Ok(s.chars().map(|c| Value::str(&c.to_string())).collect()),
            // TileLang's dtypes are strings (`tvm.DataType` subclasses
            // `str`): iterating one yields the characters of its name.
            Value::DType(d) => Ok(d
                .tilelang_name()
                .chars()
                .map(|c| Value::str(&c.to_string()))
                .collect()),
            Value::Dict(d) => {
                super::budget::grow_elements(d.borrow().len(), "iterating a dict", span)?;
                Ok(d.borrow().iter().map(|(k, _)| k.clone()).collect())
            }
            Value::Torch(t) => super::torch_tensor::iterate(t, span),
            Value::Poison(_) => Err(stage::cascade()),
            Value::Loop(_) => Err(Box::new(
                Diagnostic::error(
                    codes::PLACEMENT,
                    "a kernel loop range can only be iterated by a `for` statement in kernel code",
                    span,
                )
                .with_label("iterated here"),
            )),
            other => Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!("{} is not iterable", other.a_type_name()),
                    span,
                )
                .with_label("not iterable at compile time"),
            )),
        }
    }

    // ----------------------------------------------------------------
    // Calls
    // ----------------------------------------------------------------

    pub fn call(
        &mut self,
        callee: Value<'a>,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Value<'a>> {
        match callee {
            Value::Function(c) => self.call_closure(&c, args, kwargs, span, false),
            Value::Macro(c) => {
                if self.stagers.is_empty() {
                    return Err(Box::new(
                        Diagnostic::error(codes::PLACEMENT, format!("macro `{}` can only be called from kernel code", c.name), span)
                            .with_label("called outside a kernel"),
                    ));
                }
                self.call_closure(&c, args, kwargs, span, true)
            }
            Value::Builtin(name) => self.call_builtin(name, args, kwargs, span),
            Value::Method(recv, name) => super::builtins::call_method(self, &recv, name, args, kwargs, span),
            Value::DType(d) => super::tl::dtype_call(self, d, args, span),
            Value::Jit(j) => self.call_jit(&j, args, kwargs, span),
            Value::Autotune(a) => self.call_autotune(&a, args, kwargs, span),
            Value::Kernel(k) => Err(Box::new(
                Diagnostic::error(
                    codes::UNSUPPORTED_TILELANG,
                    format!("calling the kernel `{}` runs it on a device, which does not happen at compile time", k.function.name),
                    span,
                )
                .with_label("run-time call")
                .with_note("use `tilec run FILE --kernel '...'` to run a kernel"),
            )),
            Value::Poison(_) => Err(stage::cascade()),
            c if super::pyclass::handles(&c) => super::pyclass::call(self, c, args, kwargs, span),
            Value::Opaque(what) => {
                let d = Diagnostic::error(codes::UNSUPPORTED_TILELANG, format!("`{what}` is not supported by tilec"), span)
                    .with_label("not available at compile time");
                Err(Box::new(match super::blackwell::unsupported_note(&what) {
                    Some(note) => d.with_note(note),
                    None => d,
                }))
            }
            other => Err(Box::new(
                Diagnostic::error(codes::NOT_CALLABLE, format!("{} is not callable", other.a_type_name()), span)
                    .with_label("called here"),
            )),
        }
    }

    pub fn call_builtin(
        &mut self,
        name: &'static str,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Value<'a>> {
        if let Some(rest) = name.strip_prefix("T.") {
            super::tl::call(self, rest, args, kwargs, span)
        } else if super::pylib::handles(name) {
            super::pylib::call(self, name, args, kwargs, span)
        } else if super::pyclass::handles(&Value::Builtin(name)) {
            super::pyclass::call(self, Value::Builtin(name), args, kwargs, span)
        } else {
            super::builtins::call(self, name, args, kwargs, span)
        }
    }

    /// Binds call arguments to a closure's parameters (defaults included).
    pub fn bind_params(
        &mut self,
        c: &Closure<'a>,
        mut args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
        allow_missing: bool,
    ) -> EResult<Vec<(String, Option<Value<'a>>)>> {
        let positional: Vec<&ast::ParameterWithDefault> = c
            .params
            .posonlyargs
            .iter()
            .chain(c.params.args.iter())
            .collect();
        let mut bound: Vec<(String, Option<Value<'a>>)> = positional
            .iter()
            .chain(c.params.kwonlyargs.iter().collect::<Vec<_>>().iter())
            .map(|p| (p.parameter.name.id.to_string(), None))
            .collect();
        let mut extra_positional = Vec::new();
        if args.len() > positional.len() {
            extra_positional = args.split_off(positional.len());
        }
        for (slot, v) in bound.iter_mut().zip(args) {
            slot.1 = Some(v);
        }
        if !extra_positional.is_empty() && c.params.vararg.is_none() {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_ARGUMENTS,
                    format!(
                        "`{}` takes {} positional arguments but {} were given",
                        c.name,
                        positional.len(),
                        positional.len() + extra_positional.len()
                    ),
                    span,
                )
                .with_label("too many arguments")
                .with_secondary(c.span, "defined here"),
            ));
        }
        let mut extra_kw = Vec::new();
        for (k, v) in kwargs {
            match bound.iter_mut().find(|(n, _)| *n == k) {
                Some(slot) if slot.1.is_some() => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_ARGUMENTS,
                            format!("`{}` got several values for argument `{k}`", c.name),
                            span,
                        )
                        .with_label("duplicate argument"),
                    ));
                }
                Some(slot) => slot.1 = Some(v),
                None if c.params.kwarg.is_some() => extra_kw.push((Value::str(&k), v)),
                None => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::BAD_ARGUMENTS,
                            format!("`{}` has no parameter named `{k}`", c.name),
                            span,
                        )
                        .with_label("unknown keyword argument")
                        .with_secondary(c.span, "defined here")
                        .with_note(format!(
                            "its parameters are: {}",
                            c.param_names().join(", ")
                        )),
                    ));
                }
            }
        }
        for slot in bound.iter_mut() {
            if slot.1.is_none()
                && let Some((_, d)) = c.defaults.iter().find(|(n, _)| *n == slot.0)
            {
                slot.1 = Some(d.clone());
            }
        }
        if !allow_missing && let Some((missing, _)) = bound.iter().find(|(_, v)| v.is_none()) {
            return Err(Box::new(
                Diagnostic::error(
                    codes::BAD_ARGUMENTS,
                    format!("`{}` is missing a value for parameter `{missing}`", c.name),
                    span,
                )
                .with_label("in this call")
                .with_secondary(c.span, "defined here"),
            ));
        }
        if let Some(va) = &c.params.vararg {
            bound.push((va.name.id.to_string(), Some(Value::tuple(extra_positional))));
        }
        if let Some(kw) = &c.params.kwarg {
            bound.push((kw.name.id.to_string(), Some(Value::dict(extra_kw))));
        }
        Ok(bound)
    }

    pub fn call_closure(
        &mut self,
        c: &Rc<Closure<'a>>,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
        staged: bool,
    ) -> EResult<Value<'a>> {
        if self.depth >= MAX_DEPTH {
            return Err(Box::new(
                Diagnostic::error(
                    codes::EVAL_LIMIT,
                    "compile-time recursion is too deep",
                    span,
                )
                .with_label("200 nested calls deep here")
                .with_note("look for a function that calls itself without reaching its base case"),
            ));
        }
        let bound = self.bind_params(c, args, kwargs, span, false)?;
        let scope = Scope::child(&c.scope);
        for (n, v) in bound {
            scope.set(&n, v.unwrap_or(Value::None));
        }
        self.depth += 1;
        self.frames.push(staged);
        let result = match c.body {
            FunctionBody::Def(def) => self.exec_block(&def.body, &scope).map(|flow| match flow {
                Flow::Return(v) => v,
                _ => Value::None,
            }),
            FunctionBody::Lambda(body) => self.eval(body, &scope),
        };
        self.frames.pop();
        self.depth -= 1;
        result
    }

    fn call_jit(
        &mut self,
        j: &JitValue<'a>,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Value<'a>> {
        let result = match &j.inner {
            Value::Function(c) if is_eager(c) => self.stage_eager(c, args, kwargs, span)?,
            Value::None => {
                // `tilelang.jit(func)` called as a function rather than a decorator.
                let [f] = args.as_slice() else {
                    return Err(err(
                        codes::BAD_ARGUMENTS,
                        "`tilelang.jit(...)` needs the function to wrap",
                        span,
                    ));
                };
                return self.apply_jit(
                    JitValue {
                        inner: Value::None,
                        out_idx: j.out_idx.clone(),
                        pass_configs: j.pass_configs.clone(),
                        span: j.span,
                    },
                    f.clone(),
                );
            }
            inner => self.call(inner.clone(), args, kwargs, span)?,
        };
        match result {
            Value::Kernel(k) => {
                let mut f = k.function.clone();
                apply_jit_attrs(&mut f, j, span)?;
                Ok(Value::Kernel(Rc::new(KernelValue {
                    function: f,
                    list_warnings: k.list_warnings.clone(),
                })))
            }
            other => Err(Box::new(
                Diagnostic::error(
                    codes::NO_KERNEL,
                    format!(
                        "the `@tilelang.jit` builder returned {} instead of a `@T.prim_func`",
                        other.a_type_name()
                    ),
                    span,
                )
                .with_label("in this call")
                .with_secondary(j.span, "jit applied here"),
            )),
        }
    }

    fn call_autotune(
        &mut self,
        a: &AutotuneValue<'a>,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Value<'a>> {
        let kwargs = self.autotune_kwargs(a, &args, kwargs, span)?;
        // A configuration's `pass_configs` is no builder parameter: the
        // tuner compiles that candidate with them merged over the jit's.
        let per_config = match self.first_autotune_config(a, span)? {
            Some(Value::Dict(d)) => d
                .borrow()
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(k) if &**k == "pass_configs"))
                .map(|(_, v)| v.clone()),
            _ => None,
        };
        let inner = match (&a.inner, per_config) {
            (_, None) => a.inner.clone(),
            (Value::Jit(j), Some(pc)) => {
                let mut pass_configs = j.pass_configs.clone();
                pass_configs.extend(super::builtins::pass_config_map(self, &pc, span));
                Value::Jit(Rc::new(JitValue {
                    inner: j.inner.clone(),
                    out_idx: j.out_idx.clone(),
                    pass_configs,
                    span: j.span,
                }))
            }
            (_, Some(_)) => {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::UNSUPPORTED_TILELANG,
                        "an autotune configuration's `pass_configs` needs a `@tilelang.jit` builder under `@autotune`",
                        span,
                    )
                    .with_label("configuration with pass_configs")
                    .with_note("write `@autotune(...)` over `@tilelang.jit(...)`, or pass the pass configs to `tilelang.jit`"),
                ));
            }
        };
        self.call(inner, args, kwargs, span)
    }

    /// The configuration tilec builds an autotuned builder with: the first.
    fn first_autotune_config(
        &mut self,
        a: &AutotuneValue<'a>,
        span: Span,
    ) -> EResult<Option<Value<'a>>> {
        let configs = match &a.configs {
            Value::Function(_) | Value::Builtin(_) => {
                self.call(a.configs.clone(), vec![], vec![], span)?
            }
            other => other.clone(),
        };
        Ok(configs.as_sequence().and_then(|v| v.into_iter().next()))
    }

    /// The keyword arguments an autotuned call runs with.
    pub fn autotune_kwargs(
        &mut self,
        a: &AutotuneValue<'a>,
        args: &[Value<'a>],
        mut kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Vec<(String, Value<'a>)>> {
        // tilec does not search: every configured parameter the call does
        // not pass explicitly takes its value from the first configuration
        // (over the builder's default, as the tuner would).
        let first = self.first_autotune_config(a, span)?;
        if let Some(Value::Dict(d)) = first {
            let closure = match &a.inner {
                Value::Jit(j) => match &j.inner {
                    Value::Function(c) => Some(c.clone()),
                    _ => None,
                },
                Value::Function(c) => Some(c.clone()),
                _ => None,
            };
            if let Some(c) = closure {
                let positional: Vec<String> =
                    c.param_names().into_iter().take(args.len()).collect();
                for (k, v) in d.borrow().iter() {
                    let Value::Str(k) = k else { continue };
                    if &**k == "pass_configs" {
                        continue;
                    }
                    let given = positional.iter().any(|n| n == &**k)
                        || kwargs.iter().any(|(n, _)| n == &**k);
                    if !given {
                        kwargs.push((k.to_string(), v.clone()));
                    }
                }
            }
        }
        Ok(kwargs)
    }

    // ----------------------------------------------------------------
    // Staging kernels
    // ----------------------------------------------------------------

    /// Stages a `@T.prim_func` body into an IR function.
    fn stage_prim_func(&mut self, c: &Rc<Closure<'a>>) -> EResult<Value<'a>> {
        let FunctionBody::Def(def) = c.body else {
            return Err(err(
                codes::TYPE_ERROR,
                "`T.prim_func` needs a `def`",
                c.span,
            ));
        };
        let scope = Scope::child(&c.scope);
        self.stagers.push(Stager::new(&c.name));
        let diags_before = self.diags.len();
        let result = self.stage_params(def, &c.scope, &scope);
        if let Err(d) = result {
            self.stagers.pop();
            return Err(d);
        }
        self.frames.push(true);
        self.depth += 1;
        let flow = if super::tir::launches_nothing(&def.body, &scope) {
            super::tir::stage_single_thread(self, &def.body, &scope, c.name_span)
        } else {
            self.exec_block(&def.body, &scope)
        };
        self.depth -= 1;
        self.frames.pop();
        let stager = self.stagers.pop();
        // A handle left unmatched after an error in the body is that
        // error's consequence.
        let staged = flow.is_ok()
            && !self.diags[diags_before..]
                .iter()
                .any(|d| d.severity == crate::front::Severity::Error);
        if let Err(d) = flow {
            self.report(d);
        }
        let Some(mut stager) = stager else {
            return Err(stage::cascade());
        };
        if staged && let Err(d) = super::match_buffer::check_matched(&stager) {
            self.report(d);
        }
        let list_warnings = std::mem::take(&mut stager.list_warnings);
        Ok(Value::Kernel(Rc::new(KernelValue {
            function: stager.finish(),
            list_warnings,
        })))
    }

    fn stage_params(
        &mut self,
        def: &'a ast::StmtFunctionDef,
        outer: &Rc<Scope<'a>>,
        scope: &Rc<Scope<'a>>,
    ) -> EResult<()> {
        for (position, p) in def.parameters.iter_non_variadic_params().enumerate() {
            let pspan = span_of(p);
            let name = p.parameter.name.id.as_str();
            let Some(ann) = &p.parameter.annotation else {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("kernel parameter `{name}` needs a type annotation"),
                        pspan,
                    )
                    .with_label("no annotation")
                    .with_note("write `name: T.Tensor((M, N), dtype)`"),
                ));
            };
            if super::match_buffer::is_handle(ann) {
                let v = super::match_buffer::declare(self, name, position, pspan)?;
                scope.set(name, v);
                continue;
            }
            let t = self.eval(ann, outer)?;
            match t {
                Value::TensorType(tt) => {
                    let shape = self.param_shape_exprs(&tt.shape, span_of(&**ann))?;
                    let st = self.stager("a kernel parameter", pspan)?;
                    let b = st.add_buffer(name, tt.dtype, shape, ir::Scope::Global, pspan);
                    st.func.params.push(ir::Param { buffer: b });
                    scope.set(name, Value::Buffer(b));
                }
                Value::DType(dtype) => {
                    let v = self.stage_scalar_param(name, dtype, position, span_of(&**ann))?;
                    scope.set(name, v);
                }
                other => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::UNSUPPORTED_TILELANG,
                            format!("kernel parameters of type {} are not supported", other.a_type_name()),
                            span_of(&**ann),
                        )
                        .with_label("annotation")
                        .with_note("tilec supports tensor parameters (`T.Tensor`, `T.Buffer`) and integer scalars (`n: T.int32`)"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Stages an eager `@tilelang.jit` kernel: tensor parameters are declared
    /// by annotations in the body, outputs by `T.empty` and `return`.
    fn stage_eager(
        &mut self,
        c: &Rc<Closure<'a>>,
        args: Vec<Value<'a>>,
        kwargs: Vec<(String, Value<'a>)>,
        span: Span,
    ) -> EResult<Value<'a>> {
        let FunctionBody::Def(def) = c.body else {
            return Err(err(
                codes::TYPE_ERROR,
                "an eager kernel needs a `def`",
                c.span,
            ));
        };
        let bound = self.bind_params(c, args, kwargs, span, true)?;
        let scope = Scope::child(&c.scope);
        let mut stager = Stager::new(&c.name);
        stager.eager = Some(EagerState::default());
        self.stagers.push(stager);
        let mut signature = Vec::new();
        for (n, v) in bound {
            match v {
                Some(v) => scope.set(&n, v),
                None => {
                    // A signature annotation declares the parameter as an
                    // annotation statement in the body would.
                    match self.eager_signature_param(def, &n, signature.len(), &c.scope) {
                        Ok(Some(v)) => {
                            scope.set(&n, v);
                            signature.push(n.clone());
                            continue;
                        }
                        Ok(None) => {}
                        Err(d) => {
                            self.stagers.pop();
                            return Err(d);
                        }
                    }
                    signature.push(n.clone());
                    scope.set(
                        &n,
                        Value::Opaque(Rc::from(format!(
                            "tensor parameter `{n}` before its `{n}: T.Tensor(...)` annotation"
                        ))),
                    );
                }
            }
        }
        if let Some(e) = self.stagers.last_mut().and_then(|st| st.eager.as_mut()) {
            e.signature = signature;
        }
        self.frames.push(true);
        self.depth += 1;
        let flow = self.exec_block(&def.body, &scope);
        self.depth -= 1;
        self.frames.pop();
        let Some(mut stager) = self.stagers.pop() else {
            return Err(stage::cascade());
        };
        let returned = match flow {
            Ok(Flow::Return(v)) => Some(v),
            Ok(_) => None,
            Err(d) => {
                self.report(d);
                None
            }
        };
        let mut eager = stager.eager.take().unwrap_or_default();
        if let Some(v) = returned {
            let items = match &v {
                Value::Tuple(t) => t.to_vec(),
                other => vec![other.clone()],
            };
            for item in items {
                match item {
                    Value::Buffer(b) => eager.returned.push(b),
                    Value::None => {}
                    other => {
                        return Err(err(
                            codes::TYPE_ERROR,
                            format!(
                                "an eager kernel can only return tensors, not {}",
                                other.a_type_name()
                            ),
                            span,
                        ));
                    }
                }
            }
        }
        // Parameters: annotated tensors in signature order, then outputs.
        let mut params = Vec::new();
        for n in &eager.signature {
            match eager.declared.get(n) {
                Some(b) => params.push(*b),
                None if eager.scalars.contains(n) => {}
                None => {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::MISSING_PARAMETER,
                            format!("tensor parameter `{n}` is never annotated"),
                            c.span,
                        )
                        .with_label("in this eager kernel")
                        .with_note(format!(
                            "add `{n}: T.Tensor((...), dtype)` to the body, or give `{n}` a value"
                        )),
                    ));
                }
            }
        }
        let mut out_idx = Vec::new();
        for b in eager.outputs.iter().chain(eager.returned.iter()) {
            if !params.contains(b) {
                params.push(*b);
            }
            if (eager.returned.contains(b) || eager.outputs.contains(b))
                && let Some(i) = params.iter().position(|p| p == b)
            {
                let i = u32::try_from(i).unwrap_or(u32::MAX);
                if !out_idx.contains(&i) {
                    out_idx.push(i);
                }
            }
        }
        stager.func.params = params
            .into_iter()
            .map(|buffer| ir::Param { buffer })
            .collect();
        stager.func.attrs.out_idx = out_idx;
        let list_warnings = std::mem::take(&mut stager.list_warnings);
        Ok(Value::Kernel(Rc::new(KernelValue {
            function: stager.finish(),
            list_warnings,
        })))
    }

    pub fn get_attr(&mut self, base: &Value<'a>, name: &str, span: Span) -> EResult<Value<'a>> {
        super::builtins::get_attr(self, base, name, span)
    }

    /// The stager's thread variable for `T.get_thread_binding`.
    pub fn thread_var(&mut self, span: Span) -> EResult<Handle<ir::Expr>> {
        let st = self.kernel_stager("`T.get_thread_binding`", span)?;
        let Some(k) = st.kernel else {
            return Err(stage::cascade());
        };
        Ok(st.var(k.thread_var))
    }
}

/// Python `is` on the values the evaluator can tell apart by identity.
fn py_is<'a>(a: &Value<'a>, b: &Value<'a>) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Builtin(_) | Value::DType(_) | Value::Module(_) | Value::Policy(_), _) => {
            py_eq(a, b)
        }
        (Value::Function(x), Value::Function(y)) => Rc::ptr_eq(x, y),
        (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
        (Value::Buffer(x), Value::Buffer(y)) => x == y,
        (Value::Object(x), Value::Object(y)) => Rc::ptr_eq(x, y),
        (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// Whether a jit-decorated function is an eager kernel (it stages its own
/// body) rather than a builder returning a `@T.prim_func`.
pub(crate) fn is_eager(c: &Closure<'_>) -> bool {
    let FunctionBody::Def(def) = c.body else {
        return false;
    };
    fn has_prim_func(stmts: &[ast::Stmt]) -> bool {
        stmts.iter().any(|s| match s {
            ast::Stmt::FunctionDef(f) => {
                f.decorator_list
                    .iter()
                    .any(|d| decorator_mentions(&d.expression, "prim_func"))
                    || has_prim_func(&f.body)
            }
            ast::Stmt::If(i) => {
                has_prim_func(&i.body) || i.elif_else_clauses.iter().any(|c| has_prim_func(&c.body))
            }
            _ => false,
        })
    }
    fn has_with(stmts: &[ast::Stmt]) -> bool {
        stmts.iter().any(|s| match s {
            ast::Stmt::With(_) => true,
            ast::Stmt::If(i) => {
                has_with(&i.body) || i.elif_else_clauses.iter().any(|c| has_with(&c.body))
            }
            ast::Stmt::For(f) => has_with(&f.body),
            _ => false,
        })
    }
    !has_prim_func(&def.body) && (has_with(&def.body) || super::tir::binds_launch_axes(&def.body))
}

pub(crate) fn decorator_mentions(e: &ast::Expr, name: &str) -> bool {
    match e {
        ast::Expr::Name(n) => n.id.as_str() == name,
        ast::Expr::Attribute(a) => a.attr.id.as_str() == name,
        ast::Expr::Call(c) => decorator_mentions(&c.func, name),
        _ => false,
    }
}

fn apply_jit_attrs(f: &mut ir::Function, j: &JitValue<'_>, span: Span) -> EResult<()> {
    if let Some(idx) = &j.out_idx {
        let n = i64::try_from(f.params.len() + f.scalars.len()).unwrap_or(i64::MAX);
        let mut out = Vec::new();
        for &i in idx {
            let k = if i < 0 { n + i } else { i };
            if k < 0 || k >= n {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("`out_idx` {i} is out of range for a kernel with {n} parameters"),
                        j.span,
                    )
                    .with_label("out_idx given here")
                    .with_secondary(span, "kernel built here"),
                ));
            }
            let k = super::params::buffer_index(f, usize::try_from(k).unwrap_or(0)).map_err(|name| {
                Box::new(
                    Diagnostic::error(
                        codes::BAD_TILELANG_ARGUMENT,
                        format!("`out_idx` {i} names the scalar parameter `{name}`; outputs are tensors"),
                        j.span,
                    )
                    .with_label("out_idx given here")
                    .with_secondary(span, "kernel built here"),
                )
            })?;
            let k = u32::try_from(k).unwrap_or(0);
            if !out.contains(&k) {
                out.push(k);
            }
        }
        f.attrs.out_idx = out;
    }
    for (k, v) in &j.pass_configs {
        f.attrs.pass_configs.insert(k.clone(), v.clone());
    }
    Ok(())
}

pub(crate) fn seq_index(key: &Value<'_>, len: usize, span: Span) -> EResult<usize> {
    let i = key.as_int().ok_or_else(|| {
        err(
            codes::TYPE_ERROR,
            format!("indices must be integers, not {}", key.a_type_name()),
            span,
        )
    })?;
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let j = if i < 0 { i + len_i } else { i };
    if j < 0 || j >= len_i {
        return Err(err(
            codes::INDEX_ERROR,
            format!("index {i} is out of range for length {len}"),
            span,
        ));
    }
    usize::try_from(j).map_err(|_| err(codes::INDEX_ERROR, "index out of range", span))
}

fn unsupported_python(what: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(codes::UNSUPPORTED_PYTHON, format!("{what} are not supported by the tilec front end"), span)
            .with_label("not supported")
            .with_note("kernel files may use functions, closures, ints, floats, strings, tuples, lists and dicts at compile time"),
    )
}

/// The module value an `import` binds.
pub(crate) fn module_value<'a>(name: &str) -> Value<'a> {
    if let Some(m) = super::pylib::module(name) {
        return m;
    }
    match name {
        "tilelang.language" => Value::Module("T"),
        "tilelang" => Value::Module("tilelang"),
        "tilelang.autotuner" => Value::Module("tilelang.autotuner"),
        "tilelang.layout" | "tilelang.intrinsics" => Value::Module("tilelang.layout"),
        "torch" => Value::Module("torch"),
        "math" => Value::Module("math"),
        "itertools" => Value::Module("itertools"),
        "functools" => Value::Module("functools"),
        other => Value::OpaqueModule(Rc::from(other)),
    }
}

/// Names a statement binds (for poisoning after a failure).
fn bound_names(stmt: &ast::Stmt) -> Vec<String> {
    fn targets(e: &ast::Expr, out: &mut Vec<String>) {
        match e {
            ast::Expr::Name(n) => out.push(n.id.to_string()),
            ast::Expr::Tuple(t) => t.elts.iter().for_each(|e| targets(e, out)),
            ast::Expr::List(l) => l.elts.iter().for_each(|e| targets(e, out)),
            ast::Expr::Starred(s) => targets(&s.value, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match stmt {
        ast::Stmt::FunctionDef(f) => out.push(f.name.id.to_string()),
        ast::Stmt::ClassDef(c) => out.push(c.name.id.to_string()),
        ast::Stmt::Assign(a) => a.targets.iter().for_each(|t| targets(t, &mut out)),
        ast::Stmt::AugAssign(a) => targets(&a.target, &mut out),
        ast::Stmt::AnnAssign(a) => targets(&a.target, &mut out),
        ast::Stmt::For(f) => targets(&f.target, &mut out),
        ast::Stmt::Import(i) => {
            for a in &i.names {
                out.push(a.asname.as_ref().map_or_else(
                    || a.name.id.split('.').next().unwrap_or_default().to_string(),
                    |n| n.id.to_string(),
                ));
            }
        }
        ast::Stmt::ImportFrom(i) => {
            for a in &i.names {
                out.push(a.asname.as_ref().unwrap_or(&a.name).id.to_string());
            }
        }
        ast::Stmt::With(w) => {
            for item in &w.items {
                if let Some(v) = &item.optional_vars {
                    targets(v, &mut out);
                }
            }
            out.extend(w.body.iter().flat_map(bound_names));
        }
        _ => {}
    }
    // Names assigned inside compound statements are bound by them too.
    match stmt {
        ast::Stmt::If(i) => {
            out.extend(i.body.iter().flat_map(bound_names));
            for c in &i.elif_else_clauses {
                out.extend(c.body.iter().flat_map(bound_names));
            }
        }
        ast::Stmt::For(f) => out.extend(f.body.iter().chain(&f.orelse).flat_map(bound_names)),
        ast::Stmt::While(w) => out.extend(w.body.iter().chain(&w.orelse).flat_map(bound_names)),
        ast::Stmt::Try(t) => {
            out.extend(
                t.body
                    .iter()
                    .chain(&t.orelse)
                    .chain(&t.finalbody)
                    .flat_map(bound_names),
            );
            for h in &t.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                out.extend(h.name.iter().map(|n| n.id.to_string()));
                out.extend(h.body.iter().flat_map(bound_names));
            }
        }
        _ => {}
    }
    out
}

fn empty_parameters() -> &'static ast::Parameters {
    static EMPTY: std::sync::OnceLock<ast::Parameters> = std::sync::OnceLock::new();
    EMPTY.get_or_init(ast::Parameters::default)
}

/// `list` without the entries at the statements `dropped` marks.
fn without(list: Option<Vec<i64>>, dropped: &[bool]) -> Option<Vec<i64>> {
    list.map(|l| {
        l.into_iter()
            .zip(dropped)
            .filter(|(_, d)| !**d)
            .map(|(v, _)| v)
            .collect()
    })
}
