//! Fuzzing of the three text parsers (FEN, move, protocol command) with
//! arbitrary bytes, random tokens and mutated valid inputs: no panic, an
//! error for what is invalid, and a consistent position for what is accepted.
//!
//! The case count defaults to a quick run; set `AGON_FUZZ_CASES` for longer
//! runs, e.g. `AGON_FUZZ_CASES=1000000 cargo test --release --test fuzz_parsers`.

use agon::protocol::command::parse_command;
use agon::rules::{START_FEN, legal_moves, parse_fen, parse_move, to_fen};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("AGON_FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 500 } else { 100_000 })
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })
}

/// Feeds one text to every parser; whatever parses must be self-consistent.
fn feed(text: &str) {
    if let Ok(position) = parse_fen(text) {
        let again = parse_fen(&to_fen(&position)).expect("printed FEN parses");
        assert_eq!(again.key(), position.key());
    }
    let start = parse_fen(START_FEN).expect("start position");
    if let Ok(mv) = parse_move(&start, text) {
        assert!(legal_moves(&start).iter().any(|&legal| legal == mv));
    }
    if let Err(error) = parse_command(text) {
        // The reply is one `info string error: ...` line.
        let message = error.to_string();
        assert!(!message.is_empty() && !message.contains('\n'), "{text:?}");
    }
}

/// Words of the notations and the protocol, so that random strings come
/// close to valid ones.
const WORDS: &[&str] = &[
    "q",
    "G",
    "g*",
    "Q*",
    "/",
    " ",
    "\t",
    "\u{0}",
    "é",
    "w",
    "b",
    "+",
    "-",
    "uci",
    "ugi",
    "isready",
    "stop",
    "quit",
    "d",
    "eval",
    "status",
    "go",
    "position",
    "fen",
    "startpos",
    "moves",
    "setoption name",
    "setoption",
    "name",
    "value",
    "perft",
    "query",
    "gameover",
    "p1turn",
    "result",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "movestogo",
    "infinite",
    "ponder",
    "searchmoves",
    "wtime",
    "btime",
    "winc",
    "binc",
    "p1time",
    "p2time",
    "p1inc",
    "p2inc",
];

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => proptest::sample::select(WORDS).prop_map(str::to_string),
        1 => (1u32..14).prop_map(|n| n.to_string()),
        1 => "[a-l][0-9]{1,2}",
        1 => "[-+]?[0-9]{1,25}",
        1 => ".{0,3}",
    ]
}

#[test]
fn arbitrary_bytes_never_panic() {
    runner()
        .run(&proptest::collection::vec(any::<u8>(), 0..300), |bytes| {
            feed(&String::from_utf8_lossy(&bytes));
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_token_soup_never_panics() {
    runner()
        .run(&proptest::collection::vec(token(), 0..40), |tokens| {
            feed(&tokens.concat());
            feed(&tokens.join(" "));
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_fens_are_refused_or_consistent() {
    let seeds: Vec<&str> = include_str!("data/perft.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| line.split(';').next().map(str::trim))
        .collect();
    let strategy = (
        0..seeds.len(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<char>(), 0u8..3), 1..4),
    );
    runner()
        .run(&strategy, |(seed, edits)| {
            let mut chars: Vec<char> = seeds[seed].chars().collect();
            for (at, replacement, kind) in edits {
                let index = at.index(chars.len().max(1));
                match kind {
                    0 if !chars.is_empty() => {
                        let last = chars.len() - 1;
                        chars[index.min(last)] = replacement;
                    }
                    1 => chars.insert(index.min(chars.len()), replacement),
                    _ if !chars.is_empty() => {
                        chars.remove(index.min(chars.len() - 1));
                    }
                    _ => {}
                }
            }
            let text: String = chars.into_iter().collect();
            feed(&text);
            feed(&format!("position fen {text} moves f1f2"));
            Ok(())
        })
        .unwrap();
}

#[test]
fn huge_lines_are_refused_quickly() {
    let long = "g".repeat(3 << 20);
    assert!(parse_fen(&long).is_err());
    assert!(parse_command(&long).is_err());
    let long_position = format!("position startpos moves {}", "f1f2 ".repeat(300_000));
    assert!(parse_command(&long_position).is_err());
}
