//! `agon serve` through its HTTP API: a load killed with SIGKILL loses and
//! doubles nothing, hostile requests are refused with the right status and
//! change no game, and SIGTERM ends the server and its engines.

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

/// `agon serve` on a free port with this database, and its address.
fn start_server(db: &Path, extra: &[&str]) -> (Agon, String) {
    let db = db.to_string_lossy().into_owned();
    let mut args = vec![
        "serve",
        "--port",
        "0",
        "--db",
        &db,
        "--engines",
        "2",
        "--rate",
        "100000",
    ];
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
    let stored_moves = |game: &str| -> Vec<String> {
        let connection = rusqlite::Connection::open(&db).unwrap();
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
    let mut games_of: HashMap<String, usize> = HashMap::new();
    for (game, (cookie, acknowledged)) in &last {
        *games_of.entry(cookie.clone()).or_default() += 1;
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
    for (cookie, count) in games_of {
        let listed = state(&address, &cookie, None).json()["library"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["plies"].as_u64().unwrap() > 0)
            .count();
        assert_eq!(listed, count, "visitor {cookie}: no game doubled or lost");
    }
}

#[test]
fn hostile_requests_are_refused_and_change_no_game() {
    let dir = scratch_dir("serve-fuzz");
    let (mut server, address) = start_server(&dir.join("games.sqlite"), &[]);
    let owner = new_visitor(&address);
    let other = new_visitor(&address);
    let reply = command(&address, &owner, &json!({ "cmd": "new_game", "level": 0 }));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let game = reply.json()["game"].as_str().unwrap().to_string();
    let first = state(&address, &owner, Some(&game)).json();
    let mv = first["legal"][0].as_str().unwrap().to_string();
    let moved = command(
        &address,
        &owner,
        &json!({ "cmd": "move", "mv": mv, "game": game }),
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
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
    }
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
        (json!({ "cmd": "watch", "white": 0, "black": 0 }), 403),
        (json!({ "cmd": "analysis", "on": true }), 403),
        (json!({ "cmd": "multipv", "lines": 5 }), 403),
        (json!({ "cmd": "hint" }), 403),
        (json!({ "cmd": "analyse" }), 403),
        (json!({ "cmd": "no_such_command" }), 400),
        (json!({ "cmd": "resign", "game": "not-an-id" }), 404),
    ];
    for (body, status) in &refused_commands {
        let answer = command(&address, &owner, body);
        assert_eq!(answer.status, *status, "{body}: {}", answer.body);
    }
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
    let health = raw(&address, "GET /healthz HTTP/1.1", b"");
    let deadline = Instant::now() + PATIENCE;
    let mut health = health;
    while health.status != 200 {
        assert!(Instant::now() < deadline, "never healthy: {}", health.body);
        std::thread::sleep(Duration::from_millis(100));
        health = raw(&address, "GET /healthz HTTP/1.1", b"");
    }
    let visitor = new_visitor(&address);
    // An open event stream must not hold the shutdown up.
    let mut events = TcpStream::connect(&address).unwrap();
    write!(
        events,
        "GET /api/events HTTP/1.1\r\nHost: {address}\r\nCookie: {visitor}\r\n\r\n"
    )
    .unwrap();
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
    let reply = command(
        &address,
        &visitor,
        &json!({ "cmd": "new_game", "level": 4 }),
    );
    let game = reply.json()["game"].as_str().unwrap().to_string();
    let first = state(&address, &visitor, Some(&game)).json();
    let mv = first["legal"][0].as_str().unwrap().to_string();
    let moved = command(
        &address,
        &visitor,
        &json!({ "cmd": "move", "mv": mv, "game": game }),
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
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
    assert!(metrics.contains("agon_engines 2\n"), "{metrics}");
    let replaced = children_of(server.pid());
    assert!(
        replaced.iter().all(|pid| !engines.contains(pid)),
        "{replaced:?}"
    );
}
