"""The API reference page is generated from the subpackages' declared names, and the chapters import only those."""

from __future__ import annotations

import ast
import importlib
import re
import types

import pytest

from booktools import api_page
from booktools.notebooks import myst_notebooks



def test_the_page_is_generated_from_the_declared_names():
    assert api_page.API_PAGE.read_text() == api_page.page_text(), (
        "chapters/reference/api.md is out of date: run `.venv/bin/python -m booktools.api_page`.")


def test_the_page_documents_every_declared_name_and_no_private_module():
    page = api_page.API_PAGE.read_text()
    import parallel_mcmc

    for sub in parallel_mcmc.__all__:
        package = importlib.import_module(f"parallel_mcmc.{sub}")
        assert f".. automodule:: parallel_mcmc.{sub}\n" in page
        for name in getattr(package, "__all__", ()):
            if sub != "exercises" and hasattr(package, "__path__"):
                assert re.search(rf"\.\. auto\w+:: parallel_mcmc\.{sub}\.{name}\n", page), f"{sub}.{name} is missing"
    assert not re.search(r"\.\. auto\w+:: parallel_mcmc(\.\w+)*\._", page), "a private module or name is documented"



def test_the_api_docstrings_build_without_a_warning(tmp_path):
    """The page's autodoc blocks, built alone with the book's autodoc and napoleon settings, nitpicky and with
    warnings as errors, as `make book` builds them (-W -n): a numpydoc section that Sphinx misreads (a "Raises"
    entry whose type is followed by words, say) fails here in seconds rather than in the site build."""
    import subprocess
    import sys

    import yaml

    root = api_page.API_PAGE.parents[2]
    config = yaml.safe_load((root / "_config.yml").read_text())["sphinx"]["config"]
    blocks = re.findall(r"```\{eval-rst\}\n(.*?)```", api_page.API_PAGE.read_text(), flags=re.S)
    (tmp_path / "index.rst").write_text("API\n===\n\n" + "\n".join(blocks))
    settings = {key: config[key] for key in ("autodoc_typehints", "autodoc_member_order", "napoleon_numpy_docstring",
                                             "napoleon_google_docstring")}
    (tmp_path / "conf.py").write_text(
        'extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]\n'
        + "".join(f"{key} = {value!r}\n" for key, value in settings.items())
        + f"nitpick_ignore_regex = {[tuple(pair) for pair in config['nitpick_ignore_regex']]!r}\n")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "-n", "--keep-going", str(tmp_path),
                           str(tmp_path / "_out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)


def _cells(path):
    for match in CELL.finditer(path.read_text()):
        lines = [line for line in match.group(1).split("\n") if not line.lstrip().startswith(("%", "!", ":"))]
        yield "\n".join(lines)


def _public(module_name: str) -> types.ModuleType:
    """The module, if every part of its dotted name is public and declared by its parent."""
    parts = module_name.split(".")
    assert parts[0] == "parallel_mcmc"
    module = importlib.import_module("parallel_mcmc")
    for i, part in enumerate(parts[1:], 1):
        declared = tuple(getattr(module, "__all__", ())) + tuple(
            api_page.public_modules(module) if hasattr(module, "__path__") else ())
        if part.startswith("_") or part not in declared:
            raise AssertionError(f"{'.'.join(parts[:i + 1])} is not a public module of {'.'.join(parts[:i])}")
        module = importlib.import_module(".".join(parts[: i + 1]))
    return module


def _offences(source: str) -> list[str]:
    tree = ast.parse(source)
    aliases: dict[str, types.ModuleType] = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "parallel_mcmc":
            try:
                module = _public(node.module)
            except AssertionError as e:
                found.append(str(e))
                continue
            for alias in node.names:
                declared = tuple(getattr(module, "__all__", ())) + tuple(
                    api_page.public_modules(module) if hasattr(module, "__path__") else ())
                if alias.name not in declared:
                    found.append(f"{node.module}.{alias.name} is not a declared name of {node.module}")
                elif isinstance(getattr(module, alias.name, None), types.ModuleType):
                    aliases[alias.asname or alias.name] = getattr(module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "parallel_mcmc":
                    try:
                        module = _public(alias.name)
                    except AssertionError as e:
                        found.append(str(e))
                        continue
                    if alias.asname:
                        aliases[alias.asname] = module
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            module = aliases[node.value.id]
            declared = tuple(getattr(module, "__all__", ())) + tuple(
                api_page.public_modules(module) if hasattr(module, "__path__") else ())
            if node.attr not in declared:
                found.append(f"{module.__name__}.{node.attr} is not a declared name of {module.__name__}")
    return found


PAGES = myst_notebooks(api_page.API_PAGE.parents[1])


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(api_page.API_PAGE.parents[1])) for p in PAGES])
def test_a_page_imports_only_declared_names(page):
    found = [o for cell in _cells(page) for o in _offences(cell)]
    assert found == [], f"{page.name} reaches past the declared surface: {sorted(set(found))}"


def test_the_import_check_catches_a_private_module_an_undeclared_name_and_an_attribute():
    assert _offences("from parallel_mcmc.measure.timing import time_call") == [
        "parallel_mcmc.measure.timing is not a public module of parallel_mcmc.measure"]
    assert _offences("from parallel_mcmc.measure import _block") == [
        "parallel_mcmc.measure._block is not a declared name of parallel_mcmc.measure"]
    assert _offences("from parallel_mcmc import measure\nmeasure.steps_2d(1)\nmeasure.nothing") == [
        "parallel_mcmc.measure.nothing is not a declared name of parallel_mcmc.measure"]
    assert _offences("from parallel_mcmc.exercises import sharding_lab as check") == []
