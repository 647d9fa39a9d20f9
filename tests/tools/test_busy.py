"""booktools.busy: a command runs while another process keeps a core busy, and its status comes back."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_command_runs_beside_a_busy_core_and_its_status_is_returned():
    # The command reads the CPU use of its siblings (the spinners started beside it): about one core.
    probe = ("import os, psutil, time; me = psutil.Process(); "
             "others = [p for p in me.parent().children() if p.pid != os.getpid()]; "
             "[p.cpu_percent() for p in others]; time.sleep(1.0); "
             "busy = sum(p.cpu_percent() for p in others) / 100; print(f'{busy:.2f}'); raise SystemExit(3)")
    done = subprocess.run([sys.executable, "-m", "booktools.busy", "--cores", "1", "--", sys.executable, "-c", probe],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "keeping 1 core(s) busy" in done.stdout
    assert float(done.stdout.strip().splitlines()[-1]) > 0.25  # a spinner at work (without one: 0), even on a loaded machine


@pytest.mark.parametrize("argv, message", [([], "give the command to run"), (["--cores", "0", "--", "true"], "at least 1")])
def test_bad_arguments_say_what_to_do(argv, message):
    done = subprocess.run([sys.executable, "-m", "booktools.busy", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr
