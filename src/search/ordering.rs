//! Move ordering: the transposition-table move first, then moves that
//! complete the formation, captures, steps towards the throne (when asked
//! for), the two killer moves of the ply, and the rest by their history
//! score. Captures are ordered among themselves by the quiet history of the
//! same step, or by their own capture history when asked for.

use super::MAX_PLY;
use super::eval::{capture_cells, winning_cells};
use crate::rules::geometry::{Bitboard, GRID_SLOTS, THRONE_RING};
use crate::rules::movegen::{MAX_MOVES, MoveList};
use crate::rules::{Cell, Move, Position};

const TT_MOVE: i32 = 1 << 30;
const WINNING: i32 = 1 << 29;
const CAPTURE: i32 = 1 << 28;
const THRONE_STEP: i32 = 3 << 26;
const KILLER: i32 = 1 << 27;
/// Below both killers.
const COUNTER: i32 = KILLER - 2;
/// History scores stay within this magnitude.
const HISTORY_LIMIT: i32 = 16_384;

/// Quiet moves that caused cut-offs: by side, origin and destination, and
/// (the continuation history) by side, the cell the opponent's move before
/// them went to and their own destination; captures apart, by side, origin
/// and destination; and the counter-moves: by side and the opponent's move
/// just played, the quiet move that last refuted it.
pub(crate) struct History {
    /// What the thread's searches found the static evaluation off by.
    pub(crate) correction: super::correction::Correction,
    /// The static evaluations the thread has computed.
    pub(crate) evals: super::eval_cache::EvalCache,
    by_move: Vec<i32>,
    by_reply: Vec<i32>,
    by_capture: Vec<i32>,
    counters: Vec<Option<Move>>,
}

impl History {
    /// An empty history.
    pub(crate) fn new() -> History {
        History {
            correction: super::correction::Correction::new(),
            evals: super::eval_cache::EvalCache::new(),
            by_move: vec![0; 2 * GRID_SLOTS * GRID_SLOTS],
            by_reply: vec![0; 2 * GRID_SLOTS * GRID_SLOTS],
            by_capture: vec![0; 2 * GRID_SLOTS * GRID_SLOTS],
            counters: vec![None; 2 * GRID_SLOTS * GRID_SLOTS],
        }
    }

    fn slot(position: &Position, first: Cell, second: Cell) -> usize {
        (position.side_to_move().index() * GRID_SLOTS + first.index()) * GRID_SLOTS + second.index()
    }

    /// The score of `mv` for the side to move of `position`, with the
    /// continuation history's score of it after `previous` when given.
    pub(crate) fn get(&self, position: &Position, previous: Option<Move>, mv: Move) -> i32 {
        let own = self.by_move[Self::slot(position, mv.from(), mv.to())];
        previous.map_or(own, |previous| {
            own + self.by_reply[Self::slot(position, previous.to(), mv.to())]
        })
    }

    /// Moves the scores of `mv` (after `previous`, when given) towards the
    /// limit by `bonus` (negative for a malus).
    pub(crate) fn update(
        &mut self,
        position: &Position,
        previous: Option<Move>,
        mv: Move,
        bonus: i32,
    ) {
        nudge(
            &mut self.by_move[Self::slot(position, mv.from(), mv.to())],
            bonus,
        );
        if let Some(previous) = previous {
            nudge(
                &mut self.by_reply[Self::slot(position, previous.to(), mv.to())],
                bonus,
            );
        }
    }

    /// The capture history's score of the capture `mv`.
    pub(crate) fn capture(&self, position: &Position, mv: Move) -> i32 {
        self.by_capture[Self::slot(position, mv.from(), mv.to())]
    }

    /// Moves the capture history's score of `mv` towards the limit by
    /// `bonus` (negative for a malus).
    pub(crate) fn update_capture(&mut self, position: &Position, mv: Move, bonus: i32) {
        nudge(
            &mut self.by_capture[Self::slot(position, mv.from(), mv.to())],
            bonus,
        );
    }

    /// The quiet move that last refuted `previous`, the opponent's move
    /// that reached `position`.
    pub(crate) fn counter(&self, position: &Position, previous: Move) -> Option<Move> {
        self.counters[Self::slot(position, previous.from(), previous.to())]
    }

    /// Records `mv` as the refutation of `previous` in `position`.
    pub(crate) fn set_counter(&mut self, position: &Position, previous: Move, mv: Move) {
        self.counters[Self::slot(position, previous.from(), previous.to())] = Some(mv);
    }
}

/// Moves a history score towards the limit by `bonus`, shrinking as it
/// approaches so old lessons fade.
fn nudge(entry: &mut i32, bonus: i32) {
    let bonus = bonus.clamp(-HISTORY_LIMIT, HISTORY_LIMIT);
    *entry += bonus - *entry * bonus.abs() / HISTORY_LIMIT;
}

/// Two quiet moves per ply that refuted a sibling.
pub(crate) struct Killers {
    slots: Vec<[Option<Move>; 2]>,
}

impl Killers {
    /// No killers yet.
    pub(crate) fn new() -> Killers {
        Killers {
            slots: vec![[None; 2]; MAX_PLY + 1],
        }
    }

    /// Records a cut-off move at `ply`.
    pub(crate) fn record(&mut self, ply: usize, mv: Move) {
        let slot = &mut self.slots[ply];
        if slot[0] != Some(mv) {
            slot[1] = slot[0];
            slot[0] = Some(mv);
        }
    }

    /// Forgets the killers of the ply below `ply` (its children).
    pub(crate) fn clear_children(&mut self, ply: usize) {
        if ply + 1 < self.slots.len() {
            self.slots[ply + 1] = [None; 2];
        }
    }

    /// Whether `mv` is one of the killers of `ply`.
    pub(crate) fn contains(&self, ply: usize, mv: Move) -> bool {
        self.slots[ply].contains(&Some(mv))
    }
}

/// Whether `mv` completes the formation, given the [`winning_cells`] of the
/// side to move: it enters the gap from outside the ring (a guard sliding along
/// the ring would only open another gap).
pub(crate) fn is_winning(winning: Bitboard, mv: Move) -> bool {
    // Most positions have no winning cell: that test alone settles them.
    winning != 0 && winning & mv.to().bit() != 0 && THRONE_RING & mv.from().bit() == 0
}

/// Whether `mv` enters the throne's ring or the throne from further out:
/// the moves that build the formation, or block it.
pub(crate) fn steps_to_throne(mv: Move) -> bool {
    let to = mv.to().ring();
    to <= 1 && to < mv.from().ring()
}

/// Room for the ordering scores of a node's moves. The caller keeps it, as
/// it keeps the moves, so that neither is copied when the ordering is made.
pub(crate) struct MoveScores([i32; MAX_MOVES]);

impl Default for MoveScores {
    fn default() -> Self {
        MoveScores([0; MAX_MOVES])
    }
}

/// The legal moves of a node with their ordering scores, handed out best
/// first by partial selection sort.
pub(crate) struct OrderedMoves<'a> {
    moves: &'a mut [Move],
    scores: &'a mut MoveScores,
    captures: Bitboard,
    winning: Bitboard,
    next: usize,
}

impl<'a> OrderedMoves<'a> {
    /// Scores `moves` of `position` into `scores` at `ply`, reached by
    /// `previous` (given only when the continuation history is on);
    /// `counter`, the counter-move, comes right after the killers;
    /// `throne_steps` puts the [`steps_to_throne`] right after the captures;
    /// `capture_history` orders the captures by their own history.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        position: &Position,
        moves: &'a mut MoveList,
        scores: &'a mut MoveScores,
        tt_move: Option<Move>,
        ply: usize,
        killers: &Killers,
        counter: Option<Move>,
        history: &History,
        previous: Option<Move>,
        throne_steps: bool,
        capture_history: bool,
    ) -> OrderedMoves<'a> {
        let captures = capture_cells(position, position.side_to_move());
        let winning = winning_cells(position, position.side_to_move());
        let tt_move = tt_move.unwrap_or(Move::NONE);
        let [first_killer, second_killer] = killers.slots[ply].map(|k| k.unwrap_or(Move::NONE));
        let counter = counter.unwrap_or(Move::NONE);
        for (score, &mv) in scores.0.iter_mut().zip(moves.iter()) {
            let to = mv.to().bit();
            *score = if mv == tt_move {
                TT_MOVE
            } else if is_winning(winning, mv) {
                WINNING
            } else if captures & to != 0 {
                CAPTURE
                    + if capture_history {
                        history.capture(position, mv)
                    } else {
                        history.get(position, previous, mv)
                    }
            } else if throne_steps && steps_to_throne(mv) {
                THRONE_STEP + history.get(position, previous, mv)
            } else if mv == first_killer {
                KILLER
            } else if mv == second_killer {
                KILLER - 1
            } else if mv == counter {
                COUNTER
            } else {
                history.get(position, previous, mv)
            };
        }
        OrderedMoves {
            moves: moves.as_mut_slice(),
            scores,
            captures,
            winning,
            next: 0,
        }
    }

    /// Whether `mv` captures something.
    pub(crate) fn is_capture(&self, mv: Move) -> bool {
        self.captures & mv.to().bit() != 0
    }

    /// Whether `mv` completes the formation and wins.
    pub(crate) fn wins(&self, mv: Move) -> bool {
        is_winning(self.winning, mv)
    }
}

impl Iterator for OrderedMoves<'_> {
    type Item = Move;

    fn next(&mut self) -> Option<Move> {
        let len = self.moves.len();
        if self.next >= len {
            return None;
        }
        // The first of the highest scores, found in two passes: the maximum
        // alone is a reduction the compiler vectorises.
        let remaining = &self.scores.0[self.next..len];
        let highest = remaining.iter().copied().max().unwrap_or(i32::MIN);
        let best = self.next
            + remaining
                .iter()
                .position(|&score| score == highest)
                .unwrap_or(0);
        self.moves.swap(self.next, best);
        self.scores.0.swap(self.next, best);
        self.next += 1;
        Some(self.moves[self.next - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{legal_moves, parse_fen, parse_move};

    #[test]
    fn tt_move_then_capture_then_killer_come_first() {
        // The white queen entering the throne from f5 sandwiches the black
        // guard on e6 against the white guard on d6.
        let position = parse_fen("6/7/8/9/10/3Gg6/5Q4/9/8/7/q5 w").unwrap();
        let capture = parse_move(&position, "f5f6").unwrap();
        let tt_move = parse_move(&position, "d6e7").unwrap();
        let killer = parse_move(&position, "d6d5").unwrap();
        let mut killers = Killers::new();
        killers.record(3, killer);
        let history = History::new();
        let ordered: Vec<Move> = OrderedMoves::new(
            &position,
            &mut legal_moves(&position),
            &mut MoveScores::default(),
            Some(tt_move),
            3,
            &killers,
            None,
            &history,
            None,
            false,
            false,
        )
        .collect();
        assert_eq!(&ordered[..3], &[tt_move, capture, killer]);
        assert_eq!(ordered.len(), legal_moves(&position).len());
    }

    #[test]
    fn steps_to_the_throne_come_before_killers_only_when_asked_for() {
        // The white guard on d5 can step into the throne's ring at e5 or e6,
        // or sideways to d4 and d6.
        let position = parse_fen("6/7/8/9/10/11/3G6/9/8/7/q4Q w").unwrap();
        let inward: Vec<Move> = ["d5e5", "d5e6"]
            .iter()
            .map(|text| parse_move(&position, text).unwrap())
            .collect();
        let sideways = parse_move(&position, "d5d4").unwrap();
        assert!(inward.iter().all(|&mv| steps_to_throne(mv)));
        assert!(!steps_to_throne(sideways));
        let killer = parse_move(&position, "d5d6").unwrap();
        let mut killers = Killers::new();
        killers.record(2, killer);
        let history = History::new();
        let ordered = |throne_steps| -> Vec<Move> {
            OrderedMoves::new(
                &position,
                &mut legal_moves(&position),
                &mut MoveScores::default(),
                None,
                2,
                &killers,
                None,
                &history,
                None,
                throne_steps,
                false,
            )
            .collect()
        };
        let with_steps = ordered(true);
        assert!(with_steps[..2].iter().all(|mv| inward.contains(mv)));
        assert_eq!(with_steps[2], killer);
        assert_eq!(ordered(false)[0], killer);
    }

    #[test]
    fn the_counter_move_comes_after_the_killers_and_answers_its_move_only() {
        let position = parse_fen(crate::rules::START_FEN).unwrap();
        let moves = legal_moves(&position);
        let [answered, other, killer, counter] = [0, 1, 2, 3].map(|index| moves.as_slice()[index]);
        let mut history = History::new();
        history.set_counter(&position, answered, counter);
        assert_eq!(history.counter(&position, answered), Some(counter));
        assert_eq!(history.counter(&position, other), None);
        history.update(&position, None, moves.as_slice()[4], 400);
        let mut killers = Killers::new();
        killers.record(1, killer);
        let ordered: Vec<Move> = OrderedMoves::new(
            &position,
            &mut legal_moves(&position),
            &mut MoveScores::default(),
            None,
            1,
            &killers,
            history.counter(&position, answered),
            &history,
            None,
            false,
            false,
        )
        .collect();
        assert_eq!(&ordered[..2], &[killer, counter]);
    }

    #[test]
    fn history_rewards_stay_bounded() {
        let position = parse_fen(crate::rules::START_FEN).unwrap();
        let mv = legal_moves(&position).as_slice()[0];
        let mut history = History::new();
        for _ in 0..1000 {
            history.update(&position, None, mv, 4000);
        }
        assert!(history.get(&position, None, mv) <= HISTORY_LIMIT);
        history.update(&position, None, mv, -4000);
        assert!(history.get(&position, None, mv) < HISTORY_LIMIT);
    }

    #[test]
    fn the_capture_history_is_kept_apart_from_the_quiet_one() {
        // f5f6 sandwiches the black guard on e6 (see the first test).
        let position = parse_fen("6/7/8/9/10/3Gg6/5Q4/9/8/7/q5 w").unwrap();
        let capture = parse_move(&position, "f5f6").unwrap();
        let mut history = History::new();
        history.update_capture(&position, capture, 400);
        assert!(history.capture(&position, capture) > 0);
        assert_eq!(history.get(&position, None, capture), 0);
        history.update(&position, None, capture, -400);
        let scored = |capture_history| {
            let (mut moves, mut scores) = (legal_moves(&position), MoveScores::default());
            let ordered = OrderedMoves::new(
                &position,
                &mut moves,
                &mut scores,
                None,
                0,
                &Killers::new(),
                None,
                &history,
                None,
                false,
                capture_history,
            );
            let index = ordered.moves.iter().position(|&mv| mv == capture);
            ordered.scores.0[index.unwrap()]
        };
        assert!(scored(true) > CAPTURE && scored(false) < CAPTURE);
    }

    #[test]
    fn the_continuation_history_scores_a_move_after_the_move_it_answered() {
        let position = parse_fen(crate::rules::START_FEN).unwrap();
        let moves = legal_moves(&position);
        let (previous, other_previous, mv) = (
            moves.as_slice()[0],
            moves.as_slice()[1],
            moves.as_slice()[2],
        );
        assert_ne!(previous.to(), other_previous.to());
        let mut history = History::new();
        history.update(&position, Some(previous), mv, 400);
        let plain = history.get(&position, None, mv);
        assert!(plain > 0);
        assert!(history.get(&position, Some(previous), mv) > plain);
        assert_eq!(history.get(&position, Some(other_previous), mv), plain);
    }
}
