//! Tools built on the rules and the engine: perft, bench, match statistics,
//! the match runner and position analysis.

pub mod analyze;
pub mod bench;
pub mod match_runner;
pub mod perft;
pub mod shard;
pub mod stats;
pub mod tune;
