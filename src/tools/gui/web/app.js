// The agon page: draws what the server says and sends what the person does.
// The rules live in the server (agon's rules core): legal moves, captures,
// relocations and verdicts all arrive in the state; nothing is decided here.
"use strict";

// Errors are kept where tests (and curious people) can read them.
window.agonErrors = [];
window.addEventListener("error", (e) => window.agonErrors.push(String(e.message || e.type)), true);
window.addEventListener("unhandledrejection", (e) => window.agonErrors.push(String(e.reason)));
window.agonStats = { firstPaintMs: null, analysisUpdates: 0, stateUpdates: 0, lastMoveSentAt: 0, moveDelaysMs: [] };

const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let geometry = null;
let board = null;
let state = null;
let analysis = null;
let flipped = false;
let picked = null;
let drag = null;
let preview = null;
const analysedScores = new Map(); // FEN -> White's score from the analysis

function api(path, options = {}) {
  const headers = Object.assign({ "x-agon-token": token }, options.headers || {});
  return fetch(path, Object.assign({}, options, { headers }));
}

async function command(body) {
  const response = await api("/api/command", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  if (!response.ok) {
    const reply = await response.json().catch(() => ({ error: response.statusText }));
    showNotice(reply.error || "refused");
    return false;
  }
  return true;
}

function showNotice(text) {
  const notice = $("notice");
  notice.textContent = text || "";
  notice.hidden = !text;
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

const splitMove = AgonBoard.splitMove;

function legalFrom(cell) {
  return (state.legal || []).filter((mv) => splitMove(mv)[0] === cell).map((mv) => splitMove(mv)[1]);
}

function orientation() {
  return flipped ? "black" : "white";
}

function boardMarks() {
  const marks = {};
  if (preview) return marks;
  const add = (name, cls) => { (marks[name] = marks[name] || []).push(cls); };
  const last = splitMove(state.last);
  const origins = new Set((state.legal || []).map((mv) => splitMove(mv)[0]));
  const dests = new Set(picked ? legalFrom(picked) : []);
  const relocating = new Set(state.relocating || []);
  if (last) { add(last[0], "last"); add(last[1], "last"); }
  for (const name of origins) {
    add(name, "origin");
    if (relocating.has(name)) add(name, "relocate");
  }
  if (picked) add(picked, "sel");
  for (const name of dests) {
    add(name, "dest");
    if (relocating.has(picked)) add(name, "reloc-target");
  }
  return marks;
}

function renderBoard() {
  if (!state || !board) return;
  board.draw({
    cells: preview || state.cells,
    orientation: orientation(),
    marks: boardMarks(),
    arrows: boardArrows(),
    fen: state.fen,
  });
  if (window.agonStats.firstPaintMs === null) {
    window.agonStats.firstPaintMs = performance.now();
  }
}

function boardArrows() {
  if (preview) return [];
  const arrows = [];
  if (state.hint) arrows.push({ mv: state.hint, cls: "hint" });
  if (analysis && analysis.fen === state.fen && analysis.lines.length) {
    arrows.push({ mv: analysis.lines[0].pv[0], cls: "best" });
  }
  return arrows;
}

async function play(mv) {
  picked = null;
  window.agonStats.lastMoveSentAt = performance.now();
  renderBoard();
  return command({ cmd: "move", mv });
}

// Click-click and drag share one path: pointerdown picks or plays, a
// pointerup elsewhere after a drag plays.
function onCell(cell, event) {
  if (!state) return;
  if (picked && legalFrom(picked).includes(cell)) {
    play(picked + cell);
    return;
  }
  if (legalFrom(cell).length) {
    picked = cell;
    drag = { from: cell, x: event.clientX, y: event.clientY, moving: false };
    $("board").setPointerCapture(event.pointerId);
  } else {
    picked = null;
  }
  renderBoard();
}

function onPointerMove(event) {
  if (!drag) return;
  if (!drag.moving && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 6) return;
  drag.moving = true;
  const p = board.point(event);
  board.floating(state.cells[drag.from], p.x, p.y);
}

function onPointerUp(event) {
  if (!drag) return;
  const wasMoving = drag.moving;
  const from = drag.from;
  drag = null;
  board.floating(null);
  if (!wasMoving) return;
  const cell = board.cellAt(event.clientX, event.clientY);
  if (cell && cell !== from && legalFrom(from).includes(cell)) play(from + cell);
}

function formatScore(score) {
  if (!score) return "?";
  if (score.mate !== undefined) {
    return score.mate > 0 ? "+M" + score.mate : "-M" + Math.abs(score.mate);
  }
  const v = score.cp / 100;
  return (v > 0 ? "+" : "") + v.toFixed(2);
}

function scoreShare(score) {
  if (!score) return 0.5;
  if (score.mate !== undefined) return score.mate > 0 ? 1 : 0;
  return 1 / (1 + Math.exp(-score.cp / 250));
}

function formatClock(ms) {
  const negative = ms < 0;
  ms = Math.max(0, ms);
  const total = Math.floor(ms / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  const tenths = total < 20 ? "." + Math.floor((ms % 1000) / 100) : "";
  return (negative ? "-" : "") + m + ":" + String(s).padStart(2, "0") + tenths;
}

let clockBase = null;

function renderClocks() {
  const top = flipped ? "white" : "black";
  const bottom = flipped ? "black" : "white";
  for (const [id, side] of [["player-top", top], ["player-bottom", bottom]]) {
    const box = $(id);
    const index = side === "white" ? 0 : 1;
    box.querySelector(".name").textContent = (side === "white" ? "White: " : "Black: ") + (state.names[index] || "");
    const clock = box.querySelector(".clock");
    if (!state.clocks) {
      clock.textContent = "";
      clock.className = "clock";
      continue;
    }
    let left = state.clocks[side];
    const running = state.clocks.running === side;
    if (running && clockBase) left -= performance.now() - clockBase;
    clock.textContent = formatClock(left);
    clock.className = "clock" + (running ? " running" : "") + (left < 10000 ? " low" : "");
  }
}

function renderMoves() {
  const box = $("moves");
  box.textContent = "";
  const startBlack = state.start_fen.split(" ")[1] === "b";
  const firstNumber = parseInt(state.start_fen.split(" ")[2] || "1", 10) || 1;
  state.moves.forEach((m, i) => {
    const ply = i + (startBlack ? 1 : 0);
    if (ply % 2 === 0 || i === 0) {
      const num = document.createElement("span");
      num.className = "num";
      num.textContent = firstNumber + Math.floor(ply / 2) + (ply % 2 ? "..." : ".");
      box.appendChild(num);
    }
    const span = document.createElement("span");
    span.className = "ply" + (state.cursor === i + 1 ? " current" : "");
    span.dataset.ply = String(i + 1);
    span.dataset.mv = m.mv;
    span.textContent = m.mv;
    if (m.score || m.book) {
      const small = document.createElement("small");
      small.textContent = m.book ? "book" : formatScore(m.score) + (m.depth ? "/" + m.depth : "");
      span.appendChild(small);
    }
    box.appendChild(span);
    box.appendChild(document.createTextNode(" "));
  });
  const current = box.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
}

function graphScores() {
  // Index 0 is the start position, i the position after ply i.
  const scores = [analysedScores.get(state.start_fen) || null];
  state.moves.forEach((m) => scores.push(m.score || analysedScores.get(m.fen) || null));
  return scores;
}

function renderGraph() {
  const graph = $("graph");
  graph.textContent = "";
  const scores = graphScores();
  const n = Math.max(scores.length - 1, 1);
  let d = "M 0 80";
  let share = 0.5;
  scores.forEach((s, i) => {
    if (s) share = scoreShare(s);
    d += ` L ${(i / n) * 300} ${80 - share * 80}`;
  });
  if (scores.length === 1) d += ` L 300 ${80 - share * 80}`;
  d += " L 300 80 Z";
  el("path", { class: "area", d }, graph);
  el("line", { class: "mid", x1: 0, y1: 40, x2: 300, y2: 40 }, graph);
  const x = (state.cursor / n) * 300;
  el("line", { class: "cursor", x1: x, y1: 0, x2: x, y2: 80 }, graph);
}

function renderAnalysis() {
  const lines = $("pv-lines");
  const current = analysis && analysis.fen === state.fen ? analysis : null;
  $("analyse-toggle").classList.toggle("on", state.analysing);
  $("analyse-toggle").textContent = state.analysing ? "Stop" : "Analyse";
  if (!current || !current.lines.length) {
    // Without analysis the bar shows the score recorded for the move that led here.
    const recorded = state.cursor > 0 ? state.moves[state.cursor - 1].score : null;
    $("evalfill").style.height = (scoreShare(recorded) * 100).toFixed(1) + "%";
    $("evaltext").textContent = recorded ? formatScore(recorded) : "";
    if (!state.analysing) return;
    $("an-score").textContent = "...";
    lines.textContent = "";
    return;
  }
  const best = current.lines[0];
  $("an-score").textContent = formatScore(best.score) + (best.bound ? (best.bound === "lowerbound" ? " (>=)" : " (<=)") : "") + " White";
  $("an-depth").textContent = "depth " + best.depth + (best.seldepth ? "/" + best.seldepth : "");
  $("an-nps").textContent = best.nps ? (best.nps / 1e6).toFixed(2) + " Mnps" : "";
  lines.textContent = "";
  current.lines.forEach((line) => {
    const li = document.createElement("li");
    li.dataset.multipv = String(line.multipv);
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = formatScore(line.score);
    li.appendChild(score);
    const pv = document.createElement("span");
    pv.className = "pv";
    pv.textContent = line.pv.join(" ");
    li.appendChild(pv);
    li.addEventListener("mouseenter", () => showPreview(line.pv));
    li.addEventListener("mouseleave", () => { preview = null; renderBoard(); });
    li.addEventListener("click", () => { preview = null; if (state.legal.includes(line.pv[0])) play(line.pv[0]); });
    lines.appendChild(li);
  });
  const share = scoreShare(best.score);
  $("evalfill").style.height = (share * 100).toFixed(1) + "%";
  $("evaltext").textContent = formatScore(best.score);
  analysedScores.set(current.fen, best.score);
}

async function showPreview(pv) {
  const response = await api("/api/preview", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ moves: pv }),
  });
  if (response.ok) {
    preview = (await response.json()).cells;
    renderBoard();
  }
}

function renderStatus() {
  const banner = $("banner");
  if (state.result) {
    banner.hidden = false;
    banner.textContent = "Game over: " + state.result.reason;
    banner.dataset.termination = state.result.termination;
    banner.dataset.winner = state.result.winner || "draw";
  } else {
    banner.hidden = true;
  }
  let text = (state.side === "white" ? "White" : "Black") + " to move";
  if (state.relocating.length && state.legal.length) text += ": relocate the captured piece (" + state.relocating.join(", ") + ")";
  else if (state.relocating.length) text += " (relocation turn)";
  if (state.thinking) text += " - engine thinking";
  if (state.mode === "watch" && state.paused) text += " - paused";
  $("status").textContent = text;
  $("mode-label").textContent = { play: "playing " + state.human, watch: "engine game", analysis: "analysis" }[state.mode];
  $("watch-pause").textContent = state.paused ? "Resume" : "Pause";
  const fen = $("fen");
  if (document.activeElement !== fen) fen.value = state.fen;
  if (state.notice) showNotice(state.notice);
}

let choicesShown = "";
let enginesShown = "";

function renderChoices() {
  const key = JSON.stringify(state.choices);
  if (key !== choicesShown) {
    choicesShown = key;
    for (const select of document.querySelectorAll(".engine-choice")) {
      select.textContent = "";
      state.choices.forEach((c, i) => {
        const option = document.createElement("option");
        option.value = String(i);
        option.textContent = c.label;
        select.appendChild(option);
      });
    }
    const level = $("play-level");
    level.textContent = "";
    const names = ["1 beginner (300 nodes)", "2 (3,000 nodes)", "3 (30,000 nodes)", "4 (300,000 nodes)", "5 full strength"];
    names.forEach((n, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = n;
      level.appendChild(option);
    });
    level.value = String(state.level);
    $("play-engine").value = String(state.engines[0].choice);
    $("watch-white").value = String(state.engines[2].choice);
    $("watch-black").value = String(state.engines[3].choice);
  }
  const library = $("library");
  const libraryKey = JSON.stringify(state.library);
  if (library.dataset.key !== libraryKey) {
    library.dataset.key = libraryKey;
    library.textContent = "";
    state.library.forEach((g, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = `${i + 1}. ${g.white} - ${g.black} ${g.result} (${g.plies} plies)`;
      library.appendChild(option);
    });
    $("library-label").hidden = state.library.length < 2;
  }
}

function renderEngines() {
  const key = JSON.stringify(state.engines);
  if (key === enginesShown) return;
  enginesShown = key;
  const box = $("engines");
  box.textContent = "";
  for (const engine of state.engines) {
    const div = document.createElement("div");
    div.className = "engine";
    div.dataset.role = engine.role;
    const head = document.createElement("div");
    head.innerHTML = "";
    const title = document.createElement("b");
    title.textContent = engine.role + ": " + (engine.name || state.choices[engine.choice].label);
    head.appendChild(title);
    const stateText = document.createElement("span");
    stateText.className = "state" + (engine.status === "failed" ? " failed" : "");
    stateText.textContent = " " + engine.status + (engine.error ? ": " + engine.error : "");
    head.appendChild(stateText);
    if (engine.status === "failed") {
      const restart = document.createElement("button");
      restart.textContent = "Restart";
      restart.addEventListener("click", () => command({ cmd: "set_engine", role: engine.role, engine: engine.choice }));
      head.appendChild(restart);
    }
    div.appendChild(head);
    const values = new Map(engine.values.map(([n, v]) => [n, v]));
    for (const option of engine.options) {
      const row = document.createElement("label");
      row.className = "opt";
      const name = document.createElement("span");
      name.textContent = option.name;
      row.appendChild(name);
      const current = values.has(option.name) ? values.get(option.name) : option.default;
      let input;
      if (option.kind === "button") {
        input = document.createElement("button");
        input.textContent = "Press";
        input.addEventListener("click", () => command({ cmd: "set_option", role: engine.role, name: option.name }));
      } else if (option.kind === "check") {
        input = document.createElement("input");
        input.type = "checkbox";
        input.checked = current === "true";
        input.addEventListener("change", () => command({ cmd: "set_option", role: engine.role, name: option.name, value: String(input.checked) }));
      } else if (option.kind === "combo") {
        input = document.createElement("select");
        for (const v of option.vars) {
          const o = document.createElement("option");
          o.textContent = v;
          input.appendChild(o);
        }
        input.value = current || "";
        input.addEventListener("change", () => command({ cmd: "set_option", role: engine.role, name: option.name, value: input.value }));
      } else {
        input = document.createElement("input");
        input.type = option.kind === "spin" ? "number" : "text";
        if (option.min !== null) input.min = option.min;
        if (option.max !== null) input.max = option.max;
        input.value = current || "";
        input.size = 8;
        input.addEventListener("change", () => command({ cmd: "set_option", role: engine.role, name: option.name, value: input.value }));
      }
      row.appendChild(input);
      div.appendChild(row);
    }
    box.appendChild(div);
  }
}

function render() {
  renderBoard();
  renderClocks();
  renderMoves();
  renderGraph();
  renderAnalysis();
  renderStatus();
  renderChoices();
  renderEngines();
  $("evalbar").classList.toggle("flipped", flipped);
}

function onState(data) {
  const next = JSON.parse(data);
  if (state && next.version < state.version) return;
  const moved = state && next.moves.length !== state.moves.length;
  if (state && (next.fen !== state.fen || next.cursor !== state.cursor)) picked = null;
  state = next;
  clockBase = performance.now();
  window.agonStats.stateUpdates += 1;
  render();
  if (moved && window.agonStats.lastMoveSentAt) {
    window.agonStats.moveDelaysMs.push(performance.now() - window.agonStats.lastMoveSentAt);
    window.agonStats.lastMoveSentAt = 0;
  }
  document.body.dataset.version = String(state.version);
}

function onAnalysis(data) {
  const next = JSON.parse(data);
  // Tagged with its position: an update for another position is stale.
  if (!state || next.fen !== state.fen) return;
  analysis = next;
  window.agonStats.analysisUpdates += 1;
  renderAnalysis();
  renderBoard();
  renderGraph();
}

function view(ply) {
  if (!state) return;
  const target = Math.max(0, Math.min(state.moves.length, ply));
  if (target !== state.cursor) command({ cmd: "view", ply: target });
}

function flip() {
  flipped = !flipped;
  render();
}

function toggleHelp(show) {
  $("help").hidden = show === undefined ? !$("help").hidden : !show;
}

function onKey(event) {
  const tag = (event.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "textarea" || tag === "select") return;
  const keys = {
    ArrowLeft: () => view(state.cursor - 1),
    ArrowRight: () => view(state.cursor + 1),
    ArrowUp: () => view(0),
    Home: () => view(0),
    ArrowDown: () => view(state.moves.length),
    End: () => view(state.moves.length),
    f: flip,
    c: () => $("board").classList.toggle("coords"),
    a: () => command({ cmd: "analysis", on: !state.analysing }),
    "?": () => toggleHelp(),
    Escape: () => { toggleHelp(false); picked = null; renderBoard(); },
  };
  const action = keys[event.key];
  if (action && state) {
    event.preventDefault();
    action();
  }
}

function download(name, text) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type: "application/x-chess-pgn" }));
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
}

async function importPgn(text) {
  const response = await api("/api/pgn", { method: "POST", body: text });
  const reply = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) showNotice(reply.error);
  else showNotice("");
}

function wire() {
  const svg = $("board");
  svg.addEventListener("pointermove", onPointerMove);
  svg.addEventListener("pointerup", onPointerUp);
  svg.addEventListener("pointercancel", () => { drag = null; board.floating(null); });
  document.addEventListener("keydown", onKey);
  $("nav-start").addEventListener("click", () => view(0));
  $("nav-back").addEventListener("click", () => view(state.cursor - 1));
  $("nav-forward").addEventListener("click", () => view(state.cursor + 1));
  $("nav-end").addEventListener("click", () => view(state.moves.length));
  $("flip").addEventListener("click", flip);
  $("coords").addEventListener("click", () => svg.classList.toggle("coords"));
  $("help-button").addEventListener("click", () => toggleHelp());
  $("help-close").addEventListener("click", () => toggleHelp(false));
  $("move-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const mv = $("move-input").value.trim().toLowerCase();
    if (mv) play(mv).then(() => { $("move-input").value = ""; });
  });
  const newGame = (fen) => command({
    cmd: "new_game", fen, human: $("play-colour").value, level: parseInt($("play-level").value, 10),
    tc: $("play-tc").value, engine: parseInt($("play-engine").value, 10),
  });
  $("new-game").addEventListener("click", () => newGame(null));
  $("new-game-fen").addEventListener("click", () => newGame($("fen").value));
  $("takeback").addEventListener("click", () => command({ cmd: "takeback" }));
  $("hint").addEventListener("click", () => command({ cmd: "hint" }));
  $("resign").addEventListener("click", () => command({ cmd: "resign" }));
  $("analyse-toggle").addEventListener("click", () => command({ cmd: "analysis", on: !state.analysing }));
  $("multipv").addEventListener("change", () => command({ cmd: "multipv", lines: parseInt($("multipv").value, 10) }));
  $("free-analysis").addEventListener("click", () => command({ cmd: "analyse" }));
  $("watch-start").addEventListener("click", () => command({
    cmd: "watch", white: parseInt($("watch-white").value, 10), black: parseInt($("watch-black").value, 10),
    tc: $("watch-tc").value,
  }));
  $("watch-pause").addEventListener("click", () => command({ cmd: "pause", paused: !state.paused }));
  $("fen-copy").addEventListener("click", async () => {
    try { await navigator.clipboard.writeText($("fen").value); } catch (e) { $("fen").select(); }
  });
  $("fen-analyse").addEventListener("click", () => command({ cmd: "analyse", fen: $("fen").value }));
  $("pgn-export").addEventListener("click", async () => {
    const response = await api("/api/pgn");
    const text = await response.text();
    $("pgn-text").value = text;
    download("agon-game.pgn", text);
  });
  $("pgn-import").addEventListener("click", () => importPgn($("pgn-text").value));
  $("pgn-file").addEventListener("change", async () => {
    const file = $("pgn-file").files[0];
    if (file) importPgn(await file.text());
  });
  $("library").addEventListener("change", () => command({ cmd: "open_game", index: parseInt($("library").value, 10) }));
  $("graph").addEventListener("click", (e) => {
    const box = $("graph").getBoundingClientRect();
    const n = Math.max(state.moves.length, 1);
    view(Math.round(((e.clientX - box.left) / box.width) * n));
  });
  $("moves").addEventListener("click", (e) => {
    const ply = e.target.closest(".ply");
    if (ply) view(parseInt(ply.dataset.ply, 10));
  });
  setInterval(() => { if (state) renderClocks(); }, 100);
}

function connect() {
  const events = new EventSource("/api/events?token=" + encodeURIComponent(token));
  events.addEventListener("state", (e) => onState(e.data));
  events.addEventListener("analysis", (e) => onAnalysis(e.data));
  events.onerror = () => { $("status").textContent = "connection to agon lost, retrying..."; };
}

async function start() {
  const response = await api("/api/geometry");
  if (!response.ok) {
    document.body.textContent = "This page needs the URL agon gui printed, with its token.";
    return;
  }
  geometry = await response.json();
  board = AgonBoard.create($("board"), geometry, { onCell });
  wire();
  connect();
}

start();
