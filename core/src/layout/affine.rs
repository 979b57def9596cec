//! Affine layouts (`shape:stride`) and their algebra: evaluation,
//! composition, inversion, reshaping and exhaustive injectivity checks.
//!
//! The conventions (first leaf fastest, value = sum of digit times stride)
//! are described in the parent module.

use std::fmt;

use super::{IntTuple, LayoutError};

/// The largest domain the exhaustive checks ([`Layout::is_injective`],
/// [`Layout::is_bijective`], fragment checks) visit point by point.
pub const EXHAUSTIVE_LIMIT: u64 = 1 << 22;

/// An affine layout: a hierarchical shape and a congruent stride.
///
/// Constructed only through [`Layout::new`] (or the helpers built on it),
/// which guarantees that every extent is at least 1 and that the size and
/// every offset inside the domain fit in an `i64`, so evaluation inside the
/// domain cannot overflow.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
}

/// One flat mode during composition; `None` extent means unbounded (the
/// last mode of the outer layout, which composition extends).
type OpenMode = (Option<u64>, i64);

impl Layout {
    /// A layout from a shape and a stride with the same nesting.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout, LayoutError> {
        if shape.has_empty_tuple() || stride.has_empty_tuple() {
            return Err(LayoutError::EmptyTuple);
        }
        if !shape.congruent(&stride) {
            return Err(LayoutError::NotCongruent {
                shape: shape.to_string(),
                stride: stride.to_string(),
            });
        }
        let mut size: i64 = 1;
        let mut reach: i64 = 0;
        for (extent, step) in shape.leaves().into_iter().zip(stride.leaves()) {
            if extent < 1 {
                return Err(LayoutError::BadExtent { value: extent });
            }
            size = size.checked_mul(extent).ok_or(LayoutError::Overflow)?;
            let span = (extent - 1)
                .checked_mul(step.checked_abs().ok_or(LayoutError::Overflow)?)
                .ok_or(LayoutError::Overflow)?;
            reach = reach.checked_add(span).ok_or(LayoutError::Overflow)?;
        }
        Ok(Layout { shape, stride })
    }

    /// A flat layout from `(extent, stride)` pairs; one pair gives a rank-1
    /// layout with integer shape.
    pub fn from_modes(modes: &[(u64, i64)]) -> Result<Layout, LayoutError> {
        if modes.is_empty() {
            return Err(LayoutError::EmptyTuple);
        }
        let mut shape = Vec::with_capacity(modes.len());
        for &(extent, _) in modes {
            shape.push(i64::try_from(extent).map_err(|_| LayoutError::Overflow)?);
        }
        let stride: Vec<i64> = modes.iter().map(|&(_, step)| step).collect();
        Layout::new(IntTuple::flat(&shape), IntTuple::flat(&stride))
    }

    /// The compact layout that counts the first dimension fastest
    /// (column-major for a matrix): strides `1, s0, s0*s1, ...`.
    pub fn col_major(shape: &[u64]) -> Result<Layout, LayoutError> {
        let mut modes = Vec::with_capacity(shape.len());
        let mut step: i64 = 1;
        for &extent in shape {
            modes.push((extent, step));
            step = step
                .checked_mul(i64::try_from(extent).map_err(|_| LayoutError::Overflow)?)
                .ok_or(LayoutError::Overflow)?;
        }
        Layout::from_modes(&modes)
    }

    /// The compact layout that counts the last dimension fastest in memory
    /// (row-major for a matrix): the last dimension has stride 1.
    pub fn row_major(shape: &[u64]) -> Result<Layout, LayoutError> {
        Layout::padded_row_major(shape, &vec![0; shape.len()])
    }

    /// A row-major layout whose dimension `d` occupies `shape[d] +
    /// padding[d]` positions, so that the stride of every outer dimension
    /// skips the padding. The usual shared-memory padding of a `rows × cols`
    /// tile by `p` elements per row is `padded_row_major(&[rows, cols], &[0,
    /// p])`, which gives `(rows,cols):(cols+p,1)`.
    pub fn padded_row_major(shape: &[u64], padding: &[u64]) -> Result<Layout, LayoutError> {
        if shape.len() != padding.len() {
            return Err(LayoutError::RankMismatch {
                expected: shape.len(),
                found: padding.len(),
            });
        }
        let mut strides = vec![0i64; shape.len()];
        let mut step: i64 = 1;
        for d in (0..shape.len()).rev() {
            strides[d] = step;
            let occupied = shape[d]
                .checked_add(padding[d])
                .ok_or(LayoutError::Overflow)?;
            step = step
                .checked_mul(i64::try_from(occupied).map_err(|_| LayoutError::Overflow)?)
                .ok_or(LayoutError::Overflow)?;
        }
        let modes: Vec<(u64, i64)> = shape.iter().copied().zip(strides).collect();
        Layout::from_modes(&modes)
    }

    /// The shape tuple.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride tuple.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// The number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// `(extent, stride)` of every leaf, first (fastest) leaf first.
    pub fn leaves(&self) -> Vec<(u64, i64)> {
        self.shape
            .leaves()
            .into_iter()
            .zip(self.stride.leaves())
            .map(|(extent, step)| (extent.unsigned_abs(), step))
            .collect()
    }

    /// The number of points in the domain.
    pub fn size(&self) -> u64 {
        self.shape
            .leaves()
            .into_iter()
            .map(i64::unsigned_abs)
            .product()
    }

    /// One more than the largest value (0 if every value is negative); the
    /// extent of memory the layout touches when its strides are
    /// non-negative.
    pub fn cosize(&self) -> u64 {
        let max: i64 = self
            .leaves()
            .into_iter()
            .map(|(extent, step)| {
                if step > 0 {
                    (extent as i64 - 1) * step
                } else {
                    0
                }
            })
            .sum();
        max.unsigned_abs() + 1
    }

    /// Top-level mode `i` as a layout of its own.
    pub fn mode(&self, i: usize) -> Result<Layout, LayoutError> {
        let shapes = self.shape.modes();
        let strides = self.stride.modes();
        match (shapes.get(i), strides.get(i)) {
            (Some(&shape), Some(&stride)) => Ok(Layout {
                shape: shape.clone(),
                stride: stride.clone(),
            }),
            _ => Err(LayoutError::NoSuchMode {
                mode: i,
                rank: self.rank(),
            }),
        }
    }

    /// The layout whose top-level modes are the given layouts, in order.
    pub fn concat(modes: &[Layout]) -> Result<Layout, LayoutError> {
        Layout::new(
            IntTuple::Tuple(modes.iter().map(|m| m.shape.clone()).collect()),
            IntTuple::Tuple(modes.iter().map(|m| m.stride.clone()).collect()),
        )
    }

    /// This layout with `mode` added as a new, slowest top-level mode. A
    /// rank-1 layout with an integer shape first becomes a one-mode tuple.
    pub fn append(&self, mode: &Layout) -> Result<Layout, LayoutError> {
        let mut modes: Vec<Layout> = (0..self.rank())
            .map(|i| self.mode(i))
            .collect::<Result<_, _>>()?;
        modes.push(mode.clone());
        Layout::concat(&modes)
    }

    /// The same map with all nesting removed.
    pub fn flatten(&self) -> Layout {
        let shape = self.shape.leaves();
        let stride = self.stride.leaves();
        Layout {
            shape: IntTuple::flat(&shape),
            stride: IntTuple::flat(&stride),
        }
    }

    /// The same map on the same domain with the fewest flat modes: extent-1
    /// modes dropped and mode pairs merged where the second stride is the
    /// first's extent times its stride.
    pub fn coalesce(&self) -> Layout {
        let modes = coalesce_modes(&self.leaves());
        let shape: Vec<i64> = modes.iter().map(|&(e, _)| e as i64).collect();
        let stride: Vec<i64> = modes.iter().map(|&(_, s)| s).collect();
        Layout {
            shape: IntTuple::flat(&shape),
            stride: IntTuple::flat(&stride),
        }
    }

    /// The value at linear index `index`, which must lie in `0..size`.
    pub fn at(&self, index: u64) -> Result<i64, LayoutError> {
        let size = self.size();
        if index >= size {
            return Err(LayoutError::OutOfDomain { index, size });
        }
        Ok(self.eval(index))
    }

    /// The value at a coordinate with one linear index per top-level mode.
    pub fn at_coords(&self, coords: &[u64]) -> Result<i64, LayoutError> {
        if coords.len() != self.rank() {
            return Err(LayoutError::RankMismatch {
                expected: self.rank(),
                found: coords.len(),
            });
        }
        let shapes = self.shape.modes();
        let strides = self.stride.modes();
        let mut total = 0i64;
        for ((&c, shape), stride) in coords.iter().zip(shapes).zip(strides) {
            let mut size = 1u64;
            let mut value = 0i64;
            let mut rest = c;
            walk_leaves(shape, stride, &mut |extent, step| {
                size = size.saturating_mul(extent);
                value += (rest % extent) as i64 * step;
                rest /= extent;
            });
            if c >= size {
                return Err(LayoutError::OutOfDomain { index: c, size });
            }
            total += value;
        }
        Ok(total)
    }

    /// Evaluation inside the domain; [`Layout::new`]'s bound makes it exact.
    pub(crate) fn eval(&self, index: u64) -> i64 {
        let mut rest = index;
        let mut total = 0i64;
        walk_leaves(&self.shape, &self.stride, &mut |extent, step| {
            total += (rest % extent) as i64 * step;
            rest /= extent;
        });
        total
    }

    /// Evaluation with the last leaf unbounded (the reading composition
    /// uses); `None` on overflow.
    pub fn at_extended(&self, index: u64) -> Option<i64> {
        let leaves = self.leaves();
        let mut rest = index;
        let mut total = 0i64;
        for (k, (extent, step)) in leaves.iter().enumerate() {
            let digit = if k + 1 == leaves.len() {
                rest
            } else {
                rest % extent
            };
            rest /= extent;
            let term = i64::try_from(digit).ok()?.checked_mul(*step)?;
            total = total.checked_add(term)?;
        }
        Some(total)
    }

    /// Every value, in index order, for domains up to [`EXHAUSTIVE_LIMIT`].
    pub fn values(&self) -> Result<Vec<i64>, LayoutError> {
        let size = self.size();
        if size > EXHAUSTIVE_LIMIT {
            return Err(LayoutError::TooLarge {
                size,
                limit: EXHAUSTIVE_LIMIT,
            });
        }
        // Odometer over the leaves: no division per point.
        let leaves: Vec<(u64, i64)> = self.leaves().into_iter().filter(|&(e, _)| e > 1).collect();
        let mut digits = vec![0u64; leaves.len()];
        let mut value = 0i64;
        let mut out = Vec::with_capacity(size as usize);
        for _ in 0..size {
            out.push(value);
            for (k, &(extent, step)) in leaves.iter().enumerate() {
                digits[k] += 1;
                value += step;
                if digits[k] < extent {
                    break;
                }
                value -= extent as i64 * step;
                digits[k] = 0;
            }
        }
        Ok(out)
    }

    /// The first pair of indices `(i, j)`, `i < j`, with equal values, if
    /// any (smallest `j` first).
    pub fn first_collision(&self) -> Result<Option<(u64, u64)>, LayoutError> {
        let values = self.values()?;
        let mut order: Vec<u64> = (0..values.len() as u64).collect();
        order.sort_by_key(|&i| (values[i as usize], i));
        let mut best: Option<(u64, u64)> = None;
        for pair in order.windows(2) {
            if values[pair[0] as usize] == values[pair[1] as usize] {
                let candidate = (pair[0], pair[1]);
                if best.is_none_or(|b| candidate.1 < b.1) {
                    best = Some(candidate);
                }
            }
        }
        Ok(best)
    }

    /// Whether no two indices share a value (checked exhaustively).
    pub fn is_injective(&self) -> Result<bool, LayoutError> {
        Ok(self.first_collision()?.is_none())
    }

    /// Whether the layout is a bijection of `0..size` onto itself (checked
    /// exhaustively).
    pub fn is_bijective(&self) -> Result<bool, LayoutError> {
        let values = self.values()?;
        let size = values.len();
        let mut seen = vec![false; size];
        for v in values {
            match usize::try_from(v) {
                Ok(v) if v < size && !seen[v] => seen[v] = true,
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    /// The inverse of a bijection of `0..size`: the layout `inv` with
    /// `inv(self(i)) == i` for every `i`. It exists (and is affine) exactly
    /// when the leaves of extent above 1, sorted by stride, form a compact
    /// layout.
    pub fn inverse(&self) -> Result<Layout, LayoutError> {
        let size = self.size();
        let leaves = self.leaves();
        // Colexicographic weight of each leaf in the domain.
        let mut weights = Vec::with_capacity(leaves.len());
        let mut weight: i64 = 1;
        for &(extent, _) in &leaves {
            weights.push(weight);
            weight = weight.saturating_mul(extent as i64);
        }
        let mut live: Vec<(u64, i64, i64)> = leaves
            .iter()
            .zip(&weights)
            .filter(|((extent, _), _)| *extent > 1)
            .map(|(&(extent, step), &w)| (extent, step, w))
            .collect();
        if live.is_empty() {
            return Layout::from_modes(&[(1, 0)]);
        }
        live.sort_by_key(|&(_, step, _)| step);
        let mut expected: i64 = 1;
        for &(extent, step, _) in &live {
            if step != expected {
                return Err(LayoutError::NotBijective {
                    size,
                    reason: format!(
                        "sorted by stride the modes are not compact: stride {step} where {expected} was needed"
                    ),
                });
            }
            expected = expected.saturating_mul(extent as i64);
        }
        let modes: Vec<(u64, i64)> = live.iter().map(|&(extent, _, w)| (extent, w)).collect();
        Layout::from_modes(&modes)
    }

    /// `self ∘ inner`: the layout with `inner`'s nesting whose value at `i`
    /// is `self(inner(i))`, reading `self` with its last leaf unbounded.
    ///
    /// For each leaf `n:d` of `inner` the outer layout (coalesced) is first
    /// divided by `d` (its leading modes are consumed or shortened so that
    /// index `d*j` becomes index `j`) and then truncated to `n` points. Each
    /// step needs one of two extents to divide the other; otherwise the
    /// result is not affine and [`LayoutError::NotComposable`] is returned.
    pub fn compose(&self, inner: &Layout) -> Result<Layout, LayoutError> {
        let outer = coalesce_modes(&self.leaves());
        let inner_leaves = inner.leaves();
        let mut leaf_results = Vec::with_capacity(inner_leaves.len());
        // The result is affine only if the inner leaves never carry into
        // each other inside the outer layout: in every outer digit
        // position but the unbounded last one, the largest digits the
        // leaves put there must add up to less than its extent.
        let mut digit_sums = vec![0u64; outer.len()];
        for &(extent, step) in &inner_leaves {
            let (modes, footprint) = compose_leaf(&outer, extent, step)?;
            for (position, digit) in footprint {
                digit_sums[position] = digit_sums[position].saturating_add(digit);
            }
            leaf_results.push(modes);
        }
        for (position, &sum) in digit_sums.iter().enumerate() {
            let (extent, _) = outer[position];
            if position + 1 < outer.len() && sum >= extent {
                return Err(not_composable(format!(
                    "the inner modes overlap in outer mode {position} (extent {extent}) and would carry"
                )));
            }
        }
        let mut shape_fn = |k: usize| -> Result<IntTuple, LayoutError> {
            leaf_tuple(&leaf_results[k], |&(e, _)| e as i64)
        };
        let shape = inner.shape.replace_leaves(&mut shape_fn, &mut 0)?;
        let mut stride_fn = |k: usize| -> Result<IntTuple, LayoutError> {
            leaf_tuple(&leaf_results[k], |&(_, s)| s)
        };
        let stride = inner.shape.replace_leaves(&mut stride_fn, &mut 0)?;
        Layout::new(shape, stride)
    }

    /// The same map read through another shape of the same size: the value
    /// at linear index `i` is unchanged, only the way `i` is split into
    /// coordinates follows `shape`.
    pub fn reshape(&self, shape: &IntTuple) -> Result<Layout, LayoutError> {
        let extents: Vec<u64> = shape
            .leaves()
            .into_iter()
            .map(|e| e.max(0) as u64)
            .collect();
        let compact = Layout::col_major(&extents)?;
        let nested = {
            let mut counter = 0usize;
            let leaves = compact.stride.leaves();
            let mut f = |k: usize| -> Result<IntTuple, LayoutError> {
                leaves
                    .get(k)
                    .map(|&s| IntTuple::Int(s))
                    .ok_or(LayoutError::EmptyTuple)
            };
            let stride = shape.replace_leaves(&mut f, &mut counter)?;
            Layout::new(shape.clone(), stride)?
        };
        if nested.size() != self.size() {
            return Err(LayoutError::SizeMismatch {
                left: self.size(),
                right: nested.size(),
            });
        }
        self.compose(&nested)
    }
}

/// Calls `f(extent, stride)` for every leaf, first leaf first, without
/// allocating.
fn walk_leaves(shape: &IntTuple, stride: &IntTuple, f: &mut impl FnMut(u64, i64)) {
    match (shape, stride) {
        (IntTuple::Int(extent), IntTuple::Int(step)) => f(extent.unsigned_abs(), *step),
        (IntTuple::Tuple(shapes), IntTuple::Tuple(strides)) => {
            for (shape, stride) in shapes.iter().zip(strides) {
                walk_leaves(shape, stride, f);
            }
        }
        // Congruence is checked when a layout is built.
        _ => {}
    }
}

fn leaf_tuple(
    modes: &[(u64, i64)],
    pick: impl Fn(&(u64, i64)) -> i64,
) -> Result<IntTuple, LayoutError> {
    match modes {
        [] => Err(LayoutError::EmptyTuple),
        [single] => Ok(IntTuple::Int(pick(single))),
        many => Ok(IntTuple::Tuple(
            many.iter().map(|m| IntTuple::Int(pick(m))).collect(),
        )),
    }
}

/// Drops extent-1 modes and merges contiguous neighbours; never returns an
/// empty list (a layout of size 1 becomes `1:0`).
fn coalesce_modes(leaves: &[(u64, i64)]) -> Vec<(u64, i64)> {
    let mut out: Vec<(u64, i64)> = Vec::new();
    for &(extent, step) in leaves {
        if extent == 1 {
            continue;
        }
        if let Some(last) = out.last_mut()
            && (last.0 as i64).checked_mul(last.1) == Some(step)
        {
            last.0 *= extent;
            continue;
        }
        out.push((extent, step));
    }
    if out.is_empty() {
        out.push((1, 0));
    }
    out
}

fn not_composable(reason: String) -> LayoutError {
    LayoutError::NotComposable { reason }
}

/// `outer ∘ (extent:step)` for one leaf: the flat modes of the result, and
/// the leaf's footprint on the outer layout's digits as `(position, largest
/// digit)` pairs.
#[allow(clippy::type_complexity)]
fn compose_leaf(
    outer: &[(u64, i64)],
    extent: u64,
    step: i64,
) -> Result<(Vec<(u64, i64)>, Vec<(usize, u64)>), LayoutError> {
    if extent == 1 {
        return Ok((vec![(1, 0)], Vec::new()));
    }
    if step == 0 {
        return Ok((vec![(extent, 0)], Vec::new()));
    }
    if step < 0 {
        return Err(not_composable(format!("inner stride {step} is negative")));
    }
    let scale = |r: i64, by: u64| -> Result<i64, LayoutError> {
        r.checked_mul(i64::try_from(by).map_err(|_| LayoutError::Overflow)?)
            .ok_or(LayoutError::Overflow)
    };
    // Divide the outer layout by `step`. Each kept mode remembers its
    // position in `outer` and the multiplier of its digits there.
    let mut rest = step.unsigned_abs();
    let last = outer.len() - 1;
    let mut kept: Vec<(OpenMode, usize, u64)> = Vec::new();
    let tail = |from: usize, kept: &mut Vec<(OpenMode, usize, u64)>| {
        for (j, &(a, r)) in outer.iter().enumerate().take(last).skip(from) {
            kept.push(((Some(a), r), j, 1));
        }
        kept.push(((None, outer[last].1), last, 1));
    };
    for (j, &(a, r)) in outer.iter().enumerate() {
        if j == last {
            kept.push(((None, scale(r, rest)?), j, rest));
            break;
        }
        if rest == 1 {
            tail(j, &mut kept);
            break;
        }
        if rest.is_multiple_of(a) {
            rest /= a;
            continue;
        }
        if a % rest == 0 {
            kept.push(((Some(a / rest), scale(r, rest)?), j, rest));
            tail(j + 1, &mut kept);
            break;
        }
        return Err(not_composable(format!(
            "inner stride {step} neither divides nor is divided by outer extent {a}"
        )));
    }
    // Keep the first `extent` points.
    let mut want = extent;
    let mut out = Vec::new();
    let mut footprint = Vec::new();
    for ((a, r), position, multiplier) in kept {
        let taken = match a {
            Some(a) if want > a => {
                if !want.is_multiple_of(a) {
                    return Err(not_composable(format!(
                        "inner extent {extent} does not split over outer extent {a}"
                    )));
                }
                a
            }
            _ => want,
        };
        out.push((taken, r));
        footprint.push((position, multiplier.saturating_mul(taken - 1)));
        want /= taken;
        if want == 1 {
            break;
        }
    }
    if want != 1 {
        return Err(not_composable(format!(
            "inner extent {extent} is not covered"
        )));
    }
    Ok((coalesce_modes(&out), footprint))
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}
