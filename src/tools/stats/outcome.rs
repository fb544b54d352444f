//! The result of one game and of a pair of games (one opening, colours
//! swapped), from the first engine's side.

/// The result of one game from the first engine's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameOutcome {
    /// The first engine won.
    Win,
    /// The game was drawn.
    Draw,
    /// The first engine lost.
    Loss,
}

impl GameOutcome {
    /// Points earned by the first engine: 1, 0.5 or 0.
    pub fn points(self) -> f64 {
        f64::from(self.half_points()) / 2.0
    }

    /// Points earned by the first engine counted in half points (2, 1 or 0), exact in integers.
    pub fn half_points(self) -> u8 {
        match self {
            GameOutcome::Win => 2,
            GameOutcome::Draw => 1,
            GameOutcome::Loss => 0,
        }
    }

    /// The same game as seen by the second engine.
    pub fn flipped(self) -> Self {
        match self {
            GameOutcome::Win => GameOutcome::Loss,
            GameOutcome::Draw => GameOutcome::Draw,
            GameOutcome::Loss => GameOutcome::Win,
        }
    }
}

/// The combined result of a game pair (one opening, colours swapped) from the first engine's point of view.
///
/// A win plus a loss and two draws land in the same pentanomial bucket but are kept apart here because
/// the WL/DD ratio distinguishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PairOutcome {
    /// Both games lost (0 points).
    LossLoss,
    /// One loss and one draw (0.5 points).
    LossDraw,
    /// One win and one loss (1 point).
    WinLoss,
    /// Two draws (1 point).
    DrawDraw,
    /// One win and one draw (1.5 points).
    WinDraw,
    /// Both games won (2 points).
    WinWin,
}

impl PairOutcome {
    /// Classifies a pair from its two game outcomes; the order of the games does not matter.
    pub fn from_games(first: GameOutcome, second: GameOutcome) -> Self {
        match first.half_points() + second.half_points() {
            0 => PairOutcome::LossLoss,
            1 => PairOutcome::LossDraw,
            2 if first == GameOutcome::Draw => PairOutcome::DrawDraw,
            2 => PairOutcome::WinLoss,
            3 => PairOutcome::WinDraw,
            _ => PairOutcome::WinWin,
        }
    }

    /// Points of the pair counted in half points, 0 to 4.
    pub fn half_points(self) -> u8 {
        match self {
            PairOutcome::LossLoss => 0,
            PairOutcome::LossDraw => 1,
            PairOutcome::WinLoss | PairOutcome::DrawDraw => 2,
            PairOutcome::WinDraw => 3,
            PairOutcome::WinWin => 4,
        }
    }

    /// Index of the pentanomial bucket in [`Tally::ptnml`] (equal to the half points).
    pub fn bucket(self) -> usize {
        usize::from(self.half_points())
    }

    /// Points of the pair, 0 to 2.
    pub fn points(self) -> f64 {
        f64::from(self.half_points()) / 2.0
    }
}
