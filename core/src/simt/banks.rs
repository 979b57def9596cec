//! Shared-memory bank passes: how many times the banks must be cycled to
//! serve one warp-wide access, from the target description's bank facts.
//!
//! The model (`memory_spaces[].banks` of the shared space): memory is
//! interleaved over `count` banks of `width_bytes`; one pass serves at
//! most one word of each bank, and lanes reading the same word share it
//! (a broadcast). An access of `b` bytes per lane is split into phases of
//! `lanes_per_phase` consecutive lanes when the description lists a phase
//! rule for `b` bytes (16-byte accesses in phases of 8 lanes on the
//! shipped targets), and conflicts only count inside a phase. A phase
//! needs as many passes as the largest number of distinct words any one
//! bank holds among its lanes' bytes; an ideal access needs one per phase
//! with an active lane.
//!
//! Addresses are taken relative to the buffer's start: buffers start on
//! 16-byte boundaries, and moving every lane's address by the same amount
//! only renames the banks, so the counts do not depend on where the
//! buffer sits.

use crate::target::{Banks, MemoryKind, TargetDescription};

/// One lane's part of a warp-wide access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LaneAccess {
    /// The thread's index in the block.
    pub thread: usize,
    /// First byte, relative to the buffer's start.
    pub byte: u64,
    pub bytes: u32,
}

/// `(passes, ideal passes)` of one statement's shared accesses over the
/// block (`accesses` from every active thread, in thread order), warp by
/// warp; `(0, 0)` when the target describes no banks. This runs for every
/// shared access the interpreter executes, so it works on sorted runs and
/// two reused buffers rather than maps.
pub(super) fn passes(target: &TargetDescription, simt: u32, accesses: &[LaneAccess]) -> (u64, u64) {
    let Some(banks) = target
        .memory_of_kind(MemoryKind::Shared)
        .and_then(|m| m.banks.as_ref())
    else {
        return (0, 0);
    };
    if banks.count == 0 || banks.width_bytes == 0 || accesses.is_empty() {
        return (0, 0);
    }
    let simt = simt.max(1) as usize;
    let key = |a: &LaneAccess| {
        let lane = a.thread % simt;
        (
            a.thread / simt,
            lane / lanes_per_phase(banks, a.bytes, simt),
        )
    };
    let mut sorted;
    let accesses = if accesses.is_sorted_by_key(key) {
        accesses
    } else {
        sorted = accesses.to_vec();
        sorted.sort_by_key(key);
        &sorted[..]
    };
    let mut words = Vec::new();
    let mut per_bank = vec![0u64; banks.count as usize];
    let (mut total, mut groups) = (0, 0);
    for group in accesses.chunk_by(|a, b| key(a) == key(b)) {
        total += phase_passes(banks, group, &mut words, &mut per_bank);
        groups += 1;
    }
    (total, groups)
}

/// Lanes served together for accesses of `bytes` per lane.
fn lanes_per_phase(banks: &Banks, bytes: u32, simt: usize) -> usize {
    banks
        .phases
        .iter()
        .find(|p| p.access_bytes == bytes)
        .map_or(simt, |p| (p.lanes_per_phase as usize).max(1))
}

/// Passes one phase needs: the most distinct words in any bank. `words`
/// and `per_bank` are scratch space (`per_bank` all zero on entry and
/// left so).
fn phase_passes(
    banks: &Banks,
    lanes: &[LaneAccess],
    words: &mut Vec<u64>,
    per_bank: &mut [u64],
) -> u64 {
    let width = u64::from(banks.width_bytes);
    let count = u64::from(banks.count);
    words.clear();
    for a in lanes {
        let first = a.byte / width;
        let last = (a.byte + u64::from(a.bytes.max(1)) - 1) / width;
        words.extend(first..=last);
    }
    words.sort_unstable();
    words.dedup();
    let mut most = 0;
    for &w in words.iter() {
        let slot = &mut per_bank[(w % count) as usize];
        *slot += 1;
        most = most.max(*slot);
    }
    for &w in words.iter() {
        per_bank[(w % count) as usize] = 0;
    }
    most
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn banks(phases: &[(u32, u32)]) -> Banks {
        Banks {
            count: 32,
            width_bytes: 4,
            phases: phases
                .iter()
                .map(
                    |&(access_bytes, lanes_per_phase)| crate::target::BankPhase {
                        access_bytes,
                        lanes_per_phase,
                    },
                )
                .collect(),
            provenance: crate::target::Provenance {
                status: crate::target::Status::Documented,
                checked: false,
                sources: vec!["x".into()],
                note: None,
            },
        }
    }

    fn warp(byte: impl Fn(usize) -> u64, bytes: u32) -> Vec<LaneAccess> {
        (0..32)
            .map(|thread| LaneAccess {
                thread,
                byte: byte(thread),
                bytes,
            })
            .collect()
    }

    fn count(b: &Banks, accesses: &[LaneAccess]) -> u64 {
        let mut groups: HashMap<usize, Vec<LaneAccess>> = HashMap::new();
        for a in accesses {
            groups
                .entry(a.thread / lanes_per_phase(b, a.bytes, 32))
                .or_default()
                .push(*a);
        }
        let mut per_bank = vec![0; b.count as usize];
        groups
            .values()
            .map(|l| phase_passes(b, l, &mut Vec::new(), &mut per_bank))
            .sum()
    }

    #[test]
    fn strides_conflict_as_the_banks_say() {
        let b = banks(&[(16, 8)]);
        // Consecutive words: one pass.
        assert_eq!(count(&b, &warp(|t| 4 * t as u64, 4)), 1);
        // The same word for every lane: a broadcast, one pass.
        assert_eq!(count(&b, &warp(|_| 0, 4)), 1);
        // A stride of two words: two lanes per bank.
        assert_eq!(count(&b, &warp(|t| 8 * t as u64, 4)), 2);
        // Rows of 64 bytes, lanes (row t/4, word t%4): rows r and r+2
        // share banks, 4 passes; with an 80-byte pitch, 1.
        assert_eq!(
            count(&b, &warp(|t| (t / 4) as u64 * 64 + 4 * (t % 4) as u64, 4)),
            4
        );
        assert_eq!(
            count(&b, &warp(|t| (t / 4) as u64 * 80 + 4 * (t % 4) as u64, 4)),
            1
        );
        // 16-byte accesses, consecutive: 4 phases of 8 lanes, one pass each.
        assert_eq!(count(&b, &warp(|t| 16 * t as u64, 16)), 4);
        // 16-byte accesses 256 bytes apart: 8 lanes of a phase in one bank group.
        assert_eq!(count(&b, &warp(|t| 256 * t as u64, 16)), 32);
    }
}
