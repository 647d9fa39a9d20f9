"""The rules of the judge of timings: every threshold in one frozen dataclass, and what they say of one run."""

from __future__ import annotations

from dataclasses import dataclass

from parallel_mcmc._validate import real_number, whole_number
from parallel_mcmc.measure.prediction import Prediction


__all__ = ["STATUSES", "READINGS", "Rules", "RULES", "RunVerdict", "rate"]


#: A run's status under the rules (:func:`rate`).
STATUSES = ("agrees", "beats the model", "a cost missing", "far slower")


#: What a page says of a run (:meth:`Verdict.reading`): its status, with a slow run told apart by whether the
#: process had its cores. A page chooses its sentence from a dict with one entry for each.
READINGS = ("agrees", "beats the model", "slower, cores free", "slower, cores busy")


@dataclass(frozen=True)
class Rules:
    """Every threshold of a timing verdict (see the module's docstring for what each one means).

    Parameters
    ----------
    calibration_noise : float, optional
        How far above ``1 + spread`` a ratio may go before the model is called wrong.
    far_slower : float, optional
        The fastest repeat's ratio below which a run fails (with the cores free).
    flag_below : float, optional
        The fastest repeat's ratio below which the page names a missing cost.
    free_share : float, optional
        The share of the cores the process must get for the lower bound to count.
    tries : int, optional
        The most measurements before a failure stands.

    Raises
    ------
    ValueError
        If a threshold is out of range, or not ``far_slower < flag_below <= 1``.
    """

    calibration_noise: float = 0.25  #: how far above ``1 + spread`` a ratio may go before the model is called wrong
    far_slower: float = 0.5  #: the fastest repeat's ratio below which a run fails (with the cores free)
    flag_below: float = 0.8  #: the fastest repeat's ratio below which the page names a missing cost
    free_share: float = 0.85  #: the share of the cores the process must get for the lower bound to count
    tries: int = 3  #: the most measurements before a failure stands

    def __post_init__(self) -> None:
        real_number("calibration_noise", self.calibration_noise, least=0)
        real_number("far_slower", self.far_slower, above=0)
        real_number("flag_below", self.flag_below, above=0)
        real_number("free_share", self.free_share, above=0)
        whole_number("tries", self.tries, 1)
        if not self.far_slower < self.flag_below <= 1:
            raise ValueError(f"expected far_slower < flag_below <= 1, got {self.far_slower} and {self.flag_below}.")


#: The book's rules.
RULES = Rules()


@dataclass(frozen=True)
class RunVerdict:
    """What the rules say of one run.

    Parameters
    ----------
    name : str
        The name of the run.
    prediction : parallel_mcmc.measure.Prediction
        Its measured time beside the model's.
    status : str
        ``"agrees"``, ``"beats the model"``, ``"a cost missing"`` or ``"far slower"``.
    fails : bool
        Whether it is a failure.
    lower_bound_checked : bool
        Whether the lower bound (*far slower*) was applied.
    """

    name: str
    prediction: Prediction
    status: str
    fails: bool
    lower_bound_checked: bool

    @property
    def ratio(self) -> float:
        return self.prediction.ratio

    def __str__(self) -> str:
        p = self.prediction
        flag = "  FAILS" if self.fails else ""
        return (f"{self.name}: measured {_ms(p.measured.median)} (spread {p.spread:.0%}), predicted {_ms(p.predicted)}, "
                f"predicted/measured {p.ratio:.2f} (fastest repeat {p.fastest_ratio:.2f}): {self.status}{flag}")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def rate(name: str, prediction: Prediction, cores_free: bool, rules: Rules = RULES) -> RunVerdict:
    """Apply the rules to the run ``name``.

    Parameters
    ----------
    name, prediction
        As for :class:`RunVerdict`.
    cores_free : bool
        The process had its cores, so the lower bound counts.
    rules : parallel_mcmc.measure.Rules, optional
        The thresholds.

    Returns
    -------
    parallel_mcmc.measure.RunVerdict
        The run's status.

    Raises
    ------
    TypeError
        If ``prediction`` is not a :class:`~parallel_mcmc.measure.Prediction`.
    """
    if not isinstance(prediction, Prediction):
        raise TypeError(f"prediction must be a Prediction from costmodel.predict(), got {type(prediction).__name__}.")
    ratio, fastest, spread = prediction.ratio, prediction.fastest_ratio, prediction.spread
    if ratio > 1 + spread:
        return RunVerdict(name, prediction, "beats the model", ratio > 1 + spread + rules.calibration_noise, cores_free)
    if fastest < rules.far_slower:
        return RunVerdict(name, prediction, "far slower", cores_free, cores_free)
    if fastest < rules.flag_below:
        return RunVerdict(name, prediction, "a cost missing", False, cores_free)
    return RunVerdict(name, prediction, "agrees", False, cores_free)

