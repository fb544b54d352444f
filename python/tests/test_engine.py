"""The engine driver against the real agon engine and against engines that
misbehave: every failure is an exception, never a hang."""

import asyncio
import sys
import time

import pytest

import agon
from agon.engine import (
    AsyncEngine,
    Engine,
    EngineError,
    EngineTerminatedError,
    EngineTimeoutError,
    Limit,
)


@pytest.fixture
def engine(agon_binary):
    with Engine.popen([agon_binary], timeout=10) as running:
        yield running


def test_the_handshake_names_the_engine_and_its_options(engine):
    assert engine.id["name"].startswith("agon")
    assert "Hash" in engine.options and "MultiPV" in engine.options


def test_analyse_gives_score_line_depth_and_nodes(engine):
    position = agon.Position()
    position.push("f1e1")
    info = engine.analyse(position, Limit(depth=4))
    assert info.depth == 4 and info.nodes > 0
    assert info.score is not None and info.score.turn == "black"
    assert not info.score.is_mate() and abs(info.score.cp) < 1000
    assert info.pv and all(isinstance(move, agon.Move) for move in info.pv)
    line = position.copy()
    for move in info.pv:
        line.push(move)


def test_multipv_gives_the_best_lines_best_first(engine):
    lines = engine.analyse(agon.Position(), Limit(depth=3), multipv=3)
    assert [info.multipv for info in lines] == [1, 2, 3]
    assert len({info.pv[0] for info in lines}) == 3
    assert all(info.depth == 3 and info.score is not None for info in lines)
    # Back to one line.
    assert isinstance(engine.analyse(agon.Position(), Limit(nodes=2000)), agon.engine.Info)


def test_play_gives_a_legal_move_and_none_when_the_game_is_over(engine):
    position = agon.Position()
    for _ in range(6):
        result = engine.play(position, Limit(time=0.05))
        assert result.move in position.legal_moves()
        position.push(result.move)
    finished = agon.Position("6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b")
    over = engine.play(finished, Limit(depth=2))
    assert over.move is None and "game over" in over.info.string


def test_configure_sets_options_and_reports_refusals(engine):
    engine.configure({"Hash": 16, "Clear Hash": None, "Ponder": False})
    with pytest.raises(EngineError, match="(?i)hsah"):
        engine.configure({"Hsah": 16})
    with pytest.raises(EngineError):
        engine.configure({"Hash": 0})
    engine.ping()


def test_analysis_streams_infos_until_stopped(engine):
    position = agon.Position()
    depths = []
    with engine.analysis(position) as analysis:
        for info in analysis:
            if info.depth is not None:
                depths.append(info.depth)
            if len(depths) >= 3:
                analysis.stop()
        best = analysis.wait()
    assert depths[:3] == [1, 2, 3]
    assert best.move in position.legal_moves()
    assert analysis.info.depth is not None
    # The engine takes commands again.
    assert engine.play(position, Limit(depth=1)).move is not None


def test_a_killed_engine_raises_instead_of_hanging(engine):
    analysis = engine.analysis(agon.Position())
    next(analysis)
    engine.process.kill()
    started = time.monotonic()
    with pytest.raises(EngineTerminatedError, match="exited"):
        for _ in analysis:
            pass
    assert time.monotonic() - started < 5
    with pytest.raises(EngineTerminatedError):
        engine.analyse(agon.Position(), Limit(depth=1))


def test_an_engine_that_crashes_mid_game_raises(scripted_engine):
    with Engine.popen(scripted_engine + ["crash"], timeout=5) as crashing:
        position = agon.Position()
        position.push(crashing.play(position, Limit(depth=1)).move)
        with pytest.raises(EngineTerminatedError, match="status 3"):
            crashing.play(position, Limit(depth=1))


def test_silent_and_mute_engines_time_out_and_are_killed(scripted_engine):
    started = time.monotonic()
    with pytest.raises(EngineTimeoutError):
        Engine.popen(scripted_engine + ["nostart"], timeout=1)
    assert time.monotonic() - started < 5
    with Engine.popen(scripted_engine + ["silent"], timeout=1) as silent:
        with pytest.raises(EngineTimeoutError, match="bestmove"):
            silent.play(agon.Position(), Limit(time=0.1))
        assert silent.process.poll() is not None


def test_an_illegal_engine_move_is_an_error(scripted_engine):
    with Engine.popen(scripted_engine + ["illegal"], timeout=5) as cheat:
        with pytest.raises(EngineError, match="f1f3 is not legal"):
            cheat.play(agon.Position(), Limit(depth=1))


def test_a_missing_program_is_an_engine_error(tmp_path):
    with pytest.raises(EngineTerminatedError, match="cannot start"):
        Engine.popen([str(tmp_path / "no-such-engine")])


def test_the_asyncio_flavour(agon_binary):
    async def main():
        async with await AsyncEngine.popen([agon_binary]) as engine:
            await engine.configure({"Hash": 8})
            info, played = await asyncio.gather(
                engine.analyse(agon.Position(), Limit(depth=3)),
                engine.play(agon.Position(), Limit(depth=2)),
            )
            return info, played

    info, played = asyncio.run(main())
    assert info.depth == 3 and played.move in agon.Position().legal_moves()
