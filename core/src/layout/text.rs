//! The text form of layouts: a small recursive-descent reader for what the
//! `Display` implementations write, and the serde implementations that
//! store layouts as those strings.
//!
//! ```text
//! tuple     := int | '(' tuple (',' tuple)* ')'
//! int       := '-'? digit+
//! layout    := tuple ':' tuple
//! swizzle   := 'sw<' int ',' int ',' int '>'
//! swizzled  := swizzle 'o' layout
//! fragment  := '[' int (',' int)* ']' ('rep' int)? layout
//! ```
//!
//! Spaces are allowed between tokens. The reader never panics; every
//! failure is a [`LayoutError::Parse`] with the byte position.

use std::str::FromStr;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{FragmentLayout, IntTuple, Layout, LayoutError, Swizzle, SwizzledLayout};

/// Tuples deeper than this are rejected (keeps the recursion bounded on
/// hostile input).
const MAX_DEPTH: usize = 32;

struct Reader<'a> {
    text: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text: text.as_bytes(),
            position: 0,
        }
    }

    fn error(&self, message: impl Into<String>) -> LayoutError {
        LayoutError::Parse {
            position: self.position,
            message: message.into(),
        }
    }

    fn skip_space(&mut self) {
        while self
            .text
            .get(self.position)
            .is_some_and(u8::is_ascii_whitespace)
        {
            self.position += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.position).copied()
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.position..].starts_with(token.as_bytes()) {
            self.position += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), LayoutError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{token}`")))
        }
    }

    fn int(&mut self) -> Result<i64, LayoutError> {
        self.skip_space();
        let start = self.position;
        if self.text.get(self.position) == Some(&b'-') {
            self.position += 1;
        }
        while self.text.get(self.position).is_some_and(u8::is_ascii_digit) {
            self.position += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.position]).unwrap_or("");
        digits.parse::<i64>().map_err(|_| LayoutError::Parse {
            position: start,
            message: "expected an integer".to_string(),
        })
    }

    fn unsigned(&mut self) -> Result<u64, LayoutError> {
        let start = self.position;
        let value = self.int()?;
        u64::try_from(value).map_err(|_| LayoutError::Parse {
            position: start,
            message: "expected a non-negative integer".to_string(),
        })
    }

    fn tuple(&mut self, depth: usize) -> Result<IntTuple, LayoutError> {
        if depth > MAX_DEPTH {
            return Err(self.error("tuple nested too deeply"));
        }
        if self.eat("(") {
            let mut items = vec![self.tuple(depth + 1)?];
            while self.eat(",") {
                items.push(self.tuple(depth + 1)?);
            }
            self.expect(")")?;
            Ok(IntTuple::Tuple(items))
        } else {
            Ok(IntTuple::Int(self.int()?))
        }
    }

    fn layout(&mut self) -> Result<Layout, LayoutError> {
        let start = self.position;
        let shape = self.tuple(0)?;
        self.expect(":")?;
        let stride = self.tuple(0)?;
        Layout::new(shape, stride).map_err(|e| LayoutError::Parse {
            position: start,
            message: e.to_string(),
        })
    }

    fn swizzle(&mut self) -> Result<Swizzle, LayoutError> {
        let start = self.position;
        self.expect("sw<")?;
        let bits = self.unsigned()?;
        self.expect(",")?;
        let base = self.unsigned()?;
        self.expect(",")?;
        let shift = self.int()?;
        self.expect(">")?;
        let (Ok(bits), Ok(base), Ok(shift)) = (
            u32::try_from(bits),
            u32::try_from(base),
            i32::try_from(shift),
        ) else {
            return Err(LayoutError::Parse {
                position: start,
                message: "swizzle parameter out of range".to_string(),
            });
        };
        Swizzle::new(bits, base, shift).map_err(|e| LayoutError::Parse {
            position: start,
            message: e.to_string(),
        })
    }

    fn fragment(&mut self) -> Result<FragmentLayout, LayoutError> {
        let start = self.position;
        self.expect("[")?;
        let mut tile = vec![self.unsigned()?];
        while self.eat(",") {
            tile.push(self.unsigned()?);
        }
        self.expect("]")?;
        let replication = if self.eat("rep") { self.unsigned()? } else { 1 };
        let map = self.layout()?;
        FragmentLayout::new(tile, map, replication).map_err(|e| LayoutError::Parse {
            position: start,
            message: e.to_string(),
        })
    }

    fn finish<T>(&mut self, value: T) -> Result<T, LayoutError> {
        if self.peek().is_some() {
            Err(self.error("unexpected text after the end"))
        } else {
            Ok(value)
        }
    }
}

impl FromStr for IntTuple {
    type Err = LayoutError;
    fn from_str(text: &str) -> Result<IntTuple, LayoutError> {
        let mut reader = Reader::new(text);
        let value = reader.tuple(0)?;
        reader.finish(value)
    }
}

impl FromStr for Layout {
    type Err = LayoutError;
    fn from_str(text: &str) -> Result<Layout, LayoutError> {
        let mut reader = Reader::new(text);
        let value = reader.layout()?;
        reader.finish(value)
    }
}

impl FromStr for Swizzle {
    type Err = LayoutError;
    fn from_str(text: &str) -> Result<Swizzle, LayoutError> {
        let mut reader = Reader::new(text);
        let value = reader.swizzle()?;
        reader.finish(value)
    }
}

impl FromStr for SwizzledLayout {
    type Err = LayoutError;
    fn from_str(text: &str) -> Result<SwizzledLayout, LayoutError> {
        let mut reader = Reader::new(text);
        let swizzle = reader.swizzle()?;
        reader.expect("o")?;
        let layout = reader.layout()?;
        reader.finish(SwizzledLayout { swizzle, layout })
    }
}

impl FromStr for FragmentLayout {
    type Err = LayoutError;
    fn from_str(text: &str) -> Result<FragmentLayout, LayoutError> {
        let mut reader = Reader::new(text);
        let value = reader.fragment()?;
        reader.finish(value)
    }
}

/// Serde as the text form, for the types that have one.
macro_rules! serde_as_text {
    ($($ty:ty),*) => {$(
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(D::Error::custom)
            }
        }
    )*};
}

serde_as_text!(Layout, Swizzle, SwizzledLayout, FragmentLayout);
