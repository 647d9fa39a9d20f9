"""make bench: the smoke size runs every group end to end and writes its table, its data and its plot."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from booktools.bench import SIZES, run

ROOT = Path(__file__).resolve().parents[2]


def test_unknown_size_is_refused():
    with pytest.raises(ValueError, match="size must be one of"):
        run("huge", "/nonexistent")


@pytest.mark.slow
def test_smoke_run_writes_table_json_and_plot(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "booktools.bench", "--size", "smoke", "--out", str(tmp_path)],
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
    baselines = {"BlackJAX NUTS": "one after another", "NumPyro": "sequential",
                 "emcee, 2 ms log-probability": "serial", "emcee, sinusoid": "NumPy, serial"}
    by = {(r["group"], r["method"]): r for r in rows}
    for r in rows:
        measured, predicted, ratio = float(r["measured_s"]), float(r["predicted_s"]), float(r["ratio"])
        assert measured > 0 and predicted > 0, r
        assert ratio == pytest.approx(predicted / measured, rel=1e-6), r
        base = by[(r["group"], baselines[r["group"]])]
        # one definition: the ideal is the model's own ratio, predicted over predicted; the speedup median over median
        assert float(r["ideal_speedup"]) == pytest.approx(float(base["predicted_s"]) / predicted, rel=1e-6), r
        assert float(r["speedup"]) == pytest.approx(float(base["measured_s"]) / measured, rel=1e-6), r
        assert r["status"] in {"agrees", "beats the model", "a cost missing", "far slower"}, r
        assert 1 <= int(r["tries"]) <= 3, r
    for group, method in baselines.items():
        assert float(by[(group, method)]["speedup"]) == float(by[(group, method)]["ideal_speedup"]) == 1.0
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["size"] == "smoke" and report["machine"]["physical_cores"] >= 1
    assert len(report["rows"]) == len(rows)
    assert (tmp_path / "bench.png").stat().st_size > 10_000
    assert set(SIZES) == {"smoke", "laptop", "large"}
