//! One accumulator per ply of the search line, brought up to date lazily:
//! a node only records its position, and the accumulator is computed when
//! an evaluation needs it, from the nearest ancestor that has one. Interior
//! nodes that are never evaluated cost no update at all.

use super::{Accumulator, Network};
use crate::rules::Position;

/// A ply's position and, once computed, its accumulator.
#[derive(Clone, Copy)]
struct Entry {
    position: Position,
    accumulator: Accumulator,
    computed: bool,
}

/// The accumulators of the line being searched, indexed by ply.
pub struct AccumulatorStack {
    network: &'static Network,
    entries: Vec<Entry>,
}

impl AccumulatorStack {
    /// An empty stack for `network`.
    pub fn new(network: &'static Network) -> AccumulatorStack {
        AccumulatorStack {
            network,
            entries: Vec::with_capacity(crate::search::MAX_PLY + 2),
        }
    }

    /// Records that the line now reaches `position` at `ply`; every ply
    /// below must have been set on the way here.
    #[inline]
    pub fn set(&mut self, ply: usize, position: &Position) {
        if let Some(entry) = self.entries.get_mut(ply) {
            if entry.position != *position {
                entry.position = *position;
                entry.computed = false;
            }
            return;
        }
        while self.entries.len() <= ply {
            self.entries.push(Entry {
                position: *position,
                accumulator: Accumulator::EMPTY,
                computed: false,
            });
        }
    }

    /// The evaluation of the position at `ply`, side to move's view.
    #[inline]
    pub fn evaluate(&mut self, ply: usize) -> i32 {
        self.accumulator(ply);
        let entry = &self.entries[ply];
        self.network.evaluate(&entry.accumulator, &entry.position)
    }

    /// The accumulator at `ply`, computing it (and those of the plies
    /// between it and the nearest computed one) if needed.
    pub fn accumulator(&mut self, ply: usize) -> &Accumulator {
        let mut start = ply;
        while !self.entries[start].computed {
            if start == 0 {
                let entry = &mut self.entries[0];
                entry.accumulator = Accumulator::refresh(self.network, &entry.position);
                entry.computed = true;
                break;
            }
            start -= 1;
        }
        for index in start + 1..=ply {
            let (done, rest) = self.entries.split_at_mut(index);
            let parent = &done[index - 1];
            let entry = &mut rest[0];
            entry.accumulator.update_from(
                &parent.accumulator,
                self.network,
                &parent.position,
                &entry.position,
            );
            entry.computed = true;
        }
        &self.entries[ply].accumulator
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{START_FEN, legal_moves, parse_fen};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Random games from the start; every accumulator reached by updates
    /// (one move at a time, and through the lazy stack with the line going
    /// back and forth) equals the one computed from nothing.
    #[test]
    fn incremental_accumulators_equal_a_full_refresh_over_random_games() {
        let network = Network::embedded();
        let mut rng = StdRng::seed_from_u64(11);
        let (mut captures, mut relocations, mut checked) = (0, 0, 0);
        for _ in 0..40 {
            let start = parse_fen(START_FEN).unwrap();
            let mut stack = AccumulatorStack::new(network);
            let mut line = vec![start];
            stack.set(0, &start);
            let mut running = Accumulator::refresh(network, &start);
            for _ in 0..300 {
                let position = *line.last().unwrap();
                let moves = legal_moves(&position);
                if moves.is_empty() {
                    break;
                }
                let mv = moves.as_slice()[rng.random_range(0..moves.len())];
                let next = position.make_move(mv);
                if position.captured(position.side_to_move()) != 0 {
                    relocations += 1;
                }
                if next.captured(!position.side_to_move())
                    != position.captured(!position.side_to_move())
                {
                    captures += 1;
                }
                let parent = running;
                running.update_from(&parent, network, &position, &next);
                assert_eq!(running, Accumulator::refresh(network, &next));
                line.push(next);
                let ply = line.len() - 1;
                stack.set(ply, &next);
                // Evaluate only now and then, so that updates span plies.
                if rng.random_range(0..3) == 0 {
                    assert_eq!(
                        *stack.accumulator(ply),
                        Accumulator::refresh(network, &next)
                    );
                    checked += 1;
                }
                // Sometimes the line steps back and takes another move.
                if ply > 2 && rng.random_range(0..4) == 0 {
                    line.truncate(ply - 1);
                    running = Accumulator::refresh(network, line.last().unwrap());
                }
            }
        }
        assert!(
            captures > 100 && relocations > 100 && checked > 1000,
            "{captures} captures, {relocations} relocations, {checked} checks"
        );
    }
}
