#!/usr/bin/env python3
"""A stand-in engine for the driver's tests, with the misbehaviours the
shared one (tests/engines/scripted.py) has not. The first argument picks one:

  tabs          separates the words of its lines with tabs and odd runs of
                spaces, and writes malformed lines among the good ones
  slow PIDFILE  writes its process id to PIDFILE, then takes a second to say
                `uciok`

Either way it plays f1e1 from the start position.
"""
import os
import sys
import time


def say(*words, separator=" "):
    sys.stdout.write(separator.join(words) + "\n")
    sys.stdout.flush()


def main():
    mode = sys.argv[1]
    if mode == "slow":
        with open(sys.argv[2], "w") as pidfile:
            pidfile.write(str(os.getpid()))
    tab = "\t" if mode == "tabs" else " "
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "uci":
            if mode == "slow":
                time.sleep(1)
            say("id", "name", "fake", "engine", separator=tab)
            if mode == "tabs":
                say("option", "name", "Hash", "type", "spin", "default", "1", separator="\t")
                say("option", "name", "Clear", "Hash", "type", "button", separator=" \t ")
                say("option")
                say("option", "name")
                say("option", "name", "type", "check")
                say("id")
                say("", "uciok", "")
            else:
                say("uciok")
        elif words[0] == "isready":
            say("readyok", "", separator=tab)
        elif words[0] == "go":
            if mode == "tabs":
                say("info")
                say("info", "score")
                say("info", "depth", "x", "score", "cp")
                say("info", "depth", "1", "score", "cp", "12", "pv", "f1e1", separator="\t")
            say("bestmove", "f1e1", separator=tab)
        elif words[0] == "quit":
            return


if __name__ == "__main__":
    main()
