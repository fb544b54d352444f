//! `agon loadtest`: simulated visitors, each with its own cookie, playing
//! whole games of random legal moves against an `agon serve` over the HTTP
//! API the page uses (commands by POST, states by Server-Sent Events), and
//! analysts making free moves on the analysis board, each waiting for the
//! engine lines; and the table of what it measured.

use axum::body::Bytes;
use axum::http::{Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a visitor waits for the engine's reply before counting an error.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// Past the run's end, visitors still waiting are given this long.
const WIND_DOWN: Duration = Duration::from_secs(30);

/// What `agon loadtest` was asked for.
pub struct LoadSettings {
    /// The server's URL.
    pub url: String,
    /// Visitors playing at once.
    pub visitors: usize,
    /// Visitors analysing at once, besides.
    pub analysts: usize,
    /// How long to run.
    pub duration: Duration,
    /// The engine's level.
    pub level: usize,
    /// Seed of the random moves.
    pub seed: u64,
    /// Where to append a line for each acknowledged change of a game.
    pub journal: Option<PathBuf>,
}

type HttpClient = Client<HttpConnector, Full<Bytes>>;

#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    moves: AtomicU64,
    replies: AtomicU64,
    games: AtomicU64,
    errors: AtomicU64,
    busy: AtomicU64,
    analyses: AtomicU64,
    latencies: Mutex<Vec<Duration>>,
    waits: Mutex<Vec<Duration>>,
    analysis_latencies: Mutex<Vec<Duration>>,
}

impl Tally {
    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn sample(samples: &Mutex<Vec<Duration>>, value: Duration) {
        samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(value);
    }
}

struct Run {
    client: HttpClient,
    base: String,
    origin: String,
    level: usize,
    deadline: Instant,
    tally: Tally,
    journal: Option<Mutex<std::fs::File>>,
}

/// Runs the visitors and prints the table.
pub fn run(settings: &LoadSettings) -> Result<(), String> {
    let uri: Uri = settings
        .url
        .parse()
        .map_err(|e| format!("bad URL {}: {e}", settings.url))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!(
            "bad URL {}: expected http://host:port/",
            settings.url
        ));
    };
    if scheme != "http" {
        return Err("only http:// URLs (run it against the server, not the proxy)".into());
    }
    let journal = match &settings.journal {
        Some(path) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?,
        )),
        None => None,
    };
    let origin = format!("{scheme}://{authority}");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let started = Instant::now();
    let run = Arc::new(Run {
        client: Client::builder(TokioExecutor::new()).build_http(),
        base: origin.clone(),
        origin,
        level: settings.level,
        deadline: started + settings.duration,
        tally: Tally::default(),
        journal,
    });
    runtime.block_on(async {
        let mut tasks = Vec::with_capacity(settings.visitors + settings.analysts);
        for index in 0..settings.visitors + settings.analysts {
            let seed = settings
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add(index as u64);
            tasks.push(if index < settings.visitors {
                tokio::spawn(visitor(Arc::clone(&run), seed))
            } else {
                tokio::spawn(analyst(Arc::clone(&run), seed))
            });
        }
        let progress = tokio::spawn(progress(Arc::clone(&run), started));
        let all = async {
            for task in tasks {
                let _ = task.await;
            }
        };
        let limit = settings.duration + REPLY_TIMEOUT + WIND_DOWN;
        if tokio::time::timeout(limit, all).await.is_err() {
            run.tally.errors.fetch_add(1, Ordering::Relaxed);
        }
        progress.abort();
    });
    eprintln!();
    let elapsed = started.elapsed();
    print_table(&run.tally, settings, elapsed).map_err(|e| e.to_string())
}

async fn progress(run: Arc<Run>, started: Instant) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let t = &run.tally;
        eprint!(
            "\r{:>4} s  requests {}  moves {}  replies {}  games {}  errors {}  503 {}   ",
            started.elapsed().as_secs(),
            t.requests.load(Ordering::Relaxed),
            t.moves.load(Ordering::Relaxed),
            t.replies.load(Ordering::Relaxed),
            t.games.load(Ordering::Relaxed),
            t.errors.load(Ordering::Relaxed),
            t.busy.load(Ordering::Relaxed),
        );
    }
}

fn percentile(sorted: &[Duration], share: f64) -> String {
    if sorted.is_empty() {
        return "-".into();
    }
    let rank = ((sorted.len() as f64 * share).ceil() as usize).clamp(1, sorted.len());
    format!("{:.1}", sorted[rank - 1].as_secs_f64() * 1000.0)
}

fn print_table(tally: &Tally, settings: &LoadSettings, elapsed: Duration) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let seconds = elapsed.as_secs_f64();
    writeln!(
        out,
        "visitors {}  analysts {}  level {}  {:.0} s",
        settings.visitors, settings.analysts, settings.level, seconds
    )?;
    let count = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let rows = [
        ("requests", count(&tally.requests)),
        ("moves acknowledged", count(&tally.moves)),
        ("engine replies", count(&tally.replies)),
        ("games finished", count(&tally.games)),
        ("errors", count(&tally.errors)),
        ("refused 503 (queue full)", count(&tally.busy)),
        ("analyses", count(&tally.analyses)),
    ];
    for (name, value) in rows {
        writeln!(out, "{name:<26}{value:>10}")?;
    }
    writeln!(
        out,
        "{:<26}{:>10.1}",
        "engine replies per second",
        count(&tally.replies) as f64 / seconds.max(1e-9)
    )?;
    writeln!(out, "{:<26}{:>10}{:>10}{:>10}", "ms", "p50", "p95", "p99")?;
    for (name, samples) in [
        ("move to reply", &tally.latencies),
        ("queue wait", &tally.waits),
        ("analysis move to lines", &tally.analysis_latencies),
    ] {
        let mut sorted = samples
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        sorted.sort();
        writeln!(
            out,
            "{name:<26}{:>10}{:>10}{:>10}",
            percentile(&sorted, 0.50),
            percentile(&sorted, 0.95),
            percentile(&sorted, 0.99)
        )?;
    }
    out.flush()
}

/// An answer: status, the `Set-Cookie` and `Retry-After` values, the body.
struct Answer {
    status: StatusCode,
    cookie: Option<String>,
    retry_after: Option<u64>,
    body: Bytes,
}

impl Run {
    async fn request(
        &self,
        method: Method,
        path: &str,
        cookie: &str,
        body: Option<Value>,
    ) -> Result<Answer, String> {
        self.tally.requests.fetch_add(1, Ordering::Relaxed);
        let mut builder = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if !cookie.is_empty() {
            builder = builder.header(header::COOKIE, cookie);
        }
        let content = match body {
            Some(body) => {
                builder = builder
                    .header(header::ORIGIN, &self.origin)
                    .header(header::CONTENT_TYPE, "application/json");
                Bytes::from(body.to_string())
            }
            None => Bytes::new(),
        };
        let request = builder
            .body(Full::new(content))
            .map_err(|e| e.to_string())?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let header_text = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let cookie =
            header_text(header::SET_COOKIE).and_then(|c| c.split(';').next().map(str::to_string));
        let retry_after = header_text(header::RETRY_AFTER).and_then(|r| r.parse().ok());
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Answer {
            status,
            cookie,
            retry_after,
            body,
        })
    }

    /// Sends a command, waiting out 503s; the id of the game it left current
    /// when acknowledged.
    async fn command(&self, cookie: &str, command: Value) -> Option<Value> {
        loop {
            match self
                .request(Method::POST, "/api/command", cookie, Some(command.clone()))
                .await
            {
                Ok(answer) if answer.status.is_success() => {
                    let reply: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
                    return Some(reply["game"].clone());
                }
                Ok(answer) if answer.status == StatusCode::SERVICE_UNAVAILABLE => {
                    self.tally.busy.fetch_add(1, Ordering::Relaxed);
                    let wait = Duration::from_secs(answer.retry_after.unwrap_or(1));
                    if Instant::now() + wait > self.deadline {
                        return None;
                    }
                    tokio::time::sleep(wait).await;
                }
                Ok(answer) => {
                    log::warn!(
                        "{command} refused: {} {}",
                        answer.status,
                        String::from_utf8_lossy(&answer.body)
                    );
                    self.tally.errors.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
                Err(error) => {
                    log::warn!("{command} failed: {error}");
                    self.tally.errors.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
            }
        }
    }

    fn record(&self, cookie: &str, state: &Value, moves: &[String]) {
        if let Some(journal) = &self.journal {
            let line = json!({ "visitor": cookie, "game": state["game"], "moves": moves });
            let mut file = journal
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let _ = writeln!(file, "{line}");
        }
    }
}

/// Reads the visitor's event stream into `states`, until it closes.
async fn follow(run: Arc<Run>, cookie: String, states: watch::Sender<Option<Value>>) {
    let request = Request::builder()
        .uri(format!("{}/api/events", run.base))
        .header(header::COOKIE, &cookie)
        .body(Full::new(Bytes::new()));
    let Ok(request) = request else { return };
    run.tally.requests.fetch_add(1, Ordering::Relaxed);
    let mut body = match run.client.request(request).await {
        Ok(response) if response.status().is_success() => response.into_body(),
        _ => {
            run.tally.errors.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    let mut buffer = String::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buffer.push_str(&String::from_utf8_lossy(&data));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if event.lines().any(|l| l.trim() == "event: state")
                && let Ok(state) = serde_json::from_str::<Value>(&data.join("\n"))
            {
                states.send_replace(Some(state));
            }
        }
    }
}

/// Waits for a state that `ready` accepts; `None` on timeout or a closed stream.
async fn wait_for(
    states: &mut watch::Receiver<Option<Value>>,
    mut ready: impl FnMut(&Value) -> bool,
) -> Option<Value> {
    let waited = tokio::time::timeout(
        REPLY_TIMEOUT,
        states.wait_for(|state| state.as_ref().is_some_and(&mut ready)),
    )
    .await;
    match waited {
        Ok(Ok(state)) => state.clone(),
        _ => None,
    }
}

fn moves_of(state: &Value) -> Vec<String> {
    state["moves"]
        .as_array()
        .map(|moves| {
            moves
                .iter()
                .filter_map(|m| m["mv"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn my_turn(state: &Value) -> bool {
    state["legal"].as_array().is_some_and(|l| !l.is_empty())
}

/// A new visitor: the cookie of the page's first load and the states of
/// its event stream (read by the task returned).
async fn arrive(
    run: &Arc<Run>,
) -> Option<(
    String,
    watch::Receiver<Option<Value>>,
    tokio::task::JoinHandle<()>,
)> {
    let Ok(Answer {
        cookie: Some(cookie),
        ..
    }) = run.request(Method::GET, "/", "", None).await
    else {
        Tally::count(&run.tally.errors);
        return None;
    };
    let (sender, states) = watch::channel(None);
    let reader = tokio::spawn(follow(Arc::clone(run), cookie.clone(), sender));
    Some((cookie, states, reader))
}

fn legal_of(state: &Value) -> Vec<String> {
    state["legal"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(|m| m.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One simulated analyst: on the analysis board with three engine lines, a
/// random free move each time the lines of the position shown have come
/// (a board set up afresh after 40 plies), until the run ends.
async fn analyst(run: Arc<Run>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let Some((cookie, mut states, reader)) = arrive(&run).await else {
        return;
    };
    for command in [
        json!({ "cmd": "analyse" }),
        json!({ "cmd": "multipv", "lines": 3 }),
        json!({ "cmd": "analysis", "on": true }),
    ] {
        if run.command(&cookie, command).await.is_none() {
            reader.abort();
            return;
        }
    }
    let mut shown = String::new();
    while Instant::now() < run.deadline {
        let Some(state) = wait_for(&mut states, |s| {
            s["mode"] == "analysis" && s["thinking"].is_null() && s["fen"] != shown.as_str()
        })
        .await
        else {
            Tally::count(&run.tally.errors);
            break;
        };
        shown = state["fen"].as_str().unwrap_or_default().to_string();
        let legal = legal_of(&state);
        let command = if legal.is_empty() || moves_of(&state).len() >= 40 {
            json!({ "cmd": "analyse", "fen": state["start_fen"] })
        } else {
            json!({ "cmd": "move", "mv": legal[rng.random_range(0..legal.len())] })
        };
        let sent = Instant::now();
        if run.command(&cookie, command).await.is_none() {
            break;
        }
        let before = shown.clone();
        if wait_for(&mut states, |s| {
            s["fen"] != before.as_str() && s["thinking"].is_null()
        })
        .await
        .is_some()
        {
            Tally::count(&run.tally.analyses);
            Tally::sample(&run.tally.analysis_latencies, sent.elapsed());
        }
        shown = before;
    }
    reader.abort();
}

/// One simulated visitor: games one after the other until the run ends.
async fn visitor(run: Arc<Run>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let Some((cookie, mut states, reader)) = arrive(&run).await else {
        return;
    };
    while Instant::now() < run.deadline {
        let new_game = json!({ "cmd": "new_game", "level": run.level, "human": "white" });
        let Some(game) = run.command(&cookie, new_game).await else {
            break;
        };
        if !play_game(&run, &cookie, &game, &mut states, &mut rng).await {
            break;
        }
    }
    reader.abort();
}

/// Plays one game; `false` when the visitor should stop (the run ended or failed).
async fn play_game(
    run: &Run,
    cookie: &str,
    game: &Value,
    states: &mut watch::Receiver<Option<Value>>,
    rng: &mut StdRng,
) -> bool {
    let Some(mut state) = wait_for(states, |s| s["game"] == *game && my_turn(s)).await else {
        run.tally.errors.fetch_add(1, Ordering::Relaxed);
        return false;
    };
    loop {
        if !state["result"].is_null() {
            run.tally.games.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        if Instant::now() >= run.deadline {
            return false;
        }
        let legal = legal_of(&state);
        if legal.is_empty() {
            run.tally.errors.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let mv = legal[rng.random_range(0..legal.len())].clone();
        let sent = Instant::now();
        if run
            .command(cookie, json!({ "cmd": "move", "mv": mv, "game": game }))
            .await
            .is_none()
        {
            return false;
        }
        run.tally.moves.fetch_add(1, Ordering::Relaxed);
        let mut moves = moves_of(&state);
        moves.push(mv);
        run.record(cookie, &state, &moves);
        let acknowledged = moves.len();
        let mut taken: Option<Instant> = None;
        let Some(next) = wait_for(states, |s| {
            let same = s["game"] == *game;
            if same && taken.is_none() && !s["thinking"].is_null() && s["queue"].is_null() {
                taken = Some(Instant::now());
            }
            same && (moves_of(s).len() > acknowledged || !s["result"].is_null())
        })
        .await
        else {
            run.tally.errors.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        state = next;
        let replied = moves_of(&state);
        if replied.len() > acknowledged {
            let now = Instant::now();
            Tally::count(&run.tally.replies);
            Tally::sample(&run.tally.latencies, now - sent);
            // A reply faster than the states it came with: its wait is bounded by the reply.
            Tally::sample(&run.tally.waits, taken.unwrap_or(now) - sent);
            run.record(cookie, &state, &replied);
        }
    }
}
