"""Time the grading of a class: one chapter, ``N`` submissions, one at a time and ``--jobs`` at once.

    python -m booktools.coursework.class_timing chapters/sharding_lab/arrays_and_shardings.md \\
        --submissions 100 --jobs 1 2 --out _build/class_timing.json

Each submission is the chapter's student edition answered with the book's own
solutions (every one earns full marks, so every exercise runs to its end), saved
as ``<folder>/sNNN/<chapter>.ipynb`` as a class would hand it in. The grader runs
as ``make grade`` runs it (``python -m booktools.coursework.grade``), once per
``--jobs`` value, and the wall time of the whole run is measured: the grader's
start, every sandbox, kernel and verdict runner included. The record (times, per
submission, the machine's cores and load) is printed and written as JSON; the
page for instructors quotes it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from .edition import find_book_root, make_student_notebook, with_answers
from .student import ipynb_as_saved, setup_cell_adder

__all__ = ["write_class", "time_grading", "main"]


def write_class(chapter: Path, folder: Path, count: int, root: Path) -> list[Path]:
    """``count`` submissions of ``chapter`` answered with the book's solutions, in ``folder``."""
    if count < 1:
        raise ValueError(f"a class needs at least one submission, not {count}")
    edition = make_student_notebook(chapter, root)
    if not edition.exercises:
        raise ValueError(f"{chapter} has no exercises: choose a chapter with exercises to time the grading of")
    answered = with_answers(setup_cell_adder(root)(copy.deepcopy(edition.notebook)),
                            {ex.label: ex.solution_code for ex in edition.exercises})
    files = []
    for k in range(count):
        path = folder / f"s{k + 1:03d}" / f"{chapter.stem}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(ipynb_as_saved(answered), path)
        files.append(path)
    return files


def time_grading(files: list[Path], jobs: int, root: Path, out: Path) -> dict:
    """Grade ``files`` with ``--jobs jobs``; the wall time and the grades' total."""
    grades = out / f"grades-jobs{jobs}.json"
    cmd = [sys.executable, "-m", "booktools.coursework.grade", "--book", str(root), "--json", str(grades),
           "--jobs", str(jobs), *map(str, files)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the grader failed with --jobs {jobs} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    report = json.loads(grades.read_text())
    scores = [(s["score"], s["total"]) for s in report["submissions"]]
    return {"jobs": jobs, "seconds": seconds, "per_submission": seconds / len(files),
            "full_marks": sum(score == possible for score, possible in scores), "submissions": len(files)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapter", type=Path, help="a chapter with exercises")
    parser.add_argument("--submissions", type=int, default=100, help="the size of the class (default 100)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="the --jobs values to time (default 1 2)")
    parser.add_argument("--out", type=Path, default=None, help="write the record here as JSON")
    args = parser.parse_args(argv)
    root = find_book_root(args.chapter.resolve().parent)
    with tempfile.TemporaryDirectory(prefix="class-timing-") as tmp:
        files = write_class(args.chapter.resolve(), Path(tmp) / "submissions", args.submissions, root)
        runs = [time_grading(files, jobs, root, Path(tmp)) for jobs in args.jobs]
    record = {"chapter": str(args.chapter), "submissions": args.submissions, "cores": os.cpu_count(),
              "load_before": os.getloadavg()[0], "runs": runs}
    for run in runs:
        print(f"--jobs {run['jobs']}: {run['seconds']:.1f} s for {run['submissions']} submissions, "
              f"{run['per_submission']:.2f} s each; full marks: {run['full_marks']} of {run['submissions']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2))
    return 0 if all(run["full_marks"] == run["submissions"] for run in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
