//! Fuzzing the running engine: thousands of lines of random bytes, random
//! protocol words and mutated valid commands are streamed into one `agon`
//! process. It must never panic or stop serving: afterwards it still answers
//! `isready`, plays a legal move, and exits cleanly on `quit`.
//!
//! `AGON_FUZZ_LINES` sets the number of lines (default 5000).

use agon::rules::{START_FEN, legal_moves, parse_fen, parse_move};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::thread;
use std::time::Duration;

/// Words of the protocol, minus those that would start unbounded work
/// (`infinite`, deep perft): a fuzzer that hangs the engine on purpose
/// proves nothing.
const WORDS: &[&str] = &[
    "uci",
    "ugi",
    "isready",
    "setoption",
    "name",
    "value",
    "Hash",
    "Threads",
    "MultiPV",
    "Move",
    "Overhead",
    "Clear",
    "Ponder",
    "ucinewgame",
    "uginewgame",
    "position",
    "startpos",
    "fen",
    "moves",
    "stop",
    "ponderhit",
    "d",
    "eval",
    "status",
    "query",
    "gameover",
    "p1turn",
    "result",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
    "searchmoves",
    "p1time",
    "p2time",
    "f1f2",
    "b1b2",
    "a5a4",
    "f11f10",
    "xyz",
    "-1",
    "0",
    "1",
    "2",
    "99999999999999999999",
    "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q",
    "w",
    "b",
];

/// A position no fuzz line can reach (white to move, a sandwich trap near).
const MARKER_FEN: &str = "q4G/7/8/9/10/11/10/5Gg2/4g3/G4g1/g4Q w";

fn random_line(rng: &mut StdRng) -> Vec<u8> {
    match rng.random_range(0..4) {
        0 => (0..rng.random_range(0..80)).map(|_| rng.random()).collect(),
        1 => (0..rng.random_range(1..12))
            .map(|_| *WORDS.choose(rng).unwrap_or(&"x"))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes(),
        2 => {
            let limit = match rng.random_range(0..3) {
                0 => format!("nodes {}", rng.random_range(1..2000)),
                1 => format!("depth {}", rng.random_range(1..3)),
                _ => format!("movetime {}", rng.random_range(1..10)),
            };
            let noise = WORDS.choose(rng).unwrap_or(&"x");
            if rng.random_bool(0.5) {
                format!("go {limit}").into_bytes()
            } else {
                format!("go {limit} {noise}").into_bytes()
            }
        }
        _ => {
            let mut line = format!("position fen {START_FEN} moves f1f2 f11f10").into_bytes();
            for _ in 0..rng.random_range(1..4) {
                let at = rng.random_range(0..line.len());
                line[at] = rng.random();
            }
            line
        }
    }
}

#[test]
fn random_input_never_stops_the_engine() {
    let lines: usize = std::env::var("AGON_FUZZ_LINES")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(5000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_agon"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agon starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (sender, replies) = channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let errors = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });

    let mut stdin = child.stdin.take().expect("stdin");
    let mut rng = StdRng::seed_from_u64(0xF022);
    for _ in 0..lines {
        let mut line = random_line(&mut rng);
        line.retain(|&b| b != b'\n');
        line.push(b'\n');
        stdin.write_all(&line).expect("engine reads");
    }
    // `moves` is answered only after every earlier command, searches
    // included, so its reply for a position the fuzz lines never set up
    // marks the point where the engine has caught up.
    let marker = parse_fen(MARKER_FEN).expect("marker FEN");
    let mut marker_moves: Vec<String> =
        legal_moves(&marker).iter().map(|m| m.to_string()).collect();
    marker_moves.sort();
    let marker_reply = format!("moves {}", marker_moves.join(" "));
    let finale = format!("stop\nucinewgame\nposition fen {MARKER_FEN}\nmoves\n");
    stdin.write_all(finale.as_bytes()).expect("engine reads");
    stdin.flush().expect("flush");
    let next_reply = || {
        replies
            .recv_timeout(Duration::from_secs(120))
            .expect("the engine keeps answering")
    };
    while next_reply() != marker_reply {}
    stdin.write_all(b"go depth 2\n").expect("engine reads");
    stdin.flush().expect("flush");
    let bestmove = loop {
        let line = next_reply();
        if line.starts_with("bestmove") {
            break line;
        }
    };
    let mv = bestmove.split_whitespace().nth(1).unwrap_or("");
    assert!(
        parse_move(&marker, mv).is_ok(),
        "{bestmove} is not legal in {MARKER_FEN}"
    );
    stdin.write_all(b"quit\n").expect("engine reads");
    drop(stdin);
    let status = child.wait().expect("engine exits");
    assert!(status.success(), "exit status {status}");
    let stderr_text = errors.join().unwrap_or_default();
    assert!(!stderr_text.contains("panicked"), "{stderr_text}");
}
