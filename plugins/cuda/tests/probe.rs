//! The layout probe: on an NVIDIA GPU, show which lane and register the
//! hardware's `mma.sync` and `wgmma` read and write for each matrix
//! element, which element each lane's `ldmatrix` (plain and `.trans`)
//! receives and where each lane's `stmatrix` elements land, and require
//! each to equal the fragment layouts of the target descriptions.
//!
//! A wrong layout in a description passes the SIMT interpreter (which runs
//! whatever the description says) and fails on silicon, so this test checks
//! the descriptions against the hardware itself. It runs wherever the CUDA
//! runtime finds a device and passes vacuously elsewhere (it says so).
//!
//! # Method
//! The probe kernel loads each lane's fragment registers straight from
//! per-lane storage (`A[block][lane·8 + slot]`, `B[block][lane·4 + slot]`),
//! with zero accumulators, issues one `mma`, and stores each lane's D
//! registers the same way: no layout is assumed on the way in or out. Block
//! `(a, b)` of the grid gets a one-hot A — a 1 in register slot `a` (one
//! `(lane, slot)` pair) — and a one-hot B in slot `b`. The hardware then
//! computes `D[r][n] = 1` exactly when A's 1 sits at `(r, k)` and B's at
//! `(k, n)` for the same `k`, and 0 everywhere else. So for every pair of
//! slots, the declared layouts predict the D storage completely: the one
//! position whose declared accumulator element is `(row_A(a), col_B(b))`
//! holds 1 iff `k_A(a) == k_B(b)`. Every (A slot, B slot) pair is checked,
//! which pins the rows and columns of A, B and D and the shared `k` of A
//! and B. A second kernel checks C: with zero A and B, D must equal C
//! register for register (PTX gives C and D one layout).

use std::collections::BTreeMap;

use tilec_backend_cuda::targets;
use tilec_core::interp::{Tensor, TensorData};
use tilec_core::ir::DType;
use tilec_core::simt::{self, SimtOptions};
use tilec_core::target::{MatrixAtom, OperandRole};

mod common;
use common::{alloc, device_or_skip, download, emit, free, launch, upload};

const LANES: usize = 32;
const A_SLOTS: usize = 8;
const B_SLOTS: usize = 4;
const D_SLOTS: usize = 4;

/// The probe kernel for an m16n8k16 atom with A/B element type `ab`
/// (`f16` or `bf16`): per-lane storage in, per-lane storage out.
fn probe_ir(ab: &str, blocks: usize) -> String {
    format!(
        "thread_ir 0.1\n\n\
kernel @probe(%A: global {ab}[{an}], %B: global {ab}[{bn}], %C: global f32[{dn}], %D: global f32[{dn}]) grid({blocks}, 1, 1) threads(32) {{\n\
  local %a: {ab}[8]\n  local %b: {ab}[4]\n  local %c: f32[4]\n  local %d: f32[4]\n\
  for %i from 0 count 8 step 1 unroll {{\n    load global x1 %a[%i] <- %A[block_idx_x * 256 + lane_id * 8 + %i]\n  }}\n\
  for %j from 0 count 4 step 1 unroll {{\n    load global x1 %b[%j] <- %B[block_idx_x * 128 + lane_id * 4 + %j]\n  }}\n\
  for %k from 0 count 4 step 1 unroll {{\n    load global x1 %c[%k] <- %C[block_idx_x * 128 + lane_id * 4 + %k]\n  }}\n\
  mma \"mma.m16n8k16\" %d[0] <- %a[0], %b[0], %c[0]\n\
  for %m from 0 count 4 step 1 unroll {{\n    store global x1 %D[block_idx_x * 128 + lane_id * 4 + %m] <- %d[%m]\n  }}\n\
}}\n",
        an = blocks * LANES * A_SLOTS,
        bn = blocks * LANES * B_SLOTS,
        dn = blocks * LANES * D_SLOTS,
    )
}

/// Tile coordinates `(row, col)` of every `(lane, slot)` of an operand, as
/// the description declares them.
fn declared(atom: &MatrixAtom, role: OperandRole, rows: u64) -> Vec<(u64, u64)> {
    let f = atom
        .fragment_for_n(role, 8)
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("{}: no {} fragment", atom.name, role.name()));
    let mut out = Vec::new();
    for lane in 0..LANES as u64 {
        for slot in 0..f.slots() {
            let e = f
                .element_index(lane, slot)
                .unwrap_or_else(|e| panic!("fragment: {e}"));
            // Element index `row + rows·col` names `(row, col)`.
            out.push(((e as u64) % rows, (e as u64) / rows));
        }
    }
    out
}

fn one_hot_bytes(ab_bf16: bool, slots: usize, blocks: &[usize]) -> Vec<u8> {
    let one: u16 = if ab_bf16 { 0x3F80 } else { 0x3C00 };
    let mut out = vec![0u8; blocks.len() * LANES * slots * 2];
    for (block, &hot) in blocks.iter().enumerate() {
        let at = (block * LANES * slots + hot) * 2;
        out[at..at + 2].copy_from_slice(&one.to_le_bytes());
    }
    out
}

fn check_atom(arch: &str, bf16: bool) {
    let target = targets::describe(arch).unwrap_or_else(|e| panic!("{}", e.message));
    let atom = target
        .matrix_atoms
        .iter()
        .find(|a| a.name == "mma.m16n8k16")
        .unwrap_or_else(|| panic!("{arch} has no mma.m16n8k16"));
    let a_decl = declared(atom, OperandRole::A, 16);
    let b_decl = declared(atom, OperandRole::B, 16);
    let d_decl = declared(atom, OperandRole::Accumulator, 16);
    assert_eq!(a_decl.len(), LANES * A_SLOTS);
    assert_eq!(b_decl.len(), LANES * B_SLOTS);
    assert_eq!(d_decl.len(), LANES * D_SLOTS);
    let d_at: BTreeMap<(u64, u64), usize> =
        d_decl.iter().enumerate().map(|(i, &rc)| (rc, i)).collect();

    // Every (A register slot, B register slot) pair: 256 × 128 blocks.
    let pairs: Vec<(usize, usize)> = (0..LANES * A_SLOTS)
        .flat_map(|a| (0..LANES * B_SLOTS).map(move |b| (a, b)))
        .collect();
    let blocks = pairs.len();
    let ab = if bf16 { "bf16" } else { "f16" };
    let a_buf = alloc(blocks * LANES * A_SLOTS * 2);
    let b_buf = alloc(blocks * LANES * B_SLOTS * 2);
    let c_buf = alloc(blocks * LANES * D_SLOTS * 4);
    let d_buf = alloc(blocks * LANES * D_SLOTS * 4);
    let a_hot: Vec<usize> = pairs.iter().map(|p| p.0).collect();
    let b_hot: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    upload(a_buf, one_hot_bytes(bf16, A_SLOTS, &a_hot));
    upload(b_buf, one_hot_bytes(bf16, B_SLOTS, &b_hot));
    launch(
        &probe_ir(ab, blocks),
        arch,
        blocks as u32,
        vec![a_buf, b_buf, c_buf, d_buf],
    );
    let d = download(d_buf, blocks * LANES * D_SLOTS * 4);
    let wrong = mismatches(&pairs, &d, &a_decl, &b_decl, &d_at);
    assert!(
        wrong.is_empty(),
        "{arch} mma.m16n8k16 {ab}: the hardware disagrees with the description:\n{}",
        wrong.join("\n")
    );
    // The probe can tell: the same data against a description with two A
    // slots swapped (lane 0's slots 0 and 2: different rows) disagrees.
    let mut swapped = a_decl.clone();
    swapped.swap(0, 2);
    assert_ne!(a_decl[0], a_decl[2]);
    assert!(!mismatches(&pairs, &d, &swapped, &b_decl, &d_at).is_empty());

    // C and D share one layout: with A = B = 0, D is C register for register.
    let c_vals: Vec<f32> = (0..LANES * D_SLOTS).map(|i| i as f32 + 0.5).collect();
    let mut c_bytes = vec![0u8; blocks * LANES * D_SLOTS * 4];
    for (i, v) in c_vals.iter().enumerate() {
        c_bytes[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    upload(a_buf, vec![0u8; blocks * LANES * A_SLOTS * 2]);
    upload(b_buf, vec![0u8; blocks * LANES * B_SLOTS * 2]);
    upload(c_buf, c_bytes);
    launch(
        &probe_ir(ab, blocks),
        arch,
        blocks as u32,
        vec![a_buf, b_buf, c_buf, d_buf],
    );
    let d = download(d_buf, LANES * D_SLOTS * 4);
    for (i, want) in c_vals.iter().enumerate() {
        let v = f32::from_le_bytes([d[i * 4], d[i * 4 + 1], d[i * 4 + 2], d[i * 4 + 3]]);
        assert_eq!(v, *want, "{arch} {ab}: D slot {i} is not C's");
    }
    for buffer in [a_buf, b_buf, c_buf, d_buf] {
        free(buffer);
    }
}

/// Where the D storage of every probe block differs from what the declared
/// layouts predict (the first few, described).
fn mismatches(
    pairs: &[(usize, usize)],
    d: &[u8],
    a_decl: &[(u64, u64)],
    b_decl: &[(u64, u64)],
    d_at: &BTreeMap<(u64, u64), usize>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (block, &(a, b)) in pairs.iter().enumerate() {
        let (row, ka) = a_decl[a];
        let (kb, col) = b_decl[b];
        let hot = d_at.get(&(row, col)).copied();
        for slot in 0..LANES * D_SLOTS {
            let at = (block * LANES * D_SLOTS + slot) * 4;
            let v = f32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]);
            let want = if Some(slot) == hot && ka == kb {
                1.0
            } else {
                0.0
            };
            if v != want && wrong.len() < 8 {
                wrong.push(format!(
                    "A (lane {}, slot {}) × B (lane {}, slot {}): D (lane {}, slot {}) = {v}, declared layouts predict {want}",
                    a / A_SLOTS,
                    a % A_SLOTS,
                    b / B_SLOTS,
                    b % B_SLOTS,
                    slot / D_SLOTS,
                    slot % D_SLOTS
                ));
            }
        }
    }
    wrong
}

#[test]
fn mma_fragment_layouts_match_the_hardware() {
    let Some(device) = device_or_skip() else {
        return;
    };
    for arch in ["sm_80", "sm_90a"] {
        for bf16 in [false, true] {
            check_atom(arch, bf16);
        }
    }
    // Shown with `--nocapture`: what was probed, and where.
    #[allow(clippy::print_stdout)]
    {
        println!("probed mma.m16n8k16 f16 and bf16 for sm_80 and sm_90a on {device}");
    }
}

/// The f16 bits of an integer below 2048 (exact).
fn f16_of_small(v: u16) -> u16 {
    if v == 0 {
        return 0;
    }
    let e = 15 - v.leading_zeros() as u16;
    ((e + 15) << 10) | ((v << (10 - e)) & 0x3FF)
}

/// The value of f16 bits (finite values).
fn f32_of_f16(bits: u16) -> f32 {
    let (exp, man) = (i32::from((bits >> 10) & 0x1F), f32::from(bits & 0x3FF));
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    if exp == 0 {
        sign * man * (-24f32).exp2()
    } else {
        sign * (1024.0 + man) * ((exp - 25) as f32).exp2()
    }
}

/// The ldmatrix probe kernel (see [`check_ldmatrix`]).
fn ldmatrix_probe_ir(trans: bool) -> String {
    format!(
        "thread_ir 0.1\n\n\
kernel @probe(%G: global f16[256], %D: global f16[256]) grid(1, 1, 1) threads(32) {{\n\
  shared %S: f16[256] align(16)\n  local %v: f16[1]\n  local %a: f16[8]\n\
  for %i from 0 count 8 step 1 unroll {{\n    load global x1 %v[0] <- %G[lane_id * 8 + %i]\n    store shared x1 %S[lane_id * 8 + %i] <- %v[0]\n  }}\n\
  barrier\n\
  ldmatrix \"ldmatrix.m8n8.b16\" x4{} %a[0] <- %S[lane_id * 8]\n\
  for %s from 0 count 8 step 1 unroll {{\n    store global x1 %D[lane_id * 8 + %s] <- %a[%s]\n  }}\n\
}}\n",
        if trans { " trans" } else { "" }
    )
}

/// The probe kernels are valid thread IR and emit PTX, GPU or not.
#[test]
fn ldmatrix_probe_emits() {
    for arch in ["sm_80", "sm_90a"] {
        for trans in [false, true] {
            let (_, emitted) = emit(&ldmatrix_probe_ir(trans), arch);
            assert!(emitted.text.contains("ldmatrix.sync.aligned.m8n8.x4"));
        }
    }
}

/// `ldmatrix` through the description: four 8×8 matrices of f16 whose
/// element `(j, r, c)` holds the value `64j + 8r + c` (exact in f16) sit in
/// shared memory, lane `l` supplies the start of row `l % 8` of matrix
/// `l / 8`, and each lane stores the 8 values it received. Slot `2j + e`
/// of lane `l` must hold matrix `j`'s element at the description's
/// fragment `(l, e)` (plain or transposed).
fn check_ldmatrix(arch: &str, trans: bool) {
    let target = targets::describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message));
    let load = target
        .matrix_load("ldmatrix.m8n8.b16")
        .unwrap_or_else(|| panic!("{arch} has no ldmatrix"));
    let fragment = load
        .fragment(trans)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no fragment"));
    let text = ldmatrix_probe_ir(trans);
    let values: Vec<u8> = (0..256u16)
        .flat_map(|v| f16_of_small(v).to_le_bytes())
        .collect();
    let g = alloc(512);
    let d = alloc(512);
    upload(g, values);
    launch(&text, arch, 1, vec![g, d]);
    let out = download(d, 512);
    let mut wrong = Vec::new();
    for lane in 0..32u64 {
        for j in 0..4u64 {
            for e in 0..2u64 {
                let at = (lane * 8 + 2 * j + e) as usize * 2;
                let got = f32_of_f16(u16::from_le_bytes([out[at], out[at + 1]]));
                let rc = fragment.element(lane, e).unwrap_or_else(|e| panic!("{e}"));
                let want = (64 * j + 8 * rc[0] + rc[1]) as f32;
                if got != want {
                    wrong.push(format!(
                        "lane {lane} matrix {j} slot {e}: {got}, declared {want}"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{arch} ldmatrix{}: {} of 256 differ, first: {}",
        if trans { ".trans" } else { "" },
        wrong.len(),
        wrong.first().map_or("", String::as_str)
    );
}

/// Lanes and slots of the wgmma probe: a warpgroup, 8 A and 8 D slots
/// (m64n16k16).
const WG_LANES: usize = 128;
const WG_SLOTS: usize = 8;
/// B of the wgmma probe: `B[k][π(k)] = 1` for the permutation π below.
fn wgmma_b_col(k: usize) -> usize {
    (5 * k + 3) % 16
}

/// The wgmma probe kernel for `blocks` blocks (see [`check_wgmma`]): A
/// straight from per-lane storage into the registers of the register-A
/// form, B (16 × 16) into shared memory in the 32-byte swizzled MN-major
/// layout its descriptor names (the form `core/tests/thread/wgmma_sm90a.thr`
/// runs), zero accumulators, one `wgmma.m64n16k16`, and D straight back to
/// per-lane storage.
fn wgmma_probe_ir(blocks: usize) -> String {
    let n = blocks * WG_LANES * WG_SLOTS;
    format!(
        "thread_ir 0.1\n\n\
kernel @probe(%A: global f16[{n}], %B: global f16[256], %D: global f32[{n}]) grid({blocks}, 1, 1) threads(128) {{\n\
  shared %Bs: f16[256] align(256)\n  local %a: f16[8]\n  local %d: f32[8]\n  local %v: f16[1]\n\
  for %j from thread_idx count 2 step 128 {{\n\
    load global x1 %v[0] <- %B[%j]\n\
    store shared x1 %Bs[%j // 16 * 16 + (%j % 16 // 8 ^ %j // 16 // 4 % 2) * 8 + %j % 8] <- %v[0]\n\
  }}\n\
  for %i from 0 count 8 step 1 unroll {{\n    load global x1 %a[%i] <- %A[block_idx_x * 1024 + thread_idx * 8 + %i]\n  }}\n\
  for %c from 0 count 8 step 1 unroll {{\n    %d[%c] = f32(0.0)\n  }}\n\
  barrier\n\
  async_mma_fence\n\
  async_mma \"wgmma.m64nNk16\" n(16) %d[0] <- %a[0], %Bs[0] mn sw32 lbo(512) sbo(256), accumulate true\n\
  async_mma_commit\n\
  async_mma_wait 0\n\
  for %s from 0 count 8 step 1 unroll {{\n    store global x1 %D[block_idx_x * 1024 + thread_idx * 8 + %s] <- %d[%s]\n  }}\n\
}}\n"
    )
}

/// `(row, col)` of every `(lane, slot)` of the wgmma atom's `role`
/// fragment for N = 16, as the description declares them.
fn wgmma_declared(atom: &MatrixAtom, role: OperandRole) -> Vec<(u64, u64)> {
    let f = atom
        .fragment_for_n(role, 16)
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("{}: no {} fragment", atom.name, role.name()));
    assert_eq!((f.threads(), f.slots()), (WG_LANES as u64, WG_SLOTS as u64));
    let mut out = Vec::new();
    for lane in 0..WG_LANES as u64 {
        for slot in 0..WG_SLOTS as u64 {
            let e = f
                .element_index(lane, slot)
                .unwrap_or_else(|e| panic!("fragment: {e}"));
            // Element index `row + 64·col` names `(row, col)`.
            out.push((e as u64 % 64, e as u64 / 64));
        }
    }
    out
}

/// The probe emits for sm_90a, GPU or not.
#[test]
fn wgmma_probe_emits() {
    let (_, emitted) = emit(&wgmma_probe_ir(2), "sm_90a");
    assert!(
        emitted
            .text
            .contains("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16")
    );
}

/// The wgmma probe's inputs for its first `blocks` A slots: the one-hot A
/// of each block and the permutation matrix B, as values.
fn wgmma_inputs(blocks: usize) -> (Vec<f64>, Vec<f64>) {
    let per = WG_LANES * WG_SLOTS;
    let mut a = vec![0.0; blocks * per];
    for block in 0..blocks {
        a[block * per + block] = 1.0;
    }
    let mut b = vec![0.0; 256];
    for k in 0..16 {
        b[k * 16 + wgmma_b_col(k)] = 1.0;
    }
    (a, b)
}

/// wgmma's register-A and accumulator fragments (module docs): block `a`
/// gets a one-hot A (a 1 in register slot `a`, one `(lane, slot)` of the
/// warpgroup) and every block the permutation matrix B with `B[k][π(k)] =
/// 1`, so D has one 1, at `(row_A(a), π(k_A(a)))`. The declared
/// accumulator fragment must hold it in exactly the `(lane, slot)` the
/// kernel stored it from, and every other D register must be 0. Over all
/// 1024 A slots this pins both fragments (up to one relabelling of rows
/// shared by A and D, which no product can see). Answers the first
/// mismatches of `d` (the D storage of the first `blocks` blocks).
fn wgmma_mismatches(arch: &str, d: &[f32], blocks: usize) -> Vec<String> {
    let target = targets::describe(arch).unwrap_or_else(|e| panic!("{}", e.message));
    let atom = target
        .matrix_atoms
        .iter()
        .find(|a| a.name == "wgmma.m64nNk16")
        .unwrap_or_else(|| panic!("{arch} has no wgmma.m64nNk16"));
    let a_decl = wgmma_declared(atom, OperandRole::A);
    let d_decl = wgmma_declared(atom, OperandRole::Accumulator);
    let d_at: BTreeMap<(u64, u64), usize> =
        d_decl.iter().enumerate().map(|(i, &rc)| (rc, i)).collect();
    let per = WG_LANES * WG_SLOTS;
    let mut wrong = Vec::new();
    for (block, &(row, k)) in a_decl.iter().enumerate().take(blocks) {
        let want = d_at.get(&(row, wgmma_b_col(k as usize) as u64)).copied();
        for slot in 0..per {
            let got = d[block * per + slot];
            let expect = if Some(slot) == want { 1.0 } else { 0.0 };
            if got != expect && wrong.len() < 10 {
                wrong.push(format!(
                    "A slot {block} (declared ({row}, {k})): D lane {} slot {} = {got}, declared {expect}",
                    slot / WG_SLOTS,
                    slot % WG_SLOTS
                ));
            }
        }
    }
    wrong
}

/// The probe's bookkeeping, checked without a GPU: the SIMT interpreter
/// runs wgmma through the description itself, so the first 64 A slots
/// must come out exactly as declared.
#[test]
fn wgmma_probe_agrees_with_the_simt_interpreter() {
    let blocks = 64;
    let text = wgmma_probe_ir(blocks);
    let (module, _) = emit(&text, "sm_90a");
    let target = targets::describe("sm_90a").unwrap_or_else(|e| panic!("{}", e.message));
    let (a, b) = wgmma_inputs(blocks);
    let n = a.len();
    let mut args = vec![
        Tensor::from_f64(DType::F16, vec![n], a).unwrap_or_else(|e| panic!("{e}")),
        Tensor::from_f64(DType::F16, vec![256], b).unwrap_or_else(|e| panic!("{e}")),
        Tensor::zeros(DType::F32, vec![n]),
    ];
    simt::run(
        &module.kernels[0],
        &target,
        &mut args,
        &SimtOptions::default(),
    )
    .unwrap_or_else(|e| panic!("SIMT: {e}"));
    let TensorData::Float(d) = &args[2].data else {
        panic!("D is not a float tensor")
    };
    let d: Vec<f32> = d.iter().map(|&v| v as f32).collect();
    let wrong = wgmma_mismatches("sm_90a", &d, blocks);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn check_wgmma(arch: &str) {
    let blocks = WG_LANES * WG_SLOTS;
    let (a, b) = wgmma_inputs(blocks);
    let f16_bytes = |v: &[f64]| -> Vec<u8> {
        v.iter()
            .flat_map(|&x| (if x == 1.0 { 0x3C00u16 } else { 0 }).to_le_bytes())
            .collect()
    };
    let (da, db, dd) = (alloc(a.len() * 2), alloc(512), alloc(a.len() * 4));
    upload(da, f16_bytes(&a));
    upload(db, f16_bytes(&b));
    launch(
        &wgmma_probe_ir(blocks),
        arch,
        blocks as u32,
        vec![da, db, dd],
    );
    let out = download(dd, a.len() * 4);
    for buffer in [da, db, dd] {
        free(buffer);
    }
    let d: Vec<f32> = out
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let wrong = wgmma_mismatches(arch, &d, blocks);
    assert!(
        wrong.is_empty(),
        "{arch} wgmma register-A / accumulator fragments differ from the hardware:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn wgmma_fragment_layouts_match_the_hardware() {
    let Some(device) = device_or_skip() else {
        return;
    };
    check_wgmma("sm_90a");
    #[allow(clippy::print_stdout)]
    {
        println!(
            "probed wgmma.m64n16k16 register-A and accumulator fragments for sm_90a on {device}"
        );
    }
}

/// The stmatrix probe kernel (see [`check_stmatrix`]).
fn stmatrix_probe_ir(trans: bool) -> String {
    format!(
        "thread_ir 0.1\n\n\
kernel @probe(%G: global f16[256], %D: global f16[256]) grid(1, 1, 1) threads(32) {{\n\
  shared %S: f16[256] align(16)\n  local %v: f16[1]\n  local %a: f16[8]\n\
  for %s from 0 count 8 step 1 unroll {{\n    load global x1 %a[%s] <- %G[lane_id * 8 + %s]\n  }}\n\
  stmatrix \"stmatrix.m8n8.b16\" x4{} %S[lane_id * 8] <- %a[0]\n\
  barrier\n\
  for %i from 0 count 8 step 1 unroll {{\n    load shared x1 %v[0] <- %S[lane_id * 8 + %i]\n    store global x1 %D[lane_id * 8 + %i] <- %v[0]\n  }}\n\
}}\n",
        if trans { " trans" } else { "" }
    )
}

/// The stmatrix probe emits on the targets that have it, GPU or not.
#[test]
fn stmatrix_probe_emits() {
    for trans in [false, true] {
        let (_, emitted) = emit(&stmatrix_probe_ir(trans), "sm_90a");
        assert!(emitted.text.contains("stmatrix.sync.aligned.m8n8.x4"));
    }
}

/// `stmatrix` through the description, the mirror of [`check_ldmatrix`]:
/// slot `2j + e` of lane `l` holds `64j + 2l + e` (exact in f16), lane `l`
/// supplies the start of row `l % 8` of matrix `l / 8` (matrix `j` at
/// element `64j`, rows of 8), and the block copies the shared buffer out.
/// Element `(r, c)` of matrix `j` must hold the value of the lane and slot
/// whose description fragment `(l, e)` names `(r, c)`.
fn check_stmatrix(arch: &str, trans: bool) {
    let target = targets::describe(arch).unwrap_or_else(|e| panic!("{arch}: {}", e.message));
    let store = target
        .matrix_store("stmatrix.m8n8.b16")
        .unwrap_or_else(|| panic!("{arch} has no stmatrix"))
        .as_load();
    let fragment = store
        .fragment(trans)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("no fragment"));
    let values: Vec<u8> = (0..32u16)
        .flat_map(|lane| (0..8u16).map(move |s| 64 * (s / 2) + 2 * lane + s % 2))
        .flat_map(|v| f16_of_small(v).to_le_bytes())
        .collect();
    let g = alloc(512);
    let d = alloc(512);
    upload(g, values);
    launch(&stmatrix_probe_ir(trans), arch, 1, vec![g, d]);
    let out = download(d, 512);
    let mut wrong = Vec::new();
    for lane in 0..32u64 {
        for j in 0..4u64 {
            for e in 0..2u64 {
                let rc = fragment.element(lane, e).unwrap_or_else(|e| panic!("{e}"));
                let at = (64 * j + 8 * rc[0] + rc[1]) as usize * 2;
                let got = f32_of_f16(u16::from_le_bytes([out[at], out[at + 1]]));
                let want = (64 * j + 2 * lane + e) as f32;
                if got != want {
                    wrong.push(format!(
                        "matrix {j} element {rc:?}: {got}, declared lane {lane} slot {e} ({want})"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{arch} stmatrix{}: {} of 256 differ, first: {}",
        if trans { ".trans" } else { "" },
        wrong.len(),
        wrong.first().map_or("", String::as_str)
    );
}

#[test]
fn stmatrix_fragment_layouts_match_the_hardware() {
    let Some(device) = device_or_skip() else {
        return;
    };
    for arch in ["sm_90", "sm_90a"] {
        for trans in [false, true] {
            check_stmatrix(arch, trans);
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!("probed stmatrix x4 and x4.trans for sm_90 and sm_90a on {device}");
    }
}

#[test]
fn small_f16_round_trips() {
    for v in 0..2048u16 {
        assert_eq!(f32_of_f16(f16_of_small(v)), f32::from(v), "{v}");
    }
    assert_eq!(f16_of_small(1), 0x3C00);
}

#[test]
fn ldmatrix_fragment_layouts_match_the_hardware() {
    let Some(device) = device_or_skip() else {
        return;
    };
    for arch in ["sm_80", "sm_90a"] {
        for trans in [false, true] {
            check_ldmatrix(arch, trans);
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!("probed ldmatrix x4 and x4.trans for sm_80 and sm_90a on {device}");
    }
}
