"""Helpers for *Parallel MCMC with JAX*.

Modules:

- :mod:`parallel_mcmc.devices`: how many devices JAX sees, and a report of them.
- :mod:`parallel_mcmc.timing`: timings with compilation left out, speedups beside their ideal.
- :mod:`parallel_mcmc.exercises`: the checks of the exercises, one module per part.

Import the modules you need; importing this package does not start JAX, so
``parallel_mcmc.devices.use_cpu_devices`` can still set the device count.
"""

__version__ = "0.1.0"
