//! Index maps: a buffer layout given as an integer expression of the
//! element's coordinates.
//!
//! The strided and swizzled layouts of this module cover the arrangements
//! the lowering chooses by itself. A kernel's author may ask for any other
//! (TileLang's `T.Layout(shape, forward_fn)`): an [`IndexMap`] keeps such
//! a layout as the expression the function computes, over the
//! coordinates `i0, i1, ...` of an element, so that code generation can
//! emit the same arithmetic for every access. Its operators are those of
//! Python integers on non-negative values: `+ - *`, `//` and `%` rounding
//! toward negative infinity, `& | ^ << >>`, `min` and `max`.
//!
//! The text form is the expression itself, with Python's precedence
//! (`|` < `^` < `&` < shifts < `+ -` < `* // %`) and the fewest
//! parentheses that keep it:
//!
//! ```text
//! i0 * 72 + (i1 ^ i0 % 8 * 8)
//! min(i0, 3) * 16 + i1
//! ```
//!
//! [`IndexMap::eval`] computes the map with checked arithmetic (no
//! result on overflow, a zero divisor or a negative shift), and
//! [`IndexMap::check_over`] checks exhaustively that it sends every
//! coordinate of a shape to a distinct non-negative offset.

use std::fmt;
use std::str::FromStr;

use super::LayoutError;

/// The operators of an index map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    FloorMod,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Min,
    Max,
}

impl MapOp {
    /// The operator's symbol (`min`/`max` are written as calls).
    fn symbol(self) -> &'static str {
        match self {
            MapOp::Add => "+",
            MapOp::Sub => "-",
            MapOp::Mul => "*",
            MapOp::FloorDiv => "//",
            MapOp::FloorMod => "%",
            MapOp::BitAnd => "&",
            MapOp::BitOr => "|",
            MapOp::BitXor => "^",
            MapOp::Shl => "<<",
            MapOp::Shr => ">>",
            MapOp::Min => "min",
            MapOp::Max => "max",
        }
    }

    /// Python's binding strength of the infix operators (higher binds
    /// tighter); calls bind tightest.
    fn precedence(self) -> u8 {
        match self {
            MapOp::BitOr => 1,
            MapOp::BitXor => 2,
            MapOp::BitAnd => 3,
            MapOp::Shl | MapOp::Shr => 4,
            MapOp::Add | MapOp::Sub => 5,
            MapOp::Mul | MapOp::FloorDiv | MapOp::FloorMod => 6,
            MapOp::Min | MapOp::Max => 7,
        }
    }

    /// `a op b`, or `None` where Python's result would not fit 64 bits or
    /// is an error.
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            MapOp::Add => a.checked_add(b),
            MapOp::Sub => a.checked_sub(b),
            MapOp::Mul => a.checked_mul(b),
            MapOp::FloorDiv => {
                let (q, r) = (a.checked_div(b)?, a.checked_rem(b)?);
                Some(if r != 0 && (r < 0) != (b < 0) {
                    q - 1
                } else {
                    q
                })
            }
            MapOp::FloorMod => {
                let r = a.checked_rem(b)?;
                Some(if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                })
            }
            MapOp::BitAnd => Some(a & b),
            MapOp::BitOr => Some(a | b),
            MapOp::BitXor => Some(a ^ b),
            MapOp::Shl => {
                let s = u32::try_from(b).ok().filter(|&s| s < 63)?;
                let r = a.checked_shl(s)?;
                (r >> s == a).then_some(r)
            }
            MapOp::Shr => u32::try_from(b).ok().map(|s| a >> s.min(63)),
            MapOp::Min => Some(a.min(b)),
            MapOp::Max => Some(a.max(b)),
        }
    }
}

/// An integer expression over the coordinates of an element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexMap {
    Const(i64),
    /// Coordinate `k` of the element (`ik` in the text form).
    Dim(u32),
    Binary(MapOp, Box<IndexMap>, Box<IndexMap>),
}

impl IndexMap {
    /// `a op b`.
    pub fn binary(op: MapOp, a: IndexMap, b: IndexMap) -> IndexMap {
        IndexMap::Binary(op, Box::new(a), Box::new(b))
    }

    /// The map at `coords`, or `None` when a coordinate it uses is
    /// missing or the arithmetic fails (overflow, a zero divisor, a
    /// negative or too wide shift).
    pub fn eval(&self, coords: &[i64]) -> Option<i64> {
        match self {
            IndexMap::Const(c) => Some(*c),
            IndexMap::Dim(k) => coords.get(*k as usize).copied(),
            IndexMap::Binary(op, a, b) => op.apply(a.eval(coords)?, b.eval(coords)?),
        }
    }

    /// The map at `coords` when every value it computes on the way (and
    /// every constant) lies in `-bound ..= bound`.
    pub fn eval_within(&self, coords: &[i64], bound: i64) -> Option<i64> {
        let v = match self {
            IndexMap::Const(c) => *c,
            IndexMap::Dim(k) => *coords.get(*k as usize)?,
            IndexMap::Binary(op, a, b) => {
                op.apply(a.eval_within(coords, bound)?, b.eval_within(coords, bound)?)?
            }
        };
        (v.checked_abs()? <= bound).then_some(v)
    }

    /// One more than the highest coordinate index the map uses (0 for a
    /// constant).
    pub fn rank(&self) -> usize {
        match self {
            IndexMap::Const(_) => 0,
            IndexMap::Dim(k) => *k as usize + 1,
            IndexMap::Binary(_, a, b) => a.rank().max(b.rank()),
        }
    }

    /// The offset of every element of `shape`, row-major, after checking
    /// that the map sends them to distinct non-negative offsets.
    pub fn check_over(&self, shape: &[u64]) -> Result<Vec<u64>, LayoutError> {
        let size = shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or(LayoutError::Overflow)?;
        if size > super::EXHAUSTIVE_LIMIT {
            return Err(LayoutError::TooLarge {
                size,
                limit: super::EXHAUSTIVE_LIMIT,
            });
        }
        if self.rank() > shape.len() {
            return Err(LayoutError::RankMismatch {
                expected: shape.len(),
                found: self.rank(),
            });
        }
        let mut coords = vec![0i64; shape.len()];
        let mut offsets = Vec::with_capacity(size as usize);
        for linear in 0..size {
            let mut rest = linear;
            for (c, &d) in coords.iter_mut().zip(shape).rev() {
                *c = (rest % d) as i64;
                rest /= d;
            }
            let offset = self
                .eval(&coords)
                .and_then(|o| u64::try_from(o).ok())
                .ok_or_else(|| LayoutError::NotBijective {
                    size,
                    reason: format!("element {coords:?} has no non-negative offset under `{self}`"),
                })?;
            offsets.push(offset);
        }
        if let Some((first, second)) = first_collision(&offsets) {
            return Err(LayoutError::NotBijective {
                size,
                reason: format!(
                    "elements {first} and {second} (row-major) both map to offset {}",
                    offsets[second]
                ),
            });
        }
        Ok(offsets)
    }

    fn precedence(&self) -> u8 {
        match self {
            IndexMap::Binary(op, ..) => op.precedence(),
            _ => u8::MAX,
        }
    }
}

/// The first pair of positions `(i, j)`, `i < j` and `j` as small as can
/// be, whose offsets are equal. A bit per offset where the offsets are
/// dense (layouts map onto about as many offsets as elements), else a sort.
fn first_collision(offsets: &[u64]) -> Option<(usize, usize)> {
    let max = offsets.iter().copied().max()?;
    let dense = usize::try_from(max)
        .ok()
        .filter(|&m| m / 8 <= offsets.len());
    let second = match dense {
        Some(max) => {
            let mut seen = vec![0u64; max / 64 + 1];
            offsets.iter().position(|&o| {
                let (word, bit) = ((o / 64) as usize, 1u64 << (o % 64));
                let taken = seen[word] & bit != 0;
                seen[word] |= bit;
                taken
            })?
        }
        None => {
            let mut order: Vec<usize> = (0..offsets.len()).collect();
            order.sort_by_key(|&i| (offsets[i], i));
            order
                .windows(2)
                .filter(|w| offsets[w[0]] == offsets[w[1]])
                .map(|w| w[1])
                .min()?
        }
    };
    let first = offsets.iter().position(|&o| o == offsets[second])?;
    Some((first, second))
}

impl fmt::Display for IndexMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexMap::Const(c) if *c < 0 => write!(f, "({c})"),
            IndexMap::Const(c) => write!(f, "{c}"),
            IndexMap::Dim(k) => write!(f, "i{k}"),
            IndexMap::Binary(op @ (MapOp::Min | MapOp::Max), a, b) => {
                write!(f, "{}({a}, {b})", op.symbol())
            }
            IndexMap::Binary(op, a, b) => {
                // Python's operators associate to the left: the right
                // operand needs parentheses at equal precedence too.
                let p = op.precedence();
                let side = |f: &mut fmt::Formatter<'_>, e: &IndexMap, tighter: bool| {
                    if e.precedence() < p || (tighter && e.precedence() == p) {
                        write!(f, "({e})")
                    } else {
                        write!(f, "{e}")
                    }
                };
                side(f, a, false)?;
                write!(f, " {} ", op.symbol())?;
                side(f, b, true)
            }
        }
    }
}

/// Expressions nested deeper than this are rejected (keeps the recursion
/// bounded on hostile input).
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    text: &'a str,
    position: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, message: impl Into<String>) -> LayoutError {
        LayoutError::Parse {
            position: self.position,
            message: message.into(),
        }
    }

    fn rest(&mut self) -> &'a str {
        let trimmed = self.text[self.position..].trim_start();
        self.position = self.text.len() - trimmed.len();
        trimmed
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.position += token.len();
            true
        } else {
            false
        }
    }

    /// The infix operator at the reader, if one binds at least as tightly
    /// as `min_precedence` (not consumed).
    fn infix(&mut self, min_precedence: u8) -> Option<MapOp> {
        const OPS: [(&str, MapOp); 10] = [
            ("//", MapOp::FloorDiv),
            ("<<", MapOp::Shl),
            (">>", MapOp::Shr),
            ("+", MapOp::Add),
            ("-", MapOp::Sub),
            ("*", MapOp::Mul),
            ("%", MapOp::FloorMod),
            ("&", MapOp::BitAnd),
            ("|", MapOp::BitOr),
            ("^", MapOp::BitXor),
        ];
        let rest = self.rest();
        OPS.iter()
            .find(|(s, _)| rest.starts_with(s))
            .map(|&(_, op)| op)
            .filter(|op| op.precedence() >= min_precedence)
    }

    /// Precedence climbing over the infix operators.
    fn expr(&mut self, min_precedence: u8, depth: usize) -> Result<IndexMap, LayoutError> {
        if depth > MAX_DEPTH {
            return Err(self.error("expression nested too deeply"));
        }
        let mut lhs = self.atom(depth)?;
        while let Some(op) = self.infix(min_precedence) {
            self.position += op.symbol().len();
            let rhs = self.expr(op.precedence() + 1, depth + 1)?;
            lhs = IndexMap::binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn atom(&mut self, depth: usize) -> Result<IndexMap, LayoutError> {
        if self.eat("(") {
            let e = self.expr(0, depth + 1)?;
            if !self.eat(")") {
                return Err(self.error("expected `)`"));
            }
            return Ok(e);
        }
        for (name, op) in [("min", MapOp::Min), ("max", MapOp::Max)] {
            if self.eat(name) {
                if !self.eat("(") {
                    return Err(self.error(format!("expected `(` after `{name}`")));
                }
                let a = self.expr(0, depth + 1)?;
                if !self.eat(",") {
                    return Err(self.error("expected `,`"));
                }
                let b = self.expr(0, depth + 1)?;
                if !self.eat(")") {
                    return Err(self.error("expected `)`"));
                }
                return Ok(IndexMap::binary(op, a, b));
            }
        }
        let rest = self.rest();
        let (dim, body) = match rest.strip_prefix('i') {
            Some(r) => (true, r),
            None => (false, rest.strip_prefix('-').unwrap_or(rest)),
        };
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(self.error("expected a coordinate `iK`, an integer, `(`, `min` or `max`"));
        }
        let len = rest.len() - body.len() + digits;
        let token = &rest[..len];
        let value = if dim {
            token[1..].parse::<u32>().ok().map(IndexMap::Dim)
        } else {
            token.parse::<i64>().ok().map(IndexMap::Const)
        };
        let value = value.ok_or_else(|| self.error(format!("`{token}` is out of range")))?;
        self.position += len;
        Ok(value)
    }
}

impl FromStr for IndexMap {
    type Err = LayoutError;

    fn from_str(text: &str) -> Result<IndexMap, LayoutError> {
        let mut reader = Reader { text, position: 0 };
        let map = reader.expr(0, 0)?;
        if !reader.rest().is_empty() {
            return Err(reader.error("unexpected text after the expression"));
        }
        Ok(map)
    }
}

impl serde::Serialize for IndexMap {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for IndexMap {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<IndexMap, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> IndexMap {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn prints_with_pythons_precedence_and_reads_back() {
        for text in [
            "i0 * 72 + (i1 ^ i0 % 8 * 8)",
            "i0 - (i1 - 3)",
            "(i0 + 1) * 4",
            "i1 // 8 * 64 + (i1 % 8 ^ i0 & 7)",
            "min(i0, 3) * 16 + max(i1 - 2, 0)",
            "i0 << 3 | i1 >> 1",
            "(-2) * i0 + 40",
            "i0 // (4 * 2)",
        ] {
            let map = parse(text);
            assert_eq!(map.to_string(), text);
            assert_eq!(parse(&map.to_string()), map);
        }
        assert_eq!(parse("((i0))+(i1*2)").to_string(), "i0 + i1 * 2");
        assert_eq!(parse("-2*i0").eval(&[3]), Some(-6));
    }

    #[test]
    fn evaluates_as_python_integers_do() {
        let cases = [
            ("i0 // 4", [-7], -2),
            ("i0 % 4", [-7], 1),
            ("i0 % (-4)", [7], -1),
            ("i0 // (-4)", [7], -2),
            ("i0 // (-4)", [8], -2),
            ("i0 ^ 5", [3], 6),
            ("i0 >> 70", [9], 0),
        ];
        for (text, coords, want) in cases {
            assert_eq!(
                parse(text).eval(&coords),
                Some(want),
                "{text} at {coords:?}"
            );
        }
        assert_eq!(parse("i0 // 0").eval(&[1]), None);
        assert_eq!(parse("i0 << 62").eval(&[4]), None);
        assert_eq!(parse("i0 * 9223372036854775807").eval(&[2]), None);
        assert_eq!(parse("i3").eval(&[1, 2]), None);
        let wide = parse("i0 * 65536 * 65536 // 65536");
        assert_eq!(wide.eval(&[3]), Some(3 * 65536));
        assert_eq!(wide.eval_within(&[3], i64::from(i32::MAX)), None);
        assert_eq!(parse("i0 - 5").eval_within(&[1], 5), Some(-4));
        assert_eq!(parse("i0 - 5").eval_within(&[1], 4), None);
    }

    #[test]
    fn checks_one_to_one_over_a_shape() {
        let swizzle = parse("i0 * 8 + (i1 ^ i0 % 8)");
        let offsets = swizzle.check_over(&[8, 8]).expect("one-to-one");
        assert_eq!(offsets[9], 8);
        assert!(parse("i0 + i1").check_over(&[2, 2]).is_err());
        assert!(parse("i1 - 1").check_over(&[1, 2]).is_err());
        assert!(parse("i2").check_over(&[2, 2]).is_err());
    }

    #[test]
    fn rejects_malformed_text_without_panicking() {
        for text in [
            "",
            "i",
            "(i0",
            "i0 +",
            "min(i0)",
            "i0 ** 2",
            "x0",
            "i0 i1",
            "99999999999999999999",
            "i99999999999",
        ] {
            assert!(text.parse::<IndexMap>().is_err(), "{text:?}");
        }
        let deep = format!("{}i0{}", "(".repeat(200), ")".repeat(200));
        assert!(deep.parse::<IndexMap>().is_err());
    }

    #[test]
    fn collisions_are_found_dense_or_sparse() {
        // Dense offsets: the bit set.
        assert_eq!(first_collision(&[3, 1, 0, 2]), None);
        assert_eq!(first_collision(&[3, 1, 3, 1]), Some((0, 2)));
        // Sparse offsets (far apart): the sort.
        assert_eq!(first_collision(&[1 << 40, 7, 1 << 50]), None);
        assert_eq!(
            first_collision(&[1 << 40, 7, 1 << 50, 7, 1 << 40]),
            Some((1, 3))
        );
        assert_eq!(first_collision(&[]), None);
        // The error names the first repeated element and its partner.
        let map: IndexMap = "i0 % 2".parse().expect("map");
        let err = map.check_over(&[4]).expect_err("not injective");
        assert!(err.to_string().contains("elements 0 and 2"), "{err}");
    }
}
