"""parallel_mcmc.programs.emcee_mpi, the MPI chapter's program: its pieces in this process (fixed starting points and
random state, the serial reference chain, one CPU clock per rank, the command line), then the program under
mpiexec, which draws the serial chain at every cost it is given with 3 ranks of schwimmbad's pool (2 workers and a
master), with 2 ranks of the sharing pool (2 workers, the master one of them) and with 3 ranks of mpi4py's
MPIPoolExecutor, saves the calibration of the cost model, and refuses to run on one rank."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from parallel_mcmc import pools
from parallel_mcmc.pools import emcee_tasks
from parallel_mcmc.programs import emcee_mpi



# ---------------------------------------------------------------- in this process


class SerialPool:
    """A pool that maps in this process, with the size of an MPI pool of two evaluating ranks."""

    size = 2

    def map(self, func, iterable):
        return [func(x) for x in iterable]


def test_initial_walkers_are_fixed_by_the_seed():
    walkers = emcee_tasks.initial_walkers()
    assert walkers.shape == (emcee_tasks.NUM_WALKERS, emcee_tasks.NUM_DIM) == (32, 5)
    np.testing.assert_array_equal(walkers, emcee_tasks.initial_walkers())
    assert emcee_tasks.initial_walkers(8, 3, seed=1).shape == (8, 3)
    assert not np.allclose(emcee_tasks.initial_walkers(seed=1), walkers)
    assert abs(walkers.mean()) < 0.3 and 0.8 < walkers.std() < 1.2  # standard normal draws


def test_random_state_restarts_numpys_legacy_generator():
    state = emcee_tasks.random_state()
    generator = np.random.RandomState()
    generator.set_state(state)
    np.testing.assert_array_equal(generator.uniform(size=4), np.random.RandomState(7).uniform(size=4))
    assert emcee_tasks.random_state(8)[1].tolist() != state[1].tolist()


def test_serial_runs_draw_the_same_chain():
    first = emcee_tasks.run_serial(2, cost=0.0)
    chain = first.get_chain()
    assert chain.shape == (2, emcee_tasks.NUM_WALKERS, emcee_tasks.NUM_DIM)
    np.testing.assert_array_equal(chain, emcee_tasks.run_serial(2, cost=0.0).get_chain())
    assert np.all((first.acceptance_fraction >= 0) & (first.acceptance_fraction <= 1))
    # the chain starts from initial_walkers: the first step moves some walkers away from their start, keeps others
    moved = np.any(chain[0] != emcee_tasks.initial_walkers(), axis=1)
    assert 0 < moved.sum() <= emcee_tasks.NUM_WALKERS


def test_a_pool_draws_the_serial_chain_and_is_asked_for_half_ensembles():
    counted = pools.CountingPool(SerialPool())
    sampler = emcee_tasks.run_sampler(counted, 3, cost=0.0)
    np.testing.assert_array_equal(sampler.get_chain(), emcee_tasks.run_serial(3, cost=0.0).get_chain())
    assert counted.tasks_per_map == [32] + [16] * 6  # the start, then two half-ensembles a step


def test_cpu_by_rank_reads_one_clock_per_rank():
    asked = []

    class Clocks(SerialPool):
        def map(self, func, iterable):
            asked.append((func, list(iterable)))
            return [(1, 0.5), (2, 0.75)]

    assert emcee_tasks.cpu_by_rank(Clocks()) == {1: 0.5, 2: 0.75}
    assert asked == [(emcee_tasks.rank_cpu_time, [0.05, 0.05])]  # one pausing task per rank


def test_cpu_by_rank_says_when_a_rank_answered_twice():
    class Busy(SerialPool):
        def map(self, func, iterable):
            return [(1, 0.5), (1, 0.6)]  # one rank took both tasks

    with pytest.raises(RuntimeError, match=r"one CPU clock from each of 2 ranks, got ranks \[1\]"):
        emcee_tasks.cpu_by_rank(Busy())


def test_the_pools_the_command_line_offers():
    chunks = emcee_mpi.POOLS["mpi4py_chunks"]
    assert chunks.func is pools.FuturesPool and chunks.keywords == {"chunked": True}
    assert {name: pool for name, pool in emcee_mpi.POOLS.items() if name != "mpi4py_chunks"} == {
        "schwimmbad": pools.MPIPoolClosingOnce, "sharing": pools.SharingMPIPool, "mpi4py": pools.FuturesPool}


def test_the_chunked_executor_wants_a_bool():
    with pytest.raises(TypeError, match="chunked must be True or False, got 'yes'"):
        pools.FuturesPool(chunked="yes")


def test_task_function_is_emcees_wrapper_with_the_data_in_args():
    import pickle

    from emcee.ensemble import _FunctionWrapper

    plain, data = emcee_tasks.task_function(0.0), emcee_tasks.data_for(80_000)
    with_data = emcee_tasks.task_function(0.0, data)
    assert isinstance(plain, _FunctionWrapper) and plain.args == [] and plain.kwargs == {"cost": 0.0}
    assert with_data.args[0] is data and data.nbytes == 80_000 and data.shape[1] == emcee_tasks.NUM_DIM
    theta = emcee_tasks.initial_walkers()[0]
    assert plain(theta) == pools.busy_log_prob(theta, 0.0)
    assert with_data(theta) == pools.log_prob_with_data(theta, data, 0.0)
    # the data travel in every pickled task; without them a task is a few hundred bytes
    assert len(pickle.dumps((with_data, theta))) > data.nbytes > 100 * len(pickle.dumps((plain, theta)))
    np.testing.assert_array_equal(emcee_tasks.data_for(80_000), data)  # fixed data


def test_uneven_costs_put_the_work_in_the_first_half():
    assert emcee_tasks.uneven_costs(4, 1e-3) == [1e-3, 1e-3, 0.0, 0.0]
    assert emcee_tasks.uneven_costs(5, 2e-3) == [2e-3, 2e-3, 0.0, 0.0, 0.0]
    assert emcee_tasks.uneven_costs(16) == [emcee_tasks.UNEVEN_COST] * 8 + [0.0] * 8


def test_main_refuses_negative_costs(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        emcee_mpi.main([str(tmp_path / "out.npz"), "--data-bytes=-5"])
    assert info.value.code == 2 and "must not be negative" in capsys.readouterr().err


def test_main_refuses_an_unknown_pool(capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        emcee_mpi.main([str(tmp_path / "out.npz"), "--pool", "threads"])
    assert info.value.code == 2
    assert "invalid choice: 'threads'" in capsys.readouterr().err
    assert not (tmp_path / "out.npz").exists()


# ---------------------------------------------------------------- the program under mpiexec


COSTS = (0.0005, 0.002)


def run_mpi(tmp_path, name, ranks=3, steps=4, pool="schwimmbad", launcher=True, data_bytes=0):
    out = tmp_path / f"{name}.npz"
    command = [sys.executable, *(["-m", "mpi4py.futures"] if pool.startswith("mpi4py") else []), "-m",
               "parallel_mcmc.programs.emcee_mpi", str(out), "--pool", pool, "--steps", str(steps), "--repeats", "1",
               "--costs", *map(str, COSTS), "--data-bytes", str(data_bytes)]
    if launcher:
        command = [pools.find_mpiexec(), "-n", str(ranks)] + command
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    return done, out


@pytest.fixture(scope="module")
def serial_chains():
    return [emcee_tasks.run_serial(4, c).get_chain() for c in COSTS]


def check_saved(result, pool, serial_chains, ranks):
    assert str(result["pool"]) == pool
    assert int(result["workers"]) == 2
    np.testing.assert_array_equal(result["costs"], COSTS)
    for chain, serial in zip(result["chains"], serial_chains, strict=True):
        np.testing.assert_array_equal(chain, serial)
    assert result["times"].shape == result["master_cpu"].shape == (len(COSTS), 1) and np.all(result["times"] > 0)
    assert result["first_time"].shape == (len(COSTS),)
    assert list(result["tasks_per_map"]) == [32] + [16] * 8  # the start, then two half-ensembles a step
    assert int(result["log_prob_calls"]) == emcee_tasks.NUM_WALKERS * (4 + 1)
    assert int(result["round_tasks"]) == 16 and result["no_work_round"].shape == (1,)
    # a round of tasks that do no work is far shorter than a run
    assert 0 < result["no_work_round"][0] < result["times"].min()
    assert result["uneven_costs"].tolist() == emcee_tasks.uneven_costs(16)
    # the uneven round has 8 ms of work: two workers need at least 4 ms of it
    assert result["uneven_round"][0] >= 0.004
    assert list(result["ranks"]) == ranks and np.all(result["rank_cpu"] > 0)
    assert float(result["timed_seconds"]) >= result["times"].sum() + result["no_work_round"].sum()
    assert float(result["master_cpu_total"]) > 0


def test_mpi_example_with_three_ranks(tmp_path, serial_chains):
    # Twice: schwimmbad's own MPIPool ended with rank 0 killed in about a third of such runs here.
    for attempt in range(2):
        done, out = run_mpi(tmp_path, f"run{attempt}", data_bytes=40_000 * attempt)
        assert done.returncode == 0, f"mpiexec failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        result = np.load(out)
        check_saved(result, "schwimmbad", serial_chains, ranks=[1, 2])
        if attempt:  # the data travel with each task
            assert int(result["data_bytes"]) == 40_000 < int(result["data_task_bytes"])
            assert result["data_round"].shape == (1,) and result["data_round"][0] > 0
        else:
            assert int(result["data_bytes"]) == 0 and result["data_round"].shape == (0,)


def test_mpi_example_sharing_pool_with_two_ranks(tmp_path, serial_chains):
    done, out = run_mpi(tmp_path, "sharing", ranks=2, pool="sharing")
    assert done.returncode == 0, f"mpiexec failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert done.stderr == "", done.stderr[-2000:]
    result = np.load(out)
    check_saved(result, "sharing", serial_chains, ranks=[0, 1])
    assert 0 <= float(result["master_wait_cpu"]) and 0 <= float(result["master_wait_seconds"]) < result["timed_seconds"]
    # the sharing pool's fixed chunks: all 8 ms of the uneven round fall on one rank
    assert result["uneven_round"][0] >= 0.008


def test_mpi_example_with_mpi4pys_pool_executor(tmp_path, serial_chains):
    done, out = run_mpi(tmp_path, "futures", ranks=3, pool="mpi4py")
    assert done.returncode == 0, f"mpiexec failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    result = np.load(out)
    check_saved(result, "mpi4py", serial_chains, ranks=[1, 2])
    assert np.isnan(float(result["master_wait_seconds"]))  # only the sharing pool counts its waiting


def test_mpi_example_with_the_executor_sending_chunks(tmp_path, serial_chains):
    done, out = run_mpi(tmp_path, "chunks", ranks=3, pool="mpi4py_chunks")
    assert done.returncode == 0, f"mpiexec failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    result = np.load(out)
    check_saved(result, "mpi4py_chunks", serial_chains, ranks=[1, 2])
    # fixed chunks, as the sharing pool's: all 8 ms of the uneven round fall on one worker
    assert result["uneven_round"][0] >= 0.008


def test_sharing_pool_needs_two_ranks(tmp_path):
    done, out = run_mpi(tmp_path, "alone", pool="sharing", launcher=False)  # started without mpiexec
    assert done.returncode != 0
    assert "mpiexec -n 2" in done.stderr, done.stderr[-2000:]
    assert not out.exists()


def test_mpi_pool_needs_two_ranks(tmp_path):
    done, out = run_mpi(tmp_path, "single", ranks=1)
    assert done.returncode != 0
    assert "Need at least two" in done.stderr
    assert not out.exists()
