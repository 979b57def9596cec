//! The layout algebra: evaluation, composition, inversion, reshaping,
//! swizzles, fragments and the text form, as unit tests and properties.

use proptest::prelude::*;
use tilec_core::layout::{
    FragmentLayout, IntTuple, Layout, LayoutError, RepeatAlong, Swizzle, SwizzleMode,
    SwizzledLayout,
};

fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("`{text}`: {e}"))
}

// ---- Unit tests ----------------------------------------------------------

#[test]
fn evaluation_counts_the_first_leaf_fastest() {
    let l = layout("(4,8):(8,1)");
    assert_eq!(l.size(), 32);
    assert_eq!(l.cosize(), 32);
    // Index 5 = digits (1, 1).
    assert_eq!(l.at(5), Ok(9));
    assert_eq!(l.at_coords(&[3, 7]), Ok(31));
    assert_eq!(
        l.at(32),
        Err(LayoutError::OutOfDomain {
            index: 32,
            size: 32
        })
    );
    let nested = layout("((2,2),3):((1,6),2)");
    assert_eq!(nested.rank(), 2);
    // Mode 0 index 3 = digits (1,1) → 1 + 6; mode 1 index 2 → 4.
    assert_eq!(nested.at_coords(&[3, 2]), Ok(11));
    assert_eq!(
        nested.values().expect("small"),
        vec![0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    );
}

#[test]
fn constructors() {
    assert_eq!(
        Layout::col_major(&[4, 8]).expect("ok"),
        layout("(4,8):(1,4)")
    );
    assert_eq!(
        Layout::row_major(&[4, 8]).expect("ok"),
        layout("(4,8):(8,1)")
    );
    // A 64×32 tile padded by 8 elements per row.
    let padded = Layout::padded_row_major(&[64, 32], &[0, 8]).expect("ok");
    assert_eq!(padded, layout("(64,32):(40,1)"));
    assert!(padded.is_injective().expect("small"));
    assert!(!padded.is_bijective().expect("small"));
    assert_eq!(padded.cosize(), 63 * 40 + 32);
}

#[test]
fn bad_layouts_are_errors() {
    assert!(matches!(
        "(4,8):(1)".parse::<Layout>(),
        Err(LayoutError::Parse { .. })
    ));
    assert!(matches!(
        "(4,0):(1,4)".parse::<Layout>(),
        Err(LayoutError::Parse { .. })
    ));
    assert!(matches!(
        "(4,8):(1,4) x".parse::<Layout>(),
        Err(LayoutError::Parse { .. })
    ));
    assert!(matches!(
        Layout::new(IntTuple::Int(4), IntTuple::Tuple(vec![IntTuple::Int(1)])),
        Err(LayoutError::NotCongruent { .. })
    ));
    assert!(matches!(
        Layout::from_modes(&[(1 << 40, 1 << 40)]),
        Err(LayoutError::Overflow)
    ));
    // Deep nesting is refused rather than recursed into.
    let deep = format!("{}1{}:1", "(".repeat(100), ")".repeat(100));
    assert!(deep.parse::<Layout>().is_err());
}

#[test]
fn injectivity_and_collisions() {
    assert!(layout("(4,8):(1,4)").is_bijective().expect("small"));
    let broadcast = layout("(4,8):(0,1)");
    assert!(!broadcast.is_injective().expect("small"));
    assert_eq!(broadcast.first_collision().expect("small"), Some((0, 1)));
    // Injective without being compact.
    let spread = layout("(2,2):(2,3)");
    assert!(spread.is_injective().expect("small"));
    assert!(!spread.is_bijective().expect("small"));
}

#[test]
fn inverse_of_a_permutation() {
    let transpose = layout("(4,8):(8,1)");
    let inverse = transpose.inverse().expect("bijective");
    for i in 0..32 {
        let value = transpose.at(i).expect("in domain");
        assert_eq!(inverse.at(value as u64), Ok(i as i64));
    }
    assert!(matches!(
        layout("(4,8):(1,8)").inverse(),
        Err(LayoutError::NotBijective { .. })
    ));
}

#[test]
fn composition_examples() {
    // Column-major 4×8 read through a row-major reading order.
    let a = layout("(4,8):(1,4)");
    let b = layout("(8,4):(4,1)");
    let c = a.compose(&b).expect("composes");
    assert_eq!(c, layout("(8,4):(4,1)"));
    // Taking every other element of a 2-D layout.
    let d = layout("(4,8):(8,1)")
        .compose(&layout("16:2"))
        .expect("composes");
    for i in 0..16 {
        assert_eq!(d.at(i), layout("(4,8):(8,1)").at(2 * i));
    }
    // A stride that splits no extent has no affine composition.
    assert!(matches!(
        layout("(6,4):(1,10)").compose(&layout("4:4")),
        Err(LayoutError::NotComposable { .. })
    ));
}

#[test]
fn composition_refuses_inner_modes_that_carry() {
    // Found by the property test below: the inner modes 2:1, 4:1 and 2:1
    // add up across the outer layout's first digit, so no affine layout
    // equals the composition.
    let outer = layout("(2,2):(0,8)");
    let inner = layout("(2,4,2):(1,1,1)");
    assert!(matches!(
        outer.compose(&inner),
        Err(LayoutError::NotComposable { .. })
    ));
    // Splitting one outer mode between two inner modes without carries is
    // fine.
    let split = layout("8:3")
        .compose(&layout("(2,4):(1,2)"))
        .expect("composes");
    assert_eq!(
        split.values().expect("small"),
        vec![0, 3, 6, 9, 12, 15, 18, 21]
    );
}

#[test]
fn reshape_keeps_the_map() {
    let l = layout("(4,8):(8,1)");
    let r = l
        .reshape(&"(2,2,8)".parse().expect("tuple"))
        .expect("reshapes");
    assert_eq!(r.rank(), 3);
    for i in 0..32 {
        assert_eq!(r.at(i), l.at(i));
    }
    assert!(matches!(
        l.reshape(&IntTuple::Int(30)),
        Err(LayoutError::SizeMismatch { .. })
    ));
}

#[test]
fn swizzle_modes_follow_the_byte_formula() {
    // addr' = addr ^ (((addr >> 7) & (2^B - 1)) << 4) with B = 1, 2, 3.
    for (mode, bits, pattern) in [
        (SwizzleMode::B32, 1u64, 256u64),
        (SwizzleMode::B64, 2, 512),
        (SwizzleMode::B128, 3, 1024),
    ] {
        let swizzle = mode.byte_swizzle();
        assert_eq!(swizzle.span(), pattern);
        assert_eq!(mode.pattern_bytes(), pattern);
        for addr in 0..4096i64 {
            let expected = addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4);
            assert_eq!(swizzle.apply(addr), Ok(expected), "{mode:?} at {addr}");
        }
    }
    assert_eq!(SwizzleMode::B128.byte_swizzle().to_string(), "sw<3,4,3>");
    // For 2-byte elements the same permutation acts on element offsets.
    let elements = SwizzleMode::B128.element_swizzle(2).expect("f16");
    assert_eq!(elements.to_string(), "sw<3,3,3>");
    for offset in 0..2048i64 {
        let bytes = SwizzleMode::B128
            .byte_swizzle()
            .apply(2 * offset)
            .expect("ok");
        assert_eq!(elements.apply(offset), Ok(bytes / 2));
    }
    assert!(matches!(
        SwizzleMode::B64.element_swizzle(3),
        Err(LayoutError::BadElementSize { bytes: 3 })
    ));
    assert!(matches!(
        Swizzle::new(3, 4, 2),
        Err(LayoutError::BadSwizzle { .. })
    ));
}

#[test]
fn swizzled_tile_is_a_bijection() {
    // A 128B-swizzled K-major f16 atom: 8 rows of 64 elements.
    let tile = SwizzledLayout::new(
        SwizzleMode::B128.element_swizzle(2).expect("ok"),
        Layout::row_major(&[8, 64]).expect("ok"),
    );
    assert!(tile.is_injective().expect("small"));
    let text = tile.to_string();
    assert_eq!(text, "sw<3,3,3> o (8,64):(64,1)");
    assert_eq!(text.parse::<SwizzledLayout>(), Ok(tile.clone()));
    // Row r's chunk c (8 elements) lands in chunk c ^ r.
    for r in 0..8u64 {
        for c in 0..8u64 {
            let offset = tile.at(r + 8 * (8 * c)).expect("in domain");
            assert_eq!(offset, (r * 64 + 8 * (c ^ r)) as i64, "row {r} chunk {c}");
        }
    }
}

#[test]
fn fragments_check_ownership() {
    let c: FragmentLayout = "[16,8] ((4,8),(2,2)):((32,1),(16,8))"
        .parse()
        .expect("parses");
    c.check().expect("each element once");
    assert_eq!((c.threads(), c.slots()), (32, 4));
    assert_eq!(c.element(5, 3), Ok(vec![9, 3]));
    // Replication: 32 lanes hold a 16-element vector twice over.
    let replicated: FragmentLayout = "[16] rep 2 ((16,2),1):((1,0),0)".parse().expect("parses");
    replicated.check().expect("twice each");
    assert_eq!(replicated.to_string(), "[16] rep 2 ((16,2),1):((1,0),0)");
    assert_eq!(replicated.holders(&[3]), Ok(vec![(3, 0), (19, 0)]));
    let undeclared: FragmentLayout = "[16] ((16,2),1):((1,0),0)".parse().expect("parses");
    assert!(matches!(
        undeclared.check(),
        Err(LayoutError::FragmentOverlap { .. })
    ));
    let short: FragmentLayout = "[16,8] ((4,8),(2,2)):((32,1),(16,16))"
        .parse()
        .expect("parses");
    assert!(matches!(
        short.check(),
        Err(LayoutError::FragmentOutOfTile { .. } | LayoutError::FragmentOverlap { .. })
    ));
    let gap: FragmentLayout = "[16,8] ((4,8),2):((32,1),16)".parse().expect("parses");
    assert!(matches!(
        gap.check(),
        Err(LayoutError::FragmentUncovered { found: 0, .. })
    ));
}

#[test]
fn repeating_a_warp_fragment_across_warps() {
    // The mma.m16n8 accumulator repeated over four warps along M is the
    // wgmma m64n8 accumulator; repeated in slots along N it widens to n16.
    let c: FragmentLayout = "[16,8] ((4,8),(2,2)):((32,1),(16,8))"
        .parse()
        .expect("parses");
    let warps = c.repeat(0, 4, RepeatAlong::Threads).expect("repeats");
    let wgmma: FragmentLayout = "[64,8] ((4,8,4),(2,2)):((128,1,16),(64,8))"
        .parse()
        .expect("parses");
    assert_eq!(warps.tile(), wgmma.tile());
    for thread in 0..128 {
        for slot in 0..4 {
            assert_eq!(warps.element(thread, slot), wgmma.element(thread, slot));
        }
    }
    warps.check().expect("owned once");
    let wide = c.repeat(1, 2, RepeatAlong::Slots).expect("repeats");
    assert_eq!(
        (wide.threads(), wide.slots(), wide.tile()),
        (32, 8, &[16u64, 16][..])
    );
    wide.check().expect("owned once");
    assert_eq!(wide.element(0, 4), Ok(vec![0, 8]));
    assert!(matches!(
        c.repeat(2, 2, RepeatAlong::Slots),
        Err(LayoutError::NoSuchDim { .. })
    ));
}

// ---- Properties ------------------------------------------------------------

/// A small layout with power-of-two extents and strides, nested at random.
fn small_layout() -> impl Strategy<Value = Layout> {
    let leaf = (
        prop::sample::select(vec![1u64, 2, 4]),
        prop::sample::select(vec![0i64, 1, 2, 4, 8, 16]),
    );
    prop::collection::vec(leaf, 1..4)
        .prop_flat_map(|modes| {
            let count = modes.len();
            (Just(modes), prop::bool::weighted(0.5), 0..count)
        })
        .prop_map(|(modes, nest, split)| {
            let shape: Vec<IntTuple> = modes
                .iter()
                .map(|&(e, _)| IntTuple::Int(e as i64))
                .collect();
            let stride: Vec<IntTuple> = modes.iter().map(|&(_, s)| IntTuple::Int(s)).collect();
            let group = |items: Vec<IntTuple>| -> IntTuple {
                if nest && split > 0 && items.len() > 1 {
                    let rest = items[split..].to_vec();
                    let mut out = vec![IntTuple::Tuple(items[..split].to_vec())];
                    out.extend(rest);
                    if out.len() == 1 {
                        out.remove(0)
                    } else {
                        IntTuple::Tuple(out)
                    }
                } else if items.len() == 1 {
                    items[0].clone()
                } else {
                    IntTuple::Tuple(items)
                }
            };
            Layout::new(group(shape), group(stride)).expect("small layouts are valid")
        })
}

/// Compact strides for `extents` taken in the order `order`.
fn shuffled_compact(extents: &[u64], order: &[usize]) -> Layout {
    let mut strides = vec![0i64; extents.len()];
    let mut step = 1i64;
    for &i in order {
        strides[i] = step;
        step *= extents[i] as i64;
    }
    let modes: Vec<(u64, i64)> = extents.iter().copied().zip(strides).collect();
    Layout::from_modes(&modes).expect("valid")
}

/// A random permutation layout: a compact layout with its modes shuffled.
fn permutation_layout() -> impl Strategy<Value = Layout> {
    prop::collection::vec(prop::sample::select(vec![1u64, 2, 3, 4, 5]), 1..5)
        .prop_flat_map(|extents| {
            let n = extents.len();
            (
                Just(extents),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(extents, order)| shuffled_compact(&extents, &order))
}

/// Two permutation layouts of the same domain (the same extents, shuffled
/// strides; the second also reorders its modes).
fn permutation_pair() -> impl Strategy<Value = (Layout, Layout)> {
    prop::collection::vec(prop::sample::select(vec![1u64, 2, 4, 8]), 1..5)
        .prop_flat_map(|extents| {
            let n = extents.len();
            let order = Just((0..n).collect::<Vec<usize>>());
            (
                Just(extents),
                order.clone().prop_shuffle(),
                order.clone().prop_shuffle(),
                order.prop_shuffle(),
            )
        })
        .prop_map(|(extents, first, second, reorder)| {
            let b_extents: Vec<u64> = reorder.iter().map(|&i| extents[i]).collect();
            (
                shuffled_compact(&extents, &first),
                shuffled_compact(&b_extents, &second),
            )
        })
}

fn in_domain(outer: &Layout, value: i64) -> bool {
    value >= 0 && (value as u64) < outer.size()
}

proptest! {
    #[test]
    fn inverse_undoes_a_bijection(l in permutation_layout()) {
        prop_assert!(l.is_bijective().expect("small"));
        let inverse = l.inverse().expect("bijective layouts invert");
        for i in 0..l.size() {
            let value = l.at(i).expect("in domain");
            prop_assert_eq!(inverse.at(value as u64), Ok(i as i64));
            // And the other way round.
            prop_assert_eq!(l.at(inverse.at(i).expect("in domain") as u64), Ok(i as i64));
        }
    }

    #[test]
    fn composition_is_function_composition(a in small_layout(), b in small_layout()) {
        if let Ok(c) = a.compose(&b) {
            prop_assert_eq!(c.size(), b.size());
            for i in 0..b.size() {
                let inner = b.at(i).expect("in domain");
                if in_domain(&a, inner) {
                    prop_assert_eq!(c.at(i), a.at(inner as u64), "at {}", i);
                }
            }
        }
    }

    #[test]
    fn composition_is_associative(a in small_layout(), b in small_layout(), c in small_layout()) {
        let left = a.compose(&b).and_then(|ab| ab.compose(&c));
        let right = b.compose(&c).and_then(|bc| a.compose(&bc));
        if let (Ok(left), Ok(right)) = (left, right) {
            for i in 0..c.size() {
                let ci = c.at(i).expect("in domain");
                // Compare where every intermediate stays inside its domain.
                if in_domain(&b, ci) && in_domain(&a, b.at(ci as u64).expect("in domain")) {
                    prop_assert_eq!(left.at(i), right.at(i), "at {}", i);
                }
            }
        }
    }

    #[test]
    fn composed_permutations_are_bijections((a, b) in permutation_pair()) {
        // Two permutations of one domain compose (when the shapes divide)
        // into a permutation that agrees with the pointwise composition.
        prop_assert_eq!(a.size(), b.size());
        if let Ok(c) = a.compose(&b) {
            prop_assert!(c.is_bijective().expect("small"));
            for i in 0..b.size() {
                prop_assert_eq!(c.at(i), a.at(b.at(i).expect("in domain") as u64));
            }
        }
    }

    #[test]
    fn swizzles_permute_their_span(bits in 0u32..4, base in 0u32..5, extra in 0u32..3, negative in any::<bool>()) {
        let magnitude = (bits + extra) as i32;
        let shift = if negative { -magnitude } else { magnitude };
        let swizzle = Swizzle::new(bits, base, shift).expect("valid parameters");
        let span = swizzle.span();
        let mut seen = vec![false; span as usize];
        for block in 0..2u64 {
            for offset in 0..span {
                let value = swizzle.apply((block * span + offset) as i64).expect("non-negative") as u64;
                // Stays in its own aligned block ...
                prop_assert_eq!(value / span, block);
                if block == 0 {
                    // ... and hits every offset of it once.
                    prop_assert!(!seen[value as usize]);
                    seen[value as usize] = true;
                }
                // The swizzle is its own inverse.
                prop_assert_eq!(swizzle.inverse().apply(value as i64), Ok((block * span + offset) as i64));
            }
        }
    }

    #[test]
    fn printed_layouts_parse_back(l in small_layout()) {
        let text = l.to_string();
        prop_assert_eq!(text.parse::<Layout>(), Ok(l.clone()));
        // Through serde (the JSON form target descriptions use) as well.
        let json = serde_json::to_string(&l).expect("serialises");
        prop_assert_eq!(serde_json::from_str::<Layout>(&json).expect("reads back"), l);
    }

    #[test]
    fn printed_fragments_parse_back(l in small_layout(), rows in 1u64..5, rep in 1u64..3) {
        let map = Layout::concat(&[l.clone(), l]).expect("rank 2");
        let fragment = FragmentLayout::new(vec![rows, 3], map, rep).expect("valid");
        prop_assert_eq!(fragment.to_string().parse::<FragmentLayout>(), Ok(fragment));
    }

    #[test]
    fn parsing_never_panics(text in "[-()0-9,:<>swo \\[\\]rep]{0,40}") {
        let _ = text.parse::<Layout>();
        let _ = text.parse::<FragmentLayout>();
        let _ = text.parse::<SwizzledLayout>();
    }
}
