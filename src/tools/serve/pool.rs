//! The engines of `agon serve`: a fixed number of engine processes, each on
//! its own thread, taking searches from one queue that is fair across
//! visitors (round robin: a visitor's second search waits until every other
//! visitor's first has been taken). A crashed or stalled engine is replaced
//! and its search run again.

use super::metrics::{ErrorKind, Metrics};
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

/// One engine search for a game's next move.
#[derive(Clone, Debug)]
pub struct Job {
    /// Whose game (the fairness key).
    pub visitor: String,
    /// Which game.
    pub game: String,
    /// The ply the move will be (so that a stale result is recognised).
    pub ply: usize,
    /// The `position ...` line.
    pub position: String,
    /// The `go ...` line.
    pub go: String,
    /// How long the search should take at most.
    pub budget: Duration,
    /// When it was queued.
    pub queued: Instant,
    attempts: u32,
}

impl Job {
    /// A search to queue now.
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
            attempts: 0,
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

/// What the pool does with a finished search.
pub trait Outcome: Send + Sync + 'static {
    /// Whether the game still waits for this search (not taken back, resigned...).
    fn wanted(&self, job: &Job) -> bool;
    /// The engine chose `mv`.
    fn played(&self, job: &Job, mv: &str);
    /// The search failed on every engine it was tried on.
    fn failed(&self, job: &Job, why: &str);
}

struct Shared {
    queue: Mutex<FairQueue>,
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
            queue: Mutex::new(FairQueue::default()),
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

    /// Queues a search, unless `capacity` searches already wait; returns
    /// how many searches will be taken before it.
    pub fn submit(&self, job: Job) -> Result<usize, QueueFull> {
        if lock(&self.shared.queue).len >= self.capacity {
            return Err(QueueFull);
        }
        Ok(self.resume(job))
    }

    /// Queues a search whatever the queue holds (searches resumed at
    /// start-up); returns how many searches will be taken before it.
    pub fn resume(&self, job: Job) -> usize {
        let game = job.game.clone();
        let mut queue = lock(&self.shared.queue);
        queue.push(job, false);
        self.shared.work.notify_one();
        queue.positions().get(&game).copied().unwrap_or(0)
    }

    /// Whether a new search would be refused now.
    pub fn full(&self) -> bool {
        lock(&self.shared.queue).len >= self.capacity
    }

    /// Searches waiting.
    pub fn queue_length(&self) -> usize {
        lock(&self.shared.queue).len
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
    while !shared.stop.load(Ordering::SeqCst) {
        if engine.is_none() {
            match EngineProcess::start(spec, &timeouts, &shared.stop) {
                Ok(started) => {
                    shared.running.fetch_add(1, Ordering::Relaxed);
                    engine = Some(started);
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
        if !outcome.wanted(&job) {
            continue;
        }
        shared.metrics.queue_wait.observe(job.queued.elapsed());
        let Some(process) = engine.as_mut() else {
            continue;
        };
        shared.busy.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = search(process, &job, &shared.stop);
        let spent = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        shared
            .metrics
            .engine_busy_micros
            .fetch_add(spent, Ordering::Relaxed);
        shared.busy.fetch_sub(1, Ordering::Relaxed);
        match result {
            Ok(mv) => outcome.played(&job, &mv),
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

/// Runs one search to its `bestmove`; a stalled engine is stopped, then given up.
fn search(engine: &mut EngineProcess, job: &Job, stop: &AtomicBool) -> Result<String, Failure> {
    engine.send(&job.position)?;
    engine.send(&job.go)?;
    let mut best = None;
    let mut hear = |line: &str| {
        let mut words = line.split_whitespace();
        if words.next() == Some("bestmove") {
            best = Some(words.next().unwrap_or_default().to_string());
            true
        } else {
            false
        }
    };
    match engine.wait_for(job.budget + STOP_GRACE, stop, &mut hear) {
        Err(Failure::TimedOut) => {
            engine.send("stop")?;
            engine.wait_for(STOP_GRACE, stop, &mut hear)?;
            // Its move still counts: the budget is the server's, not a rule of the game.
            log::warn!("a search for game {} overran its budget", job.game);
        }
        other => other?,
    }
    best.ok_or(Failure::Crashed)
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
    fn a_retried_search_goes_first() {
        let mut queue = FairQueue::default();
        queue.push(job("a", "a1"), false);
        queue.push(job("b", "b1"), true);
        assert_eq!(queue.pop().map(|j| j.game).as_deref(), Some("b1"));
    }
}
