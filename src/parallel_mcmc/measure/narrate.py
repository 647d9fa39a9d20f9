"""The one narrator: every sentence the book states about a measurement, written from its numbers.

A page never chooses its own words for a timing. It measures, and asks this
module for the sentence; the sentence always carries the number it speaks of,
and its interval where the run did not decide. The verdict words come from
:mod:`parallel_mcmc.measure.compare` alone:

- a speedup is *faster* or *slower* only when its whole interval lies on that side of 1; otherwise the run
  *cannot tell* the two apart, and the sentence says so with the interval;
- a run *agrees* with the model only when its ratio is within the calibration's error of 1 and its interval,
  widened by that error, holds 1; where the run cannot tell, the sentence says so;
- a speedup *reaches* its ideal by the same rule.

``tests/helper/test_narrate.py`` draws numbers at random (hypothesis) and checks
that no sentence contradicts them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parallel_mcmc.measure.compare import (TOLERANCE, Interval, against_ideal, against_model, decide, model_interval,
                                           speedup_interval)

__all__ = ["seconds", "speedup_sentence", "model_sentence", "runs_sentence", "TimedPair", "timed_pair",
           "crossover_text", "cap_sentence"]


def seconds(value: float) -> str:
    """A duration as the book prints it: ``"850 µs"``, ``"12.3 ms"`` or ``"1.25 s"``.

    Parameters
    ----------
    value : float
        Seconds.

    Returns
    -------
    str
        The duration with its unit.
    """
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def _interval(i: Interval, unit: str = "x") -> str:
    return f"{i.level:.0%} interval {i.low:.2f}{unit} to {i.high:.2f}{unit} over {i.rounds} rounds"


def speedup_sentence(candidate: str, baseline: str, speedup: Interval, ideal: float | None = None,
                     tolerance: float = TOLERANCE) -> str:
    """The sentence that states a measured speedup, and its ideal when one is given.

    Parameters
    ----------
    candidate, baseline : str
        What was compared: the candidate's speedup is the baseline's time over its own.
    speedup : Interval
        The measured speedup (:func:`parallel_mcmc.measure.speedup_interval`).
    ideal : float, optional
        The model's ratio for the same pair; its clause is left out when ``None``.
    tolerance : float, optional
        The calibration's relative error, within which the ideal counts as reached.

    Returns
    -------
    str
        One or two sentences, each with its numbers.
    """
    x = speedup.estimate
    verdict = decide(speedup)
    if verdict == "faster":
        text = f"{candidate} against {baseline}: faster, {x:.2f}x ({_interval(speedup)})."
    elif verdict == "slower":
        text = f"{candidate} against {baseline}: slower, {x:.2f}x, {1 / x:.2f} times the time ({_interval(speedup)})."
    else:
        text = (f"{candidate} against {baseline}: this run cannot tell them apart, {x:.2f}x, with a "
                f"{_interval(speedup)}, which holds 1.")
    if ideal is None:
        return text
    reach = against_ideal(speedup, ideal, tolerance)
    if reach == "reaches":
        clause = f"the run reaches it, within the calibration's {tolerance:.0%}"
    elif reach == "short of":
        clause = "the run falls short of it: some cost the model leaves out"
    elif reach == "beyond":
        clause = "the run goes beyond it, so the model misses something"
    else:
        clause = f"this run cannot tell whether it reaches it within the calibration's {tolerance:.0%}"
    return f"{text} The model's ideal is {ideal:.2f}x; {clause}."


def model_sentence(run: str, measured: float, predicted: float, ratio: Interval,
                   tolerance: float = TOLERANCE, best_case: str | None = None) -> str:
    """The sentence that puts a run's measured time beside the model's prediction.

    Parameters
    ----------
    run : str
        The run's name.
    measured : float
        Its median seconds.
    predicted : float
        The model's seconds.
    ratio : Interval
        Predicted over measured time (:func:`parallel_mcmc.measure.model_interval`).
    tolerance : float, optional
        The calibration's relative error.
    best_case : str or None, optional
        Where the model counts the run at its best case only, what that best case leaves out (the experiment's
        ``best_case_only`` reason); a run slower than the model is then said to lose its time there.

    Returns
    -------
    str
        One sentence with both times and the ratio's interval.
    """
    head = (f"{run} took {seconds(measured)} against the model's {seconds(predicted)}: a ratio of "
            f"{ratio.estimate:.2f} ({_interval(ratio, '')})")
    verdict = against_model(ratio, tolerance)
    if verdict == "agrees":
        return f"{head}, so the model accounts for the run within its calibration error of {tolerance:.0%}."
    if verdict == "slower than the model":
        if best_case:
            return f"{head}, slower than the model, which gives this run its best case only: {best_case}."
        return f"{head}, slower than the model's best case: a cost the model leaves out took the rest."
    if verdict == "beats the model":
        return f"{head}, faster than the model's best case can be: the model is wrong."
    return f"{head}: this run cannot tell whether the model accounts for it within its calibration error of {tolerance:.0%}."


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def runs_sentence(ratios: dict[str, Interval], tolerance: float = TOLERANCE, cores_got: float | None = None,
                  cores: int | None = None) -> str:
    """The sentence on all the runs of one measurement beside the model, by the rule of :func:`model_sentence`.

    Parameters
    ----------
    ratios : dict of str to Interval
        Each run's predicted over measured time (:func:`parallel_mcmc.measure.model_interval`).
    tolerance : float, optional
        The calibration's relative error.
    cores_got, cores : float and int, optional
        Given when other work on the machine took cores during the measurement: the cores this process got and
        the cores it asked for, which a last clause states.

    Returns
    -------
    str
        Sentences that give the ratios' range and name the runs in each verdict; "accounts for every run" only
        when every run agrees.

    Raises
    ------
    ValueError
        If ``ratios`` is empty.
    """
    if not ratios:
        raise ValueError("ratios is empty: give each run's predicted/measured Interval.")
    verdicts = {name: against_model(ratio, tolerance) for name, ratio in ratios.items()}
    estimates = [ratio.estimate for ratio in ratios.values()]
    parts = [f"Predicted/measured ran from {min(estimates):.2f} to {max(estimates):.2f}."]
    said = {"beats the model": "Faster than the model's best case can be: {}; the model is wrong there.",
            "slower than the model": "Slower than the model's best case: {}; a cost the model leaves out.",
            "cannot tell": "This run cannot tell whether the model accounts for {} within its {:.0%}."}
    for verdict, words in said.items():
        names = [name for name, v in verdicts.items() if v == verdict]
        if names:
            parts.append(words.format(_names(names), tolerance))
    if all(v == "agrees" for v in verdicts.values()):
        parts.append(f"The model accounts for every run within its calibration error of {tolerance:.0%}.")
    if cores_got is not None and cores is not None:
        parts.append(f"Other work on the machine left this process {cores_got:.1f} of its {cores} cores.")
    return " ".join(parts)


@dataclass(frozen=True)
class TimedPair:
    """Two timed runs side by side, as :func:`timed_pair` judged and narrated them.

    Parameters
    ----------
    seconds : float
        The candidate's median seconds.
    predicted : float
        The model's seconds for the candidate.
    speedup : Interval
        The baseline's time over the candidate's, with its interval.
    ideal : float
        The model's ratio for the same pair.
    says : str
        The narrator's sentence on the speedup and its ideal.
    model : str
        The narrator's sentence on the candidate beside the model.
    """

    seconds: float
    predicted: float
    speedup: Interval
    ideal: float
    says: str
    model: str


def timed_pair(candidate: str, baseline: str, candidate_times: Sequence[float], baseline_times: Sequence[float],
               predicted: float, baseline_predicted: float, paired: bool = True,
               tolerance: float = TOLERANCE) -> TimedPair:
    """Judge and narrate two runs timed outside :func:`~parallel_mcmc.measure.measure`, beside the model.

    For runs that another process timed (a pool under ``mpiexec``, a job): the speedup's interval from the
    repeats, the model's ratio as its ideal, and the narrator's two sentences.

    Parameters
    ----------
    candidate, baseline : str
        The two runs' names, as the sentences give them.
    candidate_times, baseline_times : sequence of float
        Each run's repeats, in seconds.
    predicted, baseline_predicted : float
        The model's seconds for each run.
    paired : bool, optional
        Whether the i-th repeats of the two runs were timed together (interleaved in one process); runs timed
        in other processes are not.
    tolerance : float, optional
        The calibration's relative error.

    Returns
    -------
    TimedPair
        The figures and the sentences.

    Raises
    ------
    ValueError
        If a time or a prediction is not positive (:func:`~parallel_mcmc.measure.speedup_interval`).
    """
    speedup = speedup_interval(baseline_times, candidate_times, paired=paired)
    ideal = baseline_predicted / predicted
    measured = float(np.median(np.asarray(candidate_times, dtype=float)))
    return TimedPair(measured, predicted, speedup, ideal, speedup_sentence(candidate, baseline, speedup, ideal, tolerance),
                     model_sentence(candidate, measured, predicted, model_interval(candidate_times, predicted), tolerance))


def crossover_text(crossover: Any, sizes: Sequence[Any], size: Callable[[Any], str], measured: bool = False) -> str:
    """Where a sweep starts to pay, as a phrase for a table or a sentence, with its size.

    Parameters
    ----------
    crossover : Any
        The first size at which the candidate is faster (:meth:`~parallel_mcmc.measure.Result.first_faster`,
        :func:`~parallel_mcmc.measure.crossover`), or None where there is none.
    sizes : sequence
        The sizes the sweep covered (or the model's grid), increasing.
    size : callable
        Writes a size with its unit (``lambda c: f"{c * 1e6:.0f} µs a log-probability"``).
    measured : bool, optional
        A measured crossover (the first size whose speedup interval lies above 1) rather than the model's.

    Returns
    -------
    str
        ``"at about 200 µs a log-probability"``, ``"at 50 µs a log-probability or below"`` (it pays from the
        first size), ``"beyond every size measured here"``; measured: ``"from 200 µs ..., its interval above 1"``
        or ``"at none of the sizes measured"``.
    """
    if measured:
        return f"from {size(crossover)}, its interval above 1" if crossover is not None else "at none of the sizes measured"
    if crossover is None:
        return "beyond every size measured here"
    if crossover == sizes[0]:  # it pays from the first size: the crossover lies there or below
        return f"at {size(crossover)} or below"
    return f"at about {size(crossover)}"


def cap_sentence(steps: Any, cap: int) -> str:
    """What NUTS's tree-depth cap did to a run of chains, and what lockstep then pays for, with the shares.

    Parameters
    ----------
    steps : array_like
        Integration steps per draw, shape (chains, draws) (:func:`~parallel_mcmc.measure.integration_steps`).
    cap : int
        The most steps a trajectory can take (``2 ** max_num_doublings - 1``).

    Returns
    -------
    str
        The share of draws at the cap, the share of draws in which every chain took the same steps, and the reading
        that follows: a cap that cuts nearly every trajectory (over 90% of the draws) is a max-treedepth problem,
        not variation between chains; one that cuts many (over 10%) leaves lockstep to pay for the other draws;
        otherwise lockstep pays for the chains' different trajectory lengths.

    Raises
    ------
    ValueError
        If ``steps`` is not two-dimensional or holds a trajectory longer than ``cap``.
    """
    steps = np.asarray(steps)
    if steps.ndim != 2 or steps.size == 0:
        raise ValueError(f"steps must have shape (chains, draws), got {steps.shape}.")
    if steps.max() > cap:
        raise ValueError(f"a trajectory took {int(steps.max())} steps, more than the cap of {cap}: is the cap right?")
    at_cap = float((steps == cap).mean())
    equal = float((steps == steps.max(axis=0)).all(axis=0).mean())
    if at_cap > 0.9:
        reading = ("with a step this small nearly every trajectory is cut by the cap, whatever the chain: that is a "
                   "max-treedepth problem, in which the chains hardly wait for each other, not variation between chains")
    elif at_cap > 0.1:
        reading = ("the cap cuts many trajectories, and a draw where every chain reaches it costs the same in all; "
                   "what lockstep pays for comes from the other draws, where one chain turned back before another")
    else:
        reading = "the cap is rarely reached, so what lockstep pays for is the chains' different trajectory lengths"
    return (f"{at_cap:.0%} of all draws ended at the tree-depth cap of {cap} steps, and the chains took the same "
            f"number of steps in {equal:.0%} of the draws: {reading}.")
