"""Planning NumPyro chains over devices before running them: how many chains each device gets, the shapes of a model's latent sites and the memory a run will take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np
from numpyro import handlers
from numpyro.distributions.transforms import biject_to

from parallel_mcmc._validate import whole_number


__all__ = ["ChainPlan", "plan_chains", "latent_shapes", "check_init_params", "MemoryEstimate", "estimate_memory"]


@dataclass(frozen=True)
class ChainPlan:
    """Which chains run on which device.

    ``counts[k]`` chains run on ``devices[k]``; chain numbers are given out in
    order, so device 0 runs chains ``0 .. counts[0] - 1`` and so on. Only
    devices that get at least one chain are listed.

    Parameters
    ----------
    num_chains : int
        The number of chains (padding not counted).
    devices : tuple
        The devices that run at least one chain.
    counts : tuple of int
        The chains each of ``devices`` runs.
    """

    num_chains: int
    devices: tuple
    counts: tuple[int, ...]

    @property
    def per_device(self) -> int:
        """Chains each device runs side by side (padding included)."""
        return max(self.counts)

    @property
    def num_padding(self) -> int:
        """The padding chains, copies run so that every device has ``per_device`` chains."""
        return self.per_device * len(self.devices) - self.num_chains

    def chain_ranges(self) -> list[range]:
        """The chain numbers each device runs, one ``range`` per device.

        Returns
        -------
        list of range
            One ``range`` of chain numbers per device.
        """
        starts = np.concatenate([[0], np.cumsum(self.counts)])
        return [range(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]

    def slot_index(self) -> np.ndarray:
        """For each slot (device-major), the chain it runs; padding repeats the device's last chain.

        Returns
        -------
        numpy.ndarray
            The chain of each slot, ``(len(devices) * per_device,)``, ``int32``.
        """
        slots = []
        for r in self.chain_ranges():
            slots.extend(list(r) + [r[-1]] * (self.per_device - len(r)))
        return np.asarray(slots, dtype=np.int32)

    def real_slots(self) -> np.ndarray:
        """The slot of each chain 0 .. num_chains - 1: where to read its results back.

        Returns
        -------
        numpy.ndarray
            The slot of each chain, ``(num_chains,)``, ``int32``.
        """
        return np.asarray(
            [k * self.per_device + i for k, r in enumerate(self.chain_ranges()) for i in range(len(r))],
            dtype=np.int32,
        )

    def __str__(self) -> str:
        lines = [f"{self.num_chains} chain(s) on {len(self.devices)} device(s), "
                 f"{self.per_device} per device, {self.num_padding} padding chain(s)"]
        for d, r in zip(self.devices, self.chain_ranges()):
            lines.append(f"  {d}: chains {list(r)}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def plan_chains(num_chains: int, devices: Sequence | None = None) -> ChainPlan:
    """Spread ``num_chains`` chains as evenly as possible over ``devices`` (default: all).

    Device ``k`` gets ``num_chains // len(devices)`` chains, plus one for the first
    ``num_chains % len(devices)`` devices; devices left with none are not used.

    Parameters
    ----------
    num_chains : int
        The number of chains (at least 1).
    devices : sequence or None, optional
        The devices, each once (default: ``jax.devices()``).

    Returns
    -------
    parallel_mcmc.sample.ChainPlan
        The layout of the chains.

    Raises
    ------
    ValueError
        If ``num_chains`` is not a whole number >= 1, or ``devices`` is empty or lists a device twice.
    """
    num_chains = whole_number("num_chains", num_chains, 1)
    if devices is None:
        devices = jax.devices()
    devices = tuple(devices)
    if not devices:
        raise ValueError("devices is empty: pass at least one device, for example jax.devices()[:2].")
    if len(set(devices)) != len(devices):
        raise ValueError("devices lists a device more than once; pass each device once.")
    base, extra = divmod(num_chains, len(devices))
    counts = [base + (1 if k < extra else 0) for k in range(len(devices))]
    used = [(d, c) for d, c in zip(devices, counts) if c > 0]
    return ChainPlan(num_chains, tuple(d for d, _ in used), tuple(c for _, c in used))


def latent_shapes(model: Callable, *model_args: Any, **model_kwargs: Any) -> dict[str, tuple[int, ...]]:
    """Shapes of the model's latent sites in NumPyro's unconstrained space, for one chain.

    Parameters
    ----------
    model : callable
        A NumPyro model.
    *model_args : Any
        Its positional arguments.
    **model_kwargs : Any
        Its keyword arguments.

    Returns
    -------
    dict of str to tuple of int
        The shape of each latent site.
    """
    tr = handlers.trace(handlers.seed(model, jax.random.key(0))).get_trace(*model_args, **model_kwargs)
    shapes = {}
    for name, site in tr.items():
        if site["type"] == "sample" and not site["is_observed"]:
            shape = biject_to(site["fn"].support).inverse_shape(np.shape(site["value"]))
            shapes[name] = tuple(int(s) for s in shape)
    return shapes


def check_init_params(init_params: Any, shapes: dict[str, tuple[int, ...]], num_chains: int) -> dict[str, Any]:
    """Check per-chain initial values: one row per chain for every latent site, nothing else.

    ``init_params[name]`` must have shape ``(num_chains, *shapes[name])``.

    Parameters
    ----------
    init_params : dict of str to array_like
        The initial values, by site.
    shapes : dict of str to tuple of int
        The shape of each latent site (from :func:`latent_shapes`).
    num_chains : int
        The number of chains.

    Returns
    -------
    dict of str to Any
        ``init_params``, unchanged.

    Raises
    ------
    TypeError
        If ``init_params`` is not a dict.
    ValueError
        If it names a site that is not latent, misses one, or has an array of the wrong shape; the message says what
        to fix.
    """
    if not isinstance(init_params, dict):
        raise TypeError(
            f"init_params must be a dict from site name to an array with one row per chain, "
            f"got {type(init_params).__name__}."
        )
    unknown = sorted(set(init_params) - set(shapes))
    missing = sorted(set(shapes) - set(init_params))
    if unknown:
        raise ValueError(f"init_params names {unknown}, which are not latent sites of the model; its sites are {sorted(shapes)}.")
    if missing:
        raise ValueError(f"init_params gives no initial value for {missing}; give every latent site {sorted(shapes)}.")
    for name, value in init_params.items():
        want = (num_chains, *shapes[name])
        if tuple(np.shape(value)) != want:
            raise ValueError(
                f"init_params[{name!r}] has shape {tuple(np.shape(value))}, but {num_chains} chain(s) of a site "
                f"of shape {shapes[name]} need shape {want}: one row per chain, chains first."
            )
    return init_params


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes one device needs for draws, sampler state and data (XLA's scratch space not counted).

    :func:`estimate_memory` makes it.

    Parameters
    ----------
    chains_per_device : int
        The chains each device runs (padding included).
    draws_bytes : int
        Bytes of the draws.
    state_bytes : int
        Bytes of the sampler states.
    data_bytes : int
        Bytes of the data.
    """

    chains_per_device: int
    draws_bytes: int
    state_bytes: int
    data_bytes: int

    @property
    def per_device_bytes(self) -> int:
        return self.draws_bytes + self.state_bytes + self.data_bytes

    def __str__(self) -> str:
        mib = 2**20
        return (
            f"per device ({self.chains_per_device} chain(s)): draws {self.draws_bytes / mib:.2f} MiB, "
            f"sampler state {self.state_bytes / mib:.3f} MiB, data {self.data_bytes / mib:.2f} MiB, "
            f"total {self.per_device_bytes / mib:.2f} MiB"
        )

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def estimate_memory(
    plan: ChainPlan,
    num_samples: int,
    num_latent: int,
    data_bytes: int,
    *,
    itemsize: int = 4,
    dense_mass: bool = False,
) -> MemoryEstimate:
    """Estimate one device's memory for a run laid out by ``plan``.

    Each device stores ``plan.per_device`` chains (padding included) of
    ``num_samples`` draws of ``num_latent`` numbers, keeps a copy of all the data
    (every chain needs all of it), and per chain a NUTS state of a few vectors
    of length ``num_latent`` (position, momentum, gradient, the ends of the
    trajectory, the mass-matrix estimate: about 10) plus an ``num_latent`` squared
    matrix when the mass matrix is dense.

    Parameters
    ----------
    plan : parallel_mcmc.sample.ChainPlan
        The layout of the chains.
    num_samples : int
        Draws each chain keeps.
    num_latent : int
        Unconstrained numbers of one draw.
    data_bytes : int
        Bytes of the data.
    itemsize : int, optional
        Bytes of one number.
    dense_mass : bool, optional
        Whether the mass matrix is dense.

    Returns
    -------
    parallel_mcmc.sample.MemoryEstimate
        One device's bytes.

    Raises
    ------
    TypeError
        If ``plan`` is not a :class:`ChainPlan`, or a count is not a whole number.
    """
    if not isinstance(plan, ChainPlan):
        raise TypeError(f"plan must be a ChainPlan from plan_chains(), got {type(plan).__name__}.")
    num_samples = whole_number("num_samples", num_samples, 1)
    num_latent = whole_number("num_latent", num_latent, 1)
    data_bytes = whole_number("data_bytes", data_bytes, 0)
    itemsize = whole_number("itemsize", itemsize, 1)
    k = plan.per_device
    state = 10 * num_latent + (2 * num_latent**2 if dense_mass else 0)
    return MemoryEstimate(k, k * num_samples * num_latent * itemsize, k * state * itemsize, data_bytes)

