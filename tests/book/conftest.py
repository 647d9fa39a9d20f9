"""Fixtures of the book's tests: the built website, made once per session with the README's command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_site() -> Path:
    """``make book`` once (the execution cache, which the notebook tests fill first, makes it quick); the HTML folder."""
    proc = subprocess.run(["make", "-C", str(ROOT), "book"], capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, "make book failed:\n" + proc.stdout[-4000:] + proc.stderr[-4000:]
    return HTML
