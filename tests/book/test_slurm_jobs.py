"""The book's SLURM job scripts, submitted with ``sbatch`` to a real one-node cluster on this machine.

``booktools.slurm_cluster`` starts the cluster (MUNGE, slurmctld, slurmd in a temporary folder) once
for the module; both scripts of ``chapters/beyond_one_machine/jobs`` are submitted, each job is waited
for, and what it wrote is checked against what is known about its posterior:

- ``chains.sbatch``: two processes that JAX joined from SLURM's variables alone (each one's JAX index
  is its ``SLURM_PROCID``), eight NUTS chains over the two devices, the posterior mean of ``loc``
  beside its exact value, R-hat near 1;
- ``emcee_mpi.sbatch``: two MPI ranks started by ``srun --mpi=pmi2``, each holding its own copy of the
  data, and exactly the chain that the same sampler draws in this process, near the least-squares fit;
- ``chains_resume.sbatch``: warned early (``scancel --signal=USR1 --batch``, as ``--signal=B:USR1@120``
  would be before the time limit) once its first checkpoint is saved, the job stops with status 3 and
  queues its successor itself (``sbatch --dependency=afterany``), which resumes and ends with the draws
  of a run never stopped.

Where SLURM cannot start (not installed, not root) these tests skip and say what to install or do;
the configuration the tool writes is checked without any daemon. The cluster's start time and each
job's time are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from booktools import slurm_cluster
from booktools.slurm_cluster import ClusterConfig, SlurmCluster, SlurmUnavailable, parse_conf, slurm_conf

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "chapters" / "beyond_one_machine" / "jobs"
JOB_TIMEOUT = 300  # seconds; the jobs take about 10 and 20 s on an idle 2-core machine
RESUME_DRAWS = 20_000  # chains_resume.sbatch's --draws


# ---------------------------------------------------------------- the configuration, no daemon


def test_conf_describes_one_node_with_every_file_in_the_folder(tmp_path):
    config = ClusterConfig(tmp_path, host="node7", cpus=3, controller_port=7001, node_port=7002)
    conf = parse_conf(slurm_conf(config))
    assert conf["ClusterName"] == "book"
    assert conf["SlurmctldHost"] == "node7(127.0.0.1)"
    assert conf["NodeName"].split() == ["node7", "NodeAddr=127.0.0.1", "CPUs=3", "RealMemory=1024", "State=UNKNOWN"]
    partition = conf["PartitionName"].split()
    assert partition[0] == "debug" and "Nodes=node7" in partition and "Default=YES" in partition
    assert (conf["SlurmctldPort"], conf["SlurmdPort"]) == ("7001", "7002")
    assert conf["SlurmUser"] == "root" and conf["MpiDefault"] == "none"
    # no cgroups, no accounting
    assert conf["ProctrackType"] == "proctrack/linuxproc" and conf["TaskPlugin"] == "task/none"
    assert conf["JobAcctGatherType"] == "jobacct_gather/none" and conf["SelectType"] == "select/cons_tres"
    assert not [value for value in conf.values() if "cgroup" in value]
    for key in ("StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile",
                "SlurmdLogFile"):
        assert Path(conf[key]).is_relative_to(tmp_path), key
    assert conf["AuthType"] == "auth/munge" and conf["AuthInfo"] == f"socket={tmp_path / 'munge' / 'munge.socket'}"


def test_conf_refuses_a_bad_host_or_size(tmp_path):
    with pytest.raises(ValueError, match="short host name"):
        slurm_conf(ClusterConfig(tmp_path, host="node7.example.org"))
    with pytest.raises(ValueError, match="positive"):
        slurm_conf(ClusterConfig(tmp_path, host="node7", cpus=0))


def test_parse_conf_drops_comments():
    assert parse_conf("# A=1\nB=2 # C=3\n\nD=x=y\n") == {"B": "2", "D": "x=y"}


def test_mpi_plugins_are_read_from_sruns_list():
    text = ("MPI plugin types are...\n\tpmix\n\tnone\n\tcray_shasta\n\tpmi2\n"
            "specific pmix plugin versions available: pmix_v4\n")
    assert slurm_cluster.mpi_plugins(text) == ["pmix", "none", "cray_shasta", "pmi2"]


def test_unavailable_says_what_to_install(monkeypatch):
    monkeypatch.setattr(slurm_cluster, "which", lambda name: None)
    reason = slurm_cluster.unavailable()
    assert "munged" in reason and "slurmctld" in reason and "apt-get install slurm-wlm munge" in reason
    with pytest.raises(SlurmUnavailable, match="apt-get install slurm-wlm munge"):
        SlurmCluster().start()


def test_unavailable_asks_for_root(monkeypatch):
    monkeypatch.setattr(slurm_cluster, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(slurm_cluster.os, "geteuid", lambda: 1000)
    assert "as root" in slurm_cluster.unavailable()


@pytest.mark.slow
def test_the_chain_program_reads_slurms_variables_without_slurm(tmp_path):
    # What srun would set for a job step of one task; JAX's SLURM detection takes it from there.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JAX_", "XLA_"))}
    env.update(SLURM_JOB_ID="4093", SLURM_STEP_NODELIST="localhost", SLURM_NTASKS="1", SLURM_PROCID="0",
               SLURM_LOCALID="0", JAX_PLATFORMS="cpu")
    out = tmp_path / "one.json"
    proc = subprocess.run([sys.executable, "-m", "parallel_mcmc.programs.slurm_chains", "--out", str(out), "--draws", "200"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["processes"] == result["devices"] == 1 and result["num_chains"] == 8
    assert result["slurm"]["SLURM_JOB_ID"] == "4093"
    (process,) = result["per_process"]
    assert {k: process[k] for k in ("jax_process_index", "slurm_procid", "slurm_localid", "local_devices")} == {
        "jax_process_index": 0, "slurm_procid": 0, "slurm_localid": 0, "local_devices": 1}
    assert process["cache_hits"] == 0 and process["compile_seconds"] > 0  # no cache was set


# ---------------------------------------------------------------- a real cluster


@pytest.fixture(scope="module")
def job_env():
    """The environment the jobs are submitted with: this Python's bin first on PATH, no JAX or XLA settings, and
    PYTHONPATH's folders made absolute (the jobs run in another folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JAX_", "XLA_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    return env


def run_job(cluster: SlurmCluster, name: str, folder: Path, env: dict) -> slurm_cluster.JobResult:
    job = cluster.submit(JOBS / name, chdir=folder, env=env)
    result = cluster.wait(job, timeout=JOB_TIMEOUT)
    outputs = "\n".join(p.read_text(errors="replace")[-3000:] for p in folder.glob("*.out"))
    assert result.ok, f"job {job} ({name}) ended {result.state} with exit code {result.exit_code}:\n{outputs}"
    print(f"\n{name}: job {job} took {result.seconds:.1f} s from submission to its end (SLURM's RunTime "
          f"{result.run_time})")
    return result


def test_the_cluster_is_up(cluster):
    assert cluster.node_state() == "idle"
    assert cluster.start_seconds < cluster.start_timeout
    assert "pmi2" in cluster.mpi_plugins(), "emcee_mpi.sbatch starts its ranks with srun --mpi=pmi2"


@pytest.mark.slow
def test_chains_job(cluster, job_env, tmp_path):
    job = run_job(cluster, "chains.sbatch", tmp_path, job_env).job_id
    result = json.loads((tmp_path / f"chains-{job}.json").read_text())
    # one program of two processes, joined from SLURM's variables alone
    assert result["processes"] == result["devices"] == 2
    assert result["slurm"]["SLURM_JOB_ID"] == str(job) and result["slurm"]["SLURM_NTASKS"] == "2"
    assert [(p["jax_process_index"], p["slurm_procid"], p["local_devices"]) for p in result["per_process"]] == [
        (0, 0, 1), (1, 1, 1)]
    assert sorted(p["slurm_localid"] for p in result["per_process"]) == [0, 1]  # one node: local ids 0 and 1
    log = next(tmp_path.glob(f"chains-{job}.out")).read_text()
    assert "process 0 of 2" in log and "process 1 of 2" in log
    # the draws: 8 chains, converged, the posterior of loc as it is exactly
    assert result["num_chains"] == 8 and len(result["integration_steps"]) == 8
    assert max(result["rhat"].values()) < 1.05, result["rhat"]
    mean, sd, ess = result["mean"]["loc"], result["exact_sd_loc"], result["ess_bulk"]["loc"]
    assert abs(mean - result["exact_mean_loc"]) < 5 * sd / np.sqrt(ess), (mean, result["exact_mean_loc"], sd, ess)
    assert abs(result["sd"]["loc"] / sd - 1) < 0.2
    # the script's compilation cache: process 0 looked its programs up and wrote them to the folder it named
    assert result["per_process"][0]["cache_misses"] > 0 and result["per_process"][0]["cache_hits"] == 0
    assert any((tmp_path / "jax-cache").glob("*-cache")), "no compiled program in the job's cache folder"


def least_squares_fit():
    """The sinusoid's least-squares parameters and their standard errors (the posterior's Gaussian approximation)."""
    from scipy.optimize import least_squares

    from parallel_mcmc.models import sinusoid

    t, y = sinusoid.data()

    def residuals(theta):
        amplitude, frequency, phase, offset = theta
        return (y - (amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset)) / sinusoid.NOISE_SCALE

    fit = least_squares(residuals, sinusoid.TRUE_PARAMS)
    return fit.x, np.sqrt(np.diag(np.linalg.inv(fit.jac.T @ fit.jac)))


@pytest.mark.slow
def test_emcee_mpi_job(cluster, job_env, tmp_path):
    from parallel_mcmc.programs import sinusoid_mpi
    from parallel_mcmc.models import sinusoid

    job = run_job(cluster, "emcee_mpi.sbatch", tmp_path, job_env).job_id
    out = np.load(tmp_path / f"emcee-{job}.npz")
    chain = out["chain"]
    assert chain.shape == (sinusoid_mpi.NUM_STEPS, sinusoid_mpi.NUM_WALKERS, 4)
    # two ranks, both evaluating, each with the whole data set built once in its own process
    assert str(out["pool"]) == "sharing" and int(out["workers"]) == 2
    ranks = out["ranks"]
    assert ranks[:, 0].tolist() == [0, 1] and len(set(ranks[:, 1])) == 2
    assert ranks[:, 2].tolist() == [sinusoid.NUM_POINTS] * 2 and ranks[:, 3].tolist() == [1, 1]
    assert 0.2 < out["acceptance"].mean() < 0.9
    # the pool changes where the log-probabilities are computed, not the chain
    serial = sinusoid_mpi.run(None)
    np.testing.assert_array_equal(chain, serial.get_chain())
    np.testing.assert_array_equal(out["log_prob"], serial.get_log_prob())
    # and the chain sits on the posterior: its mean near the least-squares fit, in units of its standard error
    best, se = least_squares_fit()
    z = (chain[sinusoid_mpi.NUM_STEPS // 2:].reshape(-1, 4).mean(axis=0) - best) / se
    assert np.all(np.abs(z) < 1.5), z


@pytest.mark.slow
def test_chains_resume_job_stops_on_the_warning_and_its_successor_resumes(cluster, job_env, tmp_path):
    from parallel_mcmc.pools import run_processes

    job = cluster.submit(JOBS / "chains_resume.sbatch", chdir=tmp_path, env=job_env)
    successor = None
    try:
        checkpoint = tmp_path / "chains.npz"
        deadline = time.perf_counter() + JOB_TIMEOUT
        while not checkpoint.exists():  # the first segment is saved: the program has its signal handler
            assert cluster.job(job)["JobState"] in ("PENDING", "RUNNING"), cluster.job(job)
            assert time.perf_counter() < deadline, f"no checkpoint after {JOB_TIMEOUT} s"
            time.sleep(0.05)
        # What --signal=B:USR1@120 does before the time limit: SIGUSR1 to the batch shell alone.
        subprocess.run(["scancel", "--signal=USR1", "--batch", str(job)], env=cluster.env, check=True, timeout=30)
        first = cluster.wait(job, timeout=JOB_TIMEOUT)
        log = (tmp_path / f"chains-resume-{job}.out").read_text()
        assert (first.state, first.exit_code) == ("FAILED", "3:0"), log  # 3: stopped early and saved, resume me
        assert "SIGUSR1: stopping after this segment" in log and not (tmp_path / f"chains-{job}.json").exists(), log
        stopped_at = int(np.load(checkpoint)["done"])
        assert 0 < stopped_at < RESUME_DRAWS and f"stopped after draw {stopped_at} of {RESUME_DRAWS}" in log, log
        # the script queued its successor itself, to start once the first job had ended
        successor = int(re.search(r"Submitted batch job (\d+)", log).group(1))
        second = cluster.wait(successor, timeout=JOB_TIMEOUT)
        assert second.fields["StartTime"] >= first.fields["EndTime"], (first.fields, second.fields)
        log = (tmp_path / f"chains-resume-{successor}.out").read_text()
        assert second.ok, log
        assert f"resuming at draw {stopped_at} of {RESUME_DRAWS}" in log and "Submitted batch job" not in log, log
        result = json.loads((tmp_path / f"chains-{successor}.json").read_text())
        assert result["processes"] == 2 and result["checkpoint"]["resumed_at"] == stopped_at, result
        print(f"\nchains_resume.sbatch: job {job} stopped at draw {stopped_at} after {first.seconds:.1f} s; job "
              f"{successor} resumed and ended {second.seconds:.1f} s later")
    finally:
        for left in (job, successor):
            if left is not None and cluster.job(left)["JobState"] not in slurm_cluster.FINISHED:
                subprocess.run(["scancel", str(left)], env=cluster.env, timeout=30)
    # the draws of the two jobs are those of one run never stopped (one process with two devices, no checkpoint)
    run_processes(module="parallel_mcmc.programs.slurm_chains", launcher="subprocess", timeout=JOB_TIMEOUT, args=[
        "--draws", str(RESUME_DRAWS), "--out", str(tmp_path / "whole.json"), "--draws-out", str(tmp_path / "whole.npz"),
        "--no-diagnostics", "--cpu-devices", "2"], env=job_env)
    with np.load(tmp_path / "whole.npz") as whole, np.load(tmp_path / "draws.npz") as resumed:
        assert resumed["loc"].shape == (8, RESUME_DRAWS)
        for name in whole:
            np.testing.assert_array_equal(resumed[name], whole[name], err_msg=name)
