//! Parser for one input line of the engine's text protocol (UCI, UGI and the agon extras).
//!
//! This module is pure: it knows nothing about the board, the rules or the
//! search. It turns a line into a [`Command`] and leaves every check that
//! needs the game (is this FEN valid? is this move legal? does this option
//! exist?) to the caller. It never panics, whatever the input.
//!
//! Conventions (documented for users in `protocol.md`):
//! - tokens are separated by any run of whitespace;
//! - command words and keywords are lower case and matched exactly;
//! - a blank line is not a command (`Ok(None)`);
//! - a line longer than [`MAX_LINE_BYTES`] is refused;
//! - anything malformed gives a [`CommandError`] whose `Display` text is one
//!   line meant to follow `info string error: `.

use std::fmt;

use crate::rules::notation::{Quoted, clip};

/// Longest accepted line, in bytes, not counting the end-of-line characters.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;

/// Smallest depth accepted by `perft` and `go perft`.
pub const MIN_PERFT_DEPTH: u32 = 1;

/// Largest depth accepted by `perft` and `go perft`.
pub const MAX_PERFT_DEPTH: u32 = 20;

/// One parsed input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `uci`: identify the engine and list its options, ending with `uciok`.
    Uci,
    /// `ugi`: as `uci`, but the listing ends with `ugiok`.
    Ugi,
    /// `isready`: answer `readyok`.
    IsReady,
    /// `setoption name <name> [value <value>]`.
    SetOption {
        /// Option name as written (words joined by single spaces); compare it case-insensitively.
        name: String,
        /// Value as written (the rest of the line, without the whitespace
        /// around it), `None` when `value` was not given.
        value: Option<String>,
    },
    /// `ucinewgame` or `uginewgame`: forget the hash table and the game history.
    NewGame,
    /// `position startpos|fen <FEN> [moves <m1> <m2> ...]`.
    Position {
        /// The FEN fields joined by single spaces, `None` for `startpos`.
        fen: Option<String>,
        /// The moves to play from that position, in order, exactly as written.
        moves: Vec<String>,
    },
    /// `go ...`: start a search (or, with `perft`, a perft count).
    Go(GoParams),
    /// `stop`: end the current search and report its best move.
    Stop,
    /// `ponderhit`: the expected move was played; the ponder search becomes a normal one.
    PonderHit,
    /// `quit`: leave the program.
    Quit,
    /// `d`: print the board, FEN, hash key and side to move.
    Display,
    /// `eval`: print the static evaluation term by term.
    Eval,
    /// `perft <depth>`: count move sequences, divided by root move.
    Perft {
        /// Depth in plies, within `MIN_PERFT_DEPTH..=MAX_PERFT_DEPTH`.
        depth: u32,
    },
    /// `moves`: list every legal move of the current position.
    Moves,
    /// `status`: say whether the game is over, who won and why.
    Status,
    /// `query <question>`: a UGI question, answered with `response <answer>`.
    Query(QueryKind),
}

/// The arguments of a `go` command. Times are in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoParams {
    /// White's remaining clock (`wtime` or `p1time`); negative input is clamped to 0.
    pub wtime: Option<u64>,
    /// Black's remaining clock (`btime` or `p2time`); negative input is clamped to 0.
    pub btime: Option<u64>,
    /// White's increment per move (`winc` or `p1inc`); negative input is clamped to 0.
    pub winc: Option<u64>,
    /// Black's increment per move (`binc` or `p2inc`); negative input is clamped to 0.
    pub binc: Option<u64>,
    /// Moves left until the next time control (at least 1).
    pub movestogo: Option<u32>,
    /// Exact time to spend on this move.
    pub movetime: Option<u64>,
    /// Maximum depth in plies (at least 1).
    pub depth: Option<u32>,
    /// Maximum number of nodes (at least 1).
    pub nodes: Option<u64>,
    /// Look for a win in at most this many moves (at least 1).
    pub mate: Option<u32>,
    /// Search until `stop`.
    pub infinite: bool,
    /// Search in ponder mode until `ponderhit` or `stop`.
    pub ponder: bool,
    /// Restrict the root to these moves (as written; empty means all moves).
    pub searchmoves: Vec<String>,
    /// `go perft N`: run perft instead of a search; never combined with anything else.
    pub perft: Option<u32>,
}

/// The questions of the UGI `query` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryKind {
    /// `query gameover`: is the game over? (`response true|false`)
    GameOver,
    /// `query p1turn`: is it player 1's (White's) turn? (`response true|false`)
    P1Turn,
    /// `query result`: who won? (`response p1win|p2win|draw|none`)
    Result,
}

/// Why a number after a keyword was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberProblem {
    /// The line ended where the number should be.
    Missing,
    /// The token is not a decimal integer.
    NotANumber(String),
    /// The number does not fit the value's type.
    TooLarge {
        /// The token as written (possibly shortened).
        token: String,
        /// The largest accepted value.
        max: u64,
    },
    /// A negative number where only non-negative ones make sense.
    Negative(String),
    /// Zero where the value must be at least 1.
    Zero,
}

/// Everything that can be wrong with an input line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// The line is longer than [`MAX_LINE_BYTES`].
    LineTooLong {
        /// Length of the line in bytes.
        len: usize,
    },
    /// The first word is not a command.
    UnknownCommand(String),
    /// A command that takes no arguments (or no more arguments) got one.
    UnexpectedArgument {
        /// The command, e.g. `"isready"`.
        command: &'static str,
        /// The first surplus token.
        token: String,
    },
    /// `setoption` not followed by `name`.
    SetOptionNeedsName {
        /// What came instead of `name`, if anything.
        got: Option<String>,
    },
    /// `setoption name` with no name before `value` or the end of the line.
    SetOptionEmptyName,
    /// `setoption name <n> value` with nothing after `value`.
    SetOptionEmptyValue {
        /// The option name.
        name: String,
    },
    /// `position` not followed by `startpos` or `fen`.
    PositionNeedsKind {
        /// What came instead, if anything.
        got: Option<String>,
    },
    /// `position fen` with no FEN fields.
    FenMissing,
    /// `position startpos` followed by something other than `moves`.
    PositionUnexpected {
        /// The offending token.
        token: String,
    },
    /// The keyword `moves` appears twice in one `position` command.
    MovesTwice,
    /// A `go` argument with a bad number.
    GoValue {
        /// The argument as written (`wtime`, `p1time`, `depth`, ...).
        arg: &'static str,
        /// What is wrong with its value.
        problem: NumberProblem,
    },
    /// A `go` argument given twice (aliases count as the same argument).
    GoDuplicate {
        /// The repeated argument as written the second time.
        arg: &'static str,
        /// The spelling used the first time.
        first: &'static str,
    },
    /// A word after `go` that is not a `go` argument.
    GoUnknownArgument(String),
    /// `go searchmoves` with no move after it.
    SearchMovesEmpty,
    /// `go perft N` together with other `go` arguments.
    PerftCombined,
    /// The perft depth is missing or not a number.
    PerftDepthInvalid {
        /// `"perft"` or `"go perft"`.
        command: &'static str,
        /// The token given, if any.
        got: Option<String>,
    },
    /// The perft depth is a number outside `MIN_PERFT_DEPTH..=MAX_PERFT_DEPTH`.
    PerftDepthOutOfRange {
        /// `"perft"` or `"go perft"`.
        command: &'static str,
        /// The number as written (possibly shortened).
        got: String,
    },
    /// `query` with no question.
    QueryMissing,
    /// `query` with an unknown question.
    QueryUnknown(String),
}

impl fmt::Display for NumberProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberProblem::Missing => write!(f, "got nothing"),
            NumberProblem::NotANumber(t) => write!(f, "got '{}'", Quoted(t)),
            NumberProblem::TooLarge { token, max } => {
                write!(
                    f,
                    "got '{}', which is too large (maximum {max})",
                    Quoted(token)
                )
            }
            NumberProblem::Negative(t) => {
                write!(f, "got '{}', which is negative", Quoted(t))
            }
            NumberProblem::Zero => write!(f, "got '0', which is below the minimum of 1"),
        }
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::LineTooLong { len } => write!(
                f,
                "line too long ({len} bytes, the limit is {MAX_LINE_BYTES}); ignored"
            ),
            CommandError::UnknownCommand(c) => write!(f, "unknown command '{}'", Quoted(c)),
            CommandError::UnexpectedArgument { command, token } => {
                write!(f, "unexpected '{}' after '{command}'", Quoted(token))
            }
            CommandError::SetOptionNeedsName { got: None } => {
                write!(f, "'setoption' needs 'name', got nothing")
            }
            CommandError::SetOptionNeedsName { got: Some(t) } => {
                write!(f, "'setoption' needs 'name', got '{}'", Quoted(t))
            }
            CommandError::SetOptionEmptyName => {
                write!(f, "'setoption name' needs an option name")
            }
            CommandError::SetOptionEmptyValue { name } => write!(
                f,
                "'setoption name {}' has 'value' but no value after it",
                Quoted(name)
            ),
            CommandError::PositionNeedsKind { got: None } => {
                write!(f, "'position' needs 'startpos' or 'fen', got nothing")
            }
            CommandError::PositionNeedsKind { got: Some(t) } => write!(
                f,
                "'position' needs 'startpos' or 'fen', got '{}'",
                Quoted(t)
            ),
            CommandError::FenMissing => write!(f, "FEN missing after 'position fen'"),
            CommandError::PositionUnexpected { token } => write!(
                f,
                "unexpected '{}' after 'position startpos' (expected 'moves')",
                Quoted(token)
            ),
            CommandError::MovesTwice => write!(f, "'moves' appears twice in 'position'"),
            CommandError::GoValue { arg, problem } => match problem {
                NumberProblem::Missing | NumberProblem::NotANumber(_) => {
                    write!(f, "'go {arg}' needs a number, {problem}")
                }
                _ => write!(f, "bad 'go {arg}' value: {problem}"),
            },
            CommandError::GoDuplicate { arg, first } if arg == first => {
                write!(f, "duplicate go argument '{arg}'")
            }
            CommandError::GoDuplicate { arg, first } => write!(
                f,
                "duplicate go argument '{arg}' (same as '{first}', already given)"
            ),
            CommandError::GoUnknownArgument(t) => {
                write!(f, "unknown go argument '{}'", Quoted(t))
            }
            CommandError::SearchMovesEmpty => {
                write!(f, "'go searchmoves' needs at least one move")
            }
            CommandError::PerftCombined => {
                write!(f, "'go perft' cannot be combined with other go arguments")
            }
            CommandError::PerftDepthInvalid { command, got: None } => write!(
                f,
                "'{command}' needs a depth from {MIN_PERFT_DEPTH} to {MAX_PERFT_DEPTH}, got nothing"
            ),
            CommandError::PerftDepthInvalid {
                command,
                got: Some(t),
            } => write!(
                f,
                "'{command}' needs a depth from {MIN_PERFT_DEPTH} to {MAX_PERFT_DEPTH}, got '{}'",
                Quoted(t)
            ),
            CommandError::PerftDepthOutOfRange { command, got } => write!(
                f,
                "{command} depth out of range ({MIN_PERFT_DEPTH}..={MAX_PERFT_DEPTH}), got {}",
                Quoted(got)
            ),
            CommandError::QueryMissing => write!(
                f,
                "'query' needs one of 'gameover', 'p1turn', 'result', got nothing"
            ),
            CommandError::QueryUnknown(t) => write!(
                f,
                "unknown query '{}' (expected 'gameover', 'p1turn' or 'result')",
                Quoted(t)
            ),
        }
    }
}

impl std::error::Error for CommandError {}

/// Parses one input line.
///
/// Returns `Ok(None)` for a line that is empty or only whitespace,
/// `Ok(Some(command))` for a well-formed command.
///
/// # Errors
///
/// Returns a [`CommandError`] for a line that is too long, an unknown
/// command, or a known command whose arguments are malformed. Its `Display`
/// text says what is wrong in one line.
pub fn parse_command(line: &str) -> Result<Option<Command>, CommandError> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.len() > MAX_LINE_BYTES {
        return Err(CommandError::LineTooLong { len: line.len() });
    }
    let mut tokens = line.split_whitespace();
    let Some(first) = tokens.next() else {
        return Ok(None);
    };
    let command = match first {
        "uci" => no_arguments("uci", tokens, Command::Uci)?,
        "ugi" => no_arguments("ugi", tokens, Command::Ugi)?,
        "isready" => no_arguments("isready", tokens, Command::IsReady)?,
        "ucinewgame" => no_arguments("ucinewgame", tokens, Command::NewGame)?,
        "uginewgame" => no_arguments("uginewgame", tokens, Command::NewGame)?,
        "stop" => no_arguments("stop", tokens, Command::Stop)?,
        "ponderhit" => no_arguments("ponderhit", tokens, Command::PonderHit)?,
        "quit" => no_arguments("quit", tokens, Command::Quit)?,
        "d" => no_arguments("d", tokens, Command::Display)?,
        "eval" => no_arguments("eval", tokens, Command::Eval)?,
        "moves" => no_arguments("moves", tokens, Command::Moves)?,
        "status" => no_arguments("status", tokens, Command::Status)?,
        "setoption" => parse_setoption(line.trim_start().strip_prefix(first).unwrap_or(""))?,
        "position" => parse_position(tokens)?,
        "go" => Command::Go(parse_go(tokens)?),
        "perft" => {
            let depth = parse_perft_depth("perft", tokens.next())?;
            no_arguments("perft", tokens, Command::Perft { depth })?
        }
        "query" => parse_query(tokens)?,
        other => return Err(CommandError::UnknownCommand(clip(other))),
    };
    Ok(Some(command))
}

/// Returns `command` if no token is left, an error naming the first surplus token otherwise.
fn no_arguments<'a>(
    name: &'static str,
    mut rest: impl Iterator<Item = &'a str>,
    command: Command,
) -> Result<Command, CommandError> {
    match rest.next() {
        None => Ok(command),
        Some(token) => Err(CommandError::UnexpectedArgument {
            command: name,
            token: clip(token),
        }),
    }
}

/// The first word of `text` and what follows it (from the whitespace after
/// the word), or `None` when only whitespace is left.
fn next_word(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    if text.is_empty() {
        return None;
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    Some(text.split_at(end))
}

/// `setoption name <words...> [value <text>]`: the value is the rest of the
/// line as written, without the whitespace around it, so that a file name
/// keeps its inner spaces.
fn parse_setoption(args: &str) -> Result<Command, CommandError> {
    let mut rest = match next_word(args) {
        Some(("name", rest)) => rest,
        other => {
            return Err(CommandError::SetOptionNeedsName {
                got: other.map(|(word, _)| clip(word)),
            });
        }
    };
    let mut name_words = Vec::new();
    let mut value = None;
    while let Some((word, after)) = next_word(rest) {
        if word == "value" {
            value = Some(after.trim());
            break;
        }
        name_words.push(word);
        rest = after;
    }
    if name_words.is_empty() {
        return Err(CommandError::SetOptionEmptyName);
    }
    let name = name_words.join(" ");
    let value = match value {
        Some("") => return Err(CommandError::SetOptionEmptyValue { name: clip(&name) }),
        Some(text) => Some(text.to_string()),
        None => None,
    };
    Ok(Command::SetOption { name, value })
}

/// `position startpos [moves ...]` or `position fen <fields...> [moves ...]`.
fn parse_position<'a>(mut tokens: impl Iterator<Item = &'a str>) -> Result<Command, CommandError> {
    let mut has_moves = false;
    let fen = match tokens.next() {
        Some("startpos") => match tokens.next() {
            None => None,
            Some("moves") => {
                has_moves = true;
                None
            }
            Some(other) => {
                return Err(CommandError::PositionUnexpected { token: clip(other) });
            }
        },
        Some("fen") => {
            let mut fields = Vec::new();
            for token in tokens.by_ref() {
                if token == "moves" {
                    has_moves = true;
                    break;
                }
                fields.push(token);
            }
            if fields.is_empty() {
                return Err(CommandError::FenMissing);
            }
            Some(fields.join(" "))
        }
        other => {
            return Err(CommandError::PositionNeedsKind {
                got: other.map(clip),
            });
        }
    };
    let mut moves = Vec::new();
    if has_moves {
        for token in tokens {
            if token == "moves" {
                return Err(CommandError::MovesTwice);
            }
            moves.push(token.to_string());
        }
    }
    Ok(Command::Position { fen, moves })
}

/// `query gameover|p1turn|result`.
fn parse_query<'a>(mut tokens: impl Iterator<Item = &'a str>) -> Result<Command, CommandError> {
    let kind = match tokens.next() {
        None => return Err(CommandError::QueryMissing),
        Some("gameover") => QueryKind::GameOver,
        Some("p1turn") => QueryKind::P1Turn,
        Some("result") => QueryKind::Result,
        Some(other) => return Err(CommandError::QueryUnknown(clip(other))),
    };
    no_arguments("query", tokens, Command::Query(kind))
}

/// The fields a `go` keyword fills, used to detect duplicates across aliases.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GoField {
    WTime,
    BTime,
    WInc,
    BInc,
    MovesToGo,
    MoveTime,
    Depth,
    Nodes,
    Mate,
    Infinite,
    Ponder,
    SearchMoves,
    Perft,
}

/// Maps a `go` keyword to its canonical spelling and field.
fn go_keyword(token: &str) -> Option<(&'static str, GoField)> {
    let entry = match token {
        "wtime" => ("wtime", GoField::WTime),
        "btime" => ("btime", GoField::BTime),
        "winc" => ("winc", GoField::WInc),
        "binc" => ("binc", GoField::BInc),
        "p1time" => ("p1time", GoField::WTime),
        "p2time" => ("p2time", GoField::BTime),
        "p1inc" => ("p1inc", GoField::WInc),
        "p2inc" => ("p2inc", GoField::BInc),
        "movestogo" => ("movestogo", GoField::MovesToGo),
        "movetime" => ("movetime", GoField::MoveTime),
        "depth" => ("depth", GoField::Depth),
        "nodes" => ("nodes", GoField::Nodes),
        "mate" => ("mate", GoField::Mate),
        "infinite" => ("infinite", GoField::Infinite),
        "ponder" => ("ponder", GoField::Ponder),
        "searchmoves" => ("searchmoves", GoField::SearchMoves),
        "perft" => ("perft", GoField::Perft),
        _ => return None,
    };
    Some(entry)
}

/// The arguments of `go`, in any order, each at most once.
fn parse_go<'a>(tokens: impl Iterator<Item = &'a str>) -> Result<GoParams, CommandError> {
    let mut params = GoParams::default();
    let mut seen: Vec<(GoField, &'static str)> = Vec::new();
    let mut tokens = tokens.peekable();
    while let Some(token) = tokens.next() {
        let Some((arg, field)) = go_keyword(token) else {
            return Err(CommandError::GoUnknownArgument(clip(token)));
        };
        if let Some(&(_, first)) = seen.iter().find(|(f, _)| *f == field) {
            return Err(CommandError::GoDuplicate { arg, first });
        }
        seen.push((field, arg));
        let value = |token: Option<&str>| -> Result<u64, CommandError> {
            parse_unsigned(token, u64::MAX)
                .map_err(|problem| CommandError::GoValue { arg, problem })
        };
        let positive = |token: Option<&str>, max: u64| -> Result<u64, CommandError> {
            match parse_unsigned(token, max) {
                Ok(0) => Err(CommandError::GoValue {
                    arg,
                    problem: NumberProblem::Zero,
                }),
                Ok(n) => Ok(n),
                Err(problem) => Err(CommandError::GoValue { arg, problem }),
            }
        };
        let positive_u32 = |token: Option<&str>| -> Result<u32, CommandError> {
            positive(token, u64::from(u32::MAX)).map(to_u32)
        };
        let clock = |token: Option<&str>| -> Result<u64, CommandError> {
            parse_clock(token).map_err(|problem| CommandError::GoValue { arg, problem })
        };
        match field {
            GoField::WTime => params.wtime = Some(clock(tokens.next())?),
            GoField::BTime => params.btime = Some(clock(tokens.next())?),
            GoField::WInc => params.winc = Some(clock(tokens.next())?),
            GoField::BInc => params.binc = Some(clock(tokens.next())?),
            GoField::MovesToGo => params.movestogo = Some(positive_u32(tokens.next())?),
            GoField::MoveTime => params.movetime = Some(value(tokens.next())?),
            GoField::Depth => params.depth = Some(positive_u32(tokens.next())?),
            GoField::Nodes => params.nodes = Some(positive(tokens.next(), u64::MAX)?),
            GoField::Mate => params.mate = Some(positive_u32(tokens.next())?),
            GoField::Infinite => params.infinite = true,
            GoField::Ponder => params.ponder = true,
            GoField::SearchMoves => {
                while let Some(&next) = tokens.peek() {
                    if go_keyword(next).is_some() {
                        break;
                    }
                    params.searchmoves.push(next.to_string());
                    tokens.next();
                }
                if params.searchmoves.is_empty() {
                    return Err(CommandError::SearchMovesEmpty);
                }
            }
            GoField::Perft => params.perft = Some(parse_perft_depth("go perft", tokens.next())?),
        }
    }
    if params.perft.is_some() && seen.len() > 1 {
        return Err(CommandError::PerftCombined);
    }
    Ok(params)
}

/// Narrows a value already checked against `u32::MAX`.
fn to_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Splits a token into (is negative, digits) if it is an optionally signed decimal integer.
fn split_sign(token: &str) -> Option<(bool, &str)> {
    let (negative, digits) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((negative, digits))
}

/// Parses a non-negative decimal integer not above `max`.
fn parse_unsigned(token: Option<&str>, max: u64) -> Result<u64, NumberProblem> {
    let token = token.ok_or(NumberProblem::Missing)?;
    let (negative, digits) =
        split_sign(token).ok_or_else(|| NumberProblem::NotANumber(clip(token)))?;
    let too_large = || NumberProblem::TooLarge {
        token: clip(token),
        max,
    };
    let n = digits.parse::<u64>().map_err(|_| too_large())?;
    if negative && n != 0 {
        return Err(NumberProblem::Negative(clip(token)));
    }
    if n > max {
        return Err(too_large());
    }
    Ok(n)
}

/// Parses a clock or increment: any negative value, however large, becomes 0.
fn parse_clock(token: Option<&str>) -> Result<u64, NumberProblem> {
    let raw = token.ok_or(NumberProblem::Missing)?;
    match split_sign(raw) {
        Some((true, _)) => Ok(0),
        Some((false, _)) => parse_unsigned(token, u64::MAX),
        None => Err(NumberProblem::NotANumber(clip(raw))),
    }
}

/// Parses a perft depth within `MIN_PERFT_DEPTH..=MAX_PERFT_DEPTH`.
fn parse_perft_depth(command: &'static str, token: Option<&str>) -> Result<u32, CommandError> {
    let Some(raw) = token else {
        return Err(CommandError::PerftDepthInvalid { command, got: None });
    };
    if split_sign(raw).is_none() {
        return Err(CommandError::PerftDepthInvalid {
            command,
            got: Some(clip(raw)),
        });
    }
    match raw.parse::<i64>() {
        Ok(n) if (i64::from(MIN_PERFT_DEPTH)..=i64::from(MAX_PERFT_DEPTH)).contains(&n) => {
            Ok(u32::try_from(n).unwrap_or(MAX_PERFT_DEPTH))
        }
        _ => Err(CommandError::PerftDepthOutOfRange {
            command,
            got: clip(raw),
        }),
    }
}

#[cfg(test)]
mod tests;
