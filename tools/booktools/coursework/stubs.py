"""The stub cell that stands in a student notebook where a solution's code cell was.

:func:`make_stub` reads a solution code cell with :mod:`ast` and writes, in its place, a cell that
names what the learner has to write (the functions, classes and variables the solution defines
that the rest of the chapter uses) and leaves each unanswered: ``...`` or ``raise
NotImplementedError``, so that the exercise's check fails until it is answered.
"""

from __future__ import annotations

import ast
import re
from typing import Sequence

from .markdown import normalise

__all__ = ["make_stub"]

_WORD = re.compile(r"[A-Za-z_]\w*")


def _strip_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def _defined(tree: ast.Module) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(top-level definitions as (name, kind, signature), every name bound outside functions)."""
    top: list[tuple[str, str, str]] = []
    bound: list[str] = []

    def add_targets(target: ast.AST, into: list[str]) -> None:
        if isinstance(target, ast.Name):
            into.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add_targets(elt, into)
        elif isinstance(target, ast.Starred):
            add_targets(target.value, into)

    def visit(body: Sequence[ast.stmt], is_top: bool) -> None:
        for node in body:
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sig = f"{'async ' if isinstance(node, ast.AsyncFunctionDef) else ''}def {node.name}({ast.unparse(node.args)}):"
                if is_top:
                    top.append((node.name, "function", sig))
                bound.append(node.name)
                continue
            if isinstance(node, ast.ClassDef):
                if is_top:
                    top.append((node.name, "class", f"class {node.name}:"))
                bound.append(node.name)
                continue
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add_targets(t, names)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                add_targets(node.target, names)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                add_targets(node.target, names)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        add_targets(item.optional_vars, names)
            for name in names:
                bound.append(name)
                if is_top and isinstance(node, (ast.Assign, ast.AnnAssign)):
                    top.append((name, "variable", ""))
            for attr in ("body", "orelse", "finalbody"):
                visit(getattr(node, attr, []) or [], False)
            for handler in getattr(node, "handlers", []) or []:
                visit(handler.body, False)

    visit(tree.body, True)
    return top, bound


def _bound_names(code: str) -> set[str]:
    """Names that ``code`` (several cells, one after another) binds at top level, imports included."""
    names: set[str] = set()
    for chunk in code.split("\n\x00\n"):
        try:
            tree = ast.parse(_strip_magics(chunk))
        except SyntaxError:
            continue
        names.update(_defined(tree)[1])
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def make_stub(solution: str, label: str, later_code: str, earlier_code: str = "") -> tuple[str, list[str]]:
    """The stub cell that replaces one solution code cell, and the def headers it gives.

    It names what the solution defines that the rest of the notebook uses
    (or, failing that, what it defines at top level) and leaves it unanswered.
    Variables the notebook already had before the solution are left alone.

    Parameters
    ----------
    solution
        The solution cell's source (``""`` for a solution without code).
    label
        The exercise's label, named in the stub.
    later_code
        The code of every cell after this one: what it uses is what the stub names.
    earlier_code
        The code of every cell before this one, cells separated by ``"\\n\\x00\\n"``: variables
        it binds are not stubbed over.

    Returns
    -------
    stub : str
        The stub cell's source.
    headers : list of str
        The ``def`` and ``class`` lines it gives (normalised), which the leak check allows.
    """
    later = set(_WORD.findall(later_code))
    earlier = _bound_names(earlier_code)
    try:
        top, bound = _defined(ast.parse(_strip_magics(solution)))
    except SyntaxError:
        top, bound = [], []
    seen: set[str] = set()
    top = [t for t in top if not (t[0] in seen or seen.add(t[0]))]
    used_top = [t for t in top if t[0] in later]
    used_names = {t[0] for t in used_top}
    extra = [n for n in dict.fromkeys(bound) if n in later and n not in used_names]
    chosen = used_top + [(n, "variable", "") for n in extra] if (used_top or extra) else top
    chosen = [t for t in chosen if not (t[1] == "variable" and t[0] in earlier)]

    lines = [f"# Exercise {label}: write your answer here."]
    headers: list[str] = []
    if not chosen:
        lines += ["# Replace the ... below with your code.", "..."]
        return "\n".join(lines), headers
    described = ", ".join(f"`{name}`" + (" (a function)" if kind == "function" else " (a class)" if kind == "class" else "")
                          for name, kind, _ in chosen)
    lines.append(f"# Define {described}; the check below uses {'it' if len(chosen) == 1 else 'them'}.")
    for name, kind, sig in chosen:
        if kind == "function":
            headers.append(normalise(sig))
            lines += [sig, f'    raise NotImplementedError("{label}: write {name}")', ""]
        elif kind == "class":
            headers.append(normalise(sig))
            lines += [sig, f'    """Write {name} here."""', "", '    def __init__(self, *args, **kwargs):',
                      f'        raise NotImplementedError("{label}: write {name}")', ""]
        else:
            lines.append(f"{name} = ...  # replace ... with your answer")
    return "\n".join(lines).rstrip(), headers
