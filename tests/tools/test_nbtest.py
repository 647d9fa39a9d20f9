"""The notebook tests (booktools.nbtest, loaded by the root conftest.py): MyST notebooks become nbval tests,
whose runs fill the site's cache."""

import os
import re
import time
from pathlib import Path

import pytest
from toy_book import chapter, code_cell

from booktools.execution_cache import BookCache, forget_if_src_changed, main
from booktools.nbtest import VERDICT_LOG_ENV

ROOT = Path(__file__).resolve().parents[2]

FRONT = chapter("A page")


def cell(source: str, tags: str = "") -> str:
    return "\n" + code_cell(source, tags)


@pytest.fixture
def book(pytester):
    pytester.makeconftest((ROOT / "conftest.py").read_text())  # the book's own: it loads the plugin

    def run(*extra):
        return pytester.runpytest_subprocess(
            "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider", "-v", *extra
        )

    return pytester, run


def test_each_code_cell_is_a_test_and_a_failure_shows_cell_and_traceback(book):
    pytester, run = book
    pytester.makefile(".md", planted=FRONT + cell("x = 41") + cell("assert x + 1 == 43, 'off by one'") + cell("y = 2"))
    result = run()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*Cell 1 FAILED*", "FAILED planted.md::Cell 1*"])
    out = result.stdout.str()
    assert "assert x + 1 == 43" in out  # the cell
    assert "AssertionError" in out and "off by one" in out  # its traceback
    assert not list(Path(pytester.path).glob("*.ipynb")), "no converted copy is left behind"
    result.stdout.fnmatch_lines(["*notebook run times*", "* s  planted.md"])


def test_cells_tagged_raises_exception_must_raise(book):
    pytester, run = book
    pytester.makefile(".md", raising=FRONT + cell("1 / 0", "raises-exception") + cell("print('after')"))
    run().assert_outcomes(passed=2)


def test_skip_execution_cells_are_skipped(book):
    pytester, run = book
    pytester.makefile(".md", skipping=FRONT + cell("raise SystemExit('never run')", "skip-execution") + cell("z = 1"))
    run().assert_outcomes(passed=1, skipped=1)


def test_a_cell_that_hangs_fails_at_the_time_limit(book):
    pytester, run = book
    pytester.makefile(".md", hanging=FRONT + cell("import time\ntime.sleep(60)"))
    result = run("--nbval-cell-timeout=3")
    result.assert_outcomes(failed=1)
    assert "Timeout" in result.stdout.str() or "timed out" in result.stdout.str()


def test_plain_markdown_is_not_collected(book):
    pytester, run = book
    pytester.makefile(".md", prose="# Just prose\n\n```python\nraise ValueError\n```\n")
    result = run()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def _site_reads(path):
    """The executed notebook the site build would take from the cache for a MyST page, or None."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    notebook = read_myst_markdown_notebook(path.read_text(), MdParserConfig(), path=str(path))
    cache = get_cache(str(path.parent / "_build" / ".jupyter_cache"))
    try:
        return cache.merge_match_into_notebook(notebook)[1]
    except KeyError:
        return None


def test_a_notebook_that_passes_goes_into_the_site_cache_with_its_outputs_in_order(book):
    pytester, run = book
    prints_and_shows = "\n".join([
        "from IPython.display import display, Markdown",
        "print('before')",
        "print('0%', end='\\r')",
        "print('100%')",
        "display(Markdown('**shown**'))",
        "print('after')",
    ])
    page = (
        FRONT
        + cell(prints_and_shows)
        + cell("raise SystemExit('never run')", "skip-execution")
        + cell("1 / 0", "raises-exception")
        + cell("6 * 7;")  # a value ended by `;` is not shown, as in Jupyter (nbval alone would keep it)
        + cell("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
               "fig, ax = plt.subplots()\nax.set_title('a title');")
        + cell("6 * 7")
    )
    pytester.makefile(".md", passing=page, failing=FRONT + cell("x = 1") + cell("assert x == 2"))
    run().assert_outcomes(passed=6, failed=1, skipped=1)
    notebook = _site_reads(pytester.path / "passing.md")
    assert notebook is not None, "the passing notebook is not in the cache"
    first, skipped, raising, silent, titled, last = [c for c in notebook.cells if c.cell_type == "code"]
    assert silent.outputs == [], silent.outputs
    assert not [o for o in titled.outputs if o.output_type == "execute_result"], titled.outputs  # no Text(...)
    assert [(o.output_type, o.get("name")) for o in first.outputs] == [
        ("stream", "stdout"), ("display_data", None), ("stream", "stdout")]  # in the order they came
    assert first.outputs[0].text == "before\n100%\n" and first.outputs[2].text == "after\n"  # a rewritten line: its end
    assert skipped.outputs == []
    assert raising.outputs[0].output_type == "error" and raising.outputs[0].ename == "ZeroDivisionError"
    assert last.outputs[0].data["text/plain"] == "42"
    assert notebook.metadata["language_info"]["pygments_lexer"] == "ipython3"  # the page needs it to highlight code
    assert _site_reads(pytester.path / "failing.md") is None, "a failing notebook must be executed by the site build"


def test_the_site_cache_still_reads_after_a_test_that_read_it_in_pytester(tmp_path):
    """The test above reads the cache inside pytester, which deletes the modules imported meanwhile; were SQLAlchemy
    among them, its second import would fail every later query ("'InternalTraversal' object is not callable", which
    failed the student edition's tests when they ran after it on the same worker). tests/conftest.py imports it first."""
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(tmp_path / "cache"))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    with pytest.raises(KeyError):  # not cached: a lookup that reached the database and found nothing
        cache.match_cache_notebook(notebook)


def test_the_cache_is_forgotten_when_the_helper_package_changes(tmp_path):
    book = BookCache(tmp_path)
    src, cache, stamp, doctrees = book.sources, book.cache, book.stamp, book.doctrees
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    cache.mkdir(parents=True)
    doctrees.mkdir()
    book.course_doctrees.mkdir(parents=True)
    assert forget_if_src_changed(book), "no stamp yet: forget"
    assert not cache.exists() and not doctrees.exists() and stamp.exists()  # every page is read and run again
    assert not book.course_doctrees.exists()  # the course edition's pages too
    cache.mkdir()
    later = time.time() + 5
    (src / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"")
    os.utime(src / "pkg" / "__pycache__" / "mod.cpython-311.pyc", (later, later))
    assert not forget_if_src_changed(book), "Python's own cache is not a change"
    assert cache.exists()
    os.utime(src / "pkg" / "mod.py", (later + 5, later + 5))
    assert forget_if_src_changed(book)
    assert not cache.exists()


def test_the_cache_command_takes_the_book_folder_and_refuses_other_words(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    assert main(["forget-if-src-changed", str(tmp_path)]) == 0
    assert "executing every notebook again" in capsys.readouterr().out  # no stamp yet
    assert BookCache(tmp_path).stamp.exists()
    assert main(["forget-if-src-changed", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""  # nothing changed since the stamp
    assert main(["forget"]) == 2
    assert "usage: python -m booktools.execution_cache forget-if-src-changed [ROOT]" in capsys.readouterr().err


def test_deprecations_from_the_stack_or_a_page_fail_and_others_stay_warnings(book):
    """In a notebook's kernel, a DeprecationWarning or FutureWarning raised by a page's own code or by jax fails its
    cell (booktools.strict_warnings); one raised by another package (here a module named like Jupyter's) does not."""
    pytester, run = book
    pytester.makepyfile(jupyter_like="import warnings\n\ndef old():\n    warnings.warn('old API', DeprecationWarning)\n")
    page = (FRONT
            + cell("import warnings\nwarnings.warn('a page calls an old API', DeprecationWarning)")
            + cell("import warnings\nwarnings.warn('a page calls an old API', FutureWarning)")
            + cell("from jax.experimental.shard_map import shard_map  # deprecated since jax 0.8")
            + cell("import sys, jupyter_like\njupyter_like.old()\nprint('still running')")
            + cell("import warnings\nwarnings.warn('just so you know', UserWarning)"))
    pytester.makefile(".md", strict=page)
    result = run()
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(["*Cell 0 FAILED*", "*Cell 1 FAILED*", "*Cell 2 FAILED*", "*Cell 3 PASSED*",
                                 "*Cell 4 PASSED*"])
    out = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout.str())  # the tracebacks' colours
    assert "DeprecationWarning: a page calls an old API" in out and "FutureWarning: a page calls an old API" in out
    assert "jax.experimental.shard_map is deprecated" in out


def test_deprecations_in_the_tests_are_errors_too(book):
    pytester, run = book
    pytester.makepyfile(test_planted="import warnings\n\ndef test_old():\n"
                                     "    warnings.warn('a test calls an old API', DeprecationWarning)\n")
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*DeprecationWarning: a test calls an old API*"])


def test_a_pages_timing_verdicts_are_summed_up_beside_its_run_time_and_in_the_cache(book):
    """The helper's judge appends a line per verdict to the file the plugin names for the page's kernel; the run
    times say how many timed measurements ran and the fewest cores got, and the cache keeps the same summary."""
    pytester, run = book
    judged = ("from parallel_mcmc.measure import Timing, judge, predict\n"
              "t = Timing('run', (1e-3, 1e-3, 1e-3), 1e-3)\n"
              "v1 = judge(lambda: {'run': predict(t, 1e-3)}, cores=1)\n"
              "v2 = judge(lambda: {'a': predict(t, 1e-3), 'b': predict(t, 1e-3)}, cores=1)\n"
              "assert v1.passed and v2.passed")
    pytester.makefile(".md", timed=FRONT + cell(judged), untimed=FRONT + cell("x = 1"))
    result = run()
    result.assert_outcomes(passed=2)
    result.stdout.re_match_lines([r".* s  timed\.md  2 timed, got >= [01]\.\d\d of 1 cores$", r".* s  untimed\.md$"])
    from jupyter_cache import get_cache

    records = {Path(r.uri).name: r.data for r in get_cache(str(pytester.path / "_build" / ".jupyter_cache")).list_cache_records()}
    timings = records["timed.md"]["timings"]
    assert timings["verdicts"] == 2 and timings["cores"] == 1 and timings["retried"] == timings["failed"] == 0
    assert 0 < timings["cores_got"] <= 1.5
    assert records["untimed.md"]["timings"]["verdicts"] == 0


def test_the_plugin_names_the_helpers_variable():
    from parallel_mcmc.measure import VERDICT_LOG_ENV as helpers

    assert VERDICT_LOG_ENV == helpers


def test_the_run_times_line_names_what_made_a_page_measure_again(tmp_path):
    import json

    from booktools.nbtest import _timings_note, verdict_summary

    log = tmp_path / "verdicts.jsonl"
    lines = [{"runs": 2, "cores": 2, "cores_got": 1.9, "tries": 1, "passed": True, "cores_free": True},  # older file
             {"runs": 6, "cores": 2, "cores_got": 1.7, "tries": 3, "passed": True, "cores_free": True,
              "retried_for": ["measurement 1: b: measured 10 ms ... beats the model  FAILS", "measurement 2: b: ..."]}]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    summary = verdict_summary(log)
    assert summary["retried"] == 1 and summary["cores_got"] == 1.7 and len(summary["retried_for"]) == 2
    assert _timings_note(summary) == ("  2 timed, got >= 1.70 of 2 cores, 1 re-measured "
                                      "(measurement 1: b: measured 10 ms ... beats the model  FAILS; 1 more)")
    assert _timings_note(verdict_summary(tmp_path / "none.jsonl")) == ""
