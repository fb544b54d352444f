//! The command line through the real binary: out-of-range numbers refused
//! with a message and a non-zero exit, and a fuzz of random and hostile
//! arguments to every subcommand (huge and negative numbers, broken
//! clocks, missing, garbage and unwritable files) that must never panic
//! and must explain every refusal.
//!
//! The fuzz's case count defaults to a quick run; set `AGON_CLI_FUZZ_CASES`
//! for longer runs, e.g. `AGON_CLI_FUZZ_CASES=5000 cargo test --release --test cli`.

mod common;
use common::{AGON, run_agon, scratch_dir};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Asserts a refusal: exit status 1 or 2 (clap's), no output, a message naming `expected`.
fn assert_refused(args: &[&str], expected: &str) {
    let output = run_agon(args);
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        matches!(output.status.code(), Some(1 | 2)),
        "{args:?}: {:?} {message}",
        output.status
    );
    assert!(message.contains(expected), "{args:?}: {message}");
    assert!(output.stdout.is_empty(), "{args:?} printed something");
}

#[test]
fn depths_and_counts_out_of_range_are_refused() {
    assert_refused(&["perft", "0"], "not in 1..=20");
    assert_refused(&["perft", "21"], "not in 1..=20");
    assert_refused(&["perft", "30"], "not in 1..=20");
    assert_refused(&["perft", "4294967296"], "4294967296");
    assert_refused(&["perft", "3", "--threads", "0"], "--threads");
    assert_refused(&["bench", "0"], "not in 1..=64");
    assert_refused(&["bench", "2", "--threads", "100000"], "--threads");
    assert_refused(&["analyze", "--depth", "0"], "--depth");
    assert_refused(&["analyze", "--nodes", "0"], "--nodes");
    assert_refused(&["analyze", "--movetime", "-5"], "-5");
    assert_refused(&["analyze", "--movetime", "0"], "--movetime");
    assert_refused(&["analyze", "--hash", "0"], "--hash");
    assert_refused(&["analyze", "--hash", "65537"], "--hash");
    assert_refused(&["analyze", "--multipv", "0"], "--multipv");
    assert_refused(&["analyze", "--multipv", "257"], "--multipv");
    assert_refused(&["analyze", "--jobs", "0"], "--jobs");
    for option in ["--keep-finished-days", "--keep-unfinished-days"] {
        assert_refused(&["serve", option, "0"], option);
    }
    assert_refused(&["datagen", "--output", "d.bin", "--hash", "0"], "--hash");
    assert_refused(&["datagen", "--output", "d.bin", "--margin", "-1"], "-1");
    assert_refused(
        &["datagen", "--output", "d.bin", "--margin", "2147483647"],
        "--margin",
    );
    assert_refused(
        &["train", "d.bin", "--output", "n.nnue", "--epochs", "0"],
        "--epochs",
    );
    assert_refused(
        &["datagen", "--output", "d.bin", "--hash", "1000000"],
        "--hash",
    );
    for plies in ["101", "4000000000"] {
        assert_refused(
            &["datagen", "--output", "d.bin", "--random-plies", plies],
            "0..=100",
        );
    }
    for (option, value) in [
        ("--lr", "NaN"),
        ("--lr", "inf"),
        ("--lr", "-0.001"),
        ("--lr", "0"),
        ("--lr-decay", "NaN"),
        ("--lr-decay", "inf"),
        ("--lr-decay", "0"),
        ("--lr-decay", "1.5"),
        ("--batch", "0"),
        ("--result-weight", "inf"),
        ("--result-weight", "-0.5"),
        ("--validation", "-0.1"),
        ("--validation", "1"),
        ("--validation", "NaN"),
    ] {
        assert_refused(
            &["train", "d.bin", "--output", "n.nnue", option, value],
            option,
        );
    }
    assert_refused(&["analyze", "/no/such/positions"], "cannot open");
    assert_refused(&["tune", "/no/such/records"], "/no/such/records");
    assert_refused(
        &["stats", "/no/such/state"],
        "cannot read the state /no/such/state",
    );
    let engine = format!("cmd={AGON}");
    assert_refused(
        &[
            "match",
            "-engine",
            &engine,
            "-engine",
            &engine,
            "-each",
            "tc=1000000000:18446744073709500000",
        ],
        "tc minutes",
    );
    assert_refused(
        &[
            "match",
            "-engine",
            &engine,
            "-engine",
            &engine,
            "-each",
            "st=1",
            "-maxmoves",
            "4294967296",
        ],
        "-maxmoves",
    );
    assert_refused(
        &[
            "match",
            "-engine",
            &engine,
            "-engine",
            &engine,
            "-each",
            "depth=4294967296",
        ],
        "depth",
    );
    let perft = run_agon(&["perft", "1"]);
    assert!(perft.status.success());
    assert!(String::from_utf8_lossy(&perft.stdout).starts_with("perft 1: "));
}

fn cases() -> usize {
    std::env::var("AGON_CLI_FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(500)
}

/// Numbers users and fuzzers type.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0",
    "+1",
    "20",
    "21",
    "64",
    "65",
    "255",
    "256",
    "257",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1e9",
    "0.5",
    "-0.5",
    "NaN",
    "inf",
    "-inf",
    "",
    " ",
    "x",
    "0x10",
    "1_000",
    "١",
];

/// Clocks, sound and broken.
const CLOCKS: &[&str] = &[
    "1+0.01",
    "40/60+0.6",
    "1:30+1",
    "inf",
    "0+0",
    "-1+0",
    "1+-1",
    "x+1",
    "0/10",
    "/",
    "1000000000:18446744073709500000",
    "1:99999999999999999999",
    "10+1e300",
    "1e20",
    "4294967296/1",
    "1/1/1",
    "1++1",
    ":",
    "1:",
    "NaN+1",
    "",
    "+",
];

fn pick<'a>(rng: &mut StdRng, items: &[&'a str]) -> &'a str {
    items.choose(rng).copied().unwrap_or_default()
}

/// A random piece of text: printable junk, control characters or unicode.
fn junk(rng: &mut StdRng) -> String {
    let length = rng.random_range(0..12);
    (0..length)
        .map(|_| match rng.random_range(0..4) {
            0 => char::from(rng.random_range(b'!'..=b'~')),
            1 => ['-', '=', '/', '+', ':', '.', ' '][rng.random_range(0..7)],
            2 => char::from_u32(rng.random_range(0x80..0x3000)).unwrap_or('?'),
            _ => char::from(rng.random_range(b'a'..=b'z')),
        })
        .collect()
}

struct Files {
    missing: String,
    garbage: String,
    directory: String,
    unwritable: String,
    positions: String,
}

fn files(dir: &Path, rng: &mut StdRng) -> Files {
    let garbage = dir.join("garbage");
    let bytes: Vec<u8> = (0..4096).map(|_| rng.random()).collect();
    std::fs::write(&garbage, bytes).unwrap();
    let positions = dir.join("positions.txt");
    std::fs::write(&positions, "startpos\nnot a fen\nstartpos ; moves f1f3\n").unwrap();
    Files {
        missing: dir.join("no-such-file").display().to_string(),
        garbage: garbage.display().to_string(),
        directory: dir.display().to_string(),
        unwritable: dir.join("no-such-dir/out").display().to_string(),
        positions: positions.display().to_string(),
    }
}

fn file<'a>(rng: &mut StdRng, files: &'a Files) -> &'a str {
    [
        &files.missing,
        &files.garbage,
        &files.directory,
        &files.unwritable,
        &files.positions,
    ]
    .choose(rng)
    .map(|s| s.as_str())
    .unwrap_or_default()
}

/// A value for an option: mostly numbers, clocks or files, sometimes junk.
fn value(rng: &mut StdRng, files: &Files) -> String {
    match rng.random_range(0..6) {
        0 | 1 => pick(rng, NUMBERS).to_string(),
        2 => pick(rng, CLOCKS).to_string(),
        3 => file(rng, files).to_string(),
        _ => junk(rng),
    }
}

fn match_args(rng: &mut StdRng, files: &Files) -> Vec<String> {
    let scripted = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/engines/scripted.py")
        .display()
        .to_string();
    let engines = [
        format!("cmd={scripted}"),
        "cmd=/no/such/engine".to_string(),
        format!("cmd={}", files.garbage),
        format!("cmd={}", files.directory),
        "cmd=".to_string(),
    ];
    let keys = [
        "tc",
        "st",
        "depth",
        "nodes",
        "name",
        "args",
        "option.Hash",
        "option.",
        "bogus",
    ];
    let options = [
        "-games",
        "-rounds",
        "-concurrency",
        "-maxmoves",
        "-maxgames",
        "-seed",
        "-timemargin",
        "-ratinginterval",
        "-tournament",
        "-pgnout",
        "-jsonl",
        "-state",
        "-resume",
        "-shard",
        "-repeat",
        "-recover",
        "-openings",
        "-sprt",
        "-timeout",
        "-bogus",
        "--games",
    ];
    let mut args = Vec::new();
    for _ in 0..rng.random_range(0..4) {
        args.push(
            if rng.random_bool(0.8) {
                "-engine"
            } else {
                "-each"
            }
            .to_string(),
        );
        args.push(engines.choose(rng).cloned().unwrap_or_default());
        for _ in 0..rng.random_range(0..3) {
            let key = keys.choose(rng).copied().unwrap_or_default();
            args.push(format!("{key}={}", value(rng, files)));
        }
    }
    for _ in 0..rng.random_range(0..5) {
        let option = options.choose(rng).copied().unwrap_or_default();
        args.push(option.to_string());
        match option {
            "-openings" => {
                args.push(if rng.random_bool(0.5) {
                    "random".into()
                } else {
                    format!("file={}", file(rng, files))
                });
                args.push(format!("plies={}", pick(rng, NUMBERS)));
            }
            "-sprt" => {
                for key in ["elo0", "elo1", "alpha", "beta"] {
                    args.push(format!("{key}={}", pick(rng, NUMBERS)));
                }
            }
            "-timeout" => args.push(format!("startup={}", pick(rng, NUMBERS))),
            "-shard" => args.push(format!("{}/{}", pick(rng, NUMBERS), pick(rng, NUMBERS))),
            "-repeat" | "-recover" => {}
            _ => args.push(value(rng, files)),
        }
    }
    // Keep accepted runs short: hostile numbers are in the other options.
    args.extend(["-maxgames".to_string(), "1".to_string()]);
    args
}

fn case(rng: &mut StdRng, files: &Files) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    let flag = |rng: &mut StdRng, name: &str, files: &Files| -> Vec<String> {
        vec![name.to_string(), value(rng, files)]
    };
    match rng.random_range(0..9) {
        0 => {
            args.push("perft".into());
            args.push(pick(rng, NUMBERS).into());
            if rng.random_bool(0.5) {
                args.extend(flag(rng, "--threads", files));
            }
            if rng.random_bool(0.3) {
                args.extend(["--fen".to_string(), junk(rng)]);
            }
            if rng.random_bool(0.3) {
                args.push("--divide".into());
            }
        }
        1 => {
            args.push("bench".into());
            args.push(pick(rng, NUMBERS).into());
            if rng.random_bool(0.5) {
                args.extend(flag(rng, "--threads", files));
            }
        }
        2..=4 => {
            args.push("match".into());
            args.extend(match_args(rng, files));
        }
        5 => {
            args.push("stats".into());
            for _ in 0..rng.random_range(0..3) {
                args.push(file(rng, files).into());
            }
            if rng.random_bool(0.3) {
                args.extend(["--jsonl".to_string(), file(rng, files).to_string()]);
            }
        }
        6 => {
            args.push("tune".into());
            for _ in 0..rng.random_range(0..3) {
                args.push(file(rng, files).into());
            }
            if rng.random_bool(0.5) {
                args.extend(flag(rng, "--result-weight", files));
            }
        }
        7 => {
            args.push("analyze".into());
            if rng.random_bool(0.5) {
                args.push(file(rng, files).into());
            }
            for name in [
                "--depth",
                "--nodes",
                "--movetime",
                "--hash",
                "--multipv",
                "--jobs",
            ] {
                if rng.random_bool(0.3) {
                    args.extend(flag(rng, name, files));
                }
            }
        }
        _ => {
            args.push(
                ["random", "uci", "bogus", "--seed", ""]
                    .choose(rng)
                    .copied()
                    .unwrap_or_default()
                    .into(),
            );
            if rng.random_bool(0.5) {
                args.extend(flag(rng, "--seed", files));
            }
        }
    }
    args
}

/// How long an accepted command may run before it is stopped (it is then
/// doing real work, such as a deep perft, and has passed the parsers).
const RUN_LIMIT: Duration = Duration::from_secs(2);

fn run_case(args: &[String]) -> Option<Output> {
    let child: Child = Command::new(AGON)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agon starts");
    let started = Instant::now();
    let mut child = child;
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn random_and_hostile_command_lines_never_panic_and_every_refusal_is_explained() {
    let dir = scratch_dir("fuzz");
    let mut rng = StdRng::seed_from_u64(
        std::env::var("AGON_CLI_FUZZ_SEED")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(12),
    );
    let files = files(&dir, &mut rng);
    let started = Instant::now();
    let (mut refused, mut accepted, mut stopped) = (0, 0, 0);
    for _ in 0..cases() {
        let args = case(&mut rng, &files);
        let Some(output) = run_case(&args) else {
            stopped += 1;
            continue;
        };
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(
            !message.contains("panicked") && output.status.code().is_some_and(|c| c != 101),
            "agon {args:?} panicked: {:?} {message}",
            output.status
        );
        if output.status.success() {
            accepted += 1;
        } else {
            refused += 1;
            assert!(
                message.lines().any(|l| l.starts_with("error")),
                "agon {args:?} refused without a message: {:?} {message:?}",
                output.status
            );
        }
    }
    eprintln!(
        "{} command lines in {:.1} s: {refused} refused with a message, {accepted} accepted, \
         {stopped} still running after {RUN_LIMIT:?} and stopped",
        cases(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        refused > cases() / 2,
        "most hostile command lines are refused"
    );
}
