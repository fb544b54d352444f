#!/usr/bin/env python3
"""A scripted stand-in engine for the match runner's tests.

It speaks just enough of the agon protocol and shuffles its queen one cell
sideways and back (f1-e1 for White, f11-g11 for Black), which from the start
position draws by repetition after eight plies. The first argument picks a
misbehaviour:

  good      plays the shuffle
  boast     plays the shuffle, reporting +0.80 for itself every move
  crash     exits instead of answering its second `go`
  illegal   answers `go` with the illegal move f1f3
  silent    answers `isready` but never `go`
  late [S]  answers `go` only after S seconds (default 0.5)
  chatty    answers `go` with an `info` line every 5 ms and never a move,
            deaf to `stop`
  whiteonly plays the shuffle as White and the illegal move f1f3 as Black
  nostart   never says `uciok`
  noisy     plays the shuffle, after writing a Latin-1 byte (not UTF-8) and
            a line of 2 MiB before `uciok` and before each move
  pattern P game k (counted by `ucinewgame`) follows letter k of P: `d`
            plays the shuffle, `i` plays the illegal move f1f3
"""
import sys
import time

SHUFFLE = {0: ["f1e1", "e1f1"], 1: ["f11g11", "g11f11"]}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def noise():
    sys.stdout.flush()
    sys.stdout.buffer.write(b"info string M\xfcller\n" + b"x" * (2 << 20) + b"\n")
    sys.stdout.buffer.flush()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "good"
    pattern = sys.argv[2] if mode == "pattern" else ""
    plies = 0
    searches = 0
    games = 0
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
            if mode == "noisy":
                noise()
            say("uciok")
        elif command == "isready":
            say("readyok")
        elif command == "ucinewgame":
            games += 1
        elif command == "position":
            plies = len(words) - words.index("moves") - 1 if "moves" in words else 0
        elif command == "go":
            searches += 1
            if mode == "crash" and searches == 2:
                sys.exit(3)
            if mode == "silent":
                continue
            if mode == "chatty":
                while True:
                    say("info depth 1 score cp 0 nodes 1 pv f1e1")
                    time.sleep(0.005)
            if mode == "late":
                time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.5)
            cheat = mode == "pattern" and pattern[(games - 1) % len(pattern)] == "i"
            if mode == "whiteonly" and plies % 2 == 1:
                cheat = True
            if mode == "illegal" or cheat:
                say("bestmove f1f3")
                continue
            if mode == "noisy":
                noise()
            side = plies % 2
            move = SHUFFLE[side][(plies // 2) % 2]
            score = 80 if mode == "boast" else 10 - plies
            say("info depth 1 score cp %d nodes 1 pv %s" % (score, move))
            say("bestmove " + move)
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
