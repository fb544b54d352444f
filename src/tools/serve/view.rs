//! The state the page of `agon serve` draws: the game as `agon gui`'s
//! [`record_view`] builds it, and around it the controls of public mode
//! (no engines, options, clocks or analysis to choose), the visitor's games
//! and the engine queue.

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
    /// The game's id.
    pub game: String,
    /// The visitor's colour.
    pub human: Color,
    /// The engine's level.
    pub level: usize,
    /// The engine's move is queued or being searched.
    pub thinking: bool,
    /// Searches ahead of the engine's move in the queue, while it waits.
    pub queue_position: Option<usize>,
    /// The visitor's games, as the page's list of games.
    pub library: Vec<Value>,
}

/// The state JSON of one visitor's page.
pub fn state(record: &Record, around: Surroundings) -> Value {
    let mover = if around.thinking {
        Mover::Nobody
    } else {
        Mover::Side(around.human)
    };
    let mut view = record_view(record, mover);
    // Every seat holds agon, fixed: the page draws them, the visitor cannot change them.
    let engines: Vec<Value> = ROLES
        .iter()
        .map(|role| {
            json!({
                "role": role, "choice": 0, "name": ENGINE_NAME,
                "status": if around.thinking { "searching" } else { "idle" },
                "error": Value::Null, "options": [], "values": [],
            })
        })
        .collect();
    let public = json!({
        "public": true,
        "game": around.game,
        "version": around.version,
        "mode": "play",
        "human": around.human.name(),
        "paused": false,
        "level": around.level,
        "levels": LEVEL_NODES.len() + 1,
        "clocks": Value::Null,
        "thinking": around.thinking.then_some("opponent"),
        "queue": around.queue_position.map(|position| json!({ "position": position })),
        "hint": Value::Null,
        "analysing": false,
        "multipv": 1,
        "engines": engines,
        "choices": [{ "label": ENGINE_NAME }],
        "library": around.library,
        "notice": Value::Null,
    });
    if let Value::Object(fields) = public {
        view.extend(fields);
    }
    Value::Object(view)
}
