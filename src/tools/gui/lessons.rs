//! The rules and the lessons of the page: each rule's diagram, each lesson's
//! position and goal, and the judge that checks a person's moves against the
//! goal with the rules core (the page holds the words, in every language).

use super::problem::{Code, Problem, failed, refuse, unreadable};
use super::session::view::cells_json;
use crate::rules::game::position_result;
use crate::rules::notation::{parse_cell, quote};
use crate::rules::{
    Color, Game, GameResult, Move, MoveError, Position, Termination, legal_moves, parse_fen,
    parse_move, to_fen,
};
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

/// A rule of the rule book as the page explains it: its diagram and the
/// cells that matter on it. Its words are `rules.<id>.*` in the tables.
pub struct Rule {
    /// Names the section (`data-rule`) and its texts.
    pub id: &'static str,
    /// The diagram.
    pub fen: &'static str,
    /// Cells marked on the diagram.
    pub marks: &'static [&'static str],
}

/// The rules in the order they are read.
pub const RULES: &[Rule] = &[
    Rule {
        id: "board",
        fen: "6/7/8/9/10/11/10/9/8/7/6 w",
        marks: &["f6", "e5", "e6", "f5", "f7", "g6", "g7"],
    },
    Rule {
        id: "start",
        fen: crate::rules::START_FEN,
        marks: &["f1", "f11"],
    },
    Rule {
        id: "step",
        fen: "q5/7/8/9/10/11/3G6/9/8/7/5Q w",
        marks: &["d6", "d4", "e5", "e6"],
    },
    Rule {
        id: "throne",
        fen: "q5/7/8/9/4Q5/11/5G4/9/8/7/6 w",
        marks: &["f6"],
    },
    Rule {
        id: "sandwich",
        fen: "6/7/8/9/10/5q5/10/4Gg3/8/7/6 w",
        marks: &["f5", "f6", "f4"],
    },
    Rule {
        id: "capture",
        fen: "q5/7/8/9/3G6/11/4g5/4G4/8/7/5Q w",
        marks: &["e7", "e6", "e5", "e4"],
    },
    Rule {
        id: "relocation",
        fen: "q5/7/8/1g7/1gQ*7/3g7/7G*2/9/8/7/6 w",
        marks: &["d7", "h5"],
    },
    Rule {
        id: "win",
        fen: "q5/7/8/9/4GG4/4GQG4/4GG4/9/8/7/6 b",
        marks: &["f6", "e5", "e6", "f5", "f7", "g6", "g7"],
    },
    Rule {
        id: "forfeit",
        fen: "6/7/8/9/4GG4/4GqG4/4GG4/9/8/7/5Q b",
        marks: &["f6", "e5", "e6", "f5", "f7", "g6", "g7"],
    },
    Rule {
        id: "no-moves",
        fen: "6/7/8/9/10/11/10/9/8/GG5/gG3Q b",
        marks: &["a1", "a2", "b1", "b2"],
    },
    Rule {
        id: "repetition",
        fen: crate::rules::START_FEN,
        marks: &["f1", "e1", "f11", "g11"],
    },
];

/// What a lesson asks for.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    /// Step the piece on this cell one ring inwards.
    Inward(&'static str),
    /// Step the piece on this cell along its ring.
    Sideways(&'static str),
    /// Move the piece on the first cell to the second.
    Reach(&'static str, &'static str),
    /// Capture the piece on this cell.
    Capture(&'static str),
    /// Relocate the captured piece on this cell, anywhere it may go.
    Relocate(&'static str),
    /// End the game at once, winning this way.
    Win(Termination),
    /// Draw by repetition.
    Draw,
    /// Win by formation within this many of one's own moves, whatever the
    /// other side replies.
    WinWithin(usize),
    /// Start a real game against the weakest level (done in the page).
    Game,
}

/// A lesson: a position, moves already played from it, and a goal. Its
/// words are `lesson.<id>.*` in the tables.
pub struct Lesson {
    /// Names the lesson (`data-lesson`) and its texts.
    pub id: &'static str,
    /// The rule it practises.
    pub rule: &'static str,
    /// The position it starts from.
    pub fen: &'static str,
    /// Moves already played from `fen` before the person's turn.
    pub history: &'static [&'static str],
    /// The goal.
    pub goal: Goal,
    /// The person's moves that reach the goal, with the judge's replies
    /// between them; the hint points at the next one's piece.
    pub solution: &'static [&'static str],
}

/// The lessons in order; the last one starts a real game.
pub const LESSONS: &[Lesson] = &[
    Lesson {
        id: "rings",
        rule: "board",
        fen: "q5/7/8/9/10/11/10/9/G7/7/5Q w",
        history: &[],
        goal: Goal::Inward("a3"),
        solution: &["a3b3"],
    },
    Lesson {
        id: "first-move",
        rule: "start",
        fen: crate::rules::START_FEN,
        history: &[],
        goal: Goal::Inward("f1"),
        solution: &["f1f2"],
    },
    Lesson {
        id: "sideways",
        rule: "step",
        fen: "q5/7/8/9/10/11/3G6/9/8/7/5Q w",
        history: &[],
        goal: Goal::Sideways("d5"),
        solution: &["d5d6"],
    },
    Lesson {
        id: "throne",
        rule: "throne",
        fen: "q5/7/8/9/5Q4/11/4GG4/9/8/7/6 w",
        history: &[],
        goal: Goal::Reach("g7", "f6"),
        solution: &["g7f6"],
    },
    Lesson {
        id: "sandwich",
        rule: "sandwich",
        fen: "6/7/8/9/10/5q5/10/4Gg3/8/7/5Q w",
        history: &[],
        goal: Goal::Inward("e4"),
        solution: &["e4e5"],
    },
    Lesson {
        id: "capture",
        rule: "capture",
        fen: "q5/7/8/9/3G6/11/4g5/4G4/8/7/5Q w",
        history: &[],
        goal: Goal::Capture("e5"),
        solution: &["e7e6"],
    },
    Lesson {
        id: "relocate-guard",
        rule: "relocation",
        fen: "q5/7/8/9/10/4g6/4G*5/4g4/2G5/7/5Q w",
        history: &[],
        goal: Goal::Relocate("e5"),
        solution: &["e5a1"],
    },
    Lesson {
        id: "queen-first",
        rule: "relocation",
        fen: "q5/7/8/1g7/2Q*7/3g3g3/7G*2/7g1/8/7/6 w",
        history: &[],
        goal: Goal::Reach("d7", "f6"),
        solution: &["d7f6"],
    },
    Lesson {
        id: "win",
        rule: "win",
        fen: "q5/7/8/5G3/4G5/4GQG4/4GG4/9/8/7/6 w",
        history: &[],
        goal: Goal::Win(Termination::Formation),
        solution: &["h8g7"],
    },
    Lesson {
        id: "empty-throne",
        rule: "forfeit",
        fen: "q5/7/8/3G5/3Q1G4/4G1G4/4GG4/9/8/g6/6 w",
        history: &[],
        goal: Goal::Reach("e7", "f7"),
        solution: &["e7f7"],
    },
    Lesson {
        id: "enemy-queen",
        rule: "forfeit",
        fen: "6/7/8/3G5/3Q1G4/4GqG4/4GG4/9/8/g6/6 w",
        history: &[],
        goal: Goal::Capture("f6"),
        solution: &["e7f7"],
    },
    Lesson {
        id: "no-moves",
        rule: "no-moves",
        fen: "6/7/8/9/10/11/10/9/G7/1G5/gG3Q w",
        history: &[],
        goal: Goal::Win(Termination::NoMoves),
        solution: &["a3a2"],
    },
    Lesson {
        id: "repetition",
        rule: "repetition",
        fen: "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1gQ1 b",
        history: &[
            "f11g11", "e1f1", "g11f11", "f1e1", "f11g11", "e1f1", "g11f11",
        ],
        goal: Goal::Draw,
        solution: &["f1e1"],
    },
    Lesson {
        id: "win-in-two",
        rule: "win",
        fen: "q5/7/3g4/3G1Gg2/10/4GQG4/4GG4/9/8/7/6 w",
        history: &[],
        goal: Goal::WinWithin(2),
        solution: &["h8g7", "f8f7"],
    },
    Lesson {
        id: "first-game",
        rule: "start",
        fen: crate::rules::START_FEN,
        history: &[],
        goal: Goal::Game,
        solution: &[],
    },
];

/// How the judge found the last move of a lesson's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// The goal is reached.
    Solved,
    /// Right so far: the other side replied with this move; go on.
    Continue(String),
    /// Not a legal move; the code of the rule it breaks.
    Illegal(&'static str),
    /// Legal, but the mover loses at once this way (forfeit).
    Loses(Termination),
    /// Legal, but the other side has this reply, after which the goal
    /// cannot be reached in the moves left.
    Refuted(String),
    /// Legal, but it does not do what the goal asks.
    Missed,
}

/// A judgement and the position it leaves: after the move (and the reply,
/// if any) when it was legal, unchanged otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// What the judge found.
    pub judgement: Judgement,
    /// The position to show.
    pub position: Position,
}

impl Verdict {
    fn to_json(&self) -> Value {
        let mut reply = match &self.judgement {
            Judgement::Solved => json!({ "verdict": "solved" }),
            Judgement::Continue(reply) => json!({ "verdict": "continue", "reply": reply }),
            Judgement::Illegal(code) => json!({ "verdict": "illegal", "reason": code }),
            Judgement::Loses(how) => json!({ "verdict": "wrong", "reason": how.name() }),
            Judgement::Refuted(reply) => {
                json!({ "verdict": "wrong", "reason": "refuted", "reply": reply })
            }
            Judgement::Missed => json!({ "verdict": "wrong", "reason": "missed" }),
        };
        reply["fen"] = Value::String(to_fen(&self.position));
        reply["cells"] = cells_json(&self.position);
        reply
    }
}

/// Why a lesson request could not be judged at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LessonError {
    /// No lesson has this id.
    Unknown(String),
    /// The lesson is done in the page, not by moves.
    NotPlayed(&'static str),
    /// The line is empty, too long, or an earlier move of it is illegal.
    BadLine(String),
}

impl std::fmt::Display for LessonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LessonError::Unknown(id) => write!(f, "no lesson '{}'", quote(id)),
            LessonError::NotPlayed(id) => write!(f, "lesson '{id}' is not played with moves"),
            LessonError::BadLine(why) => write!(f, "bad line: {why}"),
        }
    }
}

impl LessonError {
    /// The refusal the page tells in its language.
    fn problem(&self) -> Problem {
        let message = self.to_string();
        match self {
            LessonError::Unknown(id) => {
                Problem::new(Code::NoLesson, message).with("lesson", quote(id))
            }
            LessonError::NotPlayed(id) => {
                Problem::new(Code::LessonNotPlayed, message).with("lesson", *id)
            }
            LessonError::BadLine(why) => {
                Problem::new(Code::BadLessonLine, message).with("detail", why.as_str())
            }
        }
    }
}

impl Lesson {
    /// The lesson's game before the person's first move.
    fn game(&self) -> Result<Game, String> {
        let start = parse_fen(self.fen).map_err(|e| format!("{}: {e}", self.id))?;
        let mut game = Game::new(start);
        for text in self.history {
            game.play_text(text)
                .map_err(|e| format!("{}: history: {e}", self.id))?;
        }
        Ok(game)
    }

    /// How many of the person's moves the goal allows.
    const fn moves_allowed(&self) -> usize {
        match self.goal {
            Goal::WinWithin(moves) => moves,
            _ => 1,
        }
    }

    /// Judges the last move of `line`: the person's moves alternating with
    /// the replies the judge gave, played after the history.
    pub fn judge(&self, line: &[String]) -> Result<Verdict, LessonError> {
        if matches!(self.goal, Goal::Game) {
            return Err(LessonError::NotPlayed(self.id));
        }
        let Some((last, earlier)) = line.split_last() else {
            return Err(LessonError::BadLine("no move".into()));
        };
        let own_moves = earlier.len() / 2 + 1;
        if earlier.len() % 2 != 0 || own_moves > self.moves_allowed() {
            return Err(LessonError::BadLine(format!(
                "{} moves do not fit this lesson",
                line.len()
            )));
        }
        let mut game = self.game().map_err(LessonError::BadLine)?;
        for text in earlier {
            game.play_text(text)
                .map_err(|e| LessonError::BadLine(e.to_string()))?;
        }
        let mover = game.position().side_to_move();
        let before = *game.position();
        let mv = match parse_move(&before, last) {
            Ok(mv) => mv,
            Err(MoveError::Illegal { reason, .. }) => {
                return Ok(Verdict {
                    judgement: Judgement::Illegal(reason.code()),
                    position: before,
                });
            }
            Err(e) => return Err(LessonError::BadLine(e.to_string())),
        };
        game.play(mv);
        let after = *game.position();
        let verdict = |judgement| Verdict {
            judgement,
            position: after,
        };
        if let GameResult::Win { winner, reason } = game.result()
            && winner != mover
        {
            return Ok(verdict(Judgement::Loses(reason)));
        }
        let cell = |name: &str| parse_cell(name).ok();
        let reached = match self.goal {
            Goal::Inward(from) => {
                cell(from) == Some(mv.from()) && mv.to().ring() + 1 == mv.from().ring()
            }
            Goal::Sideways(from) => {
                cell(from) == Some(mv.from()) && mv.to().ring() == mv.from().ring()
            }
            Goal::Reach(from, to) => cell(from) == Some(mv.from()) && cell(to) == Some(mv.to()),
            Goal::Capture(target) => {
                cell(target).is_some_and(|c| after.piece_at(c).is_some_and(|p| p.captured))
            }
            Goal::Relocate(from) => {
                cell(from) == Some(mv.from())
                    && before.piece_at(mv.from()).is_some_and(|p| p.captured)
            }
            Goal::Win(how) => {
                game.result()
                    == GameResult::Win {
                        winner: mover,
                        reason: how,
                    }
            }
            Goal::Draw => game.result() == GameResult::Draw,
            Goal::WinWithin(moves) => {
                let left = moves - own_moves;
                if formation_won(&after, mover) {
                    true
                } else if left == 0 {
                    false
                } else if let Some(reply) = refutation(&after, mover, left) {
                    return Ok(verdict(Judgement::Refuted(reply.to_string())));
                } else {
                    // Every reply loses: any will do, the first is shown.
                    let Some(&reply) = legal_moves(&after).as_slice().first() else {
                        return Ok(verdict(Judgement::Solved));
                    };
                    return Ok(Verdict {
                        judgement: Judgement::Continue(reply.to_string()),
                        position: after.make_move(reply),
                    });
                }
            }
            Goal::Game => false,
        };
        Ok(verdict(if reached {
            Judgement::Solved
        } else {
            Judgement::Missed
        }))
    }
}

/// Whether `side` has won by formation in `position`.
fn formation_won(position: &Position, side: Color) -> bool {
    position_result(position)
        == GameResult::Win {
            winner: side,
            reason: Termination::Formation,
        }
}

/// Whether `side`, to move in `position`, wins by formation within `moves`
/// of its own moves whatever the other side replies (brute force).
fn forced_win(position: &Position, side: Color, moves: usize) -> bool {
    if moves == 0 || position_result(position) != GameResult::Ongoing {
        return false;
    }
    legal_moves(position).iter().any(|&mv| {
        let next = position.make_move(mv);
        formation_won(&next, side) || (moves > 1 && refutation(&next, side, moves - 1).is_none())
    })
}

/// A reply of the other side, to move in `position`, after which `side`
/// no longer wins within `moves`; `None` when every reply loses. A
/// position the other side has already won (or where it has no move, which
/// cannot arise after a move of `side` that did not win) needs no reply.
fn refutation(position: &Position, side: Color, moves: usize) -> Option<Move> {
    legal_moves(position)
        .iter()
        .copied()
        .find(|&reply| !forced_win(&position.make_move(reply), side, moves))
}

/// The lesson named `id`.
pub fn lesson(id: &str) -> Option<&'static Lesson> {
    LESSONS.iter().find(|lesson| lesson.id == id)
}

/// The rules' diagrams and the lessons' positions, as the page draws them.
pub fn catalogue() -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|rule| {
            let cells = parse_fen(rule.fen).map_or(Value::Null, |position| cells_json(&position));
            json!({ "id": rule.id, "fen": rule.fen, "cells": cells, "marks": rule.marks })
        })
        .collect();
    let lessons: Vec<Value> = LESSONS
        .iter()
        .map(|lesson| {
            // Every lesson's game is valid (the tests check it).
            let current = lesson.game().ok().map(|game| *game.position());
            let marks: Vec<&str> = match lesson.goal {
                Goal::Inward(c) | Goal::Sideways(c) | Goal::Capture(c) | Goal::Relocate(c) => {
                    vec![c]
                }
                Goal::Reach(from, to) => vec![from, to],
                _ => Vec::new(),
            };
            json!({
                "id": lesson.id,
                "rule": lesson.rule,
                "fen": current.as_ref().map_or_else(|| lesson.fen.to_string(), to_fen),
                "cells": current.as_ref().map_or(Value::Null, cells_json),
                "game": matches!(lesson.goal, Goal::Game),
                "marks": marks,
                "solution": lesson.solution,
            })
        })
        .collect();
    json!({ "rules": rules, "lessons": lessons })
}

#[derive(Deserialize)]
struct LessonRequest {
    lesson: String,
    moves: Vec<String>,
}

/// `/api/learn` (the catalogue) and `/api/lesson` (the judge).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/api/learn", get(|| async { axum::Json(catalogue()) }))
        .route("/api/lesson", post(judge_request))
}

async fn judge_request(body: String) -> Response {
    let request: LessonRequest = match serde_json::from_str(&body) {
        Ok(request) => request,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                &unreadable("bad lesson request", &e),
            );
        }
    };
    let Some(lesson) = lesson(&request.lesson) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            &LessonError::Unknown(request.lesson).problem(),
        );
    };
    // A "win in two" is judged by brute force over the replies: off the
    // request threads.
    let moves = request.moves;
    match tokio::task::spawn_blocking(move || lesson.judge(&moves)).await {
        Ok(Ok(verdict)) => axum::Json(verdict.to_json()).into_response(),
        Ok(Err(e)) => refuse(StatusCode::BAD_REQUEST, &e.problem()),
        Err(e) => failed(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A move each lesson refuses, and how.
    const WRONG: &[(&str, &[&str], &str)] = &[
        ("rings", &["a3a4"], "missed"),
        ("first-move", &["f1e1"], "missed"),
        ("sideways", &["d5c5"], "outward"),
        ("throne", &["f5f6"], "throne-queen-only"),
        ("sandwich", &["e4f5"], "flanked"),
        ("capture", &["e4d4"], "missed"),
        ("relocate-guard", &["c3c4"], "relocate-first"),
        ("queen-first", &["h5a1"], "queen-first"),
        ("win", &["f7f8"], "outward"),
        ("empty-throne", &["f8f7"], "forfeit"),
        ("enemy-queen", &["f8f7"], "forfeit"),
        ("no-moves", &["f1e1"], "missed"),
        ("repetition", &["f1f2"], "missed"),
        ("win-in-two", &["f8f7"], "refuted"),
    ];

    fn line(moves: &[&str]) -> Vec<String> {
        moves.iter().map(|m| m.to_string()).collect()
    }

    fn reason(verdict: &Verdict) -> String {
        match &verdict.judgement {
            Judgement::Illegal(code) => code.to_string(),
            Judgement::Loses(how) => how.name().to_string(),
            Judgement::Refuted(_) => "refuted".into(),
            Judgement::Missed => "missed".into(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn every_diagram_parses_and_marks_real_cells() {
        for rule in RULES {
            parse_fen(rule.fen).unwrap_or_else(|e| panic!("{}: {e}", rule.id));
            for mark in rule.marks {
                assert!(parse_cell(mark).is_ok(), "{}: {mark}", rule.id);
            }
        }
    }

    #[test]
    fn every_solution_is_accepted_by_the_judge() {
        for lesson in LESSONS {
            let game = lesson.game().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(game.result(), GameResult::Ongoing, "{}", lesson.id);
            if matches!(lesson.goal, Goal::Game) {
                assert_eq!(
                    lesson.judge(&line(&["f1f2"])),
                    Err(LessonError::NotPlayed(lesson.id))
                );
                continue;
            }
            let mut played: Vec<String> = Vec::new();
            for (index, mv) in lesson.solution.iter().enumerate() {
                played.push(mv.to_string());
                let verdict = lesson
                    .judge(&played)
                    .unwrap_or_else(|e| panic!("{}: {e}", lesson.id));
                if index + 1 == lesson.solution.len() {
                    assert_eq!(verdict.judgement, Judgement::Solved, "{}", lesson.id);
                } else {
                    let Judgement::Continue(reply) = verdict.judgement else {
                        panic!("{}: {mv} gave {:?}", lesson.id, verdict.judgement);
                    };
                    played.push(reply);
                }
            }
        }
    }

    #[test]
    fn every_lesson_refuses_a_wrong_move_and_says_why() {
        for lesson in LESSONS.iter().filter(|l| !matches!(l.goal, Goal::Game)) {
            let (_, moves, why) = WRONG
                .iter()
                .find(|(id, _, _)| *id == lesson.id)
                .unwrap_or_else(|| panic!("no wrong move for {}", lesson.id));
            let verdict = lesson.judge(&line(moves)).unwrap();
            assert_eq!(reason(&verdict), *why, "{}", lesson.id);
        }
    }

    #[test]
    fn win_in_two_refutation_is_a_real_defence() {
        let lesson = lesson("win-in-two").unwrap();
        let verdict = lesson.judge(&line(&["f8f7"])).unwrap();
        assert_eq!(verdict.judgement, Judgement::Refuted("g9g8".into()));
        // After the right first move, every black reply loses at once.
        let mut game = lesson.game().unwrap();
        game.play_text("h8g7").unwrap();
        for reply in legal_moves(game.position()).iter() {
            let next = game.position().make_move(*reply);
            assert!(forced_win(&next, Color::White, 1), "{reply}");
        }
    }

    #[test]
    fn bad_requests_are_refused_not_judged() {
        let lesson = lesson("capture").unwrap();
        assert!(matches!(lesson.judge(&[]), Err(LessonError::BadLine(_))));
        assert!(matches!(
            lesson.judge(&line(&["e7e6", "f11f10", "e4d4"])),
            Err(LessonError::BadLine(_))
        ));
        assert!(matches!(
            lesson.judge(&line(&["zz"])),
            Err(LessonError::BadLine(_))
        ));
        assert!(self::lesson("nope").is_none());
    }

    /// A language table's code and its entries, read from its JavaScript
    /// (`STRINGS.xx = {` then one `"key": "text",` a line).
    fn read_table(table: &str) -> (String, Vec<(String, String)>) {
        let code = table
            .lines()
            .find_map(|line| line.strip_prefix("STRINGS."))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no STRINGS.<code> in {table:.60}"))
            .to_string();
        let entries = table
            .lines()
            .filter_map(|line| {
                let rest = line.trim().strip_prefix('"')?;
                let (key, text) = rest.split_once("\": ")?;
                Some((key.to_string(), text.to_string()))
            })
            .collect();
        (code, entries)
    }

    /// The `{name}` placeholders of a text.
    fn placeholders(text: &str) -> std::collections::BTreeSet<String> {
        text.split('{')
            .skip(1)
            .filter_map(|part| part.split_once('}').map(|(name, _)| name.to_string()))
            .collect()
    }

    #[test]
    fn every_language_has_exactly_the_keys_of_english() {
        let tables: Vec<_> = super::super::server::LANGUAGE_TABLES
            .iter()
            .map(|table| read_table(table))
            .collect();
        let codes: Vec<&str> = tables.iter().map(|(code, _)| code.as_str()).collect();
        assert_eq!(codes, ["en", "es", "hu", "vi", "ja", "ko"]);
        let english: std::collections::BTreeMap<&str, &str> = tables[0]
            .1
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut faults = Vec::new();
        for (code, entries) in &tables {
            let keys: std::collections::BTreeSet<&str> =
                entries.iter().map(|(k, _)| k.as_str()).collect();
            if keys.len() != entries.len() {
                faults.push(format!("{code}: a key appears twice"));
            }
            for key in english.keys().filter(|key| !keys.contains(*key)) {
                faults.push(format!("{code} lacks {key}"));
            }
            for (key, text) in entries {
                match english.get(key.as_str()) {
                    None => faults.push(format!("{code} has {key}, which English has not")),
                    Some(reference) if placeholders(reference) != placeholders(text) => {
                        faults.push(format!("{code}: {key} has other placeholders"))
                    }
                    Some(_) => {}
                }
            }
        }
        assert!(faults.is_empty(), "{}", faults.join("\n"));
    }

    #[test]
    fn every_problem_the_servers_report_has_its_sentence_and_no_other() {
        use crate::tools::gui::problem::Code;
        let (_, english) = read_table(super::super::server::LANGUAGE_TABLES[0]);
        let sentences: std::collections::BTreeSet<&str> = english
            .iter()
            .filter_map(|(key, _)| key.strip_prefix("error."))
            .collect();
        let codes: std::collections::BTreeSet<&str> =
            Code::ALL.iter().map(|code| code.name()).collect();
        assert_eq!(codes.len(), Code::ALL.len(), "a code name appears twice");
        let missing: Vec<_> = codes.difference(&sentences).collect();
        let stale: Vec<_> = sentences.difference(&codes).collect();
        assert!(missing.is_empty(), "no sentence for {missing:?}");
        assert!(stale.is_empty(), "sentences of no code: {stale:?}");
    }

    #[test]
    fn every_rule_lesson_and_explanation_has_its_words() {
        let (_, english) = read_table(super::super::server::LANGUAGE_TABLES[0]);
        let has = |key: String| english.iter().any(|(k, _)| *k == key);
        for rule in RULES {
            for part in ["title", "text", "caption"] {
                assert!(
                    has(format!("rules.{}.{part}", rule.id)),
                    "rules.{}.{part}",
                    rule.id
                );
            }
        }
        for lesson in LESSONS {
            let mut parts = vec!["title", "goal", "hint", "done"];
            if !matches!(lesson.goal, Goal::Game) {
                parts.push("wrong");
            }
            for part in parts {
                assert!(
                    has(format!("lesson.{}.{part}", lesson.id)),
                    "lesson.{}.{part}",
                    lesson.id
                );
            }
            assert!(
                RULES.iter().any(|rule| rule.id == lesson.rule),
                "{}",
                lesson.id
            );
        }
        for (_, _, why) in WRONG.iter().filter(|(_, _, why)| *why != "missed") {
            assert!(has(format!("learn.why.{why}")), "learn.why.{why}");
        }
    }
}
