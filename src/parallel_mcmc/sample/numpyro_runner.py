"""Run NumPyro chains over several devices with one ``MCMC`` call.

NumPyro's ``chain_method`` may be a callable that maps its per-chain function
over the chains. :func:`shard_chains` builds one: a ``shard_map`` over a
one-axis mesh of devices of a ``vmap`` (chains in lockstep) or a ``lax.map``
(chains one after another, the better choice on a CPU), which runs any number
of chains on any number of devices. :func:`plan_chains` spreads the chains as evenly as possible; when
they do not fill every device equally, the devices with fewer chains run
copies of their own last chain as padding, which is dropped afterwards.

:func:`run_chains` puts it together: it checks the arguments, accepts one
initial value per chain, keeps the chain axis first in the samples (as R-hat
needs) and reports what it did, XLA's own count of one device's memory
included. :func:`estimate_memory` says how much memory the draws and the data
take per device. How much of a run was compilation comes
from :class:`parallel_mcmc.measure.CompileLog`.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import arviz as az
import jax
import numpy as np
from jax.sharding import AxisType, Mesh, PartitionSpec as P
from numpyro.infer import MCMC, NUTS

from parallel_mcmc._validate import whole_number
from parallel_mcmc.measure.cores import CompileLog
from parallel_mcmc.sample.numpyro_plan import ChainPlan, check_init_params, latent_shapes, plan_chains

__all__ = ["shard_chains", "ChainRun", "run_chains"]


INNER = ("vmap", "map")


def shard_chains(plan: ChainPlan, axis_name: str = "chains", inner: str = "vmap") -> Callable:
    """A NumPyro ``chain_method``: ``shard_map`` over the plan's devices of ``vmap`` or ``lax.map``.

    NumPyro calls ``chain_method(f)(args)``, where ``f`` runs one chain and every
    array in ``args`` has the chains on its leading axis. The returned callable
    reorders those rows into device slots (adding the padding), runs each
    device's block inside ``shard_map`` over a mesh with ``Auto`` axis
    ``axis_name``, and reads the real chains back in order. ``inner`` says how a
    device runs its block: ``"vmap"`` moves its chains in lockstep (each step
    waits for the longest trajectory; the choice for a GPU), ``"map"`` runs
    them one after another with ``lax.map`` (no chain waits; the choice for a
    CPU, whose cores a batch of chains does not fill). The compiled program's
    memory statistics for one device are kept in ``chain_method.memory`` after
    a run.

    Parameters
    ----------
    plan : parallel_mcmc.sample.ChainPlan
        The layout of the chains (from :func:`plan_chains`).
    axis_name : str, optional
        The name of the mesh axis.
    inner : str, optional
        ``"vmap"`` (lockstep) or ``"map"`` (one after another).

    Returns
    -------
    callable
        The ``chain_method`` to give NumPyro's ``MCMC``.

    Raises
    ------
    TypeError
        If ``plan`` is not a :class:`ChainPlan`.
    ValueError
        If ``inner`` is neither ``"vmap"`` nor ``"map"`` (and, at a run, if NumPyro runs another number of chains
        than the plan's).
    """
    if not isinstance(plan, ChainPlan):
        raise TypeError(f"plan must be a ChainPlan from plan_chains(), got {type(plan).__name__}.")
    if inner not in INNER:
        raise ValueError(f"inner must be 'vmap' (chains in lockstep) or 'map' (one after another), got {inner!r}.")
    mesh = Mesh(np.asarray(plan.devices), (axis_name,), axis_types=(AxisType.Auto,))
    slots, real = plan.slot_index(), plan.real_slots()

    def chain_method(per_chain: Callable) -> Callable:
        def block(chains):
            return jax.vmap(per_chain)(chains) if inner == "vmap" else jax.lax.map(per_chain, chains)

        # the program keeps the per-chain function's name (NumPyro's _single_chain_mcmc) in compile logs
        block.__name__ = getattr(per_chain, "__name__", getattr(getattr(per_chain, "func", None), "__name__", "block"))

        mapped = jax.jit(
            jax.shard_map(
                block, mesh=mesh, in_specs=P(axis_name), out_specs=P(axis_name),
                check_vma=False,  # NumPyro starts some while-loop carries as constants, the same on every device
            )
        )

        def run(args):
            leading = {np.shape(x)[0] for x in jax.tree.leaves(args)}
            if leading != {plan.num_chains}:
                raise ValueError(
                    f"The plan is for {plan.num_chains} chains but NumPyro passed arrays with leading "
                    f"axes {sorted(leading)}; make the plan with the MCMC's num_chains."
                )
            placed = jax.tree.map(lambda x: x[slots], args)
            # compiled ahead of time (once, as a call would) so that XLA's memory count of the program is kept
            compiled = mapped.lower(placed).compile()
            chain_method.memory = compiled.memory_analysis()
            return jax.tree.map(lambda x: x[real], compiled(placed))

        return run

    chain_method.memory = None
    return chain_method


@dataclass
class ChainRun:
    """What :func:`run_chains` returns.

    Parameters
    ----------
    samples : dict of str to numpy.ndarray
        Maps each site to a NumPy array with the chains first: ``(num_chains, num_samples, *site_shape)``.
    mcmc : Any
        NumPyro's ``MCMC`` object (for ``az.from_numpyro``).
    plan : parallel_mcmc.sample.ChainPlan
        The chain layout.
    seconds : float
        The wall time of the run.
    compile_seconds : float, optional
        The part of ``seconds`` JAX spent compiling.
    extra_fields : dict of str to numpy.ndarray, optional
        The extra fields asked of NumPyro (``extra_fields`` of :func:`run_chains`), chains first.
    memory : Any, optional
        XLA's ``CompiledMemoryStats`` of the sampling program, for one device: its arguments, its outputs (the
        draws of the device's chains, padding included, and their final states) and its scratch space
        (``temp_size_in_bytes``).
    """

    samples: dict[str, np.ndarray]
    mcmc: Any
    plan: ChainPlan
    seconds: float
    compile_seconds: float = 0.0
    extra_fields: dict[str, np.ndarray] = field(default_factory=dict)
    memory: Any = None

    def to_arviz(self):
        """An ArviZ ``DataTree`` (ArviZ 1's ``InferenceData``) with the chain axis kept.

        Returns
        -------
        xarray.DataTree
            The run's draws, sample statistics and observed data.
        """
        _restore_numpyro_initialization()
        return az.from_numpyro(self.mcmc)


def _restore_numpyro_initialization() -> None:
    """Put back ``numpyro.infer.initialization``, which ``az.from_numpyro`` reads, where a lazy import lost it.

    ArviZ 1 imports NumPyro lazily (``lazy_loader``) as soon as it converts any data; if that happens before
    NumPyro's first import, the NumPyro imported later lacks that attribute (seen with arviz-base 1.3.1,
    numpyro 0.22 and Python 3.12.1) and ``az.from_numpyro`` fails with ``AttributeError``. Importing NumPyro
    before ArviZ avoids it; this repairs it whatever the order.
    """
    import numpyro.infer

    if not hasattr(numpyro.infer, "initialization"):
        numpyro.infer.initialization = importlib.import_module("numpyro.infer.initialization")


def run_chains(
    model: Callable,
    *model_args: Any,
    num_chains: int,
    num_warmup: int,
    num_samples: int,
    rng_key: Any,
    init_params: dict[str, Any] | None = None,
    devices: Sequence | None = None,
    kernel: Any = None,
    extra_fields: tuple[str, ...] = (),
    inner: str = "vmap",
    **model_kwargs: Any,
) -> ChainRun:
    """Run ``num_chains`` chains of NUTS (or ``kernel``) on ``devices`` with one ``MCMC.run``.

    Chains are spread as evenly as possible (:func:`plan_chains`). Chain ``i``
    uses the ``i``-th of NumPyro's keys split from ``rng_key`` and, if given,
    row ``i`` of each array in ``init_params`` (unconstrained values, shape
    ``(num_chains, *site_shape)``, also for a single chain), whatever the
    number of devices. ``inner`` is how each device runs its chains
    (:func:`shard_chains`): ``"vmap"`` in lockstep, ``"map"`` one after another.

    Parameters
    ----------
    model : callable
        A NumPyro model.
    *model_args : Any
        Its positional arguments.
    num_chains : int
        The number of chains (at least 1).
    num_warmup : int
        Warm-up iterations of each chain.
    num_samples : int
        Draws each chain keeps.
    rng_key : jax.Array
        The key the chains' keys are split from.
    init_params : dict of str to Any or None, optional
        Initial unconstrained values, ``(num_chains, *site_shape)`` for each latent site.
    devices : sequence or None, optional
        The devices (default: all).
    kernel : Any, optional
        A NumPyro kernel (default: ``NUTS(model)``).
    extra_fields : tuple of str, optional
        Further fields of the sampler's state to collect (NumPyro's ``extra_fields``).
    inner : str, optional
        ``"vmap"`` (lockstep) or ``"map"`` (one after another).
    **model_kwargs : Any
        The model's keyword arguments.

    Returns
    -------
    parallel_mcmc.sample.ChainRun
        The draws, NumPyro's ``MCMC``, the plan and the run's times and memory.

    Raises
    ------
    TypeError
        If ``model`` is not callable or a count is not a whole number.
    ValueError
        If ``devices`` or ``init_params`` are refused (:func:`plan_chains`, :func:`check_init_params`).
    """
    num_chains = whole_number("num_chains", num_chains, 1)
    num_warmup = whole_number("num_warmup", num_warmup, 0)
    num_samples = whole_number("num_samples", num_samples, 1)
    if not callable(model):
        raise TypeError(f"model must be a NumPyro model function, got {type(model).__name__}.")
    plan = plan_chains(num_chains, devices)
    chain_method = shard_chains(plan, inner=inner)
    if init_params is not None:
        check_init_params(init_params, latent_shapes(model, *model_args, **model_kwargs), num_chains)
        init_params = {k: jax.numpy.asarray(v) for k, v in init_params.items()}
        if num_chains == 1:  # NumPyro takes a single chain's values without the chain axis
            init_params = {k: v[0] for k, v in init_params.items()}
    kernel = NUTS(model) if kernel is None else kernel
    mcmc = MCMC(
        kernel, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
        chain_method=chain_method, progress_bar=False,
    )
    with CompileLog() as log:
        start = time.perf_counter()
        mcmc.run(rng_key, *model_args, init_params=init_params, extra_fields=tuple(extra_fields), **model_kwargs)
        samples = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
        seconds = time.perf_counter() - start
    extras = mcmc.get_extra_fields(group_by_chain=True) if extra_fields else {}
    return ChainRun(
        samples={k: np.asarray(v) for k, v in samples.items()},
        mcmc=mcmc, plan=plan, seconds=seconds, compile_seconds=log.seconds,
        extra_fields={k: np.asarray(v) for k, v in extras.items()}, memory=chain_method.memory,
    )


