//! Logistic and normalized Elo from scores, their 95% error bars, and the
//! likelihood of superiority.

use super::erf::erfc;
use std::f64::consts::LN_10;

/// A point estimate with the half-width of its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The estimated value; may be infinite when the score is 0% or 100%.
    pub value: f64,
    /// Half-width of the 95% interval; infinite when the interval reaches a 0% or 100% score.
    pub error: f64,
}

impl Estimate {
    /// What is reported without any data: nothing is known, so the interval is unbounded.
    pub const NO_DATA: Estimate = Estimate {
        value: 0.0,
        error: f64::INFINITY,
    };
}

/// Two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Normalized-Elo units per unit of "score excess over sigma": 800 / ln 10 (about 347.44).
pub const NELO_SCALE: f64 = 800.0 / LN_10;

/// Pair score on the [0, 1] scale (the mean of the two games) for each pentanomial bucket.
pub(super) const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Game score for the trinomial buckets, ordered losses, draws, wins.
pub(super) const GAME_SCORES: [f64; 3] = [0.0, 0.5, 1.0];

/// Logistic Elo difference for an expected score: -400 * log10(1/s - 1); ±infinity at 0% and 100%.
pub fn score_to_elo(score: f64) -> f64 {
    if score.is_nan() {
        score
    } else if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        // Adding 0.0 turns the -0.0 produced at s = 0.5 into +0.0 so it never prints as "-0.00".
        -400.0 * ((1.0 - score) / score).log10() + 0.0
    }
}

/// Expected score for a logistic Elo difference: 1 / (1 + 10^(-elo/400)).
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Likelihood of superiority: 0.5 * (1 + erf((W - L) / sqrt(2 (W + L)))); 0.5 without decisive games.
pub fn los(wins: u64, losses: u64) -> f64 {
    let decisive = wins as f64 + losses as f64;
    if decisive == 0.0 {
        return 0.5;
    }
    let z = (wins as f64 - losses as f64) / (2.0 * decisive).sqrt();
    // 1 + erf(z) = erfc(-z), and erfc keeps full relative precision far in the losing tail.
    0.5 * erfc(-z)
}

/// Mean and population variance of a discrete distribution; `None` when the weights sum to zero.
pub(super) fn moments(values: &[f64], weights: &[f64]) -> Option<(f64, f64)> {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let mean = values.iter().zip(weights).map(|(v, w)| v * w).sum::<f64>() / total;
    let var = values
        .iter()
        .zip(weights)
        .map(|(v, w)| w * (v - mean) * (v - mean))
        .sum::<f64>()
        / total;
    Some((mean, var))
}

/// Elo with the cutechess-style error bar: map the 95% score interval mean ± Z95 * sqrt(var / units)
/// through [`score_to_elo`] and report half its width (the mapping is not linear, so this is not
/// symmetric around the estimate, but it is what match runners print).
pub(super) fn elo_estimate(mean: f64, var: f64, units: f64) -> Estimate {
    let spread = Z95 * (var / units).sqrt();
    let upper = score_to_elo(mean + spread);
    let lower = score_to_elo(mean - spread);
    let error = if upper.is_finite() && lower.is_finite() {
        (upper - lower) / 2.0
    } else {
        // An interval touching 0% or 100% has no finite Elo width (and inf - inf would be NaN).
        f64::INFINITY
    };
    Estimate {
        value: score_to_elo(mean),
        error,
    }
}

/// Normalized Elo from the mean and variance of a unit that holds `games_per_unit` games (1 for single
/// games, 2 for pairs on the [0, 1] scale).
///
/// The error bar maps mean ± Z95 * sigma_unit / sqrt(units) through the (linear) nElo formula with sigma
/// held fixed, which simplifies to Z95 * 800/ln 10 / sqrt(number of games); that form stays finite even
/// when the observed variance is zero.
pub(super) fn nelo_estimate(mean: f64, var: f64, units: f64, games_per_unit: f64) -> Estimate {
    let game_sd = (var * games_per_unit).sqrt();
    let value = if game_sd > 0.0 {
        (mean - 0.5) / game_sd * NELO_SCALE
    } else if mean > 0.5 {
        // Zero variance means every unit scored the same; a constant edge is an unbounded normalized edge.
        f64::INFINITY
    } else if mean < 0.5 {
        f64::NEG_INFINITY
    } else {
        0.0
    };
    Estimate {
        value,
        error: Z95 * NELO_SCALE / (units * games_per_unit).sqrt(),
    }
}

/// `num / den`, infinite for a positive numerator over zero, `None` for 0 / 0.
pub(super) fn ratio(num: u64, den: u64) -> Option<f64> {
    match (num, den) {
        (0, 0) => None,
        (_, 0) => Some(f64::INFINITY),
        _ => Some(num as f64 / den as f64),
    }
}
