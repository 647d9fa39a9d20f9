"""parallel_mcmc.sample.RandomizedHMC: lockstep and state machine make the same draws, and the loop's length."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from parallel_mcmc.sample import RandomizedHMC  # noqa: E402


def logdensity(q):
    return -0.5 * q @ q


@pytest.fixture(scope="module")
def hmc():
    return RandomizedHMC(logdensity, dim=3, step_size=0.2, mean_length=5)


def test_lockstep_and_state_machine_draw_the_same_bits(hmc):
    momenta, lengths, uniforms = hmc.randoms(jax.random.split(jax.random.key(0), 6), 40)
    q0 = jnp.zeros((6, 3)) + 0.1
    in_lockstep = np.asarray(jax.jit(hmc.lockstep)(momenta, lengths, uniforms, q0))
    draws, iterations = jax.jit(hmc.state_machine)(momenta, lengths, uniforms, q0)
    assert in_lockstep.shape == (6, 40, 3)
    np.testing.assert_array_equal(in_lockstep, np.asarray(draws))
    # one iteration per step of the longest chain, and not every draw was a rejection
    assert int(iterations) == int(np.asarray(lengths)[:, :40].sum(axis=1).max())
    assert np.mean(np.any(np.diff(in_lockstep, axis=1) != 0, axis=2)) > 0.5


def test_draws_follow_the_target(hmc):
    momenta, lengths, uniforms = hmc.randoms(jax.random.split(jax.random.key(1), 64), 200)
    draws, _ = jax.jit(hmc.state_machine)(momenta, lengths, uniforms, jnp.zeros((64, 3)))
    pooled = np.asarray(draws)[:, 20:].reshape(-1, 3)
    assert np.all(np.abs(pooled.mean(axis=0)) < 0.1)
    assert np.all(np.abs(pooled.std(axis=0) - 1) < 0.1)


@pytest.mark.parametrize("kwargs, words", [
    ({"logdensity": 3, "dim": 2, "step_size": 0.1}, "logdensity must be a function"),
    ({"logdensity": logdensity, "dim": 0, "step_size": 0.1}, "dim"),
    ({"logdensity": logdensity, "dim": 2, "step_size": -1.0}, "step_size"),
    ({"logdensity": logdensity, "dim": 2, "step_size": 0.1, "mean_length": 0.5}, "mean_length"),
])
def test_bad_arguments_say_what_is_wrong(kwargs, words):
    with pytest.raises((TypeError, ValueError), match=words):
        RandomizedHMC(**kwargs)
