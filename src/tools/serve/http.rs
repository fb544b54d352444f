//! The HTTP side of `agon serve`: the page of `agon gui` and its API for
//! anonymous visitors (a random id in an `HttpOnly` cookie), behind a rate
//! limit per client address, a body limit and an `Origin` check on every
//! state-changing request; plus `/healthz` and `/metrics`.

use super::limiter::{RateLimiter, StreamLimiter};
use super::metrics::{ErrorKind, Gauges, Metrics};
use super::visitors::{Refusal, Registry, is_id, new_id};
use crate::tools::gui::problem::{Code, Problem, refuse, unreadable};
use crate::tools::gui::server::{add_security_headers, page_routes, refusals_as_problems};
use crate::tools::gui::session::Command;
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Extension, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::watch;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::WatchStream;

/// The visitor cookie's name.
pub const COOKIE: &str = "agon_visitor";
/// The largest request body accepted (a command is well under 1 KiB).
pub const MAX_BODY: usize = 16 * 1024;
/// The most moves a preview plays.
const MAX_PREVIEW_MOVES: usize = 256;
/// What a full engine queue or a full memory tells a client to wait, in seconds.
const RETRY_AFTER_BUSY: &str = "5";

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    /// Visitors, games, engines.
    pub registry: Arc<Registry>,
    /// Counters.
    pub metrics: Arc<Metrics>,
    /// Requests per address.
    pub limiter: Arc<RateLimiter>,
    /// Open event streams per address.
    pub streams: Arc<StreamLimiter>,
    /// Behind a reverse proxy: the client is the last `X-Forwarded-For`
    /// address, and the cookie is `Secure` (the proxy speaks TLS).
    pub behind_proxy: bool,
    /// `Origin` values allowed; empty: the origin of the request's `Host`.
    pub origins: Arc<Vec<String>>,
    /// Turns true when the server is stopping (ends the event streams).
    pub stopping: watch::Receiver<bool>,
}

/// The routes.
pub fn router(app: App) -> Router<()> {
    page_routes()
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/command", post(command))
        .route("/api/pgn", get(export).post(import))
        .route("/api/preview", post(preview))
        .layer(middleware::from_fn(refusals_as_problems))
        // For monitors: plain text, outside the page's problems.
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .fallback(|| async {
            refuse(
                StatusCode::NOT_FOUND,
                &Problem::new(Code::NotFound, "not found"),
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(app.clone(), frontline))
        .with_state(app)
}

fn refusal(refusal: Refusal) -> Response {
    match refusal {
        Refusal::Bad(why) => refuse(StatusCode::BAD_REQUEST, &why),
        Refusal::Forbidden(why) => refuse(StatusCode::FORBIDDEN, &why),
        Refusal::NotFound => refuse(
            StatusCode::NOT_FOUND,
            &Problem::new(Code::NotYourGame, "no such game of yours"),
        ),
        Refusal::Conflict(why) => refuse(StatusCode::CONFLICT, &why),
        Refusal::Busy => unavailable(&Problem::new(
            Code::EnginesBusy,
            "the engines are busy: try again shortly",
        )),
        Refusal::Full => unavailable(&Problem::new(
            Code::VisitorsFull,
            "too many visitors at once: try again shortly",
        )),
        Refusal::Internal(why) => {
            log::error!("{why}");
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                &Problem::new(Code::ServerFailed, "the server failed"),
            )
        }
    }
}

fn unavailable(why: &Problem) -> Response {
    let mut response = refuse(StatusCode::SERVICE_UNAVAILABLE, why);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from_static(RETRY_AFTER_BUSY),
    );
    response
}

/// The client's address: the socket's, or behind a proxy the last forwarded one.
fn client_address(app: &App, request: &Request) -> Option<IpAddr> {
    let socket = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip());
    if !app.behind_proxy {
        return socket;
    }
    let forwarded: Vec<IpAddr> = request
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|part| part.trim().parse().ok())
        .collect();
    // The proxy appends the address it saw: the last entry is the one not forged.
    forwarded.last().copied().or(socket)
}

/// Whether a state-changing request comes from this site's own page.
fn origin_allowed(app: &App, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
        return false;
    };
    if !app.origins.is_empty() {
        return app.origins.iter().any(|allowed| allowed == origin);
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let without_scheme = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    !host.is_empty() && without_scheme == Some(host)
}

/// The visitor id of the request's cookie, if it holds a well-formed one.
fn visitor_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == COOKIE && is_id(value))
        .map(|(_, value)| value.to_string())
}

/// The client's address, as `frontline` found it, for the handlers.
#[derive(Clone, Copy)]
struct ClientAddress(IpAddr);

/// Rate limit, origin check, the page's cookie, security headers and counting.
async fn frontline(State(app): State<App>, mut request: Request, next: Next) -> Response {
    app.metrics.requests.fetch_add(1, Ordering::Relaxed);
    let address = client_address(&app, &request);
    if let Some(address) = address {
        request.extensions_mut().insert(ClientAddress(address));
    }
    if let Some(address) = address
        && let Err(wait) = app.limiter.take(address)
    {
        app.metrics.error(ErrorKind::RateLimited);
        let mut response = refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &Problem::new(Code::TooManyRequests, "too many requests"),
        );
        let seconds = wait.as_secs().max(1).to_string();
        if let Ok(value) = HeaderValue::from_str(&seconds) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        add_security_headers(response.headers_mut());
        return response;
    }
    let changes_state = !matches!(*request.method(), Method::GET | Method::HEAD);
    let mut response = if changes_state && !origin_allowed(&app, request.headers()) {
        refuse(
            StatusCode::FORBIDDEN,
            &Problem::new(Code::ForeignOrigin, "forbidden: foreign or missing Origin"),
        )
    } else {
        let new_visitor =
            (request.uri().path() == "/" && visitor_of(request.headers()).is_none()).then(new_id);
        let mut response = next.run(request).await;
        if let Some(id) = new_visitor {
            let secure = if app.behind_proxy { "; Secure" } else { "" };
            let cookie =
                format!("{COOKIE}={id}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax{secure}");
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
        }
        response
    };
    let status = response.status();
    if status.is_server_error() && status != StatusCode::SERVICE_UNAVAILABLE {
        app.metrics.error(ErrorKind::Internal);
    } else if status == StatusCode::TOO_MANY_REQUESTS {
        // Past the address's share of open pages (past its share of requests is counted above).
        app.metrics.error(ErrorKind::RateLimited);
    } else if status.is_client_error() {
        app.metrics.error(ErrorKind::Refused);
    }
    add_security_headers(response.headers_mut());
    response
}

fn no_visitor() -> Response {
    refuse(
        StatusCode::UNAUTHORIZED,
        &Problem::new(Code::NoVisitor, "no visitor cookie: open the page first"),
    )
}

/// Runs registry work that may wait for the database off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Refusal> + Send + 'static,
) -> Result<T, Refusal> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(Refusal::Internal(format!("request failed: {e}"))))
}

#[derive(Deserialize)]
struct GameQuery {
    game: Option<String>,
}

async fn state(
    State(app): State<App>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(visitor) = visitor_of(&headers) else {
        return no_visitor();
    };
    let game = query.get("game").cloned();
    match blocking(move || app.registry.state(&visitor, game.as_deref())).await {
        Ok(state) => axum::Json(state).into_response(),
        Err(why) => refusal(why),
    }
}

async fn events(
    State(app): State<App>,
    address: Option<Extension<ClientAddress>>,
    headers: HeaderMap,
) -> Response {
    let Some(visitor) = visitor_of(&headers) else {
        return no_visitor();
    };
    let slot = match address {
        Some(Extension(ClientAddress(address))) => match app.streams.open(address) {
            Some(slot) => Some(slot),
            None => {
                let limit = app.streams.per_address();
                let mut response = refuse(
                    StatusCode::TOO_MANY_REQUESTS,
                    &Problem::new(
                        Code::TooManyStreams,
                        format!("at most {limit} pages open at once from one address"),
                    )
                    .with("max", limit),
                );
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(RETRY_AFTER_BUSY),
                );
                return response;
            }
        },
        None => None,
    };
    let registry = Arc::clone(&app.registry);
    let receiver = match blocking(move || registry.subscribe(&visitor)).await {
        Ok(receiver) => receiver,
        Err(why) => return refusal(why),
    };
    // Each stream ends when the server stops, so that stopping does not wait for the pages.
    let stop = WatchStream::new(app.stopping.clone())
        .filter(|stop| *stop)
        .map(|_| None);
    // The state first, then the lines of its position, which the page
    // takes only for the position it shows.
    let published = WatchStream::new(receiver)
        .filter(|published| !published.state.is_empty())
        .map(Some)
        .merge(stop)
        .take_while(Option::is_some)
        .filter_map(|published| published);
    let states = futures_util::StreamExt::flat_map(published, |published| {
        let state = Event::default().event("state").data(published.state);
        let analysis = published
            .analysis
            .map(|lines| Event::default().event("analysis").data(lines));
        futures_util::stream::iter(
            std::iter::once(state)
                .chain(analysis)
                .map(Ok::<Event, Infallible>),
        )
    });
    // The address's slot is held as long as the stream.
    let states = states.map(move |event| {
        let _held = &slot;
        event
    });
    Sse::new(states)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn command(State(app): State<App>, headers: HeaderMap, body: String) -> Response {
    let Some(visitor) = visitor_of(&headers) else {
        return no_visitor();
    };
    let value: Value = match serde_json::from_str(&body) {
        Ok(value) => value,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &unreadable("bad command", &e)),
    };
    let game = match value.get("game") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if is_id(id) => Some(id.clone()),
        // Not an id this server makes: no game of the visitor's.
        Some(Value::String(_)) => return refusal(Refusal::NotFound),
        Some(_) => {
            let why = "\"game\" is a game id, a string";
            return refuse(
                StatusCode::BAD_REQUEST,
                &Problem::new(Code::BadRequest, format!("bad command: {why}")).with("detail", why),
            );
        }
    };
    let command: Command = match serde_json::from_value(value) {
        Ok(command) => command,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &unreadable("bad command", &e)),
    };
    match blocking(move || app.registry.command(&visitor, game.as_deref(), command)).await {
        Ok(game) => axum::Json(json!({ "ok": true, "game": game })).into_response(),
        Err(why) => refusal(why),
    }
}

async fn export(
    State(app): State<App>,
    headers: HeaderMap,
    Query(query): Query<GameQuery>,
) -> Response {
    let Some(visitor) = visitor_of(&headers) else {
        return no_visitor();
    };
    if query.game.is_some() {
        return refuse(
            StatusCode::BAD_REQUEST,
            &Problem::new(Code::RecordOfGameShown, "the record is of the game shown"),
        );
    }
    match blocking(move || app.registry.pgn(&visitor)).await {
        Ok(text) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/x-chess-pgn; charset=utf-8",
                ),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"agon-game.pgn\"",
                ),
            ],
            text,
        )
            .into_response(),
        Err(why) => refusal(why),
    }
}

async fn import() -> Response {
    refuse(
        StatusCode::FORBIDDEN,
        &Problem::new(Code::NoPgnHere, "not on this server: reading PGN"),
    )
}

#[derive(Deserialize)]
struct PreviewRequest {
    moves: Vec<String>,
}

async fn preview(State(app): State<App>, headers: HeaderMap, body: String) -> Response {
    let Some(visitor) = visitor_of(&headers) else {
        return no_visitor();
    };
    let request: PreviewRequest = match serde_json::from_str(&body) {
        Ok(request) => request,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &unreadable("bad preview", &e)),
    };
    if request.moves.len() > MAX_PREVIEW_MOVES {
        return refuse(
            StatusCode::BAD_REQUEST,
            &Problem::new(
                Code::PreviewTooLong,
                format!("a preview has at most {MAX_PREVIEW_MOVES} moves"),
            )
            .with("max", MAX_PREVIEW_MOVES),
        );
    }
    match blocking(move || app.registry.preview(&visitor, &request.moves)).await {
        Ok(board) => axum::Json(board).into_response(),
        Err(why) => refusal(why),
    }
}

/// What `/healthz` and `/metrics` read now; a count the database cannot
/// give is `None` (and logged), the rest is read all the same.
fn gauges(app: &App) -> Gauges {
    let (engines, engines_busy) = app.registry.engines().map_or((0, 0), |p| p.engines());
    let (queue_length, analysis_queue_length) =
        app.registry.engines().map_or((0, 0), |p| p.queue_lengths());
    let games_in_progress = app
        .registry
        .games_in_progress()
        .inspect_err(|why| log::warn!("cannot count the games in progress: {why}"))
        .ok();
    Gauges {
        games_in_progress,
        queue_length,
        analysis_queue_length,
        visitors: app.registry.visitors_in_memory(),
        max_visitors: app.registry.max_visitors(),
        engines,
        engines_busy,
    }
}

/// The gauges, read off the async threads (the count waits for the database).
async fn read_gauges(app: App) -> Result<Gauges, Refusal> {
    blocking(move || Ok(gauges(&app))).await
}

async fn health(State(app): State<App>) -> Response {
    let unhealthy = match read_gauges(app).await {
        Ok(gauges) if gauges.engines == 0 => "no engine running\n",
        Ok(gauges) if gauges.games_in_progress.is_none() => "the database does not answer\n",
        Ok(_) => return (StatusCode::OK, "ok\n").into_response(),
        Err(why) => {
            log::error!("{why:?}");
            "the server failed\n"
        }
    };
    (StatusCode::SERVICE_UNAVAILABLE, unhealthy).into_response()
}

async fn metrics(State(app): State<App>) -> Response {
    let metrics = Arc::clone(&app.metrics);
    match read_gauges(app).await {
        Ok(gauges) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            metrics.render(&gauges),
        )
            .into_response(),
        Err(why) => refusal(why),
    }
}
