//! `warp-specialize`: chooses whether a bulk-copy pipeline gets producer
//! threads of its own, and writes it into the loop's `schedule`.
//!
//! # Algorithm
//! The split into roles is done by the lowering to threads
//! (`lower/ws.rs`, algorithm at its top); this pass runs its choice and
//! records it. A kernel is specialized when the target has named
//! barriers, the function does not set `tl.disable_warp_specialized`,
//! its one pipelined loop is a statement of the kernel body filled by
//! bulk tensor copies (`bulk(s)`) and released by the issuing groups of
//! shared-operand gemms, and the consumers keep at least 160 registers a
//! thread. The kernel's threads are then the consumers (waiting on the
//! stages' `full` barriers, computing, releasing stages on `empty`), and
//! the target's register-reallocation group (a warpgroup on sm_90a) or
//! one warp is added as the producer, which waits on `empty` with phase
//! parity, arrives on `full` with the stage's byte count and issues the
//! copies; where the target moves registers between warps, the producer
//! gives its registers to the consumers. When the roles cannot be split
//! (the producer would need a value the consumers compute), the kernel
//! is lowered without (the retry rules of `lower/mod.rs`).
//!
//! Writes `bulk(s, specialized)` or `bulk(s, unspecialized)` on every
//! bulk-copy loop (the whole schedule, when `inject-pipeline` has not
//! run); other loops are left as they are. A specialization already in
//! the IR is a pin. Needs a target.

use super::{Pass, PassContext, PassError, lowering_choices, set_schedules};
use crate::ir::{Module, PipelineSchedule};

/// The pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct WarpSpecialize;

impl Pass for WarpSpecialize {
    fn name(&self) -> &'static str {
        "warp-specialize"
    }

    fn description(&self) -> &'static str {
        "Chooses whether a pipeline filled by bulk tensor copies gets producer threads of \
         its own (warp specialization: full/empty stage barriers with phase parity, \
         register budgets per role); writes it into the loop's `schedule`."
    }

    fn run(&self, module: &mut Module, cx: &PassContext) -> Result<(), PassError> {
        let choices = lowering_choices(self.name(), module, cx)?;
        set_schedules(module, choices, |old, chosen| match (old, chosen) {
            (
                Some(PipelineSchedule::Bulk {
                    stages,
                    specialized: None,
                }),
                PipelineSchedule::Bulk { specialized, .. },
            ) => Some(PipelineSchedule::Bulk {
                stages,
                specialized,
            }),
            (None, chosen @ PipelineSchedule::Bulk { .. }) => Some(chosen),
            (old, _) => old,
        });
        Ok(())
    }
}
