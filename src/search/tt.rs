//! The transposition table: buckets of four lock-free entries shared by all
//! search threads, replaced by depth and age, with mate scores stored
//! relative to the node that stored them.
//!
//! Each entry is two atomic words: the packed data and the key xor-ed with
//! it. A torn write (one word from one thread, one from another) then fails
//! the key check instead of returning a mixed entry.

use super::{Bound, MATE_BOUND};
use crate::rules::{Cell, Move};
use std::sync::atomic::{AtomicU64, Ordering};

const ENTRIES_PER_BUCKET: usize = 4;
/// Buckets looked at to estimate the fill.
const HASHFULL_SAMPLE: usize = 250;

/// What a probe found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TtHit {
    /// The best (or refuting) move, if one was stored.
    pub mv: Option<Move>,
    /// The score, already adjusted to the probing node's ply.
    pub score: i32,
    /// Remaining depth of the search that stored it.
    pub depth: i32,
    /// How `score` relates to the true value.
    pub bound: Bound,
}

#[derive(Default)]
struct Entry {
    check: AtomicU64,
    data: AtomicU64,
}

#[repr(align(64))]
#[derive(Default)]
struct Bucket {
    entries: [Entry; ENTRIES_PER_BUCKET],
}

/// Packed layout of an entry's data word, low bits first: move (16: from
/// index 7 bits, to index 7 bits, a presence bit), score (16), unused (16),
/// depth (8), bound (2), age (6).
#[derive(Clone, Copy)]
struct Data(u64);

impl Data {
    fn pack(mv: Option<Move>, score: i32, depth: i32, bound: Bound, age: u8) -> Data {
        let mv_bits = mv.map_or(0u64, |m| {
            (m.from().index() as u64) | ((m.to().index() as u64) << 7) | (1 << 14)
        });
        let bound_bits = match bound {
            Bound::Exact => 0u64,
            Bound::Lower => 1,
            Bound::Upper => 2,
        };
        Data(
            mv_bits
                | ((score as i16 as u16 as u64) << 16)
                | ((depth.clamp(0, 255) as u64) << 48)
                | (bound_bits << 56)
                | (((age & 63) as u64) << 58),
        )
    }

    fn mv(self) -> Option<Move> {
        if self.0 & (1 << 14) == 0 {
            return None;
        }
        let from = Cell::from_index((self.0 & 127) as u8)?;
        let to = Cell::from_index(((self.0 >> 7) & 127) as u8)?;
        Some(Move::new(from, to))
    }

    fn score(self) -> i32 {
        (self.0 >> 16) as u16 as i16 as i32
    }

    fn depth(self) -> i32 {
        ((self.0 >> 48) & 255) as i32
    }

    fn bound(self) -> Bound {
        match (self.0 >> 56) & 3 {
            0 => Bound::Exact,
            1 => Bound::Lower,
            _ => Bound::Upper,
        }
    }

    fn age(self) -> u8 {
        ((self.0 >> 58) & 63) as u8
    }
}

impl TtHit {
    /// Whether the stored score settles a search of window (alpha, beta),
    /// given enough depth: exact, or a bound on the window's far side.
    pub(crate) fn decides(&self, alpha: i32, beta: i32) -> bool {
        match self.bound {
            Bound::Exact => true,
            Bound::Lower => self.score >= beta,
            Bound::Upper => self.score <= alpha,
        }
    }

    /// Whether the stored score, not a mate, tells more of the node's worth
    /// than the static evaluation `eval`: exact, or a bound beyond `eval` on
    /// its own side.
    pub(crate) fn bounds_beyond(&self, eval: i32) -> bool {
        self.score.abs() < MATE_BOUND
            && match self.bound {
                Bound::Exact => true,
                Bound::Lower => self.score > eval,
                Bound::Upper => self.score < eval,
            }
    }
}

/// Converts a score seen at `ply` into one relative to the storing node, so
/// a mate found through a transposition keeps its true distance.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// A table size whose memory the system would not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableTooLarge {
    /// The size asked for, in MiB.
    pub mib: usize,
    /// What the system said it had free, in MiB, where it said.
    pub available_mib: Option<u64>,
}

impl std::error::Error for TableTooLarge {}

impl std::fmt::Display for TableTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot allocate {} MiB for the hash table", self.mib)?;
        match self.available_mib {
            Some(available) => write!(f, ": {available} MiB available"),
            None => Ok(()),
        }
    }
}

/// The memory the system can give at once, in MiB, where it says: Linux's
/// `MemAvailable`, bounded by the control group's limit. An allocation is
/// granted beyond it (the pages are only promised), and touching them
/// then brings the out-of-memory killer instead of an error, so a table is
/// checked against this first.
fn available_mib() -> Option<u64> {
    let kib_field = |text: &str, name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse::<u64>().ok())
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let system = kib_field(&meminfo, "MemAvailable:")? / 1024;
    let read_bytes = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
    };
    // "max" (no limit) does not parse, and leaves the system's figure.
    let group = read_bytes("/sys/fs/cgroup/memory.max").map(|limit| {
        let used = read_bytes("/sys/fs/cgroup/memory.current").unwrap_or(0);
        limit.saturating_sub(used) >> 20
    });
    Some(group.map_or(system, |group| group.min(system)))
}

/// The shared table.
pub(crate) struct TranspositionTable {
    buckets: Vec<Bucket>,
    age: u8,
}

impl TranspositionTable {
    /// A table using at most `mib` MiB (at least one bucket), or an error
    /// where the system will not give the memory: the size comes from the
    /// user (`setoption name Hash`, `--hash`).
    pub(crate) fn new(mib: usize) -> Result<TranspositionTable, TableTooLarge> {
        let count = (mib.saturating_mul(1 << 20) / size_of::<Bucket>()).max(1);
        let available_mib = available_mib();
        let refused = TableTooLarge { mib, available_mib };
        if available_mib
            .is_some_and(|available| u64::try_from(mib).map_or(true, |mib| mib > available))
        {
            return Err(refused);
        }
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(count).map_err(|_| refused)?;
        buckets.resize_with(count, Bucket::default);
        Ok(TranspositionTable { buckets, age: 0 })
    }

    /// Empties every entry.
    pub(crate) fn clear(&mut self) {
        for bucket in &mut self.buckets {
            for entry in &mut bucket.entries {
                *entry.check.get_mut() = 0;
                *entry.data.get_mut() = 0;
            }
        }
        self.age = 0;
    }

    /// Marks the start of a new search: older entries become cheaper to
    /// replace.
    pub(crate) fn new_search(&mut self) {
        self.age = (self.age + 1) & 63;
    }

    fn bucket(&self, key: u64) -> &Bucket {
        let index = ((key as u128 * self.buckets.len() as u128) >> 64) as usize;
        &self.buckets[index]
    }

    /// Hints the processor to fetch the bucket of `key`.
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        super::prefetch(self.bucket(key));
    }

    /// Looks `key` up, adjusting mate scores to `ply`.
    pub(crate) fn probe(&self, key: u64, ply: usize) -> Option<TtHit> {
        for entry in &self.bucket(key).entries {
            let data = entry.data.load(Ordering::Relaxed);
            let check = entry.check.load(Ordering::Relaxed);
            if data != 0 && check ^ data == key {
                let data = Data(data);
                return Some(TtHit {
                    mv: data.mv(),
                    score: score_from_tt(data.score(), ply),
                    depth: data.depth(),
                    bound: data.bound(),
                });
            }
        }
        None
    }

    /// Stores a search result for `key` found at `ply`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store(
        &self,
        key: u64,
        ply: usize,
        mv: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
    ) {
        let bucket = self.bucket(key);
        let mut victim = &bucket.entries[0];
        let mut victim_worth = i32::MAX;
        for entry in &bucket.entries {
            let data = entry.data.load(Ordering::Relaxed);
            let check = entry.check.load(Ordering::Relaxed);
            if data == 0 || check ^ data == key {
                let old = Data(data);
                // Keep a deeper result of this search unless the new one is
                // exact; keep the old move when the new result has none.
                if data != 0
                    && old.age() == self.age
                    && bound != Bound::Exact
                    && old.depth() > depth + 2
                {
                    return;
                }
                let mv = mv.or(if data != 0 { old.mv() } else { None });
                self.write(entry, key, mv, score_to_tt(score, ply), depth, bound);
                return;
            }
            let old = Data(data);
            let staleness = (self.age.wrapping_sub(old.age()) & 63) as i32;
            let worth = old.depth() - 8 * staleness;
            if worth < victim_worth {
                victim_worth = worth;
                victim = entry;
            }
        }
        self.write(victim, key, mv, score_to_tt(score, ply), depth, bound);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        entry: &Entry,
        key: u64,
        mv: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
    ) {
        let data = Data::pack(mv, score, depth, bound, self.age).0;
        entry.data.store(data, Ordering::Relaxed);
        entry.check.store(key ^ data, Ordering::Relaxed);
    }

    /// How full the table is with entries of the current search, per mille,
    /// estimated from the first buckets.
    pub(crate) fn hashfull(&self) -> u32 {
        let sample = &self.buckets[..HASHFULL_SAMPLE.min(self.buckets.len())];
        let used: usize = sample
            .iter()
            .flat_map(|bucket| bucket.entries.iter())
            .filter(|entry| {
                let data = entry.data.load(Ordering::Relaxed);
                data != 0 && Data(data).age() == self.age
            })
            .count();
        (used * 1000 / (sample.len() * ENTRIES_PER_BUCKET)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;

    fn some_move() -> Move {
        Move::new(
            Cell::from_coords(5, 0).unwrap(),
            Cell::from_coords(5, 1).unwrap(),
        )
    }

    #[test]
    fn a_stored_entry_is_found_with_its_fields() {
        let table = TranspositionTable::new(1).unwrap();
        table.store(0xDEAD_BEEF, 3, Some(some_move()), -42, 7, Bound::Lower);
        let hit = table.probe(0xDEAD_BEEF, 3).expect("stored");
        assert_eq!(hit.mv, Some(some_move()));
        assert_eq!(hit.score, -42);
        assert_eq!(hit.depth, 7);
        assert_eq!(hit.bound, Bound::Lower);
        assert_eq!(table.probe(0xDEAD_BEEE, 3), None);
    }

    #[test]
    fn mate_scores_keep_their_distance_from_the_probing_node() {
        let table = TranspositionTable::new(1).unwrap();
        // Stored at ply 4: a win 3 plies below that node.
        table.store(99, 4, None, MATE - 7, 5, Bound::Exact);
        assert_eq!(table.probe(99, 4).unwrap().score, MATE - 7);
        // Reached again at ply 2, the same win is 2 plies nearer the root.
        assert_eq!(table.probe(99, 2).unwrap().score, MATE - 5);
        table.store(100, 6, None, -MATE + 10, 5, Bound::Exact);
        assert_eq!(table.probe(100, 1).unwrap().score, -MATE + 5);
    }

    #[test]
    fn a_bound_tells_more_than_the_evaluation_only_beyond_it() {
        let hit = |score, bound| TtHit {
            mv: None,
            score,
            depth: 3,
            bound,
        };
        assert!(hit(50, Bound::Lower).bounds_beyond(20));
        assert!(!hit(10, Bound::Lower).bounds_beyond(20));
        assert!(hit(10, Bound::Upper).bounds_beyond(20));
        assert!(!hit(50, Bound::Upper).bounds_beyond(20));
        assert!(hit(-300, Bound::Exact).bounds_beyond(20));
        assert!(!hit(MATE - 9, Bound::Lower).bounds_beyond(20));
    }

    #[test]
    fn clear_forgets_and_hashfull_counts_current_entries() {
        let mut table = TranspositionTable::new(1).unwrap();
        assert_eq!(table.hashfull(), 0);
        for key in 1..200_000u64 {
            table.store(
                key.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                0,
                None,
                0,
                1,
                Bound::Exact,
            );
        }
        assert!(table.hashfull() > 500, "{}", table.hashfull());
        table.new_search();
        assert_eq!(table.hashfull(), 0);
        table.clear();
        assert_eq!(table.probe(0x9E37_79B9_7F4A_7C15, 0), None);
    }

    #[test]
    fn a_shallow_result_does_not_evict_a_deep_one_of_the_same_search() {
        let table = TranspositionTable::new(1).unwrap();
        table.store(5, 0, Some(some_move()), 10, 12, Bound::Lower);
        table.store(5, 0, None, 20, 2, Bound::Upper);
        let hit = table.probe(5, 0).unwrap();
        assert_eq!((hit.depth, hit.score), (12, 10));
        table.store(5, 0, None, 30, 3, Bound::Exact);
        let hit = table.probe(5, 0).unwrap();
        assert_eq!((hit.depth, hit.score, hit.mv), (3, 30, Some(some_move())));
    }
}
