//! Hierarchical integer tuples: the shapes and strides of layouts.

use std::fmt;

/// An integer or a nonempty tuple of integer tuples, such as `8`, `(4,8)` or
/// `((4,8),(2,2,2))`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    Int(i64),
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// A flat tuple of the given integers; one value gives a plain integer.
    pub fn flat(values: &[i64]) -> IntTuple {
        if values.len() == 1 {
            IntTuple::Int(values[0])
        } else {
            IntTuple::Tuple(values.iter().map(|&v| IntTuple::Int(v)).collect())
        }
    }

    /// The number of top-level modes: 1 for an integer.
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(items) => items.len(),
        }
    }

    /// The top-level modes; an integer is its own single mode.
    pub fn modes(&self) -> Vec<&IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self],
            IntTuple::Tuple(items) => items.iter().collect(),
        }
    }

    /// All integers, depth first, left to right.
    pub fn leaves(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(v) => out.push(*v),
            IntTuple::Tuple(items) => {
                for item in items {
                    item.collect_leaves(out);
                }
            }
        }
    }

    /// Whether both tuples have the same nesting.
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// Whether any tuple inside is empty.
    pub(crate) fn has_empty_tuple(&self) -> bool {
        match self {
            IntTuple::Int(_) => false,
            IntTuple::Tuple(items) => {
                items.is_empty() || items.iter().any(IntTuple::has_empty_tuple)
            }
        }
    }

    /// The same nesting with each leaf replaced by the result of `f`, which
    /// may return a whole sub-tuple.
    pub(crate) fn replace_leaves<E>(
        &self,
        f: &mut impl FnMut(usize) -> Result<IntTuple, E>,
        counter: &mut usize,
    ) -> Result<IntTuple, E> {
        match self {
            IntTuple::Int(_) => {
                let index = *counter;
                *counter += 1;
                f(index)
            }
            IntTuple::Tuple(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(item.replace_leaves(f, counter)?);
                }
                Ok(IntTuple::Tuple(out))
            }
        }
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Tuple(items) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
        }
    }
}
