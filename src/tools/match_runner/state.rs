//! The saved state of a run: its command line, seed and shard, how much of
//! its record files is committed with the standing of those games, and the
//! finished games not yet recorded. Replaced whole after every game; a
//! stopped run resumes from it and `agon stats` merges shards from it.

use super::error::MatchError;
use super::options;
use super::record::{GameRecord, RecordLengths};
use super::schedule::Standing;
use crate::tools::atomic_file::write_atomically;
use crate::tools::shard::Shard;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What is saved after every game. Its size does not grow with the run:
/// the games' records live in the record files, of which the state names
/// the committed length.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedState {
    /// The command line of the run, without per-invocation options.
    pub args: Vec<String>,
    /// The seed in force (chosen at the first start when none was given).
    pub seed: u64,
    /// The shard played, as 1-based number and count (absent: the whole run).
    #[serde(default)]
    pub shard: Option<(u64, u64)>,
    /// Every game of this process numbered up to this one is recorded.
    pub recorded_through: u64,
    /// Games after `recorded_through` also recorded: those a finished run
    /// wrote after a game it never played (an SPRT decided meanwhile).
    #[serde(default)]
    pub recorded_beyond: Vec<u64>,
    /// The length of each record file that holds the recorded games.
    pub record_lengths: RecordLengths,
    /// The results of the recorded games.
    pub standing: Standing,
    /// Finished games waiting for an earlier game of this process before
    /// their records are written.
    pub pending: Vec<GameRecord>,
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
        let mut state: SavedState = serde_json::from_str(&text).map_err(|e| {
            let earlier = serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|value| value.get("games").is_some());
            if earlier {
                MatchError::content(
                    path,
                    "a state of an earlier agon, which kept every game in it: \
                     finish that run with the agon that started it",
                )
            } else {
                MatchError::content(path, format!("not a match state ({e})"))
            }
        })?;
        // A state of an agon before `-concurrency` was per invocation
        // still holds it; the run is the same without it.
        state.args = options::without_per_invocation(&state.args);
        Ok(state)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_of_an_earlier_agon_is_refused_with_the_reason() {
        let dir = crate::tools::scratch_dir("old-state");
        let path = dir.path().join("state.json");
        std::fs::write(&path, r#"{"args":[],"seed":1,"written":0,"games":[]}"#).unwrap();
        let error = SavedState::load(&path).err().unwrap().to_string();
        assert!(error.contains("an earlier agon"), "{error}");
        std::fs::write(&path, "{").unwrap();
        let error = SavedState::load(&path).err().unwrap().to_string();
        assert!(error.contains("not a match state"), "{error}");
    }
}
