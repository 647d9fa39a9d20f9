"""The exercise ``ex-chainmethods-two-lengths`` of the chapter ``chapters/numpyro/chain_methods.md``: its check, :func:`split_compile`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc._validate import is_number
from parallel_mcmc.exercises.common import call, expect, expect_type, passed

__all__ = ["split_compile", "WRONG_ANSWERS"]


# (compile seconds, seconds per iteration, short length, long length)
CASES = [(3.0, 0.002, 1000, 3000), (7.5, 0.0005, 500, 2000), (0.8, 0.01, 200, 250), (12.0, 0.0001, 1500, 6000)]


def _pair(got: Any, where: str, what: str) -> tuple[float, float]:
    """A pair of numbers from a tuple, list or 1-d array of two (NumPy or JAX, any float width)."""
    try:
        items = list(got) if not isinstance(got, (str, bytes, dict)) else None
    except TypeError:
        items = None
    expect_type(
        items is not None and len(items) == 2 and all(is_number(v) for v in items),
        f"{where} returned {got!r} ({type(got).__name__}); return a pair of numbers ({what}).",
    )
    return float(items[0]), float(items[1])


def split_compile(fn: Callable[[float, int, float, int], Any],
                  cases: Sequence[tuple[float, float, int, int]] | None = None) -> None:
    """Check ``fn(wall_short, n_short, wall_long, n_long) -> (compile_seconds, seconds_per_iteration)``.

    ``cases`` (default: a fixed list) gives ``(compile seconds, seconds per iteration, short length, long length)``;
    the walls are made from them.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ split_compile: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn``'s answer differs from the model's on a case, with the case named.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a pair of numbers (one number, a dict).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `split_compile`, not the result of calling it (got "
                              f"{type(fn).__name__}).")
    for compile_s, per_it, n_short, n_long in cases if cases is not None else CASES:
        wall_short, wall_long = compile_s + per_it * n_short, compile_s + per_it * n_long
        where = f"split_compile({wall_short:.4f}, {n_short}, {wall_long:.4f}, {n_long})"
        got = call(fn, wall_short, n_short, wall_long, n_long, what=where)
        c, p = _pair(got, where, "compile_seconds, seconds_per_iteration")
        if np.isclose(c, per_it, rtol=1e-4) and np.isclose(p, compile_s, rtol=1e-4):
            raise AssertionError("The pair is the wrong way round: return (compile_seconds, seconds_per_iteration).")
        if np.isclose(p, wall_long / n_long, rtol=1e-4) or np.isclose(p, wall_short / n_short, rtol=1e-4):
            raise AssertionError(
                f"For runs of {wall_short:.2f} s ({n_short} iterations) and {wall_long:.2f} s ({n_long}) your time per "
                f"iteration is a wall time divided by its length, which still contains the compilation. Use the "
                f"difference of the two runs: compilation is the same in both and cancels."
            )
        swapped = (n_long - n_short) / (wall_long - wall_short)
        if np.isclose(p, swapped, rtol=1e-4) or np.isclose(p, -swapped, rtol=1e-4):
            raise AssertionError(
                f"For runs of {wall_short:.2f} s ({n_short} iterations) and {wall_long:.2f} s ({n_long}) you returned "
                f"{p:g} iterations per second, not seconds per iteration: the arguments are "
                "(wall_short, n_short, wall_long, n_long), times and lengths in that order."
            )
        # float32 (jnp) arithmetic on walls of a few seconds is good to about 1e-4 relative
        expect(
            np.isclose(p, per_it, rtol=1e-3, atol=1e-9),
            f"For runs of {wall_short:.4f} s ({n_short} iterations) and {wall_long:.4f} s ({n_long}) the time per "
            f"iteration is {per_it:g} s; you returned {p:g}.",
        )
        expect(
            np.isclose(c, compile_s, rtol=1e-3, atol=1e-6),
            f"For runs of {wall_short:.4f} s ({n_short} iterations) and {wall_long:.4f} s ({n_long}) the compilation "
            f"is {compile_s:g} s; you returned {c:g}. It is what is left of a run once its iterations are paid for.",
        )
    passed("split_compile")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
#: The check has no reference answer to derive them from (``right`` is None): each one computes its own.
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the time per iteration from the long run alone, compilation included',
     lambda right: lambda ws, ns, wl, nl: (0.0, wl / nl),
     'still contains the compilation'),
    ('the pair the wrong way round',
     lambda right: lambda ws, ns, wl, nl: ((wl - ws) / (nl - ns), ws - ns * (wl - ws) / (nl - ns)),
     'wrong way round'),
    ('iterations per second',
     lambda right: lambda ws, ns, wl, nl: (ws - ns * (wl - ws) / (nl - ns), (nl - ns) / (wl - ws)),
     'iterations per second'),
    ('the compilation from the long run with the short length',
     lambda right: lambda ws, ns, wl, nl: (wl - ns * (wl - ws) / (nl - ns), (wl - ws) / (nl - ns)),
     'the compilation\\s+is'),
]
