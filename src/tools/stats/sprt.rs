//! The sequential probability ratio test over trinomial or pentanomial
//! results (the normal approximation of the generalized SPRT).

use super::elo::{GAME_SCORES, NELO_SCALE, PAIR_SCORES, elo_to_score, moments};
use super::tally::Tally;

/// Weight given to an empty bucket when estimating the SPRT variance. Without it a sample where every
/// unit landed in the same bucket has zero variance and the LLR would divide by zero; it is small
/// enough not to move the LLR of any real sample noticeably.
pub(super) const EMPTY_BUCKET_WEIGHT: f64 = 1e-3;

/// How the SPRT hypotheses elo0 and elo1 are expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SprtModel {
    /// Normalized Elo (fastchess's default): the bounds scale with the observed standard deviation.
    Normalized,
    /// Plain logistic Elo: the bounds map to scores 1 / (1 + 10^(-elo/400)).
    Logistic,
}

/// Which way a finished SPRT went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SprtDecision {
    /// The LLR reached the lower bound: the first engine is no better than elo0.
    H0Accepted,
    /// The LLR reached the upper bound: the first engine is at least elo1 better.
    H1Accepted,
}

/// Parameters of a sequential probability ratio test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprtConfig {
    /// Elo difference of the null hypothesis.
    pub elo0: f64,
    /// Elo difference of the alternative hypothesis; must exceed `elo0`.
    pub elo1: f64,
    /// Type I error rate (accepting H1 when H0 holds).
    pub alpha: f64,
    /// Type II error rate (accepting H0 when H1 holds).
    pub beta: f64,
    /// Scale of `elo0` and `elo1`.
    pub model: SprtModel,
}

/// The state of an SPRT after some games.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprtStatus {
    /// Current log-likelihood ratio.
    pub llr: f64,
    /// Lower bound ln(beta / (1 - alpha)); reaching it accepts H0.
    pub lower: f64,
    /// Upper bound ln((1 - beta) / alpha); reaching it accepts H1.
    pub upper: f64,
    /// The decision once a bound has been reached.
    pub decision: Option<SprtDecision>,
}

impl SprtStatus {
    /// How far the LLR has travelled towards the bound on its side, in percent (100 or more when reached).
    pub fn bound_percentage(&self) -> f64 {
        let bound = if self.llr >= 0.0 {
            self.upper
        } else {
            self.lower
        };
        if bound == 0.0 || !bound.is_finite() {
            0.0
        } else {
            self.llr / bound * 100.0
        }
    }
}

/// Why SPRT parameters were refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SprtError {
    /// elo0 is not below elo1, or one of them is not a finite number.
    Bounds { elo0: f64, elo1: f64 },
    /// alpha or beta lies outside (0, 1).
    Probability { alpha: f64, beta: f64 },
    /// alpha + beta is 1 or more.
    ErrorSum { alpha: f64, beta: f64 },
}

impl std::fmt::Display for SprtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SprtError::Bounds { elo0, elo1 } => {
                write!(f, "SPRT: elo0 ({elo0}) must be less than elo1 ({elo1})")
            }
            SprtError::Probability { alpha, beta } => write!(
                f,
                "SPRT: alpha ({alpha}) and beta ({beta}) must lie strictly between 0 and 1"
            ),
            SprtError::ErrorSum { alpha, beta } => {
                write!(
                    f,
                    "SPRT: alpha + beta ({}) must be less than 1",
                    alpha + beta
                )
            }
        }
    }
}

impl std::error::Error for SprtError {}

impl SprtConfig {
    /// A validated configuration: elo0 < elo1, both finite, alpha and beta in (0, 1) with alpha + beta < 1.
    ///
    /// # Errors
    ///
    /// Names the condition that fails and the values given.
    pub fn new(
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        model: SprtModel,
    ) -> Result<Self, SprtError> {
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            return Err(SprtError::Bounds { elo0, elo1 });
        }
        if !(alpha > 0.0 && alpha < 1.0 && beta > 0.0 && beta < 1.0) {
            return Err(SprtError::Probability { alpha, beta });
        }
        if alpha + beta >= 1.0 {
            return Err(SprtError::ErrorSum { alpha, beta });
        }
        Ok(Self {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }

    /// The bound whose crossing accepts H0: ln(beta / (1 - alpha)).
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// The bound whose crossing accepts H1: ln((1 - beta) / alpha).
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The LLR of the tally: pentanomial when pairs exist, trinomial otherwise.
    pub fn llr(&self, tally: &Tally) -> f64 {
        if tally.pairs() > 0 {
            llr_pentanomial(&tally.ptnml, self.elo0, self.elo1, self.model)
        } else {
            llr_trinomial(
                tally.wins,
                tally.draws,
                tally.losses,
                self.elo0,
                self.elo1,
                self.model,
            )
        }
    }

    /// The LLR of the tally together with the bounds and the decision, if one has been reached.
    pub fn status(&self, tally: &Tally) -> SprtStatus {
        let llr = self.llr(tally);
        let lower = self.lower_bound();
        let upper = self.upper_bound();
        let decision = if llr >= upper {
            Some(SprtDecision::H1Accepted)
        } else if llr <= lower {
            Some(SprtDecision::H0Accepted)
        } else {
            None
        };
        SprtStatus {
            llr,
            lower,
            upper,
            decision,
        }
    }
}

/// LLR of H1 (elo1) against H0 (elo0) for pentanomial counts `[LL, LD, WL+DD, WD, WW]`, each pair scored
/// on [0, 1]. Zero without pairs.
pub fn llr_pentanomial(ptnml: &[u64; 5], elo0: f64, elo1: f64, model: SprtModel) -> f64 {
    gsprt_llr(&PAIR_SCORES, ptnml, 2.0, elo0, elo1, model)
}

/// LLR of H1 (elo1) against H0 (elo0) from single-game win/draw/loss counts. Zero without games.
pub fn llr_trinomial(
    wins: u64,
    draws: u64,
    losses: u64,
    elo0: f64,
    elo1: f64,
    model: SprtModel,
) -> f64 {
    gsprt_llr(&GAME_SCORES, &[losses, draws, wins], 1.0, elo0, elo1, model)
}

/// Van den Bergh's normal approximation of the generalized SPRT.
///
/// Treat each unit score (a game, or a pair's mean score) as normal with the sample variance `var`, held
/// fixed under both hypotheses. Summing log N(x; mu1, var) - log N(x; mu0, var) over the n units gives
///   LLR = sum((x - mu0)^2 - (x - mu1)^2) / (2 var) = n (mu1 - mu0) (2 xbar - mu0 - mu1) / (2 var).
/// The hypotheses become expected unit scores mu0 and mu1:
/// - logistic: mu_i = 1 / (1 + 10^(-elo_i / 400)), the same for games and pairs on [0, 1];
/// - normalized: inverting nElo = (mu - 1/2) / sigma_game * 800/ln 10 with
///   sigma_game = sqrt(games_per_unit * var) gives mu_i = 1/2 + elo_i / (800/ln 10) * sigma_game.
///
/// The mean and variance use [`EMPTY_BUCKET_WEIGHT`] for empty buckets, while n stays the real count so
/// that no data means an LLR of exactly zero.
pub(super) fn gsprt_llr<const N: usize>(
    scores: &[f64; N],
    counts: &[u64; N],
    games_per_unit: f64,
    elo0: f64,
    elo1: f64,
    model: SprtModel,
) -> f64 {
    let units: f64 = counts.iter().map(|&c| c as f64).sum();
    if units == 0.0 {
        return 0.0;
    }
    let weights = counts.map(|c| {
        if c == 0 {
            EMPTY_BUCKET_WEIGHT
        } else {
            c as f64
        }
    });
    let Some((mean, var)) = moments(scores, &weights) else {
        return 0.0;
    };
    if var <= 0.0 {
        return 0.0;
    }
    let (mu0, mu1) = match model {
        SprtModel::Logistic => (elo_to_score(elo0), elo_to_score(elo1)),
        SprtModel::Normalized => {
            let game_sd = (games_per_unit * var).sqrt();
            (
                0.5 + elo0 / NELO_SCALE * game_sd,
                0.5 + elo1 / NELO_SCALE * game_sd,
            )
        }
    };
    units * (mu1 - mu0) * (2.0 * mean - mu0 - mu1) / (2.0 * var)
}
