"""Programs the chapters start with ``python -m`` under ``mpiexec``, ``srun`` or as a worker process.

Each is run as ``python -m parallel_mcmc.programs.<name>``, a thin mains over :mod:`parallel_mcmc.pools`, :mod:`parallel_mcmc.sample` and
:mod:`parallel_mcmc.measure`.

- :mod:`~parallel_mcmc.programs.emcee_mpi`: emcee with an MPI pool (``mpiexec -n N python -m ...``);
- :mod:`~parallel_mcmc.programs.sinusoid_mpi`: emcee on the sinusoid over MPI ranks that each hold the data
  (``srun --mpi=pmi2 python -m ...``);
- :mod:`~parallel_mcmc.programs.slurm_chains`: chains over the processes of a SLURM job as one JAX program
  (``srun python -m ...``);
- :mod:`~parallel_mcmc.programs.xla_threads_worker`: a device with one XLA thread, for
  :class:`parallel_mcmc.measure.xla_threads.OneThreadDevice`.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {}, modules=["emcee_mpi", "sinusoid_mpi", "slurm_chains",
                                                                "xla_threads_worker"])
