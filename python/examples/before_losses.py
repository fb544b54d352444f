"""Write the positions an engine lost from: for each game of an `agon match`
record that the engine lost, the position some plies before the end with
that engine to move, one FEN a line.

    python before_losses.py games.jsonl new losses.fen [--plies 16]

Played again with `agon match -openings file=losses.fen format=fen
order=sequential -repeat`, the same opponent on the other side, they show
whether a change holds what the engine lost, and, with the colours
reversed, whether it converts what its opponent won.
"""

import argparse
import os

import agon


def position_before_end(game, loser, plies):
    """The position `plies` plies before the end of `game`, one ply earlier
    when `loser` would not be to move there; None for a shorter game."""
    positions = list(game.positions())
    index = len(positions) - 1 - plies
    if index >= 0 and positions[index].turn != loser:
        index -= 1
    return positions[index] if index >= 0 else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", help="agon match -jsonl or -pgnout file")
    parser.add_argument("engine", help="the engine's name in the record")
    parser.add_argument("output", help="the FEN file to write")
    parser.add_argument("--plies", type=int, default=16, help="how far before the end")
    args = parser.parse_args()
    if args.plies < 0:
        parser.error("--plies must be at least 0")

    fens, short = [], 0
    for game in agon.read_games(args.record):
        loser = {"white": "black", "black": "white"}.get(game.winner)
        if loser is None or game.headers.get(loser.capitalize()) != args.engine:
            continue
        position = position_before_end(game, loser, args.plies)
        if position is None:
            short += 1
        else:
            fens.append(position.fen())
    # Written whole or not at all, as agon's own tools write their files.
    temporary = args.output + ".tmp"
    with open(temporary, "w", encoding="utf-8") as output:
        output.writelines(fen + "\n" for fen in fens)
        output.flush()
        os.fsync(output.fileno())
    os.replace(temporary, args.output)
    print(f"{len(fens)} positions of games {args.engine} lost written to {args.output}; "
          f"{short} lost games shorter than {args.plies} plies left out")


if __name__ == "__main__":
    main()
