//! The state behind the page: the game and its record, who plays it (a
//! person against an engine, two engines, or free analysis), the clocks, the
//! engines and their analysis. Every command from the page and every report
//! from an engine goes through here; the rules core decides every move.

mod analysis;
mod clocks;
mod commands;
pub mod record;
mod review;
mod seats;
pub mod view;

use super::driver::{EngineHandle, Info, Purpose, Request, Search, Status};
use super::pgn::{ReadGame, WhiteScore};
use super::problem::{Code, Problem};
use crate::rules::game::position_result;
use crate::rules::{Color, GameResult, Position, parse_fen, start_position};
use analysis::Analysis;
pub use analysis::analysis_event;
use clocks::Clocks;
pub use commands::Command;
use record::{Finish, Ply, Record};
pub use review::{REVIEW_NODES, Review};
pub(crate) use seats::ROLES;
use seats::Seat;
pub use seats::{EngineChoice, Role};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
pub use view::geometry;

/// The engine a person plays against by default searches this long per move.
const FULL_STRENGTH_MOVETIME_MS: u64 = 1000;
/// Node limits of the strength levels below full strength.
pub(crate) const LEVEL_NODES: [u64; 4] = [300, 3_000, 30_000, 300_000];
/// The `go` line of a strength level without a clock and how long it may
/// take: a node limit, or a fixed time per move at full strength.
pub(crate) fn level_search(level: usize) -> (String, Duration) {
    match LEVEL_NODES.get(level) {
        Some(nodes) => (format!("go nodes {nodes}"), Duration::from_secs(30)),
        None => (
            format!("go movetime {FULL_STRENGTH_MOVETIME_MS}"),
            Duration::from_millis(FULL_STRENGTH_MOVETIME_MS),
        ),
    }
}

/// Analysis updates sent to the page at most this often.
pub const ANALYSIS_INTERVAL: Duration = Duration::from_millis(100);

/// Who plays the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A person plays `human` against the opponent engine.
    Play { human: Color },
    /// Two engines play; paused or not.
    Watch { paused: bool },
    /// Moves are entered freely (also for games read from PGN).
    Analysis,
}

/// Sends an event (`state` or `analysis`) with its JSON data to every open page.
type Publisher = dyn Fn(&str, String) + Send;

/// The whole state; shared behind a mutex.
pub struct Session {
    choices: Vec<EngineChoice>,
    seats: Vec<Seat>,
    mode: Mode,
    level: usize,
    record: Record,
    clocks: Option<Clocks>,
    next_search: u64,
    /// The search whose `bestmove` is the next game move, and who makes it.
    awaited: Option<(u64, Role)>,
    /// Last scored main line of each search for a move.
    move_info: Option<(u64, Info)>,
    turn_started: Instant,
    hint: Option<(u64, String)>,
    analysing: bool,
    multipv: usize,
    analysis: Analysis,
    review: Option<Review>,
    library: Vec<ReadGame>,
    notice: Option<Problem>,
    version: u64,
    /// Broadcasts `(event, json)` to every open page.
    publish: Box<Publisher>,
    myself: Weak<Mutex<Session>>,
}

/// Locks the session, whatever a panicking thread left behind.
pub fn lock(session: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    session
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    /// A session with `choices` (the first is the default opponent), a
    /// person playing White.
    pub fn new(
        choices: Vec<EngineChoice>,
        default_engine: usize,
        publish: impl Fn(&str, String) + Send + 'static,
    ) -> Arc<Mutex<Session>> {
        let session = Arc::new(Mutex::new(Session {
            // The opponent is the chosen default; analysis and engine games start with agon.
            seats: ROLES
                .iter()
                .map(|role| Seat {
                    choice: if *role == Role::Opponent {
                        default_engine
                    } else {
                        0
                    },
                    generation: 0,
                    handle: None,
                    status: Status::Idle,
                    name: String::new(),
                    options: Vec::new(),
                    values: Vec::new(),
                    error: None,
                    unsettled: Vec::new(),
                })
                .collect(),
            choices,
            mode: Mode::Play {
                human: Color::White,
            },
            level: LEVEL_NODES.len(),
            record: Record::new(start_position(), ["you".into(), String::new()]),
            clocks: None,
            next_search: 1,
            awaited: None,
            move_info: None,
            turn_started: Instant::now(),
            hint: None,
            analysing: false,
            multipv: 1,
            analysis: Analysis::default(),
            review: None,
            library: Vec::new(),
            notice: None,
            version: 0,
            publish: Box::new(publish),
            myself: Weak::new(),
        }));
        {
            let mut inner = lock(&session);
            inner.myself = Arc::downgrade(&session);
            inner.record.names[1] = inner.choices[default_engine].label.clone();
            inner.ensure_engine(Role::Opponent);
        }
        session
    }

    /// Takes every engine out of its seat, to be finished once the session
    /// is unlocked (their threads may be waiting for it).
    pub fn take_engines(&mut self) -> Vec<EngineHandle> {
        self.seats
            .iter_mut()
            .filter_map(|s| s.handle.take())
            .collect()
    }

    fn new_search_id(&mut self) -> u64 {
        self.next_search += 1;
        self.next_search
    }

    /// Who is to move at the end of the game, if it is an engine's turn.
    fn engine_to_move(&self) -> Option<Role> {
        if self.record.verdict().is_some() {
            return None;
        }
        let side = self.record.game().position().side_to_move();
        match self.mode {
            Mode::Play { human } if human != side => Some(Role::Opponent),
            Mode::Watch { paused: false } => Some(if side == Color::White {
                Role::White
            } else {
                Role::Black
            }),
            _ => None,
        }
    }

    /// Starts whatever search the state calls for: the engine's move, and
    /// analysis of the position shown.
    fn kick(&mut self) {
        if self.awaited.is_none()
            && let Some(role) = self.engine_to_move()
        {
            let id = self.new_search_id();
            let (go, budget) = self.go_for_move(role);
            let search = Search {
                id,
                purpose: Purpose::Move,
                position: self.record.position_line(self.record.line_len()),
                go,
                budget,
            };
            self.awaited = Some((id, role));
            self.move_info = None;
            self.turn_started = Instant::now();
            self.send(role, Request::Search(search));
        }
        self.refresh_analysis();
    }

    fn go_for_move(&self, role: Role) -> (String, Option<Duration>) {
        let side = self.record.game().position().side_to_move();
        let nodes = (role == Role::Opponent)
            .then(|| LEVEL_NODES.get(self.level).copied())
            .flatten();
        if let Some(clocks) = &self.clocks {
            let mut go = format!(
                "go wtime {} btime {} winc {} binc {}",
                clocks.left_now(Color::White).max(1),
                clocks.left_now(Color::Black).max(1),
                clocks.increment_ms,
                clocks.increment_ms
            );
            if let Some(nodes) = nodes {
                go.push_str(&format!(" nodes {nodes}"));
            }
            let own = u64::try_from(clocks.left_now(side).max(0)).unwrap_or(0);
            return (go, Some(Duration::from_millis(own)));
        }
        let level = if nodes.is_some() {
            self.level
        } else {
            LEVEL_NODES.len()
        };
        let (go, budget) = level_search(level);
        (go, Some(budget))
    }

    /// Plays a move (checked by the rules core): at the end of the game,
    /// or in free analysis at the position shown, where a move other than
    /// the one recorded next starts a sideline.
    fn play(&mut self, text: &str, info: Option<&Info>, time_ms: u64) -> Result<(), Problem> {
        let at = match self.mode {
            Mode::Analysis => self.record.cursor,
            Mode::Play { .. } | Mode::Watch { .. } => self.record.line_len(),
        };
        let mut game = self.record.game_at(at);
        let mover = game.position().side_to_move();
        game.play_text(text)
            .map_err(|e| Problem::bad_move(text, &e))?;
        self.record.play_at(
            at,
            Ply {
                mv: text.to_string(),
                score: info.and_then(|i| WhiteScore::from_mover(mover, i.cp, i.mate)),
                depth: info.map(|i| i.depth),
                time_ms: Some(time_ms),
                book: false,
                comment: None,
            },
        );
        self.record.cursor = at + 1;
        if let Some(clocks) = &mut self.clocks {
            clocks.charge(mover);
        }
        self.turn_started = Instant::now();
        self.hint = None;
        if self.record.verdict().is_some() {
            self.stop_clocks();
        }
        Ok(())
    }

    fn stop_clocks(&mut self) {
        let side = self.record.game().position().side_to_move();
        if let Some(clocks) = &mut self.clocks {
            clocks.pause(side);
        }
    }

    fn end(&mut self, winner: Option<Color>, termination: &str, reason: String) {
        if self.record.verdict().is_some() {
            return;
        }
        self.stop_clocks();
        self.record.finish = Some(Finish {
            winner,
            termination: termination.into(),
            reason,
        });
        if let Some((_, role)) = self.awaited.take() {
            self.stop(role);
        }
    }

    /// Stops the current game's engine move and clocks, keeping the record.
    fn leave_game(&mut self) {
        if let Some((_, role)) = self.awaited.take() {
            self.stop(role);
        }
        self.stop_clocks();
        self.clocks = None;
    }

    fn reset(&mut self, start: Position, mode: Mode, clocks: Option<Clocks>) {
        self.leave_game();
        self.record.start = start;
        self.record.clear();
        self.review = None;
        self.record.finish = None;
        self.hint = None;
        self.mode = mode;
        self.clocks = clocks;
        if let Some(clocks) = &mut self.clocks
            && !matches!(mode, Mode::Play { human } if human == start.side_to_move())
        {
            clocks.since = Some(Instant::now());
        }
        self.turn_started = Instant::now();
        let seats: &[Role] = match mode {
            Mode::Play { .. } => &[Role::Opponent],
            Mode::Watch { .. } => &[Role::White, Role::Black],
            Mode::Analysis => &[],
        };
        for role in seats {
            self.send(*role, Request::NewGame);
        }
    }

    fn publish_state(&mut self) {
        self.version += 1;
        let state = self.state().to_string();
        (self.publish)("state", state);
    }
}

/// Whether the position alone ends the game (formation or no legal move).
fn finished(position: &Position) -> bool {
    position_result(position) != GameResult::Ongoing
}

/// The colour a person asks to play (White unless `black`).
pub(crate) fn read_colour(colour: Option<&str>) -> Result<Color, Problem> {
    match colour {
        None | Some("white") => Ok(Color::White),
        Some("black") => Ok(Color::Black),
        Some(other) => {
            Err(Problem::new(Code::NoColour, format!("no colour '{other}'")).with("colour", other))
        }
    }
}

/// A strength level asked for: 0 to the number of node levels (full strength).
pub(crate) fn check_level(level: usize) -> Result<usize, Problem> {
    if level > LEVEL_NODES.len() {
        let levels = LEVEL_NODES.len() + 1;
        return Err(Problem::new(
            Code::NoLevel,
            format!("no level {level}: 0 to {}", levels - 1),
        )
        .with("level", level)
        .with("levels", levels));
    }
    Ok(level)
}

/// Where a new game starts: the FEN given, or the start position.
pub(crate) fn read_start(fen: Option<&str>) -> Result<Position, Problem> {
    match fen.map(str::trim).filter(|f| !f.is_empty()) {
        None => Ok(start_position()),
        Some(fen) => parse_fen(fen).map_err(|e| Problem::bad_fen(&e)),
    }
}
