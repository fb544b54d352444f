// The page's words in every language it speaks. lang.js (the server joins
// web/lang/*.js into it) fills STRINGS[code]; t() looks a key up in the
// language in use, falling back to English, and fills {name} placeholders.
// The language comes from ?lang=, else the one remembered, else the
// browser's preferred languages, else English.
"use strict";

const LANGUAGE_KEY = "agon.language";

function chooseLanguage() {
  const spoken = Object.keys(STRINGS);
  const asked = new URLSearchParams(location.search).get("lang");
  if (asked && spoken.includes(asked)) return asked;
  let remembered = null;
  try { remembered = localStorage.getItem(LANGUAGE_KEY); } catch (_) { /* storage off */ }
  if (remembered && spoken.includes(remembered)) return remembered;
  for (const preferred of navigator.languages || [navigator.language || ""]) {
    const code = String(preferred).toLowerCase().split("-")[0];
    if (spoken.includes(code)) return code;
  }
  return "en";
}

let language = chooseLanguage();
document.documentElement.lang = language;

function t(key, params = {}) {
  const table = STRINGS[language] || {};
  let text = key in table ? table[key] : (STRINGS.en || {})[key];
  if (text === undefined) {
    window.agonErrors && window.agonErrors.push("missing string: " + key);
    return key;
  }
  return String(text).replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

// Static text of the HTML: data-i18n (text), data-i18n-title, data-i18n-placeholder.
function translateStatic(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll("[data-i18n-title]")) node.title = t(node.dataset.i18nTitle);
  for (const node of root.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
}

const languageListeners = [];

// Switches the page to `code`, remembers it, and lets every view redraw.
function setLanguage(code) {
  if (!(code in STRINGS)) return;
  language = code;
  document.documentElement.lang = code;
  try { localStorage.setItem(LANGUAGE_KEY, code); } catch (_) { /* storage off */ }
  translateStatic();
  for (const listener of languageListeners) listener(code);
}

function onLanguageChange(listener) {
  languageListeners.push(listener);
}
