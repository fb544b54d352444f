// The rules view (#rules): one section a rule, its words in the language in
// use and its diagram, a position the server's catalogue gives as a FEN,
// drawn by the page's board component with the cells that matter marked.
"use strict";

// The rules' diagrams and the lessons' positions, from /api/learn, and
// the board's cells, from /api/geometry (both once).
let learnCatalogue = null;
let learnGeometry = null;

async function loadCatalogue() {
  if (learnCatalogue) return learnCatalogue;
  const [catalogue, cells] = await Promise.all(["/api/learn", "/api/geometry"].map(async (path) => {
    const response = await api(path);
    if (!response.ok) throw new Error(path + ": " + response.status);
    return response.json();
  }));
  learnGeometry = cells;
  learnCatalogue = catalogue;
  return learnCatalogue;
}

function htmlElement(name, attrs = {}, parent = null, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// A small board in `parent` showing `cells` (FEN letters by cell) with
// `marks` outlined; `onCell(name)` hears clicks when given. Besides the
// permanent marks, named sets of cells ("picked", "hint") can be shown.
function diagram(parent, position, marks, onCell = null) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "diagram");
  parent.appendChild(svg);
  const board = AgonBoard.create(svg, learnGeometry, onCell ? { onCell: (name) => onCell(name) } : {});
  const extra = {};
  const drawMarks = () => {
    const classes = {};
    const add = (cell, cls) => { (classes[cell] = classes[cell] || []).push(cls); };
    for (const cell of marks) add(cell, "mark");
    for (const [cls, cells] of Object.entries(extra)) for (const cell of cells) add(cell, cls);
    board.draw({ marks: classes });
  };
  board.draw({ cells: position.cells, fen: position.fen });
  drawMarks();
  return {
    piece: (cell) => position.cells[cell] || "",
    mark: (cls, cells) => { extra[cls] = cells; drawMarks(); },
  };
}

function renderRules() {
  const view = document.getElementById("rules-view");
  if (!view || !learnCatalogue) return;
  view.textContent = "";
  htmlElement("h2", {}, view, t("rules.title"));
  htmlElement("p", { class: "intro" }, view, t("rules.intro"));
  for (const rule of learnCatalogue.rules) {
    const section = htmlElement("section", { "data-rule": rule.id, class: "rule" }, view);
    const words = htmlElement("div", { class: "words" }, section);
    htmlElement("h3", {}, words, t("rules." + rule.id + ".title"));
    htmlElement("p", {}, words, t("rules." + rule.id + ".text"));
    const practice = learnCatalogue.lessons.find((lesson) => lesson.rule === rule.id);
    if (practice) htmlElement("a", { href: "#learn/" + practice.id, class: "practise" }, words, t("learn.title") + " \u2192");
    const figure = htmlElement("figure", {}, section);
    diagram(figure, rule, rule.marks);
    htmlElement("figcaption", {}, figure, t("rules." + rule.id + ".caption"));
  }
  htmlElement("p", { class: "order" }, view, t("rules.order"));
}

async function showRules() {
  try {
    await loadCatalogue();
  } catch (e) {
    window.agonErrors.push(String(e));
    return;
  }
  renderRules();
}

onLanguageChange(() => { if (!document.getElementById("rules-view").hidden) renderRules(); });
