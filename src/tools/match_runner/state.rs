//! The saved state of a run (its command line, seed, shard and finished
//! games), rewritten after every game, from which a stopped run resumes
//! and from which `agon stats` merges the shards of one run.

use super::error::MatchError;
use super::record::GameRecord;
use crate::tools::atomic_file::write_atomically;
use crate::tools::shard::Shard;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What is saved after every game.
#[derive(Clone, Serialize, Deserialize)]
pub struct SavedState {
    /// The command line of the run, without per-invocation options.
    pub args: Vec<String>,
    /// The seed in force (chosen at the first start when none was given).
    pub seed: u64,
    /// The shard played, as 1-based number and count (absent: the whole run).
    #[serde(default)]
    pub shard: Option<(u64, u64)>,
    /// Games 1..=written are in the record files.
    pub written: u64,
    /// Every finished game.
    pub games: Vec<GameRecord>,
}

impl SavedState {
    /// The shard the state belongs to.
    pub fn shard(&self, path: &Path) -> Result<Shard, MatchError> {
        match self.shard {
            None => Ok(Shard::WHOLE),
            Some((number, count)) => {
                Shard::new(number, count).map_err(|e| MatchError::content(path, e))
            }
        }
    }

    /// Reads a state file.
    pub fn load(path: &Path) -> Result<SavedState, MatchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| MatchError::file(path, "read the state", e))?;
        serde_json::from_str(&text)
            .map_err(|e| MatchError::content(path, format!("not a match state ({e})")))
    }

    /// Replaces the state file whole (see `atomic_file`), so that a stop in
    /// the middle never leaves half a state and a shard reading another's
    /// state never sees half of one.
    pub fn save(&self, path: &Path) -> Result<(), MatchError> {
        let text = serde_json::to_string(self).map_err(|e| MatchError::content(path, e))?;
        write_atomically(path, text.as_bytes())
            .map_err(|e| MatchError::file(path, "write the state", e))
    }
}
