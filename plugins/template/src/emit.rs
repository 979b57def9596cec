//! Tile IR in, artifacts and kernel metadata out.
//!
//! The template's "code generation" writes a listing: the printed Tile IR
//! under a header comment naming the target. A real backend replaces
//! [`listing`] with its lowering (to PTX, LLVM IR, a vendor's C++ dialect)
//! and keeps the rest: checking the kernel against the target description,
//! reporting problems at the statement that causes them, and describing
//! each kernel for the launcher ([`KernelMetadata`]).
//!
//! Never trust the host: [`compile`] first runs the core's verifier on the
//! module and refuses IR that breaks its invariants (`InvalidIr`), as every
//! backend must (conformance level 0 sends such IR on purpose). After that,
//! handles are valid here.
//!
//! Errors that concern the user's kernel carry an [`IrLocation`]: the span
//! of the IR statement, which is a byte range of the user's source file.
//! tilec renders them at that line, like its own diagnostics.

use std::fmt::Write as _;

use tilec_core::ir::{
    AtomicValue, BinaryOp, Block, Buffer, DType, Expr, Function, Handle, Literal, Module, Region,
    Scope, Span, Stmt,
};
use tilec_core::text::print_module;
use tilec_plugin_api::{
    Artifact, ArtifactKind, CompileOptions, CompileResult, ErrorCode, IrLocation, KernelMetadata,
    ParamMetadata, PluginDiagnostic, PluginError, Severity, TargetDescription,
};

/// The one thing this backend emits (also the default, `--emit` empty).
pub const EMIT_LISTING: &str = "listing";

/// Compiles `module` for `target`.
pub fn compile(
    module: &Module,
    target: &TargetDescription,
    options: &CompileOptions,
) -> Result<CompileResult, PluginError> {
    // Refuse malformed IR before anything relies on it: a host (or a
    // corrupted request) may send handles that point nowhere, copies whose
    // extents disagree, and so on.
    if let Err(errors) = tilec_core::ir::verify::verify_module(module) {
        let first = errors
            .first()
            .map(|(func, e)| format!("`{func}`: {e}"))
            .unwrap_or_default();
        return Err(PluginError::new(
            ErrorCode::InvalidIr,
            format!("the module does not verify: {first}"),
        ));
    }
    if !options.emit.is_empty() && options.emit != EMIT_LISTING {
        return Err(PluginError::new(
            ErrorCode::UnsupportedFeature,
            format!(
                "backend `{}` emits `{EMIT_LISTING}` only, not `{}`",
                crate::BACKEND_NAME,
                options.emit
            ),
        ));
    }
    let mut kernels = Vec::new();
    let mut warnings = Vec::new();
    for function in &module.functions {
        check_dtypes(function, target)?;
        kernels.extend(kernel_metadata(function, target, &mut warnings)?);
    }
    let text = listing(module, target, options, &kernels);
    let name = match module.functions.first() {
        Some(f) => format!("{}.listing", f.name),
        None => "module.listing".to_string(),
    };
    Ok(CompileResult {
        artifacts: vec![Artifact {
            name,
            kind: ArtifactKind::Text,
            bytes: text.into_bytes(),
        }],
        kernels,
        diagnostics: warnings,
    })
}

/// The artifact: a header comment, then the Tile IR text (`#` starts a
/// comment in Tile IR, so the listing still parses as Tile IR).
fn listing(
    module: &Module,
    target: &TargetDescription,
    options: &CompileOptions,
    kernels: &[KernelMetadata],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# listing for target `{}`, written by {} {}",
        target.arch,
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        out,
        "# fast math: {}",
        if options.fast_math { "on" } else { "off" }
    );
    for k in kernels {
        let _ = writeln!(
            out,
            "# kernel {}: grid ({}), {} threads, {} bytes of shared memory",
            k.entry,
            k.grid.join(", "),
            k.threads,
            k.shared_bytes
        );
    }
    out.push_str(&print_module(module));
    out
}

/// A problem with the user's kernel at `span` of `function`, as an error
/// with one located diagnostic.
fn located_error(
    code: ErrorCode,
    function: &Function,
    span: Span,
    message: String,
    notes: Vec<String>,
) -> PluginError {
    PluginError {
        code,
        message: message.clone(),
        diagnostics: vec![PluginDiagnostic {
            severity: Severity::Error,
            message,
            location: Some(IrLocation {
                function: function.name.clone(),
                span,
            }),
            notes,
        }],
    }
}

/// Refuses the first use of a dtype the target does not compute with:
/// a parameter of that type, or the first statement using it.
fn check_dtypes(f: &Function, target: &TargetDescription) -> Result<(), PluginError> {
    let supported = |d: DType| target.dtypes.iter().any(|t| t == d.tilelang_name());
    let param = f.params.iter().find_map(|p| {
        let dtype = f.buffers[p.buffer].dtype;
        let span = f.buffer_spans.get(p.buffer.index()).copied();
        (!supported(dtype)).then(|| (dtype, span.unwrap_or_default()))
    });
    let Some((dtype, span)) = param.or_else(|| first_use(f, &f.body, &supported)) else {
        return Ok(());
    };
    Err(located_error(
        ErrorCode::UnsupportedDtype,
        f,
        span,
        format!(
            "`{}` is not supported by target `{}`",
            dtype.tilelang_name(),
            target.arch
        ),
        vec![format!(
            "target `{}` computes with: {}",
            target.arch,
            target.dtypes.join(", ")
        )],
    ))
}

/// The first statement of `block` (in program order, nested blocks
/// included) that uses a dtype `supported` refuses, with its span.
fn first_use(
    f: &Function,
    block: &Block,
    supported: &dyn Fn(DType) -> bool,
) -> Option<(DType, Span)> {
    for (stmt, span) in block.iter() {
        if let Some(d) = own_dtypes(f, stmt).into_iter().find(|&d| !supported(d)) {
            return Some((d, span));
        }
        for body in nested_blocks(stmt) {
            if let Some(found) = first_use(f, body, supported) {
                return Some(found);
            }
        }
    }
    None
}

/// The blocks a statement contains.
fn nested_blocks(stmt: &Stmt) -> Vec<&Block> {
    match stmt {
        Stmt::Kernel { body, .. }
        | Stmt::For { body, .. }
        | Stmt::Parallel { body, .. }
        | Stmt::Role { body, .. } => vec![body],
        Stmt::If {
            then, otherwise, ..
        } => vec![then, otherwise],
        _ => Vec::new(),
    }
}

/// The dtypes a statement itself uses (buffers it names, every
/// sub-expression), not those of the blocks it contains.
fn own_dtypes(f: &Function, stmt: &Stmt) -> Vec<DType> {
    let mut exprs: Vec<Handle<Expr>> = Vec::new();
    let mut buffers: Vec<Handle<Buffer>> = Vec::new();
    let region = |r: &Region, exprs: &mut Vec<Handle<Expr>>, buffers: &mut Vec<_>| {
        buffers.push(r.buffer);
        exprs.extend(
            r.ranges
                .iter()
                .flat_map(|range| [range.start, range.extent]),
        );
    };
    match stmt {
        Stmt::Kernel { grid, .. } => exprs.extend(grid),
        Stmt::Alloc { buffer, init } => {
            buffers.push(*buffer);
            exprs.extend(init);
        }
        Stmt::For { start, extent, .. } => exprs.extend([*start, *extent]),
        Stmt::Parallel { extents, .. } => exprs.extend(extents),
        Stmt::If { cond, .. } | Stmt::Assume { cond } | Stmt::DeviceAssert { cond } => {
            exprs.push(*cond)
        }
        Stmt::Let { value, .. } => exprs.push(*value),
        Stmt::Store {
            buffer,
            indices,
            value,
        }
        | Stmt::WarpReduce {
            buffer,
            indices,
            value,
            ..
        } => {
            buffers.push(*buffer);
            exprs.extend(indices);
            exprs.push(*value);
        }
        Stmt::Copy { src, dst } => {
            region(src, &mut exprs, &mut buffers);
            region(dst, &mut exprs, &mut buffers);
        }
        Stmt::Gemm {
            a,
            b,
            c,
            clear_accum,
            ..
        } => {
            for r in [a, b, c] {
                region(r, &mut exprs, &mut buffers);
            }
            exprs.push(*clear_accum);
        }
        Stmt::Fill { dst, value } => {
            region(dst, &mut exprs, &mut buffers);
            exprs.push(*value);
        }
        Stmt::Reduce { src, dst, .. } | Stmt::Cumsum { src, dst, .. } => {
            buffers.extend([*src, *dst]);
        }
        Stmt::AtomicAdd { dst, value } | Stmt::Atomic { dst, value, .. } => {
            region(dst, &mut exprs, &mut buffers);
            match value {
                AtomicValue::Scalar(e) => exprs.push(*e),
                AtomicValue::Region(r) => region(r, &mut exprs, &mut buffers),
            }
        }
        // Barrier objects hold no values of their (u64) type.
        Stmt::Role { .. } | Stmt::AllocBarrier { .. } => {}
        Stmt::BarrierArrive { index, .. } => exprs.push(*index),
        Stmt::BarrierWait { index, parity, .. } => exprs.extend([*index, *parity]),
        Stmt::Barrier => {}
    }
    let mut dtypes: Vec<DType> = buffers.iter().map(|&b| f.buffers[b].dtype).collect();
    // Expressions form a DAG: visit each node once.
    let mut seen = vec![false; f.exprs.len()];
    while let Some(e) = exprs.pop() {
        if std::mem::replace(&mut seen[e.index()], true) {
            continue;
        }
        dtypes.push(f.ty(e));
        match &f.exprs[e] {
            Expr::Literal(_) | Expr::Var(_) => {}
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Bitcast { arg, .. } => {
                exprs.push(*arg)
            }
            Expr::Binary { lhs, rhs, .. } => exprs.extend([*lhs, *rhs]),
            Expr::Select {
                cond,
                then,
                otherwise,
            } => exprs.extend([*cond, *then, *otherwise]),
            Expr::Load { buffer, indices } => {
                dtypes.push(f.buffers[*buffer].dtype);
                exprs.extend(indices);
            }
        }
    }
    dtypes
}

/// One [`KernelMetadata`] per kernel statement of `f`, in order: entry
/// `<function>_k<i>`. Refuses kernels over the target's limits; warns
/// about shared buffers it cannot size.
fn kernel_metadata(
    f: &Function,
    target: &TargetDescription,
    warnings: &mut Vec<PluginDiagnostic>,
) -> Result<Vec<KernelMetadata>, PluginError> {
    let params: Vec<ParamMetadata> = f
        .params
        .iter()
        .map(|p| {
            let buffer = &f.buffers[p.buffer];
            ParamMetadata {
                name: buffer.name.clone(),
                dtype: buffer.dtype.tilelang_name().to_string(),
                shape: buffer.shape.iter().map(|&e| expr_text(f, e)).collect(),
            }
        })
        .collect();
    let shared_capacity = target
        .memory_of_kind(tilec_core::target::MemoryKind::Shared)
        .and_then(|m| m.capacity_bytes)
        .unwrap_or(0);
    let max_threads = target.threads_per_block.max_per_block.unwrap_or(u32::MAX);

    let mut kernels = Vec::new();
    for (stmt, span) in kernel_statements(&f.body) {
        let Stmt::Kernel {
            grid,
            threads,
            body,
            ..
        } = stmt
        else {
            continue;
        };
        let entry = format!("{}_k{}", f.name, kernels.len());
        if *threads > max_threads {
            return Err(located_error(
                ErrorCode::UnsupportedFeature,
                f,
                span,
                format!(
                    "kernel `{entry}` has {threads} threads per block; target `{}` allows at most {max_threads}",
                    target.arch
                ),
                Vec::new(),
            ));
        }
        let shared_bytes = shared_bytes(f, body, warnings);
        if shared_bytes > shared_capacity {
            return Err(located_error(
                ErrorCode::UnsupportedFeature,
                f,
                span,
                format!(
                    "kernel `{entry}` needs {shared_bytes} bytes of shared memory; target `{}` has {shared_capacity}",
                    target.arch
                ),
                Vec::new(),
            ));
        }
        kernels.push(KernelMetadata {
            entry,
            params: params.clone(),
            grid: grid.iter().map(|&e| expr_text(f, e)).collect(),
            threads: *threads,
            shared_bytes,
            registers: None,
        });
    }
    Ok(kernels)
}

/// The kernel statements of a function body, outermost only, in order.
fn kernel_statements(block: &Block) -> Vec<(&Stmt, Span)> {
    let mut out = Vec::new();
    for (stmt, span) in block.iter() {
        if matches!(stmt, Stmt::Kernel { .. }) {
            out.push((stmt, span));
        } else {
            for body in nested_blocks(stmt) {
                out.extend(kernel_statements(body));
            }
        }
    }
    out
}

/// Bytes of the `shared` buffers allocated in `block` (nested blocks
/// included). A buffer whose shape is known only at launch is not counted,
/// with a warning at its declaration.
fn shared_bytes(f: &Function, block: &Block, warnings: &mut Vec<PluginDiagnostic>) -> u64 {
    let mut total = 0u64;
    for (stmt, span) in block.iter() {
        if let Stmt::Alloc { buffer, .. } = stmt
            && f.buffers[*buffer].scope == Scope::Shared
        {
            let b = &f.buffers[*buffer];
            match f.const_shape(*buffer) {
                Some(shape) => {
                    let elements = shape
                        .iter()
                        .fold(1u64, |n, &e| n.saturating_mul(u64::try_from(e).unwrap_or(0)));
                    total = total.saturating_add(elements.saturating_mul(b.dtype.bytes()));
                }
                None => warnings.push(PluginDiagnostic {
                    severity: Severity::Warning,
                    message: format!(
                        "shared buffer `{}` has a size known only at launch; it is not counted in the kernel's shared memory",
                        b.name
                    ),
                    location: Some(IrLocation {
                        function: f.name.clone(),
                        span,
                    }),
                    notes: Vec::new(),
                }),
            }
        }
        for body in nested_blocks(stmt) {
            total = total.saturating_add(shared_bytes(f, body, warnings));
        }
    }
    total
}

/// An integer expression as text, for shapes and grids: `256`, `m`,
/// `(m + 16 - 1) // 16`.
pub fn expr_text(f: &Function, e: Handle<Expr>) -> String {
    let mut out = String::new();
    write_expr(f, e, 0, &mut out);
    out
}

/// Binding strength of an infix operator; `None` for function-style ones.
fn precedence(op: BinaryOp) -> Option<(u8, &'static str)> {
    Some(match op {
        BinaryOp::Add => (1, "+"),
        BinaryOp::Sub => (1, "-"),
        BinaryOp::Mul => (2, "*"),
        BinaryOp::Div => (2, "/"),
        BinaryOp::FloorDiv => (2, "//"),
        BinaryOp::FloorMod => (2, "%"),
        _ => return None,
    })
}

fn write_expr(f: &Function, e: Handle<Expr>, outer: u8, out: &mut String) {
    match &f.exprs[e] {
        Expr::Literal(Literal::Int(v, _)) => {
            let _ = write!(out, "{v}");
        }
        Expr::Literal(Literal::Float(v, _)) => {
            let _ = write!(out, "{v:?}");
        }
        Expr::Literal(Literal::Bool(b)) => {
            let _ = write!(out, "{b}");
        }
        Expr::Var(v) => out.push_str(&f.vars[*v].name),
        Expr::Binary { op, lhs, rhs } => match precedence(*op) {
            Some((prec, symbol)) => {
                let parens = prec < outer;
                if parens {
                    out.push('(');
                }
                write_expr(f, *lhs, prec, out);
                let _ = write!(out, " {symbol} ");
                // Left-associative: the right operand needs parentheses at
                // equal strength.
                write_expr(f, *rhs, prec + 1, out);
                if parens {
                    out.push(')');
                }
            }
            None => {
                let _ = write!(out, "{}(", format!("{op:?}").to_lowercase());
                write_expr(f, *lhs, 0, out);
                out.push_str(", ");
                write_expr(f, *rhs, 0, out);
                out.push(')');
            }
        },
        Expr::Unary { op, arg } => {
            let _ = write!(out, "{}(", op.name());
            write_expr(f, *arg, 0, out);
            out.push(')');
        }
        Expr::Cast { dtype, arg } => {
            let _ = write!(out, "{}(", dtype.tilelang_name());
            write_expr(f, *arg, 0, out);
            out.push(')');
        }
        Expr::Bitcast { dtype, arg } => {
            let _ = write!(out, "reinterpret<{}>(", dtype.tilelang_name());
            write_expr(f, *arg, 0, out);
            out.push(')');
        }
        Expr::Select {
            cond,
            then,
            otherwise,
        } => {
            out.push_str("select(");
            for (i, &x) in [cond, then, otherwise].iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(f, *x, 0, out);
            }
            out.push(')');
        }
        Expr::Load { buffer, indices } => {
            out.push_str(&f.buffers[*buffer].name);
            out.push('[');
            for (i, &x) in indices.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(f, x, 0, out);
            }
            out.push(']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target;
    use tilec_core::front::line_col;
    use tilec_core::front::py::{Options, compile as front_end};
    use tilec_core::text::parse_module;

    fn module(source: &str) -> Module {
        let out = front_end(source, &Options::default());
        assert!(!out.has_errors(), "{:?}", out.diagnostics);
        out.module
            .unwrap_or_else(|| panic!("no module: {:?}", out.diagnostics))
    }

    fn listing_target() -> TargetDescription {
        target::describe(target::LISTING).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn compiled(source: &str) -> CompileResult {
        compile(
            &module(source),
            &listing_target(),
            &CompileOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e:?}"))
    }

    const GEMM: &str = r#"
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def matmul(M=256, N=256, K=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
            A_shared = T.alloc_shared((128, 32), "float16")
            B_shared = T.alloc_shared((32, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                T.copy(A[by * 128, k * 32], A_shared)
                T.copy(B[k * 32, bx * 128], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * 128, bx * 128])
    return main
"#;

    #[test]
    fn ir_that_does_not_verify_is_refused() {
        // What conformance level 0 sends (`tilec.l0.negative.ir.
        // copy_extent_mismatch`): a copy of 64 elements into 32.
        let malformed = parse_module(
            "tile_ir 0.1\n\n\
             func @bad(%X: global f32[64], %Y: global f32[64]) {\n\
             \x20 kernel grid(1) threads(128) block(%bx) thread(%tx) {\n\
             \x20   alloc %s: shared f32[32]\n\
             \x20   copy %X[0 +: 64] -> %s[0 +: 32]\n\
             \x20   copy %s[0 +: 32] -> %Y[0 +: 32]\n\
             \x20 }\n\
             }\n",
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        let error = compile(&malformed, &listing_target(), &CompileOptions::default())
            .expect_err("malformed IR is refused");
        assert_eq!(error.code, ErrorCode::InvalidIr, "{error:?}");
        assert!(error.message.contains("does not verify"), "{error:?}");
    }

    #[test]
    fn listing_is_the_tile_ir_under_a_header() {
        let result = compiled(GEMM);
        let [artifact] = result.artifacts.as_slice() else {
            panic!("{:?}", result.artifacts);
        };
        assert_eq!(artifact.name, "main.listing");
        assert_eq!(artifact.kind, ArtifactKind::Text);
        let text = String::from_utf8_lossy(&artifact.bytes);
        assert!(text.starts_with("# listing for target `listing`"), "{text}");
        assert!(text.contains("func @main"), "{text}");
        // The header is made of comments: the listing still parses.
        assert!(parse_module(&text).is_ok(), "{text}");
        assert!(result.diagnostics.is_empty());
    }

    #[test]
    fn metadata_describes_each_kernel() {
        let result = compiled(GEMM);
        let [kernel] = result.kernels.as_slice() else {
            panic!("{:?}", result.kernels);
        };
        assert_eq!(kernel.entry, "main_k0");
        assert_eq!(kernel.threads, 128);
        assert_eq!(kernel.grid, ["2", "2"]);
        // Two f16 tiles of 128x32; the fragment is not shared memory.
        assert_eq!(kernel.shared_bytes, 2 * 128 * 32 * 2);
        assert_eq!(kernel.registers, None);
        let params: Vec<(&str, &str, Vec<String>)> = kernel
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.dtype.as_str(), p.shape.clone()))
            .collect();
        let shape = vec!["256".to_string(), "256".to_string()];
        assert_eq!(
            params,
            [
                ("A", "float16", shape.clone()),
                ("B", "float16", shape.clone()),
                ("C", "float16", shape)
            ]
        );
    }

    #[test]
    fn symbolic_sizes_appear_by_name() {
        let result = compiled(
            r#"
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def rows(N=64):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            S = T.alloc_shared((16, N), "float32")
            T.copy(A[bx * 16, 0], S)
            T.copy(S, B[bx * 16, 0])
    return main
"#,
        );
        let kernel = &result.kernels[0];
        assert_eq!(kernel.grid, ["(m + 16 - 1) // 16"]);
        assert_eq!(kernel.params[0].shape, ["m", "64"]);
        assert_eq!(kernel.shared_bytes, 16 * 64 * 4);
    }

    #[test]
    fn every_kernel_statement_gets_an_entry() {
        let result = compiled(
            r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(4, threads=64) as bx:
        for i in T.Parallel(64):
            B[bx * 64 + i] = A[bx * 64 + i]
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(256):
            B[i] = B[i] + 1.0
"#,
        );
        let entries: Vec<(&str, u32)> = result
            .kernels
            .iter()
            .map(|k| (k.entry.as_str(), k.threads))
            .collect();
        assert_eq!(entries, [("main_k0", 64), ("main_k1", 32)]);
    }

    #[test]
    fn float8_is_refused_at_the_statement_that_uses_it() {
        let source = r#"
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def convert(N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float32")
            T.copy(A, S)
            for i in T.Parallel(N):
                B[i] = T.cast(S[i], "float8_e4m3fn").astype("float32")
    return main
"#;
        let error = compile(
            &module(source),
            &listing_target(),
            &CompileOptions::default(),
        )
        .err()
        .unwrap_or_else(|| panic!("float8 was accepted"));
        assert_eq!(error.code, ErrorCode::UnsupportedDtype);
        assert_eq!(
            error.message,
            "`float8_e4m3fn` is not supported by target `listing`"
        );
        let [diagnostic] = error.diagnostics.as_slice() else {
            panic!("{error:?}");
        };
        let location = diagnostic
            .location
            .as_ref()
            .unwrap_or_else(|| panic!("no location: {error:?}"));
        assert_eq!(location.function, "main");
        let line = source
            .lines()
            .position(|l| l.contains("float8_e4m3fn"))
            .map(|i| i + 1);
        assert_eq!(Some(line_col(source, location.span.start).0), line);
    }

    #[test]
    fn float8_parameters_are_refused_at_their_declaration() {
        let source = r#"
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64,), "float32"),
         B: T.Tensor((64,), "float8_e5m2")):
    with T.Kernel(1, threads=64) as bx:
        for i in T.Parallel(64):
            B[i] = A[i]
"#;
        let error = compile(
            &module(source),
            &listing_target(),
            &CompileOptions::default(),
        )
        .err()
        .unwrap_or_else(|| panic!("float8 was accepted"));
        assert_eq!(error.code, ErrorCode::UnsupportedDtype);
        let span = error.diagnostics[0]
            .location
            .as_ref()
            .map(|l| l.span)
            .unwrap_or_default();
        assert_eq!(line_col(source, span.start).0, 6, "{error:?}");
    }

    #[test]
    fn other_outputs_are_refused() {
        let options = CompileOptions {
            emit: "ptx".to_string(),
            ..CompileOptions::default()
        };
        let error = compile(&module(GEMM), &listing_target(), &options).err();
        assert_eq!(
            error.map(|e| (e.code, e.message)),
            Some((
                ErrorCode::UnsupportedFeature,
                "backend `template` emits `listing` only, not `ptx`".to_string()
            ))
        );
    }

    #[test]
    fn fast_math_is_noted_in_the_header() {
        let options = CompileOptions {
            fast_math: true,
            ..CompileOptions::default()
        };
        let result =
            compile(&module(GEMM), &listing_target(), &options).unwrap_or_else(|e| panic!("{e:?}"));
        let text = String::from_utf8_lossy(&result.artifacts[0].bytes).into_owned();
        assert!(text.contains("# fast math: on"), "{text}");
    }
}
