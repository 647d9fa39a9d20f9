"""parallel_mcmc.programs.sinusoid_mpi in this process: the serial run it is compared with, and its command line.
Under MPI (srun --mpi=pmi2 in a SLURM job) it runs in tests/book/test_slurm_jobs.py."""

from __future__ import annotations

import numpy as np
import pytest

from parallel_mcmc.programs import sinusoid_mpi
from parallel_mcmc.models import sinusoid
from parallel_mcmc._validate import ArgumentError


def test_serial_runs_draw_the_same_chain_from_the_fixed_start():
    first, second = sinusoid_mpi.run(None, 8, 3), sinusoid_mpi.run(None, 8, 3)
    assert first.get_chain().shape == (3, 8, 4)
    np.testing.assert_array_equal(first.get_chain(), second.get_chain())
    assert np.all(np.isfinite(first.get_log_prob()))
    assert np.abs(first.get_chain() - sinusoid.TRUE_PARAMS).max() < 0.05  # it starts next to the truth


def test_the_command_line_refuses_too_few_walkers_before_starting_mpi():
    with pytest.raises(ArgumentError, match="--walkers"):
        sinusoid_mpi.main(["out.npz", "--walkers", "4"])


def test_a_run_stopped_part_way_resumes_from_its_file_to_the_same_chain(tmp_path):
    emcee = pytest.importorskip("emcee")
    whole = sinusoid_mpi.run(None, 8, 6).get_chain()
    path = tmp_path / "chain.h5"
    sinusoid_mpi.run(None, 8, 4, emcee.backends.HDFBackend(path))  # the job that hit its time limit
    assert emcee.backends.HDFBackend(path, read_only=True).iteration == 4
    resumed = sinusoid_mpi.run(None, 8, 6, emcee.backends.HDFBackend(path))  # submitted again: a new sampler
    np.testing.assert_array_equal(resumed.get_chain(), whole)
    np.testing.assert_array_equal(emcee.backends.HDFBackend(path, read_only=True).get_chain(), whole)
    fresh = sinusoid_mpi.run(None, 8, 2, emcee.backends.HDFBackend(tmp_path / "other.h5"))
    np.testing.assert_array_equal(fresh.get_chain(), whole[:2])


def test_a_file_that_does_not_fit_the_run_is_refused(tmp_path):
    emcee = pytest.importorskip("emcee")
    path = tmp_path / "chain.h5"
    sinusoid_mpi.run(None, 8, 4, emcee.backends.HDFBackend(path))
    with pytest.raises(ValueError, match="already holds 4 steps"):
        sinusoid_mpi.run(None, 8, 3, emcee.backends.HDFBackend(path))
    with pytest.raises(ValueError, match="holds 8 walkers"):
        sinusoid_mpi.run(None, 10, 6, emcee.backends.HDFBackend(path))
