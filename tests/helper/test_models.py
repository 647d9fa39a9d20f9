"""parallel_mcmc.models (its __init__): one module per model, each named where the package lists its models,
each holding its data and its log-density (the models' own tests: test_models_<name>.py)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import parallel_mcmc
import parallel_mcmc.models

MODELS = sorted(m.name for m in pkgutil.iter_modules(parallel_mcmc.models.__path__))


def test_the_package_lists_its_models():
    (listed,) = re.findall(r"the example models \(([^)]*)\)", parallel_mcmc.__doc__)
    assert sorted(name.strip() for name in listed.split(",")) == MODELS
    assert MODELS == ["funnel", "normal", "regression", "sinusoid"]


def test_models_are_plain_modules_with_a_test_file_each():
    here = Path(__file__).parent
    for name in MODELS:
        module = importlib.import_module(f"parallel_mcmc.models.{name}")
        assert not hasattr(module, "__path__"), f"{name} is a module, not a package"
        assert (here / f"test_models_{name}.py").exists()
