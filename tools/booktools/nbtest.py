"""The notebook tests: a pytest plugin that collects the book's MyST notebooks as tests.

The book's ``conftest.py`` loads it (``pytest_plugins = ["booktools.nbtest"]``).

Every ``.md`` file under the test paths whose front matter names a
``kernelspec`` is a notebook: jupytext reads it in memory (no converted copy
is written) and nbval runs its code cells, one test per cell, in a fresh
kernel per notebook. Cells tagged ``raises-exception`` must raise; cells
tagged ``skip-execution`` are skipped, as in the book build.

DeprecationWarning and FutureWarning from jax, jaxlib, numpyro, blackjax,
ArviZ and the book's own code are errors, in the tests and in every
notebook's kernel (:mod:`booktools.strict_warnings`).

The notebooks are collected before the other tests (``testpaths`` in
pyproject.toml), and each one that runs without a failure goes into the site
build's execution cache with nbval's outputs (:mod:`booktools.execution_cache`),
so the site build in ``tests/book/test_site.py`` executes none of them again.

Each notebook's kernel records the verdicts of its timings (the helper's
``judge`` appends a line per verdict to the file named by
``PARALLEL_MCMC_VERDICT_LOG``, which this plugin sets for that kernel alone):
the run times at the end of the run give, beside each notebook, its timed
measurements and the fewest cores its process got during one, and the
execution cache keeps the same summary (:func:`verdict_summary`) beside the
notebook's run time.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path
from unittest import mock

import nbval.kernel
import nbval.plugin
import pytest

from . import notebooks, strict_warnings
from .execution_cache import BookCache, forget_if_src_changed, store


class _NotebookReader:
    """Stands in for nbformat inside nbval while it collects one notebook."""

    def __init__(self, notebook):
        self._notebook = notebook

    def read(self, *args, **kwargs):
        return self._notebook

    def __getattr__(self, name):  # anything else comes from nbformat itself
        import nbformat

        return getattr(nbformat, name)


# The helper's variable (parallel_mcmc.measure.VERDICT_LOG_ENV), named here so that the plugin needs no JAX.
VERDICT_LOG_ENV = "PARALLEL_MCMC_VERDICT_LOG"
_verdict_logs: dict[str, Path] = {}  # notebook node id -> its kernel's verdict file


class MystNotebook(nbval.plugin.IPyNbFile):
    """An nbval notebook read from a MyST Markdown file by jupytext."""

    def setup(self):
        """Start the notebook's kernel (nbval) with its own verdict file in its environment."""
        handle, name = tempfile.mkstemp(prefix="verdicts-", suffix=".jsonl")
        os.close(handle)
        _verdict_logs[self.nodeid] = Path(name)
        before = os.environ.get(VERDICT_LOG_ENV)
        os.environ[VERDICT_LOG_ENV] = name
        try:
            super().setup()
        finally:
            if before is None:
                os.environ.pop(VERDICT_LOG_ENV, None)
            else:
                os.environ[VERDICT_LOG_ENV] = before

    def teardown(self):
        super().teardown()
        log = _verdict_logs.get(self.nodeid)
        if log is not None:
            _verdict_summaries[self.nodeid] = verdict_summary(log)
            log.unlink(missing_ok=True)

    def collect(self):
        notebook = notebooks.read(self.path)
        for cell in notebook.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell.cell_type == "code" and "skip-execution" in tags and "nbval-skip" not in tags:
                cell.metadata["tags"] = [*tags, "nbval-skip"]
        with mock.patch.object(nbval.plugin, "nbformat", _NotebookReader(notebook)):
            yield from super().collect()


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if notebooks.is_myst_notebook(file_path):
        return MystNotebook.from_parent(parent, path=file_path)
    return None


# --- How long each notebook took, reported at the end of the run ---------------------

NOTEBOOK_BUDGET_S = 60.0
_notebook_seconds: dict[str, float] = {}
_verdict_summaries: dict[str, dict] = {}


def verdict_summary(log: Path) -> dict:
    """A notebook's timed measurements, from its kernel's verdict file: ``verdicts`` (how many judged
    measurements), ``cores`` (the most cores a model counted), ``cores_got`` (the fewest the process got
    during one, or None without any), ``retried`` (verdicts measured more than once), ``failed`` and
    ``retried_for`` (what failed in the measurements made again, a line each)."""
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.is_file() else []
    return {"verdicts": len(lines), "cores": max((v["cores"] for v in lines), default=None),
            "cores_got": min((v["cores_got"] for v in lines), default=None),
            "retried": sum(v["tries"] > 1 for v in lines), "failed": sum(not v["passed"] for v in lines),
            "retried_for": [why for v in lines for why in v.get("retried_for", [])]}


def _timings_note(summary: dict | None) -> str:
    """What the run times line says of a notebook's timings: how many, and the fewest cores got during one."""
    if not summary or not summary["verdicts"]:
        return ""
    note = f"  {summary['verdicts']} timed, got >= {summary['cores_got']:.2f} of {summary['cores']} cores"
    note += f", {summary['retried']} re-measured" if summary["retried"] else ""
    why = summary.get("retried_for") or []
    return note + (f" ({why[0]}{f'; {len(why) - 1} more' if len(why) > 1 else ''})" if why else "")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".md"):
        _notebook_seconds[path] = _notebook_seconds.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not _notebook_seconds:
        return
    terminalreporter.section("notebook run times (kernel start included)")
    for path, seconds in sorted(_notebook_seconds.items()):
        flag = f"  over the {NOTEBOOK_BUDGET_S:.0f} s budget" if seconds > NOTEBOOK_BUDGET_S else ""
        terminalreporter.write_line(f"{seconds:7.1f} s  {path}{flag}{_timings_note(_verdict_summaries.get(path))}")
    terminalreporter.write_line(f"{sum(_notebook_seconds.values()):7.1f} s  in all")


# --- nbval's runs go into the site build's execution cache ---------------------------


def _adjacent_streams(outputs):
    """Merge consecutive outputs of one stream, as Jupyter keeps them.

    nbval's own ``coalesce_streams`` merges all of a stream's outputs into its
    first, which moves text printed after a figure to before it; the page would
    show that. A line rewritten after a carriage return (a progress bar) keeps
    its last text, as nbval does.
    """
    merged = []
    for out in outputs:
        last = merged[-1] if merged else None
        if out.output_type == "stream" and last is not None and last.output_type == "stream" and last.name == out.name:
            last.text += out.text
        else:
            merged.append(out)
    for out in merged:
        if out.output_type == "stream":
            out.text = nbval.plugin.carriagereturn_pat.sub("", out.text)
    return merged


nbval.plugin.coalesce_streams = _adjacent_streams


def _execute_with_history(self, cell_input, allow_stdin=None):
    """Run a cell as Jupyter does, with ``store_history=True``.

    nbval runs cells with ``store_history=False``. IPython decides whether a
    cell ending in ``;`` shows its value by reading the cell from its
    history, so without it ``ax.set_title(...);`` leaves a ``Text(...)``
    in the outputs that the site shows.
    """
    return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)


nbval.kernel.RunningKernel.execute_cell_input = _execute_with_history

_start_kernel = nbval.kernel.RunningKernel.__init__


def _start_kernel_with_strict_warnings(self, *args, **kwargs):
    """Start nbval's kernel, then make the stack's deprecation warnings errors in it, before the first cell."""
    _start_kernel(self, *args, **kwargs)
    msg_id = self.kc.execute(strict_warnings.KERNEL_CODE, silent=True, store_history=False)
    self.await_reply(msg_id, timeout=60)
    self.await_idle(msg_id, 60)


nbval.kernel.RunningKernel.__init__ = _start_kernel_with_strict_warnings


def pytest_configure(config: pytest.Config) -> None:
    for line in strict_warnings.pytest_filters():
        config.addinivalue_line("filterwarnings", line)

_cells_of: dict = {}  # notebook -> its cell items, in order
_cell_ok: dict = {}  # cell item -> no phase of it failed (a cell tagged to be skipped counts as passed)


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        if isinstance(item, nbval.plugin.IPyNbCell):
            _cells_of.setdefault(item.parent, []).append(item)
    if _cells_of and not session.config.option.collectonly:
        forget_if_src_changed(BookCache(session.config.rootpath))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if item.parent not in _cells_of:
        return
    report = outcome.get_result()
    tagged_skip = report.skipped and item.options["skip"] and not hasattr(report, "wasxfail")
    _cell_ok[item] = _cell_ok.get(item, True) and (report.passed or tagged_skip)
    if call.when == "teardown" and item is _cells_of[item.parent][-1]:
        _store_run(item.parent)


def _store_run(notebook_item) -> None:
    """Put a notebook that nbval ran without a failure into the site build's cache."""
    cells = _cells_of[notebook_item]
    if not all(_cell_ok.get(cell, False) for cell in cells):
        return
    from ipykernel.ipkernel import IPythonKernel

    notebook = notebooks.read(notebook_item.path)  # as the site build reads it: no tags added
    # nbval's kernel runs in this interpreter (--nbval-current-env): the language it would report
    notebook.metadata["language_info"] = dict(IPythonKernel.language_info)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if len(code) != len(cells) or any(c.source != getattr(i, "cell", c).source for c, i in zip(code, cells)):
        # the chapter was edited while it ran: its outputs belong to the old cells, so nothing is cached
        warnings.warn(f"{notebook_item.path} changed while it ran; its run is not put in the site's cache.")
        return
    for count, (cell, item) in enumerate(zip(code, cells, strict=True), start=1):  # nbval: an item a code cell
        cell.outputs = list(item.test_outputs or [])
        cell.execution_count = count if item.test_outputs is not None else None
    seconds = _notebook_seconds.get(notebook_item.nodeid, 0.0)
    store(BookCache(notebook_item.config.rootpath), notebook, Path(notebook_item.path), seconds,
          timings=_verdict_summaries.get(notebook_item.nodeid))
