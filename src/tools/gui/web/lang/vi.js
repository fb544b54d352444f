STRINGS.vi = {
  "language.name": "vi",
};
