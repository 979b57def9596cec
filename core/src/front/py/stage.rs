//! The stager: builds one IR function while its Python body is evaluated.
//!
//! It owns the function under construction and a stack of open blocks (one
//! per nested `for`/`if`/`with` body). Expressions are built through it so
//! that operand types are reconciled the way TileLang (TVM) does it — Python
//! numbers adopt the type of the IR operand, mixed IR types promote to the
//! wider or floating type — and constant operands are folded. Region extents
//! (`stop - start`) are simplified through linear forms so that
//! `A[i*64:(i+1)*64]` has the constant extent 64.

use super::codes;
use super::value::{EResult, PyBinOp, Value};
use crate::front::Diagnostic;
use crate::ir::{
    self, BinaryOp, Block, DType, DTypeKind, Expr, Handle, Literal, Span, Stmt, UnaryOp, Var,
    VarKind,
};
use std::collections::{BTreeMap, HashMap, HashSet};

/// State of the eager (`T.const` / annotation) style while its body stages.
#[derive(Debug, Default)]
pub(crate) struct EagerState {
    /// Signature parameters that are tensors still waiting for an annotation.
    pub signature: Vec<String>,
    /// Parameters declared by annotation, by name.
    pub declared: BTreeMap<String, Handle<ir::Buffer>>,
    /// Buffers created by `T.empty`, in order.
    pub outputs: Vec<Handle<ir::Buffer>>,
    /// Buffers named by `return`.
    pub returned: Vec<Handle<ir::Buffer>>,
    /// Signature parameters that are scalars (`n: T.int32`).
    pub scalars: Vec<String>,
}

/// Context of the innermost open `T.Kernel`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelCx {
    pub thread_var: Handle<Var>,
    /// The block order `T.use_swizzle` asked for.
    pub order: Option<ir::BlockOrder>,
    /// The kernel's thread count.
    pub threads: u32,
    /// The extents of `threadIdx.x/y/z`, whose product is `threads`: the
    /// thread index is one linear index `x + X·(y + Y·z)`.
    pub dims: [u32; 3],
    /// Whether a `T.ws` body is being staged.
    pub in_role: bool,
    /// The barriers of `T.create_list_of_mbarrier`, which `T.get_mbarrier`
    /// and barrier numbers name.
    pub mbarriers: Option<Handle<ir::Buffer>>,
}

#[derive(Debug)]
pub(crate) struct Stager {
    pub func: ir::Function,
    blocks: Vec<Block>,
    names: HashSet<String>,
    pub kernel: Option<KernelCx>,
    /// Buffers made by an allocation call and not yet named by assignment.
    pub unnamed: HashSet<Handle<ir::Buffer>>,
    pub eager: Option<EagerState>,
    /// Depth of open `T.Parallel` nests.
    pub parallel_depth: usize,
    /// Depth of open run-time `if`s whose condition may read the thread
    /// index (see [`Stager::may_read_thread`]).
    pub thread_guard_depth: usize,
    /// Of those, the branches that may run on more than one thread (all
    /// but the `then` branch of `tx == k`).
    pub many_thread_guard_depth: usize,
    /// `let` variables whose value may read the thread index.
    thread_lets: HashSet<Handle<Var>>,
    /// Symbolic sizes by their source name (the IR name may carry a suffix).
    symbols: BTreeMap<String, Handle<Var>>,
    /// Variables bound inside an open block, with the block depth.
    scoped: Vec<(Handle<Var>, usize)>,
    /// Variables whose block has ended.
    out_of_scope: HashSet<Handle<Var>>,
    /// Warnings about `T.Pipelined` lists not followed, by loop variable:
    /// whether a list is followed can depend on the function's pass
    /// configs, which a `tilelang.jit` around the kernel sets after it is
    /// staged (`front::py::compile` decides on the finished function).
    pub list_warnings: Vec<(Handle<Var>, Diagnostic)>,
    /// Loops the stager made over the thread count for a thread-level
    /// atomic: every thread adds once, whatever the thread dimensions.
    pub per_thread_loops: HashSet<Handle<Var>>,
    /// `T.alloc_reducer` buffers (`reducer.rs`).
    pub reducers: super::reducer::Reducers,
    /// Integer expressions computed in `i32` by the usual integer
    /// promotions, with the 8- or 16-bit type TileLang gives them (see
    /// [`Stager::operands`]).
    nominal: HashMap<Handle<Expr>, DType>,
    /// `T.annotate_safe_value` values of the open kernel's global buffers
    /// (`safe_value.rs`): what their out-of-bounds loads read.
    pub safe_values: HashMap<Handle<ir::Buffer>, f64>,
    /// The number of expressions when the open kernel or `T.sblock`
    /// began: loads from there on are its reads.
    pub safe_mark: usize,
    /// The first tile operation that read a buffer with a safe value
    /// without it (`safe_value::unpadded_read`), reported when the
    /// kernel ends.
    pub safe_refusal: Option<(Handle<ir::Buffer>, Span)>,
    /// Depth of open `T.sblock` scopes.
    pub sblock_depth: usize,
    /// `T.handle` parameters not yet matched by `T.match_buffer`.
    pub handles: Vec<super::match_buffer::Pending>,
}

/// `Σ coeff·var + constant` over integer variables.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Linear {
    terms: BTreeMap<Handle<Var>, i64>,
    constant: i64,
    dtype: DType,
}

impl Stager {
    pub fn new(name: &str) -> Self {
        Stager {
            func: ir::Function::new(name),
            blocks: vec![Block::new()],
            names: HashSet::new(),
            kernel: None,
            unnamed: HashSet::new(),
            eager: None,
            parallel_depth: 0,
            thread_guard_depth: 0,
            many_thread_guard_depth: 0,
            thread_lets: HashSet::new(),
            symbols: BTreeMap::new(),
            scoped: Vec::new(),
            out_of_scope: HashSet::new(),
            list_warnings: Vec::new(),
            per_thread_loops: HashSet::new(),
            reducers: Default::default(),
            nominal: HashMap::new(),
            safe_values: HashMap::new(),
            safe_mark: 0,
            safe_refusal: None,
            sblock_depth: 0,
            handles: Vec::new(),
        }
    }

    /// Finishes the function: the outermost block becomes its body.
    pub fn finish(mut self) -> ir::Function {
        self.order_scalar_symbols();
        while self.blocks.len() > 1 {
            let b = self.pop_block();
            self.blocks
                .last_mut()
                .map(|top| top.stmts.extend(b.stmts))
                .unwrap_or_default();
        }
        self.func.body = self.blocks.pop().unwrap_or_default();
        self.func
    }

    /// A name not yet used in this function, derived from `base`.
    pub fn fresh_name(&mut self, base: &str) -> String {
        let base = if base.is_empty() { "v" } else { base };
        if self.names.insert(base.to_string()) {
            return base.to_string();
        }
        for i in 1.. {
            let candidate = format!("{base}.{i}");
            if self.names.insert(candidate.clone()) {
                return candidate;
            }
        }
        unreachable!("an unused name exists")
    }

    /// Renames a buffer created without a name (the target of its first
    /// assignment names it).
    pub fn name_buffer(&mut self, buffer: Handle<ir::Buffer>, name: &str) {
        if self.unnamed.remove(&buffer) {
            let old = std::mem::take(&mut self.func.buffers[buffer].name);
            self.names.remove(&old);
            self.func.buffers[buffer].name = self.fresh_name(name);
        }
    }

    pub fn add_var(&mut self, name: &str, dtype: DType, kind: VarKind) -> Handle<Var> {
        let name = self.fresh_name(name);
        self.func.add_var(name, dtype, kind)
    }

    pub fn add_buffer(
        &mut self,
        name: &str,
        dtype: DType,
        shape: Vec<Handle<Expr>>,
        scope: ir::Scope,
        span: Span,
    ) -> Handle<ir::Buffer> {
        let name = self.fresh_name(name);
        self.func.add_buffer(
            ir::Buffer {
                name,
                dtype,
                shape,
                scope,
                placement: None,
                layout: None,
            },
            span,
        )
    }

    pub fn emit(&mut self, stmt: Stmt, span: Span) {
        if !self.safe_values.is_empty()
            && self.safe_refusal.is_none()
            && let Some(b) = super::safe_value::unpadded_read(self, &stmt)
        {
            self.safe_refusal = Some((b, span));
        }
        if let Some(top) = self.blocks.last_mut() {
            top.push(stmt, span);
        }
    }

    pub fn push_block(&mut self) {
        self.blocks.push(Block::new());
    }

    /// Records that `var` is bound in the innermost open block and goes out
    /// of scope when that block ends.
    pub fn note_scoped(&mut self, var: Handle<Var>) {
        self.scoped.push((var, self.blocks.len()));
    }

    /// Whether `var`'s block has ended.
    pub fn is_out_of_scope(&self, var: Handle<Var>) -> bool {
        self.out_of_scope.contains(&var)
    }

    pub fn pop_block(&mut self) -> Block {
        let depth = self.blocks.len();
        while let Some(&(var, d)) = self.scoped.last() {
            if d < depth {
                break;
            }
            self.out_of_scope.insert(var);
            self.scoped.pop();
        }
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Block::new()
        }
    }

    /// The statement emitted last into the innermost open block.
    pub fn last_stmt_mut(&mut self) -> Option<&mut Stmt> {
        self.blocks.last_mut().and_then(|b| b.stmts.last_mut())
    }

    /// TileLang's reading of a negative constant index (its
    /// `LegalizeNegativeIndex` pass, in every pipeline): an index that is
    /// provably negative counts from the end of its axis, as in Python, so
    /// `A[-1]` is `A[extent - 1]`. Indices that are compile-time constants
    /// below zero on an axis of constant extent are rewritten so.
    pub fn wrap_negative(&mut self, b: Handle<ir::Buffer>, indices: &mut [Handle<Expr>]) {
        for (d, index) in indices.iter_mut().enumerate() {
            let Some(Literal::Int(v, ty)) = self.func.as_literal(*index) else {
                continue;
            };
            let extent = self.func.buffers[b]
                .shape
                .get(d)
                .and_then(|e| self.func.as_literal(*e))
                .and_then(Literal::as_i64);
            if v < 0
                && let Some(extent) = extent
            {
                *index = self.lit(Literal::Int(ty.wrap_i64(extent.saturating_add(v)), ty));
            }
        }
    }

    /// The value a `let` in an open block binds `var` to (the bindings of
    /// kernel-level scalar assignments, `m = T.min(n, 64)`).
    pub fn let_value(&self, var: Handle<Var>) -> Option<Handle<Expr>> {
        self.blocks.iter().rev().find_map(|b| {
            b.stmts.iter().rev().find_map(|s| match s {
                Stmt::Let { var: v, value } if *v == var => Some(*value),
                _ => None,
            })
        })
    }

    /// A buffer's extents when all are constants.
    pub fn const_shape_of(&self, b: Handle<ir::Buffer>) -> Option<Vec<i64>> {
        self.func.const_shape(b)
    }

    /// Depth of open blocks (1 = function body).
    /// Binds a fresh `let` variable named after `name` to `value` in the
    /// current block and returns it.
    pub fn bind_let(&mut self, name: &str, value: Handle<Expr>, span: Span) -> Handle<Var> {
        // A TileLang variable holds its nominal type's value.
        let value = self.narrowed(value, span).unwrap_or(value);
        let dtype = self.ty(value);
        let var = self.add_var(name, dtype, VarKind::Let);
        self.emit(Stmt::Let { var, value }, span);
        self.note_let(var, value);
        self.note_scoped(var);
        var
    }

    /// Records the `let` variable `var` bound to `value`, so that
    /// [`Stager::may_read_thread`] sees through it.
    fn note_let(&mut self, var: Handle<Var>, value: Handle<Expr>) {
        if self.may_read_thread(value) {
            self.thread_lets.insert(var);
        }
    }

    /// Whether `e` may differ between the threads of a block: it reads the
    /// thread index (directly or through a `let`), or an element of a
    /// per-thread buffer (`var`, `local`, `fragment`), whose contents can.
    pub fn may_read_thread(&self, e: Handle<Expr>) -> bool {
        self.any_node(e, |node| match node {
            Expr::Var(v) => {
                self.thread_lets.contains(v) || self.kernel.is_some_and(|k| k.thread_var == *v)
            }
            Expr::Load { buffer, .. } => !matches!(
                self.func.buffers[*buffer].scope,
                ir::Scope::Global | ir::Scope::Shared
            ),
            _ => false,
        })
    }

    /// Whether `cond` holds on exactly one thread of the block: the
    /// thread index compared for equality with a constant.
    pub fn one_thread(&self, cond: Handle<Expr>) -> bool {
        let Some(k) = self.kernel else {
            return false;
        };
        match &self.func.exprs[cond] {
            Expr::Binary {
                op: BinaryOp::Eq,
                lhs,
                rhs,
            } => {
                let is_tx = |e: Handle<Expr>| matches!(self.func.exprs[e], Expr::Var(v) if v == k.thread_var);
                let is_lit = |e: Handle<Expr>| matches!(self.func.exprs[e], Expr::Literal(_));
                (is_tx(*lhs) && is_lit(*rhs)) || (is_lit(*lhs) && is_tx(*rhs))
            }
            _ => false,
        }
    }

    /// Whether `e` loads from a buffer.
    pub fn reads_memory(&self, e: Handle<Expr>) -> bool {
        self.any_node(e, |node| matches!(node, Expr::Load { .. }))
    }

    /// Whether some node of the expression tree `e` satisfies `pred` (walked
    /// with an explicit stack: staged expressions can be deep).
    fn any_node(&self, e: Handle<Expr>, pred: impl Fn(&Expr) -> bool) -> bool {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            let Some(node) = self.func.exprs.try_get(e) else {
                continue;
            };
            if pred(node) {
                return true;
            }
            stack.extend(node.operands());
        }
        false
    }

    pub fn block_depth(&self) -> usize {
        self.blocks.len()
    }

    pub fn ty(&self, e: Handle<Expr>) -> DType {
        self.func.ty(e)
    }

    pub fn int(&mut self, v: i64) -> Handle<Expr> {
        self.func.int(v)
    }

    pub fn lit(&mut self, l: Literal) -> Handle<Expr> {
        self.func.lit(l)
    }

    pub fn var(&mut self, v: Handle<Var>) -> Handle<Expr> {
        self.func.var_expr(v)
    }

    /// Adds an expression, turning a type error into a diagnostic at `span`.
    pub fn expr(&mut self, e: Expr, span: Span) -> EResult<Handle<Expr>> {
        self.func.add_expr(e).map_err(|err| {
            Box::new(
                Diagnostic::error(codes::IR_TYPE, err.to_string(), span)
                    .with_label("in this expression"),
            )
        })
    }

    /// Converts `e` to `dtype` (folding literals).
    pub fn cast(&mut self, e: Handle<Expr>, dtype: DType, span: Span) -> EResult<Handle<Expr>> {
        if self.ty(e) == dtype {
            return Ok(e);
        }
        if let Some(l) = self.func.as_literal(e) {
            return Ok(self.lit(Literal::of(dtype, l.as_f64())));
        }
        self.expr(Expr::Cast { dtype, arg: e }, span)
    }

    /// A literal of `dtype` for a Python number.
    pub fn number(&mut self, value: f64, dtype: DType) -> Handle<Expr> {
        self.lit(Literal::of(dtype, value))
    }

    /// Converts a value to an IR expression. Python numbers become literals
    /// (int32 / float32 / bool unless `hint` gives a type).
    pub fn value_expr(
        &mut self,
        v: &Value<'_>,
        hint: Option<DType>,
        span: Span,
    ) -> EResult<Handle<Expr>> {
        match v {
            Value::Expr(e) => Ok(*e),
            Value::Bool(b) => Ok(match hint {
                Some(t) if !t.is_bool() => self.number(f64::from(u8::from(*b)), t),
                _ => self.lit(Literal::Bool(*b)),
            }),
            Value::Int(i) => Ok(match hint {
                Some(t) if t.is_float() || t.is_int() => {
                    if t.is_int() {
                        self.lit(Literal::Int(t.wrap_i64(*i), t))
                    } else {
                        self.number(*i as f64, t)
                    }
                }
                _ => {
                    if i32::try_from(*i).is_ok() {
                        self.int(*i)
                    } else {
                        self.lit(Literal::Int(*i, DType::I64))
                    }
                }
            }),
            Value::Float(f) => Ok(match hint {
                Some(t) if t.is_float() => self.number(*f, t),
                _ => self.number(*f, DType::F32),
            }),
            Value::Buffer(b) if self.func.buffers[*b].scope == ir::Scope::Var => {
                let zero = self.int(0);
                self.expr(
                    Expr::Load {
                        buffer: *b,
                        indices: vec![zero],
                    },
                    span,
                )
            }
            Value::ViewAccess(va) => {
                let a = super::views::element(self, va)?;
                match super::views::retyped(self, &va.view) {
                    // The buffer's bits read as the view's type.
                    Some(dtype) => {
                        let e = self.value_expr(&Value::Access(std::rc::Rc::new(a)), None, span)?;
                        self.expr(Expr::Bitcast { dtype, arg: e }, span)
                    }
                    None => self.value_expr(&Value::Access(std::rc::Rc::new(a)), hint, span),
                }
            }
            Value::Access(a) => {
                let mut indices = Vec::new();
                for item in &a.items {
                    match item {
                        super::value::IndexItem::Point(e) => indices.push(*e),
                        super::value::IndexItem::Slice { .. } => {
                            return Err(Box::new(
                                Diagnostic::error(
                                    codes::BAD_SUBSCRIPT,
                                    "a buffer region is used where a scalar is expected",
                                    a.span,
                                )
                                .with_label("this subscript has a slice")
                                .with_note("regions are operands of tile operations such as T.copy; index every dimension to read one element"),
                            ));
                        }
                    }
                }
                let rank = self.func.buffers[a.buffer].shape.len();
                if indices.len() != rank {
                    let name = &self.func.buffers[a.buffer].name;
                    return Err(rank_mismatch(
                        name,
                        rank,
                        indices.len(),
                        a.span,
                        "used as a scalar here",
                    ));
                }
                self.wrap_negative(a.buffer, &mut indices);
                if self.safe_values.contains_key(&a.buffer) {
                    let dtype = self.func.buffers[a.buffer].dtype;
                    return super::safe_value::load_as(self, a.buffer, indices, dtype, span);
                }
                self.expr(
                    Expr::Load {
                        buffer: a.buffer,
                        indices,
                    },
                    span,
                )
            }
            Value::Symbol(name, dtype) => {
                let var = match self.symbols.get(&**name) {
                    Some(v) => *v,
                    None => {
                        let v = self.add_var(name, *dtype, VarKind::Symbolic);
                        self.func.symbols.push(v);
                        self.symbols.insert(name.to_string(), v);
                        v
                    }
                };
                Ok(self.var(var))
            }
            Value::Poison(_) => Err(cascade()),
            Value::Vector(l) => Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!("a vector of {} lanes cannot be used as a scalar value", l.lanes.len()),
                    span,
                )
                .with_label("this is a vector (`T.Broadcast` / `T.Ramp`)")
                .with_note("tilec takes vectors in lane-wise arithmetic, as `T.Ramp` indices and stored into `A[i:i + lanes]`; compute other uses lane by lane in a `T.vectorized` loop"),
            )),
            other => Err(Box::new(
                Diagnostic::error(
                    codes::TYPE_ERROR,
                    format!(
                        "{} cannot be used as a scalar value in a kernel",
                        other.a_type_name()
                    ),
                    span,
                )
                .with_label(format!("this is {}", other.a_type_name())),
            )),
        }
    }

    /// The type both operands take in a binary operation.
    fn common_type(&self, a: DType, b: DType) -> DType {
        if a == b {
            return a;
        }
        match (a.kind(), b.kind()) {
            (DTypeKind::Float, DTypeKind::Float) => {
                if a.bits() != b.bits() {
                    if a.bits() > b.bits() { a } else { b }
                } else if a == DType::F16 || b == DType::F16 {
                    // bf16 with f16: no exact common 16-bit type.
                    DType::F32
                } else {
                    a
                }
            }
            (DTypeKind::Float, _) => a,
            (_, DTypeKind::Float) => b,
            (DTypeKind::Bool, _) => b,
            (_, DTypeKind::Bool) => a,
            _ => {
                if a.bits() != b.bits() {
                    if a.bits() > b.bits() { a } else { b }
                } else if a.kind() == DTypeKind::Signed {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// Converts the operands of a binary operation to IR with a common type.
    fn operands(
        &mut self,
        a: &Value<'_>,
        b: &Value<'_>,
        span: Span,
    ) -> EResult<(Handle<Expr>, Handle<Expr>, DType)> {
        let a_staged = a.is_staged();
        let b_staged = b.is_staged();
        let (ea, eb) = match (a_staged, b_staged) {
            (true, false) => {
                let ea = self.value_expr(a, None, span)?;
                let hint = python_hint(self.nominal_ty(ea), b);
                let eb = self.value_expr(b, Some(hint), span)?;
                (ea, eb)
            }
            (false, true) => {
                let eb = self.value_expr(b, None, span)?;
                let hint = python_hint(self.nominal_ty(eb), a);
                let ea = self.value_expr(a, Some(hint), span)?;
                (ea, eb)
            }
            _ => (
                self.value_expr(a, None, span)?,
                self.value_expr(b, None, span)?,
            ),
        };
        let t = self.common_type(self.nominal_ty(ea), self.nominal_ty(eb));
        // TileLang types `a + b` of two `uint8` as `uint8`, but the C++ it
        // generates computes it in `int` (the usual integer promotions):
        // `T.cast(h << 20, T.uint32)` of a `uint16` keeps the bits shifted
        // past bit 15, and `(a + b) // 2` does not wrap. So 8- and 16-bit
        // operands are computed in `i32`; the result keeps TileLang's type
        // as its nominal type, to which a `let` binding or a `T.reinterpret`
        // truncates it as TileLang's generated variable does
        // ([`Stager::narrowed`]). Two literals fold in their own type.
        let both_literals =
            self.func.as_literal(ea).is_some() && self.func.as_literal(eb).is_some();
        let c = if t.is_int() && t.bits() < 32 && !both_literals {
            DType::I32
        } else {
            t
        };
        Ok((self.cast(ea, c, span)?, self.cast(eb, c, span)?, t))
    }

    /// The type TileLang gives `e`: its IR type, or the 8- or 16-bit type of
    /// an expression the integer promotions compute in `i32`.
    pub fn nominal_ty(&self, e: Handle<Expr>) -> DType {
        self.nominal.get(&e).copied().unwrap_or_else(|| self.ty(e))
    }

    /// `e` truncated to its nominal type where the integer promotions
    /// widened it: the value a TileLang variable of that type holds.
    pub fn narrowed(&mut self, e: Handle<Expr>, span: Span) -> EResult<Handle<Expr>> {
        match self.nominal.get(&e).copied() {
            Some(t) if t != self.ty(e) => self.cast(e, t, span),
            _ => Ok(e),
        }
    }

    /// Stages a Python binary operator where at least one operand is IR.
    pub fn binop(
        &mut self,
        op: PyBinOp,
        a: &Value<'_>,
        b: &Value<'_>,
        span: Span,
    ) -> EResult<Handle<Expr>> {
        let (mut ea, mut eb, nominal) = self.operands(a, b, span)?;
        let t = self.ty(ea);
        let ir_op = match op {
            PyBinOp::Add => BinaryOp::Add,
            PyBinOp::Sub => BinaryOp::Sub,
            PyBinOp::Mul => BinaryOp::Mul,
            PyBinOp::Div => BinaryOp::Div,
            PyBinOp::FloorDiv => BinaryOp::FloorDiv,
            PyBinOp::Mod => BinaryOp::FloorMod,
            PyBinOp::Pow => {
                if !t.is_float() {
                    ea = self.cast(ea, DType::F32, span)?;
                    eb = self.cast(eb, DType::F32, span)?;
                }
                BinaryOp::Pow
            }
            PyBinOp::LShift => BinaryOp::Shl,
            PyBinOp::RShift => BinaryOp::Shr,
            PyBinOp::BitAnd => {
                if t.is_bool() {
                    BinaryOp::And
                } else {
                    BinaryOp::BitAnd
                }
            }
            PyBinOp::BitOr => {
                if t.is_bool() {
                    BinaryOp::Or
                } else {
                    BinaryOp::BitOr
                }
            }
            PyBinOp::BitXor => BinaryOp::BitXor,
            PyBinOp::MatMul => {
                return Err(Box::new(
                    Diagnostic::error(
                        codes::TYPE_ERROR,
                        "`@` is not defined on scalar kernel values",
                        span,
                    )
                    .with_note("use T.gemm for matrix products of tiles"),
                ));
            }
        };
        if t.is_bool() && matches!(ir_op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul) {
            ea = self.cast(ea, DType::I32, span)?;
            eb = self.cast(eb, DType::I32, span)?;
        }
        let e = self.binary(ir_op, ea, eb, span)?;
        if nominal != self.ty(e) && nominal.is_int() && ir_op != BinaryOp::Pow {
            self.nominal.insert(e, nominal);
        }
        Ok(e)
    }

    /// Stages `op` (any binary operator, comparisons included) on two values,
    /// reconciling their types.
    pub fn op_values(
        &mut self,
        op: BinaryOp,
        a: &Value<'_>,
        b: &Value<'_>,
        span: Span,
    ) -> EResult<Handle<Expr>> {
        let (ea, eb, _) = self.operands(a, b, span)?;
        self.binary(op, ea, eb, span)
    }

    /// Converts a value to a bool expression (`x != 0` for numbers).
    pub fn bool_expr(&mut self, v: &Value<'_>, span: Span) -> EResult<Handle<Expr>> {
        let e = self.value_expr(v, None, span)?;
        let t = self.ty(e);
        if t.is_bool() {
            return Ok(e);
        }
        let zero = self.number(0.0, t);
        self.binary(BinaryOp::Ne, e, zero, span)
    }

    /// Adds a binary expression, folding literals and trivial integer
    /// identities.
    pub fn binary(
        &mut self,
        op: BinaryOp,
        lhs: Handle<Expr>,
        rhs: Handle<Expr>,
        span: Span,
    ) -> EResult<Handle<Expr>> {
        let (l, r) = (self.func.as_literal(lhs), self.func.as_literal(rhs));
        if let (Some(l), Some(r)) = (l, r)
            && let Some(folded) = fold_binary(op, l, r)
        {
            return Ok(self.lit(folded));
        }
        if self.ty(lhs).is_int() {
            let li = l.and_then(Literal::as_i64);
            let ri = r.and_then(Literal::as_i64);
            match (op, li, ri) {
                (BinaryOp::Add, _, Some(0)) | (BinaryOp::Sub, _, Some(0)) => return Ok(lhs),
                (BinaryOp::Add, Some(0), _) => return Ok(rhs),
                (BinaryOp::Mul, _, Some(1)) | (BinaryOp::FloorDiv | BinaryOp::Div, _, Some(1)) => {
                    return Ok(lhs);
                }
                (BinaryOp::Mul, Some(1), _) => return Ok(rhs),
                (BinaryOp::Mul, _, Some(0)) | (BinaryOp::Mul, Some(0), _) => {
                    return Ok(self.lit(Literal::Int(0, self.ty(lhs))));
                }
                _ => {}
            }
        }
        self.expr(Expr::Binary { op, lhs, rhs }, span)
    }

    /// Adds a unary expression, folding literals.
    pub fn unary(&mut self, op: UnaryOp, arg: Handle<Expr>, span: Span) -> EResult<Handle<Expr>> {
        if let Some(l) = self.func.as_literal(arg)
            && let Some(folded) = fold_unary(op, l)
        {
            return Ok(self.lit(folded));
        }
        self.expr(Expr::Unary { op, arg }, span)
    }

    /// `stop - start`, simplified (constant when the difference is).
    pub fn extent(
        &mut self,
        start: Handle<Expr>,
        stop: Handle<Expr>,
        span: Span,
    ) -> EResult<Handle<Expr>> {
        let t = self.common_type(self.ty(start), self.ty(stop));
        let start = self.cast(start, t, span)?;
        let stop = self.cast(stop, t, span)?;
        if let (Some(a), Some(b)) = (self.linear(stop), self.linear(start))
            && let Some(diff) = a.sub(&b)
        {
            return Ok(self.build_linear(&diff));
        }
        self.binary(BinaryOp::Sub, stop, start, span)
    }

    fn linear(&self, e: Handle<Expr>) -> Option<Linear> {
        let dtype = self.ty(e);
        if !dtype.is_int() {
            return None;
        }
        match &self.func.exprs[e] {
            Expr::Literal(Literal::Int(v, _)) => Some(Linear {
                terms: BTreeMap::new(),
                constant: *v,
                dtype,
            }),
            Expr::Var(v) => Some(Linear {
                terms: BTreeMap::from([(*v, 1)]),
                constant: 0,
                dtype,
            }),
            Expr::Binary { op, lhs, rhs } => {
                let a = self.linear(*lhs)?;
                let b = self.linear(*rhs)?;
                match op {
                    BinaryOp::Add => a.add(&b),
                    BinaryOp::Sub => a.sub(&b),
                    BinaryOp::Mul => {
                        if a.terms.is_empty() {
                            b.scale(a.constant)
                        } else if b.terms.is_empty() {
                            a.scale(b.constant)
                        } else {
                            None
                        }
                    }
                    _ => None,
                }
            }
            Expr::Unary {
                op: UnaryOp::Neg,
                arg,
            } => self.linear(*arg)?.scale(-1),
            _ => None,
        }
    }

    fn build_linear(&mut self, lin: &Linear) -> Handle<Expr> {
        let t = lin.dtype;
        let mut acc: Option<Handle<Expr>> = None;
        for (&v, &c) in &lin.terms {
            if c == 0 {
                continue;
            }
            let ve = self.var(v);
            let term = if c == 1 {
                ve
            } else {
                let ce = self.lit(Literal::Int(t.wrap_i64(c), t));
                self.func
                    .add_expr(Expr::Binary {
                        op: BinaryOp::Mul,
                        lhs: ve,
                        rhs: ce,
                    })
                    .unwrap_or(ve)
            };
            acc = Some(match acc {
                None => term,
                Some(a) => self
                    .func
                    .add_expr(Expr::Binary {
                        op: BinaryOp::Add,
                        lhs: a,
                        rhs: term,
                    })
                    .unwrap_or(a),
            });
        }
        match acc {
            None => self.lit(Literal::Int(t.wrap_i64(lin.constant), t)),
            Some(a) if lin.constant == 0 => a,
            Some(a) => {
                let (op, c) = if lin.constant < 0 {
                    (BinaryOp::Sub, lin.constant.saturating_neg())
                } else {
                    (BinaryOp::Add, lin.constant)
                };
                let ce = self.lit(Literal::Int(t.wrap_i64(c), t));
                self.func
                    .add_expr(Expr::Binary {
                        op,
                        lhs: a,
                        rhs: ce,
                    })
                    .unwrap_or(a)
            }
        }
    }
}

impl Linear {
    /// The sum, or `None` when a coefficient overflows.
    fn add(&self, other: &Linear) -> Option<Linear> {
        let mut out = self.clone();
        for (&v, &c) in &other.terms {
            let slot = out.terms.entry(v).or_insert(0);
            *slot = slot.checked_add(c)?;
        }
        out.terms.retain(|_, c| *c != 0);
        out.constant = out.constant.checked_add(other.constant)?;
        Some(out)
    }

    fn sub(&self, other: &Linear) -> Option<Linear> {
        self.add(&other.scale(-1)?)
    }

    fn scale(&self, k: i64) -> Option<Linear> {
        let mut out = self.clone();
        for c in out.terms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        out.terms.retain(|_, c| *c != 0);
        out.constant = out.constant.checked_mul(k)?;
        Some(out)
    }
}

/// The type a Python operand takes next to an IR operand of type `ir`.
fn python_hint(ir: DType, py: &Value<'_>) -> DType {
    match py {
        Value::Float(_) if !ir.is_float() => DType::F32,
        Value::Bool(_) if ir.is_bool() => DType::Bool,
        _ if ir.is_bool() => DType::I32,
        _ => ir,
    }
}

/// `buffer` was indexed with the wrong number of indices.
pub(crate) fn rank_mismatch(
    buffer: &str,
    rank: usize,
    given: usize,
    span: Span,
    label: &str,
) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::BAD_SUBSCRIPT,
            format!("`{buffer}` has {rank} dimensions but {given} indices were given"),
            span,
        )
        .with_label(label),
    )
}

/// An error already reported elsewhere; the evaluator drops it.
pub(crate) fn cascade() -> Box<Diagnostic> {
    Box::new(Diagnostic::error(CASCADE, "", Span::UNKNOWN))
}

/// Code of [`cascade`] errors, never shown.
pub(crate) const CASCADE: &str = "cascade";

/// Folds a binary operation on two literals of one type, when the result is
/// well defined.
pub(crate) fn fold_binary(op: BinaryOp, l: Literal, r: Literal) -> Option<Literal> {
    let t = l.dtype();
    if t != r.dtype() {
        return None;
    }
    if op.is_comparison() {
        let ord = match (l, r) {
            (Literal::Int(a, DType::U64), Literal::Int(b, _)) => {
                (a as u64).partial_cmp(&(b as u64))
            }
            (Literal::Int(a, _), Literal::Int(b, _)) => a.partial_cmp(&b),
            _ => l.as_f64().partial_cmp(&r.as_f64()),
        };
        use std::cmp::Ordering::*;
        let res = match op {
            BinaryOp::Eq => ord == Some(Equal),
            BinaryOp::Ne => ord != Some(Equal),
            BinaryOp::Lt => ord == Some(Less),
            BinaryOp::Le => matches!(ord, Some(Less | Equal)),
            BinaryOp::Gt => ord == Some(Greater),
            BinaryOp::Ge => matches!(ord, Some(Greater | Equal)),
            _ => return None,
        };
        return Some(Literal::Bool(res));
    }
    match (l, r) {
        (Literal::Bool(a), Literal::Bool(b)) => match op {
            BinaryOp::And | BinaryOp::BitAnd => Some(Literal::Bool(a && b)),
            BinaryOp::Or | BinaryOp::BitOr => Some(Literal::Bool(a || b)),
            BinaryOp::BitXor => Some(Literal::Bool(a ^ b)),
            _ => None,
        },
        (Literal::Int(a, _), Literal::Int(b, _)) => {
            if t == DType::U64 {
                return None;
            }
            let (a, b) = (i128::from(a), i128::from(b));
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a.checked_mul(b)?,
                BinaryOp::Div => a.checked_div(b)?,
                BinaryOp::FloorDiv => a.checked_div_euclid(b).map(|_| {
                    let q = a / b;
                    if (a % b != 0) && ((a < 0) != (b < 0)) {
                        q - 1
                    } else {
                        q
                    }
                })?,
                BinaryOp::FloorMod => {
                    let r = a.checked_rem(b)?;
                    if r != 0 && ((r < 0) != (b < 0)) {
                        r + b
                    } else {
                        r
                    }
                }
                BinaryOp::Min => a.min(b),
                BinaryOp::Max => a.max(b),
                BinaryOp::BitAnd => a & b,
                BinaryOp::BitOr => a | b,
                BinaryOp::BitXor => a ^ b,
                _ => return None,
            };
            let (lo, hi) = t.int_range()?;
            if v < lo || v > hi {
                // Wrapping constants are legal but surprising; keep them as IR.
                return None;
            }
            Some(Literal::Int(i64::try_from(v).ok()?, t))
        }
        (Literal::Float(a, _), Literal::Float(b, _)) => {
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => a / b,
                BinaryOp::Min => {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.min(b)
                    }
                }
                BinaryOp::Max => {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.max(b)
                    }
                }
                _ => return None,
            };
            Some(Literal::Float(t.round_f64(v), t))
        }
        _ => None,
    }
}

/// Folds a unary operation on a literal, for the exactly-defined cases.
pub(crate) fn fold_unary(op: UnaryOp, l: Literal) -> Option<Literal> {
    match (op, l) {
        (UnaryOp::Neg, Literal::Int(v, t)) if t.kind() == DTypeKind::Signed => {
            let n = v.checked_neg()?;
            (t.wrap_i64(n) == n).then_some(Literal::Int(n, t))
        }
        (UnaryOp::Neg, Literal::Float(v, t)) => Some(Literal::Float(-v, t)),
        (UnaryOp::Not, Literal::Bool(b)) => Some(Literal::Bool(!b)),
        (UnaryOp::Abs, Literal::Float(v, t)) => Some(Literal::Float(v.abs(), t)),
        _ => None,
    }
}
