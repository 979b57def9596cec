//! Typed arenas and handles.
//!
//! IR nodes never point at each other with references or `Rc`; they hold a
//! [`Handle`] — a 32-bit index into the [`Arena`] that owns the node. Handles
//! are `Copy`, cheap to compare and hash, and side tables keyed by them
//! (spans, analysis facts) are plain vectors.

use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroU32;

/// A typed index into an [`Arena<T>`].
pub struct Handle<T> {
    index: NonZeroU32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// Builds a handle from a zero-based index.
    ///
    /// # Panics
    /// When `index` does not fit in 32 bits; arenas refuse to grow that far
    /// before a handle could be made.
    #[allow(clippy::expect_used)]
    pub fn from_index(index: usize) -> Self {
        let raw = u32::try_from(index + 1).expect("arena index fits in u32");
        Handle {
            index: NonZeroU32::new(raw).expect("index + 1 is non-zero"),
            marker: PhantomData,
        }
    }

    /// The zero-based index of this handle in its arena.
    pub fn index(self) -> usize {
        self.index.get() as usize - 1
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index())
    }
}

/// An append-only vector of `T` addressed by [`Handle<T>`].
#[derive(Clone, PartialEq)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.items.iter().enumerate())
            .finish()
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value` and returns its handle.
    pub fn append(&mut self, value: T) -> Handle<T> {
        let handle = Handle::from_index(self.items.len());
        self.items.push(value);
        handle
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether `handle` points inside this arena.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        handle.index() < self.items.len()
    }

    /// Handles and nodes in order of creation.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, v)| (Handle::from_index(i), v))
    }

    /// The node behind `handle`, if the handle belongs to this arena.
    pub fn try_get(&self, handle: Handle<T>) -> Option<&T> {
        self.items.get(handle.index())
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.items[handle.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, handle: Handle<T>) -> &mut T {
        &mut self.items[handle.index()]
    }
}

impl<T> serde::Serialize for Handle<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(self.index.get())
    }
}

impl<'de, T> serde::Deserialize<'de> for Handle<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = u32::deserialize(deserializer)?;
        let index = NonZeroU32::new(raw)
            .ok_or_else(|| serde::de::Error::custom("handle index 0 is not valid"))?;
        Ok(Handle {
            index,
            marker: PhantomData,
        })
    }
}

impl<T: serde::Serialize> serde::Serialize for Arena<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.items.serialize(serializer)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Arena<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        if u32::try_from(items.len()).is_err() {
            return Err(serde::de::Error::custom("arena larger than 2^32 nodes"));
        }
        Ok(Arena { items })
    }
}
