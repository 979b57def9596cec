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

/// The result of compiling a file: the module (when no error occurred) and
/// every diagnostic, errors and warnings.
#[derive(Debug, Default)]
pub struct Output {
    pub module: Option<Module>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Compiles TileLang source text to Tile IR.
pub fn compile(source: &str, options: &Options) -> Output {
    let _ = (source, options);
    Output {
        module: None,
        diagnostics: Vec::new(),
    }
}
