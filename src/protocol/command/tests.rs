//! Tests of the command parser: accepted lines, and the message of each
//! refused one.

use super::*;

fn ok(line: &str) -> Command {
    match parse_command(line) {
        Ok(Some(c)) => c,
        other => panic!("expected a command from {line:?}, got {other:?}"),
    }
}

fn go(line: &str) -> GoParams {
    match ok(line) {
        Command::Go(p) => p,
        other => panic!("expected go from {line:?}, got {other:?}"),
    }
}

fn err(line: &str) -> String {
    match parse_command(line) {
        Err(e) => e.to_string(),
        other => panic!("expected an error from {line:?}, got {other:?}"),
    }
}

#[test]
fn blank_lines_are_not_commands() {
    for line in ["", " ", "\t", "   \t  ", "\n", "\r\n", " \u{a0} "] {
        assert_eq!(parse_command(line), Ok(None), "{line:?}");
    }
}

#[test]
fn simple_commands() {
    let cases = [
        ("uci", Command::Uci),
        ("ugi", Command::Ugi),
        ("isready", Command::IsReady),
        ("ucinewgame", Command::NewGame),
        ("uginewgame", Command::NewGame),
        ("stop", Command::Stop),
        ("ponderhit", Command::PonderHit),
        ("quit", Command::Quit),
        ("d", Command::Display),
        ("eval", Command::Eval),
        ("moves", Command::Moves),
        ("status", Command::Status),
        ("  \t isready \r\n", Command::IsReady),
        ("query gameover", Command::Query(QueryKind::GameOver)),
        ("query p1turn", Command::Query(QueryKind::P1Turn)),
        ("query   result ", Command::Query(QueryKind::Result)),
        ("perft 1", Command::Perft { depth: 1 }),
        ("perft 20", Command::Perft { depth: 20 }),
        ("perft +5", Command::Perft { depth: 5 }),
        ("perft 005", Command::Perft { depth: 5 }),
    ];
    for (line, expected) in cases {
        assert_eq!(ok(line), expected, "{line:?}");
    }
}

#[test]
fn setoption_lines() {
    assert_eq!(
        ok("setoption name Hash value 128"),
        Command::SetOption {
            name: "Hash".into(),
            value: Some("128".into())
        }
    );
    assert_eq!(
        ok("setoption   name  Move   Overhead\tvalue  50 "),
        Command::SetOption {
            name: "Move Overhead".into(),
            value: Some("50".into())
        }
    );
    assert_eq!(
        ok("setoption name Clear Hash"),
        Command::SetOption {
            name: "Clear Hash".into(),
            value: None
        }
    );
    assert_eq!(
        ok("setoption name some option value two  words"),
        Command::SetOption {
            name: "some option".into(),
            value: Some("two  words".into())
        }
    );
    // The value is the rest of the line as written, so that a file name
    // keeps its inner whitespace; only the whitespace around it goes.
    assert_eq!(
        ok("setoption name EvalFile value \t/tmp/my  nets/a\tb.nnue  "),
        Command::SetOption {
            name: "EvalFile".into(),
            value: Some("/tmp/my  nets/a\tb.nnue".into())
        }
    );
    // Only the first `value` separates name and value.
    assert_eq!(
        ok("setoption name x value value"),
        Command::SetOption {
            name: "x".into(),
            value: Some("value".into())
        }
    );
}

#[test]
fn position_lines() {
    assert_eq!(
        ok("position startpos"),
        Command::Position {
            fen: None,
            moves: vec![]
        }
    );
    assert_eq!(
        ok("position startpos moves"),
        Command::Position {
            fen: None,
            moves: vec![]
        }
    );
    assert_eq!(
        ok("position startpos moves f1f2  b1c2\tf11f10"),
        Command::Position {
            fen: None,
            moves: vec!["f1f2".into(), "b1c2".into(), "f11f10".into()]
        }
    );
    assert_eq!(
        ok("position fen   q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q \t w   1"),
        Command::Position {
            fen: Some("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1".into()),
            moves: vec![]
        }
    );
    assert_eq!(
        ok("position fen 6/7/8/9/10/11/10/9/8/7/6 b moves e7a6"),
        Command::Position {
            fen: Some("6/7/8/9/10/11/10/9/8/7/6 b".into()),
            moves: vec!["e7a6".into()]
        }
    );
    // The parser does not judge FEN contents or moves.
    assert_eq!(
        ok("position fen garbage moves zz"),
        Command::Position {
            fen: Some("garbage".into()),
            moves: vec!["zz".into()]
        }
    );
}

#[test]
fn go_plain_and_flags() {
    assert_eq!(go("go"), GoParams::default());
    let p = go("go infinite");
    assert!(p.infinite && !p.ponder);
    let p = go("go ponder wtime 1000 btime 2000");
    assert!(p.ponder);
    assert_eq!((p.wtime, p.btime), (Some(1000), Some(2000)));
}

#[test]
fn go_any_order() {
    let a = go("go wtime 60000 btime 50000 winc 1000 binc 900 movestogo 20");
    let b = go("go movestogo 20 binc 900 winc 1000 btime 50000 wtime 60000");
    let c = go("go   binc 900\twtime 60000  movestogo 20 btime 50000 winc 1000  ");
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a.wtime, Some(60000));
    assert_eq!(a.btime, Some(50000));
    assert_eq!(a.winc, Some(1000));
    assert_eq!(a.binc, Some(900));
    assert_eq!(a.movestogo, Some(20));

    let p = go("go nodes 5000 depth 7 movetime 250 mate 3");
    assert_eq!(p.nodes, Some(5000));
    assert_eq!(p.depth, Some(7));
    assert_eq!(p.movetime, Some(250));
    assert_eq!(p.mate, Some(3));
    assert!(p.searchmoves.is_empty());
    assert_eq!(p.perft, None);
}

#[test]
fn go_ugi_aliases() {
    let ugi = go("go p1time 1000 p2time 900 p1inc 10 p2inc 20");
    let uci = go("go wtime 1000 btime 900 winc 10 binc 20");
    assert_eq!(ugi, uci);
    let mixed = go("go p2inc 20 winc 10 p2time 900 wtime 1000");
    assert_eq!(mixed, uci);
}

#[test]
fn go_negative_clocks_clamp() {
    let p = go("go wtime -150 btime -99999999999999999999999999 winc -1 binc -0");
    assert_eq!(p.wtime, Some(0));
    assert_eq!(p.btime, Some(0));
    assert_eq!(p.winc, Some(0));
    assert_eq!(p.binc, Some(0));
    let p = go("go p1time -5 p2time +7");
    assert_eq!((p.wtime, p.btime), (Some(0), Some(7)));
}

#[test]
fn go_extremes() {
    let p = go("go wtime 18446744073709551615 nodes 18446744073709551615 depth 4294967295");
    assert_eq!(p.wtime, Some(u64::MAX));
    assert_eq!(p.nodes, Some(u64::MAX));
    assert_eq!(p.depth, Some(u32::MAX));
    let p = go("go movetime 0");
    assert_eq!(p.movetime, Some(0));
}

#[test]
fn go_searchmoves() {
    let p = go("go searchmoves f1f2 b1c2 depth 5");
    assert_eq!(p.searchmoves, vec!["f1f2".to_string(), "b1c2".to_string()]);
    assert_eq!(p.depth, Some(5));
    let p = go("go depth 5 infinite searchmoves f1f2");
    assert_eq!(p.searchmoves, vec!["f1f2".to_string()]);
    assert!(p.infinite);
    let p = go("go searchmoves e7a6 ponder p1time 10");
    assert_eq!(p.searchmoves, vec!["e7a6".to_string()]);
    assert!(p.ponder);
    assert_eq!(p.wtime, Some(10));
}

#[test]
fn go_perft() {
    let p = go("go perft 4");
    assert_eq!(p.perft, Some(4));
    assert_eq!(
        GoParams {
            perft: None,
            ..p.clone()
        },
        GoParams::default()
    );
}

#[test]
#[allow(clippy::too_many_lines)]
fn bad_lines_give_the_expected_messages() {
    let cases: &[(&str, &str)] = &[
        // unknown commands
        ("foo", "unknown command 'foo'"),
        ("UCI", "unknown command 'UCI'"),
        ("Go depth 3", "unknown command 'Go'"),
        ("position-startpos", "unknown command 'position-startpos'"),
        ("bestmove f1f2", "unknown command 'bestmove'"),
        ("debug on", "unknown command 'debug'"),
        // surplus arguments
        ("uci now", "unexpected 'now' after 'uci'"),
        ("ugi x", "unexpected 'x' after 'ugi'"),
        ("isready please", "unexpected 'please' after 'isready'"),
        ("quit 0", "unexpected '0' after 'quit'"),
        ("stop it", "unexpected 'it' after 'stop'"),
        ("d 2", "unexpected '2' after 'd'"),
        ("moves f1f2", "unexpected 'f1f2' after 'moves'"),
        ("ucinewgame x", "unexpected 'x' after 'ucinewgame'"),
        ("status now", "unexpected 'now' after 'status'"),
        ("perft 3 4", "unexpected '4' after 'perft'"),
        ("query result now", "unexpected 'now' after 'query'"),
        // setoption
        ("setoption", "'setoption' needs 'name', got nothing"),
        (
            "setoption Hash value 3",
            "'setoption' needs 'name', got 'Hash'",
        ),
        ("setoption name", "'setoption name' needs an option name"),
        (
            "setoption name value 3",
            "'setoption name' needs an option name",
        ),
        (
            "setoption name Hash value",
            "has 'value' but no value after it",
        ),
        (
            "setoption name Hash value   ",
            "has 'value' but no value after it",
        ),
        // position
        (
            "position",
            "'position' needs 'startpos' or 'fen', got nothing",
        ),
        (
            "position moves f1f2",
            "'position' needs 'startpos' or 'fen', got 'moves'",
        ),
        (
            "position start",
            "'position' needs 'startpos' or 'fen', got 'start'",
        ),
        ("position fen", "FEN missing"),
        ("position fen moves f1f2", "FEN missing"),
        (
            "position startpos f1f2",
            "unexpected 'f1f2' after 'position startpos'",
        ),
        (
            "position startpos moves f1f2 moves f2f3",
            "'moves' appears twice",
        ),
        ("position fen x w moves a moves b", "'moves' appears twice"),
        // go numbers
        ("go depth", "'go depth' needs a number, got nothing"),
        ("go depth abc", "'go depth' needs a number, got 'abc'"),
        (
            "go depth movetime 100",
            "'go depth' needs a number, got 'movetime'",
        ),
        (
            "go depth 0",
            "bad 'go depth' value: got '0', which is below the minimum of 1",
        ),
        (
            "go depth -3",
            "bad 'go depth' value: got '-3', which is negative",
        ),
        ("go depth 4294967296", "too large (maximum 4294967295)"),
        ("go depth 3.5", "'go depth' needs a number, got '3.5'"),
        (
            "go nodes 99999999999999999999999",
            "too large (maximum 18446744073709551615)",
        ),
        ("go nodes 0", "bad 'go nodes' value"),
        ("go nodes 1e6", "'go nodes' needs a number, got '1e6'"),
        ("go movetime", "'go movetime' needs a number, got nothing"),
        ("go movetime -1", "which is negative"),
        ("go movestogo 0", "bad 'go movestogo' value"),
        ("go mate", "'go mate' needs a number"),
        ("go mate 0", "bad 'go mate' value"),
        ("go wtime", "'go wtime' needs a number, got nothing"),
        ("go wtime x", "'go wtime' needs a number, got 'x'"),
        ("go wtime 99999999999999999999", "too large"),
        ("go btime --5", "'go btime' needs a number, got '--5'"),
        ("go winc -", "'go winc' needs a number, got '-'"),
        ("go binc +", "'go binc' needs a number, got '+'"),
        ("go p1time ten", "'go p1time' needs a number, got 'ten'"),
        ("go p2inc", "'go p2inc' needs a number, got nothing"),
        // go structure
        ("go depth 3 depth 4", "duplicate go argument 'depth'"),
        (
            "go wtime 1 p1time 2",
            "duplicate go argument 'p1time' (same as 'wtime'",
        ),
        (
            "go p2inc 1 binc 2",
            "duplicate go argument 'binc' (same as 'p2inc'",
        ),
        ("go infinite infinite", "duplicate go argument 'infinite'"),
        ("go ponder depth 2 ponder", "duplicate go argument 'ponder'"),
        (
            "go searchmoves f1f2 depth 2 searchmoves b1c2",
            "duplicate go argument 'searchmoves'",
        ),
        ("go searchmoves", "'go searchmoves' needs at least one move"),
        (
            "go searchmoves depth 3",
            "'go searchmoves' needs at least one move",
        ),
        ("go fast", "unknown go argument 'fast'"),
        ("go depth 3 5", "unknown go argument '5'"),
        ("go Depth 3", "unknown go argument 'Depth'"),
        ("go p3time 100", "unknown go argument 'p3time'"),
        // perft
        ("perft", "'perft' needs a depth from 1 to 20, got nothing"),
        ("perft x", "'perft' needs a depth from 1 to 20, got 'x'"),
        ("perft 0", "perft depth out of range (1..=20), got 0"),
        ("perft 21", "perft depth out of range (1..=20), got 21"),
        ("perft -1", "perft depth out of range (1..=20), got -1"),
        (
            "perft 99999999999999999999999999",
            "perft depth out of range",
        ),
        (
            "go perft",
            "'go perft' needs a depth from 1 to 20, got nothing",
        ),
        (
            "go perft 25",
            "go perft depth out of range (1..=20), got 25",
        ),
        ("go perft 3 depth 2", "'go perft' cannot be combined"),
        ("go infinite perft 3", "'go perft' cannot be combined"),
        ("go perft 3 perft 4", "duplicate go argument 'perft'"),
        // query
        (
            "query",
            "'query' needs one of 'gameover', 'p1turn', 'result', got nothing",
        ),
        ("query p2turn", "unknown query 'p2turn'"),
        ("query GameOver", "unknown query 'GameOver'"),
    ];
    assert!(cases.len() >= 40);
    for (line, fragment) in cases {
        let message = err(line);
        assert!(
            message.contains(fragment),
            "{line:?}: message {message:?} lacks {fragment:?}"
        );
        assert!(!message.contains('\n'), "{line:?}: multi-line message");
    }
}

/// The exact messages quoted in the error table of `protocol.md`.
#[test]
fn documented_messages() {
    let cases: &[(&str, &str)] = &[
        ("hello", "unknown command 'hello'"),
        ("isready now", "unexpected 'now' after 'isready'"),
        ("go depth abc", "'go depth' needs a number, got 'abc'"),
        ("go depth", "'go depth' needs a number, got nothing"),
        (
            "go depth 0",
            "bad 'go depth' value: got '0', which is below the minimum of 1",
        ),
        (
            "go nodes 99999999999999999999",
            "bad 'go nodes' value: got '99999999999999999999', \
             which is too large (maximum 18446744073709551615)",
        ),
        (
            "go wtime 1000 p1time 900",
            "duplicate go argument 'p1time' (same as 'wtime', already given)",
        ),
        (
            "go movetime 100 movetime 200",
            "duplicate go argument 'movetime'",
        ),
        ("go fast", "unknown go argument 'fast'"),
        ("go searchmoves", "'go searchmoves' needs at least one move"),
        (
            "go perft 3 depth 2",
            "'go perft' cannot be combined with other go arguments",
        ),
        ("perft 25", "perft depth out of range (1..=20), got 25"),
        ("perft 0", "perft depth out of range (1..=20), got 0"),
        (
            "setoption Hash value 8",
            "'setoption' needs 'name', got 'Hash'",
        ),
        (
            "position",
            "'position' needs 'startpos' or 'fen', got nothing",
        ),
        ("position fen", "FEN missing after 'position fen'"),
        (
            "position startpos f1f2",
            "unexpected 'f1f2' after 'position startpos' (expected 'moves')",
        ),
        (
            "query winner",
            "unknown query 'winner' (expected 'gameover', 'p1turn' or 'result')",
        ),
        ("Go depth 3", "unknown command 'Go'"),
    ];
    for (line, expected) in cases {
        assert_eq!(err(line), *expected, "{line:?}");
    }
}

#[test]
fn long_tokens_are_shortened_in_messages() {
    let long = "x".repeat(10_000);
    let message = err(&long);
    assert!(message.len() < 100, "{message}");
    assert!(message.contains("..."));
    let message = err(&format!("go depth {long}"));
    assert!(message.len() < 120, "{message}");
    // Multi-byte characters are never cut in the middle.
    let wide = "é".repeat(100);
    let message = err(&wide);
    assert!(message.starts_with("unknown command 'éé"));
}

#[test]
fn control_characters_are_escaped() {
    let message = err("fo\u{1}o");
    assert_eq!(message, "unknown command 'fo\\u{1}o'");
    let message = err("go depth \u{7}");
    assert!(message.contains("\\u{7}"), "{message}");
}

#[test]
fn line_length_limit() {
    let at_limit = format!("go{}", " ".repeat(MAX_LINE_BYTES - 2));
    assert_eq!(at_limit.len(), MAX_LINE_BYTES);
    assert_eq!(
        parse_command(&at_limit),
        Ok(Some(Command::Go(GoParams::default())))
    );
    let over = format!("{at_limit} ");
    let message = err(&over);
    assert!(message.starts_with("line too long"), "{message}");
    // End-of-line characters do not count.
    let with_newline = format!("{at_limit}\r\n");
    assert!(parse_command(&with_newline).is_ok());
}

#[test]
fn errors_keep_their_structure() {
    assert_eq!(
        parse_command("go wtime 5 p1time 6"),
        Err(CommandError::GoDuplicate {
            arg: "p1time",
            first: "wtime"
        })
    );
    assert_eq!(
        parse_command("go depth x"),
        Err(CommandError::GoValue {
            arg: "depth",
            problem: NumberProblem::NotANumber("x".into())
        })
    );
    assert_eq!(parse_command("position fen"), Err(CommandError::FenMissing));
}
