//! Tools built on the rules and the engine: perft, match statistics, the
//! match runner and position analysis.

pub mod analyze;
pub mod match_runner;
pub mod perft;
pub mod stats;
