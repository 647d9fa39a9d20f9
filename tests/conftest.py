"""Shared set-up of the unit tests.

JAX fixes its device count when its backend starts, once per process. All
in-process tests see 8 CPU devices, set here before any test touches JAX;
a test that needs another count runs Python in a subprocess (``run_python``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parallel_mcmc.devices import use_cpu_devices

use_cpu_devices(8)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run_python():
    """Run a snippet of Python in a fresh interpreter; return the completed process."""

    def run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True, text=True, timeout=timeout, env=env,
        )

    return run

