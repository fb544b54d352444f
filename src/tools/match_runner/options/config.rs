//! The settings of a match as its command line gives them: engines and
//! their limits, the schedule, openings, outputs and timeouts.

use crate::tools::shard::Shard;
use crate::tools::stats::SprtConfig;
use std::path::PathBuf;
use std::time::Duration;

/// The longest time any clock, move time, margin or timeout may be: far
/// beyond any real game, and far from where time arithmetic overflows.
pub const MAX_TIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// The most games played at once.
pub const MAX_CONCURRENCY: usize = 1024;

/// The longest opening, in plies (a game of Agon is rarely half as long).
pub const MAX_OPENING_PLIES: usize = 1000;

/// How a side's thinking time is limited (by default not at all, which an
/// engine spec refuses).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    /// The clock, if any.
    pub clock: Option<ClockControl>,
    /// Fixed time per move.
    pub movetime: Option<Duration>,
    /// Depth limit.
    pub depth: Option<u32>,
    /// Node limit.
    pub nodes: Option<u64>,
}

/// A clock: `moves` per period (or the whole game), `base` per period, plus `increment` per move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockControl {
    /// Moves per period; `None` for the whole game.
    pub moves: Option<u32>,
    /// Time per period.
    pub base: Duration,
    /// Time added after every move.
    pub increment: Duration,
}

impl Limits {
    /// The PGN `TimeControl` value for these limits.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(clock) = self.clock {
            let moves = clock.moves.map(|m| format!("{m}/")).unwrap_or_default();
            let increment = if clock.increment.is_zero() {
                String::new()
            } else {
                format!("+{}", seconds(clock.increment))
            };
            parts.push(format!("{moves}{}{increment}", seconds(clock.base)));
        }
        if let Some(movetime) = self.movetime {
            parts.push(format!("{}/move", seconds(movetime)));
        }
        if let Some(depth) = self.depth {
            parts.push(format!("depth {depth}"));
        }
        if let Some(nodes) = self.nodes {
            parts.push(format!("nodes {nodes}"));
        }
        if parts.is_empty() {
            "-".to_string()
        } else {
            parts.join(", ")
        }
    }
}

fn seconds(duration: Duration) -> String {
    let text = format!("{:.3}", duration.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One engine taking part.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    /// Name used in output and records.
    pub name: String,
    /// Program to run.
    pub cmd: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Options sent with `setoption`, in order.
    pub options: Vec<(String, String)>,
    /// Its thinking limits.
    pub limits: Limits,
}

/// Who plays whom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tournament {
    /// The first engine against each of the others.
    Gauntlet,
    /// Every engine against every other.
    #[default]
    RoundRobin,
}

/// How openings are laid out in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpeningFormat {
    /// One FEN per line.
    Fen,
    /// One line of moves from the start position per line.
    Moves,
}

/// Where the games start.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum OpeningSource {
    /// Every game from the start position.
    #[default]
    StartPosition,
    /// Openings read from a file.
    File {
        /// The file.
        path: PathBuf,
        /// Its line format.
        format: OpeningFormat,
        /// Shuffle (with the seed) instead of reading in order.
        random_order: bool,
        /// Cut move openings to this many plies.
        plies: Option<usize>,
        /// 1-based index of the first opening used.
        start: usize,
    },
    /// Openings of this many random legal plies from the start position.
    Random {
        /// Plies per opening.
        plies: usize,
    },
}

/// How long to wait for an engine before calling it broken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeouts {
    /// From start to `uciok`.
    pub startup: Duration,
    /// From `isready` to `readyok`.
    pub ready: Duration,
    /// For a `bestmove` when no clock bounds the search (depth or node limits).
    pub stall: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            startup: Duration::from_secs(10),
            ready: Duration::from_secs(5),
            stall: Duration::from_secs(60),
        }
    }
}

/// Everything `agon match` was asked to do.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchConfig {
    /// The engines, in the order given.
    pub engines: Vec<EngineSpec>,
    /// Games per encounter and round.
    pub games: u64,
    /// Rounds.
    pub rounds: u64,
    /// Each opening is played twice, colours swapped.
    pub repeat: bool,
    /// Games at once.
    pub concurrency: usize,
    /// Pairing scheme.
    pub tournament: Tournament,
    /// Where games start.
    pub openings: OpeningSource,
    /// Sequential test that may end the run early.
    pub sprt: Option<SprtConfig>,
    /// Draw adjudication after this many full moves.
    pub max_moves: Option<u32>,
    /// PGN output file.
    pub pgn_out: Option<PathBuf>,
    /// JSON-lines output file.
    pub jsonl_out: Option<PathBuf>,
    /// State file rewritten after every game.
    pub state_file: Option<PathBuf>,
    /// Whether and whence to continue a saved run.
    pub resume: Option<Resume>,
    /// Stop after this many games in this invocation.
    pub max_games: Option<u64>,
    /// Restart failed engines and go on.
    pub recover: bool,
    /// Seed for openings; chosen from the clock when absent.
    pub seed: Option<u64>,
    /// Grace before a time forfeit.
    pub time_margin: Duration,
    /// Engine timeouts.
    pub timeouts: Timeouts,
    /// Statistics every this many games.
    pub rating_interval: u64,
    /// The part of the schedule this process plays.
    pub shard: Shard,
}

/// How a run given `-resume` continues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// From the `-state` file when it exists; a fresh start otherwise.
    Auto,
    /// From this state file, which must exist.
    From(PathBuf),
}

impl Default for MatchConfig {
    /// The settings of an option that is not given (`--help` shows them).
    fn default() -> MatchConfig {
        MatchConfig {
            engines: Vec::new(),
            games: 1,
            rounds: 1,
            repeat: false,
            concurrency: 1,
            tournament: Tournament::default(),
            openings: OpeningSource::default(),
            sprt: None,
            max_moves: None,
            pgn_out: None,
            jsonl_out: None,
            state_file: None,
            resume: None,
            max_games: None,
            recover: false,
            seed: None,
            time_margin: Duration::from_millis(100),
            timeouts: Timeouts::default(),
            rating_interval: 10,
            shard: Shard::WHOLE,
        }
    }
}

impl MatchConfig {
    /// The encounters of one round, as pairs of engine indices (first, second).
    pub fn encounters(&self) -> Vec<(usize, usize)> {
        let count = self.engines.len();
        match self.tournament {
            Tournament::Gauntlet => (1..count).map(|other| (0, other)).collect(),
            Tournament::RoundRobin => (0..count)
                .flat_map(|a| (a + 1..count).map(move |b| (a, b)))
                .collect(),
        }
    }

    /// Games in one unit: a pair with `repeat`, else one.
    pub fn games_per_unit(&self) -> u64 {
        if self.repeat { 2 } else { 1 }
    }

    /// Games of the whole run: rounds times encounters times `-games`, as
    /// cutechess-cli and fastchess count them (`-repeat` pairs games, it
    /// does not add any); `None` beyond `u64`.
    pub fn checked_total_games(&self) -> Option<u64> {
        self.rounds
            .checked_mul(self.encounters().len() as u64)?
            .checked_mul(self.games)
    }

    /// Games of the whole run (checked when the command line was read).
    pub fn total_games(&self) -> u64 {
        self.checked_total_games().unwrap_or(u64::MAX)
    }
}

/// What the command line asked for.
#[derive(Debug, PartialEq)]
pub enum Request {
    /// Print the usage.
    Help,
    /// Run (or resume) a match.
    Run(Box<MatchConfig>),
}
