//! Soak test: thousands of interleaved commands streamed to one engine
//! process without waiting for answers, with `stop` racing the end of
//! searches and `go` right after `stop`. Every `go` must get exactly one
//! legal `bestmove`, every `isready` one `readyok`, and memory must not grow.
//!
//! `AGON_SOAK_COMMANDS` sets the number of commands (default 3000).

mod common;

use agon::rules::{Game, GameResult, START_FEN, legal_moves, parse_fen};
use common::{Agon, perft_fens};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::thread;
use std::time::{Duration, Instant};

/// Resident memory of a process in KiB, from /proc.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A random position command and the game it sets up.
fn random_position(rng: &mut StdRng, fens: &[String]) -> (String, Game) {
    let fen = if rng.random_bool(0.5) {
        START_FEN.to_string()
    } else {
        fens[rng.random_range(0..fens.len())].clone()
    };
    let mut game = Game::new(parse_fen(&fen).expect("test FEN"));
    let mut moves = Vec::new();
    for _ in 0..rng.random_range(0..30) {
        if game.result() != GameResult::Ongoing {
            break;
        }
        let legal = legal_moves(game.position());
        let mv = legal.as_slice()[rng.random_range(0..legal.len())];
        game.play(mv);
        moves.push(mv.to_string());
    }
    let mut line = if fen == START_FEN {
        "position startpos".to_string()
    } else {
        format!("position fen {fen}")
    };
    if !moves.is_empty() {
        line.push_str(" moves ");
        line.push_str(&moves.join(" "));
    }
    (line, game)
}

#[test]
fn thousands_of_interleaved_commands_keep_every_promise() {
    let total: usize = std::env::var("AGON_SOAK_COMMANDS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(3000);
    let fens = perft_fens();
    let mut rng = StdRng::seed_from_u64(0x50A4);
    // The figures should show the engine's own memory, not glibc's caching:
    // one malloc arena (else one per thread that ever allocated, and every
    // search runs on a fresh thread), and a fixed mmap threshold so that a
    // freed transposition table goes back to the system instead of leaving
    // a hole in the heap (`setoption Hash` reallocates it again and again).
    let mut agon = Agon::start_with_env(
        &[],
        &[
            ("MALLOC_ARENA_MAX", "1"),
            ("MALLOC_MMAP_THRESHOLD_", "131072"),
        ],
    );
    agon.send("uci");
    agon.expect_line(|l| l == "uciok", common::PATIENCE);
    agon.send("setoption name Hash value 16");

    let mut game = Game::new(parse_fen(START_FEN).unwrap());
    let mut games_at_go: Vec<Game> = Vec::new();
    let mut isready_sent = 0usize;
    // Resident memory sampled along the way (without waiting for replies).
    let mut samples_kib: Vec<u64> = Vec::new();
    let started = Instant::now();
    for index in 0..total {
        // The first tenth is left out: the default 64 MiB table may still
        // be there before the first `setoption` is applied.
        if index % 50 == 0 && index >= total / 10 {
            samples_kib.extend(resident_kib(agon.pid()));
        }
        match rng.random_range(0..100) {
            0..=19 => {
                let (line, new_game) = random_position(&mut rng, &fens);
                agon.send(&line);
                game = new_game;
            }
            20..=39 => {
                agon.send(&format!("go nodes {}", rng.random_range(1..3000)));
                games_at_go.push(game.clone());
            }
            40..=49 => {
                agon.send(&format!("go movetime {}", rng.random_range(1..15)));
                games_at_go.push(game.clone());
                if rng.random_bool(0.5) {
                    thread::sleep(Duration::from_millis(rng.random_range(0..15)));
                    agon.send("stop");
                }
            }
            50..=57 => {
                // A search stopped at once, or racing its own end, then a new go.
                agon.send(if rng.random_bool(0.5) {
                    "go infinite"
                } else {
                    "go nodes 500"
                });
                games_at_go.push(game.clone());
                thread::sleep(Duration::from_micros(rng.random_range(0..3000)));
                agon.send("stop");
                if rng.random_bool(0.5) {
                    agon.send("go depth 1");
                    games_at_go.push(game.clone());
                }
            }
            58..=74 => {
                agon.send("isready");
                isready_sent += 1;
            }
            75..=84 => {
                let option = match rng.random_range(0..4) {
                    0 => format!("setoption name Hash value {}", rng.random_range(1..17)),
                    1 => format!("setoption name MultiPV value {}", rng.random_range(1..4)),
                    2 => format!("setoption name Threads value {}", rng.random_range(1..3)),
                    _ => "setoption name Clear Hash".to_string(),
                };
                agon.send(&option);
            }
            85..=89 => {
                agon.send("ucinewgame");
                game = Game::new(parse_fen(START_FEN).unwrap());
                agon.send("position startpos");
            }
            _ => agon.send("stop"),
        }
    }
    agon.send("setoption name Hash value 16");
    agon.send("setoption name Threads value 1");
    agon.send("isready");
    isready_sent += 1;
    // `isready` is answered at once while a search runs, so the last
    // `readyok` does not mean every queued `go` has answered: wait for both.
    let searches = games_at_go.len();
    let lines = agon.lines_until(
        {
            let counts = std::cell::Cell::new((0usize, 0usize));
            move |line: &str| {
                let (mut readyoks, mut bestmoves) = counts.get();
                readyoks += usize::from(line == "readyok");
                bestmoves += usize::from(line.starts_with("bestmove"));
                counts.set((readyoks, bestmoves));
                readyoks == isready_sent && bestmoves == searches
            }
        },
        Duration::from_secs(100),
    );
    let elapsed = started.elapsed();

    let errors: Vec<&String> = lines.iter().filter(|l| l.contains("error")).collect();
    assert!(errors.is_empty(), "unexpected errors: {errors:?}");
    let readyoks = lines.iter().filter(|l| *l == "readyok").count();
    assert_eq!(readyoks, isready_sent);
    let mut bestmoves: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("bestmove"))
        .cloned()
        .collect();
    // Nothing more may follow: a late extra bestmove would be a broken promise.
    while let Some(extra) = agon.next_line(Duration::from_millis(300)) {
        if extra.starts_with("bestmove") || extra == "readyok" {
            bestmoves.push(extra);
        }
    }
    assert_eq!(bestmoves.len(), games_at_go.len(), "one bestmove per go");
    for (reply, game) in bestmoves.iter().zip(&games_at_go) {
        let mv = reply.split_whitespace().nth(1).expect("a move word");
        if game.result() == GameResult::Ongoing {
            let mut check = game.clone();
            assert!(
                check.play_text(mv).is_ok(),
                "{reply} is not legal after {:?}",
                game.moves()
            );
        } else {
            assert_eq!(mv, "(none)", "the game was over: {reply}");
        }
    }

    samples_kib.extend(resident_kib(agon.pid()));
    // The same mix of commands (Hash from 1 to 16 MiB) runs throughout, so
    // a leak shows as a second half that needs more than the first; and the
    // whole run stays within the largest table plus a fixed allowance.
    let half = samples_kib.len() / 2;
    let first_peak = samples_kib[..half].iter().max().copied().unwrap_or(0);
    let second_peak = samples_kib[half..].iter().max().copied().unwrap_or(0);
    eprintln!(
        "soak: {total} commands, {} searches, {readyoks} isready, {elapsed:?}, peak RSS {first_peak} KiB then {second_peak} KiB",
        games_at_go.len()
    );
    assert!(
        second_peak <= first_peak + 16 * 1024,
        "memory grew: peak {first_peak} KiB in the first half, {second_peak} KiB in the second"
    );
    assert!(
        first_peak.max(second_peak) <= (16 + 48) * 1024,
        "memory beyond a 16 MiB table plus 48 MiB"
    );
    agon.send("quit");
    assert!(agon.wait_exit(common::PATIENCE).success());
}
