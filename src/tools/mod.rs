//! Tools built on the rules and the engine: perft, bench, and more to come.

pub mod bench;
pub mod perft;
