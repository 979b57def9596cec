//! PTX emission from thread-level IR.
//!
//! [`emit_module`] turns a thread-IR module ([`tilec_core::thread`]) into
//! one PTX text for the target description's architecture: a header, the
//! shared `tilec_smem` array, the math library routines the kernels call,
//! and one `.visible .entry` per kernel. The emitted code implements the
//! thread-IR semantics exactly as the SIMT interpreter runs them, with
//! the reference's arithmetic (integers wrap, `//` and `%` round toward
//! negative infinity, floats round once from the exact result) wherever
//! PTX offers that, and accurate library routines where it does not.
//!
//! How the pieces map:
//!
//! | thread IR | PTX | module |
//! | --- | --- | --- |
//! | kernel, parameters, grid | `.entry` with `.param .u64` buffers and `.s32`/`.u32`/`.s64` scalars, `.maxntid threads, 1, 1` (the grid is the host's) | `kernel` |
//! | `thread_idx`, `block_idx_*`, `lane_id`, `warp_id` | `%tid.x`, `%ctaid.*`, `tid & 31`, `tid >> 5` | `kernel` |
//! | registers | named registers (`%f_acc`), one per array element when every index is constant, `.local` arrays otherwise | `plan`, `kernel` |
//! | shared buffers | offsets in one dynamic `.extern .shared` array | `plan`, `memory` |
//! | `for`, `if` | counted loops (or unrolled copies) and predicated branches | `kernel` |
//! | expressions | `expr`, `int`, `float`, `convert`, library calls (`math`) | |
//! | loads, stores, `cp_async`, atomics | `ld`/`st` (vectorised), `cp.async`, `red`/`atom` | `memory` |
//! | shuffles | `shfl.sync` with exact member masks | `warp` |
//! | `mma` | `mma.sync.aligned` with packed fragments | `mma` |
//! | `async_mma` | `wgmma.mma_async` with shared-memory descriptors (sm_90a) | `mma` |
//! | tensor maps, `mbarrier_*`, `tma_load` | 128-byte `.param`s, `mbarrier.*`, `cp.async.bulk.tensor` (sm_90) | `tma` |
//!
//! Versions: the PTX ISA version is the lowest that knows the target
//! (`target`). Output is deterministic: the same module and options give
//! byte-identical text.
//!
//! Refused (as [`PtxError::Unsupported`], never a panic): matrix atoms that
//! are neither warp-issued `mma.sync` m16n8k16 nor sm_90a's `wgmma`
//! m64nNk16 with shared-memory operands, with `f16`/`bf16` inputs and
//! `f32` accumulators; fragment layouts in the description that disagree
//! with PTX's; tensor maps before sm_90,
//! `pow` on `f64`, atomic adds of 8-bit types, vector moves above 16
//! bytes, and kernel names that are not PTX identifiers. Kernels that do
//! not verify for the target are [`PtxError::Invalid`].

mod convert;
mod elect;
mod expr;
mod float;
mod fold;
mod int;
mod kernel;
pub(crate) mod math;
mod memory;
mod mma;
mod plan;
mod target;
mod text;
mod tma;
mod value;
mod warp;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use tilec_core::ir::{DType, Span};
use tilec_core::target::TargetDescription;
use tilec_core::thread;

use math::Routine;

/// What the emitter may do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxOptions {
    /// Use the approximate transcendental instructions (`ex2.approx`,
    /// `lg2.approx`, `sin.approx`, `tanh.approx`, `rsqrt.approx`, ...) for
    /// types up to `f32`, and `red.global.add.f32` (which flushes
    /// subnormals) for `f32` atomics.
    pub fast_math: bool,
    /// Let `ptxas` fuse an `f32` multiply into the add that consumes it
    /// (`tilec_plugin_api::FP_CONTRACT_OPTION`; implied by `fast_math`).
    pub contract: bool,
    /// The source the module's spans point into. With it, each statement's
    /// comment names its `file:line:col`, the source line is quoted where
    /// the line changes, and `.file`/`.loc` directives let tools that read
    /// line information (`ptxas -lineinfo`, profilers) show source lines.
    pub source: Option<SourceText>,
}

/// A source file: its name as the user wrote it and its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceText {
    pub name: String,
    text: String,
    lines: tilec_core::text::LineIndex,
}

impl SourceText {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceText {
        let text = text.into();
        SourceText {
            name: name.into(),
            lines: tilec_core::text::LineIndex::new(&text),
            text,
        }
    }

    /// The 1-based line and column (in characters) of byte `offset`, and
    /// that line's text.
    pub fn locate(&self, offset: u32) -> (usize, usize, &str) {
        let (line, column) = self.lines.line_col(&self.text, offset);
        (line, column, self.lines.line(&self.text, line))
    }

    /// The name as a PTX string literal.
    fn quoted(&self) -> String {
        let mut out = String::from("\"");
        for c in self.name.chars() {
            match c {
                '"' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                c if c.is_control() => out.push('_'),
                c if !c.is_ascii() => out.extend(c.escape_unicode()),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}

/// A PTX module.
#[derive(Clone, Debug, PartialEq)]
pub struct PtxModule {
    pub text: String,
    /// The entries, in the module's kernel order.
    pub kernels: Vec<PtxKernel>,
}

/// One `.entry`.
#[derive(Clone, Debug, PartialEq)]
pub struct PtxKernel {
    /// The entry name: the thread-IR kernel's name.
    pub name: String,
    /// Threads per block (1-D).
    pub threads: u32,
    /// Dynamic shared memory the launch must provide, in bytes.
    pub shared_bytes: u64,
    /// The entry's parameters, in the thread-IR kernel's parameter order.
    pub params: Vec<PtxParam>,
}

/// One entry parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct PtxParam {
    /// The thread-IR parameter name.
    pub name: String,
    /// The `.param` name in the PTX.
    pub ptx_name: String,
    pub kind: PtxParamKind,
}

/// What a host passes for a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxParamKind {
    /// A global buffer: its device address, as `.param .u64`.
    Buffer { dtype: DType },
    /// An integer scalar of thread-IR type `dtype`, passed as the PTX type
    /// `ptx_type`: `s32` (`i8`, `i16`, `i32`), `u32` (`u8`, `u16`,
    /// `u32`) or `s64` (`i64`, `u64`).
    Scalar {
        dtype: DType,
        ptx_type: &'static str,
    },
}

/// Why a module could not be emitted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PtxError {
    /// The target description is not one the emitter serves.
    #[error("target `{arch}`: {reason}")]
    Target { arch: String, reason: String },
    /// The kernel breaks a thread-IR invariant for this target.
    #[error("kernel `{kernel}` is not valid thread IR for the target: {message}")]
    Invalid { kernel: String, message: String },
    /// A construct the emitter does not support.
    #[error("kernel `{kernel}`{}: {reason}", at(stmt))]
    Unsupported {
        kernel: String,
        /// The thread-IR header of the statement, when one is involved.
        stmt: Option<String>,
        /// The statement's span (unknown when none).
        span: Span,
        reason: String,
    },
}

fn at(stmt: &Option<String>) -> String {
    stmt.as_ref()
        .map(|s| format!(", statement `{s}`"))
        .unwrap_or_default()
}

/// Emits every kernel of `module` as one PTX module for `target`.
pub fn emit_module(
    module: &thread::Module,
    target: &TargetDescription,
    options: &PtxOptions,
) -> Result<PtxModule, PtxError> {
    let mut ptx_target = target::PtxTarget::new(target)?;
    // `mbarrier.test_wait.parity`, the parity wait before sm_90, needs
    // PTX ISA 7.1.
    if ptx_target.version < (7, 1) && module.kernels.iter().any(|k| waits_on_mbarrier(&k.body)) {
        ptx_target.version = (7, 1);
    }
    let mut entries = Vec::with_capacity(module.kernels.len());
    let mut kernels = Vec::with_capacity(module.kernels.len());
    let mut routines = BTreeSet::new();
    let mut shared_align = None::<u32>;
    for k in &module.kernels {
        thread::verify_kernel(k, target).map_err(|e| PtxError::Invalid {
            kernel: k.name.clone(),
            message: e.to_string(),
        })?;
        let emitted = kernel::emit_kernel(k, target, &ptx_target, options)?;
        routines.extend(emitted.routines);
        if !k.shared.is_empty() {
            shared_align = Some(shared_align.unwrap_or(16).max(emitted.shared_align));
        }
        entries.push(emitted.text);
        kernels.push(emitted.kernel);
    }
    let mut text = String::new();
    header(&mut text, &ptx_target, options);
    if let Some(align) = shared_align {
        let _ = writeln!(
            text,
            "// Every kernel's shared buffers, at fixed offsets.\n.extern .shared .align {align} .b8 {}[];\n",
            kernel::SMEM
        );
    }
    library(&mut text, &routines);
    for e in entries {
        text.push_str(&e);
        text.push('\n');
    }
    Ok(PtxModule { text, kernels })
}

/// Whether `body` waits on a phased barrier.
fn waits_on_mbarrier(body: &[thread::Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        thread::StmtKind::MbarrierWait { .. } => true,
        thread::StmtKind::For { body, .. } => waits_on_mbarrier(body),
        thread::StmtKind::If {
            then_body,
            else_body,
            ..
        } => waits_on_mbarrier(then_body) || else_body.as_deref().is_some_and(waits_on_mbarrier),
        _ => false,
    })
}

fn header(out: &mut String, t: &target::PtxTarget, options: &PtxOptions) {
    let _ = writeln!(
        out,
        "//\n// Generated by tilec-backend-cuda {} from thread-level IR.\n// Target {}, PTX ISA {}.{}; fast math {}{}.\n//\n",
        env!("CARGO_PKG_VERSION"),
        t.sm,
        t.version.0,
        t.version.1,
        if options.fast_math { "on" } else { "off" },
        if options.contract && !options.fast_math {
            ", multiply-adds fused"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        ".version {}.{}\n.target {}\n.address_size 64\n",
        t.version.0, t.version.1, t.sm
    );
    if let Some(source) = &options.source {
        let _ = writeln!(out, ".file 1 {}\n", source.quoted());
    }
}

/// The tables and `.func`s of the routines in use, in a fixed order
/// (inline routines need their tables only).
fn library(out: &mut String, routines: &BTreeSet<Routine>) {
    if routines.is_empty() {
        return;
    }
    let mut tables: Vec<_> = routines.iter().flat_map(|r| r.tables()).collect();
    let routines: BTreeSet<Routine> = routines.iter().filter(|r| !r.inline()).copied().collect();
    tables.sort();
    tables.dedup();
    for t in tables {
        math::table_decl(t, out);
        out.push('\n');
    }
    for r in Routine::ALL.iter().filter(|r| routines.contains(r)) {
        r.program().emit_func(r.symbol(), out);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::SourceText;

    #[test]
    fn source_names_are_quoted_for_ptx() {
        assert_eq!(SourceText::new("a\"b\\c", "").quoted(), "\"a\\\"b\\\\c\"");
        let s = SourceText::new("k.py", "x = 1\ny = 2\n");
        assert_eq!(s.locate(6), (2, 1, "y = 2"));
    }
}
