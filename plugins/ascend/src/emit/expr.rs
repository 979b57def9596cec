//! Scalar expressions as C++ for the AI core's scalar unit.
//!
//! Every expression is written with its Tile IR type made explicit:
//! 16-bit floats compute in `float` and round back (`half(float(a) +
//! float(b))`), integers compute in 64 bits and wrap to their type, math
//! functions go through the `tl_*` helpers of the kernel's prelude, which
//! compute in `double` and round once, as the reference interpreter does.

use tilec_core::ir::{
    BinaryOp, DType, DTypeKind, Expr, Function, Handle, Literal, UnaryOp, VarKind,
};

/// The C++ spelling of an element type.
pub fn ctype(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "bool",
        DType::I8 => "int8_t",
        DType::I16 => "int16_t",
        DType::I32 => "int32_t",
        DType::I64 => "int64_t",
        DType::U8 => "uint8_t",
        DType::U16 => "uint16_t",
        DType::U32 => "uint32_t",
        DType::U64 => "uint64_t",
        DType::F16 => "half",
        DType::BF16 => "bfloat16_t",
        DType::F32 => "float",
        DType::F64 => "double",
        _ => return None,
    })
}

fn is_float(d: DType) -> bool {
    d.kind() == DTypeKind::Float
}

/// A floating literal as C++ that converts exactly to `dtype`.
pub fn float_literal(v: f64, dtype: DType) -> String {
    let ty = ctype(dtype).unwrap_or("float");
    let body = if v.is_nan() {
        "NAN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "INFINITY" } else { "-INFINITY" }.to_string()
    } else {
        format!("{v:?}")
    };
    match dtype {
        DType::F64 => body,
        DType::F32 => format!("float({body})"),
        _ => format!("{ty}(float({body}))"),
    }
}

/// How a buffer read appears in an expression; supplied by the emitter,
/// which knows where each buffer lives.
pub trait Loads {
    fn load(
        &self,
        buffer: Handle<tilec_core::ir::Buffer>,
        indices: &[String],
    ) -> Result<String, String>;
    fn var(&self, var: Handle<tilec_core::ir::Var>) -> String;
}

/// `e` as a C++ expression of its C++ type.
pub fn expr(f: &Function, e: Handle<Expr>, env: &dyn Loads) -> Result<String, String> {
    let ty = f.ty(e);
    let cty = ctype(ty)
        .ok_or_else(|| format!("values of type {} are not supported", ty.tilelang_name()))?;
    Ok(match &f.exprs[e] {
        Expr::Literal(Literal::Bool(b)) => b.to_string(),
        Expr::Literal(Literal::Int(v, d)) => match d {
            DType::I64 if *v == i64::MIN => "INT64_MIN".to_string(),
            _ => format!("{}({v})", ctype(*d).unwrap_or("int64_t")),
        },
        Expr::Literal(Literal::Float(v, d)) => float_literal(*v, *d),
        Expr::Var(v) if f.vars[*v].kind == VarKind::ThreadIdx => {
            return Err(format!(
                "per-thread code (it reads the thread index `{}`): an AI core runs a block on \
                 one scalar unit with vector instructions, so there are no threads to index; \
                 write it as a tile operation or a `T.Parallel` loop",
                f.vars[*v].name
            ));
        }
        Expr::Var(v) => env.var(*v),
        Expr::Cast { dtype, arg } => {
            let a = expr(f, *arg, env)?;
            let from = f.ty(*arg);
            cast(&a, from, *dtype)?
        }
        Expr::Bitcast { arg, .. } => {
            let a = expr(f, *arg, env)?;
            let from = f.ty(*arg);
            let from_c = ctype(from).ok_or_else(|| {
                format!("values of type {} are not supported", from.tilelang_name())
            })?;
            format!("tl_bitcast<{cty}, {from_c}>({a})")
        }
        Expr::Select {
            cond,
            then,
            otherwise,
        } => format!(
            "({} ? {} : {})",
            expr(f, *cond, env)?,
            expr(f, *then, env)?,
            expr(f, *otherwise, env)?
        ),
        Expr::Load { buffer, indices } => {
            let idx = indices
                .iter()
                .map(|&i| expr(f, i, env).map(|s| format!("int64_t({s})")))
                .collect::<Result<Vec<_>, _>>()?;
            env.load(*buffer, &idx)?
        }
        Expr::Unary { op, arg } => {
            let a = expr(f, *arg, env)?;
            let at = f.ty(*arg);
            match op {
                UnaryOp::Not => format!("(!{a})"),
                UnaryOp::BitNot => format!("{cty}(~{a})"),
                UnaryOp::Neg if is_float(ty) => wrap_float(ty, &format!("-{}", widen(&a, ty))),
                UnaryOp::Neg => format!("{cty}(-int64_t({a}))"),
                UnaryOp::Abs if is_float(ty) => {
                    wrap_float(ty, &format!("tl_abs({})", widen(&a, ty)))
                }
                UnaryOp::Abs => format!("{cty}(int64_t({a}) < 0 ? -int64_t({a}) : int64_t({a}))"),
                UnaryOp::IsNan => format!("std::isnan(double({}))", widen(&a, at)),
                UnaryOp::IsInf => format!("std::isinf(double({}))", widen(&a, at)),
                _ => {
                    let name = match op {
                        UnaryOp::Exp => "tl_exp",
                        UnaryOp::Exp2 => "tl_exp2",
                        UnaryOp::Log => "tl_log",
                        UnaryOp::Log2 => "tl_log2",
                        UnaryOp::Sqrt => "tl_sqrt",
                        UnaryOp::Rsqrt => "tl_rsqrt",
                        UnaryOp::Sigmoid => "tl_sigmoid",
                        UnaryOp::Tanh => "tl_tanh",
                        UnaryOp::Sin => "tl_sin",
                        UnaryOp::Cos => "tl_cos",
                        UnaryOp::Floor => "tl_floor",
                        UnaryOp::Ceil => "tl_ceil",
                        _ => "tl_round",
                    };
                    format!("{cty}({name}(double({})))", widen(&a, ty))
                }
            }
        }
        Expr::Binary { op, lhs, rhs } => {
            let a = expr(f, *lhs, env)?;
            let b = expr(f, *rhs, env)?;
            let ot = f.ty(*lhs);
            binary(*op, &a, &b, ot, ty)?
        }
    })
}

/// A value of a 16-bit float type read as `float`; other types unchanged.
fn widen(a: &str, d: DType) -> String {
    match d {
        DType::F16 | DType::BF16 => format!("float({a})"),
        _ => a.to_string(),
    }
}

/// A `float` (or wider) computation rounded into `d`.
fn wrap_float(d: DType, body: &str) -> String {
    match d {
        DType::F16 => format!("half({body})"),
        DType::BF16 => format!("bfloat16_t({body})"),
        DType::F32 => format!("float({body})"),
        _ => format!("({body})"),
    }
}

fn cast(a: &str, from: DType, to: DType) -> Result<String, String> {
    let to_c =
        ctype(to).ok_or_else(|| format!("casts to {} are not supported", to.tilelang_name()))?;
    Ok(match (is_float(from), is_float(to)) {
        (_, true) if to == DType::F16 || to == DType::BF16 => {
            // Through double: one rounding from the exact source value.
            format!("{to_c}(tl_to_float(double({})))", widen(a, from))
        }
        (_, true) => format!("{to_c}(double({}))", widen(a, from)),
        (true, false) if to == DType::Bool => format!("(double({}) != 0.0)", widen(a, from)),
        (true, false) => format!("tl_float_to_int<{to_c}>(double({}))", widen(a, from)),
        (false, false) => format!("{to_c}({a})"),
    })
}

fn binary(op: BinaryOp, a: &str, b: &str, operand: DType, result: DType) -> Result<String, String> {
    let rc = ctype(result).unwrap_or("int64_t");
    if op.is_comparison() {
        let (x, y) = (widen(a, operand), widen(b, operand));
        return Ok(format!("({x} {} {y})", op.symbol()));
    }
    if op.is_logical() {
        let sym = if op == BinaryOp::And { "&&" } else { "||" };
        return Ok(format!("({a} {sym} {b})"));
    }
    if is_float(operand) {
        let (x, y) = (widen(a, operand), widen(b, operand));
        let body = match op {
            BinaryOp::Add => format!("{x} + {y}"),
            BinaryOp::Sub => format!("{x} - {y}"),
            BinaryOp::Mul => format!("{x} * {y}"),
            BinaryOp::Div => format!("{x} / {y}"),
            BinaryOp::Min => format!("tl_min({x}, {y})"),
            BinaryOp::Max => format!("tl_max({x}, {y})"),
            BinaryOp::Pow => format!("tl_pow(double({x}), double({y}))"),
            BinaryOp::FloorDiv => format!("tl_floor(double({x}) / double({y}))"),
            BinaryOp::FloorMod => format!("tl_fmod_floor(double({x}), double({y}))"),
            other => return Err(format!("`{}` on floats", other.symbol())),
        };
        return Ok(wrap_float(result, &body));
    }
    let (x, y) = (format!("int64_t({a})"), format!("int64_t({b})"));
    let body = match op {
        BinaryOp::Add => format!("{x} + {y}"),
        BinaryOp::Sub => format!("{x} - {y}"),
        BinaryOp::Mul => format!("{x} * {y}"),
        BinaryOp::Div => format!("tl_div({x}, {y})"),
        BinaryOp::FloorDiv => format!("tl_floordiv({x}, {y})"),
        BinaryOp::FloorMod => format!("tl_floormod({x}, {y})"),
        BinaryOp::Min => format!("({x} < {y} ? {x} : {y})"),
        BinaryOp::Max => format!("({x} > {y} ? {x} : {y})"),
        BinaryOp::BitAnd => format!("{x} & {y}"),
        BinaryOp::BitOr => format!("{x} | {y}"),
        BinaryOp::BitXor => format!("{x} ^ {y}"),
        BinaryOp::Shl => format!("{x} << {y}"),
        BinaryOp::Shr => format!("{x} >> {y}"),
        BinaryOp::Pow => format!("tl_ipow({x}, {y})"),
        other => return Err(format!("`{}` on integers", other.symbol())),
    };
    Ok(format!("{rc}({body})"))
}

/// Helpers every kernel's prelude defines (scalar-unit math).
pub const PRELUDE: &str = r#"// Scalar helpers: computed in double and rounded once into the result type.
__aicore__ inline double tl_exp(double x) { return exp(x); }
__aicore__ inline double tl_exp2(double x) { return exp2(x); }
__aicore__ inline double tl_log(double x) { return log(x); }
__aicore__ inline double tl_log2(double x) { return log2(x); }
__aicore__ inline double tl_sqrt(double x) { return sqrt(x); }
__aicore__ inline double tl_rsqrt(double x) { return 1.0 / sqrt(x); }
__aicore__ inline double tl_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__aicore__ inline double tl_tanh(double x) { return tanh(x); }
__aicore__ inline double tl_sin(double x) { return sin(x); }
__aicore__ inline double tl_cos(double x) { return cos(x); }
__aicore__ inline double tl_floor(double x) { return floor(x); }
__aicore__ inline double tl_ceil(double x) { return ceil(x); }
__aicore__ inline double tl_round(double x) { return nearbyint(x); }
__aicore__ inline double tl_pow(double x, double y) { return pow(x, y); }
__aicore__ inline double tl_fmod_floor(double x, double y) { return x - floor(x / y) * y; }
__aicore__ inline float tl_to_float(double x) { return float(x); }
__aicore__ inline float tl_abs(float x) { return fabsf(x); }
__aicore__ inline double tl_abs(double x) { return fabs(x); }
__aicore__ inline float tl_min(float x, float y) { return (x != x || y != y) ? NAN : (x < y ? x : y); }
__aicore__ inline float tl_max(float x, float y) { return (x != x || y != y) ? NAN : (x > y ? x : y); }
__aicore__ inline double tl_min(double x, double y) { return (x != x || y != y) ? NAN : (x < y ? x : y); }
__aicore__ inline double tl_max(double x, double y) { return (x != x || y != y) ? NAN : (x > y ? x : y); }
__aicore__ inline int64_t tl_div(int64_t x, int64_t y) { return y == 0 ? 0 : x / y; }
__aicore__ inline int64_t tl_floordiv(int64_t x, int64_t y) {
    if (y == 0) return 0;
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
__aicore__ inline int64_t tl_floormod(int64_t x, int64_t y) { return y == 0 ? 0 : x - tl_floordiv(x, y) * y; }
__aicore__ inline int64_t tl_ipow(int64_t x, int64_t y) {
    int64_t r = 1;
    for (int64_t i = 0; i < y; ++i) r *= x;
    return r;
}
__aicore__ inline int64_t tl_clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
template <typename To, typename From>
__aicore__ inline To tl_bitcast(From x) {
    // The same bits read as another type of the same width.
    static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the width");
    To r;
    __builtin_memcpy(&r, &x, sizeof r);
    return r;
}
template <typename T>
__aicore__ inline T tl_float_to_int(double x) {
    // Truncates toward zero, saturates at the int64 range, wraps to T.
    if (x != x) return T(0);
    double t = trunc(x);
    int64_t v = t <= -9223372036854775808.0 ? INT64_MIN
                : (t >= 9223372036854775807.0 ? INT64_MAX : int64_t(t));
    return T(v);
}
"#;
