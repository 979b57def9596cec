//! AMDGPU LLVM IR from thread-level IR.
//!
//! One LLVM module per thread-level module, for the triple
//! `amdgcn-amd-amdhsa`. What maps to what:
//!
//! - **Kernels** are `amdgpu_kernel` functions with the attributes
//!   `"amdgpu-flat-work-group-size"="T,T"` (the exact block size, so the
//!   backend may assume it), `"uniform-work-group-size"="true"`,
//!   `"target-cpu"` and IEEE denormal handling for every float type.
//!   Parameters keep the thread kernel's order: global buffers as
//!   `ptr addrspace(1)`, integer scalars by value.
//! - **Special values**: `thread_idx` is `llvm.amdgcn.workitem.id.x`,
//!   `block_idx_{x,y,z}` are `llvm.amdgcn.workgroup.id.{x,y,z}`; `lane_id`
//!   and `warp_id` are `thread_idx & 63` and `thread_idx >> 6` (wave64:
//!   the hardware forms wavefronts from consecutive flat work-item ids).
//! - **Registers**: every register (scalar, local array, loop variable,
//!   plus one hidden counter per loop) is an `alloca` in the private
//!   address space (5) of the entry block, zero-initialised. The code is
//!   therefore not in SSA form; `opt -O2` (SROA, mem2reg) turns it into
//!   SSA before `llc` ([`crate::toolchain`]). This keeps the translation a
//!   direct, statement-by-statement one that is easy to check.
//! - **Shared buffers** live in one `[N x i8]` LDS global per kernel
//!   (`addrspace(3)`, internal), each buffer at an offset rounded up to its
//!   alignment, in declaration order. The total must fit the target's LDS.
//! - **Memory moves** are loads and stores of `<w x T>` vectors (or
//!   scalars) aligned to `w · size(T)`; `bool` is one byte in memory.
//!   Guards are branches around the access (an unguarded out-of-bounds
//!   access cannot be speculated this way); `else zero` stores zeros in the
//!   other branch.
//! - **Async copies** are plain loads and stores, issued where the copy
//!   is: a correct lowering of cp.async semantics (the data lands no later
//!   than the wait); `commit_group` and `wait_group` emit nothing.
//! - **Barriers** are `fence syncscope("workgroup") release`,
//!   `llvm.amdgcn.s.barrier`, `fence syncscope("workgroup") acquire`: what a
//!   workgroup barrier needs so that LDS writes before it are visible after.
//! - **Shuffles** are `llvm.amdgcn.ds.bpermute` (a pull by byte address);
//!   the source lane is computed from the kind and width as the SIMT
//!   interpreter does, a lane outside the group reading its own value;
//!   64-bit values move as two 32-bit words.
//! - **Atomic add** is `atomicrmw add`/`fadd` at agent scope, monotonic.
//! - **Matrix atoms** call `llvm.amdgcn.mfma.f32.{32x32x8,16x16x16}f16`
//!   or the `bf16.1k` forms (bf16 as `<4 x i16>`), fragment slot `s` being
//!   vector element `s` ([`mfma`] checks the description's fragments
//!   against the hardware layouts first).
//! - **Control flow**: `if` and `for` become branches and a counted loop
//!   (`for` evaluates start, count and step once; unroll hints become
//!   `llvm.loop.unroll.*` metadata).
//!
//! Arithmetic mirrors the SIMT interpreter exactly; [`expr`] says how.

mod expr;
pub mod mfma;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tilec_core::ir::{AtomicOp, DType};
use tilec_core::target::{MemoryKind, TargetDescription};
use tilec_core::thread::{
    Expr, FragRef, Guard, GuardElse, Kernel, MemRef, Module, Param, RegId, RegRef, RegisterKind,
    ShuffleKind, Stmt, StmtKind, Unroll,
};

/// The data layout LLVM 19 uses for `amdgcn-amd-amdhsa`.
pub const DATA_LAYOUT: &str = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";

/// The target triple of every module.
pub const TRIPLE: &str = "amdgcn-amd-amdhsa";

/// The wavefront size of the targets this emitter serves.
pub const WAVE: u32 = 64;

/// The most work-items of one workgroup.
pub const MAX_WORKGROUP: u32 = 1024;

/// Why a module could not be translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The kernel needs something the target does not have.
    #[error("kernel `{kernel}`: {what}")]
    Unsupported { kernel: String, what: String },
    /// The target has it, this emitter does not translate it yet.
    #[error("kernel `{kernel}`: {what} is not implemented by the rocm backend")]
    Unimplemented { kernel: String, what: String },
    /// A broken assumption: a bug here or in the lowering.
    #[error("kernel `{kernel}`: internal error: {what}")]
    Internal { kernel: String, what: String },
}

/// What the emitter reports about one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmittedKernel {
    pub name: String,
    /// Bytes of the kernel's LDS global (0 when it has no shared buffer).
    pub lds_bytes: u64,
    /// Byte offset of each shared buffer in the LDS global.
    pub lds_offsets: Vec<u64>,
}

/// An LLVM module as text, and its kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    pub text: String,
    pub kernels: Vec<EmittedKernel>,
}

/// Emission settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmitOptions {
    /// Allows approximate transcendental functions (`afn`).
    pub fast_math: bool,
    /// Lets the backend fuse a float multiply into the add that consumes
    /// it (`contract` on `fadd`/`fsub`/`fmul`;
    /// `tilec_plugin_api::FP_CONTRACT_OPTION`, implied by fast math).
    pub contract: bool,
}

/// Translates `module` for `target` (whose `arch` names the GPU).
pub fn emit_module(
    module: &Module,
    target: &TargetDescription,
    options: &EmitOptions,
) -> Result<Emitted, EmitError> {
    let mut m = ModuleState::default();
    let mut bodies = String::new();
    let mut kernels = Vec::new();
    let mut globals = String::new();
    for (index, k) in module.kernels.iter().enumerate() {
        let (text, lds, emitted) = KernelEmitter::run(k, target, options, &mut m, index)?;
        globals.push_str(&lds);
        bodies.push_str(&text);
        kernels.push(emitted);
    }
    let mut out = String::new();
    let _ = writeln!(out, "; tilec rocm backend: {} for {}", TRIPLE, target.arch);
    // A fixed name, so that no scratch path reaches the code object.
    let _ = writeln!(out, "source_filename = \"tilec\"");
    let _ = writeln!(out, "target datalayout = \"{DATA_LAYOUT}\"");
    let _ = writeln!(out, "target triple = \"{TRIPLE}\"");
    out.push('\n');
    if !globals.is_empty() {
        out.push_str(&globals);
        out.push('\n');
    }
    out.push_str(&bodies);
    for helper in m.helpers.values() {
        out.push_str(helper);
        out.push('\n');
    }
    for decl in m.decls.values() {
        let _ = writeln!(out, "{decl}");
    }
    if !m.decls.is_empty() {
        out.push('\n');
    }
    for (i, k) in module.kernels.iter().enumerate() {
        let _ = writeln!(
            out,
            "attributes #{i} = {{ \"amdgpu-flat-work-group-size\"=\"{t},{t}\" \"uniform-work-group-size\"=\"true\" \"target-cpu\"=\"{arch}\" \"denormal-fp-math\"=\"ieee,ieee\" \"denormal-fp-math-f32\"=\"ieee,ieee\" }}",
            t = k.threads,
            arch = target.arch
        );
    }
    let helper_attr = module.kernels.len();
    if !m.helpers.is_empty() {
        let _ = writeln!(
            out,
            "attributes #{helper_attr} = {{ alwaysinline nounwind \"target-cpu\"=\"{}\" }}",
            target.arch
        );
    }
    out.push('\n');
    let _ = writeln!(out, "!llvm.module.flags = !{{!0}}");
    let _ = writeln!(
        out,
        "!0 = !{{i32 1, !\"amdhsa_code_object_version\", i32 500}}"
    );
    for md in &m.metadata {
        let _ = writeln!(out, "{md}");
    }
    Ok(Emitted {
        text: out.replace("#HELPER", &format!("#{helper_attr}")),
        kernels,
    })
}

/// What the kernels of one module share: declarations, helper functions
/// and metadata nodes.
#[derive(Debug, Default)]
pub(crate) struct ModuleState {
    /// Intrinsic declarations by name.
    pub decls: BTreeMap<String, String>,
    /// Helper function definitions by name.
    pub helpers: BTreeMap<String, String>,
    /// Metadata definitions after `!0`.
    pub metadata: Vec<String>,
}

impl ModuleState {
    /// A new metadata node id (1, 2, ...), defined by `text(id)`.
    fn metadata_node(&mut self, text: impl FnOnce(usize) -> String) -> usize {
        let id = self.metadata.len() + 1;
        self.metadata.push(text(id));
        id
    }
}

/// An LLVM identifier for a name: bare when it only has safe characters.
pub fn llvm_name(sigil: char, name: &str) -> String {
    let bare = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if bare {
        format!("{sigil}{name}")
    } else {
        let mut quoted = String::new();
        for b in name.bytes() {
            if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
                quoted.push(b as char);
            } else {
                let _ = write!(quoted, "\\{b:02X}");
            }
        }
        format!("{sigil}\"{quoted}\"")
    }
}

/// The LLVM type of a value of `d` in registers (`bf16` as its bits).
pub(crate) fn value_type(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "i1",
        DType::I8 | DType::U8 => "i8",
        DType::I16 | DType::U16 | DType::BF16 => "i16",
        DType::I32 | DType::U32 => "i32",
        DType::I64 | DType::U64 => "i64",
        DType::F16 => "half",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F8E4M3 | DType::F8E5M2 => return None,
    })
}

/// The LLVM type of an element of `d` in memory.
pub(crate) fn memory_type(d: DType) -> Option<&'static str> {
    match d {
        DType::Bool => Some("i8"),
        _ => value_type(d),
    }
}

/// Per-kernel translation state.
pub(crate) struct KernelEmitter<'a> {
    pub k: &'a Kernel,
    pub target: &'a TargetDescription,
    pub options: &'a EmitOptions,
    pub m: &'a mut ModuleState,
    /// Allocas and their initialisation (the top of the entry block).
    prologue: String,
    /// Instructions after the prologue.
    pub body: String,
    next_value: u32,
    next_label: u32,
    lds_global: String,
    lds_offsets: Vec<u64>,
}

impl<'a> KernelEmitter<'a> {
    fn run(
        k: &'a Kernel,
        target: &'a TargetDescription,
        options: &'a EmitOptions,
        m: &'a mut ModuleState,
        index: usize,
    ) -> Result<(String, String, EmittedKernel), EmitError> {
        let mut e = KernelEmitter {
            k,
            target,
            options,
            m,
            prologue: String::new(),
            body: String::new(),
            next_value: 0,
            next_label: 0,
            lds_global: llvm_name('@', &format!("{}.lds", k.name)),
            lds_offsets: Vec::new(),
        };
        if k.threads == 0 || k.threads > MAX_WORKGROUP {
            return Err(e.unsupported(format!(
                "{} threads per block; AMDGPU workgroups have 1 to {MAX_WORKGROUP} work-items",
                k.threads
            )));
        }
        let (lds_text, lds_bytes) = e.layout_lds()?;
        e.prologue_specials();
        e.declare_registers()?;
        e.block(&k.body)?;
        e.body.push_str("  ret void\n");
        let mut params = Vec::new();
        for (i, p) in k.params.iter().enumerate() {
            match p {
                Param::Global(_) => params.push(format!("ptr addrspace(1) %p{i}")),
                Param::Scalar { dtype, name } => {
                    let ty = value_type(*dtype)
                        .filter(|_| dtype.is_int())
                        .ok_or_else(|| {
                            e.unsupported(format!("scalar parameter `%{name}` of type {dtype}"))
                        })?;
                    params.push(format!("{ty} %p{i}"));
                }
            }
        }
        let mut text = String::new();
        let _ = writeln!(
            text,
            "define amdgpu_kernel void {}({}) #{index} {{",
            llvm_name('@', &k.name),
            params.join(", ")
        );
        text.push_str("entry:\n");
        text.push_str(&e.prologue);
        text.push_str(&e.body);
        text.push_str("}\n\n");
        let emitted = EmittedKernel {
            name: k.name.clone(),
            lds_bytes,
            lds_offsets: e.lds_offsets.clone(),
        };
        Ok((text, lds_text, emitted))
    }

    pub fn unsupported(&self, what: impl Into<String>) -> EmitError {
        EmitError::Unsupported {
            kernel: self.k.name.clone(),
            what: what.into(),
        }
    }

    pub fn unimplemented(&self, what: impl Into<String>) -> EmitError {
        EmitError::Unimplemented {
            kernel: self.k.name.clone(),
            what: what.into(),
        }
    }

    pub fn internal(&self, what: impl Into<String>) -> EmitError {
        EmitError::Internal {
            kernel: self.k.name.clone(),
            what: what.into(),
        }
    }

    /// A fresh SSA value name.
    pub fn fresh(&mut self) -> String {
        let v = self.next_value;
        self.next_value += 1;
        format!("%v{v}")
    }

    /// Emits `%x = text` and returns `%x`.
    pub fn inst(&mut self, text: impl AsRef<str>) -> String {
        let v = self.fresh();
        let _ = writeln!(self.body, "  {v} = {}", text.as_ref());
        v
    }

    /// Emits an instruction without a result.
    pub fn stmt(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "  {}", text.as_ref());
    }

    fn label(&mut self, what: &str) -> String {
        let l = self.next_label;
        self.next_label += 1;
        format!("{what}{l}")
    }

    fn start_block(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// Declares an intrinsic once per module.
    pub fn declare(&mut self, name: &str, declaration: String) {
        self.m.decls.entry(name.to_string()).or_insert(declaration);
    }

    // ---- layout of LDS and registers ----

    fn layout_lds(&mut self) -> Result<(String, u64), EmitError> {
        let mut offset = 0u64;
        let mut align = 16u64;
        for s in &self.k.shared {
            let a = u64::from(s.align.max(1));
            align = align.max(a);
            offset = offset.div_ceil(a) * a;
            self.lds_offsets.push(offset);
            let bytes = s.len.saturating_mul(s.dtype.bytes());
            offset = offset.saturating_add(bytes);
            if memory_type(s.dtype).is_none() {
                return Err(
                    self.unsupported(format!("shared buffer `%{}` of type {}", s.name, s.dtype))
                );
            }
        }
        let capacity = self
            .target
            .memory_of_kind(MemoryKind::Shared)
            .and_then(|m| m.capacity_bytes);
        if let Some(cap) = capacity
            && offset > cap
        {
            return Err(self.unsupported(format!(
                "{offset} bytes of shared buffers exceed the {cap} bytes of LDS a workgroup may use on {}",
                self.target.arch
            )));
        }
        if offset == 0 {
            return Ok((String::new(), 0));
        }
        Ok((
            format!(
                "{} = internal addrspace(3) global [{offset} x i8] undef, align {align}\n",
                self.lds_global
            ),
            offset,
        ))
    }

    fn prologue_specials(&mut self) {
        self.declare(
            "llvm.amdgcn.workitem.id.x",
            "declare i32 @llvm.amdgcn.workitem.id.x()".into(),
        );
        let threads = self.k.threads;
        let _ = writeln!(
            self.prologue,
            "  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{{i32 0, i32 {threads}}}"
        );
        let _ = writeln!(self.prologue, "  %lane = and i32 %tid, {}", WAVE - 1);
        let _ = writeln!(self.prologue, "  %wave = lshr i32 %tid, 6");
        for axis in ["x", "y", "z"] {
            let name = format!("llvm.amdgcn.workgroup.id.{axis}");
            self.declare(&name, format!("declare i32 @{name}()"));
            let _ = writeln!(self.prologue, "  %bid.{axis} = call i32 @{name}()");
        }
    }

    /// The alloca of register `r`.
    pub fn reg_slot(r: RegId) -> String {
        format!("%r{}", r.0)
    }

    fn declare_registers(&mut self) -> Result<(), EmitError> {
        for (i, r) in self.k.registers.iter().enumerate() {
            let ty = value_type(r.dtype).ok_or_else(|| {
                self.unsupported(format!("register `%{}` of type {}", r.name, r.dtype))
            })?;
            let zero = zero_of(r.dtype);
            match r.kind {
                RegisterKind::Array { len } => {
                    let _ = writeln!(
                        self.prologue,
                        "  %r{i} = alloca [{len} x {ty}], align 16, addrspace(5)"
                    );
                    let _ = writeln!(
                        self.prologue,
                        "  store [{len} x {ty}] zeroinitializer, ptr addrspace(5) %r{i}, align 16"
                    );
                }
                RegisterKind::Scalar | RegisterKind::Loop => {
                    let _ = writeln!(self.prologue, "  %r{i} = alloca {ty}, addrspace(5)");
                    let _ = writeln!(self.prologue, "  store {ty} {zero}, ptr addrspace(5) %r{i}");
                }
            }
        }
        Ok(())
    }

    /// The address of element `index` (an `i32` or `i64` value) of
    /// register `r`.
    fn reg_elem_ptr(&mut self, r: RegId, index: &str) -> Result<String, EmitError> {
        let reg = self
            .k
            .register(r)
            .ok_or_else(|| self.internal(format!("register {} does not exist", r.0)))?;
        let ty = value_type(reg.dtype).ok_or_else(|| self.unsupported("register type"))?;
        let slot = Self::reg_slot(r);
        Ok(self.inst(format!(
            "getelementptr inbounds {ty}, ptr addrspace(5) {slot}, i32 {index}"
        )))
    }

    /// The register element a `RegRef` names plus `offset`, as a pointer.
    fn reg_ref_ptr(&mut self, r: &RegRef, offset: u32) -> Result<(String, DType), EmitError> {
        let reg = r.reg();
        let dtype = self
            .k
            .register(reg)
            .map(|x| x.dtype)
            .ok_or_else(|| self.internal(format!("register {} does not exist", reg.0)))?;
        let at = match r {
            RegRef::Scalar(_) if offset == 0 => return Ok((Self::reg_slot(reg), dtype)),
            RegRef::Scalar(_) => offset.to_string(),
            RegRef::Elem(_, index) => match index.as_const_int() {
                Some(c) => (c + i64::from(offset)).to_string(),
                None => {
                    let base = self.index_i32(index)?;
                    if offset == 0 {
                        base
                    } else {
                        self.inst(format!("add i32 {base}, {offset}"))
                    }
                }
            },
        };
        Ok((self.reg_elem_ptr(reg, &at)?, dtype))
    }

    /// Reads a register element as a value of its type.
    fn read_reg_elem(&mut self, r: &RegRef, offset: u32) -> Result<(String, DType), EmitError> {
        let (ptr, dtype) = self.reg_ref_ptr(r, offset)?;
        let ty = value_type(dtype).ok_or_else(|| self.unsupported("register type"))?;
        Ok((
            self.inst(format!("load {ty}, ptr addrspace(5) {ptr}")),
            dtype,
        ))
    }

    fn write_reg_elem(&mut self, r: &RegRef, offset: u32, value: &str) -> Result<(), EmitError> {
        let (ptr, dtype) = self.reg_ref_ptr(r, offset)?;
        let ty = value_type(dtype).ok_or_else(|| self.unsupported("register type"))?;
        self.stmt(format!("store {ty} {value}, ptr addrspace(5) {ptr}"));
        Ok(())
    }

    // ---- statements ----

    fn block(&mut self, stmts: &[Stmt]) -> Result<(), EmitError> {
        for s in stmts {
            self.statement(s)?;
        }
        Ok(())
    }

    fn statement(&mut self, s: &Stmt) -> Result<(), EmitError> {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                let v = self.expr(value)?;
                self.write_reg_elem(dst, 0, &v)
            }
            StmtKind::Load {
                width,
                dst,
                src,
                index,
                guard,
            } => self.guarded(
                guard.as_ref(),
                |e| e.load(*width, dst, *src, index),
                |e| e.zero_regs(*width, dst),
            ),
            StmtKind::Store {
                width,
                dst,
                index,
                src,
                guard,
            } => self.guarded(
                guard.as_ref(),
                |e| e.store(*width, *dst, index, src),
                |_| Ok(()),
            ),
            StmtKind::AsyncCopy {
                bytes,
                dst,
                dst_index,
                src,
                src_index,
                guard,
            } => {
                let dtype = self
                    .k
                    .shared_buffer(*dst)
                    .map(|b| b.dtype)
                    .ok_or_else(|| self.internal("async copy into a missing shared buffer"))?;
                let count = (u64::from(*bytes) / dtype.bytes().max(1)).max(1) as u32;
                self.body.push_str("  ; cp_async as a synchronous copy\n");
                self.guarded(
                    guard.as_ref(),
                    |e| {
                        let (v, _) = e.mem_load(count, MemRef::Global(*src), src_index, dtype)?;
                        e.mem_store(count, MemRef::Shared(*dst), dst_index, dtype, &v)
                    },
                    |e| {
                        let zero = vector_zero(count, dtype);
                        e.mem_store(count, MemRef::Shared(*dst), dst_index, dtype, &zero)
                    },
                )
            }
            StmtKind::CommitGroup => {
                self.body
                    .push_str("  ; commit_group (copies are synchronous)\n");
                Ok(())
            }
            StmtKind::WaitGroup { pending } => {
                let _ = writeln!(
                    self.body,
                    "  ; wait_group {pending} (copies are synchronous)"
                );
                Ok(())
            }
            StmtKind::Trap => {
                self.declare("llvm.trap", "declare void @llvm.trap()".into());
                self.stmt("call void @llvm.trap()");
                Ok(())
            }
            StmtKind::Barrier => {
                self.declare(
                    "llvm.amdgcn.s.barrier",
                    "declare void @llvm.amdgcn.s.barrier()".into(),
                );
                self.stmt("fence syncscope(\"workgroup\") release");
                self.stmt("call void @llvm.amdgcn.s.barrier()");
                self.stmt("fence syncscope(\"workgroup\") acquire");
                Ok(())
            }
            StmtKind::Shuffle {
                kind,
                dst,
                value,
                lane,
                width,
            } => self.shuffle(*kind, dst, value, lane, *width),
            StmtKind::Atomic {
                op,
                dst,
                index,
                value,
                guard,
            } => self.guarded(
                guard.as_ref(),
                |e| e.atomic(*op, *dst, index, value),
                |_| Ok(()),
            ),
            StmtKind::Mma {
                atom,
                n,
                d,
                a,
                b,
                c,
            } => self.mma(atom, *n, [*a, *b, *c, *d]),
            // The AMDGPU descriptions have no matrix loads, so the lowering
            // never produces one for them.
            StmtKind::MatrixLoad { load, .. } => Err(self.unsupported(format!(
                "the matrix load `{load}` (AMDGPU has no ldmatrix; fragments load from LDS per lane)"
            ))),
            StmtKind::MatrixStore { store, .. } => Err(self.unsupported(format!(
                "the matrix store `{store}` (AMDGPU has no stmatrix; fragments store to LDS per lane)"
            ))),
            // The AMDGPU descriptions have no shared-operand atoms, so the
            // lowering never produces these for them.
            StmtKind::AsyncMma { atom, .. } => Err(self.unsupported(format!(
                "async_mma through `{atom}` (AMDGPU MFMA reads registers only)"
            ))),
            StmtKind::AsyncMmaFence | StmtKind::AsyncMmaCommit | StmtKind::AsyncMmaWait { .. } => {
                Err(self.unsupported("async_mma groups (AMDGPU MFMA is synchronous)"))
            }
            // The AMDGPU descriptions have no bulk tensor copies or phased
            // barriers, so the lowering never produces these for them.
            StmtKind::SetMaxRegisters { .. } => Err(self.unsupported(
                "register reallocation between warps (AMDGPU has no setmaxnreg)",
            )),
            StmtKind::NamedBarrier { .. } => Err(self.unsupported(
                "numbered barriers for parts of a block (AMDGPU's s_barrier is block-wide)",
            )),
            StmtKind::MbarrierInit { .. }
            | StmtKind::MbarrierArrive { .. }
            | StmtKind::AsyncCopyArrive { .. }
            | StmtKind::MbarrierWait { .. }
            | StmtKind::TmaLoad { .. } => Err(self.unsupported(
                "bulk tensor copies and phased barriers (AMDGPU has neither TMA nor mbarrier)",
            )),
            StmtKind::For {
                var,
                start,
                count,
                step,
                unroll,
                body,
            } => self.for_loop(*var, start, count, step, *unroll, body),
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let c = self.expr(cond)?;
                let then_l = self.label("then");
                let end_l = self.label("endif");
                let else_l = if else_body.is_some() {
                    self.label("else")
                } else {
                    end_l.clone()
                };
                self.stmt(format!("br i1 {c}, label %{then_l}, label %{else_l}"));
                self.start_block(&then_l);
                self.block(then_body)?;
                self.stmt(format!("br label %{end_l}"));
                if let Some(e) = else_body {
                    self.start_block(&else_l);
                    self.block(e)?;
                    self.stmt(format!("br label %{end_l}"));
                }
                self.start_block(&end_l);
                Ok(())
            }
        }
    }

    /// Runs `then` when the guard holds (or there is none), `otherwise`
    /// when it does not and says `else zero`.
    fn guarded(
        &mut self,
        guard: Option<&Guard>,
        then: impl FnOnce(&mut Self) -> Result<(), EmitError>,
        otherwise: impl FnOnce(&mut Self) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let Some(g) = guard else {
            return then(self);
        };
        let c = self.expr(&g.cond)?;
        let do_l = self.label("do");
        let end_l = self.label("done");
        let skip_l = if g.otherwise == GuardElse::Zero {
            self.label("zero")
        } else {
            end_l.clone()
        };
        self.stmt(format!("br i1 {c}, label %{do_l}, label %{skip_l}"));
        self.start_block(&do_l);
        then(self)?;
        self.stmt(format!("br label %{end_l}"));
        if g.otherwise == GuardElse::Zero {
            self.start_block(&skip_l);
            otherwise(self)?;
            self.stmt(format!("br label %{end_l}"));
        }
        self.start_block(&end_l);
        Ok(())
    }

    /// The address of element `index` of a global or shared buffer.
    fn mem_ptr(
        &mut self,
        mem: MemRef,
        index: &Expr,
    ) -> Result<(String, &'static str, DType), EmitError> {
        match mem {
            MemRef::Global(p) => {
                let g = self
                    .k
                    .global(p)
                    .ok_or_else(|| self.internal("a move names a missing global buffer"))?;
                let dtype = g.dtype;
                let ty = memory_type(dtype)
                    .ok_or_else(|| self.unsupported(format!("global buffer of type {dtype}")))?;
                let i = self.index_i64(index)?;
                let ptr = self.inst(format!(
                    "getelementptr inbounds {ty}, ptr addrspace(1) %p{}, i64 {i}",
                    p.0
                ));
                Ok((ptr, "addrspace(1)", dtype))
            }
            MemRef::Shared(b) => {
                let buf = self
                    .k
                    .shared_buffer(b)
                    .ok_or_else(|| self.internal("a move names a missing shared buffer"))?;
                let dtype = buf.dtype;
                let ty = memory_type(dtype)
                    .ok_or_else(|| self.unsupported(format!("shared buffer of type {dtype}")))?;
                let offset = self
                    .lds_offsets
                    .get(b.index())
                    .copied()
                    .ok_or_else(|| self.internal("shared buffer without an LDS offset"))?;
                let base = self.inst(format!(
                    "getelementptr inbounds i8, ptr addrspace(3) {}, i32 {offset}",
                    self.lds_global
                ));
                let i = self.index_i32(index)?;
                let ptr = self.inst(format!(
                    "getelementptr inbounds {ty}, ptr addrspace(3) {base}, i32 {i}"
                ));
                Ok((ptr, "addrspace(3)", dtype))
            }
        }
    }

    /// Loads `width` elements as a vector of the memory type (or a scalar
    /// for width 1), converted to register values of `dtype`; returns the
    /// value text (a vector of value types when `width > 1`).
    fn mem_load(
        &mut self,
        width: u32,
        mem: MemRef,
        index: &Expr,
        expect: DType,
    ) -> Result<(String, DType), EmitError> {
        let (ptr, space, dtype) = self.mem_ptr(mem, index)?;
        if dtype != expect {
            return Err(self.internal(format!(
                "a move between {dtype} memory and {expect} registers"
            )));
        }
        let mty = memory_type(dtype).ok_or_else(|| self.unsupported("memory type"))?;
        let align = u64::from(width) * dtype.bytes();
        let ty = if width == 1 {
            mty.to_string()
        } else {
            format!("<{width} x {mty}>")
        };
        let raw = self.inst(format!("load {ty}, ptr {space} {ptr}, align {align}"));
        if dtype == DType::Bool {
            let zero = if width == 1 {
                "0".to_string()
            } else {
                "zeroinitializer".to_string()
            };
            let b = self.inst(format!("icmp ne {ty} {raw}, {zero}"));
            return Ok((b, dtype));
        }
        Ok((raw, dtype))
    }

    /// Stores `value` (as [`Self::mem_load`] returns it) to memory.
    fn mem_store(
        &mut self,
        width: u32,
        mem: MemRef,
        index: &Expr,
        expect: DType,
        value: &str,
    ) -> Result<(), EmitError> {
        let (ptr, space, dtype) = self.mem_ptr(mem, index)?;
        if dtype != expect {
            return Err(self.internal(format!(
                "a move between {dtype} memory and {expect} registers"
            )));
        }
        let mty = memory_type(dtype).ok_or_else(|| self.unsupported("memory type"))?;
        let align = u64::from(width) * dtype.bytes();
        let ty = if width == 1 {
            mty.to_string()
        } else {
            format!("<{width} x {mty}>")
        };
        let stored = if dtype == DType::Bool {
            let from = if width == 1 {
                "i1".to_string()
            } else {
                format!("<{width} x i1>")
            };
            self.inst(format!("zext {from} {value} to {ty}"))
        } else {
            value.to_string()
        };
        self.stmt(format!(
            "store {ty} {stored}, ptr {space} {ptr}, align {align}"
        ));
        Ok(())
    }

    fn load(
        &mut self,
        width: u32,
        dst: &RegRef,
        src: MemRef,
        index: &Expr,
    ) -> Result<(), EmitError> {
        let dtype = self.reg_dtype(dst.reg())?;
        let (v, _) = self.mem_load(width, src, index, dtype)?;
        if width == 1 {
            return self.write_reg_elem(dst, 0, &v);
        }
        let ty = value_type(dtype).ok_or_else(|| self.unsupported("register type"))?;
        for j in 0..width {
            let x = self.inst(format!("extractelement <{width} x {ty}> {v}, i32 {j}"));
            self.write_reg_elem(dst, j, &x)?;
        }
        Ok(())
    }

    fn zero_regs(&mut self, width: u32, dst: &RegRef) -> Result<(), EmitError> {
        let dtype = self.reg_dtype(dst.reg())?;
        let zero = zero_of(dtype);
        for j in 0..width {
            self.write_reg_elem(dst, j, zero)?;
        }
        Ok(())
    }

    fn store(
        &mut self,
        width: u32,
        dst: MemRef,
        index: &Expr,
        src: &RegRef,
    ) -> Result<(), EmitError> {
        let dtype = self.reg_dtype(src.reg())?;
        let ty = value_type(dtype).ok_or_else(|| self.unsupported("register type"))?;
        let value = if width == 1 {
            self.read_reg_elem(src, 0)?.0
        } else {
            let mut v = "poison".to_string();
            for j in 0..width {
                let (x, _) = self.read_reg_elem(src, j)?;
                v = self.inst(format!(
                    "insertelement <{width} x {ty}> {v}, {ty} {x}, i32 {j}"
                ));
            }
            v
        };
        self.mem_store(width, dst, index, dtype, &value)
    }

    pub fn reg_dtype(&self, r: RegId) -> Result<DType, EmitError> {
        self.k
            .register(r)
            .map(|x| x.dtype)
            .ok_or_else(|| self.internal(format!("register {} does not exist", r.0)))
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        dst: tilec_core::thread::ParamId,
        index: &Expr,
        value: &Expr,
    ) -> Result<(), EmitError> {
        let dtype = value.dtype;
        let ty = match dtype {
            DType::I8 | DType::U8 => "i8",
            DType::I16 | DType::U16 => "i16",
            DType::I32 | DType::U32 => "i32",
            DType::I64 | DType::U64 => "i64",
            _ => "",
        };
        let signed = dtype.kind() == tilec_core::ir::DTypeKind::Signed;
        let rmw = match op {
            AtomicOp::Add => None,
            // Integers compare exactly; LLVM's `fmax`/`fmin` follow
            // `maxnum` (a NaN operand loses), not TileLang's
            // compare-and-swap, so floats are refused.
            _ if ty.is_empty() => {
                return Err(self.unsupported(format!(
                    "{} of {dtype} (the AMDGPU backend combines integers only; \
                     keep the per-element values and reduce them with `T.reduce_max`/`T.reduce_min`)",
                    op.name()
                )));
            }
            AtomicOp::Max if signed => Some("max"),
            AtomicOp::Max => Some("umax"),
            AtomicOp::Min if signed => Some("min"),
            AtomicOp::Min => Some("umin"),
        };
        if let Some(rmw) = rmw {
            let v = self.expr(value)?;
            let (ptr, space, mem) = self.mem_ptr(MemRef::Global(dst), index)?;
            if mem != dtype {
                return Err(self.internal(format!("{} of {dtype} into {mem} memory", op.name())));
            }
            let align = dtype.bytes();
            self.inst(format!(
                "atomicrmw {rmw} ptr {space} {ptr}, {ty} {v} syncscope(\"agent\") monotonic, align {align}"
            ));
            return Ok(());
        }
        let (op, ty) = match dtype {
            DType::F32 => ("fadd", "float"),
            DType::F64 => ("fadd", "double"),
            DType::F16 => ("fadd", "half"),
            DType::I8 | DType::U8 => ("add", "i8"),
            DType::I16 | DType::U16 => ("add", "i16"),
            DType::I32 | DType::U32 => ("add", "i32"),
            DType::I64 | DType::U64 => ("add", "i64"),
            DType::BF16 => return Err(self.unimplemented("atomic_add of bfloat16")),
            _ => return Err(self.unsupported(format!("atomic_add of {dtype}"))),
        };
        let v = self.expr(value)?;
        let (ptr, space, mem) = self.mem_ptr(MemRef::Global(dst), index)?;
        if mem != dtype {
            return Err(self.internal(format!("atomic_add of {dtype} into {mem} memory")));
        }
        let align = dtype.bytes();
        self.inst(format!(
            "atomicrmw {op} ptr {space} {ptr}, {ty} {v} syncscope(\"agent\") monotonic, align {align}"
        ));
        Ok(())
    }

    fn shuffle(
        &mut self,
        kind: ShuffleKind,
        dst: &RegRef,
        value: &Expr,
        lane: &Expr,
        width: u32,
    ) -> Result<(), EmitError> {
        if !width.is_power_of_two() || width > WAVE {
            return Err(self.internal(format!("shuffle width {width}")));
        }
        self.declare(
            "llvm.amdgcn.ds.bpermute",
            "declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)".into(),
        );
        let v = self.expr(value)?;
        let words = self.as_i32_words(&v, value.dtype)?;
        let arg = self.expr(lane)?;
        let arg = self.int_to_i32(&arg, lane.dtype)?;
        let group = self.inst(format!("and i32 %lane, {}", !(width as i32 - 1)));
        let src = match kind {
            ShuffleKind::Idx => {
                let m = self.inst(format!("and i32 {arg}, {}", width - 1));
                self.inst(format!("add i32 {group}, {m}"))
            }
            ShuffleKind::Xor | ShuffleKind::Up | ShuffleKind::Down => {
                let l = match kind {
                    ShuffleKind::Xor => self.inst(format!("xor i32 %lane, {arg}")),
                    ShuffleKind::Up => self.inst(format!("sub i32 %lane, {arg}")),
                    _ => self.inst(format!("add i32 %lane, {arg}")),
                };
                let lo = self.inst(format!("icmp sge i32 {l}, {group}"));
                let end = self.inst(format!("add i32 {group}, {width}"));
                let hi = self.inst(format!("icmp slt i32 {l}, {end}"));
                let ok = self.inst(format!("and i1 {lo}, {hi}"));
                self.inst(format!("select i1 {ok}, i32 {l}, i32 %lane"))
            }
        };
        let addr = self.inst(format!("shl i32 {src}, 2"));
        let moved: Vec<String> = words
            .iter()
            .map(|w| {
                self.inst(format!(
                    "call i32 @llvm.amdgcn.ds.bpermute(i32 {addr}, i32 {w})"
                ))
            })
            .collect();
        let out = self.value_of_i32_words(&moved, value.dtype)?;
        self.write_reg_elem(dst, 0, &out)
    }

    fn for_loop(
        &mut self,
        var: RegId,
        start: &Expr,
        count: &Expr,
        step: &Expr,
        unroll: Unroll,
        body: &[Stmt],
    ) -> Result<(), EmitError> {
        let s = self.expr(start)?;
        let s = self.int_to_i32(&s, start.dtype)?;
        let t = self.expr(step)?;
        let t = self.int_to_i32(&t, step.dtype)?;
        let n = self.expr(count)?;
        let n = self.int_to_i64(&n, count.dtype)?;
        let counter = format!("%cnt{}", self.next_label);
        let _ = writeln!(self.prologue, "  {counter} = alloca i64, addrspace(5)");
        self.stmt(format!("store i64 0, ptr addrspace(5) {counter}"));
        let head = self.label("loop");
        let body_l = self.label("body");
        let exit = self.label("exit");
        self.stmt(format!("br label %{head}"));
        self.start_block(&head);
        let i = self.inst(format!("load i64, ptr addrspace(5) {counter}"));
        let go = self.inst(format!("icmp slt i64 {i}, {n}"));
        self.stmt(format!("br i1 {go}, label %{body_l}, label %{exit}"));
        self.start_block(&body_l);
        let i32v = self.inst(format!("trunc i64 {i} to i32"));
        let scaled = self.inst(format!("mul i32 {i32v}, {t}"));
        let value = self.inst(format!("add i32 {s}, {scaled}"));
        self.stmt(format!(
            "store i32 {value}, ptr addrspace(5) {}",
            Self::reg_slot(var)
        ));
        self.block(body)?;
        let i2 = self.inst(format!("load i64, ptr addrspace(5) {counter}"));
        let next = self.inst(format!("add i64 {i2}, 1"));
        self.stmt(format!("store i64 {next}, ptr addrspace(5) {counter}"));
        let md = match unroll {
            Unroll::None => String::new(),
            Unroll::Full => {
                let hint = self
                    .m
                    .metadata_node(|id| format!("!{id} = !{{!\"llvm.loop.unroll.full\"}}"));
                let node = self
                    .m
                    .metadata_node(|id| format!("!{id} = distinct !{{!{id}, !{hint}}}"));
                format!(", !llvm.loop !{node}")
            }
            Unroll::By(f) => {
                let hint = self.m.metadata_node(|id| {
                    format!("!{id} = !{{!\"llvm.loop.unroll.count\", i32 {f}}}")
                });
                let node = self
                    .m
                    .metadata_node(|id| format!("!{id} = distinct !{{!{id}, !{hint}}}"));
                format!(", !llvm.loop !{node}")
            }
        };
        self.stmt(format!("br label %{head}{md}"));
        self.start_block(&exit);
        Ok(())
    }

    fn mma(&mut self, atom: &str, n: Option<u32>, frags: [FragRef; 4]) -> Result<(), EmitError> {
        let [a, b, c, d] = frags;
        let a_type = self.reg_dtype(a.array)?;
        let b_type = self.reg_dtype(b.array)?;
        let c_type = self.reg_dtype(c.array)?;
        let d_type = self.reg_dtype(d.array)?;
        let found = self
            .target
            .matrix_atoms
            .iter()
            .find(|x| x.name == atom)
            .ok_or_else(|| self.internal(format!("the target has no matrix atom `{atom}`")))?;
        if n.is_some_and(|n| n != found.shape.n) {
            return Err(self.unsupported(format!("matrix atom `{atom}` with another N")));
        }
        let call = mfma::Call::select(found, a_type, b_type, c_type, d_type)
            .map_err(|what| self.unsupported(what))?;
        mfma::check_fragments(found).map_err(|what| self.internal(what))?;
        self.declare(&call.intrinsic, call.declaration());
        let in_ty = call.input_type;
        let mut operands = Vec::new();
        for (frag, slots, elem) in [(a, 4u32, in_ty), (b, 4, in_ty)] {
            operands.push(self.gather(frag, slots, elem)?);
        }
        let acc = self.gather(c, call.acc_slots, "float")?;
        let result = self.inst(format!(
            "call <{n} x float> @{}(<4 x {in_ty}> {}, <4 x {in_ty}> {}, <{n} x float> {acc}, i32 0, i32 0, i32 0)",
            call.intrinsic,
            operands[0],
            operands[1],
            n = call.acc_slots
        ));
        for s in 0..call.acc_slots {
            let x = self.inst(format!(
                "extractelement <{} x float> {result}, i32 {s}",
                call.acc_slots
            ));
            let r = RegRef::Elem(d.array, Expr::int(0));
            self.write_reg_elem(&r, d.offset + s, &x)?;
        }
        Ok(())
    }

    /// `slots` consecutive elements of a local array as a vector.
    fn gather(&mut self, frag: FragRef, slots: u32, elem: &str) -> Result<String, EmitError> {
        let mut v = "poison".to_string();
        let r = RegRef::Elem(frag.array, Expr::int(0));
        for s in 0..slots {
            let (x, _) = self.read_reg_elem(&r, frag.offset + s)?;
            v = self.inst(format!(
                "insertelement <{slots} x {elem}> {v}, {elem} {x}, i32 {s}"
            ));
        }
        Ok(v)
    }
}

/// The zero of a value type.
pub(crate) fn zero_of(d: DType) -> &'static str {
    match d {
        DType::Bool => "false",
        DType::F16 | DType::F32 | DType::F64 => "0.0",
        _ => "0",
    }
}

/// The zero of `count` elements (a scalar when `count` is 1).
fn vector_zero(_count: u32, _d: DType) -> String {
    "zeroinitializer".to_string()
}
