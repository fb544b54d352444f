// English: the reference table; every other language has exactly its keys.
STRINGS.en = {
  "language.name": "English",

  // The rules and the lessons.
  "rules.title": "Rules",

  // The interface: buttons, statuses, banners, errors, keys help.
  "ui.title": "agon",
};
