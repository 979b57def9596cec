//! The parser of the thread-level IR text form (`docs/thread-ir.md`).
//!
//! It checks syntax, resolves names (each name of a kernel — parameter,
//! shared buffer, register, loop variable — is declared once, and a loop
//! variable is visible only in its loop's body) and types expressions.
//! Everything else is the verifier's job ([`super::verify`]), so that a file
//! may hold a kernel the verifier rejects. It never panics: every input
//! gives a module or a [`ParseError`] with a line and column. Nesting of
//! blocks and expressions is limited to [`MAX_DEPTH`] levels.

use std::collections::HashMap;

use super::lexer::{Tok, Token, tokenize};
use super::{
    AsyncA, Dim, Expr, ExprKind, FragRef, GlobalBuffer, Guard, GuardElse, Kernel, Major, MemRef,
    Module, Param, ParamId, ParseError, RegId, RegRef, Register, RegisterKind, SharedBuffer,
    SharedId, SharedMatrix, ShuffleKind, Special, Stmt, StmtKind, TensorMap, TensorMapId, Unroll,
};
use crate::ir::{AtomicOp, DType, DTypeKind, Literal, Span, UnaryOp};
use crate::text::{binary_function_from_name, infix_from_punct};

/// Deepest nesting of blocks, parentheses and prefix operators.
pub const MAX_DEPTH: u32 = 200;

/// Parses a module.
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    let mut p = Parser {
        toks: tokenize(src),
        pos: 0,
        depth: 0,
        scope: Scope::default(),
    };
    p.module()
}

#[derive(Clone, Copy, Debug)]
enum Entity {
    Param(ParamId),
    Shared(SharedId),
    Reg(RegId),
    TensorMap(TensorMapId),
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, Entity>,
    params: Vec<Param>,
    shared: Vec<SharedBuffer>,
    tensor_maps: Vec<TensorMap>,
    registers: Vec<Register>,
    /// Loop variables whose body is being parsed.
    open_loops: Vec<RegId>,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: u32,
    scope: Scope,
}

type PResult<T> = Result<T, ParseError>;

/// An extent as written: a constant, or a name resolved after the list.
/// A dimension of a global parameter before the parameter list is
/// complete: a constant, a name, or the token position of a parenthesized
/// expression, parsed once every name is declared.
enum PendingKind {
    Const(u64),
    Name(String),
    Expr(usize),
}

type PendingDim = (PendingKind, Token);

impl Parser {
    fn tok(&self) -> &Token {
        // `tokenize` always ends with `Eof` and `bump` never passes it.
        let last = self.toks.len().saturating_sub(1);
        &self.toks[self.pos.min(last)]
    }

    fn peek(&self) -> &Tok {
        &self.tok().tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        let last = self.toks.len().saturating_sub(1);
        &self.toks[(self.pos + ahead).min(last)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.tok().clone();
        if !matches!(t.tok, Tok::Eof) {
            self.pos += 1;
        }
        t
    }

    fn error_at(&self, token: &Token, message: impl Into<String>) -> ParseError {
        let message = match &token.tok {
            Tok::Error(e) => e.clone(),
            _ => message.into(),
        };
        ParseError {
            line: token.line,
            column: token.col,
            offset: token.start,
            message,
        }
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(self.tok(), message)
    }

    fn describe(tok: &Tok) -> String {
        match tok {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Name(s) => format!("`%{s}`"),
            Tok::FuncName(s) => format!("`@{s}`"),
            Tok::Int(s) | Tok::Float(s) => format!("`{s}`"),
            Tok::Str(_) => "a string".to_string(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Error(e) => e.clone(),
            Tok::Eof => "end of input".to_string(),
        }
    }

    fn expected(&self, what: &str) -> ParseError {
        self.error(format!(
            "expected {what}, found {}",
            Self::describe(self.peek())
        ))
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn expect_word(&mut self, w: &str) -> PResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{w}`")))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn name(&mut self) -> PResult<(String, Token)> {
        match self.peek().clone() {
            Tok::Name(s) => Ok((s, self.bump())),
            _ => Err(self.expected("a `%` name")),
        }
    }

    fn int_u64(&mut self, what: &str) -> PResult<u64> {
        match self.peek().clone() {
            Tok::Int(s) => {
                let token = self.bump();
                s.parse::<u64>()
                    .map_err(|_| self.error_at(&token, format!("{what} `{s}` is too large")))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn int_u32(&mut self, what: &str) -> PResult<u32> {
        let token = self.tok().clone();
        let v = self.int_u64(what)?;
        u32::try_from(v).map_err(|_| self.error_at(&token, format!("{what} {v} is too large")))
    }

    fn dtype(&mut self) -> PResult<DType> {
        match self.peek().clone() {
            Tok::Ident(s) => match DType::from_short_name(&s) {
                Some(d) => {
                    self.bump();
                    Ok(d)
                }
                None => Err(self.expected("a dtype")),
            },
            _ => Err(self.expected("a dtype")),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn module(&mut self) -> PResult<Module> {
        self.expect_word("thread_ir")
            .map_err(|_| self.expected("the header `thread_ir 0.1`"))?;
        let token = self.tok().clone();
        let version_ok = match &token.tok {
            Tok::Float(v) => v == super::VERSION,
            _ => false,
        };
        if !version_ok {
            return Err(self.error_at(&token, format!("expected version `{}`", super::VERSION)));
        }
        self.bump();
        let mut module = Module::default();
        while !matches!(self.peek(), Tok::Eof) {
            let kernel_token = self.tok().clone();
            let kernel = self.kernel()?;
            if module.kernel(&kernel.name).is_some() {
                return Err(self.error_at(
                    &kernel_token,
                    format!("kernel `@{}` is defined twice", kernel.name),
                ));
            }
            module.kernels.push(kernel);
        }
        Ok(module)
    }

    fn declare(&mut self, name: &str, token: &Token, entity: Entity) -> PResult<()> {
        if self.scope.names.contains_key(name) {
            return Err(self.error_at(token, format!("`%{name}` is declared twice")));
        }
        self.scope.names.insert(name.to_string(), entity);
        Ok(())
    }

    fn kernel(&mut self) -> PResult<Kernel> {
        self.expect_word("kernel")?;
        let name = match self.peek().clone() {
            Tok::FuncName(s) => {
                self.bump();
                s
            }
            _ => return Err(self.expected("a kernel name `@name`")),
        };
        self.scope = Scope::default();
        self.expect_punct("(")?;
        // Shapes may name scalar parameters declared later in the list, so
        // dimensions are resolved once the list is complete.
        let mut pending_dims: Vec<(usize, Vec<PendingDim>)> = Vec::new();
        if !self.is_punct(")") {
            loop {
                let (pname, token) = self.name()?;
                self.expect_punct(":")?;
                let index = self.scope.params.len();
                if self.eat_word("global") {
                    let dtype = self.dtype()?;
                    self.expect_punct("[")?;
                    let mut dims = Vec::new();
                    loop {
                        let t = self.tok().clone();
                        match t.tok.clone() {
                            Tok::Int(_) => {
                                dims.push((PendingKind::Const(self.int_u64("an extent")?), t))
                            }
                            Tok::Name(n) => {
                                self.bump();
                                dims.push((PendingKind::Name(n), t));
                            }
                            _ if self.is_punct("(") => {
                                dims.push((PendingKind::Expr(self.pos), t));
                                self.skip_parenthesized()?;
                            }
                            _ => {
                                return Err(
                                    self.expected("an extent (integer, `%name` or `(expression)`)")
                                );
                            }
                        }
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    self.expect_punct("]")?;
                    pending_dims.push((index, dims));
                    self.scope.params.push(Param::Global(GlobalBuffer {
                        name: pname.clone(),
                        dtype,
                        shape: Vec::new(),
                    }));
                } else {
                    let dtype = self.dtype()?;
                    self.scope.params.push(Param::Scalar {
                        name: pname.clone(),
                        dtype,
                    });
                }
                self.declare(&pname, &token, Entity::Param(ParamId(index as u32)))?;
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")")?;
        for (index, dims) in pending_dims {
            let mut shape = Vec::new();
            for (dim, token) in dims {
                shape.push(match dim {
                    PendingKind::Const(c) => Dim::Const(c),
                    PendingKind::Expr(at) => {
                        let resume = self.pos;
                        self.pos = at;
                        let e = self.expr()?;
                        self.pos = resume;
                        Dim::Expr(e)
                    }
                    PendingKind::Name(n) => match self.scope.names.get(&n) {
                        Some(Entity::Param(p))
                            if matches!(
                                self.scope.params.get(p.index()),
                                Some(Param::Scalar { .. })
                            ) =>
                        {
                            Dim::Param(*p)
                        }
                        _ => {
                            return Err(self.error_at(
                                &token,
                                format!("`%{n}` is not a scalar parameter of this kernel"),
                            ));
                        }
                    },
                });
            }
            if let Some(Param::Global(g)) = self.scope.params.get_mut(index) {
                g.shape = shape;
            }
        }
        self.expect_word("grid")?;
        self.expect_punct("(")?;
        let gx = self.expr()?;
        self.expect_punct(",")?;
        let gy = self.expr()?;
        self.expect_punct(",")?;
        let gz = self.expr()?;
        self.expect_punct(")")?;
        self.expect_word("threads")?;
        self.expect_punct("(")?;
        let threads = self.int_u32("a thread count")?;
        self.expect_punct(")")?;
        self.expect_punct("{")?;
        // Declarations.
        loop {
            if self.eat_word("shared") {
                let (sname, token) = self.name()?;
                self.expect_punct(":")?;
                let dtype = self.dtype()?;
                self.expect_punct("[")?;
                let len = self.int_u64("an element count")?;
                self.expect_punct("]")?;
                self.expect_word("align")?;
                self.expect_punct("(")?;
                let align = self.int_u32("an alignment")?;
                self.expect_punct(")")?;
                let id = SharedId(self.scope.shared.len() as u32);
                self.declare(&sname, &token, Entity::Shared(id))?;
                self.scope.shared.push(SharedBuffer {
                    name: sname,
                    dtype,
                    len,
                    align,
                });
            } else if self.eat_word("tensor_map") {
                let (mname, token) = self.name()?;
                self.expect_punct("=")?;
                let (gname, gtoken) = self.name()?;
                let global = match self.resolve(&gname, &gtoken)? {
                    Entity::Param(p)
                        if matches!(self.scope.params.get(p.index()), Some(Param::Global(_))) =>
                    {
                        p
                    }
                    _ => {
                        return Err(self.error_at(
                            &gtoken,
                            format!("`%{gname}` is not a global buffer parameter"),
                        ));
                    }
                };
                self.expect_word("box")?;
                self.expect_punct("(")?;
                let mut box_dims = vec![self.int_u32("a box extent")?];
                while self.eat_punct(",") {
                    box_dims.push(self.int_u32("a box extent")?);
                }
                self.expect_punct(")")?;
                let swizzle = self.swizzle()?;
                let id = TensorMapId(self.scope.tensor_maps.len() as u32);
                self.declare(&mname, &token, Entity::TensorMap(id))?;
                self.scope.tensor_maps.push(TensorMap {
                    name: mname,
                    global,
                    box_dims,
                    swizzle,
                });
            } else if self.eat_word("local") {
                let (rname, token) = self.name()?;
                self.expect_punct(":")?;
                let dtype = self.dtype()?;
                self.expect_punct("[")?;
                let len = self.int_u32("an array length")?;
                self.expect_punct("]")?;
                self.add_register(rname, &token, dtype, RegisterKind::Array { len })?;
            } else if self.eat_word("var") {
                let (rname, token) = self.name()?;
                self.expect_punct(":")?;
                let dtype = self.dtype()?;
                self.add_register(rname, &token, dtype, RegisterKind::Scalar)?;
            } else {
                break;
            }
        }
        let body = self.block_rest()?;
        let scope = std::mem::take(&mut self.scope);
        Ok(Kernel {
            name,
            params: scope.params,
            grid: [gx, gy, gz],
            threads,
            shared: scope.shared,
            tensor_maps: scope.tensor_maps,
            registers: scope.registers,
            body,
        })
    }

    fn add_register(
        &mut self,
        name: String,
        token: &Token,
        dtype: DType,
        kind: RegisterKind,
    ) -> PResult<RegId> {
        let id = RegId(self.scope.registers.len() as u32);
        self.declare(&name, token, Entity::Reg(id))?;
        self.scope.registers.push(Register { name, dtype, kind });
        Ok(id)
    }

    /// Statements up to and including the closing `}`.
    fn block_rest(&mut self) -> PResult<Vec<Stmt>> {
        self.enter()?;
        let mut out = Vec::new();
        while !self.eat_punct("}") {
            if matches!(self.peek(), Tok::Eof) {
                return Err(self.expected("`}`"));
            }
            out.push(self.stmt()?);
        }
        self.leave();
        Ok(out)
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.expect_punct("{")?;
        self.block_rest()
    }

    fn last_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.end)
    }

    fn span_from(&self, start: usize) -> Span {
        let end = self.last_end().max(start);
        Span::new(
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(end).unwrap_or(u32::MAX),
        )
    }

    fn resolve(&self, name: &str, token: &Token) -> PResult<Entity> {
        let entity = self
            .scope
            .names
            .get(name)
            .copied()
            .ok_or_else(|| self.error_at(token, format!("unknown name `%{name}`")))?;
        if let Entity::Reg(r) = entity {
            let is_loop = matches!(
                self.scope.registers.get(r.index()).map(|r| r.kind),
                Some(RegisterKind::Loop)
            );
            if is_loop && !self.scope.open_loops.contains(&r) {
                return Err(self.error_at(
                    token,
                    format!("loop variable `%{name}` is used outside its loop"),
                ));
            }
        }
        Ok(entity)
    }

    fn reg_ref(&mut self) -> PResult<RegRef> {
        let (name, token) = self.name()?;
        match self.resolve(&name, &token)? {
            Entity::Reg(r) => {
                let is_array = self
                    .scope
                    .registers
                    .get(r.index())
                    .is_some_and(Register::is_array);
                if is_array {
                    self.expect_punct("[")?;
                    let index = self.expr()?;
                    self.expect_punct("]")?;
                    Ok(RegRef::Elem(r, index))
                } else {
                    Ok(RegRef::Scalar(r))
                }
            }
            _ => Err(self.error_at(&token, format!("`%{name}` is not a register"))),
        }
    }

    fn mem_ref(&mut self, space: &str) -> PResult<(MemRef, Expr)> {
        let (name, token) = self.name()?;
        let m = match (self.resolve(&name, &token)?, space) {
            (Entity::Param(p), "global")
                if matches!(self.scope.params.get(p.index()), Some(Param::Global(_))) =>
            {
                MemRef::Global(p)
            }
            (Entity::Shared(s), "shared") => MemRef::Shared(s),
            _ => {
                return Err(self.error_at(&token, format!("`%{name}` is not a {space} buffer")));
            }
        };
        self.expect_punct("[")?;
        let index = self.expr()?;
        self.expect_punct("]")?;
        Ok((m, index))
    }

    /// `%buf[index]` of a shared buffer.
    fn shared_ref(&mut self) -> PResult<(SharedId, Expr)> {
        match self.mem_ref("shared")? {
            (MemRef::Shared(s), index) => Ok((s, index)),
            (MemRef::Global(_), _) => Err(self.error("expected a shared buffer")),
        }
    }

    fn guard(&mut self) -> PResult<Option<Guard>> {
        if !self.eat_word("when") {
            return Ok(None);
        }
        let cond = self.expr()?;
        let otherwise = if self.eat_word("else") {
            self.expect_word("zero")?;
            GuardElse::Zero
        } else {
            GuardElse::Skip
        };
        Ok(Some(Guard { cond, otherwise }))
    }

    fn width(&mut self) -> PResult<u32> {
        let token = self.tok().clone();
        let word = self.ident("a vector width `x1`, `x2`, `x4` or `x8`")?;
        word.strip_prefix('x')
            .and_then(|w| w.parse::<u32>().ok())
            .ok_or_else(|| {
                self.error_at(
                    &token,
                    format!("expected a vector width like `x4`, found `{word}`"),
                )
            })
    }

    fn space(&mut self) -> PResult<String> {
        let token = self.tok().clone();
        let space = self.ident("`global` or `shared`")?;
        if space != "global" && space != "shared" {
            return Err(self.error_at(
                &token,
                format!("expected `global` or `shared`, found `{space}`"),
            ));
        }
        Ok(space)
    }

    /// A swizzle span `swW`.
    fn swizzle(&mut self) -> PResult<u32> {
        let token = self.tok().clone();
        let word = self.ident("a swizzle `sw0`, `sw32`, `sw64` or `sw128`")?;
        word.strip_prefix("sw")
            .and_then(|w| w.parse::<u32>().ok())
            .ok_or_else(|| {
                self.error_at(
                    &token,
                    format!("expected a swizzle like `sw128`, found `{word}`"),
                )
            })
    }

    /// `%buf[index] k|mn swW lbo(L) sbo(S)`.
    fn shared_matrix(&mut self) -> PResult<SharedMatrix> {
        let (buffer, index) = match self.mem_ref("shared")? {
            (MemRef::Shared(b), index) => (b, index),
            _ => return Err(self.error("an async_mma operand is in shared memory")),
        };
        let token = self.tok().clone();
        let major = match self.ident("`k` or `mn`")?.as_str() {
            "k" => Major::K,
            "mn" => Major::Mn,
            other => {
                return Err(self.error_at(&token, format!("expected `k` or `mn`, found `{other}`")));
            }
        };
        let swizzle = self.swizzle()?;
        self.expect_word("lbo")?;
        self.expect_punct("(")?;
        let lbo = self.int_u32("a byte offset")?;
        self.expect_punct(")")?;
        self.expect_word("sbo")?;
        self.expect_punct("(")?;
        let sbo = self.int_u32("a byte offset")?;
        self.expect_punct(")")?;
        Ok(SharedMatrix {
            buffer,
            index,
            major,
            swizzle,
            lbo,
            sbo,
        })
    }

    fn frag(&mut self) -> PResult<FragRef> {
        let (name, token) = self.name()?;
        let array = match self.resolve(&name, &token)? {
            Entity::Reg(r) => r,
            _ => return Err(self.error_at(&token, format!("`%{name}` is not a local array"))),
        };
        self.expect_punct("[")?;
        let offset = self.int_u32("a constant offset")?;
        self.expect_punct("]")?;
        Ok(FragRef { array, offset })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.tok().start;
        let kind = match self.peek().clone() {
            Tok::Name(_) => {
                let dst = self.reg_ref()?;
                self.expect_punct("=")?;
                let shuffle = match self.peek() {
                    Tok::Ident(s) if matches!(self.peek_at(1), Tok::Punct("(")) => {
                        ShuffleKind::from_name(s)
                    }
                    _ => None,
                };
                if let Some(kind) = shuffle {
                    self.bump();
                    self.expect_punct("(")?;
                    let value = self.expr()?;
                    self.expect_punct(",")?;
                    let lane = self.expr()?;
                    self.expect_punct(",")?;
                    let width = self.int_u32("a shuffle width")?;
                    self.expect_punct(")")?;
                    StmtKind::Shuffle {
                        kind,
                        dst,
                        value,
                        lane,
                        width,
                    }
                } else {
                    let value = self.expr()?;
                    StmtKind::Assign { dst, value }
                }
            }
            Tok::Ident(word) => {
                self.bump();
                match word.as_str() {
                    "load" => {
                        let space = self.space()?;
                        let width = self.width()?;
                        let dst = self.reg_ref()?;
                        self.expect_punct("<-")?;
                        let (src, index) = self.mem_ref(&space)?;
                        let guard = self.guard()?;
                        StmtKind::Load {
                            width,
                            dst,
                            src,
                            index,
                            guard,
                        }
                    }
                    "store" => {
                        let space = self.space()?;
                        let width = self.width()?;
                        let (dst, index) = self.mem_ref(&space)?;
                        self.expect_punct("<-")?;
                        let src = self.reg_ref()?;
                        let guard = self.guard()?;
                        StmtKind::Store {
                            width,
                            dst,
                            index,
                            src,
                            guard,
                        }
                    }
                    "cp_async" => {
                        let bytes = self.int_u32("a byte count")?;
                        let (dst, dst_index) = self.mem_ref("shared")?;
                        self.expect_punct("<-")?;
                        let (src, src_index) = self.mem_ref("global")?;
                        let guard = self.guard()?;
                        match (dst, src) {
                            (MemRef::Shared(dst), MemRef::Global(src)) => StmtKind::AsyncCopy {
                                bytes,
                                dst,
                                dst_index,
                                src,
                                src_index,
                                guard,
                            },
                            _ => return Err(self.error("cp_async copies global to shared")),
                        }
                    }
                    "commit_group" => StmtKind::CommitGroup,
                    "wait_group" => StmtKind::WaitGroup {
                        pending: self.int_u32("a group count")?,
                    },
                    "barrier" => StmtKind::Barrier,
                    "setmaxnreg" => {
                        let increase = match self.ident("`inc` or `dec`")?.as_str() {
                            "inc" => true,
                            "dec" => false,
                            other => {
                                return Err(
                                    self.error(format!("expected `inc` or `dec`, found `{other}`"))
                                );
                            }
                        };
                        let count = self.int_u32("a register count")?;
                        StmtKind::SetMaxRegisters { count, increase }
                    }
                    op @ ("bar_sync" | "bar_arrive") => {
                        let id = self.expr()?;
                        self.expect_punct(",")?;
                        let threads = self.int_u32("a thread count")?;
                        StmtKind::NamedBarrier {
                            id,
                            threads,
                            wait: op == "bar_sync",
                        }
                    }
                    "async_mma_fence" => StmtKind::AsyncMmaFence,
                    "trap" => StmtKind::Trap,
                    "async_mma_commit" => StmtKind::AsyncMmaCommit,
                    "async_mma_wait" => StmtKind::AsyncMmaWait {
                        pending: self.int_u32("a group count")?,
                    },
                    "mbarrier_init" => {
                        let (bar, index) = self.shared_ref()?;
                        self.expect_punct(",")?;
                        let count = self.expr()?;
                        StmtKind::MbarrierInit { bar, index, count }
                    }
                    "mbarrier_arrive" => {
                        let (bar, index) = self.shared_ref()?;
                        StmtKind::MbarrierArrive {
                            bar,
                            index,
                            tx: None,
                        }
                    }
                    "cp_async_arrive" => {
                        let (bar, index) = self.shared_ref()?;
                        StmtKind::AsyncCopyArrive { bar, index }
                    }
                    "mbarrier_arrive_expect_tx" => {
                        let (bar, index) = self.shared_ref()?;
                        self.expect_punct(",")?;
                        let tx = Some(self.expr()?);
                        StmtKind::MbarrierArrive { bar, index, tx }
                    }
                    "mbarrier_wait" => {
                        let (bar, index) = self.shared_ref()?;
                        self.expect_punct(",")?;
                        self.expect_word("parity")?;
                        let parity = self.expr()?;
                        StmtKind::MbarrierWait { bar, index, parity }
                    }
                    "tma_load" => {
                        let (dst, dst_index) = self.shared_ref()?;
                        self.expect_punct("<-")?;
                        let (mname, mtoken) = self.name()?;
                        let Entity::TensorMap(map) = self.resolve(&mname, &mtoken)? else {
                            return Err(
                                self.error_at(&mtoken, format!("`%{mname}` is not a tensor map"))
                            );
                        };
                        self.expect_punct("(")?;
                        let mut coords = vec![self.expr()?];
                        while self.eat_punct(",") {
                            coords.push(self.expr()?);
                        }
                        self.expect_punct(")")?;
                        self.expect_punct(",")?;
                        let (bar, bar_index) = self.shared_ref()?;
                        StmtKind::TmaLoad {
                            map,
                            dst,
                            dst_index,
                            coords,
                            bar,
                            bar_index,
                        }
                    }
                    "async_mma" => {
                        let atom = match self.peek().clone() {
                            Tok::Str(s) => {
                                self.bump();
                                s
                            }
                            _ => return Err(self.expected("the atom name as a string")),
                        };
                        self.expect_word("n")?;
                        self.expect_punct("(")?;
                        let n = self.int_u32("N")?;
                        self.expect_punct(")")?;
                        let d = self.frag()?;
                        self.expect_punct("<-")?;
                        // A local array is register A; anything else a
                        // shared matrix.
                        let in_registers = match self.peek() {
                            Tok::Name(name) => {
                                matches!(self.scope.names.get(name.as_str()), Some(Entity::Reg(_)))
                            }
                            _ => false,
                        };
                        let a = if in_registers {
                            AsyncA::Registers(self.frag()?)
                        } else {
                            AsyncA::Shared(self.shared_matrix()?)
                        };
                        self.expect_punct(",")?;
                        let b = self.shared_matrix()?;
                        self.expect_punct(",")?;
                        self.expect_word("accumulate")?;
                        let accumulate = self.expr()?;
                        StmtKind::AsyncMma {
                            atom,
                            n,
                            d,
                            a,
                            b,
                            accumulate,
                        }
                    }
                    "atomic_add" | "atomic_max" | "atomic_min" => {
                        let op = match word.as_str() {
                            "atomic_max" => AtomicOp::Max,
                            "atomic_min" => AtomicOp::Min,
                            _ => AtomicOp::Add,
                        };
                        let (dst, index) = self.mem_ref("global")?;
                        self.expect_punct(",")?;
                        let value = self.expr()?;
                        let guard = self.guard()?;
                        match dst {
                            MemRef::Global(dst) => StmtKind::Atomic {
                                op,
                                dst,
                                index,
                                value,
                                guard,
                            },
                            MemRef::Shared(_) => {
                                return Err(self.error("atomics target global memory"));
                            }
                        }
                    }
                    "mma" => {
                        let atom = match self.peek().clone() {
                            Tok::Str(s) => {
                                self.bump();
                                s
                            }
                            _ => return Err(self.expected("the atom name as a string")),
                        };
                        let n = if self.eat_word("n") {
                            self.expect_punct("(")?;
                            let n = self.int_u32("N")?;
                            self.expect_punct(")")?;
                            Some(n)
                        } else {
                            None
                        };
                        let d = self.frag()?;
                        self.expect_punct("<-")?;
                        let a = self.frag()?;
                        self.expect_punct(",")?;
                        let b = self.frag()?;
                        self.expect_punct(",")?;
                        let c = self.frag()?;
                        StmtKind::Mma {
                            atom,
                            n,
                            d,
                            a,
                            b,
                            c,
                        }
                    }
                    "ldmatrix" => {
                        let load = match self.peek().clone() {
                            Tok::Str(s) => {
                                self.bump();
                                s
                            }
                            _ => return Err(self.expected("the matrix load's name as a string")),
                        };
                        let count = self.width()?;
                        let trans = self.eat_word("trans");
                        let dst = self.frag()?;
                        self.expect_punct("<-")?;
                        let (src, index) = self.mem_ref("shared")?;
                        let MemRef::Shared(src) = src else {
                            return Err(self.error("ldmatrix reads shared memory"));
                        };
                        StmtKind::MatrixLoad {
                            load,
                            count,
                            trans,
                            dst,
                            src,
                            index,
                        }
                    }
                    "stmatrix" => {
                        let store = match self.peek().clone() {
                            Tok::Str(s) => {
                                self.bump();
                                s
                            }
                            _ => return Err(self.expected("the matrix store's name as a string")),
                        };
                        let count = self.width()?;
                        let trans = self.eat_word("trans");
                        let (dst, index) = self.mem_ref("shared")?;
                        let MemRef::Shared(dst) = dst else {
                            return Err(self.error("stmatrix writes shared memory"));
                        };
                        self.expect_punct("<-")?;
                        let src = self.frag()?;
                        StmtKind::MatrixStore {
                            store,
                            count,
                            trans,
                            dst,
                            index,
                            src,
                        }
                    }
                    "for" => return self.for_stmt(start),
                    "if" => {
                        let cond = self.expr()?;
                        let span = self.span_from(start);
                        let then_body = self.block()?;
                        let else_body = if self.eat_word("else") {
                            Some(self.block()?)
                        } else {
                            None
                        };
                        return Ok(Stmt {
                            kind: StmtKind::If {
                                cond,
                                then_body,
                                else_body,
                            },
                            span,
                        });
                    }
                    other => {
                        let token = &self.toks[self.pos.saturating_sub(1)];
                        return Err(self.error_at(token, format!("unknown statement `{other}`")));
                    }
                }
            }
            _ => return Err(self.expected("a statement")),
        };
        Ok(Stmt {
            kind,
            span: self.span_from(start),
        })
    }

    fn for_stmt(&mut self, start: usize) -> PResult<Stmt> {
        let (name, token) = self.name()?;
        self.expect_word("from")?;
        let from = self.expr()?;
        self.expect_word("count")?;
        let count = self.expr()?;
        self.expect_word("step")?;
        let step = self.expr()?;
        let unroll = if self.eat_word("unroll") {
            if self.eat_punct("(") {
                let n = self.int_u32("an unroll factor")?;
                self.expect_punct(")")?;
                Unroll::By(n)
            } else {
                Unroll::Full
            }
        } else {
            Unroll::None
        };
        let span = self.span_from(start);
        let var = self.add_register(name, &token, DType::I32, RegisterKind::Loop)?;
        self.scope.open_loops.push(var);
        let body = self.block();
        self.scope.open_loops.pop();
        Ok(Stmt {
            kind: StmtKind::For {
                var,
                start: from,
                count,
                step,
                unroll,
                body: body?,
            },
            span,
        })
    }

    // ---- expressions ----

    /// Skips a balanced `( ... )`.
    fn skip_parenthesized(&mut self) -> PResult<()> {
        self.expect_punct("(")?;
        let mut depth = 1usize;
        while depth > 0 {
            if self.is_punct("(") {
                depth += 1;
            } else if self.is_punct(")") {
                depth -= 1;
            } else if matches!(self.peek(), Tok::Eof) {
                return Err(self.expected("`)`"));
            }
            self.bump();
        }
        Ok(())
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.binary(1)
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        self.enter()?;
        let mut lhs = self.unary()?;
        while let Tok::Punct(p) = *self.peek() {
            let Some((op, prec)) = infix_from_punct(p) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            let op_token = self.bump();
            let rhs = self.binary(prec + 1)?;
            lhs =
                Expr::binary(op, lhs, rhs).map_err(|e| self.error_at(&op_token, e.to_string()))?;
        }
        self.leave();
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let token = self.tok().clone();
        let op = match self.peek() {
            Tok::Punct("-") => {
                if let Tok::Int(digits) = self.peek_at(1).clone() {
                    self.bump();
                    let int_token = self.bump();
                    let v = digits
                        .parse::<i64>()
                        .ok()
                        .and_then(|v| v.checked_neg())
                        .filter(|v| *v >= i64::from(i32::MIN))
                        .ok_or_else(|| {
                            self.error_at(&int_token, format!("`-{digits}` does not fit in i32"))
                        })?;
                    return Ok(Expr::literal(Literal::Int(v, DType::I32)));
                }
                UnaryOp::Neg
            }
            Tok::Punct("!") => UnaryOp::Not,
            Tok::Punct("~") => UnaryOp::BitNot,
            _ => return self.primary(),
        };
        self.bump();
        self.enter()?;
        let arg = self.unary()?;
        self.leave();
        Expr::unary(op, arg).map_err(|e| self.error_at(&token, e.to_string()))
    }

    fn primary(&mut self) -> PResult<Expr> {
        let token = self.tok().clone();
        match token.tok.clone() {
            Tok::Int(digits) => {
                self.bump();
                let v = digits
                    .parse::<i64>()
                    .ok()
                    .filter(|v| *v <= i64::from(i32::MAX))
                    .ok_or_else(|| {
                        self.error_at(&token, format!("`{digits}` does not fit in i32"))
                    })?;
                Ok(Expr::literal(Literal::Int(v, DType::I32)))
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect_punct(")")?;
                Ok(e)
            }
            Tok::Name(name) => {
                self.bump();
                match self.resolve(&name, &token)? {
                    Entity::Param(p) => match self.scope.params.get(p.index()) {
                        Some(Param::Scalar { dtype, .. }) => Ok(Expr {
                            kind: ExprKind::Param(p),
                            dtype: *dtype,
                        }),
                        _ => Err(self.error_at(
                            &token,
                            format!("`%{name}` is a buffer: read memory with `load`"),
                        )),
                    },
                    Entity::Shared(_) => Err(self.error_at(
                        &token,
                        format!("`%{name}` is a buffer: read memory with `load`"),
                    )),
                    Entity::TensorMap(_) => {
                        Err(self
                            .error_at(&token, format!("`%{name}` is a tensor map, not a value")))
                    }
                    Entity::Reg(r) => {
                        let Some(reg) = self.scope.registers.get(r.index()) else {
                            return Err(self.error_at(&token, "bad register"));
                        };
                        let dtype = reg.dtype;
                        if reg.is_array() {
                            self.expect_punct("[")?;
                            let index = self.expr()?;
                            self.expect_punct("]")?;
                            Ok(Expr {
                                kind: ExprKind::Elem(r, Box::new(index)),
                                dtype,
                            })
                        } else {
                            Ok(Expr {
                                kind: ExprKind::Reg(r),
                                dtype,
                            })
                        }
                    }
                }
            }
            Tok::Ident(word) => {
                self.bump();
                self.word_expr(&word, &token)
            }
            _ => Err(self.expected("an expression")),
        }
    }

    fn word_expr(&mut self, word: &str, token: &Token) -> PResult<Expr> {
        match word {
            "true" => return Ok(Expr::literal(Literal::Bool(true))),
            "false" => return Ok(Expr::literal(Literal::Bool(false))),
            "cast" => {
                self.expect_punct("<")?;
                let dtype = self.dtype()?;
                self.expect_punct(">")?;
                self.expect_punct("(")?;
                let arg = self.expr()?;
                self.expect_punct(")")?;
                return Ok(Expr::cast(dtype, arg));
            }
            "bitcast" => {
                self.expect_punct("<")?;
                let dtype = self.dtype()?;
                self.expect_punct(">")?;
                self.expect_punct("(")?;
                let arg = self.expr()?;
                self.expect_punct(")")?;
                return Expr::bitcast(dtype, arg).map_err(|e| self.error_at(token, e.to_string()));
            }
            "select" => {
                self.expect_punct("(")?;
                let c = self.expr()?;
                self.expect_punct(",")?;
                let a = self.expr()?;
                self.expect_punct(",")?;
                let b = self.expr()?;
                self.expect_punct(")")?;
                return Expr::select(c, a, b).map_err(|e| self.error_at(token, e.to_string()));
            }
            _ => {}
        }
        if let Some(s) = Special::from_name(word) {
            return Ok(Expr::special(s));
        }
        if let Some(dtype) = DType::from_short_name(word) {
            return self.typed_literal(dtype, token);
        }
        if let Some(op) = binary_function_from_name(word) {
            self.expect_punct("(")?;
            let a = self.expr()?;
            self.expect_punct(",")?;
            let b = self.expr()?;
            self.expect_punct(")")?;
            return Expr::binary(op, a, b).map_err(|e| self.error_at(token, e.to_string()));
        }
        if let Some(op) = UnaryOp::from_name(word)
            .filter(|op| !matches!(op, UnaryOp::Neg | UnaryOp::Not | UnaryOp::BitNot))
        {
            self.expect_punct("(")?;
            let a = self.expr()?;
            self.expect_punct(")")?;
            return Expr::unary(op, a).map_err(|e| self.error_at(token, e.to_string()));
        }
        Err(self.error_at(token, format!("unknown expression `{word}`")))
    }

    fn typed_literal(&mut self, dtype: DType, token: &Token) -> PResult<Expr> {
        self.expect_punct("(")?;
        let negative = self.eat_punct("-");
        let value_token = self.tok().clone();
        let lit = match (value_token.tok.clone(), dtype.kind()) {
            (Tok::Int(digits), DTypeKind::Signed | DTypeKind::Unsigned) => {
                self.bump();
                let range = dtype.int_range().unwrap_or((0, 0));
                let v = digits
                    .parse::<i128>()
                    .ok()
                    .map(|v| if negative { -v } else { v })
                    .filter(|v| *v >= range.0 && *v <= range.1)
                    .ok_or_else(|| {
                        self.error_at(
                            &value_token,
                            format!("`{digits}` is out of range for {dtype}"),
                        )
                    })?;
                // u64 values above i64::MAX keep their bit pattern.
                Literal::Int(dtype.wrap_i64(v as i64), dtype)
            }
            (Tok::Int(digits) | Tok::Float(digits), DTypeKind::Float) => {
                self.bump();
                let v: f64 = digits
                    .parse()
                    .map_err(|_| self.error_at(&value_token, format!("bad number `{digits}`")))?;
                let v = if negative { -v } else { v };
                Literal::Float(dtype.round_f64(v), dtype)
            }
            (Tok::Ident(w), DTypeKind::Float) if w == "inf" || w == "nan" => {
                self.bump();
                let v = if w == "inf" { f64::INFINITY } else { f64::NAN };
                let v = if negative { -v } else { v };
                Literal::Float(dtype.round_f64(v), dtype)
            }
            _ => {
                return Err(self.error_at(
                    token,
                    format!("bad literal of type {dtype} (use `true`/`false` for bool)"),
                ));
            }
        };
        self.expect_punct(")")?;
        Ok(Expr::literal(lit))
    }
}
