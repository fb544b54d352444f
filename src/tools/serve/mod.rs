//! `agon serve`: the page of `agon gui` for many anonymous visitors at once,
//! each playing their own games against a pool of engines, every move
//! stored in SQLite before it is acknowledged, and analysing on their own
//! analysis board through the same pool.

mod http;
mod limiter;
pub mod loadtest;
mod metrics;
mod pool;
mod store;
mod view;
mod visitors;

pub use visitors::MAX_GAMES_IN_PROGRESS;

use clap::builder::RangedU64ValueParser;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often the queue positions shown are brought up to date.
const QUEUE_REFRESH: Duration = Duration::from_millis(500);
/// How often idle visitors and addresses are forgotten and old games pruned.
const HOUSEKEEPING: Duration = Duration::from_secs(60);
/// Pruning runs at start-up and then once in this many housekeeping rounds (an hour).
const PRUNE_EVERY: u32 = 60;

/// What `agon serve` was asked for: its command line.
#[derive(clap::Args, Clone, Debug)]
pub struct ServeSettings {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Port to listen on (0: a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The SQLite database of the games (created when missing).
    #[arg(long, default_value = "agon-games.sqlite")]
    pub db: PathBuf,
    /// Engine processes (default: the number of cores).
    #[arg(long, value_parser = crate::tools::threads_parser())]
    pub engines: Option<usize>,
    /// Engine searches that may wait before new moves are refused with 503.
    #[arg(long, default_value_t = 512, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub queue: usize,
    /// Requests a second allowed from one client address (bursts of twice that).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate: u32,
    /// Event streams (open pages) one client address may hold at once;
    /// past it `/api/events` answers 429.
    #[arg(long, default_value_t = 20, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub streams_per_address: usize,
    /// Visitors held in memory at most: past it the least recently active
    /// idle one is dropped (their games stay stored), or with every one
    /// busy a new visitor is refused with 503.
    #[arg(long, default_value_t = 5000, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub max_visitors: usize,
    /// Behind a TLS reverse proxy: the client address is the last
    /// X-Forwarded-For entry and the cookie is Secure.
    #[arg(long)]
    pub behind_proxy: bool,
    /// An Origin allowed on state-changing requests (repeatable; default:
    /// the origin of the request's Host).
    #[arg(long = "origin")]
    pub origins: Vec<String>,
    /// Finished games are deleted after this many days without a change.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_finished_days: u64,
    /// Unfinished games are deleted after this many days without a change
    /// (not those of visitors in memory, who may be playing them).
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_unfinished_days: u64,
}

impl ServeSettings {
    /// Engine processes to start: as asked, else one per core.
    pub fn engine_count(&self) -> usize {
        self.engines.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }
}

/// Runs the server until SIGTERM or Ctrl-C.
pub fn run(settings: &ServeSettings) -> Result<(), String> {
    let store = store::Store::open(&settings.db)?;
    log::info!(
        "database {} at schema version {}",
        settings.db.display(),
        store.schema_version()?
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server runtime: {e}"))?;
    runtime.block_on(serve(settings, store))
}

async fn serve(settings: &ServeSettings, store: store::Store) -> Result<(), String> {
    let me = std::env::current_exe()
        .map_err(|e| format!("cannot find the agon executable: {e}"))?
        .to_string_lossy()
        .into_owned();
    let (listener, origin) = crate::tools::gui::listen(settings.host, settings.port).await?;
    let metrics = Arc::new(metrics::Metrics::default());
    let registry = visitors::Registry::new(store, settings.max_visitors, Arc::clone(&metrics));
    match registry.prune(settings.keep_finished_days, settings.keep_unfinished_days) {
        Ok(pruned) => log::info!("pruned {pruned} old games"),
        Err(error) => log::warn!("cannot prune old games: {error}"),
    }
    let outcome: Arc<dyn pool::Outcome> = registry.clone();
    let engine_count = settings.engine_count();
    let engines = pool::Pool::start(
        engine_count,
        settings.queue,
        &me,
        &[],
        Arc::clone(&metrics),
        outcome,
    );
    let resumed = {
        let registry = Arc::clone(&registry);
        tokio::task::spawn_blocking(move || registry.attach(engines))
            .await
            .map_err(|e| e.to_string())??
    };
    log::info!("{resumed} engine moves to search again after the last stop");
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let limiter = Arc::new(limiter::RateLimiter::new(settings.rate));
    let app = http::router(http::App {
        registry: Arc::clone(&registry),
        metrics,
        limiter: Arc::clone(&limiter),
        streams: Arc::new(limiter::StreamLimiter::new(settings.streams_per_address)),
        behind_proxy: settings.behind_proxy,
        origins: Arc::new(settings.origins.clone()),
        stopping: stopping.clone(),
    });
    let url = format!("{}/", origin.url);
    crate::tools::gui::announce(&url)?;
    log::info!("serving at {url} with {engine_count} engines");
    let chores = tokio::spawn(housekeeping(
        Arc::clone(&registry),
        limiter,
        settings.keep_finished_days,
        settings.keep_unfinished_days,
    ));
    let server = axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(crate::tools::gui::stop_on_signal(stop));
    let outcome = crate::tools::gui::serve_until_stopped(server.into_future(), stopping).await;
    chores.abort();
    // Every acknowledged move is in the database already; what is left is ending the engines.
    tokio::task::spawn_blocking(move || {
        if let Some(pool) = registry.engines() {
            pool.shut_down();
        }
    })
    .await
    .map_err(|e| e.to_string())?;
    log::info!("stopped; every engine ended");
    outcome
}

/// Queue positions, forgetting idle visitors and addresses, pruning.
async fn housekeeping(
    registry: Arc<visitors::Registry>,
    limiter: Arc<limiter::RateLimiter>,
    keep_finished_days: u64,
    keep_unfinished_days: u64,
) {
    let mut refresh = tokio::time::interval(QUEUE_REFRESH);
    let rounds_per_chore =
        u32::try_from(HOUSEKEEPING.as_millis() / QUEUE_REFRESH.as_millis()).unwrap_or(u32::MAX);
    let mut round: u32 = 0;
    loop {
        refresh.tick().await;
        let registry = Arc::clone(&registry);
        round = round.wrapping_add(1);
        let chore = round.is_multiple_of(rounds_per_chore);
        let prune = chore && (round / rounds_per_chore).is_multiple_of(PRUNE_EVERY);
        let limiter = Arc::clone(&limiter);
        let _ = tokio::task::spawn_blocking(move || {
            registry.refresh_waiting_games();
            if chore {
                registry.forget_idle();
                limiter.forget_idle();
                log::debug!("{} visitors in memory", registry.visitors_in_memory());
            }
            if prune && let Err(error) = registry.prune(keep_finished_days, keep_unfinished_days) {
                log::warn!("cannot prune old games: {error}");
            }
        })
        .await;
    }
}
