"""parallel_mcmc.devices: device counts before and after JAX starts."""

import jax
import pytest

from parallel_mcmc import devices


@pytest.mark.parametrize("bad", [0, -3])
def test_rejects_fewer_than_one_device(bad):
    with pytest.raises(ValueError, match="whole number of devices >= 1"):
        devices.use_cpu_devices(bad)


@pytest.mark.parametrize("bad", [2.5, "4", True, None])
def test_rejects_non_integers(bad):
    with pytest.raises(TypeError, match="whole number"):
        devices.use_cpu_devices(bad)


def test_same_count_again_is_harmless():
    # tests/conftest.py asked for 8 before JAX started
    assert jax.device_count() == 8
    assert devices.use_cpu_devices(8) == 8


def test_other_count_after_start_says_how_to_fix():
    with pytest.raises(devices.DeviceSetupError) as info:
        devices.use_cpu_devices(3)
    message = str(info.value)
    assert "already started with 8 cpu device(s)" in message
    assert "Restart the kernel" in message and "use_cpu_devices(3)" in message


def test_fresh_process_gets_the_count_it_asks_for(run_python):
    proc = run_python(
        """
        from parallel_mcmc.devices import use_cpu_devices, backend_started
        assert not backend_started()
        use_cpu_devices(3)
        import jax
        print(jax.device_count(), jax.default_backend(), backend_started())
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", "cpu", "True"]


def test_too_late_in_a_fresh_process(run_python):
    proc = run_python(
        """
        import jax.numpy as jnp
        jnp.ones(2)  # starts the backend with one device
        from parallel_mcmc.devices import use_cpu_devices
        use_cpu_devices(4)
        """
    )
    assert proc.returncode != 0
    assert "DeviceSetupError" in proc.stderr and "Restart the kernel" in proc.stderr


def test_report_describes_the_devices():
    report = devices.device_report()
    assert report.platform == "cpu"
    assert report.device_count == 8 == len(report.devices)
    assert report.physical_cores >= 1 and report.logical_cores >= report.physical_cores
    text = str(report)
    assert "8 device(s)" in text and f"{report.physical_cores} physical" in text and jax.__version__ in text


def test_accelerator_platform_with_too_few_devices_says_so(run_python):
    proc = run_python(
        """
        import os
        os.environ["PARALLEL_MCMC_PLATFORM"] = "cpu"  # a platform with one device stands in for one GPU
        from parallel_mcmc.devices import use_cpu_devices
        use_cpu_devices(4)
        """
    )
    assert proc.returncode != 0
    assert "needs 4 devices" in proc.stderr and "Unset PARALLEL_MCMC_PLATFORM" in proc.stderr


def test_in_a_notebook_too_few_devices_skip_the_rest_of_the_page(run_python):
    proc = run_python(
        """
        import os
        os.environ["PARALLEL_MCMC_PLATFORM"] = "cpu"
        from IPython.core.interactiveshell import InteractiveShell

        shell = InteractiveShell.instance()
        first = shell.run_cell("from parallel_mcmc.devices import use_cpu_devices\\nuse_cpu_devices(4)")
        later = shell.run_cell("raise RuntimeError('this cell must not run')")
        print("RESULTS", first.success, later.success)
        """
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "needs 4 devices" in out and "The rest of this page is skipped" in out
    assert "Skipped: this page needs more devices" in out and "must not run" not in out + proc.stderr
    assert "RESULTS True True" in out
