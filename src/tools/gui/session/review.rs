//! Game review: the analyst searches every position of the line shown, one
//! after another with a fixed number of nodes, and each move is marked by
//! the winning chances it lost for the side that played it.

use super::record::Record;
use super::{Role, Session};
use crate::rules::game::position_result;
use crate::rules::{Color, GameResult, to_fen};
use crate::tools::gui::driver::{Info, Purpose, Request, Search};
use crate::tools::gui::pgn::WhiteScore;
use crate::tools::gui::problem::{Code, Problem};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Nodes searched for each position of a review.
pub const REVIEW_NODES: u64 = 20_000;

/// Winning chances lost (0 to 1) from which a move is marked, worst first.
/// Chances are the logistic of the score, `1 / (1 + e^(-cp/250))`, the
/// scale of the page's score graph.
const MARKS: [(f64, &str); 3] = [(0.15, "blunder"), (0.10, "mistake"), (0.05, "inaccuracy")];

/// A review under way or done.
pub struct Review {
    /// The search running, 0 when none (numbered by whoever runs it).
    pub search: u64,
    /// The `position` line of the line's start.
    start_line: String,
    /// The moves of the line reviewed: position `k` is the start after the first `k`.
    moves: Vec<String>,
    fens: Vec<String>,
    movers: Vec<Color>,
    /// White's score of each position reviewed so far.
    scores: Vec<Option<WhiteScore>>,
    /// The scored main line of the search running.
    last: Option<Info>,
    started: Instant,
    took: Option<Duration>,
}

/// A side's winning chances for a White score.
fn chances(score: Option<WhiteScore>, side: Color) -> Option<f64> {
    let white = match score? {
        WhiteScore::Mate(m) => {
            if m > 0 {
                1.0
            } else {
                0.0
            }
        }
        WhiteScore::Cp(cp) => 1.0 / (1.0 + (-f64::from(cp) / 250.0).exp()),
    };
    Some(if side == Color::White {
        white
    } else {
        1.0 - white
    })
}

impl Review {
    /// A review of the line shown of `record`, nothing searched yet.
    pub fn of(record: &Record) -> Result<Review, Problem> {
        if record.line_len() == 0 {
            return Err(Problem::new(Code::NothingToReview, "no move to review"));
        }
        // One pass over the line: a long game costs no more than its length.
        let mut game = record.game_at(0);
        let mut moves = Vec::new();
        let mut fens = vec![to_fen(game.position())];
        let mut movers = vec![game.position().side_to_move()];
        for ply in record.plies() {
            if game.play_text(&ply.mv).is_err() {
                break;
            }
            moves.push(ply.mv.clone());
            fens.push(to_fen(game.position()));
            movers.push(game.position().side_to_move());
        }
        Ok(Review {
            search: 0,
            start_line: record.position_line(0),
            moves,
            fens,
            movers,
            scores: Vec::new(),
            last: None,
            started: Instant::now(),
            took: None,
        })
    }

    /// The `position` line of position `index` (the moves too, for repetitions).
    fn position_line(&self, index: usize) -> String {
        match &self.moves[..index] {
            [] => self.start_line.clone(),
            played => format!("{} moves {}", self.start_line, played.join(" ")),
        }
    }

    /// Scores the positions the board decides up to the next one to search
    /// and returns that one's `position` line, or ends the review (`None`).
    pub fn next_position(&mut self) -> Option<String> {
        self.last = None;
        while self.scores.len() < self.fens.len() {
            let index = self.scores.len();
            let Ok(position) = crate::rules::parse_fen(&self.fens[index]) else {
                self.scores.push(None);
                continue;
            };
            match position_result(&position) {
                GameResult::Ongoing => return Some(self.position_line(index)),
                GameResult::Draw => self.scores.push(Some(WhiteScore::Cp(0))),
                GameResult::Win { winner, .. } => {
                    self.scores
                        .push(Some(WhiteScore::Mate(if winner == Color::White {
                            1
                        } else {
                            -1
                        })))
                }
            }
        }
        self.search = 0;
        self.took = Some(self.started.elapsed());
        None
    }

    /// A line of the search running.
    pub fn hear(&mut self, info: Info) {
        if info.multipv <= 1 {
            self.last = Some(info);
        }
    }

    /// The search running ended: its position is scored from its last line.
    pub fn searched(&mut self) {
        let index = self.scores.len();
        let Some(&mover) = self.movers.get(index) else {
            return;
        };
        let score = self
            .last
            .take()
            .and_then(|i| WhiteScore::from_mover(mover, i.cp, i.mate));
        self.scores.push(score);
    }

    /// The review for the page: progress, the scores, and the marked moves.
    pub fn view(&self) -> Value {
        let mut marks = Vec::new();
        for ply in 1..self.scores.len() {
            let mover = self.movers[ply - 1];
            let (Some(before), Some(after)) = (
                chances(self.scores[ply - 1], mover),
                chances(self.scores[ply], mover),
            ) else {
                continue;
            };
            let lost = before - after;
            if let Some((_, kind)) = MARKS.iter().find(|(threshold, _)| lost >= *threshold) {
                marks.push(json!({
                    "ply": ply, "kind": kind, "lost": (lost * 1000.0).round() / 1000.0,
                    "fen": self.fens[ply],
                }));
            }
        }
        let scores: Vec<Value> = self
            .fens
            .iter()
            .zip(&self.scores)
            .map(|(fen, score)| json!([fen, score]))
            .collect();
        json!({
            "total": self.fens.len(),
            "done": self.scores.len(),
            "running": self.search != 0,
            "ms": self.took.and_then(|t| u64::try_from(t.as_millis()).ok()),
            "nodes": REVIEW_NODES,
            "scores": scores,
            "marks": marks,
        })
    }
}

impl Session {
    /// Starts reviewing the line shown (stopping the analysis).
    pub(super) fn start_review(&mut self) -> Result<(), Problem> {
        let review = Review::of(&self.record)?;
        self.analysing = false;
        if self.analysis.search != 0 {
            self.stop(Role::Analyst);
            self.analysis.search = 0;
        }
        self.review = Some(review);
        self.review_next();
        Ok(())
    }

    /// Searches the next position of the review, if any is left.
    pub(super) fn review_next(&mut self) {
        let id = self.new_search_id();
        let Some(review) = &mut self.review else {
            return;
        };
        if let Some(position) = review.next_position() {
            review.search = id;
            let search = Search {
                id,
                purpose: Purpose::Review,
                position,
                go: format!("go nodes {REVIEW_NODES}"),
                budget: Some(Duration::from_secs(30)),
            };
            self.send(Role::Analyst, Request::Search(search));
        }
    }

    /// An engine's report on a review search.
    pub(super) fn review_report(&mut self, id: u64, info: Option<Info>) {
        let Some(review) = &mut self.review else {
            return;
        };
        if review.search != id || id == 0 {
            return;
        }
        match info {
            Some(info) => review.hear(info),
            None => {
                review.searched();
                self.review_next();
            }
        }
    }

    /// Gives up the review under way (its engine failed).
    pub(super) fn abandon_review(&mut self) {
        if let Some(review) = &mut self.review {
            review.search = 0;
        }
    }

    /// Whether a review search runs (the analyst is busy with it).
    pub(super) fn reviewing(&self) -> bool {
        self.review.as_ref().is_some_and(|r| r.search != 0)
    }

    /// The review for the page, if there is one.
    pub(super) fn review_view(&self) -> Value {
        self.review.as_ref().map_or(Value::Null, Review::view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::gui::session::record::tests::record_of;

    #[test]
    fn each_position_reviewed_is_sent_with_the_moves_before_it() {
        let record = record_of(&["f1e1", "f11g11", "e1f1", "g11f11"]);
        let mut review = Review::of(&record).unwrap();
        for plies in 0..=4 {
            assert_eq!(review.next_position(), Some(record.position_line(plies)));
            review.searched();
        }
        assert_eq!(review.next_position(), None);
        assert_eq!(review.view()["done"], 5);
    }
}
