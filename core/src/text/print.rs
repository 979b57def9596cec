//! The printer: Tile IR → canonical text.
//!
//! Printing never fails and never panics, even on IR the verifier would
//! reject: a handle outside its arena prints as `<bad expr 7>` (and the text
//! then no longer parses), so that a broken function can still be shown.

use super::lexer::{is_bare_name, quote};
use super::{PREC_UNARY, VERSION, binary_function, infix};
use crate::ir::{
    AtomicValue, Block, BlockOrder, Buffer, DType, Expr, Function, Handle, Literal, LoopKind,
    Module, Region, Stmt, UnaryOp, Var,
};
use std::fmt::Write as _;

/// Precedence of an expression that needs no parentheses anywhere.
const PREC_PRIMARY: u8 = PREC_UNARY + 1;

pub(crate) fn module(module: &Module) -> String {
    let mut out = format!("tile_ir {VERSION}\n");
    for f in &module.functions {
        out.push('\n');
        out.push_str(&function(f));
    }
    out
}

pub(crate) fn function(f: &Function) -> String {
    let mut p = Printer {
        f,
        out: String::new(),
        indent: 0,
    };
    p.function();
    p.out
}

/// Writes `name` after a sigil, quoting it when it is not a bare name.
fn sigil_name(out: &mut String, sigil: char, name: &str) {
    out.push(sigil);
    if is_bare_name(name) {
        out.push_str(name);
    } else {
        out.push_str(&quote(name));
    }
}

/// A literal in its canonical spelling.
pub(crate) fn literal(out: &mut String, lit: Literal) {
    match lit {
        Literal::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Literal::Int(v, DType::I32) => {
            let _ = write!(out, "{v}");
        }
        Literal::Int(v, DType::U64) => {
            let _ = write!(out, "u64({})", v as u64);
        }
        Literal::Int(v, d) => {
            let _ = write!(out, "{d}({v})");
        }
        Literal::Float(v, d) if v.is_nan() => {
            let _ = write!(out, "{d}(nan)");
        }
        Literal::Float(v, d) => {
            let _ = write!(out, "{d}({v:?})");
        }
    }
}

struct Printer<'a> {
    f: &'a Function,
    out: String,
    indent: usize,
}

impl Printer<'_> {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn var_name(&mut self, v: Handle<Var>) {
        match self.f.vars.try_get(v) {
            Some(var) => sigil_name(&mut self.out, '%', &var.name),
            None => {
                let _ = write!(self.out, "<bad var {}>", v.index());
            }
        }
    }

    /// A binder: the name, then `: dtype` unless the type is `i32`.
    fn var_binder(&mut self, v: Handle<Var>) {
        self.var_name(v);
        if let Some(var) = self.f.vars.try_get(v)
            && var.dtype != DType::I32
        {
            let _ = write!(self.out, ": {}", var.dtype);
        }
    }

    fn buffer_name(&mut self, b: Handle<Buffer>) {
        match self.f.buffers.try_get(b) {
            Some(buf) => sigil_name(&mut self.out, '%', &buf.name),
            None => {
                let _ = write!(self.out, "<bad buffer {}>", b.index());
            }
        }
    }

    /// `%name: scope dtype[extents]`, then `at OFFSET align ALIGN` when the
    /// buffer is placed.
    fn buffer_decl(&mut self, b: Handle<Buffer>) {
        self.buffer_name(b);
        let Some(buf) = self.f.buffers.try_get(b) else {
            return;
        };
        let _ = write!(self.out, ": {} {}[", buf.scope.name(), buf.dtype);
        self.expr_list(&buf.shape);
        self.out.push(']');
        if let Some(layout) = &buf.layout {
            let _ = write!(self.out, " layout {layout}");
        }
        if let Some(p) = buf.placement {
            let _ = write!(self.out, " at {} align {}", p.offset, p.align);
        }
    }

    fn function(&mut self) {
        let f = self.f;
        self.out.push_str("func ");
        sigil_name(&mut self.out, '@', &f.name);
        self.out.push('(');
        // Buffer and scalar parameters in signature order; a scalar one is
        // `%name: dtype`.
        let mut buffers = f.params.iter();
        let mut scalars = f.scalars.iter().peekable();
        for i in 0.. {
            let param = match scalars.peek() {
                Some(s) if s.position as usize <= i => scalars.next().map(|s| Err(s.var)),
                _ => buffers
                    .next()
                    .map(|p| Ok(p.buffer))
                    .or_else(|| scalars.next().map(|s| Err(s.var))),
            };
            let Some(param) = param else {
                break;
            };
            if i > 0 {
                self.out.push_str(", ");
            }
            match param {
                Ok(b) => self.buffer_decl(b),
                Err(v) => {
                    self.var_name(v);
                    if let Some(var) = self.f.vars.try_get(v) {
                        let _ = write!(self.out, ": {}", var.dtype);
                    }
                }
            }
        }
        self.out.push(')');
        let symbols: Vec<_> = f
            .symbols
            .iter()
            .copied()
            .filter(|&s| !f.is_scalar_param(s))
            .collect();
        if !symbols.is_empty() {
            self.out.push_str(" symbols(");
            for (i, &s) in symbols.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.var_binder(s);
            }
            self.out.push(')');
        }
        let attrs = &f.attrs;
        if !attrs.out_idx.is_empty() || !attrs.pass_configs.is_empty() {
            self.out.push_str(" attrs(");
            if !attrs.out_idx.is_empty() {
                self.out.push_str("out_idx=[");
                for (i, idx) in attrs.out_idx.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{idx}");
                }
                self.out.push(']');
                if !attrs.pass_configs.is_empty() {
                    self.out.push_str(", ");
                }
            }
            if !attrs.pass_configs.is_empty() {
                self.out.push_str("pass_configs={");
                for (i, (k, v)) in attrs.pass_configs.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let _ = write!(self.out, "{}: {}", quote(k), quote(v));
                }
                self.out.push('}');
            }
            self.out.push(')');
        }
        self.out.push(' ');
        self.block(&f.body);
        self.out.push('\n');
    }

    /// `{`, the statements one per line, and `}` at the current indentation.
    fn block(&mut self, block: &Block) {
        self.out.push_str("{\n");
        self.indent += 1;
        for stmt in &block.stmts {
            self.line_start();
            self.stmt(stmt);
            self.out.push('\n');
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Kernel {
                grid,
                threads,
                block_vars,
                thread_var,
                order,
                body,
            } => {
                self.out.push_str("kernel grid(");
                self.expr_list(grid);
                let _ = write!(self.out, ") threads({threads}) block(");
                for (i, &v) in block_vars.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.var_binder(v);
                }
                self.out.push_str(") thread(");
                self.var_binder(*thread_var);
                self.out.push(')');
                match order {
                    None => {}
                    Some(BlockOrder::Linear) => self.out.push_str(" order(linear)"),
                    Some(BlockOrder::Panels { size, column }) => {
                        let dir = if *column { "columns" } else { "rows" };
                        let _ = write!(self.out, " order(panels {size} {dir})");
                    }
                }
                self.out.push(' ');
                self.block(body);
            }
            Stmt::Alloc { buffer, init } => {
                self.out.push_str("alloc ");
                self.buffer_decl(*buffer);
                if let Some(init) = init {
                    self.out.push_str(" = ");
                    self.expr(*init, 0);
                }
            }
            Stmt::For {
                var,
                start,
                extent,
                kind,
                body,
            } => {
                self.out.push_str("for ");
                self.var_binder(*var);
                let name = match kind {
                    LoopKind::Serial => "serial",
                    LoopKind::Unroll => "unroll",
                    LoopKind::Vectorized => "vectorized",
                    LoopKind::Pipelined { .. } => "pipelined",
                };
                let _ = write!(self.out, " in {name}(");
                self.expr(*start, 0);
                self.out.push_str(", ");
                self.expr(*extent, 0);
                if let LoopKind::Pipelined {
                    num_stages,
                    order,
                    stage,
                    schedule,
                } = kind
                {
                    let _ = write!(self.out, ", stages={num_stages}");
                    for (key, list) in [("order", order), ("stage", stage)] {
                        if let Some(list) = list {
                            let _ = write!(self.out, ", {key}=[");
                            for (i, v) in list.iter().enumerate() {
                                if i > 0 {
                                    self.out.push_str(", ");
                                }
                                let _ = write!(self.out, "{v}");
                            }
                            self.out.push(']');
                        }
                    }
                    if let Some(schedule) = schedule {
                        let _ = write!(self.out, ", schedule={schedule}");
                    }
                }
                self.out.push_str(") ");
                self.block(body);
            }
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                self.out.push_str("parallel (");
                for i in 0..vars.len().max(extents.len()) {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    match vars.get(i) {
                        Some(&v) => self.var_binder(v),
                        None => self.out.push_str("<missing var>"),
                    }
                    self.out.push_str(" < ");
                    match extents.get(i) {
                        Some(&e) => self.expr(e, 0),
                        None => self.out.push_str("<missing extent>"),
                    }
                }
                self.out.push_str(") ");
                self.block(body);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.out.push_str("if ");
                self.expr(*cond, 0);
                self.out.push(' ');
                self.block(then);
                if !otherwise.is_empty() {
                    self.out.push_str(" else ");
                    self.block(otherwise);
                }
            }
            Stmt::Let { var, value } => {
                self.out.push_str("let ");
                self.var_name(*var);
                if let Some(v) = self.f.vars.try_get(*var) {
                    let _ = write!(self.out, ": {}", v.dtype);
                }
                self.out.push_str(" = ");
                self.expr(*value, 0);
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                self.buffer_name(*buffer);
                self.out.push('[');
                self.expr_list(indices);
                self.out.push_str("] = ");
                self.expr(*value, 0);
            }
            Stmt::WarpReduce {
                kind,
                buffer,
                indices,
                value,
            } => {
                let _ = write!(self.out, "warp_reduce {} ", kind.name());
                self.buffer_name(*buffer);
                self.out.push('[');
                self.expr_list(indices);
                self.out.push_str("] = ");
                self.expr(*value, 0);
            }
            Stmt::Copy { src, dst } => {
                self.out.push_str("copy ");
                self.region(src);
                self.out.push_str(" -> ");
                self.region(dst);
            }
            Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                policy,
                clear_accum,
            } => {
                self.out.push_str("gemm ");
                self.region(a);
                self.out.push_str(", ");
                self.region(b);
                self.out.push_str(", ");
                self.region(c);
                if *transpose_a {
                    self.out.push_str(", transpose_a");
                }
                if *transpose_b {
                    self.out.push_str(", transpose_b");
                }
                let _ = write!(self.out, ", policy={}, clear=", policy.name());
                self.expr(*clear_accum, 0);
            }
            Stmt::Fill { dst, value } => {
                self.out.push_str("fill ");
                self.region(dst);
                self.out.push_str(", ");
                self.expr(*value, 0);
            }
            Stmt::Reduce {
                kind,
                src,
                dst,
                dim,
                clear,
            } => {
                let _ = write!(self.out, "reduce {} ", kind.name());
                self.buffer_name(*src);
                self.out.push_str(" -> ");
                self.buffer_name(*dst);
                let _ = write!(self.out, ", dim={dim}, clear={clear}");
            }
            Stmt::Cumsum {
                src,
                dst,
                dim,
                reverse,
            } => {
                self.out.push_str("cumsum ");
                self.buffer_name(*src);
                self.out.push_str(" -> ");
                self.buffer_name(*dst);
                let _ = write!(self.out, ", dim={dim}, reverse={reverse}");
            }
            Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
                let name = match stmt {
                    Stmt::Atomic { op, .. } => op.name(),
                    _ => "atomic_add",
                };
                self.out.push_str(name);
                self.out.push(' ');
                self.region(dst);
                self.out.push_str(", ");
                match value {
                    AtomicValue::Scalar(e) => self.expr(*e, 0),
                    AtomicValue::Region(r) => self.region(r),
                }
            }
            Stmt::Barrier => self.out.push_str("barrier"),
            Stmt::Assume { cond } => {
                self.out.push_str("assume ");
                self.expr(*cond, 0);
            }
            Stmt::DeviceAssert { cond } => {
                self.out.push_str("device_assert ");
                self.expr(*cond, 0);
            }
            Stmt::AllocBarrier { buffer, counts } => {
                self.out.push_str("alloc_barrier ");
                self.buffer_decl(*buffer);
                self.out.push_str(" counts(");
                self.u32_list(counts);
                self.out.push(')');
            }
            Stmt::Role { groups, body } => {
                self.out.push_str("role groups(");
                self.u32_list(groups);
                self.out.push_str(") ");
                self.block(body);
            }
            Stmt::BarrierArrive { barrier, index } => {
                self.out.push_str("arrive ");
                self.buffer_name(*barrier);
                self.out.push('[');
                self.expr(*index, 0);
                self.out.push(']');
            }
            Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => {
                self.out.push_str("wait ");
                self.buffer_name(*barrier);
                self.out.push('[');
                self.expr(*index, 0);
                self.out.push_str("] parity ");
                self.expr(*parity, 0);
            }
        }
    }

    /// `a, b, c`.
    fn u32_list(&mut self, items: &[u32]) {
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "{x}");
        }
    }

    /// `%buf[start +: extent, ...]`.
    fn region(&mut self, region: &Region) {
        self.buffer_name(region.buffer);
        self.out.push('[');
        for (i, range) in region.ranges.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(range.start, 0);
            self.out.push_str(" +: ");
            self.expr(range.extent, 0);
        }
        self.out.push(']');
    }

    fn expr_list(&mut self, exprs: &[Handle<Expr>]) {
        for (i, &e) in exprs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(e, 0);
        }
    }

    /// Prints `e`, in parentheses when it binds more loosely than
    /// `min_prec` (the context's precedence).
    fn expr(&mut self, e: Handle<Expr>, min_prec: u8) {
        let Some(node) = self.f.exprs.try_get(e) else {
            let _ = write!(self.out, "<bad expr {}>", e.index());
            return;
        };
        let prec = match node {
            Expr::Unary {
                op: UnaryOp::Neg | UnaryOp::Not | UnaryOp::BitNot,
                ..
            } => PREC_UNARY,
            Expr::Binary { op, .. } => infix(*op).map_or(PREC_PRIMARY, |(_, p)| p),
            _ => PREC_PRIMARY,
        };
        let parens = prec < min_prec;
        if parens {
            self.out.push('(');
        }
        match node {
            Expr::Literal(lit) => literal(&mut self.out, *lit),
            Expr::Var(v) => self.var_name(*v),
            Expr::Unary { op, arg } => {
                let prefix = match op {
                    UnaryOp::Neg => Some('-'),
                    UnaryOp::Not => Some('!'),
                    UnaryOp::BitNot => Some('~'),
                    _ => None,
                };
                match prefix {
                    Some(sym) => {
                        self.out.push(sym);
                        // `-3` is the literal minus three, so negating a
                        // bare integer literal needs parentheses: `-(3)`.
                        let bare_int = matches!(
                            self.f.exprs.try_get(*arg),
                            Some(Expr::Literal(Literal::Int(_, DType::I32)))
                        );
                        if *op == UnaryOp::Neg && bare_int {
                            self.out.push('(');
                            self.expr(*arg, 0);
                            self.out.push(')');
                        } else {
                            self.expr(*arg, PREC_UNARY);
                        }
                    }
                    None => {
                        let _ = write!(self.out, "{}(", op.name());
                        self.expr(*arg, 0);
                        self.out.push(')');
                    }
                }
            }
            Expr::Binary { op, lhs, rhs } => match infix(*op) {
                Some((sym, p)) => {
                    // Left-associative: an operand of equal precedence
                    // needs parentheses only on the right.
                    self.expr(*lhs, p);
                    let _ = write!(self.out, " {sym} ");
                    self.expr(*rhs, p + 1);
                }
                None => {
                    let name = binary_function(*op).unwrap_or("<bad op>");
                    let _ = write!(self.out, "{name}(");
                    self.expr(*lhs, 0);
                    self.out.push_str(", ");
                    self.expr(*rhs, 0);
                    self.out.push(')');
                }
            },
            Expr::Select {
                cond,
                then,
                otherwise,
            } => {
                self.out.push_str("select(");
                self.expr(*cond, 0);
                self.out.push_str(", ");
                self.expr(*then, 0);
                self.out.push_str(", ");
                self.expr(*otherwise, 0);
                self.out.push(')');
            }
            Expr::Cast { dtype, arg } => {
                let _ = write!(self.out, "cast<{dtype}>(");
                self.expr(*arg, 0);
                self.out.push(')');
            }
            Expr::Bitcast { dtype, arg } => {
                let _ = write!(self.out, "bitcast<{dtype}>(");
                self.expr(*arg, 0);
                self.out.push(')');
            }
            Expr::Load { buffer, indices } => {
                self.buffer_name(*buffer);
                self.out.push('[');
                self.expr_list(indices);
                self.out.push(']');
            }
        }
        if parens {
            self.out.push(')');
        }
    }
}

/// One expression of `f` in its canonical spelling (for tests and
/// diagnostics).
#[cfg(test)]
pub(crate) fn expr(f: &Function, e: Handle<Expr>) -> String {
    let mut p = Printer {
        f,
        out: String::new(),
        indent: 0,
    };
    p.expr(e, 0);
    p.out
}
