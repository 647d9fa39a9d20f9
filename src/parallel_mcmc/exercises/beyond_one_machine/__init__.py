"""Checks for the exercises of the part "Beyond one machine": many processes as one JAX program, and SLURM jobs.

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_processes_chains": ["my_chains"],
    "ex_processes_group_size": ["best_group"],
    "ex_slurm_job_header": ["job_header", "sbatch_header_options", "slurm_seconds"],
    "ex_processes_combine": ["combine_chains"],
})
