//! The state the page of `agon serve` draws: the game or the analysis
//! board as `agon gui`'s [`record_view`] builds it, and around it the
//! controls of public mode (no engines, options or clocks to choose), the
//! visitor's games and the engine queue.

use crate::rules::Color;
use crate::tools::gui::session::record::Record;
use crate::tools::gui::session::view::{Mover, record_view};
use crate::tools::gui::session::{LEVEL_NODES, ROLES};
use serde_json::{Value, json};

/// The only engine of a public server.
const ENGINE_NAME: &str = "agon";

/// What the page shows around the game.
pub struct Surroundings {
    /// Counts the states sent to this visitor.
    pub version: u64,
    /// The game's id, or the analysis board's.
    pub game: String,
    /// The engine's level (of the game, or the last one played).
    pub level: usize,
    /// Searches ahead of the engine's move or analysis in the queue, while it waits.
    pub queue_position: Option<usize>,
    /// The visitor's games, as the page's list of games.
    pub library: Vec<Value>,
    /// A game or the analysis board.
    pub shown: Shown,
}

/// What the board shows.
pub enum Shown {
    /// A game against agon.
    Game {
        /// The visitor's colour.
        human: Color,
        /// The engine's move is queued or being searched.
        thinking: bool,
    },
    /// The analysis board: free moves for both sides.
    Board {
        /// Engine lines on.
        analysing: bool,
        /// How many.
        lines: usize,
        /// An analysis or review search is queued or running.
        searching: bool,
        /// The review's view, or null.
        review: Value,
    },
}

/// The state JSON of one visitor's page.
pub fn state(record: &Record, around: Surroundings) -> Value {
    let (mover, mode, human, thinking, analysing, lines, review) = match around.shown {
        Shown::Game { human, thinking } => (
            if thinking {
                Mover::Nobody
            } else {
                Mover::Side(human)
            },
            "play",
            Some(human.name()),
            thinking.then_some("opponent"),
            false,
            1,
            Value::Null,
        ),
        Shown::Board {
            analysing,
            lines,
            searching,
            review,
        } => (
            Mover::Anyone,
            "analysis",
            None,
            searching.then_some("analyst"),
            analysing,
            lines,
            review,
        ),
    };
    let mut view = record_view(record, mover);
    // Every seat holds agon, fixed: the page draws them, the visitor cannot change them.
    let engines: Vec<Value> = ROLES
        .iter()
        .map(|role| {
            json!({
                "role": role, "choice": 0, "name": ENGINE_NAME,
                "status": if thinking.is_some() { "searching" } else { "idle" },
                "error": Value::Null, "options": [], "values": [],
            })
        })
        .collect();
    let public = json!({
        "public": true,
        "game": around.game,
        "version": around.version,
        "mode": mode,
        "human": human,
        "paused": false,
        "level": around.level,
        "levels": LEVEL_NODES.len() + 1,
        "clocks": Value::Null,
        "thinking": thinking,
        "queue": around.queue_position.map(|position| json!({ "position": position })),
        "hint": Value::Null,
        "analysing": analysing,
        "multipv": lines,
        "engines": engines,
        "choices": [{ "label": ENGINE_NAME }],
        "library": around.library,
        "notice": Value::Null,
        "review": review,
    });
    if let Value::Object(fields) = public {
        view.extend(fields);
    }
    Value::Object(view)
}
