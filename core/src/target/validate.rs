//! Checks on a target description, and the errors they report.
//!
//! [`TargetDescription::validate`] checks, in order: the format version and
//! names; the execution model (SIMT width 32, 64 or 128); thread and
//! register limits; memory spaces (unique names, nonzero capacities,
//! power-of-two alignments and bank widths); vector widths; every matrix
//! atom (shape, issue group consistent with the SIMT width, operand sources
//! and fragments: each fragment has as many threads as the issue group and
//! gives every element of its tile to exactly as many (thread, slot) pairs
//! as it declares, for every N of an N family); matrix loads; asynchronous
//! copies (sizes, memory spaces, completion barriers with a byte counter);
//! barriers; and provenance (every cited source exists). The first problem
//! found is returned; nothing is printed and nothing panics.

use std::collections::HashSet;

use super::{
    AsyncCopy, Barrier, ExecutionModel, IssueGranularity, MatrixAtom, MatrixLoad, OperandRole,
    OperandSource, Provenance, TargetDescription,
};
use crate::layout::{FragmentLayout, LayoutError};

/// Why a target description was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The text is not a description (JSON syntax or schema).
    #[error("target description JSON {line}:{column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    /// No shipped description has this name.
    #[error("no builtin target `{name}` (known: {known})")]
    UnknownBuiltin { name: String, known: String },
    /// A format version this library does not read.
    #[error(
        "target description format version {found} is not supported (this library reads {supported})"
    )]
    FormatVersion { found: u32, supported: u32 },
    /// A SIMT width other than 32, 64 or 128.
    #[error("target `{target}`: SIMT width {width} is not 32, 64 or 128")]
    SimtWidth { target: String, width: u32 },
    /// A count, size or capacity that must be positive is zero.
    #[error("target `{target}`: {at} must be nonzero")]
    Zero { target: String, at: String },
    /// A width or alignment that must be a power of two is not.
    #[error("target `{target}`: {at} = {value} is not a power of two")]
    NotPowerOfTwo {
        target: String,
        at: String,
        value: u64,
    },
    /// Two entries of one list share a name.
    #[error("target `{target}`: two {what} are named `{name}`")]
    Duplicate {
        target: String,
        what: &'static str,
        name: String,
    },
    /// A reference to a memory space that is not described.
    #[error("target `{target}`: {at} refers to memory space `{space}`, which is not described")]
    UnknownMemorySpace {
        target: String,
        at: String,
        space: String,
    },
    /// A reference to a barrier that is not described.
    #[error("target `{target}`: {at} refers to barrier `{barrier}`, which is not described")]
    UnknownBarrier {
        target: String,
        at: String,
        barrier: String,
    },
    /// A provenance that cites no source.
    #[error("target `{target}`: {at} cites no source")]
    NoSources { target: String, at: String },
    /// A provenance that cites a source id not in `sources`.
    #[error("target `{target}`: {at} cites source `{source_id}`, which is not listed")]
    UnknownSource {
        target: String,
        at: String,
        source_id: String,
    },
    /// An atom's issue group disagrees with its granularity or the SIMT
    /// width.
    #[error(
        "target `{target}`: atom `{atom}` is issued by {threads} threads at {granularity:?} granularity, which does not fit SIMT width {width}"
    )]
    IssueThreads {
        target: String,
        atom: String,
        granularity: IssueGranularity,
        threads: u32,
        width: u32,
    },
    /// An operand read from registers without a fragment layout, or a
    /// fragment on an operand that is never in registers.
    #[error("target `{target}`: {at}: {reason}")]
    OperandSources {
        target: String,
        at: String,
        reason: String,
    },
    /// A fragment layout that is malformed or does not own its tile
    /// exactly.
    #[error("target `{target}`: fragment {at}: {source}")]
    Fragment {
        target: String,
        at: String,
        #[source]
        source: LayoutError,
    },
    /// A fragment whose thread count is not the issuing group's.
    #[error(
        "target `{target}`: fragment {at} spans {found} threads, the instruction is issued by {expected}"
    )]
    FragmentThreads {
        target: String,
        at: String,
        found: u64,
        expected: u64,
    },
    /// Slots that do not fill whole registers.
    #[error(
        "target `{target}`: fragment {at} has {slots} slots, not a multiple of {per_register} per register"
    )]
    RegisterPacking {
        target: String,
        at: String,
        slots: u64,
        per_register: u32,
    },
    /// Any other inconsistency, with the reason.
    #[error("target `{target}`: {at}: {reason}")]
    Inconsistent {
        target: String,
        at: String,
        reason: String,
    },
}

impl TargetDescription {
    /// Checks the description; see the module documentation for the rules.
    pub fn validate(&self) -> Result<(), TargetError> {
        Checker { target: self }.run()
    }
}

struct Checker<'a> {
    target: &'a TargetDescription,
}

impl Checker<'_> {
    fn name(&self) -> String {
        self.target.name.clone()
    }

    fn inconsistent(&self, at: impl Into<String>, reason: impl Into<String>) -> TargetError {
        TargetError::Inconsistent {
            target: self.name(),
            at: at.into(),
            reason: reason.into(),
        }
    }

    fn nonzero(&self, at: impl Into<String>, value: u64) -> Result<(), TargetError> {
        if value == 0 {
            return Err(TargetError::Zero {
                target: self.name(),
                at: at.into(),
            });
        }
        Ok(())
    }

    fn power_of_two(&self, at: impl Into<String>, value: u64) -> Result<(), TargetError> {
        if !value.is_power_of_two() {
            return Err(TargetError::NotPowerOfTwo {
                target: self.name(),
                at: at.into(),
                value,
            });
        }
        Ok(())
    }

    fn unique<'n>(
        &self,
        what: &'static str,
        names: impl Iterator<Item = &'n str>,
    ) -> Result<(), TargetError> {
        let mut seen = HashSet::new();
        for name in names {
            if name.is_empty() {
                return Err(self.inconsistent(what, "an entry has an empty name"));
            }
            if !seen.insert(name) {
                return Err(TargetError::Duplicate {
                    target: self.name(),
                    what,
                    name: name.to_string(),
                });
            }
        }
        Ok(())
    }

    fn space(&self, at: &str, space: &str) -> Result<(), TargetError> {
        if self.target.memory_space(space).is_none() {
            return Err(TargetError::UnknownMemorySpace {
                target: self.name(),
                at: at.to_string(),
                space: space.to_string(),
            });
        }
        Ok(())
    }

    fn provenance(&self, at: &str, provenance: &Provenance) -> Result<(), TargetError> {
        if provenance.sources.is_empty() {
            return Err(TargetError::NoSources {
                target: self.name(),
                at: at.to_string(),
            });
        }
        for id in &provenance.sources {
            if self.target.source(id).is_none() {
                return Err(TargetError::UnknownSource {
                    target: self.name(),
                    at: at.to_string(),
                    source_id: id.clone(),
                });
            }
        }
        Ok(())
    }

    fn run(&self) -> Result<(), TargetError> {
        let t = self.target;
        if t.format_version != super::FORMAT_VERSION {
            return Err(TargetError::FormatVersion {
                found: t.format_version,
                supported: super::FORMAT_VERSION,
            });
        }
        if t.name.is_empty() || t.arch.is_empty() {
            return Err(self.inconsistent("name", "name and arch must not be empty"));
        }
        self.unique("sources", t.sources.iter().map(|s| s.id.as_str()))?;
        if let Some(d) = t
            .dtypes
            .iter()
            .find(|d| crate::ir::DType::from_tilelang_name(d).is_none())
        {
            return Err(self.inconsistent(
                "dtypes",
                format!("`{d}` is not a TileLang dtype name (`float16`, `int8`, ...)"),
            ));
        }
        self.execution()?;
        self.limits()?;
        self.memory()?;
        self.unique(
            "matrix atoms",
            t.matrix_atoms.iter().map(|a| a.name.as_str()),
        )?;
        for atom in &t.matrix_atoms {
            self.atom(atom)?;
        }
        self.unique(
            "matrix loads",
            t.matrix_loads.iter().map(|l| l.name.as_str()),
        )?;
        for load in &t.matrix_loads {
            self.matrix_load(&format!("matrix_loads[{}]", load.name), load)?;
        }
        self.unique(
            "matrix stores",
            t.matrix_stores.iter().map(|s| s.name.as_str()),
        )?;
        for store in &t.matrix_stores {
            self.matrix_load(&format!("matrix_stores[{}]", store.name), &store.as_load())?;
        }
        self.unique("barriers", t.barriers.iter().map(Barrier::name))?;
        for barrier in &t.barriers {
            self.barrier(barrier)?;
        }
        self.unique("async copies", t.async_copies.iter().map(AsyncCopy::name))?;
        for copy in &t.async_copies {
            self.copy(copy)?;
        }
        self.unique("parts", t.parts.iter().map(|p| p.device.as_str()))?;
        for part in &t.parts {
            let at = format!("parts[{}]", part.device);
            if let Some(d) = part
                .matrix_gflops
                .keys()
                .find(|d| crate::ir::DType::from_tilelang_name(d).is_none())
            {
                return Err(self.inconsistent(
                    "parts",
                    format!("`{d}` in `{at}` is not a TileLang dtype name"),
                ));
            }
            self.provenance(&at, &part.provenance)?;
        }
        Ok(())
    }

    fn execution(&self) -> Result<(), TargetError> {
        match &self.target.execution {
            ExecutionModel::Simt { width, provenance } => {
                if ![32, 64, 128].contains(width) {
                    return Err(TargetError::SimtWidth {
                        target: self.name(),
                        width: *width,
                    });
                }
                self.provenance("execution", provenance)
            }
            ExecutionModel::TileEngine {
                units,
                cores,
                paths,
                matrix_tiles,
                events,
                provenance,
            } => {
                if units.is_empty() {
                    return Err(self
                        .inconsistent("execution.units", "a tile engine needs at least one unit"));
                }
                self.unique("engine units", units.iter().map(|u| u.name.as_str()))?;
                let unit = |name: &str| units.iter().any(|u| u.name == name);
                if let Some(cores) = cores {
                    self.nonzero("execution.cores", u64::from(*cores))?;
                }
                for (i, path) in paths.iter().enumerate() {
                    let at = format!("execution.paths[{i}]");
                    if path.from.is_empty() {
                        return Err(self.inconsistent(&at, "a path needs a source space"));
                    }
                    for space in path.from.iter().chain(std::iter::once(&path.to)) {
                        self.space(&at, space)?;
                    }
                    if !unit(&path.unit) {
                        return Err(self.inconsistent(
                            &at,
                            format!("unit `{}` is not one of the engine's units", path.unit),
                        ));
                    }
                    for conversion in &path.conversions {
                        if conversion.split_once("->").is_none() {
                            return Err(self.inconsistent(
                                &at,
                                format!("conversion `{conversion}` is not `source->destination`"),
                            ));
                        }
                    }
                }
                for (i, tile) in matrix_tiles.iter().enumerate() {
                    let at = format!("execution.matrix_tiles[{i}]");
                    for (name, value) in [("m", tile.m), ("n", tile.n), ("k", tile.k)] {
                        self.nonzero(format!("{at}.{name}"), u64::from(value))?;
                    }
                }
                if let Some(events) = events {
                    self.nonzero("execution.events.ids", u64::from(events.ids))?;
                    for pair in &events.pairs {
                        let known = pair
                            .split_once('_')
                            .is_some_and(|(src, dst)| unit(src) && unit(dst) && src != dst);
                        if !known {
                            return Err(self.inconsistent(
                                "execution.events.pairs",
                                format!("`{pair}` is not SOURCE_DESTINATION of two engine units"),
                            ));
                        }
                    }
                }
                self.provenance("execution", provenance)
            }
        }
    }

    fn limits(&self) -> Result<(), TargetError> {
        let t = self.target;
        if let Some(max) = t.threads_per_block.max_per_block {
            self.nonzero("threads_per_block.max_per_block", u64::from(max))?;
            if let Some(width) = t.simt_width()
                && !max.is_multiple_of(width)
            {
                return Err(self.inconsistent(
                    "threads_per_block.max_per_block",
                    format!("{max} is not a multiple of the SIMT width {width}"),
                ));
            }
        }
        if let Some(p) = &t.threads_per_block.provenance {
            self.provenance("threads_per_block", p)?;
        }
        let registers = &t.registers;
        if let Some(n) = registers.per_thread {
            self.nonzero("registers.per_thread", u64::from(n))?;
        }
        if let Some(n) = registers.per_block {
            self.nonzero("registers.per_block", u64::from(n))?;
        }
        if let (Some(thread), Some(block)) = (registers.per_thread, registers.per_block)
            && thread > block
        {
            return Err(self.inconsistent("registers", "per_thread exceeds per_block"));
        }
        if let Some(realloc) = &registers.reallocation {
            self.nonzero("registers.reallocation.step", u64::from(realloc.step))?;
            if realloc.min_per_thread > realloc.max_per_thread {
                return Err(self.inconsistent("registers.reallocation", "min exceeds max"));
            }
            self.provenance("registers.reallocation", &realloc.provenance)?;
        }
        if let Some(p) = &registers.provenance {
            self.provenance("registers", p)?;
        }
        let widths = &t.vector_widths;
        for (at, value) in [
            ("vector_widths.global_bytes", widths.global_bytes),
            ("vector_widths.shared_bytes", widths.shared_bytes),
        ] {
            if let Some(value) = value {
                self.power_of_two(at, u64::from(value))?;
            }
        }
        if let Some(p) = &widths.provenance {
            self.provenance("vector_widths", p)?;
        }
        Ok(())
    }

    fn memory(&self) -> Result<(), TargetError> {
        let t = self.target;
        self.unique(
            "memory spaces",
            t.memory_spaces.iter().map(|s| s.name.as_str()),
        )?;
        for space in &t.memory_spaces {
            let at = format!("memory_spaces[{}]", space.name);
            if let Some(capacity) = space.capacity_bytes {
                self.nonzero(format!("{at}.capacity_bytes"), capacity)?;
            }
            if let Some(default) = space.default_capacity_bytes {
                self.nonzero(format!("{at}.default_capacity_bytes"), default)?;
                if space
                    .capacity_bytes
                    .is_some_and(|capacity| default > capacity)
                {
                    return Err(self.inconsistent(&at, "default capacity exceeds capacity"));
                }
            }
            if let Some(granularity) = space.allocation_granularity_bytes {
                self.nonzero(format!("{at}.allocation_granularity_bytes"), granularity)?;
            }
            if let Some(alignment) = space.alignment_bytes {
                self.power_of_two(format!("{at}.alignment_bytes"), alignment)?;
            }
            if let Some(banks) = &space.banks {
                self.nonzero(format!("{at}.banks.count"), u64::from(banks.count))?;
                self.power_of_two(
                    format!("{at}.banks.width_bytes"),
                    u64::from(banks.width_bytes),
                )?;
                for phase in &banks.phases {
                    self.nonzero(
                        format!("{at}.banks.phases.access_bytes"),
                        u64::from(phase.access_bytes),
                    )?;
                    self.nonzero(
                        format!("{at}.banks.phases.lanes_per_phase"),
                        u64::from(phase.lanes_per_phase),
                    )?;
                }
                self.provenance(&format!("{at}.banks"), &banks.provenance)?;
            }
            self.provenance(&at, &space.provenance)?;
        }
        Ok(())
    }

    fn atom(&self, atom: &MatrixAtom) -> Result<(), TargetError> {
        let at = format!("matrix_atoms[{}]", atom.name);
        let shape = atom.shape;
        for (field, value) in [("m", shape.m), ("n", shape.n), ("k", shape.k)] {
            self.nonzero(format!("{at}.shape.{field}"), u64::from(value))?;
        }
        if atom.types.is_empty() {
            return Err(self.inconsistent(&at, "no operand types listed"));
        }
        if let Some(family) = atom.n_family {
            self.nonzero(format!("{at}.n_family.step"), u64::from(family.step))?;
            if family.max < shape.n
                || !family.max.is_multiple_of(family.step)
                || !shape.n.is_multiple_of(family.step)
            {
                return Err(self.inconsistent(
                    format!("{at}.n_family"),
                    "max must be a multiple of step, at least shape.n, and shape.n a multiple of step",
                ));
            }
        }
        self.issue(atom)?;
        for role in [OperandRole::A, OperandRole::B, OperandRole::Accumulator] {
            self.operand(atom, role, &at)?;
        }
        if atom.accumulator.sources != [OperandSource::Registers] {
            return Err(TargetError::OperandSources {
                target: self.name(),
                at: format!("{at}.accumulator"),
                reason: "the accumulator must live in registers only".to_string(),
            });
        }
        let uses_descriptor = [&atom.a, &atom.b]
            .iter()
            .any(|operand| operand.sources.contains(&OperandSource::SharedDescriptor));
        match (&atom.descriptor, uses_descriptor) {
            (None, true) => {
                return Err(self.inconsistent(
                    &at,
                    "an operand is read through a descriptor, but no descriptor is described",
                ));
            }
            (Some(descriptor), _) => {
                self.nonzero(format!("{at}.descriptor.bits"), u64::from(descriptor.bits))?;
                self.power_of_two(
                    format!("{at}.descriptor.address_alignment_bytes"),
                    u64::from(descriptor.address_alignment_bytes),
                )?;
                self.provenance(&format!("{at}.descriptor"), &descriptor.provenance)?;
            }
            (None, false) => {}
        }
        self.provenance(&at, &atom.provenance)?;
        self.provenance(&format!("{at}.layout_provenance"), &atom.layout_provenance)?;
        Ok(())
    }

    fn issue(&self, atom: &MatrixAtom) -> Result<(), TargetError> {
        let Some(width) = self.target.simt_width() else {
            return Ok(());
        };
        let threads = atom.issue.threads;
        let fits = match atom.issue.granularity {
            IssueGranularity::Warp | IssueGranularity::Wavefront | IssueGranularity::Simdgroup => {
                threads == width
            }
            IssueGranularity::Warpgroup => threads > width && threads.is_multiple_of(width),
        };
        if !fits {
            return Err(TargetError::IssueThreads {
                target: self.name(),
                atom: atom.name.clone(),
                granularity: atom.issue.granularity,
                threads,
                width,
            });
        }
        Ok(())
    }

    fn operand(&self, atom: &MatrixAtom, role: OperandRole, at: &str) -> Result<(), TargetError> {
        let operand = atom.operand(role);
        let at = format!("{at}.{}", role.name());
        let sources_error = |reason: &str| TargetError::OperandSources {
            target: self.name(),
            at: at.clone(),
            reason: reason.to_string(),
        };
        if operand.sources.is_empty() {
            return Err(sources_error("no operand source listed"));
        }
        let in_registers = operand.sources.contains(&OperandSource::Registers);
        match (in_registers, operand.fragment.is_some()) {
            (true, false) => {
                return Err(sources_error(
                    "read from registers but has no fragment layout",
                ));
            }
            (false, true) => {
                return Err(sources_error(
                    "has a fragment layout but is never in registers",
                ));
            }
            _ => {}
        }
        if let Some(per_register) = operand.elements_per_register {
            self.nonzero(
                format!("{at}.elements_per_register"),
                u64::from(per_register),
            )?;
        }
        if !in_registers {
            return Ok(());
        }
        for n in atom.supported_n() {
            let fragment_at = if atom.n_family.is_some() {
                format!("{at} (n = {n})")
            } else {
                at.clone()
            };
            let fragment = atom
                .fragment_for_n(role, n)
                .map_err(|source| TargetError::Fragment {
                    target: self.name(),
                    at: fragment_at.clone(),
                    source,
                })?
                .ok_or_else(|| sources_error("missing fragment"))?;
            self.fragment(&fragment_at, &fragment, u64::from(atom.issue.threads))?;
            if let Some(per_register) = operand.elements_per_register
                && !fragment.slots().is_multiple_of(u64::from(per_register))
            {
                return Err(TargetError::RegisterPacking {
                    target: self.name(),
                    at: fragment_at,
                    slots: fragment.slots(),
                    per_register,
                });
            }
            if role == OperandRole::A {
                break;
            }
        }
        Ok(())
    }

    fn fragment(
        &self,
        at: &str,
        fragment: &FragmentLayout,
        threads: u64,
    ) -> Result<(), TargetError> {
        if fragment.threads() != threads {
            return Err(TargetError::FragmentThreads {
                target: self.name(),
                at: at.to_string(),
                found: fragment.threads(),
                expected: threads,
            });
        }
        fragment.check().map_err(|source| TargetError::Fragment {
            target: self.name(),
            at: at.to_string(),
            source,
        })
    }

    /// A matrix load, or a store seen as one ([`MatrixStore::as_load`]),
    /// described at `at`.
    fn matrix_load(&self, at: &str, load: &MatrixLoad) -> Result<(), TargetError> {
        self.space(at, &load.from)?;
        for (field, value) in [
            ("rows", load.rows),
            ("row_bytes", load.row_bytes),
            ("element_bits", load.element_bits),
        ] {
            self.nonzero(format!("{at}.{field}"), u64::from(value))?;
        }
        if load.counts.is_empty() || load.counts.contains(&0) {
            return Err(self.inconsistent(at, "counts must be a nonempty list of positive numbers"));
        }
        self.power_of_two(
            format!("{at}.row_alignment_bytes"),
            u64::from(load.row_alignment_bytes),
        )?;
        let threads = u64::from(self.target.simt_width().unwrap_or(0));
        for transposed in [false, true] {
            let fragment_at = if transposed {
                format!("{at}.transposed_fragment")
            } else {
                format!("{at}.fragment")
            };
            let fragment = load
                .fragment(transposed)
                .map_err(|source| TargetError::Fragment {
                    target: self.name(),
                    at: fragment_at.clone(),
                    source,
                })?;
            if let Some(fragment) = fragment {
                self.fragment(&fragment_at, &fragment, threads)?;
            }
        }
        self.provenance(at, &load.provenance)
    }

    fn copy(&self, copy: &AsyncCopy) -> Result<(), TargetError> {
        let at = format!("async_copies[{}]", copy.name());
        match copy {
            AsyncCopy::PerThread(c) => {
                self.space(&at, &c.from)?;
                self.space(&at, &c.to)?;
                if c.sizes_bytes.is_empty() {
                    return Err(self.inconsistent(&at, "no copy sizes listed"));
                }
                for &size in &c.sizes_bytes {
                    self.power_of_two(format!("{at}.sizes_bytes"), u64::from(size))?;
                }
                if c.commit_groups
                    && (c.commit_instruction.is_none() || c.wait_instruction.is_none())
                {
                    return Err(self
                        .inconsistent(&at, "commit groups need a commit and a wait instruction"));
                }
                self.provenance(&at, &c.provenance)
            }
            AsyncCopy::BulkTensor(c) => {
                self.space(&at, &c.from)?;
                self.space(&at, &c.to)?;
                if c.min_rank == 0 || c.min_rank > c.max_rank {
                    return Err(
                        self.inconsistent(&at, "ranks must satisfy 1 <= min_rank <= max_rank")
                    );
                }
                self.nonzero(format!("{at}.max_box_extent"), u64::from(c.max_box_extent))?;
                if c.swizzle_modes.is_empty() {
                    return Err(self.inconsistent(
                        &at,
                        "no swizzle modes listed (list `none` for plain copies)",
                    ));
                }
                for (field, value) in [
                    ("inner_box_multiple_bytes", c.inner_box_multiple_bytes),
                    (
                        "global_address_alignment_bytes",
                        c.global_address_alignment_bytes,
                    ),
                    (
                        "global_stride_multiple_bytes",
                        c.global_stride_multiple_bytes,
                    ),
                    ("descriptor_alignment_bytes", c.descriptor_alignment_bytes),
                    ("shared_alignment_bytes", c.shared_alignment_bytes),
                    (
                        "swizzled_shared_alignment_bytes",
                        c.swizzled_shared_alignment_bytes,
                    ),
                ] {
                    if let Some(value) = value {
                        self.power_of_two(format!("{at}.{field}"), u64::from(value))?;
                    }
                }
                match self.target.barrier(&c.completion_barrier) {
                    None => {
                        return Err(TargetError::UnknownBarrier {
                            target: self.name(),
                            at: at.clone(),
                            barrier: c.completion_barrier.clone(),
                        });
                    }
                    Some(Barrier::Phased(barrier)) if barrier.transactions.is_some() => {}
                    Some(_) => {
                        return Err(self.inconsistent(
                            &at,
                            format!(
                                "completion barrier `{}` has no transaction counter",
                                c.completion_barrier
                            ),
                        ));
                    }
                }
                self.provenance(&at, &c.provenance)
            }
        }
    }

    fn barrier(&self, barrier: &Barrier) -> Result<(), TargetError> {
        let at = format!("barriers[{}]", barrier.name());
        match barrier {
            Barrier::Block(b) => self.provenance(&at, &b.provenance),
            Barrier::Phased(b) => {
                self.space(&at, &b.space)?;
                self.nonzero(format!("{at}.object_bytes"), u64::from(b.object_bytes))?;
                self.power_of_two(
                    format!("{at}.alignment_bytes"),
                    u64::from(b.alignment_bytes),
                )?;
                self.nonzero(format!("{at}.max_arrival_count"), b.max_arrival_count)?;
                if let Some(tx) = &b.transactions {
                    self.nonzero(
                        format!("{at}.transactions.max_pending_bytes"),
                        tx.max_pending_bytes,
                    )?;
                    self.provenance(&format!("{at}.transactions"), &tx.provenance)?;
                }
                self.provenance(&at, &b.provenance)
            }
            Barrier::Named(b) => {
                self.nonzero(format!("{at}.ids"), u64::from(b.ids))?;
                self.nonzero(format!("{at}.count_multiple"), u64::from(b.count_multiple))?;
                self.provenance(&at, &b.provenance)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ExecutionModel, TargetDescription};

    const ASCEND: &str = include_str!("../../targets/ascend910b.json");

    fn edited(edit: impl Fn(&mut serde_json::Value)) -> Result<TargetDescription, String> {
        let mut v: serde_json::Value = serde_json::from_str(ASCEND).map_err(|e| e.to_string())?;
        edit(&mut v);
        TargetDescription::from_json(&v.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_tile_engine_description_loads() {
        let t = edited(|_| {}).unwrap_or_else(|e| panic!("{e}"));
        let ExecutionModel::TileEngine {
            cores,
            paths,
            events,
            ..
        } = &t.execution
        else {
            panic!("not a tile engine");
        };
        assert_eq!(*cores, Some(24));
        assert!(paths.iter().any(|p| p.unit == "MTE2" && p.to == "L1"));
        assert_eq!(events.as_ref().map(|e| e.ids), Some(8));
        assert_eq!(
            t.memory_space("L0A").and_then(|s| s.alignment_bytes),
            Some(512)
        );
    }

    #[test]
    fn a_tile_engine_with_units_only_still_loads() {
        let t = edited(|v| {
            for key in ["cores", "paths", "matrix_tiles", "events"] {
                v["execution"].as_object_mut().map(|o| o.remove(key));
            }
        });
        assert!(t.is_ok(), "{t:?}");
    }

    #[test]
    fn tile_engine_references_are_checked() {
        let bad_space = edited(|v| v["execution"]["paths"][0]["to"] = "L2".into());
        assert!(
            bad_space
                .as_ref()
                .err()
                .is_some_and(|e| e.contains("memory space `L2`")),
            "{bad_space:?}"
        );
        let bad_pair = edited(|v| v["execution"]["events"]["pairs"][0] = "MTE2_DMA".into());
        assert!(
            bad_pair
                .as_ref()
                .err()
                .is_some_and(|e| e.contains("MTE2_DMA")),
            "{bad_pair:?}"
        );
        let no_cores = edited(|v| v["execution"]["cores"] = 0.into());
        assert!(
            no_cores
                .as_ref()
                .err()
                .is_some_and(|e| e.contains("execution.cores")),
            "{no_cores:?}"
        );
    }
}
