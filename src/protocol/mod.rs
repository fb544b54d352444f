//! The engine's text protocol (UCI, with UGI compatibility and a few
//! extras) on a pair of streams; `protocol.md` is the contract.
//!
//! # Threads
//!
//! - The **reader** (its own thread) reads the input as bytes, one bounded
//!   line at a time, parses it ([`command::parse_command`]) and either
//!   answers it itself or sends it, in input order, to the controller.
//! - The **controller** (the calling thread, `session::Session`) owns the
//!   game, the options and the player, and runs the lines it receives in
//!   order. It never blocks on a search, so it stays responsive.
//! - The **search thread** runs one `go`: it writes the `info` lines, holds
//!   the answer of `go infinite` / `go ponder` until `stop` (or until
//!   `ponderhit` once the search is done), writes exactly one `bestmove`,
//!   then tells the controller it has ended and hands the player back.
//! - Every thread writes through one [`output::Output`]: whole lines (or
//!   blocks of lines), never interleaved, flushed at once by the **output**
//!   thread, the only one that touches the stream.
//!
//! # Ordering
//!
//! Replies follow the order of the input, with the exceptions that
//! `protocol.md` asks for: `isready`, `stop`, `ponderhit` and `quit` take
//! effect at once, even in the middle of a search.
//!
//! - `isready` is answered at once whenever a search runs and has not yet
//!   written its `bestmove`, by the reader itself (or by the controller, for
//!   one that reached it). While no
//!   search runs it goes through the controller like any other line, so
//!   `position ...`, `isready`, `go` gets its `readyok` only once the
//!   position is set.
//! - `stop` and `ponderhit` act on the running search. The reader applies
//!   them itself only when every line it sent before has been handled and
//!   none is held back behind the search; otherwise they go through the
//!   controller, which applies them to the running search and, with lines
//!   held back, also queues them behind those lines. So `go infinite`
//!   followed by `stop` never loses the `stop` to a search not yet started.
//! - Every other line that arrives while a search runs waits, in order,
//!   until the search has written its `bestmove` (after `stop` for `go
//!   infinite` and `go ponder`). This includes `go`: a second `go` starts
//!   only once the first one has answered, so each `go` gets exactly one
//!   `bestmove`.
//! - `quit` and the end of input stop the running search at once (from the
//!   reader), then reach the controller after the lines before them. The
//!   stopped search writes its `bestmove`; lines still waiting for it then
//!   run in order, any `go` among them stopping at once with a move; then
//!   the loop ends. A `perft` in progress ends at once without its count.

pub mod command;
mod input;
pub(crate) mod options;
pub(crate) mod output;
pub(crate) mod player;
pub(crate) mod reply;
mod session;

use crate::search::{Engine, EngineOptions};
use input::{Gate, read_commands};
use output::Output;
use player::{Player, RandomPlayer};
use session::Session;
use std::io::{self, BufRead, BufReader, Write};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;

/// Runs the protocol loop until `quit` or the end of `input`.
///
/// # Errors
///
/// Only when the reader or the output thread cannot be started.
pub(crate) fn run(
    player: Box<dyn Player>,
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> io::Result<()> {
    let output = Output::new(output)?;
    let gate = Arc::new(Gate::default());
    let (events, received) = mpsc::channel();
    let session = Session::new(player, output.clone(), events.clone(), gate.ending());
    let reader = {
        let gate = Arc::clone(&gate);
        let output = output.clone();
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_commands(input, &gate, &output, &events))?
    };
    session.serve(&received, &gate);
    // The reader has sent its last line by now: `quit` comes from it.
    if reader.join().is_err() {
        log::error!("the input reader failed");
    }
    output.drain();
    Ok(())
}

/// `agon` and `agon uci`: the searching engine on stdin and stdout.
///
/// # Errors
///
/// When the loop cannot start.
pub fn run_engine() -> io::Result<()> {
    let engine = Engine::new(EngineOptions::default()).map_err(io::Error::other)?;
    run(Box::new(engine), BufReader::new(io::stdin()), io::stdout())
}

/// `agon random`: the same protocol, answering `go` with a uniformly random
/// legal move; `seed` makes the choices repeatable.
///
/// # Errors
///
/// When the loop cannot start.
pub fn run_random(seed: Option<u64>) -> io::Result<()> {
    let player = RandomPlayer::new(seed);
    run(Box::new(player), BufReader::new(io::stdin()), io::stdout())
}
