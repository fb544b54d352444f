//! The commands of the page, each checked before it changes anything.

use super::clocks::parse_time_control;
use super::seats::Role;
use super::{
    FULL_STRENGTH_MOVETIME_MS, Mode, Session, check_level, finished, read_colour, read_start,
};
use crate::rules::{Color, parse_move, to_fen};
use crate::tools::gui::driver::{Purpose, Request, Search};
use crate::tools::gui::problem::{Code, Problem};
use serde::Deserialize;
use std::time::{Duration, Instant};

/// A command from the page.
#[derive(Deserialize, Debug)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Play a move at the position shown.
    Move {
        /// `<from><to>`.
        mv: String,
    },
    /// Show the position after this many plies.
    View {
        /// 0 is the start.
        ply: usize,
    },
    /// A new game against the opponent engine.
    NewGame {
        /// Where it starts (default: the start position).
        fen: Option<String>,
        /// `white` or `black`.
        human: Option<String>,
        /// 0-3: node-limited levels, 4: full strength.
        level: Option<usize>,
        /// `minutes+seconds`, empty for no clock.
        tc: Option<String>,
        /// The engine (index into the choices).
        engine: Option<usize>,
    },
    /// Free analysis from a position.
    Analyse {
        /// Where it starts (default: keep the game).
        fen: Option<String>,
    },
    /// Two engines play.
    Watch {
        /// White's engine.
        white: usize,
        /// Black's engine.
        black: usize,
        /// `minutes+seconds`, empty for a fixed time per move.
        tc: Option<String>,
        /// Where it starts.
        fen: Option<String>,
    },
    /// Pause or resume an engine game.
    Pause {
        /// Paused or not.
        paused: bool,
    },
    /// Take back the person's last move.
    Takeback,
    /// Ask the opponent engine for a suggestion.
    Hint,
    /// The person resigns.
    Resign,
    /// Analysis on or off.
    Analysis {
        /// On or off.
        on: bool,
    },
    /// Number of analysis lines.
    Multipv {
        /// 1 to 5.
        lines: usize,
    },
    /// Change an engine option.
    SetOption {
        /// Whose.
        role: Role,
        /// Its name.
        name: String,
        /// Its value (none for a button).
        value: Option<String>,
    },
    /// Put another engine in a seat (restarts it).
    SetEngine {
        /// Which seat.
        role: Role,
        /// Which engine.
        engine: usize,
    },
    /// Show the line through a move of the tree, at that move.
    Choose {
        /// The move (`node` in the view).
        node: usize,
    },
    /// Make a sideline the first choice at its branch point.
    Promote {
        /// Its first move.
        node: usize,
    },
    /// Delete a move and everything after it.
    Delete {
        /// The move.
        node: usize,
    },
    /// Play an engine line from the position shown, up to one of its moves
    /// (free analysis; the moves become a sideline where they differ).
    Line {
        /// The position the line starts from, which must be the one shown.
        fen: String,
        /// Its moves.
        moves: Vec<String>,
    },
    /// Review the line shown: every position searched, every move marked.
    Review,
    /// Load a game read from PGN.
    OpenGame {
        /// Index into the games read last.
        index: usize,
    },
}

impl Session {
    /// Carries out a command from the page.
    pub fn command(&mut self, command: Command) -> Result<(), Problem> {
        self.notice = None;
        let outcome = self.carry_out(command);
        self.kick();
        self.publish_state();
        outcome
    }

    pub(super) fn carry_out(&mut self, command: Command) -> Result<(), Problem> {
        match command {
            Command::Move { mv } => self.person_moves(&mv),
            Command::View { ply } => self.record.view(ply),
            Command::NewGame {
                fen,
                human,
                level,
                tc,
                engine,
            } => {
                let start = read_start(fen.as_deref())?;
                let human = read_colour(human.as_deref())?;
                let level = check_level(level.unwrap_or(self.level))?;
                let clocks = parse_time_control(tc.as_deref().unwrap_or(""))?;
                if let Some(engine) = engine {
                    self.choose_engine(Role::Opponent, engine)?;
                }
                self.level = level;
                self.library.clear();
                self.reset(start, Mode::Play { human }, clocks);
                let opponent = self.seat(Role::Opponent).name.clone();
                self.record.names = match human {
                    Color::White => ["you".into(), opponent],
                    Color::Black => [opponent, "you".into()],
                };
                Ok(())
            }
            Command::Analyse { fen } => {
                if let Some(fen) = fen {
                    let start = read_start(Some(&fen))?;
                    self.library.clear();
                    self.reset(start, Mode::Analysis, None);
                    self.record.names = ["?".into(), "?".into()];
                } else {
                    self.leave_game();
                    self.mode = Mode::Analysis;
                }
                Ok(())
            }
            Command::Watch {
                white,
                black,
                tc,
                fen,
            } => {
                let start = read_start(fen.as_deref())?;
                let clocks = parse_time_control(tc.as_deref().unwrap_or(""))?;
                // Both checked before either seat changes: a refusal leaves the game as it was.
                self.known_engine(white)?;
                self.known_engine(black)?;
                self.choose_engine(Role::White, white)?;
                self.choose_engine(Role::Black, black)?;
                self.library.clear();
                self.reset(start, Mode::Watch { paused: false }, clocks);
                self.record.names = [
                    self.choices[white].label.clone(),
                    self.choices[black].label.clone(),
                ];
                Ok(())
            }
            Command::Pause { paused } => {
                let Mode::Watch { .. } = self.mode else {
                    return Err(Problem::new(
                        Code::PauseOnlyEngineGame,
                        "only an engine game can be paused",
                    ));
                };
                self.mode = Mode::Watch { paused };
                if paused {
                    if let Some((_, role)) = self.awaited.take() {
                        self.stop(role);
                    }
                    self.stop_clocks();
                } else if self.record.verdict().is_none()
                    && let Some(clocks) = &mut self.clocks
                {
                    clocks.since = Some(Instant::now());
                }
                Ok(())
            }
            Command::Takeback => self.take_back(),
            Command::Hint => {
                // The opponent engine gives it, so only while it waits for the person.
                let Mode::Play { human } = self.mode else {
                    return Err(Problem::new(
                        Code::HintOnlyInGame,
                        "a hint is for a game against the engine",
                    ));
                };
                if self.record.verdict().is_some() {
                    return Err(Problem::new(Code::GameOver, "the game is over"));
                }
                if self.record.game().position().side_to_move() != human {
                    return Err(Problem::new(Code::EngineToMove, "it is the engine's turn"));
                }
                let id = self.new_search_id();
                self.hint = Some((id, String::new()));
                let search = Search {
                    id,
                    purpose: Purpose::Hint,
                    position: self.record.position_line(self.record.line_len()),
                    go: format!("go movetime {FULL_STRENGTH_MOVETIME_MS}"),
                    budget: Some(Duration::from_millis(FULL_STRENGTH_MOVETIME_MS)),
                };
                self.record.cursor = self.record.line_len();
                self.send(Role::Opponent, Request::Search(search));
                Ok(())
            }
            Command::Resign => {
                let Mode::Play { human } = self.mode else {
                    return Err(Problem::new(Code::NobodyToResign, "nobody to resign to"));
                };
                if self.record.verdict().is_some() {
                    return Err(Problem::new(Code::GameOver, "the game is over"));
                }
                self.end(
                    Some(!human),
                    "resignation",
                    format!("{} wins: {} resigned", (!human).name(), human.name()),
                );
                Ok(())
            }
            Command::Analysis { on } => {
                self.analysing = on;
                Ok(())
            }
            Command::Multipv { lines } => {
                if !(1..=5).contains(&lines) {
                    return Err(Problem::new(
                        Code::MultipvRange,
                        format!("MultiPV {lines}: 1 to 5 lines"),
                    )
                    .with("lines", lines));
                }
                self.multipv = lines;
                self.send(
                    Role::Analyst,
                    Request::SetOption {
                        name: "MultiPV".into(),
                        value: Some(lines.to_string()),
                    },
                );
                // The running analysis restarts with the new number of lines.
                self.analysis.search = 0;
                Ok(())
            }
            Command::SetOption { role, name, value } => {
                let seat = self.seat(role);
                let Some(declared) = seat.options.iter().find(|o| o.name == name) else {
                    return Err(Problem::new(
                        Code::NoOption,
                        format!("engine {} has no option '{name}'", seat.name),
                    )
                    .with("engine", seat.name.as_str())
                    .with("name", name.as_str()));
                };
                if let (Some(value), Some(min), Some(max)) = (&value, declared.min, declared.max) {
                    let number: i64 = value.trim().parse().map_err(|_| {
                        Problem::new(
                            Code::OptionNotNumber,
                            format!("option {name}: '{value}' is not a number"),
                        )
                        .with("name", name.as_str())
                        .with("value", value.as_str())
                    })?;
                    if !(min..=max).contains(&number) {
                        return Err(Problem::new(
                            Code::OptionRange,
                            format!("option {name}: {number} is not in {min}..{max}"),
                        )
                        .with("name", name.as_str())
                        .with("value", number)
                        .with("min", min)
                        .with("max", max));
                    }
                }
                if let Some(value) = &value
                    && value.chars().any(char::is_control)
                {
                    return Err(Problem::new(
                        Code::OptionOneLine,
                        format!("option {name}: a value is one line of printable text"),
                    )
                    .with("name", name.as_str()));
                }
                let seat = &mut self.seats[role.index()];
                seat.error = None;
                if let Some(value) = &value {
                    let previous = seat
                        .values
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, v)| v.clone());
                    seat.values.retain(|(n, _)| *n != name);
                    seat.values.push((name.clone(), value.clone()));
                    seat.unsettled.push((name.clone(), previous));
                }
                self.send(role, Request::SetOption { name, value });
                if role == Role::Analyst {
                    // An option waits for the engine to be idle: the running
                    // analysis restarts, so that it applies now.
                    self.analysis.search = 0;
                }
                Ok(())
            }
            Command::SetEngine { role, engine } => self.choose_engine(role, engine),
            Command::Review => self.start_review(),
            Command::Line { fen, moves } => {
                self.only_in_analysis()?;
                let shown = to_fen(self.record.game_at(self.record.cursor).position());
                if fen != shown {
                    return Err(Problem::new(
                        Code::LineOfAnotherPosition,
                        "that line is of another position",
                    ));
                }
                let mut game = self.record.game_at(self.record.cursor);
                for mv in &moves {
                    game.play_text(mv).map_err(|e| Problem::bad_move(mv, &e))?;
                }
                for mv in &moves {
                    self.play(mv, None, 0)?;
                }
                Ok(())
            }
            Command::Choose { node } => {
                self.only_in_analysis()?;
                self.record.choose(node)
            }
            Command::Promote { node } => {
                self.only_in_analysis()?;
                self.record.promote(node)
            }
            Command::Delete { node } => {
                self.only_in_analysis()?;
                self.record.delete(node)
            }
            Command::OpenGame { index } => {
                let Some(read) = self.library.get(index).cloned() else {
                    return Err(Problem::new(
                        Code::NoGameRead,
                        format!("no game {index} in the file read"),
                    )
                    .with("index", index));
                };
                self.load(&read)
            }
        }
    }

    /// Sidelines are for free analysis: a game in play has one line.
    fn only_in_analysis(&self) -> Result<(), Problem> {
        match self.mode {
            Mode::Analysis => Ok(()),
            Mode::Play { .. } | Mode::Watch { .. } => Err(Problem::new(
                Code::SidelinesInAnalysis,
                "sidelines are for free analysis (Free moves)",
            )),
        }
    }

    pub(super) fn person_moves(&mut self, text: &str) -> Result<(), Problem> {
        match self.mode {
            Mode::Play { human } => {
                if self.record.verdict().is_some() {
                    return Err(Problem::new(Code::GameOver, "the game is over"));
                }
                if self.record.game().position().side_to_move() != human {
                    return Err(Problem::new(Code::EngineToMove, "it is the engine's turn"));
                }
                self.record.cursor = self.record.line_len();
                let time_ms = u64::try_from(self.turn_started.elapsed().as_millis()).unwrap_or(0);
                // The person's clock is not running before their first move of a new game.
                if let Some(clocks) = &mut self.clocks
                    && clocks.since.is_none()
                {
                    clocks.since = Some(Instant::now());
                }
                self.play(text, None, time_ms)
            }
            Mode::Watch { .. } => Err(Problem::new(
                Code::EnginesPlaying,
                "the engines are playing",
            )),
            Mode::Analysis => {
                let position = *self.record.game_at(self.record.cursor).position();
                parse_move(&position, text).map_err(|e| Problem::bad_move(text, &e))?;
                if finished(&position) {
                    return Err(Problem::new(
                        Code::GameOverHere,
                        "the game is over at this position",
                    ));
                }
                // A move off the end of the main line leaves how it ended behind.
                if self.record.cursor < self.record.line_len() {
                    self.record.finish = None;
                }
                self.play(text, None, 0)
            }
        }
    }

    pub(super) fn take_back(&mut self) -> Result<(), Problem> {
        let Mode::Play { human } = self.mode else {
            return Err(Problem::new(
                Code::TakebackOnlyInGame,
                "takeback is for a game against the engine",
            ));
        };
        let keep = self.record.take_back_point(human)?;
        if let Some((_, role)) = self.awaited.take() {
            self.stop(role);
        }
        self.record.truncate(keep);
        self.record.cursor = keep;
        self.record.finish = None;
        self.hint = None;
        if let Some(clocks) = &mut self.clocks {
            clocks.since = Some(Instant::now());
        }
        self.turn_started = Instant::now();
        Ok(())
    }
}
