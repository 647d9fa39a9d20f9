"""Start several Python processes that form one JAX program, and collect what they print.

A multi-process JAX program runs the *same* script in every process; each
process calls :func:`jax.distributed.initialize` and then sees the devices of
all processes. :func:`run_processes` starts such a group on this machine,
either with MPI's ``mpiexec`` (each process learns its rank from MPI) or with
plain subprocesses that are told the coordinator's address, their number and
their own index on the command line. It waits for all of them, and turns any
failure into one error that shows what each process printed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from parallel_mcmc.pools.mpi import find_mpiexec
from parallel_mcmc._validate import real_number, whole_number

__all__ = ["ProcessGroupError", "GroupRun", "free_port", "run_processes"]


class ProcessGroupError(RuntimeError):
    """A process of the group failed, timed out, or could not be started."""


@dataclass(frozen=True)
class GroupRun:
    """What a group of processes printed, and how long the whole group took (seconds).

    Parameters
    ----------
    outputs : tuple of str
        Each process's combined output (for ``mpiexec``, one output holding all ranks' lines).
    seconds : float
        How long the whole group took.
    launcher : str
        ``"mpiexec"`` or ``"subprocess"``.
    statuses : tuple of int
        Each process's exit status (for ``mpiexec``, its own).
    """

    outputs: tuple[str, ...]
    seconds: float
    launcher: str
    statuses: tuple[int, ...] = ()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (for the coordinator of a local group).

    Returns
    -------
    int
        The port.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _check_args(script: Path | None, module: str | None, num_processes: int, timeout: float) -> None:
    whole_number("num_processes", num_processes, 1)
    if (script is None) == (module is None):
        raise ValueError("Give either a script (its path) or module= (a module name, as for python -m), not "
                         f"{'both' if script is not None else 'neither'}.")
    if module is not None and (not isinstance(module, str) or not all(p.isidentifier() for p in module.split("."))):
        raise ValueError(f"module must be a dotted module name such as 'parallel_mcmc.programs.slurm_chains', got {module!r}.")
    if script is not None and not script.is_file():
        raise FileNotFoundError(f"The script {script} does not exist: write it first, then start the processes.")
    real_number("timeout", timeout, above=0, of=" of seconds")


def _failure(what: str, outputs: Sequence[str]) -> ProcessGroupError:
    shown = "\n".join(f"--- process {i} ---\n{out[-2000:]}" for i, out in enumerate(outputs))
    return ProcessGroupError(f"{what}\n{shown}")


#: What process 0 prints when the coordinator's port was taken, and how often a group is started before giving up.
_PORT_TAKEN = "Failed to start RPC server"
_PORT_TRIES = 3


def _start_group(python: str, program: list[str], args: Sequence[str], num_processes: int, env: dict[str, str],
                 deadline: float, timeout: float, ok: Sequence[int] = (0,)
                 ) -> tuple[tuple[str, ...], list[str], tuple[int, ...]]:
    """Start the processes with a coordinator on a free port and wait: (each one's output, what failed, statuses)."""
    coordinator = f"127.0.0.1:{free_port()}"
    procs = []
    for i in range(num_processes):
        cmd = [python, *program, *args, "--coordinator", coordinator,
               "--num-processes", str(num_processes), "--process-id", str(i)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env))
    outputs, failed = [], []
    for i, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=max(deadline - time.perf_counter(), 0.1))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, _ = p.communicate()
            failed.append(f"process {i} ran past {timeout:.0f} s")
        outputs.append(out)
        if p.returncode not in (*ok, None) and not failed:
            failed.append(f"process {i} exited with status {p.returncode}")
            for q in procs:  # the others would wait for it until the time-out
                if q.poll() is None:
                    q.kill()
    for q in procs:
        if q.poll() is None:
            q.kill()
            q.communicate()
    return tuple(outputs), failed, tuple(p.returncode for p in procs)


def run_processes(
    script: str | Path | None = None,
    num_processes: int = 1,
    *,
    module: str | None = None,
    launcher: str = "mpiexec",
    args: Sequence[str] = (),
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    ok_statuses: Sequence[int] = (0,),
) -> GroupRun:
    """Run ``script`` in ``num_processes`` Python processes on this machine and wait for all of them.

    Instead of a script, ``module="package.module"`` runs a module as ``python -m`` does.

    ``launcher="mpiexec"`` starts them with ``mpiexec -n num_processes``; the
    script can then call ``jax.distributed.initialize(cluster_detection_method="mpi4py")``.
    ``launcher="subprocess"`` starts them directly and appends
    ``--coordinator 127.0.0.1:PORT --num-processes N --process-id I`` to each
    one's arguments, for ``jax.distributed.initialize(coordinator, N, I)``.

    Parameters
    ----------
    script : str or pathlib.Path or None, optional
        The script to run.
    num_processes : int, optional
        The number of processes.
    module : str or None, optional
        A module to run instead of a script.
    launcher : str, optional
        ``"mpiexec"`` or ``"subprocess"``.
    args : sequence of str, optional
        The arguments of each process.
    timeout : float, optional
        Seconds the group may run.
    env : dict of str to str or None, optional
        Environment variables to set in the processes.
    ok_statuses : sequence of int, optional
        The exit statuses that are not a failure (add 3 for a program that stops early on purpose and says
        so with its status).

    Returns
    -------
    parallel_mcmc.pools.GroupRun
        Each process's combined output (for ``mpiexec``, one output holding all ranks' lines), and the time.

    Raises
    ------
    ValueError
        If neither or both of ``script`` and ``module`` are given, ``module`` is not a dotted module name,
        ``launcher`` is unknown, or ``ok_statuses`` is not a sequence of whole numbers.
    FileNotFoundError
        If ``script`` does not exist.
    ProcessGroupError
        With every process's output, if one fails or the group runs past ``timeout`` seconds.
    """
    script = None if script is None else Path(script)
    _check_args(script, module, num_processes, timeout)
    ok_statuses = tuple(whole_number("ok_statuses", status, 0) for status in ok_statuses)
    program = [str(script)] if script is not None else ["-m", module]
    run_env = dict(os.environ if env is None else env)
    # Keep the processes' JAX on the CPU and quiet, whatever the notebook's environment says.
    run_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    run_env.pop("XLA_FLAGS", None)
    python = sys.executable
    start = time.perf_counter()
    if launcher == "mpiexec":
        cmd = [find_mpiexec(), "-n", str(num_processes), python, *program, *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run_env)
        except subprocess.TimeoutExpired as err:
            out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
            raise _failure(f"mpiexec ran past {timeout:.0f} s and was stopped.", [out]) from None
        outputs = (proc.stdout + proc.stderr,)
        if proc.returncode not in ok_statuses:
            raise _failure(f"mpiexec exited with status {proc.returncode}.", outputs)
        statuses = (proc.returncode,)
    elif launcher == "subprocess":
        for attempt in range(_PORT_TRIES):
            outputs, failed, statuses = _start_group(python, program, args, num_processes, run_env, start + timeout,
                                                     timeout, ok_statuses)
            # Between choosing the coordinator's port and process 0 opening it, another program on the machine
            # may take it: then start the group again, on a new port (its start counts in the group's time).
            if not (failed and _PORT_TAKEN in outputs[0] and attempt + 1 < _PORT_TRIES):
                break
        if failed:
            raise _failure("; ".join(failed) + ".", outputs)
    else:
        raise ValueError(f"launcher must be 'mpiexec' or 'subprocess', got {launcher!r}.")
    return GroupRun(outputs=outputs, seconds=time.perf_counter() - start, launcher=launcher, statuses=statuses)
