//! End-to-end tests of `agon analyze` through the real binary.

mod common;
use common::scratch_dir;

use std::io::Write;
use std::process::{Command, Stdio};

const AGON: &str = env!("CARGO_BIN_EXE_agon");
const START: &str = "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1";

fn analyze(args: &[&str], input: &str) -> Vec<serde_json::Value> {
    let mut child = Command::new(AGON)
        .arg("analyze")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON object per line"))
        .collect()
}

#[test]
fn positions_come_back_in_input_order_with_errors_in_place() {
    let shuffle = "f1e1 f11g11 e1f1 g11f11";
    let mut input = String::new();
    for plies in 0..6 {
        let moves: Vec<&str> = shuffle.split(' ').take(plies).collect();
        input.push_str(&format!("{START} ; moves {}\n", moves.join(" ")));
    }
    input.push_str("not a position\n");
    input.push_str(&format!("{START} ; moves {shuffle} {shuffle}\n"));
    let results = analyze(&["--depth", "2", "--jobs", "3"], &input);
    assert_eq!(results.len(), 8);
    for (index, result) in results.iter().take(6).enumerate() {
        assert_eq!(result["line"], index as u64 + 1);
        assert!(result["bestmove"].is_string(), "{result}");
        assert!(result["score"]["cp"].is_i64() || result["score"]["mate"].is_i64());
        assert_eq!(result["depth"], 2);
        assert!(result["nodes"].as_u64().unwrap() > 0);
        assert!(result["pv"].is_array() && result["time_ms"].is_u64());
    }
    assert!(results[6]["error"].as_str().unwrap().contains("bad FEN"));
    assert!(results[7]["bestmove"].is_null(), "{}", results[7]);
    assert_eq!(results[7]["result"], "1/2-1/2");
}

#[test]
fn a_file_argument_and_multipv_lines() {
    let dir = scratch_dir("analyze");
    let path = dir.join("positions.txt");
    std::fs::write(&path, format!("# a comment\n{START}\n")).unwrap();
    let results = analyze(
        &[path.to_str().unwrap(), "--nodes", "2000", "--multipv", "2"],
        "",
    );
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["line"], 2);
    assert!(results[0]["lines"].is_array(), "{}", results[0]);
}

#[test]
fn an_eval_file_replaces_the_embedded_network() {
    let embedded = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
    let scores = |extra: &[&str]| -> Vec<serde_json::Value> {
        let mut args = vec!["--depth", "3", "--jobs", "1"];
        args.extend_from_slice(extra);
        analyze(&args, &format!("{START}\n"))
            .iter()
            .map(|result| result["score"].clone())
            .collect()
    };
    assert_eq!(scores(&[]), scores(&["--eval-file", embedded]));

    // The same network with every output bias raised by two units (about
    // 800 centi-guards for the side to move): the last 32 bytes of a file.
    let mut bytes = std::fs::read(embedded).unwrap();
    let biases_at = bytes.len() - 32;
    for bias in bytes[biases_at..].chunks_mut(4) {
        let value = i32::from_le_bytes(bias.try_into().unwrap()) + 2 * 255 * 512;
        bias.copy_from_slice(&value.to_le_bytes());
    }
    let dir = scratch_dir("analyze-net");
    let shifted = dir.join("shifted.nnue");
    std::fs::write(&shifted, &bytes).unwrap();
    assert_ne!(
        scores(&[]),
        scores(&["--eval-file", shifted.to_str().unwrap()])
    );

    let refused = Command::new(AGON)
        .args(["analyze", "--depth", "1", "--eval-file", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty());
    assert!(String::from_utf8_lossy(&refused.stderr).starts_with("error: "));
}

#[test]
fn the_throne_races_of_the_docs_are_what_their_header_says() {
    use agon::rules::{Cell, Kind, parse_fen};
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/throne-races.txt");
    let results = analyze(&["--depth", "1", "--jobs", "2", file], "");
    assert_eq!(results.len(), 28);
    let mut queens_on_throne = 0;
    for result in &results {
        assert!(result["bestmove"].is_string(), "{result}");
        let position = parse_fen(result["fen"].as_str().unwrap()).unwrap();
        let agon = position.side_to_move();
        let guards_by_the_throne = |mine: bool| {
            Cell::all()
                .filter(|cell| cell.ring() == 1)
                .filter_map(|cell| position.piece_at(cell))
                .filter(|piece| piece.kind == Kind::Guard && (piece.color == agon) == mine)
                .count()
        };
        assert_eq!(guards_by_the_throne(true), 0, "{result}");
        assert!((2..=5).contains(&guards_by_the_throne(false)), "{result}");
        queens_on_throne += usize::from(
            position
                .piece_at(Cell::THRONE)
                .is_some_and(|piece| piece.kind == Kind::Queen && piece.color != agon),
        );
    }
    assert_eq!(queens_on_throne, 26);
}
