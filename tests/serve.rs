//! `agon serve` through its HTTP API: a load killed with SIGKILL loses and
//! doubles nothing, hostile requests are refused with the right status and
//! change no game, SIGTERM ends the server and its engines, analysis gives
//! the lines of the position shown within the server's limits and never
//! holds up game moves, and memory holds at most `--max-visitors` visitors.

mod common;

use common::{Agon, PATIENCE, scratch_dir};
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `agon serve` on a free port with this database (two engines unless
/// `extra` says), and its address.
fn start_server(db: &Path, extra: &[&str]) -> (Agon, String) {
    let db = db.to_string_lossy().into_owned();
    let mut args = vec!["serve", "--port", "0", "--db", &db, "--rate", "100000"];
    if !extra.contains(&"--engines") {
        args.extend_from_slice(&["--engines", "2"]);
    }
    args.extend_from_slice(extra);
    let mut server = Agon::start(&args);
    let url = server
        .next_line(PATIENCE)
        .expect("agon serve prints its URL");
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap_or_else(|| panic!("URL {url}"))
        .to_string();
    (server, address)
}

/// An HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// Asserts that the headers hold `header` (`name: value`, names in any case).
    fn assert_header(&self, header: &str) {
        assert!(
            self.headers.to_ascii_lowercase().contains(header),
            "no {header:?} in {}",
            self.headers
        );
    }
}

/// Sends `head` (request line and headers, without the blank line) and `body` raw.
fn raw(address: &str, head: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(address).expect("the server accepts");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let request = format!(
        "{head}\r\nHost: {address}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // A refused body may be cut short by the server: what it answered is what counts.
    let _ = stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.write_all(body));
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply).into_owned();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?} for {head}"));
    let body = if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers: headers.to_string(),
        body,
    }
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A visitor: the cookie the page's first request set.
fn new_visitor(address: &str) -> String {
    let answer = raw(address, "GET / HTTP/1.1", b"");
    assert_eq!(answer.status, 200);
    let cookie = answer
        .headers
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("no cookie in {}", answer.headers));
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"));
    cookie.split(';').next().unwrap().to_string()
}

fn command(address: &str, cookie: &str, body: &Value) -> Answer {
    raw(
        address,
        &format!("POST /api/command HTTP/1.1\r\nCookie: {cookie}\r\nOrigin: http://{address}"),
        body.to_string().as_bytes(),
    )
}

fn state(address: &str, cookie: &str, game: Option<&str>) -> Answer {
    let query = game.map_or(String::new(), |g| format!("?game={g}"));
    raw(
        address,
        &format!("GET /api/state{query} HTTP/1.1\r\nCookie: {cookie}"),
        b"",
    )
}

fn moves_of(state: &Value) -> Vec<String> {
    state["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mv"].as_str().unwrap().to_string())
        .collect()
}

/// Opens the visitor's event stream (`HTTP/1.0`: no chunks; or `HTTP/1.1`).
fn open_events(address: &str, cookie: &str, http: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /api/events {http}\r\nHost: {address}\r\nCookie: {cookie}\r\n\r\n"
    )
    .unwrap();
    stream
}

/// A new visitor's page opened: its event stream and the stream's status line start.
fn open_page(address: &str) -> (TcpStream, String) {
    let mut stream = open_events(address, &new_visitor(address), "HTTP/1.1");
    let mut start = [0; 12];
    stream.read_exact(&mut start).unwrap();
    (stream, String::from_utf8_lossy(&start).into_owned())
}

/// Starts a game at `level` and plays its first legal move; the game's id and the move.
fn first_move(address: &str, cookie: &str, level: usize) -> (String, String) {
    let reply = command(
        address,
        cookie,
        &json!({ "cmd": "new_game", "level": level }),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let game = reply.json()["game"].as_str().unwrap().to_string();
    let first = state(address, cookie, Some(&game)).json();
    let mv = first["legal"][0].as_str().unwrap().to_string();
    let moved = command(
        address,
        cookie,
        &json!({ "cmd": "move", "mv": mv, "game": game }),
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
    (game, mv)
}

/// Waits until the visitor may move in `game`, and returns that state.
fn wait_for_turn(address: &str, cookie: &str, game: &str) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let state = state(address, cookie, Some(game)).json();
        if !state["legal"].as_array().unwrap().is_empty() || !state["result"].is_null() {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "the engine never replied: {state}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_load_killed_with_sigkill_comes_back_with_every_acknowledged_move() {
    let dir = scratch_dir("serve-crash");
    let db = dir.join("games.sqlite");
    let journal = dir.join("journal.jsonl");
    let (server, address) = start_server(&db, &[]);
    let mut load = Command::new(env!("CARGO_BIN_EXE_agon"))
        .args(["loadtest", &format!("http://{address}/")])
        .args(["--visitors", "12", "--duration", "8", "--level", "0"])
        .arg("--journal")
        .arg(&journal)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agon loadtest starts");
    std::thread::sleep(Duration::from_secs(3));
    // Drop kills with SIGKILL, mid-load.
    drop(server);
    let _ = load.wait();
    let mut last: HashMap<String, (String, Vec<String>)> = HashMap::new();
    let text = std::fs::read_to_string(&journal).expect("the journal was written");
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let game = entry["game"].as_str().unwrap().to_string();
        let moves = entry["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        last.insert(
            game,
            (entry["visitor"].as_str().unwrap().to_string(), moves),
        );
    }
    assert!(last.len() >= 12, "the load played: {} games", last.len());

    // What the database holds after the kill, read directly.
    let connection = rusqlite::Connection::open(&db).unwrap();
    let stored_moves = |game: &str| -> Vec<String> {
        let mut statement = connection
            .prepare("SELECT mv FROM moves WHERE game = ?1 ORDER BY ply")
            .unwrap();
        statement
            .query_map([game], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let stored: HashMap<&String, Vec<String>> =
        last.keys().map(|game| (game, stored_moves(game))).collect();
    let (_server, address) = start_server(&db, &[]);
    let mut journal_games_of: HashMap<&String, Vec<&String>> = HashMap::new();
    for (game, (cookie, acknowledged)) in &last {
        journal_games_of.entry(cookie).or_default().push(game);
        let stored = &stored[game];
        assert_eq!(
            stored[..acknowledged.len().min(stored.len())],
            acknowledged[..],
            "game {game} lost acknowledged moves"
        );
        // At most the one move that was stored but not yet seen by the visitor.
        assert!(
            stored.len() <= acknowledged.len() + 1,
            "game {game}: {stored:?} after {acknowledged:?}"
        );
        // Back as stored, and an engine move that was being searched is searched again.
        let now = moves_of(&wait_for_turn(&address, cookie, game));
        assert_eq!(
            now[..stored.len()],
            stored[..],
            "game {game} after the restart"
        );
        assert!(now.len() <= stored.len() + 1, "game {game}: {now:?}");
    }
    // A visitor's game whose first move was stored but never acknowledged
    // before the kill is in the database and not in the journal: at most one
    // such game per visitor, since a visitor plays one game at a time.
    let owner_of = |game: &str| -> String {
        connection
            .query_row("SELECT visitor FROM games WHERE id = ?1", [game], |row| {
                row.get(0)
            })
            .unwrap()
    };
    let stored_games_of = |owner: &str| -> HashMap<String, i64> {
        let mut statement = connection
            .prepare(
                "SELECT games.id, COUNT(moves.ply) FROM games JOIN moves ON moves.game = games.id \
                 WHERE games.visitor = ?1 GROUP BY games.id",
            )
            .unwrap();
        statement
            .query_map([owner], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    for (cookie, journal_games) in journal_games_of {
        let stored = stored_games_of(&owner_of(journal_games[0]));
        for game in &journal_games {
            assert!(
                stored.contains_key(*game),
                "visitor {cookie}: game {game} lost"
            );
        }
        let unacknowledged: Vec<_> = stored
            .iter()
            .filter(|(game, _)| !journal_games.contains(game))
            .collect();
        assert!(
            unacknowledged.len() <= 1 && unacknowledged.iter().all(|(_, plies)| **plies <= 2),
            "visitor {cookie}: games beyond the journal's {}: {unacknowledged:?}",
            journal_games.len()
        );
        let listed = state(&address, cookie, None).json()["library"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["plies"].as_u64().unwrap() > 0)
            .count();
        assert_eq!(
            listed,
            stored.len(),
            "visitor {cookie}: the library shows what is stored, no game doubled or lost"
        );
    }
}

#[test]
fn hostile_requests_are_refused_and_change_no_game() {
    let dir = scratch_dir("serve-fuzz");
    let (mut server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let owner = new_visitor(&address);
    let other = new_visitor(&address);
    let (game, mv) = first_move(&address, &owner, 0);
    let before = moves_of(&wait_for_turn(&address, &owner, &game));
    assert_eq!(before.len(), 2);

    let origin = format!("Origin: http://{address}");
    let with = |cookie: &str| format!("Cookie: {cookie}\r\n{origin}");
    let huge = vec![b'{'; 1 << 20];
    let cases: Vec<(String, Vec<u8>, u16)> = vec![
        (
            format!("POST /api/command HTTP/1.1\r\n{}", with(&owner)),
            b"{not json".to_vec(),
            400,
        ),
        (
            format!("POST /api/command HTTP/1.1\r\n{}", with(&owner)),
            huge.clone(),
            413,
        ),
        (
            format!("POST /api/preview HTTP/1.1\r\n{}", with(&owner)),
            huge,
            413,
        ),
        (
            format!("PUT /api/command HTTP/1.1\r\n{}", with(&owner)),
            b"{}".to_vec(),
            405,
        ),
        (
            format!("GET /api/command HTTP/1.1\r\n{}", with(&owner)),
            Vec::new(),
            405,
        ),
        (
            format!("DELETE /api/state HTTP/1.1\r\n{}", with(&owner)),
            Vec::new(),
            405,
        ),
        ("GET /nowhere HTTP/1.1".into(), Vec::new(), 404),
        ("GET /../../etc/passwd HTTP/1.1".into(), Vec::new(), 404),
        ("GET /%2e%2e/Cargo.toml HTTP/1.1".into(), Vec::new(), 404),
        (
            "GET /lang/../../../../etc/passwd HTTP/1.1".into(),
            Vec::new(),
            404,
        ),
        ("GET /api/state HTTP/1.1".into(), Vec::new(), 401),
        (
            "GET /api/state HTTP/1.1\r\nCookie: agon_visitor=../../x".into(),
            Vec::new(),
            401,
        ),
        (
            "GET /api/state HTTP/1.1\r\nCookie: agon_visitor=ZZZZ".into(),
            Vec::new(),
            401,
        ),
        (
            format!("POST /api/command HTTP/1.1\r\nCookie: {owner}"),
            br#"{"cmd":"resign"}"#.to_vec(),
            403,
        ),
        (
            format!("POST /api/command HTTP/1.1\r\nCookie: {owner}\r\nOrigin: http://evil.example"),
            br#"{"cmd":"resign"}"#.to_vec(),
            403,
        ),
        (
            format!("GET /api/state?game={game} HTTP/1.1\r\nCookie: {other}"),
            Vec::new(),
            404,
        ),
        (
            format!("GET /api/state?game=../{game} HTTP/1.1\r\nCookie: {owner}"),
            Vec::new(),
            404,
        ),
        (
            format!("POST /api/pgn HTTP/1.1\r\n{}", with(&owner)),
            b"[Event \"x\"]".to_vec(),
            403,
        ),
    ];
    for (head, body, status) in &cases {
        let answer = raw(&address, head, body);
        assert_eq!(answer.status, *status, "{head}: {}", answer.body);
        assert!(answer.json()["code"].is_string(), "{head}: {}", answer.body);
    }
    // Refusals made before a handler runs are problems the page can tell too.
    let problems: Vec<(String, Vec<u8>, u16, &str)> = vec![
        (
            format!("POST /api/command HTTP/1.1\r\n{}", with(&owner)),
            vec![b'{'; 1 << 20],
            413,
            "body-too-large",
        ),
        (
            format!("GET /api/command HTTP/1.1\r\n{}", with(&owner)),
            Vec::new(),
            405,
            "method-not-allowed",
        ),
        (
            format!("POST /api/command HTTP/1.1\r\n{}", with(&owner)),
            b"{\"cmd\": \"resign\xff\"}".to_vec(),
            400,
            "bad-request",
        ),
        (
            format!("GET /api/pgn?game=a&game=b HTTP/1.1\r\nCookie: {owner}"),
            Vec::new(),
            400,
            "bad-request",
        ),
        (
            format!("POST /api/lesson HTTP/1.1\r\n{}", with(&owner)),
            br#"{"lesson": "no-such\u001b", "moves": ["f1f2"]}"#.to_vec(),
            400,
            "no-lesson",
        ),
        (
            format!("POST /api/lesson HTTP/1.1\r\n{}", with(&owner)),
            br#"{"lesson": "first-game", "moves": ["f1f2"]}"#.to_vec(),
            400,
            "lesson-not-played",
        ),
        (
            format!("POST /api/lesson HTTP/1.1\r\n{}", with(&owner)),
            br#"{"lesson": "rings", "moves": []}"#.to_vec(),
            400,
            "bad-lesson-line",
        ),
        (
            format!("POST /api/lesson HTTP/1.1\r\n{}", with(&owner)),
            b"{".to_vec(),
            400,
            "bad-request",
        ),
    ];
    for (head, body, status, code) in &problems {
        let answer = raw(&address, head, body);
        assert_eq!(answer.status, *status, "{head}: {}", answer.body);
        let problem = answer.json();
        assert_eq!(problem["code"], *code, "{head}: {}", answer.body);
        assert!(problem["error"].is_string(), "{head}: {}", answer.body);
        if *status == 405 {
            answer.assert_header("\r\nallow: post");
        }
    }
    let unknown = raw(
        &address,
        &format!("POST /api/lesson HTTP/1.1\r\n{}", with(&owner)),
        br#"{"lesson": "no-such\u001b", "moves": ["f1f2"]}"#,
    )
    .json();
    assert_eq!(unknown["params"]["lesson"], "no-such\\u{1b}", "{unknown}");
    let refused_commands = [
        (json!({ "cmd": "move", "mv": "z9z9", "game": game }), 400),
        (json!({ "cmd": "move", "mv": 7, "game": game }), 400),
        (json!({ "cmd": "move", "mv": before[0], "game": game }), 400),
        (json!({ "cmd": "view", "ply": 99, "game": game }), 400),
        (json!({ "cmd": "new_game", "level": 99 }), 400),
        (json!({ "cmd": "new_game", "fen": "not a fen" }), 400),
        (json!({ "cmd": "new_game", "tc": "5+3" }), 403),
        (json!({ "cmd": "new_game", "engine": 1 }), 403),
        (
            json!({ "cmd": "set_option", "role": "opponent", "name": "Hash", "value": "65536" }),
            403,
        ),
        (
            json!({ "cmd": "set_engine", "role": "opponent", "engine": 1 }),
            403,
        ),
        (
            json!({ "cmd": "set_option", "role": "analyst", "name": "MultiPV", "value": "50" }),
            403,
        ),
        (
            json!({ "cmd": "set_engine", "role": "analyst", "engine": 1 }),
            403,
        ),
        (json!({ "cmd": "watch", "white": 0, "black": 0 }), 403),
        (json!({ "cmd": "hint" }), 403),
        (json!({ "cmd": "multipv", "lines": 0 }), 400),
        (
            json!({ "cmd": "line", "fen": agon::rules::START_FEN, "moves": [mv], "game": game }),
            400,
        ),
        (json!({ "cmd": "no_such_command" }), 400),
        (json!({ "cmd": "resign", "game": "not-an-id" }), 404),
        (json!({ "cmd": "resign", "game": 5 }), 400),
    ];
    for (body, status) in &refused_commands {
        let answer = command(&address, &owner, body);
        assert_eq!(answer.status, *status, "{body}: {}", answer.body);
    }
    let mistyped = command(
        &address,
        &owner,
        &json!({ "cmd": "resign", "game": [game] }),
    );
    assert_eq!(mistyped.json()["code"], "bad-request", "{}", mistyped.body);
    // Another visitor acting on the owner's game id.
    for body in [
        json!({ "cmd": "resign", "game": game }),
        json!({ "cmd": "takeback", "game": game }),
        json!({ "cmd": "move", "mv": mv, "game": game }),
    ] {
        assert_eq!(command(&address, &other, &body).status, 404, "{body}");
    }
    // Random bytes as commands, previews and paths.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..200 {
        let length = rng.random_range(0..200);
        let body: Vec<u8> = (0..length).map(|_| rng.random()).collect();
        for path in ["/api/command", "/api/preview"] {
            let answer = raw(
                &address,
                &format!("POST {path} HTTP/1.1\r\n{}", with(&owner)),
                &body,
            );
            assert!(
                (400..500).contains(&answer.status) || answer.status == 200,
                "{path} {body:?}: {}",
                answer.status
            );
            if answer.status != 200 {
                assert!(answer.json()["code"].is_string(), "{path} {body:?}");
            }
        }
        let path: String = (0..rng.random_range(1..40))
            .map(|_| char::from(rng.random_range(b'!'..=b'~')))
            .collect();
        let answer = raw(&address, &format!("GET /{path} HTTP/1.1"), b"");
        assert!(answer.status < 500, "GET /{path}: {}", answer.status);
    }
    let after = state(&address, &owner, Some(&game)).json();
    assert_eq!(
        moves_of(&after),
        before,
        "a refused request changed the game"
    );
    assert!(after["result"].is_null());
    assert!(after["public"].as_bool().unwrap());
    let metrics = raw(&address, "GET /metrics HTTP/1.1", b"");
    assert!(
        metrics
            .body
            .contains("agon_errors_total{kind=\"internal\"} 0"),
        "{}",
        metrics.body
    );
    assert!(server.next_line(Duration::from_millis(10)).is_none());
}

#[test]
fn sigterm_ends_the_server_and_its_engines_promptly() {
    let dir = scratch_dir("serve-term");
    let (mut server, address) = start_server(&dir.join("games.sqlite"), &[]);
    wait_until_healthy(&address);
    let visitor = new_visitor(&address);
    // An open event stream must not hold the shutdown up.
    let _events = open_events(&address, &visitor, "HTTP/1.1");
    let engines = children_of(server.pid());
    assert_eq!(engines.len(), 2, "two engine processes");
    let started = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &server.pid().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = server.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    for engine in engines {
        assert!(
            !Path::new(&format!("/proc/{engine}")).exists()
                || std::fs::read_to_string(format!("/proc/{engine}/stat"))
                    .is_ok_and(|s| s.contains(") Z ")),
            "engine {engine} still runs"
        );
    }
}

/// Waits until `/healthz` answers 200 (the engines take a moment to start).
fn wait_until_healthy(address: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let health = raw(address, "GET /healthz HTTP/1.1", b"");
        if health.status == 200 {
            return;
        }
        assert!(Instant::now() < deadline, "never healthy: {}", health.body);
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_failing_database_is_unhealthy_and_the_other_metrics_still_answer() {
    let dir = scratch_dir("serve-health");
    let db = dir.join("games.sqlite");
    let (_server, address) = start_server(&db, &[]);
    wait_until_healthy(&address);
    // The games table gone: every query of the server's fails.
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection
        .execute_batch("ALTER TABLE games RENAME TO games_away")
        .unwrap();
    let health = raw(&address, "GET /healthz HTTP/1.1", b"");
    assert_eq!(health.status, 503, "{}", health.body);
    health.assert_header("content-type: text/plain");
    let metrics = raw(&address, "GET /metrics HTTP/1.1", b"");
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    assert!(
        metrics.body.contains("agon_games_in_progress NaN\n"),
        "{}",
        metrics.body
    );
    assert!(
        metrics.body.contains("agon_visitors_max 5000\n"),
        "{}",
        metrics.body
    );
    connection
        .execute_batch("ALTER TABLE games_away RENAME TO games")
        .unwrap();
    assert_eq!(raw(&address, "GET /healthz HTTP/1.1", b"").status, 200);
    assert_eq!(metric(&address, "agon_games_in_progress"), 0.0);
}

/// The ids of a process's children (Linux `/proc`).
fn children_of(pid: u32) -> Vec<u32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut children = Vec::new();
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let text =
                    std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
                children.extend(
                    text.split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
        if children.len() >= 2 || Instant::now() > deadline {
            return children;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_engine_killed_mid_search_is_replaced_and_the_search_run_again() {
    let dir = scratch_dir("serve-engine-crash");
    let (server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let engines = children_of(server.pid());
    assert_eq!(engines.len(), 2, "two engine processes");
    let visitor = new_visitor(&address);
    // Full strength searches a whole second: long enough to be killed in.
    let (game, mv) = first_move(&address, &visitor, 4);
    std::thread::sleep(Duration::from_millis(300));
    for engine in &engines {
        let _ = Command::new("kill")
            .args(["-KILL", &engine.to_string()])
            .status();
    }
    let after = moves_of(&wait_for_turn(&address, &visitor, &game));
    assert_eq!(after.len(), 2, "the engine's reply came from a new engine");
    assert_eq!(after[0], mv);
    let metrics = raw(&address, "GET /metrics HTTP/1.1", b"").body;
    assert!(
        !metrics.contains("agon_errors_total{kind=\"engine\"} 0"),
        "{metrics}"
    );
    // The idle engine killed with it is replaced when the pool next looks,
    // which may come after the reply.
    let deadline = Instant::now() + PATIENCE;
    while metric(&address, "agon_engines") != 2.0 {
        assert!(
            Instant::now() < deadline,
            "{}",
            raw(&address, "GET /metrics HTTP/1.1", b"").body
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let replaced = children_of(server.pid());
    assert!(
        replaced.iter().all(|pid| !engines.contains(pid)),
        "{replaced:?}"
    );
}

/// Reads the visitor's event stream (HTTP/1.0: no chunks) until `wanted`
/// holds for an `analysis` event, and returns that event's data.
fn analysis_until(address: &str, cookie: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    let mut stream = open_events(address, cookie, "HTTP/1.0");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut text = String::new();
    let mut seen = Vec::new();
    loop {
        let mut buffer = [0; 65536];
        if let Ok(read) = stream.read(&mut buffer) {
            text.push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
        while let Some(end) = text.find("\n\n") {
            let event: String = text.drain(..end + 2).collect();
            if !event.lines().any(|l| l == "event: analysis") {
                continue;
            }
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            let analysis: Value = serde_json::from_str(&data).unwrap();
            if wanted(&analysis) {
                return analysis;
            }
            seen.push(analysis);
        }
        assert!(
            Instant::now() < deadline,
            "no analysis wanted among {seen:?}"
        );
    }
}

/// A counter or gauge of `/metrics`.
fn metric(address: &str, name: &str) -> f64 {
    let text = raw(address, "GET /metrics HTTP/1.1", b"").body;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// The lines of a finished analysis of `fen`.
fn finished_analysis(address: &str, cookie: &str, fen: &str) -> Vec<Value> {
    let analysis = analysis_until(address, cookie, |a| {
        a["fen"] == fen && a["running"] == false && !a["lines"].as_array().unwrap().is_empty()
    });
    analysis["lines"].as_array().unwrap().clone()
}

#[test]
fn analysis_gives_the_lines_of_the_position_shown_within_the_server_limits() {
    let dir = scratch_dir("serve-analysis");
    let (_server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let visitor = new_visitor(&address);
    // A position set up from FEN: the start after one move of each side.
    let (game, _) = first_move(&address, &visitor, 0);
    let after = wait_for_turn(&address, &visitor, &game);
    let fen = after["fen"].as_str().unwrap().to_string();

    let opened = command(&address, &visitor, &json!({ "cmd": "analyse", "fen": fen }));
    assert_eq!(opened.status, 200, "{}", opened.body);
    // Options a request slips in are not the server's: nodes, time, lines.
    let asked = command(
        &address,
        &visitor,
        &json!({ "cmd": "analysis", "on": true, "nodes": 1_000_000_000u64, "go": "infinite", "multipv": 50 }),
    );
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert_eq!(
        command(
            &address,
            &visitor,
            &json!({ "cmd": "multipv", "lines": 50 })
        )
        .status,
        200
    );
    let board = state(&address, &visitor, None).json();
    assert_eq!(board["mode"], "analysis");
    assert_eq!(board["fen"], fen.as_str());
    assert_eq!(board["multipv"], 3, "more lines than 3 are capped at 3");
    assert!(board["analysing"].as_bool().unwrap());
    let legal: Vec<&str> = board["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let lines = finished_analysis(&address, &visitor, &fen);
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        let pv = line["pv"].as_array().unwrap();
        assert!(legal.contains(&pv[0].as_str().unwrap()), "{line}");
        assert!(
            line["nodes"].as_u64().unwrap() <= 200_000,
            "the node budget is the server's: {line}"
        );
    }
    let firsts: std::collections::HashSet<_> = lines.iter().map(|l| l["pv"][0].clone()).collect();
    assert_eq!(firsts.len(), 3, "three different moves: {lines:?}");

    // Free moves for both sides: the side to move plays, then the other, and
    // each new position gets its own lines.
    let best = lines[0]["pv"][0].as_str().unwrap().to_string();
    assert_eq!(
        command(&address, &visitor, &json!({ "cmd": "move", "mv": best })).status,
        200
    );
    let next = state(&address, &visitor, None).json();
    assert_ne!(next["side"], board["side"]);
    let reply = next["legal"][0].as_str().unwrap().to_string();
    assert_eq!(
        command(&address, &visitor, &json!({ "cmd": "move", "mv": reply })).status,
        200
    );
    let shown = state(&address, &visitor, None).json();
    assert_eq!(shown["side"], board["side"]);
    let shown_fen = shown["fen"].as_str().unwrap().to_string();
    assert_eq!(finished_analysis(&address, &visitor, &shown_fen).len(), 3);
    // A sideline from the first position: the variation tree.
    command(&address, &visitor, &json!({ "cmd": "view", "ply": 0 }));
    let other = legal.iter().find(|m| **m != best).unwrap().to_string();
    assert_eq!(
        command(&address, &visitor, &json!({ "cmd": "move", "mv": other })).status,
        200
    );
    let tree = state(&address, &visitor, None).json();
    assert_eq!(
        tree["moves"][0]["alternatives"].as_array().unwrap().len(),
        1,
        "{tree}"
    );
    assert_eq!(
        command(&address, &visitor, &json!({ "cmd": "move", "mv": "z9z9" })).status,
        400,
        "moves are judged on the server"
    );

    // Engine choices and options stay refused on the analysis board.
    for body in [
        json!({ "cmd": "set_option", "role": "analyst", "name": "Hash", "value": "4096" }),
        json!({ "cmd": "set_engine", "role": "analyst", "engine": 1 }),
        json!({ "cmd": "hint" }),
    ] {
        assert_eq!(command(&address, &visitor, &body).status, 403, "{body}");
    }

    // Game review of a position of one's own game, through the same queue.
    assert_eq!(
        command(
            &address,
            &visitor,
            &json!({ "cmd": "open_game", "index": 0 })
        )
        .status,
        200
    );
    assert_eq!(state(&address, &visitor, None).json()["mode"], "play");
    let reviewing = command(&address, &visitor, &json!({ "cmd": "review" }));
    assert_eq!(reviewing.status, 200, "{}", reviewing.body);
    let deadline = Instant::now() + PATIENCE;
    let review = loop {
        let review = state(&address, &visitor, None).json()["review"].clone();
        if review["running"] == false && review["done"] == review["total"] {
            break review;
        }
        assert!(
            Instant::now() < deadline,
            "the review never ended: {review}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(review["total"], 3, "the start and the two plies: {review}");
    assert!(
        review["scores"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| !s[1].is_null()),
        "{review}"
    );
    assert!(metric(&address, "agon_analyses_total") >= 5.0);
}

#[test]
fn analysis_from_many_visitors_does_not_hold_up_game_moves() {
    let dir = scratch_dir("serve-analysis-load");
    // One engine, so that the analyses have to queue.
    let (_server, address) = start_server(&dir.join("games.sqlite"), &["--engines", "1"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let analysts: Vec<_> = (0..24)
        .map(|seed| {
            let address = address.clone();
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                let cookie = new_visitor(&address);
                assert_eq!(
                    command(&address, &cookie, &json!({ "cmd": "analysis", "on": true })).status,
                    200
                );
                // A new position every 150 ms: each request replaces the visitor's previous one.
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let board = state(&address, &cookie, None).json();
                    let legal = board["legal"].as_array().unwrap();
                    let body = if legal.is_empty() || board["moves"].as_array().unwrap().len() > 30
                    {
                        json!({ "cmd": "view", "ply": 0 })
                    } else {
                        json!({ "cmd": "move", "mv": legal[rng.random_range(0..legal.len())] })
                    };
                    assert_eq!(command(&address, &cookie, &body).status, 200, "{body}");
                    std::thread::sleep(Duration::from_millis(150));
                }
            })
        })
        .collect();
    let player = new_visitor(&address);
    let game = command(&address, &player, &json!({ "cmd": "new_game", "level": 0 })).json()["game"]
        .as_str()
        .unwrap()
        .to_string();
    std::thread::sleep(Duration::from_secs(2));
    let mut most_waiting = 0.0_f64;
    let mut slowest = Duration::ZERO;
    let mut turn = state(&address, &player, Some(&game)).json();
    for _ in 0..8 {
        if !turn["result"].is_null() {
            break;
        }
        let mv = turn["legal"][0].as_str().unwrap().to_string();
        let sent = Instant::now();
        let moved = command(
            &address,
            &player,
            &json!({ "cmd": "move", "mv": mv, "game": game }),
        );
        assert_eq!(moved.status, 200, "{}", moved.body);
        most_waiting = most_waiting.max(metric(&address, "agon_analysis_queue_length"));
        let queued = state(&address, &player, Some(&game)).json();
        assert!(
            queued["queue"].is_null() || queued["queue"]["position"] == 0,
            "no analysis goes before a game move: {}",
            queued["queue"]
        );
        turn = wait_for_turn(&address, &player, &game);
        slowest = slowest.max(sent.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for analyst in analysts {
        analyst.join().unwrap();
    }
    assert!(
        most_waiting >= 5.0,
        "the analyses queued behind the game moves: {most_waiting}"
    );
    // The bound: the game moves ahead (none here) plus the rest of the one
    // analysis the engine is running (200,000 nodes, well under a second on
    // a free core), never the analyses waiting.
    assert!(
        slowest < Duration::from_secs(5),
        "a game move waited {slowest:?} behind the analyses"
    );
    assert!(metric(&address, "agon_analyses_total") > 0.0);
}

#[test]
fn memory_holds_at_most_max_visitors_and_a_dropped_visitor_gets_their_games_back() {
    let dir = scratch_dir("serve-max-visitors");
    let (mut server, address) = start_server(&dir.join("games.sqlite"), &["--max-visitors", "5"]);
    let first = new_visitor(&address);
    let (game, _) = first_move(&address, &first, 0);
    let played = moves_of(&wait_for_turn(&address, &first, &game));
    assert_eq!(played.len(), 2);
    // Many more cookies than the cap: each new one takes the place of the
    // least recently active idle visitor.
    for _ in 0..40 {
        let cookie = new_visitor(&address);
        assert_eq!(state(&address, &cookie, None).status, 200);
        assert!(metric(&address, "agon_visitors_in_memory") <= 5.0);
    }
    assert_eq!(metric(&address, "agon_visitors_in_memory"), 5.0);
    assert_eq!(metric(&address, "agon_visitors_max"), 5.0);
    // The first visitor was dropped long ago: back, with their game.
    let back = state(&address, &first, None).json();
    let listed = back["library"].as_array().unwrap();
    assert!(listed.iter().any(|g| g["plies"] == 2), "{back}");
    assert_eq!(
        moves_of(&state(&address, &first, Some(&game)).json()),
        played
    );
    // Five pages open: every slot busy, a new visitor waits.
    let streams: Vec<TcpStream> = (0..5)
        .map(|_| {
            let (stream, status) = open_page(&address);
            assert_eq!(status, "HTTP/1.1 200");
            stream
        })
        .collect();
    let refused = state(&address, &new_visitor(&address), None);
    assert_eq!(refused.status, 503, "{}", refused.body);
    refused.assert_header("retry-after: 5");
    assert!(metric(&address, "agon_errors_total{kind=\"visitors_full\"}") >= 1.0);
    assert_eq!(metric(&address, "agon_visitors_in_memory"), 5.0);
    // A page closed frees its slot.
    drop(streams);
    let latecomer = new_visitor(&address);
    let deadline = Instant::now() + PATIENCE;
    while state(&address, &latecomer, None).status != 200 {
        assert!(Instant::now() < deadline, "no slot freed");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(server.next_line(Duration::from_millis(10)).is_none());
    assert_eq!(raw(&address, "GET /healthz HTTP/1.1", b"").status, 200);
}

#[test]
fn one_address_holds_at_most_its_share_of_open_pages() {
    let dir = scratch_dir("serve-streams");
    let (mut server, address) =
        start_server(&dir.join("games.sqlite"), &["--streams-per-address", "2"]);
    let open = || open_page(&address);
    let (first, status) = open();
    assert_eq!(status, "HTTP/1.1 200");
    let (_second, status) = open();
    assert_eq!(status, "HTTP/1.1 200");
    let errors = |kind: &str| metric(&address, &format!("agon_errors_total{{kind=\"{kind}\"}}"));
    let (refused_before, limited_before) = (errors("refused"), errors("rate_limited"));
    // A third page of the same address, with a cookie of its own, waits.
    let refused = raw(
        &address,
        &format!(
            "GET /api/events HTTP/1.1\r\nCookie: {}",
            new_visitor(&address)
        ),
        b"",
    );
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.json()["code"], "too-many-streams");
    assert_eq!(refused.json()["params"]["max"], 2);
    refused.assert_header("retry-after: 5");
    assert_eq!(errors("rate_limited"), limited_before + 1.0, "counted once");
    assert_eq!(errors("refused"), refused_before, "counted once");
    // Other requests of that address still pass.
    assert_eq!(state(&address, &new_visitor(&address), None).status, 200);
    // A page closed gives its slot back.
    drop(first);
    let deadline = Instant::now() + PATIENCE;
    while open().1 != "HTTP/1.1 200" {
        assert!(Instant::now() < deadline, "no slot freed");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(server.next_line(Duration::from_millis(10)).is_none());
}

/// An analysis board is bounded: an engine line of more than 64 moves and a
/// board of more than 600 moves are refused with their codes, and the board
/// keeps what it had.
#[test]
fn the_analysis_board_has_a_bound() {
    let dir = scratch_dir("serve-board-bound");
    let (_server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let visitor = new_visitor(&address);
    let opened = command(&address, &visitor, &json!({ "cmd": "analyse" }));
    assert_eq!(opened.status, 200, "{}", opened.body);
    // The queens walk sideways and back: a line that never ends the game.
    let shuffle = ["f1e1", "f11g11", "e1f1", "g11f11"];
    let line =
        |length: usize| -> Vec<&str> { shuffle.iter().copied().cycle().take(length).collect() };
    let shown = |address: &str| {
        state(address, &visitor, None).json()["fen"]
            .as_str()
            .unwrap()
            .to_string()
    };

    let long = command(
        &address,
        &visitor,
        &json!({ "cmd": "line", "fen": shown(&address), "moves": line(65) }),
    );
    assert_eq!(long.status, 400, "{}", long.body);
    assert_eq!(long.json()["code"], "line-too-long");
    for _ in 0..600 / 60 {
        let played = command(
            &address,
            &visitor,
            &json!({ "cmd": "line", "fen": shown(&address), "moves": line(60) }),
        );
        assert_eq!(played.status, 200, "{}", played.body);
    }
    let before = state(&address, &visitor, None).json();
    assert_eq!(moves_of(&before).len(), 600);
    let full = command(
        &address,
        &visitor,
        &json!({ "cmd": "move", "mv": before["legal"][0] }),
    );
    assert_eq!(full.status, 400, "{}", full.body);
    assert_eq!(full.json()["code"], "board-full");
    assert_eq!(
        moves_of(&state(&address, &visitor, None).json()),
        moves_of(&before)
    );
}

/// The limit of games in progress counts every one of them, however many
/// finished games came after: older games in progress stay listed.
#[test]
fn games_in_progress_are_counted_however_many_games_follow() {
    let dir = scratch_dir("serve-in-progress");
    let (_server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let visitor = new_visitor(&address);
    let (first, _) = first_move(&address, &visitor, 0);
    let (second, _) = first_move(&address, &visitor, 0);
    for _ in 0..12 {
        let (game, _) = first_move(&address, &visitor, 0);
        let resigned = command(
            &address,
            &visitor,
            &json!({ "cmd": "resign", "game": game }),
        );
        assert_eq!(resigned.status, 200, "{}", resigned.body);
    }
    for game in [&first, &second] {
        let shown = state(&address, &visitor, Some(game));
        assert_eq!(shown.status, 200, "{}", shown.body);
        assert!(shown.json()["result"].is_null(), "{}", shown.body);
    }
    first_move(&address, &visitor, 0);
    let fourth = command(
        &address,
        &visitor,
        &json!({ "cmd": "new_game", "level": 0 }),
    );
    assert_eq!(fourth.status, 409, "{}", fourth.body);
    assert_eq!(fourth.json()["code"], "too-many-games");
}

/// Another writer holding the database while the engine's reply is stored
/// holds the game up only as long as it holds the lock: the reply is
/// searched again and stored once the lock is gone, no ply lost or
/// doubled, and the game goes on.
#[test]
fn an_engine_move_that_cannot_be_stored_is_searched_again() {
    let dir = scratch_dir("serve-locked");
    let db = dir.join("games.sqlite");
    let (_server, address) = start_server(&db, &[]);
    let visitor = new_visitor(&address);
    // Full strength searches a whole second: time to take the lock before its reply.
    let (game, mv) = first_move(&address, &visitor, 4);
    let mut writer = rusqlite::Connection::open(&db).unwrap();
    writer.busy_timeout(PATIENCE).unwrap();
    let lock = writer
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    // Longer than the server waits for a lock (5 s): storing the reply fails.
    std::thread::sleep(Duration::from_secs(7));
    let locked = state(&address, &visitor, Some(&game)).json();
    assert_eq!(moves_of(&locked), [mv]);
    assert_eq!(locked["thinking"], "opponent", "{locked}");
    drop(lock);
    let replied = wait_for_turn(&address, &visitor, &game);
    assert_eq!(moves_of(&replied).len(), 2, "{replied}");
    assert!(
        metric(&address, "agon_errors_total{kind=\"internal\"}") >= 1.0,
        "storing the reply failed while the database was locked"
    );
    let next = replied["legal"][0].as_str().unwrap().to_string();
    let moved = command(
        &address,
        &visitor,
        &json!({ "cmd": "move", "mv": next, "game": game }),
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
    let after = moves_of(&wait_for_turn(&address, &visitor, &game));
    assert_eq!(after.len(), 4, "{after:?}");
    let mut statement = writer
        .prepare("SELECT mv FROM moves WHERE game = ?1 ORDER BY ply")
        .unwrap();
    let stored: Vec<String> = statement
        .query_map([&game], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored, after);
}

/// A start reads into memory only the visitors whose games wait for the
/// engine's move, however many games were left unfinished with the
/// visitor to move; those visitors get their games back when they return.
#[test]
fn a_start_reads_only_the_visitors_owed_an_engine_move() {
    let dir = scratch_dir("serve-start");
    let db = dir.join("games.sqlite");
    // A first start makes the database.
    drop(start_server(&db, &[]));
    let connection = rusqlite::Connection::open(&db).unwrap();
    let id = |n: usize| format!("{n:032x}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // No move yet: the engine is to move where the visitor plays Black.
    let store = |n: usize, human: &str| {
        connection
            .execute(
                "INSERT INTO games (id, visitor, level, human, start_fen, created, updated) \
                 VALUES (?1, ?2, 0, ?3, ?4, ?5, ?5)",
                rusqlite::params![
                    id(1000 + n),
                    id(n),
                    human,
                    agon::rules::START_FEN,
                    i64::try_from(now).unwrap()
                ],
            )
            .unwrap();
    };
    let owed = [0, 1];
    for n in owed {
        store(n, "black");
    }
    for n in 2..22 {
        store(n, "white");
    }
    let (_server, address) = start_server(&db, &["--max-visitors", "5"]);
    assert_eq!(metric(&address, "agon_visitors_in_memory"), 2.0);
    for n in owed {
        let cookie = format!("agon_visitor={}", id(n));
        let replied = wait_for_turn(&address, &cookie, &id(1000 + n));
        assert_eq!(moves_of(&replied).len(), 1, "{replied}");
    }
    let cookie = format!("agon_visitor={}", id(21));
    let back = state(&address, &cookie, Some(&id(1021)));
    assert_eq!(back.status, 200, "{}", back.body);
    assert_eq!(back.json()["human"], "white", "{}", back.body);
}
