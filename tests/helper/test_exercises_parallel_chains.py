"""Checks of the part "Parallel chains": right answers pass, plausible wrong ones are rejected."""

from __future__ import annotations

import blackjax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from parallel_mcmc import sample as ch
from parallel_mcmc.exercises import parallel_chains as check
from parallel_mcmc.models import normal
from parallel_mcmc.measure import expected_lockstep_steps
from parallel_mcmc.measure.timing import Timing

# --- the chain the others wait for --------------------------------------------------

def _costliest(steps):
    steps = np.asarray(steps)
    full = steps.max(axis=0).sum()
    saved = [full - np.delete(steps, c, axis=0).max(axis=0).sum() for c in range(steps.shape[0])]
    return int(np.argmax(saved)), saved[int(np.argmax(saved))] / full


def test_costliest_chain_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.costliest_chain(_costliest)
    check.costliest_chain(lambda s: (jnp.int32(_costliest(s)[0]), jnp.float32(_costliest(s)[1])))
    assert capsys.readouterr().out.count("costliest chain: correct") == 2


def test_costliest_chain_on_a_given_case():
    steps = np.array([[1, 5, 1], [2, 2, 2], [1, 1, 1]])  # lockstep 2 + 5 + 2 = 9; without chain 0: 6
    check.costliest_chain(_costliest, cases=[steps])
    with pytest.raises(AssertionError, match=r"should be 0\.3333"):
        check.costliest_chain(lambda s: (0, 0.5), cases=[steps])


def test_costliest_chain_names_the_learners_own_exception():
    def broken(steps):
        raise KeyError("chain 3")

    with pytest.raises(AssertionError, match=r"raised KeyError: 'chain 3'"):
        check.costliest_chain(broken)


@pytest.mark.parametrize("wrong, message", [
    (lambda s: (int(np.argmax(s.sum(axis=1))), 0.1), "most steps in all"),
    (lambda s: (int(np.argmax(s.max(axis=1))), 0.1), "single longest draw"),
    (lambda s: (_costliest(s)[0], _costliest(s)[1] * s.max(axis=0).sum()), "steps saved"),
    (lambda s: (_costliest(s)[0], _costliest(s)[1] * s.max(axis=0).sum() / s.sum()), "all chains' steps"),
    (lambda s: ((_costliest(s)[0] + 1) % s.shape[0], _costliest(s)[1]),
     "numbered from 0|saves the most|most steps|single longest"),
    (lambda s: (_costliest(s)[0] + 1, _costliest(s)[1]), "numbered from 0"),
    (lambda s: _costliest(s[:-1]) if _costliest(s)[0] == s.shape[0] - 1 else _costliest(s),  # range(num_chains - 1)
     r"the best of chains 0 to 3: leaving out the last chain, 4, saves more .* range\(num_chains\)"),
    (lambda s: (_costliest(s)[0], 100 * _costliest(s)[1]), "a percentage"),
])
def test_costliest_chain_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.costliest_chain(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda s: _costliest(s)[0], r"returned \d+ \(int\); return two things"),
    (lambda s: {"chain": _costliest(s)[0], "share": _costliest(s)[1]}, r"\(dict\); return two things"),
    (lambda s: None, r"returned None \(NoneType\); return two things"),
    (lambda s: (_costliest(s)[0], [_costliest(s)[1]]), r"'s share returned \[.*\] \(list\); it should return one number"),
    ((3, 0.1), r"function itself, `costliest_chain`, not its answer \(got tuple\)"),
])
def test_costliest_chain_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.costliest_chain(wrong)


# --- 8 chains over 2 devices -------------------------------------------------------

NUM_DRAWS = 4


@pytest.fixture(scope="module")
def setup():
    nuts = blackjax.nuts(normal.logdensity, step_size=0.05, inverse_mass_matrix=jnp.array([0.4, 0.0005]))
    states = jax.vmap(nuts.init)(normal.spread_positions(8, loc_range=(8.0, 12.0), log_scale_range=(2.9, 3.1)))
    keys = jax.random.split(jax.random.key(11), 8)
    mesh = jax.make_mesh((2,), ("chains",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    reference, _ = ch.sequential_runner(nuts.step, NUM_DRAWS)(keys, states)
    return nuts, keys, states, mesh, reference


def test_spread_accepts_shard_map(setup, capsys):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    positions, _ = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh)(*placed)
    check.spread_chains(positions, reference)
    assert "correct" in capsys.readouterr().out


def _by_hand(nuts, mesh, inner):
    """The exercise's shard_map written out, each device's chains run with ``inner`` (lax.map or vmap)."""
    def chain_loop(key, state):
        def one_draw(state, k):
            state, _ = nuts.step(k, state)
            return state, state.position

        return jax.lax.scan(one_draw, state, jax.random.split(key, NUM_DRAWS))[1]

    def block(keys, states):
        if inner == "map":
            return jax.lax.map(lambda ks: chain_loop(*ks), (keys, states))
        return jax.vmap(chain_loop)(keys, states)

    return jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P("chains"), P("chains")), out_specs=P("chains"),
                                 check_vma=False))


def test_spread_looks_at_how_the_chains_run(setup, capsys):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    independent = _by_hand(nuts, mesh, "map")
    check.spread_chains(independent(*placed), reference, independent, placed)
    assert "one after another" in capsys.readouterr().out
    lockstep = _by_hand(nuts, mesh, "vmap")
    same_draws = lockstep(*placed)  # lockstep gives the same draws: only the program tells them apart
    with pytest.raises(AssertionError, match="run in lockstep"):
        check.spread_chains(same_draws, reference, lockstep, placed)


def test_spread_rejects_the_books_runner(setup):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    runner = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh, inner="map")
    positions, _ = runner(*placed)
    with pytest.raises(AssertionError, match="one of the book's runners"):
        check.spread_chains(positions, reference, runner, placed)


def test_spread_rejects_the_books_runner_wrapped_in_the_learners_function(setup):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    runner = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh, inner="map")
    positions, _ = runner(*placed)  # run once: the wrapper's trace below comes from JAX's cache

    def spread(keys, states):
        return runner(keys, states)[0]

    with pytest.raises(AssertionError, match=r"runs one of the book's runners .* inside your function"):
        check.spread_chains(positions, reference, spread, placed)
    with pytest.raises(AssertionError, match="one of the book's runners"):
        check.spread_chains(positions, reference, jax.jit(lambda k, s: spread(k, s)), placed)
    per_device = ch.sequential_runner(nuts.step, NUM_DRAWS)  # the book's loop over a device's chains, in the learner's shard_map
    own_shard_map = jax.jit(jax.shard_map(lambda k, s: per_device(k, s)[0], mesh=mesh, in_specs=(P("chains"), P("chains")),
                                          out_specs=P("chains"), check_vma=False))
    with pytest.raises(AssertionError, match="one of the book's runners"):
        check.spread_chains(own_shard_map(*placed), reference, own_shard_map, placed)


def test_spread_refuses_answers_of_the_wrong_type(setup):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    spread = _by_hand(nuts, mesh, "map")
    positions = spread(*placed)
    with pytest.raises(TypeError, match=r"not its result \(got dict\)"):
        check.spread_chains(positions, reference, positions, placed)
    with pytest.raises(TypeError, match=r"positions\['loc'\] is a ndarray, not a jax.Array"):
        check.spread_chains({k: np.asarray(v) for k, v in positions.items()}, reference)
    with pytest.raises(TypeError, match="positions dict.*got NoneType"):
        check.spread_chains(None, reference)


def test_spread_names_a_failure_while_tracing(setup):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((keys, states), NamedSharding(mesh, P("chains")))
    positions, _ = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh)(*placed)

    def concrete(keys, states):
        if keys.shape[0] > float(jnp.sum(states.position["loc"])):  # a Python float() of a tracer
            return positions
        return positions

    with pytest.raises(AssertionError, match="failed while JAX traced it: ConcretizationTypeError"):
        check.spread_chains(positions, reference, jax.jit(concrete), placed)

    def own_bug(keys, states):
        raise RuntimeError("forgot the mesh")

    with pytest.raises(AssertionError, match="raised RuntimeError: forgot the mesh"):
        check.spread_chains(positions, reference, own_bug, placed)


def test_spread_rejects_one_device(setup):
    nuts, keys, states, mesh, reference = setup
    positions, _ = ch.vmap_runner(nuts.step, NUM_DRAWS)(keys, states)
    with pytest.raises(AssertionError, match="1 device"):
        check.spread_chains(positions, reference)


def test_spread_rejects_replicated_draws(setup):
    *_, mesh, reference = setup
    replicated = jax.device_put({k: jnp.asarray(v) for k, v in reference.items()}, NamedSharding(mesh, P()))
    with pytest.raises(AssertionError, match="block of shape"):
        check.spread_chains(replicated, reference)


def test_spread_rejects_other_keys(setup):
    nuts, keys, states, mesh, reference = setup
    placed = jax.device_put((jax.random.split(jax.random.key(99), 8), states), NamedSharding(mesh, P("chains")))
    positions, _ = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh)(*placed)
    with pytest.raises(AssertionError, match="differ"):
        check.spread_chains(positions, reference)


def test_spread_rejects_draw_chain_axes_and_wrong_objects(setup):
    *_, mesh, reference = setup
    transposed = {k: jnp.asarray(v).T for k, v in reference.items()}
    with pytest.raises(AssertionError, match=r"\(draw, chain\)"):
        check.spread_chains(transposed, reference)
    with pytest.raises(TypeError, match="positions dict.*got tuple"):
        check.spread_chains((reference, None), reference)


# --- the faster method -------------------------------------------------------------

def _timing(label, seconds):
    return Timing(label=label, times=tuple(seconds), first_call=1.0)


def test_faster_accepts_the_measured_choice(capsys):
    timings = {"vmap": _timing("vmap", [1.0, 1.1, 0.9]), "shard_map": _timing("shard_map", [0.6, 0.5, 0.7])}
    check.faster_method("shard_map", timings)
    assert "shard_map" in capsys.readouterr().out


def test_faster_rejects_the_slower_choice():
    timings = {"vmap": _timing("vmap", [1.0, 1.1, 0.9]), "shard_map": _timing("shard_map", [0.6, 0.5, 0.7])}
    with pytest.raises(AssertionError, match="your own measurements say 'shard_map'"):
        check.faster_method("vmap", timings)


def test_faster_rejects_a_choice_by_another_statistic():
    """Medians decide; the best single time or the first call (compilation included) can point the other way."""
    timings = {"vmap": Timing(label="vmap", times=(0.2, 1.0, 1.1), first_call=0.5),
               "shard_map": Timing(label="shard_map", times=(0.6, 0.5, 0.7), first_call=3.0)}
    by_min = min(timings, key=lambda n: min(timings[n].times))
    by_first_call = min(timings, key=lambda n: timings[n].first_call)
    assert by_min == by_first_call == "vmap"
    with pytest.raises(AssertionError, match=r"your own measurements say 'shard_map' is faster .*medians"):
        check.faster_method(by_min, timings)


def test_faster_refuses_answers_of_the_wrong_type():
    timings = {"vmap": _timing("vmap", [1.0, 1.1, 0.9]), "shard_map": _timing("shard_map", [0.6, 0.5, 0.7])}
    with pytest.raises(TypeError, match=r"a string, one of \['shard_map', 'vmap'\]; got Timing \(a Timing: pass its name"):
        check.faster_method(timings["shard_map"], timings)
    with pytest.raises(TypeError, match="got NoneType"):
        check.faster_method(None, timings)
    with pytest.raises(TypeError, match="timings must be a dict .*got list"):
        check.faster_method("vmap", list(timings.values()))


def test_faster_rejects_unmeasured_or_thin_evidence():
    with pytest.raises(TypeError, match="time_call"):
        check.faster_method("a", {"a": 0.5, "b": 1.0})
    with pytest.raises(AssertionError, match="at least 3"):
        check.faster_method("a", {"a": _timing("a", [0.5]), "b": _timing("b", [1.0])})
    with pytest.raises(AssertionError, match="exactly two"):
        check.faster_method("a", {"a": _timing("a", [0.5, 0.5, 0.5])})
    with pytest.raises(AssertionError, match="one of the names"):
        check.faster_method("gpu", {"a": _timing("a", [1, 1, 1]), "b": _timing("b", [2, 2, 2])})


# --- lockstep efficiency of chains in groups -----------------------------------------

def _grouped(steps, num_groups):
    blocks = np.split(np.asarray(steps), num_groups)
    return np.sum(steps) / sum(b.shape[0] * b.max(axis=0).sum() for b in blocks)


def test_grouped_efficiency_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.grouped_efficiency(_grouped)
    check.grouped_efficiency(lambda s, g: jnp.sum(s) / sum(b.shape[0] * jnp.max(b, axis=0).sum()
                                                           for b in jnp.split(jnp.asarray(s), g)))
    assert capsys.readouterr().out.count("grouped lockstep efficiency: correct") == 2


def test_grouped_efficiency_on_a_given_case():
    """Blocks [[1, 9], [8, 1]] and [[1, 1], [3, 2]]: they pay 2 * (8 + 9) + 2 * (3 + 2) = 44 for 26 steps."""
    steps = np.array([[1, 9], [8, 1], [1, 1], [3, 2]])
    check.grouped_efficiency(_grouped, cases=[(steps, 2)])
    assert _grouped(steps, 2) == pytest.approx(26 / 44)
    assert _grouped(steps, 4) == 1.0 and _grouped(steps, 1) == pytest.approx(26 / (4 * 17))


def _interleaved(s, g):
    return _grouped(s[np.arange(s.shape[0]).reshape(g, -1).T.ravel()], g)


@pytest.mark.parametrize("wrong, message", [
    (lambda s, g: 1 / _grouped(s, g), "inverse"),
    (lambda s, g: s.sum() / sum(b.max(axis=0).sum() for b in np.split(s, g)), "above 1"),
    (lambda s, g: _grouped(s, 1), "one lockstep group"),
    (_interleaved, "consecutive"),
    (lambda s, g: np.mean([b.mean(axis=0) / b.max(axis=0) for b in np.split(s, g)]), "each draw's ratio"),
    (lambda s, g: s.mean() / s.max(), "single longest trajectory"),
    (lambda s, g: _grouped(s.T, g) if s.shape[1] % g == 0 else _grouped(s, g), "axes are swapped"),
    (lambda s, g: 0.5, "expected"),
])
def test_grouped_efficiency_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.grouped_efficiency(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda s, g: [b.sum() / (b.shape[0] * b.max(axis=0).sum()) for b in np.split(s, g)],
     r"\(list\); it should return one number"),
    (lambda s, g: None, r"returned None \(NoneType\)"),
    (0.5, r"function itself.*\(got float\)"),
])
def test_grouped_efficiency_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.grouped_efficiency(wrong)


# --- state machine speedup -------------------------------------------------------

def _machine(L, step, iteration):
    return L.max(axis=0).sum() * step / (L.sum(axis=1).max() * iteration)


def test_machine_speedup_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.machine_speedup(_machine)
    check.machine_speedup(lambda L, s, i: jnp.max(L, axis=0).sum() * s / (jnp.sum(L, axis=1).max() * i))
    assert capsys.readouterr().out.count("state machine speedup: correct") == 2


def test_machine_speedup_on_a_given_case():
    """Draws of 1 and 7 steps: lockstep pays 7 + 3 + 7 = 17 steps, the state machine 11, at 2 and 3 µs."""
    L = np.array([[1, 3, 7], [7, 3, 1]])
    check.machine_speedup(_machine, cases=[(L, 2e-6, 3e-6)])
    assert _machine(L, 2e-6, 3e-6) == pytest.approx(17 * 2 / (11 * 3))


@pytest.mark.parametrize("wrong, message", [
    (lambda L, s, i: 1 / _machine(L, s, i), "inverse"),
    (lambda L, s, i: L.max(axis=0).sum() * s / (L.sum(axis=1).mean() * i), "average total"),
    (lambda L, s, i: _machine(L, 1.0, 1.0), "steps alone"),
    (lambda L, s, i: _machine(L.T, s, i), "axes are swapped"),
    (lambda L, s, i: 2.0, "expected"),
])
def test_machine_speedup_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.machine_speedup(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda L, s, i: L.max(axis=0) * s / (L.sum(axis=1).max() * i), r"\(ndarray\); it should return one number"),
    (lambda L, s, i: None, r"returned None \(NoneType\)"),
    (1.5, r"function itself.*\(got float\)"),
])
def test_machine_speedup_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.machine_speedup(wrong)


# --- time to a target ------------------------------------------------------------

def _to_target(ess, chains, rhat, target, margin, warmup, per_draw):
    if rhat >= 1.01:
        return None
    draws = int(np.ceil(margin * target / (ess * chains)))
    return draws, warmup + per_draw * draws


def _answer(draws, seconds):
    """A wrong answer that still refuses where R-hat is 1.01 or more, as the right one does."""
    def answer(ess, chains, rhat, target, margin, warmup, per_draw):
        if rhat >= 1.01:
            return None
        return draws(ess, chains, target, margin), seconds(ess, chains, target, margin, warmup, per_draw)

    return answer


def _right_draws(ess, chains, target, margin):
    return int(np.ceil(margin * target / (ess * chains)))


def test_time_to_target_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.time_to_target(_to_target)
    check.time_to_target(lambda e, c, r, t, m, w, s: None if r >= 1.01 else (
        jnp.ceil(jnp.float32(m * t) / (jnp.float32(e) * c)), jnp.float32(w) + jnp.float32(s) * jnp.ceil(
            jnp.float32(m * t) / (jnp.float32(e) * c))))
    assert capsys.readouterr().out.count("time to target: correct") == 2


def test_time_to_target_on_a_given_case():
    """4 chains of 0.3 ESS a draw each make 1.2 a draw: 1.25 x 1000 / 1.2 = 1041.7, so 1042 draws; 2 s + 1.042 s."""
    case = ((0.3, 4, 1.0, 1000, 1.25, 2.0, 1e-3), (1042, 3.042))
    check.time_to_target(_to_target, cases=[case])
    assert _to_target(*case[0]) == pytest.approx(case[1])
    with pytest.raises(AssertionError, match="should be 3.042 s"):
        check.time_to_target(lambda *a: (1042, 3.5), cases=[case])


@pytest.mark.parametrize("wrong, message", [
    (_answer(lambda e, c, t, m: m * t / (e * c), lambda e, c, t, m, w, s: w + s * m * t / (e * c)), "not rounded"),
    (_answer(lambda e, c, t, m: int(np.floor(m * t / (e * c))), lambda e, c, t, m, w, s: 0.0), "rounded down"),
    (_answer(lambda e, c, t, m: int(np.ceil(m * t / e)), lambda e, c, t, m, w, s: 0.0), "all .* chains together"),
    (_answer(lambda e, c, t, m: int(np.ceil(t / (e * c))), lambda e, c, t, m, w, s: 0.0), "without the margin"),
    (_answer(lambda e, c, t, m: int(np.ceil((1 + m) * t / (e * c))), lambda e, c, t, m, w, s: 0.0),
     "times the target"),
    (_answer(lambda e, c, t, m: int(np.ceil(t / (m * e * c))), lambda e, c, t, m, w, s: 0.0), "divided by the margin"),
    (_answer(_right_draws, lambda e, c, t, m, w, s: s * _right_draws(e, c, t, m)), "warm-up"),
    (_answer(_right_draws, lambda e, c, t, m, w, s: (w + s * _right_draws(e, c, t, m)) * m), "margin applied to the time"),
    (_answer(_right_draws, lambda e, c, t, m, w, s: w + s * c * _right_draws(e, c, t, m)), "each draw paid"),
    (_answer(_right_draws, lambda e, c, t, m, w, s: w + s * m * t / (e * c)), "before rounding up"),
    (_answer(_right_draws, lambda e, c, t, m, w, s: 2 * w), "should be"),
    (_answer(lambda e, c, t, m: 7, lambda e, c, t, m, w, s: 0.0), "the chains need"),
    (lambda e, c, r, t, m, w, s: _to_target(e, c, 1.0, t, m, w, s), "Return None"),
    (lambda e, c, r, t, m, w, s: None if r > 1.01 else _to_target(e, c, 1.0, t, m, w, s), "Return None"),
    (lambda e, c, r, t, m, w, s: None, "is below 1.01"),
    (lambda e, c, r, t, m, w, s: _to_target(e, c, r, t, m, w, s) or [][0], "rather than raise"),
])
def test_time_to_target_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.time_to_target(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda e, c, r, t, m, w, s: _right_draws(e, c, t, m), r"returned 968 \(int\); return two things"),
    (lambda e, c, r, t, m, w, s: None if r >= 1.01 else dict(zip(("draws", "seconds"), _to_target(e, c, r, t, m, w, s))),
     r"\(dict\); return two things"),
    (lambda e, c, r, t, m, w, s: None if r >= 1.01 else (str(_right_draws(e, c, t, m)), 0.5),
     r"'s draws returned '968' \(str\); it should return one number"),
    ((968, 0.55), r"function itself.*\(got tuple\)"),
])
def test_time_to_target_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.time_to_target(wrong)


# --- gradients paid per effective draw (MCLMC against NUTS in lockstep) ---------------

def _per_draw(steps, ess, per_step):
    steps = np.asarray(steps)
    return steps.shape[0] * steps.max(axis=0).sum() * per_step / ess


def test_gradients_per_draw_accepts_the_solution_in_numpy_and_jnp(capsys):
    check.gradients_per_draw(_per_draw)
    check.gradients_per_draw(lambda s, e, g: jnp.float32(jnp.asarray(s).shape[0] * jnp.max(jnp.asarray(s), axis=0).sum()
                                                         * g / e))
    assert capsys.readouterr().out.count("gradients per effective draw: correct") == 2


def test_gradients_per_draw_on_a_given_case():
    """Two chains, draws of [1, 4] and [3, 2] steps: lockstep pays 2 * (3 + 4) = 14 steps, 28 gradients at two a
    step, over 7 effective draws: 4."""
    steps = np.array([[1, 4], [3, 2]])
    check.gradients_per_draw(_per_draw, cases=[(steps, 7.0, 2)])
    assert _per_draw(steps, 7.0, 2) == 4.0
    with pytest.raises(AssertionError, match="steps the chains need"):
        check.gradients_per_draw(lambda s, e, g: s.sum() * g / e, cases=[(steps, 7.0, 2)])


@pytest.mark.parametrize("wrong, message", [
    (lambda s, e, g: s.sum() * g / e, "steps the chains need, 43"),
    (lambda s, e, g: s.max(axis=0).sum() * g / e, "counts the lockstep steps once"),
    (lambda s, e, g: _per_draw(s, e, 1), "counts one gradient a step; each step takes 2"),
    (lambda s, e, g: e / (s.shape[0] * s.max(axis=0).sum() * g), "the inverse"),
    (lambda s, e, g: s.size * s.max() * g / e, "single longest trajectory"),
    (lambda s, e, g: s.shape[1] * s.T.max(axis=0).sum() * g / e, "axes are swapped"),
    (lambda s, e, g: s.shape[0] * np.median(s, axis=0).sum() * g / e, "the answer is wrong here"),
    (lambda s, e, g: 1.0, "the answer is wrong here"),
])
def test_gradients_per_draw_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.gradients_per_draw(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda s, e, g: None, r"returned None \(NoneType\); it should return one number"),
    (lambda s, e, g: (_per_draw(s, e, g), e), r"\(tuple\); it should return one number"),
    (lambda s, e, g: {"per draw": _per_draw(s, e, g)}, r"\(dict\); it should return one number"),
    (14.0, r"function itself.*\(got float\)"),
])
def test_gradients_per_draw_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.gradients_per_draw(wrong)


def test_gradients_per_draw_names_the_learners_own_exception():
    def broken(steps, ess, per_step):
        raise ValueError("no steps")

    with pytest.raises(AssertionError, match="ValueError: no steps"):
        check.gradients_per_draw(broken)


# --- the break-even chain count of a state machine (elliptical slice sampling) ---------

def _break_even(evaluations, ratio):
    evaluations = np.asarray(evaluations)
    if ratio * evaluations.mean() >= evaluations.max():
        return None
    c = 1
    while expected_lockstep_steps(evaluations, c) <= ratio * evaluations.mean():
        c += 1
    return c


def _expected_max_left(evaluations, c):  # F(k) read as P(X < k)
    levels = np.arange(evaluations.max() + 1)
    return np.sum(1 - (np.searchsorted(np.sort(evaluations), levels, side="left") / evaluations.size) ** c)


def test_break_even_chains_accepts_the_solution_by_hand_and_through_the_helper(capsys):
    def by_hand(evaluations, ratio):  # E[max of C] = sum over k of 1 - F(k)^C, searched upwards
        e = np.sort(np.asarray(evaluations))
        if ratio * e.mean() >= e[-1]:
            return None
        f = np.searchsorted(e, np.arange(e[-1] + 1), side="right") / e.size
        return next(c for c in range(1, 10**6) if np.sum(1 - f ** c) > ratio * e.mean())

    check.break_even_chains(_break_even)
    check.break_even_chains(by_hand)
    check.break_even_chains(lambda e, r: None if _break_even(e, r) is None else np.int64(_break_even(e, r)))
    assert capsys.readouterr().out.count("break-even chain count: correct") == 3


def test_break_even_chains_on_a_given_case():
    """Draws of 1, 1, 1 and 3 evaluations, a mean of 1.5: with one chain lockstep pays 1.5 a draw, with two
    1 + 2 (1 - 0.75^2) = 1.875. At 1.2 times the cost the state machine pays 1.8: two chains break even."""
    evaluations = np.array([1, 1, 1, 3])
    check.break_even_chains(_break_even, cases=[(evaluations, 1.2)])
    assert _break_even(evaluations, 1.2) == 2 and _break_even(evaluations, 2.5) is None
    with pytest.raises(AssertionError, match="does not yet pay"):
        check.break_even_chains(lambda e, r: 1, cases=[(evaluations, 1.2)])


@pytest.mark.parametrize("wrong, message", [
    (lambda e, r: None if _break_even(e, r) is None else _break_even(e, r) - 1, "does not yet pay. Return the fewest"),
    (lambda e, r: next(c for c in range(1, 10**4) if expected_lockstep_steps(e, c) > r) if r < e.max() else None,
     r"compares lockstep's evaluations per draw with 1.6 itself"),
    (lambda e, r: _break_even(e, r) or 4096, "never pays here"),
    (lambda e, r: None, "returned None, but lockstep's expected maximum passes"),
    (lambda e, r: next(c for c in range(1, 10**4) if _expected_max_left(e, c) > r * e.mean())
     if r * e.mean() < e.max() else None, r"reads F\(k\) as P\(X < k\)"),
    (lambda e, r: None if _break_even(e, r) is None else _break_even(e, r) + 3, "the answer is wrong here: expected 6"),
])
def test_break_even_chains_rejects_plausible_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.break_even_chains(wrong)


@pytest.mark.parametrize("wrong, message", [
    (lambda e, r: float(_break_even(e, r) or 0) + 0.5, r"\(float\); it should return a whole number of chains"),
    (lambda e, r: True, r"\(bool\); it should return a whole number"),
    (lambda e, r: [_break_even(e, r)], r"\(list\); it should return a whole number"),
    (6, r"function itself.*\(got int\)"),
])
def test_break_even_chains_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.break_even_chains(wrong)


def test_break_even_chains_names_the_learners_own_exception():
    def broken(evaluations, ratio):
        raise ZeroDivisionError("no chains")

    with pytest.raises(AssertionError, match="ZeroDivisionError: no chains"):
        check.break_even_chains(broken)
