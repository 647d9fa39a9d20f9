"""The grader's twins of the exercises of ``parallel_mcmc.exercises.numpyro``, one module per exercise."""
