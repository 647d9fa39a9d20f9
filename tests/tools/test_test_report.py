"""The summary that ends make test's output (booktools.test_report): failures in one line each, missing reports."""

from pathlib import Path

import pytest

from booktools import test_report

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="chapters.parallel_chains.chains_that_never_wait.md" name="chains_that_never_wait.md" time="48.2">
<failure message="AssertionError: 64 chains: the state machine is slower than lockstep (0.81x)&#10;second line">
long traceback</failure></testcase>
<testcase classname="tests.helper.test_measure" name="test_ok" time="0.3"/>
<testcase classname="tests.helper.test_measure" name="test_skip" time="0.0"><skipped message="no mpi"/></testcase>
<testcase classname="tests.book.test_site" name="test_build" time="120.5"><error message="">
ImportError: no module named x</error></testcase>
</testsuite></testsuites>
"""


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "first.xml"
    path.write_text(REPORT)
    return path


def test_each_failure_is_one_line_with_its_message_and_the_slowest_are_named(report: Path):
    lines = test_report.summary([("first", report)])
    assert lines[0].startswith("first: 4 tests, 2 not passed; slowest: test_build 120 s, chains_that_never_wait.md 48 s")
    assert test_report._short("chapters.other_parallelism.tempered_smc.md::Cell 9") == "tempered_smc Cell 9"
    assert lines[1] == "not passed (2):"
    assert lines[2] == ("  first: chapters.parallel_chains.chains_that_never_wait.md::chains_that_never_wait.md: "
                        "failed: AssertionError: 64 chains: the state machine is slower than lockstep (0.81x)")
    # an empty message attribute falls back to the element's text
    assert lines[3] == "  first: tests.book.test_site::test_build: error: ImportError: no module named x"
    assert len(lines) == 4


def test_a_missing_or_broken_report_is_named_and_the_rest_still_summarised(report: Path, tmp_path: Path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuites><testcase")
    lines = test_report.summary([("parallel", tmp_path / "nowhere.xml"), ("background", broken), ("first", report)])
    assert lines[0] == f"parallel: no report ({tmp_path / 'nowhere.xml'} is missing: the run did not finish)"
    assert lines[1].startswith(f"background: its report {broken} cannot be read")
    assert lines[2].startswith("first: 4 tests, 2 not passed")


def test_long_lists_are_cut_and_say_how_many_more(tmp_path: Path):
    cases = "".join(f'<testcase classname="t" name="case{i}" time="1"><failure message="{"x" * 500}"/></testcase>'
                    for i in range(15))
    path = tmp_path / "many.xml"
    path.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    lines = test_report.summary([("first", path)], most_problems=12)
    assert lines[1] == "not passed (15):"
    assert all(len(line) < 260 for line in lines)
    assert lines[-1] == "  ... and 3 more (the runs' output above has them all)"


def test_the_command_line_wants_run_equals_file(report: Path, capsys):
    assert test_report.main([f"first={report}"]) == 0
    assert "first: 4 tests, 2 not passed" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        test_report.main([str(report)])
    assert "give each report as RUN=FILE.xml" in capsys.readouterr().err


def test_a_notebook_cells_failure_is_named_by_the_exception_that_ended_it():
    text = ("\x1b[91mNotebook cell execution failed\x1b[0m\n\x1b[94mCell 12: Cell execution caused an exception\n\n"
            "Input:\n\x1b[0mjudge(runs)\n\n\x1b[94mTraceback:\x1b[0m\n---------\nAssertionError  Traceback\n"
            "Cell In[12], line 1\n----> 1 judge(runs)\n\nTimingError: lockstep against the state machine: 0.81x\n")
    assert test_report._one_line(text) == "Cell 12: TimingError: lockstep against the state machine: 0.81x"
    assert test_report._one_line("") == "(no message)"
    judged = ("Notebook cell execution failed\nCell 9: Cell execution caused an exception\n\nInput:\nsweep.check()\n"
              "Traceback:\nAssertionError: timing verdict failed after 3 measurement(s):\n"
              "2 devices, 128 × 250: measured 45.3 ms, predicted 61.0 ms: beats the model  FAILS\n")
    assert test_report._one_line(judged) == ("Cell 9: AssertionError: timing verdict failed after 3 measurement(s): "
                                             "2 devices, 128 × 250: measured 45.3 ms, predicted 61.0 ms: beats the "
                                             "model  FAILS")
    assert test_report._one_line("assert 1 == 2\nmore") == "assert 1 == 2"
