//! The OCP float8 formats as the reference defines them: decoding into
//! `f64` (exact) and encoding from `f64` with round-to-nearest-even, where
//! a value beyond the largest finite one becomes NaN in `e4m3` ("fn": no
//! infinity) and infinity in `e5m2` (no saturation). Bits travel in the
//! low byte of a 32-bit value.

use super::Routine;
use super::prog::{Cmp, Program, Rnd, V};

/// One of the two formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    E4m3,
    E5m2,
}

impl Format {
    pub fn of(r: Routine) -> Format {
        match r {
            Routine::E5m2ToF64 | Routine::F64ToE5m2 => Format::E5m2,
            _ => Format::E4m3,
        }
    }

    fn man_bits(self) -> u32 {
        match self {
            Format::E4m3 => 3,
            Format::E5m2 => 2,
        }
    }

    fn exp_mask(self) -> u32 {
        match self {
            Format::E4m3 => 0xF,
            Format::E5m2 => 0x1F,
        }
    }

    fn bias(self) -> u32 {
        match self {
            Format::E4m3 => 7,
            Format::E5m2 => 15,
        }
    }

    /// The largest exponent field of a finite value.
    fn max_field(self) -> u32 {
        match self {
            Format::E4m3 => 15,
            Format::E5m2 => 30,
        }
    }

    fn nan_bits(self) -> u32 {
        match self {
            Format::E4m3 => 0x7F,
            Format::E5m2 => 0x7E,
        }
    }

    /// What an overflow gives.
    fn overflow_bits(self) -> u32 {
        match self {
            Format::E4m3 => 0x7F,
            Format::E5m2 => 0x7C,
        }
    }
}

/// `2^(field − bias − man)` for a 32-bit `field` as an `f64`.
fn field_scale(p: &mut Program, field: V, f: Format) -> V {
    let field = p.w_to_i(field);
    let offset = p.i(1023 - u64::from(f.bias() + f.man_bits()));
    let biased = p.iadd(field, offset);
    let by = p.w(52);
    let bits = p.ishl(biased, by);
    p.bits_f64(bits)
}

pub(crate) fn decode(p: &mut Program, f: Format, bits: V) -> V {
    let m = f.man_bits();
    let byte = p.w(0xFF);
    let b = p.wand(bits, byte);
    let by_m = p.w(m);
    let field = p.wshr_u(b, by_m);
    let emask = p.w(f.exp_mask());
    let field = p.wand(field, emask);
    let mmask = p.w((1 << m) - 1);
    let man = p.wand(b, mmask);
    let zero = p.w(0);
    let sub = p.wcmp(Cmp::Eq, false, field, zero);
    let implicit = p.w(1 << m);
    let full = p.wor(man, implicit);
    let mant = p.sel(sub, man, full);
    let one = p.w(1);
    let eff = p.sel(sub, one, field);
    let scale = field_scale(p, eff, f);
    let mant = p.w_to_f(mant);
    let v = p.mul(mant, scale);
    let sign_bit = p.w(0x80);
    let sign = p.wand(b, sign_bit);
    let negative = p.wcmp(Cmp::Ne, false, sign, zero);
    let nv = p.neg(v);
    let v = p.sel(negative, nv, v);
    let nan = p.f(f64::NAN);
    match f {
        Format::E4m3 => {
            let pattern = p.w(0x7F);
            let low = p.w(0x7F);
            let mag = p.wand(b, low);
            let is_nan = p.wcmp(Cmp::Eq, false, mag, pattern);
            p.sel(is_nan, nan, v)
        }
        Format::E5m2 => {
            let all = p.w(0x1F);
            let special = p.wcmp(Cmp::Eq, false, field, all);
            let is_inf = p.wcmp(Cmp::Eq, false, man, zero);
            let inf = p.f(f64::INFINITY);
            let ninf = p.f(f64::NEG_INFINITY);
            let signed_inf = p.sel(negative, ninf, inf);
            let s = p.sel(is_inf, signed_inf, nan);
            p.sel(special, s, v)
        }
    }
}

pub(crate) fn encode(p: &mut Program, f: Format, x: V) -> V {
    let m = f.man_bits();
    let bits = p.f64_bits(x);
    let by63 = p.w(63);
    let sign = p.ishr_u(bits, by63);
    let sign = p.i_to_w(sign);
    let by7 = p.w(7);
    let sign = p.wshl(sign, by7);
    let a = p.abs(x);
    // The unbiased exponent of a, at least the format's minimum.
    let by52 = p.w(52);
    let field = p.ishr_u(bits, by52);
    let fmask = p.i(0x7FF);
    let field = p.iand(field, fmask);
    let bias = p.i(1023);
    let e = p.isub(field, bias);
    let min_exp = 1 - i64::from(f.bias());
    let min = p.i(min_exp as u64);
    let low = p.icmp(Cmp::Lt, true, e, min);
    let e = p.sel(low, min, e);
    // a / quantum, quantum = 2^(e − man): exact, then rounded to an integer.
    let top = p.i(1023 + u64::from(m));
    let sbits = p.isub(top, e);
    let sbits = p.ishl(sbits, by52);
    let scale = p.bits_f64(sbits);
    let scaled = p.mul(a, scale);
    let r = p.round(Rnd::Nearest, scaled);
    let ri = p.f_to_w(r);
    let implicit = p.w(1 << m);
    let normal = p.wcmp(Cmp::Ge, false, ri, implicit);
    let ew = p.i_to_w(e);
    let fbias = p.w(f.bias());
    let nfield = p.wadd(ew, fbias);
    let zero = p.w(0);
    let field = p.sel(normal, nfield, zero);
    let nman = p.wsub(ri, implicit);
    let man = p.sel(normal, nman, ri);
    // Rounding up to the next binade.
    let carry = p.wcmp(Cmp::Ge, false, man, implicit);
    let cman = p.wsub(man, implicit);
    let man = p.sel(carry, cman, man);
    let one = p.w(1);
    let cfield = p.wadd(field, one);
    let field = p.sel(carry, cfield, field);
    let max = p.w(f.max_field());
    let mut overflow = p.wcmp(Cmp::Gt, false, field, max);
    if f == Format::E4m3 {
        // Field 15 with mantissa 7 is the NaN pattern, not 480.
        let at_max = p.wcmp(Cmp::Eq, false, field, max);
        let seven = p.w(7);
        let full = p.wcmp(Cmp::Eq, false, man, seven);
        let nan_pattern = p.pand(at_max, full);
        overflow = p.por(overflow, nan_pattern);
    }
    let by_m = p.w(m);
    let out = p.wshl(field, by_m);
    let out = p.wor(out, man);
    let big = p.w(f.overflow_bits());
    let out = p.sel(overflow, big, out);
    let out = p.wor(out, sign);
    let is_nan = p.is_nan(x);
    let nan = p.w(f.nan_bits());
    p.sel(is_nan, nan, out)
}

#[cfg(test)]
mod tests {
    use super::super::Routine;
    use super::super::prog::Value;
    use tilec_core::ir::DType;

    fn decode(r: Routine, b: u32) -> f64 {
        match r.program().eval(&[Value::W(b)]).first() {
            Some(Value::F(x)) => *x,
            other => panic!("{other:?}"),
        }
    }

    fn encode(r: Routine, x: f64) -> u32 {
        match r.program().eval(&[Value::F(x)]).first() {
            Some(Value::W(b)) => *b,
            other => panic!("{other:?}"),
        }
    }

    /// Every byte decodes to a value the reference rounds to itself, and
    /// encoding it gives the byte back (NaNs: some NaN).
    #[test]
    fn every_byte_round_trips() {
        for (dec, enc, dtype) in [
            (Routine::E4m3ToF64, Routine::F64ToE4m3, DType::F8E4M3),
            (Routine::E5m2ToF64, Routine::F64ToE5m2, DType::F8E5M2),
        ] {
            for b in 0..256u32 {
                let x = decode(dec, b);
                if x.is_nan() {
                    assert!(decode(dec, encode(enc, x)).is_nan(), "{dtype} {b:#x}");
                    continue;
                }
                assert_eq!(dtype.round_f64(x).to_bits(), x.to_bits(), "{dtype} {b:#x}");
                assert_eq!(encode(enc, x), b, "{dtype} {b:#x} = {x}");
            }
        }
    }

    /// Encoding rounds like the reference, including ties, subnormals,
    /// overflow and the values between the largest finite and infinity.
    #[test]
    fn encoding_matches_the_reference() {
        let mut state = 77u64;
        let mut values = vec![
            0.0,
            -0.0,
            448.0,
            464.0,
            479.9,
            480.0,
            500.0,
            57344.0,
            61440.0,
            1e6,
            1.0625,
            1.1875,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e-300,
            2f64.powi(-10),
            2f64.powi(-9),
            2f64.powi(-17),
        ];
        for _ in 0..50000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mag = ((state >> 11) as f64 / (1u64 << 53) as f64) * 40.0 - 20.0;
            let sign = if state & 1 == 1 { -1.0 } else { 1.0 };
            values.push(sign * 2f64.powf(mag));
        }
        for (dec, enc, dtype) in [
            (Routine::E4m3ToF64, Routine::F64ToE4m3, DType::F8E4M3),
            (Routine::E5m2ToF64, Routine::F64ToE5m2, DType::F8E5M2),
        ] {
            for &x in &values {
                let got = decode(dec, encode(enc, x));
                let want = dtype.round_f64(x);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{dtype}: {x:e} → {got:e}, want {want:e}"
                );
            }
        }
    }
}
