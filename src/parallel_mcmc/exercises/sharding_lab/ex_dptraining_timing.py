"""The exercise ``ex-dptraining-timing`` of the chapter ``chapters/sharding_lab/data_parallel_training.md``: its check, :func:`timing_comparison`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from parallel_mcmc._validate import is_number
from parallel_mcmc.devices import physical_cores
from parallel_mcmc.measure.model import split_call_time
from parallel_mcmc.measure.timing import Speedup, Timing
from parallel_mcmc.exercises.common import WrongType, expect, expect_type, passed, check_rows_sharded
from ._shared import shown

__all__ = ["timing_comparison", "WRONG_ANSWERS"]


#: The pieces of the page's model, by the names the exercise gives them.
PIECES = {"slice": "one device on the rows of one slice (rows / devices)", "row": "one device on one row",
          "fixed": "one row per device over all the devices"}

#: How far an ideal may be from the model's: the same timings give the same number, so this only allows for
#: rounding and a reading of the cores busy a few percent off the slice's own.
IDEAL_TOLERANCE = 0.05


def model_ideal(baseline: Timing, pieces: Mapping[str, Timing], num_devices: int, cores: float) -> float:
    """The page's model's ideal: the baseline's fastest call over ``split_call_time`` of a slice's work (the slice
    less a one-row call), the devices, the cores, the fixed cost of the devices and the cores a slice keeps busy."""
    work = max(pieces["slice"].best - pieces["row"].best, 0.0)
    return baseline.best / split_call_time(work, num_devices, cores, pieces["fixed"].best,
                                           cores_busy=pieces["slice"].cores_busy)


def _near(got: float, want: float, tolerance: float = IDEAL_TOLERANCE) -> bool:
    return abs(got - want) <= tolerance * abs(want)


def timing_comparison(result: Any, pieces: Any, x_sh: Any) -> None:
    """A :class:`~parallel_mcmc.measure.Speedup` of the sharded gradient whose ideal is the page's model's own ratio,
    the fixed cost of a call over the devices included.

    The model predicts the one-device call by its fastest repeat and the call over ``num_devices`` devices by
    ``split_call_time(work, num_devices, cores, fixed, cores_busy)``: the fixed cost (``pieces["fixed"]``, one row
    on each device), then the slices at once, sharing the cores, each doing ``pieces["slice"]`` less a one-row call
    (``pieces["row"]``) and keeping ``pieces["slice"].cores_busy`` cores busy. Every piece at its fastest repeat.
    The ideal is the one-device prediction over the split one. The bounds that leave out the fixed cost (the device
    count, the cores, the cores over the cores one device keeps busy) are refused, as is a measured ratio.

    Parameters
    ----------
    result, pieces, x_sh
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ timing comparison with the model's ideal ...x (a fixed cost of ... ms): correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the timings or their ideal are not what the exercise asks (the measured ratio, a bound without the fixed
        cost, the baseline and the candidate swapped), with the reason.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``result`` is not a ``Speedup`` (one ``Timing``, a number), ``pieces`` is not a dict of three
        ``Timing`` objects, or ``x_sh`` is not a ``jax.Array``.
    """
    if isinstance(result, Timing):
        raise WrongType("`grad_speedup` is one Timing; time the gradient on both layouts and combine the two with "
                        "parallel_mcmc.measure.speedup(baseline, candidate, ideal, reason).")
    expect_type(isinstance(result, Speedup),
                f"`grad_speedup` should be made with parallel_mcmc.measure.speedup(baseline, candidate, ideal, "
                f"reason), got {shown(result)}.")
    for name in ("baseline", "candidate"):
        expect_type(isinstance(getattr(result, name), Timing),
                    f"`grad_speedup.{name}` should be a Timing from time_call, got {shown(getattr(result, name))}.")
    expect_type(is_number(result.ideal), f"`grad_speedup.ideal` should be a number, the ideal speedup, got "
                                         f"{shown(result.ideal)}.")
    expect_type(isinstance(pieces, Mapping), f"`pieces` should be a dict {{'slice': ..., 'row': ..., 'fixed': ...}} "
                                             f"of Timings from time_call, got {shown(pieces)}.")
    missing = [k for k in PIECES if k not in pieces]
    expect_type(not missing, f"`pieces` has no {', '.join(repr(k) for k in missing)}; it needs "
                             + "; ".join(f"{k!r}: {what}" for k, what in PIECES.items()) + ".")
    for k in PIECES:
        expect_type(isinstance(pieces[k], Timing), f"`pieces[{k!r}]` should be a Timing from time_call, got "
                                                   f"{shown(pieces[k])}.")
    mesh, _ = check_rows_sharded(x_sh, "X_ex_sh")
    base, cand = result.baseline, result.candidate
    expect(base is not cand and base.times != cand.times,
           "The baseline and the candidate are the same timing; time the gradient once on one device and once on "
           "the split rows.")
    for label, t in (("the baseline", base), ("the candidate", cand), *((f"pieces[{k!r}]", pieces[k]) for k in PIECES)):
        expect(len(t.times) >= 3, f"Time at least 3 repeats of {label} (time_call(..., repeats=5)) so that its "
                                  "fastest repeat means something.")
    expect(len(pieces["slice"].cpu_times) == len(pieces["slice"].times),
           "`pieces['slice']` holds no CPU times, so nobody can tell how many cores a slice keeps busy: make it with "
           "time_call, whose Timing records them (its .cores_busy).")
    expect(pieces["row"].best <= pieces["slice"].best,
           "`pieces['row']` took longer than `pieces['slice']`: the one-row call is the slice's call without its "
           "work; are the two swapped?")
    k, cores, ideal = mesh.size, physical_cores(), float(result.ideal)
    right = model_ideal(base, pieces, k, cores)
    for measured in (base.median / cand.median, base.best / cand.best):
        if abs(ideal - measured) <= 1e-9 * measured:
            raise AssertionError(
                f"The ideal {ideal:.3g} is the measured speedup, one timing over the other. The ideal is the model's "
                f"prediction beside it: the one-device time over split_call_time(...) of the pieces, here {right:.3g}.")
    fixed_ms = 1e3 * pieces["fixed"].best
    if _near(ideal, right):
        passed(f"timing comparison with the model's ideal {ideal:.2f}x (a fixed cost of {fixed_ms:.2f} ms)")
        return
    _diagnose(ideal, right, base, cand, pieces, k, cores)


def _diagnose(ideal: float, right: float, base: Timing, cand: Timing, pieces: Mapping[str, Timing], k: int,
              cores: float) -> None:
    """Name the slip behind a wrong ideal, or give the right one."""
    work = max(pieces["slice"].best - pieces["row"].best, 0.0)
    busy = pieces["slice"].cores_busy
    fixed_ms = 1e3 * pieces["fixed"].best
    no_fixed = base.best / split_call_time(work, k, cores, 0.0, cores_busy=busy)
    if _near(ideal, 1 / right):
        raise AssertionError(f"The ideal {ideal:.3g} is upside down: it is the predicted {k}-device time over the "
                             f"one-device time. The ideal speedup is the one-device prediction over the {k}-device "
                             f"one, {right:.3g}.")
    if _near(ideal, cand.best / split_call_time(work, k, cores, pieces["fixed"].best, cores_busy=busy)):
        raise AssertionError(f"The baseline and the candidate are swapped: your ideal is right for the {k}-device "
                             "timing as the baseline. The baseline is the call on one device, the candidate the "
                             "call on the split rows: speedup(t_one, t_eight, ideal, reason).")
    without = {"the cost model with the fixed cost left out": no_fixed,
               "the cores over the cores a device keeps busy": min(k, cores / max(busy, 1.0)),
               "the cores, one a device": min(k, cores), "the device count": k}
    for what, value in without.items():
        if _near(ideal, value):
            raise AssertionError(
                f"The ideal {ideal:.3g} is {what}: it leaves out the fixed cost of a call over {k} devices "
                f"(pieces['fixed'], {fixed_ms:.2f} ms: the launches, the all-reduce and the join), which every "
                f"call pays whatever the data. With it the model gives {right:.3g}: split_call_time(work, {k}, "
                f"cores, fixed, cores_busy=...).")
    whole_slice = base.best / split_call_time(pieces["slice"].best, k, cores, pieces["fixed"].best, cores_busy=busy)
    if _near(ideal, whole_slice):
        raise AssertionError(
            f"The ideal {ideal:.3g} counts the slice's whole time as its work, but that time holds a call's own fixed "
            "cost too, which the fixed cost of the devices already counts: the work is pieces['slice'] less "
            f"pieces['row'] (each at its .best). The model gives {right:.3g}.")
    medians = base.median / split_call_time(max(pieces["slice"].median - pieces["row"].median, 0.0), k, cores,
                                            pieces["fixed"].median, cores_busy=busy)
    if _near(ideal, medians):
        raise AssertionError(f"The ideal {ideal:.3g} is built from the median repeats; the model takes each time at "
                             f"its fastest repeat (.best), its best case: {right:.3g}.")
    raise AssertionError(
        f"The ideal speedup is {ideal:.3g}, but the model gives {right:.3g}: the one-device call's fastest repeat "
        f"over split_call_time(work, {k}, {cores}, fixed, cores_busy=...), with the work pieces['slice'] less "
        f"pieces['row'] and the fixed cost pieces['fixed'] ({fixed_ms:.2f} ms), each at its .best.")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
