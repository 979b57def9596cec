//! `lower-tile-ops`: the last step of a pipeline, from Tile IR to the
//! thread-level IR that SIMT backends consume (`docs/thread-ir.md`).
//!
//! Unlike the other passes it changes the level of the IR, so it is a
//! [`Lowering`] rather than a [`super::Pass`]: it may only end a
//! pipeline, and what it prints (`--print-after=lower-tile-ops`) is thread
//! IR. It is the same lowering `--backend sim` and the plugins that lower
//! with the core (CUDA, ROCm) run, for the pipeline's target.
//!
//! # Algorithm
//! The lowering proper lives in `lower/` (one file per concern, each with
//! its algorithm at its top); in order, for each kernel:
//! 1. **Decisions.** The layouts `infer-layouts` records (`lower/infer.rs`,
//!    `resident.rs`, `spread.rs`, `pad.rs`, `swizzle.rs`), the pipeline
//!    schedules of `inject-pipeline` (`pipeline.rs`, `tma.rs`) and the
//!    producer warps of `warp-specialize` (`ws.rs`) are taken as pins when
//!    the IR carries them and chosen here otherwise.
//! 2. **Copies** (`copy.rs`) become per-thread moves of the widest vector
//!    the alignment of both sides allows (16 bytes where it can), guarded
//!    at tile edges where the extents are not known to divide; copies into
//!    pipelined shared buffers become the target's asynchronous copies
//!    (per-thread copies in commit groups, or bulk tensor copies completing
//!    on transaction barriers), and copies of register tiles to shared
//!    memory the target's matrix stores where they fit (`ldmatrix.rs`).
//! 3. **Gemms** (`gemm.rs`) become loops over the target's matrix atoms on
//!    fragments, loaded from shared memory by matrix loads where the
//!    fragment allows, or a multiply-add loop per thread where no atom
//!    applies.
//! 4. **Reductions** (`reduce.rs`) reduce per thread, then within a SIMT
//!    group by shuffles, then across groups through shared memory; fills,
//!    atomics, casts and `T.Parallel` nests become per-thread loops over
//!    the elements each thread owns.
//! 5. **Memory and barriers.** Shared buffers are placed in one arena, in
//!    the memory of buffers they are never live with when the kernel would
//!    not fit otherwise; barriers are placed where a thread reads what
//!    another wrote (`lower/mod.rs`), and loop-invariant address arithmetic
//!    is hoisted (`hoist.rs`).
//! 6. **Check.** The result must pass the thread-IR verifier for the target
//!    (a failure is an internal error naming the kernel and line).
//!
//! A kernel the lowering cannot take (an unsupported statement, a pin it
//! cannot realize, more shared memory than the target has) is refused at
//! its statement. Needs a target.

use super::{Lowering, PassContext, PassError, lower_error, required_target};
use crate::ir::Module;
use crate::thread;

/// The lowering step.
#[derive(Debug, Default, Clone, Copy)]
pub struct LowerTileOps;

impl Lowering for LowerTileOps {
    fn name(&self) -> &'static str {
        "lower-tile-ops"
    }

    fn description(&self) -> &'static str {
        "Lowers the tile operations to thread-level IR for the target: copies to vectorized \
         per-thread or asynchronous moves, gemms to matrix-atom loops on fragments, \
         reductions to per-thread, shuffle and shared-memory steps, with shared memory \
         placed and barriers inserted. Ends a pipeline; its output is thread IR."
    }

    fn run(&self, module: &Module, cx: &PassContext) -> Result<thread::Module, PassError> {
        let pass = self.name();
        let target = required_target(pass, "lowers", module, cx)?;
        // Errors name the module's first function, as the recording passes
        // do when they fail before any function; the span places them.
        let function = module.functions.first().map_or("", |f| f.name.as_str());
        crate::lower::to_thread_with(module, target, &cx.lower)
            .map_err(|e| lower_error(pass, function, e))
    }
}
