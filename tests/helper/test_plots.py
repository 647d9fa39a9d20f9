"""parallel_mcmc.measure: speedup and scaling plots, and their input checks."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from parallel_mcmc.measure.plots import plot_scaling, plot_speedups, plot_steps_per_draw, plot_times_vs_ideal
from parallel_mcmc.measure.timing import Timing, speedup


def test_speedup_bars_show_measured_and_ideal():
    base = Timing("1 device", (2.0,), first_call=2.0)
    records = [speedup(base, Timing(f"{k} devices", (2.0 / k,), first_call=1.0), ideal=k) for k in (2, 4)]
    ax = plot_speedups(records, title="t")
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [2.0, 2.0, 4.0, 4.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2 devices", "4 devices"]


def test_speedup_bars_reject_bad_input():
    with pytest.raises(ValueError, match="empty"):
        plot_speedups([])
    with pytest.raises(TypeError, match="Speedup"):
        plot_speedups([1.5])


def test_scaling_plot_has_both_lines():
    ax = plot_scaling([1, 2, 4], [4.0, 2.5, 2.0], [4.0, 2.0, 2.0])
    measured, ideal = ax.get_lines()
    assert list(measured.get_ydata()) == [4.0, 2.5, 2.0] and list(ideal.get_ydata()) == [4.0, 2.0, 2.0]


def test_scaling_plot_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="equal length"):
        plot_scaling([1, 2], [1.0], [1.0, 0.5])


def test_time_bars_show_measured_and_ideal():
    ax = plot_times_vs_ideal(["a", "b"], [1.0, 2.0], [1.0, 0.5])
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.5, 1.0, 1.0, 2.0]
    labelled = plot_times_vs_ideal(["a"], [1.0], [0.8], ideal_label="predicted")
    assert [t.get_text() for t in labelled.get_legend().get_texts()] == ["measured", "predicted"]
    with pytest.raises(ValueError, match="equal length"):
        plot_times_vs_ideal(["a"], [1.0, 2.0], [1.0])


def test_plot_steps_per_draw():
    import matplotlib

    matplotlib.use("Agg")
    ax = plot_steps_per_draw(np.array([[1, 7, 3], [3, 1, 15]]))
    assert len(ax.lines) == 3


def test_sweep_plot_draws_each_series_measured_and_predicted_and_the_measured_crossover():
    from test_experiment import sweep_of_programs

    from parallel_mcmc.measure.plots import plot_sweep

    result = sweep_of_programs()
    sizes = (1, 2, 4, 8)
    ax = plot_sweep(result, sizes, {"serial": lambda n: f"serial, {n}", "parallel": lambda n: f"parallel, {n}"},
                    crossover=("parallel", "serial"), xlabel="n", title="t")
    serial_measured, serial_predicted, parallel_measured, parallel_predicted, crossing = ax.get_lines()
    assert np.allclose(serial_measured.get_ydata(), [100, 200, 400, 800], rtol=0.05)  # medians, in ms
    assert np.allclose(parallel_predicted.get_ydata(), [100, 150, 250, 450])
    assert serial_measured.get_color() == serial_predicted.get_color() != parallel_measured.get_color()
    assert list(crossing.get_xdata()) == [4, 4]  # measured faster from 4 on
    assert [t.get_text() for t in ax.get_legend().get_texts()][-1] == "measured crossover"
    assert ax.get_ylabel() == "one run (ms)"
    no_crossing = plot_sweep(result, (1, 2), {"serial": lambda n: f"serial, {n}",
                                              "parallel": lambda n: f"parallel, {n}"}, crossover=("parallel", "serial"))
    assert len(no_crossing.get_lines()) == 4
    for kwargs, words in (({"unit": "min"}, "unit"), ({"crossover": ("a", "serial")}, "crossover")):
        with pytest.raises(ValueError, match=words):
            plot_sweep(result, sizes, {"serial": lambda n: f"serial, {n}"}, **kwargs)
    with pytest.raises(ValueError, match="empty"):
        plot_sweep(result, [], {"serial": lambda n: f"serial, {n}"})
