//! Every count of `tests/data/perft.txt`, reproduced by the rules core and
//! by the `agon perft` command itself.

use agon::rules::parse_fen;
use agon::rules::perft::perft;
use std::process::Command;

struct Case {
    fen: String,
    counts: Vec<(u32, u64)>,
    label: String,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/perft.txt");
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let mut parts = line.split(';').map(str::trim);
            let fen = parts.next().expect("a FEN").to_string();
            let mut counts = Vec::new();
            let mut label = String::new();
            for part in parts {
                if let Some(comment) = part.strip_prefix('#') {
                    label = comment.trim().to_string();
                } else if let Some(entry) = part.strip_prefix('D') {
                    let (depth, nodes) = entry.split_once(' ').expect("D<depth> <nodes>");
                    counts.push((depth.parse().unwrap(), nodes.parse().unwrap()));
                }
            }
            Case { fen, counts, label }
        })
        .collect()
}

/// Debug builds are slow; the deepest (multi-million node) entries run in
/// release builds, which is how the CI runs this suite.
fn depth_budget() -> u64 {
    if cfg!(debug_assertions) {
        2_000_000
    } else {
        u64::MAX
    }
}

#[test]
fn every_perft_count_is_reproduced() {
    let cases = cases();
    assert_eq!(cases.len(), 20, "the data file has 20 positions");
    let mut checked = 0;
    for case in &cases {
        let position = parse_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.fen));
        for &(depth, expected) in &case.counts {
            if expected > depth_budget() {
                continue;
            }
            assert_eq!(
                perft(&position, depth),
                expected,
                "{} ({}) depth {depth}",
                case.fen,
                case.label
            );
            checked += 1;
        }
    }
    assert!(checked >= 70, "only {checked} counts checked");
}

#[test]
fn perft_command_prints_divide_and_total() {
    let output = Command::new(env!("CARGO_BIN_EXE_agon"))
        .args(["perft", "3", "--divide", "--threads", "2"])
        .output()
        .expect("run agon perft");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 27 + 2, "{text}");
    let mut moves: Vec<&str> = lines[..27]
        .iter()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    let listed = moves.clone();
    moves.sort();
    assert_eq!(listed, moves, "sorted by move text");
    let sum: u64 = lines[..27]
        .iter()
        .map(|l| l.split(": ").nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 18_417);
    assert_eq!(lines[28], "Nodes searched: 18417");
}

#[test]
fn perft_command_refuses_a_bad_fen() {
    let output = Command::new(env!("CARGO_BIN_EXE_agon"))
        .args(["perft", "2", "--fen", "not a fen"])
        .output()
        .expect("run agon perft");
    assert!(!output.status.success());
    let errors = String::from_utf8(output.stderr).unwrap();
    assert!(errors.contains("bad FEN"), "{errors}");
}
