"""parallel_mcmc._validate: the whole-number check the helpers share."""

import numpy as np
import pytest

from parallel_mcmc._validate import whole_number


def test_whole_numbers_pass_and_come_back_as_int():
    assert whole_number("n", 3, 1) == 3
    assert whole_number("n", np.int64(0), 0) == 0 and type(whole_number("n", np.int64(2), 1)) is int


@pytest.mark.parametrize("bad", [0, -1, 1.0, 2.5, "2", None, True])
def test_anything_else_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match=r"num_chains must be a whole number >= 1, got"):
        whole_number("num_chains", bad, 1)


def test_refusals_are_both_type_and_value_errors():
    from parallel_mcmc._validate import ArgumentError

    with pytest.raises(TypeError):
        whole_number("n", "2", 1)
    with pytest.raises(ValueError):
        whole_number("n", 0, 1)
    assert issubclass(ArgumentError, TypeError) and issubclass(ArgumentError, ValueError)


def test_whole_number_names_its_unit():
    with pytest.raises(ValueError, match=r"n must be a whole number of devices >= 1, got 0"):
        whole_number("n", 0, 1, of=" of devices")


def test_real_numbers_in_every_form_pass():
    import jax.numpy as jnp

    from parallel_mcmc._validate import real_number

    assert real_number("t", 2, above=0) == 2.0
    assert real_number("t", np.float32(0.5), above=0) == 0.5
    assert real_number("t", jnp.asarray(0.0), least=0) == 0.0
    assert type(real_number("t", np.int64(3))) is float


@pytest.mark.parametrize(
    "bad, bound, message",
    [(0, {"above": 0}, "positive number"), (-1e-9, {"least": 0}, "non-negative number"),
     (float("nan"), {}, "must be a number"), (float("inf"), {"above": 0}, "positive number"),
     ("1", {"above": 0}, "positive number"), (True, {"least": 0}, "non-negative"),
     (np.zeros(2), {}, "must be a number"), (0.5, {"above": 1}, "must be a number > 1")],
)
def test_real_number_refuses_with_the_bound(bad, bound, message):
    from parallel_mcmc._validate import real_number

    with pytest.raises(ValueError, match=message):
        real_number("timeout", bad, **bound)


def test_is_number_accepts_numbers_in_any_form_and_nothing_else():
    import jax.numpy as jnp

    from parallel_mcmc._validate import is_number

    for yes in (1, 2.5, np.int32(3), np.float64(0.1), np.asarray(1.0), jnp.asarray(2.0), jnp.float32(1)):
        assert is_number(yes), yes
    for no in (True, np.bool_(False), "1", None, [1.0], np.zeros(1), jnp.zeros((1,)), jnp.asarray(True), 1j):
        assert not is_number(no), no
