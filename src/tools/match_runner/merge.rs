//! `agon stats`: the states of the shards of one run merged into the
//! statistics that run would have printed had one process played every
//! game, and optionally its records in game order, read from each shard's
//! record file as far as its state counts them.

use super::error::MatchError;
use super::journal::with_pending;
use super::options::{self, MatchConfig, Request, UsageError};
use super::record::{GameRecord, jsonl_line, read_jsonl};
use super::schedule::{Standing, statistics_lines};
use super::state::SavedState;
use crate::tools::atomic_file::write_atomically;
use crate::tools::shard::Shard;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The shards of a run gathered from their states.
struct Merged {
    /// The run's configuration (without a shard).
    config: MatchConfig,
    /// Every shard given: its state file, shard and state.
    shards: Vec<(PathBuf, Shard, SavedState)>,
    /// The standing of every game of every shard given.
    standing: Standing,
    /// The first shards of the run with no state among the files, 1-based
    /// (at most [`MISSING_NAMED`]).
    missing: Vec<u64>,
    /// How many shards have no state among the files.
    missing_count: u64,
}

/// Missing shards named in the heading; the others are counted.
const MISSING_NAMED: usize = 20;

/// Reads the states and checks that they are distinct shards of one run.
fn merge(files: &[PathBuf]) -> Result<Merged, MatchError> {
    let Some(first_path) = files.first() else {
        return Err(UsageError::from("agon stats needs at least one state file").into());
    };
    let first = SavedState::load(first_path)?;
    let count = first.shard(first_path)?.count();
    let Request::Run(config) = options::parse(&first.args)? else {
        return Err(MatchError::content(first_path, "the state holds no match"));
    };
    let total = config.total_games();
    let mut seen = BTreeSet::new();
    let mut shards = Vec::new();
    let mut standing = Standing::default();
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
        let outside = state
            .pending
            .iter()
            .map(|g| g.game)
            .find(|&game| game == 0 || game > total)
            .or_else(|| state.standing.open_game_outside(total));
        if let Some(game) = outside {
            return Err(MatchError::content(
                path,
                format!("game {game} is not one of the {total} games of the run"),
            ));
        }
        standing.merge(
            &config,
            &with_pending(&config, &state.standing, &state.pending),
        );
        shards.push((path.clone(), shard, state));
    }
    // The count comes from a file: never one entry per shard of it.
    let missing = (1..=count)
        .filter(|n| !seen.contains(n))
        .take(MISSING_NAMED)
        .collect();
    let missing_count = count - u64::try_from(seen.len()).unwrap_or(count);
    Ok(Merged {
        config: *config,
        shards,
        standing,
        missing,
        missing_count,
    })
}

impl Merged {
    /// Every game's record in game order: the recorded games from each
    /// shard's JSON-lines file (as far as its state counts them, checked
    /// against the state's standing), the others from the state.
    fn records(&self) -> Result<Vec<GameRecord>, MatchError> {
        let config = &self.config;
        let Some(jsonl) = &config.jsonl_out else {
            return Err(UsageError::from(
                "the run wrote no JSON-lines records (-jsonl): agon stats --jsonl reads them",
            )
            .into());
        };
        let mut games = BTreeMap::new();
        for (state_path, shard, state) in &self.shards {
            let file = record_file(state_path, &shard.file_name(jsonl));
            let records = read_jsonl(&file, state.record_lengths.jsonl)?;
            let mut recounted = Standing::default();
            for record in &records {
                if record.game == 0 || record.game > config.total_games() {
                    return Err(MatchError::content(
                        &file,
                        format!("a game {}", record.game),
                    ));
                }
                recounted.add(config, record);
            }
            if !recounted.same_results(&state.standing) {
                return Err(MatchError::content(
                    &file,
                    format!(
                        "does not hold the games its state {} counts",
                        state_path.display()
                    ),
                ));
            }
            for record in records.into_iter().chain(state.pending.iter().cloned()) {
                let number = record.game;
                if games.insert(number, record).is_some() {
                    return Err(MatchError::content(
                        &file,
                        format!("game {number} is held twice"),
                    ));
                }
            }
        }
        Ok(games.into_values().collect())
    }
}

/// A record file as the run named it: from where `agon stats` runs, or
/// else beside the state (a run started in the state's directory).
fn record_file(state: &Path, file: &Path) -> PathBuf {
    match state.parent() {
        Some(dir) if file.is_relative() && !file.exists() => dir.join(file),
        _ => file.to_path_buf(),
    }
}

/// Prints the merged statistics of the states in `files`; with `jsonl`,
/// also writes every merged game record to it in game order.
pub fn run(
    files: &[PathBuf],
    jsonl: Option<&Path>,
    out: &mut impl Write,
) -> Result<(), MatchError> {
    let merged = merge(files)?;
    let config = &merged.config;
    let total = config.total_games();
    let write = |out: &mut dyn Write, line: &str| {
        writeln!(out, "{line}").map_err(|e| MatchError::file(Path::new("-"), "write to", e))
    };
    if let Some(path) = jsonl
        && path.exists()
    {
        return Err(UsageError(format!(
            "{} exists; agon stats writes merged records to a new file only",
            path.display()
        ))
        .into());
    }
    let records = jsonl.map(|_| merged.records()).transpose()?;
    let mut heading = format!(
        "Merged {} state file(s): {} of {total} games",
        files.len(),
        merged.standing.games()
    );
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged.missing.iter().map(u64::to_string).collect();
        let more = merged.missing_count - u64::try_from(missing.len()).unwrap_or(0);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        heading.push_str(&format!(
            "; no state of shard(s) {}{more}",
            missing.join(", ")
        ));
    }
    write(out, &heading)?;
    for line in statistics_lines(config, &merged.standing) {
        write(out, &line)?;
    }
    if let (Some(path), Some(records)) = (jsonl, records) {
        let text: String = records.iter().map(jsonl_line).collect();
        write_atomically(path, text.as_bytes())
            .map_err(|e| MatchError::file(path, "write the merged records to", e))?;
    }
    out.flush()
        .map_err(|e| MatchError::file(Path::new("-"), "write to", e))
}
