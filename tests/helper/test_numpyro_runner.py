"""The multi-device NumPyro runner: chain layout, per-chain initial values, chain axis, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from numpyro.infer import NUTS

from parallel_mcmc.models.regression import linear_model, linear_posterior, make_linear_data
from parallel_mcmc.sample.numpyro_runner import run_chains, shard_chains
from parallel_mcmc.sample.numpyro_plan import check_init_params, estimate_memory, latent_shapes, plan_chains

DATA = make_linear_data(60, 3, seed=1)
X, Y = jnp.asarray(DATA.X), jnp.asarray(DATA.y)


def test_three_chains_on_two_devices():
    plan = plan_chains(3, jax.devices()[:2])
    assert plan.counts == (2, 1) and plan.per_device == 2 and plan.num_padding == 1
    assert [list(r) for r in plan.chain_ranges()] == [[0, 1], [2]]
    assert plan.slot_index().tolist() == [0, 1, 2, 2]  # padding repeats the device's own last chain
    assert plan.real_slots().tolist() == [0, 1, 2]


def test_two_chains_on_eight_devices_use_two():
    plan = plan_chains(2)
    assert len(jax.devices()) == 8
    assert plan.counts == (1, 1) and plan.devices == tuple(jax.devices()[:2]) and plan.num_padding == 0


@pytest.mark.parametrize("n", [1, 5, 8, 10, 17])
def test_every_chain_runs_once_and_evenly(n):
    plan = plan_chains(n)
    chains = [c for r in plan.chain_ranges() for c in r]
    assert chains == list(range(n))
    assert max(plan.counts) - min(plan.counts) <= 1
    assert plan.slot_index()[plan.real_slots()].tolist() == list(range(n))
    assert "chain(s) on" in str(plan)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_chain_counts_are_refused(bad):
    with pytest.raises(ValueError, match="num_chains must be a whole number >= 1"):
        plan_chains(bad)


def test_bad_device_lists_are_refused():
    with pytest.raises(ValueError, match="devices is empty"):
        plan_chains(2, [])
    d = jax.devices()[0]
    with pytest.raises(ValueError, match="more than once"):
        plan_chains(2, [d, d])


def test_shard_chains_maps_and_keeps_order():
    plan = plan_chains(3, jax.devices()[:2])
    method = shard_chains(plan)
    out = method(lambda args: args[0] * 10.0 + args[1])((jnp.arange(3.0), jnp.ones(3)))
    np.testing.assert_allclose(out, [1.0, 11.0, 21.0])
    with pytest.raises(ValueError, match="plan is for 3 chains"):
        method(lambda a: a)(jnp.arange(4.0))
    with pytest.raises(TypeError, match="ChainPlan"):
        shard_chains((2, 1))
    assert method.memory.output_size_in_bytes >= plan.per_device * 4  # one device: its slots, padding included


def test_shard_chains_inner_map_runs_chains_one_after_another():
    plan = plan_chains(3, jax.devices()[:2])
    calls = []

    def per_chain(x):
        calls.append(np.shape(x))  # traced once: the shape one call sees
        return x * 2.0

    by_map = shard_chains(plan, inner="map")(per_chain)(jnp.arange(3.0))
    np.testing.assert_allclose(by_map, [0.0, 2.0, 4.0])
    assert calls == [()], calls  # lax.map hands the function one chain, not a batch
    calls.clear()
    shard_chains(plan, inner="vmap")(per_chain)(jnp.arange(3.0))
    assert calls == [()], calls  # vmap traces it per chain too, but runs them as one batch
    with pytest.raises(ValueError, match="'vmap' .*'map'"):
        shard_chains(plan, inner="pmap")


def test_shard_chains_keeps_the_per_chain_function_name():
    from functools import partial

    from parallel_mcmc.measure.cores import CompileLog

    def _one_chain(x, scale):
        return x * scale

    plan = plan_chains(2, jax.devices()[:1])
    with CompileLog() as log:
        shard_chains(plan, inner="map")(partial(_one_chain, scale=3.0))(jnp.arange(2.0))
    assert log.compiled["jit(_one_chain)"] == 1, dict(log.compiled)


def test_latent_shapes_and_init_checks():
    shapes = latent_shapes(linear_model, X, Y)
    assert shapes == {"beta": (3,)}
    good = {"beta": np.zeros((3, 3))}
    assert check_init_params(good, shapes, 3) is good
    with pytest.raises(ValueError, match=r"need shape \(3, 3\)"):
        check_init_params({"beta": np.zeros(3)}, shapes, 3)  # one row for all chains
    with pytest.raises(ValueError, match=r"need shape \(3, 3\)"):
        check_init_params({"beta": np.zeros((1, 3))}, shapes, 3)
    with pytest.raises(ValueError, match="not latent sites"):
        check_init_params({"beta": np.zeros((3, 3)), "sigma": np.zeros(3)}, shapes, 3)
    with pytest.raises(ValueError, match="no initial value"):
        check_init_params({}, shapes, 3)
    with pytest.raises(TypeError, match="must be a dict"):
        check_init_params(np.zeros((3, 3)), shapes, 3)


def test_run_three_chains_on_two_devices_keeps_chains_and_inits():
    # A tiny fixed step hardly moves the chains, so each first draw sits at its own initial value.
    init = {"beta": np.array([[-3.0, 0.0, 1.0], [0.5, 2.0, -1.0], [4.0, -4.0, 0.0]], dtype=np.float32)}
    kernel = NUTS(linear_model, step_size=1e-5, adapt_step_size=False, max_tree_depth=2)
    run = run_chains(linear_model, X, Y, num_chains=3, num_warmup=0, num_samples=2, rng_key=jax.random.key(0),
                     init_params=init, devices=jax.devices()[:2], kernel=kernel)
    assert run.plan.counts == (2, 1)
    assert run.samples["beta"].shape == (3, 2, 3)
    np.testing.assert_allclose(run.samples["beta"][:, 0], init["beta"], atol=1e-3)
    assert run.seconds > 0 and 0 <= run.compile_seconds <= run.seconds


def test_run_two_chains_on_eight_devices_converges():
    run = run_chains(linear_model, X, Y, num_chains=2, num_warmup=300, num_samples=300, rng_key=jax.random.key(1))
    assert run.plan.counts == (1, 1)
    beta = run.samples["beta"]
    assert beta.shape == (2, 300, 3)
    assert not np.allclose(beta[0], beta[1]), "the two chains must be different chains"
    mean, cov = linear_posterior(DATA.X, DATA.y)
    assert np.all(np.abs(beta.mean(axis=(0, 1)) - mean) < 0.3 * np.sqrt(np.diag(cov)))
    idata = run.to_arviz()
    assert idata.posterior["beta"].shape == (2, 300, 3)


def test_run_rejects_bad_input_before_sampling():
    with pytest.raises(ValueError, match="num_chains must be a whole number >= 1, got 0"):
        run_chains(linear_model, X, Y, num_chains=0, num_warmup=10, num_samples=10, rng_key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"need shape \(3, 3\)"):
        run_chains(linear_model, X, Y, num_chains=3, num_warmup=10, num_samples=10, rng_key=jax.random.key(0),
                   init_params={"beta": np.zeros((1, 3))})
    with pytest.raises(ValueError, match="num_samples"):
        run_chains(linear_model, X, Y, num_chains=2, num_warmup=10, num_samples=0, rng_key=jax.random.key(0))
    with pytest.raises(TypeError, match="NumPyro model"):
        run_chains("model", X, Y, num_chains=2, num_warmup=10, num_samples=10, rng_key=jax.random.key(0))


def test_memory_estimate_counts_padding_and_matches_draws():
    plan = plan_chains(3, jax.devices()[:2])
    est = estimate_memory(plan, num_samples=1000, num_latent=4, data_bytes=8000)
    assert est.chains_per_device == 2
    assert est.draws_bytes == 2 * 1000 * 4 * 4 == np.zeros((2, 1000, 4), np.float32).nbytes
    assert est.per_device_bytes == est.draws_bytes + est.state_bytes + 8000
    dense = estimate_memory(plan, num_samples=1000, num_latent=4, data_bytes=8000, dense_mass=True)
    assert dense.state_bytes > est.state_bytes
    assert "MiB" in str(est)
    with pytest.raises(TypeError, match="ChainPlan"):
        estimate_memory(3, num_samples=10, num_latent=2, data_bytes=0)
    with pytest.raises(ValueError, match="num_latent"):
        estimate_memory(plan, num_samples=10, num_latent=0, data_bytes=0)


def test_uneven_split_on_two_devices_in_a_fresh_process(run_python):
    proc = run_python("""
        from parallel_mcmc.devices import use_cpu_devices
        use_cpu_devices(2)
        import jax, jax.numpy as jnp
        from parallel_mcmc.sample.numpyro_runner import shard_chains
        from parallel_mcmc.sample.numpyro_plan import plan_chains
        plan = plan_chains(3)
        print(plan.counts, plan.num_padding)
        out = shard_chains(plan)(lambda a: a * 2.0)(jnp.arange(3.0))
        print(out.tolist())
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == ["(2, 1) 1", "[0.0, 2.0, 4.0]"]
