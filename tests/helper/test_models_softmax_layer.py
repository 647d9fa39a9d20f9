"""parallel_mcmc.models.softmax_layer: the sharding lab's running example."""

import jax
import numpy as np
import pytest

from parallel_mcmc.models.softmax_layer import layer, layer_inputs


def test_inputs_have_the_lab_shapes_and_are_fixed():
    x, W, b = layer_inputs()
    assert (x.shape, W.shape, b.shape) == ((128, 10), (10, 2), (2,))
    x2, _, _ = layer_inputs()
    np.testing.assert_array_equal(x, x2)
    assert not np.array_equal(x, layer_inputs(key=1)[0])


def test_layer_gives_one_probability_vector_per_row():
    x, W, b = layer_inputs(num_data=16, num_features=3, num_out=4)
    out = jax.jit(layer)(x, W, b)
    assert out.shape == (16, 4)
    np.testing.assert_allclose(np.asarray(out).sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(out, jax.nn.softmax(np.asarray(x) @ np.asarray(W) + np.asarray(b)), rtol=1e-5)


def test_sizes_must_be_whole_numbers():
    with pytest.raises(ValueError, match="num_data must be a whole number >= 1"):
        layer_inputs(num_data=0)
