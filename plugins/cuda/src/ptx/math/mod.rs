//! The math library: accurate elementary functions and the float8
//! conversions, as PTX `.func`s or expanded inline.
//!
//! PTX has no accurate transcendental instructions (only the `.approx`
//! forms), so every routine here is written out with explicit rounding
//! ([`prog`]). Most are in `f64` arithmetic and emitted once per module
//! when a kernel calls them; narrower types call the `f64` routine and
//! round the result once into their type, which keeps `f32`, `f16` and
//! `bf16` results within an ulp of the correctly rounded value; the `f64`
//! results themselves are within a couple of ulps. `exp` and `exp2` of
//! `f32` and narrower types have their own `f32` routines (the ones
//! softmax and attention call per element), expanded inline at each call:
//! within two `f32` ulps, which is the conformance bound for the two
//! operators. The tests measure every routine on the host by evaluating
//! the same programs. The algorithms:
//!
//! - `exp`, `exp2`: `x = k·ln2 + r` (Cody–Waite with a 42-bit `ln2` head so
//!   that `k·ln2_hi` is exact), a degree-13 Taylor polynomial for
//!   `exp(r) − 1` on `|r| ≤ ln2/2`, and scaling by `2^k` in two halves so
//!   that subnormal results are rounded once.
//! - `exp`, `exp2` in `f32`: the same reduction (`k = rint(x)` for
//!   `exp2`, Cody–Waite with an `f32` head and tail of `ln2` for `exp`), a
//!   degree-7 Taylor polynomial, scaling by `2^k` in two halves.
//! - `log`, `log2`: `x = m·2^e` with `m ∈ [√½, √2)`, `log m = 2·atanh(s)`
//!   with `s = (m−1)/(m+1)` (odd series to `s^23`), combined with `e·ln2`
//!   in double-double so that the final sum rounds once.
//! - `sin`, `cos`: Payne–Hanek reduction for every `|x| > π/4`: the
//!   integer mantissa times a 192-bit window of 2/π taken from a table
//!   (64-bit multiplies), giving the quadrant and a 128-bit fraction,
//!   converted to a double-double and multiplied by π/2; then Taylor
//!   kernels on `[−π/4, π/4]` that use the reduced argument's low part.
//! - `tanh`: `expm1(2|x|) / (expm1(2|x|) + 2)` with the sign restored,
//!   `x` itself below `2^-28` and `±1` above 22.
//! - `sigmoid`: `1 / (1 + exp(−x))`, the reference's own formula.
//! - `pow`: `exp(y·log|x|)` with the IEEE special cases (signs for odd
//!   integer `y`, NaN for negative `x` and non-integer `y`, `pow(x, 0) = 1`,
//!   `pow(1, y) = 1`); accurate for results of `f32` and narrower types
//!   only, so the emitter refuses `f64` `pow`.
//! - float8 (`e4m3` "fn", `e5m2`): decoding by fields, encoding by scaling
//!   to the quantum of the value's binade and rounding to nearest even,
//!   overflowing to NaN (`e4m3`) or infinity (`e5m2`) as the reference does.

pub(crate) mod fp8;
pub(crate) mod prog;
pub(crate) mod routines;

use prog::{Program, Table, Ty};

/// A library routine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Routine {
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Pow,
    /// `2^x` in `f32` arithmetic, for results of `f32` and narrower types.
    Exp2F32,
    /// `e^x` in `f32` arithmetic, likewise.
    ExpF32,
    E4m3ToF64,
    E5m2ToF64,
    F64ToE4m3,
    F64ToE5m2,
}

impl Routine {
    pub const ALL: [Routine; 15] = [
        Routine::Exp,
        Routine::Exp2,
        Routine::Log,
        Routine::Log2,
        Routine::Sin,
        Routine::Cos,
        Routine::Tanh,
        Routine::Sigmoid,
        Routine::Pow,
        Routine::Exp2F32,
        Routine::ExpF32,
        Routine::E4m3ToF64,
        Routine::E5m2ToF64,
        Routine::F64ToE4m3,
        Routine::F64ToE5m2,
    ];

    /// The `.func` name.
    pub fn symbol(self) -> &'static str {
        match self {
            Routine::Exp => "tilec_exp",
            Routine::Exp2 => "tilec_exp2",
            Routine::Log => "tilec_log",
            Routine::Log2 => "tilec_log2",
            Routine::Sin => "tilec_sin",
            Routine::Cos => "tilec_cos",
            Routine::Tanh => "tilec_tanh",
            Routine::Sigmoid => "tilec_sigmoid",
            Routine::Pow => "tilec_pow",
            Routine::Exp2F32 => "tilec_exp2f",
            Routine::ExpF32 => "tilec_expf",
            Routine::E4m3ToF64 => "tilec_e4m3_to_f64",
            Routine::E5m2ToF64 => "tilec_e5m2_to_f64",
            Routine::F64ToE4m3 => "tilec_f64_to_e4m3",
            Routine::F64ToE5m2 => "tilec_f64_to_e5m2",
        }
    }

    /// The routine as a program.
    pub fn program(self) -> Program {
        let mut p = Program::default();
        let result = match self {
            Routine::Pow => {
                let x = p.param(Ty::F);
                let y = p.param(Ty::F);
                routines::pow(&mut p, x, y)
            }
            Routine::Exp2F32 | Routine::ExpF32 => {
                let x = p.param(Ty::S);
                if self == Routine::Exp2F32 {
                    routines::exp2_f32(&mut p, x)
                } else {
                    routines::exp_f32(&mut p, x)
                }
            }
            Routine::E4m3ToF64 | Routine::E5m2ToF64 => {
                let bits = p.param(Ty::W);
                fp8::decode(&mut p, fp8::Format::of(self), bits)
            }
            _ => {
                let x = p.param(Ty::F);
                match self {
                    Routine::Exp => routines::exp(&mut p, x),
                    Routine::Exp2 => routines::exp2(&mut p, x),
                    Routine::Log => routines::log(&mut p, x),
                    Routine::Log2 => routines::log2(&mut p, x),
                    Routine::Sin => routines::sin(&mut p, x),
                    Routine::Cos => routines::cos(&mut p, x),
                    Routine::Tanh => routines::tanh(&mut p, x),
                    Routine::Sigmoid => routines::sigmoid(&mut p, x),
                    _ => fp8::encode(&mut p, fp8::Format::of(self), x),
                }
            }
        };
        p.result(result);
        p
    }

    /// Whether calls are expanded inline rather than emitted as a `.func`:
    /// the short `f32` routines, where a call's overhead would be a large
    /// part of the cost and kernels call them per element.
    pub fn inline(self) -> bool {
        matches!(self, Routine::Exp2F32 | Routine::ExpF32)
    }

    /// The tables the routine reads.
    pub fn tables(self) -> Vec<Table> {
        self.program().tables()
    }
}

/// The bits of 2/π, 64 to an entry, most significant first, after one
/// all-zero entry (so that a window may start up to 63 bits before the
/// binary point). Computed from π by integer arithmetic (Machin's
/// formula) to 1600 bits; the `sin`/`cos` tests check reductions of huge
/// arguments against the host's libm, which would catch a wrong word.
pub(crate) const TWO_OVER_PI: [u64; 23] = [
    0x0000_0000_0000_0000,
    0xA2F9_836E_4E44_1529,
    0xFC27_57D1_F534_DDC0,
    0xDB62_9599_3C43_9041,
    0xFE51_63AB_DEBB_C561,
    0xB724_6E3A_424D_D2E0,
    0x0649_2EEA_09D1_921C,
    0xFE1D_EB1C_B129_A73E,
    0xE882_35F5_2EBB_4484,
    0xE99C_7026_B45F_7E41,
    0x3991_D639_8353_39F4,
    0x9C84_5F8B_BDF9_283B,
    0x1FF8_97FF_DE05_980F,
    0xEF2F_118B_5A0A_6D1F,
    0x6D36_7ECF_27CB_09B7,
    0x4F46_3F66_9E5F_EA2D,
    0x7527_BAC7_EBE5_F17B,
    0x3D07_39F7_8A52_92EA,
    0x6BFB_5FB1_1F8D_5D08,
    0x5603_3046_FC7B_6BAB,
    0xF0CF_BC20_9AF4_361D,
    0xA9E3_9161_5EE6_1B08,
    0x6599_855F_14A0_6840,
];

/// The `.const` declaration of a table.
pub(crate) fn table_decl(table: Table, out: &mut String) {
    let words: Vec<String> = table
        .words()
        .iter()
        .map(|w| format!("0x{w:016X}"))
        .collect();
    out.push_str(&format!(
        ".const .align 8 .b64 {}[{}] = {{\n  {}\n}};\n",
        table.symbol(),
        words.len(),
        words.join(",\n  ")
    ));
}
