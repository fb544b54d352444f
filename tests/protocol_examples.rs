//! The example sessions of protocol.md (section 11) replayed through the real
//! binary: every line they show that does not come from a search (the
//! handshake, errors, lists, perft, queries) is what agon writes, in the same
//! order, so the document cannot drift from the program.

mod common;

use common::{Agon, PATIENCE};

const PROTOCOL: &str = include_str!("../protocol.md");

/// One example session: its heading, the lines sent, and the lines expected
/// back that do not depend on the search.
struct Example {
    heading: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

/// Lines whose content depends on the search (and so on the version and the
/// machine), or that stand for lines left out.
fn from_search(line: &str) -> bool {
    line.starts_with("info depth") || line.starts_with("bestmove") || line == "..."
}

/// The sessions under the `### 11.` headings, each up to its first `...`
/// line (where the document leaves the rest of a session out).
fn examples() -> Vec<Example> {
    let mut examples = Vec::new();
    let mut lines = PROTOCOL.lines();
    while let Some(line) = lines.next() {
        let Some(heading) = line.strip_prefix("### 11.") else {
            continue;
        };
        let mut example = Example {
            heading: heading.to_string(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        };
        lines.by_ref().find(|line| line.starts_with("```"));
        for line in lines.by_ref() {
            if line.starts_with("```") || line == "..." {
                break;
            }
            if let Some(sent) = line.strip_prefix('>') {
                example.inputs.push(sent.trim_start().to_string());
            } else if let Some(written) = line.strip_prefix('<') {
                let written = written.strip_prefix(' ').unwrap_or(written);
                if !from_search(written) {
                    example.outputs.push(written.to_string());
                }
            } else {
                panic!("11.{heading}: a line neither sent nor written: {line:?}");
            }
        }
        examples.push(example);
    }
    examples
}

#[test]
fn protocol_md_has_the_three_example_sessions() {
    let headings: Vec<String> = examples().into_iter().map(|e| e.heading).collect();
    assert_eq!(
        headings,
        [
            "1 UCI handshake and a search",
            "2 Bad input",
            "3 A UGI session"
        ]
    );
}

#[test]
fn every_example_session_is_what_agon_writes() {
    for example in examples() {
        let mut agon = Agon::start(&[]);
        for line in &example.inputs {
            agon.send(line);
        }
        if example.inputs.last().is_none_or(|line| line != "quit") {
            agon.send("quit");
        }
        agon.close_input();
        assert!(agon.wait_exit(PATIENCE).success(), "11.{}", example.heading);
        let mut written = Vec::new();
        while let Some(line) = agon.next_line(PATIENCE) {
            if !from_search(&line) {
                written.push(line);
            }
        }
        assert_eq!(
            written, example.outputs,
            "11.{}: protocol.md shows other lines than agon writes",
            example.heading
        );
    }
}
