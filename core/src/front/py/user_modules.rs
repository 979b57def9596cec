//! The kernel file's own helper modules (`import quantize`,
//! `from examples.gemm_sp.sparse_utils import f`).
//!
//! Before evaluation, [`load`] finds every `import` / `from ... import` of
//! the kernel file (and, recursively, of the modules it finds), resolves the
//! names as Python does for a script run from its folder — the importing
//! file's directory first; for dotted names also every ancestor directory
//! (TileLang's tests run from the repository root, where `examples` is a
//! package) — and parses the files it finds. Each module's text is parsed
//! behind blank lines so that its spans lie after the kernel file (and after
//! every earlier module): a span tells which file it is in, and
//! [`Loaded::relocate`] rewrites diagnostics found inside a module to name
//! the module's file and line.
//!
//! The evaluator runs a module the first time it is imported, in its own
//! namespace ([`Evaluator::import_user_module`]); later imports reuse it.
//! Module-level failures poison the names they bind, as in the kernel
//! file: they are errors only when used. Names that are not found keep the
//! opaque behaviour (an error when used). Nothing runs outside the
//! evaluator.

use super::eval::{Evaluator, span_of};
use super::value::{Scope, Value};
use crate::front::{Diagnostic, LineIndex};
use crate::ir::Span;
use rustpython_ruff_python_ast as ast;
use rustpython_ruff_python_parser as parser;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// At most this many helper modules are loaded for one compile.
const MAX_MODULES: usize = 64;
/// Imports nested deeper than this (module importing module ...) are left
/// unresolved.
const MAX_NESTING: usize = 16;
/// Helper files larger than this are left unresolved.
const MAX_BYTES: u64 = 4 << 20;

/// Top-level packages modelled by the evaluator or never run from source.
const NOT_USER: &[&str] = &[
    "tilelang",
    "tvm",
    "torch",
    "triton",
    "numpy",
    "np",
    "math",
    "itertools",
    "functools",
    "typing",
    "os",
    "sys",
    "argparse",
    "dataclasses",
    "enum",
    "einops",
    "scipy",
    "pytest",
];

/// A helper module found on disk.
pub(crate) struct UserFile {
    /// The dotted name it was imported under.
    pub name: String,
    pub path: PathBuf,
    /// Its text behind `base` blank lines (spans are offsets in it).
    text: String,
    base: u32,
    lines: LineIndex,
    pub body: Option<ast::ModModule>,
    /// The syntax error, when it did not parse.
    syntax: Option<Diagnostic>,
    /// The file that first imported it (`None`: the kernel file), and the
    /// span of that import there.
    importer: Option<usize>,
    import_span: Span,
}

/// Every helper module of one compile.
#[derive(Default)]
pub(crate) struct Loaded {
    /// The end of the kernel file's text (with the `--kernel` expression).
    main_end: u32,
    pub files: Vec<UserFile>,
    /// (importing file, level, dotted name) → module.
    table: Vec<(Option<usize>, u32, String, usize)>,
}

/// Finds and parses the helper modules `body` (the kernel file at `path`,
/// whose text is `main_len` bytes with the `--kernel` expression) imports.
pub(crate) fn load(path: Option<&Path>, body: &[ast::Stmt], main_len: usize) -> Loaded {
    let mut loaded = Loaded {
        main_end: u32::try_from(main_len).unwrap_or(u32::MAX),
        ..Loaded::default()
    };
    let Some(dir) = path.and_then(Path::parent) else {
        return loaded;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    loaded.scan(None, dir, body, 0);
    loaded
}

fn imports(body: &[ast::Stmt], out: &mut Vec<(u32, String, Span)>) {
    for stmt in body {
        match stmt {
            ast::Stmt::Import(i) => {
                for a in &i.names {
                    out.push((0, a.name.id.to_string(), span_of(stmt)));
                }
            }
            ast::Stmt::ImportFrom(i) => {
                let module = i.module.as_ref().map_or("", |m| m.id.as_str());
                if !module.is_empty() {
                    out.push((i.level, module.to_string(), span_of(stmt)));
                }
                // `from pkg import sub` may name a submodule.
                for a in &i.names {
                    let sub = if module.is_empty() {
                        a.name.id.to_string()
                    } else {
                        format!("{module}.{}", a.name.id)
                    };
                    out.push((i.level, sub, span_of(stmt)));
                }
            }
            ast::Stmt::FunctionDef(f) => imports(&f.body, out),
            ast::Stmt::ClassDef(c) => imports(&c.body, out),
            ast::Stmt::If(s) => {
                imports(&s.body, out);
                for c in &s.elif_else_clauses {
                    imports(&c.body, out);
                }
            }
            ast::Stmt::For(s) => {
                imports(&s.body, out);
                imports(&s.orelse, out);
            }
            ast::Stmt::While(s) => {
                imports(&s.body, out);
                imports(&s.orelse, out);
            }
            ast::Stmt::With(s) => imports(&s.body, out),
            ast::Stmt::Try(s) => {
                imports(&s.body, out);
                for h in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    imports(&h.body, out);
                }
                imports(&s.orelse, out);
                imports(&s.finalbody, out);
            }
            _ => {}
        }
    }
}

/// The file `name` (dotted) names from `dir`: `dir/a/b.py` or
/// `dir/a/b/__init__.py`.
fn file_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let rel: PathBuf = name.split('.').collect();
    let file = dir.join(&rel).with_extension("py");
    if file.is_file() {
        return Some(file);
    }
    let init = dir.join(&rel).join("__init__.py");
    init.is_file().then_some(init)
}

/// Resolves `name` imported at `level` from a file in `dir`.
fn resolve(dir: &Path, level: u32, name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.split('.').any(|p| p.is_empty()) {
        return None;
    }
    if level > 0 {
        let mut d = dir.to_path_buf();
        for _ in 1..level {
            d = d.parent()?.to_path_buf();
        }
        return file_in(&d, name);
    }
    let top = name.split('.').next().unwrap_or(name);
    if NOT_USER.contains(&top) || !matches!(super::eval::module_value(name), Value::OpaqueModule(_))
    {
        return None;
    }
    if let Some(f) = file_in(dir, name) {
        return Some(f);
    }
    if !name.contains('.') {
        return None;
    }
    let mut d = dir.canonicalize().ok()?;
    while let Some(parent) = d.parent() {
        d = parent.to_path_buf();
        if let Some(f) = file_in(&d, name) {
            return Some(f);
        }
    }
    None
}

impl Loaded {
    fn scan(&mut self, from: Option<usize>, dir: &Path, body: &[ast::Stmt], depth: usize) {
        let mut found = Vec::new();
        imports(body, &mut found);
        for (level, name, span) in found {
            if self
                .table
                .iter()
                .any(|(f, l, n, _)| *f == from && *l == level && *n == name)
            {
                continue;
            }
            let Some(path) = resolve(dir, level, &name) else {
                continue;
            };
            let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
            if let Some(i) = self.files.iter().position(|f| f.path == canonical) {
                self.table.push((from, level, name, i));
                continue;
            }
            if self.files.len() >= MAX_MODULES || depth >= MAX_NESTING {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&canonical) else {
                continue;
            };
            if meta.len() > MAX_BYTES {
                continue;
            }
            let Ok(source) = std::fs::read_to_string(&canonical) else {
                continue;
            };
            let end = self.files.last().map_or(self.main_end, |f| {
                u32::try_from(f.text.len()).unwrap_or(u32::MAX)
            });
            let Some(base) = end.checked_add(1) else {
                continue;
            };
            let mut text = "\n".repeat(base as usize);
            text.push_str(&source);
            if u32::try_from(text.len()).is_err() {
                continue;
            }
            let (body, syntax) = match parser::parse_module(&text) {
                // Too deep to evaluate: reported as a syntax error is.
                Ok(p) => match super::too_deep(&p.syntax().body) {
                    Some(d) => (None, Some(d)),
                    None => (Some(p.into_syntax()), None),
                },
                Err(e) => {
                    let r = e.location;
                    let d = Diagnostic::error(
                        super::codes::SYNTAX,
                        format!("invalid Python syntax: {}", e.error),
                        Span::new(r.start().to_u32(), r.end().to_u32()),
                    )
                    .with_label("here");
                    (None, Some(d))
                }
            };
            let lines = LineIndex::new(&text);
            let index = self.files.len();
            self.files.push(UserFile {
                name: name.clone(),
                path: canonical.clone(),
                text,
                base,
                lines,
                body,
                syntax,
                importer: from,
                import_span: span,
            });
            self.table.push((from, level, name, index));
            let sub_dir = canonical
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            // Parse trees live in `self.files`; scan a copy of the imports.
            let stmts = self.files[index]
                .body
                .as_ref()
                .map(|m| m.body.clone())
                .unwrap_or_default();
            self.scan(Some(index), &sub_dir, &stmts, depth + 1);
        }
    }

    /// The file a span lies in (`None`: the kernel file).
    fn file_of(&self, span: Span) -> Option<usize> {
        if span.start <= self.main_end {
            return None;
        }
        self.files.iter().rposition(|f| f.base <= span.start)
    }

    /// The module `name` imported at `level` by the file `span` is in.
    pub(crate) fn lookup(&self, span: Span, level: u32, name: &str) -> Option<usize> {
        let from = self.file_of(span);
        self.table
            .iter()
            .find(|(f, l, n, _)| *f == from && *l == level && n == name)
            .map(|e| e.3)
    }

    /// Rewrites a diagnostic whose location lies in a helper module: its
    /// primary location becomes the kernel file's import that led there,
    /// and the message names the module file, line and column.
    pub(crate) fn relocate(&self, d: &mut Diagnostic) {
        d.secondary.retain(|l| self.file_of(l.span).is_none());
        let Some(mut i) = self.file_of(d.primary.span) else {
            return;
        };
        let f = &self.files[i];
        let (line, col) = f.lines.line_col(&f.text, d.primary.span.start);
        let line = line.saturating_sub(f.base as usize);
        d.message = format!("{} (in {}:{line}:{col})", d.message, f.path.display());
        let label = std::mem::take(&mut d.primary.message);
        if !label.is_empty() {
            d.notes
                .push(format!("{}:{line}:{col}: {label}", f.path.display()));
        }
        loop {
            let f = &self.files[i];
            match f.importer {
                Some(j) => i = j,
                None => {
                    d.primary.span = f.import_span;
                    d.primary.message = format!("in module `{}`, imported here", f.name);
                    return;
                }
            }
        }
    }

    /// The syntax errors of helper modules, as diagnostics to report when
    /// the module is used.
    fn syntax_error(&self, i: usize) -> Option<Diagnostic> {
        self.files[i].syntax.clone()
    }
}

/// A helper module's namespace.
#[derive(Debug)]
pub(crate) struct UserModule<'a> {
    pub name: String,
    pub globals: Rc<Scope<'a>>,
}

/// The evaluator's view of the helper modules: the loaded files and the
/// modules run so far.
pub(crate) struct UserModules<'a> {
    pub loaded: &'a Loaded,
    values: RefCell<Vec<Option<Value<'a>>>>,
}

impl<'a> UserModules<'a> {
    pub fn new(loaded: &'a Loaded) -> Self {
        UserModules {
            loaded,
            values: RefCell::new(vec![None; loaded.files.len()]),
        }
    }
}

impl<'a> Evaluator<'a> {
    /// The helper module `name` imported at `level` by the statement at
    /// `span`, run on its first import; `None` when it is not a helper
    /// module found on disk.
    pub(crate) fn import_user_module(
        &mut self,
        span: Span,
        level: u32,
        name: &str,
    ) -> Option<Value<'a>> {
        let modules = self.user_modules.clone()?;
        let i = modules.loaded.lookup(span, level, name)?;
        let cached = modules.values.borrow()[i].clone();
        if cached.is_some() {
            return cached;
        }
        let file = &modules.loaded.files[i];
        let globals = Rc::new(Scope::default());
        globals.set("__name__", Value::str(&file.name));
        globals.set("__file__", Value::str(&file.path.display().to_string()));
        let value = Value::UserModule(Rc::new(UserModule {
            name: file.name.clone(),
            globals: globals.clone(),
        }));
        // Cached before running: an import cycle sees the partly run
        // module, as in Python.
        modules.values.borrow_mut()[i] = Some(value.clone());
        match &file.body {
            Some(body) => {
                self.exec_module_in(&body.body, globals.clone());
                // Names whose definition failed keep their error, told in
                // the module's file and line (it is reported where used).
                for v in globals.vars.borrow_mut().values_mut() {
                    if let Value::Poison(Some(d)) = v {
                        let mut d = (**d).clone();
                        modules.loaded.relocate(&mut d);
                        *v = Value::Poison(Some(Rc::new(d)));
                    }
                }
            }
            None => {
                if let Some(mut d) = modules.loaded.syntax_error(i) {
                    modules.loaded.relocate(&mut d);
                    let v = Value::Poison(Some(Rc::new(d)));
                    modules.values.borrow_mut()[i] = Some(v.clone());
                    return Some(v);
                }
            }
        }
        Some(value)
    }

    /// `import a.b.c` without `as`: binds `a` to a namespace whose `b.c` is
    /// the module (or to `a` itself when that is a helper module too).
    pub(crate) fn user_package_chain(
        &mut self,
        span: Span,
        full: &str,
        leaf: Value<'a>,
    ) -> Value<'a> {
        let parts: Vec<&str> = full.split('.').collect();
        let mut value = leaf;
        for k in (1..parts.len()).rev() {
            let prefix = parts[..k].join(".");
            let parent = match self.import_user_module(span, 0, &prefix) {
                Some(Value::UserModule(m)) => Value::UserModule(m),
                _ => Value::UserModule(Rc::new(UserModule {
                    name: prefix.clone(),
                    globals: Rc::new(Scope::default()),
                })),
            };
            if let Value::UserModule(m) = &parent {
                m.globals.set(parts[k], value);
            }
            value = parent;
        }
        value
    }
}

/// `getattr(module, name)` on a helper module.
pub(crate) fn get_attr<'a>(m: &UserModule<'a>, name: &str, span: Span) -> Option<Value<'a>> {
    let _ = span;
    m.globals.vars.borrow().get(name).cloned()
}

/// The names `from m import *` binds.
pub(crate) fn star_names(m: &UserModule<'_>) -> Vec<String> {
    m.globals
        .vars
        .borrow()
        .keys()
        .filter(|k| !k.starts_with('_'))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Options, compile};
    use std::path::{Path, PathBuf};

    fn front_tests() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/front/modules")
    }

    fn compile_file(path: &Path) -> super::super::Output {
        let source = std::fs::read_to_string(path).unwrap_or_default();
        super::super::compile_file(&source, Some(path), &Options::default())
    }

    #[test]
    fn an_error_inside_a_module_names_its_file_and_line() {
        let out = compile_file(&front_tests().join("import_error_in_module.py"));
        let d = out
            .diagnostics
            .iter()
            .find(|d| d.code == "T0101")
            .expect("the undefined name is reported");
        assert!(d.message.contains("_broken_helpers.py:6:"), "{}", d.message);
        assert!(d.primary.message.contains("_broken_helpers"), "{d:?}");
    }

    #[test]
    fn without_a_path_helper_modules_stay_opaque() {
        let path = front_tests().join("import_macro_and_constant.py");
        let source = std::fs::read_to_string(path).unwrap_or_default();
        let out = compile(&source, &Options::default());
        assert!(out.has_errors());
    }

    #[test]
    fn import_cycles_and_bad_modules_end_in_diagnostics() {
        let dir = std::env::temp_dir().join(format!("tilec-user-modules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).expect("write");
        };
        write(
            "ping.py",
            "import pong\nA = 1\ndef f():\n    return pong.B + A\n",
        );
        write("pong.py", "import ping\nB = 2\nC = ping.A\n");
        write("broken.py", "def f(:\n");
        write(
            "kernel.py",
            "import tilelang\nimport tilelang.language as T\nimport ping\nimport broken\n\
             @tilelang.jit\ndef k(N=32):\n    M = N * ping.f()\n    @T.prim_func\n    \
             def main(A: T.Tensor((M,), \"float32\"), B: T.Tensor((M,), \"float32\")):\n        \
             with T.Kernel(1, threads=32) as bx:\n            T.copy(A, B)\n    return main\n",
        );
        let out = compile_file(&dir.join("kernel.py"));
        assert!(!out.has_errors(), "{:?}", out.diagnostics);
        let text = out.module.map(|m| format!("{m:?}")).unwrap_or_default();
        assert!(text.contains("96"), "M = 32 * 3");
        write(
            "kernel2.py",
            "import tilelang\nimport broken\n@tilelang.jit\ndef k():\n    return broken.f()\n",
        );
        let out = compile_file(&dir.join("kernel2.py"));
        assert!(out.has_errors());
        assert!(
            out.diagnostics
                .iter()
                .any(|d| d.notes.iter().any(|n| n.contains("broken.py:1:"))),
            "{:?}",
            out.diagnostics
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
