"""Count the drawn games of an `agon match` record in which one engine stood
better: its own scores, averaged over its last moves, at least a threshold.
A draw by repetition or at the move cap with the engine ahead is an advantage
it did not convert.

    python draws_when_better.py games.jsonl new [--threshold 50] [--last 10]
"""

import argparse
from collections import Counter

import agon


def standing(game, engine, last):
    """The mean of `engine`'s own last `last` centi-guard scores in `game`
    (from its side), or None when it reported none."""
    side = "white" if game.headers.get("White") == engine else "black"
    mover = agon.Position(game.fen).turn
    scores = []
    for move in game.moves:
        if mover == side and move.score is not None and move.score.cp is not None:
            scores.append(move.score.pov(side).cp)
        mover = "black" if mover == "white" else "white"
    tail = scores[-last:]
    return sum(tail) / len(tail) if tail else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", help="agon match -jsonl or -pgnout file")
    parser.add_argument("engine", help="the engine's name in the record")
    parser.add_argument("--threshold", type=int, default=50, help="centi-guards")
    parser.add_argument("--last", type=int, default=10, help="the engine's moves averaged")
    args = parser.parse_args()

    endings, better, worse = Counter(), Counter(), Counter()
    for game in agon.read_games(args.record):
        if args.engine not in (game.headers.get("White"), game.headers.get("Black")):
            continue
        ending = game.termination or "unknown"
        endings[ending] += 1
        if game.result != "1/2-1/2":
            continue
        mean = standing(game, args.engine, args.last)
        if mean is None:
            continue
        if mean >= args.threshold:
            better[ending] += 1
        elif mean <= -args.threshold:
            worse[ending] += 1
    print(f"games of {args.engine} by ending: {dict(endings)}")
    print(f"draws with {args.engine} at least {args.threshold} ahead over its last {args.last} moves: "
          f"{sum(better.values())} {dict(better)}")
    print(f"draws with {args.engine} at least {args.threshold} behind: {sum(worse.values())} {dict(worse)}")


if __name__ == "__main__":
    main()
