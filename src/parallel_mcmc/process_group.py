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

from .mpi import find_mpiexec
from .validate import real_number, whole_number

__all__ = ["ProcessGroupError", "GroupRun", "free_port", "run_processes"]


class ProcessGroupError(RuntimeError):
    """A process of the group failed, timed out, or could not be started."""


@dataclass(frozen=True)
class GroupRun:
    """What a group of processes printed, and how long the whole group took (seconds)."""

    outputs: tuple[str, ...]
    seconds: float
    launcher: str


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (for the coordinator of a local group)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _check_args(script: Path, num_processes: int, timeout: float) -> None:
    whole_number("num_processes", num_processes, 1)
    if not script.is_file():
        raise FileNotFoundError(f"The script {script} does not exist: write it first, then start the processes.")
    real_number("timeout", timeout, above=0, of=" of seconds")


def _failure(what: str, outputs: Sequence[str]) -> ProcessGroupError:
    shown = "\n".join(f"--- process {i} ---\n{out[-2000:]}" for i, out in enumerate(outputs))
    return ProcessGroupError(f"{what}\n{shown}")


def run_processes(
    script: str | Path,
    num_processes: int,
    *,
    launcher: str = "mpiexec",
    args: Sequence[str] = (),
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
) -> GroupRun:
    """Run ``script`` in ``num_processes`` Python processes on this machine and wait for all of them.

    ``launcher="mpiexec"`` starts them with ``mpiexec -n num_processes``; the
    script can then call ``jax.distributed.initialize(cluster_detection_method="mpi4py")``.
    ``launcher="subprocess"`` starts them directly and appends
    ``--coordinator 127.0.0.1:PORT --num-processes N --process-id I`` to each
    one's arguments, for ``jax.distributed.initialize(coordinator, N, I)``.

    Returns a :class:`GroupRun` with each process's combined output (for
    ``mpiexec``, one output holding all ranks' lines). Raises
    :class:`ProcessGroupError` with every process's output if one fails or the
    group runs past ``timeout`` seconds.
    """
    script = Path(script)
    _check_args(script, num_processes, timeout)
    run_env = dict(os.environ if env is None else env)
    # Keep the processes' JAX on the CPU and quiet, whatever the notebook's environment says.
    run_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    run_env.pop("XLA_FLAGS", None)
    python = sys.executable
    start = time.perf_counter()
    if launcher == "mpiexec":
        cmd = [find_mpiexec(), "-n", str(num_processes), python, str(script), *args]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=run_env)
        except subprocess.TimeoutExpired as err:
            out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
            raise _failure(f"mpiexec ran past {timeout:.0f} s and was stopped.", [out]) from None
        outputs = (proc.stdout + proc.stderr,)
        if proc.returncode != 0:
            raise _failure(f"mpiexec exited with status {proc.returncode}.", outputs)
    elif launcher == "subprocess":
        coordinator = f"127.0.0.1:{free_port()}"
        procs = []
        for i in range(num_processes):
            cmd = [python, str(script), *args, "--coordinator", coordinator,
                   "--num-processes", str(num_processes), "--process-id", str(i)]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=run_env))
        deadline = start + timeout
        outputs_list, failed = [], []
        for i, p in enumerate(procs):
            try:
                out, _ = p.communicate(timeout=max(deadline - time.perf_counter(), 0.1))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                out, _ = p.communicate()
                failed.append(f"process {i} ran past {timeout:.0f} s")
            outputs_list.append(out)
            if p.returncode not in (0, None) and not failed:
                failed.append(f"process {i} exited with status {p.returncode}")
                for q in procs:  # the others would wait for it until the time-out
                    if q.poll() is None:
                        q.kill()
        outputs = tuple(outputs_list)
        if failed:
            for q in procs:
                if q.poll() is None:
                    q.kill()
            raise _failure("; ".join(failed) + ".", outputs)
    else:
        raise ValueError(f"launcher must be 'mpiexec' or 'subprocess', got {launcher!r}.")
    return GroupRun(outputs=outputs, seconds=time.perf_counter() - start, launcher=launcher)
