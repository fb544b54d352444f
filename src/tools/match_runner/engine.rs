//! One engine process seen from the referee: start it, talk to it line by
//! line with deadlines, and always reap it.

use super::options::{EngineSpec, Timeouts};
use std::io::{BufRead, BufReader, Read, Write};
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

/// Why an engine could not be brought to play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
    /// It did not run, or did not answer the handshake in time.
    Failed(String),
    /// It answered a `setoption` with an `info string error` line: the
    /// match is set up wrongly, not the engine broken.
    RefusedOption(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Failed(message) | StartError::RefusedOption(message) => {
                f.write_str(message)
            }
        }
    }
}

/// How often a wait looks at the abort flag.
const ABORT_POLL: Duration = Duration::from_millis(50);

/// A running engine; killed and reaped when dropped.
pub struct EngineProcess {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// The `id` and `option` lines it sent before `uciok`.
    declarations: Vec<String>,
}

impl EngineProcess {
    /// Starts the engine and brings it to `uciok`, then sends its options,
    /// each followed by `isready`, so that a refused one is named.
    pub fn start(
        spec: &EngineSpec,
        timeouts: &Timeouts,
        abort: &AtomicBool,
    ) -> Result<EngineProcess, StartError> {
        let mut engine = Self::launch(spec, timeouts, abort).map_err(StartError::Failed)?;
        for (name, value) in &spec.options {
            let mut refusal = None;
            engine
                .send(&format!("setoption name {name} value {value}"))
                .and_then(|()| engine.send("isready"))
                .and_then(|()| {
                    engine.wait_for(timeouts.ready, abort, |line| {
                        if line.starts_with("info string error") && refusal.is_none() {
                            refusal = Some(line.to_string());
                        }
                        line.trim() == "readyok"
                    })
                })
                .map_err(|f| StartError::Failed(explain(f, "readyok", timeouts.ready)))?;
            if let Some(line) = refusal {
                return Err(StartError::RefusedOption(format!(
                    "engine {} refused option {name}={value}: {line}",
                    spec.name
                )));
            }
        }
        Ok(engine)
    }

    /// Runs the engine and waits for `uciok`.
    fn launch(
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
            let mut reader = BufReader::new(stdout);
            while let Some(line) = read_engine_line(&mut reader) {
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
            declarations: Vec::new(),
        };
        let mut declarations = Vec::new();
        engine
            .send("uci")
            .and_then(|()| {
                engine.wait_for(timeouts.startup, abort, |line| {
                    if line.starts_with("id ") || line.starts_with("option ") {
                        declarations.push(line.to_string());
                    }
                    line.trim() == "uciok"
                })
            })
            .map_err(|f| explain(f, "uciok", timeouts.startup))?;
        engine.declarations = declarations;
        Ok(engine)
    }

    /// The `id` and `option` lines of its handshake, as it sent them.
    pub fn declarations(&self) -> &[String] {
        &self.declarations
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
        // No deadline at all when it would lie beyond what an Instant holds.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            if abort.load(Ordering::Relaxed) {
                return Err(Failure::Aborted);
            }
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
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

/// Says what a failed wait of at most `limit` for `what` means.
/// The longest engine output line kept, in bytes; the rest of a longer
/// line is skipped, so an engine that never ends a line cannot fill memory.
const MAX_ENGINE_LINE: usize = 1 << 20;

/// The next line the engine writes, without its line end, or `None` when its
/// output ends. Bytes that are not UTF-8 are replaced rather than taken
/// for the end of the engine: only the protocol's words matter here.
fn read_engine_line(reader: &mut impl BufRead) -> Option<String> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(MAX_ENGINE_LINE).unwrap_or(u64::MAX);
    match reader.by_ref().take(limit).read_until(b'\n', &mut bytes) {
        Ok(0) | Err(_) => return None,
        Ok(_) => {}
    }
    if bytes.last() != Some(&b'\n') && bytes.len() >= MAX_ENGINE_LINE {
        skip_rest_of_line(reader);
    }
    let text = String::from_utf8_lossy(&bytes);
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}

/// Reads up to and including the next line end (or the end of output).
fn skip_rest_of_line(reader: &mut impl BufRead) {
    loop {
        let Ok(chunk) = reader.fill_buf() else { return };
        if chunk.is_empty() {
            return;
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(end) => return reader.consume(end + 1),
            None => {
                let length = chunk.len();
                reader.consume(length);
            }
        }
    }
}

fn explain(failure: Failure, what: &str, limit: Duration) -> String {
    match failure {
        Failure::Crashed => format!("exited before {what}"),
        Failure::TimedOut => format!("no {what} within {} ms", limit.as_millis()),
        Failure::Aborted => "stopped".to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn engine_lines_are_bounded_and_bad_bytes_replaced() {
        let mut output = b"uciok\r\nid author M\xfcller\n".to_vec();
        output.extend(std::iter::repeat_n(b'x', MAX_ENGINE_LINE + 10));
        output.extend(b"\nbestmove f1f2");
        let mut reader = Cursor::new(output);
        assert_eq!(read_engine_line(&mut reader).as_deref(), Some("uciok"));
        assert_eq!(
            read_engine_line(&mut reader).as_deref(),
            Some("id author M\u{fffd}ller")
        );
        assert_eq!(
            read_engine_line(&mut reader).map(|line| line.len()),
            Some(MAX_ENGINE_LINE)
        );
        assert_eq!(
            read_engine_line(&mut reader).as_deref(),
            Some("bestmove f1f2")
        );
        assert_eq!(read_engine_line(&mut reader), None);
    }
}
