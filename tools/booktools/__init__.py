"""The tools ``make`` runs to build, test, bench and grade *Parallel MCMC with JAX*.

Never imported by a chapter and never part of the learners' wheel (that is
the package ``parallel_mcmc``, in ``src/``). Modules:

- :mod:`booktools.notebooks`: reading a chapter (a MyST notebook) and jupytext's round trip, once for every tool.
- :mod:`booktools.nbtest`: the pytest plugin that runs every chapter as a test (``conftest.py`` loads it).
- :mod:`booktools.execution_cache`: the site build's cache of executed chapters, filled by the notebook tests.
- :mod:`booktools.site`: the Sphinx extension named in ``_config.yml`` (launch buttons, published notebooks).
- :mod:`booktools.format`: ``make format``, chapters as JupyterLab saves them.
- :mod:`booktools.bench`: ``make bench``, every way of running chains beside the cost model.
- :mod:`booktools.gpu_run`: ``make gpu-run``, the book's measurements on one GPU, prepared here and run there.
- :mod:`booktools.conventions`: how far each chapter is from the page conventions (lines, plumbing share).
- :mod:`booktools.busy`: run a command (``make test``) while other processes keep cores busy.
- :mod:`booktools.slurm_cluster`: a one-node SLURM cluster on this machine, for the tests that submit job scripts.
- :mod:`booktools.slurm_config`: that cluster's ``slurm.conf``, written with no daemon started.
- :mod:`booktools.coursework`: ``make student`` and ``make grade``, the student edition and the grader.
"""
