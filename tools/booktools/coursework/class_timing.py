"""Time the grading of a class: one chapter, ``N`` submissions, one at a time and ``--jobs`` at once;
or one student's whole-book submission (``--book``), chapter by chapter.

    python -m booktools.coursework.class_timing chapters/sharding_lab/arrays_and_shardings.md \\
        --submissions 100 --jobs 1 2 --out _build/class_timing.json
    python -m booktools.coursework.class_timing --book --jobs 1 2 \\
        --whole chapters/ensemble/mpi.md --out _build/book_timing.json

Each submission is the chapter's student edition answered with the book's own
solutions (every one earns full marks, so every exercise runs to its end), saved
as ``<folder>/sNNN/<chapter>.ipynb`` as a class would hand it in. The grader runs
as ``make grade`` runs it (``python -m booktools.coursework.grade``), once per
``--jobs`` value, and the wall time of the whole run is measured: the grader's
start, every sandbox, kernel and verdict runner included. The record (times, per
submission, the machine's cores and load) is printed and written as JSON; the
page for instructors quotes it.

With ``--book``, the submission is one student's whole book: one notebook per
chapter with exercises, each answered with the book's solutions, graded in one run
per ``--jobs`` value (on the chapters' slices, as the grader does by default), and
``--whole`` chapters (all of them if none is named) graded again whole. It prints a
Markdown table, a row per chapter: its exercises, its grading seconds sliced (one job)
and whole, the code cells the slice leaves out, and what grading it needs (read from
the cells that run: MPI, the SLURM cluster, other processes, the CPU devices).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from .edition import exercise_chapters, find_book_root, make_student_notebook, with_answers
from .student import ipynb_as_saved, setup_cell_adder

__all__ = ["write_class", "time_grading", "write_book", "needs", "time_book", "book_table", "main"]


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


def time_grading(files: list[Path], jobs: int, root: Path, out: Path, whole: bool = False) -> dict:
    """Grade ``files`` with ``--jobs jobs`` (and ``--whole``); the wall time, the grades' total and each
    submission's report (``reports``: the grader's JSON, one per file, in order)."""
    grades = out / f"grades-jobs{jobs}{'-whole' if whole else ''}.json"
    cmd = [sys.executable, "-m", "booktools.coursework.grade", "--book", str(root), "--json", str(grades),
           "--jobs", str(jobs), *(["--whole"] if whole else []), *map(str, files)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the grader failed with --jobs {jobs} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    report = json.loads(grades.read_text())
    scores = [(s["score"], s["total"]) for s in report["submissions"]]
    return {"jobs": jobs, "whole": whole, "seconds": seconds, "per_submission": seconds / len(files),
            "full_marks": sum(score == possible for score, possible in scores), "submissions": len(files),
            "reports": report["submissions"]}


def write_book(root: Path, folder: Path) -> dict[Path, Path]:
    """One student's whole-book submission in ``folder``: each chapter with exercises, its student edition
    answered with the book's solutions, as ``<folder>/<chapter>.ipynb``; chapter -> file."""
    files = {}
    add_setup = setup_cell_adder(root)
    for chapter in exercise_chapters(root):
        edition = make_student_notebook(chapter, root)
        answered = with_answers(add_setup(copy.deepcopy(edition.notebook)),
                                {ex.label: ex.solution_code for ex in edition.exercises})
        path = folder / chapter.relative_to(root / "chapters").with_suffix(".ipynb")
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(ipynb_as_saved(answered), path)
        files[chapter] = path
    return files


# What a cell that runs may need of the grading machine, by what its source uses: MPI's launcher or mpi4py,
# a SLURM client command run (a job script only read needs no cluster), processes besides the kernel's, a
# TCP server on the loopback interface.
_NEEDS = [("MPI", re.compile(r"\bmpi4py\b|\bmpirun\b|\bmpiexec\b")),
          ("SLURM", re.compile(r"launcher=[\"']srun|^\s*!\s*(srun|sbatch|salloc)\b|\[\s*[\"'](srun|sbatch|salloc)[\"']", re.M)),
          ("processes", re.compile(r"jax\.distributed|\bmultiprocessing\b|ProcessPool|\bsubprocess\b|run_processes")),
          ("loopback TCP", re.compile(r"LocalCluster|127\.0\.0\.1"))]


def needs(sources: list[str]) -> str:
    """What running cells with these ``sources`` needs: MPI, the SLURM cluster, other processes (besides the
    kernel), and the CPU devices the chapter asks for (``8 dev``)."""
    text = "\n".join(sources)
    found = [name for name, pattern in _NEEDS if pattern.search(text)]
    devices = re.search(r"use_cpu_devices\(\s*(\d+)\s*\)", text)
    if devices:
        found.append(f"{devices.group(1)} dev")
    return ", ".join(found)


def _what_runs(chapter: Path, submission: Path, root: Path) -> tuple[int, list[str], list[str], int]:
    """The chapter's assembled notebook for ``submission`` (as the grader makes it): the number of exercises,
    the code cells that run sliced, those that run whole, and the number the slice leaves out."""
    from .grade.assemble import assemble_submission, slice_submission
    from .grade.read import read_submission

    with tempfile.TemporaryDirectory() as tmp:
        nb, *_ = assemble_submission(read_submission(submission), chapter, root, Path(tmp), 0)
    whole = [c.source for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    dropped, _ = slice_submission(nb)
    sliced = [c.source for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    return len(make_student_notebook(chapter, root).exercises), sliced, whole, len(dropped)


def time_book(root: Path, jobs: list[int], whole: list[Path] | None, folder: Path) -> dict:
    """Time one whole-book submission: graded sliced with each ``jobs``, the ``whole`` chapters whole (one job)."""
    files = write_book(root, folder / "submission")
    chapters = list(files)
    runs = [time_grading(list(files.values()), n, root, folder) for n in jobs]
    whole_chapters = [c for c in chapters if whole is not None and (not whole or c in whole)]
    whole_run = time_grading([files[c] for c in whole_chapters], 1, root, folder, whole=True) if whole_chapters else None
    rows = []
    for k, chapter in enumerate(chapters):
        exercises, sliced, every, dropped = _what_runs(chapter, files[chapter], root)
        row = {"chapter": chapter.relative_to(root).as_posix(), "exercises": exercises, "cells_skipped": dropped,
               "needs": needs(sliced), "needs_whole": needs(every),
               "seconds": {f"jobs{run['jobs']}": run["reports"][k]["seconds"] for run in runs},
               "full_marks": all(run["reports"][k]["score"] == run["reports"][k]["total"] for run in runs),
               "graded_whole": [p for run in runs for p in run["reports"][k]["problems"] if p.startswith("graded whole")]}
        if chapter in whole_chapters:
            rep = whole_run["reports"][whole_chapters.index(chapter)]
            row["seconds_whole"] = rep["seconds"]
            row["full_marks"] = row["full_marks"] and rep["score"] == rep["total"]
        rows.append(row)
    for run in runs:
        run.pop("reports")
    if whole_run:
        whole_run.pop("reports")
    return {"chapters": rows, "runs": runs, "whole_run": whole_run}


def book_table(record: dict) -> str:
    """The record of :func:`time_book` as a Markdown table, a row per chapter, then the totals."""
    jobs = [run["jobs"] for run in record["runs"]]
    first = f"jobs{jobs[0]}" if jobs else None
    lines = ["| chapter | exercises | s sliced | s whole | cells skipped | needs |", "|---|--:|--:|--:|--:|---|"]
    for row in record["chapters"]:
        whole = f"{row['seconds_whole']:.0f}" if "seconds_whole" in row else ""
        sliced = f"{row['seconds'][first]:.0f}" if first else ""
        mark = "" if row["full_marks"] else " (not full marks)"
        lines.append(f"| {row['chapter'].removeprefix('chapters/').removesuffix('.md')}{mark} | {row['exercises']} | "
                     f"{sliced} | {whole} | {row['cells_skipped']} | {row['needs']} |")
    out = "\n".join(lines)
    for run in record["runs"]:
        out += (f"\n\nwhole book, sliced, --jobs {run['jobs']}: {run['seconds']:.1f} s "
                f"({run['full_marks']} of {run['submissions']} chapters full marks)")
    if record.get("whole_run"):
        run = record["whole_run"]
        out += f"\nthe {run['submissions']} chapter(s) graded whole, --jobs 1: {run['seconds']:.1f} s"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapter", type=Path, nargs="?", help="a chapter with exercises (not with --book)")
    parser.add_argument("--book", action="store_true",
                        help="time one student's whole-book submission, a notebook per chapter with exercises")
    parser.add_argument("--whole", type=Path, nargs="*", default=None,
                        help="with --book: also grade these chapters whole, one job (every chapter if none is named)")
    parser.add_argument("--submissions", type=int, default=100, help="the size of the class (default 100)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="the --jobs values to time (default 1 2)")
    parser.add_argument("--out", type=Path, default=None, help="write the record here as JSON")
    args = parser.parse_args(argv)
    if args.book:
        return _main_book(args)
    if args.chapter is None:
        parser.error("name a chapter, or pass --book")
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


def _main_book(args) -> int:
    root = find_book_root(args.chapter.resolve().parent if args.chapter else None)
    whole = None if args.whole is None else [p.resolve() for p in args.whole]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="book-timing-") as tmp:
        record = time_book(root, args.jobs, whole, Path(tmp))
    record |= {"cores": os.cpu_count(), "load_before": load, "load_after": os.getloadavg()[0],
               "date": time.strftime("%Y-%m-%d", time.gmtime())}
    print(book_table(record))
    print(f"{record['cores']} cores, load average {load:.2f} before, {record['load_after']:.2f} after")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2))
    return 0 if all(row["full_marks"] for row in record["chapters"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
