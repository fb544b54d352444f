//! The `agon._agon` Python extension: positions, moves and verdicts from the
//! rules core, and game records read and written by the match runner's own
//! readers and writer, so that Python sees exactly what the tools see.

mod records;

use agon::protocol::command::{MAX_PERFT_DEPTH, MIN_PERFT_DEPTH};
use agon::rules::{
    self, Cell, Color, Game, GameResult, Kind, Move, Position as RulesPosition, legal_moves,
    parse_fen, parse_move, to_fen,
};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a long count looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// A move in `<from><to>` notation, e.g. `f1f2`.
#[pyclass(name = "Move", module = "agon", frozen, eq, ord, hash, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct PyMove(Move);

#[pymethods]
impl PyMove {
    /// The cell the piece leaves.
    #[getter(from_cell)]
    fn origin(&self) -> String {
        self.0.from().to_string()
    }

    /// The cell the piece ends on.
    #[getter(to_cell)]
    fn destination(&self) -> String {
        self.0.to().to_string()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Move('{}')", self.0)
    }
}

/// A move given as an `agon.Move` or as text.
#[derive(FromPyObject)]
enum MoveArg {
    Move(PyMove),
    Text(String),
}

impl MoveArg {
    fn text(&self) -> String {
        match self {
            MoveArg::Move(mv) => mv.0.to_string(),
            MoveArg::Text(text) => text.clone(),
        }
    }
}

/// How a game ended: the winner (`None` for a draw) and the reason.
#[pyclass(module = "agon", frozen, get_all, eq)]
#[derive(Clone, PartialEq)]
struct Outcome {
    /// `"white"`, `"black"`, or `None` for a draw.
    winner: Option<&'static str>,
    /// `"formation"`, `"forfeit"`, `"no-moves"` or `"repetition"`.
    termination: &'static str,
}

#[pymethods]
impl Outcome {
    /// `"1-0"`, `"0-1"` or `"1/2-1/2"`.
    fn result(&self) -> &'static str {
        match self.winner {
            Some("white") => "1-0",
            Some(_) => "0-1",
            None => "1/2-1/2",
        }
    }

    fn __repr__(&self) -> String {
        match self.winner {
            Some(winner) => format!(
                "Outcome(winner='{winner}', termination='{}')",
                self.termination
            ),
            None => format!("Outcome(winner=None, termination='{}')", self.termination),
        }
    }
}

/// A position of a game and the moves that led to it from its root, which
/// the repetition rule needs. `Position()` is the start position,
/// `Position(fen)` any other.
#[pyclass(name = "Position", module = "agon")]
#[derive(Clone)]
struct PyPosition {
    /// The root and the moves played from it: the game knows the
    /// repetitions, so a verdict needs no replay.
    game: Game,
}

impl PyPosition {
    fn rooted_at(root: RulesPosition) -> PyPosition {
        PyPosition {
            game: Game::new(root),
        }
    }

    fn current(&self) -> &RulesPosition {
        self.game.position()
    }

    fn legal(&self, mv: &MoveArg) -> PyResult<Move> {
        // Only the whole game knows the repetition rule; and, as for the
        // engine, no move of any kind comes after the end.
        let result = self.game.result();
        if result != GameResult::Ongoing {
            return Err(PyValueError::new_err(format!(
                "move '{}' comes after the end of the game ({})",
                mv.text(),
                result.describe()
            )));
        }
        if let MoveArg::Move(PyMove(mv)) = mv
            && legal_moves(self.current()).iter().any(|legal| legal == mv)
        {
            return Ok(*mv);
        }
        // The rules core's parser says why a move is not legal.
        parse_move(self.current(), &mv.text()).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// The letter of the FEN for a piece, with `*` when it is captured.
fn piece_text(color: Color, kind: Kind, captured: bool) -> String {
    let letter = match (color, kind) {
        (Color::White, Kind::Queen) => "Q",
        (Color::White, Kind::Guard) => "G",
        (Color::Black, Kind::Queen) => "q",
        (Color::Black, Kind::Guard) => "g",
    };
    if captured {
        format!("{letter}*")
    } else {
        letter.to_string()
    }
}

fn find_cell(name: &str) -> PyResult<Cell> {
    Cell::all()
        .find(|cell| cell.to_string() == name)
        .ok_or_else(|| PyValueError::new_err(format!("cell '{name}' is not on the board")))
}

#[pymethods]
impl PyPosition {
    #[new]
    #[pyo3(signature = (fen = None))]
    fn new(fen: Option<&str>) -> PyResult<PyPosition> {
        let root = match fen {
            None => rules::start_position(),
            Some(text) => parse_fen(text).map_err(|e| PyValueError::new_err(e.to_string()))?,
        };
        Ok(PyPosition::rooted_at(root))
    }

    /// The position in FEN, move number included.
    fn fen(&self) -> String {
        to_fen(self.current())
    }

    /// The FEN of the root, the position before the first move of `move_stack`.
    fn root_fen(&self) -> String {
        to_fen(self.game.start())
    }

    /// The side to move, `"white"` or `"black"`.
    #[getter]
    fn turn(&self) -> &'static str {
        self.current().side_to_move().name()
    }

    /// The Zobrist key: every cell's content and the side to move.
    #[getter]
    fn key(&self) -> u64 {
        self.current().key()
    }

    /// The moves played from the root, oldest first.
    #[getter]
    fn move_stack(&self) -> Vec<PyMove> {
        self.game.moves().iter().copied().map(PyMove).collect()
    }

    /// Every legal move, in the order of the move generator; none once the
    /// game has ended (see `outcome`).
    fn legal_moves(&self) -> Vec<PyMove> {
        if self.is_game_over() {
            return Vec::new();
        }
        legal_moves(self.current())
            .iter()
            .copied()
            .map(PyMove)
            .collect()
    }

    /// The move `text` or `move` stands for if it is legal here; a
    /// `ValueError` saying why not otherwise.
    fn parse_move(&self, mv: MoveArg) -> PyResult<PyMove> {
        self.legal(&mv).map(PyMove)
    }

    /// Whether `move` is legal here.
    fn is_legal(&self, mv: MoveArg) -> bool {
        self.legal(&mv).is_ok()
    }

    /// Plays a move (an `agon.Move` or its text). An illegal move, or any
    /// move once the game has ended, raises `ValueError` with the reason
    /// and leaves the position as it was.
    fn push(&mut self, mv: MoveArg) -> PyResult<PyMove> {
        let mv = self.legal(&mv)?;
        self.game.play(mv);
        Ok(PyMove(mv))
    }

    /// Takes back the last move and returns it (`IndexError` at the root).
    fn pop(&mut self) -> PyResult<PyMove> {
        let mv = self
            .game
            .take_back()
            .ok_or_else(|| PyIndexError::new_err("pop from a position with no moves played"))?;
        Ok(PyMove(mv))
    }

    /// A copy; with `stack=False` the copy's root is the current position.
    #[pyo3(signature = (stack = true))]
    fn copy(&self, stack: bool) -> PyPosition {
        if stack {
            self.clone()
        } else {
            PyPosition::rooted_at(*self.current())
        }
    }

    fn __copy__(&self) -> PyPosition {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyPosition {
        self.clone()
    }

    /// `None` while the game goes on, else an `Outcome`. Repetition counts
    /// the positions of `move_stack`.
    fn outcome(&self) -> Option<Outcome> {
        match self.game.result() {
            GameResult::Ongoing => None,
            GameResult::Win { winner, reason } => Some(Outcome {
                winner: Some(winner.name()),
                termination: reason.name(),
            }),
            GameResult::Draw => Some(Outcome {
                winner: None,
                termination: "repetition",
            }),
        }
    }

    /// Whether the game has ended (see `outcome`).
    fn is_game_over(&self) -> bool {
        self.game.result() != GameResult::Ongoing
    }

    /// The number of legal move sequences of `depth` moves from the current
    /// position, repetition ignored (protocol.md 3.6). The depth goes from 1
    /// to 20, as for the engine's `perft` (`ValueError` otherwise). The
    /// count runs on a thread of its own while this one waits for signals,
    /// so Ctrl-C (`KeyboardInterrupt`) breaks off a deep count.
    fn perft(&self, py: Python<'_>, depth: i64) -> PyResult<u64> {
        let depth = u32::try_from(depth)
            .ok()
            .filter(|depth| (MIN_PERFT_DEPTH..=MAX_PERFT_DEPTH).contains(depth))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "perft depth out of range ({MIN_PERFT_DEPTH}..={MAX_PERFT_DEPTH}), got {depth}"
                ))
            })?;
        let position = *self.current();
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let counting = scope.spawn(|| rules::perft::perft_until(&position, depth, &stop));
            while !counting.is_finished() {
                py.detach(|| std::thread::sleep(SIGNAL_POLL));
                if let Err(interrupted) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    let _ = counting.join();
                    return Err(interrupted);
                }
            }
            match counting.join() {
                Ok(Some(count)) => Ok(count),
                // Nothing sets the flag but the interruption above.
                Ok(None) => Err(PyRuntimeError::new_err("perft broke off")),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// What stands on `cell`: `"Q"`, `"G"`, `"q"`, `"g"`, with `*` when
    /// captured, or `None`.
    fn piece_at(&self, cell: &str) -> PyResult<Option<String>> {
        let cell = find_cell(cell)?;
        Ok(self
            .current()
            .piece_at(cell)
            .map(|p| piece_text(p.color, p.kind, p.captured)))
    }

    /// Every occupied cell and what stands on it (see `piece_at`).
    fn pieces(&self) -> BTreeMap<String, String> {
        Cell::all()
            .filter_map(|cell| {
                let piece = self.current().piece_at(cell)?;
                Some((
                    cell.to_string(),
                    piece_text(piece.color, piece.kind, piece.captured),
                ))
            })
            .collect()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyPosition>()
            .is_ok_and(|other| other.borrow().current() == self.current())
    }

    fn __hash__(&self) -> u64 {
        self.current().key()
    }

    fn __repr__(&self) -> String {
        format!("Position('{}')", self.fen())
    }

    /// The board as an SVG picture, which notebooks draw (see `agon.svg`).
    fn _repr_svg_(slf: &Bound<'_, Self>) -> PyResult<String> {
        slf.py()
            .import("agon.svg")?
            .call_method1("board", (slf,))?
            .extract()
    }

    fn __str__(&self) -> String {
        self.fen()
    }
}

/// The board's cells: (name, file, rank, ring), file and rank counted from
/// 0 (`a1` is file 0, rank 0), in the rules core's order.
#[pyfunction]
fn cells() -> Vec<(String, u8, u8, u8)> {
    Cell::all()
        .map(|cell| (cell.to_string(), cell.file(), cell.rank(), cell.ring()))
        .collect()
}

#[pymodule]
fn _agon(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("START_FEN", rules::START_FEN)?;
    module.add("THRONE", Cell::THRONE.to_string())?;
    module.add_class::<PyPosition>()?;
    module.add_class::<PyMove>()?;
    module.add_class::<Outcome>()?;
    module.add_function(wrap_pyfunction!(cells, module)?)?;
    records::register(module)
}
