//! `agon match`: plays engines against each other on threads, referees every
//! game with the rules core, prints results and statistics, writes PGN and
//! JSON-lines records, and saves a state from which a stopped run resumes.

pub mod engine;
pub mod openings;
pub mod options;
pub mod record;
pub mod referee;

use crate::rules::Color;
use crate::tools::stats::{GameOutcome, SprtDecision, Tally, summary_lines};
use engine::{EngineProcess, StartError};
use openings::OpeningBook;
use options::{MatchConfig, PER_INVOCATION, Request};
use record::{GameRecord, RecordWriter, Verdict};
use referee::{GameSetup, play_game};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// Where game `number` sits in the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// 0-based round.
    pub round: u64,
    /// Index into [`MatchConfig::encounters`].
    pub encounter: usize,
    /// 0-based unit of the encounter over the whole run: a pair of games
    /// with `-repeat`, else one game.
    pub unit: u64,
    /// Whether the encounter's first engine has White.
    pub first_is_white: bool,
    /// 0-based opening number.
    pub opening: u64,
}

/// Places 0-based game `index` in the schedule: rounds, then encounters,
/// then the `-games` games of the encounter in that round.
///
/// As in cutechess-cli, the games of an encounter form one sequence over
/// all rounds: colours alternate from game to game, and with `-repeat`
/// each opening serves two consecutive games (a pair), so `-games 2
/// -rounds 3 -repeat` is 6 games from 3 openings.
pub fn slot(config: &MatchConfig, encounters: usize, index: u64) -> Slot {
    let per_round = config.games * encounters as u64;
    let round = index / per_round;
    let encounter = (index % per_round / config.games) as usize;
    let sequence = round * config.games + index % config.games;
    let unit = sequence / config.games_per_unit();
    Slot {
        round,
        encounter,
        unit,
        first_is_white: sequence.is_multiple_of(2),
        opening: unit,
    }
}

/// What is saved after every game to resume a run.
#[derive(Serialize, Deserialize)]
struct SavedState {
    /// The command line of the run, without per-invocation options.
    args: Vec<String>,
    /// The seed in force (chosen at the first start when none was given).
    seed: u64,
    /// Games 1..=written are in the record files.
    written: u64,
    /// Every finished game.
    games: Vec<GameRecord>,
}

fn load_state(path: &Path) -> Result<SavedState, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read state {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("state {} is damaged: {e}", path.display()))
}

fn save_state(path: &Path, state: &SavedState) -> Result<(), String> {
    // Write beside and rename, so that a stop in the middle never leaves half a state.
    let temporary = path.with_extension("tmp");
    let text = serde_json::to_string(state).map_err(|e| e.to_string())?;
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| format!("cannot write state {}: {e}", path.display()))
}

/// Runs `agon match` with the arguments after the subcommand.
pub fn run(args: &[String]) -> Result<(), String> {
    let config = match options::parse(args)? {
        Request::Help => {
            print!("{}", options::USAGE);
            return Ok(());
        }
        Request::Run(config) => *config,
    };
    let (config, saved) = match &config.resume {
        Some(path) => {
            let saved = load_state(path)?;
            let extra: Vec<String> = args.to_vec();
            let mut resumed_args = saved.args.clone();
            resumed_args.extend(strip_resume(&extra));
            let Request::Run(mut resumed) = options::parse(&resumed_args)? else {
                return Err(format!("state {} holds no match", path.display()));
            };
            if resumed.state_file.is_none() {
                resumed.state_file = Some(path.clone());
            }
            (*resumed, Some(saved))
        }
        None => (config, None),
    };
    let seed = saved
        .as_ref()
        .map(|s| s.seed)
        .or(config.seed)
        .or_else(|| options::openings_seed(args))
        .unwrap_or_else(clock_seed);
    let saved_args: Vec<String> = match &saved {
        Some(state) => state.args.clone(),
        None => without_per_invocation(args),
    };
    let finished: Vec<GameRecord> = saved.as_ref().map_or_else(Vec::new, |s| s.games.clone());
    let written = saved.as_ref().map_or(0, |s| s.written);
    Runner::new(config, seed, saved_args, finished, written)?.run()
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
            skipping = PER_INVOCATION.contains(&arg.as_str());
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
            skipping = arg == "-resume";
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

/// Hands out the games still to play, in schedule order.
struct Queue {
    next: u64,
    total: u64,
    done: BTreeSet<u64>,
    left_to_start: Option<u64>,
}

impl Queue {
    fn take(&mut self) -> Option<u64> {
        while self.next < self.total && self.done.contains(&self.next) {
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

/// Why the run ended early, if it did.
enum Halt {
    Complete,
    Decided(SprtDecision),
    EngineBroken(String),
    Interrupted,
    GameLimit,
}

impl Shared {
    /// Plays games from the queue with engines kept between games.
    fn worker(&self, queue: &Mutex<Queue>, results: &Sender<GameRecord>) {
        let mut engines: HashMap<usize, EngineProcess> = HashMap::new();
        let abort = &self.stop;
        loop {
            if abort.load(Ordering::SeqCst) {
                break;
            }
            let Some(index) = queue.lock().ok().and_then(|mut q| q.take()) else {
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
                    log::error!("{e}");
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
                    if results.send(record).is_err() {
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
    ) -> Result<Runner, String> {
        let book = OpeningBook::load(&config.openings, seed)?;
        let writer = RecordWriter::open(
            config.pgn_out.as_deref(),
            config.jsonl_out.as_deref(),
            written,
        )
        .map_err(|e| format!("cannot open the record files: {e}"))?;
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
                return Err(format!(
                    "the state holds game {} of no schedule slot",
                    record.game
                ));
            }
            if record.game > written {
                runner
                    .writer
                    .add(record.clone())
                    .map_err(|e| format!("cannot write records: {e}"))?;
            }
            runner.finished.insert(record.game - 1, record);
        }
        Ok(runner)
    }

    /// Starts each engine that is given options once, so that an option it
    /// refuses stops the run before any game instead of losing them all.
    /// Other start failures are left to the games, which record them.
    fn check_options(&self) -> Result<(), String> {
        let config = &self.shared.config;
        for spec in config
            .engines
            .iter()
            .filter(|spec| !spec.options.is_empty())
        {
            match EngineProcess::start(spec, &config.timeouts, &self.shared.stop) {
                Err(StartError::RefusedOption(message)) => return Err(message),
                Err(StartError::Failed(_)) | Ok(_) => {}
            }
        }
        Ok(())
    }

    fn run(mut self) -> Result<(), String> {
        self.check_options()?;
        let total = self.shared.config.total_games();
        let done: BTreeSet<u64> = self.finished.keys().copied().collect();
        if !self.finished.is_empty() {
            println!(
                "Resuming: {} of {total} games already played",
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
        let (sender, results) = channel::<GameRecord>();
        let threads = (self.shared.config.concurrency as u64).min(total.max(1));
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
        loop {
            if interrupted.load(Ordering::SeqCst) && !stop.load(Ordering::SeqCst) {
                halt = Halt::Interrupted;
                stop.store(true, Ordering::SeqCst);
            }
            let record = match results.recv_timeout(Duration::from_millis(100)) {
                Ok(record) => record,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            println!(
                "Finished game {} ({} vs {}): {} {{{}}}",
                record.game, record.white, record.black, record.result, record.reason
            );
            let broken = record.termination.breaks_engine();
            let loser = match record.verdict {
                Verdict::Win(Color::White) => record.black.clone(),
                _ => record.white.clone(),
            };
            self.finished.insert(record.game - 1, record.clone());
            self.writer
                .add(record)
                .map_err(|e| format!("cannot write records: {e}"))?;
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
            } else if let Some(decision) = self.sprt_decision() {
                halt = Halt::Decided(decision);
                stop.store(true, Ordering::SeqCst);
            }
        }
        for worker in workers {
            // A worker that panicked has lost only its own game, which is not recorded.
            let _ = worker.join();
        }
        if matches!(halt, Halt::Complete) && (self.finished.len() as u64) < total {
            halt = Halt::GameLimit;
        }
        if since_report > 0 || self.finished.is_empty() {
            self.print_statistics();
        }
        match &halt {
            Halt::Complete | Halt::Decided(_) => {
                self.writer
                    .flush_all()
                    .map_err(|e| format!("cannot write records: {e}"))?;
            }
            _ => {}
        }
        self.save()?;
        let resume_hint = match &self.shared.config.state_file {
            Some(path) => format!("; continue with -resume {}", path.display()),
            None => String::new(),
        };
        match halt {
            Halt::Complete => println!("Finished match"),
            Halt::Decided(decision) => println!(
                "SPRT decided: {}; finished match",
                match decision {
                    SprtDecision::H0Accepted => "H0 was accepted",
                    SprtDecision::H1Accepted => "H1 was accepted",
                }
            ),
            Halt::EngineBroken(name) => {
                println!("Stopped: engine {name} failed (use -recover to go on){resume_hint}")
            }
            Halt::Interrupted => println!("Interrupted{resume_hint}"),
            Halt::GameLimit => println!("Stopped after the -maxgames limit{resume_hint}"),
        }
        let _ = std::io::stdout().flush();
        Ok(())
    }

    fn save(&self) -> Result<(), String> {
        let Some(path) = &self.shared.config.state_file else {
            return Ok(());
        };
        save_state(
            path,
            &SavedState {
                args: self.args.clone(),
                seed: self.seed,
                written: self.writer.written(),
                games: self.finished.values().cloned().collect(),
            },
        )
    }

    /// The results of each encounter from its first engine's side, pairs kept together.
    fn tallies(&self) -> Vec<Tally> {
        let (config, encounters) = (&self.shared.config, &self.shared.encounters);
        let mut tallies = vec![Tally::new(); encounters.len()];
        let mut open_pairs: HashMap<(usize, u64), GameOutcome> = HashMap::new();
        for (&index, record) in &self.finished {
            let place = slot(config, encounters.len(), index);
            let first_color = if place.first_is_white {
                Color::White
            } else {
                Color::Black
            };
            let outcome = record.verdict.outcome_for(first_color);
            let tally = &mut tallies[place.encounter];
            if !config.repeat {
                tally.add_game(outcome);
                continue;
            }
            let key = (place.encounter, place.unit);
            match open_pairs.remove(&key) {
                Some(partner) => tally.add_pair(partner, outcome),
                None => {
                    open_pairs.insert(key, outcome);
                }
            }
        }
        for ((encounter, _), outcome) in open_pairs {
            tallies[encounter].add_game(outcome);
        }
        tallies
    }

    fn sprt_decision(&self) -> Option<SprtDecision> {
        let sprt = self.shared.config.sprt.as_ref()?;
        let tally = self.tallies().into_iter().next()?;
        // With pairs, a lone game waiting for its partner must not decide the test.
        if self.shared.config.repeat && tally.pairs() == 0 {
            return None;
        }
        sprt.status(&tally).decision
    }

    fn print_statistics(&self) {
        let tallies = self.tallies();
        let config = &self.shared.config;
        let encounters = &self.shared.encounters;
        for (&(first, second), tally) in encounters.iter().zip(&tallies) {
            if tally.games() == 0 && encounters.len() > 1 {
                continue;
            }
            let engines = &config.engines;
            println!(
                "Results of {} vs {} ({}, {}):",
                engines[first].name,
                engines[second].name,
                engines[first].limits.describe(),
                engines[second].limits.describe()
            );
            for line in summary_lines(tally, config.sprt.as_ref()) {
                println!("{line}");
            }
        }
        let _ = std::io::stdout().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> MatchConfig {
        let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        match options::parse(&args) {
            Ok(Request::Run(config)) => *config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pairs_share_an_opening_and_swap_colours() {
        let config = config("-engine cmd=a -engine cmd=b -each st=1 -games 4 -repeat -rounds 2");
        let places: Vec<Slot> = (0..config.total_games())
            .map(|i| slot(&config, 1, i))
            .collect();
        assert_eq!(places.len(), 8);
        assert_eq!(places[0].opening, places[1].opening);
        assert!(places[0].first_is_white && !places[1].first_is_white);
        assert_eq!(places[2].opening, 1);
        assert_eq!((places[4].round, places[4].opening), (1, 2));
    }

    #[test]
    fn games_rounds_and_repeat_count_as_in_cutechess() {
        for (text, games, openings) in [
            ("-rounds 100 -games 2 -repeat", 200, 100),
            ("-games 2 -rounds 3 -repeat", 6, 3),
            ("-games 100 -repeat", 100, 50),
            ("-games 100", 100, 100),
            ("-rounds 3", 3, 3),
        ] {
            let config = config(&format!("-engine cmd=a -engine cmd=b -each st=1 {text}"));
            assert_eq!(config.total_games(), games, "{text}");
            let used: BTreeSet<u64> = (0..games).map(|i| slot(&config, 1, i).opening).collect();
            assert_eq!(used.len() as u64, openings, "{text}");
        }
        // A pair may span two rounds when -games is odd, as in cutechess-cli.
        let odd = config("-engine cmd=a -engine cmd=b -each st=1 -games 1 -rounds 2 -repeat");
        let (first, second) = (slot(&odd, 1, 0), slot(&odd, 1, 1));
        assert_eq!((first.round, second.round), (0, 1));
        assert_eq!(first.opening, second.opening);
        assert!(first.first_is_white && !second.first_is_white);
    }

    #[test]
    fn single_games_alternate_colours_across_encounters() {
        let config = config("-engine cmd=a -engine cmd=b -engine cmd=c -each st=1 -games 2");
        let places: Vec<Slot> = (0..config.total_games())
            .map(|i| slot(&config, 3, i))
            .collect();
        let summary: Vec<(usize, bool)> = places
            .iter()
            .map(|p| (p.encounter, p.first_is_white))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, true),
                (0, false),
                (1, true),
                (1, false),
                (2, true),
                (2, false)
            ]
        );
    }

    #[test]
    fn per_invocation_options_are_not_saved() {
        let args: Vec<String> = "-engine cmd=a -maxgames 3 -games 4 -resume s.json"
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(
            without_per_invocation(&args),
            ["-engine", "cmd=a", "-games", "4"]
        );
    }
}
