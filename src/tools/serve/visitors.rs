//! The visitors of `agon serve`, their games and their analysis board:
//! what a visitor may do in public mode, each game change stored before it
//! is acknowledged, the engine's moves and analyses asked of the pool, the
//! state each visitor's page draws, and how many visitors memory holds.

use super::metrics::{ErrorKind, Metrics};
use super::pool::{Job, Outcome, Pool, Purpose};
use super::store::{Ending, Store, StoredGame, Unfinished, now};
use super::view::{Shown, Surroundings};
use crate::rules::game::position_result;
use crate::rules::{Color, GameResult, Position, parse_fen, start_position, to_fen};
use crate::tools::gui::driver::Info;
use crate::tools::gui::problem::{Code, Problem};
use crate::tools::gui::session::record::{Finish, Ply, Record};
use crate::tools::gui::session::{
    Command, LEVEL_NODES, REVIEW_NODES, Review, analysis_event, check_level, level_search,
    read_colour, read_start,
};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Games in progress a visitor may have at once.
pub const MAX_GAMES_IN_PROGRESS: usize = 3;
/// Moves an analysis board holds, sidelines included: each command replays
/// the line shown, so a board without a bound would let one visitor's
/// requests cost ever more.
pub const MAX_BOARD_MOVES: usize = 600;
/// Moves of an engine line played onto the board at once.
pub const MAX_LINE_MOVES: usize = 64;
/// Games of a visitor listed on the page (the most recently changed; those
/// in progress are listed too, whatever their age).
const LISTED: usize = 10;
/// A visitor with no page open and nothing searched is dropped from memory
/// (not from the database) after this long.
const IDLE: Duration = Duration::from_secs(600);
/// When memory is full, one visitor in this many of `--max-visitors` is
/// dropped at once: one look at them all makes room for that many newcomers.
const EVICTED_SHARE: usize = 64;
/// Nodes of one analysis search: the server's budget, whatever a request says.
pub const ANALYSIS_NODES: u64 = 200_000;
/// The most engine lines an analysis shows.
pub const MAX_ANALYSIS_LINES: usize = 3;
/// How long an analysis or review search may take before it is stopped.
const ANALYSIS_BUDGET: Duration = Duration::from_secs(10);
/// The wait before a search runs again after what the last one brought
/// could not be stored; it doubles with each failure in a row, up to
/// [`STORE_RETRY_LONGEST`], so that a database that keeps failing is not
/// hammered by searches and log lines.
const STORE_RETRY_FIRST: Duration = Duration::from_millis(500);
const STORE_RETRY_LONGEST: Duration = Duration::from_secs(30);
/// After a full memory found no visitor to drop, newcomers are refused
/// for this long without another look: a crowd at the door costs neither
/// a scan of every visitor nor a database query each.
const FULL_RECHECK: Duration = Duration::from_secs(1);

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
    /// 503: every visitor slot in memory is busy.
    Full,
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
    /// Storing what the engine's searches brought failed this many times
    /// in a row.
    store_failures: u32,
    /// When the search runs again after such a failure; the game waits
    /// for it meanwhile.
    search_again_at: Option<Instant>,
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

/// The colour a stored game names (`white` or `black`).
fn colour_named(name: &str) -> Color {
    if name == "black" {
        Color::Black
    } else {
        Color::White
    }
}

/// Where a stored game started.
fn start_of(fen: &str) -> Position {
    parse_fen(fen).unwrap_or_else(|_| start_position())
}

/// Whether the engine is to move in an unfinished game, told without
/// replaying it: turns alternate, none is ever passed.
fn engine_owes_a_move(game: &Unfinished) -> bool {
    let first = start_of(&game.start_fen).side_to_move();
    let to_move = if game.plies.is_multiple_of(2) {
        first
    } else {
        !first
    };
    to_move != colour_named(&game.human)
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
            store_failures: 0,
            search_again_at: None,
        }
    }

    fn loaded(stored: StoredGame) -> LiveGame {
        let human = colour_named(&stored.human);
        let start = start_of(&stored.start_fen);
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
            store_failures: 0,
            search_again_at: None,
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

    /// Whether `job` is the search this game waits for. A takeback and
    /// another move make a new search for the same ply: the old one's move,
    /// found for another position, must not land on this one.
    fn waits_for(&self, job: &Job) -> bool {
        self.waiting
            && self.in_progress()
            && self.record.line_len() == job.ply
            && self.record.position_line(job.ply) == job.position
    }

    fn job(&self) -> Job {
        let (go, budget) = level_search(self.level);
        Job::new(
            &self.visitor,
            &self.id,
            self.record.line_len(),
            self.record.position_line(self.record.line_len()),
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

/// A visitor's analysis board: free moves for both sides from any
/// position, the variation tree, engine lines and game review. It is kept
/// in memory only: a scratch board, judged move by move by the rules core
/// here, that a visitor can set up again; their games are what is stored.
struct Board {
    id: String,
    record: Record,
    analysing: bool,
    lines: usize,
    /// Searches asked for so far; numbers each one.
    searches: usize,
    /// The analysis search queued or running, 0 when none.
    search: usize,
    /// The position and number of lines of the last analysis asked for.
    searched: (String, usize),
    /// The lines it found, best first.
    found: Vec<Info>,
    queue_position: Option<usize>,
    review: Option<Review>,
}

impl Board {
    fn new(record: Record, lines: usize) -> Board {
        Board {
            id: new_id(),
            record,
            analysing: false,
            lines,
            searches: 0,
            search: 0,
            searched: (String::new(), 0),
            found: Vec::new(),
            queue_position: None,
            review: None,
        }
    }

    fn shown(&self) -> Position {
        *self.record.game_at(self.record.cursor).position()
    }

    fn reviewing(&self) -> bool {
        self.review.as_ref().is_some_and(|r| r.search != 0)
    }

    /// Plays `mv` at the position shown, for either side.
    fn play(&mut self, mv: &str) -> Refused<()> {
        if self.record.moves_entered() >= MAX_BOARD_MOVES {
            return Err(board_full());
        }
        let position = self.shown();
        if position_result(&position) != GameResult::Ongoing {
            return Err(Refusal::Bad(Problem::new(
                Code::GameOverHere,
                "the game is over at this position",
            )));
        }
        self.record
            .game_at(self.record.cursor)
            .play_text(mv)
            .map_err(|e| Refusal::Bad(Problem::bad_move(mv, &e)))?;
        // A move off the end of the main line leaves how it ended behind.
        if self.record.cursor < self.record.line_len() {
            self.record.finish = None;
        }
        self.record.play_at(self.record.cursor, ply(mv));
        self.record.cursor += 1;
        Ok(())
    }

    /// Plays an engine line from the position shown, which must be `fen`.
    fn play_line(&mut self, fen: &str, moves: &[String]) -> Refused<()> {
        if moves.len() > MAX_LINE_MOVES {
            return Err(Refusal::Bad(
                Problem::new(
                    Code::LineTooLong,
                    format!("an engine line has at most {MAX_LINE_MOVES} moves"),
                )
                .with("max", MAX_LINE_MOVES),
            ));
        }
        if self.record.moves_entered() + moves.len() > MAX_BOARD_MOVES {
            return Err(board_full());
        }
        if fen != to_fen(&self.shown()) {
            return Err(Refusal::Bad(Problem::new(
                Code::LineOfAnotherPosition,
                "that line is of another position",
            )));
        }
        let mut game = self.record.game_at(self.record.cursor);
        for mv in moves {
            game.play_text(mv)
                .map_err(|e| Refusal::Bad(Problem::bad_move(mv, &e)))?;
        }
        moves.iter().try_for_each(|mv| self.play(mv))
    }

    /// The page's `analysis` event, once something was asked for.
    fn analysis_json(&self) -> Option<String> {
        (!self.searched.0.is_empty())
            .then(|| analysis_event(&self.searched.0, self.search != 0, &self.found).to_string())
    }
}

/// What a visitor's pages are sent: the state, and the analysis board's lines.
#[derive(Clone, Default)]
pub struct Published {
    /// The `state` event.
    pub state: String,
    /// The `analysis` event, on the analysis board.
    pub analysis: Option<String>,
}

/// One visitor: their games, newest first, their analysis board when it is
/// shown, and their pages' channel.
struct Visitor {
    id: String,
    games: Vec<LiveGame>,
    current: usize,
    board: Option<Board>,
    /// The engine lines asked for last (the next board starts with them).
    lines: usize,
    version: u64,
    state: watch::Sender<Published>,
    touched: Instant,
}

impl Visitor {
    /// A visitor read into memory with their stored games, their state
    /// ready for their pages.
    fn new(id: &str, games: Vec<StoredGame>) -> Visitor {
        let mut visitor = Visitor {
            id: id.to_string(),
            games: games.into_iter().map(LiveGame::loaded).collect(),
            current: 0,
            board: None,
            lines: 1,
            version: 0,
            state: watch::Sender::new(Published::default()),
            touched: Instant::now(),
        };
        visitor.publish();
        visitor
    }

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
        let published = Published {
            state: self.state_json().to_string(),
            analysis: self.board.as_ref().and_then(Board::analysis_json),
        };
        self.state.send_replace(published);
    }

    /// Whether the visitor is in the middle of something: a page open, an
    /// engine move or an analysis queued or running.
    fn busy(&self) -> bool {
        self.state.receiver_count() > 0
            || self.games.iter().any(|g| g.waiting)
            || self
                .board
                .as_ref()
                .is_some_and(|b| b.search != 0 || b.reviewing())
    }

    fn record_shown(&self) -> &Record {
        match &self.board {
            Some(board) => &board.record,
            None => &self.games[self.current].record,
        }
    }

    /// The id of the game or board shown.
    fn shown_id(&self) -> String {
        match &self.board {
            Some(board) => board.id.clone(),
            None => self.games[self.current].id.clone(),
        }
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
        let (record, around) = match &self.board {
            Some(board) => {
                let searching = board.search != 0 || board.reviewing();
                (
                    &board.record,
                    Surroundings {
                        version: self.version,
                        game: board.id.clone(),
                        level: game.level,
                        queue_position: board.queue_position.filter(|_| searching),
                        library,
                        shown: Shown::Board {
                            analysing: board.analysing,
                            lines: board.lines,
                            searching,
                            review: board.review.as_ref().map_or(Value::Null, Review::view),
                        },
                    },
                )
            }
            None => (
                &game.record,
                Surroundings {
                    version: self.version,
                    game: game.id.clone(),
                    level: game.level,
                    queue_position: game.queue_position.filter(|_| game.waiting),
                    library,
                    shown: Shown::Game {
                        human: game.human,
                        thinking: game.waiting,
                    },
                },
            ),
        };
        super::view::state(record, around)
    }
}

/// Every visitor in memory, the database and the engine pool.
pub struct Registry {
    store: Mutex<Store>,
    visitors: Mutex<HashMap<String, Arc<Mutex<Visitor>>>>,
    /// The most visitors held in memory.
    max_visitors: usize,
    /// Until when newcomers are refused at once: the last look found the
    /// memory full of visitors none of whom could be dropped.
    full_until: Mutex<Option<Instant>>,
    pool: OnceLock<Pool>,
    metrics: Arc<Metrics>,
}

/// When a visitor in memory was last active, if it may be dropped now:
/// nothing holds it but the registry (no request under way) and it is not busy.
fn idle_since(visitor: &Arc<Mutex<Visitor>>) -> Option<Instant> {
    if Arc::strong_count(visitor) > 1 {
        return None;
    }
    let visitor = visitor.try_lock().ok()?;
    (!visitor.busy()).then_some(visitor.touched)
}

/// Drops the `count` least recently active visitors that may be dropped,
/// or as many as may; false if none may.
fn evict(visitors: &mut HashMap<String, Arc<Mutex<Visitor>>>, count: usize) -> bool {
    let mut idle: Vec<(Instant, &String)> = visitors
        .iter()
        .filter_map(|(id, visitor)| Some((idle_since(visitor)?, id)))
        .collect();
    if idle.is_empty() {
        return false;
    }
    if count < idle.len() {
        idle.select_nth_unstable(count);
        idle.truncate(count);
    }
    let dropped: Vec<String> = idle.into_iter().map(|(_, id)| id.clone()).collect();
    for id in dropped {
        visitors.remove(&id);
    }
    true
}

impl Registry {
    /// A registry on this database holding at most `max_visitors` visitors
    /// in memory; [`Registry::attach`] gives it its engines.
    pub fn new(store: Store, max_visitors: usize, metrics: Arc<Metrics>) -> Arc<Registry> {
        Arc::new(Registry {
            store: Mutex::new(store),
            visitors: Mutex::new(HashMap::new()),
            max_visitors,
            full_until: Mutex::new(None),
            pool: OnceLock::new(),
            metrics,
        })
    }

    /// Gives the registry its engine pool, then queues again every engine
    /// move that was not played when the server last stopped. Only the
    /// visitors of those games are read into memory now; the others'
    /// games, the visitor to move, are read when their visitor comes back.
    pub fn attach(&self, pool: Pool) -> Result<usize, String> {
        if self.pool.set(pool).is_err() {
            return Err("the engine pool is already attached".into());
        }
        let unfinished = lock(&self.store).unfinished()?;
        let mut resumed = 0;
        for owed in unfinished.iter().filter(|game| engine_owes_a_move(game)) {
            // Past the cap if it must: a game waiting for the engine keeps its visitor.
            let visitor = self
                .visitor(&owed.visitor, true)
                .map_err(|why| format!("{why:?}"))?;
            let mut visitor = lock(&visitor);
            // A visitor is read with every unfinished game of theirs.
            let Some(index) = visitor.index_of(&owed.id) else {
                continue;
            };
            let game = &mut visitor.games[index];
            if game.engine_to_move() && !game.waiting {
                self.search_engine_move(game);
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

    /// Deletes what the pruning rule says is old, but the unfinished games
    /// of visitors in memory, who may be playing them; returns how many games.
    pub fn prune(&self, finished_days: u64, abandoned_days: u64) -> Result<usize, String> {
        let day = 86_400_i64;
        let days = |d: u64| {
            i64::try_from(d)
                .unwrap_or(i64::MAX / day)
                .saturating_mul(day)
        };
        let now = now();
        // With the database locked no visitor is read into memory meanwhile
        // (`visitor` holds it until theirs are in): those in memory now are all.
        let mut store = lock(&self.store);
        let in_memory: HashSet<String> = lock(&self.visitors).keys().cloned().collect();
        store.prune(
            now.saturating_sub(days(finished_days)),
            now.saturating_sub(days(abandoned_days)),
            |visitor| in_memory.contains(visitor),
        )
    }

    /// The visitor, read from the database if not in memory. When memory
    /// holds `max_visitors` already, the least recently active idle ones
    /// are dropped to make room ([`EVICTED_SHARE`]), or (every one busy)
    /// the visitor is refused, unless `beyond_cap`.
    fn visitor(&self, id: &str, beyond_cap: bool) -> Refused<Arc<Mutex<Visitor>>> {
        if let Some(visitor) = lock(&self.visitors).get(id) {
            return Ok(Arc::clone(visitor));
        }
        if !beyond_cap && lock(&self.full_until).is_some_and(|until| Instant::now() < until) {
            self.metrics.error(ErrorKind::VisitorsFull);
            return Err(Refusal::Full);
        }
        // The database stays locked until the visitor is in memory, so that
        // no prune deletes the games read here in between.
        let store = lock(&self.store);
        let games = store.games_of(id, LISTED).map_err(Refusal::Internal)?;
        let mut visitors = lock(&self.visitors);
        drop(store);
        if !visitors.contains_key(id)
            && visitors.len() >= self.max_visitors
            && !evict(&mut visitors, self.max_visitors.div_ceil(EVICTED_SHARE))
            && !beyond_cap
        {
            *lock(&self.full_until) = Some(Instant::now() + FULL_RECHECK);
            self.metrics.error(ErrorKind::VisitorsFull);
            return Err(Refusal::Full);
        }
        let visitor = visitors
            .entry(id.to_string())
            .or_insert_with(|| Arc::new(Mutex::new(Visitor::new(id, games))));
        Ok(Arc::clone(visitor))
    }

    /// Runs `act` on the visitor; `changes` says whether their pages are sent the new state.
    fn with_visitor<T>(
        &self,
        id: &str,
        changes: bool,
        act: impl FnOnce(&mut Visitor) -> Refused<T>,
    ) -> Refused<T> {
        let visitor = self.visitor(id, false)?;
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
    pub fn subscribe(&self, visitor: &str) -> Refused<watch::Receiver<Published>> {
        self.with_visitor(visitor, false, |v| Ok(v.state.subscribe()))
    }

    /// The record shown (the current game's, or the analysis board's) as PGN.
    pub fn pgn(&self, visitor: &str) -> Refused<String> {
        self.with_visitor(visitor, false, |v| Ok(v.record_shown().pgn("-")))
    }

    /// The board after `moves` from the position shown.
    pub fn preview(&self, visitor: &str, moves: &[String]) -> Refused<Value> {
        self.with_visitor(visitor, false, |v| {
            Ok(crate::tools::gui::session::view::preview(
                v.record_shown(),
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
                self.leave_board(v);
            }
            let outcome = if v.board.is_some() {
                self.on_board(v, command)
            } else {
                self.carry_out(v, command)
            };
            v.ensure_current();
            outcome.map(|()| v.shown_id())
        })
    }

    /// Back from the analysis board to the games; its search is withdrawn.
    fn leave_board(&self, v: &mut Visitor) {
        if v.board.take().is_some() {
            self.pool().stop_analysis(&v.id);
        }
    }

    /// Opens the analysis board on `record` (engine lines on or off).
    fn open_board(&self, v: &mut Visitor, record: Record, analysing: bool) -> Refused<()> {
        let mut board = Board::new(record, v.lines);
        board.analysing = analysing;
        self.ask_analysis(&v.id, &mut board);
        v.board = Some(board);
        Ok(())
    }

    /// The analysis board on the game shown, at the position shown.
    fn board_of_game(v: &Visitor) -> Record {
        v.games[v.current].record.clone()
    }

    /// Carries out a command on the analysis board.
    fn on_board(&self, v: &mut Visitor, command: Command) -> Refused<()> {
        let visitor = v.id.clone();
        let Some(board) = v.board.as_mut() else {
            return Err(Refusal::Bad(Problem::new(
                Code::NoAnalysisBoard,
                "no analysis board",
            )));
        };
        let sideline = |outcome: Result<(), Problem>| outcome.map_err(Refusal::Bad);
        match command {
            Command::Move { mv } => board.play(&mv)?,
            Command::View { ply } => board.record.view(ply).map_err(Refusal::Bad)?,
            Command::Line { fen, moves } => board.play_line(&fen, &moves)?,
            Command::Choose { node } => sideline(board.record.choose(node))?,
            Command::Promote { node } => sideline(board.record.promote(node))?,
            Command::Delete { node } => sideline(board.record.delete(node))?,
            Command::Analysis { on } => board.analysing = on,
            Command::Multipv { lines } => {
                board.lines = capped_lines(lines)?;
                v.lines = board.lines;
            }
            Command::Review => return self.start_review(&visitor, board),
            Command::Analyse { fen: Some(fen) } => {
                let start = read_start(Some(&fen)).map_err(Refusal::Bad)?;
                let analysing = board.analysing;
                self.leave_board(v);
                return self.open_board(v, set_up(start), analysing);
            }
            Command::Analyse { fen: None } => {}
            Command::NewGame { .. } | Command::OpenGame { .. } => {
                self.leave_board(v);
                return self.carry_out(v, command);
            }
            Command::Takeback | Command::Resign => {
                return Err(Refusal::Bad(Problem::new(
                    Code::NoGameOnBoard,
                    "no game in progress on the analysis board",
                )));
            }
            other => return Err(not_here(&other)),
        }
        self.ask_analysis(&visitor, board);
        Ok(())
    }

    /// Queues the analysis of the position shown if the lines asked for
    /// are not there yet, or withdraws it when analysis is off.
    fn ask_analysis(&self, visitor: &str, board: &mut Board) {
        if board.reviewing() {
            return;
        }
        if !board.analysing {
            if board.search != 0 {
                // Withdrawn unfinished: asked for again when analysis is back on.
                self.pool().stop_analysis(visitor);
                board.search = 0;
                board.searched = (String::new(), 0);
            }
            return;
        }
        let position = board.shown();
        let wanted = (to_fen(&position), board.lines);
        if board.searched == wanted {
            return;
        }
        board.searched = wanted;
        board.found.clear();
        if position_result(&position) != GameResult::Ongoing {
            self.pool().stop_analysis(visitor);
            board.search = 0;
            return;
        }
        board.searches += 1;
        board.search = board.searches;
        let job = Job::new(
            visitor,
            &board.id,
            board.search,
            board.record.position_line(board.record.cursor),
            format!("go nodes {ANALYSIS_NODES}"),
            ANALYSIS_BUDGET,
        )
        .analysis(board.lines);
        board.queue_position = Some(self.pool().analyse(job));
    }

    /// Starts reviewing the line shown of the board (engine lines off).
    fn start_review(&self, visitor: &str, board: &mut Board) -> Refused<()> {
        board.review = Some(Review::of(&board.record).map_err(Refusal::Bad)?);
        board.analysing = false;
        board.search = 0;
        self.review_next(visitor, board);
        Ok(())
    }

    /// Queues the search of the review's next position, if any is left.
    fn review_next(&self, visitor: &str, board: &mut Board) {
        let Some(review) = board.review.as_mut() else {
            return;
        };
        let Some(position) = review.next_position() else {
            board.queue_position = None;
            return;
        };
        board.searches += 1;
        review.search = search_number(board.searches);
        let job = Job::new(
            visitor,
            &board.id,
            board.searches,
            position,
            format!("go nodes {REVIEW_NODES}"),
            ANALYSIS_BUDGET,
        )
        .analysis(1);
        board.queue_position = Some(self.pool().analyse(job));
    }

    fn carry_out(&self, v: &mut Visitor, command: Command) -> Refused<()> {
        match command {
            Command::Move { mv } => self.person_moves(&mut v.games[v.current], &mv),
            Command::View { ply } => v.games[v.current].record.view(ply).map_err(Refusal::Bad),
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
            Command::Analyse { fen: Some(fen) } => {
                let start = read_start(Some(&fen)).map_err(Refusal::Bad)?;
                self.open_board(v, set_up(start), false)
            }
            Command::Analyse { fen: None } => {
                let record = Self::board_of_game(v);
                self.open_board(v, record, false)
            }
            Command::Analysis { on } => {
                if !on {
                    return Ok(());
                }
                let record = Self::board_of_game(v);
                self.open_board(v, record, true)
            }
            Command::Review => {
                let record = Self::board_of_game(v);
                self.open_board(v, record, false)?;
                let visitor = v.id.clone();
                match v.board.as_mut() {
                    Some(board) => self.start_review(&visitor, board),
                    None => Ok(()),
                }
            }
            Command::Multipv { lines } => {
                v.lines = capped_lines(lines)?;
                Ok(())
            }
            Command::Line { .. }
            | Command::Choose { .. }
            | Command::Promote { .. }
            | Command::Delete { .. } => Err(Refusal::Bad(Problem::new(
                Code::SidelinesInAnalysis,
                "sidelines are for the analysis board (Free moves)",
            ))),
            other => Err(not_here(&other)),
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
            self.search_engine_move(&mut game);
        }
        // A fresh game nobody has moved in is replaced rather than kept.
        v.games.retain(|g| g.stored);
        v.games.insert(0, game);
        // The list shows the most recent games; one in progress stays
        // whatever its age, since the limit of games in progress counts it
        // and its engine's reply must find it.
        let mut listed = 0;
        v.games.retain(|g| {
            listed += 1;
            listed <= LISTED || g.in_progress()
        });
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
        let keep = game
            .record
            .take_back_point(game.human)
            .map_err(Refusal::Bad)?;
        lock(&self.store)
            .rewrite_end(&game.id, keep, None)
            .map_err(Refusal::Internal)?;
        game.record.truncate(keep);
        game.record.cursor = keep;
        // A search still queued or running for the removed position finds
        // that the game no longer waits for it (`waits_for`): an engine
        // skips it, and its move, if found, is dropped; one waiting to run
        // again after a failure to store is not run.
        game.waiting = false;
        game.queue_position = None;
        game.search_again_at = None;
        Ok(())
    }

    /// Queues the search for the engine's move; the game waits for it.
    fn search_engine_move(&self, game: &mut LiveGame) {
        game.waiting = true;
        game.search_again_at = None;
        game.queue_position = Some(self.pool().resume(game.job()));
    }

    /// What the search for the engine's move brought could not be stored:
    /// the game waits, and the search runs again once the wait for this
    /// many failures in a row is over ([`Registry::refresh_waiting_games`]).
    fn search_again_later(&self, game: &mut LiveGame) {
        self.metrics.error(ErrorKind::Internal);
        game.store_failures = game.store_failures.saturating_add(1);
        let doublings = (game.store_failures - 1).min(16);
        let wait = STORE_RETRY_FIRST
            .saturating_mul(1 << doublings)
            .min(STORE_RETRY_LONGEST);
        game.waiting = true;
        game.queue_position = None;
        game.search_again_at = Some(Instant::now() + wait);
    }

    /// Ends the game after a search that brought no move to play (an
    /// illegal one, or engines failing). When that end cannot be stored the
    /// search runs again, so that the game never waits for nothing.
    fn end_or_search_again(&self, game: &mut LiveGame, finish: Finish) {
        if let Err(why) = self.end(game, finish) {
            log::error!(
                "game {}: cannot store its end, to be searched again: {why:?}",
                game.id
            );
            self.search_again_later(game);
        }
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

    /// Queues again the searches whose wait after a failure to store is
    /// over, and pushes the queue positions to the pages of games and
    /// boards that wait (called on a timer).
    pub fn refresh_waiting_games(&self) {
        let positions = self.pool().positions();
        let visitors: Vec<_> = lock(&self.visitors).values().cloned().collect();
        let now = Instant::now();
        for visitor in visitors {
            let mut visitor = lock(&visitor);
            let mut changed = false;
            let Visitor { board, games, .. } = &mut *visitor;
            let mut shown = Vec::new();
            for game in games.iter_mut().filter(|g| g.waiting) {
                match game.search_again_at {
                    // Queued now: its place comes from the queue itself.
                    Some(at) if at <= now => {
                        self.search_engine_move(game);
                        changed = true;
                    }
                    Some(_) => {}
                    None => shown.push((&game.id, &mut game.queue_position)),
                }
            }
            let board = board
                .as_mut()
                .filter(|b| b.search != 0 || b.reviewing())
                .map(|b| (&b.id, &mut b.queue_position));
            for (id, shown) in shown.into_iter().chain(board) {
                let position = positions.get(id).copied();
                if position != *shown {
                    *shown = position;
                    changed = true;
                }
            }
            if changed {
                visitor.publish();
            }
        }
    }

    /// Drops from memory the visitors idle for [`IDLE`].
    pub fn forget_idle(&self) {
        lock(&self.visitors)
            .retain(|_, visitor| idle_since(visitor).is_none_or(|since| since.elapsed() < IDLE));
    }

    /// Visitors in memory.
    pub fn visitors_in_memory(&self) -> usize {
        lock(&self.visitors).len()
    }

    /// The most visitors held in memory.
    pub fn max_visitors(&self) -> usize {
        self.max_visitors
    }

    /// The visitor `job` searches for, if still in memory (a visitor
    /// waiting for a search is never dropped).
    fn in_memory(&self, job: &Job) -> Option<Arc<Mutex<Visitor>>> {
        lock(&self.visitors).get(&job.visitor).cloned()
    }

    /// Runs `act` on the board `job` searches for, if it still waits for it.
    fn with_waiting_board(&self, job: &Job, act: impl FnOnce(&Registry, &mut Board)) -> bool {
        let Some(visitor) = self.in_memory(job) else {
            return false;
        };
        let mut visitor = lock(&visitor);
        let Some(board) = visitor.board.as_mut().filter(|b| b.id == job.game) else {
            return false;
        };
        let reviewed = board
            .review
            .as_ref()
            .is_some_and(|r| r.search == search_number(job.ply));
        if !(reviewed || board.search == job.ply) {
            return false;
        }
        act(self, board);
        visitor.publish();
        true
    }

    /// Runs `act` on the game `job` searches for, if it still waits for it.
    fn with_waiting_game(&self, job: &Job, act: impl FnOnce(&Registry, &mut LiveGame)) -> bool {
        let Some(visitor) = self.in_memory(job) else {
            return false;
        };
        let mut visitor = lock(&visitor);
        let Some(index) = visitor.index_of(&job.game) else {
            return false;
        };
        let game = &mut visitor.games[index];
        if !game.waits_for(job) {
            return false;
        }
        act(self, game);
        visitor.publish();
        true
    }
}

/// The refusal of a command visitors may not use.
fn not_here(command: &Command) -> Refusal {
    let name = command_name(command);
    Refusal::Forbidden(
        Problem::new(Code::PrivateCommand, format!("not on this server: {name}"))
            .with("command", name),
    )
}

/// The refusal of a move beyond [`MAX_BOARD_MOVES`].
fn board_full() -> Refusal {
    Refusal::Bad(
        Problem::new(
            Code::BoardFull,
            format!("the analysis board holds at most {MAX_BOARD_MOVES} moves"),
        )
        .with("max", MAX_BOARD_MOVES),
    )
}

/// The engine lines asked for, at most [`MAX_ANALYSIS_LINES`].
fn capped_lines(lines: usize) -> Refused<usize> {
    if lines == 0 {
        return Err(Refusal::Bad(
            Problem::new(
                Code::MultipvRange,
                format!("MultiPV {lines}: at least one line"),
            )
            .with("lines", lines),
        ));
    }
    Ok(lines.min(MAX_ANALYSIS_LINES))
}

/// A board's search number as a review numbers its searches.
fn search_number(search: usize) -> u64 {
    u64::try_from(search).unwrap_or(u64::MAX)
}

/// An analysis board's record set up at `start`.
fn set_up(start: Position) -> Record {
    Record::new(start, ["?".into(), "?".into()])
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
        match job.purpose {
            Purpose::Move => self.with_waiting_game(job, |_, game| game.queue_position = None),
            Purpose::Analysis { .. } => {
                self.with_waiting_board(job, |_, board| board.queue_position = None)
            }
        }
    }

    fn analysed(&self, job: &Job, lines: Vec<Info>) {
        self.with_waiting_board(job, |registry, board| match board.review.as_mut() {
            Some(review) if review.search == search_number(job.ply) => {
                if let Some(best) = lines.into_iter().next() {
                    review.hear(best);
                }
                review.searched();
                registry.review_next(&job.visitor, board);
            }
            _ => {
                board.found = lines;
                board.search = 0;
            }
        });
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
                    registry.end_or_search_again(game, finish);
                    return;
                }
            };
            let stored = lock(&registry.store).append(&game.id, job.ply, mv, ending.as_ref());
            if let Err(error) = stored {
                // Nothing of it was stored: the game waits for a move at the
                // same ply, searched again once the database may be back.
                log::error!(
                    "game {}: cannot store the engine's move, to be searched again: {error}",
                    job.game
                );
                registry.search_again_later(game);
                return;
            }
            game.store_failures = 0;
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
        if let Purpose::Analysis { .. } = job.purpose {
            self.with_waiting_board(job, |_, board| {
                board.search = 0;
                board.searched = (String::new(), 0);
                if let Some(review) = board.review.as_mut() {
                    review.search = 0;
                }
            });
            return;
        }
        self.with_waiting_game(job, |registry, game| {
            let human = game.human;
            let finish = win_for(human, "crash", format!("{} wins: {why}", human.name()));
            registry.end_or_search_again(game, finish);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::start_position;

    #[test]
    fn a_full_memory_drops_the_least_recently_active_idle_visitors() {
        let start = Instant::now();
        let mut visitors: HashMap<String, Arc<Mutex<Visitor>>> = (0..10)
            .map(|n| {
                let mut visitor = Visitor::new(&n.to_string(), Vec::new());
                visitor.touched = start + Duration::from_secs(n);
                (visitor.id.clone(), Arc::new(Mutex::new(visitor)))
            })
            .collect();
        // The least recently active has a page open, the next a request under way.
        let _page = lock(&visitors["0"]).state.subscribe();
        let _request = Arc::clone(&visitors["1"]);
        assert!(evict(&mut visitors, 3));
        let mut left: Vec<&str> = visitors.keys().map(String::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["0", "1", "5", "6", "7", "8", "9"]);
        assert!(evict(&mut visitors, 100));
        assert_eq!(visitors.len(), 2);
        assert!(!evict(&mut visitors, 1), "every one left is busy");
    }

    /// A full memory with no visitor to drop refuses the newcomers that
    /// follow for a moment without looking again: neither a scan nor a
    /// database query each (here the database is broken meanwhile).
    #[test]
    fn newcomers_to_a_memory_full_of_busy_visitors_are_refused_without_a_look() {
        let dir = crate::tools::scratch_dir("registry-full");
        let path = dir.path().join("games.sqlite");
        let registry = Registry::new(Store::open(&path).unwrap(), 2, Arc::new(Metrics::default()));
        // Requests under way keep both in memory.
        let _busy = [
            registry.visitor("a", false).unwrap(),
            registry.visitor("b", false).unwrap(),
        ];
        assert!(matches!(registry.visitor("c", false), Err(Refusal::Full)));
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE moves; DROP TABLE games")
            .unwrap();
        assert!(matches!(registry.visitor("d", false), Err(Refusal::Full)));
        std::thread::sleep(FULL_RECHECK);
        assert!(
            matches!(registry.visitor("e", false), Err(Refusal::Internal(_))),
            "the next look reads the (broken) database"
        );
        assert_eq!(registry.visitors_in_memory(), 2);
    }

    #[test]
    fn pruning_spares_the_games_of_visitors_in_memory() {
        let dir = crate::tools::scratch_dir("registry-prune");
        let mut store = Store::open(&dir.path().join("games.sqlite")).unwrap();
        let long_ago = now() - 7 * 86_400;
        for visitor in ["playing", "gone"] {
            let mut game = LiveGame::new(visitor, 0, Color::White, start_position()).stored_form();
            game.moves.push("f1f2".into());
            game.updated = long_ago;
            store.create(&game).unwrap();
        }
        let registry = Registry::new(store, 10, Arc::new(Metrics::default()));
        registry.visitor("playing", false).unwrap();
        assert_eq!(registry.prune(1, 1), Ok(1));
        let store = lock(&registry.store);
        assert_eq!(store.games_of("playing", LISTED).unwrap().len(), 1);
        assert_eq!(store.games_of("gone", LISTED).unwrap(), []);
    }

    /// A database that keeps failing gets the engine's move searched again
    /// after a wait that doubles with each failure, not at once: the game
    /// waits for it meanwhile, out of the queue.
    #[test]
    fn a_move_that_cannot_be_stored_is_searched_again_after_a_growing_wait() {
        let dir = crate::tools::scratch_dir("registry-store-retry");
        let path = dir.path().join("games.sqlite");
        let metrics = Arc::new(Metrics::default());
        let registry = Registry::new(Store::open(&path).unwrap(), 10, Arc::clone(&metrics));
        let outcome: Arc<dyn Outcome> = Arc::clone(&registry) as Arc<dyn Outcome>;
        let pool = Pool::start(0, 10, "agon", &[], Arc::clone(&metrics), outcome);
        registry.attach(pool).unwrap();
        let visitor = registry.visitor("visitor", false).unwrap();
        let mut game = LiveGame::new("visitor", 0, Color::Black, start_position());
        game.waiting = true;
        let (id, job) = (game.id.clone(), game.job());
        lock(&visitor).games.push(game);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE moves")
            .unwrap();
        let waits = |failures: u32| {
            let visitor = lock(&visitor);
            let game = &visitor.games[visitor.index_of(&id).unwrap()];
            assert!(game.waiting && game.record.line_len() == 0);
            assert_eq!(game.store_failures, failures);
            game.search_again_at
                .map(|at| at.saturating_duration_since(Instant::now()))
        };
        let queued = || registry.pool().positions().contains_key(&id);
        let mv = crate::rules::legal_moves(&start_position()).as_slice()[0].to_string();

        Outcome::played(&*registry, &job, &mv);
        let first = waits(1).expect("a wait");
        assert!(first <= STORE_RETRY_FIRST && first > STORE_RETRY_FIRST / 2);
        registry.refresh_waiting_games();
        assert!(!queued(), "searched again before the wait is over");
        std::thread::sleep(first);
        registry.refresh_waiting_games();
        assert!(queued(), "the wait is over");
        assert_eq!(waits(1), None);

        Outcome::played(&*registry, &job, &mv);
        let second = waits(2).expect("a longer wait");
        assert!(second > STORE_RETRY_FIRST && second <= 2 * STORE_RETRY_FIRST);
        for _ in 0..20 {
            Outcome::played(&*registry, &job, &mv);
        }
        assert!(waits(22).unwrap() <= STORE_RETRY_LONGEST);
    }

    /// After a takeback and another move, the game waits for the new
    /// search at the same ply, not for the one it made before.
    #[test]
    fn a_search_for_a_taken_back_position_is_not_waited_for() {
        let mut game = LiveGame::new("visitor", 1, Color::White, start_position());
        game.record.play_at(0, ply("f1e1"));
        game.waiting = true;
        let before = game.job();
        assert!(game.waits_for(&before));

        let keep = game.record.take_back_point(game.human).unwrap();
        game.record.truncate(keep);
        game.record.cursor = keep;
        game.waiting = false;
        assert!(!game.waits_for(&before));

        game.record.play_at(0, ply("f1g2"));
        game.waiting = true;
        let after = game.job();
        assert_eq!(after.ply, before.ply);
        assert!(game.waits_for(&after));
        assert!(
            !game.waits_for(&before),
            "the old search's move would land here"
        );
    }
}
