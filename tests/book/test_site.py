"""The website as a reader meets it, in a real browser.

Builds the site (``make book``; the execution cache makes this quick when
nothing changed), serves it on 127.0.0.1 and opens every page in Debian's
Chromium, driven by Playwright with the system browser (no browser is ever
downloaded). Any request that leaves 127.0.0.1 is blocked and counted as a
failure, so the site is shown to work offline.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="No Chromium on this machine: install Debian's `chromium` package (apt-get install chromium) "
    "to run the browser test; .ci/run installs it.",
)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(built_site):
    handler = functools.partial(QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is in requirements.txt; run make test")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Visit:
    """A page opened in the browser, with everything that went wrong while loading it."""

    def __init__(self, browser, base: str, path: str):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.problems: list[str] = []
        host = urlparse(base).netloc

        def route(r):
            if urlparse(r.request.url).netloc in (host, "") or r.request.url.startswith(("data:", "blob:")):
                r.continue_()
            else:
                self.problems.append(f"request leaves the site: {r.request.url}")
                r.abort()

        self.page.route("**/*", route)
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed request: {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))
        self.page.goto(f"{base}/{path}", wait_until="load")
        self.page.wait_for_load_state("networkidle")

    def broken_images(self) -> list[str]:
        return self.page.evaluate(
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )


def all_pages() -> list[str]:
    return sorted(
        str(p.relative_to(HTML))
        for p in HTML.rglob("*.html")
        if not str(p.relative_to(HTML)).startswith(("_sources", "_static"))
    )


def test_every_page_loads_cleanly_offline(site, browser):
    pages = all_pages()
    assert "index.html" in pages and "chapters/getting_started/devices.html" in pages
    report = {}
    for path in pages:
        visit = Visit(browser, site, path)
        visit.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        visit.page.wait_for_load_state("networkidle")
        problems = visit.problems + [f"image did not load: {src}" for src in visit.broken_images()]
        if problems:
            report[path] = problems
        visit.page.close()
    assert not report, "\n".join(f"{page}:\n  " + "\n  ".join(p) for page, p in report.items())
    print(f"{len(pages)} pages opened without errors")


def test_maths_renders_from_the_local_mathjax(site, browser):
    visit = Visit(browser, site, "chapters/intro.html")
    visit.page.wait_for_selector("mjx-container", timeout=20_000)
    assert visit.page.locator("mjx-container").count() >= 1
    assert not visit.problems, visit.problems
    SHOTS.mkdir(parents=True, exist_ok=True)
    visit.page.screenshot(path=str(SHOTS / "introduction.png"), full_page=False)


def test_a_solution_opens_on_click(site, browser):
    visit = Visit(browser, site, "chapters/getting_started/devices.html")
    solution = visit.page.locator("div.solution.dropdown").first
    code = solution.locator("div.cell")
    assert not code.first.is_visible(), "the solution should be folded away until clicked"
    solution.locator(".toggle-button, button").first.click()
    code.first.wait_for(state="visible", timeout=5_000)
    # the first line of the page's first solution that defines something, read from the chapter itself
    from booktools.coursework.edition import make_student_notebook

    first = make_student_notebook(ROOT / "chapters/getting_started/devices.md", ROOT).exercises[0]
    line = next(ln.strip() for src in first.solution_code for ln in src.splitlines() if ln.startswith("def "))
    assert line in code.first.inner_text(), f"the solution of {first.label} should show {line!r}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    visit.page.screenshot(path=str(SHOTS / "devices.png"), full_page=False)


def test_search_finds_a_known_word(site, browser):
    visit = Visit(browser, site, "search.html?q=committed")
    results = visit.page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=20_000)
    links = [results.nth(i).locator("a").first.get_attribute("href") for i in range(results.count())]
    assert any(re.search(r"getting_started/devices\.html", href or "") for href in links), links


def test_published_notebooks_have_their_outputs(site):
    """The notebooks behind the download and launch buttons are the executed ones, even when they came from the cache."""
    published = sorted((HTML / "_sources" / "chapters").rglob("*.ipynb"))
    assert len(published) >= 20, published
    for path in published:
        notebook = json.loads(path.read_text())
        code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        assert sum(len(c.get("outputs", [])) for c in code[1:]) > 0, f"{path.name} has no outputs"  # code[0]: set-up cell


def test_launch_and_download_buttons_point_at_the_notebook(site, browser):
    visit = Visit(browser, site, "chapters/getting_started/devices.html")
    hrefs = visit.page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert any(h.startswith("https://colab.research.google.com/github/") and h.endswith("devices.ipynb") for h in hrefs)
    assert any(h.startswith("https://mybinder.org/v2/gh/") and "devices.ipynb" in h for h in hrefs)
    assert any(h.endswith("_sources/chapters/getting_started/devices.ipynb") for h in hrefs), "no .ipynb download"
    assert any(h.endswith("_sources/chapters/getting_started/devices.md") for h in hrefs), "no .md download"
    assert (HTML / "_sources" / "chapters" / "getting_started" / "devices.ipynb").is_file()
    assert visit.page.locator("button.copybtn").count() >= 1, "code cells should have copy buttons"
