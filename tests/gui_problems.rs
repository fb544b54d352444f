//! The server's refusals told in the page's language, in headless Chromium:
//! the server sends a code and its parameters, the page its own sentence
//! (web/lang), never the server's English.

#[path = "common/browser.rs"]
mod browser;

use agon::rules::{MoveError, START_FEN, parse_move, start_position};
use browser::{Browser, gui_page};

/// Waits for the notice to read `expected` exactly.
async fn notice_reads(page: &Browser, expected: &str) {
    let shown = async || page.notice().await == expected;
    page.wait_until(expected, shown).await;
}

/// A sentence of the page's table for `language`.
async fn sentence(page: &Browser, language: &str, key: &str) -> String {
    page.js(&format!("return STRINGS['{language}']['{key}'];"))
        .await
        .as_str()
        .unwrap_or_else(|| panic!("{language} has no {key}"))
        .to_string()
}

/// The rule the rules core says `f1f3` breaks at the start.
fn rule_of_f1f3() -> &'static str {
    match parse_move(&start_position(), "f1f3") {
        Err(MoveError::Illegal { reason, .. }) => reason.code(),
        other => panic!("f1f3 at the start: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn the_servers_refusals_are_told_in_spanish_and_japanese() {
    let (_one, _gui, page) = gui_page(&[]).await;
    page.js("setLanguage('es'); return null;").await;

    // A clock that is no time control.
    page.set_input("#play-tc", "abc").await;
    page.click("#new-game").await;
    notice_reads(
        &page,
        "'abc' no es un control de tiempo: escribe minutos+segundos, por ejemplo 5+3.",
    )
    .await;

    // A FEN with a side to move that is neither w nor b.
    page.set_input("#play-tc", "").await;
    page.click("#panel-records summary").await;
    page.set_input("#fen", &START_FEN.replacen(" w ", " x ", 1))
        .await;
    page.click("#fen-analyse").await;
    notice_reads(
        &page,
        "No se puede leer este FEN: el bando que mueve, 'x', no es 'w' ni 'b'.",
    )
    .await;

    // An illegal typed move: the sentence names the move and the rule it breaks.
    page.set_input("#fen", START_FEN).await;
    page.click("#fen-analyse").await;
    page.wait_until("the set-up", async || page.notice().await.is_empty())
        .await;
    page.set_input("#move-input", "f1f3").await;
    page.click("#move-form button").await;
    let rule = sentence(&page, "es", &format!("learn.why.{}", rule_of_f1f3())).await;
    notice_reads(&page, &format!("La jugada f1f3 no es legal: {rule}")).await;

    // A value out of an engine option's range.
    page.click("#panel-engines summary").await;
    let threads = "#engines [data-role=opponent] [data-option=Threads]";
    page.wait_until("the options", async || {
        page.flag(&format!("return !!document.querySelector('{threads}');"))
            .await
    })
    .await;
    page.set_input(threads, "9999").await;
    let range = async || {
        page.notice()
            .await
            .starts_with("Opción Threads: 9999 no está entre 1 y ")
    };
    page.wait_until("the range refusal in Spanish", range).await;

    // What is shown follows a change of language, and Japanese has its own words.
    page.set_input("#move-input", "f1f3").await;
    page.click("#move-form button").await;
    page.js("setLanguage('ja'); return null;").await;
    let rule = sentence(&page, "ja", &format!("learn.why.{}", rule_of_f1f3())).await;
    notice_reads(&page, &format!("f1f3は反則です: {rule}")).await;
    page.set_input("#play-tc", "0+5").await;
    page.click("#new-game").await;
    notice_reads(&page, "持ち時間「0+5」では時間がありません。").await;

    // The English message stays in the reply for scripts.
    let reply = page
        .js_async(
            "const done = arguments[arguments.length - 1];
             api('/api/command', {method: 'POST', headers: {'content-type': 'application/json'},
               body: JSON.stringify({cmd: 'new_game', tc: 'abc'})})
             .then(r => r.json().then(j => done([r.status, j.code, j.params, j.error])));",
        )
        .await;
    assert_eq!(reply[0], 400, "{reply}");
    assert_eq!(reply[1], "bad-clock", "{reply}");
    assert_eq!(reply[2]["text"], "abc", "{reply}");
    assert!(
        reply[3].as_str().unwrap().contains("time control"),
        "{reply}"
    );
    page.js("setLanguage('en'); return null;").await;
    page.assert_no_errors().await;
    page.close().await;
}
