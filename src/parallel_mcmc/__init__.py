"""Helpers for *Parallel MCMC with JAX*.

Modules, one idea each:

- :mod:`parallel_mcmc.devices`: how many devices JAX sees, and a report of them.
- :mod:`parallel_mcmc.timing`: timings with compilation left out, speedups beside their ideal, compile time.
- :mod:`parallel_mcmc.plots`: the plots that recur (speedups, scaling, NUTS steps per draw).
- :mod:`parallel_mcmc.costmodel`: the cost model: predicted times from measured step costs, cores and step counts.
- :mod:`parallel_mcmc.bench`: ``make bench``, every way of running chains measured beside the cost model.
- :mod:`parallel_mcmc.validate`: the argument checks every helper shares.
- :mod:`parallel_mcmc.chains`: BlackJAX chain runners (one after another, lockstep, over a mesh).
- :mod:`parallel_mcmc.lockstep`: integration-step accounting, what lockstep costs.
- :mod:`parallel_mcmc.diagnostics`: draws to ArviZ, for R-hat and ESS.
- :mod:`parallel_mcmc.multidevice`: a NumPyro runner that spreads chains over devices.
- :mod:`parallel_mcmc.consensus`: consensus Monte Carlo (data shards, sub-posteriors, combination).
- :mod:`parallel_mcmc.pools`: emcee's process-pool workers and the data they are given.
- :mod:`parallel_mcmc.mpi`: finding ``mpiexec``; schwimmbad's MPI pool, closed once; an MPI pool whose master shares the work.
- :mod:`parallel_mcmc.emcee_mpi`: the MPI chapter's program (``python -m parallel_mcmc.emcee_mpi``).
- :mod:`parallel_mcmc.processes`: start a group of processes that form one JAX program.
- :mod:`parallel_mcmc.models`: the example models (normal, regression, sinusoid, tinynet, softmax_layer).
- :mod:`parallel_mcmc.exercises`: the checks of the exercises, one module per part.
- :mod:`parallel_mcmc.chapter_format`: chapters as JupyterLab saves them (``make format``).

The coursework tools (student edition, grader, and the reference answers the
grader compares with) are not part of this package: they live in the separate
package ``coursework``, which learners' notebooks cannot import when graded.

Import the modules you need; importing this package does not start JAX, so
``parallel_mcmc.devices.use_cpu_devices`` can still set the device count.
"""

__version__ = "0.1.0"
