//! `tilec-conformance`: the suite vendors run before releasing a backend.
//!
//! - [`corpus`]: our own TileLang kernels with parameter grids, expanded
//!   into test cases with stable hierarchical ids
//!   (`tilec.l2.gemm.nt.f16_f32.m257n129k77`) and seeds derived from the ids;
//! - [`tolerance`]: how close a result must be to the reference
//!   interpreter's, by op class (bit-exact, ULP bounds, accumulation bounds);
//! - [`result`]: result codes and per-test records;
//! - [`report`]: `results.jsonl`, `summary.json` and JUnit XML.
//!
//! The runner that drives a backend through the levels L0–L4 builds on
//! these; see `docs/conformance.md`.

pub mod corpus;
pub mod report;
pub mod result;
pub mod tolerance;
