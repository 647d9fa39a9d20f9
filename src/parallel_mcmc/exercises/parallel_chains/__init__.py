"""Checks for the exercises of the part "Parallel chains".

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_machine_speedup": ["machine_speedup"],
    "ex_chains_faster_method": ["faster_method"],
    "ex_chains_spread_8": ["spread_chains"],
    "ex_chains_grouped_efficiency": ["grouped_efficiency"],
    "ex_chains_time_to_target": ["time_to_target"],
    "ex_chains_costliest_chain": ["costliest_chain"],
    "ex_mclmc_gradients_per_draw": ["gradients_per_draw"],
    "ex_slice_break_even": ["break_even_chains"],
})
