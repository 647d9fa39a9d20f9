"""The Dask page's claim about a real cluster: dask-jobqueue's ``SLURMCluster`` starts Dask workers as SLURM jobs
of the one-node cluster that ``booktools.slurm_cluster`` starts on this machine, and emcee draws the serial chain
through them.

The scheduler runs in this process and listens on the loopback interface; ``workers.scale(jobs=2)`` submits two
job scripts with ``sbatch``, each starting one worker of one thread, which connects back to it. Each worker
reports the SLURM job it runs in. Where SLURM cannot start (not installed, not root) the test skips and says what
to install or do. The cluster's start, the workers' arrival and the run are timed (``pytest -s`` shows them).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest


JOBS = 2
WORKERS_TIMEOUT = 180  # seconds for both jobs to start and their workers to join; about 10 s on an idle machine


@pytest.mark.slow
def test_slurmcluster_workers_are_slurm_jobs_and_draw_the_serial_chain(cluster, tmp_path, monkeypatch):
    from dask_jobqueue import SLURMCluster
    from distributed import Client

    from parallel_mcmc.pools import emcee_tasks

    # sbatch, squeue and scancel find this cluster, and the jobs find this Python and the book's packages
    monkeypatch.setenv("SLURM_CONF", cluster.env["SLURM_CONF"])
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(tmp_path)  # sbatch's default working folder: the jobs' output files land here
    with SLURMCluster(cores=1, processes=1, memory="400MB", walltime="00:10:00", queue="debug",
                      python=sys.executable, log_directory=str(tmp_path), local_directory=str(tmp_path),
                      scheduler_options={"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"},
                      silence_logs=logging.ERROR) as workers:
        script = workers.job_script()
        assert "#SBATCH -p debug" in script and "distributed.cli.dask_worker" in script, script
        begin = time.perf_counter()
        workers.scale(jobs=JOBS)
        with Client(workers) as client:
            try:
                client.wait_for_workers(JOBS, timeout=WORKERS_TIMEOUT)
            except Exception:  # say what SLURM and the jobs said
                logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in tmp_path.glob("*.err"))
                pytest.fail(f"{JOBS} workers did not join within {WORKERS_TIMEOUT} s; queue {cluster.queue()}\n"
                            f"{logs}\n{cluster.logs()}")
            joined = time.perf_counter() - begin
            jobs = client.run(os.getenv, "SLURM_JOB_ID")  # in each worker: the job it runs in
            assert len(jobs) == JOBS and all(jobs.values()), jobs
            assert len(set(jobs.values())) == JOBS, f"one worker per job: {jobs}"
            assert set(jobs.values()) <= set(cluster.queue()), (jobs, cluster.queue())  # jobs of this cluster, running
            begin = time.perf_counter()
            sampler = emcee_tasks.run_sampler(client.get_executor(pure=False), 3, cost=1e-4)
            ran = time.perf_counter() - begin
    serial = emcee_tasks.run_serial(3, cost=1e-4)
    assert np.array_equal(sampler.get_chain(), serial.get_chain())
    print(f"\n{JOBS} SLURM jobs' workers joined in {joined:.1f} s; emcee through them took {ran:.2f} s")
