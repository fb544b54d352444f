"""The engine driver against the real agon engine and against engines that
misbehave: every failure is an exception, never a hang."""

import _thread
import asyncio
import os
import signal
import threading
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
from agon.score import Score


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


def finishes_within(seconds, call):
    """What ``call()`` returns or raises, or a failed test if it is still
    waiting after ``seconds`` (it is then left waiting on its thread)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as error:
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"still waiting after {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def press_ctrl_c_in(seconds):
    """Raises KeyboardInterrupt in the main thread in ``seconds``, as
    Ctrl-C would."""
    # A process started in the background by a shell ignores SIGINT, and
    # interrupt_main then does nothing: Python's own handler is put back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Timer(seconds, _thread.interrupt_main).start()


def test_ctrl_c_during_analyse_stops_the_search_and_the_engine_goes_on(engine):
    press_ctrl_c_in(0.3)
    with pytest.raises(KeyboardInterrupt):
        # The timeout only keeps a lost Ctrl-C from hanging the test.
        engine.analyse(agon.Position(), Limit(depth=60), timeout=60)
    assert engine.analyse(agon.Position(), Limit(depth=2)).depth == 2


def test_ctrl_c_right_after_go_is_sent_still_stops_the_search(engine, monkeypatch):
    send = engine._send

    def send_then_ctrl_c(line):
        send(line)
        if line.startswith("go"):
            raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_send", send_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        engine.analyse(agon.Position(), Limit(depth=60))
    monkeypatch.undo()
    # Left running, the deep search would hold the next one back for good.
    info = finishes_within(10, lambda: engine.analyse(agon.Position(), Limit(depth=2)))
    assert info.depth == 2


def test_ctrl_c_inside_an_analysis_block_is_what_the_caller_sees(engine):
    press_ctrl_c_in(0.3)
    with pytest.raises(KeyboardInterrupt):
        with engine.analysis(agon.Position(), timeout=60) as analysis:
            for _ in analysis:
                pass
    engine.ping()
    assert engine.play(agon.Position(), Limit(depth=1)).move is not None


def test_an_error_inside_an_analysis_block_is_what_the_caller_sees(engine, scripted_engine):
    with pytest.raises(ZeroDivisionError):
        with engine.analysis(agon.Position()) as analysis:
            next(analysis)
            1 / 0
    assert engine.analyse(agon.Position(), Limit(depth=1)).depth == 1
    with Engine.popen(scripted_engine + ["illegal"], timeout=5) as cheat:
        with pytest.raises(EngineError, match="f1f3 is not legal"):
            with cheat.analysis(agon.Position(), Limit(depth=1)) as analysis:
                analysis.wait()
        cheat.ping()


def test_an_engine_that_timed_out_is_reported_dead_not_busy(scripted_engine):
    with Engine.popen(scripted_engine + ["silent"], timeout=1) as silent:
        with pytest.raises(EngineTimeoutError):
            silent.analyse(agon.Position(), Limit(depth=3), timeout=0.5)
        with pytest.raises(EngineTerminatedError):
            silent.analyse(agon.Position(), Limit(depth=1))
        with pytest.raises(EngineTerminatedError):
            silent.ping()


@pytest.mark.parametrize(
    "limit,timeout,longest",
    [(Limit(time=0.2), None, 1.2), (Limit(depth=5), 0.5, 0.5), (None, 0.5, 0.5)],
)
def test_a_timed_or_bounded_analysis_of_a_hung_engine_ends(scripted_engine, limit, timeout, longest):
    with Engine.popen(scripted_engine + ["silent"], timeout=1) as silent:
        started = time.monotonic()
        bound = {} if timeout is None else {"timeout": timeout}
        analysis = silent.analysis(agon.Position(), limit, **bound)
        with pytest.raises(EngineTimeoutError):
            finishes_within(10, analysis.wait)
        assert longest <= time.monotonic() - started < longest + 3
        assert silent.process.poll() is not None


@pytest.mark.parametrize(
    "options",
    [{"EvalFile": "a\ngo infinite"}, {"Hash\r": 16}, {"Clear Hash\n": None}, {"EvalFile": "nul\x00"}],
)
def test_option_text_cannot_carry_a_second_command(engine, options):
    with pytest.raises(ValueError, match="control character"):
        engine.configure(options)
    engine.ping()
    assert engine.analyse(agon.Position(), Limit(depth=1)).depth == 1


def test_multipv_must_be_a_whole_number(engine):
    for multipv in ("2\ngo infinite", 0, 1.5, True):
        with pytest.raises(ValueError, match="multipv"):
            engine.analyse(agon.Position(), Limit(depth=1), multipv=multipv)
    assert len(engine.analyse(agon.Position(), Limit(depth=1), multipv=2)) == 2


def test_an_analysis_reads_its_own_copy_of_the_position(engine):
    position = agon.Position()
    start_moves = agon.Position().legal_moves()
    with engine.analysis(position, Limit(depth=3)) as analysis:
        position.push("f1e1")
        lines = [info for info in analysis if info.depth is not None]
        result = analysis.wait()
    assert [info.depth for info in lines] == [1, 2, 3]
    assert all(info.score.turn == "white" and info.pv and info.pv[0] in start_moves for info in lines)
    assert result.move in start_moves


def test_words_may_be_split_by_any_whitespace_and_odd_lines_are_skipped(fake_engine):
    with Engine.popen(fake_engine + ["tabs"], timeout=5) as odd:
        assert odd.id == {"name": "fake engine"}
        assert odd.options == {"Hash": "Hash type spin default 1", "Clear Hash": "Clear Hash type button"}
        odd.ping()
        info = odd.analyse(agon.Position(), Limit(depth=1))
        assert info.depth == 1 and info.score == Score(cp=12, turn="white")
        assert [str(move) for move in info.pv] == ["f1e1"]
        assert str(odd.play(agon.Position(), Limit(depth=1)).move) == "f1e1"


def test_cancelling_an_async_search_stops_it(agon_binary):
    async def main():
        async with await AsyncEngine.popen([agon_binary]) as engine:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(engine.analyse(agon.Position(), Limit(depth=60)), 0.3)
            first = await asyncio.wait_for(engine.analyse(agon.Position(), Limit(depth=2)), 10)
            analysis = await engine.analysis(agon.Position())

            async def read_all():
                async for _ in analysis:
                    pass

            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(read_all(), 0.3)
            second = await asyncio.wait_for(engine.play(agon.Position(), Limit(depth=2)), 10)
            return first, second

    first, second = asyncio.run(main())
    assert first.depth == 2 and second.move in agon.Position().legal_moves()


def test_the_asyncio_flavour_pings_and_streams_an_analysis(agon_binary):
    async def main():
        async with await AsyncEngine.popen([agon_binary]) as engine:
            await engine.ping()
            depths = []
            async with await engine.analysis(agon.Position()) as analysis:
                async for info in analysis:
                    if info.depth is not None:
                        depths.append(info.depth)
                    if len(depths) >= 3:
                        analysis.stop()
                best = await analysis.wait()
            return depths, best, analysis.info

    depths, best, last = asyncio.run(main())
    assert depths[:3] == [1, 2, 3]
    assert best.move in agon.Position().legal_moves() and last.depth is not None


def test_cancelling_an_async_start_leaves_no_engine_behind(fake_engine, tmp_path):
    pidfile = tmp_path / "pid"

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(AsyncEngine.popen(fake_engine + ["slow", str(pidfile)]), 0.3)

    asyncio.run(main())
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)
