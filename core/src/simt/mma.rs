//! Matrix atoms executed through the fragment layouts of the target
//! description.
//!
//! For each issuing group (consecutive `issue.threads` threads: a warp, a
//! wavefront or a warpgroup) the atom gathers its A (m×k), B (k×n) and C
//! (m×n) tiles from the group's local arrays: slot `s` of thread `t` (`t`
//! counted from the group's first thread) holds tile element
//! `fragment(t, s)`, where element index `row + rows·col` names
//! `(row, col)`. Replicated elements must agree. It then computes
//! `D = C + A·B` with every product exact in `f64`, the sum over `k` in
//! increasing order in `f64`, added to C and rounded once into the
//! accumulator type, and scatters D through the accumulator fragment. A
//! group must be entirely active or entirely inactive. An `async_mma`
//! reads its shared operands through their descriptor layouts and, when
//! A comes from registers, A through the atom's A fragment, when issued.

use super::error::{ExecErrorKind, SimtError};
use super::exec::Machine;
use super::value::Val;
use crate::ir::DType;
use crate::target::{MatrixAtom, OperandRole};
use crate::thread::{AsyncA, Expr, FragRef, SharedMatrix, Stmt};

/// Element indices of every (thread, slot) of an atom's operands.
pub(crate) struct AtomTables {
    group: usize,
    m: usize,
    n: usize,
    k: usize,
    /// A, B, accumulator: `(slots, element index per thread × slot)`.
    operands: [(usize, Vec<usize>); 3],
}

fn operand_table(
    atom: &MatrixAtom,
    role: OperandRole,
    n: u32,
) -> Result<(usize, Vec<usize>), String> {
    let fragment = atom
        .fragment_for_n(role, n)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("operand {} has no register fragment", role.name()))?;
    let threads = fragment.threads() as usize;
    let slots = fragment.slots() as usize;
    let size = fragment.tile_size();
    let mut table = Vec::with_capacity(threads * slots);
    for t in 0..threads {
        for s in 0..slots {
            let index = fragment
                .element_index(t as u64, s as u64)
                .map_err(|e| e.to_string())?;
            if index < 0 || index as u64 >= size {
                return Err(format!("fragment maps ({t}, {s}) outside the tile"));
            }
            table.push(index as usize);
        }
    }
    Ok((slots, table))
}

fn tables(atom: &MatrixAtom, n: u32) -> Result<AtomTables, String> {
    let group = atom.issue.threads as usize;
    let operands = [
        operand_table(atom, OperandRole::A, n)?,
        operand_table(atom, OperandRole::B, n)?,
        operand_table(atom, OperandRole::Accumulator, n)?,
    ];
    for (slots, table) in &operands {
        if table.len() != group * slots {
            return Err("a fragment's thread count is not the issuing group's".to_string());
        }
    }
    Ok(AtomTables {
        group,
        m: atom.shape.m as usize,
        n: n as usize,
        k: atom.shape.k as usize,
        operands,
    })
}

pub(super) fn execute(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    atom_name: &str,
    n: Option<u32>,
    frags: [FragRef; 4],
    mask: &[bool],
) -> Result<(), SimtError> {
    let atom_error = |reason: String| ExecErrorKind::Atom {
        atom: atom_name.to_string(),
        reason,
    };
    let Some(atom) = machine.cx.target.matrix_atom(atom_name) else {
        return Err(machine.fail(s, None, atom_error("not in the target".to_string())));
    };
    let n = n.unwrap_or(atom.shape.n);
    let key = (atom_name.to_string(), n);
    if !machine.atoms.contains_key(&key) {
        let t = tables(atom, n).map_err(|r| machine.fail(s, None, atom_error(r)))?;
        machine.atoms.insert(key.clone(), t);
    }
    let Some(tab) = machine.atoms.remove(&key) else {
        return Err(machine.fail(s, None, atom_error("no tables".to_string())));
    };
    let result = run_groups(machine, s, atom_name, &tab, frags, mask);
    machine.atoms.insert(key, tab);
    result
}

fn run_groups(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    atom_name: &str,
    tab: &AtomTables,
    frags: [FragRef; 4],
    mask: &[bool],
) -> Result<(), SimtError> {
    let [fa, fb, fc, fd] = frags;
    let reg_info = |f: FragRef| {
        machine
            .cx
            .k
            .registers
            .get(f.array.index())
            .map_or((DType::F32, 1), |r| (r.dtype, r.len() as usize))
    };
    let infos = [reg_info(fa), reg_info(fb), reg_info(fc), reg_info(fd)];
    let groups = machine.n / tab.group.max(1);
    for g in 0..groups {
        let base = g * tab.group;
        let active = (base..base + tab.group).filter(|&t| mask[t]).count();
        if active == 0 {
            continue;
        }
        if active != tab.group {
            return Err(machine.fail(
                s,
                None,
                ExecErrorKind::PartialIssueGroup {
                    atom: atom_name.to_string(),
                    index: g as u32,
                    active: active as u32,
                    group: tab.group as u32,
                },
            ));
        }
        let dims = [(tab.m, tab.k), (tab.k, tab.n), (tab.m, tab.n)];
        let names = ["a", "b", "c"];
        let mut tiles: Vec<Vec<Option<f64>>> = Vec::with_capacity(3);
        for (o, f) in [fa, fb, fc].into_iter().enumerate() {
            let (rows, cols) = dims[o];
            let (slots, table) = &tab.operands[o];
            let (dtype, len) = infos[o];
            let mut tile = vec![None; rows * cols];
            for tl in 0..tab.group {
                for slot in 0..*slots {
                    let element = table[tl * slots + slot];
                    let reg = machine.regs.get(f.array.index());
                    let index = (base + tl) * len + f.offset as usize + slot;
                    let Some(v) = reg.and_then(|r| r.get(index)).copied() else {
                        return Err(machine.fail(
                            s,
                            Some(base + tl),
                            ExecErrorKind::Malformed("fragment outside its array".into()),
                        ));
                    };
                    let x = v.as_f64(dtype);
                    match tile.get_mut(element) {
                        Some(place @ None) => *place = Some(x),
                        Some(Some(old)) if old.to_bits() != x.to_bits() => {
                            return Err(machine.fail(
                                s,
                                Some(base + tl),
                                ExecErrorKind::ReplicaMismatch {
                                    atom: atom_name.to_string(),
                                    operand: names[o],
                                    row: (element % rows) as u64,
                                    col: (element / rows) as u64,
                                },
                            ));
                        }
                        _ => {}
                    }
                }
            }
            tiles.push(tile);
        }
        let value = |tile: &Vec<Option<f64>>, row: usize, col: usize, rows: usize| {
            tile.get(row + rows * col)
                .copied()
                .flatten()
                .unwrap_or(f64::NAN)
        };
        let acc_dtype = infos[3].0;
        let mut d = vec![Val::zero(acc_dtype); tab.m * tab.n];
        for i in 0..tab.m {
            for j in 0..tab.n {
                let mut sum = 0.0;
                for kk in 0..tab.k {
                    sum += value(&tiles[0], i, kk, tab.m) * value(&tiles[1], kk, j, tab.k);
                }
                let exact = value(&tiles[2], i, j, tab.m) + sum;
                d[i + tab.m * j] = if acc_dtype.is_float() {
                    Val::F(acc_dtype.round_f64(exact))
                } else {
                    Val::I(acc_dtype.round_f64(exact) as i64)
                };
            }
        }
        let (slots, table) = &tab.operands[2];
        for tl in 0..tab.group {
            for slot in 0..*slots {
                let element = table[tl * slots + slot];
                let v = d.get(element).copied().unwrap_or(Val::zero(acc_dtype));
                let index = fd.offset as usize + slot;
                let t = base + tl;
                machine
                    .write_reg(fd.array.index(), index as i64, t, v)
                    .map_err(|k| machine.fail(s, Some(t), k))?;
            }
        }
        machine.stats.mma += 1;
    }
    Ok(())
}

/// Runs an `async_mma`: for each issuing group, A (m×k) and B (k×n) are
/// read from shared memory through their canonical layouts
/// ([`SharedMatrix::offset`] and the swizzle, relative to the buffer's
/// start, which the verifier keeps aligned to the swizzle pattern) and D
/// through the accumulator fragment; D = A·B (+ D) is computed as for
/// `mma` and written at once. D's slots are marked pending for every
/// thread of the group, and the shared elements read stay marked as read,
/// until an `async_mma_wait` retires them (the group's first thread's
/// wait retires the reads): a write to one of them meanwhile is an error,
/// as the hardware may still be reading it. The
/// operand indices and the accumulate flag must agree across the group.
#[allow(clippy::too_many_arguments)]
pub(super) fn execute_async(
    machine: &mut Machine<'_, '_>,
    s: &Stmt,
    atom_name: &str,
    n: u32,
    d: FragRef,
    (a, b): (&AsyncA, &SharedMatrix),
    accumulate: &Expr,
    mask: &[bool],
) -> Result<(), SimtError> {
    let atom_error = |reason: String| ExecErrorKind::Atom {
        atom: atom_name.to_string(),
        reason,
    };
    let Some(atom) = machine.cx.target.matrix_atom(atom_name) else {
        return Err(machine.fail(s, None, atom_error("not in the target".to_string())));
    };
    let (m, k) = (atom.shape.m as usize, atom.shape.k as usize);
    let group = atom.issue.threads as usize;
    let (slots, table) = operand_table(atom, OperandRole::Accumulator, n)
        .map_err(|r| machine.fail(s, None, atom_error(r)))?;
    let n = n as usize;
    let (acc_dtype, acc_len) = machine
        .cx
        .k
        .registers
        .get(d.array.index())
        .map_or((DType::F32, 1), |r| (r.dtype, r.len() as usize));
    let key = super::exec::stmt_key(s);
    // The operands read from shared memory (0: A, 1: B), and A's
    // registers with its fragment table when A comes from them.
    let (operands, a_regs): (Vec<(usize, &SharedMatrix)>, _) = match a {
        AsyncA::Shared(m) => (vec![(0, m), (1, b)], None),
        AsyncA::Registers(f) => {
            let (a_slots, a_table) = operand_table(atom, OperandRole::A, n as u32)
                .map_err(|r| machine.fail(s, None, atom_error(r)))?;
            let (a_dtype, a_len) = machine
                .cx
                .k
                .registers
                .get(f.array.index())
                .map_or((DType::F16, 1), |r| (r.dtype, r.len() as usize));
            (vec![(1, b)], Some((*f, a_slots, a_table, a_dtype, a_len)))
        }
    };
    for g in 0..machine.n / group.max(1) {
        let base = g * group;
        let active = (base..base + group).filter(|&t| mask[t]).count();
        if active == 0 {
            continue;
        }
        if active != group {
            return Err(machine.fail(
                s,
                None,
                ExecErrorKind::PartialIssueGroup {
                    atom: atom_name.to_string(),
                    index: g as u32,
                    active: active as u32,
                    group: group as u32,
                },
            ));
        }
        // Uniform operands: the group's first thread decides, the others
        // must agree.
        let mut starts = [0i64; 2];
        let mut acc = true;
        for t in base..base + group {
            let mut here = [0i64; 2];
            for &(o, op) in &operands {
                here[o] = machine
                    .eval(&op.index, t)
                    .map_err(|e| machine.fail(s, Some(t), e))?
                    .as_i64();
            }
            let a = machine
                .eval(accumulate, t)
                .map_err(|e| machine.fail(s, Some(t), e))?
                .is_true();
            if t == base {
                (starts, acc) = (here, a);
            } else if here != starts || a != acc {
                return Err(machine.fail(
                    s,
                    Some(t),
                    atom_error("operands differ across the issuing group".to_string()),
                ));
            }
        }
        // Gather A (m×k, row-major) and B (k×n, row-major).
        let mut tiles: [Vec<f64>; 2] = [vec![0.0; m * k], vec![0.0; k * n]];
        let mut reads = Vec::with_capacity(m * k + k * n);
        if let Some((f, a_slots, a_table, a_dtype, a_len)) = &a_regs {
            for tl in 0..group {
                for slot in 0..*a_slots {
                    let element = a_table[tl * a_slots + slot];
                    let index = (base + tl) * a_len + f.offset as usize + slot;
                    let v = machine
                        .regs
                        .get(f.array.index())
                        .and_then(|r| r.get(index))
                        .copied()
                        .ok_or_else(|| {
                            machine.fail(
                                s,
                                Some(base + tl),
                                ExecErrorKind::Malformed("fragment outside its array".into()),
                            )
                        })?;
                    if let Some(place) = tiles[0].get_mut((element % m) * k + element / m) {
                        *place = v.as_f64(*a_dtype);
                    }
                }
            }
        }
        for &(o, op) in &operands {
            let b = op.buffer.index();
            let Some(buf) = machine.cx.k.shared.get(b) else {
                return Err(machine.fail(s, None, atom_error("no such buffer".to_string())));
            };
            let (dtype, len) = (buf.dtype, buf.len);
            let e = dtype.bytes();
            let mn_extent = if o == 0 { m } else { n };
            for mn in 0..mn_extent {
                for kk in 0..k {
                    let start = starts[o].saturating_mul(e as i64);
                    let byte = start.saturating_add(op.offset(mn as u64, kk as u64, e) as i64);
                    let byte = if byte < 0 {
                        byte
                    } else {
                        SharedMatrix::swizzle_address(op.swizzle, byte as u64) as i64
                    };
                    let element = byte.div_euclid(e as i64);
                    if byte < 0 || byte % e as i64 != 0 || element as u64 >= len {
                        return Err(machine.fail(
                            s,
                            Some(base),
                            ExecErrorKind::OutOfBounds {
                                space: "shared",
                                buffer: buf.name.clone(),
                                start: element,
                                end: element.saturating_add(1),
                                len,
                            },
                        ));
                    }
                    let v = machine
                        .shared_read(b, element as usize, base as u32, key)
                        .map_err(|f| machine.fail(s, Some(base), f))?;
                    reads.push((b, element as usize));
                    let x = v.as_f64(dtype);
                    if o == 0 {
                        tiles[0][mn * k + kk] = x;
                    } else {
                        tiles[1][kk * n + mn] = x;
                    }
                }
            }
        }
        // Old D through the accumulator fragment (element `row + m·col`).
        let mut dtile = vec![0.0f64; m * n];
        for tl in 0..group {
            for slot in 0..slots {
                let element = table[tl * slots + slot];
                let index = (base + tl) * acc_len + d.offset as usize + slot;
                let v = machine
                    .regs
                    .get(d.array.index())
                    .and_then(|r| r.get(index))
                    .copied()
                    .ok_or_else(|| {
                        machine.fail(
                            s,
                            Some(base + tl),
                            ExecErrorKind::Malformed("fragment outside its array".into()),
                        )
                    })?;
                if let Some(place) = dtile.get_mut(element) {
                    *place = if acc { v.as_f64(acc_dtype) } else { 0.0 };
                }
            }
        }
        for tl in 0..group {
            let t = base + tl;
            for slot in 0..slots {
                let element = table[tl * slots + slot];
                let (row, col) = (element % m, element / m);
                let mut sum = 0.0;
                for kk in 0..k {
                    sum += tiles[0][row * k + kk] * tiles[1][kk * n + col];
                }
                let exact = dtile.get(element).copied().unwrap_or(f64::NAN) + sum;
                let index = t * acc_len + d.offset as usize + slot;
                if let Some(place) = machine
                    .regs
                    .get_mut(d.array.index())
                    .and_then(|r| r.get_mut(index))
                {
                    *place = Val::F(acc_dtype.round_f64(exact));
                }
            }
            let lo = d.offset as usize;
            let mine = if tl == 0 {
                std::mem::take(&mut reads)
            } else {
                Vec::new()
            };
            machine.mma_issue(t, (d.array.index(), lo, lo + slots - 1), key, mine);
        }
        machine.stats.mma += 1;
    }
    Ok(())
}
