//! Warp-wide matrix loads (`ldmatrix`) and stores (`stmatrix`) executed
//! through the target description's fragment of the instruction.
//!
//! For each warp: lane `rows·j + r` supplies the element index where row
//! `r` of matrix `j` starts in the shared buffer; for every matrix `j` and
//! every lane `l`, slot `e` of the load's fragment (the transposed one with
//! `trans`) names tile element `(row, col)`, and the lane receives
//! `src[start(j, row) + col]` into `dst[offset + per·j + e]` (`per` slots
//! per matrix). Rows must lie inside the buffer and start on the load's row
//! alignment. Every lane of a warp that runs the load must be active. The
//! reads are checked for races like any other shared read.
//!
//! A store moves the same elements the other way: lane `l`'s
//! `src[offset + per·j + e]` is written to `dst[start(j, row) + col]` by
//! that lane, checked for races like any other shared write.

use super::error::{ExecErrorKind, SimtError};
use super::exec::Machine;
use super::value::Val;
use crate::thread::{Expr, FragRef, SharedId, Stmt};

/// The shape of one matrix move and where every lane's rows start.
struct Rows {
    rows: usize,
    per: usize,
    lanes: usize,
    align: u64,
    row_bytes: u32,
    /// Tile `(row, col)` of every `(lane, slot)`.
    coords: Vec<(usize, i64)>,
    /// Per thread: the element index its `index` names.
    starts: Vec<i64>,
}

/// One element of a matrix move: the thread holding it, its slot in the
/// thread's run of registers, its index in the shared buffer.
type Element = (usize, i64, i64);

impl Rows {
    /// Every element one warp's move of `count` matrices touches, as
    /// `(thread, slot, index)`: the lane `thread` holds it in slot `slot`
    /// of its run of registers, and it lives at element `index` of the
    /// shared buffer. Fails with the supplying thread and why when a row
    /// start is not aligned.
    fn elements(&self, warp: usize, count: u32) -> Result<Vec<Element>, (usize, String)> {
        let mut out = Vec::with_capacity(count as usize * self.lanes * self.per);
        for j in 0..count as usize {
            for l in 0..self.lanes {
                for e in 0..self.per {
                    let (row, col) = self.coords[l * self.per + e];
                    let supplier = warp + self.rows * j + row;
                    let start = self.starts.get(supplier).copied().unwrap_or(-1);
                    if start < 0 || !(start as u64).is_multiple_of(self.align) {
                        return Err((
                            supplier,
                            format!(
                                "row start {start} is not a multiple of {} elements",
                                self.align
                            ),
                        ));
                    }
                    out.push((warp + l, (self.per * j + e) as i64, start + col));
                }
            }
        }
        Ok(out)
    }
}

/// What a matrix move `desc` needs before it touches memory: its fragment
/// coordinates and the row starts every active thread supplies.
#[allow(clippy::too_many_arguments)]
fn prepare(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    desc: &crate::target::MatrixLoad,
    trans: bool,
    index: &Expr,
    mask: &[bool],
    bad: &dyn Fn(String) -> ExecErrorKind,
) -> Result<Rows, SimtError> {
    let fragment = match desc.fragment(trans) {
        Ok(Some(f)) => f,
        Ok(None) => return Err(machine.fail(s, None, bad("no transposed form".into()))),
        Err(e) => return Err(machine.fail(s, None, bad(e.to_string()))),
    };
    let rows = desc.rows as usize;
    let per = fragment.slots() as usize;
    let lanes = fragment.threads() as usize;
    let elem_bytes = u64::from(desc.element_bits / 8).max(1);
    let align = (u64::from(desc.row_alignment_bytes) / elem_bytes).max(1);
    // Tile coordinates of every (lane, slot).
    let mut coords = Vec::with_capacity(lanes * per);
    for l in 0..lanes {
        for e in 0..per {
            match fragment.element(l as u64, e as u64) {
                Ok(c) if c.len() == 2 => coords.push((c[0] as usize, c[1] as i64)),
                Ok(_) => {
                    return Err(machine.fail(s, None, bad("a fragment that is not 2-D".into())));
                }
                Err(e) => return Err(machine.fail(s, None, bad(e.to_string()))),
            }
        }
    }
    let mut starts = vec![0i64; machine.n];
    for t in Machine::active_threads(mask) {
        starts[t] = machine
            .eval(index, t)
            .map_err(|k| machine.fail(s, Some(t), k))?
            .as_i64();
    }
    Ok(Rows {
        rows,
        per,
        lanes,
        align,
        row_bytes: desc.row_bytes,
        coords,
        starts,
    })
}

/// The first thread of every warp that runs the move, after checking that
/// all its lanes do; notes each warp's row accesses for the bank model.
fn warps(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    rows: &Rows,
    count: u32,
    buffer: SharedId,
    mask: &[bool],
    bad: &dyn Fn(String) -> ExecErrorKind,
) -> Result<Vec<usize>, SimtError> {
    let simt = machine.cx.simt.max(1) as usize;
    let mut out = Vec::new();
    for warp in (0..machine.n).step_by(simt) {
        let members = warp..(warp + simt).min(machine.n);
        let active = members.clone().filter(|&t| mask[t]).count();
        if active == 0 {
            continue;
        }
        if active != simt || rows.lanes != simt {
            return Err(machine.fail(
                s,
                Some(warp),
                bad(format!(
                    "{active} of the {simt} lanes of the warp at thread {warp} are active"
                )),
            ));
        }
        // Each matrix's rows are one phase of the banks: `rows` accesses of
        // a row's bytes.
        for j in 0..count as usize {
            for r in 0..rows.rows {
                let t = warp + rows.rows * j + r;
                let start = rows.starts.get(t).copied().unwrap_or(0);
                machine.record_shared_access(buffer.index(), t, start, rows.row_bytes);
            }
        }
        out.push(warp);
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn execute(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    load: &str,
    count: u32,
    trans: bool,
    dst: FragRef,
    src: SharedId,
    index: &Expr,
    mask: &[bool],
) -> Result<(), SimtError> {
    let bad = |reason: String| ExecErrorKind::MatrixLoad {
        load: load.to_string(),
        reason,
    };
    let Some(desc) = machine.cx.target.matrix_load(load).cloned() else {
        return Err(machine.fail(s, None, bad("not in the target".into())));
    };
    let rows = prepare(machine, s, &desc, trans, index, mask, &bad)?;
    let key = super::exec::stmt_key(s);
    let mut writes: Vec<(usize, i64, Val)> = Vec::new();
    for warp in warps(machine, s, &rows, count, src, mask, &bad)? {
        machine.stats.matrix_loads += 1;
        let elements = rows
            .elements(warp, count)
            .map_err(|(t, why)| machine.fail(s, Some(t), bad(why)))?;
        for (t, slot, at) in elements {
            let v = machine
                .shared_element(src.index(), at, t as u32, key)
                .map_err(|k| machine.fail(s, Some(t), k))?;
            writes.push((t, i64::from(dst.offset) + slot, v));
        }
    }
    for (t, i, v) in writes {
        machine
            .write_reg(dst.array.index(), i, t, v)
            .map_err(|k| machine.fail(s, Some(t), k))?;
    }
    Ok(())
}

/// A matrix store (module documentation).
#[allow(clippy::too_many_arguments)]
pub(super) fn execute_store(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    store: &str,
    count: u32,
    trans: bool,
    dst: SharedId,
    index: &Expr,
    src: FragRef,
    mask: &[bool],
) -> Result<(), SimtError> {
    let bad = |reason: String| ExecErrorKind::MatrixStore {
        store: store.to_string(),
        reason,
    };
    let Some(desc) = machine.cx.target.matrix_store(store).map(|d| d.as_load()) else {
        return Err(machine.fail(s, None, bad("not in the target".into())));
    };
    let rows = prepare(machine, s, &desc, trans, index, mask, &bad)?;
    let key = super::exec::stmt_key(s);
    for warp in warps(machine, s, &rows, count, dst, mask, &bad)? {
        machine.stats.matrix_stores += 1;
        let elements = rows
            .elements(warp, count)
            .map_err(|(t, why)| machine.fail(s, Some(t), bad(why)))?;
        for (t, slot, at) in elements {
            let v = machine
                .reg_element(src.array.index(), i64::from(src.offset) + slot, t)
                .map_err(|k| machine.fail(s, Some(t), k))?;
            machine
                .shared_element_write(dst.index(), at, t as u32, v, key)
                .map_err(|k| machine.fail(s, Some(t), k))?;
        }
    }
    Ok(())
}
