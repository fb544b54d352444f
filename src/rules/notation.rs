//! Text notations: FEN for positions, `<from><to>` for moves, with typed
//! errors that say what is wrong and where.

use super::geometry::{Cell, THRONE, sandwiched_by};
use super::movegen::legal_moves;
use super::position::{Color, Kind, Move, Piece, Position};
use std::fmt;

/// The start position in FEN.
pub const START_FEN: &str = "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1";

/// The start position, [`START_FEN`] parsed.
pub fn start_position() -> Position {
    parse_fen(START_FEN).unwrap_or_else(|e| unreachable!("START_FEN is invalid: {e}"))
}

/// Why a FEN was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FenError {
    /// Nothing but spaces.
    Empty,
    /// Not two or three space-separated fields.
    FieldCount(usize),
    /// Two spaces in a row, or a leading/trailing space.
    EmptyField,
    /// The board does not have 11 ranks.
    RankCount(usize),
    /// A rank describes too many or too few cells.
    RankLength {
        /// Rank number, 1..=11.
        rank: u8,
        /// Cells the rank has.
        expected: u8,
        /// Cells the text describes.
        found: u32,
    },
    /// A character that is no piece, digit or `*`.
    UnknownCharacter {
        /// Rank number, 1..=11.
        rank: u8,
        /// The offending character.
        character: char,
    },
    /// A `*` that follows no piece.
    StrayCaptureMark {
        /// Rank number, 1..=11.
        rank: u8,
    },
    /// An empty-cell count of 0, over 11, or with a leading zero.
    BadEmptyCount {
        /// Rank number, 1..=11.
        rank: u8,
        /// The digits as written.
        text: String,
    },
    /// Two queens of one colour.
    TooManyQueens(Color),
    /// More than six guards of one colour.
    TooManyGuards(Color, u32),
    /// A guard standing on the throne.
    GuardOnThrone,
    /// The side field is not `w` or `b`.
    BadSide(String),
    /// The move number is not a whole number from 1 to 4294967295.
    BadFullmove(String),
}

/// Longest piece of user input (in characters) quoted back in an error message.
const MAX_QUOTED_CHARS: usize = 40;

/// Copies user text for an error message, shortened to [`MAX_QUOTED_CHARS`] characters.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// Shows user input inside an error message: control characters are escaped
/// so that the message always stays on one line.
pub(crate) struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

/// User text made safe for one line of an error message: shortened like a
/// token and with control characters escaped.
pub(crate) fn quote(text: &str) -> String {
    Quoted(&clip(text)).to_string()
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::Empty => write!(f, "empty FEN"),
            FenError::FieldCount(n) => write!(
                f,
                "FEN has {n} fields; expected '<board> <side> [<fullmove>]'"
            ),
            FenError::EmptyField => write!(f, "FEN fields must be separated by single spaces"),
            FenError::RankCount(n) => write!(f, "FEN board has {n} ranks; expected 11"),
            FenError::RankLength {
                rank,
                expected,
                found,
            } => write!(f, "rank {rank} describes {found} cells; it has {expected}"),
            FenError::UnknownCharacter { rank, character } => write!(
                f,
                "unknown character '{}' in rank {rank}",
                Quoted(&character.to_string())
            ),
            FenError::StrayCaptureMark { rank } => {
                write!(f, "'*' in rank {rank} does not follow a piece")
            }
            FenError::BadEmptyCount { rank, text } => write!(
                f,
                "bad empty-cell count '{}' in rank {rank}; expected 1 to 11",
                quote(text)
            ),
            FenError::TooManyQueens(color) => write!(f, "{} has more than one queen", color.name()),
            FenError::TooManyGuards(color, n) => {
                write!(f, "{} has {n} guards; at most 6 are allowed", color.name())
            }
            FenError::GuardOnThrone => write!(f, "a guard stands on the throne f6"),
            FenError::BadSide(side) => {
                write!(f, "side to move '{}' is not 'w' or 'b'", quote(side))
            }
            FenError::BadFullmove(text) => {
                write!(
                    f,
                    "move number '{}' is not a whole number from 1 to {}",
                    quote(text),
                    u32::MAX
                )
            }
        }
    }
}

impl std::error::Error for FenError {}

/// The cells of rank `rank` (0-based), lowest file first.
fn rank_cells(rank: u8) -> impl Iterator<Item = Cell> {
    (0..11).filter_map(move |file| Cell::from_coords(file, rank))
}

/// Parses a FEN (see the protocol document).
pub fn parse_fen(text: &str) -> Result<Position, FenError> {
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty() {
        return Err(FenError::Empty);
    }
    let fields: Vec<&str> = text.split(' ').collect();
    if fields.iter().any(|field| field.is_empty()) {
        return Err(FenError::EmptyField);
    }
    if !(2..=3).contains(&fields.len()) {
        return Err(FenError::FieldCount(fields.len()));
    }
    let side = match fields[1] {
        "w" => Color::White,
        "b" => Color::Black,
        other => return Err(FenError::BadSide(other.to_string())),
    };
    let fullmove = match fields.get(2) {
        None => 1,
        Some(text) => match text.parse::<u32>() {
            Ok(n) if n >= 1 && text.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(FenError::BadFullmove(text.to_string())),
        },
    };
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 11 {
        return Err(FenError::RankCount(ranks.len()));
    }
    let mut position = Position::empty(side, fullmove);
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = 10 - row as u8;
        place_rank(&mut position, rank, rank_text)?;
    }
    for color in [Color::White, Color::Black] {
        if (position.pieces(color) & position.queens()).count_ones() > 1 {
            return Err(FenError::TooManyQueens(color));
        }
        let guards = position.guards(color).count_ones();
        if guards > 6 {
            return Err(FenError::TooManyGuards(color, guards));
        }
    }
    if (position.guards(Color::White) | position.guards(Color::Black)) & THRONE != 0 {
        return Err(FenError::GuardOnThrone);
    }
    Ok(position)
}

fn place_rank(position: &mut Position, rank: u8, text: &str) -> Result<(), FenError> {
    let cells: Vec<Cell> = rank_cells(rank).collect();
    let rank_number = rank + 1;
    let length_error = |found: u32| FenError::RankLength {
        rank: rank_number,
        expected: cells.len() as u8,
        found,
    };
    let bytes = text.as_bytes();
    let mut next = 0u32;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_digit() {
            let start = at;
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            let digits = &text[start..at];
            let count = match digits.parse::<u32>() {
                Ok(n) if (1..=11).contains(&n) && !digits.starts_with('0') => n,
                _ => {
                    return Err(FenError::BadEmptyCount {
                        rank: rank_number,
                        text: digits.to_string(),
                    });
                }
            };
            next += count;
            continue;
        }
        let (color, kind) = match byte {
            b'Q' => (Color::White, Kind::Queen),
            b'G' => (Color::White, Kind::Guard),
            b'q' => (Color::Black, Kind::Queen),
            b'g' => (Color::Black, Kind::Guard),
            b'*' => return Err(FenError::StrayCaptureMark { rank: rank_number }),
            _ => {
                let character = text[at..].chars().next().unwrap_or('?');
                return Err(FenError::UnknownCharacter {
                    rank: rank_number,
                    character,
                });
            }
        };
        at += 1;
        let captured = bytes.get(at) == Some(&b'*');
        if captured {
            at += 1;
        }
        // Past the rank's end the counting goes on, so that the error says
        // how many cells the rank describes.
        if let Some(&cell) = cells.get(next as usize) {
            position.put(
                cell,
                Piece {
                    color,
                    kind,
                    captured,
                },
            );
        }
        next += 1;
    }
    if next as usize != cells.len() {
        return Err(length_error(next));
    }
    Ok(())
}

fn piece_letter(piece: Piece) -> char {
    match (piece.color, piece.kind) {
        (Color::White, Kind::Queen) => 'Q',
        (Color::White, Kind::Guard) => 'G',
        (Color::Black, Kind::Queen) => 'q',
        (Color::Black, Kind::Guard) => 'g',
    }
}

/// Writes `position` as FEN, move number included.
pub fn to_fen(position: &Position) -> String {
    let mut text = String::new();
    for rank in (0..11).rev() {
        let mut empty = 0;
        for cell in rank_cells(rank) {
            match position.piece_at(cell) {
                None => empty += 1,
                Some(piece) => {
                    if empty > 0 {
                        text.push_str(&empty.to_string());
                        empty = 0;
                    }
                    text.push(piece_letter(piece));
                    if piece.captured {
                        text.push('*');
                    }
                }
            }
        }
        if empty > 0 {
            text.push_str(&empty.to_string());
        }
        if rank > 0 {
            text.push('/');
        }
    }
    let side = match position.side_to_move() {
        Color::White => 'w',
        Color::Black => 'b',
    };
    format!("{text} {side} {}", position.fullmove())
}

/// A board picture for humans: the diagram of the rules, one cell per slot.
pub(crate) fn board_picture(position: &Position) -> String {
    let mut lines = Vec::new();
    // A cell's height in the picture grows by two per rank and falls by one
    // per file, which is what makes the ranks slope down to the right.
    for height in (-5..=15i32).rev() {
        let mut line = String::new();
        let mut column = 0;
        for file in 0..11u8 {
            let doubled_rank = height + i32::from(file);
            if doubled_rank % 2 != 0 {
                continue;
            }
            let Some(cell) = u8::try_from(doubled_rank / 2)
                .ok()
                .and_then(|rank| Cell::from_coords(file, rank))
            else {
                continue;
            };
            let target = file as usize * 5;
            while column < target {
                line.push(' ');
                column += 1;
            }
            let symbol = match position.piece_at(cell) {
                Some(piece) if piece.captured => {
                    format!("{}*", piece_letter(piece))
                }
                Some(piece) => piece_letter(piece).to_string(),
                None if cell == Cell::THRONE => "+".to_string(),
                None => ".".to_string(),
            };
            column += symbol.len();
            line.push_str(&symbol);
        }
        if !line.is_empty() {
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// Why a move string was refused.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MoveError {
    /// Not four to six characters of two cells.
    Syntax(String),
    /// A cell name that is not on the board.
    OffBoard(String),
    /// Well-formed, but not legal in the position.
    Illegal {
        /// The move as written.
        text: String,
        /// What rule it breaks.
        reason: IllegalReason,
    },
}

/// The rule a well-formed move breaks, the first that applies.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum IllegalReason {
    /// A formation has already ended the game (its outcome, in words).
    Decided(String),
    /// The origin is empty.
    NoPiece(Cell),
    /// The piece on the origin belongs to the side not to move.
    NotYours {
        /// The origin.
        cell: Cell,
        /// Whose piece it is.
        owner: Color,
    },
    /// The destination holds a piece (captured or not).
    Occupied(Cell),
    /// The destination lies between two active enemy pieces.
    Flanked(Cell),
    /// A captured piece waits, and this move is not its relocation.
    RelocateFirst,
    /// The queen and a guard are captured, and the guard was chosen.
    QueenFirst,
    /// A captured guard may only return to the outer ring.
    GuardOffOuterRing(Cell),
    /// A guard may never enter the throne.
    ThroneForQueenOnly,
    /// A queen on the throne never steps off it.
    ThroneKept,
    /// A step goes to a neighbouring cell only.
    NotAdjacent {
        /// The origin.
        from: Cell,
        /// The destination.
        to: Cell,
    },
    /// A step may not go away from the throne.
    Outward,
}

impl IllegalReason {
    /// A short stable name for the rule, for programs (the GUI's
    /// translations, tests).
    pub const fn code(&self) -> &'static str {
        match self {
            IllegalReason::Decided(_) => "decided",
            IllegalReason::NoPiece(_) => "no-piece",
            IllegalReason::NotYours { .. } => "not-yours",
            IllegalReason::Occupied(_) => "occupied",
            IllegalReason::Flanked(_) => "flanked",
            IllegalReason::RelocateFirst => "relocate-first",
            IllegalReason::QueenFirst => "queen-first",
            IllegalReason::GuardOffOuterRing(_) => "guard-outer-ring",
            IllegalReason::ThroneForQueenOnly => "throne-queen-only",
            IllegalReason::ThroneKept => "throne-kept",
            IllegalReason::NotAdjacent { .. } => "not-adjacent",
            IllegalReason::Outward => "outward",
        }
    }
}

impl fmt::Display for IllegalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalReason::Decided(outcome) => {
                write!(f, "the game is already decided by a formation ({outcome})")
            }
            IllegalReason::NoPiece(cell) => write!(f, "there is no piece on {cell}"),
            IllegalReason::NotYours { cell, owner } => write!(
                f,
                "the piece on {cell} is {}'s, and {} is to move",
                owner.name(),
                (!*owner).name()
            ),
            IllegalReason::Occupied(cell) => write!(f, "{cell} is occupied"),
            IllegalReason::Flanked(cell) => {
                write!(f, "{cell} lies between two active enemy pieces")
            }
            IllegalReason::RelocateFirst => write!(f, "a captured piece must be relocated first"),
            IllegalReason::QueenFirst => {
                write!(f, "the captured queen must be relocated before any guard")
            }
            IllegalReason::GuardOffOuterRing(cell) => write!(
                f,
                "a captured guard may only go to the outer ring, and {cell} is not on it"
            ),
            IllegalReason::ThroneForQueenOnly => write!(f, "only a queen may enter the throne"),
            IllegalReason::ThroneKept => write!(f, "a queen on the throne never steps off it"),
            IllegalReason::NotAdjacent { from, to } => write!(f, "{to} is not next to {from}"),
            IllegalReason::Outward => write!(f, "a step may not go outward"),
        }
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Syntax(text) => {
                write!(
                    f,
                    "'{}' is not a move; expected two cells like 'f1f2'",
                    quote(text)
                )
            }
            MoveError::OffBoard(text) => write!(f, "cell '{}' is not on the board", quote(text)),
            MoveError::Illegal { text, reason } => write!(f, "move {text} is not legal: {reason}"),
        }
    }
}

impl std::error::Error for MoveError {}

/// Parses a cell name such as `f6`.
pub(crate) fn parse_cell(text: &str) -> Result<Cell, MoveError> {
    let bytes = text.as_bytes();
    if !(2..=3).contains(&bytes.len()) || !(b'a'..=b'k').contains(&bytes[0]) {
        return Err(MoveError::Syntax(text.to_string()));
    }
    let rank_text = &text[1..];
    if rank_text.starts_with('0') || !rank_text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(MoveError::Syntax(text.to_string()));
    }
    let rank: u8 = rank_text
        .parse()
        .map_err(|_| MoveError::Syntax(text.to_string()))?;
    let file = bytes[0] - b'a';
    if rank == 0 {
        return Err(MoveError::Syntax(text.to_string()));
    }
    Cell::from_coords(file, rank - 1).ok_or_else(|| MoveError::OffBoard(text.to_string()))
}

/// Splits a move string into its two cells without checking legality.
pub(crate) fn parse_move_cells(text: &str) -> Result<(Cell, Cell), MoveError> {
    if !text.is_ascii() || !(4..=6).contains(&text.len()) {
        return Err(MoveError::Syntax(text.to_string()));
    }
    // The destination starts at the second letter.
    let split = text[1..]
        .find(|c: char| c.is_ascii_lowercase())
        .map(|i| i + 1)
        .ok_or_else(|| MoveError::Syntax(text.to_string()))?;
    // A cell off the board is worth naming; any other fault is the move's.
    let cell = |part: &str| {
        parse_cell(part).map_err(|e| match e {
            MoveError::OffBoard(_) => e,
            _ => MoveError::Syntax(text.to_string()),
        })
    };
    Ok((cell(&text[..split])?, cell(&text[split..])?))
}

/// Parses `text` as a move that is legal in `position`.
pub fn parse_move(position: &Position, text: &str) -> Result<Move, MoveError> {
    let (from, to) = parse_move_cells(text)?;
    let mv = Move::new(from, to);
    if legal_moves(position).iter().any(|&legal| legal == mv) {
        Ok(mv)
    } else {
        Err(MoveError::Illegal {
            text: text.to_string(),
            reason: illegal_reason(position, from, to),
        })
    }
}

/// The rule that a move from `from` to `to` breaks.
fn illegal_reason(position: &Position, from: Cell, to: Cell) -> IllegalReason {
    let us = position.side_to_move();
    if position.formation_outcome().is_some() {
        return IllegalReason::Decided(super::game::position_result(position).describe());
    }
    let Some(piece) = position.piece_at(from) else {
        return IllegalReason::NoPiece(from);
    };
    if piece.color != us {
        return IllegalReason::NotYours {
            cell: from,
            owner: piece.color,
        };
    }
    if position.piece_at(to).is_some() {
        return IllegalReason::Occupied(to);
    }
    if sandwiched_by(position.active(!us)) & to.bit() != 0 {
        return IllegalReason::Flanked(to);
    }
    let waiting = position.captured(us);
    if waiting != 0 {
        if !piece.captured {
            return IllegalReason::RelocateFirst;
        }
        if piece.kind == Kind::Guard && waiting & position.queens() != 0 {
            return IllegalReason::QueenFirst;
        }
        // Relocating the queen, or a guard to the outer ring, is legal
        // wherever the cell is free and not flanked: a guard is all that is left.
        return IllegalReason::GuardOffOuterRing(to);
    }
    if to == Cell::THRONE && piece.kind == Kind::Guard {
        return IllegalReason::ThroneForQueenOnly;
    }
    if from == Cell::THRONE {
        return IllegalReason::ThroneKept;
    }
    let adjacent = super::geometry::NEIGHBOURS[from.index()] & to.bit() != 0;
    if !adjacent {
        return IllegalReason::NotAdjacent { from, to };
    }
    // An adjacent, free, unflanked cell that is no throne and no sideways
    // or inward step can only be outward.
    IllegalReason::Outward
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::geometry::cells_of;

    #[test]
    fn start_position_round_trips() {
        let position = parse_fen(START_FEN).expect("start FEN");
        assert_eq!(to_fen(&position), START_FEN);
        let queens: Vec<String> = cells_of(position.queens())
            .map(|cell| format!("{}{}", cell, position.piece_at(cell).unwrap().color.name()))
            .collect();
        assert_eq!(queens, ["f1white", "f11black"]);
    }

    #[test]
    fn fullmove_is_optional() {
        let position = parse_fen("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q b").unwrap();
        assert_eq!(position.fullmove(), 1);
        assert_eq!(position.side_to_move(), Color::Black);
    }

    #[test]
    fn cells_parse_and_print() {
        for cell in Cell::all() {
            assert_eq!(parse_cell(&cell.to_string()), Ok(cell));
        }
        assert_eq!(parse_cell("a11"), Err(MoveError::OffBoard("a11".into())));
        assert!(matches!(parse_cell("l1"), Err(MoveError::Syntax(_))));
    }

    #[test]
    fn picture_shows_the_throne() {
        let position = parse_fen(START_FEN).unwrap();
        let picture = board_picture(&position);
        assert_eq!(picture.lines().count(), 21);
        assert!(picture.contains('+'));
        assert_eq!(picture.lines().next().map(str::trim), Some("q"));
    }
}
