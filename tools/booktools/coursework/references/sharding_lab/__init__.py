"""The grader's twins of the exercises of ``parallel_mcmc.exercises.sharding_lab``, one module per exercise."""
