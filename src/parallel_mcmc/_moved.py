"""The modules of the flat layout (up to version 0.1), kept importable for a while behind a deprecation warning.

``import parallel_mcmc.costmodel`` still works: it gives a stand-in module
whose every name is found in the name's new home, with a
:class:`DeprecationWarning` that says where to import it from now.
``python -m parallel_mcmc.emcee_mpi`` still runs the program from its new
home (``parallel_mcmc.programs.emcee_mpi``), with the same warning. The
stand-ins go in version 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["MOVED", "PROGRAMS", "install"]

#: Old module (under ``parallel_mcmc.``) -> where its names live now, searched in order.
MOVED: dict[str, tuple[str, ...]] = {
    "timing": ("parallel_mcmc.measure",),
    "judge": ("parallel_mcmc.measure",),
    "costmodel": ("parallel_mcmc.measure",),
    "lockstep": ("parallel_mcmc.measure",),
    "plots": ("parallel_mcmc.measure",),
    "hlo": ("parallel_mcmc.measure.hlo",),
    "xla_threads": ("parallel_mcmc.measure.xla_threads",),
    "chains": ("parallel_mcmc.sample",),
    "diagnostics": ("parallel_mcmc.sample",),
    "numpyro_runner": ("parallel_mcmc.sample",),
    "consensus": ("parallel_mcmc.sample",),
    "mpi": ("parallel_mcmc.pools",),
    "process_group": ("parallel_mcmc.pools",),
    "emcee_mpi": ("parallel_mcmc.pools.emcee_tasks", "parallel_mcmc.programs.emcee_mpi"),
    "sinusoid_mpi": ("parallel_mcmc.programs.sinusoid_mpi",),
    "slurm_chains": ("parallel_mcmc.programs.slurm_chains",),
    "validate": ("parallel_mcmc._validate",),
}
#: Old program (``python -m parallel_mcmc.NAME``) -> the module that runs it now.
PROGRAMS: dict[str, str] = {
    "emcee_mpi": "parallel_mcmc.programs.emcee_mpi",
    "sinusoid_mpi": "parallel_mcmc.programs.sinusoid_mpi",
    "slurm_chains": "parallel_mcmc.programs.slurm_chains",
    "xla_threads": "parallel_mcmc.programs.xla_threads_worker",
}


def _warn(old: str, new: str, stacklevel: int) -> None:
    warnings.warn(f"{old} has moved: use {new} ({old} stops working in parallel_mcmc 0.3).", DeprecationWarning,
                  stacklevel=stacklevel)


class _MovedModule(types.ModuleType):
    """A stand-in for an old module: each name is looked up in its new homes, with a warning."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        old = self.__name__
        for home in MOVED[old.rpartition(".")[2]]:
            module = importlib.import_module(home)
            if name in getattr(module, "__all__", ()):
                _warn(f"{old}.{name}", f"{home}.{name}", stacklevel=3)
                return getattr(module, name)
        raise AttributeError(f"{old} has moved, and {name!r} is none of the public names of its new home "
                             f"({', '.join(MOVED[old.rpartition('.')[2]])}).")


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _MovedModule(spec.name, f"Moved: see {', '.join(MOVED[spec.name.rpartition('.')[2]])}.")

    def exec_module(self, module: types.ModuleType) -> None:
        pass

    def get_code(self, fullname: str) -> types.CodeType:
        """What ``python -m parallel_mcmc.OLD`` runs: the program from its new home, after the warning."""
        short = fullname.rpartition(".")[2]
        if short not in PROGRAMS:
            raise ImportError(f"{fullname} was never a program; its names moved to {', '.join(MOVED[short])}.")
        new = PROGRAMS[short]
        source = ("import runpy, sys, warnings\n"
                  f"warnings.warn('python -m {fullname} has moved: run python -m {new} "
                  f"(the old name stops working in parallel_mcmc 0.3).', DeprecationWarning, stacklevel=1)\n"
                  f"runpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n")
        return compile(source, f"<{fullname}, moved to {new}>", "exec")

    def is_package(self, fullname: str) -> bool:
        return False


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        package, _, short = fullname.rpartition(".")
        if package == "parallel_mcmc" and short in MOVED:
            return importlib.machinery.ModuleSpec(fullname, _Loader())
        return None


def install() -> None:
    """Put the finder of the old modules last on ``sys.meta_path`` (once): real modules are always found first."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
