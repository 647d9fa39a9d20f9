"""Checks for the exercises of the chapter "Devices: where JAX runs"."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as np

from . import as_float, call, expect, passed

__all__ = ["steps_to_pay", "placed_on_last_device", "predict_sharded", "bottleneck"]

# (work of one step, fixed cost of a split call, devices, cores, cores one piece keeps busy): thresholds that are
# not whole numbers, so that rounding up and "the first whole number above" agree; two cases never pay.
_PAY_CASES = [
    (1e-6, 1.013e-4, 2, 2.0, 1.0),
    (2e-6, 3.37e-5, 4, 2.0, 1.0),
    (1e-6, 5.05e-5, 4, 8.0, 1.0),
    (3e-6, 2.5e-4, 2, 2.0, 1.6),
    (1e-6, 1e-4, 8, 16.0, 2.5),
    (1e-6, 1e-4, 1, 8.0, 1.0),
    (5e-6, 1e-4, 4, 1.0, 1.0),
    (1e-6, 1e-4, 4, 4.0, 4.0),
]


def _pays_from(work: float, fixed: float, num_devices: int, cores: float, busy: float) -> int | None:
    share = max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)
    if share >= 1.0:
        return None
    return int(np.floor(fixed / (work * (1.0 - share)))) + 1


def steps_to_pay(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(work_per_step, fixed_seconds, num_devices, cores, cores_busy)``: where a split call starts to pay.

    One device runs a call of ``n`` steps in ``n * work_per_step``. Split over ``num_devices`` devices that share
    ``cores`` cores it costs ``fixed_seconds`` more, plus the pieces at once (:func:`parallel_mcmc.costmodel.
    split_call_time`): ``n * work_per_step * max(1 / num_devices, busy / cores)``, where ``busy`` is
    ``cores_busy`` kept between 1 and ``cores``. The answer is the smallest whole ``n`` at which the split is
    faster, or ``None`` where it never is. ``cases`` (default: a fixed table) lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `steps_to_pay`, not the number it returns.")
    for work, fixed, num_devices, cores, busy in cases if cases is not None else _PAY_CASES:
        want = _pays_from(work, fixed, num_devices, cores, busy)
        where = f"steps_to_pay({work:g}, {fixed:g}, {num_devices}, {cores:g}, {busy:g})"
        got = call(fn, work, fixed, num_devices, cores, busy, what=where)
        if want is None:
            if got is None:
                continue
            raise AssertionError(
                f"{where} returned {got!r}; a split over {num_devices} device(s) sharing {cores:g} core(s), each "
                f"piece keeping {busy:g} busy, is never faster than one device: return None.")
        expect(got is not None, f"{where} returned None, but the split pays from {want:,} steps on.")
        value = as_float(got, where)
        if value == want:
            continue
        threshold = fixed / (work * (1.0 - max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)))
        if np.isclose(value, threshold, rtol=1e-6):
            raise AssertionError(f"{where} returned {value:g}, the break-even itself; a call has a whole number of "
                                 f"steps: the smallest one above it, {want:,}.")
        if value == int(np.floor(threshold)):
            raise AssertionError(f"{where} returned {value:g}: at that many steps the split is still slower; the "
                                 f"smallest whole number above the break-even is {want:,}.")
        no_busy = _pays_from(work, fixed, num_devices, cores, 1.0)
        if busy > 1 and no_busy is not None and value == no_busy:
            raise AssertionError(f"{where} returned {value:g}, as if a piece kept one core busy; it keeps {busy:g}, "
                                 "and the pieces' CPU work shares the cores.")
        no_cores = _pays_from(work, fixed, num_devices, 1e12, 1.0)
        if no_cores is not None and value == no_cores:
            raise AssertionError(f"{where} returned {value:g}, as if every device had a core of its own. The pieces "
                                 f"share {cores:g} core(s): their work together takes at least n * work * busy / cores.")
        raise AssertionError(f"{where} returned {value:g}; expected {want:,}.")
    passed("steps_to_pay")


def placed_on_last_device(answer: Any, original: Any) -> None:
    """Check that ``answer`` holds ``original``'s values, committed to the last device alone."""
    expect(isinstance(answer, jax.Array), f"Expected a jax.Array, got {type(answer).__name__}. Use jax.device_put.")
    expect(
        answer.shape == np.shape(original) and np.array_equal(np.asarray(answer), np.asarray(original)),
        "The array's values or shape changed: place the same array, do not compute a new one.",
    )
    last = jax.devices()[-1]
    devices = answer.devices()
    expect(
        len(devices) == 1,
        f"The array is spread over {len(devices)} devices; put it whole on the last device, {last}.",
    )
    (device,) = devices
    expect(
        device == last,
        f"The array is on {device}, not on the last device {last}. Use jax.devices()[-1].",
    )
    expect(
        answer.committed,
        "The array is on the right device but not committed to it; place it with jax.device_put(x, device).",
    )
    passed("placed_on_last_device")


# (steps with axes (chain, draw), seconds of a step at widths 1, 2, ..., devices, cores, inner): layouts that tell
# the plausible wrong rules apart; the answer is computed by the three rules (in the check, from the docstring).
_LAYOUT_CASES = [
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), np.array([1.0, 1.5, 2.0, 2.5]), 2, 2.0, "map"),
    (np.array([[1, 3, 7], [7, 3, 1], [2, 2, 2], [5, 1, 9]]), np.array([1.0, 1.5, 2.0, 2.5]), 2, 2.0, "vmap"),
    (np.array([[4, 1], [1, 4], [2, 2], [3, 3]]), np.array([2.0, 2.2, 2.4, 2.6]), 4, 2.0, "map"),
    (np.array([[4, 1], [1, 4], [2, 2], [3, 3], [9, 1], [1, 1]]), np.array([1.0, 1.2, 1.4, 1.6, 1.8, 2.0]), 3, 1.0,
     "vmap"),
    (np.array([[6, 1, 1], [1, 1, 6]]), np.array([3.0, 4.0]), 1, 4.0, "vmap"),
    (np.array([[2, 2], [8, 8], [1, 1], [1, 1]]), np.array([1.0, 1.1, 1.2, 1.3]), 2, 8.0, "map"),
]


def _layout(steps: np.ndarray, step_seconds: np.ndarray, num_devices: int, cores: float, inner: str) -> float:
    blocks = np.split(steps, num_devices)
    if inner == "map":
        times = [b.sum() * step_seconds[0] for b in blocks]
    else:
        times = [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks]
    return float(max(max(times), sum(times) / cores))


def predict_sharded(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(steps, step_seconds, num_devices, cores, inner)``: the model's time of chains split over devices.

    ``steps`` are every chain's steps at every draw, axes ``(chain, draw)``, split into equal contiguous blocks,
    one a device; ``step_seconds[w - 1]`` is the time of one step of ``w`` chains vectorised together. A device
    runs its block one chain after another (``inner="map"``: every step at width 1) or in lockstep
    (``inner="vmap"``: at each draw its slowest chain's steps, at its block's width); the devices run at once on
    ``cores`` cores: ``max(max(t), sum(t) / cores)``. ``cases`` (default: a fixed table) lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `predict_sharded`, not the time it returns.")
    for steps, step_seconds, num_devices, cores, inner in cases if cases is not None else _LAYOUT_CASES:
        steps, step_seconds = np.asarray(steps), np.asarray(step_seconds, dtype=float)
        want = _layout(steps, step_seconds, num_devices, cores, inner)
        where = (f"predict_sharded(steps, step_seconds, {num_devices}, {cores:g}, {inner!r}) for "
                 f"steps={steps.tolist()}, step_seconds={step_seconds.tolist()}")
        got = as_float(call(fn, steps.copy(), step_seconds.copy(), num_devices, cores, inner, what=where), where)
        if np.isclose(got, want, rtol=1e-6):
            continue
        blocks = np.split(steps, num_devices)
        per = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
               else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
        if np.isclose(got, max(per), rtol=1e-6):
            raise AssertionError(f"{where} returned {got:g}, the longest device alone. The devices share {cores:g} "
                                 f"core(s): they finish no sooner than all their work over the cores, {sum(per) / cores:g}.")
        if np.isclose(got, sum(per) / cores, rtol=1e-6):
            raise AssertionError(f"{where} returned {got:g}, all the work over the cores. A device is one job that "
                                 "uses one core at least: no sooner than the longest device either.")
        if inner == "vmap":
            full = [b.max(axis=0).sum() * step_seconds[len(steps) - 1] for b in blocks]
            if np.isclose(got, max(max(full), sum(full) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: a device's lockstep step has the width of its own "
                                     "block, not of all the chains.")
            summed = [b.sum() * step_seconds[len(b) - 1] for b in blocks]
            if np.isclose(got, max(max(summed), sum(summed) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: in lockstep a device takes, at each draw, as many "
                                     "steps as its slowest chain (the maximum over axis 0), not all its chains' steps.")
            swapped = [b.max(axis=1).sum() * step_seconds[len(b) - 1] for b in blocks]
            if np.isclose(got, max(max(swapped), sum(swapped) / cores), rtol=1e-6):
                raise AssertionError(f"{where} returned {got:g}: the maximum was taken over draws. The axes are "
                                     "(chain, draw): a lockstep draw waits for the slowest chain, axis 0.")
        raise AssertionError(f"{where} returned {got:g}; expected {want:g}.")
    passed("predict_sharded")


# Trace events of device threads: each case tells one plausible wrong rule apart (the longest single event, the
# most frequent operation, the first thread alone).
_TRACE_CASES = [
    [{"name": "fusion.1", "dur": 5.0, "tid": 1}, {"name": "sort.2", "dur": 30.0, "tid": 1},
     {"name": "fusion.1", "dur": 5.0, "tid": 1}, {"name": "fusion.1", "dur": 5.0, "tid": 2},
     {"name": "all-reduce.3", "dur": 2.0, "tid": 2}, {"name": "sort.2", "dur": 29.0, "tid": 2},
     {"name": "fusion.1", "dur": 6.0, "tid": 2}],
    [{"name": "dot.4", "dur": 50.0, "tid": 1}, {"name": "exp.5", "dur": 12.0, "tid": 1},
     {"name": "exp.5", "dur": 12.0, "tid": 1}, {"name": "exp.5", "dur": 12.0, "tid": 2},
     {"name": "exp.5", "dur": 12.0, "tid": 2}, {"name": "exp.5", "dur": 12.0, "tid": 2}],
    [{"name": "Rendezvous", "dur": 10.0, "tid": 1}, {"name": "psum.1", "dur": 4.0, "tid": 1},
     {"name": "fusion.9", "dur": 1.0, "tid": 1}, {"name": "psum.1", "dur": 40.0, "tid": 2},
     {"name": "Rendezvous", "dur": 30.0, "tid": 2}, {"name": "fusion.9", "dur": 1.0, "tid": 2},
     {"name": "fusion.9", "dur": 1.0, "tid": 2}],
]


def _heaviest(events: Sequence[dict]) -> str:
    totals: dict[str, float] = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return max(totals, key=totals.get)


def bottleneck(fn: Callable[..., Any], cases: Sequence[Sequence[dict]] | None = None) -> None:
    """Check ``fn(events)``: the name of the operation whose trace events add up to the most time.

    ``events`` are a trace's complete events of any number of device threads, dicts with at least ``"name"`` and
    ``"dur"`` (µs). The answer sums the durations by name over every thread and returns the largest.
    ``cases`` (default: a fixed table) lists event lists whose largest total is unique.
    """
    expect(callable(fn), "Pass your function itself, `bottleneck`, not the name it returns.")
    for events in cases if cases is not None else _TRACE_CASES:
        events = [dict(e) for e in events]
        want = _heaviest(events)
        where = f"bottleneck(events) for {len(events)} events named {sorted({e['name'] for e in events})}"
        got = call(fn, [dict(e) for e in events], what=where)
        expect(isinstance(got, str), f"{where} returned {got!r}; return the operation's name, a string.")
        if got == want:
            continue
        names = {e["name"] for e in events}
        expect(got in names, f"{where} returned {got!r}, which is no event's name; return one of {sorted(names)}.")
        if got == max(events, key=lambda e: e["dur"])["name"]:
            raise AssertionError(f"{where} returned {got!r}, the longest single event. Add each operation's events "
                                 f"up first: {want!r} takes more time in all.")
        counts = {n: sum(e["name"] == n for e in events) for n in names}
        if counts[got] == max(counts.values()):
            raise AssertionError(f"{where} returned {got!r}, the most frequent operation. Weigh each event by its "
                                 f"duration (\"dur\"): {want!r} takes more time in all.")
        first = events[0].get("tid")
        if got == _heaviest([e for e in events if e.get("tid") == first]):
            raise AssertionError(f"{where} returned {got!r}, the heaviest on one thread only. Count the events of "
                                 f"every thread: {want!r} takes more time in all.")
        raise AssertionError(f"{where} returned {got!r}; expected {want!r}.")
    passed("bottleneck")
