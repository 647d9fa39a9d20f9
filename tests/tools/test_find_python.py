"""tools/find_python.sh: the Python the Makefile makes the book's environment with (3.12 or newer), from PATH first,
then from pyenv's installs, and a message saying what to install when there is none."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "find_python.sh"


def fake_python(path: Path, version: tuple[int, int]) -> Path:
    """An executable that answers the script's version test as a Python ``version`` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import sys; sys.exit({version} < (3, 12))'\n")
    path.chmod(0o755)
    return path


def find(tmp_path: Path, path_dirs: list[Path]) -> subprocess.CompletedProcess:
    env = {"PATH": os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"]), "HOME": str(tmp_path),
           "PYENV_ROOT": str(tmp_path / "pyenv")}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=30)


def test_a_python_3_12_on_path_comes_first(tmp_path):
    fake_python(tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python", (3, 13))
    on_path = fake_python(tmp_path / "bin" / "python3.12", (3, 12))
    result = find(tmp_path, [tmp_path / "bin"])
    assert result.returncode == 0 and result.stdout.strip() == str(on_path), result


def test_an_old_python3_on_path_is_passed_over_for_pyenv_s(tmp_path):
    fake_python(tmp_path / "bin" / "python3", (3, 11))
    fake_python(tmp_path / "pyenv" / "versions" / "3.11.7" / "bin" / "python", (3, 11))
    pyenv_312 = fake_python(tmp_path / "pyenv" / "versions" / "3.12.1" / "bin" / "python", (3, 12))
    result = find(tmp_path, [tmp_path / "bin"])
    assert result.returncode == 0 and result.stdout.strip() == str(pyenv_312), result


def test_no_python_3_12_anywhere_says_what_to_install(tmp_path):
    fake_python(tmp_path / "bin" / "python3", (3, 11))
    result = find(tmp_path, [tmp_path / "bin"])
    assert result.returncode == 1 and result.stdout == ""
    assert "needs Python 3.12 or newer" in result.stderr and "PYTHON=/path/to/python3.12" in result.stderr
