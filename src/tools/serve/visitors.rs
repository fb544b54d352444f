//! The visitors of `agon serve` and their games: what a visitor may do in
//! public mode, each change stored before it is acknowledged, the engine's
//! moves asked of the pool, and the state each visitor's page draws.

use super::metrics::{ErrorKind, Metrics};
use super::pool::{Job, Outcome, Pool};
use super::store::{Ending, Store, StoredGame, now};
use super::view::level_search;
use crate::rules::{Color, Game, GameResult, Position, Termination, parse_fen, to_fen};
use crate::tools::gui::session::{Command, LEVEL_NODES};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Games in progress a visitor may have at once.
pub const MAX_GAMES_IN_PROGRESS: usize = 3;
/// Games of a visitor listed on the page (the most recently changed).
const LISTED: usize = 10;
/// A visitor with no page open and nothing searched is dropped from memory
/// (not from the database) after this long.
const IDLE: Duration = Duration::from_secs(600);

/// Why a request was refused, with the HTTP status it earns.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: malformed or against the rules.
    Bad(String),
    /// 403: not allowed to visitors.
    Forbidden(String),
    /// 404: no such game of this visitor.
    NotFound,
    /// 409: the visitor's limit of games in progress.
    Conflict(String),
    /// 503: the engine queue is full.
    Busy,
    /// 500: the database failed.
    Internal(String),
}

type Refused<T> = Result<T, Refusal>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A random 128-bit id in hex.
pub fn new_id() -> String {
    use rand::Rng;
    format!("{:032x}", rand::rng().random::<u128>())
}

/// Whether `text` is an id as [`new_id`] makes them.
pub fn is_id(text: &str) -> bool {
    text.len() == 32
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One game in memory.
struct LiveGame {
    record: StoredGame,
    /// Not yet in the database: a fresh game no move has been played in.
    stored: bool,
    cursor: usize,
    /// An engine search for its next move is queued or running.
    waiting: bool,
    /// Searches ahead of it in the queue; `None` once an engine has it.
    queue_position: Option<usize>,
}

impl LiveGame {
    fn new(visitor: &str, level: usize, human: Color, start: &Position) -> LiveGame {
        LiveGame {
            record: StoredGame {
                id: new_id(),
                visitor: visitor.to_string(),
                level,
                human: human.name().to_lowercase(),
                start_fen: to_fen(start),
                moves: Vec::new(),
                ending: None,
                updated: now(),
            },
            stored: false,
            cursor: 0,
            waiting: false,
            queue_position: None,
        }
    }

    fn loaded(record: StoredGame) -> LiveGame {
        LiveGame {
            cursor: record.moves.len(),
            record,
            stored: true,
            waiting: false,
            queue_position: None,
        }
    }

    fn human(&self) -> Color {
        if self.record.human == "black" {
            Color::Black
        } else {
            Color::White
        }
    }

    fn start(&self) -> Position {
        parse_fen(&self.record.start_fen).unwrap_or_else(|_| crate::rules::start_position())
    }

    fn game_at(&self, plies: usize) -> Game {
        let mut game = Game::new(self.start());
        for mv in self.record.moves.iter().take(plies) {
            if game.play_text(mv).is_err() {
                break;
            }
        }
        game
    }

    fn game(&self) -> Game {
        self.game_at(self.record.moves.len())
    }

    fn in_progress(&self) -> bool {
        self.record.ending.is_none()
    }

    fn engine_to_move(&self) -> bool {
        self.in_progress() && self.game().position().side_to_move() != self.human()
    }

    /// The search for the engine's move at the end of the game.
    fn job(&self) -> Job {
        let (go, budget) = level_search(self.record.level);
        let mut position = format!("position fen {}", self.record.start_fen);
        if !self.record.moves.is_empty() {
            position.push_str(" moves ");
            position.push_str(&self.record.moves.join(" "));
        }
        Job::new(
            &self.record.visitor,
            &self.record.id,
            self.record.moves.len(),
            position,
            go,
            budget,
        )
    }
}

/// The ending the board gives, if any.
fn board_ending(game: &Game) -> Option<Ending> {
    match game.result() {
        GameResult::Ongoing => None,
        GameResult::Draw => Some(Ending {
            winner: None,
            termination: "repetition".into(),
            reason: "draw by repetition: the same position for the third time".into(),
        }),
        GameResult::Win { winner, reason } => Some(Ending {
            winner: Some(winner.name().to_lowercase()),
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
                Termination::NoMoves => format!(
                    "{} wins: {} has no legal move",
                    winner.name(),
                    (!winner).name()
                ),
            },
        }),
    }
}

fn win_for(winner: Color, termination: &str, reason: String) -> Ending {
    Ending {
        winner: Some(winner.name().to_lowercase()),
        termination: termination.into(),
        reason,
    }
}

/// One visitor: their games, newest first, and their pages' state channel.
struct Visitor {
    id: String,
    games: Vec<LiveGame>,
    current: usize,
    version: u64,
    state: watch::Sender<String>,
    touched: Instant,
}

impl Visitor {
    fn index_of(&self, game: &str) -> Option<usize> {
        self.games.iter().position(|g| g.record.id == game)
    }

    fn in_progress(&self) -> usize {
        self.games
            .iter()
            .filter(|g| g.stored && g.in_progress())
            .count()
    }

    /// Makes `game` the current one, a fresh unsaved game first if there is none.
    fn ensure_current(&mut self) {
        if self.games.is_empty() {
            let start = crate::rules::start_position();
            self.games.push(LiveGame::new(
                &self.id,
                LEVEL_NODES.len(),
                Color::White,
                &start,
            ));
            self.current = 0;
        }
        self.current = self.current.min(self.games.len() - 1);
    }

    fn publish(&mut self) {
        self.version += 1;
        let state = self.state_json().to_string();
        self.state.send_replace(state);
    }

    /// The state the page draws: the current game, in public mode.
    fn state_json(&mut self) -> Value {
        self.ensure_current();
        let library: Vec<Value> = self
            .games
            .iter()
            .map(|g| {
                let (white, black) = names(g.human(), g.record.level);
                json!({
                    "white": white, "black": black,
                    "result": result_code(g.record.ending.as_ref()),
                    "round": Value::Null, "plies": g.record.moves.len(),
                })
            })
            .collect();
        let game = &self.games[self.current];
        let mut state = super::view::state(game_view(game), self.version);
        state["game"] = json!(game.record.id);
        state["public"] = json!(true);
        state["library"] = json!(library);
        state["queue"] = match game.queue_position {
            Some(position) if game.waiting => json!({ "position": position }),
            _ => Value::Null,
        };
        state
    }
}

fn names(human: Color, level: usize) -> (String, String) {
    let engine = format!("agon level {level}");
    match human {
        Color::White => ("you".into(), engine),
        Color::Black => (engine, "you".into()),
    }
}

fn result_code(ending: Option<&Ending>) -> &'static str {
    match ending.map(|e| e.winner.as_deref()) {
        None => "*",
        Some(Some("white")) => "1-0",
        Some(Some("black")) => "0-1",
        Some(_) => "1/2-1/2",
    }
}

fn game_view(game: &LiveGame) -> super::view::GameView<'_> {
    let (white, black) = names(game.human(), game.record.level);
    super::view::GameView {
        start: game.start(),
        moves: &game.record.moves,
        cursor: game.cursor,
        human: game.human(),
        level: game.record.level,
        names: [white, black],
        ending: game.record.ending.as_ref(),
        thinking: game.waiting,
    }
}

/// Every visitor in memory, the database and the engine pool.
pub struct Registry {
    store: Mutex<Store>,
    visitors: Mutex<HashMap<String, Arc<Mutex<Visitor>>>>,
    pool: OnceLock<Pool>,
    metrics: Arc<Metrics>,
}

impl Registry {
    /// A registry on this database; [`Registry::attach`] gives it its engines.
    pub fn new(store: Store, metrics: Arc<Metrics>) -> Arc<Registry> {
        Arc::new(Registry {
            store: Mutex::new(store),
            visitors: Mutex::new(HashMap::new()),
            pool: OnceLock::new(),
            metrics,
        })
    }

    /// Gives the registry its engine pool, then queues again every engine
    /// move that was not played when the server last stopped.
    pub fn attach(&self, pool: Pool) -> Result<usize, String> {
        if self.pool.set(pool).is_err() {
            return Err("the engine pool is already attached".into());
        }
        let unfinished = lock(&self.store).unfinished()?;
        let mut resumed = 0;
        for record in unfinished {
            let visitor = self.visitor(&record.visitor)?;
            let mut visitor = lock(&visitor);
            let index = match visitor.index_of(&record.id) {
                Some(index) => index,
                None => {
                    visitor.games.push(LiveGame::loaded(record));
                    visitor.games.len() - 1
                }
            };
            let game = &mut visitor.games[index];
            if game.engine_to_move() && !game.waiting {
                game.waiting = true;
                self.pool().resume(game.job());
                resumed += 1;
            }
        }
        Ok(resumed)
    }

    fn pool(&self) -> &Pool {
        self.pool
            .get()
            .expect("the pool is attached before serving")
    }

    /// The engine pool, once attached.
    pub fn engines(&self) -> Option<&Pool> {
        self.pool.get()
    }

    /// Unfinished games in the database.
    pub fn games_in_progress(&self) -> Result<u64, String> {
        lock(&self.store).count_unfinished()
    }

    /// Deletes what the pruning rule says is old; returns how many games.
    pub fn prune(&self, finished_days: u64, abandoned_days: u64) -> Result<usize, String> {
        let day = 86_400_i64;
        let days = |d: u64| {
            i64::try_from(d)
                .unwrap_or(i64::MAX / day)
                .saturating_mul(day)
        };
        let now = now();
        lock(&self.store).prune(
            now.saturating_sub(days(finished_days)),
            now.saturating_sub(days(abandoned_days)),
        )
    }

    /// The visitor, read from the database if not in memory.
    fn visitor(&self, id: &str) -> Result<Arc<Mutex<Visitor>>, String> {
        if let Some(visitor) = lock(&self.visitors).get(id) {
            return Ok(Arc::clone(visitor));
        }
        let games = lock(&self.store).games_of(id, LISTED)?;
        let mut visitors = lock(&self.visitors);
        let visitor = visitors.entry(id.to_string()).or_insert_with(|| {
            let mut visitor = Visitor {
                id: id.to_string(),
                games: games.into_iter().map(LiveGame::loaded).collect(),
                current: 0,
                version: 0,
                state: watch::Sender::new(String::new()),
                touched: Instant::now(),
            };
            visitor.publish();
            Arc::new(Mutex::new(visitor))
        });
        Ok(Arc::clone(visitor))
    }

    /// Runs `act` on the visitor; `changes` says whether their pages are sent the new state.
    fn with_visitor<T>(
        &self,
        id: &str,
        changes: bool,
        act: impl FnOnce(&mut Visitor) -> Refused<T>,
    ) -> Refused<T> {
        let visitor = self.visitor(id).map_err(Refusal::Internal)?;
        let mut visitor = lock(&visitor);
        visitor.touched = Instant::now();
        let outcome = act(&mut visitor);
        if changes {
            visitor.publish();
        }
        outcome
    }

    /// The state of the visitor's game (`game`, or the current one).
    pub fn state(&self, visitor: &str, game: Option<&str>) -> Refused<Value> {
        self.with_visitor(visitor, false, |v| {
            let Some(game) = game else {
                return Ok(v.state_json());
            };
            let index = v.index_of(game).ok_or(Refusal::NotFound)?;
            let current = std::mem::replace(&mut v.current, index);
            let state = v.state_json();
            v.current = current;
            Ok(state)
        })
    }

    /// The visitor's state channel for `/api/events`.
    pub fn subscribe(&self, visitor: &str) -> Refused<watch::Receiver<String>> {
        self.with_visitor(visitor, false, |v| Ok(v.state.subscribe()))
    }

    /// The current game's record as PGN.
    pub fn pgn(&self, visitor: &str) -> Refused<String> {
        self.with_visitor(visitor, false, |v| {
            v.ensure_current();
            Ok(super::view::pgn(game_view(&v.games[v.current])))
        })
    }

    /// The board after `moves` from the position shown.
    pub fn preview(&self, visitor: &str, moves: &[String]) -> Refused<Value> {
        self.with_visitor(visitor, false, |v| {
            v.ensure_current();
            let game = &v.games[v.current];
            Ok(super::view::preview(
                game.game_at(game.cursor).position(),
                moves,
            ))
        })
    }

    /// Carries out a page command on `game` (the current game when `None`);
    /// returns the id of the game current after it.
    pub fn command(&self, visitor: &str, game: Option<&str>, command: Command) -> Refused<String> {
        self.with_visitor(visitor, true, |v| {
            v.ensure_current();
            if let Some(game) = game {
                v.current = v.index_of(game).ok_or(Refusal::NotFound)?;
            }
            self.carry_out(v, command)?;
            v.ensure_current();
            Ok(v.games[v.current].record.id.clone())
        })
    }

    fn carry_out(&self, v: &mut Visitor, command: Command) -> Refused<()> {
        match command {
            Command::Move { mv } => self.person_moves(v, &mv),
            Command::View { ply } => {
                let game = &mut v.games[v.current];
                if ply > game.record.moves.len() {
                    return Err(Refusal::Bad(format!("no ply {ply}")));
                }
                game.cursor = ply;
                Ok(())
            }
            Command::NewGame {
                fen,
                human,
                level,
                tc,
                engine,
            } => {
                if tc.as_deref().is_some_and(|t| !t.trim().is_empty()) {
                    return Err(Refusal::Forbidden("no clocks on this server".into()));
                }
                if engine.is_some_and(|e| e != 0) {
                    return Err(Refusal::Forbidden("only agon plays on this server".into()));
                }
                let level = level.unwrap_or(v.games[v.current].record.level);
                if level > LEVEL_NODES.len() {
                    return Err(Refusal::Bad(format!(
                        "no level {level}: 0 to {}",
                        LEVEL_NODES.len()
                    )));
                }
                let start = match fen.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
                    None => crate::rules::start_position(),
                    Some(fen) => {
                        parse_fen(fen).map_err(|e| Refusal::Bad(format!("bad FEN: {e}")))?
                    }
                };
                let human = match human.as_deref() {
                    None | Some("white") => Color::White,
                    Some("black") => Color::Black,
                    Some(other) => return Err(Refusal::Bad(format!("no colour '{other}'"))),
                };
                self.new_game(v, level, human, &start)
            }
            Command::Takeback => self.take_back(v),
            Command::Resign => {
                let game = &mut v.games[v.current];
                if !game.in_progress() || !game.stored {
                    return Err(Refusal::Bad("no game in progress to resign".into()));
                }
                let human = game.human();
                let ending = win_for(
                    !human,
                    "resignation",
                    format!("{} wins: {} resigned", (!human).name(), human.name()),
                );
                lock(&self.store)
                    .rewrite_end(&game.record.id, game.record.moves.len(), Some(&ending))
                    .map_err(Refusal::Internal)?;
                game.record.ending = Some(ending);
                game.waiting = false;
                Ok(())
            }
            Command::OpenGame { index } => {
                if index >= v.games.len() {
                    return Err(Refusal::Bad(format!("no game {index} in your list")));
                }
                v.current = index;
                Ok(())
            }
            other => Err(Refusal::Forbidden(format!(
                "not on this server: {}",
                command_name(&other)
            ))),
        }
    }

    fn new_game(
        &self,
        v: &mut Visitor,
        level: usize,
        human: Color,
        start: &Position,
    ) -> Refused<()> {
        // A fresh game nobody has moved in is replaced rather than kept.
        v.games.retain(|g| g.stored);
        if v.in_progress() >= MAX_GAMES_IN_PROGRESS {
            v.ensure_current();
            return Err(Refusal::Conflict(format!(
                "you have {MAX_GAMES_IN_PROGRESS} games in progress: finish or resign one first"
            )));
        }
        let mut game = LiveGame::new(&v.id, level, human, start);
        if let Some(ending) = board_ending(&game.game()) {
            return Err(Refusal::Bad(format!(
                "the game is over there: {}",
                ending.reason
            )));
        }
        if game.engine_to_move() {
            if self.pool().full() {
                v.ensure_current();
                self.metrics.error(ErrorKind::QueueFull);
                return Err(Refusal::Busy);
            }
            lock(&self.store)
                .create(&game.record)
                .map_err(Refusal::Internal)?;
            game.stored = true;
            game.waiting = true;
            self.pool().resume(game.job());
        }
        v.games.insert(0, game);
        v.games.truncate(LISTED);
        v.current = 0;
        Ok(())
    }

    fn person_moves(&self, v: &mut Visitor, text: &str) -> Refused<()> {
        let game = &mut v.games[v.current];
        if !game.in_progress() {
            return Err(Refusal::Bad("the game is over".into()));
        }
        if game.waiting || game.engine_to_move() {
            return Err(Refusal::Bad("it is the engine's turn".into()));
        }
        let mut board = game.game();
        board
            .play_text(text)
            .map_err(|e| Refusal::Bad(format!("illegal move {text}: {e}")))?;
        let ending = board_ending(&board);
        if ending.is_none() && self.pool().full() {
            self.metrics.error(ErrorKind::QueueFull);
            return Err(Refusal::Busy);
        }
        let ply = game.record.moves.len();
        {
            let mut store = lock(&self.store);
            if game.stored {
                store.append(&game.record.id, ply, text, ending.as_ref())
            } else {
                let mut record = game.record.clone();
                record.moves.push(text.to_string());
                record.ending = ending.clone();
                store.create(&record)
            }
            .map_err(Refusal::Internal)?;
        }
        game.stored = true;
        game.record.moves.push(text.to_string());
        game.record.ending = ending;
        game.record.updated = now();
        game.cursor = game.record.moves.len();
        if game.engine_to_move() {
            game.waiting = true;
            // Refused only if the queue filled since the check: the move is stored, so queue anyway.
            let job = game.job();
            if let Err(super::pool::QueueFull) = self.pool().submit(job.clone()) {
                self.pool().resume(job);
            }
        }
        Ok(())
    }

    fn take_back(&self, v: &mut Visitor) -> Refused<()> {
        let game = &mut v.games[v.current];
        if !game.in_progress() {
            return Err(Refusal::Bad("the game is over".into()));
        }
        let human = game.human();
        let start_side = game.start().side_to_move();
        let side_at = |plies: usize| {
            if plies.is_multiple_of(2) {
                start_side
            } else {
                !start_side
            }
        };
        let mut keep = game.record.moves.len();
        let mut removed_own = false;
        while keep > 0 && !(removed_own && side_at(keep) == human) {
            keep -= 1;
            if side_at(keep) == human {
                removed_own = true;
            }
        }
        if !removed_own {
            return Err(Refusal::Bad("no move of yours to take back".into()));
        }
        lock(&self.store)
            .rewrite_end(&game.record.id, keep, None)
            .map_err(Refusal::Internal)?;
        game.record.moves.truncate(keep);
        game.cursor = keep;
        // A search still queued or running for the removed position is dropped when it ends.
        game.waiting = false;
        game.queue_position = None;
        Ok(())
    }

    /// Pushes the queue positions to the pages of games that wait (called on a timer).
    pub fn refresh_queue_positions(&self) {
        let positions = self.pool().positions();
        let visitors: Vec<_> = lock(&self.visitors).values().cloned().collect();
        for visitor in visitors {
            let mut visitor = lock(&visitor);
            let mut changed = false;
            for game in visitor.games.iter_mut().filter(|g| g.waiting) {
                let position = positions.get(&game.record.id).copied();
                if position != game.queue_position {
                    game.queue_position = position;
                    changed = true;
                }
            }
            if changed {
                visitor.publish();
            }
        }
    }

    /// Drops from memory the visitors with no page open and nothing waiting.
    pub fn forget_idle(&self) {
        lock(&self.visitors).retain(|_, visitor| {
            let visitor = lock(visitor);
            visitor.state.receiver_count() > 0
                || visitor.touched.elapsed() < IDLE
                || visitor.games.iter().any(|g| g.waiting)
        });
    }

    /// Visitors in memory.
    pub fn visitors_in_memory(&self) -> usize {
        lock(&self.visitors).len()
    }

    fn with_waiting_game(&self, job: &Job, act: impl FnOnce(&Registry, &mut LiveGame)) {
        let Ok(visitor) = self.visitor(&job.visitor) else {
            return;
        };
        let mut visitor = lock(&visitor);
        let Some(index) = visitor.index_of(&job.game) else {
            return;
        };
        let game = &mut visitor.games[index];
        if game.waiting && game.record.moves.len() == job.ply && game.in_progress() {
            act(self, game);
            visitor.publish();
        }
    }
}

fn command_name(command: &Command) -> String {
    let debug = format!("{command:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

impl Outcome for Registry {
    fn wanted(&self, job: &Job) -> bool {
        let mut wanted = false;
        self.with_waiting_game(job, |_, game| {
            wanted = true;
            game.queue_position = None;
        });
        wanted
    }

    fn played(&self, job: &Job, mv: &str) {
        self.with_waiting_game(job, |registry, game| {
            let mut board = game.game();
            let mover = board.position().side_to_move();
            let ending = match board.play_text(mv) {
                Ok(_) => board_ending(&board),
                Err(error) => {
                    log::error!(
                        "game {}: the engine played an illegal move {mv}: {error}",
                        job.game
                    );
                    registry.metrics.error(ErrorKind::Engine);
                    return registry.end(
                        game,
                        win_for(
                            !mover,
                            "illegal move",
                            format!(
                                "{} wins: the engine played an illegal move",
                                (!mover).name()
                            ),
                        ),
                    );
                }
            };
            let stored =
                lock(&registry.store).append(&game.record.id, job.ply, mv, ending.as_ref());
            if let Err(error) = stored {
                // The search is run again at the next start, which finds the game waiting.
                log::error!("game {}: cannot store the engine's move: {error}", job.game);
                registry.metrics.error(ErrorKind::Internal);
                return;
            }
            game.record.moves.push(mv.to_string());
            game.record.ending = ending;
            game.record.updated = now();
            game.cursor = game.record.moves.len();
            game.waiting = false;
            registry
                .metrics
                .engine_moves
                .fetch_add(1, Ordering::Relaxed);
            registry.metrics.move_latency.observe(job.queued.elapsed());
        });
    }

    fn failed(&self, job: &Job, why: &str) {
        self.with_waiting_game(job, |registry, game| {
            let human = game.human();
            registry.end(
                game,
                win_for(human, "crash", format!("{} wins: {why}", human.name())),
            );
        });
    }
}

impl Registry {
    fn end(&self, game: &mut LiveGame, ending: Ending) {
        match lock(&self.store).rewrite_end(&game.record.id, game.record.moves.len(), Some(&ending))
        {
            Ok(()) => {
                game.record.ending = Some(ending);
                game.waiting = false;
            }
            Err(error) => log::error!("game {}: cannot store its end: {error}", game.record.id),
        }
    }
}
