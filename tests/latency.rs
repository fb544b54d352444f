//! Latency soak: the real binary plays games against itself over its pipes,
//! one `go` at a time, while busy processes at the same priority (`agon
//! bench` searches, one per core) keep every core loaded. Each answer is
//! timed from the moment the `go` line is written to the moment `bestmove`
//! is read, and must come within its bound:
//!
//! - `go movetime 50`: at most 50 ms over the 50 ms asked for;
//! - a 1 s + 0.01 s clock for each side, which runs down as in a game (each
//!   answer's time is charged, the increment added): before the clock runs
//!   out, and at most 50 ms over three quarters of it (the time manager
//!   never plans beyond three quarters of the clock).
//!
//! Games start with a few random moves and run to their end (or 300
//! plies), so positions late in games are searched too.
//!
//! `AGON_LATENCY_SEARCHES` sets the searches of each run (default 120);
//! the figures, with the engine's own account and the system's CPU and
//! memory pressure for the slowest answers, show with `--nocapture`.

use agon::rules::{Color, Game, GameResult, legal_moves, start_position};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

const AGON: &str = env!("CARGO_BIN_EXE_agon");
/// How late an answer may be beyond the time it was given.
const LATENESS: Duration = Duration::from_millis(50);
const MOVETIME: Duration = Duration::from_millis(50);
const CLOCK: Duration = Duration::from_secs(1);
const INCREMENT: Duration = Duration::from_millis(10);
/// Random moves before the engine takes over, at most.
const OPENING_PLIES: usize = 8;
/// Games longer than this are cut off and a new one starts.
const MAX_PLIES: usize = 300;
/// Waiting longer than this for an answer means the engine hangs.
const PATIENCE: Duration = Duration::from_secs(30);

/// Busy processes, one per core, at the test's own priority; killed when
/// dropped, restarted when one ends.
struct Load {
    processes: Vec<Child>,
}

impl Load {
    fn start(count: usize) -> Load {
        Load {
            processes: (0..count).map(|_| Load::spawn()).collect(),
        }
    }

    /// A search deep enough to run for the whole soak.
    fn spawn() -> Child {
        Command::new(AGON)
            .args(["bench", "60"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("agon bench starts")
    }

    fn keep_up(&mut self) {
        for process in &mut self.processes {
            if !matches!(process.try_wait(), Ok(None)) {
                *process = Load::spawn();
            }
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// Counters of the engine process and of the whole system, where the
/// system has them (Linux: /proc).
#[derive(Clone, Copy, Default, Debug)]
struct Counters {
    /// The engine's processor time in clock ticks (all its threads, also
    /// those that ended).
    cpu_ticks: u64,
    minor_faults: u64,
    major_faults: u64,
    /// Microseconds in which some task waited for a processor, for memory,
    /// for input or output (pressure stall information).
    cpu_stall_us: u64,
    memory_stall_us: u64,
    io_stall_us: u64,
}

impl Counters {
    fn read(pid: u32) -> Counters {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command name, which is in parentheses.
        let fields: Vec<u64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .unwrap_or("")
            .split_whitespace()
            .map(|field| field.parse().unwrap_or(0))
            .collect();
        // Counting from the state (field 3 of proc(5)) as 0.
        let field = |n: usize| fields.get(n).copied().unwrap_or(0);
        let stall = |resource: &str| -> u64 {
            std::fs::read_to_string(format!("/proc/pressure/{resource}"))
                .ok()
                .and_then(|text| {
                    let some = text.lines().find(|l| l.starts_with("some"))?;
                    let total = some.split_whitespace().find(|w| w.starts_with("total="))?;
                    total["total=".len()..].parse().ok()
                })
                .unwrap_or(0)
        };
        Counters {
            cpu_ticks: field(11) + field(12),
            minor_faults: field(7),
            major_faults: field(9),
            cpu_stall_us: stall("cpu"),
            memory_stall_us: stall("memory"),
            io_stall_us: stall("io"),
        }
    }

    fn since(self, before: Counters) -> Counters {
        Counters {
            cpu_ticks: self.cpu_ticks.saturating_sub(before.cpu_ticks),
            minor_faults: self.minor_faults.saturating_sub(before.minor_faults),
            major_faults: self.major_faults.saturating_sub(before.major_faults),
            cpu_stall_us: self.cpu_stall_us.saturating_sub(before.cpu_stall_us),
            memory_stall_us: self.memory_stall_us.saturating_sub(before.memory_stall_us),
            io_stall_us: self.io_stall_us.saturating_sub(before.io_stall_us),
        }
    }
}

/// The engine under test, with every output line stamped when it was read
/// and its debug log, which says when it answered after reading `go`.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<(Instant, String)>,
    log: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(AGON)
            .env("RUST_LOG", "warn,agon::protocol::session=debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("agon starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let stdin = child.stdin.take().expect("piped stdin");
        let (sender, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        let (sender, log) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut engine = Engine {
            child,
            stdin,
            lines,
            log,
        };
        engine.send("uci");
        engine.wait_for(|line| line == "uciok");
        engine.sync();
        engine
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .expect("write to agon");
    }

    /// The first line that `wanted` accepts, and when it was read.
    fn wait_for(&mut self, wanted: impl Fn(&str) -> bool) -> (Instant, String) {
        loop {
            let (at, line) = self
                .lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no answer within {PATIENCE:?}"));
            if wanted(&line) {
                return (at, line);
            }
        }
    }

    fn sync(&mut self) {
        self.send("isready");
        self.wait_for(|line| line == "readyok");
    }

    /// The engine's own account of the last answer: milliseconds from
    /// reading `go` to writing `bestmove`.
    /// With who answered, and how long that thread waited for a processor
    /// meanwhile.
    fn own_account(&mut self) -> Option<Account> {
        // Exactly one such line per `go`, written around the `bestmove` on
        // another pipe: waiting for it keeps the pairs in step.
        while let Ok(line) = self.log.recv_timeout(PATIENCE) {
            if let Some((before, after)) = line.split_once(" ms after go was read") {
                let waited = after
                    .split_once("waited ")
                    .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok());
                return Some(Account {
                    ms: before.rsplit(' ').next()?.parse().ok()?,
                    by_controller: after.contains("by the controller"),
                    waited_ms: waited,
                });
            }
        }
        None
    }
}

/// The engine's debug log about one answer.
#[derive(Clone, Copy, Debug)]
struct Account {
    /// From reading `go` to just after writing `bestmove` (a thread that
    /// waits for a processor right after the write makes it longer than the
    /// answer took).
    ms: f64,
    /// Whether the controller answered for a search thread that missed
    /// its deadline.
    by_controller: bool,
    /// How long the answering thread waited for a processor meanwhile.
    waited_ms: Option<f64>,
}

/// One timed answer.
#[derive(Clone, Debug)]
struct Sample {
    go: String,
    ply: usize,
    elapsed: Duration,
    bound: Duration,
    own: Option<Account>,
    counters: Counters,
}

/// How the moves of one run are timed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Control {
    Movetime,
    Clock,
}

/// Plays `searches` moves in games of the engine against itself.
fn soak(control: Control, searches: usize, seed: u64) -> Vec<Sample> {
    let mut load = Load::start(thread::available_parallelism().map_or(2, |n| n.get()));
    let mut engine = Engine::start();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut samples = Vec::with_capacity(searches);
    let mut game = Game::new(start_position());
    let mut clocks = [CLOCK; 2];
    let mut new_game = true;
    while samples.len() < searches {
        load.keep_up();
        if new_game {
            engine.send("ucinewgame");
            engine.sync();
            game = Game::new(start_position());
            for _ in 0..rng.random_range(0..=OPENING_PLIES) {
                let legal = legal_moves(game.position());
                if game.result() != GameResult::Ongoing || legal.is_empty() {
                    break;
                }
                game.play(legal.as_slice()[rng.random_range(0..legal.len())]);
            }
            clocks = [CLOCK; 2];
            new_game = false;
        }
        let mut position = String::from("position startpos");
        if !game.moves().is_empty() {
            position.push_str(" moves");
            for mv in game.moves() {
                position.push(' ');
                position.push_str(&mv.to_string());
            }
        }
        let mover = usize::from(game.position().side_to_move() == Color::Black);
        let (go, bound) = match control {
            Control::Movetime => (
                format!("go movetime {}", MOVETIME.as_millis()),
                MOVETIME + LATENESS,
            ),
            Control::Clock => (
                format!(
                    "go wtime {} btime {} winc {} binc {}",
                    clocks[0].as_millis(),
                    clocks[1].as_millis(),
                    INCREMENT.as_millis(),
                    INCREMENT.as_millis()
                ),
                clocks[mover].min(clocks[mover] * 3 / 4 + LATENESS),
            ),
        };
        // As a referee does: the engine is ready, then the clock starts.
        engine.sync();
        engine.send(&position);
        let before = Counters::read(engine.child.id());
        let written = Instant::now();
        engine.send(&go);
        let (read, answer) = engine.wait_for(|line| line.starts_with("bestmove"));
        let elapsed = read - written;
        let counters = Counters::read(engine.child.id()).since(before);
        let own = engine.own_account();
        samples.push(Sample {
            go,
            ply: game.moves().len(),
            elapsed,
            bound,
            own,
            counters,
        });
        let text = answer.split_whitespace().nth(1).unwrap_or("");
        assert!(
            game.play_text(text).is_ok(),
            "{answer:?} is not a legal move after {position}"
        );
        match clocks[mover].checked_sub(elapsed) {
            Some(left) if control == Control::Clock => clocks[mover] = left + INCREMENT,
            // Out of time: this game is lost; the next one starts.
            None if control == Control::Clock => new_game = true,
            _ => {}
        }
        new_game |= game.result() != GameResult::Ongoing || game.moves().len() >= MAX_PLIES;
    }
    samples
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Sample {
    fn late(&self) -> bool {
        self.elapsed > self.bound
    }

    /// Late by the engine's own clock.
    fn late_inside(&self) -> bool {
        self.own.is_some_and(|own| own.ms > millis(self.bound))
    }

    /// Late by the engine's own clock even without the time its answering
    /// thread waited for a processor: the engine's own doing.
    fn late_unexplained(&self) -> bool {
        self.own
            .is_none_or(|own| own.ms - own.waited_ms.unwrap_or(0.0) > millis(self.bound))
    }
}

fn quantiles(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    format!(
        "median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

/// Prints the distribution and the slowest answers; returns those late by
/// the engine's own doing.
fn summarize(what: &str, samples: &[Sample]) -> Vec<Sample> {
    let count = |keep: fn(&Sample) -> bool| samples.iter().filter(|s| keep(s)).count();
    println!(
        "{what}: {} answers; go written to bestmove read: {}; {} over their bound \
         (of which {} late by the engine's clock, {} of them by more than its threads \
         waited for a processor); {} given by the controller at the deadline",
        samples.len(),
        quantiles(samples.iter().map(|s| millis(s.elapsed)).collect()),
        count(Sample::late),
        count(|s| s.late() && s.late_inside()),
        count(|s| s.late() && s.late_inside() && s.late_unexplained()),
        count(|s| s.own.is_some_and(|own| own.by_controller)),
    );
    println!(
        "  by the engine's clock (go read to bestmove written): {}; over the bound: {}",
        quantiles(samples.iter().filter_map(|s| s.own.map(|o| o.ms)).collect()),
        quantiles(
            samples
                .iter()
                .map(|s| millis(s.elapsed) - millis(s.bound))
                .collect()
        )
    );
    let mut slowest: Vec<&Sample> = samples.iter().collect();
    slowest.sort_by_key(|s| std::cmp::Reverse(s.elapsed));
    println!("  slowest:");
    for sample in slowest.iter().take(3) {
        describe(sample);
    }
    println!("  closest to their bound:");
    slowest.sort_by(|a, b| {
        let over = |s: &Sample| millis(s.elapsed) - millis(s.bound);
        over(b).total_cmp(&over(a))
    });
    for sample in slowest.iter().take(3) {
        describe(sample);
    }
    samples
        .iter()
        .filter(|s| s.late() && s.late_unexplained())
        .cloned()
        .collect()
}

/// One answer with the engine's account of it and the system's counters.
fn describe(sample: &Sample) {
    let c = sample.counters;
    let own = sample.own.map_or("no account".to_string(), |own| {
        format!(
            "engine's clock {:.1} ms by the {}, which waited {:.1} ms for a processor",
            own.ms,
            if own.by_controller {
                "controller"
            } else {
                "search thread"
            },
            own.waited_ms.unwrap_or(f64::NAN)
        )
    });
    println!(
        "  {:.1} ms (bound {:.1}) at ply {} '{}': {own}; engine cpu {} ticks, \
             faults {} minor {} major; system stalls cpu {:.1} ms, memory {:.1} ms, io {:.1} ms",
        millis(sample.elapsed),
        millis(sample.bound),
        sample.ply,
        sample.go,
        c.cpu_ticks,
        c.minor_faults,
        c.major_faults,
        c.cpu_stall_us as f64 / 1e3,
        c.memory_stall_us as f64 / 1e3,
        c.io_stall_us as f64 / 1e3,
    );
}

/// Late answers not explained by waiting for a processor are allowed in
/// one answer in this many: a thread can still lose its processor between
/// reading the clock and queueing its answer (none in 10,000 at `go
/// movetime 50` since the output thread took over the writing; 7 before).
const UNEXPLAINED_TOLERANCE: usize = 500;

fn assert_within_tolerance(samples: &[Sample], late: &[Sample]) {
    assert!(
        late.len() <= samples.len().div_ceil(UNEXPLAINED_TOLERANCE),
        "{} of {} answers late by the engine's doing: {late:#?}",
        late.len(),
        samples.len()
    );
}

/// One soak at a time: two would load the machine twice.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn searches() -> usize {
    std::env::var("AGON_LATENCY_SEARCHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(120)
}

#[test]
fn movetime_answers_come_in_time_under_load() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let samples = soak(Control::Movetime, searches(), 0x1A7E);
    let late = summarize("go movetime 50 under load", &samples);
    assert_within_tolerance(&samples, &late);
}

#[test]
fn clock_answers_come_in_time_under_load() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let samples = soak(Control::Clock, searches(), 0xC10C);
    let late = summarize("1 s + 0.01 s clock under load", &samples);
    assert_within_tolerance(&samples, &late);
}
