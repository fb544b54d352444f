//! What is kept of a finished game, and its PGN-style and JSON-lines forms.

use super::error::MatchError;
use crate::rules::{Color, GameResult, Termination};
use crate::tools::stats::GameOutcome;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How a game ended, as the `Termination` tag names it (JSON uses the same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A queen and six guards around the throne.
    Formation,
    /// Six guards around a throne without their queen.
    Forfeit,
    /// A position stood for the third time.
    Repetition,
    /// The side to move had no legal move.
    NoMoves,
    /// The move limit was reached.
    Adjudication,
    /// A clock ran out.
    #[serde(rename = "time forfeit")]
    TimeForfeit,
    /// An engine played an illegal move.
    #[serde(rename = "illegal move")]
    IllegalMove,
    /// An engine died.
    Crash,
    /// An engine stopped answering.
    Stall,
    /// An engine could not be started.
    #[serde(rename = "startup failure")]
    StartupFailure,
}

impl Ending {
    /// How a game the rules ended ended; `None` while it goes on.
    pub fn by_rules(result: GameResult) -> Option<Ending> {
        match result {
            GameResult::Ongoing => None,
            GameResult::Draw => Some(Ending::Repetition),
            GameResult::Win { reason, .. } => Some(match reason {
                Termination::Formation => Ending::Formation,
                Termination::Forfeit => Ending::Forfeit,
                Termination::NoMoves => Ending::NoMoves,
            }),
        }
    }

    /// The `Termination` tag value; the rules name their own endings.
    pub fn tag(self) -> &'static str {
        match self {
            Ending::Formation => Termination::Formation.name(),
            Ending::Forfeit => Termination::Forfeit.name(),
            Ending::Repetition => "repetition",
            Ending::NoMoves => Termination::NoMoves.name(),
            Ending::Adjudication => "adjudication",
            Ending::TimeForfeit => "time forfeit",
            Ending::IllegalMove => "illegal move",
            Ending::Crash => "crash",
            Ending::Stall => "stall",
            Ending::StartupFailure => "startup failure",
        }
    }

    /// Whether the losing engine should be restarted before it plays again.
    pub fn breaks_engine(self) -> bool {
        matches!(self, Ending::Crash | Ending::Stall | Ending::StartupFailure)
    }
}

/// The result of a game; written as its code, `1-0`, `0-1` or `1/2-1/2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum Verdict {
    /// Won by this side.
    Win(Color),
    /// Drawn.
    Draw,
}

impl Verdict {
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub fn code(self) -> &'static str {
        match self {
            Verdict::Win(Color::White) => "1-0",
            Verdict::Win(Color::Black) => "0-1",
            Verdict::Draw => "1/2-1/2",
        }
    }

    /// The result for the engine that played `color`.
    pub fn outcome_for(self, color: Color) -> GameOutcome {
        match self {
            Verdict::Draw => GameOutcome::Draw,
            Verdict::Win(winner) if winner == color => GameOutcome::Win,
            Verdict::Win(_) => GameOutcome::Loss,
        }
    }
}

impl From<Verdict> for &'static str {
    fn from(verdict: Verdict) -> &'static str {
        verdict.code()
    }
}

impl TryFrom<String> for Verdict {
    type Error = String;

    fn try_from(code: String) -> Result<Verdict, String> {
        [
            Verdict::Win(Color::White),
            Verdict::Win(Color::Black),
            Verdict::Draw,
        ]
        .into_iter()
        .find(|verdict| verdict.code() == code)
        .ok_or_else(|| format!("'{code}' is not a result (1-0, 0-1 or 1/2-1/2)"))
    }
}

/// An engine's last reported score, from the mover's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScoreRecord {
    /// Hundredths of a guard.
    Cp(i32),
    /// A forced end in this many moves.
    Mate(i32),
}

/// One move of a game with what the engine said about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// The move, `<from><to>`.
    #[serde(rename = "move")]
    pub text: String,
    /// Last score reported before it, if any.
    pub score: Option<ScoreRecord>,
    /// Last depth reported before it, if any.
    pub depth: Option<u32>,
    /// Thinking time measured by the referee.
    pub time_ms: u64,
}

/// Everything recorded about one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// 1-based number in the schedule.
    pub game: u64,
    /// 1-based round.
    pub round: u64,
    /// White engine's name.
    pub white: String,
    /// Black engine's name.
    pub black: String,
    /// The result, written `1-0`, `0-1` or `1/2-1/2`: the one place it is kept.
    pub result: Verdict,
    /// The `Termination` tag.
    pub termination: Ending,
    /// The reason in words, e.g. `white wins by formation` or `black illegal move f1f3`.
    pub reason: String,
    /// The position the opening starts from.
    pub fen: String,
    /// Opening moves played before the engines took over.
    pub book: Vec<String>,
    /// The engines' moves.
    pub moves: Vec<MoveRecord>,
    /// White's limits.
    pub white_time_control: String,
    /// Black's limits.
    pub black_time_control: String,
    /// The position at the end.
    pub final_fen: String,
    /// UTC date the game finished, `YYYY.MM.DD`.
    pub date: String,
}

impl GameRecord {
    /// The side to move in the position the opening starts from: White
    /// unless the FEN names Black.
    pub fn start_side(&self) -> Color {
        if self.fen.split_whitespace().nth(1) == Some("b") {
            Color::Black
        } else {
            Color::White
        }
    }

    /// The PGN-style text of the game, ending with a blank line.
    pub fn pgn(&self) -> String {
        let mut text = String::new();
        let mut tag = |name: &str, value: &str| {
            let _ = writeln!(text, "[{name} \"{}\"]", tag_value(value));
        };
        tag("Event", "agon match");
        tag("Site", "local");
        tag("Date", &self.date);
        tag("Round", &self.round.to_string());
        tag("White", &self.white);
        tag("Black", &self.black);
        tag("Result", self.result.code());
        tag("FEN", &self.fen);
        tag("Variant", "agon");
        if self.white_time_control == self.black_time_control {
            tag("TimeControl", &self.white_time_control);
        } else {
            tag("TimeControl", "?");
            tag("WhiteTimeControl", &self.white_time_control);
            tag("BlackTimeControl", &self.black_time_control);
        }
        tag("Termination", self.termination.tag());
        text.push('\n');
        let white_first = self.start_side() == Color::White;
        let first_number: u32 = self
            .fen
            .split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let book = self.book.iter().map(|m| (m.clone(), "book".to_string()));
        let played = self.moves.iter().map(|m| (m.text.clone(), move_comment(m)));
        let mut tokens = Vec::new();
        for (ply, (mv, comment)) in book.chain(played).enumerate() {
            let ply = ply + usize::from(!white_first);
            let number = first_number as usize + ply / 2;
            if ply % 2 == 0 {
                tokens.push(format!("{number}."));
            } else if tokens.is_empty() {
                tokens.push(format!("{number}..."));
            }
            tokens.push(mv);
            tokens.push(pgn_comment(&comment));
        }
        tokens.push(pgn_comment(&self.reason));
        tokens.push(self.result.code().to_string());
        text.push_str(&wrap(&tokens, 79));
        text.push_str("\n\n");
        text
    }
}

/// A tag's value as PGN writes it: backslash and quote escaped, and line
/// breaks and other control characters (which would end the tag line)
/// made spaces.
fn tag_value(value: &str) -> String {
    let spaced: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `text` as a PGN comment. A comment has no escapes and ends at the first
/// `}`, so braces in it (an engine's illegal move quoted in the reason may
/// hold any characters) become parentheses: the game reads back as it was
/// played.
fn pgn_comment(text: &str) -> String {
    let plain: String = text
        .chars()
        .map(|c| match c {
            '{' => '(',
            '}' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("{{{plain}}}")
}

/// The comment of a played move: `{score/depth time}`.
pub fn move_comment(mv: &MoveRecord) -> String {
    let score = match mv.score {
        Some(ScoreRecord::Cp(cp)) => format!("{:+.2}", f64::from(cp) / 100.0),
        Some(ScoreRecord::Mate(n)) if n >= 0 => format!("+M{n}"),
        Some(ScoreRecord::Mate(n)) => format!("-M{}", n.unsigned_abs()),
        None => "?".to_string(),
    };
    let depth = mv.depth.map(|d| format!("/{d}")).unwrap_or_default();
    format!("{score}{depth} {:.3}s", mv.time_ms as f64 / 1000.0)
}

/// Joins tokens with spaces into lines of at most `width` characters (longer tokens stand alone).
pub fn wrap(tokens: &[String], width: usize) -> String {
    let mut text = String::new();
    let mut line_length = 0;
    for token in tokens {
        if line_length > 0 && line_length + 1 + token.len() > width {
            text.push('\n');
            line_length = 0;
        } else if line_length > 0 {
            text.push(' ');
            line_length += 1;
        }
        text.push_str(token);
        line_length += token.len();
    }
    text
}

/// Today's UTC date as `YYYY.MM.DD`.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    let (year, month, day) = civil_date(days as i64);
    format!("{year:04}.{month:02}.{day:02}")
}

/// The proleptic Gregorian date of a day counted from 1970-01-01.
fn civil_date(days: i64) -> (i64, u32, u32) {
    // Count in 400-year eras starting on 0000-03-01, so that the leap day ends each year.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// How many bytes of each record file hold committed records: those the
/// match state counts as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordLengths {
    /// Bytes of the PGN file.
    pub pgn: u64,
    /// Bytes of the JSON-lines file.
    pub jsonl: u64,
}

/// The PGN and JSON-lines files of a run, appended one record at a time.
pub struct RecordFiles {
    pgn: Option<RecordFile>,
    jsonl: Option<RecordFile>,
}

/// One open record file, its name for messages and its length.
struct RecordFile {
    path: PathBuf,
    file: File,
    length: u64,
}

impl RecordFile {
    /// Opens `path` for appending after its first `committed` bytes; `None`
    /// appends after whatever the file holds.
    fn open(path: Option<&Path>, committed: Option<u64>) -> Result<Option<RecordFile>, MatchError> {
        let Some(path) = path else {
            return Ok(None);
        };
        let failed = |e| MatchError::file(path, "open the record file", e);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(failed)?;
        let on_disk = file.metadata().map_err(failed)?.len();
        let length = committed.unwrap_or(on_disk);
        if on_disk < length {
            return Err(MatchError::content(
                path,
                format!(
                    "holds {on_disk} bytes of records, but the state counts {length}: \
                     records were lost or the file was replaced"
                ),
            ));
        }
        if on_disk > length {
            // Records appended after the state was last saved: the state does
            // not count their games, which are played again.
            file.set_len(length)
                .map_err(|e| MatchError::file(path, "cut the uncommitted records from", e))?;
        }
        Ok(Some(RecordFile {
            path: path.to_path_buf(),
            file,
            length,
        }))
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), MatchError> {
        self.file
            .write_all(bytes)
            .map_err(|e| MatchError::file(&self.path, "write records to", e))?;
        self.length += bytes.len() as u64;
        Ok(())
    }
}

impl RecordFiles {
    /// Opens the files for appending. With `committed` (a run with a state),
    /// anything after those lengths is cut first, and a file shorter than
    /// its length is refused; without, records are appended after whatever
    /// the files hold.
    pub fn open(
        pgn: Option<&Path>,
        jsonl: Option<&Path>,
        committed: Option<RecordLengths>,
    ) -> Result<Self, MatchError> {
        Ok(RecordFiles {
            pgn: RecordFile::open(pgn, committed.map(|c| c.pgn))?,
            jsonl: RecordFile::open(jsonl, committed.map(|c| c.jsonl))?,
        })
    }

    /// Appends one game's records.
    pub fn append(&mut self, record: &GameRecord) -> Result<(), MatchError> {
        if let Some(pgn) = &mut self.pgn {
            pgn.write(record.pgn().as_bytes())?;
        }
        if let Some(jsonl) = &mut self.jsonl {
            jsonl.write(jsonl_line(record).as_bytes())?;
        }
        Ok(())
    }

    /// Forces what was appended to the disk, so that a state saved next
    /// never counts records a crash of the machine could lose.
    pub fn sync(&self) -> Result<(), MatchError> {
        for file in [&self.pgn, &self.jsonl].into_iter().flatten() {
            file.file
                .sync_data()
                .map_err(|e| MatchError::file(&file.path, "write records to", e))?;
        }
        Ok(())
    }

    /// The files' lengths now.
    pub fn lengths(&self) -> RecordLengths {
        let length = |file: &Option<RecordFile>| file.as_ref().map_or(0, |f| f.length);
        RecordLengths {
            pgn: length(&self.pgn),
            jsonl: length(&self.jsonl),
        }
    }
}

/// A game's JSON-lines record, newline included.
pub fn jsonl_line(record: &GameRecord) -> String {
    // A record holds only strings, numbers and lists: it always serializes.
    let mut line = serde_json::to_string(record).unwrap_or_default();
    line.push('\n');
    line
}

/// Reads the records in the first `length` bytes of a JSON-lines file.
pub fn read_jsonl(path: &Path, length: u64) -> Result<Vec<GameRecord>, MatchError> {
    use std::io::Read;
    let file = File::open(path).map_err(|e| MatchError::file(path, "read the records", e))?;
    let mut bytes = Vec::new();
    file.take(length)
        .read_to_end(&mut bytes)
        .map_err(|e| MatchError::file(path, "read the records", e))?;
    if (bytes.len() as u64) < length {
        return Err(MatchError::content(
            path,
            format!(
                "holds {} bytes of records, but the state counts {length}",
                bytes.len()
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| MatchError::content(path, e))?;
    text.lines()
        .enumerate()
        .map(|(number, line)| {
            serde_json::from_str(line).map_err(|e| {
                MatchError::content(
                    path,
                    format!("line {}: not a game record ({e})", number + 1),
                )
            })
        })
        .collect()
}

#[cfg(test)]
impl GameRecord {
    /// Game `game` of engine `a` (White) against `b` from the start
    /// position, without moves.
    pub(crate) fn sample(game: u64, result: Verdict, termination: Ending) -> GameRecord {
        GameRecord {
            game,
            round: 1,
            white: "a".into(),
            black: "b".into(),
            result,
            termination,
            reason: String::new(),
            fen: crate::rules::START_FEN.into(),
            book: Vec::new(),
            moves: Vec::new(),
            white_time_control: "10+0.1".into(),
            black_time_control: "10+0.1".into(),
            final_fen: crate::rules::START_FEN.into(),
            date: "2024.01.02".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(game: u64) -> GameRecord {
        GameRecord {
            reason: "white wins by formation".into(),
            fen: "x b 7".into(),
            book: vec!["f11f10".into()],
            moves: vec![MoveRecord {
                text: "f1f2".into(),
                score: Some(ScoreRecord::Cp(35)),
                depth: Some(8),
                time_ms: 120,
            }],
            final_fen: "y".into(),
            ..GameRecord::sample(game, Verdict::Win(Color::White), Ending::Formation)
        }
    }

    #[test]
    fn movetext_numbers_moves_from_the_start_position() {
        let text = record(1).pgn();
        assert!(text.contains("[Termination \"formation\"]"), "{text}");
        assert!(
            text.contains(
                "7... f11f10 {book} 8. f1f2 {+0.35/8 0.120s} {white wins by formation} 1-0"
            ),
            "{text}"
        );
    }

    /// An engine's words quoted in the reason or a name cannot add a move
    /// or a tag line: the text reads back as the game that was played.
    #[test]
    fn quoted_engine_text_cannot_change_the_game_read_back() {
        let record = GameRecord {
            reason: "black illegal move x}f11g11{y".into(),
            white: "plus\n[Result \"0-1\"]".into(),
            fen: crate::rules::START_FEN.into(),
            book: Vec::new(),
            ..record(1)
        };
        let games = crate::tools::gui::pgn::read_games(&record.pgn()).unwrap();
        assert_eq!(games.len(), 1);
        let game = &games[0];
        let moves: Vec<&str> = game.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["f1f2"]);
        assert_eq!(
            game.reason.as_deref(),
            Some("black illegal move x)f11g11(y")
        );
        assert_eq!(game.tag("White"), Some("plus [Result \"0-1\"]"));
        assert_eq!(game.result, "1-0");
    }

    #[test]
    fn verdicts_round_trip_through_json() {
        for ending in [Ending::NoMoves, Ending::TimeForfeit, Ending::StartupFailure] {
            let json = serde_json::to_string(&ending).unwrap();
            assert_eq!(json, format!("\"{}\"", ending.tag()));
        }
        let json = serde_json::to_string(&record(1)).unwrap();
        assert!(json.contains("\"result\":\"1-0\""), "{json}");
        assert!(
            !json.contains("verdict"),
            "one source for the result: {json}"
        );
        assert!(json.contains("\"score\":{\"cp\":35}"), "{json}");
        let back: GameRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, record(1));
    }

    #[test]
    fn a_record_holds_one_result() {
        let json = serde_json::to_string(&record(1)).unwrap();
        let drawn = json.replace("\"1-0\"", "\"1/2-1/2\"");
        let back: GameRecord = serde_json::from_str(&drawn).unwrap();
        assert_eq!(back.result, Verdict::Draw);
        assert_eq!(back.result.outcome_for(Color::White), GameOutcome::Draw);
        // Records written before the result had one source still read, by their result.
        let older = json.replace(
            "\"result\":\"1-0\"",
            "\"result\":\"0-1\",\"verdict\":\"Draw\"",
        );
        let back: GameRecord = serde_json::from_str(&older).unwrap();
        assert_eq!(back.result, Verdict::Win(Color::Black));
        let error =
            serde_json::from_str::<GameRecord>(&json.replace("\"1-0\"", "\"2-0\"")).unwrap_err();
        assert!(error.to_string().contains("not a result"), "{error}");
    }

    #[test]
    fn dates_follow_the_gregorian_calendar() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(19_723), (2024, 1, 1));
    }

    #[test]
    fn records_beyond_the_committed_lengths_are_cut() {
        let dir = crate::tools::scratch_dir("records");
        let path = dir.path().join("games.jsonl");
        let mut files =
            RecordFiles::open(None, Some(&path), Some(RecordLengths::default())).unwrap();
        files.append(&record(1)).unwrap();
        let committed = files.lengths();
        files.append(&record(2)).unwrap();
        drop(files);
        let files = RecordFiles::open(None, Some(&path), Some(committed)).unwrap();
        assert_eq!(files.lengths(), committed);
        let games: Vec<u64> = read_jsonl(&path, committed.jsonl)
            .unwrap()
            .iter()
            .map(|r| r.game)
            .collect();
        assert_eq!(games, vec![1]);
        let longer = RecordLengths {
            jsonl: committed.jsonl + 1,
            ..committed
        };
        let error = RecordFiles::open(None, Some(&path), Some(longer))
            .err()
            .unwrap();
        assert!(error.to_string().contains("records were lost"), "{error}");
    }
}
