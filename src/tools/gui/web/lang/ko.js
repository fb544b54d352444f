STRINGS.ko = {
  "language.name": "ko",
};
