//! `agon bench`: the last line reads `<nodes> nodes <nps> nps`, and the node
//! count at the default depth is the signature recorded in
//! `tests/data/bench.txt`, so no change of the search goes unnoticed.

use std::process::Command;

/// Runs `agon bench` with `args` and returns its stdout lines.
fn bench_lines(args: &[&str]) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_agon"))
        .arg("bench")
        .args(args)
        .output()
        .expect("agon runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The node count of the last line, checking its format.
fn total_nodes(lines: &[String]) -> u64 {
    let last = lines.last().expect("some output");
    let fields: Vec<&str> = last.split(' ').collect();
    assert_eq!(fields.len(), 4, "{last}");
    assert_eq!((fields[1], fields[3]), ("nodes", "nps"), "{last}");
    fields[2].parse::<u64>().expect("nps is a number");
    fields[0].parse().expect("nodes is a number")
}

/// The node count recorded in the repository.
fn recorded_signature() -> u64 {
    let text = include_str!("data/bench.txt");
    let mut counts = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty());
    let count = counts.next().expect("a recorded node count");
    assert!(counts.next().is_none(), "one count only");
    count.trim().parse().expect("the count is a number")
}

#[test]
fn bench_at_the_default_depth_matches_the_recorded_signature() {
    let lines = bench_lines(&[]);
    assert_eq!(
        total_nodes(&lines),
        recorded_signature(),
        "the search changed: record the new count in tests/data/bench.txt"
    );
}

#[test]
fn bench_is_deterministic_line_by_line() {
    let first = bench_lines(&["4"]);
    let second = bench_lines(&["4"]);
    assert!(first.len() > 30, "one line per position: {}", first.len());
    let nodes = total_nodes(&first);
    assert!(nodes > 0);
    assert_eq!(nodes, total_nodes(&second));
    assert_eq!(first[..first.len() - 1], second[..second.len() - 1]);
}

#[test]
fn bench_refuses_a_bad_depth() {
    let output = Command::new(env!("CARGO_BIN_EXE_agon"))
        .args(["bench", "deep"])
        .output()
        .expect("agon runs");
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
}
