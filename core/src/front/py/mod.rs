//! The TileLang front end: a partial evaluator for a Python subset.
//!
//! (Implementation in progress: the public API below is stable.)

use crate::front::Diagnostic;
use crate::ir::Module;
use std::collections::BTreeMap;

/// What to compile from a file.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A call expression such as `matmul(1024, 1024, 1024, 128, 128, 32)`,
    /// evaluated in the file's namespace. `None`: the file's single builder
    /// (or `prim_func`), called with its defaults.
    pub kernel: Option<String>,
    /// `-D NAME=VALUE` bindings: values for `T.const` names, `T.dynamic`
    /// sizes and keyword parameters of the builder. Values are Python
    /// literals (`1024`, `True`, `"float16"`).
    pub defines: BTreeMap<String, String>,
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

/// Compiles TileLang source text to Tile IR.
pub fn compile(source: &str, options: &Options) -> Output {
    let _ = (source, options);
    Output::default()
}
