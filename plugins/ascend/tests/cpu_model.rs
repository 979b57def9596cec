//! The CPU execution model (`cpu/ascendc_cpu.h`) catches what a real AI
//! core would not report: each case is a small AscendC kernel built with
//! the system C++ compiler against the header and run through
//! `AscendC::cpu::launch`; the test checks the model's message (or that a
//! correct variant runs clean).
//!
//! Skipped without a C++ compiler unless `TILEC_REQUIRE_CXX=1`.

use std::path::PathBuf;
use std::process::Command;

use tilec_backend_ascend::runtime::{self, MODEL_HEADER};

/// Builds and runs `body` as a kernel on one model core; returns the
/// model's error message, or `None` when it ran clean.
fn run(name: &str, body: &str) -> Option<Option<String>> {
    let Some(cxx) = runtime::find_cxx() else {
        assert!(
            std::env::var_os("TILEC_REQUIRE_CXX").is_none(),
            "TILEC_REQUIRE_CXX is set but no C++ compiler was found"
        );
        return None;
    };
    let dir = std::env::temp_dir().join(format!("tilec-ascend-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("ascendc_cpu.h"), MODEL_HEADER).unwrap_or_else(|e| panic!("{e}"));
    let program = format!(
        r#"#include "ascendc_cpu.h"
#include <cstdio>
using namespace AscendC;
static float gm_in[4096];
static float gm_out[4096];
static void kernel() {{
    GlobalTensor<float> in; in.SetGlobalBuffer(gm_in, 4096);
    GlobalTensor<float> out; out.SetGlobalBuffer(gm_out, 4096);
    TPipe pipe;
{body}
}}
int main() {{
    char error[1024] = {{0}};
    int rc = AscendC::cpu::launch(1, error, sizeof error, kernel);
    std::printf("%s", rc == 0 ? "OK" : error);
    return 0;
}}
"#
    );
    let src = dir.join(format!("{name}.cpp"));
    let exe: PathBuf = dir.join(name);
    std::fs::write(&src, program).unwrap_or_else(|e| panic!("{e}"));
    let built = Command::new(&cxx)
        .args(["-std=c++17", "-O0", "-DASCENDC_CPU_MODEL", "-I"])
        .arg(&dir)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        built.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(if text == "OK" { None } else { Some(text) })
}

fn expect_error(name: &str, body: &str, needle: &str) {
    if let Some(result) = run(name, body) {
        let message = result.unwrap_or_else(|| panic!("{name}: ran clean, expected `{needle}`"));
        assert!(message.contains(needle), "{name}: {message}");
    }
}

fn expect_clean(name: &str, body: &str) {
    if let Some(result) = run(name, body) {
        assert_eq!(result, None, "{name}");
    }
}

const COPY_IN: &str = r#"
    TBuf<TPosition::VECCALC> xb; pipe.InitBuffer(xb, 256 * 4, "x");
    LocalTensor<float> x = xb.Get<float>();
    DataCopyPad(x, in, DataCopyExtParams{1, 256 * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
"#;

#[test]
fn overflowing_ub_is_an_error() {
    expect_error(
        "ub_overflow",
        r#"
    TBuf<TPosition::VECCALC> a; pipe.InitBuffer(a, 128 * 1024, "a");
    TBuf<TPosition::VECCALC> b; pipe.InitBuffer(b, 128 * 1024, "b");
"#,
        "InitBuffer `b`: 131072 bytes at offset 131072 overflow UB (196608 bytes)",
    );
}

#[test]
fn overflowing_l0c_is_an_error() {
    expect_error(
        "l0c_overflow",
        r#"
    TBuf<TPosition::CO1> c; pipe.InitBuffer(c, 128 * 1024 + 64, "acc");
"#,
        "overflow L0C (131072 bytes)",
    );
}

#[test]
fn a_misaligned_ub_operand_is_an_error() {
    expect_error(
        "misaligned",
        r#"
    TBuf<TPosition::VECCALC> xb; pipe.InitBuffer(xb, 1024, "x");
    LocalTensor<float> x = xb.Get<float>();
    DataCopyPad(x[3], in, DataCopyExtParams{1, 64, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
"#,
        "operand at byte 12 of UB is not 32-byte aligned",
    );
}

#[test]
fn a_ub_copy_of_a_partial_block_is_an_error() {
    expect_error(
        "partial_block",
        r#"
    TBuf<TPosition::VECCALC> xb; pipe.InitBuffer(xb, 1024, "x");
    TBuf<TPosition::VECCALC> yb; pipe.InitBuffer(yb, 1024, "y");
    LocalTensor<float> x = xb.Get<float>();
    LocalTensor<float> y = yb.Get<float>();
    DataCopy(y, x, 7);
"#,
        "not a whole number of 32-byte blocks",
    );
}

#[test]
fn a_vector_read_without_a_flag_after_mte2_is_an_error() {
    expect_error(
        "missing_flag",
        &format!("{COPY_IN}    Adds(x, x, 1.0f, 256);\n"),
        "Adds on pipe V accesses buffer `x` written by pipe MTE2 without a SetFlag/WaitFlag pair (HardEvent::MTE2_V)",
    );
}

#[test]
fn the_same_kernel_with_its_flags_runs_clean() {
    expect_clean(
        "with_flags",
        &format!(
            "{COPY_IN}    SetFlag<HardEvent::MTE2_V>(EVENT_ID0); WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Adds(x, x, 1.0f, 256);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID1); WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
    DataCopyPad(out, x, DataCopyExtParams{{1, 256 * 4, 0, 0, 0}});
"
        ),
    );
}

#[test]
fn overwriting_a_buffer_another_pipe_reads_needs_a_flag() {
    expect_error(
        "war",
        &format!(
            "{COPY_IN}    SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0); WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    DataCopyPad(out, x, DataCopyExtParams{{1, 256 * 4, 0, 0, 0}});
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0); WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    Duplicate(x, 0.0f, 256);
"
        ),
        "overwrites buffer `x` still being read by pipe MTE3",
    );
}

#[test]
fn flag_misuse_is_an_error() {
    expect_error(
        "wait_unset",
        "    WaitFlag<HardEvent::MTE2_V>(EVENT_ID2);\n",
        "waits for a flag nobody set",
    );
    expect_error(
        "set_twice",
        "    SetFlag<HardEvent::V_MTE3>(EVENT_ID0); SetFlag<HardEvent::V_MTE3>(EVENT_ID0);\n",
        "set again before its WaitFlag",
    );
    expect_error(
        "left_set",
        "    SetFlag<HardEvent::MTE1_M>(EVENT_ID3);\n",
        "set and never waited for",
    );
}

#[test]
fn reading_past_a_buffer_is_an_error() {
    expect_error(
        "bounds",
        r#"
    TBuf<TPosition::VECCALC> xb; pipe.InitBuffer(xb, 64, "x");
    LocalTensor<float> x = xb.Get<float>();
    Duplicate(x, 0.0f, 32);
"#,
        "Duplicate: elements 0..32",
    );
}
