"""Checks for the exercises of the part "Ensemble samplers in parallel".

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_dask_cost_for_speedup": ["cost_for_speedup"],
    "ex_mpi_sharing_crossover": ["sharing_crossover"],
    "ex_pools_spawn_data": ["data_sent_once"],
    "ex_jax_way_noise": ["vectorized_log_prob"],
})
