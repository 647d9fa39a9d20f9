"""Checks for the exercises of the part *Getting started*: devices, the cost model, profiling.

One module per exercise, named after its label; the names below are the checks.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "ex_cost_model_predict": ["predict_sharded"],
    "ex_devices_pay": ["steps_to_pay"],
    "ex_devices_place": ["placed_on_last_device"],
    "ex_profiling_bottleneck": ["bottleneck"],
})
