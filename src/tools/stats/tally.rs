//! Tallies of games and pairs, and the Elo, nElo and ratios they give.

use super::elo::{
    Estimate, GAME_SCORES, PAIR_SCORES, elo_estimate, los, moments, nelo_estimate, ratio,
};
use super::outcome::{GameOutcome, PairOutcome};
use serde::{Deserialize, Serialize};

/// Accumulated results of one engine against another, from the first engine's point of view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tally {
    /// Games won by the first engine.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost by the first engine.
    pub losses: u64,
    /// Game pairs counted by their total score 0, 0.5, 1, 1.5, 2 (index = half points).
    pub ptnml: [u64; 5],
    /// How many of the pairs in `ptnml[2]` were a win and a loss; the rest of that bucket were two draws.
    pub wl_pairs: u64,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a single game that is not (yet) part of a completed pair.
    pub fn add_game(&mut self, outcome: GameOutcome) {
        let counter = match outcome {
            GameOutcome::Win => &mut self.wins,
            GameOutcome::Draw => &mut self.draws,
            GameOutcome::Loss => &mut self.losses,
        };
        *counter = counter.saturating_add(1);
    }

    /// Records both games of a pair and its pentanomial bucket.
    pub fn add_pair(&mut self, first: GameOutcome, second: GameOutcome) {
        self.add_game(first);
        self.add_game(second);
        let pair = PairOutcome::from_games(first, second);
        let bucket = &mut self.ptnml[pair.bucket()];
        *bucket = bucket.saturating_add(1);
        if pair == PairOutcome::WinLoss {
            self.wl_pairs = self.wl_pairs.saturating_add(1);
        }
    }

    /// Adds every count of `other` to this tally.
    pub fn merge(&mut self, other: &Tally) {
        self.wins = self.wins.saturating_add(other.wins);
        self.draws = self.draws.saturating_add(other.draws);
        self.losses = self.losses.saturating_add(other.losses);
        for (mine, theirs) in self.ptnml.iter_mut().zip(other.ptnml) {
            *mine = mine.saturating_add(theirs);
        }
        self.wl_pairs = self.wl_pairs.saturating_add(other.wl_pairs);
    }

    /// Number of games played.
    pub fn games(&self) -> u64 {
        self.wins
            .saturating_add(self.draws)
            .saturating_add(self.losses)
    }

    /// Number of completed game pairs.
    pub fn pairs(&self) -> u64 {
        self.ptnml
            .iter()
            .fold(0u64, |acc, &c| acc.saturating_add(c))
    }

    /// Pairs in the middle bucket that were two draws.
    pub fn dd_pairs(&self) -> u64 {
        self.ptnml[2].saturating_sub(self.wl_pairs)
    }

    /// Points scored by the first engine (a draw is half a point).
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// Fraction of the available points scored by the first engine; 0.5 when no game was played,
    /// so that an empty tally reads as "no difference" rather than as a loss.
    pub fn score(&self) -> f64 {
        match self.games() {
            0 => 0.5,
            n => self.points() / n as f64,
        }
    }

    /// Fraction of games that were drawn (0 without games).
    pub fn draw_ratio(&self) -> f64 {
        match self.games() {
            0 => 0.0,
            n => self.draws as f64 / n as f64,
        }
    }

    /// Fraction of pairs that scored exactly one point (a win and a loss, or two draws); 0 without pairs.
    pub fn pair_draw_ratio(&self) -> f64 {
        match self.pairs() {
            0 => 0.0,
            n => self.ptnml[2] as f64 / n as f64,
        }
    }

    /// Pairs won (1.5 or 2 points) divided by pairs lost (0 or 0.5 points); `None` when both are zero.
    pub fn pairs_ratio(&self) -> Option<f64> {
        ratio(
            self.ptnml[3].saturating_add(self.ptnml[4]),
            self.ptnml[0].saturating_add(self.ptnml[1]),
        )
    }

    /// Win-loss pairs divided by draw-draw pairs; `None` when both are zero.
    pub fn wl_dd_ratio(&self) -> Option<f64> {
        ratio(self.wl_pairs, self.dd_pairs())
    }

    /// Likelihood of superiority of the first engine from the decisive games, see [`los`].
    pub fn los(&self) -> f64 {
        los(self.wins, self.losses)
    }

    /// Elo difference and its 95% error bar from the per-game (trinomial) variance.
    pub fn elo_trinomial(&self) -> Estimate {
        match self.trinomial_moments() {
            Some((mean, var)) => elo_estimate(mean, var, self.games() as f64),
            None => Estimate::NO_DATA,
        }
    }

    /// Elo difference and its 95% error bar from the per-pair (pentanomial) variance; `None` without pairs.
    pub fn elo_pentanomial(&self) -> Option<Estimate> {
        let (mean, var) = self.pentanomial_moments()?;
        Some(elo_estimate(mean, var, self.pairs() as f64))
    }

    /// Normalized Elo and its 95% error bar from the trinomial model.
    ///
    /// nElo = (s - 1/2) / sigma_game * 800 / ln 10, with s the mean game score and sigma_game the
    /// standard deviation of a single game's score (Van den Bergh's definition, as used by fishtest
    /// and fastchess).
    pub fn nelo_trinomial(&self) -> Estimate {
        match self.trinomial_moments() {
            Some((mean, var)) => nelo_estimate(mean, var, self.games() as f64, 1.0),
            None => Estimate::NO_DATA,
        }
    }

    /// Normalized Elo and its 95% error bar from the pentanomial model; `None` without pairs.
    ///
    /// With pair scores on the [0, 1] scale (the mean of the two games), a pair averages two games, so
    /// the per-game deviation the definition asks for is sigma_game = sqrt(2) * sigma_pair (equivalently
    /// sigma_sum / sqrt(2) for pair totals on [0, 2]). Hence nElo = (s - 1/2) / sqrt(2 var_pair) * 800 / ln 10,
    /// the convention of fishtest and fastchess.
    pub fn nelo_pentanomial(&self) -> Option<Estimate> {
        let (mean, var) = self.pentanomial_moments()?;
        Some(nelo_estimate(mean, var, self.pairs() as f64, 2.0))
    }

    /// Elo estimate as reported: pentanomial when pairs exist, trinomial otherwise.
    pub fn elo(&self) -> Estimate {
        self.elo_pentanomial()
            .unwrap_or_else(|| self.elo_trinomial())
    }

    /// Normalized Elo estimate as reported: pentanomial when pairs exist, trinomial otherwise.
    pub fn nelo(&self) -> Estimate {
        self.nelo_pentanomial()
            .unwrap_or_else(|| self.nelo_trinomial())
    }

    fn trinomial_moments(&self) -> Option<(f64, f64)> {
        let weights = [self.losses as f64, self.draws as f64, self.wins as f64];
        moments(&GAME_SCORES, &weights)
    }

    fn pentanomial_moments(&self) -> Option<(f64, f64)> {
        moments(&PAIR_SCORES, &self.ptnml.map(|c| c as f64))
    }
}
