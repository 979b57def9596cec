//! The textual form of Tile IR: a printer and a parser with an exact round
//! trip.
//!
//! The format is specified in `docs/ir.md`; this module is its reference
//! implementation. The contract every test relies on is
//! `print_module(&parse_module(s)?) == s` for every text the printer
//! produced: printing is canonical (one spelling per IR), and the parser
//! reads back exactly the tree that was printed.
//!
//! - [`print_module`] / [`print_function`] turn IR into text. Expressions
//!   form a DAG in the arena but are printed as trees (a shared
//!   subexpression is printed at every use), with the fewest parentheses the
//!   precedence table allows. Spans are not printed.
//! - [`parse_module`] reads text back. It checks the syntax, the scoping of
//!   names and the typing of expressions (it builds them through
//!   [`Function::add_expr`], which type-checks); every other rule is the
//!   verifier's ([`crate::ir::verify`]). It never panics: any input gives a
//!   module or a [`ParseError`] with a 1-based line and column.
//!
//! The parser records the byte range of each statement header and buffer
//! declaration in the IR text as its [`crate::ir::Span`].

pub(crate) mod lexer;
mod lines;
mod parse;
mod print;

use crate::ir::{BinaryOp, Function, Module};

pub use lines::{LineIndex, line_col};

/// The format version written in the header line (`tile_ir 0.1`).
pub const VERSION: &str = "0.1";

/// Why a text could not be read as Tile IR.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line of the offending token.
    pub line: u32,
    /// 1-based column of the offending token, counted in characters.
    pub column: u32,
    /// Byte offset of the offending token in the input.
    pub offset: usize,
    pub message: String,
}

/// Prints a module: the header line, then each function after one blank
/// line. The text ends with a newline.
pub fn print_module(module: &Module) -> String {
    print::module(module)
}

/// Prints one function (without the header line), ending with a newline.
pub fn print_function(f: &Function) -> String {
    print::function(f)
}

/// Parses a module printed by [`print_module`] (or written by hand in the
/// same format).
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    parse::module(src)
}

/// Binding strength of prefix operators (`-`, `!`, `~`): above every binary
/// operator.
pub(crate) const PREC_UNARY: u8 = 11;

/// Infix binary operators with their spelling and precedence (higher binds
/// tighter). `Min`, `Max` and `Pow` are written as functions instead.
const INFIX: [(BinaryOp, &str, u8); 19] = [
    (BinaryOp::Or, "||", 1),
    (BinaryOp::And, "&&", 2),
    (BinaryOp::BitOr, "|", 3),
    (BinaryOp::BitXor, "^", 4),
    (BinaryOp::BitAnd, "&", 5),
    (BinaryOp::Eq, "==", 6),
    (BinaryOp::Ne, "!=", 6),
    (BinaryOp::Lt, "<", 7),
    (BinaryOp::Le, "<=", 7),
    (BinaryOp::Gt, ">", 7),
    (BinaryOp::Ge, ">=", 7),
    (BinaryOp::Shl, "<<", 8),
    (BinaryOp::Shr, ">>", 8),
    (BinaryOp::Add, "+", 9),
    (BinaryOp::Sub, "-", 9),
    (BinaryOp::Mul, "*", 10),
    (BinaryOp::Div, "/", 10),
    (BinaryOp::FloorDiv, "//", 10),
    (BinaryOp::FloorMod, "%", 10),
];

/// Spelling and precedence of an infix operator.
pub(crate) fn infix(op: BinaryOp) -> Option<(&'static str, u8)> {
    INFIX
        .iter()
        .find(|(o, _, _)| *o == op)
        .map(|&(_, s, p)| (s, p))
}

/// The infix operator spelled `punct`, with its precedence.
pub(crate) fn infix_from_punct(punct: &str) -> Option<(BinaryOp, u8)> {
    INFIX
        .iter()
        .find(|(_, s, _)| *s == punct)
        .map(|&(o, _, p)| (o, p))
}

/// Binary operators written as two-argument functions.
pub(crate) fn binary_function(op: BinaryOp) -> Option<&'static str> {
    match op {
        BinaryOp::Min => Some("min"),
        BinaryOp::Max => Some("max"),
        BinaryOp::Pow => Some("pow"),
        _ => None,
    }
}

/// The binary operator written as the function `name`.
pub(crate) fn binary_function_from_name(name: &str) -> Option<BinaryOp> {
    match name {
        "min" => Some(BinaryOp::Min),
        "max" => Some(BinaryOp::Max),
        "pow" => Some(BinaryOp::Pow),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
