//! Which PTX a target description asks for.
//!
//! The description's `arch` names the GPU architecture (`sm_80`). Each
//! architecture gets the lowest PTX ISA version that knows its target
//! string (PTX ISA, `.target` directive): sm_80 7.0, sm_86 7.1, sm_89 and
//! sm_90 7.8, sm_90a 8.0. Every instruction the emitter uses exists at
//! those versions on those targets, except where [`PtxTarget`] says
//! otherwise and the emitter takes another route (bf16 atomics, integer to
//! bf16 conversions).

use tilec_core::target::TargetDescription;

use super::PtxError;

/// The facts emission depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PtxTarget {
    /// The `.target` string.
    pub sm: String,
    /// The `.version` as (major, minor).
    pub version: (u32, u32),
    /// The compute capability times ten (80, 86, 89, 90).
    pub capability: u32,
    /// Lanes per warp.
    pub warp: u32,
}

impl PtxTarget {
    pub fn new(target: &TargetDescription) -> Result<PtxTarget, PtxError> {
        let arch = target.arch.as_str();
        let (version, capability) = match arch {
            "sm_80" => ((7, 0), 80),
            "sm_86" => ((7, 1), 86),
            "sm_89" => ((7, 8), 89),
            "sm_90" => ((7, 8), 90),
            "sm_90a" => ((8, 0), 90),
            _ => {
                return Err(PtxError::Target {
                    arch: arch.to_string(),
                    reason: "the PTX emitter serves sm_80, sm_86, sm_89, sm_90 and sm_90a"
                        .to_string(),
                });
            }
        };
        let warp = target.simt_width().unwrap_or(0);
        if warp != 32 {
            return Err(PtxError::Target {
                arch: arch.to_string(),
                reason: format!("the description's SIMT width is {warp}, PTX warps have 32 lanes"),
            });
        }
        Ok(PtxTarget {
            sm: arch.to_string(),
            version,
            capability,
            warp,
        })
    }

    /// `red.global.add.noftz.bf16` (sm_90, PTX 7.8).
    pub fn has_bf16_atomic_add(&self) -> bool {
        self.capability >= 90
    }
}
