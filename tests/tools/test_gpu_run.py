"""The prepared GPU run (booktools.gpu_run): its dry run on the CPU, what it keeps, and the pages' GPU boxes."""

import json
import re

import pytest

from booktools import gpu_run
from parallel_mcmc.measure import gpu_figures

SENTENCE = re.compile(r"^.+ against .+: (faster|slower|this run cannot tell them apart), \d+\.\d\dx")


@pytest.fixture(scope="module")
def dry_summary(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-run")
    summary = gpu_run.device(out, budget=240, dry_run=True, bench=False)
    assert sorted(p.name for p in out.iterdir()) == ["log.txt", "summary.json"]  # what comes back: few files
    return out / "summary.json", summary


def test_dry_run_runs_every_case_and_narrates_every_pair(dry_summary):
    _, summary = dry_summary
    assert summary["dry_run"] is True
    assert {name: entry["status"] for name, entry in summary["cases"].items()} == {
        name: "ok" for name in gpu_run.CASE_LIMITS}
    assert summary["device"]["backend"] == "cpu" and summary["device"]["jax"]
    for name in ("state_machine", "smc_work", "vmap_shard_map"):
        figures = summary["cases"][name]["figures"]
        assert figures["pairs"], name
        for pair in figures["pairs"].values():
            assert SENTENCE.match(pair["sentence"]), pair["sentence"]
            assert pair["low"] <= pair["speedup"] <= pair["high"] and pair["ideal"] > 0
            assert f"{pair['speedup']:.2f}x" in pair["sentence"]  # the sentence carries its own number
        assert "measurement(s)" in figures["verdict"]


def test_a_dry_run_or_a_run_without_a_gpu_is_never_kept(dry_summary, tmp_path):
    with pytest.raises(ValueError, match="dry run or ran on no GPU"):
        gpu_run.keep(dry_summary[0], tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_kept_run_gives_the_pages_a_labelled_box(dry_summary, tmp_path):
    assert gpu_figures("state_machine", start=tmp_path) is None  # no run kept: no box
    run = json.loads(dry_summary[0].read_text())
    run.update(dry_run=False)
    run["device"].update(gpu="Some GPU 80GB", driver="1.2", date="2030-01-02")
    (tmp_path / "summary.json").write_text(json.dumps(run))
    kept = gpu_run.keep(tmp_path / "summary.json", tmp_path / "book" / "results" / "gpu")
    assert kept.name == "2030-01-02-some-gpu-80gb.json"
    page_dir = tmp_path / "book" / "chapters" / "part"
    page_dir.mkdir(parents=True)
    figures = gpu_figures("state_machine", start=page_dir)
    pair = next(iter(figures.figures["pairs"]))
    box = figures.box([pair])
    assert "On one GPU" in box and "Some GPU 80GB" in box and "2030-01-02" in box and "driver 1.2" in box
    assert figures.sentence(pair) in box
    with pytest.raises(KeyError, match="has no pair"):
        figures.sentence("no such pair")
    run["cases"]["smc_work"]["status"] = "timed out after 120 s"  # a case that did not finish shows no box
    kept.write_text(json.dumps(run))
    assert gpu_figures("smc_work", start=page_dir) is None


def test_wheels_are_the_pinned_versions_and_an_unpinned_one_is_refused(tmp_path):
    specs = gpu_run.pinned()
    assert [s.split("==")[0] for s in specs] == list(gpu_run.WHEELS) and all("==" in s for s in specs)
    with pytest.raises(LookupError, match="not pinned"):
        gpu_run.pinned(["no-such-package"])
    gpu_run.prepare(tmp_path, download=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["wheels"] == specs and manifest["cases"] == gpu_run.CASE_LIMITS


def test_the_command_line_needs_a_subcommand(capsys):
    with pytest.raises(SystemExit):
        gpu_run.main([])
    assert "prepare" in capsys.readouterr().err
