//! The rules of Agon: board geometry, positions, legal moves, notation, game
//! verdicts and perft. Nothing here knows that a search exists.

pub mod game;
pub mod geometry;
pub mod movegen;
pub mod notation;
pub mod perft;
pub mod position;

pub use game::{Game, GameResult, Termination};
pub use geometry::{Bitboard, Cell};
pub use movegen::{MoveList, count_legal, legal_moves};
pub use notation::{FenError, MoveError, START_FEN, parse_fen, parse_move, to_fen};
pub use position::{Color, Kind, Move, Piece, Position};
