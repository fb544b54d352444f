//! The page's motion and sound, in headless Chromium: a move slides its
//! piece across the board (and does not under reduced motion), and the move
//! sound, made by the page with Web Audio, sounds once a move when it is on,
//! never when it is off, and stays as chosen over a reload.

#[path = "common/browser.rs"]
mod browser;

use browser::{BROWSER, Browser, browser, browser_with, gui_page, start_gui};
use std::time::Duration;

/// Records every `transform` the board's layer of moving pieces is given.
async fn watch_the_moving_layer(page: &Browser) {
    page.js("window.slides = [];
             new MutationObserver((changes) => {
               for (const change of changes) {
                 for (const node of [change.target, ...change.addedNodes]) {
                   const transform = node.getAttribute && node.getAttribute('transform');
                   if (transform) window.slides.push(transform);
                 }
               }
             }).observe(document.querySelector('#board .moving'),
                        {subtree: true, childList: true, attributes: true, attributeFilter: ['transform']});
             return null;")
        .await;
}

/// The `translate(x y)` positions recorded, in order.
async fn slides(page: &Browser) -> Vec<(f64, f64)> {
    let recorded = page.js("return window.slides;").await;
    recorded
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let inner = t.as_str()?.strip_prefix("translate(")?.strip_suffix(')')?;
            let (x, y) = inner.split_once(' ')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// Clicks the first legal move the page offers, in free analysis, and
/// waits for it to be on the board.
async fn click_a_move(page: &Browser) {
    let before = page.moves().await.len();
    let mv = page.js("return state.legal[0];").await;
    let mv = mv.as_str().expect("a legal move").to_string();
    let split = mv[1..].find(|c: char| c.is_ascii_alphabetic()).unwrap() + 1;
    page.click_cell(&mv[..split]).await;
    page.click_cell(&mv[split..]).await;
    page.wait_until("the move", async || page.moves().await.len() == before + 1)
        .await;
}

async fn into_free_analysis(page: &Browser) {
    page.click("#free-analysis").await;
    page.wait_until("free analysis", async || {
        page.js("return state.mode;").await == "analysis"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn a_clicked_move_slides_its_piece_through_the_cells_between() {
    let (_one, _gui, page) = gui_page(&[]).await;
    into_free_analysis(&page).await;
    watch_the_moving_layer(&page).await;
    click_a_move(&page).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = slides(&page).await;
    assert!(seen.len() >= 3, "the piece was drawn at {seen:?}");
    let (first, last) = (seen[0], seen[seen.len() - 1]);
    assert_ne!(first, last, "it moved");
    let between = seen[1..seen.len() - 1].iter().any(|&(x, y)| {
        let inside = |v: f64, a: f64, b: f64| v > a.min(b) - 1e-6 && v < a.max(b) + 1e-6;
        (x, y) != first
            && (x, y) != last
            && inside(x, first.0, last.0)
            && inside(y, first.1, last.1)
    });
    assert!(
        between,
        "no position between {first:?} and {last:?}: {seen:?}"
    );
    // Once it has arrived the sliding copy is gone and the piece stands on its cell.
    assert!(
        page.flag("return document.querySelector('#board .moving').childElementCount === 0;")
            .await
    );
    let hidden = page
        .js("return Array.from(document.querySelectorAll('#board .slot > *')).filter(p => p.style.visibility === 'hidden').length;")
        .await;
    assert_eq!(hidden, 0, "a piece stayed hidden");
    page.assert_no_errors().await;
    page.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn under_reduced_motion_a_move_does_not_slide() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser_with(1280, 1000, &["--force-prefers-reduced-motion"]).await;
    page.open(&url).await;
    assert!(
        page.flag("return matchMedia('(prefers-reduced-motion: reduce)').matches;")
            .await,
        "the browser asks for reduced motion"
    );
    into_free_analysis(&page).await;
    watch_the_moving_layer(&page).await;
    click_a_move(&page).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(slides(&page).await, [], "the piece slid");
    page.assert_no_errors().await;
    page.close().await;
}

/// Counts the oscillators the page starts from now on (the counter is
/// installed once a page load).
async fn count_sounds(page: &Browser) {
    page.js("window.sounds = 0;
             const start = OscillatorNode.prototype.start;
             if (!start.counting) {
               const counting = function (...args) { window.sounds += 1; return start.apply(this, args); };
               counting.counting = true;
               OscillatorNode.prototype.start = counting;
             }
             return null;")
        .await;
}

async fn sounds_of_a_move(page: &Browser) -> u64 {
    count_sounds(page).await;
    click_a_move(page).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    page.js("return window.sounds;").await.as_u64().unwrap()
}

async fn sound_is_on(page: &Browser) -> bool {
    page.flag("return document.getElementById('sound').classList.contains('on');")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium and ChromeDriver (Debian: chromium chromium-driver); contrib/test-everything.sh"]
async fn the_move_sound_sounds_only_when_on_and_stays_as_chosen() {
    let _one = BROWSER.lock().await;
    let (_gui, url) = start_gui(&[]);
    let page = browser().await;
    page.open(&url).await;
    into_free_analysis(&page).await;
    assert!(!sound_is_on(&page).await, "off at first");
    assert_eq!(sounds_of_a_move(&page).await, 0, "a sound while off");
    page.click("#sound").await;
    assert!(sound_is_on(&page).await);
    assert_eq!(sounds_of_a_move(&page).await, 1, "one sound a move");
    // The choice survives a reload.
    page.open(&url).await;
    assert!(sound_is_on(&page).await, "on after a reload");
    assert_eq!(
        sounds_of_a_move(&page).await,
        1,
        "one sound after the reload"
    );
    page.click("#sound").await;
    assert_eq!(
        sounds_of_a_move(&page).await,
        0,
        "a sound after turning it off"
    );
    page.open(&url).await;
    assert!(!sound_is_on(&page).await, "off after a reload");
    assert_eq!(sounds_of_a_move(&page).await, 0, "a sound after the reload");
    page.assert_no_errors().await;
    page.close().await;
}
