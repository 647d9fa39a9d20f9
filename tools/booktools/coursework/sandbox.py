"""The sandbox a submission's kernel runs in.

:func:`command` wraps a command (the kernel) so that it starts:

- in new namespaces (``unshare``): its own network (only a loopback, so no
  network at all, but MPI and ``jax.distributed`` on 127.0.0.1 still work), its
  own mounts and its own process ids (when the kernel goes, every process it
  started goes with it);
- with the book hidden: an empty file system is mounted over the book's folder,
  over the folder of the environment's own project and over every other folder
  asked for (``hide``), then only the Python environment is put back, read-only;
  ``/tmp``, ``/var/tmp`` and ``/dev/shm`` are fresh and private;
- in the job folder, which holds the student edition's scratch copy and a
  read-only copy of the helper package ``parallel_mcmc`` (not ``coursework``);
- as the unprivileged user ``nobody`` (when the grader runs as root; otherwise in
  a user namespace, as the grader's own user, with the same mounts), without
  new privileges;
- with limits: CPU seconds, file size, open files, address space, processes, no core dumps;
- under a small first process that reaps orphans (the kernel is not process 1).

The second half, run as ``python -m booktools.coursework.sandbox ...`` inside the new
namespaces, makes the mounts and limits and then starts the command.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["command", "available", "main"]

USER = "nobody"
GROUP = "nogroup"
PROCESSES = 4096  # processes and threads the user nobody may have (JAX starts dozens of threads per process)


def available() -> str | None:
    """None if a sandbox can be made here; otherwise why not."""
    for tool in ("unshare", "mount") + (("setpriv",) if os.geteuid() == 0 else ()):
        if shutil.which(tool) is None:
            return f"the sandbox needs the `{tool}` command (util-linux)"
    probe = [*_unshare(), "true"]
    done = subprocess.run(probe, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return ("the sandbox could not be made (" + done.stderr.strip()[:200] + "): run the grader as root, or "
                "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
    return None


def _unshare() -> list[str]:
    flags = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"]
    if os.geteuid() != 0:
        flags = ["--user", "--map-root-user", *flags]
    return ["unshare", *flags]


def command(argv: Sequence[str], job: Path, hide: Sequence[Path], keep: Sequence[Path],
            cpu_seconds: int, chown: Sequence[Path] = (), memory_bytes: int | None = None) -> list[str]:
    """``argv`` wrapped to run in the sandbox (see the module's docstring)."""
    inner = [sys.executable, "-I", str(Path(__file__).resolve()), "--job", str(job), "--cpu", str(int(cpu_seconds))]
    for path in hide:
        inner += ["--hide", str(path)]
    for path in keep:
        inner += ["--keep", str(path)]
    for path in chown:
        inner += ["--chown", str(path)]
    if memory_bytes:
        inner += ["--memory", str(int(memory_bytes))]
    return [*_unshare(), *inner, "--", *argv]


def _run(*args: str, **kwargs) -> None:
    subprocess.run(list(args), check=True, **kwargs)


def _enter(job: Path, hide: list[Path], keep: list[Path], chown: list[Path], cpu: int, memory: int | None,
           argv: list[str]) -> None:
    root = os.geteuid() == 0 and os.environ.get("COURSEWORK_IN_USERNS") != "1"
    import pwd

    ids = pwd.getpwnam(USER) if root else None
    for path in chown:
        if ids is not None and path.exists():
            os.chown(path, ids.pw_uid, ids.pw_gid)
    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, check=False)
    # Folders to put back after hiding: opened now, bound again through their file descriptors.
    covered = [*hide, Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")]
    kept = [p for p in [*keep, job] if p.is_dir() and any(p == h or h in p.parents for h in covered)]
    saved = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in kept}
    for path in hide:
        if path.is_dir():
            _run("mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "tmpfs", str(path))
    for path in ("/tmp", "/var/tmp", "/dev/shm"):
        if Path(path).is_dir():
            _run("mount", "-t", "tmpfs", "-o", "size=2g,mode=1777", "tmpfs", path)
    for path, fd in saved.items():
        path.mkdir(parents=True, exist_ok=True)
        _run("mount", "--no-canonicalize", "--bind", f"/proc/self/fd/{fd}", str(path), pass_fds=(fd,))
        if path != job:
            _run("mount", "-o", "remount,bind,ro", str(path))
        os.close(fd)
    os.chdir(job / "work")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**31, 2**31))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if root:  # processes and threads of the user nobody: a fork bomb stops here
        resource.setrlimit(resource.RLIMIT_NPROC, (PROCESSES, PROCESSES))
    if root:
        argv = ["setpriv", f"--reuid={USER}", f"--regid={GROUP}", "--clear-groups", "--no-new-privs",
                "--inh-caps=-all", "--bounding-set=-all", "--", *argv]
    else:
        argv = ["setpriv", "--no-new-privs", "--", *argv]
    _init(argv)


def _init(argv: list[str]) -> None:
    """Be the namespace's first process: start ``argv``, reap every orphan, exit with its status.

    The kernel must not be process 1 itself: process 1 of a namespace does not get the
    default handling of signals and inherits every orphan, which confuses
    ``multiprocessing`` (its resource tracker). Interrupts reach the kernel directly
    (it shares the grader's process group); this process ignores them.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # die with `unshare`, and so take the namespace along
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # ipykernel would watch JPY_PARENT_PID, a process of another namespace, and leave at once
        env = {k: v for k, v in os.environ.items() if k != "JPY_PARENT_PID"}
        os.execvpe(argv[0], argv, env)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.coursework.sandbox",
                                     description="Inside new namespaces: hide the book, set limits, drop privileges, run.")
    parser.add_argument("--job", type=Path, required=True)
    parser.add_argument("--hide", type=Path, action="append", default=[])
    parser.add_argument("--keep", type=Path, action="append", default=[])
    parser.add_argument("--chown", type=Path, action="append", default=[])
    parser.add_argument("--cpu", type=int, default=3600)
    parser.add_argument("--memory", type=int, default=None)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    rest = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not rest:
        parser.error("give the command to run after --")
    _enter(args.job, args.hide, args.keep, args.chown, args.cpu, args.memory, rest)
    return 1  # not reached: exec


if __name__ == "__main__":
    sys.exit(main())
