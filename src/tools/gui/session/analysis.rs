//! Analysis of the position shown: one search at a time, its lines throttled to the page.

use super::{Role, Session, finished};
use crate::rules::{Color, parse_fen, to_fen};
use crate::tools::gui::driver::{Info, Purpose, Request, Search};
use crate::tools::gui::pgn::WhiteScore;
use serde_json::{Value, json};

/// The last analysis of the position shown.
#[derive(Default)]
pub(super) struct Analysis {
    pub(super) search: u64,
    pub(super) fen: String,
    pub(super) lines: Vec<Info>,
    pub(super) dirty: bool,
}

impl Session {
    pub(super) fn refresh_analysis(&mut self) {
        let fen = to_fen(self.record.game_at(self.record.cursor).position());
        if !self.analysing {
            if self.analysis.search != 0 {
                self.stop(Role::Analyst);
                self.analysis.search = 0;
            }
            return;
        }
        if self.analysis.search != 0 && self.analysis.fen == fen || self.reviewing() {
            return;
        }
        let id = self.new_search_id();
        self.analysis = Analysis {
            search: id,
            fen,
            lines: Vec::new(),
            dirty: true,
        };
        if finished(self.record.game_at(self.record.cursor).position()) {
            self.stop(Role::Analyst);
            return;
        }
        let search = Search {
            id,
            purpose: Purpose::Analysis,
            position: self.record.position_line(self.record.cursor),
            go: "go infinite".into(),
            budget: None,
        };
        self.send(Role::Analyst, Request::Search(search));
    }

    /// The board after `moves` from the position shown (a preview of a line),
    /// as the cells' contents; the moves stop at the first illegal one.
    pub fn preview(&self, moves: &[String]) -> Value {
        super::view::preview(&self.record, moves)
    }

    /// Sends the analysis if it changed since the last time (called on a timer).
    pub fn flush_analysis(&mut self) {
        if !self.analysis.dirty {
            return;
        }
        self.analysis.dirty = false;
        let event = analysis_event(
            &self.analysis.fen,
            self.analysis.search != 0,
            &self.analysis.lines,
        );
        (self.publish)("analysis", event.to_string());
    }
}

/// The page's `analysis` event: the lines of the position `fen`, scores
/// from White's side.
pub fn analysis_event(fen: &str, running: bool, lines: &[Info]) -> Value {
    let side = parse_fen(fen).map_or(Color::White, |p| p.side_to_move());
    let lines: Vec<Value> = lines
        .iter()
        .filter(|line| !line.pv.is_empty())
        .map(|line| {
            json!({
                "multipv": line.multipv,
                "depth": line.depth,
                "seldepth": line.seldepth,
                "score": WhiteScore::from_mover(side, line.cp, line.mate),
                "bound": line.bound,
                "nodes": line.nodes,
                "nps": line.nps,
                "time": line.time,
                "pv": line.pv,
            })
        })
        .collect();
    json!({ "fen": fen, "pov": "white", "running": running, "lines": lines })
}
