"""parallel_mcmc.sinusoid_mpi in this process: the serial run it is compared with, and its command line.
Under MPI (srun --mpi=pmi2 in a SLURM job) it runs in tests/book/test_slurm_jobs.py."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc import sinusoid_mpi
from parallel_mcmc.models import sinusoid
from parallel_mcmc.validate import ArgumentError


def test_serial_runs_draw_the_same_chain_from_the_fixed_start():
    first, second = sinusoid_mpi.run(None, 8, 3), sinusoid_mpi.run(None, 8, 3)
    assert first.get_chain().shape == (3, 8, 4)
    np.testing.assert_array_equal(first.get_chain(), second.get_chain())
    assert np.all(np.isfinite(first.get_log_prob()))
    assert np.abs(first.get_chain() - sinusoid.TRUE_PARAMS).max() < 0.05  # it starts next to the truth


def test_the_command_line_refuses_too_few_walkers_before_starting_mpi():
    with pytest.raises(ArgumentError, match="--walkers"):
        sinusoid_mpi.main(["out.npz", "--walkers", "4"])
