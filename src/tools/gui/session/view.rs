//! The view the page draws, as JSON, built here alone: [`record_view`] for
//! any backend's game, [`Session::state`] adding the engines and controls of
//! `agon gui`.

use super::record::Record;
use super::seats::ROLES;
use super::{LEVEL_NODES, Mode, Session, finished};
use crate::rules::geometry::OUTER_RING;
use crate::rules::{Cell, Color, Game, Kind, Position, legal_moves, parse_move, to_fen};
use crate::tools::gui::problem::Problem;
use serde_json::{Map, Value, json};

/// Who may move in the position shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mover {
    /// This side, at the end of an unfinished game.
    Side(Color),
    /// Either side, anywhere in the record (free analysis).
    Anyone,
    /// Nobody (engines play).
    Nobody,
}

/// The game as the page draws it: the position shown, its legal moves and
/// relocations, the record and the verdict.
pub fn record_view(record: &Record, mover: Mover) -> Map<String, Value> {
    let game = record.game_at(record.cursor);
    let position = *game.position();
    let at_end = record.cursor == record.line_len();
    let verdict = record.verdict();
    let may_move = match mover {
        Mover::Side(side) => at_end && verdict.is_none() && position.side_to_move() == side,
        Mover::Anyone => !finished(&position),
        Mover::Nobody => false,
    };
    let all_legal = legal_moves(&position);
    let legal: Vec<String> = if may_move {
        all_legal.iter().map(|m| m.to_string()).collect()
    } else {
        Vec::new()
    };
    // The rules core's moves say which captured pieces may be relocated now.
    let mut relocating: Vec<String> = all_legal
        .iter()
        .filter(|m| position.piece_at(m.from()).is_some_and(|p| p.captured))
        .map(|m| m.from().to_string())
        .collect();
    relocating.sort();
    relocating.dedup();
    let mut replay = Game::new(record.start);
    let moves: Vec<Value> = record
        .plies()
        .enumerate()
        .map(|(index, ply)| {
            let _ = replay.play_text(&ply.mv);
            let alternatives: Vec<Value> = record
                .alternatives(index)
                .into_iter()
                .map(|node| json!({ "node": node, "mv": record.move_of(node) }))
                .collect();
            json!({
                "mv": ply.mv, "score": ply.score, "depth": ply.depth,
                "time_ms": ply.time_ms, "book": ply.book, "fen": to_fen(replay.position()),
                "comment": ply.comment, "node": record.node_at(index),
                "main": record.on_main_line(index), "alternatives": alternatives,
            })
        })
        .collect();
    let last = record
        .cursor
        .checked_sub(1)
        .and_then(|i| record.ply(i))
        .map(|p| p.mv.clone());
    let view = json!({
        "names": record.names,
        "start_fen": to_fen(&record.start),
        "fen": to_fen(&position),
        "side": position.side_to_move().name(),
        "cells": cells_json(&position),
        "legal": legal,
        "relocating": relocating,
        "moves": moves,
        "cursor": record.cursor,
        "last": last,
        "result": verdict.map(|f| json!({
            "winner": f.winner.map(Color::name),
            "termination": f.termination,
            "reason": f.reason,
        })),
    });
    match view {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl Session {
    /// The state the page draws, as JSON.
    pub fn state(&self) -> Value {
        let mover = match self.mode {
            Mode::Play { human } => Mover::Side(human),
            Mode::Watch { .. } => Mover::Nobody,
            Mode::Analysis => Mover::Anyone,
        };
        let mut view = record_view(&self.record, mover);
        let clocks = self.clocks.map(|c| {
            let running = c
                .since
                .map(|_| self.record.game().position().side_to_move().name());
            json!({
                "white": c.left_now(Color::White),
                "black": c.left_now(Color::Black),
                "running": running,
                "control": c.minutes_and_seconds(),
            })
        });
        let (mode, human, paused) = match self.mode {
            Mode::Play { human } => ("play", Some(human.name()), false),
            Mode::Watch { paused } => ("watch", None, paused),
            Mode::Analysis => ("analysis", None, false),
        };
        let engines: Vec<Value> = ROLES
            .iter()
            .map(|role| {
                let seat = self.seat(*role);
                json!({
                    "role": role, "choice": seat.choice, "name": seat.name,
                    "status": seat.status, "error": seat.error.as_ref().map(Problem::json),
                    "options": seat.options,
                    "values": seat.values.iter().map(|(n, v)| json!([n, v])).collect::<Vec<_>>(),
                })
            })
            .collect();
        let library: Vec<Value> = self
            .library
            .iter()
            .map(|g| {
                json!({
                    "white": g.tag("White"), "black": g.tag("Black"),
                    "result": g.result, "round": g.tag("Round"), "plies": g.moves.len(),
                })
            })
            .collect();
        let session = json!({
            "version": self.version,
            "mode": mode,
            "human": human,
            "paused": paused,
            "level": self.level,
            "levels": LEVEL_NODES.len() + 1,
            "clocks": clocks,
            "thinking": self.awaited.map(|(_, role)| role),
            "hint": self.hint.as_ref().map(|(_, mv)| mv.clone()).filter(|m| !m.is_empty()),
            "analysing": self.analysing,
            "multipv": self.multipv,
            "engines": engines,
            "choices": self.choices,
            "library": library,
            "notice": self.notice.as_ref().map(Problem::json),
            "review": self.review_view(),
        });
        if let Value::Object(fields) = session {
            view.extend(fields);
        }
        Value::Object(view)
    }
}

/// The board after `moves` from the position shown (a preview of a line),
/// as the cells' contents; the moves stop at the first illegal one.
pub fn preview(record: &Record, moves: &[String]) -> Value {
    let mut position = *record.game_at(record.cursor).position();
    for text in moves {
        match parse_move(&position, text) {
            Ok(mv) => position = position.make_move(mv),
            Err(_) => break,
        }
    }
    json!({ "cells": cells_json(&position) })
}

/// Every cell with its FEN letter (`*` when captured), empty when empty.
pub fn cells_json(position: &Position) -> Value {
    let mut cells = Map::new();
    for cell in Cell::all() {
        let letter = position.piece_at(cell).map_or(String::new(), |piece| {
            let letter = match (piece.color, piece.kind) {
                (Color::White, Kind::Queen) => "Q",
                (Color::White, Kind::Guard) => "G",
                (Color::Black, Kind::Queen) => "q",
                (Color::Black, Kind::Guard) => "g",
            };
            if piece.captured {
                format!("{letter}*")
            } else {
                letter.to_string()
            }
        });
        cells.insert(cell.to_string(), Value::String(letter));
    }
    Value::Object(cells)
}

/// The board's cells for drawing: name, 0-based file and rank, ring, and
/// whether a captured guard may be relocated there.
pub fn geometry() -> Value {
    let cells: Vec<Value> = Cell::all()
        .map(|cell| {
            json!({
                "name": cell.to_string(),
                "file": cell.file(),
                "rank": cell.rank(),
                "ring": cell.ring(),
                "outer": OUTER_RING & cell.bit() != 0,
            })
        })
        .collect();
    json!({ "cells": cells, "throne": Cell::THRONE.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_has_the_91_cells() {
        let geometry = geometry();
        assert_eq!(geometry["cells"].as_array().unwrap().len(), 91);
        assert_eq!(geometry["throne"], "f6");
    }
}
