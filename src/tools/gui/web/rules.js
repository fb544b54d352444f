// The rules view (#rules): one section a rule, its words in the language in
// use and its diagram, a position the server's catalogue gives as a FEN,
// drawn by the page's board component with the cells that matter marked.
"use strict";

// The rules' diagrams and the lessons' positions, from /api/learn, and
// the board's cells, from /api/geometry (both once).
let learnCatalogue = null;
let learnGeometry = null;

// The catalogue, or null (the failure kept in window.agonErrors).
async function loadCatalogue() {
  if (learnCatalogue) return learnCatalogue;
  try {
    const [catalogue, cells] = await Promise.all(["/api/learn", "/api/geometry"].map(async (path) => {
      const response = await api(path);
      if (!response.ok) throw new Error(path + ": " + response.status);
      return response.json();
    }));
    learnGeometry = cells;
    learnCatalogue = catalogue;
  } catch (e) {
    window.agonErrors.push(String(e));
  }
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

// Words carry their key (data-i18n), so that switching the language
// translates them in place and the diagrams stay as drawn.
function translated(name, key, parent, attrs = {}) {
  return htmlElement(name, Object.assign({ "data-i18n": key }, attrs), parent, t(key));
}

function renderRules() {
  const view = document.getElementById("rules-view");
  if (!view || !learnCatalogue || view.childElementCount) return;
  translated("h2", "rules.title", view);
  translated("p", "rules.intro", view, { class: "intro" });
  for (const rule of learnCatalogue.rules) {
    const section = htmlElement("section", { "data-rule": rule.id, class: "rule" }, view);
    const text = htmlElement("div", { class: "words" }, section);
    translated("h3", "rules." + rule.id + ".title", text);
    translated("p", "rules." + rule.id + ".text", text);
    const practice = learnCatalogue.lessons.find((lesson) => lesson.rule === rule.id);
    if (practice) {
      const link = htmlElement("a", { href: "#learn/" + practice.id, class: "practise" }, text);
      translated("span", "learn.title", link);
      link.appendChild(document.createTextNode(" \u2192"));
    }
    const figure = htmlElement("figure", {}, section);
    diagram(figure, rule, rule.marks);
    translated("figcaption", "rules." + rule.id + ".caption", figure);
  }
  translated("p", "rules.order", view, { class: "order" });
}

// Shows the rules, scrolled to the rule `id` when given.
async function showRules(id) {
  if (!(await loadCatalogue())) return;
  renderRules();
  const section = id && document.querySelector(`[data-rule="${CSS.escape(id)}"]`);
  if (section) section.scrollIntoView();
}
