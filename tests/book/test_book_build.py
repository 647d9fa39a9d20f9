"""The book build: offline, MathJax served locally, and any failing cell fails the build.

Each test builds a one-page book with the project's own _config.yml. Where the
machine allows it (root and `unshare`), the build runs in a network namespace
with no network at all, so any request it tried would fail the build.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from toy_book import chapter, code_cell

ROOT = Path(__file__).resolve().parents[2]
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")


def page(code: str) -> str:
    """The one page of the test books: some maths, then a code cell holding ``code``."""
    return chapter("A page", "Some maths: $\\hat{R} < 1.01$.", code_cell(code))


def offline_prefix() -> list[str]:
    """A command prefix that cuts the network off, or [] where that is not possible."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0 or not shutil.which("ip"):
        return []
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "offline"]


def build(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    # what _config.yml names beside the installed extension (booktools.site): the bibliography
    shutil.copy(ROOT / "references.bib", book / "references.bib")
    (book / "node_modules").symlink_to(ROOT / "node_modules")
    (book / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (book / "page.md").write_text(page(code))
    cmd = [*offline_prefix(), str(JUPYTER_BOOK), "build", str(book), "-W", "-n", "--keep-going"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_a_good_page_builds_offline_with_local_mathjax(tmp_path):
    proc = build(tmp_path, "print(sum(range(4)))")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html = tmp_path / "book" / "_build" / "html"
    assert (html / "_static" / "tex-chtml.js").is_file()
    assert (html / "_static" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    page = (html / "page.html").read_text()
    assert 'src="_static/tex-chtml.js' in page
    assert "cdn.jsdelivr.net" not in page and "mathjax@3" not in page
    assert "6" in page  # the executed output is on the page


def test_a_failing_cell_fails_the_build(tmp_path):
    proc = build(tmp_path, "raise ValueError('planted failure')")
    assert proc.returncode != 0
    assert "planted failure" in proc.stdout + proc.stderr
