//! Gemm results staged through shared memory on their way out.
//!
//! # Why
//! A gemm accumulator lives in registers in the matrix atom's fragment
//! layout, where each thread holds pairs of adjacent elements of a few
//! rows. Copied straight to global memory, every store instruction of a
//! warp writes 4 bytes per lane into 8 rows: 16-byte pieces of 32-byte
//! sectors, eight rows apart. Through shared memory the same tile leaves
//! as whole 16-byte vectors of consecutive elements, every warp writing
//! whole rows. On the H200 the `wgmma` GEMM spent 5% (8192³) to 10%
//! (4096³) of its time in the direct epilogue, a kernel that staged its
//! result by hand ran within 1% of one that stored nothing, and staging
//! here made it 4–8% faster (`bench/RESULTS.md`).
//!
//! # When
//! On a target with a matrix store from registers to shared memory (the
//! description's `matrix_stores`: `stmatrix` on sm_90 and sm_90a), a
//! `copy` at the top level of a kernel qualifies when
//! - its source is a whole 2-D `fragment` buffer of constant shape that a
//!   `gemm` of the kernel accumulates into, and
//! - its destination is a region of a global buffer of a 16-bit element
//!   type with the same two constant extents.
//!
//! # The rewrite
//! Such a copy becomes two: into a new shared buffer `<name>_staged` of the
//! destination's type and the fragment's shape (allocated right before
//! them, so that it may take the memory of any buffer allocated earlier),
//! then from it to the destination. The rest of the lowering
//! treats them as any such pair: the first goes through the matrix stores
//! (`ldmatrix.rs`) into padded rows (`pad.rs`), a barrier orders the two,
//! and the second is a vectorized copy with the tile-edge rule. The
//! staging buffer is used only after the main loop, so when the kernel
//! does not fit the shared memory with it, shared-memory reuse places it
//! in the pipeline stages' memory; when that does not fit either, the
//! kernel is lowered again without staging (`lower_kernel`).

use std::collections::BTreeSet;

use super::ir;
use crate::ir::{Handle, Scope};
use crate::target::TargetDescription;

/// The kernel `kernel` of `func` with its qualifying result copies staged
/// (module documentation), as a new function holding the new buffers and
/// the rewritten kernel statement; `None` when no copy qualifies.
pub(super) fn stage_epilogues(
    func: &ir::Function,
    kernel: &ir::Stmt,
    target: &TargetDescription,
) -> Option<(ir::Function, ir::Stmt)> {
    if target.matrix_stores.is_empty() {
        return None;
    }
    let ir::Stmt::Kernel { body, .. } = kernel else {
        return None;
    };
    let mut accumulators = BTreeSet::new();
    body.walk(&mut |stmt, _| {
        if let ir::Stmt::Gemm { c, .. } = stmt {
            accumulators.insert(c.buffer);
        }
    });
    let qualifies = |stmt: &ir::Stmt| -> Option<(Handle<ir::Buffer>, [i64; 2])> {
        let ir::Stmt::Copy { src, dst } = stmt else {
            return None;
        };
        let (s, d) = (&func.buffers[src.buffer], &func.buffers[dst.buffer]);
        let shape = func.const_shape(src.buffer)?;
        let &[m, n] = shape.as_slice() else {
            return None;
        };
        let whole = src.ranges.iter().zip([m, n]).all(|(r, e)| {
            func.as_literal(r.start).is_some_and(|l| l.as_f64() == 0.0)
                && func
                    .as_literal(r.extent)
                    .is_some_and(|l| l.as_f64() == e as f64)
        });
        let extents: Option<Vec<i64>> = dst
            .ranges
            .iter()
            .map(|r| func.as_literal(r.extent).map(|l| l.as_f64() as i64))
            .collect();
        let ok = accumulators.contains(&src.buffer)
            && s.scope == Scope::Fragment
            && src.ranges.len() == 2
            && whole
            && d.scope == Scope::Global
            && d.dtype.bits() == 16
            && extents.as_deref() == Some(&[m, n][..]);
        ok.then_some((src.buffer, [m, n]))
    };
    if !body.stmts.iter().any(|s| qualifies(s).is_some()) {
        return None;
    }
    let mut f = func.clone();
    let mut names: BTreeSet<String> = f.buffers.iter().map(|(_, b)| b.name.clone()).collect();
    let mut stmts = Vec::with_capacity(body.stmts.len() + 4);
    let mut spans = Vec::with_capacity(body.stmts.len() + 4);
    for (stmt, &span) in body.stmts.iter().zip(&body.spans) {
        let (Some((frag, [m, n])), ir::Stmt::Copy { src, dst }) = (qualifies(stmt), stmt) else {
            stmts.push(stmt.clone());
            spans.push(span);
            continue;
        };
        let mut name = format!("{}_staged", func.buffers[frag].name);
        while names.contains(&name) {
            name.push('_');
        }
        names.insert(name.clone());
        let (em, en) = (f.int(m), f.int(n));
        let staged = f.add_buffer(
            ir::Buffer {
                name,
                dtype: func.buffers[dst.buffer].dtype,
                shape: vec![em, en],
                scope: Scope::Shared,
                placement: None,
                layout: None,
            },
            func.buffer_spans.get(frag.index()).copied().unwrap_or(span),
        );
        let zero = f.int(0);
        let whole = ir::Region {
            buffer: staged,
            ranges: vec![
                ir::Range {
                    start: zero,
                    extent: em,
                },
                ir::Range {
                    start: zero,
                    extent: en,
                },
            ],
        };
        stmts.push(ir::Stmt::Alloc {
            buffer: staged,
            init: None,
        });
        spans.push(span);
        stmts.push(ir::Stmt::Copy {
            src: src.clone(),
            dst: whole.clone(),
        });
        spans.push(span);
        stmts.push(ir::Stmt::Copy {
            src: whole,
            dst: dst.clone(),
        });
        spans.push(span);
    }
    let mut kernel = kernel.clone();
    if let ir::Stmt::Kernel { body, .. } = &mut kernel {
        body.stmts = stmts;
        body.spans = spans;
    }
    Some((f, kernel))
}
