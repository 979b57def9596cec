//! The canonical printer of thread-level IR (`docs/thread-ir.md`).
//!
//! Printing is total: an id that does not resolve prints as `%"<bad N>"`
//! rather than failing, so that a broken kernel can still be shown in an
//! error message. Expressions print with the fewest parentheses Tile IR's
//! precedence table allows (`crate::text`'s table is shared).

use std::fmt::Write as _;

use super::lexer::{is_bare_name, quote};
use super::{
    AsyncA, Dim, Expr, ExprKind, FragRef, Guard, GuardElse, Kernel, Major, MemRef, Module, Param,
    ParamId, RegId, RegRef, RegisterKind, SharedId, SharedMatrix, Stmt, StmtKind, TensorMapId,
    Unroll,
};
use crate::ir::{DType, Literal, UnaryOp};
use crate::text::{PREC_UNARY, binary_function, infix};

/// Prints a module: the header line, then each kernel after a blank line.
pub fn print_module(module: &Module) -> String {
    let mut out = format!("thread_ir {}\n", super::VERSION);
    for kernel in &module.kernels {
        out.push('\n');
        out.push_str(&print_kernel(kernel));
    }
    out
}

/// Prints one kernel, ending with a newline.
pub fn print_kernel(kernel: &Kernel) -> String {
    let mut p = Printer {
        k: kernel,
        out: String::new(),
    };
    p.kernel();
    p.out
}

/// The first line of a statement's printed form (its header for `for` and
/// `if`), without indentation: what error messages quote.
pub fn print_stmt_header(kernel: &Kernel, stmt: &Stmt) -> String {
    let mut p = Printer {
        k: kernel,
        out: String::new(),
    };
    p.stmt(stmt, 0);
    let first = p.out.lines().next().unwrap_or("").trim().to_string();
    first.trim_end_matches(" {").to_string()
}

pub(super) fn sigil_name(out: &mut String, sigil: char, name: &str) {
    out.push(sigil);
    if is_bare_name(name) {
        out.push_str(name);
    } else {
        out.push_str(&quote(name));
    }
}

pub(super) fn literal(out: &mut String, lit: Literal) {
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

struct Printer<'k> {
    k: &'k Kernel,
    out: String,
}

impl Printer<'_> {
    fn indent(&mut self, level: usize) {
        for _ in 0..level {
            self.out.push_str("  ");
        }
    }

    fn bad(&mut self, what: &str, index: u32) {
        sigil_name(&mut self.out, '%', &format!("<bad {what} {index}>"));
    }

    fn param(&mut self, id: ParamId) {
        match self.k.params.get(id.index()) {
            Some(p) => sigil_name(&mut self.out, '%', p.name()),
            None => self.bad("param", id.0),
        }
    }

    fn shared(&mut self, id: SharedId) {
        match self.k.shared.get(id.index()) {
            Some(s) => sigil_name(&mut self.out, '%', &s.name),
            None => self.bad("shared", id.0),
        }
    }

    fn reg(&mut self, id: RegId) {
        match self.k.registers.get(id.index()) {
            Some(r) => sigil_name(&mut self.out, '%', &r.name),
            None => self.bad("register", id.0),
        }
    }

    fn kernel(&mut self) {
        let k = self.k;
        self.out.push_str("kernel ");
        sigil_name(&mut self.out, '@', &k.name);
        self.out.push('(');
        for (i, param) in k.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            sigil_name(&mut self.out, '%', param.name());
            match param {
                Param::Scalar { dtype, .. } => {
                    let _ = write!(self.out, ": {dtype}");
                }
                Param::Global(g) => {
                    let _ = write!(self.out, ": global {}[", g.dtype);
                    for (j, dim) in g.shape.iter().enumerate() {
                        if j > 0 {
                            self.out.push_str(", ");
                        }
                        match dim {
                            Dim::Const(c) => {
                                let _ = write!(self.out, "{c}");
                            }
                            Dim::Param(p) => self.param(*p),
                            Dim::Expr(e) => {
                                self.out.push('(');
                                self.expr(e);
                                self.out.push(')');
                            }
                        }
                    }
                    self.out.push(']');
                }
            }
        }
        self.out.push_str(") grid(");
        for (i, e) in k.grid.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(e);
        }
        let _ = writeln!(self.out, ") threads({}) {{", k.threads);
        for s in &k.shared {
            self.indent(1);
            self.out.push_str("shared ");
            sigil_name(&mut self.out, '%', &s.name);
            let _ = writeln!(self.out, ": {}[{}] align({})", s.dtype, s.len, s.align);
        }
        for m in &k.tensor_maps {
            self.indent(1);
            self.out.push_str("tensor_map ");
            sigil_name(&mut self.out, '%', &m.name);
            self.out.push_str(" = ");
            self.param(m.global);
            let dims: Vec<String> = m.box_dims.iter().map(u32::to_string).collect();
            let _ = writeln!(self.out, " box({}) sw{}", dims.join(", "), m.swizzle);
        }
        for r in &k.registers {
            match r.kind {
                RegisterKind::Loop => continue,
                RegisterKind::Scalar => {
                    self.indent(1);
                    self.out.push_str("var ");
                    sigil_name(&mut self.out, '%', &r.name);
                    let _ = writeln!(self.out, ": {}", r.dtype);
                }
                RegisterKind::Array { len } => {
                    self.indent(1);
                    self.out.push_str("local ");
                    sigil_name(&mut self.out, '%', &r.name);
                    let _ = writeln!(self.out, ": {}[{len}]", r.dtype);
                }
            }
        }
        self.block(&k.body, 1);
        self.out.push_str("}\n");
    }

    fn block(&mut self, body: &[Stmt], level: usize) {
        for s in body {
            self.stmt(s, level);
        }
    }

    fn reg_ref(&mut self, r: &RegRef) {
        match r {
            RegRef::Scalar(id) => self.reg(*id),
            RegRef::Elem(id, index) => {
                self.reg(*id);
                self.out.push('[');
                self.expr(index);
                self.out.push(']');
            }
        }
    }

    fn mem_ref(&mut self, m: MemRef, index: &Expr) {
        match m {
            MemRef::Global(p) => self.param(p),
            MemRef::Shared(s) => self.shared(s),
        }
        self.out.push('[');
        self.expr(index);
        self.out.push(']');
    }

    /// `%buf[index] k sw128 lbo(16) sbo(1024)`.
    fn shared_matrix(&mut self, m: &SharedMatrix) {
        self.mem_ref(MemRef::Shared(m.buffer), &m.index);
        let major = match m.major {
            Major::K => "k",
            Major::Mn => "mn",
        };
        let _ = write!(
            self.out,
            " {major} sw{} lbo({}) sbo({})",
            m.swizzle, m.lbo, m.sbo
        );
    }

    fn tensor_map(&mut self, id: TensorMapId) {
        match self.k.tensor_maps.get(id.index()) {
            Some(m) => sigil_name(&mut self.out, '%', &m.name),
            None => self.bad("tensor map", id.0),
        }
    }

    fn frag(&mut self, f: FragRef) {
        self.reg(f.array);
        let _ = write!(self.out, "[{}]", f.offset);
    }

    fn guard(&mut self, g: &Option<Guard>) {
        if let Some(g) = g {
            self.out.push_str(" when ");
            self.expr(&g.cond);
            if g.otherwise == GuardElse::Zero {
                self.out.push_str(" else zero");
            }
        }
    }

    fn space(m: MemRef) -> &'static str {
        match m {
            MemRef::Global(_) => "global",
            MemRef::Shared(_) => "shared",
        }
    }

    fn stmt(&mut self, s: &Stmt, level: usize) {
        self.indent(level);
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                self.reg_ref(dst);
                self.out.push_str(" = ");
                self.expr(value);
            }
            StmtKind::Load {
                width,
                dst,
                src,
                index,
                guard,
            } => {
                let _ = write!(self.out, "load {} x{width} ", Self::space(*src));
                self.reg_ref(dst);
                self.out.push_str(" <- ");
                self.mem_ref(*src, index);
                self.guard(guard);
            }
            StmtKind::Store {
                width,
                dst,
                index,
                src,
                guard,
            } => {
                let _ = write!(self.out, "store {} x{width} ", Self::space(*dst));
                self.mem_ref(*dst, index);
                self.out.push_str(" <- ");
                self.reg_ref(src);
                self.guard(guard);
            }
            StmtKind::AsyncCopy {
                bytes,
                dst,
                dst_index,
                src,
                src_index,
                guard,
            } => {
                let _ = write!(self.out, "cp_async {bytes} ");
                self.mem_ref(MemRef::Shared(*dst), dst_index);
                self.out.push_str(" <- ");
                self.mem_ref(MemRef::Global(*src), src_index);
                self.guard(guard);
            }
            StmtKind::CommitGroup => self.out.push_str("commit_group"),
            StmtKind::WaitGroup { pending } => {
                let _ = write!(self.out, "wait_group {pending}");
            }
            StmtKind::Barrier => self.out.push_str("barrier"),
            StmtKind::SetMaxRegisters { count, increase } => {
                let op = if *increase { "inc" } else { "dec" };
                let _ = write!(self.out, "setmaxnreg {op} {count}");
            }
            StmtKind::NamedBarrier { id, threads, wait } => {
                let op = if *wait { "bar_sync" } else { "bar_arrive" };
                let _ = write!(self.out, "{op} ");
                self.expr(id);
                let _ = write!(self.out, ", {threads}");
            }
            StmtKind::AsyncMmaFence => self.out.push_str("async_mma_fence"),
            StmtKind::Trap => self.out.push_str("trap"),
            StmtKind::AsyncMmaCommit => self.out.push_str("async_mma_commit"),
            StmtKind::AsyncMmaWait { pending } => {
                let _ = write!(self.out, "async_mma_wait {pending}");
            }
            StmtKind::MbarrierInit { bar, index, count } => {
                self.out.push_str("mbarrier_init ");
                self.mem_ref(MemRef::Shared(*bar), index);
                self.out.push_str(", ");
                self.expr(count);
            }
            StmtKind::MbarrierArrive { bar, index, tx } => {
                self.out.push_str(if tx.is_some() {
                    "mbarrier_arrive_expect_tx "
                } else {
                    "mbarrier_arrive "
                });
                self.mem_ref(MemRef::Shared(*bar), index);
                if let Some(tx) = tx {
                    self.out.push_str(", ");
                    self.expr(tx);
                }
            }
            StmtKind::AsyncCopyArrive { bar, index } => {
                self.out.push_str("cp_async_arrive ");
                self.mem_ref(MemRef::Shared(*bar), index);
            }
            StmtKind::MbarrierWait { bar, index, parity } => {
                self.out.push_str("mbarrier_wait ");
                self.mem_ref(MemRef::Shared(*bar), index);
                self.out.push_str(", parity ");
                self.expr(parity);
            }
            StmtKind::TmaLoad {
                map,
                dst,
                dst_index,
                coords,
                bar,
                bar_index,
            } => {
                self.out.push_str("tma_load ");
                self.mem_ref(MemRef::Shared(*dst), dst_index);
                self.out.push_str(" <- ");
                self.tensor_map(*map);
                self.out.push('(');
                for (i, c) in coords.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.expr(c);
                }
                self.out.push_str("), ");
                self.mem_ref(MemRef::Shared(*bar), bar_index);
            }
            StmtKind::AsyncMma {
                atom,
                n,
                d,
                a,
                b,
                accumulate,
            } => {
                let _ = write!(self.out, "async_mma {} n({n}) ", quote(atom));
                self.frag(*d);
                self.out.push_str(" <- ");
                match a {
                    AsyncA::Shared(m) => self.shared_matrix(m),
                    AsyncA::Registers(f) => self.frag(*f),
                }
                self.out.push_str(", ");
                self.shared_matrix(b);
                self.out.push_str(", accumulate ");
                self.expr(accumulate);
            }
            StmtKind::Shuffle {
                kind,
                dst,
                value,
                lane,
                width,
            } => {
                self.reg_ref(dst);
                let _ = write!(self.out, " = {}(", kind.name());
                self.expr(value);
                self.out.push_str(", ");
                self.expr(lane);
                let _ = write!(self.out, ", {width})");
            }
            StmtKind::Atomic {
                op,
                dst,
                index,
                value,
                guard,
            } => {
                self.out.push_str(op.name());
                self.out.push(' ');
                self.mem_ref(MemRef::Global(*dst), index);
                self.out.push_str(", ");
                self.expr(value);
                self.guard(guard);
            }
            StmtKind::Mma {
                atom,
                n,
                d,
                a,
                b,
                c,
            } => {
                let _ = write!(self.out, "mma {}", quote(atom));
                if let Some(n) = n {
                    let _ = write!(self.out, " n({n})");
                }
                self.out.push(' ');
                self.frag(*d);
                self.out.push_str(" <- ");
                self.frag(*a);
                self.out.push_str(", ");
                self.frag(*b);
                self.out.push_str(", ");
                self.frag(*c);
            }
            StmtKind::MatrixLoad {
                load,
                count,
                trans,
                dst,
                src,
                index,
            } => {
                let _ = write!(self.out, "ldmatrix {} x{count}", quote(load));
                if *trans {
                    self.out.push_str(" trans");
                }
                self.out.push(' ');
                self.frag(*dst);
                self.out.push_str(" <- ");
                self.mem_ref(MemRef::Shared(*src), index);
            }
            StmtKind::MatrixStore {
                store,
                count,
                trans,
                dst,
                index,
                src,
            } => {
                let _ = write!(self.out, "stmatrix {} x{count}", quote(store));
                if *trans {
                    self.out.push_str(" trans");
                }
                self.out.push(' ');
                self.mem_ref(MemRef::Shared(*dst), index);
                self.out.push_str(" <- ");
                self.frag(*src);
            }
            StmtKind::For {
                var,
                start,
                count,
                step,
                unroll,
                body,
            } => {
                self.out.push_str("for ");
                self.reg(*var);
                self.out.push_str(" from ");
                self.expr(start);
                self.out.push_str(" count ");
                self.expr(count);
                self.out.push_str(" step ");
                self.expr(step);
                match unroll {
                    Unroll::None => {}
                    Unroll::Full => self.out.push_str(" unroll"),
                    Unroll::By(n) => {
                        let _ = write!(self.out, " unroll({n})");
                    }
                }
                self.out.push_str(" {\n");
                self.block(body, level + 1);
                self.indent(level);
                self.out.push('}');
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.out.push_str("if ");
                self.expr(cond);
                self.out.push_str(" {\n");
                self.block(then_body, level + 1);
                self.indent(level);
                self.out.push('}');
                if let Some(else_body) = else_body {
                    self.out.push_str(" else {\n");
                    self.block(else_body, level + 1);
                    self.indent(level);
                    self.out.push('}');
                }
            }
        }
        self.out.push('\n');
    }

    /// Precedence of an expression as an operand (infix binary operators
    /// have theirs; everything else binds tightest).
    fn prec(e: &Expr) -> u8 {
        match &e.kind {
            ExprKind::Binary(op, _, _) => infix(*op).map_or(u8::MAX, |(_, p)| p),
            _ => u8::MAX,
        }
    }

    fn operand(&mut self, e: &Expr, parens: bool) {
        if parens {
            self.out.push('(');
            self.expr(e);
            self.out.push(')');
        } else {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Literal(lit) => literal(&mut self.out, *lit),
            ExprKind::Reg(r) => self.reg(*r),
            ExprKind::Elem(r, index) => {
                self.reg(*r);
                self.out.push('[');
                self.expr(index);
                self.out.push(']');
            }
            ExprKind::Param(p) => self.param(*p),
            ExprKind::Special(s) => self.out.push_str(s.name()),
            ExprKind::Cast(arg) => {
                let _ = write!(self.out, "cast<{}>(", e.dtype);
                self.expr(arg);
                self.out.push(')');
            }
            ExprKind::Bitcast(arg) => {
                let _ = write!(self.out, "bitcast<{}>(", e.dtype);
                self.expr(arg);
                self.out.push(')');
            }
            ExprKind::Select(c, a, b) => {
                self.out.push_str("select(");
                self.expr(c);
                self.out.push_str(", ");
                self.expr(a);
                self.out.push_str(", ");
                self.expr(b);
                self.out.push(')');
            }
            ExprKind::Unary(op, arg) => {
                let prefix = match op {
                    UnaryOp::Neg => Some('-'),
                    UnaryOp::Not => Some('!'),
                    UnaryOp::BitNot => Some('~'),
                    _ => None,
                };
                match prefix {
                    Some(c) => {
                        self.out.push(c);
                        // `-5` would read back as a literal; `--x` is fine.
                        let literal_operand = matches!(arg.kind, ExprKind::Literal(_));
                        let parens = Self::prec(arg) <= PREC_UNARY || literal_operand;
                        self.operand(arg, parens);
                    }
                    None => {
                        let _ = write!(self.out, "{}(", op.name());
                        self.expr(arg);
                        self.out.push(')');
                    }
                }
            }
            ExprKind::Binary(op, lhs, rhs) => {
                if let Some((symbol, p)) = infix(*op) {
                    self.operand(lhs, Self::prec(lhs) < p);
                    let _ = write!(self.out, " {symbol} ");
                    self.operand(rhs, Self::prec(rhs) <= p);
                } else {
                    let name = binary_function(*op).unwrap_or("?");
                    let _ = write!(self.out, "{name}(");
                    self.expr(lhs);
                    self.out.push_str(", ");
                    self.expr(rhs);
                    self.out.push(')');
                }
            }
        }
    }
}
