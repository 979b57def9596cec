//! Warp-wide matrix loads (`ldmatrix`) executed through the target
//! description's fragment of the load.
//!
//! For each warp: lane `rows·j + r` supplies the element index where row
//! `r` of matrix `j` starts in the shared buffer; for every matrix `j` and
//! every lane `l`, slot `e` of the load's fragment (the transposed one with
//! `trans`) names tile element `(row, col)`, and the lane receives
//! `src[start(j, row) + col]` into `dst[offset + per·j + e]` (`per` slots
//! per matrix). Rows must lie inside the buffer and start on the load's row
//! alignment. Every lane of a warp that runs the load must be active. The
//! reads are checked for races like any other shared read.

use super::error::{ExecErrorKind, SimtError};
use super::exec::Machine;
use super::value::Val;
use crate::thread::{Expr, FragRef, SharedId, Stmt};

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
    let Some(desc) = machine.cx.target.matrix_load(load) else {
        return Err(machine.fail(s, None, bad("not in the target".into())));
    };
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
    let simt = machine.cx.simt.max(1) as usize;
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
    let key = super::exec::stmt_key(s);
    for t in Machine::active_threads(mask) {
        starts[t] = machine
            .eval(index, t)
            .map_err(|k| machine.fail(s, Some(t), k))?
            .as_i64();
    }
    let mut writes: Vec<(usize, i64, Val)> = Vec::new();
    for warp in (0..machine.n).step_by(simt) {
        let members = warp..(warp + simt).min(machine.n);
        let active = members.clone().filter(|&t| mask[t]).count();
        if active == 0 {
            continue;
        }
        if active != simt || lanes != simt {
            return Err(machine.fail(
                s,
                Some(warp),
                bad(format!(
                    "{active} of the {simt} lanes of the warp at thread {warp} are active"
                )),
            ));
        }
        machine.stats.matrix_loads += 1;
        // Each matrix's rows are one phase of the banks: `rows` accesses of
        // a row's bytes.
        for j in 0..count as usize {
            for r in 0..rows {
                let t = warp + rows * j + r;
                let start = starts.get(t).copied().unwrap_or(0);
                machine.record_shared_access(src.index(), t, start, desc.row_bytes);
            }
        }
        for j in 0..count as usize {
            for l in 0..lanes {
                for e in 0..per {
                    let (row, col) = coords[l * per + e];
                    let supplier = warp + rows * j + row;
                    let start = starts.get(supplier).copied().unwrap_or(-1);
                    if start < 0 || !(start as u64).is_multiple_of(align) {
                        return Err(machine.fail(
                            s,
                            Some(supplier),
                            bad(format!(
                                "row start {start} is not a multiple of {align} elements"
                            )),
                        ));
                    }
                    let at = start + col;
                    let v = machine
                        .shared_element(src.index(), at, (warp + l) as u32, key)
                        .map_err(|k| machine.fail(s, Some(warp + l), k))?;
                    writes.push((warp + l, i64::from(dst.offset) + (per * j + e) as i64, v));
                }
            }
        }
    }
    for (t, i, v) in writes {
        machine
            .write_reg(dst.array.index(), i, t, v)
            .map_err(|k| machine.fail(s, Some(t), k))?;
    }
    Ok(())
}
