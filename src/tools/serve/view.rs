//! What the page of `agon serve` reads about one game: the state JSON in the
//! shape `agon gui` sends it, the preview of a line and the PGN record, and
//! the search each strength level asks of the engine.

use super::store::Ending;
use crate::rules::geometry::cells_of;
use crate::rules::{Color, Game, Position, legal_moves, parse_move, to_fen};
use crate::tools::gui::session::{FULL_STRENGTH_MOVETIME_MS, LEVEL_NODES, cells_json, movers};
use crate::tools::match_runner::record::{self, GameRecord, MoveRecord, Verdict};
use serde_json::{Value, json};
use std::time::Duration;

/// A node-limited search may take this long before it counts as stalled.
const NODE_SEARCH_BUDGET: Duration = Duration::from_secs(30);

/// The `go` line of a strength level and how long it may take: the server's
/// limit, whatever a visitor asks.
pub fn level_search(level: usize) -> (String, Duration) {
    match LEVEL_NODES.get(level) {
        Some(nodes) => (format!("go nodes {nodes}"), NODE_SEARCH_BUDGET),
        None => (
            format!("go movetime {FULL_STRENGTH_MOVETIME_MS}"),
            Duration::from_millis(FULL_STRENGTH_MOVETIME_MS),
        ),
    }
}

/// One game as the view needs it.
pub struct GameView<'a> {
    /// Where it started.
    pub start: Position,
    /// The moves played.
    pub moves: &'a [String],
    /// Plies shown.
    pub cursor: usize,
    /// The visitor's colour.
    pub human: Color,
    /// The engine's level.
    pub level: usize,
    /// White's and Black's names.
    pub names: [String; 2],
    /// How it ended.
    pub ending: Option<&'a Ending>,
    /// The engine is searching (or queued) for its move.
    pub thinking: bool,
}

impl GameView<'_> {
    fn game_at(&self, plies: usize) -> Game {
        let mut game = Game::new(self.start);
        for mv in self.moves.iter().take(plies) {
            if game.play_text(mv).is_err() {
                break;
            }
        }
        game
    }
}

/// The state JSON the page draws (the keys of `agon gui`'s state).
pub fn state(view: GameView<'_>, version: u64) -> Value {
    let position = *view.game_at(view.cursor).position();
    let at_end = view.cursor == view.moves.len();
    let may_move =
        at_end && view.ending.is_none() && !view.thinking && position.side_to_move() == view.human;
    let legal: Vec<String> = if may_move {
        legal_moves(&position)
            .iter()
            .map(|m| m.to_string())
            .collect()
    } else {
        Vec::new()
    };
    let relocating: Vec<String> =
        cells_of(position.captured(position.side_to_move()) & movers(&position))
            .map(|c| c.to_string())
            .collect();
    let mut replay = Game::new(view.start);
    let moves: Vec<Value> = view
        .moves
        .iter()
        .map(|mv| {
            let _ = replay.play_text(mv);
            json!({
                "mv": mv, "score": Value::Null, "depth": Value::Null,
                "time_ms": Value::Null, "book": false, "fen": to_fen(replay.position()),
            })
        })
        .collect();
    let last = view
        .cursor
        .checked_sub(1)
        .and_then(|i| view.moves.get(i))
        .cloned();
    json!({
        "version": version,
        "mode": "play",
        "human": view.human.name(),
        "paused": false,
        "level": view.level,
        "levels": LEVEL_NODES.len() + 1,
        "names": view.names,
        "start_fen": to_fen(&view.start),
        "fen": to_fen(&position),
        "side": position.side_to_move().name(),
        "cells": cells_json(&position),
        "legal": legal,
        "relocating": relocating,
        "moves": moves,
        "cursor": view.cursor,
        "last": last,
        "result": view.ending.map(|e| json!({
            "winner": e.winner.as_deref().map(capitalised),
            "termination": e.termination,
            "reason": e.reason,
        })),
        "clocks": Value::Null,
        "thinking": view.thinking.then_some("opponent"),
        "hint": Value::Null,
        "analysing": false,
        "multipv": 1,
        "engines": [],
        "choices": [],
        "notice": Value::Null,
    })
}

fn capitalised(colour: &str) -> &'static str {
    if colour == "black" { "Black" } else { "White" }
}

/// The board after `moves` from `position`, stopping at the first illegal one.
pub fn preview(position: &Position, moves: &[String]) -> Value {
    let mut position = *position;
    for text in moves {
        match parse_move(&position, text) {
            Ok(mv) => position = position.make_move(mv),
            Err(_) => break,
        }
    }
    json!({ "cells": cells_json(&position) })
}

/// The game as a PGN record.
pub fn pgn(view: GameView<'_>) -> String {
    let game = view.game_at(view.moves.len());
    let result = match view.ending.and_then(|e| e.winner.as_deref()) {
        Some("white") => Verdict::Win(Color::White),
        Some(_) => Verdict::Win(Color::Black),
        None => Verdict::Draw,
    };
    let record = GameRecord {
        game: 1,
        round: 1,
        white: view.names[0].clone(),
        black: view.names[1].clone(),
        result,
        termination: record::Ending::Adjudication,
        reason: view
            .ending
            .map_or_else(|| "game in progress".to_string(), |e| e.reason.clone()),
        fen: to_fen(&view.start),
        book: Vec::new(),
        moves: view
            .moves
            .iter()
            .map(|mv| MoveRecord {
                text: mv.clone(),
                score: None,
                depth: None,
                time_ms: 0,
            })
            .collect(),
        white_time_control: "-".into(),
        black_time_control: "-".into(),
        final_fen: to_fen(game.position()),
        date: record::today(),
    };
    record.pgn()
}
