"""parallel_mcmc.pools (faults.py): the CPU time of a pool's children, page faults per task, and keeping freed memory."""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest

from parallel_mcmc.pools import faults as pool_faults, workers as pools


def test_children_cpu_times_counts_the_workers():
    with mp.get_context("spawn").Pool(1) as pool:  # spawn: the test process may have started JAX
        before = pool_faults.children_cpu_times()
        pool.map(pools.burn_cpu, [0.1])
        used = pool_faults.children_cpu_times() - before
    assert 0.09 <= used.total < 0.5 and used.total == pytest.approx(used.user + used.system)
    assert isinstance(used, pool_faults.CPUTimes) and pool_faults.children_cpu_times().total >= 0.0


def test_call_with_faults_counts_fresh_pages():
    result, faults, seconds = pool_faults.call_with_faults(lambda n: np.ones(n).sum(), 4_000_000)  # 32 MB, fresh pages
    assert result == 4_000_000 and seconds > 0
    assert faults >= 16, f"touching 32 MB of fresh memory took only {faults} minor page faults"  # 2 MB huge pages
    _, few, _ = pool_faults.call_with_faults(abs, -1)
    assert few < faults


def test_call_with_faults_refuses_a_result():
    with pytest.raises(TypeError, match="callable"):
        pool_faults.call_with_faults(3.0)


def test_keep_freed_memory_stops_refaulting_temporaries():
    import functools

    from parallel_mcmc.models import sinusoid

    task = functools.partial(pool_faults.call_with_faults, sinusoid.log_prob)
    walkers = sinusoid.initial_walkers(8, seed=0)
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as plain, ctx.Pool(1, initializer=pool_faults.keep_freed_memory) as kept:
        if not kept.apply(pool_faults.keep_freed_memory):
            pytest.skip("no glibc allocator here")
        kept_faults = [faults for _, faults, _ in kept.map(task, walkers, chunksize=1)]
        plain_faults = [faults for _, faults, _ in plain.map(task, walkers, chunksize=1)]
    assert max(kept_faults[2:]) < 50, f"with the freed memory kept, later tasks still took {kept_faults} page faults"
    # a fresh worker faults in its data on its first task; whether later tasks fault again depends on what the
    # worker's allocator saw before (workers spawned from a Jupyter kernel do, the page shows; from a plain
    # script they may not), so only the first task is asserted here
    assert plain_faults[0] > 500 and kept_faults[0] > 0, (plain_faults, kept_faults)


@pytest.mark.parametrize("bad", [0, 2**31, 1.5])
def test_keep_freed_memory_rejects_bad_sizes(bad):
    with pytest.raises(ValueError):
        pool_faults.keep_freed_memory(bad)
