//! Tools built on the rules and the engine: perft, bench, match statistics,
//! the match runner, position analysis, the SPSA tuner of the search and
//! the browser GUI.

pub mod analyze;
pub mod atomic_file;
pub mod bench;
pub mod datagen;
pub mod gui;
pub mod match_runner;
pub mod perft;
pub mod run_lock;
pub mod seeds;
pub mod serve;
pub mod shard;
pub mod spsa;
pub mod stats;
pub mod train;
pub mod tune;

/// Command-line parser of a count of threads or jobs: 1 to the engine's
/// `Threads` maximum.
pub fn threads_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=crate::search::MAX_THREADS)
}

/// Command-line parser of a transposition table size in MiB: 1 to the
/// engine's `Hash` maximum.
pub fn hash_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=crate::search::MAX_HASH_MIB)
}

/// Command-line parser of a count of reported lines: 1 to the engine's
/// `MultiPV` maximum.
pub fn multipv_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=crate::search::MAX_MULTIPV)
}

/// A fresh directory for one unit test, named after `name` so that it can
/// be found while the test runs, and removed with its contents when the
/// value drops, panics included.
#[cfg(test)]
pub(crate) fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("agon-{name}-"))
        .tempdir()
        .expect("a scratch directory")
}
