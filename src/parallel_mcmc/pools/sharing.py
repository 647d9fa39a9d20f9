"""An MPI pool whose master shares the work: every map cut into one contiguous chunk per rank, the master evaluating its own, and the ranks waiting for messages without spinning a core."""

from __future__ import annotations

import atexit
import sys
import time
import traceback
from typing import Any, Callable, Iterable, Sequence

from schwimmbad.pool import BasePool

from parallel_mcmc._validate import real_number, whole_number


def _mpi():
    # Importing mpi4py.MPI starts MPI in this process, so it happens only when a pool is made.
    from mpi4py import MPI

    return MPI


__all__ = [
    "IDLE_SLEEP", "MPIWorkerError", "contiguous_chunks", "wait_for_message", "evaluate_chunk", "SharingMPIPool",
]


# Message tags of SharingMPIPool.
_TASKS, _STOP, _ANSWER = 1, 2, 3

#: Seconds a waiting rank of :class:`SharingMPIPool` sleeps between two looks at its mailbox.
IDLE_SLEEP = 2e-4


class MPIWorkerError(RuntimeError):
    """A log-probability (or other task) raised an exception on another rank; the message holds its traceback."""


def contiguous_chunks(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    """Cut ``items`` into ``parts`` consecutive chunks whose lengths differ by at most one.

    The longer chunks come first; with fewer items than parts the last chunks
    are empty. Joining the chunks in order gives ``items`` back.

    Parameters
    ----------
    items : sequence
        The items.
    parts : int
        The number of chunks (at least 1).

    Returns
    -------
    list of sequence
        The chunks, in order.

    Raises
    ------
    ValueError
        If ``parts`` is not a whole number >= 1.
    """
    whole_number("parts", parts, 1)
    size, extra = divmod(len(items), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [items[bounds[i] : bounds[i + 1]] for i in range(parts)]


def wait_for_message(comm: Any, source: int, tag: int, sleep: float = IDLE_SLEEP) -> Any:
    """Wait without spinning for a message from ``source`` (any tag if ``tag`` is ``MPI.ANY_TAG``).

    MPICH's blocking receive polls the network in a loop and keeps a core
    busy for as long as it waits. This asks MPI whether a message has arrived
    (``Iprobe``) and, while none has, sleeps ``sleep`` seconds between two
    asks, so the core goes to a rank that has work.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    source : int
        The rank to wait for.
    tag : int
        The tag to wait for.
    sleep : float, optional
        Seconds between two asks.

    Returns
    -------
    mpi4py.MPI.Status
        The probe's status (its ``tag`` says which kind of message came); the message itself is still to be
        received.
    """
    status = _mpi().Status()
    while not comm.Iprobe(source=source, tag=tag, status=status):
        time.sleep(sleep)
    return status


def evaluate_chunk(func: Callable[[Any], Any], chunk: Iterable[Any]) -> tuple[bool, Any]:
    """``(True, [func(x) for x in chunk])``, or ``(False, traceback)`` if ``func`` raised: what a worker sends back.

    Parameters
    ----------
    func : callable
        The task function.
    chunk : iterable
        The tasks.

    Returns
    -------
    tuple of (bool, Any)
        Whether every task succeeded, and the results or the traceback.
    """
    try:
        return True, [func(task) for task in chunk]
    except Exception:
        return False, traceback.format_exc()


class SharingMPIPool(BasePool):
    """An MPI pool for emcee in which the master shares the work: ``mpiexec -n k`` gives ``k`` workers.

    Every rank evaluates tasks. ``map(func, tasks)`` cuts the tasks into
    ``size`` consecutive chunks (:func:`contiguous_chunks`), sends each of the
    ranks 1..k-1 its whole chunk in one message, evaluates the last chunk on
    rank 0 (never longer than the others: the master also does the messaging),
    then collects the other chunks' answers in order. A rank that
    waits for a message sleeps between looks at its mailbox
    (:func:`wait_for_message`), so waiting keeps no core busy and the ranks
    that compute have the cores to themselves.

    As with schwimmbad's pools, the same program runs on every rank: on ranks
    1..k-1 the constructor never returns; it evaluates chunks until the master
    closes the pool (at the end of its ``with`` block, or at exit), then ends
    the process with ``sys.exit(0)``. Only rank 0 goes on, and only it may
    call :meth:`map`. ``size`` is the number of ranks that evaluate tasks, the
    master included.

    ``wait_seconds`` and ``wait_cpu`` add up the wall-clock and CPU seconds
    the master spent waiting for the other ranks' answers: their ratio is the
    cores its waiting kept busy.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm or None, optional
        The communicator (default: ``MPI.COMM_WORLD``).
    idle_sleep : float, optional
        Seconds a waiting rank sleeps between looks at its mailbox.
    """

    def __init__(self, comm: Any = None, idle_sleep: float = IDLE_SLEEP):
        self.comm = _mpi().COMM_WORLD if comm is None else comm
        self.master = 0
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.idle_sleep = real_number("idle_sleep", idle_sleep, above=0, of=" of seconds")
        self.wait_seconds = 0.0
        self.wait_cpu = 0.0
        if self.size < 2:
            raise ValueError(
                "SharingMPIPool needs at least 2 MPI ranks, but this program runs as a single process. "
                "Start it with MPI's launcher, for example `mpiexec -n 2 python your_program.py` "
                "(with this pool every rank, the master included, evaluates tasks: `-n 2` gives 2 workers)."
            )
        self._open = True
        if self.is_worker():
            try:
                self.wait()
            except Exception:  # a broken message: stop every rank rather than hang
                traceback.print_exc()
                sys.stderr.flush()
                self.comm.Abort(1)
            sys.exit(0)
        atexit.register(self.close)  # stop the workers even if the program forgets to

    def wait(self) -> None:
        """On a worker: evaluate the chunks the master sends until it says stop. On the master: return at once."""
        if self.is_master():
            return
        while True:
            status = wait_for_message(self.comm, self.master, _mpi().ANY_TAG, self.idle_sleep)
            message = self.comm.recv(source=self.master, tag=status.Get_tag())
            if status.Get_tag() == _STOP:
                return
            func, chunk = message
            self.comm.send(evaluate_chunk(func, chunk), dest=self.master, tag=_ANSWER)

    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any]) -> list[Any]:
        """``[func(x) for x in iterable]``, evaluated in one chunk per rank; the results in the order of the tasks.

        Parameters
        ----------
        func, iterable
            The task function and the tasks, as :meth:`parallel_mcmc.pools.CountingPool.map` takes them.

        Returns
        -------
        list
            The results, task by task.

        Raises
        ------
        RuntimeError
            If called on a worker, or after the pool is closed.
        MPIWorkerError
            If a task raised on another rank.
        """
        if not self.is_master():
            raise RuntimeError(f"map() runs on the master (rank 0) only; this is rank {self.rank}.")
        if not self._open:
            raise RuntimeError("This pool is closed: its workers have stopped. Make a new pool inside `with`.")
        tasks = list(iterable)
        chunks = contiguous_chunks(tasks, self.size)
        asked = []
        for rank, chunk in enumerate(chunks[:-1], start=1):
            if chunk:
                self.comm.send((func, chunk), dest=rank, tag=_TASKS)
                asked.append(rank)
        try:
            mine = [func(task) for task in chunks[-1]]
        finally:  # collect every answer, even if our own chunk failed, so none is left for the next map
            answers = [self._answer_from(rank) for rank in asked]
        results: list[Any] = []
        for rank, (ok, values) in zip(asked, answers):
            if not ok:
                raise MPIWorkerError(f"A task raised an exception on rank {rank}:\n{values}")
            results.extend(values)
        return results + mine

    def _answer_from(self, rank: int) -> tuple[bool, Any]:
        wall, cpu = time.perf_counter(), time.process_time()
        wait_for_message(self.comm, rank, _ANSWER, self.idle_sleep)
        self.wait_seconds += time.perf_counter() - wall
        self.wait_cpu += time.process_time() - cpu
        return self.comm.recv(source=rank, tag=_ANSWER)

    def close(self) -> None:
        """Stop the workers, once; later calls (and the ``atexit`` hook) do nothing. Does nothing on a worker."""
        if self.is_worker() or not self._open:
            return
        self._open = False
        for rank in range(1, self.size):
            self.comm.send(None, dest=rank, tag=_STOP)

