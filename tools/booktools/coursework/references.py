"""The reference answers and the unseen inputs the grader uses. Learners' kernels never see this module.

For each exercise whose check takes ``cases``, :data:`UNSEEN` gives a function
``(rng) -> keyword arguments`` for the check: inputs the chapter never shows,
drawn afresh for every submission, with the answers the references give.
The chapters' helper package :mod:`parallel_mcmc` holds no answer; its checks
compare with a few fixed expected values written out as data.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from parallel_mcmc.costmodel import pool_run_time
from parallel_mcmc.models import sinusoid

from .harness import Argument

__all__ = ["steps_to_pay", "predict_sharded", "bottleneck", "costliest_chain", "machine_speedup", "grouped_efficiency", "time_to_target", "device_trips", "max_draws", "best_group", "my_chains", "job_header", "gaussian_consensus", "sharing_crossover", "cost_for_speedup", "log_prob_noise", "pair_acceptance",
           "UNSEEN", "CALLS", "unseen"]


def steps_to_pay(work_per_step: float, fixed_seconds: float, num_devices: int, cores: float,
                 cores_busy: float = 1.0) -> int | None:
    """The smallest whole number of steps at which a split call beats one device, or None: the split saves
    ``n * work * (1 - share)``, ``share`` the larger of ``1 / num_devices`` and ``busy / cores``."""
    share = max(1.0 / num_devices, min(max(cores_busy, 1.0), cores) / cores)
    if share >= 1.0:
        return None
    return int(np.floor(fixed_seconds / (work_per_step * (1.0 - share)))) + 1


def predict_sharded(steps: np.ndarray, step_seconds: np.ndarray, num_devices: int, cores: float, inner: str) -> float:
    """The three rules: each device's block sequentially or in lockstep at its width, the devices concurrent."""
    blocks = np.split(np.asarray(steps), num_devices)
    times = ([b.sum() * step_seconds[0] for b in blocks] if inner == "map"
             else [b.max(axis=0).sum() * step_seconds[len(b) - 1] for b in blocks])
    return float(max(max(times), sum(times) / cores))


def bottleneck(events: list[dict]) -> str:
    """The operation whose trace events add up to the most time, over every thread."""
    totals: dict[str, float] = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return max(totals, key=totals.get)


def costliest_chain(steps: np.ndarray) -> tuple[int, float]:
    """The chain whose removal saves the most lockstep steps, and that saving over the lockstep total."""
    steps = np.asarray(steps)
    full = steps.max(axis=0).sum()
    saved = [full - np.delete(steps, c, axis=0).max(axis=0).sum() for c in range(steps.shape[0])]
    c = int(np.argmax(saved))
    return c, float(saved[c] / full)


def machine_speedup(lengths: np.ndarray, step_cost: float, iteration_cost: float) -> float:
    """Lockstep's time over the state machine's: the sum over draws of the slowest chain, against the
    largest total of one chain, each at its cost per step."""
    lengths = np.asarray(lengths)
    return float(lengths.max(axis=0).sum() * step_cost / (lengths.sum(axis=1).max() * iteration_cost))


def grouped_efficiency(steps: np.ndarray, num_groups: int) -> float:
    """All the chains' steps over those paid for when equal consecutive blocks of chains each run in lockstep."""
    steps = np.asarray(steps)
    return float(steps.sum() / sum(b.shape[0] * b.max(axis=0).sum() for b in np.split(steps, num_groups)))


def time_to_target(ess_per_chain_draw: float, num_chains: int, max_rhat: float, target_ess: float, margin: float,
                   warmup_seconds: float, seconds_per_draw: float) -> tuple[int, float] | None:
    """The whole draws per chain that give all the chains ``margin * target_ess`` at the pilot's rate, and the
    warm-up plus those draws at their time each (a draw of all chains at once); None where R-hat is 1.01 or more."""
    if max_rhat >= 1.01:
        return None
    draws = int(np.ceil(margin * target_ess / (ess_per_chain_draw * num_chains)))
    return draws, warmup_seconds + seconds_per_draw * draws


def device_trips(steps: np.ndarray, num_devices: int) -> tuple[np.ndarray, np.ndarray]:
    """Each device's loop trips: under jit(vmap) the slowest chain anywhere, under shard_map its own, per draw."""
    steps = np.asarray(steps)
    return (np.full(num_devices, steps.max(axis=0).sum()),
            np.array([block.max(axis=0).sum() for block in np.array_split(steps, num_devices)]))


def max_draws(memory_bytes: int, num_chains: int, num_devices: int, num_latent: int, data_bytes: int) -> int:
    """The most draws per chain that fit on the fullest device, as estimate_memory counts them."""
    per_device = -(-num_chains // num_devices)
    return max((memory_bytes - data_bytes - per_device * 40 * num_latent) // (per_device * 4 * num_latent), 0)


def best_group(num_draws: int, start_up_base: float, start_up_per_process: float, seconds_per_draw: float,
               cores: float, max_processes: int) -> int:
    """The group size with the shortest job: start-up grows with each process, sampling shrinks up to the cores."""
    return min(range(1, max_processes + 1), key=lambda p: start_up_base + p * start_up_per_process
               + num_draws * seconds_per_draw / min(p, cores))


def sharing_crossover(round_overhead: float, tasks_per_map: list[int], ranks: int, cores: float) -> float | None:
    """Where the sharing pool's run ties with the serial one: the maps' overheads over the task-times they save
    (each map's tasks less its longest share: ceil(n / ranks) tasks, or n / cores of work where ranks share cores)."""
    saved = sum(n - max(-(-n // ranks), n / cores) for n in tasks_per_map)
    return len(tasks_per_map) * round_overhead / saved if saved > 0 else None


def cost_for_speedup(speedup: float, overhead_per_task: float, emcee_seconds: float, tasks_per_map: list[int],
                     workers: int, cores: float, master_cores: float) -> float | None:
    """The cheapest log-probability at which the one-task-at-a-time pool's model reaches ``speedup``: bisection
    in log cost on the book's model; None where even a very dear one does not."""
    def reaches(c: float) -> bool:
        pool = pool_run_time(tasks_per_map, c, workers, cores, overhead_per_task=overhead_per_task,
                             master_cores=master_cores)
        return emcee_seconds + sum(tasks_per_map) * c >= speedup * (emcee_seconds + pool)

    low, high = 1e-9, 1e3
    if not reaches(high):
        return None
    while high / low > 1 + 1e-6:
        mid = float(np.sqrt(low * high))
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def my_chains(process_id: int, num_processes: int, num_chains: int) -> list[int]:
    """The contiguous block of chains a process holds."""
    if num_chains % num_processes:
        raise ValueError(f"{num_chains} chains cannot be split evenly over {num_processes} processes.")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))


def _job_options(nodes: int, gpus_per_node: int, cores_per_node: int, num_draws: int, seconds_per_draw: float,
                 start_up: float, margin: float) -> dict:
    """What a chains job with one process per GPU asks for: every task sees its node's GPUs, an equal whole
    share of the cores, and the estimated run with its margin, in whole minutes rounded up."""
    seconds = (start_up + num_draws * seconds_per_draw) * (1 + margin)
    return {"nodes": nodes, "ntasks_per_node": gpus_per_node, "gpus_per_node": gpus_per_node,
            "cpus_per_task": cores_per_node // gpus_per_node, "minutes": int(np.ceil(seconds / 60 - 1e-9))}


def job_header(nodes: int, gpus_per_node: int, cores_per_node: int, num_draws: int, seconds_per_draw: float,
               start_up: float, margin: float) -> str:
    """The #SBATCH lines of that job."""
    job = _job_options(nodes, gpus_per_node, cores_per_node, num_draws, seconds_per_draw, start_up, margin)
    days, minutes = divmod(job["minutes"], 24 * 60)
    return "\n".join([f"#SBATCH --nodes={nodes}", f"#SBATCH --ntasks-per-node={gpus_per_node}",
                      f"#SBATCH --gpus-per-node={gpus_per_node}", f"#SBATCH --cpus-per-task={job['cpus_per_task']}",
                      f"#SBATCH --time={days}-{minutes // 60:02d}:{minutes % 60:02d}:00"])


def gaussian_consensus(means: np.ndarray, covs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The product of Gaussian sub-posteriors: precisions add, means weigh by precision."""
    precisions = np.linalg.inv(covs)
    cov = np.linalg.inv(precisions.sum(axis=0))
    return cov @ np.einsum("sij,sj->i", precisions, means), cov


def log_prob_noise(thetas: np.ndarray) -> np.ndarray:
    """The vectorised log-density of the sinusoid with unknown noise, in NumPy (float64)."""
    t, y = sinusoid.data()
    thetas = np.asarray(thetas, dtype=float)
    amplitude, frequency, phase, offset, log_sigma = (thetas[:, i, None] for i in range(5))
    resid = y - (amplitude * np.sin(2 * np.pi * frequency * t + phase) + offset)
    sigma2 = np.exp(2 * log_sigma)
    loglik = -0.5 * np.sum(resid**2, axis=1) / sigma2[:, 0] - t.size * log_sigma[:, 0]
    low = np.append(sinusoid.PRIOR_LOW, -5.0)
    high = np.append(sinusoid.PRIOR_HIGH, 5.0)
    inside = np.all((thetas > low) & (thetas < high), axis=1)
    return np.where(inside, loglik, -np.inf)


def pair_acceptance(log_p: np.ndarray, betas: np.ndarray, parity: int) -> np.ndarray:
    """Each replica's probability of swapping with its partner of this round (0 without one)."""
    i = np.arange(len(betas))
    partner = np.where(i % 2 == parity, i + 1, i - 1)
    has = (partner >= 0) & (partner < len(betas))
    partner = np.where(has, partner, i)
    log_ratio = (betas[i] - betas[partner]) * (log_p[partner] - log_p[i])
    return np.where(has, np.exp(np.minimum(0.0, log_ratio)), 0.0)


# --------------------------------------------------------------------------- unseen inputs


def _steps_to_pay(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 6:
        num_devices, cores = int(rng.integers(1, 9)), float(rng.choice([1.0, 2.0, 4.0, 8.0, 16.0]))
        busy = float(rng.choice([1.0, rng.uniform(1.0, cores)]))
        work, fixed = float(rng.uniform(1e-7, 1e-5)), float(rng.uniform(1e-6, 1e-3))
        share = max(1.0 / num_devices, min(max(busy, 1.0), cores) / cores)
        # thresholds that are whole numbers would make the two ways of rounding disagree: skip them
        if share < 1.0 and abs(fixed / (work * (1 - share)) % 1 - 0.5) > 0.45:
            continue
        cases.append((work, fixed, num_devices, cores, busy))
    return {"cases": cases + [(1e-6, 1e-4, 1, 4.0, 1.0), (1e-6, 1e-4, 3, 2.0, 2.0)]}  # two that never pay


def _costliest(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 4:
        steps = rng.geometric(1 / float(rng.uniform(2, 12)), size=(int(rng.integers(3, 9)), int(rng.integers(3, 12))))
        full = steps.max(axis=0).sum()
        saved = sorted(full - np.delete(steps, c, axis=0).max(axis=0).sum() for c in range(steps.shape[0]))
        if saved[-1] > saved[-2]:  # one answer only
            cases.append(steps)
    return {"cases": cases}


def _machine_speedup(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        lengths = rng.geometric(1 / float(rng.uniform(2, 20)), size=(int(rng.integers(2, 9)), int(rng.integers(2, 9))))
        step = float(rng.uniform(1e-6, 1e-4))
        cases.append((lengths, step, step * float(rng.uniform(1.05, 2.0))))
    return {"cases": cases}


def _grouped_efficiency(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        num_groups = int(rng.integers(2, 5))
        steps = rng.geometric(1 / float(rng.uniform(2, 30)),
                              size=(num_groups * int(rng.integers(2, 5)), num_groups * int(rng.integers(1, 4))))
        cases.append((steps, num_groups))
    return {"cases": cases}


def _time_to_target(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 6:
        args = (float(rng.uniform(0.002, 1.5)), int(2 ** rng.integers(0, 10)), float(rng.uniform(1.0, 1.0099)),
                int(rng.choice([100, 400, 1000, 2000, 5000])), float(rng.uniform(1.05, 1.5)),
                float(rng.uniform(0.01, 30.0)), float(rng.uniform(1e-5, 1e-2)))
        exact = args[4] * args[3] / (args[0] * args[1])
        if exact > 10 and 0.05 < exact % 1 < 0.95:  # far from a whole number: the last bit decides no ceiling
            cases.append((args, time_to_target(*args)))
    for rhat in (1.01, float(rng.uniform(1.01, 1.5))):  # chains that disagree, at the threshold and above it
        args = (float(rng.uniform(0.002, 1.5)), int(2 ** rng.integers(0, 10)), rhat, 1000, 1.2,
                float(rng.uniform(0.01, 30.0)), float(rng.uniform(1e-5, 1e-2)))
        cases.append((args, time_to_target(*args)))
    return {"cases": cases}


def _predict_sharded(rng: np.random.Generator) -> dict:
    cases = []
    for inner in ("map", "vmap", "map", "vmap"):
        num_devices = int(rng.integers(1, 5))
        num_chains = num_devices * int(rng.integers(1, 4))
        steps = rng.geometric(1 / float(rng.uniform(2, 20)), size=(num_chains, int(rng.integers(2, 9))))
        first = float(rng.uniform(1e-6, 1e-4))  # a step of one chain; wider steps cost more, less than in proportion
        step_seconds = first * (1 + float(rng.uniform(0.05, 0.9)) * np.arange(num_chains))
        cases.append((steps, step_seconds, num_devices, float(rng.choice([1.0, 2.0, 4.0, 8.0])), inner))
    return {"cases": cases}


def _bottleneck(rng: np.random.Generator) -> dict:
    cases = []
    names = ["fusion.1", "sort.2", "all-reduce.3", "dot.4", "Rendezvous", "exp.5"]
    for _ in range(4):
        chosen = list(rng.choice(names, size=int(rng.integers(2, 5)), replace=False))
        events = [{"name": str(rng.choice(chosen)), "dur": float(rng.uniform(1.0, 50.0)), "tid": int(rng.integers(1, 3))}
                  for _ in range(int(rng.integers(4, 12)))]
        totals = sorted((sum(e["dur"] for e in events if e["name"] == n) for n in {e["name"] for e in events}),
                        reverse=True)
        if len(totals) > 1 and totals[0] - totals[1] < 1.0:
            events.append({"name": events[0]["name"], "dur": 5.0, "tid": 1})  # a unique largest total
        cases.append(events)
    return {"cases": cases}


def _device_trips(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        num_devices = int(rng.integers(2, 6))
        num_chains = num_devices * int(rng.integers(1, 4)) + int(rng.integers(0, num_devices))  # uneven ones too
        cases.append((rng.geometric(1 / float(rng.uniform(2, 20)), size=(num_chains, int(rng.integers(2, 9)))),
                      num_devices))
    return {"cases": cases}


def _my_chains(rng: np.random.Generator) -> dict:
    cases, uneven = [], []
    for num_processes in rng.choice(np.arange(2, 9), size=3, replace=False):
        num_processes = int(num_processes)
        num_chains = num_processes * int(rng.integers(1, 6))
        cases += [((p, num_processes, num_chains), my_chains(p, num_processes, num_chains)) for p in range(num_processes)]
        uneven.append((int(rng.integers(0, num_processes)), num_processes, num_chains + 1))
    return {"cases": cases, "uneven": uneven}


def _combine(rng: np.random.Generator) -> dict:
    return {"cases": [[int(k) for k in rng.integers(1, 6, size=int(rng.integers(2, 5)))] for _ in range(3)],
            "seed": int(rng.integers(1, 2**31))}


def _best_group(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        case = (int(rng.integers(100, 10**7)), float(rng.uniform(0.5, 5)), float(rng.uniform(0.05, 3)),
                float(rng.uniform(1e-5, 1e-2)), int(rng.choice([2, 4, 8, 16, 64])), int(rng.integers(2, 65)))
        if best_group(*case) != best_group(case[0], case[1], 0.0, *case[3:]):  # start-up per process matters
            cases.append((case, best_group(*case)))
    return {"cases": cases}


def _job_header(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        gpus = int(rng.choice([2, 4, 8]))
        args = (int(rng.integers(1, 9)), gpus, gpus * int(rng.integers(2, 17)) + int(rng.integers(0, gpus)),
                int(rng.integers(10**4, 10**8)), float(rng.uniform(1e-5, 1e-2)), float(rng.uniform(10, 600)),
                float(rng.choice([0.1, 0.15, 0.2, 0.25, 0.5])))
        cases.append((args, _job_options(*args)))
    return {"cases": cases}


def _split_compile(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        n_short = int(rng.integers(50, 2000))
        cases.append((float(rng.uniform(0.5, 20)), float(rng.uniform(1e-4, 1e-2)), n_short, n_short + int(rng.integers(100, 5000))))
    return {"cases": cases}


def _max_draws(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(5):
        num_devices = int(rng.integers(1, 9))
        num_chains = int(rng.integers(1, 65))
        num_latent = int(rng.integers(1, 5000))
        data_bytes = int(rng.integers(0, 2**26))
        cases.append((int(data_bytes + rng.integers(2**16, 2**31)), num_chains, num_devices, num_latent, data_bytes))
    return {"cases": cases + [(10_000, 4, 1, 50, 9_000)]}  # a budget that holds no draw


def _consensus(rng: np.random.Generator) -> dict:
    cases = []
    for S, d in ((int(rng.integers(2, 9)), int(rng.integers(1, 5))) for _ in range(3)):
        means = rng.normal(size=(S, d))
        A = rng.normal(size=(S, d, d))
        covs = A @ np.swapaxes(A, 1, 2) + np.eye(d) * rng.uniform(0.1, 3.0, size=(S, 1, 1))
        mean, cov = gaussian_consensus(means, covs)
        cases.append((means, covs, mean, cov))
    return {"cases": cases}


def _log_prob(rng: np.random.Generator) -> dict:
    truth = np.append(sinusoid.TRUE_PARAMS, np.log(sinusoid.NOISE_SCALE))
    cases = []
    for n in (int(rng.integers(4, 40)), int(rng.integers(4, 40))):
        thetas = truth + 1e-3 * rng.normal(size=(n, 5))
        thetas[int(rng.integers(0, n)), 0] = -1.0
        cases.append((thetas, log_prob_noise(thetas)))
    return {"cases": cases}


def _emcee_maps(rng: np.random.Generator) -> list[int]:
    """emcee's maps: every walker first, then half of them twice a step."""
    walkers = 2 * int(rng.integers(4, 65))
    return [walkers] + [walkers // 2] * (2 * int(rng.integers(1, 8)))


def _sharing_crossover(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        maps, ranks = _emcee_maps(rng), int(rng.integers(2, 17))
        cores = float(rng.choice([1.0, 2.0, 4.0, 8.0, 16.0]))
        cases.append((float(rng.uniform(1e-4, 5e-3)), maps, ranks, cores))
    return {"cases": cases + [(float(rng.uniform(1e-4, 5e-3)), _emcee_maps(rng), 1, 4.0)]}  # one rank never pays


def _cost_for_speedup(rng: np.random.Generator) -> dict:
    cases = []
    while len(cases) < 5:
        workers, cores = int(rng.integers(2, 17)), float(rng.choice([2.0, 4.0, 8.0, 16.0]))
        master = float(rng.uniform(0.0, 1.0))
        case = (float(rng.uniform(1.1, max(1.2, 0.9 * min(workers, cores - master)))), float(rng.uniform(1e-4, 3e-3)),
                float(rng.uniform(0.0, 0.5)), _emcee_maps(rng), workers, cores, master)
        if cost_for_speedup(*case) is not None:
            cases.append(case)
    workers = int(rng.integers(2, 9))
    return {"cases": cases + [(float(workers) + 0.5, 1e-3, 0.05, _emcee_maps(rng), workers, 16.0, 0.5)]}  # out of reach


def _sharded_gradient(rng: np.random.Generator) -> dict:
    return {"cases": [rng.normal(scale=float(scale), size=5).astype(np.float32) for scale in (0.3, 1.0, 3.0)]}


def _lab_betas(rng: np.random.Generator) -> dict:
    # coefficient vectors for the sharding lab's logistic regression (an intercept and 3 covariates)
    return {"cases": [rng.normal(scale=float(scale), size=4).astype(np.float32) for scale in (0.3, 1.0, 3.0)]}


def _pair_acceptance(rng: np.random.Generator) -> dict:
    cases = []
    for _ in range(4):
        R = int(rng.integers(3, 10))
        betas = np.geomspace(1.0, float(rng.uniform(0.005, 0.5)), R)
        log_p = -np.abs(rng.normal(scale=float(rng.uniform(1, 30)), size=R))
        parity = int(rng.integers(0, 2))
        cases.append((log_p, betas, parity, pair_acceptance(log_p, betas, parity)))
    return {"cases": cases}


def _next_temperature(rng: np.random.Generator) -> dict:
    cases = []
    for scale in (10.0, 1e3, 1e5):
        n = int(rng.integers(50, 600))
        cases.append((-scale * rng.chisquare(int(rng.integers(1, 6)), size=n), float(rng.uniform(0.0, 0.9))))
    cases.append((-1e-3 * rng.uniform(size=int(rng.integers(50, 200))), float(rng.uniform(0.0, 0.5))))  # one step to 1
    return {"cases": cases}


# check name -> (rng -> keyword arguments of the check that bring the unseen inputs)
UNSEEN: dict[str, Callable[[np.random.Generator], dict[str, Any]]] = {
    "parallel_mcmc.exercises.getting_started.steps_to_pay": _steps_to_pay,
    "parallel_mcmc.exercises.parallel_chains.costliest_chain": _costliest,
    "parallel_mcmc.exercises.parallel_chains.machine_speedup": _machine_speedup,
    "parallel_mcmc.exercises.parallel_chains.grouped_efficiency": _grouped_efficiency,
    "parallel_mcmc.exercises.parallel_chains.time_to_target": _time_to_target,
    "parallel_mcmc.exercises.getting_started.predict_sharded": _predict_sharded,
    "parallel_mcmc.exercises.getting_started.bottleneck": _bottleneck,
    "parallel_mcmc.exercises.sharding_lab.explicit_log_likelihood": _lab_betas,
    "parallel_mcmc.exercises.sharding_lab.shard_map_row_terms": _lab_betas,
    "parallel_mcmc.exercises.sharding_lab.shard_map_log_likelihood": _lab_betas,
    "parallel_mcmc.exercises.sharding_lab.device_trips": _device_trips,
    "parallel_mcmc.exercises.beyond_one_machine.my_chains": _my_chains,
    "parallel_mcmc.exercises.beyond_one_machine.best_group": _best_group,
    "parallel_mcmc.exercises.beyond_one_machine.combine_chains": _combine,
    "parallel_mcmc.exercises.beyond_one_machine.job_header": _job_header,
    "parallel_mcmc.exercises.numpyro.split_compile": _split_compile,
    "parallel_mcmc.exercises.numpyro.max_draws": _max_draws,
    "parallel_mcmc.exercises.numpyro.gaussian_consensus": _consensus,
    "parallel_mcmc.exercises.ensemble.vectorized_log_prob": _log_prob,
    "parallel_mcmc.exercises.ensemble.sharing_crossover": _sharing_crossover,
    "parallel_mcmc.exercises.ensemble.cost_for_speedup": _cost_for_speedup,
    "parallel_mcmc.exercises.other_parallelism.sharded_gradient": _sharded_gradient,
    "parallel_mcmc.exercises.other_parallelism.pair_acceptance": _pair_acceptance,
    "parallel_mcmc.exercises.other_parallelism.next_temperature": _next_temperature,
}


# --------------------------------------------------------------------------- the calls the checks make


def _split_calls(kw: dict) -> list[tuple]:
    return [(c + p * ns, ns, c + p * nl, nl) for c, p, ns, nl in kw["cases"]]


def _lab_calls(kw: dict) -> list[tuple]:
    # the learner's fn(beta, X, y) on the chapter's sharded X and y, the check's arguments 2 and 3
    return [(np.asarray(b, np.float32), Argument(2), Argument(3)) for b in kw["cases"]]


def _combine_calls(kw: dict) -> list[tuple]:
    rng = np.random.default_rng(kw["seed"])  # as processes.combine_chains draws its parts
    calls = []
    for sizes in kw["cases"]:
        parts = [rng.normal(size=(int(k), 7, 3)) for k in sizes]
        calls.append(([p.copy() for p in parts],))
    return calls


# check name -> (index of the learner's function among the check's arguments, keyword arguments -> the calls
# the check makes of it with those unseen inputs). The sandbox makes these calls and records them; the judge
# then runs the check with the same keyword arguments against the record.
CALLS: dict[str, tuple[int, Callable[[dict], list[tuple]]]] = {
    "parallel_mcmc.exercises.getting_started.steps_to_pay": (0, lambda kw: [tuple(c) for c in kw["cases"]]),
    "parallel_mcmc.exercises.parallel_chains.costliest_chain": (0, lambda kw: [(np.asarray(s).copy(),) for s in kw["cases"]]),
    "parallel_mcmc.exercises.parallel_chains.machine_speedup": (
        0, lambda kw: [(np.asarray(lengths).copy(), step, iteration) for lengths, step, iteration in kw["cases"]]),
    "parallel_mcmc.exercises.parallel_chains.grouped_efficiency": (
        0, lambda kw: [(np.asarray(steps).copy(), groups) for steps, groups in kw["cases"]]),
    "parallel_mcmc.exercises.parallel_chains.time_to_target": (0, lambda kw: [tuple(args) for args, _ in kw["cases"]]),
    "parallel_mcmc.exercises.getting_started.predict_sharded": (
        0, lambda kw: [(np.asarray(st).copy(), np.asarray(ss, float).copy(), d, c, i) for st, ss, d, c, i in kw["cases"]]),
    "parallel_mcmc.exercises.sharding_lab.explicit_log_likelihood": (0, _lab_calls),
    "parallel_mcmc.exercises.sharding_lab.shard_map_row_terms": (0, _lab_calls),
    "parallel_mcmc.exercises.sharding_lab.shard_map_log_likelihood": (0, _lab_calls),
    "parallel_mcmc.exercises.sharding_lab.device_trips": (0, lambda kw: [(np.asarray(s).copy(), d) for s, d in kw["cases"]]),
    "parallel_mcmc.exercises.getting_started.bottleneck": (0, lambda kw: [([dict(e) for e in c],) for c in kw["cases"]]),
    "parallel_mcmc.exercises.beyond_one_machine.my_chains": (0, lambda kw: [tuple(a) for a, _ in kw["cases"]] + [tuple(a) for a in kw["uneven"]]),
    "parallel_mcmc.exercises.beyond_one_machine.best_group": (0, lambda kw: [tuple(a) for a, _ in kw["cases"]]),
    "parallel_mcmc.exercises.beyond_one_machine.combine_chains": (0, _combine_calls),
    "parallel_mcmc.exercises.beyond_one_machine.job_header": (0, lambda kw: [tuple(a) for a, _ in kw["cases"]]),
    "parallel_mcmc.exercises.numpyro.split_compile": (0, _split_calls),
    "parallel_mcmc.exercises.numpyro.max_draws": (0, lambda kw: [tuple(c) for c in kw["cases"]]),
    "parallel_mcmc.exercises.numpyro.gaussian_consensus": (
        0, lambda kw: [(np.asarray(m, dtype=float).copy(), np.asarray(c, dtype=float).copy()) for m, c, _, _ in kw["cases"]]),
    "parallel_mcmc.exercises.ensemble.vectorized_log_prob": (0, lambda kw: [(np.array(t, dtype=float),) for t, _ in kw["cases"]]),
    "parallel_mcmc.exercises.ensemble.sharing_crossover": (0, lambda kw: [(o, list(m), k, c) for o, m, k, c in kw["cases"]]),
    "parallel_mcmc.exercises.ensemble.cost_for_speedup": (
        0, lambda kw: [(s, o, e, list(m), k, c, mc) for s, o, e, m, k, c, mc in kw["cases"]]),
    "parallel_mcmc.exercises.other_parallelism.sharded_gradient": (
        0, lambda kw: [(np.asarray(b, np.float32), Argument(1), Argument(2)) for b in kw["cases"]]),
    "parallel_mcmc.exercises.other_parallelism.pair_acceptance": (
        0, lambda kw: [(np.asarray(lp, np.float64).copy(), np.asarray(b, np.float64).copy(), p) for lp, b, p, _ in kw["cases"]]),
    "parallel_mcmc.exercises.other_parallelism.next_temperature": (
        0, lambda kw: [(np.asarray(v, np.float64).copy(), float(lam)) for v, lam in kw["cases"]]),
}


def unseen(check: str, seed: int) -> dict[str, Any]:
    """The keyword arguments that give ``check`` its unseen inputs for this ``seed`` (empty if it takes none)."""
    make = UNSEEN.get(check)
    return make(np.random.default_rng(seed)) if make else {}
