//! Game records for Python: `agon match` JSON lines and PGN files, the GUI's
//! exports included, read with the tools' own PGN reader, and PGN written
//! with the match runner's own writer. A JSON-lines record is read through
//! the PGN text the match runner writes for it, so that both files of a run
//! give the same games.

use agon::rules::{Color, START_FEN, parse_fen, parse_move, to_fen};
use agon::tools::atomic_file::write_atomically;
use agon::tools::gui::pgn::{ReadGame, WhiteScore, read_games};
use agon::tools::match_runner::record::{
    Ending, GameRecord, MoveRecord, ScoreRecord, Verdict, today,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// One move as Python receives it: the move, the score from White's side as
/// (centi-guards, mate), the depth, the thinking time and whether it came
/// from the opening book.
type MoveFields = (
    String,
    Option<i32>,
    Option<i32>,
    Option<u32>,
    Option<u64>,
    bool,
);

/// One game as Python receives it: its number in the match (JSON lines
/// only), the tags in file order, the start FEN, the moves, the closing
/// comment (why the game ended) and the result.
type GameFields = (
    Option<u64>,
    Vec<(String, String)>,
    String,
    Vec<MoveFields>,
    Option<String>,
    String,
);

fn fields(number: Option<u64>, game: ReadGame) -> GameFields {
    let moves = game
        .moves
        .into_iter()
        .map(|mv| {
            let (cp, mate) = match mv.score {
                Some(WhiteScore::Cp(cp)) => (Some(cp), None),
                Some(WhiteScore::Mate(mate)) => (None, Some(mate)),
                None => (None, None),
            };
            (mv.text, cp, mate, mv.depth, mv.time_ms, mv.book)
        })
        .collect();
    (number, game.tags, game.fen, moves, game.reason, game.result)
}

fn value_error(path: &std::path::Path, what: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{}: {what}", path.display()))
}

/// Reads every game of an `agon match -jsonl` file or a PGN file (told apart
/// by the first character: `{` starts a JSON line). An empty file, as a
/// match writes before its first game ends, has no games.
#[pyfunction]
fn read_record_file(py: Python<'_>, path: PathBuf) -> PyResult<Vec<GameFields>> {
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            value_error(&path, "the file is not UTF-8 text")
        } else {
            e.into()
        }
    })?;
    py.detach(|| {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        if !text.trim_start().starts_with('{') {
            let games = read_games(&text).map_err(|e| value_error(&path, e))?;
            return Ok(games.into_iter().map(|game| fields(None, game)).collect());
        }
        let mut games = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at_line =
                |e: &dyn std::fmt::Display| value_error(&path, format!("line {}: {e}", index + 1));
            let record: GameRecord = serde_json::from_str(line).map_err(|e| at_line(&e))?;
            let read = read_games(&record.pgn()).map_err(|e| at_line(&e))?;
            games.extend(read.into_iter().map(|game| fields(Some(record.game), game)));
        }
        Ok(games)
    })
}

/// The PGN text `agon match -pgnout` writes for a game given as tags, moves
/// (scores from White's side) and the closing reason. The tags it reads are
/// those the match runner writes; the game must be finished (a `Result` of
/// `1-0`, `0-1` or `1/2-1/2` and a `Termination` of the records), and every
/// move legal.
#[pyfunction]
fn record_pgn(
    tags: Vec<(String, String)>,
    moves: Vec<MoveFields>,
    reason: String,
) -> PyResult<String> {
    let tag = |name: &str| {
        tags.iter()
            .find(|(tag, _)| tag == name)
            .map(|(_, value)| value.clone())
    };
    let result = Verdict::try_from(tag("Result").unwrap_or_else(|| "*".to_string()))
        .map_err(|e| PyValueError::new_err(format!("an unfinished game has no record: {e}")))?;
    let termination_tag = tag("Termination").unwrap_or_default();
    let termination: Ending = serde_json::from_value(serde_json::Value::String(
        termination_tag.clone(),
    ))
    .map_err(|_| {
        PyValueError::new_err(format!(
            "'{termination_tag}' is not a termination of the records"
        ))
    })?;
    let fen = tag("FEN").unwrap_or_else(|| START_FEN.to_string());
    let mut position =
        parse_fen(&fen).map_err(|e| PyValueError::new_err(format!("bad FEN tag: {e}")))?;
    let mut book = Vec::new();
    let mut played = Vec::new();
    for (index, (text, cp, mate, depth, time_ms, from_book)) in moves.into_iter().enumerate() {
        let mover = position.side_to_move();
        let mv = parse_move(&position, &text)
            .map_err(|e| PyValueError::new_err(format!("move {}: {e}", index + 1)))?;
        position = position.make_move(mv);
        if from_book && played.is_empty() {
            book.push(text);
            continue;
        }
        let (cp, mate) = WhiteScore::from_mover(Color::White, cp, mate)
            .map_or((None, None), |score| score.for_mover(mover));
        played.push(MoveRecord {
            text,
            score: mate.map(ScoreRecord::Mate).or(cp.map(ScoreRecord::Cp)),
            depth,
            time_ms: time_ms.unwrap_or(0),
        });
    }
    let shared_control = tag("TimeControl").unwrap_or_else(|| "-".to_string());
    let record = GameRecord {
        game: 1,
        round: tag("Round").and_then(|r| r.parse().ok()).unwrap_or(1),
        white: tag("White").unwrap_or_else(|| "?".to_string()),
        black: tag("Black").unwrap_or_else(|| "?".to_string()),
        result,
        termination,
        reason,
        fen,
        book,
        moves: played,
        white_time_control: tag("WhiteTimeControl").unwrap_or_else(|| shared_control.clone()),
        black_time_control: tag("BlackTimeControl").unwrap_or(shared_control),
        final_fen: to_fen(&position),
        date: tag("Date").unwrap_or_else(today),
    };
    Ok(record.pgn())
}

/// Writes `text` to `path` whole or not at all (temporary file, fsync, rename).
#[pyfunction]
fn write_text_atomically(py: Python<'_>, path: PathBuf, text: String) -> PyResult<()> {
    py.detach(|| write_atomically(&path, text.as_bytes()))?;
    Ok(())
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(read_record_file, module)?)?;
    module.add_function(wrap_pyfunction!(record_pgn, module)?)?;
    module.add_function(wrap_pyfunction!(write_text_atomically, module)?)
}
