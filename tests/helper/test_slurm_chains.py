"""parallel_mcmc.programs.slurm_chains in this process: the exact posterior of loc, NUTS's mass matrix, the JSON summary,
the chains' keys and each process's chains, and the command line; and the program on two layouts of two
devices, whose draws must be those of the chains run one after another. The program runs under SLURM in
tests/book/test_slurm_jobs.py."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from scipy import stats

from parallel_mcmc.programs import slurm_chains
from parallel_mcmc.pools.process_group import run_processes
from parallel_mcmc._validate import ArgumentError


def test_exact_loc_is_the_student_t_posterior():
    y = np.random.default_rng(0).normal(3.0, 2.0, size=50)
    mean, sd = slurm_chains.exact_loc(y)
    t = stats.t(df=y.size - 1, loc=y.mean(), scale=y.std(ddof=1) / np.sqrt(y.size))
    assert mean == pytest.approx(t.mean()) and sd == pytest.approx(t.std())
    with pytest.raises(ValueError, match="1-D array of at least 4"):
        slurm_chains.exact_loc(y[:3])


def test_inverse_mass_matrix_holds_the_posterior_variances():
    y = np.random.default_rng(1).normal(size=400)
    np.testing.assert_allclose(slurm_chains.inverse_mass_matrix(y), [y.var(ddof=1) / 400, 1 / 800], rtol=1e-6)


def test_summary_drops_the_warmup_and_compares_with_the_exact_mean():
    rng = np.random.default_rng(2)
    y = rng.normal(10.0, 2.0, size=100)
    mean, sd = slurm_chains.exact_loc(y)
    draws = {"loc": mean + sd * rng.normal(size=(4, 300)), "log_scale": 0.7 + 0.07 * rng.normal(size=(4, 300))}
    draws["loc"][:, :50] = 1e6  # a warm-up far away: dropped
    processes = [{"jax_process_index": 0, "slurm_procid": 0, "slurm_localid": 0, "local_devices": 1}]
    result = slurm_chains.summarize(draws, processes, y, warmup=50, devices=1)
    assert (result["num_chains"], result["num_draws"], result["processes"], result["devices"]) == (4, 250, 1, 1)
    assert result["exact_mean_loc"] == pytest.approx(mean) and result["exact_sd_loc"] == pytest.approx(sd)
    assert abs(result["mean"]["loc"] - mean) < 0.4 * sd and result["rhat"]["loc"] < 1.02
    assert result["ess_bulk"]["loc"] > 500


def test_the_command_line_refuses_too_few_draws():
    with pytest.raises(ArgumentError, match="--draws"):
        slurm_chains.main(["--out", "x.json", "--draws", "50", "--warmup", "100"])


def test_a_chains_key_depends_on_its_number_alone():
    keys = slurm_chains.chain_keys([0, 5, 2])
    base = jax.random.key(slurm_chains.SEED)
    for got, i in zip(keys, [0, 5, 2]):
        np.testing.assert_array_equal(jax.random.key_data(got), jax.random.key_data(jax.random.fold_in(base, i)))
    # the same chain, asked for among others or alone, in another order: the same key
    np.testing.assert_array_equal(jax.random.key_data(slurm_chains.chain_keys([5])[0]), jax.random.key_data(keys[1]))
    assert not np.array_equal(jax.random.key_data(slurm_chains.chain_keys([5], seed=1)), jax.random.key_data(keys[1:2]))
    for bad in ([[1, 2]], [-1], [0.5]):
        with pytest.raises(ValueError, match="chain numbers"):
            slurm_chains.chain_keys(np.array(bad))


def test_one_process_holds_every_chain_of_its_sharding():
    mesh = jax.make_mesh((1,), ("chains",))
    sharding = NamedSharding(mesh, jax.P("chains"))
    np.testing.assert_array_equal(slurm_chains.process_chains(sharding, 6), np.arange(6))
    with pytest.raises(ValueError, match="num_chains"):
        slurm_chains.process_chains(sharding, 0)


def test_the_command_line_refuses_no_chains_and_no_devices(tmp_path):
    with pytest.raises(ArgumentError, match="--num-chains"):
        slurm_chains.main(["--out", str(tmp_path / "x.json"), "--num-chains", "0"])
    with pytest.raises(ArgumentError, match="--cpu-devices"):
        slurm_chains.main(["--out", str(tmp_path / "x.json"), "--cpu-devices", "0"])
    with pytest.raises(ArgumentError, match="--seed"):
        slurm_chains.main(["--out", str(tmp_path / "x.json"), "--seed", "-1"])


@pytest.mark.slow
def test_the_draws_do_not_depend_on_the_layout(tmp_path):
    """One process with two CPU devices and two processes with one each: the same draws, to the last bit, as
    the chains run one after another in this process, from the keys of the seed given (``--seed``)."""
    import blackjax

    from parallel_mcmc.sample.chains import sequential_runner
    from parallel_mcmc.models import normal

    draws = {}
    for num_processes, devices_each in ((1, 2), (2, 1)):
        name = f"{num_processes}x{devices_each}"
        run_processes(module="parallel_mcmc.programs.slurm_chains", num_processes=num_processes, launcher="subprocess",
                      args=["--out", str(tmp_path / f"{name}.json"), "--draws-out", str(tmp_path / f"{name}.npz"),
                            "--cpu-devices", str(devices_each), "--num-chains", "4", "--draws", "120",
                            "--warmup", "20", "--seed", "3", "--no-diagnostics"], timeout=300)
        info = json.loads((tmp_path / f"{name}.json").read_text())
        assert (info["processes"], info["devices"], info["num_chains"], info["seed"]) == (num_processes, 2, 4, 3)
        assert "rhat" not in info and info["compile_seconds"] > 0 and info["sampling_seconds"] > 0
        with np.load(tmp_path / f"{name}.npz") as saved:
            draws[name] = dict(saved)
    data = normal.observed()
    nuts = blackjax.nuts(normal.make_logdensity(data), step_size=slurm_chains.STEP_SIZE,
                         inverse_mass_matrix=slurm_chains.inverse_mass_matrix(data))
    one = sequential_runner(nuts.step, 120)
    init = jax.jit(jax.vmap(nuts.init))
    starts = normal.spread_positions(4)
    for i in range(4):
        positions, _ = one(slurm_chains.chain_keys([i], seed=3), init({k: v[i:i + 1] for k, v in starts.items()}))
        for name in draws:
            for key in starts:
                np.testing.assert_array_equal(draws[name][key][i], np.asarray(positions[key])[0], err_msg=f"{name}, chain {i}")
