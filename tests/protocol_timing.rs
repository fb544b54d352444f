//! Response times through the real binary: `isready` and `stop` during a
//! search, and `go movetime`. Each figure is the median of several
//! measurements, so that one unlucky time slice on a loaded machine does
//! not decide; the tests run one at a time, so as not to load it further.
//! See the figures with `cargo test --release --test protocol_timing -- --nocapture`.

mod common;

use common::{Agon, PATIENCE, median};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// The bound the protocol promises for `isready` and `stop`.
const PROMPT: Duration = Duration::from_millis(50);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

fn is_bestmove(line: &str) -> bool {
    line.starts_with("bestmove")
}

fn show(what: &str, samples: &[Duration]) {
    let millis: Vec<String> = samples
        .iter()
        .map(|d| format!("{:.2}", d.as_secs_f64() * 1e3))
        .collect();
    println!(
        "{what}: median {:.2} ms of [{}] ms",
        median(samples.to_vec()).as_secs_f64() * 1e3,
        millis.join(", ")
    );
}

#[test]
fn isready_is_answered_at_once_during_go_infinite() {
    let _serial = exclusive();
    let mut agon = Agon::start(&[]);
    agon.send("go infinite");
    // Let the search get going (and busy).
    thread::sleep(Duration::from_millis(100));
    let mut samples = Vec::new();
    for _ in 0..9 {
        let asked = Instant::now();
        agon.send("isready");
        agon.expect_line(|l| l == "readyok", PATIENCE);
        samples.push(asked.elapsed());
        thread::sleep(Duration::from_millis(20));
    }
    show("isready during go infinite", &samples);
    assert!(
        !agon.transcript.iter().any(|l| is_bestmove(l)),
        "the search must still run"
    );
    agon.send("stop");
    agon.expect_line(is_bestmove, PATIENCE);
    assert!(median(samples) < PROMPT);
}

#[test]
fn stop_is_answered_at_once() {
    let _serial = exclusive();
    let mut agon = Agon::start(&[]);
    let mut samples = Vec::new();
    for round in 0..7 {
        agon.send(if round % 2 == 0 {
            "position startpos"
        } else {
            "position startpos moves f1f2"
        });
        agon.send("go infinite");
        thread::sleep(Duration::from_millis(150));
        let asked = Instant::now();
        agon.send("stop");
        agon.expect_line(is_bestmove, PATIENCE);
        samples.push(asked.elapsed());
    }
    show("stop during go infinite -> bestmove", &samples);
    assert!(median(samples) < PROMPT);
}

/// Through a game's moves, `go movetime` never answers before its time, also
/// once the best move has held for several iterations: time by stability
/// scales the budget of clocks only. The bound from below holds on any
/// machine, however loaded; only a forced win, which ends the search at
/// once, is exempt.
#[test]
fn movetime_is_never_cut_short() {
    let _serial = exclusive();
    let mut agon = Agon::start(&[]);
    let movetime = Duration::from_millis(40);
    let mut moves: Vec<String> = Vec::new();
    for _ in 0..30 {
        agon.send(&format!("position startpos moves {}", moves.join(" ")));
        agon.sync();
        let asked = Instant::now();
        agon.send(&format!("go movetime {}", movetime.as_millis()));
        let lines = agon.lines_until(is_bestmove, PATIENCE);
        let elapsed = asked.elapsed();
        let won = lines.iter().any(|line| line.contains(" score mate "));
        assert!(
            won || elapsed >= movetime,
            "answered after {elapsed:?} at ply {}",
            moves.len()
        );
        let answer = lines.last().expect("a bestmove line");
        match answer.split_whitespace().nth(1) {
            Some(best) if best != "(none)" => moves.push(best.to_string()),
            _ => break,
        }
    }
}

#[test]
fn movetime_is_kept() {
    let _serial = exclusive();
    let mut agon = Agon::start(&[]);
    // With the default Move Overhead (30 ms), which applies to clocks only:
    // the answer is due after the full time, also when that is no more than
    // the overhead.
    for movetime in [300, 30] {
        let mut samples = Vec::new();
        for _ in 0..3 {
            agon.sync();
            let asked = Instant::now();
            agon.send(&format!("go movetime {movetime}"));
            agon.expect_line(is_bestmove, PATIENCE);
            samples.push(asked.elapsed());
        }
        show(&format!("go movetime {movetime} -> bestmove"), &samples);
        let typical = median(samples);
        let asked = Duration::from_millis(movetime);
        assert!(
            (asked..asked + Duration::from_millis(100)).contains(&typical),
            "go movetime {movetime}: {typical:?}"
        );
    }
}
