"""Run many MCMC chains in JAX, and account for what NUTS makes them wait for.

The runners take a BlackJAX-style ``step(key, state) -> (state, info)`` and a
number of draws, and return a compiled function of per-chain keys and states.
Every runner gives each chain the same random keys (``jax.random.split`` of
that chain's key into one key per draw), so all of them produce the same
draws from the same keys; they differ only in how the chains are laid out:

================================  =============================================
:func:`sequential_runner`         chains one after another (``lax.map``), one device
:func:`vmap_runner`               all chains in lockstep (``vmap`` inside the step)
:func:`shard_map_runner`          chains split over a mesh axis, ``jax.shard_map``
================================  =============================================

Multi-chain runners return ``(positions, info)`` with axes ``(chain, draw, ...)``.

The accounting functions read the number of integration steps (gradient
evaluations) each chain took for each draw, ``info.num_integration_steps``
for NUTS, and turn it into the cost of running chains in lockstep, from
which the chapters compute the ideal speedups a measurement should approach.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .validate import whole_number

__all__ = [
    "sequential_runner",
    "vmap_runner",
    "shard_map_runner",
    "timed",
    "time_interleaved",
    "integration_steps",
    "lockstep_cost",
    "lockstep_efficiency",
    "device_loads",
    "to_inference_data",
    "plot_steps_per_draw",
]

Step = Callable[[Any, Any], tuple[Any, Any]]


def _check_step(step: Any, num_draws: Any) -> None:
    if not callable(step):
        raise TypeError(
            f"step must be a transition function step(key, state) -> (state, info), such as "
            f"blackjax.nuts(...).step; got {type(step).__name__}."
        )
    whole_number("num_draws", num_draws, 1)


def _one_chain(step: Step, num_draws: int):
    """The plain, traceable loop of one chain: ``lax.scan`` over its draw keys."""
    import jax

    def run(key, state):
        def one_draw(state, draw_key):
            state, info = step(draw_key, state)
            return state, (state.position, info)

        _, (positions, info) = jax.lax.scan(one_draw, state, jax.random.split(key, num_draws))
        return positions, info

    return run


def sequential_runner(step: Step, num_draws: int):
    """Compiled ``f(keys, states)``: the chains run one after another on one device (``lax.map``)."""
    import jax

    _check_step(step, num_draws)
    run = _one_chain(step, num_draws)
    return jax.jit(lambda keys, states: jax.lax.map(lambda ks: run(*ks), (keys, states)))


def vmap_runner(step: Step, num_draws: int):
    """Compiled ``f(keys, states)``: all chains advance together, ``vmap`` inside each draw.

    Every draw waits for the chain that needs the most integration steps.
    """
    import jax

    _check_step(step, num_draws)

    def run(keys, states):
        draw_keys = jax.vmap(lambda k: jax.random.split(k, num_draws))(keys)  # (chain, draw)

        def one_draw(states, keys_now):
            states, info = jax.vmap(step)(keys_now, states)
            return states, (states.position, info)

        _, out = jax.lax.scan(one_draw, states, draw_keys.swapaxes(0, 1))
        return jax.tree.map(lambda x: x.swapaxes(0, 1), out)  # back to (chain, draw, ...)

    return jax.jit(run)


def shard_map_runner(step: Step, num_draws: int, mesh: Any, axis_name: str = "chains", inner: str = "map"):
    """Compiled ``f(keys, states)`` with the chains split over ``mesh``'s axis ``axis_name``.

    Each device runs its block of chains with ``lax.map`` (``inner="map"``: they
    do not wait for each other) or ``vmap`` (``inner="vmap"``: they run in
    lockstep). The number of chains must be a multiple of the axis size. On an
    Explicit mesh, place ``keys`` and ``states`` with
    ``NamedSharding(mesh, P(axis_name))`` first. BlackJAX's NUTS needs
    ``check_vma=False``, which this sets.
    """
    import jax
    from jax.sharding import PartitionSpec as P

    _check_step(step, num_draws)
    if not hasattr(mesh, "axis_names"):
        raise TypeError(f"mesh must be a jax.sharding.Mesh (e.g. from jax.make_mesh), got {type(mesh).__name__}.")
    if axis_name not in mesh.axis_names:
        raise ValueError(f"axis_name {axis_name!r} is not an axis of the mesh; its axes are {mesh.axis_names}.")
    if inner == "map":
        per_device = sequential_runner(step, num_draws)
    elif inner == "vmap":
        per_device = vmap_runner(step, num_draws)
    else:
        raise ValueError(f"inner must be 'map' (chains independent) or 'vmap' (lockstep), got {inner!r}.")
    spec = P(axis_name)
    return jax.jit(
        jax.shard_map(per_device, mesh=mesh, in_specs=(spec, spec), out_specs=spec, check_vma=False)
    )


def timed(fn: Callable[..., Any], *args: Any, repeats: int = 3, label: str | None = None):
    """:func:`~parallel_mcmc.timing.time_call` that also returns the output of the last call.

    Returns ``(timing, output)``: compilation left out, every output waited for.
    """
    from .timing import time_call

    kept: dict[str, Any] = {}

    def call(*a: Any) -> Any:
        kept["out"] = fn(*a)
        return kept["out"]

    timing = time_call(call, *args, repeats=repeats, label=label or getattr(fn, "__name__", "call"))
    return timing, kept["out"]


def time_interleaved(calls: Mapping[str, tuple], repeats: int = 3):
    """Time several calls in interleaved rounds; return ``(timings, outputs)`` dicts by name.

    ``calls`` maps a label to ``(fn, *args)``. Each function is called once to
    compile (its ``first_call``), then the functions take turns, one call each
    per round, for ``repeats`` rounds: on a shared machine a slow spell then
    hits all of them alike. Every call waits for its whole output; the output
    of each function's last call is returned with its :class:`~parallel_mcmc.timing.Timing`.
    """
    import time

    import jax

    from .timing import Timing

    if not isinstance(calls, Mapping) or not calls:
        raise TypeError("calls must be a non-empty dict {label: (fn, *args)}.")
    for name, call in calls.items():
        if not isinstance(call, tuple) or not call or not callable(call[0]):
            raise TypeError(f"calls[{name!r}] must be a tuple (fn, *args) with a callable fn, got {call!r:.60}.")
    whole_number("repeats", repeats, 1)
    first, times, outputs = {}, {name: [] for name in calls}, {}
    for name, (fn, *args) in calls.items():
        start = time.perf_counter()
        outputs[name] = jax.block_until_ready(fn(*args))
        first[name] = time.perf_counter() - start
    for _ in range(repeats):
        for name, (fn, *args) in calls.items():
            start = time.perf_counter()
            outputs[name] = jax.block_until_ready(fn(*args))
            times[name].append(time.perf_counter() - start)
    timings = {name: Timing(label=name, times=tuple(times[name]), first_call=first[name]) for name in calls}
    return timings, outputs


def integration_steps(info: Any) -> np.ndarray:
    """The number of integration steps of every draw, as an integer NumPy array.

    ``info`` is the info a runner returned (anything with a
    ``num_integration_steps`` field), or that field itself. The axes are
    kept: ``(chain, draw)`` for the multi-chain runners.
    """
    counts = getattr(info, "num_integration_steps", info)
    counts = np.asarray(counts)
    if counts.dtype == object or not np.issubdtype(counts.dtype, np.number):
        raise TypeError(
            "info has no num_integration_steps: pass the info returned by a NUTS or HMC "
            f"runner, or the step counts themselves (got {type(info).__name__})."
        )
    return counts.astype(np.int64)


def _steps_2d(steps: Any) -> np.ndarray:
    steps = np.asarray(steps)
    if steps.ndim != 2 or steps.size == 0:
        raise ValueError(f"steps must be a non-empty (chain, draw) array of step counts, got shape {steps.shape}.")
    if not np.issubdtype(steps.dtype, np.number) or np.any(steps < 0):
        raise ValueError("steps must hold non-negative numbers of integration steps.")
    return steps


def lockstep_cost(steps: Any) -> int:
    """Integration steps the chains take in lockstep: the sum over draws of the slowest chain's steps."""
    return int(_steps_2d(steps).max(axis=0).sum())


def lockstep_efficiency(steps: Any) -> float:
    """Share of lockstep work that is useful: all chains' steps over (chains x lockstep cost)."""
    steps = _steps_2d(steps)
    cost = lockstep_cost(steps)
    if cost == 0:
        raise ValueError("steps are all zero: there is no work to measure an efficiency of.")
    return float(steps.sum() / (steps.shape[0] * cost))


def device_loads(steps: Any, num_devices: int) -> np.ndarray:
    """Integration steps each device runs when the chains are split into equal consecutive blocks."""
    steps = _steps_2d(steps)
    whole_number("num_devices", num_devices, 1)
    if steps.shape[0] % num_devices:
        raise ValueError(f"{steps.shape[0]} chains cannot be split evenly over {num_devices} devices.")
    return steps.reshape(num_devices, -1).sum(axis=1)


def to_inference_data(positions: Mapping[str, Any]):
    """ArviZ ``InferenceData`` from a dict of ``(chain, draw)`` arrays, for R-hat and ESS."""
    import arviz as az

    if not isinstance(positions, Mapping) or not positions:
        raise TypeError("positions must be a non-empty dict of (chain, draw) arrays, like a runner's positions.")
    posterior = {name: np.asarray(value) for name, value in positions.items()}
    for name, value in posterior.items():
        if value.ndim < 2:
            raise ValueError(
                f"{name!r} has shape {value.shape}; ArviZ needs (chain, draw) axes. "
                "For one chain, add a leading axis: value[None]."
            )
    return az.from_dict(posterior=posterior)


def plot_steps_per_draw(steps: Any, ax=None, title: str | None = None, max_chains: int = 8):
    """Integration steps per draw of each chain, with the lockstep (slowest chain) as a dashed line."""
    import matplotlib.pyplot as plt

    steps = _steps_2d(steps)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    draws = np.arange(steps.shape[1])
    for c in range(min(steps.shape[0], max_chains)):
        ax.plot(draws, steps[c], lw=0.8, alpha=0.8, label=f"chain {c}")
    ax.plot(draws, steps.max(axis=0), "k--", lw=0.8, label="slowest chain (lockstep)")
    ax.set_xlabel("draw")
    ax.set_ylabel("integration steps")
    ax.set_yscale("log", base=2)
    ax.legend(frameon=False, fontsize=7, ncol=2)
    if title:
        ax.set_title(title)
    return ax
