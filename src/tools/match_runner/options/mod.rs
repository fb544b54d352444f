//! The `agon match` command line, in the option vocabulary of cutechess-cli
//! and fastchess: `-engine cmd=... name=... tc=...`, `-each`, `-games`, ...
//! Every option and engine key is one row of a table (`table`), from which
//! parsing, the defaults shown and `--help` all come; the values are read
//! by `values` into the settings of `config`.

mod config;
mod table;
#[cfg(test)]
mod tests;
mod values;

pub use config::*;
pub use table::{usage, without_options, without_per_invocation};
pub use values::openings_seed;

use std::fmt;
use table::{MATCH_OPTIONS, Reading};
use values::engine_spec;

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
