"""parallel_mcmc.programs.slurm_chains in this process: the exact posterior of loc, NUTS's mass matrix, the JSON summary,
the chains' keys and each process's chains, the checkpoint's file, and the command line; and the program on two
layouts of two devices, whose draws must be those of the chains run one after another, and stopped and resumed
from its checkpoint, whose draws must be those of a run never stopped. The program runs under SLURM in
tests/book/test_slurm_jobs.py."""

from __future__ import annotations

import json
import time

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


def test_a_checkpoint_is_replaced_whole_and_refuses_another_run(tmp_path):
    path = tmp_path / "chains.npz"
    assert slurm_chains.load_checkpoint(path) is None  # none yet: start afresh
    slurm_chains.save_checkpoint(path, {"done": 40, "num_chains": 4, "seed": 3, "draws/loc": np.ones((4, 40))})
    slurm_chains.save_checkpoint(path, {"done": 80, "num_chains": 4, "seed": 3, "draws/loc": np.zeros((4, 80))})
    saved = slurm_chains.load_checkpoint(path, num_chains=4, seed=3)
    assert int(saved["done"]) == 80 and saved["draws/loc"].shape == (4, 80)
    assert [p.name for p in tmp_path.iterdir()] == ["chains.npz"]  # no temporary file left behind
    with pytest.raises(ValueError, match=r"another run \(seed 3, not seed 4\).*remove the file"):
        slurm_chains.load_checkpoint(path, num_chains=4, seed=4)


def test_the_command_line_refuses_to_stop_without_a_checkpoint(tmp_path):
    with pytest.raises(ArgumentError, match="--segment"):
        slurm_chains.main(["--out", str(tmp_path / "x.json"), "--segment", "0"])
    with pytest.raises(SystemExit):  # argparse's error: --stop-after needs --checkpoint
        slurm_chains.main(["--out", str(tmp_path / "x.json"), "--stop-after", "1"])


@pytest.mark.slow
def test_a_stopped_run_resumes_to_the_draws_of_a_run_never_stopped(tmp_path):
    """Two processes with one device each, in segments of 40 draws: stopped after one segment (exit status 3,
    every process), then after one more, then resumed to the end; the draws equal, to the last bit, those of
    one process with two devices that was never stopped (no checkpoint: all the draws in one go)."""
    common = ["--num-chains", "4", "--draws", "120", "--warmup", "20", "--seed", "3", "--no-diagnostics",
              "--draws-out", str(tmp_path / "draws.npz")]
    whole = tmp_path / "whole.npz"
    run_processes(module="parallel_mcmc.programs.slurm_chains", num_processes=1, launcher="subprocess",
                  args=[*common[:-1], str(whole), "--out", str(tmp_path / "whole.json"), "--cpu-devices", "2"],
                  timeout=300)
    checkpoint = tmp_path / "chains.npz"
    resumable = [*common, "--out", str(tmp_path / "resumed.json"), "--cpu-devices", "1",
                 "--checkpoint", str(checkpoint), "--segment", "40"]
    for done in (40, 80):
        stopped = run_processes(module="parallel_mcmc.programs.slurm_chains", num_processes=2, launcher="subprocess",
                                args=[*resumable, "--stop-after", "1"], timeout=300, ok_statuses=(0, slurm_chains.STOPPED))
        assert stopped.statuses == (slurm_chains.STOPPED,) * 2, stopped.outputs
        assert f"stopped after draw {done} of 120" in stopped.outputs[1]
        saved = slurm_chains.load_checkpoint(checkpoint, num_chains=4, num_draws=120, seed=3)
        assert int(saved["done"]) == done and saved["draws/loc"].shape == (4, done)
        np.testing.assert_array_equal(saved["keys"], jax.random.key_data(slurm_chains.chain_keys(range(4), seed=3)))
        assert not (tmp_path / "resumed.json").exists() and not (tmp_path / "draws.npz").exists()
    resumed = run_processes(module="parallel_mcmc.programs.slurm_chains", num_processes=2, launcher="subprocess",
                            args=resumable, timeout=300)
    assert resumed.statuses == (0, 0) and "resuming at draw 80 of 120" in resumed.outputs[0]
    info = json.loads((tmp_path / "resumed.json").read_text())
    assert info["checkpoint"] == {"path": str(checkpoint), "resumed_at": 80, "segment": 40, "segments": 1}
    assert info["integration_steps"] == json.loads((tmp_path / "whole.json").read_text())["integration_steps"]
    assert int(slurm_chains.load_checkpoint(checkpoint)["done"]) == 120
    with np.load(whole) as expected, np.load(tmp_path / "draws.npz") as got:
        assert set(got) == set(expected) == {"loc", "log_scale"}
        for name in expected:
            np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


@pytest.mark.slow
def test_sigusr1_stops_the_run_after_its_segment_once_it_is_saved(tmp_path):
    """SLURM's warning, sent by hand: the program saves the segment it is in and exits with status 3."""
    import signal
    import subprocess
    import sys

    from parallel_mcmc.pools import free_port

    checkpoint = tmp_path / "chains.npz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "parallel_mcmc.programs.slurm_chains", "--out", str(tmp_path / "x.json"), "--draws",
         "20000", "--segment", "500", "--num-chains", "4", "--no-diagnostics", "--checkpoint", str(checkpoint),
         "--cpu-devices", "1", "--coordinator", f"127.0.0.1:{free_port()}", "--num-processes", "1", "--process-id", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while not checkpoint.exists() and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGUSR1)
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    done = int(slurm_chains.load_checkpoint(checkpoint)["done"])
    assert proc.returncode == slurm_chains.STOPPED, out
    assert "SIGUSR1: stopping after this segment" in out and f"stopped after draw {done} of 20000" in out, out
    assert 0 < done < 20000 and done % 500 == 0 and not (tmp_path / "x.json").exists()


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
