"""make bench: the smoke size runs every group end to end and writes its table, its data and its plot."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from parallel_mcmc import costmodel
from parallel_mcmc.bench import SIZES, _pool_model, run

ROOT = Path(__file__).resolve().parents[1]


def test_pool_model_adds_one_round_per_map():
    # a map of 32 tasks and two of 16 on 2 workers and 2 cores, 1 ms a task
    expected = 16e-3 + 8e-3 + 8e-3
    assert _pool_model([32, 16, 16], 1e-3, workers=2, cores=2) == pytest.approx(expected)
    assert _pool_model([16], 1e-3, workers=2, cores=2, overhead_per_task=1e-4) == pytest.approx(
        costmodel.pool_time(16, 1, 1e-3, 2, 2, overhead_per_task=1e-4))
    # a process pool's map sends chunks of 2 here (16 tasks, 2 workers); an MPI pool one task at a time
    assert _pool_model([16], 1e-3, workers=2, cores=2, chunked=True, overhead_per_task=1e-4) == pytest.approx(
        costmodel.pool_time(16, 1, 1e-3, 2, 2, overhead_per_task=1e-4, chunksize=2))


def test_unknown_size_is_refused():
    with pytest.raises(ValueError, match="size must be one of"):
        run("huge", "/nonexistent")


@pytest.mark.slow
def test_smoke_run_writes_table_json_and_plot(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "parallel_mcmc.bench", "--size", "smoke", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ratio" in proc.stdout
    with open(tmp_path / "bench.csv") as f:
        rows = list(csv.DictReader(f))
    groups = {r["group"] for r in rows}
    assert {"BlackJAX NUTS", "NumPyro", "emcee, 2 ms log-probability", "emcee, sinusoid"} <= groups
    methods = {r["method"] for r in rows}
    assert {"one after another", "vmap", "pmap(vmap)", "shard_map + lax.map", "sequential", "vectorized",
            "parallel", "serial", "NumPy, serial", "JAX, vectorize=True"} <= methods
    for r in rows:
        measured, predicted, ratio = float(r["measured_s"]), float(r["predicted_s"]), float(r["ratio"])
        assert measured > 0 and predicted > 0, r
        assert ratio == pytest.approx(predicted / measured, rel=1e-6), r
        # every speedup's ideal is the baseline's time over this row's prediction
        assert float(r["speedup"]) / float(r["ideal_speedup"]) == pytest.approx(ratio, rel=1e-6), r
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["size"] == "smoke" and report["machine"]["physical_cores"] >= 1
    assert len(report["rows"]) == len(rows)
    assert (tmp_path / "bench.png").stat().st_size > 10_000
    assert set(SIZES) == {"smoke", "laptop", "large"}
