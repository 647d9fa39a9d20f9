"""MPI on one machine or many: find the launcher, and two MPI pools for emcee.

MPI programs are started by MPI's launcher, ``mpiexec -n N``, which runs ``N``
copies (ranks) of the same program. :func:`find_mpiexec` finds the launcher
that belongs to this Python, for emcee's MPI pools and for multi-process JAX
alike. Two pools turn the ranks into something with a ``map`` method:

- :class:`MPIPoolClosingOnce` is schwimmbad's ``MPIPool`` with its double
  shut-down fixed. Rank 0 is a master that only hands out tasks, one at a
  time, and polls for the answers; ``-n k+1`` ranks give ``k`` workers.
- :class:`SharingMPIPool` makes every rank a worker, the master included:
  each ``map`` is cut into one contiguous chunk per rank, each rank gets its
  whole chunk in one message, and a rank with nothing to do sleeps between
  looks at its mailbox instead of spinning. ``-n k`` ranks give ``k``
  workers.
- :class:`FuturesPool` is ``mpi4py.futures.MPIPoolExecutor`` with the
  ``map`` emcee calls: rank 0 runs the program, the other ranks serve tasks
  one at a time; start it with ``mpiexec -n k+1 python -m mpi4py.futures``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from schwimmbad import MPIPool  # imports mpi4py only when a pool is made
from schwimmbad.pool import BasePool

from parallel_mcmc._validate import real_number, whole_number

__all__ = [
    "MPIPoolClosingOnce",
    "SharingMPIPool",
    "FuturesPool",
    "IDLE_SLEEP",
    "MPIWorkerError",
    "contiguous_chunks",
    "wait_for_message",
    "evaluate_chunk",
    "MPIExecNotFound",
    "find_mpiexec",
]


class MPIPoolClosingOnce(MPIPool):
    """schwimmbad's ``MPIPool``, told to stop its workers exactly once.

    schwimmbad 0.4.2 stops the workers in ``close()`` (called when a ``with``
    block ends) and again from an ``atexit`` hook. The second round of stop
    messages goes to processes that have already left, which MPICH may answer
    by killing rank 0 as it exits. This pool forgets its workers once they are
    stopped, so the second call sends nothing.

    Run with ``mpiexec -n k+1``: rank 0 is the master that hands out tasks and
    does no likelihood work; ranks 1..k are the workers (they wait inside the
    constructor and leave with ``sys.exit(0)`` when stopped). ``size`` is the
    number of workers, ``k``.

    Attributes
    ----------
    size : int
        The number of workers, ``k``.
    """

    def close(self) -> None:
        if self.is_worker() or not getattr(self, "workers", None):
            return
        super().close()
        self.workers = set()  # the atexit hook now finds nobody to stop


# Message tags of SharingMPIPool.
_TASKS, _STOP, _ANSWER = 1, 2, 3


def _mpi():
    # Importing mpi4py.MPI starts MPI in this process, so it happens only when a pool is made.
    from mpi4py import MPI

    return MPI


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
        func : callable
            The task function.
        iterable : iterable
            The tasks.

        Returns
        -------
        list
            The results, in the order of the tasks.

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


class FuturesPool:
    """``mpi4py.futures.MPIPoolExecutor`` as an emcee pool: ``map`` returns a list, ``size`` counts the workers.

    Start the program with ``mpiexec -n k+1 python -m mpi4py.futures -m your.module``
    (or ``... -m mpi4py.futures your_script.py``): rank 0 runs it, and ranks
    1..k wait in mpi4py's server for tasks. The executor sends one task
    (``(func, args, kwargs)``, pickled) at a time to an idle worker. Its
    waiting ranks sleep between looks at their mailbox, each sleep twice the
    last, up to ``backoff`` seconds (mpi4py's default: 1 ms). ``size`` is the
    number of workers, ``k``. Use it as a context manager, or call
    :meth:`close`, which shuts the executor down once.

    Parameters
    ----------
    backoff : float or None, optional
        The longest sleep of a waiting rank, in seconds (default: mpi4py's, 1 ms).
    """

    def __init__(self, backoff: float | None = None):
        from mpi4py.futures import MPIPoolExecutor

        options = {} if backoff is None else {"backoff": real_number("backoff", backoff, least=0, of=" of seconds")}
        self.executor = MPIPoolExecutor(**options)
        self.size = self.executor.num_workers  # waits until the workers are there
        if self.size < 1:
            raise ValueError(
                "FuturesPool found no workers. Start the program as `mpiexec -n 3 python -m mpi4py.futures "
                "-m your.module` (3 ranks: the program and 2 workers)."
            )

    def is_master(self) -> bool:
        """Whether this is the master: always, since only rank 0 runs the program under ``python -m mpi4py.futures``.

        Returns
        -------
        bool
            Always True: only rank 0 runs the program.
        """
        return True  # only rank 0 runs the program under `python -m mpi4py.futures`

    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any]) -> list[Any]:
        """``[func(x) for x in iterable]``, one task per message, the results in the order of the tasks.

        Parameters
        ----------
        func : callable
            The task function.
        iterable : iterable
            The tasks.

        Returns
        -------
        list
            The results, in the order of the tasks.
        """
        return list(self.executor.map(func, iterable))

    def close(self) -> None:
        """Shut the executor down (waiting for its tasks); later calls do nothing."""
        self.executor.shutdown(wait=True)

    def __enter__(self) -> "FuturesPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class MPIExecNotFound(FileNotFoundError):
    """No ``mpiexec`` for this Python was found."""


def find_mpiexec() -> str:
    """Path of the ``mpiexec`` to run this Python's MPI programs with.

    Looks next to ``sys.executable`` first (``pip install mpi4py mpich``
    puts MPICH's ``mpiexec`` in the virtual environment's ``bin``), then on
    ``PATH``.

    Returns
    -------
    str
        The path.

    Raises
    ------
    MPIExecNotFound
        Saying what to install, if there is none.
    """
    here = Path(sys.executable).parent / "mpiexec"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    on_path = shutil.which("mpiexec")
    if on_path:
        return on_path
    raise MPIExecNotFound(
        "No `mpiexec` found next to this Python "
        f"({Path(sys.executable).parent}) nor on PATH. Install MPI for this environment with "
        "`python -m pip install mpi4py mpich` (the mpich wheel provides mpiexec), "
        "or install your system's MPI (e.g. `apt-get install mpich`) and mpi4py built against it."
    )
