"""The learners' wheel is what it should be.

The published notebooks (Colab, Binder, a laptop) install ``parallel_mcmc`` from the wheel the site
publishes, and nothing of the tools that build, test and grade the book. Built here as the site builds
it (``booktools.site.published_notebooks.build_wheel``), the wheel must:

(a) hold the package ``parallel_mcmc`` and its ``.dist-info`` alone: no ``booktools``, no grader;
(b) require exactly the ``dependencies`` of the root ``pyproject.toml``;
(c) declare every third-party module ``src/parallel_mcmc`` imports, and import every dependency it
    declares (``blackjax`` too: the chapters hand it to ``parallel_mcmc.sample``, and
    ``parallel_mcmc.programs.slurm_chains`` samples with it);
(d) pull in none of the notebook tooling, however deep in its requirements;
(e) install into a fresh environment and import every one of its modules with the tooling made
    unimportable, from the installed copy, not the repository's editable one.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import site
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from booktools.site.published_notebooks import build_wheel

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "parallel_mcmc"

#: Distributions of the notebook tooling: none may be required by the wheel, directly or not.
TOOLING = {canonicalize_name(name) for name in (
    "jupytext", "nbformat", "nbclient", "jupyter-client", "ipykernel", "nbval", "jupyter-book", "myst-nb",
    "jupyter-cache", "sphinx", "pytest", "parallel-mcmc-book-tools")}
#: Their modules, made unimportable in the fresh environment.
TOOLING_MODULES = ["jupytext", "nbformat", "nbclient", "jupyter_client", "ipykernel", "nbval", "myst_nb",
                   "jupyter_cache", "sphinx", "booktools"]
#: Declared but not imported by the package (none now: parallel_mcmc.programs.slurm_chains imports blackjax, the sampler the
#: chapters hand to parallel_mcmc.sample).
HANDED_IN: set[str] = set()

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


def declared() -> set[str]:
    """The canonical names of the root pyproject.toml's dependencies."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return {canonicalize_name(Requirement(text).name) for text in tomllib.load(f)["project"]["dependencies"]}


def third_party_imports() -> dict[str, set[str]]:
    """Top-level modules outside the standard library that src/parallel_mcmc imports (absolute imports only),
    each with the files that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in {name.split(".")[0] for name in names}:
                if top not in sys.stdlib_module_names and top != "parallel_mcmc":
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


# ---------------------------------------------------------------- (a) what the wheel holds


def test_wheel_holds_the_helper_package_alone(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    dist_info = {top for top in tops if top.endswith(".dist-info")}
    assert tops - dist_info == {"parallel_mcmc"}, sorted(tops)
    assert len(dist_info) == 1 and dist_info.pop().startswith("parallel_mcmc-")
    grader = [name for name in names if "booktools" in name or "coursework" in name or name.endswith("references.py")]
    assert grader == []
    # and the whole package: every module of src/parallel_mcmc, nothing else
    assert {name for name in names if name.endswith(".py")} == {
        str(path.relative_to(SRC.parent)) for path in SRC.rglob("*.py")}


# ---------------------------------------------------------------- (b) its requirements


def test_wheel_requires_the_dependencies_of_pyproject(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (meta,) = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(meta).decode())
    assert canonicalize_name(metadata["Name"]) == "parallel-mcmc"
    required = {canonicalize_name(Requirement(text).name) for text in metadata.get_all("Requires-Dist") or []}
    assert required == declared()


# ---------------------------------------------------------------- (c) imports against declarations


def test_imports_and_declared_dependencies_agree():
    imports = third_party_imports()
    distributions = importlib.metadata.packages_distributions()
    unknown = {module: files for module, files in imports.items() if module not in distributions}
    assert unknown == {}, f"imported by src/parallel_mcmc but installed by no distribution: {unknown}"
    imported = {module: {canonicalize_name(d) for d in distributions[module]} for module in imports}
    undeclared = {module: sorted(imports[module]) for module, dists in imported.items() if not dists & declared()}
    assert undeclared == {}, f"imported by src/parallel_mcmc but not in pyproject.toml's dependencies: {undeclared}"
    unused = declared() - set().union(*imported.values()) - HANDED_IN
    assert unused == set(), f"declared in pyproject.toml but imported nowhere in src/parallel_mcmc: {sorted(unused)}"
    assert HANDED_IN <= declared() and not HANDED_IN & set().union(*imported.values()), \
        "a distribution in HANDED_IN is imported by the package now: drop it from HANDED_IN"


# ---------------------------------------------------------------- (d) no tooling among its requirements


def requirement_closure(names: set[str]) -> dict[str, str | None]:
    """Every distribution ``names`` need, transitively, from the installed metadata: name -> who needs it."""
    needed_by: dict[str, str | None] = {name: None for name in names}
    todo = sorted(names)
    while todo:
        name = todo.pop()
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            pytest.fail(f"{name} (needed by {needed_by[name]}) is not installed, so its requirements are unknown")
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue  # another platform or Python, or only with an extra
            dependency = canonicalize_name(requirement.name)
            if dependency not in needed_by:
                needed_by[dependency] = name
                todo.append(dependency)
    return needed_by


def test_no_notebook_tooling_among_the_requirements():
    needed_by = requirement_closure(declared())

    def chain(name):
        return name if needed_by[name] is None else f"{chain(needed_by[name])} -> {name}"

    assert len(needed_by) > len(declared())  # the closure did follow the requirements
    assert {"jax", "numpy", "matplotlib"} <= set(needed_by)
    assert sorted(chain(name) for name in TOOLING & set(needed_by)) == []


# ---------------------------------------------------------------- (e) a fresh environment


IMPORT_EVERYTHING = """
import importlib, importlib.abc, json, pkgutil, sys

BLOCKED = set({blocked!r})
loaded = sorted(BLOCKED & {{name.split(".")[0] for name in sys.modules}})


class NoTooling(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (the book's tooling is blocked here)", name=name)
        return None


sys.meta_path.insert(0, NoTooling())
import parallel_mcmc
modules = [parallel_mcmc.__name__]
for info in pkgutil.walk_packages(parallel_mcmc.__path__, "parallel_mcmc."):
    importlib.import_module(info.name)
    modules.append(info.name)
print(json.dumps({{"file": parallel_mcmc.__file__, "modules": modules, "loaded_before": loaded,
                  "tooling_now": sorted(BLOCKED & {{name.split(".")[0] for name in sys.modules}})}}))
"""


def test_the_wheel_installs_and_imports_without_the_tooling(wheel, tmp_path):
    # A venv made from inside the book's venv would, with --system-site-packages, see the *base* Python's
    # packages, not the book's: the book's site-packages are put on its path by a .pth file instead. Plain
    # path lines are not .pth-processed themselves, so the book's editable installs (parallel_mcmc, booktools)
    # stay out: the only parallel_mcmc there is the wheel's.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    book = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "the_books_dependencies.pth").write_text("\n".join(book) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    installed = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                               capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]

    code = textwrap.dedent(IMPORT_EVERYTHING.format(blocked=sorted(TOOLING_MODULES)))
    done = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).resolve().is_relative_to(venv.resolve()), report["file"]
    assert Path(report["file"]).resolve().is_relative_to(purelib.resolve())
    assert report["loaded_before"] == [] and report["tooling_now"] == []
    expected = {str(p.relative_to(SRC.parent).with_suffix("")).replace("/", ".").removesuffix(".__init__")
                for p in SRC.rglob("*.py")}
    assert set(report["modules"]) == expected
