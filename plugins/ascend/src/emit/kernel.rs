//! One Tile IR kernel statement as one AscendC kernel.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use tilec_core::ir::{
    BinaryOp, Block, Buffer, DType, Expr, Function, Handle, Literal, LoopKind, ReduceKind, Region,
    Span, Stmt, Var,
};
use tilec_plugin_api::{ErrorCode, KernelMetadata, ParamMetadata};

use super::expr::{self, Loads, ctype};
use super::place::{self, Place, Placed, Stage, c0, round_up, ub_pitch};
use super::sync::{Pipe, Side, Tracker, Unit};
use super::{EntryInfo, Refusal, entry_line};
use crate::targets::Engine;

/// Why the scalar and vector units cannot touch a cube buffer.
const CUBE_RESULT: &str = "on Ascend A2 the cube and vector units are separate cores and a cube buffer reaches the vector unit only through global memory";

/// Byte alignment of each slot of the GM workspace.
const WORKSPACE_ALIGN: i64 = 512;

/// Emits every kernel of `f` into `out`; returns their launch metadata.
pub fn emit_function(
    f: &Function,
    engine: &Engine,
    out: &mut String,
) -> Result<Vec<(KernelMetadata, EntryInfo)>, Refusal> {
    let mut kernels = Vec::new();
    for (stmt, span) in f.body.iter() {
        match stmt {
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                body,
                ..
            } => {
                let entry = format!("{}_k{}", f.name, kernels.len());
                let meta = metadata(f, &entry, grid, *threads, span)?;
                let mut info = EntryInfo {
                    entry: entry.clone(),
                    buffers: f
                        .params
                        .iter()
                        .map(|_| true)
                        .chain(f.symbols.iter().map(|_| false))
                        .collect(),
                    workspace: 0,
                };
                let placed = place::place(f, body, engine)?;
                let cube = placed.values().any(|p| {
                    matches!(p.place, Place::L1A | Place::L1B | Place::L0c) || p.stage.is_some()
                });
                let vector =
                    placed.values().any(|p| p.place == Place::Ub) || has_element_code(f, body);
                let mut k = Kernel {
                    f,
                    engine,
                    entry,
                    placed,
                    body: String::new(),
                    indent: 2,
                    sync: Tracker::default(),
                    scratch: BTreeMap::new(),
                    l0a: 0,
                    l0b: 0,
                    next: 0,
                    span,
                    scalar_region: false,
                    double: BTreeSet::new(),
                    mix: cube && vector,
                    side: None,
                    hoisted: Vec::new(),
                    touched: BTreeMap::new(),
                    workspace: Vec::new(),
                    workspace_bytes: 0,
                    deferred: None,
                };
                if !k.mix {
                    k.plan_double_buffers(body);
                }
                k.block(body)?;
                // The next block on this core starts from a synchronised
                // core (and, in a mixed kernel, pair of cores).
                k.barrier_all();
                if k.mix {
                    k.drain();
                }
                info.workspace = u64::try_from(k.workspace_bytes).unwrap_or(0);
                k.finish(grid, block_vars, &info, out)?;
                kernels.push((meta, info));
            }
            Stmt::Assume { .. } => {}
            _ => {
                return Err(Refusal::unsupported(
                    span,
                    "statements outside `T.Kernel` are not supported by the Ascend backend",
                ));
            }
        }
    }
    Ok(kernels)
}

fn metadata(
    f: &Function,
    entry: &str,
    grid: &[Handle<Expr>],
    threads: u32,
    span: Span,
) -> Result<KernelMetadata, Refusal> {
    let mut params: Vec<ParamMetadata> = f
        .params
        .iter()
        .map(|p| {
            let b = &f.buffers[p.buffer];
            Ok(ParamMetadata {
                name: b.name.clone(),
                dtype: b.dtype.tilelang_name().to_string(),
                shape: b
                    .shape
                    .iter()
                    .map(|&e| extent_text(f, e))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        Refusal::unsupported(
                            span,
                            format!(
                                "the shape of `{}` is not an integer expression of sizes",
                                b.name
                            ),
                        )
                    })?,
            })
        })
        .collect::<Result<_, Refusal>>()?;
    for &s in &f.symbols {
        params.push(ParamMetadata {
            name: f.vars[s].name.clone(),
            dtype: f.vars[s].dtype.tilelang_name().to_string(),
            shape: Vec::new(),
        });
    }
    let grid = grid
        .iter()
        .map(|&e| extent_text(f, e))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            Refusal::unsupported(
                span,
                "a grid extent is not an integer expression of the kernel's sizes",
            )
        })?;
    Ok(KernelMetadata {
        entry: entry.to_string(),
        params,
        grid,
        threads,
        shared_bytes: 0,
        registers: None,
    })
}

/// An extent in the launch-extent language of the plugin API.
fn extent_text(f: &Function, e: Handle<Expr>) -> Option<String> {
    Some(match &f.exprs[e] {
        Expr::Literal(Literal::Int(v, _)) => v.to_string(),
        Expr::Var(v) => f.vars[*v].name.clone(),
        Expr::Cast { arg, .. } => extent_text(f, *arg)?,
        Expr::Binary { op, lhs, rhs } => {
            let (a, b) = (extent_text(f, *lhs)?, extent_text(f, *rhs)?);
            match op {
                BinaryOp::Min => format!("min({a}, {b})"),
                BinaryOp::Max => format!("max({a}, {b})"),
                BinaryOp::Add => format!("({a} + {b})"),
                BinaryOp::Sub => format!("({a} - {b})"),
                BinaryOp::Mul => format!("({a} * {b})"),
                BinaryOp::Div => format!("({a} / {b})"),
                BinaryOp::FloorDiv => format!("({a} // {b})"),
                BinaryOp::FloorMod => format!("({a} % {b})"),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A C++ identifier for a user name.
fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    const RESERVED: [&str; 12] = [
        "pipe", "block", "blocks", "td", "half", "float", "int", "double", "auto", "char", "main",
        "tiling",
    ];
    if RESERVED.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

struct Kernel<'a> {
    f: &'a Function,
    engine: &'a Engine,
    entry: String,
    placed: BTreeMap<usize, Placed>,
    body: String,
    indent: usize,
    sync: Tracker,
    /// Scratch UB tensors: name → (dtype, elements).
    scratch: BTreeMap<String, (DType, i64)>,
    l0a: u64,
    l0b: u64,
    next: usize,
    span: Span,
    /// Inside a scalar-unit region: synchronised once on entry.
    scalar_region: bool,
    /// L1 buffers given two slots by a `T.Pipelined` loop (by arena index).
    double: BTreeSet<usize>,
    /// The kernel has cube and vector work: it runs on an AIC and its
    /// AIVs, every instruction guarded by the core that runs it.
    mix: bool,
    /// In a mixed kernel, the core of the segment being written.
    side: Option<Side>,
    /// Cross-core flag pairs the segment being written needs first.
    hoisted: Vec<String>,
    /// The cores that accessed each tracked buffer so far.
    touched: BTreeMap<String, BTreeSet<Side>>,
    /// Slots of this core's GM workspace region.
    workspace: Vec<WorkspaceSlot>,
    /// Bytes of the workspace region each core uses.
    workspace_bytes: i64,
    /// A refusal found while synchronising, reported at its statement.
    deferred: Option<String>,
}

/// A slot of the GM workspace: the global tensor one staged buffer goes
/// through.
#[derive(Clone, Debug)]
struct WorkspaceSlot {
    name: String,
    dtype: DType,
    elements: i64,
    /// Bytes from the start of the core's region.
    offset: i64,
}

impl Loads for Kernel<'_> {
    fn load(&self, buffer: Handle<Buffer>, indices: &[String]) -> Result<String, String> {
        let b = &self.f.buffers[buffer];
        let ty = ctype(b.dtype).unwrap_or("float");
        match self.place_of(buffer) {
            Place::Gm => {
                let (lin, inb) = self.gm_index(buffer, indices)?;
                Ok(format!(
                    "({inb} ? {}.GetValue({lin}) : {ty}(0))",
                    self.name(buffer)
                ))
            }
            Place::Ub => Ok(format!(
                "{}.GetValue({})",
                self.name(buffer),
                self.ub_index(buffer, indices)
            )),
            Place::Scalar => Ok(self.name(buffer)),
            p => Err(format!(
                "`{}` lives in {} (a cube buffer); the scalar and vector units cannot read it ({CUBE_RESULT})",
                b.name,
                p.name()
            )),
        }
    }

    fn var(&self, var: Handle<Var>) -> String {
        ident(&self.f.vars[var].name)
    }
}

impl Kernel<'_> {
    fn place_of(&self, b: Handle<Buffer>) -> Place {
        self.placed
            .get(&b.index())
            .map(|p| p.place)
            .unwrap_or(Place::Gm)
    }

    fn placed(&self, b: Handle<Buffer>) -> Option<&Placed> {
        self.placed.get(&b.index())
    }

    fn name(&self, b: Handle<Buffer>) -> String {
        let n = ident(&self.f.buffers[b].name);
        if self.place_of(b) == Place::Gm {
            format!("{n}_gm")
        } else {
            n
        }
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.next += 1;
        format!("tl_{stem}{}", self.next)
    }

    fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.body.push_str(text.as_ref());
        self.body.push('\n');
    }

    fn expr(&self, e: Handle<Expr>, span: Span) -> Result<String, Refusal> {
        expr::expr(self.f, e, self).map_err(|m| Refusal::unsupported(span, m))
    }

    /// Row-major index and in-bounds test of a GM access.
    fn gm_index(&self, b: Handle<Buffer>, indices: &[String]) -> Result<(String, String), String> {
        let shape = self.f.buffers[b]
            .shape
            .iter()
            .map(|&e| expr::expr(self.f, e, self).map(|s| format!("int64_t({s})")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut lin = String::new();
        let mut inb = Vec::new();
        for (i, (idx, ext)) in indices.iter().zip(&shape).enumerate() {
            if i == 0 {
                lin = idx.clone();
            } else {
                lin = format!("({lin}) * {ext} + {idx}");
            }
            inb.push(format!("{idx} >= 0 && {idx} < {ext}"));
        }
        if lin.is_empty() {
            lin = "0".into();
        }
        let inb = if inb.is_empty() {
            "true".to_string()
        } else {
            format!("({})", inb.join(" && "))
        };
        Ok((lin, inb))
    }

    /// Index of an element of a UB buffer (rows padded to the pitch).
    fn ub_index(&self, b: Handle<Buffer>, indices: &[String]) -> String {
        let Some(p) = self.placed(b) else {
            return "0".into();
        };
        let n = indices.len();
        let mut lin = String::new();
        for (i, idx) in indices.iter().enumerate() {
            if i == 0 {
                lin = idx.clone();
            } else {
                let ext = if i == n - 1 { p.pitch } else { p.shape[i] };
                lin = format!("({lin}) * {ext} + {idx}");
            }
        }
        if lin.is_empty() { "0".into() } else { lin }
    }

    /// Elements between consecutive indices of dimension `d` of a UB buffer.
    fn ub_stride(&self, b: Handle<Buffer>, d: usize) -> i64 {
        let Some(p) = self.placed(b) else {
            return 1;
        };
        let n = p.shape.len();
        if d + 1 == n {
            return 1;
        }
        p.shape[d + 1..n - 1].iter().product::<i64>() * p.pitch
    }

    /// GM dimension strides as C++ expressions.
    fn gm_strides(&self, b: Handle<Buffer>, span: Span) -> Result<Vec<String>, Refusal> {
        let shape = self.gm_shape(b, span)?;
        let mut strides = vec![String::from("int64_t(1)"); shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = format!("{} * {}", strides[d + 1], shape[d + 1]);
        }
        Ok(strides)
    }

    fn gm_shape(&self, b: Handle<Buffer>, span: Span) -> Result<Vec<String>, Refusal> {
        self.f.buffers[b]
            .shape
            .iter()
            .map(|&e| self.expr(e, span).map(|s| format!("int64_t({s})")))
            .collect()
    }

    /// Orders `pipe` after whatever it depends on, then records the access.
    fn sync(&mut self, pipe: Pipe, reads: &[String], writes: &[String]) {
        self.sync_access(pipe, reads, writes, false);
    }

    /// As [`Kernel::sync`], for an instruction under a run-time condition:
    /// its writes may not happen.
    fn sync_maybe(&mut self, pipe: Pipe, reads: &[String], writes: &[String]) {
        self.sync_access(pipe, reads, writes, true);
    }

    fn sync_access(&mut self, pipe: Pipe, reads: &[String], writes: &[String], maybe: bool) {
        if self.scalar_region {
            return;
        }
        let unit = self.unit(pipe);
        if self.mix {
            for b in reads.iter().chain(writes) {
                self.touched.entry(b.clone()).or_default().insert(unit.side);
            }
        }
        let needs = self.sync.needs(unit, reads, writes);
        let mut barrier = false;
        for (src, dst) in needs {
            if src.side != dst.side {
                if let Some((set, wait)) = self.cross_pair(src, dst.side) {
                    self.hoisted.push(set);
                    self.hoisted.push(wait);
                }
                continue;
            }
            if barrier {
                continue;
            }
            if self.engine.has_event(src.pipe.name(), dst.pipe.name()) {
                self.line(format!(
                    "SetFlag<HardEvent::{0}_{1}>(EVENT_ID0); WaitFlag<HardEvent::{0}_{1}>(EVENT_ID0);",
                    src.pipe.name(),
                    dst.pipe.name()
                ));
                self.sync.synced(src, dst);
            } else {
                self.line("PipeBarrier<PIPE_ALL>();");
                if self.mix {
                    self.sync.synced_within(unit.side);
                } else {
                    self.sync.clear();
                }
                barrier = true;
            }
        }
        self.sync.record(unit, reads, writes, maybe);
    }

    /// The unit `pipe` names in the segment being written.
    fn unit(&mut self, pipe: Pipe) -> Unit {
        if !self.mix {
            return Unit::new(Side::Aic, pipe);
        }
        match self.side {
            Some(side) if side.pipes().contains(&pipe) => Unit::new(side, pipe),
            Some(side) => {
                self.defer(format!(
                    "internal error: pipe {} used on the {}, which has no such pipe",
                    pipe.name(),
                    side.name()
                ));
                Unit::new(side, pipe)
            }
            None => {
                self.defer(format!(
                    "internal error: pipe {} used outside a segment of one core",
                    pipe.name()
                ));
                Unit::new(Side::Aiv, pipe)
            }
        }
    }

    fn defer(&mut self, message: String) {
        self.deferred.get_or_insert(message);
    }

    /// The cross-core flag pair that orders `src`'s accesses so far before
    /// everything core `dst` issues next: a `CrossCoreSetFlag` on `src`'s
    /// pipe (mode 2: between the AIC and the AIVs of one AI core) and a
    /// `CrossCoreWaitFlag` on `dst`. Both AIVs set and wait, since the
    /// AIC's flag counts on each AIV and the AIC's counter moves only when
    /// both AIVs set theirs.
    ///
    /// Each (direction, source pipe) has its own flag id: sets from
    /// different pipes may complete out of order, and a wait must not
    /// take another pipe's flag for its own.
    fn cross_pair(&mut self, src: Unit, dst: Side) -> Option<(String, String)> {
        let id = match (src.side, src.pipe) {
            (Side::Aic, Pipe::Fix) => 0,
            (Side::Aic, Pipe::Mte2) => 1,
            (Side::Aic, Pipe::Mte1) => 2,
            (Side::Aic, Pipe::M) => 3,
            (Side::Aiv, Pipe::Mte3) => 4,
            (Side::Aiv, Pipe::Mte2) => 5,
            (Side::Aiv, Pipe::V) => 6,
            (side, pipe) => {
                self.defer(format!(
                    "global memory pipe {} of the {} accesses is also used by the {}: a cross-core flag cannot be set from that pipe (copy the data with `T.copy` instead)",
                    pipe.name(),
                    side.name(),
                    side.other().name()
                ));
                return None;
            }
        };
        self.sync.synced_cross(src, dst);
        let guard = |side: Side| match side {
            Side::Aic => "TILEC_AIC",
            Side::Aiv => "TILEC_AIV_ALL",
        };
        Some((
            format!(
                "{} CrossCoreSetFlag<2, PIPE_{}>({id});",
                guard(src.side),
                src.pipe.name()
            ),
            format!("{} CrossCoreWaitFlag({id});", guard(dst)),
        ))
    }

    /// Writes the lines `body` emits as a segment that runs on core `side`
    /// only, after the cross-core flags it needs. Outside a mixed kernel
    /// it writes them as they come.
    fn segment(
        &mut self,
        side: Side,
        body: impl FnOnce(&mut Self) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        if !self.mix {
            return body(self);
        }
        if let Some(current) = self.side {
            if current == side {
                return body(self);
            }
            return Err(Refusal::internal(
                self.span,
                format!(
                    "a segment for the {} inside one for the {}",
                    side.name(),
                    current.name()
                ),
            ));
        }
        let outer = std::mem::take(&mut self.body);
        let hoisted = std::mem::take(&mut self.hoisted);
        self.indent += 1;
        self.side = Some(side);
        let result = body(self);
        self.side = None;
        self.indent -= 1;
        let inner = std::mem::replace(&mut self.body, outer);
        let pairs = std::mem::replace(&mut self.hoisted, hoisted);
        result?;
        for l in pairs {
            self.line(l);
        }
        if !inner.is_empty() {
            self.line(format!(
                "{} {{",
                match side {
                    Side::Aic => "TILEC_AIC",
                    Side::Aiv => "TILEC_AIV",
                }
            ));
            self.body.push_str(&inner);
            self.line("}");
        }
        Ok(())
    }

    /// `PipeBarrier<PIPE_ALL>` on every core of the kernel: each core's
    /// own pipes are synchronised; in a mixed kernel the cores still know
    /// nothing of each other.
    fn barrier_all(&mut self) {
        self.line("PipeBarrier<PIPE_ALL>();");
        if self.mix {
            self.sync.synced_within(Side::Aic);
            self.sync.synced_within(Side::Aiv);
        } else {
            self.sync.clear();
        }
    }

    /// Cross-core flags for every access to a buffer both cores use that
    /// the other core is not yet ordered after: what the end of a loop
    /// iteration (or of a block) needs so that the next one may start
    /// from its first statement.
    fn drain(&mut self) {
        let touched = std::mem::take(&mut self.touched);
        let pending = self
            .sync
            .pending_cross(|b| touched.get(b).is_some_and(|s| s.len() == 2));
        self.touched = touched;
        for (src, dst) in pending {
            if let Some((set, wait)) = self.cross_pair(src, dst) {
                self.line(set);
                self.line(wait);
            }
        }
    }

    /// The tracked buffers (not scalars) among `buffers`, by C++ name.
    fn tracked(&self, buffers: &BTreeSet<Handle<Buffer>>) -> Vec<String> {
        buffers
            .iter()
            .filter(|&&b| self.place_of(b) != Place::Scalar)
            .map(|&b| self.name(b))
            .collect()
    }

    fn scratch(&mut self, stem: &str, dtype: DType, elements: i64) -> String {
        let name = format!("tl_{stem}_{}", dtype.tilelang_name());
        let e = self.scratch.entry(name.clone()).or_insert((dtype, 0));
        e.1 = e.1.max(round_up(elements.max(1), 64));
        name
    }

    // -----------------------------------------------------------------
    // Statements.

    fn block(&mut self, block: &Block) -> Result<(), Refusal> {
        for (stmt, span) in block.iter() {
            self.stmt(stmt, span)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt, span: Span) -> Result<(), Refusal> {
        let result = if self.mix && self.side.is_none() {
            self.check_mixed(stmt, span)?;
            match self.segment_of(stmt) {
                Some(side) => self.segment(side, |k| k.stmt_inner(stmt, span)),
                None => self.stmt_inner(stmt, span),
            }
        } else {
            self.stmt_inner(stmt, span)
        };
        result?;
        match self.deferred.take() {
            Some(m) => Err(Refusal::unsupported(span, m)),
            None => Ok(()),
        }
    }

    /// In a mixed kernel, the core a statement runs on; `None` for
    /// statements both cores run (control flow around tile operations,
    /// scalar bindings) and for `T.gemm`, which writes its own segments.
    fn segment_of(&self, stmt: &Stmt) -> Option<Side> {
        match stmt {
            Stmt::Kernel { .. }
            | Stmt::Alloc { .. }
            | Stmt::Assume { .. }
            | Stmt::Barrier
            | Stmt::Let { .. }
            | Stmt::Gemm { .. }
            | Stmt::AllocBarrier { .. }
            | Stmt::Role { .. }
            | Stmt::BarrierArrive { .. }
            | Stmt::BarrierWait { .. } => None,
            Stmt::For { body, .. } => (!has_tile_ops(body)).then_some(Side::Aiv),
            Stmt::If {
                then, otherwise, ..
            } => (!(has_tile_ops(then) || has_tile_ops(otherwise))).then_some(Side::Aiv),
            Stmt::Copy { src, dst } => match (self.place_of(src.buffer), self.place_of(dst.buffer))
            {
                (Place::Gm, Place::L1A | Place::L1B) | (Place::L0c, _) | (_, Place::L0c) => {
                    Some(Side::Aic)
                }
                _ => Some(Side::Aiv),
            },
            Stmt::Fill { dst, .. } if self.place_of(dst.buffer) == Place::L0c => Some(Side::Aic),
            Stmt::Fill { .. }
            | Stmt::Store { .. }
            | Stmt::Parallel { .. }
            | Stmt::Reduce { .. }
            | Stmt::Cumsum { .. }
            | Stmt::AtomicAdd { .. }
            | Stmt::Atomic { .. }
            | Stmt::WarpReduce { .. }
            | Stmt::DeviceAssert { .. } => Some(Side::Aiv),
        }
    }

    /// What a statement that both cores of a mixed kernel run may not do:
    /// read a buffer (only one core could), or declare a scalar variable
    /// whose value one core alone would know.
    fn check_mixed(&self, stmt: &Stmt, span: Span) -> Result<(), Refusal> {
        const WHY: &str = "in a kernel with cube and vector work, the cube and the vector core each run the control flow and only the vector core reads buffers";
        let mut reads = BTreeSet::new();
        match stmt {
            Stmt::Alloc { buffer, .. } if self.place_of(*buffer) == Place::Scalar => {
                return Err(Refusal::unsupported(
                    span,
                    format!(
                        "scalar variable `{}` (`T.alloc_var`) in a kernel that runs on both the cube and the vector core is not supported yet",
                        self.f.buffers[*buffer].name
                    ),
                ));
            }
            Stmt::Let { value, .. } => loads_of(self.f, *value, &mut reads),
            Stmt::For {
                start,
                extent,
                body,
                ..
            } if has_tile_ops(body) => {
                loads_of(self.f, *start, &mut reads);
                loads_of(self.f, *extent, &mut reads);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } if has_tile_ops(then) || has_tile_ops(otherwise) => {
                loads_of(self.f, *cond, &mut reads)
            }
            Stmt::Gemm { clear_accum, .. } => loads_of(self.f, *clear_accum, &mut reads),
            _ => {}
        }
        match reads.first() {
            Some(&b) => Err(Refusal::unsupported(
                span,
                format!(
                    "this statement reads `{}` to decide what both cores do: {WHY}",
                    self.f.buffers[b].name
                ),
            )),
            None => Ok(()),
        }
    }

    fn stmt_inner(&mut self, stmt: &Stmt, span: Span) -> Result<(), Refusal> {
        match stmt {
            Stmt::Kernel { .. } => Err(Refusal::unsupported(span, "a kernel inside a kernel")),
            Stmt::AllocBarrier { .. }
            | Stmt::Role { .. }
            | Stmt::BarrierArrive { .. }
            | Stmt::BarrierWait { .. } => Err(Refusal::unsupported(
                span,
                "`T.ws` roles and phased barriers (NVIDIA warp-group constructs)",
            )),
            Stmt::Alloc { buffer, init } => {
                if self.place_of(*buffer) == Place::Scalar {
                    let b = &self.f.buffers[*buffer];
                    let ty = ctype(b.dtype).ok_or_else(|| {
                        Refusal::unsupported(span, format!("`{}` has an unsupported type", b.name))
                    })?;
                    let value = match init {
                        Some(e) => self.expr(*e, span)?,
                        None => format!("{ty}(0)"),
                    };
                    let name = self.name(*buffer);
                    self.line(format!("{ty} {name} = {value};"));
                }
                Ok(())
            }
            Stmt::Assume { .. } => Ok(()),
            Stmt::Barrier => {
                self.line("// T.sync_threads: ordering comes from the flags between pipes");
                Ok(())
            }
            Stmt::Let { var, value } => {
                self.scalar_sync(&[*value], None);
                let v = self.expr(*value, span)?;
                let ty = ctype(self.f.vars[*var].dtype).unwrap_or("int64_t");
                let name = ident(&self.f.vars[*var].name);
                self.line(format!("const {ty} {name} = {v};"));
                Ok(())
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                let mut exprs = indices.clone();
                exprs.push(*value);
                self.scalar_sync(&exprs, Some(*buffer));
                self.store(*buffer, indices, *value, span)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let tile = has_tile_ops(then) || has_tile_ops(otherwise);
                let was_scalar = self.scalar_region;
                if !tile && !self.scalar_region {
                    self.enter_scalar_region(&[then, otherwise], &[*cond]);
                } else {
                    self.scalar_sync(&[*cond], None);
                }
                let c = self.expr(*cond, span)?;
                self.line(format!("if ({c}) {{"));
                self.indent += 1;
                // Each branch starts from the state before the `if`; after
                // it, what either branch left unordered is still pending.
                let before = self.sync.clone();
                self.block(then)?;
                if tile {
                    self.barrier_all();
                }
                let after_then = std::mem::replace(&mut self.sync, before);
                self.indent -= 1;
                if !otherwise.is_empty() {
                    self.line("} else {");
                    self.indent += 1;
                    self.block(otherwise)?;
                    if tile {
                        self.barrier_all();
                    }
                    self.indent -= 1;
                }
                self.sync = self.sync.join(&after_then);
                self.line("}");
                self.scalar_region = was_scalar;
                Ok(())
            }
            Stmt::For {
                var,
                start,
                extent,
                kind,
                body,
            } => {
                let tile = has_tile_ops(body);
                let was_scalar = self.scalar_region;
                if !tile && !self.scalar_region {
                    self.enter_scalar_region(&[body], &[*start, *extent]);
                } else {
                    self.scalar_sync(&[*start, *extent], None);
                }
                if tile {
                    self.barrier_all();
                }
                let s = self.expr(*start, span)?;
                let e = self.expr(*extent, span)?;
                let ty = ctype(self.f.vars[*var].dtype).unwrap_or("int64_t");
                let v = ident(&self.f.vars[*var].name);
                if let LoopKind::Pipelined { num_stages, .. } = kind
                    && *num_stages >= 2
                    && let Some(slots) = self.double_buffered(body)
                {
                    self.pipelined(
                        &slots,
                        *num_stages,
                        &format!("{ty} {v} = {s}; {v} < {ty}(int64_t({s}) + int64_t({e})); ++{v}"),
                        &v,
                        &s,
                        body,
                    )?;
                    self.scalar_region = was_scalar;
                    return Ok(());
                }
                if let LoopKind::Pipelined { num_stages, .. } = kind {
                    self.line(format!(
                        "// T.Pipelined(num_stages={num_stages}): not double-buffered (the body is not only operand loads and gemms, or L1 lacks room); each iteration ends at a PIPE_ALL barrier"
                    ));
                }
                self.line(format!(
                    "for ({ty} {v} = {s}; {v} < {ty}(int64_t({s}) + int64_t({e})); ++{v}) {{"
                ));
                self.indent += 1;
                let entry = self.sync.clone();
                self.block(body)?;
                if tile {
                    self.barrier_all();
                    // The next iteration starts with the body's first
                    // statement: the cores hand back what they share.
                    if self.mix {
                        self.drain();
                    }
                }
                self.indent -= 1;
                self.line("}");
                // The loop may not run at all.
                self.sync = self.sync.join(&entry);
                self.scalar_region = was_scalar;
                Ok(())
            }
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => self.parallel(vars, extents, body, span),
            Stmt::Copy { src, dst } => self.copy(src, dst, span),
            Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                clear_accum,
                ..
            } => self.gemm(a, b, c, *transpose_a, *transpose_b, *clear_accum, span),
            Stmt::Fill { dst, value } => self.fill(dst, *value, span),
            Stmt::Reduce {
                kind,
                src,
                dst,
                dim,
                clear,
            } => self.reduce(*kind, *src, *dst, *dim as usize, *clear, span),
            Stmt::Cumsum { .. } => Err(Refusal::unsupported(
                span,
                "`T.cumsum` is not supported by the Ascend backend yet",
            )),
            Stmt::AtomicAdd { .. } => Err(Refusal::unsupported(
                span,
                "`T.atomic_add` is not supported by the Ascend backend yet (AscendC's SetAtomicAdd on MTE3 copies is not used)",
            )),
            Stmt::Atomic { op, .. } => Err(Refusal::unsupported(
                span,
                format!(
                    "`T.{}` is not supported by the Ascend backend yet (AscendC's SetAtomicMax/SetAtomicMin on MTE3 copies are not used)",
                    op.name()
                ),
            )),
            Stmt::DeviceAssert { .. } => Err(Refusal::unsupported(
                span,
                "`T.device_assert` is not supported by the Ascend backend yet (no trap is emitted)",
            )),
            Stmt::WarpReduce { kind, .. } => Err(Refusal::unsupported(
                span,
                format!(
                    "`T.warp_reduce_{}` combines the lanes of a 32-thread warp, which the Ascend cores do not have",
                    kind.name()
                ),
            )),
        }
    }

    /// Synchronises the scalar unit for reading the buffers `exprs` load
    /// and writing `write`.
    fn scalar_sync(&mut self, exprs: &[Handle<Expr>], write: Option<Handle<Buffer>>) {
        if self.scalar_region {
            return;
        }
        let mut reads = BTreeSet::new();
        for &e in exprs {
            loads_of(self.f, e, &mut reads);
        }
        let reads = self.tracked(&reads);
        let writes = write
            .map(|b| self.tracked(&BTreeSet::from([b])))
            .unwrap_or_default();
        if !reads.is_empty() || !writes.is_empty() {
            self.sync(Pipe::S, &reads, &writes);
        }
    }

    /// Enters a region of scalar-unit code: one synchronisation for every
    /// buffer it touches.
    fn enter_scalar_region(&mut self, blocks: &[&Block], exprs: &[Handle<Expr>]) {
        let mut reads = BTreeSet::new();
        let mut writes = BTreeSet::new();
        for &e in exprs {
            loads_of(self.f, e, &mut reads);
        }
        for b in blocks {
            block_access(self.f, b, &mut reads, &mut writes);
        }
        let r = self.tracked(&reads);
        let w = self.tracked(&writes);
        if !r.is_empty() || !w.is_empty() {
            self.sync(Pipe::S, &r, &w);
        }
        self.scalar_region = true;
    }

    fn store(
        &mut self,
        buffer: Handle<Buffer>,
        indices: &[Handle<Expr>],
        value: Handle<Expr>,
        span: Span,
    ) -> Result<(), Refusal> {
        let idx = indices
            .iter()
            .map(|&i| self.expr(i, span).map(|s| format!("int64_t({s})")))
            .collect::<Result<Vec<_>, _>>()?;
        let v = self.expr(value, span)?;
        let name = self.name(buffer);
        match self.place_of(buffer) {
            Place::Gm => {
                let (lin, inb) = self
                    .gm_index(buffer, &idx)
                    .map_err(|m| Refusal::unsupported(span, m))?;
                self.line(format!("if {inb} {name}.SetValue({lin}, {v});"));
            }
            Place::Ub => {
                let lin = self.ub_index(buffer, &idx);
                self.line(format!("{name}.SetValue({lin}, {v});"));
            }
            Place::Scalar => self.line(format!("{name} = {v};")),
            p => {
                return Err(Refusal::unsupported(
                    span,
                    format!(
                        "element stores into `{}` in {}: the scalar and vector units cannot reach the cube's buffers ({CUBE_RESULT})",
                        self.f.buffers[buffer].name,
                        p.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------
    // T.Pipelined with double-buffered cube operands

    /// Gives two L1 slots to the operands a qualifying `T.Pipelined` loop
    /// loads, when L1 has room for both.
    fn plan_double_buffers(&mut self, root: &Block) {
        if !(self.engine.has_event("MTE1", "MTE2") && self.engine.has_event("M", "MTE1")) {
            return;
        }
        let mut loops = Vec::new();
        pipelined_loops(root, &mut loops);
        let mut l1: u64 = self
            .placed
            .values()
            .filter(|p| matches!(p.place, Place::L1A | Place::L1B))
            .map(|p| p.bytes)
            .sum();
        for body in loops {
            let Some(dsts) = self.slot_candidates(body) else {
                continue;
            };
            // Used only inside this loop.
            if dsts
                .iter()
                .any(|&b| tile_refs(root, b) != tile_refs(body, b))
            {
                continue;
            }
            let extra: u64 = dsts
                .iter()
                .filter_map(|b| self.placed.get(&b.index()).map(|p| p.bytes))
                .sum();
            if l1 + extra > self.engine.l1.capacity {
                continue;
            }
            l1 += extra;
            self.double.extend(dsts.iter().map(|b| b.index()));
        }
    }

    /// The L1 buffers a loop body loads, if the body is only loads of cube
    /// operands from global memory and `T.gemm`s.
    fn slot_candidates(&self, body: &Block) -> Option<Vec<Handle<Buffer>>> {
        let mut dsts = Vec::new();
        let mut gemms = 0;
        for (stmt, _) in body.iter() {
            match stmt {
                Stmt::Copy { src, dst }
                    if self.place_of(src.buffer) == Place::Gm
                        && matches!(self.place_of(dst.buffer), Place::L1A | Place::L1B) =>
                {
                    dsts.push(dst.buffer);
                }
                Stmt::Gemm { .. } => gemms += 1,
                _ => return None,
            }
        }
        (gemms > 0 && !dsts.is_empty()).then_some(dsts)
    }

    fn double_buffered(&self, body: &Block) -> Option<Vec<Handle<Buffer>>> {
        let dsts = self.slot_candidates(body)?;
        dsts.iter()
            .all(|b| self.double.contains(&b.index()))
            .then_some(dsts)
    }

    /// A software-pipelined K loop: iteration `i` loads its operands into
    /// slot `i % 2` of L1 while the cube may still be working on slot
    /// `(i - 1) % 2`. Flags instead of barriers order the iterations:
    /// `MTE1_MTE2` (ids 4 and 5, one per slot: the slot's last `LoadData`
    /// is done before MTE2 overwrites it) and `M_MTE1` (id 6: the last
    /// `Mmad` is done before MTE1 overwrites L0A/L0B). Both are set once
    /// before the loop and waited for once after it, so they pair up.
    fn pipelined(
        &mut self,
        slots: &[Handle<Buffer>],
        stages: u32,
        header: &str,
        var: &str,
        start: &str,
        body: &Block,
    ) -> Result<(), Refusal> {
        self.line(format!(
            "// T.Pipelined(num_stages={stages}): cube operands double-buffered in L1 (slot = iteration % 2); MTE2 fills one slot while MTE1/M work on the other"
        ));
        self.line("SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID4); SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID5); SetFlag<HardEvent::M_MTE1>(EVENT_ID6);");
        self.line(format!("for ({header}) {{"));
        self.indent += 1;
        self.line(format!(
            "const int32_t tl_slot = int32_t(tl_floormod(int64_t({var}) - int64_t({start}), 2));"
        ));
        for &b in slots {
            let ty = ctype(self.f.buffers[b].dtype).unwrap_or("half");
            let n = self.name(b);
            self.line(format!(
                "LocalTensor<{ty}> {n} = tl_slot == 0 ? {n}_ping : {n}_pong;"
            ));
        }
        self.line("WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID4 + tl_slot);");
        self.sync.clear();
        for (stmt, span) in body.iter() {
            if matches!(stmt, Stmt::Gemm { .. }) {
                self.line("WaitFlag<HardEvent::M_MTE1>(EVENT_ID6);");
                self.stmt(stmt, span)?;
                self.line("SetFlag<HardEvent::M_MTE1>(EVENT_ID6);");
            } else {
                self.stmt(stmt, span)?;
            }
        }
        self.line("SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID4 + tl_slot);");
        self.sync.clear();
        self.indent -= 1;
        self.line("}");
        self.line("WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID4); WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID5); WaitFlag<HardEvent::M_MTE1>(EVENT_ID6);");
        self.barrier_all();
        Ok(())
    }

    // -----------------------------------------------------------------
    // T.Parallel

    fn parallel(
        &mut self,
        vars: &[Handle<Var>],
        extents: &[Handle<Expr>],
        body: &Block,
        span: Span,
    ) -> Result<(), Refusal> {
        if !self.scalar_region
            && let Some(()) = self.try_vector(vars, extents, body, span)?
        {
            return Ok(());
        }
        let was_scalar = self.scalar_region;
        if !self.scalar_region {
            self.enter_scalar_region(&[body], extents);
            self.line(format!(
                "// T.Parallel at {}..{}: scalar unit (not expressible as vector instructions)",
                span.start, span.end
            ));
        }
        let mut opened = 0;
        for (&v, &e) in vars.iter().zip(extents) {
            let ext = self.expr(e, span)?;
            let ty = ctype(self.f.vars[v].dtype).unwrap_or("int64_t");
            let name = ident(&self.f.vars[v].name);
            self.line(format!(
                "for ({ty} {name} = 0; {name} < {ty}({ext}); ++{name}) {{"
            ));
            self.indent += 1;
            opened += 1;
        }
        self.block(body)?;
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        self.scalar_region = was_scalar;
        Ok(())
    }

    // -----------------------------------------------------------------
    // T.copy

    fn copy(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (sp, dp) = (self.place_of(src.buffer), self.place_of(dst.buffer));
        match (sp, dp) {
            (Place::Gm, Place::Ub) => self.copy_gm_ub(src, dst, span),
            (Place::Ub, Place::Gm) => self.copy_ub_gm(src, dst, span),
            (Place::Gm, Place::L1A | Place::L1B) => self.copy_gm_l1(src, dst, span),
            (Place::L0c, Place::Gm) => self.copy_l0c_gm(src, dst, span),
            (Place::Ub | Place::Scalar, Place::Ub | Place::Scalar) | (Place::Gm, Place::Gm) => {
                self.copy_scalar(src, dst, span)
            }
            (s, d) => Err(Refusal::unsupported(
                span,
                format!(
                    "`T.copy` from {} (`{}`) to {} (`{}`) has no data path on Ascend A2 (the cube's L0C result leaves only through the fixpipe to global memory; the vector unit cannot read L1)",
                    s.name(),
                    self.f.buffers[src.buffer].name,
                    d.name(),
                    self.f.buffers[dst.buffer].name
                ),
            )),
        }
    }

    /// The copy's shape after dropping unit dimensions, and for each side
    /// the dimension each of its entries maps to.
    fn copy_dims(&self, src: &Region, dst: &Region, span: Span) -> Result<CopyDims, Refusal> {
        let consts = |r: &Region| -> Result<Vec<i64>, Refusal> {
            r.ranges
                .iter()
                .map(|rg| {
                    self.f.as_const_int(rg.extent).ok_or_else(|| {
                        Refusal::unsupported(span, "`T.copy` with extents known only at launch")
                    })
                })
                .collect()
        };
        let (se, de) = (consts(src)?, consts(dst)?);
        let keep = |e: &[i64]| -> Vec<usize> { (0..e.len()).filter(|&i| e[i] != 1).collect() };
        let (mut sk, mut dk) = (keep(&se), keep(&de));
        let shape: Vec<i64> = sk.iter().map(|&i| se[i]).collect();
        let dshape: Vec<i64> = dk.iter().map(|&i| de[i]).collect();
        if shape != dshape {
            return Err(Refusal::unsupported(
                span,
                "`T.copy` between regions of different shapes",
            ));
        }
        if shape.is_empty() {
            sk = vec![se.len().saturating_sub(1)];
            dk = vec![de.len().saturating_sub(1)];
            return Ok((vec![1], sk, dk));
        }
        Ok((shape, sk, dk))
    }

    /// Emits the valid-box computation of a GM region: per GM dimension
    /// `lo`/`hi` in region coordinates. Returns (starts, lo, hi, any, full).
    fn gm_box(&mut self, r: &Region, span: Span) -> Result<GmBox, Refusal> {
        let shape = self.gm_shape(r.buffer, span)?;
        let id = self.fresh("");
        let (mut starts, mut los, mut his) = (Vec::new(), Vec::new(), Vec::new());
        let mut any = Vec::new();
        let mut full = Vec::new();
        for (d, rg) in r.ranges.iter().enumerate() {
            let s = self.expr(rg.start, span)?;
            let ext = self.f.as_const_int(rg.extent).unwrap_or(1);
            let (sn, lo, hi) = (
                format!("{id}_s{d}"),
                format!("{id}_lo{d}"),
                format!("{id}_hi{d}"),
            );
            self.line(format!(
                "const int64_t {sn} = int64_t({s}), {lo} = tl_clamp(-{sn}, 0, {ext}), {hi} = tl_clamp({} - {sn}, 0, {ext});",
                shape[d]
            ));
            any.push(format!("{hi} > {lo}"));
            full.push(format!("{lo} == 0 && {hi} == {ext}"));
            starts.push(sn);
            los.push(lo);
            his.push(hi);
        }
        let join = |v: Vec<String>| {
            if v.is_empty() {
                "true".to_string()
            } else {
                v.join(" && ")
            }
        };
        Ok((starts, los, his, join(any), join(full)))
    }

    /// Starts of a local region, as C++.
    fn local_starts(&self, r: &Region, span: Span) -> Result<Vec<String>, Refusal> {
        r.ranges
            .iter()
            .map(|rg| self.expr(rg.start, span).map(|s| format!("int64_t({s})")))
            .collect()
    }

    fn whole(&self, r: &Region) -> bool {
        let Some(p) = self.placed(r.buffer) else {
            return false;
        };
        r.ranges.iter().zip(&p.shape).all(|(rg, &n)| {
            self.f.as_const_int(rg.start) == Some(0) && self.f.as_const_int(rg.extent) == Some(n)
        })
    }

    /// A UB view the copy engines move data to or from: a buffer with its
    /// shape, pitch and the region's starts (all zero for scratch).
    fn ub_view(&self, r: &Region, span: Span) -> Result<UbView, Refusal> {
        let p = self
            .placed(r.buffer)
            .ok_or_else(|| Refusal::unsupported(span, "unplaced buffer"))?;
        let strides = (0..p.shape.len())
            .map(|d| self.ub_stride(r.buffer, d))
            .collect();
        Ok(UbView {
            name: self.name(r.buffer),
            dtype: self.f.buffers[r.buffer].dtype,
            strides,
            starts: self.local_starts(r, span)?,
        })
    }

    fn copy_gm_ub(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (shape, sk, dk) = self.copy_dims(src, dst, span)?;
        let sdt = self.f.buffers[src.buffer].dtype;
        let ddt = self.f.buffers[dst.buffer].dtype;
        let src_rank = src.ranges.len();
        let dst_rank = dst.ranges.len();
        if sk.last() != Some(&(src_rank - 1)) || dk.last() != Some(&(dst_rank - 1)) {
            return self.copy_scalar(src, dst, span);
        }
        self.line(format!(
            "// T.copy {} -> {} (GM -> UB{})",
            self.f.buffers[src.buffer].name,
            self.f.buffers[dst.buffer].name,
            if sdt != ddt {
                ", then a vector Cast"
            } else {
                ""
            }
        ));
        self.line("{");
        self.indent += 1;
        let dview = self.ub_view(dst, span)?;
        let target = if sdt == ddt {
            dview.clone()
        } else {
            self.stage_view(sdt, &shape, dst_rank, &dk)
        };
        let whole = sdt != ddt || self.whole(dst);
        let (starts, lo, hi, any, full) = self.gm_box(src, span)?;
        // Zero what the copy does not cover (out-of-bounds reads are zero).
        self.sync_maybe(Pipe::V, &[], std::slice::from_ref(&target.name));
        self.line(format!("if (!({full})) {{"));
        self.indent += 1;
        self.zero_fill(&target, &shape, &dk, whole);
        self.indent -= 1;
        self.line("}");
        self.sync_maybe(
            Pipe::Mte2,
            &[self.name(src.buffer)],
            std::slice::from_ref(&target.name),
        );
        self.line(format!("if ({any}) {{"));
        self.indent += 1;
        self.gm_ub_rows(
            src, &target, &shape, &sk, &dk, &starts, &lo, &hi, span, true,
        )?;
        self.indent -= 1;
        self.line("}");
        if sdt != ddt {
            self.cast_view(&dview, &target, &shape, &dk, span)?;
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn copy_ub_gm(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (shape, sk, dk) = self.copy_dims(src, dst, span)?;
        let sdt = self.f.buffers[src.buffer].dtype;
        let ddt = self.f.buffers[dst.buffer].dtype;
        if sk.last() != Some(&(src.ranges.len() - 1)) || dk.last() != Some(&(dst.ranges.len() - 1))
        {
            return self.copy_scalar(src, dst, span);
        }
        self.line(format!(
            "// T.copy {} -> {} ({}UB -> GM)",
            self.f.buffers[src.buffer].name,
            self.f.buffers[dst.buffer].name,
            if sdt != ddt { "vector Cast, then " } else { "" }
        ));
        self.line("{");
        self.indent += 1;
        let sview = self.ub_view(src, span)?;
        let from = if sdt == ddt {
            sview
        } else {
            let stage = self.stage_view(ddt, &shape, src.ranges.len(), &sk);
            self.cast_view(&stage, &sview, &shape, &sk, span)?;
            stage
        };
        let (starts, lo, hi, any, _) = self.gm_box(dst, span)?;
        self.sync_maybe(
            Pipe::Mte3,
            std::slice::from_ref(&from.name),
            &[self.name(dst.buffer)],
        );
        self.line(format!("if ({any}) {{"));
        self.indent += 1;
        self.gm_ub_rows(dst, &from, &shape, &dk, &sk, &starts, &lo, &hi, span, false)?;
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A scratch UB view of `shape` (the copy's shape) for a staged cast;
    /// its dimensions are numbered like the local side's (`dims`).
    fn stage_view(&mut self, dtype: DType, shape: &[i64], rank: usize, dims: &[usize]) -> UbView {
        let last = *shape.last().unwrap_or(&1);
        let pitch = ub_pitch(last, dtype);
        let rows: i64 = shape[..shape.len() - 1].iter().product();
        let name = self.scratch("stage", dtype, rows.max(1) * pitch);
        let mut strides = vec![0i64; rank];
        let mut stride = 1;
        for (i, &d) in dims.iter().enumerate().rev() {
            strides[d] = stride;
            stride *= if i + 1 == dims.len() { pitch } else { shape[i] };
        }
        UbView {
            name,
            dtype,
            strides,
            starts: vec!["int64_t(0)".to_string(); rank],
        }
    }

    /// `Duplicate(0)` over the region rows of a UB view.
    fn zero_fill(&mut self, v: &UbView, shape: &[i64], dims: &[usize], whole: bool) {
        let ty = ctype(v.dtype).unwrap_or("float");
        if whole && v.starts.iter().all(|s| s == "int64_t(0)") {
            let rows: i64 = shape[..shape.len() - 1].iter().product();
            let last_stride = if dims.len() >= 2 {
                v.strides[dims[dims.len() - 2]]
            } else {
                0
            };
            let n = if shape.len() >= 2 {
                rows * last_stride
            } else {
                round_up(shape[0], 32 / v.dtype.bytes().max(1) as i64)
            };
            self.line(format!("Duplicate({}, {ty}(0), {n});", v.name));
            return;
        }
        let mut opened = 0;
        let mut offs = Vec::new();
        for (i, &d) in dims.iter().enumerate().take(dims.len() - 1) {
            let var = format!("tl_z{i}");
            self.line(format!(
                "for (int64_t {var} = 0; {var} < {}; ++{var}) {{",
                shape[i]
            ));
            self.indent += 1;
            opened += 1;
            offs.push(format!("{var} * {}", v.strides[d]));
        }
        let base = v.offset();
        let off = if offs.is_empty() {
            base
        } else {
            format!("{base} + {}", offs.join(" + "))
        };
        self.line(format!(
            "Duplicate({}[{off}], {ty}(0), {});",
            v.name,
            shape[shape.len() - 1]
        ));
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
    }

    /// `DataCopyPad` rows between a GM region and a UB view; outer
    /// dimensions (all but the last two of the copy) become loops.
    #[allow(clippy::too_many_arguments)]
    fn gm_ub_rows(
        &mut self,
        gm: &Region,
        ub: &UbView,
        shape: &[i64],
        gk: &[usize],
        uk: &[usize],
        starts: &[String],
        lo: &[String],
        hi: &[String],
        span: Span,
        to_ub: bool,
    ) -> Result<(), Refusal> {
        let strides = self.gm_strides(gm.buffer, span)?;
        let n = shape.len();
        let sz = ub.dtype.bytes();
        let ty = ctype(ub.dtype).unwrap_or("float");
        // Index of the copy's entry i, in region coordinates.
        let mut idx: Vec<String> = Vec::new();
        let mut opened = 0;
        for (i, &g) in gk.iter().enumerate().take(n) {
            if i + 2 < n {
                let var = format!("tl_o{i}");
                self.line(format!(
                    "for (int64_t {var} = {}; {var} < {}; ++{var}) {{",
                    lo[g], hi[g]
                ));
                self.indent += 1;
                opened += 1;
                idx.push(var);
            } else {
                idx.push(lo[g].clone());
            }
        }
        // GM offset: every GM dimension, mapped or not.
        let mut gm_terms = Vec::new();
        for (d, s) in starts.iter().enumerate() {
            let pos = gk.iter().position(|&g| g == d);
            let coord = match pos {
                Some(i) => format!("({s} + {})", idx[i]),
                None => s.clone(),
            };
            gm_terms.push(format!("{coord} * {}", strides[d]));
        }
        let mut ub_terms = vec![ub.offset()];
        for (i, &u) in uk.iter().enumerate() {
            ub_terms.push(format!("{} * {}", idx[i], ub.strides[u]));
        }
        let gm_off = gm_terms.join(" + ");
        let ub_off = ub_terms.join(" + ");
        let cols = format!("({} - {})", hi[gk[n - 1]], lo[gk[n - 1]]);
        let (rows, gm_row, ub_row) = if n >= 2 {
            (
                format!("({} - {})", hi[gk[n - 2]], lo[gk[n - 2]]),
                strides[gk[n - 2]].clone(),
                ub.strides[uk[n - 2]],
            )
        } else {
            ("int64_t(1)".to_string(), "int64_t(0)".to_string(), 0)
        };
        let gm_gap = if n >= 2 {
            format!("uint32_t(({gm_row} - {cols}) * {sz})")
        } else {
            "0".to_string()
        };
        let ub_gap = if n >= 2 {
            format!("uint32_t(({ub_row} * {sz} - ({cols} * {sz} + 31) / 32 * 32) / 32)")
        } else {
            "0".to_string()
        };
        let gm_name = self.name(gm.buffer);
        if to_ub {
            self.line(format!(
                "DataCopyPad({}[{ub_off}], {gm_name}[{gm_off}], DataCopyExtParams{{uint16_t({rows}), uint32_t({cols} * {sz}), {gm_gap}, {ub_gap}, 0}}, DataCopyPadExtParams<{ty}>{{false, 0, 0, {ty}(0)}});",
                ub.name
            ));
        } else {
            self.line(format!(
                "DataCopyPad({gm_name}[{gm_off}], {}[{ub_off}], DataCopyExtParams{{uint16_t({rows}), uint32_t({cols} * {sz}), {ub_gap}, {gm_gap}, 0}});",
                ub.name
            ));
        }
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }

    /// Vector `Cast` of every row of `from` into `to` (same copy shape).
    fn cast_view(
        &mut self,
        to: &UbView,
        from: &UbView,
        shape: &[i64],
        dims: &[usize],
        _span: Span,
    ) -> Result<(), Refusal> {
        self.sync(
            Pipe::V,
            std::slice::from_ref(&from.name),
            std::slice::from_ref(&to.name),
        );
        let mode = cast_mode(from.dtype, to.dtype);
        let mut opened = 0;
        let (mut to_terms, mut from_terms) = (vec![to.offset()], vec![from.offset()]);
        let n = shape.len();
        for (i, &d) in dims.iter().enumerate().take(n - 1) {
            let var = format!("tl_c{i}");
            self.line(format!(
                "for (int64_t {var} = 0; {var} < {}; ++{var}) {{",
                shape[i]
            ));
            self.indent += 1;
            opened += 1;
            to_terms.push(format!("{var} * {}", to.strides[d]));
            from_terms.push(format!("{var} * {}", from.strides[d]));
        }
        self.line(format!(
            "Cast({}[{}], {}[{}], RoundMode::{mode}, {});",
            to.name,
            to_terms.join(" + "),
            from.name,
            from_terms.join(" + "),
            shape[n - 1]
        ));
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }

    /// Element-by-element copy on the scalar unit.
    fn copy_scalar(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (shape, sk, dk) = self.copy_dims(src, dst, span)?;
        let (sname, dname) = (self.name(src.buffer), self.name(dst.buffer));
        let sb = BTreeSet::from([src.buffer]);
        let db = BTreeSet::from([dst.buffer]);
        let (r, w) = (self.tracked(&sb), self.tracked(&db));
        self.sync(Pipe::S, &r, &w);
        let was = self.scalar_region;
        self.scalar_region = true;
        self.line(format!(
            "// T.copy {} -> {} element by element on the scalar unit",
            self.f.buffers[src.buffer].name, self.f.buffers[dst.buffer].name
        ));
        self.line("{");
        self.indent += 1;
        let mut idx = Vec::new();
        for (i, &e) in shape.iter().enumerate() {
            let var = format!("tl_e{i}");
            self.line(format!("for (int64_t {var} = 0; {var} < {e}; ++{var}) {{"));
            self.indent += 1;
            idx.push(var);
        }
        let coords = |r: &Region, keep: &[usize], k: &Kernel| -> Result<Vec<String>, Refusal> {
            let starts = k.local_starts(r, span)?;
            Ok(starts
                .iter()
                .enumerate()
                .map(|(d, s)| match keep.iter().position(|&x| x == d) {
                    Some(i) => format!("({s} + {})", idx[i]),
                    _ => s.clone(),
                })
                .collect())
        };
        let sc = coords(src, &sk, self)?;
        let dc = coords(dst, &dk, self)?;
        let value = self
            .load(src.buffer, &sc)
            .map_err(|m| Refusal::unsupported(span, m))?;
        let (sdt, ddt) = (
            self.f.buffers[src.buffer].dtype,
            self.f.buffers[dst.buffer].dtype,
        );
        let value = if sdt == ddt {
            value
        } else {
            let dty = ctype(ddt).unwrap_or("float");
            format!("{dty}(double(float({value})))")
        };
        match self.place_of(dst.buffer) {
            Place::Gm => {
                let (lin, inb) = self
                    .gm_index(dst.buffer, &dc)
                    .map_err(|m| Refusal::unsupported(span, m))?;
                self.line(format!("if {inb} {dname}.SetValue({lin}, {value});"));
            }
            Place::Ub => {
                let lin = self.ub_index(dst.buffer, &dc);
                let inb = self.local_bounds(dst.buffer, &dc);
                self.line(format!("if ({inb}) {dname}.SetValue({lin}, {value});"));
            }
            Place::Scalar => self.line(format!("{dname} = {value};")),
            _ => return Err(Refusal::unsupported(span, "copy into a cube buffer")),
        }
        let _ = sname;
        for _ in 0..shape.len() {
            self.indent -= 1;
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
        self.scalar_region = was;
        Ok(())
    }

    fn local_bounds(&self, b: Handle<Buffer>, idx: &[String]) -> String {
        let Some(p) = self.placed(b) else {
            return "true".into();
        };
        idx.iter()
            .zip(&p.shape)
            .map(|(i, n)| format!("{i} >= 0 && {i} < {n}"))
            .collect::<Vec<_>>()
            .join(" && ")
    }

    /// GM (ND) → L1 (NZ) for a cube operand.
    fn copy_gm_l1(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (shape, sk, _) = self.copy_dims(src, dst, span)?;
        let p = self
            .placed(dst.buffer)
            .cloned()
            .ok_or_else(|| Refusal::unsupported(span, "unplaced buffer"))?;
        if !self.whole(dst) || shape.len() != 2 || shape != p.shape {
            return Err(Refusal::unsupported(
                span,
                "a cube operand must be loaded whole, as a two-dimensional tile",
            ));
        }
        if sk[1] != src.ranges.len() - 1 {
            return Err(Refusal::unsupported(
                span,
                "a cube operand tile must be contiguous along its last dimension in global memory",
            ));
        }
        let dt = self.f.buffers[dst.buffer].dtype;
        if self.f.buffers[src.buffer].dtype != dt {
            return Err(Refusal::unsupported(
                span,
                "a copy into a cube operand cannot convert types (MTE2 moves bytes)",
            ));
        }
        let ty = ctype(dt).unwrap_or("half");
        let (dname, sname) = (self.name(dst.buffer), self.name(src.buffer));
        self.line(format!(
            "// T.copy {} -> {} (GM -> L1, ND -> NZ fractals of 16 x {})",
            self.f.buffers[src.buffer].name,
            self.f.buffers[dst.buffer].name,
            c0(dt)
        ));
        self.line("{");
        self.indent += 1;
        let strides = self.gm_strides(src.buffer, span)?;
        let (starts, lo, hi, any, full) = self.gm_box(src, span)?;
        self.sync_maybe(
            Pipe::Mte2,
            std::slice::from_ref(&sname),
            std::slice::from_ref(&dname),
        );
        self.line(format!(
            "if (!({full})) InitConstValue({dname}, InitConstValueParams<{ty}>{{uint16_t({}), 1, 0, {ty}(0)}});",
            p.bytes / 512
        ));
        let (r, c) = (sk[0], sk[1]);
        let gm_off = starts
            .iter()
            .enumerate()
            .map(|(d, s)| {
                let coord = if d == r || d == c {
                    format!("({s} + {})", lo[d])
                } else {
                    s.clone()
                };
                format!("{coord} * {}", strides[d])
            })
            .collect::<Vec<_>>()
            .join(" + ");
        let c0v = c0(dt);
        let nz_off = format!(
            "({0} / {c0v}) * {1} * {c0v} + {2} * {c0v} + {0} % {c0v}",
            lo[c], p.pitch, lo[r]
        );
        self.line(format!(
            "if ({any}) DataCopy({dname}[{nz_off}], {sname}[{gm_off}], Nd2NzParams{{1, uint16_t({} - {}), uint16_t({} - {}), 0, uint16_t({}), uint16_t({}), 1, 0}});",
            hi[r], lo[r], hi[c], lo[c], strides[r], p.pitch
        ));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// L0C (NZ) → GM (ND) through the fixpipe.
    fn copy_l0c_gm(&mut self, src: &Region, dst: &Region, span: Span) -> Result<(), Refusal> {
        let (shape, _, dk) = self.copy_dims(src, dst, span)?;
        let p = self
            .placed(src.buffer)
            .cloned()
            .ok_or_else(|| Refusal::unsupported(span, "unplaced buffer"))?;
        if !self.whole(src) || shape.len() != 2 || dk[1] != dst.ranges.len() - 1 {
            return Err(Refusal::unsupported(
                span,
                "an accumulator leaves L0C whole, into a two-dimensional region of global memory",
            ));
        }
        let (st, dt) = (
            self.f.buffers[src.buffer].dtype,
            self.f.buffers[dst.buffer].dtype,
        );
        let quant = match (st, dt) {
            (DType::F32, DType::F32) | (DType::I32, DType::I32) => "NoQuant",
            (DType::F32, DType::F16) => "F322F16",
            (DType::F32, DType::BF16) => "F322BF16",
            _ => {
                return Err(Refusal::unsupported(
                    span,
                    format!(
                        "the fixpipe cannot convert {} to {}",
                        st.tilelang_name(),
                        dt.tilelang_name()
                    ),
                ));
            }
        };
        let (sname, dname) = (self.name(src.buffer), self.name(dst.buffer));
        self.line(format!(
            "// T.copy {} -> {} (L0C -> GM through the fixpipe, NZ -> ND{})",
            self.f.buffers[src.buffer].name,
            self.f.buffers[dst.buffer].name,
            if quant == "NoQuant" {
                String::new()
            } else {
                format!(", {quant}")
            }
        ));
        self.line("{");
        self.indent += 1;
        let strides = self.gm_strides(dst.buffer, span)?;
        let (starts, lo, hi, any, _) = self.gm_box(dst, span)?;
        let (r, c) = (dk[0], dk[1]);
        let gm_off = starts
            .iter()
            .enumerate()
            .map(|(d, s)| {
                let coord = if d == r || d == c {
                    format!("({s} + {})", lo[d])
                } else {
                    s.clone()
                };
                format!("{coord} * {}", strides[d])
            })
            .collect::<Vec<_>>()
            .join(" + ");
        self.sync_maybe(
            Pipe::Fix,
            std::slice::from_ref(&sname),
            std::slice::from_ref(&dname),
        );
        let src_off = format!(
            "({0} / 16) * {1} * 16 + {2} * 16 + {0} % 16",
            lo[c], p.pitch, lo[r]
        );
        self.line("FixpipeParamsV220 tl_fp;");
        self.line(format!(
            "tl_fp.nSize = uint16_t({} - {}); tl_fp.mSize = uint16_t({} - {}); tl_fp.srcStride = {}; tl_fp.dstStride = uint32_t({}); tl_fp.quantPre = QuantMode_t::{quant};",
            hi[c], lo[c], hi[r], lo[r], p.pitch, strides[r]
        ));
        self.line(format!(
            "if ({any}) Fixpipe({dname}[{gm_off}], {sname}[{src_off}], tl_fp);"
        ));
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    // -----------------------------------------------------------------
    // T.gemm

    fn staged(&self, b: Handle<Buffer>) -> Option<Stage> {
        self.placed(b).and_then(|p| p.stage)
    }

    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &mut self,
        a: &Region,
        b: &Region,
        c: &Region,
        ta: bool,
        tb: bool,
        clear: Handle<Expr>,
        span: Span,
    ) -> Result<(), Refusal> {
        let a_ok = self.place_of(a.buffer) == Place::L1A
            || self.staged(a.buffer) == Some(Stage::Operand(Place::L1A));
        let b_ok = self.place_of(b.buffer) == Place::L1B
            || self.staged(b.buffer) == Some(Stage::Operand(Place::L1B));
        let c_staged = self.staged(c.buffer) == Some(Stage::Accumulator);
        if !(a_ok && b_ok && (self.place_of(c.buffer) == Place::L0c || c_staged)) {
            return Err(Refusal::unsupported(
                span,
                "`T.gemm` on Ascend reads its operands from tiles in L1 (loaded with `T.copy` from global memory, or staged there from UB) and accumulates into L0C",
            ));
        }
        if !(self.whole(a) && self.whole(b) && self.whole(c)) {
            return Err(Refusal::unsupported(span, "`T.gemm` on parts of buffers"));
        }
        let pa = self
            .placed(a.buffer)
            .cloned()
            .unwrap_or_else(unreachable_placed);
        let pb = self
            .placed(b.buffer)
            .cloned()
            .unwrap_or_else(unreachable_placed);
        let pc = self
            .placed(c.buffer)
            .cloned()
            .unwrap_or_else(unreachable_placed);
        let dt = self.f.buffers[a.buffer].dtype;
        let acc = self.f.buffers[c.buffer].dtype;
        let supported = matches!(
            (dt, acc),
            (DType::F16, DType::F32)
                | (DType::BF16, DType::F32)
                | (DType::F32, DType::F32)
                | (DType::I8, DType::I32)
        );
        if !supported || self.f.buffers[b.buffer].dtype != dt {
            return Err(Refusal {
                code: ErrorCode::UnsupportedDtype,
                span,
                message: format!(
                    "the cube unit multiplies float16/bfloat16/float32 into float32 and int8 into int32, not {} x {} into {}",
                    dt.tilelang_name(),
                    self.f.buffers[b.buffer].dtype.tilelang_name(),
                    acc.tilelang_name()
                ),
            });
        }
        let (m, k) = if ta {
            (pa.shape[1], pa.shape[0])
        } else {
            (pa.shape[0], pa.shape[1])
        };
        let n = if tb { pb.shape[0] } else { pb.shape[1] };
        if (if tb { pb.shape[1] } else { pb.shape[0] }) != k || pc.shape != [m, n] {
            return Err(Refusal::unsupported(
                span,
                "`T.gemm` operand shapes do not agree",
            ));
        }
        // The in-fractal transposes LoadData performs exist for two-byte
        // elements only: A stored K x M, B stored K x N.
        if dt.bytes() != 2 && (ta || !tb) {
            return Err(Refusal::unsupported(
                span,
                format!(
                    "`T.gemm` with {} operands needs {} in its fractals on the way from L1 to L0, which LoadData2D does only for 16-bit types; the Ascend backend supports {} operands with transpose_A=False, transpose_B=True",
                    dt.tilelang_name(),
                    if ta { "A transposed" } else { "B transposed" },
                    dt.tilelang_name()
                ),
            ));
        }
        // Operands the vector unit wrote reach L1 through the workspace.
        let an = if self.staged(a.buffer).is_some() {
            self.stage_operand(a.buffer)?
        } else {
            self.name(a.buffer)
        };
        let bn = if self.staged(b.buffer).is_some() {
            self.stage_operand(b.buffer)?
        } else {
            self.name(b.buffer)
        };
        let cn = if c_staged {
            format!("{}_l0c", self.name(c.buffer))
        } else {
            self.name(c.buffer)
        };
        let clear_text = if c_staged {
            // A fresh product; the vector unit adds it to the accumulator.
            "true".to_string()
        } else {
            let fresh = format!("{cn}_fresh");
            match self.f.as_literal(clear) {
                Some(Literal::Bool(true)) => "true".to_string(),
                Some(Literal::Bool(false)) => fresh,
                _ => format!("({} || {fresh})", self.expr(clear, span)?),
            }
        };
        let names = [
            self.f.buffers[a.buffer].name.clone(),
            self.f.buffers[b.buffer].name.clone(),
            self.f.buffers[c.buffer].name.clone(),
        ];
        let shape = GemmShape {
            m,
            n,
            k,
            ta,
            tb,
            a_rows: pa.shape[0],
            b_rows: pb.shape[0],
        };
        self.segment(Side::Aic, |kx| {
            kx.gemm_cube(&shape, dt, [&an, &bn, &cn], &names, &clear_text, span)?;
            if !c_staged {
                kx.line(format!("{cn}_fresh = false;"));
            }
            Ok(())
        })?;
        if c_staged {
            self.unstage_accumulator(c.buffer, clear, span)?;
        }
        Ok(())
    }

    /// The cube's part of a `T.gemm`: `LoadData` into L0A/L0B and `Mmad`
    /// into the L0C tile `names[2]`, K split into chunks that fit L0.
    fn gemm_cube(
        &mut self,
        g: &GemmShape,
        dt: DType,
        [an, bn, cn]: [&String; 3],
        names: &[String; 3],
        clear_text: &str,
        span: Span,
    ) -> Result<(), Refusal> {
        let GemmShape {
            m,
            n,
            k,
            ta,
            tb,
            a_rows,
            b_rows,
        } = *g;
        let c0v = c0(dt);
        let kstep = c0v.max(16);
        let (mp, np, kp) = (round_up(m, 16), round_up(n, 16), round_up(k, kstep));
        let sz = dt.bytes() as i64;
        // K chunk: as long as A and B fit L0A and L0B.
        let fits = |kc: i64| {
            (mp * kc * sz) as u64 <= self.engine.l0a.capacity
                && (kc * np * sz) as u64 <= self.engine.l0b.capacity
        };
        let mut kc = kp;
        while kc > kstep && !fits(kc) {
            kc = round_up(kc / 2, kstep);
        }
        if !fits(kc) {
            return Err(Refusal::unsupported(
                span,
                format!(
                    "`T.gemm` tile {m} x {n} is too large: one K step of {kstep} needs {} bytes of L0A and {} of L0B (the target has {} and {})",
                    mp * kstep * sz,
                    kstep * np * sz,
                    self.engine.l0a.capacity,
                    self.engine.l0b.capacity
                ),
            ));
        }
        self.l0a = self.l0a.max((mp * kc * sz) as u64);
        self.l0b = self.l0b.max((kc * np * sz) as u64);
        self.line(format!(
            "// T.gemm {}{} x {}{} -> {}: Mmad {m}x{n}x{k} over fractals, K in chunks of {kc}",
            names[0],
            if ta { "^T" } else { "" },
            names[1],
            if tb { "^T" } else { "" },
            names[2]
        ));
        let frac = 512 / sz; // elements per fractal
        let mut k0 = 0;
        let mut first = true;
        while k0 < kp {
            let klen = kc.min(kp - k0);
            let (kb0, kbn) = (k0 / c0v, klen / c0v);
            // L1 -> L0A: Zz fractals (m-block major).
            self.sync(
                Pipe::Mte1,
                std::slice::from_ref(an),
                &["tl_l0a".to_string()],
            );
            let mblocks = mp / 16;
            if !ta {
                // A stored M x K: fractal (mb, kb) at kb * (Mp/16) + mb.
                self.line(format!(
                    "for (int64_t tl_mb = 0; tl_mb < {mblocks}; ++tl_mb) LoadData(tl_l0a[tl_mb * {}], {an}, LoadData2DParams{{uint16_t({kb0} * {mblocks} + tl_mb), uint8_t({kbn}), uint16_t({mblocks}), 0, 0, false, 0}});",
                    kbn * frac
                ));
            } else {
                // A stored K x M: fractal (kb, mb) at mb * (Kp/16) + kb, transposed.
                let kblocks = round_up(a_rows, 16) / 16;
                self.line(format!(
                    "for (int64_t tl_mb = 0; tl_mb < {mblocks}; ++tl_mb) LoadData(tl_l0a[tl_mb * {}], {an}, LoadData2DParams{{uint16_t(tl_mb * {kblocks} + {kb0}), uint8_t({kbn}), 1, 0, 0, true, 0}});",
                    kbn * frac
                ));
            }
            // L1 -> L0B: nZ fractals (k-block major).
            self.sync(
                Pipe::Mte1,
                std::slice::from_ref(bn),
                &["tl_l0b".to_string()],
            );
            let nblocks = np / 16;
            if tb {
                // B stored N x K: fractal (nb, kb) at kb * (Np/16) + nb.
                self.line(format!(
                    "for (int64_t tl_kb = 0; tl_kb < {kbn}; ++tl_kb) LoadData(tl_l0b[tl_kb * {}], {bn}, LoadData2DParams{{uint16_t(({kb0} + tl_kb) * {nblocks}), uint8_t({nblocks}), 1, 0, 0, false, 0}});",
                    nblocks * frac
                ));
            } else {
                // B stored K x N: fractal (kb, nb) at nb * (Kp/16) + kb, transposed.
                let kblocks = round_up(b_rows, 16) / 16;
                self.line(format!(
                    "for (int64_t tl_kb = 0; tl_kb < {kbn}; ++tl_kb) LoadData(tl_l0b[tl_kb * {}], {bn}, LoadData2DParams{{uint16_t({kb0} + tl_kb), uint8_t({nblocks}), uint16_t({kblocks}), 0, 0, true, 0}});",
                    nblocks * frac
                ));
            }
            self.sync(
                Pipe::M,
                &["tl_l0a".to_string(), "tl_l0b".to_string()],
                std::slice::from_ref(cn),
            );
            let init = if first { clear_text } else { "false" };
            self.line("{");
            self.indent += 1;
            self.line("MmadParams tl_mp;");
            self.line(format!(
                "tl_mp.m = {m}; tl_mp.n = {n}; tl_mp.k = {klen}; tl_mp.cmatrixInitVal = {init};"
            ));
            self.line(format!("Mmad({cn}, tl_l0a, tl_l0b, tl_mp);"));
            self.indent -= 1;
            self.line("}");
            first = false;
            k0 += klen;
        }
        Ok(())
    }

    /// The GM workspace slot buffer `name` goes through: a global tensor of
    /// `elements` (the buffer's rows at its UB pitch) in this core's
    /// region, laid out on first use.
    fn workspace_slot(&mut self, name: &str, dtype: DType, elements: i64) -> String {
        let ws = format!("{name}_ws");
        if !self.workspace.iter().any(|w| w.name == ws) {
            let offset = self.workspace_bytes;
            self.workspace_bytes += round_up(elements * dtype.bytes() as i64, WORKSPACE_ALIGN);
            self.workspace.push(WorkspaceSlot {
                name: ws.clone(),
                dtype,
                elements,
                offset,
            });
        }
        ws
    }

    /// Brings an operand the vector unit wrote (in UB) to the cube: MTE3
    /// copies its rows to the workspace on the vector core, MTE2 copies
    /// them from there into the operand's L1 tile as NZ fractals on the
    /// cube core. Returns the L1 tile's name.
    fn stage_operand(&mut self, b: Handle<Buffer>) -> Result<String, Refusal> {
        let p = self
            .placed(b)
            .cloned()
            .ok_or_else(|| Refusal::internal(self.span, "a staged operand is not placed"))?;
        let dt = self.f.buffers[b].dtype;
        let ty = ctype(dt).unwrap_or("half");
        let name = self.name(b);
        let (rows, cols) = (p.shape[0], p.shape[1]);
        let elements = rows * p.pitch;
        let ws = self.workspace_slot(&name, dt, elements);
        let l1 = format!("{name}_l1");
        let (rows_p, cols_p) = (round_up(rows, 16), round_up(cols, c0(dt).max(16)));
        self.segment(Side::Aiv, |k| {
            k.line(format!(
                "// {} -> GM workspace (UB -> GM), on its way to the cube",
                k.f.buffers[b].name
            ));
            k.sync(
                Pipe::Mte3,
                std::slice::from_ref(&name),
                std::slice::from_ref(&ws),
            );
            k.line(format!("DataCopy({ws}, {name}, {elements});"));
            Ok(())
        })?;
        self.segment(Side::Aic, |k| {
            k.line(format!(
                "// GM workspace -> {l1} (GM -> L1, ND -> NZ fractals of 16 x {})",
                c0(dt)
            ));
            k.sync(
                Pipe::Mte2,
                std::slice::from_ref(&ws),
                std::slice::from_ref(&l1),
            );
            if rows != rows_p || cols != cols_p {
                // The cube reads whole fractals: padding must be zero.
                k.line(format!(
                    "InitConstValue({l1}, InitConstValueParams<{ty}>{{uint16_t({}), 1, 0, {ty}(0)}});",
                    rows_p * cols_p * dt.bytes() as i64 / 512
                ));
            }
            k.line(format!(
                "DataCopy({l1}, {ws}, Nd2NzParams{{1, uint16_t({rows}), uint16_t({cols}), 0, uint16_t({}), uint16_t({rows_p}), 1, 0}});",
                p.pitch
            ));
            Ok(())
        })?;
        Ok(l1)
    }

    /// Brings a `T.gemm` product back to an accumulator in UB: the fixpipe
    /// copies the L0C tile to the workspace (NZ → ND, rows at the UB
    /// pitch) on the cube core, MTE2 copies it into UB on the vector core,
    /// where it replaces the accumulator (`clear_accum`) or is added to it.
    fn unstage_accumulator(
        &mut self,
        c: Handle<Buffer>,
        clear: Handle<Expr>,
        span: Span,
    ) -> Result<(), Refusal> {
        let p = self
            .placed(c)
            .cloned()
            .ok_or_else(|| Refusal::internal(span, "a staged accumulator is not placed"))?;
        let dt = self.f.buffers[c].dtype;
        let ty = ctype(dt).unwrap_or("float");
        let name = self.name(c);
        let l0c = format!("{name}_l0c");
        let (m, n) = (p.shape[0], p.shape[1]);
        let elements = m * p.pitch;
        let ws = self.workspace_slot(&name, dt, elements);
        self.segment(Side::Aic, |k| {
            k.line(format!(
                "// {l0c} -> GM workspace (L0C -> GM through the fixpipe, NZ -> ND)"
            ));
            k.sync(
                Pipe::Fix,
                std::slice::from_ref(&l0c),
                std::slice::from_ref(&ws),
            );
            k.line("{");
            k.indent += 1;
            k.line("FixpipeParamsV220 tl_fp;");
            k.line(format!(
                "tl_fp.nSize = {n}; tl_fp.mSize = {m}; tl_fp.srcStride = {}; tl_fp.dstStride = {}; tl_fp.quantPre = QuantMode_t::NoQuant;",
                round_up(m, 16),
                p.pitch
            ));
            k.line(format!("Fixpipe({ws}, {l0c}, tl_fp);"));
            k.indent -= 1;
            k.line("}");
            Ok(())
        })?;
        // A literal `clear_accum`, or the C++ condition of a computed one.
        let (literal, cond) = match self.f.as_literal(clear) {
            Some(Literal::Bool(b)) => (Some(b), String::new()),
            _ => (None, self.expr(clear, span)?),
        };
        self.segment(Side::Aiv, |k| {
            if literal == Some(true) {
                k.line(format!(
                    "// GM workspace -> {} (GM -> UB): the product replaces it",
                    k.f.buffers[c].name
                ));
                k.sync(
                    Pipe::Mte2,
                    std::slice::from_ref(&ws),
                    std::slice::from_ref(&name),
                );
                k.line(format!("DataCopy({name}, {ws}, {elements});"));
                return Ok(());
            }
            let tmp = k.scratch("gemm_in", dt, elements);
            k.line(format!(
                "// GM workspace -> UB, added to {}",
                k.f.buffers[c].name
            ));
            k.sync(
                Pipe::Mte2,
                std::slice::from_ref(&ws),
                std::slice::from_ref(&tmp),
            );
            k.line(format!("DataCopy({tmp}, {ws}, {elements});"));
            if literal.is_none() {
                k.sync(Pipe::V, &[], std::slice::from_ref(&name));
                k.line(format!(
                    "if ({cond}) Duplicate({name}, {ty}(0), {elements});"
                ));
            }
            k.sync(
                Pipe::V,
                &[tmp.clone(), name.clone()],
                std::slice::from_ref(&name),
            );
            k.line(format!("Add({name}, {name}, {tmp}, {elements});"));
            Ok(())
        })
    }

    // -----------------------------------------------------------------
    // T.fill / T.clear

    fn fill(&mut self, dst: &Region, value: Handle<Expr>, span: Span) -> Result<(), Refusal> {
        match self.place_of(dst.buffer) {
            Place::L0c => {
                let zero = match self.f.as_literal(value) {
                    Some(l) => l.as_f64() == 0.0,
                    None => false,
                };
                if !zero || !self.whole(dst) {
                    return Err(Refusal::unsupported(
                        span,
                        "an accumulator in L0C can only be cleared whole (the next Mmad then starts from zero)",
                    ));
                }
                let name = self.name(dst.buffer);
                self.line(format!(
                    "{name}_fresh = true; // T.clear: the next Mmad overwrites {name}"
                ));
                Ok(())
            }
            Place::Ub => {
                let dt = self.f.buffers[dst.buffer].dtype;
                let ty = ctype(dt).unwrap_or("float");
                self.scalar_sync(&[value], None);
                let v = self.expr(value, span)?;
                let view = self.ub_view(dst, span)?;
                let extents: Vec<i64> = dst
                    .ranges
                    .iter()
                    .map(|r| self.f.as_const_int(r.extent))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        Refusal::unsupported(span, "`T.fill` with extents known only at launch")
                    })?;
                let dims: Vec<usize> = (0..extents.len()).collect();
                let name = view.name.clone();
                self.sync(Pipe::V, &[], std::slice::from_ref(&name));
                let whole = self.whole(dst);
                self.line("{");
                self.indent += 1;
                self.line(format!("const {ty} tl_value = {v};"));
                let zero = UbView { ..view };
                self.fill_rows(&zero, &extents, &dims, whole, "tl_value");
                self.indent -= 1;
                self.line("}");
                Ok(())
            }
            Place::Scalar => {
                let v = self.expr(value, span)?;
                let name = self.name(dst.buffer);
                self.line(format!("{name} = {v};"));
                Ok(())
            }
            Place::Gm => self.fill_scalar(dst, value, span),
            p => Err(Refusal::unsupported(
                span,
                format!("`T.fill` of a buffer in {}", p.name()),
            )),
        }
    }

    fn fill_rows(&mut self, v: &UbView, shape: &[i64], dims: &[usize], whole: bool, value: &str) {
        let ty = ctype(v.dtype).unwrap_or("float");
        if whole && v.starts.iter().all(|s| s == "int64_t(0)") {
            let rows: i64 = shape[..shape.len() - 1].iter().product();
            let n = if shape.len() >= 2 {
                rows * v.strides[dims[dims.len() - 2]]
            } else {
                round_up(shape[0], 32 / v.dtype.bytes().max(1) as i64)
            };
            self.line(format!("Duplicate({}, {ty}({value}), {n});", v.name));
            return;
        }
        let mut opened = 0;
        let mut offs = vec![v.offset()];
        for (i, &d) in dims.iter().enumerate().take(dims.len() - 1) {
            let var = format!("tl_f{i}");
            self.line(format!(
                "for (int64_t {var} = 0; {var} < {}; ++{var}) {{",
                shape[i]
            ));
            self.indent += 1;
            opened += 1;
            offs.push(format!("{var} * {}", v.strides[d]));
        }
        self.line(format!(
            "Duplicate({}[{}], {ty}({value}), {});",
            v.name,
            offs.join(" + "),
            shape[shape.len() - 1]
        ));
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
    }

    fn fill_scalar(
        &mut self,
        dst: &Region,
        value: Handle<Expr>,
        span: Span,
    ) -> Result<(), Refusal> {
        let db = BTreeSet::from([dst.buffer]);
        let w = self.tracked(&db);
        self.sync(Pipe::S, &[], &w);
        let v = self.expr(value, span)?;
        let starts = self.local_starts(dst, span)?;
        let mut idx = Vec::new();
        let mut opened = 0;
        for (d, rg) in dst.ranges.iter().enumerate() {
            let e = self.expr(rg.extent, span)?;
            let var = format!("tl_e{d}");
            self.line(format!(
                "for (int64_t {var} = 0; {var} < int64_t({e}); ++{var}) {{"
            ));
            self.indent += 1;
            opened += 1;
            idx.push(format!("({} + {var})", starts[d]));
        }
        let (lin, inb) = self
            .gm_index(dst.buffer, &idx)
            .map_err(|m| Refusal::unsupported(span, m))?;
        let name = self.name(dst.buffer);
        self.line(format!("if {inb} {name}.SetValue({lin}, {v});"));
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }

    // -----------------------------------------------------------------
    // T.reduce_*

    fn reduce(
        &mut self,
        kind: ReduceKind,
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        dim: usize,
        clear: bool,
        span: Span,
    ) -> Result<(), Refusal> {
        if kind.is_bitwise() {
            // The paths below accumulate in `double` or on the vector
            // unit's float reductions; neither combines bits.
            return Err(Refusal::unsupported(
                span,
                format!(
                    "`T.reduce_{}`: this backend's reductions are arithmetic",
                    kind.name()
                ),
            ));
        }
        let (ps, pd) = (self.place_of(src), self.place_of(dst));
        let sdt = self.f.buffers[src].dtype;
        let vector_ok = ps == Place::Ub
            && pd == Place::Ub
            && self.f.buffers[dst].dtype == sdt
            && sdt.kind() == tilec_core::ir::DTypeKind::Float
            && sdt != DType::F64;
        let shape = self
            .placed(src)
            .map(|p| p.shape.clone())
            .unwrap_or_default();
        if vector_ok && (shape.len() == 2 && dim == 1 || shape.len() == 1 && dim == 0) {
            return self.reduce_rows(kind, src, dst, &shape, clear);
        }
        if ps == Place::L0c || pd == Place::L0c || matches!(ps, Place::L1A | Place::L1B) {
            return Err(Refusal::unsupported(
                span,
                format!(
                    "`T.reduce_{}` of a cube buffer: the vector unit cannot read L0C or L1 ({CUBE_RESULT})",
                    kind.name()
                ),
            ));
        }
        self.reduce_scalar(kind, src, dst, dim, clear, span)
    }

    /// Last-dimension reduction on the vector unit: one `Reduce*` per row
    /// into a scratch block, combined into `dst` by the scalar unit.
    fn reduce_rows(
        &mut self,
        kind: ReduceKind,
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        shape: &[i64],
        clear: bool,
    ) -> Result<(), Refusal> {
        let dt = self.f.buffers[src].dtype;
        let ty = ctype(dt).unwrap_or("float");
        let (rows, cols) = if shape.len() == 2 {
            (shape[0], shape[1])
        } else {
            (1, shape[0])
        };
        let pitch = self.placed(src).map(|p| p.pitch).unwrap_or(cols);
        let (sn, dn) = (self.name(src), self.name(dst));
        let work = self.scratch("work", dt, cols);
        let red = self.scratch("red", dt, rows);
        let abs = matches!(kind, ReduceKind::AbsSum | ReduceKind::AbsMax);
        let op = match kind {
            ReduceKind::Sum | ReduceKind::AbsSum => "ReduceSum",
            ReduceKind::Max | ReduceKind::AbsMax => "ReduceMax",
            ReduceKind::Min => "ReduceMin",
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => {
                return Err(Refusal::unsupported(Span::UNKNOWN, "a bitwise reduction"));
            }
        };
        self.line(format!(
            "// T.reduce_{} {} -> {}: {op} per row on the vector unit",
            kind.name(),
            self.f.buffers[src].name,
            self.f.buffers[dst].name
        ));
        if abs {
            let tmp = self.scratch("abs", dt, rows * pitch);
            self.sync(
                Pipe::V,
                std::slice::from_ref(&sn),
                std::slice::from_ref(&tmp),
            );
            self.line(format!("Abs({tmp}, {sn}, {});", rows * pitch));
            self.sync(
                Pipe::V,
                std::slice::from_ref(&tmp),
                &[work.clone(), red.clone()],
            );
            self.line(format!(
                "for (int64_t tl_r = 0; tl_r < {rows}; ++tl_r) {op}({red}[tl_r * {}], {tmp}[tl_r * {pitch}], {work}, {cols});",
                32 / dt.bytes()
            ));
        } else {
            self.sync(
                Pipe::V,
                std::slice::from_ref(&sn),
                &[work.clone(), red.clone()],
            );
            self.line(format!(
                "for (int64_t tl_r = 0; tl_r < {rows}; ++tl_r) {op}({red}[tl_r * {}], {sn}[tl_r * {pitch}], {work}, {cols});",
                32 / dt.bytes()
            ));
        }
        // Each row's result sits at the start of its own 32-byte block.
        self.scratch("red", dt, rows * (32 / dt.bytes() as i64));
        self.sync(
            Pipe::S,
            std::slice::from_ref(&red),
            std::slice::from_ref(&dn),
        );
        let step = 32 / dt.bytes();
        let combine = if clear {
            format!("{red}.GetValue(tl_r * {step})")
        } else {
            let (x, y) = (
                format!("float({dn}.GetValue(tl_r))"),
                format!("float({red}.GetValue(tl_r * {step}))"),
            );
            match kind {
                ReduceKind::Sum | ReduceKind::AbsSum => format!("{ty}({x} + {y})"),
                ReduceKind::Max | ReduceKind::AbsMax => format!("{ty}(tl_max({x}, {y}))"),
                ReduceKind::Min => format!("{ty}(tl_min({x}, {y}))"),
                ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => {
                    return Err(Refusal::unsupported(Span::UNKNOWN, "a bitwise reduction"));
                }
            }
        };
        self.line(format!(
            "for (int64_t tl_r = 0; tl_r < {rows}; ++tl_r) {dn}.SetValue(tl_r, {combine});"
        ));
        Ok(())
    }

    fn reduce_scalar(
        &mut self,
        kind: ReduceKind,
        src: Handle<Buffer>,
        dst: Handle<Buffer>,
        dim: usize,
        clear: bool,
        span: Span,
    ) -> Result<(), Refusal> {
        let shape = self
            .placed(src)
            .map(|p| p.shape.clone())
            .ok_or_else(|| Refusal::unsupported(span, "`T.reduce` of a global buffer"))?;
        let sb = BTreeSet::from([src]);
        let db = BTreeSet::from([dst]);
        let (r, w) = (self.tracked(&sb), self.tracked(&db));
        let rw: Vec<String> = r.iter().chain(&w).cloned().collect();
        self.sync(Pipe::S, &rw, &w);
        let was = self.scalar_region;
        self.scalar_region = true;
        self.line(format!(
            "// T.reduce_{} {} -> {} on the scalar unit",
            kind.name(),
            self.f.buffers[src].name,
            self.f.buffers[dst].name
        ));
        let mut outer = Vec::new();
        let mut opened = 0;
        for (d, &n) in shape.iter().enumerate() {
            if d == dim {
                continue;
            }
            let var = format!("tl_r{d}");
            self.line(format!("for (int64_t {var} = 0; {var} < {n}; ++{var}) {{"));
            self.indent += 1;
            opened += 1;
            outer.push(var);
        }
        let init = match kind {
            ReduceKind::Sum | ReduceKind::AbsSum => "0.0",
            ReduceKind::Max | ReduceKind::AbsMax => "-INFINITY",
            ReduceKind::Min => "INFINITY",
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => {
                return Err(Refusal::unsupported(span, "a bitwise reduction"));
            }
        };
        let dst_idx: Vec<String> = if outer.is_empty() {
            vec!["0".into()]
        } else {
            outer.clone()
        };
        let dval = self
            .load(dst, &dst_idx)
            .map_err(|m| Refusal::unsupported(span, m))?;
        let start = if clear {
            init.to_string()
        } else {
            format!("double({dval})")
        };
        self.line(format!("double tl_acc = {start};"));
        self.line(format!(
            "for (int64_t tl_rk = 0; tl_rk < {}; ++tl_rk) {{",
            shape[dim]
        ));
        self.indent += 1;
        let mut sidx = Vec::new();
        let mut oi = 0;
        for d in 0..shape.len() {
            if d == dim {
                sidx.push("tl_rk".to_string());
            } else {
                sidx.push(outer[oi].clone());
                oi += 1;
            }
        }
        let sval = self
            .load(src, &sidx)
            .map_err(|m| Refusal::unsupported(span, m))?;
        let x = match kind {
            ReduceKind::AbsSum | ReduceKind::AbsMax => format!("fabs(double({sval}))"),
            _ => format!("double({sval})"),
        };
        let step = match kind {
            ReduceKind::Sum | ReduceKind::AbsSum => format!("tl_acc = tl_acc + {x};"),
            ReduceKind::Max | ReduceKind::AbsMax => format!("tl_acc = tl_max(tl_acc, {x});"),
            ReduceKind::Min => format!("tl_acc = tl_min(tl_acc, {x});"),
            ReduceKind::BitAnd | ReduceKind::BitOr | ReduceKind::BitXor => {
                return Err(Refusal::unsupported(span, "a bitwise reduction"));
            }
        };
        self.line(step);
        self.indent -= 1;
        self.line("}");
        let dt = self.f.buffers[dst].dtype;
        let ty = ctype(dt).unwrap_or("float");
        let value = if dt.kind() == tilec_core::ir::DTypeKind::Float {
            format!("{ty}(tl_to_float(tl_acc))")
        } else {
            format!("{ty}(tl_acc)")
        };
        let dn = self.name(dst);
        match self.place_of(dst) {
            Place::Ub => {
                let lin = self.ub_index(dst, &dst_idx);
                self.line(format!("{dn}.SetValue({lin}, {value});"));
            }
            Place::Scalar => self.line(format!("{dn} = {value};")),
            _ => return Err(Refusal::unsupported(span, "`T.reduce` into this buffer")),
        }
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        self.scalar_region = was;
        Ok(())
    }

    // -----------------------------------------------------------------
    // Vector form of T.Parallel (see vector.rs).

    fn try_vector(
        &mut self,
        vars: &[Handle<Var>],
        extents: &[Handle<Expr>],
        body: &Block,
        span: Span,
    ) -> Result<Option<()>, Refusal> {
        let _ = span;
        let Some(plan) = self.vector_plan(vars, extents, body) else {
            return Ok(None);
        };
        let VectorPlan {
            lines,
            temps,
            scalar_reads,
            tile_reads,
            writes,
            cols,
        } = plan;
        let temp_names: Vec<String> = temps
            .iter()
            .enumerate()
            .map(|(i, &d)| self.scratch(&format!("vt{i}"), d, cols))
            .collect();
        let sr = self.tracked(&scalar_reads);
        if !sr.is_empty() {
            self.sync(Pipe::S, &sr, &[]);
        }
        let tr = self.tracked(&tile_reads);
        let mut w = self.tracked(&writes);
        w.extend(temp_names.iter().cloned());
        self.sync(Pipe::V, &tr, &w);
        self.line(format!(
            "// T.Parallel at {}..{}: vector unit, one row of {cols} at a time",
            span.start, span.end
        ));
        let outer = &vars[..vars.len() - 1];
        let mut opened = 0;
        for (&v, &e) in outer.iter().zip(extents) {
            let ext = self.f.as_const_int(e).unwrap_or(0);
            let ty = ctype(self.f.vars[v].dtype).unwrap_or("int64_t");
            let name = ident(&self.f.vars[v].name);
            self.line(format!(
                "for ({ty} {name} = 0; {name} < {ext}; ++{name}) {{"
            ));
            self.indent += 1;
            opened += 1;
        }
        for l in lines {
            let mut l = l;
            for (i, n) in temp_names.iter().enumerate() {
                l = l.replace(&format!("@T{i}@"), n);
            }
            self.line(l);
        }
        for _ in 0..opened {
            self.indent -= 1;
            self.line("}");
        }
        Ok(Some(()))
    }

    /// The vector form of a `T.Parallel` nest, if it has one: every
    /// statement stores into a UB buffer at exactly the nest's indices, and
    /// each value is arithmetic the vector unit has on rows of the
    /// innermost index (other operands constant along the row).
    fn vector_plan(
        &self,
        vars: &[Handle<Var>],
        extents: &[Handle<Expr>],
        body: &Block,
    ) -> Option<VectorPlan> {
        let ext: Vec<i64> = extents
            .iter()
            .map(|&e| self.f.as_const_int(e))
            .collect::<Option<_>>()?;
        let (&j, _) = vars.split_last()?;
        let cols = *ext.last()?;
        let mut cx = VecCx {
            k: self,
            vars,
            j,
            cols,
            lines: Vec::new(),
            temps: Vec::new(),
            live: 0,
            scalar_reads: BTreeSet::new(),
            tile_reads: BTreeSet::new(),
        };
        let mut writes = BTreeSet::new();
        for (stmt, _) in body.iter() {
            let Stmt::Store {
                buffer,
                indices,
                value,
            } = stmt
            else {
                return None;
            };
            let p = self.placed(*buffer)?;
            if p.place != Place::Ub || p.shape != ext || !cx.exact(indices) {
                return None;
            }
            // A buffer stored earlier may be read again only at the same
            // element.
            let mut loads = BTreeSet::new();
            loads_of(self.f, *value, &mut loads);
            let dst = format!(
                "{}[{}]",
                self.name(*buffer),
                cx.row_offset(*buffer, indices)
            );
            let root = cx.value(*value, Some(&dst))?;
            match root {
                VecVal::Tile { code, dtype, .. } if code != dst => {
                    let ty = ctype(dtype)?;
                    cx.lines
                        .push(format!("Muls({dst}, {code}, {ty}(1), {cols});"));
                }
                VecVal::Tile { .. } => {}
                VecVal::Scalar { code, dtype } => {
                    let ty = ctype(dtype)?;
                    cx.lines
                        .push(format!("Duplicate({dst}, {ty}({code}), {cols});"));
                }
            }
            if self.f.buffers[*buffer].dtype != vec_dtype(self.f.ty(*value))? {
                return None;
            }
            writes.insert(*buffer);
            cx.live = 0;
        }
        if cx.scalar_reads.iter().any(|b| writes.contains(b)) {
            return None;
        }
        // A stored buffer read as a tile must be read at the stored element.
        for (stmt, _) in body.iter() {
            if let Stmt::Store { value, .. } = stmt
                && !cx.reads_exact(*value, &writes)
            {
                return None;
            }
        }
        Some(VectorPlan {
            lines: cx.lines,
            temps: cx.temps,
            scalar_reads: cx.scalar_reads,
            tile_reads: cx.tile_reads,
            writes,
            cols,
        })
    }

    // -----------------------------------------------------------------
    // Assembly.

    fn finish(
        &mut self,
        grid: &[Handle<Expr>],
        block_vars: &[Handle<Var>],
        info: &EntryInfo,
        out: &mut String,
    ) -> Result<(), Refusal> {
        let f = self.f;
        let entry = self.entry.clone();
        // Scratch UB on top of the placed buffers.
        let ub_used: u64 = self
            .placed
            .values()
            .filter(|p| p.place == Place::Ub)
            .map(|p| p.bytes.div_ceil(32) * 32)
            .sum::<u64>()
            + self
                .scratch
                .values()
                .map(|(d, n)| (u64::try_from(*n).unwrap_or(0) * d.bytes()).div_ceil(32) * 32)
                .sum::<u64>();
        if ub_used > self.engine.ub.capacity {
            return Err(Refusal::unsupported(
                self.span,
                format!(
                    "kernel `{entry}` needs {ub_used} bytes of UB with its scratch buffers; the target has {}",
                    self.engine.ub.capacity
                ),
            ));
        }
        let _ = writeln!(out, "{}", entry_line(info));
        let _ = writeln!(out, "struct {entry}_Tiling {{");
        let _ = writeln!(out, "    int64_t grid[3];  // blocks along x, y, z");
        for &s in &f.symbols {
            let _ = writeln!(out, "    int64_t {};", ident(&f.vars[s].name));
        }
        let _ = writeln!(out, "}};\n");
        let workspace = self.workspace_bytes > 0;
        if workspace {
            let _ = writeln!(
                out,
                "// GM workspace of one AI core (staged gemm operands and products); the host allocates block_dim times this."
            );
            let _ = writeln!(
                out,
                "constexpr uint64_t {entry}_WORKSPACE_BYTES = {};\n",
                self.workspace_bytes
            );
        }
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("GM_ADDR {}", ident(&f.buffers[p.buffer].name)))
            .chain(workspace.then(|| "GM_ADDR workspace".to_string()))
            .chain(std::iter::once("GM_ADDR tiling".to_string()))
            .collect();
        let _ = writeln!(
            out,
            "extern \"C\" __global__ __aicore__ void {entry}({})\n{{",
            params.join(", ")
        );
        if self.mix {
            let _ = writeln!(
                out,
                "    // One AIC and two AIVs per AI core; GetBlockIdx counts the AIVs twice."
            );
            let _ = writeln!(
                out,
                "    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);"
            );
            let _ = writeln!(
                out,
                "    const int64_t tl_core = GetBlockIdx() / GetTaskRatio();"
            );
            let _ = writeln!(
                out,
                "    const bool tl_aiv_worker = GetBlockIdx() % GetTaskRatio() == 0;"
            );
        }
        let _ = writeln!(
            out,
            "    const __gm__ {entry}_Tiling* td = reinterpret_cast<const __gm__ {entry}_Tiling*>(tiling);"
        );
        for &s in &f.symbols {
            let v = &f.vars[s];
            let ty = ctype(v.dtype).unwrap_or("int64_t");
            let n = ident(&v.name);
            let _ = writeln!(out, "    const {ty} {n} = {ty}(td->{n});");
        }
        let _ = writeln!(out, "    // Global memory.");
        for p in &f.params {
            let b = &f.buffers[p.buffer];
            let ty = ctype(b.dtype).unwrap_or("uint8_t");
            let mut size = String::from("int64_t(1)");
            for &e in &b.shape {
                let s = expr::expr(f, e, self).map_err(|m| Refusal::unsupported(self.span, m))?;
                size = format!("{size} * int64_t({s})");
            }
            let n = ident(&b.name);
            let _ = writeln!(out, "    GlobalTensor<{ty}> {n}_gm;");
            let _ = writeln!(
                out,
                "    TILEC_SET_GLOBAL({n}_gm, reinterpret_cast<__gm__ {ty}*>({n}), uint64_t({size}), \"{}\");",
                b.name
            );
        }
        if workspace {
            let core = if self.mix { "tl_core" } else { "GetBlockIdx()" };
            let _ = writeln!(
                out,
                "    // This core's region of the GM workspace: rows at the UB pitch."
            );
            for w in &self.workspace {
                let ty = ctype(w.dtype).unwrap_or("uint8_t");
                let _ = writeln!(out, "    GlobalTensor<{ty}> {};", w.name);
                let _ = writeln!(
                    out,
                    "    TILEC_SET_GLOBAL({0}, reinterpret_cast<__gm__ {ty}*>(workspace + {core} * {entry}_WORKSPACE_BYTES + {1}), uint64_t({2}), \"{0}\");",
                    w.name, w.offset, w.elements
                );
            }
        }
        let _ = writeln!(
            out,
            "    // On-chip buffers, placed by the target description's capacities."
        );
        let _ = writeln!(out, "    TPipe pipe;");
        let mix = self.mix;
        // In a mixed kernel each core sets up the buffers it has.
        let decl = |out: &mut String, name: &str, pos: &str, ty: &str, bytes: u64, what: &str| {
            let _ = writeln!(out, "    TBuf<TPosition::{pos}> {name}_buf;  // {what}");
            if mix {
                let guard = if matches!(pos, "VECCALC" | "VECIN" | "VECOUT") {
                    "TILEC_AIV"
                } else {
                    "TILEC_AIC"
                };
                let _ = writeln!(out, "    LocalTensor<{ty}> {name};");
                let _ = writeln!(
                    out,
                    "    {guard} {{ TILEC_INIT_BUFFER(pipe, {name}_buf, {bytes}, \"{name}\"); {name} = {name}_buf.Get<{ty}>(); }}"
                );
            } else {
                let _ = writeln!(
                    out,
                    "    TILEC_INIT_BUFFER(pipe, {name}_buf, {bytes}, \"{name}\");"
                );
                let _ = writeln!(
                    out,
                    "    LocalTensor<{ty}> {name} = {name}_buf.Get<{ty}>();"
                );
            }
        };
        let mut fresh = Vec::new();
        for (&i, p) in &self.placed {
            let h = f
                .buffers
                .iter()
                .nth(i)
                .map(|(h, _)| h)
                .unwrap_or_else(unreachable_handle);
            let b = &f.buffers[h];
            let ty = ctype(b.dtype).unwrap_or("uint8_t");
            let name = self.name(h);
            let shape = p
                .shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" x ");
            match p.place {
                Place::Ub => decl(
                    out,
                    &name,
                    "VECCALC",
                    ty,
                    p.bytes,
                    &format!("UB, {shape}, rows of {}", p.pitch),
                ),
                Place::L1A | Place::L1B if self.double.contains(&i) => {
                    let pos = if p.place == Place::L1A { "A1" } else { "B1" };
                    for slot in ["ping", "pong"] {
                        decl(
                            out,
                            &format!("{name}_{slot}"),
                            pos,
                            ty,
                            p.bytes,
                            &format!("L1, {shape}, NZ, {slot} slot"),
                        );
                    }
                }
                Place::L1A => decl(out, &name, "A1", ty, p.bytes, &format!("L1, {shape}, NZ")),
                Place::L1B => decl(out, &name, "B1", ty, p.bytes, &format!("L1, {shape}, NZ")),
                Place::L0c => {
                    decl(out, &name, "CO1", ty, p.bytes, &format!("L0C, {shape}, NZ"));
                    fresh.push(name.clone());
                }
                _ => {}
            }
            match p.stage {
                Some(Stage::Operand(l1)) => {
                    let rows = round_up(p.shape[0], 16);
                    let cols = round_up(p.shape[1], c0(b.dtype).max(16));
                    let bytes = u64::try_from(rows * cols).unwrap_or(0) * b.dtype.bytes();
                    decl(
                        out,
                        &format!("{name}_l1"),
                        if l1 == Place::L1A { "A1" } else { "B1" },
                        ty,
                        bytes,
                        &format!("L1, {shape}, NZ: {name} staged for the cube"),
                    );
                }
                Some(Stage::Accumulator) => {
                    let rows = round_up(p.shape[0], 16);
                    let cols = round_up(p.shape[1], 16);
                    let bytes = u64::try_from(rows * cols).unwrap_or(0) * b.dtype.bytes();
                    decl(
                        out,
                        &format!("{name}_l0c"),
                        "CO1",
                        ty,
                        bytes,
                        &format!("L0C, {shape}, NZ: the cube's products for {name}"),
                    );
                }
                None => {}
            }
        }
        for (name, (dt, n)) in &self.scratch {
            let ty = ctype(*dt).unwrap_or("float");
            let bytes = (u64::try_from(*n).unwrap_or(0) * dt.bytes()).div_ceil(32) * 32;
            decl(out, name, "VECCALC", ty, bytes, "UB scratch");
        }
        if self.l0a > 0 {
            let ty = self.cube_type();
            decl(out, "tl_l0a", "A2", ty, self.l0a, "L0A, cube A operand, Zz");
            decl(out, "tl_l0b", "B2", ty, self.l0b, "L0B, cube B operand, nZ");
        }
        let _ = writeln!(out, "    // Blocks of the grid, spread over the AI cores.");
        let g: Vec<String> = (0..3).map(|i| format!("td->grid[{i}]")).collect();
        let _ = writeln!(
            out,
            "    const int64_t blocks = {} * {} * {};",
            g[0], g[1], g[2]
        );
        let _ = writeln!(
            out,
            "    for (int64_t block = {}; block < blocks; block += GetBlockNum()) {{",
            if self.mix { "tl_core" } else { "GetBlockIdx()" }
        );
        for (i, &v) in block_vars.iter().enumerate() {
            let ty = ctype(f.vars[v].dtype).unwrap_or("int32_t");
            let n = ident(&f.vars[v].name);
            let div = (0..i).map(|j| format!(" / {}", g[j])).collect::<String>();
            let _ = writeln!(out, "        const {ty} {n} = {ty}(block{div} % {});", g[i]);
        }
        let _ = grid;
        for name in &fresh {
            let _ = writeln!(out, "        bool {name}_fresh = true;");
        }
        out.push_str(&self.body);
        let _ = writeln!(out, "    }}");
        let _ = writeln!(out, "}}\n");
        // Host side.
        let args: Vec<String> = f
            .params
            .iter()
            .map(|p| ident(&f.buffers[p.buffer].name))
            .chain(workspace.then(|| "workspace".to_string()))
            .collect();
        let _ = writeln!(out, "#ifndef ASCENDC_CPU_MODEL");
        let _ = writeln!(
            out,
            "// Host launch: `tiling` holds a {entry}_Tiling in device memory; block_dim = min(blocks, AI cores).{}",
            if workspace {
                format!(
                    "\n// `workspace`: block_dim * {entry}_WORKSPACE_BYTES bytes of device memory."
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "void {entry}_do(uint32_t block_dim, void* stream, {}, uint8_t* tiling)\n{{",
            args.iter()
                .map(|a| format!("uint8_t* {a}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            out,
            "    {entry}<<<block_dim, nullptr, stream>>>({}, tiling);\n}}",
            args.join(", ")
        );
        let _ = writeln!(out, "#else");
        let _ = writeln!(
            out,
            "extern \"C\" int {entry}_cpu(uint32_t block_dim, uint8_t** args, uint8_t* tiling, char* error, uint64_t error_len)\n{{"
        );
        let call: Vec<String> = (0..args.len()).map(|i| format!("args[{i}]")).collect();
        let _ = writeln!(
            out,
            "    return AscendC::cpu::launch(block_dim, error, error_len, [&] {{ {entry}({}tiling); }});\n}}",
            call.iter().map(|c| format!("{c}, ")).collect::<String>()
        );
        let _ = writeln!(out, "#endif\n");
        Ok(())
    }

    fn cube_type(&self) -> &'static str {
        self.placed
            .iter()
            .find(|(_, p)| {
                matches!(p.place, Place::L1A | Place::L1B)
                    || matches!(p.stage, Some(Stage::Operand(_)))
            })
            .and_then(|(&i, _)| self.f.buffers.iter().nth(i).map(|(_, b)| b.dtype))
            .and_then(ctype)
            .unwrap_or("half")
    }
}

struct VectorPlan {
    /// Row body; `@T<i>@` stands for temporary `i`.
    lines: Vec<String>,
    temps: Vec<DType>,
    scalar_reads: BTreeSet<Handle<Buffer>>,
    tile_reads: BTreeSet<Handle<Buffer>>,
    writes: BTreeSet<Handle<Buffer>>,
    cols: i64,
}

/// A value of the vector form: a row in UB, or a scalar constant along it.
enum VecVal {
    Tile {
        code: String,
        dtype: DType,
        temp: Option<usize>,
    },
    Scalar {
        code: String,
        dtype: DType,
    },
}

/// The element types the vector unit computes in (bfloat16 only converts).
fn vec_dtype(d: DType) -> Option<DType> {
    matches!(d, DType::F16 | DType::F32 | DType::BF16).then_some(d)
}

struct VecCx<'k, 'a> {
    k: &'k Kernel<'a>,
    vars: &'k [Handle<Var>],
    j: Handle<Var>,
    cols: i64,
    lines: Vec<String>,
    temps: Vec<DType>,
    live: usize,
    scalar_reads: BTreeSet<Handle<Buffer>>,
    tile_reads: BTreeSet<Handle<Buffer>>,
}

impl VecCx<'_, '_> {
    fn var_of(&self, e: Handle<Expr>) -> Option<Handle<Var>> {
        match self.k.f.exprs[e] {
            Expr::Var(v) => Some(v),
            _ => None,
        }
    }

    /// Indices that are exactly the nest's variables, in order.
    fn exact(&self, indices: &[Handle<Expr>]) -> bool {
        indices.len() == self.vars.len()
            && indices
                .iter()
                .zip(self.vars)
                .all(|(&i, &v)| self.var_of(i) == Some(v))
    }

    /// Indices that are nest variables in increasing order, ending with
    /// the innermost one: the row is contiguous.
    fn row_indices(&self, indices: &[Handle<Expr>]) -> bool {
        let mut last = None;
        for &i in indices {
            let Some(v) = self.var_of(i) else {
                return false;
            };
            let Some(pos) = self.vars.iter().position(|&x| x == v) else {
                return false;
            };
            if last.is_some_and(|l| pos <= l) {
                return false;
            }
            last = Some(pos);
        }
        indices.last().and_then(|&i| self.var_of(i)) == Some(self.j)
    }

    fn row_offset(&self, b: Handle<Buffer>, indices: &[Handle<Expr>]) -> String {
        let idx: Vec<String> = indices
            .iter()
            .map(|&i| match self.var_of(i) {
                Some(v) if v == self.j => "0".to_string(),
                Some(v) => ident(&self.k.f.vars[v].name),
                None => "0".to_string(),
            })
            .collect();
        self.k.ub_index(b, &idx)
    }

    fn uses_j(&self, e: Handle<Expr>) -> bool {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let Expr::Var(v) = self.k.f.exprs[e]
                && v == self.j
            {
                return true;
            }
            stack.extend(self.k.f.exprs[e].operands());
        }
        false
    }

    fn reads_exact(&self, e: Handle<Expr>, written: &BTreeSet<Handle<Buffer>>) -> bool {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            if let Expr::Load { buffer, indices } = &self.k.f.exprs[e]
                && written.contains(buffer)
                && !self.exact(indices)
            {
                return false;
            }
            stack.extend(self.k.f.exprs[e].operands());
        }
        true
    }

    fn temp(&mut self, d: DType) -> usize {
        let i = self.live;
        self.live += 1;
        if self.temps.len() <= i {
            self.temps.push(d);
        } else if self.temps[i] != d {
            // Temporaries are typed: a slot of another type gets a new one.
            self.temps.push(d);
            return self.temps.len() - 1;
        }
        i
    }

    /// Where the result of an operation goes: the destination row for the
    /// root, else the first operand's temporary, else a new one.
    fn out(
        &mut self,
        dest: Option<&str>,
        reuse: Option<usize>,
        d: DType,
    ) -> (String, Option<usize>) {
        if let Some(dest) = dest {
            return (dest.to_string(), None);
        }
        if let Some(t) = reuse
            && self.temps[t] == d
        {
            return (format!("@T{t}@"), Some(t));
        }
        let t = self.temp(d);
        (format!("@T{t}@"), Some(t))
    }

    fn value(&mut self, e: Handle<Expr>, dest: Option<&str>) -> Option<VecVal> {
        let f = self.k.f;
        let d = f.ty(e);
        if !self.uses_j(e) {
            let mut loads = BTreeSet::new();
            loads_of(f, e, &mut loads);
            if loads
                .iter()
                .any(|&b| self.k.place_of(b) != Place::Ub && self.k.place_of(b) != Place::Scalar)
            {
                return None;
            }
            let code = expr::expr(f, e, self.k).ok()?;
            self.scalar_reads.extend(loads);
            return Some(VecVal::Scalar { code, dtype: d });
        }
        let cols = self.cols;
        match &f.exprs[e] {
            Expr::Load { buffer, indices } => {
                if self.k.place_of(*buffer) != Place::Ub || !self.row_indices(indices) {
                    return None;
                }
                self.tile_reads.insert(*buffer);
                let code = format!(
                    "{}[{}]",
                    self.k.name(*buffer),
                    self.row_offset(*buffer, indices)
                );
                Some(VecVal::Tile {
                    code,
                    dtype: d,
                    temp: None,
                })
            }
            Expr::Cast { dtype, arg } => {
                let to = vec_dtype(*dtype)?;
                let a = self.value(*arg, None)?;
                let VecVal::Tile {
                    code,
                    dtype: from,
                    temp,
                } = a
                else {
                    return None;
                };
                vec_dtype(from)?;
                if from == to {
                    return Some(VecVal::Tile {
                        code,
                        dtype: to,
                        temp,
                    });
                }
                let (o, t) = self.out(dest, None, to);
                self.lines.push(format!(
                    "Cast({o}, {code}, RoundMode::{}, {cols});",
                    cast_mode(from, to)
                ));
                Some(VecVal::Tile {
                    code: o,
                    dtype: to,
                    temp: t,
                })
            }
            Expr::Unary { op, arg } => {
                if !matches!(d, DType::F16 | DType::F32) {
                    return None;
                }
                let name = match op {
                    tilec_core::ir::UnaryOp::Exp => "Exp",
                    tilec_core::ir::UnaryOp::Log => "Ln",
                    tilec_core::ir::UnaryOp::Sqrt => "Sqrt",
                    tilec_core::ir::UnaryOp::Abs => "Abs",
                    tilec_core::ir::UnaryOp::Rsqrt => "Rsqrt",
                    tilec_core::ir::UnaryOp::Neg => "Neg",
                    _ => return None,
                };
                let VecVal::Tile { code, temp, .. } = self.value(*arg, None)? else {
                    return None;
                };
                let (o, t) = self.out(dest, temp, d);
                let ty = ctype(d)?;
                if name == "Neg" {
                    self.lines
                        .push(format!("Muls({o}, {code}, {ty}(-1), {cols});"));
                } else {
                    self.lines.push(format!("{name}({o}, {code}, {cols});"));
                }
                Some(VecVal::Tile {
                    code: o,
                    dtype: d,
                    temp: t,
                })
            }
            Expr::Binary { op, lhs, rhs } => {
                if !matches!(d, DType::F16 | DType::F32) {
                    return None;
                }
                let ty = ctype(d)?;
                let a = self.value(*lhs, None)?;
                let b = self.value(*rhs, None)?;
                use tilec_core::ir::BinaryOp as B;
                let tt = match op {
                    B::Add => "Add",
                    B::Sub => "Sub",
                    B::Mul => "Mul",
                    B::Div => "Div",
                    B::Max => "Max",
                    B::Min => "Min",
                    _ => return None,
                };
                match (a, b) {
                    (
                        VecVal::Tile {
                            code: x, temp: tx, ..
                        },
                        VecVal::Tile {
                            code: y, temp: ty_, ..
                        },
                    ) => {
                        let (o, t) = self.out(dest, tx.or(ty_), d);
                        self.lines.push(format!("{tt}({o}, {x}, {y}, {cols});"));
                        Some(VecVal::Tile {
                            code: o,
                            dtype: d,
                            temp: t,
                        })
                    }
                    (
                        VecVal::Tile {
                            code: x, temp: tx, ..
                        },
                        VecVal::Scalar { code: s, .. },
                    ) => {
                        let (o, t) = self.out(dest, tx, d);
                        let line = match op {
                            B::Add => format!("Adds({o}, {x}, {ty}({s}), {cols});"),
                            B::Sub => format!("Adds({o}, {x}, {ty}(-float({s})), {cols});"),
                            B::Mul => format!("Muls({o}, {x}, {ty}({s}), {cols});"),
                            B::Max => format!("Maxs({o}, {x}, {ty}({s}), {cols});"),
                            B::Min => format!("Mins({o}, {x}, {ty}({s}), {cols});"),
                            _ => {
                                // Division by a scalar: exact only as a division.
                                let st = self.temp(d);
                                let sn = format!("@T{st}@");
                                self.lines
                                    .push(format!("Duplicate({sn}, {ty}({s}), {cols});"));
                                format!("Div({o}, {x}, {sn}, {cols});")
                            }
                        };
                        self.lines.push(line);
                        Some(VecVal::Tile {
                            code: o,
                            dtype: d,
                            temp: t,
                        })
                    }
                    (
                        VecVal::Scalar { code: s, .. },
                        VecVal::Tile {
                            code: y, temp: ty2, ..
                        },
                    ) => {
                        let (o, t) = self.out(dest, ty2, d);
                        match op {
                            B::Add => self
                                .lines
                                .push(format!("Adds({o}, {y}, {ty}({s}), {cols});")),
                            B::Mul => self
                                .lines
                                .push(format!("Muls({o}, {y}, {ty}({s}), {cols});")),
                            B::Max => self
                                .lines
                                .push(format!("Maxs({o}, {y}, {ty}({s}), {cols});")),
                            B::Min => self
                                .lines
                                .push(format!("Mins({o}, {y}, {ty}({s}), {cols});")),
                            B::Sub => {
                                self.lines
                                    .push(format!("Muls({o}, {y}, {ty}(-1), {cols});"));
                                self.lines
                                    .push(format!("Adds({o}, {o}, {ty}({s}), {cols});"));
                            }
                            _ => {
                                let st = self.temp(d);
                                let sn = format!("@T{st}@");
                                self.lines
                                    .push(format!("Duplicate({sn}, {ty}({s}), {cols});"));
                                self.lines.push(format!("Div({o}, {sn}, {y}, {cols});"));
                            }
                        }
                        Some(VecVal::Tile {
                            code: o,
                            dtype: d,
                            temp: t,
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The shape of one `T.gemm`, as its cube part needs it.
struct GemmShape {
    m: i64,
    n: i64,
    k: i64,
    ta: bool,
    tb: bool,
    /// Stored rows of A and B (K for a transposed A, for a plain B).
    a_rows: i64,
    b_rows: i64,
}

/// A copy's shape without unit dimensions, and the source and destination
/// dimension each entry maps to.
type CopyDims = (Vec<i64>, Vec<usize>, Vec<usize>);

/// The valid box of a GM region: per dimension the start, `lo` and `hi`
/// (C++ names), then the "any element" and "whole region" conditions.
type GmBox = (Vec<String>, Vec<String>, Vec<String>, String, String);

fn unreachable_placed() -> Placed {
    Placed {
        place: Place::Ub,
        stage: None,
        shape: vec![1],
        pitch: 1,
        bytes: 0,
    }
}

fn unreachable_handle() -> Handle<Buffer> {
    Handle::from_index(0)
}

fn cast_mode(from: DType, to: DType) -> &'static str {
    use tilec_core::ir::DTypeKind::Float;
    match (from.kind() == Float, to.kind() == Float) {
        (true, false) => "CAST_TRUNC",
        (true, true) if to.bytes() < from.bytes() => "CAST_RINT",
        _ => "CAST_NONE",
    }
}

/// A UB tensor region as the copy engines see it.
#[derive(Clone, Debug)]
pub(super) struct UbView {
    pub name: String,
    pub dtype: DType,
    /// Elements between indices of each dimension.
    pub strides: Vec<i64>,
    pub starts: Vec<String>,
}

impl UbView {
    fn offset(&self) -> String {
        let terms: Vec<String> = self
            .starts
            .iter()
            .zip(&self.strides)
            .filter(|(s, _)| s.as_str() != "int64_t(0)")
            .map(|(s, st)| format!("{s} * {st}"))
            .collect();
        if terms.is_empty() {
            "0".into()
        } else {
            terms.join(" + ")
        }
    }
}

/// The bodies of `T.Pipelined` loops in `block`, nested ones included.
fn pipelined_loops<'b>(block: &'b Block, out: &mut Vec<&'b Block>) {
    for (stmt, _) in block.iter() {
        match stmt {
            Stmt::For {
                kind: LoopKind::Pipelined { num_stages, .. },
                body,
                ..
            } => {
                if *num_stages >= 2 {
                    out.push(body);
                }
                pipelined_loops(body, out);
            }
            Stmt::For { body, .. } | Stmt::Kernel { body, .. } | Stmt::Parallel { body, .. } => {
                pipelined_loops(body, out)
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                pipelined_loops(then, out);
                pipelined_loops(otherwise, out);
            }
            _ => {}
        }
    }
}

/// How many copy and gemm statements of `block` name buffer `b`.
fn tile_refs(block: &Block, b: Handle<Buffer>) -> usize {
    block
        .iter()
        .map(|(stmt, _)| match stmt {
            Stmt::Copy { src, dst } => usize::from(src.buffer == b) + usize::from(dst.buffer == b),
            Stmt::Gemm { a, b: bb, c, .. } => {
                usize::from(a.buffer == b)
                    + usize::from(bb.buffer == b)
                    + usize::from(c.buffer == b)
            }
            Stmt::Fill { dst, .. } => usize::from(dst.buffer == b),
            Stmt::For { body, .. } | Stmt::Kernel { body, .. } | Stmt::Parallel { body, .. } => {
                tile_refs(body, b)
            }
            Stmt::If {
                then, otherwise, ..
            } => tile_refs(then, b) + tile_refs(otherwise, b),
            _ => 0,
        })
        .sum()
}

/// Whether a block has element-wise work for the vector or scalar unit on
/// global memory or on-chip buffers (which then live in UB).
fn has_element_code(f: &Function, block: &Block) -> bool {
    let global = |b: Handle<Buffer>| f.buffers[b].scope == tilec_core::ir::Scope::Global;
    block.iter().any(|(s, _)| match s {
        Stmt::Store { .. }
        | Stmt::Parallel { .. }
        | Stmt::Reduce { .. }
        | Stmt::Cumsum { .. }
        | Stmt::AtomicAdd { .. }
        | Stmt::Atomic { .. } => true,
        Stmt::Copy { src, dst } => global(src.buffer) && global(dst.buffer),
        Stmt::Fill { dst, .. } => global(dst.buffer),
        Stmt::For { body, .. } | Stmt::Kernel { body, .. } => has_element_code(f, body),
        Stmt::If {
            then, otherwise, ..
        } => has_element_code(f, then) || has_element_code(f, otherwise),
        _ => false,
    })
}

/// Whether a block contains statements that run on pipes other than the
/// scalar unit's.
fn has_tile_ops(block: &Block) -> bool {
    block.iter().any(|(s, _)| match s {
        Stmt::Copy { .. }
        | Stmt::Gemm { .. }
        | Stmt::Fill { .. }
        | Stmt::Reduce { .. }
        | Stmt::Cumsum { .. }
        | Stmt::AtomicAdd { .. }
        | Stmt::Atomic { .. }
        | Stmt::Parallel { .. } => true,
        Stmt::For { body, .. } | Stmt::Kernel { body, .. } => has_tile_ops(body),
        Stmt::If {
            then, otherwise, ..
        } => has_tile_ops(then) || has_tile_ops(otherwise),
        _ => false,
    })
}

/// Buffers an expression loads from.
pub(super) fn loads_of(f: &Function, e: Handle<Expr>, out: &mut BTreeSet<Handle<Buffer>>) {
    let mut stack = vec![e];
    let mut seen = BTreeSet::new();
    while let Some(e) = stack.pop() {
        if !seen.insert(e.index()) {
            continue;
        }
        if let Expr::Load { buffer, .. } = &f.exprs[e] {
            out.insert(*buffer);
        }
        stack.extend(f.exprs[e].operands());
    }
}

/// Buffers a block reads and writes (element accesses and tile ops).
fn block_access(
    f: &Function,
    block: &Block,
    reads: &mut BTreeSet<Handle<Buffer>>,
    writes: &mut BTreeSet<Handle<Buffer>>,
) {
    for (stmt, _) in block.iter() {
        match stmt {
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                writes.insert(*buffer);
                for &i in indices {
                    loads_of(f, i, reads);
                }
                loads_of(f, *value, reads);
            }
            Stmt::Let { value, .. } => loads_of(f, *value, reads),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                loads_of(f, *cond, reads);
                block_access(f, then, reads, writes);
                block_access(f, otherwise, reads, writes);
            }
            Stmt::For {
                start,
                extent,
                body,
                ..
            } => {
                loads_of(f, *start, reads);
                loads_of(f, *extent, reads);
                block_access(f, body, reads, writes);
            }
            Stmt::Parallel { extents, body, .. } => {
                for &e in extents {
                    loads_of(f, e, reads);
                }
                block_access(f, body, reads, writes);
            }
            _ => {}
        }
    }
}
