"""The API reference page, ``chapters/reference/api.md``, written from what each subpackage declares public.

Every subpackage of :mod:`parallel_mcmc` lists its public names in its
``__init__`` (its ``__all__``); this page documents exactly those, under the
names a reader imports (``parallel_mcmc.measure.predict``, not the private
module it lives in), and nothing else. It also lists the modules of the flat
layout that still import behind a deprecation warning, and the tools of
:mod:`booktools` that time or rewrite what a reader sees.

Run ``python -m booktools.api_page`` after changing a subpackage's names;
``make test`` fails while the page is out of date (``tests/book/test_api_page.py``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
from pathlib import Path

__all__ = ["API_PAGE", "public_modules", "page_text", "write"]

API_PAGE = Path(__file__).resolve().parents[2] / "chapters" / "reference" / "api.md"

_INTRO = """\
# The helper package `parallel_mcmc`

The chapters import this package for what they would otherwise repeat. It is
arranged by role: running chains (`sample`), pools of workers (`pools`),
measuring beside the cost model (`measure`), the example models (`models`),
the programs started under `mpiexec` or `srun` (`programs`) and the checks of
the exercises (`exercises`). It is the only package in the wheel that the
published notebooks install.

**The stable surface.** Each subpackage declares its public names in its
`__init__`, and this page lists exactly those, under the name you import
(`from parallel_mcmc.measure import predict`). They are what the chapters use
and what stays put between versions; the modules they live in are private and
may move. Each entry is generated from the docstring, which is also what `?`
shows in a notebook (for example `predict?`).

```{eval-rst}
.. automodule:: parallel_mcmc
```
"""

_TOOLS = """\
## The book's tools: `booktools`

Never imported by a chapter; `make` runs them. Two of them time or rewrite
what a reader sees, so their entries are here too.

```{eval-rst}
.. automodule:: booktools
```

### `booktools.bench`

```{eval-rst}
.. automodule:: booktools.bench
   :members:
```

### `booktools.format`

```{eval-rst}
.. automodule:: booktools.format
   :members:
```
"""


def public_modules(package: types.ModuleType) -> list[str]:
    """The names of ``package``'s public modules: those its ``__all__`` names, or for the exercises every part."""
    names = [m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")]
    if package.__name__ == "parallel_mcmc.exercises":
        return [n for n in names if n != "common"]
    return [n for n in names if n in getattr(package, "__all__", ())]


def _rst(directive: str, target: str, *options: str) -> str:
    """An autodoc directive, inside ``eval-rst``: autodoc writes reStructuredText, which MyST would show as text."""
    lines = [f".. {directive}:: {target}"] + [f"   :{option}:" for option in options]
    return "```{eval-rst}\n" + "\n".join(lines) + "\n```\n"


def _directive(qualified: str, value: object) -> str:
    if inspect.isclass(value):
        return _rst("autoclass", qualified, "members")
    if callable(value):
        return _rst("autofunction", qualified)
    return _rst("autodata", qualified, "annotation")


def _module_entry(name: str, level: str) -> str:
    return f"{level} `{name}`\n\n" + _rst("automodule", name, "members")


def _subpackage(name: str) -> str:
    package = importlib.import_module(name)
    if not hasattr(package, "__path__"):
        return _module_entry(name, "##")
    modules = public_modules(package)
    parts = [f"## `{name}`\n\n" + _rst("automodule", name)]
    names = [n for n in package.__all__ if n not in modules]
    if name == "parallel_mcmc.exercises":
        parts.append(_module_entry(f"{name}.common", "###"))
        names = []
    for n in names:
        parts.append(_directive(f"{name}.{n}", getattr(package, n)))
    for m in modules:
        parts.append(_module_entry(f"{name}.{m}", "###"))
    return "\n".join(parts)


def _moved() -> str:
    from parallel_mcmc._moved import MOVED, PROGRAMS

    rows = "\n".join(f"| `parallel_mcmc.{old}` | {', '.join(f'`{h}`' for h in homes)} |"
                     for old, homes in MOVED.items())
    programs = "\n".join(f"| `python -m parallel_mcmc.{old}` | `python -m {new}` |" for old, new in PROGRAMS.items())
    return ("## Moved in version 0.2\n\nThe modules of the flat layout of version 0.1 still import until version 0.3, "
            "with a deprecation warning that names each name's new home.\n\n| was | now |\n| --- | --- |\n"
            f"{rows}\n{programs}\n")


def page_text() -> str:
    """The page as it should be, from the subpackages' declared names."""
    import parallel_mcmc

    sections = [_INTRO] + [_subpackage(f"parallel_mcmc.{sub}") for sub in parallel_mcmc.__all__]
    return "\n".join(sections + [_moved(), _TOOLS])


def write(path: Path = API_PAGE) -> bool:
    """Write the page; return whether it changed."""
    text = page_text()
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


if __name__ == "__main__":
    changed = write()
    print(f"{API_PAGE}: {'written' if changed else 'up to date'}")
    sys.exit(0)
