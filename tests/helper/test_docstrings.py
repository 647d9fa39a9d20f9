"""Every public function and method of parallel_mcmc has numpydoc sections (issue 37, BlackJAX's style): a
``Parameters`` section when it takes parameters, a ``Returns`` (or ``Yields``) section when it returns something,
and every public class an ``Attributes`` or ``Parameters`` section. The API page renders them through Sphinx's
napoleon extension.

The exercises package is left out: its checks are documented by the chapters that run them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType

import parallel_mcmc

SKIPPED_PACKAGES = ("parallel_mcmc.exercises",)

# Offenders left for a later change, by qualified name; empty once every docstring is converted.
NOT_YET_CONVERTED: frozenset[str] = frozenset()


def _section(*titles: str) -> re.Pattern[str]:
    names = "|".join(titles)
    return re.compile(rf"^\s*(?:{names})\s*\n\s*-{{3,}}\s*$", re.MULTILINE)


PARAMETERS = _section("Parameters")
RETURNS = _section("Returns", "Yields")
CLASS_SECTIONS = _section("Attributes", "Parameters")


def _modules(package: ModuleType = parallel_mcmc) -> Iterator[ModuleType]:
    """The package and every module under it, but the skipped packages (not even imported)."""
    yield package
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name.startswith(SKIPPED_PACKAGES):
            continue
        module = importlib.import_module(info.name)
        if info.ispkg:
            yield from _modules(module)
        else:
            yield module


def _defined_here(module: ModuleType) -> Iterator[tuple[str, object]]:
    """The objects a module's ``__all__`` names that the module itself defines (not re-exports)."""
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)  # a subpackage in parallel_mcmc.__all__ may not be imported yet
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj):
            yield f"{module.__name__}.{name}", obj
        elif callable(obj) and inspect.isfunction(inspect.unwrap(obj)):  # a cached function too (functools.cache)
            yield f"{module.__name__}.{name}", inspect.unwrap(obj)


def _public_methods(cls: type) -> Iterator[tuple[str, object]]:
    """The public methods a class defines itself (plain, static and class methods; no properties, no dunders)."""
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if inspect.isfunction(attr):
            yield name, attr


def _callables() -> Iterator[tuple[str, object]]:
    for module in _modules():
        for qualname, obj in _defined_here(module):
            if inspect.isclass(obj):
                for name, method in _public_methods(obj):
                    yield f"{qualname}.{name}", method
            else:
                yield qualname, obj


def _classes() -> Iterator[tuple[str, type]]:
    for module in _modules():
        for qualname, obj in _defined_here(module):
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                yield qualname, obj


def _takes_parameters(function) -> bool:
    parameters = list(inspect.signature(function).parameters.values())
    if parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    return bool(parameters)


def _returns_something(function) -> bool:
    annotation = inspect.signature(function).return_annotation
    if annotation is inspect.Signature.empty:
        return True  # unannotated: assume it returns something; annotate it `-> None` if not
    return annotation is not None and annotation != "None"


def _missing_sections(function) -> list[str]:
    doc = inspect.getdoc(function) or ""
    missing = []
    if _takes_parameters(function) and not PARAMETERS.search(doc):
        missing.append("Parameters")
    if _returns_something(function) and not RETURNS.search(doc):
        missing.append("Returns/Yields")
    return missing


def test_the_walk_finds_the_public_functions_methods_and_classes():
    names = {name for name, _ in _callables()}
    assert "parallel_mcmc.devices.use_cpu_devices" in names
    assert "parallel_mcmc.measure.prediction.predict" in names
    assert not any(name.startswith(SKIPPED_PACKAGES) for name in names)
    assert "parallel_mcmc.measure.timing.Timing" in {name for name, _ in _classes()}


def test_every_public_function_and_method_has_its_numpydoc_sections():
    offenders = {}
    for name, function in _callables():
        missing = _missing_sections(function)
        if missing and name not in NOT_YET_CONVERTED:
            offenders[name] = missing
    assert not offenders, "public functions or methods without their numpydoc sections:\n" + "\n".join(
        f"  {name}: no {', '.join(missing)}" for name, missing in sorted(offenders.items())
    )


def test_every_public_class_has_an_attributes_or_parameters_section():
    offenders = sorted(
        name
        for name, cls in _classes()
        if not CLASS_SECTIONS.search(inspect.getdoc(cls) or "") and name not in NOT_YET_CONVERTED
    )
    assert not offenders, "public classes without an Attributes or Parameters section:\n" + "\n".join(
        f"  {name}" for name in offenders
    )


def test_the_allow_list_names_only_current_offenders():
    """A converted name leaves NOT_YET_CONVERTED, so the list only shrinks."""
    still_missing = {name for name, function in _callables() if _missing_sections(function)}
    still_missing |= {name for name, cls in _classes() if not CLASS_SECTIONS.search(inspect.getdoc(cls) or "")}
    assert sorted(NOT_YET_CONVERTED - still_missing) == []
