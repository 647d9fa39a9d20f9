"""Helpers for *Parallel MCMC with JAX*: what the chapters import, and nothing else.

Modules, one idea each:

- :mod:`parallel_mcmc.devices`: how many devices JAX sees, and a report of them.
- :mod:`parallel_mcmc.validate`: the argument checks every helper shares.
- :mod:`parallel_mcmc.timing`: timings with compilation left out, speedups beside their ideal, compile time.
- :mod:`parallel_mcmc.costmodel`: the cost model: predicted times from measured step costs, cores and step counts.
- :mod:`parallel_mcmc.judge`: every timing threshold: verdicts on measured runs beside the model, re-measured before a failure.
- :mod:`parallel_mcmc.hlo`: what a compiled program does, read from its text (collectives, loops, their operands).
- :mod:`parallel_mcmc.xla_threads`: how many threads XLA's CPU client uses, and a worker limited to one.
- :mod:`parallel_mcmc.plots`: the plots that recur (speedups, scaling, NUTS steps per draw).
- :mod:`parallel_mcmc.chains`: BlackJAX chain runners (one after another, lockstep, over a mesh).
- :mod:`parallel_mcmc.lockstep`: integration-step accounting, what lockstep costs.
- :mod:`parallel_mcmc.diagnostics`: draws to ArviZ, for R-hat and ESS; nested R-hat (from draws or summaries) and its threshold.
- :mod:`parallel_mcmc.numpyro_runner`: a NumPyro runner that spreads chains over devices.
- :mod:`parallel_mcmc.consensus`: consensus Monte Carlo (data shards, sub-posteriors, combination).
- :mod:`parallel_mcmc.process_group`: start a group of processes that form one JAX program (``jax.distributed``).
- :mod:`parallel_mcmc.slurm_chains`: chains over the processes of a SLURM job as one JAX program (``srun python -m ...``).
- :mod:`parallel_mcmc.sinusoid_mpi`: emcee on the sinusoid over MPI ranks that each hold the data (``srun --mpi=pmi2 python -m ...``).
- :mod:`parallel_mcmc.pools`: emcee's process-pool workers, the data they are given, a pool that counts tasks.
- :mod:`parallel_mcmc.mpi`: finding ``mpiexec``; schwimmbad's MPI pool, closed once; an MPI pool whose master shares the work.
- :mod:`parallel_mcmc.emcee_mpi`: the MPI chapter's program (``python -m parallel_mcmc.emcee_mpi`` under ``mpiexec``).
- :mod:`parallel_mcmc.models`: the example models (normal, regression, sinusoid, tinynet).
- :mod:`parallel_mcmc.exercises`: the checks of the exercises, one module per part of the book, named after it.

The tools that build, test, bench and grade the book (package ``booktools``,
in ``tools/``) are not part of this package and hold the reference answers the
grader compares with; nothing a learner imports from here holds one.

Import the modules you need; importing this package does not start JAX, so
``parallel_mcmc.devices.use_cpu_devices`` can still set the device count.

"""

__version__ = "0.1.0"

