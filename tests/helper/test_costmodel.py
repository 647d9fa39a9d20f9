"""parallel_mcmc.measure: the rules of the cost model, on numbers worked out by hand."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from parallel_mcmc import measure as cm
from parallel_mcmc.measure.timing import Timing

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


def test_pool_time():
    # 16 tasks of 2 ms on 2 workers, 2 cores: 8 tasks each, 2 rounds
    assert cm.pool_time(16, 2, 2e-3, workers=2, cores=2) == pytest.approx(2 * 16e-3)
    # a master polling on one of two cores leaves one core for both workers
    assert cm.pool_time(16, 2, 2e-3, workers=2, cores=2, master_cores=1.0) == pytest.approx(2 * 32e-3)
    # uneven deal: 5 tasks on 2 workers last 3 task times
    assert cm.pool_time(5, 1, 1.0, workers=2, cores=4) == 3.0
    # sending overlaps the other worker's work, never the receiving worker's own: worker A gets its
    # tasks at 0.1 and 1.2 (after its first task), B at 0.2 and 1.3, so B's last answer is back at 2.3
    assert cm.pool_time(4, 1, 1.0, workers=2, cores=2, overhead_per_task=0.1) == pytest.approx(2.3)
    # one worker overlaps nothing: every send and every task one after another
    assert cm.pool_time(4, 1, 1.0, workers=1, cores=2, overhead_per_task=0.1) == pytest.approx(4.4)
    # no work: the round is all sending, chunk after chunk, whatever the workers (as pool_overhead measures it)
    assert cm.pool_time(16, 1, 0.0, workers=2, cores=2, overhead_per_task=0.1, chunksize=2) == pytest.approx(1.6)
    # sending slower than working: the channel decides; 8 chunks of 2 sent back to back, then the last chunk's work
    assert cm.pool_time(16, 1, 0.05, workers=2, cores=2, overhead_per_task=0.1, chunksize=2) == pytest.approx(1.7)
    # with the data in args and Pool.map's chunks (process_pools): the overlap keeps the round well below the sum
    serial_sum = 8 * 2.1e-3 + 16 * 1.77e-3
    assert cm.pool_time(16, 1, 2.1e-3, workers=2, cores=2, overhead_per_task=1.77e-3, chunksize=2) < 0.8 * serial_sum
    # more workers than cores: the work spread over the cores decides
    assert cm.pool_time(16, 1, 1.0, workers=4, cores=2) == pytest.approx(8.0)
    # the master's own CPU per task takes its turn on the cores: 16 tasks of 1 s and 0.5 s of the master's CPU
    # each on 2 workers and 2 cores last 16 * 1.5 / 2 = 12 s, not the 8 s of the workers' share alone
    assert cm.pool_time(16, 1, 1.0, workers=2, cores=2, master_cpu_per_task=0.5) == pytest.approx(12.0)
    # with a core to spare it costs nothing: 2 workers on 4 cores, the busiest worker's 8 tasks decide
    assert cm.pool_time(16, 1, 1.0, workers=2, cores=4, master_cpu_per_task=0.5) == pytest.approx(8.0)
    # a master CPU small against the sending decides nothing (the process_pools sweep: 100 µs tasks,
    # about 50 µs of overhead and 20-50 µs of the master's CPU a task, chunks of 2)
    kw = dict(workers=2, cores=2, overhead_per_task=50e-6, chunksize=2)
    assert cm.pool_time(16, 1, 100e-6, master_cpu_per_task=30e-6, **kw) == cm.pool_time(16, 1, 100e-6, **kw)
    assert cm.pool_run_time([16, 16], 1.0, workers=2, cores=2, master_cpu_per_task=0.5) == pytest.approx(24.0)
    with pytest.raises(ValueError, match="master_cpu_per_task"):
        cm.pool_time(4, 1, 1.0, workers=2, cores=2, master_cpu_per_task=-1.0)
    with pytest.raises(ValueError, match="chunksize"):
        cm.pool_time(4, 1, 1.0, workers=2, cores=2, chunksize=0)
    with pytest.raises(ValueError, match="leaves none"):
        cm.pool_time(4, 1, 1.0, workers=2, cores=2, master_cores=2)


def test_pool_run_time_adds_one_round_per_map():
    # a map of 32 tasks and two of 16 on 2 workers and 2 cores, 1 ms a task
    assert cm.pool_run_time([32, 16, 16], 1e-3, workers=2, cores=2) == pytest.approx(16e-3 + 8e-3 + 8e-3)
    # one task at a time (an MPI pool) unless Pool.map's chunks are asked for: 16 tasks on 2 workers, chunks of 2
    kw = dict(workers=2, cores=2, overhead_per_task=1e-4)
    assert cm.pool_run_time([16], 1e-3, **kw) == pytest.approx(cm.pool_time(16, 1, 1e-3, 2, 2, overhead_per_task=1e-4))
    assert cm.pool_run_time([16], 1e-3, pool_map_chunks=True, **kw) == pytest.approx(
        cm.pool_time(16, 1, 1e-3, 2, 2, overhead_per_task=1e-4, chunksize=2))
    # a master that keeps one of the two cores leaves the workers one: all 16 ms of work on it, not 8 ms each
    assert cm.pool_run_time([16], 1e-3, master_cores=1.0, workers=2, cores=2) == pytest.approx(16e-3)
    with pytest.raises(ValueError, match="empty"):
        cm.pool_run_time([], 1e-3, workers=2, cores=2)


def test_map_chunksize_is_pool_maps(monkeypatch):
    import multiprocessing.pool

    seen = []
    get_tasks = multiprocessing.pool.Pool._get_tasks
    monkeypatch.setattr(
        multiprocessing.pool.Pool, "_get_tasks", staticmethod(lambda f, it, size: seen.append(size) or get_tasks(f, it, size))
    )
    for tasks, workers in [(16, 2), (32, 2), (16, 4), (5, 2), (1, 8), (100, 3)]:
        with multiprocessing.pool.ThreadPool(workers) as pool:
            pool.map(abs, range(tasks))  # Pool.map picks the chunk size itself
        assert seen[-1] == cm.map_chunksize(tasks, workers), (tasks, workers)
    assert cm.map_chunksize(16, 2) == 2
    with pytest.raises(ValueError):
        cm.map_chunksize(0, 2)


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


class _SlowMap:
    """A pool whose map costs a fixed 2 ms per task, whatever the function."""

    def __init__(self):
        self.maps = 0

    def map(self, fn, tasks):
        import time

        self.maps += 1
        end = time.perf_counter() + 2e-3 * len(tasks)
        while time.perf_counter() < end:
            pass
        return [fn(t) for t in tasks]


def test_pool_overhead_is_the_map_time_per_task():
    pool = _SlowMap()
    per_task = cm.pool_overhead(pool, abs, range(5), repeats=3)
    assert pool.maps == 4  # one untimed map, then the repeats
    assert 2e-3 <= per_task < 4e-3


def test_pool_overhead_refuses_nonsense():
    with pytest.raises(ValueError, match="tasks is empty"):
        cm.pool_overhead(_SlowMap(), abs, [])
    with pytest.raises(TypeError, match="map method"):
        cm.pool_overhead(object(), abs, [1])




def test_collective_calls_time_a_collective_between_work_and_the_work_alone():
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    mesh = jax.make_mesh((2,), ("d",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    local = jax.device_put(jnp.ones(4), NamedSharding(mesh, PartitionSpec("d")))
    calls = cm.collective_calls(lambda v: jax.lax.psum(v, "d"), mesh, "d", local, calls=3, work=2)
    assert set(calls) == {"collective between work", "work alone"}
    programs = {name: fn.lower(*args).compile().as_text() for name, (fn, *args) in calls.items()}
    # the loops hold what they say: one all-reduce in the loop with the collective, none in the work alone,
    # and the work in both (its sine was not dropped as unused)
    assert "all-reduce" in programs["collective between work"] and "all-reduce" not in programs["work alone"]
    assert all("sine" in text for text in programs.values())
    assert all(fn(*args).shape == (4,) for fn, *args in calls.values())
    timings = {"collective between work": Timing("a", (0.010, 0.012), 0.02), "work alone": Timing("b", (0.004, 0.005), 0.01)}
    assert cm.collective_cost(timings, calls=3) == pytest.approx(0.002)
    timings["work alone"] = Timing("b", (0.020,), 0.02)  # noise: never a negative cost
    assert cm.collective_cost(timings, calls=3) == 0.0
    with pytest.raises(KeyError, match="work alone"):
        cm.collective_cost({"collective between work": timings["collective between work"]})
    with pytest.raises(ValueError):
        cm.collective_calls(lambda v: v, mesh, "d", local, calls=0)


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


def test_chunked_pool_run_time_is_the_fixed_cost_then_the_largest_chunk_of_each_map():
    # 16 tasks of 1 ms over 2 ranks: 8 ms a map, after 0.5 ms of fixed cost; 32 tasks: 16 ms
    assert cm.chunked_pool_run_time([32, 16, 16], 1e-3, 2, 2, round_overhead=5e-4) == pytest.approx(
        16.5e-3 + 2 * 8.5e-3)
    # 15 tasks over 2 ranks: the larger chunk has 8
    assert cm.chunked_pool_run_time([15], 1e-3, 2, 2) == pytest.approx(8e-3)
    # 4 ranks on 2 cores share them: the work over the cores decides, not the chunk
    assert cm.chunked_pool_run_time([16], 1e-3, 4, 2) == pytest.approx(8e-3)
    # no work: the fixed cost alone, once a map
    assert cm.chunked_pool_run_time([16] * 3, 0.0, 2, 2, round_overhead=1e-3) == pytest.approx(3e-3)
    # one rank is a serial run
    assert cm.chunked_pool_run_time([16], 1e-3, 1, 2) == pytest.approx(16e-3)


def test_chunked_pool_run_time_refuses_nonsense():
    with pytest.raises(ValueError):
        cm.chunked_pool_run_time([], 1e-3, 2, 2)
    with pytest.raises(ValueError):
        cm.chunked_pool_run_time([16], 1e-3, 0, 2)
    with pytest.raises(ValueError):
        cm.chunked_pool_run_time([16], 1e-3, 2, 2, round_overhead=-1.0)


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
