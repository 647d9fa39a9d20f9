"""The launcher of multi-process groups: both ways of starting, and every way of failing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parallel_mcmc.pools.process_group import ProcessGroupError, free_port, run_processes

# Two processes join one JAX program and add their process indices with a collective.
JOIN = textwrap.dedent(
    """
    import argparse
    import jax
    p = argparse.ArgumentParser()
    p.add_argument("--coordinator"); p.add_argument("--num-processes", type=int); p.add_argument("--process-id", type=int)
    o = p.parse_args()
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if o.coordinator:
        jax.distributed.initialize(o.coordinator, o.num_processes, o.process_id)
    else:
        jax.distributed.initialize(cluster_detection_method="mpi4py")
    import numpy as np
    from jax.experimental import multihost_utils
    ids = multihost_utils.process_allgather(np.array([jax.process_index()]), tiled=True)
    print(f"process {jax.process_index()} of {jax.process_count()} sees {jax.device_count()} devices, ids {ids.tolist()}", flush=True)
    jax.distributed.shutdown()
    """
)


@pytest.fixture
def join_script(tmp_path: Path) -> Path:
    path = tmp_path / "join.py"
    path.write_text(JOIN)
    return path


@pytest.mark.parametrize("launcher", ["subprocess", "mpiexec"])
def test_two_processes_form_one_program(join_script, launcher):
    run = run_processes(join_script, 2, launcher=launcher, timeout=120)
    text = "\n".join(run.outputs)
    assert "process 0 of 2 sees 2 devices, ids [0, 1]" in text, text
    assert "process 1 of 2 sees 2 devices, ids [0, 1]" in text, text
    assert run.launcher == launcher and run.seconds > 0
    assert len(run.outputs) == (2 if launcher == "subprocess" else 1)


def test_a_failing_process_is_reported_with_its_output(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('about to fail', flush=True)\nsys.exit(3)\n")
    with pytest.raises(ProcessGroupError, match=r"(?s)exited with status 3.*about to fail"):
        run_processes(script, 2, launcher="subprocess", timeout=60)
    with pytest.raises(ProcessGroupError, match=r"(?s)mpiexec exited with status.*about to fail"):
        run_processes(script, 2, launcher="mpiexec", timeout=60)


def test_a_status_named_ok_is_no_failure_and_every_status_is_kept(tmp_path):
    script = tmp_path / "stops.py"  # a program that stops early on purpose and says so with its status
    script.write_text("import sys\nsys.exit(3)\n")
    assert run_processes(script, 2, launcher="subprocess", timeout=60, ok_statuses=(0, 3)).statuses == (3, 3)
    with pytest.raises(ValueError, match="ok_statuses"):
        run_processes(script, 1, launcher="subprocess", ok_statuses=(-1,))


def test_a_hanging_group_is_stopped(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(ProcessGroupError, match="ran past 2 s"):
        run_processes(script, 2, launcher="subprocess", timeout=2)


def test_bad_input(tmp_path, join_script):
    with pytest.raises(FileNotFoundError, match="write it first"):
        run_processes(tmp_path / "missing.py", 2)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="num_processes"):
            run_processes(join_script, bad)
    with pytest.raises(ValueError, match="launcher must be"):
        run_processes(join_script, 1, launcher="ssh")
    with pytest.raises(ValueError, match="timeout"):
        run_processes(join_script, 1, timeout=0)


def test_free_port_is_a_port():
    assert 1024 <= free_port() < 65536


def test_a_module_runs_as_python_dash_m(tmp_path, monkeypatch):
    (tmp_path / "joinmod.py").write_text(JOIN)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{__import__('os').environ.get('PYTHONPATH', '')}")
    run = run_processes(module="joinmod", num_processes=2, launcher="subprocess", timeout=120)
    assert "process 1 of 2 sees 2 devices, ids [0, 1]" in "\n".join(run.outputs)
    with pytest.raises(ValueError, match="not both"):
        run_processes(tmp_path / "joinmod.py", 2, module="joinmod")
    with pytest.raises(ValueError, match="not neither"):
        run_processes(num_processes=2)
    with pytest.raises(ValueError, match="dotted module name"):
        run_processes(module="not a module", num_processes=2)


def test_a_group_whose_port_was_taken_starts_again(tmp_path):
    # process 0 fails as JAX does when another program took the coordinator's port, the first time only
    script = tmp_path / "port.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from pathlib import Path
        first = Path({str(tmp_path / 'tried')!r})
        if "--process-id" in sys.argv and sys.argv[sys.argv.index("--process-id") + 1] == "0" and not first.exists():
            first.touch()
            print("jax.errors.JaxRuntimeError: UNKNOWN: Failed to start RPC server", flush=True)
            sys.exit(1)
        print("started on", sys.argv[sys.argv.index("--coordinator") + 1], flush=True)
        """))
    run = run_processes(script, 1, launcher="subprocess", timeout=60)
    assert "started on 127.0.0.1:" in run.outputs[0] and (tmp_path / "tried").exists()
    other = tmp_path / "fails.py"
    other.write_text("print('Failed to start RPC server', flush=True)\nraise SystemExit(1)\n")
    with pytest.raises(ProcessGroupError, match="Failed to start RPC server"):  # not for ever
        run_processes(other, 1, launcher="subprocess", timeout=60)
