"""Chains over the processes of a SLURM job, as one JAX program: ``srun python -m parallel_mcmc.slurm_chains``.

Every process of the job step runs this module. It calls
:func:`jax.distributed.initialize` with no arguments, so JAX reads what
joins the processes from SLURM's environment: the coordinator (the first
host of ``SLURM_STEP_NODELIST``, a port derived from ``SLURM_JOB_ID``), the
number of processes (``SLURM_NTASKS``), this process's index
(``SLURM_PROCID``) and its index on its node (``SLURM_LOCALID``, the GPU it
keeps on a GPU node). Then it samples NUTS chains (BlackJAX) of the normal
model :mod:`parallel_mcmc.models.normal`, split over a mesh of all the
devices of all the processes by :func:`parallel_mcmc.chains.shard_map_runner`:
each process starts only the chains its devices hold. The draws are gathered
to every process, and process 0 writes a JSON summary to ``--out``
(:func:`summarize`): how many processes and devices took part and what each
process read from SLURM, and the posterior's mean, standard deviation, R-hat
and bulk ESS (ArviZ) beside the exact posterior mean and standard deviation
of ``loc`` (with flat priors on ``loc`` and ``log_scale`` its marginal
posterior is a Student-t centred on the sample mean; :func:`exact_loc`).

The chains start spread out (:func:`parallel_mcmc.models.normal.spread_positions`)
and the first ``--warmup`` draws of each are dropped. NUTS uses a fixed step
size and a diagonal mass matrix from the posterior's scales, so no adaptation
runs and the same keys give the same chains whatever the number of processes.

Outside SLURM the same program runs wherever ``jax.distributed.initialize()``
finds its settings: under Open MPI's ``mpirun``, on Cloud TPU, or with
``JAX_COORDINATOR_ADDRESS`` and the process count and index given by hand
(``--coordinator``, ``--num-processes``, ``--process-id``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .validate import whole_number

__all__ = ["SLURM_VARIABLES", "STEP_SIZE", "exact_loc", "inverse_mass_matrix", "summarize", "main"]

#: What JAX's SLURM detection reads (``jax._src.clusters.slurm_cluster``), and what each process reports.
SLURM_VARIABLES = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")
#: NUTS's step size, in units of the posterior's standard deviations (the mass matrix whitens it).
STEP_SIZE = 0.8


def exact_loc(data: Any) -> tuple[float, float]:
    """The exact posterior mean and standard deviation of ``loc`` given the observations ``data``.

    With flat priors on ``loc`` and ``log_scale``, ``loc``'s marginal posterior
    is a Student-t with ``n - 1`` degrees of freedom, centred on the sample
    mean, of scale ``s / sqrt(n)`` (``s`` the sample standard deviation).
    """
    y = np.asarray(data, dtype=np.float64)
    n = y.size
    if y.ndim != 1 or n < 4:
        raise ValueError(f"data must be a 1-D array of at least 4 observations, got shape {y.shape}.")
    scale = y.std(ddof=1) / np.sqrt(n)
    return float(y.mean()), float(scale * np.sqrt((n - 1) / (n - 3)))


def inverse_mass_matrix(data: Any) -> np.ndarray:
    """NUTS's diagonal inverse mass matrix for ``(loc, log_scale)``: posterior variances ``s²/n``, ``1/(2n)``."""
    y = np.asarray(data, dtype=np.float64)
    return np.array([y.var(ddof=1) / y.size, 1.0 / (2 * y.size)], dtype=np.float32)


def summarize(draws: Mapping[str, Any], processes: Sequence[Mapping[str, int]], data: Any, *,
              warmup: int, **extra: Any) -> dict:
    """The JSON summary process 0 writes: ``draws`` are ``(chain, draw)`` arrays, warm-up included.

    ``processes`` holds one dict a process (its JAX index, what it read from
    SLURM, its local devices). ``extra`` is copied in as it is.
    """
    import arviz as az

    from .diagnostics import to_inference_data

    kept = {name: np.asarray(value)[:, warmup:] for name, value in draws.items()}
    idata = to_inference_data(kept)
    rhat, ess = az.rhat(idata), az.ess(idata, method="bulk")
    mean, sd = exact_loc(data)
    return {
        "processes": len(processes),
        "per_process": [dict(p) for p in processes],
        "num_chains": int(next(iter(kept.values())).shape[0]),
        "num_draws": int(next(iter(kept.values())).shape[1]),
        "warmup": int(warmup),
        "mean": {name: float(value.mean()) for name, value in kept.items()},
        "sd": {name: float(value.std()) for name, value in kept.items()},
        "rhat": {name: float(rhat[name]) for name in kept},
        "ess_bulk": {name: float(ess[name]) for name in kept},
        "exact_mean_loc": mean,
        "exact_sd_loc": sd,
        **extra,
    }


def _slurm_number(name: str) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else -1  # -1: not started by SLURM


def main(argv: Sequence[str] | None = None) -> dict | None:
    parser = argparse.ArgumentParser(prog="python -m parallel_mcmc.slurm_chains", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where process 0 writes the JSON summary")
    parser.add_argument("--chains-per-device", type=int, default=4)
    parser.add_argument("--draws", type=int, default=600, help="draws per chain, warm-up included")
    parser.add_argument("--warmup", type=int, default=100, help="draws dropped at the start of each chain")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds a process waits for the others to join (initialization_timeout)")
    parser.add_argument("--coordinator", help="host:port of process 0, where no launcher supplies it")
    parser.add_argument("--num-processes", type=int)
    parser.add_argument("--process-id", type=int)
    args = parser.parse_args(argv)
    whole_number("--chains-per-device", args.chains_per_device, 1)
    whole_number("--warmup", args.warmup, 0)
    whole_number("--draws", args.draws, args.warmup + 2, of=" (more than --warmup)")

    import jax

    # Before anything touches JAX's devices: join the group. With no arguments JAX finds the coordinator, the
    # number of processes and this one's index in the launcher's environment (SLURM's SLURM_* variables here).
    try:
        jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id,
                                   initialization_timeout=args.timeout)
    except ValueError as err:  # no launcher's settings found, and none given
        parser.error(f"{err} Start the processes with SLURM's srun (or Open MPI's mpirun), or give "
                     "--coordinator HOST:PORT, --num-processes and --process-id to each.")

    import blackjax  # importing BlackJAX starts JAX's backend: only once the process has joined the group
    from jax.experimental import multihost_utils
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    from .chains import shard_map_runner
    from .models import normal

    data = normal.observed()
    nuts = blackjax.nuts(normal.make_logdensity(data), step_size=STEP_SIZE,
                         inverse_mass_matrix=inverse_mass_matrix(data))
    mesh = jax.make_mesh((jax.device_count(),), ("chains",), axis_types=(AxisType.Explicit,))
    num_chains = args.chains_per_device * jax.device_count()

    # The same keys and starting points in every process; each keeps the block of chains its devices hold.
    keys = jax.random.split(jax.random.key(0), num_chains)
    states = jax.vmap(nuts.init)({k: jax.numpy.asarray(v) for k, v in normal.spread_positions(num_chains).items()})
    per_process = num_chains // jax.process_count()
    first = jax.process_index() * per_process
    mine = jax.tree.map(lambda x: x[first:first + per_process], (keys, states))
    keys, states = multihost_utils.host_local_array_to_global_array(mine, mesh, P("chains"))

    run = shard_map_runner(nuts.step, args.draws, mesh, "chains", inner="map")
    start = time.perf_counter()
    positions, info = jax.block_until_ready(run(keys, states))
    seconds = time.perf_counter() - start  # compilation included: the program runs once

    draws = multihost_utils.process_allgather(positions, tiled=True)  # every chain, in every process
    steps = multihost_utils.process_allgather(info.num_integration_steps.sum(axis=1), tiled=True)
    mine_now = np.array([jax.process_index(), _slurm_number("SLURM_PROCID"), _slurm_number("SLURM_LOCALID"),
                         jax.local_device_count()])
    table = np.asarray(multihost_utils.process_allgather(mine_now)).reshape(jax.process_count(), -1)
    times = np.asarray(multihost_utils.process_allgather(np.array([seconds]))).ravel()
    print(f"process {jax.process_index()} of {jax.process_count()} (SLURM_PROCID {mine_now[1]}, "
          f"SLURM_LOCALID {mine_now[2]}): {jax.local_device_count()} local and {jax.device_count()} global "
          f"device(s), chains {first}..{first + per_process - 1}, {seconds:.1f} s", flush=True)
    result = None
    if jax.process_index() == 0:
        processes = [dict(zip(("jax_process_index", "slurm_procid", "slurm_localid", "local_devices"),
                              map(int, row))) for row in table]
        result = summarize(draws, processes, data, warmup=args.warmup, devices=jax.device_count(),
                           integration_steps=np.asarray(steps).tolist(), sampling_seconds=float(times.max()),
                           slurm={name: os.environ.get(name) for name in SLURM_VARIABLES})
        Path(args.out).write_text(json.dumps(result, indent=1))
        print(json.dumps({k: result[k] for k in ("processes", "devices", "mean", "rhat")}), flush=True)
    jax.distributed.shutdown()
    return result


if __name__ == "__main__":
    main()
