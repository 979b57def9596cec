//! One kernel: the entry's signature, its prologue, statements and
//! structured control flow.
//!
//! The entry takes the thread-IR parameters in order: a global buffer is a
//! `.param .u64` device address, converted once to a global-window address
//! (`cvta.to.global`); an integer scalar is a `.param .s32`, `.u32` or
//! `.s64` (narrow integers travel as 32 bits and are normalised on entry;
//! `u64` travels as `.s64`, which a host passes the same way). The
//! prologue then reads the special registers the body uses, the address of
//! `tilec_smem` and, for kernels that shuffle, the warp's member mask.
//!
//! Statements are emitted in order, each after a comment with its
//! thread-IR header. `for` becomes a counted loop (`i` from 0 while
//! `i < count`, the variable advanced by `step`, which may be negative) or
//! is unrolled ([`super::plan`]); `if` becomes a predicated branch. Code
//! that shuffles inside a conditional or a loop keeps an exact member mask
//! ([`super::warp`]) so that `shfl.sync` names precisely the lanes that
//! reach it.

use std::collections::{BTreeSet, HashMap};

use tilec_core::ir::{DType, Span};
use tilec_core::target::TargetDescription;
use tilec_core::thread::{
    Expr, FragRef, Kernel, Param, RegId, RegRef, RegisterKind, Special, Stmt, StmtKind, Unroll,
    print_stmt_header,
};

use super::math::Routine;
use super::plan::{Plan, unrolled};
use super::target::PtxTarget;
use super::text::{Body, Names, RegFile, is_ptx_identifier, sanitize};
use super::value::{Class, Val, class_of};
use super::{PtxError, PtxKernel, PtxOptions, PtxParam, PtxParamKind};

/// Where a thread-IR register lives.
#[derive(Clone, Debug)]
pub(crate) enum Storage {
    /// A scalar or loop variable in one PTX register.
    Reg(Val),
    /// A local array, one register per element.
    Regs(Vec<String>),
    /// A local array in `.local` memory.
    Local { symbol: String },
    /// A local array of 16-bit floats, one 32-bit register per pair of
    /// elements (element `2i` in bits 15:0 of word `i`); only matrix loads
    /// and matrix atoms touch it ([`super::plan`]).
    Pairs(Vec<String>),
}

/// One element of a register-side operand.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Place {
    Reg(String),
    /// `.local` memory at `[base+offset]` (`base` a symbol or a 64-bit
    /// register).
    Local {
        base: String,
        offset: i64,
    },
}

/// What emitting one kernel produced.
#[derive(Debug)]
pub(crate) struct Emitted {
    pub text: String,
    pub kernel: PtxKernel,
    pub routines: BTreeSet<Routine>,
    pub shared_align: u32,
}

/// The state of emitting one kernel.
#[derive(Debug)]
pub(crate) struct Emitter<'a> {
    pub k: &'a Kernel,
    pub desc: &'a TargetDescription,
    pub target: &'a PtxTarget,
    pub opts: &'a PtxOptions,
    pub plan: Plan,
    pub regs: RegFile,
    pub body: Body,
    pub storage: Vec<Storage>,
    /// Per parameter: the buffer's global address or the scalar's value.
    pub params: Vec<Val>,
    /// Per entry of [`Special::ALL`], once read in the prologue.
    pub specials: Vec<Option<Val>>,
    /// The 32-bit address of `tilec_smem`.
    pub smem: Option<Val>,
    /// Values of the variables of the loops being unrolled.
    pub env: HashMap<RegId, i64>,
    /// The lanes of the warp executing the current code (`shfl.sync` and
    /// `vote.sync` member mask).
    pub mask: Val,
    pub routines: BTreeSet<Routine>,
    /// Per tensor map: the register holding its generic address.
    pub tensor_maps: Vec<String>,
    /// The tensor maps' `.param` declarations and description lines
    /// (`tma.rs`).
    map_params: (Vec<String>, Vec<String>),
    local_decls: Vec<String>,
    /// The statement being emitted, for errors.
    stmt: Option<(String, Span)>,
    /// The source line the last `.loc` named.
    line: Option<usize>,
    /// The address of the statement being emitted (`Plan::fenced`).
    current: usize,
    /// Shared-memory matrix descriptors built for the run of `async_mma`
    /// statements being emitted (`mma.rs`), valid until another statement
    /// or an unrolled iteration starts.
    pub descriptors: Vec<super::mma::CachedDescriptor>,
}

type Result<T> = std::result::Result<T, PtxError>;

/// The name of the shared array every kernel's buffers live in.
pub(crate) const SMEM: &str = "tilec_smem";

pub(crate) fn emit_kernel(
    k: &Kernel,
    desc: &TargetDescription,
    target: &PtxTarget,
    opts: &PtxOptions,
) -> Result<Emitted> {
    if !is_ptx_identifier(&k.name) {
        return Err(PtxError::Unsupported {
            kernel: k.name.clone(),
            stmt: None,
            span: Span::UNKNOWN,
            reason: "the kernel name is not a PTX identifier, so no host could launch it by name"
                .to_string(),
        });
    }
    let mut e = Emitter {
        k,
        desc,
        target,
        opts,
        plan: Plan::new(k),
        regs: RegFile::default(),
        body: Body::default(),
        storage: Vec::new(),
        params: Vec::new(),
        specials: vec![None; Special::ALL.len()],
        smem: None,
        env: HashMap::new(),
        mask: Val::bits(Class::B32, 0xFFFF_FFFF),
        routines: BTreeSet::new(),
        tensor_maps: Vec::new(),
        map_params: (Vec::new(), Vec::new()),
        local_decls: Vec::new(),
        stmt: None,
        line: None,
        current: 0,
        descriptors: Vec::new(),
    };
    let params = e.prologue()?;
    e.body.blank();
    e.block(&k.body)?;
    e.body.inst("ret");
    super::text::coalesce_moves(&mut e.body.lines);
    let text = e.finish(&params);
    Ok(Emitted {
        text,
        kernel: PtxKernel {
            name: k.name.clone(),
            threads: k.threads,
            shared_bytes: e.plan.shared_bytes,
            params,
        },
        routines: e.routines,
        shared_align: e.plan.shared_align,
    })
}

impl<'a> Emitter<'a> {
    // ---- errors ----

    /// An unsupported-construct error at the current statement.
    pub fn unsupported(&self, reason: impl Into<String>) -> PtxError {
        PtxError::Unsupported {
            kernel: self.k.name.clone(),
            stmt: self.stmt.as_ref().map(|(h, _)| h.clone()),
            span: self.stmt.as_ref().map_or(Span::UNKNOWN, |(_, s)| *s),
            reason: reason.into(),
        }
    }

    /// An internal inconsistency (IR the verifier should have refused).
    pub fn malformed(&self, what: impl std::fmt::Display) -> PtxError {
        self.unsupported(format!("malformed thread IR: {what}"))
    }

    // ---- instruction helpers ----

    pub fn tmp(&mut self, class: Class) -> String {
        self.regs.temp(class)
    }

    pub fn emit(&mut self, text: impl Into<String>) {
        self.body.inst(text);
    }

    /// A math-library program expanded at this point, its arguments in
    /// `params`; answers the registers of its results.
    pub fn expand(
        &mut self,
        program: &super::math::prog::Program,
        params: &[String],
    ) -> Vec<String> {
        program.emit_into(params, &mut self.regs, &mut self.body)
    }

    /// `opcode d, a` into a fresh register of `class`.
    pub fn op1(&mut self, class: Class, opcode: &str, a: &Val) -> Val {
        let d = self.tmp(class);
        self.emit(format!("{opcode} {d}, {a}"));
        Val::reg(class, d)
    }

    pub fn op2(&mut self, class: Class, opcode: &str, a: &Val, b: &Val) -> Val {
        let d = self.tmp(class);
        self.emit(format!("{opcode} {d}, {a}, {b}"));
        Val::reg(class, d)
    }

    pub fn op3(&mut self, class: Class, opcode: &str, a: &Val, b: &Val, c: &Val) -> Val {
        let d = self.tmp(class);
        self.emit(format!("{opcode} {d}, {a}, {b}, {c}"));
        Val::reg(class, d)
    }

    /// `setp.<cmp>.<ty>` into a fresh predicate.
    pub fn setp(&mut self, cmp: &str, ty: &str, a: &Val, b: &Val) -> Val {
        self.op2(Class::Pred, &format!("setp.{cmp}.{ty}"), a, b)
    }

    /// `p ? a : b` for non-predicate classes.
    pub fn selp(&mut self, a: &Val, b: &Val, p: &Val) -> Val {
        let class = a.class;
        let p = self.pred(p);
        self.op3(class, &format!("selp.{}", class.ty()), a, b, &p)
    }

    /// `v` in a register (immediates are moved into one).
    pub fn in_reg(&mut self, v: &Val) -> Val {
        if !v.is_imm() {
            return v.clone();
        }
        if v.class == Class::Pred {
            return self.pred(v);
        }
        self.op1(v.class, &format!("mov.{}", v.class.ty()), v)
    }

    /// `v` now: immediates as they are, registers copied (a later write
    /// to the register does not change the snapshot).
    pub fn snapshot(&mut self, v: &Val) -> Val {
        if v.is_imm() && v.class != Class::Pred {
            return v.clone();
        }
        if v.class == Class::Pred {
            let p = self.pred(v);
            return self.op1(Class::Pred, "mov.pred", &p);
        }
        self.op1(v.class, &format!("mov.{}", v.class.ty()), v)
    }

    /// A predicate in a register (a constant becomes `setp` of constants).
    pub fn pred(&mut self, v: &Val) -> Val {
        match v.as_bool() {
            Some(b) => self.setp(
                "eq",
                "u32",
                &Val::bits(Class::B32, u64::from(b)),
                &Val::bits(Class::B32, 1),
            ),
            None => v.clone(),
        }
    }

    // ---- the prologue ----

    /// Reads the parameters, special registers and addresses; declares
    /// the thread-IR registers. Returns the entry's parameter list.
    fn prologue(&mut self) -> Result<Vec<PtxParam>> {
        let mut names = Names::default();
        let mut params = Vec::with_capacity(self.k.params.len());
        self.body.comment("parameters");
        for p in &self.k.params {
            let ptx_name = names.unique(&format!("{}_{}", self.k.name, sanitize(p.name())));
            let (kind, val) = match p {
                Param::Global(g) => {
                    let r = self.regs.named(Class::B64, &g.name);
                    self.emit(format!("ld.param.u64 {r}, [{ptx_name}]"));
                    self.emit(format!("cvta.to.global.u64 {r}, {r}"));
                    (
                        PtxParamKind::Buffer { dtype: g.dtype },
                        Val::reg(Class::B64, r),
                    )
                }
                Param::Scalar { name, dtype } => {
                    let ty = scalar_param_type(*dtype).ok_or_else(|| {
                        self.unsupported(format!("scalar parameter `%{name}` has type {dtype}"))
                    })?;
                    let class = class_of(*dtype);
                    let r = self.regs.named(class, name);
                    self.emit(format!("ld.param.{ty} {r}, [{ptx_name}]"));
                    let v = Val::reg(class, r.clone());
                    let v = self.normalize_into(v, *dtype, &r);
                    (
                        PtxParamKind::Scalar {
                            dtype: *dtype,
                            ptx_type: ty,
                        },
                        v,
                    )
                }
            };
            self.params.push(val);
            params.push(PtxParam {
                name: p.name().to_string(),
                ptx_name,
                kind,
            });
        }
        self.map_params = self.tensor_map_params(&mut names)?;
        self.read_specials();
        if !self.k.shared.is_empty() {
            let r = self.regs.named(Class::B32, "smem");
            self.emit(format!("mov.u32 {r}, {SMEM}"));
            self.smem = Some(Val::reg(Class::B32, r));
        }
        if self.plan.shuffles {
            self.mask = self.warp_mask();
        }
        self.declare_registers()?;
        Ok(params)
    }

    /// A narrow scalar loaded as 32 bits, normalised in place.
    fn normalize_into(&mut self, v: Val, dtype: DType, r: &str) -> Val {
        let cvt = match dtype {
            DType::I8 => "cvt.s32.s8",
            DType::I16 => "cvt.s32.s16",
            DType::U8 => "cvt.u32.u8",
            DType::U16 => "cvt.u32.u16",
            _ => return v,
        };
        self.emit(format!("{cvt} {r}, {r}"));
        v
    }

    fn read_specials(&mut self) {
        let uses_tid = [Special::ThreadIdx, Special::LaneId, Special::WarpId]
            .iter()
            .any(|&s| self.plan.reads_special(s))
            || (self.plan.shuffles && !self.k.threads.is_multiple_of(self.target.warp));
        if !uses_tid && !Special::ALL.iter().any(|&s| self.plan.reads_special(s)) {
            return;
        }
        self.body.comment("thread and block indices");
        if uses_tid {
            let r = self.regs.named(Class::B32, "tid");
            self.emit(format!("mov.u32 {r}, %tid.x"));
            self.set_special(Special::ThreadIdx, r);
        }
        for (s, reg) in [
            (Special::BlockIdxX, "x"),
            (Special::BlockIdxY, "y"),
            (Special::BlockIdxZ, "z"),
        ] {
            if self.plan.reads_special(s) {
                let r = self.regs.named(Class::B32, &format!("ctaid_{reg}"));
                self.emit(format!("mov.u32 {r}, %ctaid.{reg}"));
                self.set_special(s, r);
            }
        }
        let tid = self.special(Special::ThreadIdx);
        if self.plan.reads_special(Special::LaneId) {
            let r = self.regs.named(Class::B32, "lane");
            self.emit(format!("and.b32 {r}, {tid}, {}", self.target.warp - 1));
            self.set_special(Special::LaneId, r);
        }
        if self.plan.reads_special(Special::WarpId) {
            let r = self.regs.named(Class::B32, "warp");
            let shift = self.target.warp.trailing_zeros();
            self.emit(format!("shr.u32 {r}, {tid}, {shift}"));
            self.set_special(Special::WarpId, r);
        }
    }

    fn set_special(&mut self, s: Special, reg: String) {
        if let Some(i) = Special::ALL.iter().position(|&x| x == s)
            && let Some(slot) = self.specials.get_mut(i)
        {
            *slot = Some(Val::reg(Class::B32, reg));
        }
    }

    /// The register holding a special value (read in the prologue).
    pub fn special(&self, s: Special) -> Val {
        Special::ALL
            .iter()
            .position(|&x| x == s)
            .and_then(|i| self.specials.get(i).cloned().flatten())
            .unwrap_or_else(|| Val::int(DType::I32, 0))
    }

    /// Registers for scalars and loop variables, registers or `.local`
    /// arrays for local arrays.
    fn declare_registers(&mut self) -> Result<()> {
        let mut symbols = Names::default();
        for (i, r) in self.k.registers.iter().enumerate() {
            let class = class_of(r.dtype);
            let storage = match r.kind {
                RegisterKind::Scalar | RegisterKind::Loop => {
                    Storage::Reg(Val::reg(class, self.regs.named(class, &r.name)))
                }
                RegisterKind::Array { len }
                    if self.plan.paired.get(i).copied().unwrap_or(false) =>
                {
                    Storage::Pairs(self.regs.named_array(Class::B32, &r.name, len / 2))
                }
                RegisterKind::Array { len } => {
                    if self.plan.local.get(i).copied().unwrap_or(true) {
                        let symbol = symbols.unique(&format!("local_{}", sanitize(&r.name)));
                        let bytes = u64::from(len) * u64::from(class.bytes());
                        self.local_decls
                            .push(format!(".local .align 8 .b8 {symbol}[{bytes}]"));
                        Storage::Local { symbol }
                    } else {
                        Storage::Regs(self.regs.named_array(class, &r.name, len))
                    }
                }
            };
            self.storage.push(storage);
        }
        Ok(())
    }

    /// The entry text.
    fn finish(&self, params: &[PtxParam]) -> String {
        let mut out = String::new();
        for line in &self.map_params.1 {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&format!(".visible .entry {}(", self.k.name));
        let mut list: Vec<String> = params
            .iter()
            .map(|p| {
                let ty = match p.kind {
                    PtxParamKind::Buffer { .. } => "u64",
                    PtxParamKind::Scalar { ptx_type, .. } => ptx_type,
                };
                format!("\n  .param .{ty} {}", p.ptx_name)
            })
            .collect();
        list.extend(self.map_params.0.iter().cloned());
        out.push_str(&list.join(","));
        if !list.is_empty() {
            out.push('\n');
        }
        out.push_str(")\n");
        out.push_str(&format!(".maxntid {}, 1, 1\n", self.k.threads));
        if self.plan.reallocates {
            // `setmaxnreg` moves registers only in a kernel whose entry
            // register count `ptxas` knows: the thread count and one block
            // per multiprocessor fix it (otherwise ptxas drops the
            // instruction, warning C7508).
            out.push_str(".minnctapersm 1\n");
        }
        out.push_str("{\n");
        self.regs.declarations(&mut out);
        for l in &self.local_decls {
            out.push_str(&format!("  {l};\n"));
        }
        out.push('\n');
        self.body.render(&mut out);
        out.push_str("}\n");
        out
    }

    // ---- statements ----

    pub fn block(&mut self, body: &[Stmt]) -> Result<()> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        let header = print_stmt_header(self.k, s);
        let comment = match &self.opts.source {
            Some(source) if !s.span.is_unknown() => {
                let (line, column, text) = source.locate(s.span.start);
                if self.line != Some(line) {
                    self.line = Some(line);
                    self.body.directive(format!(".loc 1 {line} {column}"));
                    self.body
                        .comment(format!("{}:{line}: {}", source.name, text.trim()));
                }
                format!("{header}  ({}:{line}:{column})", source.name)
            }
            _ if s.span.is_unknown() => header.clone(),
            _ => format!("{header}  (span {}..{})", s.span.start, s.span.end),
        };
        self.body.comment(comment);
        let saved = self.stmt.replace((header, s.span));
        self.current = super::plan::stmt_key(s);
        if !matches!(s.kind, StmtKind::AsyncMma { .. }) {
            self.descriptors.clear();
        }
        let r = self.stmt_kind(&s.kind);
        self.stmt = saved;
        r
    }

    fn stmt_kind(&mut self, kind: &StmtKind) -> Result<()> {
        match kind {
            StmtKind::Assign { dst, value } => {
                let v = self.expr(value)?;
                let places = self.places(dst, 1)?;
                for p in &places {
                    self.write_place(p, &v, None);
                }
                Ok(())
            }
            StmtKind::Load {
                width,
                dst,
                src,
                index,
                guard,
            } => self.load(*width, dst, *src, index, guard.as_ref()),
            StmtKind::Store {
                width,
                dst,
                index,
                src,
                guard,
            } => self.store(*width, *dst, index, src, guard.as_ref()),
            StmtKind::AsyncCopy {
                bytes,
                dst,
                dst_index,
                src,
                src_index,
                guard,
            } => self.async_copy(*bytes, *dst, dst_index, *src, src_index, guard.as_ref()),
            StmtKind::CommitGroup => {
                self.emit("cp.async.commit_group");
                Ok(())
            }
            StmtKind::AsyncCopyArrive { bar, index } => {
                let addr = self.shared_operand(*bar, index)?;
                self.emit(format!("cp.async.mbarrier.arrive.noinc.shared.b64 {addr}"));
                Ok(())
            }
            StmtKind::WaitGroup { pending } => {
                self.emit(format!("cp.async.wait_group {pending}"));
                Ok(())
            }
            StmtKind::Barrier => {
                if self.plan.async_mma && self.plan.fenced.contains(&self.current) {
                    // Shared-memory writes of the generic proxy (stores,
                    // cp.async, mbarrier.init) become visible to the
                    // async proxy (wgmma, TMA) only through a proxy fence;
                    // one before each barrier such a write may reach
                    // orders every write the barrier publishes.
                    self.emit("fence.proxy.async.shared::cta");
                }
                self.emit("bar.sync 0");
                Ok(())
            }
            StmtKind::SetMaxRegisters { count, increase } => {
                let op = if *increase { "inc" } else { "dec" };
                self.emit(format!("setmaxnreg.{op}.sync.aligned.u32 {count}"));
                Ok(())
            }
            StmtKind::NamedBarrier { id, threads, wait } => {
                if self.plan.async_mma && self.plan.fenced.contains(&self.current) {
                    self.emit("fence.proxy.async.shared::cta");
                }
                // The number may differ between warps (a register).
                let v = self.expr(id)?;
                let v = if v.class == Class::B64 {
                    let r = self.in_reg(&v);
                    self.op1(Class::B32, "cvt.u32.u64", &r)
                } else {
                    v
                };
                let op = if *wait { "bar.sync" } else { "bar.arrive" };
                self.emit(format!("{op} {}, {threads}", v.text));
                Ok(())
            }
            StmtKind::AsyncMma {
                atom,
                n,
                d,
                a,
                b,
                accumulate,
            } => self.async_mma(atom, *n, *d, (a, b), accumulate),
            StmtKind::MbarrierInit { bar, index, count } => self.mbarrier_init(*bar, index, count),
            StmtKind::MbarrierArrive { bar, index, tx } => {
                if self.plan.async_mma && self.plan.fenced.contains(&self.current) {
                    // An arrival releases the thread's shared writes to the
                    // waiting threads, whose wgmmas read through the async
                    // proxy (module documentation of `plan.rs`).
                    self.emit("fence.proxy.async.shared::cta");
                }
                self.mbarrier_arrive(*bar, index, tx.as_ref())
            }
            StmtKind::MbarrierWait { bar, index, parity } => {
                self.mbarrier_wait(*bar, index, parity)
            }
            StmtKind::TmaLoad {
                map,
                dst,
                dst_index,
                coords,
                bar,
                bar_index,
            } => self.tma_load(*map, *dst, dst_index, coords, *bar, bar_index),
            StmtKind::AsyncMmaFence => {
                self.emit("wgmma.fence.sync.aligned");
                Ok(())
            }
            StmtKind::Trap => {
                self.emit("trap");
                Ok(())
            }
            StmtKind::AsyncMmaCommit => {
                self.emit("wgmma.commit_group.sync.aligned");
                Ok(())
            }
            StmtKind::AsyncMmaWait { pending } => {
                self.emit(format!("wgmma.wait_group.sync.aligned {pending}"));
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
            } => self.atomic(*op, *dst, index, value, guard.as_ref()),
            StmtKind::Mma {
                atom,
                n,
                d,
                a,
                b,
                c,
            } => self.mma(atom, *n, [*a, *b, *c, *d]),
            StmtKind::MatrixLoad {
                load,
                count,
                trans,
                dst,
                src,
                index,
            } => self.matrix_load(load, *count, *trans, *dst, *src, index),
            StmtKind::MatrixStore {
                store,
                count,
                trans,
                dst,
                index,
                src,
            } => self.matrix_store(store, *count, *trans, *dst, index, *src),
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
            } => self.if_stmt(cond, then_body, else_body.as_deref()),
        }
    }

    fn for_loop(
        &mut self,
        var: RegId,
        start: &Expr,
        count: &Expr,
        step: &Expr,
        unroll: Unroll,
        body: &[Stmt],
    ) -> Result<()> {
        let name = self
            .k
            .register(var)
            .map_or_else(|| "?".to_string(), |r| r.name.clone());
        if let Some(values) = unrolled(start, count, step, unroll, body, &self.env) {
            if values.is_empty() {
                self.body.comment("(no iterations)");
            }
            for v in values {
                self.body.comment(format!("%{name} = {v}"));
                self.env.insert(var, v);
                self.descriptors.clear();
                self.block(body)?;
            }
            self.env.remove(&var);
            self.descriptors.clear();
            return Ok(());
        }
        let Some(Storage::Reg(var_reg)) = self.storage.get(var.index()).cloned() else {
            return Err(self.malformed(format!("loop variable `%{name}` has no register")));
        };
        let start = self.expr(start)?;
        let step = self.expr(step)?;
        let count_dtype = count.dtype;
        let count = self.expr(count)?;
        if count.as_int().is_some_and(|c| c <= 0) {
            self.body.comment("(no iterations)");
            return Ok(());
        }
        // The body may change the registers the bounds were read from.
        let count = self.snapshot(&count);
        let step = self.snapshot(&step);
        self.emit(format!("mov.b32 {var_reg}, {start}"));
        let ctr = self.tmp(count.class);
        self.emit(format!("mov.{} {ctr}, 0", count.class.bits()));
        let ctr = Val::reg(count.class, ctr);
        let cmp_ty = match count_dtype {
            DType::U32 => "u32",
            _ if count.class == Class::B64 => "s64",
            _ => "s32",
        };
        if self.contains_shuffle(body) {
            self.lockstep_loop(&var_reg, &step, &count, &ctr, cmp_ty, body)
        } else {
            self.plain_loop(&var_reg, &step, &count, &ctr, cmp_ty, body)
        }
    }

    /// `for` as a bottom-tested loop after an entry test.
    fn plain_loop(
        &mut self,
        var: &Val,
        step: &Val,
        count: &Val,
        ctr: &Val,
        cmp_ty: &str,
        body: &[Stmt],
    ) -> Result<()> {
        let top = self.body.fresh_label("loop");
        let end = self.body.fresh_label("end");
        // A loop that may run zero times tests before its first iteration.
        if count.as_int().is_none() {
            let p = self.setp("ge", cmp_ty, ctr, count);
            self.body.inst_if(Some(&p.text), format!("bra {end}"));
        }
        self.body.label(&top);
        self.block(body)?;
        self.emit(format!("add.s32 {var}, {var}, {step}"));
        self.emit(format!("add.{} {ctr}, {ctr}, 1", int_add_ty(ctr.class)));
        let p = self.setp("lt", cmp_ty, ctr, count);
        self.body.inst_if(Some(&p.text), format!("bra {top}"));
        self.body.label(&end);
        Ok(())
    }

    /// `for` whose body shuffles: the lanes of each warp iterate together
    /// until all are done, and each iteration's member mask is the lanes
    /// still inside their trip count.
    fn lockstep_loop(
        &mut self,
        var: &Val,
        step: &Val,
        count: &Val,
        ctr: &Val,
        cmp_ty: &str,
        body: &[Stmt],
    ) -> Result<()> {
        let top = self.body.fresh_label("loop");
        let next = self.body.fresh_label("next");
        let end = self.body.fresh_label("end");
        self.body.label(&top);
        let active = self.setp("lt", cmp_ty, ctr, count);
        let mask = self.ballot(&active);
        let none = self.setp("eq", "b32", &mask, &Val::bits(Class::B32, 0));
        self.body.inst_if(Some(&none.text), format!("bra {end}"));
        self.body
            .inst_if(Some(&format!("!{}", active.text)), format!("bra {next}"));
        let saved = std::mem::replace(&mut self.mask, mask);
        let r = self.block(body);
        self.mask = saved;
        r?;
        self.body.label(&next);
        self.emit(format!("add.s32 {var}, {var}, {step}"));
        self.emit(format!("add.{} {ctr}, {ctr}, 1", int_add_ty(ctr.class)));
        self.emit(format!("bra {top}"));
        self.body.label(&end);
        Ok(())
    }

    fn if_stmt(
        &mut self,
        cond: &Expr,
        then_body: &[Stmt],
        else_body: Option<&[Stmt]>,
    ) -> Result<()> {
        if else_body.is_none() && self.elect_if(cond, then_body)? {
            return Ok(());
        }
        let c = self.expr(cond)?;
        if let Some(b) = c.as_bool() {
            self.body.comment(format!("(condition is always {b})"));
            return match (b, else_body) {
                (true, _) => self.block(then_body),
                (false, Some(e)) => self.block(e),
                (false, None) => Ok(()),
            };
        }
        let warp_sync =
            self.contains_shuffle(then_body) || else_body.is_some_and(|e| self.contains_shuffle(e));
        let (then_mask, else_mask) = if warp_sync {
            let t = self.ballot(&c);
            let not_t = self.op1(Class::B32, "not.b32", &t);
            let e = self.op2(Class::B32, "and.b32", &self.mask.clone(), &not_t);
            (t, e)
        } else {
            (self.mask.clone(), self.mask.clone())
        };
        let end = self.body.fresh_label("end");
        let else_label = else_body.map(|_| self.body.fresh_label("else"));
        let skip = else_label.clone().unwrap_or_else(|| end.clone());
        self.body
            .inst_if(Some(&format!("!{}", c.text)), format!("bra {skip}"));
        let saved = std::mem::replace(&mut self.mask, then_mask);
        let r = self.block(then_body);
        self.mask = else_mask;
        let r = r.and_then(|()| match (else_body, &else_label) {
            (Some(e), Some(l)) => {
                self.emit(format!("bra {end}"));
                self.body.label(l);
                self.block(e)
            }
            _ => Ok(()),
        });
        self.mask = saved;
        r?;
        self.body.label(&end);
        Ok(())
    }

    /// Whether a body contains a shuffle (at any depth).
    pub fn contains_shuffle(&self, body: &[Stmt]) -> bool {
        body.iter().any(|s| match &s.kind {
            StmtKind::Shuffle { .. } => true,
            StmtKind::For { body, .. } => self.contains_shuffle(body),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                self.contains_shuffle(then_body)
                    || else_body
                        .as_deref()
                        .is_some_and(|e| self.contains_shuffle(e))
            }
            _ => false,
        })
    }

    // ---- register places ----

    /// The storage of a register.
    pub fn storage_of(&self, r: RegId) -> Result<Storage> {
        self.storage
            .get(r.index())
            .cloned()
            .ok_or_else(|| self.malformed(format!("register {} does not exist", r.0)))
    }

    /// The words `offset / 2 ..` of a fragment array kept in pairs that
    /// hold its `slots` elements from `offset`, or `None` when the array is
    /// not kept that way.
    pub fn pair_words(&self, f: FragRef, slots: u32) -> Result<Option<Vec<String>>> {
        let Storage::Pairs(words) = self.storage_of(f.array)? else {
            return Ok(None);
        };
        let (first, count) = ((f.offset / 2) as usize, (slots / 2) as usize);
        match words.get(first..first + count) {
            Some(w) if f.offset.is_multiple_of(2) && slots.is_multiple_of(2) => {
                Ok(Some(w.to_vec()))
            }
            _ => Err(self.malformed(format!(
                "elements {}..{} of a fragment array kept in words",
                f.offset,
                f.offset + slots
            ))),
        }
    }

    /// The dtype of a register.
    pub fn reg_dtype(&self, r: RegId) -> Result<DType> {
        self.k
            .register(r)
            .map(|r| r.dtype)
            .ok_or_else(|| self.malformed(format!("register {} does not exist", r.0)))
    }

    /// The `width` consecutive elements a register reference names.
    pub fn places(&mut self, r: &RegRef, width: u32) -> Result<Vec<Place>> {
        let (id, index) = match r {
            RegRef::Scalar(id) => (*id, None),
            RegRef::Elem(id, index) => (*id, Some(index)),
        };
        self.places_at(id, index, width)
    }

    /// Elements `index .. index + width` of register `id` (`None`: the
    /// scalar itself).
    pub fn places_at(&mut self, id: RegId, index: Option<&Expr>, width: u32) -> Result<Vec<Place>> {
        match (self.storage_of(id)?, index) {
            (Storage::Pairs(_), _) => Err(self.malformed(
                "an element of a fragment array kept in words, which only matrix loads and atoms may touch",
            )),
            (Storage::Reg(v), None) if width == 1 => Ok(vec![Place::Reg(v.text)]),
            (Storage::Regs(names), Some(index)) => {
                let start = super::fold::fold_int(index, &self.env)
                    .ok_or_else(|| self.malformed("a register array with a run-time index"))?;
                let range = usize::try_from(start)
                    .ok()
                    .and_then(|s| names.get(s..s.checked_add(width as usize)?))
                    .ok_or_else(|| {
                        self.unsupported(format!(
                            "elements {start}..{} are outside the array of {} elements",
                            start + i64::from(width),
                            names.len()
                        ))
                    })?;
                Ok(range.iter().map(|n| Place::Reg(n.clone())).collect())
            }
            (Storage::Local { symbol }, Some(index)) => {
                let class = class_of(self.reg_dtype(id)?);
                let stride = i64::from(class.bytes());
                let (base, first) = match super::fold::fold_int(index, &self.env) {
                    Some(i) => {
                        let first = i.checked_mul(stride).ok_or_else(|| {
                            self.unsupported(format!("element {i} is outside its array"))
                        })?;
                        (symbol, first)
                    }
                    None => {
                        let v = self.expr(index)?;
                        let addr = self.local_address(&symbol, &v, stride, index.dtype);
                        (addr, 0)
                    }
                };
                Ok((0..i64::from(width))
                    .map(|j| Place::Local {
                        base: base.clone(),
                        offset: first.saturating_add(j * stride),
                    })
                    .collect())
            }
            _ => Err(self.malformed("register reference of the wrong kind")),
        }
    }

    /// `symbol + index·stride` as a 64-bit local address.
    fn local_address(&mut self, symbol: &str, index: &Val, stride: i64, dtype: DType) -> String {
        let base = self.tmp(Class::B64);
        self.emit(format!("mov.u64 {base}, {symbol}"));
        let off = self.wide_offset(index, dtype, stride);
        let addr = self.tmp(Class::B64);
        self.emit(format!("add.s64 {addr}, {base}, {off}"));
        addr
    }

    /// `index·scale` as a 64-bit byte offset (signed or unsigned by the
    /// index's type).
    pub fn wide_offset(&mut self, index: &Val, dtype: DType, scale: i64) -> Val {
        if index.class == Class::B64 {
            return self.op2(
                Class::B64,
                "mul.lo.s64",
                index,
                &Val::int(DType::I64, scale),
            );
        }
        let signed = dtype.kind() == tilec_core::ir::DTypeKind::Signed;
        let op = if signed {
            "mul.wide.s32"
        } else {
            "mul.wide.u32"
        };
        self.op2(Class::B64, op, index, &Val::int(DType::I32, scale))
    }

    /// The value of a place, in a register of `class`.
    pub fn read_place(&mut self, place: &Place, class: Class) -> Val {
        match place {
            Place::Reg(name) => Val::reg(class, name.clone()),
            Place::Local { base, offset } => {
                let addr = address_text(base, *offset);
                if class == Class::Pred {
                    let t = self.tmp(Class::B32);
                    self.emit(format!("ld.local.u32 {t}, {addr}"));
                    self.setp(
                        "ne",
                        "u32",
                        &Val::reg(Class::B32, t),
                        &Val::bits(Class::B32, 0),
                    )
                } else {
                    let t = self.tmp(class);
                    self.emit(format!("ld.local.{} {t}, {addr}", class.ty()));
                    Val::reg(class, t)
                }
            }
        }
    }

    /// Writes `v` to a place, under `guard` (`%p` / `!%p`) when given.
    pub fn write_place(&mut self, place: &Place, v: &Val, guard: Option<&str>) {
        match place {
            Place::Reg(name) => {
                if v.class == Class::Pred {
                    let p = self.pred(v);
                    self.body.inst_if(guard, format!("mov.pred {name}, {p}"));
                } else if v.text != *name {
                    self.body
                        .inst_if(guard, format!("mov.{} {name}, {v}", v.class.ty()));
                }
            }
            Place::Local { base, offset } => {
                let addr = address_text(base, *offset);
                if v.class == Class::Pred {
                    let one = Val::bits(Class::B32, 1);
                    let zero = Val::bits(Class::B32, 0);
                    let t = self.selp(&one, &zero, v);
                    self.body
                        .inst_if(guard, format!("st.local.u32 {addr}, {t}"));
                } else {
                    let v = self.in_reg(v);
                    self.body
                        .inst_if(guard, format!("st.local.{} {addr}, {v}", v.class.ty()));
                }
            }
        }
    }
}

/// `[base+offset]`.
pub(crate) fn address_text(base: &str, offset: i64) -> String {
    if offset == 0 {
        format!("[{base}]")
    } else {
        format!("[{base}+{offset}]")
    }
}

/// The `add` type of a loop counter.
fn int_add_ty(class: Class) -> &'static str {
    if class == Class::B64 { "s64" } else { "s32" }
}

/// The PTX type a scalar parameter of `dtype` travels as.
fn scalar_param_type(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::I8 | DType::I16 | DType::I32 => "s32",
        DType::U8 | DType::U16 | DType::U32 => "u32",
        DType::I64 | DType::U64 => "s64",
        _ => return None,
    })
}
