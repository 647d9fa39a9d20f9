"""Plots that recur in the book: measured speedups and times beside their ideals, and NUTS's steps per draw."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from parallel_mcmc.measure.lockstep import steps_2d
from parallel_mcmc.measure.timing import Speedup

__all__ = ["plot_speedups", "plot_scaling", "plot_times_vs_ideal", "plot_sweep", "plot_steps_per_draw"]


def plot_speedups(records: Sequence[Speedup], ax=None, title: str | None = None):
    """Bar chart of measured speedups with the ideal of each drawn beside it.

    Each bar is labelled with the candidate's label.

    Parameters
    ----------
    records : sequence of parallel_mcmc.measure.Speedup
        The speedups.
    ax : matplotlib.axes.Axes or None, optional
        The axes to draw on (default: new ones).
    title : str or None, optional
        The title.

    Returns
    -------
    matplotlib.axes.Axes
        The axes.

    Raises
    ------
    ValueError
        If ``records`` is empty.
    TypeError
        If a record is not a :class:`~parallel_mcmc.measure.Speedup`.
    """
    records = list(records)
    if not records:
        raise ValueError("records is empty: pass at least one Speedup from timing.speedup().")
    if not all(isinstance(r, Speedup) for r in records):
        raise TypeError("records must be Speedup objects made with timing.speedup().")
    ax = _paired_bars([r.candidate.label for r in records], [r.measured for r in records],
                      [r.ideal for r in records], "ideal", "{:.2f}x", ax, title)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel(f"speedup over {records[0].baseline.label}")
    return ax


def plot_scaling(counts: Sequence[int], seconds: Sequence[float], ideal_seconds: Sequence[float], ax=None,
                 xlabel: str = "devices", title: str | None = None):
    """Measured time against a count (devices, workers), with the ideal time as a line.

    Parameters
    ----------
    counts : sequence of int
        The counts.
    seconds : sequence of float
        The measured time at each count.
    ideal_seconds : sequence of float
        The ideal time at each count.
    ax, title
        As for :func:`plot_speedups`.
    xlabel : str, optional
        The label of the x axis.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If the sequences are empty or of unequal length.
    """
    if not (len(counts) == len(seconds) == len(ideal_seconds)) or not counts:
        raise ValueError(
            f"counts, seconds and ideal_seconds must be non-empty and of equal length, "
            f"got {len(counts)}, {len(seconds)} and {len(ideal_seconds)}."
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.plot(counts, seconds, "o-", label="measured")
    ax.plot(counts, ideal_seconds, "--", color="gray", label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(counts), [str(c) for c in counts])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds (median)")
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_times_vs_ideal(labels: Sequence[str], measured: Sequence[float], ideal: Sequence[float], ax=None,
                        title: str | None = None, ideal_label: str = "ideal"):
    """Bars of measured seconds with the ideal (or predicted) seconds of each beside them, labelled ``ideal_label``.

    Parameters
    ----------
    labels : sequence of str
        The runs' labels.
    measured : sequence of float
        The measured seconds of each.
    ideal : sequence of float
        The ideal (or predicted) seconds of each.
    ax, title : optional
        The axes and title, as :func:`plot_speedups` takes them.
    ideal_label : str, optional
        The legend's label of the ideal bars.

    Returns
    -------
    matplotlib.axes.Axes
        The axes, with the bars.

    Raises
    ------
    ValueError
        As :func:`plot_scaling` raises it, for these sequences.
    """
    if not (len(labels) == len(measured) == len(ideal)) or not labels:
        raise ValueError(
            f"labels, measured and ideal must be non-empty and of equal length, got "
            f"{len(labels)}, {len(measured)} and {len(ideal)}."
        )
    ax = _paired_bars(list(labels), measured, ideal, ideal_label, "{:.2f} s", ax, title)
    ax.set_ylabel("seconds (median)")
    return ax


def plot_sweep(result: Any, sizes: Sequence[float], series: Mapping[str, Callable[[Any], str]], *,
               unit: str = "ms", crossover: tuple[str, str] | None = None, size_scale: float = 1.0, ax=None,
               xlabel: str = "", ylabel: str | None = None, title: str | None = None):
    """A sweep beside its model: each series' measured medians (markers and a line) and predictions (dashed, same
    colour), on log-log axes.

    Parameters
    ----------
    result : parallel_mcmc.measure.Result
        The sweep's measurement (:func:`~parallel_mcmc.measure.measure`).
    sizes : sequence of float
        The sweep's sizes, the x axis.
    series : mapping of str to callable
        ``{label: run name at a size}``, for instance ``{"1 device": lambda n: f"1 device, {n} steps"}``.
    unit : str, optional
        The unit of the y axis: "s", "ms" (the default) or "µs".
    crossover : tuple of (str, str) or None, optional
        ``(candidate label, baseline label)``: a dotted line at the first size where the run measured the
        candidate faster (:meth:`~parallel_mcmc.measure.Result.first_faster`), if there is one.
    size_scale : float, optional
        Each size is drawn at ``size * size_scale`` (1e6 draws seconds as µs).
    ax : matplotlib.axes.Axes or None, optional
        The axes to draw on (default: new ones).
    xlabel, ylabel, title : str, optional
        The axes' labels (the y axis's by default "one run (ms)", in ``unit``) and the title.

    Returns
    -------
    matplotlib.axes.Axes
        The axes, with two lines for every series and the crossover's, if drawn.

    Raises
    ------
    ValueError
        If ``unit`` is not one of the three, ``sizes`` or ``series`` is empty, or ``crossover`` names a label
        that is not in ``series``.
    """
    scales = {"s": 1.0, "ms": 1e3, "µs": 1e6}
    if unit not in scales:
        raise ValueError(f"unit must be one of {sorted(scales)}, got {unit!r}.")
    if not len(sizes) or not series:
        raise ValueError("sizes and series must not be empty: give the sweep's sizes and {label: run name at a size}.")
    if crossover is not None and not set(crossover) <= set(series):
        raise ValueError(f"crossover names {crossover}, but the series are {list(series)}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    x = [size * size_scale for size in sizes]
    for (label, name), marker in zip(series.items(), "osD^v<>"):
        line, = ax.loglog(x, [scales[unit] * result.timings[name(n)].median for n in sizes], marker + "-",
                          label=f"{label}, measured")
        ax.loglog(x, [scales[unit] * result.predicted[name(n)] for n in sizes], "--", color=line.get_color(),
                  label=f"{label}, predicted (best case)")
    if crossover is not None:
        first = result.first_faster(sizes, series[crossover[0]], series[crossover[1]])
        if first is not None:
            ax.axvline(first * size_scale, color="grey", lw=0.8, ls=":", label="measured crossover")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel or f"one run ({unit})")
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def _paired_bars(labels: list[str], measured: Sequence[float], other: Sequence[float], other_label: str,
                 fmt: str, ax, title: str | None):
    """Measured bars, each annotated with ``fmt``, and ``other`` (an ideal, a prediction) in grey beside them."""
    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 + 1.2 * len(labels), 3.2))
    x = np.arange(len(labels))
    ax.bar(x - 0.2, measured, width=0.4, label="measured")
    ax.bar(x + 0.2, other, width=0.4, label=other_label, color="lightgray", edgecolor="gray")
    for xi, m in zip(x, measured):
        ax.annotate(fmt.format(m), (xi - 0.2, m), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels, rotation=15)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_steps_per_draw(steps: Any, ax=None, title: str | None = None, max_chains: int = 8):
    """Integration steps per draw of each chain, with the lockstep (slowest chain) as a dashed line.

    Parameters
    ----------
    steps : array_like
        Integration steps, ``(chain, draw)``.
    ax, title
        The same as in :func:`plot_speedups`.
    max_chains : int, optional
        The chains drawn at most.

    Returns
    -------
    matplotlib.axes.Axes
        The axes, a line a chain.
    """
    steps = steps_2d(steps)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    draws = np.arange(steps.shape[1])
    for c in range(min(steps.shape[0], max_chains)):
        ax.plot(draws, steps[c], lw=0.8, alpha=0.8, label=f"chain {c}")
    ax.plot(draws, steps.max(axis=0), "k--", lw=0.8, label="slowest chain (lockstep)")
    ax.set_xlabel("draw")
    ax.set_ylabel("integration steps")
    ax.set_yscale("log", base=2)
    ax.legend(frameon=False, fontsize=7, ncol=2)
    if title:
        ax.set_title(title)
    return ax

