"""Game records: the JSON lines and PGN files of ``agon match`` and the
PGN the GUI exports, read by agon's own readers, and PGN written by the
match runner's own writer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from . import _agon
from .score import Score

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class RecordedMove:
    """One move of a game and what its engine said before playing it.

    ``score`` is from White's point of view (``score.turn == "white"``), so
    that the scores of a game line up for a plot; ``None`` when the engine
    reported none, and for book moves.
    """

    move: str
    score: Optional[Score] = None
    depth: Optional[int] = None
    time_ms: Optional[int] = None
    book: bool = False


@dataclass
class Game:
    """A recorded game: its tags, start position, moves and result.

    ``headers`` keeps the PGN tags in file order (for a JSON-lines record,
    the tags ``agon match -pgnout`` writes for it). ``result`` is ``"1-0"``,
    ``"0-1"``, ``"1/2-1/2"`` or ``"*"``; ``reason`` is the closing comment
    (e.g. ``"white wins by formation"``); ``number`` is the game's number in the
    match for a JSON-lines record and ``None`` for PGN.
    """

    headers: Dict[str, str] = field(default_factory=dict)
    fen: str = _agon.START_FEN
    moves: List[RecordedMove] = field(default_factory=list)
    result: str = "*"
    reason: Optional[str] = None
    number: Optional[int] = None

    @property
    def termination(self) -> Optional[str]:
        """The ``Termination`` tag: ``formation``, ``repetition``, ``crash``..."""
        return self.headers.get("Termination")

    @property
    def winner(self) -> Optional[str]:
        """``"white"``, ``"black"`` or ``None`` (draw or unfinished)."""
        return {"1-0": "white", "0-1": "black"}.get(self.result)

    def start(self) -> _agon.Position:
        """The position before the first move."""
        return _agon.Position(self.fen)

    def end(self) -> _agon.Position:
        """The position after the last move, every move on its stack."""
        position = self.start()
        for recorded in self.moves:
            position.push(recorded.move)
        return position

    def positions(self) -> Iterator[_agon.Position]:
        """Each position the game went through, the start first and the end
        last (copies, one per move plus one)."""
        position = self.start()
        yield position.copy()
        for recorded in self.moves:
            position.push(recorded.move)
            yield position.copy()

    def pgn(self) -> str:
        """The game as ``agon match -pgnout`` writes it (tags other than the
        match runner's are not written; a ``Round`` that is not a number,
        such as ``?``, is written as 1, the match runner's rounds being
        numbers). A game without a result, an unknown ``Termination`` or an
        illegal move raises ``ValueError``."""
        return _agon.record_pgn(
            list(self.headers.items()),
            [_move_fields(recorded) for recorded in self.moves],
            self.reason or "",
        )


def _move_fields(
    recorded: RecordedMove,
) -> Tuple[str, Optional[int], Optional[int], Optional[int], Optional[int], bool]:
    score = None if recorded.score is None else recorded.score.white()
    return (
        recorded.move,
        None if score is None else score.cp,
        None if score is None else score.mate,
        recorded.depth,
        recorded.time_ms,
        recorded.book,
    )


def _game(fields: Any) -> Game:
    number, tags, fen, moves, reason, result = fields
    return Game(
        headers=dict(tags),
        fen=fen,
        moves=[
            RecordedMove(
                move=text,
                score=None if cp is None and mate is None else Score(cp=cp, mate=mate, turn="white"),
                depth=depth,
                time_ms=time_ms,
                book=book,
            )
            for text, cp, mate, depth, time_ms, book in moves
        ],
        result=result,
        reason=reason,
        number=number,
    )


def read_games(path: PathLike) -> List[Game]:
    """Every game of an ``agon match -jsonl`` file or a PGN file (``agon
    match -pgnout``, the GUI's export). Every move is checked by the rules
    core; a malformed file raises ``ValueError`` naming the file and the
    game or line, a file that is not UTF-8 text ``ValueError`` naming it."""
    return [_game(fields) for fields in _agon.read_record_file(os.fspath(path))]


def write_pgn(games: Iterable[Game], path: PathLike) -> None:
    """Writes ``games`` to ``path`` as PGN, all or nothing (a temporary
    file beside it, synced, then renamed over it, as agon's tools do)."""
    _agon.write_text_atomically(os.fspath(path), "".join(game.pgn() for game in games))
