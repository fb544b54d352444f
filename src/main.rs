//! The `agon` binary: the protocol engine by default, tools as subcommands.

use agon::protocol;
use agon::protocol::command::{MAX_PERFT_DEPTH, MIN_PERFT_DEPTH};
use agon::rules::{START_FEN, parse_fen};
use agon::tools::analyze::AnalyzeSettings;
use agon::tools::perft::{write_divide, write_perft_table};
use agon::tools::serve::ServeSettings;
use agon::tools::{hash_parser, multipv_parser, threads_parser};
use clap::builder::RangedU64ValueParser;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::{self, Write};
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
        #[arg(long, default_value_t = 1, value_parser = threads_parser())]
        threads: usize,
    },
    /// Search a fixed set of positions to a fixed depth: node count and speed.
    Bench {
        /// Depth in plies.
        #[arg(default_value_t = agon::tools::bench::DEFAULT_DEPTH,
              value_parser = clap::value_parser!(u32).range(1..=i64::from(agon::tools::bench::MAX_DEPTH)))]
        depth: u32,
        /// Search threads (the node count is repeatable with one only).
        #[arg(long, default_value_t = 1, value_parser = threads_parser())]
        threads: usize,
        /// The evaluation (default: the engine's, the network).
        #[arg(long, value_enum)]
        eval: Option<Evaluation>,
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
        /// Also write every game's record, in game order, to this new file
        /// (read from each shard's `-jsonl` records as far as its state counts them).
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
    /// Tune the search's numeric parameters by SPSA: game pairs through
    /// `agon match` between the engine set to theta plus and minus a random
    /// perturbation; the state is saved after every iteration and a run
    /// resumes from it.
    Spsa(SpsaArgs),
    /// Self-play training data: games at fixed nodes per move, appended to a
    /// file of compact records (protocol.md, "Training records"); or, with
    /// --stats, the counts of record files.
    Datagen {
        /// The record file (created, or continued when it exists); a shard
        /// writes `<stem>.shard-K-of-N.<extension>` beside it.
        #[arg(long, required_unless_present = "stats")]
        output: Option<std::path::PathBuf>,
        /// Count the positions, games and distinct positions of these record
        /// files instead of generating.
        #[arg(long, num_args = 1.., conflicts_with = "output")]
        stats: Vec<std::path::PathBuf>,
        /// Make part K of N of the job: K/N, auto (a Slurm job array) or
        /// auto/N (N shards; a Slurm task id 1..N, a Kubernetes Indexed Job
        /// or AGON_SHARD_INDEX from 0).
        #[arg(long, value_parser = parse_shard)]
        shard: Option<agon::tools::shard::Shard>,
        /// Nodes searched per move.
        #[arg(long, default_value_t = 5000)]
        nodes: u64,
        /// Games played at once, one search thread each.
        #[arg(long, default_value_t = 1, value_parser = threads_parser())]
        threads: usize,
        /// Stop when the file holds this many games (across the shards: each
        /// makes its share).
        #[arg(long)]
        games: Option<u64>,
        /// Stop when the file holds this many positions (across the shards:
        /// each makes its share).
        #[arg(long)]
        positions: Option<u64>,
        /// Stop after this many seconds.
        #[arg(long)]
        seconds: Option<u64>,
        /// Seed of the openings and of the choices among near-best moves.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Uniformly random plies from the start (this or one more; 0 to 100).
        #[arg(long, default_value_t = 6,
              value_parser = clap::value_parser!(u32).range(0..=i64::from(agon::tools::datagen::MAX_RANDOM_PLIES)))]
        random_plies: u32,
        /// Searched plies in which any move within --margin of the best may be played.
        #[arg(long, default_value_t = 10)]
        near_best_plies: u32,
        /// Centi-guards a near-best move may be behind the best (0 to 10000).
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(i32).range(0..=10_000))]
        margin: i32,
        /// Games reaching this many plies are scored drawn (more than
        /// --random-plies + 1, the longest opening).
        #[arg(long, default_value_t = 400)]
        max_plies: u32,
        /// Transposition table per game thread, MiB (1 to 65536, as the engine's `Hash`).
        #[arg(long, default_value_t = 8, value_parser = hash_parser())]
        hash: usize,
        /// The evaluation the searches use.
        #[arg(long, value_enum, default_value_t = Evaluation::Hand)]
        eval: Evaluation,
        /// A network file that plays one side instead of self-play
        /// (repeatable: each game draws one, and a colour, at random); every
        /// position is recorded with the learning side's own score.
        #[arg(long = "opponent", value_name = "FILE")]
        opponents: Vec<std::path::PathBuf>,
        /// Nodes the opponent network searches per move (default: --nodes);
        /// a deeper opponent plays the plans the learning side's own search
        /// is too shallow to see through.
        #[arg(long, requires = "opponents", value_parser = clap::value_parser!(u64).range(1..))]
        opponent_nodes: Option<u64>,
    },
    /// Train a network on `agon datagen` record files; writes the network file.
    Train {
        /// Record files.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// The network file written (after every epoch, whole), with its
        /// checkpoint `<output>.checkpoint` beside it.
        #[arg(long)]
        output: std::path::PathBuf,
        /// Continue from the checkpoint beside --output (the same records and
        /// settings; --epochs may be raised).
        #[arg(long)]
        resume: bool,
        /// Allow --output to be the network built into agon (nets/agon.nnue).
        #[arg(long)]
        replace_embedded: bool,
        /// Start from this network file's weights instead of random ones (a
        /// new generation refining the last; --lr is then best lowered).
        #[arg(long, conflicts_with = "resume")]
        init: Option<std::path::PathBuf>,
        /// Passes over the training positions (at least 1).
        #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        epochs: usize,
        /// Positions per gradient step (at least 1).
        #[arg(long, default_value_t = 16384, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        batch: usize,
        /// Adam's step size in the first epoch (above 0).
        #[arg(long, default_value_t = 0.001, allow_negative_numbers = true,
              value_parser = finite_parser::<f32>("above 0", |rate| rate > 0.0))]
        lr: f32,
        /// Factor applied to the step size after each epoch (above 0, at most 1).
        #[arg(long, default_value_t = 0.8, allow_negative_numbers = true,
              value_parser = finite_parser::<f32>("above 0 and at most 1", |decay| decay > 0.0 && decay <= 1.0))]
        lr_decay: f32,
        /// Weight of the game results in the targets (the rest: search
        /// scores; 0 to 1).
        #[arg(long, default_value_t = 0.3, allow_negative_numbers = true, value_parser = weight_parser())]
        result_weight: f32,
        /// Weight of the game results in the targets of throne races against
        /// the side to move (the positions `datagen --stats` counts), whose
        /// search scores may misjudge the race (default: --result-weight).
        #[arg(long, allow_negative_numbers = true, value_parser = weight_parser())]
        throne_race_result_weight: Option<f32>,
        /// Share of the positions held out for the validation loss (at
        /// least 0, below 1).
        #[arg(long, default_value_t = 0.02, allow_negative_numbers = true,
              value_parser = finite_parser::<f64>("at least 0 and below 1", |share| (0.0..1.0).contains(&share)))]
        validation: f64,
        /// Seed of the initial weights, the split and the order.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Threads sharing each batch.
        #[arg(long, default_value_t = 2, value_parser = threads_parser())]
        threads: usize,
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
    /// Serve the GUI's page to many anonymous visitors at once, each playing
    /// their own games against a pool of engines, stored in SQLite; the first
    /// output line is the URL.
    Serve(ServeSettings),
    /// Simulated visitors playing whole games against an `agon serve` at URL
    /// through the page's HTTP API; prints requests, games, errors and latencies.
    Loadtest {
        /// The server's URL, as `agon serve` printed it.
        url: String,
        /// Visitors playing at once.
        #[arg(long, default_value_t = 20, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
        visitors: usize,
        /// Visitors analysing at once besides (free moves on the analysis
        /// board, three engine lines, the next move when they have come).
        #[arg(long, default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=100_000))]
        analysts: usize,
        /// Seconds to run.
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
        duration: u64,
        /// The engine's level (0: weakest, 4: full strength).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=4))]
        level: u64,
        /// Seed of the visitors' random moves.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Appends a JSON line for every acknowledged change of a game (visitor, game, moves).
        #[arg(long)]
        journal: Option<std::path::PathBuf>,
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
        #[arg(long, default_value_t = 16, value_parser = hash_parser())]
        hash: usize,
        /// Lines reported per position (1 to 256, as the engine's `MultiPV`).
        #[arg(long, default_value_t = 1, value_parser = multipv_parser())]
        multipv: usize,
        /// Worker threads.
        #[arg(long, default_value_t = 2, value_parser = threads_parser())]
        jobs: usize,
        /// Evaluate with this network file instead of the embedded one (as the engine's `EvalFile`).
        #[arg(long, value_name = "FILE")]
        eval_file: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let outcome: Result<(), Box<dyn std::error::Error>> = match cli.command {
        Some(Command::Perft {
            depth,
            fen,
            divide,
            threads,
        }) => run_perft(depth, fen.as_deref(), divide, threads),
        Some(Command::Bench {
            depth,
            threads,
            eval,
        }) => agon::tools::bench::run_bench(
            &mut io::stdout().lock(),
            depth,
            threads,
            eval.map(Evaluation::uses_network),
        )
        .map_err(Into::into),
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
        Some(Command::Datagen { output, stats, .. }) if output.is_none() => {
            run_datagen_stats(&stats)
        }
        Some(Command::Spsa(args)) => run_spsa(args, matches.subcommand_matches("spsa")),
        Some(Command::Datagen {
            output,
            stats: _,
            shard,
            nodes,
            threads,
            games,
            positions,
            seconds,
            seed,
            random_plies,
            near_best_plies,
            margin,
            max_plies,
            hash,
            eval,
            opponents,
            opponent_nodes,
        }) => load_networks(&opponents).and_then(|opponents| {
            run_datagen(
                &output.unwrap_or_default(),
                &agon::tools::datagen::DatagenSettings {
                    nodes,
                    threads,
                    games,
                    positions,
                    time: seconds.map(std::time::Duration::from_secs),
                    shard: shard.unwrap_or_default(),
                    seed,
                    random_plies,
                    near_best_plies,
                    near_best_margin: margin,
                    max_plies,
                    hash_mib: hash,
                    use_network: eval.uses_network(),
                    opponents,
                    opponent_nodes: opponent_nodes.unwrap_or(nodes),
                },
            )
            .map_err(Into::into)
        }),
        Some(Command::Train {
            files,
            output,
            resume,
            replace_embedded,
            init,
            epochs,
            batch,
            lr,
            lr_decay,
            result_weight,
            throne_race_result_weight,
            validation,
            seed,
            threads,
        }) => agon::tools::train::run(
            &files,
            &agon::tools::train::TrainSettings {
                epochs,
                batch_size: batch,
                learning_rate: lr,
                learning_rate_decay: lr_decay,
                result_weight,
                throne_race_result_weight,
                validation_share: validation,
                seed,
                threads,
                output,
                resume,
                init,
                replace_embedded,
            },
            &mut io::stdout().lock(),
        )
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
        Some(Command::Serve(settings)) => agon::tools::serve::run(&settings).map_err(Into::into),
        Some(Command::Loadtest {
            url,
            visitors,
            analysts,
            duration,
            level,
            seed,
            journal,
        }) => agon::tools::serve::loadtest::run(&agon::tools::serve::loadtest::LoadSettings {
            url,
            visitors,
            analysts,
            duration: std::time::Duration::from_secs(duration),
            level: usize::try_from(level).unwrap_or(0),
            seed,
            journal,
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
            eval_file,
        }) => load_networks(eval_file.as_slice()).and_then(|networks| {
            run_analyze(
                file.as_deref(),
                &AnalyzeSettings {
                    depth,
                    nodes,
                    movetime: movetime.map(std::time::Duration::from_millis),
                    hash_mib: hash,
                    multipv,
                    jobs,
                    network: networks.first().copied(),
                },
            )
        }),
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

/// The evaluation a search uses.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Evaluation {
    /// The learned network.
    Network,
    /// The hand-written terms.
    Hand,
}

impl Evaluation {
    fn uses_network(self) -> bool {
        matches!(self, Evaluation::Network)
    }
}

/// Command-line parser of a number that is finite (not NaN or infinite)
/// and `fits`; `range` says which numbers fit, in the refusal.
fn finite_parser<T>(
    range: &'static str,
    fits: fn(T) -> bool,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + Into<f64> + Copy + Send + Sync + 'static,
{
    move |text| {
        let value: T = text
            .parse()
            .map_err(|_| format!("'{text}' is not a number"))?;
        if value.into().is_finite() && fits(value) {
            Ok(value)
        } else {
            Err(format!("{text} is not {range}"))
        }
    }
}

/// Command-line parser of a weight of the game results in the targets.
fn weight_parser() -> impl Fn(&str) -> Result<f32, String> + Clone + Send + Sync + 'static {
    finite_parser("within 0 and 1", |weight| (0.0..=1.0).contains(&weight))
}

fn parse_shard(text: &str) -> Result<agon::tools::shard::Shard, String> {
    agon::tools::shard::Shard::parse(text).map_err(|e| e.to_string())
}

/// The arguments of `agon spsa`.
#[derive(clap::Args)]
struct SpsaArgs {
    /// The run's state (created, or continued when it exists: a setting
    /// given then must be the run's own, but for --concurrency).
    #[arg(long)]
    state: std::path::PathBuf,
    /// The engine program (default: this one).
    #[arg(long)]
    engine: Option<std::path::PathBuf>,
    /// Parameters to tune, by name, comma-separated (default: all but
    /// those of parts switched off by default; a named one of those is
    /// tuned with its part switched on; protocol.md lists them under
    /// "Developer options").
    #[arg(long, value_delimiter = ',')]
    params: Vec<String>,
    /// Iterations of the run.
    #[arg(long, default_value_t = 200)]
    iterations: u64,
    /// Game pairs per iteration.
    #[arg(long, default_value_t = 4)]
    pairs: u64,
    /// Limits of both sides, as `agon match` engine keys separated by
    /// spaces (a key may hold spaces: `option.Search Progress=true`).
    #[arg(long, default_value = "tc=1+0.01")]
    limit: String,
    /// Games at once.
    #[arg(long, default_value_t = 1, value_parser = threads_parser())]
    concurrency: usize,
    /// Seed of the perturbations and openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Every parameter's learning rate times this (the declared rates suit
    /// runs of tens of thousands of games; a shorter run needs more).
    #[arg(long, default_value_t = 1.0)]
    rate_factor: f64,
    /// Stop after this many more iterations (resume later).
    #[arg(long)]
    max_iterations: Option<u64>,
}

/// `agon spsa`: the engine defaults to this program.
fn run_spsa(
    args: SpsaArgs,
    matches: Option<&clap::ArgMatches>,
) -> Result<(), Box<dyn std::error::Error>> {
    // The settings named on the command line, by their argument ids.
    let given: Vec<&str> = matches.map_or_else(Vec::new, |matches| {
        matches
            .ids()
            .map(clap::Id::as_str)
            .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
            .collect()
    });
    let engine = match args.engine {
        Some(path) => path,
        None => std::env::current_exe()?,
    };
    let settings = agon::tools::spsa::SpsaSettings {
        engine,
        params: args.params,
        iterations: args.iterations,
        pairs: args.pairs,
        limit: args.limit,
        concurrency: args.concurrency,
        seed: args.seed,
        rate_factor: args.rate_factor,
    };
    let stop = stop_on_signal("the running match");
    agon::tools::spsa::run(
        &args.state,
        settings,
        &given,
        args.max_iterations,
        &stop,
        &mut io::stdout().lock(),
    )
}

/// A flag that Ctrl-C and SIGTERM set, for a tool that ends `what` cleanly on it.
fn stop_on_signal(what: &str) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stop);
    if let Err(e) =
        ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::SeqCst))
    {
        log::warn!("Ctrl-C and SIGTERM will not end {what} cleanly: {e}");
    }
    stop
}

/// Runs `agon datagen`; Ctrl-C or SIGTERM stops it at once, dropping the
/// games in progress, and it exits with status 1.
fn run_datagen(
    output: &std::path::Path,
    settings: &agon::tools::datagen::DatagenSettings,
) -> Result<(), agon::tools::datagen::DatagenError> {
    let stop = stop_on_signal("datagen");
    agon::tools::datagen::run(
        output,
        settings,
        &stop,
        &mut io::stderr(),
        std::time::Duration::from_secs(10),
    )
}

/// Network files named on the command line (`agon datagen --opponent`,
/// `agon analyze --eval-file`), loaded for the whole run.
fn load_networks(
    files: &[std::path::PathBuf],
) -> Result<Vec<agon::search::nnue::NetworkRef>, Box<dyn std::error::Error>> {
    files
        .iter()
        .map(|file| {
            let network = agon::search::nnue::Network::load(file)?;
            Ok(agon::search::nnue::NetworkRef(Box::leak(Box::new(network))))
        })
        .collect()
}

/// `agon datagen --stats`: one line per file, then the files together.
fn run_datagen_stats(files: &[std::path::PathBuf]) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = io::stdout().lock();
    let mut failed = None;
    let total = agon::tools::datagen::record_stats(files, |path, own| {
        if let Err(e) = writeln!(
            out,
            "{}: positions {} games {}",
            path.display(),
            own.positions,
            own.games
        )
        .and_then(|()| out.flush())
        {
            failed.get_or_insert(e);
        }
    })?;
    if let Some(error) = failed {
        return Err(error.into());
    }
    writeln!(out, "{} files: {total}", files.len())?;
    out.flush()?;
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
