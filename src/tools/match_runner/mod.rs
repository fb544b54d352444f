//! `agon match`: plays engines against each other on threads, referees every
//! game with the rules core, prints results and statistics, writes PGN and
//! JSON-lines records, saves a state from which a stopped run resumes, and
//! plays one shard of a run split over many machines.

pub mod draws;
pub mod engine;
pub mod error;
pub(crate) mod journal;
pub mod merge;
pub mod openings;
pub mod options;
pub mod record;
pub mod referee;
pub mod schedule;
pub mod state;

use crate::rules::Color;
use crate::tools::run_lock::RunLock;
use crate::tools::shard::Shard;
use crate::tools::stats::{SprtDecision, Tally};
use engine::{EngineProcess, StartError};
use error::MatchError;
use journal::{Journal, with_pending};
use openings::OpeningBook;
use options::{MatchConfig, Request, Resume, UsageError};
use record::{GameRecord, Verdict};
use referee::{GameSetup, play_game};
use schedule::{is_own_game, slot, statistics_lines};
use state::SavedState;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a shard of an SPRT run waits before it reads another shard's
/// state again: reading costs, and a decision can wait a second.
const SHARD_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// What a shard of an SPRT run last read of another shard's state.
struct OtherShard {
    /// The state file's modification time when read.
    modified: Option<std::time::SystemTime>,
    /// When it was read.
    read_at: Instant,
    /// Its games, tallied for the test's encounter.
    tally: Tally,
}

/// How long a worker whose engine died waits for an interrupt before it
/// reports the game: a scheduler stopping a job signals every process of
/// it, and an engine killed a moment before the runner sees the signal
/// must not lose its game.
const INTERRUPT_GRACE: Duration = Duration::from_millis(300);

/// Prints a line of the run's progress. A standard output that has gone
/// away (a pager or a `tee` that quit) must not end a run whose records go
/// to files, so write errors are ignored.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Runs `agon match` with the arguments after the subcommand.
pub fn run(args: &[String]) -> Result<(), MatchError> {
    // From the start: a SIGTERM must never kill a run outright.
    interrupted();
    let config = match options::parse(args)? {
        Request::Help => {
            say!("{}", options::usage().trim_end());
            return Ok(());
        }
        Request::Run(config) => *config,
    };
    let (mut config, saved) = match &config.resume {
        Some(Resume::From(path)) => {
            let saved = SavedState::load(path)?;
            let given = strip_resume(args);
            let changed = options::without_per_invocation(&given);
            if !changed.is_empty() {
                return Err(UsageError(format!(
                    "-resume {} continues the run with the command line saved in it; \
                     only -maxgames, -concurrency and -shard may be given again, not {}",
                    path.display(),
                    changed.join(" ")
                ))
                .into());
            }
            let mut resumed_args = saved.args.clone();
            resumed_args.extend(given);
            let Request::Run(mut resumed) = options::parse(&resumed_args)? else {
                return Err(MatchError::content(path, "the state holds no match"));
            };
            resumed.shard = saved.shard(path)?;
            (*resumed, Some(saved))
        }
        Some(Resume::Auto) | None => (config, None),
    };
    name_shard_files(&mut config);
    if let (None, Some(Resume::From(path))) = (&config.state_file, &config.resume) {
        config.state_file = Some(path.clone());
    }
    check_shard_setup(&config)?;
    let _run_lock = match &config.state_file {
        Some(path) => Some(
            RunLock::take(path)
                .map_err(|e| MatchError::content(path, format!("this match: {e}")))?,
        ),
        None => None,
    };
    let saved = match (saved, &config.resume) {
        // Read again under the lock: a process that held it until now may
        // have saved more games.
        (Some(_), Some(Resume::From(path))) => Some(SavedState::load(path)?),
        (Some(saved), _) => Some(saved),
        (None, _) => existing_state(&config, args)?,
    };
    if saved.is_none() {
        check_fresh_start(&config)?;
    }
    let saved_args: Vec<String> = match &saved {
        Some(state) => state.args.clone(),
        None => options::without_per_invocation(args),
    };
    let seed = saved
        .as_ref()
        .map(|s| s.seed)
        .or(config.seed)
        .or_else(|| options::openings_seed(args))
        .unwrap_or_else(|| {
            // Every shard of a run must draw the same openings: without a
            // seed they share one made from their common command line.
            if config.shard.is_whole() {
                clock_seed()
            } else {
                command_line_seed(&saved_args)
            }
        });
    Runner::new(config, seed, saved_args, saved)?.run()
}

/// The state to continue when the command line names a `-state` file that
/// exists: with `-resume auto` the run continues (it must be the run of
/// this very command line and shard); without `-resume` it is refused, so
/// that a rerun never starts over on top of the records of the first.
fn existing_state(config: &MatchConfig, args: &[String]) -> Result<Option<SavedState>, MatchError> {
    let auto = config.resume == Some(Resume::Auto);
    let Some(path) = &config.state_file else {
        if auto {
            return Err(
                UsageError::from("-resume auto needs -state: it continues that file").into(),
            );
        }
        return Ok(None);
    };
    if !path.exists() {
        return Ok(None);
    }
    if !auto {
        let records: String = [&config.jsonl_out, &config.pgn_out]
            .into_iter()
            .flatten()
            .map(|file| format!(" and {}", file.display()))
            .collect();
        return Err(UsageError(format!(
            "{} holds the state of a run started before: continue it with -resume auto \
             (or -resume {}), or remove it{records} to start over",
            path.display(),
            path.display()
        ))
        .into());
    }
    let saved = SavedState::load(path)?;
    if saved.args != options::without_per_invocation(args) || saved.shard(path)? != config.shard {
        return Err(MatchError::content(
            path,
            "the state of another run (its command line or shard differs from this one's)",
        ));
    }
    Ok(Some(saved))
}

/// Refuses to start a run with a state over record files that already
/// hold records: the state could not tell them from the run's own.
fn check_fresh_start(config: &MatchConfig) -> Result<(), MatchError> {
    let Some(state) = &config.state_file else {
        return Ok(());
    };
    for file in [&config.jsonl_out, &config.pgn_out].into_iter().flatten() {
        if std::fs::metadata(file).is_ok_and(|m| m.len() > 0) {
            return Err(UsageError(format!(
                "{} already holds records, but there is no state {} to continue: \
                 remove it or name other files to start a run",
                file.display(),
                state.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Gives a shard's record and state files the shard in their names.
fn name_shard_files(config: &mut MatchConfig) {
    let shard = config.shard;
    for path in [
        &mut config.pgn_out,
        &mut config.jsonl_out,
        &mut config.state_file,
    ]
    .into_iter()
    .flatten()
    {
        *path = shard.file_name(path);
    }
}

/// Refuses shard runs that could not be merged into one run's result.
fn check_shard_setup(config: &MatchConfig) -> Result<(), MatchError> {
    if !config.shard.is_whole() && config.sprt.is_some() && config.state_file.is_none() {
        return Err(options::UsageError::from(
            "-sprt with -shard needs -state on a file system all shards share: \
             each shard reads the others' states to stop once the merged test is decided",
        )
        .into());
    }
    Ok(())
}

/// A seed made from a command line (FNV-1a), the same in every process.
fn command_line_seed(args: &[String]) -> u64 {
    args.iter()
        .flat_map(|arg| arg.bytes().chain([0]))
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The arguments given with `-resume` besides it (such as `-maxgames`).
fn strip_resume(args: &[String]) -> Vec<String> {
    options::without_options(args, |name| name == "-resume" || name == "-shard")
}

/// Set by Ctrl-C; shared by every run in the process.
fn interrupted() -> &'static Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let handler_flag = Arc::clone(&flag);
        if let Err(e) = ctrlc::set_handler(move || handler_flag.store(true, Ordering::SeqCst)) {
            log::warn!("cannot catch Ctrl-C: {e}");
        }
        flag
    })
}

/// Hands out this shard's games still to play, in schedule order.
struct Queue {
    next: u64,
    total: u64,
    done: BTreeSet<u64>,
    left_to_start: Option<u64>,
}

impl Queue {
    fn take(&mut self, shared: &Shared) -> Option<u64> {
        let encounters = shared.encounters.len();
        while self.next < self.total
            && (self.done.contains(&self.next)
                || !is_own_game(&shared.config, encounters, self.next))
        {
            self.next += 1;
        }
        if self.next >= self.total || self.left_to_start == Some(0) {
            return None;
        }
        if let Some(left) = &mut self.left_to_start {
            *left -= 1;
        }
        self.next += 1;
        Some(self.next - 1)
    }
}

/// What a worker thread reports.
enum Report {
    /// A game was played.
    Game(Box<GameRecord>),
    /// The worker could not go on.
    Failed(String),
}

/// What the worker threads share.
struct Shared {
    config: MatchConfig,
    book: OpeningBook,
    encounters: Vec<(usize, usize)>,
    /// Set to stop handing out games and to abandon those in progress.
    stop: AtomicBool,
}

struct Runner {
    shared: Arc<Shared>,
    seed: u64,
    args: Vec<String>,
    journal: Journal,
}

/// Why the run ended, with what the last line says.
enum Halt {
    Complete,
    Decided(SprtDecision),
    DecidedAcrossShards(SprtDecision, u64),
    EngineBroken(String),
    WorkerFailed(String),
    Interrupted,
    GameLimit,
}

impl Shared {
    /// Plays games from the queue with engines kept between games.
    fn worker(&self, queue: &Mutex<Queue>, results: &SyncSender<Report>) {
        let mut engines: HashMap<usize, EngineProcess> = HashMap::new();
        let abort = &self.stop;
        loop {
            if abort.load(Ordering::SeqCst) {
                break;
            }
            let Some(index) = queue.lock().ok().and_then(|mut q| q.take(self)) else {
                break;
            };
            let place = slot(&self.config, self.encounters.len(), index);
            let (first, second) = self.encounters[place.encounter];
            let (white_index, black_index) = if place.first_is_white {
                (first, second)
            } else {
                (second, first)
            };
            let opening = match self.book.opening(place.opening) {
                Ok(opening) => opening,
                Err(e) => {
                    let _ = results.send(Report::Failed(format!(
                        "no opening for game {}: {e}",
                        index + 1
                    )));
                    abort.store(true, Ordering::SeqCst);
                    break;
                }
            };
            let setup = GameSetup {
                number: index + 1,
                round: place.round + 1,
                opening: &opening,
                white: &self.config.engines[white_index],
                black: &self.config.engines[black_index],
                timeouts: &self.config.timeouts,
                time_margin: self.config.time_margin,
                max_moves: self.config.max_moves,
                abort,
            };
            let mut white = engines.remove(&white_index);
            let mut black = engines.remove(&black_index);
            let record = play_game(&setup, &mut white, &mut black);
            engines.extend(white.map(|e| (white_index, e)));
            engines.extend(black.map(|e| (black_index, e)));
            match record {
                Some(record) if record.termination.breaks_engine() && interrupt_follows() => break,
                Some(record) => {
                    if results.send(Report::Game(Box::new(record))).is_err() {
                        break;
                    }
                }
                None => break,
            }
        }
    }
}

/// Whether the run is interrupted within [`INTERRUPT_GRACE`].
fn interrupt_follows() -> bool {
    let deadline = Instant::now() + INTERRUPT_GRACE;
    while Instant::now() < deadline {
        if interrupted().load(Ordering::SeqCst) {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    interrupted().load(Ordering::SeqCst)
}

impl Runner {
    /// Checks the engines, then opens the records and the state (so that a
    /// run refused at its start leaves no state behind).
    fn new(
        config: MatchConfig,
        seed: u64,
        args: Vec<String>,
        saved: Option<SavedState>,
    ) -> Result<Runner, MatchError> {
        let book = OpeningBook::load(&config.openings, seed).map_err(MatchError::Openings)?;
        let shared = Shared {
            encounters: config.encounters(),
            config,
            book,
            stop: AtomicBool::new(false),
        };
        shared.check_engines()?;
        let journal = Journal::open(&shared.config, args.clone(), seed, saved)?;
        Ok(Runner {
            shared: Arc::new(shared),
            seed,
            args,
            journal,
        })
    }
}

impl Shared {
    /// Starts each engine once before any game, so that an engine that
    /// does not run or answer, or refuses an option, stops the run at once
    /// instead of losing every game.
    fn check_engines(&self) -> Result<(), MatchError> {
        let config = &self.config;
        let mut checked = BTreeSet::new();
        for spec in &config.engines {
            if !checked.insert((&spec.cmd, &spec.args, &spec.options)) {
                continue;
            }
            match EngineProcess::start(spec, &config.timeouts, &self.stop) {
                Ok(_) => {}
                Err(StartError::RefusedOption(message)) => return Err(MatchError::Engine(message)),
                Err(StartError::Failed(message)) => {
                    return Err(MatchError::Engine(format!(
                        "engine {} cannot be started: {message}",
                        spec.name
                    )));
                }
            }
        }
        Ok(())
    }
}

impl Runner {
    /// Games of the schedule this process plays.
    fn own_total(&self) -> u64 {
        let config = &self.shared.config;
        let total = config.total_games();
        if config.shard.is_whole() {
            return total;
        }
        let encounters = self.shared.encounters.len();
        (0..total)
            .filter(|&index| is_own_game(config, encounters, index))
            .count() as u64
    }

    /// The SPRT's decision on the games played so far, if it has one: on
    /// this run's games, or for a shard on the games of every shard (a
    /// shard never decides on its own).
    fn decided(
        &self,
        other_shards: &mut HashMap<u64, OtherShard>,
    ) -> Result<Option<Halt>, MatchError> {
        if self.shared.config.shard.is_whole() {
            return Ok(self.sprt_decision(&self.own_tally()).map(Halt::Decided));
        }
        if self.shared.config.sprt.is_none() {
            return Ok(None);
        }
        let merged = self.merged_tally(other_shards)?;
        Ok(self
            .sprt_decision(&merged)
            .map(|decision| Halt::DecidedAcrossShards(decision, merged.games())))
    }

    fn run(mut self) -> Result<(), MatchError> {
        let total = self.shared.config.total_games();
        let shard = self.shared.config.shard;
        let own_total = self.own_total();
        if !shard.is_whole() {
            say!("Shard {shard}: {own_total} of the {total} games of the run");
        }
        let played_before = self.journal.played();
        if played_before > 0 {
            say!("Resuming: {played_before} of {own_total} games already played");
        }
        let queue = Arc::new(Mutex::new(Queue {
            next: self.journal.first_unfinished(),
            total,
            done: self.journal.finished_out_of_order(),
            left_to_start: self.shared.config.max_games,
        }));
        let mut other_shards: HashMap<u64, OtherShard> = HashMap::new();
        // A run resumed after its test was decided plays no more games: one
        // more could move the decision it already announced.
        let decided_before = if played_before > 0 {
            self.decided(&mut other_shards)?
        } else {
            None
        };
        let mut halt = Halt::Complete;
        if let Some(decided) = decided_before {
            halt = decided;
            self.shared.stop.store(true, Ordering::SeqCst);
        }
        let interrupted = Arc::clone(interrupted());
        let threads = (self.shared.config.concurrency as u64).min(own_total.max(1));
        // Bounded: a worker waits until its last game is recorded, so that
        // no worker plays on far beyond a decided test or a failure.
        let (sender, results) = sync_channel::<Report>(0);
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let sender = sender.clone();
                let queue = Arc::clone(&queue);
                let shared = Arc::clone(&self.shared);
                thread::spawn(move || shared.worker(&queue, &sender))
            })
            .collect();
        drop(sender);
        let stop = &self.shared.stop;
        let mut since_report = 0;
        let mut failure = None;
        loop {
            if interrupted.load(Ordering::SeqCst) && !stop.load(Ordering::SeqCst) {
                halt = Halt::Interrupted;
                stop.store(true, Ordering::SeqCst);
            }
            let record = match results.recv_timeout(Duration::from_millis(100)) {
                Ok(Report::Game(record)) => *record,
                Ok(Report::Failed(message)) => {
                    if matches!(halt, Halt::Complete) {
                        halt = Halt::WorkerFailed(message);
                    }
                    stop.store(true, Ordering::SeqCst);
                    continue;
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            say!(
                "Finished game {} ({} vs {}): {} {{{}}}",
                record.game,
                record.white,
                record.black,
                record.result.code(),
                record.reason
            );
            let broken = record.termination.breaks_engine();
            let loser = match record.result {
                Verdict::Win(Color::White) => record.black.clone(),
                _ => record.white.clone(),
            };
            if let Err(e) = self.journal.add(&self.shared.config, record) {
                failure = Some(e);
                break;
            }
            since_report += 1;
            if since_report >= self.shared.config.rating_interval {
                since_report = 0;
                self.print_statistics();
            }
            if !matches!(halt, Halt::Complete) {
                continue;
            }
            if broken && !self.shared.config.recover {
                halt = Halt::EngineBroken(loser);
                stop.store(true, Ordering::SeqCst);
            } else {
                match self.decided(&mut other_shards) {
                    Ok(Some(decided)) => {
                        halt = decided;
                        stop.store(true, Ordering::SeqCst);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
        }
        // After a failure too: the workers stop, and their engines with them.
        stop.store(true, Ordering::SeqCst);
        drop(results);
        for worker in workers {
            // A worker that panicked has lost only its own game, which is not recorded.
            let _ = worker.join();
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let played = self.journal.played();
        if matches!(halt, Halt::Complete)
            && played < own_total
            && interrupted.load(Ordering::SeqCst)
        {
            // The workers saw the interrupt first and stopped.
            halt = Halt::Interrupted;
        }
        if matches!(halt, Halt::Complete) && played < own_total {
            let limit_reached = queue.lock().is_ok_and(|q| q.left_to_start == Some(0));
            halt = if limit_reached {
                Halt::GameLimit
            } else {
                Halt::WorkerFailed(format!(
                    "only {played} of {own_total} games were played (see the log above)"
                ))
            };
        }
        // Also when this invocation played nothing (a resumed run that was
        // already complete): the run's statistics come before its last line.
        if since_report > 0 || played == played_before {
            self.print_statistics();
        }
        if matches!(
            halt,
            Halt::Complete | Halt::Decided(_) | Halt::DecidedAcrossShards(..)
        ) {
            self.journal.finish(&self.shared.config)?;
        }
        let resume_hint = match &self.shared.config.state_file {
            Some(path) => format!("; continue with -resume {}", path.display()),
            None => String::new(),
        };
        let what = if shard.is_whole() {
            "match".to_string()
        } else {
            format!("shard {shard}")
        };
        let outcome = match halt {
            Halt::Complete => {
                say!("Finished {what}: {played} games");
                Ok(())
            }
            Halt::Decided(decision) => {
                say!("SPRT decided: {}; finished {what}", decision_text(decision));
                Ok(())
            }
            Halt::DecidedAcrossShards(decision, games) => {
                say!(
                    "SPRT decided on the games of all shards ({games} games): {}; finished {what}",
                    decision_text(decision)
                );
                Ok(())
            }
            Halt::EngineBroken(name) => {
                say!("Stopped: engine {name} failed (use -recover to go on){resume_hint}");
                Err(MatchError::Engine(format!(
                    "engine {name} failed after {played} games"
                )))
            }
            Halt::WorkerFailed(message) => {
                say!("Stopped: {message}{resume_hint}");
                Err(MatchError::Stopped(message))
            }
            Halt::Interrupted => {
                say!("Interrupted after {played} of {own_total} games{resume_hint}");
                Err(MatchError::Stopped("interrupted".into()))
            }
            Halt::GameLimit => {
                say!(
                    "Stopped after the -maxgames limit: {played} of {own_total} games played{resume_hint}"
                );
                Ok(())
            }
        };
        let _ = std::io::stdout().flush();
        outcome
    }

    /// The test's encounter tallied over this process's games.
    fn own_tally(&self) -> Tally {
        let config = &self.shared.config;
        self.journal.standing(config).first_tally(config)
    }

    /// This shard's tally merged with those of the games the other shards
    /// have saved so far (a shard without a state yet adds none). Pairs never
    /// span shards, so the merged tally is that of all the games together.
    /// Another shard's state is read again only when it changed, at most
    /// once per [`SHARD_CHECK_INTERVAL`].
    fn merged_tally(&self, others: &mut HashMap<u64, OtherShard>) -> Result<Tally, MatchError> {
        let config = &self.shared.config;
        let mut merged = self.own_tally();
        let Some(own_path) = &config.state_file else {
            return Ok(merged);
        };
        let shard = config.shard;
        for number in (1..=shard.count()).filter(|&n| n != shard.number()) {
            let path = sibling_state(own_path, shard, number);
            let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
            let known = others.get(&number);
            let stale = known.is_none_or(|other| {
                other.modified != modified && other.read_at.elapsed() >= SHARD_CHECK_INTERVAL
            });
            let loaded = if stale && path.exists() {
                match SavedState::load(&path) {
                    Ok(other) => Some(other),
                    Err(e) => {
                        // A shared file system may fail a read while the
                        // other shard replaces its state: its last tally
                        // stands until the next look.
                        log::warn!("cannot read shard {number}'s state now: {e}");
                        None
                    }
                }
            } else {
                None
            };
            if let Some(other) = loaded {
                if other.args != self.args || other.seed != self.seed {
                    return Err(MatchError::content(
                        &path,
                        "the state of another match, not of a shard of this one",
                    ));
                }
                let tally =
                    with_pending(config, &other.standing, &other.pending).first_tally(config);
                others.insert(
                    number,
                    OtherShard {
                        modified,
                        read_at: Instant::now(),
                        tally,
                    },
                );
            }
            if let Some(other) = others.get(&number) {
                merged.merge(&other.tally);
            }
        }
        Ok(merged)
    }

    fn sprt_decision(&self, tally: &Tally) -> Option<SprtDecision> {
        let config = &self.shared.config;
        let sprt = config.sprt.as_ref()?;
        // With pairs, a lone game waiting for its partner must not decide the test.
        if config.repeat && tally.pairs() == 0 {
            return None;
        }
        sprt.status(tally).decision
    }

    fn print_statistics(&self) {
        let config = &self.shared.config;
        for line in statistics_lines(config, &self.journal.standing(config)) {
            say!("{line}");
        }
        let _ = std::io::stdout().flush();
    }
}

/// The state file of shard `number` of the run whose shard `shard` writes `own`.
fn sibling_state(own: &std::path::Path, shard: Shard, number: u64) -> std::path::PathBuf {
    let own_suffix = format!(".shard-{}-of-{}", shard.number(), shard.count());
    let name = own
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sibling = name.replacen(
        &own_suffix,
        &format!(".shard-{number}-of-{}", shard.count()),
        1,
    );
    own.with_file_name(sibling)
}

fn decision_text(decision: SprtDecision) -> &'static str {
    match decision {
        SprtDecision::H0Accepted => "H0 was accepted",
        SprtDecision::H1Accepted => "H1 was accepted",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_invocation_options_are_not_saved() {
        let args: Vec<String> =
            "-engine cmd=a -maxgames 3 -games 4 -resume s.json -concurrency 2 -shard 1/2"
                .split_whitespace()
                .map(str::to_string)
                .collect();
        assert_eq!(
            options::without_per_invocation(&args),
            ["-engine", "cmd=a", "-games", "4"]
        );
    }

    #[test]
    fn shards_find_each_others_states() {
        let shard = Shard::new(2, 3).unwrap();
        let own = shard.file_name(std::path::Path::new("runs/sprt.json"));
        assert_eq!(
            sibling_state(&own, shard, 3),
            std::path::Path::new("runs/sprt.shard-3-of-3.json")
        );
    }
}
