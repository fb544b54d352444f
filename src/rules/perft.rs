//! Perft: counting move sequences to a fixed depth, the standard check of a
//! move generator, with bulk counting at the last ply and rayon over root
//! moves, and the divide lines that the protocol and `agon perft` print.

use super::movegen::{count_legal, legal_moves};
use super::notation::to_fen;
use super::position::Position;
use rayon::prelude::*;

/// The number of legal move sequences of length `depth` from `position`.
pub fn perft(position: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => count_legal(position),
        _ => legal_moves(position)
            .iter()
            .map(|&mv| perft(&position.make_move(mv), depth - 1))
            .sum(),
    }
}

/// Counts per root move, sorted by move text; with `threads > 1` the root
/// moves are shared out over a rayon pool of that size.
pub(crate) fn perft_divide(position: &Position, depth: u32, threads: usize) -> Vec<(String, u64)> {
    let moves: Vec<_> = legal_moves(position).iter().copied().collect();
    let child_depth = depth.saturating_sub(1);
    let count =
        |mv: &super::position::Move| (mv.to_string(), perft(&position.make_move(*mv), child_depth));
    let mut counts: Vec<(String, u64)> = if threads > 1 {
        match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            Ok(pool) => pool.install(|| moves.par_iter().map(count).collect()),
            Err(error) => {
                log::warn!("no thread pool ({error}); counting on one thread");
                moves.iter().map(count).collect()
            }
        }
    } else {
        moves.iter().map(count).collect()
    };
    counts.sort();
    log::debug!("divide of {} at depth {depth}", to_fen(position));
    counts
}

/// The divide as the protocol's `perft` and `agon perft --divide` print it:
/// `<move>: <count>` per root move, a blank line, then `Nodes searched:
/// <total>`.
pub(crate) fn divide_lines(position: &Position, depth: u32, threads: usize) -> Vec<String> {
    let counts = perft_divide(position, depth, threads);
    let total: u64 = counts.iter().map(|(_, count)| count).sum();
    let mut lines: Vec<String> = counts
        .iter()
        .map(|(mv, count)| format!("{mv}: {count}"))
        .collect();
    lines.push(String::new());
    lines.push(format!("Nodes searched: {total}"));
    lines
}
