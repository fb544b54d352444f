//! The `agon match` command line, in the option vocabulary of cutechess-cli
//! and fastchess: `-engine cmd=... name=... tc=...`, `-each`, `-games`, ...

use crate::tools::stats::{SprtConfig, SprtModel};
use std::path::PathBuf;
use std::time::Duration;

/// The usage text printed by `agon match --help`.
pub const USAGE: &str = "\
Usage: agon match -engine cmd=<path> [KEY=VALUE...] -engine cmd=<path> [...] [OPTIONS]

Plays engines that speak the agon protocol against each other, with the
rules core as referee.

Engine keys (for -engine, or for every engine with -each):
  cmd=<path>            program to run (required)
  args=\"<a b c>\"        arguments, split on spaces
  name=<name>           name in results and records (default: cmd)
  option.<Name>=<v>     sent as 'setoption name <Name> value <v>'; quote it
                        when the name has spaces; an option the engine
                        refuses ('info string error') stops the run
  tc=<[moves/]base[+inc]>|inf
                        clock in seconds, e.g. tc=40/60+0.6, tc=10+0.1
  st=<seconds>          fixed time per move ('go movetime')
  depth=<plies>         depth limit ('go depth')
  nodes=<count>         node limit ('go nodes')

Options:
  -games N              games per encounter and round [1]
  -rounds N             rounds [1]; the run is rounds x encounters x games
                        games, as in cutechess-cli and fastchess
  -repeat               play each opening twice with colours swapped
                        (consecutive games form a pair; adds no games)
  -concurrency N        games played at once [1]
  -tournament gauntlet|roundrobin
                        gauntlet: first engine against each other [roundrobin]
  -openings file=<path> format=fen|moves [order=sequential|random] [plies=N] [start=N]
  -openings random plies=N [seed=S]
                        openings of N random legal plies from the start
  -sprt elo0=E0 elo1=E1 alpha=A beta=B [model=normalized|logistic]
                        stop once the test is decided (two engines only)
  -maxmoves N           adjudicate a draw after N full moves
  -pgnout <file>        append a PGN record of every game
  -jsonl <file>         append a JSON line for every game
  -state <file>         write a resumable state after every game
  -resume <file>        continue the run saved in a state file
  -maxgames N           stop after N more games of this run (resume later)
  -recover              restart a crashed or hung engine and go on
  -seed S               seed for opening order and random openings
  -timemargin MS        grace before a time forfeit [100]
  -timeout [startup=MS] [ready=MS] [stall=MS]
                        wait for uciok [10000], for readyok [5000], and for a
                        bestmove without a clock (depth/nodes) [60000]
  -ratinginterval N     print the statistics every N games [10]
  --help                print this text
";

/// How a side's thinking time is limited.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tournament {
    /// The first engine against each of the others.
    Gauntlet,
    /// Every engine against every other.
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
#[derive(Clone, Debug, PartialEq)]
pub enum OpeningSource {
    /// Every game from the start position.
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
    /// State file to continue from.
    pub resume: Option<PathBuf>,
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

/// Options that belong to one invocation and are not saved with the state.
pub const PER_INVOCATION: [&str; 2] = ["-resume", "-maxgames"];

/// Splits the arguments into option groups: a `-name` and the values after it.
fn groups(args: &[String]) -> Result<Vec<(&str, Vec<&str>)>, String> {
    let mut result: Vec<(&str, Vec<&str>)> = Vec::new();
    for arg in args {
        if arg.starts_with('-') && !arg.starts_with("--") || arg == "--help" {
            result.push((arg.as_str(), Vec::new()));
        } else if arg.starts_with("--") {
            // fastchess and cutechess accept a single dash only; say so rather than guess.
            return Err(format!(
                "unknown option '{arg}' (options start with one dash)"
            ));
        } else if let Some((_, values)) = result.last_mut() {
            values.push(arg.as_str());
        } else {
            return Err(format!("'{arg}' does not follow an option"));
        }
    }
    Ok(result)
}

/// Parses the arguments that follow `agon match`.
pub fn parse(args: &[String]) -> Result<Request, String> {
    let groups = groups(args)?;
    if groups
        .iter()
        .any(|(name, _)| matches!(*name, "--help" | "-help" | "-h"))
    {
        return Ok(Request::Help);
    }
    let mut engines: Vec<Vec<(&str, &str)>> = Vec::new();
    let mut each: Vec<(&str, &str)> = Vec::new();
    let mut config = MatchConfig {
        engines: Vec::new(),
        games: 1,
        rounds: 1,
        repeat: false,
        concurrency: 1,
        tournament: Tournament::RoundRobin,
        openings: OpeningSource::StartPosition,
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
        timeouts: Timeouts {
            startup: Duration::from_secs(10),
            ready: Duration::from_secs(5),
            stall: Duration::from_secs(60),
        },
        rating_interval: 10,
    };
    for (name, values) in &groups {
        let flag = || -> Result<(), String> {
            if values.is_empty() {
                Ok(())
            } else {
                Err(format!("{name} takes no value, got '{}'", values.join(" ")))
            }
        };
        match *name {
            "-engine" => engines.push(key_values(name, values)?),
            "-each" => each.extend(key_values(name, values)?),
            "-games" => config.games = positive(name, single(name, values)?)?,
            "-rounds" => config.rounds = positive(name, single(name, values)?)?,
            "-repeat" => {
                flag()?;
                config.repeat = true;
            }
            "-recover" => {
                flag()?;
                config.recover = true;
            }
            "-concurrency" => {
                config.concurrency = positive(name, single(name, values)?)? as usize;
            }
            "-tournament" => {
                config.tournament = match single(name, values)? {
                    "gauntlet" => Tournament::Gauntlet,
                    "roundrobin" | "round-robin" => Tournament::RoundRobin,
                    other => {
                        return Err(format!(
                            "-tournament: '{other}' is not gauntlet or roundrobin"
                        ));
                    }
                }
            }
            "-openings" => config.openings = parse_openings(values)?,
            "-sprt" => config.sprt = Some(parse_sprt(values)?),
            "-maxmoves" => config.max_moves = Some(positive(name, single(name, values)?)? as u32),
            "-pgnout" => config.pgn_out = Some(path_value(name, values)?),
            "-jsonl" => config.jsonl_out = Some(path_value(name, values)?),
            "-state" => config.state_file = Some(path_value(name, values)?),
            "-resume" => config.resume = Some(path_value(name, values)?),
            "-maxgames" => config.max_games = Some(positive(name, single(name, values)?)?),
            "-seed" => config.seed = Some(number(name, single(name, values)?)?),
            "-timemargin" => {
                config.time_margin = Duration::from_millis(number(name, single(name, values)?)?)
            }
            "-timeout" => {
                for (key, value) in key_values(name, values)? {
                    let millis = Duration::from_millis(number(key, value)?);
                    match key {
                        "startup" => config.timeouts.startup = millis,
                        "ready" => config.timeouts.ready = millis,
                        "stall" => config.timeouts.stall = millis,
                        _ => return Err(format!("-timeout: unknown key '{key}'")),
                    }
                }
            }
            "-ratinginterval" => {
                config.rating_interval = positive(name, single(name, values)?)?;
            }
            _ => return Err(format!("unknown option '{name}' (see agon match --help)")),
        }
    }
    if config.resume.is_some() {
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
    Ok(Request::Run(Box::new(config)))
}

fn single<'a>(name: &str, values: &[&'a str]) -> Result<&'a str, String> {
    match values {
        [value] => Ok(value),
        [] => Err(format!("{name} needs a value")),
        _ => Err(format!(
            "{name} takes one value, got '{}'",
            values.join(" ")
        )),
    }
}

fn path_value(name: &str, values: &[&str]) -> Result<PathBuf, String> {
    single(name, values).map(PathBuf::from)
}

fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{name}: '{text}' is not a whole number"))
}

fn positive(name: &str, text: &str) -> Result<u64, String> {
    match number::<u64>(name, text)? {
        0 => Err(format!("{name} must be at least 1")),
        n => Ok(n),
    }
}

fn key_values<'a>(name: &str, values: &[&'a str]) -> Result<Vec<(&'a str, &'a str)>, String> {
    values
        .iter()
        .map(|item| {
            item.split_once('=')
                .ok_or_else(|| format!("{name}: expected KEY=VALUE, got '{item}'"))
        })
        .collect()
}

fn seconds_value(key: &str, text: &str) -> Result<Duration, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{key}: '{text}' is not a number of seconds"))?;
    Duration::try_from_secs_f64(value).map_err(|_| format!("{key}: '{text}' is out of range"))
}

/// Parses a clock such as `40/60+0.6`, `10+0.1`, `1:30+1` or `inf` (no clock).
fn parse_clock(text: &str) -> Result<Option<ClockControl>, String> {
    if text == "inf" || text == "infinite" {
        return Ok(None);
    }
    let (moves, rest) = match text.split_once('/') {
        Some((moves, rest)) => (Some(positive("tc moves", moves)? as u32), rest),
        None => (None, text),
    };
    let (base, increment) = match rest.split_once('+') {
        Some((base, increment)) => (base, seconds_value("tc increment", increment)?),
        None => (rest, Duration::ZERO),
    };
    let base = match base.split_once(':') {
        Some((minutes, secs)) => {
            Duration::from_secs(60 * number::<u64>("tc minutes", minutes)?)
                + seconds_value("tc seconds", secs)?
        }
        None => seconds_value("tc", base)?,
    };
    if base.is_zero() && increment.is_zero() {
        return Err(format!("tc={text} gives no time at all"));
    }
    Ok(Some(ClockControl {
        moves,
        base,
        increment,
    }))
}

fn engine_spec(keys: &[(&str, &str)]) -> Result<EngineSpec, String> {
    let mut cmd = None;
    let mut name = None;
    let mut args = Vec::new();
    let mut options = Vec::new();
    let mut limits = Limits {
        clock: None,
        movetime: None,
        depth: None,
        nodes: None,
    };
    let mut infinite = false;
    for &(key, value) in keys {
        match key {
            "cmd" => cmd = Some(value.to_string()),
            "name" => name = Some(value.to_string()),
            "args" => args = value.split_whitespace().map(str::to_string).collect(),
            "tc" => {
                limits.clock = parse_clock(value)?;
                infinite = limits.clock.is_none();
            }
            "st" => limits.movetime = Some(seconds_value("st", value)?),
            "depth" => limits.depth = Some(positive("depth", value)? as u32),
            "nodes" => limits.nodes = Some(positive("nodes", value)?),
            _ => match key.strip_prefix("option.") {
                Some(option) if !option.is_empty() => {
                    options.push((option.to_string(), value.to_string()));
                }
                _ => return Err(format!("unknown engine key '{key}'")),
            },
        }
    }
    let cmd = cmd.ok_or("every -engine needs cmd=<path>")?;
    let name = name.unwrap_or_else(|| cmd.clone());
    if limits.clock.is_some() && limits.movetime.is_some() {
        return Err(format!("engine {name}: give tc= or st=, not both"));
    }
    if limits
        == (Limits {
            clock: None,
            movetime: None,
            depth: None,
            nodes: None,
        })
    {
        return Err(if infinite {
            format!("engine {name}: tc=inf needs depth= or nodes= to end a search")
        } else {
            format!("engine {name}: needs tc=, st=, depth= or nodes=")
        });
    }
    Ok(EngineSpec {
        name,
        cmd,
        args,
        options,
        limits,
    })
}

fn parse_openings(values: &[&str]) -> Result<OpeningSource, String> {
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
                    _ => return Err(format!("-openings: format '{text}' is not fen or moves")),
                }
            }
            "order" => {
                random_order = match text {
                    "random" => true,
                    "sequential" => false,
                    _ => {
                        return Err(format!(
                            "-openings: order '{text}' is not random or sequential"
                        ));
                    }
                }
            }
            "plies" => plies = Some(number::<usize>("plies", text)?),
            "start" => start = positive("start", text)? as usize,
            // Accepted for the generated openings; the run's -seed does the same job.
            "seed" => {
                number::<u64>("seed", text)?;
            }
            _ => return Err(format!("-openings: unknown key '{key}'")),
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

fn parse_sprt(values: &[&str]) -> Result<SprtConfig, String> {
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
                        return Err(format!(
                            "-sprt: model '{text}' is not normalized or logistic"
                        ));
                    }
                };
                continue;
            }
            _ => return Err(format!("-sprt: unknown key '{key}'")),
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(text: &str) -> Result<Request, String> {
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
            let error = parse_words(text).expect_err(text);
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn help_is_recognised() {
        assert_eq!(parse_words("--help"), Ok(Request::Help));
    }
}
