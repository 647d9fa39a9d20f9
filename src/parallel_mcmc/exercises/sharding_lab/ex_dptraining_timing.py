"""The exercise ``ex-dptraining-timing`` of the chapter ``chapters/sharding_lab/data_parallel_training.md``: its check, :func:`timing_comparison`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

from parallel_mcmc._validate import is_number
from parallel_mcmc.devices import physical_cores
from parallel_mcmc.measure.timing import Speedup, Timing
from parallel_mcmc.exercises.common import WrongType, expect, expect_type, passed, check_rows_sharded
from ._shared import require_array, shown

__all__ = ["timing_comparison", "WRONG_ANSWERS"]


#: How far an ideal may be from the one the check derives: a separate reading of the cores busy, or the
#: gradient's reading in place of the whole step's, differs from the baseline's own by some percent.
IDEAL_TOLERANCE = 0.15


def timing_comparison(result: Any, x_sh: Any) -> None:
    """A :class:`~parallel_mcmc.measure.Speedup` of the sharded training step, with the ideal of this machine.

    The forced CPU devices share the machine's physical cores, and one device
    already keeps ``result.baseline.cores_busy`` of them busy with XLA's
    threads. The cost model's best case for ``num_devices`` devices is then
    the whole step's work spread over all the cores: an ideal of
    ``min(num_devices, cores / max(busy, 1))``. ``min(num_devices, cores)``,
    which counts one core per device, is right only where one device keeps a
    single core busy; it is refused where the two differ by more than
    ``IDEAL_TOLERANCE``.

    Parameters
    ----------
    result, x_sh
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ timing comparison with ideal ...x (one device kept ... of ... cores busy): correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the timings or their ideal are not what the exercise asks (the baseline and the candidate swapped,
        say), with the reason.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``result`` is not a ``Speedup`` (one ``Timing``, a number) or ``x_sh`` is not a ``jax.Array``.
    """
    if isinstance(result, Timing):
        raise WrongType("`result` is one Timing; time the step on both data and combine the two with "
                        "parallel_mcmc.measure.speedup(baseline, candidate, ideal, reason).")
    expect_type(
        isinstance(result, Speedup),
        f"`result` should be made with parallel_mcmc.measure.speedup(baseline, candidate, ideal, reason), got "
        f"{shown(result)}.",
    )
    for name in ("baseline", "candidate"):
        expect_type(isinstance(getattr(result, name), Timing),
                    f"`result.{name}` should be a Timing from time_call, got {shown(getattr(result, name))}.")
    expect_type(is_number(result.ideal), f"`result.ideal` should be a number, the ideal speedup, got "
                                         f"{shown(result.ideal)}.")
    require_array(x_sh, "x_sh")
    check_rows_sharded(x_sh, "x_sh")
    expect(
        result.baseline is not result.candidate and result.baseline.times != result.candidate.times,
        "The baseline and the candidate are the same timing; time the step once on unsharded and once on "
        "sharded data.",
    )
    expect(
        len(result.baseline.times) >= 3 and len(result.candidate.times) >= 3,
        "Time at least 3 repeats of each (time_call(..., repeats=5)) so that the median means something.",
    )
    expect(
        len(result.baseline.cpu_times) == len(result.baseline.times),
        "The baseline holds no CPU times, so nobody can tell how many cores one device kept busy: make it "
        "with time_call, whose Timing records them (its .cores_busy).",
    )
    num_devices = len(x_sh.sharding.device_set)
    cores = physical_cores()
    busy = result.baseline.cores_busy
    # The cost model's best case: the one-device step's work, busy x its time in core-seconds, over all the
    # cores at once, and never more than one device's share of the work per device.
    ideal = min(num_devices, cores / max(busy, 1.0))
    if abs(result.ideal - ideal) <= IDEAL_TOLERANCE * ideal:
        passed(f"timing comparison with ideal {result.ideal:.2f}x (one device kept {busy:.2f} of {cores} cores busy)")
        return
    if len(result.candidate.cpu_times) == len(result.candidate.times):
        # the sharded step keeps more cores busy than the one-device step; an ideal right with the two swapped back
        # means that they are swapped
        swapped = min(num_devices, cores / max(result.candidate.cores_busy, 1.0))
        if result.candidate.cores_busy < busy and abs(result.ideal - swapped) <= IDEAL_TOLERANCE * swapped:
            raise AssertionError(
                f"The baseline and the candidate are swapped: the baseline kept {busy:.2f} cores busy and the "
                f"candidate {result.candidate.cores_busy:.2f}, and your ideal {result.ideal:.3g} is right for the "
                "candidate as the baseline. The baseline is the step on one device (the unsharded data), the "
                "candidate the step on the sharded data: speedup(t_one, t_sharded, ideal, reason).")
    one_core_each = min(num_devices, cores)
    if abs(result.ideal - one_core_each) < 1e-6:
        raise AssertionError(
            f"The ideal {result.ideal:g} = min(devices, cores) counts one core for each device, but the one-device "
            f"step already kept {busy:.2f} of the {cores} cores busy (result.baseline.cores_busy): XLA's threads "
            f"used them. {num_devices} devices share the same {cores} cores, so at best they spread the same "
            f"work over all of them: cores / busy = {cores / max(busy, 1.0):.2f}, capped at the device count."
        )
    if abs(result.ideal - num_devices) < 1e-6:
        raise AssertionError(
            f"The ideal {result.ideal:g} is the device count, but {num_devices} forced CPU devices share {cores} "
            "physical core(s), and one device already keeps some of them busy (result.baseline.cores_busy): "
            "work out how many cores the devices can add."
        )
    raise AssertionError(
        f"The ideal speedup is {result.ideal:.3g}, but on this machine it is about {ideal:.2f}: one device kept "
        f"{busy:.2f} of the {cores} cores busy (result.baseline.cores_busy), and {num_devices} devices share "
        "the same cores."
    )


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
