"""``make gpu-run``: the book's measurements on one GPU, prepared here and run there in one command.

The GPU machine the book prepares for has Python 3.12 with jax 0.11.2 (CUDA) and numpyro preinstalled, but no
BlackJAX, emcee, ArviZ or schwimmbad, and no network. So the run is made in two steps:

1. **Here** (``python -m booktools.gpu_run prepare``, run by ``make gpu-run``): download the pure-Python wheels the
   machine lacks, at the versions ``requirements.txt`` pins, into ``_build/gpu-run/wheels`` (about 9 MB), and write
   ``_build/gpu-run/manifest.json``.
2. **There**, from the repository root, with ``_build/gpu-run`` carried along::

       python3 -m pip install -q --no-index --no-deps --target /tmp/site _build/gpu-run/wheels/*.whl
       PYTHONPATH=/tmp/site:src:tools python3 -m booktools.gpu_run device --out $OUT

   ``device`` runs each case of :mod:`booktools.gpu_run.cases` in its own process, in the order of
   :data:`CASE_LIMITS`, each with its time limit and all inside ``--budget`` seconds (540: 9 minutes), then
   ``make bench``'s benchmark with what time is left. It writes ``summary.json`` (every figure, the device, the
   versions, each case's status and seconds), ``log.txt`` (every case's output) and the benchmark's ``bench.png``
   to ``--out``: three files.

The result is kept as ``results/gpu/<date>-<gpu>.json`` (``python -m booktools.gpu_run keep SUMMARY``); pages show its
figures in an "On one GPU" box through :func:`parallel_mcmc.measure.gpu_figures`, and show none where no run
exists. ``device --dry-run`` runs everything at toy sizes on the CPU: ``make test`` does (tests/tools/test_gpu_run.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DIR = ROOT / "_build" / "gpu-run"
RESULTS = ROOT / "results" / "gpu"

#: The packages the GPU machine lacks, as requirements.txt pins them (pure Python: one wheel fits every machine).
WHEELS = ("blackjax", "emcee", "schwimmbad", "dill", "multiprocess", "arviz", "arviz-base", "arviz-stats",
          "arviz-plots", "xarray", "xarray-einstats")

#: Each case's limit in seconds on the GPU, in the order they run (the most telling first).
CASE_LIMITS = {"device": 60, "state_machine": 150, "smc_work": 120, "vmap_shard_map": 120}

#: The benchmark (``make bench``) runs last, with what is left of the budget, when at least this much is.
BENCH_LEAST = 90


def pinned(names: Sequence[str] = WHEELS, requirements: Path = ROOT / "requirements.txt") -> list[str]:
    """``name==version`` for each of ``names``, as ``requirements`` pins it.

    Raises
    ------
    LookupError
        If a name is not pinned there.
    """
    pins = {}
    for line in requirements.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line)
        if match:
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    missing = [n for n in names if re.sub(r"[-_.]+", "-", n).lower() not in pins]
    if missing:
        raise LookupError(f"{missing} are not pinned in {requirements}: pin them (make pins) before a GPU run.")
    return [f"{n}=={pins[re.sub(r'[-_.]+', '-', n).lower()]}" for n in names]


def prepare(out: Path = DEFAULT_DIR, download: bool = True) -> Path:
    """Write the folder a GPU run carries: the wheels the machine lacks and ``manifest.json``."""
    wheels = out / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    specs = pinned()
    if download:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64",
                        "--platform", "manylinux2014_x86_64", "-d", str(wheels), *specs], check=True)
    manifest = {"prepared": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wheels": specs,
                "files": sorted(p.name for p in wheels.glob("*.whl")), "cases": CASE_LIMITS}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = sum(p.stat().st_size for p in wheels.glob("*.whl")) / 2**20
    print(f"{out}: {len(manifest['files'])} wheels, {size:.1f} MiB. On the GPU machine, from the repository root:\n"
          f"  python3 -m pip install -q --no-index --no-deps --target /tmp/site {os.path.relpath(out, ROOT)}/wheels/*.whl"
          f" && PYTHONPATH=/tmp/site:src:tools python3 -m booktools.gpu_run device --out $OUT")
    return out


def _run(command: list[str], limit: float, log, env: dict) -> tuple[str, float]:
    """Run ``command`` with a time limit, its output appended to ``log``; return its status and seconds."""
    start = time.perf_counter()
    log.write(f"\n$ {' '.join(command)}  (limit {limit:.0f} s)\n")
    log.flush()
    try:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=limit, env=env, cwd=ROOT)
        status = "ok" if done.returncode == 0 else f"failed (exit {done.returncode})"
    except subprocess.TimeoutExpired:
        status = f"timed out after {limit:.0f} s"
    seconds = time.perf_counter() - start
    log.write(f"-> {status} in {seconds:.1f} s\n")
    log.flush()
    return status, seconds


def device(out: Path, budget: float = 540.0, dry_run: bool = False, bench: bool = True) -> dict:
    """Run every case, then the benchmark, inside ``budget`` seconds; write ``summary.json`` and ``log.txt``."""
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-run-"))  # each case's own file; only the summary comes back
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
           "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT / "src"),
                                                       str(ROOT / "tools")]))}
    started = time.perf_counter()
    summary: dict = {"dry_run": dry_run, "budget_s": budget, "cases": {}}
    with open(out / "log.txt", "w") as log:
        for name, limit in CASE_LIMITS.items():
            left = budget - (time.perf_counter() - started)
            if left < 10:
                summary["cases"][name] = {"status": "not run: the budget was spent"}
                continue
            target = work / f"{name}.json"
            command = [sys.executable, "-m", "booktools.gpu_run.cases", name, "--out", str(target)]
            status, seconds = _run(command + (["--dry-run"] if dry_run else []), min(limit, left), log, env)
            entry = {"status": status, "seconds": round(seconds, 1)}
            if status == "ok":
                entry["figures"] = json.loads(target.read_text())
            summary["cases"][name] = entry
        left = budget - (time.perf_counter() - started)
        if bench and left >= (20 if dry_run else BENCH_LEAST):
            bench_env = {**env, "PARALLEL_MCMC_PLATFORM": "" if dry_run else "gpu"}
            command = [sys.executable, "-m", "booktools.bench", "--size", "smoke" if dry_run else "laptop",
                       "--out", str(work / "bench")]
            status, seconds = _run(command, left - 5, log, bench_env)
            entry = {"status": status, "seconds": round(seconds, 1)}
            if (work / "bench" / "bench.json").exists():
                entry["figures"] = json.loads((work / "bench" / "bench.json").read_text())
                shutil.copy(work / "bench" / "bench.png", out / "bench.png")
            summary["cases"]["bench"] = entry
    summary["device"] = summary["cases"].get("device", {}).get("figures", {})
    summary["seconds"] = round(time.perf_counter() - started, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    for name, entry in summary["cases"].items():
        print(f"{name:>16}: {entry['status']} ({entry.get('seconds', 0)} s)")
    return summary


def keep(summary_file: Path, results: Path = RESULTS) -> Path:
    """Store a GPU run's summary as ``results/gpu/<date>-<gpu>.json``.

    Raises
    ------
    ValueError
        If the summary is a dry run or names no GPU: only a real run on a GPU is kept.
    """
    summary = json.loads(Path(summary_file).read_text())
    gpu = summary.get("device", {}).get("gpu", "none")
    if summary.get("dry_run") or gpu == "none":
        raise ValueError(f"{summary_file} is a dry run or ran on no GPU (gpu: {gpu!r}): nothing to keep.")
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    target = results / f"{summary['device']['date']}-{slug}.json"
    results.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(summary, indent=1) + "\n")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.gpu_run", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="download the wheels the GPU machine lacks into _build/gpu-run")
    p.add_argument("--out", type=Path, default=DEFAULT_DIR)
    d = sub.add_parser("device", help="run the cases and the benchmark (on the GPU machine)")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--budget", type=float, default=540.0, help="seconds for everything (default 540)")
    d.add_argument("--dry-run", action="store_true", help="toy sizes on the CPU, to test the run")
    d.add_argument("--no-bench", action="store_true", help="leave the benchmark out")
    k = sub.add_parser("keep", help="store a GPU run's summary.json in results/gpu/")
    k.add_argument("summary", type=Path)
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.out)
    elif args.command == "device":
        summary = device(args.out, args.budget, args.dry_run, bench=not args.no_bench)
        return 0 if all(e["status"] == "ok" for e in summary["cases"].values()) else 1
    else:
        print(keep(args.summary))
    return 0
