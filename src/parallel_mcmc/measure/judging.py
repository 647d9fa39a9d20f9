"""The one judge of the book's timings: every threshold, the verdicts, and re-measuring before a failure.

A timed page measures its runs *and* the calibration of their cost model in
one function that returns a :class:`~parallel_mcmc.measure.Prediction` per
run, and hands that function to :func:`judge`. The judge reads how many cores
the process can get before and after, applies the rules below to every run,
and, if a rule fails, measures again (runs and calibration together, so a
slow spell cannot inflate one without the other), at most ``tries`` times.
It returns a :class:`Verdict` that the page prints, asserts
(:meth:`Verdict.check`) and glues. No page writes a timing threshold itself.

**One definition.** A run's *ratio* is predicted over measured time (median
repeat). The *ideal speedup* of a candidate over a baseline is the model's own
ratio, predicted baseline over predicted candidate; the *measured speedup*
uses the same statistic on both sides, median over median
(:class:`Comparison`). A run that beats its prediction therefore beats its
ideal, and that means the model is wrong.

**The rules** (:data:`RULES`; each one unit-tested on both sides):

- *beats the model*: the ratio is above ``1 + spread`` (the repeats' own
  relative spread): the measurement was faster than a best case can be. Said
  on the page. Beyond ``1 + spread + calibration_noise`` it is a failure: the
  calibration is a measurement too, and its noise is not in the run's spread.
- *far slower*: even the fastest repeat is below ``far_slower`` of the
  model's time. A failure, but only when the process had its cores: a
  machine busy with other work slows every run, and says nothing about the
  method.
- *a cost missing*: the fastest repeat is below ``flag_below`` of the model:
  the page names and measures the missing cost. Never a failure.
- otherwise the model *agrees* with the run.

**Builds that hold.** Under ``make test`` (and so CI) the environment variable
:data:`STRICT_ENV` is ``strict``: :meth:`Verdict.check` raises when a failure
persists after every try. Anywhere else (``make book``, a reader's kernel) it
never raises: the verdict says the run was disturbed and which checks were
not applied. Deterministic checks (identical draws, shapes, convergence) are
plain asserts in the pages and stay strict everywhere.

**A record per page.** Where the environment variable :data:`VERDICT_LOG_ENV`
names a file (the notebook tests set it for each page's kernel), every
verdict appends one JSON line to it: the cores the model counts, the cores the
process got, the tries, and whether it passed. ``make test`` keeps each page's
summary in the execution cache, and the page "Running this book" shows it.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Callable, Mapping

from parallel_mcmc._validate import whole_number
from parallel_mcmc.measure.compare import Interval, decide, speedup_interval
from parallel_mcmc.measure.cores import cores_available
from parallel_mcmc.measure.prediction import Prediction
from parallel_mcmc.measure.rules import Rules, RULES, RunVerdict, rate

__all__ = ["STRICT_ENV", "VERDICT_LOG_ENV", "OUTCOMES", "RETRIED", "Comparison", "Verdict", "strict", "judge",
           "record_verdict"]

#: How a measured speedup compares with 1 (:attr:`Comparison.outcome`, :func:`parallel_mcmc.measure.decide`).
OUTCOMES = ("faster", "cannot tell", "slower")

#: How a verdict's text starts each line of :attr:`Verdict.retried_for` (what failed before it measured again).
RETRIED = "measured again after "

#: ``make test`` sets this to ``strict``: a timing failure that persists after re-measuring then raises.
STRICT_ENV = "PARALLEL_MCMC_TIMING"

#: Where set, the path of a file to which every verdict appends a JSON line (:func:`record_verdict`).
VERDICT_LOG_ENV = "PARALLEL_MCMC_VERDICT_LOG"


@dataclass(frozen=True)
class Comparison:
    """A candidate's speedup over a baseline: measured (median over median) beside the model's ideal
    (predicted over predicted).

    Parameters
    ----------
    baseline : parallel_mcmc.measure.Prediction
        The baseline's measured and predicted times.
    candidate : parallel_mcmc.measure.Prediction
        The candidate's measured and predicted times.
    """

    baseline: Prediction
    candidate: Prediction

    @property
    def measured(self) -> float:
        return self.baseline.measured.median / self.candidate.measured.median

    @property
    def ideal(self) -> float:
        return self.baseline.predicted / self.candidate.predicted

    @property
    def interval(self) -> Interval:
        """The measured speedup with its interval, on the log scale (:func:`parallel_mcmc.measure.speedup_interval`;
        resampled by rounds where the two runs have as many repeats, the judge's runs sharing their rounds)."""
        base, cand = self.baseline.measured.times, self.candidate.measured.times
        return speedup_interval(base, cand, paired=len(base) == len(cand))

    @property
    def outcome(self) -> str:
        """``"faster"``, ``"slower"``, or ``"cannot tell"`` only when the interval holds 1 (:func:`decide`)."""
        return decide(self.interval)

    def __str__(self) -> str:
        i = self.interval
        return (f"{self.candidate.measured.label} vs {self.baseline.measured.label}: {self.measured:.2f}x measured "
                f"({i.low:.2f}x to {i.high:.2f}x), {self.ideal:.2f}x ideal (the model's ratio): {self.outcome}")

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class Verdict:
    """The judge's verdict on a page's runs: one :class:`RunVerdict` each, after ``tries`` measurements.

    Parameters
    ----------
    runs : mapping of str to parallel_mcmc.measure.RunVerdict
        Each run's verdict, by name.
    tries : int
        The measurements made.
    cores : int
        The physical cores the page's model counts.
    cores_got : float
        The cores the process got around the last measurement.
    strict : bool
        Whether a failure raises (:func:`strict`).
    rules : parallel_mcmc.measure.Rules, optional
        The thresholds.
    upper_bound_only : str, optional
        The sentence saying which cost the model counts at its best case only.
    retried_for : tuple of str, optional
        What failed in each earlier measurement, one line per failing run (:func:`judge` fills it): why the
        runs were measured again.
    """

    runs: Mapping[str, RunVerdict]
    tries: int
    cores: int
    cores_got: float
    strict: bool
    rules: Rules = field(default=RULES)
    upper_bound_only: str = ""  #: why only the upper bound was checked (see :func:`judge`), or empty
    retried_for: tuple[str, ...] = ()  #: the failures of the earlier measurements, a line each

    @property
    def predictions(self) -> dict[str, Prediction]:
        return {name: run.prediction for name, run in self.runs.items()}

    @property
    def cores_free(self) -> bool:
        """True when the process got at least ``free_share`` of its cores around the last measurement."""
        return self.cores_got >= self.rules.free_share * self.cores

    @property
    def failures(self) -> list[RunVerdict]:
        return [run for run in self.runs.values() if run.fails]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def disturbed(self) -> bool:
        """True when the run cannot be trusted as a test, because another program took cores or a failure persisted."""
        return not self.cores_free or not self.passed

    def status(self, name: str) -> str:
        """The status of the run ``name`` (see :class:`RunVerdict`).

        Parameters
        ----------
        name : str
            The run's name.

        Returns
        -------
        str
            Its status.

        Raises
        ------
        KeyError
            If there is no run ``name``.
        """
        if name not in self.runs:
            raise KeyError(f"no run named {name!r}; the runs are {list(self.runs)}.")
        return self.runs[name].status

    def reading(self, name: str) -> str:
        """What a page says of the run ``name``: one of :data:`READINGS`.

        A run slower than the model (``"a
        cost missing"`` or ``"far slower"``) reads ``"slower, cores free"`` when the process had its cores
        and ``"slower, cores busy"`` when other work took them; the other statuses read as they are.

        Parameters
        ----------
        name : str
            As for :meth:`status`.

        Returns
        -------
        str
            One of :data:`READINGS`.

        Raises
        ------
        KeyError
            Where :meth:`status` raises it.
        """
        status = self.status(name)
        if status in ("agrees", "beats the model"):
            return status
        return "slower, cores free" if self.cores_free else "slower, cores busy"

    def compare(self, baseline: str, candidate: str) -> Comparison:
        """The speedup of run ``candidate`` over run ``baseline``, with the model's ideal.

        Parameters
        ----------
        baseline : str
            The baseline run's name.
        candidate : str
            The candidate run's name.

        Returns
        -------
        parallel_mcmc.measure.Comparison
            The measured speedup beside the ideal.

        Raises
        ------
        KeyError
            If there is no such run.
        """
        for name in (baseline, candidate):
            self.status(name)
        return Comparison(self.runs[baseline].prediction, self.runs[candidate].prediction)

    @property
    def ratios(self) -> tuple[float, float]:
        """The lowest and highest predicted/measured ratio."""
        ratios = [run.ratio for run in self.runs.values()]
        return min(ratios), max(ratios)

    def summary(self) -> str:
        """One sentence on the whole page's runs, by the judge's own rule (each run's fastest repeat against the
        rules' tolerance). Pages state the narrator's :meth:`parallel_mcmc.measure.Result.summary` instead, which
        reads the same runs by their intervals.

        Returns
        -------
        str
            The sentence.
        """
        low, high = self.ratios
        tries = f"after {self.tries} measurements" if self.tries > 1 else "at the first measurement"
        beaten = [run.name for run in self.runs.values() if run.status == "beats the model"]
        slow = [run.name for run in self.runs.values() if run.status in ("a cost missing", "far slower")]
        parts = [f"Predicted/measured ran from {low:.2f} to {high:.2f} ({tries})."]
        if beaten:
            parts.append(f"Faster than the model's best case by more than the spread of the repeats: {_names(beaten)}; "
                         "the model is wrong there.")
        if slow and self.cores_free:
            parts.append(f"Slower than the model by more than the book allows for noise: {_names(slow)}; "
                         "a cost the model does not count.")
        elif slow:
            parts.append(f"Slower than the model: {_names(slow)}, on a machine whose other work took cores.")
        if not beaten and not slow:
            parts.append("The model accounts for every run.")
        if not self.cores_free:
            parts.append(f"Other work on the machine left this process {self.cores_got:.1f} of its {self.cores} "
                         "cores, so the runs were disturbed and the lower bounds were not checked.")
        if self.failures and not self.strict:
            parts.append("A strict run (make test) would fail here; this build only reports it.")
        return " ".join(parts)

    def check(self) -> None:
        """Under ``make test`` (:data:`STRICT_ENV` = ``strict``), raise ``AssertionError`` for a failure that
        persisted after every try; elsewhere never raise (the verdict's text says what failed)."""
        if self.failures and self.strict:
            lines = "\n".join(str(run) for run in self.failures)
            raise AssertionError(f"timing verdict failed after {self.tries} measurement(s):\n{lines}")

    def __str__(self) -> str:
        head = (f"{len(self.runs)} runs, {self.tries} measurement(s); this process got {self.cores_got:.2f} of "
                f"{self.cores} cores" + ("" if self.cores_free else " (disturbed: lower bounds not checked)")
                + (f"\nupper bound only: {self.upper_bound_only}" if self.upper_bound_only else ""))
        again = [RETRIED + line for line in self.retried_for]
        return "\n".join([head, *(str(run) for run in self.runs.values()), *again])

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else "; ".join(names[:-1]) + " and " + names[-1]


def strict() -> bool:
    """True under ``make test``: the environment variable :data:`STRICT_ENV` is ``strict``.

    Returns
    -------
    bool
        Whether :data:`STRICT_ENV` is ``strict``.
    """
    return os.environ.get(STRICT_ENV, "").strip().lower() == "strict"


def judge(measure: Callable[[], Mapping[str, Prediction]], cores: int, rules: Rules = RULES,
          upper_bound_only: str | Mapping[str, str] = "") -> Verdict:
    """Measure with ``measure()`` and judge its runs; measure again, at most ``rules.tries`` times, while a rule fails.

    Around each measurement the judge reads how many
    of the cores the process can get (:func:`parallel_mcmc.measure.cores_available`).

    Parameters
    ----------
    measure : callable
        Times the page's runs and their model's calibration together and returns ``{name: Prediction}``.
    cores : int
        The number of physical cores the page's model counts.
    rules : parallel_mcmc.measure.Rules, optional
        The thresholds.
    upper_bound_only : str or mapping of str to str, optional
        Where a page's model knowingly counts a cost at its best
        case only, the sentence that says which and why; the verdict then never fails
        a run for being far slower (its status still says so), prints the sentence,
        and still fails a run that beats the model. A dict ``{run name: sentence}``
        does so for the runs it names only; the other runs keep both bounds.

    Returns
    -------
    parallel_mcmc.measure.Verdict
        The verdict on every run.

    Raises
    ------
    TypeError
        If ``measure`` is not callable or does not return a non-empty ``{name: Prediction}``, or
        ``upper_bound_only`` is neither a sentence nor a dict of sentences.
    KeyError
        If ``upper_bound_only`` names a run that ``measure()`` did not return.
    """
    if isinstance(upper_bound_only, Mapping):
        per_run = dict(upper_bound_only)
        if not per_run or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in per_run.items()):
            raise TypeError("upper_bound_only as a dict must map run names to a sentence each, saying which cost "
                            "that run's model counts at its best case.")
        by_reason: dict[str, list[str]] = {}
        for name, why in per_run.items():  # the runs that share a reason are named once, before it
            by_reason.setdefault(why.strip(), []).append(name)
        said = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
    elif isinstance(upper_bound_only, str):
        per_run, said = None, upper_bound_only.strip()
    else:
        raise TypeError("upper_bound_only must be a sentence saying which cost the model counts at its best case "
                        "(or a dict {run name: sentence} for some runs only).")
    if not callable(measure):
        raise TypeError("measure must be a function that times the runs and returns {name: Prediction}.")
    cores = whole_number("cores", cores, 1)
    earlier: list[str] = []
    for attempt in range(1, rules.tries + 1):
        before = cores_available(cores)
        predictions = measure()
        got = min(before, cores_available(cores))
        if not isinstance(predictions, Mapping) or not predictions:
            raise TypeError("measure() must return a non-empty dict {name: Prediction}.")
        free = got >= rules.free_share * cores
        if per_run is not None and not set(per_run) <= set(predictions):
            raise KeyError(f"upper_bound_only names runs that measure() did not return: "
                           f"{sorted(set(per_run) - set(predictions))}; the runs are {list(predictions)}.")
        bounded = set(predictions) if per_run is None and said else set(per_run or ())
        runs = {name: rate(name, p, free and name not in bounded, rules) for name, p in predictions.items()}
        verdict = Verdict(runs, attempt, cores, got, strict(), rules, said, tuple(earlier))
        if verdict.passed:
            break
        earlier += [f"measurement {attempt}: {run}" for run in verdict.failures]
    record_verdict(verdict)
    return verdict


def record_verdict(verdict: Verdict) -> None:
    """Append ``verdict``'s summary as one JSON line to the file that :data:`VERDICT_LOG_ENV` names, if it is set.

    :func:`judge` calls it for every verdict. A file that cannot be written is said in a warning; the
    verdict stands.

    Parameters
    ----------
    verdict : parallel_mcmc.measure.Verdict
        The verdict to record: the line holds ``runs`` (how many), ``cores`` (the model's), ``cores_got``,
        ``tries``, ``passed`` and ``cores_free``.
    """
    path = os.environ.get(VERDICT_LOG_ENV, "").strip()
    if not path:
        return
    line = {"runs": len(verdict.runs), "cores": verdict.cores, "cores_got": round(float(verdict.cores_got), 3),
            "tries": verdict.tries, "passed": verdict.passed, "cores_free": verdict.cores_free,
            "retried_for": list(verdict.retried_for)}
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
    except OSError as err:
        warnings.warn(f"the verdict could not be recorded in {path} ({VERDICT_LOG_ENV}): {err}", stacklevel=2)
