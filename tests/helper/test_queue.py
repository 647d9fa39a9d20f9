"""parallel_mcmc.measure (queue.py): the cost model of a pool of workers, on queues played out by hand."""

from __future__ import annotations

import pytest

from parallel_mcmc import measure as cm


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


# --- emcee_run_time: the one model of an emcee run ---------------------------------------------------------------

from parallel_mcmc.measure import chunked_pool_run_time, emcee_run_time, pool_run_time  # noqa: E402


def test_emcee_run_time_without_a_pool_is_its_own_work_plus_every_call():
    assert emcee_run_time(0.5, [16, 16, 16], 1e-3) == pytest.approx(0.5 + 48e-3)


def test_emcee_run_time_through_a_pool_adds_the_pool_model_to_emcee_alone():
    maps = [16] * 10
    assert emcee_run_time(0.2, maps, 2e-3, 4, 2, overhead_per_task=1e-4, pool_map_chunks=True) == pytest.approx(
        0.2 + pool_run_time(maps, 2e-3, 4, 2, overhead_per_task=1e-4, pool_map_chunks=True))
    assert emcee_run_time(0.2, maps, 2e-3, 3, 2, chunked=True, round_overhead=5e-4) == pytest.approx(
        0.2 + chunked_pool_run_time(maps, 2e-3, 3, 2, round_overhead=5e-4))
    # two workers on two cores halve the calls' time at best, never more
    serial = emcee_run_time(0.0, maps, 2e-3)
    assert serial / emcee_run_time(0.0, maps, 2e-3, 2, 2) == pytest.approx(2.0)


@pytest.mark.parametrize("kwargs, words", [
    ({"emcee_alone": -1.0}, "emcee_alone"),
    ({"workers": -1}, "workers"),
    ({"overhead_per_task": 1e-4}, "no pool"),
    ({"chunked": True}, "no pool"),
    ({"tasks_per_map": []}, "empty"),
])
def test_emcee_run_time_refuses_bad_input_with_a_reason(kwargs, words):
    args = {"emcee_alone": 0.1, "tasks_per_map": [8], "task_seconds": 1e-3, **kwargs}
    with pytest.raises(ValueError, match=words):
        emcee_run_time(**args)
