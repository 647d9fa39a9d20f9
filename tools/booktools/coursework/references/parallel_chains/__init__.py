"""The grader's twins of the exercises of ``parallel_mcmc.exercises.parallel_chains``, one module per exercise."""
