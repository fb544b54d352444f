//! The page tried as a new user would, in headless Chromium: one test for
//! each defect found that way (numbered as in README's list), and the
//! layout, orientation and navigation guarantees of the analysis board.

#[path = "common/browser.rs"]
mod browser;

use agon::rules::{Game, parse_fen};
use browser::{BROWSER, Browser, browser, browser_sized, gui_page, http_status, start_gui};
use std::time::{Duration, Instant};

/// Every engine line shown starts from the position on the board, and its
/// first move is legal there (checked by the rules core).
async fn lines_belong_to_the_board(page: &Browser) -> Result<(), String> {
    let shown = page
        .js("return {fen: document.getElementById('board').dataset.fen, lines: Array.from(document.querySelectorAll('#pv-lines li')).map(li => [li.dataset.fen, li.dataset.pv])};")
        .await;
    let board = shown["fen"].as_str().unwrap_or_default().to_string();
    for line in shown["lines"].as_array().into_iter().flatten() {
        let (fen, pv) = (
            line[0].as_str().unwrap_or(""),
            line[1].as_str().unwrap_or(""),
        );
        if fen != board {
            return Err(format!("a line of {fen} under the board {board}"));
        }
        let first = pv.split_whitespace().next().unwrap_or_default();
        let mut game = Game::new(parse_fen(&board).map_err(|e| e.to_string())?);
        game.play_text(first)
            .map_err(|e| format!("line {pv} is not legal from {board}: {e}"))?;
    }
    Ok(())
}

async fn line_count(page: &Browser) -> u64 {
    page.js("return document.querySelectorAll('#pv-lines li').length;")
        .await
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_1_analysis_lines_never_belong_to_another_position() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.play_free_moves(6).await;
    page.click("#analyse-toggle").await;
    page.wait_until("lines", async || line_count(&page).await > 0)
        .await;
    page.click("#analyse-toggle").await;
    page.wait_until("stopped", async || {
        page.text("#analyse-toggle").await == "Analyse"
    })
    .await;
    page.click("#nav-start").await;
    page.wait_until("the start", async || {
        page.text("#fen").await == agon::rules::START_FEN
    })
    .await;
    lines_belong_to_the_board(&page).await.unwrap();
    assert_eq!(line_count(&page).await, 0, "no lines of the end position");
    page.click("#new-game").await;
    page.wait_until("a new game", async || page.moves().await.is_empty())
        .await;
    lines_belong_to_the_board(&page).await.unwrap();

    // Lines are never of another position while stepping quickly with analysis on.
    page.play_free_moves(10).await;
    page.click("#analyse-toggle").await;
    page.wait_until("lines", async || line_count(&page).await > 0)
        .await;
    for round in 0..12 {
        page.keys(if round % 3 == 2 {
            "\u{E014}"
        } else {
            "\u{E012}"
        })
        .await;
        lines_belong_to_the_board(&page).await.unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        lines_belong_to_the_board(&page).await.unwrap();
    }
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_2_a_phone_page_does_not_jump_when_moves_are_played() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser_sized(390, 844).await;
    page.open(&url).await;
    page.select("#play-level", "0").await;
    page.click("#new-game").await;
    page.wait_until("level 1", async || page.moves().await.is_empty())
        .await;
    page.js("window.scrollTo(0, 0);").await;
    for mv in 0..4 {
        page.wait_until("the person's turn", async || {
            page.flag("return !!document.querySelector('.cell.origin');")
                .await
        })
        .await;
        let before = page.moves().await.len();
        let origin = page
            .js("return document.querySelector('.cell.origin').dataset.cell;")
            .await;
        page.click_cell(origin.as_str().unwrap()).await;
        let dest = page
            .js("return document.querySelector('.cell.dest').dataset.cell;")
            .await;
        page.click_cell(dest.as_str().unwrap()).await;
        page.wait_until("the reply", async || page.moves().await.len() >= before + 2)
            .await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let place = page
            .js("return [window.scrollY, document.getElementById('player-top').getBoundingClientRect().top, document.getElementById('board').getBoundingClientRect().top];")
            .await;
        let scroll = place[0].as_f64().unwrap_or(-1.0);
        let clock_top = place[1].as_f64().unwrap_or(-1.0);
        assert!(
            scroll.abs() < 1.0,
            "the page scrolled {scroll} px after move {mv}"
        );
        assert!(clock_top >= -1.0, "the opponent's clock left the screen");
    }
    page.screenshot("phone").await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_3_playing_black_puts_black_at_the_bottom() {
    let (_one, _gui, page) = gui_page(&[]).await;
    let top_of = async |cell: &str| {
        page.js(&format!(
            "return document.querySelector('[data-cell=\"{cell}\"]').getBoundingClientRect().top;"
        ))
        .await
        .as_f64()
        .unwrap()
    };
    assert_eq!(
        page.js("return document.getElementById('board').dataset.orientation;")
            .await,
        "white"
    );
    assert!(
        top_of("f1").await > top_of("f11").await,
        "White at the bottom"
    );
    page.select("#play-colour", "black").await;
    page.select("#play-level", "0").await;
    page.click("#new-game").await;
    page.wait_until("the engine's first move as White", async || {
        page.moves().await.len() == 1
    })
    .await;
    assert_eq!(
        page.js("return document.getElementById('board').dataset.orientation;")
            .await,
        "black"
    );
    assert!(
        top_of("f11").await > top_of("f1").await,
        "Black's queen at the bottom"
    );
    assert_eq!(
        page.js("return document.getElementById('player-bottom').dataset.side;")
            .await,
        "black"
    );
    assert!(page.text("#player-bottom .name").await.contains("you"));
    page.screenshot("black-at-the-bottom").await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_4_error_messages_clear_once_put_right() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.set_input("#play-tc", "abc").await;
    page.click("#new-game").await;
    page.wait_until("the clock error", async || {
        page.notice().await.contains("time control")
    })
    .await;
    page.set_input("#play-tc", "").await;
    page.click("#new-game").await;
    page.wait_until("the error gone", async || page.notice().await.is_empty())
        .await;
    page.click("#panel-records summary").await;
    page.set_input("#fen", "not a fen").await;
    page.click("#fen-analyse").await;
    page.wait_until("the FEN error", async || {
        page.notice().await.contains("FEN")
    })
    .await;
    page.set_input("#fen", agon::rules::START_FEN).await;
    page.click("#fen-analyse").await;
    page.wait_until("the FEN error gone", async || {
        page.notice().await.is_empty()
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_5_after_a_reload_every_control_shows_its_state() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.set_input("#play-tc", "3+2").await;
    page.select("#play-level", "0").await;
    page.click("#new-game").await;
    page.wait_until("the clock", async || {
        !page.text("#player-bottom .clock").await.is_empty()
    })
    .await;
    page.click("#free-analysis").await;
    page.select("#multipv", "3").await;
    page.click("#analyse-toggle").await;
    page.wait_until("three lines", async || line_count(&page).await == 3)
        .await;
    page.click("#flip").await;
    page.click("#coords").await;
    page.click("#new-game").await;
    page.wait_until("the game", async || {
        page.text("#mode-label").await.starts_with("playing")
    })
    .await;
    let url = page
        .client
        .current_url()
        .await
        .expect("the URL")
        .to_string();
    page.open(&url).await;
    page.wait_until("the state", async || page.text("#multipv").await == "3")
        .await;
    assert_eq!(page.text("#play-tc").await, "3+2", "the clock field");
    assert_eq!(page.text("#play-level").await, "0", "the strength");
    assert!(
        page.flag("return document.getElementById('board').classList.contains('coords');")
            .await,
        "coordinates stay on"
    );
    assert_eq!(
        page.js("return document.getElementById('board').dataset.orientation;")
            .await,
        "black",
        "the flip stays"
    );
    assert!(
        page.flag("return document.getElementById('flip').classList.contains('on');")
            .await
    );
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_6_quick_key_presses_all_count() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.play_free_moves(10).await;
    page.wait_until("ten plies", async || page.moves().await.len() == 10)
        .await;
    page.keys("\u{E012}\u{E012}\u{E012}\u{E012}\u{E012}").await;
    page.wait_until("five plies back", async || {
        page.js("return state.cursor;").await == 5
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(page.js("return state.cursor;").await, 5);
    page.keys("\u{E014}\u{E014}\u{E014}").await;
    page.wait_until("three forward", async || {
        page.js("return state.cursor;").await == 8
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_7_resigning_asks_first() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.click("#resign").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        page.flag("return document.getElementById('banner').hidden;")
            .await,
        "one click does not resign"
    );
    assert!(page.text("#resign").await.contains('?'), "it asks");
    page.click("#resign").await;
    page.wait_until("the resignation", async || {
        page.js("return document.getElementById('banner').dataset.termination || '';")
            .await
            == "resignation"
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_8_and_11_engine_option_errors_show_and_values_stay_one_line() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.click("#panel-engines summary").await;
    let opponent = "#engines [data-role=opponent]";
    page.wait_until("the options", async || {
        page.flag(&format!(
            "return !!document.querySelector('{opponent} [data-option=EvalFile]');"
        ))
        .await
    })
    .await;
    // A network file that does not exist: the engine refuses it, the page says so.
    page.set_input(
        &format!("{opponent} [data-option=EvalFile]"),
        "/nonexistent/net.nnue",
    )
    .await;
    page.wait_until("the refusal", async || {
        page.notice().await.contains("EvalFile")
    })
    .await;
    page.wait_until("the refusal in the engine panel", async || {
        page.text(&format!("{opponent} .error"))
            .await
            .contains("EvalFile")
    })
    .await;
    // A value out of range: refused, and the field shows the value the engine has.
    page.set_input(&format!("{opponent} [data-option=Threads]"), "9999")
        .await;
    page.wait_until("the range error", async || {
        page.notice().await.contains("Threads")
    })
    .await;
    page.wait_until("the field put back", async || {
        page.text(&format!("{opponent} [data-option=Threads]"))
            .await
            != "9999"
    })
    .await;
    // A line break would write a second protocol line: refused.
    let reply = page
        .js_async(
            "const done = arguments[arguments.length - 1];
             api('/api/command', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({cmd: 'set_option', role: 'opponent', name: 'EvalFile', value: 'x\\nquit'})})
             .then(r => r.json().then(j => done([r.status, j.error || ''])));",
        )
        .await;
    assert_eq!(reply[0], 400, "{reply}");
    assert!(reply[1].as_str().unwrap().contains("one line"), "{reply}");
    // The engine still plays.
    page.select("#play-level", "0").await;
    page.click("#new-game").await;
    page.wait_until("a new game", async || page.moves().await.is_empty())
        .await;
    page.click_cell("f1").await;
    page.click_cell("f2").await;
    page.wait_until("the reply", async || page.moves().await.len() == 2)
        .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_9_a_late_bestmove_is_played_and_reported() {
    let _one = BROWSER.lock().await;
    // Answers 7 s after `go`: past the 1 s move time and the 5 s grace.
    let (_gui, url) = start_gui(&["--engine", "python3 tests/engines/scripted.py late 7"]);
    let page = browser().await;
    page.open(&url).await;
    page.click_cell("f1").await;
    page.click_cell("e1").await;
    page.wait_until("the overdue notice", async || {
        page.notice().await.contains("did not answer in its time")
    })
    .await;
    let asked = Instant::now();
    while page.moves().await.len() < 2 {
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "the late move never came"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(page.moves().await, ["f1e1", "f11g11"]);
    assert!(
        !page.text("#status").await.contains("thinking"),
        "{}",
        page.text("#status").await
    );
    page.assert_no_errors().await;
    page.close().await;
}

#[test]
fn defect_10_a_server_on_every_interface_prints_a_reachable_url() {
    let (_gui, url) = start_gui(&["--host", "0.0.0.0"]);
    let rest = url.trim_start_matches("http://");
    let (address, rest) = rest.rsplit_once(':').unwrap();
    let (port, query) = rest.split_once('/').unwrap();
    assert_ne!(address, "0.0.0.0", "{url}");
    assert!(address.parse::<std::net::IpAddr>().is_ok(), "{url}");
    let port: u16 = port.parse().unwrap();
    let token = query.trim_start_matches("?token=");
    assert_eq!(
        http_status(
            port,
            "/api/state",
            &format!("{address}:{port}"),
            Some(token)
        ),
        200
    );
    assert_eq!(
        http_status(
            port,
            "/api/state",
            &format!("192.0.2.44:{port}"),
            Some(token)
        ),
        200
    );
    assert_eq!(
        http_status(
            port,
            "/api/state",
            &format!("localhost:{port}"),
            Some(token)
        ),
        200
    );
    assert_eq!(
        http_status(
            port,
            "/api/state",
            &format!("evil.example:{port}"),
            Some(token)
        ),
        403
    );
    assert_eq!(
        http_status(port, "/api/state", "192.0.2.44:1", Some(token)),
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_12_the_small_ones() {
    let (_one, _gui, page) = gui_page(&[]).await;
    // The empty score graph says what it is.
    assert!(page.text("#graph .empty").await.contains("no scores"));
    assert!(page.text("#graph").await.contains("plies"));
    // The Clock placeholder fits its field, in every language.
    let cut = page
        .js("const i = document.getElementById('play-tc'); const c = document.createElement('canvas').getContext('2d');
             const cut = [];
             for (const code of Object.keys(STRINGS)) {
               setLanguage(code);
               c.font = getComputedStyle(i).font;
               if (c.measureText(i.placeholder).width > i.clientWidth) cut.push(code + ': ' + i.placeholder);
             }
             setLanguage('en'); return cut;")
        .await;
    assert_eq!(cut, serde_json::json!([]), "the placeholder is cut");
    // Coordinates are drawn over the pieces.
    page.click("#coords").await;
    assert!(
        page.flag("const b = document.getElementById('board'); return b.querySelector('.cells').compareDocumentPosition(b.querySelector('.labels')) === Node.DOCUMENT_POSITION_FOLLOWING && getComputedStyle(b.querySelector('.labels')).display !== 'none';")
            .await
    );
    // The hint arrow's head has its line's colour.
    page.click("#hint").await;
    page.wait_until("the hint", async || {
        page.flag("return !!document.querySelector('.arrow.hint');")
            .await
    })
    .await;
    let colours = page
        .js("const a = document.querySelector('.arrow.hint'); const id = a.getAttribute('marker-end').slice(5, -1); return [getComputedStyle(a).stroke, getComputedStyle(document.getElementById(id).querySelector('path')).fill];")
        .await;
    assert_eq!(colours[0], colours[1], "the hint's head and line");
    // A mistyped move stays in the box to be corrected.
    page.set_input("#move-input", "f1f9").await;
    page.click("#move-form button").await;
    page.wait_until("the refusal", async || {
        page.notice().await.contains("illegal")
    })
    .await;
    assert_eq!(page.text("#move-input").await, "f1f9");
    // The eval bar's number is readable: horizontal and at least 10 px.
    let style = page
        .js("const s = getComputedStyle(document.getElementById('evaltext')); return [s.writingMode, parseFloat(s.fontSize)];")
        .await;
    assert_eq!(style[0], "horizontal-tb");
    assert!(style[1].as_f64().unwrap() >= 10.0, "{style}");
    // Set-up positions name no '?' players.
    page.click("#panel-records summary").await;
    page.set_input("#fen", agon::rules::START_FEN).await;
    page.click("#fen-analyse").await;
    page.wait_until("the set-up", async || {
        page.text("#mode-label").await == "analysis"
    })
    .await;
    assert!(!page.text("#player-top").await.contains('?'));
    assert!(!page.text("#player-bottom").await.contains('?'));
    // Scores in the move list never wrap away from their move, even where
    // the language may break a line between them (Japanese: f1e1定跡), at
    // any width of the list.
    let pgn = std::fs::read_to_string("tests/data/gui-three-games.pgn").expect("the PGN");
    page.set_input("#pgn-text", &pgn).await;
    page.click("#pgn-import").await;
    page.wait_until("the scored moves", async || {
        page.flag("return document.querySelectorAll('#moves .ply small').length > 4;")
            .await
    })
    .await;
    page.js("setLanguage('ja'); return null;").await;
    let wrapped = page
        .js("const m = document.getElementById('moves'); let most = 0;
             for (let w = 60; w <= 260; w += 5) {
               m.style.width = w + 'px';
               most = Math.max(most, Array.from(m.querySelectorAll('.ply')).filter(p => p.getClientRects().length > 1).length);
             }
             m.style.width = ''; return most;")
        .await;
    page.js("setLanguage('en'); return null;").await;
    assert_eq!(wrapped, 0, "plies split over two lines");
    // A clock that ran out reads 0:00.0 and the status says the game is over.
    page.set_input("#play-tc", "0.02+0").await;
    page.click("#new-game").await;
    page.wait_until("the timed game", async || page.moves().await.is_empty())
        .await;
    // The person's clock starts with their first move.
    page.click_cell("f1").await;
    page.click_cell("f2").await;
    page.wait_until("the time forfeit", async || {
        page.js("return document.getElementById('banner').dataset.termination || '';")
            .await
            == "time forfeit"
    })
    .await;
    let clocks = page.text("#player-bottom .clock").await + &page.text("#player-top .clock").await;
    assert!(!clocks.contains('-'), "{clocks}");
    assert_eq!(page.text("#status").await, "Game over");
    // The ending is told in the page's language, not the server's English.
    assert_eq!(page.text("#banner").await, "Game over: Black wins on time");
    page.js("setLanguage('es'); return null;").await;
    page.wait_until("the ending in Spanish", async || {
        page.text("#banner").await == "Partida terminada: Ganan las Negras por tiempo"
    })
    .await;
    page.js("setLanguage('en'); return null;").await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn defect_12_the_game_picker_goes_with_a_new_game() {
    let (_one, _gui, page) = gui_page(&[]).await;
    let pgn = std::fs::read_to_string("tests/data/gui-three-games.pgn").expect("the PGN");
    page.click("#panel-records summary").await;
    page.set_input("#pgn-text", &pgn).await;
    page.click("#pgn-import").await;
    page.wait_until("the picker", async || {
        !page
            .flag("return document.getElementById('library-label').hidden;")
            .await
    })
    .await;
    page.click("#new-game").await;
    page.wait_until("the picker gone", async || {
        page.flag("return document.getElementById('library-label').hidden;")
            .await
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_public_view_hides_the_private_controls_and_shows_the_queue() {
    let (_one, _gui, page) = gui_page(&[]).await;
    let visible = async |selector: &str| {
        page.flag(&format!(
            "const e = document.querySelector('{selector}'); return !!e && e.getClientRects().length > 0;"
        ))
        .await
    };
    assert!(visible("#panel-watch").await && visible("#play-engine").await);
    // What another backend sends: the same view with "public" and a queue.
    page.js("const s = Object.assign({}, state, {version: state.version + 1, public: true, thinking: 'opponent', queue: {position: 2}}); onState(JSON.stringify(s));")
        .await;
    for private in ["#panel-watch", "#panel-engines", "#play-engine"] {
        assert!(!visible(private).await, "{private} is shown to a visitor");
    }
    assert!(visible("#new-game").await && visible("#board").await);
    let status = page.text("#status").await;
    assert!(status.contains("2 visitors ahead"), "{status}");
    page.assert_no_errors().await;
    page.close().await;
}
