// The agon page: draws what the server says and sends what the person does.
// The rules live in the server (agon's rules core): legal moves, captures,
// relocations and verdicts all arrive in the state; nothing is decided here.
"use strict";

// Errors are kept where tests (and curious people) can read them.
window.agonErrors = [];
window.addEventListener("error", (e) => window.agonErrors.push(String(e.message || e.type)), true);
window.addEventListener("unhandledrejection", (e) => window.agonErrors.push(String(e.reason)));
window.agonStats = { firstPaintMs: null, analysisUpdates: 0, stateUpdates: 0, lastMoveSentAt: 0, moveDelaysMs: [], sounds: 0 };

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
let coords = false;
let sound = false;
// The ply asked for by navigation whose state has not arrived yet, so that
// quick key presses count from it rather than from the last state.
let navTarget = null;
// The problem the server reported for the page's last command, shown (in the
// language of the moment) until the next command succeeds.
let commandError = null;
const analysedScores = new Map(); // FEN -> White's score from the analysis
const PREFERENCES_KEY = "agon.preferences";

function api(path, options = {}) {
  const headers = Object.assign({ "x-agon-token": token }, options.headers || {});
  return fetch(path, Object.assign({}, options, { headers }));
}

async function command(body) {
  const response = await api("/api/command", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  if (!response.ok) {
    commandError = await problemOf(response);
    renderNotice();
    // A refused value is not kept: the engines panel shows what the engine has.
    enginesShown = "";
    if (state) renderEngines();
    return false;
  }
  commandError = null;
  renderNotice();
  return true;
}

// What a refused request's reply says: a problem with its code and parameters.
async function problemOf(response) {
  const reply = await response.json().catch(() => ({}));
  return reply.code ? reply : { code: null, params: {} };
}

// A problem in the page's language: its code names the sentence
// (error.<code>); a parameter that is a problem itself is told inside it, a
// rule as the lessons explain it, a side by its name. Words an engine wrote
// are shown as they are.
function problemText(problem) {
  if (!problem.code) return t("ui.error.refused");
  const params = {};
  for (const [name, value] of Object.entries(problem.params || {})) {
    if (value && typeof value === "object") params[name] = problemText(value);
    else if (name === "rule") params[name] = t("learn.why." + value);
    else if (name === "side") params[name] = sideName(value);
    else params[name] = value;
  }
  return t("error." + problem.code, params);
}

function renderNotice() {
  const problem = commandError || (state && state.notice);
  const text = problem ? problemText(problem) : "";
  const notice = $("notice");
  notice.textContent = text;
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

// The person's pieces at the bottom; Flip turns the board from there.
function orientation() {
  const base = state && state.mode === "play" && state.human === "black" ? "black" : "white";
  if (!flipped) return base;
  return base === "white" ? "black" : "white";
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
  const current = currentAnalysis();
  if (current) {
    // One arrow per line, the strongest boldest; a move two lines share is drawn once.
    const seen = new Set();
    current.lines.forEach((line, i) => {
      const mv = line.pv[0];
      if (!mv || seen.has(mv)) return;
      seen.add(mv);
      arrows.push({ mv, cls: "best", width: Math.max(0.8, 2.6 - i * 0.45), opacity: Math.max(0.35, 0.85 - i * 0.12) });
    });
  }
  if (state.hint) arrows.push({ mv: state.hint, cls: "hint" });
  return arrows;
}

async function play(mv) {
  picked = null;
  window.agonStats.lastMoveSentAt = performance.now();
  renderBoard();
  return command({ cmd: "move", mv });
}

// The analysis of the position shown, if there is one: lines of any other
// position are never shown.
function currentAnalysis() {
  return state && analysis && analysis.fen === state.fen && analysis.lines.length ? analysis : null;
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
    return score.mate > 0 ? "+M" + score.mate : "\u2212M" + Math.abs(score.mate);
  }
  const v = score.cp / 100;
  return (v > 0 ? "+" : v < 0 ? "\u2212" : "") + Math.abs(v).toFixed(2);
}

function scoreShare(score) {
  if (!score) return 0.5;
  if (score.mate !== undefined) return score.mate > 0 ? 1 : 0;
  return 1 / (1 + Math.exp(-score.cp / 250));
}

// A clock that ran out reads 0:00.0: the time forfeit says the rest.
function formatClock(ms) {
  ms = Math.max(0, ms);
  const total = Math.floor(ms / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  const tenths = total < 20 ? "." + Math.floor((ms % 1000) / 100) : "";
  return m + ":" + String(s).padStart(2, "0") + tenths;
}

let clockBase = null;

function playerName(index) {
  const name = state.names[index] || "";
  if (name === "you") return t("ui.player.you");
  return name === "?" ? "" : name;
}

function renderClocks() {
  const bottom = orientation();
  const top = bottom === "white" ? "black" : "white";
  for (const [id, side] of [["player-top", top], ["player-bottom", bottom]]) {
    const box = $(id);
    const index = side === "white" ? 0 : 1;
    const name = playerName(index);
    box.querySelector(".name").textContent = t(side === "white" ? "ui.white" : "ui.black") + (name ? ": " + name : "");
    box.dataset.side = side;
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
      small.textContent = m.book ? t("ui.moves.book") : formatScore(m.score) + (m.depth ? "/" + m.depth : "");
      span.appendChild(small);
    }
    const mark = reviewMarks().get(i + 1);
    if (mark) {
      span.classList.add("mark-" + mark.kind);
      span.dataset.mark = mark.kind;
      const symbol = document.createElement("span");
      symbol.className = "symbol";
      symbol.textContent = MARK_SYMBOLS[mark.kind];
      span.insertBefore(symbol, span.firstChild.nextSibling);
    }
    if (m.comment) span.title = m.comment;
    if (!m.main) span.classList.add("side");
    box.appendChild(span);
    box.appendChild(document.createTextNode(" "));
    if (m.alternatives && m.alternatives.length) {
      // The moves that could have been played instead: click one to follow it.
      const alts = document.createElement("span");
      alts.className = "alternatives";
      alts.append("(");
      m.alternatives.forEach((alt, k) => {
        const a = document.createElement("span");
        a.className = "alt";
        a.dataset.node = String(alt.node);
        a.textContent = alt.mv;
        if (k) alts.append(" ");
        alts.appendChild(a);
      });
      alts.append(") ");
      box.appendChild(alts);
    }
  });
  const here = state.cursor > 0 ? state.moves[state.cursor - 1] : null;
  $("promote").hidden = !(state.mode === "analysis" && here && !here.main);
  $("delete-move").hidden = !(state.mode === "analysis" && here);
  // Only the list scrolls to keep the current move in view, never the page.
  const current = box.querySelector(".current");
  if (current) {
    const top = current.offsetTop - box.offsetTop;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + current.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + current.offsetHeight - box.clientHeight;
  }
}

const MARK_SYMBOLS = { blunder: "??", mistake: "?", inaccuracy: "?!" };

// The review's marks by ply, when the review is of the line shown.
function reviewMarks() {
  const marks = new Map();
  const review = state.review;
  if (!review) return marks;
  for (const mark of review.marks) {
    const move = state.moves[mark.ply - 1];
    if (move && move.fen === mark.fen) marks.set(mark.ply, mark);
  }
  return marks;
}

function renderReview() {
  const review = state.review;
  const progress = $("review-progress");
  const list = $("review-list");
  list.textContent = "";
  $("review-start").disabled = !!(review && review.running) || !state.moves.length;
  if (!review) {
    progress.hidden = true;
    $("review-status").textContent = "";
    return;
  }
  for (const [fen, score] of review.scores) if (score) analysedScores.set(fen, score);
  progress.hidden = !review.running;
  progress.max = review.total;
  progress.value = review.done;
  $("review-status").textContent = review.running
    ? t("ui.review.running", { done: review.done, total: review.total })
    : t("ui.review.done", { count: review.marks.length, seconds: ((review.ms || 0) / 1000).toFixed(1), nodes: review.nodes });
  const startBlack = state.start_fen.split(" ")[1] === "b";
  const firstNumber = parseInt(state.start_fen.split(" ")[2] || "1", 10) || 1;
  for (const [ply, mark] of reviewMarks()) {
    const half = ply - 1 + (startBlack ? 1 : 0);
    const number = firstNumber + Math.floor(half / 2) + (half % 2 ? "..." : ".");
    const li = document.createElement("li");
    li.className = mark.kind;
    li.dataset.ply = String(ply);
    li.dataset.mark = mark.kind;
    li.textContent = t("ui.review.entry", { number, mv: state.moves[ply - 1].mv, kind: t("ui.review." + mark.kind), lost: Math.round(mark.lost * 100) });
    li.addEventListener("click", () => view(ply));
    list.appendChild(li);
  }
}

function graphScores() {
  // Index 0 is the start position, i the position after ply i.
  const scores = [analysedScores.get(state.start_fen) || null];
  state.moves.forEach((m) => scores.push(m.score || analysedScores.get(m.fen) || null));
  return scores;
}

// The score graph: White's winning share over the plies, with its axes.
const GRAPH = { left: 26, right: 314, top: 6, bottom: 84 };

function renderGraph() {
  const graph = $("graph");
  graph.textContent = "";
  const scores = graphScores();
  const n = Math.max(scores.length - 1, 1);
  const width = GRAPH.right - GRAPH.left;
  const height = GRAPH.bottom - GRAPH.top;
  const x = (i) => GRAPH.left + (i / n) * width;
  const y = (share) => GRAPH.bottom - share * height;
  el("rect", { class: "plot", x: GRAPH.left, y: GRAPH.top, width, height }, graph);
  const known = scores.filter((s) => s).length;
  if (known) {
    let d = `M ${GRAPH.left} ${GRAPH.bottom}`;
    let share = 0.5;
    scores.forEach((s, i) => {
      if (s) share = scoreShare(s);
      d += ` L ${x(i)} ${y(share)}`;
    });
    if (scores.length === 1) d += ` L ${GRAPH.right} ${y(share)}`;
    d += ` L ${GRAPH.right} ${GRAPH.bottom} Z`;
    el("path", { class: "area", d }, graph);
  } else {
    const empty = el("text", { class: "empty", x: (GRAPH.left + GRAPH.right) / 2, y: (GRAPH.top + GRAPH.bottom) / 2 + 3, "text-anchor": "middle" }, graph);
    empty.textContent = t("ui.graph.empty");
  }
  el("line", { class: "mid", x1: GRAPH.left, y1: y(0.5), x2: GRAPH.right, y2: y(0.5) }, graph);
  for (const [share, label] of [[1, t("ui.graph.white")], [0.5, "0"], [0, t("ui.graph.black")]]) {
    const text = el("text", { class: "axis", x: GRAPH.left - 3, y: y(share) + 3, "text-anchor": "end" }, graph);
    text.textContent = label;
  }
  const step = Math.max(1, Math.ceil(n / 8 / 10) * 10);
  for (let ply = 0; ply <= n; ply += step) {
    const text = el("text", { class: "axis", x: x(ply), y: GRAPH.bottom + 11, "text-anchor": "middle" }, graph);
    text.textContent = String(ply);
  }
  const title = el("text", { class: "axis title", x: GRAPH.right, y: GRAPH.bottom + 11, "text-anchor": "end" }, graph);
  title.textContent = t("ui.graph.plies");
  for (const [ply, mark] of reviewMarks()) {
    let share = 0.5;
    for (let i = ply; i >= 0; i--) if (scores[i]) { share = scoreShare(scores[i]); break; }
    el("circle", { class: "mark " + mark.kind, cx: x(ply), cy: y(share), r: 2.6, "data-ply": String(ply) }, graph);
  }
  const cx = x(state.cursor);
  el("line", { class: "cursor", x1: cx, y1: GRAPH.top, x2: cx, y2: GRAPH.bottom }, graph);
}

function renderAnalysis() {
  const lines = $("pv-lines");
  const current = currentAnalysis();
  $("analyse-toggle").classList.toggle("on", state.analysing);
  $("analyse-toggle").textContent = t(state.analysing ? "ui.analysis.stop" : "ui.analysis.start");
  lines.textContent = "";
  if (!current) {
    // Without analysis the bar shows the score recorded for the move that led here.
    const recorded = state.cursor > 0 ? state.moves[state.cursor - 1].score : null;
    $("evalfill").style.height = (scoreShare(recorded) * 100).toFixed(1) + "%";
    $("evaltext").textContent = recorded ? formatScore(recorded) : "";
    $("an-score").textContent = state.analysing ? "..." : "\u2013";
    $("an-depth").textContent = "";
    $("an-nps").textContent = "";
    return;
  }
  const best = current.lines[0];
  const bound = best.bound ? (best.bound === "lowerbound" ? " (>=)" : " (<=)") : "";
  $("an-score").textContent = t("ui.analysis.score", { score: formatScore(best.score) + bound });
  $("an-depth").textContent = t("ui.analysis.depth", { depth: best.depth + (best.seldepth ? "/" + best.seldepth : "") });
  $("an-nps").textContent = best.nps ? t("ui.analysis.nps", { mnps: (best.nps / 1e6).toFixed(2) }) : "";
  current.lines.forEach((line) => {
    const li = document.createElement("li");
    li.dataset.multipv = String(line.multipv);
    li.dataset.pv = line.pv.join(" ");
    li.dataset.fen = current.fen;
    const score = document.createElement("span");
    score.className = "score";
    score.textContent = formatScore(line.score);
    li.appendChild(score);
    // Every move of the line can be clicked (free analysis) to reach the position after it.
    const pv = document.createElement("span");
    pv.className = "pv";
    line.pv.forEach((mv, k) => {
      if (k) pv.append(" ");
      const step = document.createElement("span");
      step.className = "step";
      step.dataset.index = String(k);
      step.textContent = mv;
      step.addEventListener("mouseenter", () => showPreview(line.pv.slice(0, k + 1)));
      pv.appendChild(step);
    });
    li.appendChild(pv);
    li.addEventListener("mouseenter", () => showPreview(line.pv));
    li.addEventListener("mouseleave", () => { preview = null; renderBoard(); });
    // On pointerdown: the lines are redrawn ten times a second while the engine searches.
    li.addEventListener("pointerdown", (event) => {
      preview = null;
      const step = event.target.closest(".step");
      const upTo = step ? parseInt(step.dataset.index, 10) + 1 : 1;
      if (state.mode === "analysis") command({ cmd: "line", fen: current.fen, moves: line.pv.slice(0, upTo) });
      else if (state.legal.includes(line.pv[0])) play(line.pv[0]);
    });
    lines.appendChild(li);
  });
  $("evalfill").style.height = (scoreShare(best.score) * 100).toFixed(1) + "%";
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

function sideName(side) {
  return t(side === "white" ? "ui.white" : "ui.black");
}

function statusText() {
  if (state.result) return t("ui.status.over");
  let text = t("ui.status.to-move", { side: sideName(state.side) });
  if (state.relocating.length && state.legal.length) text += ": " + t("ui.status.relocate", { cells: state.relocating.join(", ") });
  else if (state.relocating.length) text += " " + t("ui.status.relocation-turn");
  if (state.queue && state.queue.position > 0) text += " - " + t("ui.status.queued", { ahead: state.queue.position });
  else if (state.thinking) text += " - " + t("ui.status.thinking");
  if (state.mode === "watch" && state.paused) text += " - " + t("ui.status.paused");
  return text;
}

// How a game ended, in the page's language: the rules core's termination
// and the winner name the ending; an ending only the server can name (an
// imported record's adjudication, say) keeps the server's own sentence.
const ENDINGS = {
  "formation": "ui.end.formation",
  "forfeit": "ui.end.forfeit",
  "no-moves": "ui.end.no-moves",
  "repetition": "ui.end.repetition",
  "time forfeit": "ui.end.time",
  "resignation": "ui.end.resignation",
  "illegal move": "ui.end.illegal",
  "crash": "ui.end.crash",
};

function endingText(result) {
  const key = ENDINGS[result.termination];
  if (!key) return result.reason;
  const side = (colour) => t(colour === "white" ? "ui.white" : "ui.black");
  const loser = result.winner === "white" ? "black" : "white";
  return t(key, { winner: result.winner ? side(result.winner) : "", loser: side(loser) });
}

function renderStatus() {
  const banner = $("banner");
  if (state.result) {
    banner.hidden = false;
    banner.textContent = t("ui.banner.over", { reason: endingText(state.result) });
    banner.dataset.termination = state.result.termination;
    banner.dataset.winner = state.result.winner || "draw";
  } else {
    banner.hidden = true;
  }
  $("status").textContent = statusText();
  const mode = { play: t("ui.mode.play", { side: sideName(state.human) }), watch: t("ui.mode.watch"), analysis: t("ui.mode.analysis") };
  $("mode-label").textContent = mode[state.mode];
  $("watch-pause").textContent = t(state.paused ? "ui.watch.resume" : "ui.watch.pause");
  const fen = $("fen");
  if (document.activeElement !== fen) fen.value = state.fen;
  document.body.classList.toggle("public", !!state.public);
  renderNotice();
}

// The controls show what the server has, unless the person is editing them.
function renderControls() {
  const keep = (id, value) => {
    const input = $(id);
    if (document.activeElement !== input && value !== undefined && value !== null) input.value = String(value);
  };
  keep("multipv", state.multipv);
  if (state.mode === "play") {
    keep("play-colour", state.human);
    keep("play-level", state.level);
    keep("play-tc", state.clocks ? state.clocks.control : "");
  } else if (state.mode === "watch") {
    keep("watch-tc", state.clocks ? state.clocks.control : "");
  }
  $("flip").classList.toggle("on", flipped);
  $("coords").classList.toggle("on", coords);
  $("sound").classList.toggle("on", sound);
  $("board").classList.toggle("coords", coords);
}

let choicesShown = "";
let enginesShown = "";

function levelName(i) {
  return t("ui.level." + i);
}

function renderChoices() {
  const key = JSON.stringify(state.choices) + language;
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
    for (let i = 0; i < state.levels; i++) {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = levelName(i);
      level.appendChild(option);
    }
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
      option.textContent = t("ui.records.game-entry", { n: i + 1, white: g.white, black: g.black, result: g.result, plies: g.plies });
      library.appendChild(option);
    });
  }
  $("library-label").hidden = state.library.length < 2;
}

function renderEngines() {
  const key = JSON.stringify(state.engines) + language;
  if (key === enginesShown) return;
  enginesShown = key;
  const box = $("engines");
  box.textContent = "";
  for (const engine of state.engines) {
    const div = document.createElement("div");
    div.className = "engine";
    div.dataset.role = engine.role;
    const head = document.createElement("div");
    const title = document.createElement("b");
    title.textContent = t("ui.role." + engine.role) + ": " + (engine.name || state.choices[engine.choice].label);
    head.appendChild(title);
    const stateText = document.createElement("span");
    stateText.className = "state" + (engine.status === "failed" ? " failed" : "");
    stateText.textContent = " " + t("ui.engine-status." + engine.status);
    head.appendChild(stateText);
    if (engine.error) {
      const error = document.createElement("div");
      error.className = "error";
      error.textContent = problemText(engine.error);
      head.appendChild(error);
    }
    if (engine.status === "failed") {
      const restart = document.createElement("button");
      restart.textContent = t("ui.engines.restart");
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
      const set = (value) => command({ cmd: "set_option", role: engine.role, name: option.name, value });
      let input;
      if (option.kind === "button") {
        input = document.createElement("button");
        input.textContent = t("ui.engines.press");
        input.addEventListener("click", () => command({ cmd: "set_option", role: engine.role, name: option.name }));
      } else if (option.kind === "check") {
        input = document.createElement("input");
        input.type = "checkbox";
        input.checked = current === "true";
        input.addEventListener("change", () => set(String(input.checked)));
      } else if (option.kind === "combo") {
        input = document.createElement("select");
        for (const v of option.vars) {
          const o = document.createElement("option");
          o.textContent = v;
          input.appendChild(o);
        }
        input.value = current || "";
        input.addEventListener("change", () => set(input.value));
      } else {
        input = document.createElement("input");
        input.type = option.kind === "spin" ? "number" : "text";
        if (option.min !== null) input.min = option.min;
        if (option.max !== null) input.max = option.max;
        input.value = current || "";
        input.size = 8;
        input.addEventListener("change", () => set(input.value));
      }
      input.dataset.option = option.name;
      row.appendChild(input);
      div.appendChild(row);
    }
    box.appendChild(div);
  }
}

function render() {
  renderReview();
  renderBoard();
  renderClocks();
  renderMoves();
  renderGraph();
  renderAnalysis();
  renderStatus();
  renderChoices();
  renderControls();
  renderEngines();
  $("evalbar").classList.toggle("flipped", orientation() === "black");
}

// A short tick made by the page itself: a move, or a lower one for a capture.
let audio = null;

function moveSound(capture) {
  if (!sound) return;
  try {
    audio = audio || new AudioContext();
    // A context made before the person touched the page starts suspended.
    if (audio.state === "suspended") audio.resume().catch(() => { /* not allowed yet */ });
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = capture ? 330 : 660;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.12);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.13);
    window.agonStats.sounds += 1;
  } catch (_) { /* no audio here */ }
}

function onState(data) {
  const next = JSON.parse(data);
  if (state && next.version < state.version) return;
  const moved = state && next.moves.length !== state.moves.length;
  // One ply forward along the record: animate it.
  const stepped = state && next.cursor === state.cursor + 1 && next.last && next.start_fen === state.start_fen;
  if (state && (next.fen !== state.fen || next.cursor !== state.cursor)) picked = null;
  if (navTarget !== null && next.cursor === navTarget) navTarget = null;
  const before = state ? state.cells : null;
  state = next;
  clockBase = performance.now();
  window.agonStats.stateUpdates += 1;
  render();
  if (stepped) {
    const [from, to] = splitMove(state.last);
    board.animate(state.last, state.cells[to]);
    const captures = before && Object.keys(state.cells).some((c) => c !== from && c !== to && state.cells[c] !== before[c]);
    moveSound(captures);
  }
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

function cursorNow() {
  return navTarget !== null ? navTarget : state.cursor;
}

// Each view is sent once the one before it has been answered: requests sent
// at once may reach the server in another order and leave it on the ply of
// an earlier key press.
let viewsSent = Promise.resolve();

function view(ply) {
  if (!state) return;
  const target = Math.max(0, Math.min(state.moves.length, ply));
  if (target === cursorNow()) return;
  navTarget = target === state.cursor ? null : target;
  viewsSent = viewsSent
    .then(() => command({ cmd: "view", ply: target }))
    .then((ok) => { if (!ok) navTarget = null; });
}

function savePreferences() {
  try {
    localStorage.setItem(PREFERENCES_KEY, JSON.stringify({ flipped, coords, sound }));
  } catch (_) { /* storage off */ }
}

function loadPreferences() {
  try {
    const saved = JSON.parse(localStorage.getItem(PREFERENCES_KEY) || "{}");
    flipped = !!saved.flipped;
    coords = !!saved.coords;
    sound = !!saved.sound;
  } catch (_) { /* storage off or unreadable: the defaults */ }
}

function toggle(name) {
  if (name === "flipped") flipped = !flipped;
  if (name === "coords") coords = !coords;
  if (name === "sound") sound = !sound;
  savePreferences();
  if (state) render();
}

function toggleHelp(show) {
  $("help").hidden = show === undefined ? !$("help").hidden : !show;
}

function onKey(event) {
  const tag = (event.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "textarea" || tag === "select") return;
  const keys = {
    ArrowLeft: () => view(cursorNow() - 1),
    ArrowRight: () => view(cursorNow() + 1),
    ArrowUp: () => view(0),
    Home: () => view(0),
    ArrowDown: () => view(state.moves.length),
    End: () => view(state.moves.length),
    f: () => toggle("flipped"),
    c: () => toggle("coords"),
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
  commandError = response.ok ? null : await problemOf(response);
  renderNotice();
}

// Resigning takes two clicks: the first asks, the second (within a few seconds) resigns.
let resignAsked = null;

function resign() {
  const button = $("resign");
  if (resignAsked) {
    clearTimeout(resignAsked);
    resignAsked = null;
    button.classList.remove("confirm");
    button.textContent = t("ui.play.resign");
    command({ cmd: "resign" });
    return;
  }
  button.classList.add("confirm");
  button.textContent = t("ui.play.resign-confirm");
  resignAsked = setTimeout(() => {
    resignAsked = null;
    button.classList.remove("confirm");
    button.textContent = t("ui.play.resign");
  }, 4000);
}

function wire() {
  const svg = $("board");
  svg.addEventListener("pointermove", onPointerMove);
  svg.addEventListener("pointerup", onPointerUp);
  svg.addEventListener("pointercancel", () => { drag = null; board.floating(null); });
  document.addEventListener("keydown", onKey);
  $("nav-start").addEventListener("click", () => view(0));
  $("nav-back").addEventListener("click", () => view(cursorNow() - 1));
  $("nav-forward").addEventListener("click", () => view(cursorNow() + 1));
  $("nav-end").addEventListener("click", () => view(state.moves.length));
  $("flip").addEventListener("click", () => toggle("flipped"));
  $("coords").addEventListener("click", () => toggle("coords"));
  $("sound").addEventListener("click", () => toggle("sound"));
  $("help-button").addEventListener("click", () => toggleHelp());
  $("help-close").addEventListener("click", () => toggleHelp(false));
  $("move-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const mv = $("move-input").value.trim().toLowerCase();
    // A refused move stays in the box to be corrected.
    if (mv && await play(mv)) $("move-input").value = "";
  });
  const newGame = (fen) => command({
    cmd: "new_game", fen, human: $("play-colour").value, level: parseInt($("play-level").value, 10),
    tc: $("play-tc").value, engine: state && state.public ? undefined : parseInt($("play-engine").value, 10),
  });
  $("new-game").addEventListener("click", () => newGame(null));
  $("new-game-fen").addEventListener("click", () => newGame($("fen").value));
  $("takeback").addEventListener("click", () => command({ cmd: "takeback" }));
  $("hint").addEventListener("click", () => command({ cmd: "hint" }));
  $("resign").addEventListener("click", resign);
  $("analyse-toggle").addEventListener("click", () => command({ cmd: "analysis", on: !state.analysing }));
  $("multipv").addEventListener("change", () => command({ cmd: "multipv", lines: parseInt($("multipv").value, 10) }));
  $("free-analysis").addEventListener("click", () => command({ cmd: "analyse" }));
  $("review-start").addEventListener("click", () => command({ cmd: "review" }));
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
    const scale = box.width / 320;
    const along = (e.clientX - box.left) / scale - GRAPH.left;
    view(Math.round((along / (GRAPH.right - GRAPH.left)) * n));
  });
  $("moves").addEventListener("click", (e) => {
    const alt = e.target.closest(".alt");
    if (alt) {
      command({ cmd: "choose", node: parseInt(alt.dataset.node, 10) });
      return;
    }
    const ply = e.target.closest(".ply");
    if (ply) view(parseInt(ply.dataset.ply, 10));
  });
  const currentNode = () => state.moves[state.cursor - 1].node;
  $("promote").addEventListener("click", () => command({ cmd: "promote", node: currentNode() }));
  $("delete-move").addEventListener("click", () => command({ cmd: "delete", node: currentNode() }));
  onLanguageChange(() => { if (state) render(); });
  setInterval(() => { if (state) renderClocks(); }, 100);
}

function connect() {
  const events = new EventSource("/api/events?token=" + encodeURIComponent(token));
  events.addEventListener("state", (e) => onState(e.data));
  events.addEventListener("analysis", (e) => onAnalysis(e.data));
  events.onerror = () => { $("status").textContent = t("ui.status.connection-lost"); };
}

async function start() {
  translateStatic();
  loadPreferences();
  const response = await api("/api/geometry");
  if (!response.ok) {
    document.body.textContent = problemText(await problemOf(response));
    return;
  }
  geometry = await response.json();
  board = AgonBoard.create($("board"), geometry, { onCell });
  wire();
  connect();
}

start();
