"""Time JAX code fairly: compilation left out, every output waited for.

One loop does all the book's timing: :func:`time_interleaved`. It calls each
function once (or more) to warm up, which compiles a jitted one, then lets the
functions take turns, one call each per round, for ``repeats`` rounds; every
call ends with :func:`jax.block_until_ready` on the whole output pytree, and
its wall-clock and CPU seconds are kept, so a slow spell of a shared machine
hits all the calls alike and the spread can be shown. The other entry points
are that loop seen from one side:

- :func:`time_call`: one function; :func:`timed`: the same, with its output;
- :func:`time_with_calibration`: a page's runs and the calibration calls of
  their cost model in the same rounds, returned apart;
- :func:`cores_busy`: the cores a call kept busy (its CPU over its wall time);
- :func:`parallel_mcmc.measure.pool_overhead`: a pool's fastest map of tasks
  that do no work.

:func:`cores_available` is not a timing but a probe: how many cores this
process can get right now. :class:`Speedup` puts a measured speedup beside an
ideal given to it (the book's pages take theirs from the cost model: see
:class:`parallel_mcmc.measure.Comparison`), and :class:`CompileLog` the time JAX
spends compiling, from its own events.
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import jax

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["Timing", "Speedup", "time_call", "timed", "time_interleaved", "time_with_calibration", "speedup"]


@dataclass(frozen=True)
class Timing:
    """Wall-clock times of repeated calls, in seconds, compilation excluded.

    Parameters
    ----------
    label : str
        What was timed.
    times : tuple of float
        The seconds of each timed call.
    first_call : float
        The time of the first warm-up call, which includes tracing and compilation for a jitted function.
    cpu_times : tuple of float, optional
        The process's CPU seconds during each timed call (all its threads).
    """

    label: str
    times: tuple[float, ...]
    first_call: float
    cpu_times: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def spread(self) -> float:
        """Largest minus smallest repeat, in seconds."""
        return max(self.times) - min(self.times)

    @property
    def compile_estimate(self) -> float:
        """First call minus a typical call, roughly the compilation time."""
        return max(self.first_call - self.median, 0.0)

    @property
    def cores_busy(self) -> float:
        """CPU seconds over wall-clock seconds of the timed calls, the cores the process kept busy."""
        if len(self.cpu_times) != len(self.times):
            raise ValueError(f"{self.label}: this Timing holds no CPU times; make it with time_call or time_interleaved.")
        return sum(self.cpu_times) / sum(self.times)

    def __str__(self) -> str:
        return (
            f"{self.label}: median {_fmt(self.median)} over {len(self.times)} runs "
            f"(spread {_fmt(self.spread)}; first call {_fmt(self.first_call)})"
        )


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def _block(out: Any) -> Any:
    return jax.block_until_ready(out)


def _check_calls(calls: Any) -> None:
    if not isinstance(calls, Mapping) or not calls:
        raise TypeError("calls must be a non-empty dict {label: (fn, *args)}.")
    for name, call in calls.items():
        if not isinstance(call, tuple) or not call or not callable(call[0]):
            raise TypeError(f"calls[{name!r}] must be a tuple (fn, *args) with a callable fn, got {call!r:.60}.")


def time_interleaved(calls: Mapping[str, tuple], repeats: int = 3, warmup: int = 1):
    """Time several calls in interleaved rounds; return ``(timings, outputs)`` dicts by name.

    Each function is called
    ``warmup`` times first (the first of these compiles it and is its
    ``first_call``), then the functions take turns, one call each per round,
    for ``repeats`` rounds: on a shared machine a slow spell then hits all of
    them alike. Every call waits for its whole output; the wall-clock and CPU
    seconds of each timed call are kept, and the output of each function's
    last call is returned with its :class:`Timing`. With ``warmup=0`` the
    first timed call is the ``first_call``.

    Parameters
    ----------
    calls : mapping of str to tuple
        Maps a label to ``(fn, *args)``.
    repeats : int, optional
        Timed rounds (at least 1).
    warmup : int, optional
        Untimed calls of each function first.

    Returns
    -------
    timings : dict of str to parallel_mcmc.measure.Timing
        Each call's timing, by label.
    outputs : dict of str to Any
        Each function's last output, by label.

    Raises
    ------
    TypeError
        If ``calls`` is not a non-empty mapping of ``(fn, *args)`` tuples with a callable ``fn``, or a count is not
        a whole number.
    """
    _check_calls(calls)
    whole_number("repeats", repeats, 1)
    whole_number("warmup", warmup, 0)
    first: dict[str, float] = {}
    times: dict[str, list[float]] = {name: [] for name in calls}
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    outputs: dict[str, Any] = {}
    for name, (fn, *args) in calls.items():
        for _ in range(warmup):
            start = time.perf_counter()
            outputs[name] = _block(fn(*args))
            first.setdefault(name, time.perf_counter() - start)
    for _ in range(repeats):
        for name, (fn, *args) in calls.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            outputs[name] = _block(fn(*args))
            cpu[name].append(time.process_time() - start_cpu)
            times[name].append(time.perf_counter() - start)
    timings = {name: Timing(label=name, times=tuple(times[name]), first_call=first.get(name, times[name][0]),
                            cpu_times=tuple(cpu[name])) for name in calls}
    return timings, outputs


def _one(fn: Callable[..., Any], args: tuple, kwargs: Mapping[str, Any], label: str | None, repeats: int,
         warmup: int) -> tuple[Timing, Any]:
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}; pass the function itself, not its result.")
    name = label or getattr(fn, "__name__", "call")
    call = functools.partial(fn, **kwargs) if kwargs else fn
    timings, outputs = time_interleaved({name: (call, *args)}, repeats=repeats, warmup=warmup)
    return timings[name], outputs[name]


def time_call(
    fn: Callable[..., Any],
    *args: Any,
    repeats: int = 5,
    warmup: int = 1,
    label: str | None = None,
    **kwargs: Any,
) -> Timing:
    """Time ``fn(*args, **kwargs)`` with compilation left out: :func:`time_interleaved` with one call.

    The function is called ``warmup`` times first (the first of these
    compiles it), then ``repeats`` times; every call waits for all arrays in
    its output, whatever the pytree.

    Parameters
    ----------
    fn : callable
        The function to time.
    *args : Any
        Its positional arguments.
    repeats : int, optional
        Timed calls (at least 1).
    warmup : int, optional
        Untimed calls first, the first of them compiling.
    label : str or None, optional
        The timing's label (default: the function's name).
    **kwargs : Any
        Its keyword arguments.

    Returns
    -------
    parallel_mcmc.measure.Timing
        The times of the calls.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, or a count is not a whole number.
    """
    whole_number("warmup", warmup, 1)  # the loop allows 0; here the first call must compile outside the timing
    return _one(fn, args, kwargs, label, repeats, warmup)[0]


def timed(fn: Callable[..., Any], *args: Any, repeats: int = 3, label: str | None = None):
    """:func:`time_call` that also returns the output of the last call.

    Compilation left out, every output waited for.

    Parameters
    ----------
    fn, *args, repeats, label
        As for :func:`time_call`.

    Returns
    -------
    timing : parallel_mcmc.measure.Timing
        The times of the calls.
    output : Any
        The output of the last call.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, or ``repeats`` is not a whole number.
    """
    return _one(fn, args, {}, label, repeats, 1)


def time_with_calibration(runs: Mapping[str, tuple], calibration: Mapping[str, tuple], repeats: int = 3):
    """Time ``runs`` and the ``calibration`` calls of their cost model in the same interleaved rounds.

    Both map a label to ``(fn, *args)``, as for :func:`time_interleaved`. A slow
    spell of the machine then falls on the calibration and the runs alike, and
    cannot raise the model's best case alone.

    Parameters
    ----------
    runs : mapping of str to tuple
        The runs, ``{label: (fn, *args)}``.
    calibration : mapping of str to tuple
        The calibration calls, ``{label: (fn, *args)}``.
    repeats : int, optional
        Timed rounds (at least 1).

    Returns
    -------
    runs : tuple of dict
        ``(timings, outputs)`` of the runs.
    calibration : tuple of dict
        ``(timings, outputs)`` of the calibration, apart.

    Raises
    ------
    TypeError
        If either is not a non-empty mapping of ``(fn, *args)`` tuples.
    ValueError
        If ``runs`` and ``calibration`` share a label.
    """
    for name, group in (("runs", runs), ("calibration", calibration)):
        if not isinstance(group, Mapping) or not group:
            raise TypeError(f"{name} must be a non-empty dict {{label: (fn, *args)}}.")
    shared = sorted(set(runs) & set(calibration))
    if shared:
        raise ValueError(f"runs and calibration share the labels {shared}: give each call its own label.")
    timings, outputs = time_interleaved({**runs, **calibration}, repeats=repeats)
    return tuple(({n: timings[n] for n in group}, {n: outputs[n] for n in group}) for group in (runs, calibration))


@dataclass(frozen=True)
class Speedup:
    """A measured speedup of ``candidate`` over ``baseline`` next to its ideal.

    Parameters
    ----------
    baseline : parallel_mcmc.measure.Timing
        The timing of the baseline.
    candidate : parallel_mcmc.measure.Timing
        The timing of the candidate.
    ideal : float
        The speedup the cost model predicts.
    ideal_reason : str, optional
        Why that is the ideal.
    """

    baseline: Timing
    candidate: Timing
    ideal: float
    ideal_reason: str = ""

    @property
    def measured(self) -> float:
        """Baseline median time over candidate median time."""
        return self.baseline.median / self.candidate.median

    def __str__(self) -> str:
        """The narrator's sentence (:func:`parallel_mcmc.measure.speedup_sentence`): the measured speedup with its
        interval from the repeats, beside the ideal. The ideal is the model's prediction, not a bound: a run above
        it by more than the calibration's error says the model is wrong, and the sentence says so."""
        from parallel_mcmc.measure.compare import speedup_interval
        from parallel_mcmc.measure.narrate import speedup_sentence

        said = speedup_sentence(self.candidate.label, self.baseline.label,
                                speedup_interval(self.baseline.times, self.candidate.times), self.ideal)
        return said + (f" The ideal counts {self.ideal_reason}." if self.ideal_reason else "")

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def speedup(baseline: Timing, candidate: Timing, ideal: float, ideal_reason: str = "") -> Speedup:
    """Build a :class:`Speedup`, checking that its parts make sense.

    Parameters
    ----------
    baseline, candidate, ideal_reason
        As for :class:`Speedup`.
    ideal : float
        The speedup the cost model predicts (positive).

    Returns
    -------
    parallel_mcmc.measure.Speedup
        The measured speedup beside its ideal.

    Raises
    ------
    TypeError
        If ``baseline`` or ``candidate`` is not a :class:`Timing`.
    ValueError
        If ``ideal`` is not a positive number.
    """
    for name, t in (("baseline", baseline), ("candidate", candidate)):
        if not isinstance(t, Timing):
            raise TypeError(f"{name} must be a Timing from time_call(), got {type(t).__name__}.")
    real_number("ideal", ideal, above=0, of=" (a speedup, for example the device count)")
    return Speedup(baseline=baseline, candidate=candidate, ideal=float(ideal), ideal_reason=ideal_reason)


