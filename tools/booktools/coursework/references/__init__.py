"""The reference answers and the unseen inputs the grader uses. Learners' kernels never see this package.

One twin module per exercise, ``references/<part>/<label>.py``, beside its check
``parallel_mcmc/exercises/<part>/<label>.py`` (:mod:`booktools.coursework.registry`
pairs them from the chapters' labels). A twin names the check it answers for
(``CHECK``) and holds its reference answer (``REFERENCE``, None where the check
compares with the chapter's own values), its unseen inputs (``UNSEEN``) and the
calls the check makes of the learner's function with them (``CALLS``).

This package assembles the twins into the interface the grader uses: for each
exercise whose check takes ``cases``, :data:`UNSEEN` gives a function
``(rng) -> keyword arguments`` for the check: inputs the chapter never shows,
drawn afresh for every submission, with the answers the references give;
:data:`CALLS` gives the calls; :func:`unseen` draws them for a seed; and the
reference answers are importable by name. The chapters' helper package
:mod:`parallel_mcmc` holds no answer; its checks compare with a few fixed
expected values written out as data.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from typing import Any, Callable

import numpy as np

from booktools.coursework.harness import Argument

PARTS = ("getting_started", "sharding_lab", "parallel_chains", "numpyro", "ensemble", "beyond_one_machine",
         "other_parallelism")


def twins() -> dict[str, types.ModuleType]:
    """Every twin module, by its dotted name under this package (``"getting_started.ex_devices_pay"``)."""
    found = {}
    for part in PARTS:
        package = importlib.import_module(f"{__name__}.{part}")
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                found[f"{part}.{info.name}"] = importlib.import_module(f"{package.__name__}.{info.name}")
    return found


_TWINS = twins()

# check name -> (rng -> keyword arguments of the check that bring the unseen inputs)
UNSEEN: dict[str, Callable[[np.random.Generator], dict[str, Any]]] = {
    twin.CHECK: twin.UNSEEN for twin in _TWINS.values() if twin.UNSEEN is not None}

# check name -> (index of the learner's function among the check's arguments, keyword arguments -> the calls
# the check makes of it with those unseen inputs). The sandbox makes these calls and records them; the judge
# then runs the check with the same keyword arguments against the record.
CALLS: dict[str, tuple[int, Callable[[dict], list[tuple]]]] = {
    twin.CHECK: twin.CALLS for twin in _TWINS.values() if twin.CALLS is not None}

# the reference answers, by name (the twins' public functions)
_ANSWERS = {name: getattr(twin, name) for twin in _TWINS.values() for name in twin.__all__
            if name not in {"CHECK", "REFERENCE", "UNSEEN", "CALLS"}}
globals().update(_ANSWERS)

__all__ = sorted(_ANSWERS) + ["Argument", "PARTS", "twins", "UNSEEN", "CALLS", "unseen"]


def unseen(check: str, seed: int) -> dict[str, Any]:
    """The keyword arguments that give ``check`` its unseen inputs for this ``seed`` (empty if it takes none)."""
    make = UNSEEN.get(check)
    return make(np.random.default_rng(seed)) if make else {}
