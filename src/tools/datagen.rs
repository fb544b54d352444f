//! `agon datagen`: self-play games at a fixed node count per move, on
//! several threads, from diverse openings, written as compact training
//! records (the format is in protocol.md, "Training records") appended to a
//! file, so that a stopped run can be continued.

use crate::rules::{Color, Game, GameResult, Kind, Piece, Position, start_position};
use crate::search::eval::{capture_cells, has_win_threat};
use crate::search::nnue::cells::{dense, from_dense};
use crate::search::{Engine, EngineOptions, Score, SearchControl, SearchLimits, SearchReport};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bytes per record.
pub const RECORD_SIZE: usize = 26;
/// Most pieces a record can hold (the game has 14).
const MAX_PIECES: usize = 16;
/// Scores are clamped to this many centi-guards in the records.
const SCORE_LIMIT: i32 = 30_000;

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
    /// A position could not be written as a record.
    Encode(RecordError),
    /// The progress lines could not be written.
    Progress(std::io::Error),
}

impl std::fmt::Display for DatagenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DatagenError::NothingToRun => write!(f, "--threads and --nodes must be at least 1"),
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
            DatagenError::Encode(error) => write!(f, "cannot encode a record: {error}"),
            DatagenError::Progress(error) => write!(f, "cannot write progress: {error}"),
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

/// Reads every whole record of `path` (a torn last record, left by a run
/// stopped mid-write, is ignored).
///
/// # Errors
///
/// The file and the reason when it cannot be read or holds a bad record.
pub fn read_records(path: &Path) -> Result<Vec<Record>, DatagenError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut file| file.read_to_end(&mut bytes))
        .map_err(DatagenError::file("read", path))?;
    bytes
        .chunks_exact(RECORD_SIZE)
        .enumerate()
        .map(|(index, chunk)| {
            let mut record = [0u8; RECORD_SIZE];
            record.copy_from_slice(chunk);
            Record::decode(&record).map_err(|error| DatagenError::BadRecord {
                path: path.to_path_buf(),
                number: index + 1,
                error,
            })
        })
        .collect()
}

/// How to generate.
#[derive(Clone, Debug)]
pub struct DatagenSettings {
    /// Nodes searched per move.
    pub nodes: u64,
    /// Games played at once (one search thread each).
    pub threads: usize,
    /// Stop after this many new games.
    pub games: Option<u64>,
    /// Stop after this many new positions.
    pub positions: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
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
}

/// Counts shared by the game threads.
#[derive(Default)]
struct Tally {
    games: AtomicU64,
    positions: AtomicU64,
    white_wins: AtomicU64,
    draws: AtomicU64,
    black_wins: AtomicU64,
}

/// One finished game's records and result.
struct Played {
    records: Vec<Record>,
    result: GameResult,
}

/// A game after `random_plies` (or one more) uniformly random moves that
/// is still going; openings that end the game are drawn again.
fn random_opening(settings: &DatagenSettings, rng: &mut StdRng) -> Game {
    let start = start_position();
    loop {
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
            return game;
        }
    }
}

/// Plays one game from a random opening.
fn play_game(engine: &mut Engine, settings: &DatagenSettings, rng: &mut StdRng) -> Played {
    let mut game = random_opening(settings, rng);
    engine.clear();
    let limits = SearchLimits {
        nodes: Some(settings.nodes),
        ..SearchLimits::default()
    };
    let control = SearchControl::default();
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
        let mut options = engine.options();
        options.multipv = if varied { 4 } else { 1 };
        engine.set_options(options);
        let mut lines: Vec<SearchReport> = Vec::new();
        let outcome = engine.search(&game, &limits, &control, |report| {
            if report.multipv == 1 {
                lines.clear();
            }
            lines.push(report.clone());
        });
        let Some(best) = outcome.best else {
            break game.result();
        };
        let position = *game.position();
        if let Score::Centi(score) = outcome.score
            && worth_learning(&position)
        {
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
    Played { records, result }
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
/// file and the number of whole records already in it.
fn open_output(path: &Path) -> Result<(File, u64), DatagenError> {
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(path)
        .map_err(DatagenError::file("open", path))?;
    let length = file
        .metadata()
        .map_err(DatagenError::file("read", path))?
        .len();
    let whole = length / RECORD_SIZE as u64;
    file.set_len(whole * RECORD_SIZE as u64)
        .and_then(|()| file.seek(SeekFrom::End(0)).map(|_| ()))
        .map_err(DatagenError::file("append to", path))?;
    Ok((file, whole))
}

/// Plays games until a limit is reached (or Ctrl-C when none is given),
/// appending their records to `path` a whole game at a time and writing a
/// progress line to `progress` every `interval`.
///
/// # Errors
///
/// Why, when the settings are unusable or the file cannot be written.
pub fn run(
    path: &Path,
    settings: &DatagenSettings,
    stop: &AtomicBool,
    progress: &mut dyn Write,
    interval: Duration,
) -> Result<(), DatagenError> {
    if settings.threads == 0 || settings.nodes == 0 {
        return Err(DatagenError::NothingToRun);
    }
    let (file, existing) = open_output(path)?;
    writeln!(
        progress,
        "datagen: {} ({existing} records already), {} nodes/move, {} threads",
        path.display(),
        settings.nodes,
        settings.threads
    )
    .map_err(DatagenError::Progress)?;
    let output = Mutex::new(BufWriter::new(file));
    let tally = Tally::default();
    let next_game = AtomicU64::new(0);
    let started = Instant::now();
    let done = |tally: &Tally| {
        stop.load(Ordering::Relaxed)
            || settings
                .games
                .is_some_and(|limit| tally.games.load(Ordering::Relaxed) >= limit)
            || settings
                .positions
                .is_some_and(|limit| tally.positions.load(Ordering::Relaxed) >= limit)
            || settings
                .time
                .is_some_and(|limit| started.elapsed() >= limit)
    };
    let failure: Mutex<Option<DatagenError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..settings.threads {
            scope.spawn(|| {
                let mut options = EngineOptions {
                    hash_mib: settings.hash_mib,
                    ..EngineOptions::default()
                };
                options.tuning.use_network = settings.use_network;
                let mut engine = Engine::new(options);
                while !done(&tally) {
                    // A continued run numbers its games after the records
                    // already there, so it does not replay earlier games.
                    let number = next_game.fetch_add(1, Ordering::Relaxed);
                    if settings.games.is_some_and(|limit| number >= limit) {
                        break;
                    }
                    let mut rng = StdRng::seed_from_u64(
                        settings.seed ^ existing.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ number,
                    );
                    let played = play_game(&mut engine, settings, &mut rng);
                    if let Err(error) = write_game(&output, path, &played.records) {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                        stop.store(true, Ordering::Relaxed);
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
                }
            });
        }
        let mut last = Instant::now();
        while !done(&tally) {
            std::thread::sleep(Duration::from_millis(50));
            if last.elapsed() >= interval {
                last = Instant::now();
                let _ = writeln!(progress, "{}", progress_line(&tally, settings, started));
            }
        }
    });
    if let Some(error) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(error);
    }
    writeln!(progress, "{}", progress_line(&tally, settings, started))
        .map_err(DatagenError::Progress)
}

/// Appends one game's records and flushes, so that the file only ever
/// holds whole games.
fn write_game(
    output: &Mutex<BufWriter<File>>,
    path: &Path,
    records: &[Record],
) -> Result<(), DatagenError> {
    let mut output = output.lock().unwrap_or_else(|e| e.into_inner());
    for record in records {
        let bytes = record.encode().map_err(DatagenError::Encode)?;
        output
            .write_all(&bytes)
            .map_err(DatagenError::file("write", path))?;
    }
    output.flush().map_err(DatagenError::file("write", path))
}

/// `games G positions P (N/s) W/D/L w/d/l time left T`.
fn progress_line(tally: &Tally, settings: &DatagenSettings, started: Instant) -> String {
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let games = tally.games.load(Ordering::Relaxed);
    let positions = tally.positions.load(Ordering::Relaxed);
    let fractions = [
        settings
            .games
            .map(|limit| games as f64 / limit.max(1) as f64),
        settings
            .positions
            .map(|limit| positions as f64 / limit.max(1) as f64),
        settings
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
    format!(
        "games {games} positions {positions} ({:.0}/s) W/D/L {}/{}/{} time left {left}",
        positions as f64 / elapsed,
        tally.white_wins.load(Ordering::Relaxed),
        tally.draws.load(Ordering::Relaxed),
        tally.black_wins.load(Ordering::Relaxed),
    )
}

/// Writes `records` to a new file at `path` (for tests and tools).
///
/// # Errors
///
/// The I/O or encoding error.
pub fn write_records(path: &Path, records: &[Record]) -> io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    for record in records {
        out.write_all(&record.encode().map_err(io::Error::other)?)?;
    }
    out.flush()
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
        let path = std::env::temp_dir().join(format!("agon-records-{}.bin", std::process::id()));
        write_records(&path, &records).unwrap();
        let read = read_records(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
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
}
