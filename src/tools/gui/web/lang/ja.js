STRINGS.ja = {
  "language.name": "ja",
};
