"""Every sentence about a measurement comes from the narrator; pages not yet moved to it choose theirs safely.

A page that measures through one declared experiment (``measure(Experiment(...))``, see
:mod:`parallel_mcmc.measure.experiment`) takes every sentence about a timing from the narrator
(:mod:`parallel_mcmc.measure.narrate`: ``result.sentence``, ``result.model_sentence``,
``result.numbers``): it holds no sentence dictionary keyed by a verdict, reads no ``reading``,
``status`` or ``outcome`` of one, and carries no values out of a measurement in a ``last`` global.
:data:`NOT_YET_NARRATED` lists the pages that still call the judge themselves; it may only shrink.
For those pages the older rule below still holds.

Before the narrator, a page picked a sentence from a measurement through the judge (``parallel_mcmc.measure``): a run's
``verdict.reading(name)`` or ``verdict.status(name)``, or a speedup's ``comparison.outcome``. The page
writes the choice as a dict with one entry for each case, the condition in view, subscripted by that
value. This test reads every chapter's code and checks each such dict: every case has its sentence
(a missing one would raise ``KeyError`` only on the run that meets it), and the sentence changes where
the verdict does (planting each case in turn picks a different text). The judge's thresholds themselves
are tested with planted numbers in ``tests/helper/test_judge.py``. Branching on a run's status with
``if`` is refused, since an ``if`` chain can silently lump cases together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from booktools.notebooks import myst_notebooks, read

from parallel_mcmc.measure.judging import OUTCOMES
from parallel_mcmc.measure.rules import READINGS, STATUSES

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"
#: What a choice is keyed by, and the cases it must name.
CASES = {"outcome": OUTCOMES, "status": STATUSES, "reading": READINGS}


def code_cells(path: Path) -> list[ast.Module]:
    cells = []
    for cell in read(path).cells:
        if cell.cell_type == "code":
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            cells.append(ast.parse(source))
    return cells


def keyed_by(node: ast.AST) -> str | None:
    """``"outcome"`` for ``x.outcome``, ``"status"``/``"reading"`` for ``x.status(...)``/``x.reading(...)``."""
    if isinstance(node, ast.Attribute) and node.attr == "outcome":
        return "outcome"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("status", "reading"):
        return node.func.attr
    return None


def choices(tree: ast.Module) -> list[tuple[str, dict[str, str], str | None]]:
    """Every ``{case: sentence, ...}[key]`` and ``{...}.get(key, default)`` in the cell: (kind, sentences, default)."""
    found = []
    for node in ast.walk(tree):
        table, key, default = None, None, None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict):
            table, key = node.value, node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and isinstance(node.func.value, ast.Dict) and node.args):
            table, key = node.func.value, node.args[0]
            default = ast.unparse(node.args[1]) if len(node.args) > 1 else None
        kind = keyed_by(key) if table is not None else None
        if kind:
            sentences = {}
            for k, v in zip(table.keys, table.values):
                assert isinstance(k, ast.Constant), f"a choice's cases must be written out: {ast.unparse(table)[:80]}"
                sentences[k.value] = ast.unparse(v)
            found.append((kind, sentences, default))
    return found


def branches_on_a_case(tree: ast.Module) -> list[str]:
    """``if``/``x if c else y`` tests that compare a single value with a case's name (outside comprehensions,
    which gather runs by status rather than choose a sentence for one)."""
    names = set(OUTCOMES) | set(STATUSES) | set(READINGS)
    inside_comprehension = {id(n) for comp in ast.walk(tree)
                            if isinstance(comp, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
                            for n in ast.walk(comp)}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)) and id(node.test) not in inside_comprehension:
            for compare in ast.walk(node.test):
                if id(compare) in inside_comprehension or not isinstance(compare, ast.Compare):
                    continue
                operands = [compare.left, *compare.comparators]
                operands += [e for o in operands if isinstance(o, (ast.Tuple, ast.List, ast.Set)) for e in o.elts]
                if {o.value for o in operands if isinstance(o, ast.Constant)} & names:
                    bad.append(ast.unparse(node.test))
    return bad


PAGES = myst_notebooks(CHAPTERS)
TIMED = [p for p in PAGES if "judge(" in p.read_text()]
NARRATED = [p for p in PAGES if "Experiment(" in p.read_text()]
#: Pages that still call the judge themselves and choose their own sentences: to be moved to the narrator.
NOT_YET_NARRATED: set[str] = set()


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_the_allow_list_names_only_pages_that_still_call_the_judge():
    assert NARRATED, "no page measures through an Experiment"
    assert sorted(NOT_YET_NARRATED - {_name(p) for p in TIMED}) == [], "a page moved to the narrator: drop it from the list"
    assert sorted({_name(p) for p in TIMED} - NOT_YET_NARRATED) == [], "a new page calls the judge: use Experiment"


@pytest.mark.parametrize("path", NARRATED, ids=_name)
def test_a_narrated_page_chooses_no_sentence_and_carries_no_global(path):
    text = path.read_text()
    cells = code_cells(path)
    assert [c for tree in cells for c in choices(tree)] == [], f"{path.name} chooses a sentence from a verdict"
    readers = [ast.unparse(n) for tree in cells for n in ast.walk(tree) if keyed_by(n)]
    assert readers == [], f"{path.name} reads a verdict's words itself: {readers}"
    assert "last = {}" not in text and "judge(" not in text, f"{path.name} keeps the judge's old plumbing"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_page_branches_on_a_single_status_with_if(path):
    bad = [test for tree in code_cells(path) for test in branches_on_a_case(tree)]
    assert not bad, f"{path.name}: choose these sentences from a dict keyed by the verdict: {bad}"


def test_the_check_catches_a_missing_case_a_lumped_case_and_an_if_chain():
    missing = ast.parse('s = {"agrees": "a", "beats the model": "b"}[v.reading("r")]')
    assert choices(missing) == [("reading", {"agrees": "'a'", "beats the model": "'b'"}, None)]
    lumped = ast.parse('s = {"faster": "x", "tie": "x", "slower": "y"}[c.outcome]')
    (kind, sentences, _), = choices(lumped)
    assert len(set(sentences.values())) < len(CASES[kind])
    chain = ast.parse('if v.status("r") == "agrees":\n    s = "a"\nelse:\n    s = "b"')
    assert branches_on_a_case(chain) == ['v.status(\'r\') == \'agrees\'']
    gathered = ast.parse('slow = [n for n in runs if v.status(n) in ("a cost missing", "far slower")]')
    assert branches_on_a_case(gathered) == []
    counted = ast.parse('if len(by_outcome["faster"]) == len(fixes):\n    s = "all"')
    assert branches_on_a_case(counted) == []
