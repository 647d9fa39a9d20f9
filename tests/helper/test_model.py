"""parallel_mcmc.measure (model.py): the rules of the cost model, on numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc import measure as cm


STEP = cm.StepCost(widths=(1, 2, 4), seconds=(1e-3, 1.5e-3, 2.5e-3))
STEPS = np.array([[1, 7, 3], [3, 1, 15]])  # (chain, draw)


def test_step_cost_interpolates_and_extrapolates():
    assert STEP.at(1) == 1e-3 and STEP.at(3) == pytest.approx(2e-3)
    assert STEP.at(8) == pytest.approx(4.5e-3)  # the slope of the last two widths
    assert STEP.per_chain(4) == pytest.approx(2.5e-3 / 4)
    single = cm.StepCost((1,), (2e-3,))
    assert single.at(1) == 2e-3 and single.at(3) == pytest.approx(6e-3)


def test_step_cost_refuses_nonsense():
    with pytest.raises(ValueError, match="increasing"):
        cm.StepCost((2, 1), (1.0, 1.0))
    with pytest.raises(ValueError, match="equal length"):
        cm.StepCost((1, 2), (1.0,))
    with pytest.raises(ValueError, match="seconds must be a positive"):
        cm.StepCost((1,), (0.0,))


def test_concurrent_is_the_longest_job_or_the_work_over_the_cores():
    assert cm.concurrent([1.0, 1.0], cores=2) == 1.0
    assert cm.concurrent([1.0, 1.0, 1.0, 1.0], cores=2) == 2.0
    assert cm.concurrent([3.0, 1.0], cores=2) == 3.0
    assert cm.concurrent([1.0, 1.0], cores=1) == 2.0  # one core: the jobs take turns
    with pytest.raises(ValueError, match="empty"):
        cm.concurrent([], cores=2)


def test_chain_layouts():
    assert cm.sequential_time(STEPS, STEP) == pytest.approx(30 * 1e-3)
    assert cm.lockstep_time(STEPS, STEP) == pytest.approx(25 * 1.5e-3)
    # two devices, one chain each: the slower device (19 steps) on 2 cores
    assert cm.sharded_time(STEPS, STEP, 2, cores=2) == pytest.approx(19 * 1e-3)
    # on 1 core the devices take turns: all 30 steps
    assert cm.sharded_time(STEPS, STEP, 2, cores=1) == pytest.approx(30 * 1e-3)
    assert cm.sharded_time(STEPS, STEP, 1, cores=2, inner="vmap") == pytest.approx(cm.lockstep_time(STEPS, STEP))
    with pytest.raises(ValueError, match="evenly"):
        cm.sharded_time(STEPS, STEP, 3, cores=2)
    with pytest.raises(ValueError, match="inner must be"):
        cm.sharded_time(STEPS, STEP, 2, cores=2, inner="pmap")


def test_split_call_time_is_the_fixed_cost_then_the_pieces_at_once():
    # two pieces of 3 ms on 2 cores run side by side: 3 ms after a fixed cost of 0.1 ms
    assert cm.split_call_time(3e-3, 2, 2, 1e-4) == pytest.approx(3.1e-3)
    # eight pieces on 2 cores take turns: 4 pieces' work on each core
    assert cm.split_call_time(1e-3, 8, 2, 2e-4) == pytest.approx(4.2e-3)
    # no work: the fixed cost alone, which is why small calls do not pay
    assert cm.split_call_time(0.0, 2, 2, 1e-4) == pytest.approx(1e-4)


def test_split_call_time_refuses_nonsense():
    with pytest.raises(ValueError):
        cm.split_call_time(-1e-3, 2, 2, 0.0)
    with pytest.raises(ValueError):
        cm.split_call_time(1e-3, 0, 2, 0.0)
    with pytest.raises(ValueError):
        cm.split_call_time(1e-3, 2, 2, -1.0)


def test_split_call_time_counts_the_cores_one_piece_keeps_busy():
    # two pieces of 3 ms, each keeping 1.5 of 2 cores busy alone: 9 ms of CPU over 2 cores
    assert cm.split_call_time(3e-3, 2, 2, 1e-4, cores_busy=1.5) == pytest.approx(1e-4 + 4.5e-3)
    # a piece that keeps both cores busy leaves nothing to gain: two pieces take twice one
    assert cm.split_call_time(3e-3, 2, 2, 0.0, cores_busy=2.0) == pytest.approx(6e-3)
    # one core a piece is the concurrent rule; a reading below 1 (a busy machine) counts as 1, above cores as cores
    assert cm.split_call_time(3e-3, 2, 2, 1e-4, cores_busy=1.0) == cm.split_call_time(3e-3, 2, 2, 1e-4)
    assert cm.split_call_time(3e-3, 2, 2, 1e-4, cores_busy=0.6) == pytest.approx(3.1e-3)
    assert cm.split_call_time(3e-3, 2, 2, 0.0, cores_busy=3.0) == pytest.approx(6e-3)
    # with more cores than pieces need, the longest piece decides
    assert cm.split_call_time(3e-3, 2, 8, 0.0, cores_busy=1.5) == pytest.approx(3e-3)
    with pytest.raises(ValueError):
        cm.split_call_time(3e-3, 2, 2, 0.0, cores_busy=0.0)


