"""The board as an SVG picture, drawn as agon's GUI draws it (the cell
geometry, colours and pieces of src/tools/gui/web/app.js and app.css), for
notebooks (``Position._repr_svg_``) and files."""

from __future__ import annotations

import math
from typing import Optional, Tuple, Union

from . import _agon

# Centre to corner of a cell, and the height of a cell, in the GUI's units.
_SIZE = 9.6
_ROW = math.sqrt(3) * _SIZE
_RING_FILLS = ("#e8c45a", "#d9c9a3", "#e5d8b8", "#d9c9a3", "#e5d8b8", "#d3c196")
_LAST_MOVE_FILL = "#c9d98a"
_CELL_STROKE = 'stroke="#9b8b68" stroke-width="0.6"'
_BODY = {
    "white": 'fill="#fbfaf5" stroke="#2b2a27"',
    "black": 'fill="#2b2a27" stroke="#000"',
}
_CROWN = {
    "white": 'fill="#c9a227" stroke="#2b2a27" stroke-width="0.4"',
    "black": 'fill="#e8c45a" stroke="#000" stroke-width="0.4"',
}


def _centre(file: int, rank: int, flipped: bool) -> Tuple[float, float]:
    x = (file - 5) * 1.5 * _SIZE
    y = (file / 2 - rank + 2.5) * _ROW
    return (-x, -y) if flipped else (x, y)


def _hexagon(x: float, y: float, size: float) -> str:
    return " ".join(
        f"{x + size * math.cos(math.pi / 3 * i):.2f},{y + size * math.sin(math.pi / 3 * i):.2f}"
        for i in range(6)
    )


def _piece(letter: str, x: float, y: float) -> str:
    side = "white" if letter[0].isupper() else "black"
    queen = letter[0].lower() == "q"
    captured = letter.endswith("*")
    faded = ' opacity="0.55" stroke-dasharray="1.5 1"' if captured else ""
    radius = _SIZE * (0.7 if queen else 0.58)
    parts = [f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{radius:.2f}" stroke-width="1" {_BODY[side]}{faded}/>']
    if queen:
        s = _SIZE * 0.42
        crown = (
            f"M {x - s:.2f} {y + s * 0.5:.2f} L {x - s:.2f} {y - s * 0.5:.2f} L {x - s * 0.5:.2f} {y:.2f} "
            f"L {x:.2f} {y - s * 0.8:.2f} L {x + s * 0.5:.2f} {y:.2f} L {x + s:.2f} {y - s * 0.5:.2f} "
            f"L {x + s:.2f} {y + s * 0.5:.2f} Z"
        )
        parts.append(f'<path d="{crown}" {_CROWN[side]}/>')
    if captured:
        c = _SIZE * 0.5
        cross = f"M {x - c:.2f} {y - c:.2f} L {x + c:.2f} {y + c:.2f} M {x + c:.2f} {y - c:.2f} L {x - c:.2f} {y + c:.2f}"
        parts.append(f'<path d="{cross}" stroke="#d0201a" stroke-width="1.8" stroke-linecap="round"/>')
    return "".join(parts)


def _move_cells(move: Union["_agon.Move", str]) -> Tuple[str, str]:
    """The two cells of ``move``, written ``<from><to>`` (``f1e1``)."""
    text = str(move)
    # The second cell starts at the first letter after the first one.
    split = next((at for at in range(1, len(text)) if text[at].isalpha()), len(text))
    names = {name for name, _, _, _ in _agon.cells()}
    if text[:split] not in names or text[split:] not in names:
        raise ValueError(f"last_move {text!r} is not a move from one cell of the board to another, like 'f1e1'")
    return text[:split], text[split:]


def board(
    position: "_agon.Position",
    size: Optional[int] = 360,
    flipped: bool = False,
    last_move: Union["_agon.Move", str, None] = None,
    coordinates: bool = False,
) -> str:
    """An SVG picture of ``position``: White at the bottom unless
    ``flipped``; ``last_move`` (by default the last move of the position's
    stack) is highlighted; ``coordinates`` writes the cell names; ``size`` is
    the width in pixels (``None`` leaves it to the page). A ``last_move``
    that is not two cells of the board raises ``ValueError``."""
    if last_move is None and position.move_stack:
        last_move = position.move_stack[-1]
    moved = set() if last_move is None else set(_move_cells(last_move))
    pieces = position.pieces()
    width = "" if size is None else f' width="{size}" height="{size * 192 // 180}"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-90 -96 180 192"{width} '
        f'role="img" aria-label="Agon board: {position.fen()}">'
    ]
    for name, file, rank, ring in _agon.cells():
        x, y = _centre(file, rank, flipped)
        fill = _LAST_MOVE_FILL if name in moved else _RING_FILLS[ring]
        out.append(f'<polygon points="{_hexagon(x, y, _SIZE - 0.35)}" fill="{fill}" {_CELL_STROKE}/>')
        if name == _agon.THRONE:
            out.append(
                f'<polygon points="{_hexagon(x, y, _SIZE * 0.72)}" fill="none" stroke="#8a6a10" stroke-width="1"/>'
            )
        if coordinates:
            out.append(
                f'<text x="{x:.2f}" y="{y + _SIZE * 0.78:.2f}" text-anchor="middle" '
                f'font-size="4" fill="#5b5140">{name}</text>'
            )
        if name in pieces:
            out.append(_piece(pieces[name], x, y))
    out.append("</svg>")
    return "".join(out)
