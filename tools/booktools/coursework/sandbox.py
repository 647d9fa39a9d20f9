"""The sandbox a submission's kernel runs in.

:func:`command` wraps a command (the kernel) so that it starts:

- in new namespaces (``unshare``): its own network (only a loopback, so no
  network at all, but MPI and ``jax.distributed`` on 127.0.0.1 still work), its
  own mounts and its own process ids (when the kernel goes, every process it
  started goes with it);
- in a root file system of its own, made afresh for each kernel (an empty
  ``tmpfs`` that becomes ``/`` through ``pivot_root``), which holds only what the
  kernel needs: the system folders (``/usr`` and the ``/bin``, ``/sbin``, ``/lib*``
  beside it), a few files of ``/etc`` (:data:`ETC`), the Python environment and the
  interpreter it was made from (``keep``, :func:`environment`), all read-only; a
  ``/dev`` with only ``null``, ``zero``, ``full``, ``random`` and ``urandom``; a
  ``/proc`` of its own processes; a read-only ``/sys`` (the processors and network
  devices, which MPI reads); fresh, private ``/tmp``, ``/var/tmp`` and
  ``/dev/shm``; and the job folder, at its own path. Nothing else of the machine
  is there: of a folder that holds the environment (a home folder, a project)
  only the environment is there; the book, any other copy of it, ``/work``,
  ``/srv``, ``/opt``, ``/mnt``, ``/var`` and the rest of ``/etc`` are not. A folder
  asked for in ``hide`` that lies inside one of the folders put there is covered
  by an empty, read-only file system;
- in the job folder, which holds the student edition's scratch copy and a
  read-only copy of the helper package ``parallel_mcmc`` (not ``coursework``);
- as the unprivileged user ``nobody`` (when the grader runs as root; otherwise in
  a user namespace, as its root user, which is the grader's own user outside),
  without capabilities or new privileges;
- with limits: CPU seconds, file size, open files, address space, processes, no core dumps;
- under a small first process that reaps orphans (the kernel is not process 1);
- tied to the process that starts it: ``unshare`` itself gets ``SIGKILL`` when the thread that
  started it ends (``setpriv --pdeathsig``; the grader starts and stops each kernel in one
  thread), so a grader that is killed (``SIGTERM``, ``SIGKILL``) takes its kernels and every
  process in their namespaces with it instead of leaving them running.

The second half, run as ``python -m booktools.coursework.sandbox ...`` inside the new
namespaces, makes the new root and the limits and then starts the command.
:func:`available` says whether a sandbox can be made here, and if not, why and what to do.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

__all__ = ["command", "available", "environment", "main", "SYSTEM", "ETC"]

USER = "nobody"
GROUP = "nogroup"
PROCESSES = 4096  # processes and threads the user nobody may have (JAX starts dozens of threads per process)
# The system folders put in the new root, read-only (a symbolic link stays one: /bin -> usr/bin).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The files of /etc the interpreter, the dynamic linker, MPI's launcher and ``multiprocessing`` read.
ETC = ("passwd", "group", "hosts", "host.conf", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
       "localtime")
DEVICES = ("null", "zero", "full", "random", "urandom")
SCRATCH = "size=2g,mode=1777"  # the private /tmp, /var/tmp and /dev/shm

INSTEAD = (
    "Run the grader where it may make namespaces: as root (`sudo`), in a container that allows them "
    "(`docker run --privileged ...` or `podman run --privileged ...`, which run as root inside), "
    "or on a Linux machine with unprivileged user namespaces allowed "
    "(`sysctl kernel.unprivileged_userns_clone=1`, and on Ubuntu 24.04 or later "
    "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`). "
    "No submission is graded without the sandbox.")


def available() -> str | None:
    """None if a sandbox can be made here; otherwise why not, and what to run instead."""
    if platform.system() != "Linux":
        return f"the sandbox needs Linux namespaces, which {platform.system()} does not have. {INSTEAD}"
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            return f"the sandbox needs the `{tool}` command (util-linux). {INSTEAD}"
    return _probe()


_PROBED: dict[tuple[str, ...], str | None] = {}


def _probe() -> str | None:
    """Make a sandbox once (namespaces, new root, limits, user) and run ``true`` in it; None if that
    worked, else why not and what to do. Remembered for the rest of the process."""
    key = tuple(_unshare())
    if key not in _PROBED:
        with tempfile.TemporaryDirectory(prefix="coursework-probe-") as tmp:
            job = Path(tmp)
            (job / "work").mkdir()
            for path in (job, job / "work"):
                path.chmod(0o755)
            try:
                done = subprocess.run(command(["true"], job, [], environment(), cpu_seconds=30),
                                      capture_output=True, text=True, timeout=120, check=False)
                lines = done.stderr.strip().splitlines()
                failed = (lines[-1][:200] if lines else f"exit status {done.returncode}") if done.returncode else None
            except (OSError, subprocess.TimeoutExpired) as err:
                failed = f"{type(err).__name__}: {err}"
        user = "as root" if os.geteuid() == 0 else "in a user namespace"
        _PROBED[key] = f"the sandbox could not be made {user} here ({failed}). {INSTEAD}" if failed else None
    return _PROBED[key]


def environment() -> list[Path]:
    """The folders of the Python environment the kernel runs in: the environment and the interpreter it was
    made from (a virtual environment's ``python`` links to it), resolved."""
    return list(dict.fromkeys([Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]))


def _unshare() -> list[str]:
    flags = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private"]
    if os.geteuid() != 0:
        flags = ["--user", "--map-root-user", *flags]
    return ["unshare", *flags]


def command(argv: Sequence[str], job: Path, hide: Sequence[Path], keep: Sequence[Path],
            cpu_seconds: int, chown: Sequence[Path] = (), memory_bytes: int | None = None) -> list[str]:
    """``argv`` wrapped to run in the sandbox (see the module's docstring); ``keep``: the folders of the
    Python environment (:func:`environment`), put in the new root read-only."""
    inner = [sys.executable, "-I", str(Path(__file__).resolve()), "--job", str(job), "--cpu", str(int(cpu_seconds))]
    for path in hide:
        inner += ["--hide", str(path)]
    for path in keep:
        inner += ["--keep", str(path)]
    for path in chown:
        inner += ["--chown", str(path)]
    if memory_bytes:
        inner += ["--memory", str(int(memory_bytes))]
    if os.geteuid() != 0:
        inner += ["--user-namespace"]
    # unshare outlives its parent unless told otherwise; the first process inside dies with unshare (below)
    die_with_parent = [shutil.which("setpriv") or "setpriv", "--pdeathsig", "KILL", "--"]
    return [*die_with_parent, *_unshare(), *inner, "--", *argv]


# --------------------------------------------------------------------------- the new root (mount(2), pivot_root(2))

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MNT_DETACH = 2
# statvfs's flags of a mount, and the mount(2) flags that keep them (a mount made in a user namespace
# from one of the parent's may not lose them)
_KEPT_FLAGS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
               os.ST_NOATIME: 1024, os.ST_NODIRATIME: 2048, os.ST_RELATIME: 1 << 21}
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str | Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if x is None else str(x).encode() for x in (source, target, fstype, data)]
    if _libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def _readonly(target: Path) -> None:
    """Remount the bind mount at ``target`` read-only, keeping its other flags."""
    have = os.statvfs(target).f_flag
    keep = sum(flag for st, flag in _KEPT_FLAGS.items() if have & st)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep)


def _tmpfs(target: Path, options: str) -> None:
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def _pivot_root(new: str, old: str) -> None:
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        subprocess.run(["pivot_root", new, old], check=True)
    elif _libc.syscall(ctypes.c_long(number), new.encode(), old.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"pivot_root: {os.strerror(err)}")


def _inside(path: Path, folders: Sequence[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _new_root(job: Path, hide: Sequence[Path], keep: Sequence[Path]) -> None:
    """Make the kernel's root file system and move into it (see the module's docstring).

    Everything that goes in is opened first (``O_PATH``) and bound from its descriptor: the new root is
    made on the namespace's ``/tmp``, which may hold some of it (the job folder does)."""
    os.umask(0o022)
    sources: list[tuple[Path, str]] = []  # (path in the new root, "ro" | "rw" | "dev")
    links: list[tuple[Path, str]] = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            links.append((path, os.readlink(path)))
        elif path.is_dir():
            sources.append((path, "ro"))
    bound = [p for p, _ in sources]
    for path in sorted({Path(p) for p in keep}, key=lambda p: len(p.parts)):
        if path.is_dir() and not _inside(path, bound):
            sources.append((path, "ro"))
            bound.append(path)
    for name in ETC:
        path = Path("/etc", name)
        if path.is_symlink() and _inside(path.resolve(), bound):
            links.append((path, os.readlink(path)))
        elif path.exists():
            sources.append((path, "ro"))
    for name in DEVICES:
        if Path("/dev", name).exists():
            sources.append((Path("/dev", name), "dev"))
    sources.append((job, "rw"))
    folders = {path for path, _ in sources if path.is_dir()}
    fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path, _ in sources}
    # what was asked to be hidden and lies inside a folder put there (not the job, not the environment)
    covered = [p for p in hide if p.is_dir() and _inside(p, bound) and not _inside(job, [p])
               and not any(_inside(k, [p]) for k in bound)]
    proc = os.open("/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    sysfs = os.open("/sys", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) if Path("/sys").is_dir() else None

    new = Path("/tmp")
    _tmpfs(new, "size=4m,mode=755")
    for folder in ("dev", "proc", "sys", "tmp", "var/tmp", "etc", ".old"):
        (new / folder).mkdir(parents=True, exist_ok=True)
    _tmpfs(new / "dev", "size=64k,mode=755")
    for folder, options in (("tmp", SCRATCH), ("var/tmp", SCRATCH), ("dev/shm", SCRATCH)):
        (new / folder).mkdir(exist_ok=True)
        _tmpfs(new / folder, options)
    for path, target in links:
        (new / path.relative_to("/")).symlink_to(target)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        (new / "dev" / name).symlink_to(target)
    for path, how in sources:
        at = new / path.relative_to("/")
        if path in folders:
            at.mkdir(parents=True, exist_ok=True)
        else:
            at.parent.mkdir(parents=True, exist_ok=True)
            at.touch()
        _mount(f"/proc/self/fd/{fds[path]}", at, None, MS_BIND | (MS_REC if how == "ro" else 0))
        if how == "ro":
            _readonly(at)
        os.close(fds[path])
    try:  # a /proc of the namespace's processes; where a new one may not be made, the one unshare made
        _mount("proc", new / "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        _mount(f"/proc/self/fd/{proc}", new / "proc", None, MS_BIND | MS_REC)
    os.close(proc)
    if sysfs is not None:  # the hardware, read-only (MPI's hwloc and UCX read the processors and network devices)
        try:  # a new one shows the namespace's network devices (only the loopback)
            _mount("sysfs", new / "sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError:
            _mount(f"/proc/self/fd/{sysfs}", new / "sys", None, MS_BIND | MS_REC)
            _readonly(new / "sys")
        os.close(sysfs)
    for path in covered:  # under an empty, read-only file system
        _tmpfs(new / path.relative_to("/"), "size=4k,mode=755")
        _mount(None, new / path.relative_to("/"), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k")
    _pivot_root(str(new), str(new / ".old"))
    os.chdir("/")
    if _libc.umount2(b"/.old", MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"umount /.old: {os.strerror(err)}")
    os.rmdir("/.old")
    for folder in ("/dev", "/"):  # nothing new in / and /dev; /tmp, /var/tmp, /dev/shm stay writable
        _mount(None, folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _enter(job: Path, hide: list[Path], keep: list[Path], chown: list[Path], cpu: int, memory: int | None,
           argv: list[str], user_namespace: bool = False) -> None:
    root = os.geteuid() == 0 and not user_namespace  # the machine's root, not a user namespace's
    import pwd

    ids = pwd.getpwnam(USER) if root else None
    for path in chown:
        if ids is not None and path.exists():
            os.chown(path, ids.pw_uid, ids.pw_gid)
    subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, check=False)
    setpriv = shutil.which("setpriv")
    _new_root(job.resolve(), [Path(p).resolve() for p in hide], [Path(p).resolve() for p in keep])
    os.chdir(job / "work")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**31, 2**31))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if root:  # processes and threads of the user nobody: a fork bomb stops here
        resource.setrlimit(resource.RLIMIT_NPROC, (PROCESSES, PROCESSES))
    drop = ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
    if root:
        argv = [setpriv, f"--reuid={USER}", f"--regid={GROUP}", "--clear-groups", *drop, "--", *argv]
    else:  # root of the user namespace, without its capabilities
        argv = [setpriv, *drop, "--", *argv]
    _init(argv)


def _init(argv: list[str]) -> None:
    """Be the namespace's first process: start ``argv``, reap every orphan, exit with its status.

    The kernel must not be process 1 itself: process 1 of a namespace does not get the
    default handling of signals and inherits every orphan, which confuses
    ``multiprocessing`` (its resource tracker). Interrupts reach the kernel directly:
    jupyter_client starts the sandbox's command in a session of its own and signals that
    session's whole process group, which the kernel stays in; this process ignores them.
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
                                     description="Inside new namespaces: make a new root, set limits, drop privileges, run.")
    parser.add_argument("--job", type=Path, required=True)
    parser.add_argument("--hide", type=Path, action="append", default=[])
    parser.add_argument("--keep", type=Path, action="append", default=[])
    parser.add_argument("--chown", type=Path, action="append", default=[])
    parser.add_argument("--cpu", type=int, default=3600)
    parser.add_argument("--memory", type=int, default=None)
    parser.add_argument("--user-namespace", action="store_true", help="run as the user namespace's root, not nobody")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    rest = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not rest:
        parser.error("give the command to run after --")
    _enter(args.job, args.hide, args.keep, args.chown, args.cpu, args.memory, rest, args.user_namespace)
    return 1  # not reached: exec


if __name__ == "__main__":
    sys.exit(main())
