"""Published notebooks: a set-up cell that installs the helper where it is missing, and plain Markdown.

The slow test runs a published chapter as a stranger would: in a fresh virtual
environment that has JAX and the other pinned packages but not the helper
package, with pip kept off the network, the set-up cell installing the wheel
built from this repository.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from booktools.site.published_notebooks import (
    SETUP_TAG,
    build_wheel,
    citation_texts,
    publish_notebook,
    readable_markdown,
    published_wheel,
    setup_cell_source,
    site_url,
    sphinx_labels,
    wheel_name,
)

ROOT = Path(__file__).resolve().parents[2]

SITE = "https://org.github.io/book/"
CITES = {"vehtari2021rhat": "Vehtari et al., 2021", "a2020": "A and B, 2020"}


def test_markdown_roles_become_plain_markdown():
    glue = {"speedup": "1.8765", "label": "'two devices'", "count": "8"}
    text = ("Measured {glue:text}`speedup:.2f`x on {glue:text}`label`, {glue:text}`count` chains "
            "{cite:p}`vehtari2021rhat`; see {doc}`the model <../getting_started/cost_model>` and {doc}`chain_methods`.")
    out = readable_markdown(text, glue, CITES, SITE, "chapters/numpyro/a_correct_runner")
    assert out == (
        "Measured 1.88x on two devices, 8 chains "
        f"([Vehtari et al., 2021]({SITE}chapters/reference/bibliography.html)); see "
        f"[the model]({SITE}chapters/getting_started/cost_model.html) and "
        f"[chain methods]({SITE}chapters/numpyro/chain_methods.html)."
    )


def test_references_become_links_to_their_targets():
    labels = {"sec-rules": ("chapters/getting_started/cost_model", "sec-rules", "Three rules"),
              "ex-numpyro-split": ("chapters/numpyro/chain_methods", "ex-numpyro-split", ""),
              "intro": ("intro", "", "Parallel MCMC with JAX")}
    text = ("See {ref}`sec-rules`, {ref}`the rules <sec-rules>`, {ref}`ex-numpyro-split` and {ref}`intro`; "
            "{doc}`chain_methods` too.")
    out = readable_markdown(text, {}, {}, SITE, "chapters/numpyro/a_correct_runner", labels=labels)
    assert out == (
        f"See [Three rules]({SITE}chapters/getting_started/cost_model.html#sec-rules), "
        f"[the rules]({SITE}chapters/getting_started/cost_model.html#sec-rules), "
        f"[ex-numpyro-split]({SITE}chapters/numpyro/chain_methods.html#ex-numpyro-split) and "
        f"[Parallel MCMC with JAX]({SITE}intro.html); "
        f"[chain methods]({SITE}chapters/numpyro/chain_methods.html) too."
    )
    assert "{ref}" not in out
    with pytest.raises(KeyError, match="no-such-label"):
        readable_markdown("{ref}`no-such-label`", {}, {}, SITE, "p", where="page p", labels=labels)


def test_labels_from_the_sphinx_environment():
    """The std domain's labels have a title, its anonymous labels (a target before a paragraph) none."""
    std = {"labels": {"sec-rules": ("chapters/getting_started/cost_model", "sec-rules", "Three rules")},
           "anonlabels": {"sec-rules": ("chapters/getting_started/cost_model", "sec-rules"),
                          "fig-plot": ("chapters/numpyro/chain_methods", "fig-plot")}}
    assert sphinx_labels(std) == {"sec-rules": ("chapters/getting_started/cost_model", "sec-rules", "Three rules"),
                                  "fig-plot": ("chapters/numpyro/chain_methods", "fig-plot", "")}
    assert sphinx_labels({}) == {}


def test_exercise_blocks_become_headings():
    text = "```{exercise-start}\n:label: ex-a\n```\nDo it.\n```{exercise-end}\n```"
    assert readable_markdown(text, {}, {}, SITE, "p") == "**Exercise (ex-a).**\nDo it."
    text = "```{solution-start} ex-a\n:class: dropdown\n```\nLike this."
    assert readable_markdown(text, {}, {}, SITE, "p") == "**Solution.**\nLike this."


def test_missing_glue_or_citation_is_an_error_that_names_it():
    with pytest.raises(KeyError, match="nothing_here"):
        readable_markdown("{glue:text}`nothing_here`", {}, {}, SITE, "p", where="page p")
    with pytest.raises(KeyError, match="unknown2020"):
        readable_markdown("{cite:p}`unknown2020`", {}, {}, SITE, "p")


def test_citations_from_the_books_bibliography():
    texts = citation_texts(ROOT / "references.bib")
    assert texts["vehtari2021rhat"] == "Vehtari et al., 2021"
    assert all(re.fullmatch(r".+, \d{4}", t) for t in texts.values()), texts


def test_site_url():
    assert site_url("https://github.com/parallel-mcmc/parallel-mcmc-jax") == "https://parallel-mcmc.github.io/parallel-mcmc-jax/"
    with pytest.raises(ValueError, match="github.com"):
        site_url("https://example.org/x")


def test_setup_cell_does_nothing_where_the_package_is_installed(monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("the set-up cell must not install anything here")

    monkeypatch.setattr(subprocess, "run", refuse)
    exec(setup_cell_source("nowhere.whl", "nowhere.txt"), {})
    assert capsys.readouterr().out == ""


def test_publish_adds_one_setup_cell():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"), nbformat.v4.new_code_cell("1")])
    once = publish_notebook(nb, {}, {}, SITE, "p", wheel="w.whl")
    twice = publish_notebook(once, {}, {}, SITE, "p", wheel="w.whl")
    assert [c.cell_type for c in twice.cells] == ["code", "markdown", "code"]
    assert SETUP_TAG in twice.cells[0].metadata["tags"]
    nbformat.validate(twice)


def fresh_kernel(tmp_path: Path, monkeypatch, wheel: Path, name: str = "fresh") -> Path:
    """A Jupyter kernel ``name`` in a fresh virtual environment with the book's packages but not the helper;
    the set-up cell is pointed at ``wheel`` and pip kept off the network. Returns the environment's site folder."""
    env_dir = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    fresh_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                check=True, capture_output=True, text=True).stdout.strip()
    # The book's packages (JAX and the rest) without the helper: a path line in a .pth file adds
    # the directory, but the .pth files inside it (the helper's editable install) are not run.
    Path(fresh_site, "book_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = subprocess.run([str(python), "-c", "import jax, numpyro; import parallel_mcmc"], capture_output=True, text=True)
    assert "No module named 'parallel_mcmc'" in probe.stderr, probe.stderr
    kernels = tmp_path / "jupyter" / "kernels" / name
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": name, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PARALLEL_MCMC_WHEEL", str(wheel))
    monkeypatch.setenv("PARALLEL_MCMC_CONSTRAINTS", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no network: everything but the wheel is already there
    return Path(fresh_site)


def run_fresh(nb, tmp_path: Path, kernel: str, site: Path) -> str:
    """Run ``nb`` in the fresh kernel; check that its set-up cell installed the wheel; return all it printed."""
    workdir = tmp_path / f"{kernel}-work"
    workdir.mkdir()
    NotebookClient(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(workdir)}}).execute()
    first = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert "Installed the book's helper package (parallel_mcmc)" in first, first
    assert list(site.glob("parallel_mcmc-*.dist-info")), "the wheel was not installed in the fresh environment"
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    built = build_wheel(ROOT, tmp_path_factory.mktemp("wheels"))
    with zipfile.ZipFile(built) as archive:
        packages = {name.split("/")[0] for name in archive.namelist() if not name.endswith(".dist-info/")}
    assert {p for p in packages if not p.endswith(".dist-info")} == {"parallel_mcmc"}, packages
    assert built.name == wheel_name(ROOT)  # the name the student edition's set-up cell asks the site for
    assert published_wheel(ROOT)[0].endswith("/wheels/" + built.name)
    return built


@pytest.mark.slow
def test_published_chapter_runs_in_a_fresh_environment_from_the_wheel(tmp_path, monkeypatch, wheel):
    site = fresh_kernel(tmp_path, monkeypatch, wheel)
    chapter = jupytext.read(ROOT / "chapters/getting_started/cost_model.md")
    names = {m for c in chapter.cells if c.cell_type == "markdown"
             for m in re.findall(r"\{glue:text\}`([A-Za-z0-9_]+)", c.source)}
    published = publish_notebook(chapter, dict.fromkeys(names, "1"), citation_texts(ROOT / "references.bib"),
                                 SITE, "chapters/getting_started/cost_model", wheel="unused-outside-tests")
    run_fresh(published, tmp_path, "fresh", site)


@pytest.mark.slow
def test_answered_student_edition_runs_in_a_fresh_environment(tmp_path, monkeypatch, wheel):
    """The student edition brings the same set-up cell; answered with the book's solutions, every check passes."""
    from booktools.coursework.edition import make_student_notebook, with_answers
    from booktools.coursework.student import build_student_edition

    chapter = ROOT / "chapters/getting_started/devices.md"
    build_student_edition(ROOT, tmp_path / "student", [chapter], verbose=False)
    student = nbformat.read(tmp_path / "student/chapters/getting_started/devices.ipynb", as_version=4)
    assert SETUP_TAG in student.cells[0].metadata["tags"]
    solutions = {e.label: list(e.solution_code) for e in make_student_notebook(chapter, ROOT).exercises}
    student = with_answers(student, solutions)
    stubs = [c for c in student.cells if c.metadata.get("coursework", {}).get("role") == "stub"]
    assert stubs and all(c.source in solutions[c.metadata["coursework"]["exercise"]] for c in stubs), \
        "a stub was left unanswered"
    printed = run_fresh(student, tmp_path, "fresh-student", fresh_kernel(tmp_path, monkeypatch, wheel, "fresh-student"))
    assert printed.count(": correct.") == len(solutions), printed
