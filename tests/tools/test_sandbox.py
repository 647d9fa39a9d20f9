"""The sandbox's root file system, seen from inside, and a grader that has no sandbox.

The crafted submissions that try to get out of the sandbox are graded in ``test_grade``; here a
probe lists what the kernel sees (as the machine's root the sandbox runs it as ``nobody``; in a
user namespace, as that namespace's root, which is tried too where the tests run as root), and the
grader is made to believe that no sandbox can be made (a hosted autograder, macOS).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from booktools.coursework import grade as grade_module
from booktools.coursework import sandbox

ROOT = Path(__file__).resolve().parents[2]
needs_sandbox = pytest.mark.skipif(sandbox.available() is not None, reason=f"no sandbox here: {sandbox.available()}")

# Lists what the kernel sees: /, /etc, /dev, /var, each folder on the way to the Python environment,
# the capabilities it holds, and whether it can write to / or read the repository.
PROBE = textwrap.dedent("""
    import json, os, sys
    seen = {"uid": os.getuid(), "listing": {}}
    for path in ["/", "/etc", "/dev", "/var", *json.loads(sys.argv[1])]:
        seen["listing"][path] = sorted(os.listdir(path))
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    seen["caps"] = int(status["CapEff"], 16)
    seen["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    for name, path in [("write root", "/probe"), ("write usr", sys.prefix + "/probe")]:
        try:
            open(path, "w").close(); seen[name] = "wrote"
        except OSError as err:
            seen[name] = type(err).__name__
    # the repository's own files (its folder may be on the way to an environment made inside it, .venv)
    seen["repository"] = [n for n in ("chapters", "src", "tools", "README.md") if os.path.exists(os.path.join(sys.argv[2], n))]
    open("seen.json", "w").write(json.dumps(seen))
""")

# Builds the sandbox's command and runs it: in this process, or in a user namespace whose user is not root.
DRIVER = textwrap.dedent("""
    import json, os, subprocess, sys
    from pathlib import Path
    from booktools.coursework import sandbox
    job, probe, ancestors, repository, hide = sys.argv[1:6]
    cmd = sandbox.command([sys.executable, "-c", probe, ancestors, repository], Path(job), json.loads(hide),
                          sandbox.environment(), cpu_seconds=60)
    done = subprocess.run(cmd, capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, timeout=120)
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
""")


def _ancestors(paths) -> list[str]:
    """Every folder strictly between / and each of ``paths``."""
    return sorted({str(p) for path in paths for p in Path(path).parents if p != Path("/")})


@needs_sandbox
@pytest.mark.parametrize("how", ["as-is", "user-namespace"])
def test_the_sandbox_root_holds_only_what_the_kernel_needs(tmp_path, how):
    if how == "user-namespace" and os.geteuid() != 0:
        pytest.skip("the tests run as a user already: the sandbox is made in a user namespace (the 'as-is' case)")
    job = tmp_path / "job"
    (job / "work").mkdir(parents=True)
    for path in (tmp_path, job, job / "work"):
        path.chmod(0o755 if path != job / "work" else 0o777)
    environment = sandbox.environment()
    ancestors = _ancestors([*environment, job])
    # hidden: a folder inside /usr; not hidden: the folders that hold the environment and the job
    hide = ["/usr/share", str(environment[0].parent), str(job.parent)]
    wrap = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if how == "user-namespace" else []
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [str(job), PROBE, json.dumps([*ancestors, "/usr/share"]), str(ROOT), json.dumps(hide)]
    done = subprocess.run([*wrap, sys.executable, "-c", DRIVER, *args],
                          capture_output=True, text=True, env=env, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads((job / "work" / "seen.json").read_text())
    listing = seen["listing"]
    tops = {Path(p).parts[1] for p in [*environment, job]}
    system = {Path(p).name for p in sandbox.SYSTEM if Path(p).exists()}
    assert set(listing["/"]) == system | tops | {"etc", "dev", "proc", "sys", "tmp", "var"}, listing["/"]
    assert set(listing["/etc"]) == {n for n in sandbox.ETC if Path("/etc", n).exists()}
    assert set(listing["/dev"]) == {*sandbox.DEVICES, "shm", "fd", "stdin", "stdout", "stderr"}
    assert listing["/var"] == ["tmp"]
    assert listing["/usr/share"] == [] and any(Path("/usr/share").iterdir())  # --hide inside a folder put there
    # each folder on the way to the environment or the job shows only the next folder on the way
    wanted = {str(p) for p in [*environment, job]}
    shown = [*environment, *(Path(p) for p in sandbox.SYSTEM if Path(p).is_dir() and not Path(p).is_symlink())]
    for folder in ancestors:
        if not any(Path(folder) == Path(k) or Path(k) in Path(folder).parents for k in shown):
            inside = {Path(w).relative_to(folder).parts[0] for w in wanted if Path(folder) in Path(w).parents}
            assert set(listing[folder]) == inside, (folder, listing[folder])
    assert not seen["repository"], f"the repository of the book is in the sandbox: {seen['repository']}"
    assert seen["write root"] != "wrote" and seen["write usr"] != "wrote"
    assert seen["caps"] == 0, "the kernel holds capabilities"
    assert len(seen["pids"]) <= 3, seen["pids"]  # its own processes only: the first process, itself
    assert seen["uid"] == (65534 if how == "as-is" and os.geteuid() == 0 else 0)


# --------------------------------------------------------------------------- where no sandbox can be made


def test_no_sandbox_on_macos_says_what_to_run_instead(monkeypatch):
    monkeypatch.setattr(sandbox.platform, "system", lambda: "Darwin")
    why = sandbox.available()
    assert "Darwin" in why and "docker run --privileged" in why and "as root" in why


def test_no_user_namespaces_says_what_to_run_instead(monkeypatch):
    """A Linux machine that refuses the namespaces (a hosted autograder's container): unshare fails."""
    refused = ["sh", "-c", "echo 'unshare: unshare failed: Operation not permitted' >&2; exit 1", "sh"]
    monkeypatch.setattr(sandbox, "_unshare", lambda: refused)
    why = sandbox.available()
    assert "Operation not permitted" in why
    assert "docker run --privileged" in why and "podman" in why and "unprivileged_userns_clone" in why
    assert "No submission is graded without the sandbox" in why


def test_without_a_sandbox_nothing_is_graded(tmp_path, monkeypatch, capsys):
    """The command line stops with the reason and a non-zero status, and writes no grades; the function
    returns a report that says the notebook was not graded. No kernel is started."""
    why = "the sandbox could not be made in a user namespace here (Operation not permitted). Run the grader as root"
    monkeypatch.setattr(sandbox, "available", lambda: why)

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel was started without a sandbox")

    monkeypatch.setattr(grade_module, "execute", no_kernel)
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    sub = tmp_path / "ada.ipynb"
    sub.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    out = tmp_path / "grades.json"
    rc = grade_module.main([str(sub), "--book", str(book), "--json", str(out), "--csv", str(tmp_path / "grades.csv")])
    err = capsys.readouterr().err
    assert rc != 0
    assert "no submission was graded" in err and why in err
    assert not out.exists() and not (tmp_path / "grades.csv").exists()
    report = grade_module.grade_notebook(sub, book=book)
    assert report.exercises == [] and report.problems == [f"not graded: {why}"]


# --------------------------------------------------------------------------- a grader that is killed

# Starts a sandbox the way the grader's kernel manager does (a new session, so no signal to the grader's
# process group reaches it), says so, and waits: a grader that is killed while a kernel runs.
GRADER = textwrap.dedent("""
    import subprocess, sys, time
    from pathlib import Path
    from booktools.coursework import sandbox
    cmd = sandbox.command(["sleep", "600"], Path(sys.argv[1]), [], sandbox.environment(), cpu_seconds=60)
    proc = subprocess.Popen(cmd, start_new_session=True)
    print(proc.pid, flush=True)
    time.sleep(600)
""")


@needs_sandbox
def test_a_killed_grader_takes_its_sandboxes_along(tmp_path):
    import signal
    import time

    psutil = pytest.importorskip("psutil")
    job = tmp_path / "job"
    (job / "work").mkdir(parents=True)
    for path in (tmp_path, job, job / "work"):
        path.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join(sys.path)}
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(job)], stdout=subprocess.PIPE, text=True, env=env)
    sandboxed = []
    try:
        psutil.Process(int(grader.stdout.readline()))  # the sandbox's outermost process is up
        deadline = time.monotonic() + 60
        while True:  # until the command inside the sandbox runs
            sandboxed = psutil.Process(grader.pid).children(recursive=True)
            if any(p.name() == "sleep" for p in sandboxed):
                break
            assert time.monotonic() < deadline, f"the sandbox did not start: {[p.name() for p in sandboxed]}"
            time.sleep(0.1)
        assert len(sandboxed) >= 3, [p.name() for p in sandboxed]  # unshare, the first process inside, sleep
        grader.send_signal(signal.SIGTERM)
        assert grader.wait(timeout=30) == -signal.SIGTERM
        gone, alive = psutil.wait_procs(sandboxed, timeout=30)
        assert not alive, f"sandbox processes outlived the grader: {[(p.pid, p.name()) for p in alive]}"
    finally:
        grader.kill()
        grader.wait()
        for p in sandboxed:  # only if the test failed: what it started
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
