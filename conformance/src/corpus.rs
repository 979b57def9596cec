//! The test corpus: our own TileLang kernels in `conformance/corpus/`, each
//! with a grid file that expands it into test cases with stable ids.
//!
//! # Grid files
//!
//! Every `*.grid.json` directly in the corpus directory describes the cases
//! of one family. A grid file is a JSON object with these fields (the ones
//! marked optional may be left out):
//!
//! ```json
//! {"family": "gemm", "file": "gemm.py", "level": 2,
//!  "kernel": "matmul({M}, {N}, {K}, trans_A={ta}, trans_B={tb}, dtype=\"{dtype}\")",
//!  "id": "{layout}.{short}_f32.m{M}n{N}k{K}",
//!  "class": {"Accumulation": {"reduction_len": "{K}", "accumulator": "F32"}},
//!  "needs": ["gemm.{short}"], "nondeterministic": false,
//!  "axes": [[{"layout": "nn", "ta": false, "tb": false}, {"layout": "nt", "ta": false, "tb": true}],
//!           [{"dtype": "float16", "short": "f16"}, {"dtype": "float32", "short": "f32"}],
//!           [{"M": 64, "N": 64, "K": 64}, {"M": 257, "N": 129, "K": 77}]]}
//! ```
//!
//! - `family`: the family name, `[a-z0-9_]+`; the second segment of every id.
//! - `file`: the kernel file, relative to the corpus directory (a TileLang
//!   `.py` file, or a Tile IR `.tir` file for malformed-IR cases).
//! - `level`: 0 to 4, as a number, or a string (`"2"`, `"l2"`, `"{lvl}"`)
//!   parsed after substitution.
//! - `kernel` (optional, may be `null`): the `--kernel` call expression;
//!   `null` compiles the file's single builder with its defaults.
//! - `defines` (optional): `-D NAME=VALUE` bindings, an object of strings.
//! - `id`: the case's id within its family; the full id is
//!   `tilec.l<level>.<family>.<id>`, and must match
//!   `^tilec\.l[0-4]\.[a-z0-9_]+(\.[a-z0-9_]+)+$`.
//! - `class` (optional, default `"BitExact"`): the tolerance class, in the
//!   serde form of [`OpClass`] (`"BitExact"`,
//!   `{"Elementwise": {"ulps": "2", "fast_math_ulps": "8"}}`, ...). Numeric
//!   fields may be written as strings: after substitution, every string of
//!   the class that consists of decimal digits only becomes a number.
//! - `needs` (optional): capabilities the target must claim; a case whose
//!   needs are not claimed is `NotSupported`.
//! - `nondeterministic` (optional, default `false`): results may differ
//!   between runs (atomics), so the twice-run bit-identity check is skipped.
//! - `special_values` (optional, default `false`): floating-point inputs
//!   mix special values (±0, ±inf, NaN, subnormals, the largest finite
//!   value) into the seeded random data (see `inputs`).
//! - `expect_error` (optional): the case must be refused (see below).
//! - `axes` (optional): a list of axes, each a non-empty list of variable
//!   bindings (objects from names to JSON values). The cases are the
//!   cartesian product of the axes, each with the union of one binding from
//!   every axis (a name bound by two axes is an error). No axes: one case.
//! - `cases` (optional): instead of one template, a list of them: each
//!   entry is an object of the fields above that override the file's
//!   top-level fields (which then act as defaults), and is expanded by its
//!   own `axes`.
//!
//! ## Substitution
//!
//! `{name}` in `kernel`, `id`, `level`, `needs`, `defines` values and any
//! string inside `class` is replaced by the value bound to `name`: strings
//! as they are, numbers as JSON writes them, booleans as Python spells them
//! (`True`, `False`), `null` as `None`. `{{` and `}}` stand for literal
//! braces. A name bound by no axis is an error naming the grid file. In
//! `class`, a string that is exactly `{name}` bound to an object or a list
//! is replaced by that JSON value (itself substituted in turn), so one axis
//! can pick the class: `"class": "{cls}"` with
//! `{"kind": "max", "cls": "BitExact"}` and
//! `{"kind": "sum", "cls": {"Accumulation": {"reduction_len": "{len}", ...}}}`.
//!
//! ## Negative cases
//!
//! `expect_error` names how the case must be refused:
//!
//! - a front-end diagnostic code (`T0301`, ...): compiling the `.py` file
//!   must report an error with that code;
//! - `InvalidIr` for a `.tir` file: the IR text must fail to parse or to
//!   verify; a backend given it must answer `InvalidIr`;
//! - another plugin error code (`UnsupportedFeature`, `UnsupportedDtype`):
//!   the kernel is valid for the front end and the reference interpreter,
//!   and a target must refuse it with that code unless it claims every
//!   capability listed in `needs` (then the case only has to compile). A
//!   case with empty `needs` (a kernel no target can run, such as one
//!   beyond every target's shared memory) must always be refused.
//!
//! ## Seeds
//!
//! [`seed_for`] derives a case's input seed from its full id with 64-bit
//! FNV-1a: stable across tilec versions, platforms and the order of cases,
//! so `tilec conformance --repro ID` replays one case alone.

use crate::result::Level;
use crate::tolerance::OpClass;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Suffix of the grid files in the corpus directory.
pub const GRID_SUFFIX: &str = ".grid.json";

/// One test case of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Full id: `tilec.<level>.<family>.<case id>`.
    pub id: String,
    pub family: String,
    /// The kernel file (corpus directory joined with the grid's `file`).
    pub file: PathBuf,
    /// The `--kernel` call expression; `None`: the file's single builder.
    pub kernel: Option<String>,
    /// `-D NAME=VALUE` bindings.
    pub defines: BTreeMap<String, String>,
    pub level: Level,
    pub class: OpClass,
    /// Capabilities the target must claim.
    pub needs: Vec<String>,
    /// Results may legitimately differ between runs (atomics).
    pub nondeterministic: bool,
    /// Floating-point inputs mix special values (±0, ±inf, NaN, subnormals,
    /// the largest finite value) into the random data.
    pub special_values: bool,
    /// For negative cases: the error code the case must be refused with.
    pub expect_error: Option<String>,
    /// Input seed, [`seed_for`] of `id`.
    pub seed: u64,
}

/// Why the corpus could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: invalid grid file: {source}", .path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: unknown placeholder `{{{name}}}` in `{text}`", .path.display())]
    UnknownPlaceholder {
        path: PathBuf,
        name: String,
        text: String,
    },
    #[error("{}: malformed placeholder in `{text}` (use `{{{{` and `}}}}` for literal braces)", .path.display())]
    BadPlaceholder { path: PathBuf, text: String },
    #[error("{}: {message}", .path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("{}: case `{id}`: invalid class: {source}", .path.display())]
    BadClass {
        path: PathBuf,
        id: String,
        source: serde_json::Error,
    },
    #[error("{}: invalid test id `{id}` (ids match ^tilec\\.l[0-4]\\.[a-z0-9_]+(\\.[a-z0-9_]+)+$)", .path.display())]
    InvalidId { path: PathBuf, id: String },
    #[error("duplicate test id `{id}` (in {} and {})", .first.display(), .second.display())]
    DuplicateId {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{}: case `{id}`: kernel file {} does not exist", .path.display(), .file.display())]
    MissingFile {
        path: PathBuf,
        id: String,
        file: PathBuf,
    },
}

/// The corpus shipped in this repository (`conformance/corpus`).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The input seed of a test: 64-bit FNV-1a of the full id's UTF-8 bytes.
/// Stable across tilec versions and platforms (no `Hash`/`RandomState`).
pub fn seed_for(id: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    id.bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// Loads every `*.grid.json` of `dir` and expands it into cases, sorted by
/// id. Duplicate ids, unknown placeholders, invalid ids and missing kernel
/// files are errors.
pub fn load(dir: &Path) -> Result<Vec<Case>, CorpusError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CorpusError::Io { path, source }
    };
    let mut grids: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .map(|e| e.map(|e| e.path()).map_err(io(dir)))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(GRID_SUFFIX))
        })
        .collect();
    grids.sort();

    let mut cases: Vec<(Case, PathBuf)> = Vec::new();
    for grid in &grids {
        let text = std::fs::read_to_string(grid).map_err(io(grid))?;
        for case in expand_grid(dir, grid, &text)? {
            cases.push((case, grid.clone()));
        }
    }
    cases.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    for pair in cases.windows(2) {
        if pair[0].0.id == pair[1].0.id {
            return Err(CorpusError::DuplicateId {
                id: pair[0].0.id.clone(),
                first: pair[0].1.clone(),
                second: pair[1].1.clone(),
            });
        }
    }
    Ok(cases.into_iter().map(|(c, _)| c).collect())
}

/// One template of a grid file, before expansion.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    family: String,
    file: String,
    level: Value,
    #[serde(default)]
    kernel: Option<String>,
    #[serde(default)]
    defines: BTreeMap<String, String>,
    id: String,
    #[serde(default)]
    class: Option<Value>,
    #[serde(default)]
    needs: Vec<String>,
    #[serde(default)]
    nondeterministic: bool,
    #[serde(default)]
    special_values: bool,
    #[serde(default)]
    expect_error: Option<String>,
    #[serde(default)]
    axes: Vec<Vec<Map<String, Value>>>,
}

type Bindings = BTreeMap<String, Value>;

fn expand_grid(dir: &Path, path: &Path, text: &str) -> Result<Vec<Case>, CorpusError> {
    let json_err = |source| CorpusError::Json {
        path: path.to_path_buf(),
        source,
    };
    let invalid = |message: String| CorpusError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let root: Value = serde_json::from_str(text).map_err(json_err)?;
    let Value::Object(mut top) = root else {
        return Err(invalid("a grid file must be a JSON object".into()));
    };
    let templates: Vec<Map<String, Value>> = match top.remove("cases") {
        None => vec![top],
        Some(Value::Array(entries)) => entries
            .into_iter()
            .map(|entry| match entry {
                Value::Object(fields) => {
                    let mut merged = top.clone();
                    merged.extend(fields);
                    Ok(merged)
                }
                _ => Err(invalid("every entry of `cases` must be an object".into())),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(invalid("`cases` must be a list".into())),
    };

    let mut out = Vec::new();
    for fields in templates {
        let template: Template = serde_json::from_value(Value::Object(fields)).map_err(json_err)?;
        if !is_segment(&template.family) {
            return Err(invalid(format!(
                "family `{}` must match [a-z0-9_]+",
                template.family
            )));
        }
        for (index, axis) in template.axes.iter().enumerate() {
            if axis.is_empty() {
                return Err(invalid(format!("axis {index} has no bindings")));
            }
        }
        let mut combos: Vec<Bindings> = vec![Bindings::new()];
        for axis in &template.axes {
            let mut next = Vec::with_capacity(combos.len() * axis.len());
            for combo in &combos {
                for binding in axis {
                    let mut merged = combo.clone();
                    for (name, value) in binding {
                        if merged.insert(name.clone(), value.clone()).is_some() {
                            return Err(invalid(format!("`{name}` is bound by two axes")));
                        }
                    }
                    next.push(merged);
                }
            }
            combos = next;
        }
        for bindings in &combos {
            out.push(instantiate(dir, path, &template, bindings)?);
        }
    }
    Ok(out)
}

fn instantiate(
    dir: &Path,
    path: &Path,
    t: &Template,
    bindings: &Bindings,
) -> Result<Case, CorpusError> {
    let sub = |text: &str| substitute(path, text, bindings);
    let level_text = match &t.level {
        Value::Number(n) => n.to_string(),
        Value::String(s) => sub(s)?,
        other => other.to_string(),
    };
    let level = parse_level(&level_text).ok_or_else(|| CorpusError::Invalid {
        path: path.to_path_buf(),
        message: format!("invalid level `{level_text}` (0 to 4)"),
    })?;
    let local_id = sub(&t.id)?;
    let id = format!("tilec.{}.{}.{}", level.id(), t.family, local_id);
    if !is_valid_id(&id) {
        return Err(CorpusError::InvalidId {
            path: path.to_path_buf(),
            id,
        });
    }
    let kernel = t.kernel.as_deref().map(sub).transpose()?;
    let defines = t
        .defines
        .iter()
        .map(|(k, v)| Ok((k.clone(), sub(v)?)))
        .collect::<Result<BTreeMap<_, _>, CorpusError>>()?;
    let needs = t
        .needs
        .iter()
        .map(|n| sub(n))
        .collect::<Result<Vec<_>, _>>()?;
    let class_value = match &t.class {
        None => Value::String("BitExact".into()),
        Some(v) => numbers_from_digits(substitute_json(path, v, bindings, 0)?),
    };
    let class: OpClass =
        serde_json::from_value(class_value).map_err(|source| CorpusError::BadClass {
            path: path.to_path_buf(),
            id: id.clone(),
            source,
        })?;
    let expect_error = t.expect_error.as_deref().map(sub).transpose()?;
    let file = dir.join(sub(&t.file)?);
    if !file.is_file() {
        return Err(CorpusError::MissingFile {
            path: path.to_path_buf(),
            id,
            file,
        });
    }
    let seed = seed_for(&id);
    Ok(Case {
        id,
        family: t.family.clone(),
        file,
        kernel,
        defines,
        level,
        class,
        needs,
        nondeterministic: t.nondeterministic,
        special_values: t.special_values,
        expect_error,
        seed,
    })
}

fn parse_level(text: &str) -> Option<Level> {
    let digits = text
        .strip_prefix('l')
        .or_else(|| text.strip_prefix('L'))
        .unwrap_or(text);
    digits.parse::<u8>().ok().and_then(Level::from_index)
}

/// `[a-z0-9_]+`.
fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `^tilec\.l[0-4]\.[a-z0-9_]+(\.[a-z0-9_]+)+$`.
pub fn is_valid_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    parts.len() >= 4
        && parts[0] == "tilec"
        && matches!(parts[1], "l0" | "l1" | "l2" | "l3" | "l4")
        && parts[2..].iter().all(|p| is_segment(p))
}

/// How a bound value reads inside a string.
fn render(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// Replaces every `{name}` of `text` by its binding; `{{`/`}}` are braces.
fn substitute(path: &Path, text: &str, bindings: &Bindings) -> Result<String, CorpusError> {
    let bad = || CorpusError::BadPlaceholder {
        path: path.to_path_buf(),
        text: text.to_string(),
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(['{', '}']) {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if rest[pos..].starts_with("{{") {
            out.push('{');
            rest = &rest[pos + 2..];
        } else if rest[pos..].starts_with("}}") {
            out.push('}');
            rest = &rest[pos + 2..];
        } else if rest[pos..].starts_with('}') {
            return Err(bad());
        } else {
            let end = after.find('}').ok_or_else(bad)?;
            let name = &after[..end];
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(bad());
            }
            let value = bindings
                .get(name)
                .ok_or_else(|| CorpusError::UnknownPlaceholder {
                    path: path.to_path_buf(),
                    name: name.to_string(),
                    text: text.to_string(),
                })?;
            out.push_str(&render(value));
            rest = &after[end + 1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Nesting limit of whole-value substitution (`"{cls}"` bound to an object
/// that refers to further placeholders).
const MAX_SUBSTITUTION_DEPTH: usize = 8;

/// Substitutes every string inside `value`; a string that is exactly
/// `{name}` bound to an object or a list becomes that value.
fn substitute_json(
    path: &Path,
    value: &Value,
    bindings: &Bindings,
    depth: usize,
) -> Result<Value, CorpusError> {
    if depth > MAX_SUBSTITUTION_DEPTH {
        return Err(CorpusError::Invalid {
            path: path.to_path_buf(),
            message: "placeholders nest too deeply in `class`".into(),
        });
    }
    Ok(match value {
        Value::String(s) => {
            let whole = s
                .strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'))
                .filter(|name| !name.contains(['{', '}']))
                .and_then(|name| bindings.get(name))
                .filter(|v| v.is_object() || v.is_array());
            match whole {
                Some(v) => substitute_json(path, v, bindings, depth + 1)?,
                None => Value::String(substitute(path, s, bindings)?),
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute_json(path, v, bindings, depth))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| Ok((k.clone(), substitute_json(path, v, bindings, depth)?)))
                .collect::<Result<_, CorpusError>>()?,
        ),
        other => other.clone(),
    })
}

/// Turns every string made only of decimal digits into a number.
fn numbers_from_digits(value: Value) -> Value {
    match value {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or(Value::String(s)),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_from_digits).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, numbers_from_digits(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings(pairs: &[(&str, Value)]) -> Bindings {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors of 64-bit FNV-1a.
        assert_eq!(seed_for(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(seed_for("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(seed_for("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn substitution_renders_python_values() {
        let b = bindings(&[
            ("t", Value::Bool(true)),
            ("n", Value::from(64)),
            ("s", "f16".into()),
        ]);
        let p = Path::new("x.grid.json");
        assert_eq!(
            substitute(p, "f({n}, {t}, \"{s}\") {{}}", &b).expect("substitutes"),
            "f(64, True, \"f16\") {}"
        );
        assert!(matches!(
            substitute(p, "{missing}", &b),
            Err(CorpusError::UnknownPlaceholder { name, .. }) if name == "missing"
        ));
        assert!(matches!(
            substitute(p, "{n", &b),
            Err(CorpusError::BadPlaceholder { .. })
        ));
        assert!(matches!(
            substitute(p, "n}", &b),
            Err(CorpusError::BadPlaceholder { .. })
        ));
    }

    #[test]
    fn class_placeholders_and_numbers() {
        let b = bindings(&[
            ("len", Value::from(48)),
            (
                "cls",
                serde_json::json!({"Accumulation": {"reduction_len": "{len}", "accumulator": "F32"}}),
            ),
        ]);
        let p = Path::new("x.grid.json");
        let v =
            numbers_from_digits(substitute_json(p, &"{cls}".into(), &b, 0).expect("substitutes"));
        let class: OpClass = serde_json::from_value(v).expect("a class");
        assert_eq!(
            class,
            OpClass::Accumulation {
                reduction_len: 48,
                accumulator: tilec_core::ir::DType::F32,
                rounded_terms: None,
            }
        );
    }

    #[test]
    fn ids_are_checked() {
        assert!(is_valid_id("tilec.l2.gemm.nt.f16_f32.m257n129k77"));
        assert!(!is_valid_id("tilec.l2.gemm"));
        assert!(!is_valid_id("tilec.l5.gemm.x"));
        assert!(!is_valid_id("tilec.l2.gemm.NT"));
        assert!(!is_valid_id("tilec.l2.gemm..x"));
    }

    /// A fresh directory holding `files` (name, contents) and an empty `k.py`.
    fn corpus_with(tag: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tilec-corpus-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("k.py"), "").expect("kernel file");
        for (name, text) in files {
            std::fs::write(dir.join(name), text).expect("grid file");
        }
        dir
    }

    #[test]
    fn load_expands_sorts_and_rejects() {
        let grid = r#"{"family": "f", "file": "k.py", "level": 2, "kernel": "k({n})",
                       "id": "c.n{n}", "axes": [[{"n": 2}, {"n": 1}]]}"#;
        let dir = corpus_with("ok", &[("f.grid.json", grid)]);
        let cases = load(&dir).expect("loads");
        let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["tilec.l2.f.c.n1", "tilec.l2.f.c.n2"]);
        assert_eq!(cases[0].kernel.as_deref(), Some("k(1)"));
        assert_eq!(cases[0].class, OpClass::BitExact);

        let dir = corpus_with("dup", &[("a.grid.json", grid), ("b.grid.json", grid)]);
        assert!(
            matches!(load(&dir), Err(CorpusError::DuplicateId { id, .. }) if id == "tilec.l2.f.c.n1")
        );

        let bad = grid.replace("k({n})", "k({m})");
        let dir = corpus_with("unknown", &[("u.grid.json", &bad)]);
        let err = load(&dir).expect_err("unknown placeholder");
        assert!(
            err.to_string().contains("u.grid.json") && err.to_string().contains("{m}"),
            "{err}"
        );

        let upper = grid.replace("c.n{n}", "C.n{n}");
        let dir = corpus_with("id", &[("i.grid.json", &upper)]);
        assert!(matches!(load(&dir), Err(CorpusError::InvalidId { .. })));
    }
}
