//! The search: the public interface (limits, control flags, reports,
//! options) of a Lazy SMP alpha-beta engine with a shared transposition
//! table; the tree search, evaluation, ordering and clock live in the
//! submodules.

mod correction;
pub mod eval;
mod eval_cache;
mod negamax;
pub mod nnue;
mod ordering;
pub mod params;
#[cfg(test)]
mod tests;
mod threads;
pub(crate) mod time;
pub(crate) mod tt;

use crate::rules::{Game, Move};
use ordering::History;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
pub(crate) use tt::TableTooLarge;
use tt::TranspositionTable;

/// Hints the processor to bring the cache line of `item` in: the tables
/// are probed a move later, once the child's accumulator is made.
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let pointer = item as *const T as *const i8;
        // SAFETY: prefetching is a hint and cannot fault; the pointer is to
        // a live value.
        unsafe { std::arch::x86_64::_mm_prefetch(pointer, std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// The positions of docs/throne-races.txt (races to the formation from
/// match games), for the tests of every layer that treats them apart.
#[cfg(test)]
pub(crate) fn throne_race_positions() -> Vec<crate::rules::Position> {
    include_str!("../../docs/throne-races.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|fen| crate::rules::parse_fen(fen).unwrap())
        .collect()
}

/// A score from the side to move's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Score {
    /// Hundredths of a guard.
    Centi(i32),
    /// A forced end in this many moves: positive wins, negative loses.
    Mate(i32),
}

/// The protocol's spelling: `cp <n>` or `mate <n>`.
impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Centi(cp) => write!(f, "cp {cp}"),
            Score::Mate(moves) => write!(f, "mate {moves}"),
        }
    }
}

/// Whether a reported score is exact or only a bound.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Bound {
    /// The true score.
    Exact,
    /// The true score is at least this.
    Lower,
    /// The true score is at most this.
    Upper,
}

/// The clock of the side to move, as given by `go`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Clock {
    /// Time left.
    pub time: Duration,
    /// Increment per move.
    pub increment: Duration,
    /// Moves until the next time control, if any.
    pub moves_to_go: Option<u32>,
    /// The delay outside the engine the caller's clock has been charging
    /// per move (pipes, the caller's own work), as measured from earlier
    /// moves of the game ([`time::MoveLag`]); `None` before it is known.
    pub lag: Option<Duration>,
}

/// What the caller asked the search to respect. All limits combine: the
/// search stops at the first one reached.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchLimits {
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
    /// When the move's time began (the caller's clock started when it sent
    /// `go`); the start of the search when absent.
    pub started: Option<Instant>,
}

impl SearchLimits {
    /// Whether only the clock bounds the search (no depth, nodes, movetime,
    /// mate or infinite), so the engine decides how long to think.
    pub(crate) fn clock_only(&self) -> bool {
        self.clock.is_some()
            && self.depth.is_none()
            && self.nodes.is_none()
            && self.movetime.is_none()
            && self.mate.is_none()
            && !self.infinite
    }
}

/// One line of a finished (or partly finished) iteration.
#[derive(Clone, Debug)]
pub(crate) struct SearchReport {
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
pub(crate) struct SearchOutcome {
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

/// A move to play, with the reply the search expects to it.
pub(crate) type BestMove = (Move, Option<Move>);

/// Flags shared between the protocol front end and a running search.
#[derive(Clone, Debug, Default)]
pub(crate) struct SearchControl {
    /// Set to end the search as soon as possible.
    pub stop: Arc<AtomicBool>,
    /// Set while pondering: no time limit applies until it is cleared.
    pub pondering: Arc<AtomicBool>,
    /// The move the search would play now, with the reply it expects,
    /// updated after every iteration: at the deadline the caller can answer
    /// with it even while the search thread waits for a processor.
    pub best_so_far: Arc<Mutex<Option<BestMove>>>,
}

/// The most search threads (the `Threads` option's maximum); the tools'
/// thread and job counts share it.
pub const MAX_THREADS: u64 = 256;

/// The largest transposition table, MiB (the `Hash` option's maximum); the
/// tools' table sizes share it.
pub const MAX_HASH_MIB: u64 = 65_536;

/// The most lines a search reports (the `MultiPV` option's maximum).
pub const MAX_MULTIPV: u64 = 256;

/// How often a finished search held back by `go infinite` or pondering
/// checks whether it may answer; short enough to be invisible next to a
/// GUI's latency.
const HOLD_POLL: Duration = Duration::from_millis(1);

impl SearchControl {
    /// Records the move to play if the search ended now.
    pub(crate) fn publish_best(&self, best: Move, ponder: Option<Move>) {
        *self
            .best_so_far
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((best, ponder));
    }

    /// The move recorded last, if any.
    pub(crate) fn best_so_far(&self) -> Option<BestMove> {
        *self
            .best_so_far
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits while the caller must not see the answer yet: a search under
    /// `infinite` answers only after `stop`, one that ponders only after
    /// `stop` or `ponderhit`.
    pub(crate) fn hold_answer(&self, limits: &SearchLimits) {
        while !self.stop.load(Ordering::SeqCst)
            && (limits.infinite || self.pondering.load(Ordering::SeqCst))
        {
            std::thread::sleep(HOLD_POLL);
        }
    }
}

/// Parts of the search that can be switched off and the weight of each
/// evaluation term: developer settings, so that a match can measure what
/// each part is worth without a rebuild. The default is the engine as it
/// plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tuning {
    /// Probe and store the transposition table (cut-offs and its move).
    pub transposition_table: bool,
    /// Try the two killer moves of a ply early.
    pub killers: bool,
    /// Order quiet moves by their history of cut-offs.
    pub history: bool,
    /// Late move reductions.
    pub reductions: bool,
    /// Late move pruning near the leaves.
    pub move_pruning: bool,
    /// Aspiration windows around the previous iteration's score.
    pub aspiration: bool,
    /// Quiescence search at the horizon (off: the static evaluation).
    pub quiescence: bool,
    /// Probe and store the transposition table in the quiescence search.
    pub quiescence_table: bool,
    /// The quiescence search's first ply also tries the quiet moves that
    /// threaten to complete the formation, as chess engines try checks.
    pub quiescence_threats: bool,
    /// Null-move pruning: a node whose opponent cannot catch up even
    /// with a free move is cut off after a reduced search.
    pub null_move: bool,
    /// Reverse futility pruning: near the leaves, a static evaluation far
    /// above beta is taken as the node's score.
    pub static_pruning: bool,
    /// Futility pruning: near the leaves, the quiet moves of a node whose
    /// static evaluation is far below alpha are not searched.
    pub futility: bool,
    /// Internal iterative reductions: a node the table knows no move for
    /// is searched a ply shallower, as its move order is a guess.
    pub iterative_reduction: bool,
    /// Late move reductions by history: quiet moves that have cut off
    /// often are reduced less, those that failed often more.
    pub history_reductions: bool,
    /// Singular extensions: the table's move is searched a ply deeper when
    /// a reduced search of the other moves shows it is the only good one.
    pub singular: bool,
    /// A side facing a formation threat searches one ply deeper, as a
    /// chess engine extends checks.
    pub threat_extension: bool,
    /// Steps into the throne's ring or onto the throne, the moves that
    /// build or block the formation, come right after the captures and
    /// are never reduced or pruned, as captures are not.
    pub throne_steps: bool,
    /// Order quiet moves also by their cut-offs right after the opponent's
    /// move to the same cell (a continuation history of one ply).
    pub continuation_history: bool,
    /// Order captures by their own history of cut-offs (a bonus when one
    /// cuts off, a malus to those tried before any move that does).
    pub capture_history: bool,
    /// Prune by whether the side to move is improving: reverse futility a
    /// ply's margin sooner and late move pruning later while its static
    /// evaluation rises from its previous turn, late move pruning sooner
    /// while it falls (by `Search MovePruningImproving` percent).
    pub improving: bool,
    /// Correct the static evaluation by what searches found it off by in
    /// positions with the same pieces near the throne.
    pub correction: bool,
    /// Where the table holds a bound on the node's score that lies beyond
    /// the static evaluation on the bound's side, pruning reads the bound.
    pub table_eval: bool,
    /// Razoring: near the leaves, a node whose static evaluation is far
    /// below alpha ends with a quiescence search that confirms it.
    pub razoring: bool,
    /// Order first, after the killers, the quiet move that last refuted
    /// the opponent's move just played (the counter-move).
    pub counter_moves: bool,
    /// Time by stability: a move whose best move keeps changing gets more
    /// of its budget, one whose best move is settled less.
    pub stability_time: bool,
    /// Fade the evaluation with the plies gone without an inward step or
    /// a relocation (`Search ProgressPlies` sets how fast).
    pub progress: bool,
    /// Centi-guards by which the searching side rates a repetition below
    /// an even score.
    pub contempt: i32,
    /// Each evaluation term's weight in percent, indexed by
    /// [`eval::Term`].
    pub eval_percent: eval::TermPercents,
    /// Evaluate with the network (off: the hand-written terms of [`eval`],
    /// weighted by `eval_percent`).
    pub use_network: bool,
    /// The network evaluating when `use_network` is on.
    pub network: nnue::NetworkRef,
    /// The numeric parameters: margins, reductions, time use.
    pub params: params::Params,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            transposition_table: true,
            killers: true,
            history: true,
            reductions: true,
            move_pruning: true,
            aspiration: true,
            quiescence: true,
            quiescence_table: false,
            quiescence_threats: true,
            null_move: true,
            static_pruning: true,
            futility: false,
            iterative_reduction: false,
            history_reductions: false,
            singular: false,
            threat_extension: false,
            throne_steps: false,
            continuation_history: false,
            capture_history: false,
            improving: false,
            correction: false,
            table_eval: false,
            razoring: false,
            counter_moves: false,
            stability_time: true,
            progress: false,
            contempt: 0,
            eval_percent: eval::FULL_PERCENTS,
            use_network: true,
            network: nnue::NetworkRef(nnue::Network::embedded()),
            params: params::Params::default(),
        }
    }
}

/// Engine settings that the protocol's options change.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EngineOptions {
    /// Transposition table size in MiB.
    pub hash_mib: usize,
    /// Search threads.
    pub threads: usize,
    /// Number of principal variations to report.
    pub multipv: usize,
    /// Time kept back per move for communication, in milliseconds.
    pub move_overhead_ms: u64,
    /// Developer switches and evaluation weights.
    pub tuning: Tuning,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hash_mib: 64,
            threads: 1,
            multipv: 1,
            move_overhead_ms: 30,
            tuning: Tuning::default(),
        }
    }
}

/// The searcher with its tables; one per engine process.
pub(crate) struct Engine {
    options: EngineOptions,
    tt: TranspositionTable,
    histories: Vec<History>,
}

/// The score of a win at the root itself; a win `n` plies away scores
/// `MATE - n`.
pub(crate) const MATE: i32 = 32_000;
/// Deepest ply a search line may reach.
pub(crate) const MAX_PLY: usize = 128;
/// Scores at least this far from zero are wins or losses.
pub(crate) const MATE_BOUND: i32 = MATE - MAX_PLY as i32 - 1;
/// Beyond every score.
pub(crate) const INFINITY: i32 = MATE + 1;

/// The reported form of an internal score.
pub(crate) fn to_score(score: i32) -> Score {
    if score >= MATE_BOUND {
        Score::Mate((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Score::Mate(-((MATE + score + 1) / 2))
    } else {
        Score::Centi(score)
    }
}

impl Engine {
    /// A new engine with the given options, or an error where the system
    /// will not give the memory of its hash table.
    pub(crate) fn new(options: EngineOptions) -> Result<Engine, TableTooLarge> {
        Ok(Engine {
            options,
            tt: TranspositionTable::new(options.hash_mib)?,
            histories: (0..options.threads.max(1))
                .map(|_| History::new())
                .collect(),
        })
    }

    /// Changes the options (resizing tables when needed). Where the new
    /// table's memory cannot be had, nothing changes.
    pub(crate) fn set_options(&mut self, options: EngineOptions) -> Result<(), TableTooLarge> {
        if options.hash_mib != self.options.hash_mib {
            self.tt = TranspositionTable::new(options.hash_mib)?;
            self.options.hash_mib = options.hash_mib;
        }
        self.adjust_options(|adjusted| *adjusted = options);
        Ok(())
    }

    /// Changes the options but the table's size, which cannot fail: the
    /// table stays as it is whatever `change` does to `Hash`.
    pub(crate) fn adjust_options(&mut self, change: impl FnOnce(&mut EngineOptions)) {
        let mut options = self.options;
        change(&mut options);
        options.hash_mib = self.options.hash_mib;
        self.histories
            .resize_with(options.threads.max(1), History::new);
        self.options = options;
    }

    /// Forgets everything learned (hash, histories): a new game.
    pub(crate) fn clear(&mut self) {
        self.tt.clear();
        for history in &mut self.histories {
            *history = History::new();
        }
    }

    /// Searches the current position of `game` within `limits`, calling
    /// `report` after each iteration (one report per MultiPV line, best
    /// first); returns when a limit is reached or `control.stop` is set, and
    /// never earlier than `stop` under `infinite` or while pondering. The
    /// game must not be over.
    pub(crate) fn search(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        control: &SearchControl,
        mut report: impl FnMut(&SearchReport),
    ) -> SearchOutcome {
        self.tt.new_search();
        threads::run(
            &self.tt,
            &mut self.histories,
            &self.options,
            game,
            limits,
            control,
            &mut report,
        )
    }
}
