"""Checks for the exercises of the part "Parallel chains"."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import jax
import numpy as np

from parallel_mcmc.measure.lockstep import lockstep_cost
from parallel_mcmc.measure.timing import Timing
from parallel_mcmc._validate import whole_number
from . import as_float, call, expect, passed, traced_program

__all__ = ["costliest_chain", "machine_speedup", "grouped_efficiency", "spread_chains", "faster_method", "time_to_target"]

# steps with axes (chain, draw): in each, the chain the others wait for most is neither the chain with the most
# steps in all nor the one with the single longest draw, so that those plausible wrong answers are told apart.
_WAIT_CASES = [
    np.array([[4, 4, 4, 4, 4, 4], [9, 9, 9, 1, 1, 1], [9, 9, 9, 1, 1, 1], [1, 1, 1, 1, 1, 12], [1, 1, 1, 1, 1, 11]]),
    np.array([[3, 3, 3, 3], [8, 8, 1, 1], [8, 8, 1, 1], [1, 1, 1, 10], [1, 1, 1, 9]]),
    np.array([[1, 15, 1, 1, 1], [14, 14, 1, 1, 1], [3, 1, 5, 5, 5], [14, 1, 2, 2, 2]]),
    np.array([[4, 4, 4], [10, 2, 2], [10, 2, 2], [1, 11, 1], [1, 10, 1], [1, 1, 1]]),
]


def _savings(steps: np.ndarray) -> np.ndarray:
    """Lockstep steps saved by leaving out each chain."""
    full = lockstep_cost(steps)
    return np.array([full - lockstep_cost(np.delete(steps, c, axis=0)) for c in range(steps.shape[0])])


def costliest_chain(fn: Callable[[np.ndarray], Any], cases: Sequence[Any] | None = None) -> None:
    """Check ``fn(steps)``: which chain the lockstep run waits for most, and the share of its steps that costs.

    ``steps`` are every chain's integration steps at every draw, axes ``(chain, draw)``. In lockstep a draw costs
    its slowest chain's steps; leaving chain ``c`` out saves the lockstep steps it alone made the others wait.
    ``fn`` returns ``(c, saved)``: the chain whose removal saves the most, and those saved steps as a fraction of
    the lockstep total. ``cases`` (default: a fixed table) lists step arrays whose answer is unique.
    """
    expect(callable(fn), "Pass your function itself, `costliest_chain`, not its answer.")
    for steps in cases if cases is not None else _WAIT_CASES:
        steps = np.asarray(steps)
        saved = _savings(steps)
        want = int(np.argmax(saved))
        share = saved[want] / lockstep_cost(steps)
        where = f"costliest_chain(steps) for steps={steps.tolist()}"
        out = call(fn, steps.copy(), what=where)
        expect(isinstance(out, (tuple, list)) and len(out) == 2,
               f"{where} returned {type(out).__name__}; return two things: (the chain's index, the share saved).")
        got_chain = as_float(out[0], where + "'s chain")
        got_share = as_float(out[1], where + "'s share")
        if got_chain != want:
            if got_chain == int(np.argmax(steps.sum(axis=1))):
                raise AssertionError(f"{where} named chain {got_chain:g}, the one with the most steps in all. The "
                                     "others wait for a chain only at the draws where it is the slowest, by how much "
                                     "it exceeds the next slowest: leave each chain out and compare the lockstep cost.")
            if got_chain == int(np.argmax(steps.max(axis=1))):
                raise AssertionError(f"{where} named chain {got_chain:g}, the one with the single longest draw. One "
                                     "long draw costs less than many moderately long ones that the others wait for.")
            raise AssertionError(f"{where} named chain {got_chain:g}; leaving out chain {want} saves the most "
                                 f"lockstep steps ({saved[want]} of {lockstep_cost(steps)}).")
        if np.isclose(got_share, share, rtol=1e-5):
            continue
        if np.isclose(got_share, saved[want], rtol=1e-5):
            raise AssertionError(f"{where} returned {got_share:g}, the steps saved; return them as a fraction of the "
                                 f"lockstep total, {lockstep_cost(steps)}.")
        if np.isclose(got_share, saved[want] / steps.sum(), rtol=1e-5):
            raise AssertionError(f"{where} returned {got_share:g}: that divides by all chains' steps. The share is of "
                                 "the lockstep total: the sum over draws of the slowest chain's steps.")
        raise AssertionError(f"{where}: the chain is right; the share {got_share:g} should be {share:.4f}.")
    passed("costliest chain")


# (lengths with axes (chain, draw), step cost, iteration cost): inputs that tell the plausible wrong formulas
# apart (the answer is computed from them by the reference formula below, in the check).
_MACHINE_CASES = [
    (np.array([[1, 3, 7], [7, 3, 1]]), 2e-6, 3e-6),
    (np.array([[15, 15, 15, 15]]), 1e-6, 1.5e-6),
    (np.array([[1, 20, 3], [3, 1, 3], [7, 7, 7]]), 4e-6, 5e-6),
    (np.array([[31, 63], [63, 31], [127, 1], [1, 127]]), 1e-5, 1.2e-5),
    (np.array([[5, 9, 2, 8, 1], [3, 3, 3, 3, 3], [1, 1, 1, 1, 20]]), 2e-6, 2.6e-6),
]


def _machine(lengths: np.ndarray, step: float, iteration: float) -> float:
    return float(lengths.max(axis=0).sum() * step / (lengths.sum(axis=1).max() * iteration))


def machine_speedup(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(lengths, step_cost, iteration_cost)``: the model's speedup of a state machine over lockstep.

    ``lengths`` are every chain's steps at every draw, axes ``(chain, draw)``. Lockstep pays, at each draw,
    the longest chain's steps at ``step_cost`` each; the state machine runs until the chain with the most
    steps in all is done, at ``iteration_cost`` an iteration. ``cases`` (default: a fixed table) lists
    ``(lengths, step_cost, iteration_cost)``.
    """
    expect(callable(fn), "Pass your function itself, `machine_speedup`, not the speedup it returns.")
    for lengths, step, iteration in cases if cases is not None else _MACHINE_CASES:
        lengths = np.asarray(lengths)
        want = _machine(lengths, step, iteration)
        where = f"machine_speedup(lengths, {step:g}, {iteration:g}) for lengths={lengths.tolist()}"
        got = as_float(call(fn, lengths.copy(), step, iteration, what=where), where)
        if np.isclose(got, want, rtol=1e-5):
            continue
        if np.isclose(got, 1 / want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the inverse: a speedup is lockstep's time over the "
                                 "state machine's, above 1 when the state machine is faster.")
        no_wait = float(lengths.max(axis=0).sum() * step / (lengths.sum(axis=1).mean() * iteration))
        if np.isclose(got, no_wait, rtol=1e-5) and not np.isclose(no_wait, want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: that divides by the chains' average total. The state "
                                 "machine's loop runs until the chain with the most steps in all has finished: the "
                                 "maximum over chains of their totals.")
        if np.isclose(got, _machine(lengths, 1.0, 1.0), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, a ratio of steps alone: an iteration of the state "
                                 "machine costs more than a lockstep step (its bookkeeping); weigh each count by "
                                 "its cost.")
        if np.isclose(got, _machine(lengths.T, step, iteration), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the axes are swapped. They are (chain, draw): a "
                                 "lockstep draw waits for the slowest chain, the maximum over axis 0.")
        raise AssertionError(f"{where} returned {got:.4f}; expected {want:.4f}.")
    passed("state machine speedup")


# (steps with axes (chain, draw), number of groups): in each, the plausible wrong formulas below give another answer.
_GROUP_CASES = [
    (np.array([[1, 9, 2], [8, 1, 2], [1, 1, 7], [3, 2, 1]]), 2),
    (np.array([[5, 1, 1, 2], [1, 5, 1, 2], [1, 1, 5, 9], [2, 2, 2, 2], [7, 1, 3, 1], [1, 1, 1, 1]]), 3),
    (np.array([[31, 3, 7], [1, 63, 3], [15, 1, 1], [3, 7, 127], [1, 1, 3], [7, 15, 1], [3, 3, 3], [1, 31, 15]]), 4),
    (np.array([[2, 6, 1, 4], [9, 1, 1, 1], [1, 1, 8, 2], [4, 4, 4, 4]]), 2),
    (np.array([[3, 1, 4], [1, 5, 9], [2, 6, 5], [3, 5, 8], [9, 7, 9], [3, 2, 3]]), 1),
]


def _grouped(steps: np.ndarray, num_groups: int) -> float:
    """All the steps over those paid for: each block's chains times its lockstep cost."""
    return float(steps.sum() / sum(b.shape[0] * lockstep_cost(b) for b in np.split(steps, num_groups)))


def grouped_efficiency(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(steps, num_groups)``: the lockstep efficiency of chains split into groups that each run in lockstep.

    ``steps`` are every chain's integration steps at every draw, axes ``(chain, draw)``. The chains are split into
    ``num_groups`` equal consecutive blocks (as ``shard_map`` splits them over devices); in each block every chain
    waits, at every draw, for the block's slowest. The efficiency is the share of the steps paid for that the chains
    need: all their steps over the sum, over blocks, of the block's chains times its lockstep steps. ``cases``
    (default: a fixed table) lists ``(steps, num_groups)``.
    """
    expect(callable(fn), "Pass your function itself, `grouped_efficiency`, not the efficiency it returns.")
    for steps, num_groups in cases if cases is not None else _GROUP_CASES:
        steps = np.asarray(steps)
        want = _grouped(steps, num_groups)
        where = f"grouped_efficiency(steps, {num_groups}) for steps={steps.tolist()}"
        got = as_float(call(fn, steps.copy(), num_groups, what=where), where)
        if np.isclose(got, want, rtol=1e-5):
            continue
        if np.isclose(got, 1 / want, rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the inverse: the efficiency is the steps the chains "
                                 "need over the steps paid for, at most 1.")
        if got > 1 + 1e-6:
            raise AssertionError(f"{where} returned {got:.4f}, above 1: in a block, the slowest chain's steps are "
                                 "paid by every chain of the block, so count them once per chain.")
        if num_groups > 1 and np.isclose(got, _grouped(steps, 1), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, the efficiency of all chains in one lockstep group: "
                                 f"each of the {num_groups} blocks waits only for its own slowest chain.")
        order = np.arange(steps.shape[0]).reshape(num_groups, -1).T.ravel()  # chain g, g + G, ... in block g
        if np.isclose(got, _grouped(steps[order], num_groups), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: that puts chains 0, {num_groups}, {2 * num_groups}, "
                                 "... in one block. The blocks are consecutive: the first chains in the first "
                                 "block, as shard_map splits an array.")
        if np.isclose(got, np.mean([b.mean(axis=0) / b.max(axis=0) for b in np.split(steps, num_groups)]), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}, a mean of each draw's ratio: a draw with long "
                                 "trajectories costs more than one with short ones. Divide the total steps by the "
                                 "total paid for.")
        if np.isclose(got, steps.mean() / steps.max(), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the single longest trajectory is not what each draw "
                                 "pays; each draw of a block pays that block's slowest chain at that draw.")
        if steps.shape[1] % num_groups == 0 and np.isclose(got, _grouped(steps.T, num_groups), rtol=1e-5):
            raise AssertionError(f"{where} returned {got:.4f}: the axes are swapped. They are (chain, draw): at a "
                                 "draw, a block waits for its slowest chain, the maximum over its chains (axis 0).")
        raise AssertionError(f"{where} returned {got:.4f}; expected {want:.4f}.")
    passed("grouped lockstep efficiency")


def _loops(structure: list[dict], primitive: str) -> list[dict]:
    """Every node of a traced program's structure whose primitive is ``primitive``, outermost first."""
    found = []
    for node in structure:
        if node["primitive"] == primitive:
            found.append(node)
        for inner in node.get("inner", []):
            found += _loops(inner, primitive)
    return found


def spread_chains(positions: Any, reference: Mapping[str, Any], spread: Callable[..., Any] | None = None,
                  inputs: tuple = (), num_devices: int = 2, num_draws: int | None = None) -> None:
    """Check draws of 8 chains run with ``shard_map``: same values as ``reference``, split over devices,
    and each device's chains run one after another (``lax.map``), not in lockstep.

    ``positions`` is the dict of ``(chain, draw)`` arrays the answer produced;
    ``reference`` the same chains run one after another; ``spread`` the function
    that produced ``positions`` from ``inputs`` (its program is traced, not run).
    """
    expect(
        isinstance(positions, Mapping) and set(positions) == set(reference),
        f"Expected the positions dict of the run, with keys {sorted(reference)}; got {type(positions).__name__}"
        + (f" with keys {sorted(positions)}" if isinstance(positions, Mapping) else "")
        + ". Return the draws (the first item a runner returns), not the states or the info.",
    )
    num_devices = whole_number("num_devices", num_devices, 1)
    for name, ref in reference.items():
        got = positions[name]
        ref = np.asarray(ref)
        expect(isinstance(got, jax.Array), f"positions[{name!r}] is a {type(got).__name__}, not a jax.Array straight from the run.")
        if got.shape == ref.shape[::-1]:
            raise AssertionError(
                f"positions[{name!r}] has shape {got.shape}: (draw, chain). Return (chain, draw), "
                f"{ref.shape}, like the reference (swap the axes of a scan over draws)."
            )
        expect(got.shape == ref.shape, f"positions[{name!r}] has shape {got.shape}; expected {ref.shape} (chain, draw).")
        expect(
            len(got.devices()) == num_devices,
            f"positions[{name!r}] lives on {len(got.devices())} device(s); the chains should be split over "
            f"{num_devices}. Use jax.shard_map over a mesh of {num_devices} devices.",
        )
        shard_shapes = {s.data.shape for s in got.addressable_shards}
        expect(
            shard_shapes == {(ref.shape[0] // num_devices,) + ref.shape[1:]},
            f"Each device holds a block of shape {sorted(shard_shapes)}; with the chains split over the mesh it "
            f"should hold {ref.shape[0] // num_devices} chains, shape {(ref.shape[0] // num_devices,) + ref.shape[1:]}. "
            "Use in_specs/out_specs P('chains').",
        )
        if not np.allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6):
            raise AssertionError(
                f"positions[{name!r}] differ from the chains run one after another. Give chain c the key "
                "keys[c] and its state states[c], and inside each device run the chain loop on each chain."
            )
    if spread is not None:
        expect(callable(spread), "`spread` should be the function you ran (spread(keys, states)), not its result.")
        expect(
            getattr(spread, "__module__", None) != "parallel_mcmc.sample.chains",
            "`spread` is one of the book's runners (parallel_mcmc.sample); the exercise is to write the shard_map "
            "and the loop over each device's chains yourself.",
        )
        program = traced_program(spread, tuple(inputs), "spread(keys, states)")
        num_chains = next(iter(reference.values())).shape[0]
        draws = num_draws if num_draws is not None else next(iter(reference.values())).shape[1]
        per_device = num_chains // num_devices
        expect(
            _loops(program, "shard_map"),
            "`spread` does not use jax.shard_map; write the per-device function and wrap it with "
            "jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...).",
        )
        scans = _loops(program, "scan")
        over_chains = [s for s in scans if s.get("length") == per_device
                       and any(t.get("length") == draws for inner in s.get("inner", []) for t in _loops(inner, "scan"))]
        expect(
            bool(over_chains),
            f"Your chains run in lockstep: no device loops over its {per_device} chains one after another "
            f"(a scan of length {per_device} around the {draws} draws); the {per_device} chains advance together, "
            "as with vmap, and wait for the slowest at every draw. Run each device's chains with "
            "jax.lax.map(chain_loop, ...) inside shard_map.",
        )
    passed("8 chains over 2 devices, one after another on each device")


def faster_method(choice: Any, timings: Mapping[str, Any]) -> None:
    """Check ``choice`` against ``timings``: a dict of two :class:`~parallel_mcmc.measure.Timing` by method name."""
    expect(
        isinstance(timings, Mapping) and len(timings) == 2,
        "timings must be a dict with exactly two entries, one Timing per method you compared.",
    )
    for name, t in timings.items():
        expect(
            isinstance(t, Timing),
            f"timings[{name!r}] is a {type(t).__name__}; measure it with time_call (or timed) so compilation is left out.",
        )
        expect(len(t.times) >= 3, f"timings[{name!r}] has {len(t.times)} repeat(s); take at least 3 and compare medians.")
    expect(
        isinstance(choice, str) and choice in timings,
        f"choice must be one of the names in timings, {sorted(timings)}; got {choice!r}.",
    )
    fastest = min(timings, key=lambda n: timings[n].median)
    expect(
        choice == fastest,
        f"You chose {choice!r}, but your own measurements say {fastest!r} is faster "
        f"({timings[fastest].median:.3f} s against {timings[choice].median:.3f} s, medians).",
    )
    passed(f"faster method ({choice})")


# ((one chain's bulk ESS per draw, chains, largest R-hat, target ESS, margin, warm-up seconds, seconds a draw of every
# chain), the answer: (draws per chain, seconds to the target), or None where R-hat is 1.01 or more). Written out as
# data; in each, margin x target / (ESS per chain-draw x chains) is far from a whole number, and the mistakes named
# below give other draws or times.
_TARGET_CASES = [
    ((0.31, 4, 1.004, 1000, 1.2, 0.35, 2.1e-4), (968, 0.55328)),
    ((0.052, 64, 1.006, 400, 1.5, 2.4, 9e-4), (181, 2.5629)),
    ((0.87, 2, 1.0009, 2000, 1.1, 0.05, 3e-5), (1265, 0.08795)),
    ((0.013, 256, 1.002, 1000, 1.25, 0.9, 4e-3), (376, 2.404)),
    ((0.42, 8, 1.01, 1000, 1.2, 0.6, 1e-3), None),
    ((0.0021, 128, 1.27, 500, 1.2, 1.5, 2e-3), None),
    ((0.6, 1, 1.0, 800, 1.3, 0.2, 5e-5), (1734, 0.2867)),
]


def _fail_naming_the_slip(got: float, want: float, slips: Sequence[tuple[float, str]], rtol: float, gave: str,
                          right: str, otherwise: str) -> None:
    """Fail with the first mistake in ``slips`` (``(what it gives, its name)``) that gives ``got`` (unless it happens
    to give the right answer ``want`` too): "``gave``, the mistake. ``right``"; with "``gave``; ``otherwise``" where
    none does."""
    slip = next((name for value, name in slips
                 if np.isclose(got, value, rtol=rtol) and not np.isclose(value, want, rtol=1e-9)), None)
    raise AssertionError(f"{gave}, {slip}. {right}" if slip else f"{gave}; {otherwise}")


def time_to_target(fn: Callable[..., Any], cases: Sequence[tuple[tuple, Any]] | None = None) -> None:
    """Check ``fn(ess_per_chain_draw, num_chains, max_rhat, target_ess, margin, warmup_seconds, seconds_per_draw)``.

    From a pilot run: ``ess_per_chain_draw`` is its smallest bulk ESS (of all its chains together) over all its
    draws (chains x draws per chain), ``max_rhat`` its largest R-hat; ``seconds_per_draw`` is the time of one draw
    of all ``num_chains`` chains (they advance together) and ``warmup_seconds`` the warm-up's time. ``fn`` returns
    ``(draws, seconds)``: the fewest whole draws per chain that give all the chains ``margin * target_ess`` at the
    pilot's rate, and the warm-up plus those draws; or ``None`` where ``max_rhat`` is 1.01 or more (the chains
    disagree and their ESS means nothing). ``cases`` (default: a fixed table) lists ``(arguments, answer)``.
    """
    expect(callable(fn), "Pass your function itself, `time_to_target`, not the draws and time it returns.")
    for args, want in cases if cases is not None else _TARGET_CASES:
        ess, chains, rhat, target, margin, warmup, per_draw = args
        where = f"time_to_target({', '.join(f'{a:g}' for a in args)})"
        try:
            got = call(fn, *args, what=where)
        except AssertionError as err:
            if want is None:
                raise AssertionError(f"{err}\nWhere R-hat is 1.01 or more, return None rather than raise.") from None
            raise
        if want is None:
            expect(got is None, f"{where} returned {got!r}, but the pilot's R-hat is {rhat:g}, 1.01 or more: its "
                                "chains disagree, and an ESS counted from them means nothing. Return None.")
            continue
        if got is None:
            raise AssertionError(f"{where} returned None, but the pilot's R-hat, {rhat:g}, is below 1.01: its chains "
                                 "agree. Refuse only at 1.01 or more.")
        expect(isinstance(got, (tuple, list)) and len(got) == 2,
               f"{where} returned {type(got).__name__}; return two things: (draws per chain, seconds to the target).")
        draws, seconds = as_float(got[0], where + "'s draws"), as_float(got[1], where + "'s seconds")
        want_draws, want_seconds = int(want[0]), float(want[1])
        if draws != want_draws:
            exact = margin * target / (ess * chains)
            slips = [  # (what a mistake gives, its name)
                (exact, "not rounded: a chain cannot take part of a draw; round up"),
                (math.floor(exact), "rounded down: that many draws fall short of the target; round up"),
                (round(exact), "rounded to the nearest: that can fall short of the target; round up"),
                (math.ceil(margin * target / ess), f"the draws of all {chains} chains together: the ESS per "
                 f"chain-draw counts one chain, and {chains} chains add theirs at every draw; divide by them"),
                (math.ceil(target / (ess * chains)), "without the margin: the margin multiplies the target ESS"),
                (math.ceil((1 + margin) * target / (ess * chains)),
                 f"with {1 + margin:g} times the target: the margin is a factor, {margin:g} times the target"),
                (math.ceil(target / (margin * ess * chains)),
                 "with the target divided by the margin: the margin asks for more ESS, not less"),
            ]
            _fail_naming_the_slip(draws, want_draws, slips, 1e-6, f"{where} gave {draws:g} draws per chain",
                                  f"The chains need {want_draws}.",
                                  f"the chains need {want_draws}: margin x target over the ESS that all the chains "
                                  "make in a draw, rounded up.")
        if np.isclose(seconds, want_seconds, rtol=1e-5):
            continue
        slips = [
            (per_draw * want_draws, "the draws alone: every chain pays its warm-up before its first draw; add it"),
            ((warmup + per_draw * want_draws) * margin, "with the margin applied to the time too; it belongs on the "
                                                        "ESS alone, which sets the draws"),
            (warmup + per_draw * want_draws * chains, f"each draw paid {chains} times: seconds_per_draw is already "
                                                      f"the time of a draw of all {chains} chains"),
            (warmup + per_draw * margin * target / (ess * chains), "from the draws before rounding up; the chains "
                                                                   "run whole draws"),
        ]
        _fail_naming_the_slip(seconds, want_seconds, slips, 1e-5, f"{where} gave {seconds:g} s",
                              f"The time to the target is {want_seconds:g} s.",
                              f"the draws are right, but the time should be {want_seconds:g} s: the warm-up and "
                              "the draws at their time each.")
    passed("time to target")
