//! Tile IR (tile level) to AscendC.
//!
//! Each `kernel` statement of a function becomes one
//! `extern "C" __global__ __aicore__` kernel, `<function>_k<i>`, plus a host
//! launch stub and a tiling structure (`<entry>_Tiling`: the grid and the
//! symbolic sizes). The steps:
//!
//! 1. **Placement** ([`place`]): every on-chip buffer gets a position from
//!    how the kernel uses it. Operands of `T.gemm` live in L1 (the A1/B1
//!    positions, NZ fractals), the accumulator in L0C (CO1), everything the
//!    vector or scalar unit touches in UB (VECCALC), `var` scalars in
//!    registers of the scalar unit. An operand or accumulator the vector or
//!    scalar unit also touches lives in UB and is *staged* for the cube
//!    (an L1 or L0C tile of its own). The sizes are checked against the
//!    description's capacities.
//! 2. **Statements** ([`Kernel`]): `T.copy` becomes `DataCopyPad`
//!    (GM↔UB, ragged rows and columns clamped at run time), `DataCopy` with
//!    `Nd2NzParams` (GM→L1 for cube operands) or `Fixpipe` (L0C→GM);
//!    `T.gemm` becomes `LoadData` into L0A/L0B and `Mmad` into L0C, split
//!    along K when the operands do not fit L0; `T.Parallel` becomes vector
//!    instructions on UB rows when its body is element-wise arithmetic the
//!    vector unit has, and a scalar-unit loop otherwise; `T.reduce_*`
//!    becomes `ReduceSum/Max/Min` per row.
//! 3. **Mixed kernels**: on A2 the cube (AIC) and the vector unit (AIV)
//!    are separate cores that share only global memory. A kernel with
//!    cube and vector work (any staged buffer makes one) is a
//!    `KERNEL_TYPE_MIX_AIC_1_2` kernel: each
//!    statement's instructions form a *segment* guarded by the core that
//!    runs them (`TILEC_AIC`/`TILEC_AIV`), and a staged buffer goes
//!    through a per-core region of a GM workspace the host allocates:
//!    operands UB → GM (MTE3) → L1 (MTE2, ND → NZ) before each `T.gemm`,
//!    products L0C → GM (fixpipe) → UB (MTE2), added there.
//! 4. **Synchronisation** ([`sync`]): the emitter knows which pipe of which
//!    core every instruction runs on and which buffers it reads and
//!    writes; before an instruction that depends on another pipe's work it
//!    inserts a `SetFlag`/`WaitFlag` pair for the event the description
//!    lists, or, across the cores, a `CrossCoreSetFlag`/`CrossCoreWaitFlag`
//!    pair ahead of the segment. Loops end with `PipeBarrier<PIPE_ALL>`
//!    so that their iterations start from a synchronised core, and in a
//!    mixed kernel with the cross-core flags that hand shared workspace
//!    back to the other core.
//!
//! The grid is flattened and spread over the AI cores: core `GetBlockIdx()`
//! runs blocks `idx, idx + GetBlockNum(), ...`.

mod expr;
mod kernel;
mod place;
mod sync;

pub use expr::ctype;
pub use kernel::emit_function;

/// A problem with the user's kernel at a statement, before it becomes a
/// located `PluginError`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub code: tilec_plugin_api::ErrorCode,
    pub span: tilec_core::ir::Span,
    pub message: String,
}

impl Refusal {
    pub fn unsupported(span: tilec_core::ir::Span, message: impl Into<String>) -> Refusal {
        Refusal {
            code: tilec_plugin_api::ErrorCode::UnsupportedFeature,
            span,
            message: message.into(),
        }
    }

    /// A bug of the backend, reported at the statement it hit.
    pub fn internal(span: tilec_core::ir::Span, message: impl Into<String>) -> Refusal {
        Refusal {
            code: tilec_plugin_api::ErrorCode::Internal,
            span,
            message: format!("internal error of the Ascend backend: {}", message.into()),
        }
    }
}

/// What the runtime needs to launch one emitted kernel: the C entry of
/// its CPU launcher and the kind of each argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    pub entry: String,
    /// `true` for a buffer, `false` for a symbolic size.
    pub buffers: Vec<bool>,
    /// Bytes of GM workspace each launched core needs (0: none); the
    /// launcher passes `block_dim` times this many after the buffers.
    pub workspace: u64,
}

/// The line that describes an entry inside the emitted source, read back
/// by the runtime: `// tilec-entry <name> <b|s>... [ws=<bytes>]`.
pub fn entry_line(info: &EntryInfo) -> String {
    let mut words: Vec<String> = info
        .buffers
        .iter()
        .map(|&b| if b { "b" } else { "s" }.to_string())
        .collect();
    if info.workspace > 0 {
        words.push(format!("ws={}", info.workspace));
    }
    format!("// tilec-entry {} {}", info.entry, words.join(" "))
}

/// Parses the entry lines of an emitted source; a line that does not
/// parse is left out.
pub fn parse_entries(source: &str) -> Vec<EntryInfo> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("// tilec-entry "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let entry = words.next()?.to_string();
            let mut info = EntryInfo {
                entry,
                buffers: Vec::new(),
                workspace: 0,
            };
            for w in words {
                match w {
                    "b" => info.buffers.push(true),
                    "s" => info.buffers.push(false),
                    _ => info.workspace = w.strip_prefix("ws=")?.parse().ok()?,
                }
            }
            Some(info)
        })
        .collect()
}

/// The top of every emitted file: what it is, the includes and the scalar
/// helpers.
pub fn header(target: &tilec_core::target::TargetDescription) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "// AscendC kernels for {} ({}), written by {} {}.\n",
        target.name,
        target.arch,
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(
        "// Build for the NPU with CANN's compiler; with -DASCENDC_CPU_MODEL it builds\n\
         // against ascendc_cpu.h, the CPU execution model shipped with the backend.\n\
         #ifdef ASCENDC_CPU_MODEL\n#include \"ascendc_cpu.h\"\n#else\n#include \"kernel_operator.h\"\n#endif\n\
         #include <cmath>\n#include <cstdint>\n#include <limits>\n\nusing namespace AscendC;\n\n\
         // The CPU model names buffers in its messages; AscendC's InitBuffer takes no name.\n\
         #ifdef ASCENDC_CPU_MODEL\n\
         #define TILEC_INIT_BUFFER(pipe, buf, bytes, name) (pipe).InitBuffer((buf), (bytes), (name))\n\
         #else\n\
         #define TILEC_INIT_BUFFER(pipe, buf, bytes, name) (pipe).InitBuffer((buf), (bytes))\n\
         #endif\n\n",
    );
    out.push_str(SIDES);
    out.push_str(expr::PRELUDE);
    out.push('\n');
    out
}

/// Macros of the emitted file for global tensors (named in the CPU
/// model's messages) and for the cores of a mixed kernel.
const SIDES: &str = "\
// A kernel with cube and vector work runs on an AIC and its two AIVs\n\
// (KERNEL_TYPE_MIX_AIC_1_2): each instruction is guarded by the core that runs it,\n\
// TILEC_AIC or TILEC_AIV (the first AIV does the vector work); both AIVs set and wait\n\
// for the cross-core flags (TILEC_AIV_ALL). The CPU model runs both cores in program\n\
// order and checks every instruction against the core its guard names.\n\
#ifdef ASCENDC_CPU_MODEL\n\
#define TILEC_SET_GLOBAL(t, ptr, n, name) (t).SetGlobalBuffer((ptr), (n), (name))\n\
#define TILEC_AIC if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIC}; true)\n\
#define TILEC_AIV if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIV}; tl_aiv_worker)\n\
#define TILEC_AIV_ALL if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIV}; true)\n\
#else\n\
#define TILEC_SET_GLOBAL(t, ptr, n, name) (t).SetGlobalBuffer((ptr), (n))\n\
#define TILEC_AIC if (ASCEND_IS_AIC)\n\
#define TILEC_AIV if (ASCEND_IS_AIV && tl_aiv_worker)\n\
#define TILEC_AIV_ALL if (ASCEND_IS_AIV)\n\
#endif\n\n";
