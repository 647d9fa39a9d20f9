"""Every sharding picture of the sharding lab names the devices in each of its blocks.

``jax.debug.visualize_array_sharding`` draws with ``rich`` in a console of ``max_width`` (80)
columns. A picture wider than that (an array four times as wide as it is tall, split into columns)
is narrowed by ``rich``, which then drops the labels that no longer fit: coloured blocks with no
device names. This test reads each chapter of the lab as it ran (from the site's execution cache,
which the notebook tests fill, or by running it here when the cache does not hold the current
run), finds the pictures of every cell that calls ``visualize_array_sharding``, and checks them:

- every background colour of a picture carries a device label such as ``CPU 0,4`` (JAX gives two
  blocks of a picture one colour, and more blocks each their own);
- each device holds one block of an array, so the labels together name every device the page set
  up (``use_cpu_devices(n)``), each once, unless the picture is of an array on one device.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from booktools import execution_cache
from booktools.notebooks import myst_notebooks

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "chapters" / "sharding_lab"
PAGES = [p for p in myst_notebooks(LAB) if "visualize_array_sharding" in p.read_text()]

ANSI = re.compile(r"\x1b\[([0-9;]*)m")
LABEL = re.compile(r"\b(?:CPU|GPU|TPU) \d+(?:,\d+)*")


def blocks(picture: str) -> dict[str, str]:
    """The text drawn on each background colour of a picture in ``rich``'s ANSI codes: {colour: text}."""
    found: dict[str, str] = {}
    background = None
    for line in picture.splitlines():
        pos = 0
        for match in ANSI.finditer(line + "\x1b[0m"):
            if background is not None:
                found[background] = found.get(background, "") + line[pos:match.start()]
            codes = match.group(1).split(";")
            if codes in ([""], ["0"]):
                background = None
            elif "48" in codes:
                i = codes.index("48")
                background = ";".join(codes[i:i + 5])  # 48;2;r;g;b
            pos = match.end()
        if background is not None:  # a colour carries over the line's end: keep the text after its last code
            found[background] = found.get(background, "") + line[pos:]
    return found


def test_blocks_reads_labels_and_finds_a_block_without_one():
    labelled = "\x1b[38;2;255;255;255;48;2;57;59;121m  CPU 0  \x1b[0m\x1b[48;2;1;2;3m  CPU 1,5  \x1b[0m"
    assert {k: LABEL.findall(v) for k, v in blocks(labelled).items()} == {
        "48;2;57;59;121": ["CPU 0"], "48;2;1;2;3": ["CPU 1,5"]}
    unlabelled = labelled.replace("CPU 1,5", "       ")
    assert [k for k, v in blocks(unlabelled).items() if not LABEL.search(v)] == ["48;2;1;2;3"]


def executed(page: Path):
    return execution_cache.executed(ROOT, page)


def pictures(cell) -> list[str]:
    """The ANSI text of each sharding picture in a cell's outputs."""
    found = []
    for out in cell.get("outputs", []):
        if out.get("output_type") not in ("display_data", "execute_result", "stream"):
            continue
        text = out.get("text") if out.get("output_type") == "stream" else out.get("data", {}).get("text/plain", "")
        text = "".join(text) if isinstance(text, list) else text or ""
        if "\x1b[" in text and "48;2;" in text:  # rich's truecolour background codes
            found.append(text)
    return found


def page_devices(page: Path) -> int:
    return int(re.search(r"use_cpu_devices\((\d+)\)", page.read_text()).group(1))


def test_the_lab_draws_pictures():
    assert len(PAGES) >= 5, PAGES


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_sharding_picture_names_the_devices_of_each_block(page):
    notebook = executed(page)
    drawing = [c for c in notebook.cells if c.cell_type == "code" and "visualize_array_sharding(" in c.source]
    assert drawing, f"{page.name}: no cell draws a sharding"
    for cell in drawing:
        drawn = pictures(cell)
        calls = cell.source.count("visualize_array_sharding(")
        assert len(drawn) >= calls, f"{page.name}: a cell calls visualize_array_sharding {calls} time(s) and shows " \
                                    f"{len(drawn)} picture(s):\n{cell.source}"
        for picture in drawn:
            found = blocks(picture)
            assert found, f"{page.name}: a picture with no coloured block:\n{picture}"
            bare = [colour for colour, text in found.items() if not LABEL.search(text)]
            plain = ANSI.sub("", picture)
            hint = "too wide for rich's console, which drops labels that do not fit: pass scale= below 1"
            assert not bare, (f"{page.name}: {len(bare)} of the {len(found)} colours of this picture carry no device "
                              f"label ({hint}):\n{cell.source}\n{plain}")
            named = [int(d) for label in LABEL.findall(plain) for d in label.split()[1].split(",")]
            if len(named) != 1:  # an array on one device: one block, one name
                assert sorted(named) == list(range(page_devices(page))), (
                    f"{page.name}: the labels name devices {sorted(named)}, where every one of the page's "
                    f"{page_devices(page)} devices holds one block ({hint}):\n{cell.source}\n{plain}")
