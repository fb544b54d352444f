//! Tools built on the rules and the engine: perft and match statistics.

pub mod perft;
pub mod stats;
