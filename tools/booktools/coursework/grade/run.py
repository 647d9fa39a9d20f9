"""Stage 3, running the assembled notebook in a sandboxed kernel.

The job folder holds the scratch folder the kernel works in and a copy of the
installed helper package ``parallel_mcmc`` (the same one the verdict runner imports).
The kernel starts through :mod:`booktools.coursework.sandbox`, in a root file
system that holds the Python environment, the system folders and the job folder,
and nothing else of the machine (not the book, not the repository of the
grader's packages, not another copy of the book); cells run one by one under
time limits, a kernel that dies or does not answer is replaced, and each cell's
outcome is kept (never its output: the grade is decided from the observations).
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import ipykernel.kernelspec
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .. import sandbox
from ..markdown import tags

_TIMEOUT_ENAME = "GraderCellTimeout"
# Address space of each process of the submission: the machine's memory (JAX reserves more than it uses,
# so a tighter bound would stop the chapters themselves).
MEMORY_BYTES = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass
class CellResult:
    """How one code cell ran: its status, the exception's name and value if any, and its seconds."""

    status: str  # "ok" | "error" | "timeout" | "died" | "exited" | "not-run"
    ename: str = ""
    evalue: str = ""
    seconds: float = 0.0


def package_dir(name: str) -> Path:
    """The folder of the package ``name`` as this interpreter imports it (an installed one, editable or not).

    Parameters
    ----------
    name
        A package's import name.

    Returns
    -------
    Path
        Its folder, resolved.

    Raises
    ------
    ModuleNotFoundError
        If the package is not installed.
    """
    spec = importlib.util.find_spec(name)
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    found = [p for p in folders if p.is_dir()]
    if not found:
        raise ModuleNotFoundError(f"the package {name} is not installed", name=name)
    return found[0].resolve()


def copy_helper(lib: Path) -> None:
    """Copy the installed helper package into ``lib``, the kernel's path (:func:`kernel_env`): the
    repository is not in the sandbox, and the kernel runs the same ``parallel_mcmc`` as the verdict runner.

    Parameters
    ----------
    lib
        The folder to copy it into, as ``lib/parallel_mcmc``.
    """
    shutil.copytree(package_dir("parallel_mcmc"), lib / "parallel_mcmc",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def hidden_paths(book: Path, extra: Sequence[Path]) -> list[Path]:
    """Folders the submission must not see: the book, the repository of the grader's packages (the folder
    above ``tools/booktools`` and ``src/parallel_mcmc``, which holds the grader's code and its reference
    answers), the grader's home folder, the project this environment belongs to (if the environment sits
    inside one) and ``extra`` (``--hide``). None of them is in the sandbox's root unless it lies inside a
    folder put there (the environment, ``/usr``), and then the sandbox covers it with an empty file system;
    a folder that holds the environment shows the environment only.

    Parameters
    ----------
    book
        The book's root folder.
    extra
        More folders to hide.

    Returns
    -------
    list of Path
        The folders, resolved, each once.
    """
    prefix = Path(sys.prefix).resolve()
    found = [book.resolve(), *(package_dir(name).parents[1] for name in ("booktools", "parallel_mcmc")),
             Path.home().resolve(), *(Path(p).resolve() for p in extra)]
    if any((prefix.parent / name).exists() for name in ("chapters", "src", "pyproject.toml")):
        found.append(prefix.parent)
    return [p for p in dict.fromkeys(found) if p != Path("/") and p.is_dir()]


def _kernel_spec_manager(job: Path, hide: Sequence[Path], cpu_seconds: int):
    """A kernel-spec manager whose ``python3`` is this interpreter's ipykernel, started in the sandbox."""
    keep = sandbox.environment()  # the environment, and the interpreter it was made from

    class Sandboxed(KernelSpecManager):
        def get_kernel_spec(self, kernel_name):
            spec = ipykernel.kernelspec.get_kernel_dict()
            argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
            spec["argv"] = sandbox.command(argv, job, hide, keep, cpu_seconds, chown=["{connection_file}"],
                                           memory_bytes=MEMORY_BYTES)
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES, **spec)

    return Sandboxed()


def kernel_env(job: Path) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's, the helper package's copy on the path.

    Parameters
    ----------
    job
        The job's folder: ``job/work`` becomes the kernel's home, ``job/lib`` its ``PYTHONPATH``.

    Returns
    -------
    dict of str to str
        The environment.
    """
    work = job / "work"
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(work), "TMPDIR": "/tmp", "MPLCONFIGDIR": str(work / ".matplotlib"),
        "PYTHONPATH": str(job / "lib"), "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
        **{k: v for k, v in os.environ.items() if k in ("PARALLEL_MCMC_PLATFORM",)},
    }


OUTPUT_LIMIT = 2**20  # characters of output kept per cell; the grade never reads outputs


class _BoundedClient(NotebookClient):
    """A notebook client that keeps at most :data:`OUTPUT_LIMIT` characters of each cell's output,
    so that a submission printing without end cannot fill the grader's memory."""

    def output(self, outs, msg, display_id, cell_index):
        kept = self.__dict__.setdefault("_kept", {})
        size = len(str(msg.get("content", "")))
        if kept.get(cell_index, 0) + size > OUTPUT_LIMIT:
            return None
        kept[cell_index] = kept.get(cell_index, 0) + size
        return super().output(outs, msg, display_id, cell_index)


def _outcome(cell: nbformat.NotebookNode, seconds: float) -> CellResult:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return CellResult("error", out.get("ename", ""), str(out.get("evalue", "")), seconds)
    return CellResult("ok", seconds=seconds)


async def execute(nb: nbformat.NotebookNode, cell_timeout: float, notebook_timeout: float, job: Path,
                  env: dict[str, str], problems: list[str], hide: Sequence[Path] = (),
                  max_restarts: int = 3) -> dict[int, CellResult]:
    """Run the code cells of ``nb`` in place, in a sandboxed kernel.

    Parameters
    ----------
    nb
        The notebook to run (:func:`~booktools.coursework.grade.assemble.assemble_submission`); its outputs are filled in.
    cell_timeout, notebook_timeout
        Seconds one cell, and the whole notebook, may run.
    job
        The job's folder: the kernel runs in ``job/work``, with ``job/lib`` on its path.
    env
        The kernel's whole environment (:func:`kernel_env`).
    problems
        Where what went wrong with the kernel is noted, for the report.
    hide
        Folders the sandbox hides (:func:`hidden_paths`).
    max_restarts
        How many times a kernel that died is started again for the cells after.

    Returns
    -------
    dict of int to CellResult
        Each code cell's result, by its index in ``nb``.
    """
    cwd = job / "work"
    deadline = time.monotonic() + notebook_timeout
    todo = [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip() and "skip-execution" not in tags(c)]
    for i in todo:
        nb.cells[i].outputs, nb.cells[i].execution_count = [], None
    results: dict[int, CellResult] = {}
    pos = restarts = 0
    spec_manager = _kernel_spec_manager(job, hide, int(notebook_timeout * 4 + 60))

    replies: dict[int, dict] = {}

    def remember(cell=None, cell_index=None, execute_reply=None, **_):
        if execute_reply is not None:
            replies[cell_index] = execute_reply.get("content", {})

    async def run(client, index: int, cell, timeout: float) -> CellResult:
        """Run one cell; a time-out interrupts the kernel (nbclient) and reads as status "timeout"."""
        client.timeout = max(1, math.ceil(timeout))
        replies.pop(index, None)
        start = time.monotonic()
        try:
            await client.async_execute_cell(cell, index)
        except DeadKernelError:
            return CellResult("died", seconds=time.monotonic() - start)
        except CellTimeoutError:  # IOPub silent after the reply: count it as a time-out
            return CellResult("timeout", seconds=time.monotonic() - start)
        seconds = time.monotonic() - start
        reply = replies.get(index)
        if reply is None:
            return _outcome(cell, seconds)
        if reply.get("status") == "error":
            if reply.get("ename") == _TIMEOUT_ENAME:
                return CellResult("timeout", seconds=seconds)
            return CellResult("error", reply.get("ename", ""), str(reply.get("evalue", "")), seconds)
        if reply.get("status") == "aborted":
            return CellResult("error", "Aborted", "the kernel aborted this cell", seconds)
        if any(isinstance(p, dict) and p.get("source") == "ask_exit" and not p.get("keepkernel")
               for p in reply.get("payload") or []):
            # exit() or quit(): the kernel stops right after this reply; blame this cell, not the next one
            return CellResult("exited", "SystemExit", "the cell called exit() or quit()", seconds)
        return CellResult("ok", seconds=seconds)

    async def alive_after_interrupt(client) -> bool:
        """After nbclient interrupted a cell that ran out of time: does the kernel answer again?"""
        nb.cells.append(nbformat.v4.new_code_cell("pass"))
        try:
            probe = await run(client, len(nb.cells) - 1, nb.cells[-1], 10)
        finally:
            nb.cells.pop()
        return probe.status == "ok"

    while pos < len(todo):
        # ZeroMQ over Unix sockets in the scratch folder: the kernel has no network to listen on.
        km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=spec_manager, transport="ipc",
                                ip=str(cwd / f"kernel-{restarts}"), connection_file=str(cwd / f"kernel-{restarts}.json"))
        client = _BoundedClient(
            nb, km=km, kernel_name="python3", allow_errors=True, interrupt_on_timeout=True,
            error_on_timeout={"ename": _TIMEOUT_ENAME, "evalue": "the cell ran out of time", "traceback": []},
            on_cell_executed=remember,
            timeout=int(cell_timeout), startup_timeout=120, iopub_timeout=5, shutdown_kernel="immediate",
            resources={"metadata": {"path": str(cwd)}},
        )
        restart = False
        # The kernel's own log (not the cells' output) would clutter the grades table: it goes to a file,
        # quoted only when the kernel fails to start.
        log = open(job / f"kernel-{restarts}.log", "wb")  # noqa: SIM115, ASYNC230 - a local file, closed below
        try:
            async with client.async_setup_kernel(env=env, cleanup_kc=True, stderr=log, stdout=log):
                if restarts:  # bring the new kernel to where the old one was, without the offending cells
                    for i in todo[:pos]:
                        if results[i].status in ("timeout", "died", "exited", "not-run"):
                            continue
                        remaining = deadline - time.monotonic()
                        replay = await run(client, i, nb.cells[i], min(cell_timeout, max(remaining, 1)))
                        if replay.status in ("timeout", "died"):
                            problems.append(f"cell {i + 1} did not run again after the kernel restart; grading stopped")
                            return results
                while pos < len(todo):
                    i = todo[pos]
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return results
                    result = await run(client, i, nb.cells[i], min(cell_timeout, remaining))
                    if result.status == "timeout" and remaining < cell_timeout:
                        result.evalue = "notebook time limit"
                    results[i] = result
                    pos += 1
                    if result.status == "died":
                        problems.append(f"the kernel died while running cell {i + 1}; a new kernel was started")
                        restart = True
                        break
                    if result.status == "exited":
                        problems.append(f"cell {i + 1} called exit() or quit(), which stops the kernel; "
                                        "a new kernel was started")
                        restart = True
                        break
                    if result.status == "timeout" and not await alive_after_interrupt(client):
                        problems.append(f"cell {i + 1} timed out and its kernel did not answer; a new kernel was started")
                        restart = True
                        break
        except Exception as err:  # noqa: BLE001 - a kernel that cannot start is reported, not raised
            tail = (job / f"kernel-{restarts}.log").read_text(errors="replace").strip().splitlines()[-3:]
            problems.append(f"the kernel failed: {type(err).__name__}: {err}" + (f" ({' / '.join(tail)})" if tail else ""))
            return results
        finally:
            log.close()
        if restart:
            restarts += 1
            if restarts > max_restarts:
                problems.append(f"more than {max_restarts} kernel restarts; the remaining cells were not run")
                return results
    return results
