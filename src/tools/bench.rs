//! The `bench` subcommand: a fixed set of positions searched to a fixed
//! depth with fresh tables each, one thread, printing the node count (the
//! engine's signature: identical on every run of the same code) and speed.

use crate::rules::{Game, START_FEN, legal_moves, parse_fen, start_position, to_fen};
use crate::search::{Engine, EngineOptions, SearchControl, SearchLimits};
use std::io::{self, Write};
use std::time::Instant;

/// The depth used when none is given.
pub const DEFAULT_DEPTH: u32 = 12;

/// The deepest bench accepted: far beyond what finishes in a day.
pub const MAX_DEPTH: u32 = 64;

/// Positions from the perft suite that are still being played: pending
/// captures, captured queens, crowded centres, blocked steps.
const SUITE_FENS: [&str; 16] = [
    "6/7/2q5/3G4g/4Q1G3/3Gg1g4/4ggG2g/4G4/7G/7/6 b",
    "5G/3G1g1/8/5Q3/3qG5/1g4g1G2/4G5/3gg1g2/3G4/7/6 w",
    "2G1g1/G4G1/8/3q5/g6g2/1G7G1/10/9/1gG2Q1g/7/3g2 b",
    "q1G2g/G5G/8/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
    "6/7/8/3Q5/4Ggg3/3GGqgg3/3GGg4/4Gg3/8/7/6 b",
    "6/7/8/5G3/4QG1g2/3GgqGG3/4gg4/3g1G3/2g5/7/6 b",
    "6/7/2G5/1q3G3/5G4/3gGQg*G1g1/6g3/5g3/2g5/2G4/6 b",
    "1G4/1G5/8/9/3qG*g4/3G2g4/3Ggg4/3ggQ3/5G2/7/6 w",
    "6/7/2G4G/G4g3/3gG1G2G/4gQ*g4/4ggq3/9/8/7/6 w",
    "6/7/8/2g1GG3/4GQ4/4Gq*g4/3GGg3g/4gg3/8/7/6 b",
    "6/7/5g2/3q4g/4G5/3GG1G4/4g*g*G1g1/3gQ4/2G5/7/6 b",
    "6/7/8/5G3/3GGGQ3/3gG*qg4/3G*gg4/3g1g3/8/7/6 w",
    "6/7/2q2G2/4Gg3/4G5/2g1G1Gg3/4g*5/2G1Qg3/8/g6/6 w",
    "6/7/2GGg3/9/10/3g1q1gg2/2G2G*4/3G1g3/1g6/G4Q1/6 b",
    "6/7/8/9/G9/4gQ*G4/5G4/9/G7/G6/qgggg1 w",
    "q4G/7/8/9/10/11/10/5Gg2/4g3/G4g1/g4Q w",
];

/// Races to the formation from match games, a side with four or more
/// guards around its queen on the throne: the positions where the search
/// tries the steps that threaten the formation (`Search QuiescenceThreats`).
const RACE_FENS: [&str; 2] = [
    "6/7/8/2G2g3/2g2G4/3gGQGq3/4GGg3/3g5/5g2/7/6 b 46",
    "6/7/3G4/1G1Gg4/2g7/4gqg1G2/6Q3/3gg4/2G5/2G4/6 w 45",
];

/// How many positions are reached by playing from the start.
const PLAYED_COUNT: u64 = 14;

/// A position reached from the start by `plies` moves, each picked from the
/// legal moves by a fixed pseudo-random sequence seeded with `seed`.
fn played_position(seed: u64, plies: u32) -> String {
    let mut game = Game::new(start_position());
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..plies {
        let moves = legal_moves(game.position());
        if moves.is_empty() || game.position().formation_outcome().is_some() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        game.play(moves.as_slice()[(state % moves.len() as u64) as usize]);
    }
    to_fen(game.position())
}

/// Every bench position, in order.
pub fn bench_fens() -> Vec<String> {
    let mut fens = vec![START_FEN.to_string()];
    fens.extend(SUITE_FENS.iter().map(|fen| fen.to_string()));
    fens.extend((1..=PLAYED_COUNT).map(|seed| played_position(seed, 6 + 3 * seed as u32)));
    fens.extend(RACE_FENS.iter().map(|fen| fen.to_string()));
    fens
}

/// Searches every bench position to `depth` with `threads` threads, one
/// line each, then the total as `<nodes> nodes <nps> nps` on the last line.
/// With one thread the node count is the search's signature; with more it
/// varies from run to run, and the total time (nodes / nps) compared with
/// one thread's is the parallel search's time-to-depth speed-up.
/// `use_network` chooses the evaluation (`None`: the engine's default).
pub fn run_bench(
    out: &mut impl Write,
    depth: u32,
    threads: usize,
    use_network: Option<bool>,
) -> io::Result<()> {
    let limits = SearchLimits {
        depth: Some(depth),
        ..SearchLimits::default()
    };
    let mut options = EngineOptions {
        hash_mib: 16,
        threads,
        ..EngineOptions::default()
    };
    if let Some(use_network) = use_network {
        options.tuning.use_network = use_network;
    }
    let started = Instant::now();
    let mut total = 0u64;
    for (index, fen) in bench_fens().iter().enumerate() {
        let position = parse_fen(fen).map_err(|e| io::Error::other(format!("{fen}: {e}")))?;
        let game = Game::new(position);
        if legal_moves(&position).is_empty() {
            continue;
        }
        let mut engine = Engine::new(options).map_err(io::Error::other)?;
        let outcome = engine.search(&game, &limits, &SearchControl::default(), |_| {});
        total += outcome.nodes;
        let best = outcome
            .best
            .map_or_else(|| "none".to_string(), |mv| mv.to_string());
        writeln!(
            out,
            "{:>2} {fen:<52} nodes {:>9} best {best} score {}",
            index + 1,
            outcome.nodes,
            outcome.score
        )?;
    }
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    writeln!(out, "{total} nodes {} nps", (total as f64 / seconds) as u64)?;
    out.flush()
}
