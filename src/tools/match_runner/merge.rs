//! `agon stats`: the states of the shards of one run merged into the
//! statistics that run would have printed had one process played every
//! game, and optionally its records in game order.

use super::error::MatchError;
use super::options::{self, Request, UsageError};
use super::record::{GameRecord, RecordWriter};
use super::schedule::{statistics_lines, tallies};
use super::state::SavedState;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The games of a run gathered from its shards' states.
pub(crate) struct Merged {
    /// The run's configuration (without a shard).
    pub(crate) config: options::MatchConfig,
    /// Every game found, by 0-based index.
    pub(crate) games: BTreeMap<u64, GameRecord>,
    /// Shards of the run with no state among the files, 1-based.
    pub(crate) missing: Vec<u64>,
}

/// Reads the states and checks that they are distinct shards of one run.
pub(crate) fn merge(files: &[PathBuf]) -> Result<Merged, MatchError> {
    let Some(first_path) = files.first() else {
        return Err(UsageError::from("agon stats needs at least one state file").into());
    };
    let first = SavedState::load(first_path)?;
    let count = first.shard(first_path)?.count();
    let mut seen = BTreeSet::new();
    let mut games = BTreeMap::new();
    for path in files {
        let state = if path == first_path {
            first.clone()
        } else {
            SavedState::load(path)?
        };
        if state.args != first.args || state.seed != first.seed {
            return Err(MatchError::content(
                path,
                format!(
                    "not a shard of the run in {} (its command line or seed differs)",
                    first_path.display()
                ),
            ));
        }
        let shard = state.shard(path)?;
        if shard.count() != count {
            return Err(MatchError::content(
                path,
                format!(
                    "shard {shard}, but {} is one of {count}",
                    first_path.display()
                ),
            ));
        }
        if !seen.insert(shard.number()) {
            return Err(MatchError::content(
                path,
                format!("shard {shard} is given twice"),
            ));
        }
        for game in state.games {
            if game.game == 0 {
                return Err(MatchError::content(path, "a game numbered 0"));
            }
            if games.insert(game.game - 1, game).is_some() {
                return Err(MatchError::content(
                    path,
                    "a game another shard also played",
                ));
            }
        }
    }
    let Request::Run(config) = options::parse(&first.args)? else {
        return Err(MatchError::content(first_path, "the state holds no match"));
    };
    let total = config.total_games();
    if let Some((index, _)) = games.last_key_value()
        && *index >= total
    {
        return Err(MatchError::content(
            first_path,
            format!("game {} is beyond the {total} games of the run", index + 1),
        ));
    }
    let missing = (1..=count).filter(|n| !seen.contains(n)).collect();
    Ok(Merged {
        config: *config,
        games,
        missing,
    })
}

/// Prints the merged statistics of the states in `files`; with `jsonl`,
/// also writes every merged game record to it in game order.
pub fn run(
    files: &[PathBuf],
    jsonl: Option<&Path>,
    out: &mut impl Write,
) -> Result<(), MatchError> {
    let merged = merge(files)?;
    let total = merged.config.total_games();
    let write = |out: &mut dyn Write, line: &str| {
        writeln!(out, "{line}").map_err(|e| MatchError::file(Path::new("-"), "write to", e))
    };
    let mut heading = format!(
        "Merged {} state file(s): {} of {total} games",
        files.len(),
        merged.games.len()
    );
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged.missing.iter().map(u64::to_string).collect();
        heading.push_str(&format!("; no state of shard(s) {}", missing.join(", ")));
    }
    write(out, &heading)?;
    for line in statistics_lines(&merged.config, &tallies(&merged.config, &merged.games)) {
        write(out, &line)?;
    }
    if let Some(path) = jsonl {
        if path.exists() {
            return Err(UsageError(format!(
                "{} exists; agon stats writes merged records to a new file only",
                path.display()
            ))
            .into());
        }
        let mut writer = RecordWriter::open(None, Some(path), 0)?;
        for record in merged.games.into_values() {
            writer.add(record)?;
        }
        writer.flush_all()?;
    }
    out.flush()
        .map_err(|e| MatchError::file(Path::new("-"), "write to", e))
}
