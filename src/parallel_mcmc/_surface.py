"""How a subpackage declares its public names and loads them only when first used.

Every subpackage of :mod:`parallel_mcmc` lists its public names, module by
module, in a call of :func:`surface` in its ``__init__``. The names are what
``from parallel_mcmc.measure import judge`` may import and what the API page
lists; everything else is private. Nothing is imported until a name is first
asked for, so importing a subpackage neither starts JAX nor MPI, and
:func:`parallel_mcmc.devices.use_cpu_devices` can still set the device count.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, Sequence

__all__ = ["surface"]


def surface(package: str, names: Mapping[str, Sequence[str]], modules: Sequence[str] = ()
            ) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__all__``, ``__getattr__`` and ``__dir__`` of a subpackage whose names live in its modules.

    Parameters
    ----------
    package : str
        The subpackage's ``__name__``.
    names : mapping of str to sequence of str
        For each of its modules (by its name in the subpackage), the public names it gives the subpackage.
    modules : sequence of str, optional
        Modules of the subpackage that are public as modules (``from parallel_mcmc.measure import hlo``).

    Returns
    -------
    all : list of str
        Every public name, the modules in ``modules`` included.
    getattr : callable
        The module-level ``__getattr__`` that imports a name's module when the name is first asked for.
    dir : callable
        The module-level ``__dir__``.

    Raises
    ------
    ValueError
        When two modules declare the same name, or a module has the name of a public name.
    """
    home: dict[str, str] = {}
    clash = set(names).intersection(n for declared in names.values() for n in declared)
    if clash:
        # importing the module would set the package's attribute of that name to the module, hiding the name
        raise ValueError(f"{package}: modules {sorted(clash)} have the names of public names; rename the modules.")
    for module, declared in names.items():
        for name in declared:
            if name in home:
                raise ValueError(f"{package}: {name!r} is declared by both {home[name]!r} and {module!r}.")
            home[name] = module
    for module in modules:
        if module in home:
            raise ValueError(f"{package}: the module {module!r} has the name of one of its public names.")
        home[module] = ""
    public = list(home)

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no public name {name!r}; its names are listed in "
                                 f"{package}.__all__.")
        if home[name] == "":
            return importlib.import_module(f"{package}.{name}")
        return getattr(importlib.import_module(f"{package}.{home[name]}"), name)

    def __dir__() -> list[str]:
        return sorted(public)

    return public, __getattr__, __dir__
