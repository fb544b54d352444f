//! The engines' seats: which engine sits where, starting it, its options and what it reports.

use super::{Session, lock};
use crate::tools::gui::driver::{
    EngineHandle, Info, OptionDecl, Purpose, Report, Request, Status, declared_name,
    declared_options,
};
use crate::tools::gui::problem::{Code, Problem};
use serde::{Deserialize, Serialize};

/// An engine the page can choose.
#[derive(Clone, Debug, Serialize)]
pub struct EngineChoice {
    /// Shown in the page.
    pub label: String,
    /// Program.
    #[serde(skip)]
    pub cmd: String,
    /// Its arguments.
    #[serde(skip)]
    pub args: Vec<String>,
}

/// The seats an engine can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person's opponent; also gives hints.
    Opponent,
    /// Analyses the position shown.
    Analyst,
    /// Plays White in an engine game.
    White,
    /// Plays Black in an engine game.
    Black,
}

pub(crate) const ROLES: [Role; 4] = [Role::Opponent, Role::Analyst, Role::White, Role::Black];

impl Role {
    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// One seat's engine.
pub(super) struct Seat {
    pub(super) choice: usize,
    /// Counts the processes started in this seat, so that a replaced one's reports are ignored.
    pub(super) generation: u64,
    pub(super) handle: Option<EngineHandle>,
    pub(super) status: Status,
    pub(super) name: String,
    pub(super) options: Vec<OptionDecl>,
    pub(super) values: Vec<(String, String)>,
    pub(super) error: Option<Problem>,
    /// Options set that the engine has not settled yet, oldest first, each
    /// with the value it replaced (kept again if the engine refuses it).
    pub(super) unsettled: Vec<(String, Option<String>)>,
}

impl Seat {
    /// The engine has read option `name`: a refused one keeps the value it
    /// replaced (or, set again since, that value is what the next setting replaced).
    fn settle(&mut self, name: &str, refused: bool) {
        let Some(at) = self.unsettled.iter().position(|(n, _)| n == name) else {
            return;
        };
        let (name, previous) = self.unsettled.remove(at);
        if !refused {
            return;
        }
        if let Some(later) = self.unsettled.iter_mut().find(|(n, _)| *n == name) {
            later.1 = previous;
        } else {
            self.values.retain(|(n, _)| *n != name);
            if let Some(previous) = previous {
                self.values.push((name, previous));
            }
        }
    }
}

impl Session {
    pub(super) fn seat(&self, role: Role) -> &Seat {
        &self.seats[role.index()]
    }

    /// Starts the seat's engine if it is not running.
    pub(super) fn ensure_engine(&mut self, role: Role) {
        let seat = &self.seats[role.index()];
        if seat.handle.is_some() && seat.status != Status::Failed {
            return;
        }
        let choice = self.choices[seat.choice].clone();
        let generation = seat.generation + 1;
        let session = self.myself.clone();
        let handle = EngineHandle::start(&choice.label, &choice.cmd, &choice.args, move |report| {
            if let Some(session) = session.upgrade() {
                let mut session = lock(&session);
                if session.seats[role.index()].generation == generation {
                    session.engine_report(role, report);
                }
            }
        });
        let values = self.seats[role.index()].values.clone();
        for (name, value) in values {
            handle.send(Request::SetOption {
                name,
                value: Some(value),
            });
        }
        if role == Role::Analyst && self.multipv > 1 {
            handle.send(Request::SetOption {
                name: "MultiPV".into(),
                value: Some(self.multipv.to_string()),
            });
        }
        let seat = &mut self.seats[role.index()];
        seat.generation = generation;
        seat.handle = Some(handle);
        seat.status = Status::Starting;
        seat.error = None;
        seat.name = choice.label;
    }

    pub(super) fn send(&mut self, role: Role, request: Request) {
        self.ensure_engine(role);
        if let Some(handle) = &self.seats[role.index()].handle {
            handle.send(request);
        }
    }

    pub(super) fn stop(&mut self, role: Role) {
        if let Some(handle) = &self.seats[role.index()].handle {
            handle.send(Request::Stop);
        }
    }

    /// Handles one report of an engine thread.
    pub(super) fn engine_report(&mut self, role: Role, report: Report) {
        match report {
            Report::Ready(lines) => {
                let seat = &mut self.seats[role.index()];
                if let Some(name) = declared_name(&lines) {
                    seat.name = name;
                }
                seat.options = declared_options(&lines);
            }
            Report::Status(status) => self.seats[role.index()].status = status,
            Report::Info(id, purpose, info) => {
                if purpose == Purpose::Analysis && id == self.analysis.search {
                    let slot = info.multipv.max(1) as usize - 1;
                    if slot < 5 {
                        if self.analysis.lines.len() <= slot {
                            self.analysis.lines.resize(slot + 1, Info::default());
                        }
                        self.analysis.lines[slot] = info;
                        self.analysis.dirty = true;
                    }
                    return;
                }
                if purpose == Purpose::Review {
                    self.review_report(id, Some(info));
                    return;
                }
                if purpose == Purpose::Move && info.multipv == 1 && !info.pv.is_empty() {
                    self.move_info = Some((id, info));
                }
                return;
            }
            Report::BestMove(id, Purpose::Move, mv) => {
                if self.awaited.map(|(awaited, _)| awaited) != Some(id) {
                    return;
                }
                self.awaited = None;
                let info = self
                    .move_info
                    .take()
                    .filter(|(search, _)| *search == id)
                    .map(|(_, info)| info);
                let mover = self.record.game().position().side_to_move();
                let time_ms = u64::try_from(self.turn_started.elapsed().as_millis()).unwrap_or(0);
                if let Some(clocks) = &self.clocks
                    && clocks.left_now(mover) < 0
                {
                    self.end(
                        Some(!mover),
                        "time forfeit",
                        format!("{} wins on time", (!mover).name()),
                    );
                } else if let Err(error) = self.play(&mv, info.as_ref(), time_ms) {
                    let name = self.seat(role).name.clone();
                    self.end(
                        Some(!mover),
                        "illegal move",
                        format!(
                            "{} wins: {name} played an {}",
                            (!mover).name(),
                            error.message
                        ),
                    );
                }
                self.kick();
            }
            Report::BestMove(id, Purpose::Hint, mv) => {
                if self.hint.as_ref().map(|(hint, _)| *hint) == Some(id) {
                    self.hint = Some((id, mv));
                }
            }
            Report::BestMove(_, Purpose::Analysis, _) => {}
            Report::BestMove(id, Purpose::Review, _) => self.review_report(id, None),
            Report::Overdue(id, Purpose::Move) => {
                if self.awaited.map(|(awaited, _)| awaited) == Some(id) {
                    let seat = self.seat(role);
                    self.notice = Some(
                        Problem::new(
                            Code::EngineOverdue,
                            format!(
                                "engine {} did not answer in its time; waiting for its move",
                                seat.name
                            ),
                        )
                        .with("engine", seat.name.as_str()),
                    );
                }
            }
            Report::Overdue(..) => {}
            Report::OptionSettled { name, refused } => {
                self.seats[role.index()].settle(&name, refused);
            }
            Report::Refused(what) => {
                let seat = &mut self.seats[role.index()];
                let problem =
                    Problem::new(Code::EngineRefused, format!("engine {}: {what}", seat.name))
                        .with("engine", seat.name.as_str())
                        .with("detail", what);
                seat.error = Some(problem.clone());
                self.notice = Some(problem);
            }
            Report::Failed(reason) => {
                let seat = &mut self.seats[role.index()];
                seat.status = Status::Failed;
                let message = format!("engine {} ({:?}): {reason}", seat.name, role).to_lowercase();
                log::warn!("{message}");
                let problem = Problem::new(Code::EngineFailed, message)
                    .with("engine", seat.name.as_str())
                    .within("reason", &reason);
                seat.error = Some(problem.clone());
                self.notice = Some(problem);
                if let Some((_, awaited)) = self.awaited
                    && awaited == role
                {
                    self.awaited = None;
                    let mover = self.record.game().position().side_to_move();
                    let name = self.seats[role.index()].name.clone();
                    self.end(
                        Some(!mover),
                        "crash",
                        format!("{} wins: engine {name} failed", (!mover).name()),
                    );
                }
                if role == Role::Analyst {
                    self.analysis.search = 0;
                    self.abandon_review();
                }
            }
        }
        self.publish_state();
    }

    /// Refuses an engine index that is not among the choices.
    pub(super) fn known_engine(&self, engine: usize) -> Result<(), Problem> {
        if engine >= self.choices.len() {
            return Err(
                Problem::new(Code::NoEngine, format!("no engine {engine}")).with("engine", engine)
            );
        }
        Ok(())
    }

    pub(super) fn choose_engine(&mut self, role: Role, engine: usize) -> Result<(), Problem> {
        self.known_engine(engine)?;
        let seat = &mut self.seats[role.index()];
        if seat.choice != engine || seat.status == Status::Failed {
            if self.awaited.is_some_and(|(_, r)| r == role) {
                self.awaited = None;
            }
            seat.choice = engine;
            seat.handle = None;
            seat.options.clear();
            seat.values.clear();
            seat.unsettled.clear();
            seat.status = Status::Idle;
            seat.error = None;
            if role == Role::Analyst {
                self.analysis.search = 0;
            }
            self.ensure_engine(role);
            // The new analyst takes over the position a review was searching.
            if role == Role::Analyst && self.reviewing() {
                self.review_next();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seat holding Hash 16, then set to each of `settings` in turn.
    fn seat_set_to(settings: &[&str]) -> Seat {
        let mut seat = Seat {
            choice: 0,
            generation: 0,
            handle: None,
            status: Status::Idle,
            name: "agon".into(),
            options: Vec::new(),
            values: vec![("Hash".into(), "16".into())],
            error: None,
            unsettled: Vec::new(),
        };
        for value in settings {
            let previous = seat.values.pop().map(|(_, v)| v);
            seat.values.push(("Hash".into(), (*value).into()));
            seat.unsettled.push(("Hash".into(), previous));
        }
        seat
    }

    #[test]
    fn a_refused_option_keeps_the_value_the_engine_had() {
        let hash = |value: &str| vec![("Hash".to_string(), value.to_string())];
        let mut seat = seat_set_to(&["32"]);
        seat.settle("Hash", true);
        assert_eq!(seat.values, hash("16"));

        // Set twice, the first refused: the second stands, and if it is
        // refused too the engine still has 16.
        let mut seat = seat_set_to(&["32", "64"]);
        seat.settle("Hash", true);
        assert_eq!(seat.values, hash("64"));
        seat.settle("Hash", true);
        assert_eq!(seat.values, hash("16"));

        let mut seat = seat_set_to(&["32", "64"]);
        seat.settle("Hash", false);
        seat.settle("Hash", true);
        assert_eq!(seat.values, hash("32"));

        // An option the page never set (MultiPV, a replayed value) changes nothing.
        let mut seat = seat_set_to(&[]);
        seat.settle("MultiPV", true);
        assert_eq!(seat.values, hash("16"));
    }
}
