//! Match statistics for the agon match runner: Elo, normalized Elo, LOS and SPRT over game and game-pair results.
//!
//! Results are always seen from the first engine's side. Single games feed the trinomial (win/draw/loss)
//! model; pairs of games played from the same opening with colours swapped also feed the pentanomial
//! model, whose variance accounts for the correlation between the two games of a pair. When pairs are
//! available they are preferred, as fastchess does.

mod elo;
mod erf;
mod outcome;
mod sprt;
mod summary;
mod tally;
#[cfg(test)]
mod tests;

pub use elo::{Estimate, NELO_SCALE, Z95, elo_to_score, los, score_to_elo};
pub use erf::{erf, erfc};
pub use outcome::{GameOutcome, PairOutcome};
pub use sprt::{
    SprtConfig, SprtDecision, SprtError, SprtModel, SprtStatus, llr_pentanomial, llr_trinomial,
};
pub use summary::summary_lines;
pub use tally::Tally;
