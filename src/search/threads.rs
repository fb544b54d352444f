//! Lazy SMP: every thread runs its own iterative deepening over the shared
//! transposition table; the main thread reports and enforces the limits,
//! then stops the helpers; the move comes from the deepest completed
//! iteration of any thread.

use super::negamax::{Shared, Worker, fades_without_progress};
use super::ordering::History;
use super::time::TimeManager;
use super::tt::TranspositionTable;
use super::{EngineOptions, Score, SearchControl, SearchLimits, SearchOutcome, SearchReport};
use crate::rules::{Game, legal_moves};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Searches `game`'s position with one thread per history in `histories`.
pub(crate) fn run(
    tt: &TranspositionTable,
    histories: &mut [History],
    options: &EngineOptions,
    game: &Game,
    limits: &SearchLimits,
    control: &SearchControl,
    report: &mut dyn FnMut(&SearchReport),
) -> SearchOutcome {
    // The move's time runs from when it was asked for: what happened
    // since (a thread starting, waiting for a processor) is spent already.
    let started = limits.started.unwrap_or_else(Instant::now);
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
        root_plies_without_progress: u32::try_from(game.plies_without_progress())
            .unwrap_or(u32::MAX),
        fades_without_progress: fades_without_progress(&options.tuning, &root),
        root,
        root_moves,
        multipv: options.multipv,
        started,
        tuning: options.tuning,
        main_depth: AtomicU32::new(0),
        deepest_helper: Mutex::new(None),
    };
    let time = TimeManager::new(
        limits,
        Duration::from_millis(options.move_overhead_ms),
        started,
        control.pondering.load(Ordering::Relaxed),
        &options.tuning.params,
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
    let mut result = std::thread::scope(|scope| {
        // Set when the main worker ends, and also when it panics: the scope
        // waits for the helpers, which stop only on this flag.
        let _stop_helpers = StopOnDrop(&shared.stop);
        for (index, history) in helper_histories.iter_mut().enumerate() {
            let shared = &shared;
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                Worker::new(shared, index + 1, history, None).run_helper();
            });
            if let Err(e) = spawned {
                log::warn!(
                    "search thread {} not started ({e}): searching with fewer",
                    index + 1
                );
                break;
            }
        }
        Worker::new(&shared, 0, main_history, Some(time)).run_main(report)
    });
    // A helper that completed a deeper iteration than the main thread saw
    // further: its move is played (one line only, and never past a depth
    // limit, which must be exact).
    let deepest = shared
        .deepest_helper
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(helper) = deepest
        && helper.depth > result.depth
        && options.multipv <= 1
        && limits.depth.is_none()
    {
        report(&SearchReport {
            depth: helper.depth,
            seldepth: helper.seldepth,
            multipv: 1,
            score: super::to_score(helper.line.score),
            bound: helper.line.bound,
            nodes: shared.total_nodes(),
            elapsed: started.elapsed(),
            hashfull: tt.hashfull(),
            pv: helper.line.pv.clone(),
        });
        result.depth = helper.depth;
        result.lines = vec![helper.line];
    }
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

/// Sets the flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    #[test]
    fn helpers_stop_when_the_main_worker_panics() {
        let stop = AtomicBool::new(false);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            std::thread::scope(|scope| {
                let _stop_helpers = StopOnDrop(&stop);
                // A helper runs until told to stop, as the search's do.
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::yield_now();
                    }
                });
                panic!("the main worker fails");
            })
        }));
        assert!(
            outcome.is_err(),
            "the panic goes on, once the helper stopped"
        );
    }
}
