//! Opening positions for a match: read from a file (FENs or move lines) or
//! generated as random legal plies from the start, all checked by the rules.

use super::options::{OpeningFormat, OpeningSource};
use crate::rules::{Game, GameResult, Position, legal_moves, parse_fen, start_position, to_fen};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Where one game starts: a position and moves already played from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opening {
    /// The position before the book moves.
    pub start: Position,
    /// Book moves, legal in order from `start`.
    pub moves: Vec<String>,
}

impl Opening {
    /// The start position with no book moves.
    pub fn standard() -> Opening {
        Opening {
            start: start_position(),
            moves: Vec::new(),
        }
    }

    /// The game after the book moves.
    pub fn game(&self) -> Game {
        let mut game = Game::new(self.start);
        for mv in &self.moves {
            // Every book was checked when it was loaded or generated.
            if game.play_text(mv).is_err() {
                break;
            }
        }
        game
    }
}

/// The openings of a run, looked up by number.
pub enum OpeningBook {
    /// Always the start position.
    Standard,
    /// A list, used in a cycle from an offset.
    List {
        /// The openings in the order they are used.
        openings: Vec<Opening>,
        /// Index of the first one used.
        offset: usize,
    },
    /// Generated on demand, the same for the same seed and number.
    Random {
        /// Plies per opening.
        plies: usize,
        /// The run's seed.
        seed: u64,
    },
}

/// Tries per generated opening before giving up: random play rarely ends a game this early.
const GENERATION_TRIES: usize = 1000;

impl OpeningBook {
    /// Loads or prepares the openings of `source`.
    pub fn load(source: &OpeningSource, seed: u64) -> Result<OpeningBook, String> {
        match source {
            OpeningSource::StartPosition => Ok(OpeningBook::Standard),
            OpeningSource::Random { plies } => {
                let book = OpeningBook::Random {
                    plies: *plies,
                    seed,
                };
                // Fail now, not in the middle of a run, if no such opening exists.
                book.opening(0)?;
                Ok(book)
            }
            OpeningSource::File {
                path,
                format,
                random_order,
                plies,
                start,
            } => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read openings {}: {e}", path.display()))?;
                let mut openings = parse_openings(&text, *format, *plies)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if openings.is_empty() {
                    return Err(format!("{} holds no openings", path.display()));
                }
                if *random_order {
                    openings.shuffle(&mut StdRng::seed_from_u64(seed));
                }
                Ok(OpeningBook::List {
                    offset: (start - 1) % openings.len(),
                    openings,
                })
            }
        }
    }

    /// Opening number `index` (0-based) of the run.
    pub fn opening(&self, index: u64) -> Result<Opening, String> {
        match self {
            OpeningBook::Standard => Ok(Opening::standard()),
            OpeningBook::List { openings, offset } => {
                let position = (*offset as u64 + index) % openings.len() as u64;
                Ok(openings[position as usize].clone())
            }
            OpeningBook::Random { plies, seed } => {
                let mixed = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                random_opening(*plies, &mut StdRng::seed_from_u64(mixed))
            }
        }
    }
}

/// Reads one opening per non-empty line; `#` starts a comment line.
fn parse_openings(
    text: &str,
    format: OpeningFormat,
    plies: Option<usize>,
) -> Result<Vec<Opening>, String> {
    let mut openings = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let opening = match format {
            OpeningFormat::Fen => {
                // Anything after a ';' is an annotation, as in EPD files.
                let fen = line.split(';').next().unwrap_or_default().trim();
                let start = parse_fen(fen).map_err(|e| format!("line {}: {e}", number + 1))?;
                Opening {
                    start,
                    moves: Vec::new(),
                }
            }
            OpeningFormat::Moves => {
                let moves: Vec<String> = line
                    .split_whitespace()
                    .take(plies.unwrap_or(usize::MAX))
                    .map(str::to_string)
                    .collect();
                Opening {
                    start: start_position(),
                    moves,
                }
            }
        };
        check(&opening).map_err(|e| format!("line {}: {e}", number + 1))?;
        openings.push(opening);
    }
    Ok(openings)
}

/// Refuses an opening with an illegal move or whose game is already over.
fn check(opening: &Opening) -> Result<(), String> {
    let mut game = Game::new(opening.start);
    for mv in &opening.moves {
        if game.result() != GameResult::Ongoing {
            return Err(format!("the game is over before {mv}"));
        }
        game.play_text(mv).map_err(|e| e.to_string())?;
    }
    match game.result() {
        GameResult::Ongoing => Ok(()),
        over => Err(format!(
            "the opening ends the game ({over}) at {}",
            to_fen(game.position())
        )),
    }
}

/// `plies` random legal plies from the start, never ending the game.
fn random_opening(plies: usize, rng: &mut StdRng) -> Result<Opening, String> {
    'attempt: for _ in 0..GENERATION_TRIES {
        let mut game = Game::new(start_position());
        let mut moves = Vec::with_capacity(plies);
        for _ in 0..plies {
            let mut candidates: Vec<_> = legal_moves(game.position()).iter().copied().collect();
            candidates.retain(|&mv| {
                let mut next = game.clone();
                next.play(mv);
                next.result() == GameResult::Ongoing
            });
            if candidates.is_empty() {
                continue 'attempt;
            }
            let mv = candidates[rng.random_range(0..candidates.len())];
            game.play(mv);
            moves.push(mv.to_string());
        }
        return Ok(Opening {
            start: start_position(),
            moves,
        });
    }
    Err(format!(
        "found no {plies}-ply random opening that keeps the game going"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::START_FEN;

    #[test]
    fn random_openings_are_reproducible_and_legal() {
        let book = OpeningBook::load(&OpeningSource::Random { plies: 8 }, 42).unwrap();
        let first = book.opening(3).unwrap();
        assert_eq!(first, book.opening(3).unwrap());
        assert_ne!(first, book.opening(4).unwrap());
        assert_eq!(first.moves.len(), 8);
        assert_eq!(first.game().moves().len(), 8);
        assert_eq!(first.game().result(), GameResult::Ongoing);
    }

    #[test]
    fn opening_files_are_checked_line_by_line() {
        let good = format!("# comment\n{START_FEN}\n\n{START_FEN} ; c0 \"x\"\n");
        assert_eq!(
            parse_openings(&good, OpeningFormat::Fen, None)
                .unwrap()
                .len(),
            2
        );
        let bad = format!("{START_FEN}\nnot a fen\n");
        let error = parse_openings(&bad, OpeningFormat::Fen, None).unwrap_err();
        assert!(error.starts_with("line 2:"), "{error}");
        let moves = parse_openings("f1e1 f11g11 e1f1\n", OpeningFormat::Moves, Some(2)).unwrap();
        assert_eq!(moves[0].moves, vec!["f1e1", "f11g11"]);
        let illegal = parse_openings("f1f3\n", OpeningFormat::Moves, None).unwrap_err();
        assert!(illegal.contains("f1f3"), "{illegal}");
    }
}
