//! The tree search of one thread: iterative deepening with aspiration
//! windows over a principal variation search, quiescence over captures and
//! formation moves, and the game's endings, repetitions and mate distances
//! checked at every node.

use super::eval::{capture_cells, evaluate, guards_around_held_throne, has_win_threat};
use super::nnue::AccumulatorStack;
use super::ordering::{History, Killers, MoveScores, OrderedMoves, steps_to_throne};
use super::params::{Param, Params};
use super::time::TimeManager;
use super::tt::TranspositionTable;
use super::{
    Bound, INFINITY, MATE, MATE_BOUND, MAX_PLY, SearchControl, SearchLimits, SearchReport, Tuning,
    to_score,
};
use crate::rules::geometry::{Bitboard, NEAR_THRONE, THRONE_RING};
use crate::rules::movegen::{generate_legal, generate_legal_to};
use crate::rules::position::FormationOutcome;
use crate::rules::{Move, MoveList, Position, has_legal_move};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// Deepest iteration ever started.
pub const MAX_DEPTH: u32 = 100;
/// How often (in nodes) the main thread looks at the clock and the flags.
const POLL_INTERVAL: u64 = 1024;
/// Repetition filter size: a quick "certainly not seen" before scanning.
const FILTER_SIZE: usize = 4096;
/// Plies of quiescence search at most.
const QUIESCENCE_DEPTH: u32 = 8;
/// Plies of quiescence search in which formation threats are answered.
const QUIESCENCE_EVASION_DEPTH: u32 = 2;

/// What all threads of one search share.
pub struct Shared<'a> {
    /// The transposition table.
    pub tt: &'a TranspositionTable,
    /// Set when the search must end (by the main thread or the caller).
    pub stop: AtomicBool,
    /// The caller's flags.
    pub control: &'a SearchControl,
    /// The caller's limits.
    pub limits: &'a SearchLimits,
    /// Nodes searched per thread, published every poll interval.
    pub node_counts: Vec<AtomicU64>,
    /// Keys of the positions of the game so far, the root included.
    pub history_keys: Vec<u64>,
    /// Plies the game has gone without progress before the root (see
    /// [`crate::rules::Position::is_progress`]).
    pub root_plies_without_progress: u32,
    /// Whether this search fades its scores without progress (see
    /// [`fades_without_progress`]), decided once for all its threads.
    pub fades_without_progress: bool,
    /// The position searched.
    pub root: Position,
    /// The moves the root may play.
    pub root_moves: Vec<Move>,
    /// Lines to report.
    pub multipv: usize,
    /// When the search started.
    pub started: Instant,
    /// Which parts of the search run, and the evaluation's weights.
    pub tuning: Tuning,
    /// The iteration the main thread is in.
    pub main_depth: AtomicU32,
    /// The deepest iteration a helper thread has completed, with its best
    /// line.
    pub deepest_helper: Mutex<Option<HelperLine>>,
}

/// A helper thread's best line after a completed iteration.
#[derive(Clone, Debug)]
pub struct HelperLine {
    /// The iteration's depth.
    pub depth: u32,
    /// The deepest ply the helper reached.
    pub seldepth: u32,
    /// The best root move with its score and line.
    pub line: RootMove,
}

impl Shared<'_> {
    /// Nodes of all threads as last published.
    pub fn total_nodes(&self) -> u64 {
        self.node_counts
            .iter()
            .map(|count| count.load(Ordering::Relaxed))
            .sum()
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A root move with its latest score and line.
#[derive(Clone, Debug)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Its score in the last search of it (-INFINITY when it failed low).
    pub score: i32,
    /// Exact or a bound.
    pub bound: Bound,
    /// The depth of that search.
    pub depth: i32,
    /// The line it starts.
    pub pv: Vec<Move>,
}

/// What a node is expected to be, from its place in the tree: on the
/// principal line, or off it and expected to fail high (a cut node, whose
/// first move usually refutes) or low (an all node, every move searched).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Node {
    Pv,
    Cut,
    All,
}

impl Node {
    /// The node its first move leads to: off the principal line, a cut
    /// node's first reply is expected to fail low, and an all node's to
    /// refute.
    fn first_child(self) -> Node {
        match self {
            Node::Pv => Node::Pv,
            Node::Cut => Node::All,
            Node::All => Node::Cut,
        }
    }

    /// The node a null-window search at full depth leads to (of a later
    /// move, or after a pass): below a cut node it is expected to fail low,
    /// below any other to be cut off.
    fn null_window_child(self) -> Node {
        if self == Node::Cut {
            Node::All
        } else {
            Node::Cut
        }
    }
}

/// Where the main thread's search ended.
pub struct MainResult {
    /// The root moves of the last completed iteration, best first.
    pub lines: Vec<RootMove>,
    /// The last completed depth.
    pub depth: u32,
}

/// Limits only the main thread enforces.
struct MainDuties {
    time: TimeManager,
    node_limit: Option<u64>,
    /// Nodes of the other threads at the last poll.
    others: u64,
}

/// One search thread.
pub struct Worker<'a, 'h> {
    shared: &'a Shared<'a>,
    id: usize,
    nodes: u64,
    seldepth: usize,
    history: &'h mut History,
    killers: Killers,
    pv: Vec<Move>,
    pv_len: [usize; MAX_PLY + 1],
    path: Vec<u64>,
    filter: Vec<u8>,
    reductions: &'static [[i32; 64]; 64],
    root_moves: Vec<RootMove>,
    duties: Option<MainDuties>,
    /// The network's accumulators along the line, when it evaluates.
    accumulators: Option<AccumulatorStack>,
    /// Whether the move into each ply was a passed turn (a null move), so
    /// that two passes never follow each other.
    passed: [bool; MAX_PLY + 2],
    /// The move that reached each ply (none at the root and after a pass),
    /// for the continuation history and the race extension.
    played: [Option<Move>; MAX_PLY + 2],
    /// Plies without progress (no inward step, no relocation) up to each
    /// ply, the game's included.
    plies_without_progress: [u32; MAX_PLY + 2],
    /// The static evaluation at each ply of the line, where one was
    /// taken, to tell whether the side to move is improving.
    static_evals: [Option<i32>; MAX_PLY + 2],
    /// The depth of the iteration under way.
    iteration: i32,
}

/// Late move reductions by depth and move index for the parameters'
/// values, computed once for each pair of values a process uses (a fresh
/// table per search would cost more than a small search itself).
fn reduction_table(params: &Params) -> &'static [[i32; 64]; 64] {
    type Table = [[i32; 64]; 64];
    static TABLES: Mutex<Vec<((i32, i32), &'static Table)>> = Mutex::new(Vec::new());
    let key = (
        params[Param::ReductionBase],
        params[Param::ReductionDivisor],
    );
    let mut tables = TABLES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&(_, table)) = tables.iter().find(|(known, _)| *known == key) {
        return table;
    }
    let base = f64::from(key.0) / 100.0;
    let divisor = f64::from(key.1.max(1)) / 100.0;
    let table: &'static Table = Box::leak(Box::new(std::array::from_fn(|depth| {
        std::array::from_fn(|count| {
            if depth > 0 && count > 0 {
                (base + (depth as f64).ln() * (count as f64).ln() / divisor) as i32
            } else {
                0
            }
        })
    })));
    tables.push((key, table));
    table
}

/// `score` faded linearly with the plies gone without progress (past the
/// grace), to half of it after `half_after` plies and no further: the side
/// that stands better then gains by pressing inward, where walking around a
/// ring keeps its advantage on the board but never wins (a game is drawn by
/// repetition or goes on forever). The fade stops at half so that it never
/// outweighs what the position is worth.
fn fade_without_progress(score: i32, plies: u32, half_after: i32) -> i32 {
    let half_after = i64::from(half_after.max(1));
    let plies = i64::from(plies).min(half_after);
    let faded = i64::from(score) * (2 * half_after - plies) / (2 * half_after);
    i32::try_from(faded).unwrap_or(score)
}

/// Whether a search fades its scores without progress: with `Search
/// Progress`, once the root stands `ProgressMargin` ahead, so that a won
/// position is pressed home while a level one is played as it is.
pub fn fades_without_progress(tuning: &Tuning, root: &Position) -> bool {
    if !tuning.progress {
        return false;
    }
    let margin = tuning.params[Param::ProgressMargin];
    margin == 0
        || if tuning.use_network {
            tuning.network.0.evaluate_position(root)
        } else {
            evaluate(root, &tuning.eval_percent)
        } >= margin
}

fn filter_slot(key: u64) -> usize {
    (key as usize) & (FILTER_SIZE - 1)
}

impl<'a, 'h> Worker<'a, 'h> {
    /// A worker for thread `id`; the main thread (id 0) gets the clock and
    /// enforces the limits.
    pub fn new(
        shared: &'a Shared<'a>,
        id: usize,
        history: &'h mut History,
        time: Option<TimeManager>,
    ) -> Worker<'a, 'h> {
        let mut filter = vec![0u8; FILTER_SIZE];
        for &key in &shared.history_keys {
            filter[filter_slot(key)] = filter[filter_slot(key)].saturating_add(1);
        }
        let duties = time.map(|time| MainDuties {
            time,
            node_limit: shared.limits.nodes,
            others: 0,
        });
        let null = Move::new(crate::rules::Cell::THRONE, crate::rules::Cell::THRONE);
        history.evals.prepare(&shared.tuning);
        Worker {
            shared,
            id,
            nodes: 0,
            seldepth: 0,
            history,
            killers: Killers::new(),
            pv: vec![null; (MAX_PLY + 1) * (MAX_PLY + 1)],
            pv_len: [0; MAX_PLY + 1],
            path: Vec::with_capacity(MAX_PLY + 1),
            filter,
            reductions: reduction_table(&shared.tuning.params),
            root_moves: Vec::new(),
            duties,
            accumulators: shared
                .tuning
                .use_network
                .then(|| AccumulatorStack::new(shared.tuning.network.0)),
            passed: [false; MAX_PLY + 2],
            played: [None; MAX_PLY + 2],
            plies_without_progress: [shared.root_plies_without_progress; MAX_PLY + 2],
            static_evals: [None; MAX_PLY + 2],
            iteration: 0,
        }
    }

    fn order_root(&mut self) {
        let root = self.shared.root;
        let tt_move = self.probe(root.key(), 0).and_then(|hit| hit.mv);
        let mut list = MoveList::default();
        generate_legal(&root, &mut list);
        let mut scores = MoveScores::default();
        let ordered = OrderedMoves::new(
            &root,
            &mut list,
            &mut scores,
            tt_move,
            0,
            &self.killers,
            None,
            self.history,
            None,
            self.shared.tuning.throne_steps,
            self.shared.tuning.capture_history,
        );
        self.root_moves = ordered
            .filter(|mv| self.shared.root_moves.contains(mv))
            .map(|mv| RootMove {
                mv,
                score: -INFINITY,
                bound: Bound::Upper,
                depth: 0,
                pv: vec![mv],
            })
            .collect();
    }

    /// The main thread's search: iterates, reports through `report`, and
    /// enforces every limit; returns the last completed iteration.
    pub fn run_main(&mut self, report: &mut dyn FnMut(&SearchReport)) -> MainResult {
        self.order_root();
        if let Some(first) = self.root_moves.first() {
            self.shared.control.publish_best(first.mv, None);
        }
        let mut result = MainResult {
            lines: self.root_moves.clone(),
            depth: 0,
        };
        let limits = self.shared.limits;
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let lines = self.shared.multipv.clamp(1, self.root_moves.len().max(1));
        let mut previous = 0;
        let mut stability = Stability::default();
        for depth in 1..=max_depth {
            if self.root_moves.is_empty() {
                break;
            }
            self.shared.main_depth.store(depth, Ordering::Relaxed);
            if !self.iterate(depth as i32, lines, &mut previous) {
                if lines == 1
                    && let Some(line) = self.proven_in_part(depth as i32, &result)
                {
                    self.shared
                        .control
                        .publish_best(line.mv, line.pv.get(1).copied());
                    report(&self.line_report(depth, 1, &line));
                    result.lines = vec![line];
                }
                break;
            }
            result = MainResult {
                lines: self.root_moves.clone(),
                depth,
            };
            let best = &self.root_moves[0];
            self.shared
                .control
                .publish_best(best.mv, best.pv.get(1).copied());
            for (index, line) in self.root_moves.iter().take(lines).enumerate() {
                report(&self.line_report(depth, index as u32 + 1, line));
            }
            let best = self.root_moves[0].score;
            let mate_found = limits.mate.is_some_and(|moves| {
                best >= MATE_BOUND
                    && (MATE - best + 1) / 2 <= i32::try_from(moves).unwrap_or(i32::MAX)
            });
            let decided = best.abs() >= MATE_BOUND && depth as i32 > MATE - best.abs() + 2;
            // On clocks only: a movetime is to be used in full.
            let percent = if self.shared.tuning.stability_time && limits.clock_only() {
                stability.after(self.root_moves[0].mv)
            } else {
                100
            };
            let out_of_time = self
                .duties
                .as_ref()
                .is_some_and(|d| d.time.soft_expired(percent));
            // Time spent on a forced move is time lost for the next ones.
            let forced = self.root_moves.len() == 1 && limits.clock_only();
            if mate_found || out_of_time || forced || (decided && limits.depth.is_none()) {
                break;
            }
        }
        self.publish_nodes();
        self.shared.control.hold_answer(self.shared.limits);
        result
    }

    /// The report of `line`, searched to `depth`, as line `multipv`; its
    /// node count includes the main thread's nodes up to now, also those of
    /// a depth cut short.
    fn line_report(&self, depth: u32, multipv: u32, line: &RootMove) -> SearchReport {
        self.publish_nodes();
        SearchReport {
            depth,
            seldepth: self.seldepth as u32,
            multipv,
            score: to_score(line.score),
            bound: line.bound,
            nodes: self.shared.total_nodes(),
            elapsed: self.shared.started.elapsed(),
            hashfull: self.shared.tt.hashfull(),
            pv: line.pv.clone(),
        }
    }

    /// The move an iteration to `depth`, cut short, found better than the
    /// best of the last completed one (`before`): it was searched to `depth`
    /// and beat the old best's score at that depth, so it is the better
    /// guess, where waiting for the iteration to end would have played it.
    /// The time of an iteration cut short is then not lost, which matters
    /// most when a move has only a few milliseconds.
    fn proven_in_part(&self, depth: i32, before: &MainResult) -> Option<RootMove> {
        let previous_best = before.lines.first()?.mv;
        self.root_moves
            .iter()
            .filter(|line| line.depth == depth && line.score > -INFINITY)
            .max_by_key(|line| line.score)
            .filter(|line| line.mv != previous_best)
            .cloned()
    }

    /// A helper thread's search: iterates until the main thread stops it.
    pub fn run_helper(&mut self) {
        self.order_root();
        let lines = self.shared.multipv.clamp(1, self.root_moves.len().max(1));
        let mut previous = 0;
        // Each helper keeps one or two plies ahead of the main thread, so
        // that the table fills with deeper results and one of them may
        // complete an iteration the main thread has not.
        let ahead = 1 + (self.id as u32 + 1) % 2;
        let mut depth = 1;
        loop {
            depth = depth.max(self.shared.main_depth.load(Ordering::Relaxed) + ahead);
            if depth > MAX_DEPTH
                || self.root_moves.is_empty()
                || !self.iterate(depth as i32, lines, &mut previous)
            {
                break;
            }
            let mut deepest = self
                .shared
                .deepest_helper
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if deepest.as_ref().is_none_or(|known| known.depth < depth) {
                *deepest = Some(HelperLine {
                    depth,
                    seldepth: self.seldepth as u32,
                    line: self.root_moves[0].clone(),
                });
            }
            drop(deepest);
            depth += 1;
        }
        self.publish_nodes();
    }

    /// One iteration over all MultiPV lines; false when it was cut short.
    fn iterate(&mut self, depth: i32, lines: usize, previous: &mut i32) -> bool {
        self.iteration = depth;
        for line in 0..lines {
            let mut delta = self.shared.tuning.params[Param::AspirationDelta];
            let (mut alpha, mut beta) = if self.shared.tuning.aspiration && depth >= 5 && line == 0
            {
                (
                    (*previous - delta).max(-INFINITY),
                    (*previous + delta).min(INFINITY),
                )
            } else {
                (-INFINITY, INFINITY)
            };
            loop {
                let score = self.root_search(depth, alpha, beta, line);
                if self.shared.stopped() {
                    return false;
                }
                self.root_moves[line..].sort_by_key(|root_move| std::cmp::Reverse(root_move.score));
                if score <= alpha && alpha > -INFINITY {
                    beta = (alpha + beta) / 2;
                    alpha = (score - delta).max(-INFINITY);
                } else if score >= beta && beta < INFINITY {
                    beta = (score + delta).min(INFINITY);
                } else {
                    break;
                }
                delta *= 2;
            }
            // A later line may come out above an earlier one (the table
            // knows more by then): the lines are reported best first.
            self.root_moves[..=line].sort_by_key(|root_move| std::cmp::Reverse(root_move.score));
            if line == 0 {
                *previous = self.root_moves[0].score;
            }
        }
        true
    }

    fn root_search(&mut self, depth: i32, mut alpha: i32, beta: i32, first: usize) -> i32 {
        let root = self.shared.root;
        self.track(0, &root);
        let mut best = -INFINITY;
        for index in first..self.root_moves.len() {
            let mv = self.root_moves[index].mv;
            let child = root.make_move(mv);
            self.descend(0, &root, Some(mv));
            let score = if index == first {
                -self.negamax(&child, depth - 1, -beta, -alpha, 1, Node::Pv)
            } else {
                let probe = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, 1, Node::Cut);
                if probe > alpha && probe < beta {
                    -self.negamax(&child, depth - 1, -beta, -alpha, 1, Node::Pv)
                } else {
                    probe
                }
            };
            if self.shared.stopped() {
                return best;
            }
            let entry = &mut self.root_moves[index];
            entry.depth = depth;
            if index == first || score > alpha {
                entry.score = score;
                entry.bound = if score >= beta {
                    Bound::Lower
                } else if score <= alpha {
                    Bound::Upper
                } else {
                    Bound::Exact
                };
                entry.pv.clear();
                entry.pv.push(mv);
                entry
                    .pv
                    .extend_from_slice(&self.pv[(MAX_PLY + 1) + 1..(MAX_PLY + 1) + self.pv_len[1]]);
            } else {
                entry.score = -INFINITY;
            }
            best = best.max(score);
            if score > alpha {
                alpha = score;
                if score >= beta {
                    break;
                }
            }
        }
        best
    }

    fn publish_nodes(&self) {
        self.shared.node_counts[self.id].store(self.nodes, Ordering::Relaxed);
    }

    /// Counts a node; the main thread also checks its limits and the
    /// caller's flags. Returns true when the search must unwind.
    #[inline]
    fn visit(&mut self, ply: usize) -> bool {
        // A re-search may still be tried after a stop; it must not count.
        if self.shared.stopped() {
            return true;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if let Some(duties) = &mut self.duties {
            if let Some(limit) = duties.node_limit
                && self.nodes + duties.others >= limit
            {
                self.shared.stop.store(true, Ordering::Relaxed);
            }
            if self.nodes.is_multiple_of(POLL_INTERVAL) {
                duties.others =
                    self.shared.total_nodes() - self.shared.node_counts[0].load(Ordering::Relaxed);
                let control = self.shared.control;
                if duties.time.pondering() && !control.pondering.load(Ordering::Relaxed) {
                    duties.time.ponder_hit();
                }
                if control.stop.load(Ordering::Relaxed) || duties.time.hard_expired() {
                    self.shared.stop.store(true, Ordering::Relaxed);
                }
            }
        } else if self.nodes.is_multiple_of(POLL_INTERVAL) {
            self.publish_nodes();
        }
        self.shared.stopped()
    }

    fn is_repetition(&self, key: u64) -> bool {
        self.filter[filter_slot(key)] != 0
            && (self.path.iter().rev().skip(1).step_by(2).any(|&k| k == key)
                || self.shared.history_keys.contains(&key))
    }

    /// A repetition's score for the side to move at `ply`: the side that
    /// searches counts a draw as `contempt` below zero, so that it plays on
    /// rather than repeat in a position it judges about even or better.
    fn draw_score(&self, ply: usize) -> i32 {
        let contempt = self.shared.tuning.contempt;
        if ply.is_multiple_of(2) {
            -contempt
        } else {
            contempt
        }
    }

    fn enter(&mut self, key: u64) {
        self.path.push(key);
        let slot = &mut self.filter[filter_slot(key)];
        *slot = slot.saturating_add(1);
    }

    fn leave(&mut self) {
        if let Some(key) = self.path.pop() {
            let slot = &mut self.filter[filter_slot(key)];
            *slot = slot.saturating_sub(1);
        }
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let row = ply * (MAX_PLY + 1);
        let child_row = (ply + 1) * (MAX_PLY + 1);
        self.pv[row + ply] = mv;
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for index in ply + 1..child_len {
            self.pv[row + index] = self.pv[child_row + index];
        }
        self.pv_len[ply] = child_len;
    }

    fn negamax(
        &mut self,
        position: &Position,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        node: Node,
    ) -> i32 {
        self.pv_len[ply] = ply;
        if depth <= 0 {
            if self.is_repetition(position.key()) {
                return self.draw_score(ply);
            }
            return self.horizon(position, alpha, beta, ply);
        }
        if self.visit(ply) {
            return 0;
        }
        // Here and not above: at the horizon quiescence records the position.
        self.track(ply, position);
        if let Some(score) = terminal_score(position, ply) {
            return score;
        }
        let key = position.key();
        if self.is_repetition(key) {
            return self.draw_score(ply);
        }
        if ply >= MAX_PLY {
            return self.evaluate(position, ply);
        }
        // No line through here can end sooner than a win next move or later
        // than a loss right now.
        let alpha = alpha.max(-MATE + ply as i32);
        let beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        self.enter(key);
        let score = self.search_moves(position, depth, alpha, beta, ply, node, None);
        self.leave();
        score
    }

    /// The moves of a node that is not a leaf; `excluded`, the table's
    /// move, is left out when the node is searched to see whether that move
    /// is singular (the search then neither reads nor writes the table).
    #[allow(clippy::too_many_arguments)]
    fn search_moves(
        &mut self,
        position: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        node: Node,
        excluded: Option<Move>,
    ) -> i32 {
        let pv_node = node == Node::Pv;
        let key = position.key();
        let us = position.side_to_move();
        let shared = self.shared;
        let tuning = &shared.tuning;
        let params = &tuning.params;
        // A formation threat is this game's check and is answered a ply
        // deeper; within twice the iteration's depth, so that a chain of
        // threats cannot run away. Without the extension the threat is
        // looked at only once the table has not cut the node off.
        let within_extensions = (ply as i32) < 2 * self.iteration;
        let threat_before_probe =
            (tuning.threat_extension && within_extensions).then(|| has_win_threat(position, !us));
        let at_least = |guards: Option<u32>, threshold: Param| {
            guards.is_some_and(|guards| i64::from(guards) >= i64::from(params[threshold]))
        };
        // A guard stepping next to its queen on the throne closes in on the
        // formation as a check closes in on mate; the reply is searched a
        // ply deeper so that the race is followed to its end.
        let race_step = within_extensions
            && self.played[ply].is_some_and(|mv| mv.to().bit() & THRONE_RING != 0)
            && at_least(
                guards_around_held_throne(position, !us),
                Param::RaceExtensionThroneGuards,
            );
        let depth = depth + i32::from(threat_before_probe == Some(true)) + i32::from(race_step);
        let hit = if excluded.is_none() {
            self.probe(key, ply)
        } else {
            None
        };
        if let Some(hit) = hit
            && !pv_node
            && hit.depth >= depth
            && hit.decides(alpha, beta)
        {
            return hit.score;
        }
        let threatened = threat_before_probe.unwrap_or_else(|| has_win_threat(position, !us));
        // The static evaluation stands for the node's worth only away from
        // the principal line and from mate scores, and never for a side that
        // must relocate or answer a threat: it has no spare tempo.
        // A race to the formation hides from a pass and from the static
        // evaluation alike: neither sees the opponent's guards close the
        // ring move by move.
        let their_ring = guards_around_held_throne(position, !us);
        let racing_at = |threshold: Param| at_least(their_ring, threshold);
        let reverse_futile = tuning.static_pruning
            && depth <= params[Param::StaticPruningDepth]
            && !racing_at(Param::StaticPruningThroneGuards);
        let may_pass = tuning.null_move
            && depth >= params[Param::NullMoveDepth]
            && !self.passed[ply]
            && !racing_at(Param::NullMoveThroneGuards);
        let futile_quiets = tuning.futility && depth <= params[Param::FutilityDepth];
        let razor = tuning.razoring && depth <= params[Param::RazorDepth];
        let static_eval = (!pv_node
            && excluded.is_none()
            && !threatened
            && position.captured(us) == 0
            && beta.abs() < MATE_BOUND
            && (reverse_futile || may_pass || futile_quiets || razor))
            .then(|| self.evaluate(position, ply));
        let raw_eval = static_eval;
        let static_eval = static_eval.map(|raw| self.corrected(position, raw));
        if excluded.is_none() {
            self.static_evals[ply] = static_eval;
        }
        let static_eval = static_eval.map(|eval| match hit {
            Some(hit) if tuning.table_eval && hit.bounds_beyond(eval) => hit.score,
            _ => eval,
        });
        // A rising evaluation is likelier to stay above beta and a falling
        // one to need its late moves: a side whose evaluation has risen
        // since its last turn (trend 1) is cut off by reverse futility
        // sooner and has its late moves pruned later than one whose has not
        // (trend -1). A side in a race to the formation, which a rising
        // evaluation does not see, counts as not improving.
        let trend = if !tuning.improving {
            0
        } else if !racing_at(Param::NullMoveThroneGuards)
            && improving(&self.static_evals[..ply], static_eval)
        {
            1
        } else {
            -1
        };
        if let Some(static_eval) = static_eval {
            if reverse_futile
                && static_eval - params[Param::StaticPruningMargin] * (depth - i32::from(trend > 0))
                    >= beta
            {
                return static_eval;
            }
            if may_pass
                && static_eval >= beta
                && let Some(score) = self.null_move_search(position, depth, beta, ply, node)
            {
                return score;
            }
            if razor && static_eval + params[Param::RazorMargin] * depth < alpha {
                let score = self.horizon(position, alpha, alpha + 1, ply);
                if score <= alpha {
                    return score;
                }
            }
        }
        let prune_quiets = futile_quiets
            && static_eval
                .is_some_and(|eval| eval + params[Param::FutilityMargin] * depth <= alpha);
        let mut moves = MoveList::default();
        generate_legal(position, &mut moves);
        if moves.is_empty() {
            return -MATE + ply as i32;
        }
        let tt_move = hit.and_then(|hit| hit.mv);
        // Without the table's move the order is a guess: a shallower search
        // costs less and fills the table for the next iteration.
        let depth = if tuning.iterative_reduction
            && tt_move.is_none()
            && depth >= params[Param::IirDepth]
        {
            depth - 1
        } else {
            depth
        };

        // The table's move is searched a ply deeper when every other move
        // falls well short of its score; when even a reduced search of the
        // others beats beta, so would the node (a multi-cut).
        let mut singular = false;
        if let Some(hit) = hit
            && let Some(tt_move) = tt_move
            && tuning.singular
            && depth >= params[Param::SingularDepth]
            && hit.depth >= depth - 3
            && hit.bound != Bound::Upper
            && hit.score.abs() < MATE_BOUND
            && (ply as i32) < 2 * self.iteration
        {
            let singular_beta = hit.score - params[Param::SingularMargin] * depth;
            let score = self.search_moves(
                position,
                (depth - 1) / 2,
                singular_beta - 1,
                singular_beta,
                ply,
                if pv_node { Node::All } else { node },
                Some(tt_move),
            );
            if self.shared.stopped() {
                return 0;
            }
            if score < singular_beta {
                singular = true;
            } else if singular_beta >= beta {
                return singular_beta;
            }
        }

        let original_alpha = alpha;
        self.killers.clear_children(ply);
        let previous = self.previous_move(ply);
        let counter = self
            .counter_to(ply)
            .and_then(|answered| self.history.counter(position, answered));
        let mut scores = MoveScores::default();
        let mut ordered = OrderedMoves::new(
            position,
            &mut moves,
            &mut scores,
            tt_move,
            ply,
            &self.killers,
            counter,
            self.history,
            previous,
            tuning.throne_steps,
            tuning.capture_history,
        );
        // In a race the steps into the ring close it or block it: reducing or
        // pruning them hides the race as a pass would.
        let racing = racing_at(Param::RingStepThroneGuards)
            || at_least(
                guards_around_held_throne(position, us),
                Param::RingStepThroneGuards,
            );
        let mut best = -INFINITY;
        let mut best_move = None;
        let mut quiets_tried: [Option<Move>; 32] = [None; 32];
        let mut quiet_count = 0;
        let mut captures_tried: [Option<Move>; 16] = [None; 16];
        let mut capture_count = 0;
        let mut index = 0;
        while let Some(mv) = ordered.next() {
            if Some(mv) == excluded {
                continue;
            }
            let capture = ordered.is_capture(mv);
            let quiet = !capture
                && Some(mv) != tt_move
                && !((tuning.throne_steps || racing) && steps_to_throne(mv));
            if prune_quiets && quiet && !ordered.wins(mv) && best > -MATE_BOUND {
                index += 1;
                continue;
            }
            if tuning.move_pruning
                && quiet
                && !pv_node
                && !threatened
                && depth <= params[Param::MovePruningDepth]
                && index as i32
                    >= (params[Param::MovePruningBase]
                        + params[Param::MovePruningFactor] * depth * depth)
                        * (100 + params[Param::MovePruningImproving] * trend)
                        / 100
                && best > -MATE_BOUND
            {
                index += 1;
                continue;
            }
            let child = position.make_move(mv);
            self.shared.tt.prefetch(child.key());
            self.history.evals.prefetch(child.key());
            self.descend(ply, position, Some(mv));
            let extension = i32::from(singular && Some(mv) == tt_move);
            let score = if index == 0 {
                -self.negamax(
                    &child,
                    depth - 1 + extension,
                    -beta,
                    -alpha,
                    ply + 1,
                    node.first_child(),
                )
            } else {
                let reduction =
                    if tuning.reductions && depth >= 3 && quiet && !threatened && index >= 2 {
                        let base = self.reductions[depth.min(63) as usize][index.min(63)];
                        let by_history = if tuning.history_reductions {
                            self.history.get(position, previous, mv)
                                / params[Param::ReductionHistory].max(1)
                        } else {
                            0
                        };
                        let expected_cut = if node == Node::Cut {
                            params[Param::CutNodeReduction]
                        } else {
                            0
                        };
                        let killer_reduction = params[Param::KillerReduction];
                        let refuted_a_sibling =
                            if killer_reduction != 0 && self.killers.contains(ply, mv) {
                                killer_reduction
                            } else {
                                0
                            };
                        (base - i32::from(pv_node) + expected_cut - refuted_a_sibling - by_history)
                            .clamp(0, depth - 2)
                    } else {
                        0
                    };
                // A reduced move is expected to fail low, so its reply to
                // refute it.
                let mut score = -self.negamax(
                    &child,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    if reduction > 0 {
                        Node::Cut
                    } else {
                        node.null_window_child()
                    },
                );
                if score > alpha && reduction > 0 {
                    score = -self.negamax(
                        &child,
                        depth - 1,
                        -alpha - 1,
                        -alpha,
                        ply + 1,
                        node.null_window_child(),
                    );
                }
                if score > alpha && score < beta && pv_node {
                    score = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, Node::Pv);
                }
                score
            };
            if self.shared.stopped() {
                return 0;
            }
            index += 1;
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        if !capture {
                            self.reward(position, ply, depth, mv, &quiets_tried[..quiet_count]);
                        }
                        if tuning.capture_history {
                            self.reward_captures(
                                position,
                                depth,
                                capture.then_some(mv),
                                &captures_tried[..capture_count],
                            );
                        }
                        break;
                    }
                }
            }
            if !capture && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = Some(mv);
                quiet_count += 1;
            }
            if capture && capture_count < captures_tried.len() {
                captures_tried[capture_count] = Some(mv);
                capture_count += 1;
            }
        }
        let bound = bound_of(best, original_alpha, beta);
        if excluded.is_none() {
            self.store(key, ply, best_move, best, depth, bound);
            // A bound on the wrong side of the evaluation says nothing of
            // its error, and a capture's gain is the quiescence search's.
            if tuning.correction
                && let Some(raw) = raw_eval
                && !best_move.is_some_and(|mv| ordered.is_capture(mv))
                && best.abs() < MATE_BOUND
                && !(bound == Bound::Lower && best <= raw)
                && !(bound == Bound::Upper && best >= raw)
            {
                self.history.correction.learn(position, depth, raw, best);
            }
        }
        best
    }

    /// The static evaluation `raw` of `position` with the thread's
    /// correction, when it is on.
    fn corrected(&self, position: &Position, raw: i32) -> i32 {
        if self.shared.tuning.correction && raw.abs() < MATE_BOUND {
            self.history
                .correction
                .corrected(position, raw)
                .clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
        } else {
            raw
        }
    }

    /// Null-move pruning: the side to move passes, and a reduced search
    /// that still fails high although the opponent moved twice cuts the
    /// node off.
    fn null_move_search(
        &mut self,
        position: &Position,
        depth: i32,
        beta: i32,
        ply: usize,
        node: Node,
    ) -> Option<i32> {
        let params = &self.shared.tuning.params;
        let reduction =
            params[Param::NullMoveReduction] + depth / params[Param::NullMoveDivisor].max(1);
        self.passed[ply + 1] = true;
        self.descend(ply, position, None);
        let score = -self.negamax(
            &position.with_turn_passed(),
            depth - 1 - reduction,
            -beta,
            -beta + 1,
            ply + 1,
            node.null_window_child(),
        );
        self.passed[ply + 1] = false;
        // A mate found after a pass is no proof of a mate.
        (score >= beta && !self.shared.stopped()).then(|| score.min(MATE_BOUND - 1))
    }

    fn probe(&self, key: u64, ply: usize) -> Option<super::tt::TtHit> {
        if self.shared.tuning.transposition_table {
            self.shared.tt.probe(key, ply)
        } else {
            None
        }
    }

    /// Stores a result, when the table is in use.
    fn store(&self, key: u64, ply: usize, mv: Option<Move>, score: i32, depth: i32, bound: Bound) {
        if self.shared.tuning.transposition_table {
            self.shared.tt.store(key, ply, mv, score, depth, bound);
        }
    }

    /// Records the line's position at `ply` for the network's accumulators.
    #[inline]
    fn track(&mut self, ply: usize, position: &Position) {
        if let Some(stack) = &mut self.accumulators {
            stack.set(ply, position);
        }
    }

    /// Records the move from `ply` to the next (`None` for a passed turn);
    /// the count without progress only when something reads it.
    #[inline]
    fn descend(&mut self, ply: usize, position: &Position, mv: Option<Move>) {
        self.played[ply + 1] = mv;
        if self.shared.tuning.progress {
            self.plies_without_progress[ply + 1] = match mv {
                Some(mv) if position.is_progress(mv) => 0,
                _ => self.plies_without_progress[ply].saturating_add(1),
            };
        }
    }

    /// The static evaluation: the one place where the network and the
    /// hand-written terms meet, and where the searching side's advantage
    /// fades while nothing moves inward. Its disadvantage fades by
    /// `ProgressBehindPercent` of that: a faded disadvantage draws it to
    /// keep the position closed when behind.
    fn evaluate(&mut self, position: &Position, ply: usize) -> i32 {
        let key = position.key();
        let score = self.history.evals.get(key).unwrap_or_else(|| {
            let score = match &mut self.accumulators {
                Some(stack) => stack.evaluate(ply),
                None => evaluate(position, &self.shared.tuning.eval_percent),
            };
            self.history.evals.store(key, score);
            score
        });
        if !self.shared.fades_without_progress {
            return score;
        }
        let tuning = &self.shared.tuning;
        let searching_side_ahead = if ply.is_multiple_of(2) {
            score > 0
        } else {
            score < 0
        };
        let share_percent = if searching_side_ahead {
            100
        } else {
            tuning.params[Param::ProgressBehindPercent]
        };
        if share_percent == 0 {
            return score;
        }
        let faded = fade_without_progress(
            score,
            self.plies_without_progress[ply]
                .saturating_sub(u32::try_from(tuning.params[Param::ProgressGrace]).unwrap_or(0)),
            tuning.params[Param::ProgressPlies],
        );
        score + (faded - score) * share_percent / 100
    }

    fn reward(
        &mut self,
        position: &Position,
        ply: usize,
        depth: i32,
        mv: Move,
        tried: &[Option<Move>],
    ) {
        let tuning = &self.shared.tuning;
        if tuning.killers {
            self.killers.record(ply, mv);
        }
        if tuning.history {
            let bonus = self.history_bonus(depth);
            let previous = self.previous_move(ply);
            self.history.update(position, previous, mv, bonus);
            for other in tried.iter().flatten() {
                self.history.update(position, previous, *other, -bonus);
            }
        }
        if let Some(answered) = self.counter_to(ply) {
            self.history.set_counter(position, answered, mv);
        }
    }

    /// The history bonus of a cut-off at `depth`: its square, capped.
    fn history_bonus(&self, depth: i32) -> i32 {
        (depth * depth).min(self.shared.tuning.params[Param::HistoryBonusMax])
    }

    /// After a cut-off: a bonus to the capture that made it, if it was one,
    /// and a malus to the captures tried before it that did not.
    fn reward_captures(
        &mut self,
        position: &Position,
        depth: i32,
        cut: Option<Move>,
        tried: &[Option<Move>],
    ) {
        let bonus = self.history_bonus(depth);
        if let Some(mv) = cut {
            self.history.update_capture(position, mv, bonus);
        }
        for other in tried.iter().flatten() {
            self.history.update_capture(position, *other, -bonus);
        }
    }

    /// The opponent's move that reached `ply`, when the counter-moves are
    /// on.
    fn counter_to(&self, ply: usize) -> Option<Move> {
        self.move_into(ply, self.shared.tuning.counter_moves)
    }

    /// The move that reached `ply`, when the continuation history is on.
    fn previous_move(&self, ply: usize) -> Option<Move> {
        self.move_into(ply, self.shared.tuning.continuation_history)
    }

    /// The move that reached `ply` (none after a pass), when `wanted`.
    fn move_into(&self, ply: usize, wanted: bool) -> Option<Move> {
        wanted.then(|| self.played[ply]).flatten()
    }

    /// The score at the horizon: the quiescence search, or the static
    /// evaluation when it is switched off.
    fn horizon(&mut self, position: &Position, alpha: i32, beta: i32, ply: usize) -> i32 {
        let start = if self.shared.tuning.quiescence {
            0
        } else {
            QUIESCENCE_DEPTH
        };
        self.quiescence(position, alpha, beta, ply, start)
    }

    /// Resolves captures and formation threats below the horizon; `depth`
    /// counts the plies taken in here, which are capped because captures
    /// answered by capturing relocations could go on and on.
    fn quiescence(
        &mut self,
        position: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        depth: u32,
    ) -> i32 {
        if self.visit(ply) {
            return 0;
        }
        self.track(ply, position);
        if let Some(score) = terminal_score(position, ply) {
            return score;
        }
        if ply >= MAX_PLY {
            return self.evaluate(position, ply);
        }
        // A side that can complete the formation wins with its next move,
        // whatever the evaluation says.
        if has_win_threat(position, position.side_to_move()) {
            return MATE - ply as i32 - 1;
        }
        let hit = if self.shared.tuning.quiescence_table {
            self.probe(position.key(), ply)
        } else {
            None
        };
        if let Some(hit) = hit
            && hit.decides(alpha, beta)
        {
            return hit.score;
        }
        let original_alpha = alpha;
        // A threat to complete the formation is this game's check: standing
        // pat would ignore it, so the side must capture or lose (near the
        // horizon only).
        let threatened =
            depth < QUIESCENCE_EVASION_DEPTH && has_win_threat(position, !position.side_to_move());
        let mut best = -INFINITY;
        if !threatened {
            let raw = self.evaluate(position, ply);
            best = self.corrected(position, raw);
            if best >= beta {
                return if !has_legal_move(position) {
                    -MATE + ply as i32
                } else {
                    best
                };
            }
            alpha = alpha.max(best);
        }
        if depth >= QUIESCENCE_DEPTH {
            return if !has_legal_move(position) {
                -MATE + ply as i32
            } else {
                best
            };
        }
        // A winning move would have ended the search above, and a threat is
        // answered only by a capture: no piece may step into the gap, which
        // lies between the guard that would enter it and the queen or a
        // guard of the ring.
        let mut candidates = MoveList::default();
        let captures = capture_cells(position, position.side_to_move());
        generate_legal_to(position, captures, &mut candidates);
        if !threatened && depth == 0 && self.shared.tuning.quiescence_threats {
            add_threats(position, captures, &mut candidates);
        }
        if candidates.is_empty() {
            return if !has_legal_move(position) {
                -MATE + ply as i32
            } else if threatened {
                // Its move leaves the threat standing, whatever it plays.
                -MATE + ply as i32 + 2
            } else {
                best
            };
        }
        let mut best_move = None;
        for &mv in candidates.iter() {
            let child = position.make_move(mv);
            // The quiescence search reads the table only when asked to.
            if self.shared.tuning.quiescence_table {
                self.shared.tt.prefetch(child.key());
            }
            self.history.evals.prefetch(child.key());
            self.descend(ply, position, Some(mv));
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1, depth + 1);
            if self.shared.stopped() {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        // A result of the full search of this position outweighs this one.
        if self.shared.tuning.quiescence_table && hit.is_none_or(|hit| hit.depth == 0) {
            let bound = bound_of(best, original_alpha, beta);
            self.store(position.key(), ply, best_move, best, 0, bound);
        }
        best
    }
}

/// How long the best root move has stayed the same, which sets how much
/// of the soft time budget the next iteration may start within.
#[derive(Default)]
struct Stability {
    best: Option<Move>,
    unchanged: u32,
}

impl Stability {
    /// Records an iteration's best move; returns the percentage of the soft
    /// budget to allow: more while the engine changes its mind, less once
    /// the move has held for several iterations.
    fn after(&mut self, best: Move) -> u32 {
        if self.best == Some(best) {
            self.unchanged += 1;
        } else {
            self.best = Some(best);
            self.unchanged = 0;
        }
        match self.unchanged {
            0 => 160,
            1 => 125,
            2 => 100,
            3 => 85,
            _ => 70,
        }
    }
}

/// Whether the static evaluation `now` of the side to move beats the one
/// at its previous turn in `before` (the line's evaluations above this
/// node, nearest last), or at the turn before when that one has none;
/// unknown counts as improving, the cautious side.
pub(super) fn improving(before: &[Option<i32>], now: Option<i32>) -> bool {
    let Some(now) = now else {
        return true;
    };
    [2, 4]
        .into_iter()
        .filter_map(|back| before.len().checked_sub(back))
        .find_map(|index| before[index])
        .is_none_or(|earlier| now > earlier)
}

/// What a node's best score `best` says of its true value, searched with
/// the window (`alpha`, `beta`).
fn bound_of(best: i32, alpha: i32, beta: i32) -> Bound {
    if best >= beta {
        Bound::Lower
    } else if best > alpha {
        Bound::Exact
    } else {
        Bound::Upper
    }
}

/// Appends to `candidates` the quiet moves of `position` (those not to a
/// cell of `taken`, already searched) after which the side to move
/// threatens to complete the formation: this game's checks, which the
/// reply must answer. Only a side with four guards or more around the
/// throne can make one in a move, and only by a move that ends within two
/// steps of the throne: onto it, into its ring, or next to the ring's gap.
fn add_threats(position: &Position, taken: Bitboard, candidates: &mut MoveList) {
    let us = position.side_to_move();
    let around = position.active(us) & !position.queens() & THRONE_RING;
    if around.count_ones() < 4 {
        return;
    }
    let mut quiet = MoveList::default();
    generate_legal_to(position, NEAR_THRONE & !taken, &mut quiet);
    for &mv in quiet.iter() {
        if has_win_threat(&position.make_move(mv), us) {
            candidates.push(mv);
        }
    }
}

/// The score of a finished position for its side to move at `ply`, if the
/// formation ended the game.
#[inline]
fn terminal_score(position: &Position, ply: usize) -> Option<i32> {
    let us = position.side_to_move();
    let win_for_us = match position.formation_outcome()? {
        FormationOutcome::Won(color) => color == us,
        FormationOutcome::Forfeited(color) => color != us,
    };
    let distance = MATE - ply as i32;
    Some(if win_for_us { distance } else { -distance })
}
