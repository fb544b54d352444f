//! The browser harness of the GUI tests: the real `agon gui` server and
//! Debian's headless Chromium driven over WebDriver (chromedriver), with the
//! helpers that read the page's `data-*` contract.

#![allow(dead_code)] // Each browser test file uses a different part of the harness.

use agon::rules::{Cell, Color, Kind, parse_fen};
use fantoccini::{Client, ClientBuilder, Locator};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One browser at a time: the machine has two cores.
pub static BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A child process killed when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `agon gui --no-open` with extra arguments, and the URL it printed.
pub fn start_gui(args: &[&str]) -> (Process, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agon"))
        .arg("gui")
        .arg("--no-open")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("agon gui starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("agon gui prints its URL");
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://") && url.contains("/?token="),
        "{url}"
    );
    (Process(child), url)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub struct Browser {
    /// The WebDriver session.
    pub client: Client,
    _chromium: Chromium,
    _driver: Process,
}

/// The browser chromedriver started, found by its profile directory: ended
/// when dropped, because a test that fails never reaches `close` and killing
/// chromedriver alone leaves its browser running. The profile is removed
/// after `drop` has ended the browser, when the field drops.
struct Chromium {
    profile: tempfile::TempDir,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = Command::new("pkill")
            .arg("-f")
            .arg(format!(
                "user-data-dir={}( |$)",
                self.profile.path().display()
            ))
            .status();
    }
}

/// The browser's turn (one at a time), a new `agon gui` with these
/// arguments and a desktop browser with its page open; keep all three
/// until the test ends.
pub async fn gui_page(args: &[&str]) -> (tokio::sync::MutexGuard<'static, ()>, Process, Browser) {
    let one = BROWSER.lock().await;
    let (gui, url) = start_gui(args);
    let page = browser().await;
    page.open(&url).await;
    (one, gui, page)
}

/// A raw HTTP GET to the server on `port` with this `Host` header and
/// maybe the token; returns the status code.
pub fn http_status(port: u16, path: &str, host: &str, token: Option<&str>) -> u16 {
    http_answer(port, &format!("GET {path}"), host, token, "").0
}

/// A raw HTTP request (`method path`) with `body` to the server on `port`
/// with this `Host` header and maybe the token; returns the status code and body.
pub fn http_answer(
    port: u16,
    request: &str,
    host: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server listens");
    let token_header = token.map_or(String::new(), |t| format!("x-agon-token: {t}\r\n"));
    write!(
        stream,
        "{request} HTTP/1.1\r\nHost: {host}\r\n{token_header}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = reply
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_string());
    (status, body)
}

/// A headless browser with a desktop window.
pub async fn browser() -> Browser {
    browser_sized(1280, 1000).await
}

/// A headless browser with a window of this size (a phone is 390x844).
pub async fn browser_sized(width: u32, height: u32) -> Browser {
    browser_with(width, height, &[]).await
}

/// A headless browser of this size started with further Chromium switches
/// (such as `--force-prefers-reduced-motion`).
pub async fn browser_with(width: u32, height: u32, switches: &[&str]) -> Browser {
    let port = free_port();
    let driver = Process(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs (apt-get install chromium chromium-driver)"),
    );
    let deadline = Instant::now() + PATIENCE;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let profile = tempfile::Builder::new()
        .prefix("agon-gui-profile-")
        .tempdir()
        .unwrap();
    let mut args = vec![
        "--headless".to_string(),
        "--no-sandbox".to_string(),
        "--disable-gpu".to_string(),
        "--disable-quic".to_string(),
        "--no-first-run".to_string(),
        "--disable-background-networking".to_string(),
        "--disable-component-update".to_string(),
        "--disable-sync".to_string(),
        "--disable-dev-shm-usage".to_string(),
        format!("--window-size={width},{height}"),
        format!("--user-data-dir={}", profile.path().display()),
    ];
    args.extend(switches.iter().map(|s| s.to_string()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": CHROMIUM, "args": args }),
    );
    capabilities.insert(
        "goog:loggingPrefs".into(),
        serde_json::json!({ "browser": "ALL" }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a browser session");
    Browser {
        client,
        _driver: driver,
        _chromium: Chromium { profile },
    }
}

impl Browser {
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.expect("page opens");
        self.wait_until("the board", async || self.cells().await.len() == 91)
            .await;
        self.wait_until("the first state", async || {
            self.piece("f1").await == "Q"
                || !self
                    .js("return state === null")
                    .await
                    .as_bool()
                    .unwrap_or(true)
        })
        .await;
    }

    /// The red bar's text, empty while it is hidden.
    pub async fn notice(&self) -> String {
        self.js(
            "const n = document.getElementById('notice'); return n.hidden ? '' : n.textContent;",
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    pub async fn js(&self, script: &str) -> serde_json::Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Runs an asynchronous script: it ends by calling its last argument
    /// (`arguments[arguments.length - 1]`) with the answer.
    pub async fn js_async(&self, script: &str) -> serde_json::Value {
        self.client
            .execute_async(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Plays `plies` moves in free analysis from the game shown, each the
    /// first legal move the page offers, waiting for each state.
    pub async fn play_free_moves(&self, plies: usize) {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             const pause = () => new Promise(r => setTimeout(r, 20));
             (async () => {{
               await command({{cmd: 'analyse'}});
               while (state.mode !== 'analysis') await pause();
               for (let i = 0; i < {plies}; i++) {{
                 const before = state.moves.length;
                 while (!state.legal.length) await pause();
                 await command({{cmd: 'move', mv: state.legal[(i * 7) % state.legal.length]}});
                 while (state.moves.length === before) await pause();
               }}
               done(state.moves.length);
             }})();"
        );
        self.js_async(&script).await;
    }

    /// A script's answer as a boolean (false when it is not one).
    pub async fn flag(&self, script: &str) -> bool {
        self.js(script).await.as_bool().unwrap_or(false)
    }

    /// Presses keys on the page body (WebDriver key codes such as `\u{E012}`).
    pub async fn keys(&self, keys: &str) {
        self.js("document.activeElement && document.activeElement.blur();")
            .await;
        self.client
            .find(Locator::Css("body"))
            .await
            .expect("the body")
            .send_keys(keys)
            .await
            .unwrap_or_else(|e| panic!("keys {keys:?}: {e}"));
    }

    pub async fn cells(&self) -> Vec<fantoccini::elements::Element> {
        self.client
            .find_all(Locator::Css("[data-cell]"))
            .await
            .unwrap_or_default()
    }

    pub async fn cell(&self, name: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Css(&format!("[data-cell=\"{name}\"]")))
            .await
            .unwrap_or_else(|e| panic!("cell {name}: {e}"))
    }

    pub async fn piece(&self, name: &str) -> String {
        self.cell(name)
            .await
            .attr("data-piece")
            .await
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    pub async fn classes(&self, name: &str) -> String {
        self.cell(name)
            .await
            .attr("class")
            .await
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    pub async fn click(&self, selector: &str) {
        self.client
            .find(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {selector}: {e}"));
    }

    pub async fn click_cell(&self, name: &str) {
        self.cell(name)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {name}: {e}"));
    }

    pub async fn select(&self, selector: &str, value: &str) {
        self.client
            .find(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"))
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("select {value} in {selector}: {e}"));
    }

    pub async fn set_input(&self, selector: &str, text: &str) {
        let script = format!(
            "const e = document.querySelector({}); e.value = {}; e.dispatchEvent(new Event('change'));",
            serde_json::to_string(selector).unwrap(),
            serde_json::to_string(text).unwrap()
        );
        self.js(&script).await;
    }

    pub async fn text(&self, selector: &str) -> String {
        let script = format!(
            "const e = document.querySelector({}); return e ? (['INPUT', 'TEXTAREA', 'SELECT'].includes(e.tagName) ? e.value : e.textContent) : '';",
            serde_json::to_string(selector).unwrap()
        );
        self.js(&script)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub async fn wait_until(&self, what: &str, mut check: impl AsyncFnMut() -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !check().await {
            if Instant::now() > deadline {
                self.screenshot(&format!("timeout-{}", what.replace(' ', "-")))
                    .await;
                panic!("waited too long for {what}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn moves(&self) -> Vec<String> {
        let value = self
            .js("return Array.from(document.querySelectorAll('#moves .ply')).map(e => e.dataset.mv);")
            .await;
        value
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every cell's `data-piece` must be what the FEN puts there.
    pub async fn assert_board_is(&self, fen: &str) {
        let position = parse_fen(fen).expect("a valid FEN");
        let shown = self
            .js("const o = {}; document.querySelectorAll('[data-cell]').forEach(e => o[e.dataset.cell] = e.dataset.piece); return o;")
            .await;
        for cell in Cell::all() {
            let expected = position.piece_at(cell).map_or(String::new(), |p| {
                let letter = match (p.color, p.kind) {
                    (Color::White, Kind::Queen) => "Q",
                    (Color::White, Kind::Guard) => "G",
                    (Color::Black, Kind::Queen) => "q",
                    (Color::Black, Kind::Guard) => "g",
                };
                format!("{letter}{}", if p.captured { "*" } else { "" })
            });
            assert_eq!(
                shown[cell.to_string()].as_str(),
                Some(expected.as_str()),
                "cell {cell} for {fen}"
            );
        }
    }

    pub async fn assert_no_errors(&self) {
        let errors = self.js("return window.agonErrors;").await;
        assert_eq!(errors, serde_json::json!([]), "errors in the page");
        let log = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .expect("the browser's console log");
        let severe: Vec<&serde_json::Value> = log
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter(|e| e["level"] == "SEVERE" && !refusal(e))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            severe.is_empty(),
            "errors in the browser console: {severe:?}"
        );
    }

    pub async fn screenshot(&self, name: &str) {
        if let Ok(png) = self.client.screenshot().await {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gui-screenshots");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("{name}.png")), png);
        }
    }

    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// A command the server refused with 400 (the page shows why): the page's
/// normal answer to a bad input, which Chromium logs as a failed load.
fn refusal(entry: &serde_json::Value) -> bool {
    let message = entry["message"].as_str().unwrap_or_default();
    entry["source"] == "network" && message.contains("/api/") && message.contains("status of 400")
}

/// chromedriver's console log of the page (`goog:loggingPrefs`), read and cleared.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}
