"""The grader's twins of the exercises of ``parallel_mcmc.exercises.getting_started``, one module per exercise."""
