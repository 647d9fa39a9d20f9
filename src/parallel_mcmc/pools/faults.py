"""What a pool's workers cost the process beyond their work: CPU time of the children, page faults per task, and keeping freed memory from going back to the system."""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
import time
from typing import Any, Callable, NamedTuple

import psutil

from parallel_mcmc._validate import whole_number


__all__ = ["CPUTimes", "children_cpu_times", "call_with_faults", "keep_freed_memory"]


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers in glibc's malloc.h


class CPUTimes(NamedTuple):
    """CPU seconds spent in user code and in the operating system (page faults, pipes, ...).

    Parameters
    ----------
    user : float
        CPU seconds in user code.
    system : float
        CPU seconds in the operating system.
    """

    user: float
    system: float

    @property
    def total(self) -> float:
        return self.user + self.system

    def __sub__(self, other: "CPUTimes") -> "CPUTimes":  # type: ignore[override]
        return CPUTimes(self.user - other.user, self.system - other.system)


def children_cpu_times() -> CPUTimes:
    """CPU seconds used so far by this process's live child processes, such as a pool's workers.

    Read it before and after a timed run: the difference's ``total`` over the
    run's wall-clock seconds is the number of cores the workers got, and its
    ``system`` part the time the operating system worked for them. A child
    that exits in between takes its seconds with it, so keep the pool open
    while measuring.

    Returns
    -------
    parallel_mcmc.pools.CPUTimes
        The children's user and system seconds.
    """
    user = system = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.NoSuchProcess:  # ended between listing and reading
            continue
        user, system = user + times.user, system + times.system
    return CPUTimes(user, system)


def call_with_faults(fn: Callable[..., Any], *args: Any) -> tuple[Any, int, float]:
    """Call ``fn(*args)`` and return ``(result, minor_faults, seconds)``.

    ``minor_faults`` is how many minor page faults this process took during
    the call (``getrusage``'s ``ru_minflt``): pages of memory touched for the
    first time since the process got them from the operating system, each
    filled with zeros by the kernel. In a pool, map
    ``functools.partial(call_with_faults, fn)`` over the tasks: the counts
    are the workers' own.

    Parameters
    ----------
    fn : callable
        The function.
    *args : Any
        Its arguments.

    Returns
    -------
    result : Any
        ``fn(*args)``.
    minor_faults : int
        The minor page faults of the call.
    seconds : float
        The call's wall-clock seconds.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}.")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    result = fn(*args)
    seconds = time.perf_counter() - start
    return result, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, seconds


def keep_freed_memory(nbytes: int = 64 << 20) -> bool:
    """Pool initializer: let this process's C allocator keep up to ``nbytes`` of freed memory.

    glibc's allocator gives large freed blocks back to the operating system
    (blocks above its *mmap threshold*, and free memory at the top of the heap
    beyond its *trim threshold*); the next allocation then has every page
    faulted in and zeroed again. A NumPy log-probability over a large data
    set makes such temporaries at every call. Raising both thresholds to
    ``nbytes`` (``mallopt``) keeps them in the process, to be reused without a
    fault. The same can be had with the environment variables
    ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_`` set before the
    process starts. Use ``Pool(initializer=keep_freed_memory)``.

    Parameters
    ----------
    nbytes : int, optional
        The thresholds, in bytes.

    Returns
    -------
    bool
        True when the allocator took the setting, False
        where there is no glibc (macOS, Windows, musl): there it does nothing.

    Raises
    ------
    ValueError
        If ``nbytes`` is not a whole number >= 1 below 2 GiB.
    """

    nbytes = whole_number("nbytes", nbytes, 1)
    if nbytes >= 2**31:
        raise ValueError(f"nbytes must be below 2 GiB (mallopt takes an int), got {nbytes}.")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, nbytes)) and bool(mallopt(_M_MMAP_THRESHOLD, nbytes))

