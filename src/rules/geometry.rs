//! Board geometry: the 91 hexagonal cells laid into an 11x11 grid of a u128,
//! rings, directions and the precomputed masks that make move generation
//! plain shifts.
//!
//! Cell (file, rank), both counted from 0 (`a` = 0, rank 1 = 0), has bit
//! `rank * 11 + file`. The three straight lines of the board are then shifts
//! by 1 (along a rank), 11 (along a file) and 12 (the diagonal). A shift that
//! leaves the grid sideways always lands on one of the 30 padding bits, never
//! on another cell, so masking with [`CELLS`] after a shift is enough.

use std::fmt;
use std::ops::ControlFlow;

/// A set of cells, one bit per grid slot.
pub(crate) type Bitboard = u128;

/// Side length of the padded grid.
const GRID: u8 = 11;
/// Number of grid slots (121), of which 91 are cells.
pub(crate) const GRID_SLOTS: usize = (GRID as usize) * (GRID as usize);
/// The number of real cells on the board.
pub(crate) const CELL_COUNT: usize = 91;

/// Each grid slot as a one-bit set: a load is cheaper than shifting a u128
/// by a variable amount, which takes several instructions.
const SLOT_BITS: [Bitboard; GRID_SLOTS] = {
    let mut bits = [0u128; GRID_SLOTS];
    let mut index = 0;
    while index < GRID_SLOTS {
        bits[index] = 1u128 << index;
        index += 1;
    }
    bits
};

/// One of the 91 cells, stored as its grid slot index.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Cell(u8);

const fn is_cell(file: i32, rank: i32) -> bool {
    file >= 0 && file < GRID as i32 && rank >= 0 && rank < GRID as i32 && (file - rank).abs() <= 5
}

const fn ring_of(file: i32, rank: i32) -> u8 {
    let df = file - 5;
    let dr = rank - 5;
    let mut ring = df.abs();
    if dr.abs() > ring {
        ring = dr.abs();
    }
    if (df - dr).abs() > ring {
        ring = (df - dr).abs();
    }
    ring as u8
}

impl Cell {
    /// The throne, `f6`.
    pub const THRONE: Cell = Cell(5 * GRID + 5);

    /// The cell at a 0-based file and rank, if it is on the board.
    pub const fn from_coords(file: u8, rank: u8) -> Option<Cell> {
        if is_cell(file as i32, rank as i32) {
            Some(Cell(rank * GRID + file))
        } else {
            None
        }
    }

    /// The cell stored in grid slot `index`, if that slot is a cell.
    pub(crate) const fn from_index(index: u8) -> Option<Cell> {
        // One bit test, not a division: move generation asks this per move.
        if (index as usize) < GRID_SLOTS && CELLS & SLOT_BITS[index as usize] != 0 {
            Some(Cell(index))
        } else {
            None
        }
    }

    /// Grid slot index (0..121).
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }

    /// 0-based file (`a` = 0).
    pub const fn file(self) -> u8 {
        self.0 % GRID
    }

    /// 0-based rank (rank 1 = 0).
    pub const fn rank(self) -> u8 {
        self.0 / GRID
    }

    /// Distance in steps from the throne (0..=5).
    pub const fn ring(self) -> u8 {
        ring_of(self.file() as i32, self.rank() as i32)
    }

    /// This cell as a one-bit set.
    #[inline(always)]
    pub const fn bit(self) -> Bitboard {
        SLOT_BITS[self.0 as usize]
    }

    /// The cell one step back against `direction` from this one, where the
    /// caller knows there is one (this cell was reached by that step).
    #[inline(always)]
    pub(crate) fn step_back(self, direction: Direction) -> Cell {
        let index = self.0 as i32 - direction.offset();
        debug_assert!(
            Cell::from_index(index as u8).is_some(),
            "{self} {direction:?}"
        );
        Cell(index as u8)
    }

    /// The neighbour in `direction`, if it is on the board.
    pub(crate) const fn neighbour(self, direction: Direction) -> Option<Cell> {
        let (df, dr) = direction.file_rank_delta();
        let file = self.file() as i32 + df;
        let rank = self.rank() as i32 + dr;
        if is_cell(file, rank) {
            Some(Cell((rank * GRID as i32 + file) as u8))
        } else {
            None
        }
    }

    /// All cells, in grid order (rank 1 first, files ascending).
    pub fn all() -> impl Iterator<Item = Cell> {
        (0..GRID_SLOTS as u8).filter_map(Cell::from_index)
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

/// One of the six directions along the three straight lines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Direction {
    /// Along the rank, towards higher files.
    FileUp,
    /// Along the rank, towards lower files.
    FileDown,
    /// Along the file, towards higher ranks.
    RankUp,
    /// Along the file, towards lower ranks.
    RankDown,
    /// The third line: file and rank both grow.
    DiagonalUp,
    /// The third line: file and rank both shrink.
    DiagonalDown,
}

impl Direction {
    /// All six directions; entries `2k` and `2k + 1` are opposite.
    pub(crate) const ALL: [Direction; 6] = [
        Direction::FileUp,
        Direction::FileDown,
        Direction::RankUp,
        Direction::RankDown,
        Direction::DiagonalUp,
        Direction::DiagonalDown,
    ];

    const fn file_rank_delta(self) -> (i32, i32) {
        match self {
            Direction::FileUp => (1, 0),
            Direction::FileDown => (-1, 0),
            Direction::RankUp => (0, 1),
            Direction::RankDown => (0, -1),
            Direction::DiagonalUp => (1, 1),
            Direction::DiagonalDown => (-1, -1),
        }
    }

    /// Visits every direction with its index in [`Direction::ALL`] until
    /// `visit` breaks off. Written out rather than looped so that each
    /// visit shifts by a constant: a u128 shift by a variable amount takes
    /// several instructions.
    #[inline(always)]
    pub(crate) fn try_each(
        mut visit: impl FnMut(usize, Direction) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        visit(0, Direction::ALL[0])?;
        visit(1, Direction::ALL[1])?;
        visit(2, Direction::ALL[2])?;
        visit(3, Direction::ALL[3])?;
        visit(4, Direction::ALL[4])?;
        visit(5, Direction::ALL[5])
    }

    /// Visits every direction with its index in [`Direction::ALL`], written
    /// out as [`Direction::try_each`] is.
    #[inline(always)]
    pub(crate) fn each(mut visit: impl FnMut(usize, Direction)) {
        let visit_all = Direction::try_each(|index, direction| {
            visit(index, direction);
            ControlFlow::Continue(())
        });
        debug_assert!(visit_all.is_continue());
    }

    /// The change of grid index one step in this direction.
    pub(crate) const fn offset(self) -> i32 {
        let (df, dr) = self.file_rank_delta();
        dr * GRID as i32 + df
    }
}

/// Shifts every cell of `set` one step in `direction`, dropping what leaves
/// the board.
#[inline(always)]
pub(crate) const fn shift(set: Bitboard, direction: Direction) -> Bitboard {
    let offset = direction.offset();
    let moved = if offset > 0 {
        set << offset
    } else {
        set >> (-offset)
    };
    moved & CELLS
}

const fn build_cells() -> Bitboard {
    let mut set = 0u128;
    let mut index = 0;
    while index < GRID_SLOTS {
        if is_cell((index % 11) as i32, (index / 11) as i32) {
            set |= 1u128 << index;
        }
        index += 1;
    }
    set
}

/// Every cell of the board.
pub(crate) const CELLS: Bitboard = build_cells();

const fn build_ring(ring: u8) -> Bitboard {
    let mut set = 0u128;
    let mut index = 0;
    while index < GRID_SLOTS {
        let (file, rank) = ((index % 11) as i32, (index / 11) as i32);
        if is_cell(file, rank) && ring_of(file, rank) == ring {
            set |= 1u128 << index;
        }
        index += 1;
    }
    set
}

/// The cells of each ring, ring 0 (the throne) to ring 5 (the outer ring).
pub(crate) const RINGS: [Bitboard; 6] = [
    build_ring(0),
    build_ring(1),
    build_ring(2),
    build_ring(3),
    build_ring(4),
    build_ring(5),
];

/// The six cells around the throne, where the winning formation stands.
pub(crate) const THRONE_RING: Bitboard = RINGS[1];
/// The cells within two steps of the throne: the throne, its ring and the
/// next, where the race to the formation is fought.
pub(crate) const NEAR_THRONE: Bitboard = RINGS[0] | RINGS[1] | RINGS[2];
/// The outer ring, where captured guards are relocated.
pub const OUTER_RING: Bitboard = RINGS[5];
/// The throne as a set.
pub(crate) const THRONE: Bitboard = Cell::THRONE.bit();

/// For each direction, the cells from which a step that way does not go
/// outward (its destination exists and is on the same ring or one nearer).
const fn build_step_sources(direction: Direction) -> Bitboard {
    let mut set = 0u128;
    let mut index = 0;
    while index < GRID_SLOTS {
        if let Some(cell) = Cell::from_index(index as u8)
            && let Some(target) = cell.neighbour(direction)
            && target.ring() <= cell.ring()
        {
            set |= cell.bit();
        }
        index += 1;
    }
    set
}

/// Indexed like [`Direction::ALL`].
pub(crate) const STEP_SOURCES: [Bitboard; 6] = [
    build_step_sources(Direction::ALL[0]),
    build_step_sources(Direction::ALL[1]),
    build_step_sources(Direction::ALL[2]),
    build_step_sources(Direction::ALL[3]),
    build_step_sources(Direction::ALL[4]),
    build_step_sources(Direction::ALL[5]),
];

const fn build_neighbour_table(steps_only: bool) -> [Bitboard; GRID_SLOTS] {
    let mut table = [0u128; GRID_SLOTS];
    let mut index = 0;
    while index < GRID_SLOTS {
        if let Some(cell) = Cell::from_index(index as u8) {
            let mut d = 0;
            while d < 6 {
                if let Some(target) = cell.neighbour(Direction::ALL[d])
                    && (!steps_only || target.ring() <= cell.ring())
                {
                    table[index] |= target.bit();
                }
                d += 1;
            }
        }
        index += 1;
    }
    table
}

/// The neighbours of each cell.
pub(crate) const NEIGHBOURS: [Bitboard; GRID_SLOTS] = build_neighbour_table(false);
/// The neighbours of each cell that a step may reach (not outward).
pub(crate) const STEP_TARGETS: [Bitboard; GRID_SLOTS] = build_neighbour_table(true);

/// The cells lying between two members of `set` on one straight line.
#[inline(always)]
pub(crate) const fn sandwiched_by(set: Bitboard) -> Bitboard {
    (shift(set, Direction::FileUp) & shift(set, Direction::FileDown))
        | (shift(set, Direction::RankUp) & shift(set, Direction::RankDown))
        | (shift(set, Direction::DiagonalUp) & shift(set, Direction::DiagonalDown))
}

/// Iterates the cells of a set, lowest index first.
pub(crate) fn cells_of(set: Bitboard) -> impl Iterator<Item = Cell> {
    // The two 64-bit halves one after the other: each step on a u128 costs
    // twice the instructions of a step on a u64.
    let mut low = set as u64;
    let mut high = (set >> 64) as u64;
    std::iter::from_fn(move || {
        if low != 0 {
            let index = low.trailing_zeros() as u8;
            low &= low - 1;
            Some(Cell(index))
        } else if high != 0 {
            let index = 64 + high.trailing_zeros() as u8;
            high &= high - 1;
            Some(Cell(index))
        } else {
            None
        }
    })
}

/// The cell on the far side of `neighbour` as seen from `origin`, if any.
#[inline(always)]
pub(crate) fn beyond(origin: Cell, neighbour: Cell) -> Option<Cell> {
    let index = 2 * i32::from(neighbour.0) - i32::from(origin.0);
    u8::try_from(index).ok().and_then(Cell::from_index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_match_the_board() {
        assert_eq!(CELLS.count_ones() as usize, CELL_COUNT);
        let sizes: Vec<u32> = RINGS.iter().map(|ring| ring.count_ones()).collect();
        assert_eq!(sizes, vec![1, 6, 12, 18, 24, 30]);
    }

    #[test]
    fn a_slot_is_a_cell_exactly_when_its_coordinates_are() {
        for index in 0..=u8::MAX {
            let by_coords = if usize::from(index) < GRID_SLOTS {
                Cell::from_coords(index % GRID, index / GRID)
            } else {
                None
            };
            assert_eq!(Cell::from_index(index), by_coords, "slot {index}");
        }
    }

    #[test]
    fn throne_is_f6() {
        assert_eq!(Cell::THRONE.to_string(), "f6");
        assert_eq!(Cell::THRONE.ring(), 0);
    }

    #[test]
    fn shifts_agree_with_coordinate_neighbours() {
        for cell in Cell::all() {
            for direction in Direction::ALL {
                let by_shift = shift(cell.bit(), direction);
                let by_coords = cell.neighbour(direction).map_or(0, Cell::bit);
                assert_eq!(by_shift, by_coords, "{cell} {direction:?}");
            }
        }
    }

    #[test]
    fn every_cell_has_six_neighbours_unless_on_the_edge() {
        for cell in Cell::all() {
            let count = NEIGHBOURS[cell.index()].count_ones();
            let expected = if cell.ring() == 5 { [3, 4] } else { [6, 6] };
            assert!(expected.contains(&count), "{cell} has {count}");
        }
    }

    #[test]
    fn beyond_follows_the_line() {
        for cell in Cell::all() {
            for direction in Direction::ALL {
                let Some(next) = cell.neighbour(direction) else {
                    continue;
                };
                assert_eq!(beyond(cell, next), next.neighbour(direction));
            }
        }
    }
}
