//! Loads, stores, asynchronous copies and atomics.
//!
//! **Addresses.** A global access is the buffer's address plus the element
//! index times the element size, computed in 64 bits (`mul.wide.s32` of a
//! 32-bit index, `mul.lo.s64` of a 64-bit one), so buffers beyond 2^31
//! elements work; a constant part of the index (`i + 3`) becomes the
//! instruction's immediate offset. Shared accesses use 32-bit addresses
//! into `tilec_smem` (the buffer's fixed offset plus the index times the
//! element size); constant indices address the symbol directly.
//!
//! **Vector moves.** A move of `w` elements is one instruction: elements of
//! 4 or 8 bytes move as `.v2`/`.v4` of their own type; narrower elements
//! are packed into 32-bit words (`.b32`, `.v2.b32`, `.v4.b32`; `.u16` or a
//! single narrow element for moves below 4 bytes) and taken apart with
//! `mov.b32 {lo, hi}` (16-bit floats) or `bfe` (narrow integers, which
//! also normalises them), and put together with `mov.b32 {lo, hi}` and
//! `bfi` for stores. Booleans are bytes 0/1 in memory.
//!
//! **Guards.** A guarded move is predicated on its condition. With
//! `else zero` the destination registers are zeroed where the predicate is
//! false; without it they keep their value (the unpacking is predicated
//! too). `cp.async ... else zero` passes a source size of 0 instead of
//! skipping the copy, and the buffer's own address as the source.
//!
//! **Atomics.** `atomic_add` is `red.global.add` for 32- and 64-bit
//! integers, `f64`, `f16` (`.noftz`) and `bf16` on sm_90. `f32` uses a
//! compare-and-swap loop around `add.rn.f32` because `red.add.f32` flushes
//! subnormal inputs and results to zero on global memory (PTX ISA, `atom`);
//! with `fast_math` it is `red.global.add.f32`. `bf16` before sm_90 and
//! 16-bit integers use a 16-bit compare-and-swap loop. 8-bit atomics are
//! refused.

use tilec_core::ir::{AtomicOp, BinaryOp, DType, DTypeKind};
use tilec_core::target::MatrixLoad;
use tilec_core::thread::{
    Expr, ExprKind, FragRef, Guard, GuardElse, MemRef, ParamId, RegRef, SharedId,
};

use super::PtxError;
use super::fold::fold_int;
use super::kernel::{Emitter, Place, SMEM, address_text};
use super::value::{Class, Val, class_of, is_fp8};

type Result<T> = std::result::Result<T, PtxError>;

/// A memory operand `[base+offset]` in a state space.
#[derive(Clone, Debug)]
pub(crate) struct Addr {
    pub space: &'static str,
    pub base: String,
    pub offset: i64,
}

impl Addr {
    pub(crate) fn text(&self) -> String {
        address_text(&self.base, self.offset)
    }
}

/// How a vector move of `width` elements of a type is transferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transfer {
    /// One register per element, `.v{width}` of this type.
    Direct(&'static str),
    /// `words` registers of this type, elements packed inside.
    Packed { words: u32, ty: &'static str },
}

/// The transfer for `width` elements of `dtype` (`None` beyond 16 bytes).
fn transfer(dtype: DType, width: u32) -> Option<Transfer> {
    let bytes = dtype.bytes() as u32;
    let total = bytes * width;
    if total > 16 || ![1, 2, 4, 8].contains(&width) {
        return None;
    }
    Some(match (bytes, width) {
        (4 | 8, _) => Transfer::Direct(match dtype {
            DType::F32 => "f32",
            DType::F64 => "f64",
            _ if bytes == 8 => "b64",
            _ => "b32",
        }),
        // One narrow element moves on its own; the load's sign or zero
        // extension is the register's normalisation.
        (2, 1) => Transfer::Direct(match dtype {
            DType::I16 => "s16",
            DType::U16 => "u16",
            _ => "b16",
        }),
        (1, 1) if dtype == DType::Bool => Transfer::Packed { words: 1, ty: "u8" },
        (1, 1) => Transfer::Direct(if dtype == DType::I8 { "s8" } else { "u8" }),
        _ if total == 2 => Transfer::Packed {
            words: 1,
            ty: "u16",
        },
        _ => Transfer::Packed {
            words: total / 4,
            ty: "b32",
        },
    })
}

/// `.v2`/`.v4` or nothing.
fn vec_suffix(n: u32) -> String {
    if n > 1 {
        format!(".v{n}")
    } else {
        String::new()
    }
}

/// `{a, b}` or `a`.
fn operand_list(regs: &[String]) -> String {
    if regs.len() == 1 {
        regs[0].clone()
    } else {
        format!("{{{}}}", regs.join(", "))
    }
}

impl Emitter<'_> {
    /// The element type of a shared buffer.
    pub fn shared_dtype(&self, s: SharedId) -> Result<DType> {
        self.mem_dtype(MemRef::Shared(s))
    }

    /// The register holding the shared window address of `tilec_smem`.
    pub fn smem_reg(&self) -> Result<String> {
        self.smem
            .as_ref()
            .map(|v| v.text.clone())
            .ok_or_else(|| self.malformed("shared access without shared buffers"))
    }

    /// The dtype of a buffer.
    fn mem_dtype(&self, m: MemRef) -> Result<DType> {
        match m {
            MemRef::Global(p) => self.k.global(p).map(|g| g.dtype),
            MemRef::Shared(s) => self.k.shared_buffer(s).map(|b| b.dtype),
        }
        .ok_or_else(|| self.malformed("a memory reference to a missing buffer"))
    }

    /// `e` as a sum of non-constant terms (pushed to `terms`) and the
    /// returned constant, looking through `+` and `− constant` (wrapping
    /// sums are associative, so the split is exact).
    fn index_terms<'e>(&self, e: &'e Expr, terms: &mut Vec<&'e Expr>) -> i64 {
        if let Some(c) = fold_int(e, &self.env) {
            return c;
        }
        match &e.kind {
            ExprKind::Binary(BinaryOp::Add, a, b) => {
                let x = self.index_terms(a, terms);
                x.wrapping_add(self.index_terms(b, terms))
            }
            ExprKind::Binary(BinaryOp::Sub, a, b) => match fold_int(b, &self.env) {
                Some(c) => self.index_terms(a, terms).wrapping_sub(c),
                None => {
                    terms.push(e);
                    0
                }
            },
            _ => {
                terms.push(e);
                0
            }
        }
    }

    /// The address of element `index` of a buffer.
    pub fn address(&mut self, m: MemRef, index: &Expr) -> Result<Addr> {
        let elem = self.mem_dtype(m)?.bytes() as i64;
        let mut terms = Vec::new();
        let constant = self.index_terms(index, &mut terms);
        // A constant part beyond the immediate range stays in the sum.
        let offset = constant
            .checked_mul(elem)
            .filter(|o| i32::try_from(*o).is_ok());
        let rest = match (terms.is_empty(), offset) {
            (true, Some(_)) => None,
            (false, Some(_)) => {
                let mut sum = self.expr(terms[0])?;
                for t in &terms[1..] {
                    let v = self.expr(t)?;
                    sum = self.binary(BinaryOp::Add, index.dtype, sum, v)?;
                }
                Some(sum)
            }
            (_, None) => Some(self.expr(index)?),
        };
        let offset = offset.unwrap_or(0);
        match m {
            MemRef::Global(p) => self.global_address(p, rest, offset, elem, index.dtype),
            MemRef::Shared(s) => self.shared_address(s, rest, offset, elem),
        }
    }

    fn global_address(
        &mut self,
        p: ParamId,
        rest: Option<Val>,
        offset: i64,
        elem: i64,
        dtype: DType,
    ) -> Result<Addr> {
        let base = self
            .params
            .get(p.index())
            .cloned()
            .ok_or_else(|| self.malformed("a missing global buffer"))?;
        let Some(index) = rest else {
            return Ok(Addr {
                space: "global",
                base: base.text,
                offset,
            });
        };
        let off = self.wide_offset(&index, dtype, elem);
        let addr = self.op2(Class::B64, "add.s64", &base, &off);
        Ok(Addr {
            space: "global",
            base: addr.text,
            offset,
        })
    }

    fn shared_address(
        &mut self,
        s: SharedId,
        rest: Option<Val>,
        offset: i64,
        elem: i64,
    ) -> Result<Addr> {
        let buffer = self
            .plan
            .shared_offsets
            .get(s.index())
            .copied()
            .ok_or_else(|| self.malformed("a missing shared buffer"))? as i64;
        let Some(index) = rest else {
            return Ok(Addr {
                space: "shared",
                base: SMEM.to_string(),
                offset: buffer + offset,
            });
        };
        let index = if index.class == Class::B64 {
            self.op1(Class::B32, "cvt.u32.u64", &index)
        } else {
            index
        };
        let smem = self
            .smem
            .clone()
            .ok_or_else(|| self.malformed("shared access without shared buffers"))?;
        let addr = self.op3(
            Class::B32,
            "mad.lo.s32",
            &index,
            &Val::int(DType::I32, elem),
            &smem,
        );
        Ok(Addr {
            space: "shared",
            base: addr.text,
            offset: buffer + offset,
        })
    }

    /// A guard with constant conditions folded.
    fn guard_cond(&mut self, guard: Option<&Guard>) -> Result<Cond> {
        let Some(g) = guard else {
            return Ok(Cond::Always);
        };
        let c = self.expr(&g.cond)?;
        Ok(match c.as_bool() {
            Some(true) => Cond::Always,
            Some(false) => Cond::Never(g.otherwise),
            None => Cond::When(self.pred(&c), g.otherwise),
        })
    }

    pub fn load(
        &mut self,
        width: u32,
        dst: &RegRef,
        src: MemRef,
        index: &Expr,
        guard: Option<&Guard>,
    ) -> Result<()> {
        let dtype = self.reg_dtype(dst.reg())?;
        let class = class_of(dtype);
        let plan = transfer(dtype, width).ok_or_else(|| too_wide(self, width, dtype))?;
        let places = self.places(dst, width)?;
        let (on, zero_fill) = match self.guard_cond(guard)? {
            Cond::Always => (None, false),
            Cond::Never(GuardElse::Skip) => {
                self.body.comment("(the guard is always false)");
                return Ok(());
            }
            Cond::Never(GuardElse::Zero) => {
                let zero = zero_of(dtype);
                for p in &places {
                    self.write_place(p, &zero, None);
                }
                return Ok(());
            }
            Cond::When(p, otherwise) => (Some(p.text), otherwise == GuardElse::Zero),
        };
        let off = on.as_ref().map(|p| format!("!{p}"));
        let addr = self.address(src, index)?;
        let text = addr.text();
        // Registers the elements land in: the destination itself when it is
        // made of registers, temporaries otherwise.
        let direct: Option<Vec<String>> = places
            .iter()
            .map(|p| match p {
                Place::Reg(r) => Some(r.clone()),
                Place::Local { .. } => None,
            })
            .collect();
        let landing = match &direct {
            Some(regs) => regs.clone(),
            None => (0..width).map(|_| self.tmp(class)).collect(),
        };
        match plan {
            Transfer::Direct(ty) => {
                self.body.inst_if(
                    on.as_deref(),
                    format!(
                        "ld.{}{}.{ty} {}, {text}",
                        addr.space,
                        vec_suffix(width),
                        operand_list(&landing)
                    ),
                );
                if zero_fill {
                    let zero = zero_of(dtype);
                    for l in &landing {
                        self.body
                            .inst_if(off.as_deref(), format!("mov.{} {l}, {zero}", class.ty()));
                    }
                }
            }
            Transfer::Packed { words, ty } => {
                let regs: Vec<String> = (0..words).map(|_| self.tmp(Class::B32)).collect();
                self.body.inst_if(
                    on.as_deref(),
                    format!(
                        "ld.{}{}.{ty} {}, {text}",
                        addr.space,
                        vec_suffix(words),
                        operand_list(&regs)
                    ),
                );
                if zero_fill {
                    for r in &regs {
                        self.body.inst_if(off.as_deref(), format!("mov.b32 {r}, 0"));
                    }
                }
                // Without a zero fill, lanes whose guard fails keep their
                // destination.
                let keep = if zero_fill { None } else { on.as_deref() };
                self.unpack(dtype, &regs, &landing, keep);
            }
        }
        if direct.is_none() {
            let keep = if zero_fill { None } else { on.clone() };
            for (p, l) in places.iter().zip(&landing) {
                let v = Val::reg(class, l.clone());
                self.write_place(p, &v, keep.as_deref());
            }
        }
        Ok(())
    }

    /// `ldmatrix` (`docs/backends/cuda.md`): `count` 8×8 matrices of 16-bit
    /// elements, each lane's two elements of matrix `j` into
    /// `dst[offset + 2j ..]`. The description's fragment of the load must
    /// be PTX's ([`ldmatrix_mismatch`]).
    pub fn matrix_load(
        &mut self,
        name: &str,
        count: u32,
        trans: bool,
        dst: FragRef,
        src: SharedId,
        index: &Expr,
    ) -> Result<()> {
        let load = self
            .desc
            .matrix_load(name)
            .ok_or_else(|| self.unsupported(format!("the target has no matrix load `{name}`")))?
            .clone();
        if let Some(why) = ldmatrix_mismatch(&load, trans) {
            return Err(self.unsupported(format!(
                "matrix load `{name}`: the description does not match PTX's ldmatrix: {why}"
            )));
        }
        if !matches!(count, 1 | 2 | 4) {
            return Err(self.unsupported(format!("ldmatrix .x{count}")));
        }
        let dtype = self.reg_dtype(dst.array)?;
        let addr = self.address(MemRef::Shared(src), index)?;
        let paired = self.pair_words(dst, 2 * count)?;
        let words: Vec<String> = match &paired {
            Some(w) => w.clone(),
            None => (0..count).map(|_| self.tmp(Class::B32)).collect(),
        };
        self.emit(format!(
            "ldmatrix.sync.aligned.m8n8.x{count}{}.shared.b16 {}, {}",
            if trans { ".trans" } else { "" },
            operand_list(&words),
            addr.text()
        ));
        if paired.is_some() {
            return Ok(());
        }
        let offset = Expr::int(dst.offset as i32);
        let places = self.places_at(dst.array, Some(&offset), 2 * count)?;
        let direct: Option<Vec<String>> = places
            .iter()
            .map(|p| match p {
                Place::Reg(r) => Some(r.clone()),
                Place::Local { .. } => None,
            })
            .collect();
        let class = class_of(dtype);
        let landing = match &direct {
            Some(regs) => regs.clone(),
            None => (0..2 * count).map(|_| self.tmp(class)).collect(),
        };
        self.unpack(dtype, &words, &landing, None);
        if direct.is_none() {
            for (p, l) in places.iter().zip(&landing) {
                self.write_place(p, &Val::reg(class, l.clone()), None);
            }
        }
        Ok(())
    }

    /// Takes `words` apart into `out` (one register per element), each
    /// instruction under `guard`.
    /// `stmatrix` (sm_90 and later): the lane's elements of each matrix
    /// packed two to a word (or the words of a fragment array kept in
    /// pairs), and its row address.
    pub fn matrix_store(
        &mut self,
        name: &str,
        count: u32,
        trans: bool,
        dst: SharedId,
        index: &Expr,
        src: FragRef,
    ) -> Result<()> {
        let store = self
            .desc
            .matrix_store(name)
            .ok_or_else(|| self.unsupported(format!("the target has no matrix store `{name}`")))?
            .as_load();
        if let Some(why) = ldmatrix_mismatch(&store, trans) {
            return Err(self.unsupported(format!(
                "matrix store `{name}`: the description does not match PTX's stmatrix: {why}"
            )));
        }
        if !matches!(count, 1 | 2 | 4) || self.target.capability < 90 {
            return Err(self.unsupported(format!(
                "stmatrix .x{count} on {} (PTX has .x1, .x2 and .x4 from sm_90)",
                self.target.sm
            )));
        }
        let dtype = self.reg_dtype(src.array)?;
        let words = match self.pair_words(src, 2 * count)? {
            Some(words) => words,
            None => {
                let mut values = Vec::with_capacity(2 * count as usize);
                for e in 0..2 * count {
                    let elem = Expr {
                        kind: ExprKind::Elem(
                            src.array,
                            Box::new(Expr::int((src.offset + e) as i32)),
                        ),
                        dtype,
                    };
                    values.push(self.expr(&elem)?);
                }
                self.pack(dtype, &values, count)
            }
        };
        let addr = self.address(MemRef::Shared(dst), index)?;
        self.emit(format!(
            "stmatrix.sync.aligned.m8n8.x{count}{}.shared.b16 {}, {}",
            if trans { ".trans" } else { "" },
            addr.text(),
            operand_list(&words)
        ));
        Ok(())
    }

    fn unpack(&mut self, dtype: DType, words: &[String], out: &[String], guard: Option<&str>) {
        let bits = dtype.bits();
        if class_of(dtype) == Class::B16 && !is_fp8(dtype) {
            // 16-bit floats: both halves of each word at once.
            for (word, pair) in words.iter().zip(out.chunks(2)) {
                let hi = match pair.get(1) {
                    Some(h) => h.clone(),
                    None => self.tmp(Class::B16),
                };
                self.body
                    .inst_if(guard, format!("mov.b32 {{{}, {hi}}}, {word}", pair[0]));
            }
            return;
        }
        for (j, dst) in out.iter().enumerate() {
            let bit = j as u32 * bits;
            let word = &words[(bit / 32) as usize % words.len()];
            let at = bit % 32;
            match class_of(dtype) {
                Class::B16 => {
                    let t = self.tmp(Class::B32);
                    self.body
                        .inst_if(guard, format!("bfe.u32 {t}, {word}, {at}, 8"));
                    self.body.inst_if(guard, format!("cvt.u16.u32 {dst}, {t}"));
                }
                Class::Pred => {
                    let t = self.tmp(Class::B32);
                    self.body
                        .inst_if(guard, format!("bfe.u32 {t}, {word}, {at}, 8"));
                    self.body
                        .inst_if(guard, format!("setp.ne.u32 {dst}, {t}, 0"));
                }
                _ => {
                    let s = if dtype.kind() == DTypeKind::Signed {
                        "s32"
                    } else {
                        "u32"
                    };
                    self.body
                        .inst_if(guard, format!("bfe.{s} {dst}, {word}, {at}, {bits}"));
                }
            }
        }
    }

    /// Packs element registers into `words` 32-bit words.
    fn pack(&mut self, dtype: DType, values: &[Val], words: u32) -> Vec<String> {
        let bits = dtype.bits();
        let per_word = (32 / bits) as usize;
        let mut out = Vec::new();
        for chunk in values.chunks(per_word).take(words as usize) {
            let w = self.tmp(Class::B32);
            match class_of(dtype) {
                Class::B16 if !is_fp8(dtype) && chunk.len() == 2 => {
                    let (a, b) = (self.in_reg(&chunk[0]), self.in_reg(&chunk[1]));
                    self.emit(format!("mov.b32 {w}, {{{a}, {b}}}"));
                }
                _ => {
                    for (j, v) in chunk.iter().enumerate() {
                        let e = self.element_bits(v);
                        if j == 0 {
                            self.emit(format!("mov.b32 {w}, {e}"));
                        } else {
                            let at = j as u32 * bits;
                            self.emit(format!("bfi.b32 {w}, {e}, {w}, {at}, {bits}"));
                        }
                    }
                }
            }
            out.push(w);
        }
        out
    }

    /// An element's bits in a 32-bit register (low bits).
    fn element_bits(&mut self, v: &Val) -> Val {
        match v.class {
            Class::Pred => self.selp(&Val::bits(Class::B32, 1), &Val::bits(Class::B32, 0), v),
            Class::B16 => {
                let r = self.in_reg(v);
                self.op1(Class::B32, "cvt.u32.u16", &r)
            }
            _ => self.in_reg(v),
        }
    }

    pub fn store(
        &mut self,
        width: u32,
        dst: MemRef,
        index: &Expr,
        src: &RegRef,
        guard: Option<&Guard>,
    ) -> Result<()> {
        let dtype = self.reg_dtype(src.reg())?;
        let class = class_of(dtype);
        let plan = transfer(dtype, width).ok_or_else(|| too_wide(self, width, dtype))?;
        let on = match self.guard_cond(guard)? {
            Cond::Always => None,
            Cond::Never(_) => {
                self.body.comment("(the guard is always false)");
                return Ok(());
            }
            Cond::When(p, _) => Some(p.text),
        };
        let places = self.places(src, width)?;
        let values: Vec<Val> = places.iter().map(|p| self.read_place(p, class)).collect();
        let addr = self.address(dst, index)?;
        let text = addr.text();
        let (regs, n, ty) = match plan {
            Transfer::Direct(ty) => {
                let regs: Vec<String> = values.iter().map(|v| self.in_reg(v).text).collect();
                (regs, width, ty)
            }
            Transfer::Packed { words, ty } => {
                let regs = if words == 1 && values.len() == 1 {
                    vec![self.element_bits(&values[0]).text]
                } else {
                    self.pack(dtype, &values, words)
                };
                (regs, words, ty)
            }
        };
        self.body.inst_if(
            on.as_deref(),
            format!(
                "st.{}{}.{ty} {text}, {}",
                addr.space,
                vec_suffix(n),
                operand_list(&regs)
            ),
        );
        Ok(())
    }

    pub fn async_copy(
        &mut self,
        bytes: u32,
        dst: SharedId,
        dst_index: &Expr,
        src: ParamId,
        src_index: &Expr,
        guard: Option<&Guard>,
    ) -> Result<()> {
        if ![4, 8, 16].contains(&bytes) {
            return Err(self.unsupported(format!("cp.async copies 4, 8 or 16 bytes, not {bytes}")));
        }
        let cond = self.guard_cond(guard)?;
        if matches!(cond, Cond::Never(GuardElse::Skip)) {
            self.body.comment("(the guard is always false)");
            return Ok(());
        }
        let d = self.address(MemRef::Shared(dst), dst_index)?;
        let s = self.address(MemRef::Global(src), src_index)?;
        let cache = if bytes == 16 { "cg" } else { "ca" };
        let op = format!("cp.async.{cache}.shared.global");
        match cond {
            Cond::Always => self.emit(format!("{op} {}, {}, {bytes}", d.text(), s.text())),
            Cond::When(p, GuardElse::Skip) => self.body.inst_if(
                Some(&p.text),
                format!("{op} {}, {}, {bytes}", d.text(), s.text()),
            ),
            Cond::Never(_) => {
                // Copies nothing and zero-fills the destination.
                let base = self
                    .params
                    .get(src.index())
                    .cloned()
                    .ok_or_else(|| self.malformed("a missing global buffer"))?;
                self.emit(format!("{op} {}, [{base}], {bytes}, 0", d.text()));
            }
            Cond::When(p, GuardElse::Zero) if self.target.version >= (7, 5) => {
                // `ignore-src` (PTX 7.5): where the guard fails the source
                // is ignored completely and the destination zero-filled, so
                // the address needs no replacing.
                let ignore = match p.text.strip_prefix('!') {
                    Some(plain) => plain.to_string(),
                    None => format!("!{}", p.text),
                };
                self.emit(format!(
                    "{op} {}, {}, {bytes}, {ignore}",
                    d.text(),
                    s.text()
                ));
            }
            Cond::When(p, GuardElse::Zero) => {
                // Before PTX 7.5: where the guard fails, copy nothing from
                // the buffer's own (valid) address and zero-fill the
                // destination.
                let full = if s.offset == 0 {
                    Val::reg(Class::B64, s.base.clone())
                } else {
                    self.op2(
                        Class::B64,
                        "add.s64",
                        &Val::reg(Class::B64, s.base.clone()),
                        &Val::int(DType::I64, s.offset),
                    )
                };
                let base = self
                    .params
                    .get(src.index())
                    .cloned()
                    .ok_or_else(|| self.malformed("a missing global buffer"))?;
                let from = self.selp(&full, &base, &p);
                let size = self.selp(
                    &Val::int(DType::U32, i64::from(bytes)),
                    &Val::int(DType::U32, 0),
                    &p,
                );
                self.emit(format!("{op} {}, [{from}], {bytes}, {size}", d.text()));
            }
        }
        Ok(())
    }

    pub fn atomic(
        &mut self,
        op: AtomicOp,
        dst: ParamId,
        index: &Expr,
        value: &Expr,
        guard: Option<&Guard>,
    ) -> Result<()> {
        let dtype = value.dtype;
        let v = self.expr(value)?;
        let v = self.in_reg(&v);
        let on = match self.guard_cond(guard)? {
            Cond::Always => None,
            Cond::Never(_) => {
                self.body.comment("(the guard is always false)");
                return Ok(());
            }
            Cond::When(p, _) => Some(p.text),
        };
        let addr = self.address(MemRef::Global(dst), index)?;
        let text = addr.text();
        if op != AtomicOp::Add {
            return self.atomic_max_min(op, dtype, &text, &v, on);
        }
        let red = match dtype {
            DType::I32 | DType::U32 => Some("u32"),
            DType::I64 | DType::U64 => Some("u64"),
            DType::F64 => Some("f64"),
            DType::F16 => Some("noftz.f16"),
            DType::BF16 if self.target.has_bf16_atomic_add() => Some("noftz.bf16"),
            DType::F32 if self.opts.fast_math => Some("f32"),
            _ => None,
        };
        if let Some(ty) = red {
            self.body
                .inst_if(on.as_deref(), format!("red.global.add.{ty} {text}, {v}"));
            return Ok(());
        }
        let width = match dtype {
            DType::F32 => 32,
            DType::BF16 | DType::I16 | DType::U16 => 16,
            _ => {
                return Err(self.unsupported(format!(
                    "atomic_add of {dtype}: PTX has no {}-bit atomic add",
                    dtype.bits()
                )));
            }
        };
        let skip = match &on {
            Some(p) => {
                let skip = self.body.fresh_label("skip");
                self.body
                    .inst_if(Some(&format!("!{p}")), format!("bra {skip}"));
                Some(skip)
            }
            None => None,
        };
        self.cas_add_loop(dtype, width, &text, &v)?;
        if let Some(skip) = skip {
            self.body.label(&skip);
        }
        Ok(())
    }

    /// `*addr = max(*addr, v)` (or min): `red.max`/`red.min` for 32- and
    /// 64-bit integers; otherwise a compare-and-swap loop that stores `v`
    /// only while it compares greater (less) than the element, as CUDA's
    /// `atomic_ref::fetch_max` does: a NaN value never replaces, a NaN
    /// element stays, and signed zeros do not replace each other.
    fn atomic_max_min(
        &mut self,
        op: AtomicOp,
        dtype: DType,
        text: &str,
        v: &Val,
        on: Option<String>,
    ) -> Result<()> {
        let name = if op == AtomicOp::Max { "max" } else { "min" };
        let red = match dtype {
            DType::I32 => Some("s32"),
            DType::U32 => Some("u32"),
            DType::I64 => Some("s64"),
            DType::U64 => Some("u64"),
            _ => None,
        };
        if let Some(ty) = red {
            self.body
                .inst_if(on.as_deref(), format!("red.global.{name}.{ty} {text}, {v}"));
            return Ok(());
        }
        let width = match dtype {
            DType::F64 => 64,
            DType::F32 => 32,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 16,
            _ => {
                return Err(self.unsupported(format!(
                    "atomic_{name} of {dtype}: PTX has no {}-bit compare-and-swap",
                    dtype.bits()
                )));
            }
        };
        let done = self.body.fresh_label("done");
        if let Some(p) = &on {
            self.body
                .inst_if(Some(&format!("!{p}")), format!("bra {done}"));
        }
        let word = match width {
            64 => Class::B64,
            32 => Class::B32,
            _ => Class::B16,
        };
        let b = word.bits();
        let old = self.tmp(word);
        self.emit(format!("ld.global.{b} {old}, {text}"));
        // The bits `v` stores.
        let new = match dtype {
            DType::F64 => self.op1(Class::B64, "mov.b64", v),
            DType::F32 => self.op1(Class::B32, "mov.b32", v),
            d if d.is_int() => self.op1(Class::B16, "cvt.u16.u32", v),
            _ => v.clone(),
        };
        let top = self.body.fresh_label("cas");
        self.body.label(&top);
        let old_v = Val::reg(word, old.clone());
        let current = match dtype {
            DType::F64 => self.op1(Class::F64, "mov.b64", &old_v),
            DType::F32 => self.op1(Class::F32, "mov.b32", &old_v),
            d if d.is_int() => {
                let t = self.op1(Class::B32, "cvt.u32.u16", &old_v);
                self.normalize(t, d)
            }
            _ => old_v.clone(),
        };
        let cmp = if op == AtomicOp::Max {
            BinaryOp::Gt
        } else {
            BinaryOp::Lt
        };
        let wins = self.binary(cmp, dtype, v.clone(), current)?;
        self.body
            .inst_if(Some(&format!("!{}", wins.text)), format!("bra {done}"));
        let seen = self.tmp(word);
        self.emit(format!("atom.global.cas.{b} {seen}, {text}, {old}, {new}"));
        let changed = self.setp("ne", b, &Val::reg(word, seen.clone()), &old_v);
        self.emit(format!("mov.{b} {old}, {seen}"));
        self.body.inst_if(Some(&changed.text), format!("bra {top}"));
        self.body.label(&done);
        Ok(())
    }

    /// `*addr += v` by compare-and-swap, with the thread-IR addition.
    fn cas_add_loop(&mut self, dtype: DType, width: u32, addr: &str, v: &Val) -> Result<()> {
        let word = if width == 32 { Class::B32 } else { Class::B16 };
        let b = word.bits();
        let old = self.tmp(word);
        self.emit(format!("ld.global.{b} {old}, {addr}"));
        let top = self.body.fresh_label("cas");
        self.body.label(&top);
        let old_v = Val::reg(word, old.clone());
        let current = match dtype {
            DType::F32 => self.op1(Class::F32, "mov.b32", &old_v),
            d if d.is_int() => {
                let t = self.op1(Class::B32, "cvt.u32.u16", &old_v);
                self.normalize(t, d)
            }
            _ => old_v.clone(),
        };
        let sum = self.binary(BinaryOp::Add, dtype, current, v.clone())?;
        let new = match dtype {
            DType::F32 => self.op1(Class::B32, "mov.b32", &sum),
            d if d.is_int() => self.op1(Class::B16, "cvt.u16.u32", &sum),
            _ => sum,
        };
        let seen = self.tmp(word);
        self.emit(format!("atom.global.cas.{b} {seen}, {addr}, {old}, {new}"));
        let changed = self.setp("ne", b, &Val::reg(word, seen.clone()), &old_v);
        self.emit(format!("mov.{b} {old}, {seen}"));
        self.body.inst_if(Some(&changed.text), format!("bra {top}"));
        Ok(())
    }
}

/// A guard's condition, folded.
enum Cond {
    Always,
    Never(GuardElse),
    When(Val, GuardElse),
}

fn too_wide(e: &Emitter<'_>, width: u32, dtype: DType) -> PtxError {
    e.unsupported(format!(
        "a move of {width} {dtype} elements ({} bytes): PTX moves at most 16 bytes",
        u64::from(width) * dtype.bytes()
    ))
}

/// The zero immediate of a type's register.
fn zero_of(dtype: DType) -> Val {
    match dtype {
        DType::Bool => Val::bool(false),
        d if d.is_int() => Val::int(d, 0),
        d => Val::float(d, 0.0),
    }
}

/// Where the description's fragment of a matrix load disagrees with PTX's
/// `ldmatrix` (PTX ISA, "Warp-level matrix load instruction: ldmatrix"):
/// 8 rows of 16 bytes of 16-bit elements; without `.trans` lane `L` holds
/// `M[L/4][2(L%4) + e]`, with it `M[2(L%4) + e][L/4]`.
pub(crate) fn ldmatrix_mismatch(load: &MatrixLoad, trans: bool) -> Option<String> {
    if load.rows != 8 || load.row_bytes != 16 || load.element_bits != 16 {
        return Some(format!(
            "{} rows of {} bytes of {}-bit elements, PTX has 8 rows of 16 bytes of 16-bit elements",
            load.rows, load.row_bytes, load.element_bits
        ));
    }
    let fragment = match load.fragment(trans) {
        Ok(Some(f)) => f,
        Ok(None) => return Some("no transposed fragment".to_string()),
        Err(e) => return Some(e.to_string()),
    };
    if fragment.threads() != 32 || fragment.slots() != 2 {
        return Some(format!(
            "{} lanes × {} slots, PTX has 32 × 2",
            fragment.threads(),
            fragment.slots()
        ));
    }
    for lane in 0..32u64 {
        for e in 0..2u64 {
            let (r, c) = (lane / 4, 2 * (lane % 4) + e);
            let want = if trans { vec![c, r] } else { vec![r, c] };
            match fragment.element(lane, e) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    return Some(format!(
                        "lane {lane} slot {e} holds {got:?} in the description, PTX puts {want:?} there"
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

    /// The shipped descriptions' ldmatrix, plain and transposed, is PTX's;
    /// the two fragments swapped are not.
    #[test]
    fn shipped_ldmatrix_fragments_match_ptx() {
        for name in ["sm_80", "sm_90a"] {
            let t = tilec_core::target::builtin(name).expect("builtin target");
            let load = t.matrix_load("ldmatrix.m8n8.b16").expect("ldmatrix");
            assert_eq!(ldmatrix_mismatch(load, false), None, "{name}");
            assert_eq!(ldmatrix_mismatch(load, true), None, "{name} .trans");
            let mut swapped = load.clone();
            std::mem::swap(
                &mut swapped.fragment,
                swapped.transposed_fragment.as_mut().expect("transposed"),
            );
            assert!(ldmatrix_mismatch(&swapped, false).is_some(), "{name}");
        }
    }
}
