"""Every exercise of the book, read from the chapters' labels, with its check module and its reference twin.

An exercise is a block ``{exercise-start}`` with ``:label: ex-<chapter>-<topic>`` in a chapter
``chapters/<part>/<page>.md``, followed by a check cell that calls one check of its part
(``check.steps_to_pay(...)`` after ``from parallel_mcmc.exercises import getting_started as check``).
Its unit is three files named after the label (``ex-devices-pay`` -> ``ex_devices_pay``):

- the check module ``parallel_mcmc/exercises/<part>/<module>.py``: the check, its fixed cases and
  ``WRONG_ANSWERS``, the catalogue of wrong answers it must reject;
- the twin ``booktools/coursework/references/<part>/<module>.py``: the grader's reference answer, its
  unseen inputs and calls (:mod:`booktools.coursework.references`).

:func:`units` pairs them and fails, naming the file to write, when a chapter's exercise has no check module or
twin, or a check module or twin has no chapter exercise. :func:`is_check` tells the grader whether a check call
of a notebook names a check the book declares.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EXERCISES", "TWINS", "WITHOUT_CHAPTER", "RegistryError", "Unit", "module_name", "chapter_exercises",
           "units", "is_check"]

EXERCISES = "parallel_mcmc.exercises"
TWINS = "booktools.coursework.references"

#: Check modules no chapter asks for, each with why it exists: ``"<part>.<module>": (check, reason)``.
WITHOUT_CHAPTER: dict[str, tuple[str, str]] = {
    "beyond_one_machine.ex_processes_combine": (
        "combine_chains", "graded by the grader's own tests (tests/tools/test_grade.py's toy book), in no chapter"),
}

_START = re.compile(r"^```\{exercise-start\}[^\n]*\n(?::[^\n]*\n)*?:label:\s*(\S+)", re.M)
_ALIAS = re.compile(r"from\s+parallel_mcmc\.exercises\s+import\s+(\w+)\s+as\s+(\w+)")
_CALL = re.compile(r"^\s*(\w+)\.(\w+)\(", re.M)


class RegistryError(ValueError):
    """The chapters, the check modules and the twins do not pair up one to one."""


@dataclass(frozen=True)
class Unit:
    """One exercise: its label, its part, the chapter that asks it (None for :data:`WITHOUT_CHAPTER`), its check."""

    label: str
    part: str
    check: str
    chapter: Path | None = None

    @property
    def module(self) -> str:
        """The dotted name of its check module (``parallel_mcmc.exercises.getting_started.ex_devices_pay``)."""
        return f"{EXERCISES}.{self.part}.{module_name(self.label)}"

    @property
    def twin(self) -> str:
        """The dotted name of its reference twin."""
        return f"{TWINS}.{self.part}.{module_name(self.label)}"

    @property
    def check_name(self) -> str:
        """The check as chapters call it and the grader keys it (``parallel_mcmc.exercises.<part>.<check>``)."""
        return f"{EXERCISES}.{self.part}.{self.check}"


def module_name(label: str) -> str:
    """The module of an exercise's label: ``ex-devices-pay`` -> ``ex_devices_pay``."""
    return label.replace("-", "_")


def chapter_exercises(root: Path) -> list[Unit]:
    """The exercises the chapters under ``root/chapters`` ask, in the order of the files and the pages.

    Raises
    ------
    RegistryError
        When an exercise's block is followed by no call of its part's checks, or by calls of more than one.
    """
    found = []
    for page in sorted((Path(root) / "chapters").glob("*/*.md")):
        text = page.read_text(encoding="utf-8")
        starts = list(_START.finditer(text))
        aliases = {alias: part for part, alias in _ALIAS.findall(text)}
        for i, start in enumerate(starts):
            label = start.group(1)
            block = text[start.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
            calls = sorted({(aliases[a], f) for a, f in _CALL.findall(block) if a in aliases})
            where = f"{page.relative_to(root)}: exercise {label!r}"
            if not calls:
                raise RegistryError(f"{where} calls no check: add its check cell "
                                    "(`from parallel_mcmc.exercises import <part> as check`, then `check.<name>(...)`).")
            if len(calls) > 1:
                raise RegistryError(f"{where} calls {len(calls)} checks {calls}: one exercise, one check.")
            ((part, check),) = calls
            if part != page.parent.name:
                raise RegistryError(f"{where} calls a check of the part {part!r}; its checks live in "
                                    f"{EXERCISES}.{page.parent.name}.")
            found.append(Unit(label, part, check, page))
    return found


def _modules(package: str) -> set[str]:
    """``"<part>.<module>"`` for every exercise module (``ex_*``) under ``package``."""
    top = importlib.import_module(package)
    names = set()
    for part in pkgutil.iter_modules(top.__path__):
        if part.ispkg:
            sub = importlib.import_module(f"{package}.{part.name}")
            names |= {f"{part.name}.{m.name}" for m in pkgutil.iter_modules(sub.__path__) if m.name.startswith("ex_")}
    return names


def units(root: Path | None = None) -> list[Unit]:
    """Every exercise of the book, paired with its check module and its twin.

    Parameters
    ----------
    root : Path, optional
        The book's root (the folder with ``chapters/``); by default the one this package lives in.

    Returns
    -------
    list of Unit
        The chapters' exercises, then those of :data:`WITHOUT_CHAPTER`.

    Raises
    ------
    RegistryError
        When an exercise has no check module or no twin, its module does not declare its check or its twin
        answers for another check, or a check module or twin has no exercise.
    """
    if root is None:
        from .edition import find_book_root

        root = find_book_root(Path(__file__).parent)
    found = chapter_exercises(root)
    for key, (check, _) in WITHOUT_CHAPTER.items():
        part, module = key.split(".")
        found.append(Unit(module.replace("_", "-"), part, check))
    problems = []
    for unit in found:
        what = f"exercise {unit.label!r}" + (f" ({unit.chapter.relative_to(root)})" if unit.chapter else "")
        for dotted, kind in ((unit.module, "check module"), (unit.twin, "reference twin")):
            if importlib.util.find_spec(dotted) is None:
                path = dotted.replace(".", "/") + ".py"
                problems.append(f"{what} has no {kind}: write {path}.")
        if problems:
            continue
        module, twin = importlib.import_module(unit.module), importlib.import_module(unit.twin)
        if unit.check not in getattr(module, "__all__", ()):
            problems.append(f"{what}: {unit.module} does not declare its check {unit.check!r} in __all__.")
        if getattr(twin, "CHECK", None) != unit.check_name:
            problems.append(f"{what}: the twin {unit.twin} answers for {getattr(twin, 'CHECK', None)!r}, "
                            f"not {unit.check_name!r}.")
    known = {f"{u.part}.{module_name(u.label)}" for u in found}
    for package, kind in ((EXERCISES, "check module"), (TWINS, "reference twin")):
        for stray in sorted(_modules(package) - known):
            problems.append(f"the {kind} {package}.{stray} has no exercise in the chapters: label one "
                            f"(':label: {stray.split('.')[1].replace('_', '-')}'), or remove the module.")
    if problems:
        raise RegistryError("The exercises and their modules do not pair up:\n- " + "\n- ".join(problems))
    return found


def is_check(module: str, function: str) -> bool:
    """Whether ``module.function`` is a check a part of :mod:`parallel_mcmc.exercises` declares
    (``module`` a part, ``function`` in its ``__all__``), without reading the chapters."""
    if not module.startswith(EXERCISES + ".") or module.count(".") != 2:
        return False
    try:
        part = importlib.import_module(module)
    except ImportError:
        return False
    return hasattr(part, "__path__") and function in getattr(part, "__all__", ())
