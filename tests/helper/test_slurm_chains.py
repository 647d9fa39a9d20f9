"""parallel_mcmc.slurm_chains in this process: the exact posterior of loc, NUTS's mass matrix, the JSON summary,
and the command line. The program itself runs under SLURM in tests/book/test_slurm_jobs.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from parallel_mcmc import slurm_chains
from parallel_mcmc.validate import ArgumentError


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
