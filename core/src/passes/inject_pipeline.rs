//! `inject-pipeline`: chooses how every `T.Pipelined` loop is software
//! pipelined, and writes it into the IR as the loop's `schedule`.
//!
//! # Algorithm
//! The pipelining itself is done by the lowering to threads
//! (`lower/pipeline.rs`, `lower/tma.rs`, algorithms at their tops); this
//! pass runs its choice and records it:
//! 1. **Which loops.** A `T.Pipelined(num_stages = s)` loop with `s ≥ 2`
//!    whose body starts with *producers* (copies from global memory into
//!    whole shared buffers used nowhere else) followed by *consumers*
//!    that only read those buffers is pipelined; any other is `serial`.
//!    Explicit `order`/`stage` lists are taken when the copies have stage
//!    0 and everything else one stage `D`: the copies run `D` iterations
//!    ahead in `D + 1` stages, issued before or after the consumers as
//!    `order` ranks them (other lists: `serial`).
//! 2. **Form.** Where the target has bulk tensor copies with transaction
//!    barriers and the producers' boxes fit them, the stages are filled by
//!    bulk copies (`bulk(s)`); else, with per-thread asynchronous copies in
//!    commit groups (`async(s)`: prologue of `s − 1` groups, a wait and a
//!    barrier before the first use, the next copies issued in the steady
//!    state, a final wait); without asynchronous copies, through registers
//!    into two stages (`registers`).
//! 3. **Stages.** Each producer buffer gets `s` copies in shared memory.
//!    When the kernel does not fit the target's shared memory, the
//!    lowering tries again with one stage fewer (down to two), then
//!    without padding, then serially (the retry rules of `lower/mod.rs`);
//!    the schedule of the attempt that succeeds is written.
//!
//! Every pipelined loop of a kernel gets a schedule: `for %k in
//! pipelined(0, 32, stages=3, schedule=async(3))`. Whether a bulk
//! pipeline gets a producer of its own is `warp-specialize`'s choice:
//! this pass writes `bulk(s)` and leaves it open. Layouts and schedules
//! already in the IR are pins (`infer-layouts`). Needs a target.

use super::{Pass, PassContext, PassError, lowering_choices, set_schedules};
use crate::ir::{Module, PipelineSchedule};

/// The pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct InjectPipeline;

impl Pass for InjectPipeline {
    fn name(&self) -> &'static str {
        "inject-pipeline"
    }

    fn description(&self) -> &'static str {
        "Chooses how every `T.Pipelined` loop is software pipelined: serially, into `s` \
         shared-memory stages filled by asynchronous or bulk copies, or through registers; \
         writes it as the loop's `schedule`. Schedules already present are kept as pins."
    }

    fn run(&self, module: &mut Module, cx: &PassContext) -> Result<(), PassError> {
        let choices = lowering_choices(self.name(), module, cx)?;
        set_schedules(module, choices, |old, chosen| match (old, chosen) {
            (Some(old), _) => Some(old),
            // The producer is warp-specialize's to choose.
            (None, PipelineSchedule::Bulk { stages, .. }) => Some(PipelineSchedule::Bulk {
                stages,
                specialized: None,
            }),
            (None, chosen) => Some(chosen),
        });
        Ok(())
    }
}
