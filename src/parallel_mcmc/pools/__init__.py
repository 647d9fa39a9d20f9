"""Pools of workers for emcee-style ensembles, and groups of processes that form one JAX program.

Process-pool workers and the data they hold, a pool that counts its
tasks, MPI pools (schwimmbad's, closed once; one whose master shares the work; mpi4py's executor), groups of
processes that form one JAX program; and, as a module, :mod:`~parallel_mcmc.pools.emcee_tasks`, the one emcee
problem every ensemble chapter runs through these pools.

The names below are the stable surface; import them from here (``from parallel_mcmc.pools import CountingPool``).
The modules they live in are private and may move. Importing this package starts neither MPI nor JAX.
"""

from parallel_mcmc._surface import surface

__all__, __getattr__, __dir__ = surface(__name__, {
    "workers": ["CountingPool", "DEFAULT_COST", "burn_cpu", "busy_log_prob", "log_prob_with_data", "set_worker_data",
                "attach_shared_data", "worker_data", "log_prob_worker_data", "sinusoid_log_prob_points"],
    "faults": ["CPUTimes", "children_cpu_times", "call_with_faults", "keep_freed_memory"],
    "mpi": ["MPIPoolClosingOnce", "FuturesPool", "MPIExecNotFound", "find_mpiexec"],
    "sharing": ["SharingMPIPool", "IDLE_SLEEP", "MPIWorkerError", "contiguous_chunks", "wait_for_message",
                "evaluate_chunk"],
    "process_group": ["ProcessGroupError", "GroupRun", "free_port", "run_processes"],
}, modules=["emcee_tasks"])
