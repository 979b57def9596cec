//! Tests of the reference interpreter.
//!
//! Programs are built directly through the [`Function`] API with the small
//! builder below; expectations are computed independently (by hand, by naive
//! loops in the test, or with native `f32` / `half` arithmetic), never by the
//! interpreter itself.

mod guard;
mod perf;
mod roles;
mod run;
mod scalar_ops;
mod tile_ops;

use super::{InterpError, Tensor, TensorData, run};
use crate::ir::{
    BinaryOp, Block, Buffer, DType, Expr, Function, Handle, Literal, Param, Range, Region, Scope,
    Span, Stmt, UnaryOp, Var, VarKind,
};

type H = Handle<Expr>;

/// Builds a [`Function`] for a test.
pub(super) struct Fb {
    pub f: Function,
}

impl Fb {
    pub fn new() -> Fb {
        Fb {
            f: Function::new("test"),
        }
    }

    /// An `i32` literal.
    pub fn int(&mut self, v: i64) -> H {
        self.f.int(v)
    }

    /// An integer or bool literal of `dtype` (wrapped).
    pub fn ilit(&mut self, dtype: DType, v: i64) -> H {
        if dtype == DType::Bool {
            self.f.lit(Literal::Bool(v != 0))
        } else {
            self.f.lit(Literal::Int(dtype.wrap_i64(v), dtype))
        }
    }

    /// A float literal of `dtype` (rounded).
    pub fn flit(&mut self, dtype: DType, v: f64) -> H {
        self.f.lit(Literal::Float(dtype.round_f64(v), dtype))
    }

    pub fn e(&mut self, expr: Expr) -> H {
        self.f.add_expr(expr).expect("well-typed test expression")
    }

    pub fn bin(&mut self, op: BinaryOp, lhs: H, rhs: H) -> H {
        self.e(Expr::Binary { op, lhs, rhs })
    }

    pub fn un(&mut self, op: UnaryOp, arg: H) -> H {
        self.e(Expr::Unary { op, arg })
    }

    pub fn cast(&mut self, dtype: DType, arg: H) -> H {
        self.e(Expr::Cast { dtype, arg })
    }

    pub fn select(&mut self, cond: H, then: H, otherwise: H) -> H {
        self.e(Expr::Select {
            cond,
            then,
            otherwise,
        })
    }

    pub fn load(&mut self, buffer: Handle<Buffer>, indices: &[H]) -> H {
        self.e(Expr::Load {
            buffer,
            indices: indices.to_vec(),
        })
    }

    pub fn v(&mut self, var: Handle<Var>) -> H {
        self.f.var_expr(var)
    }

    pub fn var(&mut self, name: &str, dtype: DType, kind: VarKind) -> Handle<Var> {
        self.f.add_var(name, dtype, kind)
    }

    /// A symbolic size `name` (`i32`), registered in `func.symbols`.
    pub fn symbol(&mut self, name: &str) -> Handle<Var> {
        let v = self.var(name, DType::I32, VarKind::Symbolic);
        self.f.symbols.push(v);
        v
    }

    /// A buffer with literal extents.
    pub fn buffer(
        &mut self,
        name: &str,
        dtype: DType,
        scope: Scope,
        shape: &[i64],
    ) -> Handle<Buffer> {
        let shape = shape.iter().map(|&e| self.int(e)).collect();
        self.buffer_with(name, dtype, scope, shape)
    }

    pub fn buffer_with(
        &mut self,
        name: &str,
        dtype: DType,
        scope: Scope,
        shape: Vec<H>,
    ) -> Handle<Buffer> {
        self.f.add_buffer(
            Buffer {
                name: name.into(),
                dtype,
                shape,
                scope,
                placement: None,
                layout: None,
            },
            Span::UNKNOWN,
        )
    }

    /// A global parameter with literal extents.
    pub fn param(&mut self, name: &str, dtype: DType, shape: &[i64]) -> Handle<Buffer> {
        let b = self.buffer(name, dtype, Scope::Global, shape);
        self.f.params.push(Param { buffer: b });
        b
    }

    /// A global parameter with the given extent expressions.
    pub fn param_with(&mut self, name: &str, dtype: DType, shape: Vec<H>) -> Handle<Buffer> {
        let b = self.buffer_with(name, dtype, Scope::Global, shape);
        self.f.params.push(Param { buffer: b });
        b
    }

    /// A region from `(start, extent)` pairs.
    pub fn region(&mut self, buffer: Handle<Buffer>, ranges: &[(H, H)]) -> Region {
        Region {
            buffer,
            ranges: ranges
                .iter()
                .map(|&(start, extent)| Range { start, extent })
                .collect(),
        }
    }

    /// A region from literal `(start, extent)` pairs.
    pub fn region_lit(&mut self, buffer: Handle<Buffer>, ranges: &[(i64, i64)]) -> Region {
        let ranges: Vec<(H, H)> = ranges
            .iter()
            .map(|&(s, e)| (self.int(s), self.int(e)))
            .collect();
        self.region(buffer, &ranges)
    }

    /// The whole buffer as a region.
    pub fn whole(&mut self, buffer: Handle<Buffer>) -> Region {
        let shape = self.f.buffers[buffer].shape.clone();
        let ranges: Vec<(H, H)> = shape.into_iter().map(|e| (self.int(0), e)).collect();
        self.region(buffer, &ranges)
    }

    /// A kernel over a literal grid; `body` gets the block variables.
    pub fn kernel(
        &mut self,
        grid: &[i64],
        body: impl FnOnce(&mut Fb, &[Handle<Var>]) -> Block,
    ) -> Stmt {
        let names = ["bx", "by", "bz"];
        let block_vars: Vec<Handle<Var>> = (0..grid.len())
            .map(|i| self.var(names[i], DType::I32, VarKind::BlockIdx))
            .collect();
        let thread_var = self.var("tx", DType::I32, VarKind::ThreadIdx);
        let grid = grid.iter().map(|&g| self.int(g)).collect();
        let body = body(self, &block_vars);
        Stmt::Kernel {
            grid,
            threads: 128,
            block_vars,
            thread_var,
            order: None,
            body,
        }
    }

    /// A parallel nest over literal extents; `body` gets the index
    /// expressions.
    pub fn parallel(&mut self, extents: &[i64], body: impl FnOnce(&mut Fb, &[H]) -> Block) -> Stmt {
        let vars: Vec<Handle<Var>> = (0..extents.len())
            .map(|i| {
                self.var(
                    &format!("p{i}_{}", self.f.vars.len()),
                    DType::I32,
                    VarKind::Loop,
                )
            })
            .collect();
        let index: Vec<H> = vars.iter().map(|&v| self.v(v)).collect();
        let extents = extents.iter().map(|&e| self.int(e)).collect();
        let body = body(self, &index);
        Stmt::Parallel {
            vars,
            extents,
            body,
        }
    }

    /// A serial loop `for i in start .. start + extent`.
    pub fn serial(&mut self, start: H, extent: H, body: impl FnOnce(&mut Fb, H) -> Block) -> Stmt {
        let var = self.var(
            &format!("i{}", self.f.vars.len()),
            DType::I32,
            VarKind::Loop,
        );
        let index = self.v(var);
        let body = body(self, index);
        Stmt::For {
            var,
            start,
            extent,
            kind: crate::ir::LoopKind::Serial,
            body,
        }
    }

    pub fn store(&mut self, buffer: Handle<Buffer>, indices: &[H], value: H) -> Stmt {
        Stmt::Store {
            buffer,
            indices: indices.to_vec(),
            value,
        }
    }

    pub fn alloc(&mut self, buffer: Handle<Buffer>) -> Stmt {
        Stmt::Alloc { buffer, init: None }
    }

    /// Appends statements to the function body, each with span `10k..10k+5`
    /// where `k` is its position.
    pub fn body(&mut self, stmts: Vec<Stmt>) {
        for s in stmts {
            let k = self.f.body.len() as u32;
            self.f.body.push(s, Span::new(10 * k, 10 * k + 5));
        }
    }
}

/// A block with spans `1000 + 10k .. 1000 + 10k + 5`.
pub(super) fn block(stmts: Vec<Stmt>) -> Block {
    let mut b = Block::new();
    for (k, s) in stmts.into_iter().enumerate() {
        let k = k as u32;
        b.push(s, Span::new(1000 + 10 * k, 1000 + 10 * k + 5));
    }
    b
}

/// A tensor from values, which must already be representable.
pub(super) fn tensor(dtype: DType, shape: &[usize], values: &[f64]) -> Tensor {
    let t = Tensor::from_f64(dtype, shape, values.to_vec()).expect("consistent test tensor");
    assert_same(&t.to_f64_vec(), values);
    t
}

/// Evaluates the expression `build` makes by storing it into a one-element
/// output of its type.
pub(super) fn eval(build: impl FnOnce(&mut Fb) -> H) -> Result<Tensor, InterpError> {
    let mut fb = Fb::new();
    let value = build(&mut fb);
    let dtype = fb.f.ty(value);
    let out = fb.param("out", dtype, &[1]);
    let zero = fb.int(0);
    let store = fb.store(out, &[zero], value);
    fb.body(vec![store]);
    let mut args = vec![Tensor::zeros(dtype, [1])];
    run(&fb.f, &mut args)?;
    Ok(args.remove(0))
}

/// The single float result of [`eval`].
pub(super) fn eval_f(build: impl FnOnce(&mut Fb) -> H) -> f64 {
    match eval(build).expect("evaluation succeeds").data {
        TensorData::Float(v) => v[0],
        TensorData::Int(_) => panic!("expected a float result"),
    }
}

/// The single integer (or bool) result of [`eval`].
pub(super) fn eval_i(build: impl FnOnce(&mut Fb) -> H) -> i64 {
    match eval(build).expect("evaluation succeeds").data {
        TensorData::Int(v) => v[0],
        TensorData::Float(_) => panic!("expected an integer result"),
    }
}

/// Asserts two float slices are equal bit for bit up to NaN (NaN equals NaN
/// and `-0.0` differs from `0.0`).
#[track_caller]
pub(super) fn assert_same(actual: &[f64], expected: &[f64]) {
    assert_eq!(actual.len(), expected.len(), "lengths differ");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        let same = (a.is_nan() && e.is_nan()) || a.to_bits() == e.to_bits();
        assert!(
            same,
            "element {i}: got {a:?}, expected {e:?}\nall: {actual:?}"
        );
    }
}
