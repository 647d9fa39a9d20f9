"""What a process got from the machine: the cores a call kept busy, the cores the process can get now, and the compilations JAX made while it ran."""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections import Counter
from typing import Any, Callable

import jax

from parallel_mcmc._validate import real_number, whole_number
from parallel_mcmc.measure.timing import time_interleaved


__all__ = ["cores_busy", "cores_available", "CompileLog"]


def cores_busy(fn: Callable[..., Any], *args: Any, calls: int = 1, warmup: int = 1, **kwargs: Any) -> float:
    """How many cores this process kept busy while ``fn(*args, **kwargs)`` ran.

    The :attr:`Timing.cores_busy` of :func:`time_interleaved` with this one
    call: CPU seconds of the whole process (all its threads) over wall-clock
    seconds, over ``calls`` calls after ``warmup`` untimed ones (compilation
    left out), every output waited for. About 1 means one core did the work;
    about the core count means the calls used the whole machine. Other
    programs on the machine lower it: it counts only what this process got.

    Parameters
    ----------
    fn, *args, **kwargs
        As for :func:`parallel_mcmc.measure.time_call`.
    calls : int, optional
        Timed calls (at least 1).
    warmup : int, optional
        Untimed calls first (0 times the first call, compilation and all).

    Returns
    -------
    float
        CPU seconds of the process over wall-clock seconds.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, or a count is not a whole number.
    """
    whole_number("calls", calls, 1)
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}.")
    call = functools.partial(fn, **kwargs) if kwargs else fn
    return time_interleaved({"call": (call, *args)}, repeats=calls, warmup=warmup)[0]["call"].cores_busy


def cores_available(cores: int = 2, seconds: float = 0.3) -> float:
    """How many of ``cores`` cores this process gets right now: about ``cores`` on a quiet machine.

    Runs ``cores`` threads that hash a 1 MB block over and over for
    ``seconds`` (``hashlib`` lets go of Python's lock while it hashes, so the
    threads run at once). Other busy programs on the machine take their share,
    and the figure drops below ``cores``.

    Parameters
    ----------
    cores : int, optional
        The threads to run (at least 1).
    seconds : float, optional
        How long they run.

    Returns
    -------
    float
        The process's CPU seconds over the wall-clock seconds.

    Raises
    ------
    ValueError
        If ``cores`` is not a whole number >= 1 or ``seconds`` not a positive number.
    """
    whole_number("cores", cores, 1)
    real_number("seconds", seconds, above=0, of=" of seconds")
    block = bytes(1 << 20)
    end = time.perf_counter() + seconds

    def hash_until_end() -> None:
        while time.perf_counter() < end:
            hashlib.sha256(block).digest()

    threads = [threading.Thread(target=hash_until_end) for _ in range(cores)]
    wall, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


class CompileLog:
    """Measure the time JAX spends tracing, lowering and compiling inside a ``with`` block.

    Listens to JAX's own monitoring events (``/jax/core/compile/...``). Tracing
    an outer function traces the functions it calls, so those events nest; each
    event is turned into a time interval and ``seconds`` is the length of their
    union: compilation alone, counted once.

    Attributes
    ----------
    compiles : int
        Counts backend compilations.
    compiled : dict[str, int]
        Counts them by function name (a ``collections.Counter``).
    """

    _EVENTS = (
        "/jax/core/compile/jaxpr_trace_duration",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "/jax/core/compile/backend_compile_duration",
    )

    def __init__(self) -> None:
        self.compiles = 0
        self.compiled: Counter[str] = Counter()
        self._spans: list[tuple[float, float]] = []
        self._active = False

    def _listen(self, event: str, duration: float, **kwargs: Any) -> None:
        if self._active and event in self._EVENTS:
            end = time.perf_counter()
            self._spans.append((end - duration, end))
            if event == self._EVENTS[-1]:
                self.compiles += 1
                self.compiled[str(kwargs.get("fun_name", "?"))] += 1

    @property
    def seconds(self) -> float:
        """Seconds spent compiling (union of the compile events' intervals)."""
        total, reach = 0.0, float("-inf")
        for start, end in sorted(self._spans):
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total

    def __enter__(self) -> "CompileLog":
        self._active = True
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._active = False
        try:
            jax.monitoring.unregister_event_duration_listener(self._listen)
        except (AssertionError, ValueError):
            pass  # already removed; it is inactive anyway

