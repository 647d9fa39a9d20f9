"""No stray outputs on the site: a cell whose code the reader does not see shows only what it is meant to show.

myst-nb renders a cell tagged ``remove-input`` (or ``hide-input``) as its outputs alone, with no code
above them (or the code folded away), and drops a cell tagged ``remove-cell`` whole. The book uses
such cells for asserts, for glue (whose records the site does not show as outputs) and for figures
drawn without their plotting code. What one of them must not leave on a page is an orphan:

- the value of its last line, an ``execute_result`` (``Text(...)`` from a plotting call, an array,
  a list of artists) with no code to say where it came from;
- warnings, or anything else on ``stderr``;
- printed lines, unless the page prints without its code on purpose: the reference page that
  records the machine and the software of the build does (:data:`PRINTS_WITHOUT_CODE`).

Figures and anything else a cell displays on purpose (``display_data``) are what a ``remove-input``
cell is for, and are allowed. A ``remove-cell`` cell shows nothing on the page, but the notebooks
published beside the pages keep it: it may leave nothing but glue records. In every other cell, a
value that is the repr of a matplotlib object (``Text(0.5, 1.0, '...')``, ``[<matplotlib.lines...>]``)
is stray too: the plotting line should end with ``;``.

The chapters are read as they ran: from the site's execution cache, which the notebook tests fill
(they run first), or, where the cache does not hold the current run, by running the chapter here.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from booktools import execution_cache
from booktools.notebooks import myst_notebooks

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = myst_notebooks(ROOT / "chapters")

#: Tags under which the site shows a cell's outputs without its code.
OUTPUTS_ALONE = ("remove-input", "hide-input")
#: The mime type of a glue record: the site takes the value from it and shows no output.
GLUE = "application/papermill.record/"
#: Pages whose ``remove-input`` cells print on purpose, each under a sentence that introduces what it prints.
PRINTS_WITHOUT_CODE = ("reference/running_this_book.md",)
#: The repr of a matplotlib object, alone or in a list or tuple.
MATPLOTLIB_REPR = re.compile(r"^[\[(]?\s*(Text\(|<matplotlib\.|<Axes[:\s])")


def _is_glue(output) -> bool:
    data = output.get("data", {})
    return output.get("output_type") == "display_data" and bool(data) and all(k.startswith(GLUE) for k in data)


def _text(output) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    else:
        text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def stray_outputs(notebook, prints_without_code: bool = False) -> list[str]:
    """What the site (or the published notebook) would show that no cell meant to show: one line each.

    ``prints_without_code``: the page's ``remove-input`` cells print on purpose (their ``stdout`` is allowed).
    """
    found = []
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for number, cell in enumerate(code_cells, start=1):
        tags = set(cell.get("metadata", {}).get("tags", []))
        first_line = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""
        where = f"code cell {number}" + (f" {sorted(tags)}" if tags else "") + f" `{first_line}`"
        for output in cell.get("outputs", []):
            kind, text = output.get("output_type"), _text(output).strip()
            if _is_glue(output) or kind == "error":  # an error fails the notebook test itself
                continue
            if "remove-cell" in tags:
                found.append(f"{where}: a removed cell leaves {kind} {text[:80]!r} in the published notebook")
            elif tags & set(OUTPUTS_ALONE) and (
                    kind == "execute_result" or (kind == "stream" and (output.get("name") != "stdout"
                                                                       or not prints_without_code))):
                found.append(f"{where}: shows {kind} {text[:80]!r} with no code above it")
            elif kind == "execute_result" and MATPLOTLIB_REPR.match(text) and "image/png" not in output.get("data", {}):
                found.append(f"{where}: shows the repr {text[:80]!r}; end the plotting line with ';'")
    return found


# --- the rule, on planted cells --------------------------------------------------------------


def _cell(source, tags=(), outputs=()):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {}, outputs=list(outputs))


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


GLUED = nbformat.v4.new_output("display_data", data={GLUE + "text/plain": "1.5"}, metadata={"scrapbook": {"name": "x"}})
FIGURE = nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure size 600x300>"})
TITLE = nbformat.v4.new_output("execute_result", data={"text/plain": "Text(0.5, 1.0, 'times')"}, execution_count=1)
PRINTED = nbformat.v4.new_output("stream", name="stdout", text="left behind\n")
WARNED = nbformat.v4.new_output("stream", name="stderr", text="UserWarning: something\n")


def test_meant_outputs_pass():
    notebook = _notebook(
        _cell("assert x\nglue('x', 1.5, display=False)", ["remove-input"], [GLUED]),
        _cell("fig, ax = plt.subplots()\nax.plot(x);", ["remove-input"], [FIGURE]),
        _cell("glue('x', 1.5, display=False)", ["remove-cell"], [GLUED]),
        _cell("print(verdict)", ["hide-cell"], [PRINTED]),  # folded on purpose, shown when opened
        _cell("print('seen')\nax.plot(x)", [], [PRINTED, FIGURE]),
        _cell("6 * 7", [], [nbformat.v4.new_output("execute_result", data={"text/plain": "42"}, execution_count=2)]),
    )
    assert stray_outputs(notebook) == []


@pytest.mark.parametrize("tags, output, what", [
    (["remove-input"], TITLE, 'execute_result "Text(0.5, 1.0, \'times\')" with no code'),
    (["remove-input"], PRINTED, "stream 'left behind' with no code"),
    (["hide-input"], WARNED, "stream 'UserWarning: something' with no code"),
    (["remove-cell"], PRINTED, "a removed cell leaves stream 'left behind'"),
    (["remove-cell"], FIGURE, "a removed cell leaves display_data"),
    ([], TITLE, 'shows the repr "Text(0.5, 1.0, \'times\')"'),
])
def test_stray_outputs_are_found(tags, output, what):
    found = stray_outputs(_notebook(_cell("glue('x', 1.5, display=False)", [], [GLUED]),
                                    _cell("ax.set_title('times')", tags, [GLUED, output])))
    assert len(found) == 1 and what in found[0] and "code cell 2" in found[0], found


def test_a_page_that_prints_without_code_may_print_and_still_not_warn():
    notebook = _notebook(_cell("print(report)", ["remove-input"], [PRINTED]),
                         _cell("import warnings", ["remove-input"], [WARNED]),
                         _cell("ax.set_title('times')", ["remove-input"], [TITLE]))
    assert len(stray_outputs(notebook)) == 3
    found = stray_outputs(notebook, prints_without_code=True)
    assert len(found) == 2 and "code cell 2" in found[0] and "code cell 3" in found[1], found


def test_a_list_of_artists_is_stray_and_a_figure_value_is_not():
    lines = nbformat.v4.new_output("execute_result", execution_count=3,
                                   data={"text/plain": "[<matplotlib.lines.Line2D at 0x7f>]"})
    assert len(stray_outputs(_notebook(_cell("ax.plot(x)", [], [lines])))) == 1
    shown = nbformat.v4.new_output("execute_result", execution_count=4,
                                   data={"image/png": "iVBOR", "text/plain": "<matplotlib.figure.Figure at 0x7f>"})
    assert stray_outputs(_notebook(_cell("fig", [], [shown]))) == []


# --- the chapters as they ran ------------------------------------------------------------------


def executed(page: Path):
    return execution_cache.executed(ROOT, page)


def test_every_chapter_is_checked():
    assert len(CHAPTERS) >= 20, CHAPTERS
    assert all((ROOT / "chapters" / page) in CHAPTERS for page in PRINTS_WITHOUT_CODE), PRINTS_WITHOUT_CODE


@pytest.mark.slow
@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: str(p.relative_to(ROOT / "chapters")))
def test_no_stray_outputs(page):
    found = stray_outputs(executed(page), page.relative_to(ROOT / "chapters").as_posix() in PRINTS_WITHOUT_CODE)
    assert not found, f"{page.relative_to(ROOT)}:\n" + "\n".join(found)

