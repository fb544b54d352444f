//! The game record: where it starts, its moves, how it ended, reading and writing PGN.

use super::{Mode, Session, read_start};
use crate::rules::{Color, Game, GameResult, Position, Termination, parse_move, to_fen};
use crate::tools::gui::pgn::{ReadGame, WhiteScore, read_games};
use crate::tools::match_runner::record::{Ending, GameRecord, MoveRecord, ScoreRecord, Verdict};

/// A game's record, whoever plays it: the start, the moves, the position shown.
#[derive(Clone, Debug)]
pub struct Record {
    /// Where the game starts.
    pub start: Position,
    /// The moves played.
    pub plies: Vec<Ply>,
    /// How many plies the position shown is into the game.
    pub cursor: usize,
    /// How the game was stopped, when not by the board alone.
    pub finish: Option<Finish>,
    /// White's and Black's names.
    pub names: [String; 2],
}

/// A played move with what is known about it.
#[derive(Clone, Debug)]
pub struct Ply {
    /// `<from><to>`.
    pub mv: String,
    /// The score of the engine that played it, White's side.
    pub score: Option<WhiteScore>,
    /// Its search depth.
    pub depth: Option<u32>,
    /// Its thinking time.
    pub time_ms: Option<u64>,
    /// An opening book move.
    pub book: bool,
}

/// How the game ended, when not by the board alone.
#[derive(Clone, Debug)]
pub struct Finish {
    /// `None` for a draw.
    pub winner: Option<Color>,
    /// The `Termination` tag.
    pub termination: String,
    /// In words.
    pub reason: String,
}

impl Record {
    /// A game from `start` with no move yet.
    pub fn new(start: Position, names: [String; 2]) -> Record {
        Record {
            start,
            plies: Vec::new(),
            cursor: 0,
            finish: None,
            names,
        }
    }

    pub fn game_at(&self, plies: usize) -> Game {
        let mut game = Game::new(self.start);
        for ply in self.plies.iter().take(plies) {
            if game.play_text(&ply.mv).is_err() {
                break;
            }
        }
        game
    }

    pub fn game(&self) -> Game {
        self.game_at(self.plies.len())
    }

    /// The verdict of the whole game: by the board, or how it was stopped.
    pub fn verdict(&self) -> Option<Finish> {
        if let Some(finish) = &self.finish {
            return Some(finish.clone());
        }
        match self.game().result() {
            GameResult::Ongoing => None,
            GameResult::Draw => Some(Finish {
                winner: None,
                termination: "repetition".into(),
                reason: "draw by repetition: the same position for the third time".into(),
            }),
            GameResult::Win { winner, reason } => Some(Finish {
                winner: Some(winner),
                termination: reason.name().into(),
                reason: match reason {
                    Termination::Formation => {
                        format!(
                            "{} wins: queen on the throne inside six guards",
                            winner.name()
                        )
                    }
                    Termination::Forfeit => format!(
                        "{} wins: {} surrounded the throne without its queen",
                        winner.name(),
                        (!winner).name()
                    ),
                    Termination::NoMoves => {
                        format!(
                            "{} wins: {} has no legal move",
                            winner.name(),
                            (!winner).name()
                        )
                    }
                },
            }),
        }
    }
}

impl Session {
    pub(super) fn load(&mut self, read: &ReadGame) -> Result<(), String> {
        let start = read_start(Some(&read.fen))?;
        self.reset(start, Mode::Analysis, None);
        self.record.plies = read
            .moves
            .iter()
            .map(|m| Ply {
                mv: m.text.clone(),
                score: m.score,
                depth: m.depth,
                time_ms: m.time_ms,
                book: m.book,
            })
            .collect();
        self.record.names = [
            read.tag("White").unwrap_or("?").to_string(),
            read.tag("Black").unwrap_or("?").to_string(),
        ];
        if self.record.game().result() == GameResult::Ongoing && read.result != "*" {
            let winner = match read.result.as_str() {
                "1-0" => Some(Color::White),
                "0-1" => Some(Color::Black),
                _ => None,
            };
            self.record.finish = Some(Finish {
                winner,
                termination: read.tag("Termination").unwrap_or("?").to_string(),
                reason: read.reason.clone().unwrap_or_else(|| read.result.clone()),
            });
        }
        Ok(())
    }

    /// Reads a PGN text; one game is opened, several are listed.
    pub fn import(&mut self, text: &str) -> Result<usize, String> {
        let games = read_games(text)?;
        let count = games.len();
        self.library = games;
        if let Some(first) = self.library.first().cloned() {
            self.load(&first)?;
        }
        self.kick();
        self.publish_state();
        Ok(count)
    }

    /// The game as a PGN record in the `agon match -pgnout` format.
    pub fn export(&self) -> String {
        let game = self.record.game();
        let verdict = self.record.verdict();
        let mut position = self.record.start;
        let mut moves = Vec::new();
        for ply in &self.record.plies {
            let mover = position.side_to_move();
            if let Ok(mv) = parse_move(&position, &ply.mv) {
                position = position.make_move(mv);
            }
            if ply.book {
                continue;
            }
            let (cp, mate) = ply.score.map_or((None, None), |s| s.for_mover(mover));
            moves.push(MoveRecord {
                text: ply.mv.clone(),
                score: cp.map(ScoreRecord::Cp).or(mate.map(ScoreRecord::Mate)),
                depth: ply.depth,
                time_ms: ply.time_ms.unwrap_or(0),
            });
        }
        let result = match &verdict {
            Some(Finish {
                winner: Some(color),
                ..
            }) => Verdict::Win(*color),
            // An unfinished game is written as a draw, then marked `*` below.
            _ => Verdict::Draw,
        };
        let control = self
            .clocks
            .map_or_else(|| "-".to_string(), |c| c.describe());
        let record = GameRecord {
            game: 1,
            round: 1,
            white: self.record.names[0].clone(),
            black: self.record.names[1].clone(),
            result,
            // The tag is written from `verdict` below.
            termination: Ending::Adjudication,
            reason: verdict
                .as_ref()
                .map_or_else(|| "game in progress".to_string(), |f| f.reason.clone()),
            fen: to_fen(&self.record.start),
            book: self
                .record
                .plies
                .iter()
                .take_while(|p| p.book)
                .map(|p| p.mv.clone())
                .collect(),
            moves,
            white_time_control: control.clone(),
            black_time_control: control,
            final_fen: to_fen(game.position()),
            date: crate::tools::match_runner::record::today(),
        };
        let placeholder = format!("[Termination \"{}\"]\n", Ending::Adjudication.tag());
        let termination = verdict.as_ref().map_or(String::new(), |f| {
            format!("[Termination \"{}\"]\n", f.termination)
        });
        let text = record.pgn().replacen(&placeholder, &termination, 1);
        if verdict.is_some() {
            return text;
        }
        let draw = Verdict::Draw.code();
        let text = text.replacen(&format!("[Result \"{draw}\"]"), "[Result \"*\"]", 1);
        match text.strip_suffix(&format!("{draw}\n\n")) {
            Some(body) => format!("{body}*\n\n"),
            None => text,
        }
    }
}
