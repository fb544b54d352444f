//! Learning Agon in the browser: the rules view in every language, the
//! language switcher, every lesson solved by clicking on its board, wrong
//! moves explained, and the first visit's three ways in. The real `agon gui`
//! server and Debian's headless Chromium (tests/common/browser.rs).

#[path = "common/browser.rs"]
mod browser;

use browser::{BROWSER, Browser, browser, start_gui};
use serde_json::Value;
use std::path::PathBuf;

const LANGUAGES: [&str; 6] = ["en", "es", "hu", "vi", "ja", "ko"];

/// `url` with `query` added to its own query and `fragment` at the end.
fn page_url(url: &str, query: &str, fragment: &str) -> String {
    let mut url = url.to_string();
    if !query.is_empty() {
        url.push('&');
        url.push_str(query);
    }
    url.push_str(fragment);
    url
}

/// Opens a view of the page and waits until it is drawn (the main board's
/// helpers wait for a board of 91 cells, which a view of diagrams is not).
async fn open_view(page: &Browser, url: &str, ready: &str) {
    // From elsewhere, so that a URL differing only in its fragment loads anew.
    page.client.goto("about:blank").await.expect("a blank page");
    page.client.goto(url).await.expect("page opens");
    let script = format!(
        "return !!document.querySelector({});",
        serde_json::to_string(ready).unwrap()
    );
    page.wait_until(ready, async || page.flag(&script).await)
        .await;
}

/// The catalogue the page loaded: rules and lessons.
async fn catalogue(page: &Browser) -> Value {
    page.js("return learnCatalogue;").await
}

/// The English text of a key, as the page's table has it.
async fn english(page: &Browser, key: &str) -> String {
    let script = format!(
        "return STRINGS.en[{}];",
        serde_json::to_string(key).unwrap()
    );
    page.js(&script)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn lesson_message(page: &Browser) -> String {
    page.text("#lesson-message").await
}

/// Opens a lesson from the list by clicking its title.
async fn choose_lesson(page: &Browser, id: &str) {
    page.click(&format!("[data-lesson=\"{id}\"] a")).await;
    let open = format!("return document.querySelector('#lesson').dataset.lessonOpen === '{id}';");
    page.wait_until(id, async || page.flag(&open).await).await;
}

/// Whether the list marks the lesson solved.
async fn solved(page: &Browser, id: &str) -> bool {
    page.flag(&format!(
        "return document.querySelector('[data-lesson=\"{id}\"]').dataset.done === 'true';"
    ))
    .await
}

/// Plays `mv` on the open lesson's board by clicking its two cells.
async fn click_move(page: &Browser, mv: &str) {
    let split = mv[1..].find(|c: char| c.is_ascii_lowercase()).unwrap() + 1;
    for cell in [&mv[..split], &mv[split..]] {
        page.click(&format!("#lesson [data-cell=\"{cell}\"]")).await;
    }
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn the_rules_read_in_six_languages_each_rule_with_its_diagram() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    let docs = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rules-screenshots");
    std::fs::create_dir_all(&docs).unwrap();
    let mut titles = Vec::new();
    for language in LANGUAGES {
        open_view(
            &page,
            &page_url(&url, &format!("lang={language}"), "#rules"),
            "[data-rule] [data-cell]",
        )
        .await;
        assert_eq!(
            page.js("return document.documentElement.lang;").await,
            language
        );
        let rules = catalogue(&page).await["rules"].as_array().cloned().unwrap();
        assert!(rules.len() >= 11, "{} rules", rules.len());
        for rule in &rules {
            let id = rule["id"].as_str().unwrap();
            let script = format!(
                "const s = document.querySelector('[data-rule=\"{id}\"]');
                 return s && {{ cells: s.querySelectorAll('[data-cell]').length,
                   fen: s.querySelector('svg').dataset.fen,
                   marked: [...s.querySelectorAll('[data-cell].mark')].map(e => e.dataset.cell).sort(),
                   words: s.querySelector('h3').textContent + s.querySelector('p').textContent }};"
            );
            let shown = page.js(&script).await;
            assert_eq!(shown["cells"], 91, "{language} {id}");
            assert_eq!(shown["fen"], rule["fen"], "{language} {id}");
            let mut marks: Vec<Value> = rule["marks"].as_array().cloned().unwrap();
            marks.sort_by_key(|m| m.as_str().unwrap().to_string());
            assert_eq!(shown["marked"], Value::Array(marks), "{language} {id}");
            assert!(
                shown["words"].as_str().unwrap().len() > 40,
                "{language} {id}"
            );
        }
        titles.push(page.text("[data-rule=\"capture\"] h3").await);
        if let Ok(png) = page.client.screenshot().await {
            std::fs::write(docs.join(format!("rules-{language}.png")), png).unwrap();
        }
        page.assert_no_errors().await;
    }
    let mut distinct = titles.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), LANGUAGES.len(), "{titles:?}");
    page.close().await;
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn the_language_switches_on_every_view_and_is_remembered() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    for fragment in ["", "#rules", "#learn"] {
        let ready = match fragment {
            "#rules" => "[data-rule]",
            "#learn" => "[data-lesson]",
            _ => "#board [data-cell]",
        };
        open_view(&page, &page_url(&url, "lang=en", fragment), ready).await;
        let english_words = page.text("#views-nav [data-view-link=\"learn\"]").await;
        // The switch redraws synchronously: its cost is measured here.
        let elapsed = page
            .js(
                "const s = document.getElementById('language'); const start = performance.now();
                 s.value = 'ko'; s.dispatchEvent(new Event('change'));
                 return performance.now() - start;",
            )
            .await;
        println!("language switch on '{fragment}': {elapsed} ms");
        assert_eq!(page.js("return document.documentElement.lang;").await, "ko");
        assert_ne!(
            page.text("#views-nav [data-view-link=\"learn\"]").await,
            english_words
        );
        if fragment == "#rules" {
            let title = page.text("[data-rule=\"board\"] h3").await;
            assert_eq!(
                title,
                page.js("return STRINGS.ko['rules.board.title'];")
                    .await
                    .as_str()
                    .unwrap()
            );
        }
        if fragment == "#learn" {
            let goal = page.text("#lesson-goal").await;
            assert_eq!(
                goal,
                page.js("return STRINGS.ko['lesson.rings.goal'];")
                    .await
                    .as_str()
                    .unwrap()
            );
        }
        page.assert_no_errors().await;
    }
    // Remembered: a load without ?lang= speaks Korean again.
    open_view(&page, &page_url(&url, "", "#rules"), "[data-rule]").await;
    assert_eq!(page.js("return document.documentElement.lang;").await, "ko");
    // ?lang= wins for its load.
    open_view(&page, &page_url(&url, "lang=hu", "#rules"), "[data-rule]").await;
    assert_eq!(page.js("return document.documentElement.lang;").await, "hu");
    // With nothing asked or remembered, the browser's preferred languages
    // decide (stubbed here: Chromium's own are set at its start), else English.
    open_view(&page, &page_url(&url, "", "#rules"), "[data-rule]").await;
    let preferred = |languages: &str| {
        format!(
            "localStorage.removeItem('agon.language');
             Object.defineProperty(navigator, 'languages', {{ configurable: true, get: () => {languages} }});
             return chooseLanguage();"
        )
    };
    assert_eq!(page.js(&preferred("['fr-FR', 'vi-VN', 'en']")).await, "vi");
    assert_eq!(page.js(&preferred("['ja-JP']")).await, "ja");
    assert_eq!(page.js(&preferred("['fr-FR', 'de']")).await, "en");
    page.close().await;
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn every_lesson_is_solved_by_clicking_and_remembered() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    open_view(
        &page,
        &page_url(&url, "lang=en", "#learn"),
        "#lesson [data-cell]",
    )
    .await;
    let lessons = catalogue(&page).await["lessons"]
        .as_array()
        .cloned()
        .unwrap();
    assert!(lessons.len() >= 12, "{} lessons", lessons.len());
    for lesson in &lessons {
        let id = lesson["id"].as_str().unwrap();
        choose_lesson(&page, id).await;
        assert!(!solved(&page, id).await, "{id} solved before it was played");
        if lesson["game"] == true {
            page.click("#lesson-play").await;
            page.wait_until("the game against level 1", async || {
                page.flag("return location.hash === '' && state && state.mode === 'play' && state.level === 0 && state.human === 'white' && state.moves.length === 0;").await
            })
            .await;
            open_view(&page, &page_url(&url, "lang=en", "#learn"), "[data-lesson]").await;
            continue;
        }
        let solution: Vec<String> = lesson["solution"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        for (index, mv) in solution.iter().enumerate() {
            let before = lesson_message(&page).await;
            click_move(&page, mv).await;
            page.wait_until(mv, async || lesson_message(&page).await != before)
                .await;
            if index + 1 < solution.len() {
                assert!(!solved(&page, id).await, "{id} solved early");
            }
        }
        page.wait_until(&format!("{id} solved"), async || solved(&page, id).await)
            .await;
        let solved_words = english(&page, "learn.solved").await;
        assert!(
            lesson_message(&page).await.starts_with(&solved_words),
            "{id}: {}",
            lesson_message(&page).await
        );
    }
    // Progress is kept across visits.
    open_view(&page, &page_url(&url, "", "#learn"), "[data-lesson]").await;
    let undone = page
        .js("return [...document.querySelectorAll('[data-lesson]')].filter(e => e.dataset.done !== 'true').map(e => e.dataset.lesson);")
        .await;
    assert_eq!(undone, serde_json::json!([]));
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_wrong_move_is_explained_and_can_be_retried() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    // Illegal: between two enemies; the board does not change.
    open_view(
        &page,
        &page_url(&url, "lang=en", "#learn/sandwich"),
        "#lesson [data-cell]",
    )
    .await;
    click_move(&page, "e4f5").await;
    let flanked = english(&page, "learn.why.flanked").await;
    page.wait_until("the explanation", async || {
        lesson_message(&page).await == flanked
    })
    .await;
    assert_eq!(
        page.js("return document.querySelector('#lesson [data-cell=\"e4\"]').dataset.piece;")
            .await,
        "G"
    );
    // The lesson goes on: the right move still solves it.
    click_move(&page, "e4e5").await;
    page.wait_until("solved after the mistake", async || {
        solved(&page, "sandwich").await
    })
    .await;
    // Legal but beside the goal: the lesson's own words, then "Try again".
    choose_lesson(&page, "capture").await;
    click_move(&page, "e4d4").await;
    let missed = english(&page, "lesson.capture.wrong").await;
    page.wait_until("the lesson's explanation", async || {
        lesson_message(&page).await == missed
    })
    .await;
    page.click("#lesson-retry").await;
    page.wait_until("the position again", async || {
        page.flag("return document.querySelector('#lesson [data-cell=\"e4\"]').dataset.piece === 'G' && document.querySelector('#lesson-message').textContent === '';").await
    })
    .await;
    // Win in two: a first move that Black refutes is named with the refutation.
    choose_lesson(&page, "win-in-two").await;
    click_move(&page, "f8f7").await;
    page.wait_until("the refutation", async || {
        lesson_message(&page).await.contains("g9g8")
    })
    .await;
    page.screenshot("learn-refuted").await;
    // The hint marks the piece to move.
    page.click("#lesson-retry").await;
    page.click("#lesson-hint").await;
    page.wait_until("the hint", async || {
        page.flag("return document.querySelector('#lesson [data-cell=\"h8\"]').classList.contains('hint');").await
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_first_visit_is_offered_three_ways_in_without_blocking_the_board() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    page.open(&page_url(&url, "lang=en", "")).await;
    assert!(
        page.flag("return !document.getElementById('welcome').hidden;")
            .await
    );
    page.screenshot("first-visit").await;
    let levels = page
        .js("return [...document.querySelectorAll('#welcome-level option')].map(o => o.textContent);")
        .await;
    assert_eq!(levels.as_array().map(Vec::len), Some(5), "{levels}");
    // The printed URL still plays: White, clicking cells; the first click
    // puts the offer away.
    page.click("#board [data-cell=\"f1\"]").await;
    page.click("#board [data-cell=\"f2\"]").await;
    page.wait_until("the move", async || {
        page.moves().await.first().map(String::as_str) == Some("f1f2")
    })
    .await;
    assert!(
        page.flag("return document.getElementById('welcome').hidden;")
            .await
    );
    page.open(&page_url(&url, "lang=en", "")).await;
    assert!(
        page.flag("return document.getElementById('welcome').hidden;")
            .await,
        "shown again"
    );
    // A new visitor: play now as Black at level 1.
    page.js("localStorage.clear();").await;
    page.open(&page_url(&url, "lang=en", "")).await;
    page.select("#welcome-colour", "black").await;
    page.select("#welcome-level", "0").await;
    page.click("#welcome-start").await;
    page.wait_until("the game as Black", async || {
        page.flag("return state.mode === 'play' && state.human === 'black' && state.level === 0;")
            .await
    })
    .await;
    // Analyse.
    page.js("localStorage.clear();").await;
    page.open(&page_url(&url, "lang=en", "")).await;
    page.click("#welcome-analyse").await;
    page.wait_until("analysis", async || {
        page.flag("return state.mode === 'analysis';").await
    })
    .await;
    // Learn the rules.
    page.js("localStorage.clear();").await;
    page.open(&page_url(&url, "lang=en", "")).await;
    page.click("#welcome-learn").await;
    page.wait_until("the rules", async || {
        page.flag("return location.hash === '#rules' && !!document.querySelector('[data-rule]');")
            .await
    })
    .await;
    page.assert_no_errors().await;
    page.close().await;
}
