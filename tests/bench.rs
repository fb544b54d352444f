//! `agon bench`: the node count is the same on every run and the last line
//! reads `<nodes> nodes <nps> nps`.

use std::process::Command;

/// Runs `agon bench <depth>` and returns its stdout lines.
fn bench_lines(depth: u32) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_agon"))
        .args(["bench", &depth.to_string()])
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

#[test]
fn bench_is_deterministic_and_ends_with_the_total() {
    let first = bench_lines(4);
    let second = bench_lines(4);
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
