//! Correction history: how far searches found the static evaluation off,
//! kept for each side to move and each arrangement of the pieces near the
//! throne, and added to later static evaluations of the same arrangement.

use crate::rules::geometry::{Bitboard, NEAR_THRONE};
use crate::rules::{Color, Position, split_mix};

/// Entries per side to move.
const SLOTS: usize = 1 << 14;
/// Entries hold centi-guards in units of 1/`GRAIN`.
const GRAIN: i32 = 256;
/// No correction goes beyond this many centi-guards.
const LIMIT: i32 = 150;
/// A result's weight in an entry is its depth plus one, out of this.
const WEIGHT_SCALE: i32 = 256;
/// Weight no single result beyond this.
const MAX_WEIGHT: i32 = 16;
/// The learned corrections of one search thread.
pub(crate) struct Correction {
    entries: Vec<i32>,
}

impl Correction {
    /// No corrections yet.
    pub(crate) fn new() -> Correction {
        Correction {
            entries: vec![0; 2 * SLOTS],
        }
    }

    /// The static evaluation `raw` of `position`, corrected.
    pub(crate) fn corrected(&self, position: &Position, raw: i32) -> i32 {
        raw + self.entries[slot(position)] / GRAIN
    }

    /// Moves the entry of `position` towards the error `found - static_eval`
    /// of a search to `depth`.
    pub(crate) fn learn(&mut self, position: &Position, depth: i32, static_eval: i32, found: i32) {
        let target = (found - static_eval).clamp(-LIMIT, LIMIT) * GRAIN;
        let weight = (depth + 1).clamp(1, MAX_WEIGHT);
        let entry = &mut self.entries[slot(position)];
        *entry = (*entry * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
    }
}

/// The entry of `position`: its side to move and a hash of the
/// contents of the cells near the throne.
fn slot(position: &Position) -> usize {
    let fold = |cells: Bitboard, salt: u64| {
        let cells = cells & NEAR_THRONE;
        split_mix((cells as u64) ^ ((cells >> 64) as u64).rotate_left(29) ^ salt)
    };
    let key = fold(position.pieces(Color::White), 1)
        ^ fold(position.pieces(Color::Black), 2)
        ^ fold(position.queens(), 3)
        ^ fold(
            position.captured(Color::White) | position.captured(Color::Black),
            4,
        );
    // The mask keeps the hash below SLOTS, so the cast loses nothing.
    position.side_to_move().index() * SLOTS + (key as usize & (SLOTS - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{legal_moves, start_position};

    #[test]
    fn corrections_follow_the_errors_found_for_the_same_neighbourhood_and_side() {
        let start = start_position();
        let mut correction = Correction::new();
        assert_eq!(correction.corrected(&start, 100), 100);
        for _ in 0..200 {
            correction.learn(&start, 12, 100, 160);
        }
        let learned = correction.corrected(&start, 100);
        assert!((155..=160).contains(&learned), "{learned}");
        // A step far from the throne keeps the entry; the other side to
        // move has its own.
        let far_step = legal_moves(&start)
            .iter()
            .copied()
            .find(|mv| mv.from().ring() >= 4 && mv.to().ring() >= 4)
            .expect("the start position has steps along the edge");
        let child = start.make_move(far_step).with_turn_passed();
        assert_eq!(correction.corrected(&child, 0), learned - 100);
        assert_eq!(correction.corrected(&start.with_turn_passed(), 100), 100);
        // However wrong the evaluation, the correction stays within its
        // limit.
        for _ in 0..200 {
            correction.learn(&start, 12, 0, -5_000);
        }
        assert_eq!(correction.corrected(&start, 0), -LIMIT + 1);
    }
}
