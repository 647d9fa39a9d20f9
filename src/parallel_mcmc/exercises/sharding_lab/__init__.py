"""Checks for the exercises of the part *Sharding lab*.

Each function checks one exercise. It prints a one-line confirmation when the
answer is right and raises :class:`AssertionError` saying what is wrong (and
how to fix it) otherwise; an answer of the wrong type (``None``, a NumPy array
where a ``jax.Array`` belongs, a function's result where the function does)
raises :class:`~parallel_mcmc.exercises.common.WrongType`, an
``AssertionError`` that is also a ``TypeError``. Layouts are compared with
``Sharding.is_equivalent_to(other, ndim)``, never with ``==``: two shardings
can describe the same layout and still compare unequal (``P('data')`` and
``P('data', None)``).

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_arrays_place": ["place_on_mesh"],
    "ex_arrays_inspect": ["inspect_sharding"],
    "ex_arrays_specs": ["partition_specs"],
    "ex_auto_predict": ["auto_shardings"],
    "ex_auto_log_likelihood": ["data_parallel_log_likelihood"],
    "ex_choosing_loop_trips": ["device_trips"],
    "ex_dptraining_sharded": ["sharded_chain"],
    "ex_dptraining_timing": ["timing_comparison"],
    "ex_explicit_multiply": ["explicit_product"],
    "ex_explicit_log_likelihood": ["explicit_log_likelihood"],
    "ex_manual_row_terms": ["shard_map_row_terms"],
    "ex_manual_log_likelihood": ["shard_map_log_likelihood"],
    "ex_two_axes_collectives": ["predicted_collectives"],
})
