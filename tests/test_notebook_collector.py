"""The collector in the root conftest.py: MyST notebooks become nbval tests."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FRONT = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page
"""


def cell(source: str, tags: str = "") -> str:
    head = f":tags: [{tags}]\n\n" if tags else ""
    return f"\n```{{code-cell}} ipython3\n{head}{source}\n```\n"


@pytest.fixture
def book(pytester):
    pytester.makeconftest((ROOT / "conftest.py").read_text())

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
