"""Notebooks published with the website that run and read well outside it.

The site publishes each executed chapter as ``_sources/<page>.ipynb``, which
the Colab and Binder buttons open and the download button hands out. Outside
the book's repository two things go wrong with them: ``parallel_mcmc`` is not
installed, and MyST's roles (``{glue:text}``, ``{cite:p}``, ``{doc}``, ``{ref}``) and the
exercise blocks show up as raw markup. :func:`publish_notebook` fixes both:

- it puts a **set-up cell** first, which does nothing where the helper package
  can be imported and otherwise installs it (the wheel published with the
  site, with the book's pinned versions as constraints) and says so;
- it rewrites the Markdown cells: glued values become their values (formatted
  as the page formats them), citations become "(Author et al., year)" with a
  link to the bibliography, links to other pages and to labelled targets
  (a section, an exercise) point at the website, and exercise and solution
  blocks become bold headings.

:func:`publish_site` does it for every notebook of a built site and writes the
wheel and the constraints beside it; the book's Sphinx extension calls it at
the end of ``make book``. The set-up cell reads two environment variables
first, so a test (or a learner with a local copy) can point it elsewhere:
``PARALLEL_MCMC_WHEEL`` (a wheel file or URL) and ``PARALLEL_MCMC_CONSTRAINTS``
(a constraints file or URL; empty for none).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

import nbformat
from pybtex.database import parse_file

__all__ = [
    "SETUP_TAG",
    "setup_cell_source",
    "citation_texts",
    "sphinx_labels",
    "GLUE_ROLE",
    "glued_values",
    "readable_markdown",
    "add_setup_cell",
    "publish_notebook",
    "build_wheel",
    "wheel_name",
    "published_wheel",
    "site_url",
    "publish_site",
]

#: The tag of the set-up cell, so that a notebook is never given two.
SETUP_TAG = "book-setup"

_SETUP = '''# Set-up, added when the book was built: where the book's helper package is missing
# (Colab, Binder, a downloaded notebook), install it; where it is present, do nothing.
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("parallel_mcmc") is None:
    wheel = os.environ.get("PARALLEL_MCMC_WHEEL", {wheel!r})
    constraints = os.environ.get("PARALLEL_MCMC_CONSTRAINTS", {constraints!r})
    command = [sys.executable, "-m", "pip", "install", "--quiet", wheel]
    if constraints:
        command += ["--constraint", constraints]
    subprocess.run(command, check=True)
    print(f"Installed the book's helper package (parallel_mcmc) from {{wheel}}"
          + (f", with the versions pinned in {{constraints}}." if constraints else "."))'''


def setup_cell_source(wheel: str, constraints: str = "") -> str:
    """The set-up cell's code: install ``wheel`` (with pins from ``constraints``) unless the package is there."""
    return _SETUP.format(wheel=wheel, constraints=constraints)


def _last_names(persons: Any) -> list[str]:
    return [" ".join(p.last_names) for p in persons]


def citation_texts(bib_file: str | Path) -> dict[str, str]:
    """``{key: "Author et al., year"}`` (or "A and B, year") for every entry of a BibTeX file."""
    entries = parse_file(str(bib_file)).entries
    texts = {}
    for key, entry in entries.items():
        names = _last_names(entry.persons.get("author", []))
        who = names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2 else f"{names[0]} et al."
        who = re.sub(r"[{}]", "", who) or key
        texts[key] = f"{who}, {entry.fields.get('year', 'n.d.')}"
    return texts


def sphinx_labels(std_domain: Mapping[str, Any]) -> dict[str, tuple[str, str, str]]:
    """``{label: (page, anchor, title)}`` for every target a ``{ref}`` may name, from the Sphinx environment's
    ``env.domaindata["std"]`` (its ``labels``, which have a title, and ``anonlabels``, which have none: "")."""
    found = {name: (doc, anchor, "") for name, (doc, anchor) in std_domain.get("anonlabels", {}).items()}
    found.update({name: (doc, anchor, title) for name, (doc, anchor, title) in std_domain.get("labels", {}).items()})
    return found


def _glue_text(name: str, spec: str, values: Mapping[str, str], where: str) -> str:
    if name not in values:
        raise KeyError(f"{where}: no glued value named {name!r} (was the page executed?)")
    shown = values[name]
    if not spec:
        return shown.strip("'\"")
    try:
        value = ast.literal_eval(shown)
    except (ValueError, SyntaxError):
        value = shown
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)


#: A glue role, any of its forms (``{glue}``, ``{glue:}``, ``{glue:text}``, ``{glue:md}``): the name, then the format.
GLUE_ROLE = re.compile(r"\{glue(?::(?:text|md|any)?)?\}`([A-Za-z0-9_]+)(?::([^`]*))?`")


def glued_values(notebook: Any) -> dict[str, str]:
    """``{name: text/plain}`` of every value an executed notebook glued (myst-nb's ``glue`` records in its outputs)."""
    values = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            record = (output.get("metadata") or {}).get("scrapbook") or {}
            if "name" in record:
                text = output.get("data", {}).get(record.get("mime_prefix", "") + "text/plain")
                if text is not None:
                    values[record["name"]] = "".join(text) if isinstance(text, list) else text
    return values


def readable_markdown(source: str, glue: Mapping[str, str], citations: Mapping[str, str], site: str,
                      page: str, where: str = "", labels: Mapping[str, tuple[str, str, str]] | None = None,
                      *, exercise_blocks: bool = True, missing: Callable[[str, str], str] | None = None) -> str:
    """One Markdown cell as plain Markdown: glue, citations, page links, references and exercise blocks resolved.

    ``glue`` maps names to the ``text/plain`` of their glued values; ``site`` is
    the website's address and ``page`` this page's path in it (``chapters/part/page``);
    ``labels`` the targets ``{ref}`` and ``{numref}`` may name, ``{label: (page, anchor, title)}``
    (:func:`sphinx_labels`): a ``{ref}`` of a label alone becomes a link to the
    target with its title as the text (the label itself where it has none),
    one written ``text <label>`` a link with that text. ``{eq}`` becomes the
    equation's label in brackets, ``{math}`` inline ``$...$``, ``{download}`` a
    link to the file, relative to the page.

    ``exercise_blocks=False`` leaves the exercise and solution directives as they
    are (the student edition, whose grader reads them); otherwise they become bold
    headings. ``missing(kind, name)`` gives the text for a glued value
    (``kind="glue"``), a citation (``"cite"``) or a target (``"ref"``) that is not
    known; without it, one that is not known raises ``KeyError``. An empty
    ``site`` (a book with no website) gives the text of links without the links.
    """
    bibliography = f"{site}chapters/reference/bibliography.html"

    def link(text: str, url: str) -> str:
        return f"[{text}]({url})" if site else text

    def glued(match: re.Match) -> str:
        if missing is not None and match.group(1) not in glue:
            return missing("glue", match.group(1))
        return _glue_text(match.group(1), match.group(2) or "", glue, where)

    def cited(match: re.Match) -> str:
        keys = [k.strip() for k in match.group(2).split(",")]
        unknown = [k for k in keys if k not in citations]
        if unknown and missing is None:
            raise KeyError(f"{where}: no bibliography entry for {unknown}")
        text = "; ".join(citations[k] if k in citations else missing("cite", k) for k in keys)
        return f"({link(text, bibliography)})"

    def linked(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if target is None:  # {doc}`target`
            target, text = text, text.rsplit("/", 1)[-1].replace("_", " ")
        base = page.rsplit("/", 1)[0]
        parts = []
        for part in f"{base}/{target}".split("/"):
            if part == "..":
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        return link(text.strip(), f"{site}{'/'.join(parts)}.html")

    def referenced(match: re.Match) -> str:
        text, label = match.group(1).strip(), match.group(2)
        if label is None:  # {ref}`label`
            text, label = "", text
        label = label.strip()
        if label not in (labels or {}):
            if missing is not None:
                return text or missing("ref", label)
            raise KeyError(f"{where}: no target labelled {label!r} for {{ref}} (is it defined in the book?)")
        doc, anchor, title = labels[label]
        return link(text or title or label, f"{site}{doc}.html{f'#{anchor}' if anchor else ''}")

    def downloaded(match: re.Match) -> str:
        text, target = match.group(1).strip(), (match.group(2) or match.group(1)).strip()
        return f"[{text}]({target})"

    out = GLUE_ROLE.sub(glued, source)
    out = re.sub(r"\{cite(:[pt])?\}`([^`]+)`", cited, out)
    out = re.sub(r"\{doc\}`([^`<]+?)(?:\s*<([^`>]+)>)?`", linked, out)
    out = re.sub(r"\{(?:ref|numref)\}`([^`<]+?)(?:\s*<([^`>]+)>)?`", referenced, out)
    out = re.sub(r"\{eq\}`([^`]+)`", lambda m: f"({m.group(1).strip()})", out)
    out = re.sub(r"\{math\}`([^`]+)`", lambda m: f"${m.group(1)}$", out)
    out = re.sub(r"\{download\}`([^`<]+?)(?:\s*<([^`>]+)>)?`", downloaded, out)
    if exercise_blocks:
        out = re.sub(r"```\{exercise-start\}[^\n]*\n(?::label:\s*(\S+)\s*\n)?(?::[^\n]*\n)*```",
                     lambda m: f"**Exercise{f' ({m.group(1)})' if m.group(1) else ''}.**", out)
        out = re.sub(r"```\{solution-start\}[^\n]*\n(?::[^\n]*\n)*```", "**Solution.**", out)
        out = re.sub(r"```\{(?:exercise|solution)-end\}[^\n]*\n```", "", out)
    return out.strip("\n")


def add_setup_cell(nb: Any, wheel: str, constraints: str = "") -> Any:
    """Put the set-up cell (tagged :data:`SETUP_TAG`) first in ``nb``, in place, unless it is there; return ``nb``."""
    if not (nb.cells and SETUP_TAG in nb.cells[0].get("metadata", {}).get("tags", [])):
        setup = nbformat.v4.new_code_cell(setup_cell_source(wheel, constraints), metadata={"tags": [SETUP_TAG]})
        setup["id"] = SETUP_TAG
        nb.cells.insert(0, setup)
    return nb


def publish_notebook(nb: Any, glue: Mapping[str, str], citations: Mapping[str, str], site: str, page: str,
                     wheel: str, constraints: str = "", labels: Mapping[str, tuple[str, str, str]] | None = None) -> Any:
    """A copy of ``nb`` with the set-up cell first and every Markdown cell made plain (see the module)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = readable_markdown(cell.source, glue, citations, site, page, where=page, labels=labels)
    add_setup_cell(nb, wheel, constraints)
    nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat, nb.nbformat_minor = 4, 4
    nb.metadata.pop("jupytext", None)
    return nb


def build_wheel(root: str | Path, out_dir: str | Path) -> Path:
    """Build the helper package's wheel from ``root`` into ``out_dir``, without network; return its path.

    Only ``src/parallel_mcmc`` is copied to a scratch folder and built there: the
    build leaves nothing behind in the repository, and the wheel holds the
    helper package alone, never the grader's ``coursework`` package and its
    reference answers.
    """
    root, out_dir = Path(root), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "src-copy"
        shutil.copytree(root / "src" / "parallel_mcmc", copy / "src" / "parallel_mcmc",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for name in ("pyproject.toml", "README.md"):
            if (root / name).exists():
                shutil.copy(root / name, copy / name)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--wheel-dir", str(out_dir), str(copy)], check=True, capture_output=True, text=True)
    wheels = sorted(out_dir.glob("parallel_mcmc-*.whl"))
    if not wheels:
        raise RuntimeError(f"pip wheel wrote no parallel_mcmc wheel to {out_dir}.")
    return wheels[-1]


def wheel_name(root: str | Path) -> str:
    """The file name of the helper's wheel, from the name and version in ``root/pyproject.toml``."""
    import tomllib

    project = tomllib.loads((Path(root) / "pyproject.toml").read_text())["project"]
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return f"{name}-{project['version']}-py3-none-any.whl"


def published_wheel(root: str | Path) -> tuple[str, str]:
    """Where the site publishes the wheel and the constraints: ``(wheel URL, constraints URL)``.

    The site's address comes from ``repository.url`` in ``root/_config.yml``.
    """
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}
    site = site_url(str((config.get("repository") or {}).get("url", "")))
    return f"{site}wheels/{wheel_name(root)}", f"{site}wheels/constraints.txt"


def site_url(repository_url: str) -> str:
    """The GitHub Pages address of a repository: ``https://github.com/org/repo`` -> ``https://org.github.io/repo/``."""
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?", repository_url)
    if not match:
        raise ValueError(f"expected a https://github.com/ORG/REPO address, got {repository_url!r}.")
    return f"https://{match.group(1)}.github.io/{match.group(2)}/"


def publish_site(html_dir: str | Path, executed_dir: str | Path, root: str | Path, repository_url: str,
                 labels: Mapping[str, tuple[str, str, str]] | None = None) -> list[Path]:
    """Rewrite every notebook under ``html_dir/_sources`` for publishing; write the wheel and constraints.

    ``executed_dir`` is where the build keeps each executed notebook's glued
    values (``<page>.glue.json``); ``root`` holds ``src/``, ``pyproject.toml``,
    ``requirements.txt`` and ``references.bib``; ``labels`` the build's targets
    for ``{ref}`` (:func:`sphinx_labels`). Returns the notebooks written.
    """
    html_dir, executed_dir, root = Path(html_dir), Path(executed_dir), Path(root)
    site = site_url(repository_url)
    wheel = build_wheel(root, html_dir / "wheels")
    pins = [line for line in (root / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith(("#", "-e"))]
    (html_dir / "wheels" / "constraints.txt").write_text("\n".join(pins) + "\n")
    citations = citation_texts(root / "references.bib")
    written = []
    for path in sorted((html_dir / "_sources").rglob("*.ipynb")):
        page = path.relative_to(html_dir / "_sources").with_suffix("").as_posix()
        glue_file = executed_dir / f"{page}.glue.json"
        glued = json.loads(glue_file.read_text()) if glue_file.exists() else {}
        glue = {name: out.get("data", {}).get("text/plain", "") for name, out in glued.items()}
        nb = nbformat.read(path, as_version=4)
        nb = publish_notebook(nb, glue, citations, site, page, wheel=f"{site}wheels/{wheel.name}",
                              constraints=f"{site}wheels/constraints.txt", labels=labels)
        nbformat.write(nb, path)
        written.append(path)
    return written
