// The lessons view (#learn, #learn/<id>): one exercise at a time, a
// position and a goal; the person's moves go to the server's judge
// (/api/lesson, agon's rules core), which says whether the goal is reached,
// answers for the other side, or says why a move is wrong. Solved lessons
// are remembered in localStorage.
"use strict";

const LESSONS_DONE_KEY = "agon.lessons.done";

const lessonState = {
  id: null,
  line: [], // the person's moves and the judge's replies
  position: null, // { fen, cells } shown
  picked: null,
  message: [], // [key, params] pairs, translated when drawn
  messageKind: "",
  finished: false,
  board: null,
};

function lessonsDone() {
  try {
    const done = JSON.parse(localStorage.getItem(LESSONS_DONE_KEY) || "[]");
    return new Set(Array.isArray(done) ? done : []);
  } catch (_) {
    return new Set();
  }
}

function markLessonDone(id) {
  const done = lessonsDone();
  done.add(id);
  try { localStorage.setItem(LESSONS_DONE_KEY, JSON.stringify([...done])); } catch (_) { /* storage off */ }
}

function currentLesson() {
  return learnCatalogue.lessons.find((lesson) => lesson.id === lessonState.id) || learnCatalogue.lessons[0];
}

function startLesson(id) {
  const known = learnCatalogue.lessons.some((lesson) => lesson.id === id);
  lessonState.id = known ? id : learnCatalogue.lessons[0].id;
  const lesson = currentLesson();
  Object.assign(lessonState, { line: [], position: lesson, picked: null, message: [], messageKind: "", finished: false });
  renderLessons();
}

function sideToMove(fen) {
  return fen.split(" ")[1] === "b" ? "black" : "white";
}

// The cells of the side to move that may be picked: all of its pieces (the
// judge explains the ones that may not move).
function ownPiece(cell) {
  const letter = lessonState.board.piece(cell);
  if (!letter) return false;
  const white = letter[0] === letter[0].toUpperCase();
  return white === (sideToMove(lessonState.position.fen) === "white");
}

function onLessonCell(cell) {
  if (lessonState.finished) return;
  if (lessonState.picked === null || ownPiece(cell)) {
    lessonState.picked = lessonState.picked === cell || !ownPiece(cell) ? null : cell;
    lessonState.board.mark("picked", lessonState.picked ? [lessonState.picked] : []);
    return;
  }
  const mv = lessonState.picked + cell;
  lessonState.picked = null;
  judgeLessonMove(mv);
}

async function judgeLessonMove(mv) {
  const lesson = currentLesson();
  const response = await api("/api/lesson", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ lesson: lesson.id, moves: lessonState.line.concat([mv]) }),
  });
  if (!response.ok) {
    lessonState.message = [["learn.refused", { error: problemText(await problemOf(response)) }]];
    lessonState.messageKind = "wrong";
    renderLessons();
    return;
  }
  const reply = await response.json();
  if (reply.verdict === "solved") {
    lessonState.line.push(mv);
    lessonState.position = reply;
    lessonState.finished = true;
    lessonState.message = [["learn.solved", {}], ["lesson." + lesson.id + ".done", {}]];
    lessonState.messageKind = "solved";
    markLessonDone(lesson.id);
  } else if (reply.verdict === "continue") {
    lessonState.line.push(mv, reply.reply);
    lessonState.position = reply;
    lessonState.message = [["learn.reply", { move: reply.reply }]];
    lessonState.messageKind = "";
  } else {
    // A legal wrong move is shown, then undone by "Try again"; an illegal one is not played.
    if (reply.verdict === "wrong") {
      lessonState.position = reply;
      lessonState.finished = true;
    }
    lessonState.message = [explanation(lesson, reply)];
    lessonState.messageKind = "wrong";
  }
  renderLessons();
}

// The words for a wrong move, as a [key, params] pair.
function explanation(lesson, reply) {
  if (reply.reason === "missed") return ["lesson." + lesson.id + ".wrong", {}];
  if (reply.reason === "refuted") return ["learn.why.refuted", { move: reply.reply }];
  return ["learn.why." + reply.reason, {}];
}

function showHint() {
  const lesson = currentLesson();
  const next = lesson.solution[Math.floor(lessonState.line.length / 2)];
  lessonState.message = [["lesson." + lesson.id + ".hint", {}]];
  lessonState.messageKind = "hint";
  renderLessons();
  if (next) lessonState.board.mark("hint", [next.match(/^[a-k]\d+/)[0]]);
}

function playFirstGame() {
  markLessonDone(currentLesson().id);
  command({ cmd: "new_game", human: "white", level: 0 });
  location.hash = "";
}

function lessonButton(parent, key, action, id) {
  const node = htmlElement("button", { id }, parent, t(key));
  node.addEventListener("click", action);
  return node;
}

function renderLessons() {
  const view = document.getElementById("learn-view");
  if (!view || !learnCatalogue) return;
  if (lessonState.id === null) startLesson(learnCatalogue.lessons[0].id);
  const lesson = currentLesson();
  const done = lessonsDone();
  view.textContent = "";
  const list = htmlElement("nav", { class: "lesson-list" }, view);
  htmlElement("h2", {}, list, t("learn.title"));
  htmlElement("p", { class: "intro" }, list, t("learn.intro"));
  htmlElement("p", { id: "learn-progress" }, list, t("learn.progress", { done: done.size, total: learnCatalogue.lessons.length }));
  const items = htmlElement("ol", {}, list);
  for (const entry of learnCatalogue.lessons) {
    const item = htmlElement("li", { "data-lesson": entry.id, "data-done": String(done.has(entry.id)) }, items);
    if (entry.id === lesson.id) item.classList.add("current");
    const link = htmlElement("a", { href: "#learn/" + entry.id }, item, t("lesson." + entry.id + ".title"));
    link.addEventListener("click", (e) => { e.preventDefault(); history.replaceState(null, "", "#learn/" + entry.id); startLesson(entry.id); });
  }
  lessonButton(list, "learn.reset", () => {
    try { localStorage.removeItem(LESSONS_DONE_KEY); } catch (_) { /* storage off */ }
    renderLessons();
  }, "learn-reset");

  const panel = htmlElement("section", { class: "lesson", id: "lesson", "data-lesson-open": lesson.id }, view);
  htmlElement("h3", {}, panel, t("lesson." + lesson.id + ".title"));
  htmlElement("p", { class: "goal", id: "lesson-goal" }, panel, t("lesson." + lesson.id + ".goal"));
  if (!lesson.game) htmlElement("p", { class: "side" }, panel, t("learn.to-move." + sideToMove(lesson.fen)));
  lessonState.board = diagram(panel, lessonState.position, lesson.marks, lesson.game ? null : onLessonCell);
  if (lessonState.picked) lessonState.board.mark("picked", [lessonState.picked]);
  const words = lessonState.message.map(([key, params]) => t(key, params)).join(" ");
  htmlElement("p", { id: "lesson-message", class: "message " + lessonState.messageKind }, panel, words);
  if (lesson.game) htmlElement("p", {}, panel, t("lesson." + lesson.id + ".hint"));
  const row = htmlElement("div", { class: "row" }, panel);
  if (lesson.game) {
    lessonButton(row, "learn.play-game", playFirstGame, "lesson-play");
  } else {
    lessonButton(row, "learn.hint", showHint, "lesson-hint");
    lessonButton(row, "learn.retry", () => startLesson(lesson.id), "lesson-retry");
  }
  const index = learnCatalogue.lessons.indexOf(lesson);
  if (index + 1 < learnCatalogue.lessons.length) {
    lessonButton(row, "learn.next", () => {
      const next = learnCatalogue.lessons[index + 1].id;
      history.replaceState(null, "", "#learn/" + next);
      startLesson(next);
    }, "lesson-next");
  }
  htmlElement("a", { href: "#rules/" + lesson.rule, class: "rule-link" }, row, t("learn.rule"));
}

async function showLessons(id) {
  if (!(await loadCatalogue())) return;
  if (id && id !== lessonState.id) startLesson(id);
  else renderLessons();
}

onLanguageChange(() => { if (!document.getElementById("learn-view").hidden) renderLessons(); });
