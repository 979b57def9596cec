//! Runs tests in worker processes, so that a backend that crashes or hangs
//! is recorded as `Crash` or `Timeout` and the run goes on.
//!
//! Tests are cut into batches (consecutive tests of one level and family,
//! at most [`BATCH`] of them); each batch runs in a fresh worker process
//! (see `worker` for the protocol). Every test has its own time limit,
//! counted from the moment the worker reports it started (the first also
//! pays for the worker's start-up). When the worker dies, the test it was
//! running is a `Crash` — the message gives the exit status and the last
//! lines the worker wrote to standard error — and a new worker takes the
//! rest of the batch; when a test runs out of time the worker is killed,
//! the test is a `Timeout`, and likewise. With `jobs > 1`, that many
//! batches run at once. Records come back in plan order whatever the
//! scheduling.

use crate::plan::PlannedTest;
use crate::result::{Outcome, TestRecord};
use crate::worker::{BackendSpec, Identity, Job, Message, parse_line};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most tests in one batch.
pub const BATCH: usize = 64;

/// How to start a worker: a program that runs
/// [`worker::serve`](crate::worker::serve) on its standard streams.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// Settings of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub backend: BackendSpec,
    pub corpus: PathBuf,
    /// Time limit of one test.
    pub timeout: Duration,
    /// Batches run at once.
    pub jobs: usize,
    pub fast_math: bool,
    /// The compile option `emit` of every compile (empty: the backend's
    /// default artifact).
    pub emit: String,
    /// Further compile options of every compile (`CompileOptions::extra`).
    pub extra: std::collections::BTreeMap<String, String>,
}

/// Why the backend could not even be described.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot start the worker `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("the backend could not be loaded: {0}")]
    Load(String),
    #[error("the worker died while loading the backend: {0}")]
    Crash(String),
    #[error("loading the backend took longer than {0:?}")]
    Timeout(Duration),
}

impl ProbeError {
    /// The outcome of the run's load check.
    pub fn outcome(&self) -> Outcome {
        match self {
            ProbeError::Spawn { .. } => Outcome::InternalError,
            ProbeError::Load(_) => Outcome::Fail,
            ProbeError::Crash(_) => Outcome::Crash,
            ProbeError::Timeout(_) => Outcome::Timeout,
        }
    }
}

/// A running worker.
struct Worker {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// Lines of standard error kept for crash messages.
const STDERR_TAIL: usize = 8;

impl Worker {
    fn start(cmd: &WorkerCommand, job: &Job) -> Result<Worker, ProbeError> {
        let spawn_error = |e: std::io::Error| ProbeError::Spawn {
            program: cmd.program.display().to_string(),
            reason: e.to_string(),
        };
        let mut child = Command::new(&cmd.program)
            .args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let json = serde_json::to_string(job).map_err(|e| ProbeError::Spawn {
            program: cmd.program.display().to_string(),
            reason: e.to_string(),
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            // A worker that dies at once closes the pipe; that shows up as
            // a crash when its output ends.
            let _ = writeln!(stdin, "{json}");
        }
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(err) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(mut t) = tail.lock() {
                        if t.len() == STDERR_TAIL {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                }
            });
        }
        Ok(Worker {
            child,
            lines,
            stderr,
        })
    }

    /// The next protocol message, or why there is none.
    fn next(&mut self, deadline: Instant) -> Result<Message, Ended> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => match parse_line(&line) {
                    None => continue,
                    Some(Ok(m)) => return Ok(m),
                    Some(Err(e)) => {
                        return Err(Ended::Garbled(format!("malformed worker message: {e}")));
                    }
                },
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(Ended::TimedOut);
                }
                Err(RecvTimeoutError::Disconnected) => return Err(Ended::Died(self.death())),
            }
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// How the worker ended, with the tail of its standard error.
    fn death(&mut self) -> String {
        let status = match self.child.wait() {
            Ok(s) => describe_status(s),
            Err(e) => format!("cannot wait for the worker: {e}"),
        };
        // Give the reader thread a moment to collect the last lines.
        std::thread::sleep(Duration::from_millis(20));
        let tail: Vec<String> = self
            .stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; stderr: {}", tail.join(" | "))
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How a worker stopped answering.
enum Ended {
    TimedOut,
    Died(String),
    Garbled(String),
}

#[cfg(unix)]
fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the worker exited with status {code}"),
        (None, Some(sig)) => {
            let name = match sig {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            format!("the worker was killed by signal {sig}{name}")
        }
        (None, None) => "the worker ended".to_string(),
    }
}

#[cfg(not(unix))]
fn describe_status(status: std::process::ExitStatus) -> String {
    format!("the worker ended: {status}")
}

/// Starts a worker with no tests to learn what the backend says about
/// itself (and whether it loads at all).
pub fn probe(cmd: &WorkerCommand, settings: &Settings) -> Result<Identity, ProbeError> {
    let job = Job {
        backend: settings.backend.clone(),
        corpus: settings.corpus.clone(),
        tests: Vec::new(),
        fast_math: settings.fast_math,
        emit: settings.emit.clone(),
        extra: settings.extra.clone(),
    };
    let mut worker = Worker::start(cmd, &job)?;
    match worker.next(Instant::now() + settings.timeout) {
        Ok(Message::Hello(identity)) => Ok(*identity),
        Ok(Message::LoadFailed(why)) => Err(ProbeError::Load(why)),
        Ok(_) => Err(ProbeError::Crash("unexpected first message".into())),
        Err(Ended::TimedOut) => Err(ProbeError::Timeout(settings.timeout)),
        Err(Ended::Died(why) | Ended::Garbled(why)) => Err(ProbeError::Crash(why)),
    }
}

fn record(test: &PlannedTest, outcome: Outcome, message: String, duration: Duration) -> TestRecord {
    TestRecord {
        id: test.id.clone(),
        level: test.level,
        outcome,
        duration_ms: duration.as_secs_f64() * 1e3,
        seed: test.seed,
        max_abs_err: None,
        max_ulp_err: None,
        message,
    }
}

/// Runs one batch, restarting the worker after a crash or timeout; sends
/// `(plan index, record)` for each test.
fn run_batch(
    cmd: &WorkerCommand,
    settings: &Settings,
    batch: &[(usize, PlannedTest)],
    out: &mpsc::Sender<(usize, TestRecord)>,
) {
    let mut next = 0;
    while next < batch.len() {
        let job = Job {
            backend: settings.backend.clone(),
            corpus: settings.corpus.clone(),
            tests: batch[next..].iter().map(|(_, t)| t.clone()).collect(),
            fast_math: settings.fast_math,
            emit: settings.emit.clone(),
            extra: settings.extra.clone(),
        };
        let mut worker = match Worker::start(cmd, &job) {
            Ok(w) => w,
            Err(e) => {
                for (i, t) in &batch[next..] {
                    let _ = out.send((
                        *i,
                        record(t, Outcome::InternalError, e.to_string(), Duration::ZERO),
                    ));
                }
                return;
            }
        };
        let mut started = Instant::now();
        let mut deadline = started + settings.timeout;
        while let Some((index, test)) = batch.get(next) {
            match worker.next(deadline) {
                Ok(Message::Hello(_) | Message::Done) => {}
                Ok(Message::Start(_)) => {
                    started = Instant::now();
                    deadline = started + settings.timeout;
                }
                Ok(Message::Record(r)) => {
                    let r = if r.id == test.id {
                        r
                    } else {
                        record(
                            test,
                            Outcome::InternalError,
                            format!("the worker answered for `{}` instead", r.id),
                            started.elapsed(),
                        )
                    };
                    let _ = out.send((*index, r));
                    next += 1;
                }
                Ok(Message::LoadFailed(why)) => {
                    for (i, t) in &batch[next..] {
                        let message = format!("the backend could not be loaded: {why}");
                        let _ = out.send((*i, record(t, Outcome::Fail, message, Duration::ZERO)));
                    }
                    return;
                }
                Err(ended) => {
                    let (outcome, message) = match ended {
                        Ended::TimedOut => (
                            Outcome::Timeout,
                            format!(
                                "no result within {:?}; the worker was killed",
                                settings.timeout
                            ),
                        ),
                        Ended::Died(why) => (Outcome::Crash, why),
                        Ended::Garbled(why) => (Outcome::Crash, why),
                    };
                    let _ = out.send((*index, record(test, outcome, message, started.elapsed())));
                    next += 1;
                    break;
                }
            }
        }
    }
}

/// Cuts `tests` into batches of one level and family.
fn batches(tests: Vec<(usize, PlannedTest)>) -> VecDeque<Vec<(usize, PlannedTest)>> {
    let mut out: VecDeque<Vec<(usize, PlannedTest)>> = VecDeque::new();
    for (i, t) in tests {
        let joins = out.back().is_some_and(|b| {
            b.len() < BATCH
                && b.last()
                    .is_some_and(|(_, last)| last.level == t.level && last.family() == t.family())
        });
        if joins {
            if let Some(b) = out.back_mut() {
                b.push((i, t));
            }
        } else {
            out.push_back(vec![(i, t)]);
        }
    }
    out
}

/// Runs every test of `tests` (tests already decided `NotSupported` are
/// recorded without a worker) and returns the records in `tests`' order;
/// `progress` sees each record as it arrives.
pub fn run(
    cmd: &WorkerCommand,
    settings: &Settings,
    tests: &[PlannedTest],
    mut progress: impl FnMut(&TestRecord),
) -> Vec<TestRecord> {
    let mut records: Vec<Option<TestRecord>> = vec![None; tests.len()];
    let mut to_run = Vec::new();
    for (i, t) in tests.iter().enumerate() {
        match &t.not_supported {
            Some(why) => {
                let r = record(t, Outcome::NotSupported, why.clone(), Duration::ZERO);
                progress(&r);
                records[i] = Some(r);
            }
            None => to_run.push((i, t.clone())),
        }
    }
    let queue = Mutex::new(batches(to_run));
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..settings.jobs.max(1) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || {
                loop {
                    let batch = match queue.lock() {
                        Ok(mut q) => q.pop_front(),
                        Err(_) => None,
                    };
                    let Some(batch) = batch else { break };
                    run_batch(cmd, settings, &batch, &tx);
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            progress(&r);
            records[i] = Some(r);
        }
    });
    records
        .into_iter()
        .zip(tests)
        .map(|(r, t)| {
            r.unwrap_or_else(|| {
                record(
                    t,
                    Outcome::InternalError,
                    "the supervisor lost this test".to_string(),
                    Duration::ZERO,
                )
            })
        })
        .collect()
}
