//! The parser: text → Tile IR.
//!
//! A recursive-descent parser over the token vector of [`super::lexer`].
//! Expressions use precedence climbing with the table in [`super::INFIX`].
//!
//! Beyond the grammar, the parser checks what it needs to build the IR:
//! names are defined once per function and used only where they are
//! visible, buffers and variables are not confused, and every expression
//! type-checks (through [`Function::add_expr`]). Everything else is left to
//! the verifier, so that a text the verifier rejects can still be read and
//! reported on.
//!
//! Nesting (blocks, parentheses, prefix operators) is limited to
//! [`MAX_DEPTH`] levels so that hostile input cannot exhaust the stack, and
//! every expression to [`MAX_EXPR_DEPTH`] levels of operands, counted on the
//! expression built, so that a left-associative chain read in a loop
//! (`a + a + ... + a`) is as deep as it is long.

use super::lexer::{Tok, Token, tokenize};
use super::{ParseError, VERSION, binary_function_from_name, infix_from_punct};
use crate::ir::{
    AtomicOp, AtomicValue, BinaryOp, Block, BlockOrder, Buffer, BufferLayout, DType, DTypeKind,
    Expr, Function, GemmPolicy, Handle, Literal, LoopKind, MAX_EXPR_DEPTH, Module, Param,
    PipelineSchedule, Placement, Range, ReduceKind, Region, ScalarParam, Scope, Span, Stmt,
    UnaryOp, Var, VarKind,
};
use std::collections::HashMap;

/// Deepest nesting of blocks, parentheses and prefix operators accepted.
pub(crate) const MAX_DEPTH: u32 = 200;

type PResult<T> = Result<T, ParseError>;

/// What a `%name` denotes inside a function.
#[derive(Clone, Copy, Debug)]
enum Entity {
    Var(Handle<Var>),
    Buffer(Handle<Buffer>),
}

pub(crate) fn module(src: &str) -> PResult<Module> {
    let toks = tokenize(src);
    let eof = toks.last().cloned().unwrap_or(Token {
        tok: Tok::Eof,
        start: 0,
        end: 0,
        line: 1,
        col: 1,
    });
    let mut p = Parser {
        toks,
        eof,
        pos: 0,
        depth: 0,
        expr_depths: Vec::new(),
        f: Function::default(),
        names: HashMap::new(),
        var_visible: Vec::new(),
        buffer_visible: Vec::new(),
        undo: Vec::new(),
    };
    p.header()?;
    let mut module = Module::default();
    while p.peek().tok != Tok::Eof {
        module.functions.push(p.function()?);
    }
    Ok(module)
}

/// A `%name[: dtype]` binder not yet defined.
struct Binder {
    tok: Token,
    name: String,
    dtype: DType,
}

struct Parser {
    toks: Vec<Token>,
    /// Returned by `peek` past the end (the vector always ends with it).
    eof: Token,
    pos: usize,
    depth: u32,
    /// Nesting depth of each expression of `f` ([`Parser::add`]).
    expr_depths: Vec<u32>,
    /// The function being built.
    f: Function,
    /// Every name defined so far in the function.
    names: HashMap<String, Entity>,
    var_visible: Vec<bool>,
    buffer_visible: Vec<bool>,
    /// Definitions in order, so that closing a scope hides them again.
    undo: Vec<Entity>,
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Name(s) => format!("`%{s}`"),
        Tok::FuncName(s) => format!("`@{s}`"),
        Tok::Int(s) | Tok::Float(s) => format!("number `{s}`"),
        Tok::Str(_) => "a string".to_string(),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Error(_) => "an unreadable character".to_string(),
        Tok::Eof => "end of input".to_string(),
    }
}

fn span(start: usize, end: usize) -> Span {
    let clamp = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    Span::new(clamp(start), clamp(end))
}

impl Parser {
    // ---- Token helpers -------------------------------------------------

    fn peek(&self) -> &Token {
        self.toks.get(self.pos).unwrap_or(&self.eof)
    }

    fn peek_nth(&self, n: usize) -> &Token {
        self.toks.get(self.pos + n).unwrap_or(&self.eof)
    }

    fn bump(&mut self) -> Token {
        let tok = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        tok
    }

    /// End offset of the last consumed token.
    fn prev_end(&self) -> usize {
        match self.pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(t) => t.end,
            None => 0,
        }
    }

    fn err_at(&self, tok: &Token, message: impl Into<String>) -> ParseError {
        // A lexer error explains itself better than "expected X".
        let message = match &tok.tok {
            Tok::Error(m) => m.clone(),
            _ => message.into(),
        };
        ParseError {
            line: tok.line,
            column: tok.col,
            offset: tok.start,
            message,
        }
    }

    fn err_here(&self, message: impl Into<String>) -> ParseError {
        self.err_at(self.peek(), message)
    }

    fn expected(&self, what: &str) -> ParseError {
        self.err_here(format!(
            "expected {what}, found {}",
            describe(&self.peek().tok)
        ))
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.is_punct(p);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_punct(&mut self, p: &str) -> PResult<Token> {
        if self.is_punct(p) {
            Ok(self.bump())
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Ident(s) if s == kw)
    }

    fn eat_keyword(&mut self, kw: &str) -> bool {
        let found = self.is_keyword(kw);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_keyword(&mut self, kw: &str) -> PResult<Token> {
        if self.is_keyword(kw) {
            Ok(self.bump())
        } else {
            Err(self.expected(&format!("`{kw}`")))
        }
    }

    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err_here(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Parses `item (, item)*` up to the closing `close`, which it consumes.
    /// An empty list is allowed.
    fn list<T>(
        &mut self,
        close: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        if self.eat_punct(close) {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat_punct(close) {
                return Ok(out);
            }
            if !self.eat_punct(",") {
                return Err(self.expected(&format!("`,` or `{close}`")));
            }
        }
    }

    // ---- Names and scopes ----------------------------------------------

    fn name_token(&mut self, what: &str) -> PResult<(Token, String)> {
        match &self.peek().tok {
            Tok::Name(n) => {
                let n = n.clone();
                Ok((self.bump(), n))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn is_visible(&self, e: Entity) -> bool {
        match e {
            Entity::Var(v) => self.var_visible.get(v.index()).copied().unwrap_or(false),
            Entity::Buffer(b) => self.buffer_visible.get(b.index()).copied().unwrap_or(false),
        }
    }

    fn set_visible(&mut self, e: Entity, visible: bool) {
        let (table, index) = match e {
            Entity::Var(v) => (&mut self.var_visible, v.index()),
            Entity::Buffer(b) => (&mut self.buffer_visible, b.index()),
        };
        if table.len() <= index {
            table.resize(index + 1, false);
        }
        table[index] = visible;
    }

    fn define(&mut self, tok: &Token, name: &str, e: Entity) -> PResult<()> {
        if self.names.contains_key(name) {
            return Err(self.err_at(
                tok,
                format!("`%{name}` is already defined in this function"),
            ));
        }
        self.names.insert(name.to_string(), e);
        self.set_visible(e, true);
        self.undo.push(e);
        Ok(())
    }

    /// Hides every name defined since `mark`.
    fn close_scope(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some(e) = self.undo.pop() {
                self.set_visible(e, false);
            }
        }
    }

    fn lookup(&self, tok: &Token, name: &str) -> PResult<Entity> {
        match self.names.get(name) {
            None => Err(self.err_at(tok, format!("unknown name `%{name}`"))),
            Some(&e) if !self.is_visible(e) => {
                Err(self.err_at(tok, format!("`%{name}` is not in scope here")))
            }
            Some(&e) => Ok(e),
        }
    }

    /// A `%name` that must denote a visible buffer.
    fn buffer_ref(&mut self) -> PResult<Handle<Buffer>> {
        let (tok, name) = self.name_token("a buffer name `%name`")?;
        match self.lookup(&tok, &name)? {
            Entity::Buffer(b) => Ok(b),
            Entity::Var(_) => {
                Err(self.err_at(&tok, format!("`%{name}` is a variable, not a buffer")))
            }
        }
    }

    fn binder(&mut self) -> PResult<Binder> {
        let (tok, name) = self.name_token("a variable name `%name`")?;
        let dtype = if self.eat_punct(":") {
            self.dtype()?
        } else {
            DType::I32
        };
        Ok(Binder { tok, name, dtype })
    }

    /// Creates and defines the variable of a binder.
    fn bind(&mut self, binder: &Binder, kind: VarKind) -> PResult<Handle<Var>> {
        let v = self.f.add_var(binder.name.clone(), binder.dtype, kind);
        self.define(&binder.tok, &binder.name, Entity::Var(v))?;
        Ok(v)
    }

    // ---- Module structure ----------------------------------------------

    fn header(&mut self) -> PResult<()> {
        if !self.eat_keyword("tile_ir") {
            return Err(self.expected(&format!("the header `tile_ir {VERSION}`")));
        }
        let tok = self.bump();
        match &tok.tok {
            Tok::Float(v) | Tok::Int(v) if v == VERSION => Ok(()),
            Tok::Float(v) | Tok::Int(v) => Err(self.err_at(
                &tok,
                format!("unsupported Tile IR version `{v}` (this reader accepts {VERSION})"),
            )),
            other => Err(self.err_at(
                &tok,
                format!("expected a version number, found {}", describe(other)),
            )),
        }
    }

    fn function(&mut self) -> PResult<Function> {
        self.expect_keyword("func")?;
        let name = match &self.peek().tok {
            Tok::FuncName(n) => n.clone(),
            _ => return Err(self.expected("a function name `@name`")),
        };
        self.bump();
        self.f = Function::new(name);
        self.names.clear();
        self.var_visible.clear();
        self.buffer_visible.clear();
        self.undo.clear();
        self.depth = 0;

        // Parameter shapes may use the symbols declared after them, so the
        // symbols are read first and the parameters afterwards.
        self.expect_punct("(")?;
        let params_at = self.pos;
        self.skip_parenthesized()?;
        if self.eat_keyword("symbols") {
            self.expect_punct("(")?;
            let symbols = self.list(")", |p| {
                let b = p.binder()?;
                p.bind(&b, VarKind::Symbolic)
            })?;
            self.f.symbols = symbols;
        }
        let after_symbols = self.pos;
        self.pos = params_at;
        // A buffer parameter is `%name: scope dtype[...]`, a scalar one
        // `%name: dtype` (a symbol the caller passes, after the others).
        let mut position = 0u32;
        let params = self.list(")", |p| {
            let at = position;
            position += 1;
            let is_scalar = matches!(
                &p.peek_nth(2).tok,
                Tok::Ident(s) if Scope::from_name(s).is_none()
            );
            if is_scalar {
                let b = p.binder()?;
                let v = p.bind(&b, VarKind::Symbolic)?;
                p.f.symbols.push(v);
                p.f.scalars.push(ScalarParam {
                    var: v,
                    position: at,
                });
                return Ok(None);
            }
            let (tok, name, buffer, decl_span) = p.buffer_decl()?;
            let b = p.f.add_buffer(buffer, decl_span);
            p.define(&tok, &name, Entity::Buffer(b))?;
            Ok(Some(Param { buffer: b }))
        })?;
        self.f.params = params.into_iter().flatten().collect();
        self.pos = after_symbols;

        if self.eat_keyword("attrs") {
            self.attrs()?;
        }
        self.f.body = self.block()?;
        Ok(std::mem::take(&mut self.f))
    }

    /// Moves past the `)` closing a `(` just consumed.
    fn skip_parenthesized(&mut self) -> PResult<()> {
        let mut depth = 1u32;
        loop {
            let tok = self.bump();
            match tok.tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::Eof | Tok::Error(_) => {
                    return Err(self.err_at(&tok, "unclosed `(` in the parameter list"));
                }
                _ => {}
            }
        }
    }

    fn attrs(&mut self) -> PResult<()> {
        self.expect_punct("(")?;
        let mut seen_out_idx = false;
        let mut seen_configs = false;
        self.list(")", |p| {
            let key = p.bump();
            match &key.tok {
                Tok::Ident(k) if k == "out_idx" && !seen_out_idx => {
                    seen_out_idx = true;
                    p.expect_punct("=")?;
                    p.expect_punct("[")?;
                    p.f.attrs.out_idx = p.list("]", |p| p.u32_literal())?;
                }
                Tok::Ident(k) if k == "pass_configs" && !seen_configs => {
                    seen_configs = true;
                    p.expect_punct("=")?;
                    p.expect_punct("{")?;
                    let entries = p.list("}", |p| {
                        let k = p.string()?;
                        p.expect_punct(":")?;
                        let v = p.string()?;
                        Ok((k, v))
                    })?;
                    for (k, v) in entries {
                        if p.f.attrs.pass_configs.insert(k.clone(), v).is_some() {
                            return Err(p.err_at(&key, format!("duplicate pass config {k:?}")));
                        }
                    }
                }
                Tok::Ident(k) if k == "out_idx" || k == "pass_configs" => {
                    return Err(p.err_at(&key, format!("`{k}` given twice")));
                }
                other => {
                    return Err(p.err_at(
                        &key,
                        format!(
                            "expected `out_idx` or `pass_configs`, found {}",
                            describe(other)
                        ),
                    ));
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    fn string(&mut self) -> PResult<String> {
        match &self.peek().tok {
            Tok::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected("a string")),
        }
    }

    /// `%name: scope dtype[extent, ...]`; the caller adds and defines the
    /// buffer (after reading an `alloc` initializer, which may not use it).
    fn buffer_decl(&mut self) -> PResult<(Token, String, Buffer, Span)> {
        let (tok, name) = self.name_token("a buffer name `%name`")?;
        self.expect_punct(":")?;
        let scope_tok = self.bump();
        let scope = match &scope_tok.tok {
            Tok::Ident(s) => Scope::from_name(s),
            _ => None,
        }
        .ok_or_else(|| {
            self.err_at(
                &scope_tok,
                format!(
                    "expected a scope (global, shared, fragment, local, var), found {}",
                    describe(&scope_tok.tok)
                ),
            )
        })?;
        let dtype = self.dtype()?;
        self.expect_punct("[")?;
        let shape = self.list("]", |p| p.expr())?;
        let layout = self.layout()?;
        let placement = self.placement()?;
        let decl_span = span(tok.start, self.prev_end());
        let buffer = Buffer {
            name: name.clone(),
            dtype,
            shape,
            scope,
            placement,
            layout,
        };
        Ok((tok, name, buffer, decl_span))
    }

    /// The bare word naming the kind of an annotation (its token too, for
    /// errors about it); `what` says what was expected otherwise.
    fn kind_word(&mut self, what: &str) -> PResult<(Token, String)> {
        let tok = self.bump();
        match &tok.tok {
            Tok::Ident(k) => {
                let k = k.clone();
                Ok((tok, k))
            }
            other => Err(self.err_at(&tok, format!("expected {what}, found {}", describe(other)))),
        }
    }

    /// `layout KIND` after a buffer's shape, when it has one:
    /// `shared`, `padded(PITCH)`, `swizzled(ROW_BYTES)`, `mapped("MAP")`,
    /// `fragment("ATOM")`, `rows("ATOM")`, `spread(VECTOR)`, `private`.
    fn layout(&mut self) -> PResult<Option<BufferLayout>> {
        if !self.eat_keyword("layout") {
            return Ok(None);
        }
        let (tok, kind) = self.kind_word(
            "a layout (shared, padded, swizzled, mapped, fragment, rows, spread, private)",
        )?;
        if kind == "shared" {
            return Ok(Some(BufferLayout::Shared));
        }
        if kind == "private" {
            return Ok(Some(BufferLayout::Private));
        }
        self.expect_punct("(")?;
        let layout = match kind.as_str() {
            "padded" => BufferLayout::Padded {
                pitch: self.u64_literal()?,
            },
            "swizzled" => BufferLayout::Swizzled {
                row_bytes: self.u64_literal()?,
            },
            "spread" => BufferLayout::Spread {
                vector: self.u64_literal()?,
            },
            "fragment" | "rows" | "mapped" => {
                let atom_tok = self.bump();
                let Tok::Str(atom) = &atom_tok.tok else {
                    let what = match kind.as_str() {
                        "mapped" => "the index map",
                        _ => "the matrix atom's name",
                    };
                    return Err(self.err_at(
                        &atom_tok,
                        format!(
                            "expected {what} as a string, found {}",
                            describe(&atom_tok.tok)
                        ),
                    ));
                };
                let atom = atom.clone();
                if kind == "mapped" {
                    let map = atom.parse().map_err(|e| {
                        let mut err = self.err_at(&atom_tok, format!("not an index map: {e}"));
                        // Point inside the string (past its quote) when
                        // the text has no escapes.
                        if let crate::layout::LayoutError::Parse { position, .. } = e
                            && !atom.contains(['\\', '"'])
                            && let Ok(p) = u32::try_from(position + 1)
                        {
                            err.column += p;
                            err.offset += position + 1;
                        }
                        err
                    })?;
                    BufferLayout::Mapped { map }
                } else if kind == "fragment" {
                    BufferLayout::Fragment { atom }
                } else {
                    BufferLayout::Rows { atom }
                }
            }
            _ => {
                return Err(self.err_at(
                    &tok,
                    format!(
                        "unknown layout `{kind}` (shared, padded, swizzled, mapped, fragment, rows, spread)"
                    ),
                ));
            }
        };
        self.expect_punct(")")?;
        Ok(Some(layout))
    }

    /// `at OFFSET align ALIGN` after a buffer's shape, when it is placed.
    fn placement(&mut self) -> PResult<Option<Placement>> {
        if !self.eat_keyword("at") {
            return Ok(None);
        }
        let offset = self.u64_literal()?;
        if !self.eat_keyword("align") {
            return Err(self.expected("`align` and the buffer's alignment in bytes"));
        }
        let align = self.u64_literal()?;
        Ok(Some(Placement { offset, align }))
    }

    fn u64_literal(&mut self) -> PResult<u64> {
        let tok = self.bump();
        match &tok.tok {
            Tok::Int(s) => s.parse::<u64>().map_err(|_| {
                self.err_at(&tok, format!("`{s}` is not a byte count (0 to 2^64 - 1)"))
            }),
            other => Err(self.err_at(
                &tok,
                format!("expected a byte count, found {}", describe(other)),
            )),
        }
    }

    fn dtype(&mut self) -> PResult<DType> {
        let tok = self.bump();
        match &tok.tok {
            Tok::Ident(s) => DType::from_short_name(s)
                .ok_or_else(|| self.err_at(&tok, format!("unknown dtype `{s}`"))),
            other => Err(self.err_at(&tok, format!("expected a dtype, found {}", describe(other)))),
        }
    }

    fn u32_literal(&mut self) -> PResult<u32> {
        let tok = self.bump();
        match &tok.tok {
            Tok::Int(s) => s
                .parse::<u32>()
                .map_err(|_| self.err_at(&tok, format!("`{s}` does not fit in 32 bits"))),
            other => Err(self.err_at(
                &tok,
                format!("expected a non-negative integer, found {}", describe(other)),
            )),
        }
    }

    fn i64_literal(&mut self) -> PResult<i64> {
        let negative = self.eat_punct("-");
        let tok = self.bump();
        match &tok.tok {
            Tok::Int(s) => {
                let text = if negative { format!("-{s}") } else { s.clone() };
                text.parse::<i64>()
                    .map_err(|_| self.err_at(&tok, format!("`{text}` does not fit in 64 bits")))
            }
            other => Err(self.err_at(
                &tok,
                format!("expected an integer, found {}", describe(other)),
            )),
        }
    }

    fn bool_literal(&mut self) -> PResult<bool> {
        if self.eat_keyword("true") {
            Ok(true)
        } else if self.eat_keyword("false") {
            Ok(false)
        } else {
            Err(self.expected("`true` or `false`"))
        }
    }

    // ---- Statements ------------------------------------------------------

    fn block(&mut self) -> PResult<Block> {
        self.expect_punct("{")?;
        self.enter()?;
        let mark = self.undo.len();
        let mut block = Block::new();
        while !self.eat_punct("}") {
            if self.peek().tok == Tok::Eof {
                return Err(self.expected("a statement or `}`"));
            }
            let (stmt, stmt_span) = self.stmt()?;
            block.push(stmt, stmt_span);
        }
        self.close_scope(mark);
        self.leave();
        Ok(block)
    }

    /// One statement and the span of its text (the header only, for
    /// statements with a body). Each kind is parsed by its own method, which
    /// keeps this frame small: nesting recurses through it.
    fn stmt(&mut self) -> PResult<(Stmt, Span)> {
        let start = self.peek().start;
        let keyword = match &self.peek().tok {
            Tok::Name(_) => return self.store(start),
            Tok::Ident(k) => k.clone(),
            _ => return Err(self.expected("a statement")),
        };
        match keyword.as_str() {
            "kernel" => self.kernel(start),
            "for" => self.for_loop(start),
            "parallel" => self.parallel(start),
            "if" => self.if_stmt(start),
            "role" => self.role(start),
            _ => {
                let stmt = self.simple_stmt(&keyword)?;
                Ok((stmt, span(start, self.prev_end())))
            }
        }
    }

    fn if_stmt(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        self.bump();
        let cond = self.expr()?;
        let s = span(start, self.prev_end());
        let then = self.block()?;
        let otherwise = if self.eat_keyword("else") {
            self.block()?
        } else {
            Block::new()
        };
        Ok((
            Stmt::If {
                cond,
                then,
                otherwise,
            },
            s,
        ))
    }

    /// A statement without a body, starting with `keyword`.
    fn simple_stmt(&mut self, keyword: &str) -> PResult<Stmt> {
        Ok(match keyword {
            "alloc" => {
                self.bump();
                let (tok, name, buffer, decl_span) = self.buffer_decl()?;
                let init = if self.eat_punct("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                let b = self.f.add_buffer(buffer, decl_span);
                self.define(&tok, &name, Entity::Buffer(b))?;
                Stmt::Alloc { buffer: b, init }
            }
            "let" => {
                self.bump();
                let (tok, name) = self.name_token("a variable name `%name`")?;
                self.expect_punct(":")?;
                let dtype = self.dtype()?;
                self.expect_punct("=")?;
                let value = self.expr()?;
                let binder = Binder { tok, name, dtype };
                let var = self.bind(&binder, VarKind::Let)?;
                Stmt::Let { var, value }
            }
            "copy" => {
                self.bump();
                let src = self.region()?;
                self.expect_punct("->")?;
                let dst = self.region()?;
                Stmt::Copy { src, dst }
            }
            "gemm" => self.gemm()?,
            "fill" => {
                self.bump();
                let dst = self.region()?;
                self.expect_punct(",")?;
                let value = self.expr()?;
                Stmt::Fill { dst, value }
            }
            "reduce" => {
                self.bump();
                let kind_tok = self.bump();
                let kind = match &kind_tok.tok {
                    Tok::Ident(k) => ReduceKind::from_name(k),
                    _ => None,
                }
                .ok_or_else(|| {
                    self.err_at(
                        &kind_tok,
                        format!(
                            "expected a reduction (sum, max, min, abssum, absmax), found {}",
                            describe(&kind_tok.tok)
                        ),
                    )
                })?;
                let (src, dst, dim) = self.src_dst_dim()?;
                self.expect_punct(",")?;
                self.expect_keyword("clear")?;
                self.expect_punct("=")?;
                let clear = self.bool_literal()?;
                Stmt::Reduce {
                    kind,
                    src,
                    dst,
                    dim,
                    clear,
                }
            }
            "warp_reduce" => {
                self.bump();
                let kind_tok = self.bump();
                let kind = match &kind_tok.tok {
                    Tok::Ident(k) => ReduceKind::from_name(k),
                    _ => None,
                }
                .ok_or_else(|| {
                    self.err_at(
                        &kind_tok,
                        format!(
                            "expected a warp reduction (sum, max, min, bitand, bitor), found {}",
                            describe(&kind_tok.tok)
                        ),
                    )
                })?;
                let (store, _) = self.store(0)?;
                let Stmt::Store {
                    buffer,
                    indices,
                    value,
                } = store
                else {
                    return Err(self.err_here("expected `%buffer[indices] = value`"));
                };
                Stmt::WarpReduce {
                    kind,
                    buffer,
                    indices,
                    value,
                }
            }
            "cumsum" => {
                self.bump();
                let (src, dst, dim) = self.src_dst_dim()?;
                self.expect_punct(",")?;
                self.expect_keyword("reverse")?;
                self.expect_punct("=")?;
                let reverse = self.bool_literal()?;
                Stmt::Cumsum {
                    src,
                    dst,
                    dim,
                    reverse,
                }
            }
            "atomic_add" | "atomic_max" | "atomic_min" => {
                let op = match keyword {
                    "atomic_max" => Some(AtomicOp::Max),
                    "atomic_min" => Some(AtomicOp::Min),
                    _ => None,
                };
                self.bump();
                let dst = self.region()?;
                self.expect_punct(",")?;
                let value = if self.next_is_region() {
                    AtomicValue::Region(self.region()?)
                } else {
                    AtomicValue::Scalar(self.expr()?)
                };
                match op {
                    Some(op) => Stmt::Atomic { op, dst, value },
                    None => Stmt::AtomicAdd { dst, value },
                }
            }
            "barrier" => {
                self.bump();
                Stmt::Barrier
            }
            "assume" => {
                self.bump();
                let cond = self.expr()?;
                Stmt::Assume { cond }
            }
            "device_assert" => {
                self.bump();
                let cond = self.expr()?;
                Stmt::DeviceAssert { cond }
            }
            "alloc_barrier" => {
                self.bump();
                let (tok, name, buffer, decl_span) = self.buffer_decl()?;
                self.expect_keyword("counts")?;
                self.expect_punct("(")?;
                let counts = self.list(")", |p| p.u32_literal())?;
                let b = self.f.add_buffer(buffer, decl_span);
                self.define(&tok, &name, Entity::Buffer(b))?;
                Stmt::AllocBarrier { buffer: b, counts }
            }
            "arrive" => {
                self.bump();
                let (barrier, index) = self.barrier_element()?;
                Stmt::BarrierArrive { barrier, index }
            }
            "wait" => {
                self.bump();
                let (barrier, index) = self.barrier_element()?;
                self.expect_keyword("parity")?;
                let parity = self.expr()?;
                Stmt::BarrierWait {
                    barrier,
                    index,
                    parity,
                }
            }
            other => {
                return Err(self.err_here(format!("unknown statement `{other}`")));
            }
        })
    }

    fn store(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        let buffer = self.buffer_ref()?;
        self.expect_punct("[")?;
        let indices = self.list("]", |p| p.expr())?;
        self.expect_punct("=")?;
        let value = self.expr()?;
        Ok((
            Stmt::Store {
                buffer,
                indices,
                value,
            },
            span(start, self.prev_end()),
        ))
    }

    fn kernel(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        self.bump();
        self.expect_keyword("grid")?;
        self.expect_punct("(")?;
        let grid = self.list(")", |p| p.expr())?;
        self.expect_keyword("threads")?;
        self.expect_punct("(")?;
        let threads = self.u32_literal()?;
        self.expect_punct(")")?;
        let mark = self.undo.len();
        self.expect_keyword("block")?;
        self.expect_punct("(")?;
        let block_vars = self.list(")", |p| {
            let b = p.binder()?;
            p.bind(&b, VarKind::BlockIdx)
        })?;
        self.expect_keyword("thread")?;
        self.expect_punct("(")?;
        let binder = self.binder()?;
        let thread_var = self.bind(&binder, VarKind::ThreadIdx)?;
        self.expect_punct(")")?;
        let order = if self.eat_keyword("order") {
            self.expect_punct("(")?;
            let order = if self.eat_keyword("linear") {
                BlockOrder::Linear
            } else {
                self.expect_keyword("panels")?;
                let size = self.u32_literal()?;
                let column = if self.eat_keyword("columns") {
                    true
                } else {
                    self.expect_keyword("rows")?;
                    false
                };
                if size == 0 {
                    return Err(
                        self.err_here("a panel holds at least one row or column".to_string())
                    );
                }
                BlockOrder::Panels { size, column }
            };
            self.expect_punct(")")?;
            Some(order)
        } else {
            None
        };
        let s = span(start, self.prev_end());
        let body = self.block()?;
        self.close_scope(mark);
        Ok((
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                thread_var,
                order,
                body,
            },
            s,
        ))
    }

    fn for_loop(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        self.bump();
        let binder = self.binder()?;
        self.expect_keyword("in")?;
        let kind_tok = self.bump();
        let kind_name = match &kind_tok.tok {
            Tok::Ident(k)
                if ["serial", "unroll", "vectorized", "pipelined"].contains(&k.as_str()) =>
            {
                k.clone()
            }
            other => {
                return Err(self.err_at(
                    &kind_tok,
                    format!(
                        "expected a loop kind (serial, unroll, vectorized, pipelined), found {}",
                        describe(other)
                    ),
                ));
            }
        };
        self.expect_punct("(")?;
        let loop_start = self.expr()?;
        self.expect_punct(",")?;
        let extent = self.expr()?;
        let kind = match kind_name.as_str() {
            "serial" => LoopKind::Serial,
            "unroll" => LoopKind::Unroll,
            "vectorized" => LoopKind::Vectorized,
            _ => {
                self.expect_punct(",")?;
                self.expect_keyword("stages")?;
                self.expect_punct("=")?;
                let num_stages = self.u32_literal()?;
                let mut lists = [None, None];
                for (slot, key) in lists.iter_mut().zip(["order", "stage"]) {
                    if self.is_punct(",")
                        && matches!(&self.peek_nth(1).tok, Tok::Ident(k) if k == key)
                    {
                        self.pos += 2;
                        self.expect_punct("=")?;
                        self.expect_punct("[")?;
                        *slot = Some(self.list("]", |p| p.i64_literal())?);
                    }
                }
                let [order, stage] = lists;
                let schedule = if self.is_punct(",")
                    && matches!(&self.peek_nth(1).tok, Tok::Ident(k) if k == "schedule")
                {
                    self.pos += 2;
                    self.expect_punct("=")?;
                    Some(self.schedule()?)
                } else {
                    None
                };
                LoopKind::Pipelined {
                    num_stages,
                    order,
                    stage,
                    schedule,
                }
            }
        };
        self.expect_punct(")")?;
        let s = span(start, self.prev_end());
        let mark = self.undo.len();
        let var = self.bind(&binder, VarKind::Loop)?;
        let body = self.block()?;
        self.close_scope(mark);
        Ok((
            Stmt::For {
                var,
                start: loop_start,
                extent,
                kind,
                body,
            },
            s,
        ))
    }

    /// A pipelined loop's `schedule=`: `serial`, `async(STAGES)`,
    /// `bulk(STAGES)`, `bulk(STAGES, specialized)`, `bulk(STAGES,
    /// unspecialized)` or `registers`.
    fn schedule(&mut self) -> PResult<PipelineSchedule> {
        let (tok, kind) = self.kind_word("a pipeline schedule (serial, async, bulk, registers)")?;
        Ok(match kind.as_str() {
            "serial" => PipelineSchedule::Serial,
            "registers" => PipelineSchedule::Registers,
            "async" => {
                self.expect_punct("(")?;
                let stages = self.u32_literal()?;
                self.expect_punct(")")?;
                PipelineSchedule::Async { stages }
            }
            "bulk" => {
                self.expect_punct("(")?;
                let stages = self.u32_literal()?;
                let specialized = if self.is_punct(",") {
                    self.pos += 1;
                    if self.eat_keyword("specialized") {
                        Some(true)
                    } else if self.eat_keyword("unspecialized") {
                        Some(false)
                    } else {
                        return Err(self.expected("`specialized` or `unspecialized`"));
                    }
                } else {
                    None
                };
                self.expect_punct(")")?;
                PipelineSchedule::Bulk {
                    stages,
                    specialized,
                }
            }
            _ => {
                return Err(self.err_at(
                    &tok,
                    format!("unknown pipeline schedule `{kind}` (serial, async, bulk, registers)"),
                ));
            }
        })
    }

    /// `role groups(g, ...) { ... }`.
    fn role(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        self.bump();
        self.expect_keyword("groups")?;
        self.expect_punct("(")?;
        let groups = self.list(")", |p| p.u32_literal())?;
        let s = span(start, self.prev_end());
        let body = self.block()?;
        Ok((Stmt::Role { groups, body }, s))
    }

    /// `%bar[index]` of `arrive` and `wait`.
    fn barrier_element(&mut self) -> PResult<(Handle<Buffer>, Handle<Expr>)> {
        let barrier = self.buffer_ref()?;
        self.expect_punct("[")?;
        let index = self.expr()?;
        self.expect_punct("]")?;
        Ok((barrier, index))
    }

    fn parallel(&mut self, start: usize) -> PResult<(Stmt, Span)> {
        self.bump();
        self.expect_punct("(")?;
        let pairs = self.list(")", |p| {
            let binder = p.binder()?;
            p.expect_punct("<")?;
            let extent = p.expr()?;
            Ok((binder, extent))
        })?;
        let s = span(start, self.prev_end());
        let mark = self.undo.len();
        let mut vars = Vec::with_capacity(pairs.len());
        let mut extents = Vec::with_capacity(pairs.len());
        for (binder, extent) in &pairs {
            vars.push(self.bind(binder, VarKind::Loop)?);
            extents.push(*extent);
        }
        let body = self.block()?;
        self.close_scope(mark);
        Ok((
            Stmt::Parallel {
                vars,
                extents,
                body,
            },
            s,
        ))
    }

    fn gemm(&mut self) -> PResult<Stmt> {
        self.bump();
        let a = self.region()?;
        self.expect_punct(",")?;
        let b = self.region()?;
        self.expect_punct(",")?;
        let c = self.region()?;
        self.expect_punct(",")?;
        let transpose_a = self.eat_keyword("transpose_a") && {
            self.expect_punct(",")?;
            true
        };
        let transpose_b = self.eat_keyword("transpose_b") && {
            self.expect_punct(",")?;
            true
        };
        self.expect_keyword("policy")?;
        self.expect_punct("=")?;
        let policy_tok = self.bump();
        let policy = match &policy_tok.tok {
            Tok::Ident(p) => GemmPolicy::from_name(p),
            _ => None,
        }
        .ok_or_else(|| {
            self.err_at(
                &policy_tok,
                format!(
                    "expected a gemm policy (square, full_row, full_col), found {}",
                    describe(&policy_tok.tok)
                ),
            )
        })?;
        self.expect_punct(",")?;
        self.expect_keyword("clear")?;
        self.expect_punct("=")?;
        let clear_accum = self.expr()?;
        Ok(Stmt::Gemm {
            a,
            b,
            c,
            transpose_a,
            transpose_b,
            policy,
            clear_accum,
        })
    }

    /// `%src -> %dst, dim=N` of `reduce` and `cumsum`.
    fn src_dst_dim(&mut self) -> PResult<(Handle<Buffer>, Handle<Buffer>, u32)> {
        let src = self.buffer_ref()?;
        self.expect_punct("->")?;
        let dst = self.buffer_ref()?;
        self.expect_punct(",")?;
        self.expect_keyword("dim")?;
        self.expect_punct("=")?;
        let dim = self.u32_literal()?;
        Ok((src, dst, dim))
    }

    /// `%buf[start +: extent, ...]`.
    fn region(&mut self) -> PResult<Region> {
        let buffer = self.buffer_ref()?;
        self.expect_punct("[")?;
        let ranges = self.list("]", |p| {
            let start = p.expr()?;
            p.expect_punct("+:")?;
            let extent = p.expr()?;
            Ok(Range { start, extent })
        })?;
        Ok(Region { buffer, ranges })
    }

    /// Whether the next tokens are `%name[ ... ]` with a `+:` directly
    /// inside the brackets: the value of `atomic_add` is then a region, and
    /// otherwise an expression.
    fn next_is_region(&self) -> bool {
        if !matches!(self.peek().tok, Tok::Name(_))
            || !matches!(self.peek_nth(1).tok, Tok::Punct("["))
        {
            return false;
        }
        let mut depth = 0u32;
        for tok in self.toks.iter().skip(self.pos + 1) {
            match tok.tok {
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return false;
                    }
                }
                Tok::Punct("+:") if depth == 1 => return true,
                Tok::Eof | Tok::Error(_) => return false,
                _ => {}
            }
        }
        false
    }

    // ---- Expressions -------------------------------------------------------

    /// Adds an expression, refusing one nested deeper than
    /// [`MAX_EXPR_DEPTH`]: operands of a left-associative chain
    /// (`a + a + ... + a`) are read in a loop, not by recursion, but each
    /// nests the expression one level deeper, and the passes after the
    /// reader recurse over that nesting.
    fn add(&mut self, expr: Expr, at: &Token) -> PResult<Handle<Expr>> {
        // The depths of the current function's expressions, by handle,
        // brought up to date with any added by other paths.
        self.expr_depths.truncate(self.f.exprs.len());
        for (h, e) in self.f.exprs.iter().skip(self.expr_depths.len()) {
            let d = e
                .operands()
                .iter()
                .filter(|o| **o < h)
                .map(|o| self.expr_depths.get(o.index()).copied().unwrap_or(1))
                .max()
                .unwrap_or(0);
            self.expr_depths.push(d + 1);
        }
        let depth = 1 + expr
            .operands()
            .iter()
            .map(|o| self.expr_depths.get(o.index()).copied().unwrap_or(1))
            .max()
            .unwrap_or(0);
        if depth > MAX_EXPR_DEPTH {
            return Err(self.err_at(
                at,
                format!("expression nested deeper than {MAX_EXPR_DEPTH} levels"),
            ));
        }
        let h = self
            .f
            .add_expr(expr)
            .map_err(|e| self.err_at(at, format!("type error: {e}")))?;
        if h.index() == self.expr_depths.len() {
            self.expr_depths.push(depth);
        }
        Ok(h)
    }

    fn expr(&mut self) -> PResult<Handle<Expr>> {
        self.enter()?;
        let result = self.binary(1);
        self.leave();
        result
    }

    /// Precedence climbing: operands bind at least as tightly as `min_prec`;
    /// operators of equal precedence associate to the left.
    fn binary(&mut self, min_prec: u8) -> PResult<Handle<Expr>> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.peek_infix() {
            if prec < min_prec {
                break;
            }
            let op_tok = self.bump();
            // A parenthesized right operand nests the recursion: count it.
            self.enter()?;
            let rhs = self.binary(prec + 1);
            self.leave();
            let rhs = rhs?;
            lhs = self.add(Expr::Binary { op, lhs, rhs }, &op_tok)?;
        }
        Ok(lhs)
    }

    /// The infix operator at the cursor, if any.
    fn peek_infix(&self) -> Option<(BinaryOp, u8)> {
        match self.peek().tok {
            Tok::Punct(p) => infix_from_punct(p),
            _ => None,
        }
    }

    fn unary(&mut self) -> PResult<Handle<Expr>> {
        let tok = self.peek().clone();
        let op = match tok.tok {
            // `-` directly before a number is a negative literal.
            Tok::Punct("-") if matches!(self.peek_nth(1).tok, Tok::Int(_)) => {
                self.bump();
                let num = self.bump();
                let value = self.int_magnitude(&num)?;
                return self.i32_literal(-value, &tok);
            }
            Tok::Punct("-") => UnaryOp::Neg,
            Tok::Punct("!") => UnaryOp::Not,
            Tok::Punct("~") => UnaryOp::BitNot,
            _ => return self.primary(),
        };
        self.bump();
        self.enter()?;
        let arg = self.unary();
        self.leave();
        let arg = arg?;
        self.add(Expr::Unary { op, arg }, &tok)
    }

    fn int_magnitude(&self, tok: &Token) -> PResult<i128> {
        match &tok.tok {
            Tok::Int(s) => s
                .parse::<u64>()
                .map(i128::from)
                .map_err(|_| self.err_at(tok, format!("integer `{s}` is out of range"))),
            other => Err(self.err_at(
                tok,
                format!("expected an integer, found {}", describe(other)),
            )),
        }
    }

    fn i32_literal(&mut self, value: i128, at: &Token) -> PResult<Handle<Expr>> {
        let v = i32::try_from(value).map_err(|_| {
            self.err_at(
                at,
                format!(
                    "{value} does not fit in i32; write a typed literal such as `i64({value})`"
                ),
            )
        })?;
        Ok(self.f.lit(Literal::Int(i64::from(v), DType::I32)))
    }

    fn primary(&mut self) -> PResult<Handle<Expr>> {
        let tok = self.peek().clone();
        match &tok.tok {
            Tok::Name(name) => {
                self.bump();
                match self.lookup(&tok, name)? {
                    Entity::Var(v) => Ok(self.f.var_expr(v)),
                    Entity::Buffer(buffer) => {
                        if !self.eat_punct("[") {
                            return Err(self.err_at(
                                &tok,
                                format!("buffer `%{name}` must be indexed: `%{name}[...]`"),
                            ));
                        }
                        let indices = self.list("]", |p| p.expr())?;
                        self.add(Expr::Load { buffer, indices }, &tok)
                    }
                }
            }
            Tok::Int(_) => {
                self.bump();
                let value = self.int_magnitude(&tok)?;
                self.i32_literal(value, &tok)
            }
            Tok::Float(s) => Err(self.err_at(
                &tok,
                format!("a float literal needs its type, as in `f32({s})`"),
            )),
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect_punct(")")?;
                Ok(e)
            }
            Tok::Ident(word) => {
                self.bump();
                self.word_expr(&tok, word)
            }
            other => Err(self.err_at(
                &tok,
                format!("expected an expression, found {}", describe(other)),
            )),
        }
    }

    /// An expression starting with a bare word: `true`, `false`, a typed
    /// literal, `cast`, `bitcast`, `select` or an operator written as a function.
    fn word_expr(&mut self, tok: &Token, word: &str) -> PResult<Handle<Expr>> {
        match word {
            "true" => return Ok(self.f.lit(Literal::Bool(true))),
            "false" => return Ok(self.f.lit(Literal::Bool(false))),
            "cast" => {
                self.expect_punct("<")?;
                let dtype = self.dtype()?;
                self.expect_punct(">")?;
                self.expect_punct("(")?;
                let arg = self.expr()?;
                self.expect_punct(")")?;
                return self.add(Expr::Cast { dtype, arg }, tok);
            }
            "bitcast" => {
                self.expect_punct("<")?;
                let dtype = self.dtype()?;
                self.expect_punct(">")?;
                self.expect_punct("(")?;
                let arg = self.expr()?;
                self.expect_punct(")")?;
                return self.add(Expr::Bitcast { dtype, arg }, tok);
            }
            "select" => {
                self.expect_punct("(")?;
                let cond = self.expr()?;
                self.expect_punct(",")?;
                let then = self.expr()?;
                self.expect_punct(",")?;
                let otherwise = self.expr()?;
                self.expect_punct(")")?;
                return self.add(
                    Expr::Select {
                        cond,
                        then,
                        otherwise,
                    },
                    tok,
                );
            }
            _ => {}
        }
        if let Some(op) = binary_function_from_name(word) {
            self.expect_punct("(")?;
            let lhs = self.expr()?;
            self.expect_punct(",")?;
            let rhs = self.expr()?;
            self.expect_punct(")")?;
            return self.add(Expr::Binary { op, lhs, rhs }, tok);
        }
        if let Some(op) = UnaryOp::from_name(word) {
            let prefix = match op {
                UnaryOp::Neg => Some("-"),
                UnaryOp::Not => Some("!"),
                UnaryOp::BitNot => Some("~"),
                _ => None,
            };
            if let Some(prefix) = prefix {
                return Err(self.err_at(
                    tok,
                    format!("`{word}` is written as the prefix operator `{prefix}`"),
                ));
            }
            self.expect_punct("(")?;
            let arg = self.expr()?;
            self.expect_punct(")")?;
            return self.add(Expr::Unary { op, arg }, tok);
        }
        if let Some(dtype) = DType::from_short_name(word) {
            let lit = self.typed_literal(dtype, tok)?;
            return Ok(self.f.lit(lit));
        }
        Err(self.err_at(tok, format!("expected an expression, found `{word}`")))
    }

    /// The `(value)` part of a typed literal such as `f16(-inf)`.
    fn typed_literal(&mut self, dtype: DType, dtype_tok: &Token) -> PResult<Literal> {
        self.expect_punct("(")?;
        let negative = self.eat_punct("-");
        let tok = self.bump();
        let lit = match dtype.kind() {
            DTypeKind::Bool => {
                return Err(self.err_at(dtype_tok, "bool literals are written `true` and `false`"));
            }
            DTypeKind::Signed | DTypeKind::Unsigned => {
                let magnitude = match &tok.tok {
                    Tok::Int(s) => s.parse::<u128>().ok(),
                    Tok::Float(_) => {
                        return Err(
                            self.err_at(&tok, format!("`{dtype}` literals must be integers"))
                        );
                    }
                    other => {
                        return Err(self.err_at(
                            &tok,
                            format!("expected an integer, found {}", describe(other)),
                        ));
                    }
                };
                let value = magnitude
                    .and_then(|m| i128::try_from(m).ok())
                    .map(|m| if negative { -m } else { m });
                let in_range = match (value, dtype.int_range()) {
                    (Some(v), Some((lo, hi))) => (lo..=hi).contains(&v).then_some(v),
                    _ => None,
                };
                let Some(v) = in_range else {
                    return Err(self.err_at(&tok, format!("literal out of range for `{dtype}`")));
                };
                // `u64` values keep their bit pattern in the `i64`.
                Literal::Int(v as u64 as i64, dtype)
            }
            DTypeKind::Float => {
                let magnitude = match &tok.tok {
                    Tok::Int(s) | Tok::Float(s) => s.parse::<f64>().ok(),
                    Tok::Ident(s) if s == "inf" => Some(f64::INFINITY),
                    Tok::Ident(s) if s == "nan" => Some(f64::NAN),
                    _ => None,
                };
                let Some(m) = magnitude else {
                    return Err(self.err_at(
                        &tok,
                        format!(
                            "expected a number, `inf` or `nan`, found {}",
                            describe(&tok.tok)
                        ),
                    ));
                };
                let x = if negative { -m } else { m };
                Literal::Float(dtype.round_f64(x), dtype)
            }
        };
        self.expect_punct(")")?;
        Ok(lit)
    }
}
