// English: the reference table; every other language has exactly its keys.
STRINGS.en = {
  "language.name": "English",
};
