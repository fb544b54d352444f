//! The network's inner loops (adding and removing inputs' weights in the
//! hidden layer, the clipped output dot product) in vector instructions
//! chosen when the program starts (AVX2, else SSE4.1), with a plain loop
//! for other machines that gives the same results bit for bit: every
//! addition wraps at 16 bits and the output sums exactly in 32 bits, in any
//! order.

use super::{HIDDEN, QA};
use std::sync::OnceLock;

/// The instructions the inner loops use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Level {
    /// Plain Rust (vectorised only as far as the compiler's baseline goes).
    Scalar,
    /// 128-bit SSE4.1.
    #[cfg(target_arch = "x86_64")]
    Sse41,
    /// 256-bit AVX2.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Level {
    /// The best level this machine runs, found once.
    #[inline]
    pub fn detected() -> Level {
        static LEVEL: OnceLock<Level> = OnceLock::new();
        *LEVEL.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    return Level::Avx2;
                }
                if std::arch::is_x86_feature_detected!("sse4.1") {
                    return Level::Sse41;
                }
            }
            Level::Scalar
        })
    }

    /// Every level this machine runs, the scalar one first.
    pub fn available() -> Vec<Level> {
        let mut levels = vec![Level::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("sse4.1") {
                levels.push(Level::Sse41);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                levels.push(Level::Avx2);
            }
        }
        levels
    }
}

/// One side's hidden units.
pub type Units = [i16; HIDDEN];

/// Rows of each kind gathered before they are applied in one pass. A move
/// removes and adds a row or two a side (one more of each per capture), so
/// a small batch holds them and is cheap to set up at every node; a refresh
/// takes several batches, but it is rare.
const BATCH: usize = 4;

/// Rows of weights to remove from and add to one side's hidden units,
/// applied together (the units stay in registers meanwhile); a batch that
/// fills up is applied and starts again, so any number of rows is right.
/// The first batch starts from other units than those it writes (an
/// accumulator's parent's, or the input bias), which saves copying them
/// first; a later batch starts from what the one before it wrote.
pub struct Pending<'a> {
    level: Level,
    /// The units the next flush starts from, until the first flush.
    source: Option<&'a Units>,
    removed: [&'a Units; BATCH],
    removed_count: usize,
    added: [&'a Units; BATCH],
    added_count: usize,
}

impl<'a> Pending<'a> {
    /// Nothing pending yet; the rows apply to `source`.
    #[inline]
    pub fn new(level: Level, source: &'a Units) -> Pending<'a> {
        static NOTHING: Units = [0; HIDDEN];
        Pending {
            level,
            source: Some(source),
            removed: [&NOTHING; BATCH],
            removed_count: 0,
            added: [&NOTHING; BATCH],
            added_count: 0,
        }
    }

    /// Subtracts `row` from `values` by the time of [`Pending::flush`].
    #[inline]
    pub fn remove(&mut self, values: &mut Units, row: &'a Units) {
        if self.removed_count == BATCH {
            self.flush(values);
        }
        self.removed[self.removed_count] = row;
        self.removed_count += 1;
    }

    /// Adds `row` to `values` by the time of [`Pending::flush`].
    #[inline]
    pub fn add(&mut self, values: &mut Units, row: &'a Units) {
        if self.added_count == BATCH {
            self.flush(values);
        }
        self.added[self.added_count] = row;
        self.added_count += 1;
    }

    /// Applies every pending row, writing the result to `values`.
    #[inline]
    pub fn flush(&mut self, values: &mut Units) {
        let removed = &self.removed[..self.removed_count];
        let added = &self.added[..self.added_count];
        match self.source.take() {
            Some(source) => apply(self.level, source, values, removed, added),
            None => {
                let current = *values;
                apply(self.level, &current, values, removed, added);
            }
        }
        self.removed_count = 0;
        self.added_count = 0;
    }
}

/// Writes to `target` the units of `source` plus every row of `added` minus
/// every row of `removed`, each addition wrapping at 16 bits.
#[inline]
pub fn apply(
    level: Level,
    source: &Units,
    target: &mut Units,
    removed: &[&Units],
    added: &[&Units],
) {
    match level {
        Level::Scalar => apply_scalar(source, target, removed, added),
        // SAFETY: `Level::detected` and `Level::available` give a level
        // only when the processor runs its instructions.
        #[cfg(target_arch = "x86_64")]
        Level::Sse41 => unsafe { x86::apply_sse41(source, target, removed, added) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { x86::apply_avx2(source, target, removed, added) },
    }
}

/// The dot product of `values` clipped to `0..=QA` with `weights`, in
/// 32 bits.
#[inline]
pub fn clipped_dot(level: Level, values: &Units, weights: &Units) -> i32 {
    match level {
        Level::Scalar => clipped_dot_scalar(values, weights),
        // SAFETY: as in `apply`.
        #[cfg(target_arch = "x86_64")]
        Level::Sse41 => unsafe { x86::clipped_dot_sse41(values, weights) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { x86::clipped_dot_avx2(values, weights) },
    }
}

fn apply_scalar(source: &Units, values: &mut Units, removed: &[&Units], added: &[&Units]) {
    *values = *source;
    for weights in removed {
        for (value, weight) in values.iter_mut().zip(weights.iter()) {
            *value = value.wrapping_sub(*weight);
        }
    }
    for weights in added {
        for (value, weight) in values.iter_mut().zip(weights.iter()) {
            *value = value.wrapping_add(*weight);
        }
    }
}

fn clipped_dot_scalar(values: &Units, weights: &Units) -> i32 {
    values
        .iter()
        .zip(weights)
        .fold(0i32, |sum, (&value, &weight)| {
            sum.wrapping_add(i32::from(value.clamp(0, QA as i16)) * i32::from(weight))
        })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{HIDDEN, QA, Units};
    use std::arch::x86_64::*;

    /// 16-bit lanes per 256-bit register.
    const WIDE: usize = 16;
    /// 16-bit lanes per 128-bit register.
    const NARROW: usize = 8;

    /// The hidden layer stays in registers (eight of them) while every
    /// changed input is applied, then is stored once.
    #[target_feature(enable = "avx2")]
    pub(super) fn apply_avx2(
        source: &Units,
        values: &mut Units,
        removed: &[&Units],
        added: &[&Units],
    ) {
        const REGISTERS: usize = HIDDEN / WIDE;
        // SAFETY: every offset is below HIDDEN, and unaligned loads and
        // stores accept any address.
        unsafe {
            let mut sums: [__m256i; REGISTERS] = std::array::from_fn(|index| {
                _mm256_loadu_si256(source.as_ptr().add(index * WIDE).cast())
            });
            for weights in removed {
                for (index, sum) in sums.iter_mut().enumerate() {
                    let row = _mm256_loadu_si256(weights.as_ptr().add(index * WIDE).cast());
                    *sum = _mm256_sub_epi16(*sum, row);
                }
            }
            for weights in added {
                for (index, sum) in sums.iter_mut().enumerate() {
                    let row = _mm256_loadu_si256(weights.as_ptr().add(index * WIDE).cast());
                    *sum = _mm256_add_epi16(*sum, row);
                }
            }
            for (index, sum) in sums.iter().enumerate() {
                _mm256_storeu_si256(values.as_mut_ptr().add(index * WIDE).cast(), *sum);
            }
        }
    }

    /// As [`apply_avx2`], in two halves of eight 128-bit registers.
    #[target_feature(enable = "sse4.1")]
    pub(super) fn apply_sse41(
        source: &Units,
        values: &mut Units,
        removed: &[&Units],
        added: &[&Units],
    ) {
        const REGISTERS: usize = HIDDEN / NARROW / 2;
        for half in 0..2 {
            let base = half * REGISTERS * NARROW;
            // SAFETY: every offset is below HIDDEN; unaligned accesses.
            unsafe {
                let mut sums: [__m128i; REGISTERS] = std::array::from_fn(|index| {
                    _mm_loadu_si128(source.as_ptr().add(base + index * NARROW).cast())
                });
                for weights in removed {
                    for (index, sum) in sums.iter_mut().enumerate() {
                        let row =
                            _mm_loadu_si128(weights.as_ptr().add(base + index * NARROW).cast());
                        *sum = _mm_sub_epi16(*sum, row);
                    }
                }
                for weights in added {
                    for (index, sum) in sums.iter_mut().enumerate() {
                        let row =
                            _mm_loadu_si128(weights.as_ptr().add(base + index * NARROW).cast());
                        *sum = _mm_add_epi16(*sum, row);
                    }
                }
                for (index, sum) in sums.iter().enumerate() {
                    _mm_storeu_si128(values.as_mut_ptr().add(base + index * NARROW).cast(), *sum);
                }
            }
        }
    }

    /// Clipped values times weights, adjacent pairs summed into 32 bits
    /// (`madd`); a pair sums at most 2 * 255 * 32768, far from overflow.
    #[target_feature(enable = "avx2")]
    pub(super) fn clipped_dot_avx2(values: &Units, weights: &Units) -> i32 {
        // SAFETY: every offset is below HIDDEN; unaligned loads.
        unsafe {
            let zero = _mm256_setzero_si256();
            let top = _mm256_set1_epi16(QA as i16);
            let mut sum = _mm256_setzero_si256();
            for index in 0..HIDDEN / WIDE {
                let value = _mm256_loadu_si256(values.as_ptr().add(index * WIDE).cast());
                let weight = _mm256_loadu_si256(weights.as_ptr().add(index * WIDE).cast());
                let clipped = _mm256_min_epi16(_mm256_max_epi16(value, zero), top);
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(clipped, weight));
            }
            let halves = _mm_add_epi32(
                _mm256_castsi256_si128(sum),
                _mm256_extracti128_si256::<1>(sum),
            );
            horizontal_sum(halves)
        }
    }

    /// As [`clipped_dot_avx2`] in 128-bit registers.
    #[target_feature(enable = "sse4.1")]
    pub(super) fn clipped_dot_sse41(values: &Units, weights: &Units) -> i32 {
        // SAFETY: every offset is below HIDDEN; unaligned loads.
        unsafe {
            let zero = _mm_setzero_si128();
            let top = _mm_set1_epi16(QA as i16);
            let mut sum = _mm_setzero_si128();
            for index in 0..HIDDEN / NARROW {
                let value = _mm_loadu_si128(values.as_ptr().add(index * NARROW).cast());
                let weight = _mm_loadu_si128(weights.as_ptr().add(index * NARROW).cast());
                let clipped = _mm_min_epi16(_mm_max_epi16(value, zero), top);
                sum = _mm_add_epi32(sum, _mm_madd_epi16(clipped, weight));
            }
            horizontal_sum(sum)
        }
    }

    /// The four 32-bit lanes of `sum` added.
    #[target_feature(enable = "sse4.1")]
    fn horizontal_sum(sum: __m128i) -> i32 {
        let pairs = _mm_add_epi32(sum, _mm_shuffle_epi32::<0b01_00_11_10>(sum));
        let total = _mm_add_epi32(pairs, _mm_shuffle_epi32::<0b10_11_00_01>(pairs));
        _mm_cvtsi128_si32(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn random_units(rng: &mut StdRng) -> Units {
        // Mostly small values as a trained network has, and now and then
        // the extremes, so that clipping and wrapping are exercised.
        std::array::from_fn(|_| match rng.random_range(0..8) {
            0 => rng.random::<i16>(),
            1 => [i16::MIN, i16::MAX, 0, QA as i16][rng.random_range(0..4)],
            _ => rng.random_range(-600..600),
        })
    }

    #[test]
    fn every_level_gives_the_scalar_results_on_random_weights_and_inputs() {
        let levels = Level::available();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..2000 {
            let start = random_units(&mut rng);
            let rows: Vec<Units> = (0..rng.random_range(0..12))
                .map(|_| random_units(&mut rng))
                .collect();
            let split = rng.random_range(0..=rows.len());
            let removed: Vec<&Units> = rows[..split].iter().collect();
            let added: Vec<&Units> = rows[split..].iter().collect();
            let weights = random_units(&mut rng);
            let mut expected = [0; HIDDEN];
            apply(Level::Scalar, &start, &mut expected, &removed, &added);
            let expected_dot = clipped_dot(Level::Scalar, &start, &weights);
            for &level in &levels {
                let mut values = random_units(&mut rng);
                apply(level, &start, &mut values, &removed, &added);
                assert_eq!(values, expected, "{level:?}");
                assert_eq!(
                    clipped_dot(level, &start, &weights),
                    expected_dot,
                    "{level:?}"
                );
            }
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            assert_eq!(Level::detected(), Level::Avx2);
        }
    }
}
