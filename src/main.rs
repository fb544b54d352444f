//! The `agon` binary: the protocol engine by default, tools as subcommands.

use agon::protocol;
use agon::protocol::command::{MAX_PERFT_DEPTH, MIN_PERFT_DEPTH};
use agon::rules::{START_FEN, parse_fen};
use agon::tools::analyze::AnalyzeSettings;
use agon::tools::perft::{write_divide, write_perft_table};
use clap::builder::RangedU64ValueParser;
use clap::{Parser, Subcommand};
use std::io;
use std::process::ExitCode;

/// The most threads or jobs a tool runs (the engine's `Threads` maximum).
const MAX_THREADS: u64 = 256;

/// Threads or jobs: 1 to [`MAX_THREADS`].
fn threads() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=MAX_THREADS)
}

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
        /// Depth in plies (1 to 20, as the engine's `perft`).
        #[arg(value_parser = clap::value_parser!(u32).range(i64::from(MIN_PERFT_DEPTH)..=i64::from(MAX_PERFT_DEPTH)))]
        depth: u32,
        /// Start from this position instead of the start position.
        #[arg(long)]
        fen: Option<String>,
        /// One line per root move, then the total.
        #[arg(long)]
        divide: bool,
        /// Worker threads over the root moves.
        #[arg(long, default_value_t = 1, value_parser = threads())]
        threads: usize,
    },
    /// Search a fixed set of positions to a fixed depth: node count and speed.
    Bench {
        /// Depth in plies.
        #[arg(default_value_t = agon::tools::bench::DEFAULT_DEPTH,
              value_parser = clap::value_parser!(u32).range(1..=i64::from(agon::tools::bench::MAX_DEPTH)))]
        depth: u32,
        /// Search threads (the node count is repeatable with one only).
        #[arg(long, default_value_t = 1, value_parser = threads())]
        threads: usize,
    },
    /// Play engines against each other (cutechess/fastchess-style options; see `agon match --help`).
    #[command(disable_help_flag = true)]
    Match {
        /// The match options, read by the match runner.
        #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<String>,
    },
    /// Merge the states (`agon match -state`) of the shards of one run
    /// into the statistics of the whole run.
    Stats {
        /// State files, one per shard.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Also write every game's record, in game order, to this new file.
        #[arg(long)]
        jsonl: Option<std::path::PathBuf>,
    },
    /// Fit the evaluation term weights to recorded games (`agon match -jsonl`
    /// files); prints the fitted `Eval <term>` options.
    Tune {
        /// JSON-lines game records.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Weight of the game results in the targets (1: results only, the
        /// Texel method); the rest is the reported search scores.
        #[arg(long, default_value_t = 0.0)]
        result_weight: f64,
    },
    /// Play, watch and analyse games in the browser: a local web server; its
    /// first output line is the URL to open.
    Gui {
        /// Port to listen on (default: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Do not start the system browser.
        #[arg(long)]
        no_open: bool,
        /// Another engine to offer (a command and its arguments); repeatable.
        /// The first one is the default opponent.
        #[arg(long = "engine")]
        engines: Vec<String>,
        /// Address to listen on; anything but 127.0.0.1 exposes the engines.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
    },
    /// Analyse positions (a FEN per line, optionally `; moves ...`) into JSON lines.
    Analyze {
        /// File of positions; standard input when absent.
        file: Option<std::path::PathBuf>,
        /// Depth limit (default 4 when no limit is given).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        depth: Option<u32>,
        /// Node limit.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        nodes: Option<u64>,
        /// Time per position in milliseconds.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=agon::tools::analyze::MAX_MOVETIME_MS))]
        movetime: Option<u64>,
        /// Transposition table per worker, MiB (1 to 65536, as the engine's `Hash`).
        #[arg(long, default_value_t = 16, value_parser = RangedU64ValueParser::<usize>::new().range(1..=65536))]
        hash: usize,
        /// Lines reported per position.
        #[arg(long, default_value_t = 1, value_parser = threads())]
        multipv: usize,
        /// Worker threads.
        #[arg(long, default_value_t = 2, value_parser = threads())]
        jobs: usize,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let cli = Cli::parse();
    let outcome: Result<(), Box<dyn std::error::Error>> = match cli.command {
        Some(Command::Perft {
            depth,
            fen,
            divide,
            threads,
        }) => run_perft(depth, fen.as_deref(), divide, threads),
        Some(Command::Bench { depth, threads }) => {
            agon::tools::bench::run_bench(&mut io::stdout().lock(), depth, threads)
                .map_err(Into::into)
        }
        None | Some(Command::Uci) => protocol::run_engine().map_err(Into::into),
        Some(Command::Random { seed }) => protocol::run_random(seed).map_err(Into::into),
        Some(Command::Match { args }) => agon::tools::match_runner::run(&args).map_err(Into::into),
        Some(Command::Stats { files, jsonl }) => agon::tools::match_runner::merge::run(
            &files,
            jsonl.as_deref(),
            &mut io::stdout().lock(),
        )
        .map_err(Into::into),
        Some(Command::Tune {
            files,
            result_weight,
        }) => agon::tools::tune::run(&files, result_weight, &mut io::stdout().lock())
            .map_err(Into::into),
        Some(Command::Gui {
            port,
            no_open,
            engines,
            host,
        }) => agon::tools::gui::run(&agon::tools::gui::GuiSettings {
            port,
            host,
            no_open,
            engines,
        })
        .map_err(Into::into),
        Some(Command::Analyze {
            file,
            depth,
            nodes,
            movetime,
            hash,
            multipv,
            jobs,
        }) => run_analyze(
            file.as_deref(),
            &AnalyzeSettings {
                depth,
                nodes,
                movetime: movetime.map(std::time::Duration::from_millis),
                hash_mib: hash,
                multipv,
                jobs,
            },
        ),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run_perft(
    depth: u32,
    fen: Option<&str>,
    divide: bool,
    threads: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let position = parse_fen(fen.unwrap_or(START_FEN)).map_err(|e| format!("bad FEN: {e}"))?;
    let mut out = io::stdout().lock();
    if divide {
        write_divide(&mut out, &position, depth, threads)?;
    } else {
        write_perft_table(&mut out, &position, depth, threads)?;
    }
    Ok(())
}

fn run_analyze(
    file: Option<&std::path::Path>,
    settings: &AnalyzeSettings,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = io::stdout().lock();
    match file {
        Some(path) => {
            let input = std::fs::File::open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            agon::tools::analyze::run(io::BufReader::new(input), &mut out, settings)?;
        }
        None => agon::tools::analyze::run(io::stdin().lock(), &mut out, settings)?,
    }
    Ok(())
}
