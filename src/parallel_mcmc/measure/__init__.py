"""Measuring a parallel run beside the book's cost model.

The one timing loop, the model's rules, the pool-queue
model, calibration loops, the judge of every timing, lockstep accounting, plots, the figures of the stored GPU runs; and two measuring aids as
modules, :mod:`~parallel_mcmc.measure.hlo` (what a compiled program does, from its text) and
:mod:`~parallel_mcmc.measure.xla_threads` (XLA's CPU threads, and a device with one).

The names below are the stable surface; import them from here (``from parallel_mcmc.measure import
time_with_calibration, judge``). The modules they live in are private and may move.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "timing": ["Timing", "Speedup", "time_call", "timed", "time_interleaved", "time_with_calibration", "speedup"],
    "cores": ["cores_busy", "cores_available", "CompileLog"],
    "model": ["StepCost", "concurrent", "sequential_time", "lockstep_time", "sharded_time", "split_call_time"],
    "prediction": ["Prediction", "predict", "crossover"],
    "queue": ["map_chunksize", "pool_time", "pool_run_time", "chunked_pool_run_time", "emcee_run_time"],
    "calibrate": ["pool_overhead", "collective_calls", "collective_cost"],
    "lockstep": ["integration_steps", "lockstep_cost", "device_loads", "steps_2d", "expected_lockstep_steps"],
    "compare": ["LEVEL", "TOLERANCE", "Interval", "ratio_interval", "speedup_interval", "model_interval", "decide",
                "against_model", "against_ideal"],
    "narrate": ["seconds", "speedup_sentence", "model_sentence", "runs_sentence", "TimedPair", "timed_pair",
                "crossover_text", "cap_sentence"],
    "experiment": ["Experiment", "Measured", "Result", "measure"],
    "rules": ["STATUSES", "READINGS", "Rules", "RULES", "RunVerdict", "rate"],
    "judging": ["STRICT_ENV", "VERDICT_LOG_ENV", "OUTCOMES", "RETRIED", "Comparison", "Verdict", "strict", "judge",
                "record_verdict"],
    "gpu_runs": ["GpuFigures", "gpu_figures", "on_one_gpu"],
    "plots": ["plot_speedups", "plot_scaling", "plot_times_vs_ideal", "plot_sweep", "plot_steps_per_draw"],
}, modules=["hlo", "xla_threads"])
