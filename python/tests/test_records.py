"""Records of a real `agon match` run, read back from both of its files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agon


@pytest.fixture(scope="module")
def match_run(agon_binary, tmp_path_factory):
    """Four games of agon at depth 1 against agon at depth 2 from random
    openings, recorded as JSON lines and as PGN."""
    directory = tmp_path_factory.mktemp("match")
    jsonl, pgn = directory / "games.jsonl", directory / "games.pgn"
    engine = f"cmd={agon_binary}"
    subprocess.run(
        [agon_binary, "match", "-engine", engine, "name=shallow", "depth=1",
         "-engine", engine, "name=deeper", "depth=2", "-games", "4", "-repeat",
         "-openings", "random", "plies=4", "seed=7", "-maxmoves", "80",
         "-jsonl", str(jsonl), "-pgnout", str(pgn)],
        check=True, capture_output=True, timeout=120,
    )
    return jsonl, pgn


def test_both_files_of_a_run_give_the_same_games(match_run):
    jsonl, pgn = match_run
    from_json, from_pgn = agon.read_games(jsonl), agon.read_games(pgn)
    assert len(from_json) == 4
    for a, b in zip(from_json, from_pgn):
        assert (a.headers, a.fen, a.moves, a.result, a.reason) == (b.headers, b.fen, b.moves, b.result, b.reason)
    assert [game.number for game in from_json] == [1, 2, 3, 4]
    assert all(game.number is None for game in from_pgn)


def test_json_records_are_read_exactly(match_run):
    jsonl, _ = match_run
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    for record, game in zip(records, agon.read_games(jsonl)):
        assert game.headers["White"] == record["white"] and game.headers["Black"] == record["black"]
        assert game.result == record["result"] and game.termination == record["termination"]
        assert game.reason == record["reason"] and game.fen == record["fen"]
        book = [m for m in game.moves if m.book]
        assert [m.move for m in book] == record["book"]
        assert all(m.score is None for m in book)
        played = game.moves[len(book):]
        assert [m.move for m in played] == [m["move"] for m in record["moves"]]
        position = agon.Position(record["fen"])
        for move in book:
            position.push(move.move)
        for recorded, written in zip(played, record["moves"]):
            # Records keep the mover's score; games give White's.
            if written["score"] is None:
                assert recorded.score is None
            else:
                mover_score = recorded.score.pov(position.turn)
                kind = "mate" if mover_score.is_mate() else "cp"
                assert {kind: getattr(mover_score, kind)} == written["score"]
            assert (recorded.depth, recorded.time_ms) == (written["depth"], written["time_ms"])
            position.push(recorded.move)
        assert game.end().fen() == record["final_fen"] == position.fen()
        outcome = position.outcome()
        if record["termination"] in ("formation", "forfeit", "no-moves", "repetition"):
            assert outcome is not None and outcome.result() == record["result"]
            assert outcome.termination == record["termination"]


def test_pgn_written_back_is_what_the_match_runner_wrote(match_run, tmp_path):
    jsonl, pgn = match_run
    games = agon.read_games(jsonl)
    assert "".join(game.pgn() for game in games) == pgn.read_text()
    out = tmp_path / "copy.pgn"
    agon.write_pgn(games, out)
    assert out.read_text() == pgn.read_text()
    assert [g.moves for g in agon.read_games(out)] == [g.moves for g in games]
    assert list(tmp_path.iterdir()) == [out]
    positions = list(games[0].positions())
    assert len(positions) == len(games[0].moves) + 1
    assert positions[0] == games[0].start() and positions[-1] == games[0].end()


GUI_EXPORT = """[Event "agon match"]
[Site "local"]
[Date "2026.12.01"]
[Round "1"]
[White "You"]
[Black "agon"]
[Result "*"]
[FEN "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1"]
[Variant "agon"]
[TimeControl "-"]

1. f1e1 {? 0.000s} f11g11 {+0.12/9 0.250s} {game in progress} *

"""


def test_an_unfinished_gui_export_is_read_but_has_no_record(tmp_path):
    path = tmp_path / "agon-game.pgn"
    path.write_text(GUI_EXPORT)
    (game,) = agon.read_games(path)
    assert game.result == "*" and game.winner is None and game.termination is None
    assert [m.move for m in game.moves] == ["f1e1", "f11g11"]
    assert game.moves[0].score is None
    # Black's +0.12 is White's -0.12.
    assert game.moves[1].score == agon.Score(cp=-12, turn="white") and game.moves[1].depth == 9
    assert game.reason == "game in progress"
    with pytest.raises(ValueError, match="unfinished"):
        game.pgn()


def test_malformed_files_name_the_place(tmp_path):
    bad_line = tmp_path / "bad.jsonl"
    bad_line.write_text('{"game": 1}\n')
    with pytest.raises(ValueError, match="bad.jsonl: line 1"):
        agon.read_games(bad_line)
    illegal = tmp_path / "illegal.pgn"
    illegal.write_text('[Event "x"]\n\n1. f1f3 *\n')
    with pytest.raises(ValueError, match="move 1 'f1f3'"):
        agon.read_games(illegal)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert agon.read_games(empty) == []
    with pytest.raises(FileNotFoundError):
        agon.read_games(tmp_path / "missing.pgn")


def test_a_file_that_is_not_utf8_is_a_value_error_naming_it(tmp_path):
    latin = tmp_path / "latin1.pgn"
    latin.write_bytes('[Event "M\u00fcller"]\n\n1. f1e1 *\n'.encode("latin-1"))
    with pytest.raises(ValueError, match="latin1.pgn: .*UTF-8"):
        agon.read_games(latin)


def test_the_readme_example_plots_a_match(match_run, agon_binary, tmp_path):
    pytest.importorskip("matplotlib")
    jsonl, _ = match_run
    picture = tmp_path / "evaluation.png"
    example = Path(__file__).resolve().parents[1] / "examples" / "plot_match.py"
    subprocess.run(
        [sys.executable, str(example), str(jsonl), str(picture), "--engine", agon_binary, "--depth", "2"],
        check=True, timeout=300,
    )
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_draws_example_counts_each_draw_on_one_side_at_most(match_run, tmp_path):
    jsonl, _ = match_run
    example = Path(__file__).resolve().parents[1] / "examples" / "draws_when_better.py"
    draws = sum(game.result == "1/2-1/2" for game in agon.read_games(jsonl))

    def counts(engine, threshold):
        out = subprocess.run(
            [sys.executable, str(example), str(jsonl), engine, "--threshold", str(threshold)],
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout.splitlines()
        return int(out[1].split(": ")[1].split()[0]), int(out[2].split(": ")[1].split()[0])

    # With no threshold every draw with a score is "ahead" (mean >= 0) or
    # "behind"; with an unreachable one, none is either.
    ahead, behind = counts("deeper", 0)
    assert 0 < ahead + behind <= draws
    assert counts("deeper", 1_000_000) == (0, 0)


def test_the_losses_example_writes_each_lost_game_once_with_the_loser_to_move(match_run, tmp_path):
    jsonl, _ = match_run
    example = Path(__file__).resolve().parents[1] / "examples" / "before_losses.py"
    lost = [game for game in agon.read_games(jsonl)
            if game.winner and game.headers[game.winner.capitalize()] == "deeper"]
    assert lost, "the deeper engine should win some of the four games"
    plies = 3
    output = tmp_path / "losses.fen"
    subprocess.run(
        [sys.executable, str(example), str(jsonl), "shallow", str(output), "--plies", str(plies)],
        check=True, capture_output=True, timeout=60,
    )
    fens = output.read_text().splitlines()
    expected = []
    for game in lost:
        positions = [position.fen() for position in game.positions()]
        loser = "black" if game.winner == "white" else "white"
        # The position `plies` before the end, or one earlier for the loser's move.
        candidates = positions[-1 - plies], positions[-2 - plies]
        fen = next(fen for fen in candidates if agon.Position(fen).turn == loser)
        expected.append(fen)
    assert fens == expected
