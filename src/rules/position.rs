//! A position: who stands where, which pieces are captured, who is to move,
//! and its Zobrist key, kept up to date as moves are made (copy-make).

use super::geometry::{Bitboard, CELLS, Cell, GRID_SLOTS, NEIGHBOURS, THRONE, THRONE_RING, beyond};
use std::fmt;
use std::ops::Not;

/// One of the two players.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Color {
    /// Moves first.
    White,
    /// Moves second.
    Black,
}

impl Color {
    /// 0 for White, 1 for Black.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The lower-case English name.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

/// The two kinds of piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    /// One per side; the only piece that may enter the throne.
    Queen,
    /// Six per side at most.
    Guard,
}

/// What stands on an occupied cell.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    /// Its owner.
    pub color: Color,
    /// Queen or guard.
    pub kind: Kind,
    /// Captured pieces wait, inert, to be relocated.
    pub captured: bool,
}

impl Piece {
    /// Index into the Zobrist table: 8 possible contents of a cell.
    const fn zobrist_slot(self) -> usize {
        self.color.index() * 4 + (self.kind as usize) * 2 + self.captured as usize
    }
}

/// A move: a step or a relocation, from one cell to another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Move {
    from: Cell,
    to: Cell,
}

impl Move {
    /// A move no position has (from the throne to itself): the filler of
    /// unused list slots, and an absent move where comparing two moves is
    /// cheaper than comparing options.
    pub(crate) const NONE: Move = Move::new(Cell::THRONE, Cell::THRONE);

    /// The move from `from` to `to` (legality is not checked here).
    pub const fn new(from: Cell, to: Cell) -> Move {
        Move { from, to }
    }

    /// The cell the piece leaves.
    pub const fn from(self) -> Cell {
        self.from
    }

    /// The cell the piece ends on.
    pub const fn to(self) -> Cell {
        self.to
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)
    }
}

/// How the formation tests judge a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FormationOutcome {
    /// This side's queen sits on the throne inside six of its guards.
    Won(Color),
    /// This side surrounded the throne with guards while its queen was away.
    Forfeited(Color),
}

/// The step SplitMix64 adds to its state before mixing it.
const SPLIT_MIX_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One SplitMix64 output for `value`: a bijection of the 64-bit numbers in
/// which every input bit changes about half the output bits. The Zobrist
/// keys come from its stream, and the tools seed their jobs' parts with it.
pub const fn split_mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(SPLIT_MIX_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn build_zobrist() -> ([[u64; GRID_SLOTS]; 8], u64) {
    let mut table = [[0u64; GRID_SLOTS]; 8];
    let mut state = 0x0A60_4E20_1842_0001u64;
    let mut slot = 0;
    while slot < 8 {
        let mut index = 0;
        while index < GRID_SLOTS {
            table[slot][index] = split_mix(state);
            state = state.wrapping_add(SPLIT_MIX_GAMMA);
            index += 1;
        }
        slot += 1;
    }
    (table, split_mix(state))
}

const ZOBRIST: ([[u64; GRID_SLOTS]; 8], u64) = build_zobrist();
const ZOBRIST_PIECES: [[u64; GRID_SLOTS]; 8] = ZOBRIST.0;
/// Added to the key when Black is to move.
const ZOBRIST_BLACK_TO_MOVE: u64 = ZOBRIST.1;

#[inline(always)]
fn zobrist(piece: Piece, cell: Cell) -> u64 {
    ZOBRIST_PIECES[piece.zobrist_slot()][cell.index()]
}

/// A complete game position. Small and `Copy`: making a move returns a new one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    colors: [Bitboard; 2],
    queens: Bitboard,
    captured: Bitboard,
    side: Color,
    fullmove: u32,
    key: u64,
}

impl Position {
    /// An empty board with `side` to move.
    pub(crate) fn empty(side: Color, fullmove: u32) -> Position {
        let key = if side == Color::Black {
            ZOBRIST_BLACK_TO_MOVE
        } else {
            0
        };
        Position {
            colors: [0, 0],
            queens: 0,
            captured: 0,
            side,
            fullmove,
            key,
        }
    }

    /// Puts `piece` on an empty `cell`; used when building positions.
    pub(crate) fn put(&mut self, cell: Cell, piece: Piece) {
        debug_assert!(self.piece_at(cell).is_none());
        let bit = cell.bit();
        self.colors[piece.color.index()] |= bit;
        if piece.kind == Kind::Queen {
            self.queens |= bit;
        }
        if piece.captured {
            self.captured |= bit;
        }
        self.key ^= zobrist(piece, cell);
    }

    /// The side to move.
    pub const fn side_to_move(&self) -> Color {
        self.side
    }

    /// The full-move number (informational only).
    pub(crate) const fn fullmove(&self) -> u32 {
        self.fullmove
    }

    /// The Zobrist key: every cell's content and the side to move.
    pub const fn key(&self) -> u64 {
        self.key
    }

    /// The key computed from nothing, to check the incremental one.
    pub fn key_from_scratch(&self) -> u64 {
        let mut key = if self.side == Color::Black {
            ZOBRIST_BLACK_TO_MOVE
        } else {
            0
        };
        for cell in Cell::all() {
            if let Some(piece) = self.piece_at(cell) {
                key ^= zobrist(piece, cell);
            }
        }
        key
    }

    /// All pieces of `color`, captured or not.
    pub(crate) const fn pieces(&self, color: Color) -> Bitboard {
        self.colors[color.index()]
    }

    /// The pieces of `color` that are not captured.
    pub(crate) const fn active(&self, color: Color) -> Bitboard {
        self.colors[color.index()] & !self.captured
    }

    /// The captured pieces of `color`, waiting to be relocated.
    pub const fn captured(&self, color: Color) -> Bitboard {
        self.colors[color.index()] & self.captured
    }

    /// The queens of both sides.
    pub(crate) const fn queens(&self) -> Bitboard {
        self.queens
    }

    /// The guards of `color`, captured or not.
    pub(crate) const fn guards(&self, color: Color) -> Bitboard {
        self.colors[color.index()] & !self.queens
    }

    /// Every occupied cell.
    pub(crate) const fn occupied(&self) -> Bitboard {
        self.colors[0] | self.colors[1]
    }

    /// Every empty cell.
    pub(crate) const fn empty_cells(&self) -> Bitboard {
        CELLS & !self.occupied()
    }

    /// What stands on `cell`.
    pub fn piece_at(&self, cell: Cell) -> Option<Piece> {
        let bit = cell.bit();
        let color = if self.colors[0] & bit != 0 {
            Color::White
        } else if self.colors[1] & bit != 0 {
            Color::Black
        } else {
            return None;
        };
        Some(Piece {
            color,
            kind: if self.queens & bit != 0 {
                Kind::Queen
            } else {
                Kind::Guard
            },
            captured: self.captured & bit != 0,
        })
    }

    /// Whether `color` holds all six cells around the throne with active guards.
    #[inline(always)]
    pub(crate) const fn has_formation(&self, color: Color) -> bool {
        let guards = self.colors[color.index()] & !self.queens & !self.captured;
        THRONE_RING & !guards == 0
    }

    /// The formation verdict, if the position is finished by it. Both sides
    /// are looked at, so a position given without history is judged the same
    /// whoever is to move.
    #[inline]
    pub(crate) fn formation_outcome(&self) -> Option<FormationOutcome> {
        for color in [Color::White, Color::Black] {
            if self.has_formation(color) {
                let queen = self.queens & self.colors[color.index()];
                if queen & THRONE & !self.captured != 0 {
                    return Some(FormationOutcome::Won(color));
                }
                if queen & THRONE == 0 {
                    return Some(FormationOutcome::Forfeited(color));
                }
            }
        }
        None
    }

    /// The same board with the other player to move. Not a move of the
    /// game (a turn is never a pass): it answers "what if the opponent
    /// moved twice?", which shows when a position is strong enough that
    /// the mover's own move hardly matters.
    #[inline]
    pub(crate) fn with_turn_passed(&self) -> Position {
        Position {
            side: !self.side,
            key: self.key ^ ZOBRIST_BLACK_TO_MOVE,
            ..*self
        }
    }

    /// Whether `mv`, a legal move here, is one that steps can never undo:
    /// an inward step (no piece steps outward) or a relocation (which
    /// follows a capture). The plies between such moves are a game's
    /// counterpart of chess's fifty-move count.
    #[inline]
    pub fn is_progress(&self, mv: Move) -> bool {
        self.captured(self.side) != 0 || mv.to().ring() < mv.from().ring()
    }

    /// Plays `mv` for the side to move and returns the new position. The move
    /// must be legal (see `movegen`); captures are resolved here.
    #[inline]
    pub fn make_move(&self, mv: Move) -> Position {
        let mut next = *self;
        let us = self.side.index();
        let them = 1 - us;
        let (from, to) = (mv.from(), mv.to());
        let from_bit = from.bit();
        let to_bit = to.bit();
        let is_queen = self.queens & from_bit != 0;
        let was_captured = self.captured & from_bit != 0;
        let kind = if is_queen { Kind::Queen } else { Kind::Guard };

        next.colors[us] ^= from_bit | to_bit;
        if is_queen {
            next.queens ^= from_bit | to_bit;
        }
        next.captured &= !from_bit;
        next.key ^= zobrist(
            Piece {
                color: self.side,
                kind,
                captured: was_captured,
            },
            from,
        ) ^ zobrist(
            Piece {
                color: self.side,
                kind,
                captured: false,
            },
            to,
        );

        let ours_active = next.colors[us] & !next.captured;
        let mut victims = NEIGHBOURS[to.index()] & next.colors[them] & !next.captured;
        while victims != 0 {
            let index = victims.trailing_zeros() as u8;
            victims &= victims - 1;
            let Some(victim) = Cell::from_index(index) else {
                continue;
            };
            let Some(far) = beyond(to, victim) else {
                continue;
            };
            if ours_active & far.bit() != 0 {
                let victim_kind = if next.queens & victim.bit() != 0 {
                    Kind::Queen
                } else {
                    Kind::Guard
                };
                let before = Piece {
                    color: !self.side,
                    kind: victim_kind,
                    captured: false,
                };
                let after = Piece {
                    captured: true,
                    ..before
                };
                next.captured |= victim.bit();
                next.key ^= zobrist(before, victim) ^ zobrist(after, victim);
            }
        }

        next.side = !self.side;
        next.key ^= ZOBRIST_BLACK_TO_MOVE;
        if self.side == Color::Black {
            next.fullmove = next.fullmove.saturating_add(1);
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::{START_FEN, legal_moves, parse_fen};

    #[test]
    fn a_passed_turn_changes_only_the_side_to_move() {
        let mut position = parse_fen(START_FEN).unwrap();
        for _ in 0..12 {
            let passed = position.with_turn_passed();
            assert_eq!(passed.side_to_move(), !position.side_to_move());
            assert_eq!(passed.key(), passed.key_from_scratch());
            assert_ne!(passed.key(), position.key());
            assert_eq!(passed.with_turn_passed(), position);
            for cell in crate::rules::Cell::all() {
                assert_eq!(passed.piece_at(cell), position.piece_at(cell));
            }
            position = position.make_move(legal_moves(&position).as_slice()[0]);
        }
    }
}
