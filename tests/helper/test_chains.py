"""Tests of parallel_mcmc.sample and parallel_mcmc.models.normal (8 CPU devices, see conftest),
and of reading the runners' output with parallel_mcmc.measure (lockstep) and parallel_mcmc.sample (diagnostics)."""

from __future__ import annotations

import arviz as az
import blackjax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from parallel_mcmc import sample as ch
from parallel_mcmc.sample.diagnostics import superchain_ids, to_inference_data
from parallel_mcmc.measure.lockstep import integration_steps
from parallel_mcmc.models import normal

NUM_DRAWS = 5


@pytest.fixture(scope="module")
def nuts():
    # A moderately tuned NUTS keeps the trees short and the tests fast.
    return blackjax.nuts(normal.logdensity, step_size=0.05, inverse_mass_matrix=jnp.array([0.4, 0.0005]))


@pytest.fixture(scope="module")
def inputs(nuts):
    states = jax.vmap(nuts.init)(normal.spread_positions(8, loc_range=(8.0, 12.0), log_scale_range=(2.9, 3.1)))
    return jax.random.split(jax.random.key(3), 8), states


@pytest.fixture(scope="module")
def reference(nuts, inputs):
    return ch.sequential_runner(nuts.step, NUM_DRAWS)(*inputs)


# --- the model -------------------------------------------------------------

def test_observed_is_fixed_and_near_the_truth():
    a, b = normal.observed(), normal.observed()
    assert a.shape == (normal.NUM_OBSERVATIONS,)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert abs(float(a.mean()) - normal.TRUE_LOC) < 3 * normal.TRUE_SCALE / np.sqrt(a.shape[0])


def test_logdensity_matches_scipy():
    from scipy import stats

    data = np.asarray(normal.observed())
    pos = {"loc": 9.0, "log_scale": 3.0}
    want = stats.norm.logpdf(data, 9.0, np.exp(3.0)).sum()
    np.testing.assert_allclose(float(normal.logdensity(pos)), want, rtol=1e-5)


def test_logdensity_peaks_near_the_sample_moments():
    data = np.asarray(normal.observed())
    best = {"loc": data.mean(), "log_scale": np.log(data.std())}
    for shift in ({"loc": 1.0}, {"log_scale": 0.1}):
        other = {k: best[k] + shift.get(k, 0.0) for k in best}
        assert normal.logdensity(best) > normal.logdensity(other)


def test_logdensity_rejects_a_wrong_position():
    with pytest.raises(TypeError, match="'loc' and 'log_scale'"):
        normal.logdensity({"mu": 1.0, "log_scale": 0.0})
    with pytest.raises(ValueError, match="1-D array"):
        normal.make_logdensity(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="num must be"):
        normal.observed(1)


def test_starting_points():
    spread = normal.spread_positions(16)
    assert spread["loc"].shape == (16,) and np.ptp(spread["loc"]) > 5
    np.testing.assert_array_equal(spread["loc"], normal.spread_positions(16)["loc"])
    const = normal.constant_positions(3)
    assert np.all(const["loc"] == 1.0)
    with pytest.raises(ValueError, match="num_chains"):
        normal.spread_positions(0)


# --- the runners -------------------------------------------------------------

def test_all_runners_give_the_same_draws(nuts, inputs, reference):
    keys, states = inputs
    ref_pos, ref_info = reference
    assert ref_pos["loc"].shape == (8, NUM_DRAWS)
    vpos, vinfo = ch.vmap_runner(nuts.step, NUM_DRAWS)(keys, states)
    np.testing.assert_allclose(vpos["loc"], ref_pos["loc"], rtol=1e-5)
    np.testing.assert_array_equal(integration_steps(vinfo), integration_steps(ref_info))

    mesh = jax.make_mesh((2,), ("chains",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    placed = jax.device_put(inputs, NamedSharding(mesh, P("chains")))
    for inner in ("map", "vmap"):
        spos, _ = ch.shard_map_runner(nuts.step, NUM_DRAWS, mesh, inner=inner)(*placed)
        assert len(spos["loc"].devices()) == 2
        np.testing.assert_allclose(spos["loc"], ref_pos["loc"], rtol=1e-5)


def test_runner_arguments_are_checked(nuts):
    with pytest.raises(TypeError, match="transition function"):
        ch.vmap_runner("nuts", 10)
    with pytest.raises(ValueError, match="num_draws"):
        ch.sequential_runner(nuts.step, 0)
    mesh = jax.make_mesh((2,), ("chains",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:2])
    with pytest.raises(ValueError, match="not an axis"):
        ch.shard_map_runner(nuts.step, 3, mesh, axis_name="data")
    with pytest.raises(ValueError, match="inner must be"):
        ch.shard_map_runner(nuts.step, 3, mesh, inner="pmap")
    with pytest.raises(TypeError, match="Mesh"):
        ch.shard_map_runner(nuts.step, 3, jax.devices())


# --- what the runners' output feeds: step counts and ArviZ ---------------------------

def test_integration_steps_reads_nuts_info(reference):
    steps = integration_steps(reference[1])
    assert steps.shape == (8, NUM_DRAWS) and steps.dtype == np.int64 and (steps >= 1).all()


@pytest.mark.filterwarnings("ignore:Found chain dimension to be longer:UserWarning")  # the reference run is short on purpose
def test_to_inference_data_and_diagnostics(reference):
    import arviz as az

    idata = to_inference_data(reference[0])
    assert idata.posterior.sizes["chain"] == 8 and idata.posterior.sizes["draw"] == NUM_DRAWS
    assert set(az.rhat(idata).data_vars) == {"loc", "log_scale"}
    with pytest.raises(ValueError, match="chain, draw"):
        to_inference_data({"loc": np.zeros(5)})
    with pytest.raises(TypeError, match="dict"):
        to_inference_data([])


def test_arviz_nested_rhat_flags_superchains_that_disagree():
    """The chapters' nested R-hat is ArviZ's (method="identity", superchains as superchain_ids numbers them)."""
    rng = np.random.default_rng(0)
    ids = superchain_ids(64, 8)
    mixed = rng.normal(size=(64, 5))  # 8 superchains of 8 chains of 5 draws, all alike
    assert abs(float(az.rhat_nested(mixed, method="identity", superchain_ids=ids)) - 1.0) < 0.05
    stuck = mixed + np.repeat(np.arange(8.0), 8)[:, None]  # each superchain around its own mean
    assert float(az.rhat_nested(stuck, method="identity", superchain_ids=ids)) > 2.0


def test_summary_runner_matches_the_stored_draws():
    nuts = blackjax.nuts(normal.make_logdensity(normal.observed()), step_size=0.05,
                         inverse_mass_matrix=jnp.array([0.5, 0.01]))
    states = jax.vmap(nuts.init)(normal.constant_positions(3))
    keys = jax.random.split(jax.random.key(3), 3)
    positions, _ = ch.vmap_runner(nuts.step, 20)(keys, states)
    mean, var = ch.summary_runner(nuts.step, 20)(keys, states)
    for name in positions:
        np.testing.assert_allclose(mean[name], positions[name].mean(axis=1), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(var[name], positions[name].var(axis=1, ddof=1), rtol=1e-3, atol=1e-9)
        assert mean[name].shape == (3,)
    with pytest.raises(ValueError):
        ch.summary_runner(nuts.step, 0)


def test_a_longer_run_continues_the_shorter_one(nuts, inputs, reference):
    """Draw i's key is fold_in(key, i), whatever the run's length: the first draws of a longer run are the
    draws of a shorter one."""
    keys, states = inputs
    longer, _ = ch.vmap_runner(nuts.step, 2 * NUM_DRAWS)(keys, states)
    for name in reference[0]:
        np.testing.assert_allclose(np.asarray(longer[name])[:, :NUM_DRAWS], np.asarray(reference[0][name]), rtol=1e-5)


def test_summary_runner_memory_does_not_grow_with_the_draws(nuts, inputs):
    keys, states = inputs

    def footprint(num_draws):
        m = ch.summary_runner(nuts.step, num_draws).lower(keys, states).compile().memory_analysis()
        return m.output_size_in_bytes + m.temp_size_in_bytes

    assert footprint(50_000) == footprint(5_000)  # ten times the draws, not a byte more
    stored = ch.vmap_runner(nuts.step, 5_000).lower(keys, states).compile().memory_analysis()
    assert stored.output_size_in_bytes > 20 * footprint(5_000)  # what keeping the draws costs
