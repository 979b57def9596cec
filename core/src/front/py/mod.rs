//! The TileLang front end: a partial evaluator for a Python subset.
//!
//! [`compile`] parses a file with ruff's Python parser, runs its module-level
//! code at compile time ([`eval`]), picks the kernel to build (the
//! `--kernel` call, or the file's single builder called with its defaults),
//! and returns the staged Tile IR with every diagnostic found on the way.
//!
//! Files: `value.rs` (compile-time values), `eval.rs` (statements,
//! expressions, calls, staging of kernels), `stage.rs` (IR construction and
//! typing rules), `tl.rs` (the `T.*` vocabulary), `builtins.rs` (Python
//! built-ins, `math`, methods), `codes.rs` (stable diagnostic codes).

mod big_layout;
mod blackwell;
mod budget;
mod builtins;
pub mod codes;
mod cp_async;
mod eval;
mod match_buffer;
mod over_arrival;
mod params;
mod pyclass;
mod pylib;
mod reducer;
mod safe_value;
mod sblock;
mod stage;
mod thread_dims;
mod tir;
mod tl;
mod tl_extra;
mod tl_more;
mod torch_tensor;
mod user_modules;
mod value;
mod vector;
mod views;
mod warp;

use crate::front::Diagnostic;
use crate::ir::{Module, Span};
use ast::visitor::{Visitor, walk_expr, walk_stmt};
use eval::{Evaluator, span_of};
use rustpython_ruff_python_ast as ast;
use rustpython_ruff_python_parser as parser;
use rustpython_ruff_text_size::{Ranged, TextRange, TextSize};
use std::collections::BTreeMap;
use std::rc::Rc;
use value::Value;

pub use budget::{BuildLimits, DEFAULT_MAX_BYTES, DEFAULT_MAX_STEPS};
pub use pylib::TargetFacts;

/// What to compile from a file.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A call expression such as `matmul(1024, 1024, 1024, 128, 128, 32)`,
    /// evaluated in the file's namespace. `None`: the file's single builder
    /// (or `prim_func`), called with its defaults.
    pub kernel: Option<String>,
    /// `-D NAME=VALUE` bindings: values for `T.const` names and keyword
    /// parameters of the builder. Values are Python literals (`1024`,
    /// `True`, `"float16"`).
    pub defines: BTreeMap<String, String>,
    /// The target compiled for: build-time device queries
    /// (`torch.cuda.get_device_capability()`, `driver.get_num_sms()`) are
    /// answered from it. `None`: such queries are errors.
    pub target: Option<TargetFacts>,
}

/// A compile-time argument value of the builder call that produced a kernel.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub enum CallArg {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// Any other value, as Python would `repr` it (approximately).
    Other(String),
}

/// Which builder was called, and with what, to produce the kernel: every
/// parameter of the builder with the value it was bound to (defaults
/// included), in declaration order. Tools use it to pick an independent
/// reference implementation with the same parameters.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct KernelCall {
    pub builder: String,
    pub args: Vec<(String, CallArg)>,
}

impl KernelCall {
    /// The value bound to parameter `name`.
    pub fn arg(&self, name: &str) -> Option<&CallArg> {
        self.args.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// The result of compiling a file: the module (when no error occurred) and
/// every diagnostic, errors and warnings.
#[derive(Debug, Default)]
pub struct Output {
    pub module: Option<Module>,
    /// The builder call that produced the module's kernel, when the kernel
    /// came from a builder (absent for a bare top-level `prim_func`).
    pub call: Option<KernelCall>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Output {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Stack for compiling: deeply nested source and compile-time recursion are
/// bounded by diagnostics, not by the caller's stack size.
const COMPILE_STACK_BYTES: usize = 256 << 20;

/// Compiles TileLang source text to Tile IR. Imports of the file's own
/// helper modules stay opaque (see [`compile_file`]).
pub fn compile(source: &str, options: &Options) -> Output {
    compile_file(source, None, options)
}

/// Compiles the TileLang file at `path`, whose text is `source`: its helper
/// modules (`import quantize`, `from examples.x.y import f`) are found
/// beside it and, for dotted names, in its ancestor folders, and run by the
/// evaluator. `None`: such imports stay opaque, as with [`compile`].
pub fn compile_file(source: &str, path: Option<&std::path::Path>, options: &Options) -> Output {
    compile_file_with_limits(source, path, options, BuildLimits::default())
}

/// [`compile_file`] with build-time evaluation bounded by `limits` instead
/// of the defaults: past either budget the build fails with T0109.
pub fn compile_file_with_limits(
    source: &str,
    path: Option<&std::path::Path>,
    options: &Options,
    limits: BuildLimits,
) -> Output {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("tilec-front".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, || {
                compile_on_this_thread(source, path, options, limits)
            });
        match worker {
            Ok(handle) => match handle.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread could be started: compile here.
            Err(_) => compile_on_this_thread(source, path, options, limits),
        }
    })
}

fn compile_on_this_thread(
    source: &str,
    path: Option<&std::path::Path>,
    options: &Options,
    limits: BuildLimits,
) -> Output {
    // The `--kernel` expression is parsed as text appended after the file,
    // so its nodes have spans beyond the file's end; diagnostics there are
    // rewritten to say they concern the expression.
    let combined;
    let kernel_range;
    let text: &str = match &options.kernel {
        Some(k) => {
            combined = format!("{source}\n{k}");
            let start = TextSize::try_from(source.len() + 1).unwrap_or_default();
            let end = TextSize::try_from(combined.len()).unwrap_or_default();
            kernel_range = Some(TextRange::new(start, end));
            &combined
        }
        None => {
            kernel_range = None;
            source
        }
    };
    let mut out = Output::default();
    let module = match parser::parse_module(source) {
        Ok(parsed) => parsed.into_syntax(),
        Err(e) => {
            let r = e.location;
            out.diagnostics.push(
                Diagnostic::error(
                    codes::SYNTAX,
                    format!("invalid Python syntax: {}", e.error),
                    Span::new(r.start().to_u32(), r.end().to_u32()),
                )
                .with_label("here"),
            );
            return out;
        }
    };
    if let Some(d) = too_deep(&module.body) {
        out.diagnostics.push(d);
        return out;
    }
    let kernel_expr = match kernel_range {
        Some(range) => match parser::parse_expression_range(text, range) {
            Ok(parsed) => match kernel_too_deep(&parsed.syntax().body) {
                Some(d) => {
                    out.diagnostics.push(d);
                    return out;
                }
                None => Some(parsed.into_syntax()),
            },
            Err(e) => {
                out.diagnostics.push(
                    Diagnostic::error(
                        codes::BAD_SELECTION,
                        format!("the `--kernel` expression is not valid Python: {}", e.error),
                        Span::UNKNOWN,
                    )
                    .with_note(format!(
                        "--kernel {}",
                        options.kernel.clone().unwrap_or_default()
                    )),
                );
                return out;
            }
        },
        None => None,
    };
    let mut defines = BTreeMap::new();
    for (name, value) in &options.defines {
        match parse_define(value) {
            Some(v) => {
                defines.insert(name.clone(), v);
            }
            None => out.diagnostics.push(
                Diagnostic::error(
                    codes::BAD_SELECTION,
                    format!("`-D {name}={value}`: the value is not a Python literal"),
                    Span::UNKNOWN,
                )
                .with_note("values are Python literals: 1024, 0.5, True, \"float16\""),
            ),
        }
    }
    if out.has_errors() {
        return out;
    }

    let loaded = user_modules::load(path, &module.body, text.len());
    budget::reset(limits);
    let mut ev = Evaluator::new(defines.clone());
    ev.target.clone_from(&options.target);
    ev.user_modules = Some(Rc::new(user_modules::UserModules::new(&loaded)));
    ev.exec_module(&module.body);
    let selected = match &kernel_expr {
        Some(expr) => select_by_expression(&mut ev, &expr.body),
        None => select_single(&mut ev, &module.body, &defines),
    };
    match selected {
        Ok((Value::Kernel(k), call)) => {
            let function = k.function.clone();
            ev.diags
                .extend(unfollowed_lists(&function, &k.list_warnings));
            check_function(&function, &mut ev.diags);
            over_arrival::over_arrivals(&function, &mut ev.diags);
            out.module = Some(Module {
                functions: vec![function],
            });
            out.call = call;
        }
        Ok((other, _)) => ev.diags.push(
            Diagnostic::error(
                codes::NO_KERNEL,
                format!(
                    "the selected kernel evaluated to {}, not a kernel",
                    other.a_type_name()
                ),
                Span::UNKNOWN,
            )
            .with_note("a builder must return a function decorated with `@T.prim_func`"),
        ),
        Err(d) => ev.report(d),
    }

    // `-D` values feed the front end (T.const, builder keywords) or the
    // run-time symbolic sizes; anything else is probably a typo.
    let symbols: Vec<String> = out
        .module
        .iter()
        .flat_map(|m| m.functions.iter())
        .flat_map(|f| f.symbols.iter().map(|&v| f.vars[v].name.clone()))
        .collect();
    for name in options.defines.keys() {
        if !ev.used_defines.contains(name) && !symbols.contains(name) {
            ev.diags.push(
                Diagnostic::warning(
                    codes::IGNORED,
                    format!("`-D {name}=...` is not used by this kernel"),
                    Span::UNKNOWN,
                )
                .with_note(
                    "-D binds `T.const` names, builder parameters and symbolic sizes (`T.dynamic`)",
                ),
            );
        }
    }

    let file_end = u32::try_from(source.len()).unwrap_or(u32::MAX);
    let kernel_text = options.kernel.clone().unwrap_or_default();
    for mut d in ev.diags {
        loaded.relocate(&mut d);
        if d.primary.span.start > file_end {
            d.primary.span = Span::UNKNOWN;
            d.notes
                .push(format!("in the `--kernel` expression `{kernel_text}`"));
        }
        d.secondary.retain(|l| l.span.start <= file_end);
        out.diagnostics.push(d);
    }
    if out.has_errors() {
        out.module = None;
    }
    out
}

/// Parses a `-D` value as a Python literal.
fn parse_define<'a>(text: &str) -> Option<Value<'a>> {
    let parsed = parser::parse_expression(text).ok()?;
    literal_value(&parsed.syntax().body)
}

fn literal_value<'a>(e: &ast::Expr) -> Option<Value<'a>> {
    Some(match e {
        ast::Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => Value::Int(i.as_i64()?),
            ast::Number::Float(f) => Value::Float(*f),
            ast::Number::Complex { .. } => return None,
        },
        ast::Expr::BooleanLiteral(b) => Value::Bool(b.value),
        ast::Expr::NoneLiteral(_) => Value::None,
        ast::Expr::StringLiteral(s) => Value::str(s.value.to_str()),
        ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => {
            match literal_value(&u.operand)? {
                Value::Int(i) => Value::Int(i.checked_neg()?),
                Value::Float(f) => Value::Float(-f),
                _ => return None,
            }
        }
        ast::Expr::Tuple(t) => Value::tuple(
            t.elts
                .iter()
                .map(literal_value)
                .collect::<Option<Vec<_>>>()?,
        ),
        ast::Expr::List(l) => Value::list(
            l.elts
                .iter()
                .map(literal_value)
                .collect::<Option<Vec<_>>>()?,
        ),
        // A bare name such as `float16` is taken as a string.
        ast::Expr::Name(n) => Value::str(n.id.as_str()),
        _ => return None,
    })
}

fn call_arg(v: &Value<'_>) -> CallArg {
    match v {
        Value::Int(i) => CallArg::Int(*i),
        Value::Float(f) => CallArg::Float(*f),
        Value::Bool(b) => CallArg::Bool(*b),
        Value::Str(s) => CallArg::Str(s.to_string()),
        Value::DType(d) => CallArg::Str(d.tilelang_name().to_string()),
        other => CallArg::Other(other.repr()),
    }
}

/// The user function behind a builder value.
fn builder_closure<'a>(v: &Value<'a>) -> Option<Rc<value::Closure<'a>>> {
    match v {
        Value::Function(c) => Some(c.clone()),
        Value::Jit(j) => builder_closure(&j.inner),
        Value::Autotune(a) => builder_closure(&a.inner),
        _ => None,
    }
}

type Selected<'a> = Result<(Value<'a>, Option<KernelCall>), Box<Diagnostic>>;

/// Calls `builder` and records the call's bound parameters.
fn call_builder<'a>(
    ev: &mut Evaluator<'a>,
    builder: Value<'a>,
    args: Vec<Value<'a>>,
    kwargs: Vec<(String, Value<'a>)>,
    span: Span,
) -> Selected<'a> {
    let kwargs = match &builder {
        Value::Autotune(a) => ev.autotune_kwargs(a, &args, kwargs, span)?,
        _ => kwargs,
    };
    let call = match builder_closure(&builder) {
        Some(c) => {
            let bound = ev.bind_params(&c, args.clone(), kwargs.clone(), span, true)?;
            // Autotuned builders get open parameters from their configs, and
            // eager kernels declare their tensor parameters in the body.
            let tuned = matches!(builder, Value::Autotune(_));
            let eager = matches!(&builder, Value::Jit(_)) && eval::is_eager(&c);
            if let Some((missing, _)) = bound.iter().find(|(_, v)| v.is_none())
                && !tuned
                && !eager
            {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::MISSING_PARAMETER,
                        format!("builder `{}` has no value for parameter `{missing}`", c.name),
                        c.name_span,
                    )
                    .with_label("this builder is the kernel")
                    .with_note(format!(
                        "give it a default, call it with `--kernel '{}(...)'`, or pass `-D {missing}=VALUE`",
                        c.name
                    )),
                ));
            }
            Some(KernelCall {
                builder: c.name.clone(),
                args: bound
                    .iter()
                    .filter_map(|(n, v)| v.as_ref().map(|v| (n.clone(), call_arg(v))))
                    .collect(),
            })
        }
        None => None,
    };
    let result = ev.call(builder, args, kwargs, span)?;
    Ok((result, call))
}

fn select_by_expression<'a>(ev: &mut Evaluator<'a>, expr: &'a ast::Expr) -> Selected<'a> {
    let globals = ev.globals.clone();
    let span = span_of(expr);
    if let ast::Expr::Call(c) = expr {
        let callee = ev.eval(&c.func, &globals)?;
        let (args, mut kwargs) = ev.eval_args(&c.arguments, &globals)?;
        add_define_kwargs(ev, &callee, args.len(), &mut kwargs);
        return call_builder(ev, callee, args, kwargs, span);
    }
    let value = ev.eval(expr, &globals)?;
    match value {
        Value::Kernel(_) => Ok((value, None)),
        builder => {
            let mut kwargs = Vec::new();
            add_define_kwargs(ev, &builder, 0, &mut kwargs);
            call_builder(ev, builder, vec![], kwargs, span)
        }
    }
}

/// `-D NAME=VALUE` for a parameter of the builder becomes a keyword
/// argument (unless the call gives one).
fn add_define_kwargs<'a>(
    ev: &mut Evaluator<'a>,
    builder: &Value<'a>,
    positional: usize,
    kwargs: &mut Vec<(String, Value<'a>)>,
) {
    let Some(c) = builder_closure(builder) else {
        return;
    };
    for name in c.param_names().into_iter().skip(positional) {
        if let Some(v) = ev.defines.get(&name).cloned()
            && !kwargs.iter().any(|(k, _)| *k == name)
        {
            ev.used_defines.insert(name.clone());
            kwargs.push((name, v));
        }
    }
}

/// Finds the file's single builder (or prim_func) and calls it.
fn select_single<'a>(
    ev: &mut Evaluator<'a>,
    body: &'a [ast::Stmt],
    _defines: &BTreeMap<String, Value<'a>>,
) -> Selected<'a> {
    let mut candidates: Vec<(String, Span)> = Vec::new();
    for stmt in body {
        let ast::Stmt::FunctionDef(def) = stmt else {
            continue;
        };
        let name = def.name.id.to_string();
        let Some(v) = ev.globals.vars.borrow().get(&name).cloned() else {
            continue;
        };
        let looks_like_kernel = contains_prim_func(&def.body)
            || def.decorator_list.iter().any(|d| {
                ["prim_func", "jit", "autotune"]
                    .iter()
                    .any(|n| eval::decorator_mentions(&d.expression, n))
            });
        let is_builder = match &v {
            Value::Kernel(_) | Value::Jit(_) | Value::Autotune(_) => true,
            Value::Function(_) => contains_prim_func(&def.body),
            // A kernel whose own definition failed: its error is the answer.
            Value::Poison(Some(_)) => looks_like_kernel,
            _ => false,
        };
        if is_builder && !candidates.iter().any(|(n, _)| *n == name) {
            candidates.push((name, span_of(&def.name)));
        }
    }
    if let [(name, _)] = candidates.as_slice()
        && let Some(Value::Poison(Some(d))) = ev.globals.vars.borrow().get(name)
    {
        return Err(Box::new((**d).clone()));
    }
    match candidates.as_slice() {
        [] => Err(Box::new(
            Diagnostic::error(codes::NO_KERNEL, "no kernel found in this file", Span::UNKNOWN)
                .with_note("a kernel is a function decorated with `@T.prim_func`, `@tilelang.jit`, or a builder that returns a `@T.prim_func`"),
        )),
        [(name, span)] => {
            let v = ev.globals.lookup(name).unwrap_or(Value::None);
            match v {
                Value::Kernel(_) => Ok((v, None)),
                builder => {
                    let mut kwargs = Vec::new();
                    add_define_kwargs(ev, &builder, 0, &mut kwargs);
                    call_builder(ev, builder, vec![], kwargs, *span)
                }
            }
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
            let mut d = Diagnostic::error(
                codes::AMBIGUOUS_KERNEL,
                format!("this file defines several kernels ({}); choose one with `--kernel`", names.join(", ")),
                many[0].1,
            )
            .with_label("first candidate")
            .with_note(format!("for example: --kernel '{}()'", names[0]));
            for (n, s) in &many[1..] {
                d = d.with_secondary(*s, format!("`{n}` is another"));
            }
            Err(Box::new(d))
        }
    }
}

fn contains_prim_func(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        ast::Stmt::FunctionDef(f) => {
            f.decorator_list
                .iter()
                .any(|d| eval::decorator_mentions(&d.expression, "prim_func"))
                || contains_prim_func(&f.body)
        }
        ast::Stmt::If(i) => {
            contains_prim_func(&i.body)
                || i.elif_else_clauses
                    .iter()
                    .any(|c| contains_prim_func(&c.body))
        }
        _ => false,
    })
}

/// Runs the IR verifier and reports what it finds as diagnostics. The front
/// end checks most rules itself with better messages; what reaches the
/// verifier is either a rule only it checks (fragment indexing) or a bug.
/// The warnings about `T.Pipelined` lists (`Stager::list_warnings`) that
/// hold for the finished function: the lists of those loops are not
/// followed with its pass configs either.
fn unfollowed_lists(
    f: &crate::ir::Function,
    warnings: &[(crate::ir::Handle<crate::ir::Var>, Diagnostic)],
) -> Vec<Diagnostic> {
    use crate::ir::{Stmt, lists};
    let mut out = Vec::new();
    f.body.walk(&mut |stmt, _| {
        if let Stmt::For { var, .. } = stmt
            && matches!(
                lists::loop_form(stmt, f),
                Some(lists::ListForm::Default { .. })
            )
        {
            out.extend(
                warnings
                    .iter()
                    .filter(|(v, _)| v == var)
                    .map(|(_, d)| d.clone()),
            );
        }
    });
    out
}

fn check_function(function: &crate::ir::Function, diags: &mut Vec<Diagnostic>) {
    use crate::ir::verify::{VerifyError, verify_input_function};
    if diags.iter().any(Diagnostic::is_error) {
        return;
    }
    let Err(errors) = verify_input_function(function) else {
        return;
    };
    for e in errors {
        let d = match &e {
            VerifyError::FragmentIndex { name, dim, .. } => Diagnostic::error(
                codes::FRAGMENT_INDEX,
                format!("index {dim} of fragment `{name}` inside `T.Parallel` does not use a parallel loop variable"),
                e.span(),
            )
                .with_label(format!("`{name}` is indexed here"))
                .with_note("inside `T.Parallel`, store into a fragment through the parallel loop variables (a constant 0 only on a dimension of extent 1): any other index has several iterations write one element"),
            VerifyError::ExprTooDeep { depth, limit, .. } => Diagnostic::error(
                codes::EXPR_TOO_DEEP,
                format!("this expression nests {depth} levels deep; the limit is {limit}"),
                e.span(),
            )
                .with_label("nested too deeply")
                .with_note(format!("a chain `a + b + c + ...` nests one level per operand, also when built up through Python variables; add into a `T.alloc_var` (or a fragment) in steps of fewer than {limit} terms")),
            VerifyError::DivisionByZero { op, .. } => Diagnostic::error(
                codes::COMPILE_TIME_ARITHMETIC,
                format!("`{}` by a constant zero", op.symbol()),
                e.span(),
            )
                .with_label("the divisor is 0 here")
                .with_note("Python raises ZeroDivisionError here, and a GPU gives an undefined result"),
            VerifyError::BadExtent { what, value, min, .. } => Diagnostic::error(
                codes::BAD_TILELANG_ARGUMENT,
                format!("{what} is {value}; it must be at least {min}"),
                e.span(),
            )
                .with_label("here"),
            VerifyError::IndexOutOfBounds {
                name,
                dim,
                lo,
                hi,
                extent,
                ..
            } => Diagnostic::error(
                codes::INDEX_OUT_OF_BOUNDS,
                format!("index {dim} of `{name}` takes the values {lo} to {hi}, outside its extent {extent}"),
                e.span(),
            )
                .with_label(format!("`{name}` is indexed here"))
                .with_note(format!("declare `{name}` with an extent that covers every index, or guard the access with an `if`; TileLang does not check this, and what it computes then depends on the layout it infers for `{name}`")),
            _ => Diagnostic::error(codes::VERIFY, format!("the generated IR is invalid: {e}"), e.span())
                .with_label("in the code staged from here")
                .with_note("if the source looks valid, this is a bug in tilec; please report it with this file"),
        };
        diags.push(d);
    }
}

/// Deepest nesting of source syntax (expressions and statements together)
/// the front end reads. The evaluator and the scans before it recurse over
/// the syntax tree, so deeper source is refused before they run; staged
/// expressions are held to the tighter [`crate::ir::MAX_EXPR_DEPTH`] after.
pub const MAX_SOURCE_DEPTH: u32 = 1000;

/// The first statement of `body` whose syntax nests deeper than
/// [`MAX_SOURCE_DEPTH`], as a diagnostic. The walk recurses, but never
/// more than the limit deep.
fn too_deep(body: &[ast::Stmt]) -> Option<Diagnostic> {
    too_deep_in(|walk| {
        for stmt in body {
            walk.visit_stmt(stmt);
        }
    })
}

/// Whether the `--kernel` expression nests deeper than
/// [`MAX_SOURCE_DEPTH`], as a diagnostic.
fn kernel_too_deep(expr: &ast::Expr) -> Option<Diagnostic> {
    too_deep_in(|walk| walk.visit_expr(expr)).map(|mut d| {
        d.primary.span = Span::UNKNOWN;
        d.with_note("in the `--kernel` expression")
    })
}

/// Runs `visit` with a depth-bounded walker (see [`too_deep`]).
fn too_deep_in(visit: impl FnOnce(&mut SourceDepth)) -> Option<Diagnostic> {
    let mut walk = SourceDepth {
        depth: 0,
        stmt: None,
        hit: false,
        found: None,
        chain: 0,
    };
    visit(&mut walk);
    if !walk.hit {
        return None;
    }
    let span = walk.found.map_or(Span::UNKNOWN, |range| {
        Span::new(range.start().to_u32(), range.end().to_u32())
    });
    let message = if walk.chain > 0 {
        format!(
            "a chain of {} operands nests this statement more than {MAX_SOURCE_DEPTH} levels deep; the limit is {MAX_SOURCE_DEPTH}",
            walk.chain
        )
    } else {
        format!(
            "this statement nests more than {MAX_SOURCE_DEPTH} levels deep (expressions and statements together); the limit is {MAX_SOURCE_DEPTH}"
        )
    };
    Some(
        Diagnostic::error(codes::EXPR_TOO_DEEP, message, span)
        .with_label("nested too deeply")
        .with_note(format!(
            "a chain `a + b + c + ...` nests one level per operand; a staged expression may nest at most {} levels, so add into a `T.alloc_var` (or a fragment) in steps of fewer terms",
            crate::ir::MAX_EXPR_DEPTH
        )),
    )
}

/// The walk of [`too_deep_in`]: it recurses, but never more than
/// [`MAX_SOURCE_DEPTH`] levels deep.
struct SourceDepth {
    depth: u32,
    /// The statement being walked.
    stmt: Option<TextRange>,
    /// Whether the limit was hit, and in which statement.
    hit: bool,
    found: Option<TextRange>,
    /// The operands of the binary-operator chain that went too deep.
    chain: usize,
}

impl SourceDepth {
    fn enter(&mut self) -> bool {
        if self.hit {
            return false;
        }
        if self.depth >= MAX_SOURCE_DEPTH {
            self.hit = true;
            self.found = self.stmt;
            return false;
        }
        self.depth += 1;
        true
    }
}

impl<'a> Visitor<'a> for SourceDepth {
    fn visit_stmt(&mut self, stmt: &'a ast::Stmt) {
        let outer = self.stmt.replace(stmt.range());
        if self.enter() {
            walk_stmt(self, stmt);
            self.depth -= 1;
        }
        if !self.hit {
            self.stmt = outer;
        }
    }
    fn visit_expr(&mut self, expr: &'a ast::Expr) {
        // A chain `a + b + c` nests down its left operands: walked in a
        // loop, so that its length can be reported.
        if let ast::Expr::BinOp(_) = expr {
            let mut spine = Vec::new();
            let mut leaf = expr;
            while let ast::Expr::BinOp(b) = leaf {
                spine.push(b);
                leaf = &b.left;
            }
            let n = u32::try_from(spine.len()).unwrap_or(u32::MAX);
            if self.hit {
                return;
            }
            if self.depth.saturating_add(n) >= MAX_SOURCE_DEPTH {
                self.hit = true;
                self.found = self.stmt;
                self.chain = spine.len() + 1;
                return;
            }
            // The right operand of the k-th operator from the top is k + 1
            // levels down.
            for (k, b) in (0u32..).zip(&spine) {
                self.depth += k + 1;
                self.visit_expr(&b.right);
                self.depth -= k + 1;
            }
            self.depth += n;
            self.visit_expr(leaf);
            self.depth -= n;
            return;
        }
        if self.enter() {
            walk_expr(self, expr);
            self.depth -= 1;
        }
    }
}
