//! A game: a start position plus the moves played, which is what the
//! repetition rule needs, and the verdict on how (or whether) it has ended.

use super::movegen::has_legal_move;
use super::notation::{MoveError, parse_move};
use super::position::{Color, FormationOutcome, Move, Position};
use std::collections::HashMap;
use std::fmt;

/// Why a game was won (a draw has one reason only, repetition).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Termination {
    /// The winner's queen sits on the throne inside six of its guards.
    Formation,
    /// The loser surrounded the throne with guards while its queen was away.
    Forfeit,
    /// The loser, to move, had no legal move.
    NoMoves,
}

impl Termination {
    /// A one-word name used by the protocol and the records.
    pub const fn name(self) -> &'static str {
        match self {
            Termination::Formation => "formation",
            Termination::Forfeit => "forfeit",
            Termination::NoMoves => "no-moves",
        }
    }
}

/// The state of a game.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GameResult {
    /// Still being played.
    Ongoing,
    /// Won by `winner` for `reason`.
    Win {
        /// Who won.
        winner: Color,
        /// How.
        reason: Termination,
    },
    /// Drawn: the same position stood for the third time (the rules know
    /// no other draw).
    Draw,
}

impl GameResult {
    /// How the game stands, in the words of the protocol's `info string game
    /// over:` line and of every record's closing comment.
    pub fn describe(self) -> String {
        match self {
            GameResult::Ongoing => "the game goes on".to_string(),
            GameResult::Draw => "draw by threefold repetition".to_string(),
            GameResult::Win { winner, reason } => {
                let (winner, loser) = (winner.name(), (!winner).name());
                match reason {
                    Termination::Formation => format!("{winner} wins by formation"),
                    Termination::Forfeit => format!("{winner} wins, {loser} forfeited"),
                    Termination::NoMoves => format!("{winner} wins, {loser} has no legal move"),
                }
            }
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameResult::Ongoing => write!(f, "ongoing"),
            GameResult::Win { winner, reason } => write!(f, "{} {}", winner.name(), reason.name()),
            GameResult::Draw => write!(f, "draw repetition"),
        }
    }
}

/// Judges a single position by the rules that need no history.
pub fn position_result(position: &Position) -> GameResult {
    formation_result(position).unwrap_or_else(|| no_move_result(position))
}

/// The formation tests, first in the order of the rules.
fn formation_result(position: &Position) -> Option<GameResult> {
    let (winner, reason) = match position.formation_outcome()? {
        FormationOutcome::Won(winner) => (winner, Termination::Formation),
        FormationOutcome::Forfeited(loser) => (!loser, Termination::Forfeit),
    };
    Some(GameResult::Win { winner, reason })
}

/// The last test of the rules: the side to move has no legal move.
fn no_move_result(position: &Position) -> GameResult {
    if !has_legal_move(position) {
        GameResult::Win {
            winner: !position.side_to_move(),
            reason: Termination::NoMoves,
        }
    } else {
        GameResult::Ongoing
    }
}

/// A start position and the moves played from it.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    moves: Vec<Move>,
    /// Every position of the game, the start included; the last is current.
    positions: Vec<Position>,
    /// For each of `positions`, how many times it has stood up to then,
    /// itself included.
    occurrences: Vec<usize>,
    /// The indices in `positions` of each key, oldest first: a long game
    /// (a `position` line may hold a hundred thousand moves) then counts
    /// each repetition without a look over the whole game.
    seen_at: HashMap<u64, Vec<usize>>,
}

impl Game {
    /// A game that starts at `start`.
    pub fn new(start: Position) -> Game {
        Game {
            start,
            moves: Vec::new(),
            positions: vec![start],
            occurrences: vec![1],
            seen_at: HashMap::from([(start.key(), vec![0])]),
        }
    }

    /// The position the game started from.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The position now.
    pub fn position(&self) -> &Position {
        self.positions.last().unwrap_or(&self.start)
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Keys of every position so far, oldest first (for repetition checks).
    pub(crate) fn history_keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.positions.iter().map(Position::key)
    }

    /// Plies played since the last move that steps cannot undo (see
    /// [`Position::is_progress`]), or since the start if there was none.
    pub fn plies_without_progress(&self) -> usize {
        self.positions
            .iter()
            .zip(&self.moves)
            .rev()
            .take_while(|(before, mv)| !before.is_progress(**mv))
            .count()
    }

    /// Plays a move already known to be legal.
    pub fn play(&mut self, mv: Move) {
        let next = self.position().make_move(mv);
        let earlier = self.seen_at.entry(next.key()).or_default();
        let occurrences = earlier
            .iter()
            .rev()
            .find(|&&index| same_board(&self.positions[index], &next))
            .map_or(1, |&index| self.occurrences[index] + 1);
        earlier.push(self.positions.len());
        self.moves.push(mv);
        self.positions.push(next);
        self.occurrences.push(occurrences);
    }

    /// Takes the last move back; `None` at the start.
    pub fn take_back(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        let undone = self.positions.pop()?;
        self.occurrences.pop();
        if let Some(earlier) = self.seen_at.get_mut(&undone.key()) {
            earlier.pop();
            if earlier.is_empty() {
                self.seen_at.remove(&undone.key());
            }
        }
        Some(mv)
    }

    /// Parses and plays a move given as text; the game is unchanged on error.
    pub fn play_text(&mut self, text: &str) -> Result<Move, MoveError> {
        let mv = parse_move(self.position(), text)?;
        self.play(mv);
        Ok(mv)
    }

    /// How many times the current position has stood so far, itself included.
    pub(crate) fn repetitions(&self) -> usize {
        self.occurrences.last().copied().unwrap_or(1)
    }

    /// The verdict, applying the end-of-game tests in the order of the rules.
    pub fn result(&self) -> GameResult {
        let position = self.position();
        formation_result(position).unwrap_or_else(|| {
            if self.repetitions() >= 3 {
                GameResult::Draw
            } else {
                no_move_result(position)
            }
        })
    }
}

/// Whether two positions have the same content and side to move, ignoring
/// the move number.
fn same_board(a: &Position, b: &Position) -> bool {
    a.side_to_move() == b.side_to_move()
        && a.pieces(Color::White) == b.pieces(Color::White)
        && a.pieces(Color::Black) == b.pieces(Color::Black)
        && a.queens() == b.queens()
        && a.captured(Color::White) == b.captured(Color::White)
        && a.captured(Color::Black) == b.captured(Color::Black)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::legal_moves;
    use crate::rules::notation::{START_FEN, parse_fen};

    #[test]
    fn game_over_wording() {
        let win = |winner, reason| GameResult::Win { winner, reason }.describe();
        assert_eq!(
            win(Color::White, Termination::Formation),
            "white wins by formation"
        );
        assert_eq!(
            win(Color::Black, Termination::Forfeit),
            "black wins, white forfeited"
        );
        assert_eq!(
            win(Color::White, Termination::NoMoves),
            "white wins, black has no legal move"
        );
        assert_eq!(GameResult::Draw.describe(), "draw by threefold repetition");
    }

    #[test]
    fn a_move_taken_back_leaves_the_game_as_before_it() {
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        assert_eq!(game.take_back(), None);
        game.play_text("f1e1").unwrap();
        let after_one = *game.position();
        let second = game.play_text("f11g11").unwrap();
        assert_eq!(game.take_back(), Some(second));
        assert_eq!(game.position().key(), after_one.key());
        assert_eq!(game.moves().len(), 1);
        assert_eq!(game.history_keys().count(), 2);
    }

    #[test]
    fn shuffling_back_and_forth_draws_on_the_third_occurrence() {
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        let cycle = ["f1e1", "f11g11", "e1f1", "g11f11"];
        for (index, text) in cycle.iter().chain(cycle.iter()).enumerate() {
            assert_eq!(game.result(), GameResult::Ongoing, "before move {index}");
            game.play_text(text)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
        }
        assert_eq!(game.repetitions(), 3);
        assert_eq!(game.result(), GameResult::Draw);
    }

    #[test]
    fn plies_without_progress_count_back_to_the_last_inward_step_or_relocation() {
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        assert_eq!(game.plies_without_progress(), 0);
        for (text, count) in [("f1e1", 1), ("f11g11", 2), ("e1e2", 0), ("g11f11", 1)] {
            game.play_text(text).unwrap();
            assert_eq!(game.plies_without_progress(), count, "after {text}");
        }
        // White's captured guard on e7 goes back to the outer ring: outward,
        // yet it can never be undone by steps either.
        let mut relocating = Game::new(parse_fen("q5/7/8/9/3G*5g/11/10/9/8/7/Gg3Q w 1").unwrap());
        let outer = legal_moves(relocating.position()).as_slice()[0];
        assert!(outer.to().ring() > outer.from().ring());
        relocating.play(outer);
        assert_eq!(relocating.plies_without_progress(), 0);
    }

    /// The kept counts agree with counting over the whole game, through
    /// shuffles that repeat, take-backs and a replay.
    #[test]
    fn repetitions_kept_as_moves_come_and_go_match_a_full_count() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let full_count = |game: &Game| {
            let current = game.position();
            game.positions
                .iter()
                .filter(|p| same_board(p, current))
                .count()
        };
        let mut rng = StdRng::seed_from_u64(7);
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        let mut most = 0;
        for _ in 0..3_000 {
            let moves = legal_moves(game.position());
            if game.result() != GameResult::Ongoing || rng.random_ratio(1, 4) {
                game.take_back();
            } else {
                // The first two moves of a position shuffle one piece to
                // and fro, so positions come back often.
                let choice = rng.random_range(0..moves.len().min(2));
                game.play(moves.as_slice()[choice]);
            }
            assert_eq!(game.repetitions(), full_count(&game));
            most = most.max(game.repetitions());
        }
        assert_eq!(most, 3, "the walk should reach a threefold repetition");
    }

    #[test]
    fn illegal_text_leaves_the_game_unchanged() {
        let mut game = Game::new(parse_fen(START_FEN).unwrap());
        assert!(game.play_text("f1f3").is_err());
        assert!(game.moves().is_empty());
    }
}
