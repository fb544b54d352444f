//! The browser GUI end to end: the real `agon gui` server, Debian's headless
//! Chromium (tests/common/browser.rs), a person's clicks and the page's
//! `data-*` contract. Moves read back from the page are replayed through the
//! rules core.

#[path = "common/browser.rs"]
mod browser;

use agon::rules::{Game, GameResult, parse_fen, to_fen};
use browser::{BROWSER, Browser, PATIENCE, browser, gui_page, http_answer, http_status, start_gui};
use fantoccini::Locator;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Replays the moves from `fen` through the rules core; every one must be legal.
fn replay(fen: &str, moves: &[String]) -> Game {
    let mut game = Game::new(parse_fen(fen).expect("start FEN"));
    for (index, mv) in moves.iter().enumerate() {
        game.play_text(mv)
            .unwrap_or_else(|e| panic!("ply {} {mv} is illegal: {e}", index + 1));
    }
    game
}

/// Clicks the first legal move the page offers: an origin, then a destination.
async fn click_some_move(page: &Browser) {
    let origin = page
        .js("const e = document.querySelector('.cell.origin'); return e ? e.dataset.cell : null;")
        .await;
    let origin = origin.as_str().expect("a piece to move").to_string();
    page.click_cell(&origin).await;
    let dest = page
        .js("const e = document.querySelector('.cell.dest'); return e ? e.dataset.cell : null;")
        .await;
    let dest = dest.as_str().expect("a destination").to_string();
    page.click_cell(&dest).await;
}

async fn human_to_move(page: &Browser) -> bool {
    page.js("return !!document.querySelector('.cell.origin');")
        .await
        .as_bool()
        .unwrap_or(false)
}

async fn game_over(page: &Browser) -> bool {
    page.js("return !document.getElementById('banner').hidden;")
        .await
        .as_bool()
        .unwrap_or(false)
}

/// Only this suite's own relocation-and-capture position.
const RELOCATION_FEN: &str = "q5/7/8/9/3G*5g/11/10/9/8/7/Gg3Q w 1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_person_plays_by_clicking_through_a_relocation_and_a_capture() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    let opened = Instant::now();
    page.open(&url).await;
    eprintln!(
        "board painted {:.0} ms after navigation start ({:.0} ms from goto)",
        page.js("return window.agonStats.firstPaintMs;")
            .await
            .as_f64()
            .unwrap_or(-1.0),
        opened.elapsed().as_secs_f64() * 1000.0
    );
    // The contract: 91 cells, the start position, the person plays White.
    page.assert_board_is(agon::rules::START_FEN).await;
    assert_eq!(page.text("#mode-label").await, "playing White");
    page.screenshot("start").await;

    // A hint is an arrow on the board; then a first move by clicking.
    page.click("#hint").await;
    page.wait_until("the hint arrow", async || {
        page.js("return !!document.querySelector('.arrow.hint');")
            .await
            .as_bool()
            .unwrap_or(false)
    })
    .await;
    page.click_cell("f1").await;
    assert!(page.classes("f2").await.contains("dest"), "f2 is offered");
    page.click_cell("f2").await;
    page.wait_until("the engine's reply", async || page.moves().await.len() == 2)
        .await;

    // A study position: White must relocate its captured guard, and e7c1 captures b1.
    page.select("#play-level", "0").await;
    page.set_input("#fen", RELOCATION_FEN).await;
    page.click("#new-game-fen").await;
    page.wait_until("the study position", async || {
        page.piece("e7").await == "G*"
    })
    .await;
    assert!(
        page.classes("e7").await.contains("relocate"),
        "the captured guard is highlighted"
    );
    assert!(page.text("#status").await.contains("relocate"));
    page.click_cell("e7").await;
    assert!(page.classes("c1").await.contains("dest"));
    assert!(
        page.classes("a6").await.contains("dest"),
        "any empty outer cell"
    );
    assert!(
        !page.classes("f6").await.contains("dest"),
        "a guard never goes to the throne"
    );
    assert!(
        !page.classes("e6").await.contains("dest"),
        "nor inside the outer ring"
    );
    page.screenshot("relocation").await;
    page.click_cell("c1").await;
    page.wait_until("the capture", async || page.piece("c1").await == "G")
        .await;
    // The engine must now relocate its captured guard: b1 empties.
    page.wait_until("Black's relocation", async || page.moves().await.len() == 2)
        .await;
    assert_eq!(
        page.piece("b1").await,
        "",
        "the captured black guard was relocated"
    );

    // Play on by clicking; every reply must be legal.
    let mut clicks = 0;
    while clicks < 6 && !game_over(&page).await {
        page.wait_until("the person's turn", async || {
            human_to_move(&page).await || game_over(&page).await
        })
        .await;
        if game_over(&page).await {
            break;
        }
        let before = page.moves().await.len();
        click_some_move(&page).await;
        page.wait_until("the move and the reply", async || {
            let now = page.moves().await.len();
            now == before + 2 || (now == before + 1 && game_over(&page).await)
        })
        .await;
        clicks += 1;
    }
    let moves = page.moves().await;
    assert_eq!(moves[0], "e7c1");
    let game = replay(RELOCATION_FEN, &moves);
    page.wait_until("the board of the last move", async || {
        page.text("#fen").await == to_fen(game.position())
    })
    .await;
    page.assert_board_is(&to_fen(game.position())).await;
    let delays = page.js("return window.agonStats.moveDelaysMs;").await;
    eprintln!("click-to-board delays (ms): {delays}");
    page.screenshot("play").await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn analysis_follows_the_position_shown() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.click("#free-analysis").await;
    page.wait_until("analysis mode", async || {
        page.text("#mode-label").await == "analysis"
    })
    .await;
    page.click("#analyse-toggle").await;
    let first_line = async || page.text("#pv-lines li .pv").await;
    page.wait_until("a score and a line", async || {
        page.text("#an-score").await.contains("White") && !first_line().await.is_empty()
    })
    .await;
    // Updates a second during `go infinite`.
    let before = page
        .js("return window.agonStats.analysisUpdates;")
        .await
        .as_f64()
        .unwrap_or(0.0);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = page
        .js("return window.agonStats.analysisUpdates;")
        .await
        .as_f64()
        .unwrap_or(0.0);
    let rate = (after - before) / 3.0;
    eprintln!("analysis updates per second during go infinite: {rate:.1}");
    assert!(rate <= 11.0, "updates are throttled: {rate}/s");
    let start_line = first_line().await;
    page.screenshot("analysis").await;

    page.click_cell("f1").await;
    page.click_cell("f2").await;
    page.wait_until("the move", async || page.piece("f2").await == "Q")
        .await;
    // The analysis restarts for Black; its line must be legal in the new position.
    page.wait_until("a new line", async || {
        let line = first_line().await;
        let pv: Vec<String> = line.split_whitespace().map(String::from).collect();
        !pv.is_empty() && line != start_line && {
            let mut game = replay(agon::rules::START_FEN, &["f1f2".to_string()]);
            pv.iter().all(|mv| game.play_text(mv).is_ok())
        }
    })
    .await;
    // Going back shows the start position's analysis again, not the stale one.
    page.click("#nav-back").await;
    page.wait_until("the start position", async || page.piece("f1").await == "Q")
        .await;
    page.wait_until("analysis of the start", async || {
        let line = first_line().await;
        let pv: Vec<String> = line.split_whitespace().map(String::from).collect();
        !pv.is_empty() && replay(agon::rules::START_FEN, &pv[..1]).moves().len() == 1
    })
    .await;
    page.click("#analyse-toggle").await;
    page.wait_until("the analysis stopped", async || {
        page.text("#analyse-toggle").await == "Analyse"
    })
    .await;
    assert!(
        !page.text("#an-score").await.is_empty(),
        "the last result stays"
    );
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn match_records_open_step_to_the_end_and_round_trip() {
    let _one = BROWSER.lock().await;
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("gui-pgn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    let jsonl = dir.join("games.jsonl");
    let me = env!("CARGO_BIN_EXE_agon");
    let status = Command::new(me)
        .args([
            "match",
            "-engine",
            &format!("cmd={me}"),
            "name=agon",
            "depth=2",
        ])
        .args([
            "-engine",
            &format!("cmd={me}"),
            "args=random --seed 3",
            "name=random",
            "depth=1",
        ])
        .args([
            "-games",
            "3",
            "-maxmoves",
            "40",
            "-openings",
            "random",
            "plies=2",
            "seed=5",
        ])
        .arg("-pgnout")
        .arg(&pgn)
        .arg("-jsonl")
        .arg(&jsonl)
        .stdout(Stdio::null())
        .status()
        .expect("agon match runs");
    assert!(status.success());
    let finals: Vec<String> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["final_fen"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(finals.len(), 3);

    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    page.open(&url).await;
    page.click("#panel-records summary").await;
    page.client
        .find(Locator::Css("#pgn-file"))
        .await
        .unwrap()
        .send_keys(pgn.to_str().unwrap())
        .await
        .unwrap();
    page.wait_until("three games listed", async || {
        page.js("return document.querySelectorAll('#library option').length;")
            .await
            == 3
    })
    .await;
    page.select("#library", "1").await;
    page.wait_until("the second game", async || {
        page.text("#mode-label").await == "analysis"
    })
    .await;
    // The End key steps to the end; Left and Right step one ply.
    page.click("body").await;
    page.js("document.activeElement.blur();").await;
    let keys = page.client.find(Locator::Css("body")).await.unwrap();
    keys.send_keys("\u{E010}").await.unwrap();
    page.wait_until("the final position", async || {
        page.text("#fen").await == finals[1]
    })
    .await;
    page.assert_board_is(&finals[1]).await;
    keys.send_keys("\u{E012}").await.unwrap();
    page.wait_until("one ply back", async || {
        page.text("#fen").await != finals[1]
    })
    .await;
    keys.send_keys("\u{E014}").await.unwrap();
    page.wait_until("forward again", async || {
        page.text("#fen").await == finals[1]
    })
    .await;
    let scored = page
        .js("return Array.from(document.querySelectorAll('#moves .ply small')).length;")
        .await;
    assert!(
        scored.as_u64().unwrap_or(0) > 0,
        "per-move scores are shown"
    );
    page.screenshot("records").await;

    // Export, start afresh, import: the same moves and the same end.
    let moves = page.moves().await;
    page.click("#pgn-export").await;
    page.wait_until("the exported text", async || {
        page.text("#pgn-text").await.contains("[FEN")
    })
    .await;
    let exported = page.text("#pgn-text").await;
    let original = std::fs::read_to_string(&pgn).unwrap();
    let movetext = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with('[') && !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let second = original.split("[Event").nth(2).expect("a second game");
    let second = &second[second.find('\n').unwrap_or(0)..];
    assert_eq!(
        movetext(&exported),
        movetext(second),
        "the export keeps the match's moves and comments"
    );
    page.click("#new-game").await;
    page.wait_until("a new game", async || page.moves().await.is_empty())
        .await;
    page.set_input("#pgn-text", &exported).await;
    page.click("#pgn-import").await;
    page.wait_until("the imported game", async || page.moves().await == moves)
        .await;
    keys.send_keys("\u{E010}").await.unwrap();
    page.wait_until("its final position", async || {
        page.text("#fen").await == finals[1]
    })
    .await;
    let again = page
        .js("return fetch('/api/pgn', {headers: {'x-agon-token': token}}).then(r => r.text());")
        .await;
    assert_eq!(
        again
            .as_str()
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("[Date"))
            .collect::<Vec<_>>(),
        exported
            .lines()
            .filter(|l| !l.starts_with("[Date"))
            .collect::<Vec<_>>(),
        "export, import, export gives the same record"
    );
    page.assert_no_errors().await;
    page.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn an_engine_game_ends_as_the_rules_say() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.click("#panel-watch summary").await;
    page.select("#watch-white", "0").await;
    page.select("#watch-black", "1").await;
    page.set_input("#watch-tc", "0.2+0.01").await;
    page.click("#watch-start").await;
    page.wait_until("the engines moving", async || page.moves().await.len() >= 4)
        .await;
    page.click("#watch-pause").await;
    page.wait_until("paused", async || {
        page.text("#watch-pause").await == "Resume"
    })
    .await;
    let paused_at = page.moves().await.len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        page.moves().await.len() <= paused_at + 1,
        "no moves while paused"
    );
    page.click("#watch-pause").await;
    let deadline = Instant::now() + Duration::from_secs(90);
    while !game_over(&page).await {
        assert!(Instant::now() < deadline, "the engine game did not finish");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let moves = page.moves().await;
    let game = replay(agon::rules::START_FEN, &moves);
    let winner = page
        .js("return document.getElementById('banner').dataset.winner;")
        .await;
    let termination = page
        .js("return document.getElementById('banner').dataset.termination;")
        .await;
    match game.result() {
        GameResult::Win { winner: w, reason } => {
            assert_eq!(winner.as_str(), Some(w.name()), "{moves:?}");
            assert_eq!(termination.as_str(), Some(reason.name()));
        }
        GameResult::Draw => assert_eq!(winner.as_str(), Some("draw")),
        GameResult::Ongoing => {
            // Only the clock can end a game the board has not.
            assert_eq!(termination.as_str(), Some("time forfeit"), "{moves:?}");
        }
    }
    page.screenshot("engine-game").await;
    // Step back through the finished game.
    page.click("#nav-start").await;
    page.wait_until("the start", async || {
        page.text("#fen").await == agon::rules::START_FEN
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_crashing_engine_is_reported_and_the_page_keeps_working() {
    let (_one, _gui, page) =
        gui_page(&["--engine", "python3 tests/engines/scripted.py crash"]).await;
    // The scripted engine shuffles once, then exits instead of answering.
    page.click_cell("f1").await;
    page.click_cell("e1").await;
    page.wait_until("the shuffle", async || page.piece("g11").await == "q")
        .await;
    page.click_cell("e1").await;
    page.click_cell("f1").await;
    page.wait_until("the crash report", async || {
        page.text("#notice").await.contains("crash") && game_over(&page).await
    })
    .await;
    page.click("#panel-engines summary").await;
    assert!(page.text("#engines").await.contains("failed"));
    page.screenshot("crash").await;
    // Another engine, a new game, a move and a reply.
    page.select("#play-engine", "0").await;
    page.select("#play-level", "0").await;
    page.click("#new-game").await;
    page.wait_until("a new game", async || {
        page.moves().await.is_empty() && !game_over(&page).await
    })
    .await;
    page.click_cell("f1").await;
    page.click_cell("f2").await;
    page.wait_until("agon's reply", async || page.moves().await.len() == 2)
        .await;
    replay(agon::rules::START_FEN, &page.moves().await);
    page.assert_no_errors().await;
    page.close().await;
}

#[test]
fn requests_without_the_token_or_with_a_foreign_host_are_refused() {
    let (_gui, url) = start_gui(&[]);
    let rest = url.trim_start_matches("http://127.0.0.1:");
    let (port, query) = rest.split_once('/').unwrap();
    let port: u16 = port.parse().unwrap();
    let token = query.trim_start_matches("?token=");
    let host = format!("127.0.0.1:{port}");
    assert_eq!(http_status(port, "/api/state", &host, None), 401);
    assert_eq!(http_status(port, "/api/state", &host, Some("0123")), 401);
    assert_eq!(http_status(port, "/", &host, None), 401);
    assert_eq!(http_status(port, "/api/events", &host, None), 401);
    assert_eq!(
        http_status(port, "/api/state", "evil.example:80", Some(token)),
        403
    );
    assert_eq!(http_status(port, "/api/state", &host, Some(token)), 200);
    // axum's own refusals are problems like every other.
    for (request, status, code) in [
        ("GET /nowhere", 404, "not-found"),
        ("POST /app.js", 405, "method-not-allowed"),
        ("DELETE /api/state", 405, "method-not-allowed"),
    ] {
        let (given, body) = http_answer(port, request, &host, Some(token), "");
        assert_eq!(given, status, "{request}: {body}");
        let problem: serde_json::Value = serde_json::from_str(&body).expect(&body);
        assert_eq!(problem["code"], code, "{request}: {body}");
    }
    assert_eq!(
        http_status(
            port,
            &format!("/?token={token}"),
            &format!("localhost:{port}"),
            None
        ),
        200
    );
}

#[test]
fn sigterm_ends_the_server_and_its_engines() {
    let (mut gui, url) = start_gui(&[]);
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("token=").nth(1).unwrap();
    // The default engine runs from the start; find it among the server's children.
    let server = gui.0.id().to_string();
    let children = || {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...
            let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
            if after.split_whitespace().nth(1) == Some(server.as_str()) {
                found.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        found
    };
    let deadline = Instant::now() + PATIENCE;
    while children().is_empty() {
        assert!(Instant::now() < deadline, "no engine process started");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        http_status(
            port,
            "/api/state",
            &format!("127.0.0.1:{port}"),
            Some(token)
        ),
        200
    );
    let engines = children();
    // An open page's event stream must not hold the shutdown up.
    let mut events = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        events,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-agon-token: {token}\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 64];
    let read = events.read(&mut first).unwrap();
    assert!(
        String::from_utf8_lossy(&first[..read]).starts_with("HTTP/1.1 200"),
        "the event stream opens"
    );
    Command::new("kill")
        .arg("-TERM")
        .arg(gui.0.id().to_string())
        .status()
        .unwrap();
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(Some(status)) = gui.0.try_wait() {
            assert!(status.success(), "agon gui exits cleanly: {status}");
            break;
        }
        assert!(Instant::now() < deadline, "agon gui did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in engines {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "engine {pid} still runs");
    }
}

async fn exported_pgn(page: &Browser) -> String {
    page.js_async(
        "const done = arguments[arguments.length - 1]; api('/api/pgn').then(r => r.text()).then(done);",
    )
    .await
    .as_str()
    .unwrap_or_default()
    .lines()
    .filter(|l| !l.starts_with("[Date"))
    .collect::<Vec<_>>()
    .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_sideline_is_created_promoted_deleted_and_kept_by_pgn() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.play_free_moves(4).await;
    let main = page.moves().await;
    assert_eq!(main.len(), 4);
    // A different third move, played at ply 2, starts a sideline.
    page.js("command({cmd: 'view', ply: 2});").await;
    page.wait_until("ply 2", async || page.js("return state.cursor;").await == 2)
        .await;
    let other = page
        .js(&format!(
            "return state.legal.find(mv => mv !== '{}');",
            main[2]
        ))
        .await;
    let other = other.as_str().expect("another move").to_string();
    page.set_input("#move-input", &other).await;
    page.click("#move-form button").await;
    page.wait_until("the sideline", async || {
        page.moves().await == [&main[..2], std::slice::from_ref(&other)].concat()
    })
    .await;
    assert_eq!(
        page.text("#moves .alt").await,
        main[2],
        "the main move is offered"
    );
    assert!(
        page.flag(
            "return document.querySelector('#moves .ply.current').classList.contains('side');"
        )
        .await
    );
    // The sideline is written as a variation and read back the same.
    let with_variation = exported_pgn(&page).await;
    assert!(
        with_variation.contains(&format!("( 2. {other}"))
            || with_variation.contains(&format!("( 2... {other}")),
        "{with_variation}"
    );
    // Following the main move again shows the main line whole.
    page.click("#moves .alt").await;
    page.wait_until("the main line", async || page.moves().await == main)
        .await;
    // Back into the sideline and promote it: it becomes the main line.
    page.click("#moves .alt").await;
    page.wait_until("the sideline again", async || page.moves().await.len() == 3)
        .await;
    page.click("#promote").await;
    page.wait_until("promoted", async || {
        page.flag("return state.moves[2].main;").await
    })
    .await;
    let promoted = exported_pgn(&page).await;
    assert_ne!(promoted, with_variation);
    page.click("#panel-records summary").await;
    page.set_input("#pgn-text", &promoted).await;
    page.click("#pgn-import").await;
    page.wait_until("the import", async || {
        page.js("return state.cursor;").await == 0
    })
    .await;
    assert_eq!(
        exported_pgn(&page).await,
        promoted,
        "export, import, export"
    );
    // Delete the old main move, now a sideline: one line is left.
    page.js(
        "const alt = state.moves[2].alternatives[0]; command({cmd: 'choose', node: alt.node});",
    )
    .await;
    page.wait_until("the old main line", async || page.moves().await == main)
        .await;
    page.js("command({cmd: 'view', ply: 3});").await;
    page.wait_until("ply 3", async || page.js("return state.cursor;").await == 3)
        .await;
    page.click("#delete-move").await;
    page.wait_until("deleted", async || {
        page.moves().await == [&main[..2], std::slice::from_ref(&other)].concat()
    })
    .await;
    assert!(!exported_pgn(&page).await.contains('('));
    page.assert_no_errors().await;
    page.close().await;
}

/// Opens a PGN file's first game through the Records panel.
async fn open_pgn(page: &Browser, path: &str) {
    let pgn = std::fs::read_to_string(path).expect("the PGN");
    page.js("document.getElementById('panel-records').open = true;")
        .await;
    page.set_input("#pgn-text", &pgn).await;
    page.click("#pgn-import").await;
    page.wait_until("the game read", async || {
        page.text("#mode-label").await == "analysis" && !page.moves().await.is_empty()
    })
    .await;
}

/// Runs a review of the line shown; returns its milliseconds.
async fn review(page: &Browser) -> f64 {
    page.click("#review-start").await;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let review = page.js("return state.review;").await;
        if review["running"] == false && review["ms"].is_number() {
            return review["ms"].as_f64().unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "the review did not end: {review}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_game_review_finds_the_planted_blunder() {
    let (_one, _gui, page) = gui_page(&[]).await;
    open_pgn(&page, "tests/data/gui-planted-blunder.pgn").await;
    assert!(page.text("#graph .empty").await.contains("no scores"));
    review(&page).await;
    // Ply 74, Black's d7d6, is the blunder planted in the record.
    let blunders = page
        .js("return Array.from(document.querySelectorAll('#review-list li[data-mark=blunder]')).map(li => li.dataset.ply);")
        .await;
    assert!(
        blunders
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("74")),
        "blunders found: {blunders}"
    );
    assert_eq!(
        page.js("return document.querySelector('#moves .ply[data-ply=\"74\"]').dataset.mark;")
            .await,
        "blunder"
    );
    assert!(
        page.flag(
            "return !!document.querySelector('#graph circle.mark.blunder[data-ply=\"74\"]');"
        )
        .await
    );
    assert!(
        page.text("#graph .empty").await.is_empty(),
        "the graph has the review's scores"
    );
    page.click("#review-list li[data-ply=\"74\"]").await;
    page.wait_until("the blunder shown", async || {
        page.js("return state.cursor;").await == 74
    })
    .await;
    page.screenshot("review").await;

    // The measured figure: a review of a 100-move (200-ply) game.
    open_pgn(&page, "tests/data/gui-hundred-moves.pgn").await;
    let plies = page.moves().await.len();
    let ms = review(&page).await;
    eprintln!(
        "review of {plies} plies: {ms:.0} ms, {:.1} positions per second",
        (plies + 1) as f64 / (ms / 1000.0)
    );
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_click_on_an_engine_line_move_reaches_its_position_and_arrows_follow_the_lines() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.click("#free-analysis").await;
    page.select("#multipv", "3").await;
    page.click("#analyse-toggle").await;
    page.wait_until("three lines of three moves", async || {
        page.flag("const l = document.querySelectorAll('#pv-lines li'); return l.length === 3 && Array.from(l).every(li => li.dataset.pv.split(' ').length >= 3);")
            .await
    })
    .await;
    // One arrow per distinct first move, the best boldest.
    let widths = page
        .js("return Array.from(document.querySelectorAll('.arrow.best')).map(a => parseFloat(a.style.strokeWidth));")
        .await;
    let widths: Vec<f64> = widths
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_f64())
        .collect();
    assert!(widths.len() >= 2, "{widths:?}");
    assert!(widths.windows(2).all(|w| w[0] > w[1]), "{widths:?}");
    // The third move of the second line, once the search stops (the lines stay).
    page.click("#analyse-toggle").await;
    page.wait_until("stopped", async || {
        page.text("#analyse-toggle").await == "Analyse"
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let line = page
        .js("const li = document.querySelectorAll('#pv-lines li')[1]; return [li.dataset.fen, li.dataset.pv];")
        .await;
    let pv: Vec<String> = line[1]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    page.click("#pv-lines li:nth-child(2) .step[data-index=\"2\"]")
        .await;
    page.wait_until("the position after it", async || {
        page.moves().await == pv[..3]
    })
    .await;
    let game = replay(line[0].as_str().unwrap(), &pv[..3]);
    page.wait_until("the board", async || {
        page.js("return document.getElementById('board').dataset.fen;")
            .await
            == to_fen(game.position()).as_str()
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

/// `agon gui` with these arguments: its port, `Host` header and token.
fn gui_address(url: &str) -> (u16, String, String) {
    let rest = url.trim_start_matches("http://127.0.0.1:");
    let (port, query) = rest.split_once('/').unwrap();
    let port: u16 = port.parse().unwrap();
    let token = query.trim_start_matches("?token=").to_string();
    (port, format!("127.0.0.1:{port}"), token)
}

#[test]
fn refused_commands_change_nothing_and_a_review_outlives_its_analyst() {
    use serde_json::{Value, json};
    // Engine 2 answers `go` 3 s late; engine 1 is agon random.
    let (_gui, url) = start_gui(&["--engine", "python3 tests/engines/scripted.py late 3"]);
    let (port, host, token) = gui_address(&url);
    let send = |request: &str, body: &str| http_answer(port, request, &host, Some(&token), body);
    let command = |body: Value| send("POST /api/command", &body.to_string());
    let state = || -> Value { serde_json::from_str(&send("GET /api/state", "").1).unwrap() };
    let seat = |role: &str| {
        state()["engines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|seat| seat["role"] == role)
            .cloned()
            .unwrap()
    };

    // A watch naming one engine that does not exist changes neither seat.
    assert_eq!(
        command(json!({"cmd": "watch", "white": 1, "black": 1})).0,
        200
    );
    let (status, body) = command(json!({"cmd": "watch", "white": 0, "black": 99}));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no-engine"), "{body}");
    assert_eq!(seat("white")["choice"], 1);
    assert_eq!(seat("black")["choice"], 1);

    // A takeback refused while the engine thinks leaves its search running:
    // its move comes after its 3 s, not 3 s after a restarted search.
    let asked = Instant::now();
    let (status, body) =
        command(json!({"cmd": "new_game", "human": "black", "engine": 2, "level": 4}));
    assert_eq!(status, 200, "{body}");
    let (status, body) = command(json!({"cmd": "takeback"}));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("nothing-to-take-back"), "{body}");
    while state()["moves"].as_array().is_none_or(Vec::is_empty) {
        assert!(
            asked.elapsed() < Duration::from_millis(5_500),
            "the engine's search was restarted by a refused takeback"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A review goes on when the analyst changes under it.
    let pgn = std::fs::read_to_string("tests/data/gui-three-games.pgn").unwrap();
    let (status, body) = send("POST /api/pgn", &pgn);
    assert_eq!(status, 200, "{body}");
    assert_eq!(command(json!({"cmd": "review"})).0, 200);
    assert_eq!(
        command(json!({"cmd": "set_engine", "role": "analyst", "engine": 1})).0,
        200
    );
    let deadline = Instant::now() + PATIENCE;
    loop {
        let review = state()["review"].clone();
        if review["running"] == false && review["done"] == review["total"] {
            break;
        }
        assert!(Instant::now() < deadline, "the review stopped: {review}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_engine_refusal_takes_back_the_option_it_refused_and_no_other() {
    use serde_json::{Value, json};
    let (_gui, url) = start_gui(&[]);
    let (port, host, token) = gui_address(&url);
    let send = |request: &str, body: &str| http_answer(port, request, &host, Some(&token), body);
    let command = |body: Value| send("POST /api/command", &body.to_string());
    let analyst = || -> Value {
        let state: Value = serde_json::from_str(&send("GET /api/state", "").1).unwrap();
        state["engines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|seat| seat["role"] == "analyst")
            .cloned()
            .unwrap()
    };
    assert_eq!(command(json!({"cmd": "analysis", "on": true})).0, 200);
    let deadline = Instant::now() + PATIENCE;
    while analyst()["status"] != "searching" {
        assert!(Instant::now() < deadline, "the analyst never searched");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Set while the analyst searches, both options apply at once (the
    // analysis restarts): the engine refuses the first and takes the second.
    for (name, value) in [("Ponder", "maybe"), ("Hash", "32")] {
        let (status, body) =
            command(json!({"cmd": "set_option", "role": "analyst", "name": name, "value": value}));
        assert_eq!(status, 200, "{body}");
    }
    let deadline = Instant::now() + PATIENCE;
    loop {
        let seat = analyst();
        if seat["error"].is_object() && seat["values"] == json!([["Hash", "32"]]) {
            break;
        }
        assert!(Instant::now() < deadline, "{seat}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        analyst()["error"].to_string().contains("Ponder"),
        "{}",
        analyst()
    );
}
