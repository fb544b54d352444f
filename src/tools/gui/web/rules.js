// The rules view (#rules): one section a rule, its words in the language in
// use and its diagram, a position the server's catalogue gives as a FEN,
// drawn by the page's board component with the cells that matter marked.
"use strict";

// The rules' diagrams and the lessons' positions, from /api/learn (once).
let learnCatalogue = null;

async function loadCatalogue() {
  if (learnCatalogue) return learnCatalogue;
  const response = await api("/api/learn");
  if (!response.ok) throw new Error("/api/learn: " + response.status);
  learnCatalogue = await response.json();
  return learnCatalogue;
}

function htmlElement(name, attrs = {}, parent = null, text = null) {
  const node = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// Draws `fen` into a new SVG inside `parent`; `onCell(name)` is called for
// clicks when given. Returns the board component's handle.
function diagram(parent, fen, marks, onCell = null) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "diagram");
  parent.appendChild(svg);
  return new AgonBoard(svg, { fen, marks, onCell });
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
    if (practice) htmlElement("a", { href: "#learn", "data-practise": practice.id }, words, t("learn.title") + " \u2192");
    const figure = htmlElement("figure", {}, section);
    diagram(figure, rule.fen, rule.marks);
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
