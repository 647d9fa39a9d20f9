"""parallel_mcmc.validate: the whole-number check the helpers share."""

import numpy as np
import pytest

from parallel_mcmc.validate import whole_number


def test_whole_numbers_pass_and_come_back_as_int():
    assert whole_number("n", 3, 1) == 3
    assert whole_number("n", np.int64(0), 0) == 0 and type(whole_number("n", np.int64(2), 1)) is int


@pytest.mark.parametrize("bad", [0, -1, 1.0, 2.5, "2", None, True])
def test_anything_else_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match=r"num_chains must be a whole number >= 1, got"):
        whole_number("num_chains", bad, 1)
