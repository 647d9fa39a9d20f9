"""Pages in a runtime whose device count cannot be forced: one page per part of the book.

``PARALLEL_MCMC_PLATFORM=cpu`` keeps JAX on the CPU as it is, one device, the
way a single GPU or a runtime that cannot be given more devices would. A page
that needs one device sets itself up as usual (the rest of it runs as in its
own test: the platform changes nothing after the first cell); a page that needs
more says so in its first cell and every later cell prints a note instead of
running: the notebook runs to its end with no error either way.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from parallel_mcmc.devices import PLATFORM_ENV, SKIPPED

ROOT = Path(__file__).resolve().parents[2]

# one page per part: (page, the devices its first cell asks for)
PAGES = [
    ("getting_started/cost_model", 2),
    ("sharding_lab/arrays_and_shardings", 8),
    ("parallel_chains/vmap_pmap_shard_map", 2),
    ("numpyro/chain_methods", 4),
    ("ensemble/mpi", 1),  # its cell that shows the missing-MPI error is tagged raises-exception
    ("beyond_one_machine/slurm_jobs", 1),  # (multi_process_jax runs one device a process: its processes never force a count)
    ("other_parallelism/tempered_smc", 2),
    ("reference/running_this_book", 1),
]


def test_one_page_of_every_part():
    parts = {p.parent.name for p in (ROOT / "chapters").glob("*/*.md")}
    assert {page.split("/")[0] for page, _ in PAGES} == parts, "add a page of the new part to PAGES"


def texts(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize(("page", "needs"), PAGES, ids=[p for p, _ in PAGES])
def test_page_without_forcible_devices(page, needs, monkeypatch, tmp_path):
    monkeypatch.setenv(PLATFORM_ENV, "cpu")
    nb = jupytext.read(ROOT / "chapters" / f"{page}.md")
    if needs == 1:
        # The count cell and the set-up after it, then what JAX sees: the page's own test runs the rest, the same
        # on this platform (PARALLEL_MCMC_PLATFORM is read by use_cpu_devices alone).
        code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        first = next(i for i in code_cells if "use_cpu_devices(1)" in nb.cells[i].source)
        keep = [i for i in code_cells if i >= first][:2]
        nb.cells = [c for i, c in enumerate(nb.cells) if i <= keep[-1]]
        nb.cells.append(nbformat.v4.new_code_cell("import jax\nprint(jax.device_count(), jax.default_backend())"))
    path = ROOT / "chapters" / Path(page).parent
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code if "raises-exception" not in c.metadata.get("tags", [])  # errors the page shows
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors  # nbclient stops at the first error; this names it
    if needs == 1:
        assert not any(SKIPPED in texts(c) for c in code), f"{page} needs one device and must run in full"
        assert texts(code[-1]).split() == ["1", "cpu"], texts(code[-1])
        return
    first = next(i for i, c in enumerate(code) if f"use_cpu_devices({needs})" in c.source)
    assert f"This page needs {needs} devices" in texts(code[first]) and "skipped" in texts(code[first])
    assert all(texts(c).strip() == SKIPPED for c in code[first + 1:]), [texts(c) for c in code[first + 1:]]
