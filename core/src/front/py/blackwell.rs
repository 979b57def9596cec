//! What an unsupported `T.<name>` of TileLang's Blackwell (sm_100)
//! vocabulary or of its narrow float types needs, for the note of the
//! T0300 that refuses it.

/// The note for unsupported `T.<name>`, when it belongs to a family
/// tilec has not got yet.
pub(super) fn unsupported_note(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix("T.").unwrap_or(name);
    if name.starts_with("tcgen05") || name.contains("tmem") {
        return Some(
            "needs sm_100 (Blackwell) support: tilec has no tensor-memory (TMEM) scope and no \
             tcgen05 lowering yet (docs/tilelang-support.md)",
        );
    }
    if name.starts_with("float4_") || name.starts_with("float6_") || name.starts_with("float8_e8m0")
    {
        return Some(
            "fp4, fp6 and e8m0 element types are not supported yet: tilec's element types are \
             the integers, bool, f16, bf16, f32, f64 and the fp8 types e4m3fn and e5m2",
        );
    }
    None
}
