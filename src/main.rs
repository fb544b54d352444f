//! The `agon` binary: the protocol engine by default, tools as subcommands.

use agon::protocol;
use agon::rules::{START_FEN, parse_fen};
use agon::tools::analyze::AnalyzeSettings;
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
    /// Search a fixed set of positions to a fixed depth: node count and speed.
    Bench {
        /// Depth in plies.
        #[arg(default_value_t = agon::tools::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Search threads (the node count is repeatable with one only).
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
        #[arg(long)]
        depth: Option<u32>,
        /// Node limit.
        #[arg(long)]
        nodes: Option<u64>,
        /// Time per position in milliseconds.
        #[arg(long)]
        movetime: Option<u64>,
        /// Transposition table per worker, MiB.
        #[arg(long, default_value_t = 16)]
        hash: usize,
        /// Lines reported per position.
        #[arg(long, default_value_t = 1)]
        multipv: usize,
        /// Worker threads.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
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
        Some(Command::Bench { threads: 0, .. }) => Err("--threads must be at least 1".into()),
        Some(Command::Bench { depth, threads }) => {
            agon::tools::bench::run_bench(&mut io::stdout().lock(), depth, threads)
                .map_err(|e| e.to_string())
        }
        None | Some(Command::Uci) => protocol::run_engine().map_err(|e| e.to_string()),
        Some(Command::Random { seed }) => protocol::run_random(seed).map_err(|e| e.to_string()),
        Some(Command::Match { args }) => agon::tools::match_runner::run(&args),
        Some(Command::Tune {
            files,
            result_weight,
        }) => agon::tools::tune::run(&files, result_weight, &mut io::stdout().lock()),
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
        }),
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

fn run_analyze(file: Option<&std::path::Path>, settings: &AnalyzeSettings) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match file {
        Some(path) => {
            let input = std::fs::File::open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            agon::tools::analyze::run(io::BufReader::new(input), &mut out, settings)
        }
        None => agon::tools::analyze::run(io::stdin().lock(), &mut out, settings),
    }
}
