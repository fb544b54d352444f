//! The HTTP side of the GUI: the embedded page, a JSON API for commands and
//! Server-Sent Events for state and analysis, all behind a per-run token and
//! a Host check (so that another web page cannot drive the engines).

use super::problem::{Code, Problem, failed, refuse, unreadable};
use super::session::{Command, Session, geometry, lock};
use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

const INDEX_HTML: &str = include_str!("web/index.html");
const APP_JS: &str = include_str!("web/app.js");
const APP_CSS: &str = include_str!("web/app.css");
const I18N_JS: &str = include_str!("web/i18n.js");
const BOARD_JS: &str = include_str!("web/board.js");
const RULES_JS: &str = include_str!("web/rules.js");
const LESSONS_JS: &str = include_str!("web/lessons.js");
const WELCOME_JS: &str = include_str!("web/welcome.js");
const LEARN_CSS: &str = include_str!("web/learn.css");

/// The page's string tables, one file a language; the page learns the
/// languages it speaks from this list alone (served joined as `/lang.js`).
pub(super) const LANGUAGE_TABLES: &[&str] = &[
    include_str!("web/lang/en.js"),
    include_str!("web/lang/es.js"),
    include_str!("web/lang/hu.js"),
    include_str!("web/lang/vi.js"),
    include_str!("web/lang/ja.js"),
    include_str!("web/lang/ko.js"),
];

/// The static files anyone may fetch: they hold no state and no token.
const PUBLIC_ASSETS: &[&str] = &[
    "/app.js",
    "/app.css",
    "/i18n.js",
    "/lang.js",
    "/board.js",
    "/rules.js",
    "/lessons.js",
    "/welcome.js",
    "/learn.css",
];

/// What every request handler shares.
#[derive(Clone)]
pub struct Shared {
    /// The game, engines and analysis.
    pub session: Arc<Mutex<Session>>,
    /// State and analysis events for the pages.
    pub events: broadcast::Sender<(String, String)>,
    /// The per-run token of the URL.
    pub token: String,
    /// `Host` header values this server answers.
    pub hosts: Hosts,
    /// Turns true when the server is stopping (ends the event streams).
    pub stopping: watch::Receiver<bool>,
}

/// The `Host` header values this server answers.
#[derive(Clone, Debug)]
pub struct Hosts {
    /// Exact `host:port` values.
    names: Vec<String>,
    /// Any IP address literal with this port (a server on every interface):
    /// a foreign page reaching it through DNS rebinding sends a name, never
    /// an address.
    any_address: Option<u16>,
}

impl Hosts {
    /// The hosts of a server listening on `host:port`: that address, and
    /// `localhost` on the loopback address; every address of the machine
    /// and its host name when listening on all of them.
    pub fn new(host: IpAddr, port: u16) -> Hosts {
        let mut names = vec![format!("{}:{port}", address_text(host))];
        if host.is_loopback() || host.is_unspecified() {
            names.push(format!("localhost:{port}"));
            names.push(format!("127.0.0.1:{port}"));
        }
        if host.is_unspecified()
            && let Ok(name) = std::fs::read_to_string("/proc/sys/kernel/hostname")
            && !name.trim().is_empty()
        {
            names.push(format!("{}:{port}", name.trim().to_lowercase()));
        }
        Hosts {
            names,
            any_address: host.is_unspecified().then_some(port),
        }
    }

    /// Whether a request with this `Host` header is for this server.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.to_lowercase();
        if self.names.contains(&host) {
            return true;
        }
        let Some(port) = self.any_address else {
            return false;
        };
        let Some((address, given_port)) = host.rsplit_once(':') else {
            return false;
        };
        let address = address.trim_start_matches('[').trim_end_matches(']');
        given_port.parse::<u16>() == Ok(port) && address.parse::<IpAddr>().is_ok()
    }
}

/// An address as written in a URL (IPv6 in brackets).
pub fn address_text(host: IpAddr) -> String {
    match host {
        IpAddr::V6(v6) => format!("[{v6}]"),
        v4 => v4.to_string(),
    }
}

/// The routes.
pub fn router(shared: Shared) -> Router {
    page_routes()
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/command", post(command))
        .route("/api/pgn", get(export).post(import))
        .route("/api/preview", post(preview))
        .layer(middleware::from_fn(refusals_as_problems))
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared)
}

/// The page and its files, which hold no state: the same for `agon gui` and `agon serve`.
pub(crate) fn page_routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route(
            "/app.js",
            get(|| asset(APP_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/app.css",
            get(|| asset(APP_CSS, "text/css; charset=utf-8")),
        )
        .route(
            "/i18n.js",
            get(|| asset(I18N_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/board.js",
            get(|| asset(BOARD_JS, "text/javascript; charset=utf-8")),
        )
        .route("/lang.js", get(language_tables))
        .route(
            "/rules.js",
            get(|| asset(RULES_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/lessons.js",
            get(|| asset(LESSONS_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/welcome.js",
            get(|| asset(WELCOME_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/learn.css",
            get(|| asset(LEARN_CSS, "text/css; charset=utf-8")),
        )
        .merge(super::lessons::routes())
        .route("/api/geometry", get(|| async { axum::Json(geometry()) }))
}

/// The headers that keep the page from loading or being framed by anything foreign.
pub(crate) fn add_security_headers(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// Refuses foreign `Host` headers everywhere and requests without the token
/// to anything but the static scripts and style sheet.
async fn guard(
    State(shared): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !shared.hosts.allows(host) {
        log::warn!("refused a request for host '{host}'");
        return refuse(
            StatusCode::FORBIDDEN,
            &Problem::new(Code::ForeignHost, "forbidden: unknown Host"),
        );
    }
    let path = request.uri().path();
    if !PUBLIC_ASSETS.contains(&path) {
        let given = request
            .headers()
            .get("x-agon-token")
            .and_then(|h| h.to_str().ok())
            .or(query.get("token").map(String::as_str));
        if given != Some(shared.token.as_str()) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                &Problem::new(
                    Code::NoToken,
                    "unauthorized: open the URL agon gui printed, with its token",
                ),
            );
        }
    }
    let mut response = next.run(request).await;
    add_security_headers(response.headers_mut());
    response
}

/// The most of a refusal's plain-text body kept as its problem's detail.
const MAX_REFUSAL_DETAIL: usize = 1024;

/// Gives the refusals made before a handler runs (axum's own: a body over
/// the limit or not UTF-8, a query that cannot be read, a method the address
/// does not take, an unknown address) the JSON problem every other refusal
/// has, keeping their status and headers (such as `Allow`).
pub(crate) async fn refusals_as_problems(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let detail = axum::body::to_bytes(body, MAX_REFUSAL_DETAIL)
        .await
        .map(|text| String::from_utf8_lossy(&text).trim().to_string())
        .unwrap_or_default();
    let problem = match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            Problem::new(Code::BodyTooLarge, "the request's body is too large")
        }
        StatusCode::METHOD_NOT_ALLOWED => Problem::new(
            Code::MethodNotAllowed,
            "this address does not take that method",
        ),
        StatusCode::NOT_FOUND => Problem::new(Code::NotFound, "not found"),
        server_error if server_error.is_server_error() => {
            log::error!("a request failed: {status} {detail}");
            Problem::new(Code::ServerFailed, "the server failed")
        }
        _ => {
            Problem::new(Code::BadRequest, format!("bad request: {detail}")).with("detail", detail)
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(problem.json().to_string()))
}

async fn index() -> Response {
    asset(INDEX_HTML, "text/html; charset=utf-8").await
}

async fn language_tables() -> Response {
    let joined = format!("const STRINGS = {{}};\n{}", LANGUAGE_TABLES.concat());
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        joined,
    )
        .into_response()
}

async fn asset(body: &'static str, kind: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

async fn state(State(shared): State<Shared>) -> Response {
    axum::Json(lock(&shared.session).state()).into_response()
}

async fn events(State(shared): State<Shared>) -> Response {
    let receiver = shared.events.subscribe();
    let first = lock(&shared.session).state().to_string();
    let initial = tokio_stream::once(Ok::<Event, Infallible>(
        Event::default().event("state").data(first),
    ));
    // A page that falls behind skips to the next event: each one is complete.
    let updates = BroadcastStream::new(receiver).filter_map(|message| {
        message
            .ok()
            .map(|(event, data)| Ok(Event::default().event(event).data(data)))
    });
    // Each stream ends when the server stops, so that stopping does not wait for the page.
    let mut stopping = shared.stopping.clone();
    let stopped = async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    let stream = futures_util::StreamExt::take_until(initial.chain(updates), stopped);
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn command(State(shared): State<Shared>, body: String) -> Response {
    let command: Command = match serde_json::from_str(&body) {
        Ok(command) => command,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &unreadable("bad command", &e)),
    };
    log::debug!("command {command:?}");
    let outcome = tokio::task::spawn_blocking(move || lock(&shared.session).command(command)).await;
    match outcome {
        Ok(Ok(())) => axum::Json(serde_json::json!({ "ok": true })).into_response(),
        Ok(Err(problem)) => refuse(StatusCode::BAD_REQUEST, &problem),
        Err(e) => failed(&e),
    }
}

async fn export(State(shared): State<Shared>) -> Response {
    let text = lock(&shared.session).export();
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"agon-game.pgn\""),
    );
    (headers, Body::from(text)).into_response()
}

async fn import(State(shared): State<Shared>, body: String) -> Response {
    let outcome = tokio::task::spawn_blocking(move || {
        let games = super::pgn::read_games(&body)?;
        lock(&shared.session).import(games)
    })
    .await;
    match outcome {
        Ok(Ok(games)) => {
            axum::Json(serde_json::json!({ "ok": true, "games": games })).into_response()
        }
        Ok(Err(problem)) => refuse(StatusCode::BAD_REQUEST, &problem),
        Err(e) => failed(&e),
    }
}

#[derive(Deserialize)]
struct PreviewRequest {
    moves: Vec<String>,
}

async fn preview(State(shared): State<Shared>, body: String) -> Response {
    match serde_json::from_str::<PreviewRequest>(&body) {
        Ok(request) => axum::Json(lock(&shared.session).preview(&request.moves)).into_response(),
        Err(e) => refuse(
            StatusCode::BAD_REQUEST,
            &unreadable("bad preview request", &e),
        ),
    }
}
