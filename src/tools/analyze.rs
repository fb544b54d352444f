//! `agon analyze`: searches a list of positions with the library's engine on
//! worker threads and writes one JSON object per position, in input order.

use crate::rules::{Color, Game, GameResult, START_FEN, parse_fen};
use crate::search::nnue::NetworkRef;
use crate::search::{Engine, EngineOptions, Score, SearchControl, SearchLimits, SearchReport};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::thread;
use std::time::{Duration, Instant};

/// How to analyse.
#[derive(Clone, Debug)]
pub struct AnalyzeSettings {
    /// Depth limit.
    pub depth: Option<u32>,
    /// Node limit.
    pub nodes: Option<u64>,
    /// Time per position.
    pub movetime: Option<Duration>,
    /// Transposition table size per worker, MiB.
    pub hash_mib: usize,
    /// Lines reported per position.
    pub multipv: usize,
    /// Worker threads.
    pub jobs: usize,
    /// The network that evaluates, when not the embedded one (the
    /// engine's `EvalFile`).
    pub network: Option<NetworkRef>,
}

/// The depth searched when no limit is given, so that a run always ends.
pub const DEFAULT_DEPTH: u32 = 4;

/// The longest time per position, in milliseconds: a day.
pub const MAX_MOVETIME_MS: u64 = 24 * 3600 * 1000;

/// Why an analysis could not run to its end.
#[derive(Debug)]
pub enum AnalyzeError {
    /// A setting is out of range.
    Settings(String),
    /// The positions could not be read.
    Read(std::io::Error),
    /// The analysis could not be written.
    Write(std::io::Error),
}

impl std::fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnalyzeError::Settings(message) => f.write_str(message),
            AnalyzeError::Read(e) => write!(f, "cannot read the positions: {e}"),
            AnalyzeError::Write(e) => write!(f, "cannot write the analysis: {e}"),
        }
    }
}

impl std::error::Error for AnalyzeError {}

/// One input line: the line number and its text.
struct Task {
    number: usize,
    text: String,
}

/// Reads positions from `input` and writes the analysis to `output`.
pub fn run(
    input: impl BufRead,
    output: &mut impl Write,
    settings: &AnalyzeSettings,
) -> Result<(), AnalyzeError> {
    if settings.jobs == 0 || settings.multipv == 0 {
        return Err(AnalyzeError::Settings(
            "--jobs and --multipv must be at least 1".into(),
        ));
    }
    if settings.depth == Some(0) || settings.nodes == Some(0) {
        return Err(AnalyzeError::Settings(
            "--depth and --nodes must be at least 1".into(),
        ));
    }
    let mut tasks = Vec::new();
    for (index, line) in input.lines().enumerate() {
        let line = line.map_err(AnalyzeError::Read)?;
        let text = line.trim();
        if !text.is_empty() && !text.starts_with('#') {
            tasks.push(Task {
                number: index + 1,
                text: text.to_string(),
            });
        }
    }
    let next = AtomicUsize::new(0);
    let (sender, results) = channel::<(usize, Value)>();
    let mut options = EngineOptions {
        hash_mib: settings.hash_mib,
        multipv: settings.multipv,
        ..EngineOptions::default()
    };
    if let Some(network) = settings.network {
        options.tuning.network = network;
    }
    // Made before any job starts, so that a --hash the system will not give
    // is refused with a message.
    let engines = (0..settings.jobs.min(tasks.len().max(1)))
        .map(|_| Engine::new(options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| AnalyzeError::Settings(format!("--hash {}: {e}", settings.hash_mib)))?;
    thread::scope(|scope| -> Result<(), AnalyzeError> {
        for mut engine in engines {
            let sender = sender.clone();
            let (tasks, next) = (&tasks, &next);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else { break };
                    let value = analyse(&mut engine, task, settings);
                    if sender.send((index, value)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // Results arrive in any order; print each as soon as all before it are out.
        let mut waiting = BTreeMap::new();
        let mut printed = 0;
        for (index, value) in results {
            waiting.insert(index, value);
            while let Some(value) = waiting.remove(&printed) {
                writeln!(output, "{value}")
                    .and_then(|()| output.flush())
                    .map_err(AnalyzeError::Write)?;
                printed += 1;
            }
        }
        Ok(())
    })
}

/// Parses `<FEN> [; moves m1 m2 ...]` (or `startpos` for the start position) into a game.
fn parse_line(text: &str) -> Result<Game, String> {
    let (fen, moves) = match text.split_once(';') {
        Some((fen, rest)) => {
            let rest = rest.trim();
            let moves = rest
                .strip_prefix("moves")
                .ok_or_else(|| format!("expected '; moves ...' after the FEN, got '; {rest}'"))?;
            (fen.trim(), moves)
        }
        None => (text, ""),
    };
    let fen = if fen == "startpos" { START_FEN } else { fen };
    let start = parse_fen(fen).map_err(|e| format!("bad FEN: {e}"))?;
    let mut game = Game::new(start);
    for mv in moves.split_whitespace() {
        if game.result() != GameResult::Ongoing {
            return Err(format!("the game is over before {mv}"));
        }
        game.play_text(mv).map_err(|e| e.to_string())?;
    }
    Ok(game)
}

fn score_json(score: Score) -> Value {
    match score {
        Score::Centi(cp) => json!({ "cp": cp }),
        Score::Mate(moves) => json!({ "mate": moves }),
    }
}

fn analyse(engine: &mut Engine, task: &Task, settings: &AnalyzeSettings) -> Value {
    let game = match parse_line(&task.text) {
        Ok(game) => game,
        Err(error) => {
            return json!({ "line": task.number, "input": task.text, "error": error });
        }
    };
    let fen = crate::rules::to_fen(game.position());
    match game.result() {
        GameResult::Ongoing => {}
        over => {
            let result = match over {
                GameResult::Win {
                    winner: Color::White,
                    ..
                } => "1-0",
                GameResult::Win { .. } => "0-1",
                _ => "1/2-1/2",
            };
            return json!({
                "line": task.number,
                "fen": fen,
                "bestmove": null,
                "result": result,
                "reason": over.to_string(),
            });
        }
    }
    let no_limit =
        settings.depth.is_none() && settings.nodes.is_none() && settings.movetime.is_none();
    let limits = SearchLimits {
        depth: settings.depth.or(no_limit.then_some(DEFAULT_DEPTH)),
        nodes: settings.nodes,
        movetime: settings.movetime,
        ..SearchLimits::default()
    };
    engine.clear();
    let started = Instant::now();
    // The latest report of each line; a deeper iteration replaces a shallower one.
    let mut lines: BTreeMap<u32, SearchReport> = BTreeMap::new();
    let outcome = engine.search(&game, &limits, &SearchControl::default(), |report| {
        lines.insert(report.multipv, report.clone());
    });
    let elapsed = started.elapsed();
    let main = lines.get(&1);
    let pv = |report: &SearchReport| -> Vec<String> {
        report.pv.iter().map(ToString::to_string).collect()
    };
    let mut value = json!({
        "line": task.number,
        "fen": fen,
        "bestmove": outcome.best.map(|m| m.to_string()),
        "score": score_json(outcome.score),
        "depth": outcome.depth,
        "seldepth": main.map_or(outcome.depth, |r| r.seldepth),
        "nodes": outcome.nodes,
        "time_ms": elapsed.as_millis() as u64,
        "pv": main.map(pv).unwrap_or_default(),
    });
    if settings.multipv > 1 {
        value["lines"] = lines
            .values()
            .map(|report| {
                json!({
                    "multipv": report.multipv,
                    "score": score_json(report.score),
                    "depth": report.depth,
                    "pv": pv(report),
                })
            })
            .collect();
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_take_a_fen_and_optional_moves() {
        let game = parse_line(&format!("{START_FEN} ; moves f1e1 f11g11")).unwrap();
        assert_eq!(game.moves().len(), 2);
        assert_eq!(parse_line("startpos").unwrap().moves().len(), 0);
        assert!(parse_line("startpos ; f1e1").unwrap_err().contains("moves"));
        assert!(parse_line("startpos ; moves f1f3").is_err());
        assert!(parse_line("nonsense").unwrap_err().starts_with("bad FEN"));
    }
}
