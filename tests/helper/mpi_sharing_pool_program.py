"""Run by tests/helper/test_mpi.py under ``mpiexec -n N``: puts SharingMPIPool through its paces, writes what it saw as JSON.

Every rank runs this file as ``__main__``, so the functions below unpickle on every rank.
"""

import json
import sys

from mpi4py import MPI

from parallel_mcmc.pools.sharing import MPIWorkerError, SharingMPIPool


def task_and_rank(x):
    return [x, MPI.COMM_WORLD.Get_rank()]


def fails_on_first(x):
    if x == 0:  # the first chunk goes to rank 1
        raise ValueError("task 0 failed on purpose")
    return x


def fails_on_last(x):
    if x == 7:  # the last chunk is the master's own
        raise ZeroDivisionError("task 7 failed on purpose")
    return x


def main(out):
    report = {}
    with SharingMPIPool() as pool:
        report["size"] = pool.size
        report["maps"] = {n: pool.map(task_and_rank, range(n)) for n in (0, 1, 2, 5, 7, 16)}
        for name, func in (("worker_error", fails_on_first), ("master_error", fails_on_last)):
            try:
                pool.map(func, range(8))
                report[name] = None
            except (MPIWorkerError, ZeroDivisionError) as error:
                report[name] = f"{type(error).__name__}: {error}"
        report["after_errors"] = pool.map(abs, [-1, -2, -3])
    pool.close()  # a second close sends nothing
    try:
        pool.map(abs, [1])
        report["closed"] = None
    except RuntimeError as error:
        report["closed"] = str(error)
    with open(out, "w") as file:
        json.dump(report, file)


if __name__ == "__main__":
    main(sys.argv[1])
