//! The `agon` binary: the protocol engine by default, tools as subcommands.

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
    /// Play engines against each other (cutechess/fastchess-style options; see `agon match --help`).
    #[command(disable_help_flag = true)]
    Match {
        /// The match options, read by the match runner.
        #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<String>,
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
        Some(Command::Match { args }) => agon::tools::match_runner::run(&args),
        None => Err("the protocol loop is not built yet".to_string()),
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
