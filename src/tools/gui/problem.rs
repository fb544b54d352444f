//! What the GUI's servers report when they refuse something: a stable code
//! and its parameters, which the page tells in its own language (the
//! sentence `error.<code>` of web/lang), and an English message for scripts
//! and logs.

use crate::rules::{FenError, MoveError};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::fmt;

/// Declares the codes once: the enum, its names and the list of all of them.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// What went wrong, as the page names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Code {
            /// Every code (each needs its sentence in every language).
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            /// The stable name: the page's sentence is `error.<name>`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }
        }
    };
}

codes! {
    /// A request the server cannot read (`detail`: the parser's words).
    BadRequest = "bad-request",
    /// A request body over the server's limit.
    BodyTooLarge = "body-too-large",
    /// A method the address does not take (the `Allow` header lists those it does).
    MethodNotAllowed = "method-not-allowed",
    /// `ply` is past the end of the line of `plies`.
    NoPly = "no-ply",
    /// `colour` is neither white nor black.
    NoColour = "no-colour",
    /// `level` is not one of the `levels`.
    NoLevel = "no-level",
    /// A FEN that cannot be read (`reason`: a `fen-*` problem).
    BadFen = "bad-fen",
    /// Nothing but spaces.
    FenEmpty = "fen-empty",
    /// Not two or three fields (`fields`).
    FenFieldCount = "fen-field-count",
    /// Two spaces in a row.
    FenEmptyField = "fen-empty-field",
    /// `ranks` ranks instead of 11.
    FenRankCount = "fen-rank-count",
    /// Rank `rank` describes `found` cells; it has `expected`.
    FenRankLength = "fen-rank-length",
    /// `character` in rank `rank` is no piece, digit or `*`.
    FenUnknownCharacter = "fen-unknown-character",
    /// A `*` in rank `rank` that follows no piece.
    FenStrayCaptureMark = "fen-stray-capture-mark",
    /// A bad empty-cell count `text` in rank `rank`.
    FenBadEmptyCount = "fen-bad-empty-count",
    /// `side` has two queens.
    FenTooManyQueens = "fen-too-many-queens",
    /// `side` has `guards` guards.
    FenTooManyGuards = "fen-too-many-guards",
    /// A guard on the throne.
    FenGuardOnThrone = "fen-guard-on-throne",
    /// The side field `text` is not `w` or `b`.
    FenBadSide = "fen-bad-side",
    /// The move number `text` is not a whole number from 1 to 4294967295.
    FenBadFullmove = "fen-bad-fullmove",
    /// A clock `text` that is not minutes+seconds.
    BadClock = "bad-clock",
    /// A clock `text` with no time on it.
    ClockWithoutTime = "clock-without-time",
    /// `move` is not two cells.
    NotAMove = "not-a-move",
    /// `cell` is not on the board.
    OffBoard = "off-board",
    /// `move` breaks `rule` (a rule code of the rules core).
    IllegalMove = "illegal-move",
    /// Pausing outside an engine game.
    PauseOnlyEngineGame = "pause-only-engine-game",
    /// A hint outside a game against the engine.
    HintOnlyInGame = "hint-only-in-game",
    /// The game is over.
    GameOver = "game-over",
    /// The game is over at the position shown.
    GameOverHere = "game-over-here",
    /// It is the engine's turn.
    EngineToMove = "engine-to-move",
    /// The engines are playing each other.
    EnginesPlaying = "engines-playing",
    /// Resigning outside a game against the engine.
    NobodyToResign = "nobody-to-resign",
    /// A takeback outside a game against the engine.
    TakebackOnlyInGame = "takeback-only-in-game",
    /// No move of the person's to take back.
    NothingToTakeBack = "nothing-to-take-back",
    /// `lines` analysis lines, not 1 to 5.
    MultipvRange = "multipv-range",
    /// Engine `engine` has no option `name`.
    NoOption = "no-option",
    /// Option `name`: `value` is not a number.
    OptionNotNumber = "option-not-number",
    /// Option `name`: `value` is not in `min`..`max`.
    OptionRange = "option-range",
    /// Option `name`: a value spans more than one line.
    OptionOneLine = "option-one-line",
    /// An engine line of another position than the one shown.
    LineOfAnotherPosition = "line-of-another-position",
    /// Sidelines outside free analysis.
    SidelinesInAnalysis = "sidelines-in-analysis",
    /// No move `node` in the record.
    NoMove = "no-move",
    /// The move is on the main line already.
    AlreadyMainLine = "already-main-line",
    /// No move to review.
    NothingToReview = "nothing-to-review",
    /// No game `index` in the PGN read.
    NoGameRead = "no-game-read",
    /// No engine `engine` among the choices.
    NoEngine = "no-engine",
    /// Engine `engine` refused something (`detail`: its own words).
    EngineRefused = "engine-refused",
    /// Engine `engine` did not answer in its time.
    EngineOverdue = "engine-overdue",
    /// Engine `engine` failed (`reason`: an `engine-*` problem).
    EngineFailed = "engine-failed",
    /// The engine program could not start (`detail`: the system's words).
    EngineStartFailed = "engine-start-failed",
    /// The engine's output closed or writing to it failed.
    EngineCrashed = "engine-crashed",
    /// No `bestmove` `seconds` after `stop`.
    EngineStalled = "engine-stalled",
    /// No game in the PGN text.
    PgnEmpty = "pgn-empty",
    /// Game `game`: a tag line `line` that cannot be read.
    PgnBadTag = "pgn-bad-tag",
    /// Game `game`: a comment is not closed.
    PgnOpenComment = "pgn-open-comment",
    /// Game `game`: its FEN tag cannot be read (`reason`).
    PgnBadFen = "pgn-bad-fen",
    /// Game `game`: a `)` closes no variation.
    PgnStrayClose = "pgn-stray-close",
    /// Game `game`: a variation before any move.
    PgnEarlyVariation = "pgn-early-variation",
    /// Game `game`: a variation is not closed.
    PgnOpenVariation = "pgn-open-variation",
    /// Game `game`: variations nest deeper than `limit`.
    PgnDeepVariation = "pgn-deep-variation",
    /// Game `game`: move `number`, by `side`, cannot be played (`reason`:
    /// `not-a-move`, `off-board` or `illegal-move`).
    PgnIllegalMove = "pgn-illegal-move",
    /// A request for a host this server does not answer.
    ForeignHost = "foreign-host",
    /// A request without the URL's token.
    NoToken = "no-token",
    /// A changing request from a foreign page.
    ForeignOrigin = "foreign-origin",
    /// A request before the page set the visitor's cookie.
    NoVisitor = "no-visitor",
    /// Too many requests from one address.
    TooManyRequests = "too-many-requests",
    /// An address with `max` pages open at once already.
    TooManyStreams = "too-many-streams",
    /// Nothing at this address.
    NotFound = "not-found",
    /// No lesson `lesson`.
    NoLesson = "no-lesson",
    /// Lesson `lesson` is done in the page, not by moves.
    LessonNotPlayed = "lesson-not-played",
    /// A lesson line that cannot be judged (`detail`: why, in English).
    BadLessonLine = "bad-lesson-line",
    /// No such game of this visitor.
    NotYourGame = "not-your-game",
    /// A public server plays without clocks.
    NoClocksHere = "no-clocks-here",
    /// A public server plays only agon.
    OnlyAgonHere = "only-agon-here",
    /// No game in progress to resign.
    NothingToResign = "nothing-to-resign",
    /// No game `index` in the visitor's list.
    NoGameListed = "no-game-listed",
    /// `command` is not for visitors.
    PrivateCommand = "private-command",
    /// The visitor has `limit` games in progress already.
    TooManyGames = "too-many-games",
    /// The engines are busy.
    EnginesBusy = "engines-busy",
    /// A command of the analysis board with none open (`agon serve`).
    NoAnalysisBoard = "no-analysis-board",
    /// Takeback or resignation on the analysis board (`agon serve`).
    NoGameOnBoard = "no-game-on-board",
    /// 503 of `agon serve`: every visitor slot in memory is busy.
    VisitorsFull = "visitors-full",
    /// The server failed.
    ServerFailed = "server-failed",
    /// A preview of more than `max` moves.
    PreviewTooLong = "preview-too-long",
    /// The analysis board holds `max` moves already.
    BoardFull = "board-full",
    /// An engine line of more than `max` moves.
    LineTooLong = "line-too-long",
    /// The record is of the game shown (no game to name).
    RecordOfGameShown = "record-of-game-shown",
    /// Reading PGN is not on a public server.
    NoPgnHere = "no-pgn-here",
}

/// A refusal: its code, parameters and English message.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// What went wrong.
    pub code: Code,
    /// The values its sentence names; a value that is itself a problem is
    /// `{"code", "params"}`.
    pub params: Map<String, Value>,
    /// In English, for scripts and logs.
    pub message: String,
}

impl Problem {
    /// A problem without parameters yet.
    pub fn new(code: Code, message: impl Into<String>) -> Problem {
        Problem {
            code,
            params: Map::new(),
            message: message.into(),
        }
    }

    /// The problem with one more parameter.
    #[must_use]
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Problem {
        self.params.insert(name.to_string(), value.into());
        self
    }

    /// The problem with a parameter that is another problem, told inside it.
    #[must_use]
    pub fn within(self, name: &str, inner: &Problem) -> Problem {
        self.with(
            name,
            json!({ "code": inner.code.name(), "params": inner.params }),
        )
    }

    /// As the page reads it: `{"code", "params", "error"}`, `error` the
    /// English message.
    pub fn json(&self) -> Value {
        json!({ "code": self.code.name(), "params": self.params, "error": self.message })
    }

    /// A move that cannot be played, as the rules core says why.
    pub fn bad_move(text: &str, error: &MoveError) -> Problem {
        let message = format!("illegal move {text}: {error}");
        match error {
            MoveError::Syntax(written) => {
                Problem::new(Code::NotAMove, message).with("move", written.as_str())
            }
            MoveError::OffBoard(cell) => {
                Problem::new(Code::OffBoard, message).with("cell", cell.as_str())
            }
            MoveError::Illegal { reason, .. } => Problem::new(Code::IllegalMove, message)
                .with("move", text)
                .with("rule", reason.code()),
        }
    }

    /// A FEN that cannot be read: `bad-fen` with the `fen-*` reason inside.
    pub fn bad_fen(error: &FenError) -> Problem {
        Problem::new(Code::BadFen, format!("bad FEN: {error}")).within("reason", &fen_reason(error))
    }
}

/// A refusal as the page reads it: the problem's code, parameters and English message.
pub(crate) fn refuse(status: StatusCode, problem: &Problem) -> Response {
    (status, axum::Json(problem.json())).into_response()
}

/// A request the server cannot read: what its parser said.
pub(crate) fn unreadable(what: &str, error: &serde_json::Error) -> Problem {
    Problem::new(Code::BadRequest, format!("{what}: {error}")).with("detail", error.to_string())
}

/// A request that failed on its way (the work panicked): logged, and a 500.
pub(crate) fn failed(error: &tokio::task::JoinError) -> Response {
    log::error!("a request failed: {error}");
    refuse(
        StatusCode::INTERNAL_SERVER_ERROR,
        &Problem::new(Code::ServerFailed, "the server failed"),
    )
}

/// Why a FEN cannot be read, one code a fault of the rules core.
pub fn fen_reason(error: &FenError) -> Problem {
    let side = |colour: &crate::rules::Color| colour.name().to_lowercase();
    let problem = |code| Problem::new(code, error.to_string());
    match error {
        FenError::Empty => problem(Code::FenEmpty),
        FenError::FieldCount(fields) => problem(Code::FenFieldCount).with("fields", *fields),
        FenError::EmptyField => problem(Code::FenEmptyField),
        FenError::RankCount(ranks) => problem(Code::FenRankCount).with("ranks", *ranks),
        FenError::RankLength {
            rank,
            expected,
            found,
        } => problem(Code::FenRankLength)
            .with("rank", *rank)
            .with("expected", *expected)
            .with("found", *found),
        FenError::UnknownCharacter { rank, character } => problem(Code::FenUnknownCharacter)
            .with("rank", *rank)
            .with("character", character.to_string()),
        FenError::StrayCaptureMark { rank } => {
            problem(Code::FenStrayCaptureMark).with("rank", *rank)
        }
        FenError::BadEmptyCount { rank, text } => problem(Code::FenBadEmptyCount)
            .with("rank", *rank)
            .with("text", text.as_str()),
        FenError::TooManyQueens(colour) => {
            problem(Code::FenTooManyQueens).with("side", side(colour))
        }
        FenError::TooManyGuards(colour, guards) => problem(Code::FenTooManyGuards)
            .with("side", side(colour))
            .with("guards", *guards),
        FenError::GuardOnThrone => problem(Code::FenGuardOnThrone),
        FenError::BadSide(text) => problem(Code::FenBadSide).with("text", text.as_str()),
        FenError::BadFullmove(text) => problem(Code::FenBadFullmove).with("text", text.as_str()),
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
