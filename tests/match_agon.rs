//! `agon match` with the real engine: agon against itself and against
//! `agon random`, every recorded game replayed through the rules core.

mod common;
use common::{AGON, scratch_dir};

use agon::rules::{Game, GameResult, parse_fen, to_fen};
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs a match and returns its standard output and its JSON records.
fn play(dir: &Path, engines: &[&str], extra: &[&str]) -> (String, Vec<serde_json::Value>) {
    let jsonl = dir.join("games.jsonl");
    let pgn = dir.join("games.pgn");
    let output = Command::new(AGON)
        .arg("match")
        .args(engines)
        .args(extra)
        .args([
            "-jsonl",
            jsonl.to_str().unwrap(),
            "-pgnout",
            pgn.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}");
    assert!(text.contains("Finished match"), "{text}");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let pgn_text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(
        pgn_text.matches("[Variant \"agon\"]").count(),
        records.len()
    );
    (text, records)
}

/// Replays a record with the rules core and checks its moves, end and result.
fn check_record(record: &serde_json::Value) {
    let start = parse_fen(record["fen"].as_str().unwrap()).unwrap();
    let mut game = Game::new(start);
    let book = record["book"].as_array().unwrap().iter();
    let played = record["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["move"]);
    for mv in book.chain(played) {
        let text = mv.as_str().unwrap();
        game.play_text(text)
            .unwrap_or_else(|e| panic!("{text} in {record}: {e}"));
    }
    assert_eq!(record["final_fen"], to_fen(game.position()));
    let result = record["result"].as_str().unwrap();
    match record["termination"].as_str().unwrap() {
        "adjudication" => assert_eq!(result, "1/2-1/2"),
        "repetition" => assert_eq!(game.result(), GameResult::Draw),
        "formation" | "forfeit" | "no-moves" => {
            let GameResult::Win { winner, reason } = game.result() else {
                panic!("no winner in {record}");
            };
            assert_eq!(reason.name(), record["termination"]);
            let expected = if winner == agon::rules::Color::White {
                "1-0"
            } else {
                "0-1"
            };
            assert_eq!(result, expected);
        }
        other => panic!("a well-behaved engine lost by {other}: {record}"),
    }
}

#[test]
fn agon_plays_random_and_itself_with_legal_recorded_games() {
    let dir = scratch_dir("agon-random");
    let engine = format!("cmd={AGON}");
    let (text, records) = play(
        &dir,
        &[
            "-engine",
            &engine,
            "name=agon",
            "depth=1",
            "-engine",
            &engine,
            "name=random",
            "args=random",
        ],
        &[
            "-each",
            "tc=5+0.05",
            "-games",
            "4",
            "-repeat",
            "-concurrency",
            "2",
            "-openings",
            "random",
            "plies=4",
            "seed=7",
            "-maxmoves",
            "60",
        ],
    );
    assert_eq!(records.len(), 4, "{text}");
    assert!(text.contains("Ptnml(0-2): ["), "{text}");
    records.iter().for_each(check_record);
    // Both games of a pair start from the same generated opening.
    assert_eq!(records[0]["book"], records[1]["book"]);
    assert_eq!(records[0]["book"].as_array().unwrap().len(), 4);

    let dir = scratch_dir("agon-self");
    let (text, records) = play(
        &dir,
        &[
            "-engine",
            &engine,
            "name=agon-a",
            "-engine",
            &engine,
            "name=agon-b",
        ],
        &[
            "-each",
            "depth=1",
            "-games",
            "2",
            "-repeat",
            "-maxmoves",
            "40",
        ],
    );
    assert_eq!(records.len(), 2, "{text}");
    records.iter().for_each(check_record);
}

#[test]
fn a_refused_option_stops_the_run_before_any_game() {
    let dir = scratch_dir("refused");
    let jsonl = dir.join("games.jsonl");
    let output = Command::new(AGON)
        .args(["match", "-engine", &format!("cmd={AGON}"), "name=good"])
        .args(["option.Search LMR=false", "-engine", &format!("cmd={AGON}")])
        .args(["name=typo", "option.Hash=16", "option.Hsah=16"])
        .args(["-each", "nodes=500", "-games", "2", "-jsonl"])
        .arg(&jsonl)
        .stdin(Stdio::null())
        .output()
        .expect("agon runs");
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("engine typo refused option Hsah=16")
            && message.contains("unknown option 'Hsah'"),
        "{message}"
    );
    let played = std::fs::read_to_string(&jsonl).unwrap_or_default();
    assert!(played.is_empty(), "no game is played: {played}");
}
