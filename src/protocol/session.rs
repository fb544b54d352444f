//! The controller: the game, the options and the player, changed by the
//! commands in the order they arrive, with the search on its own thread.

use super::command::{Command, GoParams};
use super::input::{Event, Gate, Line};
use super::options::{self, Effect, Settings};
use super::output::{Answer, Output};
use super::player::Player;
use super::reply::{bestmove_line, info_line, query_response, search_limits};
use crate::rules::notation::board_picture;
use crate::rules::notation::quote;
use crate::rules::perft::divide_lines;
use crate::rules::{
    Color, Game, GameResult, Move, Position, legal_moves, parse_fen, parse_move, start_position,
    to_fen,
};
use crate::search::eval::describe;
use crate::search::nnue::describe as describe_network;
use crate::search::time::{MoveLag, budget};
use crate::search::{BestMove, Clock, SearchControl, SearchLimits};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A search thread and its flags. The thread hands the player back.
struct Running {
    control: SearchControl,
    /// Set by whoever writes the `bestmove`: from then on the search is
    /// over for the protocol.
    answered: Arc<Answer>,
    /// When `go` was read.
    asked_at: Instant,
    /// How long the controller had waited for a processor when it began
    /// waiting for the `go` line (for the debug log).
    waited_at_go: Option<Duration>,
    /// When the controller answers for the search thread, if that thread
    /// has not answered by then (it may be waiting for a processor).
    deadline: Option<Instant>,
    /// For a search that ponders: its deadline, counted from the `ponderhit`.
    after_ponder_hit: Option<Duration>,
    /// The move to play at the deadline if the search has not chosen one.
    fallback: Option<Move>,
    /// The side and clock of a search timed by its clock, whose answer
    /// teaches `Session::move_lag`.
    clocked: Option<(Color, Clock)>,
    with_ponder: bool,
    /// The search thread; it gives the player back, or `None` where the
    /// player never reached it.
    thread: JoinHandle<Option<Box<dyn Player>>>,
}

/// How long after its hard time limit a search may take to answer before
/// the controller answers for it. The search thread answers within a
/// millisecond of its limit when it has a processor; a thread that has used
/// its share of a busy machine may wait for one much longer, while the
/// controller, asleep until then, gets one at once.
const ANSWER_GRACE: Duration = Duration::from_millis(3);

/// The controller's state.
pub(crate) struct Session {
    start: Position,
    game: Game,
    settings: Settings,
    /// The player, absent while it thinks on the search thread.
    player: Option<Box<dyn Player>>,
    running: Option<Running>,
    /// Lines that must wait for the running search to end, in order.
    deferred: VecDeque<Line>,
    output: Output,
    events: Sender<Event>,
    /// Set by `quit`: searches started from now on stop at once.
    quitting: bool,
    /// Set by the reader once `quit` or the end of input is read: a perft
    /// ends at once.
    ending: Arc<AtomicBool>,
    /// How long this thread had waited for a processor when it began
    /// waiting for the event it handles (for the debug log).
    waited_at_event: Option<Duration>,
    /// The caller's delays per move in this game, for the time budget.
    move_lag: MoveLag,
}

impl Session {
    /// A session at the start position with default options.
    pub(crate) fn new(
        mut player: Box<dyn Player>,
        output: Output,
        events: Sender<Event>,
        ending: Arc<AtomicBool>,
    ) -> Session {
        let start = start_position();
        let settings = Settings::default();
        if let Err(e) = player.configure(settings.engine) {
            output.error(e);
        }
        Session {
            start,
            game: Game::new(start),
            settings,
            player: Some(player),
            running: None,
            deferred: VecDeque::new(),
            output,
            events,
            quitting: false,
            ending,
            waited_at_event: None,
            move_lag: MoveLag::default(),
        }
    }

    /// Handles events until `quit` (or the end of input, which the reader
    /// turns into `quit`), then stops and waits for any search.
    pub(crate) fn serve(mut self, events: &Receiver<Event>, gate: &Gate) {
        loop {
            self.waited_at_event = processor_wait();
            let event = match self.deadline() {
                Some(deadline) => {
                    match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                        Ok(event) => event,
                        Err(RecvTimeoutError::Timeout) => {
                            self.answer_at_deadline();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                None => match events.recv() {
                    Ok(event) => event,
                    Err(_) => break,
                },
            };
            let from_reader = matches!(event, Event::Line(_));
            match event {
                Event::Line(Line {
                    command: Ok(Command::Quit),
                    ..
                }) => break,
                Event::Line(line) => self.dispatch(line),
                // Possibly about a search already reaped by `dispatch`.
                Event::SearchDone => self.reap_answered(),
            }
            gate.publish(
                from_reader,
                self.running.as_ref().map(|r| (&r.control, &r.answered)),
                self.deferred.len(),
            );
        }
        // Lines still waiting run now, and every search, also one that they
        // start, stops at once and reports its move.
        self.quitting = true;
        while let Some(running) = &self.running {
            running.control.stop.store(true, Ordering::SeqCst);
            self.search_ended();
        }
    }

    /// Runs a line now, or keeps it for when the search ends.
    fn dispatch(&mut self, line: Line) {
        // A search that has answered is over, even if its thread has not
        // said so yet: a `go` and `stop` sent right after its `bestmove`
        // belong to the next search.
        self.reap_answered();
        // Nothing is deferred without a running search: `search_ended`
        // drains the queue.
        if self.running.is_some() {
            match line.command {
                // Only asks whether the engine is alive, which it is.
                Ok(Command::IsReady) => self.output.line("readyok"),
                // These act on the running search at once. With lines
                // waiting they were sent after those lines, so they also
                // take their turn, to reach a search that a waiting `go`
                // starts (else a waiting `go infinite` would never end).
                Ok(Command::Stop | Command::PonderHit) => {
                    if !self.deferred.is_empty() {
                        self.deferred.push_back(line.clone());
                    }
                    self.execute(line);
                }
                _ => self.deferred.push_back(line),
            }
            return;
        }
        self.execute(line);
    }

    /// The deadline of a running search that has not answered yet.
    fn deadline(&self) -> Option<Instant> {
        self.running
            .as_ref()
            .filter(|running| !running.answered.given())
            .and_then(|running| running.deadline)
    }

    /// Stops a search that missed its deadline and answers with the move it
    /// would play now; the search thread, when it gets to it, finds the
    /// answer given and writes nothing more.
    fn answer_at_deadline(&mut self) {
        let Some(running) = &mut self.running else {
            return;
        };
        running.deadline = None;
        running.control.stop.store(true, Ordering::SeqCst);
        let published = running.control.best_so_far();
        let (fallback, with_ponder) = (running.fallback, running.with_ponder);
        // The search publishes a new best move just before its `info` line:
        // the move of the last line written is the one to agree with.
        let answer_with = |reported: Option<BestMove>| {
            let (best, ponder) = match reported.or(published) {
                Some((best, ponder)) => (Some(best), ponder),
                None => (fallback, None),
            };
            vec![bestmove_line(best, ponder, with_ponder)]
        };
        if self.output.answer_once(&running.answered, answer_with) {
            log::debug!(
                "bestmove {:.1} ms after go was read, by the controller (the search missed its deadline){}",
                millis(running.asked_at.elapsed()),
                describe_wait(wait_since(running.waited_at_go))
            );
        }
    }

    fn reap_answered(&mut self) {
        if self
            .running
            .as_ref()
            .is_some_and(|running| running.answered.given())
        {
            self.search_ended();
        }
    }

    fn search_ended(&mut self) {
        self.join_search();
        for line in std::mem::take(&mut self.deferred) {
            self.dispatch(line);
        }
    }

    fn join_search(&mut self) {
        if let Some(running) = self.running.take() {
            if let (Some((side, clock)), Some(at)) = (running.clocked, running.answered.at()) {
                self.move_lag
                    .answered(side, clock, at.saturating_duration_since(running.asked_at));
            }
            match running.thread.join() {
                Ok(Some(player)) => self.player = Some(player),
                Ok(None) | Err(_) => log::error!("the search thread died; the player is lost"),
            }
        }
    }

    fn execute(&mut self, line: Line) {
        let command = match line.command {
            Ok(command) => command,
            Err(message) => return self.output.error(message),
        };
        match command {
            Command::Uci => self.identify("uciok"),
            Command::Ugi => self.identify("ugiok"),
            Command::IsReady => self.output.line("readyok"),
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::NewGame => {
                self.with_player(|player| player.clear());
                self.game = Game::new(self.start);
                self.move_lag.reset();
            }
            Command::Position { fen, moves } => self.set_position(fen.as_deref(), &moves),
            Command::Go(params) => self.go(&params, line.read_at),
            Command::Stop => {
                if let Some(running) = &self.running {
                    running.control.stop.store(true, Ordering::SeqCst);
                }
            }
            Command::PonderHit => {
                if let Some(running) = &mut self.running {
                    running.control.pondering.store(false, Ordering::SeqCst);
                    if let Some(within) = running.after_ponder_hit.take() {
                        running.deadline = line.read_at.checked_add(within);
                    }
                }
            }
            // `serve` ends the loop on `quit` before it gets here.
            Command::Quit => {}
            Command::Display => self.display(),
            Command::Eval => {
                let tuning = &self.settings.engine.tuning;
                let network =
                    describe_network(tuning.network.0, self.game.position(), tuning.use_network);
                self.output.lines(
                    std::iter::once(network)
                        .chain(describe(self.game.position(), &tuning.eval_percent)),
                )
            }
            Command::Perft { depth } => self.perft(depth),
            Command::Moves => self.list_moves(),
            Command::Status => self.output.line(&format!("status {}", self.game.result())),
            Command::Query(kind) => self.output.line(&query_response(
                kind,
                self.game.result(),
                self.game.position().side_to_move(),
            )),
        }
    }

    fn with_player(&mut self, change: impl FnOnce(&mut dyn Player)) {
        match self.player.as_deref_mut() {
            Some(player) => change(player),
            None => self
                .output
                .error("the engine is unavailable after an internal failure"),
        }
    }

    fn identify(&mut self, done: &str) {
        let name = self.player.as_ref().map_or_else(
            || format!("agon {}", env!("CARGO_PKG_VERSION")),
            |p| p.name(),
        );
        let mut lines = vec![
            format!("id name {name}"),
            "id author the agon developers".to_string(),
        ];
        lines.extend(options::declarations());
        lines.push(done.to_string());
        self.output.lines(lines);
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let before = self.settings;
        match options::apply(&mut self.settings, name, value) {
            Ok(Effect::Changed) => {
                let engine = self.settings.engine;
                let mut refused = None;
                self.with_player(|player| refused = player.configure(engine).err());
                if let Some(e) = refused {
                    self.settings = before;
                    self.output.error(format_args!(
                        "option '{}': {e}; value unchanged",
                        quote(name)
                    ));
                }
            }
            Ok(Effect::ClearHash) => self.with_player(|player| player.clear()),
            Err(e) => self.output.error(e),
        }
    }

    /// Replaces the game, or leaves it untouched and reports the first problem.
    fn set_position(&mut self, fen: Option<&str>, moves: &[String]) {
        let start = match fen {
            None => self.start,
            Some(fen) => match parse_fen(fen) {
                Ok(position) => position,
                Err(e) => {
                    return self
                        .output
                        .error(format_args!("invalid FEN: {e}; position unchanged"));
                }
            },
        };
        let mut game = Game::new(start);
        for (index, text) in moves.iter().enumerate() {
            let number = index + 1;
            let result = game.result();
            if result != GameResult::Ongoing {
                return self.output.error(format_args!(
                    "move {number} '{}' comes after the end of the game ({}); position unchanged",
                    quote(text),
                    result.describe()
                ));
            }
            if let Err(e) = game.play_text(text) {
                return self.output.error(format_args!(
                    "move {number} of the list: {e}; position unchanged"
                ));
            }
        }
        self.game = game;
    }

    /// Starts a search whose time runs from `read_at`.
    fn go(&mut self, params: &GoParams, read_at: Instant) {
        if let Some(depth) = params.perft {
            return self.perft(depth);
        }
        let result = self.game.result();
        if result != GameResult::Ongoing {
            return self.output.lines([
                format!("info string game over: {}", result.describe()),
                "bestmove (none)".to_string(),
            ]);
        }
        let position = self.game.position();
        let searchmoves: Result<Vec<Move>, _> = params
            .searchmoves
            .iter()
            .map(|text| parse_move(position, text))
            .collect();
        let searchmoves = match searchmoves {
            Ok(moves) => moves,
            Err(e) => return self.output.error(format_args!("searchmoves: {e}")),
        };
        let side = position.side_to_move();
        let mut limits = search_limits(params, side, searchmoves, read_at);
        let clocked = match limits.clock.as_mut() {
            Some(clock) if !params.ponder && !limits.infinite => {
                clock.lag = self.move_lag.before_search(side, clock);
                log::debug!(
                    "clock {} ms, delay per move {}",
                    clock.time.as_millis(),
                    clock.lag.map_or("not measured yet".into(), |lag| format!(
                        "{:.1} ms",
                        millis(lag)
                    ))
                );
                Some((side, *clock))
            }
            _ => {
                self.move_lag.reset();
                None
            }
        };
        let Some(player) = self.player.take() else {
            return self
                .output
                .error("the engine is unavailable after an internal failure");
        };
        let control = SearchControl::default();
        control.pondering.store(params.ponder, Ordering::SeqCst);
        control.stop.store(self.quitting, Ordering::SeqCst);
        let with_ponder = self.settings.ponder;
        // Not under `infinite`, whose answer waits for the caller; while
        // pondering, from the `ponderhit`, when the search's clock starts.
        let answer_within = if limits.infinite {
            None
        } else {
            let overhead = Duration::from_millis(self.settings.engine.move_overhead_ms);
            budget(&limits, overhead, &self.settings.engine.tuning.params)
                .map(|budget| budget.hard.saturating_add(ANSWER_GRACE))
        };
        let deadline = answer_within
            .filter(|_| !params.ponder)
            .and_then(|within| read_at.checked_add(within));
        let after_ponder_hit = answer_within.filter(|_| params.ponder);
        let fallback = limits
            .searchmoves
            .first()
            .or(legal_moves(position).iter().next())
            .copied();
        let answered = Arc::new(Answer::default());
        let handed_over = wait_since(self.waited_at_event);
        // The player goes to the thread once it runs: were the thread
        // refused, a player moved into its closure would be lost with it.
        let (hand_over, player_arrives) = std::sync::mpsc::sync_channel(1);
        let thread = {
            let answered = Arc::clone(&answered);
            let game = self.game.clone();
            let control = control.clone();
            let output = self.output.clone();
            let events = self.events.clone();
            thread::Builder::new().name("search".into()).spawn(move || {
                let player = player_arrives.recv().ok()?;
                let (player, answered_after) = search_and_report(
                    player,
                    &game,
                    &limits,
                    &control,
                    &output,
                    with_ponder,
                    &answered,
                );
                if let Some(after) = answered_after {
                    // This thread is new: all its waiting was for this search.
                    let waited = processor_wait().and_then(|own| Some(own + handed_over?));
                    log::debug!(
                        "bestmove {:.1} ms after go was read, by the search thread{}",
                        millis(after),
                        describe_wait(waited)
                    );
                }
                // The controller may be gone already when quitting.
                let _ = events.send(Event::SearchDone);
                Some(player)
            })
        };
        let thread = match thread {
            Ok(thread) => match hand_over.send(player) {
                Ok(()) => Ok(thread),
                Err(refused) => Err((std::io::Error::other("the search thread ended"), refused.0)),
            },
            Err(e) => Err((e, player)),
        };
        match thread {
            Ok(thread) => {
                self.running = Some(Running {
                    control,
                    answered,
                    asked_at: read_at,
                    waited_at_go: self.waited_at_event,
                    deadline,
                    after_ponder_hit,
                    fallback,
                    clocked,
                    with_ponder,
                    thread,
                });
            }
            Err((e, player)) => {
                // The engine stays whole, and the `go` still gets its one
                // answer: the first legal move.
                log::error!("cannot start the search thread: {e}");
                self.player = Some(player);
                self.output.error("cannot start the search thread");
                self.output
                    .line(&bestmove_line(fallback, None, with_ponder));
            }
        }
    }

    fn display(&self) {
        let position = self.game.position();
        let mut lines: Vec<String> = board_picture(position).lines().map(String::from).collect();
        lines.push(format!("Fen: {}", to_fen(position)));
        lines.push(format!("Key: {:016x}", position.key()));
        lines.push(format!("Side to move: {}", position.side_to_move().name()));
        self.output.lines(lines);
    }

    fn perft(&self, depth: u32) {
        let threads = self.settings.engine.threads;
        match divide_lines(self.game.position(), depth, threads, &self.ending) {
            Some(lines) => self.output.lines(lines),
            None => log::info!("perft {depth} ended unfinished by quit"),
        }
    }

    fn list_moves(&self) {
        let mut moves: Vec<String> = if self.game.result() == GameResult::Ongoing {
            legal_moves(self.game.position())
                .iter()
                .map(ToString::to_string)
                .collect()
        } else {
            Vec::new()
        };
        moves.sort();
        let mut line = String::from("moves");
        for mv in moves {
            line.push(' ');
            line.push_str(&mv);
        }
        self.output.line(&line);
    }
}

/// The body of the search thread: think, hold the answer while `go
/// infinite` or pondering asks for it, write the `bestmove` unless the
/// controller has, and give the player back, with the time from reading
/// `go` to the answer if this thread gave it.
fn search_and_report(
    mut player: Box<dyn Player>,
    game: &Game,
    limits: &SearchLimits,
    control: &SearchControl,
    output: &Output,
    with_ponder: bool,
    answered: &Answer,
) -> (Box<dyn Player>, Option<Duration>) {
    let thought = catch_unwind(AssertUnwindSafe(|| {
        player.think(game, limits, control, &mut |report| {
            let best = match report.pv.as_slice() {
                [best, rest @ ..] if report.multipv == 1 => Some((*best, rest.first().copied())),
                _ => None,
            };
            output.before_answer(answered, &info_line(report), best);
        })
    }));
    // Also for a player that answers at once, and after a failure.
    control.hold_answer(limits);
    let answer = match thought {
        Ok(outcome) => vec![bestmove_line(outcome.best, outcome.ponder, with_ponder)],
        Err(_) => {
            // Still one bestmove per go, so that a GUI is never left waiting.
            let fallback = legal_moves(game.position()).iter().next().copied();
            vec![
                "info string error: internal search failure".to_string(),
                bestmove_line(fallback, None, false),
            ]
        }
    };
    let answered_after = output
        .answer_once(answered, |_| answer)
        .then(|| limits.started.map(|started| started.elapsed()))
        .flatten();
    (player, answered_after)
}

/// How long this thread has waited for a processor while it could run, for
/// the debug log (which shows whether a late answer was the machine's
/// doing): Linux's scheduler statistics, read only when that log is on.
fn processor_wait() -> Option<Duration> {
    if !log::log_enabled!(log::Level::Debug) {
        return None;
    }
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// This thread's wait for a processor since it had waited `before`.
fn wait_since(before: Option<Duration>) -> Option<Duration> {
    Some(processor_wait()?.saturating_sub(before?))
}

fn describe_wait(waited: Option<Duration>) -> String {
    waited.map_or_else(String::new, |waited| {
        format!(
            ", which waited {:.1} ms for a processor meanwhile",
            millis(waited)
        )
    })
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
