//! The layering rules of `ARCHITECTURE.md` ("Layering"), checked on the
//! sources: which module of `tilec-core` may use which, which parts of core
//! a plugin may use, which workspace crates a plugin may depend on, and
//! that no library crate lives under `tools/`.
//!
//! The rules are data ([`CORE_RULES`], [`PLUGIN_CORE_MODULES`],
//! [`PLUGIN_CRATES`], [`PLUGIN_API_CRATES`]); the breaks that a redesign
//! still has to remove are listed once, with the reason, in
//! [`KNOWN_EXCEPTIONS`]. Any other use across the rules fails the test with
//! the file and line of the path that crosses them.
//!
//! Uses are found with a small tokenizer, not a Rust parser: comments,
//! strings and character literals are skipped; every path that starts with
//! `crate::`, `super::` (resolved through the file's module and its inline
//! `mod`s) or `tilec_core::` is a use of the module its first segment names,
//! `use` groups (`crate::{ir::X, text::Y}`) included. Test code is exempt
//! (tests may build their inputs with the text parser or the front end):
//! items under `#[cfg(test)]` or `#[test]`, and the files of modules
//! declared `#[cfg(test)] mod name;`.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

// ---- The rules (keep in step with ARCHITECTURE.md, "Layering") -------------

/// Each module of `tilec-core` and the other modules of the crate its
/// library code may use. A module may always use itself.
const CORE_RULES: &[(&str, &[&str])] = &[
    ("layout", &[]),
    ("ir", &["layout"]),
    ("text", &["ir", "layout"]),
    ("target", &["ir", "layout"]),
    ("thread", &["ir", "layout", "target", "text"]),
    ("interp", &["ir", "layout"]),
    ("simt", &["interp", "ir", "layout", "target", "thread"]),
    ("verify", &["ir", "layout", "target"]),
    ("front", &["ir", "layout", "target", "text"]),
    (
        "lower",
        &["ir", "layout", "target", "text", "thread", "verify"],
    ),
    (
        "passes",
        &[
            "ir", "layout", "lower", "target", "text", "thread", "verify",
        ],
    ),
];

/// The modules of `tilec-core` that the plugin interface and plugins may
/// use (`tilec_core::X`): the IR levels, target descriptions and the text
/// forms.
const PLUGIN_CORE_MODULES: &[&str] = &["ir", "target", "text", "thread"];

/// The modules of `tilec-core` that `tilec-inspect` may use: target
/// descriptions only.
const INSPECT_CORE_MODULES: &[&str] = &["target"];

/// The workspace crates a plugin may depend on (normal and build
/// dependencies). `tilec-inspect` is the one reader of code objects, a
/// library outside `tools/` that depends on core's target descriptions
/// only; a plugin reads its own toolchain's output with it.
const PLUGIN_CRATES: &[&str] = &["tilec-core", "tilec-inspect", "tilec-plugin-api"];

/// The workspace crates `tilec-plugin-api` may depend on.
const PLUGIN_API_CRATES: &[&str] = &["tilec-core"];

/// A use across the rules that is known and waits for a redesign: `from`
/// (a unit as [`Unit`] names it: `core::lower`, `plugin-api`, `plugins`
/// for every plugin) may use `to` (`core::passes`, ...).
#[derive(Debug)]
struct Exception {
    from: &'static str,
    to: &'static str,
    why: &'static str,
}

/// The known breaks, in one place. Remove an entry when its break is
/// gone; the test reports entries that nothing needs any more.
const KNOWN_EXCEPTIONS: &[Exception] = &[
    Exception {
        from: "core::lower",
        to: "core::passes",
        why: "the lowering takes the shared-memory plan's live intervals \
              (`passes::plan_shared_memory::live_intervals`) to let buffers \
              share memory, and calls the bind replay and substitution \
              through `passes` (re-exports of `ir::visit`); live intervals \
              and the interval analyses move into `ir` with the core \
              redesign, after which `passes` sits strictly above `lower`",
    },
    Exception {
        from: "plugin-api",
        to: "core::lower",
        why: "`tilec_plugin_api::simt` wraps the core's SIMT lowering for \
              the plugins that consume thread IR; the redesign hands \
              plugins lowered thread IR across the versioned boundary \
              instead of linking the lowering into them",
    },
    Exception {
        from: "plugins",
        to: "core::lower",
        why: "the rocm backend names the lowering's `LowerOptions` (the cuda \
              backend reaches the lowering through `tilec_plugin_api::simt`): \
              the lowering runs in the plugin's process, the same break as \
              `plugin-api` -> `core::lower`",
    },
];

// ---- Units and uses ---------------------------------------------------------

/// What a source file belongs to, for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Unit {
    /// A top-level module of `tilec-core` (`core/src/<module>/...`).
    Core(String),
    /// `tilec-plugin-api` (`plugin-api/src`).
    PluginApi,
    /// A backend plugin (`plugins/<name>/src`).
    Plugin(String),
    /// `tilec-inspect` (`inspect/src`).
    Inspect,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unit::Core(m) => write!(f, "core::{m}"),
            Unit::PluginApi => write!(f, "plugin-api"),
            Unit::Plugin(name) => write!(f, "plugins/{name}"),
            Unit::Inspect => write!(f, "inspect"),
        }
    }
}

impl Unit {
    /// The unit of a file given by its path from the workspace root
    /// (`/`-separated), and the file's module path inside its crate
    /// (`["lower", "gemm"]` for `core/src/lower/gemm.rs`); `None` for
    /// files the rules do not cover (crate roots, tools, tests, benches).
    fn of(path: &str) -> Option<(Unit, Vec<String>)> {
        let parts: Vec<&str> = path.split('/').collect();
        let (unit, rest) = match parts.as_slice() {
            ["core", "src", rest @ ..] => {
                let first = rest.first()?;
                let module = first.strip_suffix(".rs").unwrap_or(first);
                if rest.len() == 1 && module == "lib" {
                    return None;
                }
                (Unit::Core(module.to_string()), rest)
            }
            ["plugin-api", "src", rest @ ..] => (Unit::PluginApi, rest),
            ["plugins", name, "src", rest @ ..] => (Unit::Plugin(name.to_string()), rest),
            ["inspect", "src", rest @ ..] => (Unit::Inspect, rest),
            _ => return None,
        };
        let mut module: Vec<String> = rest
            .iter()
            .map(|p| p.strip_suffix(".rs").unwrap_or(p).to_string())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        Some((unit, module))
    }

    /// The name [`Exception::from`] uses: `plugins` for every plugin.
    fn exception_name(&self) -> String {
        match self {
            Unit::Plugin(_) => "plugins".to_string(),
            other => other.to_string(),
        }
    }

    /// Whether this unit may use `target` (a `core::<module>` name), and
    /// if not, the list of what it may use, for the message.
    fn allows(&self, target: &str) -> Result<(), String> {
        let module = target.strip_prefix("core::").unwrap_or(target);
        let allowed: Vec<&str> = match self {
            Unit::Core(m) => {
                if m == module {
                    return Ok(());
                }
                match CORE_RULES.iter().find(|(name, _)| name == m) {
                    Some((_, allowed)) => allowed.to_vec(),
                    None => Vec::new(),
                }
            }
            Unit::PluginApi | Unit::Plugin(_) => PLUGIN_CORE_MODULES.to_vec(),
            Unit::Inspect => INSPECT_CORE_MODULES.to_vec(),
        };
        if allowed.contains(&module) {
            Ok(())
        } else if allowed.is_empty() {
            Err("no other module".to_string())
        } else {
            Err(allowed.join(", "))
        }
    }
}

/// A use of a module across the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Violation {
    /// The file, from the workspace root.
    file: String,
    /// 1-based line of the path.
    line: usize,
    /// Who uses (`core::front`).
    from: String,
    /// What is used (`core::passes`).
    to: String,
    /// The path as written, up to its first segment after the root.
    path: String,
    /// What `from` may use.
    allowed: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}` uses `{}` (`{}`); ARCHITECTURE.md (Layering) lets `{}` use only: {}",
            self.file, self.line, self.from, self.to, self.path, self.from, self.allowed
        )
    }
}

// ---- The tokenizer ----------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
}

/// The tokens of `src` that matter for paths: identifiers (raw `r#`
/// stripped), `::` and single punctuation; comments, strings, character
/// literals, lifetimes and numbers are dropped.
fn tokenize(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r')) && {
            let j = if c == 'b' { i + 2 } else { i + 1 };
            let mut k = j;
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            // A raw string: r"..." or r#"..."#, maybe with a `b`.
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                if chars[j] == '\n' {
                    line += 1;
                }
                j += 1;
            }
            i = j;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            i = j + 1;
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let j = if c == 'b' { i + 2 } else { i + 1 };
            if at(j) == '\\' {
                let mut k = j + 1;
                while k < chars.len() && chars[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
            } else if at(j + 1) == '\'' {
                i = j + 2;
            } else {
                // A lifetime or label: skip the quote, the name follows.
                i = j;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while at(j).is_alphanumeric() || at(j) == '_' {
                j += 1;
            }
            let mut word: String = chars[i..j].iter().collect();
            if word == "r" && at(j) == '#' && (at(j + 1).is_alphabetic() || at(j + 1) == '_') {
                let mut k = j + 1;
                while at(k).is_alphanumeric() || at(k) == '_' {
                    k += 1;
                }
                word = chars[j + 1..k].iter().collect();
                j = k;
            }
            out.push(Token {
                tok: Tok::Ident(word),
                line,
            });
            i = j;
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' || at(i) == '.' {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::Path,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        }
    }
    out
}

fn is_punct(t: Option<&Token>, c: char) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(p), .. }) if *p == c)
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token {
            tok: Tok::Ident(s), ..
        }) => Some(s),
        _ => None,
    }
}

/// The index just past the group that opens at `open` (a `{`, `[` or
/// `(`), or the end.
fn skip_group(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0i32;
    let mut i = open;
    while i < tokens.len() {
        if let Tok::Punct(c) = tokens[i].tok {
            match c {
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    tokens.len()
}

/// Whether the attribute whose `[` is at `open` marks test-only code
/// (`#[test]`, `#[cfg(test)]`, `#[cfg(all(test, ...))]`; not
/// `cfg(not(test))`), and the index past it.
fn test_attribute(tokens: &[Token], open: usize) -> (bool, usize) {
    let end = skip_group(tokens, open);
    let inner: Vec<&str> = tokens[open + 1..end.saturating_sub(1)]
        .iter()
        .filter_map(|t| ident(Some(t)))
        .collect();
    let test = inner == ["test"]
        || (inner.first() == Some(&"cfg") && inner.contains(&"test") && !inner.contains(&"not"));
    (test, end)
}

/// The index past the item that starts at `i` (after its attributes):
/// up to a `;` or through the first `{...}` group at its level.
fn skip_item(tokens: &[Token], mut i: usize) -> usize {
    while i < tokens.len() {
        match tokens[i].tok {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => return skip_group(tokens, i),
            Tok::Punct('(') | Tok::Punct('[') => i = skip_group(tokens, i),
            _ => i += 1,
        }
    }
    tokens.len()
}

/// A use found in a file: the module it names and where.
#[derive(Debug, PartialEq, Eq)]
struct Use {
    /// `core::<module>`.
    to: String,
    line: usize,
    path: String,
}

/// What a pass over one file finds: the uses of other modules and the
/// test-only modules it declares out of line (`#[cfg(test)] mod name;`).
#[derive(Debug, Default)]
struct FileScan {
    uses: Vec<Use>,
    test_modules: Vec<String>,
}

/// The first segments of the path that continues at `i` (just past a
/// root and its `::`): one identifier, or one per element of a `{...}`
/// group.
fn first_segments(tokens: &[Token], i: usize) -> Vec<(String, usize)> {
    if let Some(name) = ident(tokens.get(i)) {
        return vec![(name.to_string(), tokens[i].line)];
    }
    if !is_punct(tokens.get(i), '{') {
        return Vec::new();
    }
    let end = skip_group(tokens, i);
    let mut out = Vec::new();
    let mut expect = true;
    let mut j = i + 1;
    while j < end {
        match &tokens[j].tok {
            Tok::Ident(name) if expect => {
                if name != "self" {
                    out.push((name.clone(), tokens[j].line));
                }
                expect = false;
                j += 1;
            }
            Tok::Punct('{') => j = skip_group(tokens, j),
            Tok::Punct(',') => {
                expect = true;
                j += 1;
            }
            _ => j += 1,
        }
    }
    out
}

/// Scans one file of a crate: `module` is the file's module path inside
/// its crate, `core_root` the identifier that names `tilec-core` from this
/// crate (`crate` inside core, `tilec_core` elsewhere), `core_modules` the
/// top-level modules of core.
fn scan(src: &str, module: &[String], in_core: bool, core_modules: &[&str]) -> FileScan {
    let tokens = tokenize(src);
    let mut scan = FileScan::default();
    // Inline modules open at this brace depth: (name, depth).
    let mut inline: Vec<(String, i32)> = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match &t.tok {
            Tok::Punct('#') => {
                let bang = is_punct(tokens.get(i + 1), '!');
                let open = if bang { i + 2 } else { i + 1 };
                if !is_punct(tokens.get(open), '[') {
                    i += 1;
                    continue;
                }
                let (test, mut next) = test_attribute(&tokens, open);
                if test && !bang {
                    // Further attributes of the same item.
                    while is_punct(tokens.get(next), '#') && is_punct(tokens.get(next + 1), '[') {
                        next = skip_group(&tokens, next + 1);
                    }
                    let mut k = next;
                    if ident(tokens.get(k)) == Some("pub") {
                        k += 1;
                        if is_punct(tokens.get(k), '(') {
                            k = skip_group(&tokens, k);
                        }
                    }
                    if ident(tokens.get(k)) == Some("mod")
                        && let Some(name) = ident(tokens.get(k + 1))
                        && is_punct(tokens.get(k + 2), ';')
                    {
                        scan.test_modules.push(name.to_string());
                    }
                    i = skip_item(&tokens, next);
                } else {
                    i = next;
                }
            }
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
                i += 1;
            }
            Tok::Ident(word) if word == "mod" => {
                if let Some(name) = ident(tokens.get(i + 1))
                    && is_punct(tokens.get(i + 2), '{')
                {
                    depth += 1;
                    inline.push((name.to_string(), depth));
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(word)
                if matches!(tokens.get(i + 1).map(|t| &t.tok), Some(Tok::Path))
                    && !matches!(
                        tokens.get(i.wrapping_sub(1)).map(|t| &t.tok),
                        Some(Tok::Path)
                    ) =>
            {
                let root_is_core = if in_core {
                    word == "crate" || word == "super"
                } else {
                    word == "tilec_core"
                };
                if !root_is_core {
                    i += 1;
                    continue;
                }
                let mut j = i;
                if word == "super" {
                    // Count the `super::`s and resolve against the module.
                    let mut supers = 0;
                    while ident(tokens.get(j)) == Some("super")
                        && matches!(tokens.get(j + 1).map(|t| &t.tok), Some(Tok::Path))
                    {
                        supers += 1;
                        j += 2;
                    }
                    let here = module.len() + inline.len();
                    if supers < here {
                        // Still inside the file's top-level module.
                        i = j;
                        continue;
                    }
                } else {
                    j += 2;
                }
                for (name, line) in first_segments(&tokens, j) {
                    if core_modules.contains(&name.as_str()) {
                        scan.uses.push(Use {
                            to: format!("core::{name}"),
                            line,
                            path: format!("{word}::{name}"),
                        });
                    }
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    scan
}

/// The violations of one file: `path` from the workspace root, `src` its
/// text. Files the rules do not cover give none.
fn check_file(path: &str, src: &str, core_modules: &[&str]) -> (Vec<Violation>, FileScan) {
    let Some((unit, module)) = Unit::of(path) else {
        return (Vec::new(), FileScan::default());
    };
    let in_core = matches!(unit, Unit::Core(_));
    let scan = scan(src, &module, in_core, core_modules);
    let mut out = Vec::new();
    for u in &scan.uses {
        let Err(allowed) = unit.allows(&u.to) else {
            continue;
        };
        let from = unit.exception_name();
        if KNOWN_EXCEPTIONS
            .iter()
            .any(|e| e.from == from && e.to == u.to)
        {
            continue;
        }
        out.push(Violation {
            file: path.to_string(),
            line: u.line,
            from: unit.to_string(),
            to: u.to.clone(),
            path: u.path.clone(),
            allowed,
        });
    }
    (out, scan)
}

// ---- Crate-level rules ------------------------------------------------------

/// What the rules need of one crate's manifest.
#[derive(Debug, Default)]
struct Manifest {
    /// Directory from the workspace root (`plugins/cuda`).
    dir: String,
    name: String,
    /// Normal and build dependencies (`[dependencies]`,
    /// `[build-dependencies]`, and their `[target.*]` forms).
    deps: Vec<String>,
    /// Whether the crate has a library target.
    has_lib: bool,
}

/// Reads the package name and dependencies of a `Cargo.toml` (the subset
/// of TOML our manifests use: `[section]` headers, `key = value` and
/// `key.workspace = true` lines). `has_lib_file` says whether `src/lib.rs`
/// exists.
fn parse_manifest(dir: &str, text: &str, has_lib_file: bool) -> Manifest {
    let mut m = Manifest {
        dir: dir.to_string(),
        has_lib: has_lib_file,
        ..Manifest::default()
    };
    let mut section = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            if section == "lib" {
                m.has_lib = true;
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if section == "package" && key == "name" {
            m.name = value.trim().trim_matches('"').to_string();
        }
        let dep_section = section == "dependencies"
            || section == "build-dependencies"
            || (section.starts_with("target.")
                && (section.ends_with(".dependencies")
                    || section.ends_with(".build-dependencies")));
        if dep_section {
            let name = key
                .split('.')
                .next()
                .unwrap_or(key)
                .trim()
                .trim_matches('"');
            m.deps.push(name.to_string());
        }
    }
    m
}

/// The crate-level violations among `manifests`: `internal` names the
/// workspace's own crates (the rules are about those).
fn check_manifests(manifests: &[Manifest], internal: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for m in manifests {
        let in_tools = m.dir == "tools" || m.dir.starts_with("tools/");
        if in_tools && m.has_lib {
            out.push(format!(
                "{}/Cargo.toml: `{}` is a library crate under `tools/`; ARCHITECTURE.md \
                 (Layering) keeps `tools/` for the command line: move it to the \
                 workspace's top level",
                m.dir, m.name
            ));
        }
        let allowed: Option<&[&str]> = if m.dir.starts_with("plugins/") {
            Some(PLUGIN_CRATES)
        } else if m.dir == "plugin-api" {
            Some(PLUGIN_API_CRATES)
        } else {
            None
        };
        let Some(allowed) = allowed else {
            continue;
        };
        for dep in &m.deps {
            if internal.contains(dep) && !allowed.contains(&dep.as_str()) {
                out.push(format!(
                    "{}/Cargo.toml: `{}` depends on `{}`; ARCHITECTURE.md (Layering) lets it \
                     depend only on: {}",
                    m.dir,
                    m.name,
                    dep,
                    allowed.join(", ")
                ));
            }
        }
    }
    out
}

// ---- Running over the workspace ---------------------------------------------

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core/ has a parent")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir`, sorted, as paths from `root`.
fn rust_files(root: &Path, dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if path.is_dir() {
            rust_files(root, &rel, out);
        } else if rel.ends_with(".rs") {
            out.push(rel);
        }
    }
}

/// The top-level modules of `tilec-core`, from `core/src/lib.rs`.
fn core_modules(root: &Path) -> Vec<String> {
    let tokens = tokenize(&read(&root.join("core/src/lib.rs")));
    tokens
        .windows(3)
        .filter_map(|w| match (&w[0].tok, &w[1].tok, &w[2].tok) {
            (Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')) if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The source directories the rules cover.
fn covered_source_dirs(root: &Path) -> Vec<String> {
    let mut dirs = vec![
        "core/src".to_string(),
        "plugin-api/src".to_string(),
        "inspect/src".to_string(),
    ];
    let mut plugins: Vec<String> = std::fs::read_dir(root.join("plugins"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join("src").is_dir())
                .map(|e| format!("plugins/{}/src", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    plugins.sort();
    dirs.extend(plugins);
    dirs
}

/// Checks every covered file; returns the violations and the known
/// exceptions some file still needs.
fn check_workspace(root: &Path) -> (Vec<Violation>, BTreeSet<(String, String)>) {
    let modules = core_modules(root);
    let modules: Vec<&str> = modules.iter().map(String::as_str).collect();
    let mut files = Vec::new();
    for dir in covered_source_dirs(root) {
        rust_files(root, &dir, &mut files);
    }
    // Out-of-line test modules: their files and everything under them.
    let mut test_prefixes: Vec<String> = Vec::new();
    let mut scans = Vec::new();
    for file in &files {
        let src = read(&root.join(file));
        let (violations, scan) = check_file(file, &src, &modules);
        let dir = match file.rsplit_once('/') {
            Some((dir, "mod.rs" | "lib.rs" | "main.rs")) => dir.to_string(),
            _ => file.trim_end_matches(".rs").to_string(),
        };
        for m in &scan.test_modules {
            test_prefixes.push(format!("{dir}/{m}.rs"));
            test_prefixes.push(format!("{dir}/{m}/"));
        }
        scans.push((file.clone(), violations, scan));
    }
    let mut violations = Vec::new();
    let mut needed = BTreeSet::new();
    for (file, file_violations, scan) in scans {
        if test_prefixes.iter().any(|p| file.starts_with(p.as_str())) {
            continue;
        }
        violations.extend(file_violations);
        let Some((unit, _)) = Unit::of(&file) else {
            continue;
        };
        for u in &scan.uses {
            if unit.allows(&u.to).is_err() {
                needed.insert((unit.exception_name(), u.to.clone()));
            }
        }
    }
    (violations, needed)
}

/// Every manifest the crate rules cover: the workspace members and the
/// plugins outside the workspace (`plugins/template`).
fn manifests(root: &Path) -> (Vec<Manifest>, BTreeSet<String>) {
    let workspace = read(&root.join("Cargo.toml"));
    let start = workspace.find("members").expect("workspace members");
    let list = &workspace[start..];
    let list = &list[list.find('[').expect("members list") + 1..list.find(']').expect("list end")];
    let mut dirs: BTreeSet<String> = list
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if let Ok(entries) = std::fs::read_dir(root.join("plugins")) {
        for e in entries.filter_map(Result::ok) {
            if e.path().join("Cargo.toml").is_file() {
                dirs.insert(format!("plugins/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    let manifests: Vec<Manifest> = dirs
        .iter()
        .map(|dir| {
            let text = read(&root.join(dir).join("Cargo.toml"));
            parse_manifest(dir, &text, root.join(dir).join("src/lib.rs").is_file())
        })
        .collect();
    let internal = manifests.iter().map(|m| m.name.clone()).collect();
    (manifests, internal)
}

#[test]
fn the_workspace_keeps_its_layering() {
    let root = workspace_root();
    let (violations, needed) = check_workspace(&root);
    let (manifests, internal) = manifests(&root);
    let mut problems: Vec<String> = violations.iter().map(ToString::to_string).collect();
    problems.extend(check_manifests(&manifests, &internal));
    for e in KNOWN_EXCEPTIONS {
        if !needed.contains(&(e.from.to_string(), e.to.to_string())) {
            problems.push(format!(
                "core/tests/layering.rs: the known exception `{}` -> `{}` ({}) is no \
                 longer needed; remove it from KNOWN_EXCEPTIONS and ARCHITECTURE.md",
                e.from, e.to, e.why
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "uses across the layering rules:\n{}",
        problems.join("\n")
    );
}

/// The table in ARCHITECTURE.md ("Layering") says what [`CORE_RULES`]
/// says, so that the page stays true to the test.
#[test]
fn architecture_states_the_rules_the_test_enforces() {
    let text = read(&workspace_root().join("ARCHITECTURE.md"));
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("| Module") {
            in_table = true;
            continue;
        }
        if in_table {
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 3 || cells[1].starts_with('-') {
                continue;
            }
            let names = |cell: &str| -> Vec<String> {
                cell.split(',')
                    .map(|s| s.trim().trim_matches('`').to_string())
                    .filter(|s| !s.is_empty() && s != "—")
                    .collect()
            };
            rows.push((cells[1].trim_matches('`').to_string(), names(cells[2])));
        }
    }
    let want: Vec<(String, Vec<String>)> = CORE_RULES
        .iter()
        .map(|(m, allowed)| {
            (
                m.to_string(),
                allowed.iter().map(ToString::to_string).collect(),
            )
        })
        .collect();
    assert_eq!(rows, want, "ARCHITECTURE.md's layering table");
    for e in KNOWN_EXCEPTIONS {
        let named = format!("`{}` → `{}`", e.from, e.to);
        assert!(
            text.contains(&named),
            "ARCHITECTURE.md does not name the known exception {named}"
        );
    }
}

/// Every module of core has a rule, and every rule names modules of core.
#[test]
fn every_core_module_has_a_rule() {
    let modules = core_modules(&workspace_root());
    let ruled: BTreeSet<&str> = CORE_RULES.iter().map(|(m, _)| *m).collect();
    let present: BTreeSet<&str> = modules.iter().map(String::as_str).collect();
    assert_eq!(ruled, present, "CORE_RULES against core/src/lib.rs");
    for (m, allowed) in CORE_RULES {
        for a in *allowed {
            assert!(present.contains(a), "{m} may use `{a}`, which is no module");
        }
    }
}

// ---- Tests of the checker itself -------------------------------------------

const MODULES: &[&str] = &[
    "front", "interp", "ir", "layout", "lower", "passes", "simt", "target", "text", "thread",
    "verify",
];

fn violations(path: &str, src: &str) -> Vec<(usize, String)> {
    check_file(path, src, MODULES)
        .0
        .into_iter()
        .map(|v| (v.line, v.to))
        .collect()
}

#[test]
fn a_forbidden_use_is_reported_with_file_and_line() {
    let src = "//! The IR.\n\nuse crate::layout::Layout;\nuse crate::text::lexer::quote;\n";
    let (found, _) = check_file("core/src/ir/mod.rs", src, MODULES);
    assert_eq!(found.len(), 1, "{found:?}");
    let message = found[0].to_string();
    assert_eq!(
        message,
        "core/src/ir/mod.rs:4: `core::ir` uses `core::text` (`crate::text`); \
         ARCHITECTURE.md (Layering) lets `core::ir` use only: layout"
    );
}

#[test]
fn allowed_uses_and_uses_of_the_own_module_are_not_reported() {
    let src = "use crate::ir::{Block, Stmt};\nuse crate::front::Diagnostic;\n\
               fn f() { let _ = crate::target::builtin(\"sm_80\"); }\n";
    assert_eq!(violations("core/src/front/py/eval.rs", src), vec![]);
}

#[test]
fn a_fully_qualified_path_in_code_is_a_use() {
    let src = "fn f() {\n    let b = crate::passes::replay_binds(f, b);\n}\n";
    assert_eq!(
        violations("core/src/front/py/eval.rs", src),
        vec![(2, "core::passes".to_string())]
    );
}

#[test]
fn use_groups_report_each_module_they_name() {
    let src = "use crate::{\n    layout::Layout,\n    lower::{self, LowerOptions},\n    ir,\n};\n";
    assert_eq!(
        violations("core/src/ir/verify.rs", src),
        vec![(3, "core::lower".to_string())]
    );
}

#[test]
fn super_paths_that_leave_the_module_are_uses() {
    // `core/src/front/py/eval.rs` is `front::py::eval`: three `super`s
    // reach the crate root.
    let src = "use super::stage::Stager;\nuse super::super::super::lower::to_thread;\n";
    assert_eq!(
        violations("core/src/front/py/eval.rs", src),
        vec![(2, "core::lower".to_string())]
    );
    // Inside an inline module one more `super` is needed.
    let src = "mod inner {\n    use super::super::passes::Pass;\n}\nuse super::passes::Pass;\n";
    assert_eq!(
        violations("core/src/front/mod.rs", src),
        vec![
            (2, "core::passes".to_string()),
            (4, "core::passes".to_string())
        ]
    );
}

#[test]
fn comments_strings_and_test_code_are_not_uses() {
    let src = r##"
//! Mentions [`crate::passes`] in a doc comment.
/* a block comment: crate::lower::to_thread */
const S: &str = "crate::passes::x";
const R: &str = r#"crate::lower"#;
const C: char = '"';
fn f<'a>(x: &'a str) -> &'a str { x }

#[cfg(test)]
mod tests {
    use crate::text::parse_module;
}

#[test]
fn t() { crate::lower::to_thread(); }

#[cfg(test)]
mod more;

use crate::text::print_module;
"##;
    let (found, scan) = check_file("core/src/ir/verify.rs", src, MODULES);
    let lines: Vec<(usize, &str)> = found.iter().map(|v| (v.line, v.to.as_str())).collect();
    assert_eq!(lines, vec![(20, "core::text")]);
    assert_eq!(scan.test_modules, vec!["more".to_string()]);
}

#[test]
fn a_known_exception_is_not_reported() {
    let src = "fn f() { crate::passes::substituted(f, s, v, k); }\n";
    assert_eq!(violations("core/src/lower/rotate.rs", src), vec![]);
    // The same use from another module is.
    assert_eq!(
        violations("core/src/verify/mod.rs", src),
        vec![(1, "core::passes".to_string())]
    );
}

#[test]
fn plugins_may_use_the_ir_levels_targets_and_text_only() {
    let src = "use tilec_core::ir::{self, DType};\nuse tilec_core::text::LineIndex;\n\
               use tilec_core::front::LineIndex;\nuse tilec_core::lower::LowerOptions;\n\
               use crate::ptx::PtxError;\n";
    // `lower` is a known exception of plugins; `front` is not.
    assert_eq!(
        violations("plugins/cuda/src/ptx/mod.rs", src),
        vec![(3, "core::front".to_string())]
    );
    assert_eq!(
        violations("plugin-api/src/host.rs", "use tilec_core::{interp, ir};\n"),
        vec![(1, "core::interp".to_string())]
    );
    assert_eq!(
        violations(
            "inspect/src/lib.rs",
            "use tilec_core::target::TargetDescription;\n"
        ),
        vec![]
    );
    // Files the rules do not cover.
    assert_eq!(
        violations("tools/src/main.rs", "use tilec_core::front;\n"),
        vec![]
    );
    assert_eq!(violations("core/src/lib.rs", "pub mod front;\n"), vec![]);
}

#[test]
fn crate_rules_report_plugin_dependencies_and_libraries_under_tools() {
    let plugin = parse_manifest(
        "plugins/new",
        "[package]\nname = \"tilec-backend-new\"\n\n[dependencies]\n\
         tilec-core.workspace = true\ntilec-plugin-api.workspace = true\n\
         tilec-conformance = { path = \"../../conformance\" }\nthiserror = \"2\"\n\n\
         [dev-dependencies]\ntilec = { path = \"../../tools\" }\n",
        true,
    );
    assert_eq!(
        plugin.deps,
        vec![
            "tilec-core",
            "tilec-plugin-api",
            "tilec-conformance",
            "thiserror"
        ]
    );
    let reader = parse_manifest(
        "tools/reader",
        "[package]\nname = \"tilec-reader\"\n[dependencies]\ntilec-core.workspace = true\n",
        true,
    );
    let cli = parse_manifest(
        "tools",
        "[package]\nname = \"tilec\"\n[[bin]]\nname = \"tilec\"\n",
        false,
    );
    let internal: BTreeSet<String> = [
        "tilec",
        "tilec-core",
        "tilec-plugin-api",
        "tilec-conformance",
        "tilec-reader",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let found = check_manifests(&[plugin, reader, cli], &internal);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with(
            "plugins/new/Cargo.toml: `tilec-backend-new` depends on `tilec-conformance`"
        )
    );
    assert!(
        found[1].starts_with(
            "tools/reader/Cargo.toml: `tilec-reader` is a library crate under `tools/`"
        )
    );
}
