//! Reports of a conformance run: `results.jsonl` (one [`TestRecord`] per
//! line), `summary.json` (a [`Summary`]), JUnit XML for CI systems, and the
//! table printed on the terminal at the end of a run.
//!
//! Each writer has a string-producing twin (`results_jsonl`, `junit_xml`)
//! so that callers and tests can render without touching files.
//!
//! JSON cannot hold infinities or NaN: `serde_json` writes a non-finite
//! `max_abs_err` / `max_ulp_err` as `null`, which reads back as "not
//! measured"; the record's message still says what mismatched.

use crate::result::{Level, LevelCounts, Outcome, Summary, TestRecord};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// Renders records as JSON Lines: one object per line, in the given order.
pub fn results_jsonl(records: &[TestRecord]) -> io::Result<String> {
    let mut out = String::new();
    for r in records {
        out.push_str(&serde_json::to_string(r).map_err(io::Error::other)?);
        out.push('\n');
    }
    Ok(out)
}

/// Writes `results.jsonl`.
pub fn write_results_jsonl(path: &Path, records: &[TestRecord]) -> io::Result<()> {
    write_atomically(path, results_jsonl(records)?.as_bytes())
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// renamed over `path` once complete: a reader never sees half a report,
/// and an interrupted run leaves the previous file whole.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Checks that report files can be written in `dir` (creating it if
/// missing), before a run, so that a bad `--report` is not found only at
/// the end of a long run.
pub fn check_report_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = tempfile::NamedTempFile::new_in(dir)?;
    probe.close()
}

/// Writes `summary.json` (pretty-printed, trailing newline).
pub fn write_summary_json(path: &Path, summary: &Summary) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(summary).map_err(io::Error::other)?;
    text.push('\n');
    write_atomically(path, text.as_bytes())
}

/// Escapes text for XML attribute values and character data. Characters
/// XML 1.0 cannot carry (control characters other than tab, newline and
/// carriage return) become U+FFFD.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn seconds(ms: f64) -> String {
    if ms.is_finite() && ms >= 0.0 {
        format!("{:.3}", ms / 1000.0)
    } else {
        "0.000".to_string()
    }
}

/// The first line of a message, for one-line reports.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// Renders JUnit XML: one `<testsuite>` per level that has records, one
/// `<testcase>` per record (`classname` = `level.family`, `name` = the id).
///
/// `Fail` becomes `<failure>`, `Crash` / `Timeout` / `InternalError`
/// `<error>`, `NotSupported` `<skipped>`. `Pass` and `QualityWarning` are
/// passing test cases (a quality warning is conformant and must not turn CI
/// red); the warning is kept in `<system-out>`.
pub fn junit_xml(records: &[TestRecord], suite_name: &str) -> String {
    let mut by_level: BTreeMap<Level, Vec<&TestRecord>> = BTreeMap::new();
    for r in records {
        by_level.entry(r.level).or_default().push(r);
    }
    let count = |rs: &[&TestRecord], f: &dyn Fn(Outcome) -> bool| {
        rs.iter().filter(|r| f(r.outcome)).count()
    };
    let is_failure = |o: Outcome| o == Outcome::Fail;
    let is_error = |o: Outcome| {
        matches!(
            o,
            Outcome::Crash | Outcome::Timeout | Outcome::InternalError
        )
    };
    let is_skipped = |o: Outcome| o == Outcome::NotSupported;
    let all: Vec<&TestRecord> = records.iter().collect();
    let total_ms: f64 = records.iter().map(|r| r.duration_ms.max(0.0)).sum();

    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        xml_escape(suite_name),
        all.len(),
        count(&all, &is_failure),
        count(&all, &is_error),
        count(&all, &is_skipped),
        seconds(total_ms)
    );
    for (level, rs) in &by_level {
        let ms: f64 = rs.iter().map(|r| r.duration_ms.max(0.0)).sum();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}.{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
            xml_escape(suite_name),
            level.id(),
            rs.len(),
            count(rs, &is_failure),
            count(rs, &is_error),
            count(rs, &is_skipped),
            seconds(ms)
        );
        for r in rs {
            let _ = write!(
                x,
                "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{}\">",
                level.id(),
                xml_escape(r.family()),
                xml_escape(&r.id),
                seconds(r.duration_ms)
            );
            let msg = xml_escape(first_line(&r.message));
            let body = xml_escape(&format!("{}\nseed: {}", r.message, r.seed));
            match r.outcome {
                Outcome::Pass => {}
                Outcome::QualityWarning => {
                    let _ = write!(x, "<system-out>QualityWarning: {body}</system-out>");
                }
                Outcome::Fail => {
                    let _ = write!(
                        x,
                        "<failure message=\"{msg}\" type=\"Fail\">{body}</failure>"
                    );
                }
                Outcome::Crash | Outcome::Timeout | Outcome::InternalError => {
                    let _ = write!(
                        x,
                        "<error message=\"{msg}\" type=\"{}\">{body}</error>",
                        r.outcome.name()
                    );
                }
                Outcome::NotSupported => {
                    let _ = write!(x, "<skipped message=\"{msg}\"/>");
                }
            }
            x.push_str("</testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// Writes JUnit XML (see [`junit_xml`]).
pub fn write_junit_xml(path: &Path, records: &[TestRecord], suite_name: &str) -> io::Result<()> {
    write_atomically(path, junit_xml(records, suite_name).as_bytes())
}

fn counts_row(out: &mut String, label: &str, c: &LevelCounts) {
    let _ = write!(out, "{label:<24}{:>7}", c.total);
    for o in Outcome::ALL {
        let _ = write!(out, "{:>10}", c.get(o));
    }
    out.push('\n');
}

/// The end-of-run terminal report: per level a row of counts per outcome
/// with one row per test family beneath it, the levels not run, the
/// conformant levels, then every non-conformant test with its id and a
/// one-line reason.
pub fn terminal_table(summary: &Summary, records: &[TestRecord]) -> String {
    let mut out = String::new();
    let env = &summary.environment;
    let _ = writeln!(
        out,
        "tilec conformance suite {} — backend {}{}",
        summary.suite_version,
        if env.backend.is_empty() {
            "?"
        } else {
            &env.backend
        },
        env.target
            .as_deref()
            .map(|t| format!(", target {t}"))
            .unwrap_or_default()
    );
    let _ = write!(out, "{:<24}{:>7}", "level/family", "total");
    for o in Outcome::ALL {
        let name = match o {
            Outcome::NotSupported => "NotSupp",
            Outcome::QualityWarning => "QualWarn",
            Outcome::InternalError => "Internal",
            o => o.name(),
        };
        let _ = write!(out, "{name:>10}");
    }
    out.push('\n');
    for counts in &summary.levels {
        let Some(level) = counts.level else { continue };
        if counts.total == 0 {
            continue;
        }
        counts_row(&mut out, &format!("L{}", level as u8), counts);
        let mut families: BTreeMap<&str, LevelCounts> = BTreeMap::new();
        for r in records.iter().filter(|r| r.level == level) {
            let c = families.entry(r.family()).or_default();
            c.add(r.outcome);
        }
        for (family, c) in &families {
            counts_row(&mut out, &format!("  {family}"), c);
        }
    }
    counts_row(&mut out, "all", &summary.total);
    for (level, reason) in &summary.levels_not_run {
        let _ = writeln!(out, "not run: L{} ({reason})", *level as u8);
    }
    let claimed: Vec<String> = summary
        .conformant_levels
        .iter()
        .map(|l| format!("L{}", *l as u8))
        .collect();
    if summary.mode != "certify" {
        let _ = writeln!(
            out,
            "dev run{}: only `--mode certify` (all tests, no filter) certifies a backend",
            summary
                .filter
                .as_deref()
                .map(|f| format!(" (filter `{f}`)"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "conformant levels: {}",
        if claimed.is_empty() {
            "none".to_string()
        } else {
            claimed.join(", ")
        }
    );
    let bad: Vec<&TestRecord> = records
        .iter()
        .filter(|r| !r.outcome.is_conformant())
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(out, "non-conformant tests ({}):", bad.len());
        for r in bad {
            let _ = writeln!(
                out,
                "  {:<14}{}  {} (seed {})",
                r.outcome.name(),
                r.id,
                first_line(&r.message),
                r.seed
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Environment;

    fn rec(id: &str, level: Level, outcome: Outcome, message: &str) -> TestRecord {
        TestRecord {
            id: id.to_string(),
            level,
            outcome,
            duration_ms: 12.5,
            seed: 0xdead_beef,
            max_abs_err: Some(0.25),
            max_ulp_err: Some(f64::INFINITY),
            message: message.to_string(),
        }
    }

    fn sample() -> Vec<TestRecord> {
        vec![
            rec("tilec.l0.abi.load", Level::L0, Outcome::Pass, ""),
            rec(
                "tilec.l1.compile.fp8",
                Level::L1,
                Outcome::NotSupported,
                "target lacks fp8",
            ),
            rec("tilec.l1.compile.gemm", Level::L1, Outcome::Pass, ""),
            rec(
                "tilec.l2.gemm.nt.f16_f32.m257n129k77",
                Level::L2,
                Outcome::Fail,
                "got \"1 & 2\" <bad> 'x'\nsecond line \u{1}",
            ),
            rec("tilec.l2.copy.f32", Level::L2, Outcome::Crash, "signal 11"),
            rec(
                "tilec.l2.copy.f16",
                Level::L2,
                Outcome::Timeout,
                "no answer in 60 s",
            ),
            rec(
                "tilec.l4.perf.gemm",
                Level::L4,
                Outcome::QualityWarning,
                "41% of roofline",
            ),
        ]
    }

    /// A tiny well-formedness check: every tag is closed in order, attribute
    /// values are quoted, and `&` only starts a known entity.
    fn check_well_formed(xml: &str) -> Result<usize, String> {
        let body = xml
            .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .ok_or("missing declaration")?;
        let mut stack: Vec<String> = Vec::new();
        let mut elements = 0;
        let mut rest = body;
        while let Some(start) = rest.find('<') {
            check_text(&rest[..start])?;
            let end = rest[start..].find('>').ok_or("unterminated tag")? + start;
            let tag = &rest[start + 1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or("close without open")?;
                if open != name {
                    return Err(format!("</{name}> closes <{open}>"));
                }
                continue;
            }
            elements += 1;
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
            check_attrs(attrs)?;
            if !self_closing {
                stack.push(name.to_string());
            }
        }
        check_text(rest)?;
        if stack.is_empty() {
            Ok(elements)
        } else {
            Err(format!("unclosed {stack:?}"))
        }
    }

    fn check_text(text: &str) -> Result<(), String> {
        if text.contains('>') {
            return Err(format!("raw > in {text:?}"));
        }
        let mut rest = text;
        while let Some(i) = rest.find('&') {
            rest = &rest[i..];
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| rest.starts_with(e))
            {
                return Err(format!("bad entity in {text:?}"));
            }
            rest = &rest[1..];
        }
        if text
            .chars()
            .any(|c| (c as u32) < 0x20 && !"\t\n\r".contains(c))
        {
            return Err("control character".into());
        }
        Ok(())
    }

    fn check_attrs(attrs: &str) -> Result<(), String> {
        let mut rest = attrs.trim();
        while !rest.is_empty() {
            let (_, after) = rest.split_once("=\"").ok_or(format!("bad attr {rest:?}"))?;
            let (value, after) = after.split_once('"').ok_or("unterminated value")?;
            if value.contains('<') {
                return Err("raw < in attribute".into());
            }
            check_text(value)?;
            rest = after.trim_start();
        }
        Ok(())
    }

    #[test]
    fn junit_is_well_formed_and_counts() {
        let xml = junit_xml(&sample(), "tilec & \"friends\"");
        let elements = check_well_formed(&xml);
        assert!(elements.is_ok(), "{elements:?}\n{xml}");
        assert!(xml.contains(
            "<testsuites name=\"tilec &amp; &quot;friends&quot;\" tests=\"7\" failures=\"1\" errors=\"2\" skipped=\"1\""
        ));
        assert!(xml.contains("tests=\"3\" failures=\"1\" errors=\"2\" skipped=\"0\""));
        assert!(
            xml.contains("classname=\"l2.gemm\" name=\"tilec.l2.gemm.nt.f16_f32.m257n129k77\"")
        );
        assert!(xml.contains(
            "<failure message=\"got &quot;1 &amp; 2&quot; &lt;bad&gt; &apos;x&apos;\" type=\"Fail\">"
        ));
        assert!(xml.contains("<error message=\"signal 11\" type=\"Crash\">"));
        assert!(xml.contains("type=\"Timeout\""));
        assert!(xml.contains("<skipped message=\"target lacks fp8\"/>"));
        assert!(xml.contains("<system-out>QualityWarning: 41% of roofline"));
        assert!(!xml.contains('\u{1}'));
        // The checker itself rejects broken XML.
        assert!(
            check_well_formed("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a><b></a>").is_err()
        );
        assert!(
            check_well_formed("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x=\"&\"/>").is_err()
        );
    }

    #[test]
    fn jsonl_lines_parse_back() -> Result<(), String> {
        let records = sample();
        let text = results_jsonl(&records).map_err(|e| e.to_string())?;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), records.len());
        for (line, r) in lines.iter().zip(&records) {
            let back: TestRecord = serde_json::from_str(line).map_err(|e| e.to_string())?;
            assert_eq!(back.id, r.id);
            assert_eq!(back.outcome, r.outcome);
            assert_eq!(back.seed, r.seed);
            assert_eq!(back.max_abs_err, Some(0.25));
            // Infinity cannot be written as JSON: it reads back as not measured.
            assert_eq!(back.max_ulp_err, None);
        }
        Ok(())
    }

    #[test]
    fn files_are_written() -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!("tilec-report-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let records = sample();
        let summary = Summary::from_records(&records, Environment::default(), vec![]);
        write_results_jsonl(&dir.join("results.jsonl"), &records).map_err(|e| e.to_string())?;
        write_summary_json(&dir.join("summary.json"), &summary).map_err(|e| e.to_string())?;
        write_junit_xml(&dir.join("junit.xml"), &records, "tilec").map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(dir.join("summary.json")).map_err(|e| e.to_string())?;
        let back: Summary = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        assert_eq!(back.conformant_levels, vec![Level::L0, Level::L1]);
        let xml = std::fs::read_to_string(dir.join("junit.xml")).map_err(|e| e.to_string())?;
        assert!(check_well_formed(&xml).is_ok());
        std::fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
        Ok(())
    }

    #[test]
    fn terminal_table_lists_failures() {
        let records = sample();
        let env = Environment {
            backend: "reference".into(),
            ..Environment::default()
        };
        let summary = Summary::from_records(&records, env, vec![(Level::L3, "no device".into())]);
        let t = terminal_table(&summary, &records);
        assert!(t.contains("conformant levels: L0, L1"), "{t}");
        assert!(t.contains("not run: L3 (no device)"), "{t}");
        assert!(t.contains("non-conformant tests (3):"), "{t}");
        assert!(
            t.contains("Fail          tilec.l2.gemm.nt.f16_f32.m257n129k77  got \"1 & 2\""),
            "{t}"
        );
        assert!(!t.contains("second line"), "{t}");
        assert!(t.contains("  gemm"), "{t}");
        // The L2 row: 3 tests, 1 fail, 1 crash, 1 timeout.
        let l2 = t.lines().find(|l| l.starts_with("L2 ")).unwrap_or_default();
        let cols: Vec<&str> = l2.split_whitespace().collect();
        assert_eq!(cols, ["L2", "3", "0", "1", "0", "0", "1", "1", "0"], "{t}");
    }
}
