//! `agon gui`: a local web server with the page that plays, watches and
//! analyses Agon games in the browser, the engines driven through the protocol.

pub mod driver;
mod lessons;
pub mod pgn;
pub mod problem;
pub(crate) mod server;
pub mod session;

use session::{EngineChoice, Session, lock};
use std::future::Future;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// How long a stopping server waits for open requests before it ends them.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What `agon gui` was asked for.
pub struct GuiSettings {
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
    /// Address to listen on (127.0.0.1 unless exposed deliberately).
    pub host: IpAddr,
    /// Do not start the system browser.
    pub no_open: bool,
    /// Further engine commands, each a program and its arguments.
    pub engines: Vec<String>,
}

/// The engines the page offers: agon itself, `agon random`, then `--engine` ones.
fn engine_choices(extra: &[String]) -> Result<Vec<EngineChoice>, String> {
    let me = std::env::current_exe()
        .map_err(|e| format!("cannot find the agon executable: {e}"))?
        .to_string_lossy()
        .into_owned();
    let mut choices = vec![
        EngineChoice {
            label: "agon".into(),
            cmd: me.clone(),
            args: Vec::new(),
        },
        EngineChoice {
            label: "agon random".into(),
            cmd: me,
            args: vec!["random".into()],
        },
    ];
    for command in extra {
        let mut words = command.split_whitespace().map(str::to_string);
        let Some(cmd) = words.next() else {
            return Err("--engine needs a command".into());
        };
        choices.push(EngineChoice {
            label: command.trim().to_string(),
            cmd,
            args: words.collect(),
        });
    }
    Ok(choices)
}

/// A token no other local program can guess.
fn new_token() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..4)
        .map(|_| format!("{:08x}", rng.random::<u32>()))
        .collect()
}

/// Runs the GUI server until Ctrl-C or SIGTERM.
pub fn run(settings: &GuiSettings) -> Result<(), String> {
    let choices = engine_choices(&settings.engines)?;
    // The first `--engine` is the default opponent; agon itself otherwise.
    let default_engine = if settings.engines.is_empty() { 0 } else { 2 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server runtime: {e}"))?;
    runtime.block_on(serve(settings, choices, default_engine))
}

async fn serve(
    settings: &GuiSettings,
    choices: Vec<EngineChoice>,
    default_engine: usize,
) -> Result<(), String> {
    if !settings.host.is_loopback() {
        log::warn!(
            "listening on {}: anyone who can reach this address and learns the URL can use the engines",
            settings.host
        );
    }
    let (listener, origin) = listen(settings.host, settings.port).await?;
    let (events, _) = broadcast::channel::<(String, String)>(256);
    let publisher = events.clone();
    let session = Session::new(choices, default_engine, move |event, data| {
        let _ = publisher.send((event.to_string(), data));
    });
    let token = new_token();
    let url = format!("{}/?token={token}", origin.url);
    announce(&url)?;
    log::info!("serving the GUI at {url}");
    if !settings.no_open {
        open_browser(&url);
    }
    let ticker = tokio::spawn(tick(Arc::clone(&session)));
    let (stop, stopping) = watch::channel(false);
    let app = server::router(server::Shared {
        session: Arc::clone(&session),
        events,
        token,
        hosts: server::Hosts::new(settings.host, origin.port),
        stopping: stopping.clone(),
    });
    let server = axum::serve(listener, app).with_graceful_shutdown(stop_on_signal(stop));
    let outcome = serve_until_stopped(server.into_future(), stopping).await;
    ticker.abort();
    let engines = lock(&session).take_engines();
    tokio::task::spawn_blocking(move || {
        for engine in engines {
            engine.finish();
        }
    })
    .await
    .map_err(|e| e.to_string())?;
    log::info!("stopped; every engine ended");
    outcome
}

/// Where a server listens: the port it got, and `http://address:port` for its URL.
pub(crate) struct Origin {
    /// The port bound (a free one when 0 was asked for).
    pub port: u16,
    /// The URL's scheme, address and port, without a path.
    pub url: String,
}

/// Listens on `host:port`.
pub(crate) async fn listen(
    host: IpAddr,
    port: u16,
) -> Result<(tokio::net::TcpListener, Origin), String> {
    let address = SocketAddr::new(host, port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?
        .port();
    let url = format!(
        "http://{}:{port}",
        server::address_text(reachable_address(host))
    );
    Ok((listener, Origin { port, url }))
}

/// Prints the URL as the first line on stdout.
pub(crate) fn announce(url: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{url}")
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

/// The address to print for a server listening on `host`: itself, or for
/// every interface the one other machines reach it by (the interface of the
/// default route: connecting a UDP socket sends nothing), else loopback.
fn reachable_address(host: IpAddr) -> IpAddr {
    if !host.is_unspecified() {
        return host;
    }
    let outward = std::net::UdpSocket::bind((host, 0))
        .and_then(|socket| {
            let probe: IpAddr = if host.is_ipv4() {
                IpAddr::from([192, 0, 2, 1])
            } else {
                IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1])
            };
            socket.connect((probe, 9))?;
            socket.local_addr()
        })
        .map(|address| address.ip());
    match outward {
        Ok(address) if !address.is_unspecified() => address,
        _ if host.is_ipv4() => IpAddr::from([127, 0, 0, 1]),
        _ => IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
    }
}

/// Flushes throttled analysis and watches the clocks.
async fn tick(session: Arc<std::sync::Mutex<Session>>) {
    let mut interval = tokio::time::interval(session::ANALYSIS_INTERVAL);
    loop {
        interval.tick().await;
        let mut session = lock(&session);
        session.flush_analysis();
        session.check_clocks();
    }
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    log::info!("signal received, shutting down");
}

/// Waits for Ctrl-C or SIGTERM, then turns `stop` true: that begins a
/// graceful shutdown and ends the pages' event streams, which never end on
/// their own.
pub(crate) async fn stop_on_signal(stop: watch::Sender<bool>) {
    shutdown_signal().await;
    let _ = stop.send(true);
}

/// Runs a server until it has shut down, or until [`SHUTDOWN_GRACE`] after
/// `stopping` turned true with requests still open.
pub(crate) async fn serve_until_stopped(
    server: impl Future<Output = std::io::Result<()>>,
    mut stopping: watch::Receiver<bool>,
) -> Result<(), String> {
    tokio::select! {
        outcome = server => outcome.map_err(|e| format!("server failed: {e}")),
        () = async {
            let _ = stopping.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            log::warn!("requests still open after {} s: ended", SHUTDOWN_GRACE.as_secs());
            Ok(())
        }
    }
}

/// Starts the system browser on `url`; failing to is only worth a warning.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => log::warn!("cannot start a browser ({opener}: {e}); open {url} yourself"),
    }
}
