//! The search: iterative deepening alpha-beta over the rules core, driven by
//! limits and a stop flag, reporting each finished iteration.

pub mod eval;

use crate::rules::{Game, GameResult, Move, Position, legal_moves};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A score from the side to move's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Score {
    /// Hundredths of a guard.
    Centi(i32),
    /// A forced end in this many moves: positive wins, negative loses.
    Mate(i32),
}

/// Whether a reported score is exact or only a bound.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The true score.
    Exact,
    /// The true score is at least this.
    Lower,
    /// The true score is at most this.
    Upper,
}

/// The clock of the side to move, as given by `go`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Clock {
    /// Time left.
    pub time: Duration,
    /// Increment per move.
    pub increment: Duration,
    /// Moves until the next time control, if any.
    pub moves_to_go: Option<u32>,
}

/// What the caller asked the search to respect. All limits combine: the
/// search stops at the first one reached.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    /// Maximum depth in plies.
    pub depth: Option<u32>,
    /// Maximum nodes.
    pub nodes: Option<u64>,
    /// Exact time to spend.
    pub movetime: Option<Duration>,
    /// The side to move's clock.
    pub clock: Option<Clock>,
    /// Stop once a win in this many moves is found.
    pub mate: Option<u32>,
    /// Search until stopped.
    pub infinite: bool,
    /// Restrict the root to these moves (empty = all).
    pub searchmoves: Vec<Move>,
}

/// One line of a finished (or partly finished) iteration.
#[derive(Clone, Debug)]
pub struct SearchReport {
    /// Iteration depth.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// 1-based index among the MultiPV lines.
    pub multipv: u32,
    /// The line's score.
    pub score: Score,
    /// Exact or a bound.
    pub bound: Bound,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// Transposition table fill, per mille.
    pub hashfull: u32,
    /// The principal variation.
    pub pv: Vec<Move>,
}

/// What the search settled on.
#[derive(Clone, Debug)]
pub struct SearchOutcome {
    /// The move to play (none only when the game is over).
    pub best: Option<Move>,
    /// The expected reply, for pondering.
    pub ponder: Option<Move>,
    /// The score of `best`.
    pub score: Score,
    /// The last completed depth.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
}

/// Flags shared between the protocol front end and a running search.
#[derive(Clone, Debug, Default)]
pub struct SearchControl {
    /// Set to end the search as soon as possible.
    pub stop: Arc<AtomicBool>,
    /// Set while pondering: no time limit applies until it is cleared.
    pub pondering: Arc<AtomicBool>,
}

/// Engine settings that the protocol's options change.
#[derive(Clone, Copy, Debug)]
pub struct EngineOptions {
    /// Transposition table size in MiB.
    pub hash_mib: usize,
    /// Search threads.
    pub threads: usize,
    /// Number of principal variations to report.
    pub multipv: usize,
    /// Time kept back per move for communication, in milliseconds.
    pub move_overhead_ms: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hash_mib: 64,
            threads: 1,
            multipv: 1,
            move_overhead_ms: 30,
        }
    }
}

/// The searcher with its tables; one per engine process.
pub struct Engine {
    options: EngineOptions,
}

const MATE: i32 = 1_000_000;

impl Engine {
    /// A new engine with the given options.
    pub fn new(options: EngineOptions) -> Engine {
        Engine { options }
    }

    /// The options in force.
    pub fn options(&self) -> EngineOptions {
        self.options
    }

    /// Changes the options (resizing tables when needed).
    pub fn set_options(&mut self, options: EngineOptions) {
        self.options = options;
    }

    /// Forgets everything learned (hash, histories): a new game.
    pub fn clear(&mut self) {}

    /// Searches the current position of `game` within `limits`, calling
    /// `report` after each iteration; returns when a limit is reached or
    /// `control.stop` is set. The game must not be over.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        control: &SearchControl,
        mut report: impl FnMut(&SearchReport),
    ) -> SearchOutcome {
        let started = Instant::now();
        let root = *game.position();
        let mut moves: Vec<Move> = legal_moves(&root).iter().copied().collect();
        if !limits.searchmoves.is_empty() {
            moves.retain(|mv| limits.searchmoves.contains(mv));
        }
        let mut outcome = SearchOutcome {
            best: moves.first().copied(),
            ponder: None,
            score: Score::Centi(0),
            depth: 0,
            nodes: 0,
        };
        let deadline = limits
            .movetime
            .or(limits.clock.map(|c| c.time / 30 + c.increment / 2));
        let max_depth = limits.depth.unwrap_or(if limits.infinite { 64 } else { 4 });
        let mut nodes = 0u64;
        for depth in 1..=max_depth {
            let mut best = None;
            let mut alpha = -MATE - 1;
            for &mv in &moves {
                let child = root.make_move(mv);
                let score = -negamax(&child, depth - 1, -MATE - 1, -alpha, &mut nodes);
                if score > alpha {
                    alpha = score;
                    best = Some(mv);
                }
                if control.stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            if control.stop.load(Ordering::Relaxed) {
                break;
            }
            outcome.best = best;
            outcome.depth = depth;
            outcome.nodes = nodes;
            outcome.score = Score::Centi(alpha);
            report(&SearchReport {
                depth,
                seldepth: depth,
                multipv: 1,
                score: outcome.score,
                bound: Bound::Exact,
                nodes,
                elapsed: started.elapsed(),
                hashfull: 0,
                pv: best.into_iter().collect(),
            });
            if deadline.is_some_and(|d| started.elapsed() * 2 > d) {
                break;
            }
        }
        while (limits.infinite || control.pondering.load(Ordering::Relaxed))
            && !control.stop.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        outcome
    }
}

fn negamax(position: &Position, depth: u32, mut alpha: i32, beta: i32, nodes: &mut u64) -> i32 {
    *nodes += 1;
    let game = Game::new(*position);
    if let GameResult::Win { winner, .. } = game.result() {
        return if winner == position.side_to_move() {
            MATE
        } else {
            -MATE
        };
    }
    if depth == 0 {
        return eval::evaluate(position);
    }
    for &mv in legal_moves(position).iter() {
        let score = -negamax(&position.make_move(mv), depth - 1, -beta, -alpha, nodes);
        if score >= beta {
            return score;
        }
        alpha = alpha.max(score);
    }
    alpha
}
