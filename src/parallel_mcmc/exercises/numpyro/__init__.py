"""Checks for the exercises of the part "Chains across devices with NumPyro".

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_correctrunner_fit": ["max_draws"],
    "ex_chainmethods_two_lengths": ["split_compile"],
    "ex_consensus_gaussian": ["gaussian_consensus"],
})
