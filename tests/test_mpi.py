"""parallel_mcmc.mpi and the MPI chapter's program: the pool closes once, mpiexec is found, and
the program (parallel_mcmc.emcee_mpi) runs with 3 ranks (2 workers) and draws the serial chain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from schwimmbad import MPIPool

from parallel_mcmc import emcee_mpi, mpi

ROOT = Path(__file__).resolve().parents[1]


def run_mpi(tmp_path, name, ranks=3, steps=4):
    out = tmp_path / f"{name}.npz"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    command = [mpi.find_mpiexec(), "-n", str(ranks), sys.executable, "-m", "parallel_mcmc.emcee_mpi", str(out),
               "--steps", str(steps), "--repeats", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    return done, out


@pytest.fixture(scope="module")
def serial_chain():
    return emcee_mpi.run_serial(4, 0.002).get_chain()


def test_mpi_example_with_three_ranks(tmp_path, serial_chain):
    # Twice: schwimmbad's own MPIPool ended with rank 0 killed in about a third of such runs here.
    for attempt in range(2):
        done, out = run_mpi(tmp_path, f"run{attempt}")
        assert done.returncode == 0, f"mpiexec failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        result = np.load(out)
        assert int(result["workers"]) == 2, "3 ranks must give 2 workers (rank 0 is the master)"
        np.testing.assert_array_equal(result["chain"], serial_chain)
        assert result["times"].shape == (1,) and result["times"][0] > 0
        assert result["master_cpu"].shape == (1,)


def test_mpi_pool_needs_two_ranks(tmp_path):
    done, out = run_mpi(tmp_path, "single", ranks=1)
    assert done.returncode != 0
    assert "Need at least two" in done.stderr
    assert not out.exists()


class _FakeComm:
    def __init__(self):
        self.sent = []

    def send(self, obj, dest, tag):
        self.sent.append((obj, dest, tag))


def _fake_pool(cls):
    pool = cls.__new__(cls)  # no MPI: build the master's state by hand
    pool.comm, pool.master, pool.rank, pool.workers, pool.size = _FakeComm(), 0, 0, {1, 2}, 2
    return pool


def test_schwimmbad_closes_twice():
    # The reason for MPIPoolClosingOnce: with + atexit stop each worker twice.
    pool = _fake_pool(MPIPool)
    pool.close()
    MPIPool.close(pool)  # what schwimmbad's atexit hook calls
    assert len(pool.comm.sent) == 4


def test_mpi_pool_closes_once():
    pool = _fake_pool(mpi.MPIPoolClosingOnce)
    pool.close()
    pool.close()
    MPIPool.close(pool)  # the atexit hook finds no workers left
    assert sorted(dest for _, dest, _ in pool.comm.sent) == [1, 2]
    assert all(obj is None for obj, _, _ in pool.comm.sent)


def test_mpi_pool_worker_close_sends_nothing():
    pool = _fake_pool(mpi.MPIPoolClosingOnce)
    pool.rank = 1
    pool.close()
    assert pool.comm.sent == []


def test_find_mpiexec_finds_the_venv_one():
    path = mpi.find_mpiexec()
    assert path.endswith("mpiexec")


def test_find_mpiexec_missing_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(mpi.MPIExecNotFound, match="pip install mpi4py mpich"):
        mpi.find_mpiexec()
