//! The rules of Agon: board geometry, positions, legal moves, notation, game
//! verdicts and perft. Nothing here knows that a search exists.

pub mod dense;
pub(crate) mod game;
pub mod geometry;
pub(crate) mod movegen;
pub(crate) mod notation;
pub mod perft;
pub(crate) mod position;

pub use game::{Game, GameResult, Termination};
pub use geometry::Cell;
pub use movegen::{MoveList, count_legal, has_legal_move, legal_moves};
pub use notation::{
    FenError, IllegalReason, MoveError, START_FEN, parse_fen, parse_move, start_position, to_fen,
};
pub use position::{Color, Kind, Move, Piece, Position, split_mix};
