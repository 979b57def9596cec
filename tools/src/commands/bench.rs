//! `tilec bench`: time a kernel on a device backend.
//!
//! The kernel is compiled by the plugin for `--target`, its parameters are
//! filled as `tilec run` fills them (seeded random inputs), copied to the
//! device once, and every kernel of the function is launched `--warmup`
//! times and then timed `--repeat` times, each launch between a pair of
//! device events. The report gives the median, minimum and maximum per
//! launch, summed over the function's kernels, and two rates from the
//! median: TFLOP/s from the matrix products the kernel states (2·M·N·K per
//! `T.gemm`, times the trip counts of the loops around it and the grid;
//! `--flops` overrides it) and GB/s from the bytes of all parameters (each
//! read or written once: the least traffic the kernel can have).
//!
//! **Rotating inputs.** A kernel whose data fits in the last-level cache
//! would find it there, left by the launch before, and look faster than it
//! is on data that streams from memory. So the inputs are copied into
//! `sets` sets of device buffers, the fewest whose bytes together reach
//! `--rotate-bytes` (512 MiB by default, more than the last-level cache of
//! current GPUs; at most 64 sets and half the device's memory), and
//! consecutive launches take the sets in turn.
//!
//! **Fraction of peak.** When the target description lists the device as
//! one of its `parts` (`docs/targets.md`), the rates are also given as a
//! fraction of that part's published peak: TFLOP/s against the matrix
//! unit's rate for the gemm operands' type, GB/s against the memory
//! bandwidth.

use std::collections::BTreeMap;

use serde::Serialize;
use tilec_core::interp::{SymbolValues, Tensor, param_shapes};
use tilec_core::ir::{BinaryOp, Block, Expr, Function, Handle, Literal, Stmt};

use crate::backends::{Backend, Plugins};
use crate::cli::BenchArgs;
use crate::commands::run::symbol_values;
use crate::commands::{Context, Exit, Frontend, print_stdout, single_function};
use crate::diagnostics::Report;
use crate::rng::SplitMix64;
use crate::{json, tensors};

/// The result, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct BenchOutput {
    pub ok: bool,
    pub file: String,
    pub error: Option<String>,
    pub kernel: Option<String>,
    pub backend: String,
    pub target: Option<String>,
    pub device: Option<String>,
    pub symbols: BTreeMap<String, i64>,
    pub warmup: u32,
    pub repeat: u32,
    /// Per launch of the whole function (all its kernels), milliseconds.
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub flops: Option<f64>,
    pub tflops: Option<f64>,
    pub bytes: Option<u64>,
    pub gbps: Option<f64>,
    /// How many sets of inputs the launches rotate through.
    pub sets: usize,
    /// The part of the target description the device matched, with its
    /// peak rates and the fractions of them measured.
    pub peak: Option<Peak>,
}

/// A measurement against the device's published peak.
#[derive(Debug, Serialize)]
pub struct Peak {
    /// The part's device name (`NVIDIA H200`).
    pub device: String,
    /// The matrix unit's rate for the gemm operand type, TFLOP/s.
    pub tflops: Option<f64>,
    pub tflops_fraction: Option<f64>,
    /// Memory bandwidth, GB/s.
    pub gbps: Option<f64>,
    pub gbps_fraction: Option<f64>,
}

pub fn bench(args: &BenchArgs, cx: &Context) -> Exit {
    let mut out = BenchOutput {
        ok: false,
        file: args.source.file.display().to_string(),
        error: None,
        kernel: None,
        backend: args.backend.clone(),
        target: None,
        device: None,
        symbols: BTreeMap::new(),
        warmup: args.warmup,
        repeat: args.repeat,
        median_ms: None,
        min_ms: None,
        max_ms: None,
        flops: None,
        tflops: None,
        bytes: None,
        gbps: None,
        sets: 1,
        peak: None,
    };
    let frontend = Frontend::load(&args.source, args.target.as_deref());
    if !args.json {
        eprint!("{}", frontend.render(&cx.renderer));
    }
    let Some(module) = frontend.module.as_ref().filter(|_| frontend.succeeded()) else {
        return finish(args, cx, &frontend, out, Err((Exit::Error, None)));
    };
    let result = single_function(module)
        .map_err(|r| (Exit::Error, Some(r)))
        .and_then(|func| measure(args, func, &mut out));
    finish(args, cx, &frontend, out, result)
}

type Outcome = Result<(), (Exit, Option<Report>)>;

fn finish(
    args: &BenchArgs,
    cx: &Context,
    frontend: &Frontend,
    mut out: BenchOutput,
    result: Outcome,
) -> Exit {
    let (exit, report) = match result {
        Ok(()) => (Exit::Success, None),
        Err((exit, report)) => (exit, report),
    };
    out.ok = exit == Exit::Success;
    if args.json {
        out.error = report.as_ref().map(|r| r.message.clone());
        print_stdout(&(json::to_line(&out) + "\n"));
    } else {
        if out.ok {
            print_stdout(&render(&out));
        }
        if let Some(report) = &report {
            eprint!("{}", cx.renderer.render(report, frontend.source.as_ref()));
        }
    }
    exit
}

fn error(report: Report) -> (Exit, Option<Report>) {
    (Exit::Error, Some(report))
}

fn measure(args: &BenchArgs, func: &Function, out: &mut BenchOutput) -> Outcome {
    out.kernel = Some(func.name.clone());
    let plugins = Plugins::load_for_backend(&args.plugins.paths, &args.backend);
    if let Some(failure) = plugins.explicit_failures().into_iter().next() {
        return Err(error(failure));
    }
    let loaded = match plugins.backend(&args.backend).map_err(error)? {
        Backend::Plugin(p) if p.has_runtime() => p,
        Backend::Plugin(p) => {
            return Err(error(Report::error(format!(
                "backend `{}` is compile-only: it has no runtime to time kernels with",
                p.name()
            ))));
        }
        Backend::Ref => {
            return Err(error(
                Report::error("`tilec bench` times kernels on a device backend, not on `ref`")
                    .with_note("name one with `--backend`, e.g. `--backend cuda`"),
            ));
        }
    };
    let plugin = tilec_conformance::backend::Plugin::load(&loaded.path, args.target.as_deref())
        .map_err(|why| error(Report::error(format!("backend `{}`: {why}", args.backend))))?;
    use tilec_conformance::backend::Backend as _;
    out.target = Some(plugin.target().name.clone());
    let device = plugin.device().map_err(|why| {
        error(Report::error(format!(
            "backend `{}` cannot run kernels here: {why}",
            args.backend
        )))
    })?;
    out.device = Some(format!("{} ({})", device.name, device.arch));

    let symbols = symbol_values(func, &args.source.defines()).map_err(error)?;
    out.symbols = symbols.clone().into_iter().collect();
    let shapes = param_shapes(func, &symbols).map_err(|e| {
        error(Report::error(format!(
            "cannot compute the shapes of `{}`'s parameters: {e}",
            func.name
        )))
    })?;
    let tensors: Vec<Tensor> = func
        .params
        .iter()
        .zip(&shapes)
        .enumerate()
        .map(|(i, (p, shape))| {
            tensors::random(
                func.buffers[p.buffer].dtype,
                shape,
                SplitMix64::for_param(args.seed, i),
            )
        })
        .collect();
    out.bytes = Some(
        tensors
            .iter()
            .map(|t| t.len() as u64 * t.dtype.bytes())
            .sum(),
    );
    out.flops = args.flops.or_else(|| gemm_flops(func, &symbols));

    let module = tilec_core::ir::Module {
        functions: vec![func.clone()],
    };
    let mut options = tilec_plugin_api::CompileOptions {
        fast_math: args.fast_math || super::compile::fast_math(&module),
        ..tilec_plugin_api::CompileOptions::default()
    };
    super::compile::set_fp_contract(&mut options, args.fp_contract);
    let compiled = plugin.compile(&module, &options).map_err(|e| {
        error(Report::error(format!(
            "backend `{}` could not compile `{}`: {e}",
            args.backend, func.name
        )))
    })?;
    let bytes = out.bytes.unwrap_or(0);
    out.sets = rotation_sets(bytes, args.rotate_bytes, device.memory_bytes);
    let times = plugin
        .time(
            &compiled,
            func,
            &tensors,
            out.sets,
            args.warmup,
            args.repeat,
        )
        .map_err(|e| {
            (
                Exit::Failure,
                Some(Report::error(format!(
                    "timing `{}` on {} failed: {e}",
                    func.name, device.name
                ))),
            )
        })?;
    let stats: Vec<(f64, f64, f64)> = times.iter().map(|t| summary(t)).collect();
    let median: f64 = stats.iter().map(|s| s.0).sum();
    out.median_ms = Some(median);
    out.min_ms = Some(stats.iter().map(|s| s.1).sum());
    out.max_ms = Some(stats.iter().map(|s| s.2).sum());
    if median > 0.0 {
        let seconds = median * 1e-3;
        out.tflops = out.flops.map(|f| f / seconds / 1e12);
        out.gbps = out.bytes.map(|b| b as f64 / seconds / 1e9);
    }
    out.peak = plugin.target().part(&device.name).map(|part| {
        let tflops = gemm_dtype(func)
            .and_then(|d| part.matrix_gflops.get(d.tilelang_name()))
            .map(|&g| g as f64 / 1e3);
        let gbps = part.memory_gbps.map(|g| g as f64);
        let fraction = |v: Option<f64>, p: Option<f64>| v.zip(p).map(|(v, p)| v / p);
        Peak {
            device: part.device.clone(),
            tflops,
            tflops_fraction: fraction(out.tflops, tflops),
            gbps,
            gbps_fraction: fraction(out.gbps, gbps),
        }
    });
    Ok(())
}

/// Largest number of input sets `tilec bench` rotates through.
const MAX_SETS: u64 = 64;

/// The number of input sets whose `bytes` each reach `rotate_bytes`
/// together: at least 1, at most [`MAX_SETS`], and no more than fit in
/// half of `device_memory` (when known, i.e. non-zero).
fn rotation_sets(bytes: u64, rotate_bytes: u64, device_memory: u64) -> usize {
    if bytes == 0 || rotate_bytes <= bytes {
        return 1;
    }
    let mut sets = rotate_bytes.div_ceil(bytes).min(MAX_SETS);
    if device_memory > 0 {
        sets = sets.min((device_memory / 2) / bytes);
    }
    usize::try_from(sets.max(1)).unwrap_or(1)
}

/// The operand type of the kernel's first `T.gemm`.
fn gemm_dtype(func: &Function) -> Option<tilec_core::ir::DType> {
    fn find(func: &Function, block: &Block) -> Option<tilec_core::ir::DType> {
        block.stmts.iter().find_map(|stmt| match stmt {
            Stmt::Gemm { a, .. } => Some(func.buffers[a.buffer].dtype),
            Stmt::Kernel { body, .. } | Stmt::For { body, .. } | Stmt::Parallel { body, .. } => {
                find(func, body)
            }
            Stmt::If {
                then, otherwise, ..
            } => find(func, then).or_else(|| find(func, otherwise)),
            _ => None,
        })
    }
    find(func, &func.body)
}

/// Median, minimum and maximum of one kernel's times (0 for none).
fn summary(times: &[f64]) -> (f64, f64, f64) {
    let mut sorted: Vec<f64> = times.iter().copied().filter(|t| t.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let Some((&min, &max)) = sorted.first().zip(sorted.last()) else {
        return (0.0, 0.0, 0.0);
    };
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    (median, min, max)
}

fn render(out: &BenchOutput) -> String {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    let mut text = format!(
        "{} on {} (target {}): median {} ms (min {}, max {}) over {} launches after {} warm-up\n",
        out.kernel.as_deref().unwrap_or("?"),
        out.device.as_deref().unwrap_or("?"),
        out.target.as_deref().unwrap_or("?"),
        ms(out.median_ms),
        ms(out.min_ms),
        ms(out.max_ms),
        out.repeat,
        out.warmup,
    );
    if let Some(t) = out.tflops {
        text += &format!("  {t:.1} TFLOP/s");
    }
    if let Some(g) = out.gbps {
        text += &format!("  {g:.0} GB/s (all parameters once)");
    }
    text.push('\n');
    if out.sets > 1 {
        text += &format!("  inputs rotated over {} sets\n", out.sets);
    }
    if let Some(p) = &out.peak {
        let part = |what: &str, v: Option<f64>, f: Option<f64>, unit: &str| {
            v.zip(f)
                .map(|(v, f)| format!("{:.1}% of {v:.0} {unit} {what}", f * 100.0))
        };
        let parts: Vec<String> = [
            part("(matrix unit)", p.tflops, p.tflops_fraction, "TFLOP/s"),
            part("(memory)", p.gbps, p.gbps_fraction, "GB/s"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !parts.is_empty() {
            text += &format!("  {}: {} (published peak)\n", p.device, parts.join(", "));
        }
    }
    text
}

/// 2·M·N·K per executed `gemm`, when every extent and trip count is known
/// from the sizes.
fn gemm_flops(func: &Function, symbols: &SymbolValues) -> Option<f64> {
    block_flops(func, &func.body, symbols)
}

fn block_flops(func: &Function, block: &Block, symbols: &SymbolValues) -> Option<f64> {
    let mut total = 0.0;
    for stmt in &block.stmts {
        total += match stmt {
            Stmt::Kernel { grid, body, .. } => {
                let blocks = grid
                    .iter()
                    .try_fold(1.0, |n, &e| Some(n * eval(func, e, symbols)? as f64))?;
                blocks * block_flops(func, body, symbols)?
            }
            Stmt::For { extent, body, .. } => {
                let inner = block_flops(func, body, symbols)?;
                if inner == 0.0 {
                    0.0
                } else {
                    eval(func, *extent, symbols)? as f64 * inner
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                // Both arms must agree for the count to be known.
                let (a, b) = (
                    block_flops(func, then, symbols)?,
                    block_flops(func, otherwise, symbols)?,
                );
                if a == b {
                    a
                } else {
                    return None;
                }
            }
            Stmt::Parallel { body, extents, .. } => {
                let inner = block_flops(func, body, symbols)?;
                if inner == 0.0 {
                    0.0
                } else {
                    extents
                        .iter()
                        .try_fold(inner, |n, &e| Some(n * eval(func, e, symbols)? as f64))?
                }
            }
            Stmt::Gemm {
                a, c, transpose_a, ..
            } => {
                let rank = c.ranges.len();
                let m = eval(func, c.ranges.get(rank.checked_sub(2)?)?.extent, symbols)?;
                let n = eval(func, c.ranges.get(rank - 1)?.extent, symbols)?;
                let ra = a.ranges.len();
                let k_dim = if *transpose_a {
                    ra.checked_sub(2)?
                } else {
                    ra.checked_sub(1)?
                };
                let k = eval(func, a.ranges.get(k_dim)?.extent, symbols)?;
                2.0 * m as f64 * n as f64 * k as f64
            }
            _ => 0.0,
        };
    }
    Some(total)
}

/// The value of an integer expression over constants and sizes.
fn eval(func: &Function, e: Handle<Expr>, symbols: &SymbolValues) -> Option<i64> {
    match func.exprs.try_get(e)? {
        Expr::Literal(Literal::Int(v, _)) => Some(*v),
        Expr::Var(v) => symbols.get(&func.vars.try_get(*v)?.name).copied(),
        Expr::Cast { arg, .. } => eval(func, *arg, symbols),
        Expr::Binary { op, lhs, rhs } => {
            let (a, b) = (eval(func, *lhs, symbols)?, eval(func, *rhs, symbols)?);
            match op {
                BinaryOp::Add => a.checked_add(b),
                BinaryOp::Sub => a.checked_sub(b),
                BinaryOp::Mul => a.checked_mul(b),
                BinaryOp::FloorDiv => (b != 0).then(|| a.div_euclid(b)),
                BinaryOp::Div => a.checked_div(b),
                BinaryOp::FloorMod => (b != 0).then(|| a.rem_euclid(b)),
                BinaryOp::Min => Some(a.min(b)),
                BinaryOp::Max => Some(a.max(b)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_reaches_the_bytes_within_the_limits() {
        const MIB: u64 = 1 << 20;
        // 100 MiB of inputs: six sets reach 512 MiB.
        assert_eq!(rotation_sets(100 * MIB, 512 * MIB, 0), 6);
        // Already as large as the rotation, or rotation off: one set.
        assert_eq!(rotation_sets(512 * MIB, 512 * MIB, 0), 1);
        assert_eq!(rotation_sets(100 * MIB, 0, 0), 1);
        assert_eq!(rotation_sets(0, 512 * MIB, 0), 1);
        // Tiny inputs: at most 64 sets.
        assert_eq!(rotation_sets(1024, 512 * MIB, 0), 64);
        // Half the device's memory bounds it.
        assert_eq!(rotation_sets(100 * MIB, 512 * MIB, 400 * MIB), 2);
        assert_eq!(rotation_sets(300 * MIB, 512 * MIB, 400 * MIB), 1);
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(summary(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(summary(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
        assert_eq!(summary(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn gemm_flops_count_loops_and_grid() {
        let src = "import tilelang.language as T\n\
def matmul(M=256, N=128, K=64, bm=64, bn=64, bk=32):\n    \
@T.prim_func\n    \
def main(A: T.Tensor((M, K), \"float16\"), B: T.Tensor((K, N), \"float16\"), C: T.Tensor((M, N), \"float32\")):\n        \
with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):\n            \
A_s = T.alloc_shared((bm, bk), \"float16\")\n            \
B_s = T.alloc_shared((bk, bn), \"float16\")\n            \
C_l = T.alloc_fragment((bm, bn), \"float32\")\n            \
T.clear(C_l)\n            \
for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):\n                \
T.copy(A[by * bm, k * bk], A_s)\n                \
T.copy(B[k * bk, bx * bn], B_s)\n                \
T.gemm(A_s, B_s, C_l)\n            \
T.copy(C_l, C[by * bm, bx * bn])\n    \
return main\n";
        let out = tilec_core::front::py::compile(src, &Default::default());
        let module = out.module.unwrap_or_default();
        let func = &module.functions[0];
        let flops = gemm_flops(func, &SymbolValues::new());
        assert_eq!(flops, Some(2.0 * 256.0 * 128.0 * 64.0));
    }
}
