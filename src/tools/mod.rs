//! Tools built on the rules and the engine: perft, and more to come.

pub mod perft;
