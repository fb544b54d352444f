//! `agon datagen`: self-play games (or games against other networks) at a
//! fixed node count per move, on several threads, from diverse openings,
//! written as compact training
//! records (the format is in protocol.md, "Training records") appended to a
//! file a whole game at a time, so that a run stopped at any moment (a
//! signal, a kill, a requeued job) is continued by the same command, and
//! spread over the shards of a job array; and the counts of record files.

use super::run_lock::{LockError, RunLock};
use super::seeds::part_seed;
use super::shard::Shard;
use crate::rules::dense::{dense, from_dense};
use crate::rules::{Cell, Color, Game, GameResult, Kind, Piece, Position, start_position};
use crate::search::eval::{capture_cells, has_win_threat};
use crate::search::nnue::NetworkRef;
use crate::search::{
    Engine, EngineOptions, Score, SearchControl, SearchLimits, SearchReport, TableTooLarge,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::hash::{DefaultHasher, Hasher};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes per record.
pub const RECORD_SIZE: usize = 26;
/// Most pieces a record can hold (the game has 14).
const MAX_PIECES: usize = 16;
/// Scores are clamped to this many centi-guards in the records.
const SCORE_LIMIT: i32 = 30_000;
/// Most uniformly random plies an opening may have (`--random-plies`):
/// 99.9% of random games are still going after them, and a longer random
/// prelude is no longer an opening.
pub const MAX_RANDOM_PLIES: u32 = 100;
/// Random openings drawn for a game before the run gives up on finding one
/// that has not ended (see [`random_opening`]).
const OPENING_ATTEMPTS: u32 = 1000;

/// A position with what the trainer learns from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The position (its move number is derived from the ply).
    pub position: Position,
    /// The search's score from the side to move's view, centi-guards.
    pub score: i16,
    /// Plies played since the start position.
    pub ply: u16,
    /// The game's result from the side to move's view: 0 lost, 1 drawn, 2 won.
    pub result: u8,
}

/// Why bytes are not a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// More than [`MAX_PIECES`] pieces on the board.
    TooManyPieces(usize),
    /// A piece code or field outside its range.
    Malformed(&'static str),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::TooManyPieces(count) => {
                write!(f, "{count} pieces, a record holds at most {MAX_PIECES}")
            }
            RecordError::Malformed(what) => write!(f, "malformed record: {what}"),
        }
    }
}

impl std::error::Error for RecordError {}

/// Why a datagen run, or the reading of a record file, failed.
#[derive(Debug)]
pub enum DatagenError {
    /// `--threads` or `--nodes` was 0.
    NothingToRun,
    /// `--max-plies` ends games within their random opening, before any
    /// searched (and recorded) ply.
    NoSearchedPly {
        /// The plies a game may last.
        max_plies: u32,
        /// The random plies of an opening (or one more).
        random_plies: u32,
    },
    /// The hash tables of `--hash` could not be had.
    Hash(String),
    /// Another process writes the same file.
    Locked(LockError),
    /// A file could not be opened, read or written.
    File {
        /// What was being done: "open", "read", "append to" or "write".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A record of a file is not a valid record.
    BadRecord {
        /// The file.
        path: PathBuf,
        /// The record's number, from 1.
        number: usize,
        /// What is wrong with it.
        error: RecordError,
    },
    /// The output file exists and is not a record file (the bad record
    /// inside); it is left as it is.
    ForeignOutput(Box<DatagenError>),
    /// Every random opening drawn for a game ended the game.
    NoOpening {
        /// The random plies asked for.
        plies: u32,
        /// The openings drawn.
        attempts: u32,
    },
    /// A position could not be written as a record.
    Encode(RecordError),
    /// The progress lines could not be written.
    Progress(std::io::Error),
    /// A signal (Ctrl-C, SIGTERM) stopped the run.
    Interrupted {
        /// Games written by this run.
        games: u64,
        /// Games in progress when the signal came, dropped unwritten.
        dropped: u64,
    },
}

impl std::fmt::Display for DatagenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DatagenError::NothingToRun => write!(f, "--threads and --nodes must be at least 1"),
            DatagenError::NoSearchedPly {
                max_plies,
                random_plies,
            } => write!(
                f,
                "--max-plies {max_plies} ends games within their opening of {random_plies} \
                 random plies or one more, before any position is recorded: it must be more \
                 than {}",
                u64::from(*random_plies) + 1
            ),
            DatagenError::Hash(reason) => write!(f, "--hash: {reason}"),
            DatagenError::Locked(e) => write!(f, "the output file: {e}"),
            DatagenError::File {
                action,
                path,
                error,
            } => write!(f, "cannot {action} {}: {error}", path.display()),
            DatagenError::BadRecord {
                path,
                number,
                error,
            } => write!(f, "{}: record {number}: {error}", path.display()),
            DatagenError::ForeignOutput(error) => write!(
                f,
                "{error}: the output is not a record file to continue, and is left as it is"
            ),
            DatagenError::NoOpening { plies, attempts } => write!(
                f,
                "none of {attempts} random openings of {plies} plies left the game going; \
                 lower --random-plies"
            ),
            DatagenError::Encode(error) => write!(f, "cannot encode a record: {error}"),
            DatagenError::Progress(error) => write!(f, "cannot write progress: {error}"),
            DatagenError::Interrupted { games, dropped } => write!(
                f,
                "interrupted after {games} games ({dropped} in progress dropped); the same \
                 command continues the file"
            ),
        }
    }
}

impl std::error::Error for DatagenError {}

impl DatagenError {
    fn file(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DatagenError {
        move |error| DatagenError::File {
            action,
            path: path.to_path_buf(),
            error,
        }
    }
}

/// The four-bit code of a piece: bit 0 Black, bit 1 queen, bit 2 captured.
fn piece_code(piece: Piece) -> u8 {
    u8::from(piece.color == Color::Black)
        | u8::from(piece.kind == Kind::Queen) << 1
        | u8::from(piece.captured) << 2
}

impl Record {
    /// The record's bytes.
    ///
    /// # Errors
    ///
    /// [`RecordError::TooManyPieces`] when the board holds more than 16.
    pub fn encode(&self) -> Result<[u8; RECORD_SIZE], RecordError> {
        let mut bytes = [0u8; RECORD_SIZE];
        let mut occupancy = 0u128;
        let mut codes = 0u64;
        let mut count = 0;
        for cell in crate::rules::Cell::all() {
            if let Some(piece) = self.position.piece_at(cell) {
                if count == MAX_PIECES {
                    return Err(RecordError::TooManyPieces(
                        self.position.occupied().count_ones() as usize,
                    ));
                }
                occupancy |= 1 << dense(cell);
                codes |= u64::from(piece_code(piece)) << (4 * count);
                count += 1;
            }
        }
        bytes[..12].copy_from_slice(&occupancy.to_le_bytes()[..12]);
        bytes[12..20].copy_from_slice(&codes.to_le_bytes());
        bytes[20..22].copy_from_slice(&self.score.to_le_bytes());
        bytes[22..24].copy_from_slice(&self.ply.to_le_bytes());
        bytes[24] = u8::from(self.position.side_to_move() == Color::Black);
        bytes[25] = self.result;
        Ok(bytes)
    }

    /// The record stored in `bytes`.
    ///
    /// # Errors
    ///
    /// [`RecordError`] when a field is out of range.
    pub fn decode(bytes: &[u8; RECORD_SIZE]) -> Result<Record, RecordError> {
        let mut wide = [0u8; 16];
        wide[..12].copy_from_slice(&bytes[..12]);
        let occupancy = u128::from_le_bytes(wide);
        let mut code_bytes = [0u8; 8];
        code_bytes.copy_from_slice(&bytes[12..20]);
        let codes = u64::from_le_bytes(code_bytes);
        let side = match bytes[24] {
            0 => Color::White,
            1 => Color::Black,
            _ => return Err(RecordError::Malformed("side to move")),
        };
        if bytes[25] > 2 {
            return Err(RecordError::Malformed("result"));
        }
        let count = occupancy.count_ones() as usize;
        if count > MAX_PIECES {
            return Err(RecordError::TooManyPieces(count));
        }
        if count < MAX_PIECES && codes >> (4 * count) != 0 {
            return Err(RecordError::Malformed("piece codes beyond the pieces"));
        }
        let ply = u16::from_le_bytes([bytes[22], bytes[23]]);
        let mut position = Position::empty(side, 1 + u32::from(ply) / 2);
        let mut rest = occupancy;
        let mut slot = 0;
        while rest != 0 {
            let index = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let cell = from_dense(index).ok_or(RecordError::Malformed("cell"))?;
            let code = (codes >> (4 * slot)) & 0xF;
            if code > 7 {
                return Err(RecordError::Malformed("piece code"));
            }
            position.put(
                cell,
                Piece {
                    color: if code & 1 != 0 {
                        Color::Black
                    } else {
                        Color::White
                    },
                    kind: if code & 2 != 0 {
                        Kind::Queen
                    } else {
                        Kind::Guard
                    },
                    captured: code & 4 != 0,
                },
            );
            slot += 1;
        }
        Ok(Record {
            position,
            score: i16::from_le_bytes([bytes[20], bytes[21]]),
            ply,
            result: bytes[25],
        })
    }
}

/// Calls `visit` with every whole record of `path`, its bytes and its
/// decoding, in file order (a torn last record, left by a run killed
/// mid-write, is ignored if its bytes can start a record).
///
/// # Errors
///
/// The file and the reason when it cannot be read or holds a bad record.
pub fn for_each_record(
    path: &Path,
    visit: impl FnMut(&[u8; RECORD_SIZE], Record),
) -> Result<(), DatagenError> {
    let file = File::open(path).map_err(DatagenError::file("read", path))?;
    visit_records(file, path, visit)
}

/// [`for_each_record`] over `input`, the contents of `path`.
fn visit_records(
    input: impl Read,
    path: &Path,
    mut visit: impl FnMut(&[u8; RECORD_SIZE], Record),
) -> Result<(), DatagenError> {
    let mut input = BufReader::new(input);
    let bad_record = |number, error| DatagenError::BadRecord {
        path: path.to_path_buf(),
        number,
        error,
    };
    let mut bytes = [0u8; RECORD_SIZE];
    for number in 1.. {
        let mut filled = 0;
        while filled < RECORD_SIZE {
            match input.read(&mut bytes[filled..]) {
                Ok(0) if filled == 0 => return Ok(()),
                // A torn last record must be the start of one: the fields it
                // lacks, read as zeros, are valid in any record, so text or
                // a network file is not taken for a few bytes of records.
                Ok(0) => {
                    bytes[filled..].fill(0);
                    return Record::decode(&bytes)
                        .map(|_| ())
                        .map_err(|error| bad_record(number, error));
                }
                Ok(count) => filled += count,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(DatagenError::file("read", path)(error)),
            }
        }
        let record = Record::decode(&bytes).map_err(|error| bad_record(number, error))?;
        visit(&bytes, record);
    }
    Ok(())
}

/// Reads every whole record of `path` (see [`for_each_record`]).
///
/// # Errors
///
/// The file and the reason when it cannot be read or holds a bad record.
pub fn read_records(path: &Path) -> Result<Vec<Record>, DatagenError> {
    let mut records = Vec::new();
    for_each_record(path, |_, record| records.push(record))?;
    Ok(records)
}

/// Positions, games and distinct positions and games of record files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordStats {
    /// Records.
    pub positions: u64,
    /// Games: the records carry no game number, so a game is a run of
    /// records of rising ply (a game's kept positions, in order); the next
    /// game starts at a ply no higher than the last.
    pub games: u64,
    /// Positions with distinct keys (pieces, captured pieces, side to move).
    pub distinct_positions: u64,
    /// Games whose records differ from every other game's.
    pub distinct_games: u64,
    /// Positions of a throne race against the side to move (see
    /// [`is_throne_race`]).
    pub throne_races: u64,
    /// Their scores added up, centi-guards from the side to move's view.
    pub throne_race_score: i64,
    /// Their results added up in half points for the side to move (a win
    /// 2, a draw 1).
    pub throne_race_half_points: u64,
}

/// Whether the other side's queen holds the throne with at least two of its
/// guards beside it while the side to move has no piece around the throne:
/// the race agon's short searches lose against a deeper throne player
/// (docs/throne-races.txt), whose score and result are worth comparing.
pub fn is_throne_race(position: &Position) -> bool {
    let us = position.side_to_move();
    let active = |cell: Cell| position.piece_at(cell).filter(|piece| !piece.captured);
    let their_queen_on_throne =
        active(Cell::THRONE).is_some_and(|piece| piece.color != us && piece.kind == Kind::Queen);
    let around: Vec<Piece> = Cell::all()
        .filter(|cell| cell.ring() == 1)
        .filter_map(active)
        .collect();
    their_queen_on_throne
        && around.iter().all(|piece| piece.color != us)
        && around
            .iter()
            .filter(|piece| piece.kind == Kind::Guard)
            .count()
            >= 2
}

/// Counts `files` together, and calls `per_file` with each file's own
/// counts.
///
/// # Errors
///
/// The file and the reason when one cannot be read or holds a bad record.
pub fn record_stats(
    files: &[PathBuf],
    mut per_file: impl FnMut(&Path, &RecordStats),
) -> Result<RecordStats, DatagenError> {
    let mut positions = HashSet::new();
    let mut games = HashSet::new();
    let mut total = RecordStats::default();
    for path in files {
        let mut own = RecordStats::default();
        let mut game = DefaultHasher::new();
        let mut last_ply = None;
        let mut finish = |game: &DefaultHasher, own: &mut RecordStats| {
            own.games += 1;
            games.insert(game.finish());
        };
        for_each_record(path, |bytes, record| {
            if last_ply.is_some_and(|ply| record.ply <= ply) {
                finish(&game, &mut own);
                game = DefaultHasher::new();
            }
            last_ply = Some(record.ply);
            game.write(bytes);
            own.positions += 1;
            positions.insert(record.position.key());
            if is_throne_race(&record.position) {
                own.throne_races += 1;
                own.throne_race_score += i64::from(record.score);
                own.throne_race_half_points += u64::from(record.result);
            }
        })?;
        if last_ply.is_some() {
            finish(&game, &mut own);
        }
        per_file(path, &own);
        total.positions += own.positions;
        total.games += own.games;
        total.throne_races += own.throne_races;
        total.throne_race_score += own.throne_race_score;
        total.throne_race_half_points += own.throne_race_half_points;
    }
    total.distinct_positions = positions.len() as u64;
    total.distinct_games = games.len() as u64;
    Ok(total)
}

impl std::fmt::Display for RecordStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let share = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
        write!(
            f,
            "positions {} games {} distinct positions {} ({:.2}% repeated) distinct games {} \
             ({:.2}% repeated) throne races {} ({:.2}%, mean score {:+.2}, scoring {:.1}%)",
            self.positions,
            self.games,
            self.distinct_positions,
            share(self.positions - self.distinct_positions, self.positions),
            self.distinct_games,
            share(self.games - self.distinct_games, self.games),
            self.throne_races,
            share(self.throne_races, self.positions),
            self.throne_race_score as f64 / 100.0 / self.throne_races.max(1) as f64,
            share(self.throne_race_half_points, 2 * self.throne_races),
        )
    }
}

/// How to generate.
#[derive(Clone, Debug)]
pub struct DatagenSettings {
    /// Nodes searched per move.
    pub nodes: u64,
    /// Games played at once (one search thread each).
    pub threads: usize,
    /// Stop when the job's files hold this many games (each shard makes
    /// its share; the games already in its file count).
    pub games: Option<u64>,
    /// Stop when the job's files hold this many positions (each shard
    /// makes its share; the records already in its file count).
    pub positions: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    /// The part of the job this process makes, in its own file.
    pub shard: Shard,
    /// Seed of the openings and the choices among near-best moves.
    pub seed: u64,
    /// Uniformly random plies from the start, at least.
    pub random_plies: u32,
    /// Plies after the random ones in which a move within
    /// `near_best_margin` of the best may be chosen at random.
    pub near_best_plies: u32,
    /// Centi-guards a near-best move may be behind the best.
    pub near_best_margin: i32,
    /// A game this long is scored a draw.
    pub max_plies: u32,
    /// Transposition table per game thread, MiB.
    pub hash_mib: usize,
    /// Whether the searches evaluate with the embedded network (otherwise
    /// the hand-written evaluation).
    pub use_network: bool,
    /// Networks that play one side of each game instead of self-play, one
    /// drawn at random per game with a random colour. Every position is
    /// recorded with the learning side's score: where the opponent moves,
    /// the learning side searches the position as well. Empty: self-play.
    pub opponents: Vec<NetworkRef>,
    /// Nodes an opponent network searches per move.
    pub opponent_nodes: u64,
}

/// Counts shared by the game threads.
#[derive(Default)]
struct Tally {
    games: AtomicU64,
    positions: AtomicU64,
    white_wins: AtomicU64,
    draws: AtomicU64,
    black_wins: AtomicU64,
    /// Wins, draws and losses of the learning side in games against
    /// opponent networks.
    learner: [AtomicU64; 3],
}

/// One finished game's records and result.
struct Played {
    records: Vec<Record>,
    result: GameResult,
    /// The learning side's colour in a game against an opponent network.
    learner: Option<Color>,
}

/// A game after `random_plies` (or one more) uniformly random moves that
/// is still going; openings that end the game are drawn again, up to
/// [`OPENING_ATTEMPTS`] in all. `None` when `stop` is set (a signal).
fn random_opening(
    settings: &DatagenSettings,
    rng: &mut StdRng,
    stop: &AtomicBool,
) -> Result<Option<Game>, DatagenError> {
    let start = start_position();
    for _ in 0..OPENING_ATTEMPTS {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let mut game = Game::new(start);
        let random_plies = settings.random_plies + rng.random_range(0..=1);
        for _ in 0..random_plies {
            let moves = crate::rules::legal_moves(game.position());
            if moves.is_empty() || game.result() != GameResult::Ongoing {
                break;
            }
            game.play(moves.as_slice()[rng.random_range(0..moves.len())]);
        }
        if game.result() == GameResult::Ongoing {
            return Ok(Some(game));
        }
    }
    Err(DatagenError::NoOpening {
        plies: settings.random_plies,
        attempts: OPENING_ATTEMPTS,
    })
}

/// The other side of a game against an opponent network.
struct Opponent<'e> {
    engine: &'e mut Engine,
    color: Color,
}

/// Plays one game from a random opening, `engine` against itself or against
/// `opponent`; `None` when `control` is stopped (a signal) before it ends.
fn play_game(
    engine: &mut Engine,
    mut opponent: Option<Opponent>,
    settings: &DatagenSettings,
    rng: &mut StdRng,
    control: &SearchControl,
) -> Result<Option<Played>, DatagenError> {
    let Some(mut game) = random_opening(settings, rng, &control.stop)? else {
        return Ok(None);
    };
    engine.clear();
    if let Some(opponent) = &mut opponent {
        opponent.engine.clear();
    }
    let limits = SearchLimits {
        nodes: Some(settings.nodes),
        ..SearchLimits::default()
    };
    let opponent_limits = SearchLimits {
        nodes: Some(settings.opponent_nodes),
        ..SearchLimits::default()
    };
    // (position, score, ply) before the result is known.
    let mut kept: Vec<(Position, i32, u32)> = Vec::new();
    let mut searched_plies = 0;
    let result = loop {
        let result = game.result();
        if result != GameResult::Ongoing {
            break result;
        }
        let ply = game.moves().len() as u32;
        if ply >= settings.max_plies {
            break GameResult::Draw;
        }
        let varied = searched_plies < settings.near_best_plies;
        let (searcher, searcher_limits, opponent_moves) = match &mut opponent {
            Some(opponent) if opponent.color == game.position().side_to_move() => {
                (&mut *opponent.engine, &opponent_limits, true)
            }
            _ => (&mut *engine, &limits, false),
        };
        searcher.adjust_options(|options| options.multipv = if varied { 4 } else { 1 });
        let mut lines: Vec<SearchReport> = Vec::new();
        let outcome = searcher.search(&game, searcher_limits, control, |report| {
            if report.multipv == 1 {
                lines.clear();
            }
            lines.push(report.clone());
        });
        if control.stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let Some(best) = outcome.best else {
            break game.result();
        };
        let position = *game.position();
        let learned = if !worth_learning(&position) {
            None
        } else if opponent_moves {
            // The opponent's score is another network's opinion: the
            // learning side judges the position with its own search.
            engine.adjust_options(|options| options.multipv = 1);
            let judged = engine.search(&game, &limits, control, |_| {});
            if control.stop.load(Ordering::SeqCst) {
                return Ok(None);
            }
            Some(judged.score)
        } else {
            Some(outcome.score)
        };
        if let Some(Score::Centi(score)) = learned {
            kept.push((position, score, ply));
        }
        let chosen = if varied {
            let best_score = centi(outcome.score);
            let near: Vec<_> = lines
                .iter()
                .filter(|line| {
                    matches!(line.score, Score::Centi(_))
                        && centi(line.score) >= best_score - settings.near_best_margin
                })
                .filter_map(|line| line.pv.first().copied())
                .collect();
            if near.is_empty() {
                best
            } else {
                near[rng.random_range(0..near.len())]
            }
        } else {
            best
        };
        game.play(chosen);
        searched_plies += 1;
    };
    let records = kept
        .into_iter()
        .map(|(position, score, ply)| Record {
            position,
            score: score.clamp(-SCORE_LIMIT, SCORE_LIMIT) as i16,
            ply: u16::try_from(ply).unwrap_or(u16::MAX),
            result: result_for(result, position.side_to_move()),
        })
        .collect();
    Ok(Some(Played {
        records,
        result,
        learner: opponent.map(|opponent| !opponent.color),
    }))
}

/// Whether a static evaluation should learn `position`'s score: the game
/// goes on, no formation is one step away and the side to move cannot
/// capture (the quiescence search resolves those before it evaluates).
/// Positions where a captured piece waits for relocation are kept: the
/// search stands pat in them.
fn worth_learning(position: &Position) -> bool {
    let us = position.side_to_move();
    let captures = capture_cells(position, us);
    position.formation_outcome().is_none()
        && !has_win_threat(position, us)
        && !has_win_threat(position, !us)
        && !crate::rules::legal_moves(position)
            .iter()
            .any(|mv| captures & mv.to().bit() != 0)
}

/// A score as centi-guards, wins and losses far beyond any evaluation.
fn centi(score: Score) -> i32 {
    match score {
        Score::Centi(cp) => cp,
        Score::Mate(moves) if moves > 0 => 100_000 - moves,
        Score::Mate(moves) => -100_000 - moves,
    }
}

/// The result from `side`'s view: 0 lost, 1 drawn, 2 won.
fn result_for(result: GameResult, side: Color) -> u8 {
    match result {
        GameResult::Win { winner, .. } if winner == side => 2,
        GameResult::Win { .. } => 0,
        GameResult::Draw | GameResult::Ongoing => 1,
    }
}

/// Opens `path` for appending, dropping a torn last record; returns the
/// file and the number of whole records already in it. An existing file is
/// read through first: one that is not a record file (notes, a network
/// named by mistake) is refused before anything is cut from it or added.
fn open_output(path: &Path) -> Result<(File, u64), DatagenError> {
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(path)
        .map_err(DatagenError::file("open", path))?;
    let mut whole = 0;
    visit_records(&file, path, |_, _| whole += 1).map_err(|error| match error {
        DatagenError::BadRecord { .. } => DatagenError::ForeignOutput(Box::new(error)),
        error => error,
    })?;
    file.set_len(whole * RECORD_SIZE as u64)
        .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
        .map_err(DatagenError::file("append to", path))?;
    Ok((file, whole))
}

/// Shard `shard`'s part of a job total `total`: the totals of the parts
/// add up to it.
fn share(total: u64, shard: Shard) -> u64 {
    let upto =
        |parts: u64| (u128::from(total) * u128::from(parts) / u128::from(shard.count())) as u64;
    upto(shard.number()) - upto(shard.number() - 1)
}

/// Plays games until a limit is reached (or a signal, setting `interrupt`,
/// when none is given), appending their records to the shard's file of
/// `path` (see [`Shard::file_name`]) a whole game at a time and writing a
/// progress line to `progress` every `interval`.
///
/// Each game's seed mixes the run's seed, the shard, the records already in
/// the file and the game's number, so that no two seeds, shards or
/// continued runs play the same game. A signal stops the searches at once
/// and drops the games in progress.
///
/// # Errors
///
/// Why, when the settings are unusable, the file cannot be written or a
/// signal stopped the run ([`DatagenError::Interrupted`]).
pub fn run(
    path: &Path,
    settings: &DatagenSettings,
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn Write,
    interval: Duration,
) -> Result<(), DatagenError> {
    if settings.threads == 0 || settings.nodes == 0 {
        return Err(DatagenError::NothingToRun);
    }
    // Games that end within their opening record nothing: a --positions
    // goal would never be reached, and --games would count empty games.
    if u64::from(settings.max_plies) <= u64::from(settings.random_plies) + 1 {
        return Err(DatagenError::NoSearchedPly {
            max_plies: settings.max_plies,
            random_plies: settings.random_plies,
        });
    }
    let path = settings.shard.file_name(path);
    let path = path.as_path();
    // Two processes on one file would play the same seeds and write over
    // each other's records.
    let _run_lock = RunLock::take(path).map_err(DatagenError::Locked)?;
    let (file, existing) = open_output(path)?;
    let existing_games = match settings.games {
        Some(_) => record_stats(&[path.to_path_buf()], |_, _| {})?.games,
        None => 0,
    };
    let left = |target: Option<u64>, made: u64| {
        target.map(|total| share(total, settings.shard).saturating_sub(made))
    };
    let goals = Goals {
        games: left(settings.games, existing_games),
        positions: left(settings.positions, existing),
        time: settings.time,
    };
    let shard = if settings.shard.is_whole() {
        String::new()
    } else {
        format!(", shard {}", settings.shard)
    };
    let opponent_nodes = if settings.opponent_nodes == settings.nodes {
        String::new()
    } else {
        format!(" at {} nodes/move", settings.opponent_nodes)
    };
    let opponents = match settings.opponents.len() {
        0 => String::new(),
        1 => format!(", against 1 opponent network{opponent_nodes}"),
        count => format!(", against {count} opponent networks{opponent_nodes}"),
    };
    writeln!(
        progress,
        "datagen: {} ({existing} records already){shard}, {} nodes/move, {} threads{opponents}",
        path.display(),
        settings.nodes,
        settings.threads
    )
    .map_err(DatagenError::Progress)?;
    let output = Mutex::new(file);
    let tally = Tally::default();
    let next_game = AtomicU64::new(0);
    let dropped = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let started = Instant::now();
    let done = |tally: &Tally| {
        interrupt.load(Ordering::SeqCst)
            || failed.load(Ordering::SeqCst)
            || goals
                .games
                .is_some_and(|goal| tally.games.load(Ordering::Relaxed) >= goal)
            || goals
                .positions
                .is_some_and(|goal| tally.positions.load(Ordering::Relaxed) >= goal)
            || goals.time.is_some_and(|limit| started.elapsed() >= limit)
    };
    let mut options = EngineOptions {
        hash_mib: settings.hash_mib,
        ..EngineOptions::default()
    };
    options.tuning.use_network = settings.use_network;
    // Made before any game starts, so that a --hash the system will not
    // give is refused with a message.
    let engine_pairs = (0..settings.threads)
        .map(|_| {
            let opponent = if settings.opponents.is_empty() {
                None
            } else {
                Some(Engine::new(options)?)
            };
            Ok((Engine::new(options)?, opponent))
        })
        .collect::<Result<Vec<_>, TableTooLarge>>()
        .map_err(|e| DatagenError::Hash(e.to_string()))?;
    let failure: Mutex<Option<DatagenError>> = Mutex::new(None);
    // A game thread's error: the run's outcome, and the other threads stop.
    let fail = |error| {
        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
        failed.store(true, Ordering::SeqCst);
    };
    std::thread::scope(|scope| {
        for engines in engine_pairs {
            scope.spawn(|| {
                let (mut engine, mut opponent_engine) = engines;
                let control = SearchControl {
                    stop: Arc::clone(interrupt),
                    ..SearchControl::default()
                };
                while !done(&tally) {
                    let number = next_game.fetch_add(1, Ordering::Relaxed);
                    if goals.games.is_some_and(|goal| number >= goal) {
                        break;
                    }
                    let mut rng = StdRng::seed_from_u64(part_seed(
                        settings.seed,
                        &[
                            settings.shard.count(),
                            settings.shard.number(),
                            existing,
                            number,
                        ],
                    ));
                    let opponent = opponent_engine.as_mut().map(|opponent_engine| {
                        let network =
                            settings.opponents[rng.random_range(0..settings.opponents.len())];
                        opponent_engine.adjust_options(|options| {
                            options.tuning.use_network = true;
                            options.tuning.network = network;
                        });
                        Opponent {
                            engine: opponent_engine,
                            color: if rng.random_bool(0.5) {
                                Color::White
                            } else {
                                Color::Black
                            },
                        }
                    });
                    let played =
                        match play_game(&mut engine, opponent, settings, &mut rng, &control) {
                            Ok(Some(played)) => played,
                            Ok(None) => {
                                dropped.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Err(error) => {
                                fail(error);
                                break;
                            }
                        };
                    if let Err(error) = write_game(&output, path, &played.records) {
                        fail(error);
                        break;
                    }
                    tally.games.fetch_add(1, Ordering::Relaxed);
                    tally
                        .positions
                        .fetch_add(played.records.len() as u64, Ordering::Relaxed);
                    match played.result {
                        GameResult::Win {
                            winner: Color::White,
                            ..
                        } => &tally.white_wins,
                        GameResult::Win { .. } => &tally.black_wins,
                        _ => &tally.draws,
                    }
                    .fetch_add(1, Ordering::Relaxed);
                    if let Some(learner) = played.learner {
                        tally.learner[2 - usize::from(result_for(played.result, learner))]
                            .fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        let mut last = Instant::now();
        while !done(&tally) {
            std::thread::sleep(Duration::from_millis(50));
            if last.elapsed() >= interval {
                last = Instant::now();
                let _ = writeln!(progress, "{}", progress_line(&tally, &goals, started));
            }
        }
    });
    if let Some(error) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(error);
    }
    writeln!(progress, "{}", progress_line(&tally, &goals, started))
        .map_err(DatagenError::Progress)?;
    if interrupt.load(Ordering::SeqCst) {
        return Err(DatagenError::Interrupted {
            games: tally.games.load(Ordering::Relaxed),
            dropped: dropped.load(Ordering::Relaxed),
        });
    }
    Ok(())
}

/// Appends one game's records in one write, so that the file holds whole
/// games: a run killed mid-write leaves at most a torn last record, which
/// the next run drops.
fn write_game(output: &Mutex<File>, path: &Path, records: &[Record]) -> Result<(), DatagenError> {
    let mut bytes = Vec::with_capacity(records.len() * RECORD_SIZE);
    for record in records {
        bytes.extend_from_slice(&record.encode().map_err(DatagenError::Encode)?);
    }
    output
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .write_all(&bytes)
        .map_err(DatagenError::file("write", path))
}

/// What a run still has to make before it stops.
struct Goals {
    games: Option<u64>,
    positions: Option<u64>,
    time: Option<Duration>,
}

/// `games G positions P (N/s) W/D/L w/d/l time left T`, counting this
/// run's games.
fn progress_line(tally: &Tally, goals: &Goals, started: Instant) -> String {
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let games = tally.games.load(Ordering::Relaxed);
    let positions = tally.positions.load(Ordering::Relaxed);
    let fraction_of = |made: u64, goal: u64| {
        if goal == 0 {
            1.0
        } else {
            made as f64 / goal as f64
        }
    };
    let fractions = [
        goals.games.map(|goal| fraction_of(games, goal)),
        goals.positions.map(|goal| fraction_of(positions, goal)),
        goals
            .time
            .map(|limit| elapsed / limit.as_secs_f64().max(1e-9)),
    ];
    let fraction = fractions
        .into_iter()
        .flatten()
        .fold(None, |best: Option<f64>, f| {
            Some(best.map_or(f, |b| b.max(f)))
        });
    let left = match fraction {
        Some(f) if f > 0.0 => format!("{:.0}s", (elapsed / f.min(1.0) - elapsed).max(0.0)),
        Some(_) => "?".to_string(),
        None => "until stopped".to_string(),
    };
    let [won, drawn, lost] = tally.learner.each_ref().map(|n| n.load(Ordering::Relaxed));
    let learner = if won + drawn + lost > 0 {
        format!(" learner W/D/L {won}/{drawn}/{lost}")
    } else {
        String::new()
    };
    format!(
        "games {games} positions {positions} ({:.0}/s) W/D/L {}/{}/{}{learner} time left {left}",
        positions as f64 / elapsed,
        tally.white_wins.load(Ordering::Relaxed),
        tally.draws.load(Ordering::Relaxed),
        tally.black_wins.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::legal_moves;

    /// Positions of random games, captured pieces and Black to move
    /// included, come back from their records exactly.
    #[test]
    fn records_read_back_exactly() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut records = Vec::new();
        for _ in 0..30 {
            let mut position = start_position();
            for ply in 0..200u16 {
                let moves = legal_moves(&position);
                if moves.is_empty() {
                    break;
                }
                records.push(Record {
                    position,
                    score: rng.random_range(-SCORE_LIMIT..=SCORE_LIMIT) as i16,
                    ply,
                    result: rng.random_range(0..=2),
                });
                position = position.make_move(moves.as_slice()[rng.random_range(0..moves.len())]);
            }
        }
        let captured = records
            .iter()
            .filter(|r| r.position.captured(Color::White) | r.position.captured(Color::Black) != 0)
            .count();
        assert!(captured > 100, "{captured} positions with captured pieces");
        let dir = crate::tools::scratch_dir("records");
        let path = dir.path().join("records.bin");
        let bytes: Vec<u8> = records.iter().flat_map(|r| r.encode().unwrap()).collect();
        std::fs::write(&path, bytes).unwrap();
        let read = read_records(&path).unwrap();
        assert_eq!(read.len(), records.len());
        for (back, original) in read.iter().zip(&records) {
            assert_eq!(back, original);
            assert_eq!(back.position.key(), back.position.key_from_scratch());
        }
    }

    #[test]
    fn bad_records_are_refused_with_a_reason() {
        let record = Record {
            position: start_position(),
            score: 12,
            ply: 0,
            result: 1,
        };
        let good = record.encode().unwrap();
        let mut bad_side = good;
        bad_side[24] = 2;
        let mut bad_result = good;
        bad_result[25] = 3;
        let mut stray_code = good;
        stray_code[19] = 0x10;
        let mut bad_code = good;
        bad_code[12] = 0x0F;
        for (bytes, reason) in [
            (bad_side, "side to move"),
            (bad_result, "result"),
            (stray_code, "beyond the pieces"),
            (bad_code, "piece code"),
        ] {
            let error = Record::decode(&bytes).unwrap_err().to_string();
            assert!(error.contains(reason), "{error}");
        }
    }

    /// Settings of a run with `random_plies` random plies (the rest as the
    /// command line's defaults).
    fn settings_with_random_plies(random_plies: u32) -> DatagenSettings {
        DatagenSettings {
            nodes: 5000,
            threads: 1,
            games: None,
            positions: None,
            time: None,
            shard: Shard::default(),
            seed: 1,
            random_plies,
            near_best_plies: 10,
            near_best_margin: 30,
            max_plies: 400,
            hash_mib: 8,
            use_network: false,
            opponents: Vec::new(),
            opponent_nodes: 5000,
        }
    }

    /// The longest opening the command line takes is found at once; one
    /// so long that every random game has ended first is given up after a
    /// bounded number of draws, and a signal stops the search for one.
    #[test]
    fn random_openings_are_found_given_up_on_or_stopped() {
        let mut rng = StdRng::seed_from_u64(5);
        let going = AtomicBool::new(false);
        let longest = settings_with_random_plies(MAX_RANDOM_PLIES);
        let game = random_opening(&longest, &mut rng, &going)
            .unwrap()
            .expect("an opening");
        assert!(game.moves().len() >= MAX_RANDOM_PLIES as usize);
        assert_eq!(game.result(), GameResult::Ongoing);
        let endless = settings_with_random_plies(1_000_000);
        let error = random_opening(&endless, &mut rng, &going).unwrap_err();
        assert!(
            error.to_string().contains("lower --random-plies"),
            "{error}"
        );
        let stopped = AtomicBool::new(true);
        assert!(
            random_opening(&endless, &mut rng, &stopped)
                .unwrap()
                .is_none()
        );
    }

    /// The positions of docs/throne-races.txt are throne races where the
    /// other queen is on the throne (26 of 28), and never for the side
    /// that holds the throne; `--stats` adds up their scores and results.
    #[test]
    fn stats_count_the_throne_races_against_the_side_to_move() {
        let races = crate::search::throne_race_positions();
        assert_eq!(races.len(), 28);
        assert!(!is_throne_race(&start_position()));
        assert!(
            races
                .iter()
                .all(|race| !is_throne_race(&race.with_turn_passed()))
        );
        let records: Vec<Record> = std::iter::once(start_position())
            .chain(races)
            .enumerate()
            .map(|(ply, position)| Record {
                position,
                score: 150,
                ply: u16::try_from(ply).unwrap(),
                result: 1,
            })
            .collect();
        let dir = crate::tools::scratch_dir("races");
        let path = dir.path().join("races.bin");
        let bytes: Vec<u8> = records.iter().flat_map(|r| r.encode().unwrap()).collect();
        std::fs::write(&path, bytes).unwrap();
        let stats = record_stats(std::slice::from_ref(&path), |_, _| {}).unwrap();
        assert_eq!(stats.positions, 29);
        assert_eq!(stats.throne_races, 26);
        assert_eq!(stats.throne_race_score, 26 * 150);
        assert_eq!(stats.throne_race_half_points, 26);
        assert!(
            stats
                .to_string()
                .ends_with("throne races 26 (89.66%, mean score +1.50, scoring 50.0%)"),
            "{stats}"
        );
    }
}
