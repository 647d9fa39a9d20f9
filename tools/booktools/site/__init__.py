"""The book's Sphinx extension (``booktools.site`` in ``_config.yml``): small adjustments of the website.

1. Point the Colab and Binder buttons at the notebooks published with the site.
The pages are MyST Markdown, which Colab cannot open. The theme already copies
each executed notebook beside its page, to ``_sources/<page>.ipynb``. When the
site is published from the branch named in ``html_theme_options["repository_branch"]``
(``gh-pages``), those notebooks are in that branch too, so the launch buttons
open them there. For Binder, ``binder/requirements.txt`` is written beside the
site: the book's pins, with the helper package installed from the repository
(and without the book's own tools).

2. Make the published notebooks run and read well outside the site: a set-up
cell that installs the helper package where it is missing, and plain Markdown
(see :mod:`booktools.site.published_notebooks`); the helper's wheel and the pinned versions
are published in ``wheels/``.

3. Write each script tag once, and give the colour mode a valid default ("auto"). Jupyter Book registers sphinx-thebe's
configuration script twice, and the second copy throws "Identifier
'THEBE_JS_URL' has already been declared" in the browser.

4. Keep the outputs of a notebook taken from the execution cache in the
executed notebook that is published. myst-nb renders the cached notebook but
writes the notebook it read, without outputs, to ``jupyter_execute/`` (and so
to ``_sources/``); ``make test`` fills the cache from the notebook tests, so
without this every published notebook would come without its outputs.

5. The course edition (``book_edition = "course"``, or ``BOOK_EDITION=course``;
``make book EDITION=course``): the site without its solutions, its published
sources the student edition (see :mod:`booktools.site.course_edition`).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from . import course_edition
from .published_notebooks import publish_site, sphinx_labels


def _repo_parts(url: str) -> tuple[str, str]:
    org, repo = url.rstrip("/").removesuffix(".git").split("/")[-2:]
    return org, repo


def retarget_launch_buttons(app, pagename, templatename, context, doctree):
    notebook = context.get("ipynb_source")
    options = app.config.html_theme_options
    url = options.get("repository_url", "")
    if not notebook or not url.startswith("https://github.com/"):
        return
    org, repo = _repo_parts(url)
    branch = options.get("repository_branch", "gh-pages")
    published = f"_sources/{notebook}"
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group["buttons"]:
            if button.get("text") == "Colab":
                button["url"] = f"https://colab.research.google.com/github/{org}/{repo}/blob/{branch}/{published}"
            elif button.get("text") == "Binder":
                button["url"] = (
                    f"https://mybinder.org/v2/gh/{org}/{repo}/{branch}?urlpath=" + quote(f"lab/tree/{published}", safe="")
                )


def drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    # The theme's colour mode is empty unless set, which the browser reports as an error.
    context["default_mode"] = context.get("default_mode") or "auto"
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # the same inline script can come once with filename "" and once with None
        key = (getattr(script, "filename", None) or "", repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def write_binder_requirements(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    url = app.config.html_theme_options.get("repository_url", "")
    source = Path(app.confdir) / "requirements.txt"
    if not url or not source.exists():
        return
    helper = f"parallel_mcmc @ git+{url}@main"
    if course_edition.edition(app) == "course":  # the repository may not be public: the wheel published with the site
        from .published_notebooks import published_wheel

        helper = f"parallel_mcmc @ {published_wheel(app.confdir)[0]}"
    lines = []
    for line in source.read_text().splitlines():
        if line.strip() == "-e .":
            line = helper
        elif line.startswith("-e "):
            continue  # the book's tools (-e ./tools): not for readers
        lines.append(line)
    target = Path(app.outdir) / "binder" / "requirements.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")


def publish_notebooks(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    root = Path(app.confdir)
    url = app.config.html_theme_options.get("repository_url", "")
    if not (root / "src" / "parallel_mcmc").is_dir() or not url:
        return  # a book without the helper package (the build tests' one-page books)
    publish_site(app.outdir, Path(app.outdir).parent / "jupyter_execute", root, url,
                 labels=sphinx_labels(app.env.domaindata.get("std", {})))


def keep_cached_outputs() -> None:
    """Make myst-nb's cache client put a cached notebook's cells into the notebook it was given (see 4. above)."""
    from myst_nb.core.execute.cache import NotebookClientCache

    start = NotebookClientCache.start_client
    if getattr(start, "keeps_cached_outputs", False):
        return

    def start_client(self):
        read = self._notebook
        start(self)
        if self._notebook is not read:  # merged from the cache into a copy: the copy has the outputs
            read.cells[:] = self._notebook.cells
            read.metadata.update(self._notebook.metadata)
            self._notebook = read

    start_client.keeps_cached_outputs = True
    NotebookClientCache.start_client = start_client


def setup(app):
    keep_cached_outputs()
    app.connect("html-page-context", retarget_launch_buttons, priority=900)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("build-finished", write_binder_requirements)
    app.connect("build-finished", publish_notebooks)
    course_edition.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
