"""A measured time beside the cost model's prediction of it, and where a predicted speedup first rises above 1."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from parallel_mcmc._validate import real_number
from parallel_mcmc.measure.timing import Timing


__all__ = ["Prediction", "predict", "crossover"]


@dataclass(frozen=True)
class Prediction:
    """A measured time beside the cost model's prediction of it.

    ``ratio`` is predicted over measured time: 1 means the model accounts for
    all of it, below 1 that a cost is missing from the model (name and measure
    it), above 1 that the measurement beat the model's best case.

    Parameters
    ----------
    measured : parallel_mcmc.measure.Timing
        The measured time.
    predicted : float
        The model's predicted seconds.
    reason : str, optional
        What the prediction counts.
    """

    measured: Timing
    predicted: float
    reason: str = ""

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured.median

    @property
    def fastest_ratio(self) -> float:
        """Predicted over the fastest measured repeat, what a lower bound ("not far slower than the model")
        checks, since a repeat slowed by another program says nothing about the method, and a method
        that is truly slow is slow in every repeat."""
        return self.predicted / self.measured.best

    @property
    def spread(self) -> float:
        """The relative spread of the measured repeats, (max - min) / median."""
        return self.measured.spread / self.measured.median

    def __str__(self) -> str:
        parts = [
            f"measured {self.measured.median * 1e3:.1f} ms (spread {self.spread:.0%})",
            f"predicted {self.predicted * 1e3:.1f} ms" + (f" ({self.reason})" if self.reason else ""),
            f"predicted/measured {self.ratio:.2f}",
        ]
        return f"{self.measured.label}: " + ", ".join(parts)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def predict(measured: Timing, predicted: float, reason: str = "") -> Prediction:
    """Put a :class:`~parallel_mcmc.measure.Timing` beside the model's predicted seconds.

    Parameters
    ----------
    measured : parallel_mcmc.measure.Timing
        The measured time (from :func:`~parallel_mcmc.measure.time_call`).
    predicted : float
        The model's predicted seconds (positive).
    reason : str, optional
        What the prediction counts.

    Returns
    -------
    parallel_mcmc.measure.Prediction
        The two side by side.

    Raises
    ------
    TypeError
        If ``measured`` is not a :class:`~parallel_mcmc.measure.Timing`.
    ValueError
        If ``predicted`` is not a positive number.
    """
    if not isinstance(measured, Timing):
        raise TypeError(f"measured must be a Timing from time_call(), got {type(measured).__name__}.")
    return Prediction(measured, real_number("predicted", predicted, above=0), reason)


def crossover(sizes: Sequence[float], speedups: Sequence[float]) -> float | None:
    """The size at which a speedup first rises above 1, from a sweep.

    Between the two sizes where it first goes from at most 1 to above 1, the
    crossing is interpolated linearly in log size and log speedup (a sweep on
    a log grid).

    Parameters
    ----------
    sizes : sequence of float
        The sizes of the sweep (increasing).
    speedups : sequence of float
        ``speedups[i]`` measured or predicted at ``sizes[i]``.

    Returns
    -------
    float or None
        The crossover; ``sizes[0]`` when the speedup is above 1 from the
        first size (the crossover lies at or below it), ``None`` when it is above
        1 at none of them.

    Raises
    ------
    ValueError
        If the sequences are empty or of unequal length, ``sizes`` is not increasing, or a value is not positive.
    """
    x = [real_number("size", v, above=0) for v in sizes]
    s = [real_number("speedup", v, above=0) for v in speedups]
    if len(x) != len(s) or not x:
        raise ValueError("sizes and speedups must be non-empty and of equal length.")
    if any(b <= a for a, b in zip(x, x[1:])):
        raise ValueError(f"sizes must be increasing, got {list(sizes)}.")
    if s[0] > 1:
        return x[0]
    for (x0, s0), (x1, s1) in zip(zip(x, s), zip(x[1:], s[1:])):
        if s0 <= 1 < s1:
            t = -math.log(s0) / (math.log(s1) - math.log(s0))
            return float(math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0))))
    return None

