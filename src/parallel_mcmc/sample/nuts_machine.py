"""NUTS two ways: chains in lockstep under ``vmap``, and the same chains as a state machine.

A NUTS draw doubles its trajectory until it makes a U-turn, diverges or reaches ``2**max_num_doublings - 1``
steps, so chains take different numbers of leapfrog steps for the same draw. Here the whole draw is cut into
calls of one function, :meth:`NUTSMachine.advance`, that makes exactly one leapfrog step (one gradient) of one
chain and keeps the books: the multinomial choice of the proposal, the U-turn checks of the subtrees (through
checkpoint arrays, as iterative NUTS builders do), divergence, the doubling. Its state says when the draw is done.
Two drivers call it:

- :meth:`NUTSMachine.lockstep`: for each draw, a loop of ``advance`` until every chain's draw is done; the chains
  that finished early wait, their steps computed and thrown away. Its iterations are ``sum over draws of max over
  chains`` of the steps.
- :meth:`NUTSMachine.state_machine`: one loop whose every iteration calls ``advance`` once for every chain; a chain
  whose draw is done records it and starts its next draw in the same iteration. Its iterations are ``max over
  chains of sum over draws``. The gradient is called in one place only: under ``vmap`` a ``cond`` or ``switch``
  runs all of its branches, so a gradient in two branches would cost two (Dance, Glaser, Orbanz & Adams, ICML 2025).

Every random number of a draw comes from ``fold_in(key, draw)`` of the chain's key: the momentum and the first
direction from its ``fold_in(., 0)``, and the uniforms of step ``s`` (the multinomial choices, the next direction)
from its ``fold_in(., s)``, so both drivers consume them alike. Equal random numbers are not quite enough for equal
bits: XLA may round a sum differently where it fuses it with different neighbours. So every sum over dimensions
happens inside :meth:`~NUTSMachine.advance`, and both drivers call it fenced off from their own work by
``jax.lax.optimization_barrier``; then they make the same draws bit for bit.

Example::

    nuts = NUTSMachine(logdensity, dim=4, step_size=0.3)
    keys = jax.random.split(jax.random.key(0), 64)
    out = jax.jit(nuts.state_machine, static_argnums=2)(keys, q0, 100)
    out.positions, out.num_integration_steps, out.iterations
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parallel_mcmc._validate import ArgumentError, real_number, whole_number

__all__ = ["NUTSMachine", "NUTSState", "NUTSDraws"]

DIVERGENCE = 1000.0  # an energy error above this ends the draw as divergent


class NUTSState(NamedTuple):
    """One chain's NUTS draw in progress: everything :meth:`NUTSMachine.advance` reads and writes.

    Parameters
    ----------
    key : jax.Array
        The draw's key, ``fold_in(chain key, draw)``.
    energy0 : jax.Array
        The energy at the start of the draw (before the first step: minus the log-density).
    left, right : tuple of jax.Array
        ``(q, p, grad)`` at the trajectory's two ends.
    proposal : tuple of jax.Array
        ``(q, log_p, grad)``, the point chosen from the trajectory so far.
    log_weight : jax.Array
        The log of the trajectory's summed weights.
    momentum_sum : jax.Array
        The sum of the trajectory's momenta.
    depth : jax.Array
        The doublings finished (once the draw is done: begun).
    direction : jax.Array
        +1 or -1, the way the current subtree grows.
    leaf : jax.Array
        The leaves built in the current subtree.
    sub_proposal : tuple of jax.Array
        ``(q, log_p, grad)`` chosen from the subtree.
    sub_log_weight, sub_momentum_sum : jax.Array
        The subtree's log-weight and momentum sum.
    momentum_checkpoints, sum_checkpoints : jax.Array
        ``(max_num_doublings, dim)``: the momenta and momentum sums the subtrees' U-turn checks start from.
    steps : jax.Array
        The leapfrog steps of this draw.
    divergent, done : jax.Array
        Whether the draw diverged, whether it is finished.
    """

    key: jax.Array
    energy0: jax.Array
    left: tuple
    right: tuple
    proposal: tuple
    log_weight: jax.Array
    momentum_sum: jax.Array
    depth: jax.Array
    direction: jax.Array
    leaf: jax.Array
    sub_proposal: tuple
    sub_log_weight: jax.Array
    sub_momentum_sum: jax.Array
    momentum_checkpoints: jax.Array
    sum_checkpoints: jax.Array
    steps: jax.Array
    divergent: jax.Array
    done: jax.Array


class NUTSDraws(NamedTuple):
    """What the drivers of :class:`NUTSMachine` return.

    Parameters
    ----------
    positions : jax.Array
        The draws, ``(chains, draws, dim)``.
    num_integration_steps : jax.Array
        Leapfrog steps (one gradient each) of every draw, ``(chains, draws)``.
    divergent : jax.Array
        Whether each draw diverged, ``(chains, draws)``.
    tree_depth : jax.Array
        The doublings each draw began, ``(chains, draws)``.
    iterations : jax.Array
        The driver's loop iterations, each one step of every chain.
    """

    positions: jax.Array
    num_integration_steps: jax.Array
    divergent: jax.Array
    tree_depth: jax.Array
    iterations: jax.Array


def _step_all(sampler, state):
    """``sampler.advance`` for every chain, fenced off from the driver's own arithmetic.

    The barriers keep XLA from fusing the step with what a driver does around it, so that both drivers compile the
    step alike and round every sum the same way: the condition of equal draws.
    """
    return jax.lax.optimization_barrier(jax.vmap(sampler.advance)(jax.lax.optimization_barrier(state)))


def _varying_axes(x) -> frozenset:
    """The manual mesh axes (inside ``jax.shard_map``) over which ``x``'s value varies; empty elsewhere."""
    aval = jax.typeof(x)
    manual = getattr(aval, "manual_axis_type", None)
    return frozenset(manual.varying) if manual is not None else frozenset(getattr(aval, "vma", ()) or ())


def _vary_like(tree, reference):
    """``tree`` with every leaf varying over the manual mesh axes that ``reference`` varies over (inside
    ``jax.shard_map``; elsewhere ``tree`` as it is).

    A loop's carry must keep its type; a counter or a buffer of zeros starts the same on every device, but becomes
    device-varying once it takes in the chains' values, so it is cast to varying (``jax.lax.pcast``) at the start.
    """
    axes = _varying_axes(reference)
    if not axes:
        return tree

    def cast(leaf):
        missing = tuple(sorted(axes - _varying_axes(leaf)))
        return jax.lax.pcast(leaf, missing, to="varying") if missing else leaf

    return jax.tree.map(cast, tree)


def _hold(keep, old, new):
    """``old`` where ``keep`` (one flag per chain) and ``new`` elsewhere, leaf by leaf."""
    def pick(a, b):
        return jnp.where(keep.reshape(keep.shape + (1,) * (a.ndim - keep.ndim)), a, b)
    return jax.tree.map(pick, old, new)


def _check_positions(positions, dim: int):
    """``positions`` as an array of shape ``(chains, dim)``; raise :class:`ArgumentError` naming the shape to pass."""
    shape = getattr(positions, "shape", None)
    if shape is None or len(shape) != 2 or shape[1] != dim or shape[0] < 1:
        got = f"a {type(positions).__name__}" if shape is None else f"shape {tuple(shape)}"
        raise ArgumentError(f"positions must be an array of shape (num_chains, {dim}), one row per chain, got {got}.")
    return jnp.asarray(positions)


def _check_keys(keys, num_chains: int):
    """Check that there is one PRNG key per chain."""
    shape = getattr(keys, "shape", None)
    if shape is None or len(shape) < 1 or shape[0] != num_chains:
        raise ArgumentError(f"keys must hold one key per chain ({num_chains}), for example "
                            f"jax.random.split(jax.random.key(0), {num_chains}); got shape {shape}.")


@dataclass(frozen=True)
class NUTSMachine:
    """Multinomial NUTS on ``logdensity`` whose every step is one call of :meth:`advance`.

    Parameters
    ----------
    logdensity : callable
        The log-density of one position of shape ``(dim,)``, differentiable with JAX.
    dim : int
        The dimension of a position.
    step_size : float
        The leapfrog step size.
    inverse_mass_matrix : sequence of float or None, optional
        The diagonal of the inverse mass matrix, ``dim`` positive numbers; ``None`` (the default) is the identity.
    max_num_doublings : int, optional
        The tree-depth cap: a draw takes at most ``2**max_num_doublings - 1`` steps. Default 10.

    Raises
    ------
    TypeError
        If ``logdensity`` is not callable.
    ValueError
        If a number is out of range or ``inverse_mass_matrix`` is not ``dim`` positive numbers.
    """

    logdensity: Callable[[Any], Any]
    dim: int
    step_size: float
    inverse_mass_matrix: Any = None
    max_num_doublings: int = 10

    def __post_init__(self) -> None:
        if not callable(self.logdensity):
            raise TypeError(f"logdensity must be a function of one position, not {type(self.logdensity).__name__}.")
        whole_number("dim", self.dim, 1)
        real_number("step_size", self.step_size, above=0)
        whole_number("max_num_doublings", self.max_num_doublings, 1, of=" (the tree-depth cap)")
        if self.max_num_doublings > 30:
            raise ArgumentError(f"max_num_doublings must be at most 30 (2**30 steps a draw), "
                                f"got {self.max_num_doublings}.")
        if self.inverse_mass_matrix is not None:
            diagonal = np.asarray(self.inverse_mass_matrix, dtype=float)
            if diagonal.shape != (self.dim,) or not np.all(np.isfinite(diagonal)) or np.any(diagonal <= 0):
                raise ArgumentError(f"inverse_mass_matrix must be the diagonal of the inverse mass matrix: {self.dim} "
                                    f"positive numbers (or None for the identity), got {self.inverse_mass_matrix!r}.")
            object.__setattr__(self, "inverse_mass_matrix", tuple(float(x) for x in diagonal))  # hashable

    def _inverse_mass(self):
        if self.inverse_mass_matrix is None:
            return jnp.ones(self.dim)
        return jnp.asarray(self.inverse_mass_matrix)

    def _kinetic(self, p):
        return 0.5 * jnp.sum(self._inverse_mass() * p * p)

    def _is_turning(self, p_left, p_right, momentum_sum):
        """The generalised U-turn criterion of a stretch whose end momenta and momentum sum are given."""
        rho = momentum_sum - 0.5 * (p_left + p_right)
        inverse_mass = self._inverse_mass()
        return (jnp.dot(inverse_mass * p_left, rho) <= 0) | (jnp.dot(inverse_mass * p_right, rho) <= 0)

    def start(self, key, draw, q, log_p, grad) -> NUTSState:
        """The state of draw number ``draw`` of one chain, starting at ``q`` (no gradient evaluated).

        Parameters
        ----------
        key : jax.Array
            The chain's key.
        draw : int or jax.Array
            The draw's index.
        q, log_p, grad : jax.Array
            The chain's position, its log-density and gradient.

        Returns
        -------
        NUTSState
            A trajectory of one point with a fresh momentum, ready for :meth:`advance`.
        """
        key = jax.random.fold_in(key, draw)
        normals = jax.random.normal(jax.random.fold_in(key, 0), (self.dim + 1,))  # the momentum, the first direction
        p = normals[:-1] / jnp.sqrt(self._inverse_mass())
        end = (q, p, grad)
        zeros = jnp.zeros((self.max_num_doublings, self.dim), q.dtype)
        return NUTSState(
            key=key, energy0=-log_p, left=end, right=end, proposal=(q, log_p, grad),
            log_weight=jnp.zeros((), q.dtype), momentum_sum=p, depth=jnp.int32(0),
            direction=jnp.where(normals[-1] > 0, 1, -1).astype(jnp.int32),
            leaf=jnp.int32(0), sub_proposal=(q, log_p, grad), sub_log_weight=jnp.full((), -jnp.inf, q.dtype),
            sub_momentum_sum=jnp.zeros_like(p), momentum_checkpoints=zeros, sum_checkpoints=zeros,
            steps=jnp.int32(0), divergent=jnp.bool_(False), done=jnp.bool_(False))

    def advance(self, state: NUTSState) -> NUTSState:
        """One leapfrog step of the chain's current subtree, and the bookkeeping that follows it.

        The step goes from the trajectory's end on the side the subtree grows. The new point may become the
        subtree's proposal (multinomial choice), its momentum may be checkpointed, and the iterative U-turn checks
        of the subtrees it closes are made. A subtree that turns or diverges ends the draw (its points are not
        proposed); a complete subtree is merged (biased progressive choice), then the whole trajectory is checked
        and the next doubling starts, unless the cap is reached.

        Parameters
        ----------
        state : NUTSState
            A draw in progress (``done`` false).

        Returns
        -------
        NUTSState
            The state after one step; ``done`` says whether the draw is finished.
        """
        s, eps, inverse_mass = state, self.step_size, self._inverse_mass()
        # the starting energy, completed here (start left out the kinetic energy): a sum over the dimensions,
        # rounded the same way by both drivers only if it is computed in the one place that both share
        s = s._replace(energy0=jnp.where(s.steps == 0, s.energy0 + self._kinetic(s.momentum_sum), s.energy0))
        # this step's uniforms: for the choice of the leaf, of the subtree when it completes, of the next direction
        u_leaf, u_merge, u_direction = jax.random.uniform(jax.random.fold_in(s.key, s.steps + 1), (3,))
        forward = s.direction > 0
        q, p, grad = jax.tree.map(lambda a, b: jnp.where(forward, a, b), s.right, s.left)
        step = s.direction * eps
        p = p + 0.5 * step * grad
        q = q + step * inverse_mass * p
        log_p, grad = jax.value_and_grad(self.logdensity)(q)  # the one gradient of the iteration
        p = p + 0.5 * step * grad
        energy_error = -log_p + self._kinetic(p) - s.energy0
        energy_error = jnp.where(jnp.isnan(energy_error), jnp.inf, energy_error)
        divergent = energy_error > DIVERGENCE
        log_w = -energy_error
        new_end = (q, p, grad)
        left = jax.tree.map(lambda a, b: jnp.where(forward, a, b), s.left, new_end)
        right = jax.tree.map(lambda a, b: jnp.where(forward, a, b), new_end, s.right)

        # the subtree: multinomial choice among its leaves, momentum sum, checkpoints, U-turn checks
        sub_log_weight = jnp.logaddexp(s.sub_log_weight, log_w)
        take = u_leaf < jnp.exp(log_w - sub_log_weight)
        sub_proposal = jax.tree.map(lambda a, b: jnp.where(take, a, b), (q, log_p, grad), s.sub_proposal)
        sub_momentum_sum = s.sub_momentum_sum + p
        n = s.leaf
        idx_max = jax.lax.population_count(n >> 1)            # checkpoint slot of this leaf's pair
        trailing_ones = jax.lax.population_count(n ^ (n + 1)) - 1
        idx_min = idx_max - trailing_ones + 1                 # the subtrees this leaf closes: slots idx_min..idx_max
        even = (n % 2) == 0
        momentum_checkpoints = jnp.where(even, s.momentum_checkpoints.at[idx_max].set(p), s.momentum_checkpoints)
        sum_checkpoints = jnp.where(even, s.sum_checkpoints.at[idx_max].set(sub_momentum_sum), s.sum_checkpoints)
        slots = jnp.arange(self.max_num_doublings)
        stretch_sums = sub_momentum_sum - sum_checkpoints + momentum_checkpoints
        turns = jax.vmap(lambda p_start, total: self._is_turning(p_start, p, total))(momentum_checkpoints,
                                                                                      stretch_sums)
        sub_turning = jnp.any(turns & (slots >= idx_min) & (slots <= idx_max))
        leaf, steps = n + 1, s.steps + 1

        # the subtree ends: early (turning or divergent: the draw ends, the subtree is not used) or complete (merge)
        failed = sub_turning | divergent
        complete = (leaf == (1 << s.depth)) & ~failed
        merged_log_weight = jnp.logaddexp(s.log_weight, sub_log_weight)
        take_sub = complete & (u_merge < jnp.exp(sub_log_weight - s.log_weight))
        proposal = jax.tree.map(lambda a, b: jnp.where(take_sub, a, b), sub_proposal, s.proposal)
        momentum_sum = jnp.where(complete, s.momentum_sum + sub_momentum_sum, s.momentum_sum)
        depth = s.depth + (complete | failed).astype(jnp.int32)  # doublings begun once the draw ends
        turning = complete & self._is_turning(left[1], right[1], momentum_sum)
        done = failed | turning | (depth == self.max_num_doublings)
        restart = complete & ~done  # the next doubling
        return NUTSState(
            key=s.key, energy0=s.energy0, left=left, right=right, proposal=proposal,
            log_weight=jnp.where(complete, merged_log_weight, s.log_weight), momentum_sum=momentum_sum,
            depth=depth, direction=jnp.where(restart, jnp.where(u_direction < 0.5, 1, -1), s.direction),
            leaf=jnp.where(restart, 0, leaf), sub_proposal=sub_proposal,
            sub_log_weight=jnp.where(restart, -jnp.inf, sub_log_weight),
            sub_momentum_sum=jnp.where(restart, jnp.zeros_like(p), sub_momentum_sum),
            momentum_checkpoints=momentum_checkpoints, sum_checkpoints=sum_checkpoints, steps=steps,
            divergent=divergent, done=done)

    @staticmethod
    def result(state: NUTSState):
        """The finished draw: the proposal ``(q, log_p, grad)``, the steps, the divergence flag and the tree depth.

        Parameters
        ----------
        state : NUTSState
            A finished draw.

        Returns
        -------
        tuple
            ``((q, log_p, grad), steps, divergent, tree_depth)``; the tree depth counts the doublings begun
            (the last one's subtree included when it turned or diverged, as BlackJAX counts them).
        """
        return state.proposal, state.steps, state.divergent, state.depth

    def _begin(self, keys, positions):
        positions = _check_positions(positions, self.dim)
        _check_keys(keys, positions.shape[0])
        log_p, grad = jax.vmap(jax.value_and_grad(self.logdensity))(positions)
        return positions, log_p, grad

    @staticmethod
    def _pack(positions, stats, iterations):
        return NUTSDraws(positions, *stats, iterations)

    def lockstep(self, keys, positions, num_draws: int) -> NUTSDraws:
        """The chains under ``vmap``: each draw is a loop of :meth:`advance` until the slowest chain is done.

        Parameters
        ----------
        keys : jax.Array
            One PRNG key per chain, ``(chains,)``.
        positions : jax.Array
            The starting positions, ``(chains, dim)``.
        num_draws : int
            Draws per chain (static under ``jit``).

        Returns
        -------
        NUTSDraws
            The draws and their bookkeeping; ``iterations`` is the sum over draws of the slowest chain's steps.

        Raises
        ------
        ValueError
            If ``positions`` is not ``(chains, dim)``, ``keys`` not one per chain or ``num_draws`` not >= 1.
        """
        return _lockstep(self, keys, positions, num_draws)

    def state_machine(self, keys, positions, num_draws: int) -> NUTSDraws:
        """The same draws, each chain one :meth:`advance` per iteration of one loop, starting its next draw at once.

        Parameters
        ----------
        keys, positions, num_draws
            As for :meth:`lockstep`.

        Returns
        -------
        NUTSDraws
            The draws, equal to :meth:`lockstep`'s bit for bit; ``iterations`` is the largest total of steps of
            a chain.

        Raises
        ------
        ValueError
            As for :meth:`lockstep`.
        """
        return _state_machine(self, keys, positions, num_draws)


def _lockstep(sampler, keys, positions, num_draws):
    """:meth:`NUTSMachine.lockstep` for any sampler with ``_begin``, ``start``, ``advance``, ``result``, ``_pack``."""
    num_draws = whole_number("num_draws", num_draws, 1)
    point = sampler._begin(keys, positions)

    def one_draw(carry, d):
        iterations, point = carry
        state = jax.vmap(sampler.start, in_axes=(0, None) + (0,) * len(point))(keys, d, *point)
        iterations, state = _vary_like((iterations, state), point[0])

        def body(loop):
            count, state = loop  # a finished chain's step is computed and thrown away: it waits
            return count + 1, _hold(state.done, state, _step_all(sampler, state))

        iterations, state = jax.lax.while_loop(lambda loop: jnp.any(~loop[1].done), body, (iterations, state))
        point, *stats = jax.vmap(sampler.result)(state)
        return (iterations, point), (point[0], *stats)

    carry = _vary_like((jnp.int32(0), point), point[0])
    (iterations, _), (q, *stats) = jax.lax.scan(one_draw, carry, jnp.arange(num_draws))
    return sampler._pack(jnp.swapaxes(q, 0, 1), [x.T for x in stats], iterations)


def _state_machine(sampler, keys, positions, num_draws):
    """:meth:`NUTSMachine.state_machine` for any sampler with ``_begin``, ``start``, ``advance``, ``result``,
    ``_pack``."""
    num_draws = whole_number("num_draws", num_draws, 1)
    point = sampler._begin(keys, positions)
    num_chains = point[0].shape[0]
    start = jax.vmap(sampler.start)
    d = jnp.zeros(num_chains, jnp.int32)
    state = start(keys, d, *point)
    shapes = jax.eval_shape(jax.vmap(sampler.result), state)
    records = jax.tree.map(lambda x: jnp.zeros((num_chains, num_draws) + x.shape[1:], x.dtype),
                           (shapes[0][0], *shapes[1:]))
    chains = jnp.arange(num_chains)

    def body(carry):
        iterations, d, state, records = carry
        active = d < num_draws
        state = _hold(~active, state, _step_all(sampler, state))  # one step of every chain
        finished = state.done & active
        point, *stats = jax.vmap(sampler.result)(state)
        slot = jnp.where(finished, d, num_draws)  # out of range for the chains still running: dropped
        records = jax.tree.map(lambda r, x: r.at[chains, slot].set(x, mode="drop"), records, (point[0], *stats))
        d = d + finished.astype(jnp.int32)
        restart = finished & (d < num_draws)  # the next draw starts in this iteration
        state = _hold(restart, start(keys, d, *point), state)
        return iterations + 1, d, state, records

    carry = _vary_like((jnp.int32(0), d, state, records), point[0])
    iterations, _, _, (q, *stats) = jax.lax.while_loop(lambda carry: jnp.any(carry[1] < num_draws), body, carry)
    return sampler._pack(q, stats, iterations)
