//! Unit tests of the printer and parser: spellings of literals and
//! operators, parenthesization of random expression trees, names, spans.

use super::{parse_module, print_function, print_module};
use crate::ir::{
    BinaryOp, Block, Buffer, DType, Expr, Function, Handle, Literal, Module, Param, Scope, Span,
    Stmt, UnaryOp, VarKind,
};
use proptest::prelude::*;

/// A function `@f(%A: global i32[4], %P: global bool[4], %F: global
/// f32[4]) symbols(%a, %b, %c)` with one kernel whose body is filled in by
/// the caller.
fn skeleton() -> Function {
    let mut f = Function::new("f");
    for (name, dtype) in [("A", DType::I32), ("P", DType::Bool), ("F", DType::F32)] {
        let four = f.int(4);
        let b = f.add_buffer(
            Buffer {
                name: name.into(),
                dtype,
                shape: vec![four],
                scope: Scope::Global,
                placement: None,
                layout: None,
            },
            Span::UNKNOWN,
        );
        f.params.push(Param { buffer: b });
    }
    for name in ["a", "b", "c"] {
        let v = f.add_var(name, DType::I32, VarKind::Symbolic);
        f.symbols.push(v);
    }
    f
}

fn buffer(f: &Function, i: usize) -> Handle<Buffer> {
    f.params[i].buffer
}

/// Wraps `stmts` in a one-block kernel as the body of `f`.
fn finish(mut f: Function, stmts: Vec<Stmt>) -> Function {
    let one = f.int(1);
    let bx = f.add_var("bx", DType::I32, VarKind::BlockIdx);
    let tx = f.add_var("tx", DType::I32, VarKind::ThreadIdx);
    let mut body = Block::new();
    for s in stmts {
        body.push(s, Span::UNKNOWN);
    }
    f.body.push(
        Stmt::Kernel {
            grid: vec![one],
            threads: 1,
            block_vars: vec![bx],
            thread_var: tx,
            order: None,
            body,
        },
        Span::UNKNOWN,
    );
    f
}

fn module_of(f: Function) -> Module {
    Module { functions: vec![f] }
}

/// Stores `value` into the parameter of its type, at index 0.
fn store_of(f: &mut Function, value: Handle<Expr>) -> Stmt {
    let target = match f.ty(value) {
        DType::I32 => 0,
        DType::Bool => 1,
        _ => 2,
    };
    let zero = f.int(0);
    Stmt::Store {
        buffer: buffer(f, target),
        indices: vec![zero],
        value,
    }
}

/// The value of the first store of the first kernel.
fn stored_value(f: &Function) -> Option<Handle<Expr>> {
    let Some(Stmt::Kernel { body, .. }) = f.body.stmts.first() else {
        return None;
    };
    match body.stmts.first() {
        Some(Stmt::Store { value, .. }) => Some(*value),
        _ => None,
    }
}

fn lit_eq(x: Literal, y: Literal) -> bool {
    match (x, y) {
        (Literal::Float(a, d), Literal::Float(b, e)) => {
            d == e && (a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
        }
        _ => x == y,
    }
}

/// Structural equality of two expression trees in two functions, matching
/// variables and buffers by name.
fn same_tree(f: &Function, x: Handle<Expr>, g: &Function, y: Handle<Expr>) -> bool {
    match (&f.exprs[x], &g.exprs[y]) {
        (Expr::Literal(a), Expr::Literal(b)) => lit_eq(*a, *b),
        (Expr::Var(a), Expr::Var(b)) => f.vars[*a].name == g.vars[*b].name,
        (Expr::Unary { op: o, arg: a }, Expr::Unary { op: p, arg: b }) => {
            o == p && same_tree(f, *a, g, *b)
        }
        (
            Expr::Binary {
                op: o,
                lhs: a,
                rhs: b,
            },
            Expr::Binary {
                op: p,
                lhs: c,
                rhs: d,
            },
        ) => o == p && same_tree(f, *a, g, *c) && same_tree(f, *b, g, *d),
        (
            Expr::Select {
                cond: a,
                then: b,
                otherwise: c,
            },
            Expr::Select {
                cond: d,
                then: e,
                otherwise: h,
            },
        ) => same_tree(f, *a, g, *d) && same_tree(f, *b, g, *e) && same_tree(f, *c, g, *h),
        (Expr::Cast { dtype: d, arg: a }, Expr::Cast { dtype: e, arg: b }) => {
            d == e && same_tree(f, *a, g, *b)
        }
        (
            Expr::Load {
                buffer: a,
                indices: i,
            },
            Expr::Load {
                buffer: b,
                indices: j,
            },
        ) => {
            f.buffers[*a].name == g.buffers[*b].name
                && i.len() == j.len()
                && i.iter().zip(j).all(|(p, q)| same_tree(f, *p, g, *q))
        }
        _ => false,
    }
}

/// Prints `f`, parses it back and checks that the stored value is the same
/// tree and that printing is stable. Returns the printed expression.
fn round_trip_value(f: Function) -> String {
    let value = stored_value(&f).expect("a store");
    let spelled = super::print::expr(&f, value);
    let text = print_module(&module_of(f.clone()));
    let parsed = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(print_module(&parsed), text);
    let g = &parsed.functions[0];
    let parsed_value = stored_value(g).expect("a store");
    assert!(
        same_tree(&f, value, g, parsed_value),
        "`{spelled}` parses to a different tree"
    );
    spelled
}

/// Builds `build(f)` into a store, round-trips it and returns its spelling.
fn spell(build: impl FnOnce(&mut Function) -> Handle<Expr>) -> String {
    let mut f = skeleton();
    let e = build(&mut f);
    let s = store_of(&mut f, e);
    round_trip_value(finish(f, vec![s]))
}

fn var(f: &mut Function, i: usize) -> Handle<Expr> {
    let v = f.symbols[i];
    f.var_expr(v)
}

fn bin(f: &mut Function, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
    f.add_expr(Expr::Binary { op, lhs, rhs })
        .expect("well typed")
}

fn un(f: &mut Function, op: UnaryOp, arg: Handle<Expr>) -> Handle<Expr> {
    f.add_expr(Expr::Unary { op, arg }).expect("well typed")
}

#[test]
fn negative_literals_and_negation_are_distinct() {
    assert_eq!(spell(|f| f.int(-3)), "-3");
    assert_eq!(
        spell(|f| {
            let three = f.int(3);
            un(f, UnaryOp::Neg, three)
        }),
        "-(3)"
    );
    assert_eq!(
        spell(|f| {
            let m = f.int(-3);
            un(f, UnaryOp::Neg, m)
        }),
        "-(-3)"
    );
    assert_eq!(
        spell(|f| {
            let a = var(f, 0);
            let m = f.int(-3);
            bin(f, BinaryOp::Sub, a, m)
        }),
        "%a - -3"
    );
    assert_eq!(
        spell(|f| {
            let m = f.int(-3);
            let a = var(f, 0);
            bin(f, BinaryOp::Mul, m, a)
        }),
        "-3 * %a"
    );
    assert_eq!(
        spell(|f| {
            let x = f.lit(Literal::Float(1.5, DType::F32));
            un(f, UnaryOp::Neg, x)
        }),
        "-f32(1.5)"
    );
    assert_eq!(
        spell(|f| f.lit(Literal::Float(-0.0, DType::F32))),
        "f32(-0.0)"
    );
}

#[test]
fn parentheses_follow_precedence_and_left_associativity() {
    let spelled = spell(|f| {
        let (a, b, c) = (var(f, 0), var(f, 1), var(f, 2));
        let bc = bin(f, BinaryOp::Sub, b, c);
        bin(f, BinaryOp::Sub, a, bc)
    });
    assert_eq!(spelled, "%a - (%b - %c)");
    let spelled = spell(|f| {
        let (a, b, c) = (var(f, 0), var(f, 1), var(f, 2));
        let ab = bin(f, BinaryOp::Sub, a, b);
        bin(f, BinaryOp::Sub, ab, c)
    });
    assert_eq!(spelled, "%a - %b - %c");
    let spelled = spell(|f| {
        let (a, b, c) = (var(f, 0), var(f, 1), var(f, 2));
        let ab = bin(f, BinaryOp::Add, a, b);
        let prod = bin(f, BinaryOp::FloorDiv, ab, c);
        un(f, UnaryOp::Neg, prod)
    });
    assert_eq!(spelled, "-((%a + %b) // %c)");
    let spelled = spell(|f| {
        let (a, b) = (var(f, 0), var(f, 1));
        let lt = bin(f, BinaryOp::Lt, a, b);
        let not = un(f, UnaryOp::Not, lt);
        let t = f.lit(Literal::Bool(true));
        bin(f, BinaryOp::Or, not, t)
    });
    assert_eq!(spelled, "!(%a < %b) || true");
    let spelled = spell(|f| {
        let (a, b) = (var(f, 0), var(f, 1));
        let x = bin(f, BinaryOp::BitXor, a, b);
        let n = un(f, UnaryOp::BitNot, x);
        let m = bin(f, BinaryOp::Max, n, a);
        bin(f, BinaryOp::Shl, m, b)
    });
    assert_eq!(spelled, "max(~(%a ^ %b), %a) << %b");
}

#[test]
fn every_operator_round_trips() {
    for op in UnaryOp::ALL {
        let spelled = spell(|f| {
            let load = {
                let zero = f.int(0);
                let buf = buffer(f, 2);
                f.add_expr(Expr::Load {
                    buffer: buf,
                    indices: vec![zero],
                })
                .expect("load")
            };
            let arg = match op {
                UnaryOp::Not => f.lit(Literal::Bool(false)),
                UnaryOp::BitNot => var(f, 0),
                _ => load,
            };
            un(f, op, arg)
        });
        assert!(!spelled.is_empty());
    }
    let ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::FloorDiv,
        BinaryOp::FloorMod,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Pow,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
        BinaryOp::Shl,
        BinaryOp::Shr,
    ];
    for op in ops {
        spell(|f| {
            let (a, b) = (var(f, 0), var(f, 1));
            bin(f, op, a, b)
        });
    }
    for op in [BinaryOp::And, BinaryOp::Or] {
        spell(|f| {
            let t = f.lit(Literal::Bool(true));
            let u = f.lit(Literal::Bool(false));
            bin(f, op, t, u)
        });
    }
}

#[test]
fn literals_of_every_dtype_round_trip() {
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        1.5,
        -2.75,
        255.0,
        -128.0,
        65504.0,
        1e-20,
        1e20,
        3.0e38,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        9.3e18,
        1.8e19,
    ];
    for dtype in DType::ALL {
        for &v in &values {
            let lit = Literal::of(dtype, v);
            let spelled = spell(|f| {
                let e = f.lit(lit);
                // Store through a cast so every dtype fits the f32 buffer.
                f.add_expr(Expr::Cast {
                    dtype: DType::F32,
                    arg: e,
                })
                .expect("cast")
            });
            assert!(spelled.starts_with("cast<f32>("), "{spelled}");
        }
    }
    // Integer extremes, including u64 values above i64::MAX.
    for (dtype, v) in [
        (DType::U64, -1i64),
        (DType::U64, i64::MIN),
        (DType::I64, i64::MIN),
        (DType::I64, i64::MAX),
        (DType::I32, i64::from(i32::MIN)),
    ] {
        spell(|f| {
            let e = f.lit(Literal::Int(v, dtype));
            f.add_expr(Expr::Cast {
                dtype: DType::I32,
                arg: e,
            })
            .expect("cast")
        });
    }
    assert_eq!(
        spell(|f| {
            let e = f.lit(Literal::Int(-1, DType::U64));
            f.add_expr(Expr::Cast {
                dtype: DType::I32,
                arg: e,
            })
            .expect("cast")
        }),
        "cast<i32>(u64(18446744073709551615))"
    );
}

#[test]
fn shared_subexpressions_print_as_trees() {
    let mut f = skeleton();
    let (a, b) = (var(&mut f, 0), var(&mut f, 1));
    let sum = bin(&mut f, BinaryOp::Add, a, b);
    let square = bin(&mut f, BinaryOp::Mul, sum, sum);
    let s = store_of(&mut f, square);
    let spelled = round_trip_value(finish(f, vec![s]));
    assert_eq!(spelled, "(%a + %b) * (%a + %b)");
}

#[test]
fn odd_names_are_quoted() {
    let mut f = skeleton();
    f.name = "my kernel".into();
    let odd = f.add_var("", DType::I32, VarKind::Let);
    let a_buffer = buffer(&f, 0);
    f.buffers[a_buffer].name = "x\"y\n".into();
    let b_var = f.symbols[1];
    f.vars[b_var].name = "9".into();
    let seven = f.int(7);
    let let_stmt = Stmt::Let {
        var: odd,
        value: seven,
    };
    let use_odd = f.var_expr(odd);
    let b = var(&mut f, 1);
    let sum = bin(&mut f, BinaryOp::Add, use_odd, b);
    let store = store_of(&mut f, sum);
    let f = finish(f, vec![let_stmt, store]);
    let text = print_function(&f);
    assert!(
        text.starts_with("func @\"my kernel\"(%\"x\\\"y\\n\": global i32[4]"),
        "{text}"
    );
    assert!(text.contains("let %\"\": i32 = 7"), "{text}");
    let module = module_of(f);
    let printed = print_module(&module);
    let parsed = parse_module(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(parsed.functions[0].name, "my kernel");
    assert_eq!(print_module(&parsed), printed);
}

#[test]
fn spans_are_byte_ranges_of_statement_headers() {
    let src = "tile_ir 0.1\n\nfunc @f(%A: global f32[4]) {\n  kernel grid(1) threads(4) block(%b) thread(%t) {\n    for %i in serial(0, 4) {\n      %A[%i] = f32(1.0)\n    }\n  }\n}\n";
    let m = parse_module(src).expect("parses");
    let f = &m.functions[0];
    let text = |s: Span| &src[s.start as usize..s.end as usize];
    assert_eq!(
        text(f.body.spans[0]),
        "kernel grid(1) threads(4) block(%b) thread(%t)"
    );
    let Stmt::Kernel { body, .. } = &f.body.stmts[0] else {
        panic!("kernel expected");
    };
    assert_eq!(text(body.spans[0]), "for %i in serial(0, 4)");
    let Stmt::For { body: inner, .. } = &body.stmts[0] else {
        panic!("for expected");
    };
    assert_eq!(text(inner.spans[0]), "%A[%i] = f32(1.0)");
    assert_eq!(text(f.buffer_spans[0]), "%A: global f32[4]");
}

#[test]
fn parser_normalizes_non_canonical_spellings() {
    let src = "tile_ir 0.1 func @f(%A: global f16[2], %B: global i32[2]) { kernel grid(1) threads(1) block(%b) thread(%t) { %A[i32(0)] = f16(0.1) # comment\n if true { } else { } %B[1] = ((1 + 2)) } }";
    let m = parse_module(src).expect("parses");
    assert_eq!(
        print_module(&m),
        "tile_ir 0.1\n\nfunc @f(%A: global f16[2], %B: global i32[2]) {\n  kernel grid(1) threads(1) block(%b) thread(%t) {\n    %A[0] = f16(0.0999755859375)\n    if true {\n    }\n    %B[1] = 1 + 2\n  }\n}\n"
    );
}

#[test]
fn errors_carry_positions() {
    let err = parse_module("").expect_err("empty");
    assert_eq!((err.line, err.column), (1, 1));
    let err = parse_module("tile_ir 0.1\nfunc @f() {\n  é\n}\n").expect_err("bad char");
    assert_eq!((err.line, err.column, err.offset), (3, 3, 26));
    assert!(err.message.contains("unexpected character"), "{err}");
    assert_eq!(err.to_string(), format!("3:3: {}", err.message));
}

/// A random expression shape; types are fixed up while building.
#[derive(Clone, Debug)]
enum Shape {
    Int(i64),
    Bool(bool),
    Float(f64),
    Var(usize),
    Load(usize, Box<Shape>),
    Unary(usize, Box<Shape>),
    Binary(usize, Box<Shape>, Box<Shape>),
    Select(Box<Shape>, Box<Shape>, Box<Shape>),
    Cast(usize, Box<Shape>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        (-4i64..5).prop_map(Shape::Int),
        any::<bool>().prop_map(Shape::Bool),
        prop_oneof![Just(-1.5), Just(0.25), Just(f64::INFINITY)].prop_map(Shape::Float),
        (0usize..3).prop_map(Shape::Var),
    ];
    leaf.prop_recursive(6, 48, 3, |inner| {
        prop_oneof![
            (0usize..3, inner.clone()).prop_map(|(b, i)| Shape::Load(b, Box::new(i))),
            (0usize..19, inner.clone()).prop_map(|(o, a)| Shape::Unary(o, Box::new(a))),
            (0usize..22, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Shape::Binary(
                o,
                Box::new(a),
                Box::new(b)
            )),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| Shape::Select(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            )),
            (0usize..3, inner).prop_map(|(d, a)| Shape::Cast(d, Box::new(a))),
        ]
    })
}

const BINARY: [BinaryOp; 22] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::FloorDiv,
    BinaryOp::FloorMod,
    BinaryOp::Min,
    BinaryOp::Max,
    BinaryOp::Pow,
    BinaryOp::Eq,
    BinaryOp::Ne,
    BinaryOp::Lt,
    BinaryOp::Le,
    BinaryOp::Gt,
    BinaryOp::Ge,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::BitXor,
    BinaryOp::Shl,
    BinaryOp::Shr,
];

/// Builds a shape, falling back to an operand where an operator does not
/// type-check, so every result is well typed.
fn build(f: &mut Function, s: &Shape) -> Handle<Expr> {
    match s {
        Shape::Int(v) => f.int(*v),
        Shape::Bool(b) => f.lit(Literal::Bool(*b)),
        Shape::Float(x) => f.lit(Literal::of(DType::F32, *x)),
        Shape::Var(i) => var(f, *i),
        Shape::Load(b, index) => {
            let i = build(f, index);
            let i = if f.ty(i) == DType::I32 { i } else { f.int(0) };
            let buffer = buffer(f, *b);
            f.add_expr(Expr::Load {
                buffer,
                indices: vec![i],
            })
            .expect("load")
        }
        Shape::Unary(o, a) => {
            let arg = build(f, a);
            f.add_expr(Expr::Unary {
                op: UnaryOp::ALL[*o],
                arg,
            })
            .unwrap_or(arg)
        }
        Shape::Binary(o, a, b) => {
            let (lhs, rhs) = (build(f, a), build(f, b));
            f.add_expr(Expr::Binary {
                op: BINARY[*o],
                lhs,
                rhs,
            })
            .unwrap_or(lhs)
        }
        Shape::Select(c, a, b) => {
            let (cond, then, otherwise) = (build(f, c), build(f, a), build(f, b));
            f.add_expr(Expr::Select {
                cond,
                then,
                otherwise,
            })
            .unwrap_or(then)
        }
        Shape::Cast(d, a) => {
            let arg = build(f, a);
            let dtype = [DType::I32, DType::Bool, DType::F32][*d];
            f.add_expr(Expr::Cast { dtype, arg }).expect("cast")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Any well-typed tree prints to text that parses back to the same tree.
    #[test]
    fn random_trees_round_trip(s in shape()) {
        let mut f = skeleton();
        let e = build(&mut f, &s);
        let store = store_of(&mut f, e);
        round_trip_value(finish(f, vec![store]));
    }
}
