"""The order in which ``grade(jobs=N)`` starts a whole book's chapters: the longest first.

With several jobs, the run ends when its last chapter does; a long chapter started last (the MPI one takes a
fifth of a whole book) would leave the other jobs idle meanwhile. :data:`GRADING_SECONDS` holds each chapter's
grading time on its slice, one at a time, measured on the book's 2-core machine with
``python -m booktools.coursework.class_timing --book`` (the table on the instructors' page). A figure that has
gone stale costs only some waiting at the end, never a grade; a submission named after no chapter (a class of
one chapter, ``ada.ipynb``) keeps its place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

#: Seconds to grade each chapter (by its file's stem), one at a time: class_timing --book, 2026-11-28.
GRADING_SECONDS = {
    "multi_process_jax": 20, "more_chains_than_devices": 18, "chains_that_never_wait": 15, "devices": 15,
    "process_pools": 14, "data_parallel_training": 12, "many_short_chains": 12, "consensus_monte_carlo": 10,
    "cost_model": 8, "one_chain_sharded_data": 8, "parallel_tempering": 8, "dask": 6, "tempered_smc": 6,
    "time_to_target": 6, "choosing_a_way": 5, "elliptical_slice": 5, "manual_parallelism": 5, "profiling": 5,
    "shared_trajectory_length": 5, "the_jax_way": 5, "a_correct_runner": 4, "automatic_parallelism": 4, "mclmc": 4,
    "chain_methods": 4, "explicit_sharding": 4, "two_axes": 4, "vmap_pmap_shard_map": 4, "arrays_and_shardings": 3,
    "mpi": 3, "slurm_jobs": 3,
}


def expected_seconds(path: str | Path) -> float:
    """The grading time :data:`GRADING_SECONDS` gives the chapter ``path`` is named after (0 for none)."""
    return float(GRADING_SECONDS.get(Path(path).stem, 0))


def longest_first(paths: Sequence[str | Path]) -> list[int]:
    """The indices of ``paths`` in the order to start them: the longest expected first, ties in the given order."""
    return sorted(range(len(paths)), key=lambda i: -expected_seconds(paths[i]))
