//! Which pipe touched which buffer last, and the flags that order the next
//! access after it.

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

/// Per buffer (by its C++ name): the pipe of the last write with the pipes
/// already ordered after it, and the pipes that read it since with, for
/// each, the pipes already ordered after that read.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    /// Possible last writers: more than one after a write that may not
    /// have happened (a copy under a run-time condition).
    writer: BTreeMap<String, Vec<(Pipe, BTreeSet<Pipe>)>>,
    readers: BTreeMap<String, BTreeMap<Pipe, BTreeSet<Pipe>>>,
}

impl Tracker {
    /// Everything synchronised (after `PipeBarrier<PIPE_ALL>`).
    pub fn clear(&mut self) {
        self.writer.clear();
        self.readers.clear();
    }

    /// The (source, destination) orderings `pipe` needs before reading
    /// `reads` and writing `writes`. The caller orders them (and reports
    /// each with [`Tracker::synced`]) before [`Tracker::record`].
    pub fn needs(&self, pipe: Pipe, reads: &[String], writes: &[String]) -> Vec<(Pipe, Pipe)> {
        let mut need = BTreeSet::new();
        for b in reads.iter().chain(writes) {
            for (w, seen) in self.writer.get(b).into_iter().flatten() {
                if *w != pipe && !seen.contains(&pipe) {
                    need.insert((*w, pipe));
                }
            }
        }
        for b in writes {
            if let Some(rs) = self.readers.get(b) {
                for (r, seen) in rs {
                    if *r != pipe && !seen.contains(&pipe) {
                        need.insert((*r, pipe));
                    }
                }
            }
        }
        need.into_iter().collect()
    }

    /// A flag from `src` to `dst` was waited for: everything `src` did so
    /// far is visible to `dst`.
    pub fn synced(&mut self, src: Pipe, dst: Pipe) {
        for (w, seen) in self.writer.values_mut().flatten() {
            if *w == src {
                seen.insert(dst);
            }
        }
        for rs in self.readers.values_mut() {
            if let Some(seen) = rs.get_mut(&src) {
                seen.insert(dst);
            }
        }
    }

    /// Records the access. A write that may not happen (`maybe`) adds a
    /// possible writer and keeps the earlier ones and their readers.
    pub fn record(&mut self, pipe: Pipe, reads: &[String], writes: &[String], maybe: bool) {
        for b in reads {
            self.readers
                .entry(b.clone())
                .or_default()
                .insert(pipe, BTreeSet::new());
        }
        for b in writes {
            if maybe {
                let list = self.writer.entry(b.clone()).or_default();
                list.retain(|(w, _)| *w != pipe);
                list.push((pipe, BTreeSet::new()));
            } else {
                self.writer.insert(b.clone(), vec![(pipe, BTreeSet::new())]);
                self.readers.remove(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orderings_follow_writes_and_reads() {
        let mut t = Tracker::default();
        let a = vec!["a".to_string()];
        let step = |t: &mut Tracker, pipe, reads: &[String], writes: &[String]| {
            let need = t.needs(pipe, reads, writes);
            for &(s, d) in &need {
                t.synced(s, d);
            }
            t.record(pipe, reads, writes, false);
            need
        };
        assert!(step(&mut t, Pipe::Mte2, &[], &a).is_empty());
        assert_eq!(step(&mut t, Pipe::V, &a, &[]), vec![(Pipe::Mte2, Pipe::V)]);
        // Once ordered, a second read on V needs nothing.
        assert!(step(&mut t, Pipe::V, &a, &[]).is_empty());
        // Overwriting on MTE2 after V read it: write after read.
        assert_eq!(
            step(&mut t, Pipe::Mte2, &[], &a),
            vec![(Pipe::V, Pipe::Mte2)]
        );
        // A copy that may not happen leaves the earlier writer possible.
        t.record(Pipe::V, &[], &a, false);
        t.record(Pipe::Mte2, &[], &a, true);
        assert_eq!(
            t.needs(Pipe::Mte3, &a, &[]),
            vec![(Pipe::V, Pipe::Mte3), (Pipe::Mte2, Pipe::Mte3)]
        );
        t.clear();
        assert!(step(&mut t, Pipe::Mte3, &a, &[]).is_empty());
    }
}
