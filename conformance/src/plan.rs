//! Which tests a run consists of, decided before any test runs.
//!
//! Every corpus case gives one or two tests:
//!
//! - a negative case (`expect_error`) is one test at its own level;
//! - a positive case of level `L ≥ 2` is an L1 *compile* test
//!   (`tilec.l1.<family>.<case>`: compiles, recompiles byte-identically,
//!   passes structural checks) and an *execute* test at `L` under its own
//!   id (numerics against the reference interpreter, two runs
//!   bit-identical unless the case is nondeterministic).
//!
//! A plugin additionally gets the level-0 ABI checks (`tilec.l0.abi.*`).
//!
//! `NotSupported` is decided here, from the target description alone,
//! never from what the backend answers: a test whose case needs a
//! capability the target does not claim is `NotSupported`, and so is every
//! test that must run kernels when there is no device (those levels are
//! then listed as not run, with the reason). A backend that refuses a
//! capability its target claims fails the test instead.

use crate::corpus::Case;
use crate::result::Level;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use tilec_core::ir::DType;
use tilec_plugin_api::TargetDescription;

/// The level-0 checks of a plugin's ABI behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AbiCheck {
    /// `info()` is consistent: a name, targets, a default target among
    /// them, an IR format range containing the one tilec writes.
    Info,
    /// Every listed target describes itself under its own name, and an
    /// unknown target is refused with `UnknownTarget`.
    DescribeTargets,
    /// Bytes that are not a compile request are refused with `BadRequest`,
    /// not a panic.
    MalformedRequest,
    /// Compiling for an unknown target is refused with `UnknownTarget`.
    CompileUnknownTarget,
    /// Compiles from several threads at once agree with a lone compile.
    ConcurrentCompile,
}

impl AbiCheck {
    pub const ALL: [AbiCheck; 5] = [
        AbiCheck::Info,
        AbiCheck::DescribeTargets,
        AbiCheck::MalformedRequest,
        AbiCheck::CompileUnknownTarget,
        AbiCheck::ConcurrentCompile,
    ];

    /// The test id.
    pub fn id(self) -> &'static str {
        match self {
            AbiCheck::Info => "tilec.l0.abi.info",
            AbiCheck::DescribeTargets => "tilec.l0.abi.describe_targets",
            AbiCheck::MalformedRequest => "tilec.l0.abi.malformed_request",
            AbiCheck::CompileUnknownTarget => "tilec.l0.abi.compile_unknown_target",
            AbiCheck::ConcurrentCompile => "tilec.l0.abi.concurrent_compile",
        }
    }
}

/// What a test does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TestKind {
    /// An ABI check of a plugin.
    Abi(AbiCheck),
    /// A negative corpus case: must be refused as the case says.
    Refusal,
    /// Level 1: compile, recompile, structural checks.
    Compile,
    /// Levels 2 and 3: run and compare against the reference.
    Execute,
}

/// One test of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedTest {
    pub id: String,
    pub level: Level,
    pub kind: TestKind,
    /// The corpus case it comes from (its id), if any.
    pub case: Option<String>,
    pub seed: u64,
    /// Decided without running: `NotSupported`, with the reason.
    pub not_supported: Option<String>,
}

impl PlannedTest {
    /// The family: the id's third segment.
    pub fn family(&self) -> &str {
        self.id.split('.').nth(2).unwrap_or("")
    }
}

/// The tests of a run and the levels it cannot reach.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub tests: Vec<PlannedTest>,
    /// Levels not run at all, with the reason ("no device").
    pub not_run: Vec<(Level, String)>,
}

/// What the run is asked to cover.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Highest level to run.
    pub max_level: Option<Level>,
    /// Only ids matching this glob (`*` any run of characters, `?` one).
    pub filter: Option<String>,
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters (dots included) and `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The capabilities `target` claims: its profiles, and `dtype.<short>`
/// for every dtype it lists.
pub fn claimed(target: &TargetDescription) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = target.profiles.iter().cloned().collect();
    for name in &target.dtypes {
        if let Some(d) = DType::from_tilelang_name(name) {
            set.insert(format!("dtype.{}", d.short_name()));
        }
    }
    set
}

/// Every capability some case of `cases` needs: what the reference
/// backend claims.
pub fn all_needs(cases: &[Case]) -> Vec<String> {
    let set: BTreeSet<&String> = cases.iter().flat_map(|c| &c.needs).collect();
    set.into_iter().cloned().collect()
}

/// The L1 id of a positive case of a higher level.
pub fn compile_id(case: &Case) -> String {
    let rest = case
        .id
        .strip_prefix("tilec.")
        .and_then(|r| r.split_once('.'))
        .map_or(case.id.as_str(), |(_, rest)| rest);
    format!("tilec.l1.{rest}")
}

/// Plans a run. `device` is the device kernels run on, or why there is
/// none; `is_plugin` adds the ABI checks.
pub fn plan(
    cases: &[Case],
    target: &TargetDescription,
    is_plugin: bool,
    device: Result<(), String>,
    selection: &Selection,
) -> Result<Plan, String> {
    let claims = claimed(target);
    let missing = |case: &Case| -> Option<String> {
        let lacking: Vec<&str> = case
            .needs
            .iter()
            .filter(|n| !claims.contains(*n))
            .map(String::as_str)
            .collect();
        (!lacking.is_empty()).then(|| {
            format!(
                "target `{}` does not claim {}",
                target.arch,
                lacking.join(", ")
            )
        })
    };
    let mut tests = Vec::new();
    if is_plugin {
        for check in AbiCheck::ALL {
            tests.push(PlannedTest {
                id: check.id().to_string(),
                level: Level::L0,
                kind: TestKind::Abi(check),
                case: None,
                seed: crate::corpus::seed_for(check.id()),
                not_supported: None,
            });
        }
    }
    let no_device = device.err().map(|why| format!("no device: {why}"));
    for case in cases {
        if case.expect_error.is_some() {
            tests.push(PlannedTest {
                id: case.id.clone(),
                level: case.level,
                kind: TestKind::Refusal,
                case: Some(case.id.clone()),
                seed: case.seed,
                not_supported: None,
            });
            continue;
        }
        let lacking = missing(case);
        if case.level >= Level::L2 {
            let id = compile_id(case);
            tests.push(PlannedTest {
                seed: crate::corpus::seed_for(&id),
                id,
                level: Level::L1,
                kind: TestKind::Compile,
                case: Some(case.id.clone()),
                not_supported: lacking.clone(),
            });
        }
        let kind = if case.level >= Level::L2 {
            TestKind::Execute
        } else {
            TestKind::Compile
        };
        let not_supported = lacking.or_else(|| {
            (kind == TestKind::Execute)
                .then(|| no_device.clone())
                .flatten()
        });
        tests.push(PlannedTest {
            id: case.id.clone(),
            level: case.level,
            kind,
            case: Some(case.id.clone()),
            seed: case.seed,
            not_supported,
        });
    }
    let mut seen = BTreeSet::new();
    for t in &tests {
        if !seen.insert(t.id.as_str()) {
            return Err(format!("two tests have the id `{}`", t.id));
        }
    }
    let max = selection.max_level.unwrap_or(Level::L4);
    tests.retain(|t| {
        t.level <= max
            && selection
                .filter
                .as_deref()
                .is_none_or(|f| glob_match(f, &t.id))
    });
    tests.sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));

    let mut not_run = Vec::new();
    if let Some(why) = &no_device {
        for level in [Level::L2, Level::L3] {
            if level <= max {
                not_run.push((level, why.clone()));
            }
        }
    }
    if max >= Level::L4 {
        let why = match &no_device {
            Some(why) => why.clone(),
            None if !is_plugin => {
                "the reference backend runs on the CPU: there is no device throughput to measure"
                    .to_string()
            }
            None => "suite 0.1 has no performance tests: they need peak figures that target descriptions do not carry yet"
                .to_string(),
        };
        not_run.push((Level::L4, why));
    }
    Ok(Plan { tests, not_run })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(
            "tilec.l2.gemm.*",
            "tilec.l2.gemm.nt.f16_f32.m64n64k64"
        ));
        assert!(glob_match("*gemm*", "tilec.l1.gemm.nn"));
        assert!(glob_match("tilec.l?.gemm.nn", "tilec.l1.gemm.nn"));
        assert!(!glob_match("tilec.l2.gemm.*", "tilec.l1.gemm.nn"));
        assert!(!glob_match("tilec.l2", "tilec.l2.gemm"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
    }
}
