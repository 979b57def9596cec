//! `tilec-core`: the hardware-agnostic core of the tilec compiler.
//!
//! Data flows `front` (TileLang `.py` → Tile IR) → `ir::verify` → passes →
//! plugins. `text` prints and parses the IR's textual form; `interp` is the
//! reference interpreter every backend is checked against.
//!
//! This crate never prints: it returns typed errors and diagnostics that the
//! `tilec` command line renders.

pub mod front;
pub mod interp;
pub mod ir;
pub mod layout;
pub mod lower;
pub mod passes;
pub mod simt;
pub mod target;
pub mod text;
pub mod thread;
pub mod verify;
