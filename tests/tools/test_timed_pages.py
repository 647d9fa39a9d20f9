"""booktools.timed_pages: the timed pages found, their printed verdicts read back, a page run end to end."""

from __future__ import annotations

import os

import jupytext
import nbformat
import pytest
from booktools import timed_pages as tp

from parallel_mcmc.measure.prediction import predict
from parallel_mcmc.measure.judging import Verdict
from parallel_mcmc.measure.rules import rate
from parallel_mcmc.measure.timing import Timing


def planted(times, predicted, name):
    return predict(Timing(name, tuple(times), max(times)), predicted)


def test_every_page_that_calls_the_judge_is_found():
    pages = tp.timed_pages()
    assert len(pages) >= 12
    assert all("judge(" in p.read_text() or "Experiment(" in p.read_text() for p in pages)
    assert any(p.name == "cost_model.md" for p in pages)


def test_a_printed_verdict_is_read_back():
    runs = {"serial": rate("serial", planted([1.0, 1.1], 0.95, "serial"), True),
            "two devices": rate("two devices", planted([0.5], 0.2, "two devices"), True)}
    earlier = (f"measurement 1: {runs['two devices']}", f"measurement 2: {runs['two devices']}")
    verdict = Verdict(runs, tries=3, cores=2, cores_got=1.93, strict=True, retried_for=earlier)
    text = "noise before\n" + str(verdict) + "\nafter"
    (found,) = tp.verdicts_in(text)
    assert found["tries"] == 3 and found["runs"] == 2 and found["cores_got"] == 1.93 and found["cores"] == 2
    assert [r["run"] for r in found["rows"]] == ["serial", "two devices"]
    assert [r["status"] for r in found["rows"]] == ["agrees", "far slower"]
    assert [r["fails"] for r in found["rows"]] == [False, True]
    assert found["rows"][1]["ratio"] == pytest.approx(0.4)
    serial = runs["serial"].prediction
    assert found["rows"][0]["measured_s"] == pytest.approx(serial.measured.median, rel=1e-3)
    assert found["rows"][0]["predicted_s"] == pytest.approx(serial.predicted, rel=1e-3)
    assert found["rows"][0]["spread"] == pytest.approx(round(serial.spread, 2))
    assert found["retried_for"] == list(earlier)  # the earlier failures are not read as runs
    assert tp.verdicts_in("no verdict here") == []


PAGE_CODE = """\
from parallel_mcmc.measure.prediction import predict
from parallel_mcmc.measure.judging import judge
from parallel_mcmc.measure.timing import Timing

verdict = judge(lambda: {"run": predict(Timing("run", (1.0, 1.0), 1.0), PREDICTED)}, cores=1)
print(verdict)
verdict.check()"""


def myst_page(code: str) -> str:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)], metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}})
    return jupytext.writes(notebook, fmt="md:myst")


@pytest.mark.parametrize("predicted, passed, status", [(0.95, True, "agrees"), (2.0, False, "beats the model")])
def test_a_page_runs_strict_in_a_fresh_kernel_and_its_verdict_is_kept(tmp_path, predicted, passed, status):
    before = os.environ.get("PARALLEL_MCMC_TIMING")
    page = tmp_path / "page.md"
    page.write_text(myst_page(PAGE_CODE.replace("PREDICTED", str(predicted))))
    run = tp.run_page(page, "quiet 1", timeout=120)
    assert run.passed is passed and run.seconds > 0
    assert [row["status"] for v in run.verdicts for row in v["rows"]] == [status]
    if not passed:
        assert "timing verdict failed after 3 measurement(s)" in run.error
        assert run.verdicts[0]["tries"] == 3
    assert os.environ.get("PARALLEL_MCMC_TIMING") == before, "strict is set in the kernel, not in this process"


def test_bad_arguments_are_refused(capsys):
    with pytest.raises(SystemExit):
        tp.main(["--quiet", "0", "--busy", "0"])
    assert "at least one pass" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tp.main(["--quiet", "1", "--busy", "0", "no/such/page.md"])
    assert "no such page" in capsys.readouterr().err
