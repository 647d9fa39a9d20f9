"""What one code cell of a chapter reads and binds, found statically: the analysis the slicer keeps cells by.

:func:`cell_names` reads a cell's source (its IPython magics included) and returns a :class:`CellNames`: the names it
reads before binding them, the names it binds or changes in place, whether it changes the process's global state, and,
for the functions it defines, what each reads and changes. :mod:`booktools.coursework.slicing` explains the rules."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterable


__all__ = ["CellNames", "cell_names"]


# Calls that change the process's state for every later cell, by the last part of the called name.
_STATE_CALLS = {"use_cpu_devices", "set_mesh", "filterwarnings", "simplefilter", "seed", "set_start_method",
                "set_host_device_count", "set_platform", "initialize", "putenv"}


_STATE_DOTTED = ("config.update", "environ.update", "environ.setdefault", "environ.pop")


# Cell magics whose body is Python; the body of any other (%%writefile, %%bash, ...) is not.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}


_MAGIC_NAMES = re.compile(r"\{([^{}]*)\}|\$([A-Za-z_]\w*)")


_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass
class CellNames:
    """What one code cell does with names."""

    statements: list[tuple[set[str], set[str]]] = field(default_factory=list)  # (reads, hides) per top-level statement
    bound: set[str] = field(default_factory=set)  # names it binds, conditionally or not
    changed: set[str] = field(default_factory=set)  # names of objects it may change in place
    imported: set[str] = field(default_factory=set)  # names it binds by importing
    setup: bool = False  # changes the process's global state at top level
    readable: bool = True  # False: not Python the analysis can parse (it then reads and binds every word)

    @property
    def reads(self) -> set[str]:
        out: set[str] = set()
        for reads, _ in self.statements:
            out |= reads
        return out


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _root(node: ast.AST) -> str | None:
    """The name an attribute, subscript or method chain starts from: ``x`` of ``x.a[0].b``."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reads(node: ast.AST) -> set[str]:
    """The names ``node`` reads from the scope it runs in: not a function's, a lambda's or a
    comprehension's own variables."""
    out: set[str] = set()

    def visit(n: ast.AST, local: frozenset[str]) -> None:
        if isinstance(n, _SCOPES):
            outer = list(n.args.defaults) + [d for d in n.args.kw_defaults if d is not None]
            if not isinstance(n, ast.Lambda):
                outer += n.decorator_list
            for d in outer:
                visit(d, local)
            declared = {name for m in ast.walk(n) if isinstance(m, (ast.Global, ast.Nonlocal)) for name in m.names}
            params = {a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg)}
            inner = frozenset(local | ((params | _stored(n)) - declared))
            for b in (n.body if isinstance(n.body, list) else [n.body]):
                visit(b, inner)
        elif isinstance(n, _COMPREHENSIONS):
            inner = frozenset(local | {name for g in n.generators for name in _stored(g.target)})
            for child in ast.iter_child_nodes(n):
                visit(child, inner)
        elif isinstance(n, (ast.For, ast.AsyncFor)):  # the body reads the loop's own variables
            visit(n.iter, local)
            for b in n.body:
                visit(b, frozenset(local | _stored(n.target)))
            for b in n.orelse:
                visit(b, local)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            names = set()
            for item in n.items:
                visit(item.context_expr, local)
                if item.optional_vars is not None:
                    names |= _stored(item.optional_vars)
            for b in n.body:
                visit(b, frozenset(local | names))
        elif isinstance(n, ast.Name):
            if not isinstance(n.ctx, ast.Store) and n.id not in local:
                out.add(n.id)
        else:
            for child in ast.iter_child_nodes(n):
                visit(child, local)

    visit(node, frozenset())
    return out


def _block_reads(body: Iterable[ast.stmt], assigned: set[str]) -> set[str]:
    """The names the statements of a block read before the block itself assigns them (``assigned``: the
    names already assigned when it starts); branches and loops are followed, what they assign is not
    counted after them."""
    assigned = set(assigned)
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            out |= _reads(stmt.iter) - assigned
            out |= _block_reads(stmt.body, assigned | _stored(stmt.target)) | _block_reads(stmt.orelse, assigned)
        elif isinstance(stmt, (ast.If, ast.While)):
            out |= _reads(stmt.test) - assigned
            out |= _block_reads(stmt.body, assigned) | _block_reads(stmt.orelse, assigned)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            names: set[str] = set()
            for item in stmt.items:
                out |= _reads(item.context_expr) - assigned
                if item.optional_vars is not None:
                    names |= _stored(item.optional_vars)
            out |= _block_reads(stmt.body, assigned | names)
        elif isinstance(stmt, ast.Try):
            out |= _block_reads(stmt.body, assigned) | _block_reads(stmt.orelse, assigned)
            out |= _block_reads(stmt.finalbody, assigned)
            for handler in stmt.handlers:
                if handler.type is not None:
                    out |= _reads(handler.type) - assigned
                out |= _block_reads(handler.body, assigned | ({handler.name} if handler.name else set()))
        else:
            out |= _reads(stmt) - assigned
            assigned |= _binds(stmt)
    return out


def _binds(stmt: ast.stmt, every_target: bool = False) -> set[str]:
    """The names a statement binds outright: an assignment to names (with ``every_target``, only where
    every target is a name, a tuple or a list), an annotated assignment with a value, a definition, an import."""
    if isinstance(stmt, ast.Assign):
        targets = [t for t in stmt.targets if isinstance(t, (ast.Name, ast.Tuple, ast.List))]
        if every_target and len(targets) < len(stmt.targets):
            return set()
        return set().union(*(_stored(t) for t in targets))
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    return set()


def _target_names(target: ast.AST, into: set[str], changed: set[str]) -> None:
    """Names bound by an assignment target into ``into``; roots of attribute/subscript targets into ``changed``."""
    if isinstance(target, ast.Name):
        into.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            _target_names(elt, into, changed)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, into, changed)
    elif isinstance(target, (ast.Attribute, ast.Subscript)):
        root = _root(target)
        if root:
            changed.add(root)


def _walk_outside_functions(body: Iterable[ast.stmt]):
    """Every node of ``body`` that is not inside a function or class body (their headers included)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack += node.decorator_list
            if not isinstance(node, ast.ClassDef):
                stack += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
            else:
                stack += node.bases + [k.value for k in node.keywords]
            continue
        if isinstance(node, ast.Lambda):
            continue
        stack += list(ast.iter_child_nodes(node))


def _changes(body: Iterable[ast.stmt], local: set[str]) -> tuple[set[str], set[str], bool]:
    """(names bound, names of objects changed in place, whether global state is set) by ``body``,
    outside its function bodies; names in ``local`` are ignored."""
    bound: set[str] = set()
    changed: set[str] = set()
    for node in _walk_outside_functions(body):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _target_names(t, bound, changed)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            _target_names(node.target, bound, changed)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _target_names(node.target, bound, changed)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, bound, changed)
        elif isinstance(node, ast.NamedExpr):
            _target_names(node.target, bound, changed)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                _target_names(t, bound, changed)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            changed |= set(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute):  # x.method(...) as a statement: it may change x
                root = _root(func)
                if root:
                    changed.add(root)
    return bound - local, changed - local, _sets_state(body)


def _sets_state(body: Iterable[ast.stmt]) -> bool:
    """Whether a top-level statement of ``body`` changes the process's global state (see _STATE_CALLS)."""
    for stmt in body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = _dotted(stmt.value.func)
            if name.split(".")[-1] in _STATE_CALLS or name.endswith(_STATE_DOTTED):
                return True
        elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Subscript) and _dotted(t.value).endswith("environ") for t in stmt.targets):
            return True
    return False


def _function_changes(tree: ast.Module) -> dict[str, tuple[set[str], set[str]]]:
    """For each function and class a cell defines: (the global names it may change in place or rebind,
    the names it reads, the other functions it may call among them)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        local: set[str] = set()
        declared: set[str] = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.arg):
                local.add(inner.arg)
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                local.add(inner.id)
            elif isinstance(inner, (ast.Global, ast.Nonlocal)):
                declared |= set(inner.names)
        local -= declared
        changed: set[str] = set(declared)
        for inner in ast.walk(node):
            body = getattr(inner, "body", None)
            if isinstance(body, list):
                changed |= _changes([s for s in body if isinstance(s, ast.stmt)], local)[1]
        before = out.setdefault(node.name, (set(), set()))
        before[0].update(changed)
        before[1].update(_reads(node))
    return out


def _magic_names(line: str) -> set[str]:
    names: set[str] = set()
    for braces, dollar in _MAGIC_NAMES.findall(line):
        names |= set(_WORD.findall(braces)) if braces else {dollar}
    return names


def cell_names(source: str) -> tuple[CellNames, dict[str, tuple[set[str], set[str]]]]:
    """What a code cell reads, binds and changes; and for each function or class it defines, the globals
    it may change and the names it reads."""
    lines = source.split("\n")
    out = CellNames()
    magic_reads: set[str] = set()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split()[:1]
        magic_reads = _magic_names(lines[0])
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:  # the body is not Python: a file, a shell script
            out.statements = [(magic_reads, set())]
            out.changed = set(magic_reads)  # %%writefile {path}: the file behind the name changes
            return out, {}
        lines = lines[1:]
    code = []
    for line in lines:
        if line.lstrip().startswith(("%", "!")):
            magic_reads |= _magic_names(line)
            code.append("")
        else:
            code.append(line)
    try:
        tree = ast.parse("\n".join(code))
    except SyntaxError:  # not Python the analysis can read: it reads and binds every word in it
        words = set(_WORD.findall(source))
        out.statements, out.bound, out.readable = [(words, set())], words, False
        return out, {}
    for stmt in tree.body:
        out.statements.append((_block_reads([stmt], set()), _binds(stmt, every_target=True)))
    if magic_reads:
        out.statements.append((magic_reads, set()))
    out.bound, out.changed, out.setup = _changes(tree.body, set())
    out.imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names}
    return out, _function_changes(tree)

