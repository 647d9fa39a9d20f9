"""The book's cost model: predict how long a way of running chains takes, from what was measured here.

Every prediction is built from a few quantities measured on the machine that
runs the page, never from assumptions:

- :class:`StepCost`: the time of one step (a NUTS integration step, a
  log-density gradient, one emcee log-probability) at each *width*, the number
  of chains vectorised into that step;
- ``cores``: the physical cores the process may use
  (:func:`parallel_mcmc.devices.physical_cores`);
- the step counts of every chain at every draw (NUTS's ``num_integration_steps``).

Three rules turn them into a time:

1. **Sequential**: work done one step after another costs the sum of its steps.
2. **Lockstep**: chains vectorised together take, at every draw, as many steps
   as their slowest chain, each at the cost of one step of that width.
3. **Concurrent**: independent jobs that run at once finish no sooner than the
   longest of them, and no sooner than their total CPU work spread over the
   cores, one core a job: ``max(max(t), sum(t) / cores)``.

The model leaves out every overhead it does not measure, so a prediction is the
best case: a lower bound on the time. The ideal of a speedup is the model's own
ratio, the baseline's predicted time over the candidate's predicted time, and
the measured speedup is median over median (:class:`parallel_mcmc.measure.Comparison`).
A measurement faster than its prediction (by more than its own spread) means
the model is wrong; a measurement much slower means some cost is missing from
it, and the page names and measures it. :class:`Prediction` holds the two side
by side, and :mod:`parallel_mcmc.measure` holds every threshold that decides
between them.

The concurrent rule counts one core for each job, though one device of a CPU
may keep more busy. It has to: the reading that would say how many
(:func:`parallel_mcmc.measure.cores_busy`, CPU time over wall time) cannot tell
a thread at work from one waiting actively, and a job counted at more cores
than it needs makes a prediction that a measurement can beat. A device that
truly needs several cores shows as a ratio below 1, with that reading beside
it as the cause.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from parallel_mcmc._validate import real_number, whole_number
from parallel_mcmc.measure.lockstep import lockstep_cost, steps_2d

__all__ = ["StepCost", "concurrent", "sequential_time", "lockstep_time", "sharded_time", "split_call_time"]


@dataclass(frozen=True)
class StepCost:
    """Measured seconds of one step at each width (chains per vectorised step).

    Between measured widths the cost is interpolated linearly; outside them it
    is extrapolated from the nearest two, never below zero.

    Parameters
    ----------
    widths : tuple of int
        The measured widths, increasing and distinct.
    seconds : tuple of float
        The seconds of one step at each width.
    """

    widths: tuple[int, ...]
    seconds: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.widths) != len(self.seconds) or not self.widths:
            raise ValueError("widths and seconds must be non-empty and of equal length.")
        if list(self.widths) != sorted(set(self.widths)):
            raise ValueError(f"widths must be increasing and distinct, got {self.widths}.")
        for w in self.widths:
            whole_number("width", w, 1)
        for s in self.seconds:
            real_number("seconds", s, above=0)

    def at(self, width: float) -> float:
        """Seconds of one step of ``width`` chains vectorised together.

        Parameters
        ----------
        width : float
            The chains vectorised together (positive).

        Returns
        -------
        float
            Seconds of one step.

        Raises
        ------
        ValueError
            If ``width`` is not a positive number.
        """
        real_number("width", width, above=0)
        w, s = np.asarray(self.widths, float), np.asarray(self.seconds, float)
        if len(w) == 1:
            return float(s[0] * width / w[0]) if width > w[0] else float(s[0])
        if width <= w[-1]:
            return float(np.interp(width, w, s))
        slope = (s[-1] - s[-2]) / (w[-1] - w[-2])
        return float(max(s[-1] + slope * (width - w[-1]), 0.0))

    def per_chain(self, width: float) -> float:
        """Seconds per chain-step at ``width``: below ``at(1)`` when vectorising pays.

        Parameters
        ----------
        width : float
            Chains vectorised together, the same as for :meth:`at`.

        Returns
        -------
        float
            Seconds per chain-step.
        """
        return self.at(width) / width

    def __str__(self) -> str:
        parts = ", ".join(f"{w}: {s * 1e6:.1f} µs" for w, s in zip(self.widths, self.seconds))
        return f"one step at width {parts}"


def concurrent(times: Sequence[float], cores: float) -> float:
    """Best wall time of independent jobs run at once: the longest job, or all their work over the cores.

    Each job
    needs at least one core: with as many cores as jobs this is ``max(times)``;
    with fewer, the jobs share the cores and ``sum(times) / cores`` decides.

    Parameters
    ----------
    times : sequence of float
        The jobs' times when each has the machine to itself.
    cores : float
        The cores they share.

    Returns
    -------
    float
        ``max(max(times), sum(times) / cores)``.

    Raises
    ------
    ValueError
        If ``times`` is empty or holds a negative time, or ``cores`` is not positive.
    """
    times = [real_number("time", t, least=0) for t in times]
    if not times:
        raise ValueError("times is empty: pass the time of at least one job.")
    cores = real_number("cores", cores, above=0)
    return max(max(times), sum(times) / cores)


def sequential_time(steps: Any, step: StepCost) -> float:
    """Chains one after another on one device: every step of every chain at width 1.

    Parameters
    ----------
    steps : array_like
        Integration steps of every chain at every draw, ``(chain, draw)``.
    step : parallel_mcmc.measure.StepCost
        The measured cost of one step at each width.

    Returns
    -------
    float
        The predicted seconds.
    """
    return float(steps_2d(steps).sum()) * step.at(1)


def lockstep_time(steps: Any, step: StepCost) -> float:
    """All chains vectorised together: the slowest chain's steps of every draw, at the full width.

    Parameters
    ----------
    steps, step
        As for :func:`sequential_time`.

    Returns
    -------
    float
        The predicted seconds in lockstep.
    """
    steps = steps_2d(steps)
    return lockstep_cost(steps) * step.at(steps.shape[0])


def sharded_time(steps: Any, step: StepCost, num_devices: int, cores: float, inner: str = "map") -> float:
    """Chains split into equal consecutive blocks over ``num_devices`` devices that share ``cores`` cores.

    Each device runs its block one chain after another (``inner="map"``) or in
    lockstep (``inner="vmap"``); the devices run concurrently (:func:`concurrent`).

    Parameters
    ----------
    steps, step
        The chains' steps and the step's cost, as :func:`sequential_time` takes them.
    num_devices : int
        The devices; it must divide the number of chains.
    cores : float
        The cores the devices share.
    inner : str, optional
        ``"map"`` (one chain after another) or ``"vmap"`` (lockstep) on each device.

    Returns
    -------
    float
        The predicted seconds.

    Raises
    ------
    ValueError
        If the chains cannot be split evenly over ``num_devices`` devices, or ``inner`` is neither ``"map"`` nor
        ``"vmap"``.
    """
    steps = steps_2d(steps)
    num_devices = whole_number("num_devices", num_devices, 1)
    if steps.shape[0] % num_devices:
        raise ValueError(f"{steps.shape[0]} chains cannot be split evenly over {num_devices} devices.")
    blocks = steps.reshape(num_devices, -1, steps.shape[1])
    if inner == "map":
        per_device = [sequential_time(b, step) for b in blocks]
    elif inner == "vmap":
        per_device = [lockstep_time(b, step) for b in blocks]
    else:
        raise ValueError(f"inner must be 'map' or 'vmap', got {inner!r}.")
    return concurrent(per_device, cores)


def split_call_time(work_seconds: float, num_devices: int, cores: float, fixed_seconds: float,
                    cores_busy: float = 1.0) -> float:
    """One call whose work is split into ``num_devices`` equal pieces on devices that share ``cores`` cores.

    The
    pieces run at once (:func:`concurrent`), after the fixed cost: small work
    pays the fixed cost and gains little, large work gains up to
    ``min(num_devices, cores)``.

    A piece's CPU work is its time times ``cores_busy``, and the pieces' CPU work together shares the cores:
    ``max(work, num_devices * work * cores_busy / cores)``, so large work gains
    only up to ``cores / cores_busy``. The default, 1, is the concurrent rule's
    one core a piece. Readings below 1 (a busy machine) count as 1 and readings
    above ``cores`` as ``cores``. A reading that counts threads waiting actively
    overstates the work: a run that beats this prediction says so.

    Parameters
    ----------
    work_seconds : float
        One piece's work alone on one device, with the call's own fixed cost taken out (a piece's time less the
        same call doing no work).
    num_devices : int
        The devices, one piece each.
    cores : float
        As for :func:`sharded_time`.
    fixed_seconds : float
        The fixed cost of one call over all ``num_devices`` devices (the same call doing no work, measured on those
        devices).
    cores_busy : float, optional
        The cores one piece keeps busy alone on one device (its :attr:`~parallel_mcmc.measure.Timing.cores_busy`;
        XLA's CPU backend spreads a large operation over threads).

    Returns
    -------
    float
        The predicted seconds of the call.

    Raises
    ------
    ValueError
        If an argument is not a number in its range.
    """
    work_seconds = real_number("work_seconds", work_seconds, least=0)
    num_devices = whole_number("num_devices", num_devices, 1)
    fixed_seconds = real_number("fixed_seconds", fixed_seconds, least=0)
    cores = real_number("cores", cores, above=0)
    busy = min(max(real_number("cores_busy", cores_busy, above=0), 1.0), cores)
    return fixed_seconds + max(work_seconds, num_devices * work_seconds * busy / cores)


