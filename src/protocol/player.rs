//! Who answers `go`: the searching engine, or a uniformly random mover used
//! as a weak baseline. The protocol loop is the same for both.

use crate::rules::{Game, legal_moves};
use crate::search::{
    Engine, EngineOptions, Score, SearchControl, SearchLimits, SearchOutcome, SearchReport,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

/// Something that picks a move when the protocol says `go`. It runs on the
/// search thread, so it must be `Send`.
pub(crate) trait Player: Send {
    /// The name announced by `id name`.
    fn name(&self) -> String;

    /// Takes new option values (after `setoption`); on an error (a hash
    /// table the system will not give) keeps the old ones.
    fn configure(&mut self, options: EngineOptions) -> Result<(), String>;

    /// Forgets everything learned so far (`ucinewgame`, `Clear Hash`).
    fn clear(&mut self);

    /// Chooses a move in the current position of `game`, which is not over,
    /// within `limits`; returns early when `control.stop` is set, and calls
    /// `report` for each line worth an `info` reply.
    fn think(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome;
}

impl Player for Engine {
    fn name(&self) -> String {
        format!("agon {}", env!("CARGO_PKG_VERSION"))
    }

    fn configure(&mut self, options: EngineOptions) -> Result<(), String> {
        self.set_options(options).map_err(|e| e.to_string())
    }

    fn clear(&mut self) {
        Engine::clear(self);
    }

    fn think(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome {
        self.search(game, limits, control, report)
    }
}

/// Plays a uniformly random legal move (among `searchmoves` when given),
/// instantly and without reports.
pub(crate) struct RandomPlayer {
    rng: StdRng,
}

impl RandomPlayer {
    /// A random player; the same seed gives the same moves in the same games.
    pub(crate) fn new(seed: Option<u64>) -> RandomPlayer {
        let rng = match seed {
            Some(seed) => StdRng::seed_from_u64(seed),
            None => StdRng::from_os_rng(),
        };
        RandomPlayer { rng }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        format!("agon-random {}", env!("CARGO_PKG_VERSION"))
    }

    fn configure(&mut self, _options: EngineOptions) -> Result<(), String> {
        Ok(())
    }

    fn clear(&mut self) {}

    fn think(
        &mut self,
        game: &Game,
        limits: &SearchLimits,
        _control: &SearchControl,
        _report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome {
        let legal = legal_moves(game.position());
        let candidates: Vec<_> = legal
            .iter()
            .copied()
            .filter(|mv| limits.searchmoves.is_empty() || limits.searchmoves.contains(mv))
            .collect();
        SearchOutcome {
            best: candidates.choose(&mut self.rng).copied(),
            ponder: None,
            score: Score::Centi(0),
            depth: 0,
            nodes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{START_FEN, parse_fen};

    fn pick(player: &mut RandomPlayer, game: &Game, limits: &SearchLimits) -> String {
        let outcome = player.think(game, limits, &SearchControl::default(), &mut |_| {});
        outcome.best.expect("a move").to_string()
    }

    #[test]
    fn random_moves_are_legal_seeded_and_varied() {
        let game = Game::new(parse_fen(START_FEN).unwrap());
        let legal: Vec<String> = legal_moves(game.position())
            .iter()
            .map(ToString::to_string)
            .collect();
        let limits = SearchLimits::default();
        let mut first = RandomPlayer::new(Some(7));
        let mut second = RandomPlayer::new(Some(7));
        let picks: Vec<String> = (0..50).map(|_| pick(&mut first, &game, &limits)).collect();
        let again: Vec<String> = (0..50).map(|_| pick(&mut second, &game, &limits)).collect();
        assert_eq!(picks, again);
        assert!(picks.iter().all(|mv| legal.contains(mv)));
        let mut distinct = picks.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() > 5, "{distinct:?}");
    }

    #[test]
    fn random_moves_respect_searchmoves() {
        let game = Game::new(parse_fen(START_FEN).unwrap());
        let only = legal_moves(game.position()).as_slice()[3];
        let limits = SearchLimits {
            searchmoves: vec![only],
            ..SearchLimits::default()
        };
        let mut player = RandomPlayer::new(Some(1));
        for _ in 0..10 {
            assert_eq!(pick(&mut player, &game, &limits), only.to_string());
        }
    }
}
