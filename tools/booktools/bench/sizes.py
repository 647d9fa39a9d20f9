"""The benchmark's sizes, its rows, and how a group of runs is judged: one :class:`Row` a run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from parallel_mcmc.measure import Prediction, Timing, judge


__all__ = ["BenchSize", "SIZES", "Row", "judged", "best_per_step"]


@dataclass(frozen=True)
class BenchSize:
    """How much work each group of the benchmark does."""

    nuts_chains_per_device: int  #: BlackJAX NUTS chains on each device
    nuts_draws: int  #: NUTS draws per chain
    numpyro_warmup: int  #: NumPyro warmup iterations per chain
    numpyro_samples: int  #: NumPyro sampling iterations per chain
    emcee_steps: int  #: emcee ensemble steps
    repeats: int  #: timed repeats of each NUTS and emcee run
    numpyro_repeats: int  #: timed repeats of each NumPyro sampling program (compiled once, then called again)


#: The sizes ``--size`` can name.
SIZES = {
    "smoke": BenchSize(nuts_chains_per_device=2, nuts_draws=10, numpyro_warmup=50, numpyro_samples=300,
                       emcee_steps=2, repeats=2, numpyro_repeats=3),
    "laptop": BenchSize(nuts_chains_per_device=4, nuts_draws=60, numpyro_warmup=500, numpyro_samples=2000,
                        emcee_steps=10, repeats=3, numpyro_repeats=3),
    "large": BenchSize(nuts_chains_per_device=16, nuts_draws=200, numpyro_warmup=1000, numpyro_samples=10000,
                       emcee_steps=40, repeats=5, numpyro_repeats=3),
}


@dataclass
class Row:
    """One way of running chains: measured and predicted seconds, the judge's verdict, and a gap's reading.

    ``speedup`` is the baseline's median over this row's median and ``ideal_speedup`` the model's own
    ratio, the baseline's predicted time over this row's (both 1 on the group's baseline row);
    ``status`` is the judge's verdict on the row (:mod:`parallel_mcmc.measure`) after ``tries`` measurements.
    """

    group: str
    method: str
    chains: int
    devices: int
    measured_s: float
    spread: float
    predicted_s: float
    ratio: float
    speedup: float
    ideal_speedup: float
    status: str
    tries: int
    note: str = ""


def judged(group: str, measure: Callable[[], tuple[dict[str, Prediction], str]], baseline: str,
            chains: int, devices: dict[str, int], cores: int) -> list[Row]:
    """Judge a group's runs (``measure()`` gives their predictions and a note on what the model leaves out),
    measuring again while a rule fails, as the book's pages do; one :class:`Row` a run."""
    notes: list[str] = []

    def predictions() -> dict[str, Prediction]:
        found, note = measure()
        notes.append(note)
        return found

    verdict = judge(predictions, cores=cores)
    rows = []
    for method, run in verdict.runs.items():
        p, c = run.prediction, verdict.compare(baseline, method)
        rows.append(Row(group, method, chains, devices[method], p.measured.median, p.spread, p.predicted, p.ratio,
                        c.measured, c.ideal, run.status, verdict.tries, "" if run.status == "agrees" else notes[-1]))
    return rows


def best_per_step(timing: Timing, steps: float) -> float:
    return timing.best / steps

