"""Agon (Queen's Guard, 1842) for Python scripts and notebooks.

The rules come from agon's own rules core (the same code the engine, the
match runner and the GUI use): ``Position``, ``Move`` and ``Outcome``.
``read_games`` and ``write_pgn`` read and write the records of ``agon match``
and the GUI; ``agon.engine`` drives any engine that speaks agon's protocol.
"""

from ._agon import START_FEN, THRONE, Move, Outcome, Position, cells
from .records import Game, RecordedMove, read_games, write_pgn
from .score import Score
from . import engine, svg

__all__ = [
    "START_FEN",
    "THRONE",
    "Game",
    "Move",
    "Outcome",
    "Position",
    "RecordedMove",
    "Score",
    "cells",
    "engine",
    "read_games",
    "svg",
    "write_pgn",
]
