//! One engine driven for the GUI: a thread per engine process with a small
//! state machine (idle, searching, stopping) so that a new search always
//! waits for the `bestmove` of the one it replaces, options wait for the
//! engine to be idle, and a crash or a stall is reported instead of waited on.

use super::problem::{Code, Problem};
use crate::tools::match_runner::engine::{EngineProcess, Failure};
use crate::tools::match_runner::options::{EngineSpec, Limits, Timeouts};
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long a stopped search may take to say `bestmove` before the engine
/// counts as stalled.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How often the thread looks at its requests while the engine is silent.
const POLL: Duration = Duration::from_millis(10);

/// What a search is for; reports carry it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A move to play in the game.
    Move,
    /// Analysis of the position shown.
    Analysis,
    /// A suggestion for the person to move.
    Hint,
    /// One position of a game review.
    Review,
}

/// One search to run.
#[derive(Clone, Debug)]
pub struct Search {
    /// Identifies the search in reports.
    pub id: u64,
    /// Why it runs.
    pub purpose: Purpose,
    /// The `position ...` line.
    pub position: String,
    /// The `go ...` line.
    pub go: String,
    /// When to give up waiting for `bestmove` (`None`: until stopped).
    pub budget: Option<Duration>,
}

/// What the GUI asks of an engine.
pub enum Request {
    /// Start this search, after stopping any running one.
    Search(Search),
    /// Stop the running search (its result is dropped).
    Stop,
    /// Set an option when the engine is idle; [`Report::OptionSettled`] tells
    /// whether the engine took it.
    SetOption {
        /// Its name.
        name: String,
        /// Its value (none for a button).
        value: Option<String>,
    },
    /// `ucinewgame`, sent when the engine is idle.
    NewGame,
}

/// The state of an engine, as the page shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Being started.
    Starting,
    /// Waiting for work.
    Idle,
    /// Searching.
    Searching,
    /// Told to stop, waiting for its `bestmove`.
    Stopping,
    /// Gone: crashed, stalled or failed to start.
    Failed,
}

/// One `info` line with a score.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Info {
    /// Which line of a MultiPV search (1 = best).
    pub multipv: u32,
    /// Depth completed.
    pub depth: u32,
    /// Selective depth.
    pub seldepth: Option<u32>,
    /// Centipawn-style score from the mover's side.
    pub cp: Option<i32>,
    /// Moves to a forced end from the mover's side.
    pub mate: Option<i32>,
    /// `lowerbound` or `upperbound` when the score is a bound.
    pub bound: Option<String>,
    /// Nodes searched.
    pub nodes: Option<u64>,
    /// Nodes per second.
    pub nps: Option<u64>,
    /// Milliseconds searched.
    pub time: Option<u64>,
    /// The line of play.
    pub pv: Vec<String>,
}

impl Info {
    /// Reads an `info` line; `None` unless it carries a score.
    pub fn parse(line: &str) -> Option<Info> {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"info") {
            return None;
        }
        let mut info = Info {
            multipv: 1,
            ..Info::default()
        };
        let mut scored = false;
        let mut index = 1;
        while index < words.len() {
            let next = words.get(index + 1).copied().unwrap_or_default();
            match words[index] {
                "depth" => info.depth = next.parse().unwrap_or(0),
                "seldepth" => info.seldepth = next.parse().ok(),
                "multipv" => info.multipv = next.parse().unwrap_or(1),
                "nodes" => info.nodes = next.parse().ok(),
                "nps" => info.nps = next.parse().ok(),
                "time" => info.time = next.parse().ok(),
                "score" => {
                    let value = words.get(index + 2).and_then(|v| v.parse().ok());
                    match next {
                        "cp" => info.cp = value,
                        "mate" => info.mate = value,
                        _ => {}
                    }
                    scored = value.is_some();
                    index += 3;
                    continue;
                }
                "lowerbound" | "upperbound" => {
                    info.bound = Some(words[index].to_string());
                    index += 1;
                    continue;
                }
                "pv" => {
                    info.pv = words[index + 1..].iter().map(|w| w.to_string()).collect();
                    break;
                }
                "string" => return None,
                _ => {
                    index += 1;
                    continue;
                }
            }
            index += 2;
        }
        scored.then_some(info)
    }
}

/// What an engine thread tells the GUI.
pub enum Report {
    /// Started: its `id` and `option` lines.
    Ready(Vec<String>),
    /// Its state changed.
    Status(Status),
    /// A scored `info` line of the running search.
    Info(u64, Purpose, Info),
    /// The running search ended with this move.
    BestMove(u64, Purpose, String),
    /// The search passed its deadline and was told to stop; its `bestmove`
    /// still follows, late.
    Overdue(u64, Purpose),
    /// The engine refused something: an `info string error: ...` line.
    Refused(String),
    /// The engine has read this option (its `readyok` came): refused when
    /// an error came between the two.
    OptionSettled {
        /// The option.
        name: String,
        /// Whether the engine refused it.
        refused: bool,
    },
    /// It is gone, for this reason.
    Failed(Problem),
}

/// The GUI's handle on one engine thread; dropping it lets the thread end
/// and kill its process, [`EngineHandle::finish`] also waits for that.
pub struct EngineHandle {
    requests: Option<Sender<Request>>,
    thread: Option<JoinHandle<()>>,
}

impl EngineHandle {
    /// Starts `cmd args` on its own thread; `report` receives everything it says.
    pub fn start(
        name: &str,
        cmd: &str,
        args: &[String],
        report: impl Fn(Report) + Send + 'static,
    ) -> EngineHandle {
        let spec = EngineSpec {
            name: name.to_string(),
            cmd: cmd.to_string(),
            args: args.to_vec(),
            options: Vec::new(),
            limits: Limits {
                clock: None,
                movetime: None,
                depth: None,
                nodes: None,
            },
        };
        let (requests, inbox) = channel();
        let thread = thread::spawn(move || run(&spec, &inbox, &report));
        EngineHandle {
            requests: Some(requests),
            thread: Some(thread),
        }
    }

    /// Queues a request; a gone engine ignores it.
    pub fn send(&self, request: Request) {
        if let Some(requests) = &self.requests {
            let _ = requests.send(request);
        }
    }

    /// Ends the thread and waits until its engine process is killed and reaped.
    pub fn finish(mut self) {
        // Closing the channel ends the thread, whose engine process is dropped.
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum State {
    Idle,
    Searching {
        search: Search,
        deadline: Option<Instant>,
    },
    Stopping {
        since: Instant,
        /// A search stopped on its deadline: its `bestmove` is still the answer.
        overdue: Option<Search>,
    },
}

fn run(spec: &EngineSpec, inbox: &Receiver<Request>, report: &impl Fn(Report)) {
    let abort = AtomicBool::new(false);
    let timeouts = Timeouts {
        startup: Duration::from_secs(10),
        ready: Duration::from_secs(5),
        stall: STOP_GRACE,
    };
    report(Report::Status(Status::Starting));
    let mut engine = match EngineProcess::start(spec, &timeouts, &abort) {
        Ok(engine) => engine,
        Err(error) => {
            report(Report::Failed(
                Problem::new(Code::EngineStartFailed, format!("failed to start: {error}"))
                    .with("detail", error.to_string()),
            ));
            return;
        }
    };
    report(Report::Ready(engine.declarations().to_vec()));
    report(Report::Status(Status::Idle));
    let mut machine = Machine {
        state: State::Idle,
        pending: None,
        queued: Vec::new(),
        unsettled: VecDeque::new(),
        refused: false,
    };
    if let Err(reason) = machine.serve(&mut engine, inbox, report, &abort) {
        report(Report::Failed(reason));
    }
}

struct Machine {
    state: State,
    /// The search to start once the stopped one has said `bestmove`.
    pending: Option<Search>,
    /// What is held back until the engine is idle.
    queued: Vec<Held>,
    /// Options sent, each followed by `isready`, whose `readyok` has not come.
    unsettled: VecDeque<String>,
    /// An error came since the oldest unsettled option was sent.
    refused: bool,
}

/// Lines held back while the engine searches.
enum Held {
    NewGame,
    SetOption { name: String, value: Option<String> },
}

impl Machine {
    /// Runs until the GUI lets go (`Ok`) or the engine fails (`Err` with why).
    fn serve(
        &mut self,
        engine: &mut EngineProcess,
        inbox: &Receiver<Request>,
        report: &impl Fn(Report),
        abort: &AtomicBool,
    ) -> Result<(), Problem> {
        loop {
            loop {
                match inbox.try_recv() {
                    Ok(request) => self.take(request, engine, report)?,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Ok(()),
                }
            }
            let mut heard = None;
            match engine.wait_for(POLL, abort, |line| {
                heard = Some(line.to_string());
                true
            }) {
                Ok(()) => {
                    if let Some(line) = heard {
                        self.hear(&line, engine, report)?;
                    }
                }
                Err(Failure::TimedOut) => {}
                Err(Failure::Crashed) => {
                    return Err(Problem::new(
                        Code::EngineCrashed,
                        "the engine crashed (its output closed)",
                    ));
                }
                Err(Failure::Aborted) => return Ok(()),
            }
            // Also after a line: an engine that talks on must still meet its deadlines.
            self.check_deadlines(engine, report)?;
        }
    }

    fn take(
        &mut self,
        request: Request,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        match request {
            Request::Search(search) => match self.state {
                State::Idle => self.start(search, engine, report)?,
                State::Searching { .. } => {
                    self.stop(engine, report)?;
                    self.pending = Some(search);
                }
                State::Stopping { .. } => self.pending = Some(search),
            },
            Request::Stop => {
                self.pending = None;
                match &mut self.state {
                    State::Searching { .. } => self.stop(engine, report)?,
                    State::Stopping { overdue, .. } => *overdue = None,
                    State::Idle => {}
                }
            }
            Request::SetOption { name, value } => {
                self.queue(Held::SetOption { name, value }, engine)?;
            }
            Request::NewGame => self.queue(Held::NewGame, engine)?,
        }
        Ok(())
    }

    fn queue(&mut self, held: Held, engine: &mut EngineProcess) -> Result<(), Problem> {
        if matches!(self.state, State::Idle) {
            self.release(held, engine)
        } else {
            self.queued.push(held);
            Ok(())
        }
    }

    /// Sends what was held; an option is followed by `isready`, so that
    /// its `readyok` tells whether an error before it refused the option.
    fn release(&mut self, held: Held, engine: &mut EngineProcess) -> Result<(), Problem> {
        match held {
            Held::NewGame => send(engine, "ucinewgame"),
            Held::SetOption { name, value } => {
                send(engine, &setoption_line(&name, value.as_deref()))?;
                send(engine, "isready")?;
                self.unsettled.push_back(name);
                Ok(())
            }
        }
    }

    fn start(
        &mut self,
        search: Search,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        send(engine, &search.position)?;
        send(engine, &search.go)?;
        let deadline = search.budget.map(|b| Instant::now() + b + STOP_GRACE);
        self.state = State::Searching { search, deadline };
        report(Report::Status(Status::Searching));
        Ok(())
    }

    fn stop(
        &mut self,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        send(engine, "stop")?;
        self.state = State::Stopping {
            since: Instant::now(),
            overdue: None,
        };
        report(Report::Status(Status::Stopping));
        Ok(())
    }

    fn hear(
        &mut self,
        line: &str,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        let mut words = line.split_whitespace();
        if let Some(what) = line.trim().strip_prefix("info string error:") {
            self.refused |= !self.unsettled.is_empty();
            report(Report::Refused(what.trim().to_string()));
            return Ok(());
        }
        if line.trim() == "readyok" {
            if let Some(name) = self.unsettled.pop_front() {
                let refused = std::mem::take(&mut self.refused);
                report(Report::OptionSettled { name, refused });
            }
            return Ok(());
        }
        match (words.next(), &self.state) {
            (Some("info"), State::Searching { search, .. }) => {
                if let Some(info) = Info::parse(line) {
                    report(Report::Info(search.id, search.purpose, info));
                }
            }
            (Some("bestmove"), State::Searching { search, .. }) => {
                let mv = words.next().unwrap_or_default().to_string();
                report(Report::BestMove(search.id, search.purpose, mv));
                self.become_idle(engine, report)?;
            }
            (Some("bestmove"), State::Stopping { overdue, .. }) => {
                if let Some(search) = overdue {
                    let mv = words.next().unwrap_or_default().to_string();
                    report(Report::BestMove(search.id, search.purpose, mv));
                }
                self.become_idle(engine, report)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn become_idle(
        &mut self,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        self.state = State::Idle;
        for held in std::mem::take(&mut self.queued) {
            self.release(held, engine)?;
        }
        match self.pending.take() {
            Some(search) => self.start(search, engine, report),
            None => {
                report(Report::Status(Status::Idle));
                Ok(())
            }
        }
    }

    fn check_deadlines(
        &mut self,
        engine: &mut EngineProcess,
        report: &impl Fn(Report),
    ) -> Result<(), Problem> {
        match &self.state {
            State::Searching {
                search,
                deadline: Some(deadline),
            } if Instant::now() > *deadline => {
                let search = search.clone();
                report(Report::Overdue(search.id, search.purpose));
                self.stop(engine, report)?;
                self.state = State::Stopping {
                    since: Instant::now(),
                    overdue: Some(search),
                };
                Ok(())
            }
            State::Stopping { since, .. } if since.elapsed() > STOP_GRACE => Err(Problem::new(
                Code::EngineStalled,
                format!(
                    "the engine stalled: no bestmove {} s after stop",
                    STOP_GRACE.as_secs()
                ),
            )
            .with("seconds", STOP_GRACE.as_secs())),
            _ => Ok(()),
        }
    }
}

/// The protocol's `setoption` line.
fn setoption_line(name: &str, value: Option<&str>) -> String {
    match value {
        Some(value) => format!("setoption name {name} value {value}"),
        None => format!("setoption name {name}"),
    }
}

fn send(engine: &mut EngineProcess, line: &str) -> Result<(), Problem> {
    engine.send(line).map_err(|_| {
        Problem::new(
            Code::EngineCrashed,
            "the engine crashed (writing to it failed)",
        )
    })
}

/// An option as the engine declared it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OptionDecl {
    /// Its name.
    pub name: String,
    /// `spin`, `check`, `combo`, `string` or `button`.
    pub kind: String,
    /// The default value, if any.
    pub default: Option<String>,
    /// Bounds of a spin.
    pub min: Option<i64>,
    /// Bounds of a spin.
    pub max: Option<i64>,
    /// Choices of a combo.
    pub vars: Vec<String>,
}

/// The engine's `id name`, if given.
pub fn declared_name(lines: &[String]) -> Option<String> {
    lines
        .iter()
        .find_map(|line| line.strip_prefix("id name "))
        .map(|name| name.trim().to_string())
}

/// The options of `option name ... type ...` lines.
pub fn declared_options(lines: &[String]) -> Vec<OptionDecl> {
    lines.iter().filter_map(|line| parse_option(line)).collect()
}

fn parse_option(line: &str) -> Option<OptionDecl> {
    const KEYS: [&str; 6] = ["name", "type", "default", "min", "max", "var"];
    let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
    for word in line.split_whitespace().skip(1) {
        match fields.last_mut() {
            Some((key, words)) if !KEYS.contains(&word) || (*key == "name" && word == "name") => {
                words.push(word)
            }
            _ if KEYS.contains(&word) => fields.push((word, Vec::new())),
            _ => return None,
        }
    }
    let value = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, words)| words.join(" "))
    };
    Some(OptionDecl {
        name: value("name").filter(|n| !n.is_empty())?,
        kind: value("type")?,
        default: value("default"),
        min: value("min").and_then(|v| v.parse().ok()),
        max: value("max").and_then(|v| v.parse().ok()),
        vars: fields
            .iter()
            .filter(|(k, _)| *k == "var")
            .map(|(_, words)| words.join(" "))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn an_engine_that_talks_on_without_a_move_is_overdue_then_stalled() {
        let (reports, heard) = mpsc::channel();
        let engine = EngineHandle::start(
            "chatty",
            "python3",
            &[
                "tests/engines/scripted.py".to_string(),
                "chatty".to_string(),
            ],
            move |report| {
                let _ = reports.send(report);
            },
        );
        engine.send(Request::Search(Search {
            id: 1,
            purpose: Purpose::Move,
            position: "position startpos".into(),
            go: "go movetime 100".into(),
            budget: Some(Duration::from_millis(100)),
        }));
        let deadline = Instant::now() + STOP_GRACE * 3;
        let (mut overdue, mut stalled) = (false, false);
        while !stalled {
            let left = deadline.saturating_duration_since(Instant::now());
            match heard.recv_timeout(left) {
                Ok(Report::Overdue(1, Purpose::Move)) => overdue = true,
                Ok(Report::Failed(problem)) => {
                    assert_eq!(problem.code, Code::EngineStalled, "{problem}");
                    stalled = true;
                }
                Ok(Report::BestMove(..)) => panic!("the engine never moves"),
                Ok(_) => {}
                Err(e) => panic!("neither overdue nor stalled (overdue: {overdue}): {e}"),
            }
        }
        assert!(overdue, "stalled without being overdue first");
        engine.finish();
    }

    #[test]
    fn info_lines_give_score_depth_and_line() {
        let info = Info::parse(
            "info depth 5 seldepth 8 multipv 2 score cp -27 upperbound nodes 19497 nps 431788 hashfull 0 time 45 pv b7c7 f2f3",
        )
        .unwrap();
        assert_eq!(info.multipv, 2);
        assert_eq!(info.depth, 5);
        assert_eq!(info.cp, Some(-27));
        assert_eq!(info.bound.as_deref(), Some("upperbound"));
        assert_eq!(info.nps, Some(431_788));
        assert_eq!(info.pv, vec!["b7c7", "f2f3"]);
        assert_eq!(
            Info::parse("info depth 3 score mate -2 pv a1b1")
                .unwrap()
                .mate,
            Some(-2)
        );
        assert!(Info::parse("info string error: nothing").is_none());
        assert!(Info::parse("info depth 3 nodes 10").is_none());
    }

    #[test]
    fn option_lines_keep_names_with_spaces() {
        let lines = vec![
            "id name agon 0.1.0".to_string(),
            "option name Move Overhead type spin default 30 min 0 max 10000".to_string(),
            "option name Clear Hash type button".to_string(),
            "option name Style type combo default Solid var Solid var Wild Ride".to_string(),
        ];
        assert_eq!(declared_name(&lines).as_deref(), Some("agon 0.1.0"));
        let options = declared_options(&lines);
        assert_eq!(options.len(), 3);
        assert_eq!(options[0].name, "Move Overhead");
        assert_eq!(options[0].max, Some(10_000));
        assert_eq!(options[1].kind, "button");
        assert_eq!(options[2].vars, vec!["Solid", "Wild Ride"]);
    }
}
