// The ways into the page: the view chosen by the URL fragment (the board,
// #rules or #rules/<rule>, #learn or #learn/<lesson>), the language switcher shown on every view, and the panel
// a first visit gets beside the board (learn, play, analyse), dismissed by
// its buttons or by the first click on the board, which it never covers.
"use strict";

const WELCOMED_KEY = "agon.welcomed";
const VIEWS = ["rules", "learn"];

function showView() {
  const [name, detail] = location.hash.replace(/^#/, "").split("/");
  const shown = VIEWS.includes(name) ? name : "play";
  document.body.dataset.view = shown;
  document.querySelector("main").hidden = shown !== "play";
  for (const view of VIEWS) document.getElementById(view + "-view").hidden = view !== shown;
  for (const link of document.querySelectorAll("[data-view-link]")) {
    link.classList.toggle("on", link.dataset.viewLink === shown);
  }
  if (shown === "rules") showRules(detail || null);
  if (shown === "learn") showLessons(detail || null);
}

function fillLanguages() {
  const select = document.getElementById("language");
  select.textContent = "";
  for (const code of Object.keys(STRINGS)) {
    const option = document.createElement("option");
    option.value = code;
    option.textContent = STRINGS[code]["language.name"];
    select.appendChild(option);
  }
  select.value = document.documentElement.lang;
  select.addEventListener("change", () => setLanguage(select.value));
}

function welcomed() {
  try { return localStorage.getItem(WELCOMED_KEY) === "yes"; } catch (_) { return false; }
}

function dismissWelcome() {
  document.getElementById("welcome").hidden = true;
  try { localStorage.setItem(WELCOMED_KEY, "yes"); } catch (_) { /* storage off */ }
}

function fillLevels() {
  const select = document.getElementById("welcome-level");
  const chosen = select.value;
  select.textContent = "";
  for (let level = 0; level < 5; level++) {
    const option = document.createElement("option");
    option.value = String(level);
    option.textContent = t("level." + level);
    select.appendChild(option);
  }
  select.value = chosen || "0";
}

function wireWelcome() {
  const panel = document.getElementById("welcome");
  fillLevels();
  onLanguageChange(fillLevels);
  panel.hidden = welcomed();
  document.getElementById("welcome-learn").addEventListener("click", () => { dismissWelcome(); location.hash = "#rules"; });
  document.getElementById("welcome-start").addEventListener("click", () => {
    dismissWelcome();
    command({
      cmd: "new_game",
      human: document.getElementById("welcome-colour").value,
      level: parseInt(document.getElementById("welcome-level").value, 10),
    });
  });
  document.getElementById("welcome-analyse").addEventListener("click", () => { dismissWelcome(); command({ cmd: "analyse" }); });
  document.getElementById("welcome-close").addEventListener("click", dismissWelcome);
  // The first click on the board plays as usual and puts the offer away.
  document.getElementById("board").addEventListener("pointerdown", () => { if (!panel.hidden) dismissWelcome(); }, true);
}

fillLanguages();
translateStatic();
wireWelcome();
window.addEventListener("hashchange", showView);
showView();
