//! The state behind the page: the game and its record, who plays it (a
//! person against an engine, two engines, or free analysis), the clocks, the
//! engines and their analysis. Every command from the page and every report
//! from an engine goes through here; the rules core decides every move.

use super::driver::{EngineHandle, Info, OptionDecl, Purpose, Report, Request, Search, Status};
use super::pgn::{ReadGame, WhiteScore, read_games};
use crate::rules::game::position_result;
use crate::rules::geometry::{Bitboard, OUTER_RING, cells_of};
use crate::rules::{
    Cell, Color, Game, GameResult, Kind, Position, Termination, legal_moves, parse_fen, parse_move,
    to_fen,
};
use crate::tools::match_runner::record::{Ending, GameRecord, MoveRecord, ScoreRecord, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The engine a person plays against by default searches this long per move.
const FULL_STRENGTH_MOVETIME_MS: u64 = 1000;
/// Node limits of the strength levels below full strength.
const LEVEL_NODES: [u64; 4] = [300, 3_000, 30_000, 300_000];
/// Analysis updates sent to the page at most this often.
pub const ANALYSIS_INTERVAL: Duration = Duration::from_millis(100);

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

const ROLES: [Role; 4] = [Role::Opponent, Role::Analyst, Role::White, Role::Black];

impl Role {
    fn index(self) -> usize {
        self as usize
    }
}

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

/// One seat's engine.
struct Seat {
    choice: usize,
    /// Counts the processes started in this seat, so that a replaced one's reports are ignored.
    generation: u64,
    handle: Option<EngineHandle>,
    status: Status,
    name: String,
    options: Vec<OptionDecl>,
    values: Vec<(String, String)>,
    error: Option<String>,
}

/// A played move with what is known about it.
#[derive(Clone, Debug)]
struct Ply {
    mv: String,
    score: Option<WhiteScore>,
    depth: Option<u32>,
    time_ms: Option<u64>,
    book: bool,
}

/// How the game ended, when not by the board alone.
#[derive(Clone, Debug)]
struct Finish {
    /// `None` for a draw.
    winner: Option<Color>,
    /// The `Termination` tag.
    termination: String,
    /// In words.
    reason: String,
}

/// Clocks of a timed game.
#[derive(Clone, Copy, Debug)]
struct Clocks {
    base_ms: u64,
    increment_ms: u64,
    left_ms: [i64; 2],
    /// When the side to move started thinking; `None` while stopped.
    since: Option<Instant>,
}

impl Clocks {
    fn new(base_ms: u64, increment_ms: u64) -> Clocks {
        let base = i64::try_from(base_ms).unwrap_or(i64::MAX);
        Clocks {
            base_ms,
            increment_ms,
            left_ms: [base, base],
            since: None,
        }
    }

    fn left_now(&self, side: Color) -> i64 {
        let running = self.since.map_or(0, |s| {
            i64::try_from(s.elapsed().as_millis()).unwrap_or(i64::MAX)
        });
        self.left_ms[side.index()].saturating_sub(running)
    }

    /// Charges the mover's thinking and adds the increment.
    fn charge(&mut self, mover: Color) {
        let left = self.left_now(mover);
        let increment = i64::try_from(self.increment_ms).unwrap_or(0);
        self.left_ms[mover.index()] = left.saturating_add(increment);
        self.since = Some(Instant::now());
    }

    fn pause(&mut self, side: Color) {
        self.left_ms[side.index()] = self.left_now(side);
        self.since = None;
    }

    fn describe(&self) -> String {
        let base = self.base_ms as f64 / 1000.0;
        let increment = self.increment_ms as f64 / 1000.0;
        format!("{base}+{increment}")
    }
}

/// Reads a time control `minutes+seconds` (e.g. `5+3`, `0.5+0.1`); empty is none.
fn parse_time_control(text: &str) -> Result<Option<Clocks>, String> {
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
            .ok_or_else(|| format!("bad time control '{text}': expected minutes+seconds"))
    };
    let base_ms = number(base, 60_000.0)?;
    if base_ms == 0 {
        return Err(format!("bad time control '{text}': no time"));
    }
    Ok(Some(Clocks::new(base_ms, number(increment, 1000.0)?)))
}

/// The last analysis of the position shown.
#[derive(Default)]
struct Analysis {
    search: u64,
    fen: String,
    lines: Vec<Info>,
    dirty: bool,
}

/// A command from the page.
#[derive(Deserialize, Debug)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Play a move at the position shown.
    Move {
        /// `<from><to>`.
        mv: String,
    },
    /// Show the position after this many plies.
    View {
        /// 0 is the start.
        ply: usize,
    },
    /// A new game against the opponent engine.
    NewGame {
        /// Where it starts (default: the start position).
        fen: Option<String>,
        /// `white` or `black`.
        human: Option<String>,
        /// 0-3: node-limited levels, 4: full strength.
        level: Option<usize>,
        /// `minutes+seconds`, empty for no clock.
        tc: Option<String>,
        /// The engine (index into the choices).
        engine: Option<usize>,
    },
    /// Free analysis from a position.
    Analyse {
        /// Where it starts (default: keep the game).
        fen: Option<String>,
    },
    /// Two engines play.
    Watch {
        /// White's engine.
        white: usize,
        /// Black's engine.
        black: usize,
        /// `minutes+seconds`, empty for a fixed time per move.
        tc: Option<String>,
        /// Where it starts.
        fen: Option<String>,
    },
    /// Pause or resume an engine game.
    Pause {
        /// Paused or not.
        paused: bool,
    },
    /// Take back the person's last move.
    Takeback,
    /// Ask the opponent engine for a suggestion.
    Hint,
    /// The person resigns.
    Resign,
    /// Analysis on or off.
    Analysis {
        /// On or off.
        on: bool,
    },
    /// Number of analysis lines.
    Multipv {
        /// 1 to 5.
        lines: usize,
    },
    /// Change an engine option.
    SetOption {
        /// Whose.
        role: Role,
        /// Its name.
        name: String,
        /// Its value (none for a button).
        value: Option<String>,
    },
    /// Put another engine in a seat (restarts it).
    SetEngine {
        /// Which seat.
        role: Role,
        /// Which engine.
        engine: usize,
    },
    /// Load a game read from PGN.
    OpenGame {
        /// Index into the games read last.
        index: usize,
    },
}

/// Sends an event (`state` or `analysis`) with its JSON data to every open page.
type Publisher = dyn Fn(&str, String) + Send;

/// The whole state; shared behind a mutex.
pub struct Session {
    choices: Vec<EngineChoice>,
    seats: Vec<Seat>,
    mode: Mode,
    level: usize,
    start: Position,
    plies: Vec<Ply>,
    cursor: usize,
    finish: Option<Finish>,
    clocks: Option<Clocks>,
    names: [String; 2],
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
    library: Vec<ReadGame>,
    notice: Option<String>,
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
        let start = parse_fen(crate::rules::START_FEN).unwrap_or(Position::empty(Color::White, 1));
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
                })
                .collect(),
            choices,
            mode: Mode::Play {
                human: Color::White,
            },
            level: LEVEL_NODES.len(),
            start,
            plies: Vec::new(),
            cursor: 0,
            finish: None,
            clocks: None,
            names: ["you".into(), String::new()],
            next_search: 1,
            awaited: None,
            move_info: None,
            turn_started: Instant::now(),
            hint: None,
            analysing: false,
            multipv: 1,
            analysis: Analysis::default(),
            library: Vec::new(),
            notice: None,
            version: 0,
            publish: Box::new(publish),
            myself: Weak::new(),
        }));
        {
            let mut inner = lock(&session);
            inner.myself = Arc::downgrade(&session);
            inner.names[1] = inner.choices[default_engine].label.clone();
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

    fn game_at(&self, plies: usize) -> Game {
        let mut game = Game::new(self.start);
        for ply in self.plies.iter().take(plies) {
            if game.play_text(&ply.mv).is_err() {
                break;
            }
        }
        game
    }

    fn game(&self) -> Game {
        self.game_at(self.plies.len())
    }

    /// The verdict of the whole game: by the board, or how it was stopped.
    fn verdict(&self) -> Option<Finish> {
        if let Some(finish) = &self.finish {
            return Some(finish.clone());
        }
        match self.game().result() {
            GameResult::Ongoing => None,
            GameResult::Draw => Some(Finish {
                winner: None,
                termination: "repetition".into(),
                reason: "draw by repetition: the same position for the third time".into(),
            }),
            GameResult::Win { winner, reason } => Some(Finish {
                winner: Some(winner),
                termination: reason.name().into(),
                reason: match reason {
                    Termination::Formation => {
                        format!(
                            "{} wins: queen on the throne inside six guards",
                            winner.name()
                        )
                    }
                    Termination::Forfeit => format!(
                        "{} wins: {} surrounded the throne without its queen",
                        winner.name(),
                        (!winner).name()
                    ),
                    Termination::NoMoves => {
                        format!(
                            "{} wins: {} has no legal move",
                            winner.name(),
                            (!winner).name()
                        )
                    }
                },
            }),
        }
    }

    fn seat(&self, role: Role) -> &Seat {
        &self.seats[role.index()]
    }

    /// Starts the seat's engine if it is not running.
    fn ensure_engine(&mut self, role: Role) {
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
        for (name, value) in &values {
            handle.send(Request::SetOption(setoption(name, Some(value))));
        }
        if role == Role::Analyst && self.multipv > 1 {
            handle.send(Request::SetOption(setoption(
                "MultiPV",
                Some(&self.multipv.to_string()),
            )));
        }
        let seat = &mut self.seats[role.index()];
        seat.generation = generation;
        seat.handle = Some(handle);
        seat.status = Status::Starting;
        seat.error = None;
        seat.name = choice.label;
    }

    fn send(&mut self, role: Role, request: Request) {
        self.ensure_engine(role);
        if let Some(handle) = &self.seats[role.index()].handle {
            handle.send(request);
        }
    }

    fn stop(&mut self, role: Role) {
        if let Some(handle) = &self.seats[role.index()].handle {
            handle.send(Request::Stop);
        }
    }

    fn position_line(&self, plies: usize) -> String {
        let mut line = format!("position fen {}", to_fen(&self.start));
        if plies > 0 {
            line.push_str(" moves");
            for ply in self.plies.iter().take(plies) {
                line.push(' ');
                line.push_str(&ply.mv);
            }
        }
        line
    }

    fn new_search_id(&mut self) -> u64 {
        self.next_search += 1;
        self.next_search
    }

    /// Who is to move at the end of the game, if it is an engine's turn.
    fn engine_to_move(&self) -> Option<Role> {
        if self.verdict().is_some() {
            return None;
        }
        let side = self.game().position().side_to_move();
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
                position: self.position_line(self.plies.len()),
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
        let side = self.game().position().side_to_move();
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
        match nodes {
            Some(nodes) => (format!("go nodes {nodes}"), Some(Duration::from_secs(30))),
            None => (
                format!("go movetime {FULL_STRENGTH_MOVETIME_MS}"),
                Some(Duration::from_millis(FULL_STRENGTH_MOVETIME_MS)),
            ),
        }
    }

    fn refresh_analysis(&mut self) {
        let fen = to_fen(self.game_at(self.cursor).position());
        if !self.analysing {
            if self.analysis.search != 0 {
                self.stop(Role::Analyst);
                self.analysis.search = 0;
            }
            return;
        }
        if self.analysis.search != 0 && self.analysis.fen == fen {
            return;
        }
        let id = self.new_search_id();
        self.analysis = Analysis {
            search: id,
            fen,
            lines: Vec::new(),
            dirty: true,
        };
        if finished(self.game_at(self.cursor).position()) {
            self.stop(Role::Analyst);
            return;
        }
        let search = Search {
            id,
            purpose: Purpose::Analysis,
            position: self.position_line(self.cursor),
            go: "go infinite".into(),
            budget: None,
        };
        self.send(Role::Analyst, Request::Search(search));
    }

    /// Plays a move at the end of the game (checked by the rules core).
    fn play(&mut self, text: &str, info: Option<&Info>, time_ms: u64) -> Result<(), String> {
        let mut game = self.game();
        let mover = game.position().side_to_move();
        game.play_text(text)
            .map_err(|e| format!("illegal move {text}: {e}"))?;
        let follow = self.cursor == self.plies.len();
        self.plies.push(Ply {
            mv: text.to_string(),
            score: info.and_then(|i| WhiteScore::from_mover(mover, i.cp, i.mate)),
            depth: info.map(|i| i.depth),
            time_ms: Some(time_ms),
            book: false,
        });
        if follow || !matches!(self.mode, Mode::Analysis) {
            self.cursor = self.plies.len();
        }
        if let Some(clocks) = &mut self.clocks {
            clocks.charge(mover);
        }
        self.turn_started = Instant::now();
        self.hint = None;
        if self.verdict().is_some() {
            self.stop_clocks();
        }
        Ok(())
    }

    fn stop_clocks(&mut self) {
        let side = self.game().position().side_to_move();
        if let Some(clocks) = &mut self.clocks {
            clocks.pause(side);
        }
    }

    fn end(&mut self, winner: Option<Color>, termination: &str, reason: String) {
        if self.verdict().is_some() {
            return;
        }
        self.stop_clocks();
        self.finish = Some(Finish {
            winner,
            termination: termination.into(),
            reason,
        });
        if let Some((_, role)) = self.awaited.take() {
            self.stop(role);
        }
    }

    /// Handles one report of an engine thread.
    fn engine_report(&mut self, role: Role, report: Report) {
        match report {
            Report::Ready(lines) => {
                let seat = &mut self.seats[role.index()];
                if let Some(name) = super::driver::declared_name(&lines) {
                    seat.name = name;
                }
                seat.options = super::driver::declared_options(&lines);
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
                let mover = self.game().position().side_to_move();
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
                        format!("{} wins: {name} played an {error}", (!mover).name()),
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
            Report::Failed(reason) => {
                let seat = &mut self.seats[role.index()];
                seat.status = Status::Failed;
                let message = format!("engine {} ({:?}): {reason}", seat.name, role).to_lowercase();
                log::warn!("{message}");
                seat.error = Some(reason);
                self.notice = Some(message);
                if let Some((_, awaited)) = self.awaited
                    && awaited == role
                {
                    self.awaited = None;
                    let mover = self.game().position().side_to_move();
                    let name = self.seats[role.index()].name.clone();
                    self.end(
                        Some(!mover),
                        "crash",
                        format!("{} wins: engine {name} failed", (!mover).name()),
                    );
                }
                if role == Role::Analyst {
                    self.analysis.search = 0;
                }
            }
        }
        self.publish_state();
    }

    /// Carries out a command from the page.
    pub fn command(&mut self, command: Command) -> Result<(), String> {
        self.notice = None;
        let outcome = self.carry_out(command);
        self.kick();
        self.publish_state();
        outcome
    }

    fn carry_out(&mut self, command: Command) -> Result<(), String> {
        match command {
            Command::Move { mv } => self.person_moves(&mv),
            Command::View { ply } => {
                if ply > self.plies.len() {
                    return Err(format!("no ply {ply}: the game has {}", self.plies.len()));
                }
                self.cursor = ply;
                Ok(())
            }
            Command::NewGame {
                fen,
                human,
                level,
                tc,
                engine,
            } => {
                let start = read_start(fen.as_deref())?;
                let human = match human.as_deref() {
                    None | Some("white") => Color::White,
                    Some("black") => Color::Black,
                    Some(other) => return Err(format!("no colour '{other}'")),
                };
                let level = level.unwrap_or(self.level);
                if level > LEVEL_NODES.len() {
                    return Err(format!("no level {level}: 0 to {}", LEVEL_NODES.len()));
                }
                let clocks = parse_time_control(tc.as_deref().unwrap_or(""))?;
                if let Some(engine) = engine {
                    self.choose_engine(Role::Opponent, engine)?;
                }
                self.level = level;
                self.reset(start, Mode::Play { human }, clocks);
                let opponent = self.seat(Role::Opponent).name.clone();
                self.names = match human {
                    Color::White => ["you".into(), opponent],
                    Color::Black => [opponent, "you".into()],
                };
                Ok(())
            }
            Command::Analyse { fen } => {
                if let Some(fen) = fen {
                    let start = read_start(Some(&fen))?;
                    self.reset(start, Mode::Analysis, None);
                    self.names = ["?".into(), "?".into()];
                } else {
                    self.leave_game();
                    self.mode = Mode::Analysis;
                }
                Ok(())
            }
            Command::Watch {
                white,
                black,
                tc,
                fen,
            } => {
                let start = read_start(fen.as_deref())?;
                let clocks = parse_time_control(tc.as_deref().unwrap_or(""))?;
                self.choose_engine(Role::White, white)?;
                self.choose_engine(Role::Black, black)?;
                self.reset(start, Mode::Watch { paused: false }, clocks);
                self.names = [
                    self.choices[white].label.clone(),
                    self.choices[black].label.clone(),
                ];
                Ok(())
            }
            Command::Pause { paused } => {
                let Mode::Watch { .. } = self.mode else {
                    return Err("only an engine game can be paused".into());
                };
                self.mode = Mode::Watch { paused };
                if paused {
                    if let Some((_, role)) = self.awaited.take() {
                        self.stop(role);
                    }
                    self.stop_clocks();
                } else if self.verdict().is_none()
                    && let Some(clocks) = &mut self.clocks
                {
                    clocks.since = Some(Instant::now());
                }
                Ok(())
            }
            Command::Takeback => self.take_back(),
            Command::Hint => {
                // The opponent engine gives it, so only while it waits for the person.
                let Mode::Play { human } = self.mode else {
                    return Err("a hint is for a game against the engine".into());
                };
                if self.verdict().is_some() {
                    return Err("the game is over".into());
                }
                if self.game().position().side_to_move() != human {
                    return Err("it is the engine's turn".into());
                }
                let id = self.new_search_id();
                self.hint = Some((id, String::new()));
                let search = Search {
                    id,
                    purpose: Purpose::Hint,
                    position: self.position_line(self.plies.len()),
                    go: format!("go movetime {FULL_STRENGTH_MOVETIME_MS}"),
                    budget: Some(Duration::from_millis(FULL_STRENGTH_MOVETIME_MS)),
                };
                self.cursor = self.plies.len();
                self.send(Role::Opponent, Request::Search(search));
                Ok(())
            }
            Command::Resign => {
                let Mode::Play { human } = self.mode else {
                    return Err("nobody to resign to".into());
                };
                if self.verdict().is_some() {
                    return Err("the game is over".into());
                }
                self.end(
                    Some(!human),
                    "resignation",
                    format!("{} wins: {} resigned", (!human).name(), human.name()),
                );
                Ok(())
            }
            Command::Analysis { on } => {
                self.analysing = on;
                Ok(())
            }
            Command::Multipv { lines } => {
                if !(1..=5).contains(&lines) {
                    return Err(format!("MultiPV {lines}: 1 to 5 lines"));
                }
                self.multipv = lines;
                self.send(
                    Role::Analyst,
                    Request::SetOption(setoption("MultiPV", Some(&lines.to_string()))),
                );
                // The running analysis restarts with the new number of lines.
                self.analysis.search = 0;
                Ok(())
            }
            Command::SetOption { role, name, value } => {
                let seat = self.seat(role);
                let Some(declared) = seat.options.iter().find(|o| o.name == name) else {
                    return Err(format!("engine {} has no option '{name}'", seat.name));
                };
                if let (Some(value), Some(min), Some(max)) = (&value, declared.min, declared.max) {
                    let number: i64 = value
                        .trim()
                        .parse()
                        .map_err(|_| format!("option {name}: '{value}' is not a number"))?;
                    if !(min..=max).contains(&number) {
                        return Err(format!("option {name}: {number} is not in {min}..{max}"));
                    }
                }
                let line = setoption(&name, value.as_deref());
                let seat = &mut self.seats[role.index()];
                if let Some(value) = value {
                    seat.values.retain(|(n, _)| *n != name);
                    seat.values.push((name, value));
                }
                self.send(role, Request::SetOption(line));
                Ok(())
            }
            Command::SetEngine { role, engine } => self.choose_engine(role, engine),
            Command::OpenGame { index } => {
                let Some(read) = self.library.get(index).cloned() else {
                    return Err(format!("no game {index} in the file read"));
                };
                self.load(&read)
            }
        }
    }

    fn person_moves(&mut self, text: &str) -> Result<(), String> {
        match self.mode {
            Mode::Play { human } => {
                if self.verdict().is_some() {
                    return Err("the game is over".into());
                }
                if self.game().position().side_to_move() != human {
                    return Err("it is the engine's turn".into());
                }
                self.cursor = self.plies.len();
                let time_ms = u64::try_from(self.turn_started.elapsed().as_millis()).unwrap_or(0);
                // The person's clock is not running before their first move of a new game.
                if let Some(clocks) = &mut self.clocks
                    && clocks.since.is_none()
                {
                    clocks.since = Some(Instant::now());
                }
                self.play(text, None, time_ms)
            }
            Mode::Watch { .. } => Err("the engines are playing".into()),
            Mode::Analysis => {
                let position = *self.game_at(self.cursor).position();
                parse_move(&position, text).map_err(|e| format!("illegal move {text}: {e}"))?;
                if finished(&position) {
                    return Err("the game is over at this position".into());
                }
                // A move off the end of the record replaces what followed.
                if self.cursor < self.plies.len() {
                    self.plies.truncate(self.cursor);
                    self.finish = None;
                }
                self.play(text, None, 0)
            }
        }
    }

    fn take_back(&mut self) -> Result<(), String> {
        let Mode::Play { human } = self.mode else {
            return Err("takeback is for a game against the engine".into());
        };
        if let Some((_, role)) = self.awaited.take() {
            self.stop(role);
        }
        let start_side = self.start.side_to_move();
        let mut keep = self.plies.len();
        // Back to the person's previous turn, so that at least one of their moves goes.
        let side_at = |plies: usize| {
            if plies.is_multiple_of(2) {
                start_side
            } else {
                !start_side
            }
        };
        let mut removed_own = false;
        while keep > 0 && !(removed_own && side_at(keep) == human) {
            keep -= 1;
            if side_at(keep) == human {
                removed_own = true;
            }
        }
        if !removed_own {
            return Err("no move of yours to take back".into());
        }
        self.plies.truncate(keep);
        self.cursor = keep;
        self.finish = None;
        self.hint = None;
        if let Some(clocks) = &mut self.clocks {
            clocks.since = Some(Instant::now());
        }
        self.turn_started = Instant::now();
        Ok(())
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
        self.start = start;
        self.plies.clear();
        self.cursor = 0;
        self.finish = None;
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

    fn choose_engine(&mut self, role: Role, engine: usize) -> Result<(), String> {
        if engine >= self.choices.len() {
            return Err(format!("no engine {engine}"));
        }
        let seat = &mut self.seats[role.index()];
        if seat.choice != engine || seat.status == Status::Failed {
            if self.awaited.is_some_and(|(_, r)| r == role) {
                self.awaited = None;
            }
            seat.choice = engine;
            seat.handle = None;
            seat.options.clear();
            seat.values.clear();
            seat.status = Status::Idle;
            seat.error = None;
            if role == Role::Analyst {
                self.analysis.search = 0;
            }
            self.ensure_engine(role);
        }
        Ok(())
    }

    fn load(&mut self, read: &ReadGame) -> Result<(), String> {
        let start = read_start(Some(&read.fen))?;
        self.reset(start, Mode::Analysis, None);
        self.plies = read
            .moves
            .iter()
            .map(|m| Ply {
                mv: m.text.clone(),
                score: m.score,
                depth: m.depth,
                time_ms: m.time_ms,
                book: m.book,
            })
            .collect();
        self.names = [
            read.tag("White").unwrap_or("?").to_string(),
            read.tag("Black").unwrap_or("?").to_string(),
        ];
        if self.game().result() == GameResult::Ongoing && read.result != "*" {
            let winner = match read.result.as_str() {
                "1-0" => Some(Color::White),
                "0-1" => Some(Color::Black),
                _ => None,
            };
            self.finish = Some(Finish {
                winner,
                termination: read.tag("Termination").unwrap_or("?").to_string(),
                reason: read.reason.clone().unwrap_or_else(|| read.result.clone()),
            });
        }
        Ok(())
    }

    /// Reads a PGN text; one game is opened, several are listed.
    pub fn import(&mut self, text: &str) -> Result<usize, String> {
        let games = read_games(text)?;
        let count = games.len();
        self.library = games;
        if let Some(first) = self.library.first().cloned() {
            self.load(&first)?;
        }
        self.kick();
        self.publish_state();
        Ok(count)
    }

    /// The game as a PGN record in the `agon match -pgnout` format.
    pub fn export(&self) -> String {
        let game = self.game();
        let verdict = self.verdict();
        let mut position = self.start;
        let mut moves = Vec::new();
        for ply in &self.plies {
            let mover = position.side_to_move();
            if let Ok(mv) = parse_move(&position, &ply.mv) {
                position = position.make_move(mv);
            }
            if ply.book {
                continue;
            }
            let (cp, mate) = ply.score.map_or((None, None), |s| s.for_mover(mover));
            moves.push(MoveRecord {
                text: ply.mv.clone(),
                score: cp.map(ScoreRecord::Cp).or(mate.map(ScoreRecord::Mate)),
                depth: ply.depth,
                time_ms: ply.time_ms.unwrap_or(0),
            });
        }
        let result = match &verdict {
            Some(Finish {
                winner: Some(color),
                ..
            }) => Verdict::Win(*color),
            // An unfinished game is written as a draw, then marked `*` below.
            _ => Verdict::Draw,
        };
        let control = self
            .clocks
            .map_or_else(|| "-".to_string(), |c| c.describe());
        let record = GameRecord {
            game: 1,
            round: 1,
            white: self.names[0].clone(),
            black: self.names[1].clone(),
            result,
            // The tag is written from `verdict` below.
            termination: Ending::Adjudication,
            reason: verdict
                .as_ref()
                .map_or_else(|| "game in progress".to_string(), |f| f.reason.clone()),
            fen: to_fen(&self.start),
            book: self
                .plies
                .iter()
                .take_while(|p| p.book)
                .map(|p| p.mv.clone())
                .collect(),
            moves,
            white_time_control: control.clone(),
            black_time_control: control,
            final_fen: to_fen(game.position()),
            date: crate::tools::match_runner::record::today(),
        };
        let placeholder = format!("[Termination \"{}\"]\n", Ending::Adjudication.tag());
        let termination = verdict.as_ref().map_or(String::new(), |f| {
            format!("[Termination \"{}\"]\n", f.termination)
        });
        let text = record.pgn().replacen(&placeholder, &termination, 1);
        if verdict.is_some() {
            return text;
        }
        let draw = Verdict::Draw.code();
        let text = text.replacen(&format!("[Result \"{draw}\"]"), "[Result \"*\"]", 1);
        match text.strip_suffix(&format!("{draw}\n\n")) {
            Some(body) => format!("{body}*\n\n"),
            None => text,
        }
    }

    /// The board after `moves` from the position shown (a preview of a line),
    /// as the cells' contents; the moves stop at the first illegal one.
    pub fn preview(&self, moves: &[String]) -> Value {
        let mut position = *self.game_at(self.cursor).position();
        for text in moves {
            match parse_move(&position, text) {
                Ok(mv) => position = position.make_move(mv),
                Err(_) => break,
            }
        }
        json!({ "cells": cells_json(&position) })
    }

    /// Sends the analysis if it changed since the last time (called on a timer).
    pub fn flush_analysis(&mut self) {
        if !self.analysis.dirty {
            return;
        }
        self.analysis.dirty = false;
        let side = parse_fen(&self.analysis.fen).map_or(Color::White, |p| p.side_to_move());
        let lines: Vec<Value> = self
            .analysis
            .lines
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
        let event = json!({
            "fen": self.analysis.fen,
            "pov": "white",
            "running": self.analysis.search != 0,
            "lines": lines,
        });
        (self.publish)("analysis", event.to_string());
    }

    /// Ends a timed game whose side to move has run out of time (called on a timer).
    pub fn check_clocks(&mut self) {
        let Some(clocks) = self.clocks else { return };
        if clocks.since.is_none() || self.verdict().is_some() {
            return;
        }
        let side = self.game().position().side_to_move();
        if clocks.left_now(side) < 0 {
            self.end(
                Some(!side),
                "time forfeit",
                format!("{} wins on time", (!side).name()),
            );
            self.publish_state();
        }
    }

    /// The state the page draws, as JSON.
    pub fn state(&self) -> Value {
        let game = self.game_at(self.cursor);
        let position = *game.position();
        let at_end = self.cursor == self.plies.len();
        let verdict = self.verdict();
        let may_move = match self.mode {
            Mode::Play { human } => at_end && verdict.is_none() && position.side_to_move() == human,
            Mode::Watch { .. } => false,
            Mode::Analysis => !finished(&position),
        };
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
        let mut fens = Vec::with_capacity(self.plies.len());
        let mut replay = Game::new(self.start);
        for ply in &self.plies {
            let _ = replay.play_text(&ply.mv);
            fens.push(to_fen(replay.position()));
        }
        let moves: Vec<Value> = self
            .plies
            .iter()
            .zip(&fens)
            .map(|(ply, fen)| {
                json!({
                    "mv": ply.mv, "score": ply.score, "depth": ply.depth,
                    "time_ms": ply.time_ms, "book": ply.book, "fen": fen,
                })
            })
            .collect();
        let last = self
            .cursor
            .checked_sub(1)
            .and_then(|i| self.plies.get(i))
            .map(|p| p.mv.clone());
        let clocks = self.clocks.map(|c| {
            let running = c
                .since
                .map(|_| self.game().position().side_to_move().name());
            json!({
                "white": c.left_now(Color::White),
                "black": c.left_now(Color::Black),
                "running": running,
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
                    "status": seat.status, "error": seat.error,
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
        json!({
            "version": self.version,
            "mode": mode,
            "human": human,
            "paused": paused,
            "level": self.level,
            "levels": LEVEL_NODES.len() + 1,
            "names": self.names,
            "start_fen": to_fen(&self.start),
            "fen": to_fen(&position),
            "side": position.side_to_move().name(),
            "cells": cells_json(&position),
            "legal": legal,
            "relocating": relocating,
            "moves": moves,
            "cursor": self.cursor,
            "last": last,
            "result": verdict.map(|f| json!({
                "winner": f.winner.map(Color::name),
                "termination": f.termination,
                "reason": f.reason,
            })),
            "clocks": clocks,
            "thinking": self.awaited.map(|(_, role)| role),
            "hint": self.hint.as_ref().map(|(_, mv)| mv.clone()).filter(|m| !m.is_empty()),
            "analysing": self.analysing,
            "multipv": self.multipv,
            "engines": engines,
            "choices": self.choices,
            "library": library,
            "notice": self.notice,
        })
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

/// The captured pieces that may be relocated now (the queen first).
fn movers(position: &Position) -> Bitboard {
    let captured = position.captured(position.side_to_move());
    let queen = captured & position.queens();
    if queen != 0 { queen } else { captured }
}

fn read_start(fen: Option<&str>) -> Result<Position, String> {
    match fen.map(str::trim).filter(|f| !f.is_empty()) {
        None => parse_fen(crate::rules::START_FEN).map_err(|e| e.to_string()),
        Some(fen) => parse_fen(fen).map_err(|e| format!("bad FEN: {e}")),
    }
}

fn setoption(name: &str, value: Option<&str>) -> String {
    match value {
        Some(value) => format!("setoption name {name} value {value}"),
        None => format!("setoption name {name}"),
    }
}

/// Every cell with its FEN letter (`*` when captured), empty when empty.
pub(super) fn cells_json(position: &Position) -> Value {
    let mut cells = serde_json::Map::new();
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
    fn time_controls_are_minutes_plus_seconds() {
        let clocks = parse_time_control("5+3").unwrap().unwrap();
        assert_eq!((clocks.base_ms, clocks.increment_ms), (300_000, 3_000));
        assert!(parse_time_control("").unwrap().is_none());
        assert!(parse_time_control("x+1").is_err());
        assert!(parse_time_control("0+1").is_err());
        assert!(parse_time_control("1e9+0").is_err());
    }

    #[test]
    fn geometry_has_the_91_cells() {
        let geometry = geometry();
        assert_eq!(geometry["cells"].as_array().unwrap().len(), 91);
        assert_eq!(geometry["throne"], "f6");
    }
}
