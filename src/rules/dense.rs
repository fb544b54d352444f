//! The 91 cells numbered densely (0..91, grid order: the cell order of the
//! training records and of the network's inputs), and the half-turn of the
//! board that shows it from Black's side.

use super::Cell;
use super::geometry::{CELL_COUNT, GRID_SLOTS};

const fn build_dense() -> ([u8; GRID_SLOTS], [u8; CELL_COUNT]) {
    let mut dense = [u8::MAX; GRID_SLOTS];
    let mut slots = [0u8; CELL_COUNT];
    let mut slot = 0;
    let mut next = 0;
    while slot < GRID_SLOTS {
        if Cell::from_index(slot as u8).is_some() {
            dense[slot] = next as u8;
            slots[next] = slot as u8;
            next += 1;
        }
        slot += 1;
    }
    (dense, slots)
}

const TABLES: ([u8; GRID_SLOTS], [u8; CELL_COUNT]) = build_dense();

/// The dense number (0..91) of `cell`.
#[inline(always)]
pub const fn dense(cell: Cell) -> usize {
    TABLES.0[cell.index()] as usize
}

/// The cell with dense number `index` (0..91).
#[inline]
pub fn from_dense(index: usize) -> Option<Cell> {
    TABLES.1.get(index).and_then(|&slot| Cell::from_index(slot))
}

/// The dense number of the cell a half-turn of the board around the throne
/// puts `cell` on: (file, rank) to (10 - file, 10 - rank). The start
/// position is symmetric under it with the colours swapped, so Black's view
/// of the board is White's view turned.
#[inline(always)]
pub const fn turned(dense_index: usize) -> usize {
    CELL_COUNT - 1 - dense_index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_numbers_round_trip_and_the_half_turn_maps_cells_to_cells() {
        for cell in Cell::all() {
            assert_eq!(from_dense(dense(cell)), Some(cell));
            let other = from_dense(turned(dense(cell))).unwrap();
            assert_eq!(
                (other.file(), other.rank()),
                (10 - cell.file(), 10 - cell.rank())
            );
        }
        assert_eq!(from_dense(CELL_COUNT), None);
    }
}
