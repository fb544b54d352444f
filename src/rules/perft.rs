//! Perft: counting move sequences to a fixed depth, the standard check of a
//! move generator, with bulk counting at the last ply and rayon over root
//! moves, and the divide lines that the protocol and `agon perft` print.

use super::movegen::{count_legal, legal_moves};
use super::notation::to_fen;
use super::position::Position;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// The number of legal move sequences of length `depth` from `position`.
pub fn perft(position: &Position, depth: u32) -> u64 {
    // A flag nobody else holds is never set, so the count always completes.
    perft_until(position, depth, &AtomicBool::new(false)).unwrap_or(0)
}

/// As [`perft`], or `None` once `stop` is set: a deep count (the protocol
/// allows depth 20) must not outlast the program's `quit` or a Ctrl-C.
pub fn perft_until(position: &Position, depth: u32, stop: &AtomicBool) -> Option<u64> {
    match depth {
        0 => Some(1),
        1 => Some(count_legal(position)),
        // Checked above the last two plies only, where it costs nothing.
        _ if depth > 2 && stop.load(Ordering::Relaxed) => None,
        _ => legal_moves(position)
            .iter()
            .map(|&mv| perft_until(&position.make_move(mv), depth - 1, stop))
            .sum(),
    }
}

/// Counts per root move, sorted by move text, or `None` once `stop` is set;
/// with `threads > 1` the root moves are shared out over a rayon pool of
/// that size.
pub(crate) fn perft_divide(
    position: &Position,
    depth: u32,
    threads: usize,
    stop: &AtomicBool,
) -> Option<Vec<(String, u64)>> {
    let moves: Vec<_> = legal_moves(position).iter().copied().collect();
    let child_depth = depth.saturating_sub(1);
    let count = |mv: &super::position::Move| {
        perft_until(&position.make_move(*mv), child_depth, stop).map(|n| (mv.to_string(), n))
    };
    let mut counts: Vec<(String, u64)> = if threads > 1 {
        match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            Ok(pool) => pool.install(|| moves.par_iter().map(count).collect()),
            Err(error) => {
                log::warn!("no thread pool ({error}); counting on one thread");
                moves.iter().map(count).collect::<Option<_>>()
            }
        }
    } else {
        moves.iter().map(count).collect::<Option<_>>()
    }?;
    counts.sort();
    log::debug!("divide of {} at depth {depth}", to_fen(position));
    Some(counts)
}

/// The divide as the protocol's `perft` and `agon perft --divide` print it:
/// `<move>: <count>` per root move, a blank line, then `Nodes searched:
/// <total>`.
pub(crate) fn divide_lines(
    position: &Position,
    depth: u32,
    threads: usize,
    stop: &AtomicBool,
) -> Option<Vec<String>> {
    let counts = perft_divide(position, depth, threads, stop)?;
    let total: u64 = counts.iter().map(|(_, count)| count).sum();
    let mut lines: Vec<String> = counts
        .iter()
        .map(|(mv, count)| format!("{mv}: {count}"))
        .collect();
    lines.push(String::new());
    lines.push(format!("Nodes searched: {total}"));
    Some(lines)
}
