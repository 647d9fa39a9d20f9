"""parallel_mcmc.pools: schwimmbad's pool closes once, the sharing pool returns every task's result in order
whatever the number of ranks, and mpiexec is found. The MPI chapter's program, which runs these pools under
mpiexec, is tested in test_emcee_mpi.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from schwimmbad import MPIPool

from parallel_mcmc import pools



@pytest.mark.parametrize("ranks", [2, 4])
def test_sharing_pool_keeps_order_with_any_number_of_ranks(tmp_path, ranks):
    out = tmp_path / "report.json"
    command = [pools.find_mpiexec(), "-n", str(ranks), sys.executable,
               str(Path(__file__).with_name("mpi_sharing_pool_program.py")), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", f"exit {done.returncode}:\n{done.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert report["size"] == ranks
    for n, answers in report["maps"].items():
        n = int(n)
        assert [x for x, _ in answers] == list(range(n)), "results must come back in the order of the tasks"
        chunks = pools.contiguous_chunks(list(range(n)), ranks)
        # chunk i goes to rank i + 1; the last chunk is the master's (rank 0)
        expected = {x: (i + 1) % ranks for i, chunk in enumerate(chunks) for x in chunk}
        assert [rank for _, rank in answers] == [expected[x] for x in range(n)]
    assert report["worker_error"].startswith("MPIWorkerError: A task raised an exception on rank 1")
    assert "task 0 failed on purpose" in report["worker_error"]
    assert report["master_error"] == "ZeroDivisionError: task 7 failed on purpose"
    assert report["after_errors"] == [1, 2, 3], "a failed map must leave no answers behind for the next one"
    assert "closed" in report["closed"]


def test_contiguous_chunks_are_in_order_and_nearly_equal():
    items = list(range(7))
    chunks = pools.contiguous_chunks(items, 3)
    assert chunks == [[0, 1, 2], [3, 4], [5, 6]]
    assert pools.contiguous_chunks(items, 1) == [items]
    assert pools.contiguous_chunks([1, 2], 4) == [[1], [2], [], []]
    assert pools.contiguous_chunks([], 2) == [[], []]
    for parts in range(1, 10):
        chunks = pools.contiguous_chunks(list(range(23)), parts)
        assert sum(chunks, []) == list(range(23))
        assert max(map(len, chunks)) - min(map(len, chunks)) <= 1
    with pytest.raises(ValueError, match="parts"):
        pools.contiguous_chunks(items, 0)


def test_evaluate_chunk_returns_the_error_instead_of_raising():
    assert pools.evaluate_chunk(abs, [-1, 2]) == (True, [1, 2])
    ok, text = pools.evaluate_chunk(int, ["3", "x"])
    assert not ok and "ValueError" in text and "invalid literal" in text


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
    pool = _fake_pool(pools.MPIPoolClosingOnce)
    pool.close()
    pool.close()
    MPIPool.close(pool)  # the atexit hook finds no workers left
    assert sorted(dest for _, dest, _ in pool.comm.sent) == [1, 2]
    assert all(obj is None for obj, _, _ in pool.comm.sent)


def test_mpi_pool_worker_close_sends_nothing():
    pool = _fake_pool(pools.MPIPoolClosingOnce)
    pool.rank = 1
    pool.close()
    assert pool.comm.sent == []


def test_sharing_pool_closes_once():
    pool = pools.SharingMPIPool.__new__(pools.SharingMPIPool)  # no MPI: the master's state by hand
    pool.comm, pool.master, pool.rank, pool.size, pool._open = _FakeComm(), 0, 0, 3, True
    pool.close()
    pool.close()  # the with block, then the atexit hook
    assert [(obj, dest) for obj, dest, _ in pool.comm.sent] == [(None, 1), (None, 2)]
    with pytest.raises(RuntimeError, match="closed"):
        pool.map(abs, [1])


def test_find_mpiexec_finds_the_venv_one():
    path = pools.find_mpiexec()
    assert path.endswith("mpiexec")


def test_find_mpiexec_missing_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pools.MPIExecNotFound, match="pip install mpi4py mpich"):
        pools.find_mpiexec()
