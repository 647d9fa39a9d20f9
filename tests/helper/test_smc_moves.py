"""parallel_mcmc.sample.step_size_from_particles and move_distance: the weighted spread they read, and a tempered
SMC run whose tuned moves carry the particles as far as independent draws where a fixed small step does not."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import blackjax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from blackjax.smc import resampling  # noqa: E402

from parallel_mcmc.sample import move_distance, step_size_from_particles  # noqa: E402

SDS = np.array([1.0, 0.1, 3.0])


def gaussian(key, n, sds=SDS):
    return jax.random.normal(jax.random.key(key), (n, len(sds))) * sds


def test_the_step_is_a_quarter_turn_of_the_narrowest_sd_over_the_steps():
    particles = gaussian(0, 20_000)
    step = float(step_size_from_particles(particles, jnp.ones(20_000), 10))
    assert step == pytest.approx(np.pi / 2 * 0.1 / 10, rel=0.03)
    assert float(step_size_from_particles(particles, jnp.ones(20_000), 10, trajectory=1.0)) == pytest.approx(
        step * 2 / np.pi, rel=1e-5)


def test_the_weights_decide_the_spread_not_the_particles_alone():
    wide, narrow = gaussian(1, 5000, SDS * 10), gaussian(2, 5000)
    both = jnp.concatenate([wide, narrow])
    only_narrow = jnp.concatenate([jnp.zeros(5000), jnp.ones(5000)])
    weighted = float(step_size_from_particles(both, only_narrow, 10))
    assert weighted == pytest.approx(np.pi / 2 * 0.1 / 10, rel=0.05)
    assert float(step_size_from_particles(both, jnp.ones(10_000), 10)) > 3 * weighted  # unweighted is wrong here


def test_pytree_particles_read_as_their_flattened_rows():
    particles = gaussian(3, 4000)
    as_tree = {"a": particles[:, :2], "b": particles[:, 2]}
    weights = jnp.linspace(0.5, 1.5, 4000)
    assert float(step_size_from_particles(as_tree, weights, 7)) == pytest.approx(
        float(step_size_from_particles(particles, weights, 7)), rel=1e-6)


def test_move_distance_is_zero_for_copies_and_sqrt_two_for_independent_draws():
    before, weights = gaussian(4, 20_000), jnp.ones(20_000)
    ancestors = jax.random.randint(jax.random.key(5), (20_000,), 0, 20_000)
    assert float(move_distance(before, weights, before[ancestors], ancestors)) == 0.0
    assert float(move_distance(before, weights, gaussian(6, 20_000), ancestors)) == pytest.approx(np.sqrt(2), rel=0.03)
    # in units of the target's sd: a shift of half an sd in every coordinate is 0.5, whatever the sds
    shifted = before[ancestors] + 0.5 * SDS
    assert float(move_distance(before, weights, shifted, ancestors)) == pytest.approx(0.5, rel=0.02)


def _run(update, num_particles=512):
    """Adaptive tempered SMC on a 2-d Gaussian model (prior N(0, I), 400 observations of noise sd 1): every stage's
    step size and move distance, and the log-evidence against the exact one."""
    data = 0.3 + jax.random.normal(jax.random.key(7), (400, 2))

    def log_likelihood(x):
        return -0.5 * jnp.sum((data - x) ** 2)

    def parameters(step):
        return {"step_size": jnp.array([step]), "inverse_mass_matrix": jnp.ones((1, 2)),
                "num_integration_steps": jnp.array([10])}

    prior = jax.random.normal(jax.random.key(8), (num_particles, 2))
    smc = blackjax.inner_kernel_tuning(
        blackjax.adaptive_tempered_smc, lambda x: -0.5 * jnp.sum(x**2), log_likelihood, blackjax.hmc.build_kernel(),
        blackjax.hmc.init, resampling.systematic,
        mcmc_parameter_update_fn=lambda key, state, info: parameters(update(state.particles, state.weights)),
        initial_parameter_value=parameters(update(prior, jnp.ones(num_particles))), num_mcmc_steps=3, target_ess=0.5)
    step, state, key = jax.jit(smc.step), smc.init(prior), jax.random.key(9)
    steps, distances, log_evidence = [], [], 0.0
    while float(state.sampler_state.tempering_param) < 1:
        key, sub = jax.random.split(key)
        new, info = step(sub, state)
        steps.append(float(state.parameter_override["step_size"][0]))
        distances.append(float(move_distance(state.sampler_state.particles, state.sampler_state.weights,
                                             new.sampler_state.particles, info.ancestors)))
        log_evidence, state = log_evidence + float(info.log_likelihood_increment), new
    n, total = data.shape[0], np.asarray(data, np.float64).sum(0)
    exact = float(-np.log1p(n) - 0.5 * (np.sum(np.asarray(data, np.float64) ** 2) - total @ total / (1 + n)))
    return np.array(steps), np.array(distances), log_evidence, exact


@pytest.fixture(scope="module")
def tuned():
    return _run(lambda particles, weights: step_size_from_particles(particles, weights, 10))


def test_tuned_steps_follow_the_target_and_move_like_independent_draws(tuned):
    steps, distances, log_evidence, exact = tuned
    assert len(steps) >= 4 and steps[0] > 10 * steps[-1] and np.all(np.diff(steps) < 0)
    assert np.all(np.abs(distances / np.sqrt(2) - 1) < 0.15), distances
    assert abs(log_evidence - exact) < 0.3, (log_evidence, exact)


def test_a_fixed_small_step_is_caught_not_moving_at_the_prior(tuned):
    steps, distances, _, _ = _run(lambda particles, weights: 0.01)
    assert np.all(steps == steps[0]) and distances[0] < 0.5 < tuned[1][0], (distances, tuned[1])
