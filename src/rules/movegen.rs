//! Legal move generation: relocations of captured pieces when any are
//! waiting, otherwise steps, never onto a cell between two active enemies.

use super::geometry::{
    Bitboard, CELLS, Direction, OUTER_RING, STEP_SOURCES, STEP_TARGETS, THRONE, cells_of,
    sandwiched_by, shift,
};
use super::position::{Move, Position};
use std::ops::ControlFlow;

/// More than the most moves any position can have (six captured guards
/// with thirty outer cells each is 180).
pub(crate) const MAX_MOVES: usize = 256;

/// A fixed-capacity list of moves that never allocates.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList {
            moves: [Move::NONE; MAX_MOVES],
            len: 0,
        }
    }
}

impl MoveList {
    /// Appends a move (the list must not be full).
    #[inline(always)]
    pub(crate) fn push(&mut self, mv: Move) {
        self.moves[self.len] = mv;
        self.len += 1;
    }

    /// The moves as a slice.
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    /// The moves as a mutable slice (for ordering).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }

    /// How many moves.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Iterates the moves.
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Cells the side to move may not end a move on: between two active enemies.
#[inline(always)]
pub(crate) fn forbidden_cells(position: &Position) -> Bitboard {
    sandwiched_by(position.active(!position.side_to_move()))
}

/// The cells a relocation of the side to move may use, and the pieces that
/// may be relocated; `None` when nothing of ours is captured.
#[inline(always)]
fn relocation(position: &Position, allowed: Bitboard) -> Option<(Bitboard, Bitboard)> {
    let captured = position.captured(position.side_to_move());
    if captured == 0 {
        return None;
    }
    let queen = captured & position.queens();
    Some(if queen != 0 {
        (queen, allowed)
    } else {
        (captured, allowed & OUTER_RING)
    })
}

/// Appends every legal move of `position` to `list`.
#[inline]
pub(crate) fn generate_legal(position: &Position, list: &mut MoveList) {
    generate_legal_to(position, CELLS, list);
}

/// Appends the legal moves of `position` that end on a cell of `targets`
/// to `list`, in the order [`generate_legal`] lists them.
pub(crate) fn generate_legal_to(position: &Position, targets: Bitboard, list: &mut MoveList) {
    if position.formation_outcome().is_some() {
        return;
    }
    let us = position.side_to_move();
    let allowed = position.empty_cells() & !forbidden_cells(position) & targets;
    if let Some((movers, targets)) = relocation(position, allowed) {
        for from in cells_of(movers) {
            for to in cells_of(targets) {
                list.push(Move::new(from, to));
            }
        }
        return;
    }
    let active = position.active(us);
    let guards = active & !position.queens();
    Direction::each(|index, direction| {
        let targets = shift(guards & STEP_SOURCES[index], direction) & allowed & !THRONE;
        for to in cells_of(targets) {
            list.push(Move::new(to.step_back(direction), to));
        }
    });
    for from in cells_of(active & position.queens()) {
        for to in cells_of(STEP_TARGETS[from.index()] & allowed) {
            list.push(Move::new(from, to));
        }
    }
}

/// The legal moves of `position` as a new list.
pub fn legal_moves(position: &Position) -> MoveList {
    let mut list = MoveList::default();
    generate_legal(position, &mut list);
    list
}

/// Visits the moves of the side to move kind by kind, as (how many pieces
/// may make them, the cells each may reach): the relocation when one is
/// due, else the guards' steps in each direction and each queen's steps.
/// `visit` may break off, for a caller who needs only the first.
#[inline(always)]
fn visit_move_sets(
    position: &Position,
    mut visit: impl FnMut(u32, Bitboard) -> ControlFlow<()>,
) -> ControlFlow<()> {
    if position.formation_outcome().is_some() {
        return ControlFlow::Continue(());
    }
    let allowed = position.empty_cells() & !forbidden_cells(position);
    if let Some((movers, targets)) = relocation(position, allowed) {
        return visit(movers.count_ones(), targets);
    }
    let active = position.active(position.side_to_move());
    let guards = active & !position.queens();
    Direction::try_each(|index, direction| {
        visit(
            1,
            shift(guards & STEP_SOURCES[index], direction) & allowed & !THRONE,
        )
    })?;
    for from in cells_of(active & position.queens()) {
        visit(1, STEP_TARGETS[from.index()] & allowed)?;
    }
    ControlFlow::Continue(())
}

/// Whether the side to move has a legal move: without one it has lost. It
/// stops at the first kind of move found, where counting would go on.
#[inline]
pub fn has_legal_move(position: &Position) -> bool {
    visit_move_sets(position, |pieces, targets| {
        if pieces != 0 && targets != 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

/// The number of legal moves, without listing them (perft's last ply).
#[inline]
pub fn count_legal(position: &Position) -> u64 {
    let mut count = 0;
    let _ = visit_move_sets(position, |pieces, targets| {
        count += u64::from(pieces) * u64::from(targets.count_ones());
        ControlFlow::Continue(())
    });
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{START_FEN, parse_fen};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Over random games, relocations included, the moves to a set of
    /// cells are the legal moves that end there, in the same order, and a
    /// position has a legal move exactly when it lists one.
    #[test]
    fn moves_to_targets_are_the_legal_moves_ending_there_in_order() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut relocations = 0;
        for _ in 0..30 {
            let mut position = parse_fen(START_FEN).unwrap();
            for _ in 0..200 {
                let all = legal_moves(&position);
                if all.is_empty() {
                    assert!(!has_legal_move(&position));
                    break;
                }
                if position.captured(position.side_to_move()) != 0 {
                    relocations += 1;
                }
                let targets = rng.random::<u128>() & CELLS;
                let mut to_targets = MoveList::default();
                generate_legal_to(&position, targets, &mut to_targets);
                let filtered: Vec<Move> = all
                    .iter()
                    .copied()
                    .filter(|mv| targets & mv.to().bit() != 0)
                    .collect();
                assert_eq!(to_targets.as_slice(), filtered.as_slice());
                assert!(has_legal_move(&position));
                position = position.make_move(all.as_slice()[rng.random_range(0..all.len())]);
            }
        }
        assert!(relocations > 0, "the games reached no relocation");
    }
}
