//! `tilec-conformance`: the suite vendors run before releasing a backend.
//!
//! - [`corpus`]: our own TileLang kernels with parameter grids, expanded
//!   into test cases with stable hierarchical ids
//!   (`tilec.l2.gemm.nt.f16_f32.m257n129k77`) and seeds derived from the ids;
//! - [`inputs`]: seeded test inputs, with special values where a case asks;
//! - [`tolerance`]: how close a result must be to the reference
//!   interpreter's, by op class (bit-exact, ULP bounds, accumulation bounds);
//! - [`plan`]: which tests a run consists of, and which are `NotSupported`
//!   by the target's claims;
//! - [`backend`]: the reference backend and plugins behind one interface;
//! - [`exec`]: running one test (in a worker process);
//! - [`binary`]: L1's checks of the code objects a backend returns against
//!   the target's limits, read as `tilec inspect` reads them;
//! - [`worker`] and [`supervisor`]: worker processes, so that a crash or a
//!   hang is recorded and the run goes on;
//! - [`result`]: result codes, per-test records and the summary;
//! - [`report`]: `results.jsonl`, `summary.json`, JUnit XML and the
//!   terminal table.
//!
//! The `tilec conformance` command drives these; see `docs/conformance.md`.

pub mod backend;
pub mod binary;
pub mod corpus;
pub mod exec;
pub mod inputs;
pub mod plan;
pub mod report;
pub mod result;
pub mod supervisor;
pub mod tolerance;
pub mod worker;
