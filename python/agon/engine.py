"""Driving engines that speak agon's protocol (protocol.md): agon itself or
any other. ``Engine`` blocks; ``AsyncEngine`` offers the same calls to
asyncio code.

A dead engine (its output closed) raises ``EngineTerminatedError`` at once.
Every answer that should come at once (the handshake, ``isready``, the
answer to ``stop``, quitting) has a deadline, the engine's ``timeout``, after
which the engine is killed and ``EngineTimeoutError`` is raised; so has a
timed search (its time plus ``timeout``). A search limited only by depth,
nodes or mate, or not limited at all, lasts as long as the engine takes
unless its own ``timeout=`` bounds it, for no deadline fits every such
search.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import shlex
import subprocess
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from types import TracebackType
from typing import (
    Any,
    Callable,
    Dict,
    Generator,
    List,
    Mapping,
    Optional,
    Sequence,
    Type,
    TypeVar,
    Union,
)

from . import _agon
from .score import Score

Command = Union[str, Sequence[str]]
T = TypeVar("T")

__all__ = [
    "AnalysisResult",
    "AsyncAnalysisResult",
    "AsyncEngine",
    "Engine",
    "EngineError",
    "EngineTerminatedError",
    "EngineTimeoutError",
    "Info",
    "Limit",
    "PlayResult",
]


class EngineError(RuntimeError):
    """The engine refused a command (its ``info string error:`` line is the
    message) or broke the protocol."""


class EngineTerminatedError(EngineError):
    """The engine process ended, or was never able to take commands."""


class EngineTimeoutError(EngineError, TimeoutError):
    """The engine did not answer in time; it has been killed."""


@dataclass(frozen=True)
class Limit:
    """When a search ends: the first limit reached. ``time`` is in seconds
    (sent as ``go movetime``); ``depth`` in plies; ``nodes`` positions;
    ``mate`` a win in at most that many moves."""

    depth: Optional[int] = None
    nodes: Optional[int] = None
    time: Optional[float] = None
    mate: Optional[int] = None

    def go_arguments(self) -> List[str]:
        """The arguments of ``go`` for this limit."""
        words: List[str] = []
        for name, value in (("depth", self.depth), ("nodes", self.nodes), ("mate", self.mate)):
            if value is not None:
                words += [name, str(_whole_number(f"Limit {name}", value))]
        if self.time is not None:
            if not self.time > 0:
                raise ValueError(f"Limit time must be positive, not {self.time!r}")
            words += ["movetime", str(max(1, round(self.time * 1000)))]
        return words


@dataclass
class Info:
    """What one ``info`` line said (protocol.md 9.1). ``score`` is from the
    point of view of the side to move in the analysed position; ``pv`` holds
    the legal prefix of the reported line; ``time`` is in seconds."""

    score: Optional[Score] = None
    pv: List[_agon.Move] = field(default_factory=list)
    depth: Optional[int] = None
    seldepth: Optional[int] = None
    multipv: int = 1
    nodes: Optional[int] = None
    nps: Optional[int] = None
    hashfull: Optional[int] = None
    time: Optional[float] = None
    lowerbound: bool = False
    upperbound: bool = False
    string: Optional[str] = None


@dataclass
class PlayResult:
    """The engine's move (``None`` when the game is already over, and then
    ``info.string`` says why), the reply it expects, the last info of its
    best line, and the last info of each line it reported (best first)."""

    move: Optional[_agon.Move]
    ponder: Optional[str] = None
    info: Info = field(default_factory=Info)
    lines: List[Info] = field(default_factory=list)


_INTEGER_FIELDS = ("depth", "seldepth", "multipv", "nodes", "nps", "hashfull")

# How often a wait for the engine looks again at its deadline, which
# ``stop()`` from another thread may set or bring forward meanwhile.
_DEADLINE_POLL = 0.2


def _whole_number(what: str, value: Any) -> int:
    # bool is an int to Python, but True is no number to the engine.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a whole number of 1 or more, not {value!r}")
    return value


def _one_line(what: str, text: str) -> str:
    """``text`` if it can go inside a protocol line: a control character,
    above all a line break, would end the line and start another command."""
    for character in text:
        if unicodedata.category(character) in ("Cc", "Zl", "Zp"):
            raise ValueError(
                f"{what} {text!r} holds the control character {character!r}, which a protocol line cannot carry"
            )
    return text


def _parse_info(words: List[str], position: _agon.Position) -> Info:
    """Reads the words after ``info``; unknown words are skipped."""
    info = Info()
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        try:
            if word in _INTEGER_FIELDS and at < len(words):
                setattr(info, word, int(words[at]))
                at += 1
            elif word == "time" and at < len(words):
                info.time = int(words[at]) / 1000
                at += 1
            elif word == "score" and at + 1 < len(words):
                kind, value = words[at], int(words[at + 1])
                at += 2
                if kind in ("cp", "mate"):
                    info.score = Score(**{kind: value}, turn=position.turn)
            elif word in ("lowerbound", "upperbound"):
                setattr(info, word, True)
            elif word == "pv":
                line = position.copy(stack=False)
                for text in words[at:]:
                    if not line.is_legal(text):
                        break
                    info.pv.append(line.push(text))
                at = len(words)
            elif word == "string":
                info.string = " ".join(words[at:])
                at = len(words)
        except ValueError:
            continue
    return info


def _position_command(position: _agon.Position) -> str:
    moves = " ".join(str(mv) for mv in position.move_stack)
    return f"position fen {position.root_fen()}" + (f" moves {moves}" if moves else "")


class Engine:
    """An engine process spoken to over its standard input and output.

    Start one with ``Engine.popen(command)``, best as a context manager
    (``with Engine.popen("agon") as engine: ...``), which quits it at the end.
    ``timeout`` (seconds) bounds every wait for an answer that should come
    at once (the handshake, ``isready``, the answer to ``stop``, quitting)
    and is added to a timed search's own time.
    """

    def __init__(self, process: "subprocess.Popen[str]", timeout: float = 10.0):
        self.process = process
        self.timeout = timeout
        self.id: Dict[str, str] = {}
        self.options: Dict[str, str] = {}
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._multipv = 1
        self._searching = False
        reader = threading.Thread(target=self._read_output, name="agon-engine-reader", daemon=True)
        reader.start()

    @classmethod
    def popen(
        cls,
        command: Command,
        timeout: float = 10.0,
        stderr: Any = subprocess.DEVNULL,
        **popen_args: Any,
    ) -> "Engine":
        """Starts ``command`` (a list of words, or a string split like a
        shell would) and does the ``uci`` handshake. Extra keyword arguments
        go to ``subprocess.Popen`` (``cwd``, ``env``...)."""
        words = shlex.split(command) if isinstance(command, str) else list(command)
        try:
            process = subprocess.Popen(
                words,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                **popen_args,
            )
        except OSError as error:
            raise EngineTerminatedError(f"cannot start engine {words!r}: {error}") from error
        engine = cls(process, timeout)
        try:
            engine._handshake()
        except BaseException:
            engine._close()
            raise
        return engine

    # -- the pipes -------------------------------------------------------

    def _read_output(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(None)

    def _send(self, line: str) -> None:
        if self.process.poll() is not None:
            raise EngineTerminatedError(self._death())
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise EngineTerminatedError(self._death()) from error

    def _death(self) -> str:
        try:
            status = self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "the engine closed its output"
        return f"the engine exited with status {status}"

    def _read(self, deadline: Callable[[], Optional[float]], waiting_for: str) -> str:
        """The engine's next line, by ``deadline()`` (``None``: no deadline)."""
        while True:
            ends = deadline()
            wait = _DEADLINE_POLL if ends is None else min(_DEADLINE_POLL, max(0.0, ends - time.monotonic()))
            try:
                line = self._lines.get(timeout=wait)
                break
            except queue.Empty:
                if ends is not None and time.monotonic() >= ends:
                    self._kill()
                    raise EngineTimeoutError(f"no {waiting_for} from the engine in time; it was killed") from None
        if line is None:
            self._lines.put(None)
            self._searching = False
            raise EngineTerminatedError(f"{self._death()} while agon waited for {waiting_for}")
        return line

    def _kill(self) -> None:
        self._searching = False
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def _answer_deadline(self) -> Callable[[], float]:
        """The deadline of an answer that should come at once."""
        ends = time.monotonic() + self.timeout
        return lambda: ends

    # -- commands --------------------------------------------------------

    # The protocol splits lines into words at any run of whitespace; so does
    # every reading of the engine's lines here.

    def _handshake(self) -> None:
        self._send("uci")
        deadline = self._answer_deadline()
        while True:
            words = self._read(deadline, "uciok").split()
            if words == ["uciok"]:
                return
            if len(words) >= 3 and words[0] == "id":
                self.id[words[1]] = " ".join(words[2:])
            elif words[:2] == ["option", "name"]:
                described = words[2:]
                name = described[: described.index("type")] if "type" in described else described
                if name:
                    self.options[" ".join(name)] = " ".join(described)

    def _sync(self) -> None:
        """Sends ``isready`` and waits for ``readyok``; an error line the
        engine wrote before it raises ``EngineError``."""
        self._send("isready")
        deadline = self._answer_deadline()
        errors = []
        while True:
            words = self._read(deadline, "readyok").split()
            if words == ["readyok"]:
                break
            if words[:2] == ["info", "string"] and len(words) > 2 and words[2].startswith("error"):
                errors.append(" ".join(words[2:]))
        if errors:
            raise EngineError("; ".join(errors))

    def ping(self) -> None:
        """Checks that the engine is alive and has read every command."""
        self._idle()
        self._sync()

    def configure(self, options: Mapping[str, Union[str, int, bool, None]]) -> None:
        """Sets options (``{"Hash": 64, "Threads": 2}``); a value of ``None``
        presses a button (``{"Clear Hash": None}``). An option the engine
        refuses raises ``EngineError`` with its message; a name or value
        with a control character (a line break...) raises ``ValueError``
        before anything is sent."""
        commands = []
        for name, value in options.items():
            command = f"setoption name {_one_line('option name', name)}"
            if value is not None:
                text = str(value).lower() if isinstance(value, bool) else str(value)
                command += f" value {_one_line('option value', text)}"
            commands.append(command)
        self._idle()
        for command in commands:
            self._send(command)
        self._sync()
        for name, value in options.items():
            if name.lower() == "multipv" and value is not None:
                self._multipv = int(value)

    def _idle(self) -> None:
        # A dead engine is not searching: the next command says it is dead.
        if self._searching and self.process.poll() is None:
            raise EngineError("the engine is still searching (stop the running analysis first)")

    def _new_search(
        self,
        position: _agon.Position,
        limit: Optional[Limit],
        multipv: Optional[int],
        timeout: Optional[float],
        purpose: Optional[str] = None,
    ) -> "AnalysisResult":
        """A search of a copy of ``position`` (the caller may go on changing
        its own), checked but not begun; ``purpose`` names a call that needs
        a limit."""
        go = limit.go_arguments() if limit is not None else []
        if purpose is not None and not go:
            raise ValueError(f"{purpose} needs a limit: Limit(depth=...), nodes=... or time=...")
        lines = 1 if multipv is None else _whole_number("multipv", multipv)
        if timeout is None and limit is not None and limit.time is not None:
            timeout = limit.time + self.timeout
        return AnalysisResult(self, position.copy(), go or ["infinite"], lines, timeout)

    def _results(
        self, position: _agon.Position, deadline: Callable[[], Optional[float]]
    ) -> Generator[Union[Info, PlayResult], None, None]:
        """Yields each ``info`` of the running search, then its result;
        ``deadline()`` bounds the wait for each line."""
        last: Dict[int, Info] = {}
        while True:
            line = self._read(deadline, "bestmove")
            words = line.split()
            if not words:
                continue
            if words[0] == "info":
                info = _parse_info(words[1:], position)
                if info.string is None:
                    last[info.multipv] = info
                elif info.string.startswith("error"):
                    # A refused go starts nothing: no bestmove will follow.
                    self._searching = False
                    raise EngineError(info.string)
                else:
                    last.setdefault(0, info)
                yield info
            elif words[0] == "bestmove":
                self._searching = False
                move = None
                if len(words) > 1 and position.is_legal(words[1]):
                    move = position.parse_move(words[1])
                elif len(words) > 1 and words[1] != "(none)":
                    raise EngineError(f"the engine's move {words[1]} is not legal: {line}")
                ponder = words[3] if len(words) > 3 and words[2] == "ponder" else None
                final = last.get(1) or last.get(0) or Info()
                lines = [last[rank] for rank in sorted(last) if rank > 0] or [final]
                yield PlayResult(move, ponder, final, lines)
                return

    def analyse(
        self,
        position: _agon.Position,
        limit: Limit,
        multipv: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Union[Info, List[Info]]:
        """Searches ``position`` (its move stack is sent too, for the
        repetition rule) within ``limit``; returns the last ``Info`` of the
        best line, or with ``multipv=k`` a list of the best k lines' last
        infos, best first. ``timeout`` bounds the wait (default: none for
        depth and node limits, the time limit plus ``self.timeout`` for a
        timed search). Should anything break the search off (an error, a
        timeout, Ctrl-C), the engine is told to stop and its answer read
        before the exception goes on, so that it takes the next command."""
        result = self._new_search(position, limit, multipv, timeout, "analyse")._run()
        return result.lines if multipv is not None else result.info

    def play(self, position: _agon.Position, limit: Limit, timeout: Optional[float] = None) -> PlayResult:
        """The engine's move in ``position`` within ``limit`` (``timeout`` as
        for ``analyse``)."""
        return self._new_search(position, limit, None, timeout, "play")._run()

    def analysis(
        self,
        position: _agon.Position,
        limit: Optional[Limit] = None,
        multipv: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> "AnalysisResult":
        """Starts a search (``go infinite`` without a limit) and returns an
        ``AnalysisResult`` to iterate over its ``Info`` as the engine writes
        them, until ``stop()`` or the limit ends it. The search is of a copy
        of ``position``. ``timeout`` bounds the whole search (by default a
        timed one gets its time plus ``self.timeout``, others no bound)."""
        search = self._new_search(position, limit, multipv, timeout)
        search._begin()
        return search

    def quit(self) -> None:
        """Asks the engine to quit and waits for it (killing it after
        ``timeout``); closing an engine that already ended does nothing."""
        if self.process.poll() is None:
            try:
                if self._searching:
                    self._send("stop")
                self._send("quit")
                self.process.wait(timeout=self.timeout)
            except (EngineTerminatedError, subprocess.TimeoutExpired):
                pass
        self._close()

    def _close(self) -> None:
        self._kill()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    close = quit

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.quit()

    def __repr__(self) -> str:
        return f"<Engine {self.id.get('name', '?')!r} pid={self.process.pid}>"


class AnalysisResult:
    """A running search: iterate over it for each ``Info`` as it comes;
    ``stop()`` ends the search, ``wait()`` returns its ``PlayResult``. As a
    context manager it stops the search when the block ends. An error or
    Ctrl-C while it runs stops the search and reads the engine's answer
    (killing an engine that does not answer within its ``timeout``), so that
    the engine takes the next command; the error goes on unchanged."""

    def __init__(
        self,
        engine: Engine,
        position: _agon.Position,
        go: List[str],
        multipv: int,
        timeout: Optional[float],
    ):
        self._engine = engine
        self._position = position
        self._go = go
        self._multipv = multipv
        self._timeout = timeout
        self._deadline: Optional[float] = None
        # Orders the writing of go and stop, which may come from two threads.
        self._stop_lock = threading.Lock()
        self._stop_wanted = False
        self._stop_sent = False
        self._stream = engine._results(position, lambda: self._deadline)
        self._result: Optional[PlayResult] = None
        self._broken_by: Optional[BaseException] = None
        self.info = Info()
        """The last ``Info`` of the best line so far."""

    def _begin(self) -> None:
        """Starts the search; broken off (Ctrl-C may come at any moment), it
        is stopped and read to its end like a search broken off later."""
        try:
            self._start()
        except BaseException as error:
            self._abandon(error)
            raise

    def _start(self) -> None:
        engine = self._engine
        engine._idle()
        if self._multipv != engine._multipv:
            engine._send(f"setoption name MultiPV value {self._multipv}")
        engine._send(_position_command(self._position))
        engine._sync()
        engine._multipv = self._multipv
        go = " ".join(["go", *self._go])
        with self._stop_lock:
            if self._timeout is not None:
                self._deadline = time.monotonic() + self._timeout
            # Marked before it is sent: an interruption between the two
            # leaves a search that is stopped, not one left running unseen.
            engine._searching = True
            engine._send(go)
            if self._stop_wanted:
                self._send_stop()

    def _run(self) -> PlayResult:
        self._begin()
        try:
            return self.wait()
        except BaseException as error:
            self._abandon(error)
            raise

    def __iter__(self) -> "AnalysisResult":
        return self

    def __next__(self) -> Info:
        if self._result is not None or self._broken_by is not None:
            raise StopIteration
        try:
            item = next(self._stream)
        except BaseException as error:
            self._abandon(error)
            raise
        if isinstance(item, PlayResult):
            self._result = item
            raise StopIteration
        if item.multipv == 1 and item.string is None:
            self.info = item
        return item

    def stop(self) -> None:
        """Ends the search; the engine must then answer within its
        ``timeout`` (or it is killed and ``EngineTimeoutError`` raised). It
        may be called from another thread than the one that waits."""
        with self._stop_lock:
            self._stop_wanted = True
            if self._result is None and self._engine._searching:
                self._send_stop()

    def _send_stop(self) -> None:
        """Sends ``stop`` once, with ``_stop_lock`` held, and gives the
        engine its ``timeout`` to answer."""
        if self._stop_sent:
            return
        self._stop_sent = True
        answer_by = time.monotonic() + self._engine.timeout
        self._deadline = answer_by if self._deadline is None else min(self._deadline, answer_by)
        self._engine._send("stop")

    def _abandon(self, error: BaseException) -> None:
        """Ends the search that ``error`` broke off and reads the engine's
        output up to its ``bestmove``."""
        if self._result is not None or self._broken_by is not None:
            return
        self._broken_by = error
        self._stream.close()
        engine = self._engine
        try:
            with self._stop_lock:
                if not engine._searching:
                    return
                self._send_stop()
            while engine._read(lambda: self._deadline, "bestmove").split()[:1] != ["bestmove"]:
                pass
        except EngineError:
            # The caller is to see the error that broke the search off; an
            # engine that died or was killed meanwhile says so at the next call.
            pass
        finally:
            engine._searching = False

    def wait(self) -> PlayResult:
        """Waits for the end of the search (call ``stop()`` first for one
        without a limit) and returns the engine's move."""
        for _ in self:
            pass
        if self._result is None:
            raise EngineError("the search was broken off and has no result") from self._broken_by
        return self._result

    def __enter__(self) -> "AnalysisResult":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        if exc is not None:
            self._abandon(exc)
        elif self._result is None:
            self.stop()
            self.wait()


async def _settled(work: "asyncio.Future[Any]") -> None:
    """Waits for ``work`` to end, even through another cancellation, for an
    engine must not be left in the middle of a command."""
    while not work.done():
        try:
            await asyncio.wait({work})
        except asyncio.CancelledError:
            pass
    if not work.cancelled():
        # Marked as seen, not to be logged: the caller raises its cancellation.
        work.exception()


async def _in_worker(call: Callable[[], T], search: Optional[AnalysisResult] = None) -> T:
    """``call()`` run on a worker thread. Cancelled, the call still runs to
    its end; a ``search`` is stopped first, and then read to its end, so that
    the engine takes the next call. Then the cancellation goes on."""
    work = asyncio.ensure_future(asyncio.to_thread(call))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError as cancelled:
        if search is not None:
            # An engine that died ends the call by itself.
            with contextlib.suppress(EngineError):
                search.stop()
        await _settled(work)
        if search is not None:
            await _settled(asyncio.ensure_future(asyncio.to_thread(search._abandon, cancelled)))
        raise


class AsyncAnalysisResult:
    """``AnalysisResult`` for asyncio: ``async for info in analysis``,
    ``stop()``, ``await analysis.wait()``, ``async with``. Cancelling a
    task that awaits it stops the search."""

    def __init__(self, search: AnalysisResult):
        self._search = search

    @property
    def info(self) -> Info:
        """The last ``Info`` of the best line so far."""
        return self._search.info

    def __aiter__(self) -> "AsyncAnalysisResult":
        return self

    async def __anext__(self) -> Info:
        # StopIteration cannot cross from a worker thread into a future.
        info = await _in_worker(lambda: next(self._search, None), self._search)
        if info is None:
            raise StopAsyncIteration
        return info

    def stop(self) -> None:
        """See ``AnalysisResult.stop``."""
        self._search.stop()

    async def wait(self) -> PlayResult:
        """See ``AnalysisResult.wait``."""
        return await _in_worker(self._search.wait, self._search)

    async def __aenter__(self) -> "AsyncAnalysisResult":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        await _in_worker(functools.partial(self._search.__exit__, exc_type, exc, traceback), self._search)


class AsyncEngine:
    """``Engine`` for asyncio: the same calls, awaited, each run on a worker
    thread one at a time. ``engine = await AsyncEngine.popen("agon")``.
    Cancelling a call (``asyncio.wait_for``...) stops its search and waits
    for the engine's answer, at most its ``timeout``, so that the engine
    takes the next call. While an ``analysis()`` runs, other calls raise
    ``EngineError`` (stop it first), as with ``Engine``."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._lock = asyncio.Lock()

    @classmethod
    async def popen(cls, command: Command, timeout: float = 10.0, **popen_args: Any) -> "AsyncEngine":
        """Starts the engine (see ``Engine.popen``); cancelled, it quits an
        engine that started meanwhile."""
        started: List[Engine] = []
        try:
            await _in_worker(lambda: started.append(Engine.popen(command, timeout, **popen_args)))
        except asyncio.CancelledError:
            for engine in started:
                await _settled(asyncio.ensure_future(asyncio.to_thread(engine.quit)))
            raise
        return cls(started[0])

    async def _call(self, call: Callable[[], T], search: Optional[AnalysisResult] = None) -> T:
        async with self._lock:
            return await _in_worker(call, search)

    async def ping(self) -> None:
        """See ``Engine.ping``."""
        await self._call(self.engine.ping)

    async def configure(self, options: Mapping[str, Union[str, int, bool, None]]) -> None:
        """See ``Engine.configure``."""
        await self._call(functools.partial(self.engine.configure, options))

    async def analyse(
        self,
        position: _agon.Position,
        limit: Limit,
        multipv: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Union[Info, List[Info]]:
        """See ``Engine.analyse``."""
        search = self.engine._new_search(position, limit, multipv, timeout, "analyse")
        result = await self._call(search._run, search)
        return result.lines if multipv is not None else result.info

    async def play(self, position: _agon.Position, limit: Limit, timeout: Optional[float] = None) -> PlayResult:
        """See ``Engine.play``."""
        search = self.engine._new_search(position, limit, None, timeout, "play")
        return await self._call(search._run, search)

    async def analysis(
        self,
        position: _agon.Position,
        limit: Optional[Limit] = None,
        multipv: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> AsyncAnalysisResult:
        """See ``Engine.analysis``:
        ``async with await engine.analysis(position) as analysis:
        async for info in analysis: ...``."""
        search = self.engine._new_search(position, limit, multipv, timeout)
        await self._call(search._begin, search)
        return AsyncAnalysisResult(search)

    async def quit(self) -> None:
        """See ``Engine.quit``."""
        await self._call(self.engine.quit)

    async def __aenter__(self) -> "AsyncEngine":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.quit()
