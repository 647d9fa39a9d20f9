"""The sharding lab's running example: one dense layer with a softmax, and its inputs.

The lab's chapter "Automatic parallelism" introduces it; the later chapters of
the lab import it from here, so that every chapter lays out the same arrays.
"""

from __future__ import annotations

import jax

from ..validate import whole_number

__all__ = ["layer", "layer_inputs"]


def layer(x: jax.Array, W: jax.Array, b: jax.Array) -> jax.Array:
    """``softmax(x @ W + b)``: rows of ``x`` (data) in, one probability vector per row out."""
    return jax.nn.softmax(x @ W + b)


def layer_inputs(
    num_data: int = 128, num_features: int = 10, num_out: int = 2, key: int = 0
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Data ``x`` ``(num_data, num_features)``, weights ``W`` ``(num_features, num_out)``, bias ``b`` ``(num_out,)``.

    Standard normal draws from ``jax.random.key(key)``, made on the default device.
    """
    for name, value in (("num_data", num_data), ("num_features", num_features), ("num_out", num_out)):
        whole_number(name, value, 1)
    kx, kW, kb = jax.random.split(jax.random.key(key), 3)
    x = jax.random.normal(kx, (num_data, num_features))
    W = jax.random.normal(kW, (num_features, num_out))
    b = jax.random.normal(kb, (num_out,))
    return x, W, b
