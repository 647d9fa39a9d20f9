"""Run the book's timed pages several times, quiet and with cores kept busy, and report every verdict.

``python -m booktools.timed_pages [--quiet 3] [--busy 1] [--out timed.json] [PAGE ...]`` executes each
page that calls the judge (:mod:`parallel_mcmc.measure`) in a fresh kernel, as ``make test`` does (timing
strict: a failure that persists after re-measuring raises), ``--quiet`` times in a row, then ``--busy``
times with one core kept busy by another process (:func:`booktools.busy.spin`). It prints, for every
pass and page, whether the page passed, its run time, and what its judge printed: the runs' ratios and
statuses, how many measurements each verdict took and the cores the process got. The exit status is the
number of page runs that failed (0: every pass of every page held).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from rich.console import Console
from rich.table import Table

from parallel_mcmc.measure import RETRIED, STRICT_ENV

from .busy import spin
from .notebooks import myst_notebooks, read

__all__ = ["PageRun", "timed_pages", "run_page", "verdicts_in", "main"]

ROOT = Path(__file__).resolve().parents[2]
HEAD = re.compile(r"(\d+) runs, (\d+) measurement\(s\); this process got ([\d.]+) of (\d+) cores")
RUN = re.compile(r"^(.+?): measured ([\d.,]+ m?s) \(spread (\d+)%\), predicted ([\d.,]+ m?s), "
                 r"predicted/measured ([\d.]+) \(fastest repeat ([\d.]+)\): "
                 r"(agrees|beats the model|a cost missing|far slower)( +FAILS)?$")


def _seconds(text: str) -> float:
    """``'12.3 ms'`` or ``'4.56 s'`` (as the judge prints them) in seconds."""
    number, unit = text.replace(",", "").split()
    return float(number) * (1e-3 if unit == "ms" else 1.0)


@dataclass
class PageRun:
    """One execution of one page: passed or not, seconds, and each verdict the page printed."""

    page: str
    condition: str
    passed: bool
    seconds: float
    verdicts: list[dict] = field(default_factory=list)
    error: str = ""


def timed_pages(root: Path = ROOT) -> list[Path]:
    """The chapters that hand their runs to the judge: through a declared experiment, or (older pages) directly."""
    return [p for p in myst_notebooks(root / "chapters") if "judge(" in p.read_text() or "Experiment(" in p.read_text()]


def verdicts_in(text: str) -> list[dict]:
    """The verdicts printed in ``text`` (``print(verdict)`` in a page): tries, cores got, each run's line
    (its measured median and predicted time in seconds, the spread of its repeats, the ratios, its status), and
    ``retried_for``, the failures that made the judge measure again, where there were any."""
    found: list[dict] = []
    for line in text.splitlines():
        head = HEAD.search(line)
        if head:
            found.append({"runs": int(head[1]), "tries": int(head[2]), "cores_got": float(head[3]),
                          "cores": int(head[4]), "rows": []})
            continue
        if line.strip().startswith(RETRIED) and found:  # a failure of an earlier measurement, not one of the runs
            found[-1].setdefault("retried_for", []).append(line.strip()[len(RETRIED):])
            continue
        row = RUN.match(line.strip())
        if row and found:
            found[-1]["rows"].append({"run": row[1], "measured_s": _seconds(row[2]), "spread": int(row[3]) / 100,
                                      "predicted_s": _seconds(row[4]), "ratio": float(row[5]),
                                      "fastest_ratio": float(row[6]), "status": row[7], "fails": bool(row[8])})
    return found


def _text_outputs(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(output["data"].get("text/plain", ""))
    return "\n".join(parts)


def run_page(path: Path, condition: str, timeout: int = 600) -> PageRun:
    """Execute ``path`` in a fresh kernel, in its own folder, with timing verdicts strict."""
    notebook = nbformat.from_dict(read(path))
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start, error = time.perf_counter(), ""
    try:
        client.execute(env={**os.environ, STRICT_ENV: "strict"})  # the kernel's environment, not this process's
    except CellExecutionError as exc:
        first_line = (str(getattr(exc, "evalue", "")) or str(exc)).strip().splitlines()[:1] or [""]
        error = f"{getattr(exc, 'ename', 'error')}: {first_line[0]}"[:300]
    seconds = time.perf_counter() - start
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    return PageRun(name, condition, not error, seconds, verdicts_in(_text_outputs(notebook)), error)


def _table(runs: list[PageRun]) -> Table:
    table = Table(title="timed pages: every pass (ratio = predicted / measured; tries = measurements the judge took)")
    for column in ("pass", "page", "result", "seconds", "tries", "cores got", "ratios", "statuses"):
        table.add_column(column)
    for run in runs:
        tries = ", ".join(str(v["tries"]) for v in run.verdicts)
        got = ", ".join(f"{v['cores_got']:.2f}" for v in run.verdicts)
        ratios = ", ".join(f"{r['ratio']:.2f}" for v in run.verdicts for r in v["rows"])
        statuses = sorted({r["status"] for v in run.verdicts for r in v["rows"]})
        table.add_row(run.condition, run.page.removeprefix("chapters/"), "passed" if run.passed else
                      f"FAILED: {run.error}", f"{run.seconds:.1f}", tries, got, ratios, ", ".join(statuses))
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.timed_pages", description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", type=int, default=3, help="passes with nothing else running (default 3)")
    parser.add_argument("--busy", type=int, default=1, help="passes with one core kept busy (default 1)")
    parser.add_argument("--out", type=Path, help="write every page run as JSON here")
    parser.add_argument("pages", nargs="*", type=Path, help="pages to run (default: every timed page)")
    args = parser.parse_args(argv)
    if args.quiet < 0 or args.busy < 0 or args.quiet + args.busy == 0:
        parser.error("ask for at least one pass: --quiet N and --busy N are counts of 0 or more")
    pages = [p.resolve() for p in args.pages] or timed_pages()
    missing = [str(p) for p in pages if not p.is_file()]
    if missing:
        parser.error(f"no such page: {', '.join(missing)}")
    console, runs = Console(width=200), []
    passes = [f"quiet {i + 1}" for i in range(args.quiet)] + [f"busy {i + 1}" for i in range(args.busy)]
    for condition in passes:
        spinner = None
        if condition.startswith("busy"):
            spinner = mp.get_context("spawn").Process(target=spin, daemon=True)
            spinner.start()
        try:
            for page in pages:
                run = run_page(page, condition)
                runs.append(run)
                console.print(f"{condition}: {run.page} {'passed' if run.passed else 'FAILED'} in {run.seconds:.1f} s"
                              + "".join(f"; tries {v['tries']}, cores got {v['cores_got']:.2f}" for v in run.verdicts))
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.join()
    console.print(_table(runs))
    if args.out:
        args.out.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    failed = sum(not r.passed for r in runs)
    console.print(f"{len(runs) - failed} of {len(runs)} page runs passed")
    return failed


if __name__ == "__main__":
    sys.exit(main())
