import numpy as np
import pytest

from parallel_mcmc.models.tinynet import init_mlp_params, make_regression_data, target_curve


def test_data_shapes_and_determinism():
    x, y = make_regression_data(64, seed=3)
    assert x.shape == y.shape == (64, 1) and x.dtype == np.float32
    assert 0.0 <= x.min() and x.max() <= 2.0
    x2, y2 = make_regression_data(64, seed=3)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)


def test_noise_free_data_lies_on_curve():
    x, y = make_regression_data(32, noise=0.0)
    np.testing.assert_allclose(y, target_curve(x), atol=1e-6)


@pytest.mark.parametrize("kwargs", [dict(n=0), dict(n=2.5), dict(n=10, noise=-1.0), dict(n=10, low=1.0, high=1.0)])
def test_bad_data_arguments(kwargs):
    with pytest.raises(ValueError):
        make_regression_data(**kwargs)


def test_params_shapes():
    params = init_mlp_params([1, 8, 4, 1], seed=1)
    assert [(W.shape, b.shape) for W, b in params] == [((1, 8), (8,)), ((8, 4), (4,)), ((4, 1), (1,))]
    assert all(W.dtype == np.float32 for W, _ in params)


@pytest.mark.parametrize("sizes", [[1], [1, 0, 1], [1, 2.0, 1], []])
def test_bad_sizes(sizes):
    with pytest.raises(ValueError):
        init_mlp_params(sizes)
