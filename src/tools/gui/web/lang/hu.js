STRINGS.hu = {
  "language.name": "hu",
};
