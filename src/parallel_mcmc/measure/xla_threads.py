"""XLA's CPU threads: the workloads of the profiling page, and a device in another process with one thread.

XLA's CPU client runs each device's program on a pool of threads, and it cuts
a large operation (an elementwise loop over many numbers, a matrix product)
into pieces that the pool runs at once: one forced CPU device can keep every
core busy. The pool's size is fixed when JAX starts its backend: the cores the
process may use, or the environment variable ``NPROC`` when it is set. So a
setting with one thread must be made in a fresh process: :class:`OneThreadDevice`
starts one (``python -m parallel_mcmc.programs.xla_threads_worker``, one CPU device,
``NPROC=1``) and runs the page's workloads there on request, so that the page
can time them in its own interleaved loop beside the runs of its own process.

Checked on jaxlib 0.10.2 and 0.12.0.1 (the profiling page checks it in every
run): ``--xla_cpu_multi_thread_eigen=false`` is accepted but leaves the pieces
as they are (:func:`parallel_mcmc.measure.hlo.partitions` reads
them); ``intra_op_parallelism_threads`` is no XLA flag (the process aborts);
``NPROC=1`` with one device leaves every operation whole. With ``n`` forced
devices the pool keeps at least ``n`` threads, whatever ``NPROC`` says.

:func:`workloads` builds the two workloads (chains of gradient steps, and one
chain's gradient steps on a large data set) with their calibration calls, the same
in both processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Callable

import numpy as np

__all__ = ["ONE_THREAD_ENV", "NUM_CHAINS", "NUM_STEPS", "NUM_OBSERVATIONS", "NUM_ITERATIONS", "workloads",
           "OneThreadDevice"]

#: The environment of a process whose XLA CPU client has one thread (with one device).
ONE_THREAD_ENV = {"NPROC": "1"}

NUM_CHAINS = 8  #: chains of the first workload
NUM_STEPS = 4000  #: gradient steps of each chain
NUM_OBSERVATIONS = 1_000_000  #: observations of the second workload, a large data set (the normal model's draws)
NUM_ITERATIONS = 20  #: its gradient steps


def _chain_step() -> Callable[[Any], Any]:
    import jax

    from parallel_mcmc.models import normal

    grad = jax.grad(normal.make_logdensity(normal.observed()))

    def one_step(position):
        return jax.tree.map(lambda p, d: p + 1e-5 * d, position, grad(position))

    return one_step


def _large_data(num: int) -> Any:
    from parallel_mcmc.models import normal

    return normal.observed(NUM_OBSERVATIONS)[:num]


def _large_steps(axis: str | None = None) -> Callable[..., Any]:
    """Gradient steps of one chain of a Student-t location-scale model whose observations are an argument (split over ``axis``)."""
    import jax
    import jax.numpy as jnp

    def loglik(position, x):  # a Student-t likelihood (4 degrees of freedom): a logarithm per observation
        z = (x - position["loc"]) * jnp.exp(-position["log_scale"])
        return jnp.sum(-2.5 * jnp.log1p(z * z / 4.0)) - x.shape[0] * position["log_scale"]

    def grad(position, x):
        g = jax.grad(loglik)(position, x)
        return jax.lax.psum(g, axis) if axis else g

    def run(position, x):
        return jax.lax.fori_loop(0, NUM_ITERATIONS, lambda i, p: jax.tree.map(lambda a, d: a + 1e-9 * d, p,
                                                                               grad(p, x)), position)

    return run


def workloads(mesh: Any = None) -> dict[str, tuple]:
    """The profiling page's workloads, ``{label: (compiled fn, *args)}``, for :func:`parallel_mcmc.measure.time_interleaved`.

    On one device: ``"chains"`` (``NUM_CHAINS`` chains of ``NUM_STEPS`` gradient steps of the normal model, one
    after another), ``"one chain"`` (one of them: the model's step cost), ``"large data"`` (``NUM_ITERATIONS``
    gradient steps of one chain of a Student-t model
    on ``NUM_OBSERVATIONS`` observations) and ``"large data, half"`` (the same on half
    of them: the work of one device's piece). Given a ``mesh`` with one axis of two devices, also
    ``"chains, 2 devices"`` (four chains a device), ``"large data, 2 devices"`` (half the observations a device,
    the gradients added with a ``psum`` every step) and ``"large data, 2 devices, 2 observations"`` (the same with
    one observation a device: the fixed cost of the split).

    Parameters
    ----------
    mesh : jax.sharding.Mesh or None, optional
        A mesh with one axis of two devices, for the workloads over two devices.

    Returns
    -------
    dict of str to tuple
        ``{label: (compiled fn, *args)}``.
    """
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from parallel_mcmc.models import normal

    step = _chain_step()
    start = normal.spread_positions(NUM_CHAINS, loc_range=(8.0, 12.0), log_scale_range=(2.9, 3.1))
    one_chain = jax.jit(lambda p: jax.lax.fori_loop(0, NUM_STEPS, lambda i, q: step(q), p))
    chains = jax.jit(lambda ps: jax.lax.map(lambda p: jax.lax.fori_loop(0, NUM_STEPS, lambda i, q: step(q), p), ps))
    first = jax.tree.map(lambda x: x[0], start)
    data, half, two = _large_data(NUM_OBSERVATIONS), _large_data(NUM_OBSERVATIONS // 2), _large_data(2)
    large = jax.jit(_large_steps())
    calls = {"chains": (chains, start), "one chain": (one_chain, first), "large data": (large, first, data),
             "large data, half": (large, first, half)}
    if mesh is None:
        return calls
    (axis,) = mesh.axis_names
    split, everywhere = NamedSharding(mesh, P(axis)), NamedSharding(mesh, P())
    chains2 = jax.jit(jax.shard_map(chains, mesh=mesh, in_specs=P(axis), out_specs=P(axis)))
    large2 = jax.jit(jax.shard_map(_large_steps(axis), mesh=mesh, in_specs=(P(), P(axis)), out_specs=P(),
                                   check_vma=False))
    placed = jax.device_put(first, everywhere)
    calls["chains, 2 devices"] = (chains2, jax.device_put(start, split))
    calls["large data, 2 devices"] = (large2, placed, jax.device_put(data, split))
    calls["large data, 2 devices, 2 observations"] = (large2, placed, jax.device_put(two, split))
    return calls


class OneThreadDevice:
    """A worker process with one CPU device whose XLA client has one thread; it runs :func:`workloads` on request.

    Use it as a context manager. ``device.call(label)`` runs the workload ``label`` once in the worker and
    returns its output as NumPy arrays; :meth:`caller` gives a function of no arguments for a timing loop. The
    worker's own CPU and wall seconds of every call are kept in ``cpu_seconds`` and ``wall_seconds`` by label:
    :meth:`cores_busy` is their ratio, the cores the worker kept busy. ``partitions`` is the number of operations
    its compiled large-data steps cut into pieces (:func:`parallel_mcmc.measure.hlo.partitions`), read when it started.

    Parameters
    ----------
    env : dict of str to str or None, optional
        The environment variables of the worker (default: :data:`ONE_THREAD_ENV`).
    timeout : float, optional
        Seconds to wait for the worker's answer.
    """

    def __init__(self, env: dict[str, str] | None = None, timeout: float = 120.0) -> None:
        self.env = dict(ONE_THREAD_ENV if env is None else env)
        self.timeout = timeout
        self.cpu_seconds: dict[str, list[float]] = {}
        self.wall_seconds: dict[str, list[float]] = {}
        self.partitions: int | None = None
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> "OneThreadDevice":
        env = {**os.environ, **self.env}
        env.pop("XLA_FLAGS", None)
        self._proc = subprocess.Popen([sys.executable, "-m", "parallel_mcmc.programs.xla_threads_worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=env)
        ready = self._read()
        self.partitions = ready["partitions"]
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait(timeout=self.timeout)
            self._proc = None

    def _read(self) -> dict:
        line = self._proc.stdout.readline() if self._proc and self._proc.stdout else ""
        if not line:
            raise RuntimeError("the one-thread worker stopped; run `python -m parallel_mcmc.programs.xla_threads_worker` to see why.")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"the one-thread worker failed: {reply['error']}")
        return reply

    def call(self, label: str) -> Any:
        """Run the workload ``label`` once in the worker; return its output (NumPy arrays).

        Parameters
        ----------
        label : str
            The workload's label (a key of :func:`workloads`).

        Returns
        -------
        Any
            Its output, as NumPy arrays.

        Raises
        ------
        RuntimeError
            If the worker is not started, stopped or failed.
        """
        if self._proc is None:
            raise RuntimeError("start the worker first: `with OneThreadDevice() as device: ...`.")
        self._proc.stdin.write(label + "\n")
        self._proc.stdin.flush()
        reply = self._read()
        self.cpu_seconds.setdefault(label, []).append(reply["cpu"])
        self.wall_seconds.setdefault(label, []).append(reply["wall"])
        return {k: np.asarray(v) for k, v in reply["out"].items()}

    def caller(self, label: str) -> Callable[[], Any]:
        """A function of no arguments that runs ``label`` in the worker (for a timing loop).

        Parameters
        ----------
        label : str
            The workload to run, a label :meth:`call` takes.

        Returns
        -------
        callable
            A function of no arguments.
        """
        return lambda: self.call(label)

    def cores_busy(self, label: str) -> float:
        """The worker's CPU over wall seconds over every call of ``label`` so far.

        Parameters
        ----------
        label : str
            A workload already given to :meth:`call`.

        Returns
        -------
        float
            CPU over wall seconds.

        Raises
        ------
        KeyError
            If ``label`` was not called yet.
        """
        if label not in self.wall_seconds:
            raise KeyError(f"no call of {label!r} yet.")
        return sum(self.cpu_seconds[label]) / sum(self.wall_seconds[label])
