//! Property tests of the rules core over random playouts: FEN round trips,
//! incremental Zobrist keys, copy-make, and move generation and capture
//! checked against a slow implementation written straight from the rules.

use agon::rules::geometry::{Cell, OUTER_RING};
use agon::rules::{
    Color, Kind, Move, Piece, Position, START_FEN, count_legal, legal_moves, parse_fen, to_fen,
};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};

/// The six neighbour offsets (file, rank) in opposite pairs.
const LINES: [(i32, i32); 3] = [(1, 0), (0, 1), (1, 1)];

fn cell_at(file: i32, rank: i32) -> Option<Cell> {
    if !(0..11).contains(&file) || !(0..11).contains(&rank) {
        return None;
    }
    Cell::from_coords(file as u8, rank as u8)
}

fn offset(cell: Cell, (df, dr): (i32, i32)) -> Option<Cell> {
    cell_at(i32::from(cell.file()) + df, i32::from(cell.rank()) + dr)
}

fn all_directions() -> impl Iterator<Item = (i32, i32)> {
    LINES
        .into_iter()
        .flat_map(|(df, dr)| [(df, dr), (-df, -dr)])
}

type Board = BTreeMap<Cell, Piece>;

fn board_of(position: &Position) -> Board {
    Cell::all()
        .filter_map(|cell| position.piece_at(cell).map(|piece| (cell, piece)))
        .collect()
}

fn is_active(board: &Board, cell: Option<Cell>, color: Color) -> bool {
    cell.and_then(|c| board.get(&c))
        .is_some_and(|piece| piece.color == color && !piece.captured)
}

fn slow_formation_over(board: &Board) -> bool {
    let ring_one: Vec<Cell> = Cell::all().filter(|c| c.ring() == 1).collect();
    [Color::White, Color::Black].into_iter().any(|color| {
        let surrounded = ring_one.iter().all(|cell| {
            board
                .get(cell)
                .is_some_and(|p| p.color == color && p.kind == Kind::Guard && !p.captured)
        });
        let queen_on_throne = board.get(&Cell::THRONE).filter(|p| p.color == color);
        match queen_on_throne {
            Some(queen) => surrounded && !queen.captured,
            None => surrounded,
        }
    })
}

/// Legality of one (from, to) pair, decided from the rules text alone.
fn slow_is_legal(board: &Board, side: Color, from: Cell, to: Cell) -> bool {
    let Some(piece) = board.get(&from) else {
        return false;
    };
    if piece.color != side || board.contains_key(&to) {
        return false;
    }
    let sandwiched = LINES.iter().any(|&(df, dr)| {
        is_active(board, offset(to, (df, dr)), !side)
            && is_active(board, offset(to, (-df, -dr)), !side)
    });
    if sandwiched {
        return false;
    }
    let waiting: Vec<&Piece> = board
        .values()
        .filter(|p| p.color == side && p.captured)
        .collect();
    if !waiting.is_empty() {
        if !piece.captured {
            return false;
        }
        let queen_waiting = waiting.iter().any(|p| p.kind == Kind::Queen);
        return match piece.kind {
            Kind::Queen => true,
            Kind::Guard => !queen_waiting && to.bit() & OUTER_RING != 0,
        };
    }
    let adjacent = all_directions().any(|d| offset(from, d) == Some(to));
    adjacent && to.ring() <= from.ring() && (to != Cell::THRONE || piece.kind == Kind::Queen)
}

/// The board after a move, with captures, worked out from the rules text.
fn slow_make(board: &Board, side: Color, mv: Move) -> Board {
    let mut next = board.clone();
    let mut moved = next.remove(&mv.from()).expect("a piece on the origin");
    moved.captured = false;
    next.insert(mv.to(), moved);
    for direction in all_directions() {
        let victim = offset(mv.to(), direction);
        let far = victim.and_then(|v| offset(v, direction));
        if is_active(&next, victim, !side)
            && is_active(&next, far, side)
            && let Some(piece) = victim.and_then(|v| next.get_mut(&v))
        {
            piece.captured = true;
        }
    }
    next
}

fn check_position(position: &Position) {
    let fen = to_fen(position);
    let reparsed = parse_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    assert_eq!(&reparsed, position, "FEN round trip of {fen}");
    assert_eq!(position.key(), position.key_from_scratch(), "key of {fen}");

    let board = board_of(position);
    let side = position.side_to_move();
    let fast: BTreeSet<Move> = legal_moves(position).iter().copied().collect();
    let mut slow = BTreeSet::new();
    let finished = slow_formation_over(&board);
    for from in Cell::all().filter(|_| !finished) {
        for to in Cell::all() {
            if slow_is_legal(&board, side, from, to) {
                slow.insert(Move::new(from, to));
            }
        }
    }
    assert_eq!(fast, slow, "legal moves of {fen}");
    assert_eq!(count_legal(position), fast.len() as u64, "count of {fen}");

    for &mv in &fast {
        let before = *position;
        let child = position.make_move(mv);
        assert_eq!(*position, before, "make_move must not touch its source");
        assert_eq!(
            board_of(&child),
            slow_make(&board, side, mv),
            "{fen} then {mv}"
        );
        assert_eq!(child.side_to_move(), !side);
        assert_eq!(child.key(), child.key_from_scratch(), "{fen} then {mv}");
    }
}

fn starting_points() -> Vec<Position> {
    include_str!("data/perft.txt")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| line.split(';').next())
        .map(|fen| parse_fen(fen.trim()).expect("perft FEN"))
        .collect()
}

fn random_playout(seed: u64, plies: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let starts = starting_points();
    let mut position = starts[rng.random_range(0..starts.len())];
    for _ in 0..plies {
        check_position(&position);
        let moves = legal_moves(&position);
        if moves.is_empty() {
            break;
        }
        position = position.make_move(moves.as_slice()[rng.random_range(0..moves.len())]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 32 } else { 1000 }))]

    #[test]
    fn random_playouts_keep_every_invariant(seed in any::<u64>(), plies in 1usize..60) {
        random_playout(seed, plies);
    }
}

#[test]
fn start_position_passes_the_slow_checker() {
    check_position(&parse_fen(START_FEN).unwrap());
}
