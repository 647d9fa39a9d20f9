"""The grader's twins of the exercises of ``parallel_mcmc.exercises.ensemble``, one module per exercise."""
