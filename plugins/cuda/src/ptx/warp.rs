//! Warp-level operations: member masks and shuffles.
//!
//! **Member masks.** `shfl.sync` must name exactly the lanes that execute
//! it. A kernel that shuffles computes its warp's mask on entry (all 32
//! lanes, or the existing lanes of a last, partial warp); an `if` or `for`
//! whose body shuffles narrows it with `vote.sync.ballot` of its condition
//! among the current members, so the mask always equals the set of lanes
//! the thread-IR lockstep semantics has active.
//!
//! **Shuffles.** CUDA's `__shfl_*_sync(mask, v, arg, width)`: the `c`
//! operand packs the segment mask `(32 − width) << 8` with the clamp
//! (`0x1f`; `0` for `up`). The hardware modes agree with thread IR for an
//! `idx` of any lane, `up`/`down` by a constant in `0 .. 32` and `xor`
//! with a constant in `0 .. width`. Any other argument (a register, a
//! negative or large constant) takes the general path: the source lane is
//! computed (`lane ∓ arg` or `lane ^ arg`), replaced by the own lane when
//! it leaves the caller's `width`-lane group, and read with `idx` over the
//! whole warp. Values travel as 32-bit words: predicates as 0/1, 16-bit
//! types zero-extended, 64-bit types as two words.

use tilec_core::ir::DType;
use tilec_core::thread::{Expr, RegRef, ShuffleKind, Special};

use super::PtxError;
use super::kernel::Emitter;
use super::value::{Class, Val};

type Result<T> = std::result::Result<T, PtxError>;

impl Emitter<'_> {
    /// The kernel's warp member mask (prologue).
    pub fn warp_mask(&mut self) -> Val {
        let warp = self.target.warp;
        let partial = self.k.threads % warp;
        if partial == 0 {
            return Val::bits(Class::B32, 0xFFFF_FFFF);
        }
        let tid = self.special(Special::ThreadIdx);
        let shift = warp.trailing_zeros();
        let w = self.op2(
            Class::B32,
            "shr.u32",
            &tid,
            &Val::int(DType::U32, i64::from(shift)),
        );
        let last = Val::int(DType::U32, i64::from(self.k.threads / warp));
        let in_last = self.setp("eq", "u32", &w, &last);
        let r = self.regs.named(Class::B32, "warpmask");
        let part = Val::bits(Class::B32, (1u64 << partial) - 1);
        self.emit(format!("selp.b32 {r}, {part}, 0xFFFFFFFF, {in_last}"));
        Val::reg(Class::B32, r)
    }

    /// The lanes among the current members where `p` holds.
    pub fn ballot(&mut self, p: &Val) -> Val {
        let p = self.pred(p);
        let mask = self.mask.clone();
        self.op2(Class::B32, "vote.sync.ballot.b32", &p, &mask)
    }

    pub fn shuffle(
        &mut self,
        kind: ShuffleKind,
        dst: &RegRef,
        value: &Expr,
        lane: &Expr,
        width: u32,
    ) -> Result<()> {
        if width == 0 || width > self.target.warp || !width.is_power_of_two() {
            return Err(self.unsupported(format!("a shuffle width of {width}")));
        }
        let v = self.expr(value)?;
        let arg = self.expr(lane)?;
        let seg = u64::from(32 - width) << 8;
        let constant = arg.as_int();
        let (mode, b, c) = match kind {
            ShuffleKind::Idx => ("idx", self.low_word(&arg), seg | 0x1F),
            ShuffleKind::Up if constant.is_some_and(|k| (0..32).contains(&k)) => ("up", arg, seg),
            ShuffleKind::Down if constant.is_some_and(|k| (0..32).contains(&k)) => {
                ("down", arg, seg | 0x1F)
            }
            ShuffleKind::Xor if constant.is_some_and(|k| (0..i64::from(width)).contains(&k)) => {
                ("bfly", arg, seg | 0x1F)
            }
            _ => ("idx", self.source_lane(kind, &arg, width), 0x1F),
        };
        let words = self.payload(&v);
        let c = Val::bits(Class::B32, c);
        let mask = self.mask.clone();
        let moved: Vec<Val> = words
            .iter()
            .map(|w| {
                let d = self.tmp(w.class);
                self.emit(format!("shfl.sync.{mode}.b32 {d}, {w}, {b}, {c}, {mask}"));
                Val::reg(w.class, d)
            })
            .collect();
        let r = self.payload_value(&moved, v.class);
        let places = self.places(dst, 1)?;
        for p in &places {
            self.write_place(p, &r, None);
        }
        Ok(())
    }

    /// The low 32 bits of an integer.
    fn low_word(&mut self, v: &Val) -> Val {
        if v.class == Class::B64 {
            self.op1(Class::B32, "cvt.u32.u64", v)
        } else {
            v.clone()
        }
    }

    /// The thread-IR source lane of an `up`/`down`/`xor` shuffle, or the
    /// own lane when it falls outside the caller's group.
    fn source_lane(&mut self, kind: ShuffleKind, arg: &Val, width: u32) -> Val {
        // Any |arg| ≥ 32 leaves the group; clamping keeps 32-bit arithmetic
        // exact.
        let arg = if arg.class == Class::B64 {
            let a = self.op2(Class::B64, "min.s64", arg, &Val::int(DType::I64, 64));
            let a = self.op2(Class::B64, "max.s64", &a, &Val::int(DType::I64, -64));
            self.op1(Class::B32, "cvt.u32.u64", &a)
        } else {
            arg.clone()
        };
        let lane = self.special(Special::LaneId);
        let first = self.op2(
            Class::B32,
            "and.b32",
            &lane,
            &Val::bits(Class::B32, !(u64::from(width) - 1)),
        );
        let op = match kind {
            ShuffleKind::Up => "sub.s32",
            ShuffleKind::Down => "add.s32",
            _ => "xor.b32",
        };
        let l = self.op2(Class::B32, op, &lane, &arg);
        let end = self.op2(
            Class::B32,
            "add.s32",
            &first,
            &Val::int(DType::I32, i64::from(width)),
        );
        let ge = self.setp("ge", "s32", &l, &first);
        let lt = self.setp("lt", "s32", &l, &end);
        let inside = self.op2(Class::Pred, "and.pred", &ge, &lt);
        self.selp(&l, &lane, &inside)
    }

    /// A value as the 32-bit words a shuffle moves.
    fn payload(&mut self, v: &Val) -> Vec<Val> {
        match v.class {
            Class::Pred => vec![self.selp(&Val::bits(Class::B32, 1), &Val::bits(Class::B32, 0), v)],
            Class::B16 => {
                let r = self.in_reg(v);
                vec![self.op1(Class::B32, "cvt.u32.u16", &r)]
            }
            Class::B64 | Class::F64 => {
                let r = self.in_reg(v);
                let (lo, hi) = (self.tmp(Class::B32), self.tmp(Class::B32));
                self.emit(format!("mov.b64 {{{lo}, {hi}}}, {r}"));
                vec![Val::reg(Class::B32, lo), Val::reg(Class::B32, hi)]
            }
            _ => vec![self.in_reg(v)],
        }
    }

    /// The inverse of [`Self::payload`].
    fn payload_value(&mut self, words: &[Val], class: Class) -> Val {
        match (class, words) {
            (Class::Pred, [w]) => self.setp("ne", "u32", w, &Val::bits(Class::B32, 0)),
            (Class::B16, [w]) => self.op1(Class::B16, "cvt.u16.u32", w),
            (Class::B64 | Class::F64, [lo, hi]) => {
                let d = self.tmp(class);
                self.emit(format!("mov.b64 {d}, {{{lo}, {hi}}}"));
                Val::reg(class, d)
            }
            (_, [w, ..]) => w.clone(),
            (_, []) => Val::int(DType::I32, 0),
        }
    }
}
