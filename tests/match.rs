//! End-to-end tests of `agon match` with real engine processes: scripted
//! engines from tests/engines/ that play, misbehave and get interrupted.

mod common;
use common::{AGON, last_summary, scratch_dir};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scripted() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines/scripted.py")
        .display()
        .to_string()
}

fn agon_match(args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(AGON)
        .arg("match")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("agon runs")
}

/// The `-engine` options of scripted engines, each `(name, mode)`: the
/// mode, with its arguments, is what tests/engines/scripted.py plays.
fn scripted_engines(engines: &[(&str, &str)]) -> Vec<String> {
    let engine = scripted();
    engines
        .iter()
        .flat_map(|(name, mode)| {
            [
                "-engine".to_string(),
                format!("cmd={engine}"),
                format!("name={name}"),
                format!("args={mode}"),
            ]
        })
        .collect()
}

/// `agon match` between scripted engines (see [`scripted_engines`]) with
/// the options `rest`.
fn scripted_match(engines: &[(&str, &str)], rest: &[&str]) -> Output {
    let mut args = scripted_engines(engines);
    args.extend(rest.iter().map(|arg| arg.to_string()));
    agon_match(&args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The game numbers of a JSON-lines file's records, in file order.
fn game_numbers(path: &Path) -> Vec<u64> {
    json_records(path)
        .iter()
        .map(|r| r["game"].as_u64().unwrap())
        .collect()
}

fn json_records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

#[test]
fn a_paired_match_completes_with_readable_records() {
    let dir = scratch_dir("paired");
    let (pgn, jsonl) = (dir.join("games.pgn"), dir.join("games.jsonl"));
    let output = scripted_match(
        &[("first", "good"), ("second", "good")],
        &[
            "-each",
            "tc=5+0.05",
            "option.Hash=4",
            "-games",
            "4",
            "-repeat",
            "-concurrency",
            "2",
            "-pgnout",
            pgn.to_str().unwrap(),
            "-jsonl",
            jsonl.to_str().unwrap(),
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    for game in 1..=4 {
        assert!(
            text.contains(&format!("Finished game {game} (")),
            "game {game} missing: {text}"
        );
    }
    assert!(text.contains("Ptnml(0-2): [0, 0, 2, 0, 0]"), "{text}");
    let records = json_records(&jsonl);
    let numbers: Vec<u64> = records
        .iter()
        .map(|r| r["game"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4], "records in game order");
    for record in &records {
        assert_eq!(record["result"], "1/2-1/2");
        assert_eq!(record["termination"], "repetition");
        assert_eq!(record["moves"].as_array().unwrap().len(), 8);
        assert_eq!(record["moves"][0]["move"], "f1e1");
        assert_eq!(record["moves"][0]["score"]["cp"], 10);
    }
    assert_eq!(records[1]["white"], "second", "colours swap within a pair");
    let pgn_text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(pgn_text.matches("[Result \"1/2-1/2\"]").count(), 4);
    for tag in [
        "[Event ",
        "[Site ",
        "[Date ",
        "[Round ",
        "[White ",
        "[Black ",
        "[FEN ",
        "[Variant \"agon\"]",
        "[TimeControl \"5+0.05\"]",
        "[Termination \"repetition\"]",
    ] {
        assert!(pgn_text.contains(tag), "{tag} missing:\n{pgn_text}");
    }
    assert!(pgn_text.contains("1. f1e1 {+0.10/1 "), "{pgn_text}");
}

#[test]
fn the_summary_counts_the_draws_an_engine_stood_better_in() {
    let output = scripted_match(
        &[("boaster", "boast"), ("modest", "good")],
        &["-each", "st=0.05", "-games", "4", "-repeat"],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert_eq!(
        last_summary(&text).last().map(String::as_str),
        Some(
            "Draws: 4 of 4 games (4 by repetition); boaster stood better in 4, modest in 0 \
             (own scores over the last 10 moves averaging +0.50 or more)"
        ),
        "{text}"
    );
}

#[test]
fn misbehaving_engines_lose_with_the_right_reason_and_the_run_goes_on() {
    let dir = scratch_dir("misbehaving");
    let jsonl = dir.join("games.jsonl");
    let culprits = ["crash", "illegal", "silent", "late"];
    let engines: Vec<(&str, &str)> = std::iter::once(("good", "good"))
        .chain(culprits.iter().map(|culprit| (*culprit, *culprit)))
        .collect();
    let mut args = scripted_engines(&engines);
    for arg in [
        "-each",
        "st=0.05",
        "-tournament",
        "gauntlet",
        "-games",
        "2",
        "-recover",
        "-timemargin",
        "50",
        "-timeout",
        "startup=5000",
        "ready=5000",
        "-concurrency",
        "2",
        "-jsonl",
    ] {
        args.push(arg.into());
    }
    args.push(jsonl.display().to_string());
    let output = agon_match(&args);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("Finished match"), "{text}");
    let records = json_records(&jsonl);
    assert_eq!(records.len(), 8, "{text}");
    for record in &records {
        let (white, black) = (
            record["white"].as_str().unwrap(),
            record["black"].as_str().unwrap(),
        );
        let (culprit, expected_result) = if white == "good" {
            (black, "1-0")
        } else {
            (white, "0-1")
        };
        let expected = match culprit {
            "crash" => "crash",
            "illegal" => "illegal move",
            "silent" => "stall",
            "late" => "time forfeit",
            other => panic!("unexpected engine {other}"),
        };
        assert_eq!(record["result"], expected_result, "{record}");
        assert_eq!(record["termination"], expected, "{record}");
        if culprit == "illegal" {
            assert!(
                record["reason"]
                    .as_str()
                    .unwrap()
                    .ends_with("illegal move f1f3"),
                "{record}"
            );
        }
    }
}

#[test]
fn a_crash_without_recover_stops_the_run() {
    let output = scripted_match(
        &[("good", "good"), ("crash", "crash")],
        &["-each", "st=0.05", "-games", "4"],
    );
    let text = stdout(&output);
    // A run that ends because an engine failed has not done its job.
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("Finished game 1 (good vs crash): 1-0 {black crashed}"),
        "{text}"
    );
    assert!(!text.contains("Finished game 2"), "{text}");
    assert!(text.contains("Stopped: engine crash failed"), "{text}");
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("engine crash failed after 1 games"),
        "{message}"
    );
}

fn white_only_match(dir: &Path, extra: &[&str]) -> Output {
    agon_match(&white_only_args(dir, extra))
}

/// Six games of `good` against `half`, which plays only as White.
fn white_only_args(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = scripted_engines(&[("good", "good"), ("half", "whiteonly")]);
    args.extend([
        "-each".into(),
        "st=0.05".into(),
        "-games".into(),
        "6".into(),
        "-repeat".into(),
        "-jsonl".into(),
        dir.join("games.jsonl").display().to_string(),
        "-pgnout".into(),
        dir.join("games.pgn").display().to_string(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn a_run_stopped_after_some_games_resumes_to_the_same_totals() {
    let straight_dir = scratch_dir("straight");
    let straight = white_only_match(&straight_dir, &[]);
    assert!(straight.status.success());
    let expected = last_summary(&stdout(&straight));
    assert!(
        expected
            .iter()
            .any(|l| l.starts_with("Games: 6, Wins: 3, Losses: 0, Draws: 3")),
        "{expected:?}"
    );

    let dir = scratch_dir("resumed");
    let state = dir.join("state.json");
    let state_arg = state.to_str().unwrap();
    let first = white_only_match(&dir, &["-state", state_arg, "-maxgames", "3"]);
    let first_text = stdout(&first);
    assert!(first.status.success(), "{first_text}");
    assert!(
        first_text.contains("Stopped after the -maxgames limit: 3 of 6 games played"),
        "{first_text}"
    );
    assert!(!first_text.contains("Finished game 4"), "{first_text}");
    assert_eq!(json_records(&dir.join("games.jsonl")).len(), 3);

    // An option that would change the run is refused, and nothing is
    // touched.
    let records_before = std::fs::read(dir.join("games.jsonl")).unwrap();
    let state_before = std::fs::read(&state).unwrap();
    let changed = agon_match(&["-resume", state_arg, "-games", "8"]);
    assert!(!changed.status.success());
    let message = String::from_utf8_lossy(&changed.stderr);
    assert!(
        message
            .contains("only -maxgames, -concurrency and -shard may be given again, not -games 8"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(dir.join("games.jsonl")).unwrap(),
        records_before
    );
    assert_eq!(std::fs::read(&state).unwrap(), state_before);

    let resumed = agon_match(&["-resume", state_arg, "-concurrency", "1"]);
    let resumed_text = stdout(&resumed);
    assert!(resumed.status.success(), "{resumed_text}");
    assert!(
        resumed_text.contains("Resuming: 3 of 6 games"),
        "{resumed_text}"
    );
    assert!(!resumed_text.contains("Finished game 3 "), "{resumed_text}");
    assert_eq!(last_summary(&resumed_text), expected);
    assert_eq!(game_numbers(&dir.join("games.jsonl")), [1, 2, 3, 4, 5, 6]);
    let pgn = std::fs::read_to_string(dir.join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 6);
}

#[test]
fn an_interrupted_run_saves_its_state_and_resumes() {
    let dir = scratch_dir("interrupted");
    let state = dir.join("state.json");
    let jsonl = dir.join("games.jsonl");
    let child = Command::new(AGON)
        .arg("match")
        .args(scripted_engines(&[("a", "late 0.05"), ("b", "late 0.05")]))
        .args(["-each", "st=1", "-games", "6", "-concurrency", "2"])
        .args([
            "-state",
            state.to_str().unwrap(),
            "-jsonl",
            jsonl.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while json_count(&jsonl) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no game finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupt = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let output = child.wait_with_output().unwrap();
    let text = stdout(&output);
    assert!(text.contains("Interrupted after "), "{text}");
    assert!(text.contains("; continue with -resume"), "{text}");
    assert!(
        !output.status.success(),
        "an interrupted run is not a finished one"
    );
    let done = json_count(&jsonl);
    assert!(
        done < 6,
        "the interrupt came too late to test anything: {text}"
    );

    let resumed = agon_match(&["-resume", state.to_str().unwrap()]);
    let resumed_text = stdout(&resumed);
    assert!(resumed.status.success(), "{resumed_text}");
    assert!(
        last_summary(&resumed_text)
            .iter()
            .any(|l| l.starts_with("Games: 6, Wins: 0, Losses: 0, Draws: 6")),
        "{resumed_text}"
    );
    assert_eq!(json_count(&jsonl), 6);
}

fn json_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Reference figures computed independently (python3, from the definitions):
/// pentanomial counts [1, 1, 3, 3, 2] over 10 pairs, W/L/D = 8/4/8; pair scores
/// s in {0, .25, .5, .75, 1}, mean m = 0.6, population variance v = 0.0775;
/// Elo = -400 log10(1/m - 1) = 70.4365, error = half the Elo width of
/// m +/- 1.959964 sqrt(v / 10) = 143.1274; nElo = (m - .5) / sqrt(2 v) * 800 / ln 10
/// = 81.8914, error = 1.959964 * 800 / ln 10 / sqrt(20) = 152.2676;
/// LOS = (1 + erf(4 / sqrt(24))) / 2 = 87.589 %; normalized SPRT [0, 10]:
/// mu_i = .5 + elo_i / (800 / ln 10) * sqrt(2 v), LLR = 10 (mu1 - mu0)(2 m - mu0 - mu1) / (2 v)
/// = 0.12740, which is 4.33 % of ln(0.95 / 0.05).
#[test]
fn printed_statistics_equal_reference_values() {
    // Per pair, the letters say what each engine does in its two games: play on (d) or play
    // an illegal move (i). The pairs come out WL, LD, WD, WW, DD, WW, DW, LL, WD, DD for `first`.
    let first = "di".to_string() + "id" + "dd" + "dd" + "dd" + "dd" + "dd" + "ii" + "dd" + "dd";
    let second = "id".to_string() + "dd" + "id" + "ii" + "dd" + "ii" + "di" + "dd" + "id" + "dd";
    let output = scripted_match(
        &[
            ("first", format!("pattern {first}").as_str()),
            ("second", format!("pattern {second}").as_str()),
        ],
        &[
            "-each",
            "st=0.05",
            "-games",
            "20",
            "-repeat",
            "-ratinginterval",
            "100",
            "-sprt",
            "elo0=0",
            "elo1=10",
            "alpha=0.05",
            "beta=0.05",
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert_eq!(
        last_summary(&text),
        [
            "Results of first vs second (0.05/move, 0.05/move):",
            "Elo: 70.44 +/- 143.13, nElo: 81.89 +/- 152.27",
            "LOS: 87.59 %, DrawRatio: 30.00 %, PairsRatio: 2.50",
            "Games: 20, Wins: 8, Losses: 4, Draws: 8, Points: 12.0 (60.00 %)",
            "Ptnml(0-2): [1, 1, 3, 3, 2], WL/DD Ratio: 0.50",
            "LLR: 0.13 (4.3%) (-2.94, 2.94) [0.00, 10.00]",
            "Draws: 8 of 20 games (8 by repetition); first stood better in 0, second in 0 \
             (own scores over the last 10 moves averaging +0.50 or more)",
        ]
    );
}

#[test]
fn an_engine_that_cannot_start_is_refused_before_the_first_game() {
    let engine = scripted();
    for (culprit, reason) in [
        ("cmd=./no-such-engine", "cannot run './no-such-engine'"),
        (&format!("cmd={engine}") as &str, "no uciok within 3000 ms"),
    ] {
        let output = agon_match(&[
            "-engine",
            &format!("cmd={engine}"),
            "name=good",
            "args=good",
            "-engine",
            culprit,
            "name=broken",
            "args=nostart",
            "-each",
            "st=0.05",
            "-timeout",
            "startup=3000",
            "-games",
            "2",
        ]);
        let text = stdout(&output);
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert!(!text.contains("Finished game"), "{text}");
        assert!(
            message.contains("engine broken cannot be started") && message.contains(reason),
            "{message}"
        );
    }
}

#[test]
fn the_end_of_run_message_says_why_the_run_stopped() {
    let output = scripted_match(
        &[("a", "good"), ("b", "good")],
        &[
            "-each",
            "st=0.05",
            "-games",
            "9223372036854775808",
            "-repeat",
            "-maxgames",
            "2",
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("Stopped after the -maxgames limit: 2 of 9223372036854775808 games played"),
        "{text}"
    );
    let complete = scripted_match(
        &[("a", "good"), ("b", "good")],
        &["-each", "st=0.05", "-games", "2"],
    );
    assert!(stdout(&complete).contains("Finished match: 2 games"));
}

#[test]
fn usage_and_bad_options() {
    let help = agon_match(&["--help"]);
    assert!(help.status.success());
    let text = stdout(&help);
    for word in [
        "-engine",
        "-each",
        "-sprt",
        "-openings",
        "-resume",
        "-recover",
    ] {
        assert!(text.contains(word), "{word} missing from the usage");
    }
    let bad = agon_match(&["-engine", "cmd=x", "-games", "0"]);
    assert!(!bad.status.success());
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(message.contains("-games must be at least 1"), "{message}");
}

#[test]
fn a_rerun_over_an_existing_state_is_refused_and_touches_nothing() {
    let dir = scratch_dir("rerun");
    let state = dir.join("state.json");
    let state_arg = state.to_str().unwrap();
    let first = white_only_match(&dir, &["-state", state_arg, "-maxgames", "4"]);
    assert!(first.status.success(), "{}", stdout(&first));
    let files = ["state.json", "games.jsonl", "games.pgn"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();

    let rerun = white_only_match(&dir, &["-state", state_arg]);
    assert!(!rerun.status.success(), "{}", stdout(&rerun));
    let message = String::from_utf8_lossy(&rerun.stderr);
    assert!(
        message.contains("-resume auto") && message.contains("remove it"),
        "{message}"
    );
    let after: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    assert!(before == after, "a refused rerun changed the files");

    // The same command with -resume auto continues where the run stopped,
    // also with more games at once.
    let resumed = white_only_match(
        &dir,
        &["-state", state_arg, "-resume", "auto", "-concurrency", "2"],
    );
    let resumed_text = stdout(&resumed);
    assert!(resumed.status.success(), "{resumed_text}");
    assert!(
        resumed_text.contains("Resuming: 4 of 6 games"),
        "{resumed_text}"
    );
    assert_eq!(game_numbers(&dir.join("games.jsonl")), [1, 2, 3, 4, 5, 6]);

    // A state of another command line is not continued by -resume auto.
    let other = white_only_match(&dir, &["-state", state_arg, "-resume", "auto", "-recover"]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("the state of another run"));
    let without_state = white_only_match(&scratch_dir("auto-alone"), &["-resume", "auto"]);
    assert!(!without_state.status.success());
    assert!(String::from_utf8_lossy(&without_state.stderr).contains("-resume auto needs -state"));
}

#[test]
fn records_written_after_the_last_state_are_cut_when_the_run_resumes() {
    let dir = scratch_dir("uncommitted");
    let state = dir.join("state.json");
    let state_arg = state.to_str().unwrap();
    let first = white_only_match(&dir, &["-state", state_arg, "-maxgames", "3"]);
    assert!(first.status.success(), "{}", stdout(&first));
    // As if the run was killed after writing game 4's records but before
    // its state counted them: the records hold a game the state does not.
    let jsonl = dir.join("games.jsonl");
    let mut lines = std::fs::read_to_string(&jsonl).unwrap();
    let third = lines
        .lines()
        .nth(2)
        .unwrap()
        .replace("\"game\":3", "\"game\":4");
    lines.push_str(&third);
    lines.push_str("\n{\"game\":5,\"rou");
    std::fs::write(&jsonl, lines).unwrap();
    let pgn = dir.join("games.pgn");
    let mut pgn_text = std::fs::read_to_string(&pgn).unwrap();
    pgn_text.push_str("[Event \"agon match\"]\n");
    std::fs::write(&pgn, pgn_text).unwrap();

    let resumed = white_only_match(&dir, &["-state", state_arg, "-resume", "auto"]);
    let resumed_text = stdout(&resumed);
    assert!(resumed.status.success(), "{resumed_text}");
    assert!(resumed_text.contains("Finished game 4 "), "{resumed_text}");
    assert_eq!(game_numbers(&jsonl), [1, 2, 3, 4, 5, 6]);
    let pgn_text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(pgn_text.matches("[Event ").count(), 6);
}

#[test]
fn resuming_a_complete_run_prints_its_statistics() {
    let dir = scratch_dir("complete");
    let state = dir.join("state.json");
    let state_arg = state.to_str().unwrap();
    let first = white_only_match(&dir, &["-state", state_arg]);
    let first_text = stdout(&first);
    assert!(first.status.success(), "{first_text}");
    let again = agon_match(&["-resume", state_arg]);
    let again_text = stdout(&again);
    assert!(again.status.success(), "{again_text}");
    assert!(!again_text.contains("Finished game"), "{again_text}");
    assert!(
        again_text.ends_with("Finished match: 6 games\n"),
        "{again_text}"
    );
    assert_eq!(last_summary(&again_text), last_summary(&first_text));
}

/// A run whose SPRT was decided plays no more games when it is resumed: one
/// more game could move the decision it already announced.
#[test]
fn a_decided_sprt_is_not_played_on_when_resumed() {
    let dir = scratch_dir("decided");
    let state = dir.join("state.json");
    let jsonl = dir.join("games.jsonl");
    // `second` loses both games of one pair, one game of the next: the
    // test is decided after a few pairs.
    let second = format!("pattern {}", "iiid".repeat(10));
    let run = |extra: &[&str]| {
        let mut args = scripted_engines(&[("first", "good"), ("second", &second)]);
        args.extend([
            "-each".into(),
            "st=0.05".into(),
            "-games".into(),
            "40".into(),
            "-repeat".into(),
            "-sprt".into(),
            "elo0=0".into(),
            "elo1=100".into(),
            "-state".into(),
            state.display().to_string(),
            "-jsonl".into(),
            jsonl.display().to_string(),
        ]);
        args.extend(extra.iter().map(|s| s.to_string()));
        agon_match(&args)
    };
    let first = run(&[]);
    let first_text = stdout(&first);
    assert!(first.status.success(), "{first_text}");
    assert!(
        first_text.contains("SPRT decided: H1 was accepted"),
        "{first_text}"
    );
    let played = json_count(&jsonl);
    assert!(played < 40, "{first_text}");
    let state_before = std::fs::read(&state).unwrap();

    let resumed = run(&["-resume", "auto"]);
    let resumed_text = stdout(&resumed);
    assert!(resumed.status.success(), "{resumed_text}");
    assert!(
        resumed_text.contains("SPRT decided: H1 was accepted"),
        "{resumed_text}"
    );
    assert!(!resumed_text.contains("Finished game"), "{resumed_text}");
    assert_eq!(json_count(&jsonl), played);
    assert_eq!(std::fs::read(&state).unwrap(), state_before);
}

/// An engine that writes bytes that are not UTF-8, and lines longer than the
/// runner keeps, still plays its games: only a missing or illegal move, or an
/// engine that ends, loses.
#[test]
fn an_engine_with_odd_output_still_plays() {
    let output = scripted_match(
        &[("good", "good"), ("noisy", "noisy")],
        &["-each", "st=0.5", "-games", "2"],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("Finished match: 2 games"), "{text}");
    assert!(
        text.contains("Draws: 2 of 2 games (2 by repetition)"),
        "{text}"
    );
}

/// The run's progress goes to standard output, its records to files: a
/// reader of the progress that quits (a pager, a `tee` stopped by Ctrl-C)
/// does not end the run.
#[test]
fn a_closed_standard_output_does_not_end_a_run() {
    let dir = scratch_dir("closed-stdout");
    let mut child = Command::new(AGON)
        .arg("match")
        .args(white_only_args(&dir, &[]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("agon runs");
    drop(child.stdout.take());
    let status = child.wait().expect("agon ends");
    assert!(status.success(), "{status}");
    assert_eq!(game_numbers(&dir.join("games.jsonl")), [1, 2, 3, 4, 5, 6]);
}

/// A run that cannot write its records stops with an error, and stops its
/// engines first: none is left running.
#[cfg(target_os = "linux")]
#[test]
fn a_run_that_cannot_write_leaves_no_engine_running() {
    let tag = format!(
        "tag-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let output = scripted_match(
        &[
            ("a", format!("good {tag}").as_str()),
            ("b", format!("good {tag}").as_str()),
        ],
        &[
            "-each",
            "st=0.05",
            "-games",
            "8",
            "-concurrency",
            "2",
            "-jsonl",
            "/dev/full",
        ],
    );
    assert!(!output.status.success(), "{}", stdout(&output));
    let running: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(&tag))
        .collect();
    assert!(running.is_empty(), "{running:?}");
}

/// Two processes on one state would play the same games and mix their
/// writes: while a run holds its state, the same command is refused.
#[test]
fn a_second_process_on_a_running_state_is_refused() {
    let dir = scratch_dir("locked");
    let state = dir.join("state.json");
    let mut args = scripted_engines(&[("a", "late 0.2"), ("b", "late 0.2")]);
    args.extend([
        "-each".into(),
        "st=1".into(),
        "-games".into(),
        "20".into(),
        "-state".into(),
        state.display().to_string(),
        "-jsonl".into(),
        dir.join("games.jsonl").display().to_string(),
        "-resume".into(),
        "auto".into(),
    ]);
    let mut first = Command::new(AGON)
        .arg("match")
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agon runs");
    let lock = dir.join("state.json.lock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !lock.exists() {
        assert!(Instant::now() < deadline, "no lock beside the state");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let second = agon_match(&args);
    let _ = first.kill();
    let _ = first.wait();
    assert!(!second.status.success(), "{}", stdout(&second));
    let message = String::from_utf8_lossy(&second.stderr);
    assert!(
        message.contains("another process is running on it now"),
        "{message}"
    );
}
