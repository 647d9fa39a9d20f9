"""The grader's twins of the exercises of ``parallel_mcmc.exercises.other_parallelism``, one module per exercise."""
