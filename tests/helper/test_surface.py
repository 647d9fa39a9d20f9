"""parallel_mcmc._surface and parallel_mcmc._moved: each subpackage's declared public names, loaded when first used,
and the modules of the flat layout, still importable behind a deprecation warning that names the new home."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import warnings

import pytest

import parallel_mcmc
from parallel_mcmc._moved import MOVED, PROGRAMS
from parallel_mcmc._surface import surface

SUBPACKAGES = ["sample", "pools", "measure", "models", "programs"]


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_a_subpackage_declares_exactly_its_modules_public_names(sub):
    package = importlib.import_module(f"parallel_mcmc.{sub}")
    declared = set(package.__all__)
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if info.name in declared:  # a public module: its own __all__ is its surface
            assert getattr(package, info.name) is module
            continue
        missing = [n for n in module.__all__ if n not in declared]
        assert missing == [], f"{module.__name__} has public names its subpackage does not declare: {missing}"
        for name in module.__all__:
            assert getattr(package, name) is getattr(module, name), f"{sub}.{name} is not {module.__name__}.{name}"
    assert sorted(dir(package)) == sorted(declared)


def test_an_undeclared_name_says_where_the_names_are():
    from parallel_mcmc import measure

    with pytest.raises(AttributeError, match=r"no public name '_block'.*parallel_mcmc.measure.__all__"):
        measure._block  # noqa: B018


def test_surface_refuses_a_name_declared_twice_and_a_module_named_like_a_name():
    with pytest.raises(ValueError, match="declared by both 'a' and 'b'"):
        surface("pkg", {"a": ["f"], "b": ["f"]})
    with pytest.raises(ValueError, match=r"modules \['judge'\] have the names of public names"):
        surface("pkg", {"judge": ["judge"]})
    with pytest.raises(ValueError, match="has the name of one of its public names"):
        surface("pkg", {"a": ["hlo"]}, modules=["hlo"])


def test_importing_the_subpackages_loads_none_of_their_modules(run_python):
    proc = run_python(
        """
        import sys
        from parallel_mcmc import measure, pools, programs, sample
        print(sorted(m for m in ("jax", "mpi4py", "emcee", "numpyro", "blackjax") if m in sys.modules))
        """
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_still_gives_its_names_with_a_warning_naming_the_new_home(old):
    module = importlib.import_module(f"parallel_mcmc.{old}")
    homes = [importlib.import_module(h) for h in MOVED[old]]
    name = next(n for h in homes for n in h.__all__)
    home = next(h for h in homes if name in h.__all__)
    with pytest.warns(DeprecationWarning, match=rf"parallel_mcmc\.{old}\.{name} has moved: use {home.__name__}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(home, name)


def test_from_an_old_module_import_a_name_warns_at_the_importing_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from parallel_mcmc.costmodel import pool_time  # noqa: F401
    assert [w.filename for w in caught] == [__file__]
    assert "use parallel_mcmc.measure.pool_time" in str(caught[0].message)
    from parallel_mcmc.measure import pool_time as new

    assert pool_time is new


def test_an_old_module_refuses_a_name_its_new_home_lacks():
    import parallel_mcmc.timing as old

    with pytest.raises(AttributeError, match="none of the public names of its new home"):
        old._block  # noqa: B018


@pytest.mark.parametrize("old", ["slurm_chains", "emcee_mpi"])
def test_an_old_program_still_runs_from_its_new_home(old):
    proc = subprocess.run([sys.executable, "-W", "default", "-m", f"parallel_mcmc.{old}", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout
    assert f"python -m parallel_mcmc.{old} has moved: run python -m {PROGRAMS[old]}" in proc.stderr


def test_a_name_that_was_never_a_program_does_not_run():
    proc = subprocess.run([sys.executable, "-m", "parallel_mcmc.timing"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "was never a program" in proc.stderr
