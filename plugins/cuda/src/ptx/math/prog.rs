//! Straight-line programs over `f64`, `f32`, 64-bit and 32-bit integers
//! and predicates: the form the math library is written in.
//!
//! A [`Program`] is a list of single-assignment operations, each of which
//! is exactly one PTX instruction with a precisely defined result
//! (`add.rn.f64`, `fma.rn.f64`, `cvt.rni.f64.f64`, `mul.hi.u64`,
//! `ld.const.u64`, ...). The same program is
//! - printed as the body of a PTX `.func` ([`Program::emit_func`]), and
//! - evaluated on the host (`Program::eval`, test builds) with Rust's IEEE arithmetic,
//!   which is what lets the tests measure each routine's accuracy on
//!   millions of inputs without a GPU.
//!
//! Every float operation carries an explicit rounding mode, so `ptxas` may
//! not contract or reorder it: the device computes what the host computes.
//! There is no control flow; special cases are computed alongside and
//! chosen with `selp`.

use std::fmt::Write as _;

use super::super::text::{Body, RegFile};
use super::super::value::Class;

/// The type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `f64`.
    F,
    /// `f32`. The float operations (`add`, `fma`, `round`, comparisons,
    /// ...) take the precision of their first operand.
    S,
    /// A 64-bit integer.
    I,
    /// A 32-bit integer.
    W,
    /// A predicate.
    P,
}

impl Ty {
    fn class(self) -> Class {
        match self {
            Ty::F => Class::F64,
            Ty::S => Class::F32,
            Ty::I => Class::B64,
            Ty::W => Class::B32,
            Ty::P => Class::Pred,
        }
    }
}

/// A value of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct V(u32);

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    /// Not equal; for floats true when either operand is NaN (`neu`).
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn float_name(self) -> &'static str {
        match self {
            Cmp::Eq => "eq",
            Cmp::Ne => "neu",
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
        }
    }

    fn int_name(self) -> &'static str {
        match self {
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
        }
    }

    #[cfg(test)]
    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// Rounding of a float to an integral float.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rnd {
    /// To nearest, ties to even (`rni`).
    Nearest,
    /// Toward negative infinity (`rmi`).
    Floor,
}

/// A constant table in the module's `.const` space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Table {
    /// The bits of 2/π, 64 per entry, after one leading zero entry.
    TwoOverPi,
}

impl Table {
    pub fn symbol(self) -> &'static str {
        match self {
            Table::TwoOverPi => "tilec_two_over_pi",
        }
    }

    pub fn words(self) -> &'static [u64] {
        match self {
            Table::TwoOverPi => &super::TWO_OVER_PI,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Param(usize),
    ConstF(f64),
    ConstI(u64),
    ConstW(u32),
    /// An `f32` constant, by its bits.
    ConstS(u32),
    Add(V, V),
    Sub(V, V),
    Mul(V, V),
    Div(V, V),
    Fma(V, V, V),
    Neg(V),
    Abs(V),
    Round(Rnd, V),
    /// `cvt.rzi.s64.f64`.
    FToI(V),
    /// `cvt.rzi.u32.f64`.
    FToW(V),
    /// `cvt.rn.f64.s64`.
    IToF(V),
    /// `cvt.rn.f64.u64`.
    UToF(V),
    /// `cvt.rn.f64.u32`.
    WToF(V),
    /// `cvt.rzi.s32.f32`.
    SToW(V),
    /// `mov.b32` to `f32` bits.
    WBitsS(V),
    /// `mov.b64` from `f64` bits.
    Bits(V),
    /// `mov.b64` to `f64` bits.
    FromBits(V),
    IAdd(V, V),
    ISub(V, V),
    IAnd(V, V),
    IOr(V, V),
    IMulLo(V, V),
    IMulHiU(V, V),
    /// `shl.b64` by a 32-bit amount (amounts ≥ 64 give 0).
    IShl(V, V),
    /// `shr.u64` (amounts ≥ 64 give 0).
    IShrU(V, V),
    /// `shr.s64` (amounts ≥ 64 give the sign).
    IShrS(V, V),
    WAdd(V, V),
    WSub(V, V),
    WAnd(V, V),
    WOr(V, V),
    WShl(V, V),
    WShrU(V, V),
    /// `shr.s32`.
    WShrS(V, V),
    /// `clz.b64`.
    Clz(V),
    /// `cvt.u64.u32`.
    WToI(V),
    /// `cvt.u32.u64` (the low 32 bits).
    IToW(V),
    FCmp(Cmp, V, V),
    /// `setp.nan.f64 a, a`.
    IsNan(V),
    ICmp(Cmp, bool, V, V),
    WCmp(Cmp, bool, V, V),
    Sel(V, V, V),
    PAnd(V, V),
    POr(V, V),
    PNot(V),
    /// Entry `index` of a table (`ld.const.u64`).
    Load(Table, V),
}

/// A straight-line program with typed parameters and results.
#[derive(Clone, Debug, Default)]
pub(crate) struct Program {
    ops: Vec<(Op, Ty)>,
    params: Vec<Ty>,
    results: Vec<V>,
}

/// A value during host evaluation.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    F(f64),
    S(f32),
    I(u64),
    W(u32),
    P(bool),
}

#[cfg(test)]
impl Value {
    fn f(self) -> f64 {
        match self {
            Value::F(x) => x,
            Value::S(x) => f64::from(x),
            _ => f64::NAN,
        }
    }
    fn s(self) -> f32 {
        match self {
            Value::S(x) => x,
            _ => f32::NAN,
        }
    }
    fn i(self) -> u64 {
        match self {
            Value::I(x) => x,
            _ => 0,
        }
    }
    fn w(self) -> u32 {
        match self {
            Value::W(x) => x,
            _ => 0,
        }
    }
    fn p(self) -> bool {
        matches!(self, Value::P(true))
    }
}

impl Program {
    fn push(&mut self, op: Op, ty: Ty) -> V {
        self.ops.push((op, ty));
        V(self.ops.len() as u32 - 1)
    }

    fn ty(&self, v: V) -> Ty {
        self.ops.get(v.0 as usize).map_or(Ty::F, |(_, t)| *t)
    }

    pub fn param(&mut self, ty: Ty) -> V {
        let index = self.params.len();
        self.params.push(ty);
        self.push(Op::Param(index), ty)
    }

    pub fn result(&mut self, v: V) {
        self.results.push(v);
    }

    pub fn result_types(&self) -> Vec<Ty> {
        self.results.iter().map(|&v| self.ty(v)).collect()
    }

    pub fn f(&mut self, x: f64) -> V {
        self.push(Op::ConstF(x), Ty::F)
    }
    pub fn i(&mut self, x: u64) -> V {
        self.push(Op::ConstI(x), Ty::I)
    }
    pub fn w(&mut self, x: u32) -> V {
        self.push(Op::ConstW(x), Ty::W)
    }
    pub fn s(&mut self, x: f32) -> V {
        self.push(Op::ConstS(x.to_bits()), Ty::S)
    }
    /// The float type of an operation on `a`: `f32` on `f32` values,
    /// `f64` otherwise.
    fn float_ty(&self, a: V) -> Ty {
        if self.ty(a) == Ty::S { Ty::S } else { Ty::F }
    }
    pub fn add(&mut self, a: V, b: V) -> V {
        self.push(Op::Add(a, b), self.float_ty(a))
    }
    pub fn sub(&mut self, a: V, b: V) -> V {
        self.push(Op::Sub(a, b), self.float_ty(a))
    }
    pub fn mul(&mut self, a: V, b: V) -> V {
        self.push(Op::Mul(a, b), self.float_ty(a))
    }
    pub fn div(&mut self, a: V, b: V) -> V {
        self.push(Op::Div(a, b), self.float_ty(a))
    }
    pub fn fma(&mut self, a: V, b: V, c: V) -> V {
        self.push(Op::Fma(a, b, c), self.float_ty(a))
    }
    pub fn neg(&mut self, a: V) -> V {
        self.push(Op::Neg(a), self.float_ty(a))
    }
    pub fn abs(&mut self, a: V) -> V {
        self.push(Op::Abs(a), self.float_ty(a))
    }
    pub fn round(&mut self, mode: Rnd, a: V) -> V {
        self.push(Op::Round(mode, a), self.float_ty(a))
    }
    /// An `f32` truncated to a signed 32-bit integer (NaN gives 0).
    pub fn s_to_w(&mut self, a: V) -> V {
        self.push(Op::SToW(a), Ty::W)
    }
    /// The `f32` with the bits of a 32-bit integer.
    pub fn bits_f32(&mut self, a: V) -> V {
        self.push(Op::WBitsS(a), Ty::S)
    }
    /// Arithmetic shift right of a 32-bit integer.
    pub fn wshr_s(&mut self, a: V, by: V) -> V {
        self.push(Op::WShrS(a, by), Ty::W)
    }
    pub fn f_to_i(&mut self, a: V) -> V {
        self.push(Op::FToI(a), Ty::I)
    }
    pub fn f_to_w(&mut self, a: V) -> V {
        self.push(Op::FToW(a), Ty::W)
    }
    pub fn i_to_f(&mut self, a: V) -> V {
        self.push(Op::IToF(a), Ty::F)
    }
    pub fn u_to_f(&mut self, a: V) -> V {
        self.push(Op::UToF(a), Ty::F)
    }
    pub fn w_to_f(&mut self, a: V) -> V {
        self.push(Op::WToF(a), Ty::F)
    }
    pub fn f64_bits(&mut self, a: V) -> V {
        self.push(Op::Bits(a), Ty::I)
    }
    pub fn bits_f64(&mut self, a: V) -> V {
        self.push(Op::FromBits(a), Ty::F)
    }
    pub fn iadd(&mut self, a: V, b: V) -> V {
        self.push(Op::IAdd(a, b), Ty::I)
    }
    pub fn isub(&mut self, a: V, b: V) -> V {
        self.push(Op::ISub(a, b), Ty::I)
    }
    pub fn iand(&mut self, a: V, b: V) -> V {
        self.push(Op::IAnd(a, b), Ty::I)
    }
    pub fn ior(&mut self, a: V, b: V) -> V {
        self.push(Op::IOr(a, b), Ty::I)
    }
    pub fn imul_lo(&mut self, a: V, b: V) -> V {
        self.push(Op::IMulLo(a, b), Ty::I)
    }
    pub fn imul_hi(&mut self, a: V, b: V) -> V {
        self.push(Op::IMulHiU(a, b), Ty::I)
    }
    pub fn ishl(&mut self, a: V, by: V) -> V {
        self.push(Op::IShl(a, by), Ty::I)
    }
    pub fn ishr_u(&mut self, a: V, by: V) -> V {
        self.push(Op::IShrU(a, by), Ty::I)
    }
    pub fn ishr_s(&mut self, a: V, by: V) -> V {
        self.push(Op::IShrS(a, by), Ty::I)
    }
    pub fn wadd(&mut self, a: V, b: V) -> V {
        self.push(Op::WAdd(a, b), Ty::W)
    }
    pub fn wsub(&mut self, a: V, b: V) -> V {
        self.push(Op::WSub(a, b), Ty::W)
    }
    pub fn wand(&mut self, a: V, b: V) -> V {
        self.push(Op::WAnd(a, b), Ty::W)
    }
    pub fn wor(&mut self, a: V, b: V) -> V {
        self.push(Op::WOr(a, b), Ty::W)
    }
    pub fn wshl(&mut self, a: V, by: V) -> V {
        self.push(Op::WShl(a, by), Ty::W)
    }
    pub fn wshr_u(&mut self, a: V, by: V) -> V {
        self.push(Op::WShrU(a, by), Ty::W)
    }
    pub fn clz(&mut self, a: V) -> V {
        self.push(Op::Clz(a), Ty::W)
    }
    pub fn w_to_i(&mut self, a: V) -> V {
        self.push(Op::WToI(a), Ty::I)
    }
    pub fn i_to_w(&mut self, a: V) -> V {
        self.push(Op::IToW(a), Ty::W)
    }
    pub fn fcmp(&mut self, cmp: Cmp, a: V, b: V) -> V {
        self.push(Op::FCmp(cmp, a, b), Ty::P)
    }
    pub fn is_nan(&mut self, a: V) -> V {
        self.push(Op::IsNan(a), Ty::P)
    }
    /// Signed (`signed`) or unsigned 64-bit comparison.
    pub fn icmp(&mut self, cmp: Cmp, signed: bool, a: V, b: V) -> V {
        self.push(Op::ICmp(cmp, signed, a, b), Ty::P)
    }
    pub fn wcmp(&mut self, cmp: Cmp, signed: bool, a: V, b: V) -> V {
        self.push(Op::WCmp(cmp, signed, a, b), Ty::P)
    }
    /// `p ? a : b`.
    pub fn sel(&mut self, p: V, a: V, b: V) -> V {
        let ty = self.ty(a);
        self.push(Op::Sel(p, a, b), ty)
    }
    pub fn pand(&mut self, a: V, b: V) -> V {
        self.push(Op::PAnd(a, b), Ty::P)
    }
    pub fn por(&mut self, a: V, b: V) -> V {
        self.push(Op::POr(a, b), Ty::P)
    }
    pub fn pnot(&mut self, a: V) -> V {
        self.push(Op::PNot(a), Ty::P)
    }
    pub fn load(&mut self, table: Table, index: V) -> V {
        self.push(Op::Load(table, index), Ty::I)
    }

    /// The tables the program reads.
    pub fn tables(&self) -> Vec<Table> {
        let mut out: Vec<Table> = self
            .ops
            .iter()
            .filter_map(|(op, _)| match op {
                Op::Load(t, _) => Some(*t),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Runs the program on the host.
    #[cfg(test)]
    pub fn eval(&self, args: &[Value]) -> Vec<Value> {
        let mut vals: Vec<Value> = Vec::with_capacity(self.ops.len());
        for (op, _) in &self.ops {
            let v = eval_op(*op, &vals, args);
            vals.push(v);
        }
        self.results
            .iter()
            .map(|r| vals.get(r.0 as usize).copied().unwrap_or(Value::P(false)))
            .collect()
    }

    /// The program's instructions appended to `body`, with `params` the
    /// registers holding the arguments and temporaries taken from `regs`;
    /// answers the registers holding the results. Both the `.func` form
    /// and inline expansion into a kernel use it.
    pub fn emit_into(&self, params: &[String], regs: &mut RegFile, body: &mut Body) -> Vec<String> {
        let mut names: Vec<String> = Vec::with_capacity(self.ops.len());
        for (op, ty) in &self.ops {
            let name = match op {
                Op::Param(i) => params.get(*i).cloned().unwrap_or_default(),
                _ => regs.temp(ty.class()),
            };
            if let Op::Load(table, index) = op {
                // Entry `index` of the table: its address is the table's
                // plus eight bytes per entry.
                let base = regs.temp(Class::B64);
                let index = names.get(index.0 as usize).cloned().unwrap_or_default();
                body.inst(format!("mov.u64 {base}, {}", table.symbol()));
                body.inst(format!("shl.b64 {name}, {index}, 3"));
                body.inst(format!("add.s64 {name}, {name}, {base}"));
                body.inst(format!("ld.const.u64 {name}, [{name}]"));
            } else if !matches!(op, Op::Param(_)) {
                body.inst(op_text(*op, *ty, &name, &names, &self.ops));
            }
            names.push(name);
        }
        self.results
            .iter()
            .map(|r| names.get(r.0 as usize).cloned().unwrap_or_default())
            .collect()
    }

    /// The program as a PTX `.func` named `name`.
    pub fn emit_func(&self, name: &str, out: &mut String) {
        let mut regs = RegFile::default();
        let mut body = Body::default();
        let params: Vec<String> = (0..self.params.len()).map(|i| format!("%in{i}")).collect();
        let rets: Vec<String> = (0..self.results.len())
            .map(|i| format!("%out{i}"))
            .collect();
        for p in params.iter().chain(&rets) {
            regs.reserve(p);
        }
        let results = self.emit_into(&params, &mut regs, &mut body);
        for ((ret, r), src) in rets.iter().zip(&self.results).zip(&results) {
            let ty = self.ty(*r);
            body.inst(format!("mov.{} {ret}, {src}", mov_ty(ty)));
        }
        body.inst("ret");
        let decl = |tys: &[Ty], names: &[String]| -> String {
            tys.iter()
                .zip(names)
                .map(|(t, n)| format!(".reg {} {n}", t.class().decl()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let result_types = self.result_types();
        let _ = writeln!(
            out,
            ".func ({}) {name}({})",
            decl(&result_types, &rets),
            decl(&self.params, &params)
        );
        out.push_str("{\n");
        regs.declarations(out);
        out.push('\n');
        body.render(out);
        out.push_str("}\n");
    }
}

fn mov_ty(ty: Ty) -> &'static str {
    match ty {
        Ty::F => "f64",
        Ty::S => "f32",
        Ty::I => "b64",
        Ty::W => "b32",
        Ty::P => "pred",
    }
}

/// The PTX instruction computing `op` into `d`.
fn op_text(op: Op, ty: Ty, d: &str, names: &[String], ops: &[(Op, Ty)]) -> String {
    let n = |v: V| names.get(v.0 as usize).map_or("?", String::as_str);
    // The float suffix of the result (`f`) or of an operand (`fo`).
    let float = |t: Ty| if t == Ty::S { "f32" } else { "f64" };
    let f = float(ty);
    let fo = |v: V| float(ops.get(v.0 as usize).map_or(Ty::F, |(_, t)| *t));
    let s = |cmp: Cmp, signed: bool, bits: u32| {
        let ty = if signed { "s" } else { "u" };
        format!("setp.{}.{ty}{bits}", cmp.int_name())
    };
    match op {
        Op::ConstF(x) => format!("mov.f64 {d}, 0d{:016X}", x.to_bits()),
        Op::ConstI(x) => format!("mov.b64 {d}, 0x{x:016X}"),
        Op::ConstW(x) => format!("mov.b32 {d}, 0x{x:08X}"),
        Op::ConstS(x) => format!("mov.f32 {d}, 0f{x:08X}"),
        Op::Add(a, b) => format!("add.rn.{f} {d}, {}, {}", n(a), n(b)),
        Op::Sub(a, b) => format!("sub.rn.{f} {d}, {}, {}", n(a), n(b)),
        Op::Mul(a, b) => format!("mul.rn.{f} {d}, {}, {}", n(a), n(b)),
        Op::Div(a, b) => format!("div.rn.{f} {d}, {}, {}", n(a), n(b)),
        Op::Fma(a, b, c) => format!("fma.rn.{f} {d}, {}, {}, {}", n(a), n(b), n(c)),
        Op::Neg(a) => format!("neg.{f} {d}, {}", n(a)),
        Op::Abs(a) => format!("abs.{f} {d}, {}", n(a)),
        Op::Round(mode, a) => {
            let m = match mode {
                Rnd::Nearest => "rni",
                Rnd::Floor => "rmi",
            };
            format!("cvt.{m}.{f}.{f} {d}, {}", n(a))
        }
        Op::SToW(a) => format!("cvt.rzi.s32.f32 {d}, {}", n(a)),
        Op::WBitsS(a) => format!("mov.b32 {d}, {}", n(a)),
        Op::FToI(a) => format!("cvt.rzi.s64.f64 {d}, {}", n(a)),
        Op::FToW(a) => format!("cvt.rzi.u32.f64 {d}, {}", n(a)),
        Op::IToF(a) => format!("cvt.rn.f64.s64 {d}, {}", n(a)),
        Op::UToF(a) => format!("cvt.rn.f64.u64 {d}, {}", n(a)),
        Op::WToF(a) => format!("cvt.rn.f64.u32 {d}, {}", n(a)),
        Op::Bits(a) | Op::FromBits(a) => format!("mov.b64 {d}, {}", n(a)),
        Op::IAdd(a, b) => format!("add.s64 {d}, {}, {}", n(a), n(b)),
        Op::ISub(a, b) => format!("sub.s64 {d}, {}, {}", n(a), n(b)),
        Op::IAnd(a, b) => format!("and.b64 {d}, {}, {}", n(a), n(b)),
        Op::IOr(a, b) => format!("or.b64 {d}, {}, {}", n(a), n(b)),
        Op::IMulLo(a, b) => format!("mul.lo.u64 {d}, {}, {}", n(a), n(b)),
        Op::IMulHiU(a, b) => format!("mul.hi.u64 {d}, {}, {}", n(a), n(b)),
        Op::IShl(a, b) => format!("shl.b64 {d}, {}, {}", n(a), n(b)),
        Op::IShrU(a, b) => format!("shr.u64 {d}, {}, {}", n(a), n(b)),
        Op::IShrS(a, b) => format!("shr.s64 {d}, {}, {}", n(a), n(b)),
        Op::WAdd(a, b) => format!("add.s32 {d}, {}, {}", n(a), n(b)),
        Op::WSub(a, b) => format!("sub.s32 {d}, {}, {}", n(a), n(b)),
        Op::WAnd(a, b) => format!("and.b32 {d}, {}, {}", n(a), n(b)),
        Op::WOr(a, b) => format!("or.b32 {d}, {}, {}", n(a), n(b)),
        Op::WShl(a, b) => format!("shl.b32 {d}, {}, {}", n(a), n(b)),
        Op::WShrU(a, b) => format!("shr.u32 {d}, {}, {}", n(a), n(b)),
        Op::WShrS(a, b) => format!("shr.s32 {d}, {}, {}", n(a), n(b)),
        Op::Clz(a) => format!("clz.b64 {d}, {}", n(a)),
        Op::WToI(a) => format!("cvt.u64.u32 {d}, {}", n(a)),
        Op::IToW(a) => format!("cvt.u32.u64 {d}, {}", n(a)),
        Op::FCmp(cmp, a, b) => {
            format!(
                "setp.{}.{} {d}, {}, {}",
                cmp.float_name(),
                fo(a),
                n(a),
                n(b)
            )
        }
        Op::IsNan(a) => format!("setp.nan.{} {d}, {}, {}", fo(a), n(a), n(a)),
        Op::ICmp(cmp, signed, a, b) => format!("{} {d}, {}, {}", s(cmp, signed, 64), n(a), n(b)),
        Op::WCmp(cmp, signed, a, b) => format!("{} {d}, {}, {}", s(cmp, signed, 32), n(a), n(b)),
        Op::Sel(p, a, b) => format!("selp.{} {d}, {}, {}, {}", mov_ty(ty), n(a), n(b), n(p)),
        Op::PAnd(a, b) => format!("and.pred {d}, {}, {}", n(a), n(b)),
        Op::POr(a, b) => format!("or.pred {d}, {}, {}", n(a), n(b)),
        Op::PNot(a) => format!("not.pred {d}, {}", n(a)),
        Op::Param(_) | Op::Load(..) => String::new(),
    }
}

#[cfg(test)]
fn eval_op(op: Op, vals: &[Value], args: &[Value]) -> Value {
    let g = |v: V| vals.get(v.0 as usize).copied().unwrap_or(Value::P(false));
    let f = |v: V| g(v).f();
    let s = |v: V| g(v).s();
    // `f32` operations when the first operand is an `f32`.
    let single = |v: V| matches!(g(v), Value::S(_));
    let i = |v: V| g(v).i();
    let w = |v: V| g(v).w();
    let shift64 = |x: u64, by: u32, right: bool| -> u64 {
        if by >= 64 {
            0
        } else if right {
            x >> by
        } else {
            x << by
        }
    };
    match op {
        Op::Param(k) => args.get(k).copied().unwrap_or(Value::F(f64::NAN)),
        Op::ConstF(x) => Value::F(x),
        Op::ConstI(x) => Value::I(x),
        Op::ConstW(x) => Value::W(x),
        Op::ConstS(x) => Value::S(f32::from_bits(x)),
        Op::Add(a, b) if single(a) => Value::S(s(a) + s(b)),
        Op::Sub(a, b) if single(a) => Value::S(s(a) - s(b)),
        Op::Mul(a, b) if single(a) => Value::S(s(a) * s(b)),
        Op::Div(a, b) if single(a) => Value::S(s(a) / s(b)),
        Op::Fma(a, b, c) if single(a) => Value::S(s(a).mul_add(s(b), s(c))),
        Op::Neg(a) if single(a) => Value::S(-s(a)),
        Op::Abs(a) if single(a) => Value::S(s(a).abs()),
        Op::Round(mode, a) if single(a) => Value::S(match mode {
            Rnd::Nearest => s(a).round_ties_even(),
            Rnd::Floor => s(a).floor(),
        }),
        Op::Add(a, b) => Value::F(f(a) + f(b)),
        Op::Sub(a, b) => Value::F(f(a) - f(b)),
        Op::Mul(a, b) => Value::F(f(a) * f(b)),
        Op::Div(a, b) => Value::F(f(a) / f(b)),
        Op::Fma(a, b, c) => Value::F(f(a).mul_add(f(b), f(c))),
        Op::Neg(a) => Value::F(-f(a)),
        Op::Abs(a) => Value::F(f(a).abs()),
        Op::Round(mode, a) => Value::F(match mode {
            Rnd::Nearest => f(a).round_ties_even(),
            Rnd::Floor => f(a).floor(),
        }),
        // f32 → s32 maps NaN to 0 (PTX ISA, cvt), as Rust's `as` does.
        Op::SToW(a) => Value::W(s(a) as i32 as u32),
        Op::WBitsS(a) => Value::S(f32::from_bits(w(a))),
        // f64 → s64 maps NaN to the most negative value (PTX ISA, cvt).
        Op::FToI(a) => Value::I(if f(a).is_nan() {
            i64::MIN as u64
        } else {
            f(a) as i64 as u64
        }),
        Op::FToW(a) => Value::W(if f(a).is_nan() { 1 << 31 } else { f(a) as u32 }),
        Op::IToF(a) => Value::F(i(a) as i64 as f64),
        Op::UToF(a) => Value::F(i(a) as f64),
        Op::WToF(a) => Value::F(f64::from(w(a))),
        Op::Bits(a) => Value::I(f(a).to_bits()),
        Op::FromBits(a) => Value::F(f64::from_bits(i(a))),
        Op::IAdd(a, b) => Value::I(i(a).wrapping_add(i(b))),
        Op::ISub(a, b) => Value::I(i(a).wrapping_sub(i(b))),
        Op::IAnd(a, b) => Value::I(i(a) & i(b)),
        Op::IOr(a, b) => Value::I(i(a) | i(b)),
        Op::IMulLo(a, b) => Value::I(i(a).wrapping_mul(i(b))),
        Op::IMulHiU(a, b) => Value::I(((u128::from(i(a)) * u128::from(i(b))) >> 64) as u64),
        Op::IShl(a, b) => Value::I(shift64(i(a), w(b), false)),
        Op::IShrU(a, b) => Value::I(shift64(i(a), w(b), true)),
        Op::IShrS(a, b) => Value::I((i(a) as i64 >> w(b).min(63)) as u64),
        Op::WAdd(a, b) => Value::W(w(a).wrapping_add(w(b))),
        Op::WSub(a, b) => Value::W(w(a).wrapping_sub(w(b))),
        Op::WAnd(a, b) => Value::W(w(a) & w(b)),
        Op::WOr(a, b) => Value::W(w(a) | w(b)),
        Op::WShl(a, b) => Value::W(if w(b) >= 32 { 0 } else { w(a) << w(b) }),
        Op::WShrU(a, b) => Value::W(if w(b) >= 32 { 0 } else { w(a) >> w(b) }),
        Op::WShrS(a, b) => Value::W((w(a) as i32 >> w(b).min(31)) as u32),
        Op::Clz(a) => Value::W(i(a).leading_zeros()),
        Op::WToI(a) => Value::I(u64::from(w(a))),
        Op::IToW(a) => Value::W(i(a) as u32),
        Op::FCmp(cmp, a, b) => {
            let (x, y) = (f(a), f(b));
            Value::P(if cmp == Cmp::Ne {
                x != y
            } else {
                cmp.holds(x, y)
            })
        }
        Op::IsNan(a) => Value::P(f(a).is_nan()),
        Op::ICmp(cmp, signed, a, b) => Value::P(if signed {
            cmp.holds(i(a) as i64, i(b) as i64)
        } else {
            cmp.holds(i(a), i(b))
        }),
        Op::WCmp(cmp, signed, a, b) => Value::P(if signed {
            cmp.holds(w(a) as i32, w(b) as i32)
        } else {
            cmp.holds(w(a), w(b))
        }),
        Op::Sel(p, a, b) => {
            if g(p).p() {
                g(a)
            } else {
                g(b)
            }
        }
        Op::PAnd(a, b) => Value::P(g(a).p() && g(b).p()),
        Op::POr(a, b) => Value::P(g(a).p() || g(b).p()),
        Op::PNot(a) => Value::P(!g(a).p()),
        Op::Load(table, index) => Value::I(
            table
                .words()
                .get(i(index) as usize)
                .copied()
                .unwrap_or_default(),
        ),
    }
}
