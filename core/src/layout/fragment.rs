//! Fragment layouts: which thread of a group holds which element of a tile,
//! in which local slot.
//!
//! The map is a rank-2 [`Layout`] `(thread, slot) → element index`, where
//! the element index counts the tile's first dimension fastest (`row + M *
//! col` for an M×N tile). A fragment *declares* its replication `r`: every
//! element of the tile must be held by exactly `r` (thread, slot) pairs, and
//! every pair must hold an element of the tile. With `r = 1` the map is a
//! bijection between (thread, slot) pairs and tile elements.

use std::fmt;

use super::{EXHAUSTIVE_LIMIT, Layout, LayoutError};

/// A (thread, slot) → tile element map; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FragmentLayout {
    tile: Vec<u64>,
    map: Layout,
    replication: u64,
}

/// Where [`FragmentLayout::repeat`] puts the new copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepeatAlong {
    /// New threads hold the copies (tiling a warp's fragment across warps).
    Threads,
    /// The same threads hold the copies in new slots.
    Slots,
}

impl FragmentLayout {
    /// A fragment over a tile of the given extents. Checks the shape of the
    /// description only; [`FragmentLayout::check`] checks ownership.
    pub fn new(
        tile: Vec<u64>,
        map: Layout,
        replication: u64,
    ) -> Result<FragmentLayout, LayoutError> {
        if tile.is_empty() || tile.contains(&0) {
            return Err(LayoutError::BadTile { tile });
        }
        if map.rank() != 2 {
            return Err(LayoutError::FragmentRank { rank: map.rank() });
        }
        if replication == 0 {
            return Err(LayoutError::BadReplication);
        }
        tile.iter()
            .try_fold(1u64, |acc, &e| acc.checked_mul(e))
            .ok_or(LayoutError::Overflow)?;
        Ok(FragmentLayout {
            tile,
            map,
            replication,
        })
    }

    /// The tile's extents.
    pub fn tile(&self) -> &[u64] {
        &self.tile
    }

    /// The (thread, slot) map.
    pub fn map(&self) -> &Layout {
        &self.map
    }

    /// How many (thread, slot) pairs hold each element.
    pub fn replication(&self) -> u64 {
        self.replication
    }

    /// The number of threads (the size of the first mode).
    pub fn threads(&self) -> u64 {
        self.map.mode(0).map(|m| m.size()).unwrap_or(0)
    }

    /// The number of slots per thread (the size of the second mode).
    pub fn slots(&self) -> u64 {
        self.map.mode(1).map(|m| m.size()).unwrap_or(0)
    }

    /// The number of tile elements.
    pub fn tile_size(&self) -> u64 {
        self.tile.iter().product()
    }

    /// The tile element's linear index held in `slot` of `thread`.
    pub fn element_index(&self, thread: u64, slot: u64) -> Result<i64, LayoutError> {
        self.map.at_coords(&[thread, slot])
    }

    /// The coordinate (one entry per tile dimension) of the element held in
    /// `slot` of `thread`; an error if it lies outside the tile.
    pub fn element(&self, thread: u64, slot: u64) -> Result<Vec<u64>, LayoutError> {
        let index = self.element_index(thread, slot)?;
        self.coordinate(index)
            .ok_or_else(|| LayoutError::FragmentOutOfTile {
                thread,
                slot,
                index,
                tile: self.tile_text(),
            })
    }

    /// Every (thread, slot) pair holding the element at `coordinate`.
    pub fn holders(&self, coordinate: &[u64]) -> Result<Vec<(u64, u64)>, LayoutError> {
        let target = self.linear(coordinate)?;
        let threads = self.threads();
        let mut out = Vec::new();
        for (index, value) in self.bounded_values()?.into_iter().enumerate() {
            if value == target {
                out.push((index as u64 % threads, index as u64 / threads));
            }
        }
        Ok(out)
    }

    /// Checks that every (thread, slot) pair holds an element of the tile
    /// and every element is held exactly `replication` times; the error
    /// names the first offending element and its holders.
    pub fn check(&self) -> Result<(), LayoutError> {
        let threads = self.threads();
        let tile_size = self.tile_size();
        if tile_size > EXHAUSTIVE_LIMIT {
            return Err(LayoutError::TooLarge {
                size: tile_size,
                limit: EXHAUSTIVE_LIMIT,
            });
        }
        // Per element: how many (thread, slot) pairs hold it, and the first.
        let mut count = vec![0u64; tile_size as usize];
        let mut first = vec![0u64; tile_size as usize];
        for (index, value) in self.bounded_values()?.into_iter().enumerate() {
            let index = index as u64;
            let slot_of = |i: u64| (i % threads, i / threads);
            let Some(element) = usize::try_from(value)
                .ok()
                .filter(|&v| (v as u64) < tile_size)
            else {
                let (thread, slot) = slot_of(index);
                return Err(LayoutError::FragmentOutOfTile {
                    thread,
                    slot,
                    index: value,
                    tile: self.tile_text(),
                });
            };
            if count[element] == self.replication {
                let (first_thread, first_slot) = slot_of(first[element]);
                let (second_thread, second_slot) = slot_of(index);
                return Err(LayoutError::FragmentOverlap {
                    element: self.coordinate(value).unwrap_or_default(),
                    first_thread,
                    first_slot,
                    second_thread,
                    second_slot,
                    declared: self.replication,
                });
            }
            if count[element] == 0 {
                first[element] = index;
            }
            count[element] += 1;
        }
        for (element, &found) in count.iter().enumerate() {
            if found != self.replication {
                return Err(LayoutError::FragmentUncovered {
                    element: self.coordinate(element as i64).unwrap_or_default(),
                    found,
                    declared: self.replication,
                });
            }
        }
        Ok(())
    }

    /// For a fragment without replication, the inverse map: the layout
    /// from element index to `thread + threads * slot`.
    pub fn inverse(&self) -> Result<Layout, LayoutError> {
        self.map.inverse()
    }

    /// The fragment tiled `times` times along tile dimension `dim`: the
    /// tile grows to `times * tile[dim]` there, copy `j` covers the `j`-th
    /// block, and the copies are held by new threads (thread index `t +
    /// threads * j`) or in new slots (slot `s + slots * j`).
    pub fn repeat(
        &self,
        dim: usize,
        times: u64,
        along: RepeatAlong,
    ) -> Result<FragmentLayout, LayoutError> {
        if dim >= self.tile.len() {
            return Err(LayoutError::NoSuchDim {
                dim,
                rank: self.tile.len(),
            });
        }
        if times == 0 {
            return Err(LayoutError::BadExtent { value: 0 });
        }
        let mut new_tile = self.tile.clone();
        new_tile[dim] = new_tile[dim]
            .checked_mul(times)
            .ok_or(LayoutError::Overflow)?;
        // Old element index → new element index: the old tile's dimensions
        // placed with the new tile's column-major strides.
        let new_strides = col_major_strides(&new_tile)?;
        let old_extents: Vec<(u64, i64)> = self
            .tile
            .iter()
            .copied()
            .zip(new_strides.iter().copied())
            .collect();
        let embed = Layout::from_modes(&old_extents)?;
        let block_step = new_strides[dim]
            .checked_mul(i64::try_from(self.tile[dim]).map_err(|_| LayoutError::Overflow)?)
            .ok_or(LayoutError::Overflow)?;
        let copies = Layout::from_modes(&[(times, block_step)])?;
        let thread_mode = embed.compose(&self.map.mode(0)?)?;
        let slot_mode = embed.compose(&self.map.mode(1)?)?;
        let (thread_mode, slot_mode) = match along {
            RepeatAlong::Threads => (thread_mode.append(&copies)?, slot_mode),
            RepeatAlong::Slots => (thread_mode, slot_mode.append(&copies)?),
        };
        let map = Layout::concat(&[thread_mode, slot_mode])?;
        FragmentLayout::new(new_tile, map, self.replication)
    }

    fn bounded_values(&self) -> Result<Vec<i64>, LayoutError> {
        self.map.values()
    }

    fn linear(&self, coordinate: &[u64]) -> Result<i64, LayoutError> {
        if coordinate.len() != self.tile.len() {
            return Err(LayoutError::RankMismatch {
                expected: self.tile.len(),
                found: coordinate.len(),
            });
        }
        let mut index = 0u64;
        let mut weight = 1u64;
        for (&c, &extent) in coordinate.iter().zip(&self.tile) {
            if c >= extent {
                return Err(LayoutError::OutOfDomain {
                    index: c,
                    size: extent,
                });
            }
            index += c * weight;
            weight *= extent;
        }
        i64::try_from(index).map_err(|_| LayoutError::Overflow)
    }

    fn coordinate(&self, index: i64) -> Option<Vec<u64>> {
        let mut rest = u64::try_from(index).ok()?;
        if rest >= self.tile_size() {
            return None;
        }
        let mut out = Vec::with_capacity(self.tile.len());
        for &extent in &self.tile {
            out.push(rest % extent);
            rest /= extent;
        }
        Some(out)
    }

    fn tile_text(&self) -> String {
        let parts: Vec<String> = self.tile.iter().map(u64::to_string).collect();
        parts.join("×")
    }
}

fn col_major_strides(extents: &[u64]) -> Result<Vec<i64>, LayoutError> {
    let mut out = Vec::with_capacity(extents.len());
    let mut step: i64 = 1;
    for &extent in extents {
        out.push(step);
        step = step
            .checked_mul(i64::try_from(extent).map_err(|_| LayoutError::Overflow)?)
            .ok_or(LayoutError::Overflow)?;
    }
    Ok(out)
}

impl fmt::Display for FragmentLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.tile.iter().map(u64::to_string).collect();
        write!(f, "[{}] ", parts.join(","))?;
        if self.replication != 1 {
            write!(f, "rep {} ", self.replication)?;
        }
        write!(f, "{}", self.map)
    }
}
