//! Matrix atoms as `mma.sync`.
//!
//! A thread-IR `mma` names an atom of the target description; its
//! operands are local arrays whose slot `s` (from the operand's offset) of
//! lane `t` holds tile element `fragment(t, s)`. PTX fixes where each
//! operand register's elements come from ("Matrix Fragments for
//! mma.m16n8k16 with floating point type", PTX ISA), with `g = lane >> 2`
//! and `t = lane & 3`:
//!
//! | operand | PTX element `i` | (row, column) |
//! | --- | --- | --- |
//! | A 16×16 `f16`/`bf16`, `a0..a7` in 4 `.b32` | `a_i` | (`g + 8·((i>>1)&1)`, `2t + (i&1) + 8·(i>>2)`) |
//! | B 16×8, `b0..b3` in 2 `.b32` | `b_i` | (`2t + (i&1) + 8·(i>>1)`, `g`) |
//! | C, D 16×8 `f32`, `c0..c3` | `c_i` | (`g + 8·(i>>1)`, `2t + (i&1)`) |
//!
//! and two 16-bit elements share a register with the lower-numbered one
//! in bits 15:0. The emitter passes slot `i` as PTX element `i` and
//! checks, for every lane and slot, that the description's fragment maps
//! it to the element PTX puts there; a description that disagrees (or an
//! atom PTX has no `mma.sync` for, such as warpgroup `wgmma` with
//! shared-memory descriptors) is refused rather than emitted.

use tilec_core::ir::{BinaryOp, DType};
use tilec_core::target::{IssueGranularity, MatrixAtom, OperandRole, OperandSource};
use tilec_core::thread::{AsyncA, Expr, ExprKind, FragRef, Major, MemRef, SharedId, SharedMatrix};

use super::PtxError;
use super::kernel::Emitter;
use super::value::{Class, Val, class_of};

type Result<T> = std::result::Result<T, PtxError>;

/// An `mma.sync` the emitter knows: the shape, the PTX type suffixes and
/// PTX's element placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MmaForm {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// A, B and accumulator element types.
    pub a: DType,
    pub b: DType,
    pub acc: DType,
}

impl MmaForm {
    /// The forms supported: m16n8k16 with `f16` or `bf16` inputs and an
    /// `f32` accumulator.
    pub fn find(m: u32, n: u32, k: u32, a: DType, b: DType, acc: DType) -> Option<MmaForm> {
        let ok = (m, n, k) == (16, 8, 16)
            && a == b
            && matches!(a, DType::F16 | DType::BF16)
            && acc == DType::F32;
        ok.then_some(MmaForm { m, n, k, a, b, acc })
    }

    /// The instruction.
    pub fn instruction(&self) -> String {
        let t = |d: DType| d.short_name();
        format!(
            "mma.sync.aligned.m{}n{}k{}.row.col.{}.{}.{}.{}",
            self.m,
            self.n,
            self.k,
            t(self.acc),
            t(self.a),
            t(self.b),
            t(self.acc)
        )
    }

    /// Slots per lane of an operand.
    pub fn slots(&self, role: OperandRole) -> u32 {
        match role {
            OperandRole::A => 8,
            OperandRole::B => 4,
            OperandRole::Accumulator => 4,
        }
    }

    /// `(row, column)` of PTX element `i` of lane `lane` (PTX ISA).
    pub fn element(&self, role: OperandRole, lane: u32, i: u32) -> (u32, u32) {
        let (g, t) = (lane >> 2, lane & 3);
        match role {
            OperandRole::A => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
            OperandRole::B => (2 * t + (i & 1) + 8 * (i >> 1), g),
            OperandRole::Accumulator => (g + 8 * (i >> 1), 2 * t + (i & 1)),
        }
    }

    /// Rows of an operand's tile (A: m, B: k, accumulator: m).
    pub fn rows(&self, role: OperandRole) -> u32 {
        match role {
            OperandRole::B => self.k,
            _ => self.m,
        }
    }
}

/// The first (lane, slot) where the description's fragment of `role`
/// differs from PTX's placement, as a sentence; `None` when they agree.
pub(crate) fn fragment_mismatch(
    atom: &MatrixAtom,
    form: &MmaForm,
    role: OperandRole,
) -> Option<String> {
    let fragment = match atom.fragment(role) {
        Ok(Some(f)) => f,
        Ok(None) => return Some(format!("operand {} has no register fragment", role.name())),
        Err(e) => return Some(format!("operand {}: {e}", role.name())),
    };
    let slots = form.slots(role);
    if fragment.threads() != 32 || fragment.slots() != u64::from(slots) {
        return Some(format!(
            "operand {} has {} lanes × {} slots, PTX has 32 × {slots}",
            role.name(),
            fragment.threads(),
            fragment.slots()
        ));
    }
    let rows = form.rows(role);
    for lane in 0..32u32 {
        for slot in 0..slots {
            let (r, c) = form.element(role, lane, slot);
            let want = i64::from(r + rows * c);
            match fragment.element_index(u64::from(lane), u64::from(slot)) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    let got = got.max(0) as u32;
                    return Some(format!(
                        "operand {}: lane {lane} slot {slot} holds ({}, {}) in the description, PTX puts ({r}, {c}) there",
                        role.name(),
                        got % rows,
                        got / rows
                    ));
                }
                Err(e) => return Some(format!("operand {}: {e}", role.name())),
            }
        }
    }
    None
}

impl Emitter<'_> {
    pub fn mma(&mut self, name: &str, n: Option<u32>, frags: [FragRef; 4]) -> Result<()> {
        let atom = self
            .desc
            .matrix_atom(name)
            .ok_or_else(|| self.unsupported(format!("the target has no matrix atom `{name}`")))?
            .clone();
        if atom.issue.granularity != IssueGranularity::Warp
            || atom.issue.threads != self.target.warp
        {
            return Err(self.unsupported(format!(
                "atom `{name}` ({}) is issued by {} threads, not a warp: warpgroup MMAs with shared-memory descriptors are not supported by the PTX emitter",
                atom.instruction, atom.issue.threads
            )));
        }
        for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
            if !atom
                .operand(role)
                .sources
                .contains(&OperandSource::Registers)
            {
                return Err(self.unsupported(format!(
                    "atom `{name}`: operand {} is not read from registers",
                    role.name()
                )));
            }
        }
        let shape = atom.shape;
        if n.is_some_and(|n| n != shape.n) {
            return Err(self.unsupported(format!("atom `{name}` has no N family on mma.sync")));
        }
        let [fa, fb, fc, fd] = frags;
        let (ta, tb, tc, td) = (
            self.reg_dtype(fa.array)?,
            self.reg_dtype(fb.array)?,
            self.reg_dtype(fc.array)?,
            self.reg_dtype(fd.array)?,
        );
        let form = MmaForm::find(shape.m, shape.n, shape.k, ta, tb, tc)
            .filter(|_| td == tc)
            .ok_or_else(|| {
                self.unsupported(format!(
                    "atom `{name}` with {ta} × {tb} + {tc} → {td}: the PTX emitter knows mma.sync m16n8k16 with f16 or bf16 inputs and f32 accumulators"
                ))
            })?;
        for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
            if let Some(why) = fragment_mismatch(&atom, &form, role) {
                return Err(self.unsupported(format!(
                    "atom `{name}`: the description's fragment layout does not match PTX's: {why}"
                )));
            }
        }
        let a = self.operand_regs(fa, form.slots(OperandRole::A), ta)?;
        let b = self.operand_regs(fb, form.slots(OperandRole::B), tb)?;
        let c = self.operand_regs(fc, form.slots(OperandRole::Accumulator), tc)?;
        let slots = form.slots(OperandRole::Accumulator);
        let offset = Expr::int(fd.offset as i32);
        let places = self.places_at(fd.array, Some(&offset), slots)?;
        let direct: Option<Vec<String>> = places
            .iter()
            .map(|p| match p {
                super::kernel::Place::Reg(r) => Some(r.clone()),
                super::kernel::Place::Local { .. } => None,
            })
            .collect();
        let class = class_of(td);
        let d = match &direct {
            Some(regs) => regs.clone(),
            None => (0..slots).map(|_| self.tmp(class)).collect(),
        };
        self.emit(format!(
            "{} {{{}}}, {{{}}}, {{{}}}, {{{}}}",
            form.instruction(),
            d.join(", "),
            a.join(", "),
            b.join(", "),
            c.join(", ")
        ));
        if direct.is_none() {
            for (p, r) in places.iter().zip(&d) {
                self.write_place(p, &Val::reg(class, r.clone()), None);
            }
        }
        Ok(())
    }

    /// `async_mma` as `wgmma.mma_async` with shared-memory descriptors
    /// (sm_90a). D's slots are PTX's `d0..d(N/2-1)` in order: the
    /// description's accumulator fragment for N must be PTX's (row `16w +
    /// g + 8·((i>>1)&1)`, column `8·(i>>2) + 2t + (i&1)`), which
    /// [`wgmma_fragment_mismatch`] checks.
    pub fn async_mma(
        &mut self,
        name: &str,
        n: u32,
        d: FragRef,
        (a, b): (&AsyncA, &SharedMatrix),
        accumulate: &Expr,
    ) -> Result<()> {
        let atom = self
            .desc
            .matrix_atom(name)
            .ok_or_else(|| self.unsupported(format!("the target has no matrix atom `{name}`")))?
            .clone();
        if self.target.sm != "sm_90a" || atom.descriptor.is_none() {
            return Err(self.unsupported(format!(
                "async_mma through `{name}`: the PTX emitter has wgmma for sm_90a only"
            )));
        }
        let (m, k) = (atom.shape.m, atom.shape.k);
        let ta = match a {
            AsyncA::Shared(op) => self.shared_dtype(op.buffer)?,
            AsyncA::Registers(f) => self.reg_dtype(f.array)?,
        };
        let tb = self.shared_dtype(b.buffer)?;
        let td = self.reg_dtype(d.array)?;
        if (m, k) != (64, 16)
            || ta != tb
            || !matches!(ta, DType::F16 | DType::BF16)
            || td != DType::F32
            || n == 0
            || !n.is_multiple_of(8)
            || n > 256
        {
            return Err(self.unsupported(format!(
                "async_mma through `{name}` m{m}n{n}k{k} with {ta} × {tb} → {td}: the PTX emitter knows wgmma m64nNk16 with f16 or bf16 inputs and f32 accumulators"
            )));
        }
        if let Some(why) = wgmma_fragment_mismatch(&atom, n) {
            return Err(self.unsupported(format!(
                "atom `{name}`: the description's accumulator does not match PTX's: {why}"
            )));
        }
        if let AsyncA::Registers(_) = a
            && let Some(why) = wgmma_a_fragment_mismatch(&atom)
        {
            return Err(self.unsupported(format!(
                "atom `{name}`: the description's register A fragment does not match PTX's: {why}"
            )));
        }
        // A: a descriptor, or the group's fragment in 4 `.b32` registers.
        let a_operand = match a {
            AsyncA::Shared(op) => self.matrix_descriptor(op)?,
            AsyncA::Registers(f) => format!("{{{}}}", self.operand_regs(*f, 8, ta)?.join(", ")),
        };
        let b_desc = self.matrix_descriptor(b)?;
        let scale_d = match self.expr(accumulate)? {
            v if v.class == Class::Pred && v.imm.is_none() => v.text,
            v => {
                let on = matches!(v.imm, Some(super::value::Imm::Bool(true)));
                let p = self.tmp(Class::Pred);
                self.emit(format!("setp.ne.u32 {p}, {}, 0", u32::from(on)));
                p
            }
        };
        let slots = m * n / 128;
        let offset = Expr::int(d.offset as i32);
        let places = self.places_at(d.array, Some(&offset), slots)?;
        let regs: Option<Vec<String>> = places
            .iter()
            .map(|p| match p {
                super::kernel::Place::Reg(r) => Some(r.clone()),
                super::kernel::Place::Local { .. } => None,
            })
            .collect();
        let Some(regs) = regs else {
            return Err(self.unsupported(
                "an async_mma accumulator in local memory (its array is indexed at run time)",
            ));
        };
        let trans = |op: &SharedMatrix| u32::from(op.major == Major::Mn);
        let t = ta.short_name();
        // Register A has no transpose immediate.
        let trans_a = match a {
            AsyncA::Shared(op) => format!("{}, ", trans(op)),
            AsyncA::Registers(_) => String::new(),
        };
        self.emit(format!(
            "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} {{{}}}, {a_operand}, {b_desc}, {scale_d}, 1, 1, {trans_a}{}",
            regs.join(", "),
            trans(b),
        ));
        Ok(())
    }

    /// The 64-bit shared-memory matrix descriptor of an operand: start
    /// address bits 0-13, LBO 16-29 and SBO 32-45 (each `(x & 0x3FFFF) >>
    /// 4`), swizzle in bits 62-63 (1 = 128B, 2 = 64B, 3 = 32B), base offset
    /// 0 (the verifier keeps swizzled buffers on their pattern boundary).
    ///
    /// The `async_mma`s of a group differ in a constant added to their
    /// operands' indices (`x + c`): the first operand `x + c0` of a run of
    /// `async_mma` statements gets a descriptor built from its address,
    /// the others add `(c − c0)·e/16` to its low word. That is exact when
    /// `(c − c0)·e` is a non-negative multiple of 16: the start field of
    /// an address below 256 KiB (every shared address) is `address / 16`,
    /// so the field of the later operand is the first one's plus that
    /// difference, with no carry out of its 14 bits. Other operands get
    /// descriptors of their own.
    fn matrix_descriptor(&mut self, op: &SharedMatrix) -> Result<String> {
        let (rest, c) = split_constant(&op.index);
        let elem = i64::from(self.shared_dtype(op.buffer)?.bytes() as u32);
        let fields = (op.swizzle, op.lbo, op.sbo);
        let found = self
            .descriptors
            .iter()
            .find(|d| d.buffer == op.buffer && d.index == rest && d.fields == fields)
            .map(|d| (d.first, d.words.clone()));
        let Some((first, (desc, lo, hi))) = found else {
            let desc = self.build_descriptor(op, &op.index)?;
            let (lo, hi) = (self.tmp(Class::B32), self.tmp(Class::B32));
            self.emit(format!("mov.b64 {{{lo}, {hi}}}, {desc}"));
            self.descriptors.push(CachedDescriptor {
                buffer: op.buffer,
                index: rest,
                first: c,
                fields,
                words: (desc.clone(), lo, hi),
            });
            return Ok(desc);
        };
        let bytes = (c - first) * elem;
        if bytes < 0 || bytes % 16 != 0 {
            return self.build_descriptor(op, &op.index);
        }
        if bytes == 0 {
            return Ok(desc);
        }
        let moved = self.tmp(Class::B32);
        self.emit(format!("add.u32 {moved}, {lo}, {}", bytes / 16));
        let desc = self.tmp(Class::B64);
        self.emit(format!("mov.b64 {desc}, {{{moved}, {hi}}}"));
        Ok(desc)
    }

    /// The descriptor of `op` with its index replaced by `index`.
    fn build_descriptor(&mut self, op: &SharedMatrix, index: &Expr) -> Result<String> {
        let addr = self.address(MemRef::Shared(op.buffer), index)?;
        let base = if addr.base == super::kernel::SMEM {
            self.smem_reg()?
        } else {
            addr.base.clone()
        };
        let start = if addr.offset == 0 {
            base
        } else {
            let r = self.tmp(Class::B32);
            self.emit(format!("add.u32 {r}, {base}, {}", addr.offset));
            r
        };
        let field = self.tmp(Class::B32);
        self.emit(format!("bfe.u32 {field}, {start}, 4, 14"));
        let wide = self.tmp(Class::B64);
        self.emit(format!("cvt.u64.u32 {wide}, {field}"));
        let mode: u64 = match op.swizzle {
            128 => 1,
            64 => 2,
            32 => 3,
            _ => 0,
        };
        let enc = |x: u32| u64::from((x & 0x3FFFF) >> 4);
        let high = (enc(op.lbo) << 16) | (enc(op.sbo) << 32) | (mode << 62);
        let desc = self.tmp(Class::B64);
        self.emit(format!("or.b64 {desc}, {wide}, {high}"));
        Ok(desc)
    }

    /// The registers PTX reads an operand from: 16-bit slots packed in
    /// pairs (lower slot in bits 15:0), 32-bit slots as they are.
    fn operand_regs(&mut self, f: FragRef, slots: u32, dtype: DType) -> Result<Vec<String>> {
        if let Some(words) = self.pair_words(f, slots)? {
            return Ok(words);
        }
        let offset = Expr::int(f.offset as i32);
        let places = self.places_at(f.array, Some(&offset), slots)?;
        let class = class_of(dtype);
        let values: Vec<Val> = places.iter().map(|p| self.read_place(p, class)).collect();
        if class != Class::B16 {
            return Ok(values.into_iter().map(|v| v.text).collect());
        }
        Ok(values
            .chunks(2)
            .map(|pair| {
                let r = self.tmp(Class::B32);
                let hi = pair
                    .get(1)
                    .map_or_else(|| pair[0].text.clone(), |v| v.text.clone());
                self.emit(format!("mov.b32 {r}, {{{}, {hi}}}", pair[0]));
                r
            })
            .collect())
    }
}

/// A shared-memory matrix descriptor built for the operand at element
/// `index + first` of `buffer` with the given swizzle, LBO and SBO: its
/// register, and its low and high words.
#[derive(Clone, Debug)]
pub(crate) struct CachedDescriptor {
    buffer: SharedId,
    index: Expr,
    first: i64,
    fields: (u32, u32, u32),
    words: (String, String, String),
}

/// `index` as `rest + c` for an `i32` literal `c` (0 when there is none).
fn split_constant(index: &Expr) -> (Expr, i64) {
    match &index.kind {
        ExprKind::Binary(BinaryOp::Add, x, c) => match c.as_const_int() {
            Some(c) => (x.as_ref().clone(), c),
            None => (index.clone(), 0),
        },
        ExprKind::Literal(_) => match index.as_const_int() {
            Some(c) => (Expr::int(0), c),
            None => (index.clone(), 0),
        },
        _ => (index.clone(), 0),
    }
}

/// The first (thread, slot) where the description's accumulator for
/// `wgmma` m64nNk16 differs from PTX's placement, as a sentence.
pub(crate) fn wgmma_fragment_mismatch(atom: &MatrixAtom, n: u32) -> Option<String> {
    let fragment = match atom.fragment_for_n(OperandRole::Accumulator, n) {
        Ok(Some(f)) => f,
        Ok(None) => return Some("the accumulator has no register fragment".to_string()),
        Err(e) => return Some(e.to_string()),
    };
    let slots = 64 * n / 128;
    if fragment.threads() != 128 || fragment.slots() != u64::from(slots) {
        return Some(format!(
            "{} threads × {} slots, PTX has 128 × {slots}",
            fragment.threads(),
            fragment.slots()
        ));
    }
    for tid in 0..128u32 {
        let (w, g, t) = (tid / 32, (tid % 32) >> 2, tid & 3);
        for i in 0..slots {
            let row = 16 * w + g + 8 * ((i >> 1) & 1);
            let col = 8 * (i >> 2) + 2 * t + (i & 1);
            let want = i64::from(row + 64 * col);
            match fragment.element_index(u64::from(tid), u64::from(i)) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    return Some(format!(
                        "thread {tid} slot {i} holds ({}, {}) in the description, PTX puts ({row}, {col}) there",
                        got.max(0) % 64,
                        got.max(0) / 64
                    ));
                }
                Err(e) => return Some(e.to_string()),
            }
        }
    }
    None
}

/// Why the atom's register A fragment differs from PTX's for wgmma
/// m64nNk16 with A from registers (warp `w` of the warpgroup holds rows
/// `16w ..`; within a warp the mma.sync m16n8k16 A layout: slot `i` of
/// lane `4g + t` is (`16w + g + 8·((i>>1)&1)`, `2t + (i&1) + 8·(i>>2)`)),
/// or `None` when they agree.
pub(crate) fn wgmma_a_fragment_mismatch(atom: &MatrixAtom) -> Option<String> {
    let fragment = match atom.fragment(OperandRole::A) {
        Ok(Some(f)) => f,
        Ok(None) => return Some("operand A has no register fragment".to_string()),
        Err(e) => return Some(e.to_string()),
    };
    if fragment.threads() != 128 || fragment.slots() != 8 {
        return Some(format!(
            "{} threads × {} slots, PTX has 128 × 8",
            fragment.threads(),
            fragment.slots()
        ));
    }
    for tid in 0..128u32 {
        let (w, g, t) = (tid / 32, (tid % 32) >> 2, tid & 3);
        for i in 0..8u32 {
            let row = 16 * w + g + 8 * ((i >> 1) & 1);
            let col = 2 * t + (i & 1) + 8 * (i >> 2);
            let want = i64::from(row + 64 * col);
            match fragment.element_index(u64::from(tid), u64::from(i)) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    return Some(format!(
                        "thread {tid} slot {i} holds ({}, {}) in the description, PTX puts ({row}, {col}) there",
                        got.max(0) % 64,
                        got.max(0) / 64
                    ));
                }
                Err(e) => return Some(e.to_string()),
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilec_core::target;

    /// The shipped sm_90a description's wgmma register-A fragment is
    /// PTX's.
    #[test]
    fn shipped_wgmma_a_fragment_matches_ptx() {
        let t = target::builtin("sm_90a").expect("sm_90a is shipped");
        let atom = t
            .matrix_atoms
            .iter()
            .find(|a| a.descriptor.is_some())
            .expect("sm_90a has a wgmma atom");
        assert_eq!(wgmma_a_fragment_mismatch(atom), None);
    }

    /// The shipped sm_80 and sm_90a descriptions place every slot of the
    /// m16n8k16 atom where PTX does.
    #[test]
    fn shipped_fragments_match_ptx() {
        for name in ["sm_80", "sm_90a"] {
            let t = target::builtin(name).expect("builtin target");
            let atom = t.matrix_atom("mma.m16n8k16").expect("the m16n8k16 atom");
            let form = MmaForm::find(16, 8, 16, DType::F16, DType::F16, DType::F32).expect("form");
            for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
                assert_eq!(
                    fragment_mismatch(atom, &form, role),
                    None,
                    "{name} {role:?}"
                );
            }
        }
    }

    /// The shipped sm_90a wgmma accumulator is PTX's for every N; a
    /// description with two slots swapped is caught.
    #[test]
    fn shipped_wgmma_accumulator_matches_ptx() {
        let t = target::builtin("sm_90a").expect("builtin target");
        let atom = t.matrix_atom("wgmma.m64nNk16").expect("the wgmma atom");
        for n in atom.supported_n() {
            assert_eq!(wgmma_fragment_mismatch(atom, n), None, "n = {n}");
        }
        let mut wrong = atom.clone();
        if let Some(f) = wrong.accumulator.fragment.as_mut() {
            *f = "((4,8,4),(2,2)):((128,1,16),(8,64))"
                .parse()
                .expect("layout");
        }
        assert!(wgmma_fragment_mismatch(&wrong, 64).is_some());
    }

    /// A spot check of PTX's placement (PTX ISA figures): lane 5 is group 1,
    /// thread 1 in its group.
    #[test]
    fn ptx_placement_of_lane_five() {
        let form = MmaForm::find(16, 8, 16, DType::BF16, DType::BF16, DType::F32).expect("form");
        let a: Vec<_> = (0..8).map(|i| form.element(OperandRole::A, 5, i)).collect();
        assert_eq!(
            a,
            vec![
                (1, 2),
                (1, 3),
                (9, 2),
                (9, 3),
                (1, 10),
                (1, 11),
                (9, 10),
                (9, 11)
            ]
        );
        let b: Vec<_> = (0..4).map(|i| form.element(OperandRole::B, 5, i)).collect();
        assert_eq!(b, vec![(2, 1), (3, 1), (10, 1), (11, 1)]);
        let c: Vec<_> = (0..4)
            .map(|i| form.element(OperandRole::Accumulator, 5, i))
            .collect();
        assert_eq!(c, vec![(1, 2), (1, 3), (9, 2), (9, 3)]);
        assert_eq!(
            form.instruction(),
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
        );
    }

    /// A description whose A slots 2 and 4 are swapped is caught.
    #[test]
    fn a_swapped_fragment_is_reported() {
        let t = target::builtin("sm_80").expect("builtin target");
        let mut atom = t.matrix_atom("mma.m16n8k16").expect("atom").clone();
        // Slot bits (i&1, i>>2, (i>>1)&1) instead of (i&1, (i>>1)&1, i>>2).
        atom.a.fragment = Some(
            "((4,8),(2,2,2)):((32,1),(16,128,8))"
                .parse()
                .expect("layout"),
        );
        let form = MmaForm::find(16, 8, 16, DType::F16, DType::F16, DType::F32).expect("form");
        let why = fragment_mismatch(&atom, &form, OperandRole::A).expect("a mismatch");
        assert!(why.contains("lane 0 slot 2"), "{why}");
    }
}
