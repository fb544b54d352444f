//! Every `agon match` option and engine key, one row of a table each, and
//! the usage text made from the tables with the defaults they show.

use super::values::*;
use super::{Limits, MAX_CONCURRENCY, MatchConfig, Parsed, Resume, Tournament};
use crate::tools::shard::Shard;
use std::time::Duration;

/// What a match option's values go into while the command line is read.
#[derive(Default)]
pub(super) struct Reading<'a> {
    pub(super) config: MatchConfig,
    pub(super) engines: Vec<Vec<(&'a str, &'a str)>>,
    pub(super) each: Vec<(&'a str, &'a str)>,
}

/// One match option: its name, how its values look and what they mean,
/// the default it shows (read from [`MatchConfig::default`]) and what it does.
pub(super) struct MatchOption {
    pub(super) name: &'static str,
    pub(super) values: &'static str,
    pub(super) help: &'static str,
    pub(super) default: fn(&MatchConfig) -> Option<String>,
    /// Given per invocation only, never saved with a run's state.
    pub(super) per_invocation: bool,
    pub(super) apply: for<'a> fn(&mut Reading<'a>, &str, &[&'a str]) -> Parsed<()>,
}

pub(super) fn no_default(_: &MatchConfig) -> Option<String> {
    None
}

pub(super) fn millis(duration: Duration) -> String {
    duration.as_millis().to_string()
}

/// Every option of `agon match`, in the order `--help` lists them.
pub(super) const MATCH_OPTIONS: &[MatchOption] = &[
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
        help: "games played at once (may differ on resuming)",
        default: |c| Some(c.concurrency.to_string()),
        per_invocation: true,
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
pub(super) struct EngineReading {
    pub(super) cmd: Option<String>,
    pub(super) name: Option<String>,
    pub(super) args: Vec<String>,
    pub(super) options: Vec<(String, String)>,
    pub(super) limits: Limits,
    pub(super) infinite: bool,
}

/// One key of `-engine` and `-each`; a key ending in `.` is a prefix.
pub(super) struct EngineKey {
    pub(super) key: &'static str,
    pub(super) head: &'static str,
    pub(super) help: &'static str,
    pub(super) apply: fn(&mut EngineReading, &str, &str) -> Parsed<()>,
}

impl EngineKey {
    pub(super) fn matches(&self, key: &str) -> bool {
        match self.key.strip_suffix('.') {
            Some(_) => key.starts_with(self.key),
            None => key == self.key,
        }
    }
}

/// Every engine key, in the order `--help` lists them.
pub(super) const ENGINE_KEYS: &[EngineKey] = &[
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
pub(super) fn push_entry(text: &mut String, head: &str, help: &str, default: Option<String>) {
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
fn is_per_invocation(name: &str) -> bool {
    MATCH_OPTIONS
        .iter()
        .any(|option| option.per_invocation && option.name == name)
}

/// The arguments minus the options given per invocation: what identifies a
/// run in its state, so that a run resumes under a different `-concurrency`
/// or `-maxgames`.
pub fn without_per_invocation(args: &[String]) -> Vec<String> {
    without_options(args, is_per_invocation)
}

/// The arguments minus every option whose name `dropped` accepts, with
/// the values that follow it.
pub fn without_options(args: &[String], dropped: impl Fn(&str) -> bool) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skipping = false;
    for arg in args {
        if arg.starts_with('-') {
            skipping = dropped(arg);
        }
        if !skipping {
            kept.push(arg.clone());
        }
    }
    kept
}
