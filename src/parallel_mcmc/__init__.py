"""Helpers for *Parallel MCMC with JAX*: what the chapters import, arranged by role.

Subpackages, each with its public names declared in its ``__init__`` (its ``__all__``; the API page lists them):

- :mod:`parallel_mcmc.sample`: running chains (BlackJAX runners, NumPyro's chains over devices, consensus Monte
  Carlo) and judging their draws (R-hat, ESS, nested R-hat through ArviZ).
- :mod:`parallel_mcmc.pools`: pools of workers for ensembles (process pools and their data, MPI pools, process
  groups that form one JAX program) and the emcee problem the ensemble chapters run through them.
- :mod:`parallel_mcmc.measure`: timing with compilation left out, the cost model, the judge of every timing,
  and measuring aids (compiled programs' text, XLA's CPU threads).
- :mod:`parallel_mcmc.models`: the example models (funnel, normal, regression, sinusoid).
- :mod:`parallel_mcmc.programs`: the programs started with ``python -m`` under ``mpiexec``, ``srun`` or as
  workers.
- :mod:`parallel_mcmc.exercises`: the checks of the exercises, one package per part of the book and one module per
  exercise, named after its label.

and one module, :mod:`parallel_mcmc.devices`: how many devices JAX sees, forcing CPU devices, a report of them.

The tools that build, test, bench and grade the book (package ``booktools``,
in ``tools/``) are not part of this package and hold the reference answers the
grader compares with; nothing a learner imports from here holds one.

Importing this package or a subpackage does not start JAX, so
:func:`parallel_mcmc.devices.use_cpu_devices` can still set the device count.
Modules of the flat layout of version 0.1 (``parallel_mcmc.costmodel``,
``parallel_mcmc.timing``, ...) still import, with a deprecation warning that
names each name's new home, until version 0.3.
"""

from parallel_mcmc import _moved

__version__ = "0.2.0"
__all__ = ["devices", "sample", "pools", "measure", "models", "programs", "exercises"]

_moved.install()
