//! Statements compiled for execution.
//!
//! Before anything runs, the whole function body is compiled into a tree of
//! [`Op`]s whose expressions are closures ([`super::expr`]). Compiling first
//! means every expression is translated once, however often it runs, and
//! that unsupported constructs (per-thread code) and unbound symbols are
//! reported before any memory is touched. Compile errors carry the span of
//! the statement that holds the offending expression.

use super::error::{Eval, InterpError, malformed};
use super::expr::{Code, Compiler, IntFn};
use super::roles::RolePlan;
use crate::ir::{
    AtomicOp, AtomicValue, Block, Buffer, DType, Handle, ReduceKind, Region, Scope, Span, Stmt, Var,
};

/// A compiled block: operations with the span of their statement.
pub(crate) struct CBlock {
    pub(crate) ops: Vec<(Op, Span)>,
}

/// A variable a statement binds: its index in [`super::expr::Env::ints`]
/// and its type (for wrapping).
#[derive(Clone, Copy)]
pub(crate) struct Binding {
    pub(crate) index: usize,
    pub(crate) dtype: DType,
}

/// A compiled buffer region: per dimension a start and an extent.
pub(crate) struct CRegion {
    pub(crate) buffer: usize,
    pub(crate) starts: Vec<IntFn>,
    pub(crate) extents: Vec<IntFn>,
    /// Per dimension, the extent when it is a literal (a copy whose sides
    /// differ in shape at run time pairs their dimensions by these).
    pub(crate) fixed: Vec<Option<i64>>,
}

/// A compiled `gemm`.
pub(crate) struct GemmOp {
    pub(crate) a: CRegion,
    pub(crate) b: CRegion,
    pub(crate) c: CRegion,
    pub(crate) transpose_a: bool,
    pub(crate) transpose_b: bool,
    pub(crate) clear_accum: IntFn,
}

/// What `atomic_add` adds.
pub(crate) enum AtomicSource {
    /// One value of the given type for every element.
    Scalar(Code, DType),
    Region(CRegion),
}

/// A compiled statement; see [`crate::ir::Stmt`] for the meaning of each.
pub(crate) enum Op {
    Kernel {
        grid: Vec<IntFn>,
        block_vars: Vec<Binding>,
        body: CBlock,
        /// How the block runs its roles, when it has some.
        roles: Option<RolePlan>,
        /// The block's threads: how many arrive at a barrier together
        /// in a block without roles.
        threads: u32,
    },
    Alloc {
        buffer: usize,
        dtype: DType,
        scope: Scope,
        shape: Vec<IntFn>,
        /// Initial value, already converted to `dtype`.
        init: Option<Code>,
        /// For a per-thread buffer, the kernel's thread count (one copy
        /// each); else 0.
        copies: u32,
    },
    For {
        var: Binding,
        start: IntFn,
        extent: IntFn,
        body: CBlock,
    },
    Parallel {
        vars: Vec<Binding>,
        extents: Vec<IntFn>,
        body: CBlock,
    },
    If {
        cond: IntFn,
        then: CBlock,
        otherwise: CBlock,
    },
    /// An `if` on the thread index ([`super::guard`]).
    ThreadIf(Box<super::guard::ThreadIf>),
    /// A warp reduction ([`super::warp`]).
    WarpReduce(Box<super::warp::WarpReduceOp>),
    /// A block-level `let` computed from the thread index: evaluated per
    /// thread by the thread-guarded regions that read it.
    ThreadLet,
    Let {
        var: usize,
        value: Code,
    },
    Store {
        buffer: usize,
        indices: Vec<IntFn>,
        value: Code,
    },
    Copy {
        src: CRegion,
        dst: CRegion,
    },
    Gemm(Box<GemmOp>),
    Fill {
        dst: CRegion,
        /// Already converted to the type of `dst`.
        value: Code,
    },
    Reduce {
        kind: ReduceKind,
        src: usize,
        dst: usize,
        dim: usize,
        clear: bool,
    },
    Cumsum {
        src: usize,
        dst: usize,
        dim: usize,
        reverse: bool,
    },
    AtomicAdd {
        op: AtomicOp,
        dst: CRegion,
        value: AtomicSource,
    },
    Barrier,
    Assume {
        cond: IntFn,
    },
    /// `T.device_assert`: fails the run where the condition is false.
    DeviceAssert {
        cond: IntFn,
    },
    AllocBarrier {
        buffer: usize,
        counts: Vec<u32>,
    },
    Role {
        groups: Vec<u32>,
        body: CBlock,
    },
    BarrierArrive {
        buffer: usize,
        index: IntFn,
    },
    BarrierWait {
        buffer: usize,
        index: IntFn,
        parity: IntFn,
    },
}

impl Compiler<'_> {
    /// Compiles a block; an error gets the span of the statement it came
    /// from (unless a nested statement already gave it one).
    pub(crate) fn block(&self, block: &Block) -> Eval<CBlock> {
        let mut ops = Vec::with_capacity(block.len());
        for (stmt, span) in block.iter() {
            let op = if self.is_thread_run(stmt) {
                self.thread_run(stmt, span)
            } else {
                self.stmt(stmt)
            }
            .map_err(|e| e.at(span))?;
            ops.push((op, span));
        }
        Ok(CBlock { ops })
    }

    fn binding(&self, var: Handle<Var>) -> Eval<Binding> {
        let v = self.var(var)?;
        if !v.dtype.is_int() {
            return Err(malformed(format!(
                "index variable `{}` has type {}, expected an integer",
                v.name, v.dtype
            )));
        }
        Ok(Binding {
            index: var.index(),
            dtype: v.dtype,
        })
    }

    fn atomic(&self, op: AtomicOp, dst: &Region, value: &AtomicValue) -> Eval<Op> {
        Ok(Op::AtomicAdd {
            op,
            dst: self.region(dst)?,
            value: match value {
                AtomicValue::Scalar(v) => AtomicSource::Scalar(self.code(*v)?, self.dtype(*v)?),
                AtomicValue::Region(r) => AtomicSource::Region(self.region(r)?),
            },
        })
    }

    fn region(&self, region: &Region) -> Eval<CRegion> {
        let b = self.buffer(region.buffer)?;
        if b.shape.len() != region.ranges.len() {
            return Err(malformed(format!(
                "region of buffer `{}` has {} ranges for {} dimensions",
                b.name,
                region.ranges.len(),
                b.shape.len()
            )));
        }
        Ok(CRegion {
            buffer: region.buffer.index(),
            starts: region
                .ranges
                .iter()
                .map(|r| self.int(r.start))
                .collect::<Eval<_>>()?,
            extents: region
                .ranges
                .iter()
                .map(|r| self.int(r.extent))
                .collect::<Eval<_>>()?,
            fixed: region
                .ranges
                .iter()
                .map(|r| self.func.as_const_int(r.extent))
                .collect(),
        })
    }

    fn whole_buffer(&self, buffer: Handle<Buffer>) -> Eval<usize> {
        self.buffer(buffer)?;
        Ok(buffer.index())
    }

    pub(crate) fn stmt(&self, stmt: &Stmt) -> Eval<Op> {
        Ok(match stmt {
            Stmt::Kernel {
                grid,
                block_vars,
                thread_var,
                threads,
                body,
                ..
            } => {
                if grid.len() != block_vars.len() || grid.is_empty() {
                    return Err(malformed(format!(
                        "kernel with {} grid extents and {} block variables",
                        grid.len(),
                        block_vars.len()
                    )));
                }
                self.var(*thread_var)?;
                let outer = self.thread.replace(Some((*thread_var, *threads)));
                let private =
                    crate::ir::per_thread::per_thread_buffers(self.func, body, *thread_var)
                        .into_iter()
                        .map(|b| b.index())
                        .collect();
                let outer_private = self.private.replace(private);
                let body_code = self.block(body);
                self.thread.set(outer);
                self.private.replace(outer_private);
                Op::Kernel {
                    grid: grid.iter().map(|&g| self.int(g)).collect::<Eval<_>>()?,
                    block_vars: block_vars
                        .iter()
                        .map(|&v| self.binding(v))
                        .collect::<Eval<_>>()?,
                    body: body_code?,
                    roles: role_plan(body, *threads)?,
                    threads: *threads,
                }
            }
            Stmt::Alloc { buffer, init } => {
                let b = self.buffer(*buffer)?;
                Op::Alloc {
                    buffer: buffer.index(),
                    dtype: b.dtype,
                    scope: b.scope,
                    shape: b.shape.iter().map(|&e| self.int(e)).collect::<Eval<_>>()?,
                    init: init.map(|v| self.converted(v, b.dtype)).transpose()?,
                    copies: match self.thread.get() {
                        Some((_, threads)) if self.private.borrow().contains(&buffer.index()) => {
                            threads
                        }
                        _ => 0,
                    },
                }
            }
            Stmt::For {
                var,
                start,
                extent,
                body,
                ..
            } => Op::For {
                var: self.binding(*var)?,
                start: self.int(*start)?,
                extent: self.int(*extent)?,
                body: self.block(body)?,
            },
            Stmt::Parallel {
                vars,
                extents,
                body,
            } => {
                if vars.len() != extents.len() {
                    return Err(malformed(
                        "parallel nest with unequal variables and extents",
                    ));
                }
                Op::Parallel {
                    vars: vars.iter().map(|&v| self.binding(v)).collect::<Eval<_>>()?,
                    extents: extents.iter().map(|&e| self.int(e)).collect::<Eval<_>>()?,
                    body: self.block(body)?,
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } if self.is_thread_guard(*cond) => self.thread_if(*cond, then, otherwise)?,
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Op::If {
                cond: self.condition(*cond)?,
                then: self.block(then)?,
                otherwise: self.block(otherwise)?,
            },
            Stmt::Let { var, value } if self.is_thread_let(*value) => {
                self.thread_lets.borrow_mut().push((*var, *value));
                Op::ThreadLet
            }
            Stmt::Let { var, value } => {
                let v = self.var(*var)?;
                let ty = self.dtype(*value)?;
                if ty != v.dtype {
                    return Err(malformed(format!(
                        "`let {}: {}` bound to a value of type {ty}",
                        v.name, v.dtype
                    )));
                }
                Op::Let {
                    var: var.index(),
                    value: self.code(*value)?,
                }
            }
            Stmt::Store {
                buffer,
                indices,
                value,
            } => {
                let b = self.buffer(*buffer)?;
                let ty = self.dtype(*value)?;
                if ty != b.dtype {
                    return Err(malformed(format!(
                        "store of a {ty} value into {} buffer `{}`",
                        b.dtype, b.name
                    )));
                }
                Op::Store {
                    buffer: buffer.index(),
                    indices: self.indices(*buffer, indices)?,
                    value: self.code(*value)?,
                }
            }
            Stmt::WarpReduce {
                kind,
                buffer,
                indices,
                value,
            } => self.warp_reduce(*kind, *buffer, indices, *value)?,
            Stmt::Copy { src, dst } => Op::Copy {
                src: self.region(src)?,
                dst: self.region(dst)?,
            },
            Stmt::Gemm {
                a,
                b,
                c,
                transpose_a,
                transpose_b,
                clear_accum,
                ..
            } => Op::Gemm(Box::new(GemmOp {
                a: self.region(a)?,
                b: self.region(b)?,
                c: self.region(c)?,
                transpose_a: *transpose_a,
                transpose_b: *transpose_b,
                clear_accum: self.condition(*clear_accum)?,
            })),
            Stmt::Fill { dst, value } => {
                let dtype = self.buffer(dst.buffer)?.dtype;
                Op::Fill {
                    dst: self.region(dst)?,
                    value: self.converted(*value, dtype)?,
                }
            }
            Stmt::Reduce {
                kind,
                src,
                dst,
                dim,
                clear,
            } => Op::Reduce {
                kind: *kind,
                src: self.whole_buffer(*src)?,
                dst: self.whole_buffer(*dst)?,
                dim: *dim as usize,
                clear: *clear,
            },
            Stmt::Cumsum {
                src,
                dst,
                dim,
                reverse,
            } => Op::Cumsum {
                src: self.whole_buffer(*src)?,
                dst: self.whole_buffer(*dst)?,
                dim: *dim as usize,
                reverse: *reverse,
            },
            Stmt::AtomicAdd { dst, value } => self.atomic(AtomicOp::Add, dst, value)?,
            Stmt::Atomic { op, dst, value } => self.atomic(*op, dst, value)?,
            Stmt::Barrier => Op::Barrier,
            Stmt::Assume { cond } => Op::Assume {
                cond: self.condition(*cond)?,
            },
            Stmt::DeviceAssert { cond } => Op::DeviceAssert {
                cond: self.condition(*cond)?,
            },
            Stmt::AllocBarrier { buffer, counts } => {
                self.buffer(*buffer)?;
                Op::AllocBarrier {
                    buffer: buffer.index(),
                    counts: counts.clone(),
                }
            }
            Stmt::Role { groups, body } => Op::Role {
                groups: groups.clone(),
                body: self.block(body)?,
            },
            Stmt::BarrierArrive { barrier, index } => Op::BarrierArrive {
                buffer: self.whole_buffer(*barrier)?,
                index: self.int(*index)?,
            },
            Stmt::BarrierWait {
                barrier,
                index,
                parity,
            } => Op::BarrierWait {
                buffer: self.whole_buffer(*barrier)?,
                index: self.int(*index)?,
                parity: self.int(*parity)?,
            },
        })
    }
}

/// The role plan of a kernel body ([`super::roles`]): `None` without
/// roles. Between the first and the last top-level statement holding a
/// role, every statement outside roles must be control flow, a `let`, an
/// `assume` or a barrier operation, which each process can run for
/// itself.
fn role_plan(body: &Block, threads: u32) -> Eval<Option<RolePlan>> {
    let holds: Vec<bool> = body.stmts.iter().map(Stmt::holds_role).collect();
    let (Some(first), Some(last)) = (
        holds.iter().position(|&h| h),
        holds.iter().rposition(|&h| h),
    ) else {
        return Ok(None);
    };
    let mut roles: Vec<Vec<u32>> = Vec::new();
    for (stmt, span) in body.iter().skip(first).take(last + 1 - first) {
        region_stmt(stmt, span, &mut roles)?;
    }
    Ok(Some(RolePlan::new(first, last, threads, roles)))
}

fn region_stmt(stmt: &Stmt, span: Span, roles: &mut Vec<Vec<u32>>) -> Eval<()> {
    match stmt {
        Stmt::Role { groups, .. } => {
            if !roles.contains(groups) {
                roles.push(groups.clone());
            }
            Ok(())
        }
        Stmt::For { body, .. } => body
            .iter()
            .try_for_each(|(s, sp)| region_stmt(s, sp, roles)),
        Stmt::If {
            then, otherwise, ..
        } => then
            .iter()
            .chain(otherwise.iter())
            .try_for_each(|(s, sp)| region_stmt(s, sp, roles)),
        Stmt::Let { .. }
        | Stmt::Assume { .. }
        | Stmt::DeviceAssert { .. }
        | Stmt::BarrierArrive { .. }
        | Stmt::BarrierWait { .. } => Ok(()),
        other => Err(Box::new(InterpError::Unsupported {
            what: format!(
                "a `{}` outside `T.ws` between the kernel's first and last `T.ws`: \
                 every warp group would run it (move it into the `T.ws` of the warp \
                 group that should, or before or after the roles)",
                stmt_word(other)
            ),
            span,
        })),
    }
}

fn stmt_word(stmt: &Stmt) -> &'static str {
    match stmt {
        Stmt::Alloc { .. } | Stmt::AllocBarrier { .. } => "allocation",
        Stmt::Store { .. } => "store",
        Stmt::Copy { .. } => "copy",
        Stmt::Gemm { .. } => "gemm",
        Stmt::Fill { .. } => "fill",
        Stmt::Reduce { .. } => "reduction",
        Stmt::Cumsum { .. } => "cumsum",
        Stmt::AtomicAdd { .. } => "atomic_add",
        Stmt::Atomic { op, .. } => op.name(),
        Stmt::Parallel { .. } => "`T.Parallel` nest",
        Stmt::Barrier => "barrier",
        _ => "statement",
    }
}
