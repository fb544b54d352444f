//! The visitors of `agon serve` and their games: what a visitor may do in
//! public mode, each change stored before it is acknowledged, the engine's
//! moves asked of the pool, and the state each visitor's page draws.

use super::metrics::{ErrorKind, Metrics};
use super::pool::{Job, Outcome, Pool};
use super::store::{Ending, Store, StoredGame, now};
use super::view::Surroundings;
use crate::rules::{Color, Position, parse_fen, start_position, to_fen};
use crate::tools::gui::problem::{Code, Problem};
use crate::tools::gui::session::record::{Finish, Ply, Record};
use crate::tools::gui::session::{
    Command, LEVEL_NODES, check_level, level_search, read_colour, read_start,
};
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
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// 400: malformed or against the rules.
    Bad(Problem),
    /// 403: not allowed to visitors.
    Forbidden(Problem),
    /// 404: no such game of this visitor.
    NotFound,
    /// 409: the visitor's limit of games in progress.
    Conflict(Problem),
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
    id: String,
    visitor: String,
    level: usize,
    human: Color,
    /// The record as `agon gui` keeps it (the view is built from it).
    record: Record,
    /// Not yet in the database: a fresh game no move has been played in.
    stored: bool,
    /// An engine search for its next move is queued or running.
    waiting: bool,
    /// Searches ahead of it in the queue; `None` once an engine has it.
    queue_position: Option<usize>,
}

fn names(human: Color, level: usize) -> [String; 2] {
    let engine = format!("agon level {level}");
    match human {
        Color::White => ["you".into(), engine],
        Color::Black => [engine, "you".into()],
    }
}

fn ply(mv: &str) -> Ply {
    Ply {
        mv: mv.to_string(),
        score: None,
        depth: None,
        time_ms: None,
        book: false,
        comment: None,
    }
}

fn colour_name(colour: Color) -> String {
    colour.name().to_lowercase()
}

fn ending_of(finish: &Finish) -> Ending {
    Ending {
        winner: finish.winner.map(colour_name),
        termination: finish.termination.clone(),
        reason: finish.reason.clone(),
    }
}

fn finish_of(ending: &Ending) -> Finish {
    Finish {
        winner: match ending.winner.as_deref() {
            Some("white") => Some(Color::White),
            Some("black") => Some(Color::Black),
            _ => None,
        },
        termination: ending.termination.clone(),
        reason: ending.reason.clone(),
    }
}

fn win_for(winner: Color, termination: &str, reason: String) -> Finish {
    Finish {
        winner: Some(winner),
        termination: termination.into(),
        reason,
    }
}

impl LiveGame {
    fn new(visitor: &str, level: usize, human: Color, start: Position) -> LiveGame {
        LiveGame {
            id: new_id(),
            visitor: visitor.to_string(),
            level,
            human,
            record: Record::new(start, names(human, level)),
            stored: false,
            waiting: false,
            queue_position: None,
        }
    }

    fn loaded(stored: StoredGame) -> LiveGame {
        let human = if stored.human == "black" {
            Color::Black
        } else {
            Color::White
        };
        let start = parse_fen(&stored.start_fen).unwrap_or_else(|_| start_position());
        let mut record = Record::new(start, names(human, stored.level));
        for mv in &stored.moves {
            record.play_at(record.line_len(), ply(mv));
        }
        record.cursor = record.line_len();
        record.finish = stored.ending.as_ref().map(finish_of);
        LiveGame {
            id: stored.id,
            visitor: stored.visitor,
            level: stored.level,
            human,
            record,
            stored: true,
            waiting: false,
            queue_position: None,
        }
    }

    fn moves(&self) -> Vec<String> {
        self.record.plies().map(|p| p.mv.clone()).collect()
    }

    /// The game as the database keeps it.
    fn stored_form(&self) -> StoredGame {
        StoredGame {
            id: self.id.clone(),
            visitor: self.visitor.clone(),
            level: self.level,
            human: colour_name(self.human),
            start_fen: to_fen(&self.record.start),
            moves: self.moves(),
            ending: self.record.verdict().as_ref().map(ending_of),
            updated: now(),
        }
    }

    fn in_progress(&self) -> bool {
        self.record.verdict().is_none()
    }

    fn engine_to_move(&self) -> bool {
        self.in_progress() && self.record.game().position().side_to_move() != self.human
    }

    /// The search for the engine's move at the end of the game.
    fn job(&self) -> Job {
        let (go, budget) = level_search(self.level);
        let mut position = format!("position fen {}", to_fen(&self.record.start));
        if self.record.line_len() > 0 {
            position.push_str(" moves ");
            position.push_str(&self.moves().join(" "));
        }
        Job::new(
            &self.visitor,
            &self.id,
            self.record.line_len(),
            position,
            go,
            budget,
        )
    }

    /// The ending `mv` would bring, or why it is illegal.
    fn ending_after(&self, mv: &str) -> Result<Option<Ending>, Problem> {
        self.record
            .game()
            .play_text(mv)
            .map_err(|e| Problem::bad_move(mv, &e))?;
        let mut next = self.record.clone();
        next.play_at(next.line_len(), ply(mv));
        Ok(next.verdict().as_ref().map(ending_of))
    }

    /// Plays `mv` (already stored) at the end of the record.
    fn push(&mut self, mv: &str) {
        self.record.play_at(self.record.line_len(), ply(mv));
        self.record.cursor = self.record.line_len();
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
        self.games.iter().position(|g| g.id == game)
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
            self.games.push(LiveGame::new(
                &self.id,
                LEVEL_NODES.len(),
                Color::White,
                start_position(),
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
                let verdict = g.record.verdict();
                let result = match verdict.as_ref().map(|f| f.winner) {
                    None => "*",
                    Some(Some(Color::White)) => "1-0",
                    Some(Some(Color::Black)) => "0-1",
                    Some(None) => "1/2-1/2",
                };
                json!({
                    "white": g.record.names[0], "black": g.record.names[1],
                    "result": result, "round": Value::Null, "plies": g.record.line_len(),
                })
            })
            .collect();
        let game = &self.games[self.current];
        super::view::state(
            &game.record,
            Surroundings {
                version: self.version,
                game: game.id.clone(),
                human: game.human,
                level: game.level,
                thinking: game.waiting,
                queue_position: game.queue_position.filter(|_| game.waiting),
                library,
            },
        )
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
        for stored in unfinished {
            let visitor = self.visitor(&stored.visitor)?;
            let mut visitor = lock(&visitor);
            let index = match visitor.index_of(&stored.id) {
                Some(index) => index,
                None => {
                    visitor.games.push(LiveGame::loaded(stored));
                    visitor.games.len() - 1
                }
            };
            let game = &mut visitor.games[index];
            if game.engine_to_move() && !game.waiting {
                game.waiting = true;
                game.queue_position = Some(self.pool().resume(game.job()));
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
        visitor.ensure_current();
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
        self.with_visitor(visitor, false, |v| Ok(v.games[v.current].record.pgn("-")))
    }

    /// The board after `moves` from the position shown.
    pub fn preview(&self, visitor: &str, moves: &[String]) -> Refused<Value> {
        self.with_visitor(visitor, false, |v| {
            Ok(crate::tools::gui::session::view::preview(
                &v.games[v.current].record,
                moves,
            ))
        })
    }

    /// Carries out a page command on `game` (the current game when `None`);
    /// returns the id of the game current after it.
    pub fn command(&self, visitor: &str, game: Option<&str>, command: Command) -> Refused<String> {
        self.with_visitor(visitor, true, |v| {
            if let Some(game) = game {
                v.current = v.index_of(game).ok_or(Refusal::NotFound)?;
            }
            let outcome = self.carry_out(v, command);
            v.ensure_current();
            outcome.map(|()| v.games[v.current].id.clone())
        })
    }

    fn carry_out(&self, v: &mut Visitor, command: Command) -> Refused<()> {
        match command {
            Command::Move { mv } => self.person_moves(&mut v.games[v.current], &mv),
            Command::View { ply } => {
                let record = &mut v.games[v.current].record;
                if ply > record.line_len() {
                    let plies = record.line_len();
                    return Err(Refusal::Bad(
                        Problem::new(Code::NoPly, format!("no ply {ply}: the game has {plies}"))
                            .with("ply", ply)
                            .with("plies", plies),
                    ));
                }
                record.cursor = ply;
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
                    return Err(Refusal::Forbidden(Problem::new(
                        Code::NoClocksHere,
                        "no clocks on this server",
                    )));
                }
                if engine.is_some_and(|e| e != 0) {
                    return Err(Refusal::Forbidden(Problem::new(
                        Code::OnlyAgonHere,
                        "only agon plays on this server",
                    )));
                }
                let level =
                    check_level(level.unwrap_or(v.games[v.current].level)).map_err(Refusal::Bad)?;
                let start = read_start(fen.as_deref()).map_err(Refusal::Bad)?;
                let human = read_colour(human.as_deref()).map_err(Refusal::Bad)?;
                self.new_game(v, LiveGame::new(&v.id, level, human, start))
            }
            Command::Takeback => self.take_back(&mut v.games[v.current]),
            Command::Resign => {
                let game = &mut v.games[v.current];
                if !game.in_progress() || !game.stored {
                    return Err(Refusal::Bad(Problem::new(
                        Code::NothingToResign,
                        "no game in progress to resign",
                    )));
                }
                let human = game.human;
                let finish = win_for(
                    !human,
                    "resignation",
                    format!("{} wins: {} resigned", (!human).name(), human.name()),
                );
                self.end(game, finish)
            }
            Command::OpenGame { index } => {
                if index >= v.games.len() {
                    return Err(Refusal::Bad(
                        Problem::new(Code::NoGameListed, format!("no game {index} in your list"))
                            .with("index", index),
                    ));
                }
                v.current = index;
                Ok(())
            }
            other => {
                let name = command_name(&other);
                Err(Refusal::Forbidden(
                    Problem::new(Code::PrivateCommand, format!("not on this server: {name}"))
                        .with("command", name),
                ))
            }
        }
    }

    fn new_game(&self, v: &mut Visitor, mut game: LiveGame) -> Refused<()> {
        if v.in_progress() >= MAX_GAMES_IN_PROGRESS {
            return Err(Refusal::Conflict(
                Problem::new(
                    Code::TooManyGames,
                    format!(
                        "you have {MAX_GAMES_IN_PROGRESS} games in progress: finish or resign one first"
                    ),
                )
                .with("limit", MAX_GAMES_IN_PROGRESS),
            ));
        }
        if let Some(finish) = game.record.verdict() {
            return Err(Refusal::Bad(Problem::new(
                Code::GameOverHere,
                format!("the game is over there: {}", finish.reason),
            )));
        }
        if game.engine_to_move() {
            if self.pool().full() {
                self.metrics.error(ErrorKind::QueueFull);
                return Err(Refusal::Busy);
            }
            lock(&self.store)
                .create(&game.stored_form())
                .map_err(Refusal::Internal)?;
            game.stored = true;
            game.waiting = true;
            game.queue_position = Some(self.pool().resume(game.job()));
        }
        // A fresh game nobody has moved in is replaced rather than kept.
        v.games.retain(|g| g.stored);
        v.games.insert(0, game);
        v.games.truncate(LISTED);
        v.current = 0;
        Ok(())
    }

    fn person_moves(&self, game: &mut LiveGame, mv: &str) -> Refused<()> {
        if !game.in_progress() {
            return Err(Refusal::Bad(Problem::new(
                Code::GameOver,
                "the game is over",
            )));
        }
        if game.waiting || game.engine_to_move() {
            return Err(Refusal::Bad(Problem::new(
                Code::EngineToMove,
                "it is the engine's turn",
            )));
        }
        let ending = game.ending_after(mv).map_err(Refusal::Bad)?;
        if ending.is_none() && self.pool().full() {
            self.metrics.error(ErrorKind::QueueFull);
            return Err(Refusal::Busy);
        }
        let ply = game.record.line_len();
        {
            let mut store = lock(&self.store);
            if game.stored {
                store.append(&game.id, ply, mv, ending.as_ref())
            } else {
                let mut stored = game.stored_form();
                stored.moves.push(mv.to_string());
                stored.ending = ending;
                store.create(&stored)
            }
            .map_err(Refusal::Internal)?;
        }
        game.stored = true;
        game.push(mv);
        if game.engine_to_move() {
            game.waiting = true;
            // Refused only if the queue filled since the check: the move is stored, so queue anyway.
            let job = game.job();
            let position = match self.pool().submit(job.clone()) {
                Ok(position) => position,
                Err(super::pool::QueueFull) => self.pool().resume(job),
            };
            game.queue_position = Some(position);
        }
        Ok(())
    }

    fn take_back(&self, game: &mut LiveGame) -> Refused<()> {
        if !game.in_progress() {
            return Err(Refusal::Bad(Problem::new(
                Code::GameOver,
                "the game is over",
            )));
        }
        let human = game.human;
        let start_side = game.record.start.side_to_move();
        let side_at = |plies: usize| {
            if plies.is_multiple_of(2) {
                start_side
            } else {
                !start_side
            }
        };
        let mut keep = game.record.line_len();
        let mut removed_own = false;
        while keep > 0 && !(removed_own && side_at(keep) == human) {
            keep -= 1;
            if side_at(keep) == human {
                removed_own = true;
            }
        }
        if !removed_own {
            return Err(Refusal::Bad(Problem::new(
                Code::NothingToTakeBack,
                "no move of yours to take back",
            )));
        }
        lock(&self.store)
            .rewrite_end(&game.id, keep, None)
            .map_err(Refusal::Internal)?;
        game.record.truncate(keep);
        game.record.cursor = keep;
        // A search still queued or running for the removed position is dropped when it ends.
        game.waiting = false;
        game.queue_position = None;
        Ok(())
    }

    /// Ends the game for a reason other than the board, stored first.
    fn end(&self, game: &mut LiveGame, finish: Finish) -> Refused<()> {
        lock(&self.store)
            .rewrite_end(&game.id, game.record.line_len(), Some(&ending_of(&finish)))
            .map_err(Refusal::Internal)?;
        game.record.finish = Some(finish);
        game.waiting = false;
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
                let position = positions.get(&game.id).copied();
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

    /// Runs `act` on the game `job` searches for, if it still waits for it.
    fn with_waiting_game(&self, job: &Job, act: impl FnOnce(&Registry, &mut LiveGame)) -> bool {
        let Ok(visitor) = self.visitor(&job.visitor) else {
            return false;
        };
        let mut visitor = lock(&visitor);
        let Some(index) = visitor.index_of(&job.game) else {
            return false;
        };
        let game = &mut visitor.games[index];
        if !(game.waiting && game.record.line_len() == job.ply && game.in_progress()) {
            return false;
        }
        act(self, game);
        visitor.publish();
        true
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
        // Taken by an engine: the page stops showing a queue position.
        self.with_waiting_game(job, |_, game| game.queue_position = None)
    }

    fn played(&self, job: &Job, mv: &str) {
        self.with_waiting_game(job, |registry, game| {
            let ending = match game.ending_after(mv) {
                Ok(ending) => ending,
                Err(error) => {
                    log::error!("game {}: the engine played an {error}", job.game);
                    registry.metrics.error(ErrorKind::Engine);
                    let human = game.human;
                    let finish = win_for(
                        human,
                        "illegal move",
                        format!("{} wins: the engine played an {error}", human.name()),
                    );
                    if let Err(why) = registry.end(game, finish) {
                        log::error!("game {}: cannot store its end: {why:?}", job.game);
                    }
                    return;
                }
            };
            let stored = lock(&registry.store).append(&game.id, job.ply, mv, ending.as_ref());
            if let Err(error) = stored {
                // The search is run again at the next start, which finds the game waiting.
                log::error!("game {}: cannot store the engine's move: {error}", job.game);
                registry.metrics.error(ErrorKind::Internal);
                return;
            }
            game.push(mv);
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
            let human = game.human;
            let finish = win_for(human, "crash", format!("{} wins: {why}", human.name()));
            if let Err(error) = registry.end(game, finish) {
                log::error!("game {}: cannot store its end: {error:?}", job.game);
            }
        });
    }
}
