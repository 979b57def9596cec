//! The text side of emission: instruction lists, labels, register files
//! and identifiers.
//!
//! A function body is built as a list of [`Line`]s and printed at the end,
//! after its registers are known, so that declarations can come first. The
//! register file hands out numbered temporaries per class (`%r12`,
//! `%fd3`) and named registers for thread-IR registers (`%f_acc`); the
//! named ones always contain an underscore after the class prefix, so they
//! never collide with temporaries. Identifiers are sanitised to PTX's
//! alphabet and made unique in their scope.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::value::Class;

/// One line of a function body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Line {
    /// An instruction without its trailing `;`, optionally under a guard
    /// predicate (`@%p1` or `@!%p1`).
    Inst {
        guard: Option<String>,
        text: String,
    },
    Label(String),
    Comment(String),
    /// A directive inside the body (`.loc 1 57 9`), written as it is.
    Directive(String),
    Blank,
}

/// An instruction list with a label counter.
#[derive(Debug, Default)]
pub(crate) struct Body {
    pub lines: Vec<Line>,
    labels: u32,
}

impl Body {
    pub fn inst(&mut self, text: impl Into<String>) {
        self.lines.push(Line::Inst {
            guard: None,
            text: text.into(),
        });
    }

    /// An instruction executed only where `guard` (`%p` or `!%p`) holds;
    /// `None` executes it unconditionally.
    pub fn inst_if(&mut self, guard: Option<&str>, text: impl Into<String>) {
        self.lines.push(Line::Inst {
            guard: guard.map(|g| format!("@{g}")),
            text: text.into(),
        });
    }

    /// A comment line; characters outside ASCII (a source line's comment
    /// in another script) are written as `\u{...}` escapes, since `ptxas`
    /// and the driver's JIT refuse any non-ASCII byte, comments included.
    pub fn comment(&mut self, text: impl Into<String>) {
        self.lines.push(Line::Comment(ascii_only(&text.into())));
    }

    pub fn blank(&mut self) {
        self.lines.push(Line::Blank);
    }

    pub fn directive(&mut self, text: impl Into<String>) {
        self.lines.push(Line::Directive(text.into()));
    }

    pub fn label(&mut self, name: &str) {
        self.lines.push(Line::Label(name.to_string()));
    }

    /// A fresh label name (`$L_end3`).
    pub fn fresh_label(&mut self, what: &str) -> String {
        let n = self.labels;
        self.labels += 1;
        format!("$L_{what}{n}")
    }

    /// The body as text, one line each, indented by two spaces.
    pub fn render(&self, out: &mut String) {
        for line in &self.lines {
            match line {
                Line::Inst { guard: None, text } => {
                    let _ = writeln!(out, "  {text};");
                }
                Line::Inst {
                    guard: Some(g),
                    text,
                } => {
                    let _ = writeln!(out, "  {g} {text};");
                }
                Line::Label(l) => {
                    let _ = writeln!(out, "{l}:");
                }
                Line::Comment(c) => {
                    let _ = writeln!(out, "  // {c}");
                }
                Line::Directive(d) => {
                    let _ = writeln!(out, "  {d}");
                }
                Line::Blank => out.push('\n'),
            }
        }
    }
}

/// Writes results straight into their destination: `op %t, ...` followed
/// by `mov D, %t` becomes `op D, ...` when the temporary `%t` appears
/// nowhere else. Moving the write earlier is exact: nothing between the
/// two lines reads `D`.
pub(crate) fn coalesce_moves(lines: &mut Vec<Line>) {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for line in lines.iter() {
        if let Line::Inst { guard, text } = line {
            for t in guard
                .iter()
                .chain(std::iter::once(text))
                .flat_map(|t| register_tokens(t))
            {
                *counts.entry(t.to_string()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for line in lines.drain(..) {
        if let Line::Inst { guard: None, text } = &line
            && let Some((dst, src)) = simple_mov(text)
            && is_temp(src)
            && same_class(dst, src)
            && counts.get(src) == Some(&2)
            && let Some(Line::Inst {
                guard: None,
                text: prev,
            }) = out.last_mut()
            && let Some(rewritten) = with_destination(prev, src, dst)
        {
            *prev = rewritten;
            continue;
        }
        out.push(line);
    }
    *lines = out;
}

/// The register names in an instruction.
fn register_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '%' || c == '$'))
        .filter(|t| t.starts_with('%'))
}

/// `(D, S)` of `mov.T D, S` with plain register operands.
fn simple_mov(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("mov.")?;
    let (_, operands) = rest.split_once(' ')?;
    let (d, s) = operands.split_once(", ")?;
    let plain = |x: &str| x.starts_with('%') && !x.contains(['{', '}', ',', ' ']);
    (plain(d) && plain(s)).then_some((d, s))
}

/// Whether two registers are of one class, by their prefixes (`%f12` and
/// `%f_acc` are; `%r3` and `%f_acc` are not): a result may only be
/// redirected into a register its instruction can write.
fn same_class(a: &str, b: &str) -> bool {
    let prefix = |s: &str| {
        s.trim_start_matches('%')
            .chars()
            .take_while(char::is_ascii_lowercase)
            .collect::<String>()
    };
    prefix(a) == prefix(b)
}

/// A numbered temporary (`%r12`, `%fd3`).
fn is_temp(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('%') else {
        return false;
    };
    let digits = rest.trim_start_matches(|c: char| c.is_ascii_lowercase());
    let prefix = &rest[..rest.len() - digits.len()];
    matches!(prefix, "p" | "h" | "r" | "rd" | "f" | "fd")
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
}

/// `text` with its destination operand `old` replaced by `new`, when the
/// instruction's first operand is a destination equal to `old`.
fn with_destination(text: &str, old: &str, new: &str) -> Option<String> {
    let (opcode, operands) = text.split_once(' ')?;
    let writes_first = !["st.", "red.", "cp.", "bra", "bar.", "call", "ret", "mma."]
        .iter()
        .any(|p| opcode.starts_with(p));
    let (first, rest) = operands.split_once(',')?;
    (writes_first && first == old).then(|| format!("{opcode} {new},{rest}"))
}

/// The registers of one function.
#[derive(Debug, Default)]
pub(crate) struct RegFile {
    temps: [u32; 6],
    /// Named registers in declaration order, with the array length for
    /// parameterised declarations (`%f_acc_<4>`), 0 for a scalar.
    named: Vec<(Class, String, u32)>,
    names: Names,
}

fn class_index(class: Class) -> usize {
    match class {
        Class::Pred => 0,
        Class::B16 => 1,
        Class::B32 => 2,
        Class::B64 => 3,
        Class::F32 => 4,
        Class::F64 => 5,
    }
}

impl RegFile {
    /// A fresh temporary of `class`.
    pub fn temp(&mut self, class: Class) -> String {
        let slot = &mut self.temps[class_index(class)];
        let name = format!("{}{}", class.temp_prefix(), *slot);
        *slot += 1;
        name
    }

    /// A named register `%<prefix>_<base>`, unique in the function.
    pub fn named(&mut self, class: Class, base: &str) -> String {
        let stem = format!("{}_{}", class.temp_prefix(), sanitize(base));
        let name = self.names.unique(&stem);
        self.named.push((class, name.clone(), 0));
        name
    }

    /// `len` named registers `%<prefix>_<base>_0 ..`, declared together.
    pub fn named_array(&mut self, class: Class, base: &str, len: u32) -> Vec<String> {
        let stem = format!("{}_{}", class.temp_prefix(), sanitize(base));
        // Reserve every element name so that later names cannot collide.
        let mut candidate = stem.clone();
        let mut n = 1;
        while (0..len).any(|i| self.names.contains(&format!("{candidate}_{i}")))
            || self.names.contains(&candidate)
        {
            n += 1;
            candidate = format!("{stem}_{n}");
        }
        let elements: Vec<String> = (0..len).map(|i| format!("{candidate}_{i}")).collect();
        for e in &elements {
            self.names.insert(e);
        }
        self.names.insert(&candidate);
        self.named.push((class, format!("{candidate}_"), len));
        elements
    }

    /// Reserves a name so that no register takes it (parameters of a
    /// `.func`).
    pub fn reserve(&mut self, name: &str) {
        self.names.insert(name);
    }

    /// The `.reg` declarations.
    pub fn declarations(&self, out: &mut String) {
        for class in Class::ALL {
            let n = self.temps[class_index(class)];
            if n > 0 {
                let _ = writeln!(out, "  .reg {} {}<{n}>;", class.decl(), class.temp_prefix());
            }
        }
        for (class, name, len) in &self.named {
            if *len == 0 {
                let _ = writeln!(out, "  .reg {} {name};", class.decl());
            } else {
                let _ = writeln!(out, "  .reg {} {name}<{len}>;", class.decl());
            }
        }
    }
}

/// A set of identifiers that hands out unique variants of a stem.
#[derive(Debug, Default)]
pub(crate) struct Names {
    used: HashSet<String>,
}

impl Names {
    pub fn contains(&self, name: &str) -> bool {
        self.used.contains(name)
    }

    pub fn insert(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// `stem`, or `stem_2`, `stem_3`, ... whichever is free; recorded.
    pub fn unique(&mut self, stem: &str) -> String {
        let mut name = stem.to_string();
        let mut n = 1;
        while self.used.contains(&name) {
            n += 1;
            name = format!("{stem}_{n}");
        }
        self.used.insert(name.clone());
        name
    }
}

/// `name` with every character outside `[A-Za-z0-9_]` replaced by `_`
/// (and `_` for an empty name).
pub(crate) fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_string() } else { s }
}

/// Whether `name` is a PTX identifier that a host can look up as written:
/// a letter followed by letters, digits, `_` and `$`, or `_`/`$` followed
/// by at least one of those.
pub(crate) fn is_ptx_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let rest_ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    if first.is_ascii_alphabetic() {
        chars.all(rest_ok)
    } else if first == '_' || first == '$' {
        let rest: Vec<char> = chars.collect();
        !rest.is_empty() && rest.into_iter().all(rest_ok)
    } else {
        false
    }
}

/// `text` with every non-ASCII character replaced by its `\u{...}` escape.
pub(crate) fn ascii_only(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_written_into_their_destination() {
        let inst = |t: &str| Line::Inst {
            guard: None,
            text: t.to_string(),
        };
        let mut lines = vec![
            inst("add.s32 %r2, %r0, %r1"),
            inst("mov.b32 %r_base, %r2"),
            inst("mul.lo.s32 %r3, %r_base, 4"),
            inst("mov.b32 %r_x, %r3"),
            inst("st.global.b32 [%rd0], %r3"),
        ];
        coalesce_moves(&mut lines);
        assert_eq!(
            lines,
            vec![
                inst("add.s32 %r_base, %r0, %r1"),
                inst("mul.lo.s32 %r3, %r_base, 4"),
                inst("mov.b32 %r_x, %r3"),
                inst("st.global.b32 [%rd0], %r3"),
            ]
        );
    }

    #[test]
    fn names_are_sanitised_and_unique() {
        let mut regs = RegFile::default();
        assert_eq!(regs.named(Class::F32, "acc"), "%f_acc");
        assert_eq!(regs.named(Class::F32, "acc"), "%f_acc_2");
        assert_eq!(regs.named(Class::B32, "a.b"), "%r_a_b");
        let elems = regs.named_array(Class::F32, "acc", 2);
        assert_eq!(elems, vec!["%f_acc_3_0", "%f_acc_3_1"]);
        assert_eq!(regs.temp(Class::F32), "%f0");
        assert!(is_ptx_identifier("gemm_1"));
        assert!(!is_ptx_identifier("1x"));
        assert!(!is_ptx_identifier("a-b"));
    }
}
