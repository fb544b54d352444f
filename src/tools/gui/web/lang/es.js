STRINGS.es = {
  "language.name": "es",
};
