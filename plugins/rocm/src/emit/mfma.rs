//! MFMA matrix atoms: which LLVM intrinsic runs a described atom, and the
//! check that the description's fragment layouts are the hardware's.
//!
//! The hardware layouts (AMD matrix instruction calculator, CDNA2 and
//! CDNA3, cross-checked with composable_kernel's `xdlops_gemm.hpp`), for
//! lane `l` of the wavefront and vector element `e`:
//!
//! | instruction | A\[i\]\[k\] | B\[k\]\[j\] | D\[i\]\[j\] |
//! |---|---|---|---|
//! | 32×32×8 | `l = i + 32·(k/4)`, `e = k%4` | `l = j + 32·(k/4)`, `e = k%4` | `l = j + 32·((i/4)%2)`, `e = 4·(i/8) + i%4` |
//! | 16×16×16 | `l = i + 16·(k/4)`, `e = k%4` | `l = j + 16·(k/4)`, `e = k%4` | `l = j + 16·(i/4)`, `e = i%4` |
//!
//! The intrinsics take A and B as `<4 x half>` (or `<4 x i16>` holding
//! bf16 bits for the `.1k` forms, as LLVM 19 requires) and the accumulator
//! as `<16 x float>` or `<4 x float>`; vector element `e` is the
//! fragment slot `e` of the thread-level IR. This is the hardware's D, not
//! TileLang's transposed C fragment.

use tilec_core::ir::DType;
use tilec_core::target::{MatrixAtom, OperandRole};

/// One intrinsic call shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// `llvm.amdgcn.mfma.f32.32x32x8f16` and friends.
    pub intrinsic: String,
    /// `half` or `i16` (bf16 bits).
    pub input_type: &'static str,
    /// Accumulator slots per lane: 16 or 4.
    pub acc_slots: u32,
}

impl Call {
    /// The intrinsic for `atom` with these register types.
    pub fn select(
        atom: &MatrixAtom,
        a: DType,
        b: DType,
        c: DType,
        d: DType,
    ) -> Result<Call, String> {
        let shape = (atom.shape.m, atom.shape.n, atom.shape.k);
        let (name, acc_slots) = match shape {
            (32, 32, 8) => ("32x32x8", 16),
            (16, 16, 16) => ("16x16x16", 4),
            _ => {
                return Err(format!(
                    "matrix atom `{}` of shape {}x{}x{} (the rocm backend issues 32x32x8 and 16x16x16 MFMA)",
                    atom.name, shape.0, shape.1, shape.2
                ));
            }
        };
        if a != b || c != DType::F32 || d != DType::F32 {
            return Err(format!(
                "matrix atom `{}` with operand types {a}, {b}, {c} -> {d}",
                atom.name
            ));
        }
        let (suffix, input_type) = match a {
            DType::F16 => ("f16", "half"),
            DType::BF16 => ("bf16.1k", "i16"),
            _ => {
                return Err(format!(
                    "matrix atom `{}` with {a} inputs (MFMA here takes f16 or bf16)",
                    atom.name
                ));
            }
        };
        Ok(Call {
            intrinsic: format!("llvm.amdgcn.mfma.f32.{name}{suffix}"),
            input_type,
            acc_slots,
        })
    }

    /// The declaration line.
    pub fn declaration(&self) -> String {
        let t = self.input_type;
        let n = self.acc_slots;
        format!(
            "declare <{n} x float> @{}(<4 x {t}>, <4 x {t}>, <{n} x float>, i32 immarg, i32 immarg, i32 immarg)",
            self.intrinsic
        )
    }
}

/// The hardware's (row, column) of slot `e` of lane `l` for an atom of
/// shape `m × n × k` (32×32×8 or 16×16×16).
pub fn hardware_element(m: u32, role: OperandRole, lane: u64, slot: u64) -> Option<[u64; 2]> {
    let m = u64::from(m);
    // Lanes per block of K: 32 for 32×32×8, 16 for 16×16×16.
    let lanes = m;
    Some(match role {
        OperandRole::A => [lane % lanes, 4 * (lane / lanes) + slot],
        OperandRole::B => [4 * (lane / lanes) + slot, lane % lanes],
        OperandRole::Accumulator if m == 32 => {
            [8 * (slot / 4) + 4 * (lane / 32) + slot % 4, lane % 32]
        }
        OperandRole::Accumulator if m == 16 => [4 * (lane / 16) + slot, lane % 16],
        OperandRole::Accumulator => return None,
    })
}

/// Checks every (lane, slot) of every operand of `atom` against the
/// hardware layout.
pub fn check_fragments(atom: &MatrixAtom) -> Result<(), String> {
    let (m, n, k) = (atom.shape.m, atom.shape.n, atom.shape.k);
    if !matches!((m, n, k), (32, 32, 8) | (16, 16, 16)) {
        return Err(format!("atom `{}` is not a known MFMA shape", atom.name));
    }
    for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
        let fragment = atom
            .fragment(role)
            .map_err(|e| format!("atom `{}`: {} fragment: {e}", atom.name, role.name()))?
            .ok_or_else(|| {
                format!(
                    "atom `{}` has no {} register fragment",
                    atom.name,
                    role.name()
                )
            })?;
        let slots = if role == OperandRole::Accumulator {
            u64::from(m * n / 64)
        } else {
            4
        };
        if fragment.threads() != 64 || fragment.slots() != slots {
            return Err(format!(
                "atom `{}`: the {} fragment has {} threads × {} slots, the hardware 64 × {slots}",
                atom.name,
                role.name(),
                fragment.threads(),
                fragment.slots()
            ));
        }
        for lane in 0..64 {
            for slot in 0..slots {
                let described = fragment
                    .element(lane, slot)
                    .map_err(|e| format!("atom `{}`: {e}", atom.name))?;
                let hardware = hardware_element(m, role, lane, slot)
                    .ok_or_else(|| format!("atom `{}`: no hardware layout", atom.name))?;
                if described.as_slice() != hardware.as_slice() {
                    return Err(format!(
                        "atom `{}`: the description puts slot {slot} of lane {lane} of {} at {described:?}, the hardware at {hardware:?}",
                        atom.name,
                        role.name()
                    ));
                }
            }
        }
    }
    Ok(())
}
