"""The configuration of the one-node SLURM cluster that :mod:`booktools.slurm_cluster` starts.

:class:`ClusterConfig` describes the cluster (one node, this machine, its cores, one partition,
every file under one folder); :func:`slurm_conf` writes the text of its ``slurm.conf``, with no
daemon started, and :func:`parse_conf` reads such a text back. The names are importable from
:mod:`booktools.slurm_cluster` as well.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ClusterConfig", "available_cpus", "slurm_conf", "parse_conf"]


def available_cpus() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class ClusterConfig:
    """What :func:`slurm_conf` writes: one node called ``host`` with ``cpus`` cores, files under ``folder``."""

    folder: Path
    host: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    cpus: int = field(default_factory=available_cpus)
    real_memory_mb: int = 1024
    cluster_name: str = "book"
    partition: str = "debug"
    controller_port: int = 6817
    node_port: int = 6818
    mpi_default: str = "none"

    @property
    def conf(self) -> Path:
        """The configuration file, ``folder/slurm.conf``."""
        return Path(self.folder) / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        """The MUNGE daemon's socket, under ``folder/munge``."""
        return Path(self.folder) / "munge" / "munge.socket"


def slurm_conf(config: ClusterConfig) -> str:
    """The text of ``slurm.conf`` for ``config``: one node, one partition, no cgroups, no accounting.

    Every file the daemons write (state, spool, pid files, logs) is under
    ``config.folder``; authentication goes through the MUNGE socket
    ``config.munge_socket``. The node is reached at 127.0.0.1, so the cluster
    never leaves this machine.

    Parameters
    ----------
    config
        The cluster's description.

    Returns
    -------
    str
        The file's text, one ``Key=value`` setting a line.

    Raises
    ------
    ValueError
        If ``config.host`` is not a short host name, or its cores or memory are not positive.
    """
    folder = Path(config.folder)
    if not config.host or not re.fullmatch(r"[A-Za-z0-9-]+", config.host):
        raise ValueError(f"host must be a short host name (letters, digits, '-'), got {config.host!r}.")
    if config.cpus < 1 or config.real_memory_mb < 1:
        raise ValueError(f"cpus and real_memory_mb must be positive, got {config.cpus} and {config.real_memory_mb}.")
    lines = [
        "# One node on this machine, written by booktools.slurm_cluster; every file under this folder.",
        f"ClusterName={config.cluster_name}",
        f"SlurmctldHost={config.host}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={config.controller_port}",
        f"SlurmdPort={config.node_port}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={config.munge_socket}",
        f"StateSaveLocation={folder / 'state'}",
        f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmdPidFile={folder / 'slurmd.pid'}",
        f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={folder / 'log' / 'slurmd.log'}",
        "# No cgroups: processes are tracked through /proc, tasks are not bound to cores.",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        f"MpiDefault={config.mpi_default}",
        "ReturnToService=2",
        "SlurmdTimeout=60",
        "InactiveLimit=0",
        "MinJobAge=300",
        f"NodeName={config.host} NodeAddr=127.0.0.1 CPUs={config.cpus} RealMemory={config.real_memory_mb} "
        "State=UNKNOWN",
        f"PartitionName={config.partition} Nodes={config.host} Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


def parse_conf(text: str) -> dict[str, str]:
    """The settings of a ``slurm.conf`` text.

    Parameters
    ----------
    text
        The file's text.

    Returns
    -------
    dict of str to str
        Each line's ``Key`` -> the rest of the line after its first ``=`` (comments dropped).
    """
    pairs = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = line.split("=", 1)
            pairs[key] = value
    return pairs
