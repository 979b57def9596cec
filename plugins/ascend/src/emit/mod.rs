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
//!    registers of the scalar unit. The sizes are checked against the
//!    description's capacities; a use the A2 data paths cannot serve (the
//!    vector unit reading a cube result, which lives on the other core of
//!    the pair) is refused at its statement.
//! 2. **Statements** ([`Kernel`]): `T.copy` becomes `DataCopyPad`
//!    (GM↔UB, ragged rows and columns clamped at run time), `DataCopy` with
//!    `Nd2NzParams` (GM→L1 for cube operands) or `Fixpipe` (L0C→GM);
//!    `T.gemm` becomes `LoadData` into L0A/L0B and `Mmad` into L0C, split
//!    along K when the operands do not fit L0; `T.Parallel` becomes vector
//!    instructions on UB rows when its body is element-wise arithmetic the
//!    vector unit has, and a scalar-unit loop otherwise; `T.reduce_*`
//!    becomes `ReduceSum/Max/Min` per row.
//! 3. **Synchronisation** ([`sync`]): the emitter knows which pipe every
//!    instruction runs on and which buffers it reads and writes; before an
//!    instruction that depends on another pipe's work it inserts a
//!    `SetFlag`/`WaitFlag` pair for the event the description lists, and
//!    loops end with `PipeBarrier<PIPE_ALL>` so that their iterations start
//!    from a synchronised core.
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
}

/// What the runtime needs to launch one emitted kernel: the C entry of
/// its CPU launcher and the kind of each argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    pub entry: String,
    /// `true` for a buffer, `false` for a symbolic size.
    pub buffers: Vec<bool>,
}

/// The line that describes an entry inside the emitted source, read back
/// by the runtime: `// tilec-entry <name> <b|s>...`.
pub fn entry_line(info: &EntryInfo) -> String {
    let kinds: Vec<&str> = info
        .buffers
        .iter()
        .map(|&b| if b { "b" } else { "s" })
        .collect();
    format!("// tilec-entry {} {}", info.entry, kinds.join(" "))
}

/// Parses the entry lines of an emitted source.
pub fn parse_entries(source: &str) -> Vec<EntryInfo> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("// tilec-entry "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let entry = words.next()?.to_string();
            let buffers = words.map(|w| w == "b").collect();
            Some(EntryInfo { entry, buffers })
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
    out.push_str(expr::PRELUDE);
    out.push('\n');
    out
}
