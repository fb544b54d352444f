//! Seeds of the parts of a seeded job (a game of a datagen run, an epoch of
//! training): SplitMix64 applied over every number that names the part, so
//! that neighbouring seeds and part numbers give unrelated random streams.

use crate::rules::split_mix;

/// The seed of the part named by `parts` (most general first) of the job
/// seeded with `seed`. Each number is mixed in after the ones before it, so
/// no rearrangement of the numbers, and no other seed, gives the same
/// stream except by a 64-bit coincidence.
pub fn part_seed(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(split_mix(seed), |state, &part| {
        split_mix(state ^ split_mix(part))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The old seeding, `seed ^ number`, gave seeds 11 and 12 the same games
    /// in another order; mixed, a thousand games of ten seeds never meet.
    #[test]
    fn neighbouring_seeds_and_numbers_give_distinct_seeds() {
        let mut seen = HashSet::new();
        for seed in 10..20 {
            for records in [0, 1, 26] {
                for game in 0..1000 {
                    assert!(seen.insert(part_seed(seed, &[records, game])));
                }
            }
        }
        assert_ne!(part_seed(1, &[2, 3]), part_seed(1, &[3, 2]));
    }
}
