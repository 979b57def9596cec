//! Launch extents as text: the small integer language in which
//! [`KernelMetadata::grid`](crate::KernelMetadata::grid) states a kernel's
//! grid in terms of its symbolic sizes, and the evaluator hosts use to turn
//! it into numbers before a `Launch`.
//!
//! # Grammar
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '//' | '/' | '%') unary)*
//! unary   := '-' unary | primary
//! primary := INTEGER | NAME | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
//! ```
//! `NAME` is a symbolic size (letters, digits, `_`, not starting with a
//! digit). Arithmetic is on `i64`; `//` and `%` round toward negative
//! infinity (Python's rules, as Tile IR's `//` and `%`), `/` truncates.
//! Overflow and division by zero are errors, never wrapped values.

use std::collections::BTreeMap;

/// Why an extent could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExtentError {
    #[error("`{text}`: {message} at offset {offset}")]
    Syntax {
        text: String,
        offset: usize,
        message: String,
    },
    #[error("`{text}`: the symbolic size `{name}` has no value")]
    Unbound { text: String, name: String },
    #[error("`{text}`: {message}")]
    Arithmetic { text: String, message: String },
}

/// Evaluates `text` with the symbol values `symbols`.
pub fn evaluate(text: &str, symbols: &BTreeMap<String, i64>) -> Result<i64, ExtentError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        symbols,
        depth: 0,
    };
    let value = parser.expr()?;
    parser.skip_space();
    if parser.pos != parser.bytes.len() {
        return Err(parser.syntax("unexpected text"));
    }
    Ok(value)
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 64;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    symbols: &'a BTreeMap<String, i64>,
    depth: u32,
}

impl Parser<'_> {
    fn syntax(&self, message: &str) -> ExtentError {
        ExtentError::Syntax {
            text: self.text.to_string(),
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn arithmetic(&self, message: &str) -> ExtentError {
        ExtentError::Arithmetic {
            text: self.text.to_string(),
            message: message.to_string(),
        }
    }

    fn skip_space(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// Consumes `token` if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.bytes[self.pos..].starts_with(token.as_bytes()) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), ExtentError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.syntax(&format!("expected `{token}`")))
        }
    }

    fn expr(&mut self) -> Result<i64, ExtentError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax("expression nested too deeply"));
        }
        let mut value = self.term()?;
        loop {
            let op = if self.eat("+") {
                i64::checked_add
            } else if self.eat("-") {
                i64::checked_sub
            } else {
                break;
            };
            let rhs = self.term()?;
            value = op(value, rhs).ok_or_else(|| self.arithmetic("overflow"))?;
        }
        self.depth -= 1;
        Ok(value)
    }

    fn term(&mut self) -> Result<i64, ExtentError> {
        let mut value = self.unary()?;
        loop {
            if self.eat("*") {
                let rhs = self.unary()?;
                value = value
                    .checked_mul(rhs)
                    .ok_or_else(|| self.arithmetic("overflow"))?;
            } else if self.eat("//") {
                let rhs = self.divisor()?;
                let q = value
                    .checked_div(rhs)
                    .ok_or_else(|| self.arithmetic("overflow"))?;
                let inexact = q.wrapping_mul(rhs) != value;
                value = if inexact && ((value < 0) != (rhs < 0)) {
                    q - 1
                } else {
                    q
                };
            } else if self.eat("/") {
                let rhs = self.divisor()?;
                value = value
                    .checked_div(rhs)
                    .ok_or_else(|| self.arithmetic("overflow"))?;
            } else if self.eat("%") {
                let rhs = self.divisor()?;
                let r = value
                    .checked_rem(rhs)
                    .ok_or_else(|| self.arithmetic("overflow"))?;
                value = if r != 0 && ((r < 0) != (rhs < 0)) {
                    r + rhs
                } else {
                    r
                };
            } else {
                return Ok(value);
            }
        }
    }

    fn divisor(&mut self) -> Result<i64, ExtentError> {
        let rhs = self.unary()?;
        if rhs == 0 {
            return Err(self.arithmetic("division by zero"));
        }
        Ok(rhs)
    }

    fn unary(&mut self) -> Result<i64, ExtentError> {
        if self.eat("-") {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.syntax("expression nested too deeply"));
            }
            let v = self.unary()?;
            self.depth -= 1;
            return v.checked_neg().ok_or_else(|| self.arithmetic("overflow"));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<i64, ExtentError> {
        self.skip_space();
        if self.eat("(") {
            let v = self.expr()?;
            self.expect(")")?;
            return Ok(v);
        }
        let start = self.pos;
        let Some(&first) = self.bytes.get(self.pos) else {
            return Err(self.syntax("expected a value"));
        };
        if first.is_ascii_digit() {
            while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
            return self.text[start..self.pos]
                .parse::<i64>()
                .map_err(|_| self.arithmetic("integer literal out of range"));
        }
        if first.is_ascii_alphabetic() || first == b'_' {
            while self.pos < self.bytes.len()
                && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let name = &self.text[start..self.pos];
            if name == "min" || name == "max" {
                self.expect("(")?;
                let a = self.expr()?;
                self.expect(",")?;
                let b = self.expr()?;
                self.expect(")")?;
                return Ok(if name == "min" { a.min(b) } else { a.max(b) });
            }
            return self
                .symbols
                .get(name)
                .copied()
                .ok_or_else(|| ExtentError::Unbound {
                    text: self.text.to_string(),
                    name: name.to_string(),
                });
        }
        Err(self.syntax("expected a value"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> Result<i64, ExtentError> {
        let symbols = BTreeMap::from([("M".to_string(), 1000), ("n_1".to_string(), -7)]);
        evaluate(text, &symbols)
    }

    #[test]
    fn arithmetic_follows_python_rounding() {
        assert_eq!(eval("(M + 127) // 128"), Ok(8));
        assert_eq!(eval("n_1 // 2"), Ok(-4));
        assert_eq!(eval("n_1 % 2"), Ok(1));
        assert_eq!(eval("7 // -2"), Ok(-4));
        assert_eq!(eval("7 % -2"), Ok(-1));
        assert_eq!(eval("n_1 / 2"), Ok(-3));
        assert_eq!(eval("min(M, 4) * max(2, 3) - -1"), Ok(13));
        assert_eq!(eval(" 42 "), Ok(42));
    }

    #[test]
    fn errors_are_reported_not_wrapped() {
        assert!(matches!(
            eval("M // 0"),
            Err(ExtentError::Arithmetic { .. })
        ));
        assert!(matches!(
            eval("9223372036854775807 + 1"),
            Err(ExtentError::Arithmetic { .. })
        ));
        assert!(matches!(eval("K + 1"), Err(ExtentError::Unbound { name, .. }) if name == "K"));
        assert!(matches!(eval("(1"), Err(ExtentError::Syntax { .. })));
        assert!(matches!(eval("1 $ 2"), Err(ExtentError::Syntax { .. })));
        assert!(matches!(eval(""), Err(ExtentError::Syntax { .. })));
        let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert!(matches!(eval(&deep), Err(ExtentError::Syntax { .. })));
        let negs = format!("{}1", "-".repeat(500));
        assert!(matches!(eval(&negs), Err(ExtentError::Syntax { .. })));
    }
}
