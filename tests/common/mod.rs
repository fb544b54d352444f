//! A small harness for driving the real `agon` binary through its pipes:
//! a reader thread collects output lines, and tests wait for the lines they
//! expect with a timeout.

#![allow(dead_code)] // Each test file uses a different part of the harness.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

/// A generous bound for answers that should be quick, on a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A running `agon` process.
pub struct Agon {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line read so far, for failure messages.
    pub transcript: Vec<String>,
}

impl Agon {
    /// Starts `agon` with these arguments (none: the engine).
    pub fn start(args: &[&str]) -> Agon {
        Agon::start_with_env(args, &[])
    }

    /// Starts `agon` with these arguments and extra environment variables.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Agon {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agon"))
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("agon starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (sender, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Agon {
            child,
            stdin,
            lines,
            transcript: Vec::new(),
        }
    }

    /// The operating system's id of the process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_bytes(&bytes);
    }

    /// Sends raw bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input still open");
        stdin.write_all(bytes).expect("write to agon");
        stdin.flush().expect("flush to agon");
    }

    /// Closes the engine's input (end of file).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The next line, or `None` after `timeout` or when the output ended.
    pub fn next_line(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                self.transcript.push(line.clone());
                Some(line)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Reads lines until one satisfies `wanted` and returns it; panics with
    /// the transcript if none comes within `timeout`.
    pub fn expect_line(&mut self, wanted: impl Fn(&str) -> bool, timeout: Duration) -> String {
        self.lines_until(wanted, timeout)
            .pop()
            .expect("lines_until returns the match")
    }

    /// Reads lines until one satisfies `wanted`; returns all of them, the
    /// match last. Panics with the transcript on timeout.
    pub fn lines_until(&mut self, wanted: impl Fn(&str) -> bool, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(line) = self.next_line(left) else {
                panic!(
                    "no expected line within {timeout:?}; transcript:\n{}",
                    self.transcript.join("\n")
                );
            };
            let done = wanted(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Sends `isready` and returns every line written before `readyok`.
    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.lines_until(|l| l == "readyok", PATIENCE);
        lines.pop();
        lines
    }

    /// Sends `line` and returns everything it produced (up to the `readyok`
    /// of a following `isready`).
    pub fn ask(&mut self, line: &str) -> Vec<String> {
        self.send(line);
        self.sync()
    }

    /// The sorted legal moves reported by `moves`.
    pub fn moves(&mut self) -> Vec<String> {
        let reply = self.ask("moves");
        assert_eq!(reply.len(), 1, "{reply:?}");
        let mut words = reply[0].split(' ');
        assert_eq!(words.next(), Some("moves"));
        words.map(String::from).collect()
    }

    /// Waits for the process to exit; panics after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "agon did not exit within {timeout:?}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Agon {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The FENs of `tests/data/perft.txt`.
pub fn perft_fens() -> Vec<String> {
    include_str!("../data/perft.txt")
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| line.split(';').next().unwrap_or("").trim().to_string())
        .collect()
}

/// The median of some durations.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The binary under test.
pub const AGON: &str = env!("CARGO_BIN_EXE_agon");

/// Runs `agon` with these arguments and no input, to its end.
pub fn run_agon(args: &[&str]) -> Output {
    Command::new(AGON)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("agon runs")
}

/// A fresh, empty directory of one test, removed with its contents when the
/// value drops, even when the test panics, so runs leave nothing in the
/// temporary directory. It derefs to its path, so tests use it as a `Path`.
pub struct ScratchDir(tempfile::TempDir);

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// For the `std::fs` functions, which take any `AsRef<Path>`.
impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// A fresh scratch directory named after `name`, for finding it while the
/// test runs; the random suffix keeps tests running at once apart.
pub fn scratch_dir(name: &str) -> ScratchDir {
    ScratchDir(
        tempfile::Builder::new()
            .prefix(&format!("agon-{name}-"))
            .tempdir()
            .unwrap(),
    )
}

/// The records of an `agon match -jsonl` file without what differs from run
/// to run (thinking times and the date).
pub fn comparable_records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| {
            let mut record: serde_json::Value = serde_json::from_str(line).unwrap();
            record.as_object_mut().unwrap().remove("date");
            for mv in record["moves"].as_array_mut().unwrap() {
                mv.as_object_mut().unwrap().remove("time_ms");
            }
            record
        })
        .collect()
}

/// The last statistics block a match printed: from the last "Results of" to
/// the line before the final message.
pub fn last_summary(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.starts_with("Results of"))
        .expect("a statistics block");
    lines[start..]
        .iter()
        .take_while(|l| !l.starts_with("Finished") && !l.starts_with("Stopped"))
        .map(|l| l.to_string())
        .collect()
}
