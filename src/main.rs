//! The `agon` binary: the protocol engine by default, tools as subcommands.

use agon::protocol;
use agon::rules::{START_FEN, parse_fen};
use agon::tools::perft::{write_divide, write_perft_table};
use clap::{Parser, Subcommand};
use std::io;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "agon",
    version,
    about = "An engine and toolbox for the board game Agon"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine's protocol loop on stdin/stdout (also the default).
    Uci,
    /// Run the protocol loop, answering `go` with a uniformly random legal move.
    Random {
        /// Seed for repeatable choices (default: a fresh random seed).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Count legal move sequences to a depth (move generator check and speed).
    Perft {
        /// Depth in plies.
        depth: u32,
        /// Start from this position instead of the start position.
        #[arg(long)]
        fen: Option<String>,
        /// One line per root move, then the total.
        #[arg(long)]
        divide: bool,
        /// Worker threads over the root moves.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Perft {
            depth,
            fen,
            divide,
            threads,
        }) => run_perft(depth, fen.as_deref(), divide, threads),
        None | Some(Command::Uci) => protocol::run_engine().map_err(|e| e.to_string()),
        Some(Command::Random { seed }) => protocol::run_random(seed).map_err(|e| e.to_string()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_perft(depth: u32, fen: Option<&str>, divide: bool, threads: usize) -> Result<(), String> {
    let position = parse_fen(fen.unwrap_or(START_FEN)).map_err(|e| format!("bad FEN: {e}"))?;
    if threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    let mut out = io::stdout().lock();
    let written = if divide {
        write_divide(&mut out, &position, depth, threads).map(|_| ())
    } else {
        write_perft_table(&mut out, &position, depth, threads)
    };
    written.map_err(|e| e.to_string())
}
