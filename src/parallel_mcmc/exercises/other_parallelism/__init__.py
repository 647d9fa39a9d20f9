"""Checks for the exercises of the part *Other kinds of parallelism*.

Each function checks one exercise. It prints a one-line confirmation when the
answer is right and raises :class:`AssertionError` saying what is wrong (and
how to fix it) otherwise. The checks that take ``cases`` are also run by the
grader on inputs the chapter does not show.

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_sharded_gradient": ["sharded_gradient"],
    "ex_pt_pair_acceptance": ["pair_acceptance"],
    "ex_smc_next_temperature": ["next_temperature"],
})
