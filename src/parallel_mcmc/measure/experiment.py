"""One declared experiment: a timed page states its runs, the pieces its model needs and the model, then makes one call.

::

    experiment = Experiment(
        runs={"one after another": (sequential, keys), "vmap": (lockstep, keys)},
        pieces={"one step": (step, state)},
        model=lambda m: {"one after another": steps.sum() * m.best("one step"), "vmap": ...},
        baseline="one after another",
    )
    result = measure(experiment)
    print(result.sentence("vmap"))        # the narrator's sentence, with its numbers
    glue_all(result.numbers("chains"))    # every number and sentence the page cites

:func:`measure` times the runs and the pieces together in the book's one interleaved loop
(:func:`parallel_mcmc.measure.time_with_calibration`), so that a slow spell of the machine falls on the
prediction and the runs alike; hands the timings and outputs to the model (:class:`Measured`: a model that needs
the runs' own step counts reads them from ``outputs``); and has the judge (:func:`parallel_mcmc.measure.judge`)
apply the book's rules, measuring everything again while a rule fails. A pair named in ``decide`` whose speedup
the rounds cannot decide is measured again with more rounds, up to ``max_repeats``. The :class:`Result` holds the
timings, outputs, predictions, the judge's verdict and the comparisons; its sentences come from
:mod:`parallel_mcmc.measure.narrate`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from parallel_mcmc._validate import whole_number
from parallel_mcmc.measure.compare import TOLERANCE, Interval, decide, model_interval, speedup_interval
from parallel_mcmc.measure.judging import Verdict, judge
from parallel_mcmc.measure.rules import RULES, Rules
from parallel_mcmc.measure.prediction import Prediction, predict
from parallel_mcmc.measure.narrate import model_sentence, runs_sentence, speedup_sentence
from parallel_mcmc.measure.timing import Timing, time_interleaved, time_with_calibration

__all__ = ["Experiment", "Measured", "Result", "measure"]


@dataclass(frozen=True)
class Measured:
    """What one round of measurements gave the model: every call's timing and last output, by name.

    Parameters
    ----------
    timings : dict of str to parallel_mcmc.measure.Timing
        The runs' and the pieces' timings.
    outputs : dict of str to object
        Their outputs (a run's own step counts, say).
    """

    timings: Mapping[str, Timing]
    outputs: Mapping[str, Any]

    def best(self, name: str) -> float:
        """The fastest repeat of ``name``, in seconds: the model's best case of a piece.

        Parameters
        ----------
        name : str
            A run or a piece.

        Returns
        -------
        float
            Seconds.
        """
        return self._timing(name).best

    def median(self, name: str) -> float:
        """The median repeat of ``name``, in seconds.

        Parameters
        ----------
        name : str
            A run or a piece, as for :meth:`best`.

        Returns
        -------
        float
            The median's seconds.
        """
        return self._timing(name).median

    def _timing(self, name: str) -> Timing:
        if name not in self.timings:
            raise KeyError(f"nothing named {name!r} was timed; the runs and pieces are {sorted(self.timings)}.")
        return self.timings[name]


@dataclass(frozen=True)
class Experiment:
    """A timed page's measurement, declared.

    Parameters
    ----------
    runs : mapping of str to tuple
        What the page compares, ``{name: (fn, *args)}``.
    model : callable
        ``model(measured)`` gives the predicted seconds of every run, ``{name: seconds}``, from a
        :class:`Measured`.
    pieces : mapping of str to tuple, optional
        The calls the model's costs are measured from, ``{name: (fn, *args)}``, timed in the runs' rounds.
    baseline : str, optional
        The run the others' speedups are over (the first run when ``None``).
    repeats : int, optional
        Timed rounds.
    best_case_only : mapping of str to str, optional
        Runs whose prediction knowingly counts a cost at its best case only, each with the sentence that says
        which and why: the judge then never fails them for being slow.
    decide : sequence of tuple of str, optional
        ``(candidate, baseline)`` pairs the page's question needs decided: while the rounds cannot tell such a
        pair apart, it is measured again with twice the rounds, up to ``max_repeats``.
    max_repeats : int, optional
        The most rounds ``decide`` may take.
    tolerance : float, optional
        The calibration's relative error, within which the model and the ideal count as met.
    reasons : mapping of str to str, optional
        For a run, what its prediction counts (``"global lockstep, all-reduces in every step"``): printed with the
        verdict.
    elsewhere : mapping of str to callable, optional
        Runs timed outside this process (a program under ``mpiexec`` or ``srun`` that times its own repeats):
        ``{name: time_it}``, where ``time_it(repeats)`` runs the program and returns ``(timing, output)``, a
        :class:`parallel_mcmc.measure.Timing` of ``repeats`` times and whatever the model needs. They are
        runs like the others (model, judge, ``baseline``, ``decide``), measured once per try after the
        interleaved rounds; a speedup that involves one is not paired round by round.
    """

    runs: Mapping[str, tuple]
    model: Callable[[Measured], Mapping[str, float]]
    pieces: Mapping[str, tuple] = field(default_factory=dict)
    baseline: str | None = None
    repeats: int = 5
    best_case_only: Mapping[str, str] = field(default_factory=dict)
    decide: Sequence[tuple[str, str]] = ()
    max_repeats: int = 20
    tolerance: float = TOLERANCE
    reasons: Mapping[str, str] = field(default_factory=dict)
    elsewhere: Mapping[str, Callable[[int], tuple[Timing, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.runs, Mapping) or not (self.runs or self.elsewhere):
            raise TypeError("runs must be a non-empty dict {name: (fn, *args)} (or elsewhere must name a run).")
        if not isinstance(self.elsewhere, Mapping) or not all(callable(f) for f in self.elsewhere.values()):
            raise TypeError("elsewhere must be a dict {name: time_it}, time_it(repeats) -> (Timing, output).")
        if set(self.elsewhere) & (set(self.runs) | set(self.pieces)):
            raise KeyError(f"{sorted(set(self.elsewhere) & (set(self.runs) | set(self.pieces)))} are named twice: "
                           "a run is timed here (runs, pieces) or elsewhere, not both.")
        if not callable(self.model):
            raise TypeError("model must be a function of the measurements that returns {run name: seconds}.")
        whole_number("repeats", self.repeats, 1)
        whole_number("max_repeats", self.max_repeats, self.repeats)
        names = set(self.all_runs)
        for name in [self.baseline] if self.baseline is not None else []:
            if name not in names:
                raise KeyError(f"baseline {name!r} is not a run; the runs are {sorted(names)}.")
        for pair in self.decide:
            if len(pair) != 2 or not set(pair) <= names:
                raise KeyError(f"decide takes (candidate, baseline) pairs of runs, got {pair!r}; the runs are "
                               f"{sorted(names)}.")
        if not set(self.reasons) <= names:
            raise KeyError(f"reasons names runs that do not exist: {sorted(set(self.reasons) - names)}.")
        if not set(self.best_case_only) <= names:
            raise KeyError(f"best_case_only names runs that do not exist: {sorted(set(self.best_case_only) - names)}.")


    @property
    def all_runs(self) -> list[str]:
        """The runs timed here, then those timed elsewhere, by name."""
        return [*self.runs, *self.elsewhere]


@dataclass(frozen=True)
class Result:
    """What an experiment measured, judged, and says.

    Parameters
    ----------
    experiment : Experiment
        The experiment as it was declared.
    timings : dict of str to parallel_mcmc.measure.Timing
        The last measurement's timings of the runs and the pieces.
    outputs : dict of str to object
        Their outputs.
    predicted : dict of str to float
        The model's seconds for each run.
    verdict : parallel_mcmc.measure.Verdict
        The judge's verdict.
    """

    experiment: Experiment
    timings: Mapping[str, Timing]
    outputs: Mapping[str, Any]
    predicted: Mapping[str, float]
    verdict: Verdict

    @property
    def baseline(self) -> str:
        """The run the speedups are over."""
        return self.experiment.baseline or self.experiment.all_runs[0]

    def speedup(self, candidate: str, baseline: str | None = None) -> Interval:
        """The candidate's measured speedup over the baseline, with its interval.

        Parameters
        ----------
        candidate : str
            A run.
        baseline : str, optional
            Another run (the experiment's baseline when ``None``).

        Returns
        -------
        parallel_mcmc.measure.Interval
            Above 1 when the candidate is faster.
        """
        name = baseline or self.baseline
        paired = not ({name, candidate} & set(self.experiment.elsewhere))  # rounds shared only by runs timed here
        return speedup_interval(self._run(name).times, self._run(candidate).times, paired=paired)

    def ideal(self, candidate: str, baseline: str | None = None) -> float:
        """The model's own ratio: the baseline's predicted time over the candidate's.

        Parameters
        ----------
        candidate, baseline : str
            As for :meth:`speedup`.

        Returns
        -------
        float
            The ideal speedup.
        """
        self._run(candidate)
        return self.predicted[baseline or self.baseline] / self.predicted[candidate]

    def first_faster(self, sizes: Sequence[Any], candidate: Callable[[Any], str], baseline: Callable[[Any], str],
                     model: bool = False) -> Any:
        """Where a sweep starts to pay: the first size at which the candidate is faster than the baseline.

        Measured (the default): the first size whose speedup interval lies wholly above 1 (:func:`decide` says
        "faster"). With ``model=True``: the first size at which the model's ideal ratio is above 1.

        Parameters
        ----------
        sizes : sequence
            The sweep's sizes, in the order they grow.
        candidate, baseline : callable
            The run's name at a size, for each side (``lambda n: f"2 devices, {n} steps"``).
        model : bool, optional
            Read the model's prediction instead of the measurement.

        Returns
        -------
        Any
            The first such size; None where there is none.
        """
        for size in sizes:
            if (self.ideal(candidate(size), baseline(size)) > 1 if model
                    else decide(self.speedup(candidate(size), baseline(size))) == "faster"):
                return size
        return None

    def ratio(self, run: str) -> Interval:
        """Predicted over measured time of ``run``, with its interval.

        Parameters
        ----------
        run : str
            A run.

        Returns
        -------
        parallel_mcmc.measure.Interval
            1 when the model accounts for the whole run.
        """
        return model_interval(self._run(run).times, self.predicted[run])

    def sentence(self, candidate: str, baseline: str | None = None) -> str:
        """The narrator's sentence on the candidate's speedup over the baseline, beside its ideal.

        Parameters
        ----------
        candidate, baseline
            The two runs, as in :meth:`speedup`.

        Returns
        -------
        str
            The sentence, with its numbers.
        """
        base = baseline or self.baseline
        return speedup_sentence(candidate, base, self.speedup(candidate, base), self.ideal(candidate, base),
                                self.experiment.tolerance)

    def model_sentence(self, run: str) -> str:
        """The narrator's sentence on ``run`` beside the model's prediction.

        Parameters
        ----------
        run : str
            The run, as for :meth:`ratio`.

        Returns
        -------
        str
            The sentence, with both times and the ratio.
        """
        return model_sentence(run, self._run(run).median, self.predicted[run], self.ratio(run),
                              self.experiment.tolerance, self.experiment.best_case_only.get(run))

    def summary(self) -> str:
        """The narrator's sentence on every run beside the model (:func:`~parallel_mcmc.measure.runs_sentence`):
        the range of predicted/measured, the runs in each verdict, and the cores other work took, if any.

        Returns
        -------
        str
            The sentences.
        """
        disturbed = {} if self.verdict.cores_free else {"cores_got": self.verdict.cores_got,
                                                        "cores": self.verdict.cores}
        return runs_sentence({run: self.ratio(run) for run in self.experiment.all_runs}, **disturbed)

    def numbers(self, prefix: str, speedups: bool = True) -> dict[str, Any]:
        """Every number and sentence a page may cite, by a glue name: ``{prefix}_{run}_{what}``.

        For each run: ``seconds`` (median), ``predicted``, ``ratio`` and ``model`` (the sentence); for each run
        but the baseline: ``speedup``, ``low`` and ``high`` (its interval), ``ideal`` and ``says`` (the sentence);
        and ``{prefix}_rounds`` and ``{prefix}_tries``. Run names become lower-case words joined by ``_``.

        Parameters
        ----------
        prefix : str
            The page's prefix for its glue names.
        speedups : bool, optional
            Whether to give each run's speedup over the baseline: leave them out (``False``) where the runs are
            not alternatives to one another.

        Returns
        -------
        dict of str to object
            Numbers and sentences, ready for ``glue(name, value, display=False)``.
        """
        out: dict[str, Any] = {f"{prefix}_rounds": len(self._run(self.baseline).times),
                               f"{prefix}_tries": self.verdict.tries}
        for run in self.experiment.all_runs:
            key = f"{prefix}_{_slug(run)}"
            out.update({f"{key}_seconds": self._run(run).median, f"{key}_predicted": self.predicted[run],
                        f"{key}_ratio": self.ratio(run).estimate, f"{key}_model": self.model_sentence(run)})
            if speedups and run != self.baseline:
                s = self.speedup(run)
                out.update({f"{key}_speedup": s.estimate, f"{key}_low": s.low, f"{key}_high": s.high,
                            f"{key}_ideal": self.ideal(run), f"{key}_says": self.sentence(run)})
        return out

    def check(self) -> None:
        """Raise, under ``make test``, when a timing failure persisted after every try (see the judge)."""
        self.verdict.check()

    def _run(self, name: str) -> Timing:
        if name not in self.experiment.all_runs:
            raise KeyError(f"{name!r} is not a run of this experiment; its runs are {self.experiment.all_runs}.")
        return self.timings[name]

    def __str__(self) -> str:
        return str(self.verdict)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def _slug(name: str) -> str:
    """A run's name as a glue name's part: lower-case words joined by ``_``."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _once(experiment: Experiment, repeats: int, kept: dict) -> dict[str, Prediction]:
    if not experiment.runs:  # every run is timed elsewhere
        timings, outputs = time_interleaved(experiment.pieces, repeats=repeats) if experiment.pieces else ({}, {})
    elif experiment.pieces:
        (timings, outputs), (piece_t, piece_o) = time_with_calibration(experiment.runs, experiment.pieces, repeats)
        timings, outputs = {**timings, **piece_t}, {**outputs, **piece_o}
    else:
        timings, outputs = time_interleaved(experiment.runs, repeats=repeats)
    for name, time_it in experiment.elsewhere.items():
        got = time_it(repeats)
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], Timing)):
            raise TypeError(f"elsewhere[{name!r}](repeats) must return (Timing, output), got {type(got).__name__}.")
        timings[name], outputs[name] = got
    predicted = experiment.model(Measured(timings, outputs))
    if not isinstance(predicted, Mapping) or set(predicted) != set(experiment.all_runs):
        got = sorted(predicted) if isinstance(predicted, Mapping) else type(predicted).__name__
        raise KeyError(f"the model must return the predicted seconds of every run and only those, "
                       f"{sorted(experiment.all_runs)}; it returned {got}.")
    kept.update(timings=timings, outputs=outputs, predicted={k: float(v) for k, v in predicted.items()})
    return {name: predict(timings[name], kept["predicted"][name], experiment.reasons.get(name, ""))
            for name in experiment.all_runs}


def measure(experiment: Experiment, cores: int | None = None, rules: Rules = RULES) -> Result:
    """Time, model and judge an experiment; return its :class:`Result`.

    Parameters
    ----------
    experiment : Experiment
        The runs, pieces and model.
    cores : int, optional
        The physical cores the model counts (:func:`parallel_mcmc.devices.physical_cores` when ``None``).
    rules : parallel_mcmc.measure.Rules, optional
        The judge's thresholds.

    Returns
    -------
    Result
        The timings, outputs, predictions, verdict and comparisons of the last measurement.
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"measure() takes an Experiment, got {type(experiment).__name__}.")
    if cores is None:
        from parallel_mcmc.devices import physical_cores

        cores = physical_cores()
    repeats = experiment.repeats
    while True:
        kept: dict = {}
        verdict = judge(lambda: _once(experiment, repeats, kept), cores=cores, rules=rules,
                        upper_bound_only=dict(experiment.best_case_only) or "")
        result = Result(experiment, kept["timings"], kept["outputs"], kept["predicted"], verdict)
        undecided = [pair for pair in experiment.decide if decide(result.speedup(*pair)) == "cannot tell"]
        if not undecided or repeats >= experiment.max_repeats:
            return result
        repeats = min(2 * repeats, experiment.max_repeats)
