//! The protocol loop end to end, through the real binary's pipes: the
//! handshakes, searches and their single `bestmove`, pondering, finished
//! games, the extra commands, the random player, and how the program ends.

mod common;

use agon::rules::{Game, GameResult, START_FEN, parse_fen, parse_move, to_fen};
use common::{Agon, PATIENCE, perft_fens};
use std::thread;
use std::time::{Duration, Instant};

const OPTION_LINES: [&str; 8] = [
    "option name Hash type spin default 64 min 1 max 65536",
    "option name Threads type spin default 1 min 1 max 256",
    "option name MultiPV type spin default 1 min 1 max 256",
    "option name Move Overhead type spin default 30 min 0 max 10000",
    "option name Clear Hash type button",
    "option name Ponder type check default false",
    "option name EvalFile type string default <embedded>",
    "option name Contempt type spin default 0 min 0 max 150",
];

fn is_bestmove(line: &str) -> bool {
    line.starts_with("bestmove")
}

/// The move of a `bestmove` line, checked to be legal in `game`.
fn legal_bestmove(line: &str, game: &Game) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    assert!(
        words.len() == 2 || (words.len() == 4 && words[2] == "ponder"),
        "{line}"
    );
    assert_eq!(words[0], "bestmove", "{line}");
    parse_move(game.position(), words[1]).unwrap_or_else(|e| panic!("{line}: {e}"));
    words[1].to_string()
}

/// No `bestmove` (or anything else) arrives within `wait`.
fn assert_silent(agon: &mut Agon, wait: Duration) {
    let deadline = Instant::now() + wait;
    while let Some(line) = agon.next_line(deadline.saturating_duration_since(Instant::now())) {
        assert!(!is_bestmove(&line), "early {line}");
    }
}

fn handshake(command: &str, done: &str, name: &str) {
    let mut agon = Agon::start(&[]);
    agon.send(command);
    let lines = agon.lines_until(|l| l == done, PATIENCE);
    let mut expected = vec![
        format!("id name {name} {}", env!("CARGO_PKG_VERSION")),
        "id author the agon developers".to_string(),
    ];
    expected.extend(OPTION_LINES.iter().map(ToString::to_string));
    expected.push(done.to_string());
    assert_eq!(lines, expected);
}

#[test]
fn uci_handshake() {
    handshake("uci", "uciok", "agon");
}

#[test]
fn ugi_handshake() {
    handshake("ugi", "ugiok", "agon");
}

#[test]
fn uci_subcommand_runs_the_same_loop() {
    let mut agon = Agon::start(&["uci"]);
    agon.send("uci");
    agon.expect_line(|l| l == "uciok", PATIENCE);
    assert_eq!(agon.ask("query p1turn"), ["response true"]);
}

#[test]
fn go_depth_1_answers_every_perft_position() {
    let mut agon = Agon::start(&[]);
    let fens = perft_fens();
    assert!(fens.len() >= 20);
    let mut finished = 0;
    for fen in &fens {
        let game = Game::new(parse_fen(fen).expect("valid FEN"));
        assert!(agon.ask(&format!("position fen {fen}")).is_empty(), "{fen}");
        agon.send("go depth 1");
        let reply = agon.lines_until(is_bestmove, PATIENCE);
        let last = reply.last().expect("a bestmove line");
        match game.result() {
            GameResult::Ongoing => {
                legal_bestmove(last, &game);
            }
            result => {
                finished += 1;
                assert_eq!(last, "bestmove (none)", "{fen}");
                let over = &reply[reply.len() - 2];
                assert!(over.starts_with("info string game over: "), "{fen}: {over}");
                assert_eq!(agon.ask("status"), [format!("status {result}")]);
            }
        }
    }
    assert_eq!(finished, 3, "two formations and one side without moves");
}

#[test]
fn info_lines_have_the_documented_fields() {
    let mut agon = Agon::start(&[]);
    agon.send("go depth 2");
    let reply = agon.lines_until(is_bestmove, PATIENCE);
    let infos: Vec<&String> = reply.iter().filter(|l| l.starts_with("info ")).collect();
    assert!(!infos.is_empty(), "{reply:?}");
    for info in infos {
        let words: Vec<&str> = info.split(' ').collect();
        let keys: Vec<&str> = ["depth", "seldepth", "multipv", "score"].into();
        assert_eq!(
            &words[1..8].iter().step_by(2).copied().collect::<Vec<_>>(),
            &keys
        );
        for key in ["nodes", "nps", "hashfull", "time", "pv"] {
            assert!(words.contains(&key), "{info} lacks {key}");
        }
        assert!(words[8] == "cp" || words[8] == "mate", "{info}");
    }
    legal_bestmove(
        reply.last().unwrap(),
        &Game::new(parse_fen(START_FEN).unwrap()),
    );
}

#[test]
fn exactly_one_bestmove_per_go() {
    let mut agon = Agon::start(&[]);
    // Sent in one write: each `go` waits for the one before to answer.
    agon.send("go depth 2\ngo depth 1\nposition startpos moves f1f2\ngo nodes 500");
    for _ in 0..3 {
        agon.expect_line(is_bestmove, PATIENCE);
    }
    // The `stop` right after `go infinite` is not lost, even when both come
    // together right after the previous answer.
    agon.send("go infinite\nstop");
    agon.expect_line(is_bestmove, PATIENCE);
    assert_silent(&mut agon, Duration::from_millis(300));
    let mut after = Game::new(parse_fen(START_FEN).unwrap());
    after.play_text("f1f2").unwrap();
    let all: Vec<String> = agon
        .transcript
        .iter()
        .filter(|l| is_bestmove(l))
        .cloned()
        .collect();
    assert_eq!(all.len(), 4, "{all:?}");
    // The last two answered for Black, after f1f2.
    legal_bestmove(&all[2], &after);
    legal_bestmove(&all[3], &after);
}

/// With one line, the last `info` line before each `bestmove` starts with
/// the move played: also after a search stopped inside a depth by its node
/// limit, which plays a move proven better there and reports it first.
#[test]
fn the_last_info_line_starts_with_the_move_played() {
    let mut agon = Agon::start(&[]);
    let mut searches = 0;
    for fen in perft_fens() {
        for nodes in [1_500, 6_000, 25_000] {
            agon.send(&format!("position fen {fen}\ngo nodes {nodes}"));
            let lines = agon.lines_until(is_bestmove, PATIENCE);
            let played = lines.last().unwrap().split(' ').nth(1).unwrap().to_string();
            let Some(last_info) = lines
                .iter()
                .rev()
                .find(|line| line.starts_with("info depth"))
            else {
                continue;
            };
            let pv = last_info.split(" pv ").nth(1).unwrap();
            assert_eq!(pv.split(' ').next().unwrap(), played, "{fen}: {lines:?}");
            searches += 1;
        }
    }
    assert!(searches >= 12, "{searches} searches reported a line");
}

#[test]
fn go_infinite_waits_for_stop() {
    let mut agon = Agon::start(&[]);
    agon.send("go infinite");
    assert_silent(&mut agon, Duration::from_millis(400));
    agon.send("stop");
    let line = agon.expect_line(is_bestmove, PATIENCE);
    legal_bestmove(&line, &Game::new(parse_fen(START_FEN).unwrap()));
    // A second stop has nothing to stop.
    assert!(agon.ask("stop").is_empty());
}

/// A `go` on a clock that leaves out the mover's time answers after a
/// short search instead of searching until `stop`.
#[test]
fn a_go_without_the_movers_clock_answers_by_itself() {
    let mut agon = Agon::start(&[]);
    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    game.play_text("f1f2").unwrap();
    for go in ["go wtime 60000 winc 10", "go binc 100", "go movestogo 5"] {
        assert!(agon.ask("position startpos moves f1f2").is_empty());
        agon.send(go);
        let line = agon.expect_line(is_bestmove, PATIENCE);
        legal_bestmove(&line, &game);
    }
}

#[test]
fn stop_also_reaches_a_go_waiting_behind_a_search() {
    // The first search is still running when the `go infinite` and its
    // `stop` arrive: the stop must end both, never strand the second,
    // whether the `go` is still in transit or already held back.
    for pause in [Duration::ZERO, Duration::from_millis(100)] {
        let mut agon = Agon::start(&[]);
        agon.send("go movetime 2000");
        thread::sleep(pause);
        agon.send("go infinite");
        thread::sleep(pause);
        agon.send("stop");
        let start = Game::new(parse_fen(START_FEN).unwrap());
        for _ in 0..2 {
            let line = agon.expect_line(is_bestmove, Duration::from_secs(5));
            legal_bestmove(&line, &start);
        }
        assert_silent(&mut agon, Duration::from_millis(300));
    }
}

#[test]
fn commands_during_a_search_wait_for_its_end() {
    let mut agon = Agon::start(&[]);
    agon.send("go infinite");
    agon.send("position startpos moves f1f2");
    agon.send("d");
    assert_silent(&mut agon, Duration::from_millis(200));
    agon.send("stop");
    let lines = agon.lines_until(|l| l.starts_with("Side to move:"), PATIENCE);
    let best = lines.iter().position(|l| is_bestmove(l)).expect("bestmove");
    let fen = lines
        .iter()
        .position(|l| l.starts_with("Fen: "))
        .expect("fen");
    assert!(best < fen, "{lines:?}");
    // The bestmove belongs to the position searched, the start.
    legal_bestmove(&lines[best], &Game::new(parse_fen(START_FEN).unwrap()));
    assert_eq!(lines.last().unwrap(), "Side to move: black");
}

#[test]
fn ponder_then_ponderhit() {
    let mut agon = Agon::start(&[]);
    agon.send("setoption name Ponder value true");
    agon.send("position startpos moves f1f2");
    agon.send("go ponder depth 2");
    // However soon the search ends, its move is held while pondering.
    assert_silent(&mut agon, Duration::from_millis(400));
    agon.send("ponderhit");
    agon.expect_line(is_bestmove, PATIENCE);
    // Pondering on a move that is not played: stop ends it.
    agon.send("go ponder wtime 5000 btime 5000");
    assert_silent(&mut agon, Duration::from_millis(300));
    agon.send("stop");
    agon.expect_line(is_bestmove, PATIENCE);
    assert_silent(&mut agon, Duration::from_millis(200));
}

#[test]
fn isready_answers_during_a_search_and_after_queued_commands() {
    let mut agon = Agon::start(&[]);
    agon.send("go infinite");
    for _ in 0..3 {
        assert_eq!(agon.sync().iter().filter(|l| is_bestmove(l)).count(), 0);
    }
    agon.send("stop");
    agon.expect_line(is_bestmove, PATIENCE);
    // Without a search, `isready` comes after the lines before it.
    agon.send("position startpos moves f1f2\nisready\nstatus");
    agon.expect_line(|l| l == "readyok", PATIENCE);
    assert_eq!(agon.next_line(PATIENCE).as_deref(), Some("status ongoing"));
    assert_eq!(agon.ask("query p1turn"), ["response false"]);
}

#[test]
fn repetition_ends_the_game() {
    let mut agon = Agon::start(&[]);
    let cycle = "f1e1 f11g11 e1f1 g11f11";
    assert!(
        agon.ask(&format!("position startpos moves {cycle} {cycle}"))
            .is_empty()
    );
    assert_eq!(agon.ask("status"), ["status draw repetition"]);
    assert_eq!(agon.ask("query gameover"), ["response true"]);
    assert_eq!(agon.ask("query result"), ["response draw"]);
    assert_eq!(agon.ask("query p1turn"), ["response true"]);
    assert_eq!(agon.ask("moves"), ["moves"]);
    assert_eq!(
        agon.ask("go depth 3"),
        [
            "info string game over: draw by threefold repetition",
            "bestmove (none)"
        ]
    );
    // One cycle less is still a game.
    assert!(
        agon.ask(&format!("position startpos moves {cycle}"))
            .is_empty()
    );
    assert_eq!(agon.ask("status"), ["status ongoing"]);
    // A new game forgets the history.
    assert!(agon.ask("ucinewgame").is_empty());
    assert_eq!(agon.ask("query result"), ["response none"]);
}

#[test]
fn finished_positions_answer_bestmove_none() {
    let mut agon = Agon::start(&[]);
    let cases = [
        (
            "6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b",
            "white formation",
            "white wins by formation",
            "p1win",
        ),
        (
            "q5/7/8/9/4GG4/4G1G4/4GG4/9/g7/g6/Qgggg1 b",
            "black forfeit",
            "black wins, white forfeited",
            "p2win",
        ),
    ];
    for (fen, status, words, result) in cases {
        assert!(agon.ask(&format!("position fen {fen}")).is_empty());
        assert_eq!(agon.ask("status"), [format!("status {status}")]);
        assert_eq!(agon.ask("query result"), [format!("response {result}")]);
        assert_eq!(
            agon.ask("go wtime 1000 btime 1000"),
            [
                format!("info string game over: {words}"),
                "bestmove (none)".to_string()
            ]
        );
        assert_eq!(agon.ask("go infinite").last().unwrap(), "bestmove (none)");
    }
}

#[test]
fn extra_commands() {
    let mut agon = Agon::start(&[]);
    assert!(agon.ask("position startpos moves f1f2 f11f10").is_empty());
    let board = agon.ask("d");
    assert!(board.len() > 20, "{board:?}");
    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    game.play_text("f1f2").unwrap();
    game.play_text("f11f10").unwrap();
    let fen = format!("Fen: {}", to_fen(game.position()));
    assert!(board.contains(&fen), "{board:?}");
    let key = board
        .iter()
        .find_map(|l| l.strip_prefix("Key: "))
        .expect("key");
    assert_eq!(key.len(), 16);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(board.contains(&"Side to move: white".to_string()));

    let moves = agon.moves();
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    assert_eq!(moves.len(), 27);

    let divide = agon.ask("perft 2");
    assert_eq!(divide, agon.ask("go perft 2"));
    assert_eq!(divide.len(), moves.len() + 2);
    assert_eq!(divide[moves.len()], "");
    for (line, mv) in divide.iter().zip(&moves) {
        assert!(line.starts_with(&format!("{mv}: ")), "{line}");
    }
    let total: u64 = divide[..moves.len()]
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(divide.last().unwrap(), &format!("Nodes searched: {total}"));

    let eval = agon.ask("eval");
    assert!(!eval.is_empty());
    assert!(eval.iter().all(|l| !l.starts_with("info string error")));

    // Options: silent on success, any case, and the game is untouched.
    for line in [
        "setoption name hash value 16",
        "setoption name THREADS value 1",
        "setoption name multipv value 2",
        "setoption name move overhead value 10",
        "setoption name clear hash",
        "setoption name ponder value false",
    ] {
        assert!(agon.ask(line).is_empty(), "{line}");
    }
    assert_eq!(agon.moves(), moves);
}

#[test]
fn searchmoves_restricts_the_root() {
    let mut agon = Agon::start(&[]);
    agon.send("go depth 2 searchmoves k10k9");
    assert_eq!(agon.expect_line(is_bestmove, PATIENCE), "bestmove k10k9");
    agon.send("go depth 1 searchmoves b1c2 b1c1");
    let line = agon.expect_line(is_bestmove, PATIENCE);
    assert!(line == "bestmove b1c2" || line == "bestmove b1c1", "{line}");
}

#[test]
fn end_of_input_exits_with_status_0() {
    let mut agon = Agon::start(&[]);
    agon.send("position startpos moves f1f2");
    agon.send("go depth 1");
    agon.close_input();
    assert!(agon.wait_exit(PATIENCE).success());
    // The reader thread has the rest of the output.
    while let Some(line) = agon.next_line(Duration::from_millis(500)) {
        assert!(!line.starts_with("info string error"), "{line}");
    }
    let bestmoves = agon.transcript.iter().filter(|l| is_bestmove(l)).count();
    assert_eq!(bestmoves, 1, "{:?}", agon.transcript);
}

#[test]
fn quit_and_end_of_input_stop_a_search_promptly() {
    for close in [false, true] {
        let mut agon = Agon::start(&[]);
        agon.send("go infinite");
        agon.sync();
        let asked = Instant::now();
        if close {
            agon.close_input();
        } else {
            agon.send("quit");
        }
        let status = agon.wait_exit(PATIENCE);
        let took = asked.elapsed();
        assert!(status.success());
        assert!(took < Duration::from_secs(2), "exit took {took:?}");
        agon.expect_line(is_bestmove, PATIENCE);
    }
}

#[test]
fn quit_with_arguments_is_an_error_not_a_quit() {
    let mut agon = Agon::start(&[]);
    let reply = agon.ask("quit now");
    assert_eq!(reply, ["info string error: unexpected 'now' after 'quit'"]);
    agon.send("quit");
    assert!(agon.wait_exit(PATIENCE).success());
}

#[test]
fn random_player_plays_legal_repeatable_moves() {
    let play = |seed: &str| {
        let mut agon = Agon::start(&["random", "--seed", seed]);
        agon.send("ugi");
        let id = agon.expect_line(|l| l.starts_with("id name"), PATIENCE);
        assert_eq!(
            id,
            format!("id name agon-random {}", env!("CARGO_PKG_VERSION"))
        );
        agon.expect_line(|l| l == "ugiok", PATIENCE);
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        let mut played: Vec<String> = Vec::new();
        for _ in 0..30 {
            if game.result() != GameResult::Ongoing {
                break;
            }
            let mut line = "position startpos moves".to_string();
            for mv in &played {
                line.push(' ');
                line.push_str(mv);
            }
            agon.send(&line);
            agon.send("go p1time 1000 p2time 1000 p1inc 10 p2inc 10");
            let reply = agon.lines_until(is_bestmove, PATIENCE);
            assert_eq!(reply.len(), 1, "no info lines: {reply:?}");
            let mv = legal_bestmove(&reply[0], &game);
            game.play_text(&mv).unwrap();
            played.push(mv);
        }
        // Held like any search.
        agon.send("position startpos");
        agon.send("go infinite");
        assert_silent(&mut agon, Duration::from_millis(200));
        agon.send("stop");
        agon.expect_line(is_bestmove, PATIENCE);
        played
    };
    let first = play("11");
    assert_eq!(first, play("11"));
    assert_ne!(first, play("12"));
}

/// The node count of the last `info` line before the `bestmove` of `go`.
fn nodes_of(agon: &mut Agon, go: &str) -> u64 {
    agon.send(go);
    let lines = agon.lines_until(is_bestmove, PATIENCE);
    let info = lines
        .iter()
        .rev()
        .find(|line| line.starts_with("info depth"))
        .expect("an info line");
    let words: Vec<&str> = info.split(' ').collect();
    let at = words.iter().position(|&w| w == "nodes").expect("nodes");
    words[at + 1].parse().expect("a node count")
}

#[test]
fn developer_options_change_the_search_and_the_evaluation() {
    let mut agon = Agon::start(&[]);
    let fresh_search = |agon: &mut Agon| {
        agon.send("ucinewgame\nposition startpos moves f1f2 f11f10");
        nodes_of(agon, "go depth 7")
    };
    let tuned = fresh_search(&mut agon);
    assert_eq!(fresh_search(&mut agon), tuned, "deterministic");
    for switch in ["Search TT", "Search LMR", "Search LMP", "Search Quiescence"] {
        assert!(
            agon.ask(&format!("setoption name {switch} value false"))
                .is_empty()
        );
        let nodes = fresh_search(&mut agon);
        assert_ne!(nodes, tuned, "{switch} off searches another tree");
        assert!(
            agon.ask(&format!("setoption name {switch} value true"))
                .is_empty()
        );
    }
    assert_eq!(fresh_search(&mut agon), tuned, "all back on");

    agon.send("position startpos");
    let total = |lines: Vec<String>| lines.last().cloned().unwrap_or_default();
    let shown = agon.ask("eval");
    assert!(total(shown.clone()).starts_with("total 15 "), "{shown:?}");
    assert!(agon.ask("setoption name Eval Tempo value 0").is_empty());
    assert!(total(agon.ask("eval")).starts_with("total 0 "));
    let error = agon.ask("setoption name Eval Tempo value -1");
    assert!(error[0].starts_with("info string error:"), "{error:?}");

    agon.send("uci");
    let listed = agon.lines_until(|l| l == "uciok", PATIENCE);
    assert_eq!(
        listed.len(),
        OPTION_LINES.len() + 3,
        "developer options stay unlisted"
    );
}

#[test]
fn isready_right_after_bestmove_waits_for_the_lines_before_it() {
    // Once `bestmove` is out the search is over for the GUI, so `isready`
    // must come after the output of the commands sent before it, even if
    // the search thread has not quite finished.
    let mut agon = Agon::start(&[]);
    for round in 0..40 {
        agon.send("go depth 1");
        agon.lines_until(is_bestmove, PATIENCE);
        let lines = agon.ask("d");
        assert!(
            lines.iter().any(|line| line.starts_with("Fen: ")),
            "round {round}: {lines:?}"
        );
    }
}

/// A count that would take years ends at once with `quit`, and with the end
/// of input, writing nothing more for it.
#[test]
fn quit_and_the_end_of_input_end_a_deep_perft() {
    for close_input in [false, true] {
        let mut agon = Agon::start(&[]);
        agon.send("isready");
        agon.expect_line(|l| l == "readyok", PATIENCE);
        agon.send("perft 20");
        if close_input {
            agon.close_input();
        } else {
            agon.send("quit");
        }
        assert!(
            agon.wait_exit(PATIENCE).success(),
            "input closed: {close_input}"
        );
        let mut after = Vec::new();
        while let Some(line) = agon.next_line(PATIENCE) {
            after.push(line);
        }
        assert!(after.is_empty(), "input closed: {close_input}: {after:?}");
    }
}
