//! The plugin's target: the Ascend 910B (Atlas A2, `dav-c220`) AI core,
//! described as a tile engine in `core/targets/ascend910b.json` (sizes,
//! alignments, fractal formats, data paths, pipes and events, each with its
//! source). The emitter reads capacities, alignments, the core count and
//! the event pairs from it; nothing about the hardware is hard-coded
//! elsewhere except the AscendC spellings.

use tilec_core::target::{ExecutionModel, MemorySpace, TargetDescription};
use tilec_plugin_api::{ErrorCode, PluginError};

/// Every target, in the order `tilec plugins` lists them.
pub const TARGETS: [&str; 1] = ["ascend910b"];

/// The target a kernel compiles for when none is named.
pub const DEFAULT_TARGET: &str = "ascend910b";

const ASCEND910B: &str = include_str!("../../../core/targets/ascend910b.json");

/// The description of `arch`.
pub fn describe(arch: &str) -> Result<TargetDescription, PluginError> {
    match arch {
        "ascend910b" => TargetDescription::from_json(ASCEND910B).map_err(|e| {
            PluginError::new(
                ErrorCode::Internal,
                format!("the ascend910b description does not load: {e}"),
            )
        }),
        other => Err(PluginError::new(
            ErrorCode::UnknownTarget,
            format!(
                "the ascend backend has no target `{other}` (targets: {})",
                TARGETS.join(", ")
            ),
        )),
    }
}

/// The facts of a tile-engine description the emitter and the CPU model
/// use, checked to be present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Engine {
    pub ub: Space,
    pub l1: Space,
    pub l0a: Space,
    pub l0b: Space,
    pub l0c: Space,
    pub cores: u32,
    pub event_ids: u32,
    /// `SRC_DST` pairs with a flag.
    pub event_pairs: Vec<String>,
}

/// Capacity and alignment of one on-core buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub capacity: u64,
    pub alignment: u64,
}

impl Engine {
    /// Reads the engine facts of `target`; a description without them is
    /// not one this backend can compile for.
    pub fn of(target: &TargetDescription) -> Result<Engine, PluginError> {
        let missing = |what: &str| {
            PluginError::new(
                ErrorCode::Internal,
                format!("target `{}` does not describe {what}", target.name),
            )
        };
        let ExecutionModel::TileEngine { cores, events, .. } = &target.execution else {
            return Err(missing("a tile engine"));
        };
        let space = |name: &str| -> Result<Space, PluginError> {
            let s: &MemorySpace = target
                .memory_space(name)
                .ok_or_else(|| missing(&format!("memory space {name}")))?;
            Ok(Space {
                capacity: s
                    .capacity_bytes
                    .ok_or_else(|| missing(&format!("the capacity of {name}")))?,
                alignment: s.alignment_bytes.unwrap_or(32),
            })
        };
        let events = events.as_ref().ok_or_else(|| missing("its events"))?;
        Ok(Engine {
            ub: space("UB")?,
            l1: space("L1")?,
            l0a: space("L0A")?,
            l0b: space("L0B")?,
            l0c: space("L0C")?,
            cores: cores.ok_or_else(|| missing("its core count"))?,
            event_ids: events.ids,
            event_pairs: events.pairs.clone(),
        })
    }

    /// Whether a flag orders `src` before `dst`.
    pub fn has_event(&self, src: &str, dst: &str) -> bool {
        self.event_pairs
            .iter()
            .any(|p| p.split_once('_') == Some((src, dst)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_loads_with_its_engine_facts() {
        let t = describe("ascend910b").unwrap_or_else(|e| panic!("{}", e.message));
        let e = Engine::of(&t).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(e.ub.capacity, 192 * 1024);
        assert_eq!(e.l1.capacity, 512 * 1024);
        assert_eq!(e.l0a.capacity, 64 * 1024);
        assert_eq!(e.l0c.capacity, 128 * 1024);
        assert_eq!(e.l0a.alignment, 512);
        assert_eq!(e.cores, 24);
        assert!(e.has_event("MTE2", "V"));
        assert!(!e.has_event("V", "M"));
        assert_eq!(
            describe("ascend310").err().map(|e| e.code),
            Some(ErrorCode::UnknownTarget)
        );
    }

    #[test]
    fn a_path_through_an_unknown_unit_is_refused() {
        let bad = ASCEND910B.replacen("\"unit\": \"MTE1\"", "\"unit\": \"DMA\"", 1);
        let error = TargetDescription::from_json(&bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("unit `DMA`"), "{error}");
    }
}
