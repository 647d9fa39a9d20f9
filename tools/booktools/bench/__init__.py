"""``make bench``: the book's ways of running chains at larger sizes, each measured beside the cost model.

``python -m booktools.bench [--size smoke|laptop|large] [--out DIR]``

Three groups of rows, each timed with compilation left out, against the
prediction of :mod:`parallel_mcmc.measure` built from costs measured in the
same run (never from the timed runs themselves):

- **BlackJAX NUTS** on :mod:`parallel_mcmc.models.normal`, chains one after
  another, ``vmap``, ``pmap`` of ``vmap`` and ``shard_map`` with ``lax.map``
  over every device. The step cost is measured at each width on a calibration
  run with other keys; the step counts are the chains' own.
- **NumPyro chain methods** (``sequential``, ``vectorized``, ``parallel``) on
  the regression of :mod:`parallel_mcmc.models.regression`, warmup and
  sampling, with NumPyro's NUTS kernel timed alone for the step cost. NumPyro
  compiles again on every run, so a run's time is its wall time less the time
  spent compiling; JAX's CPU client runs without asynchronous dispatch here, so
  that no compilation overlaps a running computation (NumPyro compiles its
  post-processing while the sampling loop runs, and taking that out made
  ``vectorized`` look 1.4x faster than the model's best case).
- **emcee**: a log-probability of known CPU cost, serially, with a
  ``multiprocessing`` pool and (where ``mpiexec`` is found) with the MPI pool
  whose master shares the work; and the sinusoid model in NumPy serially
  against one vectorised JAX call per half ensemble, with emcee's own work
  timed on a log-probability that costs next to nothing.

Each group is judged as the book's pages are (:func:`parallel_mcmc.measure.judge`):
its runs and their model's calibration are measured together, and measured
again while a rule fails. It writes ``bench.csv`` and ``bench.json`` (the rows
and a description of the machine) and ``bench.png`` (measured against
predicted seconds) to ``--out``, and prints the table. A row's ``ratio`` is
predicted over measured time, its ``status`` the judge's verdict ("agrees",
"beats the model": the model is wrong, "a cost missing": ``note`` gives what
the run measured about it, "far slower"), its ``ideal_speedup`` the model's own
ratio (the group's baseline predicted over this row's predicted) beside the
measured ``speedup`` (median over median). The CPU devices are forced to one per physical
core; on a GPU machine JAX's GPUs are used as they are.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

import jax
import matplotlib
import numpy as np
from rich.console import Console
from rich.table import Table

from parallel_mcmc.devices import PLATFORM_ENV, physical_cores, use_cpu_devices

from .ensemble import bench_emcee
from .nuts import bench_numpyro, bench_nuts
from .sizes import Row, SIZES

__all__ = ["BenchSize", "SIZES", "Row", "machine", "plot", "run", "print_table", "main"]


def machine() -> dict[str, Any]:
    return {
        "platform": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "physical_cores": physical_cores(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def plot(rows: Sequence[Row], path: Path) -> None:
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after choosing the back-end that needs no display

    groups = list(dict.fromkeys(r.group for r in rows))
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.6), squeeze=False)
    for ax, group in zip(axes[0], groups):
        mine = [r for r in rows if r.group == group]
        x = np.arange(len(mine))
        ax.bar(x - 0.2, [r.measured_s for r in mine], width=0.4, label="measured")
        ax.bar(x + 0.2, [r.predicted_s for r in mine], width=0.4, label="predicted (best case)",
               color="lightgray", edgecolor="gray")
        for xi, r in zip(x, mine):
            ax.annotate(f"{r.ratio:.2f}", (xi + 0.2, r.predicted_s), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x, [r.method for r in mine], rotation=20, ha="right", fontsize=8)
        ax.set_title(group, fontsize=10)
        ax.set_ylabel("seconds (median)")
    axes[0][0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(size: str = "laptop", out: str | Path = "_build/bench") -> list[Row]:
    """Run every group at ``size``; write bench.csv, bench.json and bench.png to ``out``; return the rows."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}.")
    cores = physical_cores()
    # Without asynchronous dispatch, JAX's CPU client runs each computation before returning, so no
    # compilation overlaps a run: NumPyro traces and compiles its post-processing while its sampling
    # loop still runs, and taking compilation out of such a run would take running time out with it.
    # The CPU client reads this when it starts: set it first.
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    # one CPU device per core, or the accelerators chosen with PARALLEL_MCMC_PLATFORM as they are
    use_cpu_devices(1 if os.environ.get(PLATFORM_ENV) else cores)
    num_devices = jax.device_count()
    params = SIZES[size]
    rows = bench_nuts(params, num_devices, cores) + bench_numpyro(params, num_devices, cores) + bench_emcee(params, cores)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
    (out / "bench.json").write_text(json.dumps({"size": size, "machine": machine(),
                                                "rows": [asdict(r) for r in rows]}, indent=2))
    plot(rows, out / "bench.png")
    return rows


def print_table(rows: Sequence[Row]) -> None:
    table = Table(title="measured against the cost model (ratio = predicted / measured; "
                        "ideal = the model's own ratio, predicted over predicted)")
    for col in ("group", "method", "chains", "devices", "measured", "predicted", "ratio", "verdict", "tries",
                "speedup", "ideal", "note"):
        table.add_column(col)
    for r in rows:
        table.add_row(r.group, r.method, str(r.chains), str(r.devices), f"{r.measured_s:.3f} s (±{r.spread:.0%})",
                      f"{r.predicted_s:.3f} s", f"{r.ratio:.2f}", r.status, str(r.tries), f"{r.speedup:.2f}x",
                      f"{r.ideal_speedup:.2f}x", r.note)
    Console(width=200).print(table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=list(SIZES), default="laptop",
                        help="smoke: seconds (the test suite's run); laptop: about a minute or two; large: longer")
    parser.add_argument("--out", default="_build/bench", help="folder for bench.csv, bench.json and bench.png")
    args = parser.parse_args(argv)
    rows = run(args.size, args.out)
    print_table(rows)
    print(f"wrote {Path(args.out) / 'bench.csv'}, bench.json and bench.png")
    return 0



if __name__ == "__main__":
    sys.exit(main())
