"""parallel_mcmc.sample.NUTSMachine and EllipticalSlice: lockstep and state machine make the same draws, the loops'
lengths follow the cost formulas, the draws follow their targets, and NUTS's cap, divergences and U-turns behave."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from parallel_mcmc.measure import lockstep_cost  # noqa: E402
from parallel_mcmc.sample import EllipticalSlice, NUTSMachine  # noqa: E402

# compiled once for each sampler and shape (the sampler and num_draws are static)
lockstep = jax.jit(NUTSMachine.lockstep, static_argnums=(0, 3))
state_machine = jax.jit(NUTSMachine.state_machine, static_argnums=(0, 3))
slice_lockstep = jax.jit(EllipticalSlice.lockstep, static_argnums=(0, 3))
slice_state_machine = jax.jit(EllipticalSlice.state_machine, static_argnums=(0, 3))

SDS = np.array([1.0, 1.5, 0.5, 2.0])
COV = SDS[:, None] * (0.4 + 0.6 * np.eye(4)) * SDS[None, :]  # a correlated 4-D Gaussian, correlations 0.4
PRECISION = jnp.asarray(np.linalg.inv(COV), jnp.float32)


def correlated(q):
    return -0.5 * q @ PRECISION @ q


def standard_normal(q):
    return -0.5 * q @ q


def funnel(q):  # Neal's funnel: v ~ N(0, 3^2), x | v ~ N(0, exp(v))
    v, x = q[0], q[1]
    return -v ** 2 / 18 - 0.5 * v - 0.5 * x ** 2 * jnp.exp(-v)


def keys(n, seed=0):
    return jax.random.split(jax.random.key(seed), n)


@pytest.fixture(scope="module")
def correlated_runs():
    nuts = NUTSMachine(correlated, dim=4, step_size=0.3, inverse_mass_matrix=SDS ** 2)
    q0 = jax.random.normal(jax.random.key(9), (8, 4))
    return lockstep(nuts, keys(8), q0, 400), state_machine(nuts, keys(8), q0, 400)


def test_lockstep_and_state_machine_draw_the_same_bits(correlated_runs):
    in_lockstep, machine = correlated_runs
    assert in_lockstep.positions.shape == (8, 400, 4)
    for field in ("positions", "num_integration_steps", "divergent", "tree_depth"):
        np.testing.assert_array_equal(np.asarray(getattr(in_lockstep, field)), np.asarray(getattr(machine, field)),
                                      err_msg=field)
    steps = np.asarray(machine.num_integration_steps)
    assert len(np.unique(steps)) > 3  # the chains' steps differ from draw to draw: there is something to gain


def test_iterations_follow_the_cost_formulas(correlated_runs):
    in_lockstep, machine = correlated_runs
    steps = np.asarray(machine.num_integration_steps)
    assert int(in_lockstep.iterations) == lockstep_cost(steps)  # sum over draws of max over chains
    assert int(machine.iterations) == steps.sum(axis=1).max()  # max over chains of sum over draws
    assert int(machine.iterations) < 0.9 * int(in_lockstep.iterations)


def test_draws_follow_a_correlated_4d_gaussian(correlated_runs):
    draws = np.asarray(correlated_runs[1].positions)[:, 50:]  # (chain, draw, dim)
    per_chain = {"mean": draws.mean(axis=1), "sd": draws.std(axis=1),
                 "q90": np.quantile(draws, 0.9, axis=1)}
    exact = {"mean": np.zeros(4), "sd": SDS, "q90": 1.2815516 * SDS}
    for name, values in per_chain.items():  # the 8 chains are independent: their spread gives the standard error
        error = np.abs(values.mean(axis=0) - exact[name])
        standard_error = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
        assert np.all(error < 5 * standard_error + 0.02), (name, error, standard_error)
        assert np.all(standard_error < 0.15), (name, standard_error)  # the test can fail: the errors are small
    correlations = np.corrcoef(draws.reshape(-1, 4).T)[np.triu_indices(4, 1)]
    assert np.all(np.abs(correlations - 0.4) < 0.1), correlations



@pytest.mark.parametrize("driver", ["lockstep", "state_machine"])
def test_each_device_of_a_shard_map_draws_what_its_chains_draw_alone(driver):
    """Under jax.shard_map (chains split over two devices) both drivers run, their loop carries cast to varying,
    and each device's chains make the draws they make alone."""
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2,), ("chains",), devices=jax.devices()[:2])
    sampler = NUTSMachine(standard_normal, dim=3, step_size=0.3)

    def per_device(k, q):
        out = getattr(sampler, driver)(k, q, 5)
        return out._replace(iterations=out.iterations[None])

    run = jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=P("chains"), out_specs=P("chains")))
    k, q = keys(8, seed=3), jax.random.normal(jax.random.key(4), (8, 3))
    both = run(*jax.device_put((k, q), NamedSharding(mesh, P("chains"))))
    for half in range(2):
        part = slice(4 * half, 4 * half + 4)
        alone = jax.jit(getattr(sampler, driver), static_argnums=2)(k[part], q[part], 5)
        np.testing.assert_array_equal(np.asarray(both.positions)[part], np.asarray(alone.positions))
        assert int(np.asarray(both.iterations)[half]) == int(alone.iterations)

@pytest.mark.parametrize("cap", [3, 5])
def test_a_tiny_step_runs_into_the_tree_depth_cap(cap):
    nuts = NUTSMachine(standard_normal, dim=2, step_size=1e-4, max_num_doublings=cap)
    out = state_machine(nuts, keys(4), jnp.ones((4, 2)), 5)
    np.testing.assert_array_equal(np.asarray(out.num_integration_steps), 2 ** cap - 1)
    np.testing.assert_array_equal(np.asarray(out.tree_depth), cap)
    assert int(out.iterations) == 5 * (2 ** cap - 1)
    assert not np.any(np.asarray(out.divergent))


def test_divergences_are_flagged_and_the_chains_stay_finite():
    nuts = NUTSMachine(funnel, dim=2, step_size=1.5)
    q0 = jnp.array([[-3.0, 0.1], [0.0, 0.5], [2.0, -1.0], [-1.0, 0.0]])
    out = lockstep(nuts, keys(4, seed=3), q0, 30)
    divergent = np.asarray(out.divergent)
    assert divergent.mean() > 0.1
    assert np.all(np.isfinite(np.asarray(out.positions)))
    # a divergent draw ends at once: never the cap's 1023 steps
    assert np.asarray(out.num_integration_steps)[divergent].max() < 2 ** 10 - 1


def test_a_huge_step_diverges_at_once_and_stays_put():
    nuts = NUTSMachine(lambda q: -0.5 * q @ q / 0.01 ** 2, dim=2, step_size=10.0)
    q0 = jnp.full((4, 2), 0.01)
    out = state_machine(nuts, keys(4), q0, 3)
    assert np.all(np.asarray(out.divergent))
    np.testing.assert_array_equal(np.asarray(out.num_integration_steps), 1)
    np.testing.assert_array_equal(np.asarray(out.positions), np.asarray(q0)[:, None, :].repeat(3, axis=1))


def test_a_u_turn_ends_the_trajectory_long_before_the_cap():
    nuts = NUTSMachine(standard_normal, dim=1, step_size=0.25)
    out = state_machine(nuts, keys(16), jnp.zeros((16, 1)), 50)
    steps = np.asarray(out.num_integration_steps)
    assert steps.mean() < 30 and steps.max() < 100  # half an orbit is pi / 0.25 ~ 13 steps; the cap is 1023
    assert np.asarray(out.tree_depth).max() < 8
    assert not np.any(np.asarray(out.divergent))


def test_tree_depths_match_blackjax():
    blackjax = pytest.importorskip("blackjax")
    step_size, num_draws = 0.2, 300
    kernel = blackjax.nuts(standard_normal, step_size=step_size, inverse_mass_matrix=jnp.ones(4))

    @jax.jit
    def blackjax_depths(key):
        def one(state, k):
            state, info = kernel.step(k, state)
            return state, info.num_trajectory_expansions
        return jax.lax.scan(one, kernel.init(jnp.zeros(4)), jax.random.split(key, num_draws))[1]

    theirs = np.asarray(blackjax_depths(jax.random.key(5)))
    nuts = NUTSMachine(standard_normal, dim=4, step_size=step_size)
    ours = np.asarray(state_machine(nuts, keys(1, seed=6), jnp.zeros((1, 4)), num_draws).tree_depth)
    assert abs(ours.mean() - theirs.mean()) < 1, (ours.mean(), theirs.mean())


@pytest.mark.parametrize("kwargs, words", [
    ({"logdensity": 3, "dim": 2, "step_size": 0.1}, "logdensity must be a function"),
    ({"logdensity": standard_normal, "dim": 0, "step_size": 0.1}, "dim"),
    ({"logdensity": standard_normal, "dim": 2, "step_size": -1.0}, "step_size must be a positive number"),
    ({"logdensity": standard_normal, "dim": 2, "step_size": float("nan")}, "step_size"),
    ({"logdensity": standard_normal, "dim": 2, "step_size": 0.1, "max_num_doublings": 0}, "max_num_doublings"),
    ({"logdensity": standard_normal, "dim": 2, "step_size": 0.1, "inverse_mass_matrix": [1.0, -1.0]},
     "inverse_mass_matrix must be the diagonal"),
    ({"logdensity": standard_normal, "dim": 2, "step_size": 0.1, "inverse_mass_matrix": [1.0, 1.0, 1.0]},
     "2 positive numbers"),
])
def test_bad_arguments_say_what_is_wrong(kwargs, words):
    with pytest.raises((TypeError, ValueError), match=words):
        NUTSMachine(**kwargs)


def test_wrong_positions_or_keys_say_what_to_pass():
    nuts = NUTSMachine(standard_normal, dim=3, step_size=0.1)
    with pytest.raises(ValueError, match=r"shape \(num_chains, 3\), one row per chain, got shape \(4, 2\)"):
        nuts.state_machine(keys(4), jnp.zeros((4, 2)), 5)
    with pytest.raises(ValueError, match=r"shape \(num_chains, 3\)"):
        nuts.lockstep(keys(1), jnp.zeros(3), 5)
    with pytest.raises(ValueError, match="one key per chain"):
        nuts.lockstep(keys(3), jnp.zeros((4, 3)), 5)
    with pytest.raises(ValueError, match="num_draws"):
        nuts.lockstep(keys(4), jnp.zeros((4, 3)), 0)


# elliptical slice sampling: Gaussian-process regression, whose posterior is known exactly
X = np.linspace(0.0, 1.0, 10)
KERNEL = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / 0.2 ** 2) + 1e-6 * np.eye(10)
NOISE = 0.3
Y = np.sin(6 * X) + NOISE * np.random.default_rng(0).standard_normal(10)
Y32 = jnp.asarray(Y, jnp.float32)


def gaussian_loglikelihood(f):
    return -0.5 * jnp.sum((Y32 - f) ** 2) / NOISE ** 2


@pytest.fixture(scope="module")
def slice_runs():
    ess = EllipticalSlice(gaussian_loglikelihood, KERNEL)
    f0 = jnp.zeros((8, 10))
    return slice_lockstep(ess, keys(8), f0, 600), slice_state_machine(ess, keys(8), f0, 600)


def test_slice_lockstep_and_state_machine_draw_the_same_bits(slice_runs):
    in_lockstep, machine = slice_runs
    np.testing.assert_array_equal(np.asarray(in_lockstep.positions), np.asarray(machine.positions))
    np.testing.assert_array_equal(np.asarray(in_lockstep.num_evaluations), np.asarray(machine.num_evaluations))
    evaluations = np.asarray(machine.num_evaluations)
    assert int(in_lockstep.iterations) == lockstep_cost(evaluations)
    assert int(machine.iterations) == evaluations.sum(axis=1).max()
    assert int(machine.iterations) < 0.9 * int(in_lockstep.iterations)


def test_slice_draws_follow_the_gaussian_process_posterior(slice_runs):
    solve = np.linalg.solve(KERNEL + NOISE ** 2 * np.eye(10), np.c_[Y, KERNEL])
    mean, sd = KERNEL @ solve[:, 0], np.sqrt(np.diag(KERNEL - KERNEL @ solve[:, 1:]))
    draws = np.asarray(slice_runs[1].positions)[:, 100:]
    for values, exact in ((draws.mean(axis=1), mean), (draws.std(axis=1), sd)):
        error = np.abs(values.mean(axis=0) - exact)
        standard_error = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
        assert np.all(error < 5 * standard_error + 0.01), (error, standard_error)
        assert np.all(standard_error < 0.05)


@pytest.mark.parametrize("args, words", [
    ((3, KERNEL), "loglikelihood must be a function"),
    ((gaussian_loglikelihood, np.ones((2, 3))), "square"),
    ((gaussian_loglikelihood, -np.eye(3)), "positive definite: add a small jitter"),
    ((gaussian_loglikelihood, np.array([[1.0, 0.5], [0.0, 1.0]])), "symmetric"),
])
def test_slice_bad_arguments_say_what_is_wrong(args, words):
    with pytest.raises((TypeError, ValueError), match=words):
        EllipticalSlice(*args)


def test_slice_wrong_positions_say_what_to_pass():
    ess = EllipticalSlice(gaussian_loglikelihood, KERNEL)
    with pytest.raises(ValueError, match=r"shape \(num_chains, 10\)"):
        ess.state_machine(keys(2), jnp.zeros((2, 9)), 5)
