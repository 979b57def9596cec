//! Tokens of the Tile IR text format.
//!
//! The lexer runs over the whole input first and the parser then walks the
//! token vector (the function header needs a little look-ahead). A character
//! the lexer cannot read does not stop it with an error straight away: it
//! ends the token stream with an [`Tok::Error`] token, so the parser reports
//! whichever problem comes first in the text.

/// The IR text's quoting of strings, defined beside the IR (whose
/// `Display` forms quote names too).
pub(crate) use crate::ir::quote;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A bare word: keyword, dtype, scope, operator name (`exp`, `cast`).
    Ident(String),
    /// `%name` or `%"quoted name"`, without the sigil.
    Name(String),
    /// `@name` or `@"quoted name"`, without the sigil.
    FuncName(String),
    /// Decimal digits only.
    Int(String),
    /// Digits with a fraction and/or an exponent (`1.5`, `1e-20`).
    Float(String),
    /// A double-quoted string, escapes decoded.
    Str(String),
    /// Punctuation and operators, longest match first.
    Punct(&'static str),
    /// The input could not be read here; the text says why.
    Error(String),
    Eof,
}

/// A token with its position.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    /// Byte offsets into the source.
    pub start: usize,
    pub end: usize,
    /// 1-based line and column (columns count characters).
    pub line: u32,
    pub col: u32,
}

/// Punctuation of Tile IR text, longest spellings first so that a prefix
/// never wins. Thread-level IR shares this lexer with its own table.
pub(crate) const PUNCTS: &[&str] = &[
    "+:", "->", "//", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", "{", "}",
    ",", ":", "=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!", "~",
];

/// Whether `c` may start a bare name (after `%` / `@`) or a word.
pub(crate) fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// Whether `c` may continue a `%` / `@` name.
pub(crate) fn is_name_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

fn is_word_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

struct Cursor<'s> {
    src: &'s str,
    /// Byte offset of the next character.
    pos: usize,
    line: u32,
    col: u32,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        let mut chars = self.src[self.pos..].chars();
        chars.next();
        chars.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
        } else {
            self.col = self.col.saturating_add(1);
        }
        Some(c)
    }

    fn eat_while(&mut self, pred: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&pred) {
            self.bump();
        }
    }
}

/// Splits `src` into tokens. The result always ends with [`Tok::Eof`],
/// possibly preceded by one [`Tok::Error`].
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    tokenize_with(src, PUNCTS)
}

/// [`tokenize`] with another punctuation table (longest spellings first).
pub(crate) fn tokenize_with(src: &str, puncts: &'static [&'static str]) -> Vec<Token> {
    let mut cur = Cursor {
        src,
        pos: 0,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    loop {
        // Whitespace and `#` comments.
        loop {
            match cur.peek() {
                Some(c) if c.is_whitespace() => {
                    cur.bump();
                }
                Some('#') => cur.eat_while(|c| c != '\n'),
                _ => break,
            }
        }
        let (start, line, col) = (cur.pos, cur.line, cur.col);
        let Some(c) = cur.peek() else {
            out.push(Token {
                tok: Tok::Eof,
                start,
                end: start,
                line,
                col,
            });
            return out;
        };
        let tok = lex_one(&mut cur, c, puncts);
        let is_error = matches!(tok, Tok::Error(_));
        out.push(Token {
            tok,
            start,
            end: cur.pos,
            line,
            col,
        });
        if is_error {
            out.push(Token {
                tok: Tok::Eof,
                start: cur.pos,
                end: cur.pos,
                line: cur.line,
                col: cur.col,
            });
            return out;
        }
    }
}

fn lex_one(cur: &mut Cursor<'_>, c: char, puncts: &'static [&'static str]) -> Tok {
    if c.is_ascii_digit() {
        return lex_number(cur);
    }
    if is_name_start(c) {
        let start = cur.pos;
        cur.eat_while(is_word_continue);
        return Tok::Ident(cur.src[start..cur.pos].to_string());
    }
    if c == '"' {
        return match lex_string(cur) {
            Ok(s) => Tok::Str(s),
            Err(e) => Tok::Error(e),
        };
    }
    if c == '%' || c == '@' {
        let named = match cur.peek_second() {
            Some(n) if is_name_start(n) => {
                cur.bump();
                let start = cur.pos;
                cur.eat_while(is_name_continue);
                Some(Ok(cur.src[start..cur.pos].to_string()))
            }
            Some('"') => {
                cur.bump();
                Some(lex_string(cur))
            }
            _ => None,
        };
        match (named, c) {
            (Some(Ok(name)), '%') => return Tok::Name(name),
            (Some(Ok(name)), _) => return Tok::FuncName(name),
            (Some(Err(e)), _) => return Tok::Error(e),
            (None, '@') => {
                return Tok::Error("expected a name after `@`".to_string());
            }
            (None, _) => {}
        }
    }
    let rest = &cur.src[cur.pos..];
    if let Some(p) = puncts.iter().find(|p| rest.starts_with(**p)) {
        for _ in 0..p.len() {
            cur.bump();
        }
        return Tok::Punct(p);
    }
    cur.bump();
    Tok::Error(format!("unexpected character `{}`", c.escape_debug()))
}

fn lex_number(cur: &mut Cursor<'_>) -> Tok {
    let start = cur.pos;
    let mut is_float = false;
    cur.eat_while(|c| c.is_ascii_digit());
    if cur.peek() == Some('.') && cur.peek_second().is_some_and(|c| c.is_ascii_digit()) {
        is_float = true;
        cur.bump();
        cur.eat_while(|c| c.is_ascii_digit());
    }
    if matches!(cur.peek(), Some('e' | 'E')) {
        // An exponent only when digits follow (optionally signed).
        let rest = &cur.src[cur.pos + 1..];
        let digits_at = usize::from(rest.starts_with('+') || rest.starts_with('-'));
        if rest[digits_at..].starts_with(|c: char| c.is_ascii_digit()) {
            is_float = true;
            cur.bump();
            if digits_at == 1 {
                cur.bump();
            }
            cur.eat_while(|c| c.is_ascii_digit());
        }
    }
    let text = cur.src[start..cur.pos].to_string();
    if is_float {
        Tok::Float(text)
    } else {
        Tok::Int(text)
    }
}

/// Reads a double-quoted string starting at the opening quote.
fn lex_string(cur: &mut Cursor<'_>) -> Result<String, String> {
    cur.bump();
    let mut out = String::new();
    loop {
        match cur.bump() {
            None | Some('\n') => return Err("unterminated string".to_string()),
            Some('"') => return Ok(out),
            Some('\\') => match cur.bump() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('u') => {
                    if cur.bump() != Some('{') {
                        return Err("expected `{` after `\\u`".to_string());
                    }
                    let start = cur.pos;
                    cur.eat_while(|c| c.is_ascii_hexdigit());
                    let hex = &cur.src[start..cur.pos];
                    if cur.bump() != Some('}') || hex.is_empty() || hex.len() > 6 {
                        return Err("malformed `\\u{...}` escape".to_string());
                    }
                    let ch = u32::from_str_radix(hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("`\\u{{{hex}}}` is not a character"))?;
                    out.push(ch);
                }
                Some(other) => {
                    return Err(format!("unknown escape `\\{}`", other.escape_debug()));
                }
                None => return Err("unterminated string".to_string()),
            },
            Some(c) => out.push(c),
        }
    }
}

/// Whether `name` can be written after `%` / `@` without quotes.
pub(crate) fn is_bare_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_continue)
}
