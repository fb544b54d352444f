"""Driving engines that speak agon's protocol (protocol.md): agon itself or
any other. ``Engine`` blocks; ``AsyncEngine`` offers the same calls to
asyncio code.

Nothing here waits forever: a dead engine (its output closed) raises
``EngineTerminatedError`` at once, and every wait has a deadline (``timeout``)
after which the engine is killed and ``EngineTimeoutError`` is raised.
"""

from __future__ import annotations

import asyncio
import queue
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import _agon
from .score import Score

Command = Union[str, Sequence[str]]

__all__ = [
    "AnalysisResult",
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
                if not isinstance(value, int) or value < 1:
                    raise ValueError(f"Limit {name} must be a whole number of 1 or more, not {value!r}")
                words += [name, str(value)]
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
    at once (the handshake, ``isready``, quitting) and is added to a timed
    search's own time.
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
            engine._kill()
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

    def _read(self, deadline: Optional[float], waiting_for: str) -> str:
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            line = self._lines.get(timeout=remaining)
        except queue.Empty:
            self._kill()
            raise EngineTimeoutError(f"no {waiting_for} from the engine in time; it was killed") from None
        if line is None:
            self._lines.put(None)
            self._searching = False
            raise EngineTerminatedError(f"{self._death()} while agon waited for {waiting_for}")
        return line

    def _kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def _deadline(self, seconds: Optional[float]) -> Optional[float]:
        return None if seconds is None else time.monotonic() + seconds

    # -- commands --------------------------------------------------------

    def _handshake(self) -> None:
        self._send("uci")
        deadline = self._deadline(self.timeout)
        while True:
            line = self._read(deadline, "uciok")
            words = line.split()
            if line == "uciok":
                return
            if len(words) >= 3 and words[0] == "id":
                self.id[words[1]] = " ".join(words[2:])
            elif len(words) >= 3 and words[0] == "option" and words[1] == "name":
                rest = line.split(" name ", 1)[1]
                name = rest.split(" type ", 1)[0]
                self.options[name] = rest

    def _sync(self) -> None:
        """Sends ``isready`` and waits for ``readyok``; an error line the
        engine wrote before it raises ``EngineError``."""
        self._send("isready")
        deadline = self._deadline(self.timeout)
        errors = []
        while True:
            line = self._read(deadline, "readyok")
            if line == "readyok":
                break
            if line.startswith("info string error"):
                errors.append(line[len("info string ") :])
        if errors:
            raise EngineError("; ".join(errors))

    def ping(self) -> None:
        """Checks that the engine is alive and has read every command."""
        self._idle()
        self._sync()

    def configure(self, options: Mapping[str, Union[str, int, bool, None]]) -> None:
        """Sets options (``{"Hash": 64, "Threads": 2}``); a value of ``None``
        presses a button (``{"Clear Hash": None}``). An option the engine
        refuses raises ``EngineError`` with its message."""
        self._idle()
        for name, value in options.items():
            if value is None:
                self._send(f"setoption name {name}")
            else:
                text = str(value).lower() if isinstance(value, bool) else str(value)
                self._send(f"setoption name {name} value {text}")
        self._sync()
        for name, value in options.items():
            if name.lower() == "multipv" and value is not None:
                self._multipv = int(value)

    def _idle(self) -> None:
        if self._searching:
            raise EngineError("the engine is still searching (stop the running analysis first)")

    def _start(self, position: _agon.Position, go: List[str], multipv: Optional[int]) -> None:
        self._idle()
        wanted = multipv or 1
        if wanted != self._multipv:
            self._send(f"setoption name MultiPV value {wanted}")
        self._send(_position_command(position))
        self._sync()
        self._multipv = wanted
        self._send(" ".join(["go", *go]))
        self._searching = True

    def _search_deadline(self, limit: Limit, timeout: Optional[float]) -> Optional[float]:
        if timeout is not None:
            return self._deadline(timeout)
        if limit.time is not None:
            return self._deadline(limit.time + self.timeout)
        return None

    def _results(
        self, position: _agon.Position, deadline: Callable[[], Optional[float]]
    ) -> Iterator[Union[Info, PlayResult]]:
        """Yields each ``info`` of the running search, then its result;
        ``deadline()`` is asked before each line."""
        last: Dict[int, Info] = {}
        while True:
            line = self._read(deadline(), "bestmove")
            words = line.split()
            if not words:
                continue
            if words[0] == "info":
                info = _parse_info(words[1:], position)
                if info.string is None:
                    last[info.multipv] = info
                elif info.string.startswith("error"):
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
        timed search)."""
        result = self._search("analyse", position, limit, multipv, timeout)
        return result.lines if multipv is not None else result.info

    def play(self, position: _agon.Position, limit: Limit, timeout: Optional[float] = None) -> PlayResult:
        """The engine's move in ``position`` within ``limit``."""
        return self._search("play", position, limit, None, timeout)

    def _search(
        self,
        purpose: str,
        position: _agon.Position,
        limit: Limit,
        multipv: Optional[int],
        timeout: Optional[float],
    ) -> PlayResult:
        """Runs one search within ``limit`` to its end."""
        go = limit.go_arguments()
        if not go:
            raise ValueError(f"{purpose} needs a limit: Limit(depth=...), nodes=... or time=...")
        self._start(position, go, multipv)
        deadline = self._search_deadline(limit, timeout)
        result = None
        for result in self._results(position, lambda: deadline):
            pass
        assert isinstance(result, PlayResult)
        return result

    def analysis(
        self,
        position: _agon.Position,
        limit: Optional[Limit] = None,
        multipv: Optional[int] = None,
    ) -> "AnalysisResult":
        """Starts a search (``go infinite`` without a limit) and returns an
        ``AnalysisResult`` to iterate over its ``Info`` as the engine writes
        them, until ``stop()`` or the limit ends it."""
        go = limit.go_arguments() if limit is not None else []
        self._start(position, go or ["infinite"], multipv)
        return AnalysisResult(self, position)

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
    context manager it stops the search when the block ends."""

    def __init__(self, engine: Engine, position: _agon.Position):
        self._engine = engine
        self._deadline: Optional[float] = None
        self._stream = engine._results(position, lambda: self._deadline)
        self._result: Optional[PlayResult] = None
        self.info = Info()
        """The last ``Info`` of the best line so far."""

    def __iter__(self) -> "AnalysisResult":
        return self

    def __next__(self) -> Info:
        if self._result is None:
            item = next(self._stream)
            if isinstance(item, PlayResult):
                self._result = item
            else:
                if item.multipv == 1 and item.string is None:
                    self.info = item
                return item
        raise StopIteration

    def stop(self) -> None:
        """Ends the search; the engine must then answer within its
        ``timeout`` (or it is killed and ``EngineTimeoutError`` raised)."""
        if self._result is None and self._engine._searching:
            self._deadline = self._engine._deadline(self._engine.timeout)
            self._engine._send("stop")

    def wait(self) -> PlayResult:
        """Waits for the end of the search (call ``stop()`` first for one
        without a limit) and returns the engine's move."""
        for _ in self:
            pass
        assert self._result is not None
        return self._result

    def __enter__(self) -> "AnalysisResult":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._result is None and self._engine.process.poll() is None:
            self.stop()
            self.wait()


class AsyncEngine:
    """``Engine`` for asyncio: the same calls, awaited, each run on a worker
    thread one at a time. ``engine = await AsyncEngine.popen("agon")``."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._lock = asyncio.Lock()

    @classmethod
    async def popen(cls, command: Command, timeout: float = 10.0, **popen_args: Any) -> "AsyncEngine":
        """Starts the engine (see ``Engine.popen``)."""
        return cls(await asyncio.to_thread(Engine.popen, command, timeout, **popen_args))

    async def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        async with self._lock:
            return await asyncio.to_thread(method, *args, **kwargs)

    async def configure(self, options: Mapping[str, Union[str, int, bool, None]]) -> None:
        """See ``Engine.configure``."""
        await self._call(self.engine.configure, options)

    async def analyse(self, *args: Any, **kwargs: Any) -> Union[Info, List[Info]]:
        """``Engine.analyse``, with the same arguments."""
        result: Union[Info, List[Info]] = await self._call(self.engine.analyse, *args, **kwargs)
        return result

    async def play(self, *args: Any, **kwargs: Any) -> PlayResult:
        """``Engine.play``, with the same arguments."""
        result: PlayResult = await self._call(self.engine.play, *args, **kwargs)
        return result

    async def quit(self) -> None:
        """See ``Engine.quit``."""
        await self._call(self.engine.quit)

    async def __aenter__(self) -> "AsyncEngine":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.quit()
