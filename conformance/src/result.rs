//! Result codes, levels, the record kept for every test ([`TestRecord`]),
//! the environment a run happened in ([`Environment`]) and the summary that
//! decides which levels a backend conforms to ([`Summary`]).

use serde::{Deserialize, Serialize};

/// Conformance levels; a backend is conformant at level N when every
/// applicable test of levels 0..=N passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Level {
    /// The plugin loads, negotiates versions, describes its targets and
    /// refuses malformed input with structured errors.
    L0,
    /// Every corpus kernel compiles (or is refused for a capability the
    /// target does not claim), deterministically.
    L1,
    /// Numerics of every corpus kernel against the reference interpreter.
    L2,
    /// Pipelining, async copies, warp specialization, atomics, fp8.
    L3,
    /// Performance against the roofline and a reference library.
    L4,
}

impl Level {
    pub const ALL: [Level; 5] = [Level::L0, Level::L1, Level::L2, Level::L3, Level::L4];

    /// `l0` .. `l4`, as in test ids.
    pub fn id(self) -> &'static str {
        match self {
            Level::L0 => "l0",
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::L3 => "l3",
            Level::L4 => "l4",
        }
    }

    pub fn from_index(i: u8) -> Option<Level> {
        Level::ALL.get(usize::from(i)).copied()
    }
}

/// How one test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome {
    Pass,
    Fail,
    /// The target does not claim the capability the test needs.
    NotSupported,
    /// Correct, but below the performance threshold (L4).
    QualityWarning,
    /// The backend crashed (the isolated worker died).
    Crash,
    /// The backend did not answer in time.
    Timeout,
    /// The suite itself failed (a bug in tilec, not in the backend).
    InternalError,
}

impl Outcome {
    /// Whether the outcome counts towards conformance.
    pub fn is_conformant(self) -> bool {
        matches!(
            self,
            Outcome::Pass | Outcome::NotSupported | Outcome::QualityWarning
        )
    }
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 7] = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::NotSupported,
        Outcome::QualityWarning,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::InternalError,
    ];

    /// The spelling used in reports (`Pass`, `NotSupported`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "Pass",
            Outcome::Fail => "Fail",
            Outcome::NotSupported => "NotSupported",
            Outcome::QualityWarning => "QualityWarning",
            Outcome::Crash => "Crash",
            Outcome::Timeout => "Timeout",
            Outcome::InternalError => "InternalError",
        }
    }
}

/// What happened in one test; one line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    /// Stable hierarchical id, `tilec.l2.gemm.nt.f16_f32.m257n129k77`.
    pub id: String,
    pub level: Level,
    pub outcome: Outcome,
    /// Wall time of the test in milliseconds.
    pub duration_ms: f64,
    /// The seed of the test's inputs (derived from the id).
    pub seed: u64,
    /// Largest absolute error of a numeric comparison, when one was made.
    pub max_abs_err: Option<f64>,
    /// Largest ULP error of a numeric comparison, when one was made.
    pub max_ulp_err: Option<f64>,
    /// One-line reason (empty for a plain pass).
    pub message: String,
}

impl TestRecord {
    /// The test family: the id segment after the level (`gemm` in
    /// `tilec.l2.gemm.nt...`), or the whole id when it has no such segment.
    pub fn family(&self) -> &str {
        let mut parts = self.id.split('.');
        let level = self.level.id();
        while let Some(p) = parts.next() {
            if p == level {
                return parts.next().unwrap_or(&self.id);
            }
        }
        &self.id
    }
}

/// The identity of the plugin under test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginIdentity {
    pub name: String,
    pub version: String,
    /// Path of the shared library that was loaded.
    pub file: String,
    /// SHA-256 of that file, lowercase hex.
    pub sha256: String,
}

/// Where a run happened; part of `summary.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    pub tilec_version: String,
    pub commit: Option<String>,
    /// The plugin ABI version (`major.minor`).
    pub abi_version: String,
    /// The Tile IR text format version.
    pub ir_format: String,
    /// The backend under test (`reference`, or the plugin's backend name).
    pub backend: String,
    pub plugin: Option<PluginIdentity>,
    pub target: Option<String>,
    pub device: Option<String>,
    pub driver: Option<String>,
}

/// Counts of outcomes at one level.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelCounts {
    pub level: Option<Level>,
    pub total: usize,
    pub pass: usize,
    pub fail: usize,
    pub not_supported: usize,
    pub quality_warning: usize,
    pub crash: usize,
    pub timeout: usize,
    pub internal_error: usize,
}

impl LevelCounts {
    /// Counts one more test ending in `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        *match outcome {
            Outcome::Pass => &mut self.pass,
            Outcome::Fail => &mut self.fail,
            Outcome::NotSupported => &mut self.not_supported,
            Outcome::QualityWarning => &mut self.quality_warning,
            Outcome::Crash => &mut self.crash,
            Outcome::Timeout => &mut self.timeout,
            Outcome::InternalError => &mut self.internal_error,
        } += 1;
    }

    /// The count of one outcome.
    pub fn get(&self, outcome: Outcome) -> usize {
        match outcome {
            Outcome::Pass => self.pass,
            Outcome::Fail => self.fail,
            Outcome::NotSupported => self.not_supported,
            Outcome::QualityWarning => self.quality_warning,
            Outcome::Crash => self.crash,
            Outcome::Timeout => self.timeout,
            Outcome::InternalError => self.internal_error,
        }
    }

    /// Tests that ended in a non-conformant outcome.
    pub fn non_conformant(&self) -> usize {
        self.fail + self.crash + self.timeout + self.internal_error
    }

    /// Tests that apply to the target (everything but `NotSupported`).
    pub fn applicable(&self) -> usize {
        self.total - self.not_supported
    }
}

/// The version of the suite; bump when tests or tolerances change meaning.
pub const SUITE_VERSION: &str = "0.4.0";

/// The result of a run: `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub suite_version: String,
    /// Counts per level, one entry per level `L0..=L4` (zeros where none ran).
    pub levels: Vec<LevelCounts>,
    /// Counts over all levels (`level` is `None`).
    pub total: LevelCounts,
    /// The levels the backend conforms to: every level `L` such that every
    /// level `0..=L` has at least one applicable test (not `NotSupported`)
    /// and all its tests end in a conformant outcome. Always a prefix of
    /// `L0, L1, ...`.
    pub conformant_levels: Vec<Level>,
    /// Levels deliberately not run, with the reason ("no device").
    pub levels_not_run: Vec<(Level, String)>,
    /// `certify` (every test of the levels run, no filter: the run can
    /// certify a backend) or `dev` (a development run, possibly filtered).
    pub mode: String,
    /// The `--filter` glob of a dev run.
    pub filter: Option<String>,
    pub environment: Environment,
}

impl Summary {
    /// Counts the records and decides the conformant levels.
    pub fn from_records(
        records: &[TestRecord],
        environment: Environment,
        not_run: Vec<(Level, String)>,
    ) -> Summary {
        let mut levels: Vec<LevelCounts> = Level::ALL
            .iter()
            .map(|&l| LevelCounts {
                level: Some(l),
                ..LevelCounts::default()
            })
            .collect();
        let mut total = LevelCounts::default();
        for r in records {
            levels[r.level as usize].add(r.outcome);
            total.add(r.outcome);
        }
        let mut conformant_levels = Vec::new();
        for counts in &levels {
            let Some(level) = counts.level else { break };
            let skipped = not_run.iter().any(|(l, _)| *l == level);
            if skipped || counts.applicable() == 0 || counts.non_conformant() > 0 {
                break;
            }
            conformant_levels.push(level);
        }
        Summary {
            suite_version: SUITE_VERSION.to_string(),
            levels,
            total,
            conformant_levels,
            levels_not_run: not_run,
            mode: "dev".to_string(),
            filter: None,
            environment,
        }
    }

    /// The counts of one level.
    pub fn level(&self, level: Level) -> &LevelCounts {
        &self.levels[level as usize]
    }

    /// The highest conformant level, if any.
    pub fn conformant_up_to(&self) -> Option<Level> {
        self.conformant_levels.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, level: Level, outcome: Outcome) -> TestRecord {
        TestRecord {
            id: id.to_string(),
            level,
            outcome,
            duration_ms: 1.5,
            seed: 42,
            max_abs_err: None,
            max_ulp_err: None,
            message: String::new(),
        }
    }

    #[test]
    fn fail_at_l2_leaves_l0_l1() {
        let records = [
            record("tilec.l0.abi.load", Level::L0, Outcome::Pass),
            record("tilec.l1.compile.gemm", Level::L1, Outcome::Pass),
            record("tilec.l1.compile.fp8", Level::L1, Outcome::NotSupported),
            record("tilec.l2.gemm.nt", Level::L2, Outcome::Fail),
            record("tilec.l2.copy", Level::L2, Outcome::Pass),
            record("tilec.l3.atomics", Level::L3, Outcome::Pass),
        ];
        let s = Summary::from_records(&records, Environment::default(), vec![]);
        assert_eq!(s.conformant_levels, vec![Level::L0, Level::L1]);
        assert_eq!(s.conformant_up_to(), Some(Level::L1));
        assert_eq!(s.level(Level::L1).not_supported, 1);
        assert_eq!(s.level(Level::L2).fail, 1);
        assert_eq!(s.total.total, 6);
    }

    #[test]
    fn empty_or_skipped_levels_are_not_claimed() {
        let records = [
            record("tilec.l0.abi.load", Level::L0, Outcome::Pass),
            record("tilec.l1.compile.gemm", Level::L1, Outcome::Pass),
            // L2 not run; L3 passing does not count past the gap.
            record("tilec.l3.atomics", Level::L3, Outcome::Pass),
        ];
        let not_run = vec![(Level::L2, "no device".to_string())];
        let s = Summary::from_records(&records, Environment::default(), not_run);
        assert_eq!(s.conformant_levels, vec![Level::L0, Level::L1]);
        // A level of only NotSupported tests has no applicable test.
        let records = [
            record("tilec.l0.abi.load", Level::L0, Outcome::NotSupported),
            record("tilec.l1.compile.gemm", Level::L1, Outcome::Pass),
        ];
        let s = Summary::from_records(&records, Environment::default(), vec![]);
        assert!(s.conformant_levels.is_empty());
        let s = Summary::from_records(&[], Environment::default(), vec![]);
        assert!(s.conformant_levels.is_empty());
    }

    #[test]
    fn quality_warning_is_conformant_crash_is_not() {
        let mut records: Vec<TestRecord> = Level::ALL
            .iter()
            .map(|&l| record(&format!("tilec.{}.x", l.id()), l, Outcome::Pass))
            .collect();
        records.push(record(
            "tilec.l4.perf.gemm",
            Level::L4,
            Outcome::QualityWarning,
        ));
        let s = Summary::from_records(&records, Environment::default(), vec![]);
        assert_eq!(s.conformant_levels, Level::ALL.to_vec());
        records.push(record("tilec.l3.pipeline", Level::L3, Outcome::Crash));
        let s = Summary::from_records(&records, Environment::default(), vec![]);
        assert_eq!(s.conformant_levels, vec![Level::L0, Level::L1, Level::L2]);
    }

    #[test]
    fn family_is_the_segment_after_the_level() {
        assert_eq!(
            record("tilec.l2.gemm.nt.f16", Level::L2, Outcome::Pass).family(),
            "gemm"
        );
        assert_eq!(record("odd", Level::L0, Outcome::Pass).family(), "odd");
    }

    #[test]
    fn summary_round_trips_through_json() {
        let env = Environment {
            tilec_version: "0.1.0".into(),
            plugin: Some(PluginIdentity {
                name: "p".into(),
                version: "1".into(),
                file: "libp.so".into(),
                sha256: "00".into(),
            }),
            ..Environment::default()
        };
        let s = Summary::from_records(
            &[record("tilec.l0.a", Level::L0, Outcome::Pass)],
            env,
            vec![(Level::L2, "no device".into())],
        );
        let text = serde_json::to_string(&s).unwrap_or_default();
        let back: Result<Summary, _> = serde_json::from_str(&text);
        assert_eq!(back.ok(), Some(s));
    }
}
