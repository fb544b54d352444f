//! A per-thread cache of static evaluations by position key, kept across
//! the searches of a game: a position met again (by another move order,
//! in the next iteration or the next move's search) is not evaluated anew.

use super::Tuning;
use super::eval::TermPercents;
use super::nnue::NetworkRef;

/// Entries of one thread's cache: 512 KiB, most of it within the second
/// level cache, and enough for the positions of a search of several
/// seconds.
const SLOTS: usize = 1 << 16;
/// The low bits of an entry hold the score; the key's bits above them
/// tell its position from others of the same slot.
const SCORE_BITS: u32 = 16;
const SCORE_MASK: u64 = (1 << SCORE_BITS) - 1;

/// What produced the cached scores: a cache filled by one evaluator is
/// never read by another.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Evaluator {
    Network(NetworkRef),
    HandWritten(TermPercents),
}

impl Evaluator {
    fn of(tuning: &Tuning) -> Evaluator {
        if tuning.use_network {
            Evaluator::Network(tuning.network)
        } else {
            Evaluator::HandWritten(tuning.eval_percent)
        }
    }
}

/// Static evaluations by position key, one entry per slot, the latest
/// kept.
pub(crate) struct EvalCache {
    filled_by: Option<Evaluator>,
    entries: Vec<u64>,
}

impl EvalCache {
    /// An empty cache.
    pub(crate) fn new() -> EvalCache {
        EvalCache {
            filled_by: None,
            entries: vec![0; SLOTS],
        }
    }

    /// Readies the cache for a search evaluating with `tuning`: emptied
    /// when it holds another evaluator's scores.
    pub(crate) fn prepare(&mut self, tuning: &Tuning) {
        let evaluator = Evaluator::of(tuning);
        if self.filled_by != Some(evaluator) {
            self.entries.fill(0);
            self.filled_by = Some(evaluator);
        }
    }

    /// The cached evaluation of the position with `key`, if any.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<i32> {
        let entry = self.entries[slot(key)];
        // An empty entry reads as a score of 0 under a tag of 0; a real
        // position with that tag is simply never cached.
        (entry != 0 && (entry ^ key) & !SCORE_MASK == 0)
            .then_some(i32::from((entry & SCORE_MASK) as u16 as i16))
    }

    /// Hints the processor to fetch the entry of `key`.
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        super::prefetch(&self.entries[slot(key)]);
    }

    /// Stores `score`, the static evaluation of the position with `key`;
    /// a score beyond an `i16` is not stored.
    #[inline]
    pub(crate) fn store(&mut self, key: u64, score: i32) {
        if let Ok(score) = i16::try_from(score) {
            self.entries[slot(key)] = (key & !SCORE_MASK) | u64::from(score as u16);
        }
    }
}

fn slot(key: u64) -> usize {
    // The low bits choose the slot, the high bits stay in the entry.
    (key as usize) & (SLOTS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_score_is_found_under_its_key_only() {
        let mut cache = EvalCache::new();
        cache.prepare(&Tuning::default());
        let key = 0x1234_5678_9abc_def0;
        assert_eq!(cache.get(key), None);
        cache.store(key, -321);
        assert_eq!(cache.get(key), Some(-321));
        // Same slot, another position.
        assert_eq!(cache.get(key ^ (1 << 40)), None);
        cache.store(key ^ (1 << 40), 7);
        assert_eq!(cache.get(key), None);
        assert_eq!(cache.get(key ^ (1 << 40)), Some(7));
    }

    #[test]
    fn another_evaluator_empties_the_cache() {
        let mut cache = EvalCache::new();
        let network = Tuning::default();
        cache.prepare(&network);
        cache.store(42 << 20, 100);
        cache.prepare(&network);
        assert_eq!(cache.get(42 << 20), Some(100));
        let hand_written = Tuning {
            use_network: false,
            ..Tuning::default()
        };
        cache.prepare(&hand_written);
        assert_eq!(cache.get(42 << 20), None);
        cache.store(42 << 20, 100);
        let mut reweighted = hand_written;
        reweighted.eval_percent[0] += 1;
        cache.prepare(&reweighted);
        assert_eq!(cache.get(42 << 20), None);
    }
}
