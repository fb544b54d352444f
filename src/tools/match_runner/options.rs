//! The `agon match` command line, in the option vocabulary of cutechess-cli
//! and fastchess: `-engine cmd=... name=... tc=...`, `-each`, `-games`, ...
//! Every option and engine key is one row of a table, from which parsing,
//! the defaults shown and `--help` all come.

use crate::tools::shard::Shard;
use crate::tools::stats::{SprtConfig, SprtModel};
use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// The longest time any clock, move time, margin or timeout may be: far
/// beyond any real game, and far from where time arithmetic overflows.
pub const MAX_TIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// The most games played at once.
pub const MAX_CONCURRENCY: usize = 1024;

/// The longest opening, in plies (a game of Agon is rarely half as long).
pub const MAX_OPENING_PLIES: usize = 1000;

/// A command line that cannot be run, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<String> for UsageError {
    fn from(message: String) -> UsageError {
        UsageError(message)
    }
}

impl From<&str> for UsageError {
    fn from(message: &str) -> UsageError {
        UsageError(message.to_string())
    }
}

type Parsed<T> = Result<T, UsageError>;

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

/// What a match option's values go into while the command line is read.
#[derive(Default)]
struct Reading<'a> {
    config: MatchConfig,
    engines: Vec<Vec<(&'a str, &'a str)>>,
    each: Vec<(&'a str, &'a str)>,
}

/// One match option: its name, how its values look and what they mean,
/// the default it shows (read from [`MatchConfig::default`]) and what it does.
struct MatchOption {
    name: &'static str,
    values: &'static str,
    help: &'static str,
    default: fn(&MatchConfig) -> Option<String>,
    /// Given per invocation only, never saved with a run's state.
    per_invocation: bool,
    apply: for<'a> fn(&mut Reading<'a>, &str, &[&'a str]) -> Parsed<()>,
}

fn no_default(_: &MatchConfig) -> Option<String> {
    None
}

fn millis(duration: Duration) -> String {
    duration.as_millis().to_string()
}

/// Every option of `agon match`, in the order `--help` lists them.
const MATCH_OPTIONS: &[MatchOption] = &[
    MatchOption {
        name: "-engine",
        values: "cmd=<path> [KEY=VALUE...]",
        help: "an engine taking part (at least two; keys below)",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.engines.push(key_values(name, values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-each",
        values: "KEY=VALUE...",
        help: "keys for every engine (an -engine's own keys win)",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.each.extend(key_values(name, values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-games",
        values: "N",
        help: "games per encounter and round",
        default: |c| Some(c.games.to_string()),
        per_invocation: false,
        apply: |r, name, values| {
            r.config.games = ranged(name, single(name, values)?, 1..=u64::MAX)?;
            Ok(())
        },
    },
    MatchOption {
        name: "-rounds",
        values: "N",
        help: "rounds; the run is rounds x encounters x games games,\n\
               as in cutechess-cli and fastchess",
        default: |c| Some(c.rounds.to_string()),
        per_invocation: false,
        apply: |r, name, values| {
            r.config.rounds = ranged(name, single(name, values)?, 1..=u64::MAX)?;
            Ok(())
        },
    },
    MatchOption {
        name: "-repeat",
        values: "",
        help: "play each opening twice with colours swapped: consecutive\n\
               games of an encounter form a pair (adds no games)",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            flag(name, values)?;
            r.config.repeat = true;
            Ok(())
        },
    },
    MatchOption {
        name: "-concurrency",
        values: "N",
        help: "games played at once",
        default: |c| Some(c.concurrency.to_string()),
        per_invocation: false,
        apply: |r, name, values| {
            r.config.concurrency = ranged(name, single(name, values)?, 1..=MAX_CONCURRENCY)?;
            Ok(())
        },
    },
    MatchOption {
        name: "-tournament",
        values: "gauntlet|roundrobin",
        help: "gauntlet: the first engine against each other",
        default: |c| {
            Some(match c.tournament {
                Tournament::Gauntlet => "gauntlet".into(),
                Tournament::RoundRobin => "roundrobin".into(),
            })
        },
        per_invocation: false,
        apply: |r, name, values| {
            r.config.tournament = match single(name, values)? {
                "gauntlet" => Tournament::Gauntlet,
                "roundrobin" | "round-robin" => Tournament::RoundRobin,
                other => {
                    return Err(format!("{name}: '{other}' is not gauntlet or roundrobin").into());
                }
            };
            Ok(())
        },
    },
    MatchOption {
        name: "-openings",
        values: "file=<path> format=fen|moves [order=sequential|random] [plies=N] [start=N]\n\
                 | random plies=N [seed=S]",
        help: "openings from a file, or of N random legal plies from the start",
        default: no_default,
        per_invocation: false,
        apply: |r, _, values| {
            r.config.openings = parse_openings(values)?;
            Ok(())
        },
    },
    MatchOption {
        name: "-sprt",
        values: "elo0=E0 elo1=E1 [alpha=A] [beta=B] [model=normalized|logistic]",
        help: "stop once the test is decided (two engines only;\n\
               alpha and beta 0.05 unless given)",
        default: no_default,
        per_invocation: false,
        apply: |r, _, values| {
            r.config.sprt = Some(parse_sprt(values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-maxmoves",
        values: "N",
        help: "adjudicate a draw after N full moves",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.config.max_moves = Some(ranged(name, single(name, values)?, 1..=u32::MAX)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-pgnout",
        values: "<file>",
        help: "append a PGN record of every game",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.config.pgn_out = Some(path_value(name, values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-jsonl",
        values: "<file>",
        help: "append a JSON line for every game",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.config.jsonl_out = Some(path_value(name, values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-state",
        values: "<file>",
        help: "write a resumable state after every game",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.config.state_file = Some(path_value(name, values)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-resume",
        values: "<file>|auto",
        help: "continue the run saved in a state file; auto: continue\n\
               the -state file if it exists, else start it (for a\n\
               scheduler that reruns the same command)",
        default: no_default,
        per_invocation: true,
        apply: |r, name, values| {
            let value = single(name, values)?;
            r.config.resume = Some(if value == "auto" {
                Resume::Auto
            } else {
                Resume::From(path_value(name, values)?)
            });
            Ok(())
        },
    },
    MatchOption {
        name: "-maxgames",
        values: "N",
        help: "stop after N more games of this run (resume later)",
        default: no_default,
        per_invocation: true,
        apply: |r, name, values| {
            r.config.max_games = Some(ranged(name, single(name, values)?, 1..=u64::MAX)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-recover",
        values: "",
        help: "restart a crashed or hung engine and go on",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            flag(name, values)?;
            r.config.recover = true;
            Ok(())
        },
    },
    MatchOption {
        name: "-seed",
        values: "S",
        help: "seed for opening order and random openings",
        default: no_default,
        per_invocation: false,
        apply: |r, name, values| {
            r.config.seed = Some(ranged(name, single(name, values)?, 0..=u64::MAX)?);
            Ok(())
        },
    },
    MatchOption {
        name: "-timemargin",
        values: "MS",
        help: "grace before a time forfeit, milliseconds",
        default: |c| Some(millis(c.time_margin)),
        per_invocation: false,
        apply: |r, name, values| {
            r.config.time_margin = milliseconds(name, single(name, values)?, 0)?;
            Ok(())
        },
    },
    MatchOption {
        name: "-timeout",
        values: "[startup=MS] [ready=MS] [stall=MS]",
        help: "wait for uciok, for readyok, and for a bestmove without a\n\
               clock (depth/nodes)",
        default: |c| {
            let t = &c.timeouts;
            Some(format!(
                "{} {} {}",
                millis(t.startup),
                millis(t.ready),
                millis(t.stall)
            ))
        },
        per_invocation: false,
        apply: |r, name, values| {
            for (key, value) in key_values(name, values)? {
                let wait = milliseconds(&format!("{name} {key}"), value, 1)?;
                match key {
                    "startup" => r.config.timeouts.startup = wait,
                    "ready" => r.config.timeouts.ready = wait,
                    "stall" => r.config.timeouts.stall = wait,
                    _ => return Err(format!("{name}: unknown key '{key}'").into()),
                }
            }
            Ok(())
        },
    },
    MatchOption {
        name: "-shard",
        values: "K/N|auto/N|auto",
        help: "play part K of N of the schedule: every Nth pair (or game),\n\
               same openings and colours as in one run; auto/N takes K\n\
               from a Slurm array task id (1 to N), a Kubernetes Indexed\n\
               Job or AGON_SHARD_INDEX (from 0), and survives a rerun;\n\
               auto takes K and N from a whole Slurm job array; files get\n\
               .shard-K-of-N in their names; agon stats merges the shards",
        default: no_default,
        per_invocation: true,
        apply: |r, name, values| {
            let text = single(name, values)?;
            r.config.shard = Shard::parse(text).map_err(|e| format!("{name}: {e}"))?;
            Ok(())
        },
    },
    MatchOption {
        name: "-ratinginterval",
        values: "N",
        help: "print the statistics every N games",
        default: |c| Some(c.rating_interval.to_string()),
        per_invocation: false,
        apply: |r, name, values| {
            r.config.rating_interval = ranged(name, single(name, values)?, 1..=u64::MAX)?;
            Ok(())
        },
    },
];

/// What an engine key's value goes into.
struct EngineReading {
    cmd: Option<String>,
    name: Option<String>,
    args: Vec<String>,
    options: Vec<(String, String)>,
    limits: Limits,
    infinite: bool,
}

/// One key of `-engine` and `-each`; a key ending in `.` is a prefix.
struct EngineKey {
    key: &'static str,
    head: &'static str,
    help: &'static str,
    apply: fn(&mut EngineReading, &str, &str) -> Parsed<()>,
}

impl EngineKey {
    fn matches(&self, key: &str) -> bool {
        match self.key.strip_suffix('.') {
            Some(_) => key.starts_with(self.key),
            None => key == self.key,
        }
    }
}

/// Every engine key, in the order `--help` lists them.
const ENGINE_KEYS: &[EngineKey] = &[
    EngineKey {
        key: "cmd",
        head: "cmd=<path>",
        help: "program to run (required)",
        apply: |e, _, value| {
            e.cmd = Some(value.to_string());
            Ok(())
        },
    },
    EngineKey {
        key: "args",
        head: "args=\"<a b c>\"",
        help: "arguments, split on spaces",
        apply: |e, _, value| {
            e.args = value.split_whitespace().map(str::to_string).collect();
            Ok(())
        },
    },
    EngineKey {
        key: "name",
        head: "name=<name>",
        help: "name in results and records (default: cmd)",
        apply: |e, _, value| {
            e.name = Some(value.to_string());
            Ok(())
        },
    },
    EngineKey {
        key: "option.",
        head: "option.<Name>=<v>",
        help: "sent as 'setoption name <Name> value <v>'; quote it when the\n\
               name has spaces; an option the engine refuses ('info string\n\
               error') stops the run",
        apply: |e, key, value| match key.strip_prefix("option.") {
            Some(option) if !option.is_empty() => {
                e.options.push((option.to_string(), value.to_string()));
                Ok(())
            }
            _ => Err("engine key 'option.' needs an option name: option.<Name>=<v>".into()),
        },
    },
    EngineKey {
        key: "tc",
        head: "tc=<[moves/]base[+inc]>|inf",
        help: "clock in seconds, e.g. tc=40/60+0.6, tc=10+0.1, tc=1:30+1",
        apply: |e, _, value| {
            e.limits.clock = parse_clock(value)?;
            e.infinite = e.limits.clock.is_none();
            Ok(())
        },
    },
    EngineKey {
        key: "st",
        head: "st=<seconds>",
        help: "fixed time per move ('go movetime')",
        apply: |e, _, value| {
            e.limits.movetime = Some(seconds_value("st", value)?);
            Ok(())
        },
    },
    EngineKey {
        key: "depth",
        head: "depth=<plies>",
        help: "depth limit ('go depth')",
        apply: |e, _, value| {
            e.limits.depth = Some(ranged("depth", value, 1..=u32::MAX)?);
            Ok(())
        },
    },
    EngineKey {
        key: "nodes",
        head: "nodes=<count>",
        help: "node limit ('go nodes')",
        apply: |e, _, value| {
            e.limits.nodes = Some(ranged("nodes", value, 1..=u64::MAX)?);
            Ok(())
        },
    },
];

/// The usage text printed by `agon match --help`, made from the tables.
pub fn usage() -> String {
    let mut text = String::from(
        "Usage: agon match -engine cmd=<path> [KEY=VALUE...] -engine cmd=<path> [...] [OPTIONS]\n\n\
         Plays engines that speak the agon protocol against each other, with the\n\
         rules core as referee.\n\n\
         Engine keys (for -engine, or for every engine with -each):\n",
    );
    for key in ENGINE_KEYS {
        push_entry(&mut text, key.head, key.help, None);
    }
    text.push_str("\nOptions ([default]):\n");
    let defaults = MatchConfig::default();
    for option in MATCH_OPTIONS {
        let head = format!("{} {}", option.name, option.values);
        push_entry(
            &mut text,
            head.trim_end(),
            option.help,
            (option.default)(&defaults),
        );
    }
    push_entry(&mut text, "--help", "print this text", None);
    text
}

/// One entry of the usage: the head, then the help beside it or below it.
fn push_entry(text: &mut String, head: &str, help: &str, default: Option<String>) {
    const COLUMN: usize = 24;
    let mut help = help.to_string();
    if let Some(default) = default {
        help.push_str(&format!(" [{default}]"));
    }
    let mut head_lines = head.lines();
    let first = head_lines.next().unwrap_or_default();
    text.push_str(&format!("  {first}"));
    for line in head_lines {
        text.push_str(&format!("\n    {line}"));
    }
    let last_length = 2 + head.lines().last().map_or(0, str::len) + 2;
    let mut help_lines = help.lines();
    if head.lines().count() == 1 && last_length <= COLUMN {
        let padding = COLUMN - (2 + first.len());
        text.push_str(&" ".repeat(padding));
        text.push_str(help_lines.next().unwrap_or_default());
    }
    text.push('\n');
    for line in help_lines {
        text.push_str(&format!("{:COLUMN$}{line}\n", ""));
    }
}

/// Whether `name` is an option given per invocation, not saved with a state.
pub fn is_per_invocation(name: &str) -> bool {
    MATCH_OPTIONS
        .iter()
        .any(|option| option.per_invocation && option.name == name)
}

/// Splits the arguments into option groups: a `-name` and the values after it.
fn groups(args: &[String]) -> Parsed<Vec<(&str, Vec<&str>)>> {
    let mut result: Vec<(&str, Vec<&str>)> = Vec::new();
    for arg in args {
        if arg.starts_with('-') && !arg.starts_with("--") || arg == "--help" {
            result.push((arg.as_str(), Vec::new()));
        } else if arg.starts_with("--") {
            // fastchess and cutechess accept a single dash only; say so rather than guess.
            return Err(format!("unknown option '{arg}' (options start with one dash)").into());
        } else if let Some((_, values)) = result.last_mut() {
            values.push(arg.as_str());
        } else {
            return Err(format!("'{arg}' does not follow an option").into());
        }
    }
    Ok(result)
}

/// Parses the arguments that follow `agon match`.
pub fn parse(args: &[String]) -> Parsed<Request> {
    let groups = groups(args)?;
    if groups
        .iter()
        .any(|(name, _)| matches!(*name, "--help" | "-help" | "-h"))
    {
        return Ok(Request::Help);
    }
    let mut reading = Reading::default();
    for (name, values) in &groups {
        let option = MATCH_OPTIONS
            .iter()
            .find(|option| option.name == *name)
            .ok_or_else(|| format!("unknown option '{name}' (see agon match --help)"))?;
        (option.apply)(&mut reading, name, values)?;
    }
    let Reading {
        mut config,
        engines,
        each,
    } = reading;
    if matches!(config.resume, Some(Resume::From(_))) {
        // The engines and the schedule come from the state file.
        return Ok(Request::Run(Box::new(config)));
    }
    for keys in &engines {
        let mut merged = each.clone();
        merged.extend(keys.iter().copied());
        config.engines.push(engine_spec(&merged)?);
    }
    if config.engines.len() < 2 {
        return Err("a match needs at least two -engine options".into());
    }
    if config.sprt.is_some() && config.engines.len() != 2 {
        return Err("-sprt needs exactly two engines".into());
    }
    if config.checked_total_games().is_none() {
        return Err(format!(
            "-rounds {} x {} encounters x -games {} is more games than can be counted",
            config.rounds,
            config.encounters().len(),
            config.games
        )
        .into());
    }
    Ok(Request::Run(Box::new(config)))
}

fn flag(name: &str, values: &[&str]) -> Parsed<()> {
    if values.is_empty() {
        Ok(())
    } else {
        Err(format!("{name} takes no value, got '{}'", values.join(" ")).into())
    }
}

fn single<'a>(name: &str, values: &[&'a str]) -> Parsed<&'a str> {
    match values {
        [value] => Ok(value),
        [] => Err(format!("{name} needs a value").into()),
        _ => Err(format!("{name} takes one value, got '{}'", values.join(" ")).into()),
    }
}

fn path_value(name: &str, values: &[&str]) -> Parsed<PathBuf> {
    let path = single(name, values)?;
    if path.is_empty() {
        return Err(format!("{name} needs a file name").into());
    }
    Ok(PathBuf::from(path))
}

/// A whole number of type `T` within `range`, or a message saying which one was wanted.
fn ranged<T>(name: &str, text: &str, range: RangeInclusive<T>) -> Parsed<T>
where
    T: FromStr + PartialOrd + fmt::Display,
{
    match text.parse::<T>() {
        Ok(value) if range.contains(&value) => Ok(value),
        Ok(value) if value < *range.start() => {
            Err(format!("{name} must be at least {}, got {text}", range.start()).into())
        }
        _ => Err(format!(
            "{name}: '{text}' is not a whole number from {} to {}",
            range.start(),
            range.end()
        )
        .into()),
    }
}

/// Milliseconds from `least` up to [`MAX_TIME`].
fn milliseconds(name: &str, text: &str, least: u64) -> Parsed<Duration> {
    let most = MAX_TIME.as_millis() as u64;
    ranged(name, text, least..=most).map(Duration::from_millis)
}

fn key_values<'a>(name: &str, values: &[&'a str]) -> Parsed<Vec<(&'a str, &'a str)>> {
    values
        .iter()
        .map(|item| {
            item.split_once('=')
                .ok_or_else(|| format!("{name}: expected KEY=VALUE, got '{item}'").into())
        })
        .collect()
}

/// Seconds (a decimal number) from 0 up to [`MAX_TIME`].
fn seconds_value(key: &str, text: &str) -> Parsed<Duration> {
    let out_of_range = || {
        UsageError(format!(
            "{key}: '{text}' is not a number of seconds from 0 to {}",
            MAX_TIME.as_secs()
        ))
    };
    let value: f64 = text.parse().map_err(|_| out_of_range())?;
    match Duration::try_from_secs_f64(value) {
        Ok(duration) if duration <= MAX_TIME => Ok(duration),
        _ => Err(out_of_range()),
    }
}

/// Parses a clock such as `40/60+0.6`, `10+0.1`, `1:30+1` or `inf` (no clock).
fn parse_clock(text: &str) -> Parsed<Option<ClockControl>> {
    if text == "inf" || text == "infinite" {
        return Ok(None);
    }
    let (moves, rest) = match text.split_once('/') {
        Some((moves, rest)) => (Some(ranged("tc moves", moves, 1..=u32::MAX)?), rest),
        None => (None, text),
    };
    let (base, increment) = match rest.split_once('+') {
        Some((base, increment)) => (base, seconds_value("tc increment", increment)?),
        None => (rest, Duration::ZERO),
    };
    let base = match base.split_once(':') {
        Some((minutes, secs)) => {
            let minutes = ranged("tc minutes", minutes, 0..=MAX_TIME.as_secs() / 60)?;
            Duration::from_secs(60 * minutes)
                .checked_add(seconds_value("tc seconds", secs)?)
                .filter(|base| *base <= MAX_TIME)
                .ok_or_else(|| format!("tc={text}: the base time is over {MAX_TIME:?}"))?
        }
        None => seconds_value("tc", base)?,
    };
    if base.is_zero() && increment.is_zero() {
        return Err(format!("tc={text} gives no time at all").into());
    }
    Ok(Some(ClockControl {
        moves,
        base,
        increment,
    }))
}

fn engine_spec(keys: &[(&str, &str)]) -> Parsed<EngineSpec> {
    let mut reading = EngineReading {
        cmd: None,
        name: None,
        args: Vec::new(),
        options: Vec::new(),
        limits: Limits::default(),
        infinite: false,
    };
    for &(key, value) in keys {
        let spec = ENGINE_KEYS
            .iter()
            .find(|spec| spec.matches(key))
            .ok_or_else(|| format!("unknown engine key '{key}' (see agon match --help)"))?;
        (spec.apply)(&mut reading, key, value)?;
    }
    let EngineReading {
        cmd,
        name,
        args,
        options,
        limits,
        infinite,
    } = reading;
    let cmd = cmd.ok_or("every -engine needs cmd=<path>")?;
    if cmd.is_empty() {
        return Err("cmd= needs a program".into());
    }
    let name = name.unwrap_or_else(|| cmd.clone());
    if limits.clock.is_some() && limits.movetime.is_some() {
        return Err(format!("engine {name}: give tc= or st=, not both").into());
    }
    if limits == Limits::default() {
        return Err(if infinite {
            format!("engine {name}: tc=inf needs depth= or nodes= to end a search")
        } else {
            format!("engine {name}: needs tc=, st=, depth= or nodes=")
        }
        .into());
    }
    Ok(EngineSpec {
        name,
        cmd,
        args,
        options,
        limits,
    })
}

fn parse_openings(values: &[&str]) -> Parsed<OpeningSource> {
    let mut path = None;
    let mut format = OpeningFormat::Fen;
    let mut random_order = false;
    let mut plies = None;
    let mut start = 1;
    let mut generated = false;
    for value in values {
        if *value == "random" {
            generated = true;
            continue;
        }
        let (key, text) = value
            .split_once('=')
            .ok_or_else(|| format!("-openings: expected KEY=VALUE or 'random', got '{value}'"))?;
        match key {
            "file" => path = Some(PathBuf::from(text)),
            "format" => {
                format = match text {
                    "fen" | "epd" => OpeningFormat::Fen,
                    "moves" => OpeningFormat::Moves,
                    _ => {
                        return Err(
                            format!("-openings: format '{text}' is not fen or moves").into()
                        );
                    }
                }
            }
            "order" => {
                random_order = match text {
                    "random" => true,
                    "sequential" => false,
                    _ => {
                        return Err(format!(
                            "-openings: order '{text}' is not random or sequential"
                        )
                        .into());
                    }
                }
            }
            "plies" => plies = Some(ranged("plies", text, 0..=MAX_OPENING_PLIES)?),
            "start" => start = ranged("start", text, 1..=usize::MAX)?,
            // Accepted for the generated openings; the run's -seed does the same job.
            "seed" => {
                ranged("seed", text, 0..=u64::MAX)?;
            }
            _ => return Err(format!("-openings: unknown key '{key}'").into()),
        }
    }
    match (generated, path) {
        (true, Some(_)) => Err("-openings: give file= or random, not both".into()),
        (true, None) => Ok(OpeningSource::Random {
            plies: plies.ok_or("-openings random needs plies=N")?,
        }),
        (false, Some(path)) => Ok(OpeningSource::File {
            path,
            format,
            random_order,
            plies,
            start,
        }),
        (false, None) => Err("-openings needs file=<path> or random".into()),
    }
}

/// The seed given inside `-openings random seed=S`, which stands in for `-seed`.
pub fn openings_seed(args: &[String]) -> Option<u64> {
    let groups = groups(args).ok()?;
    groups
        .iter()
        .filter(|(name, _)| *name == "-openings")
        .flat_map(|(_, values)| values.iter())
        .find_map(|value| value.strip_prefix("seed=")?.parse().ok())
}

fn parse_sprt(values: &[&str]) -> Parsed<SprtConfig> {
    let mut numbers = [None; 4];
    let mut model = SprtModel::Normalized;
    for (key, text) in key_values("-sprt", values)? {
        let slot = match key {
            "elo0" => 0,
            "elo1" => 1,
            "alpha" => 2,
            "beta" => 3,
            "model" => {
                model = match text {
                    "normalized" => SprtModel::Normalized,
                    "logistic" => SprtModel::Logistic,
                    _ => {
                        return Err(
                            format!("-sprt: model '{text}' is not normalized or logistic").into(),
                        );
                    }
                };
                continue;
            }
            _ => return Err(format!("-sprt: unknown key '{key}'").into()),
        };
        let value: f64 = text
            .parse()
            .map_err(|_| format!("-sprt: {key}='{text}' is not a number"))?;
        numbers[slot] = Some(value);
    }
    let [Some(elo0), Some(elo1), alpha, beta] = numbers else {
        return Err("-sprt needs elo0= and elo1=".into());
    };
    SprtConfig::new(
        elo0,
        elo1,
        alpha.unwrap_or(0.05),
        beta.unwrap_or(0.05),
        model,
    )
    .map_err(|e| UsageError::from(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(text: &str) -> Result<Request, UsageError> {
        let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        parse(&args)
    }

    fn config(text: &str) -> MatchConfig {
        match parse_words(text) {
            Ok(Request::Run(config)) => *config,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn engines_inherit_each_and_override_it() {
        let config = config(
            "-engine cmd=a name=x -engine cmd=b depth=3 option.Hash=16 -each tc=40/60+0.6 -games 4 -repeat",
        );
        assert_eq!(config.engines[0].name, "x");
        assert_eq!(config.engines[1].name, "b");
        assert_eq!(config.engines[1].limits.depth, Some(3));
        assert_eq!(
            config.engines[1].options,
            vec![("Hash".to_string(), "16".to_string())]
        );
        let clock = config.engines[0].limits.clock.unwrap();
        assert_eq!(clock.moves, Some(40));
        assert_eq!(clock.base, Duration::from_secs(60));
        assert_eq!(clock.increment, Duration::from_millis(600));
        assert_eq!(config.total_games(), 4);
        assert_eq!(config.engines[0].limits.describe(), "40/60+0.6");
    }

    #[test]
    fn gauntlet_pairs_the_first_engine_with_each_other() {
        let config = config(
            "-engine cmd=a -engine cmd=b -engine cmd=c -each st=0.1 -tournament gauntlet -rounds 2",
        );
        assert_eq!(config.encounters(), vec![(0, 1), (0, 2)]);
        assert_eq!(config.total_games(), 4);
        let round_robin = self::config("-engine cmd=a -engine cmd=b -engine cmd=c -each st=0.1");
        assert_eq!(round_robin.encounters(), vec![(0, 1), (0, 2), (1, 2)]);
    }

    #[test]
    fn clocks_in_every_spelling() {
        let clock = parse_clock("1:30+1").unwrap().unwrap();
        assert_eq!(clock.base, Duration::from_secs(90));
        assert_eq!(parse_clock("inf").unwrap(), None);
        assert!(parse_clock("0+0").is_err());
        assert!(parse_clock("x+1").is_err());
        assert!(parse_clock("0/10").is_err());
    }

    #[test]
    fn openings_and_sprt_are_read() {
        let config = config(
            "-engine cmd=a -engine cmd=b -each depth=1 -openings random plies=6 seed=3 \
             -sprt elo0=0 elo1=5 alpha=0.05 beta=0.1 model=logistic",
        );
        assert_eq!(config.openings, OpeningSource::Random { plies: 6 });
        let sprt = config.sprt.unwrap();
        assert_eq!(
            (sprt.elo1, sprt.beta, sprt.model),
            (5.0, 0.1, SprtModel::Logistic)
        );
        let args: Vec<String> = "-openings random plies=6 seed=3"
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(openings_seed(&args), Some(3));
    }

    #[test]
    fn bad_command_lines_are_refused_with_a_reason() {
        for (text, expected) in [
            ("-engine cmd=a -each st=1", "at least two"),
            ("-engine cmd=a -engine name=b -each st=1", "cmd="),
            ("-engine cmd=a -engine cmd=b", "needs tc="),
            ("-engine cmd=a -engine cmd=b -each tc=inf", "tc=inf"),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -games 0",
                "at least 1",
            ),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -games",
                "needs a value",
            ),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -bogus",
                "unknown option",
            ),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -sprt elo0=5 elo1=0",
                "less than",
            ),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -openings order=random",
                "file=",
            ),
            ("-engine cmd=a -engine cmd=b -each st=x", "seconds"),
            (
                "-engine cmd=a -engine cmd=b -each st=1 -repeat yes",
                "no value",
            ),
            ("stray", "does not follow"),
        ] {
            let error = parse_words(text).expect_err(text).0;
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn help_is_recognised() {
        assert_eq!(parse_words("--help"), Ok(Request::Help));
    }

    #[test]
    fn numbers_out_of_their_range_are_refused_not_truncated() {
        let base = "-engine cmd=a -engine cmd=b";
        for (text, expected) in [
            ("-each st=1 -maxmoves 4294967296", "from 1 to 4294967295"),
            ("-each depth=4294967296", "from 1 to 4294967295"),
            ("-each nodes=-1", "from 1 to"),
            ("-each st=1 -games -5", "needs a value"),
            ("-each st=1 -concurrency 100000", "from 1 to 1024"),
            ("-each st=1 -timemargin 99999999999999999999", "from 0 to"),
            ("-each st=1 -timeout startup=0", "at least 1"),
            ("-each tc=1000000000:18446744073709500000", "tc minutes"),
            ("-each tc=1:18446744073709500000", "seconds from 0"),
            ("-each tc=10+1e300", "seconds from 0"),
            ("-each tc=inf+1", "seconds"),
            ("-each tc=NaN", "seconds"),
            ("-each st=-1", "seconds"),
            ("-each tc=4294967296/10", "tc moves"),
            ("-each st=1 -openings random plies=100000", "from 0 to 1000"),
            ("-each st=1 -ratinginterval 0", "at least 1"),
            (
                "-each st=1 -games 9223372036854775808 -rounds 2",
                "more games than can be counted",
            ),
            ("-each st=1 -sprt elo0=NaN elo1=5", "less than"),
            ("-each st=1 -sprt elo0=0 elo1=5 alpha=2", "between 0 and 1"),
            ("-each st=1 -shard 5/4", "shard"),
            ("-each st=1 -shard 0/4", "shard"),
            ("-each st=1 -pgnout", "needs a value"),
            ("-each st=1 option.=3", "option name"),
        ] {
            let words = format!("{base} {text}");
            let error = parse_words(&words).expect_err(&words).0;
            assert!(error.contains(expected), "{words}: {error}");
        }
        let longest = config(&format!("{base} -each tc=525599:59.5+31536000"));
        let clock = longest.engines[0].limits.clock.unwrap();
        assert!(clock.base <= MAX_TIME && clock.increment == MAX_TIME);
        let huge = config(&format!(
            "{base} -each st=1 -games 9223372036854775808 -repeat"
        ));
        assert_eq!(huge.total_games(), 9_223_372_036_854_775_808);
    }

    #[test]
    fn the_usage_comes_from_the_tables_with_the_defaults() {
        let text = usage();
        for option in MATCH_OPTIONS {
            assert!(
                text.contains(&format!("  {}", option.name)),
                "{}",
                option.name
            );
        }
        for key in ENGINE_KEYS {
            assert!(text.contains(key.head), "{}", key.head);
        }
        let defaults = MatchConfig::default();
        assert!(text.contains(&format!("[{}]", defaults.time_margin.as_millis())));
        assert!(text.contains("games per encounter and round [1]"), "{text}");
        assert!(text.contains("[roundrobin]"), "{text}");
        assert!(text.contains("[10000 5000 60000]"), "{text}");
        // Every option the usage names is one the parser knows.
        for line in text.lines() {
            if let Some(name) = line.trim_start().strip_prefix('-')
                && !name.starts_with('-')
            {
                let name = format!("-{}", name.split_whitespace().next().unwrap());
                assert!(MATCH_OPTIONS.iter().any(|o| o.name == name), "{name}");
            }
        }
    }
}
