"""parallel_mcmc.measure (cores.py): the cores a call keeps busy, the cores the process can get, and JAX's
compilations while code runs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from parallel_mcmc.measure import cores


def test_cores_busy_tells_waiting_from_working():
    import time

    calls = []

    def sleep(seconds):
        calls.append(seconds)
        time.sleep(seconds)

    def spin(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass

    assert cores.cores_busy(sleep, 0.05, calls=3, warmup=2) < 0.2
    assert len(calls) == 5
    assert cores.cores_busy(spin, 0.05, calls=3) > 0.3  # loose: the machine may be shared


def test_cores_busy_rejects_bad_input():
    with pytest.raises(TypeError, match="callable"):
        cores.cores_busy(3.0)
    with pytest.raises(ValueError, match="calls"):
        cores.cores_busy(abs, 1, calls=0)
    with pytest.raises(ValueError, match="warmup"):
        cores.cores_busy(abs, 1, warmup=-1)


def test_cores_available_counts_the_cores_the_threads_got():
    one = cores.cores_available(1, 0.1)
    assert 0.3 < one < 1.1  # loose: the machine may be shared
    assert cores.cores_available(2, 0.1) < 2.1


def test_cores_available_rejects_bad_input():
    with pytest.raises(ValueError, match="cores"):
        cores.cores_available(0)
    with pytest.raises(ValueError, match="seconds"):
        cores.cores_available(2, -1.0)


def test_compile_log_sees_a_fresh_compilation():
    with cores.CompileLog() as log:
        jax.jit(lambda x: jnp.sin(x) * 3.0 + 0.123456)(jnp.arange(7.0)).block_until_ready()
    assert log.compiles >= 1 and log.seconds > 0
    seconds = log.seconds
    jax.jit(lambda x: jnp.cos(x) + 0.654321)(jnp.arange(5.0)).block_until_ready()
    assert log.seconds == seconds, "nothing is counted after the with block"
