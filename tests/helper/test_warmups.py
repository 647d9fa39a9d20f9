"""parallel_mcmc.sample's warm-ups: ChEES for an ensemble, NUTS's window adaptation for one chain."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from parallel_mcmc.sample import CheesWarmup, nuts_chains, nuts_warmup, vmap_runner  # noqa: E402

SCALES = jnp.array([1.0, 10.0])


def logdensity(x):
    return -0.5 * jnp.sum((x / SCALES) ** 2)


def test_chees_tunes_the_scales_and_its_kernel_samples_the_target():
    warmup = CheesWarmup(logdensity, num_chains=32, num_steps=150)
    with pytest.raises(RuntimeError, match="run the warm-up first"):
        warmup.kernel({})
    starts = jax.random.normal(jax.random.key(0), (32, 2))
    states, tuned = warmup(jax.random.key(1), starts)
    assert set(tuned) == {"step_size", "inverse_mass_matrix", "integration_steps_params"}
    mass = np.asarray(tuned["inverse_mass_matrix"])
    assert mass[1] / mass[0] > 10  # the diagonal learned that the second scale is ten times the first
    kernel = warmup.kernel(tuned)
    positions, _ = vmap_runner(kernel.step, 100)(jax.random.split(jax.random.key(2), 32), states)
    sd = np.asarray(positions).reshape(-1, 2).std(axis=0)
    np.testing.assert_allclose(sd, [1.0, 10.0], rtol=0.25)
    (n,) = tuned["integration_steps_params"]
    schedule = np.asarray(warmup.integration_steps(jnp.arange(10), n))
    assert schedule.shape == (10,) and schedule.min() >= 1


def test_a_factory_takes_its_arguments_and_a_plain_logdensity_refuses_them():
    warmup = CheesWarmup(lambda scale: (lambda x: -0.5 * jnp.sum((x / scale) ** 2)), 8, 20, factory=True)
    states, tuned = warmup(jax.random.key(0), jnp.zeros((8, 2)) + 0.1, 3.0)
    assert warmup.kernel(tuned, 3.0).step is not None
    plain = CheesWarmup(logdensity, 8, 20)
    with pytest.raises(TypeError, match="no extra arguments"):
        plain(jax.random.key(0), jnp.zeros((8, 2)), 3.0)


def test_nuts_warmup_and_chains_tune_each_chain_on_its_own():
    warmup = jax.jit(jax.vmap(nuts_warmup(logdensity, 150)))
    states, parameters = warmup(jax.random.split(jax.random.key(0), 4), jnp.ones((4, 2)))
    assert parameters["step_size"].shape == (4,) and parameters["inverse_mass_matrix"].shape == (4, 2)
    run = jax.jit(jax.vmap(nuts_chains(logdensity, 150, 200, lambda state, info: (state.position,
                                                                                   info.num_integration_steps))))
    params, (positions, steps) = run(jax.random.split(jax.random.key(1), 4), jnp.ones((4, 2)))
    assert positions.shape == (4, 200, 2) and steps.shape == (4, 200) and int(steps.min()) >= 1
    np.testing.assert_allclose(np.asarray(positions).reshape(-1, 2).std(axis=0), [1.0, 10.0], rtol=0.3)


@pytest.mark.parametrize("make, words", [
    (lambda: CheesWarmup(3, 8, 10), "logdensity must be a function"),
    (lambda: CheesWarmup(logdensity, 1, 10), "num_chains"),
    (lambda: CheesWarmup(logdensity, 8, 0), "num_steps"),
    (lambda: nuts_warmup(logdensity, 0), "num_steps"),
    (lambda: nuts_chains(logdensity, 10, 0, lambda s, i: s), "num_draws"),
])
def test_bad_arguments_say_what_is_wrong(make, words):
    with pytest.raises((TypeError, ValueError), match=words):
        make()
