//! `infer-layouts`: chooses how the lowering to threads keeps every
//! on-chip buffer, and writes it into the IR as the buffer's `layout`.
//!
//! # Algorithm
//! Layout inference proper lives with the lowering that realizes it
//! (`lower/infer.rs`, `resident.rs`, `spread.rs`, `pad.rs`, `swizzle.rs`,
//! each with its algorithm at its top); this pass runs it and records the
//! outcome, so that the choice can be read, tested and pinned:
//! 1. **Seeds and propagation.** The kernel's gemms are planned on the
//!    target's matrix atoms (split among warps by their warp policy). A
//!    gemm's accumulator is a register tile in the atom's accumulator
//!    fragment; that layout propagates through copies, `T.Parallel` nests
//!    over the tile's shape and row reductions (whose results are
//!    `rows`: one value per row, kept by the threads holding the row),
//!    and into a later gemm's A operand where the atom takes A from
//!    registers in the same placement (attention's `P · V`). Buffers whose
//!    uses disagree with the propagated layout stay in shared memory.
//!    Element-wise fragments (copied, filled, used in `T.Parallel` over
//!    their shape) are spread over the threads in the vector copies'
//!    width.
//! 2. **Shared layouts.** On a target with a shared-operand atom (sm_90a's
//!    `wgmma`), a kernel whose gemms all qualify gets its operands in the
//!    descriptor's XOR-swizzled panels (`swizzled(128)`: 128-byte rows).
//!    On a target with matrix loads (`ldmatrix`), gemm operands get the
//!    same swizzle in rows of 32, 64 or 128 bytes, which keeps both the
//!    matrix loads and the copies into them free of bank conflicts.
//!    Otherwise gemm operands and staged results get rows padded by an odd
//!    number of 16-byte units (`padded(P)`), so that the atoms' fragment
//!    loads and the results' stores meet no bank conflicts; other buffers
//!    keep dense rows (`shared`).
//! 3. **Validation.** The kernel is lowered with these choices (and the
//!    pipelines `pipeline.rs` picks). Where the lowering cannot realize a
//!    choice — a buffer in registers used in a way the register path
//!    cannot take, stages that do not fit the shared memory — it gives up
//!    that choice and lowers again (the retry rules of `lower/mod.rs`);
//!    the layouts of the attempt that succeeds are written.
//!
//! Every buffer a kernel allocates gets a layout:
//! `alloc %acc: fragment f32[128, 128] layout fragment("mma.m16n8k16")`.
//! A layout already in the IR (from an earlier run, or written by hand)
//! is a pin: the lowering takes it as given and fails, naming the buffer
//! and what it could do instead, when it cannot realize it. Running the
//! pass again changes nothing. A kernel the lowering refuses is refused
//! here, at its statement. Needs a target.

use super::{Pass, PassContext, PassError, lowering_choices};
use crate::ir::Module;

/// The pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct InferLayouts;

impl Pass for InferLayouts {
    fn name(&self) -> &'static str {
        "infer-layouts"
    }

    fn description(&self) -> &'static str {
        "Chooses where every on-chip buffer lives when lowered to threads: registers in a \
         matrix atom's fragment layout, per row of one, or spread over the threads; or \
         shared memory swizzled for a shared-operand atom or matrix loads, padded against \
         bank conflicts, \
         or dense. Writes the choice as the buffer's `layout`; layouts already present are \
         kept as pins."
    }

    fn run(&self, module: &mut Module, cx: &PassContext) -> Result<(), PassError> {
        let choices = lowering_choices(self.name(), module, cx)?;
        for (f, kernels) in module.functions.iter_mut().zip(choices) {
            for kernel in kernels {
                for (b, layout) in kernel.layouts {
                    f.buffers[b].layout = Some(layout);
                }
            }
        }
        Ok(())
    }
}
