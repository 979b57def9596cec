//! Expressions: compiled once into closures, evaluated per element.
//!
//! [`Compiler::code`] turns an expression tree into a tree of boxed closures
//! specialised for the expression's types: an integer or bool expression
//! becomes an [`IntFn`] returning the stored `i64`, a float expression a
//! [`FloatFn`] returning the `f64` already rounded to its type. Operators are
//! picked from [`super::scalar`] at compile time, so evaluating an element
//! matches no IR enum and allocates nothing. Symbolic sizes are bound before
//! compiling and become constants.
//!
//! Evaluation reads the [`Env`]: the values of scalar variables and the
//! storage of every allocated buffer. `select`, `and` and `or` evaluate
//! lazily, so a guarded out-of-bounds load in the arm not taken is not an
//! error.

use super::TensorData;
use super::error::{Eval, Fault, InterpError, division_by_zero, malformed, unsupported};
use super::scalar::{self, Scalar, int_to_f64};
use crate::ir::{
    BinaryOp, Buffer, DType, DTypeKind, Expr, Function, Handle, Literal, Scope, Span, Var, VarKind,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// How deeply expressions may nest. Compiling and evaluating recurse once
/// per level; the limit keeps that recursion well inside the interpreter's
/// stack (see [`super::with_large_stack`]).
pub(crate) const MAX_EXPR_DEPTH: usize = 10_000;

/// A compiled integer or bool expression.
pub(crate) type IntFn = Rc<dyn Fn(&Env) -> Eval<i64>>;
/// A compiled float expression; the result is rounded to its type.
pub(crate) type FloatFn = Rc<dyn Fn(&Env) -> Eval<f64>>;

/// A compiled expression of either class.
#[derive(Clone)]
pub(crate) enum Code {
    Int(IntFn),
    Float(FloatFn),
}

impl Code {
    pub(crate) fn eval(&self, env: &Env) -> Eval<Scalar> {
        Ok(match self {
            Code::Int(f) => Scalar::Int(f(env)?),
            Code::Float(f) => Scalar::Float(f(env)?),
        })
    }
}

/// The storage of one allocated buffer.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) dtype: DType,
    pub(crate) scope: Scope,
    pub(crate) shape: Vec<usize>,
    /// Row-major strides, in elements.
    pub(crate) strides: Vec<usize>,
    /// Where each element lies in `data`, by row-major index, for a
    /// global buffer in a `mapped` layout (a rearrangement of the
    /// caller's tensor); `None`: at its row-major index.
    pub(crate) places: Option<Rc<[usize]>>,
    pub(crate) data: TensorData,
}

impl Slot {
    pub(crate) fn new(dtype: DType, scope: Scope, shape: Vec<usize>, data: TensorData) -> Slot {
        let mut strides = vec![0usize; shape.len()];
        let mut stride = 1usize;
        for (s, &e) in strides.iter_mut().zip(&shape).rev() {
            *s = stride;
            stride = stride.saturating_mul(e);
        }
        Slot {
            dtype,
            scope,
            shape,
            strides,
            places: None,
            data,
        }
    }

    /// Where the element at row-major index `k` lies in `data`.
    pub(crate) fn place(&self, k: usize) -> usize {
        place(self.places.as_deref(), k)
    }
}

/// Where the element at row-major index `k` lies, under `places`
/// ([`Slot::places`]).
pub(crate) fn place(places: Option<&[usize]>, k: usize) -> usize {
    match places {
        Some(p) => p.get(k).copied().unwrap_or(usize::MAX),
        None => k,
    }
}

/// The machine state expressions read and statements write.
#[derive(Debug)]
pub(crate) struct Env {
    /// Values of integer and bool variables, by variable index.
    pub(crate) ints: Vec<i64>,
    /// Values of float variables, by variable index.
    pub(crate) floats: Vec<f64>,
    /// Storage of each buffer, by buffer index; `None` until allocated.
    pub(crate) slots: Vec<Option<Slot>>,
    /// Buffer names, by buffer index, for error messages.
    pub(crate) buffer_names: Vec<String>,
    /// Scalar steps taken so far and the most allowed.
    pub(crate) steps: u64,
    pub(crate) step_limit: u64,
    /// The most bytes of storage alive at once.
    pub(crate) memory_limit: u64,
    /// How many threads run the current code: what one `arrive` adds to a
    /// barrier ([`super::roles`]).
    pub(crate) arrivals: u32,
    /// The other threads' copies of each per-thread buffer
    /// (`crate::ir::per_thread`), by buffer index and thread: per-thread
    /// code of thread `t` swaps copy `t` into the buffer's slot while it
    /// runs ([`super::guard`]).
    pub(crate) copies: Vec<Option<Vec<TensorData>>>,
}

impl Env {
    pub(crate) fn new(func: &Function, step_limit: u64, memory_limit: u64) -> Env {
        Env {
            ints: vec![0; func.vars.len()],
            floats: vec![0.0; func.vars.len()],
            slots: (0..func.buffers.len()).map(|_| None).collect(),
            buffer_names: func.buffers.iter().map(|(_, b)| b.name.clone()).collect(),
            steps: 0,
            step_limit,
            memory_limit,
            arrivals: 1,
            copies: (0..func.buffers.len()).map(|_| None).collect(),
        }
    }

    pub(crate) fn buffer_name(&self, buffer: usize) -> String {
        self.buffer_names
            .get(buffer)
            .cloned()
            .unwrap_or_else(|| format!("#{buffer}"))
    }

    pub(crate) fn slot(&self, buffer: usize) -> Eval<&Slot> {
        match self.slots.get(buffer) {
            Some(Some(slot)) => Ok(slot),
            _ => Err(self.unallocated(buffer)),
        }
    }

    pub(crate) fn slot_mut(&mut self, buffer: usize) -> Eval<&mut Slot> {
        if !matches!(self.slots.get(buffer), Some(Some(_))) {
            return Err(self.unallocated(buffer));
        }
        match self.slots.get_mut(buffer) {
            Some(Some(slot)) => Ok(slot),
            _ => Err(malformed("buffer slot vanished")),
        }
    }

    fn unallocated(&self, buffer: usize) -> Fault {
        Box::new(InterpError::Unallocated {
            buffer: self.buffer_name(buffer),
            span: Span::UNKNOWN,
        })
    }

    /// Checks that `elements` more elements (for `what`) fit the memory
    /// limit beside the storage alive now, less `buffer`'s own storage and
    /// copies (which the new storage replaces).
    pub(crate) fn check_memory(&self, buffer: usize, elements: u64, what: &str) -> Eval<()> {
        let len = |d: &TensorData| match d {
            TensorData::Float(v) => v.len() as u64,
            TensorData::Int(v) => v.len() as u64,
        };
        let mut alive = 0u64;
        for (i, (slot, copies)) in self.slots.iter().zip(&self.copies).enumerate() {
            if i == buffer {
                continue;
            }
            if let Some(slot) = slot {
                alive = alive.saturating_add(len(&slot.data));
            }
            for copy in copies.iter().flatten() {
                alive = alive.saturating_add(len(copy));
            }
        }
        let bytes = alive
            .saturating_add(elements)
            .saturating_mul(super::ELEMENT_BYTES);
        if bytes > self.memory_limit {
            return Err(Box::new(InterpError::MemoryLimit {
                what: what.to_string(),
                bytes,
                limit: self.memory_limit,
                span: Span::UNKNOWN,
            }));
        }
        Ok(())
    }

    /// Counts `n` steps against the limit.
    pub(crate) fn tick(&mut self, n: u64) -> Eval<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.step_limit {
            return Err(Box::new(InterpError::StepLimit {
                limit: self.step_limit,
                span: Span::UNKNOWN,
            }));
        }
        Ok(())
    }

    /// The storage offset of the element of `buffer` at `indices`: `Some`
    /// inside the buffer, `None` outside a global buffer (read as 0, write
    /// skipped) and an error outside a buffer of any other scope.
    pub(crate) fn element(&self, buffer: usize, indices: &[IntFn]) -> Eval<Option<usize>> {
        Ok(self.locate(buffer, indices)?.map(|(offset, _)| offset))
    }

    /// [`Env::element`] together with the buffer's storage.
    pub(crate) fn locate(&self, buffer: usize, indices: &[IntFn]) -> Eval<Option<(usize, &Slot)>> {
        let slot = self.slot(buffer)?;
        if indices.len() != slot.shape.len() {
            return Err(malformed(format!(
                "{} indices for buffer `{}` of rank {}",
                indices.len(),
                self.buffer_name(buffer),
                slot.shape.len()
            )));
        }
        let mut offset = 0usize;
        let mut inside = true;
        for ((index, &extent), &stride) in indices.iter().zip(&slot.shape).zip(&slot.strides) {
            let i = index(self)?;
            if i >= 0 && (i as u64) < extent as u64 {
                offset += i as usize * stride;
            } else {
                inside = false;
            }
        }
        if inside {
            Ok(Some((slot.place(offset), slot)))
        } else if slot.scope == Scope::Global {
            Ok(None)
        } else {
            Err(Box::new(InterpError::OutOfBounds {
                buffer: self.buffer_name(buffer),
                scope: slot.scope.name(),
                // Indices are pure and evaluated fine a moment ago.
                indices: indices
                    .iter()
                    .map(|f| f(self).unwrap_or(i64::MIN))
                    .collect(),
                shape: slot.shape.clone(),
                span: Span::UNKNOWN,
            }))
        }
    }
}

/// Converts compiled code of type `from` into code of type `to`, as `cast`.
pub(crate) fn cast_code(code: Code, from: DType, to: DType) -> Code {
    match code {
        Code::Float(a) if to.is_float() => {
            if to == from || to == DType::F64 {
                Code::Float(a)
            } else {
                Code::Float(Rc::new(move |env| Ok(to.round_f64(a(env)?))))
            }
        }
        Code::Int(a) if to.is_float() => Code::Float(Rc::new(move |env| {
            Ok(to.round_f64(int_to_f64(a(env)?, from)))
        })),
        Code::Float(a) => Code::Int(Rc::new(move |env| Ok(to.round_f64(a(env)?) as i64))),
        Code::Int(a) => {
            if to == from {
                Code::Int(a)
            } else {
                Code::Int(Rc::new(move |env| Ok(to.wrap_i64(a(env)?))))
            }
        }
    }
}

/// Reads the bits of code of type `from` as a value of type `to` (a bit
/// cast: same width; floats go through their bit patterns).
pub(crate) fn bitcast_code(code: Code, from: DType, to: DType) -> Code {
    type BitsFn = Rc<dyn Fn(&Env) -> Eval<u64>>;
    let bits: BitsFn = match code {
        Code::Int(a) => Rc::new(move |env| Ok(from.bits_of(a(env)?, 0.0))),
        Code::Float(a) => Rc::new(move |env| Ok(from.bits_of(0, a(env)?))),
    };
    if to.is_float() {
        Code::Float(Rc::new(move |env| {
            Ok(match to.from_bits(bits(env)?) {
                Err(x) => x,
                Ok(v) => v as f64,
            })
        }))
    } else {
        Code::Int(Rc::new(move |env| {
            Ok(match to.from_bits(bits(env)?) {
                Ok(v) => v,
                Err(x) => x as i64,
            })
        }))
    }
}

/// Compiles expressions of one function, with its symbolic sizes bound.
///
/// Expressions form a DAG; each node is compiled once and its code shared
/// (reference-counted) by every use, so compiling stays linear in the size
/// of the DAG.
pub(crate) struct Compiler<'f> {
    pub(crate) func: &'f Function,
    /// Value of each symbolic variable, by variable index.
    symbols: &'f [Option<i64>],
    /// Code compiled so far, by expression index.
    cache: RefCell<Vec<Option<Code>>>,
    /// Current nesting depth of [`Compiler::code`].
    depth: Cell<usize>,
    /// The current kernel's thread variable and thread count, and whether
    /// per-thread code (a thread-guarded region, [`super::guard`]) is
    /// being compiled, where the thread variable may be read.
    pub(crate) thread: Cell<Option<(Handle<Var>, u32)>>,
    pub(crate) per_thread: Cell<bool>,
    /// Block-level `let`s computed from the thread variable, in order:
    /// evaluated per thread inside thread-guarded regions.
    pub(crate) thread_lets: RefCell<Vec<(Handle<Var>, Handle<Expr>)>>,
    /// The current kernel's per-thread buffers (`crate::ir::per_thread`),
    /// by index.
    pub(crate) private: RefCell<std::collections::HashSet<usize>>,
}

impl<'f> Compiler<'f> {
    pub(crate) fn new(func: &'f Function, symbols: &'f [Option<i64>]) -> Self {
        Compiler {
            func,
            symbols,
            cache: RefCell::new(vec![None; func.exprs.len()]),
            depth: Cell::new(0),
            thread: Cell::new(None),
            per_thread: Cell::new(false),
            thread_lets: RefCell::new(Vec::new()),
            private: RefCell::new(std::collections::HashSet::new()),
        }
    }

    pub(crate) fn node(&self, expr: Handle<Expr>) -> Eval<&'f Expr> {
        self.func
            .exprs
            .try_get(expr)
            .ok_or_else(|| malformed(format!("expression {expr:?} does not exist")))
    }

    pub(crate) fn dtype(&self, expr: Handle<Expr>) -> Eval<DType> {
        self.func
            .expr_types
            .get(expr.index())
            .copied()
            .ok_or_else(|| malformed(format!("expression {expr:?} has no type")))
    }

    pub(crate) fn buffer(&self, buffer: Handle<Buffer>) -> Eval<&'f Buffer> {
        self.func
            .buffers
            .try_get(buffer)
            .ok_or_else(|| malformed(format!("buffer {buffer:?} does not exist")))
    }

    pub(crate) fn var(&self, var: Handle<Var>) -> Eval<&'f Var> {
        self.func
            .vars
            .try_get(var)
            .ok_or_else(|| malformed(format!("variable {var:?} does not exist")))
    }

    /// Compiles an integer or bool expression.
    pub(crate) fn int(&self, expr: Handle<Expr>) -> Eval<IntFn> {
        match self.code(expr)? {
            Code::Int(f) => Ok(f),
            Code::Float(_) => Err(malformed(format!(
                "expected an integer expression, found {}",
                self.dtype(expr)?
            ))),
        }
    }

    /// Compiles a bool condition (an integer is accepted as "non-zero").
    pub(crate) fn condition(&self, expr: Handle<Expr>) -> Eval<IntFn> {
        self.int(expr)
    }

    /// Compiles `expr` converted to `dtype` as a cast would.
    pub(crate) fn converted(&self, expr: Handle<Expr>, dtype: DType) -> Eval<Code> {
        Ok(cast_code(self.code(expr)?, self.dtype(expr)?, dtype))
    }

    /// Compiles the indices of an access to `buffer`.
    pub(crate) fn indices(
        &self,
        buffer: Handle<Buffer>,
        indices: &[Handle<Expr>],
    ) -> Eval<Vec<IntFn>> {
        let b = self.buffer(buffer)?;
        if b.shape.len() != indices.len() {
            return Err(malformed(format!(
                "buffer `{}` has {} dimensions but {} indices were given",
                b.name,
                b.shape.len(),
                indices.len()
            )));
        }
        indices.iter().map(|&i| self.int(i)).collect()
    }

    /// Compiles an expression (once; later calls share the code).
    pub(crate) fn code(&self, expr: Handle<Expr>) -> Eval<Code> {
        // Per-thread code is compiled afresh: what it compiles may read the
        // thread variable, which block-level code may not.
        let cached = !self.per_thread.get();
        if cached && let Some(Some(code)) = self.cache.borrow().get(expr.index()) {
            return Ok(code.clone());
        }
        let depth = self.depth.get();
        if depth >= MAX_EXPR_DEPTH {
            return Err(unsupported(format!(
                "expressions nested more than {MAX_EXPR_DEPTH} levels deep"
            )));
        }
        self.depth.set(depth + 1);
        let result = self.compile_node(expr);
        self.depth.set(depth);
        let code = result?;
        if cached && let Some(slot) = self.cache.borrow_mut().get_mut(expr.index()) {
            *slot = Some(code.clone());
        }
        Ok(code)
    }

    fn compile_node(&self, expr: Handle<Expr>) -> Eval<Code> {
        let dtype = self.dtype(expr)?;
        match self.node(expr)? {
            &Expr::Literal(literal) => Ok(match literal {
                Literal::Bool(b) => {
                    let v = i64::from(b);
                    Code::Int(Rc::new(move |_| Ok(v)))
                }
                Literal::Int(v, _) => Code::Int(Rc::new(move |_| Ok(v))),
                Literal::Float(x, _) => Code::Float(Rc::new(move |_| Ok(x))),
            }),
            &Expr::Var(var) => self.var_code(var),
            &Expr::Unary { op, arg } => {
                let arg_type = self.dtype(arg)?;
                let arg_code = self.code(arg)?;
                unary_code(op, arg_type, dtype, arg_code)
            }
            &Expr::Binary { op, lhs, rhs } => {
                let operand = self.dtype(lhs)?;
                if self.dtype(rhs)? != operand {
                    return Err(malformed(format!(
                        "operands of {op:?} have types {operand} and {}",
                        self.dtype(rhs)?
                    )));
                }
                binary_code(op, operand, self.code(lhs)?, self.code(rhs)?)
            }
            &Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                let cond = self.condition(cond)?;
                Ok(match (self.code(then)?, self.code(otherwise)?) {
                    (Code::Int(a), Code::Int(b)) => {
                        Code::Int(Rc::new(
                            move |env| {
                                if cond(env)? != 0 { a(env) } else { b(env) }
                            },
                        ))
                    }
                    (Code::Float(a), Code::Float(b)) => {
                        Code::Float(Rc::new(
                            move |env| {
                                if cond(env)? != 0 { a(env) } else { b(env) }
                            },
                        ))
                    }
                    _ => return Err(malformed("select arms have different types")),
                })
            }
            &Expr::Cast { dtype: to, arg } => self.converted(arg, to),
            &Expr::Bitcast { dtype: to, arg } => {
                let from = self.dtype(arg)?;
                if !crate::ir::bitcast_ok(from, to) {
                    return Err(malformed(format!("a bit cast from {from} to {to}")));
                }
                Ok(bitcast_code(self.code(arg)?, from, to))
            }
            Expr::Load { buffer, indices } => {
                let buffer_dtype = self.buffer(*buffer)?.dtype;
                let indices = self.indices(*buffer, indices)?;
                let b = buffer.index();
                Ok(if buffer_dtype.is_float() {
                    Code::Float(Rc::new(move |env| {
                        let Some((offset, slot)) = env.locate(b, &indices)? else {
                            return Ok(0.0);
                        };
                        match &slot.data {
                            TensorData::Float(v) => v.get(offset).copied().ok_or_else(bad_offset),
                            TensorData::Int(_) => Err(malformed("float buffer holds integers")),
                        }
                    }))
                } else {
                    Code::Int(Rc::new(move |env| {
                        let Some((offset, slot)) = env.locate(b, &indices)? else {
                            return Ok(0);
                        };
                        match &slot.data {
                            TensorData::Int(v) => v.get(offset).copied().ok_or_else(bad_offset),
                            TensorData::Float(_) => Err(malformed("integer buffer holds floats")),
                        }
                    }))
                })
            }
        }
    }

    fn var_code(&self, var: Handle<Var>) -> Eval<Code> {
        let v = self.var(var)?;
        let index = var.index();
        match v.kind {
            VarKind::Symbolic => {
                let value = self.symbols.get(index).copied().flatten().ok_or_else(|| {
                    Box::new(InterpError::UnboundSymbol {
                        name: v.name.clone(),
                    })
                })?;
                Ok(if v.dtype.is_float() {
                    let x = v.dtype.round_f64(value as f64);
                    Code::Float(Rc::new(move |_| Ok(x)))
                } else {
                    let value = v.dtype.wrap_i64(value);
                    Code::Int(Rc::new(move |_| Ok(value)))
                })
            }
            VarKind::ThreadIdx if self.per_thread.get() => {
                Ok(Code::Int(Rc::new(move |env| Ok(env.ints[index]))))
            }
            VarKind::ThreadIdx => Err(unsupported(format!(
                "per-thread code (it reads the thread index `{}`) is not executed by the reference interpreter",
                v.name
            ))),
            VarKind::Let
                if !self.per_thread.get()
                    && self.thread_lets.borrow().iter().any(|(v, _)| *v == var) =>
            {
                Err(unsupported(format!(
                    "per-thread code (it reads `{}`, computed from the thread index) is not \
                     executed by the reference interpreter outside an `if` on the thread index",
                    v.name
                )))
            }
            VarKind::Loop | VarKind::Let | VarKind::BlockIdx => Ok(if v.dtype.is_float() {
                Code::Float(Rc::new(move |env| Ok(env.floats[index])))
            } else {
                Code::Int(Rc::new(move |env| Ok(env.ints[index])))
            }),
        }
    }
}

fn bad_offset() -> Fault {
    malformed("element offset outside the buffer's storage")
}

fn unary_code(op: crate::ir::UnaryOp, arg_type: DType, result: DType, arg: Code) -> Eval<Code> {
    use crate::ir::UnaryOp;
    Ok(match (op, arg) {
        (UnaryOp::IsNan, Code::Float(a)) => {
            Code::Int(Rc::new(move |env| Ok(i64::from(a(env)?.is_nan()))))
        }
        (UnaryOp::IsInf, Code::Float(a)) => {
            Code::Int(Rc::new(move |env| Ok(i64::from(a(env)?.is_infinite()))))
        }
        (_, Code::Float(a)) => {
            let f = scalar::float_unary(op)
                .ok_or_else(|| malformed(format!("`{}` on a float", op.name())))?;
            Code::Float(Rc::new(move |env| Ok(result.round_f64(f(a(env)?)))))
        }
        (_, Code::Int(a)) => {
            let f = scalar::int_unary(op, arg_type.kind())
                .ok_or_else(|| malformed(format!("`{}` on {arg_type}", op.name())))?;
            Code::Int(Rc::new(move |env| Ok(f(arg_type, a(env)?))))
        }
    })
}

fn binary_code(op: BinaryOp, operand: DType, lhs: Code, rhs: Code) -> Eval<Code> {
    let mismatch = || malformed(format!("`{op:?}` on {operand}"));
    Ok(match (lhs, rhs) {
        (Code::Int(a), Code::Int(b)) => match op {
            BinaryOp::And => Code::Int(Rc::new(move |env| {
                Ok(if a(env)? == 0 {
                    0
                } else {
                    i64::from(b(env)? != 0)
                })
            })),
            BinaryOp::Or => Code::Int(Rc::new(move |env| {
                Ok(if a(env)? != 0 {
                    1
                } else {
                    i64::from(b(env)? != 0)
                })
            })),
            _ if op.is_comparison() => {
                let cmp = scalar::int_compare(op, operand.kind()).ok_or_else(mismatch)?;
                Code::Int(Rc::new(move |env| Ok(i64::from(cmp(a(env)?, b(env)?)))))
            }
            _ => {
                if operand.kind() == DTypeKind::Bool && !op.is_bitwise() {
                    return Err(mismatch());
                }
                let f = scalar::int_arith(op, operand.kind()).ok_or_else(mismatch)?;
                Code::Int(Rc::new(move |env| {
                    f(operand, a(env)?, b(env)?).map_err(|_| division_by_zero())
                }))
            }
        },
        (Code::Float(a), Code::Float(b)) => {
            if op.is_comparison() {
                let cmp = scalar::float_compare(op).ok_or_else(mismatch)?;
                Code::Int(Rc::new(move |env| Ok(i64::from(cmp(a(env)?, b(env)?)))))
            } else {
                let f = scalar::float_arith(op).ok_or_else(mismatch)?;
                if operand == DType::F64 {
                    Code::Float(Rc::new(move |env| Ok(f(a(env)?, b(env)?))))
                } else {
                    Code::Float(Rc::new(move |env| {
                        Ok(operand.round_f64(f(a(env)?, b(env)?)))
                    }))
                }
            }
        }
        _ => return Err(mismatch()),
    })
}
