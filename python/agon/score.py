"""Scores as engines report them: centi-guards or a forced end in moves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

_SIDES = ("white", "black")


@dataclass(frozen=True)
class Score:
    """A score from the point of view of ``turn``.

    Exactly one of ``cp`` (hundredths of a guard, positive when ``turn``
    stands better) and ``mate`` (``turn`` wins in this many of its own moves
    when positive, loses when negative; protocol.md 9.2) is set.
    """

    cp: Optional[int] = None
    mate: Optional[int] = None
    turn: str = "white"

    def __post_init__(self) -> None:
        if (self.cp is None) == (self.mate is None):
            raise ValueError("a score has exactly one of cp and mate")
        if self.turn not in _SIDES:
            raise ValueError(f"turn must be 'white' or 'black', not {self.turn!r}")

    def pov(self, side: str) -> "Score":
        """The same score from ``side``'s point of view."""
        if side not in _SIDES:
            raise ValueError(f"side must be 'white' or 'black', not {side!r}")
        if side == self.turn:
            return self
        return Score(
            cp=None if self.cp is None else -self.cp,
            mate=None if self.mate is None else -self.mate,
            turn=side,
        )

    def white(self) -> "Score":
        """The score from White's point of view."""
        return self.pov("white")

    def is_mate(self) -> bool:
        """Whether the score is a proven result."""
        return self.mate is not None

    def value(self, mate_score: int = 100_000) -> int:
        """Centi-guards; a win in n moves counts ``mate_score - n``, a loss
        in n moves ``-(mate_score - n)``, so that plots and sorts work."""
        if self.mate is None:
            assert self.cp is not None
            return self.cp
        if self.mate > 0:
            return mate_score - self.mate
        return -mate_score - self.mate

    def __str__(self) -> str:
        if self.mate is not None:
            return f"mate {self.mate}"
        return f"cp {self.cp}"
