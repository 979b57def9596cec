//! Tile operations: `copy`, `gemm`, `fill`, `reduce`, `cumsum`,
//! `atomic_add`.
//!
//! A tile op evaluates its regions once, gathers its operands into
//! contiguous vectors (row-major over the region), computes, and scatters
//! the result. Gathering first makes overlapping source and destination
//! behave as if all reads happened before any write. Region elements that
//! fall outside their buffer read as zero and are not written, whatever the
//! buffer's scope (TileLang's rule for tile ops).
//!
//! Where operand shapes must agree they are compared after dropping unit
//! extents, which is what lets `copy(A[b, 0:64, 0:32], S)` pair a 3-D region
//! with a 2-D buffer; the k-th element of one region in row-major order
//! then pairs with the k-th element of the other.

use super::TensorData;
use super::error::{Eval, malformed, tile_shape};
use super::expr::{Code, Env, Slot, place};
use super::program::{AtomicSource, CRegion, GemmOp};
use super::scalar::{self, Scalar, as_f64, int_to_f64, int_to_i128, nan_max, nan_min};
use crate::ir::{AtomicOp, DType, ReduceKind, Scope};

/// The most elements one region may span (2^30).
const MAX_REGION_ELEMENTS: usize = 1 << 30;

/// A region with its starts and extents evaluated.
struct RegionBox {
    buffer: usize,
    start: Vec<i64>,
    extent: Vec<usize>,
}

impl RegionBox {
    fn count(&self) -> usize {
        self.extent.iter().product()
    }
}

fn non_unit(extents: &[usize]) -> Vec<usize> {
    extents.iter().copied().filter(|&e| e != 1).collect()
}

fn eval_region(env: &Env, region: &CRegion, op: &'static str) -> Eval<RegionBox> {
    let mut start = Vec::with_capacity(region.starts.len());
    let mut extent = Vec::with_capacity(region.extents.len());
    for (s, e) in region.starts.iter().zip(&region.extents) {
        start.push(s(env)?);
        let e = e(env)?;
        extent.push(usize::try_from(e).map_err(|_| {
            tile_shape(
                op,
                format!(
                    "region of `{}` has negative extent {e}",
                    env.buffer_name(region.buffer)
                ),
            )
        })?);
    }
    let fits = extent
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .is_some_and(|n| n <= MAX_REGION_ELEMENTS);
    if !fits {
        return Err(tile_shape(
            op,
            format!(
                "region {extent:?} of `{}` is too large",
                env.buffer_name(region.buffer)
            ),
        ));
    }
    Ok(RegionBox {
        buffer: region.buffer,
        start,
        extent,
    })
}

/// Calls `f` with the storage offset of every element of `region`, in
/// row-major order: `Some` inside the buffer, `None` outside.
fn walk(
    shape: &[usize],
    strides: &[usize],
    places: Option<&[usize]>,
    region: &RegionBox,
    mut f: impl FnMut(Option<usize>),
) -> Eval<()> {
    let rank = region.extent.len();
    if rank != shape.len() || rank != strides.len() || rank != region.start.len() {
        return Err(malformed("region rank differs from its buffer's"));
    }
    let inside = |d: usize, g: i64| g >= 0 && (g as u64) < shape[d] as u64;
    let Some(last) = rank.checked_sub(1) else {
        f(Some(place(places, 0)));
        return Ok(());
    };
    if region.extent.contains(&0) {
        return Ok(());
    }
    let mut pos = vec![0usize; last];
    loop {
        let mut outer = Some(0usize);
        for d in 0..last {
            let g = region.start[d].wrapping_add(pos[d] as i64);
            outer = outer
                .filter(|_| inside(d, g))
                .map(|o| o + g as usize * strides[d]);
        }
        let first = region.start[last];
        for j in 0..region.extent[last] {
            let g = first.wrapping_add(j as i64);
            f(outer
                .filter(|_| inside(last, g))
                .map(|o| place(places, o + g as usize * strides[last])));
        }
        let mut d = last;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < region.extent[d] {
                break;
            }
            pos[d] = 0;
        }
    }
}

/// Elements gathered from a region, in the source buffer's class.
enum Column {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

impl Column {
    fn get(&self, k: usize) -> Scalar {
        match self {
            Column::Float(v) => Scalar::Float(v.get(k).copied().unwrap_or(0.0)),
            Column::Int(v) => Scalar::Int(v.get(k).copied().unwrap_or(0)),
        }
    }
}

/// Reads every element of `region` (0 outside the buffer) and its type.
fn gather(env: &Env, region: &RegionBox) -> Eval<(Column, DType)> {
    let slot = env.slot(region.buffer)?;
    let n = region.count();
    let column = match &slot.data {
        TensorData::Float(data) => {
            let mut out = Vec::with_capacity(n);
            walk(
                &slot.shape,
                &slot.strides,
                slot.places.as_deref(),
                region,
                |o| {
                    out.push(o.and_then(|o| data.get(o).copied()).unwrap_or(0.0));
                },
            )?;
            Column::Float(out)
        }
        TensorData::Int(data) => {
            let mut out = Vec::with_capacity(n);
            walk(
                &slot.shape,
                &slot.strides,
                slot.places.as_deref(),
                region,
                |o| {
                    out.push(o.and_then(|o| data.get(o).copied()).unwrap_or(0));
                },
            )?;
            Column::Int(out)
        }
    };
    Ok((column, slot.dtype))
}

/// Reads every element of `region` as `f64`.
fn gather_f64(env: &Env, region: &RegionBox) -> Eval<Vec<f64>> {
    Ok(match gather(env, region)? {
        (Column::Float(v), _) => v,
        (Column::Int(v), dtype) => v.into_iter().map(|x| int_to_f64(x, dtype)).collect(),
    })
}

/// Writes `values` (of type `from`) into the in-bounds elements of
/// `region`, converting as a cast does.
fn scatter(env: &mut Env, region: &RegionBox, values: &Column, from: DType) -> Eval<()> {
    let Slot {
        dtype,
        shape,
        strides,
        places,
        data,
        ..
    } = env.slot_mut(region.buffer)?;
    let to = *dtype;
    let mut k = 0usize;
    match data {
        TensorData::Float(data) => walk(shape, strides, places.as_deref(), region, |o| {
            if let Some(e) = o.and_then(|o| data.get_mut(o)) {
                *e = to.round_f64(as_f64(values.get(k), from));
            }
            k += 1;
        }),
        TensorData::Int(data) => walk(shape, strides, places.as_deref(), region, |o| {
            if let Some(e) = o.and_then(|o| data.get_mut(o))
                && let Scalar::Int(v) = scalar::cast(values.get(k), from, to)
            {
                *e = v;
            }
            k += 1;
        }),
    }
}

pub(crate) fn copy(env: &mut Env, src: &CRegion, dst: &CRegion) -> Eval<()> {
    let mut s = eval_region(env, src, "copy")?;
    let mut d = eval_region(env, dst, "copy")?;
    if non_unit(&s.extent) != non_unit(&d.extent) {
        copy_base_extents(env, (src, &mut s), (dst, &mut d))?;
    }
    if non_unit(&s.extent) != non_unit(&d.extent) {
        return Err(tile_shape(
            "copy",
            format!(
                "source region {:?} of `{}` and destination region {:?} of `{}` differ in shape",
                s.extent,
                env.buffer_name(s.buffer),
                d.extent,
                env.buffer_name(d.buffer)
            ),
        ));
    }
    env.tick(s.count() as u64)?;
    let (values, from) = gather(env, &s)?;
    scatter(env, &d, &values, from)
}

/// How far from global memory a scope is, as TileLang ranks them when it
/// picks the side of a copy whose extents the copy loops over: global 0,
/// shared 1, fragment and local 2.
fn scope_level(scope: Scope) -> u8 {
    match scope {
        Scope::Global => 0,
        Scope::Shared | Scope::Barrier => 1,
        Scope::Fragment | Scope::Local | Scope::Var => 2,
    }
}

/// TileLang's rule for a copy whose two regions differ in shape (only
/// reachable when an extent is a run-time value: the front end refuses
/// constant ones): the copy loops over the extents of the side in the
/// scope furthest from global memory (the source on a tie), and the other
/// side's dimensions whose extent is not the literal 1 take those of the
/// first side that are not, in order, from their own starts. Its elements
/// outside its buffer then read as zero or are not written, as
/// everywhere. `copy(A[0:n], S)` with a 64-element shared `S` writes all
/// of `S`: `A[i]` where `i < len(A)`, else zero, whatever `n` is. Regions
/// whose counts of such dimensions differ, or whose other side has only
/// literal extents, are left as they are (an error).
fn copy_base_extents(
    env: &Env,
    s: (&CRegion, &mut RegionBox),
    d: (&CRegion, &mut RegionBox),
) -> Eval<()> {
    let src_level = scope_level(env.slot(s.1.buffer)?.scope);
    let dst_level = scope_level(env.slot(d.1.buffer)?.scope);
    let ((base_c, base), (other_c, other)) = if src_level >= dst_level {
        ((s.0, &*s.1), d)
    } else {
        ((d.0, &*d.1), s)
    };
    let unit = |f: &Option<i64>| *f == Some(1);
    if other_c.fixed.iter().all(Option::is_some) {
        return Ok(());
    }
    let wanted: Vec<usize> = base
        .extent
        .iter()
        .zip(&base_c.fixed)
        .filter(|(_, f)| !unit(f))
        .map(|(&e, _)| e)
        .collect();
    if wanted.len() != other_c.fixed.iter().filter(|f| !unit(f)).count() {
        return Ok(());
    }
    let mut next = wanted.into_iter();
    for (e, _) in other
        .extent
        .iter_mut()
        .zip(&other_c.fixed)
        .filter(|(_, f)| !unit(f))
    {
        if let Some(b) = next.next() {
            *e = b;
        }
    }
    Ok(())
}

pub(crate) fn fill(env: &mut Env, dst: &CRegion, value: &Code) -> Eval<()> {
    let d = eval_region(env, dst, "fill")?;
    let value = value.eval(env)?;
    env.tick(d.count() as u64)?;
    let Slot {
        shape,
        strides,
        places,
        data,
        ..
    } = env.slot_mut(d.buffer)?;
    match (data, value) {
        (TensorData::Float(data), Scalar::Float(x)) => {
            walk(shape, strides, places.as_deref(), &d, |o| {
                if let Some(e) = o.and_then(|o| data.get_mut(o)) {
                    *e = x;
                }
            })
        }
        (TensorData::Int(data), Scalar::Int(v)) => {
            walk(shape, strides, places.as_deref(), &d, |o| {
                if let Some(e) = o.and_then(|o| data.get_mut(o)) {
                    *e = v;
                }
            })
        }
        _ => Err(malformed("fill value does not match the buffer's class")),
    }
}

/// The matrix a `gemm` operand region describes: its last two extents when
/// every other extent is 1, else its two non-unit extents.
fn matrix_dims(extent: &[usize]) -> Option<(usize, usize)> {
    let n = extent.len();
    if n >= 2 && extent[..n - 2].iter().all(|&e| e == 1) {
        return Some((extent[n - 2], extent[n - 1]));
    }
    match non_unit(extent)[..] {
        [rows, cols] => Some((rows, cols)),
        _ => None,
    }
}

/// The `cols × rows` transpose of a row-major `rows × cols` matrix.
fn transpose(m: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; m.len()];
    for (i, row) in m.chunks_exact(cols.max(1)).enumerate().take(rows) {
        for (j, &x) in row.iter().enumerate() {
            t[j * rows + i] = x;
        }
    }
    t
}

pub(crate) fn gemm(env: &mut Env, op: &GemmOp) -> Eval<()> {
    let a = eval_region(env, &op.a, "gemm")?;
    let b = eval_region(env, &op.b, "gemm")?;
    let c = eval_region(env, &op.c, "gemm")?;
    let dims = |r: &RegionBox, name: &str| {
        matrix_dims(&r.extent).ok_or_else(|| {
            tile_shape(
                "gemm",
                format!(
                    "operand {name} (region {:?} of `{}`) is not a matrix",
                    r.extent,
                    env.buffer_name(r.buffer)
                ),
            )
        })
    };
    let (a_rows, a_cols) = dims(&a, "A")?;
    let (b_rows, b_cols) = dims(&b, "B")?;
    let (c_rows, c_cols) = dims(&c, "C")?;
    let (m, k) = if op.transpose_a {
        (a_cols, a_rows)
    } else {
        (a_rows, a_cols)
    };
    let (k_b, n) = if op.transpose_b {
        (b_cols, b_rows)
    } else {
        (b_rows, b_cols)
    };
    if k != k_b || m != c_rows || n != c_cols {
        return Err(tile_shape(
            "gemm",
            format!(
                "op(A) is {m}×{k}, op(B) is {k_b}×{n} and C is {c_rows}×{c_cols} \
                 (transpose_A={}, transpose_B={})",
                op.transpose_a, op.transpose_b
            ),
        ));
    }
    let clear = (op.clear_accum)(env)? != 0;
    env.tick(
        (m as u64)
            .saturating_mul(n as u64)
            .saturating_mul(k.max(1) as u64),
    )?;

    let a_raw = gather_f64(env, &a)?;
    let b_raw = gather_f64(env, &b)?;
    // Normalize to A: m×k and B: k×n, row-major.
    let a_mat = if op.transpose_a {
        transpose(&a_raw, a_rows, a_cols)
    } else {
        a_raw
    };
    let b_mat = if op.transpose_b {
        transpose(&b_raw, b_rows, b_cols)
    } else {
        b_raw
    };
    // Products of f16/bf16/f32 values are exact in f64; the sum over k is
    // accumulated in f64 in increasing k and rounded once into C's type.
    let mut acc = vec![0.0f64; m * n];
    if n > 0 && k > 0 {
        for (row, a_row) in acc.chunks_exact_mut(n).zip(a_mat.chunks_exact(k)) {
            for (&a_ik, b_row) in a_row.iter().zip(b_mat.chunks_exact(n)) {
                for (r, &b_kj) in row.iter_mut().zip(b_row) {
                    *r += a_ik * b_kj;
                }
            }
        }
    }
    if !clear {
        let old = gather_f64(env, &c)?;
        for (r, o) in acc.iter_mut().zip(old) {
            *r += o;
        }
    }
    scatter(env, &c, &Column::Float(acc), DType::F64)
}

/// Shape facts of a reduction or scan along `dim` of a buffer of `shape`.
struct Axis {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Axis {
    fn new(shape: &[usize], dim: usize) -> Axis {
        Axis {
            outer: shape[..dim].iter().product(),
            len: shape[dim],
            inner: shape[dim + 1..].iter().product(),
        }
    }
}

/// Every element of `slot` in row-major order.
fn values_f64(slot: &Slot) -> Vec<f64> {
    let v: Vec<f64> = match &slot.data {
        TensorData::Float(v) => v.clone(),
        TensorData::Int(v) => v.iter().map(|&x| int_to_f64(x, slot.dtype)).collect(),
    };
    in_row_major(slot, v)
}

/// Every element of `slot` in row-major order.
fn values_i128(slot: &Slot) -> Vec<i128> {
    let v: Vec<i128> = match &slot.data {
        TensorData::Float(v) => v.iter().map(|&x| x as i128).collect(),
        TensorData::Int(v) => v.iter().map(|&x| int_to_i128(x, slot.dtype)).collect(),
    };
    in_row_major(slot, v)
}

/// `stored` (a slot's storage order) in row-major order.
fn in_row_major<T: Copy + Default>(slot: &Slot, stored: Vec<T>) -> Vec<T> {
    match &slot.places {
        None => stored,
        Some(p) => p
            .iter()
            .map(|&o| stored.get(o).copied().unwrap_or_default())
            .collect(),
    }
}

/// `values` (row-major) in `slot`'s storage order.
fn in_storage<T: Copy>(slot: &Slot, values: &[T]) -> Vec<T> {
    let mut out = values.to_vec();
    if let Some(p) = &slot.places {
        for (&o, &v) in p.iter().zip(values) {
            if let Some(e) = out.get_mut(o) {
                *e = v;
            }
        }
    }
    out
}

/// Replaces every element of `buffer` with `values` (computed in `f64`),
/// rounding each once into the buffer's type.
fn store_all_f64(env: &mut Env, buffer: usize, values: &[f64]) -> Eval<()> {
    let slot = env.slot_mut(buffer)?;
    let values = &in_storage(slot, values)[..];
    let to = slot.dtype;
    match &mut slot.data {
        TensorData::Float(data) => {
            for (e, &x) in data.iter_mut().zip(values) {
                *e = to.round_f64(x);
            }
        }
        TensorData::Int(data) => {
            for (e, &x) in data.iter_mut().zip(values) {
                *e = to.round_f64(x) as i64;
            }
        }
    }
    Ok(())
}

/// Replaces every element of the integer `buffer` with `values`, wrapped.
fn store_all_i128(env: &mut Env, buffer: usize, values: &[i128]) -> Eval<()> {
    let slot = env.slot_mut(buffer)?;
    let values = &in_storage(slot, values)[..];
    let to = slot.dtype;
    match &mut slot.data {
        TensorData::Int(data) => {
            for (e, &x) in data.iter_mut().zip(values) {
                *e = to.wrap_i64(x as i64);
            }
            Ok(())
        }
        TensorData::Float(_) => Err(malformed("integer result for a float buffer")),
    }
}

pub(crate) fn reduce(
    env: &mut Env,
    kind: ReduceKind,
    src: usize,
    dst: usize,
    dim: usize,
    clear: bool,
) -> Eval<()> {
    let s = env.slot(src)?;
    let d = env.slot(dst)?;
    if dim >= s.shape.len() {
        return Err(tile_shape(
            "reduce",
            format!(
                "dimension {dim} is out of range for `{}` of shape {:?}",
                env.buffer_name(src),
                s.shape
            ),
        ));
    }
    let mut expected = s.shape.clone();
    expected.remove(dim);
    if non_unit(&d.shape) != non_unit(&expected) {
        return Err(tile_shape(
            "reduce",
            format!(
                "reducing `{}` of shape {:?} along dimension {dim} gives shape {expected:?}, \
                 but `{}` has shape {:?}",
                env.buffer_name(src),
                s.shape,
                env.buffer_name(dst),
                d.shape
            ),
        ));
    }
    let axis = Axis::new(&s.shape, dim);
    let steps = (axis.outer * axis.len * axis.inner) as u64;
    if s.dtype.is_float() || d.dtype.is_float() {
        let x = values_f64(s);
        let old = values_f64(d);
        let (identity, combine): (f64, fn(f64, f64) -> f64) = match kind {
            ReduceKind::Sum => (0.0, |a, x| a + x),
            ReduceKind::AbsSum => (0.0, |a, x| a + x.abs()),
            ReduceKind::Max => (f64::NEG_INFINITY, nan_max),
            ReduceKind::Min => (f64::INFINITY, nan_min),
            ReduceKind::AbsMax => (0.0, |a, x| nan_max(a, x.abs())),
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => {
                return Err(tile_shape(
                    "reduce",
                    format!(
                        "a bitwise reduction (`{}`) of floating-point `{}`",
                        kind.name(),
                        env.buffer_name(src)
                    ),
                ));
            }
        };
        let out = reduce_along(&axis, &x, &old, clear, identity, combine);
        env.tick(steps)?;
        store_all_f64(env, dst, &out)
    } else {
        let x = values_i128(s);
        let old = values_i128(d);
        let (lo, hi) = d.dtype.int_range().unwrap_or((0, 1));
        let (identity, combine): (i128, fn(i128, i128) -> i128) = match kind {
            ReduceKind::Sum => (0, |a, x| a + x),
            ReduceKind::AbsSum => (0, |a, x| a + x.abs()),
            ReduceKind::Max => (lo, |a, x| a.max(x)),
            ReduceKind::Min => (hi, |a, x| a.min(x)),
            ReduceKind::AbsMax => (0, |a, x| a.max(x.abs())),
            // On the values sign- or zero-extended: the low bits, which
            // the store keeps, are those of the narrow operation.
            ReduceKind::BitAnd => (-1, |a, x| a & x),
            ReduceKind::BitOr => (0, |a, x| a | x),
            ReduceKind::BitXor => (0, |a, x| a ^ x),
        };
        let out = reduce_along(&axis, &x, &old, clear, identity, combine);
        env.tick(steps)?;
        store_all_i128(env, dst, &out)
    }
}

/// Folds `x` along the reduced axis with `combine`, starting from `identity`
/// (with `clear`) or from the destination's current value.
fn reduce_along<T: Copy>(
    axis: &Axis,
    x: &[T],
    old: &[T],
    clear: bool,
    identity: T,
    combine: fn(T, T) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(axis.outer * axis.inner);
    for o in 0..axis.outer {
        for i in 0..axis.inner {
            let mut acc = if clear {
                identity
            } else {
                old.get(o * axis.inner + i).copied().unwrap_or(identity)
            };
            for r in 0..axis.len {
                acc = combine(acc, x[(o * axis.len + r) * axis.inner + i]);
            }
            out.push(acc);
        }
    }
    out
}

pub(crate) fn cumsum(env: &mut Env, src: usize, dst: usize, dim: usize, reverse: bool) -> Eval<()> {
    let s = env.slot(src)?;
    let d = env.slot(dst)?;
    if dim >= s.shape.len() {
        return Err(tile_shape(
            "cumsum",
            format!(
                "dimension {dim} is out of range for `{}` of shape {:?}",
                env.buffer_name(src),
                s.shape
            ),
        ));
    }
    if non_unit(&s.shape) != non_unit(&d.shape) {
        return Err(tile_shape(
            "cumsum",
            format!(
                "`{}` of shape {:?} and `{}` of shape {:?} differ",
                env.buffer_name(src),
                s.shape,
                env.buffer_name(dst),
                d.shape
            ),
        ));
    }
    let axis = Axis::new(&s.shape, dim);
    let count = axis.outer * axis.len * axis.inner;
    let order = |r: usize| if reverse { axis.len - 1 - r } else { r };
    if s.dtype.is_float() || d.dtype.is_float() {
        let x = values_f64(s);
        let mut out = vec![0.0; count];
        for o in 0..axis.outer {
            for i in 0..axis.inner {
                let mut running = 0.0;
                for r in 0..axis.len {
                    let e = (o * axis.len + order(r)) * axis.inner + i;
                    running += x[e];
                    out[e] = running;
                }
            }
        }
        env.tick(count as u64)?;
        store_all_f64(env, dst, &out)
    } else {
        let x = values_i128(s);
        let mut out = vec![0i128; count];
        for o in 0..axis.outer {
            for i in 0..axis.inner {
                let mut running = 0i128;
                for r in 0..axis.len {
                    let e = (o * axis.len + order(r)) * axis.inner + i;
                    running += x[e];
                    out[e] = running;
                }
            }
        }
        env.tick(count as u64)?;
        store_all_i128(env, dst, &out)
    }
}

/// `T.atomic_add`/`T.atomic_max`/`T.atomic_min`: combines the value (converted to
/// the destination's type) into every element of `dst`. Max and min replace
/// an element only when the value compares greater (less), as a
/// compare-and-swap loop on that comparison does: a NaN value never
/// replaces, a NaN element stays, and signed zeros do not replace each other.
pub(crate) fn atomic(env: &mut Env, op: AtomicOp, dst: &CRegion, value: &AtomicSource) -> Eval<()> {
    let name = op.name();
    let d = eval_region(env, dst, name)?;
    // Either one value for every element, or a gathered region.
    let (column, broadcast, from) = match value {
        AtomicSource::Scalar(code, dtype) => {
            let v = code.eval(env)?;
            (Column::Int(Vec::new()), Some(v), *dtype)
        }
        AtomicSource::Region(region) => {
            let s = eval_region(env, region, name)?;
            if non_unit(&s.extent) != non_unit(&d.extent) {
                return Err(tile_shape(
                    name,
                    format!(
                        "value region {:?} of `{}` and destination region {:?} of `{}` differ in shape",
                        s.extent,
                        env.buffer_name(s.buffer),
                        d.extent,
                        env.buffer_name(d.buffer)
                    ),
                ));
            }
            let (column, from) = gather(env, &s)?;
            (column, None, from)
        }
    };
    env.tick(d.count() as u64)?;
    let value_at = |k: usize| broadcast.unwrap_or_else(|| column.get(k));
    let Slot {
        dtype,
        shape,
        strides,
        places,
        data,
        ..
    } = env.slot_mut(d.buffer)?;
    let to = *dtype;
    let mut k = 0usize;
    match data {
        TensorData::Float(data) => walk(shape, strides, places.as_deref(), &d, |o| {
            if let Some(e) = o.and_then(|o| data.get_mut(o)) {
                let v = as_f64(scalar::cast(value_at(k), from, to), to);
                *e = match op {
                    AtomicOp::Add => to.round_f64(*e + v),
                    AtomicOp::Max if v > *e => v,
                    AtomicOp::Min if v < *e => v,
                    AtomicOp::Max | AtomicOp::Min => *e,
                };
            }
            k += 1;
        }),
        TensorData::Int(data) => walk(shape, strides, places.as_deref(), &d, |o| {
            if let Some(e) = o.and_then(|o| data.get_mut(o))
                && let Scalar::Int(v) = scalar::cast(value_at(k), from, to)
            {
                let (new, old) = (int_to_i128(v, to), int_to_i128(*e, to));
                *e = match op {
                    AtomicOp::Add => to.wrap_i64(e.wrapping_add(v)),
                    AtomicOp::Max if new > old => v,
                    AtomicOp::Min if new < old => v,
                    AtomicOp::Max | AtomicOp::Min => *e,
                };
            }
            k += 1;
        }),
    }
}
