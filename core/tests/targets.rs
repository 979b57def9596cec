//! The shipped target descriptions: they load and validate, and every
//! fragment layout they encode agrees with the per-lane formulas of the
//! hardware-facts notes. Each formula below is written out again here,
//! independently of the JSON, so a wrong layout in a description fails.

use tilec_core::layout::{FragmentLayout, LayoutError, SwizzleMode};
use tilec_core::target::{
    self, AsyncCopy, AtomLowering, Barrier, MatrixAtom, OperandRole, Status, TargetDescription,
    TargetError,
};

fn load(name: &str) -> TargetDescription {
    match target::builtin(name) {
        Ok(description) => description,
        Err(error) => panic!("builtin `{name}` does not load: {error}"),
    }
}

fn atom<'a>(description: &'a TargetDescription, name: &str) -> &'a MatrixAtom {
    description
        .matrix_atom(name)
        .unwrap_or_else(|| panic!("`{}` has no atom `{name}`", description.name))
}

fn fragment(atom: &MatrixAtom, role: OperandRole, n: u32) -> FragmentLayout {
    atom.fragment_for_n(role, n)
        .expect("fragment builds")
        .unwrap_or_else(|| panic!("atom `{}` has no {role:?} fragment", atom.name))
}

/// Checks that `fragment` maps every (thread, slot) to `formula(thread,
/// slot)` = (row, col), and that the fragment has the expected extents.
fn assert_formula(
    what: &str,
    fragment: &FragmentLayout,
    threads: u64,
    slots: u64,
    formula: impl Fn(u64, u64) -> (u64, u64),
) {
    assert_eq!(fragment.threads(), threads, "{what}: threads");
    assert_eq!(fragment.slots(), slots, "{what}: slots");
    for thread in 0..threads {
        for slot in 0..slots {
            let (row, col) = formula(thread, slot);
            let got = fragment
                .element(thread, slot)
                .expect("element inside the tile");
            assert_eq!(
                got,
                vec![row, col],
                "{what}: thread {thread} slot {slot} should hold ({row}, {col})"
            );
        }
    }
    fragment.check().unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn every_builtin_loads_and_validates() {
    let names = target::builtin_names();
    assert_eq!(names, vec!["sm_80", "sm_90a", "gfx942", "apple"]);
    for name in names {
        let description = load(name);
        assert_eq!(description.name, name);
        description.validate().expect("validates");
        assert!(!description.sources.is_empty(), "{name} names its sources");
        // Serialising and reading back gives the same description.
        let text = description.to_json().expect("serialises");
        let again = TargetDescription::from_json(&text).expect("reads back");
        assert_eq!(again, description, "{name} round-trips through JSON");
    }
}

#[test]
fn unknown_builtin_is_a_typed_error() {
    match target::builtin("sm_1000") {
        Err(TargetError::UnknownBuiltin { name, known }) => {
            assert_eq!(name, "sm_1000");
            assert!(known.contains("sm_90a"));
        }
        other => panic!("expected UnknownBuiltin, got {other:?}"),
    }
}

// ---- NVIDIA mma.sync m16n8k16 (hardware-facts §1.1) -------------------

#[test]
fn mma_m16n8k16_fragments_match_the_ptx_formulas() {
    for name in ["sm_80", "sm_90a"] {
        let description = load(name);
        let mma = atom(&description, "mma.m16n8k16");
        assert_eq!((mma.shape.m, mma.shape.n, mma.shape.k), (16, 8, 16));
        let g = |lane: u64| lane >> 2;
        let t = |lane: u64| lane & 3;
        // A 16×16: row = g + 8·((i>>1)&1), k = 2t + (i&1) + 8·(i>>2).
        assert_formula(
            &format!("{name} mma A"),
            &fragment(mma, OperandRole::A, 8),
            32,
            8,
            |lane, i| {
                (
                    g(lane) + 8 * ((i >> 1) & 1),
                    2 * t(lane) + (i & 1) + 8 * (i >> 2),
                )
            },
        );
        // B 16×8 (k, col): k = 2t + (i&1) + 8·(i>>1), col = g.
        assert_formula(
            &format!("{name} mma B"),
            &fragment(mma, OperandRole::B, 8),
            32,
            4,
            |lane, i| (2 * t(lane) + (i & 1) + 8 * (i >> 1), g(lane)),
        );
        // C 16×8: row = g + 8·(i>>1), col = 2t + (i&1).
        assert_formula(
            &format!("{name} mma C"),
            &fragment(mma, OperandRole::Accumulator, 8),
            32,
            4,
            |lane, i| (g(lane) + 8 * (i >> 1), 2 * t(lane) + (i & 1)),
        );
    }
}

#[test]
fn mma_a_fragment_inverse_matches_the_ptx_inverse() {
    // A[r][k]: lane = 4(r%8) + (k%8)/2, i = (k&1) + 2(r/8) + 4(k/8).
    let description = load("sm_80");
    let a = fragment(atom(&description, "mma.m16n8k16"), OperandRole::A, 8);
    for r in 0..16u64 {
        for k in 0..16u64 {
            let lane = 4 * (r % 8) + (k % 8) / 2;
            let i = (k & 1) + 2 * (r / 8) + 4 * (k / 8);
            assert_eq!(a.holders(&[r, k]).expect("holders"), vec![(lane, i)]);
        }
    }
}

// ---- ldmatrix (hardware-facts §1.2) ------------------------------------

#[test]
fn ldmatrix_fragments_match_the_ptx_description() {
    for name in ["sm_80", "sm_90a"] {
        let description = load(name);
        let load = description
            .matrix_loads
            .iter()
            .find(|l| l.name == "ldmatrix.m8n8.b16")
            .expect("ldmatrix described");
        assert_eq!(load.tile(), [8, 8]);
        // Without .trans lane L gets M[L/4][2(L%4)] and M[L/4][2(L%4)+1].
        let plain = load.fragment(false).expect("builds").expect("present");
        assert_formula("ldmatrix", &plain, 32, 2, |l, e| (l / 4, 2 * (l % 4) + e));
        // With .trans lane L gets M[2(L%4)][L/4] and M[2(L%4)+1][L/4].
        let trans = load.fragment(true).expect("builds").expect("present");
        assert_formula("ldmatrix.trans", &trans, 32, 2, |l, e| {
            (2 * (l % 4) + e, l / 4)
        });
    }
}

/// stmatrix (PTX ISA, "stmatrix"; sm_90 and later) stores the matrices
/// ldmatrix loads: lane L supplies M[L/4][2(L%4)+e] (M[2(L%4)+e][L/4] with
/// .trans). sm_80 has none.
#[test]
fn stmatrix_fragments_match_the_ptx_description() {
    assert!(load("sm_80").matrix_stores.is_empty());
    let description = load("sm_90a");
    let store = description
        .matrix_store("stmatrix.m8n8.b16")
        .expect("stmatrix described")
        .as_load();
    assert_eq!(store.tile(), [8, 8]);
    assert_eq!(store.from, "shared");
    let plain = store.fragment(false).expect("builds").expect("present");
    assert_formula("stmatrix", &plain, 32, 2, |l, e| (l / 4, 2 * (l % 4) + e));
    let trans = store.fragment(true).expect("builds").expect("present");
    assert_formula("stmatrix.trans", &trans, 32, 2, |l, e| {
        (2 * (l % 4) + e, l / 4)
    });
}

// ---- wgmma m64nNk16 (hardware-facts §1.3) ------------------------------

#[test]
fn wgmma_accumulator_matches_the_formula_for_every_n() {
    let description = load("sm_90a");
    let wgmma = atom(&description, "wgmma.m64nNk16");
    let all_n = wgmma.supported_n();
    assert_eq!(all_n, (1..=32).map(|i| 8 * i).collect::<Vec<u32>>());
    for n in all_n {
        // w = tid/32, g = (tid%32)>>2, t = tid&3;
        // row = 16w + g + 8·((i>>1)&1), col = 8·(i>>2) + 2t + (i&1).
        assert_formula(
            &format!("wgmma D n={n}"),
            &fragment(wgmma, OperandRole::Accumulator, n),
            128,
            u64::from(n / 2),
            |tid, i| {
                let (w, g, t) = (tid / 32, (tid % 32) >> 2, tid & 3);
                (
                    16 * w + g + 8 * ((i >> 1) & 1),
                    8 * (i >> 2) + 2 * t + (i & 1),
                )
            },
        );
    }
    // The inverse: D[r][c] → tid = 32(r/16) + 4(r%8) + (c%8)/2,
    // i = 4(c/8) + 2((r%16)/8) + (c&1), checked at N = 256 through the
    // fragment's inverse layout (element index → tid + 128·i).
    let d = fragment(wgmma, OperandRole::Accumulator, 256);
    let inverse = d.inverse().expect("a bijective fragment inverts");
    for r in 0..64u64 {
        for c in 0..256u64 {
            let tid = 32 * (r / 16) + 4 * (r % 8) + (c % 8) / 2;
            let i = 4 * (c / 8) + 2 * ((r % 16) / 8) + (c & 1);
            assert_eq!(
                inverse.at(r + 64 * c),
                Ok((tid + 128 * i) as i64),
                "D[{r}][{c}]"
            );
        }
    }
    assert_eq!(d.holders(&[63, 255]).expect("holders"), vec![(127, 127)]);
}

#[test]
fn wgmma_register_a_matches_the_formula() {
    let description = load("sm_90a");
    let wgmma = atom(&description, "wgmma.m64nNk16");
    // row = 16w + g + 8·((i>>1)&1), k = 2t + (i&1) + 8·(i>>2).
    assert_formula(
        "wgmma A",
        &fragment(wgmma, OperandRole::A, 64),
        128,
        8,
        |tid, i| {
            let (w, g, t) = (tid / 32, (tid % 32) >> 2, tid & 3);
            (
                16 * w + g + 8 * ((i >> 1) & 1),
                2 * t + (i & 1) + 8 * (i >> 2),
            )
        },
    );
    // B comes only from shared memory through a descriptor.
    assert!(wgmma.fragment(OperandRole::B).expect("builds").is_none());
    assert!(wgmma.descriptor.is_some());
}

// ---- MFMA (hardware-facts §2.1) ----------------------------------------

#[test]
fn mfma_32x32x8_matches_the_calculator() {
    let description = load("gfx942");
    assert_eq!(description.simt_width(), Some(64));
    let mfma = atom(&description, "mfma.32x32x8");
    // A[i][k]: lane = i + 32·(k/4), e = k%4  ⇔  lane l, e → (l%32, 4(l/32) + e).
    assert_formula(
        "mfma32 A",
        &fragment(mfma, OperandRole::A, 32),
        64,
        4,
        |l, e| (l % 32, 4 * (l / 32) + e),
    );
    // B[k][j]: lane = j + 32·(k/4), e = k%4  ⇔  (k, j) = (4(l/32) + e, l%32).
    assert_formula(
        "mfma32 B",
        &fragment(mfma, OperandRole::B, 32),
        64,
        4,
        |l, e| (4 * (l / 32) + e, l % 32),
    );
    // Lane l, VGPR v holds D[8(v/4) + 4(l/32) + v%4][l%32].
    assert_formula(
        "mfma32 D",
        &fragment(mfma, OperandRole::Accumulator, 32),
        64,
        16,
        |l, v| (8 * (v / 4) + 4 * (l / 32) + v % 4, l % 32),
    );
}

#[test]
fn mfma_16x16x16_matches_the_calculator() {
    let description = load("gfx942");
    let mfma = atom(&description, "mfma.16x16x16");
    // A[i][k]: lane = i + 16·(k/4), e = k%4.
    assert_formula(
        "mfma16 A",
        &fragment(mfma, OperandRole::A, 16),
        64,
        4,
        |l, e| (l % 16, 4 * (l / 16) + e),
    );
    // B[k][j]: lane = j + 16·(k/4), e = k%4.
    assert_formula(
        "mfma16 B",
        &fragment(mfma, OperandRole::B, 16),
        64,
        4,
        |l, e| (4 * (l / 16) + e, l % 16),
    );
    // Lane l, VGPR v holds D[4(l/16) + v][l%16].
    assert_formula(
        "mfma16 D",
        &fragment(mfma, OperandRole::Accumulator, 16),
        64,
        4,
        |l, v| (4 * (l / 16) + v, l % 16),
    );
}

// ---- Apple simdgroup_matrix (hardware-facts §3) ------------------------

#[test]
fn apple_simdgroup_map_matches_mlx_and_is_flagged() {
    let description = load("apple");
    let simd = atom(&description, "simdgroup_matrix.8x8x8");
    // row = 4·(l/16) + (l/2)%4, col = 4·((l/8)%2) + 2·(l%2) + e.
    for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
        assert_formula(
            &format!("apple {role:?}"),
            &fragment(simd, role, 8),
            32,
            2,
            |l, e| {
                (
                    4 * (l / 16) + (l / 2) % 4,
                    4 * ((l / 8) % 2) + 2 * (l % 2) + e,
                )
            },
        );
    }
    // The table of the notes, row 5: columns 0-1, 2-3, 4-5, 6-7 are lanes
    // 18, 19, 26, 27.
    let c = fragment(simd, OperandRole::Accumulator, 8);
    for (col, lane) in [(0, 18), (2, 19), (4, 26), (6, 27)] {
        assert_eq!(c.holders(&[5, col]).expect("holders"), vec![(lane, 0)]);
    }
    // Not a documented contract: vendor code, and passes go through memory.
    assert_eq!(simd.layout_provenance.status, Status::VendorCode);
    assert!(matches!(simd.lowering, AtomLowering::ThroughMemory { .. }));
}

#[test]
fn documented_layouts_keep_their_status_tags() {
    let sm80 = load("sm_80");
    let mma = atom(&sm80, "mma.m16n8k16");
    assert_eq!(mma.layout_provenance.status, Status::Documented);
    assert!(mma.layout_provenance.checked);
    assert_eq!(mma.lowering, AtomLowering::Fragments);
    let sm90 = load("sm_90a");
    let wgmma = atom(&sm90, "wgmma.m64nNk16");
    assert_eq!(wgmma.provenance.status, Status::Documented);
    assert_eq!(wgmma.layout_provenance.status, Status::VendorCode);
    let gfx = load("gfx942");
    assert_eq!(
        atom(&gfx, "mfma.32x32x8").layout_provenance.status,
        Status::VendorCode
    );
}

// ---- Memory, copies, barriers -----------------------------------------

#[test]
fn memory_numbers_follow_the_notes_or_stay_unset() {
    let shared = |name: &str| {
        load(name)
            .memory_of_kind(target::MemoryKind::Shared)
            .cloned()
            .expect("a shared space")
    };
    assert_eq!(shared("gfx942").capacity_bytes, Some(65536));
    let lds_banks = shared("gfx942").banks.expect("LDS banks");
    assert_eq!((lds_banks.count, lds_banks.width_bytes), (32, 4));
    let apple = shared("apple");
    assert_eq!(apple.capacity_bytes, Some(32 * 1024));
    assert_eq!(apple.allocation_granularity_bytes, Some(16));
    // Measured on an H200: 227 KiB per block with opt-in, 48 KiB without.
    let hopper = shared("sm_90a");
    assert_eq!(hopper.capacity_bytes, Some(232_448));
    assert_eq!(hopper.default_capacity_bytes, Some(49_152));
    // Not in the notes and not measured: a third-party figure (163 KiB
    // opt-in, 48 KiB default), tagged as such, no longer listed unknown.
    let ampere = load("sm_80");
    let ampere_shared = shared("sm_80");
    assert_eq!(ampere_shared.capacity_bytes, Some(166_912));
    assert_eq!(ampere_shared.default_capacity_bytes, Some(49_152));
    assert_eq!(ampere_shared.provenance.status, Status::ReverseEngineered);
    assert!(
        !ampere
            .unknowns
            .iter()
            .any(|u| u.field.contains("shared].capacity_bytes"))
    );
}

#[test]
fn async_copies_and_barriers() {
    let sm80 = load("sm_80");
    let cp_async = sm80
        .async_copies
        .iter()
        .find_map(|c| match c {
            AsyncCopy::PerThread(c) => Some(c),
            AsyncCopy::BulkTensor(_) => None,
        })
        .expect("cp.async");
    assert_eq!(cp_async.sizes_bytes, vec![4, 8, 16]);
    assert!(cp_async.commit_groups);
    assert!(
        !sm80
            .async_copies
            .iter()
            .any(|c| matches!(c, AsyncCopy::BulkTensor(_)))
    );
    match sm80.barrier("mbarrier") {
        Some(Barrier::Phased(b)) => assert!(b.transactions.is_none()),
        other => panic!("sm_80 mbarrier: {other:?}"),
    }

    let sm90 = load("sm_90a");
    let tma = sm90
        .async_copies
        .iter()
        .find_map(|c| match c {
            AsyncCopy::BulkTensor(c) => Some(c),
            AsyncCopy::PerThread(_) => None,
        })
        .expect("TMA");
    for mode in [SwizzleMode::B32, SwizzleMode::B64, SwizzleMode::B128] {
        assert!(tma.swizzle_modes.contains(&mode));
    }
    assert_eq!(tma.max_box_extent, 256);
    match sm90.barrier(&tma.completion_barrier) {
        Some(Barrier::Phased(b)) => {
            assert_eq!(
                b.transactions.as_ref().map(|t| t.max_pending_bytes),
                Some((1 << 20) - 1)
            );
        }
        other => panic!("TMA completion barrier: {other:?}"),
    }
    assert!(load("gfx942").async_copies.is_empty());
    assert!(load("apple").async_copies.is_empty());
}

// ---- Corrupted descriptions fail with clear errors ---------------------

fn corrupt(name: &str, from: &str, to: &str) -> Result<TargetDescription, TargetError> {
    let text = target::builtin_json(name).expect("builtin text");
    assert!(text.contains(from), "`{from}` occurs in {name}");
    TargetDescription::from_json(&text.replacen(from, to, 1))
}

#[test]
fn two_lanes_owning_one_element_fail_validation() {
    // Lane bit 0 no longer moves along k: lanes 0 and 1 hold the same
    // elements of A.
    let result = corrupt(
        "sm_80",
        "((4,8),(2,2,2)):((32,1),(16,8,128))",
        "((4,8),(2,2,2)):((64,1),(16,8,128))",
    );
    let error = result.expect_err("a double owner must be rejected");
    match &error {
        TargetError::Fragment { at, source, .. } => {
            assert!(at.contains("mma.m16n8k16") && at.ends_with(".a"), "{at}");
            assert!(
                matches!(
                    source,
                    LayoutError::FragmentOverlap { .. } | LayoutError::FragmentOutOfTile { .. }
                ),
                "{source:?}"
            );
        }
        other => panic!("expected a fragment error, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("sm_80") && message.contains("mma.m16n8k16"),
        "{message}"
    );

    // Two lanes swapped onto one element without leaving the tile: lane
    // bits t now step rows instead of columns of C, so (row, col) pairs
    // collide.
    let error = corrupt(
        "sm_80",
        "((4,8),(2,2)):((32,1),(16,8))",
        "((4,8),(2,2)):((1,1),(16,8))",
    )
    .expect_err("overlapping C must be rejected");
    match error {
        TargetError::Fragment {
            source:
                LayoutError::FragmentOverlap {
                    first_thread,
                    second_thread,
                    ..
                },
            ..
        } => assert_ne!(first_thread, second_thread),
        other => panic!("expected an overlap, got {other:?}"),
    }
}

#[test]
fn other_corruptions_fail_with_typed_errors() {
    // A fragment for the wrong number of threads.
    let error = corrupt(
        "gfx942",
        "((32,2),4):((1,128),32)",
        "((32,1),4):((1,128),32)",
    )
    .expect_err("32 lanes for a wave64 atom");
    assert!(
        matches!(
            error,
            TargetError::FragmentThreads {
                found: 32,
                expected: 64,
                ..
            }
        ),
        "{error:?}"
    );
    // A SIMT width that does not exist.
    let error = corrupt("apple", "\"width\": 32", "\"width\": 48").expect_err("width 48");
    assert!(
        matches!(error, TargetError::SimtWidth { width: 48, .. }),
        "{error:?}"
    );
    // A source id that is not listed.
    let error =
        corrupt("sm_90a", "\"h200-driver-query\"\n", "\"nowhere\"\n").expect_err("unknown source");
    assert!(
        matches!(
            error,
            TargetError::UnknownSource { ref source_id, .. } if source_id == "nowhere"
        ),
        "{error:?}"
    );
    // A misspelt field is a JSON error, not silently ignored.
    let error = corrupt("sm_80", "\"capacity_bytes\"", "\"capacity_byte\"").expect_err("typo");
    assert!(matches!(error, TargetError::Json { .. }), "{error:?}");
    // A zero capacity.
    let error = corrupt(
        "gfx942",
        "\"capacity_bytes\": 65536",
        "\"capacity_bytes\": 0",
    )
    .expect_err("zero");
    assert!(matches!(error, TargetError::Zero { .. }), "{error:?}");
    // Not JSON at all.
    assert!(matches!(
        TargetDescription::from_json("{"),
        Err(TargetError::Json { .. })
    ));
}

/// The smallest description a plugin can ship: no matrix atoms, no
/// shared memory, most limits unknown.
const MINIMAL: &str = r#"{
  "format_version": 1, "name": "t0", "arch": "t0", "vendor": "tests",
  "summary": "A test target.",
  "execution": {"kind": "simt", "width": 32,
                "provenance": {"status": "M", "checked": false, "sources": ["test"]}},
  "threads_per_block": {"max_per_block": 1024, "provenance": null},
  "registers": {"per_thread": null, "per_block": null, "reallocation": null, "provenance": null},
  "memory_spaces": [],
  "vector_widths": {"global_bytes": null, "shared_bytes": null, "provenance": null},
  "matrix_atoms": [], "barriers": [],
  "dtypes": ["float32", "int8"], "profiles": ["gemm.f16"],
  "sources": [{"id": "test", "title": "this test"}]
}"#;

#[test]
fn a_minimal_description_loads_with_its_claims() {
    let t = TargetDescription::from_json(MINIMAL).expect("the minimal description is valid");
    assert_eq!(t.dtypes, ["float32", "int8"]);
    assert_eq!(t.profiles, ["gemm.f16"]);
    let bad = MINIMAL.replace("\"int8\"", "\"int9\"");
    let err = TargetDescription::from_json(&bad).expect_err("int9 is no dtype");
    assert!(
        err.to_string()
            .contains("`int9` is not a TileLang dtype name"),
        "{err}"
    );
}

/// `sm_100a.json` is a description, not a builtin (the lowering has no
/// tcgen05 path): it loads and validates, keeps sm_90a's warp-level
/// atom with the same fragments, has no `wgmma` (sm_90a only), and claims
/// nothing as measured on the hardware.
#[test]
fn the_blackwell_description_loads_and_measures_nothing() {
    let text = include_str!("../targets/sm_100a.json");
    let sm100 = TargetDescription::from_json(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sm100.name, "sm_100a");
    assert!(!target::builtin_names().contains(&"sm_100a"));
    assert!(
        sm100
            .matrix_atoms
            .iter()
            .all(|a| !a.name.starts_with("wgmma"))
    );
    let sm90 = load("sm_90a");
    let (new, old) = (atom(&sm100, "mma.m16n8k16"), atom(&sm90, "mma.m16n8k16"));
    assert_eq!((&new.shape, &new.types), (&old.shape, &old.types));
    assert_eq!(
        (&new.a, &new.b, &new.accumulator),
        (&old.a, &old.b, &old.accumulator)
    );
    let json: serde_json::Value = serde_json::from_str(text).expect("json");
    let mut measured = Vec::new();
    fn visit(v: &serde_json::Value, measured: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if m.get("status").and_then(|s| s.as_str()) == Some("M") {
                    measured.push(v.to_string());
                }
                m.values().for_each(|x| visit(x, measured));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| visit(x, measured)),
            _ => {}
        }
    }
    visit(&json, &mut measured);
    assert!(
        measured.is_empty(),
        "claims measured on sm_100: {measured:?}"
    );
    assert!(
        sm100
            .unknowns
            .iter()
            .any(|u| u.field == "memory_spaces[tmem]")
    );
}
