//! The engines of `agon serve`: a fixed number of engine processes, each on
//! its own thread, taking searches from one queue that is fair across
//! visitors (round robin: a visitor's second search waits until every other
//! visitor's first has been taken), game moves before analyses but for a
//! share: an analysis whose turn has waited [`ANALYSIS_AGING`] goes before
//! waiting game moves when no other analysis is being searched, and never
//! twice in a row, so analyses are not starved and hold each game move up
//! by at most one analysis per game move ahead of it, plus one. A crashed or
//! stalled engine is replaced and its search run again.

use super::metrics::{ErrorKind, Metrics};
use crate::tools::gui::driver::Info;
use crate::tools::match_runner::engine::{EngineProcess, Failure};
use crate::tools::match_runner::options::{EngineSpec, Limits, Timeouts};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long past its budget a search may run before it is stopped.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// A search that crashes this many engines in a row is given up.
const ATTEMPTS: u32 = 3;
/// An analysis whose turn has waited this long may go before game moves.
pub const ANALYSIS_AGING: Duration = Duration::from_secs(2);

/// What a search is for.
#[derive(Clone, Debug)]
pub enum Purpose {
    /// A game's next move: queued before every analysis.
    Move,
    /// Engine lines for a visitor's analysis board; a visitor's next
    /// analysis sets `superseded` and the search stops at its next line.
    Analysis {
        /// MultiPV.
        lines: usize,
        /// Set when the visitor asked for another analysis.
        superseded: Arc<AtomicBool>,
    },
}

/// One engine search: a game's next move, or an analysis.
#[derive(Clone, Debug)]
pub struct Job {
    /// Whose game (the fairness key).
    pub visitor: String,
    /// Which game, or which analysis board.
    pub game: String,
    /// The ply the move will be, or the board's search number (so that a
    /// stale result is recognised).
    pub ply: usize,
    /// The `position ...` line.
    pub position: String,
    /// The `go ...` line.
    pub go: String,
    /// How long the search should take at most.
    pub budget: Duration,
    /// When it was queued.
    pub queued: Instant,
    /// A move or an analysis.
    pub purpose: Purpose,
    attempts: u32,
}

impl Job {
    /// A search for a game move to queue now.
    pub fn new(
        visitor: &str,
        game: &str,
        ply: usize,
        position: String,
        go: String,
        budget: Duration,
    ) -> Job {
        Job {
            visitor: visitor.to_string(),
            game: game.to_string(),
            ply,
            position,
            go,
            budget,
            queued: Instant::now(),
            purpose: Purpose::Move,
            attempts: 0,
        }
    }

    /// The same search made an analysis with this many lines.
    pub fn analysis(self, lines: usize) -> Job {
        Job {
            purpose: Purpose::Analysis {
                lines,
                superseded: Arc::new(AtomicBool::new(false)),
            },
            ..self
        }
    }

    fn lines(&self) -> usize {
        match &self.purpose {
            Purpose::Move => 1,
            Purpose::Analysis { lines, .. } => *lines,
        }
    }

    fn superseded(&self) -> bool {
        match &self.purpose {
            Purpose::Move => false,
            Purpose::Analysis { superseded, .. } => superseded.load(Ordering::Relaxed),
        }
    }
}

/// Searches waiting, one line per visitor, served in turn.
#[derive(Default)]
struct FairQueue {
    turns: VecDeque<String>,
    waiting: HashMap<String, VecDeque<Job>>,
    len: usize,
}

impl FairQueue {
    fn push(&mut self, job: Job, front: bool) {
        let line = self.waiting.entry(job.visitor.clone()).or_default();
        if line.is_empty() {
            if front {
                self.turns.push_front(job.visitor.clone());
            } else {
                self.turns.push_back(job.visitor.clone());
            }
        }
        if front {
            line.push_front(job);
        } else {
            line.push_back(job);
        }
        self.len += 1;
    }

    fn pop(&mut self) -> Option<Job> {
        let visitor = self.turns.pop_front()?;
        let line = self.waiting.get_mut(&visitor)?;
        let job = line.pop_front();
        if line.is_empty() {
            self.waiting.remove(&visitor);
        } else {
            self.turns.push_back(visitor);
        }
        if job.is_some() {
            self.len -= 1;
        }
        job
    }

    /// How long the search whose turn is next has waited.
    fn next_waited(&self) -> Option<Duration> {
        let visitor = self.turns.front()?;
        Some(self.waiting.get(visitor)?.front()?.queued.elapsed())
    }

    /// Drops the searches of `visitor` still waiting.
    fn withdraw(&mut self, visitor: &str) {
        if let Some(line) = self.waiting.remove(visitor) {
            self.len -= line.len();
            self.turns.retain(|v| v != visitor);
        }
    }

    /// Each waiting game with the number of searches that will be taken before its own.
    fn positions(&self) -> HashMap<String, usize> {
        let mut positions = HashMap::with_capacity(self.len);
        let mut ahead = 0;
        for round in 0.. {
            let mut any = false;
            for visitor in &self.turns {
                if let Some(job) = self.waiting.get(visitor).and_then(|l| l.get(round)) {
                    positions.entry(job.game.clone()).or_insert(ahead);
                    ahead += 1;
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        positions
    }
}

/// Game moves first, then analyses but for their share, each lane fair
/// across visitors.
#[derive(Default)]
struct Lanes {
    moves: FairQueue,
    analyses: FairQueue,
    /// Each visitor's latest analysis, queued or running.
    analysing: HashMap<String, Arc<AtomicBool>>,
    /// Analyses being searched.
    searching_analyses: usize,
    /// The last search taken was an analysis that went before game moves.
    jumped: bool,
}

impl Lanes {
    fn push(&mut self, job: Job, front: bool) {
        match job.purpose {
            Purpose::Move => self.moves.push(job, front),
            Purpose::Analysis { .. } => self.analyses.push(job, front),
        }
    }

    fn pop(&mut self) -> Option<Job> {
        let due = self.searching_analyses == 0
            && !self.jumped
            && self
                .analyses
                .next_waited()
                .is_some_and(|waited| waited >= ANALYSIS_AGING);
        let job = match due.then(|| self.analyses.pop()).flatten() {
            Some(analysis) => {
                self.jumped = self.moves.len > 0;
                Some(analysis)
            }
            None => match self.moves.pop() {
                Some(mv) => {
                    self.jumped = false;
                    Some(mv)
                }
                None => self.analyses.pop(),
            },
        };
        if let Some(Purpose::Analysis { .. }) = job.as_ref().map(|j| &j.purpose) {
            self.searching_analyses += 1;
        }
        job
    }

    fn positions(&self) -> HashMap<String, usize> {
        let mut positions = self.moves.positions();
        for (board, ahead) in self.analyses.positions() {
            positions.entry(board).or_insert(ahead + self.moves.len);
        }
        positions
    }

    /// Withdraws or stops the visitor's analysis.
    fn supersede(&mut self, visitor: &str) {
        self.analyses.withdraw(visitor);
        if let Some(superseded) = self.analysing.remove(visitor) {
            superseded.store(true, Ordering::Relaxed);
        }
    }

    /// Forgets a finished analysis unless a newer one replaced it.
    fn analysis_ended(&mut self, job: &Job) {
        if let Purpose::Analysis { superseded, .. } = &job.purpose
            && self
                .analysing
                .get(&job.visitor)
                .is_some_and(|latest| Arc::ptr_eq(latest, superseded))
        {
            self.analysing.remove(&job.visitor);
        }
    }
}

/// What the pool does with a finished search.
pub trait Outcome: Send + Sync + 'static {
    /// Whether the game or board still waits for this search (not taken back, resigned...).
    fn wanted(&self, job: &Job) -> bool;
    /// The engine chose `mv` for a game.
    fn played(&self, job: &Job, mv: &str);
    /// The engine's last line of each MultiPV rank for an analysis.
    fn analysed(&self, job: &Job, lines: Vec<Info>);
    /// The search failed on every engine it was tried on.
    fn failed(&self, job: &Job, why: &str);
}

struct Shared {
    queue: Mutex<Lanes>,
    work: Condvar,
    stop: AtomicBool,
    running: AtomicUsize,
    busy: AtomicUsize,
    metrics: Arc<Metrics>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a job was not queued.
#[derive(Debug, PartialEq, Eq)]
pub struct QueueFull;

/// The engine pool.
pub struct Pool {
    shared: Arc<Shared>,
    capacity: usize,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    /// Starts `engines` engine threads running `cmd args`; at most `capacity` searches wait.
    pub fn start(
        engines: usize,
        capacity: usize,
        cmd: &str,
        args: &[String],
        metrics: Arc<Metrics>,
        outcome: Arc<dyn Outcome>,
    ) -> Pool {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Lanes::default()),
            work: Condvar::new(),
            stop: AtomicBool::new(false),
            running: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
            metrics,
        });
        let workers = (0..engines)
            .map(|index| {
                let spec = EngineSpec {
                    name: format!("engine {index}"),
                    cmd: cmd.to_string(),
                    args: args.to_vec(),
                    options: vec![("Threads".into(), "1".into())],
                    limits: Limits::default(),
                };
                let shared = Arc::clone(&shared);
                let outcome = Arc::clone(&outcome);
                std::thread::spawn(move || work(&spec, &shared, outcome.as_ref()))
            })
            .collect();
        Pool {
            shared,
            capacity,
            workers: Mutex::new(workers),
        }
    }

    /// Queues a search for a move, unless `capacity` moves already wait;
    /// returns how many searches will be taken before it.
    pub fn submit(&self, job: Job) -> Result<usize, QueueFull> {
        if self.full() {
            return Err(QueueFull);
        }
        Ok(self.resume(job))
    }

    /// Queues an analysis behind every game move, in place of the
    /// visitor's previous one (withdrawn if it waits, stopped if it runs);
    /// returns how many searches will be taken before it.
    pub fn analyse(&self, job: Job) -> usize {
        let game = job.game.clone();
        let mut queue = lock(&self.shared.queue);
        queue.supersede(&job.visitor);
        if let Purpose::Analysis { superseded, .. } = &job.purpose {
            queue
                .analysing
                .insert(job.visitor.clone(), Arc::clone(superseded));
        }
        queue.push(job, false);
        self.shared.work.notify_one();
        queue.positions().get(&game).copied().unwrap_or(0)
    }

    /// Withdraws or stops the visitor's analysis, if any.
    pub fn stop_analysis(&self, visitor: &str) {
        lock(&self.shared.queue).supersede(visitor);
    }

    /// Queues a search whatever the queue holds (searches resumed at
    /// start-up or run again); returns how many searches will be taken
    /// before it.
    pub fn resume(&self, job: Job) -> usize {
        let game = job.game.clone();
        let mut queue = lock(&self.shared.queue);
        queue.push(job, false);
        self.shared.work.notify_one();
        queue.positions().get(&game).copied().unwrap_or(0)
    }

    /// Whether a new search for a move would be refused now (analyses
    /// are not counted: one at most waits for each visitor in memory).
    pub fn full(&self) -> bool {
        lock(&self.shared.queue).moves.len >= self.capacity
    }

    /// Searches for moves waiting, and analyses waiting.
    pub fn queue_lengths(&self) -> (usize, usize) {
        let queue = lock(&self.shared.queue);
        (queue.moves.len, queue.analyses.len)
    }

    /// Each waiting game's place in the queue (0: next).
    pub fn positions(&self) -> HashMap<String, usize> {
        lock(&self.shared.queue).positions()
    }

    /// Engines running, and those searching now.
    pub fn engines(&self) -> (usize, usize) {
        (
            self.shared.running.load(Ordering::Relaxed),
            self.shared.busy.load(Ordering::Relaxed),
        )
    }

    /// Stops every engine and waits until each process is ended and reaped.
    pub fn shut_down(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.work.notify_all();
        for worker in std::mem::take(&mut *lock(&self.workers)) {
            let _ = worker.join();
        }
    }
}

/// One engine's thread: start it, take searches, replace it when it fails.
fn work(spec: &EngineSpec, shared: &Shared, outcome: &dyn Outcome) {
    let timeouts = Timeouts::default();
    let mut engine: Option<EngineProcess> = None;
    // The engine's MultiPV, set only when a search needs another.
    let mut lines = 1;
    while !shared.stop.load(Ordering::SeqCst) {
        if engine.is_none() {
            match EngineProcess::start(spec, &timeouts, &shared.stop) {
                Ok(started) => {
                    shared.running.fetch_add(1, Ordering::Relaxed);
                    engine = Some(started);
                    lines = 1;
                }
                Err(error) => {
                    shared.metrics.error(ErrorKind::Engine);
                    log::error!("{}: cannot start: {error}", spec.name);
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
        }
        let Some(job) = next_job(shared) else { break };
        let _searching = Searching {
            shared,
            analysis: matches!(job.purpose, Purpose::Analysis { .. }),
        };
        if !outcome.wanted(&job) {
            lock(&shared.queue).analysis_ended(&job);
            continue;
        }
        let waited = job.queued.elapsed();
        match job.purpose {
            Purpose::Move => shared.metrics.queue_wait.observe(waited),
            Purpose::Analysis { .. } => shared.metrics.analysis_queue_wait.observe(waited),
        }
        let Some(process) = engine.as_mut() else {
            continue;
        };
        shared.busy.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = set_lines(process, &mut lines, job.lines())
            .and_then(|()| search(process, &job, &shared.stop));
        let spent = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        shared
            .metrics
            .engine_busy_micros
            .fetch_add(spent, Ordering::Relaxed);
        shared.busy.fetch_sub(1, Ordering::Relaxed);
        if result.is_ok() {
            lock(&shared.queue).analysis_ended(&job);
        }
        match result {
            Ok(found) => match job.purpose {
                Purpose::Move => outcome.played(&job, &found.best),
                Purpose::Analysis { .. } => {
                    shared.metrics.analyses.fetch_add(1, Ordering::Relaxed);
                    outcome.analysed(&job, found.lines);
                }
            },
            // Shutting down: the search is found again from the database at the next start.
            Err(Failure::Aborted) => break,
            Err(failure) => {
                shared.metrics.error(ErrorKind::Engine);
                log::warn!(
                    "{}: {failure:?} during a search for game {}; replaced",
                    spec.name,
                    job.game
                );
                engine = None;
                shared.running.fetch_sub(1, Ordering::Relaxed);
                let mut job = job;
                job.attempts += 1;
                if job.attempts >= ATTEMPTS {
                    lock(&shared.queue).analysis_ended(&job);
                    outcome.failed(&job, "the engine failed on this position three times");
                } else {
                    lock(&shared.queue).push(job, true);
                    shared.work.notify_one();
                }
            }
        }
    }
    if engine.take().is_some() {
        shared.running.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A search taken from the queue, until its engine is done with it.
struct Searching<'a> {
    shared: &'a Shared,
    analysis: bool,
}

impl Drop for Searching<'_> {
    fn drop(&mut self) {
        if self.analysis {
            let mut queue = lock(&self.shared.queue);
            queue.searching_analyses = queue.searching_analyses.saturating_sub(1);
        }
    }
}

fn next_job(shared: &Shared) -> Option<Job> {
    let mut queue = lock(&shared.queue);
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        if let Some(job) = queue.pop() {
            return Some(job);
        }
        queue = shared
            .work
            .wait_timeout(queue, Duration::from_millis(200))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Sets the engine's MultiPV to `wanted` unless it has it already.
fn set_lines(engine: &mut EngineProcess, lines: &mut usize, wanted: usize) -> Result<(), Failure> {
    if *lines != wanted {
        engine.send(&format!("setoption name MultiPV value {wanted}"))?;
        *lines = wanted;
    }
    Ok(())
}

/// What a search found: its move, and the last line of each MultiPV rank.
struct Found {
    best: String,
    lines: Vec<Info>,
}

/// Hears a search's lines until `bestmove`, or until its analysis is superseded.
struct Listener<'a> {
    job: &'a Job,
    best: Option<String>,
    lines: Vec<Info>,
    stopping: bool,
}

impl Listener<'_> {
    fn hear(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        if words.next() == Some("bestmove") {
            self.best = Some(words.next().unwrap_or_default().to_string());
            return true;
        }
        if let Some(info) = Info::parse(line).filter(|i| !i.pv.is_empty()) {
            let rank = usize::try_from(info.multipv.max(1)).unwrap_or(1);
            if rank <= self.job.lines() {
                self.lines
                    .retain(|l| l.multipv.max(1) != info.multipv.max(1));
                self.lines.push(info);
                self.lines.sort_by_key(|l| l.multipv);
            }
        }
        !self.stopping && self.job.superseded()
    }
}

/// Runs one search to its `bestmove`; a stalled engine or a superseded
/// analysis is stopped, and a stopped engine that does not answer is given up.
fn search(engine: &mut EngineProcess, job: &Job, stop: &AtomicBool) -> Result<Found, Failure> {
    engine.send(&job.position)?;
    engine.send(&job.go)?;
    let mut listener = Listener {
        job,
        best: None,
        lines: Vec::new(),
        stopping: false,
    };
    match engine.wait_for(job.budget + STOP_GRACE, stop, |l| listener.hear(l)) {
        Err(Failure::TimedOut) => {
            listener.stopping = true;
            engine.send("stop")?;
            engine.wait_for(STOP_GRACE, stop, |l| listener.hear(l))?;
            // Its move still counts: the budget is the server's, not a rule of the game.
            log::warn!("a search for game {} overran its budget", job.game);
        }
        Ok(()) if listener.best.is_none() => {
            listener.stopping = true;
            engine.send("stop")?;
            engine.wait_for(STOP_GRACE, stop, |l| listener.hear(l))?;
        }
        other => other?,
    }
    let best = listener.best.ok_or(Failure::Crashed)?;
    Ok(Found {
        best,
        lines: listener.lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(visitor: &str, game: &str) -> Job {
        Job::new(
            visitor,
            game,
            0,
            String::new(),
            String::new(),
            Duration::ZERO,
        )
    }

    #[test]
    fn one_visitor_cannot_starve_the_others() {
        let mut queue = FairQueue::default();
        for game in ["a1", "a2", "a3"] {
            queue.push(job("a", game), false);
        }
        queue.push(job("b", "b1"), false);
        queue.push(job("c", "c1"), false);
        let positions = queue.positions();
        assert_eq!(positions["a1"], 0);
        assert_eq!(positions["b1"], 1);
        assert_eq!(positions["c1"], 2);
        assert_eq!(positions["a2"], 3);
        let order: Vec<String> = std::iter::from_fn(|| queue.pop()).map(|j| j.game).collect();
        assert_eq!(order, ["a1", "b1", "c1", "a2", "a3"]);
        assert_eq!(queue.len, 0);
    }

    #[test]
    fn an_analysis_waits_for_game_moves_but_for_its_share() {
        let mut lanes = Lanes::default();
        for game in ["m1", "m2", "m3"] {
            lanes.push(job("a", game), false);
        }
        lanes.push(job("b", "fresh").analysis(3), false);
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("m1"));
        let mut old = job("c", "old").analysis(1);
        old.queued = Instant::now() - ANALYSIS_AGING;
        lanes.push(old, false);
        // The fresh analysis has its turn first and has not waited long enough.
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("m2"));
        lanes.analyses.withdraw("b");
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("old"));
        let mut older = job("d", "older").analysis(1);
        older.queued = Instant::now() - ANALYSIS_AGING;
        lanes.push(older, false);
        // One analysis at a time goes before game moves, never two in a row.
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("m3"));
        lanes.searching_analyses = 0;
        lanes.push(job("a", "m4"), false);
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("older"));
        assert_eq!(lanes.pop().map(|j| j.game).as_deref(), Some("m4"));
        assert!(lanes.pop().is_none());
    }

    #[test]
    fn a_retried_search_goes_first() {
        let mut queue = FairQueue::default();
        queue.push(job("a", "a1"), false);
        queue.push(job("b", "b1"), true);
        assert_eq!(queue.pop().map(|j| j.game).as_deref(), Some("b1"));
    }
}
