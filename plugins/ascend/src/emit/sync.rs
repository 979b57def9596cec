//! Which unit touched which buffer last, and the orderings the next access
//! after it needs.
//!
//! A unit is a pipe of one core. Kernels that use only the cube or only
//! the vector unit run on one core and every unit is on [`Side::Aic`] (the
//! emitter's single core). Mixed kernels (a `T.gemm` whose operands or
//! accumulator the vector unit also touches) run on an AIC and its AIVs:
//! an ordering between two units of one core is a `SetFlag`/`WaitFlag`
//! pair, an ordering between the cores a `CrossCoreSetFlag` from the
//! source pipe and a `CrossCoreWaitFlag` on the other core, which holds
//! back everything that core issues after it.

use std::collections::{BTreeMap, BTreeSet};

/// The pipes of an AI core, with their AscendC and description names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pipe {
    S,
    V,
    M,
    Mte1,
    Mte2,
    Mte3,
    Fix,
}

impl Pipe {
    /// The unit's name in the target description and in `HardEvent`.
    pub fn name(self) -> &'static str {
        match self {
            Pipe::S => "S",
            Pipe::V => "V",
            Pipe::M => "M",
            Pipe::Mte1 => "MTE1",
            Pipe::Mte2 => "MTE2",
            Pipe::Mte3 => "MTE3",
            Pipe::Fix => "FIX",
        }
    }
}

/// The core of an AI core group a unit belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The cube core (S, MTE1, MTE2, M, FIX); also the one core of a
    /// kernel that is not mixed.
    Aic,
    /// The vector core (S, V, MTE2, MTE3).
    Aiv,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Aic => Side::Aiv,
            Side::Aiv => Side::Aic,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Aic => "AIC",
            Side::Aiv => "AIV",
        }
    }

    /// The pipes of this core in a mixed kernel (A2's split cores).
    pub fn pipes(self) -> &'static [Pipe] {
        match self {
            Side::Aic => &[Pipe::S, Pipe::Mte1, Pipe::Mte2, Pipe::M, Pipe::Fix],
            Side::Aiv => &[Pipe::S, Pipe::V, Pipe::Mte2, Pipe::Mte3],
        }
    }
}

/// A pipe of one core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unit {
    pub side: Side,
    pub pipe: Pipe,
}

impl Unit {
    pub fn new(side: Side, pipe: Pipe) -> Unit {
        Unit { side, pipe }
    }
}

/// Per buffer (by its C++ name): the unit of the last write with the units
/// already ordered after it, and the units that read it since with, for
/// each, the units already ordered after that read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tracker {
    /// Possible last writers: more than one after a write that may not
    /// have happened (a copy under a run-time condition) or after the
    /// branches of an `if` join.
    writer: BTreeMap<String, Vec<(Unit, BTreeSet<Unit>)>>,
    readers: BTreeMap<String, BTreeMap<Unit, BTreeSet<Unit>>>,
}

impl Tracker {
    /// Everything synchronised (after `PipeBarrier<PIPE_ALL>` on the one
    /// core of a kernel that is not mixed).
    pub fn clear(&mut self) {
        self.writer.clear();
        self.readers.clear();
    }

    /// The (source, destination) orderings `unit` needs before reading
    /// `reads` and writing `writes`. The caller orders them (and reports
    /// each with [`Tracker::synced`] or [`Tracker::synced_cross`]) before
    /// [`Tracker::record`].
    pub fn needs(&self, unit: Unit, reads: &[String], writes: &[String]) -> Vec<(Unit, Unit)> {
        let mut need = BTreeSet::new();
        for b in reads.iter().chain(writes) {
            for (w, seen) in self.writer.get(b).into_iter().flatten() {
                if *w != unit && !seen.contains(&unit) {
                    need.insert((*w, unit));
                }
            }
        }
        for b in writes {
            if let Some(rs) = self.readers.get(b) {
                for (r, seen) in rs {
                    if *r != unit && !seen.contains(&unit) {
                        need.insert((*r, unit));
                    }
                }
            }
        }
        need.into_iter().collect()
    }

    /// A flag from `src` to `dst` was waited for: everything `src` did so
    /// far is visible to `dst`.
    pub fn synced(&mut self, src: Unit, dst: Unit) {
        self.each_entry(|u, seen| {
            if u == src {
                seen.insert(dst);
            }
        });
    }

    /// A cross-core flag from `src` was waited for on `dst`: the wait
    /// holds back every pipe of that core.
    pub fn synced_cross(&mut self, src: Unit, dst: Side) {
        for &p in dst.pipes() {
            self.synced(src, Unit::new(dst, p));
        }
    }

    /// `PipeBarrier<PIPE_ALL>` on core `side`: its own accesses are
    /// visible to all of its pipes; the other core learns nothing.
    pub fn synced_within(&mut self, side: Side) {
        self.each_entry(|u, seen| {
            if u.side == side {
                seen.extend(side.pipes().iter().map(|&p| Unit::new(side, p)));
            }
        });
    }

    fn each_entry(&mut self, mut f: impl FnMut(Unit, &mut BTreeSet<Unit>)) {
        for (w, seen) in self.writer.values_mut().flatten() {
            f(*w, seen);
        }
        for rs in self.readers.values_mut() {
            for (r, seen) in rs.iter_mut() {
                f(*r, seen);
            }
        }
    }

    /// Records the access. A write that may not happen (`maybe`) adds a
    /// possible writer and keeps the earlier ones and their readers.
    pub fn record(&mut self, unit: Unit, reads: &[String], writes: &[String], maybe: bool) {
        for b in reads {
            self.readers
                .entry(b.clone())
                .or_default()
                .insert(unit, BTreeSet::new());
        }
        for b in writes {
            if maybe {
                let list = self.writer.entry(b.clone()).or_default();
                list.retain(|(w, _)| *w != unit);
                list.push((unit, BTreeSet::new()));
            } else {
                self.writer.insert(b.clone(), vec![(unit, BTreeSet::new())]);
                self.readers.remove(b);
            }
        }
    }

    /// The state after one of two paths ran (the branches of an `if`): an
    /// access either path left is possible, and it is ordered before a
    /// unit only if both paths ordered it.
    pub fn join(&self, other: &Tracker) -> Tracker {
        let mut out = self.clone();
        for (b, ws) in &other.writer {
            let list = out.writer.entry(b.clone()).or_default();
            for (w, seen) in ws {
                match list.iter_mut().find(|(u, _)| u == w) {
                    Some((_, s)) => *s = s.intersection(seen).copied().collect(),
                    None => list.push((*w, seen.clone())),
                }
            }
        }
        for (b, rs) in &other.readers {
            let map = out.readers.entry(b.clone()).or_default();
            for (r, seen) in rs {
                match map.get_mut(r) {
                    Some(s) => *s = s.intersection(seen).copied().collect(),
                    None => {
                        map.insert(*r, seen.clone());
                    }
                }
            }
        }
        // A buffer one path overwrote keeps the other path's readers: they
        // are in `out` already (from `self`) or were merged above.
        out
    }

    /// Units of one core whose accesses to a buffer `shared` accepts are
    /// not yet ordered before every pipe of the other core, with that
    /// core: the cross-core flags that make the next access from either
    /// core safe, whatever it is.
    pub fn pending_cross(&self, shared: impl Fn(&str) -> bool) -> Vec<(Unit, Side)> {
        let mut out = BTreeSet::new();
        let mut consider = |b: &str, u: Unit, seen: &BTreeSet<Unit>| {
            let other = u.side.other();
            if shared(b)
                && !other
                    .pipes()
                    .iter()
                    .all(|&p| seen.contains(&Unit::new(other, p)))
            {
                out.insert((u, other));
            }
        };
        for (b, ws) in &self.writer {
            for (w, seen) in ws {
                consider(b, *w, seen);
            }
        }
        for (b, rs) in &self.readers {
            for (r, seen) in rs {
                consider(b, *r, seen);
            }
        }
        out.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn aic(pipe: Pipe) -> Unit {
        Unit {
            side: Side::Aic,
            pipe,
        }
    }

    const fn aiv(pipe: Pipe) -> Unit {
        Unit {
            side: Side::Aiv,
            pipe,
        }
    }

    fn step(t: &mut Tracker, unit: Unit, reads: &[String], writes: &[String]) -> Vec<(Unit, Unit)> {
        let need = t.needs(unit, reads, writes);
        for &(s, d) in &need {
            if s.side == d.side {
                t.synced(s, d);
            } else {
                t.synced_cross(s, d.side);
            }
        }
        t.record(unit, reads, writes, false);
        need
    }

    #[test]
    fn orderings_follow_writes_and_reads() {
        let mut t = Tracker::default();
        let a = vec!["a".to_string()];
        assert!(step(&mut t, aic(Pipe::Mte2), &[], &a).is_empty());
        assert_eq!(
            step(&mut t, aic(Pipe::V), &a, &[]),
            vec![(aic(Pipe::Mte2), aic(Pipe::V))]
        );
        // Once ordered, a second read on V needs nothing.
        assert!(step(&mut t, aic(Pipe::V), &a, &[]).is_empty());
        // Overwriting on MTE2 after V read it: write after read.
        assert_eq!(
            step(&mut t, aic(Pipe::Mte2), &[], &a),
            vec![(aic(Pipe::V), aic(Pipe::Mte2))]
        );
        // A copy that may not happen leaves the earlier writer possible.
        t.record(aic(Pipe::V), &[], &a, false);
        t.record(aic(Pipe::Mte2), &[], &a, true);
        assert_eq!(
            t.needs(aic(Pipe::Mte3), &a, &[]),
            vec![
                (aic(Pipe::V), aic(Pipe::Mte3)),
                (aic(Pipe::Mte2), aic(Pipe::Mte3))
            ]
        );
        t.clear();
        assert!(step(&mut t, aic(Pipe::Mte3), &a, &[]).is_empty());
    }

    #[test]
    fn a_workspace_round_trip_needs_cross_core_flags_both_ways() {
        let mut t = Tracker::default();
        let ws = vec!["s_ws".to_string()];
        // The fixpipe writes the workspace; the vector core's MTE2 reads it.
        assert!(step(&mut t, aic(Pipe::Fix), &[], &ws).is_empty());
        assert_eq!(
            step(&mut t, aiv(Pipe::Mte2), &ws, &[]),
            vec![(aic(Pipe::Fix), aiv(Pipe::Mte2))]
        );
        // The cross-core wait holds back every pipe of the vector core.
        assert!(t.needs(aiv(Pipe::V), &ws, &[]).is_empty());
        // A barrier on the vector core tells the cube core nothing: the
        // next fixpipe write waits for the vector core's read.
        t.synced_within(Side::Aiv);
        t.synced_within(Side::Aic);
        assert_eq!(
            t.pending_cross(|b| b == "s_ws"),
            vec![(aiv(Pipe::Mte2), Side::Aic)]
        );
        assert!(t.pending_cross(|_| false).is_empty());
        assert_eq!(
            step(&mut t, aic(Pipe::Fix), &[], &ws),
            vec![(aiv(Pipe::Mte2), aic(Pipe::Fix))]
        );
    }

    #[test]
    fn joined_paths_keep_what_either_left_unordered() {
        let a = vec!["a".to_string()];
        let mut before = Tracker::default();
        before.record(aic(Pipe::Mte2), &[], &a, false);
        let mut then = before.clone();
        step(&mut then, aic(Pipe::V), &a, &[]);
        let otherwise = before.clone();
        let joined = then.join(&otherwise);
        // The path that did not order MTE2 before V still needs the flag.
        assert_eq!(
            joined.needs(aic(Pipe::V), &a, &[]),
            vec![(aic(Pipe::Mte2), aic(Pipe::V))]
        );
        // And the read on V from the other path is remembered.
        assert_eq!(
            joined.needs(aic(Pipe::Mte2), &[], &a),
            vec![(aic(Pipe::V), aic(Pipe::Mte2))]
        );
    }
}
