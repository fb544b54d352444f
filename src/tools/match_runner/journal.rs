//! What a run has finished: game records appended to the record files in
//! the order of this process's schedule, and the state that commits them.
//!
//! The state is the commit point. A game's records are appended and synced
//! first, then the state naming the files' new lengths replaces the old
//! one atomically; a run killed between the two has records its state does
//! not count, and resuming cuts them off and plays that game again. So the
//! record files and the state agree after a kill at any moment, and the
//! state stays small: the standing of the recorded games and the few
//! finished games still waiting for an earlier one.

use super::error::MatchError;
use super::options::MatchConfig;
use super::record::{GameRecord, RecordFiles, RecordLengths};
use super::schedule::{Standing, is_own_game};
use super::state::SavedState;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// A run's committed games and the open record files.
pub(crate) struct Journal {
    files: RecordFiles,
    state_file: Option<PathBuf>,
    args: Vec<String>,
    seed: u64,
    /// Every own game numbered up to this one is recorded.
    recorded_through: u64,
    recorded_beyond: BTreeSet<u64>,
    standing: Standing,
    pending: BTreeMap<u64, GameRecord>,
}

impl Journal {
    /// Opens the record files of `config` where `saved` (if any) left them
    /// and commits that starting point at once, so that record files never
    /// exist without a state that counts them.
    pub(crate) fn open(
        config: &MatchConfig,
        args: Vec<String>,
        seed: u64,
        saved: Option<SavedState>,
    ) -> Result<Journal, MatchError> {
        let committed = match (&saved, &config.state_file) {
            (Some(saved), _) => Some(saved.record_lengths),
            (None, Some(_)) => Some(RecordLengths::default()),
            (None, None) => None,
        };
        let files = RecordFiles::open(
            config.pgn_out.as_deref(),
            config.jsonl_out.as_deref(),
            committed,
        )?;
        let mut journal = Journal {
            files,
            state_file: config.state_file.clone(),
            args,
            seed,
            recorded_through: 0,
            recorded_beyond: BTreeSet::new(),
            standing: Standing::default(),
            pending: BTreeMap::new(),
        };
        if let Some(saved) = saved {
            let total = config.total_games();
            let numbers = saved.pending.iter().map(|g| g.game);
            if let Some(number) = numbers
                .chain(saved.recorded_beyond.iter().copied())
                .chain([saved.recorded_through])
                .find(|&n| n > total)
            {
                return Err(MatchError::Stopped(format!(
                    "the state holds game {number} of no schedule slot"
                )));
            }
            journal.recorded_through = saved.recorded_through;
            journal.recorded_beyond = saved.recorded_beyond.into_iter().collect();
            journal.standing = saved.standing;
            for record in saved.pending {
                if record.game == 0 {
                    return Err(MatchError::Stopped("the state holds a game 0".into()));
                }
                journal.pending.insert(record.game, record);
            }
            // Games a killed run left waiting may have become next in order.
            journal.record_in_order(config)?;
        }
        journal.save(config)?;
        Ok(journal)
    }

    /// Takes a finished game, records every game now next in order, and
    /// commits the state.
    pub(crate) fn add(
        &mut self,
        config: &MatchConfig,
        record: GameRecord,
    ) -> Result<(), MatchError> {
        self.pending.insert(record.game, record);
        self.record_in_order(config)?;
        self.save(config)
    }

    /// Records whatever is still waiting, gaps and all, and commits: the
    /// run is over for good.
    pub(crate) fn finish(&mut self, config: &MatchConfig) -> Result<(), MatchError> {
        for (number, record) in std::mem::take(&mut self.pending) {
            self.files.append(&record)?;
            self.standing.add(config, &record);
            self.recorded_beyond.insert(number);
        }
        self.save(config)
    }

    fn record_in_order(&mut self, config: &MatchConfig) -> Result<(), MatchError> {
        let encounters = config.encounters().len();
        let total = config.total_games();
        loop {
            let next = (self.recorded_through + 1..=total)
                .find(|&n| is_own_game(config, encounters, n - 1))
                .unwrap_or(total + 1);
            if self.recorded_beyond.remove(&next) {
                self.recorded_through = next;
                continue;
            }
            let Some(record) = self.pending.remove(&next) else {
                return Ok(());
            };
            self.files.append(&record)?;
            self.standing.add(config, &record);
            self.recorded_through = next;
        }
    }

    fn save(&self, config: &MatchConfig) -> Result<(), MatchError> {
        let Some(path) = &self.state_file else {
            return Ok(());
        };
        self.files.sync()?;
        self.state(config).save(path)
    }

    fn state(&self, config: &MatchConfig) -> SavedState {
        let shard = config.shard;
        SavedState {
            args: self.args.clone(),
            seed: self.seed,
            shard: (!shard.is_whole()).then(|| (shard.number(), shard.count())),
            recorded_through: self.recorded_through,
            recorded_beyond: self.recorded_beyond.iter().copied().collect(),
            record_lengths: self.files.lengths(),
            standing: self.standing.clone(),
            pending: self.pending.values().cloned().collect(),
        }
    }

    /// Games finished by this process over all its invocations.
    pub(crate) fn played(&self) -> u64 {
        self.standing.games() + self.pending.len() as u64
    }

    /// The 0-based index of the first game that may still be unfinished:
    /// every game before it is.
    pub(crate) fn first_unfinished(&self) -> u64 {
        self.recorded_through
    }

    /// The 0-based indices of the finished games after [`Self::first_unfinished`].
    pub(crate) fn finished_out_of_order(&self) -> BTreeSet<u64> {
        let beyond = self.recorded_beyond.iter();
        beyond.chain(self.pending.keys()).map(|n| n - 1).collect()
    }

    /// The standing of every finished game.
    pub(crate) fn standing(&self, config: &MatchConfig) -> Standing {
        with_pending(config, &self.standing, self.pending.values())
    }
}

/// `standing` with the results of `pending` games added.
pub(crate) fn with_pending<'a>(
    config: &MatchConfig,
    standing: &Standing,
    pending: impl IntoIterator<Item = &'a GameRecord>,
) -> Standing {
    let mut all = standing.clone();
    for record in pending {
        all.add(config, record);
    }
    all
}
