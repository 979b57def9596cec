//! The deterministic random generator behind `tilec run`'s inputs.
//!
//! SplitMix64 (Steele, Lea and Flood, 2014) gives 64-bit words; normal
//! values come from the Box–Muller transform. Both are tiny, fast enough for
//! the interpreter's sizes and, unlike a library generator, fixed forever:
//! the same `--seed` gives bit-identical inputs in every tilec version, so a
//! dumped failing case can be reproduced from its manifest.
//!
//! Each parameter draws from its own stream ([`SplitMix64::for_param`]), so
//! changing one parameter's shape does not change the others' values.

/// The SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// The increment of SplitMix64 (2^64 / golden ratio, odd).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The stream for parameter `index` of a run seeded with `seed`.
    pub fn for_param(seed: u64, index: usize) -> Self {
        // Mixing the seed through one SplitMix64 step first makes streams of
        // nearby seeds and indices unrelated.
        let mixed = SplitMix64::new(seed).next_u64();
        SplitMix64::new(mixed ^ (index as u64).wrapping_add(1).wrapping_mul(GOLDEN_GAMMA))
    }

    /// This generator after `n` more draws, without drawing them (the state
    /// advances by a constant per draw).
    pub fn skipped(&self, n: u64) -> SplitMix64 {
        SplitMix64 {
            state: self.state.wrapping_add(n.wrapping_mul(GOLDEN_GAMMA)),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `low ..= high` (`low <= high`).
    pub fn int_in(&mut self, low: i64, high: i64) -> i64 {
        let span = (high as i128 - low as i128 + 1) as u128;
        // Lemire's multiply-shift: maps 64 random bits onto `span` values
        // with a bias below 2^-58 for the small spans used here.
        let offset = (u128::from(self.next_u64()) * span) >> 64;
        (low as i128 + offset as i128) as i64
    }
}

/// Standard normal values, N(0, 1), by the Box–Muller transform.
#[derive(Debug, Clone)]
pub struct Normal {
    rng: SplitMix64,
    spare: Option<f64>,
}

impl Normal {
    pub fn new(rng: SplitMix64) -> Self {
        Normal { rng, spare: None }
    }

    pub fn sample(&mut self) -> f64 {
        if let Some(value) = self.spare.take() {
            return value;
        }
        // 1 - u lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.rng.next_f64();
        let u2 = self.rng.next_f64();
        let radius = (-2.0 * u1.ln()).sqrt();
        let angle = std::f64::consts::TAU * u2;
        self.spare = Some(radius * angle.sin());
        radius * angle.cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipping_equals_drawing() {
        let start = SplitMix64::for_param(7, 2);
        let mut drawn = start.clone();
        for n in 0..100u64 {
            assert_eq!(start.skipped(n).next_u64(), drawn.next_u64(), "{n}");
        }
    }

    #[test]
    fn splitmix_matches_the_published_sequence() {
        // First outputs of SplitMix64 seeded with 0 (reference C code).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn same_seed_same_values() {
        let draw = |seed, index| {
            let mut normal = Normal::new(SplitMix64::for_param(seed, index));
            (0..100).map(|_| normal.sample()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 2), draw(7, 2));
        assert_ne!(draw(7, 2), draw(8, 2));
        assert_ne!(draw(7, 2), draw(7, 3));
    }

    #[test]
    fn normal_has_unit_moments() {
        let mut normal = Normal::new(SplitMix64::new(42));
        let n = 200_000;
        let values: Vec<f64> = (0..n).map(|_| normal.sample()).collect();
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.01, "variance {var}");
        assert!(values.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn integers_stay_in_range_and_cover_it() {
        let mut rng = SplitMix64::new(3);
        let mut seen = [false; 17];
        for _ in 0..10_000 {
            let v = rng.int_in(-8, 8);
            assert!((-8..=8).contains(&v));
            seen[(v + 8) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        for _ in 0..1000 {
            let u = rng.next_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
