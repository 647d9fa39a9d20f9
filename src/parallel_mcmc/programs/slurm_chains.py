"""Chains over the processes of a SLURM job, as one JAX program: ``srun python -m parallel_mcmc.programs.slurm_chains``.

Every process of the job step runs this module. It calls
:func:`jax.distributed.initialize` with no arguments, so JAX reads what
joins the processes from SLURM's environment: the coordinator (the first
host of ``SLURM_STEP_NODELIST``, a port derived from ``SLURM_JOB_ID``), the
number of processes (``SLURM_NTASKS``), this process's index
(``SLURM_PROCID``) and its index on its node (``SLURM_LOCALID``, the GPU it
keeps on a GPU node). Then it samples NUTS chains (BlackJAX) of the normal
model :mod:`parallel_mcmc.models.normal`, split over a mesh of all the
devices of all the processes by :func:`parallel_mcmc.sample.shard_map_runner`:
each process makes the keys and starting points of only the chains its
devices hold (:func:`process_chains`), and
:func:`jax.make_array_from_process_local_data` joins them into global arrays.
Chain ``i``'s key is ``fold_in(key(SEED), i)`` (:func:`chain_keys`), so every
chain draws the same values whatever the number of processes and devices
(``--cpu-devices`` tries layouts on one machine). The sampling program is
compiled ahead of its call, so the summary gives compilation and sampling
apart, and each process's hits of JAX's persistent compilation cache (set by
``JAX_COMPILATION_CACHE_DIR``). The draws are gathered
to every process, and process 0 writes a JSON summary to ``--out``
(:func:`summarize`): how many processes and devices took part and what each
process read from SLURM, and the posterior's mean, standard deviation, R-hat
and bulk ESS (ArviZ) beside the exact posterior mean and standard deviation
of ``loc`` (with flat priors on ``loc`` and ``log_scale`` its marginal
posterior is a Student-t centred on the sample mean; :func:`exact_loc`).

With ``--checkpoint FILE`` the chains run in segments of ``--segment`` draws
(:func:`segment_runner`; draw ``i`` of a chain uses ``fold_in(chain key, i)``,
so the segments change nothing in the draws). After each segment process 0
writes the chains' states, keys, the draw counter and the draws so far to
``FILE`` (:func:`save_checkpoint`: a temporary file, then ``os.replace``).
On ``SIGUSR1`` or ``SIGTERM`` (or after ``--stop-after`` segments) every
process stops after the current segment, once it is saved, and exits with
status :data:`STOPPED` (3): resume me. Started again with ``FILE`` present, it
goes on from there (:func:`load_checkpoint`), and its draws equal an
uninterrupted run's to the last bit.

The chains start spread out (:func:`parallel_mcmc.models.normal.spread_positions`)
and the first ``--warmup`` draws of each are dropped. NUTS uses a fixed step
size and a diagonal mass matrix from the posterior's scales, so no adaptation
runs.

Outside SLURM the same program runs wherever ``jax.distributed.initialize()``
finds its settings: under Open MPI's ``mpirun``, on Cloud TPU, or with
``JAX_COORDINATOR_ADDRESS`` and the process count and index given by hand
(``--coordinator``, ``--num-processes``, ``--process-id``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from parallel_mcmc._validate import whole_number

__all__ = ["SLURM_VARIABLES", "SEED", "STEP_SIZE", "STOPPED", "chain_keys", "process_chains", "exact_loc",
           "inverse_mass_matrix", "segment_runner", "save_checkpoint", "load_checkpoint", "summarize", "main"]

#: What JAX's SLURM detection reads (``jax._src.clusters.slurm_cluster``), and what each process reports.
SLURM_VARIABLES = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")
#: The seed of every chain's key (:func:`chain_keys`).
SEED = 0
#: NUTS's step size, in units of the posterior's standard deviations (the mass matrix whitens it).
STEP_SIZE = 0.8
#: The exit status of a run stopped early by a signal (or ``--stop-after``), its checkpoint saved: resume me.
STOPPED = 3


def exact_loc(data: Any) -> tuple[float, float]:
    """The exact posterior mean and standard deviation of ``loc`` given the observations ``data``.

    With flat priors on ``loc`` and ``log_scale``, ``loc``'s marginal posterior
    is a Student-t with ``n - 1`` degrees of freedom, centred on the sample
    mean, of scale ``s / sqrt(n)`` (``s`` the sample standard deviation).

    Parameters
    ----------
    data : array_like
        The observations, 1-D.

    Returns
    -------
    mean : float
        The posterior mean of ``loc``.
    sd : float
        Its posterior standard deviation.

    Raises
    ------
    ValueError
        If ``data`` has fewer than 4 observations or is not 1-D.
    """
    y = np.asarray(data, dtype=np.float64)
    n = y.size
    if y.ndim != 1 or n < 4:
        raise ValueError(f"data must be a 1-D array of at least 4 observations, got shape {y.shape}.")
    scale = y.std(ddof=1) / np.sqrt(n)
    return float(y.mean()), float(scale * np.sqrt((n - 1) / (n - 3)))


def inverse_mass_matrix(data: Any) -> np.ndarray:
    """NUTS's diagonal inverse mass matrix for ``(loc, log_scale)``: posterior variances ``s²/n``, ``1/(2n)``.

    Parameters
    ----------
    data : array_like
        The 1-D observations of :func:`exact_loc`.

    Returns
    -------
    numpy.ndarray
        ``(2,)``.
    """
    y = np.asarray(data, dtype=np.float64)
    return np.array([y.var(ddof=1) / y.size, 1.0 / (2 * y.size)], dtype=np.float32)



def segment_runner(step: Any, num_draws: int, mesh: Any, axis_name: str = "chains"):
    """Compiled ``f(keys, states, first) -> (states, (positions, info))``: draws ``first`` to
    ``first + num_draws - 1`` of every chain, the chains split over ``mesh``'s axis ``axis_name``.

    Draw ``i`` of a chain uses ``fold_in(key, i)`` of the chain's key, as every runner of
    the runners of ``parallel_mcmc.sample`` do: segments of any length, run one after another from the states
    each returns, make the draws of one run of them all. Each device runs its chains one after another
    (``lax.map``); ``first`` is one number for all chains.

    Parameters
    ----------
    step : callable
        A BlackJAX-style ``step(key, state) -> (state, info)`` for one chain.
    num_draws : int
        The draws of a segment (at least 1).
    mesh : jax.sharding.Mesh
        The mesh whose axis ``axis_name`` the chains are split over.
    axis_name : str, optional
        The mesh axis of the chains.

    Returns
    -------
    callable
        The compiled function; ``positions`` and ``info`` have axes ``(chain, draw, ...)``.

    Raises
    ------
    ValueError
        If ``num_draws`` is not a whole number >= 1.
    """
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    whole_number("num_draws", num_draws, 1)

    def one_chain(key, state, first):
        def one_draw(state, i):
            state, info = step(jax.random.fold_in(key, i), state)  # draw i's key: the chain's key and i alone
            return state, (state.position, info)

        return jax.lax.scan(one_draw, state, first + jnp.arange(num_draws))

    def per_device(keys, states, first):
        return jax.lax.map(lambda pair: one_chain(*pair, first), (keys, states))

    chains = P(axis_name)
    return jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=(chains, chains, P()), out_specs=chains,
                                 check_vma=False))


def save_checkpoint(path: str | Path, arrays: Mapping[str, Any]) -> None:
    """Write ``arrays`` to the ``.npz`` file ``path`` atomically: a temporary file beside it, then ``os.replace``.

    A process killed while it writes leaves the previous checkpoint whole.

    Parameters
    ----------
    path : str or pathlib.Path
        The checkpoint.
    arrays : mapping of str to array_like
        What it holds.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as file:
        np.savez(file, **{name: np.asarray(value) for name, value in arrays.items()})
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)  # atomic: a reader sees the old file or the new one, never half of one


def load_checkpoint(path: str | Path, **expected: int) -> dict[str, np.ndarray] | None:
    """The arrays of the checkpoint ``path``, or ``None`` where there is none yet.

    Parameters
    ----------
    path : str or pathlib.Path
        The checkpoint that :func:`save_checkpoint` wrote.
    **expected : int
        Numbers the checkpoint must hold (``num_chains=8, seed=0``, ...), so that a run never resumes
        another run's chains.

    Returns
    -------
    dict of str to numpy.ndarray or None
        Its arrays.

    Raises
    ------
    ValueError
        If the checkpoint holds other numbers than ``expected``.
    """
    path = Path(path)
    if not path.exists():
        return None
    with np.load(path) as saved:
        arrays = dict(saved)
    wrong = {name: int(arrays[name]) for name, value in expected.items() if int(arrays[name]) != value}
    if wrong:
        raise ValueError(f"The checkpoint {path} is of another run ({', '.join(f'{k} {v}' for k, v in wrong.items())}, "
                         f"not {', '.join(f'{k} {expected[k]}' for k in wrong)}): give the run's own options, "
                         "or remove the file to start afresh.")
    return arrays


def summarize(draws: Mapping[str, Any], processes: Sequence[Mapping[str, int]], data: Any, *,
              warmup: int, **extra: Any) -> dict:
    """The JSON summary process 0 writes.

    Parameters
    ----------
    draws : mapping of str to array_like
        ``(chain, draw)`` arrays, warm-up included.
    processes : sequence of mapping of str to int
        One dict a process (its JAX index, what it read from SLURM, its local devices).
    data : array_like
        The observations.
    warmup : int
        The draws dropped at the start of each chain.
    **extra : Any
        Copied in as it is.

    Returns
    -------
    dict
        The summary.
    """
    import arviz as az

    from parallel_mcmc.sample.diagnostics import to_inference_data

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


def chain_keys(indices: Any, seed: int = SEED):
    """The PRNG keys of the chains numbered ``indices``: ``fold_in(key(seed), i)`` for chain ``i``.

    A chain's key depends on its global index alone, never on the number of
    chains, processes or devices, nor on which of them runs the chain: the same
    chain gets the same draws on every layout.

    Parameters
    ----------
    indices : array_like
        The chains' global numbers.
    seed : int, optional
        The seed.

    Returns
    -------
    jax.Array
        One key per chain.

    Raises
    ------
    ValueError
        If ``seed`` is not a whole number >= 0, or ``indices`` is not a 1-D array of chain numbers.
    """
    import jax
    import jax.numpy as jnp

    whole_number("seed", seed, 0, of=" (the seed of jax.random.key)")
    indices = np.asarray(indices)
    if indices.ndim != 1 or (indices.size and (not np.issubdtype(indices.dtype, np.integer) or indices.min() < 0)):
        raise ValueError(f"indices must be a 1-D array of chain numbers (whole numbers >= 0), got {indices!r}.")
    base = jax.random.key(seed)
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.asarray(indices, dtype=jnp.uint32))


def process_chains(sharding: Any, num_chains: int) -> np.ndarray:
    """The global numbers of the chains that this process's devices hold when ``num_chains`` chains are laid
    out by ``sharding`` (of their leading axis), in the order :func:`jax.make_array_from_process_local_data`
    reads a process's rows.

    Parameters
    ----------
    sharding : jax.sharding.Sharding
        The sharding of the chains' leading axis.
    num_chains : int
        The chains in all.

    Returns
    -------
    numpy.ndarray
        The global numbers of this process's chains.

    Raises
    ------
    ValueError
        If ``num_chains`` is not a whole number >= 1.
    """
    whole_number("num_chains", num_chains, 1)
    rows: set[int] = set()
    for index in sharding.addressable_devices_indices_map((num_chains,)).values():
        rows.update(range(*index[0].indices(num_chains)))
    return np.array(sorted(rows), dtype=np.int64)


def _slurm_number(name: str) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else -1  # -1: not started by SLURM


class _CacheEvents:
    """Counts the persistent compilation cache's hits and misses in this process (JAX's monitoring events)."""

    def __init__(self) -> None:
        self.hits = self.misses = 0

    def __call__(self, event: str, **_: Any) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            self.hits += 1
        elif event == "/jax/compilation_cache/cache_misses":
            self.misses += 1


class _Warning:
    """Set by SIGUSR1 or SIGTERM (SLURM's warning before the time limit, or its stop): finish the segment, save, stop."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __call__(self, signum: int, _frame: Any) -> None:
        self.signal = signum
        print(f"{signal.Signals(signum).name}: stopping after this segment", flush=True)


def main(argv: Sequence[str] | None = None) -> dict | None:
    """Run the program: sample the chains over the job's processes and write the summary on process 0.

    Parameters
    ----------
    argv : sequence of str or None, optional
        The command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    dict or None
        The summary on process 0; ``None`` on the others.

    Raises
    ------
    ValueError
        If a count on the command line is not a whole number in range.
    """
    parser = argparse.ArgumentParser(prog="python -m parallel_mcmc.programs.slurm_chains", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where process 0 writes the JSON summary")
    parser.add_argument("--num-chains", type=int, default=8, help="chains in all, a multiple of the devices")
    parser.add_argument("--draws", type=int, default=600, help="draws per chain, warm-up included")
    parser.add_argument("--warmup", type=int, default=100, help="draws dropped at the start of each chain")
    parser.add_argument("--seed", type=int, default=SEED,
                        help="the seed of every chain's key (a job array gives each job its own: $SLURM_ARRAY_TASK_ID)")
    parser.add_argument("--draws-out", help="where process 0 writes every chain's draws (.npz, warm-up included)")
    parser.add_argument("--diagnostics", action=argparse.BooleanOptionalAction, default=True,
                        help="R-hat and ESS (ArviZ) in the summary; --no-diagnostics leaves them and ArviZ out")
    parser.add_argument("--checkpoint", help="a .npz file: sample in segments, save after each, resume from it if it exists")
    parser.add_argument("--segment", type=int, default=100,
                        help="draws per chain between two checkpoints (with --checkpoint)")
    parser.add_argument("--stop-after", type=int,
                        help="stop after this many segments, as on SIGUSR1, to try resuming (with --checkpoint)")
    parser.add_argument("--cpu-devices", type=int,
                        help="run on this many CPU devices in each process (to try layouts on one machine)")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds a process waits for the others to join (initialization_timeout)")
    parser.add_argument("--coordinator", help="host:port of process 0, where no launcher supplies it")
    parser.add_argument("--num-processes", type=int)
    parser.add_argument("--process-id", type=int)
    args = parser.parse_args(argv)
    whole_number("--num-chains", args.num_chains, 1)
    whole_number("--warmup", args.warmup, 0)
    whole_number("--seed", args.seed, 0)
    whole_number("--draws", args.draws, args.warmup + 2, of=" (more than --warmup)")
    if args.cpu_devices is not None:
        whole_number("--cpu-devices", args.cpu_devices, 1)
    whole_number("--segment", args.segment, 1)
    if args.stop_after is not None:
        whole_number("--stop-after", args.stop_after, 1)
        if args.checkpoint is None:
            parser.error("--stop-after stops a run so that it can resume: give --checkpoint FILE too.")
    segment = args.segment if args.checkpoint else args.draws  # without a checkpoint: one segment of every draw
    warning = _Warning()
    if args.checkpoint:  # from the start: a signal that comes while JAX starts is not lost
        signal.signal(signal.SIGUSR1, warning)
        signal.signal(signal.SIGTERM, warning)

    import jax

    if args.cpu_devices is not None:  # before anything touches the devices
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_num_cpu_devices", args.cpu_devices)
    # Before anything touches JAX's devices: join the group. With no arguments JAX finds the coordinator, the
    # number of processes and this one's index in the launcher's environment (SLURM's SLURM_* variables here).
    try:
        jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id,
                                   initialization_timeout=args.timeout)
    except ValueError as err:  # no launcher's settings found, and none given
        parser.error(f"{err} Start the processes with SLURM's srun (or Open MPI's mpirun), or give "
                     "--coordinator HOST:PORT, --num-processes and --process-id to each.")
    if args.num_chains % jax.device_count():
        parser.error(f"--num-chains {args.num_chains} cannot be split evenly over the job's {jax.device_count()} "
                     "devices: give a multiple of the number of devices.")
    cache = _CacheEvents()
    jax.monitoring.register_event_listener(cache)

    import blackjax  # importing BlackJAX starts JAX's backend: only once the process has joined the group
    from jax.experimental import multihost_utils
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    from parallel_mcmc.models import normal

    data = normal.observed()
    nuts = blackjax.nuts(normal.make_logdensity(data), step_size=STEP_SIZE,
                         inverse_mass_matrix=inverse_mass_matrix(data))
    mesh = jax.make_mesh((jax.device_count(),), ("chains",), axis_types=(AxisType.Explicit,))
    by_chain = NamedSharding(mesh, P("chains"))

    # Each process makes only its own chains' keys and starting points, from their global numbers, and the
    # pieces of all processes become one global array: chain i's inputs are the same on every layout.
    mine = process_chains(by_chain, args.num_chains)
    local = {"keys": np.asarray(jax.random.key_data(chain_keys(mine, args.seed))),
             "positions": {name: start[mine] for name, start in normal.spread_positions(args.num_chains).items()}}
    inputs = jax.make_array_from_process_local_data(by_chain, local)
    keys = jax.random.wrap_key_data(inputs["keys"])
    states = jax.jit(jax.vmap(nuts.init))(inputs["positions"])

    # A checkpoint: every process reads it and takes its own chains' states; the keys are the chains' own.
    saved = args.checkpoint and load_checkpoint(args.checkpoint, num_chains=args.num_chains, num_draws=args.draws,
                                                seed=args.seed)
    paths, tree = jax.tree_util.tree_flatten_with_path(states)
    names = ["state" + jax.tree_util.keystr(path) for path, _ in paths]
    done, kept, steps = 0, {name: [] for name in local["positions"]}, [np.zeros(args.num_chains, np.int64)]
    if saved:
        rows = [saved[name][mine] for name in names]
        states = jax.make_array_from_process_local_data(by_chain, jax.tree_util.tree_unflatten(tree, rows))
        done, steps = int(saved["done"]), [saved["integration_steps"]]
        kept = {name: [saved[f"draws/{name}"]] for name in kept}
        print(f"process {jax.process_index()}: resuming at draw {done} of {args.draws} from {args.checkpoint}",
              flush=True)

    if args.checkpoint:  # every chain's key, saved with the states
        every_key = np.asarray(multihost_utils.process_allgather(jax.random.key_data(keys), tiled=True))
    compile_seconds = seconds = 0.0
    runners, segments, stopped = {}, 0, False
    while done < args.draws and not stopped:
        size = min(segment, args.draws - done)
        if size not in runners:  # the last segment may be shorter: one more program
            start = time.perf_counter()
            runners[size] = segment_runner(nuts.step, size, mesh).lower(keys, states, np.int32(done)).compile()
            compile_seconds += time.perf_counter() - start  # from the persistent cache, where one is set and holds it
        start = time.perf_counter()
        states, (positions, info) = jax.block_until_ready(runners[size](keys, states, np.int32(done)))
        seconds += time.perf_counter() - start
        for name, value in multihost_utils.process_allgather(positions, tiled=True).items():  # every chain, everywhere
            kept[name].append(np.asarray(value))
        steps.append(np.asarray(multihost_utils.process_allgather(info.num_integration_steps.sum(axis=1), tiled=True)))
        done, segments = done + size, segments + 1
        if not args.checkpoint:
            continue
        # Stop together: if one process got the signal, all of them stop after this segment.
        asked = warning.signal is not None or segments == args.stop_after
        stopped = bool(np.any(multihost_utils.process_allgather(np.array([asked])))) and done < args.draws
        every_state = multihost_utils.process_allgather(states, tiled=True)
        if jax.process_index() == 0:
            save_checkpoint(args.checkpoint, {
                **dict(zip(names, jax.tree_util.tree_leaves(every_state))), "done": done,
                "num_chains": args.num_chains, "num_draws": args.draws, "seed": args.seed,
                "keys": every_key,
                "integration_steps": np.sum(steps, axis=0),
                **{f"draws/{name}": np.concatenate(value, axis=1) for name, value in kept.items()}})
    if stopped:
        print(f"process {jax.process_index()}: stopped after draw {done} of {args.draws}, saved in "
              f"{args.checkpoint}; start again to resume (exit status {STOPPED})", flush=True)
        jax.distributed.shutdown()
        sys.exit(STOPPED)
    draws = {name: np.concatenate(value, axis=1) for name, value in kept.items()}
    steps = np.sum(steps, axis=0)
    mine_now = np.array([jax.process_index(), _slurm_number("SLURM_PROCID"), _slurm_number("SLURM_LOCALID"),
                         jax.local_device_count(), cache.hits, cache.misses])
    table = np.asarray(multihost_utils.process_allgather(mine_now)).reshape(jax.process_count(), -1)
    times = np.asarray(multihost_utils.process_allgather(np.array([compile_seconds, seconds])))
    times = times.reshape(jax.process_count(), 2)
    print(f"process {jax.process_index()} of {jax.process_count()} (SLURM_PROCID {mine_now[1]}, "
          f"SLURM_LOCALID {mine_now[2]}): {jax.local_device_count()} local and {jax.device_count()} global "
          f"device(s), chains {mine.tolist()}, compiled in {compile_seconds:.2f} s, sampled in {seconds:.2f} s",
          flush=True)
    result = None
    if jax.process_index() == 0:
        processes = [{**dict(zip(("jax_process_index", "slurm_procid", "slurm_localid", "local_devices",
                                  "cache_hits", "cache_misses"), map(int, row))),
                      "compile_seconds": float(t[0]), "sampling_seconds": float(t[1])} for row, t in zip(table, times)]
        draws = {name: np.asarray(value) for name, value in draws.items()}
        run = dict(devices=jax.device_count(), seed=args.seed, integration_steps=np.asarray(steps).tolist(),
                   compile_seconds=float(times[:, 0].max()), sampling_seconds=float(times[:, 1].max()),
                   slurm={name: os.environ.get(name) for name in SLURM_VARIABLES})
        if args.checkpoint:  # where this run started, and the segments it ran
            run["checkpoint"] = {"path": str(args.checkpoint), "resumed_at": int(saved["done"]) if saved else 0,
                                 "segment": segment, "segments": segments}
        if args.diagnostics:
            result = summarize(draws, processes, data, warmup=args.warmup, **run)
        else:
            result = {"processes": len(processes), "per_process": processes, "num_chains": args.num_chains,
                      "num_draws": args.draws - args.warmup, "warmup": args.warmup, **run}
        Path(args.out).write_text(json.dumps(result, indent=1))
        if args.draws_out:
            np.savez(args.draws_out, **draws)
        print(json.dumps({k: result[k] for k in ("processes", "devices", "mean", "rhat") if k in result}), flush=True)
    jax.distributed.shutdown()
    return result


if __name__ == "__main__":
    main()
