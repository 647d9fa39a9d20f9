"""parallel_mcmc (its __init__): the version, the map of subpackages in its docstring, every module's __all__,
and the promise that importing the package, or any of its modules, starts no JAX backend (so that
use_cpu_devices can still set the device count) and loads none of the book's tools."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import pkgutil
import re
import tomllib
from pathlib import Path

import pytest

import parallel_mcmc

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(m.name for m in pkgutil.walk_packages(parallel_mcmc.__path__, "parallel_mcmc."))


def test_version_is_the_projects():
    with open(ROOT / "pyproject.toml", "rb") as f:
        assert parallel_mcmc.__version__ == tomllib.load(f)["project"]["version"]


def test_docstring_names_every_public_module_and_only_those():
    named = re.findall(r":mod:`(parallel_mcmc\.\w+)`", parallel_mcmc.__doc__)
    assert len(named) == len(set(named))
    public = [f"parallel_mcmc.{m.name}" for m in pkgutil.iter_modules(parallel_mcmc.__path__) if not m.name.startswith("_")]
    assert sorted(named) == sorted(public) == sorted(f"parallel_mcmc.{n}" for n in parallel_mcmc.__all__)


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_exists(name):
    module = importlib.import_module(name)
    assert module.__doc__ and module.__all__, f"{name} needs a docstring and __all__"
    assert [n for n in module.__all__ if not hasattr(module, n)] == []
    assert len(module.__all__) == len(set(module.__all__))


def test_importing_every_module_starts_no_backend_and_no_tool(run_python):
    proc = run_python(
        """
        import importlib, pkgutil, sys
        import parallel_mcmc
        for info in pkgutil.walk_packages(parallel_mcmc.__path__, "parallel_mcmc."):
            importlib.import_module(info.name)
        from parallel_mcmc.devices import backend_started, use_cpu_devices
        tools = {"booktools", "pytest", "jupytext", "nbformat", "nbclient", "jupyter_client", "ipykernel", "nbval",
                 "myst_nb", "jupyter_cache", "sphinx"}
        print(backend_started(), sorted(tools & {name.split(".")[0] for name in sys.modules}))
        use_cpu_devices(3)
        import jax
        print(jax.device_count())
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["False []", "3"]


def test_importing_the_helper_and_arviz_on_a_fresh_machine_prints_nothing(tmp_path):
    """ArviZ 0.23 printed a once-a-day notice on its first import with a fresh user cache, and the package hid it;
    ArviZ 1 prints none, so the package hides nothing: with an empty cache, the imports a page makes are silent,
    and a warning of the page's own still shows."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "fresh")}
    code = ("import parallel_mcmc, arviz, numpyro, blackjax, jax, warnings; jax.numpy.zeros(1).block_until_ready(); "
            "warnings.warn('still shown', FutureWarning)")
    proc = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.strip() == "<string>:1: FutureWarning: still shown", proc.stderr
