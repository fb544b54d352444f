//! Lazy SMP: every thread runs its own iterative deepening over the shared
//! transposition table; the main thread reports, enforces the limits and
//! decides the move, then stops the helpers.

use super::negamax::{Shared, Worker};
use super::ordering::History;
use super::time::TimeManager;
use super::tt::TranspositionTable;
use super::{EngineOptions, Score, SearchControl, SearchLimits, SearchOutcome, SearchReport};
use crate::rules::{Game, legal_moves};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Searches `game`'s position with one thread per history in `histories`.
pub fn run(
    tt: &TranspositionTable,
    histories: &mut [History],
    options: &EngineOptions,
    game: &Game,
    limits: &SearchLimits,
    control: &SearchControl,
    report: &mut dyn FnMut(&SearchReport),
) -> SearchOutcome {
    let started = Instant::now();
    let root = *game.position();
    let legal: Vec<_> = legal_moves(&root).iter().copied().collect();
    let restricted: Vec<_> = legal
        .iter()
        .copied()
        .filter(|mv| limits.searchmoves.contains(mv))
        .collect();
    let root_moves = if restricted.is_empty() {
        legal
    } else {
        restricted
    };
    let shared = Shared {
        tt,
        stop: AtomicBool::new(false),
        control,
        limits,
        node_counts: (0..histories.len()).map(|_| AtomicU64::new(0)).collect(),
        history_keys: game.history_keys().collect(),
        root,
        root_moves,
        multipv: options.multipv,
        started,
        tuning: options.tuning,
    };
    let time = TimeManager::new(
        limits,
        Duration::from_millis(options.move_overhead_ms),
        control.pondering.load(Ordering::Relaxed),
    );
    let Some((main_history, helper_histories)) = histories.split_first_mut() else {
        return SearchOutcome {
            best: shared.root_moves.first().copied(),
            ponder: None,
            score: Score::Centi(0),
            depth: 0,
            nodes: 0,
        };
    };
    let result = std::thread::scope(|scope| {
        for (index, history) in helper_histories.iter_mut().enumerate() {
            let shared = &shared;
            scope.spawn(move || Worker::new(shared, index + 1, history, None).run_helper());
        }
        let result = Worker::new(&shared, 0, main_history, Some(time)).run_main(report);
        shared.stop.store(true, Ordering::Relaxed);
        result
    });
    let best_line = result.lines.first();
    SearchOutcome {
        best: best_line.map(|line| line.mv),
        ponder: best_line.and_then(|line| line.pv.get(1).copied()),
        score: match best_line {
            Some(line) if result.depth > 0 => super::to_score(line.score),
            _ => Score::Centi(0),
        },
        depth: result.depth,
        nodes: shared.total_nodes(),
    }
}
