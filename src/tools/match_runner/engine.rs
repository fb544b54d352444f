//! One engine process seen from the referee: start it, talk to it line by
//! line with deadlines, and always reap it.

use super::options::{EngineSpec, Timeouts};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

/// Why talking to an engine failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Its output closed or writing to it failed: it is gone.
    Crashed,
    /// It did not answer in time.
    TimedOut,
    /// The run is being stopped.
    Aborted,
}

/// How often a wait looks at the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(50);

/// A running engine; killed and reaped when dropped.
pub struct EngineProcess {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl EngineProcess {
    /// Starts the engine and brings it to `uciok`, sends its options and waits for `readyok`.
    pub fn start(
        spec: &EngineSpec,
        timeouts: &Timeouts,
        abort: &AtomicBool,
    ) -> Result<EngineProcess, String> {
        let mut command = Command::new(&spec.cmd);
        command
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // A terminal's Ctrl-C goes to the whole foreground group; the runner
        // stops its engines itself, after saving its state.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run '{}': {e}", spec.cmd))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no pipes to '{}'", spec.cmd));
        };
        let (sender, lines) = channel();
        let reader_name = spec.name.clone();
        // Detached: if the engine left a grandchild holding the pipe, joining could hang.
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                log::trace!("{reader_name} > {line}");
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut engine = EngineProcess {
            name: spec.name.clone(),
            child,
            stdin,
            lines,
        };
        let explain = |failure: Failure, what: &str| match failure {
            Failure::Crashed => format!("exited before {what}"),
            Failure::TimedOut => format!("no {what} within {} ms", timeouts.startup.as_millis()),
            Failure::Aborted => "stopped".to_string(),
        };
        engine.send("uci").map_err(|f| explain(f, "uciok"))?;
        engine
            .wait_for(timeouts.startup, abort, |line| line.trim() == "uciok")
            .map_err(|f| explain(f, "uciok"))?;
        for (name, value) in &spec.options {
            engine
                .send(&format!("setoption name {name} value {value}"))
                .map_err(|f| explain(f, "readyok"))?;
        }
        engine
            .sync(timeouts.ready, abort)
            .map_err(|f| explain(f, "readyok"))?;
        Ok(engine)
    }

    /// The engine's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) -> Result<(), Failure> {
        log::trace!("{} < {line}", self.name);
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|_| Failure::Crashed)
    }

    /// Reads lines, handing each to `done`, until it returns true.
    pub fn wait_for(
        &mut self,
        timeout: Duration,
        abort: &AtomicBool,
        mut done: impl FnMut(&str) -> bool,
    ) -> Result<(), Failure> {
        let deadline = Instant::now() + timeout;
        loop {
            if abort.load(Ordering::Relaxed) {
                return Err(Failure::Aborted);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::TimedOut);
            }
            match self.lines.recv_timeout(left.min(ABORT_POLL)) {
                Ok(line) => {
                    if done(&line) {
                        return Ok(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(Failure::Crashed),
            }
        }
    }

    /// Sends `isready` and waits for `readyok`, dropping anything said before it.
    pub fn sync(&mut self, timeout: Duration, abort: &AtomicBool) -> Result<(), Failure> {
        self.send("isready")?;
        self.wait_for(timeout, abort, |line| line.trim() == "readyok")
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        // Ask politely, then make sure: a referee must never leave engines behind.
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
