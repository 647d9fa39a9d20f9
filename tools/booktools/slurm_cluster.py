"""A one-node SLURM cluster on this machine, for the tests that submit the book's job scripts.

:class:`SlurmCluster` writes a ``slurm.conf`` for one node (this machine,
all its cores, one partition), starts MUNGE's ``munged`` (SLURM's
authentication) with a key and socket of its own, then ``slurmctld`` (the
controller) and ``slurmd`` (the node's daemon), waits until ``sinfo`` shows
the node idle, and on exit cancels what is left, stops the three daemons and
removes its folder. Everything lives in a temporary folder: no file under
``/etc`` is read or written but SLURM's own plug-in list, and the ports are
free ones, so a cluster already running on the machine is left alone::

    with SlurmCluster() as cluster:
        job = cluster.submit("chains.sbatch", chdir=tmp_path)
        result = cluster.wait(job, timeout=120)

The client commands (``sbatch``, ``srun``, ``sinfo``, ...) find the cluster
through the ``SLURM_CONF`` environment variable: :attr:`SlurmCluster.env`
is the environment to run them with.

It needs Debian's ``slurm-wlm`` and ``munge`` packages (``.ci/run`` installs
them) and root, since ``slurmd`` starts each job's processes as the job's
user. :func:`unavailable` says what is missing, in words that say what to
do, or ``None``; :func:`slurm_conf` writes the configuration's text alone,
with no daemon started (it and :class:`ClusterConfig` live in :mod:`booktools.slurm_config`).

``python -m booktools.slurm_cluster`` starts a cluster, prints how long that
took and its ``sinfo``, and stops it again.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from parallel_mcmc.pools import free_port

from .slurm_config import ClusterConfig, available_cpus, parse_conf, slurm_conf

__all__ = [
    "COMMANDS",
    "PACKAGES",
    "FINISHED",
    "SBIN",
    "SlurmUnavailable",
    "SlurmError",
    "ClusterConfig",
    "JobResult",
    "which",
    "unavailable",
    "mpi_plugins",
    "slurm_conf",
    "parse_conf",
    "SlurmCluster",
    "main",
]

#: The programs a cluster needs, and the Debian package that holds each.
COMMANDS = {
    "munged": "munge",
    "slurmctld": "slurm-wlm",
    "slurmd": "slurm-wlm",
    "sbatch": "slurm-wlm",
    "sinfo": "slurm-wlm",
    "scontrol": "slurm-wlm",
    "srun": "slurm-wlm",
}
#: What to install where a command is missing (``apt-get install ...``).
PACKAGES = ("slurm-wlm", "munge")
#: Job states after which a job will not run again.
FINISHED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                      "PREEMPTED", "BOOT_FAIL", "DEADLINE"})


class SlurmUnavailable(RuntimeError):
    """SLURM cannot be started on this machine; the message says what to install or do."""


class SlurmError(RuntimeError):
    """A daemon of the cluster failed, or a job did not finish in time; the message holds the logs."""


#: Where the daemons live when the ``PATH`` of a user's shell leaves out the ``sbin`` folders.
SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def which(name: str) -> str | None:
    """The path of the program ``name``: on ``PATH``, or else in one of the :data:`SBIN` folders."""
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))


def unavailable() -> str | None:
    """Why a cluster cannot start here (what to install, or to run as root), or ``None`` if it can."""
    missing = [name for name in COMMANDS if which(name) is None]
    if missing:
        packages = sorted({COMMANDS[name] for name in missing})
        return (f"SLURM cannot start: {', '.join(missing)} not found (Debian package {', '.join(packages)}). "
                f"Install them with `apt-get install {' '.join(PACKAGES)}` as root, or run .ci/run, "
                "which installs what the tests need.")
    if os.geteuid() != 0:
        return ("A local SLURM cluster must be started as root (slurmd starts each job's processes as the job's "
                "user): run the tests as root, for example in the CI container (.ci/run).")
    return None


def mpi_plugins(text: str) -> list[str]:
    """The MPI plug-ins named in the output of ``srun --mpi=list`` (``pmi2``, ``pmix``, ``none``, ...).

    :meth:`SlurmCluster.mpi_plugins` runs the command (it needs a configured cluster).
    """
    # "MPI plugin types are..." then one indented name a line; "specific pmix plugin versions available: ..." after
    return [line.strip() for line in text.splitlines() if re.fullmatch(r"\s+[\w-]+", line)]


@dataclass(frozen=True)
class JobResult:
    """A finished job: its id, final state, exit code (``"0:0"`` is success), and seconds."""

    job_id: int
    state: str
    exit_code: str
    seconds: float  # from submission to the end seen by polling, measured here
    run_time: str  # SLURM's own RunTime of the job (whole seconds)
    fields: Mapping[str, str]

    @property
    def ok(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code == "0:0"


class SlurmCluster:
    """A one-node SLURM cluster in a temporary folder; a context manager (see the module's docstring).

    ``start_seconds`` is how long the start took, from launching ``munged``
    to the node showing ``idle`` in ``sinfo``.
    """

    def __init__(self, *, cpus: int | None = None, real_memory_mb: int = 1024, start_timeout: float = 60.0,
                 mpi_default: str = "none", keep_folder: bool = False) -> None:
        self.cpus = cpus or available_cpus()
        self.real_memory_mb = real_memory_mb
        self.start_timeout = start_timeout
        self.mpi_default = mpi_default
        self.keep_folder = keep_folder
        self.folder: Path | None = None
        self.config: ClusterConfig | None = None
        self.start_seconds: float | None = None
        self._daemons: dict[str, subprocess.Popen] = {}
        self._submitted: dict[int, float] = {}

    # ------------------------------------------------------------------ start and stop

    def __enter__(self) -> "SlurmCluster":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def env(self) -> dict[str, str]:
        """This process's environment with ``SLURM_CONF`` pointing at the cluster's configuration."""
        if self.config is None:
            raise SlurmError("The cluster is not started: call start() or use it in a with block.")
        return {**os.environ, "SLURM_CONF": str(self.config.conf)}

    def start(self) -> None:
        """Write the configuration, start munged, slurmctld and slurmd, and wait for the node to be idle."""
        reason = unavailable()
        if reason:
            raise SlurmUnavailable(reason)
        begin = time.perf_counter()
        self.folder = Path(tempfile.mkdtemp(prefix="slurm_cluster_"))
        try:
            self._start_in_folder()
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - begin

    def _start_in_folder(self) -> None:
        folder = self.folder
        assert folder is not None
        folder.chmod(0o755)  # munged refuses a socket in a folder that others cannot enter
        for name in ("state", "spool", "log", "munge"):
            (folder / name).mkdir(mode=0o755)
        self.config = ClusterConfig(folder, cpus=self.cpus, real_memory_mb=self.real_memory_mb,
                                    controller_port=free_port(), node_port=free_port(),
                                    mpi_default=self.mpi_default)
        self.config.conf.write_text(slurm_conf(self.config))
        # MUNGE: a key of our own (1 KiB of random bytes, readable by its owner only), in the foreground (-F).
        key = folder / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        munge = folder / "munge"
        self._launch("munged", [which("munged"), "-F", "--force", f"--key-file={key}",
                                f"--socket={self.config.munge_socket}", f"--pid-file={munge / 'munged.pid'}",
                                f"--seed-file={munge / 'munged.seed'}", f"--log-file={munge / 'munged.log'}"])
        self._wait_for(lambda: self.config.munge_socket.exists(), "munged to create its socket")
        conf = str(self.config.conf)
        self._launch("slurmctld", [which("slurmctld"), "-D", "-f", conf])
        self._launch("slurmd", [which("slurmd"), "-D", "-f", conf, "-N", self.config.host])
        self._wait_for(lambda: self.node_state() == "idle", "the node to show idle in sinfo")

    def _launch(self, name: str, cmd: Sequence[str]) -> None:
        log = open(Path(self.folder) / "log" / f"{name}.out", "wb")
        try:
            self._daemons[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                                   start_new_session=True)
        finally:
            log.close()

    def _wait_for(self, ready, what: str) -> None:
        deadline = time.perf_counter() + self.start_timeout
        while not ready():
            dead = [n for n, p in self._daemons.items() if p.poll() is not None]
            if dead:
                raise SlurmError(f"{', '.join(dead)} stopped while waiting for {what}.\n{self.logs()}")
            if time.perf_counter() > deadline:
                raise SlurmError(f"Waited {self.start_timeout:.0f} s for {what}.\n{self.logs()}")
            time.sleep(0.1)

    def node_state(self) -> str:
        """The node's state as ``sinfo`` shows it (``idle``, ``mixed``, ``down*``, ...), or ``""``."""
        proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, env=self.env,
                              timeout=30)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    def mpi_plugins(self) -> list[str]:
        """The MPI plug-ins ``srun --mpi=...`` accepts on this cluster."""
        proc = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True, env=self.env, timeout=30)
        return mpi_plugins(proc.stdout + proc.stderr)

    def logs(self, tail: int = 3000) -> str:
        """The end of every daemon's log, for error messages."""
        if self.folder is None:
            return ""
        parts = []
        for path in sorted(Path(self.folder).rglob("*")):
            if path.is_file() and (path.suffix in (".log", ".out")):
                parts.append(f"--- {path.name} ---\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel the jobs still known, stop the daemons this cluster started, and remove its folder."""
        controller = self._daemons.get("slurmctld")
        if self._submitted and controller is not None and controller.poll() is None:
            # jobs still queued or running (a test that failed half-way): their processes belong to slurmd's steps
            subprocess.run(["scancel", "--quiet", *map(str, self._submitted)], env=self.env, capture_output=True,
                           timeout=30)
            deadline = time.perf_counter() + 10
            while self.queue() and time.perf_counter() < deadline:
                time.sleep(0.2)
        for name in ("slurmd", "slurmctld", "munged"):  # the reverse of the start
            proc = self._daemons.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        if self.folder is not None and not self.keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    # ------------------------------------------------------------------ jobs

    def queue(self) -> list[str]:
        """The ids of the jobs ``squeue`` lists (pending or running)."""
        proc = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, env=self.env, timeout=30)
        return proc.stdout.split()

    def submit(self, script: str | Path, *, chdir: str | Path, args: Sequence[str] = (),
               env: Mapping[str, str] | None = None) -> int:
        """``sbatch`` the job script ``script`` (its output files go to ``chdir``); return the job's id.

        ``env`` is the environment to submit with (default: this process's);
        the job inherits it, as ``sbatch`` does by default. ``SLURM_CONF`` is
        set to this cluster's in any case.
        """
        script = Path(script).resolve()
        if not script.is_file():
            raise FileNotFoundError(f"No job script at {script}.")
        cmd = ["sbatch", "--parsable", f"--chdir={Path(chdir).resolve()}", str(script), *args]
        start = time.perf_counter()
        job_env = {**(os.environ if env is None else env), "SLURM_CONF": str(self.env["SLURM_CONF"])}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=job_env, timeout=60)
        if proc.returncode != 0:
            raise SlurmError(f"sbatch {script.name} failed ({proc.returncode}): {proc.stderr.strip()}\n{self.logs()}")
        job_id = int(proc.stdout.strip().split(";")[0])
        self._submitted[job_id] = start
        return job_id

    def job(self, job_id: int) -> dict[str, str]:
        """``scontrol show job``'s fields of the job, as a dict (``JobState``, ``ExitCode``, ``RunTime``, ...)."""
        proc = subprocess.run(["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True,
                              env=self.env, timeout=30)
        if proc.returncode != 0:
            raise SlurmError(f"scontrol does not know job {job_id}: {proc.stderr.strip()}")
        return dict(pair.split("=", 1) for pair in proc.stdout.split() if "=" in pair)

    def wait(self, job_id: int, timeout: float = 300.0, poll: float = 0.2) -> JobResult:
        """Wait until the job has finished (polling ``scontrol`` every ``poll`` s); cancel it past ``timeout`` s.

        ``sbatch --wait`` would do the same but looks at the job only every few
        seconds, with growing pauses; polling measures each job's time closely.
        """
        start = self._submitted.get(job_id, time.perf_counter())
        deadline = time.perf_counter() + timeout
        while True:
            fields = self.job(job_id)
            state = fields.get("JobState", "")
            if state in FINISHED:
                return JobResult(job_id, state, fields.get("ExitCode", ""), time.perf_counter() - start,
                                 fields.get("RunTime", ""), fields)
            if time.perf_counter() > deadline:
                subprocess.run(["scancel", str(job_id)], env=self.env, capture_output=True, timeout=30)
                raise SlurmError(f"Job {job_id} did not finish in {timeout:.0f} s (state {state}); cancelled.\n"
                                 f"{self.logs()}")
            time.sleep(poll)


def main() -> None:
    reason = unavailable()
    if reason:
        raise SystemExit(reason)
    with SlurmCluster() as cluster:
        print(f"cluster started in {cluster.start_seconds:.2f} s, configuration {cluster.config.conf}")
        print(subprocess.run(["sinfo"], capture_output=True, text=True, env=cluster.env).stdout, end="")
        print(f"srun --mpi=list: {', '.join(cluster.mpi_plugins())}")


if __name__ == "__main__":
    main()
