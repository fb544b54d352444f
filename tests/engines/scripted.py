#!/usr/bin/env python3
"""A scripted stand-in engine for the match runner's tests.

It speaks just enough of the agon protocol and shuffles its queen one cell
sideways and back (f1-e1 for White, f11-g11 for Black), which from the start
position draws by repetition after eight plies. The first argument picks a
misbehaviour:

  good      plays the shuffle
  crash     exits instead of answering its second `go`
  illegal   answers `go` with the illegal move f1f3
  silent    answers `isready` but never `go`
  late      answers `go` only after 0.5 s
  nostart   never says `uciok`
  lone      like good, but sends no newline after its last line and exits
            after the game (an abrupt end of output)
"""
import sys
import time

SHUFFLE = {0: ["f1e1", "e1f1"], 1: ["f11g11", "g11f11"]}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "good"
    plies = 0
    searches = 0
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "uci":
            if mode == "nostart":
                continue
            say("id name scripted-" + mode)
            say("option name Hash type spin default 1 min 1 max 16")
            say("uciok")
        elif command == "isready":
            say("readyok")
        elif command == "position":
            plies = len(words) - words.index("moves") - 1 if "moves" in words else 0
        elif command == "go":
            searches += 1
            if mode == "crash" and searches == 2:
                sys.exit(3)
            if mode == "silent":
                continue
            if mode == "late":
                time.sleep(0.5)
            if mode == "illegal":
                say("bestmove f1f3")
                continue
            side = plies % 2
            move = SHUFFLE[side][(plies // 2) % 2]
            say("info depth 1 score cp %d nodes 1 pv %s" % (10 - plies, move))
            say("bestmove " + move)
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
