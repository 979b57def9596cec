//! `tilec-plugin-api`: the versioned interface between tilec and backend
//! plugins.
//!
//! A backend is a shared library that exports one `abi_stable` root module
//! ([`abi::Backend`]) of byte-level calls. What evolves — Tile IR, compile
//! options, target descriptions, kernel metadata, diagnostics — crosses as
//! versioned documents ([`document`], [`types`]), so the binary interface
//! stays small. Plugin authors implement [`BackendPlugin`] in safe Rust and
//! export it with [`export_backend!`]; the host loads plugins with
//! [`host::Registry`].
//!
//! Three versions are independent: the ABI ([`abi::ABI_VERSION`], this
//! crate's version), each document's format (the Tile IR format is
//! [`types::TILE_IR_FORMAT`]) and the plugin's own version.

pub mod abi;
pub mod document;
pub mod extent;
pub mod host;
pub mod simt;
pub mod types;

pub use abi::{ABI_VERSION, BackendPlugin};
pub use document::{Document, DocumentError, Encoding, Version};
pub use types::*;

/// Items the export macro needs; not part of the stable surface.
#[doc(hidden)]
pub mod reexports {
    pub use abi_stable::export_root_module;
}
