//! The worker process: runs a batch of tests against a backend and
//! reports each result, so that a backend that crashes or hangs takes down
//! only the worker (see `supervisor`).
//!
//! # Protocol
//!
//! The supervisor writes one [`Job`] as a JSON line to the worker's
//! standard input. The worker answers on a private channel with one
//! [`Message`] per line, each line starting with [`MARK`]: first
//! [`Message::Hello`] (or [`Message::LoadFailed`]), then
//! [`Message::Start`] and [`Message::Record`] for each test in the job's
//! order, then [`Message::Done`].
//!
//! The channel is the pipe the worker is started with as its standard
//! output, but the worker moves it aside before it loads any backend
//! ([`private_channel`]): it keeps a private copy of the pipe and points
//! its file descriptor 1 at its standard error. So whatever a plugin prints
//! — to standard output or standard error — lands in the worker's log (the
//! supervisor keeps its tail for crash messages), never among the records:
//! a plugin that prints protocol lines and then aborts is a `Crash`, not a
//! `Pass`. (Code running inside the worker could still find and write to
//! the private descriptor on purpose; what this stops is a plugin's output
//! being taken for the worker's.)

use crate::backend::{Backend, Plugin, Reference, Sim};
use crate::corpus::{self, Case};
use crate::exec::{Context, run_test};
use crate::plan::{PlannedTest, all_needs};
use crate::result::TestRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use tilec_plugin_api::{CompileOptions, DeviceInfo, PluginInfo, TargetDescription};

/// The prefix of every protocol line on the worker's standard output.
pub const MARK: &str = "\u{1}tilec-worker ";

/// Which backend to test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BackendSpec {
    /// The built-in reference backend.
    Reference,
    /// The built-in SIMT backend for a shipped target description.
    Sim { target: String },
    /// A plugin library, and the target to test (its default when `None`).
    Plugin {
        path: PathBuf,
        target: Option<String>,
    },
}

/// The work of one worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub backend: BackendSpec,
    /// The corpus directory.
    pub corpus: PathBuf,
    pub tests: Vec<PlannedTest>,
    pub fast_math: bool,
    /// The compile option `emit` (empty: the backend's default).
    #[serde(default)]
    pub emit: String,
    /// Further compile options (`CompileOptions::extra`), such as
    /// `tilec.fp-contract`.
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

/// What the backend says about itself, reported once per worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub backend: String,
    pub plugin: Option<PluginInfo>,
    /// The plugin's ABI version.
    pub abi: Option<String>,
    pub target: TargetDescription,
    /// The device kernels run on, or why there is none.
    pub device: Result<DeviceInfo, String>,
}

/// One line from the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    Hello(Box<Identity>),
    /// The backend could not be set up; no test ran.
    LoadFailed(String),
    Start(String),
    Record(TestRecord),
    Done,
}

/// Why the worker could not serve.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot read the job: {0}")]
    Input(std::io::Error),
    #[error("malformed job: {0}")]
    Job(serde_json::Error),
    #[error("cannot write to the supervisor: {0}")]
    Output(std::io::Error),
    #[error("cannot set up the private channel to the supervisor: {0}")]
    Channel(std::io::Error),
}

/// Takes the worker's standard output as the private channel to the
/// supervisor: returns a copy of it (close-on-exec, so that a program a
/// plugin starts does not hold it) and points file descriptor 1 at
/// standard error, so that nothing printed afterwards in this process
/// reaches the channel. Call it before any backend is loaded.
#[cfg(unix)]
pub fn private_channel() -> Result<std::fs::File, WorkerError> {
    use std::os::fd::AsFd as _;
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    lock.flush().map_err(WorkerError::Channel)?;
    let channel = lock
        .as_fd()
        .try_clone_to_owned()
        .map_err(WorkerError::Channel)?;
    rustix::stdio::dup2_stdout(std::io::stderr()).map_err(|e| WorkerError::Channel(e.into()))?;
    Ok(std::fs::File::from(channel))
}

fn send(out: &mut impl Write, message: &Message) -> Result<(), WorkerError> {
    let json = serde_json::to_string(message)
        .map_err(|e| WorkerError::Output(std::io::Error::other(e)))?;
    writeln!(out, "{MARK}{json}").map_err(WorkerError::Output)?;
    out.flush().map_err(WorkerError::Output)
}

/// Reads a job from `input` and serves it on `output`.
pub fn serve(input: impl BufRead, mut output: impl Write) -> Result<(), WorkerError> {
    let mut line = String::new();
    let mut input = input;
    input.read_line(&mut line).map_err(WorkerError::Input)?;
    let job: Job = serde_json::from_str(&line).map_err(WorkerError::Job)?;

    let cases: Vec<Case> = match corpus::load(&job.corpus) {
        Ok(c) => c,
        Err(e) => return send(&mut output, &Message::LoadFailed(e.to_string())),
    };
    let by_id: BTreeMap<String, Case> = cases.iter().map(|c| (c.id.clone(), c.clone())).collect();
    let reference;
    let sim;
    let plugin;
    let (backend, plugin_ref): (&dyn Backend, Option<&Plugin>) = match &job.backend {
        BackendSpec::Reference => match Reference::new(all_needs(&cases)) {
            Ok(r) => {
                reference = r;
                (&reference, None)
            }
            Err(e) => return send(&mut output, &Message::LoadFailed(e)),
        },
        BackendSpec::Sim { target } => match Sim::new(target) {
            Ok(s) => {
                sim = s;
                (&sim, None)
            }
            Err(e) => return send(&mut output, &Message::LoadFailed(e)),
        },
        BackendSpec::Plugin { path, target } => match Plugin::load(path, target.as_deref()) {
            Ok(p) => {
                plugin = p;
                (&plugin, Some(&plugin))
            }
            Err(e) => return send(&mut output, &Message::LoadFailed(e)),
        },
    };
    let identity = Identity {
        backend: backend.name().to_string(),
        plugin: backend.plugin_info().cloned(),
        abi: plugin_ref.map(|p| p.loaded().abi.to_string()),
        target: backend.target().clone(),
        device: backend.device(),
    };
    send(&mut output, &Message::Hello(Box::new(identity)))?;
    let ctx = Context {
        backend,
        plugin: plugin_ref,
        cases: &by_id,
        options: CompileOptions {
            fast_math: job.fast_math,
            emit: job.emit.clone(),
            extra: job.extra.clone(),
        },
    };
    for test in &job.tests {
        send(&mut output, &Message::Start(test.id.clone()))?;
        let record = run_test(&ctx, test);
        send(&mut output, &Message::Record(record))?;
    }
    send(&mut output, &Message::Done)
}

/// Parses one line of worker output: `None` for lines that are not
/// protocol lines.
pub fn parse_line(line: &str) -> Option<Result<Message, serde_json::Error>> {
    line.strip_prefix(MARK).map(serde_json::from_str)
}
