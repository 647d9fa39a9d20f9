"""One sound comparison: a ratio of timed runs on a log scale, with an interval from the repeats, and what it decides.

Two runs timed in the same interleaved rounds (:func:`parallel_mcmc.measure.time_interleaved`) give one ratio
per round. Their median over median is the measured ratio, the book's one definition of a speedup; how far the
rounds disagree is its uncertainty. :func:`ratio_interval` puts a bootstrap interval around the ratio, on a log
scale, where "twice as fast" and "half as fast" are the same distance from 1: it resamples the rounds (paired, so
that a slow spell of the machine that falls on both runs of a round cancels) and takes the middle ``level`` of the
resampled log ratios. With 3 rounds the interval is about the smallest and the largest round's ratio; more rounds
narrow it.

What an interval decides, and nothing else decides it:

- a speedup (:func:`decide`): ``"faster"`` when the whole interval is above 1, ``"slower"`` when it is below 1,
  and ``"cannot tell"`` only when it holds 1;
- a run against the model's prediction (:func:`against_model`, the ratio predicted over measured), with the
  interval widened by the calibration's own error (``tolerance``; the model's pieces are measurements too):
  ``"beats the model"`` when even the widened interval lies above 1 (faster than a best case: the model is wrong);
  ``"slower than the model"`` when it lies below 1 (a cost the model leaves out); ``"agrees"`` when the ratio
  itself is within the error of 1 and the widened interval holds 1; otherwise ``"cannot tell"``;
- a speedup against its ideal, the model's own ratio (:func:`against_ideal`): ``"reaches"``, ``"short of"``,
  ``"beyond"`` or ``"cannot tell"``, by the same rules.

The sentences that state these verdicts are written by :mod:`parallel_mcmc.measure.narrate`, from the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["LEVEL", "TOLERANCE", "Interval", "ratio_interval", "speedup_interval", "model_interval", "decide",
           "against_model", "against_ideal"]

#: The share of the resampled ratios an interval holds.
LEVEL = 0.95
#: The calibration's relative error: how far a prediction may be off because its pieces were measured too.
TOLERANCE = 0.25
_RESAMPLES = 4000


@dataclass(frozen=True)
class Interval:
    """A measured ratio with its interval, on a log scale.

    Parameters
    ----------
    estimate : float
        The ratio: median over median.
    low, high : float
        The interval's ends (``low <= estimate <= high``).
    rounds : int
        The rounds it was measured in.
    level : float
        The share of the resampled ratios the interval holds.
    """

    estimate: float
    low: float
    high: float
    rounds: int
    level: float = LEVEL

    def holds(self, value: float, tolerance: float = 0.0) -> bool:
        """Whether ``value`` lies in the interval widened by ``tolerance`` on either side (on the log scale).

        Parameters
        ----------
        value : float
            The ratio to look for (1 for "no difference", a prediction, an ideal).
        tolerance : float, optional
            The relative widening: the interval becomes ``[low / (1 + tolerance), high * (1 + tolerance)]``.

        Returns
        -------
        bool
            ``True`` when the widened interval holds ``value``.
        """
        widen = 1.0 + real_number("tolerance", tolerance, least=0)
        return self.low / widen <= value <= self.high * widen

    @property
    def half_width(self) -> float:
        """The factor the interval spans either way on the log scale (1.1 is about 10% either way)."""
        return math.sqrt(self.high / self.low)

    def __str__(self) -> str:
        return f"{self.estimate:.2f}x ({self.level:.0%} interval {self.low:.2f}x to {self.high:.2f}x, {self.rounds} rounds)"


def _positive(name: str, values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise ValueError(f"{name} is empty: pass the times of at least one round.")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"{name} must be positive, finite seconds, got {array.tolist()}.")
    return array


def ratio_interval(numerator: Sequence[float], denominator: Sequence[float], *, paired: bool = True,
                   level: float = LEVEL, seed: int = 0) -> Interval:
    """``median(numerator) / median(denominator)`` with a bootstrap interval on the log scale.

    Parameters
    ----------
    numerator, denominator : sequence of float
        Positive seconds (or predictions), one per round.
    paired : bool, optional
        Resample whole rounds, so that what slowed a round for both cancels (the runs must have been timed in
        the same rounds and have as many times). ``False`` resamples each side on its own.
    level : float, optional
        The share of the resampled log ratios the interval holds.
    seed : int, optional
        The resampling's seed: the same times give the same interval.

    Returns
    -------
    Interval
        The ratio and its interval, which always holds the ratio itself.

    Raises
    ------
    ValueError
        If a side is empty or not positive, ``level`` is not in (0, 1), or paired sides differ in length.
    """
    a, b = _positive("numerator", numerator), _positive("denominator", denominator)
    level = real_number("level", level, above=0)
    if level >= 1:
        raise ValueError(f"level must be below 1, got {level}.")
    estimate = float(np.median(a) / np.median(b))
    rng = np.random.default_rng(whole_number("seed", seed, 0))
    if paired:
        if a.size != b.size:
            raise ValueError(f"paired sides need one time per round each, got {a.size} and {b.size}: time them in "
                             "the same rounds, or pass paired=False.")
        picks = rng.integers(0, a.size, size=(_RESAMPLES, a.size))
        logs = np.log(np.median(a[picks], axis=1)) - np.log(np.median(b[picks], axis=1))
    else:
        logs = (np.log(np.median(a[rng.integers(0, a.size, size=(_RESAMPLES, a.size))], axis=1))
                - np.log(np.median(b[rng.integers(0, b.size, size=(_RESAMPLES, b.size))], axis=1)))
    low, high = np.exp(np.quantile(logs, [(1 - level) / 2, (1 + level) / 2]))
    return Interval(estimate, float(min(low, estimate)), float(max(high, estimate)), int(min(a.size, b.size)), level)


def speedup_interval(baseline: Sequence[float], candidate: Sequence[float], **kwargs) -> Interval:
    """The candidate's speedup over the baseline (the baseline's time over the candidate's), with its interval.

    Parameters
    ----------
    baseline, candidate : sequence of float
        Each run's seconds, one per round (a :class:`~parallel_mcmc.measure.Timing`'s ``times``).
    **kwargs
        Passed to :func:`ratio_interval`.

    Returns
    -------
    Interval
        Above 1 when the candidate is faster.
    """
    return ratio_interval(baseline, candidate, **kwargs)


def model_interval(measured: Sequence[float], predicted: float, **kwargs) -> Interval:
    """Predicted over measured time, with its interval: 1 when the model accounts for all of the run.

    Parameters
    ----------
    measured : sequence of float
        The run's seconds, one per round.
    predicted : float
        The model's seconds for the run.
    **kwargs
        Passed to :func:`ratio_interval`.

    Returns
    -------
    Interval
        Below 1 when the run was slower than the model's best case, above 1 when faster.
    """
    predicted = real_number("predicted", predicted, above=0)
    times = _positive("measured", measured)
    return ratio_interval([predicted] * times.size, times, **kwargs)


def decide(speedup: Interval) -> str:
    """``"faster"``, ``"slower"`` or ``"cannot tell"`` (only when the interval holds 1).

    Parameters
    ----------
    speedup : Interval
        A speedup, above 1 when the candidate is faster.

    Returns
    -------
    str
        The verdict.
    """
    if speedup.low > 1:
        return "faster"
    if speedup.high < 1:
        return "slower"
    return "cannot tell"


def against_model(ratio: Interval, tolerance: float = TOLERANCE) -> str:
    """What a predicted-over-measured ratio says of the model, within the calibration's error.

    Parameters
    ----------
    ratio : Interval
        Predicted over measured time (:func:`model_interval`).
    tolerance : float, optional
        The calibration's relative error (:data:`TOLERANCE`).

    Returns
    -------
    str
        ``"beats the model"`` when even the widened interval lies above 1 (the model is wrong),
        ``"slower than the model"`` when it lies below 1 (a cost the model leaves out), ``"agrees"`` when the ratio
        itself is within the error of 1 and the widened interval holds 1, and ``"cannot tell"`` otherwise.
    """
    widen = 1.0 + real_number("tolerance", tolerance, least=0)
    if ratio.low / widen > 1:
        return "beats the model"
    if ratio.high * widen < 1:
        return "slower than the model"
    return "agrees" if 1 / widen <= ratio.estimate <= widen else "cannot tell"


def against_ideal(speedup: Interval, ideal: float, tolerance: float = TOLERANCE) -> str:
    """What a measured speedup says beside its ideal, the model's own ratio, within the calibration's error.

    Parameters
    ----------
    speedup : Interval
        The measured speedup.
    ideal : float
        The model's ratio, the baseline's predicted time over the candidate's.
    tolerance : float, optional
        The calibration's relative error (:data:`TOLERANCE`).

    Returns
    -------
    str
        ``"beyond"`` when even the widened interval lies above the ideal (the model is wrong), ``"short of"`` when
        it lies below, ``"reaches"`` when the speedup itself is within the error of the ideal and the widened
        interval holds it, and ``"cannot tell"`` otherwise.
    """
    ideal = real_number("ideal", ideal, above=0)
    widen = 1.0 + real_number("tolerance", tolerance, least=0)
    if speedup.low / widen > ideal:
        return "beyond"
    if speedup.high * widen < ideal:
        return "short of"
    return "reaches" if ideal / widen <= speedup.estimate <= ideal * widen else "cannot tell"
