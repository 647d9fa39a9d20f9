"""Opening a chapter in JupyterLab must not change it: every chapter is a fixed point of jupytext's MyST round trip."""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

from booktools.format import main, unstable
from booktools.notebooks import myst_notebooks, normalised_text, saved_text

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = myst_notebooks(ROOT / "chapters")
SOLUTION_CHAPTER = ROOT / "chapters/parallel_chains/vmap_pmap_shard_map.md"


def test_chapters_are_found():
    assert len(CHAPTERS) >= 15, f"only {len(CHAPTERS)} MyST notebooks found under chapters/"
    assert SOLUTION_CHAPTER in CHAPTERS


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.relative_to(ROOT / "chapters").as_posix() for p in CHAPTERS])
def test_chapter_is_saved_unchanged(path):
    message = unstable(path)
    if message:
        pytest.fail(message.replace(f"{ROOT}/", ""), pytrace=False)


def test_front_matter_carries_what_jupytext_writes():
    for path in CHAPTERS:
        meta = jupytext.read(path).metadata["jupytext"]["text_representation"]
        assert meta.get("format_name") == "myst" and meta.get("jupytext_version") == jupytext.__version__, (
            f"{path.relative_to(ROOT)}: its front matter should name jupytext {jupytext.__version__}; run `make format`"
        )


def planted(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chapters" / "planted.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("spoil", ["no jupytext_version", "no blank lines around a solution's code cell",
                                   "blank lines ending a code cell"])
def test_an_unnormalised_chapter_is_reported_and_make_format_fixes_it(tmp_path, spoil, capsys):
    text = normalised_text(SOLUTION_CHAPTER.read_text(encoding="utf-8"))  # as `make format` leaves it
    if spoil == "no jupytext_version":
        spoiled = "".join(line for line in text.splitlines(keepends=True) if "jupytext_version:" not in line)
    elif spoil == "no blank lines around a solution's code cell":
        spoiled = text.replace("\n\n```{code-cell}", "\n```{code-cell}").replace("```\n\n```{solution-end}", "```\n```{solution-end}")
    else:
        spoiled = text.replace("\n```\n", "\n\n\n```\n", 1)
    assert spoiled != text
    path = planted(tmp_path, spoiled)

    message = unstable(path)
    assert message is not None
    assert message.startswith(f"{path} changes when JupyterLab saves it; run `make format` and commit the result.")
    assert "\n--- " in message and "\n+++ " in message and "\n@@ " in message  # a unified diff excerpt
    assert main(["--check", str(path.parent)]) == 1
    assert path.read_text(encoding="utf-8") == spoiled, "--check must change nothing"

    assert main([str(path.parent)]) == 0  # what `make format` runs
    assert unstable(path) is None
    assert main(["--check", str(path.parent)]) == 0
    fixed = path.read_text(encoding="utf-8")
    assert saved_text(fixed) == fixed
    if spoil != "blank lines ending a code cell":
        assert fixed == text
    assert [c.source for c in jupytext.reads(fixed, fmt="md:myst").cells] == \
        [c.source.rstrip("\n") if c.cell_type == "code" else c.source for c in jupytext.reads(spoiled, fmt="md:myst").cells]
    capsys.readouterr()


def test_command_rejects_a_plain_markdown_file(tmp_path, capsys):
    plain = tmp_path / "prose.md"
    plain.write_text("# Only prose\n")
    assert main([str(plain)]) == 2
    assert "not a folder or a MyST notebook" in capsys.readouterr().err


def test_make_format_runs_the_formatter():
    makefile = (ROOT / "Makefile").read_text()
    assert "\nformat: $(STAMP)\n\t$(PY) -m booktools.format" in makefile
    assert "`make format`" in (ROOT / "README.md").read_text()
