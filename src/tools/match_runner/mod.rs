//! `agon match`: plays engines against each other on threads, referees every
//! game with the rules core, prints results and statistics, writes PGN and
//! JSON-lines records, saves a state from which a stopped run resumes, and
//! plays one shard of a run split over many machines.

pub mod engine;
pub mod error;
pub mod merge;
pub mod openings;
pub mod options;
pub mod record;
pub mod referee;
pub(crate) mod schedule;
pub mod state;

use crate::rules::Color;
use crate::tools::shard::Shard;
use crate::tools::stats::{SprtDecision, Tally};
use engine::{EngineProcess, StartError};
use error::MatchError;
use openings::OpeningBook;
use options::{MatchConfig, Request};
use record::{GameRecord, RecordWriter, Verdict};
use referee::{GameSetup, play_game};
use schedule::{is_own_game, slot, statistics_lines, tallies};
use state::SavedState;
use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// Runs `agon match` with the arguments after the subcommand.
pub fn run(args: &[String]) -> Result<(), MatchError> {
    let config = match options::parse(args)? {
        Request::Help => {
            print!("{}", options::usage());
            return Ok(());
        }
        Request::Run(config) => *config,
    };
    let (mut config, saved) = match &config.resume {
        Some(path) => {
            let saved = SavedState::load(path)?;
            let mut resumed_args = saved.args.clone();
            resumed_args.extend(strip_resume(args));
            let Request::Run(mut resumed) = options::parse(&resumed_args)? else {
                return Err(MatchError::content(path, "the state holds no match"));
            };
            resumed.shard = saved.shard(path)?;
            (*resumed, Some(saved))
        }
        None => (config, None),
    };
    name_shard_files(&mut config);
    if let (None, Some(path)) = (&config.state_file, &config.resume) {
        config.state_file = Some(path.clone());
    }
    check_shard_setup(&config)?;
    let saved_args: Vec<String> = match &saved {
        Some(state) => state.args.clone(),
        None => without_per_invocation(args),
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
    let finished: Vec<GameRecord> = saved.as_ref().map_or_else(Vec::new, |s| s.games.clone());
    let written = saved.as_ref().map_or(0, |s| s.written);
    Runner::new(config, seed, saved_args, finished, written)?.run()
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

/// The arguments minus options that must not follow the run into its state.
fn without_per_invocation(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skipping = false;
    for arg in args {
        if arg.starts_with('-') {
            skipping = options::is_per_invocation(arg);
        }
        if !skipping {
            kept.push(arg.clone());
        }
    }
    kept
}

/// The arguments given with `-resume` besides it (such as `-maxgames`).
fn strip_resume(args: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skipping = false;
    for arg in args {
        if arg.starts_with('-') {
            skipping = arg == "-resume" || arg == "-shard";
        }
        if !skipping {
            kept.push(arg.clone());
        }
    }
    kept
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
    /// Finished games by 0-based index.
    finished: BTreeMap<u64, GameRecord>,
    writer: RecordWriter,
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

impl Runner {
    fn new(
        config: MatchConfig,
        seed: u64,
        args: Vec<String>,
        games: Vec<GameRecord>,
        written: u64,
    ) -> Result<Runner, MatchError> {
        let book = OpeningBook::load(&config.openings, seed).map_err(MatchError::Openings)?;
        let writer = RecordWriter::open(
            config.pgn_out.as_deref(),
            config.jsonl_out.as_deref(),
            written,
        )?;
        let total = config.total_games();
        let mut runner = Runner {
            shared: Arc::new(Shared {
                encounters: config.encounters(),
                config,
                book,
                stop: AtomicBool::new(false),
            }),
            seed,
            args,
            finished: BTreeMap::new(),
            writer,
        };
        for record in games {
            if record.game == 0 || record.game > total {
                return Err(MatchError::Stopped(format!(
                    "the state holds game {} of no schedule slot",
                    record.game
                )));
            }
            if record.game > written {
                runner.writer.add(record.clone())?;
            }
            runner.finished.insert(record.game - 1, record);
        }
        Ok(runner)
    }

    /// Starts each engine once before any game, so that an engine that
    /// does not run or answer, or refuses an option, stops the run at once
    /// instead of losing every game.
    fn check_engines(&self) -> Result<(), MatchError> {
        let config = &self.shared.config;
        let mut checked = BTreeSet::new();
        for spec in &config.engines {
            if !checked.insert((&spec.cmd, &spec.args, &spec.options)) {
                continue;
            }
            match EngineProcess::start(spec, &config.timeouts, &self.shared.stop) {
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

    fn run(mut self) -> Result<(), MatchError> {
        self.check_engines()?;
        let total = self.shared.config.total_games();
        let shard = self.shared.config.shard;
        let own_total = self.own_total();
        let done: BTreeSet<u64> = self.finished.keys().copied().collect();
        if !shard.is_whole() {
            println!("Shard {shard}: {own_total} of the {total} games of the run");
        }
        if !self.finished.is_empty() {
            println!(
                "Resuming: {} of {own_total} games already played",
                self.finished.len()
            );
        }
        let queue = Arc::new(Mutex::new(Queue {
            next: 0,
            total,
            done,
            left_to_start: self.shared.config.max_games,
        }));
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
        let mut halt = Halt::Complete;
        let mut since_report = 0;
        let mut other_shards: HashMap<u64, OtherShard> = HashMap::new();
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
            println!(
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
            self.finished.insert(record.game - 1, record.clone());
            self.writer.add(record)?;
            self.save()?;
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
            } else if shard.is_whole() {
                if let Some(decision) = self.sprt_decision(&self.own_tally()) {
                    halt = Halt::Decided(decision);
                    stop.store(true, Ordering::SeqCst);
                }
            } else if self.shared.config.sprt.is_some() {
                // A shard decides on the games of every shard, never on its own.
                let merged = self.merged_tally(&mut other_shards)?;
                if let Some(decision) = self.sprt_decision(&merged) {
                    halt = Halt::DecidedAcrossShards(decision, merged.games());
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
        for worker in workers {
            // A worker that panicked has lost only its own game, which is not recorded.
            let _ = worker.join();
        }
        let played = self.finished.len() as u64;
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
        if since_report > 0 || self.finished.is_empty() {
            self.print_statistics();
        }
        if matches!(
            halt,
            Halt::Complete | Halt::Decided(_) | Halt::DecidedAcrossShards(..)
        ) {
            self.writer.flush_all()?;
        }
        self.save()?;
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
                println!("Finished {what}: {played} games");
                Ok(())
            }
            Halt::Decided(decision) => {
                println!("SPRT decided: {}; finished {what}", decision_text(decision));
                Ok(())
            }
            Halt::DecidedAcrossShards(decision, games) => {
                println!(
                    "SPRT decided on the games of all shards ({games} games): {}; finished {what}",
                    decision_text(decision)
                );
                Ok(())
            }
            Halt::EngineBroken(name) => {
                println!("Stopped: engine {name} failed (use -recover to go on){resume_hint}");
                Err(MatchError::Engine(format!(
                    "engine {name} failed after {played} games"
                )))
            }
            Halt::WorkerFailed(message) => {
                println!("Stopped: {message}{resume_hint}");
                Err(MatchError::Stopped(message))
            }
            Halt::Interrupted => {
                println!("Interrupted after {played} of {own_total} games{resume_hint}");
                Err(MatchError::Stopped("interrupted".into()))
            }
            Halt::GameLimit => {
                println!(
                    "Stopped after the -maxgames limit: {played} of {own_total} games played{resume_hint}"
                );
                Ok(())
            }
        };
        let _ = std::io::stdout().flush();
        outcome
    }

    fn save(&self) -> Result<(), MatchError> {
        let Some(path) = &self.shared.config.state_file else {
            return Ok(());
        };
        self.state().save(path)
    }

    fn state(&self) -> SavedState {
        let shard = self.shared.config.shard;
        SavedState {
            args: self.args.clone(),
            seed: self.seed,
            shard: (!shard.is_whole()).then(|| (shard.number(), shard.count())),
            written: self.writer.written(),
            games: self.finished.values().cloned().collect(),
        }
    }

    /// The test's encounter tallied over this process's games.
    fn own_tally(&self) -> Tally {
        let config = &self.shared.config;
        tallies(config, &self.finished)
            .into_iter()
            .next()
            .unwrap_or_default()
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
            if stale && path.exists() {
                let other = SavedState::load(&path)?;
                if other.args != self.args || other.seed != self.seed {
                    return Err(MatchError::content(
                        &path,
                        "the state of another match, not of a shard of this one",
                    ));
                }
                let games = other
                    .games
                    .into_iter()
                    .filter(|g| g.game > 0)
                    .map(|g| (g.game - 1, g))
                    .collect();
                let tally = tallies(config, &games)
                    .into_iter()
                    .next()
                    .unwrap_or_default();
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
        for line in statistics_lines(config, &tallies(config, &self.finished)) {
            println!("{line}");
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
        let args: Vec<String> = "-engine cmd=a -maxgames 3 -games 4 -resume s.json -shard 1/2"
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(
            without_per_invocation(&args),
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
