//! `agon serve` in the browser: two visitors (two browsers with their own
//! profiles, so their own cookies) play at the same time on the page of
//! `agon gui` in public mode; neither sees the other's game and each reload
//! brings back one's own; a visitor analyses on the analysis board with
//! engine lines. Debian's headless Chromium (tests/common/browser.rs).

#[path = "common/browser.rs"]
mod browser;

use browser::{BROWSER, Browser, Process, browser};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// A running `agon serve` and the directory of its database, removed once
/// the server is ended: the fields drop in this order.
struct Serve {
    _process: Process,
    _dir: tempfile::TempDir,
}

/// `agon serve` on a free port with a fresh database, and the URL it printed.
fn start_serve(name: &str) -> (Serve, String) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("agon-{name}-"))
        .tempdir()
        .unwrap();
    // A `Process` at once, so that a failure below ends the server before
    // its directory is removed.
    let mut process = Process(
        Command::new(env!("CARGO_BIN_EXE_agon"))
            .args(["serve", "--port", "0", "--engines", "2", "--db"])
            .arg(dir.path().join("games.sqlite"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("agon serve starts"),
    );
    let stdout = process.0.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("agon serve prints its URL");
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    (
        Serve {
            _process: process,
            _dir: dir,
        },
        url,
    )
}

/// `a5b5` as `("a5", "b5")`.
fn cells_of(mv: &str) -> (&str, &str) {
    let split = mv
        .char_indices()
        .skip(1)
        .find(|(_, c)| c.is_ascii_alphabetic())
        .map_or(mv.len(), |(i, _)| i);
    mv.split_at(split)
}

async fn text_of(browser: &Browser, script: &str) -> String {
    browser
        .js(script)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Plays the first or the last legal move by clicking, and waits for the engine's reply.
async fn play_a_move(browser: &Browser, last: bool) -> Vec<String> {
    let pick = if last {
        "return state.legal[state.legal.length - 1]"
    } else {
        "return state.legal[0]"
    };
    let mv = text_of(browser, pick).await;
    let (from, to) = cells_of(&mv);
    browser.click_cell(from).await;
    browser.click_cell(to).await;
    browser
        .wait_until("the engine's reply", async || {
            browser.moves().await.len() == 2 && browser.flag("return state.legal.length > 0").await
        })
        .await;
    let moves = browser.moves().await;
    assert_eq!(moves[0], mv);
    moves
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn two_visitors_play_at_once_and_each_sees_only_their_own_game() {
    let _one_at_a_time = BROWSER.lock().await;
    let (_server, url) = start_serve("serve-browser");
    let (first, second) = tokio::join!(browser(), browser());
    tokio::join!(first.open(&url), second.open(&url));
    for visitor in [&first, &second] {
        // Public mode hides what visitors may not use; the testability contract holds.
        assert!(
            visitor
                .flag("return document.body.classList.contains('public')")
                .await
        );
        assert!(
            visitor
                .flag("return getComputedStyle(document.getElementById('panel-engines')).display === 'none'")
                .await
        );
        assert!(
            visitor
                .flag("return state.public === true && state.mode === 'play'")
                .await
        );
        assert_eq!(
            text_of(visitor, "return state.human").await,
            text_of(visitor, "return state.side").await,
            "the visitor plays White and moves first"
        );
        visitor
            .wait_until("the board's data-fen", async || {
                visitor
                    .flag("return document.querySelector('[data-fen]') !== null && document.querySelector('[data-fen]').dataset.fen === state.fen")
                    .await
            })
            .await;
        visitor
            .assert_board_is(&text_of(visitor, "return state.fen").await)
            .await;
    }
    let (first_moves, second_moves) =
        tokio::join!(play_a_move(&first, false), play_a_move(&second, true));
    assert_ne!(first_moves, second_moves);
    let first_game = text_of(&first, "return state.game").await;
    let second_game = text_of(&second, "return state.game").await;
    assert_ne!(first_game, second_game);

    tokio::join!(first.open(&url), second.open(&url));
    for (visitor, game, moves) in [
        (&first, &first_game, &first_moves),
        (&second, &second_game, &second_moves),
    ] {
        visitor
            .wait_until("the game back after a reload", async || {
                visitor.moves().await == *moves
            })
            .await;
        assert_eq!(text_of(visitor, "return state.game").await, *game);
        visitor.assert_no_errors().await;
    }
    first.close().await;
    second.close().await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn the_public_servers_refusals_are_told_in_the_visitors_language() {
    let _one_at_a_time = BROWSER.lock().await;
    let (_server, url) = start_serve("serve-refusals");
    let visitor = browser().await;
    visitor.open(&url).await;
    visitor.js("setLanguage('es'); return null;").await;
    for (command, spanish) in [
        (
            "{cmd: 'watch', white: 0, black: 0}",
            "'Watch' no está disponible en este servidor.",
        ),
        (
            "{cmd: 'new_game', tc: '5+3'}",
            "Las partidas de este servidor no tienen reloj.",
        ),
        ("{cmd: 'move', mv: 'f1f3'}", "La jugada f1f3 no es legal: "),
    ] {
        visitor
            .js(&format!("command({command}); return null;"))
            .await;
        visitor
            .wait_until(spanish, async || {
                visitor.notice().await.starts_with(spanish)
            })
            .await;
    }
    visitor.js("setLanguage('ko'); return null;").await;
    visitor
        .wait_until("the refusal in Korean", async || {
            visitor
                .notice()
                .await
                .starts_with("f1f3은(는) 둘 수 없는 수입니다: ")
        })
        .await;
    visitor.close().await;
}

/// The first engine line shown, as `(data-pv, data-fen)`, when its
/// position is the board's (`data-fen` of `#board`) and the page's.
async fn line_of_the_board(browser: &Browser) -> Option<(String, String)> {
    let found = browser
        .js("const li = document.querySelector('#pv-lines li[data-pv]');
             const board = document.getElementById('board').dataset.fen;
             return li && li.dataset.fen === board && board === state.fen
               ? [li.dataset.pv, li.dataset.fen, document.querySelectorAll('#pv-lines li').length] : null;")
        .await;
    let pv = found.get(0)?.as_str()?.to_string();
    let fen = found.get(1)?.as_str()?.to_string();
    assert!(found[2].as_u64().unwrap() <= 3, "at most 3 lines: {found}");
    Some((pv, fen))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_visitor_analyses_on_the_analysis_board_with_engine_lines() {
    let _one_at_a_time = BROWSER.lock().await;
    let (_server, url) = start_serve("serve-browser-analysis");
    let visitor = browser().await;
    visitor.open(&url).await;
    // The first visit's way into analysis is offered to visitors too.
    assert!(
        visitor
            .flag("return document.getElementById('welcome-analyse').offsetParent !== null")
            .await
    );
    visitor.click("#welcome-analyse").await;
    visitor
        .wait_until("the analysis board", async || {
            visitor.flag("return state.mode === 'analysis'").await
        })
        .await;
    visitor.select("#multipv", "3").await;
    visitor.click("#analyse-toggle").await;
    visitor
        .wait_until("engine lines of the position shown", async || {
            line_of_the_board(&visitor).await.is_some()
        })
        .await;
    let (pv, fen) = line_of_the_board(&visitor).await.unwrap();
    let first = pv.split_whitespace().next().unwrap().to_string();
    assert!(
        visitor
            .flag(&format!("return state.legal.includes('{first}')"))
            .await,
        "{pv} from {fen}"
    );
    // A free move by clicking: the lines follow the new position, for the other side.
    let mv = text_of(&visitor, "return state.legal[state.legal.length - 1]").await;
    let (from, to) = cells_of(&mv);
    visitor.click_cell(from).await;
    visitor.click_cell(to).await;
    visitor
        .wait_until("lines of the position after the move", async || {
            line_of_the_board(&visitor)
                .await
                .is_some_and(|(_, shown)| shown != fen)
        })
        .await;
    assert!(visitor.flag("return state.moves.length === 1").await);
    visitor.assert_no_errors().await;
    visitor.close().await;
}
