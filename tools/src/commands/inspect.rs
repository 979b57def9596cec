//! `tilec inspect FILE`: what a GPU code object holds ([`tilec_inspect`]
//! reads it; this module finds the target description for the occupancy
//! estimate and prints).
//!
//! The description of an AMDGPU code object's processor comes from the
//! first plugin that serves that target (`--plugin`, `TILEC_PLUGIN_PATH`,
//! the usual places), else from the built-in descriptions; without one
//! (or without a register file size in it) no occupancy is estimated and
//! the output says why.

use std::fmt::Write as _;

use serde::Serialize;
use tilec_core::target::TargetDescription;

use crate::backends::Plugins;
use crate::cli::InspectArgs;
use crate::commands::{Context, Exit, io_reason, print_stdout};
use crate::diagnostics::Report;
use crate::json;
use tilec_inspect::amdgpu::{AmdgpuKernel, AmdgpuObject};
use tilec_inspect::{self as inspect, CodeObject, Cubin, OccupancyFacts};

/// The `--json` document.
#[derive(Debug, Serialize)]
struct Output<'a> {
    file: String,
    /// `gfx942`, `sm_80`.
    arch: Option<String>,
    #[serde(flatten)]
    object: &'a CodeObject,
    /// Where the occupancy facts came from, or why there are none.
    occupancy_source: Option<String>,
}

#[derive(Debug, Serialize)]
struct Failure {
    file: String,
    error: String,
}

pub fn run(args: &InspectArgs, cx: &Context) -> Exit {
    let file = args.file.display().to_string();
    let fail = |message: String| {
        if args.json {
            print_stdout(
                &(json::to_line(&Failure {
                    file: file.clone(),
                    error: message.clone(),
                }) + "\n"),
            );
        }
        eprint!("{}", cx.renderer.render(&Report::error(message), None));
        Exit::Error
    };
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return fail(format!("cannot read `{file}`: {}", io_reason(&e))),
    };
    let (facts, source) = match inspect::amdgpu_processor(&bytes) {
        Some(processor) => match description(&processor, args) {
            Ok((d, from)) => match OccupancyFacts::new(&processor, &d) {
                Ok(f) => (
                    Some(f),
                    Some(format!("target description of {processor} from {from}")),
                ),
                Err(why) => (None, Some(format!("no estimate: {why}"))),
            },
            Err(why) => (None, Some(format!("no estimate: {why}"))),
        },
        None => (None, None),
    };
    let object = match inspect::inspect(&bytes, facts.as_ref()) {
        Ok(o) => o,
        Err(e) => return fail(format!("`{file}`: {e}")),
    };
    if args.json {
        let out = Output {
            file,
            arch: object.target(),
            object: &object,
            occupancy_source: source,
        };
        print_stdout(&(json::to_line(&out) + "\n"));
    } else {
        print_stdout(&render(&file, &object, source.as_deref()));
    }
    Exit::Success
}

/// The description of `processor`: from a plugin serving it, else built
/// in. The second value says where it came from.
fn description(processor: &str, args: &InspectArgs) -> Result<(TargetDescription, String), String> {
    let plugins = Plugins::load(&args.plugins.paths, true);
    for p in &plugins.registry.plugins {
        if p.info.targets.iter().any(|t| t == processor)
            && let Ok(d) = p.describe_target(processor)
        {
            return Ok((d, format!("backend `{}`", p.info.name)));
        }
    }
    tilec_core::target::builtin(processor)
        .map(|d| (d, "the built-in descriptions".to_string()))
        .map_err(|_| format!("no plugin and no built-in description serves {processor}"))
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "?".to_string(), |v| v.to_string())
}

/// The human-readable report.
pub fn render(file: &str, object: &CodeObject, occupancy_source: Option<&str>) -> String {
    match object {
        CodeObject::Amdgpu(a) => render_amdgpu(file, a, occupancy_source),
        CodeObject::Cubin(c) => render_cubin(file, c),
    }
}

fn render_amdgpu(file: &str, a: &AmdgpuObject, occupancy_source: Option<&str>) -> String {
    let mut out = String::new();
    let processor = a
        .target
        .processor
        .clone()
        .unwrap_or_else(|| format!("unknown processor 0x{:02x}", a.target.mach));
    let _ = writeln!(out, "{file}: AMDGPU code object");
    let _ = writeln!(
        out,
        "  target       {processor} (xnack {}, sramecc {})",
        a.target.xnack.name(),
        a.target.sramecc.name()
    );
    if let Some(id) = &a.target.target_id {
        let _ = writeln!(out, "  target id    {id}");
    }
    let version = a.code_object_version.map_or_else(
        || format!("unknown (ABI version {})", a.abi_version),
        |v| format!("v{v}"),
    );
    let _ = writeln!(out, "  code object  {version}");
    if let Some(source) = occupancy_source {
        let _ = writeln!(out, "  occupancy    {source}");
    }
    let _ = writeln!(out, "  kernels      {}", a.kernels.len());
    for k in &a.kernels {
        render_amdgpu_kernel(&mut out, k);
    }
    out
}

fn render_amdgpu_kernel(out: &mut String, k: &AmdgpuKernel) {
    let _ = writeln!(out, "\nkernel {} ({})", k.name, k.symbol);
    if let Some(m) = &k.metadata {
        let _ = writeln!(
            out,
            "  registers    {} VGPRs ({} AGPRs), {} SGPRs",
            opt(m.vgpr_count),
            opt(m.agpr_count),
            opt(m.sgpr_count)
        );
        let _ = writeln!(
            out,
            "  LDS          {} bytes",
            opt(m.group_segment_fixed_size)
        );
        let _ = writeln!(
            out,
            "  scratch      {} bytes per work-item{}",
            opt(m.private_segment_fixed_size),
            if m.uses_dynamic_stack == Some(true) {
                " (dynamic stack)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "  spills       {} SGPRs, {} VGPRs",
            opt(m.sgpr_spill_count),
            opt(m.vgpr_spill_count)
        );
        let _ = writeln!(
            out,
            "  wavefront    {} lanes, at most {} work-items per workgroup",
            opt(m.wavefront_size),
            opt(m.max_flat_workgroup_size)
        );
        let _ = writeln!(out, "  kernarg      {} bytes", opt(m.kernarg_segment_size));
    } else {
        let _ = writeln!(out, "  metadata     none in the code object");
    }
    if let Some(d) = &k.descriptor {
        let _ = write!(
            out,
            "  descriptor   rsrc1 0x{:08x}, rsrc2 0x{:08x}, rsrc3 0x{:08x}, properties 0x{:04x}; VGPR blocks {}, SGPR blocks {}",
            d.compute_pgm_rsrc1,
            d.compute_pgm_rsrc2,
            d.compute_pgm_rsrc3,
            d.kernel_code_properties,
            d.granulated_vgpr_count,
            d.granulated_sgpr_count
        );
        if let Some(acc) = d.accum_offset {
            let _ = write!(out, ", AGPRs from v{acc}");
        }
        let _ = writeln!(out);
    }
    if let Some(o) = &k.occupancy {
        let limit = match o.limited_by {
            inspect::amdgpu::Limit::Hardware => "the hardware",
            inspect::amdgpu::Limit::Vgprs => "VGPRs",
            inspect::amdgpu::Limit::Lds => "LDS",
        };
        let _ = writeln!(
            out,
            "  occupancy    {} of {} waves per SIMD, limited by {limit} (VGPRs allow {} with {} allocated, LDS allows {})",
            o.waves_per_simd, o.max_waves_per_simd, o.by_vgprs, o.vgprs_allocated, o.by_lds
        );
    }
}

fn render_cubin(file: &str, c: &Cubin) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{file}: NVIDIA cubin");
    let sm =
        c.sm.map_or_else(|| "unknown".to_string(), |sm| format!("sm_{sm}"));
    let _ = writeln!(
        out,
        "  target       {sm} (e_flags 0x{:08x}, ELF ABI version {})",
        c.e_flags, c.abi_version
    );
    let _ = writeln!(out, "  kernels      {}", c.kernels.len());
    for k in &c.kernels {
        let _ = writeln!(out, "\nkernel {}", k.name);
        let _ = writeln!(
            out,
            "  registers    {}",
            k.registers
                .map_or_else(|| "?".to_string(), |r| r.to_string())
        );
        let _ = writeln!(out, "  shared       {} bytes (static)", k.shared_bytes);
        let _ = writeln!(
            out,
            "  local        {} bytes of stack frame",
            k.local_bytes
                .map_or_else(|| "?".to_string(), |r| r.to_string())
        );
        if let Some([x, y, z]) = k.max_threads {
            let _ = writeln!(out, "  max threads  {x} x {y} x {z}");
        }
        if let Some(p) = k.param_bytes {
            let _ = writeln!(out, "  parameters   {p} bytes");
        }
    }
    out
}
