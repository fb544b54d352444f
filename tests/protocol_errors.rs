//! Bad input through the real binary: every bad line earns exactly one
//! `info string error:` line, nothing changes, and the loop keeps serving.

mod common;

use agon::rules::{Game, START_FEN, parse_fen, parse_move};
use common::{Agon, PATIENCE};

/// The game every bad line is sent to: White to move after two moves.
const SETUP: &str = "position startpos moves f1f2 f11f10";

/// Bad lines, as text (a newline is added).
const BAD_LINES: &[&str] = &[
    // unknown or misspelt commands, surplus words
    "hello",
    "UCI",
    "Go depth 1",
    "debug on",
    "register later",
    "bestmove f1f2",
    "isready now",
    "uci please",
    "stop now",
    "quit now",
    "d 2",
    "moves f1f2",
    "status now",
    "ucinewgame x",
    // setoption
    "setoption",
    "setoption Hash value 8",
    "setoption name",
    "setoption name Hash value",
    "setoption name Hash value 0",
    "setoption name Hash value 100000",
    "setoption name Hash value big",
    "setoption name Threads value -1",
    "setoption name MultiPV value 257",
    "setoption name Move Overhead value 10001",
    "setoption name Style value 10",
    "setoption name Ponder value maybe",
    "setoption name Ponder",
    "setoption name Clear Hash value now",
    // position: syntax
    "position",
    "position start",
    "position fen",
    "position startpos f1f2",
    "position startpos moves f1f2 moves f11f10",
    // position: bad FENs
    "position fen xyz w",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6 w",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q x",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 0",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1 extra",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1q w",
    "position fen q1G1g1/6G/G7/9/g8g/5G5/G8G/9/7g/g6/1G1g1Q w",
    "position fen q1G1g1/6G/G7/9/g8g/12/G8G/9/7g/g6/1G1g1Q w",
    "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1X w",
    // position: bad moves
    "position startpos moves f1f3",
    "position startpos moves f1f2 f1f2",
    "position startpos moves z9z9",
    "position startpos moves f1f2 f11f10 x",
    "position startpos moves f1e1 f11g11 e1f1 g11f11 f1e1 f11g11 e1f1 g11f11 f1e1",
    "position fen 6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b moves a1b1",
    // go
    "go depth",
    "go depth 0",
    "go depth x",
    "go nodes -5",
    "go movetime abc",
    "go wtime 1 p1time 2",
    "go fast",
    "go searchmoves",
    "go searchmoves f1f9",
    "go searchmoves f2f3 a2a1",
    "go perft 0",
    "go perft 3 depth 2",
    "go mate 0",
    // perft and query
    "perft",
    "perft 0",
    "perft 21",
    "perft x",
    "query",
    "query winner",
    // control characters
    "\u{1}\u{2}\u{3}",
    "\u{1b}[31mred",
];

/// Bad lines as raw bytes: invalid UTF-8 and a NUL.
const BAD_BYTES: &[&[u8]] = &[
    b"\xff\xfe\n",
    b"go \xc3\x28 depth 1\n",
    b"isready\x80\n",
    b"\x00\n",
];

/// The sorted `moves` reply and the `d` picture, which must not change.
fn snapshot(agon: &mut Agon) -> (Vec<String>, Vec<String>) {
    (agon.moves(), agon.ask("d"))
}

/// Sends raw bytes and checks that exactly one error line answers them.
fn refused(agon: &mut Agon, bytes: &[u8], label: &str) {
    agon.send_bytes(bytes);
    let reply = agon.sync();
    assert_eq!(reply.len(), 1, "{label}: {reply:?}");
    assert!(
        reply[0].starts_with("info string error: "),
        "{label}: {reply:?}"
    );
}

#[test]
fn every_bad_line_gets_one_error_and_changes_nothing() {
    let mut agon = Agon::start(&[]);
    assert!(agon.ask(SETUP).is_empty());
    let before = snapshot(&mut agon);
    let mut count = 0;
    for line in BAD_LINES {
        refused(&mut agon, format!("{line}\n").as_bytes(), line);
        count += 1;
    }
    for bytes in BAD_BYTES {
        refused(&mut agon, bytes, &String::from_utf8_lossy(bytes));
        count += 1;
    }
    // A line over the 1 MiB limit, and the line after it still works.
    let mut long = vec![b'x'; (1 << 20) + 10];
    long.push(b'\n');
    refused(&mut agon, &long, "over-long line");
    count += 1;
    assert!(count >= 40, "only {count} bad lines");

    assert_eq!(snapshot(&mut agon), before);
    // Still serving: a search answers a legal move of the unchanged game.
    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    game.play_text("f1f2").unwrap();
    game.play_text("f11f10").unwrap();
    agon.send("go depth 1");
    let best = agon.expect_line(|l| l.starts_with("bestmove"), PATIENCE);
    let mv = best.strip_prefix("bestmove ").expect("a move");
    parse_move(game.position(), mv).unwrap_or_else(|e| panic!("{best}: {e}"));
    agon.send("quit");
    assert!(agon.wait_exit(PATIENCE).success());
}

#[test]
fn messages_name_the_problem() {
    let mut agon = Agon::start(&[]);
    let long_word = "x".repeat(100_000);
    let long_move = format!("position startpos moves {long_word}");
    let long_fragment = format!("'{}...' is not a move", &long_word[..40]);
    let long_count = format!(
        "position fen q{}1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "0".repeat(60)
    );
    let count_fragment = format!("bad empty-cell count '{}...'", "0".repeat(40));
    let cases = [
        ("hello", "unknown command 'hello'"),
        (
            "go depth 0",
            "bad 'go depth' value: got '0', which is below the minimum of 1",
        ),
        ("setoption name Style value 10", "unknown option 'Style'"),
        (
            "setoption name Hash value 100000",
            "option 'Hash' must be between 1 and 65536, got '100000'; value unchanged",
        ),
        (
            "position startpos moves f1f2 f11f10 f2f4",
            "move 3 of the list: ",
        ),
        ("position startpos moves f1f2 f11f10 f2f4", "f2f4"),
        (
            "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6 w",
            "invalid FEN: ",
        ),
        (
            "position startpos moves f1e1 f11g11 e1f1 g11f11 f1e1 f11g11 e1f1 g11f11 f1e1",
            "move 9 'f1e1' comes after the end of the game (draw by threefold repetition)",
        ),
        ("go searchmoves f1f9", "f1f9"),
        ("is\u{7}ready", "unknown command 'is\\u{7}ready'"),
        // Input quoted back from a FEN, a move or a cell is escaped and
        // shortened like any other word.
        (
            "position startpos moves \u{1b}[2J",
            "'\\u{1b}[2J' is not a move",
        ),
        (
            "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q \u{7}",
            "side to move '\\u{7}' is not",
        ),
        (
            "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1\u{7}",
            "move number '1\\u{7}' is not",
        ),
        (
            "position fen q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1\u{1b} w",
            "unknown character '\\u{1b}'",
        ),
        ("go searchmoves f1z\u{7}", "'f1z\\u{7}' is not a move"),
        (long_move.as_str(), long_fragment.as_str()),
        (long_count.as_str(), count_fragment.as_str()),
    ];
    for (line, fragment) in cases {
        let reply = agon.ask(line);
        assert_eq!(reply.len(), 1, "{line}: {reply:?}");
        assert!(
            reply[0].starts_with("info string error: ") && reply[0].contains(fragment),
            "{line}: {reply:?} lacks {fragment:?}"
        );
        assert!(
            !reply[0].chars().any(char::is_control) && reply[0].len() < 200,
            "{line}: {reply:?}"
        );
    }
}

#[test]
fn bad_lines_during_a_search_wait_their_turn() {
    let mut agon = Agon::start(&[]);
    agon.send("go infinite");
    agon.send("hello");
    agon.send("position startpos moves f1f3");
    agon.send("stop");
    let reply = agon.lines_until(|l| l.contains("f1f3"), PATIENCE);
    let best = reply.iter().position(|l| l.starts_with("bestmove"));
    let errors: Vec<usize> = reply
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("info string error: "))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(errors.len(), 2, "{reply:?}");
    assert!(best.is_some_and(|b| b < errors[0]), "{reply:?}");
    assert!(agon.sync().is_empty());
}

/// What the system says it has free, in MiB (Linux's `MemAvailable`).
fn available_mib() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib / 1024)
}

/// A table the system would promise but could not give (Linux grants an
/// allocation and kills the process when its pages are touched) is refused
/// with an error, and the engine keeps its table and goes on.
#[test]
fn a_hash_table_beyond_the_free_memory_is_refused_and_the_engine_lives() {
    let Some(available) = available_mib() else {
        eprintln!("no /proc/meminfo: nothing to check");
        return;
    };
    let asked = available + 4096;
    if asked > 65536 {
        eprintln!("{available} MiB free: more than the largest table");
        return;
    }
    let mut agon = Agon::start(&[]);
    let reply = agon.ask(&format!("setoption name Hash value {asked}"));
    assert_eq!(reply.len(), 1, "{reply:?}");
    assert!(
        reply[0].starts_with("info string error: ")
            && reply[0].contains(&format!("cannot allocate {asked} MiB for the hash table"))
            && reply[0].contains("MiB available"),
        "{reply:?}"
    );
    agon.send("go depth 3");
    agon.expect_line(|l| l.starts_with("bestmove"), PATIENCE);
    agon.send("quit");
    assert!(agon.wait_exit(PATIENCE).success());
}
