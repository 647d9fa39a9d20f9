"""The exercise ``ex-chains-faster-method`` of the chapter ``chapters/parallel_chains/many_short_chains.md``: its check, :func:`faster_method`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from parallel_mcmc.measure.timing import Timing
from parallel_mcmc.exercises.common import expect, expect_type, passed

__all__ = ["faster_method", "WRONG_ANSWERS"]


def faster_method(choice: Any, timings: Mapping[str, Any]) -> None:
    """Check ``choice`` against ``timings``: a dict of two :class:`~parallel_mcmc.measure.Timing` by method name.

    Parameters
    ----------
    choice, timings
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ faster method (...): correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``timings`` are not two timings, or ``choice`` is not the faster method.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``timings`` is not a dict of :class:`~parallel_mcmc.measure.Timing`, or ``choice`` is not a string.
    """
    expect_type(
        isinstance(timings, Mapping),
        f"timings must be a dict of two entries, method name -> Timing; got {type(timings).__name__}.",
    )
    expect(
        len(timings) == 2,
        f"timings must be a dict with exactly two entries, one Timing per method you compared; it has {len(timings)}.",
    )
    for name, t in timings.items():
        expect_type(
            isinstance(t, Timing),
            f"timings[{name!r}] is a {type(t).__name__}; measure it with time_call (or timed) so compilation is left out.",
        )
        expect(len(t.times) >= 3, f"timings[{name!r}] has {len(t.times)} repeat(s); take at least 3 and compare medians.")
    names = sorted(map(str, timings))
    expect_type(
        isinstance(choice, str),
        f"choice must be the name of a method, a string, one of {names}; got {type(choice).__name__}"
        + (" (a Timing: pass its name, the key in timings)." if isinstance(choice, Timing) else "."),
    )
    expect(choice in timings, f"choice must be one of the names in timings, {names}; got {choice!r}.")
    fastest = min(timings, key=lambda n: timings[n].median)
    expect(
        choice == fastest,
        f"You chose {choice!r}, but your own measurements say {fastest!r} is faster "
        f"({timings[fastest].median:.3f} s against {timings[choice].median:.3f} s, medians).",
    )
    passed(f"faster method ({choice})")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
