"""The rules core seen from Python: the same counts, keys and refusals as
the Rust side."""

import _thread
import copy
import random
import signal
import threading
import time
import xml.etree.ElementTree as ElementTree

import pytest

import agon
from conftest import REPOSITORY

# Depths whose counts stay below this are checked (the start position's
# perft(5), 11.7 million, included).
MAX_NODES = 12_000_000


def perft_cases():
    for line in (REPOSITORY / "tests" / "data" / "perft.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = [field.strip() for field in line.split(";")]
        fen, counts, name = fields[0], fields[1:-1], fields[-1].lstrip("# ")
        for count in counts:
            depth, nodes = count.split()
            if int(nodes) <= MAX_NODES:
                yield pytest.param(fen, int(depth[1:]), int(nodes), id=f"{name}-{depth}")


@pytest.mark.parametrize("fen,depth,nodes", list(perft_cases()))
def test_perft_matches_the_shared_suite(fen, depth, nodes):
    assert agon.Position(fen).perft(depth) == nodes


def test_legal_moves_agree_with_perft_one_and_are_written_in_our_notation():
    position = agon.Position()
    moves = position.legal_moves()
    assert len(moves) == position.perft(1) == 27
    for move in moves:
        text = str(move)
        assert text == move.from_cell + move.to_cell
        assert position.is_legal(text) and position.is_legal(move)
        assert position.parse_move(text) == move
    assert len(set(moves)) == len(moves)


def test_random_games_round_trip_every_push_and_pop():
    rng = random.Random(1842)
    finished = 0
    for _ in range(40):
        position = agon.Position()
        history = []
        for _ in range(160):
            moves = position.legal_moves()
            if not moves:
                assert position.is_game_over()
                break
            history.append((position.fen(), position.key, position.copy()))
            position.push(rng.choice(moves))
            # The incremental key is the key of the FEN read from nothing.
            assert position.key == agon.Position(position.fen()).key
            if position.outcome() is not None:
                finished += 1
                break
        while history:
            fen, key, before = history.pop()
            position.pop()
            assert position.fen() == fen
            assert position.key == key
            assert position == before and hash(position) == hash(before)
        assert position == agon.Position() and not position.move_stack
    assert finished > 0


def test_positions_compare_and_hash_by_their_content():
    a = agon.Position()
    b = agon.Position(agon.START_FEN)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    b.push("f1e1")
    assert a != b and a != "not a position"
    c = b.copy()
    c.pop()
    assert c == a and [str(move) for move in b.move_stack] == ["f1e1"]
    assert copy.copy(b) == b and copy.deepcopy(b) == b
    assert b.copy(stack=False).move_stack == [] and b.copy(stack=False) == b


@pytest.mark.parametrize(
    "fen,message",
    [
        ("", "empty FEN"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q", "FEN has 1 fields"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6 w", "FEN board has 10 ranks; expected 11"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q x", "side to move 'x' is not 'w' or 'b'"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1X w", "unknown character 'X' in rank 1"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1QQ w", "rank 1 describes 7 cells; it has 6"),
        ("q1G1g1/6G/G7/9/g8g/5G5/G8G/9/7g/g6/1G1g1Q w", "white has 7 guards; at most 6 are allowed"),
        ("q1G1g1/6G/G7/9/g8g/5G5/G8G/9/7g/g6/3g1Q w", "a guard stands on the throne f6"),
        ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 0", "move number '0' is not a whole number from 1 to 4294967295"),
    ],
)
def test_bad_fens_are_refused_with_the_rules_core_reason(fen, message):
    with pytest.raises(ValueError, match=message):
        agon.Position(fen)


@pytest.mark.parametrize(
    "move,message",
    [
        ("f1", "'f1' is not a move"),
        ("f1z9", "'f1z9' is not a move"),
        ("a1a11", "cell 'a11' is not on the board"),
        ("e1e3", "move e1e3 is not legal: e3 is not next to e1"),
        ("f1f2", "move f1f2 is not legal: there is no piece on f1"),
        ("g11g10", "the piece on g11 is black's, and white is to move"),
        ("e1e2e", "'e1e2e' is not a move"),
    ],
)
def test_bad_moves_are_refused_and_change_nothing(move, message):
    position = agon.Position()
    position.push("f1e1")
    position.push("f11g11")
    before = (position.fen(), position.key, position.move_stack)
    with pytest.raises(ValueError, match=message):
        position.push(move)
    assert (position.fen(), position.key, position.move_stack) == before


def test_popping_the_root_is_an_index_error():
    with pytest.raises(IndexError):
        agon.Position().pop()


def test_outcomes_name_the_winner_and_the_termination():
    formation = agon.Position("6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b").outcome()
    assert (formation.winner, formation.termination, formation.result()) == ("white", "formation", "1-0")
    forfeit = agon.Position("q5/7/8/9/4GG4/4G1G4/4GG4/9/g7/g6/Qgggg1 b").outcome()
    assert (forfeit.winner, forfeit.termination) == ("black", "forfeit")
    shuffle = agon.Position()
    for move in ["f1e1", "f11g11", "e1f1", "g11f11"] * 2:
        assert shuffle.outcome() is None
        shuffle.push(move)
    drawn = shuffle.outcome()
    assert (drawn.winner, drawn.termination, drawn.result()) == (None, "repetition", "1/2-1/2")
    assert shuffle.is_game_over()
    # The same board without the history is not a repetition.
    assert shuffle.copy(stack=False).outcome() is None


def test_no_move_is_played_after_the_end_of_the_game():
    drawn = agon.Position()
    for move in ["f1e1", "f11g11", "e1f1", "g11f11"] * 2:
        drawn.push(move)
    formation = agon.Position("6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b")
    for finished, result in ((drawn, "draw by threefold repetition"), (formation, "white wins by formation")):
        reason = rf"comes after the end of the game \({result}\)"
        assert finished.legal_moves() == []
        assert not finished.is_legal("f1e1") and not finished.is_legal("a1b1")
        before = (finished.fen(), finished.move_stack)
        for move in ("f1e1", "a1b1"):
            with pytest.raises(ValueError, match=reason):
                finished.push(move)
            with pytest.raises(ValueError, match=reason):
                finished.parse_move(move)
        assert (finished.fen(), finished.move_stack, finished.is_game_over()) == (*before, True)
    # Taking the last move back reopens the game.
    drawn.pop()
    assert drawn.outcome() is None and drawn.legal_moves() and str(drawn.push("g11f11")) == "g11f11"


def test_ctrl_c_breaks_off_a_deep_perft():
    # perft(8) from the start takes minutes; a lost Ctrl-C fails the test
    # when the count ends instead of hanging it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Timer(0.3, _thread.interrupt_main).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        agon.Position().perft(8)
    assert time.monotonic() - started < 5
    assert agon.Position().perft(3) == 18417


@pytest.mark.parametrize("depth", [0, 21, -1])
def test_perft_depths_outside_the_protocol_range_are_refused(depth):
    with pytest.raises(ValueError, match=r"perft depth out of range \(1\.\.=20\), got " + str(depth)):
        agon.Position().perft(depth)


def test_pieces_and_the_svg_board():
    position = agon.Position("6/7/2G5/1q3G3/5G4/3gGQg*G1g1/6g3/5g3/2g5/2G4/6 b")
    assert position.piece_at("f6") == "Q" and position.piece_at("g6") == "g*"
    assert position.piece_at("a1") is None
    with pytest.raises(ValueError, match="not on the board"):
        position.piece_at("a11")
    assert len(agon.cells()) == 91
    picture = position._repr_svg_()
    root = ElementTree.fromstring(picture)
    polygons = root.findall("{http://www.w3.org/2000/svg}polygon")
    assert len(polygons) == 91 + 1  # every cell and the throne's mark
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == len(position.pieces())
    # The captured guard is crossed out.
    assert picture.count('stroke="#d0201a"') == 1


@pytest.mark.parametrize("last_move", ["f1", "", "abc", "f1z9", "a1a11", "f1e1e1", "1f1e"])
def test_a_malformed_last_move_is_a_value_error(last_move):
    with pytest.raises(ValueError, match="last_move"):
        agon.svg.board(agon.Position(), last_move=last_move)


def test_the_last_move_is_highlighted():
    position = agon.Position()
    position.push("f1e1")
    for picture in (agon.svg.board(position), agon.svg.board(agon.Position(), last_move="f1e1")):
        assert picture.count(agon.svg._LAST_MOVE_FILL) == 2
