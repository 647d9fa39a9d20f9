"""Running chains and judging their draws.

BlackJAX runners (one after another, lockstep, over a mesh), NumPyro's chains over devices,
consensus Monte Carlo, randomized HMC, NUTS and elliptical slice sampling in lockstep and as state machines, the
ChEES and NUTS warm-ups the chapters share, tempered SMC's step size from its particles, and the diagnostics that
judge the draws (R-hat, ESS, nested R-hat through ArviZ).

The names below are the stable surface; import them from here (``from parallel_mcmc.sample import
vmap_runner``). The modules they live in are private and may move.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "chains": ["sequential_runner", "vmap_runner", "shard_map_runner", "summary_runner"],
    "numpyro_plan": ["ChainPlan", "plan_chains", "latent_shapes", "check_init_params", "MemoryEstimate",
                     "estimate_memory"],
    "numpyro_runner": ["shard_chains", "ChainRun", "run_chains"],
    "consensus": ["split_data", "consensus_combine", "Subposteriors", "sample_subposteriors", "subposterior_sampler"],
    "randomized_hmc": ["RandomizedHMC"],
    "smc_moves": ["step_size_from_particles", "move_distance"],
    "nuts_machine": ["NUTSMachine", "NUTSState", "NUTSDraws"],
    "slice_machine": ["EllipticalSlice", "SliceState", "SliceDraws"],
    "warmups": ["CheesWarmup", "nuts_warmup", "nuts_chains"],
    "diagnostics": ["to_inference_data", "superchain_ids", "nested_rhat_from_summaries", "nested_rhat_threshold"],
})
