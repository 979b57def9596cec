//! The targets this backend serves, as [`TargetDescription`]s.
//!
//! A target description is what tilec's passes may assume about the
//! hardware: how threads execute, the block size limit, the memory spaces
//! and their capacities, the dtypes it computes with. Record in `sources`
//! where each fact comes from (a programming guide, a header of the vendor
//! toolkit) so that a reviewer can check it.
//!
//! To add a target: add its name to [`TARGETS`], a function building its
//! description, and a line in [`describe`].

use tilec_plugin_api::{ErrorCode, PluginError, TargetDescription};

/// The one target of the template: a made-up SIMT machine whose "code" is
/// a listing of the Tile IR.
pub const LISTING: &str = "listing";

/// Every target name, in the order `tilec plugins` shows them.
pub const TARGETS: &[&str] = &[LISTING];

/// The description of `listing`, as data. A real backend ships one file
/// per target the same way; `docs/targets.md` in tilec describes the
/// format.
const LISTING_JSON: &str = include_str!("../targets/listing.json");

/// The description of `arch`, or `UnknownTarget`.
pub fn describe(arch: &str) -> Result<TargetDescription, PluginError> {
    let json = match arch {
        LISTING => LISTING_JSON,
        other => {
            return Err(PluginError::new(
                ErrorCode::UnknownTarget,
                format!(
                    "target `{other}` is not served by this backend (targets: {})",
                    TARGETS.join(", ")
                ),
            ));
        }
    };
    // The file is validated by the tests below; a broken one is this
    // plugin's bug, reported as such rather than a panic.
    TargetDescription::from_json(json).map_err(|e| {
        PluginError::new(
            ErrorCode::Internal,
            format!("the description of `{arch}` is invalid: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_is_simt_32_with_shared_memory() {
        let t = describe(LISTING).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(t.simt_width(), Some(32));
        assert!(t.memory_space("shared").is_some());
        assert_eq!(t.sources.len(), 1);
        assert!(!t.dtypes.iter().any(|d| d.starts_with("float8")));
    }

    #[test]
    fn unknown_targets_are_refused() {
        let e = describe("sm_90a").err();
        assert_eq!(e.map(|e| e.code), Some(ErrorCode::UnknownTarget));
    }
}
