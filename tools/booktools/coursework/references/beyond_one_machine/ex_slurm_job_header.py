"""The grader's twin of ``parallel_mcmc.exercises.beyond_one_machine.ex_slurm_job_header`` (exercise ``ex-slurm-job-header``): its reference answer, unseen inputs and calls."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["job_header", "CHECK", "REFERENCE", "UNSEEN", "CALLS"]


def _job_options(nodes: int, gpus_per_node: int, cores_per_node: int, num_draws: int, seconds_per_draw: float,
                 start_up: float, margin: float) -> dict:
    """What a chains job with one process per GPU asks for: every task sees its node's GPUs, an equal whole
    share of the cores, and the estimated run with its margin, in whole minutes rounded up."""
    seconds = (start_up + num_draws * seconds_per_draw) * (1 + margin)
    return {"nodes": nodes, "ntasks_per_node": gpus_per_node, "gpus_per_node": gpus_per_node,
            "cpus_per_task": cores_per_node // gpus_per_node, "minutes": int(np.ceil(seconds / 60 - 1e-9))}


def job_header(nodes: int, gpus_per_node: int, cores_per_node: int, num_draws: int, seconds_per_draw: float,
               start_up: float, margin: float) -> str:
    """The #SBATCH lines of that job."""
    job = _job_options(nodes, gpus_per_node, cores_per_node, num_draws, seconds_per_draw, start_up, margin)
    days, minutes = divmod(job["minutes"], 24 * 60)
    return "\n".join([f"#SBATCH --nodes={nodes}", f"#SBATCH --ntasks-per-node={gpus_per_node}",
                      f"#SBATCH --gpus-per-node={gpus_per_node}", f"#SBATCH --cpus-per-task={job['cpus_per_task']}",
                      f"#SBATCH --time={days}-{minutes // 60:02d}:{minutes % 60:02d}:00"])


def _unseen(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        gpus = int(rng.choice([2, 4, 8]))
        args = (int(rng.integers(1, 9)), gpus, gpus * int(rng.integers(2, 17)) + int(rng.integers(0, gpus)),
                int(rng.integers(10**4, 10**8)), float(rng.uniform(1e-5, 1e-2)), float(rng.uniform(10, 600)),
                float(rng.choice([0.1, 0.15, 0.2, 0.25, 0.5])))
        cases.append((args, _job_options(*args)))
    return {"cases": cases}


#: The check this twin answers for.
CHECK = "parallel_mcmc.exercises.beyond_one_machine.job_header"

#: The grader's reference answer (None where the check compares with the chapter's own values).
REFERENCE: Callable[..., Any] | None = job_header

#: (rng) -> keyword arguments of the check that bring inputs the chapter never shows (None: it takes none).
UNSEEN: Callable[[np.random.Generator], dict[str, Any]] | None = _unseen

#: (index of the learner's function among the check's arguments, keyword arguments -> the calls the check
#: makes of it with those unseen inputs), or None.
CALLS: tuple[int, Callable[[dict], list[tuple]]] | None = (0, lambda kw: [tuple(a) for a, _ in kw["cases"]])
