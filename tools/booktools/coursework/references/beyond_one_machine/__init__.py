"""The grader's twins of the exercises of ``parallel_mcmc.exercises.beyond_one_machine``, one module per exercise."""
