"""Analyse every position of an `agon match` record with agon, then plot
each game's evaluation from White's side.

    python plot_match.py games.jsonl evaluation.png [--engine agon] [--depth 6]
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import agon  # noqa: E402
from agon.engine import Engine, Limit  # noqa: E402

CAP = 10.0  # guards; proven results are drawn at the cap


def white_guards(position, engine, limit):
    """White's evaluation of `position` in guards, the result if it is over."""
    outcome = position.outcome()
    if outcome is not None:
        return {"white": CAP, "black": -CAP, None: 0.0}[outcome.winner]
    score = engine.analyse(position, limit).score.white()
    if score.is_mate():
        return CAP if score.mate > 0 else -CAP
    return max(-CAP, min(CAP, score.cp / 100))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", help="agon match -jsonl or -pgnout file")
    parser.add_argument("picture", help="where to write the plot (PNG, SVG...)")
    parser.add_argument("--engine", default="agon", help="engine command")
    parser.add_argument("--depth", type=int, default=6)
    args = parser.parse_args()

    games = agon.read_games(args.record)
    figure, axes = plt.subplots(figsize=(9, 4.5))
    with Engine.popen(args.engine) as engine:
        for game in games:
            curve = [white_guards(p, engine, Limit(depth=args.depth)) for p in game.positions()]
            label = f"{game.headers['White']} - {game.headers['Black']} {game.result}"
            axes.plot(range(len(curve)), curve, label=label, linewidth=1.4)
    axes.axhline(0, color="#888", linewidth=0.6)
    axes.set_xlabel("ply")
    axes.set_ylabel("White's evaluation (guards)")
    axes.set_ylim(-CAP * 1.05, CAP * 1.05)
    axes.set_title(f"{len(games)} games of {args.record}, analysed by agon at depth {args.depth}")
    axes.legend(fontsize="small", ncol=2)
    figure.tight_layout()
    figure.savefig(args.picture, dpi=110)


if __name__ == "__main__":
    main()
