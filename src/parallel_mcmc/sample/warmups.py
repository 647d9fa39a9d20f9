"""Warm-ups the chapters share: ChEES for an ensemble in lockstep, and NUTS's window adaptation for one chain.

- :class:`CheesWarmup`: BlackJAX's ``chees_adaptation`` run for an ensemble under ``jit``, and the ``dynamic_hmc``
  kernel with what it tuned. ChEES hands back two functions (the trajectory-length schedule) beside its numbers; a
  compiled function cannot return functions, so the warm-up keeps them aside when it is traced and
  :meth:`CheesWarmup.kernel` puts them back.
- :func:`nuts_warmup`: one chain's window adaptation (step size and diagonal mass matrix), traceable, so that
  ``vmap`` runs the chains in lockstep and ``lax.map`` (or ``shard_map``) runs them each at its own pace.
- :func:`nuts_chains`: each chain's own warm-up followed by its draws, for ``vmap``.

Example::

    warmup = CheesWarmup(logdensity, num_chains=64, num_steps=200)
    states, tuned = warmup(jax.random.key(0), positions)
    step = warmup.kernel(tuned).step   # dynamic HMC with ChEES's step size, mass matrix and schedule
"""

from __future__ import annotations

from typing import Any, Callable

import jax

from parallel_mcmc._validate import real_number, whole_number

__all__ = ["CheesWarmup", "nuts_warmup", "nuts_chains"]


class CheesWarmup:
    """ChEES's warm-up of ``num_chains`` chains in lockstep, compiled once, and the kernel it tunes.

    Parameters
    ----------
    logdensity : callable
        The log-density of one position; with ``factory=True``, a function of extra arguments that returns it
        (``funnel(centring)``), so that one compiled warm-up serves every value of those arguments.
    num_chains : int
        The chains of the ensemble (ChEES tunes from all of them).
    num_steps : int
        Warm-up steps.
    step_size : float, optional
        The initial step size.
    learning_rate : float, optional
        Adam's learning rate for the trajectory length.
    factory : bool, optional
        ``logdensity`` is a factory; the warm-up and :meth:`kernel` then take its arguments after their own.
    """

    def __init__(self, logdensity: Callable[..., Any], num_chains: int, num_steps: int, *, step_size: float = 0.1,
                 learning_rate: float = 0.05, factory: bool = False) -> None:
        if not callable(logdensity):
            raise TypeError(f"logdensity must be a function, not {type(logdensity).__name__}.")
        self.logdensity, self.factory = logdensity, factory
        self.num_chains = whole_number("num_chains", num_chains, 2, of=" (ChEES tunes from an ensemble)")
        self.num_steps = whole_number("num_steps", num_steps, 1)
        self.step_size = real_number("step_size", step_size, above=0)
        self.learning_rate = real_number("learning_rate", learning_rate, above=0)
        self.functions: dict[str, Callable[..., Any]] = {}
        self._run = jax.jit(self._warmup)

    def _target(self, args: tuple) -> Callable[[Any], Any]:
        if self.factory:
            return self.logdensity(*args)
        if args:
            raise TypeError(f"this warm-up's logdensity takes no extra arguments (factory=False); got {len(args)}.")
        return self.logdensity

    def _warmup(self, key, positions, *args):
        import blackjax  # here, not at import: importing BlackJAX starts JAX's backend
        import optax

        adaptation = blackjax.chees_adaptation(self._target(args), self.num_chains, mass_matrix_estimation="diagonal")
        (states, parameters), _ = adaptation.run(key, positions, step_size=self.step_size,
                                                 optim=optax.adam(self.learning_rate), num_steps=self.num_steps)
        self.functions.update({k: v for k, v in parameters.items() if callable(v)})
        return states, {k: v for k, v in parameters.items() if not callable(v)}

    def __call__(self, key, positions, *args):
        """Warm the ensemble up from ``positions`` (a pytree whose leaves have ``num_chains`` rows).

        Parameters
        ----------
        key : jax.Array
            The ensemble's key.
        positions : pytree of jax.Array
            Every chain's start.
        *args
            The factory's arguments (``factory=True`` only).

        Returns
        -------
        states : pytree
            Every chain's state after the warm-up, ready for :meth:`kernel`'s step.
        tuned : dict
            Step size, inverse mass matrix and ``integration_steps_params`` (the tuned number of steps).
        """
        return self._run(key, positions, *args)

    def kernel(self, tuned: dict, *args):
        """BlackJAX's ``dynamic_hmc`` with what the warm-up tuned, its trajectory-length schedule included.

        Parameters
        ----------
        tuned : dict
            What calling the warm-up returned.
        *args
            The factory's arguments (``factory=True`` only).

        Returns
        -------
        blackjax.SamplingAlgorithm
            ``.step(key, state)`` advances one chain; ``vmap`` it over the ensemble.

        Raises
        ------
        RuntimeError
            If the warm-up has not run yet (the schedule comes from its trace).
        """
        import blackjax

        if not self.functions:
            raise RuntimeError("run the warm-up first: ChEES's schedule functions come from its trace.")
        return blackjax.dynamic_hmc(self._target(args), **tuned, **self.functions)

    def integration_steps(self, random_args, num_steps):
        """The number of leapfrog steps of each draw whose generator argument is in ``random_args``.

        Parameters
        ----------
        random_args : jax.Array
            Generator arguments (a chain state's ``random_generator_arg`` plus the draw's index).
        num_steps : float
            The tuned mean number of steps (``tuned["integration_steps_params"][0]``).

        Returns
        -------
        jax.Array
            Steps per draw, the same for every chain of the ensemble.
        """
        if not self.functions:
            raise RuntimeError("run the warm-up first: ChEES's schedule functions come from its trace.")
        return jax.vmap(self.functions["integration_steps_fn"], in_axes=(0, None))(random_args, num_steps)


def nuts_warmup(logdensity: Callable[[Any], Any], num_steps: int) -> Callable[[Any, Any], tuple]:
    """One chain's NUTS warm-up (window adaptation), traceable: ``warmup(key, position) -> (state, parameters)``.

    Parameters
    ----------
    logdensity : callable
        The log-density of one position.
    num_steps : int
        Warm-up steps.

    Returns
    -------
    callable
        ``warmup(key, position)``: the chain's state after the warm-up and its tuned ``step_size`` and
        ``inverse_mass_matrix``. ``jax.vmap`` of it warms chains up in lockstep; ``lax.map`` each at its own pace.
    """
    if not callable(logdensity):
        raise TypeError(f"logdensity must be a function, not {type(logdensity).__name__}.")
    num_steps = whole_number("num_steps", num_steps, 1)

    def warmup(key, position):
        import blackjax

        (state, parameters), _ = blackjax.window_adaptation(blackjax.nuts, logdensity).run(
            key, position, num_steps=num_steps)
        return state, parameters

    return warmup


def nuts_chains(logdensity: Callable[[Any], Any], num_warmup: int, num_draws: int,
                record: Callable[[Any, Any], Any]) -> Callable[[Any, Any], tuple]:
    """Each chain's own NUTS warm-up, then its draws: ``run(key, position) -> (parameters, records)``.

    Parameters
    ----------
    logdensity : callable
        The log-density of one position.
    num_warmup, num_draws : int
        Warm-up steps and draws.
    record : callable
        ``record(state, info)``: what to keep of each draw (a position's component, the integration steps, the
        divergence flag...).

    Returns
    -------
    callable
        ``run(key, position)``: the chain's tuned parameters and its records, stacked over the draws; ``jax.vmap``
        it over the chains' keys and starts.
    """
    warmup = nuts_warmup(logdensity, num_warmup)
    num_draws = whole_number("num_draws", num_draws, 1)

    def run(key, position):
        import blackjax

        warmup_key, sample_key = jax.random.split(key)
        state, parameters = warmup(warmup_key, position)
        kernel = blackjax.nuts(logdensity, **parameters)

        def step(state, key):
            state, info = kernel.step(key, state)
            return state, record(state, info)

        return parameters, jax.lax.scan(step, state, jax.random.split(sample_key, num_draws))[1]

    return run
