"""parallel_mcmc.measure (prediction.py): a measured time beside its prediction, and where a speedup first rises above 1."""

from __future__ import annotations

import pytest

from parallel_mcmc import measure as cm
from parallel_mcmc.measure.timing import Timing


def test_prediction_ratios():
    fast = Timing("parallel", (1.0, 1.1, 0.9), first_call=3.0)
    p = cm.predict(fast, 0.8, "two devices")
    assert p.ratio == pytest.approx(0.8) and p.spread == pytest.approx(0.2)
    assert "predicted/measured 0.80" in str(p) and "two devices" in str(p)
    # a lower bound looks at the fastest repeat: one disturbed repeat does not make a method slow
    disturbed = cm.predict(Timing("disturbed", (1.0, 2.5, 2.6), first_call=3.0), 1.0)
    assert disturbed.ratio == pytest.approx(1.0 / 2.5) and disturbed.fastest_ratio == pytest.approx(1.0)
    with pytest.raises(TypeError, match="Timing"):
        cm.predict(1.0, 0.5)
    with pytest.raises(ValueError):
        cm.predict(fast, 0.0)


def test_crossover_interpolates_where_the_speedup_first_rises_above_one():
    # from 0.5 at 100 to 2 at 10,000: 1 lies halfway in log size and log speedup, at 1,000
    assert cm.crossover([100, 10_000], [0.5, 2.0]) == pytest.approx(1_000)
    # the first rise counts, not a later one, nor the sizes where it stays below 1
    assert cm.crossover([1, 10, 100, 1_000], [0.2, 0.5, 2.0, 0.8]) == pytest.approx(10 * 10**0.5)
    # exactly 1 is no gain
    assert cm.crossover([1, 10], [1.0, 1.0]) is None
    # above 1 from the first size: the crossover lies at or below it
    assert cm.crossover([10, 100], [1.2, 1.5]) == 10
    # never above 1
    assert cm.crossover([10, 100, 1_000], [0.3, 0.9, 0.99]) is None


def test_crossover_refuses_nonsense():
    with pytest.raises(ValueError):
        cm.crossover([], [])
    with pytest.raises(ValueError):
        cm.crossover([1, 10], [0.5])
    with pytest.raises(ValueError):
        cm.crossover([10, 1], [0.5, 2.0])
    with pytest.raises(ValueError):
        cm.crossover([1, 10], [0.0, 2.0])
