//! The clocks of a timed game.

use super::Session;
use crate::rules::Color;
use crate::tools::gui::problem::{Code, Problem};
use std::time::Instant;

/// Clocks of a timed game.
#[derive(Clone, Copy, Debug)]
pub(super) struct Clocks {
    pub(super) base_ms: u64,
    pub(super) increment_ms: u64,
    pub(super) left_ms: [i64; 2],
    /// When the side to move started thinking; `None` while stopped.
    pub(super) since: Option<Instant>,
}

impl Clocks {
    pub(super) fn new(base_ms: u64, increment_ms: u64) -> Clocks {
        let base = i64::try_from(base_ms).unwrap_or(i64::MAX);
        Clocks {
            base_ms,
            increment_ms,
            left_ms: [base, base],
            since: None,
        }
    }

    pub(super) fn left_now(&self, side: Color) -> i64 {
        let running = self.since.map_or(0, |s| {
            i64::try_from(s.elapsed().as_millis()).unwrap_or(i64::MAX)
        });
        self.left_ms[side.index()].saturating_sub(running)
    }

    /// Charges the mover's thinking and adds the increment.
    pub(super) fn charge(&mut self, mover: Color) {
        let left = self.left_now(mover);
        let increment = i64::try_from(self.increment_ms).unwrap_or(0);
        self.left_ms[mover.index()] = left.saturating_add(increment);
        self.since = Some(Instant::now());
    }

    pub(super) fn pause(&mut self, side: Color) {
        self.left_ms[side.index()] = self.left_now(side);
        self.since = None;
    }

    /// The control as the page's Clock field takes it: `minutes+seconds`.
    pub(super) fn minutes_and_seconds(&self) -> String {
        let base = self.base_ms as f64 / 60_000.0;
        let increment = self.increment_ms as f64 / 1000.0;
        format!("{base}+{increment}")
    }

    pub(super) fn describe(&self) -> String {
        let base = self.base_ms as f64 / 1000.0;
        let increment = self.increment_ms as f64 / 1000.0;
        format!("{base}+{increment}")
    }
}

/// Reads a time control `minutes+seconds` (e.g. `5+3`, `0.5+0.1`); empty is none.
pub(super) fn parse_time_control(text: &str) -> Result<Option<Clocks>, Problem> {
    let text = text.trim();
    if text.is_empty() || text == "none" {
        return Ok(None);
    }
    let (base, increment) = text.split_once('+').unwrap_or((text, "0"));
    let number = |part: &str, scale: f64| {
        part.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 1e4)
            .map(|v| (v * scale).round() as u64)
            .ok_or_else(|| {
                Problem::new(
                    Code::BadClock,
                    format!("bad time control '{text}': expected minutes+seconds"),
                )
                .with("text", text)
            })
    };
    let base_ms = number(base, 60_000.0)?;
    if base_ms == 0 {
        return Err(Problem::new(
            Code::ClockWithoutTime,
            format!("bad time control '{text}': no time"),
        )
        .with("text", text));
    }
    Ok(Some(Clocks::new(base_ms, number(increment, 1000.0)?)))
}

impl Session {
    /// Ends a timed game whose side to move has run out of time (called on a timer).
    pub fn check_clocks(&mut self) {
        let Some(clocks) = self.clocks else { return };
        if clocks.since.is_none() || self.record.verdict().is_some() {
            return;
        }
        let side = self.record.game().position().side_to_move();
        if clocks.left_now(side) < 0 {
            self.end(
                Some(!side),
                "time forfeit",
                format!("{} wins on time", (!side).name()),
            );
            self.publish_state();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn time_controls_are_minutes_plus_seconds() {
        let clocks = parse_time_control("5+3").unwrap().unwrap();
        assert_eq!((clocks.base_ms, clocks.increment_ms), (300_000, 3_000));
        assert!(parse_time_control("").unwrap().is_none());
        assert!(parse_time_control("x+1").is_err());
        assert!(parse_time_control("0+1").is_err());
        assert!(parse_time_control("1e9+0").is_err());
    }
}
