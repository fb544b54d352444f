//! Nothing lost: a fixed-node match killed at random (seeded) moments,
//! with SIGKILL or SIGTERM, and rerun each time with the same command line
//! and `-resume auto`, ends with the records and statistics of the same
//! match played without a stop, game for game.

mod common;
use agon::tools::seeds::part_seed;
use common::{AGON, PATIENCE, comparable_records, last_summary, scratch_dir};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fixed-node match between two agon settings, 16 games played two at a
/// time: every game is repeatable, whichever process plays it.
fn fixed_node_match(dir: &Path) -> Command {
    let engine = format!("cmd={AGON}");
    let mut command = Command::new(AGON);
    command
        .args(["match", "-engine", &engine, "name=n300", "nodes=300"])
        .args(["-engine", &engine, "name=n1200", "nodes=1200"])
        .args(["-each", "option.Hash=1", "-games", "8", "-rounds", "2"])
        .args(["-repeat", "-concurrency", "2", "-maxmoves", "60"])
        .args(["-openings", "random", "plies=4", "seed=5"])
        .arg("-jsonl")
        .arg(dir.join("games.jsonl"))
        .arg("-pgnout")
        .arg(dir.join("games.pgn"))
        .arg("-state")
        .arg(dir.join("state.json"))
        .args(["-resume", "auto"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Numbers from a fixed seed, as the tools seed the parts of a job.
fn random_numbers(seed: u64) -> impl Iterator<Item = u64> {
    (0u64..).map(move |part| part_seed(seed, &[part]))
}

fn recorded(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("games.jsonl")).map_or(0, |t| t.lines().count() as u64)
}

/// The uninterrupted run's records and statistics.
fn uninterrupted(name: &str) -> (Vec<serde_json::Value>, Vec<String>) {
    let dir = scratch_dir(&format!("{name}-straight"));
    let output = fixed_node_match(&dir).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let records = comparable_records(&dir.join("games.jsonl"));
    assert_eq!(records.len(), 16);
    (records, last_summary(&text(&output)))
}

/// Runs the match, stopping it with `signal` after each delay, `stops`
/// times, then lets it finish; checks every stopped run's end with
/// `check_stopped` and returns the finishing run's output.
fn run_with_stops(
    dir: &Path,
    signal: &str,
    seed: u64,
    stops: usize,
    check_stopped: impl Fn(&Output),
) -> Output {
    let mut numbers = random_numbers(seed);
    for stop in 1..=stops {
        // A moment at random within a game: once one more game is
        // recorded (at most 8 of the 16 before a stop), then up to 50 ms:
        // the games still to play, two at a time, outlast that even on a
        // fast machine, so every stop lands in a running match.
        let target = (recorded(dir) + 1).min(8);
        let delay = Duration::from_millis(numbers.next().unwrap() % 50);
        let child = fixed_node_match(dir).spawn().unwrap();
        let started = Instant::now();
        while recorded(dir) < target {
            assert!(
                started.elapsed() < PATIENCE,
                "no progress towards game {target}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(delay);
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(
            sent.success() && !output.status.success(),
            "the run ended before stop {stop}: {}",
            text(&output)
        );
        check_stopped(&output);
        eprintln!(
            "{signal} {delay:?} after game {target}: {} games recorded",
            recorded(dir)
        );
    }
    let output = fixed_node_match(dir).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    output
}

fn assert_same_as_uninterrupted(name: &str, dir: &Path, last: &Output) {
    let (records, summary) = uninterrupted(name);
    assert_eq!(comparable_records(&dir.join("games.jsonl")), records);
    assert_eq!(last_summary(&text(last)), summary, "{}", text(last));
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 16);
}

#[test]
fn a_match_killed_again_and_again_resumes_to_the_uninterrupted_result() {
    let dir = scratch_dir("sigkill");
    let last = run_with_stops(&dir, "-KILL", 7, 6, |_| {});
    assert_same_as_uninterrupted("sigkill", &dir, &last);
    // Rerun once more: the state holds every game; nothing is played.
    let again = fixed_node_match(&dir).output().unwrap();
    let again_text = text(&again);
    assert!(again.status.success(), "{again_text}");
    assert!(
        again_text.contains("Resuming: 16 of 16 games"),
        "{again_text}"
    );
    assert!(!again_text.contains("Finished game"), "{again_text}");
    assert_eq!(last_summary(&again_text), last_summary(&text(&last)));
    assert_eq!(comparable_records(&dir.join("games.jsonl")).len(), 16);
}

#[test]
fn a_match_terminated_again_and_again_stops_cleanly_and_resumes() {
    let dir = scratch_dir("sigterm");
    let last = run_with_stops(&dir, "-TERM", 11, 5, |output| {
        let stopped_text = text(output);
        assert_eq!(output.status.code(), Some(1), "{stopped_text}");
        let last_line = stopped_text.lines().last().unwrap_or_default();
        assert!(
            last_line.starts_with("Interrupted after ")
                && last_line.ends_with(&format!(
                    "continue with -resume {}",
                    dir.join("state.json").display()
                )),
            "{stopped_text}"
        );
    });
    assert_same_as_uninterrupted("sigterm", &dir, &last);
}
