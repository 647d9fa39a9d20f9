"""The exercise ``ex-profiling-bottleneck`` of the chapter ``chapters/getting_started/profiling.md``: its check, :func:`bottleneck`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from parallel_mcmc.exercises.common import call, expect, expect_type, passed

__all__ = ["bottleneck", "WRONG_ANSWERS"]


# Trace events of device threads: each case tells one plausible wrong rule apart (the longest single event, the
# most frequent operation, the first thread alone).
CASES = [
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

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ bottleneck: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` names another operation than the costliest one.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a string (an event, a total, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `bottleneck`, not the name it returns (got "
                              f"{type(fn).__name__}).")
    for events in cases if cases is not None else CASES:
        events = [dict(e) for e in events]
        want = _heaviest(events)
        where = f"bottleneck(events) for {len(events)} events named {sorted({e['name'] for e in events})}"
        got = call(fn, [dict(e) for e in events], what=where)
        expect_type(isinstance(got, str), f"{where} returned {got!r} ({type(got).__name__}); return the "
                                          "operation's name, a string (the event's \"name\", not the event or "
                                          "its total).")
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


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the longest single event',
     lambda right: lambda ev: max(ev, key=lambda e: e["dur"])["name"] if right(ev) != max(ev, key=lambda e: e["dur"])["name"] else "no such op",
     "longest single|no event's name"),
    ('a name no event has',
     lambda right: lambda ev: "no such op",
     "no event's name"),
]
