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
    run_kernel(name, "", body)
}

/// As [`run`], for a mixed kernel (one AIC and its AIV): `body` guards
/// its instructions with TILEC_AIC and TILEC_AIV as the emitter does.
fn run_mixed(name: &str, body: &str) -> Option<Option<String>> {
    run_kernel(
        name,
        "    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);\n",
        body,
    )
}

fn run_kernel(name: &str, prologue: &str, body: &str) -> Option<Option<String>> {
    let Some(cxx) = runtime::find_cxx() else {
        assert!(
            std::env::var_os("TILEC_REQUIRE_CXX").is_none(),
            "TILEC_REQUIRE_CXX is set but no C++ compiler was found"
        );
        return None;
    };
    // One folder per test: tests run in parallel threads, and one test
    // rewriting the shared header while another compiles against it would
    // hand the compiler a truncated file. A fresh private folder (random
    // name, mode 0700), removed when the test is done.
    let scratch = tempfile::Builder::new()
        .prefix(&format!("tilec-ascend-model-test-{name}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch.path();
    std::fs::write(dir.join("ascendc_cpu.h"), MODEL_HEADER).unwrap_or_else(|e| panic!("{e}"));
    let program = format!(
        r#"#include "ascendc_cpu.h"
#include <cstdio>
using namespace AscendC;
#define TILEC_AIC if (AscendC::cpu::SideScope tl_side{{AscendC::cpu::SIDE_AIC}}; true)
#define TILEC_AIV if (AscendC::cpu::SideScope tl_side{{AscendC::cpu::SIDE_AIV}}; true)
static float gm_in[4096];
static float gm_out[4096];
static float gm_ws[4096];
static void kernel() {{
{prologue}    GlobalTensor<float> in; in.SetGlobalBuffer(gm_in, 4096);
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
        .arg(dir)
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

fn expect_mixed_error(name: &str, body: &str, needle: &str) {
    if let Some(result) = run_mixed(name, body) {
        let message = result.unwrap_or_else(|| panic!("{name}: ran clean, expected `{needle}`"));
        assert!(message.contains(needle), "{name}: {message}");
    }
}

fn expect_mixed_clean(name: &str, body: &str) {
    if let Some(result) = run_mixed(name, body) {
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

/// An L0C tile on the cube core, a UB tile on the vector core and a GM
/// workspace between them; `fix` copies the tile to the workspace.
const MIXED: &str = r#"
    TBuf<TPosition::CO1> cb; LocalTensor<float> acc;
    TILEC_AIC { pipe.InitBuffer(cb, 64 * 64 * 4, "acc"); acc = cb.Get<float>(); }
    TBuf<TPosition::VECCALC> sb; LocalTensor<float> s;
    TILEC_AIV { pipe.InitBuffer(sb, 64 * 64 * 4, "s"); s = sb.Get<float>(); }
    GlobalTensor<float> ws; ws.SetGlobalBuffer(gm_ws, 4096, "ws");
    FixpipeParamsV220 fix; fix.nSize = 64; fix.mSize = 64; fix.srcStride = 64; fix.dstStride = 64;
"#;

#[test]
fn the_vector_and_scalar_units_cannot_read_l0c() {
    let acc = r#"
    TBuf<TPosition::CO1> cb; pipe.InitBuffer(cb, 1024, "acc");
    LocalTensor<float> acc = cb.Get<float>();
    TBuf<TPosition::VECCALC> xb; pipe.InitBuffer(xb, 1024, "x");
    LocalTensor<float> x = xb.Get<float>();
"#;
    expect_error(
        "l0c_vector",
        &format!("{acc}    Adds(x, acc, 1.0f, 256);\n"),
        "Adds: vector operands live in UB",
    );
    expect_error(
        "l0c_scalar",
        &format!("{acc}    float v = acc.GetValue(0); x.SetValue(0, v);\n"),
        "GetValue: the scalar unit reads and writes UB only, not L0C buffer `acc`",
    );
    expect_error(
        "l0c_copy",
        &format!("{acc}    DataCopy(x, acc, 256);\n"),
        "DataCopy between local tensors moves UB to UB, not L0C to UB",
    );
    expect_error(
        "l0c_to_gm",
        &format!("{acc}    DataCopy(out, acc, 256);\n"),
        "DataCopy UB->GM needs a UB tensor, not L0C",
    );
    // The way that works: the fixpipe to global memory, then MTE2 to UB.
    expect_clean(
        "l0c_through_gm",
        &format!(
            "{acc}    FixpipeParamsV220 p; p.nSize = 16; p.mSize = 16; p.srcStride = 16; p.dstStride = 16;
    Fixpipe(out, acc, p);
    SetFlag<HardEvent::FIX_MTE2>(EVENT_ID0); WaitFlag<HardEvent::FIX_MTE2>(EVENT_ID0);
    DataCopy(x, out, 256);
"
        ),
    );
}

#[test]
fn a_cube_result_needs_a_cross_core_flag_to_reach_the_vector_core() {
    expect_mixed_error(
        "cross_raw",
        &format!(
            "{MIXED}    TILEC_AIC {{ Fixpipe(ws, acc, fix); }}
    TILEC_AIV {{ DataCopy(s, ws, 4096); }}
"
        ),
        "DataCopy GM->UB on AIV pipe MTE2 accesses buffer `ws` written by AIC pipe FIX without a cross-core flag (CrossCoreSetFlag<2, PIPE_FIX> on the AIC, CrossCoreWaitFlag on the AIV)",
    );
    // A flag between two pipes of one core does not order the other core.
    expect_mixed_error(
        "cross_barrier",
        &format!(
            "{MIXED}    TILEC_AIC {{ Fixpipe(ws, acc, fix); }}
    PipeBarrier<PIPE_ALL>();
    TILEC_AIV {{ DataCopy(s, ws, 4096); }}
"
        ),
        "written by AIC pipe FIX without a cross-core flag",
    );
}

#[test]
fn the_workspace_round_trip_with_its_flags_runs_clean() {
    expect_mixed_clean(
        "cross_clean",
        &format!(
            "{MIXED}    TILEC_AIC {{ Fixpipe(ws, acc, fix); CrossCoreSetFlag<2, PIPE_FIX>(0); }}
    TILEC_AIV {{
        CrossCoreWaitFlag(0);
        DataCopy(s, ws, 4096);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0); WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Adds(s, s, 1.0f, 4096);
        CrossCoreSetFlag<2, PIPE_MTE2>(5);
    }}
    TILEC_AIC {{ CrossCoreWaitFlag(5); Fixpipe(ws, acc, fix); }}
"
        ),
    );
}

#[test]
fn overwriting_the_workspace_the_other_core_reads_needs_a_cross_core_flag() {
    expect_mixed_error(
        "cross_war",
        &format!(
            "{MIXED}    TILEC_AIC {{ Fixpipe(ws, acc, fix); CrossCoreSetFlag<2, PIPE_FIX>(0); }}
    TILEC_AIV {{ CrossCoreWaitFlag(0); DataCopy(s, ws, 4096); }}
    TILEC_AIC {{ Fixpipe(ws, acc, fix); }}
"
        ),
        "Fixpipe on AIC pipe FIX overwrites buffer `ws` still being read by AIV pipe MTE2 without a cross-core flag",
    );
}

#[test]
fn each_core_reaches_only_its_own_buffers_and_pipes() {
    expect_mixed_error(
        "aiv_l1",
        r#"
    TBuf<TPosition::A1> qb; LocalTensor<half> q;
    TILEC_AIC { pipe.InitBuffer(qb, 512, "q"); q = qb.Get<half>(); }
    GlobalTensor<half> g; g.SetGlobalBuffer(reinterpret_cast<half*>(gm_in), 4096, "g");
    TILEC_AIV { DataCopy(q, g, Nd2NzParams{1, 16, 16, 0, 16, 16, 1, 0}); }
"#,
        "DataCopy ND->NZ on the AIV reaches buffer `q` in L1, which only the AIC has",
    );
    expect_mixed_error(
        "aiv_fix",
        &format!("{MIXED}    TILEC_AIV {{ Fixpipe(ws, acc, fix); }}\n"),
        "Fixpipe runs on pipe FIX, which the AIV does not have",
    );
    expect_mixed_error(
        "aic_vector_flag",
        "    TILEC_AIC { SetFlag<HardEvent::MTE2_V>(EVENT_ID0); }\n",
        "SetFlag runs on pipe V, which the AIC does not have",
    );
    expect_mixed_error(
        "aic_ub",
        "    TBuf<TPosition::VECCALC> xb; TILEC_AIC { pipe.InitBuffer(xb, 1024, \"x\"); }\n",
        "InitBuffer `x`: a UB buffer is set up on the AIC; only the AIV has UB",
    );
    expect_mixed_error(
        "unguarded",
        &format!("{MIXED}    Fixpipe(ws, acc, fix);\n"),
        "Fixpipe runs outside a TILEC_AIC/TILEC_AIV guard",
    );
    expect_mixed_error(
        "nested",
        "    TILEC_AIV { TILEC_AIC { PipeBarrier<PIPE_ALL>(); } }\n",
        "AIC code inside AIV code",
    );
}

#[test]
fn cross_core_flag_misuse_is_an_error() {
    expect_mixed_error(
        "cross_wait_unset",
        "    TILEC_AIV { CrossCoreWaitFlag(3); }\n",
        "waits for flag 3, which the other core has not set (the core would hang)",
    );
    expect_mixed_error(
        "cross_left_set",
        "    TILEC_AIC { CrossCoreSetFlag<2, PIPE_FIX>(0); }\n",
        "the kernel ends with cross-core flag 0 set for the AIV and never waited for",
    );
    expect_mixed_error(
        "cross_two_pipes",
        "    TILEC_AIC { CrossCoreSetFlag<2, PIPE_FIX>(0); CrossCoreSetFlag<2, PIPE_MTE2>(0); }\n",
        "cross-core flag 0 set from AIC pipe MTE2 while one from AIC pipe FIX is still pending",
    );
    expect_mixed_error(
        "cross_depth",
        "    TILEC_AIC { for (int i = 0; i < 16; ++i) CrossCoreSetFlag<2, PIPE_FIX>(0); }\n",
        "set more than 15 times without a wait",
    );
    expect_mixed_error(
        "cross_id",
        "    TILEC_AIC { CrossCoreSetFlag<2, PIPE_FIX>(11); }\n",
        "cross-core flag id 11 out of range",
    );
    expect_error(
        "cross_not_mixed",
        "    CrossCoreSetFlag<2, PIPE_FIX>(0);\n",
        "CrossCoreSetFlag in a kernel that is not mixed",
    );
}
