//! The drawn games of a match: how they ended, and in how many of them an
//! engine stood better by its own scores, an advantage it did not convert.

use super::record::{Ending, GameRecord, ScoreRecord, Verdict};
use crate::rules::Color;
use serde::{Deserialize, Serialize};

/// The moves at the end of a game whose scores tell how an engine stood.
pub const LAST_MOVES: usize = 10;

/// The mean of those scores, centi-guards, at which an engine stood better.
pub const AHEAD_CENTI: i32 = 50;

/// A forced win or loss, counted as a score this far beyond any evaluation.
const MATE_CENTI: i32 = 10_000;

/// The drawn games of one encounter, seen from its first engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawTally {
    /// Games counted, drawn or not.
    pub games: u64,
    /// Drawn by a third occurrence of a position.
    pub repetition: u64,
    /// Drawn at the move limit.
    pub move_limit: u64,
    /// Drawn otherwise.
    pub other: u64,
    /// Drawn with the first engine standing better.
    pub first_ahead: u64,
    /// Drawn with the second engine standing better.
    pub second_ahead: u64,
}

impl DrawTally {
    /// Counts `record`, a game in which the first engine played `first_color`.
    pub fn add(&mut self, record: &GameRecord, first_color: Color) {
        self.games += 1;
        if record.result != Verdict::Draw {
            return;
        }
        *match record.termination {
            Ending::Repetition => &mut self.repetition,
            Ending::Adjudication => &mut self.move_limit,
            _ => &mut self.other,
        } += 1;
        let ahead = |color| standing(record, color).is_some_and(|mean| mean >= AHEAD_CENTI);
        self.first_ahead += u64::from(ahead(first_color));
        self.second_ahead += u64::from(ahead(!first_color));
    }

    /// Counts the games of `other` too.
    pub fn merge(&mut self, other: &DrawTally) {
        self.games += other.games;
        self.repetition += other.repetition;
        self.move_limit += other.move_limit;
        self.other += other.other;
        self.first_ahead += other.first_ahead;
        self.second_ahead += other.second_ahead;
    }

    /// Drawn games.
    pub fn draws(&self) -> u64 {
        self.repetition + self.move_limit + self.other
    }

    /// The summary line, naming the encounter's engines; none without draws.
    pub fn line(&self, first: &str, second: &str) -> Option<String> {
        if self.draws() == 0 {
            return None;
        }
        let endings: Vec<String> = [
            (self.repetition, "by repetition"),
            (self.move_limit, "at the move limit"),
            (self.other, "otherwise"),
        ]
        .into_iter()
        .filter(|&(count, _)| count > 0)
        .map(|(count, how)| format!("{count} {how}"))
        .collect();
        Some(format!(
            "Draws: {} of {} games ({}); {first} stood better in {}, {second} in {} \
             (own scores over the last {LAST_MOVES} moves averaging {:+.2} or more)",
            self.draws(),
            self.games,
            endings.join(", "),
            self.first_ahead,
            self.second_ahead,
            f64::from(AHEAD_CENTI) / 100.0,
        ))
    }
}

/// The mean of the last [`LAST_MOVES`] scores the engine playing `color`
/// reported in `record`, from its own side; none when it reported none.
pub fn standing(record: &GameRecord, color: Color) -> Option<i32> {
    let start = record.start_side();
    let first_mover = if record.book.len().is_multiple_of(2) {
        start
    } else {
        !start
    };
    let skip = usize::from(first_mover != color);
    let scores: Vec<i32> = record
        .moves
        .iter()
        .skip(skip)
        .step_by(2)
        .filter_map(|played| match played.score? {
            ScoreRecord::Cp(centi) => Some(centi),
            ScoreRecord::Mate(moves) if moves > 0 => Some(MATE_CENTI),
            ScoreRecord::Mate(_) => Some(-MATE_CENTI),
        })
        .collect();
    let last = &scores[scores.len().saturating_sub(LAST_MOVES)..];
    let count = i64::try_from(last.len()).ok().filter(|&n| n > 0)?;
    let sum: i64 = last.iter().map(|&score| i64::from(score)).sum();
    i32::try_from(sum / count).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::match_runner::record::MoveRecord;

    fn game(result: Verdict, termination: Ending, book: usize, scores: &[i32]) -> GameRecord {
        let moves = scores
            .iter()
            .map(|&centi| MoveRecord {
                text: "a1a2".into(),
                score: Some(ScoreRecord::Cp(centi)),
                depth: Some(5),
                time_ms: 1,
            })
            .collect();
        GameRecord {
            book: vec!["a1a2".into(); book],
            moves,
            ..GameRecord::sample(1, result, termination)
        }
    }

    #[test]
    fn each_engine_is_judged_by_its_own_last_scores() {
        // White moves first from the start position: White's scores are the
        // even-numbered ones, the last ten of them averaging +60.
        let mut scores = vec![-500, 0];
        scores.extend([60, -70].repeat(LAST_MOVES));
        let record = game(Verdict::Draw, Ending::Adjudication, 0, &scores);
        assert_eq!(standing(&record, Color::White), Some(60));
        assert_eq!(standing(&record, Color::Black), Some(-70));
        // An odd number of book moves hands the first engine move to Black.
        let record = game(Verdict::Draw, Ending::Adjudication, 3, &scores);
        assert_eq!(standing(&record, Color::Black), Some(60));
        assert_eq!(standing(&record, Color::White), Some(-70));
    }

    #[test]
    fn draws_are_counted_by_ending_and_by_who_stood_better() {
        let mut tally = DrawTally::default();
        let better = [80, -80].repeat(LAST_MOVES);
        let level = [10, -10].repeat(LAST_MOVES);
        tally.add(
            &game(Verdict::Draw, Ending::Adjudication, 0, &better),
            Color::White,
        );
        tally.add(
            &game(Verdict::Draw, Ending::Repetition, 0, &better),
            Color::Black,
        );
        tally.add(
            &game(Verdict::Draw, Ending::Repetition, 0, &level),
            Color::White,
        );
        tally.add(
            &game(Verdict::Win(Color::White), Ending::Formation, 0, &better),
            Color::White,
        );
        let expected = DrawTally {
            games: 4,
            repetition: 2,
            move_limit: 1,
            other: 0,
            first_ahead: 1,
            second_ahead: 1,
        };
        assert_eq!(tally, expected);
        let mut merged = DrawTally::default();
        merged.merge(&tally);
        merged.merge(&tally);
        assert_eq!(
            (merged.games, merged.draws(), merged.first_ahead),
            (8, 6, 2)
        );
        assert_eq!(
            tally.line("new", "old").as_deref(),
            Some(
                "Draws: 3 of 4 games (2 by repetition, 1 at the move limit); new stood better \
                 in 1, old in 1 (own scores over the last 10 moves averaging +0.50 or more)"
            )
        );
        assert_eq!(DrawTally::default().line("new", "old"), None);
    }

    #[test]
    fn a_forced_win_counts_as_standing_better() {
        let mut record = game(Verdict::Draw, Ending::Repetition, 0, &[0, 0]);
        record.moves[0].score = Some(ScoreRecord::Mate(3));
        record.moves[1].score = Some(ScoreRecord::Mate(-3));
        assert!(standing(&record, Color::White).is_some_and(|mean| mean >= AHEAD_CENTI));
        assert!(standing(&record, Color::Black).is_some_and(|mean| mean < 0));
        record.moves.clear();
        assert_eq!(standing(&record, Color::White), None);
    }
}
