"""Choose how many devices JAX sees, and report what it sees.

On a CPU, JAX shows one device unless told otherwise before its backend
starts. :func:`use_cpu_devices` asks for ``n`` host devices and must run before
the first JAX operation, which is why every chapter calls it in its first cell.
"""

from __future__ import annotations

import os
import platform as _platform
from dataclasses import dataclass, field

import jax
import psutil

from parallel_mcmc._validate import whole_number

__all__ = [
    "DeviceSetupError",
    "DeviceReport",
    "backend_started",
    "use_cpu_devices",
    "device_report",
    "physical_cores",
    "PLATFORM_ENV",
    "SKIPPED",
]

#: Set this environment variable to ``gpu`` or ``tpu`` to let the chapters run
#: on an accelerator instead of forced CPU devices.
PLATFORM_ENV = "PARALLEL_MCMC_PLATFORM"


class DeviceSetupError(RuntimeError):
    """The device count could not be set the way it was asked for."""


def backend_started() -> bool:
    """True once JAX has started a backend (after its first operation).

    Returns
    -------
    bool
        Whether a JAX backend has started.
    """
    # JAX (0.10 to 0.12) has no public call that answers this without starting a backend
    # (jax.extend.backend.backends() starts one); switch when jax.extend offers one.
    from jax._src import xla_bridge

    return bool(xla_bridge.backends_are_initialized())


def physical_cores() -> int:
    """Physical CPU cores this process may use (logical cores if that cannot be told).

    Returns
    -------
    int
        The physical cores (at least 1).
    """
    cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):  # a container or taskset may allow fewer
        cores = min(cores, len(os.sched_getaffinity(0)))
    return cores


def use_cpu_devices(n: int) -> int:
    """Make JAX show ``n`` CPU devices; call it before any JAX operation.

    The ``n`` devices are slices of one machine: they share its cores and
    memory. By default JAX is also told to use only its CPU backend, so that a
    chapter behaves the same on a laptop and on a GPU machine. Set the
    environment variable ``PARALLEL_MCMC_PLATFORM`` (for example to ``gpu``)
    to run on an accelerator instead; it must then have at least ``n`` devices.

    Calling it again with the same ``n`` after JAX has started is harmless
    (re-running a notebook's first cell).

    Where the count cannot be forced (``PARALLEL_MCMC_PLATFORM`` names a platform
    with fewer than ``n`` devices: one GPU, or ``cpu`` for the CPU as it is),
    a notebook says so and skips the rest of the page, each later cell printing
    :data:`SKIPPED`; a script gets :class:`DeviceSetupError`.

    Parameters
    ----------
    n : int
        The number of devices JAX should show (at least 1).

    Returns
    -------
    int
        The number of devices JAX will show.

    Raises
    ------
    ValueError
        If ``n`` is not a whole number >= 1.
    DeviceSetupError
        If JAX has already started with another count, or (outside a notebook) the platform named by
        ``PARALLEL_MCMC_PLATFORM`` has fewer than ``n`` devices.
    """
    n = whole_number("n", n, 1, of=" of devices")
    wanted_platform = os.environ.get(PLATFORM_ENV, "").strip().lower()
    if backend_started():
        current = jax.device_count()
        if wanted_platform or (jax.default_backend() == "cpu" and current == n):
            return current
        raise DeviceSetupError(
            f"JAX has already started with {current} {jax.default_backend()} device(s), so it can no "
            f"longer be given {n}. Restart the kernel (or the Python process) and call "
            f"use_cpu_devices({n}) first, before any other JAX operation."
        )
    if wanted_platform:
        jax.config.update("jax_platforms", wanted_platform)
        available = jax.device_count()
        if available < n:
            message = (
                f"This page needs {n} devices, but the {wanted_platform!r} platform chosen by "
                f"{PLATFORM_ENV} has {available}, and their number cannot be forced. Unset "
                f"{PLATFORM_ENV} and restart the kernel to run it on {n} forced CPU devices."
            )
            if _skip_the_rest(message):
                return available
            raise DeviceSetupError(message)
        return available
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", n)
    return n


#: What each cell of a page prints instead of running, once :func:`use_cpu_devices` found too few devices.
SKIPPED = "Skipped: this page needs more devices than this runtime has (see its first cell)."


def _skip_the_rest(message: str) -> bool:
    """In a notebook (IPython), say ``message`` and skip every later cell; elsewhere return False.

    Every cell run after this one is replaced, before it runs, by one that
    prints :data:`SKIPPED` (an IPython input transformer), so that the page
    runs to its end and says why it did nothing, rather than stopping at its
    first cell that needs the devices. A new kernel runs normally again.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "input_transformers_post"):
        return False
    print(f"{message}\nThe rest of this page is skipped: each cell below prints a note instead of running.")

    def skip(lines: list[str]) -> list[str]:
        return [f"print({SKIPPED!r})\n"]

    shell.input_transformers_post.append(skip)
    return True


@dataclass(frozen=True)
class DeviceReport:
    """What JAX runs on: platform, devices and the machine's cores.

    Parameters
    ----------
    platform : str
        JAX's default backend (``cpu``, ``gpu``, ...).
    device_count : int
        How many devices JAX shows.
    devices : tuple of str
        Each device, as JAX prints it.
    physical_cores : int
        The physical cores this process may use.
    logical_cores : int
        The logical cores of the machine.
    jax_version : str
        JAX's version.
    machine : str, optional
        The machine's architecture (``platform.machine()``).
    """

    platform: str
    device_count: int
    devices: tuple[str, ...]
    physical_cores: int
    logical_cores: int
    jax_version: str
    machine: str = field(default_factory=_platform.machine)

    def __str__(self) -> str:
        shown = ", ".join(self.devices[:8]) + (", ..." if len(self.devices) > 8 else "")
        return (
            f"platform : {self.platform} ({self.device_count} device(s): {shown})\n"
            f"cores    : {self.physical_cores} physical, {self.logical_cores} logical ({self.machine})\n"
            f"jax      : {self.jax_version}"
        )

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython display
        printer.text(str(self))


def device_report() -> DeviceReport:
    """Describe the devices JAX uses (this starts the JAX backend).

    Returns
    -------
    DeviceReport
        The platform, devices and cores.
    """
    devices = jax.devices()
    return DeviceReport(
        platform=jax.default_backend(),
        device_count=len(devices),
        devices=tuple(str(d) for d in devices),
        physical_cores=physical_cores(),
        logical_cores=psutil.cpu_count(logical=True) or 1,
        jax_version=jax.__version__,
    )
