//! Tokens of the thread-level IR text form: Tile IR's lexer
//! (`crate::text::lexer`: `%` and `@` names, quoted names, `#` comments,
//! numbers and strings) with this form's punctuation, which adds the `<-`
//! arrow and `.` and drops Tile IR's `+:` and `->`.

pub(crate) use crate::text::lexer::{Tok, Token, is_bare_name, quote};

/// Longest spellings first.
const PUNCTS: &[&str] = &[
    "<-", "//", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", "{", "}", ",",
    ":", "=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~", ".",
];

/// Splits `src` into tokens ending with [`Tok::Eof`], possibly preceded by
/// one [`Tok::Error`].
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    crate::text::lexer::tokenize_with(src, PUNCTS)
}
