"""The example models of the book, one module per model.

Each module holds a model's data (drawn from fixed keys or seeds) and its
log-density, so that chapters, worker processes and tests share one
definition. Importing this package does not start JAX.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {}, modules=["funnel", "normal", "regression", "sinusoid"])
